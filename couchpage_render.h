/*
 * couchpage_render: the response bodies the module sends: JSON, the HTML
 * fragment, and errors.
 */
#ifndef COUCHPAGE_RENDER_H
#define COUCHPAGE_RENDER_H

#include <apr_pools.h>
#include "couchpage_item.h"
#include "couchpage_page.h"

/* Where page links point: the page's own path, plus the limit and format the
 * client asked for, so that following a link keeps them. */
typedef struct {
    const char *path;   /* already URL-escaped */
    int limit;          /* 0: none */
    const char *format; /* NULL: none */
} cp_links;

/* The URL of the page that starts at token; NULL token: the first page. */
const char *cp_link_url(apr_pool_t *pool, const cp_links *links, const char *token);

/* {"items":[{"id","key","value","doc"}...],"next","prev",
 *  "links":{"next","prev","first","last"},"pages":[{"number","start","current","url"}...],
 *  "numbering","total_rows","offset","first_row","last_row","last_page"}: id only
 *  on rows that have one, doc only with include_docs, pages only with page
 *  links; numbering "absolute" when the position is known, else "relative";
 *  total_rows the location's rows when known (see cp_page), offset, first_row
 *  and last_row (1-based, only on a page with rows) only with the position,
 *  links.last and last_page only when the last page is known. */
const char *cp_render_json(apr_pool_t *pool, const cp_page *page,
                           const cp_links *links);

/* What an HTML item shows: a field, linked when link is not NULL. */
typedef struct {
    const cp_field *field;   /* NULL: the row's key */
    const cp_pattern *link;  /* NULL: plain text */
} cp_item_spec;

/* The HTML5 fragment: a div.couchpage holding ul.couchpage-items,
 * p.couchpage-position (when the position is known) and nav.couchpage-nav:
 * prev, the page list (absolute numbers with page 1 and the last page always
 * linked, li.couchpage-gap for the pages between), next, and a.couchpage-last
 * when there is no page list and the last page is known.
 * Every text and URL is escaped. */
const char *cp_render_html(apr_pool_t *pool, const cp_page *page, const cp_links *links,
                           const cp_item_spec *item);

/* An error inside an HTML page: <div class="couchpage couchpage-error">
 * holding the escaped reason. */
const char *cp_render_html_error(apr_pool_t *pool, const char *reason);

/* A strong entity tag for a page's body: base64url of its SHA-1, quoted.
 * Equal bodies have equal tags, so a revalidated page that CouchDB still
 * answers the same way is answered 304. */
const char *cp_render_etag(apr_pool_t *pool, const char *body);

/* {"error": error, "reason": reason} */
const char *cp_render_error(apr_pool_t *pool, const char *error, const char *reason);

#endif
