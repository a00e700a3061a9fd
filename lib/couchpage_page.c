/* SPDX-License-Identifier: Apache-2.0 */
/*
 * couchpage_page.c: a page assembled from its queries' answers: its rows,
 * tokens, page links and position, and which query to ask again wider.
 * Part of the httpd-free core: no httpd header, no request_rec; it reads
 * answers, and never plans or sends a query.
 */
#include "couchpage_page.h"
#include "couchpage_json.h"
#include "couchpage_plan.h"
#include "couchpage_response.h"
#include "couchpage_seal.h"
#include "couchpage_token.h"

#include <apr_strings.h>
#include <string.h>

/* Whether a row belongs to the (key, docid) entry of a document: keys
 * compare as their JSON text would, member order included. */
static int row_is_entry(const cp_row *row, const char *docid, const json_t *key)
{
    return row->id && docid && !strcmp(row->id, docid) && cp_json_identical(cp_row_key(row), key);
}

/* Whether two rows are one entry: a document that emitted one key several
 * times. Rows of one answer that CouchDB wrote the same are. */
static int same_entry(const cp_row *a, const cp_row *b)
{
    if (!a->id || !b->id || strcmp(a->id, b->id)) {
        return 0;
    }
    return (a->key_text.len == b->key_text.len
            && !memcmp(a->key_text.text, b->key_text.text, a->key_text.len))
        || cp_json_identical(cp_row_key(a), cp_row_key(b));
}

/* Whether a row is the token's own entry. */
static int is_token_entry(const cp_row *row, const cp_token *token)
{
    return row_is_entry(row, token->docid, token->key);
}

#define row_count(answer) cp_answer_rows(answer)
#define row_at(answer, i) ((const cp_row *)cp_answer_row(answer, i))

/* How many rows at the start of an answer are the token's own entry. */
static size_t token_entry_run(const cp_answer *rows, const cp_token *token)
{
    size_t run = 0, n = row_count(rows);

    while (run < n && is_token_entry(row_at(rows, run), token)) {
        run++;
    }
    return run;
}

/* The index within its entry of rows[x] of an answer read forward whose
 * first row is row `first` of its entry. */
static int entry_index(const cp_answer *rows, size_t x, int first, int with_docid)
{
    size_t y = x;

    if (!with_docid) {
        return 0;
    }
    while (y > 0 && same_entry(row_at(rows, y - 1), row_at(rows, x))) {
        y--;
    }
    return (int)(x - y) + (y == 0 ? first : 0);
}

/* The token of a row: its key whole, or bounded where that does not fit
 * the room (cp_token_for_row). */
static const char *row_token(apr_pool_t *pool, const cp_page_answers *in, const cp_row *row,
                             int index)
{
    return cp_token_for_row(pool, in->room, cp_row_key(row), in->with_docid ? row->id : NULL,
                            index);
}

/* Whether a query's answer is short of its limit: it read every row there
 * was that way (to the range's end or start), and nothing was cut. */
static int read_to_the_end(const cp_query *query)
{
    return row_count(query->answer) < (size_t)query->limit;
}

/* The answer of the query of that role, or NULL when the page has none. */
static const cp_answer *answer_of(const cp_page_answers *in, cp_query_role role)
{
    const cp_query *query = cp_plan_query(in->queries, role);

    return query ? query->answer : NULL;
}

/* The token of the k-th page ahead (k >= 1), or NULL past the end: row
 * k * count of the rows read forward from the page's start, keys-only when
 * there is an ahead query. */
static const char *ahead_token(apr_pool_t *pool, const cp_page_answers *in, size_t k)
{
    const cp_answer *ahead = answer_of(in, CP_QUERY_AHEAD);
    const cp_answer *rows = ahead ? ahead : answer_of(in, CP_QUERY_FORWARD);
    size_t at = k * in->count;

    if (at >= row_count(rows)) {
        return NULL;
    }
    return row_token(pool, in, row_at(rows, at),
                     entry_index(rows, at, in->start_token ? in->start_token->index : 0,
                                 in->with_docid));
}

