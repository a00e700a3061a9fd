/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mod_couchpage_request: a page request in (the client's arguments, the
 * format they choose, the request-time values of the operator's
 * directives, read into the source cp_serve takes) and its response out
 * (the page, with its ETag/304 and Link header; or the fault, logged and
 * answered from one function; the debug log's lines of a page). Glue.
 */
#ifndef MOD_COUCHPAGE_REQUEST_H
#define MOD_COUCHPAGE_REQUEST_H

#include "mod_couchpage_config.h"
#include "couchpage_page.h"
#include "couchpage_serve.h"
#include "couchpage_fresh.h"

/* One request for a page, as the client asks it. */
typedef struct {
    cp_args args;
    cp_format format;   /* json or html, decided */
    int chosen_format;  /* by the client's ?format=, which links then keep */
    int count;          /* rows on the page */
    const char *links_path; /* the path its links point at, escaped */
} couchpage_page_request;

/* Reads the request: the client's arguments, the format and page size
 * they choose, and the location's source for cp_serve with this request's
 * values (its partition, its range's bounds, a _find location's query in
 * spec with every selector placeholder filled). NULL, or the fault. */
const cp_fault *couchpage_read_request(request_rec *r, const couchpage_dir_conf *conf,
                                       couchpage_page_request *req, cp_source *source,
                                       cp_find_spec *spec);

/* The fault, logged at its level with its code and text, and answered
 * with its status, error word and reason in the format a page would have
 * (no cache keeps it); the debug log's lines of the backend requests
 * before it. Returns what the handler returns. */
int couchpage_send_fault(request_rec *r, const couchpage_backend_stats *stats,
                         const cp_fault *fault);

/* What cp_fresh_serve takes of the request (couchpage_fresh.h): key (this
 * configuration's, NULL: none) where the page gets an ETag and its bytes
 * are the core's (not an item template's, which may read anything of the
 * request), the If-None-Match, and the context the seal binds besides the
 * source: the host, the location, the format, the links' path, the item
 * and words of an HTML page (which .htaccess may set). */
void couchpage_fresh_request(request_rec *r, const couchpage_dir_conf *conf,
                             const couchpage_page_request *req, const unsigned char *key,
                             cp_fresh *fresh);

/* The page (or, fresh->not_modified, the 304 cp_fresh_serve decided): its
 * tokens sealed, its Link header, its body in req's format with its ETag
 * (or 304) and Cache-Control; the debug log's lines of its backend
 * requests and of the page. */
int couchpage_send_page(request_rec *r, const couchpage_dir_conf *conf,
                        const couchpage_page_request *req, cp_served *served,
                        const cp_fresh *fresh, const couchpage_backend_stats *stats);

#endif
