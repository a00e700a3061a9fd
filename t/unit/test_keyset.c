/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of couchpage_keyset: pages read by keyset, by _find and from
 * an index's view, walked both ways over rows that are deleted meanwhile,
 * numbered where CouchDB counts them; the tokens they hand out and read
 * back, old links' literal texts among them; and the two query builders. */
#include "pages.h"
#include "unit_find.h"
#include "couchpage_keyset.h"

/* A keyset location's token (sort's), as the module reads it. */
static const char *keyset_decode(const char *text, const cp_find_sort *sort, cp_token *token)
{
    cp_token_rows rows = cp_keyset_token_rows(sort, 0);

    return cp_token_decode(pool, text, &rows, token);
}

/* A location's rows for the walks below: sort value i / 3 (ties of three,
 * told apart by id), ids in the same order; deleted[i] leaves row i out. */
#define WALK_ROWS 40
static cp_row walk_rows[WALK_ROWS];
static int deleted[WALK_ROWS];

static void make_walk_rows(void)
{
    int i;

    for (i = 0; i < WALK_ROWS; i++) {
        memset(&walk_rows[i], 0, sizeof(walk_rows[i]));
        walk_rows[i].id = apr_psprintf(pool, "d%03d", i);
        walk_rows[i].key = cp_json_pool_own(pool, json_pack("[i]", i / 3));
        deleted[i] = 0;
    }
}

/* The sort the walk's rows follow (and the other tests' locations): n,
 * ascending. */
static cp_find_sort sort_by_n(void)
{
    const char *names[] = { "n", NULL };

    return sort_of(0, names);
}

/* Where (key, id) lies among the walk's rows: 2 × the index of an equal
 * row, else 2 × the index of the next row − 1; compared as CouchDB would,
 * value then id. */
static int place_of(const json_t *key, const char *id)
{
    int value = (int)json_integer_value(json_array_get(key, 0)), i;

    for (i = 0; i < WALK_ROWS; i++) {
        int cmp = i / 3 != value ? (i / 3 < value ? -1 : 1) : strcmp(walk_rows[i].id, id);

        if (cmp == 0) {
            return 2 * i;
        }
        if (cmp > 0) {
            return 2 * i - 1;
        }
    }
    return 2 * WALK_ROWS - 1;
}

/* What CouchDB answers the body cp_find_body would make for token: the
 * rows beyond its row in the direction read, at most limit. */
static apr_array_header_t *walk_answer(const cp_token *token, int limit)
{
    apr_array_header_t *rows = apr_array_make(pool, limit, sizeof(const cp_row *));
    int backward = cp_keyset_reads_backward(token), place = 0, i;

    if (token->key) {
        place = place_of(token->key, token->docid);
    }
    for (i = backward ? WALK_ROWS - 1 : 0; i >= 0 && i < WALK_ROWS && rows->nelts < limit;
         i += backward ? -1 : 1) {
        if (deleted[i]) {
            continue;
        }
        if (token->from == CP_FROM_AFTER && 2 * i <= place) {
            continue;
        }
        if (token->from == CP_FROM_BEFORE && 2 * i >= place) {
            continue;
        }
        APR_ARRAY_PUSH(rows, const cp_row *) = &walk_rows[i];
    }
    return rows;
}

/* The page a token leads to, asked again as the module would when the
 * assembler says so. */
static cp_page walk_page(const cp_find_sort *sort, const char *text, int count, int links)
{
    cp_token token;
    cp_page page;
    cp_token_from again;

    assert_null(keyset_decode(text, sort, &token));
    again = cp_keyset_page_assemble(pool, &token,
                                    walk_answer(&token, cp_keyset_limit(count, links)), NULL,
                                    count, links, NULL, text, &page);
    if (again != token.from) {
        token.from = again;
        token.key = NULL;
        text = again == CP_FROM_LAST ? CP_TOKEN_LAST : NULL;
        assert_int_equal(cp_keyset_page_assemble(pool, &token,
                                                 walk_answer(&token,
                                                             cp_keyset_limit(count, links)),
                                                 NULL, count, links, NULL, text, &page),
                         again);
    }
    return page;
}

/* The walk's rows, as ids in order, not deleted. */
static const char *walk_ids(void)
{
    char *ids = "";
    int i;

    for (i = 0; i < WALK_ROWS; i++) {
        if (!deleted[i]) {
            ids = apr_pstrcat(pool, ids, walk_rows[i].id, " ", NULL);
        }
    }
    return ids;
}

static const char *page_ids(const cp_page *page)
{
    char *ids = "";
    int i;

    for (i = 0; i < page->rows->nelts; i++) {
        ids = apr_pstrcat(pool, ids, APR_ARRAY_IDX(page->rows, i, const cp_row *)->id, " ",
                          NULL);
    }
    return ids;
}

/* How a walk reads its pages: with walk_page or walk_numbered_page, pages
 * of count rows and links page links. */
typedef cp_page (*walk_reader)(const cp_find_sort *sort, const char *text, int count, int links);
typedef struct {
    const cp_find_sort *sort;
    walk_reader read_page;
    int count;
    int links;
} walk_way;

/* Runs each on walks over fresh rows sorted by n, read by read_page:
 * pages of 1 to counts rows, with first_links to 2 page links. */
static void walk_every_way(walk_reader read_page, int counts, int first_links,
                           void (*each)(const walk_way *way))
{
    cp_find_sort sort = sort_by_n();
    walk_way way = { &sort, read_page, 0, 0 };

    make_walk_rows();
    for (way.count = 1; way.count <= counts; way.count++) {
        for (way.links = first_links; way.links <= 2; way.links++) {
            each(&way);
        }
    }
}

/* What a walk checks of each page it reads, read after `before` others. */
typedef void (*walk_check)(const walk_way *way, const cp_page *page, int before);

/* Walks from the first page by next links, or backward from the Last page
 * by prev links, checking each page; a walk not ended by its 100th page
 * stops there. The ids read, in the rows' order; *pages_read (unless
 * NULL), how many pages. */
static const char *walk_pages(const walk_way *way, int backward, walk_check check,
                              int *pages_read)
{
    const char *ids = "", *text = backward ? CP_TOKEN_LAST : NULL;
    cp_page page;
    int pages = 0;

    do {
        page = way->read_page(way->sort, text, way->count, way->links);
        check(way, &page, pages);
        ids = backward ? apr_pstrcat(pool, page_ids(&page), ids, NULL)
                       : apr_pstrcat(pool, ids, page_ids(&page), NULL);
        text = backward ? page.prev : page.next;
    } while (text && ++pages < 100);
    if (pages_read) {
        *pages_read = text ? pages : pages + 1;
    }
    return ids;
}

