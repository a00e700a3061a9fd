/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of couchpage_json's reading: JSON text walked by the simdjson
 * shim and built as jansson values (cp_json_load), a number's bytes as a
 * value (cp_json_number); and the HTML-safe copy of JSON text. They link
 * the core alone. */
#include "unit.h"
#include "couchpage_json.h"
#include "couchpage_simdjson.h"

#include <math.h>
#include <stdio.h>

/* text read by cp_json_load, written back compact (the test fails when it
 * is refused). */
static const char *read_back(const char *text)
{
    const char *error = NULL;
    json_t *value = cp_json_load(pool, text, strlen(text), &error);

    if (!value) {
        fail_msg("'%s' refused: %s", text, error);
    }
    return cp_json_text(pool, value);
}

/* Whether text is refused, with a reason. */
static int refused(const char *text, apr_size_t len)
{
    const char *error = NULL;

    if (cp_json_load(pool, text, len, &error)) {
        return 0;
    }
    assert_non_null(error);
    assert_true(*error != '\0');
    return 1;
}

/* The number's bytes in a padded copy, as they stand in a body. */
static json_t *number(const char *text)
{
    char *padded = apr_pcalloc(pool, strlen(text) + 1);

    memcpy(padded, text, strlen(text));
    return cp_json_pool_own(pool, cp_json_number(padded, strlen(text)));
}

/* Any JSON value is a root: tokens and keys may be scalars. */
static void scalars_and_containers_at_the_root(void **state)
{
    assert_string_equal(read_back("\"a\""), "\"a\"");
    assert_string_equal(read_back(" 5 "), "5");
    assert_string_equal(read_back("true"), "true");
    assert_string_equal(read_back("false"), "false");
    assert_string_equal(read_back("null"), "null");
    assert_string_equal(read_back("null\t"), "null");
    assert_string_equal(read_back(" null \n"), "null");
    assert_string_equal(read_back("false "), "false");
    assert_string_equal(read_back("false   "), "false");
    assert_string_equal(read_back("true\n\n\n\t "), "true");
    assert_string_equal(read_back("[true , false\t,null ]"), "[true,false,null]");
    assert_string_equal(read_back("[null ,null]"), "[null,null]");
    assert_string_equal(read_back("\t[1, {\"a\": [true, null]}]\n"), "[1,{\"a\":[true,null]}]");
    assert_string_equal(read_back("{}"), "{}");
    assert_string_equal(read_back("[]"), "[]");
}

/* Integers within 64 bits are integers (2^53 + 1 exact), beyond them wide
 * integers, digit for digit, at the root and inside; doubles keep their
 * value; -0 is the integer 0 and -0.0 a negative zero, as jansson read
 * them. */
static void numbers_are_exact(void **state)
{
    const json_t *value;

    assert_string_equal(read_back("9007199254740993"), "9007199254740993");
    assert_string_equal(read_back("-9223372036854775808"), "-9223372036854775808");
    assert_string_equal(read_back("9223372036854775808"), "9223372036854775808");
    assert_true(cp_json_is_wide(cp_json_load(pool, "9223372036854775808", 19, NULL)));
    assert_true(cp_json_is_wide(cp_json_load(pool, "-9223372036854775809", 20, NULL)));
    assert_string_equal(read_back("[18446744073709551616,{\"n\":-123456789012345678901234567890}]"),
                        "[18446744073709551616,{\"n\":-123456789012345678901234567890}]");
    value = cp_json_load(pool, "[0.1, 1e21, -2.5e-300, 1e-400, -0.0, -0]",
                         strlen("[0.1, 1e21, -2.5e-300, 1e-400, -0.0, -0]"), NULL);
    assert_non_null(value);
    assert_true(json_real_value(json_array_get(value, 0)) == 0.1);
    assert_true(json_real_value(json_array_get(value, 1)) == 1e21);
    assert_true(json_real_value(json_array_get(value, 2)) == -2.5e-300);
    assert_true(json_real_value(json_array_get(value, 3)) == 0.0);
    assert_true(json_is_real(json_array_get(value, 4))
                && signbit(json_real_value(json_array_get(value, 4))));
    assert_true(json_is_integer(json_array_get(value, 5))
                && json_integer_value(json_array_get(value, 5)) == 0);
    /* numbers simdjson leaves to the visitor: a zero with a long exponent,
     * more than 19 digits before the exponent */
    assert_string_equal(read_back("[0e400987654321]"), "[0.0]");
    value = cp_json_load(pool, "-0.00894005382608812345678948081", 32, NULL);
    assert_true(json_real_value(value) == -0.00894005382608812345678948081);
}

