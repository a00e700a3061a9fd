/*
 * libFuzzer target: the view-response reader. Arbitrary bytes, as a backend
 * body, into cp_json_load, then cp_page_rows for map rows (with docids) and
 * grouped reduce rows (without). Rows it accepts must have what the page
 * assembler relies on. The same bytes as a multi-query response, whole and
 * cut off (cp_page_batch_results): a whole one gives exactly its results or
 * a reason; a cut one the results complete before the cut, and every cut
 * of it no more results than the bytes after.
 */
#include "fuzz.h"
#include "couchpage_json.h"
#include "couchpage_page.h"

#define BATCH 4

/* The bytes as a multi-query response of up to BATCH queries. */
static void batch_response(apr_pool_t *pool, const uint8_t *data, size_t size)
{
    const char *text = fuzz_strndup(pool, data, size), *error = NULL;
    const json_t *results[BATCH], *shorter[BATCH];
    int n, k, j;

    for (n = 1; n <= BATCH; n++) {
        error = NULL;
        k = cp_page_batch_results(pool, text, size, 0, n, results, &error);
        FUZZ_CHECK(k == n || (k == -1 && error && *error), "%d of %d whole results", k, n);
        for (j = 0; j < k; j++) {
            FUZZ_CHECK(results[j], "whole result %d missing", j);
        }
        k = cp_page_batch_results(pool, text, size, 1, n, results, &error);
        FUZZ_CHECK(k >= 0 && k <= n, "%d of %d results before a cut", k, n);
        for (j = 0; j < k; j++) {
            FUZZ_CHECK(json_is_object(results[j]), "result %d before the cut is no object", j);
        }
        /* less text never gives more results, and the same ones */
        if (size > 0) {
            int fewer = cp_page_batch_results(pool, text, size / 2, 1, n, shorter, &error);

            FUZZ_CHECK(fewer <= k, "%d results from half the text, %d from all", fewer, k);
            for (j = 0; j < fewer; j++) {
                FUZZ_CHECK(cp_json_identical(shorter[j], results[j]),
                           "result %d differs when the text is cut shorter", j);
            }
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    apr_pool_t *pool = fuzz_pool();

    batch_response(pool, data, size);
    const char *error = NULL;
    json_t *response = cp_json_load(pool, (const char *)data, size, &error);
    int with_docid;

    if (!response) {
        FUZZ_CHECK(error && *error, "no message for a body that is not JSON");
        apr_pool_destroy(pool);
        return 0;
    }
    FUZZ_CHECK(fuzz_is_json(cp_json_text(pool, response)), "the body's compact text");
    for (with_docid = 0; with_docid <= 1; with_docid++) {
        json_t *rows, *row;
        size_t i;

        error = NULL;
        rows = cp_page_rows(pool, response, with_docid, &error);
        if (!rows) {
            FUZZ_CHECK(error && *error, "no reason for a refused response");
            continue;
        }
        FUZZ_CHECK(json_is_array(rows), "rows is not an array");
        json_array_foreach(rows, i, row) {
            const json_t *id = json_object_get(row, "id");

            FUZZ_CHECK(json_object_get(row, "key"), "row %zu has no key", i);
            FUZZ_CHECK(!with_docid || (json_is_string(id) && json_string_length(id) > 0),
                       "row %zu has no docid", i);
        }
    }
    apr_pool_destroy(pool);
    return 0;
}
