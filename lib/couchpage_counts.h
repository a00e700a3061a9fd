/* SPDX-License-Identifier: Apache-2.0 */
/*
 * couchpage_counts: what the module's pages cost, as the access log's note
 * of what answered a page's queries and as the counters summed over every
 * process (added to with APR's atomics, which work across processes on a
 * shared mapping), and mod_status's section of them, as HTML or as its
 * ?auto lines. mod_couchpage_status.c keeps the counters in httpd's shared
 * memory and writes what these say.
 *
 * Part of the httpd-free core: no httpd header, no request_rec.
 */
#ifndef COUCHPAGE_COUNTS_H
#define COUCHPAGE_COUNTS_H

#include <apr_pools.h>
#include <apr_version.h>

#if !APR_VERSION_AT_LEAST(1, 7, 0)
#error "mod_couchpage's status counters need APR 1.7 (apr_atomic_add64)"
#endif

/* What answered a page's queries (a bit each). */
#define CP_SERVED_BY_BATCH 0x1  /* a multi-query POST */
#define CP_SERVED_BY_GET   0x2  /* a GET of one query (one query, or the fallback) */
#define CP_SERVED_BY_FIND  0x4  /* a _find location's POST .../_find */

/* The note of what answered (CP_SERVED_BY_*), with what a note before it
 * said (before, or NULL), as "batch+get+find" in that order; NULL when
 * nothing answered. */
const char *cp_served_by_note(apr_pool_t *pool, const char *before, unsigned served_by);

/* The error statuses counted, in the order of cp_counters.errors. */
#define CP_COUNTED_ERRORS 4

/* The sums over every process, in memory they share. */
typedef struct {
    apr_uint64_t pages;              /* pages answered 200 */
    apr_uint64_t backend_requests;
    apr_uint64_t backend_time;       /* microseconds, summed */
    apr_uint64_t rows;
    apr_uint64_t errors[CP_COUNTED_ERRORS]; /* 400, 502, 503, 504 */
} cp_counters;

/* Adds one page answered with status, and what its backend reads cost. */
void cp_counters_add(cp_counters *counters, int status, apr_uint64_t requests,
                     apr_uint64_t time, apr_uint64_t rows);

/* mod_status's section: the module's version, then the counters (NULL:
 * they are off, which the HTML says); as ?auto's lines ("CouchPageRows: 12")
 * when machine, else as HTML. */
const char *cp_counters_section(apr_pool_t *pool, const cp_counters *counters,
                                const char *version, int machine);

#endif