/* The first two pages read_page reads over fresh rows, pages of 4 rows
 * without page links: the second holds rows 4 to 7. */
static void walk_two_pages(const cp_find_sort *sort, walk_reader read_page, cp_page *first,
                           cp_page *second)
{
    make_walk_rows();
    *first = read_page(sort, NULL, 4, 0);
    *second = read_page(sort, first->next, 4, 0);
    assert_string_equal(page_ids(second), "d004 d005 d006 d007 ");
}

/* Forward, pages are full but the last; only the first has no prev. */
static void check_keyset_page_forward(const walk_way *way, const cp_page *page, int before)
{
    assert_true(page->rows->nelts == way->count || !page->next);
    assert_true(before == 0 ? page->prev == NULL : page->prev != NULL);
}

/* Backward from the Last page: only it has no next. */
static void check_keyset_page_backward(const walk_way *way, const cp_page *page, int before)
{
    assert_true(before == 0 ? page->next == NULL : page->next != NULL);
}

static void keyset_walk_reads_every_row_once(const walk_way *way)
{
    assert_string_equal(walk_pages(way, 0, check_keyset_page_forward, NULL), walk_ids());
    assert_string_equal(walk_pages(way, 1, check_keyset_page_backward, NULL), walk_ids());
}

static void walks_both_ways_read_every_row_once(void **state)
{
    walk_every_way(walk_page, 7, 0, keyset_walk_reads_every_row_once);
}

static void links_name_the_pages_read_through(void **state)
{
    cp_find_sort sort = sort_by_n();
    cp_page page, there;
    const cp_page_link *link;
    int i;

    make_walk_rows();
    page = walk_page(&sort, NULL, 5, 2);
    assert_int_equal(page.pages->nelts, 3);
    for (i = 0; i < 3; i++) {
        link = &APR_ARRAY_IDX(page.pages, i, cp_page_link);
        assert_int_equal(link->number, i);
        assert_int_equal(link->current, i == 0);
    }
    /* page +2 is the page after page +1 */
    there = walk_page(&sort, APR_ARRAY_IDX(page.pages, 1, cp_page_link).start, 5, 2);
    there = walk_page(&sort, there.next, 5, 2);
    assert_string_equal(page_ids(&there),
                        page_ids(&(cp_page){ .rows = walk_page(&sort,
                            APR_ARRAY_IDX(page.pages, 2, cp_page_link).start, 5, 2).rows }));
    /* read backward: the pages behind, this one, and next */
    page = walk_page(&sort, CP_TOKEN_LAST, 5, 2);
    assert_int_equal(page.pages->nelts, 3);
    link = &APR_ARRAY_IDX(page.pages, 0, cp_page_link);
    assert_int_equal(link->number, -2);
    there = walk_page(&sort, link->start, 5, 2);
    assert_string_equal(page_ids(&there), "d025 d026 d027 d028 d029 ");
    assert_true(APR_ARRAY_IDX(page.pages, 2, cp_page_link).current);
    assert_null(page.next);
    assert_true(page.last_is_current);
}

static void walks_survive_deleted_boundaries(void **state)
{
    cp_find_sort sort = sort_by_n();
    cp_page first, second, back;
    int i;

    walk_two_pages(&sort, walk_page, &first, &second);
    /* the rows both tokens name go: the next page still starts after d007,
     * and back from the second page comes the first page, less d003 */
    deleted[3] = deleted[7] = deleted[4] = 1;
    assert_string_equal(page_ids(&(cp_page){ .rows = walk_page(&sort, second.next, 4, 0).rows }),
                        "d008 d009 d010 d011 ");
    back = walk_page(&sort, second.prev, 4, 0);
    assert_string_equal(page_ids(&back), "d000 d001 d002 ");
    assert_null(back.prev);
    /* every row before a page deleted: its prev leads to the first page */
    deleted[0] = deleted[1] = deleted[2] = 1;
    back = walk_page(&sort, second.prev, 4, 0);
    assert_string_equal(page_ids(&back), "d005 d006 d008 d009 ");
    assert_null(back.prev);
    /* every row after a page deleted: its next leads to the Last page */
    for (i = 8; i < WALK_ROWS; i++) {
        deleted[i] = 1;
    }
    back = walk_page(&sort, first.next, 4, 0);
    assert_string_equal(page_ids(&back), "d005 d006 ");
    assert_null(back.next);
    assert_false(back.last_is_current);
    back = walk_page(&sort, second.next, 4, 0);
    assert_string_equal(page_ids(&back), "d005 d006 ");
    assert_null(back.next);
    assert_null(back.prev);
    assert_true(back.last_is_current);
}

/* What the index's view answers the query cp_plan_keyset_page makes for
 * token: from the token's row, itself included, backward or not, at most
 * limit, with CouchDB's offset (the rows passed over) and total_rows. */
static const cp_answer *view_answer_way(const cp_token *token, int backward, int limit)
{
    cp_answer *answer = apr_pcalloc(pool, sizeof(*answer));
    int place = 0, i;

    answer->rows = apr_pcalloc(pool, sizeof(cp_row) * (apr_size_t)(limit + 1));
    answer->offset = 0;
    answer->total_rows = 0;
    if (token->key) {
        place = place_of(token->key, token->docid);
    }
    for (i = backward ? WALK_ROWS - 1 : 0; i >= 0 && i < WALK_ROWS; i += backward ? -1 : 1) {
        if (deleted[i]) {
            continue;
        }
        answer->total_rows++;
        if (token->key && (backward ? 2 * i > place : 2 * i < place)) {
            answer->offset++;
        }
        else if (answer->row_count < (apr_size_t)limit) {
            answer->rows[answer->row_count++] = walk_rows[i];
        }
    }
    return answer;
}

/* The same in the direction the token reads. */
static const cp_answer *view_answer(const cp_token *token, int limit)
{
    return view_answer_way(token, cp_keyset_reads_backward(token), limit);
}

/* A query of that role added to queries, answered by answer. */
static cp_query *push_query(apr_array_header_t *queries, cp_query_role role,
                            const cp_answer *answer)
{
    cp_query *query = apr_array_push(queries);

    memset(query, 0, sizeof(*query));
    query->role = role;
    query->answer = answer;
    return query;
}

/* The rows the other way from the token's row, as the module reads them for
 * page links both sides (cp_keyset_behind_limit rows): NULL when none are. */
