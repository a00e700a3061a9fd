/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of couchpage_token: tokens written and read back; they link the
 * core alone. */
#include "unit.h"
#include "couchpage_json.h"
#include "couchpage_token.h"

/* Encodes [key, id] from the key's JSON, decodes it again, and checks the
 * key comes back as the same text and equal value. */
static void round_trip(const char *key_text, const char *expected_key_json)
{
    json_t *key = parse(key_text);
    const char *token = cp_token_encode(pool, key, "doc-1", 0);
    cp_token decoded;

    assert_null(cp_token_decode(pool, token, 1, &decoded));
    assert_string_equal(decoded.key_json, expected_key_json);
    assert_true(json_equal((json_t *)decoded.key, key));
    assert_string_equal(decoded.docid, "doc-1");
}

static void keys_of_every_json_type_round_trip(void **state)
{
    round_trip("null", "null");
    round_trip("false", "false");
    round_trip("true", "true");
    round_trip("0", "0");
    round_trip("-17", "-17");
    round_trip("9007199254740993", "9007199254740993");
    round_trip("\"Biffy Clyro\"", "\"Biffy Clyro\"");
    round_trip("\"e\\u0301t\\u00e9 \\ud83c\\udfb8\"", "\"e\xcc\x81t\xc3\xa9 \xf0\x9f\x8e\xb8\"");
    round_trip("[\"post\", [1, [2, {}]]]", "[\"post\",[1,[2,{}]]]");
    /* CouchDB collates objects member by member: order must survive. */
    round_trip("{\"z\": 1, \"a\": [null]}", "{\"z\":1,\"a\":[null]}");
}

/* Doubles keep their value, though not always their spelling. */
static void real_keys_keep_their_value(void **state)
{
    const char *reals[] = { "0.1", "1e21", "-2.5e-300", "123456.789" };
    size_t i;

    for (i = 0; i < sizeof(reals) / sizeof(reals[0]); i++) {
        json_t *key = parse(reals[i]);
        cp_token decoded;

        assert_null(cp_token_decode(pool, cp_token_encode(pool, key, "x", 0), 1, &decoded));
        assert_true(json_is_real(decoded.key));
        assert_true(json_real_value(decoded.key) == json_real_value(key));
    }
}

/* CouchDB sends integers wider than 64 bits verbatim; a JavaScript map
 * function can only have emitted them as doubles, so that is their value. */
static void integers_beyond_64_bits_are_read_as_doubles(void **state)
{
    cp_token decoded;

    assert_null(cp_token_decode(pool, "[100000000000000000000,\"a\"]", 1, &decoded));
    assert_true(json_is_real(decoded.key));
    assert_true(json_real_value(decoded.key) == 1e20);
}

/* Only the wide integers become doubles: the others keep their exact value. */
static void wide_integers_leave_other_numbers_alone(void **state)
{
    const char *text = "{\"rows\":[{\"key\":-98765432109876543210,\"value\":0},"
                       "{\"key\":-9007199254740993,\"value\":8,\"s\":\"123456789012345678901\\\"x\"},"
                       "{\"key\":9223372036854775807,\"value\":-9223372036854775808},"
                       "{\"key\":[18446744073709551616,1.5e300,0],\"value\":1e2}],\"total_rows\":17}";
    const char *error = NULL;
    json_t *body = cp_json_load(pool, text, strlen(text), &error);
    json_t *rows = json_object_get(body, "rows");

    assert_non_null(body);
    assert_true(json_is_real(json_object_get(json_array_get(rows, 0), "key")));
    assert_true(json_real_value(json_object_get(json_array_get(rows, 0), "key")) == -98765432109876543210.0);
    assert_true(json_is_integer(json_object_get(json_array_get(rows, 0), "value")));
    assert_true(json_integer_value(json_object_get(json_array_get(rows, 1), "key")) == -9007199254740993LL);
    assert_string_equal(json_string_value(json_object_get(json_array_get(rows, 1), "s")),
                        "123456789012345678901\"x");
    assert_true(json_integer_value(json_object_get(json_array_get(rows, 2), "key")) == 9223372036854775807LL);
    assert_true(json_is_integer(json_object_get(json_array_get(rows, 2), "value")));
    assert_true(json_is_real(json_array_get(json_object_get(json_array_get(rows, 3), "key"), 0)));
    assert_true(json_is_integer(json_array_get(json_object_get(json_array_get(rows, 3), "key"), 2)));
    assert_int_equal(json_integer_value(json_object_get(body, "total_rows")), 17);
}

static void key_only_tokens_for_grouped_rows(void **state)
{
    json_t *key = parse("[\"2026\", 11]");
    const char *token = cp_token_encode(pool, key, NULL, 0);
    cp_token decoded;

    assert_string_equal(token, "[[\"2026\",11]]");
    assert_null(cp_token_decode(pool, token, 0, &decoded));
    assert_null(decoded.docid);
    assert_string_equal(decoded.key_json, "[\"2026\",11]");
    /* A [key, docid] token does not fit a location of grouped rows. */
    assert_non_null(cp_token_decode(pool, "[1,\"a\"]", 0, &decoded));
}

