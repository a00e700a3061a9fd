/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target: the response reader (couchpage_response), against
 * jansson on the same bytes. Arbitrary bytes, as a backend body, into
 * cp_response_read_view for map rows (with docids) and grouped rows
 * (without), and as a multi-query response, whole and cut off.
 *
 * - What the reader takes, jansson takes, value for value: every row's id,
 *   key, value and doc span, and the row's own, read by the module
 *   (cp_row_decode, cp_row_key, cp_json_load) is the member jansson's own
 *   parser read from the whole body (integers beyond 64 bits: jansson reads
 *   every integer as a double, and the module's digits must be it,
 *   fuzz_same_reading); total_rows and offset are its counts. The one
 *   exception is what jansson cannot read at all: nesting deeper than its
 *   limit, a member name with \u0000 (fuzz_jansson_limit), integers beyond
 *   a double's range.
 * - What the reader refuses as not JSON, jansson refuses (but NUL bytes
 *   between values, which jansson passes over).
 * - A cut body gives the results complete before the cut, and less text
 *   never more of them, nor other ones.
 */
#include "fuzz.h"
#include "couchpage_item.h"
#include "couchpage_json.h"
#include "couchpage_response.h"

#define BATCH 4

static void check_count(apr_int64_t count, const json_t *member, const char *name)
{
    if (json_is_integer(member) && json_integer_value(member) >= 0
        && json_integer_value(member) < 1000000000000000000LL) {
        FUZZ_CHECK(count == json_integer_value(member), "%s %lld, jansson %lld", name,
                   (long long)count, (long long)json_integer_value(member));
    }
    else {
        FUZZ_CHECK(count == -1, "%s %lld where jansson has no count", name, (long long)count);
    }
}

/* An answer the reader took is the view response jansson read. */
static void check_answer(apr_pool_t *pool, const cp_answer *answer, const json_t *response,
                         int as_real)
{
    const json_t *rows = json_object_get(response, "rows");
    apr_size_t i;

    FUZZ_CHECK(json_is_array(rows) && json_array_size(rows) == cp_answer_rows(answer),
               "%zu rows, jansson %zu", (size_t)cp_answer_rows(answer), json_array_size(rows));
    if (!as_real) {
        /* (read with integers as doubles, jansson has no counts to compare) */
        check_count(answer->total_rows, json_object_get(response, "total_rows"), "total_rows");
        check_count(answer->offset, json_object_get(response, "offset"), "offset");
    }
    for (i = 0; i < cp_answer_rows(answer); i++) {
        const cp_row *row = cp_answer_row(answer, i);
        const json_t *expected = json_array_get(rows, i);
        const char *const *member;

        FUZZ_CHECK(fuzz_same_reading(cp_json_load(pool, row->text.text, row->text.len, NULL),
                                     expected, as_real), "row %zu's text", (size_t)i);
        for (member = cp_row_members; *member; member++) {
            const json_t *want = json_object_get(expected, *member);
            cp_span at = cp_row_member(row, *member);

            FUZZ_CHECK((at.len > 0) == (want != NULL), "row %zu's %s found: %zu bytes",
                       (size_t)i, *member, (size_t)at.len);
            if (want) {
                FUZZ_CHECK(fuzz_same_reading(cp_row_decode(pool, row, at), want, as_real),
                           "row %zu's %s differs from jansson's", (size_t)i, *member);
            }
        }
        FUZZ_CHECK(fuzz_same_reading(cp_row_key(row), json_object_get(expected, "key"), as_real),
                   "row %zu's key", (size_t)i);
        if (row->id) {
            const json_t *id = json_object_get(expected, "id");

            FUZZ_CHECK(json_is_string(id) && !strcmp(json_string_value(id), row->id),
                       "row %zu's id", (size_t)i);
        }
    }
}

/* The bytes as a multi-query response of up to BATCH queries. */
static void batch_response(apr_pool_t *pool, const char *text, size_t size,
                           const json_t *whole, int as_real, int beyond)
{
    const cp_answer *results[BATCH], *shorter[BATCH];
    const char *error;
    int n, k, j, fewer;

    for (n = 1; n <= BATCH; n++) {
        error = NULL;
        k = cp_response_read_batch(pool, text, size, 0, n, 0, results, &error);
        FUZZ_CHECK(k == n || (k == -1 && error && *error), "%d of %d whole results", k, n);
        if (k == n && !beyond) {
            const json_t *list = json_object_get(whole, "results");

            FUZZ_CHECK(json_array_size(list) == (size_t)n, "jansson's results");
            for (j = 0; j < k; j++) {
                check_answer(pool, results[j], json_array_get(list, j), as_real);
            }
        }
        error = NULL;
        k = cp_response_read_batch(pool, text, size, 1, n, 0, results, &error);
        FUZZ_CHECK((k >= 0 && k <= n) || (k == -1 && error && *error),
                   "%d of %d results before a cut", k, n);
        if (k <= 0 || size == 0) {
            continue;
        }
        /* less text never gives more results, and the same ones */
        fewer = cp_response_read_batch(pool, cp_response_padded(pool, text, size / 2), size / 2,
                                       1, n, 0, shorter, &error);
        FUZZ_CHECK(fewer <= k, "%d results from half the text, %d from all", fewer, k);
        for (j = 0; j < fewer; j++) {
            FUZZ_CHECK(cp_answer_rows(shorter[j]) == cp_answer_rows(results[j])
                       && shorter[j]->offset == results[j]->offset,
                       "result %d differs when the text is cut shorter", j);
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    apr_pool_t *pool = fuzz_pool();
    /* the body as the backend hands it over: followed by the zero padding */
    const char *text = cp_response_padded(pool, (const char *)data, size);
    int as_real, beyond, with_docid;
    const json_t *whole = cp_json_pool_own(pool, fuzz_jansson_load(text, size, &as_real, &beyond));

    batch_response(pool, text, size, whole, as_real, beyond);
    for (with_docid = 0; with_docid <= 1; with_docid++) {
        const cp_answer *answer = NULL;
        const char *reason = cp_response_read_view(pool, text, size, with_docid, &answer);

        if (reason) {
            FUZZ_CHECK(*reason, "no reason for a refused response");
            /* jansson passes over some NUL bytes between values, which
             * JSON does not allow */
            FUZZ_CHECK(!strstr(reason, "not JSON") || !whole || memchr(text, 0, size),
                       "refused as not JSON, but jansson reads it: %s", reason);
            continue;
        }
        FUZZ_CHECK(whole || beyond, "taken, but jansson refuses it");
        if (whole) {
            check_answer(pool, answer, whole, as_real);
        }
        if (with_docid) {
            apr_size_t i;

            for (i = 0; i < cp_answer_rows(answer); i++) {
                FUZZ_CHECK(cp_answer_row(answer, i)->id && *cp_answer_row(answer, i)->id,
                           "row %zu has no docid", (size_t)i);
            }
        }
    }
    apr_pool_destroy(pool);
    return 0;
}
