/* SPDX-License-Identifier: Apache-2.0 */
/*
 * couchpage_keyset.c: a page read by keyset, from its token's row, and
 * the queries that read it. Part of the httpd-free core.
 */
#include "couchpage_keyset.h"

#include <apr_escape.h>
#include <apr_strings.h>
#include <string.h>

cp_token_rows cp_keyset_token_rows(const cp_find_sort *sort, int view_tokens)
{
    cp_token_rows rows = { 1, 1, sort->count, view_tokens };

    return rows;
}

const char *cp_keyset_find_body(apr_pool_t *pool, const cp_find_spec *spec,
                                const cp_token *token, int limit)
{
    if (token->from == CP_FROM_ROW) {
        return NULL;
    }
    return cp_find_body(pool, spec, token->key, token->docid, cp_keyset_reads_backward(token),
                        limit);
}

const char *cp_keyset_find_part_body(apr_pool_t *pool, const cp_find_spec *spec,
                                     const cp_token *token, int limit, cp_find_part part)
{
    if ((token->from != CP_FROM_AFTER && token->from != CP_FROM_BEFORE) || !token->key
        || spec->sort->count == 0) {
        return NULL;
    }
    return cp_find_body_part(pool, spec, token->key, token->docid,
                             cp_keyset_reads_backward(token), limit, part);
}

const char *cp_keyset_find_next_query(apr_pool_t *pool, const cp_find_spec *spec,
                                      const cp_token *token,
                                      const apr_array_header_t *fields, int level, int *open)
{
    const cp_find_sort *sort = spec->sort;
    int up = sort->descending == (cp_keyset_reads_backward(token) != 0);
    const char *start, *end;

    /* a stale _find reads the view's index only where it names it */
    if ((token->from != CP_FROM_AFTER && token->from != CP_FROM_BEFORE) || !token->key
        || !fields || (spec->update == CP_MANGO_FALSE && !spec->index_ddoc)
        || (*open = cp_mango_index_past_value(pool, spec->selector, sort->fields, sort->count,
                                              fields, token->key, up, level, &start,
                                              &end)) < 0) {
        return NULL;
    }
    /* as fresh as the _find that follows it */
    return apr_pstrcat(pool, "?startkey=", apr_pescape_urlencoded(pool, start),
                       "&endkey=", apr_pescape_urlencoded(pool, end),
                       up ? "" : "&descending=true", "&limit=1&reduce=false",
                       spec->update == CP_MANGO_FALSE ? "&update=false" : "",
                       spec->stable == CP_MANGO_TRUE ? "&stable=true" : "", NULL);
}

const char *cp_keyset_find_from_answer(apr_pool_t *pool, const cp_find_spec *spec,
                                       const cp_token *token, int open, int level,
                                       const char *text, apr_size_t len, int limit, int *none)
{
    const json_t *answer = cp_json_load(pool, text, len, NULL), *rows, *key, *next;
    json_t *from;

    *none = 0;
    rows = json_is_object(answer) ? json_object_get(answer, "rows") : NULL;
    if (!json_is_array(rows)) {
        return NULL;
    }
    if (json_array_size(rows) == 0) {
        *none = 1;
        return NULL;
    }
    /* [..., w, the open fields after it (level of them), id]: w, the
     * level's field's next value */
    key = json_object_get(json_array_get(rows, 0), "key");
    if (!json_is_array(key) || (int)json_array_size(key) < 2 + level
        || !(next = json_array_get(key, json_array_size(key) - 2 - (size_t)level))
        || json_equal((json_t *)next, json_array_get(token->key, open))) {
        return NULL;
    }
    from = cp_json_pool_own(pool, json_copy((json_t *)token->key));
    json_array_set(from, open, (json_t *)next);
    return cp_find_from_body(pool, spec, from, open, json_array_get(token->key, open),
                             cp_keyset_reads_backward(token), limit);
}

const char *cp_keyset_find_rest_body(apr_pool_t *pool, const cp_transport *tr,
                                     const char *view_url, const apr_array_header_t *fields,
                                     const cp_find_spec *spec, const cp_token *token,
                                     int limit, int level, int *top)
{
    const char *query, *text, *body;
    cp_transport_failure failure;
    apr_size_t len;
    int open, none;

    *top = level + 1 >= cp_mango_open_sort_fields(spec->selector, spec->sort->fields,
                                                  spec->sort->count);
    if (!view_url || !(query = cp_keyset_find_next_query(pool, spec, token, fields, level,
                                                         &open))) {
        return NULL;
    }
    if (!tr->get(tr->baton, apr_pstrcat(pool, view_url, query, NULL), &text, &len, &failure)) {
        if (tr->debug) {
            tr->log(tr->baton, CP_LOG_DEBUG, "CP0374", apr_psprintf(pool, "the next sort "
                    "value past a group of ties could not be read (%s): the rest of the page "
                    "is asked from the boundary row's", failure.reason));
        }
        return NULL;
    }
    body = cp_keyset_find_from_answer(pool, spec, token, open, level, text, len, limit, &none);
    return none ? "" : body;
}

