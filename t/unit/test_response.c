/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of couchpage_response: CouchDB's answers read and checked; they
 * link the core alone. */
#include "unit.h"
#include "couchpage_item.h"
#include "couchpage_response.h"

/* The reader's calls, each on a copy of the text followed by the padding
 * the reader may read past its end (as the backend's bodies are). */
static const char *read_view(const char *text, size_t len, int with_docid,
                             const cp_answer **answer)
{
    return cp_response_read_view(pool, cp_response_padded(pool, text, len), len, with_docid,
                                 answer);
}

static int read_batch(const char *text, size_t len, int cut_off, int n, int with_docid,
                      const cp_answer **answers, const char **error)
{
    return cp_response_read_batch(pool, cp_response_padded(pool, text, len), len, cut_off, n,
                                  with_docid, answers, error);
}

/* The same answer: counts, and each row's id, key and spans. */
static int same_answer(const cp_answer *a, const cp_answer *b)
{
    apr_size_t i;

    if (a->total_rows != b->total_rows || a->offset != b->offset
        || cp_answer_rows(a) != cp_answer_rows(b)) {
        return 0;
    }
    for (i = 0; i < cp_answer_rows(a); i++) {
        const cp_row *x = cp_answer_row(a, i), *y = cp_answer_row(b, i);

        if ((x->id == NULL) != (y->id == NULL) || (x->id && strcmp(x->id, y->id))
            || !cp_json_identical(cp_row_key(x), cp_row_key(y)) || x->text.len != y->text.len
            || memcmp(x->text.text, y->text.text, x->text.len)) {
            return 0;
        }
    }
    return 1;
}

/* A multi-query response, whole and cut off. */
static void batch_responses_are_read_whole_and_cut_off(void **state)
{
    /* as CouchDB 3.4 writes it; a key with braces, brackets and quotes */
    static const char body[] =
        "{\"results\":[\r\n"
        "{\"total_rows\":74,\"offset\":35,\"rows\":[\r\n\r\n]},\r\n"
        "{\"total_rows\":74,\"offset\":3,\"rows\":[\r\n"
        "{\"id\":\"c}\\\"{\",\"key\":[\"]\",{\"a\":\"\\\\\"}],\"value\":null}\r\n]},\r\n"
        "{\"rows\":[\r\n{\"key\":1,\"value\":2}\r\n]}\r\n]}";
    const cp_answer *results[3], *whole[3];
    const char *error = NULL;
    size_t len = sizeof(body) - 1, cut, ends[3];
    int i, k;

    assert_int_equal(read_batch(body, len, 0, 3, 0, whole, &error), 3);
    assert_int_equal(whole[0]->offset, 35);
    assert_int_equal(whole[1]->offset, 3);
    assert_int_equal(whole[1]->total_rows, 74);
    assert_int_equal(whole[2]->offset, -1);
    assert_string_equal(cp_answer_row(whole[1], 0)->id, "c}\"{");
    assert_true(cp_json_identical(cp_row_key(cp_answer_row(whole[1], 0)),
                                  parse("[\"]\",{\"a\":\"\\\\\"}]")));
    /* the first 57 bytes of the response to a refused second query */
    assert_int_equal(read_batch(body, 57, 1, 3, 0, results, &error), 1);
    assert_true(same_answer(results[0], whole[0]));
    /* every cut gives the results whole before it, and only those */
    ends[0] = strstr(body, "]},") - body + 2;
    ends[1] = strstr(body + ends[0], "]},") - body + 2;
    ends[2] = strstr(body + ends[1], "]}\r\n]}") - body + 2;
    for (cut = 0; cut <= len; cut++) {
        int want = (cut >= ends[0]) + (cut >= ends[1]) + (cut >= ends[2]);

        k = read_batch(body, cut, 1, 3, 0, results, &error);
        if (k != want) {
            fail_msg("cut at %zu: %d results, want %d", cut, k, want);
        }
        for (i = 0; i < k; i++) {
            assert_true(same_answer(results[i], whole[i]));
        }
    }
    /* a whole body must be exactly n results */
    assert_int_equal(read_batch(body, len, 0, 2, 0, whole, &error), -1);
    assert_non_null(strstr(error, "no results array of 2"));
    assert_int_equal(read_batch("{\"rows\":[]}", 11, 0, 1, 0, whole, &error),
                     -1);
    assert_int_equal(read_batch("{\"results\":[", 12, 0, 1, 0, whole, &error),
                     -1);
    assert_non_null(strstr(error, "not JSON"));
    /* what is not CouchDB's form gives nothing when cut */
    assert_int_equal(read_batch("{\"rows\":[{}]", 12, 1, 1, 0, results, &error),
                     0);
    assert_int_equal(read_batch("{\"results\":[1,{}", 16, 1, 2, 0, results,
                                            &error), 0);
    /* two results without the comma between them: what is not JSON ends
     * what a cut body sent, after the result complete before it */
    assert_int_equal(read_batch("{\"results\":[{\"rows\":[]}{\"rows\":[]}",
                                            34, 1, 2, 0, results, &error), 1);
    assert_int_equal(read_batch("{\"results\":[{\"rows\":[]}{\"rows\":[]}]}",
                                            36, 0, 2, 0, whole, &error), -1);
    assert_non_null(strstr(error, "not JSON"));
    assert_int_equal(read_batch("{\"results\":[{]}", 15, 1, 1, 0, results,
                                            &error), 0);
    /* bytes that are not UTF-8 after complete results (simdjson's first
     * pass then reads none of the text): the results before them, as a
     * shorter text gives them */
    {
        static const char garbage[] = "{\"results\":[{\"rows\":[]},{\"rows\":[]},7}\xcb\xcb\xcb}";

        assert_int_equal(read_batch(garbage, sizeof(garbage) - 1, 1, 4, 0, results, &error), 2);
        assert_int_equal(read_batch(garbage, sizeof(garbage) - 5, 1, 4, 0, results, &error), 2);
    }
    /* a cut body with a second results array: the first is CouchDB's,
     * whatever comes after it, as a shorter cut reads it */
    {
        static const char twice[] = "{\"results\":[{\"rows\":[{\"key\":1,\"value\":1}]}],"
                                    "\"results\":[{\"rows\":[]},{\"rows\":[]}]}";
        const size_t first_end = strlen("{\"results\":[{\"rows\":[{\"key\":1,\"value\":1}]}]");

        for (cut = first_end; cut < sizeof(twice); cut++) {
            assert_int_equal(read_batch(twice, cut, 1, 2, 0, results, &error), 1);
            assert_int_equal(results[0]->row_count, 1);
        }
    }
    /* a result before the cut that is no view response: the reason */
    error = NULL;
    assert_int_equal(read_batch("{\"results\":[{\"rows\":[{}]},{", 27, 1, 2,
                                            0, results, &error), -1);
    assert_non_null(strstr(error, "result 0: row 0 of the view response has no key"));
    /* with document ids */
    assert_int_equal(read_batch(body, len, 0, 3, 1, whole, &error), -1);
    assert_non_null(strstr(error, "result 2: row 0 of the view response has no document id"));
}

