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
#include "couchpage_count.h"
#include "couchpage_fault.h"
#include "couchpage_find.h"
#include "couchpage_page.h"
#include "couchpage_plan.h"
#include "couchpage_seal.h"
#include "couchpage_transport.h"

/* What a location asks, read from its configuration with this request's
 * values (the glue's, evaluated). */
typedef struct cp_source {
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
    cp_count_policy count;  /* CouchPageCount: what a _find location's count may read */
    int jump_reach;         /* CouchPageJumpReach: ?page=N reads this many pages from
                               either end (couchpage_jump) */
} cp_source;

/* The request's own: its arguments (args.start: the token as sent) and
 * the rows a page holds. */
typedef struct {
    const cp_args *args;    /* args->start no longer than the location's
                               CouchPageMaxTokenLength: the glue caps it */
    int count;
    const char *prefer;     /* the Prefer header as sent (count=...); NULL: none */
} cp_request;

/* A page served, and what sending it needs. */
typedef struct {
    cp_page page;
    const cp_view *view;    /* the view its tokens are bound to (a _find location's
                               index's, with page links): its URL names it in
                               log lines */
    const char *binding;    /* what its tokens are sealed to */
    const char *preference_applied; /* Preference-Applied's value; NULL: none */
    int prefer_varies;      /* the page's count depends on the Prefer header */
} cp_served;

/* How long a child trusts what it learnt of a _find location's index. */
#define CP_SERVE_INDEX_NOTE_MAX_AGE apr_time_from_sec(60)

/* Serves the page: NULL with *served, or the fault that stops it. */
const cp_fault *cp_serve(apr_pool_t *pool, const cp_source *source, const cp_request *req,
                         const cp_transport *transport, cp_served *served);


#endif
