/* SPDX-License-Identifier: Apache-2.0 */
/*
 * couchpage_jump: ?page=N, a jump to page N of a numbered location. Page N
 * starts at the location's row (N - 1) × count + 1, as every page of a
 * walk does (docs/algorithm.md, "The Last page"), so a jump finds that row
 * and hands the page on as the token a walk would have followed to it: the
 * page, its links and its tokens are then the walk's page N. The row is
 * found by one read that passes over rows with skip, from the location's
 * start, or from its end the other way; CouchDB reads what it skips, so
 * only pages within CouchPageJumpReach pages of either end are reached,
 * and the rest are refused with a 400 that says which can be.
 *
 * A _find location that no index's view numbers is counted
 * (couchpage_count): a jump asks the count the first page asks, keys
 * only, at most the cap's rows + 1, and finds the row before page N among
 * them. An "at least" count knows no end: only the pages within the reach
 * of the first whose rows it read are reached then (past them, a _find
 * that skips matches examines documents without bound where few match).
 *
 * Grouped reduce rows, which CouchDB gives no offsets, are numbered where
 * they are counted (couchpage_count): a jump asks the count the first page
 * asks, the range's groups in the view's order, at most the cap's + 1,
 * and takes page N's first group from its rows; only where the count
 * stopped at its cap and page N lies past it does a read with skip from
 * the start, asked beside the count, find it (CouchDB reduces every group
 * it skips: the reach bounds that read). The token is the walk's, the
 * count in it ({"g": [KEY], "t": T, "p": P}).
 *
 * Part of the httpd-free core: it plans, reads answers and asks through
 * the caller (cp_serve's ask), never a backend of its own.
 */
#ifndef COUCHPAGE_JUMP_H
#define COUCHPAGE_JUMP_H

#include <apr_pools.h>
#include <apr_tables.h>

#include "couchpage_plan.h"
#include "couchpage_response.h"
#include "couchpage_fault.h"
#include "couchpage_source.h"
#include "couchpage_count.h"

/* How page N of a location of total rows, count a page, is reached with a
 * reach of pages from either end: NULL and *from (CP_JUMP_*), or the
 * reason it is refused (past the last page; beyond the reach, naming the
 * pages that can be reached). */
typedef enum {
    CP_JUMP_FIRST,     /* page 1: the first page, no token */
    CP_JUMP_LAST,      /* the Last page: the token "last" */
    CP_JUMP_FROM_START, /* a read from the location's start */
    CP_JUMP_FROM_END   /* a read from its end, the other way */
} cp_jump_from;

const char *cp_jump_route(apr_pool_t *pool, apr_int64_t page, int count, apr_int64_t total,
                          int reach, cp_jump_from *from);

/* The rows a jump's read passes over (*skip) and reads (*limit) to find
 * the row at place target (from 0, in the view's order) of a location of
 * total rows (-1: unknown, reading from the start), with max_emits rows of
 * slack either side, so that the entry holding the row (a document's rows
 * under one key) is read whole, wherever the read starts. */
void cp_jump_window(apr_int64_t target, apr_int64_t total, int backward, int max_emits,
                    apr_int64_t *skip, int *limit);

/* The row at place target of the location (from 0, in the view's order),
 * in the answer of a read that passed over skip rows from the location's
 * start, or, backward, from its end the other way (total: the location's
 * rows): NULL when the answer does not hold it, else the row, and its
 * place within its entry in *index. CouchDB lists an entry's rows in the
 * same order whichever way it reads, so a backward read is put back in
 * the view's order entry by entry. */
const cp_row *cp_jump_row(const cp_answer *answer, int backward, apr_int64_t skip,
                          apr_int64_t total, apr_int64_t target, int *index);

/* The location's rows by the answers of cp_plan_jump's queries (partial:
 * a key range or a partition, whose probes count them), -1 when CouchDB's
 * numbers do not agree with the read (skip rows before its first). */
apr_int64_t cp_jump_total(const apr_array_header_t *queries, int partial, int backward,
                          apr_int64_t skip);

/* How cp_jump_resolve asks CouchDB (cp_serve's): a plan's queries (ask);
 * and a counted _find location's count as a page's (cp_count_read, capped
 * at cap) into *walk, the rows it counted in *answer (NULL: none) (count). */
typedef struct {
    const cp_fault *(*ask)(void *baton, const cp_source *src, const cp_plan *plan,
                           apr_array_header_t *queries);
    const cp_fault *(*count)(void *baton, int cap, const cp_answer **answer,
                             cp_count_walk *walk);
    void *baton;
} cp_jump_backend;

/* The start token of page req->args->page of the location (index: a
 * _find location's index's view, NULL on a view's location or a _find
 * location by _find), as a client would send it, sealed where tokens are
 * (binding as cp_serve's), in *start, and as text, opened, in *text: NULL
 * for the first page, "last" for the Last page, else the walk's token to
 * page N (a view's row token, a counted grouped row's, or a _find
 * location's page after the row before, with the count a counted one's
 * carries). A _find location by _find is asked with backend's find and
 * count, the others with its ask. NULL, or the fault: a 400 where the rows are not numbered
 * (grouped reduce rows or a _find location by _find not counted:
 * CouchPageCount none, Prefer: count=none), past the last page, or beyond
 * the reach (and, where a count stopped at its cap, past it: its end is
 * not known). */
const cp_fault *cp_jump_resolve(apr_pool_t *pool, const cp_source *src, const cp_source *index,
                                const cp_request *req, const char *binding,
                                const cp_jump_backend *backend, const char **start,
                                const char **text);

/* The 400 of a jump whose page came unnumbered (a backend whose offsets
 * count nothing, pouchdb-server's later pages). */
const cp_fault *cp_jump_unnumbered(apr_pool_t *pool);

#endif
