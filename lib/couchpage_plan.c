/* SPDX-License-Identifier: Apache-2.0 */
/*
 * couchpage_plan.c: a page's CouchDB queries, as JSON parameters, a GET
 * URL or a multi-query body, which of them wait for an answer, the answers
 * taken by role, what a cut multi-query answer leaves to ask alone, and
 * their widening. Part of the httpd-free core: no httpd
 * header, no request_rec; it sends nothing.
 */
#include "couchpage_plan.h"
#include "couchpage_json.h"
#include "couchpage_response.h"
#include "couchpage_seq.h"

#include <apr_escape.h>
#include <apr_strings.h>
#include <string.h>

/* The range's bounds read as keys, into *low_key and *high_key: NULL, or
 * why they cannot bound the view's keys (see cp_plan_check_range). */
static const char *read_range(apr_pool_t *pool, const cp_view *view, const char *low,
                              const char *high, const json_t **low_key,
                              const json_t **high_key)
{
    const char *bounds[2] = { low, high }, *names[2] = { "LOW", "HIGH" };
    const json_t **keys[2] = { low_key, high_key };
    int side;

    for (side = 0; side < 2; side++) {
        const char *error = NULL;

        *keys[side] = NULL;
        if (!bounds[side]) {
            continue;
        }
        *keys[side] = cp_json_load(pool, bounds[side], strlen(bounds[side]), &error);
        if (!*keys[side]) {
            return apr_psprintf(pool, "%s '%s' is not JSON: %s", names[side], bounds[side],
                                error);
        }
        if (view->is_all_docs && !cp_json_is_string(*keys[side])) {
            return apr_psprintf(pool, "%s '%s' is not a document id; an _all_docs range "
                                "needs JSON strings", names[side], bounds[side]);
        }
    }
    return NULL;
}

const char *cp_plan_check_range(apr_pool_t *pool, const cp_view *view, const char *low,
                                const char *high)
{
    const json_t *low_key, *high_key;

    return read_range(pool, view, low, high, &low_key, &high_key);
}

const char *cp_plan_check_partition(apr_pool_t *pool, const char *partition)
{
    /* CouchDB's rule (couch_partition:validate_partition): not empty, no
     * leading underscore, no colon, UTF-8. The name is one path segment,
     * percent-encoded ('/' too); "." and ".." would still be read as the
     * path's own dot segments, /db/_partition/../_design/... */
    if (!cp_json_quote(pool, partition)) {
        return "the partition name is not valid UTF-8";
    }
    if (!*partition || *partition == '_' || strchr(partition, ':')
        || !strcmp(partition, ".") || !strcmp(partition, "..")) {
        return apr_psprintf(pool, "'%s' is not a CouchDB partition name", partition);
    }
    return NULL;
}

const char *cp_plan_init(apr_pool_t *pool, cp_plan *plan, const cp_view *view,
                         const char *partition, const char *low, const char *high,
                         int count, int links)
{
    const char *reason;

    plan->view = view;
    plan->low = low;
    plan->high = high;
    reason = read_range(pool, view, low, high, &plan->low_key, &plan->high_key);
    if (reason) {
        return reason;
    }
    plan->count = count;
    plan->links = links;
    plan->count_cap = 0;
    plan->partition = partition;
    plan->update_seq = 0;
    plan->place_known = 0;
    return cp_plan_index_url(pool, view, partition, &plan->index_url);
}

const char *cp_plan_index_url(apr_pool_t *pool, const cp_view *view, const char *partition,
                              const char **url)
{
    const char *reason;

    *url = view->url;
    if (!partition) {
        return NULL;
    }
    if (view->is_partitioned) {
        return "the view URL names a partition already";
    }
    if ((reason = cp_plan_check_partition(pool, partition))) {
        return reason;
    }
    *url = apr_pstrcat(pool, view->db_url, "/_partition/",
                       apr_pescape_path_segment(pool, partition), view->index_path, NULL);
    return NULL;
}

int cp_plan_pages_either_side(int links)
{
    return links > 1 ? links : 1;
}

/* A parameter whose string value CouchDB reads raw in a query string; every
 * other value is JSON there too (keys, numbers, booleans). */