/* A wide integer is a number and no string to callers; every other value
 * is what jansson says it is. */
static void wide_integers_are_numbers(void **state)
{
    const json_t *wide = cp_json_load(pool, "-123456789012345678901234567890", 31, NULL);
    const json_t *values = cp_json_load(pool, "[\"\", \"12345\", 12345, 1.5, null, true, [], {}]",
                                        strlen("[\"\", \"12345\", 12345, 1.5, null, true, [], {}]"),
                                        NULL);
    size_t i;
    const json_t *value;

    assert_true(cp_json_is_number(wide));
    assert_false(cp_json_is_string(wide));
    assert_null(cp_json_string_text(wide));
    assert_true(cp_json_number_value(wide) == -123456789012345678901234567890.0);
    assert_true(cp_json_number_value(cp_json_load(pool, "18446744073709551616", 20, NULL))
                == 18446744073709551616.0);
    json_array_foreach(values, i, value) {
        assert_int_equal(cp_json_is_string(value), json_is_string(value));
        assert_ptr_equal(cp_json_string_text(value),
                         json_is_string(value) ? json_string_value(value) : NULL);
        assert_int_equal(cp_json_is_number(value), json_is_number(value));
        assert_true(cp_json_number_value(value) == json_number_value(value));
    }
    assert_false(cp_json_is_string(NULL));
    assert_null(cp_json_string_text(NULL));
    assert_false(cp_json_is_number(NULL));
    assert_true(cp_json_number_value(NULL) == 0);
    /* written back digit for digit */
    assert_string_equal(cp_json_text(pool, wide), "-123456789012345678901234567890");
}

/* cp_json_number on a number's bytes, and on bytes that are none. */
static void number_bytes(void **state)
{
    const char *not_numbers[] = { "", "-", "01", "-01", "1.", ".5", "1e", "1e+", "+1", "0x10",
                                  " 1", "1 ", "1.5.2", "--1", "inf", "NaN", "1e400", "-1e400",
                                  "1,5" };
    size_t i;

    assert_true(json_is_integer(number("9223372036854775807")));
    assert_true(json_integer_value(number("-9223372036854775808")) == INT64_MIN);
    assert_true(cp_json_is_wide(number("9223372036854775808")));
    assert_true(cp_json_is_wide(number("-9223372036854775809")));
    assert_true(json_real_value(number("1e30")) == 1e30);
    assert_true(json_real_value(number("1E-2")) == 0.01);
    assert_true(json_real_value(number("0e400987654321")) == 0.0);
    for (i = 0; i < sizeof(not_numbers) / sizeof(not_numbers[0]); i++) {
        if (number(not_numbers[i])) {
            fail_msg("'%s' read as a number", not_numbers[i]);
        }
    }
}

/* What is not JSON is refused, with a reason: as jansson's reader refused
 * it. */
static void what_is_not_json_is_refused(void **state)
{
    const char *bad[] = { "", " ", "[1,]", "[1 2]", "1 2", "\"a\" x", "\"a\"x", "nul", "truex",
                          "truee", "falsee", "falsex", "false1", "nulll", "nullx", "[falsee]",
                          "[1]]", "{\"a\"}", "{\"a\":1,}", "{a:1}", "'a'", "[01]", "[1.]",
                          "[-]", "[.5]", "[1e400]", "\"\\x\"", "\"\\ud800\"", "\"\\udc00x\"",
                          "\"a\tb\"", "[\"\xc3\x28\"]", "[\"\xc0\xaf\"]", "\"\xff\"", "[NaN]",
                          "[Infinity]", "{\"a\":1}{", "\"unclosed", "[\"a\"", "{\"a\":" };
    size_t i;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        if (!refused(bad[i], strlen(bad[i]))) {
            fail_msg("'%s' was read as JSON", bad[i]);
        }
    }
    /* a NUL byte in the text (not in a string's escape) */
    assert_true(refused("[1]\0", 4));
    assert_true(refused("[\"a\0\"]", 6));
}

