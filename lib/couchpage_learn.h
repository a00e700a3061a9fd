/* SPDX-License-Identifier: Apache-2.0 */
/*
 * couchpage_learn: what a _find location learns of its database's indexes
 * beyond the one CouchDB's _explain names. Where its pages go by _find
 * with a residual condition and that index reads the rows that tie with a
 * page's boundary row again, an index of the database's that starts them
 * at the row (cp_mango_index_starts_at_row), found in GET /DB/_index (one
 * read, within the child's learning of the location's index), which its
 * pages then name with use_index; and, where none does, the index to make,
 * logged once a location and child (CP0422). httpd-free.
 */
#ifndef COUCHPAGE_LEARN_H
#define COUCHPAGE_LEARN_H

#include <apr_pools.h>
#include <apr_tables.h>

#include "couchpage_json.h"
#include "couchpage_mango.h"
#include "couchpage_source.h"
#include "couchpage_transport.h"

/* Among the indexes of GET /DB/_index's answer (text, len bytes), the JSON
 * index without partial_filter_selector, partitioned as the query is
 * (partition: a partition's query, which only a partitioned index serves;
 * else the database's, which only one that is not), that starts the ties
 * of the selector sorted by sort at the row; of several, the one with the
 * most fields (the most equalities in its key), the first listed of those.
 * NULL with its design document's id (*ddoc, "_design/..."), name and
 * fields, or why none. */
const char *cp_learn_pick_index(apr_pool_t *pool, const char *text, apr_size_t len,
                                const json_t *selector, const cp_mango_field *sort,
                                int sort_count, int partition, const char **ddoc,
                                const char **name, apr_array_header_t **fields);

/* Where src names no index (CouchPageIndex), its selector is no key range
 * of the index _explain names (ddoc, name, fields: its pages go by _find)
 * and that index does not start the ties at the row, the database's index
 * that does (cp_learn_pick_index, one GET /DB/_index) replaces them: 1.
 * 0 where nothing is asked or none fits (they stay, and the debug log
 * says why, CP0376); -1 when the list could not be read (*failure). */
int cp_learn_ties_index(apr_pool_t *pool, const cp_transport *tr, const cp_source *src,
                        const char **ddoc, const char **name, apr_array_header_t **fields,
                        cp_transport_failure *failure);

/* The note of what the learning found (couchpage_serve's index_source):
 * {"view": view_path, "fields": [...]}, and, where the index is the one
 * cp_learn_ties_index found ("use": [DDOC, NAME], DDOC without
 * "_design/"), which the pages name with use_index. Compact JSON. */
const char *cp_learn_note(apr_pool_t *pool, const char *view_path,
                          const apr_array_header_t *fields, const char *use_ddoc,
                          const char *use_name);

/* src, or, where its note names the index its pages use ("use") and src
 * names none, a copy whose _find bodies name it (use_index), as
 * CouchPageIndex would, but with CouchDB's fallback: an index dropped
 * since the child learnt it leaves the pages to another index, not to
 * CouchDB's refusal. */
const cp_source *cp_learn_source(apr_pool_t *pool, const cp_source *src, const json_t *note);

/* The index that lets CouchDB start src's _find pages at their row, as
 * the request that makes it and what follows once it is made: "POST
 * DB/_index BODY" and how the pages come to use it (each child finds it
 * when it learns again; where CouchPageIndex names another, name this one
 * there: an index the child learnt is not CouchPageIndex's). NULL where
 * none is advised. */
const char *cp_learn_index_to_create(apr_pool_t *pool, const cp_transport *tr,
                                     const cp_source *src);

/* A location whose pages go by _find (why: its index's view cannot serve
 * them) through an index that reads the rows tied with the boundary row
 * again: the index that lets CouchDB start at the row, as the exact body
 * to POST to /DB/_index, at warn once a location and child (CP0422). */
void cp_learn_advise(apr_pool_t *pool, const cp_transport *tr, const cp_source *src,
                     const char *why);

/* CouchDB's warning on a _find answer of src (no index matches; too many
 * documents examined): at warn once a location and child, at debug after,
 * naming the index that would serve the query (CP0322). */
void cp_learn_warned(apr_pool_t *pool, const cp_transport *tr, const cp_source *src,
                     const char *warning);

#endif
