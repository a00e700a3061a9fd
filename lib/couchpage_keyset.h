/* SPDX-License-Identifier: Apache-2.0 */
/*
 * couchpage_keyset: the pager of every page read by keyset: a _find page
 * (POST .../_find, cp_find_body) and a numbered _find page read from its
 * index's view (cp_plan_keyset_page). Such a page is asked from its
 * token's row (couchpage_token: after it, before it, or at it, a view's
 * token), its rows read in one query, the row itself left out, and its
 * links are the rows' own tokens: no skip, no offset to keep. Where
 * CouchDB counts the rows (an index's view), the page is numbered.
 *
 * The view pager of multi-emit and grouped rows (couchpage_page) stays its
 * own: its tokens start at their row and a row may repeat its key and id.
 *
 * Part of the httpd-free core: nothing here knows about request_rec.
 */
#ifndef COUCHPAGE_KEYSET_H
#define COUCHPAGE_KEYSET_H

#include <apr_pools.h>
#include <apr_tables.h>
#include "couchpage_find.h"
#include "couchpage_json.h"
#include "couchpage_page.h"
#include "couchpage_plan.h"
#include "couchpage_response.h"
#include "couchpage_fault.h"
#include "couchpage_token.h"
#include "couchpage_transport.h"

/* What a keyset location's tokens look like: {"a"|"b": [KEY, ID]}, KEY of
 * its sort fields' values; with view_tokens, a view's tokens too (at their
 * row). */
cp_token_rows cp_keyset_token_rows(const cp_find_sort *sort, int view_tokens);

/* Whether rows are read in the location's order from the token, or the
 * other way (before a row; the Last page, from the end). */
int cp_keyset_reads_backward(const cp_token *token);

/* How many rows a page's query asks for: the page, the pages linked in the
 * direction it reads (links, at least 1 for prev or next), and one more,
 * which shows whether there is another page beyond them. */
int cp_keyset_limit(int count, int links);

/* The two query builders. */

/* A _find page's body (cp_find_body): the location's spec, beyond the
 * token's row the way the token reads, limit rows. NULL when the token's
 * row cannot bound a _find query (cp_find_beyond) or the token is not one
 * of a _find page (at a row). */
const char *cp_keyset_find_body(apr_pool_t *pool, const cp_find_spec *spec,
                                const cp_token *token, int limit);

/* A _find page read through an index that starts the ties at the row
 * (cp_mango_index_starts_at_row) asks the rows beyond its token's row in
 * two parts, in order: first those tied with it (CP_FIND_TIES), which
 * CouchDB reads from the row itself, limit rows; and only when they do
 * not fill the page, those past its sort values (CP_FIND_PAST_TIES), as
 * many as are missing. A page inside a group of ties is one query, one
 * that crosses a group two. The body of a part, as cp_keyset_find_body
 * (NULL there, and for a token without a row or a sort by _id alone: the
 * page is asked whole). */
const char *cp_keyset_find_part_body(apr_pool_t *pool, const cp_find_spec *spec,
                                     const cp_token *token, int limit, cp_find_part part);

/* A page that crosses a group of ties asks the rest from the next value
 * of a sort field the selector leaves open, so that CouchDB's scan starts
 * at that value's first row and not at the row's value, whose every row
 * it would read again: that value is the first key past the row's value
 * in the index's view, read with limit=1. With several open fields
 * O1..Om, level 0 is Om among the rows that share the row's O1..O(m-1),
 * level 1 O(m-1) among those that share O1..O(m-2), and so on: a page
 * asks the next level only when the one before leaves it short. The
 * query string of that read (the view's URL before it: the index's, the
 * index fields its keys'), the field's place in the sort in *open; NULL
 * where it does not apply (cp_mango_index_past_value): the rest is asked
 * from the row's values (CP_FIND_PAST_TIES). Its freshness is the _find's
 * (update, stable); a _find with update=false reads it only where
 * CouchPageIndex names the index (else CouchDB may answer it from another
 * index, staler or fresher than the view read). */
const char *cp_keyset_find_next_query(apr_pool_t *pool, const cp_find_spec *spec,
                                      const cp_token *token,
                                      const apr_array_header_t *fields, int level, int *open);

