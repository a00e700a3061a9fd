/*
 * couchpage_render: the response bodies the module sends.
 */
#ifndef COUCHPAGE_RENDER_H
#define COUCHPAGE_RENDER_H

#include <apr_pools.h>
#include "couchpage_page.h"

/* Where page links point: the location's own path, plus the limit the
 * client asked for (0: none), so that following a link keeps the page size. */
typedef struct {
    const char *path; /* already URL-escaped */
    int limit;
} cp_links;

/* The URL of the page that starts at token. */
const char *cp_link_url(apr_pool_t *pool, const cp_links *links, const char *token);

/* {"items":[{"id","key","value","doc"}...],"next","prev",
 *  "links":{"next","prev"},"total_rows","offset"}: id only on rows that have
 *  one, doc only with include_docs, the last two only when CouchDB sent them. */
const char *cp_render_json(apr_pool_t *pool, const cp_page *page,
                           const cp_links *links);

/* {"error": error, "reason": reason} */
const char *cp_render_error(apr_pool_t *pool, const char *error, const char *reason);

#endif