/* The rows before the page, nearest first, each with its index in its
 * entry. The backward answer starts with the token's own entry (read
 * without skip=1): of it, only the rows before the token lie behind the page.
 * CouchDB lists an entry's rows in one order in either direction, so read
 * backward each entry comes in reverse. Without docids (grouped rows) the
 * token's own group may come first (the own group probe says whether) and
 * is passed over. A row the backward query passed over with skip has no
 * row: counted, not read. */
typedef struct {
    const cp_row *row; /* NULL: passed over */
    int index;
} placed_row;

static void place(apr_array_header_t *behind, const cp_row *row, int index)
{
    placed_row *placed = apr_array_push(behind);

    placed->row = row;
    placed->index = index;
}

/* How many rows the token's own entry has, from the forward answer, which
 * starts at the token's row (skip=index): -1 when it does not show where
 * the entry ends. */
static long own_entry_rows(const cp_query *forward, const cp_token *token)
{
    const cp_answer *rows = forward->answer;
    size_t n = row_count(rows), run = token_entry_run(rows, token);

    if (run == 0) {
        /* the entry's first row would have come first: there is none, or
         * it has no row at the token's index any more */
        return token->index == 0 ? 0 : -1;
    }
    return run == n && !read_to_the_end(forward) ? -1 : (long)(token->index + run);
}

/* How many rows at the start of an answer are one entry. */
static size_t first_entry_run(const cp_answer *rows)
{
    size_t run = 1, n = row_count(rows);

    if (n == 0) {
        return 0;
    }
    while (run < n && same_entry(row_at(rows, run), row_at(rows, 0))) {
        run++;
    }
    return run;
}

/* rows: an answer read backward, whose first `skipped` rows the query
 * passed over; token: the entry it starts with (its rows after the token
 * are not behind), NULL for none (the last page's answer); grouped rows
 * (without docids): own_group, whether its first row is the token's own
 * group, which is passed over (the own group probe's answer). own: the rows of
 * that entry when rows were passed over (own_entry_rows), else counted
 * here. NULL when the rows behind cannot be placed: how many were passed
 * over is not known (own unknown, or an empty answer after fewer than
 * skipped), or the answer disagrees with own. */
static apr_array_header_t *rows_behind(apr_pool_t *pool, const cp_answer *rows,
                                       int with_docid, const cp_token *token, int own_group,
                                       size_t skipped, long own)
{
    size_t n = row_count(rows), i = 0, end, run = 0, j, before;
    apr_array_header_t *behind = apr_array_make(pool, (int)(n + skipped) + 1,
                                                sizeof(placed_row));
    cp_row *own_row = NULL;

    if (!with_docid) {
        if (n > 0 && token && own_group) {
            i = 1;
        }
        for (; i < n; i++) {
            place(behind, row_at(rows, i), 0);
        }
        return behind;
    }
    run = token ? token_entry_run(rows, token) : 0;
    if (skipped == 0) {
        own = (long)run;
    }
    if (own < 0 || run != ((size_t)own > skipped ? (size_t)own - skipped : 0)
        || ((size_t)own < skipped && n == 0)) {
        return NULL;
    }
    /* the token's own entry: its rows before the token, nearest first; those
     * passed over are the token's key and document */
    before = token && (size_t)token->index < (size_t)own ? (size_t)token->index : (size_t)own;
    if (token && before > 0 && skipped > 0) {
        /* only its token is made: the token's key and document */
        own_row = apr_pcalloc(pool, sizeof(*own_row));
        own_row->id = token->docid;
        own_row->key = token->key;
    }
    for (j = before; j > 0; j--) {
        place(behind, j - 1 < skipped ? own_row : row_at(rows, j - 1 - skipped), (int)j - 1);
    }
    i = run;
    if ((size_t)own < skipped) {
        /* the rows passed over behind the token's entry, and the answer's
         * first entry, which may have begun among them: counted only */
        i = first_entry_run(rows);
        for (j = 0; j < skipped - (size_t)own + i; j++) {
            place(behind, NULL, 0);
        }
    }
    for (; i < n; i = end + 1) {
        for (end = i; end + 1 < n && same_entry(row_at(rows, end + 1), row_at(rows, i));
             end++) {
        }
        for (j = end + 1; j > i; j--) {
            place(behind, row_at(rows, j - 1), (int)(j - 1 - i));
        }
    }
    return behind;
}

