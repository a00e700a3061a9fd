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
#include "couchpage_source.h"
#include "couchpage_transport.h"

/* How long a child trusts what it learnt of a _find location's index. */
#define CP_SERVE_INDEX_NOTE_MAX_AGE apr_time_from_sec(60)

/* Serves the page: NULL with *served, or the fault that stops it. */
const cp_fault *cp_serve(apr_pool_t *pool, const cp_source *source, const cp_request *req,
                         const cp_transport *transport, cp_served *served);


#endif
