/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target: the records the response reader keeps
 * (couchpage_response), against jansson on the same bytes. Arbitrary bytes,
 * as a view response with documents; for every row the reader takes, its
 * key, and every path into its id, value and doc (members by name, elements
 * by index, as CouchPageItem's and CouchPageFields' paths walk them, four
 * levels deep: the records hold the members, deeper ones are found in
 * their container's bytes) is looked up with cp_row_find and
 * cp_row_element and decoded with cp_row_decode, and compared with the
 * value jansson's own parser reads at that path, value for value (in a body with integers beyond 64 bits jansson reads every
 * integer as a double, and the module's digits must be it:
 * fuzz_same_reading); a name or an index the value lacks gives nothing;
 * the doc's projection onto its members' names is jansson's object of
 * those members; and the JSON text a field shows, written from a value's
 * bytes (cp_json_span_text), is the text of its decoded value.
 */
#include "fuzz.h"
#include "couchpage_item.h"
#include "couchpage_json.h"
#include "couchpage_response.h"

/* The levels inside a member the paths are checked to. */
#define REACH 4

/* The value at `at` (a span of the row) is `want`, as are all the values
 * inside it within REACH levels of its row member. */
static void check_path(apr_pool_t *pool, const cp_row *row, cp_span at, const json_t *want,
                       int level, int as_real)
{
    const json_t *got = cp_row_decode(pool, row, at);

    const char *written;
    apr_size_t written_len = 0;

    FUZZ_CHECK(at.len > 0 && fuzz_same_reading(got, want, as_real),
               "a value at level %d is not jansson's", level);
    if (at.text != row->key_text.text) {
        written = cp_json_span_text(pool, at.text, at.len, &written_len);
        FUZZ_CHECK(written && written_len == strlen(written)
                   && !strcmp(written, cp_json_text(pool, got)),
                   "the text of a value at level %d is not its decoded value's", level);
    }
    if (level >= REACH) {
        return;
    }
    if (json_is_object(want)) {
        const char *name;
        json_t *member;

        json_object_foreach((json_t *)want, name, member) {
            /* names with NUL characters cannot be asked for */
            if (strlen(name) == json_object_iter_key_len(json_object_key_to_iter(name))) {
                check_path(pool, row, cp_row_find(row, at, name), member, level + 1, as_real);
            }
        }
        FUZZ_CHECK(cp_row_find(row, at, "\x01no such member").len == 0, "a missing member");
        FUZZ_CHECK(cp_row_element(row, at, 0).len == 0, "an element of an object");
    }
    else if (json_is_array(want)) {
        size_t i;

        for (i = 0; i < json_array_size(want); i++) {
            check_path(pool, row, cp_row_element(row, at, i), json_array_get(want, i),
                       level + 1, as_real);
        }
        FUZZ_CHECK(cp_row_element(row, at, json_array_size(want)).len == 0,
                   "an element past the end");
        FUZZ_CHECK(cp_row_find(row, at, "0").len == 0, "a member of an array");
    }
}

/* The doc's projection onto its own names (and one it lacks). */
static void check_projection(apr_pool_t *pool, const cp_row *row, const json_t *doc)
{
    apr_array_header_t *names = apr_array_make(pool, 4, sizeof(const char *));
    const char *name;
    json_t *member, *expected = json_object();
    cp_span projected;

    APR_ARRAY_PUSH(names, const char *) = "\x01no such member";
    json_object_foreach((json_t *)doc, name, member) {
        APR_ARRAY_PUSH(names, const char *) = name;
        json_object_set(expected, name, member);
    }
    projected = cp_row_project(pool, row, names);
    FUZZ_CHECK(json_is_object(doc) == (projected.len > 0), "a projection of no object");
    if (projected.len) {
        FUZZ_CHECK(json_equal((json_t *)cp_json_load(pool, projected.text, projected.len, NULL),
                              expected), "the projection is not jansson's members");
    }
    json_decref(expected);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const members[] = { "id", "key", "value", "doc" };
    apr_pool_t *pool = fuzz_pool();
    const char *text = cp_response_padded(pool, (const char *)data, size);
    const cp_answer *answer = NULL;
    const json_t *whole, *rows;
    apr_size_t i;
    size_t m;
    int as_real, beyond;

    if (cp_response_read_view(pool, text, size, 0, &answer)
        || !(whole = cp_json_pool_own(pool, fuzz_jansson_load(text, size, &as_real,
                                                               &beyond)))) {
        /* refused, or beyond what jansson reads: fuzz_view_response's part */
        apr_pool_destroy(pool);
        return 0;
    }
    rows = json_object_get(whole, "rows");
    FUZZ_CHECK(json_array_size(rows) == cp_answer_rows(answer), "the rows");
    for (i = 0; i < cp_answer_rows(answer); i++) {
        const cp_row *row = cp_answer_row(answer, i);
        const json_t *expected = json_array_get(rows, i);

        for (m = 0; m < sizeof(members) / sizeof(members[0]); m++) {
            const json_t *want = json_object_get(expected, members[m]);
            cp_span at = cp_row_member(row, members[m]);

            FUZZ_CHECK((at.len > 0) == (want != NULL), "row %zu's %s", (size_t)i, members[m]);
            /* a key is decoded whole (cp_row_key); paths into it walk
             * jansson's value (cp_field_get), not records */
            if (want) {
                check_path(pool, row, at, want, strcmp(members[m], "key") ? 0 : REACH, as_real);
            }
        }
        FUZZ_CHECK(fuzz_same_reading(cp_row_key(row), json_object_get(expected, "key"), as_real),
                   "row %zu's key", (size_t)i);
        /* (jansson's members with integers as doubles are no projection) */
        if (json_object_get(expected, "doc") && !as_real) {
            check_projection(pool, row, json_object_get(expected, "doc"));
        }
    }
    apr_pool_destroy(pool);
    return 0;
}