/* The backward answer's rows behind the page (rows_behind), NULL when they
 * cannot be placed. */
static apr_array_header_t *backward_rows_behind(apr_pool_t *pool,
                                                const apr_array_header_t *queries,
                                                const cp_token *token, int with_docid)
{
    const cp_query *backward = cp_plan_query(queries, CP_QUERY_BACKWARD);
    const cp_query *own_group = cp_plan_query(queries, CP_QUERY_OWN_GROUP);
    size_t skipped = (size_t)cp_plan_skip(backward);

    return rows_behind(pool, backward->answer, with_docid, token,
                       own_group && row_count(own_group->answer) > 0, skipped,
                       skipped ? own_entry_rows(cp_plan_query(queries, CP_QUERY_FORWARD),
                                                token) : 0);
}

/* How many rows at the end of a full answer are one entry, which its limit
 * may have cut: their indexes in the entry are not known. 0 when the
 * answer is short of its limit (nothing was cut). */
static size_t cut_entry_rows(const cp_query *query, int with_docid)
{
    const cp_answer *rows = query->answer;
    size_t n = row_count(rows), last = n;

    if (read_to_the_end(query) || n == 0) {
        return 0;
    }
    if (!with_docid) {
        return 1;
    }
    while (last > 0 && same_entry(row_at(rows, last - 1), row_at(rows, n - 1))) {
        last--;
    }
    return n - last;
}

/* The first row of the k-th page behind (k >= 1): the count-th row further
 * back, or the farthest there is when fewer remain (a short first page). */
static const placed_row *behind_start(const apr_array_header_t *behind, int count, size_t k)
{
    size_t seen = (size_t)behind->nelts;

    if (seen > (k - 1) * count) {
        size_t at = k * count <= seen ? k * count : seen;
        return &APR_ARRAY_IDX(behind, at - 1, placed_row);
    }
    return NULL;
}

/* Whether the backward answer shows the `needed` rows behind the page,
 * each in its place (behind: its rows placed, NULL when they could not be):
 * not when they reach into the last entry of an answer its limit cut, whose
 * rows nearest the page may be missing (a document's rows under one key
 * come in one order both ways), or into the token's own entry when the
 * limit cut that; nor when a page behind would start among the rows its
 * skip passed over, or in an entry that began among them. */
static int behind_complete(const cp_query *backward, const apr_array_header_t *behind,
                           const cp_token *start, int with_docid, int count, int needed)
{
    size_t known, k;
    const placed_row *placed;

    if (!behind) {
        return 0;
    }
    /* the rows of an entry the limit may have cut are not in their places,
     * nor are those behind them: a full answer shows no more than the rest.
     * The token's own entry is never cut behind the token: its rows before
     * the token come first. */
    known = (size_t)behind->nelts;
    if (with_docid && !read_to_the_end(backward)) {
        const cp_answer *rows = backward->answer;
        size_t n = row_count(rows), cut = cut_entry_rows(backward, with_docid);

        if (cut == n && is_token_entry(row_at(rows, 0), start)) {
            /* the token's own entry fills the answer: its rows before the
             * token are known if the token's row is among those read */
            known = cp_plan_skip(backward) + n > (size_t)start->index ? known : 0;
        }
        else {
            known -= cut < known ? cut : known;
        }
        if (known < (size_t)needed) {
            return 0;
        }
    }
    for (k = 1; (placed = behind_start(behind, count, k)) != NULL && k * count <= (size_t)needed;
         k++) {
        if (!placed->row) {
            return 0;
        }
    }
    return 1;
}

