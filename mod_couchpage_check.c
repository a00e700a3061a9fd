/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mod_couchpage_check.c: the start-up checks (the check_config hook) of the
 * configuration the directives of mod_couchpage_config.c made: each
 * section merged as a request at its path would merge it (httpd's location
 * walk, repeated), the modules a view's scheme needs, the mod_proxy worker
 * or balancer that serves a view; and couchpage_merged_fault, which a
 * request whose merged configuration start-up could not place meets. The
 * split mod_md has: its directives in mod_md_config.c, what it does with
 * the configuration at start-up apart. Glue: configuration time, and a
 * request's merged config only read.
 */
#include "mod_couchpage_check.h"
#include "mod_couchpage_named.h"
#include "couchpage_find.h"
#include "couchpage_mango.h"

#include "http_core.h"
#include "http_log.h"
#include "apr_file_info.h"
#include "apr_file_io.h"
#include "apr_fnmatch.h"
#include "apr_hash.h"
#include "apr_strings.h"
#include "apr_user.h"

#include "couchpage_view.h"
#include "mod_proxy.h"

APLOG_USE_MODULE(couchpage);

/* httpd keeps no list of merged per-directory configurations: a request's
 * is merged when it is served, from the server's and every section that
 * applies to it. So for each section of each server that has the module's
 * directives (and for the server's own), the checks merge what a request
 * at that section's own path would merge, as httpd does, and refuse only
 * what is certain there: what sections the checks cannot place might change
 * (below) counts as unknown, and an unknown setting is never refused.
 *
 * A literal <Location> is placed exactly: a request for its own path merges
 * the server's configuration, then every <Location> and <LocationMatch>
 * that matches that path, in order (ap_location_walk's matching, repeated
 * here); <Directory>, <Files> and .htaccess come before the <Location>s, so
 * they can change only what no matching <Location> sets, and <If> sections
 * come last and can change anything. Any other section (regular expression
 * or wildcard, <Directory>, <Files>, <If>) is checked merged onto the
 * server's alone, with whatever any other section sets counted as unknown.
 * The server's own configuration is checked for a path that only the
 * <Location "/"> sections match. */

enum {
    SETS_HANDLER = 1,
    SETS_VIEW = 2,
    SETS_PAGE_SIZE = 4,
    SETS_MAX_PAGE_SIZE = 8,
    SETS_INCLUDE_DOCS = 16,
    SETS_ITEM = 32,            /* CouchPageItem or CouchPageItemTemplate */
    SETS_FIELDS = 64,
    SETS_FORMAT = 128,
    SETS_QUERY = 256,          /* what shapes the queries of a view or of a _find:
                                  CouchPageRange, Reduce, GroupLevel, MaxEmits,
                                  Update, Stable, Selector, Sort, Index */
    SETS_LINKS = 512,
    SETS_MAX_LINKS = 1024,
    /* what a .htaccess file may set with AllowOverride FileInfo */
    SETS_FILEINFO = SETS_HANDLER | SETS_PAGE_SIZE | SETS_ITEM | SETS_FORMAT | SETS_LINKS
};

typedef enum {
    SECTION_LOCATION,
    SECTION_DIRECTORY,
    SECTION_FILES,
    SECTION_IF
} section_kind;

typedef struct {
    section_kind kind;
    const core_dir_config *core;
    const couchpage_dir_conf *conf; /* NULL: none of the module's directives */
    unsigned sets;                  /* SETS_*: what conf sets */
} config_section;

static unsigned settings_of(const couchpage_dir_conf *conf)
{
    if (!conf) {
        return 0;
    }
    return (conf->handler ? SETS_HANDLER : 0) | (conf->view_set ? SETS_VIEW : 0)
         | (conf->page_size_set ? SETS_PAGE_SIZE : 0)
         | (conf->max_page_size_set ? SETS_MAX_PAGE_SIZE : 0)
         | (conf->include_docs_set ? SETS_INCLUDE_DOCS : 0)
         | (conf->item_set ? SETS_ITEM : 0) | (conf->fields_set ? SETS_FIELDS : 0)
         | (conf->format_set ? SETS_FORMAT : 0)
         | (conf->links_set ? SETS_LINKS : 0) | (conf->max_links_set ? SETS_MAX_LINKS : 0)
         | (conf->range_set || conf->reduce_set || conf->group_level_set
            || conf->max_emits_set || conf->update_set || conf->stable_set
            || conf->find_selector_set || conf->find_sort_set || conf->find_index_set
            ? SETS_QUERY : 0);
}

