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

    assert_null(cp_token_decode(pool, token, CP_TOKEN_VIEW_ROWS(1), &decoded));
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

        assert_null(cp_token_decode(pool, cp_token_encode(pool, key, "x", 0), CP_TOKEN_VIEW_ROWS(1),
                                    &decoded));
        assert_true(json_is_real(decoded.key));
        assert_true(json_real_value(decoded.key) == json_real_value(key));
    }
}

/* The JSON text of value. */
static const char *text_of(const json_t *value)
{
    return cp_json_text(pool, value);
}

/* CouchDB keeps integers wider than 64 bits exact (a Mango index keys a
 * field holding one so) and sends them verbatim: a token carries them digit
 * for digit, never as the nearest double. */
static void integers_beyond_64_bits_keep_their_digits(void **state)
{
    const char *wide[] = { "18446744073709551615", "18446744073709551616",
                           "-18446744073709551617", "9223372036854775808",
                           "-9223372036854775809", "100000000000000000000",
                           "123456789012345678901234567890123456789012345678901234567890" };
    size_t i;

    for (i = 0; i < sizeof(wide) / sizeof(wide[0]); i++) {
        const char *pair = apr_psprintf(pool, "[%s,\"a\"]", wide[i]);
        cp_token decoded;

        assert_null(cp_token_decode(pool, pair, CP_TOKEN_VIEW_ROWS(1), &decoded));
        assert_true(cp_json_is_wide(decoded.key));
        assert_string_equal(decoded.key_json, wide[i]);
        assert_string_equal(cp_token_encode(pool, decoded.key, "a", 0), pair);
        assert_string_equal(decoded.docid, "a");
    }
}

/* 2^64 as an integer and as a double, and 2^64 - 1, are three keys. */
static void wide_integers_differ_from_their_doubles(void **state)
{
    json_t *below = load("18446744073709551615"), *exact = load("18446744073709551616");
    json_t *real = load("1.8446744073709552e19"), *again = load("18446744073709551616");

    assert_true(cp_json_is_wide(below));
    assert_true(cp_json_is_wide(exact));
    assert_true(json_is_real(real));
    assert_false(cp_json_identical(below, exact));
    assert_false(cp_json_identical(exact, real));
    assert_false(cp_json_identical(below, real));
    assert_true(cp_json_identical(exact, again));
    assert_string_not_equal(cp_token_digest(pool, below, "a"), cp_token_digest(pool, exact, "a"));
    assert_string_not_equal(cp_token_digest(pool, exact, "a"), cp_token_digest(pool, real, "a"));
    /* no string is a wide integer, not even one of its digits */
    assert_false(cp_json_is_wide(load("\"18446744073709551616\"")));
    assert_false(cp_json_identical(exact, load("\"18446744073709551616\"")));
}

/* Only the wide integers change: the other numbers keep their exact value,
 * strings starting with NUL stay what they were, and the text comes back
 * as it was. */
