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
 * such a page is read by keyset from that view and numbered
 * (couchpage_keyset). A _find location's tokens are couchpage_token's
 * keyset tokens, {"a": [KEY, ID]} and {"b": [KEY, ID]}. What Mango itself
 * is (field names, selectors and their request values, the index's fields
 * and range) is couchpage_mango's.
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
#include "couchpage_token.h"
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

/* The rows beyond a row, asked apart: those that tie with it on every
 * sort field, {"F1": {"$eq": k1}, ..., "Fn": {"$eq": kn}, "_id": {"$gt":
 * docid}} ($lt the other way), which CouchDB starts at the row itself
 * through an index whose key is fixed up to _id
 * (cp_mango_index_starts_at_row); and the rows past them, cp_find_beyond
 * without its last clause (the ties'). Together the rows of
 * cp_find_beyond, in its order: the ties first. */
typedef enum {
    CP_FIND_BEYOND = 0,   /* cp_find_beyond's: every row beyond */
    CP_FIND_TIES,         /* the rows tied with the row, beyond it */
    CP_FIND_PAST_TIES     /* the rows beyond its sort values */
} cp_find_part;

/* cp_find_beyond for one part; NULL as there, and for the ties' parts of
 * a sort by _id alone, which has no ties. */
json_t *cp_find_beyond_part(apr_pool_t *pool, const cp_find_sort *sort, const json_t *key,
                            const char *docid, int backward, cp_find_part part);

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
    int index_fallback;     /* the index is learnt (couchpage_learn), not named:
                               CouchDB may use another where it is gone */
} cp_find_spec;

/* The fields a page's query asks for: the page's own and, where they are
 * not among them, _id and the sort fields, which the tokens need; NULL
 * when spec->fields is NULL (whole documents hold them all). */
json_t *cp_find_fields_param(apr_pool_t *pool, const cp_find_spec *spec);

/* The body of one _find request: the location's selector, AND beyond the
 * row (key, docid) when key is not NULL (beyond alone where the selector
 * is {}, which CouchDB would read inside $and as a field named ""); sorted the location's way, or
 * the other way when backward (the rows before a page, and the Last page,
 * read from its end); limit rows; the index as use_index with no fallback
 * (with CouchDB's fallback where the spec says so);
 * the fields; update and stable when set. Compact JSON text, or NULL when
 * key or docid cannot bound (cp_find_beyond). */
const char *cp_find_body(apr_pool_t *pool, const cp_find_spec *spec, const json_t *key,
                         const char *docid, int backward, int limit);

/* cp_find_body asking one part of the rows beyond the row
 * (cp_find_beyond_part). */
const char *cp_find_body_part(apr_pool_t *pool, const cp_find_spec *spec, const json_t *key,
                              const char *docid, int backward, int limit, cp_find_part part);

/* cp_find_body asking the rows beyond the row (key, docid) among those
 * that share its values of the sort fields before within, in one query:
 * those fields $eq their values and the field at within from its value,
 * top-level conditions, so that CouchDB starts the index's scan at [...,
 * v] and reads again only the rows tied with the row before it. NULL as
 * cp_find_body, and for within outside the sort. */
const char *cp_find_body_within(apr_pool_t *pool, const cp_find_spec *spec, const json_t *key,
                                const char *docid, int backward, int limit, int within);

/* cp_find_body asking the rows at or past the sort values key (no _id:
 * a value's first row on) in the sort field at open, among those that
 * share the key's values of the sort fields before it: {"F": {"$gte":
 * w}} ($lte the other way) and each earlier sort field $eq its value,
 * top-level conditions, so that CouchDB starts the index's scan at [...,
 * w]; the later sort fields are left to the selector; and {"$gt": past}
 * ($lt), past the boundary row's value of F: the same range where w lies
 * past it, as it does unless CouchDB collates w as past but writes it
 * otherwise. NULL for a key or past that cannot bound a query. */
const char *cp_find_from_body(apr_pool_t *pool, const cp_find_spec *spec, const json_t *key,
                              int open, const json_t *past, int backward, int limit);

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

/* A page read by _find hands out no token that cannot bound its _find
 * query: a link whose row's sort values CouchDB cannot compare
 * (cp_mango_value_comparable) is left out as cp_page_withhold_long_tokens
 * leaves one out (next or prev NULL and page->withheld, a page link
 * without its token), since the module would refuse that token. Pages
 * read from the index's view take any value and need no such check.
 * Returns how many links were left out. */
int cp_find_withhold_unbounding(apr_pool_t *pool, const cp_find_sort *sort, cp_page *page);

#endif