/* A view response of one grouped row whose key is inner inside depth arrays. */
static const char *nested_key_row(int depth, const char *inner)
{
    char *body = apr_palloc(pool, 2 * depth + strlen(inner) + 64), *o = body;
    int d;

    o += sprintf(o, "{\"rows\":[{\"key\":");
    for (d = 0; d < depth; d++) {
        *o++ = '[';
    }
    o += sprintf(o, "%s", inner);
    for (d = 0; d < depth; d++) {
        *o++ = ']';
    }
    strcpy(o, "}]}");
    return body;
}

static void unexpected_response_shapes_are_named(void **state)
{
    struct { const char *body; int with_docid; const char *reason_part; } cases[] = {
        { "[]", 1, "not a JSON object" },
        { "", 1, "not JSON: it is empty" },
        { "{\"total_rows\":0}", 1, "no rows array" },
        { "{\"rows\":{}}", 1, "no rows array" },
        { "{\"rows\":[1]}", 1, "row 0 of the view response has no key" },
        { "{\"rows\":[{\"id\":\"a\",\"key\":1},{\"id\":\"b\"}]}", 1, "row 1" },
        { "{\"rows\":[{\"key\":1}]}", 1, "no document id" },
        { "{\"rows\":[{\"key\":1,\"id\":5}]}", 1, "no document id" },
        { "{\"rows\":[{\"key\":1,\"id\":\"\"}]}", 1, "no document id" },
        { "{\"rows\":[{\"key\":1,\"id\":\"a\\u0000b\"}]}", 1, "document id with a NUL" },
        { "{\"rows\":[{\"key\":1e400,\"id\":\"a\"}]}", 1, "beyond a double's range" },
    };
    const cp_answer *answer = NULL;
    const char *body, *reason;
    size_t i;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const cp_answer *case_answer = NULL;
        const char *case_reason = read_view(cases[i].body, strlen(cases[i].body),
                                            cases[i].with_docid, &case_answer);

        if (!case_reason || !strstr(case_reason, cases[i].reason_part)) {
            fail_msg("'%s': expected '%s', got '%s'", cases[i].body, cases[i].reason_part,
                     case_reason ? case_reason : "(none)");
        }
    }
    /* a key nested deeper than jansson reads (2048) cannot be a token */
    body = nested_key_row(3000, "");
    reason = read_view(body, strlen(body), 0, &answer);
    assert_non_null(reason);
    assert_non_null(strstr(reason, "row 0 of the view response has a key the module "
                                   "cannot read"));
    /* at the limit: 2048 arrays around a number is too deep to decode, 2047
     * decode (fuzz_page found a key the reader took that made no token) */
    body = nested_key_row(2048, "7");
    reason = read_view(body, strlen(body), 0, &answer);
    assert_non_null(reason);
    assert_non_null(strstr(reason, "cannot read (nested deeper than 2048)"));
    body = nested_key_row(2047, "7");
    assert_null(read_view(body, strlen(body), 0, &answer));
    assert_non_null(cp_row_key(cp_answer_row(answer, 0)));
    /* grouped rows have no id */
    assert_int_equal(cp_answer_rows(answer_text("{\"rows\":[{\"key\":1}]}")), 1);
}