/* Strings and member names hold \u0000 and keep it (a key CouchDB sends
 * may have such a name, and a token carries it back). Of two members of
 * one name the last counts, in the place of the first. */
static void strings_names_and_duplicates(void **state)
{
    const json_t *value = cp_json_load(pool, "[\"a\\u0000b\"]", 12, NULL);

    assert_non_null(value);
    assert_int_equal(json_string_length(json_array_get(value, 0)), 3);
    assert_memory_equal(json_string_value(json_array_get(value, 0)), "a\0b", 3);
    /* a string that starts with NUL, or looks like a wide integer's mark
     * in the text, stays a string */
    assert_false(cp_json_is_wide(cp_json_load(pool, "\"\\u0000w1\"", 10, NULL)));
    assert_string_equal(read_back("{\"a\\u0000\":1,\"a\":2}"), "{\"a\\u0000\":1,\"a\":2}");
    assert_string_equal(read_back("{\"\\u0000a\":18446744073709551616}"),
                        "{\"\\u0000a\":18446744073709551616}");
    assert_true(cp_json_identical(cp_json_load(pool, "{\"a\\u0000b\":1}", 14, NULL),
                                  cp_json_load(pool, "{\"a\\u0000b\":1}", 14, NULL)));
    assert_false(cp_json_identical(cp_json_load(pool, "{\"a\\u0000b\":1}", 14, NULL),
                                   cp_json_load(pool, "{\"a\\u0000c\":1}", 14, NULL)));
    assert_string_equal(read_back("{\"a\":1,\"b\":2,\"a\":[3]}"), "{\"a\":[3],\"b\":2}");
    assert_string_equal(read_back("\"e\\u0301t\\u00e9 \\ud83c\\udfb8\""),
                        "\"e\xcc\x81t\xc3\xa9 \xf0\x9f\x8e\xb8\"");
}

/* n arrays nested, around inner (or nothing). */
static const char *nested(int n, const char *inner)
{
    char *text = apr_palloc(pool, 2 * n + strlen(inner) + 1);

    memset(text, '[', n);
    strcpy(text + n, inner);
    memset(text + n + strlen(inner), ']', n);
    text[2 * n + strlen(inner)] = '\0';
    return text;
}

/* A value at most 2048 deep, the root at 1, as jansson read it. */
static void depth_is_jansson_s(void **state)
{
    assert_non_null(cp_json_load(pool, nested(2048, ""), 4096, NULL));
    assert_non_null(cp_json_load(pool, nested(2047, "1"), 4095, NULL));
    assert_true(refused(nested(2048, "1"), 4097));
    assert_true(refused(nested(2049, ""), 4098));
    assert_true(refused(nested(100000, ""), 200000));
}

/* The text cp_json_span_text writes from a value's bytes: cp_json_text's
 * of cp_json_load's value, byte for byte; NULL where cp_json_load refuses. */
static const char *span_text(const char *text)
{
    apr_size_t len = strlen(text), written = 0;
    char *padded = apr_pcalloc(pool, len + CP_SJ_PADDING);
    const char *out;

    memcpy(padded, text, len);
    out = cp_json_span_text(pool, padded, len, &written);
    if (out) {
        assert_int_equal(written, strlen(out));
    }
    return out;
}

/* Text written from a walk is jansson's text of the value: member order,
 * string escapes (\u00XX in capitals, UTF-8 as it is, no \/), numbers
 * (integers as sent, -0 as 0, doubles as jansson writes them, integers
 * beyond 64 bits digit for digit), the last of two members of one name in
 * the place of the first, the depth cp_json_load reads; and a value inside
 * a body, walked in place. */
