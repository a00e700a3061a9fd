/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of couchpage_count: CouchPageCount's words, a client's
 * Prefer, what a count may read, the count a token carries, and a page's
 * Content-Range. The walks themselves are test_serve_view's and
 * test_serve_find's. */
#include "unit.h"
#include "couchpage_count.h"

static const char *parse_words(const char *a, const char *b, cp_count_policy *policy)
{
    const char *argv[2] = { a, b };

    return cp_count_policy_parse(pool, b ? 2 : 1, argv, policy);
}

static void policies_are_read(void **state)
{
    cp_count_policy policy;

    assert_null(parse_words("exact", NULL, &policy));
    assert_int_equal(policy.mode, CP_COUNT_EXACT);
    assert_null(parse_words("None", NULL, &policy));
    assert_int_equal(policy.mode, CP_COUNT_NONE);
    assert_null(parse_words("capped", "250", &policy));
    assert_int_equal(policy.mode, CP_COUNT_CAPPED);
    assert_int_equal(policy.cap, 250);
    assert_null(parse_words("capped", "100000", &policy));
    assert_string_equal(parse_words("sometimes", NULL, &policy), "takes exact, capped N or none");
    assert_string_equal(parse_words("exact", "5", &policy), "takes exact, capped N or none");
    assert_string_equal(parse_words("capped", NULL, &policy),
                        "capped takes one number: capped N, the rows a count reads at most");
    assert_string_equal(parse_words("capped", "0", &policy),
                        "capped takes a whole number from 1 to 100000, not '0'");
    assert_non_null(parse_words("capped", "100001", &policy));
    assert_non_null(parse_words("capped", "1e3", &policy));
    assert_non_null(parse_words("capped", "-5", &policy));
    assert_non_null(parse_words("capped", " 5", &policy));
    assert_non_null(parse_words("capped", "99999999999999999999", &policy));
}

static void preferences_are_read(void **state)
{
    assert_int_equal(cp_count_prefer(pool, NULL), CP_PREFER_COUNT_UNSAID);
    assert_int_equal(cp_count_prefer(pool, ""), CP_PREFER_COUNT_UNSAID);
    assert_int_equal(cp_count_prefer(pool, "count=exact"), CP_PREFER_COUNT_EXACT);
    assert_int_equal(cp_count_prefer(pool, "return=minimal, count=estimated"),
                     CP_PREFER_COUNT_ESTIMATED);
    assert_int_equal(cp_count_prefer(pool, "COUNT = \"None\""), CP_PREFER_COUNT_NONE);
    assert_int_equal(cp_count_prefer(pool, "count=exact;x=1"), CP_PREFER_COUNT_EXACT);
    assert_int_equal(cp_count_prefer(pool, "count=planned"), CP_PREFER_COUNT_UNSAID);
    assert_int_equal(cp_count_prefer(pool, "counter=exact"), CP_PREFER_COUNT_UNSAID);
    assert_int_equal(cp_count_prefer(pool, "count=exact, count=none"), CP_PREFER_COUNT_NONE);
    assert_int_equal(cp_count_prefer(pool, "count"), CP_PREFER_COUNT_UNSAID);
    assert_int_equal(cp_count_prefer(pool, ",,count=\""), CP_PREFER_COUNT_UNSAID);
}

