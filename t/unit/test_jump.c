/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of couchpage_jump: which pages ?page=N reaches and from
 * where, the read that finds its first row, and that row among entries
 * read either way, and a jump on counted grouped reduce rows asked through
 * a fake ask; they link the core alone (cp_serve's jumps against the
 * walk: test_serve_view.c, and t/api/35_jump.t). */
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

/* A counted _find location's jump: the token after the row before page
 * N, with the count as a walk's tokens carry it. */
static void a_counted_find_jump_token_carries_the_count(void **state)
{
    const cp_answer *answer = rows_answer("[{\"id\":\"d7\",\"key\":[7],\"value\":null}]");
    cp_count_walk walk = { 1, 40, 0, 0, 0 };

    (void)state;
    assert_string_equal(cp_count_token_after(pool, cp_answer_row(answer, 0), 13, &walk),
                        "{\"a\":[[7],\"d7\"],\"t\":40,\"p\":13}");
    walk.at_least = 1;
    walk.total = 20;
    assert_string_equal(cp_count_token_after(pool, cp_answer_row(answer, 0), 13, &walk),
                        "{\"a\":[[7],\"d7\"],\"t\":20,\"p\":13,\"m\":1}");
}

/* --- grouped reduce rows, counted ---------------------------------------- */

/* The backend of a grouped location: groups keyed 0 to groups - 1 (long
 * keys where long_keys), and what it was asked. */
typedef struct {
    int groups;
    int long_keys;
    int asks;
    int forward;        /* the read with skip: asked, its skip and limit */
    apr_int64_t skip;
    int limit;
    int count_limit;    /* the count's limit */
} grouped_backend;

static const char *group_key(apr_pool_t *p, const grouped_backend *b, int k)
{
    return b->long_keys ? apr_psprintf(p, "\"%0200d\"", k) : apr_itoa(p, k);
}

/* The groups from skip, at most limit of them, as CouchDB answers. */
static const cp_answer *groups_answer(const grouped_backend *b, apr_int64_t skip, int limit)
{
    const char *rows = "";
    apr_int64_t k;

    for (k = skip; k < b->groups && k < skip + limit; k++) {
        rows = apr_psprintf(pool, "%s%s{\"key\":%s,\"value\":%d}", rows, k > skip ? "," : "",
                            group_key(pool, b, (int)k), (int)k);
    }
    return answer_text(apr_psprintf(pool, "{\"rows\":[%s]}", rows));
}

static const cp_fault *grouped_ask(void *baton, const cp_source *src, const cp_plan *plan,
                                   apr_array_header_t *queries)
{
    grouped_backend *b = baton;
    int i;

    (void)src;
    (void)plan;
    b->asks++;
    for (i = 0; i < queries->nelts; i++) {
        cp_query *query = &APR_ARRAY_IDX(queries, i, cp_query);

        /* every query of grouped rows asks for groups, in the view's order */
        assert_true(json_is_true(json_object_get(query->params, "group")));
        assert_null(json_object_get(query->params, "descending"));
        if (query->role == CP_QUERY_COUNT) {
            b->count_limit = query->limit;
            assert_null(json_object_get(query->params, "skip"));
            query->answer = groups_answer(b, 0, query->limit);
        }
        else {
            assert_int_equal(query->role, CP_QUERY_FORWARD);
            b->forward = 1;
            b->skip = cp_plan_skip(query);
            b->limit = query->limit;
            query->answer = groups_answer(b, b->skip, query->limit);
        }
    }
    return NULL;
}

/* A grouped location of groups groups (exact grouping), count a page,
 * reach 3, counted by policy; the jump to page: its fault, *start the
 * token. */
static const cp_fault *grouped_jump(grouped_backend *b, cp_count_policy policy, int count,
                                    apr_int64_t page, const char *prefer, const char **start)
{
    cp_view *view = apr_pcalloc(pool, sizeof(*view));
    cp_source *src = apr_pcalloc(pool, sizeof(*src));
    cp_args *args = apr_pcalloc(pool, sizeof(*args));
    cp_request req = { args, count, prefer };
    cp_jump_backend backend = { grouped_ask, NULL, NULL };
    const char *text;

    *view = view_of("http://couch:5984/db/_design/d/_view/v");
    view->reduce = 1;
    view->group_level = CP_GROUP_EXACT;
    src->uri = "/t";
    src->view = view;
    src->links = 2;
    src->count = policy;
    src->jump_reach = 3;
    src->max_token_length = 160;
    src->token_url_room = 8000;
    args->page = page;
    b->asks = b->forward = 0;
    backend.baton = b;
    return cp_jump_resolve(pool, src, NULL, &req, "binding", &backend, start, &text);
}