static void span_text_is_jansson_s(void **state)
{
    static const char *const values[] = {
        "{}", "[]", "[[],{}]", " { \"a\" : [ 1 , 2 ] , \"b\" : { } } ",
        "{\"b\":1,\"a\":2}", "[\"\\u0001\\u001f\\b\\f\\n\\r\\t\\\"\\\\\\/\", \"\\u00e9\\u2028\"]",
        "{\"\\u0000n\\u007f\":\"<a href='x'>&amp;</a>\"}", "[\"\xc3\xa9\xf0\x9f\x9a\x80\"]",
        "[0,-0,1,-1,9223372036854775807,-9223372036854775808,18446744073709551616]",
        "[-123456789012345678901234567890,1.0,1.5,-0.0,1e2,1E-2,0.1,1.7976931348623157e308]",
        "[2.5e-320,123456789.123456789,-1e+20,0e40098765432109876543210]",
        "[true,false,null,{\"t\":true,\"f\":false,\"n\":null}]",
        "{\"a\":1,\"b\":2,\"a\":3}", "[{\"x\":{\"y\":1,\"y\":[2]}},{\"x\":0,\"x\":\"\"}]",
        "\"scalar\"", "12", "-0", "2.50", "null",
    };
    apr_size_t i;
    char *big, *o;

    for (i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
        const char *want = read_back(values[i]), *got = span_text(values[i]);

        if (!got || strcmp(got, want)) {
            fail_msg("%s: written '%s', jansson's '%s'", values[i], got ? got : "(null)", want);
        }
    }
    assert_non_null(span_text(nested(2048, "")));
    assert_null(span_text(nested(2048, "1")));
    assert_null(span_text(nested(2049, "")));
    /* many members and elements: the names of a large object, told apart */
    big = o = apr_palloc(pool, 20000 * 24 + 16);
    o += sprintf(o, "{");
    for (i = 0; i < 20000; i++) {
        o += sprintf(o, "%s\"m%05u\":[%u]", i ? "," : "", (unsigned)i, (unsigned)i);
    }
    sprintf(o, "}");
    assert_string_equal(span_text(big), big);
    /* in place: the value's bytes within a larger text */
    {
        static const char body[] = "{\"doc\":{\"a\":[1,2.0]},\"n\":5}";
        apr_size_t len = 0;
        char *padded = apr_pcalloc(pool, sizeof(body) + CP_SJ_PADDING);

        memcpy(padded, body, sizeof(body) - 1);
        assert_string_equal(cp_json_span_text(pool, padded + 7, 13, &len), "{\"a\":[1,2.0]}");
        assert_int_equal(len, 13);
    }
}

/* jansson's own text of a value (json_dumps, compact), pool-owned. */
static const char *jansson_text(const json_t *value)
{
    char *text = json_dumps(value, JSON_COMPACT | JSON_ENCODE_ANY);
    const char *copy = text ? apr_pstrdup(pool, text) : NULL;

    free(text);
    return copy;
}

/* cp_json_text's own writer writes jansson's text byte for byte: member
 * order, every control character, " \ / DEL, UTF-8 (left to jansson),
 * integers to 64 bits either way, doubles (jansson's), names escaped, the
 * scalars at the root; values held by jansson's API as the planner builds
 * them too; a string jansson cannot write leaves the whole value to it
 * (none), and wide integers are their digits. */
