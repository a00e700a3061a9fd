/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mod_couchpage_request: what a page request asks, read once and checked:
 * the client's arguments and start token (unsealed), the format they
 * choose, the request's partition, and the operator's request-time values.
 * Shared by a view's page (mod_couchpage.c) and a _find location's
 * (mod_couchpage_find.c), so it lives apart from both; a fault is answered
 * through mod_couchpage_answer.c, which in turn reads the client's ?format=
 * here. Glue.
 */
#ifndef MOD_COUCHPAGE_REQUEST_H
#define MOD_COUCHPAGE_REQUEST_H

#include "mod_couchpage_config.h"
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

#endif
