/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of couchpage_jump: which pages ?page=N reaches and from
 * where, the read that finds its first row, and that row among entries
 * read either way; they link the core alone (cp_serve's jumps against the
 * walk: test_serve_view.c). */
#include "unit.h"
#include "couchpage_count.h"
#include "couchpage_jump.h"

static const char *route(apr_int64_t page, int count, apr_int64_t total, int reach,
                         cp_jump_from *from)
{
    *from = (cp_jump_from)-1;
    return cp_jump_route(pool, page, count, total, reach, from);
}

static void pages_are_reached_from_the_nearer_end(void **state)
{
    cp_jump_from from;

    /* 100 rows, 10 a page: pages 1 to 10, reach 3 */
    assert_null(route(1, 10, 100, 3, &from));
    assert_int_equal(from, CP_JUMP_FIRST);
    assert_null(route(3, 10, 100, 3, &from));
    assert_int_equal(from, CP_JUMP_FROM_START);
    assert_null(route(8, 10, 100, 3, &from));
    assert_int_equal(from, CP_JUMP_FROM_END);
    assert_null(route(10, 10, 100, 3, &from));
    assert_int_equal(from, CP_JUMP_LAST);
    assert_string_equal(route(4, 10, 100, 3, &from), "page 4 is too far from either end to be "
                        "asked for by number: pages 1 to 3 and 8 to 10 can be; follow the "
                        "page links from the nearest");
    assert_string_equal(route(7, 10, 100, 3, &from), "page 7 is too far from either end to be "
                        "asked for by number: pages 1 to 3 and 8 to 10 can be; follow the "
                        "page links from the nearest");
    /* a short last page: 101 rows are 11 pages */
    assert_string_equal(route(12, 10, 101, 3, &from), "page 12 is past the last page, 11");
    assert_null(route(11, 10, 101, 3, &from));
    assert_int_equal(from, CP_JUMP_LAST);
    assert_null(route(9, 10, 101, 3, &from));
    assert_int_equal(from, CP_JUMP_FROM_END);
    /* no rows: one empty page */
    assert_null(route(1, 10, 0, 3, &from));
    assert_int_equal(from, CP_JUMP_FIRST);
    assert_string_equal(route(2, 10, 0, 3, &from), "page 2 is past the last page, 1");
    /* a reach of 0: the ends only */
    assert_null(route(10, 10, 100, 0, &from));
    assert_int_equal(from, CP_JUMP_LAST);
    assert_string_equal(route(2, 10, 100, 0, &from), "page 2 cannot be asked for by number "
                        "here: only the first page and the last, 10, can; follow the page "
                        "links from them");
    /* the largest page number, far past any location */
    assert_string_equal(route(999999999, 100, 1000, 10, &from),
                        "page 999999999 is past the last page, 10");
}

static void the_read_holds_the_entry_either_side(void **state)
{
    apr_int64_t skip;
    int limit;

    /* row 40 of 100 with entries of up to 3 rows: rows 37 to 43 */
    cp_jump_window(40, -1, 0, 3, &skip, &limit);
    assert_int_equal(skip, 37);
    assert_int_equal(limit, 7);
    /* near the start, from the start */
    cp_jump_window(2, -1, 0, 3, &skip, &limit);
    assert_int_equal(skip, 0);
    assert_int_equal(limit, 6);
    /* backward: row 90 of 100 is the 9th from the end, read 6 to 12 */
    cp_jump_window(90, 100, 1, 3, &skip, &limit);
    assert_int_equal(skip, 6);
    assert_int_equal(limit, 7);
    /* the skip is bounded by the reach, never by a token: it grows with
     * the page's distance from its end alone */
    cp_jump_window(1000 * 99, -1, 0, 64, &skip, &limit);
    assert_int_equal(skip, 1000 * 99 - 64);
    assert_int_equal(limit, 129);
}

/* An answer of rows (id, key) a read passed over skip rows to. */
static const cp_answer *rows_answer(const char *rows)
{
    return answer_text(apr_psprintf(pool, "{\"total_rows\":9,\"offset\":0,\"rows\":%s}", rows));
}

