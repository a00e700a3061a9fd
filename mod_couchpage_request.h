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

/* One request for a page, as the client asks it. */
typedef struct {
    cp_args args;
    cp_format format;   /* json or html, decided */
    int chosen_format;  /* by the client's ?format=, which links then keep */
    int count;          /* rows on the page */
} couchpage_page_request;

/* Reads the request: the client's arguments, the format and page size
 * they choose, and the location's source for cp_serve with this request's
 * values (its partition, its range's bounds, a _find location's query in
 * spec with every selector placeholder filled). NULL, or the fault. */
const cp_fault *couchpage_read_request(request_rec *r, const couchpage_dir_conf *conf,
                                       couchpage_page_request *req, cp_source *source,
                                       cp_find_spec *spec);

/* The path page links point at (the including page's under mod_include). */
const char *couchpage_links_path(request_rec *r);

/* Whether r is included into another page (mod_include) and so answers
 * HTML, unless its location is fixed to JSON. */
int couchpage_is_included_html(const request_rec *r);

/* The format of the answer: the location's, the including page's, the
 * client's (asked), htmx's or Accept's; vary adds Vary for the last two. */
cp_format couchpage_choose_format(request_rec *r, const couchpage_dir_conf *conf,
                                  cp_format asked, int vary);

/* An error response, in the format a page would have; returns what the
 * handler returns. */
int couchpage_send_error(request_rec *r, int status, const char *error, const char *reason);

/* The fault, logged at its level with its code and text, and answered
 * with its status, error word and reason (couchpage_send_error). */
int couchpage_send_fault(request_rec *r, const cp_fault *fault);

/* The page: its tokens sealed, its Link header, its body in req's format
 * with its ETag (or 304) and Cache-Control. */
int couchpage_send_page(request_rec *r, const couchpage_dir_conf *conf,
                        const couchpage_page_request *req, cp_served *served);

/* The debug log: a line for each backend request of the page (page NULL:
 * the page failed), and the page's own line once it is answered. */
void couchpage_log_backend_requests(request_rec *r, const couchpage_backend_stats *stats,
                                    const cp_page *page);
void couchpage_log_page(request_rec *r, const couchpage_dir_conf *conf, cp_page *page,
                        int status);

#endif