static int is_raw_string_param(const char *name)
{
    return !strcmp(name, "startkey_docid") || !strcmp(name, "endkey_docid")
        || !strcmp(name, "update") || !strcmp(name, "stable");
}

static void set_param(json_t *params, const char *name, json_t *value)
{
    json_object_set_new(params, name, value);
}

/* A parameter whose value is a key or a document id. */
static int is_key_param(const char *name)
{
    return !strcmp(name, "startkey") || !strcmp(name, "endkey")
        || !strcmp(name, "startkey_docid") || !strcmp(name, "endkey_docid");
}

/* The query string of a GET: name=value for each parameter; with
 * hide_keys, a key's or a document id's value is its length instead. */
static const char *query_string(apr_pool_t *pool, const cp_query *query, int hide_keys)
{
    apr_array_header_t *pairs = apr_array_make(pool, (int)json_object_size(query->params),
                                               sizeof(const char *));
    const char *name;
    json_t *value;

    json_object_foreach(query->params, name, value) {
        const char *text = cp_json_is_string(value) && is_raw_string_param(name)
                         ? json_string_value(value) : cp_json_text(pool, value);

        APR_ARRAY_PUSH(pairs, const char *) =
            hide_keys && is_key_param(name)
            ? apr_psprintf(pool, "%s=<%" APR_SIZE_T_FMT " bytes>", name, strlen(text))
            : apr_pstrcat(pool, name, "=", apr_pescape_urlencoded(pool, text), NULL);
    }
    return apr_array_pstrcat(pool, pairs, '&');
}

const char *cp_plan_query_url(apr_pool_t *pool, const char *index_url,
                              const cp_query *query)
{
    return apr_pstrcat(pool, index_url, "?", query_string(pool, query, 0), NULL);
}

const char *cp_plan_url_path(const char *url)
{
    const char *authority = strstr(url, "://"), *path;

    authority = authority ? authority + 3 : url;
    path = strchr(authority, '/');
    return path ? path : "/";
}

const char *cp_plan_query_loggable(apr_pool_t *pool, const char *index_url,
                                   const cp_query *query, int hide_keys)
{
    return apr_pstrcat(pool, cp_plan_url_path(index_url), "?",
                       query_string(pool, query, hide_keys), NULL);
}

/* The parameters every query of the location shares. */
static json_t *base_params(apr_pool_t *pool, const cp_view *view, int limit, int descending)
{
    json_t *params = cp_json_pool_own(pool, json_object());

    set_param(params, "limit", json_integer(limit));
    if (view->reduce) {
        set_param(params, "reduce", json_true());
        if (view->group_level == CP_GROUP_EXACT) {
            set_param(params, "group", json_true());
        }
        else {
            set_param(params, "group_level", json_integer(view->group_level));
        }
    }
    else if (!view->is_all_docs) {
        /* Without it a view with a reduce function answers one reduced row. */
        set_param(params, "reduce", json_false());
    }
    if (descending) {
        set_param(params, "descending", json_true());
    }
    /* whether CouchDB brings the index up to date first, and from which copy
     * of each shard it reads: the same for every query of the page */
    if (view->update) {
        set_param(params, "update", json_string(view->update));
    }
    if (view->stable) {
        set_param(params, "stable", json_string(view->stable));
    }
    return params;
}

/* The key a query in the view's direction starts from. Read in descending
 * order, a group that a group level cut short starts after every key it
 * groups: [2023] must be sent as [2023,{}], which sorts after [2023, m, d]
 * (objects sort after every other type). */
static json_t *start_key(const cp_view *view, const cp_token *start, int descending)
{
    json_t *upper;

    if (!(descending && view->reduce && view->group_level > 0
          && json_is_array(start->key)
          && json_array_size(start->key) == (size_t)view->group_level)) {
        return json_incref((json_t *)start->key);
    }
    upper = json_copy((json_t *)start->key);
    json_array_append_new(upper, json_object());
    return upper;
}

static void add_start(json_t *params, const cp_view *view, const cp_token *start,
                      int descending)
{
    set_param(params, "startkey", start_key(view, start, descending));
    /* _all_docs keys are the ids already */
    if (start->docid && !view->is_all_docs) {
        set_param(params, "startkey_docid", json_string(start->docid));
    }
}