static apr_array_header_t *view_behind(const cp_token *token, const cp_find_sort *sort,
                                       const apr_array_header_t *fields, int count, int links)
{
    apr_array_header_t *queries = apr_array_make(pool, 1, sizeof(cp_query));
    int limit = cp_keyset_behind_limit(token, count, links);
    cp_query *query;

    if (limit == 0) {
        return NULL;
    }
    query = push_query(queries, CP_QUERY_BACKWARD,
                       view_answer_way(token, !cp_keyset_reads_backward(token), limit));
    query->limit = limit;
    return cp_keyset_index_behind(pool, queries, token, sort, fields);
}

/* The numbered page a token leads to, read as the module reads a numbered
 * _find page from its index's view (one query, the token's row left out
 * unless the token starts at it, a view's old link; with page links, one
 * more the other way), asked again when the assembler says so. */
static cp_page walk_numbered_page(const cp_find_sort *sort, const char *text, int count,
                                  int links)
{
    apr_array_header_t *fields = apr_array_make(pool, 1, sizeof(const char *));
    cp_token token;
    cp_keyset_count counted;
    cp_page page;
    cp_token_from again;
    const cp_answer *answer;
    apr_array_header_t *rows;
    int dropped;
    cp_token_rows token_rows = cp_keyset_token_rows(sort, 1);

    APR_ARRAY_PUSH(fields, const char *) = "n";
    assert_null(cp_token_decode(pool, text, &token_rows, &token));
    for (;;) {
        answer = view_answer(&token, cp_keyset_limit(count, links)
                                         + (token.from == CP_FROM_AFTER
                                            || token.from == CP_FROM_BEFORE));
        rows = cp_keyset_index_rows(pool, answer, &token, sort, fields, &dropped);
        counted.total = answer->total_rows;
        counted.before = answer->offset + dropped;
        again = cp_keyset_page_assemble(pool, &token, rows,
                                        view_behind(&token, sort, fields, count, links), count,
                                        links, &counted, text, &page);
        if (again == token.from) {
            return page;
        }
        token.from = again;
        token.key = NULL;
        token.docid = NULL;
        text = again == CP_FROM_LAST ? CP_TOKEN_LAST : NULL;
    }
}

/* Live rows of the walk. */
static int walk_live(void)
{
    int i, n = 0;

    for (i = 0; i < WALK_ROWS; i++) {
        n += !deleted[i];
    }
    return n;
}

/* The number of the Last page of all the walk's rows, pages of count. */
static apr_int64_t walk_last_number(int count)
{
    return (WALK_ROWS + count - 1) / count;
}

/* Forward, every page numbered where its place says, the Last page's
 * number known from the first. */
static void check_numbered_page_forward(const walk_way *way, const cp_page *page, int before)
{
    assert_true(page->numbered);
    assert_int_equal(page->total_rows, WALK_ROWS);
    assert_int_equal(page->offset, before * way->count);
    assert_int_equal(page->last_number, walk_last_number(way->count));
    assert_true(before == 0 ? page->prev == NULL : page->prev != NULL);
    assert_int_equal(page->prev_is_first, before == 1);
    assert_int_equal(page->last_is_current, page->next == NULL);
}

/* Back from the Last page, which holds the remainder: every page where the
 * walk forward had it, its link marked current numbered so. */
static void check_numbered_page_backward(const walk_way *way, const cp_page *page, int before)
{
    apr_int64_t last_number = walk_last_number(way->count);

    assert_true(page->numbered);
    assert_int_equal(page->offset, (last_number - 1 - before) * way->count);
    assert_true(before == 0 ? page->next == NULL : page->next != NULL);
    assert_int_equal(page->last_is_current, before == 0);
    if (way->links && page->pages->nelts) {
        const cp_page_link *current = NULL;
        int i;

        for (i = 0; i < page->pages->nelts; i++) {
            if (APR_ARRAY_IDX(page->pages, i, cp_page_link).current) {
                current = &APR_ARRAY_IDX(page->pages, i, cp_page_link);
            }
        }
        assert_non_null(current);
        assert_int_equal(current->number, last_number - before);
    }
}

static void numbered_walk_is_aligned_and_exact(const walk_way *way)
{
    int pages;
    const char *forward = walk_pages(way, 0, check_numbered_page_forward, &pages);

    assert_int_equal(pages, walk_last_number(way->count));
    assert_string_equal(forward, walk_ids());
    assert_string_equal(walk_pages(way, 1, check_numbered_page_backward, NULL), walk_ids());
}

static void numbered_walks_are_aligned_and_exact(void **state)
{
    walk_every_way(walk_numbered_page, 7, 0, numbered_walk_is_aligned_and_exact);
}

static void numbered_pages_know_their_ends_after_deletions(void **state)
{
    cp_find_sort sort = sort_by_n();
    cp_page first, second, page;
    int i;

    walk_two_pages(&sort, walk_numbered_page, &first, &second);
    /* every row before the second page goes: it is the first now, by count */
    deleted[0] = deleted[1] = deleted[2] = deleted[3] = 1;
    page = walk_numbered_page(&sort, first.next, 4, 0);
    assert_string_equal(page_ids(&page), "d004 d005 d006 d007 ");
    assert_int_equal(page.offset, 0);
    assert_null(page.prev);
    assert_int_equal(page.total_rows, walk_live());
    /* the rows the tokens name go: no row lost, none repeated */
    deleted[7] = deleted[8] = 1;
    page = walk_numbered_page(&sort, second.next, 4, 0);
    assert_string_equal(page_ids(&page), "d009 d010 d011 d012 ");
    assert_int_equal(page.offset, 3);
    page = walk_numbered_page(&sort, page.prev, 4, 0);
    assert_string_equal(page_ids(&page), "d004 d005 d006 ");
    assert_null(page.prev);
    assert_int_equal(page.offset, 0);
    /* every row after a page read backward goes: it has no next */
    for (i = 9; i < WALK_ROWS; i++) {
        deleted[i] = 1;
    }
    page = walk_numbered_page(&sort, second.prev, 4, 0);
    assert_null(page.prev);
    page = walk_numbered_page(&sort, CP_TOKEN_LAST, 4, 0);
    assert_string_equal(page_ids(&page), "d004 d005 d006 ");
    assert_null(page.next);
    assert_null(page.prev);
    assert_true(page.last_is_current);
    assert_int_equal(page.last_number, 1);
    assert_string_equal(page.last, CP_TOKEN_LAST);
}

/* CouchDB's count disagreeing with the rows read (a backend that misreports
 * offsets): the page is numbered relative to itself, as from _find. */