/* The level's rest body from that read's answer (text, len bytes): the
 * rows at or past its next value w among those that share the row's
 * values of the sort fields before it (cp_find_from_body), limit rows; no
 * row past the row's value there: NULL with *none set, and the level asks
 * no rest; an answer it cannot read: NULL, the rest asked from the row's
 * values. A row whose value fell between v and w after that read and
 * before the rest's is not on the page: it was written during the page,
 * as one written behind the rows a single read found. */
const char *cp_keyset_find_from_answer(apr_pool_t *pool, const cp_find_spec *spec,
                                       const cp_token *token, int open, int level,
                                       const char *text, apr_size_t len, int limit, int *none);

/* The rest of a page that crosses a group of ties at a level: its body
 * from the next value, read by tr->get from the view of the location's
 * index (view_url, its fields; NULL: none known); "" when no row is past
 * the row's value at that level (the level asks no rest); NULL when that
 * does not apply or the read failed (logged at debug, CP0374): the rest is
 * asked from the row's values. *top: the level is the last (O1's), whose
 * rest is every row past the row's values. */
const char *cp_keyset_find_rest_body(apr_pool_t *pool, const cp_transport *tr,
                                     const char *view_url, const apr_array_header_t *fields,
                                     const cp_find_spec *spec, const cp_token *token,
                                     int limit, int level, int *top);

/* A page after or before a row whose token says the rows tied with it
 * that the page reaches first are few ("e": 1: they were on the page that
 * handed it out) asks the rows beyond it in one query that CouchDB starts
 * at its value, reading those few again, rather than the ties apart: the
 * rows beyond the row among those that share its values of the open sort
 * fields before the last (cp_find_body_within), limit rows. *top: that is
 * every row beyond it (one open field), else the rest of the page is
 * asked a level at a time from level 1 (cp_keyset_find_rest_body). NULL
 * for any other token, or where the index does not start the ties at the
 * row (cp_mango_index_past_value). */
const char *cp_keyset_find_near_body(apr_pool_t *pool, const cp_find_spec *spec,
                                     const cp_token *token, const apr_array_header_t *fields,
                                     int limit, int *top);

/* Says "e": 1 in the page's tokens (next, prev, its page links) whose row
 * is among rows (read by token's page, in the order read) and has, on the
 * side its page's query reaches first, a row among them not tied with it:
 * the rows tied with it there were all read, fewer than the read; where
 * the token with it still fits room. */
void cp_keyset_near_ties(apr_pool_t *pool, const cp_token *token,
                         const apr_array_header_t *rows, const cp_token_room *room,
                         cp_page *page);

/* Joins the rows past the ties (past, read with limit asked, const cp_row
 * *) to the ties' rows (rows), up to limit in all. The two reads are two
 * moments: a row edited between them may be in both, and is kept where the
 * later read found it. Returns 1, with rows unchanged, when such a row
 * left the page short of a read that came full (more rows may follow:
 * the past part is asked again with limit rows); else 0. */
int cp_keyset_find_join(apr_array_header_t *rows, const apr_array_header_t *past, int asked,
                        int limit);

/* How many rows a numbered page with page links reads on the side it is
 * not read towards (behind a page read forward, ahead of one read
 * backward), for those links: links pages and one row more, which shows
 * whether the rows reach the location's start; and the token's own row,
 * which a page from a view's token holds. 0 for a page without links, and
 * for the first and the Last page. */
int cp_keyset_behind_limit(const cp_token *token, int count, int links);

/* A numbered page's queries over its index's view (cp_plan_keyset_page,
 * the plan's range the location's rows): from the token's row, limit rows
 * and, after or before a row, one more for the row itself, which comes
 * first while it is there; a token at a row (a view's, which holds the
 * row's view key) starts with it. With behind (cp_keyset_behind_limit),
 * a second query, role CP_QUERY_BACKWARD, reads that many rows from the
 * same row the other way, in the same batch. fixed: the values the
 * selector's equalities fix the index's leading fields to ([v1..vk], NULL:
 * none), which a keyset token's key follows (cp_keyset_index_key). NULL
 * when the token's key cannot name a row of the view. */
apr_array_header_t *cp_keyset_index_queries(apr_pool_t *pool, const cp_plan *plan,
                                            const apr_array_header_t *index_fields,
                                            const json_t *fixed, const cp_token *token,
                                            int limit, int behind);

