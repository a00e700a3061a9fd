/* SPDX-License-Identifier: Apache-2.0 */
/*
 * couchpage_count: the count of a _find location whose pages CouchDB does
 * not number (a selector with a residual condition: $elemMatch, $regex,
 * $in, a field the index lacks), paid once a walk.
 *
 * CouchPageCount says what a count may cost: `exact` (up to CP_COUNT_MAX
 * rows), `capped N` (exact up to N rows, "at least N" beyond) or `none`.
 * The first page and the Last page ask for the count: one more _find of
 * the location's selector, keys only (fields ["_id"] and the sort fields,
 * which a covering index holds), limit N + 1: never more rows than that,
 * whatever the client sends. Its rows are counted, not kept.
 *
 * The tokens such a page hands out carry the count and the place of their
 * row ({"a": [KEY, ID], "t": TOTAL, "p": PLACE}, "m": 1 for at least), so
 * a later page is still one backend request, numbered from its token. A
 * _find answer names no sequence, so a later page cannot tell cheaply
 * whether the count moved on: such a page says its count is an earlier
 * page's. A carried count that the rows read contradict (the read ends
 * where the count says it does not) is dropped, and the page numbered
 * relative to itself, as one from an older token is.
 *
 * A client's Prefer: count=exact|estimated|none is honoured within the
 * location's policy (cp_count_cap), and every JSON page says its range as
 * Content-Range: items FIRST-LAST/TOTAL (cp_count_content_range).
 *
 * Part of the httpd-free core: no httpd header, no request_rec.
 */
#ifndef COUCHPAGE_COUNT_H
#define COUCHPAGE_COUNT_H

#include <apr_pools.h>
#include <apr_tables.h>

#include "couchpage_find.h"
#include "couchpage_keyset.h"
#include "couchpage_page.h"
#include "couchpage_source.h"
#include "couchpage_token.h"
#include "couchpage_transport.h"

/* The most rows any count reads: `exact`'s ceiling, and capped N's. */
#define CP_COUNT_MAX 100000
/* CouchPageCount's default, capped 1000; and what Prefer: count=estimated
 * asks of an `exact` location. */
#define CP_COUNT_DEFAULT_CAP 1000

/* Reads CouchPageCount's words (argc of argv): NULL, or why they are not
 * `exact`, `capped N` (1 <= N <= CP_COUNT_MAX) or `none`. */
const char *cp_count_policy_parse(apr_pool_t *pool, int argc, const char *const *argv,
                                  cp_count_policy *policy);

/* What a client's Prefer header asks of a count. */
typedef enum {
    CP_PREFER_COUNT_UNSAID = 0,
    CP_PREFER_COUNT_EXACT,
    CP_PREFER_COUNT_ESTIMATED,
    CP_PREFER_COUNT_NONE
} cp_prefer_count;

/* The count preference of a Prefer header (RFC 7240: preferences
 * separated by commas, each maybe with parameters after ";"): the last
 * count=exact|estimated|none, its value maybe quoted, case-insensitive;
 * CP_PREFER_COUNT_UNSAID for none or another value. NULL: no header. */
cp_prefer_count cp_count_prefer(apr_pool_t *pool, const char *prefer);

/* How many rows a count of a location may read, by its policy and the
 * client's preference: 0 for no count, else N (the count is exact up to
 * N rows, "at least N" beyond). *applied: the Preference-Applied value
 * ("count=exact", "count=estimated", "count=none") when the client's
 * preference is what is done, else NULL. */
int cp_count_cap(const cp_count_policy *policy, cp_prefer_count prefer,
                 const char **applied);

/* The Preference-Applied value for a page whose count is free (a view's,
 * a numbered _find's: CouchDB's own offsets): "count=exact" when asked
 * for an exact count, else NULL. */
const char *cp_count_free_applied(cp_prefer_count prefer);

/* The body of the count's _find: the location's selector and sort, index
 * and update/stable, fields _id and the sort fields, limit cap + 1. NULL
 * when it cannot be built. */
const char *cp_count_find_body(apr_pool_t *pool, const cp_find_spec *spec, int cap);

/* A walk's count: the location's rows (at least them), as counted. */
typedef struct {
    int known;
    apr_int64_t total;
    int at_least;
    int earlier;       /* carried by the token from an earlier page */
    apr_int64_t place; /* the token's row's place (from a token) */
} cp_count_walk;

/* The count from a count _find's answer of rows rows (at most cap + 1):
 * exact below cap + 1, else at least cap. */
void cp_count_from_rows(apr_int64_t rows, int cap, cp_count_walk *walk);

/* The count a token carries, if any and if it fits the location's count
 * now (cap: cp_count_cap's; 0 takes none): a total within cap (an at-least
 * total too: a bounded count's matches among the rows it read), the
 * token's row among them when exact. 1 with *walk, else 0: the
 * page is then numbered relative to itself, as an older token's is. */
int cp_count_from_token(const cp_token *token, int cap, cp_count_walk *walk);

/* The token a walk of count walk follows to the page after row (a
 * count's or a jump's, keyed by its sort values), which is at place in
 * the location: {"a": [KEY, ID], "t": TOTAL, "p": PLACE} ("m": 1 for at
 * least), as the page before hands it out. NULL when the row has no key
 * or id. */