static void wide_integers_leave_other_values_alone(void **state)
{
    const char *text = "{\"rows\":[{\"key\":-98765432109876543210,\"value\":0},"
                       "{\"key\":-9007199254740993,\"value\":8,\"s\":\"123456789012345678901\\\"x\"},"
                       "{\"key\":9223372036854775807,\"value\":-9223372036854775808},"
                       "{\"key\":[18446744073709551616,0.5,0],\"value\":1e2},"
                       "{\"key\":\"\\u0000w1\",\"value\":[\"\\u0000s\",\"\\u0000\",\"x\\u0000\"]}],"
                       "\"total_rows\":17}";
    const char *error = NULL;
    json_t *body = cp_json_load(pool, text, strlen(text), &error);
    json_t *rows = json_object_get(body, "rows"), *nul = json_array_get(rows, 4);
    json_t *nuls = json_object_get(nul, "value");

    assert_non_null(body);
    assert_true(cp_json_is_wide(json_object_get(json_array_get(rows, 0), "key")));
    assert_true(json_is_integer(json_object_get(json_array_get(rows, 0), "value")));
    assert_true(json_integer_value(json_object_get(json_array_get(rows, 1), "key")) == -9007199254740993LL);
    assert_string_equal(json_string_value(json_object_get(json_array_get(rows, 1), "s")),
                        "123456789012345678901\"x");
    assert_true(json_integer_value(json_object_get(json_array_get(rows, 2), "key")) == 9223372036854775807LL);
    assert_true(json_is_integer(json_object_get(json_array_get(rows, 2), "value")));
    assert_true(cp_json_is_wide(json_array_get(json_object_get(json_array_get(rows, 3), "key"), 0)));
    assert_true(json_is_real(json_array_get(json_object_get(json_array_get(rows, 3), "key"), 1)));
    assert_true(json_is_integer(json_array_get(json_object_get(json_array_get(rows, 3), "key"), 2)));
    assert_int_equal(json_string_length(json_object_get(nul, "key")), 3);
    assert_memory_equal(json_string_value(json_object_get(nul, "key")), "\0w1", 3);
    assert_int_equal(json_string_length(json_array_get(nuls, 0)), 2);
    assert_memory_equal(json_string_value(json_array_get(nuls, 0)), "\0s", 2);
    assert_int_equal(json_string_length(json_array_get(nuls, 1)), 1);
    assert_int_equal(json_string_length(json_array_get(nuls, 2)), 2);
    assert_int_equal(json_integer_value(json_object_get(body, "total_rows")), 17);
    assert_string_equal(text_of(body),
                        "{\"rows\":[{\"key\":-98765432109876543210,\"value\":0},"
                        "{\"key\":-9007199254740993,\"value\":8,\"s\":\"123456789012345678901\\\"x\"},"
                        "{\"key\":9223372036854775807,\"value\":-9223372036854775808},"
                        "{\"key\":[18446744073709551616,0.5,0],\"value\":100.0},"
                        "{\"key\":\"\\u0000w1\",\"value\":[\"\\u0000s\",\"\\u0000\",\"x\\u0000\"]}],"
                        "\"total_rows\":17}");
    assert_int_equal(cp_json_size(body), strlen(text_of(body)));
}

/* What is not JSON stays refused when a wide integer is in it. */
static void wide_integers_do_not_excuse_bad_json(void **state)
{
    const char *bad[] = { "[18446744073709551616,01]", "[018446744073709551616]",
                          "[18446744073709551616 1]", "[18446744073709551616-1]",
                          "{18446744073709551616:1}", "[18446744073709551616,\"\\u0000\":1]",
                          "{\"\\u0000a\":18446744073709551616", "[-18446744073709551616",
                          "[1e99999,18446744073709551616]", "18446744073709551616.", "[--18446744073709551616]" };
    size_t i;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        const char *error = NULL;

        assert_null(cp_json_load(pool, bad[i], strlen(bad[i]), &error));
        assert_non_null(error);
    }
}

/* A wide integer too long for a token's room is bounded as a number is
 * (a shorter array before it, one ending in {} after it), and one that
 * fits keeps its digits. */
static void wide_integers_in_bounded_tokens(void **state)
{
    json_t *key = load("[\"abcdefghijklmnopqrstuvwxyz\",18446744073709551616,"
                       "123456789012345678901234567890123456789012345678901234567890]");
    const char *token = cp_token_encode_bounded(pool, key, "a", 0, 60, 0);
    cp_token decoded;

    assert_non_null(token);
    assert_null(cp_token_decode(pool, token, CP_TOKEN_VIEW_ROWS(1), &decoded));
    assert_string_equal(text_of(decoded.low),
                        "[\"abcdefghijklmnopqrstuvwxyz\",18446744073709551616]");
    assert_string_equal(text_of(decoded.high),
                        "[\"abcdefghijklmnopqrstuvwxyz\",18446744073709551616,{}]");
    assert_string_equal(decoded.digest, cp_token_digest(pool, key, "a"));
}

