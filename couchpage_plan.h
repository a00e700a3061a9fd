/*
 * couchpage_plan: the CouchDB queries that make one page.
 *
 * The algorithm (seeds/algorithm.txt): a first page is one query with
 * limit = count + 1; a later page is a forward query from the token's row
 * with limit = count + 1 and a backward query from the same row in the other
 * direction with skip=1 and limit = count. Never a skip beyond 1, so every
 * page costs the same at any depth.
 *
 * Grouped reduce rows have no document id, and with a group level shorter
 * than the keys, the group a token names does not lie at its key when read
 * backwards. So their backward query has no skip: it asks for count + 1 rows
 * and the page assembler drops the group the token names, if it comes first.
 *
 * With page links, the forward query also reads the first rows of the pages
 * ahead and the backward query the pages behind. Rows used only for links
 * never carry documents: with include_docs, the pages ahead come from a
 * keys-only query of their own from the next page's start.
 *
 * A token at row n > 0 of a document's several rows under one key (see
 * couchpage_token.h) starts the forward query with skip=n: a skip bounded by
 * what one document emits, never by the page's depth.
 *
 * A key range goes into every query as its bound (endkey), so CouchDB's own
 * collation keeps rows outside it away; a token beyond a bound makes CouchDB
 * refuse the query as a reversed range. The module never collates.
 */
#ifndef COUCHPAGE_PLAN_H
#define COUCHPAGE_PLAN_H

#include <apr_pools.h>
#include "couchpage_token.h"

#define CP_GROUP_EXACT (-1)

/* What a location pages, fixed at configuration time. */
typedef struct {
    const char *url;         /* as configured, no query string */
    const char *db_url;      /* scheme://host/db: where a partition goes */
    const char *index_path;  /* /_design/D/_view/V or /_all_docs */
    int is_all_docs;         /* keys are the ids; no reduce parameter */
    int is_partitioned;      /* the URL names a partition already */
    int descending;          /* pages run in reverse view order */
    int reduce;              /* grouped reduce rows instead of map rows */
    int group_level;         /* CP_GROUP_EXACT or a level, with reduce */
    int include_docs;        /* items carry their documents */
} cp_view;

/* Classifies a CouchPageView URL and fills url, db_url, index_path,
 * is_all_docs and is_partitioned; the options are the caller's. Returns
 * NULL when it names a view or _all_docs, else the reason it does not. */
const char *cp_view_init(apr_pool_t *pool, const char *url, cp_view *view);

/* Whether this location's rows and tokens carry document ids. */
int cp_view_has_docids(const cp_view *view);

/* One request's queries. */
typedef struct {
    const cp_view *view;
    const char *index_url; /* the view URL, with the request's partition */
    const char *partition; /* the request's partition, NULL without one */
    const char *low;       /* JSON of the range's lowest key, NULL: open */
    const char *high;      /* JSON of the range's highest key, NULL: open */
    int count;             /* rows per page */
    int links;             /* pages linked either side, 0 for prev/next only */
} cp_plan;

/* partition may be NULL. Returns NULL, or the reason the partition name
 * cannot be used. */
const char *cp_plan_init(apr_pool_t *pool, cp_plan *plan, const cp_view *view,
                         const char *partition, const char *low, const char *high,
                         int count, int links);

/* How many pages the queries read either side of the current one: the
 * linked pages, or, without links, the one that prev and next need. */
int cp_plan_pages_either_side(int links);

/* How many rows the forward query asks for. */
int cp_plan_forward_limit(const cp_plan *plan);

/* The forward query: from the token's row, or from the range's start when
 * start is NULL (the first page). Every value is percent-encoded. */
const char *cp_plan_forward(apr_pool_t *pool, const cp_plan *plan,
                            const cp_token *start);

/* The backward query from the token's row. entry_rows is how many rows the
 * token's (key, docid) entry has (see cp_page_entry_rows): with one, the
 * algorithm's query (skip=1); with several, CouchDB lists the whole entry
 * first in either direction, so the query reads past it without skip and the
 * page assembler takes the rows before the token from it. extra rows are
 * asked beyond those the pages behind need: at least one, so that an entry
 * of several rows at the far end shows whether the limit cut it (see
 * cp_page_behind_complete). */
const char *cp_plan_backward(apr_pool_t *pool, const cp_plan *plan,
                             const cp_token *start, int entry_rows, int extra);

/* How many rows that query asks for. */
int cp_plan_backward_limit(const cp_plan *plan, int entry_rows, int extra);

/* Whether the pages ahead need their own keys-only query, from the next
 * page's start (include_docs with more than one page linked ahead). */
int cp_plan_needs_ahead(const cp_plan *plan);

/* That query. */
const char *cp_plan_ahead(apr_pool_t *pool, const cp_plan *plan, const cp_token *next);

/* Whether the queries see only part of the index (a key range or a
 * partition), so that CouchDB's offsets do not count from their start. */
int cp_plan_is_partial(const cp_plan *plan);

/* CouchDB refuses a view query whose start lies beyond its range, but makes
 * no such check on _all_docs; there ids collate as raw bytes, so the start
 * is checked here. Returns NULL, or the reason a token is refused. */
const char *cp_plan_check_start(apr_pool_t *pool, const cp_plan *plan,
                                const cp_token *start);

#endif