/* What jsmn lets through but JSON does not: every one refused, with or
 * without document ids, as a whole answer. */
static void what_is_not_json_is_refused(void **state)
{
    static const char *const bad[] = {
        /* separators */
        "{\"rows\":[{\"key\":1 \"value\":2}]}",
        "{\"rows\":[{\"key\":1,,\"value\":2}]}",
        "{\"rows\":[{\"key\":1,\"value\":2,}]}",
        "{\"rows\":[{\"key\" 1}]}",
        "{\"rows\":[{\"key\"::1}]}",
        "{\"rows\":[{\"key\":1}{\"key\":2}]}",
        "{\"rows\":[{\"key\":1},]}",
        "{\"rows\":[,{\"key\":1}]}",
        "{\"rows\":[{\"key\":[1 2]}]}",
        "{\"rows\":[{\"key\":[1,]}]}",
        "{\"rows\":[{\"key\":{\"a\":\"b\":\"c\"}}]}",
        "{\"rows\":[{\"key\":[\"a\":1]}]}",
        "{\"rows\":[{\"key\":{\"a\"}}]}",
        "{\"rows\":[{\"key\":{\"a\":}}]}",
        "{\"rows\":[]} {}",
        "{\"rows\":[]} 1",
        "{\"rows\":[]}]",
        "{\"rows\":[]}x",
        "{\"rows\":[]}:",
        "{\"rows\":[{\"key\":1,\"value\"}:2]}",
        "{\"rows\":[]},",
        "{\"rows\":[{\"key\":1}]}\n:",
        /* numbers and words */
        "{\"rows\":[{\"key\":01}]}",
        "{\"rows\":[{\"key\":1.}]}",
        "{\"rows\":[{\"key\":.5}]}",
        "{\"rows\":[{\"key\":-}]}",
        "{\"rows\":[{\"key\":1e}]}",
        "{\"rows\":[{\"key\":1e+}]}",
        "{\"rows\":[{\"key\":0x10}]}",
        "{\"rows\":[{\"key\":1.2.3}]}",
        "{\"rows\":[{\"key\":tru}]}",
        "{\"rows\":[{\"key\":nulll}]}",
        "{\"rows\":[{\"key\":-Infinity}]}",
        "{\"rows\":[{\"key\":1,\"value\":NaN}]}",
        "{\"rows\":[{\"key\":1,\"value\":1e309}]}",
        "{\"rows\":[{\"key\":1,\"value\":-1.8e308}]}",
        "{\"rows\":[{\"key\":1,\"value\":11e308}]}",
        "{\"rows\":[{\"key\":1,\"value\":0.00002e313}]}",
        "{\"rows\":[{\"key\":1,\"value\":1e99999999999999999999}]}",
        /* strings */
        "{\"rows\":[{\"key\":\"a\tb\"}]}",
        "{\"rows\":[{\"key\":\"a\nb\"}]}",
        "{\"rows\":[{\"key\":1,\"doc\":{\"t\":\"\x01\"}}]}",
        "{\"rows\":[{\"key\":\"\xff\"}]}",
        "{\"rows\":[{\"key\":\"\xc3\"}]}",
        "{\"rows\":[{\"key\":\"\xc0\xaf\"}]}",
        "{\"rows\":[{\"key\":\"\xe0\x80\xaf\"}]}",
        "{\"rows\":[{\"key\":\"\xed\xa0\x80\"}]}",
        "{\"rows\":[{\"key\":\"\xf4\x90\x80\x80\"}]}",
        "{\"rows\":[{\"key\":\"\xf0\x9f\x98\"}]}",
        "{\"rows\":[{\"key\":1,\"value\":\"\\ud83d\"}]}",
        "{\"rows\":[{\"key\":1,\"value\":\"\\ude00\"}]}",
        "{\"rows\":[{\"key\":1,\"value\":\"\\ud83dx\"}]}",
        "{\"rows\":[{\"key\":1,\"value\":\"\\ud83d\\u0041\"}]}",
        "{\"rows\":[{\"key\":\"\\x\"}]}",
        "{\"rows\":[{\"key\":\"\\u12g4\"}]}",
        "{\"rows\":[{\"key\":\"a}]}",
        /* structure */
        "{\"rows\":[{\"key\":1}]",
        "{\"rows\":[{\"key\":1}]}}",
        "{\"rows\":[{\"key\":1]}}",
        "{\"rows\":[{1:2}]}",
        "{\"rows\":[{[1]:2}]}",
    };
    size_t i;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        const cp_answer *answer = NULL;
        const char *reason = read_view(bad[i], strlen(bad[i]), 0, &answer);

        if (!reason || !strstr(reason, "not JSON")) {
            fail_msg("'%s' was not refused as JSON: %s", bad[i], reason ? reason : "(taken)");
        }
        /* and jansson refuses it too */
        if (json_loadb(bad[i], strlen(bad[i]), 0, NULL)) {
            fail_msg("jansson takes '%s'", bad[i]);
        }
    }
    /* a NUL byte in the body, anywhere */
    {
        static const char with_nul[] = "{\"rows\":[]}\0{}";
        static const char nul_in_string[] = "{\"rows\":[{\"key\":\"a\0b\"}]}";
        /* simdjson ends a number at a NUL byte (its padding is zeros) */
        static const char nul_after_number[] = "{\"rows\":[{\"key\":1,\"value\":0\0}]}";
        const cp_answer *answer = NULL;

        assert_non_null(read_view(with_nul, sizeof(with_nul) - 1, 0, &answer));
        assert_non_null(read_view(nul_after_number, sizeof(nul_after_number) - 1, 0,
                                  &answer));
        assert_non_null(read_view(nul_in_string, sizeof(nul_in_string) - 1, 0,
                                              &answer));
    }
}