const char *cp_count_token_after(apr_pool_t *pool, const cp_row *row, apr_int64_t place,
                                 const cp_count_walk *walk);

/* A keyset token's text ({"a": …} or {"b": …}) whose row is document id,
 * at place, stamped with the count of walk as cp_count_token_after
 * stamps; NULL when it is not such a token of that row. */
const char *cp_count_token_stamped(apr_pool_t *pool, const char *text, const char *id,
                                   apr_int64_t place, const cp_count_walk *walk);

/* The count as cp_keyset_page_assemble takes it, for a page read from
 * token: the rows before the first row read, in the order read. A total
 * that is at least some number is an unreachable one there, so that no
 * end of the location is taken from it (cp_count_page then says what is
 * known). 0 when the count cannot place the page (the Last page of an
 * at-least count, whose place nothing says). */
int cp_count_keyset(const cp_token *token, const cp_count_walk *walk,
                    cp_keyset_count *counted);

/* Once the page is assembled from rows (const cp_row *, in the order read
 * from token) with counted: what it shows of the count (page->count_kind,
 * count_earlier, an at-least total, no Last page number then) and, where
 * the page is numbered, its tokens stamped with the count and their row's
 * place (before sealing). A page left unnumbered (the count contradicted
 * by the rows read) is left as it is. NULL, or why a token could not be
 * stamped (it is then left as it was). */
const char *cp_count_page(apr_pool_t *pool, const cp_token *token,
                          const apr_array_header_t *rows, const cp_count_walk *walk,
                          cp_page *page);

/* A numbered page read from its index's view (couchpage_serve) whose
 * count is its walk's (walk: known, earlier where it may not hold now):
 * as cp_count_page shows and stamps it, its total the page's; jumped
 * (?page=N), its own token *opened (unsealed, after the row before it)
 * stamped too, as the walk's token to it is. */
void cp_count_carry(apr_pool_t *pool, const cp_token *token, const apr_array_header_t *rows,
                    cp_count_walk *walk, int jumped, const char **opened, cp_page *page);

/* --- a count bounded by its index's view ------------------------------
 *
 * CouchDB's _find reads each document of its index's range until limit
 * rows match: a count of a selector with a residual condition reads the
 * whole range where few match. So the count first reads the index's view,
 * keys only, where the location's index is known (index_view, with its
 * fields): the part of it that holds every row the selector can match
 * (cp_mango_index_envelope), in the location's order, its (N + 1)-th row,
 * by skip, and the rows just before it (cp_count_look_query). Where there
 * is no such row, the part holds at most N rows, and the count's _find
 * (the selector alone) reads each once: the count is exact. Else the count
 * is the _find of the selector AND the open field (the first the selector
 * does not fix) at most (descending: at least) the value of the last row
 * before that row's group of ties (cp_count_cut_body), which reads at most
 * N index rows, each with its document: the location holds at least as
 * many rows as match there. A group of ties holding the whole look is
 * passed by one look more, from its first row back (cp_count_before_query). */

/* What a look at the index's view says of the count (cp_count_cut_from_look). */
typedef enum {
    CP_COUNT_CUT_NONE = 0,  /* the range holds at most N rows: count them all */
    CP_COUNT_CUT_AT,        /* count up to the value given, no further */
    CP_COUNT_CUT_BEFORE,    /* the rows read tie: look before the value's group */
    CP_COUNT_CUT_EMPTY,     /* the range's first N + 1 rows tie: none to count */
    CP_COUNT_CUT_UNREAD     /* not a view's answer, or keys without the field */
} cp_count_cut;

/* The query (from "?") of the look: the part from low to high (JSON keys;
 * NULL: open), in the location's order, keys only, passing over skip rows
 * and reading limit, as fresh as the location's _find. */
const char *cp_count_look_query(apr_pool_t *pool, const cp_find_spec *spec, const char *low,
                                const char *high, apr_int64_t skip, int limit);

/* From a look's answer (text, of a look that passed over skip rows), the
 * open field at place open of the index's key (-1: the key itself, a
 * document id of _all_docs), the count of at most cap
 * rows: what to count, and up to which value (*value) or before which
 * group's (CP_COUNT_CUT_BEFORE). */
cp_count_cut cp_count_cut_from_look(apr_pool_t *pool, const char *text, apr_size_t len,
                                    int open, apr_int64_t skip, int cap, const json_t **value);

/* The query of the look at the row before the group of the open field's
 * value (prefix: the equalities' values, JSON), within low and high, in
 * the location's order: one row, whose answer cp_count_cut_from_look
 * reads with skip 0, cap 0 (a row: CP_COUNT_CUT_EMPTY, its value the one
 * to count up to; none: CP_COUNT_CUT_NONE, no row before the group). */
const char *cp_count_before_query(apr_pool_t *pool, const cp_find_spec *spec,
                                  const char *prefix, const json_t *value, const char *low,
                                  const char *high);

