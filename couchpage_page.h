/*
 * couchpage_page: one page assembled from CouchDB's answers, as the
 * algorithm in seeds/algorithm.txt says.
 */
#ifndef COUCHPAGE_PAGE_H
#define COUCHPAGE_PAGE_H

#include <apr_pools.h>
#include <jansson.h>

typedef struct {
    json_t *rows;             /* the page's rows, in order (pool-owned) */
    const char *next;         /* token of the next page, NULL on the last */
    const char *prev;         /* token of the previous page, NULL on the first */
    const json_t *total_rows; /* as CouchDB sent it; NULL when absent */
    const json_t *offset;     /* likewise */
} cp_page;

/* Checks that a parsed view response has the shape CouchDB gives:
 * {"rows": [{"key": ..., "id": "..."}...]}, with an id on every row when
 * with_docid. Returns the rows, or NULL with the reason in *error. */
json_t *cp_page_rows(apr_pool_t *pool, const json_t *response, int with_docid,
                     const char **error);

/* Builds the page. forward is the answer to the first or forward query,
 * backward the answer to the backward query and start_key the key of the
 * token both started from (NULL, NULL for a first page). Both must have
 * passed cp_page_rows. count is the page size. Without docids the backward
 * query has no skip (see couchpage_plan.h): a first row at start_key is the
 * current page's and is passed over here. */
void cp_page_assemble(apr_pool_t *pool, int count, int with_docid,
                      const json_t *forward, const json_t *backward,
                      const json_t *start_key, cp_page *page);

#endif