/* What a count may read, by policy and preference, and what is applied. */
static void caps_honour_preferences_within_the_policy(void **state)
{
    const cp_count_policy unset = { CP_COUNT_UNSET, 0 }, exact = { CP_COUNT_EXACT, 0 },
                          capped = { CP_COUNT_CAPPED, 50 }, none = { CP_COUNT_NONE, 0 };
    const char *applied;

    assert_int_equal(cp_count_cap(&unset, CP_PREFER_COUNT_UNSAID, &applied),
                     CP_COUNT_DEFAULT_CAP);
    assert_null(applied);
    assert_int_equal(cp_count_cap(&exact, CP_PREFER_COUNT_UNSAID, &applied), CP_COUNT_MAX);
    assert_int_equal(cp_count_cap(&exact, CP_PREFER_COUNT_EXACT, &applied), CP_COUNT_MAX);
    assert_string_equal(applied, "count=exact");
    assert_int_equal(cp_count_cap(&exact, CP_PREFER_COUNT_ESTIMATED, &applied),
                     CP_COUNT_DEFAULT_CAP);
    assert_string_equal(applied, "count=estimated");
    assert_int_equal(cp_count_cap(&exact, CP_PREFER_COUNT_NONE, &applied), 0);
    assert_string_equal(applied, "count=none");
    assert_int_equal(cp_count_cap(&capped, CP_PREFER_COUNT_EXACT, &applied), 50);
    assert_null(applied);
    assert_int_equal(cp_count_cap(&capped, CP_PREFER_COUNT_ESTIMATED, &applied), 50);
    assert_string_equal(applied, "count=estimated");
    assert_int_equal(cp_count_cap(&none, CP_PREFER_COUNT_EXACT, &applied), 0);
    assert_null(applied);
    assert_int_equal(cp_count_cap(&none, CP_PREFER_COUNT_ESTIMATED, &applied), 0);
    assert_null(applied);
    assert_int_equal(cp_count_cap(&none, CP_PREFER_COUNT_NONE, &applied), 0);
    assert_string_equal(applied, "count=none");
    assert_string_equal(cp_count_free_applied(CP_PREFER_COUNT_EXACT), "count=exact");
    assert_null(cp_count_free_applied(CP_PREFER_COUNT_NONE));
}

/* The count's _find: keys only, cap + 1 rows, the location's selector. */
static void the_count_reads_keys_only_and_cap_plus_one(void **state)
{
    const char *names[] = { "n" };
    cp_find_sort sort;
    cp_find_spec spec = { 0 };
    json_t *body;

    assert_null(cp_find_sort_init(pool, names, 1, 0, &sort));
    spec.selector = cp_json_pool_own(pool, json_pack("{s:{s:s}}", "tags", "$elemMatch", "a"));
    spec.sort = &sort;
    spec.index_ddoc = "by-n";
    body = cp_json_pool_own(pool, json_loads(cp_count_find_body(pool, &spec, 1000), 0, NULL));
    assert_int_equal(json_integer_value(json_object_get(body, "limit")), 1001);
    assert_string_equal(cp_json_text(pool, json_object_get(body, "fields")), "[\"_id\",\"n\"]");
    assert_string_equal(cp_json_text(pool, json_object_get(body, "selector")),
                        "{\"tags\":{\"$elemMatch\":\"a\"}}");
    assert_non_null(json_object_get(body, "use_index"));
    assert_null(cp_count_find_body(pool, &spec, 0));
}

static void counts_from_rows_and_tokens(void **state)
{
    cp_count_walk walk;
    cp_token token;
    cp_keyset_count counted;
    const cp_token_rows rows = { 1, 1, 1, 0 };

    cp_count_from_rows(5, 10, &walk);
    assert_true(walk.known && !walk.at_least && walk.total == 5);
    cp_count_from_rows(11, 10, &walk);
    assert_true(walk.known && walk.at_least && walk.total == 10);

    assert_null(cp_token_decode(pool, "{\"a\":[[1],\"x\"],\"t\":10,\"p\":3}", &rows, &token));
    assert_true(token.counted && token.count_total == 10 && token.count_place == 3);
    assert_true(cp_count_from_token(&token, 10, &walk));
    assert_true(walk.earlier && walk.total == 10 && walk.place == 3);
    assert_true(cp_count_keyset(&token, &walk, &counted));
    assert_int_equal(counted.before, 4);
    assert_int_equal(counted.total, 10);
    assert_false(cp_count_from_token(&token, 9, &walk));
    assert_false(cp_count_from_token(&token, 0, &walk));

    assert_null(cp_token_decode(pool, "{\"p\":3,\"b\":[[1],\"x\"],\"t\":10}", &rows, &token));
    assert_true(cp_count_from_token(&token, 100, &walk));
    assert_true(cp_count_keyset(&token, &walk, &counted));
    assert_int_equal(counted.before, 7);

    /* at least: the place may pass the total; the cap must be the total */
    assert_null(cp_token_decode(pool, "{\"a\":[[1],\"x\"],\"t\":10,\"p\":30,\"m\":1}", &rows,
                                &token));
    assert_true(token.count_at_least);
    assert_false(cp_count_from_token(&token, 20, &walk));
    assert_true(cp_count_from_token(&token, 10, &walk));
    assert_true(cp_count_keyset(&token, &walk, &counted));
    assert_int_equal(counted.before, 31);
    assert_true(counted.total > (apr_int64_t)1 << 53);

    /* an older token carries none */
    assert_null(cp_token_decode(pool, "{\"a\":[[1],\"x\"]}", &rows, &token));
    assert_false(token.counted);
    assert_false(cp_count_from_token(&token, 10, &walk));

    /* the first page counts; the Last page of an at-least count cannot be placed */
    memset(&token, 0, sizeof(token));
    token.from = CP_FROM_LAST;
    cp_count_from_rows(11, 10, &walk);
    assert_false(cp_count_keyset(&token, &walk, &counted));
    cp_count_from_rows(7, 10, &walk);
    assert_true(cp_count_keyset(&token, &walk, &counted));
    assert_int_equal(counted.before, 0);
    assert_int_equal(counted.total, 7);
}