static void a_count_that_disagrees_numbers_nothing(void **state)
{
    cp_find_sort sort = sort_by_n();
    apr_array_header_t *fields = apr_array_make(pool, 1, sizeof(const char *));
    cp_token token = { .from = CP_FROM_FIRST };
    const cp_answer *answer;
    apr_array_header_t *rows;
    cp_keyset_count counted;
    cp_page page;
    int dropped;

    make_walk_rows();
    APR_ARRAY_PUSH(fields, const char *) = "n";
    answer = view_answer(&token, 5);
    rows = cp_keyset_index_rows(pool, answer, &token, &sort, fields, &dropped);
    assert_int_equal(dropped, 0);
    counted.total = WALK_ROWS;
    counted.before = 3;      /* a first page after rows */
    assert_int_equal(cp_keyset_page_assemble(pool, &token, rows, NULL, 4, 0, &counted, NULL, &page),
                     CP_FROM_FIRST);
    assert_false(page.numbered);
    assert_int_equal(page.total_rows, -1);
    counted.before = 0;
    counted.total = 3;       /* fewer rows than were read */
    cp_keyset_page_assemble(pool, &token, rows, NULL, 4, 0, &counted, NULL, &page);
    assert_false(page.numbered);
    counted.total = -1;
    cp_keyset_page_assemble(pool, &token, rows, NULL, 4, 0, &counted, NULL, &page);
    assert_false(page.numbered);
    counted.total = 40;
    cp_keyset_page_assemble(pool, &token, rows, NULL, 4, 0, &counted, NULL, &page);
    assert_true(page.numbered);
}

/* The view key of a token's row: the location's equalities, then the
 * token's values for the index's fields after them; the token's values for
 * fields the equalities fix are never used. */
static void index_keys_keep_the_locations_equalities(void **state)
{
    apr_array_header_t *fields = apr_array_make(pool, 3, sizeof(const char *));
    const json_t *low = parse("[\"post\"]");

    APR_ARRAY_PUSH(fields, const char *) = "type";
    APR_ARRAY_PUSH(fields, const char *) = "group";
    assert_string_equal(cp_json_text(pool, cp_keyset_index_key(pool, fields, low,
                                                             parse("[\"g1\"]"))),
                        "[\"post\",\"g1\"]");
    assert_string_equal(cp_json_text(pool, cp_keyset_index_key(pool, fields, low,
                                                             parse("[\"other\",\"g1\"]"))),
                        "[\"post\",\"g1\"]");
    assert_string_equal(cp_json_text(pool, cp_keyset_index_key(pool, fields, NULL,
                                                             parse("[{\"$gt\":null},1]"))),
                        "[{\"$gt\":null},1]");
    assert_null(cp_keyset_index_key(pool, fields, NULL, parse("[1]")));
    assert_null(cp_keyset_index_key(pool, fields, low, parse("[]")));
    assert_null(cp_keyset_index_key(pool, fields, low, parse("{}")));
    APR_ARRAY_PUSH(fields, const char *) = "title";
    assert_string_equal(cp_json_text(pool, cp_keyset_index_key(pool, fields,
                                                             parse("[\"post\",\"g1\",\"t\"]"),
                                                             parse("[\"x\",\"y\",\"z\"]"))),
                        "[\"post\",\"g1\",\"t\"]");
}

/* The token's own row is left out only when it comes first; CouchDB's
 * count of the rest, from the probes' offsets, the way it was read. */
static void index_reads_leave_out_the_tokens_row_and_count_the_rest(void **state)
{
    cp_find_sort sort = sort_by_n();
    apr_array_header_t *fields = apr_array_make(pool, 1, sizeof(const char *));
    apr_array_header_t *queries = apr_array_make(pool, 3, sizeof(cp_query));
    cp_token token = { .from = CP_FROM_AFTER, .docid = "d005" };
    cp_answer probe_start = { 0 }, probe_end = { 0 }, read = { 0 };
    apr_array_header_t *rows;
    cp_keyset_count counted;
    int dropped;

    make_walk_rows();
    APR_ARRAY_PUSH(fields, const char *) = "n";
    token.key = walk_rows[5].key;
    read.rows = &walk_rows[5];
    read.row_count = 3;
    rows = cp_keyset_index_rows(pool, &read, &token, &sort, fields, &dropped);
    assert_int_equal(dropped, 1);
    assert_int_equal(rows->nelts, 2);
    assert_string_equal(APR_ARRAY_IDX(rows, 0, const cp_row *)->id, "d006");
    token.docid = "d004";
    rows = cp_keyset_index_rows(pool, &read, &token, &sort, fields, &dropped);
    assert_int_equal(dropped, 0);
    assert_int_equal(rows->nelts, 3);

    probe_start.offset = 10;
    probe_end.offset = 20;
    read.total_rows = 100;
    read.offset = 30;
    push_query(queries, CP_QUERY_RANGE_START, &probe_start);
    push_query(queries, CP_QUERY_RANGE_END, &probe_end);
    push_query(queries, CP_QUERY_FORWARD, &read);
    cp_keyset_index_count(queries, 0, 1, &counted);
    assert_int_equal(counted.total, 70);
    assert_int_equal(counted.before, 21);
    cp_keyset_index_count(queries, 1, 0, &counted);
    assert_int_equal(counted.before, 10);
    /* a read that starts inside the rows the probe says precede the range */
    read.offset = 15;
    cp_keyset_index_count(queries, 1, 0, &counted);
    assert_int_equal(counted.total, -1);
    read.offset = -1;
    cp_keyset_index_count(queries, 0, 0, &counted);
    assert_int_equal(counted.before, -1);
    /* over the whole index: no probes */
    read.offset = 30;
    queries->nelts = 0;
    push_query(queries, CP_QUERY_FORWARD, &read);
    cp_keyset_index_count(queries, 0, 0, &counted);
    assert_int_equal(counted.total, 100);
    assert_int_equal(counted.before, 30);
}