/* Rows of the last page's answer, nearest the end first, whose places in
 * their entries are known: all but an entry its limit cut at the far end. */
static size_t tail_known(const cp_query *tail, int with_docid)
{
    return row_count(tail->answer) - cut_entry_rows(tail, with_docid);
}

/* Whether the last page's answer holds `needed` rows nearest the end whose
 * places in their entries are known, or every row there is. */
static int tail_complete(const cp_query *tail, int with_docid, int needed)
{
    return tail_known(tail, with_docid) >= (size_t)needed || read_to_the_end(tail);
}

/* The tokens of up to `want` pages behind, nearest first. When the rows
 * read reached the location's start (reached_start) and its first row
 * starts the farthest of those pages, that page is the first page:
 * *first_at is its place (1: the previous page), else 0. */
static apr_array_header_t *behind_tokens(apr_pool_t *pool, const cp_page_answers *in,
                                         const apr_array_header_t *behind, size_t want,
                                         int reached_start, int *first_at)
{
    apr_array_header_t *tokens = apr_array_make(pool, (int)want, sizeof(const char *));
    const placed_row *placed;
    size_t k;

    /* a row passed over is never where a page starts once the answer is
     * complete (cp_page_behind_complete) */
    for (k = 1; k <= want && (placed = behind_start(behind, in->count, k)) != NULL
                && placed->row; k++) {
        APR_ARRAY_PUSH(tokens, const char *) =
            row_token(pool, in, placed->row, placed->index);
    }
    *first_at = reached_start && (size_t)behind->nelts <= want * in->count ? tokens->nelts : 0;
    return tokens;
}

/* The tokens of up to `want` pages ahead, the next page first. */
static apr_array_header_t *ahead_tokens(apr_pool_t *pool, const cp_page_answers *in,
                                        size_t want)
{
    apr_array_header_t *tokens = apr_array_make(pool, (int)want, sizeof(const char *));
    const char *token;
    size_t k;

    for (k = 1; k <= want && (token = ahead_token(pool, in, k)) != NULL; k++) {
        APR_ARRAY_PUSH(tokens, const char *) = token;
    }
    return tokens;
}

apr_int64_t cp_page_pages_for(apr_int64_t rows, int count)
{
    return rows / count + (rows % count != 0);
}

apr_int64_t cp_page_last_rows(apr_int64_t total, int count)
{
    return total == 0 ? 0 : total - (cp_page_pages_for(total, count) - 1) * count;
}

/* The location's rows from CouchDB's offsets (see the header): total_rows
 * of `counted`, an answer read over the index, less the rows before the
 * range (the range start probe's offset) and after it (the range end
 * query's): *rows_before and *total, and 1, when they are known and add up.
 * Without both probes only the whole index has a known position. */
static int location_rows(const cp_page_answers *in, const cp_answer *counted,
                         apr_int64_t *rows_before, apr_int64_t *total)
{
    const cp_query *range_start = cp_plan_query(in->queries, CP_QUERY_RANGE_START);
    const cp_query *range_end = cp_plan_query(in->queries, CP_QUERY_RANGE_END);
    apr_int64_t view_rows = counted->total_rows;
    apr_int64_t rows_after = !range_end ? 0 : range_end->answer ? range_end->answer->offset : -1;

    *rows_before = !range_start ? 0 : range_start->answer ? range_start->answer->offset : -1;
    if ((in->partial && !(range_start && range_end)) || view_rows < 0 || *rows_before < 0
        || rows_after < 0 || view_rows - *rows_before < rows_after) {
        return 0;
    }
    *total = view_rows - *rows_before - rows_after;
    return 1;
}

/* Grouped rows' position from their count (in->counted, see the header):
 * *before and *total, and 1, when consistent with every row seen: as many
 * rows behind the page as it says (all of them when the backward answer is
 * short), as many ahead (from the page's start to the range's end: all of
 * them when the forward answer is short; an at-least count bounds only
 * from below, and is given as more rows than any range holds, so that no
 * end is placed by it). */