static void the_row_is_found_entry_by_entry(void **state)
{
    /* the view: a0 b1 b1 b1 c2 d3 (ids and keys), 6 rows; b's entry is
     * rows 1 to 3 */
    const cp_answer *forward = rows_answer(
        "[{\"id\":\"a\",\"key\":0,\"value\":0},{\"id\":\"b\",\"key\":1,\"value\":1},"
        "{\"id\":\"b\",\"key\":1,\"value\":2},{\"id\":\"b\",\"key\":1,\"value\":3},"
        "{\"id\":\"c\",\"key\":2,\"value\":4},{\"id\":\"d\",\"key\":3,\"value\":5}]");
    /* read backward: entries reversed, each entry's rows in their order */
    const cp_answer *backward = rows_answer(
        "[{\"id\":\"d\",\"key\":3,\"value\":5},{\"id\":\"c\",\"key\":2,\"value\":4},"
        "{\"id\":\"b\",\"key\":1,\"value\":1},{\"id\":\"b\",\"key\":1,\"value\":2},"
        "{\"id\":\"b\",\"key\":1,\"value\":3},{\"id\":\"a\",\"key\":0,\"value\":0}]");
    const cp_row *row;
    int target, index;

    for (target = 0; target < 6; target++) {
        const int ids[] = { 'a', 'b', 'b', 'b', 'c', 'd' }, places[] = { 0, 0, 1, 2, 0, 0 };

        row = cp_jump_row(forward, 0, 0, 6, target, &index);
        assert_non_null(row);
        assert_int_equal(row->id[0], ids[target]);
        assert_int_equal(index, places[target]);
        row = cp_jump_row(backward, 1, 0, 6, target, &index);
        assert_non_null(row);
        assert_int_equal(row->id[0], ids[target]);
        assert_int_equal(index, places[target]);
        assert_int_equal(json_integer_value(cp_row_decode(pool, row, cp_row_member(row, "value"))),
                         target);
    }
    /* a read that passed over rows: the places shift by them */
    row = cp_jump_row(forward, 0, 10, 16, 13, &index);
    assert_string_equal(row->id, "b");
    assert_int_equal(index, 2);
    row = cp_jump_row(backward, 1, 10, 16, 2, &index);
    assert_string_equal(row->id, "b");
    assert_int_equal(index, 1);
    /* a row the read does not hold */
    assert_null(cp_jump_row(forward, 0, 0, 6, 6, &index));
    assert_null(cp_jump_row(backward, 1, 10, 16, 9, &index));
}

/* A counted _find location's jump: the query that passes over the rows
 * before page N (keys only: _id and the sort fields), and the token after
 * the row before it, with the count as a walk's tokens carry it. */
static void a_counted_find_jump_reads_keys_and_counts(void **state)
{
    const char *names[] = { "n" };
    cp_find_sort sort;
    cp_find_spec spec = { 0 };
    const json_t *body;
    const cp_answer *answer = rows_answer("[{\"id\":\"d7\",\"key\":[7],\"value\":null}]");
    cp_count_walk walk = { 1, 40, 0, 0, 0 };

    assert_null(cp_find_sort_init(pool, names, 1, 0, &sort));
    spec.selector = load("{\"n\":{\"$gte\":null},\"t\":{\"$regex\":\"^T\"}}");
    spec.sort = &sort;
    body = load(cp_count_skip_body(pool, &spec, 13, 2));
    assert_int_equal(json_integer_value(json_object_get(body, "skip")), 13);
    assert_int_equal(json_integer_value(json_object_get(body, "limit")), 2);
    assert_string_equal(cp_json_text(pool, json_object_get(body, "fields")), "[\"_id\",\"n\"]");
    assert_string_equal(cp_json_text(pool, json_object_get(body, "selector")),
                        cp_json_text(pool, spec.selector));
    assert_null(cp_count_skip_body(pool, &spec, -1, 2));
    assert_null(cp_count_skip_body(pool, &spec, 3, 0));
    assert_string_equal(cp_count_token_after(pool, cp_answer_row(answer, 0), 13, &walk),
                        "{\"a\":[[7],\"d7\"],\"t\":40,\"p\":13}");
    walk.at_least = 1;
    walk.total = 20;
    assert_string_equal(cp_count_token_after(pool, cp_answer_row(answer, 0), 13, &walk),
                        "{\"a\":[[7],\"d7\"],\"t\":20,\"p\":13,\"m\":1}");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        UNIT_TEST(pages_are_reached_from_the_nearer_end),
        UNIT_TEST(the_read_holds_the_entry_either_side),
        UNIT_TEST(the_row_is_found_entry_by_entry),
        UNIT_TEST(a_counted_find_jump_reads_keys_and_counts),
    };
    RUN_UNIT_TESTS("jump", tests);
}