static void hostile_tokens_are_refused(void **state)
{
    const char *names[] = { "date", "n", NULL };
    cp_find_sort sort = sort_of(0, names);
    cp_token token;
    const char *bad[] = {
        "[[1, 2], \"x\"]", "{\"a\": [[1, 2], \"x\"], \"b\": [[1, 2], \"x\"]}",
        "{\"c\": [[1, 2], \"x\"]}", "{\"a\": [[1, 2]]}", "{\"a\": [[1], \"x\"]}",
        "{\"a\": [[1, 2, 3], \"x\"]}", "{\"a\": [{\"$gt\": null}, \"x\"]}",
        "{\"a\": [[1, 2], 7]}", "{\"a\": [[1, 2], \"\"]}", "{\"a\": [[1, 2], \"x\\u0000y\"]}",
        "{\"a\": [[1, 2], \"x\", 1]}", "{\"a\": ", "last ", "",
        "{\"a\": [[1, 2], 123456789012345678901234567890]}",
    };
    apr_size_t i;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        if (!keyset_decode(bad[i], &sort, &token)) {
            fail_msg("token '%s' accepted", bad[i]);
        }
    }
    /* operators in a token are values: they reach CouchDB as arguments */
    assert_null(keyset_decode("{\"b\": [[{\"$gt\": null}, {\"$or\": []}], \"x\"]}", &sort,
                              &token));
    assert_int_equal(token.from, CP_FROM_BEFORE);
    assert_string_equal(cp_json_text(pool, cp_find_beyond(pool, &sort, token.key, token.docid,
                                                          1)),
                        "{\"$and\":[{\"date\":{\"$lte\":{\"$gt\":null}}},{\"$or\":["
                        "{\"date\":{\"$lt\":{\"$gt\":null}}},"
                        "{\"date\":{\"$eq\":{\"$gt\":null}},\"n\":{\"$lt\":{\"$or\":[]}}},"
                        "{\"date\":{\"$eq\":{\"$gt\":null}},\"n\":{\"$eq\":{\"$or\":[]}},"
                        "\"_id\":{\"$lt\":\"x\"}}]}]}");
    assert_string_equal(cp_token_encode_beside(pool, CP_FROM_AFTER, parse("[1, \"b\"]"), "d\"1"),
                        "{\"a\":[[1,\"b\"],\"d\\\"1\"]}");
}

/* A numbered location's old links are a view's tokens of its index's view
 * ([view key, id], at the row): each starts its page at its row, numbered
 * at its place, or, its row deleted, at the next; past the last row, the
 * Last page. The page's own links are keyset tokens. */
static void view_tokens_start_a_numbered_page_at_their_row(void **state)
{
    cp_find_sort sort = sort_by_n();
    cp_page page;

    make_walk_rows();
    page = walk_numbered_page(&sort, "[[1],\"d004\"]", 4, 1);
    assert_string_equal(page_ids(&page), "d004 d005 d006 d007 ");
    assert_true(page.numbered);
    assert_int_equal(page.offset, 4);
    assert_true(page.prev_is_first);
    assert_string_equal(page.prev, "{\"b\":[[1],\"d004\"]}");
    assert_string_equal(page.next, "{\"a\":[[2],\"d007\"]}");
    deleted[4] = 1;
    page = walk_numbered_page(&sort, "[[1],\"d004\"]", 4, 1);
    assert_string_equal(page_ids(&page), "d005 d006 d007 d008 ");
    assert_int_equal(page.offset, 4);
    deleted[4] = 0;
    /* past the last row: the Last page, aligned with the first page's */
    page = walk_numbered_page(&sort, "[[99],\"d999\"]", 4, 1);
    assert_true(page.last_is_current);
    assert_int_equal(page.offset, 36);
    assert_string_equal(page.last, CP_TOKEN_LAST);
    /* keyset tokens read the same there */
    page = walk_numbered_page(&sort, "{\"a\":[[1],\"d003\"]}", 4, 1);
    assert_string_equal(page_ids(&page), "d004 d005 d006 d007 ");
}

/* Whether a numbered page's links are the pages around it, numbered as
 * their places say: current - links to current + links within the
 * location, each leading to its page (the first page's without a token). */
static void check_links_both_sides(const walk_way *way, const cp_page *page, int before)
{
    int count = way->count, links = way->links;
    apr_int64_t current = page->offset / count + 1 + (page->offset % count != 0);
    apr_int64_t low = current - links < 1 ? 1 : current - links;
    apr_int64_t high = current + links > page->last_number ? page->last_number
                                                           : current + links;
    int i;

    assert_true(page->numbered);
    assert_int_equal(page->pages->nelts, high - low + 1);
    for (i = 0; i < page->pages->nelts; i++) {
        const cp_page_link *link = &APR_ARRAY_IDX(page->pages, i, cp_page_link);
        cp_page linked;

        assert_int_equal(link->number, low + i);
        if (link->current) {
            assert_int_equal(link->number, current);
            continue;
        }
        assert_true(link->number == 1 ? link->start == NULL : link->start != NULL);
        linked = walk_numbered_page(way->sort, link->start, count, links);
        assert_int_equal(linked.offset, (link->number - 1) * count);
    }
}

static void numbered_walk_links_both_sides(const walk_way *way)
{
    walk_pages(way, 0, check_links_both_sides, NULL);
    walk_pages(way, 1, check_links_both_sides, NULL);
}

/* With page links, a numbered page reads the rows the other way too: its
 * links reach as many pages on both sides, numbered as the view location
 * numbered them, whichever way it was read; from an old link's row too. */
static void numbered_pages_link_both_sides(void **state)
{
    cp_find_sort sort = sort_by_n();
    walk_way way = { &sort, walk_numbered_page, 4, 2 };
    cp_page page;

    walk_every_way(walk_numbered_page, 6, 1, numbered_walk_links_both_sides);
    /* an old link at row 8, pages of 4: the page is the third */
    page = walk_numbered_page(&sort, "[[2],\"d008\"]", 4, 2);
    assert_int_equal(page.offset, 8);
    check_links_both_sides(&way, &page, 0);
    assert_null(APR_ARRAY_IDX(page.pages, 0, cp_page_link).start);
    assert_string_equal(APR_ARRAY_IDX(page.pages, 1, cp_page_link).start,
                        "{\"b\":[[2],\"d008\"]}");
}

/* The Mango body a token asks: beyond its row, the way it reads; a view's
 * token, at its row, bounds no _find query. */
static void find_bodies_go_the_tokens_way(void **state)
{
    cp_find_sort sort = sort_by_n();
    cp_find_spec spec = { .selector = parse("{\"type\": \"post\"}"), .sort = &sort };
    cp_token token = { .from = CP_FROM_FIRST };

    assert_string_equal(cp_keyset_find_body(pool, &spec, &token, 5),
                        cp_find_body(pool, &spec, NULL, NULL, 0, 5));
    token.from = CP_FROM_LAST;
    assert_string_equal(cp_keyset_find_body(pool, &spec, &token, 5),
                        cp_find_body(pool, &spec, NULL, NULL, 1, 5));
    token.from = CP_FROM_AFTER;
    token.key = parse("[3]");
    token.docid = "d9";
    assert_string_equal(cp_keyset_find_body(pool, &spec, &token, 5),
                        cp_find_body(pool, &spec, token.key, "d9", 0, 5));
    token.from = CP_FROM_BEFORE;
    assert_string_equal(cp_keyset_find_body(pool, &spec, &token, 5),
                        cp_find_body(pool, &spec, token.key, "d9", 1, 5));
    token.from = CP_FROM_ROW;
    assert_null(cp_keyset_find_body(pool, &spec, &token, 5));
}

