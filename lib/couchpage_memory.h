/* SPDX-License-Identifier: Apache-2.0 */
/*
 * couchpage_memory: what a process remembers from one request to the
 * next, as a set of keys, or of keys with a short note each that is learnt
 * again when it is old; safe for the threads of one process (a mutex where
 * APR has threads). mod_couchpage_child.c keeps a child's sets in them: a
 * backend without a multi-query endpoint, a _find location's index's
 * fields, the _find locations whose warning was logged.
 *
 * Part of the httpd-free core: no httpd header, no request_rec.
 */
#ifndef COUCHPAGE_MEMORY_H
#define COUCHPAGE_MEMORY_H

#include <apr_hash.h>
#include <apr_pools.h>
#include <apr_time.h>

typedef struct cp_memory cp_memory;

/* A set living in pool; NULL when it can have no mutex. Each function
 * takes NULL for a set that holds nothing and remembers nothing. */
cp_memory *cp_memory_make(apr_pool_t *pool);

/* Whether the set holds the key (len bytes, or a string with
 * APR_HASH_KEY_STRING). */
int cp_memory_has(cp_memory *set, const void *key, apr_ssize_t len);

/* Adds the key: 1 when it was not there before, 0 when it was or there is
 * no set (what is done once a process is then done at debug, or not). */
int cp_memory_add(cp_memory *set, const void *key, apr_ssize_t len);

/* Notes the text under the key (a string), replacing its note: a set's
 * keys are either added or noted, never both. */
void cp_memory_note_put(cp_memory *set, const char *key, const char *text);

/* The key's note (a copy in pool), or NULL when it has none. A note
 * written more than max_age ago is still given, and *learn_again is 1 for
 * the one caller that finds it so: it is to learn the note again (and put
 * it), while the others use the old one from then on, for max_age more,
 * rather than all asking at once; else *learn_again is 0. */
const char *cp_memory_note_get(cp_memory *set, const char *key, apr_interval_time_t max_age,
                               apr_pool_t *pool, int *learn_again);

/* A thread's last few texts made from others, each kept with the text it
 * was made from: for a pure function whose argument comes back request
 * after request (a packed sequence, until its index moves), so that it is
 * not made again. A variable of the thread (_Thread_local, zeroed), no
 * lock; CP_THREAD_MEMO_SLOTS pairs, replaced in turn, each text at most
 * CP_THREAD_MEMO_MAX bytes, in malloc'd memory the next pair replaces. */
#define CP_THREAD_MEMO_SLOTS 4
#define CP_THREAD_MEMO_MAX 8192

typedef struct {
    struct {
        char *from;
        char *made;
    } slot[CP_THREAD_MEMO_SLOTS];
    unsigned next;
} cp_thread_memo;

/* What was kept as made from the text from (a copy in pool), or NULL. */
const char *cp_thread_memo_get(const cp_thread_memo *memo, apr_pool_t *pool, const char *from);

/* Keeps made as made from from (nothing when either is too long or memory
 * runs out). */
void cp_thread_memo_put(cp_thread_memo *memo, const char *from, const char *made);

#endif