static void key_only_tokens_for_grouped_rows(void **state)
{
    json_t *key = parse("[\"2026\", 11]");
    const char *token = cp_token_encode(pool, key, NULL, 0);
    cp_token decoded;

    assert_string_equal(token, "[[\"2026\",11]]");
    assert_null(cp_token_decode(pool, token, CP_TOKEN_VIEW_ROWS(0), &decoded));
    assert_null(decoded.docid);
    assert_string_equal(decoded.key_json, "[\"2026\",11]");
    /* A [key, docid] token does not fit a location of grouped rows. */
    assert_non_null(cp_token_decode(pool, "[1,\"a\"]", CP_TOKEN_VIEW_ROWS(0), &decoded));
}

/* A counted walk of grouped rows: {"g": [KEY], "t": T, "p": P}, at the
 * row as [KEY] is; its count's form checked, and only for grouped rows. */
static void counted_grouped_tokens(void **state)
{
    const char *refused[] = { "{\"g\":[1]}", "{\"g\":[1],\"t\":3}",
                              "{\"g\":[1],\"t\":3,\"p\":3}", "{\"g\":[1],\"t\":-1,\"p\":0}",
                              "{\"g\":[1],\"t\":3,\"p\":1,\"m\":2}",
                              "{\"g\":[1],\"t\":3,\"p\":1,\"x\":0}",
                              "{\"g\":[1,2],\"t\":3,\"p\":1}", "{\"g\":1,\"t\":3,\"p\":1}" };
    cp_token decoded;
    size_t i;

    assert_null(cp_token_decode(pool, "{\"g\":[[\"a\",2]],\"t\":30,\"p\":7}",
                                CP_TOKEN_VIEW_ROWS(0), &decoded));
    assert_int_equal(decoded.from, CP_FROM_ROW);
    assert_string_equal(decoded.key_json, "[\"a\",2]");
    assert_null(decoded.docid);
    assert_true(decoded.counted);
    assert_int_equal(decoded.count_total, 30);
    assert_int_equal(decoded.count_place, 7);
    assert_false(decoded.count_at_least);
    assert_null(cp_token_decode(pool, "{\"g\":[1],\"t\":20,\"p\":40,\"m\":1}",
                                CP_TOKEN_VIEW_ROWS(0), &decoded));
    assert_true(decoded.count_at_least);
    for (i = 0; i < sizeof(refused) / sizeof(*refused); i++) {
        assert_non_null(cp_token_decode(pool, refused[i], CP_TOKEN_VIEW_ROWS(0), &decoded));
    }
    /* a bounded token of such a walk carries its count beside its keys */
    assert_null(cp_token_decode(pool, "{\"lo\":\"a\",\"hi\":\"b\",\"h\":"
                                "\"AAAAAAAAAAAAAAAAAAAAAA\",\"t\":9,\"p\":4}",
                                CP_TOKEN_VIEW_ROWS(0), &decoded));
    assert_non_null(decoded.digest);
    assert_int_equal(decoded.count_place, 4);
    assert_non_null(cp_token_decode(pool, "{\"lo\":\"a\",\"hi\":\"b\",\"h\":"
                                    "\"AAAAAAAAAAAAAAAAAAAAAA\",\"t\":9,\"p\":4}",
                                    CP_TOKEN_VIEW_ROWS(1), &decoded));
    /* a map view's location takes no such token */
    assert_non_null(cp_token_decode(pool, "{\"g\":[1],\"t\":3,\"p\":1}",
                                    CP_TOKEN_VIEW_ROWS(1), &decoded));
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
        const char *reason = cp_token_decode(pool, cases[i].token, CP_TOKEN_VIEW_ROWS(1), &decoded);
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

/* The last page's token is the word, not JSON: it decodes to CP_FROM_LAST, with
 * no key, for rows with ids and grouped rows; the JSON string "last", or
 * the word spelled otherwise, is no token. */
static void the_word_last_is_the_last_pages_token(void **state)
{
    const char *not_last[] = { "\"last\"", "[\"last\"]", "Last", "last ", " last", "lastx" };
    cp_token decoded;
    size_t i;

    assert_string_equal(CP_TOKEN_LAST, "last");
    assert_null(cp_token_decode(pool, CP_TOKEN_LAST, CP_TOKEN_VIEW_ROWS(1), &decoded));
    assert_int_equal(decoded.from, CP_FROM_LAST);
    assert_null(decoded.key);
    assert_null(decoded.key_json);
    assert_null(decoded.docid);
    assert_int_equal(decoded.index, 0);
    assert_null(cp_token_decode(pool, CP_TOKEN_LAST, CP_TOKEN_VIEW_ROWS(0), &decoded));
    assert_int_equal(decoded.from, CP_FROM_LAST);
    for (i = 0; i < sizeof(not_last) / sizeof(not_last[0]); i++) {
        const char *reason = cp_token_decode(pool, not_last[i], CP_TOKEN_VIEW_ROWS(1), &decoded);

        if (!reason) {
            fail_msg("'%s' should be refused", not_last[i]);
        }
    }
    /* any other token is not at the end */
    assert_null(cp_token_decode(pool, "[\"last\",\"d1\"]", CP_TOKEN_VIEW_ROWS(1), &decoded));
    assert_int_equal(decoded.from, CP_FROM_ROW);
    assert_string_equal(decoded.key_json, "\"last\"");
}

#define U_FFFF "\xef\xbf\xbf"

/* A bounded token decoded: its low and high keys' JSON texts, and checks
 * that its digest and index are the row's. */
static void decode_bounded_ok(const char *token, const json_t *key, const char *docid,
                              int index, const char **low, const char **high)
{
    cp_token decoded;

    assert_int_equal(token[0], '{');
    assert_null(cp_token_decode(pool, token, CP_TOKEN_VIEW_ROWS(docid != NULL), &decoded));
    assert_non_null(decoded.digest);
    assert_string_equal(decoded.digest, cp_token_digest(pool, key, docid));
    assert_int_equal(strlen(decoded.digest), CP_TOKEN_DIGEST_LENGTH);
    assert_null(decoded.key);
    assert_null(decoded.docid);
    assert_int_equal(decoded.index, index);
    *low = cp_json_text(pool, decoded.low);
    *high = cp_json_text(pool, decoded.high);
}

/* A long string is cut between two ASCII characters; its high key is the
 * cut followed by U+FFFF, which CouchDB collates after every character. */
static void long_strings_make_bounded_tokens(void **state)
{
    char *text = apr_palloc(pool, 10241);
    const char *low, *high;
    json_t *key;

    memset(text, 'b', 10240);
    text[10240] = '\0';
    key = json_string(text);
    decode_bounded_ok(cp_token_encode_bounded(pool, key, "k09", 2, 100, 0), key, "k09", 2,
                      &low, &high);
    assert_int_equal(strlen(low), 98 + 2);
    assert_memory_equal(low, "\"bbbb", 5);
    assert_string_equal(high, apr_pstrcat(pool, apr_pstrndup(pool, low, strlen(low) - 1),
                                          U_FFFF "\"", NULL));
    /* not within a code point, and before the ASCII run nearest the cut */
    key = json_string(apr_pstrcat(pool, "ab", apr_pstrndup(pool, "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
                                                           "\xc3\xa9\xc3\xa9", 12), "cdefgh", NULL));
    decode_bounded_ok(cp_token_encode_bounded(pool, key, "x", 0, 9, 0), key, "x", 0, &low,
                      &high);
    assert_string_equal(low, "\"a\"");
    /* ids compare as bytes: the highest bytes of UTF-8 end the high key */
    key = json_string(text);
    decode_bounded_ok(cp_token_encode_bounded(pool, key, "k09", 0, 10, 1), key, "k09", 0, &low,
                      &high);
    assert_string_equal(low, "\"bbbbbbbb\"");
    assert_string_equal(high, "\"bbbbbbbb\xf4\x8f\xbf\xbf\"");
    json_decref(key);
}

/* Arrays and objects are cut at a member: low is the shorter value, high
 * ends in a value after the member cut (the cut string and U+FFFF, an
 * empty object after any scalar, an object named U+FFFF after an object). */
static void arrays_and_objects_are_cut_at_a_member(void **state)
{
    struct { const char *key; apr_size_t keep; const char *low, *high; } cases[] = {
        { "[\"l\",\"mmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmm\",1]", 20,
          "[\"l\",\"mmmmmmmmmmm\"]", "[\"l\",\"mmmmmmmmmmm" U_FFFF "\"]" },
        { "[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15]", 12, "[1,2,3,4,5]", "[1,2,3,4,5,{}]" },
        { "[1,{\"a\":1,\"b\":2},3,4,5,6,7,8]", 4, "[1]", "[1,{\"" U_FFFF "\":null}]" },
        { "{\"n\":\"oooooooooooooooooooooooooooooooooooooooooooooo\",\"m\":1}", 14,
          "{\"n\":\"ooooo\"}", "{\"n\":\"ooooo" U_FFFF "\"}" },
        { "{\"nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn\":1}", 10, "{}",
          "{\"nnnnnn" U_FFFF "\":null}" },
        { "[[\"a\",\"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\"],2]", 16,
          "[[\"a\",\"bbbb\"]]", "[[\"a\",\"bbbb" U_FFFF "\"]]" },
        { "123456789012345678", 4, "null", "{}" },
    };
    size_t i;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_t *key = parse(cases[i].key);
        const char *low, *high;

        decode_bounded_ok(cp_token_encode_bounded(pool, key, "d", 0, cases[i].keep, 0), key,
                          "d", 0, &low, &high);
        if (strcmp(low, cases[i].low) || strcmp(high, cases[i].high)) {
            fail_msg("%s cut to %d: low %s high %s, expected %s and %s", cases[i].key,
                     (int)cases[i].keep, low, high, cases[i].low, cases[i].high);
        }
    }
}