/* What JSON allows passes, and its bytes are the bytes sent. */
static void json_passes_through_as_sent(void **state)
{
    static const char *const good[] = {
        /* escapes, non-BMP characters, numbers as spelled */
        "{\"id\":\"a\",\"key\":\"\\u00e9\\n\\t\\\"\\\\\\/\\b\\f\\r\",\"value\":"
        "\"\xf0\x9f\x98\x80 \\ud83d\\ude00 \xe2\x80\xa8 \xc3\xa9 \xef\xbf\xbf \\u0000\"}",
        "{\"id\":\"b\",\"key\":[1.0,-0,1e5,2E-3,-1.5e+10,12345678901234567890123],"
        "\"value\":{\"a\":true,\"b\":false,\"c\":null,\"d\":[],\"e\":{},"
        "\"max\":[1.7976931348623157e308,-179769313486231570e291,0e99999,1e-400],"
        "\"zero\":[0e40098765432109876543210,-0.0E-40098765432109876543210]}}",
        /* integers beyond 64 bits, negative too (simdjson 3.0's get_int64
         * takes some at a document's root), and at its edges */
        "{\"id\":\"i\",\"key\":[-13063423482657570260,9223372036854775807,"
        "-9223372036854775808,9223372036854775808],\"value\":-13063423482657570260}",
        /* a key that simdjson's number reader refuses and JSON allows */
        "{\"id\":\"z\",\"key\":[0e40098765432109876543210,1],\"value\":null}",
        "{ \"id\" : \"c\" , \"key\" : [ 1 , { \"x\" : [ ] } ] , \"value\" : null ,"
        " \"doc\" : { \"_id\" : \"c\" , \"<tag>\" : \"&amp;\" } }",
    };
    size_t i;

    for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        const cp_row *row = row_text(good[i]);
        const json_t *whole = cp_json_load(pool, good[i], strlen(good[i]), NULL);
        const char *member;
        int m;

        assert_memory_equal(row->text.text, good[i], strlen(good[i]));
        for (m = 0; (member = cp_row_members[m]) != NULL; m++) {
            cp_span at = cp_row_member(row, member);
            const json_t *expected = json_object_get(whole, member);

            if (!expected) {
                assert_int_equal(at.len, 0);
                continue;
            }
            /* the key as the module decoded it is jansson's, member order,
             * integers and reals alike */
            if (!strcmp(member, "key") && !cp_json_identical(cp_row_key(row), expected)) {
                fail_msg("row %zu: the key differs from jansson's", i);
            }
            /* the span is JSON that jansson reads as the whole's member */
            if (!json_equal((json_t *)cp_row_decode(pool, row, at), (json_t *)expected)) {
                fail_msg("row %zu: %s differs", i, member);
            }
        }
    }
    /* deep nesting (CouchDB allows it; jansson reads 2048 levels): a value
     * passes as its bytes */
    {
        int depth = 5000, d;
        char *deep = apr_palloc(pool, 2 * depth + 64), *o = deep;
        const cp_row *row;

        o += sprintf(o, "{\"id\":\"d\",\"key\":1,\"value\":");
        for (d = 0; d < depth; d++) {
            *o++ = '[';
        }
        for (d = 0; d < depth; d++) {
            *o++ = ']';
        }
        strcpy(o, "}");
        row = row_text(deep);
        assert_int_equal(row->value.len, 2 * depth);
        assert_int_equal(row->value.text[0], '[');
        assert_int_equal(row->value.text[2 * depth - 1], ']');
    }
}