static void add_bound(json_t *params, const char *name, const json_t *key)
{
    if (key) {
        set_param(params, name, json_incref((json_t *)key));
    }
}

static void set_query(cp_query *query, cp_query_role role, int limit, json_t *params,
                      int widened)
{
    query->role = role;
    query->limit = limit;
    query->params = params;
    query->answer = NULL;
    query->widened = widened;
}

static void add_query(apr_array_header_t *queries, cp_query_role role, int limit,
                      json_t *params)
{
    set_query(apr_array_push(queries), role, limit, params, 0);
}

/* Marks the queries CouchDB may refuse as a reversed range: its check
 * compares startkey with endkey, on views only (check_range in
 * src/couch_mrview/src/couch_mrview_util.erl, CouchDB 3.4.3). */
static void mark_refusable(const cp_plan *plan, apr_array_header_t *queries)
{
    int i;

    for (i = 0; i < queries->nelts; i++) {
        cp_query *query = &APR_ARRAY_IDX(queries, i, cp_query);

        query->refusable = !plan->view->is_all_docs
                           && json_object_get(query->params, "startkey")
                           && json_object_get(query->params, "endkey");
    }
}

/* A query in the view's own direction from start (or from the range's
 * start), bounded by the range's end. */
static json_t *forward_params(apr_pool_t *pool, const cp_plan *plan, const cp_token *start,
                              int limit)
{
    const cp_view *view = plan->view;
    json_t *params = base_params(pool, view, limit, view->descending);

    if (start) {
        add_start(params, view, start, view->descending);
        if (start->index > 0) {
            set_param(params, "skip", json_integer(start->index));
        }
    }
    else {
        add_bound(params, "startkey", view->descending ? plan->high_key : plan->low_key);
    }
    add_bound(params, "endkey", view->descending ? plan->low_key : plan->high_key);
    return params;
}

/* The query the other way from the token's row, bounded by the range's
 * start, its own entry included: skip passes over the rows only counted
 * (see backward_skip). */
static json_t *backward_params(apr_pool_t *pool, const cp_plan *plan, const cp_token *start,
                               int limit, int skip)
{
    const cp_view *view = plan->view;
    json_t *params = base_params(pool, view, limit, !view->descending);

    add_start(params, view, start, !view->descending);
    if (skip > 0) {
        set_param(params, "skip", json_integer(skip));
    }
    add_bound(params, "endkey", view->descending ? plan->high_key : plan->low_key);
    return params;
}

/* The last page's query: from the range's end the other way, bounded by
 * its start, with the documents when the items carry them. */
static json_t *tail_params(apr_pool_t *pool, const cp_plan *plan, int limit)
{
    const cp_view *view = plan->view;
    json_t *params = base_params(pool, view, limit, !view->descending);

    add_bound(params, "startkey", view->descending ? plan->low_key : plan->high_key);
    add_bound(params, "endkey", view->descending ? plan->high_key : plan->low_key);
    if (view->include_docs) {
        set_param(params, "include_docs", json_true());
    }
    return params;
}

/* The last page's query's first limit: a full page, the rows the pages
 * behind need, and the slack of backward_reach. */
static int tail_limit(const cp_plan *plan)
{
    int rows = (1 + cp_plan_pages_either_side(plan->links)) * plan->count;

    return rows + (cp_view_has_docids(plan->view) ? CP_PLAN_BACKWARD_SLACK : 1);
}

/* How far the backward query first reads, the rows it passes over with
 * skip included: the rows the pages behind need, the
 * token's own entry up to the token (a grouped row's own group), and, for
 * map rows, CP_PLAN_BACKWARD_SLACK rows more: the answer must show that the
 * entry at its far end is whole (a row past it), and an entry of several
 * rows, the token's own after the token or the far one, takes rows from
 * the pages behind. Within the slack (documents that emit a key twice)
 * that needs no second round; beyond it, widening (cp_plan_widen) asks. */