/* The digest names the key's JSON text and the id: any other key or id,
 * or a grouped row's key alone, has another. */
static void the_digest_names_key_and_id(void **state)
{
    const char *d = cp_token_digest(pool, parse("[\"a\",1]"), "x");

    assert_string_equal(d, cp_token_digest(pool, parse("[\"a\", 1]"), "x"));
    assert_string_not_equal(d, cp_token_digest(pool, parse("[\"a\",1.0]"), "x"));
    assert_string_not_equal(d, cp_token_digest(pool, parse("[\"a\",1]"), "y"));
    assert_string_not_equal(d, cp_token_digest(pool, parse("[\"a\",1]"), NULL));
    assert_string_not_equal(cp_token_digest(pool, parse("\"a\""), "bc"),
                            cp_token_digest(pool, parse("\"a\""), "b"));
}

/* A token fits the room as the client sends it: sealed, or percent-
 * encoded in a link; the key whole while it fits, else bounded. */
static void tokens_fit_their_room(void **state)
{
    cp_token_room room = { 4096, 8126, 0, 0, 0, 0 };
    char *text = apr_palloc(pool, 102401);
    json_t *key;
    const char *token;
    apr_size_t i;

    memset(text, 'c', 102400);
    text[102400] = '\0';
    assert_string_equal(cp_token_for_row(pool, &room, parse("\"c\""), "d", 0), "[\"c\",\"d\"]");
    key = json_string(text);
    token = cp_token_for_row(pool, &room, key, "k10", 0);
    assert_true(cp_token_fits(&room, token));
    assert_true(strlen(token) > 2000);
    decode_bounded_ok(token, key, "k10", 0, &(const char *){ NULL }, &(const char *){ NULL });
    json_decref(key);
    /* 1,400 UTF-8 characters of 2 bytes: 2,800 bytes fit 4096, but not
     * percent-encoded in 8126 */
    for (i = 0; i < 1400; i++) {
        memcpy(text + 2 * i, "\xc3\xa9", 2);
    }
    text[2800] = '\0';
    key = json_string(text);
    assert_false(cp_token_fits(&room, cp_token_encode(pool, key, "d", 0)));
    token = cp_token_for_row(pool, &room, key, "d", 0);
    assert_true(cp_token_fits(&room, token));
    assert_int_equal(token[0], '{');
    /* sealed: base64url of the payload and 17 bytes */
    room.sealed = 1;
    room.max_sent = 64;
    assert_true(cp_token_fits(&room, apr_psprintf(pool, "%*s", 31, "x")));
    assert_false(cp_token_fits(&room, apr_psprintf(pool, "%*s", 32, "x")));
    /* no room for even a bounded token: the shortest is given, and left out later */
    token = cp_token_for_row(pool, &room, key, "d", 0);
    assert_false(cp_token_fits(&room, token));
    assert_int_equal(token[0], '{');
    json_decref(key);
}

