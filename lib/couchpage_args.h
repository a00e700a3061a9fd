/* SPDX-License-Identifier: Apache-2.0 */
/*
 * couchpage_args: the query-string arguments a client may send.
 *
 * Only arguments the module knows are read; every other one is ignored, so
 * nothing a client adds to the query string ever reaches CouchDB.
 *
 * Part of the httpd-free core: no httpd header, no request_rec.
 */
#ifndef COUCHPAGE_ARGS_H
#define COUCHPAGE_ARGS_H

#include <apr_pools.h>

typedef enum {
    CP_FORMAT_AUTO = 0, /* by the Accept header */
    CP_FORMAT_JSON,
    CP_FORMAT_HTML
} cp_format;

/* The format a name names: "json", "html", or "auto" (CP_FORMAT_AUTO); -1
 * for any other. The one reading of format names, for ?format= (which takes
 * json and html) and CouchPageFormat (which lower-cases its word first). */
int cp_format_named(const char *name);

/* A format's name, as cp_format_named reads it: "auto", "json" or "html". */
const char *cp_format_name(cp_format format);

typedef struct {
    const char *start; /* token text, percent-decoded; NULL when absent */
    int limit;         /* rows per page asked for; 0 when absent */
    cp_format format;  /* ?format=json|html; CP_FORMAT_AUTO when absent */
    apr_int64_t page;  /* ?page=N, the page to jump to, from 1; 0 when absent */
} cp_args;

/* The largest page number ?page= takes: more digits are refused as not a
 * page number, before anything is asked. */
#define CP_ARGS_MAX_PAGE 999999999

/* Parses a raw query string (NULL or "" for none). max_limit is the largest
 * limit allowed. page is a whole number from 1 to CP_ARGS_MAX_PAGE, given
 * once and never with start (a page is named by its token or by its number,
 * not both). Returns NULL on success, else the reason for a 400. */
const char *cp_args_parse(apr_pool_t *pool, const char *query, int max_limit,
                          cp_args *args);

/* The format an Accept header prefers: HTML when it ranks text/html above
 * application/json (by q-value, a specific type before a wildcard), else
 * JSON. NULL or empty means JSON. */
cp_format cp_format_from_accept(apr_pool_t *pool, const char *accept);

#endif
