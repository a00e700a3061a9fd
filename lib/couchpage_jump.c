/* SPDX-License-Identifier: Apache-2.0 */
/*
 * couchpage_jump.c: ?page=N found as the token a walk would follow to page
 * N (see couchpage_jump.h; docs/algorithm.md, "Jumping to a page").
 * httpd-free.
 */
#include "couchpage_jump.h"

#include <apr_strings.h>
#include <string.h>

#include "couchpage_count.h"
#include "couchpage_find.h"
#include "couchpage_seal.h"
#include "couchpage_token.h"

#define FMT APR_INT64_T_FMT

const char *cp_jump_route(apr_pool_t *pool, apr_int64_t page, int count, apr_int64_t total,
                          int reach, cp_jump_from *from)
{
    apr_int64_t last = total <= 0 ? 1 : (total + count - 1) / count;

    if (page == 1) {
        *from = CP_JUMP_FIRST;
        return NULL;
    }
    if (page > last) {
        return apr_psprintf(pool, "page %" FMT " is past the last page, %" FMT, page, last);
    }
    if (page == last) {
        *from = CP_JUMP_LAST;
        return NULL;
    }
    if (page <= reach) {
        *from = CP_JUMP_FROM_START;
        return NULL;
    }
    if (last - page < reach) {
        *from = CP_JUMP_FROM_END;
        return NULL;
    }
    if (reach == 0) {
        return apr_psprintf(pool, "page %" FMT " cannot be asked for by number here: only the "
                            "first page and the last, %" FMT ", can; follow the page links "
                            "from them", page, last);
    }
    return apr_psprintf(pool, "page %" FMT " is too far from either end to be asked for by "
                        "number: pages 1 to %d and %" FMT " to %" FMT " can be; follow the "
                        "page links from the nearest", page, reach, last - reach + 1, last);
}

void cp_jump_window(apr_int64_t target, apr_int64_t total, int backward, int max_emits,
                    apr_int64_t *skip, int *limit)
{
    /* the place of the row in the order read */
    apr_int64_t place = backward ? total - 1 - target : target;
    apr_int64_t low = place > max_emits ? place - max_emits : 0;

    *skip = low;
    *limit = (int)(place + max_emits + 1 - low);
}

/* Whether two rows of an answer are of one entry: one document's rows
 * under one key, which CouchDB keeps together. */
static int same_entry(const cp_row *a, const cp_row *b)
{
    return a->id && b->id && strcmp(a->id, b->id) == 0 && a->key_text.len == b->key_text.len
           && memcmp(a->key_text.text, b->key_text.text, a->key_text.len) == 0;
}

const cp_row *cp_jump_row(const cp_answer *answer, int backward, apr_int64_t skip,
                          apr_int64_t total, apr_int64_t target, int *index)
{
    apr_size_t first = 0, end;

    while (first < answer->row_count) {
        apr_int64_t place;

        for (end = first + 1; end < answer->row_count
             && same_entry(cp_answer_row(answer, first), cp_answer_row(answer, end)); end++) {
        }
        /* the entry's first row's place in the view's order: read
         * backward, the entries come the other way, each one's rows not */
        place = backward ? total - (skip + (apr_int64_t)end) : skip + (apr_int64_t)first;
        if (target >= place && target < place + (apr_int64_t)(end - first)) {
            *index = (int)(target - place);
            return cp_answer_row(answer, first + (apr_size_t)(target - place));
        }
        first = end;
    }
    return NULL;
}

apr_int64_t cp_jump_total(const apr_array_header_t *queries, int partial, int backward,
                          apr_int64_t skip)
{
    const cp_query *read = cp_plan_query(queries, CP_QUERY_FORWARD);
    const cp_answer *answer = read ? read->answer : NULL, *start, *end;
    apr_int64_t total, before = 0;

    if (!answer || answer->total_rows < 0) {
        return -1;
    }
    total = answer->total_rows;
    if (partial) {
        start = cp_plan_query(queries, CP_QUERY_RANGE_START)->answer;
        end = cp_plan_query(queries, CP_QUERY_RANGE_END)->answer;
        if (start->offset < 0 || end->offset < 0) {
            return -1;
        }
        total -= start->offset + end->offset;
        before = backward ? end->offset : start->offset;
    }
    /* rows read: they lie skip rows in, the offset says so, and the
     * location holds them */
    if (total < 0 || (answer->row_count > 0
                      && (answer->offset != before + skip
                          || skip + (apr_int64_t)answer->row_count > total))) {
        return -1;
    }
    return total;
}