static void bounded_tokens_are_checked(void **state)
{
    const char *digest = "AAAAAAAAAAAAAAAAAAAAAA";
    struct { const char *token; const char *reason_part; } cases[] = {
        { "{\"lo\":1,\"hi\":2}", "an object of" },
        { "{\"lo\":1,\"h\":\"%s\"}", "an object of" },
        { "{\"lo\":1,\"hi\":2,\"h\":\"%s\",\"x\":1}", "an object of" },
        { "{\"lo\":1,\"hi\":2,\"h\":\"AAAA\"}", "digest" },
        { "{\"lo\":1,\"hi\":2,\"h\":\"AAAAAAAAAAAAAAAAAAAAA=\"}", "digest" },
        { "{\"lo\":1,\"hi\":2,\"h\":1}", "digest" },
        { "{\"lo\":1,\"hi\":2,\"h\":\"%s\",\"n\":0}", "\"n\" must be" },
        { "{\"lo\":1,\"hi\":2,\"h\":\"%s\",\"n\":1000}", "\"n\" must be" },
    };
    cp_token decoded;
    size_t i;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *token = apr_psprintf(pool, cases[i].token, digest);
        const char *reason = cp_token_decode(pool, token, CP_TOKEN_VIEW_ROWS(1), &decoded);

        if (!reason || !strstr(reason, cases[i].reason_part)) {
            fail_msg("token '%s': expected a reason with '%s', got '%s'", token,
                     cases[i].reason_part, reason ? reason : "(none)");
        }
    }
    assert_null(cp_token_decode(pool, apr_psprintf(pool, "{\"hi\":[2],\"lo\":[1],\"n\":3,"
                                                   "\"h\":\"%s\"}", digest),
                                CP_TOKEN_VIEW_ROWS(0), &decoded));
    assert_int_equal(decoded.index, 3);
    assert_string_equal(decoded.digest, digest);
}