/* The ties and the rows past them, asked apart: exact text, each way and
 * with two sort fields; no part for a token without a row. */
static void find_parts_ask_the_ties_then_the_rest(void **state)
{
    const char *names[] = { "a", "b", NULL };
    cp_find_sort sort = sort_by_n(), two = sort_of(0, names), down = sort_of(1, names);
    cp_find_spec spec = { .selector = parse("{\"type\":\"post\"}"), .sort = &sort };
    cp_token token = { .from = CP_FROM_AFTER, .key = parse("[3]"), .docid = "d9" };

    assert_string_equal(cp_keyset_find_part_body(pool, &spec, &token, 5, CP_FIND_TIES),
                        "{\"selector\":{\"$and\":[{\"type\":\"post\"},{\"n\":{\"$eq\":3},"
                        "\"_id\":{\"$gt\":\"d9\"}}]},\"sort\":[{\"n\":\"asc\"}],\"limit\":5}");
    assert_string_equal(cp_keyset_find_part_body(pool, &spec, &token, 2, CP_FIND_PAST_TIES),
                        "{\"selector\":{\"$and\":[{\"type\":\"post\"},{\"$and\":[{\"n\":"
                        "{\"$gte\":3}},{\"$or\":[{\"n\":{\"$gt\":3}}]}]}]},\"sort\":"
                        "[{\"n\":\"asc\"}],\"limit\":2}");
    token.from = CP_FROM_BEFORE;
    assert_string_equal(cp_keyset_find_part_body(pool, &spec, &token, 5, CP_FIND_TIES),
                        "{\"selector\":{\"$and\":[{\"type\":\"post\"},{\"n\":{\"$eq\":3},"
                        "\"_id\":{\"$lt\":\"d9\"}}]},\"sort\":[{\"n\":\"desc\"}],\"limit\":5}");
    /* two fields, descending, after a row: the ties equal on both */
    token.from = CP_FROM_AFTER;
    token.key = parse("[1,2]");
    assert_string_equal(cp_json_text(pool, cp_find_beyond_part(pool, &down, token.key, "x", 0,
                                                               CP_FIND_TIES)),
                        "{\"a\":{\"$eq\":1},\"b\":{\"$eq\":2},\"_id\":{\"$lt\":\"x\"}}");
    assert_string_equal(cp_json_text(pool, cp_find_beyond_part(pool, &two, token.key, "x", 0,
                                                               CP_FIND_PAST_TIES)),
                        "{\"$and\":[{\"a\":{\"$gte\":1}},{\"$or\":[{\"a\":{\"$gt\":1}},"
                        "{\"a\":{\"$eq\":1},\"b\":{\"$gt\":2}}]}]}");
    /* no part without a row, nor for a sort by _id alone */
    token.from = CP_FROM_FIRST;
    assert_null(cp_keyset_find_part_body(pool, &spec, &token, 5, CP_FIND_TIES));
    token.from = CP_FROM_ROW;
    assert_null(cp_keyset_find_part_body(pool, &spec, &token, 5, CP_FIND_TIES));
    sort = sort_of(0, (const char *[]){ "_id", NULL });
    token.from = CP_FROM_AFTER;
    token.key = parse("[]");
    assert_null(cp_keyset_find_part_body(pool, &spec, &token, 5, CP_FIND_PAST_TIES));
}

/* A page that crosses a group of ties reads the next value of the open
 * sort field from the index's view (as fresh as the _find), and asks the
 * rest from it: $gte w ($lte the other way), every other sort field at its
 * value; none past the row's value: nothing to ask; an answer it cannot
 * use: the rest from the row's values. */
static void find_rest_from_the_next_value(void **state)
{
    const char *names[] = { "type", "n", NULL };
    cp_find_sort sort = sort_by_n(), two = sort_of(0, names), down = sort_of(1, names);
    cp_find_spec spec = { .selector = parse("{\"type\":\"post\",\"x\":{\"$regex\":\"a\"}}"),
                          .sort = &sort, .update = CP_MANGO_FALSE, .index_ddoc = "n-id" };
    cp_token token = { .from = CP_FROM_AFTER, .key = parse("[3]"), .docid = "d9" };
    apr_array_header_t *fields = apr_array_make(pool, 3, sizeof(const char *));
    const char *rows = "{\"total_rows\":9,\"offset\":4,\"rows\":[{\"id\":\"d2\",\"key\":"
                       "[5,\"d2\"],\"value\":null}]}";
    int open = -1, none = 1;

    APR_ARRAY_PUSH(fields, const char *) = "n";
    APR_ARRAY_PUSH(fields, const char *) = "_id";
    assert_string_equal(cp_keyset_find_next_query(pool, &spec, &token, fields, 0, &open),
                        "?startkey=%5b3%2c%7b%22%5cuffff%22%3anull%7d%5d&endkey=%5b%7b%22%5c"
                        "uffff%22%3anull%7d%5d&limit=1&reduce=false&update=false");
    assert_int_equal(open, 0);
    assert_string_equal(cp_keyset_find_from_answer(pool, &spec, &token, open, 0, rows,
                                                   strlen(rows), 4, &none),
                        "{\"selector\":{\"$and\":[{\"type\":\"post\",\"x\":{\"$regex\":"
                        "\"a\"}},{\"n\":{\"$gte\":5,\"$gt\":3}}]},\"sort\":[{\"n\":\"asc\"}],"
                        "\"limit\":4,\"use_index\":[\"n-id\"],\"allow_fallback\":false,"
                        "\"update\":false}");
    assert_false(none);
    /* nothing past the row's value; an answer that is no view's */
    assert_null(cp_keyset_find_from_answer(pool, &spec, &token, open, 0, "{\"rows\":[]}", 11, 4,
                                           &none));
    assert_true(none);
    assert_null(cp_keyset_find_from_answer(pool, &spec, &token, open, 0, "{\"error\":1}", 11, 4,
                                           &none));
    assert_false(none);
    /* its own value again (no row past it): the rest from the row's */
    rows = "{\"rows\":[{\"id\":\"d1\",\"key\":[3,\"d1\"]}]}";
    assert_null(cp_keyset_find_from_answer(pool, &spec, &token, open, 0, rows, strlen(rows), 4,
                                           &none));
    /* backward, the type fixed by the selector: down from before [3] */
    spec.sort = &two;
    spec.update = CP_MANGO_UNSENT;
    spec.index_ddoc = NULL;
    token.from = CP_FROM_BEFORE;
    token.key = parse("[\"post\",3]");
    fields->nelts = 0;
    APR_ARRAY_PUSH(fields, const char *) = "type";
    APR_ARRAY_PUSH(fields, const char *) = "n";
    APR_ARRAY_PUSH(fields, const char *) = "_id";
    assert_string_equal(cp_keyset_find_next_query(pool, &spec, &token, fields, 0, &open),
                        "?startkey=%5b%22post%22%2c3%5d&endkey=%5b%22post%22%5d"
                        "&descending=true&limit=1&reduce=false");
    assert_int_equal(open, 1);
    rows = "{\"rows\":[{\"id\":\"d0\",\"key\":[\"post\",1,\"d0\"]}]}";
    assert_string_equal(cp_keyset_find_from_answer(pool, &spec, &token, open, 0, rows,
                                                   strlen(rows), 2, &none),
                        "{\"selector\":{\"$and\":[{\"type\":\"post\",\"x\":{\"$regex\":"
                        "\"a\"}},{\"type\":{\"$eq\":\"post\"},\"n\":{\"$lte\":1,\"$lt\":3}}]},"
                        "\"sort\":[{\"type\":\"desc\"},{\"n\":\"desc\"}],\"limit\":2}");
    /* descending, forward: down as well */
    spec.sort = &down;
    token.from = CP_FROM_AFTER;
    assert_non_null(strstr(cp_keyset_find_next_query(pool, &spec, &token, fields, 0, &open),
                           "&descending=true"));
    /* no index known, a stale _find through an index it does not name, or
     * a token without a row: no read */
    assert_null(cp_keyset_find_next_query(pool, &spec, &token, NULL, 0, &open));
    spec.update = CP_MANGO_FALSE;
    spec.index_ddoc = NULL;
    assert_null(cp_keyset_find_next_query(pool, &spec, &token, fields, 0, &open));
    spec.index_ddoc = "n-id";
    assert_non_null(cp_keyset_find_next_query(pool, &spec, &token, fields, 0, &open));
    token.from = CP_FROM_FIRST;
    assert_null(cp_keyset_find_next_query(pool, &spec, &token, fields, 0, &open));
}