static int backward_reach(const cp_plan *plan, const cp_token *start)
{
    int behind = cp_plan_pages_either_side(plan->links) * plan->count;

    return cp_view_has_docids(plan->view)
           ? behind + start->index + 1 + CP_PLAN_BACKWARD_SLACK : behind + 1;
}

/* The rows the backward query passes over (see cp_plan_page): all but the
 * last two of the count rows nearest the token's own entry, which the page
 * assembler only counts. Of those two, the nearer shows where the entry of
 * the previous page's start begins when a document emits its key twice
 * (the slack's case, one round as without skip). Grouped rows are read
 * whole: their own group may or may not come first. */
static int backward_skip(const cp_plan *plan)
{
    return cp_view_has_docids(plan->view) && plan->count > 2 ? plan->count - 2 : 0;
}

/* The own group probe (grouped rows from a token): limit=1 from the token's
 * key to the last key its group holds (start_key's, read descending), so
 * that CouchDB says whether a group collates equal to it. In one shard
 * CouchDB names a group by the first row it meets in the direction read
 * (couch_btree:reduce_stream_kv_node2): the backward answer's first group
 * may be the token's own, spelt otherwise (NFC "\u00e9" read one way, NFD
 * "e\u0301" the other), which only CouchDB's collation can tell. */
static json_t *own_group_params(apr_pool_t *pool, const cp_plan *plan, const cp_token *start)
{
    json_t *params = base_params(pool, plan->view, 1, 0);

    add_start(params, plan->view, start, 0);
    set_param(params, "endkey", start_key(plan->view, start, 1));
    return params;
}

/* Whether CouchDB may refuse a query of the page as a reversed range: one
 * with both startkey and endkey, on a view (_all_docs has no such check). */
static int may_be_refused(const cp_plan *plan, const cp_token *start)
{
    const json_t *first = plan->view->descending ? plan->high_key : plan->low_key;
    const json_t *last = plan->view->descending ? plan->low_key : plan->high_key;

    /* forward (and ahead): from the token or the range's start to its end;
     * backward: from the token to the range's start */
    return !plan->view->is_all_docs && ((last && (start || first)) || (start && first));
}

/* The range start probe (see cp_plan_page): limit=0 from the range's start,
 * without an endkey, so CouchDB never refuses it. */
static void add_range_start_probe(apr_pool_t *pool, const cp_plan *plan,
                                  apr_array_header_t *queries)
{
    json_t *params = base_params(pool, plan->view, 0, plan->view->descending);

    add_bound(params, "startkey", plan->view->descending ? plan->high_key : plan->low_key);
    add_query(queries, CP_QUERY_RANGE_START, 0, params);
}

/* The range end probe (see cp_plan_page): limit=0 from the range's end the
 * other way, whose offset counts the rows after the range. */
static void add_range_end_probe(apr_pool_t *pool, const cp_plan *plan,
                                apr_array_header_t *queries)
{
    json_t *params = base_params(pool, plan->view, 0, !plan->view->descending);

    add_bound(params, "startkey", plan->view->descending ? plan->low_key : plan->high_key);
    add_query(queries, CP_QUERY_RANGE_END, 0, params);
}

/* The count of grouped rows (cp_plan.count_cap): the range's groups in
 * the view's order, at most count_cap + 1 of them. A reduce has no
 * keys-only read, and a reduce without grouping counts map rows, not
 * groups: the grouped rows themselves are counted. */
static void add_count(apr_pool_t *pool, const cp_plan *plan, apr_array_header_t *queries)
{
    if (plan->view->reduce && plan->count_cap > 0) {
        add_query(queries, CP_QUERY_COUNT, plan->count_cap + 1,
                  forward_params(pool, plan, NULL, plan->count_cap + 1));
    }
}

/* The last page (see cp_plan_page): the tail, led by the range start probe
 * for a position or when CouchDB may refuse the tail (a range both ends
 * bound, reversed). */
