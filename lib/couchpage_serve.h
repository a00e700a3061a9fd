/* SPDX-License-Identifier: Apache-2.0 */
/*
 * couchpage_serve: one page of a location, driven from start to end: its
 * token opened and decoded, a bounded token's row located, its queries
 * planned, asked and widened, a _find location's index learnt, the first
 * or Last page asked when the rows beyond a token went, and every answer
 * checked (its limit, its shape) in one place. It asks CouchDB through a
 * transport (cp_transport: the glue's subrequests, a test's canned
 * answers), as mod_md asks HTTP through md_http.h, and hands back a page or
 * a typed fault (cp_fault) that the glue answers and logs as it is: the
 * core answers no client. httpd-free.
 */
#ifndef COUCHPAGE_SERVE_H
#define COUCHPAGE_SERVE_H

#include <apr_pools.h>
#include <apr_tables.h>
#include <apr_time.h>

#include "couchpage_args.h"
#include "couchpage_find.h"
#include "couchpage_page.h"
#include "couchpage_plan.h"
#include "couchpage_seal.h"

/* Log levels, httpd's numbers (APLOG_ERR ...), so that the glue passes
 * them through. */
#define CP_LOG_ERR 3
#define CP_LOG_WARNING 4
#define CP_LOG_INFO 6
#define CP_LOG_DEBUG 7

/* Whose a fault is: the client's (a bad argument or token), the
 * configuration's (the operator mends it), the backend's (CouchDB refused,
 * failed or was late), the server's (libcrypto failed; the data outgrew a
 * bounded token). */
typedef enum {
    CP_FAULT_CLIENT,
    CP_FAULT_CONFIG,
    CP_FAULT_BACKEND,
    CP_FAULT_SERVER
} cp_fault_class;

/* Why a page is not served, and how that is answered and logged. */
typedef struct {
    cp_fault_class kind;
    int status;           /* the HTTP status answered */
    const char *error;    /* the JSON answer's error word */
    const char *reason;   /* the JSON answer's reason, for the client */
    int log_level;        /* CP_LOG_* */
    const char *log_code; /* "CP0101" */
    const char *log_text; /* the error log's line, after its code */
} cp_fault;

cp_fault *cp_fault_make(apr_pool_t *pool, cp_fault_class kind, int status,
                        const char *error, const char *reason, int log_level,
                        const char *log_code, const char *log_text);

/* The common faults: a bad request (CP0102, 400, reason to the client), a
 * start token refused for where it points (CP0122, 400: why goes to the
 * log only), a configuration error (CP0104, 500) and tokens that could
 * not be sealed or opened (CP0140, 500); uri names the page in the log. */
cp_fault *cp_fault_bad_request(apr_pool_t *pool, const char *reason);
cp_fault *cp_fault_token_refused(apr_pool_t *pool, const char *why);
cp_fault *cp_fault_config(apr_pool_t *pool, const char *uri, const char *reason);
cp_fault *cp_fault_seal(apr_pool_t *pool, const char *uri, const char *reason);

/* How a backend request failed (the transport's), as the fault and its
 * log line tell it. */
typedef struct {
    int status;             /* 502, 503 or 504 for the client (500: the server's) */
    int backend_status;     /* the HTTP status CouchDB answered; 0 without one */
    const char *reason;     /* why, fit for the client and the log */
    int past_deadline;      /* the page's reads passed their deadline: status is 504 */
} cp_transport_failure;

/* Which directive a log line names where it is set (cp_transport.where). */
typedef enum {
    CP_WHERE_VIEW,          /* CouchPageView */
    CP_WHERE_INDEX          /* CouchPageIndex */
} cp_where;

/* What the core asks of its surroundings. Each asking function returns 1
 * with its answer, or 0 with *failure set. */