static void written_text_is_jansson_s(void **state)
{
    static const char *const values[] = {
        "{}", "[]", "[[],{}]", "{\"a\":[1,2],\"b\":{}}", "{\"b\":1,\"a\":2}",
        "[\"\\u0001\\u001f\\b\\f\\n\\r\\t\\\"\\\\/\\u007f\", \"\\u00e9\\u2028\"]",
        "{\"\\u0000n\\u007f\\n\":\"<a href='x'>&amp;</a>\",\"\\u00e9\":0}",
        "[\"\xc3\xa9\xf0\x9f\x9a\x80\"]",
        "[0,-0,1,-1,9223372036854775807,-9223372036854775808,10,-10,1000000]",
        "[1.0,1.5,-0.0,1e2,1E-2,0.1,1.7976931348623157e308,2.5e-320]",
        "[true,false,null,{\"t\":true,\"f\":false,\"n\":null}]",
        "{\"startkey\":[12,\"item000012\"],\"limit\":21,\"descending\":true,\"skip\":1}",
        "\"scalar\"", "12", "-7", "2.50", "null", "true", "false", "\"\"",
    };
    json_t *built = cp_json_pool_own(pool, json_pack("{s:[{s:i,s:b,s:s#},{s:n}],s:f}", "queries",
                                                     "limit", 3, "reduce", 0, "key", "a\0b", 3,
                                                     "x", "r", 0.25));
    json_t *bad = cp_json_pool_own(pool, json_array());
    apr_size_t i;

    (void)state;
    for (i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
        const json_t *value = cp_json_load(pool, values[i], strlen(values[i]), NULL);
        const char *want, *got;

        assert_non_null(value);
        want = jansson_text(value);
        got = cp_json_write(pool, value);
        if (!got || !want || strcmp(got, want)) {
            fail_msg("%s: written '%s', jansson's '%s'", values[i], got ? got : "(null)",
                     want ? want : "(null)");
        }
        assert_string_equal(cp_json_text(pool, value), want);
    }
    assert_string_equal(cp_json_write(pool, built), jansson_text(built));
    assert_string_equal(cp_json_write(pool, built),
                        "{\"queries\":[{\"limit\":3,\"reduce\":false,\"key\":\"a\\u0000b\"},"
                        "{\"x\":null}],\"r\":0.25}");
    /* a string that is no UTF-8: jansson writes none, nor does the writer */
    json_array_append_new(bad, json_stringn_nocheck("\xc3(", 2));
    assert_null(jansson_text(bad));
    assert_null(cp_json_write(pool, bad));
    assert_null(cp_json_text(pool, bad));
    /* wide integers: their digits, where jansson writes none */
    assert_string_equal(cp_json_write(pool, cp_json_load(pool, "[18446744073709551616,{\"n\":-1e0}]",
                                                         strlen("[18446744073709551616,{\"n\":-1e0}]"),
                                                         NULL)),
                        "[18446744073709551616,{\"n\":-1.0}]");
    /* deep and long: a buffer grown many times */
    assert_string_equal(cp_json_write(pool, cp_json_load(pool, nested(200, "\"x\""),
                                                         strlen(nested(200, "\"x\"")), NULL)),
                        nested(200, "\"x\""));
    /* deeper than the writer goes: jansson's, whole */
    assert_null(cp_json_write(pool, cp_json_load(pool, nested(300, "1"), 601, NULL)));
    assert_string_equal(cp_json_text(pool, cp_json_load(pool, nested(300, "1"), 601, NULL)),
                        nested(300, "1"));
    assert_null(cp_json_write(pool, NULL));
}

/* jansson's allocations while a test counts them. */
static size_t jansson_allocations;

static void *counting_malloc(size_t size)
{
    jansson_allocations++;
    return malloc(size);
}

/* A large value's text is written without jansson's values: no allocation
 * of jansson's for an array of 100,000 integers and an object of 20,000
 * members, a few for each double (jansson writes those). */