static void a_grouped_jump_takes_its_group_from_the_count(void **state)
{
    grouped_backend b = { 20, 0, 0, 0, 0, 0, 0 };
    cp_count_policy exact = { CP_COUNT_EXACT, 0 };
    const char *start;
    const cp_fault *fault;

    /* 20 groups, 3 a page: pages 1 to 7; page N's first group is 3(N - 1) */
    assert_null(grouped_jump(&b, exact, 3, 1, NULL, &start));
    assert_null(start);
    assert_int_equal(b.asks, 0);
    assert_null(grouped_jump(&b, exact, 3, 2, NULL, &start));
    assert_string_equal(start, "{\"g\":[3],\"t\":20,\"p\":3}");
    /* one request: the count, the first page's, no read with skip */
    assert_int_equal(b.asks, 1);
    assert_false(b.forward);
    assert_int_equal(b.count_limit, CP_COUNT_MAX + 1);
    assert_null(grouped_jump(&b, exact, 3, 3, NULL, &start));
    assert_string_equal(start, "{\"g\":[6],\"t\":20,\"p\":6}");
    /* from the end: pages 5 and 6, then the Last page as a walk links it */
    assert_null(grouped_jump(&b, exact, 3, 5, NULL, &start));
    assert_string_equal(start, "{\"g\":[12],\"t\":20,\"p\":12}");
    assert_null(grouped_jump(&b, exact, 3, 6, NULL, &start));
    assert_string_equal(start, "{\"g\":[15],\"t\":20,\"p\":15}");
    assert_false(b.forward);
    assert_null(grouped_jump(&b, exact, 3, 7, NULL, &start));
    assert_string_equal(start, CP_TOKEN_LAST);
    /* beyond the reach, and past the last page */
    fault = grouped_jump(&b, exact, 3, 4, NULL, &start);
    assert_non_null(fault);
    assert_int_equal(fault->status, 400);
    assert_string_equal(fault->reason, "page 4 is too far from either end to be asked for by "
                        "number: pages 1 to 3 and 5 to 7 can be; follow the page links from "
                        "the nearest");
    fault = grouped_jump(&b, exact, 3, 8, NULL, &start);
    assert_non_null(fault);
    assert_string_equal(fault->reason, "page 8 is past the last page, 7");
    fault = grouped_jump(&b, exact, 3, 999999999, NULL, &start);
    assert_non_null(fault);
    assert_string_equal(fault->reason, "page 999999999 is past the last page, 7");
    /* no groups: one empty page */
    b.groups = 0;
    fault = grouped_jump(&b, exact, 3, 2, NULL, &start);
    assert_non_null(fault);
    assert_string_equal(fault->reason, "page 2 is past the last page, 1");
}

static void a_grouped_jump_past_a_capped_count_reads_with_skip(void **state)
{
    grouped_backend b = { 20, 0, 0, 0, 0, 0, 0 };
    cp_count_policy capped = { CP_COUNT_CAPPED, 5 };
    const char *start;
    const cp_fault *fault;

    /* at least 5: page 2's first group (3) is among the count's 6 rows */
    assert_null(grouped_jump(&b, capped, 3, 2, NULL, &start));
    assert_string_equal(start, "{\"g\":[3],\"t\":5,\"p\":3,\"m\":1}");
    assert_int_equal(b.count_limit, 6);
    assert_false(b.forward);
    /* page 3's (6) is not: a read with skip to the group before it, in
     * the same request as the count */
    assert_null(grouped_jump(&b, capped, 3, 3, NULL, &start));
    assert_string_equal(start, "{\"g\":[6],\"t\":5,\"p\":6,\"m\":1}");
    assert_int_equal(b.asks, 1);
    assert_true(b.forward);
    assert_int_equal(b.skip, 5);
    assert_int_equal(b.limit, 2);
    /* the end is not known: beyond the reach of the first, refused, with
     * no read with skip */
    fault = grouped_jump(&b, capped, 3, 4, NULL, &start);
    assert_non_null(fault);
    assert_false(b.forward);
    assert_string_equal(fault->reason, "page 4 is too far from the first page to be asked for "
                        "by number: this location's rows are counted up to 5 only (there are "
                        "more: CouchPageCount), so its last page is not known; pages 1 to 3 "
                        "can be; follow the page links from the nearest");
    /* the read finds the location's end: 6 groups are 2 pages, 7 are 3 */
    b.groups = 6;
    fault = grouped_jump(&b, capped, 3, 3, NULL, &start);
    assert_non_null(fault);
    assert_string_equal(fault->reason, "page 3 is past the last page, 2");
    b.groups = 7;
    assert_null(grouped_jump(&b, capped, 3, 3, NULL, &start));
    assert_string_equal(start, "{\"g\":[6],\"t\":5,\"p\":6,\"m\":1}");
    /* and an exact count below the cap holds every group: no skip */
    b.groups = 5;
    fault = grouped_jump(&b, capped, 2, 3, NULL, &start);
    assert_null(fault);
    assert_string_equal(start, CP_TOKEN_LAST);
    fault = grouped_jump(&b, capped, 2, 4, NULL, &start);
    assert_non_null(fault);
    assert_false(b.forward);
    assert_string_equal(fault->reason, "page 4 is past the last page, 3");
}