static apr_array_header_t *plan_last_page(apr_pool_t *pool, const cp_plan *plan)
{
    apr_array_header_t *queries = apr_array_make(pool, 2, sizeof(cp_query));
    int positioned = !plan->view->reduce, limit = tail_limit(plan);

    if ((positioned && cp_plan_is_partial(plan))
        || (!plan->view->is_all_docs && plan->low_key && plan->high_key)) {
        add_range_start_probe(pool, plan, queries);
    }
    add_query(queries, CP_QUERY_RANGE_END, limit, tail_params(pool, plan, limit));
    add_count(pool, plan, queries);
    mark_refusable(plan, queries);
    return queries;
}

apr_array_header_t *cp_plan_page(apr_pool_t *pool, const cp_plan *plan,
                                 const cp_token *start)
{
    apr_array_header_t *queries = apr_array_make(pool, 4, sizeof(cp_query));
    int ahead = cp_plan_pages_either_side(plan->links);
    /* rows for links never carry documents: a keys-only query of their own */
    int keys_apart = plan->view->include_docs && plan->links > 1;
    int limit = (keys_apart ? 1 : ahead) * plan->count + 1;
    /* grouped reduce rows have no offsets: no position to probe */
    int positioned = !plan->view->reduce;
    json_t *params;

    if (start && start->from == CP_FROM_LAST) {
        return plan_last_page(pool, plan);
    }
    /* several queries go together, and CouchDB may refuse one: a query it
     * never refuses (no endkey) leads them (see the header); with map rows
     * it is also the position probe of a key range or a partition */
    if (((start || keys_apart) && may_be_refused(plan, start))
        || (positioned && cp_plan_is_partial(plan))) {
        add_range_start_probe(pool, plan, queries);
    }
    if (positioned && cp_plan_is_partial(plan)) {
        add_range_end_probe(pool, plan, queries);
    }
    params = forward_params(pool, plan, start, limit);

    if (plan->view->include_docs) {
        set_param(params, "include_docs", json_true());
    }
    add_query(queries, CP_QUERY_FORWARD, limit, params);
    if (keys_apart) {
        limit = ahead * plan->count + 1;
        add_query(queries, CP_QUERY_AHEAD, limit,
                  forward_params(pool, plan, start, limit));
    }
    if (start) {
        int skip = backward_skip(plan);

        limit = backward_reach(plan, start) - skip;
        add_query(queries, CP_QUERY_BACKWARD, limit,
                  backward_params(pool, plan, start, limit, skip));
        if (!cp_view_has_docids(plan->view)) {
            add_query(queries, CP_QUERY_OWN_GROUP, 1, own_group_params(pool, plan, start));
        }
    }
    else {
        add_count(pool, plan, queries);
    }
    mark_refusable(plan, queries);
    return queries;
}

apr_array_header_t *cp_plan_jump(apr_pool_t *pool, const cp_plan *plan, apr_int64_t skip,
                                 int backward, int limit)
{
    apr_array_header_t *queries = apr_array_make(pool, 3, sizeof(cp_query));
    const cp_view *view = plan->view;
    json_t *params = base_params(pool, view, limit, backward ? !view->descending
                                                             : view->descending);
    /* grouped rows have no offsets to probe */
    int partial = !view->reduce && cp_plan_is_partial(plan);

    if (partial || (!view->is_all_docs && plan->low_key && plan->high_key)) {
        add_range_start_probe(pool, plan, queries);
    }
    if (partial) {
        add_range_end_probe(pool, plan, queries);
    }
    if (backward == view->descending) {
        add_bound(params, "startkey", plan->low_key);
        add_bound(params, "endkey", plan->high_key);
    }
    else {
        add_bound(params, "startkey", plan->high_key);
        add_bound(params, "endkey", plan->low_key);
    }
    if (skip > 0) {
        set_param(params, "skip", json_integer(skip));
    }
    if (limit > 0 || !view->reduce) {
        add_query(queries, CP_QUERY_FORWARD, limit, params);
    }
    add_count(pool, plan, queries);
    mark_refusable(plan, queries);
    return queries;
}