/* Fields are found without reading the rest, the last of a name as a JSON
 * parser keeps it; a projection keeps the bytes of the members named. */
static void fields_are_found_and_projected(void **state)
{
    const cp_row *row = row_text(
        "{\"id\":\"p\",\"key\":\"2026-01-02\",\"value\":null,\"doc\":{\"_id\":\"p\","
        "\"title\":\"T\\u00e9 <1>\",\"tags\":[\"a\",{\"b\":[1,2]}],\"n\":1,\"body\":"
        "{\"deep\":[[[\"x\"]]]},\"n\":2.50,\"caf\\u00e9\":\"escaped name\"}}");
    apr_array_header_t *names = apr_array_make(pool, 4, sizeof(const char *));
    cp_span doc = cp_row_member(row, "doc");
    cp_span projected;

    assert_true(doc.len > 0);
    assert_true(cp_json_identical(cp_row_decode(pool, row, cp_row_find(row, doc, "title")),
                                  parse("\"T\\u00e9 <1>\"")));
    assert_true(cp_json_identical(cp_row_decode(pool, row, cp_row_find(row, doc, "n")),
                                  parse("2.5")));
    assert_true(cp_json_identical(
        cp_row_decode(pool, row, cp_row_find(row, cp_row_element(row, cp_row_find(row, doc,
                                                                                  "tags"), 1),
                                             "b")), parse("[1,2]")));
    assert_int_equal(cp_row_element(row, cp_row_find(row, doc, "tags"), 2).len, 0);
    assert_int_equal(cp_row_find(row, doc, "none").len, 0);
    assert_int_equal(cp_row_find(row, cp_row_find(row, doc, "title"), "x").len, 0);
    assert_int_equal(cp_row_element(row, doc, 0).len, 0);
    assert_null(cp_row_decode(pool, row, cp_row_find(row, doc, "none")));
    assert_true(cp_json_identical(cp_row_decode(pool, row, cp_row_find(row, doc, "caf\xc3\xa9")),
                                  parse("\"escaped name\"")));

    APR_ARRAY_PUSH(names, const char *) = "n";
    APR_ARRAY_PUSH(names, const char *) = "title";
    APR_ARRAY_PUSH(names, const char *) = "missing";
    APR_ARRAY_PUSH(names, const char *) = "caf\xc3\xa9";
    projected = cp_row_project(pool, row, names);
    assert_int_equal(projected.len,
                     strlen("{\"n\":2.50,\"title\":\"T\\u00e9 <1>\",\"caf\\u00e9\":\"escaped name\"}"));
    assert_memory_equal(projected.text,
                        "{\"n\":2.50,\"title\":\"T\\u00e9 <1>\",\"caf\\u00e9\":\"escaped name\"}",
                        projected.len);
    /* a row without a doc object projects nothing */
    assert_int_equal(cp_row_project(pool, row_text("{\"key\":1,\"doc\":null}"), names).len, 0);
    assert_int_equal(cp_row_project(pool, row_text("{\"key\":1}"), names).len, 0);
}

