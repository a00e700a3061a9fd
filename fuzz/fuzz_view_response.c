/*
 * libFuzzer target: the view-response reader. Arbitrary bytes, as a backend
 * body, into cp_json_load, then cp_page_rows for map rows (with docids) and
 * grouped reduce rows (without). Rows it accepts must have what the page
 * assembler relies on.
 */
#include "fuzz.h"
#include "couchpage_json.h"
#include "couchpage_page.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    apr_pool_t *pool = fuzz_pool();
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