apr_array_header_t *cp_plan_keyset_page(apr_pool_t *pool, const cp_plan *plan,
                                        const cp_token *from, int backward, int limit)
{
    apr_array_header_t *queries = apr_array_make(pool, 3, sizeof(cp_query));
    const cp_view *view = plan->view;
    int descending = view->descending ? !backward : backward;
    json_t *params;

    /* the probes, never refused, lead a query CouchDB may refuse (none
     * with the place known: a refused first query is the request's 400) */
    if (!plan->place_known) {
        cp_plan_keyset_probes(pool, plan, queries);
    }
    params = base_params(pool, view, limit, descending);
    if (from) {
        add_start(params, view, from, descending);
    }
    else {
        add_bound(params, "startkey", descending ? plan->high_key : plan->low_key);
    }
    add_bound(params, "endkey", descending ? plan->low_key : plan->high_key);
    if (view->include_docs) {
        set_param(params, "include_docs", json_true());
    }
    add_query(queries, CP_QUERY_FORWARD, limit, params);
    mark_refusable(plan, queries);
    return queries;
}

void cp_plan_keyset_probes(apr_pool_t *pool, const cp_plan *plan, apr_array_header_t *queries)
{
    const cp_view *view = plan->view;
    int by_partition = view->is_partitioned || plan->partition;

    /* outside a partition, from a side the range leaves open no row lies
     * before the probe (offset 0): only a bounded side is probed */
    if (!cp_plan_is_partial(plan)) {
        return;
    }
    if (by_partition || (view->descending ? plan->high_key : plan->low_key)) {
        add_range_start_probe(pool, plan, queries);
    }
    if (by_partition || (view->descending ? plan->low_key : plan->high_key)) {
        add_range_end_probe(pool, plan, queries);
    }
    mark_refusable(plan, queries);
}

apr_array_header_t *cp_plan_locate(apr_pool_t *pool, const cp_plan *plan,
                                   const cp_token *start)
{
    apr_array_header_t *queries = apr_array_make(pool, 1, sizeof(cp_query));
    int descending = plan->view->descending, limit = cp_plan_max_reach(plan);
    json_t *params = base_params(pool, plan->view, limit, descending);

    add_bound(params, "startkey", descending ? start->high : start->low);
    add_bound(params, "endkey", descending ? start->low : start->high);
    add_query(queries, CP_QUERY_LOCATE, limit, params);
    mark_refusable(plan, queries);
    return queries;
}

/* A limit=0 probe from key, in the view's order or (reverse) the other
 * way, over map rows: its offset counts the rows before key that way. */
static void add_offset_probe(apr_pool_t *pool, const cp_plan *plan, cp_query_role role,
                             const json_t *key, int reverse, apr_array_header_t *queries)
{
    const cp_view *view = plan->view;
    json_t *params = base_params(pool, view, 0, view->descending ? !reverse : reverse);

    json_object_del(params, "group");
    json_object_del(params, "group_level");
    if (view->reduce) {
        set_param(params, "reduce", json_false());
    }
    add_bound(params, "startkey", key);
    add_query(queries, role, 0, params);
}

apr_array_header_t *cp_plan_clamp_probes(apr_pool_t *pool, const cp_plan *plan,
                                         const cp_token *start)
{
    apr_array_header_t *queries = apr_array_make(pool, 4, sizeof(cp_query));
    int descending = plan->view->descending;
    const json_t *range_first = descending ? plan->high_key : plan->low_key;
    const json_t *range_last = descending ? plan->low_key : plan->high_key;

    if (plan->view->is_all_docs || !(range_first || range_last)) {
        return NULL;
    }
    if (range_first) {
        add_offset_probe(pool, plan, CP_QUERY_TOKEN_FIRST,
                         descending ? start->high : start->low, 0, queries);
        add_offset_probe(pool, plan, CP_QUERY_RANGE_START, range_first, 0, queries);
    }
    if (range_last) {
        add_offset_probe(pool, plan, CP_QUERY_TOKEN_LAST,
                         descending ? start->low : start->high, 1, queries);
        add_offset_probe(pool, plan, CP_QUERY_RANGE_END, range_last, 1, queries);
    }
    return queries;
}

/* Whether the probe from the token's key saw at least as many rows before
 * it as the probe from the range's bound: the token's key is then the
 * later, or starts the same rows (none lies between the two). */