/* A token's text as links handed out before one decoder read every form:
 * how each location reads it, NULL when it is refused. */
typedef struct {
    const char *text;
    cp_token_from view;    /* a view location's rows, with ids */
    cp_token_from grouped; /* grouped rows, without */
    cp_token_from find;    /* a _find location sorted by two fields */
    cp_token_from index;   /* a numbered _find location: its index's view's too */
    const char *key;       /* the key it holds, when it holds one */
    const char *docid;
    int index_in_entry;
} old_token;

#define REFUSED ((cp_token_from)-1)

static void check_old_token(const old_token *old, const cp_token_rows *rows,
                            cp_token_from expected)
{
    cp_token token;
    const char *reason = cp_token_decode(pool, old->text, rows, &token);

    if (expected == REFUSED) {
        if (!reason) {
            fail_msg("'%s' accepted", old->text);
        }
        assert_non_null(strstr(reason, "the start token"));
        return;
    }
    if (reason) {
        fail_msg("'%s' refused: %s", old->text, reason);
    }
    assert_int_equal(token.from, expected);
    if (token.from == CP_FROM_LAST || token.digest) {
        assert_null(token.key);
        return;
    }
    assert_string_equal(token.key_json, old->key);
    assert_string_equal(cp_json_text(pool, token.key), old->key);
    if (old->docid && rows->with_docid) {
        assert_string_equal(token.docid, old->docid);
    }
    else {
        assert_null(token.docid);
    }
    assert_int_equal(token.index, old->index_in_entry);
}

/* Every form a link ever carried reads as it did where it was handed out:
 * a view's [key, docid], [key, docid, n], [key] and bounded tokens at their
 * row, a _find location's {"a"} and {"b"} after and before theirs, and
 * "last"; a numbered _find location reads a view's too (the links of its
 * index's view), at their row. */