/* Where a row with id is among rows, or -1. */
static int row_with_id(const apr_array_header_t *rows, const char *id)
{
    int i;

    for (i = 0; id && i < rows->nelts; i++) {
        const cp_row *row = APR_ARRAY_IDX(rows, i, const cp_row *);

        if (row->id && !strcmp(row->id, id)) {
            return i;
        }
    }
    return -1;
}

const char *cp_keyset_find_near_body(apr_pool_t *pool, const cp_find_spec *spec,
                                     const cp_token *token, const apr_array_header_t *fields,
                                     int limit, int *top)
{
    const char *start, *end;
    int open;

    /* (the last open field's place: level 0's) */
    if (!token->ties_near || !fields
        || (token->from != CP_FROM_AFTER && token->from != CP_FROM_BEFORE)
        || (open = cp_mango_index_past_value(pool, spec->selector, spec->sort->fields,
                                             spec->sort->count, fields, token->key, 1, 0,
                                             &start, &end)) < 0) {
        return NULL;
    }
    *top = cp_mango_open_sort_fields(spec->selector, spec->sort->fields, spec->sort->count) == 1;
    return cp_find_body_within(pool, spec, token->key, token->docid,
                               cp_keyset_reads_backward(token), limit, open);
}

void cp_keyset_near_ties(apr_pool_t *pool, const cp_token *token,
                         const apr_array_header_t *rows, const cp_token_room *room,
                         cp_page *page)
{
    const apr_array_header_t *issued = cp_page_issued_tokens(pool, page);
    const char ***links = (const char ***)issued->elts;
    int backward = cp_keyset_reads_backward(token), k, i, j, after;
    json_t *text;
    const json_t *pair, *key;
    const char *id, *near;

    for (k = 0; k < issued->nelts; k++) {
        if (!*links[k] || !(text = cp_json_load(pool, *links[k], strlen(*links[k]), NULL))
            || !json_is_object(text)) {
            continue;
        }
        after = (pair = json_object_get(text, "a")) != NULL;
        id = json_string_value(json_array_get(after ? pair : json_object_get(text, "b"), 1));
        if ((i = row_with_id(rows, id)) < 0) {
            continue;
        }
        key = cp_row_key(APR_ARRAY_IDX(rows, i, const cp_row *));
        /* the side its page reads first: before the row (in the location's
         * order) after it, after the row before it; rows were read
         * backward or not. (Values CouchDB collates equal but writes
         * otherwise, 1 and 1.0, count as not tied here: the module never
         * collates; such a page reads its group again, as a forged "e".) */
        for (j = 0; j < rows->nelts; j++) {
            if (j != i && ((backward ? j > i : j < i) == after)
                && !json_equal((json_t *)key,
                               (json_t *)cp_row_key(APR_ARRAY_IDX(rows, j, const cp_row *)))) {
                json_object_set_new(text, "e", json_integer(1));
                /* a link that would no longer fit keeps its token as it was */
                if ((near = cp_json_text(pool, text)) && cp_token_fits(room, near)) {
                    *links[k] = near;
                }
                break;
            }
        }
    }
}

int cp_keyset_find_join(apr_array_header_t *rows, const apr_array_header_t *past, int asked,
                        int limit)
{
    int twice = 0, kept, i, at;

    for (i = 0; i < past->nelts; i++) {
        twice += row_with_id(rows, APR_ARRAY_IDX(past, i, const cp_row *)->id) >= 0;
    }
    if (twice && past->nelts >= asked && rows->nelts + past->nelts - twice < limit) {
        return 1;
    }
    /* a row in both moved past the ties meanwhile: kept where it is now */
    for (i = 0; i < past->nelts; i++) {
        if ((at = row_with_id(rows, APR_ARRAY_IDX(past, i, const cp_row *)->id)) >= 0) {
            memmove(&APR_ARRAY_IDX(rows, at, const cp_row *),
                    &APR_ARRAY_IDX(rows, at + 1, const cp_row *),
                    (size_t)(rows->nelts - at - 1) * sizeof(const cp_row *));
            rows->nelts--;
        }
    }
    for (i = 0, kept = rows->nelts; i < past->nelts && kept < limit; i++, kept++) {
        APR_ARRAY_PUSH(rows, const cp_row *) = APR_ARRAY_IDX(past, i, const cp_row *);
    }
    return 0;
}

