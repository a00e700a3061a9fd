#include "couchpage_page.h"
#include "couchpage_json.h"
#include "couchpage_token.h"

#include <apr_strings.h>
#include <string.h>

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
        /* a token could not carry it: CouchDB's startkey_docid is a C string */
        if (with_docid && strlen(json_string_value(id)) != json_string_length(id)) {
            *error = apr_psprintf(pool, "row %u of the view response has a document id "
                                  "with a NUL character", (unsigned)i);
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

static const json_t *rows_of(const json_t *response)
{
    return json_object_get(response, "rows");
}

/* The first row of the k-th page ahead (k >= 1), or NULL past the end. */
static const json_t *ahead_start(const cp_page_answers *in, size_t k)
{
    if (in->ahead) {
        return k == 1 ? json_array_get(rows_of(in->forward), in->count)
                      : json_array_get(rows_of(in->ahead), (k - 1) * in->count);
    }
    return json_array_get(rows_of(in->forward), k * in->count);
}

/* Rows read backward, past the current page's own first row: without docids
 * the backward query has no skip, and that row comes first when present. */
typedef struct {
    const json_t *rows;
    size_t first, n;
} behind_rows;

static behind_rows rows_behind(const cp_page_answers *in)
{
    behind_rows behind = { rows_of(in->backward), 0, json_array_size(rows_of(in->backward)) };

    if (!in->with_docid && behind.n > 0
        && json_equal(json_object_get(json_array_get(behind.rows, 0), "key"),
                      (json_t *)in->start_key)) {
        behind.first = 1;
    }
    return behind;
}

/* The first row of the k-th page behind (k >= 1): the count-th row further
 * back, or the last row there is when fewer remain (a short first page). */
static const json_t *behind_start(const cp_page_answers *in, const behind_rows *behind,
                                  size_t k)
{
    size_t seen = behind->n - behind->first;

    if (seen > (k - 1) * in->count) {
        size_t at = k * in->count <= seen ? k * in->count : seen;
        return json_array_get(behind->rows, behind->first + at - 1);
    }
    return NULL;
}

/* Whether CouchDB's offset can be the page's true position (see the header):
 * with a total, 0 <= offset <= total - rows on the page, and no fewer rows
 * before the page than were seen behind it. */
static int offset_is_consistent(const cp_page_answers *in, const json_t *offset,
                                const json_t *total_rows, size_t rows,
                                const behind_rows *behind)
{
    json_int_t value, total;

    if (!json_is_integer(offset) || !json_is_integer(total_rows) || in->has_range) {
        return 0;
    }
    value = json_integer_value(offset);
    total = json_integer_value(total_rows);
    if (value < 0 || total < 0 || value > total || (json_int_t)rows > total - value) {
        return 0;
    }
    if (!in->backward) {
        return value == 0;
    }
    return behind->n - behind->first == 0 ? value == 0
                                          : value >= (json_int_t)(behind->n - behind->first);
}

static void add_link(apr_array_header_t *pages, apr_int64_t number, const char *start,
                     int current)
{
    cp_page_link *link = apr_array_push(pages);

    link->number = number;
    link->start = start;
    link->current = current;
}

void cp_page_assemble(apr_pool_t *pool, const cp_page_answers *in, cp_page *page)
{
    const json_t *forward_rows = rows_of(in->forward);
    const json_t *row;
    behind_rows behind = { NULL, 0, 0 };
    size_t i, before = 0, after = 0;
    apr_int64_t current_number = 0;

    page->rows = cp_json_pool_own(pool, json_array());
    for (i = 0; i < json_array_size(forward_rows) && i < (size_t)in->count; i++) {
        json_array_append(page->rows, json_array_get(forward_rows, i));
    }
    row = ahead_start(in, 1);
    page->next = row ? row_token(pool, row, in->with_docid) : NULL;

    page->prev = NULL;
    if (in->backward) {
        behind = rows_behind(in);
        row = behind_start(in, &behind, 1);
        page->prev = row ? row_token(pool, row, in->with_docid) : NULL;
    }

    page->total_rows = json_object_get(in->forward, "total_rows");
    page->offset = json_object_get(in->forward, "offset");
    page->numbered = offset_is_consistent(in, page->offset, page->total_rows,
                                          json_array_size(page->rows), &behind);
    if (!page->numbered) {
        page->offset = NULL;
    }

    page->pages = apr_array_make(pool, 2 * in->links + 1, sizeof(cp_page_link));
    if (in->links == 0) {
        return;
    }
    while (before < (size_t)in->links && in->backward
           && behind_start(in, &behind, before + 1)) {
        before++;
    }
    while (after < (size_t)in->links && ahead_start(in, after + 1)) {
        after++;
    }
    if (page->numbered) {
        json_int_t offset = json_integer_value(page->offset);
        current_number = offset / in->count + (offset % in->count != 0) + 1;
    }
    for (i = before; i >= 1; i--) {
        add_link(page->pages, current_number - (apr_int64_t)i,
                 row_token(pool, behind_start(in, &behind, i), in->with_docid), 0);
    }
    add_link(page->pages, current_number, in->start, 1);
    for (i = 1; i <= after; i++) {
        add_link(page->pages, current_number + (apr_int64_t)i,
                 row_token(pool, ahead_start(in, i), in->with_docid), 0);
    }
}