static cp_fault *not_numbered(apr_pool_t *pool, const char *why)
{
    return cp_fault_bad_request(pool, apr_pstrcat(pool, "page numbers cannot be asked for "
                                                  "here: ", why, "; follow the page links",
                                                  NULL));
}

/* The start token sealed where the location's tokens are. */
static const cp_fault *seal(apr_pool_t *pool, const cp_source *src, const char *binding,
                            const char **start)
{
    const char *reason;

    if (src->token_key) {
        const char **tokens[] = { start };

        if ((reason = cp_seal_tokens(pool, src->token_key, binding, tokens, 1))) {
            return cp_fault_seal(pool, src->uri, reason);
        }
    }
    return NULL;
}

const cp_fault *cp_jump_unnumbered(apr_pool_t *pool)
{
    return not_numbered(pool, "the backend does not count this location's rows");
}

/* The token of the page that starts at row (a view's: at it; a _find
 * location's: after the row before, which row is). */
static const char *walk_token(apr_pool_t *pool, const cp_source *src, const cp_source *index,
                            const cp_row *row, int entry_index)
{
    cp_token_room room;

    if (index) {
        apr_array_header_t *rows = apr_array_make(pool, 1, sizeof(const cp_row *));

        APR_ARRAY_PUSH(rows, const cp_row *) = row;
        cp_find_key_index_rows(pool, index->find->sort, index->index_fields, rows);
        row = APR_ARRAY_IDX(rows, 0, const cp_row *);
        return cp_token_encode_beside(pool, CP_FROM_AFTER, cp_row_key(row), row->id);
    }
    room = cp_source_token_room(src);
    return cp_token_for_row(pool, &room, cp_row_key(row), row->id, entry_index);
}

/* Why page of a location whose count stopped at cap (at least cap rows)
 * is not reached: its end is not known, and only the pages within the
 * reach of the first are. */
static const char *beyond_count(apr_pool_t *pool, apr_int64_t page, int cap, int reach)
{
    const char *why = apr_psprintf(pool, "this location's rows are counted up to %d only "
                                   "(there are more: CouchPageCount), so its last page is "
                                   "not known", cap);

    if (reach <= 1) {
        return apr_psprintf(pool, "page %" FMT " cannot be asked for by number here: %s; only "
                            "the first page can; follow the page links from it", page, why);
    }
    return apr_psprintf(pool, "page %" FMT " is too far from the first page to be asked for "
                        "by number: %s; pages 1 to %d can be; follow the page links from the "
                        "nearest", page, why, reach);
}

/* Page N refused where the read of its row (and the one before it) found
 * rows fewer than two: past the last page, which one row names. */
static const cp_fault *past_the_last(apr_pool_t *pool, apr_int64_t page, int rows)
{
    return cp_fault_bad_request(pool, rows == 1
                                ? apr_psprintf(pool, "page %" FMT " is past the last page, %"
                                               FMT, page, page - 1)
                                : apr_psprintf(pool, "page %" FMT " is past the last page",
                                               page));
}

/* The walk's token to page N of a _find location by _find, counted
 * (couchpage_count), unsealed, in *start: the count's _find finds the row
 * before page N. Where the count stopped at its cap, only the pages whose
 * rows it read are reached: past them, a _find that skips matches would
 * make CouchDB examine documents without bound where few match (a
 * residual condition), which the count itself never does. */