static int counted_position(const cp_page_answers *in, const apr_array_header_t *behind,
                            size_t page_rows, apr_int64_t *before, apr_int64_t *total)
{
    const cp_query *forward = cp_plan_query(in->queries, CP_QUERY_FORWARD);
    const cp_query *backward = cp_plan_query(in->queries, CP_QUERY_BACKWARD);
    apr_int64_t seen = behind ? behind->nelts : 0;
    apr_int64_t read = (apr_int64_t)row_count(forward->answer);

    *before = in->counted->before;
    *total = in->counted->at_least ? CP_PAGE_COUNT_AT_LEAST : in->counted->total;
    if (*before < 0 || *before > *total || (apr_int64_t)page_rows > *total - *before) {
        return 0;
    }
    if (!backward ? *before != 0
        : *before < seen || (read_to_the_end(backward) && *before != seen)) {
        return 0;
    }
    return read_to_the_end(forward) && !in->counted->at_least ? *total - *before == read
                                                              : *total - *before >= read;
}

/* The page's position from CouchDB's offsets (see the header): *before and
 * *total, and 1, when they are known and consistent with every row seen. */
static int position_of(const cp_page_answers *in, const apr_array_header_t *behind,
                       size_t page_rows, apr_int64_t *before, apr_int64_t *total)
{
    const cp_query *forward = cp_plan_query(in->queries, CP_QUERY_FORWARD);
    const cp_query *backward = cp_plan_query(in->queries, CP_QUERY_BACKWARD);
    apr_int64_t at = forward->answer->offset, rows_before;
    size_t read, seen = behind ? (size_t)behind->nelts : 0;

    if (in->counted) {
        return counted_position(in, behind, page_rows, before, total);
    }
    if (!location_rows(in, forward->answer, &rows_before, total) || at < rows_before) {
        return 0;
    }
    *before = at - rows_before;
    if ((apr_int64_t)page_rows > *total - *before) {
        return 0;
    }
    /* rows read behind the page: all of them when the answer is short */
    if (!backward ? *before != 0
        : (*before < (apr_int64_t)seen
           || (read_to_the_end(backward) && *before != (apr_int64_t)seen))) {
        return 0;
    }
    /* rows read ahead, from the page's start to the range's end */
    read = row_count(forward->answer);
    if (read_to_the_end(forward) ? *total - *before != (apr_int64_t)read
                                 : *total - *before < (apr_int64_t)read) {
        return 0;
    }
    return 1;
}

/* The last page: this one, or CP_TOKEN_LAST, which finds it when followed. */
static void find_last(const cp_page_answers *in, apr_int64_t before, apr_int64_t total,
                      cp_page *page)
{
    page->has_last = 0;
    if (total == 0) {
        return;
    }
    page->has_last = 1;
    page->last_number = cp_page_pages_for(total, in->count);
    if (before == (page->last_number - 1) * in->count) {
        page->last_is_current = 1;
        page->last = in->start;
    }
    else {
        page->last = page->last_number == 1 ? NULL : CP_TOKEN_LAST;
    }
}

void cp_page_add_link(apr_array_header_t *pages, apr_int64_t number, const char *start,
                      int current)
{
    cp_page_link *link = apr_array_push(pages);

    link->number = number;
    link->start = start;
    link->current = current;
    link->withheld = 0;
}

/* The page's offset, the location's total and its last page, once the
 * page knows whether it is numbered (before rows before it, of total);
 * `counted` is the answer that carries CouchDB's total_rows. */
static void set_position(const cp_page_answers *in, const cp_answer *counted,
                         apr_int64_t before, apr_int64_t total, cp_page *page)
{
    page->has_last = 0;
    page->last_is_current = 0;
    page->last = NULL;
    page->last_number = 0;
    page->offset = -1;
    if (!page->numbered) {
        /* CouchDB's total is the location's only where it is the whole index */
        page->total_rows = in->partial ? -1 : counted->total_rows;
        return;
    }
    page->offset = before;
    page->total_rows = total;
    find_last(in, before, total, page);
}