static void forged_counts_are_refused_by_form(void **state)
{
    const cp_token_rows rows = { 1, 1, 1, 0 };
    const char *bad[] = {
        "{\"a\":[[1],\"x\"],\"t\":10}",
        "{\"a\":[[1],\"x\"],\"p\":1}",
        "{\"a\":[[1],\"x\"],\"t\":10,\"p\":10}",
        "{\"a\":[[1],\"x\"],\"t\":-1,\"p\":0}",
        "{\"a\":[[1],\"x\"],\"t\":\"10\",\"p\":0}",
        "{\"a\":[[1],\"x\"],\"t\":10.0,\"p\":0}",
        "{\"a\":[[1],\"x\"],\"t\":9007199254740992,\"p\":0}",
        "{\"a\":[[1],\"x\"],\"t\":10,\"p\":0,\"m\":2}",
        "{\"a\":[[1],\"x\"],\"m\":1}",
        "{\"a\":[[1],\"x\"],\"t\":10,\"p\":0,\"q\":1}",
        "{\"a\":[[1],\"x\"],\"b\":[[1],\"x\"]}",
        "{\"t\":10,\"p\":0}",
    };
    cp_token token;
    size_t i;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        if (!cp_token_decode(pool, bad[i], &rows, &token)) {
            fail_msg("accepted: %s", bad[i]);
        }
    }
    assert_null(cp_token_decode(pool, "{\"a\":[[1],\"x\"],\"t\":9007199254740991,\"p\":0}",
                                &rows, &token));
}

static void content_ranges(void **state)
{
    cp_page page;
    int i;

    memset(&page, 0, sizeof(page));
    page.rows = apr_array_make(pool, 4, sizeof(const cp_row *));
    page.offset = -1;
    page.total_rows = -1;
    assert_string_equal(cp_count_content_range(pool, &page), "items */*");
    page.numbered = 1;
    page.offset = 20;
    page.total_rows = 347;
    assert_string_equal(cp_count_content_range(pool, &page), "items */347");
    for (i = 0; i < 20; i++) {
        APR_ARRAY_PUSH(page.rows, const cp_row *) = NULL;
    }
    assert_string_equal(cp_count_content_range(pool, &page), "items 20-39/347");
    page.count_at_least = 1;
    assert_string_equal(cp_count_content_range(pool, &page), "items 20-39/*");
    page.count_at_least = 0;
    page.total_rows = -1;
    assert_string_equal(cp_count_content_range(pool, &page), "items 20-39/*");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        UNIT_TEST(policies_are_read),
        UNIT_TEST(preferences_are_read),
        UNIT_TEST(caps_honour_preferences_within_the_policy),
        UNIT_TEST(the_count_reads_keys_only_and_cap_plus_one),
        UNIT_TEST(counts_from_rows_and_tokens),
        UNIT_TEST(forged_counts_are_refused_by_form),
        UNIT_TEST(content_ranges),
    };
    RUN_UNIT_TESTS("count", tests);
}
