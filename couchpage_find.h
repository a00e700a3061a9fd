/* SPDX-License-Identifier: Apache-2.0 */
/*
 * couchpage_find: what a Mango _find location asks CouchDB, built once a
 * page. A _find location pages by keyset, never by skip nor by CouchDB's
 * bookmark: rows are in the order of their sort values and then of their
 * document ids (the bytes of the id: CouchDB's own tie order in a Mango
 * index, and the order in which a selector's {"_id": {"$gt": ID}}
 * compares), and the page after a row is the location's selector AND
 * "beyond that row's (values..., _id)", which CouchDB evaluates: the
 * module never collates. A value from a token enters a selector only as an
 * operator's argument ({"$eq": v}, {"$gt": v}), where CouchDB reads any
 * JSON, an object of "$" members included, as a value. Where the selector
 * is equalities on an index's leading fields, the index's view holds the
 * same rows as a key range (cp_mango_index_range), which CouchDB counts:
 * such a page is read by keyset from that view (cp_find_index_key,
 * cp_find_index_rows) and numbered (cp_find_index_count), or, with page
 * links, paged as a view location. What Mango itself is (field names,
 * selectors and their request values, the index's fields and range) is
 * couchpage_mango's.
 *
 * Part of the httpd-free core: nothing here knows about request_rec.
 */
#ifndef COUCHPAGE_FIND_H
#define COUCHPAGE_FIND_H

#include <apr_pools.h>
#include <apr_tables.h>
#include "couchpage_json.h"
#include "couchpage_mango.h"
#include "couchpage_page.h"
#include "couchpage_response.h"
#include "couchpage_view.h"

/* CouchPageSort and CouchPageDescending: the fields that order the rows,
 * before the document id, which breaks their ties. */
typedef struct {
    const cp_mango_field *fields;
    int count;         /* fields before _id; 0 when the rows are sorted by _id alone */
    int id_named;      /* the operator named _id as the last sort field */
    int descending;    /* every field, _id included, in descending order */
} cp_find_sort;

/* Reads CouchPageSort's field names: NULL, or why they cannot sort a
 * Mango query (none; an empty name or member; a leading "$"; a backslash
 * that escapes anything but a dot; a field named twice; a field after
 * _id, whose values are unique; not UTF-8). */
const char *cp_find_sort_init(apr_pool_t *pool, const char *const *names, int count,
                              int descending, cp_find_sort *sort);

/* Mango's sort parameter: [{"F": "asc"|"desc"}, ...], with _id last when
 * the operator named it. reverse reads the rows the other way. */
json_t *cp_find_sort_param(apr_pool_t *pool, const cp_find_sort *sort, int reverse);

/* A document's sort values, in sort order, as a JSON array (the row's key
 * in a token), or NULL when the document lacks one of them (Mango leaves
 * such documents out of a sorted query). The array holds the document's
 * own values (references), handed to the pool. */
json_t *cp_find_row_key(apr_pool_t *pool, const cp_find_sort *sort, const json_t *doc);

/* The condition "beyond the row (key, docid)" in the direction rows are
 * read: after it in the location's order, or before it when backward. key
 * is cp_find_row_key's array. It is a top-level range on the first sort
 * field, which CouchDB turns into the index scan's start, and the exact
 * order, (v1 > k1) OR (v1 = k1 AND v2 > k2) OR ... OR (all equal AND
 * _id > docid), as $or. NULL when key does not hold one value a sort
 * field, a value CouchDB cannot compare (cp_mango_value_comparable), or
 * docid is not UTF-8. */
json_t *cp_find_beyond(apr_pool_t *pool, const cp_find_sort *sort, const json_t *key,
                       const char *docid, int backward);

/* What a _find location asks: its selector (request values in), its sort,
 * the index it names (ddoc NULL: CouchDB chooses), the fields the page
 * shows (NULL: whole documents), and CouchPageUpdate and CouchPageStable. */
