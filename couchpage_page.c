#include "couchpage_page.h"
#include "couchpage_json.h"
#include "couchpage_token.h"

#include <apr_strings.h>

json_t *cp_page_rows(apr_pool_t *pool, const json_t *response, int with_docid,
                     const char **error)
{
    json_t *rows, *row;
    size_t i;

    if (!json_is_object(response)) {
        *error = "the view response is not a JSON object";
        return NULL;
    }
    rows = json_object_get(response, "rows");
    if (!json_is_array(rows)) {
        *error = "the view response has no rows array";
        return NULL;
    }
    json_array_foreach(rows, i, row) {
        const json_t *id;

        if (!json_is_object(row) || !json_object_get(row, "key")) {
            *error = apr_psprintf(pool, "row %u of the view response has no key",
                                  (unsigned)i);
            return NULL;
        }
        id = json_object_get(row, "id");
        if (with_docid && (!json_is_string(id) || json_string_length(id) == 0)) {
            *error = apr_psprintf(pool, "row %u of the view response has no document id",
                                  (unsigned)i);
            return NULL;
        }
    }
    return rows;
}

static const char *row_token(apr_pool_t *pool, const json_t *row, int with_docid)
{
    return cp_token_encode(pool, json_object_get(row, "key"),
                           with_docid ? json_string_value(json_object_get(row, "id"))
                                      : NULL);
}

void cp_page_assemble(apr_pool_t *pool, int count, int with_docid,
                      const json_t *forward, const json_t *backward,
                      const json_t *start_key, cp_page *page)
{
    const json_t *forward_rows = json_object_get(forward, "rows");
    size_t n = json_array_size(forward_rows);
    size_t i;

    /* One row more than the page means there is a next page, starting there. */
    page->rows = cp_json_pool_own(pool, json_array());
    for (i = 0; i < n && i < (size_t)count; i++) {
        json_array_append(page->rows, json_array_get(forward_rows, i));
    }
    page->next = n > (size_t)count
        ? row_token(pool, json_array_get(forward_rows, count), with_docid)
        : NULL;

    /* The backward query's last row of the previous page starts it. */
    page->prev = NULL;
    if (backward) {
        const json_t *backward_rows = json_object_get(backward, "rows");
        size_t first = 0, m = json_array_size(backward_rows);

        if (!with_docid && m > 0
            && json_equal(json_object_get(json_array_get(backward_rows, 0), "key"),
                          (json_t *)start_key)) {
            first = 1;
        }
        if (m - first > (size_t)count) {
            m = first + count;
        }
        if (m > first) {
            page->prev = row_token(pool, json_array_get(backward_rows, m - 1),
                                   with_docid);
        }
    }
    page->total_rows = json_object_get(forward, "total_rows");
    page->offset = json_object_get(forward, "offset");
}