/* Rows cost no decoding until the page asks for a key: many rows read,
 * each key decoded at its first cp_row_key, as jansson reads it; the last
 * rows member counts. */
static void rows_are_read_and_keys_decoded_when_asked(void **state)
{
    const int count = 5000, depth = 2048;
    char *body = apr_palloc(pool, (apr_size_t)count * 64 + 2 * depth + 128), *o = body;
    const cp_answer *answer = NULL;
    const cp_row *row;
    const json_t *key;
    const char *reason;
    int i, d;

    o += sprintf(o, "{\"total_rows\":%d,\"rows\":[{\"id\":\"x\",\"key\":0}],\"rows\":[",
                 count);
    for (i = 0; i < count; i++) {
        o += sprintf(o, "%s{\"id\":\"d%d\",\"key\":[%d,\"k\\u00e9\"],\"value\":null}",
                     i ? "," : "", i, i);
    }
    /* a key nested as deep as a token may carry one */
    o += sprintf(o, ",{\"id\":\"deep\",\"key\":");
    for (d = 0; d < depth; d++) {
        *o++ = '[';
    }
    for (d = 0; d < depth; d++) {
        *o++ = ']';
    }
    o += sprintf(o, "}]}");
    reason = read_view(body, (size_t)(o - body), 1, &answer);
    assert_null(reason);
    assert_int_equal(cp_answer_rows(answer), count + 1);
    for (i = 0; i < count + 1; i++) {
        assert_null(cp_answer_row(answer, i)->key);
    }
    for (i = 0; i < count; i += 997) {
        row = cp_answer_row(answer, i);
        key = cp_row_key(row);
        assert_non_null(key);
        assert_ptr_equal(cp_row_key(row), key);
        assert_int_equal(json_integer_value(json_array_get(key, 0)), i);
        assert_string_equal(json_string_value(json_array_get(key, 1)), "k\xc3\xa9");
        assert_string_equal(row->id, apr_psprintf(pool, "d%d", i));
    }
    assert_null(cp_answer_row(answer, 1)->key);
    key = cp_row_key(cp_answer_row(answer, count));
    for (d = 1; d < depth; d++) {
        assert_true(json_is_array(key) && json_array_size(key) == 1);
        key = json_array_get(key, 0);
    }
    assert_true(json_is_array(key) && json_array_size(key) == 0);
}

/* A scalar key is decoded from its bytes without a reader (a string
 * without escapes is its text): the same value the reader gives its text,
 * every kind of scalar, wide integers and escaped strings alike. */
static void scalar_keys_are_their_bytes(void **state)
{
    static const char *const keys[] = {
        "\"plain\"", "\"\"", "\"caf\xc3\xa9\"", "\"a\\\"b\"", "\"\\u00e9\\n\"", "0",
        "-17", "1.5e3", "0.25", "123456789012345678901234567890", "-9223372036854775809",
        "true", "false", "null"
    };
    const cp_answer *answer = NULL;
    const json_t *key, *read;
    apr_size_t i;

    for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        const char *body = apr_psprintf(pool, "{\"total_rows\":1,\"offset\":0,\"rows\":"
                                        "[{\"id\":\"a\",\"key\":%s,\"value\":null}]}",
                                        keys[i]);

        assert_null(read_view(body, strlen(body), 1, &answer));
        key = cp_row_key(cp_answer_row(answer, 0));
        read = cp_json_load(pool, keys[i], strlen(keys[i]), NULL);
        assert_non_null(key);
        assert_non_null(read);
        assert_true(cp_json_identical(key, read));
        assert_string_equal(cp_json_text(pool, key), cp_json_text(pool, read));
    }
}

/* What the reader keeps of a large document: a record for the doc and
 * each of its members, not for the 120,000 values inside them (a record
 * is larger than a small value's bytes); a field reaches them all the
 * same, through their container's bytes. */
