/* SPDX-License-Identifier: Apache-2.0 */
/*
 * couchpage_learn: the database's index that starts a _find location's
 * ties at the row, where the one _explain names does not, and the index to
 * make where none does (couchpage_learn.h). httpd-free.
 */
#include "couchpage_learn.h"

#include <string.h>
#include <apr_strings.h>

#include "couchpage_fault.h"

const char *cp_learn_pick_index(apr_pool_t *pool, const char *text, apr_size_t len,
                                const json_t *selector, const cp_mango_field *sort,
                                int sort_count, int partition, const char **ddoc,
                                const char **name, apr_array_header_t **fields)
{
    const json_t *list = json_object_get(cp_json_load(pool, text, len, NULL), "indexes");
    const json_t *each;
    const char *d, *n;
    apr_array_header_t *f;
    size_t i;
    int most = 0;

    if (!json_is_array(list)) {
        return "the answer lists no indexes";
    }
    json_array_foreach(list, i, each) {
        /* a partitioned database's index serves a partition's queries or
         * the database's, as "partitioned" says (false elsewhere) */
        if (!cp_mango_json_index(pool, each, "the list names", &d, &n, &f)
            && json_is_true(json_object_get(each, "partitioned")) == (partition != 0)
            && cp_mango_index_starts_at_row(selector, sort, sort_count, f) && f->nelts > most) {
            *ddoc = d;
            *name = n;
            *fields = f;
            most = f->nelts;
        }
    }
    return most ? NULL : apr_psprintf(pool, "none of its %d is a JSON index%s without "
                                      "partial_filter_selector whose fields are the "
                                      "selector's equalities, then the sort fields they leave "
                                      "open, then _id", (int)json_array_size(list),
                                      partition ? " of the partitions" : " of the database");
}

int cp_learn_ties_index(apr_pool_t *pool, const cp_transport *tr, const cp_source *src,
                        const char **ddoc, const char **name, apr_array_header_t **fields,
                        cp_transport_failure *failure)
{
    const cp_find_spec *spec = src->find;
    const cp_find_sort *sort = spec->sort;
    const char *low, *high, *fixed, *text, *why, *d, *n;
    apr_array_header_t *f;
    apr_size_t len;

    /* the operator's index is the operator's; a view that numbers the
     * pages, or an index that starts the ties at the row, needs no other */
    if (spec->index_ddoc
        || !cp_mango_index_range(pool, spec->selector, sort->fields, sort->count, *fields,
                                 &low, &high, &fixed)
        || cp_mango_index_starts_at_row(spec->selector, sort->fields, sort->count, *fields)) {
        return 0;
    }
    if (!tr->get(tr->baton, apr_pstrcat(pool, src->view->db_url, "/_index", NULL), &text,
                 &len, failure)) {
        return -1;
    }
    why = cp_learn_pick_index(pool, text, len, spec->selector, sort->fields, sort->count,
                              src->view->is_partitioned || src->partition, &d, &n, &f);
    if (why) {
        if (tr->debug) {
            tr->log(tr->baton, CP_LOG_DEBUG, "CP0376", apr_psprintf(pool, "the index %s %s "
                    "that _explain names for the _find location %s reads the rows tied with "
                    "a page's boundary row again, and the database's indexes (GET %s/_index) "
                    "hold none that starts at the row: %s", *ddoc, *name, src->uri,
                    src->view->db_url, why));
        }
        return 0;
    }
    *ddoc = d;
    *name = n;
    *fields = f;
    return 1;
}

const char *cp_learn_note(apr_pool_t *pool, const char *view_path,
                          const apr_array_header_t *fields, const char *use_ddoc,
                          const char *use_name)
{
    json_t *note = cp_json_pool_own(pool, json_object()), *list = json_array();
    int i;

    json_object_set_new(note, "view", json_string(view_path));
    for (i = 0; i < fields->nelts; i++) {
        json_array_append_new(list, json_string(APR_ARRAY_IDX(fields, i, const char *)));
    }
    json_object_set_new(note, "fields", list);
    if (use_ddoc) {
        json_object_set_new(note, "use", json_pack("[ss]", strncmp(use_ddoc, "_design/", 8)
                                                   ? use_ddoc : use_ddoc + 8, use_name));
    }
    return cp_json_text(pool, note);
}

