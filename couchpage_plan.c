#include "couchpage_plan.h"
#include "couchpage_json.h"

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
    plan->partition = partition;
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

/* The key a query in the view's direction starts from. Read in descending
 * order, a group that a group level cut short starts after every key it
 * groups: [2023] must be sent as [2023,{}], which sorts after [2023, m, d]
 * (objects sort after every other type). */
static const char *start_key(apr_pool_t *pool, const cp_view *view, const cp_token *start,
                             int descending)
{
    json_t *upper;

    if (!(descending && view->reduce && view->group_level > 0
          && json_is_array(start->key)
          && json_array_size(start->key) == (size_t)view->group_level)) {
        return start->key_json;
    }
    upper = cp_json_pool_own(pool, json_copy((json_t *)start->key));
    json_array_append_new(upper, json_object());
    return cp_json_text(pool, upper);
}

static void add_start(apr_pool_t *pool, apr_array_header_t *params, const cp_view *view,
                      const cp_token *start, int descending)
{
    add_param(pool, params, "startkey", start_key(pool, view, start, descending));
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
        add_start(pool, params, view, start, view->descending);
        if (start->index > 0) {
            add_param(pool, params, "skip", apr_itoa(pool, start->index));
        }
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

int cp_plan_pages_either_side(int links)
{
    return links > 1 ? links : 1;
}

int cp_plan_forward_limit(const cp_plan *plan)
{
    /* with include_docs, the pages ahead come from the keys-only ahead query */
    int pages = cp_plan_needs_ahead(plan) ? 1 : cp_plan_pages_either_side(plan->links);

    return pages * plan->count + 1;
}

const char *cp_plan_forward(apr_pool_t *pool, const cp_plan *plan,
                            const cp_token *start)
{
    apr_array_header_t *params = forward_params(pool, plan, start,
                                                cp_plan_forward_limit(plan));

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

/* Whether the backward query passes over the token's own row with skip=1. */
static int backward_skips_own_row(const cp_plan *plan, int entry_rows)
{
    return cp_view_has_docids(plan->view) && entry_rows <= 1;
}

int cp_plan_backward_limit(const cp_plan *plan, int entry_rows, int extra)
{
    int rows = cp_plan_pages_either_side(plan->links) * plan->count + extra;

    /* the algorithm's skip=1 passes over the token's own row; grouped rows
     * and entries of several rows are passed over by the page assembler */
    return backward_skips_own_row(plan, entry_rows) ? rows
                                                    : rows + (entry_rows > 1 ? entry_rows : 1);
}

const char *cp_plan_backward(apr_pool_t *pool, const cp_plan *plan,
                             const cp_token *start, int entry_rows, int extra)
{
    const cp_view *view = plan->view;
    const char *bound = view->descending ? plan->high : plan->low;
    apr_array_header_t *params = base_params(pool, view,
                                             cp_plan_backward_limit(plan, entry_rows, extra),
                                             !view->descending);

    add_start(pool, params, view, start, !view->descending);
    if (bound) {
        add_param(pool, params, "endkey", bound);
    }
    if (backward_skips_own_row(plan, entry_rows)) {
        add_param(pool, params, "skip", "1");
    }
    return join(pool, plan, params);
}

int cp_plan_is_partial(const cp_plan *plan)
{
    return plan->low || plan->high || plan->view->is_partitioned || plan->partition;
}

/* Byte order of two JSON strings, as CouchDB's raw collation of ids. */
static int compare_ids(const json_t *a, const json_t *b)
{
    size_t la = json_string_length(a), lb = json_string_length(b);
    int cmp = memcmp(json_string_value(a), json_string_value(b), la < lb ? la : lb);

    return cmp ? cmp : (la > lb) - (la < lb);
}

const char *cp_plan_check_start(apr_pool_t *pool, const cp_plan *plan,
                                const cp_token *start)
{
    const char *bounds[2] = { plan->low, plan->high };
    int side;

    if (!plan->view->is_all_docs || !(plan->low || plan->high)) {
        return NULL;
    }
    if (!json_is_string(start->key)) {
        return "the start token's key is not a document id";
    }
    for (side = 0; side < 2; side++) {
        const json_t *bound = bounds[side]
            ? cp_json_load(pool, bounds[side], strlen(bounds[side]), NULL) : NULL;
        int cmp;

        if (!bounds[side]) {
            continue;
        }
        if (!json_is_string(bound)) {
            return "an _all_docs key range needs document ids (JSON strings) as bounds";
        }
        cmp = compare_ids(start->key, bound);
        if (side == 0 ? cmp < 0 : cmp > 0) {
            return "the start token is outside this location's key range";
        }
    }
    return NULL;
}
