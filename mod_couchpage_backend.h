/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mod_couchpage_backend: ask CouchDB a page's queries as httpd
 * subrequests that mod_proxy serves, and read the JSON answers. Glue,
 * linked into the module and not into the core, since it runs requests.
 *
 * The queries go as one multi-query request, POST INDEX/queries with the
 * body {"queries": [...]}, carried as the subrequest's kept body so that
 * mod_proxy keeps the backend connection pooled (httpd 2.4's
 * modules/proxy/mod_proxy_http.c closes a subrequest's connection unless it
 * has a kept body: "Why DON'T sub-requests use keepalives?"). A
 * backend without that endpoint (pouchdb-server, CouchDB before 2.2) gets
 * one GET per query: learnt from its first answer, noted once in the error
 * log, and remembered for that backend in this process.
 *
 * A _find location's query is one POST .../_find (the transport's find),
 * the same subrequest with its body kept likewise; a design document, one
 * GET (the transport's get).
 *
 * mod_proxy does the HTTP: connection pooling, balancer://, TLS and
 * timeouts are configured with its directives, never here; but a page's
 * reads together end by its CouchPageBackendDeadline, which lowers
 * mod_proxy's timeout for a read when less time is left. Nor does this
 * room see the directory config, or answer the client: the handler does.
 */
#ifndef MOD_COUCHPAGE_BACKEND_H
#define MOD_COUCHPAGE_BACKEND_H

#include "httpd.h"
#include "http_config.h"

#include "couchpage_counts.h"
#include "couchpage_find.h"
#include "couchpage_plan.h"
#include "couchpage_response.h"
#include "couchpage_serve.h"

typedef struct {
    const char *authorization; /* Authorization header for CouchDB, or NULL */
    apr_off_t max_response;    /* the most body bytes one request reads, every
                                  answer of every round together */
    apr_interval_time_t deadline; /* how long a page's reads may take together,
                                  from its first (CouchPageBackendDeadline) */
    int hide_keys;             /* the request log shows keys by their length only
                                  (cp_plan_query_loggable): tokens are sealed */
} couchpage_backend_conf;

/* One backend request, as the debug log tells it (couchpage_backend_stats.log). */
typedef struct {
    const char *method;         /* GET or POST */
    const char *asked;          /* the path and query string (cp_plan_query_loggable),
                                   or the POST's path */
    int queries;                /* the queries it asked */
    apr_size_t body_len;        /* the POST's body, in bytes; 0 for a GET */
    int rv;                     /* mod_proxy's answer (OK, or a status: no answer) */
    int status;                 /* the status the backend answered */
    apr_off_t bytes;            /* the answer's body, in bytes, as far as it was read */
    int cut_off;                /* the answer was cut off */
    apr_interval_time_t time;   /* its wall time, in microseconds */
    const cp_answer **answers;  /* the query results read from it, in order */
    int answered;               /* how many */
} couchpage_backend_request;

/* What a page's backend reads cost, added up over every read of the transport
 * of the page: the caller zeroes it once. (mod_couchpage_status.h names it by
 * its tag, needing nothing else of this header.) */
typedef struct couchpage_backend_stats {
    int requests;             /* subrequests sent, repeats and refused POSTs included */
    apr_interval_time_t time; /* their wall time, summed, in microseconds */
    apr_size_t rows;          /* rows in every query result read */
    apr_off_t bytes;          /* body bytes of the answers read (of an answer
                                 asked again, the one kept): bounded by
                                 couchpage_backend_conf.max_response */
    unsigned served_by;       /* CP_SERVED_BY_*: what brought the answers used */
    apr_time_t began;         /* when the page's first read began (its reads' deadline
                                 counts from it); 0 before */
    apr_array_header_t *log;  /* of couchpage_backend_request *, one a subrequest sent, when
                                 the caller makes it (the debug log); else NULL */
} couchpage_backend_stats;

/* The subrequests' filters, the per-process memory of backends without
 * the multi-query endpoint and of _find locations' indexes and warnings;
 * called from the module's register_hooks. */
void couchpage_backend_register(void);

/* What the transport reads: the page's request, the backend's settings,
 * what the reads cost, and where the location's directives are set (for
 * cp_serve's log lines). */
typedef struct {
    request_rec *r;
    const couchpage_backend_conf *conf;
    couchpage_backend_stats *stats;
    const char *section;
    const ap_directive_t *view_where;
    const ap_directive_t *index_where;
} couchpage_transport_baton;

/* The transport's asking functions (ask, find, get: couchpage_serve.h): the
 * view queries as one multi-query POST (a GET for one query, or one each
 * where the server lacks the endpoint), a read that failed in flight
 * repeated once; asked alone, one GET each, none repeated (the queries a
 * cut multi-query answer left waiting, whose asking is that answer's
 * repeat); a _find's POST and a document's GET, repeated once when they
 * failed in flight. Each answer is read and checked as a view (or _find)
 * response; a multi-query answer cut off after its 200 brings the results
 * complete before the cut (answers->cut_off). Every subrequest sent and
 * every result read is added to stats, on failure too. A read may bring
 * only what is left of conf->max_response after stats->bytes: more is a
 * 502. Every read of the page ends by conf->deadline after the first began
 * (stats->began): one still reading then is stopped, and its backend
 * connection dropped, one not begun is not sent; a 504 with past_deadline. */
void couchpage_backend_transport(cp_transport *transport, couchpage_transport_baton *baton);

#endif