typedef struct {
    const json_t *selector;
    const cp_find_sort *sort;
    const char *index_ddoc;
    const char *index_name; /* NULL: the design document's only index */
    const json_t *fields;   /* array of Mango field names, or NULL */
    cp_mango_flag update;
    cp_mango_flag stable;
} cp_find_spec;

/* The fields a page's query asks for: the page's own and, where they are
 * not among them, _id and the sort fields, which the tokens need; NULL
 * when spec->fields is NULL (whole documents hold them all). */
json_t *cp_find_fields_param(apr_pool_t *pool, const cp_find_spec *spec);

/* The body of one _find request: the location's selector, AND beyond the
 * row (key, docid) when key is not NULL (beyond alone where the selector
 * is {}, which CouchDB would read inside $and as a field named ""); sorted the location's way, or
 * the other way when backward (the rows before a page, and the Last page,
 * read from its end); limit rows; the index as use_index with no fallback;
 * the fields; update and stable when set. Compact JSON text, or NULL when
 * key or docid cannot bound (cp_find_beyond). */
const char *cp_find_body(apr_pool_t *pool, const cp_find_spec *spec, const json_t *key,
                         const char *docid, int backward, int limit);

/* Keys a numbered _find page's rows as a keyset page's are, so that `key`
 * (CouchPageItem, item templates) means one thing on a _find location
 * however its page was read: a row of the index's view is keyed by the
 * values of all the index's fields (const char *, in order: [F1, ..., Fn]),
 * of which the sort names the last and any of the equalities' before them
 * (cp_mango_index_range). Unless that is the same array, each row of rows
 * (const cp_row *) is replaced by a copy keyed by its sort values, each
 * taken from its field's place in the view key. */
void cp_find_key_index_rows(apr_pool_t *pool, const cp_find_sort *sort,
                            const apr_array_header_t *index_fields, apr_array_header_t *rows);

/* Reads a _find answer (cp_response_read_find) and sets each row's key to
 * its document's sort values (cp_find_row_key). NULL and the answer in
 * *answer, or why the body is refused: not a _find response, or a
 * document without a sort value, which CouchDB leaves out of a sorted
 * query. A sort field nested in the document is found in its bytes. */
const char *cp_find_read(apr_pool_t *pool, const char *text, apr_size_t len,
                         const cp_find_sort *sort, const cp_answer **answer);

/* Where a _find page starts: the first page, after a row (the page after
 * the one that ended with it), before a row (the page before the one that
 * began with it), or the Last page (CP_TOKEN_LAST). */
typedef enum {
    CP_FIND_FIRST,
    CP_FIND_AFTER,
    CP_FIND_BEFORE,
    CP_FIND_LAST,
} cp_find_from;

/* A _find location's token: {"a": [KEY, ID]} after the row, {"b": [KEY,
 * ID]} before it, KEY the row's sort values (cp_find_row_key), ID its
 * document id; or the word "last". */
typedef struct {
    cp_find_from from;
    const json_t *key; /* NULL for FIRST and LAST */
    const char *docid;
} cp_find_token;

/* The token text for the row (from AFTER or BEFORE); NULL when the row has
 * no key or id. */
const char *cp_find_token_encode(apr_pool_t *pool, cp_find_from from, const json_t *key,
                                 const char *docid);

/* Reads a token a client sent (text NULL: the first page): NULL, or why it
 * is refused (not one of the forms above; a key of another length than the
 * sort's fields; an id that is not a non-empty string without NUL). */
const char *cp_find_token_decode(apr_pool_t *pool, const char *text, const cp_find_sort *sort,
                                 cp_find_token *token);

/* A page read by _find hands out no token that cannot bound its _find
 * query: a link whose row's sort values CouchDB cannot compare
 * (cp_mango_value_comparable) is left out as cp_page_withhold_long_tokens
 * leaves one out (next or prev NULL and page->withheld, a page link
 * without its token), since the module would refuse that token. Pages
 * read from the index's view take any value and need no such check.
 * Returns how many links were left out. */