typedef struct {
    void *baton;
    /* Asks the view queries in asked (const cp_query *: cp_plan_waiting's,
     * or cp_plan_ask_alone's with alone set, each alone) at index_url of
     * backend (cp_view.backend), putting each answer read into answers by
     * its query's role; with_docid: every row has a document id. */
    int (*ask)(void *baton, const char *backend, const char *index_url, int with_docid,
               const apr_array_header_t *asked, int alone, cp_plan_answers *answers,
               cp_transport_failure *failure);
    /* POSTs one _find body to url, its answer read with sort (cp_find_read). */
    int (*find)(void *baton, const char *url, const char *body, const cp_find_sort *sort,
                const cp_answer **answer, cp_transport_failure *failure);
    /* GETs one JSON document: its body, padded, len bytes. */
    int (*get)(void *baton, const char *url, const char **text, apr_size_t *len,
               cp_transport_failure *failure);
    /* POSTs one JSON body to url (CouchDB's _explain): its answer's body,
     * padded, len bytes. */
    int (*post)(void *baton, const char *url, const char *body, const char **text,
                apr_size_t *len, cp_transport_failure *failure);
    /* The child's memory: a note (NULL: none; *again: it is older than
     * max_age, and this request learns it again; a copy in pool), a note
     * put, and whether key is new to the set of locations warned of
     * (once-a-child warnings). */
    const char *(*note_get)(void *baton, const char *key, apr_interval_time_t max_age,
                            apr_pool_t *pool, int *again);
    void (*note_put)(void *baton, const char *key, const char *text);
    int (*first_time)(void *baton, const void *key, apr_size_t len);
    /* A line of the error log: its level, its code ("CP0322") and text. */
    void (*log)(void *baton, int level, const char *code, const char *text);
    /* "SECTION at FILE:LINE" of the directive, for log lines. */
    const char *(*where)(void *baton, cp_where which);
    int debug;              /* debug lines are logged: only then are they written */
} cp_transport;

/* What a location asks, read from its configuration with this request's
 * values (the glue's, evaluated). */
typedef struct {
    const char *uri;        /* the request's path, for log lines and token bindings */
    const void *location;   /* what names the location in first_time's set */
    const cp_view *view;
    const char *low;        /* CouchPageRange's bounds, compact JSON; NULL: open */
    const char *high;
    int range_set;          /* CouchPageRange is set */
    const char *partition;  /* the request's partition; NULL: none */
    int partition_set;      /* CouchPagePartition is set */
    int links;              /* page links either side shown */
    const cp_find_spec *find; /* a _find location's query, selector filled; NULL: a view's */
    const apr_array_header_t *index_fields; /* a _find location's index's view, read
                               for a numbered page: that index's fields, its
                               view key; NULL elsewhere */
    const json_t *index_fixed; /* there: the values the selector's equalities fix its
                               leading fields to, [v1..vk]; NULL: none */
    const cp_seal_key *token_key; /* NULL: plain tokens */
    const cp_seal_key *previous_token_key;
    apr_size_t max_token_length;
    apr_size_t token_url_room; /* the bytes a token may take escaped in a link */
    apr_interval_time_t deadline; /* CouchPageBackendDeadline, for its log line */
    int update_seq;         /* a view location's queries ask update_seq=true: the
                               page's sequence in cp_served.seq (cp_plan_ask_seq) */
} cp_source;

/* The request's own: its arguments (args.start: the token as sent) and
 * the rows a page holds. */
typedef struct {
    const cp_args *args;    /* args->start no longer than the location's
                               CouchPageMaxTokenLength: the glue caps it */
    int count;
} cp_request;

/* A page served, and what sending it needs. */
typedef struct {
    cp_page page;
    const cp_view *view;    /* the view its tokens are bound to (a _find location's
                               index's, with page links): its URL names it in
                               log lines */
    const char *binding;    /* what its tokens are sealed to */
    const char *seq;        /* with source->update_seq, a view location's page: the
                               update_seq its every answer carried (cp_plan_seq);
                               NULL: none, or they differed */
} cp_served;

/* How long a child trusts what it learnt of a _find location's index. */
#define CP_SERVE_INDEX_NOTE_MAX_AGE apr_time_from_sec(60)

/* Serves the page: NULL with *served, or the fault that stops it. */
const cp_fault *cp_serve(apr_pool_t *pool, const cp_source *source, const cp_request *req,
                         const cp_transport *transport, cp_served *served);

/* Text for the error log: control bytes, quotes and backslashes escaped
 * as httpd's ap_escape_logitem does, cut after 200 bytes. */
const char *cp_serve_loggable(apr_pool_t *pool, const char *text);

#endif
