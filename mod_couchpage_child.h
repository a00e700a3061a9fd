/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mod_couchpage_child: what a child process remembers from one request to
 * the next, which is only ever a set of keys that makes later requests
 * quieter or cheaper (a backend without a multi-query endpoint, a _find
 * location whose CouchDB warning was logged), or a short note learnt from
 * CouchDB and learnt again when it is old (the fields of a _find
 * location's index), never a page or a token: those the tokens carry. Each
 * set (couchpage_memory.h) is made at child_init and lives in the child's
 * pool. The
 * child's own set-up is here too: mod_proxy's lines for the module's
 * subrequests kept to crit, and malloc's mmap threshold fixed.
 */
#ifndef MOD_COUCHPAGE_CHILD_H
#define MOD_COUCHPAGE_CHILD_H

#include "httpd.h"

#include "couchpage_serve.h"

/* Whether backend is known to have no multi-query endpoint; and learning
 * that it has none: 1 the first time in this child. */
int couchpage_child_lacks_batch(const char *backend);
int couchpage_child_learn_lacks_batch(const char *backend);

/* Fills the transport's memory (note_get, note_put, first_time) with this
 * child's notes of _find indexes and its set of _find warnings logged. */
void couchpage_child_memory(cp_transport *transport);

/* The child's set-up (child_init): the quiet twin of each server, and
 * malloc's mmap threshold; called from the module's register_hooks. */
void couchpage_child_register(void);

/* Keeps mod_proxy's own lines for rr, a subrequest of r that mod_proxy
 * serves, to crit, unless r's log level asks for them (debug). */
void couchpage_child_quiet_proxy(request_rec *r, request_rec *rr);

#endif