static void collect_sections(apr_array_header_t *out, section_kind kind,
                             const apr_array_header_t *vectors);

/* A section, and the <Files> and <If> sections nested in it. */
static void collect_section(apr_array_header_t *out, section_kind kind,
                            ap_conf_vector_t *vector)
{
    config_section *section = apr_array_push(out);

    section->kind = kind;
    section->core = ap_get_core_module_config(vector);
    section->conf = ap_get_module_config(vector, &couchpage_module);
    section->sets = settings_of(section->conf);
    collect_sections(out, SECTION_FILES, section->core->sec_file);
    collect_sections(out, SECTION_IF, section->core->sec_if);
}

static void collect_sections(apr_array_header_t *out, section_kind kind,
                             const apr_array_header_t *vectors)
{
    int i;

    for (i = 0; vectors && i < vectors->nelts; i++) {
        collect_section(out, kind, APR_ARRAY_IDX(vectors, i, ap_conf_vector_t *));
    }
}

/* What .htaccess files may set: with AllowOverride FileInfo, SetHandler and
 * the module's presentation directives, or those AllowOverrideList names;
 * never a view or what else decides the queries (SERVER_ONLY). */
static unsigned htaccess_settings(const core_dir_config *core)
{
    static const struct {
        const char *directive;
        unsigned sets;
    } listed[] = {
        { "SetHandler", SETS_HANDLER }, { "CouchPageSize", SETS_PAGE_SIZE },
        { "CouchPageItem", SETS_ITEM }, { "CouchPageItemTemplate", SETS_ITEM },
        { "CouchPageFormat", SETS_FORMAT }, { "CouchPageLinks", SETS_LINKS },
    };
    unsigned sets = 0;
    apr_size_t i;

    if (!(core->override & OR_UNSET)) {
        sets |= core->override & OR_FILEINFO ? SETS_FILEINFO : 0;
    }
    for (i = 0; core->override_list && i < sizeof(listed) / sizeof(listed[0]); i++) {
        sets |= apr_table_get(core->override_list, listed[i].directive) ? listed[i].sets : 0;
    }
    return sets;
}

/* Whether a <Location> or <LocationMatch> applies to a request for uri:
 * ap_location_walk's test. */
static int location_applies(const core_dir_config *location, const char *uri)
{
    apr_size_t len = strlen(location->d);

    if (location->r) {
        return ap_regexec(location->r, uri, 0, NULL, 0) == 0;
    }
    if (location->d_is_fnmatch) {
        return apr_fnmatch(location->d, uri, APR_FNM_PATHNAME) == APR_SUCCESS;
    }
    return strncmp(location->d, uri, len) == 0
        && !(len > 0 && location->d[len - 1] != '/' && uri[len] != '/' && uri[len] != '\0');
}

/* A plain <Location> (no pattern): a request for its own path is known. */
static int is_literal_location(const config_section *section)
{
    return section->kind == SECTION_LOCATION && !section->core->r
        && !section->core->d_is_fnmatch;
}

/* A <Location> that every request's path matches. */
static int location_matches_all(const config_section *section)
{
    return is_literal_location(section)
        && (!*section->core->d || strcmp(section->core->d, "/") == 0);
}