static void records_are_the_members(void **state)
{
    char *text = apr_palloc(pool, 100000 * 8 + 20000 * 16 + 256), *o = text;
    const cp_answer *answer;
    const cp_row *row;
    cp_span doc, at;
    int i;

    o += sprintf(o, "{\"rows\":[{\"id\":\"big\",\"key\":1,\"value\":null,\"doc\":"
                    "{\"_id\":\"big\",\"_rev\":\"1-a\",\"list\":[");
    for (i = 0; i < 100000; i++) {
        o += sprintf(o, "%s%d", i ? "," : "", i);
    }
    o += sprintf(o, "],\"map\":{");
    for (i = 0; i < 20000; i++) {
        o += sprintf(o, "%s\"m%05d\":%d", i ? "," : "", i, i);
    }
    sprintf(o, "}}}]}");
    answer = answer_text(text);
    assert_int_equal(cp_answer_rows(answer), 1);
    /* the doc and its four members */
    assert_int_equal(answer->node_count, 5);
    row = cp_answer_row(answer, 0);
    doc = cp_row_member(row, "doc");
    at = cp_row_element(row, cp_row_find(row, doc, "list"), 99999);
    assert_int_equal(at.len, 5);
    assert_memory_equal(at.text, "99999", 5);
    at = cp_row_find(row, cp_row_find(row, doc, "map"), "m19999");
    assert_true(cp_json_identical(cp_row_decode(pool, row, at), parse("19999")));
    assert_int_equal(cp_row_element(row, cp_row_find(row, doc, "list"), 100000).len, 0);
}

/* What the records reach: a key wholly; the members of ids, values and
 * docs; a lookup deeper walks the bytes
 * of the container it looks in, and finds what the records would (the
 * last member of a name; a string with escapes decoded); a value with
 * more inside than is recorded decodes all the same. Numbers simdjson misreads (more than 19 digits) are
 * jansson's; strings decode with and without escapes. A thread's parser
 * that read a large answer reads small ones after it. */
static void fields_reach_records_and_bytes(void **state)
{
    static const char text[] =
        "{\"id\":\"r\",\"key\":[-0.00894005382608812345678948081,\"a\\\"b\"],"
        "\"value\":{\"l1\":{\"l2\":{\"l3\":{\"l4\":{\"l5\":{\"l6\":[1,2]}}}}}},"
        "\"doc\":{\"s\":\"plain\",\"e\":\"tab\\there\","
        "\"deep\":{\"t\":\"x\",\"u\":\"plain\",\"t\":\"q\\\"\\nz2\"}}}";
    static const char *const path[] = { "l1", "l2", "l3", "l4", "l5", "l6" };
    const cp_row *row = row_text(text);
    cp_span at = cp_row_member(row, "value");
    const json_t *whole = parse(text);
    char *large, *o;
    int i;

    assert_true(cp_json_identical(cp_row_key(row), json_object_get(whole, "key")));
    assert_true(json_real_value(json_array_get(cp_row_key(row), 0)) < -0.0089);
    /* the value's members are recorded; deeper values are found in their
     * container's bytes: any depth, the last member of a name, an element */
    for (i = 0; i < 6; i++) {
        at = cp_row_find(row, at, path[i]);
        assert_true(at.len > 0);
    }
    assert_true(cp_json_identical(cp_row_decode(pool, row, cp_row_element(row, at, 1)),
                                  parse("2")));
    assert_int_equal(cp_row_element(row, at, 2).len, 0);
    at = cp_row_find(row, cp_row_member(row, "value"), "l1");
    assert_true(cp_json_identical(cp_row_decode(pool, row, cp_row_find(row, at, "l2")),
                                  parse("{\"l3\":{\"l4\":{\"l5\":{\"l6\":[1,2]}}}}")));
    assert_int_equal(cp_row_find(row, at, "l9").len, 0);
    at = cp_row_member(row, "doc");
    {
        cp_span t = cp_row_find(row, cp_row_find(row, at, "deep"), "t");
        apr_size_t len = 0;
        const char *s = cp_row_string(row, t, &len);

        assert_int_equal(len, 5);
        assert_memory_equal(s, "q\"\nz2", 5);
        assert_true(cp_json_identical(cp_row_decode(pool, row, t), parse("\"q\\\"\\nz2\"")));
        s = cp_row_string(row, cp_row_find(row, cp_row_find(row, at, "deep"), "u"), &len);
        assert_int_equal(len, 5);
        assert_memory_equal(s, "plain", 5);
    }
    assert_true(cp_json_identical(cp_row_decode(pool, row, cp_row_member(row, "value")),
                                  json_object_get(whole, "value")));
    assert_true(cp_json_identical(cp_row_decode(pool, row, cp_row_find(row,
                                      cp_row_member(row, "doc"), "e")), parse("\"tab\\there\"")));
    assert_true(cp_json_identical(cp_row_decode(pool, row, cp_row_find(row,
                                      cp_row_member(row, "doc"), "s")), parse("\"plain\"")));
    /* a large answer, then a small one */
    large = o = apr_palloc(pool, 4000 * 160 + 64);
    o += sprintf(o, "{\"rows\":[");
    for (i = 0; i < 4000; i++) {
        o += sprintf(o, "%s{\"id\":\"d%d\",\"key\":%d,\"value\":\"%080d\"}", i ? "," : "",
                     i, i, i);
    }
    o += sprintf(o, "]}");
    assert_true(o - large > 256 * 1024);
    assert_int_equal(cp_answer_rows(answer_text(large)), 4000);
    assert_int_equal(cp_answer_rows(answer_text("{\"rows\":[{\"key\":1}]}")), 1);
}