static int token_key_later(const apr_array_header_t *probes, cp_query_role token_role,
                           cp_query_role range_role)
{
    const cp_query *token = cp_plan_query(probes, token_role);
    const cp_query *range = cp_plan_query(probes, range_role);

    return token && range && token->answer && range->answer && token->answer->offset >= 0
           && range->answer->offset >= 0 && token->answer->offset >= range->answer->offset;
}

/* Byte order of two JSON strings, as CouchDB's raw collation of ids. */
static int compare_ids(const json_t *a, const json_t *b);

const char *cp_plan_clamp(const cp_plan *plan, const apr_array_header_t *probes,
                          const cp_token *start, cp_token *clamped)
{
    int descending = plan->view->descending;
    const json_t *first = descending ? start->high : start->low;
    const json_t *last = descending ? start->low : start->high;
    const json_t *range_first = descending ? plan->high_key : plan->low_key;
    const json_t *range_last = descending ? plan->low_key : plan->high_key;

    *clamped = *start;
    if (plan->view->is_all_docs) {
        if (!cp_json_is_string(start->low) || !cp_json_is_string(start->high)) {
            return "the start token's keys are not document ids";
        }
        /* _all_docs reads ascending or descending by bytes */
        if (range_first && (descending ? compare_ids(range_first, first) < 0
                                       : compare_ids(range_first, first) > 0)) {
            first = range_first;
        }
        if (range_last && (descending ? compare_ids(range_last, last) > 0
                                      : compare_ids(range_last, last) < 0)) {
            last = range_last;
        }
    }
    else {
        if (range_first && !token_key_later(probes, CP_QUERY_TOKEN_FIRST,
                                            CP_QUERY_RANGE_START)) {
            first = range_first;
        }
        if (range_last && !token_key_later(probes, CP_QUERY_TOKEN_LAST, CP_QUERY_RANGE_END)) {
            last = range_last;
        }
    }
    clamped->low = descending ? last : first;
    clamped->high = descending ? first : last;
    return NULL;
}

cp_query *cp_plan_query(const apr_array_header_t *queries, cp_query_role role)
{
    int i;

    for (i = 0; i < queries->nelts; i++) {
        if (APR_ARRAY_IDX(queries, i, cp_query).role == role) {
            return &APR_ARRAY_IDX(queries, i, cp_query);
        }
    }
    return NULL;
}

apr_array_header_t *cp_plan_waiting(apr_pool_t *pool, const apr_array_header_t *queries)
{
    apr_array_header_t *waiting = apr_array_make(pool, queries->nelts, sizeof(cp_query *));
    int i;

    for (i = 0; i < queries->nelts; i++) {
        const cp_query *query = &APR_ARRAY_IDX(queries, i, cp_query);

        if (!query->answer) {
            APR_ARRAY_PUSH(waiting, const cp_query *) = query;
        }
    }
    return waiting;
}

int cp_plan_take_answers(apr_array_header_t *queries, const cp_plan_answers *answers)
{
    int i, waiting = 0;

    for (i = 0; i < queries->nelts; i++) {
        cp_query *query = &APR_ARRAY_IDX(queries, i, cp_query);

        if (!query->answer) {
            query->answer = answers->of[query->role];
            waiting += query->answer == NULL;
        }
    }
    return waiting;
}

apr_array_header_t *cp_plan_ask_alone(apr_pool_t *pool, const apr_array_header_t *queries,
                                      const cp_plan_answers *answers)
{
    apr_array_header_t *waiting;

    if (!answers->cut_off) {
        return NULL;
    }
    waiting = cp_plan_waiting(pool, queries);
    return waiting->nelts > 0 ? waiting : NULL;
}

const char *cp_plan_batch_body(apr_pool_t *pool, const apr_array_header_t *waiting)
{
    json_t *list = json_array();
    int i;

    for (i = 0; i < waiting->nelts; i++) {
        json_array_append(list, APR_ARRAY_IDX(waiting, i, const cp_query *)->params);
    }
    return cp_json_text(pool, cp_json_pool_own(pool, json_pack("{s:o}", "queries", list)));
}

int cp_plan_max_reach(const cp_plan *plan)
{
    /* what the pages either side and the page need, and room for an entry
     * of max_emits rows at either end of the rows read (the token's own and
     * the far one), with the slack; see the header for each query's share */
    return (1 + cp_plan_pages_either_side(plan->links)) * plan->count
           + 2 * plan->view->max_emits + CP_PLAN_BACKWARD_SLACK;
}