static void a_grouped_jump_where_groups_are_not_counted_is_refused(void **state)
{
    grouped_backend b = { 20, 0, 0, 0, 0, 0, 0 };
    cp_count_policy none = { CP_COUNT_NONE, 0 }, unset = { CP_COUNT_UNSET, 0 };
    const char *start;
    const cp_fault *fault;
    int page;

    for (page = 1; page <= 2; page++) {
        fault = grouped_jump(&b, none, 3, page, NULL, &start);
        assert_non_null(fault);
        assert_int_equal(fault->status, 400);
        assert_string_equal(fault->reason, "page numbers cannot be asked for here: this "
                            "location's grouped reduce rows are not counted (CouchPageCount "
                            "or the request's Prefer says none); follow the page links");
        fault = grouped_jump(&b, unset, 3, page, "count=none", &start);
        assert_non_null(fault);
        assert_non_null(strstr(fault->reason, "grouped reduce rows are not counted"));
    }
    assert_int_equal(b.asks, 0);
    /* the default counts (capped 1000) */
    assert_null(grouped_jump(&b, unset, 3, 2, NULL, &start));
    assert_string_equal(start, "{\"g\":[3],\"t\":20,\"p\":3}");
    assert_int_equal(b.count_limit, CP_COUNT_DEFAULT_CAP + 1);
}

static void a_grouped_jump_to_a_long_key_is_a_bounded_token(void **state)
{
    grouped_backend b = { 20, 1, 0, 0, 0, 0, 0 };
    cp_count_policy exact = { CP_COUNT_EXACT, 0 };
    cp_count_walk walk = { 1, 20, 0, 0, 0 };
    cp_token_room room = { 160, 8000, 0, 0, 0, 0 };
    cp_token token;
    const char *start;
    const json_t *key = load(apr_psprintf(pool, "\"%0200d\"", 3));

    /* the key does not fit the room: a bounded token, with the count */
    assert_null(grouped_jump(&b, exact, 3, 2, NULL, &start));
    assert_true(strlen(start) <= 160);
    assert_null(cp_token_decode(pool, start, CP_TOKEN_VIEW_ROWS(0), &token));
    assert_non_null(token.digest);
    assert_true(token.counted);
    assert_int_equal(token.count_total, 20);
    assert_int_equal(token.count_place, 3);
    /* the token a walk's page hands out for that group */
    assert_string_equal(start, cp_count_group_token(pool, key, 3, &walk, &room));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        UNIT_TEST(pages_are_reached_from_the_nearer_end),
        UNIT_TEST(the_read_holds_the_entry_either_side),
        UNIT_TEST(the_row_is_found_entry_by_entry),
        UNIT_TEST(a_counted_find_jump_token_carries_the_count),
        UNIT_TEST(a_grouped_jump_takes_its_group_from_the_count),
        UNIT_TEST(a_grouped_jump_past_a_capped_count_reads_with_skip),
        UNIT_TEST(a_grouped_jump_where_groups_are_not_counted_is_refused),
        UNIT_TEST(a_grouped_jump_to_a_long_key_is_a_bounded_token),
    };
    RUN_UNIT_TESTS("jump", tests);
}
