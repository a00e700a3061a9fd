#include "unit.h"
#include "couchpage_json.h"
#include "couchpage_page.h"

/* A view response with rows keyed first..first+n-1, ids "d<key>". */
static json_t *response(int first, int n, int descending)
{
    json_t *body = json_object();
    json_t *rows = json_array();
    int i;

    for (i = 0; i < n; i++) {
        int k = descending ? first - i : first + i;
        json_array_append_new(rows, json_pack("{s:s, s:i, s:n}", "id",
                                              apr_psprintf(pool, "d%d", k), "key", k,
                                              "value"));
    }
    json_object_set_new(body, "total_rows", json_integer(100));
    json_object_set_new(body, "offset", json_integer(first));
    json_object_set_new(body, "rows", rows);
    return cp_json_pool_own(pool, body);
}

static void a_short_first_page_has_no_links(void **state)
{
    cp_page page;

    cp_page_assemble(pool, 5, 1, response(0, 5, 0), NULL, NULL, &page);
    assert_int_equal(json_array_size(page.rows), 5);
    assert_null(page.next);
    assert_null(page.prev);
    assert_int_equal(json_integer_value(page.total_rows), 100);
    assert_int_equal(json_integer_value(page.offset), 0);
}

static void the_extra_row_starts_the_next_page(void **state)
{
    cp_page page;

    cp_page_assemble(pool, 5, 1, response(0, 6, 0), NULL, NULL, &page);
    assert_int_equal(json_array_size(page.rows), 5);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(page.rows, 4), "key")), 4);
    assert_string_equal(page.next, "[5,\"d5\"]");
    assert_null(page.prev);
}

static void the_last_backward_row_starts_the_previous_page(void **state)
{
    cp_page page;

    /* page 10..14; backward from 10 with skip=1 gives 9,8,7,6,5 */
    cp_page_assemble(pool, 5, 1, response(10, 6, 0), response(9, 5, 1), NULL, &page);
    assert_string_equal(page.next, "[15,\"d15\"]");
    assert_string_equal(page.prev, "[5,\"d5\"]");
    /* near the start: fewer rows backward still point at the first row */
    cp_page_assemble(pool, 5, 1, response(2, 6, 0), response(1, 2, 1), NULL, &page);
    assert_string_equal(page.prev, "[0,\"d0\"]");
    /* at the start: nothing backward */
    cp_page_assemble(pool, 5, 1, response(0, 3, 0), response(0, 0, 1), NULL, &page);
    assert_null(page.prev);
    assert_null(page.next);
}

static void grouped_rows_make_key_only_tokens(void **state)
{
    json_t *body = cp_json_pool_own(pool, parse(
        "{\"rows\":[{\"key\":[2026,1],\"value\":3},{\"key\":[2026,2],\"value\":4}]}"));
    cp_page page;

    cp_page_assemble(pool, 1, 0, body, NULL, NULL, &page);
    assert_string_equal(page.next, "[[2026,2]]");
    assert_null(page.total_rows);
    assert_null(page.offset);
}

/* Grouped rows are read backward without skip: the token's own group comes
 * first when the group key is a whole key, and is passed over. */
static void grouped_rows_pass_over_their_own_group_backward(void **state)
{
    json_t *forward = cp_json_pool_own(pool, parse(
        "{\"rows\":[{\"key\":[5],\"value\":1},{\"key\":[6],\"value\":1},"
        "{\"key\":[7],\"value\":1}]}"));
    json_t *with_own = cp_json_pool_own(pool, parse(
        "{\"rows\":[{\"key\":[5],\"value\":1},{\"key\":[4],\"value\":1},"
        "{\"key\":[3],\"value\":1}]}"));
    json_t *without_own = cp_json_pool_own(pool, parse(
        "{\"rows\":[{\"key\":[4],\"value\":1},{\"key\":[3],\"value\":1},"
        "{\"key\":[2],\"value\":1}]}"));
    json_t *only_own = cp_json_pool_own(pool, parse("{\"rows\":[{\"key\":[5],\"value\":1}]}"));
    json_t *start_key = cp_json_pool_own(pool, parse("[5]"));
    cp_page page;

    cp_page_assemble(pool, 2, 0, forward, with_own, start_key, &page);
    assert_string_equal(page.next, "[[7]]");
    assert_string_equal(page.prev, "[[3]]");
    cp_page_assemble(pool, 2, 0, forward, without_own, start_key, &page);
    assert_string_equal(page.prev, "[[3]]");
    cp_page_assemble(pool, 2, 0, forward, only_own, start_key, &page);
    assert_null(page.prev);
}

static void unexpected_response_shapes_are_named(void **state)
{
    struct { const char *body; int with_docid; const char *reason_part; } cases[] = {
        { "[]", 1, "not a JSON object" },
        { "{\"total_rows\":0}", 1, "no rows array" },
        { "{\"rows\":{}}", 1, "no rows array" },
        { "{\"rows\":[1]}", 1, "row 0 of the view response has no key" },
        { "{\"rows\":[{\"id\":\"a\",\"key\":1},{\"id\":\"b\"}]}", 1, "row 1" },
        { "{\"rows\":[{\"key\":1}]}", 1, "no document id" },
        { "{\"rows\":[{\"key\":1,\"id\":5}]}", 1, "no document id" },
    };
    size_t i;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *reason = NULL;
        json_t *body = cp_json_pool_own(pool, parse(cases[i].body));

        assert_null(cp_page_rows(pool, body, cases[i].with_docid, &reason));
        if (!reason || !strstr(reason, cases[i].reason_part)) {
            fail_msg("'%s': expected '%s', got '%s'", cases[i].body, cases[i].reason_part,
                     reason ? reason : "(none)");
        }
    }
    assert_non_null(cp_page_rows(pool, cp_json_pool_own(pool, parse("{\"rows\":[{\"key\":1}]}")),
                                 0, NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        UNIT_TEST(a_short_first_page_has_no_links),
        UNIT_TEST(the_extra_row_starts_the_next_page),
        UNIT_TEST(the_last_backward_row_starts_the_previous_page),
        UNIT_TEST(grouped_rows_make_key_only_tokens),
        UNIT_TEST(grouped_rows_pass_over_their_own_group_backward),
        UNIT_TEST(unexpected_response_shapes_are_named),
    };
    RUN_UNIT_TESTS("page", tests);
}