int cp_plan_widen(apr_pool_t *pool, const cp_plan *plan, const cp_token *start,
                  cp_query *query)
{
    int limit, reach = cp_plan_max_reach(plan);

    if (!query || query->widened >= CP_PLAN_MAX_WIDENINGS
        || query->limit + cp_plan_skip(query) >= reach) {
        return 0;
    }
    /* as the widening before it grew: each time well beyond the entry, and
     * every row read, none passed over; never beyond what entries of
     * max_emits rows need, so that a token cannot make it read more */
    limit = (query->limit + cp_plan_skip(query)) * 8 + plan->count;
    limit = limit < reach ? limit : reach;
    set_query(query, query->role, limit,
              query->role == CP_QUERY_RANGE_END ? tail_params(pool, plan, limit)
                                                : backward_params(pool, plan, start, limit, 0),
              query->widened + 1);
    return 1;
}

const char *cp_plan_overfull(apr_pool_t *pool, const apr_array_header_t *queries)
{
    const char *reason = NULL;
    int i;

    for (i = 0; i < queries->nelts && !reason; i++) {
        const cp_query *query = &APR_ARRAY_IDX(queries, i, cp_query);

        reason = cp_answer_overfull(pool, query->answer, query->limit);
    }
    return reason;
}

int cp_plan_skip(const cp_query *query)
{
    return (int)json_integer_value(json_object_get(query->params, "skip"));
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
    /* cp_plan_init has read the bounds, strings over _all_docs */
    const json_t *bounds[2] = { plan->low_key, plan->high_key };
    int side;

    /* the forward query skips index rows: no more than one document emits */
    if (start->index >= plan->view->max_emits) {
        return apr_psprintf(pool, "the start token's row %d is beyond the %d rows one "
                            "document emits under one key here", start->index,
                            plan->view->max_emits);
    }
    if (!plan->view->is_all_docs || !(plan->low_key || plan->high_key)
        || start->from == CP_FROM_LAST) {
        return NULL;
    }
    if (!cp_json_is_string(start->key)) {
        return "the start token's key is not a document id";
    }
    for (side = 0; side < 2; side++) {
        int cmp;

        if (!bounds[side]) {
            continue;
        }
        cmp = compare_ids(start->key, bounds[side]);
        if (side == 0 ? cmp < 0 : cmp > 0) {
            return "the start token is outside this location's key range";
        }
    }
    return NULL;
}

void cp_plan_ask_seq(const cp_plan *plan, const apr_array_header_t *waiting)
{
    int i;

    for (i = 0; plan->update_seq && i < waiting->nelts; i++) {
        set_param(APR_ARRAY_IDX(waiting, i, const cp_query *)->params, "update_seq",
                  json_true());
    }
}

const char *cp_plan_seq(apr_pool_t *pool, const apr_array_header_t *queries)
{
    const char *first = NULL, *seq = NULL;
    int i;

    for (i = 0; i < queries->nelts; i++) {
        const cp_answer *answer = APR_ARRAY_IDX(queries, i, cp_query).answer;

        if (!answer || !answer->update_seq) {
            return NULL;
        }
        if (!first) {
            first = answer->update_seq;
        }
        else if (strcmp(first, answer->update_seq)) {
            /* spelled otherwise: the same state only if their shards,
             * put in one order, agree (each spelling unpacked once) */
            seq = seq ? seq : cp_seq_canonical(pool, first);
            if (strcmp(seq, cp_seq_canonical(pool, answer->update_seq))) {
                return NULL;
            }
        }
    }
    return seq || !first ? seq : cp_seq_canonical(pool, first);
}

apr_array_header_t *cp_plan_seq_probe(apr_pool_t *pool, const cp_plan *plan)
{
    apr_array_header_t *queries = apr_array_make(pool, 1, sizeof(cp_query));

    add_range_start_probe(pool, plan, queries);
    set_param(APR_ARRAY_IDX(queries, 0, cp_query).params, "update_seq", json_true());
    return queries;
}