/* The numbered page links (with CouchPageLinks): the pages behind (their
 * tokens nearest first; the first_at-th the first page, linked without
 * one), this one, and the pages ahead, numbered from this page's number
 * when numbered (before rows before it), else relative to it. Sets prev
 * from the pages behind too. */
static void link_pages(apr_pool_t *pool, const cp_page_answers *in, apr_int64_t before,
                       const apr_array_header_t *behind, int first_at,
                       const apr_array_header_t *ahead, cp_page *page)
{
    apr_int64_t current = page->numbered ? cp_page_pages_for(before, in->count) + 1 : 0;
    int i;

    page->withheld = 0;
    page->prev = behind->nelts ? APR_ARRAY_IDX(behind, 0, const char *) : NULL;
    page->prev_is_first = first_at == 1;
    page->pages = apr_array_make(pool, 2 * in->links + 1, sizeof(cp_page_link));
    if (in->links == 0) {
        return;
    }
    for (i = behind->nelts; i >= 1; i--) {
        cp_page_add_link(page->pages, current - i,
                         i == first_at ? NULL : APR_ARRAY_IDX(behind, i - 1, const char *), 0);
    }
    cp_page_add_link(page->pages, current, in->start, 1);
    for (i = 1; i <= ahead->nelts; i++) {
        cp_page_add_link(page->pages, current + i, APR_ARRAY_IDX(ahead, i - 1, const char *),
                         0);
    }
}

/* The last page's position from the offsets of its answer (the tail) and
 * the range start probe: *total, and 1, when known and consistent with the
 * rows read (all of them when the answer is short of its limit). */
static int tail_position(const cp_page_answers *in, const cp_query *tail, apr_int64_t *total)
{
    apr_int64_t rows_before, read = (apr_int64_t)row_count(tail->answer);

    if (in->counted) {
        /* grouped rows, numbered by an exact count only */
        *total = in->counted->total;
        return !in->counted->at_least
               && (read_to_the_end(tail) ? *total == read : *total >= read);
    }
    if (!location_rows(in, tail->answer, &rows_before, total)) {
        return 0;
    }
    return read_to_the_end(tail) ? *total == read : *total >= read;
}

/* The last page, asked for with CP_TOKEN_LAST: its rows and the pages
 * behind it from the rows read back from the range's end. Where the
 * position is known it holds the remainder (a full page when the rows
 * divide), as the walk from the first page ends; else the last count rows.
 * Returns the answer to ask again wider, or NULL. */
static cp_query *assemble_last(apr_pool_t *pool, const cp_page_answers *in, cp_page *page)
{
    cp_query *tail = cp_plan_query(in->queries, CP_QUERY_RANGE_END);
    apr_array_header_t *from_end = rows_behind(pool, tail->answer, in->with_docid, NULL, 0, 0, 0);
    apr_array_header_t *behind, *before;
    size_t known = tail_known(tail, in->with_docid), rows, i;
    apr_int64_t total = 0;
    int first_at;

    page->numbered = tail_position(in, tail, &total);
    rows = !page->numbered ? (size_t)in->count : (size_t)cp_page_last_rows(total, in->count);
    if (rows > known) {
        /* the page's first row lies in an entry the limit cut */
        rows = known;
        page->numbered = 0;
    }
    page->rows = apr_array_make(pool, (int)rows + 1, sizeof(const cp_row *));
    for (i = rows; i > 0; i--) {
        APR_ARRAY_PUSH(page->rows, const cp_row *) = APR_ARRAY_IDX(from_end, i - 1, placed_row).row;
    }
    behind = apr_array_make(pool, (int)(known - rows) + 1, sizeof(placed_row));
    for (i = rows; i < known; i++) {
        *(placed_row *)apr_array_push(behind) = APR_ARRAY_IDX(from_end, i, placed_row);
    }
    before = behind_tokens(pool, in, behind, (size_t)cp_plan_pages_either_side(in->links),
                           read_to_the_end(tail), &first_at);
    page->next = NULL;
    set_position(in, tail->answer, total - (apr_int64_t)rows, total, page);
    link_pages(pool, in, total - (apr_int64_t)rows, before, first_at,
               apr_array_make(pool, 1, sizeof(const char *)), page);
    return tail_complete(tail, in->with_docid,
                         in->count * (1 + cp_plan_pages_either_side(in->links)))
           ? NULL : tail;
}

