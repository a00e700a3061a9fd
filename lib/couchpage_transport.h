/* SPDX-License-Identifier: Apache-2.0 */
/*
 * couchpage_transport: what the core asks of its surroundings (cp_transport:
 * view queries together or alone, a _find, a GET, a POST, the child's
 * memory, the log), as mod_md asks HTTP through md_http.h, and how a
 * backend request failed. The glue's subrequests implement it
 * (mod_couchpage_backend.c), a test's canned answers too. httpd-free.
 */
#ifndef COUCHPAGE_TRANSPORT_H
#define COUCHPAGE_TRANSPORT_H

#include <apr_pools.h>
#include <apr_tables.h>
#include <apr_time.h>

#include "couchpage_find.h"
#include "couchpage_plan.h"

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
typedef struct cp_transport {
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

#endif
