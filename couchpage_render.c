#include "couchpage_render.h"
#include "couchpage_json.h"

#include <apr_escape.h>
#include <apr_strings.h>

const char *cp_link_url(apr_pool_t *pool, const cp_links *links, const char *token)
{
    const char *url = apr_pstrcat(pool, links->path, "?start=",
                                  apr_pescape_urlencoded(pool, token), NULL);
    if (links->limit > 0) {
        url = apr_psprintf(pool, "%s&limit=%d", url, links->limit);
    }
    return url;
}

static json_t *string_or_null(const char *text)
{
    return text ? json_string(text) : json_null();
}

/* A row as the client sees it: id (absent on grouped rows), key, value,
 * and doc with include_docs. */
static json_t *item_of_row(json_t *row)
{
    json_t *item = json_object();
    json_t *id = json_object_get(row, "id");
    json_t *value = json_object_get(row, "value");
    json_t *doc = json_object_get(row, "doc");

    if (id) {
        json_object_set(item, "id", id);
    }
    json_object_set(item, "key", json_object_get(row, "key"));
    json_object_set(item, "value", value ? value : json_null());
    if (doc) {
        json_object_set(item, "doc", doc);
    }
    return item;
}

const char *cp_render_json(apr_pool_t *pool, const cp_page *page,
                           const cp_links *links)
{
    json_t *body = cp_json_pool_own(pool, json_object());
    json_t *items = json_array();
    json_t *link_urls = json_object();
    json_t *row;
    size_t i;

    json_array_foreach(page->rows, i, row) {
        json_array_append_new(items, item_of_row(row));
    }
    json_object_set_new(body, "items", items);
    json_object_set_new(body, "next", string_or_null(page->next));
    json_object_set_new(body, "prev", string_or_null(page->prev));
    json_object_set_new(link_urls, "next", string_or_null(
        page->next ? cp_link_url(pool, links, page->next) : NULL));
    json_object_set_new(link_urls, "prev", string_or_null(
        page->prev ? cp_link_url(pool, links, page->prev) : NULL));
    json_object_set_new(body, "links", link_urls);
    if (page->total_rows) {
        json_object_set(body, "total_rows", (json_t *)page->total_rows);
    }
    if (page->offset) {
        json_object_set(body, "offset", (json_t *)page->offset);
    }
    return cp_json_text(pool, body);
}

const char *cp_render_error(apr_pool_t *pool, const char *error, const char *reason)
{
    json_t *body = cp_json_pool_own(pool, json_object());

    json_object_set_new(body, "error", json_string(error));
    json_object_set_new(body, "reason", json_string(reason));
    return cp_json_text(pool, body);
}
