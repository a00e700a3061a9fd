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

#include "couchpage_token.h"

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
    int partial;             /* the queries see part of the index (a key range, a
                                partition): offsets do not count from its start */
    const json_t *forward;   /* the page's rows, then the first rows of pages ahead */
    const json_t *ahead;     /* keys-only rows from the next page's start, or NULL
                                when forward holds the pages ahead itself */
    const json_t *backward;  /* rows read backward from the token; NULL on a first page */
    const cp_token *start_token; /* the token, decoded; NULL on a first page */
    int entry_rows;          /* rows of the token's entry (cp_page_entry_rows), as
                                the backward query was planned */
    const char *start;       /* the token as the client sent it; NULL on a first page */
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

/* How many rows the token's (key, docid) entry has, as far as the forward
 * answer (asked with limit) shows: the token's index plus the rows of its
 * entry that the answer starts with; when they fill an answer the limit cut
 * short, limit more (the entry may go on). 0 when the token's row is gone.
 * Always 1 for grouped rows. */
int cp_page_entry_rows(const json_t *forward, const cp_token *start, int with_docid,
                       int limit);

/* The next page's first row, as a token to plan the ahead query from: 1, or
 * 0 when the forward answer shows no next page. start is NULL on a first page. */
int cp_page_next_start(apr_pool_t *pool, const json_t *forward, const cp_token *start,
                       int count, int with_docid, cp_token *next);

/* Whether the backward answer (asked with limit) shows every row the pages
 * behind need: 0 when they reach into the last entry of an answer the limit
 * cut, whose rows nearest the page may be missing (a document's rows under
 * one key come in one order both ways). Then ask again with a larger limit. */
int cp_page_behind_complete(const cp_page_answers *in, int limit);

/* Builds the page. All responses must have passed cp_page_rows.
 *
 * CouchDB's offset gives absolute page numbers and the page's position; it
 * is used only where it can be true: the whole index (no key range, no
 * partition: offsets count from the index's start), and not less than the rows seen before the page (some
 * CouchDB-compatible servers report 0 on every page). Otherwise the offset is
 * left out and page numbers are relative to the current page. */
void cp_page_assemble(apr_pool_t *pool, const cp_page_answers *answers, cp_page *page);

#endif
