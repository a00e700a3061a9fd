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

static void walks_both_ways_read_every_row_once(void **state)
{
    const char *names[] = { "n", NULL };
    cp_find_sort sort = sort_of(0, names);
    int count, links;

    make_walk_rows();
    for (count = 1; count <= 7; count++) {
        for (links = 0; links <= 2; links++) {
            const char *forward = "", *backward = "", *text = NULL;
            cp_page page;
            int pages = 0;

            do {
                page = walk_page(&sort, text, count, links);
                assert_true(page.rows->nelts == count || !page.next);
                assert_true(pages == 0 ? page.prev == NULL : page.prev != NULL);
                forward = apr_pstrcat(pool, forward, page_ids(&page), NULL);
                text = page.next;
            } while (text && ++pages < 100);
            assert_string_equal(forward, walk_ids());

            text = CP_TOKEN_LAST;
            pages = 0;
            do {
                page = walk_page(&sort, text, count, links);
                assert_true(pages == 0 ? page.next == NULL : page.next != NULL);
                backward = apr_pstrcat(pool, page_ids(&page), backward, NULL);
                text = page.prev;
            } while (text && ++pages < 100);
            assert_string_equal(backward, walk_ids());
        }
    }
}

static void links_name_the_pages_read_through(void **state)
{
    const char *names[] = { "n", NULL };
    cp_find_sort sort = sort_of(0, names);
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
    const char *names[] = { "n", NULL };
    cp_find_sort sort = sort_of(0, names);
    cp_page first, second, back;
    int i;

    make_walk_rows();
    first = walk_page(&sort, NULL, 4, 0);
    second = walk_page(&sort, first.next, 4, 0);
    assert_string_equal(page_ids(&second), "d004 d005 d006 d007 ");
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
    query = apr_array_push(queries);
    memset(query, 0, sizeof(*query));
    query->role = CP_QUERY_BACKWARD;
    query->limit = limit;
    query->answer = view_answer_way(token, !cp_keyset_reads_backward(token), limit);
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

static void numbered_walks_are_aligned_and_exact(void **state)
{
    const char *names[] = { "n", NULL };
    cp_find_sort sort = sort_of(0, names);
    int count, links;

    make_walk_rows();
    for (count = 1; count <= 7; count++) {
        for (links = 0; links <= 2; links++) {
            const char *forward = "", *backward = "", *text = NULL;
            apr_int64_t last_number = (WALK_ROWS + count - 1) / count;
            cp_page page;
            int pages = 0;

            do {
                page = walk_numbered_page(&sort, text, count, links);
                assert_true(page.numbered);
                assert_int_equal(page.total_rows, WALK_ROWS);
                assert_int_equal(page.offset, pages * count);
                assert_int_equal(page.last_number, last_number);
                assert_true(pages == 0 ? page.prev == NULL : page.prev != NULL);
                assert_int_equal(page.prev_is_first, pages == 1);
                assert_int_equal(page.last_is_current, page.next == NULL);
                forward = apr_pstrcat(pool, forward, page_ids(&page), NULL);
                text = page.next;
            } while (text && ++pages < 100);
            assert_int_equal(pages + 1, last_number);
            assert_string_equal(forward, walk_ids());

            /* back from the Last page, which holds the remainder: every page
             * where the walk forward had it */
            text = CP_TOKEN_LAST;
            pages = 0;
            do {
                page = walk_numbered_page(&sort, text, count, links);
                assert_true(page.numbered);
                assert_int_equal(page.offset, (last_number - 1 - pages) * count);
                assert_true(pages == 0 ? page.next == NULL : page.next != NULL);
                assert_int_equal(page.last_is_current, pages == 0);
                if (links && page.pages->nelts) {
                    const cp_page_link *current = NULL;
                    int i;

                    for (i = 0; i < page.pages->nelts; i++) {
                        if (APR_ARRAY_IDX(page.pages, i, cp_page_link).current) {
                            current = &APR_ARRAY_IDX(page.pages, i, cp_page_link);
                        }
                    }
                    assert_non_null(current);
                    assert_int_equal(current->number, last_number - pages);
                }
                backward = apr_pstrcat(pool, page_ids(&page), backward, NULL);
                text = page.prev;
            } while (text && ++pages < 100);
            assert_string_equal(backward, walk_ids());
        }
    }
}

static void numbered_pages_know_their_ends_after_deletions(void **state)
{
    const char *names[] = { "n", NULL };
    cp_find_sort sort = sort_of(0, names);
    cp_page first, second, page;
    int i;

    make_walk_rows();
    first = walk_numbered_page(&sort, NULL, 4, 0);
    second = walk_numbered_page(&sort, first.next, 4, 0);
    assert_string_equal(page_ids(&second), "d004 d005 d006 d007 ");
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
    const char *names[] = { "n", NULL };
    cp_find_sort sort = sort_of(0, names);
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
    const char *names[] = { "n", NULL };
    cp_find_sort sort = sort_of(0, names);
    apr_array_header_t *fields = apr_array_make(pool, 1, sizeof(const char *));
    apr_array_header_t *queries = apr_array_make(pool, 3, sizeof(cp_query));
    cp_token token = { .from = CP_FROM_AFTER, .docid = "d005" };
    cp_answer probe_start = { 0 }, probe_end = { 0 }, read = { 0 };
    apr_array_header_t *rows;
    cp_keyset_count counted;
    cp_query *query;
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
    query = apr_array_push(queries);
    memset(query, 0, sizeof(*query));
    query->role = CP_QUERY_RANGE_START;
    query->answer = &probe_start;
    query = apr_array_push(queries);
    memset(query, 0, sizeof(*query));
    query->role = CP_QUERY_RANGE_END;
    query->answer = &probe_end;
    query = apr_array_push(queries);
    memset(query, 0, sizeof(*query));
    query->role = CP_QUERY_FORWARD;
    query->answer = &read;
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
    query = apr_array_push(queries);
    memset(query, 0, sizeof(*query));
    query->role = CP_QUERY_FORWARD;
    query->answer = &read;
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
    const char *names[] = { "n", NULL };
    cp_find_sort sort = sort_of(0, names);
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
static void check_links_both_sides(const cp_find_sort *sort, const cp_page *page, int count,
                                   int links)
{
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
        linked = walk_numbered_page(sort, link->start, count, links);
        assert_int_equal(linked.offset, (link->number - 1) * count);
    }
}

/* With page links, a numbered page reads the rows the other way too: its
 * links reach as many pages on both sides, numbered as the view location
 * numbered them, whichever way it was read; from an old link's row too. */
static void numbered_pages_link_both_sides(void **state)
{
    const char *names[] = { "n", NULL };
    cp_find_sort sort = sort_of(0, names);
    int count, links;

    make_walk_rows();
    for (count = 1; count <= 6; count++) {
        for (links = 1; links <= 2; links++) {
            const char *text = NULL;
            cp_page page;
            int pages = 0;

            do {
                page = walk_numbered_page(&sort, text, count, links);
                check_links_both_sides(&sort, &page, count, links);
                text = page.next;
            } while (text && ++pages < 100);
            text = CP_TOKEN_LAST;
            pages = 0;
            do {
                page = walk_numbered_page(&sort, text, count, links);
                check_links_both_sides(&sort, &page, count, links);
                text = page.prev;
            } while (text && ++pages < 100);
        }
    }
    /* an old link at row 8, pages of 4: the page is the third */
    {
        cp_page page = walk_numbered_page(&sort, "[[2],\"d008\"]", 4, 2);

        assert_int_equal(page.offset, 8);
        check_links_both_sides(&sort, &page, 4, 2);
        assert_null(APR_ARRAY_IDX(page.pages, 0, cp_page_link).start);
        assert_string_equal(APR_ARRAY_IDX(page.pages, 1, cp_page_link).start,
                            "{\"b\":[[2],\"d008\"]}");
    }
}

/* The Mango body a token asks: beyond its row, the way it reads; a view's
 * token, at its row, bounds no _find query. */
static void find_bodies_go_the_tokens_way(void **state)
{
    const char *names[] = { "n", NULL };
    cp_find_sort sort = sort_of(0, names);
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
    apr_array_header_t *queries;
    cp_token token;
    cp_plan plan;

    APR_ARRAY_PUSH(fields, const char *) = "type";
    APR_ARRAY_PUSH(fields, const char *) = "date";
    view.include_docs = 1;
    plan = plan_of(&view, NULL, "[\"post\"]", "[\"post\",{\"\\uffff\":null}]", 5, 0);
    assert_null(cp_token_decode(pool, NULL, &token_rows, &token));
    queries = cp_keyset_index_queries(pool, &plan, fields, &token, 6, 0);
    assert_string_equal(cp_plan_query_url(pool, plan.index_url,
                                          cp_plan_query(queries, CP_QUERY_FORWARD)),
                        "http://h/db/_design/i/_view/by-type-date?limit=6&reduce=false"
                        "&startkey=%5b%22post%22%5d"
                        "&endkey=%5b%22post%22%2c%7b%22%ef%bf%bf%22%3anull%7d%5d"
                        "&include_docs=true");
    assert_null(cp_token_decode(pool, "{\"a\":[[\"2020\"],\"d1\"]}", &token_rows, &token));
    queries = cp_keyset_index_queries(pool, &plan, fields, &token, 6, 0);
    assert_string_equal(cp_plan_query_url(pool, plan.index_url,
                                          cp_plan_query(queries, CP_QUERY_FORWARD)),
                        "http://h/db/_design/i/_view/by-type-date?limit=7&reduce=false"
                        "&startkey=%5b%22post%22%2c%222020%22%5d&startkey_docid=d1"
                        "&endkey=%5b%22post%22%2c%7b%22%ef%bf%bf%22%3anull%7d%5d"
                        "&include_docs=true");
    assert_null(cp_token_decode(pool, "{\"b\":[[\"2020\"],\"d1\"]}", &token_rows, &token));
    queries = cp_keyset_index_queries(pool, &plan, fields, &token, 6, 0);
    assert_string_equal(cp_plan_query_url(pool, plan.index_url,
                                          cp_plan_query(queries, CP_QUERY_FORWARD)),
                        "http://h/db/_design/i/_view/by-type-date?limit=7&reduce=false"
                        "&descending=true&startkey=%5b%22post%22%2c%222020%22%5d"
                        "&startkey_docid=d1&endkey=%5b%22post%22%5d&include_docs=true");
    /* an old link: the view key it holds, the row itself first */
    assert_null(cp_token_decode(pool, "[[\"post\",\"2020\"],\"d1\"]", &token_rows, &token));
    assert_int_equal(token.from, CP_FROM_ROW);
    queries = cp_keyset_index_queries(pool, &plan, fields, &token, 6, 0);
    assert_string_equal(cp_plan_query_url(pool, plan.index_url,
                                          cp_plan_query(queries, CP_QUERY_FORWARD)),
                        "http://h/db/_design/i/_view/by-type-date?limit=6&reduce=false"
                        "&startkey=%5b%22post%22%2c%222020%22%5d&startkey_docid=d1"
                        "&endkey=%5b%22post%22%2c%7b%22%ef%bf%bf%22%3anull%7d%5d"
                        "&include_docs=true");
    /* a keyset token too short for the index's fields names no row */
    token.from = CP_FROM_AFTER;
    token.key = parse("[]");
    assert_null(cp_keyset_index_queries(pool, &plan, fields, &token, 6, 0));
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
        UNIT_TEST(index_queries_start_at_the_tokens_row),
    };

    RUN_UNIT_TESTS("couchpage_keyset", tests);
}
