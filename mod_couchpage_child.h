/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mod_couchpage_child: what a child process remembers from one request to
 * the next, which is only ever a set of keys that makes later requests
 * quieter or cheaper (a backend without a multi-query endpoint, a _find
 * location whose CouchDB warning was logged), or a short note learnt from
 * CouchDB and learnt again when it is old (the fields of a _find
 * location's index), never a page or a token: those the tokens carry. Each set is made at child_init, lives in the
 * child's pool and is guarded by a mutex where threads share it. The
 * child's own set-up is here too: mod_proxy's lines for the module's
 * subrequests kept to crit, and malloc's mmap threshold fixed.
 */
#ifndef MOD_COUCHPAGE_CHILD_H
#define MOD_COUCHPAGE_CHILD_H

#include "httpd.h"

#include "couchpage_serve.h"

typedef struct couchpage_child_set couchpage_child_set;

/* A set of this child, named what in the error log; NULL when it has no
 * mutex (logged): then it holds nothing and remembers nothing. */
couchpage_child_set *couchpage_child_set_make(apr_pool_t *pchild, server_rec *s,
                                              const char *what);

/* Whether the set holds the key (len bytes, or a string with
 * APR_HASH_KEY_STRING). */
int couchpage_child_set_has(couchpage_child_set *set, const void *key, apr_ssize_t len);

/* Adds the key: 1 when it was not there before, 0 when it was or there is
 * no set (what is done once a child is then done at debug, or not). */
int couchpage_child_set_add(couchpage_child_set *set, const void *key, apr_ssize_t len);

/* Notes the text under the key (a string), replacing its note: a set's
 * keys are either added or noted, never both. */
void couchpage_child_note_put(couchpage_child_set *set, const char *key, const char *text);

/* The key's note (a copy in pool), or NULL when it has none. A note
 * written more than max_age ago is still given, and *learn_again is 1 for
 * the one caller that finds it so: it is to learn the note again (and put
 * it), while the others use the old one from then on, for max_age more,
 * rather than all asking at once; else *learn_again is 0. */
const char *couchpage_child_note_get(couchpage_child_set *set, const char *key,
                                     apr_interval_time_t max_age, apr_pool_t *pool,
                                     int *learn_again);

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