static void old_token_texts_of_every_form_decode(void **state)
{
    const char *digest = "AAAAAAAAAAAAAAAAAAAAAA";
    const cp_token_rows view = { 1, 0, 0, 0 }, grouped = { 0, 0, 0, 0 };
    const cp_token_rows find = { 1, 1, 2, 0 }, index = { 1, 1, 2, 1 };
    const old_token olds[] = {
        { "[\"Nirvana\",\"a1\"]", CP_FROM_ROW, REFUSED, REFUSED, CP_FROM_ROW,
          "\"Nirvana\"", "a1", 0 },
        { "[[\"post\",2020,\"x\"],\"d\\\"1\"]", CP_FROM_ROW, REFUSED, REFUSED, CP_FROM_ROW,
          "[\"post\",2020,\"x\"]", "d\"1", 0 },
        { "[\"x\",\"d1\",2]", CP_FROM_ROW, REFUSED, REFUSED, CP_FROM_ROW, "\"x\"", "d1", 2 },
        { "[[2026,11]]", REFUSED, CP_FROM_ROW, REFUSED, REFUSED, "[2026,11]", NULL, 0 },
        { apr_psprintf(pool, "{\"lo\":\"b\",\"hi\":\"b\xef\xbf\xbf\",\"h\":\"%s\"}", digest),
          CP_FROM_ROW, CP_FROM_ROW, REFUSED, CP_FROM_ROW, NULL, NULL, 0 },
        { apr_psprintf(pool, "{\"lo\":[\"l\"],\"hi\":[\"l\",{}],\"h\":\"%s\",\"n\":3}", digest),
          CP_FROM_ROW, CP_FROM_ROW, REFUSED, CP_FROM_ROW, NULL, NULL, 3 },
        { "{\"a\":[[\"2020\",\"b\"],\"d1\"]}", REFUSED, REFUSED, CP_FROM_AFTER, CP_FROM_AFTER,
          "[\"2020\",\"b\"]", "d1", 0 },
        { "{\"b\":[[{\"$gt\":null},[1]],\"d2\"]}", REFUSED, REFUSED, CP_FROM_BEFORE,
          CP_FROM_BEFORE, "[{\"$gt\":null},[1]]", "d2", 0 },
        { "{\"a\":[[\"2020\"],\"d1\"]}", REFUSED, REFUSED, REFUSED, REFUSED, NULL, NULL, 0 },
        { "{\"c\":[[\"2020\",\"b\"],\"d1\"]}", REFUSED, REFUSED, REFUSED, REFUSED, NULL, NULL,
          0 },
        { CP_TOKEN_LAST, CP_FROM_LAST, CP_FROM_LAST, CP_FROM_LAST, CP_FROM_LAST, NULL, NULL,
          0 },
    };
    cp_token token;
    size_t i;

    for (i = 0; i < sizeof(olds) / sizeof(olds[0]); i++) {
        check_old_token(&olds[i], &view, olds[i].view);
        check_old_token(&olds[i], &grouped, olds[i].grouped);
        check_old_token(&olds[i], &find, olds[i].find);
        check_old_token(&olds[i], &index, olds[i].index);
    }
    /* no token: the first page, wherever */
    assert_null(cp_token_decode(pool, NULL, &find, &token));
    assert_int_equal(token.from, CP_FROM_FIRST);
    assert_null(cp_token_decode(pool, NULL, &view, &token));
    assert_int_equal(token.from, CP_FROM_FIRST);
    /* the reasons each location gave */
    assert_string_equal(cp_token_decode(pool, "", &view, &token), "the start token is empty");
    assert_string_equal(cp_token_decode(pool, "[1,\"a\"]", &find, &token),
                        "the start token is not {\"a\": [KEY, ID]} nor {\"b\": [KEY, ID]}");
    assert_string_equal(cp_token_decode(pool, "{\"a\":[[1],\"x\"]}", &find, &token),
                        "the start token does not hold a key of 2 sort values");
    assert_string_equal(cp_token_decode(pool, "{\"a\":[[1,2]]}", &find, &token),
                        "the start token does not hold [KEY, ID]");
    assert_string_equal(cp_token_decode(pool, "{\"a\":[[1,2],\"\"]}", &find, &token),
                        "the start token does not hold a document id (a non-empty string "
                        "without NUL)");
    assert_string_equal(cp_token_decode(pool, "{\"a\":[[1,2],\"x\"]}", &view, &token),
                        "the start token must be a JSON array, or an object of \"lo\", "
                        "\"hi\", \"h\" and \"n\"");
    assert_string_equal(cp_token_decode(pool, "[1]", &view, &token),
                        "the start token must have two members, [key, docid] "
                        "(or three, [key, docid, n])");
    /* "e": 1, its row's ties few on the side its page reads first */
    assert_null(cp_token_decode(pool, "{\"b\":[[1,2],\"x\"],\"e\":1,\"t\":9,\"p\":3}",
                                &find, &token));
    assert_true(token.ties_near && token.counted && token.from == CP_FROM_BEFORE);
    assert_null(cp_token_decode(pool, "{\"a\":[[1,2],\"x\"]}", &find, &token));
    assert_false(token.ties_near);
    assert_string_equal(cp_token_decode(pool, "{\"a\":[[1,2],\"x\"],\"e\":true}", &find,
                                        &token), "the start token's \"e\" is not 1");
    assert_string_equal(cp_token_decode(pool, "{\"a\":[[1,2],\"x\"],\"e\":0}", &find,
                                        &token), "the start token's \"e\" is not 1");
}

