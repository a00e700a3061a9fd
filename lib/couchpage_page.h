/* SPDX-License-Identifier: Apache-2.0 */
/*
 * couchpage_page: one page assembled from CouchDB's answers, as
 * docs/algorithm.md describes, with links to several pages either side
 * (the pagination recipe's "Jump to Page").
 *
 * Part of the httpd-free core: no httpd header, no request_rec. It reads
 * answers; couchpage_plan makes the queries, the glue sends them.
 */
#ifndef COUCHPAGE_PAGE_H
#define COUCHPAGE_PAGE_H

#include <apr_pools.h>
#include <apr_tables.h>

#include "couchpage_plan.h"
#include "couchpage_seal.h"
#include "couchpage_token.h"

/* A numbered page link. */
typedef struct {
    apr_int64_t number; /* 1-based, or relative to the current page (-1, +1) */
    const char *start; /* its token; NULL for the first page, unless it is the
                          current page and was reached with one */
    int current;
    int withheld;       /* its token is left out, too long to be taken back
                           (cp_page_withhold_long_tokens): no link, number only */
} cp_page_link;

/* Pages of count rows that `rows` rows fill; and the rows the last of
 * them holds (0 of none), which the Last page shows so that every page
 * stays aligned with the first page's. For the view's pages and the
 * numbered _find pages alike. */
apr_int64_t cp_page_pages_for(apr_int64_t rows, int count);
apr_int64_t cp_page_last_rows(apr_int64_t total, int count);

/* Appends to pages (of cp_page_link) the link to page number, its token
 * start, current when it is the page shown; not withheld. One way for the
 * view's pages and the _find pages (couchpage_find) alike. */
void cp_page_add_link(apr_array_header_t *pages, apr_int64_t number, const char *start,
                      int current);

/* Links of a page left out because their token is too long to be taken back. */
#define CP_WITHHELD_NEXT 1
#define CP_WITHHELD_PREV 2

/* A count of grouped rows, which CouchDB gives no offsets: the range's
 * groups (at least them with at_least) and the groups before the row the
 * page starts at (0 on the first page; unused on the Last page, which is
 * numbered only by an exact count). The page is numbered by it only where
 * every row read agrees with it (else relative to itself, as uncounted). */
typedef struct {
    apr_int64_t total;
    apr_int64_t before;
    int at_least;
} cp_page_count;

/* The total a page numbered by an at-least count holds until its count is
 * shown (cp_count_group_page): more rows than any location holds. */
#define CP_PAGE_COUNT_AT_LEAST ((apr_int64_t)1 << 60)

/* CouchDB's answers for one page. */
typedef struct {
    int count;               /* rows per page */
    int links;               /* pages to link either side; 0 for prev/next only */
    int with_docid;          /* rows and tokens carry document ids */
    int partial;             /* the queries see part of the index (a key range, a
                                partition): offsets do not count from its start */
    const apr_array_header_t *queries; /* cp_query, as cp_plan_page planned them,
                                each answered */
    const cp_token *start_token; /* the token, decoded; NULL on a first page */
    const char *start;       /* the token as the client sent it; NULL on a first page */
    const cp_token_room *room; /* what the tokens handed out must fit in; NULL: no cap */
    const cp_page_count *counted; /* grouped rows counted (couchpage_count); NULL: not */
} cp_page_answers;

typedef struct {
    apr_array_header_t *rows; /* the page's rows (const cp_row *), in order */
    const char *next;         /* token of the next page, NULL on the last */
    const char *prev;         /* token of the previous page, NULL on the first */
    int prev_is_first;        /* the previous page is the first page: its links go
                                 to the first page's URL, which needs no token
                                 (and no second look behind it) */
    apr_int64_t total_rows;   /* the location's rows (a key range's, a partition's):
                                 from CouchDB's offsets when numbered, else CouchDB's
                                 total_rows where the location is the whole index;
                                 -1 when unknown */
    apr_int64_t offset;       /* the location's rows before the page; -1 unless
                                 numbered */
    apr_array_header_t *pages; /* of cp_page_link, in view order; empty without links */
    int numbered;             /* the position is known: page numbers are absolute */
    int has_last;             /* the last page is known (numbered) */
    const char *last;         /* its token (CP_TOKEN_LAST, or the client's when it is
                                 this page); NULL when it is the first page */
    int last_is_current;      /* it is this page (last is the client's token) */
    apr_int64_t last_number;  /* its number */
    int withheld;             /* CP_WITHHELD_NEXT, CP_WITHHELD_PREV: that page exists,
                                 but its token is left out (next or prev NULL) */
    int docs_as_items;        /* the items are the rows' documents: a _find location's
                                 page, from _find or from its index's view */
    int count_at_least;       /* numbered, total_rows is a lower bound (a capped
                                 count, couchpage_count): no last_number */
    int count_earlier;        /* numbered by a count an earlier page of the walk
                                 took, which its token carried */
    int changed;              /* cp_changed_state (couchpage_changed): whether rows
                                 were written since the walk began; 0: unknown */
    int count_changed;        /* count_earlier, and rows were written since that
                                 count: it may be out of date */
} cp_page;

