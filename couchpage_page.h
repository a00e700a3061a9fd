/*
 * couchpage_page: one page assembled from CouchDB's answers, as the
 * algorithm in seeds/algorithm.txt says, with links to several pages either
 * side (the recipe's "Jump to Page").
 */
#ifndef COUCHPAGE_PAGE_H
#define COUCHPAGE_PAGE_H

#include <apr_pools.h>
#include <apr_tables.h>
#include <jansson.h>

/* A numbered page link. */
typedef struct {
    apr_int64_t number; /* 1-based, or relative to the current page (-1, +1) */
    const char *start; /* its token; NULL for a first page reached without one */
    int current;
} cp_page_link;

/* CouchDB's answers for one page. */
typedef struct {
    int count;               /* rows per page */
    int links;               /* pages to link either side; 0 for prev/next only */
    int with_docid;          /* rows and tokens carry document ids */
    int has_range;           /* offsets count from the view's start, not the range's */
    const json_t *forward;   /* the page's rows, then the first rows of pages ahead */
    const json_t *ahead;     /* keys-only rows from the next page's start, or NULL
                                when forward holds the pages ahead itself */
    const json_t *backward;  /* rows read backward from the token; NULL on a first page */
    const json_t *start_key; /* the token's key; NULL on a first page */
    const char *start;       /* the token; NULL on a first page */
} cp_page_answers;

typedef struct {
    json_t *rows;             /* the page's rows, in order (pool-owned) */
    const char *next;         /* token of the next page, NULL on the last */
    const char *prev;         /* token of the previous page, NULL on the first */
    const json_t *total_rows; /* as CouchDB sent it; NULL when absent */
    const json_t *offset;     /* rows before the page; NULL when absent or not
                                 consistent with the rows seen (see below) */
    apr_array_header_t *pages; /* of cp_page_link, in view order; empty without links */
    int numbered;             /* page numbers are absolute, from the offset */
} cp_page;

/* Checks that a parsed view response has the shape CouchDB gives:
 * {"rows": [{"key": ..., "id": "..."}...]}, with an id on every row when
 * with_docid. Returns the rows, or NULL with the reason in *error. */
json_t *cp_page_rows(apr_pool_t *pool, const json_t *response, int with_docid,
                     const char **error);

/* Builds the page. All responses must have passed cp_page_rows.
 *
 * CouchDB's offset gives absolute page numbers and the page's position; it
 * is used only where it can be true: no key range (offsets count from the
 * view's start), and not less than the rows seen before the page (some
 * CouchDB-compatible servers report 0 on every page). Otherwise the offset is
 * left out and page numbers are relative to the current page. */
void cp_page_assemble(apr_pool_t *pool, const cp_page_answers *answers, cp_page *page);

#endif