void cp_page_answers_init(cp_page_answers *answers, const cp_plan *plan,
                          const apr_array_header_t *queries, const cp_token *start_token,
                          const char *start, const cp_token_room *room)
{
    answers->count = plan->count;
    answers->links = plan->links;
    answers->with_docid = cp_view_has_docids(plan->view);
    answers->partial = cp_plan_is_partial(plan);
    answers->queries = queries;
    answers->start_token = start_token;
    answers->start = start;
    answers->room = room;
    answers->counted = NULL;
}

cp_query *cp_page_assemble(apr_pool_t *pool, const cp_page_answers *in, cp_page *page)
{
    const cp_answer *forward_rows = answer_of(in, CP_QUERY_FORWARD);
    cp_query *backward = cp_plan_query(in->queries, CP_QUERY_BACKWARD), *widen = NULL;
    apr_array_header_t *behind = NULL, *before, *after;
    size_t want = (size_t)cp_plan_pages_either_side(in->links);
    apr_int64_t rows_before = 0, total = 0;
    int i, first_at = 0;

    page->docs_as_items = 0;   /* a view's items are its rows */
    if (in->start_token && in->start_token->from == CP_FROM_LAST) {
        return assemble_last(pool, in, page);
    }
    page->rows = apr_array_make(pool, in->count + 1, sizeof(const cp_row *));
    for (i = 0; (size_t)i < row_count(forward_rows) && i < in->count; i++) {
        APR_ARRAY_PUSH(page->rows, const cp_row *) = row_at(forward_rows, i);
    }
    /* each page's token once: for next and prev, and for the page links */
    after = ahead_tokens(pool, in, want);
    before = apr_array_make(pool, 1, sizeof(const char *));
    if (backward) {
        behind = backward_rows_behind(pool, in->queries, in->start_token, in->with_docid);
        if (!behind_complete(backward, behind, in->start_token, in->with_docid, in->count,
                             (int)want * in->count)) {
            widen = backward;
        }
        if (!behind) {
            /* not placed even after widening (cp_plan_widen): no page behind
             * is shown rather than a wrong one */
            behind = apr_array_make(pool, 1, sizeof(placed_row));
        }
        before = behind_tokens(pool, in, behind, want, read_to_the_end(backward), &first_at);
    }
    page->next = after->nelts ? APR_ARRAY_IDX(after, 0, const char *) : NULL;

    page->numbered = position_of(in, behind, (size_t)page->rows->nelts, &rows_before, &total);
    set_position(in, forward_rows, rows_before, total, page);
    link_pages(pool, in, rows_before, before, first_at, after, page);
    return widen;
}

/* The highest document id CouchDB's byte order can place a row at: U+10FFFF
 * repeated, so that a read descending from a key starts at its last row. */
#define HIGHEST_DOCID "\xf4\x8f\xbf\xbf\xf4\x8f\xbf\xbf\xf4\x8f\xbf\xbf\xf4\x8f\xbf\xbf"

