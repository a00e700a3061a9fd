/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mod_couchpage_request: a page request, in and out: what it asks (the
 * client's arguments and start token, unsealed, the format they choose,
 * the request's partition, the operator's request-time values) and how it
 * is answered (its format, the page with its ETag/304 and Link header, the
 * error responses, the debug log's lines of a page). Shared by a view's
 * page (mod_couchpage.c) and a _find location's (mod_couchpage_find.c).
 * Glue.
 */
#ifndef MOD_COUCHPAGE_REQUEST_H
#define MOD_COUCHPAGE_REQUEST_H

#include "mod_couchpage_config.h"
#include "couchpage_page.h"
#include "couchpage_plan.h"
#include "couchpage_token.h"

/* One request for a page, read and checked. */
typedef struct {
    cp_args args;
    cp_format format;   /* json or html, decided */
    int chosen_format;  /* by the client's ?format=, which links then keep */
    int count;          /* rows on the page */
    const char *token_text; /* the client's start token, unsealed; NULL: none */
    const char *partition;  /* CouchPagePartition's for this request; NULL: none */
    cp_token start;     /* a view's: decoded from token_text, when there is one */
    cp_plan plan;       /* a view's: its view is the location's, merged (conf->view) */
    int with_docid;
} couchpage_page_request;

/* What every location's request carries: the client's arguments and token,
 * and the request's partition: 1, or 0 when the client has been answered
 * with the error. */
int couchpage_read_client_request(request_rec *r, const couchpage_dir_conf *conf,
                                  couchpage_page_request *req);

/* The format the client's ?format= asks, as far as its arguments parse
 * (CP_FORMAT_AUTO: none): an error comes in it too. */
cp_format couchpage_asked_format(request_rec *r, const couchpage_dir_conf *conf);

/* A request-time value of the operator's, as compact JSON in *json (NULL:
 * it yields nothing): 1, or 0 when the client has been answered with the
 * error. what names it for the log, of for the client. */
int couchpage_eval_value(request_rec *r, const char *what, const char *of,
                         const couchpage_key_bound *bound, const char **json);

/* The path page links point at (the including page's under mod_include). */
const char *couchpage_links_path(request_rec *r);

/* What a sealed token is valid for: this location's view, at this path. */
const char *couchpage_token_binding(request_rec *r, const couchpage_dir_conf *conf);


/* --- how it is answered --- */

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
/* A start token refused for where it points (CouchDB refused its range, a
 * bounded token's row not among the location's rows): every such refusal
 * alike, 400 with one reason and CP0122 at info, so that none tells more
 * of the data than a page shows; why goes to the log only. */
int couchpage_send_token_refused(request_rec *r, const char *why);
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

/* --- how its queries are asked --- */

/* Refuses an answer with more rows than its query's limit (a backend that
 * ignored it; cp_answer_overfull's reason): 502 backend_error and one
 * CP0181 line at error naming the location, the rows and the limit, on
 * every kind of location. Returns what couchpage_send_error does. */
int couchpage_refuse_overfull(request_rec *r, const couchpage_dir_conf *conf,
                              const char *reason);

/* Asks CouchDB the queries (cp_query, planned for req->plan) that have no
 * answer yet, together, and those a cut answer left waiting again, alone
 * (cp_plan_ask_alone): 1 with every answer in, read and checked (none over
 * its limit), or 0 when the client has been answered with the error. A
 * CouchDB 400 on a page that starts at a client's token means the token
 * lies outside the location's key range (CouchDB refuses a reversed
 * range): the client's error. What the reads cost is added to stats. */
int couchpage_fetch_answers(request_rec *r, const couchpage_dir_conf *conf,
                            const couchpage_page_request *req, apr_array_header_t *queries,
                            couchpage_backend_stats *stats);

/* A bounded token's row (req->start, a view's token at its row), found
 * among the location's rows that share its bounds (cp_plan_clamp_probes,
 * cp_plan_clamp, cp_plan_locate, cp_page_locate) in req->plan, becomes
 * req->start, a token that holds its key: 1, or 0 when the client has been
 * answered with the error. The page then is planned as from any token.
 * mod_couchpage.c's: a view's page, and a numbered _find page's old links. */
int couchpage_locate_start(request_rec *r, const couchpage_dir_conf *conf,
                           couchpage_page_request *req, couchpage_backend_stats *stats);

/* Text of an operator's expression result, escaped and cut for the error
 * log. */
const char *couchpage_loggable(request_rec *r, const char *text);

#endif