/* A keyset token is written as it is read back, a row's id escaped; a row
 * without a key or id, or a side that is not after or before, has none. */
static void keyset_tokens_round_trip(void **state)
{
    const cp_token_rows rows = { 1, 1, 2, 0 };
    const char *text;
    cp_token token;

    text = cp_token_encode_beside(pool, CP_FROM_BEFORE, parse("[1, \"b\"]"), "d\"1");
    assert_string_equal(text, "{\"b\":[[1,\"b\"],\"d\\\"1\"]}");
    assert_null(cp_token_decode(pool, text, &rows, &token));
    assert_int_equal(token.from, CP_FROM_BEFORE);
    assert_string_equal(token.key_json, "[1,\"b\"]");
    assert_string_equal(token.docid, "d\"1");
    assert_null(cp_token_encode_beside(pool, CP_FROM_ROW, parse("[1, \"b\"]"), "d1"));
    assert_null(cp_token_encode_beside(pool, CP_FROM_AFTER, NULL, "d1"));
    assert_null(cp_token_encode_beside(pool, CP_FROM_AFTER, parse("[1, \"b\"]"), NULL));
    assert_null(cp_token_encode_beside(pool, CP_FROM_AFTER, parse("[1, \"b\"]"), "\xff"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        UNIT_TEST(keys_of_every_json_type_round_trip),
        UNIT_TEST(real_keys_keep_their_value),
        UNIT_TEST(integers_beyond_64_bits_keep_their_digits),
        UNIT_TEST(wide_integers_differ_from_their_doubles),
        UNIT_TEST(wide_integers_leave_other_values_alone),
        UNIT_TEST(wide_integers_do_not_excuse_bad_json),
        UNIT_TEST(wide_integers_in_bounded_tokens),
        UNIT_TEST(key_only_tokens_for_grouped_rows),
        UNIT_TEST(counted_grouped_tokens),
        UNIT_TEST(malformed_tokens_are_refused_with_a_reason),
        UNIT_TEST(identical_means_the_same_json_text),
        UNIT_TEST(the_word_last_is_the_last_pages_token),
        UNIT_TEST(long_strings_make_bounded_tokens),
        UNIT_TEST(arrays_and_objects_are_cut_at_a_member),
        UNIT_TEST(the_digest_names_key_and_id),
        UNIT_TEST(tokens_fit_their_room),
        UNIT_TEST(bounded_tokens_are_checked),
        UNIT_TEST(old_token_texts_of_every_form_decode),
        UNIT_TEST(keyset_tokens_round_trip),
    };
    RUN_UNIT_TESTS("token", tests);
}
