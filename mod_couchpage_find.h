/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mod_couchpage_find: a Mango _find location's page (CouchPageView
 * .../DB/_find); its directives are mod_couchpage_config.c's. Glue.
 */
#ifndef MOD_COUCHPAGE_FIND_H
#define MOD_COUCHPAGE_FIND_H

#include "mod_couchpage_config.h"

/* The hook of the memory of locations warned of (child_init), called from
 * register_hooks. */
void couchpage_find_register(void);

/* Whether this request's page of a _find location is served from the view
 * of its index (CouchPageIndex), which numbers it: when the index's fields
 * (learnt from its design document, again each minute) are the selector's
 * equalities then the sort (cp_find_index_range). 1 with *by_index the
 * configuration that reads that view's key range, with its documents, or
 * NULL (the page goes by _find); 0 when the client has been answered with
 * the error. */
int couchpage_find_by_index(request_rec *r, const couchpage_dir_conf *conf,
                            couchpage_backend_stats *stats,
                            const couchpage_dir_conf **by_index);

/* A _find location's page, or the error that stops it: by keyset over
 * _find (index NULL), or over the view of its index (index, from
 * couchpage_find_by_index), numbered, one query a page (with page links,
 * one more for the pages behind, in the same batch). What its backend
 * reads cost is added to stats. */
int couchpage_find_serve(request_rec *r, const couchpage_dir_conf *conf,
                         const couchpage_dir_conf *index, couchpage_backend_stats *stats);

#endif