int cp_keyset_behind_limit(const cp_token *token, int count, int links)
{
    if (links == 0 || !token->key) {
        return 0;
    }
    /* a page read from a row: the row itself comes first the other way */
    return links * count + 1 + (token->from == CP_FROM_ROW);
}

apr_array_header_t *cp_keyset_index_queries(apr_pool_t *pool, const cp_plan *plan,
                                            const apr_array_header_t *index_fields,
                                            const json_t *fixed, const cp_token *token,
                                            int limit, int behind)
{
    int backward = cp_keyset_reads_backward(token);
    apr_array_header_t *queries, *other;
    cp_query *query;
    cp_token from;

    if (!token->key) {
        return cp_plan_keyset_page(pool, plan, NULL, backward, limit);
    }
    memset(&from, 0, sizeof(from));
    from.from = CP_FROM_ROW;
    from.docid = token->docid;
    if (token->from == CP_FROM_ROW) {
        /* a view's token holds the row's view key itself */
        from.key = token->key;
    }
    else {
        from.key = cp_keyset_index_key(pool, index_fields, fixed, token->key);
        limit++;   /* the token's own row, when it is still there */
    }
    if (!from.key) {
        return NULL;
    }
    from.key_json = cp_json_text(pool, from.key);
    queries = cp_plan_keyset_page(pool, plan, &from, backward, limit);
    if (behind > 0) {
        /* the same read the other way, from the same row; its probes are
         * the first read's */
        other = cp_plan_keyset_page(pool, plan, &from, !backward, behind);
        query = apr_array_push(queries);
        *query = *cp_plan_query(other, CP_QUERY_FORWARD);
        query->role = CP_QUERY_BACKWARD;
    }
    return queries;
}

int cp_keyset_reads_backward(const cp_token *token)
{
    return token->from == CP_FROM_BEFORE || token->from == CP_FROM_LAST;
}

int cp_keyset_limit(int count, int links)
{
    return (1 + links) * count + 1;
}

/* The token for a page next to a row of the answer. */
static const char *token_at(apr_pool_t *pool, cp_token_from from, const apr_array_header_t *rows,
                            int i)
{
    const cp_row *row = APR_ARRAY_IDX(rows, i, const cp_row *);

    return cp_token_encode_beside(pool, from, cp_row_key(row), row->id);
}

/* Where the page's first row lies in the location, by CouchDB's count of
 * the rows read (n of them, in the order read), when it agrees with them,
 * else -1: a read that came short of a page ended the location that way;
 * a first page starts it, and the Last page ends it and holds the rows
 * that the pages before it leave (*shown), so that it is aligned with the
 * first page's. */
static apr_int64_t counted_place(const cp_token *token, const cp_keyset_count *counted,
                                 int n, int count, int *shown)
{
    apr_int64_t total = counted->total, before = counted->before, last_rows;

    if (total < 0 || before < 0 || before + n > total || (n <= count && before + n != total)) {
        return -1;
    }
    if (!cp_keyset_reads_backward(token)) {
        return token->from == CP_FROM_FIRST && before != 0 ? -1 : before;
    }
    if (token->from == CP_FROM_LAST) {
        last_rows = cp_page_last_rows(total, count);
        if (before != 0 || last_rows > n) {
            return -1;
        }
        *shown = (int)last_rows;
    }
    return total - before - *shown;
}

/* A numbered page: its place, the location's rows, exact ends (no rows
 * before it: no prev; none after it: no next), a previous page within the
 * first page's rows linked as the first page, and its last page. */
static void number_page(const cp_token *token, int count, apr_int64_t place,
                        apr_int64_t total, int shown, const char *start, cp_page *page)
{
    page->numbered = 1;
    page->offset = place;
    page->total_rows = total;
    if (place == 0) {
        page->prev = NULL;
    }
    if (place + shown == total) {
        page->next = NULL;
    }
    page->prev_is_first = page->prev && place <= count;
    page->has_last = total > 0;
    page->last_number = cp_page_pages_for(total, count);
    page->last_is_current = token->from == CP_FROM_LAST || !page->next;
    page->last = page->last_is_current ? start : page->last_number == 1 ? NULL : CP_TOKEN_LAST;
}

