/* SPDX-License-Identifier: Apache-2.0 */
/*
 * couchpage_settings.c: the merged configuration's faults (see
 * couchpage_settings.h), each naming the directives and where each is
 * written, and what a secret's file may hold. Part of the httpd-free
 * core: no httpd header, no request_rec.
 */
#include "couchpage_settings.h"

#include <apr_strings.h>
#include <errno.h>
#include <string.h>

#include "couchpage_item.h"
#include "couchpage_mango.h"

static const char *where(apr_pool_t *pool, const cp_settings *s, const void *directive)
{
    return s->where(pool, directive);
}

/* A CouchPageSize above the CouchPageMaxSize merged with it: which, and
 * where each is written. The default size is no fault: a smaller maximum
 * caps it (mod_couchpage_request.c's couchpage_read_request). */
static const char *page_size_fault(apr_pool_t *pool, const cp_settings *s)
{
    if (!s->page_size_set || s->page_size <= s->max_page_size) {
        return NULL;
    }
    return apr_psprintf(pool, "CouchPageSize %d (%s) is larger than CouchPageMaxSize %d (%s)",
                        s->page_size, where(pool, s, s->page_size_where), s->max_page_size,
                        s->max_page_size_set ? where(pool, s, s->max_page_size_where)
                                             : "the default");
}

/* A CouchPageLinks above the CouchPageMaxLinks merged with it: the page
 * would show fewer. */
static const char *links_fault(apr_pool_t *pool, const cp_settings *s)
{
    if (!s->links_set || s->links <= s->max_links) {
        return NULL;
    }
    return apr_psprintf(pool, "CouchPageLinks %d (%s) is more than CouchPageMaxLinks %d (%s)",
                        s->links, where(pool, s, s->links_where), s->max_links,
                        s->max_links_set ? where(pool, s, s->max_links_where) : "the default");
}

/* Whether the rows carry documents: a view's with CouchPageIncludeDocs On,
 * a _find's always. */
static int rows_have_docs(const cp_settings *s)
{
    return s->view->include_docs || s->view->is_find;
}

static const char *item_directive(const cp_settings *s)
{
    return s->item_is_template ? "CouchPageItemTemplate" : "CouchPageItem";
}

/* An HTML item that reads the rows' documents, which the queries do not
 * ask for: every item would show nothing. */
static const char *item_fault(apr_pool_t *pool, const cp_settings *s)
{
    if (!s->item_reads_doc || rows_have_docs(s) || s->format_is_json) {
        return NULL;
    }
    return apr_psprintf(pool, "%s (%s) reads the rows' documents (doc), and "
                        "CouchPageIncludeDocs is not On", item_directive(s),
                        where(pool, s, s->item_where));
}

/* CouchPageFields without documents to pick members of. */
static const char *fields_fault(apr_pool_t *pool, const cp_settings *s)
{
    if (!s->fields || rows_have_docs(s)) {
        return NULL;
    }
    return apr_psprintf(pool, "CouchPageFields (%s) picks members of the rows' documents, "
                        "and CouchPageIncludeDocs is not On", where(pool, s, s->fields_where));
}

/* An item that reads a member of the documents CouchPageFields leaves out:
 * what leaves the server is the fields, in HTML as in JSON. */
static const char *item_fields_fault(apr_pool_t *pool, const cp_settings *s)
{
    const char *fault;

    if (!s->item_set || !s->fields_set || s->format_is_json
        || !(fault = cp_fields_fault(pool, s->item_read, s->fields))) {
        return NULL;
    }
    return apr_psprintf(pool, "%s (%s) %s (%s)", item_directive(s),
                        where(pool, s, s->item_where), fault, where(pool, s, s->fields_where));
}

/* The first of the directives in names (their _set flags in set) that is
 * set, or NULL. */
static const char *first_set(const char *const *names, const int *set, int n)
{
    int i;

    for (i = 0; i < n; i++) {
        if (set[i]) {
            return names[i];
        }
    }
    return NULL;
}

/* A _find location without its sort, with a directive that shapes view
 * queries only, or with CouchPageUpdate lazy, which _find refuses; a view
 * location with a _find location's directive. */
static const char *find_fault(apr_pool_t *pool, const cp_settings *s)
{
    static const char *const view_only[] = {
        "CouchPageRange", "CouchPageReduce", "CouchPageGroupLevel", "CouchPageIncludeDocs",
        "CouchPageMaxEmits"
    };
    static const char *const find_only[] = {
        "CouchPageSelector", "CouchPageSort", "CouchPageIndex"
    };
    cp_mango_flag flag;
    const char *name;

    if (!s->view_set) {
        return NULL;
    }
    /* where CouchPageView is written is said only in a fault */
    if (s->view->is_find) {
        const int set[] = { s->range_set, s->reduce_set, s->group_level_set,
                            s->include_docs_set, s->max_emits_set };

        if ((name = first_set(view_only, set, 5))) {
            return apr_psprintf(pool, "%s is set where CouchPageView (%s) names a _find: it "
                                "shapes view queries only (CouchPageSelector chooses the "
                                "documents)", name, where(pool, s, s->view_where));
        }
        if (!cp_mango_flag_named(s->view->update, &flag)) {
            return apr_psprintf(pool, "CouchPageUpdate %s is set where CouchPageView (%s) "
                                "names a _find, whose update is true or false only (CouchDB "
                                "answers invalid_boolean)", s->view->update,
                                where(pool, s, s->view_where));
        }
        if (!s->sort_set) {
            return apr_psprintf(pool, "CouchPageView (%s) names a _find, and no CouchPageSort "
                                "is set: a _find location pages in the order of its sort "
                                "fields", where(pool, s, s->view_where));
        }
    }
    else {
        const int set[] = { s->selector_set, s->sort_set, s->index_set };

        if ((name = first_set(find_only, set, 3))) {
            return apr_psprintf(pool, "%s is set where CouchPageView (%s) names a view: it "
                                "shapes _find queries only", name, where(pool, s, s->view_where));
        }
    }
    return NULL;
}