int cp_find_withhold_unbounding(apr_pool_t *pool, const cp_find_sort *sort, cp_page *page);

/* Whether rows are read in the location's order from the token, or the
 * other way (before a row; the Last page, from the end). */
int cp_find_reads_backward(const cp_find_token *token);

/* How many rows a page's _find asks for: the page, the pages linked in the
 * direction it reads (links, at least 1 for prev or next), and one more,
 * which shows whether there is another page beyond them. */
int cp_find_limit(int count, int links);

/* CouchDB's count of the rows a page read (cp_find_index_count): the
 * location's rows, and those before the first row read in the order read;
 * -1 when unknown. */
typedef struct {
    apr_int64_t total;
    apr_int64_t before;
} cp_find_count;

/* The page from the rows of its _find (const cp_row *, each with its id and
 * key set, in the order read: backward for a token before a row and for the
 * Last page). prev and next are exact where the rows read show them: the
 * first page has no prev, a page read forward has a next when a row beyond
 * it came, and a page read backward a prev likewise; the other way the
 * token's row was there when the token was made, so the link is given
 * (what was deleted meanwhile is found by that page's own read). Page links
 * are numbered relative to this page: the pages read through, and prev or
 * next the other way. The Last page is linked (has_last) without a number
 * (numbered is 0: last_number means nothing).
 *
 * With counted (a page read from the index's view: NULL for _find's own
 * answers), where CouchDB's count agrees with the rows read, the page is
 * numbered: its place and the location's rows, page links from its number,
 * prev and next exact both ways (no row before it: no prev; none after:
 * no next), a previous page within the first page's rows linked as the
 * first page (prev_is_first), and the Last page holds the rows the pages
 * before it leave, aligned with the first page's.
 *
 * Returns what to ask instead, with no row used from
 * this answer: CP_FIND_FIRST when no row is left before a row (they were
 * deleted: the first page is asked), CP_FIND_LAST when no
 * row follows a row (likewise the Last page); else the page is built and
 * the token's own from is returned. */
cp_find_from cp_find_page_assemble(apr_pool_t *pool, const cp_find_token *token,
                                   const apr_array_header_t *rows, int count, int links,
                                   const cp_find_count *counted, const char *start,
                                   cp_page *page);

/* A numbered _find location without page links is paged by keyset over
 * its index's view, one query a page (cp_plan_keyset_page): from its
 * token's row to limit rows, the row itself left out, as a _find page is
 * read. These three read it. */

/* The view key of a token's row in the index's view (index_fields, as
 * cp_mango_index_range reads them): the equalities' values (low: its
 * *fixed, NULL without equalities), then the token's sort
 * values for the index's fields after them (its last ones: the sort's
 * fields that the equalities fix come first). So the equalities are the
 * location's, never the token's, and no token reaches rows outside them.
 * NULL when the key has fewer values than those fields. */
json_t *cp_find_index_key(apr_pool_t *pool, const apr_array_header_t *index_fields,
                          const json_t *low, const json_t *key);

/* The rows of the view query's answer, in the order read, as
 * cp_find_page_assemble takes them: without the token's own row, which a
 * query from it brings first while it is there (*dropped 1: a Mango
 * index holds one row a document, so the first row with the token's id is
 * its), each keyed by its sort values (cp_find_key_index_rows). */
apr_array_header_t *cp_find_index_rows(apr_pool_t *pool, const cp_answer *answer,
                                       const cp_find_token *token, const cp_find_sort *sort,
                                       const apr_array_header_t *index_fields, int *dropped);

/* CouchDB's count of those rows, from the answers of
 * cp_plan_keyset_page's queries (cp_query): the read's total_rows less
 * the range probes' offsets, and its offset less the rows before the range
 * the way it read, plus the token's own row when it was left out. */
void cp_find_index_count(const apr_array_header_t *queries, int backward, int dropped,
                         cp_find_count *counted);

#endif