/* The k-th page (k >= 1) on the side a page was not read towards (behind
 * a page read forward, ahead of one read backward), when the rows read
 * there (behind, nearest first, NULL: not read) show it: its link's token,
 * and 1, or 0. The first of them is prev or next; the k-th starts beside
 * the row that ends the (k - 1)-th. `first` says the page is the first
 * page, linked without a token. */
static int other_side_page(apr_pool_t *pool, const cp_page *page, int backward,
                           const apr_array_header_t *behind, int count, int k, int first,
                           const char **token)
{
    const char *side = backward ? page->next : page->prev;

    if (!side || (k > 1 && (!behind || behind->nelts < (k - 1) * count + 1))) {
        return 0;
    }
    *token = first ? NULL
           : k == 1 ? side
           : token_at(pool, backward ? CP_FROM_AFTER : CP_FROM_BEFORE, behind,
                      (k - 1) * count - 1);
    return 1;
}

cp_token_from cp_keyset_page_assemble(apr_pool_t *pool, const cp_token *token,
                                      const apr_array_header_t *rows,
                                      const apr_array_header_t *behind, int count, int links,
                                      const cp_keyset_count *counted, const char *start,
                                      cp_page *page)
{
    int backward = cp_keyset_reads_backward(token);
    int n = rows->nelts, shown = n < count ? n : count, beyond = 0, others = 0, i;
    /* the rows behind were read to the location's start (cp_keyset_behind) */
    int reached_start = !backward && behind && behind->nelts <= links * count;
    apr_int64_t place = -1, current = 0;
    const char *other;

    if ((token->from == CP_FROM_AFTER || token->from == CP_FROM_ROW) && n == 0) {
        return CP_FROM_LAST;   /* every row from it on went meanwhile */
    }
    if (token->from == CP_FROM_BEFORE && n == 0) {
        return CP_FROM_FIRST;  /* likewise every row before it */
    }
    if (counted) {
        place = counted_place(token, counted, n, count, &shown);
    }
    memset(page, 0, sizeof(*page));
    page->total_rows = -1;
    page->offset = -1;
    page->rows = apr_array_make(pool, shown + 1, sizeof(const cp_row *));
    page->docs_as_items = 1;
    for (i = 0; i < shown; i++) {
        APR_ARRAY_PUSH(page->rows, const cp_row *)
            = APR_ARRAY_IDX(rows, backward ? shown - 1 - i : i, const cp_row *);
    }
    /* the pages the rows read reach beyond this one, in the reading direction */
    while (beyond < links && n > shown + beyond * count) {
        beyond++;
    }
    if (!backward) {
        page->next = n > shown ? token_at(pool, CP_FROM_AFTER, rows, shown - 1) : NULL;
        page->prev = token->from == CP_FROM_FIRST || shown == 0 || (behind && !behind->nelts)
                         ? NULL : token_at(pool, CP_FROM_BEFORE, rows, 0);
        page->prev_is_first = page->prev && reached_start && behind->nelts <= count;
    }
    else {
        page->prev = n > shown ? token_at(pool, CP_FROM_BEFORE, rows, shown - 1) : NULL;
        page->next = token->from == CP_FROM_LAST || shown == 0 || (behind && !behind->nelts)
                         ? NULL : token_at(pool, CP_FROM_AFTER, rows, 0);
    }
    if (place >= 0) {
        number_page(token, count, place, counted->total, shown, start, page);
        current = cp_page_pages_for(place, count) + 1;
    }
    else {
        page->has_last = 1;
        page->last_is_current = token->from == CP_FROM_LAST;
        page->last = page->last_is_current ? start : CP_TOKEN_LAST;
    }
    page->pages = apr_array_make(pool, 2 * links + 1, sizeof(cp_page_link));
    if (links == 0) {
        return token->from;
    }
    /* the pages on the other side: as many as the rows read there show,
     * none before the first page */
    while (others < links && (place < 0 || backward || current - (others + 1) >= 1)
           && other_side_page(pool, page, backward, behind, count, others + 1, 0, &other)) {
        others++;
    }
    if (!backward) {
        for (i = others; i >= 1; i--) {
            /* the farthest page read to the location's start is the first */
            int first = i == 1 ? page->prev_is_first
                      : place >= 0 ? place - (apr_int64_t)i * count <= 0
                      : reached_start && i == others;

            other_side_page(pool, page, 0, behind, count, i, first, &other);
            cp_page_add_link(page->pages, current - i, other, 0);
        }
        cp_page_add_link(page->pages, current, start, 1);
        for (i = 1; i <= beyond; i++) {
            cp_page_add_link(page->pages, current + i,
                             token_at(pool, CP_FROM_AFTER, rows, shown + (i - 1) * count - 1),
                             0);
        }
    }
    else {
        for (i = beyond; i >= 1; i--) {
            /* a numbered first page is linked without a token */
            cp_page_add_link(page->pages, current - i,
                             place >= 0 && current - i == 1
                                 ? NULL
                                 : token_at(pool, CP_FROM_BEFORE, rows,
                                            shown + (i - 1) * count - 1),
                             0);
        }
        cp_page_add_link(page->pages, current, start, 1);
        for (i = 1; i <= others; i++) {
            other_side_page(pool, page, 1, behind, count, i, 0, &other);
            cp_page_add_link(page->pages, current + i, other, 0);
        }
    }
    return token->from;
}