const cp_source *cp_learn_source(apr_pool_t *pool, const cp_source *src, const json_t *note)
{
    const json_t *use = json_object_get(note, "use");
    const char *ddoc = cp_json_string_text(json_array_get(use, 0));
    const char *name = cp_json_string_text(json_array_get(use, 1));
    cp_find_spec *spec;
    cp_source *copy;

    if (src->find->index_ddoc || !ddoc || !*ddoc || !name || !*name) {
        return src;
    }
    spec = apr_pmemdup(pool, src->find, sizeof(*spec));
    spec->index_ddoc = apr_pstrdup(pool, ddoc);
    spec->index_name = apr_pstrdup(pool, name);
    /* dropped meanwhile, it is not the operator's to mend: CouchDB reads
     * through another (and warns) until the child learns again */
    spec->index_fallback = 1;
    copy = apr_pmemdup(pool, src, sizeof(*copy));
    copy->find = spec;
    return copy;
}

const char *cp_learn_index_to_create(apr_pool_t *pool, const cp_transport *tr,
                                     const cp_source *src)
{
    const cp_find_spec *spec = src->find;
    const char *body = cp_mango_advised_index(pool, spec->selector, spec->sort->fields,
                                              spec->sort->count,
                                              src->view->is_partitioned || src->partition);

    if (!body) {
        return NULL;
    }
    /* the operator's index stays the operator's; without one (or with one
     * learnt), each child finds the new index among the database's when it
     * learns again */
    return spec->index_ddoc && !spec->index_fallback
           ? apr_psprintf(pool, "POST %s/_index %s, and name it with CouchPageIndex (%s names "
                          "%s%s%s)", src->view->db_url, body,
                          tr->where(tr->baton, CP_WHERE_INDEX), spec->index_ddoc,
                          spec->index_name ? " " : "", spec->index_name ? spec->index_name
                                                                        : "")
           : apr_psprintf(pool, "POST %s/_index %s: each child finds it among the database's "
                          "indexes within a minute (CouchPageIndex need not name it)",
                          src->view->db_url, body);
}

void cp_learn_advise(apr_pool_t *pool, const cp_transport *tr, const cp_source *src,
                     const char *why)
{
    const char *key = apr_psprintf(pool, "CP0422 %pp", src->location), *create;

    if (!tr->first_time(tr->baton, key, strlen(key))
        || !(create = cp_learn_index_to_create(pool, tr, src))) {
        return;
    }
    tr->log(tr->baton, CP_LOG_WARNING, "CP0422", apr_psprintf(pool, "the _find pages of %s "
            "cannot be read from an index's view (%s): each page asks _find from its "
            "boundary row's sort values, and CouchDB reads again the rows that tie with that "
            "row before it. Through an index whose fields are the selector's equalities, "
            "then the sort fields they leave open, then _id, the pages ask the ties apart "
            "and CouchDB starts them at the row. Create it: %s (CouchPageView %s, %s)",
            src->uri, why, create, src->view->url, tr->where(tr->baton, CP_WHERE_VIEW)));
}

void cp_learn_warned(apr_pool_t *pool, const cp_transport *tr, const cp_source *src,
                     const char *warning)
{
    const char *create;
    int level = tr->first_time(tr->baton, &src->location, sizeof(src->location))
                ? CP_LOG_WARNING : CP_LOG_DEBUG;

    if (level == CP_LOG_DEBUG && !tr->debug) {
        return;
    }
    create = cp_learn_index_to_create(pool, tr, src);
    tr->log(tr->baton, level, "CP0322", apr_psprintf(pool, "CouchDB warns of the _find query "
            "of %s: %s (CouchPageView %s, %s). Create the index that serves it: %s", src->uri,
            cp_fault_loggable(pool, warning), src->view->url, tr->where(tr->baton, CP_WHERE_VIEW),
            create ? create : "its fields the selector's equalities, then the sort fields, "
            "then _id (POST .../_index), named with CouchPageIndex"));
}