static const cp_fault *resolve_counted(apr_pool_t *pool, const cp_source *src,
                                       const cp_request *req, const cp_jump_backend *backend,
                                       const char **start)
{
    const char *applied, *reason;
    int cap = cp_count_cap(&src->count, cp_count_prefer(pool, req->prefer), &applied);
    apr_int64_t page = req->args->page, target = (page - 1) * req->count - 1;
    apr_int64_t counted, reachable;
    const cp_answer *answer;
    const cp_fault *fault;
    cp_count_walk walk;
    cp_jump_from from;

    if (cap <= 0) {
        return not_numbered(pool, "this _find location's rows are not counted (its selector "
                            "is not a key range of an index CouchDB counts, CouchPageIndex, "
                            "and CouchPageCount or the request's Prefer says none)");
    }
    if (page == 1) {
        return NULL;
    }
    if ((fault = backend->count(backend->baton, cap, &answer, &walk))) {
        return fault;
    }
    if (!walk.known) {
        return not_numbered(pool, "this _find location's rows are not counted (no index's "
                            "view bounds a count of its selector, and CouchPageCount does "
                            "not ask for one)");
    }
    counted = answer ? (apr_int64_t)cp_answer_rows(answer) : 0;
    /* the pages whose row before and first row the count read */
    reachable = counted > 0 ? (counted - 1) / req->count + 1 : 1;
    reachable = reachable < src->jump_reach ? reachable : src->jump_reach;
    if (walk.at_least ? page > reachable && (reason = beyond_count(pool, page, cap,
                                                                  (int)reachable))
        : (reason = cp_jump_route(pool, page, req->count, walk.total, src->jump_reach,
                                  &from)) != NULL) {
        return cp_fault_bad_request(pool, reason);
    }
    /* an exact count holds every row: page N past it is refused above */
    if (target + 1 >= counted) {
        return past_the_last(pool, page, 0);
    }
    if (!(*start = cp_count_token_after(pool, cp_answer_row(answer, target), target,
                                        &walk))) {
        return cp_fault_bad_request(pool, "the row before the page names no id");
    }
    return NULL;
}

/* The walk's token to page N of grouped reduce rows, counted as their
 * walk is (couchpage_count), unsealed, in *start (NULL: the first page):
 * one request, the first page's count, whose rows are the groups in the
 * view's order, keys and all, so that it holds page N's first group
 * wherever the count is exact; past an at-least count's cap, a read with
 * skip from the start, asked beside it, finds the group before page N and
 * page N's first (only pages within the reach of the first are reached
 * there, so the skip is bounded by the reach). */
static const cp_fault *resolve_grouped(apr_pool_t *pool, const cp_source *src,
                                       const cp_request *req, const cp_jump_backend *backend,
                                       const char **start)
{
    const char *applied, *reason;
    int cap = cp_count_cap(&src->count, cp_count_prefer(pool, req->prefer), &applied);
    apr_int64_t page = req->args->page, target = (page - 1) * req->count, skip;
    const cp_query *count, *read;
    const cp_answer *answer;
    const cp_row *row;
    apr_array_header_t *queries;
    const cp_fault *fault;
    cp_count_walk walk;
    cp_jump_from from;
    cp_token_room room;
    cp_plan plan;
    int beyond;

    if (cap <= 0) {
        return not_numbered(pool, "this location's grouped reduce rows are not counted "
                            "(CouchPageCount or the request's Prefer says none)");
    }
    /* a range or partition that cannot be asked is the page's fault,
     * which its own plan reports: asked as the first page */
    if (page == 1 || cp_plan_init(pool, &plan, src->view, src->partition, src->low, src->high,
                                  req->count, src->links)) {
        return NULL;
    }
    plan.count_cap = cap;
    /* page N's first group lies past what the count can read: an
     * at-least count's, reached only within the reach of the first */
    beyond = target > cap;
    skip = beyond ? target - 1 : 0;
    queries = cp_plan_jump(pool, &plan, skip, 0, beyond && page <= src->jump_reach ? 2 : 0);
    if ((fault = backend->ask(backend->baton, src, &plan, queries))) {
        return fault;
    }
    count = cp_plan_query(queries, CP_QUERY_COUNT);
    cp_count_from_rows((apr_int64_t)cp_answer_rows(count->answer), cap, &walk);
    if (walk.at_least ? page > src->jump_reach && (reason = beyond_count(pool, page, cap,
                                                                        src->jump_reach))
        : (reason = cp_jump_route(pool, page, req->count, walk.total, src->jump_reach,
                                  &from)) != NULL) {
        return cp_fault_bad_request(pool, reason);
    }
    if (!walk.at_least && from == CP_JUMP_LAST) {
        *start = CP_TOKEN_LAST;
        return NULL;
    }
    if (!beyond) {
        /* an exact count holds every group; an at-least one the first
         * cap + 1 */
        row = cp_answer_row(count->answer, (apr_size_t)target);
    }
    else {
        /* the group before page N and page N's first */
        read = cp_plan_query(queries, CP_QUERY_FORWARD);
        answer = read->answer;
        if (cp_answer_rows(answer) < 2) {
            return past_the_last(pool, page, cp_answer_rows(answer));
        }
        row = cp_answer_row(answer, 1);
    }
    room = cp_source_token_room(src);
    if (!(*start = cp_count_group_token(pool, cp_row_key(row), target, &walk, &room))) {
        return cp_fault_seal(pool, src->uri, "the digest of a bounded token");
    }
    return NULL;
}

