/* SPDX-License-Identifier: Apache-2.0 */
/*
 * couchpage_read: what one backend read came to, as the transport's retry
 * loop (mod_couchpage_backend.c) decides on it: whether it failed in
 * flight, whether it is sent again and the log line that says so, and the
 * failure it ends in. The transport runs the reads; what they mean is
 * decided here.
 *
 * Part of the httpd-free core: no httpd header, no request_rec.
 */
#ifndef COUCHPAGE_READ_H
#define COUCHPAGE_READ_H

#include <apr_pools.h>

/* One attempt of a read, as it came back. */
typedef struct {
    int rv;             /* what the proxy answered: 0 when the backend's answer
                           came, else the status of its own (no answer) */
    int backend_status; /* the status the backend answered */
    int timed_out;      /* the proxy noted a timeout */
    int unanswered;     /* the connection failed before any status line came */
    int broken;         /* the body is cut off */
    int too_large;      /* the body passed what was left of its bound */
    int past_deadline;  /* the read was stopped at the page's deadline */
    int batch;          /* a multi-query POST */
    const char *text;   /* the body, padded (CP_RESPONSE_PADDING); NULL: unreadable */
    apr_size_t len;
} cp_read_outcome;

/* How many times a read no answer began to is sent again, besides the
 * one repeat (cp_read_next). */
#define CP_READ_RESENDS 2

/* Whether an attempt is a multi-query answer that CouchDB cut off after
 * its 200: it ends its answer so when it refuses a later query, or when a
 * node it gathers from goes down. Such an answer came: the results
 * complete before the cut are read, and the plan decides what is asked
 * again (cp_plan_ask_alone). */
int cp_read_is_cut_batch(const cp_read_outcome *a);

/* Why a read failed in flight, or NULL if it did not. A refused or reset
 * connection, a body cut off, or a cluster's 500 nodedown are safe to
 * repeat. A timeout is not repeated: it would double the client's wait. A
 * multi-query answer cut off after its 200 did not fail in flight: it is
 * read as far as it came (cp_read_is_cut_batch). */
const char *cp_read_failed_in_flight(apr_pool_t *pool, const cp_read_outcome *a);

/* Whether the read is sent again after attempt a: a connection never made
 * (503) uses the read's repeat (*repeats); a read no answer began to is
 * resent, up to CP_READ_RESENDS times (*resends counts them); any other
 * failure in flight uses the repeat; then the last attempt stands. 1 with
 * the log line that says why ("CP0115: ..."), each counter taken from;
 * else 0. */
int cp_read_next(apr_pool_t *pool, const cp_read_outcome *a, int *resends, int *repeats,
                 const char **line);

/* The failure the last attempt of a read ends in, past its deadline
 * aside: 0 when it brought a body to read (any HTTP status, or a cut
 * multi-query answer); else the status to answer (502, 503, 504) and
 * *reason. tries: the attempts made; max_response: the bound of every
 * answer of the request together, of which bytes_before were read before. */
int cp_read_failure(apr_pool_t *pool, const cp_read_outcome *a, int tries,
                    apr_off_t max_response, apr_off_t bytes_before, const char **reason);

/* Whether a refusal of the multi-query POST (status) may say the server
 * has no such endpoint: pouchdb-server answers 400 only_multipart_accepted,
 * others 404, 405, 415 or 501; CouchDB's own refusal of the first query is
 * a 400 too, so the first query asked alone tells which. */
int cp_read_may_lack_batch(int status);

/* CouchDB's own words for a non-2xx answer (text, len bytes, its body):
 * "CouchDB answered STATUS ERROR: REASON", or the status alone. */
const char *cp_couchdb_reason(apr_pool_t *pool, int status, const char *text, apr_size_t len);

/* Whether an answer is a cluster's 500 "nodedown": the node a coordinator
 * gathered the read from went down while it served it; asked again, a
 * coordinator that saw the node go down no longer asks it. */
int cp_couchdb_nodedown(apr_pool_t *pool, int status, const char *text, apr_size_t len);

#endif