/* The section as an operator wrote it, and the virtual host it is in. */
static const char *section_name(apr_pool_t *p, const config_section *section,
                                const server_rec *s)
{
    static const char *const kinds[] = { "Location", "Directory", "Files" };
    const char *name;

    if (!section) {
        name = "the server config";
    }
    else if (section->kind == SECTION_IF) {
        name = section->core->condition_ifelse == AP_CONDITION_ELSE ? "<Else>"
             : section->core->condition_ifelse == AP_CONDITION_ELSEIF ? "<ElseIf>" : "<If>";
    }
    else {
        name = apr_psprintf(p, "<%s%s \"%s\">", kinds[section->kind],
                            section->core->r ? "Match" : "", section->core->d);
    }
    if (s->is_virtual) {
        name = apr_psprintf(p, "%s of the <VirtualHost> at %s:%d", name, s->defn_name,
                            s->defn_line_number);
    }
    return name;
}

/* A CouchPageSize above the CouchPageMaxSize merged with it: which, and
 * where each is written. The default size is no fault: a smaller maximum
 * caps it (mod_couchpage_request.c's couchpage_read_request). */
static const char *page_size_fault(apr_pool_t *p, const couchpage_dir_conf *conf)
{
    if (!conf->page_size_set || conf->page_size <= conf->max_page_size) {
        return NULL;
    }
    return apr_psprintf(p, "CouchPageSize %d (%s) is larger than CouchPageMaxSize %d (%s)",
                        conf->page_size, couchpage_directive_where(p, conf->page_size_where),
                        conf->max_page_size, conf->max_page_size_set
                        ? couchpage_directive_where(p, conf->max_page_size_where)
                        : "the default");
}

/* A CouchPageLinks above the CouchPageMaxLinks merged with it: the page
 * would show fewer (couchpage_links_shown). */
static const char *links_fault(apr_pool_t *p, const couchpage_dir_conf *conf)
{
    if (!conf->links_set || conf->links <= conf->max_links) {
        return NULL;
    }
    return apr_psprintf(p, "CouchPageLinks %d (%s) is more than CouchPageMaxLinks %d (%s)",
                        conf->links, couchpage_directive_where(p, conf->links_where),
                        conf->max_links, conf->max_links_set
                        ? couchpage_directive_where(p, conf->max_links_where)
                        : "the default");
}

/* Whether the rows carry documents: a view's with CouchPageIncludeDocs On,
 * a _find's always. */
static int rows_have_docs(const couchpage_dir_conf *conf)
{
    return conf->view.include_docs || conf->view.is_find;
}

/* An HTML item that reads the rows' documents, which the queries do not
 * ask for: every item would show nothing. */
static const char *item_fault(apr_pool_t *p, const couchpage_dir_conf *conf)
{
    if (!conf->item_reads_doc || rows_have_docs(conf) || conf->format == CP_FORMAT_JSON) {
        return NULL;
    }
    return apr_psprintf(p, "%s (%s) reads the rows' documents (doc), and "
                        "CouchPageIncludeDocs is not On",
                        conf->item_template ? "CouchPageItemTemplate" : "CouchPageItem",
                        couchpage_directive_where(p, conf->item_where));
}

/* CouchPageFields without documents to pick members of. */
static const char *fields_fault(apr_pool_t *p, const couchpage_dir_conf *conf)
{
    if (!conf->fields || rows_have_docs(conf)) {
        return NULL;
    }
    return apr_psprintf(p, "CouchPageFields (%s) picks members of the rows' documents, "
                        "and CouchPageIncludeDocs is not On",
                        couchpage_directive_where(p, conf->fields_where));
}

/* An item that reads a member of the documents CouchPageFields leaves out:
 * what leaves the server is the fields, in HTML as in JSON. */
