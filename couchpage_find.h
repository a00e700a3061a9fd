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
 * same rows as a key range (cp_find_index_range), which CouchDB counts:
 * such a page is read by keyset from that view and numbered
 * (couchpage_keyset). A _find location's tokens are couchpage_token's
 * keyset tokens, {"a": [KEY, ID]} and {"b": [KEY, ID]}.
 *
 * Part of the httpd-free core: nothing here knows about request_rec.
 */
#ifndef COUCHPAGE_FIND_H
#define COUCHPAGE_FIND_H

#include <apr_pools.h>
#include <apr_tables.h>
#include "couchpage_json.h"
#include "couchpage_page.h"
#include "couchpage_response.h"
#include "couchpage_token.h"
#include "couchpage_view.h"

/* A sort field as Mango writes it ("author.name"; "a\.b" for a member
 * whose name holds a dot) and the members it steps through. */
typedef struct {
    const char *name;
    const char *const *steps; /* NULL-terminated, escapes resolved */
} cp_find_field;

/* CouchPageSort and CouchPageDescending: the fields that order the rows,
 * before the document id, which breaks their ties. */
typedef struct {
    const cp_find_field *fields;
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

/* NULL when selector is a Mango selector CouchDB 3.4 accepts, else why
 * not: an object whose "$" names are known operators with arguments of
 * their kind ($and, $or, $nor: arrays of selectors; $in, $nin, $all:
 * arrays; $exists: a boolean; $size: an integer; $mod: [divisor other
 * than 0, remainder]; $type: a JSON type's name; $regex, $beginsWith: a
 * string; $not, $elemMatch, $allMatch, $keyMapMatch: objects). $text is
 * refused: it needs a text index, which cannot sort. Strings are not
 * looked into, so a %{json:EXPR} placeholder passes where a string may
 * stand. */
const char *cp_find_check_selector(apr_pool_t *pool, const json_t *selector);


/* The strings of a configured selector that are request-time values: those
 * holding "%{" (an httpd expression that yields JSON, as CouchPageRange's
 * bounds), each once, added to out (const char *), in the selector's order.
 * Member names are never values. */
void cp_find_selector_placeholders(const json_t *selector, apr_array_header_t *out);

/* Whether a placeholder (a string of the selector holding "%{") is one
 * %{json:...} call and nothing else, such as "%{json:%{HTTP:X-Group}}":
 * its value is then always a JSON string. Any other (%{HTTP:X} alone, text
 * around the call, two calls) would give the request's text as JSON, an
 * operator object such as {"$regex": ".*"} included: CouchPageSelector
 * refuses it. */
int cp_find_placeholder_is_json_string(const char *placeholder);

/* The JSON value a placeholder string stands for in this request, or NULL
 * with *error set. */
typedef const json_t *cp_find_fill(void *baton, const char *placeholder, const char **error);

/* A copy of selector (pool-owned) in which every placeholder string
 * (cp_find_selector_placeholders) is replaced by fill's value for it: a
 * value, never text spliced into the selector. NULL when fill fails (its
 * *error). A selector without placeholders is returned as it is. */
const json_t *cp_find_selector_fill(apr_pool_t *pool, const json_t *selector, cp_find_fill *fill,
                                    void *baton, const char **error);

/* A document's sort values, in sort order, as a JSON array (the row's key
 * in a token), or NULL when the document lacks one of them (Mango leaves
 * such documents out of a sorted query). The array holds the document's
 * own values (references), handed to the pool. */
json_t *cp_find_row_key(apr_pool_t *pool, const cp_find_sort *sort, const json_t *doc);

/* Whether CouchDB's Mango operators take value as an argument: CouchDB
 * 3.4.3 answers 500 function_clause to any selector whose value holds an
 * array as a member of an array, at any depth ({"$gt": [[1]]}, {"$eq":
 * {"a": [1, [2]]}}), though documents may hold such values and an index
 * sorts them. 0 for such a value. */
int cp_find_value_comparable(const json_t *value);

/* The condition "beyond the row (key, docid)" in the direction rows are
 * read: after it in the location's order, or before it when backward. key
 * is cp_find_row_key's array. It is a top-level range on the first sort
 * field, which CouchDB turns into the index scan's start, and the exact
 * order, (v1 > k1) OR (v1 = k1 AND v2 > k2) OR ... OR (all equal AND
 * _id > docid), as $or. NULL when key does not hold one value a sort
 * field, a value CouchDB cannot compare (cp_find_value_comparable), or
 * docid is not UTF-8. */
json_t *cp_find_beyond(apr_pool_t *pool, const cp_find_sort *sort, const json_t *key,
                       const char *docid, int backward);

/* CouchPageUpdate or CouchPageStable as _find's body takes it: a boolean,
 * or not sent (CouchDB's default: update true, stable false). */
typedef enum {
    CP_FIND_UNSENT = 0,
    CP_FIND_FALSE,
    CP_FIND_TRUE,
} cp_find_flag;

/* The flag for a view's update or stable word ("true", "false"; NULL: not
 * sent): 1, or 0 for a word _find does not take. CouchDB 3.4.3's _find
 * takes update and stable as JSON booleans only: update "lazy", which a
 * view takes, is answered 400 invalid_boolean. */
int cp_find_flag_named(const char *word, cp_find_flag *flag);

/* What a _find location asks: its selector (request values in), its sort,
 * the index it names (ddoc NULL: CouchDB chooses), the fields the page
 * shows (NULL: whole documents), and CouchPageUpdate and CouchPageStable. */
typedef struct {
    const json_t *selector;
    const cp_find_sort *sort;
    const char *index_ddoc;
    const char *index_name; /* NULL: the design document's only index */
    const json_t *fields;   /* array of Mango field names, or NULL */
    cp_find_flag update;
    cp_find_flag stable;
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

/* The fields of a Mango JSON index, in order, read from the design
 * document that holds it (text: GET /DB/_design/DDOC's body; name NULL:
 * its only index, whose name goes to *view_name), into *fields (const
 * char *): NULL, or why this index
 * cannot number a location's pages: not a Mango ("query") design
 * document, no such index, not a JSON index, a field sorted otherwise than
 * ascending, or a partial_filter_selector (the index then holds only some
 * documents). */
const char *cp_find_index_fields(apr_pool_t *pool, const char *text, apr_size_t len,
                                 const char *name, const char **view_name,
                                 apr_array_header_t **fields);

/* A JSON index on fields F1..Fn is a view whose keys are [F1, ..., Fn] of
 * the documents that have them all, ties in id order: _find's own order
 * over that index. When the selector (its request values in) fixes F1..Fk
 * by equalities (a scalar, bare or as {"$eq": v}) and has no other
 * condition but {"$gte": null} or {"$exists": true} on later fields (which
 * every document of the index meets), and the sort fields before _id, past
 * any of F1..Fk (which order nothing), are F(k+1)..Fn, the location's rows
 * are that view's rows from *low, [v1, ..., vk], to *high, [v1, ..., vk,
 * {"\uffff": null}] (a value above any sort value but an object whose
 * first member is named U+FFFF), or *high = *low when k = n; and that view
 * can count them. When k = 0 they are the whole view: *low and *high are
 * NULL (no range). NULL and the range (compact JSON text), or why not. */
const char *cp_find_index_range(apr_pool_t *pool, const json_t *selector,
                                const cp_find_sort *sort, const apr_array_header_t *fields,
                                const char **low, const char **high);

/* Keys a numbered _find page's rows as a keyset page's are, so that `key`
 * (CouchPageItem, item templates) means one thing on a _find location
 * however its page was read: a row of the index's view is keyed by the
 * values of all the index's fields (const char *, in order: [F1, ..., Fn]),
 * of which the sort names the last and any of the equalities' before them
 * (cp_find_index_range). Unless that is the same array, each row of rows
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
 * (cp_find_value_comparable) is left out as cp_page_withhold_long_tokens
 * leaves one out (next or prev NULL and page->withheld, a page link
 * without its token), since the module would refuse that token. Pages
 * read from the index's view take any value and need no such check.
 * Returns how many links were left out. */
int cp_find_withhold_unbounding(apr_pool_t *pool, const cp_find_sort *sort, cp_page *page);

#endif
