#include "couchpage_plan.h"

#include <apr_escape.h>
#include <apr_strings.h>
#include <apr_uri.h>
#include <string.h>

/* Splits path into the database part and the index part, which starts at
 * /_all_docs or /_design/ (after /_partition/P when there is one). */
static const char *split_index_path(apr_pool_t *pool, const char *url, const char *path,
                                    cp_view *view)
{
    apr_size_t len = strlen(path);
    const char *index, *partition;

    if (len > 10 && strcmp(path + len - 10, "/_all_docs") == 0) {
        view->is_all_docs = 1;
        index = path + len - 10;
    }
    else {
        const char *ddoc, *slash;

        index = strstr(path, "/_design/");
        if (!index) {
            return "must name a view (.../DB/_design/DDOC/_view/VIEW) or .../DB/_all_docs";
        }
        ddoc = index + 9;
        slash = strchr(ddoc, '/');
        if (!slash || slash == ddoc || strncmp(slash, "/_view/", 7) != 0
            || !slash[7] || strchr(slash + 7, '/')) {
            return "must name a view (.../DB/_design/DDOC/_view/VIEW) or .../DB/_all_docs";
        }
    }
    partition = strstr(path, "/_partition/");
    view->is_partitioned = partition != NULL && partition < index;
    if (index == path || (view->is_partitioned && partition == path)) {
        return "has no database before the view";
    }
    view->index_path = index;
    /* the database URL is the configured URL up to where the index starts */
    view->db_url = apr_pstrndup(pool, url, strlen(url) - strlen(index));
    if (view->is_partitioned) {
        view->db_url = apr_pstrndup(pool, view->db_url,
                                    strlen(view->db_url) - (index - partition));
        view->index_path = partition;
    }
    return NULL;
}

const char *cp_view_init(apr_pool_t *pool, const char *url, cp_view *view)
{
    apr_uri_t uri;

    if (apr_uri_parse(pool, url, &uri) != APR_SUCCESS || !uri.scheme || !uri.hostname) {
        return "must be an absolute URL such as "
               "http://127.0.0.1:5984/db/_design/ddoc/_view/name";
    }
    if (uri.query || uri.fragment) {
        return "must not have a query string or fragment; "
               "the CouchPage* directives set every view parameter";
    }
    if (uri.user || uri.password) {
        return "must not carry credentials; use CouchPageCredentials";
    }
    view->url = url;
    view->is_all_docs = 0;
    return split_index_path(pool, url, uri.path ? uri.path : "", view);
}

int cp_view_has_docids(const cp_view *view)
{
    return !view->reduce;
}

const char *cp_plan_init(apr_pool_t *pool, cp_plan *plan, const cp_view *view,
                         const char *partition, const char *low, const char *high,
                         int count, int links)
{
    plan->view = view;
    plan->low = low;
    plan->high = high;
    plan->count = count;
    plan->links = links;
    plan->index_url = view->url;
    if (partition) {
        if (view->is_partitioned) {
            return "the view URL names a partition already";
        }
        /* CouchDB's partition names: non-empty, no leading underscore. */
        if (!*partition || *partition == '_' || strchr(partition, ':')) {
            return apr_psprintf(pool, "'%s' is not a CouchDB partition name", partition);
        }
        plan->index_url = apr_pstrcat(pool, view->db_url, "/_partition/",
                                      apr_pescape_path_segment(pool, partition),
                                      view->index_path, NULL);
    }
    return NULL;
}

/* Appends name=value to a query being built; the value is encoded. */
static void add_param(apr_pool_t *pool, apr_array_header_t *params,
                      const char *name, const char *value)
{
    APR_ARRAY_PUSH(params, const char *) =
        apr_pstrcat(pool, name, "=", apr_pescape_urlencoded(pool, value), NULL);
}

/* The parameters every query of the location shares. */
static apr_array_header_t *base_params(apr_pool_t *pool, const cp_view *view,
                                       int limit, int descending)
{
    apr_array_header_t *params = apr_array_make(pool, 10, sizeof(const char *));

    add_param(pool, params, "limit", apr_itoa(pool, limit));
    if (view->reduce) {
        add_param(pool, params, "reduce", "true");
        if (view->group_level == CP_GROUP_EXACT) {
            add_param(pool, params, "group", "true");
        }
        else {
            add_param(pool, params, "group_level", apr_itoa(pool, view->group_level));
        }
    }
    else if (!view->is_all_docs) {
        /* Without it a view with a reduce function answers one reduced row. */
        add_param(pool, params, "reduce", "false");
    }
    if (descending) {
        add_param(pool, params, "descending", "true");
    }
    return params;
}

static void add_start(apr_pool_t *pool, apr_array_header_t *params, const cp_view *view,
                      const cp_token *start)
{
    add_param(pool, params, "startkey", start->key_json);
    /* _all_docs keys are the ids already */
    if (start->docid && !view->is_all_docs) {
        add_param(pool, params, "startkey_docid", start->docid);
    }
}

static const char *join(apr_pool_t *pool, const cp_plan *plan, apr_array_header_t *params)
{
    return apr_pstrcat(pool, plan->index_url, "?",
                       apr_array_pstrcat(pool, params, '&'), NULL);
}

/* The parameters of a query in the view's own direction from start (or
 * from the range's start), bounded by the range's end. */
static apr_array_header_t *forward_params(apr_pool_t *pool, const cp_plan *plan,
                                          const cp_token *start, int limit)
{
    const cp_view *view = plan->view;
    const char *first = view->descending ? plan->high : plan->low;
    const char *last = view->descending ? plan->low : plan->high;
    apr_array_header_t *params = base_params(pool, view, limit, view->descending);

    if (start) {
        add_start(pool, params, view, start);
    }
    else if (first) {
        add_param(pool, params, "startkey", first);
    }
    if (last) {
        add_param(pool, params, "endkey", last);
    }
    return params;
}

int cp_plan_needs_ahead(const cp_plan *plan)
{
    return plan->view->include_docs && plan->links > 1;
}

const char *cp_plan_forward(apr_pool_t *pool, const cp_plan *plan,
                            const cp_token *start)
{
    int pages = plan->links > 1 && !cp_plan_needs_ahead(plan) ? plan->links : 1;
    apr_array_header_t *params = forward_params(pool, plan, start,
                                                pages * plan->count + 1);

    if (plan->view->include_docs) {
        add_param(pool, params, "include_docs", "true");
    }
    return join(pool, plan, params);
}

const char *cp_plan_ahead(apr_pool_t *pool, const cp_plan *plan, const cp_token *next)
{
    return join(pool, plan, forward_params(pool, plan, next,
                                           (plan->links - 1) * plan->count + 1));
}

const char *cp_plan_backward(apr_pool_t *pool, const cp_plan *plan,
                             const cp_token *start)
{
    const cp_view *view = plan->view;
    const char *bound = view->descending ? plan->high : plan->low;
    int keyed_rows = cp_view_has_docids(view);
    int limit = (plan->links > 1 ? plan->links : 1) * plan->count;
    apr_array_header_t *params = base_params(pool, view, keyed_rows ? limit : limit + 1,
                                             !view->descending);

    add_start(pool, params, view, start);
    if (bound) {
        add_param(pool, params, "endkey", bound);
    }
    if (keyed_rows) {
        add_param(pool, params, "skip", "1");
    }
    return join(pool, plan, params);
}