const char *cp_settings_request_fault(apr_pool_t *pool, const cp_settings *settings)
{
    const char *fault;

    if (!settings->view_set) {
        return "no CouchPageView is set";
    }
    if (settings->view->reduce && settings->view->include_docs) {
        return "CouchPageReduce On and CouchPageIncludeDocs On are merged here; grouped "
               "rows have no documents";
    }
    fault = page_size_fault(pool, settings);
    if (!fault) {
        fault = item_fault(pool, settings);
    }
    if (!fault) {
        fault = fields_fault(pool, settings);
    }
    return fault ? fault : find_fault(pool, settings);
}

/* One fault of start-up's: what it finds, what may change it (any of
 * them unknown leaves it unchecked), its code, and the message's format
 * around the fault and the section's name. */
typedef struct {
    const char *(*find)(apr_pool_t *pool, const cp_settings *s);
    unsigned may_change;
    const char *code;
    const char *format;
} startup_check;

static const startup_check startup_checks[] = {
    { page_size_fault, CP_SETS_PAGE_SIZE | CP_SETS_MAX_PAGE_SIZE, "CP0113",
      "%s in %s: every request there would be answered 500. Raise CouchPageMaxSize or "
      "lower CouchPageSize" },
    { links_fault, CP_SETS_LINKS | CP_SETS_MAX_LINKS, "CP0420",
      "%s in %s: its pages would show fewer links than it says. Raise CouchPageMaxLinks "
      "(each link costs a page of rows) or lower CouchPageLinks" },
    { item_fault, CP_SETS_INCLUDE_DOCS | CP_SETS_ITEM | CP_SETS_FORMAT, "CP0130",
      "%s in %s: every item there would show nothing. Set CouchPageIncludeDocs On there, "
      "or show the row's key, value or id" },
    { item_fields_fault, CP_SETS_ITEM | CP_SETS_FIELDS | CP_SETS_FORMAT, "CP0421",
      "%s in %s: only CouchPageFields' members leave the server, so the item would not "
      "show what it reads. Read only those members in the item, or add the member to "
      "CouchPageFields" },
    { fields_fault, CP_SETS_INCLUDE_DOCS | CP_SETS_FIELDS, "CP0131",
      "%s in %s: it would pick nothing. Set CouchPageIncludeDocs On there, or remove "
      "CouchPageFields" },
    { find_fault, CP_SETS_VIEW | CP_SETS_QUERY | CP_SETS_INCLUDE_DOCS, "CP0320",
      "%s, in %s: every request there would be answered 500" },
};

const char *cp_settings_startup_fault(apr_pool_t *pool, const cp_settings *settings,
                                      unsigned unknown, const char *section,
                                      const char **code)
{
    const char *fault;
    apr_size_t i;

    if (!settings->handler_set || (unknown & CP_SETS_HANDLER)) {
        return NULL;
    }
    if (!settings->view_set && !(unknown & CP_SETS_VIEW)) {
        *code = "CP0112";
        return apr_psprintf(pool, "SetHandler couchpage (%s) applies in %s, where no "
                            "CouchPageView is set: every request there would be answered "
                            "500. Set CouchPageView there, or SetHandler couchpage only "
                            "where a view is set", where(pool, settings,
                                                         settings->handler_where), section);
    }
    for (i = 0; i < sizeof(startup_checks) / sizeof(startup_checks[0]); i++) {
        if (!(unknown & startup_checks[i].may_change)
            && (fault = startup_checks[i].find(pool, settings))) {
            *code = startup_checks[i].code;
            return apr_psprintf(pool, startup_checks[i].format, fault, section);
        }
    }
    return NULL;
}

const char *cp_settings_whole_number(apr_pool_t *pool, const char *directive, const char *arg,
                                     apr_int64_t min, apr_int64_t max, apr_int64_t *value)
{
    char *end;
    apr_int64_t n;

    errno = 0;
    n = apr_strtoi64(arg, &end, 10);
    if (errno || end == arg || *end || n < min || n > max) {
        return apr_psprintf(pool, "%s%s'%s' is not a whole number from %" APR_INT64_T_FMT
                            " to %" APR_INT64_T_FMT, directive ? directive : "",
                            directive ? ": " : "", arg, min, max);
    }
    *value = n;
    return NULL;
}

const char *cp_settings_secret_file_fault(apr_pool_t *pool, const char *noun,
                                          const char *text, apr_size_t *len)
{
    if (*len > 0 && text[*len - 1] == '\n') {
        *len -= *len > 1 && text[*len - 2] == '\r' ? 2 : 1;
    }
    if (*len > CP_SECRET_FILE_MAX) {
        return apr_psprintf(pool, "is longer than %d bytes; it holds the %s alone",
                            CP_SECRET_FILE_MAX, noun);
    }
    if (*len == 0) {
        return apr_psprintf(pool, "is empty; it holds the %s alone", noun);
    }
    if (memchr(text, '\n', *len) || memchr(text, '\r', *len) || memchr(text, '\0', *len)) {
        return apr_psprintf(pool, "holds more than one line, or a NUL; it holds the %s "
                            "alone, on one line", noun);
    }
    return NULL;
}