/* The answers of the queries cp_plan_page planned for plan from start_token
 * (NULL on a first page; start is the token as the client sent it), as
 * cp_page_assemble reads them: the page's size, links and partiality are the
 * plan's, document ids its view's, and the tokens it hands out fit in room
 * (NULL: no cap). */
void cp_page_answers_init(cp_page_answers *answers, const cp_plan *plan,
                          const apr_array_header_t *queries, const cp_token *start_token,
                          const char *start, const cp_token_room *room);

/* Builds the page from the answers (read and checked by
 * couchpage_response), positioned by CouchDB's offsets where they agree
 * with every row read, else numbered relative to this page
 * (docs/algorithm.md, "Offsets and positions"). Returns the query to ask
 * again wider (cp_plan_widen) when its answer cannot place the rows the
 * page or the pages behind need (an entry of several rows cut by its limit
 * or its skip, or fewer rows behind the token than it passed over: "The
 * rare second round"), else NULL; the page is built all the same, without
 * the pages behind it cannot place. */
cp_query *cp_page_assemble(apr_pool_t *pool, const cp_page_answers *answers, cp_page *page);

/* The row a bounded token names (start->digest), from the answer of
 * cp_plan_locate's query: into *located, a token that holds its key and
 * document id, and start's index. When no row of the answer has the
 * token's digest and the answer holds every row from the token's low to
 * its high key, the row is gone (deleted, or its key changed): *located
 * starts where the rows that share its bounds begin in the view's order
 * (the low key, or the high one descending), before the row's old place,
 * so no row is lost and those rows may be shown again. Returns NULL, or,
 * when the answer is full without the row (more rows share the bounds than
 * the query reads), why the page cannot be found. */
const char *cp_page_locate(apr_pool_t *pool, const apr_array_header_t *queries,
                           const cp_token *start, int with_docid, int descending,
                           cp_token *located);

/* The places of the tokens the page hands out, as const char **: next,
 * prev, the last page's unless it is this page, and every other page
 * link's; a place may hold NULL. What sealing writes back into, and what
 * the debug log counts: the one list of a page's tokens. */
apr_array_header_t *cp_page_issued_tokens(apr_pool_t *pool, cp_page *page);

/* How many tokens the page hands out (cp_page_issued_tokens, the places that
 * hold one), and in *longest the length of the longest: what the debug log
 * tells of them, never their text, which holds keys. */
int cp_page_issued_count(cp_page *page, apr_pool_t *pool, apr_size_t *longest);

/* Seals, in place, every token the page hands out (cp_page_issued_tokens)
 * for binding with key, as cp_seal_tokens does: NULL, or why it could not. */
const char *cp_page_seal_tokens(apr_pool_t *pool, const cp_seal_key *key,
                                const char *binding, cp_page *page);

/* Leaves out of the page every token longer than max_length bytes, which
 * the module would refuse when a client sent it back
 * (CouchPageMaxTokenLength): such a next or prev becomes NULL with its bit
 * in page->withheld, and a page link keeps its number without a token
 * (withheld). A previous page that is the first page keeps its link, which
 * needs no token. The current page's token is the client's, taken already,
 * and the last page's is the word CP_TOKEN_LAST, some 50 bytes sealed, under
 * the smallest cap (64): neither is left out.
 * Returns the length of the longest token left out, 0 for none. */
apr_size_t cp_page_withhold_long_tokens(cp_page *page, apr_size_t max_length);

#endif