const cp_fault *cp_jump_resolve(apr_pool_t *pool, const cp_source *src, const cp_source *index,
                                const cp_request *req, const char *binding,
                                const cp_jump_backend *backend, const char **start,
                                const char **text)
{
    const cp_source *rows_src = index ? index : src;
    const cp_view *view = rows_src->view;
    apr_int64_t page = req->args->page, target, skip = 0, total;
    apr_array_header_t *queries;
    const cp_fault *fault;
    const cp_row *row;
    const char *reason;
    cp_jump_from from;
    int backward = 0, limit = 0, entry_index = 0, partial;
    cp_plan plan;

    *start = *text = NULL;
    if (src->find && !index) {
        if ((fault = resolve_counted(pool, src, req, backend, start)) || !*start) {
            return fault;
        }
        *text = *start;
        return seal(pool, src, binding, start);
    }
    if (view->reduce) {
        if ((fault = resolve_grouped(pool, src, req, backend, start)) || !*start) {
            return fault;
        }
        *text = *start;
        return seal(pool, src, binding, start);
    }
    if (page == 1) {
        return NULL;
    }
    /* a range or partition that cannot be asked is the page's fault too,
     * which the page's own plan reports: asked as the first page */
    if (cp_plan_init(pool, &plan, view, rows_src->partition, rows_src->low, rows_src->high,
                     req->count, rows_src->links)) {
        return NULL;
    }
    partial = cp_plan_is_partial(&plan);
    /* page N starts at row (N - 1) × count (from 0); a _find location's
     * token names the row before it */
    target = (page - 1) * req->count - (index ? 1 : 0);
    /* within the reach of the start, the read that finds the row counts
     * the rows too: one request */
    if (page <= src->jump_reach) {
        cp_jump_window(target, -1, 0, view->max_emits, &skip, &limit);
    }
    queries = cp_plan_jump(pool, &plan, skip, 0, limit);
    if ((fault = backend->ask(backend->baton, rows_src, &plan, queries))) {
        return fault;
    }
    if ((total = cp_jump_total(queries, partial, 0, skip)) < 0) {
        return not_numbered(pool, "the backend's counts of this location's rows do not agree "
                            "with its rows");
    }
    if ((reason = cp_jump_route(pool, page, req->count, total, src->jump_reach, &from))) {
        return cp_fault_bad_request(pool, reason);
    }
    if (from == CP_JUMP_FROM_END) {
        backward = 1;
        cp_jump_window(target, total, 1, view->max_emits, &skip, &limit);
        queries = cp_plan_jump(pool, &plan, skip, 1, limit);
        if ((fault = backend->ask(backend->baton, rows_src, &plan, queries))) {
            return fault;
        }
        if ((total = cp_jump_total(queries, partial, 1, skip)) < 0) {
            return not_numbered(pool, "the backend's counts of this location's rows do not "
                                "agree with its rows");
        }
    }
    row = from == CP_JUMP_LAST ? NULL
        : cp_jump_row(cp_plan_query(queries, CP_QUERY_FORWARD)->answer, backward, skip, total,
                      target, &entry_index);
    /* the Last page, or rows gone meanwhile: the Last page holds the
     * location's end */
    *start = row ? walk_token(pool, src, index, row, entry_index) : CP_TOKEN_LAST;
    if (!(*text = *start)) {
        return cp_fault_seal(pool, src->uri, "the digest of a bounded token");
    }
    return seal(pool, rows_src, binding, start);
}