/* A sort of two open fields, [cat, day]: level 0 reads the next day
 * among the row's cat's keys and asks the rest from it within that cat;
 * level 1 the next cat, and asks every row from it, its days left to the
 * selector; there is no level 2. */
static void find_rest_a_level_at_a_time(void **state)
{
    const char *names[] = { "cat", "day", NULL };
    cp_find_sort sort = sort_of(0, names);
    cp_find_spec spec = { .selector = parse("{\"cat\":{\"$gte\":null},\"x\":{\"$regex\":\"a\"}}"),
                          .sort = &sort };
    cp_token token = { .from = CP_FROM_AFTER, .key = parse("[\"c1\",\"d3\"]"), .docid = "m9" };
    apr_array_header_t *fields = apr_array_make(pool, 3, sizeof(const char *));
    const char *days = "{\"rows\":[{\"id\":\"m2\",\"key\":[\"c1\",\"d5\",\"m2\"]}]}";
    const char *cats = "{\"rows\":[{\"id\":\"m4\",\"key\":[\"c2\",\"d0\",\"m4\"]}]}";
    int open = -1, none = 1;

    (void)state;
    APR_ARRAY_PUSH(fields, const char *) = "cat";
    APR_ARRAY_PUSH(fields, const char *) = "day";
    APR_ARRAY_PUSH(fields, const char *) = "_id";
    assert_string_equal(cp_keyset_find_next_query(pool, &spec, &token, fields, 0, &open),
                        "?startkey=%5b%22c1%22%2c%22d3%22%2c%7b%22%5cuffff%22%3anull%7d%5d"
                        "&endkey=%5b%22c1%22%2c%7b%22%5cuffff%22%3anull%7d%5d"
                        "&limit=1&reduce=false");
    assert_int_equal(open, 1);
    assert_string_equal(cp_keyset_find_from_answer(pool, &spec, &token, open, 0, days,
                                                   strlen(days), 7, &none),
                        "{\"selector\":{\"$and\":[{\"cat\":{\"$gte\":null},\"x\":{\"$regex\":"
                        "\"a\"}},{\"cat\":{\"$eq\":\"c1\"},\"day\":{\"$gte\":\"d5\","
                        "\"$gt\":\"d3\"}}]},\"sort\":[{\"cat\":\"asc\"},{\"day\":\"asc\"}],"
                        "\"limit\":7}");
    assert_string_equal(cp_keyset_find_next_query(pool, &spec, &token, fields, 1, &open),
                        "?startkey=%5b%22c1%22%2c%7b%22%5cuffff%22%3anull%7d%5d"
                        "&endkey=%5b%7b%22%5cuffff%22%3anull%7d%5d&limit=1&reduce=false");
    assert_int_equal(open, 0);
    assert_string_equal(cp_keyset_find_from_answer(pool, &spec, &token, open, 1, cats,
                                                   strlen(cats), 3, &none),
                        "{\"selector\":{\"$and\":[{\"cat\":{\"$gte\":null},\"x\":{\"$regex\":"
                        "\"a\"}},{\"cat\":{\"$gte\":\"c2\",\"$gt\":\"c1\"}}]},"
                        "\"sort\":[{\"cat\":\"asc\"},{\"day\":\"asc\"}],\"limit\":3}");
    assert_false(none);
    /* the level's own value again: the rest from the row's values */
    assert_null(cp_keyset_find_from_answer(pool, &spec, &token, open, 1, days, strlen(days), 3,
                                           &none));
    assert_null(cp_keyset_find_next_query(pool, &spec, &token, fields, 2, &open));
    /* backward: before [c1, d3] down to [c1], then before [c1] down to [] */
    token.from = CP_FROM_BEFORE;
    assert_string_equal(cp_keyset_find_next_query(pool, &spec, &token, fields, 0, &open),
                        "?startkey=%5b%22c1%22%2c%22d3%22%5d&endkey=%5b%22c1%22%5d"
                        "&descending=true&limit=1&reduce=false");
    assert_string_equal(cp_keyset_find_next_query(pool, &spec, &token, fields, 1, &open),
                        "?startkey=%5b%22c1%22%5d&endkey=%5b%5d&descending=true&limit=1"
                        "&reduce=false");
}

/* Rows of the given ids. */
static apr_array_header_t *rows_of(const char *const *ids)
{
    apr_array_header_t *rows = apr_array_make(pool, 4, sizeof(const cp_row *));

    for (; *ids; ids++) {
        cp_row *row = apr_pcalloc(pool, sizeof(*row));

        row->id = *ids;
        APR_ARRAY_PUSH(rows, const cp_row *) = row;
    }
    return rows;
}

