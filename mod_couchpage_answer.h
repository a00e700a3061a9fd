/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mod_couchpage_answer: how a page request is answered: its format, the
 * page with its ETag/304 and Link header, the error responses, and the
 * debug log's lines of a page. Shared by a view's page (mod_couchpage.c)
 * and a _find location's (mod_couchpage_find.c). Glue.
 */
#ifndef MOD_COUCHPAGE_ANSWER_H
#define MOD_COUCHPAGE_ANSWER_H

#include "mod_couchpage_config.h"
#include "couchpage_page.h"
#include "mod_couchpage_request.h"

/* Whether r is included into another page (mod_include) and so answers
 * HTML, unless its location is fixed to JSON. */
int couchpage_is_included_html(const request_rec *r);

/* The format of the answer: the location's, the including page's, the
 * client's (asked), htmx's or Accept's; vary adds Vary for the last two. */
cp_format couchpage_choose_format(request_rec *r, const couchpage_dir_conf *conf,
                                  cp_format asked, int vary);

/* The error responses, in the format a page would have; each returns what
 * the handler returns. */
int couchpage_send_error(request_rec *r, int status, const char *error, const char *reason);
int couchpage_send_backend_error(request_rec *r, const couchpage_dir_conf *conf,
                                 const couchpage_backend_result *result);
int couchpage_send_bad_request(request_rec *r, const char *reason);
int couchpage_send_config_error(request_rec *r, const char *reason);
int couchpage_send_seal_error(request_rec *r, const char *reason);

/* The page: its tokens sealed, its Link header, its body in req's format
 * with its ETag (or 304) and Cache-Control. */
int couchpage_send_page(request_rec *r, const couchpage_dir_conf *conf,
                        const couchpage_page_request *req, cp_page *page);

/* The debug log: a line for each backend request of the page (page NULL:
 * the page failed), and the page's own line once it is answered. */
void couchpage_log_backend_requests(request_rec *r, const couchpage_backend_stats *stats,
                                    const cp_page *page);
void couchpage_log_page(request_rec *r, const couchpage_dir_conf *conf, cp_page *page,
                        int status);

/* Text of an operator's expression result, escaped and cut for the error
 * log. */
const char *couchpage_loggable(request_rec *r, const char *text);

#endif