const char *cp_page_locate(apr_pool_t *pool, const apr_array_header_t *queries,
                           const cp_token *start, int with_docid, int descending,
                           cp_token *located)
{
    const cp_query *query = cp_plan_query(queries, CP_QUERY_LOCATE);
    size_t n = row_count(query->answer), i;

    memset(located, 0, sizeof(*located));
    located->from = CP_FROM_ROW;   /* a bounded token starts at its row too */
    located->index = start->index;
    /* and keeps the count of its walk (grouped rows, couchpage_count) */
    located->counted = start->counted;
    located->count_total = start->count_total;
    located->count_place = start->count_place;
    located->count_at_least = start->count_at_least;
    for (i = 0; i < n; i++) {
        const cp_row *row = row_at(query->answer, i);
        const char *digest = cp_token_digest(pool, cp_row_key(row),
                                             with_docid ? row->id : NULL);

        if (digest && !strcmp(digest, start->digest)) {
            located->key = cp_row_key(row);
            located->docid = with_docid ? row->id : NULL;
            located->key_json = cp_json_text(pool, located->key);
            return NULL;
        }
    }
    if (!read_to_the_end(query)) {
        return apr_psprintf(pool, "more than %d rows share the start of the start token's "
                            "key, and its row is not among them", query->limit);
    }
    /* the row is gone: from where the rows that share its bounds begin, the
     * first of them included (an empty id comes before every id; the highest
     * after, read descending) */
    located->key = descending ? start->high : start->low;
    located->key_json = cp_json_text(pool, located->key);
    located->docid = !with_docid ? NULL : descending ? HIGHEST_DOCID : "";
    located->index = 0;
    return NULL;
}

/* Whether a token is too long to be taken back; *longest keeps the longest. */
static int too_long(const char *token, apr_size_t max_length, apr_size_t *longest)
{
    apr_size_t len = token ? strlen(token) : 0;

    if (len <= max_length) {
        return 0;
    }
    *longest = len > *longest ? len : *longest;
    return 1;
}

apr_array_header_t *cp_page_issued_tokens(apr_pool_t *pool, cp_page *page)
{
    apr_array_header_t *tokens = apr_array_make(pool, 3 + page->pages->nelts,
                                                sizeof(const char **));
    int i;

    APR_ARRAY_PUSH(tokens, const char **) = &page->next;
    APR_ARRAY_PUSH(tokens, const char **) = &page->prev;
    if (!page->last_is_current) {
        APR_ARRAY_PUSH(tokens, const char **) = &page->last;
    }
    for (i = 0; i < page->pages->nelts; i++) {
        cp_page_link *link = &APR_ARRAY_IDX(page->pages, i, cp_page_link);

        if (!link->current) {
            APR_ARRAY_PUSH(tokens, const char **) = &link->start;
        }
    }
    return tokens;
}

int cp_page_issued_count(cp_page *page, apr_pool_t *pool, apr_size_t *longest)
{
    const apr_array_header_t *tokens = cp_page_issued_tokens(pool, page);
    int i, issued = 0;

    *longest = 0;
    for (i = 0; i < tokens->nelts; i++) {
        const char *token = *APR_ARRAY_IDX(tokens, i, const char **);

        if (token) {
            issued++;
            *longest = strlen(token) > *longest ? strlen(token) : *longest;
        }
    }
    return issued;
}

const char *cp_page_seal_tokens(apr_pool_t *pool, const cp_seal_key *key,
                                const char *binding, cp_page *page)
{
    const apr_array_header_t *tokens = cp_page_issued_tokens(pool, page);

    return cp_seal_tokens(pool, key, binding, (const char **const *)tokens->elts,
                          tokens->nelts);
}

apr_size_t cp_page_withhold_long_tokens(cp_page *page, apr_size_t max_length)
{
    apr_size_t longest = 0;
    int i;

    if (too_long(page->next, max_length, &longest)) {
        page->next = NULL;
        page->withheld |= CP_WITHHELD_NEXT;
    }
    if (too_long(page->prev, max_length, &longest)) {
        page->prev = NULL;
        page->withheld |= CP_WITHHELD_PREV;
    }
    for (i = 0; i < page->pages->nelts; i++) {
        cp_page_link *link = &APR_ARRAY_IDX(page->pages, i, cp_page_link);

        if (!link->current && too_long(link->start, max_length, &longest)) {
            link->start = NULL;
            link->withheld = 1;
        }
    }
    return longest;
}