json_t *cp_keyset_index_key(apr_pool_t *pool, const apr_array_header_t *index_fields,
                          const json_t *low, const json_t *key)
{
    size_t fixed = low ? json_array_size(low) : 0, n = json_array_size(key), rest, i;
    json_t *view_key;

    if ((size_t)index_fields->nelts < fixed || (low && !json_is_array(low))) {
        return NULL;
    }
    rest = (size_t)index_fields->nelts - fixed;
    if (!json_is_array(key) || rest > n) {
        return NULL;
    }
    view_key = cp_json_pool_own(pool, low ? json_copy((json_t *)low) : json_array());
    for (i = n - rest; view_key && i < n; i++) {
        json_array_append(view_key, json_array_get(key, i));
    }
    return view_key;
}

apr_array_header_t *cp_keyset_index_rows(apr_pool_t *pool, const cp_answer *answer,
                                       const cp_token *token, const cp_find_sort *sort,
                                       const apr_array_header_t *index_fields, int *dropped)
{
    apr_size_t n = cp_answer_rows(answer), i = 0;
    apr_array_header_t *rows = apr_array_make(pool, (int)n + 1, sizeof(const cp_row *));
    const cp_row *first = n ? cp_answer_row(answer, 0) : NULL;

    /* one row a document in a Mango index: the row with the token's id at
     * the token's place is the token's own */
    *dropped = (token->from == CP_FROM_AFTER || token->from == CP_FROM_BEFORE) && token->docid
               && first && first->id && !strcmp(first->id, token->docid);
    for (i = (apr_size_t)*dropped; i < n; i++) {
        APR_ARRAY_PUSH(rows, const cp_row *) = cp_answer_row(answer, i);
    }
    cp_find_key_index_rows(pool, sort, index_fields, rows);
    return rows;
}

apr_array_header_t *cp_keyset_index_behind(apr_pool_t *pool, const apr_array_header_t *queries,
                                           const cp_token *token, const cp_find_sort *sort,
                                           const apr_array_header_t *index_fields)
{
    const cp_query *read = cp_plan_query(queries, CP_QUERY_BACKWARD);
    apr_size_t n, i;
    apr_array_header_t *rows;
    const cp_row *first;

    if (!read || !read->answer) {
        return NULL;
    }
    n = cp_answer_rows(read->answer);
    rows = apr_array_make(pool, (int)n + 1, sizeof(const cp_row *));
    first = n ? cp_answer_row(read->answer, 0) : NULL;
    /* a page that starts at its token's row holds it: it is not behind */
    i = token->from == CP_FROM_ROW && token->docid && first && first->id
        && !strcmp(first->id, token->docid);
    for (; i < n; i++) {
        APR_ARRAY_PUSH(rows, const cp_row *) = cp_answer_row(read->answer, i);
    }
    cp_find_key_index_rows(pool, sort, index_fields, rows);
    return rows;
}

void cp_keyset_index_count(const apr_array_header_t *queries, int backward, int dropped,
                         cp_keyset_count *counted)
{
    const cp_query *read = cp_plan_query(queries, CP_QUERY_FORWARD);
    const cp_query *range_start = cp_plan_query(queries, CP_QUERY_RANGE_START);
    const cp_query *range_end = cp_plan_query(queries, CP_QUERY_RANGE_END);
    apr_int64_t before_range = range_start ? range_start->answer->offset : 0;
    apr_int64_t after_range = range_end ? range_end->answer->offset : 0;
    apr_int64_t skipped = backward ? after_range : before_range;

    counted->total = counted->before = -1;
    if (!read || !read->answer || read->answer->total_rows < 0 || read->answer->offset < 0
        || before_range < 0 || after_range < 0
        || read->answer->total_rows - before_range < after_range
        || read->answer->offset < skipped) {
        return;
    }
    counted->total = read->answer->total_rows - before_range - after_range;
    counted->before = read->answer->offset - skipped + dropped;
}