/* Integers wider than 64 bits are read as CouchDB sent them, in keys and
 * in values, from records and from bytes: never as the nearest double. */
static void wide_integers_are_read_exactly(void **state)
{
    static const char text[] =
        "{\"rows\":[{\"id\":\"a\",\"key\":18446744073709551615,"
        "\"value\":{\"n\":-18446744073709551617,\"d\":1.8446744073709552e19}},"
        "{\"id\":\"b\",\"key\":[18446744073709551616,\"x\"],\"value\":18446744073709551616}]}";
    const cp_answer *answer = answer_text(text);
    const cp_row *a = cp_answer_row(answer, 0), *b = cp_answer_row(answer, 1);
    cp_span value = cp_row_member(a, "value");

    assert_int_equal(cp_answer_rows(answer), 2);
    assert_true(cp_json_is_wide(cp_row_key(a)));
    assert_string_equal(cp_json_text(pool, cp_row_key(a)), "18446744073709551615");
    assert_string_equal(cp_json_text(pool, cp_row_key(b)), "[18446744073709551616,\"x\"]");
    assert_string_equal(cp_json_text(pool, cp_row_decode(pool, a, value)),
                        "{\"n\":-18446744073709551617,\"d\":1.8446744073709552e19}");
    assert_string_equal(cp_json_text(pool, cp_row_decode(pool, a, cp_row_find(a, value, "n"))),
                        "-18446744073709551617");
    assert_true(json_is_real(cp_row_decode(pool, a, cp_row_find(a, value, "d"))));
    assert_string_equal(cp_json_text(pool, cp_row_decode(pool, b, cp_row_member(b, "value"))),
                        "18446744073709551616");
    assert_false(cp_json_identical(json_array_get(cp_row_key(b), 0),
                                   cp_row_decode(pool, a, cp_row_find(a, value, "d"))));
}

/* An answer over its query's limit is refused with a reason, a view's
 * and a _find's alike; one at or under it is not. */
static void answers_over_their_limit_are_refused(void **state)
{
    static const char view[] = "{\"total_rows\":9,\"offset\":0,\"rows\":["
                                "{\"id\":\"a\",\"key\":1},{\"id\":\"b\",\"key\":2},"
                                "{\"id\":\"c\",\"key\":3}]}";
    static const char find[] = "{\"docs\":[{\"_id\":\"a\"},{\"_id\":\"b\"},"
                                "{\"_id\":\"c\"}],\"bookmark\":\"x\"}";
    const cp_answer *answer = NULL;

    assert_null(read_view(view, sizeof(view) - 1, 1, &answer));
    assert_null(cp_answer_overfull(pool, answer, 3));
    assert_null(cp_answer_overfull(pool, answer, 4));
    assert_string_equal(cp_answer_overfull(pool, answer, 2),
                        "3 rows, more than its limit of 2");
    assert_null(cp_response_read_find(pool, cp_response_padded(pool, find, sizeof(find) - 1),
                                      sizeof(find) - 1, &answer));
    assert_null(cp_answer_overfull(pool, answer, 3));
    assert_string_equal(cp_answer_overfull(pool, answer, 0),
                        "3 rows, more than its limit of 0");
    assert_null(cp_answer_overfull(pool, NULL, 0));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        UNIT_TEST(batch_responses_are_read_whole_and_cut_off),
        UNIT_TEST(unexpected_response_shapes_are_named),
        UNIT_TEST(what_is_not_json_is_refused),
        UNIT_TEST(json_passes_through_as_sent),
        UNIT_TEST(fields_are_found_and_projected),
        UNIT_TEST(rows_are_read_and_keys_decoded_when_asked),
        UNIT_TEST(scalar_keys_are_their_bytes),
        UNIT_TEST(records_are_the_members),
        UNIT_TEST(fields_reach_records_and_bytes),
        UNIT_TEST(wide_integers_are_read_exactly),
        UNIT_TEST(answers_over_their_limit_are_refused),
    };

    RUN_UNIT_TESTS("response", tests);
}