static const char *item_fields_fault(apr_pool_t *p, const couchpage_dir_conf *conf)
{
    const char *fault;

    if (!conf->item_set || !conf->fields_set || conf->format == CP_FORMAT_JSON
        || !(fault = cp_fields_fault(p, conf->item_read, conf->fields))) {
        return NULL;
    }
    return apr_psprintf(p, "%s (%s) %s (%s)",
                        conf->item_template ? "CouchPageItemTemplate" : "CouchPageItem",
                        couchpage_directive_where(p, conf->item_where), fault,
                        couchpage_directive_where(p, conf->fields_where));
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
static const char *find_fault(apr_pool_t *p, const couchpage_dir_conf *conf)
{
    static const char *const view_only[] = {
        "CouchPageRange", "CouchPageReduce", "CouchPageGroupLevel", "CouchPageIncludeDocs",
        "CouchPageMaxEmits"
    };
    static const char *const find_only[] = {
        "CouchPageSelector", "CouchPageSort", "CouchPageIndex"
    };
    cp_mango_flag flag;
    const char *view_where, *name;

    if (!conf->view_set) {
        return NULL;
    }
    view_where = couchpage_directive_where(p, conf->view_where);
    if (conf->view.is_find) {
        const int set[] = { conf->range_set, conf->reduce_set, conf->group_level_set,
                            conf->include_docs_set, conf->max_emits_set };

        if ((name = first_set(view_only, set, 5))) {
            return apr_psprintf(p, "%s is set where CouchPageView (%s) names a _find: it "
                                "shapes view queries only (CouchPageSelector chooses the "
                                "documents)", name, view_where);
        }
        if (!cp_mango_flag_named(conf->view.update, &flag)) {
            return apr_psprintf(p, "CouchPageUpdate %s is set where CouchPageView (%s) names "
                                "a _find, whose update is true or false only (CouchDB "
                                "answers invalid_boolean)", conf->view.update, view_where);
        }
        if (!conf->find_sort_set) {
            return apr_psprintf(p, "CouchPageView (%s) names a _find, and no CouchPageSort "
                                "is set: a _find location pages in the order of its sort "
                                "fields", view_where);
        }
    }
    else {
        const int set[] = { conf->find_selector_set, conf->find_sort_set,
                            conf->find_index_set };

        if ((name = first_set(find_only, set, 3))) {
            return apr_psprintf(p, "%s is set where CouchPageView (%s) names a view: it "
                                "shapes _find queries only", name, view_where);
        }
    }
    return NULL;
}

const char *couchpage_merged_fault(apr_pool_t *p, const couchpage_dir_conf *conf)
{
    const char *fault = page_size_fault(p, conf);

    if (!fault) {
        fault = item_fault(p, conf);
    }
    if (!fault) {
        fault = fields_fault(p, conf);
    }
    return fault ? fault : find_fault(p, conf);
}

/* One merged configuration and what other sections may change in it. */
static int check_merged(apr_pool_t *p, server_rec *s, const config_section *section,
                        const couchpage_dir_conf *merged, unsigned unknown)
{
    const char *fault;

    if (merged->handler != COUCHPAGE_HANDLER_COUCHPAGE || (unknown & SETS_HANDLER)) {
        return OK;
    }
    if (!merged->view_set && !(unknown & SETS_VIEW)) {
        ap_log_error(APLOG_MARK, APLOG_ERR | APLOG_STARTUP, 0, s, CPLOGNO(0112)
                     "SetHandler couchpage (%s) applies in %s, where no CouchPageView "
                     "is set: every request there would be answered 500. Set "
                     "CouchPageView there, or SetHandler couchpage only where a view "
                     "is set", couchpage_directive_where(p, merged->handler_where),
                     section_name(p, section, s));
        return !OK;
    }
    if (!(unknown & (SETS_PAGE_SIZE | SETS_MAX_PAGE_SIZE))
        && (fault = page_size_fault(p, merged))) {
        ap_log_error(APLOG_MARK, APLOG_ERR | APLOG_STARTUP, 0, s, CPLOGNO(0113)
                     "%s in %s: every request there would be answered 500. Raise "
                     "CouchPageMaxSize or lower CouchPageSize", fault,
                     section_name(p, section, s));
        return !OK;
    }
    if (!(unknown & (SETS_LINKS | SETS_MAX_LINKS)) && (fault = links_fault(p, merged))) {
        ap_log_error(APLOG_MARK, APLOG_ERR | APLOG_STARTUP, 0, s, CPLOGNO(0420)
                     "%s in %s: its pages would show fewer links than it says. Raise "
                     "CouchPageMaxLinks (each link costs a page of rows) or lower "
                     "CouchPageLinks", fault, section_name(p, section, s));
        return !OK;
    }
    if (!(unknown & (SETS_INCLUDE_DOCS | SETS_ITEM | SETS_FORMAT))
        && (fault = item_fault(p, merged))) {
        ap_log_error(APLOG_MARK, APLOG_ERR | APLOG_STARTUP, 0, s, CPLOGNO(0130)
                     "%s in %s: every item there would show nothing. Set "
                     "CouchPageIncludeDocs On there, or show the row's key, value or id",
                     fault, section_name(p, section, s));
        return !OK;
    }
    if (!(unknown & (SETS_ITEM | SETS_FIELDS | SETS_FORMAT))
        && (fault = item_fields_fault(p, merged))) {
        ap_log_error(APLOG_MARK, APLOG_ERR | APLOG_STARTUP, 0, s, CPLOGNO(0421)
                     "%s in %s: only CouchPageFields' members leave the server, so the "
                     "item would not show what it reads. Read only those members in the "
                     "item, or add the member to CouchPageFields",
                     fault, section_name(p, section, s));
        return !OK;
    }
    if (!(unknown & (SETS_INCLUDE_DOCS | SETS_FIELDS)) && (fault = fields_fault(p, merged))) {
        ap_log_error(APLOG_MARK, APLOG_ERR | APLOG_STARTUP, 0, s, CPLOGNO(0131)
                     "%s in %s: it would pick nothing. Set CouchPageIncludeDocs On there, "
                     "or remove CouchPageFields",
                     fault, section_name(p, section, s));
        return !OK;
    }
    if (!(unknown & (SETS_VIEW | SETS_QUERY | SETS_INCLUDE_DOCS))
        && (fault = find_fault(p, merged))) {
        ap_log_error(APLOG_MARK, APLOG_ERR | APLOG_STARTUP, 0, s, CPLOGNO(0320)
                     "%s, in %s: every request there would be answered 500", fault,
                     section_name(p, section, s));
        return !OK;
    }
    return OK;
}

/* The view URL's scheme needs its proxy modules loaded: without them
 * mod_proxy answers every page's subrequest with an error that names
 * nothing of the module's. */
static int check_view_modules(apr_pool_t *p, server_rec *s, const couchpage_dir_conf *conf)
{
    const couchpage_view_scheme *scheme;
    const char *missing = NULL;
    int i;

    if (!conf || !conf->view_set || !(scheme = couchpage_view_scheme_of(conf->view.url))) {
        return OK;
    }
    for (i = 0; scheme->modules[i]; i++) {
        const char *module = scheme->modules[i];

        if (!ap_find_linked_module(module)) {
            /* "mod_proxy_http.c" is loaded as proxy_http_module */
            const char *name = apr_pstrndup(p, module + 4, strlen(module) - 6);

            missing = apr_psprintf(p, "%s%s%s (LoadModule %s_module)", missing ? missing : "",
                                   missing ? ", " : "", apr_pstrndup(p, module, strlen(module) - 2),
                                   name);
        }
    }
    if (missing) {
        ap_log_error(APLOG_MARK, APLOG_ERR | APLOG_STARTUP, 0, s, CPLOGNO(0114)
                     "CouchPageView %s (%s): %s:// needs modules that are not loaded: %s",
                     conf->view.url, couchpage_directive_where(p, conf->view_where),
                     scheme->scheme, missing);
        return !OK;
    }
    return OK;
}

/* mod_proxy's name of a worker, as its lookup compares it, and whether it
 * is a pattern: name_ex and is_name_matchable since httpd 2.4.51 (MMN
 * 20120211.124); before, name, always a plain prefix. */
static const char *worker_name(const proxy_worker *worker, int *is_pattern)
{
#if AP_MODULE_MAGIC_AT_LEAST(20120211, 124)
    *is_pattern = worker->s->is_name_matchable;
    return worker->s->name_ex;
#else
    *is_pattern = 0;
    return worker->s->name;
#endif
}

/* A worker for the same scheme and port on another host name, which an
 * operator may take for the view's (localhost for 127.0.0.1): its name,
 * or NULL. */
static const char *worker_of_other_host(apr_pool_t *p, const proxy_server_conf *proxy,
                                        const char *url)
{
    const proxy_worker *workers = (const proxy_worker *)proxy->workers->elts;
    apr_uri_t view, uri;
    int i, is_pattern;

    if (apr_uri_parse(p, url, &view) != APR_SUCCESS || !view.hostname) {
        return NULL;
    }
    for (i = 0; i < proxy->workers->nelts; i++) {
        const char *name = worker_name(&workers[i], &is_pattern);

        if (!is_pattern && apr_uri_parse(p, name, &uri) == APR_SUCCESS && uri.hostname
            && uri.scheme && strcasecmp(uri.scheme, view.scheme) == 0
            && (uri.port ? uri.port : apr_uri_port_of_scheme(uri.scheme))
               == (view.port ? view.port : apr_uri_port_of_scheme(view.scheme))
            && strcasecmp(uri.hostname, view.hostname) != 0) {
            return name;
        }
    }
    return NULL;
}

/* A view's queries keep their backend connections only with a worker of
 * mod_proxy's that serves the view's URL: without one mod_proxy's default
 * worker makes them, which keeps no connection, and every query opens a new
 * one (it still works). A balancer:// view needs its balancer, without
 * which every page fails. Either is warned of, once a URL and server; the
 * configuration is read through mod_proxy's structures (mod_proxy.h), never
 * its functions, so that the module loads without it. */
static void check_view_worker(apr_pool_t *p, server_rec *s, const couchpage_dir_conf *conf,
                              apr_hash_t *warned)
{
    module *proxy_module = ap_find_linked_module("mod_proxy.c");
    const proxy_server_conf *proxy;
    const char *url, *key, *other;
    int i, is_pattern;

    if (!proxy_module || !conf || !conf->view_set) {
        return;
    }
    proxy = ap_get_module_config(s->module_config, proxy_module);
    url = cp_view_query_prefix(p, &conf->view, conf->partition != NULL);
    key = apr_psprintf(p, "%pp %s", (const void *)proxy, url);
    if (apr_hash_get(warned, key, APR_HASH_KEY_STRING)) {
        return;
    }
    if (strncasecmp(url, "balancer:", 9) == 0) {
        const proxy_balancer *balancers = (const proxy_balancer *)proxy->balancers->elts;

        for (i = 0; i < proxy->balancers->nelts; i++) {
            if (strcasecmp(balancers[i].s->name, conf->view.backend) == 0) {
                return;
            }
        }
        ap_log_error(APLOG_MARK, APLOG_WARNING | APLOG_STARTUP, 0, s, CPLOGNO(0132)
                     "CouchPageView %s (%s): no balancer %s is defined%s, and every page "
                     "there would fail. Define it: <Proxy \"%s\"> with a BalancerMember "
                     "for each CouchDB node", conf->view.url,
                     couchpage_directive_where(p, conf->view_where), conf->view.backend,
                     s->is_virtual ? " for this virtual host" : "", conf->view.backend);
        apr_hash_set(warned, key, APR_HASH_KEY_STRING, key);
        return;
    }
    for (i = 0; i < proxy->workers->nelts; i++) {
        const char *name = worker_name(&((const proxy_worker *)proxy->workers->elts)[i],
                                       &is_pattern);

        if (cp_view_worker_serves(p, name, is_pattern, url)) {
            return;
        }
    }
    other = worker_of_other_host(p, proxy, url);
    ap_log_error(APLOG_MARK, APLOG_WARNING | APLOG_STARTUP, 0, s, CPLOGNO(0133)
                 "CouchPageView %s (%s): no mod_proxy worker serves %s%s, so mod_proxy's "
                 "default worker makes its queries, which keeps no connection: each "
                 "query opens a new one. Define a worker: <Proxy \"%s/\"> with "
                 "ProxySet keepalive=On (a <Proxy> block without ProxySet defines none)%s%s%s",
                 conf->view.url, couchpage_directive_where(p, conf->view_where),
                 conf->view.backend, s->is_virtual ? " in this virtual host" : "",
                 conf->view.backend, other ? "; the worker " : "", other ? other : "",
                 other ? " is not it: mod_proxy compares host names as written" : "");
    apr_hash_set(warned, key, APR_HASH_KEY_STRING, key);
}

static int check_server(apr_pool_t *p, server_rec *s, apr_hash_t *warned)
{
    core_server_config *server = ap_get_core_module_config(s->module_config);
    const core_dir_config *defaults_core = ap_get_core_module_config(s->lookup_defaults);
    couchpage_dir_conf *defaults = ap_get_module_config(s->lookup_defaults,
                                                        &couchpage_module);
    apr_array_header_t *sections = apr_array_make(p, 16, sizeof(config_section));
    const config_section *all;
    unsigned htaccess = htaccess_settings(defaults_core), before_locations = 0, in_ifs = 0;
    unsigned in_patterns = 0, in_others = 0;
    couchpage_dir_conf *merged;
    int i, j;

    collect_sections(sections, SECTION_FILES, defaults_core->sec_file);
    collect_sections(sections, SECTION_IF, defaults_core->sec_if);
    collect_sections(sections, SECTION_DIRECTORY, server->sec_dir);
    collect_sections(sections, SECTION_LOCATION, server->sec_url);
    all = (const config_section *)sections->elts;
    for (i = 0; i < sections->nelts; i++) {
        if (all[i].kind == SECTION_DIRECTORY) {
            before_locations |= all[i].sets;
            htaccess |= htaccess_settings(all[i].core);
        }
        else if (all[i].kind == SECTION_FILES) {
            before_locations |= all[i].sets;
        }
        else if (all[i].kind == SECTION_IF) {
            in_ifs |= all[i].sets;
        }
        else if (!is_literal_location(&all[i])) {
            in_patterns |= all[i].sets;
        }
        if (check_view_modules(p, s, all[i].conf) != OK) {
            return !OK;
        }
        check_view_worker(p, s, all[i].conf, warned);
    }
    if (check_view_modules(p, s, defaults) != OK) {
        return !OK;
    }
    check_view_worker(p, s, defaults, warned);
    before_locations |= htaccess;

    /* the server's own, for a path only <Location "/"> matches */
    merged = defaults;
    for (i = 0; i < sections->nelts; i++) {
        if (location_matches_all(&all[i]) && all[i].conf) {
            merged = couchpage_merge_dir_conf(p, merged, (void *)all[i].conf);
            in_others |= all[i].sets;
        }
    }
    if (check_merged(p, s, NULL, merged,
                     in_ifs | in_patterns | (before_locations & ~in_others)) != OK) {
        return !OK;
    }

    for (i = 0; i < sections->nelts; i++) {
        unsigned unknown = 0, in_locations = 0;

        if (!all[i].conf) {
            continue;
        }
        merged = defaults;
        if (is_literal_location(&all[i])) {
            for (j = 0; j < sections->nelts; j++) {
                if (all[j].kind == SECTION_LOCATION && all[j].conf
                    && location_applies(all[j].core, all[i].core->d)) {
                    merged = couchpage_merge_dir_conf(p, merged, (void *)all[j].conf);
                    in_locations |= all[j].sets;
                }
            }
            unknown = in_ifs | (before_locations & ~in_locations);
        }
        else {
            merged = couchpage_merge_dir_conf(p, merged, (void *)all[i].conf);
            for (j = 0; j < sections->nelts; j++) {
                unknown |= j != i ? all[j].sets : 0;
            }
            unknown |= htaccess;
        }
        if (check_merged(p, s, &all[i], merged, unknown) != OK) {
            return !OK;
        }
    }
    return OK;
}

int couchpage_check_config(apr_pool_t *pconf, apr_pool_t *plog, apr_pool_t *ptemp,
                           server_rec *s)
{
    apr_hash_t *warned = apr_hash_make(ptemp);

    for (; s; s = s->next) {
        if (check_server(ptemp, s, warned) != OK) {
            return !OK;
        }
    }
    return OK;
}