/* CouchDB's count of the rows a page read (cp_keyset_index_count): the
 * location's rows, and those before the first row read in the order read;
 * -1 when unknown. */
typedef struct {
    apr_int64_t total;
    apr_int64_t before;
} cp_keyset_count;

/* The page from the rows of its query (const cp_row *, each with its id and
 * key set, in the order read: backward for a token before a row and for the
 * Last page). prev and next are exact where the rows read show them: the
 * first page has no prev, a page read forward has a next when a row beyond
 * it came, and a page read backward a prev likewise; the other way the
 * token's row was there when the token was made, so the link is given
 * (what was deleted meanwhile is found by that page's own read). Page links
 * are numbered relative to this page: the pages read through, and prev or
 * next the other way. The Last page is linked (has_last) without a number
 * (numbered is 0: last_number means nothing). The links it hands out are
 * keyset tokens, after or before a row (cp_token_encode_beside).
 *
 * behind (NULL: not read) holds the rows read the other way from the
 * token's row (cp_keyset_index_behind), nearest first: then that side's
 * link is exact too (no row there: none), and page links reach as many
 * pages that way as its rows show, the farthest of them the first page
 * where they reach the location's start.
 *
 * With counted (a page read from the index's view: NULL for _find's own
 * answers), where CouchDB's count agrees with the rows read, the page is
 * numbered: its place and the location's rows, page links from its number,
 * prev and next exact both ways (no row before it: no prev; none after:
 * no next), a previous page within the first page's rows linked as the
 * first page (prev_is_first), and the Last page holds the rows the pages
 * before it leave, aligned with the first page's.
 *
 * Returns what to ask instead, with no row used from this answer:
 * CP_FROM_FIRST when no row is left before a row (they were deleted: the
 * first page is asked), CP_FROM_LAST when no row is at or after a row
 * (likewise the Last page); else the page is built and the token's own
 * from is returned. */
cp_token_from cp_keyset_page_assemble(apr_pool_t *pool, const cp_token *token,
                                      const apr_array_header_t *rows,
                                      const apr_array_header_t *behind, int count, int links,
                                      const cp_keyset_count *counted, const char *start,
                                      cp_page *page);

/* A numbered _find page is read by keyset over its index's view: from its
 * token's row, the row itself left out after or before it, as a _find page
 * is read. These read it. */

/* The view key of a keyset token's row in the index's view (index_fields,
 * as cp_mango_index_range reads them): the equalities' values (low, the
 * range's lowest key, NULL without equalities), then the token's sort
 * values for the index's fields after them (its last ones: the sort's
 * fields that the equalities fix come first). So the equalities are the
 * location's, never the token's, and no token reaches rows outside them.
 * NULL when the key has fewer values than those fields. */
json_t *cp_keyset_index_key(apr_pool_t *pool, const apr_array_header_t *index_fields,
                            const json_t *low, const json_t *key);

/* The rows of the view query's answer, in the order read, as
 * cp_keyset_page_assemble takes them: without the row of a token after
 * or before a row, which a query from it brings first while it is there
 * (*dropped 1: a Mango index holds one row a document, so the first row
 * with the token's id is its), each keyed by its sort values
 * (cp_find_key_index_rows). */
apr_array_header_t *cp_keyset_index_rows(apr_pool_t *pool, const cp_answer *answer,
                                         const cp_token *token, const cp_find_sort *sort,
                                         const apr_array_header_t *index_fields, int *dropped);

/* The rows the CP_QUERY_BACKWARD query read (NULL: none was asked), as
 * cp_keyset_page_assemble takes them: without the row of a token at a
 * row, which the page holds, each keyed by its sort values. */
apr_array_header_t *cp_keyset_index_behind(apr_pool_t *pool, const apr_array_header_t *queries,
                                           const cp_token *token, const cp_find_sort *sort,
                                           const apr_array_header_t *index_fields);

/* CouchDB's count of those rows, from the answers of
 * cp_keyset_index_queries: the read's total_rows less the range probes'
 * offsets, and its offset less the rows before the range the way it read,
 * plus the token's own row when it was left out. */
void cp_keyset_index_count(const apr_array_header_t *queries, int backward, int dropped,
                           cp_keyset_count *counted);

#endif