/* The body of the count's _find up to value of field: the selector AND
 * {field: {"$lte": value}} ("$gte" where the location sorts descending),
 * keys only, limit cap + 1. NULL when it cannot be built. */
const char *cp_count_cut_body(apr_pool_t *pool, const cp_find_spec *spec, const char *field,
                              const json_t *value, int cap);

/* The count of a _find location src (its _find at url), at most cap rows,
 * into *walk, and the rows it counted, in the location's order (its first
 * ones), in *answer (NULL when none was asked). Bounded by the index's
 * view where index_view and index_fields are known and the selector leaves
 * a field of the index open, or, sorted by _id alone with no index known,
 * by _all_docs (CouchDB's special index, beside url) over the selector's
 * _id bounds; else (logged at info, once a location and child: CP0434)
 * the selector's _find alone, limit cap + 1, which reads documents until
 * cap + 1 match, only where the location's CouchPageCount is set: without
 * it no count is made (*walk unknown, no answer). NULL, or why not
 * (*failure's reason when the transport failed). */
const char *cp_count_read(apr_pool_t *pool, const cp_transport *tr, const cp_source *src,
                          const char *url, const char *index_view,
                          const apr_array_header_t *index_fields, int cap,
                          cp_count_walk *walk, const cp_answer **answer,
                          cp_transport_failure *failure);

/* The count a page of an unnumbered _find location (src, its _find at
 * url, its index's view and fields as cp_count_read takes them) is
 * numbered by, as cp_keyset_page_assemble takes it, cap the rows a
 * count may read (cp_count_cap; 0: none): the first and the Last page ask
 * for it (once a request: *count_read) unless their own read of limit
 * rows came back with fewer (read), every row, a later page reads its
 * token's;
 * NULL for none (the page is numbered relative to itself). *walk is what
 * cp_count_page then shows. The transport and source are couchpage_serve's. */
const cp_keyset_count *cp_count_for_page(apr_pool_t *pool, const cp_transport *tr,
                                         const cp_source *src, const char *url,
                                         const char *index_view,
                                         const apr_array_header_t *index_fields, int cap,
                                         const cp_token *token, int read, int limit,
                                         int *count_read, cp_count_walk *walk,
                                         cp_keyset_count *counted);

/* Grouped reduce rows (CouchPageReduce), which CouchDB gives no offsets,
 * counted by the same policy: the first and the Last page ask CouchDB for
 * the range's groups, at most cap + 1 of them (cp_plan.count_cap, the
 * query CP_QUERY_COUNT, in the page's own batch), and the tokens they hand
 * out carry the count and their row's place ({"g": [KEY], "t": T, "p": P},
 * couchpage_token), so that a later page is one request as before.
 *
 * cp_count_group_walk: the walk's count for a page from token (NULL: the
 * first page) once the page's queries are answered, cap cp_count_cap's (0:
 * none): from the count query's answer, or from the token; as
 * cp_page_answers.counted takes it, or NULL for none (a token without a
 * count, one that does not fit the location's count now, the Last page of
 * an at-least count): the page is then numbered relative to itself.
 * cp_page_assemble numbers it only where every row read agrees. */
const cp_page_count *cp_count_group_walk(const apr_array_header_t *queries,
                                         const cp_token *token, int cap,
                                         cp_count_walk *walk, cp_page_count *counted);

/* The bytes of a token's text its count takes at most ("t", "p", "m"),
 * kept free when a counted page of grouped rows makes its tokens, so that
 * a bounded token, which fills its room, still takes the count. */
#define CP_COUNT_TOKEN_RESERVE 48

/* The room the tokens of a counted page of grouped rows are made in: room
 * less CP_COUNT_TOKEN_RESERVE (as sent, sealed, percent-encoded), unless
 * room is too small to spare it. */
void cp_count_group_room(const cp_token_room *room, cp_token_room *smaller);

/* The token a counted walk of grouped rows (walk) follows to the page
 * whose first row, of key, is at place: the row's token made in room less
 * the count's reserve and stamped with the count ({"g": [KEY], "t": T,
 * "p": place}, or bounded with "t" and "p"), or, where the stamped one
 * does not fit room, left unstamped, as cp_count_group_page leaves a
 * page's. NULL when libcrypto fails to make a bounded token's digest. */
const char *cp_count_group_token(apr_pool_t *pool, const json_t *key, apr_int64_t place,
                                 const cp_count_walk *walk, const cp_token_room *room);

/* Once the page is assembled, numbered by walk: what it shows of the count
 * (as cp_count_page) and its tokens ([KEY]: the page links', next's and
 * prev's; count rows per page) stamped with the count and their row's
 * place, each where it still fits room (NULL: any length). A page left
 * unnumbered is left as it is. NULL, or why a token was left unstamped. */
const char *cp_count_group_page(apr_pool_t *pool, const cp_count_walk *walk, int count,
                                const cp_token_room *room, cp_page *page);

/* A JSON page's Content-Range: "items FIRST-LAST/TOTAL" (rows from 0),
 * TOTAL an asterisk when not known exactly; for a page without rows the
 * range is an asterisk, and both are when the page's place is not known. */
const char *cp_count_content_range(apr_pool_t *pool, const cp_page *page);

#endif