static const char *ids_of(const apr_array_header_t *rows)
{
    const char *out = "";
    int i;

    for (i = 0; i < rows->nelts; i++) {
        out = apr_pstrcat(pool, out, i ? " " : "", APR_ARRAY_IDX(rows, i, const cp_row *)->id,
                          NULL);
    }
    return out;
}

/* The rest joins the ties up to the limit; a row both reads found (edited
 * between them) is kept where the later found it, and where that left a
 * full read short, the rest is asked again. */
static void find_parts_join_without_repeats(void **state)
{
    apr_array_header_t *rows = rows_of((const char *[]){ "t1", "t2", NULL });

    assert_int_equal(cp_keyset_find_join(rows, rows_of((const char *[]){ "r1", "r2", NULL }),
                                         2, 4), 0);
    assert_string_equal(ids_of(rows), "t1 t2 r1 r2");
    /* a short read ends the rows: no more to ask */
    rows = rows_of((const char *[]){ "t1", "t2", NULL });
    assert_int_equal(cp_keyset_find_join(rows, rows_of((const char *[]){ "t2", NULL }), 2, 4),
                     0);
    assert_string_equal(ids_of(rows), "t1 t2");
    /* a full read with a row of the ties: asked again with the limit */
    rows = rows_of((const char *[]){ "t1", "t2", NULL });
    assert_int_equal(cp_keyset_find_join(rows, rows_of((const char *[]){ "t1", "r1", NULL }),
                                         2, 4), 1);
    assert_string_equal(ids_of(rows), "t1 t2");
    assert_int_equal(cp_keyset_find_join(rows, rows_of((const char *[]){ "t1", "r1", "r2",
                                                                         "r3", NULL }), 4, 4),
                     0);
    assert_string_equal(ids_of(rows), "t2 t1 r1 r2");
}

/* The URL of the query a numbered page of 6 rows, no page links, asks of
 * plan's index's view for the token text reads (into token). */
static const char *index_query_url(const cp_plan *plan, const apr_array_header_t *fields,
                                   const cp_token_rows *token_rows, const char *text,
                                   cp_token *token)
{
    apr_array_header_t *queries;

    assert_null(cp_token_decode(pool, text, token_rows, token));
    queries = cp_keyset_index_queries(pool, plan, fields, plan->low_key, token, 6, 0);
    return cp_plan_query_url(pool, plan->index_url, cp_plan_query(queries, CP_QUERY_FORWARD));
}

/* The view parameters a numbered page asks of its index's view: from the
 * range's start (or end, backward), or from the token's row, the
 * location's equalities before a keyset token's sort values and one row
 * more for the row itself; a view's token holds its view key and starts
 * with its row. */
static void index_queries_start_at_the_tokens_row(void **state)
{
    const char *names[] = { "date", NULL };
    cp_find_sort sort = sort_of(0, names);
    apr_array_header_t *fields = apr_array_make(pool, 2, sizeof(const char *));
    cp_view view = view_of("http://h/db/_design/i/_view/by-type-date");
    cp_token_rows token_rows = cp_keyset_token_rows(&sort, 1);
    cp_token token;
    cp_plan plan;

    APR_ARRAY_PUSH(fields, const char *) = "type";
    APR_ARRAY_PUSH(fields, const char *) = "date";
    view.include_docs = 1;
    plan = plan_of(&view, NULL, "[\"post\"]", "[\"post\",{\"\\uffff\":null}]", 5, 0);
    assert_string_equal(index_query_url(&plan, fields, &token_rows, NULL, &token),
                        "http://h/db/_design/i/_view/by-type-date?limit=6&reduce=false"
                        "&startkey=%5b%22post%22%5d"
                        "&endkey=%5b%22post%22%2c%7b%22%ef%bf%bf%22%3anull%7d%5d"
                        "&include_docs=true");
    assert_string_equal(index_query_url(&plan, fields, &token_rows,
                                        "{\"a\":[[\"2020\"],\"d1\"]}", &token),
                        "http://h/db/_design/i/_view/by-type-date?limit=7&reduce=false"
                        "&startkey=%5b%22post%22%2c%222020%22%5d&startkey_docid=d1"
                        "&endkey=%5b%22post%22%2c%7b%22%ef%bf%bf%22%3anull%7d%5d"
                        "&include_docs=true");
    assert_string_equal(index_query_url(&plan, fields, &token_rows,
                                        "{\"b\":[[\"2020\"],\"d1\"]}", &token),
                        "http://h/db/_design/i/_view/by-type-date?limit=7&reduce=false"
                        "&descending=true&startkey=%5b%22post%22%2c%222020%22%5d"
                        "&startkey_docid=d1&endkey=%5b%22post%22%5d&include_docs=true");
    /* an old link: the view key it holds, the row itself first */
    assert_string_equal(index_query_url(&plan, fields, &token_rows,
                                        "[[\"post\",\"2020\"],\"d1\"]", &token),
                        "http://h/db/_design/i/_view/by-type-date?limit=6&reduce=false"
                        "&startkey=%5b%22post%22%2c%222020%22%5d&startkey_docid=d1"
                        "&endkey=%5b%22post%22%2c%7b%22%ef%bf%bf%22%3anull%7d%5d"
                        "&include_docs=true");
    assert_int_equal(token.from, CP_FROM_ROW);
    /* a keyset token too short for the index's fields names no row */
    token.from = CP_FROM_AFTER;
    token.key = parse("[]");
    assert_null(cp_keyset_index_queries(pool, &plan, fields, plan.low_key, &token, 6, 0));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        UNIT_TEST(walks_both_ways_read_every_row_once),
        UNIT_TEST(links_name_the_pages_read_through),
        UNIT_TEST(walks_survive_deleted_boundaries),
        UNIT_TEST(numbered_walks_are_aligned_and_exact),
        UNIT_TEST(numbered_pages_know_their_ends_after_deletions),
        UNIT_TEST(a_count_that_disagrees_numbers_nothing),
        UNIT_TEST(index_keys_keep_the_locations_equalities),
        UNIT_TEST(index_reads_leave_out_the_tokens_row_and_count_the_rest),
        UNIT_TEST(hostile_tokens_are_refused),
        UNIT_TEST(view_tokens_start_a_numbered_page_at_their_row),
        UNIT_TEST(numbered_pages_link_both_sides),
        UNIT_TEST(find_bodies_go_the_tokens_way),
        UNIT_TEST(find_parts_ask_the_ties_then_the_rest),
        UNIT_TEST(find_parts_join_without_repeats),
        UNIT_TEST(find_rest_from_the_next_value),
        UNIT_TEST(find_rest_a_level_at_a_time),
        UNIT_TEST(index_queries_start_at_the_tokens_row),
    };

    RUN_UNIT_TESTS("couchpage_keyset", tests);
}