static void malformed_tokens_are_refused_with_a_reason(void **state)
{
    struct { const char *token; const char *reason_part; } cases[] = {
        { "", "empty" },
        { "xx", "not JSON" },
        { "[\"a\",\"b\"", "not JSON" },
        { "{\"key\":1}", "must be a JSON array" },
        { "\"a\"", "must be a JSON array" },
        { "[]", "two members" },
        { "[1]", "two members" },
        { "[1,\"a\",0]", "third member" },
        { "[1,\"a\",-1]", "third member" },
        { "[1,\"a\",1.5]", "third member" },
        { "[1,\"a\",\"1\"]", "third member" },
        { "[1,\"a\",1,2]", "two members" },
        { "[1,2]", "docid must be a non-empty string" },
        { "[1,null]", "docid must be a non-empty string" },
        { "[1,\"\"]", "docid must be a non-empty string" },
        { "[1,\"a\\u0000b\"]", "NUL" },
        { "[\"\xff\xfe\",\"a\"]", "not JSON" },
        { "[1,\"a\"] trailing", "not JSON" },
    };
    size_t i;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        cp_token decoded;
        const char *reason = cp_token_decode(pool, cases[i].token, 1, &decoded);
        if (!reason || !strstr(reason, cases[i].reason_part)) {
            fail_msg("token '%s': expected a reason with '%s', got '%s'",
                     cases[i].token, cases[i].reason_part, reason ? reason : "(none)");
        }
    }
}

/* Rows and tokens compare keys with cp_json_identical: it must say exactly
 * whether the compact JSON texts are equal. */
static void identical_means_the_same_json_text(void **state)
{
    static const char *const values[] = {
        "null", "false", "true", "0", "-0", "1", "1.0", "0.0", "-0.0", "0.1",
        "0.10000000000000001", "1e21", "9007199254740993", "9007199254740992.0",
        "\"\"", "\"a\"", "\"a\\u0000b\"", "\"a\\u0000c\"", "\"e\\u0301\"", "\"\\u00e9\"",
        "[]", "[null]", "[1,2]", "[2,1]", "[1,[2,{}]]", "[1,[2,{\"a\":1}]]",
        "{}", "{\"a\":1}", "{\"a\":1.0}", "{\"a\":1,\"b\":2}", "{\"b\":2,\"a\":1}",
        "{\"a\":{\"b\":[1]}}", "{\"a\":{\"b\":[1.0]}}",
    };
    size_t n = sizeof(values) / sizeof(values[0]), i, j;

    for (i = 0; i < n; i++) {
        for (j = 0; j < n; j++) {
            const json_t *a = parse(values[i]), *b = parse(values[j]);
            int same_text = strcmp(cp_json_text(pool, a), cp_json_text(pool, b)) == 0;

            if (cp_json_identical(a, b) != same_text) {
                fail_msg("%s and %s: identical %d, same text %d", values[i], values[j],
                         cp_json_identical(a, b), same_text);
            }
        }
    }
    /* the cases that matter, spelled out */
    assert_false(cp_json_identical(parse("{\"a\":1,\"b\":2}"), parse("{\"b\":2,\"a\":1}")));
    assert_false(cp_json_identical(parse("1"), parse("1.0")));
    assert_false(cp_json_identical(parse("0.0"), parse("-0.0")));
    assert_true(cp_json_identical(parse("0.1"), parse("0.10000000000000001")));
    assert_true(cp_json_identical(parse("[1,[2,{\"a\":null}]]"), parse("[1,[2,{\"a\":null}]]")));
    assert_false(cp_json_identical(parse("null"), NULL));
}

/* The last page's token is the word, not JSON: it decodes to at_end, with
 * no key, for rows with ids and grouped rows; the JSON string "last", or
 * the word spelled otherwise, is no token. */
static void the_word_last_is_the_last_pages_token(void **state)
{
    const char *not_last[] = { "\"last\"", "[\"last\"]", "Last", "last ", " last", "lastx" };
    cp_token decoded;
    size_t i;

    assert_string_equal(CP_TOKEN_LAST, "last");
    assert_null(cp_token_decode(pool, CP_TOKEN_LAST, 1, &decoded));
    assert_true(decoded.at_end);
    assert_null(decoded.key);
    assert_null(decoded.key_json);
    assert_null(decoded.docid);
    assert_int_equal(decoded.index, 0);
    assert_null(cp_token_decode(pool, CP_TOKEN_LAST, 0, &decoded));
    assert_true(decoded.at_end);
    for (i = 0; i < sizeof(not_last) / sizeof(not_last[0]); i++) {
        const char *reason = cp_token_decode(pool, not_last[i], 1, &decoded);

        if (!reason) {
            fail_msg("'%s' should be refused", not_last[i]);
        }
    }
    /* any other token is not at the end */
    assert_null(cp_token_decode(pool, "[\"last\",\"d1\"]", 1, &decoded));
    assert_false(decoded.at_end);
    assert_string_equal(decoded.key_json, "\"last\"");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        UNIT_TEST(keys_of_every_json_type_round_trip),
        UNIT_TEST(real_keys_keep_their_value),
        UNIT_TEST(integers_beyond_64_bits_are_read_as_doubles),
        UNIT_TEST(wide_integers_leave_other_numbers_alone),
        UNIT_TEST(key_only_tokens_for_grouped_rows),
        UNIT_TEST(malformed_tokens_are_refused_with_a_reason),
        UNIT_TEST(identical_means_the_same_json_text),
        UNIT_TEST(the_word_last_is_the_last_pages_token),
    };
    RUN_UNIT_TESTS("token", tests);
}