static void span_text_builds_no_values(void **state)
{
    char *text = apr_palloc(pool, 100000 * 8 + 20000 * 16 + 64), *o = text;
    apr_size_t len = 0;
    int i;

    o += sprintf(o, "{\"list\":[");
    for (i = 0; i < 100000; i++) {
        o += sprintf(o, "%s%d", i ? "," : "", i);
    }
    o += sprintf(o, "],\"map\":{");
    for (i = 0; i < 20000; i++) {
        o += sprintf(o, "%s\"m%05d\":%d", i ? "," : "", i, i);
    }
    o += sprintf(o, "},\"d\":[0.5,2.5]}");
    memset(o, 0, CP_SJ_PADDING);
    jansson_allocations = 0;
    json_set_alloc_funcs(counting_malloc, free);
    assert_non_null(cp_json_span_text(pool, text, (apr_size_t)(o - text), &len));
    json_set_alloc_funcs(malloc, free);
    assert_int_equal(len, (apr_size_t)(o - text));
    /* each double: its value and the text jansson writes of it */
    /* each double: its value and jansson's buffers as it writes it (four),
     * against 120,000 values for the tree of the whole */
    assert_in_range(jansson_allocations, 1, 2 * 4);
}

/* A visitor that reads JSON while it is told of a body's values: the walk
 * it is in goes on unharmed. */
typedef struct {
    int values;
    int inner_ok;
} counting;

static int count_and_read(void *baton, const cp_sj_value *v)
{
    counting *c = baton;

    const char *inner = "[1,[2,{\"a\":3}]]";
    const json_t *value;

    if (v->kind != CP_SJ_CLOSE) {
        c->values++;
        value = cp_json_load(pool, inner, strlen(inner), NULL);
        c->inner_ok += value && !strcmp(cp_json_text(pool, value), inner);
    }
    return 0;
}

static void a_walk_inside_a_walk(void **state)
{
    const char *body = "{\"a\":[1,2,{\"b\":\"c\"}],\"d\":null}";
    char *padded = apr_pcalloc(pool, strlen(body) + CP_SJ_PADDING);
    counting c = { 0, 0 };

    memcpy(padded, body, strlen(body));
    assert_int_equal(cp_sj_walk(padded, strlen(body), 16, count_and_read, &c), CP_SJ_OK);
    assert_int_equal(c.values, 7);
    assert_int_equal(c.inner_ok, 7);
}

/* The HTML-safe copy, byte for byte what one byte a step writes: every
 * byte value (the neighbours of < > & among them) at every place of runs
 * longer and shorter than the copy's 64 and 16 bytes a step. */
static void html_safe_copies_are_byte_for_byte(void **state)
{
    char text[200], *out = apr_palloc(pool, 6 * sizeof(text)), *want = apr_palloc(pool, 6 * sizeof(text));
    apr_size_t len, at, i, n, specials;
    int c;

    for (len = 0; len <= sizeof(text); len += len < 70 ? 1 : 13) {
        for (at = 0; at <= len; at += at < 20 || at + 20 > len ? 1 : 7) {
            for (c = 0; c < 256; c += at < len ? 1 : 256) {
                memset(text, 'x', len);
                if (at < len) {
                    text[at] = (char)c;
                }
                if (len > 2) {
                    text[len - 1] = len % 3 ? 'y' : '>';
                }
                for (i = n = specials = 0; i < len; i++) {
                    if (text[i] == '<' || text[i] == '>' || text[i] == '&') {
                        n += (apr_size_t)sprintf(want + n, "\\u%04x", (unsigned char)text[i]);
                        specials++;
                    }
                    else {
                        want[n++] = text[i];
                    }
                }
                assert_int_equal(cp_json_html_specials(text, len), specials);
                assert_int_equal(cp_json_copy_html_safe(out, text, len) - out, n);
                assert_memory_equal(out, want, n);
            }
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        UNIT_TEST(scalars_and_containers_at_the_root),
        UNIT_TEST(numbers_are_exact),
        UNIT_TEST(wide_integers_are_numbers),
        UNIT_TEST(number_bytes),
        UNIT_TEST(what_is_not_json_is_refused),
        UNIT_TEST(strings_names_and_duplicates),
        UNIT_TEST(depth_is_jansson_s),
        UNIT_TEST(span_text_is_jansson_s),
        UNIT_TEST(written_text_is_jansson_s),
        UNIT_TEST(span_text_builds_no_values),
        UNIT_TEST(a_walk_inside_a_walk),
        UNIT_TEST(html_safe_copies_are_byte_for_byte),
    };

    RUN_UNIT_TESTS("couchpage_json", tests);
}
