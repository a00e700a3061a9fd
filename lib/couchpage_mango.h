/* SPDX-License-Identifier: Apache-2.0 */
/*
 * couchpage_mango: Mango as a _find location writes it, apart from any
 * page. Field names and the members they step through; selectors, checked
 * at start-up as CouchDB 3.4 would take them, their request-time values
 * (%{...} placeholders) found then and filled in each request; the values
 * CouchDB's operators can compare; CouchPageUpdate and CouchPageStable as
 * _find takes them; and index learning: a Mango JSON index's fields, read
 * from its design document, and the selectors that are a key range of its
 * view (cp_mango_index_range), which CouchDB counts. couchpage_find builds
 * each page's query from these.
 *
 * Part of the httpd-free core: nothing here knows about request_rec.
 */
#ifndef COUCHPAGE_MANGO_H
#define COUCHPAGE_MANGO_H

#include <apr_pools.h>
#include <apr_tables.h>
#include "couchpage_json.h"

/* A field as Mango writes it ("author.name"; "a\.b" for a member whose
 * name holds a dot) and the members it steps through. */
typedef struct {
    const char *name;
    const char *const *steps; /* NULL-terminated, escapes resolved */
} cp_mango_field;

/* Splits a Mango field name at its unescaped dots ("a\.b" is one member,
 * "a.b"): the members, NULL-terminated, or NULL and *error set when a
 * member is empty or a backslash escapes anything but a dot. */
const char *const *cp_mango_field_steps(apr_pool_t *pool, const char *name, const char **error);

/* NULL when selector is a Mango selector CouchDB 3.4 accepts, else why
 * not: an object whose "$" names are known operators with arguments of
 * their kind ($and, $or, $nor: arrays of selectors; $in, $nin, $all:
 * arrays; $exists: a boolean; $size: an integer; $mod: [divisor other
 * than 0, remainder]; $type: a JSON type's name; $regex, $beginsWith: a
 * string; $not, $elemMatch, $allMatch, $keyMapMatch: objects). $text is
 * refused: it needs a text index, which cannot sort. Strings are not
 * looked into, so a %{json:EXPR} placeholder passes where a string may
 * stand. */
const char *cp_mango_check_selector(apr_pool_t *pool, const json_t *selector);

/* The strings of a configured selector that are request-time values: those
 * holding "%{" (an httpd expression that yields JSON, as CouchPageRange's
 * bounds), each once, added to out (const char *), in the selector's order.
 * Member names are never values. */
void cp_mango_selector_placeholders(const json_t *selector, apr_array_header_t *out);

/* Whether a placeholder (a string of the selector holding "%{") is one
 * %{json:...} call and nothing else, such as "%{json:%{HTTP:X-Group}}":
 * its value is then always a JSON string. Any other (%{HTTP:X} alone, text
 * around the call, two calls) would give the request's text as JSON, an
 * operator object such as {"$regex": ".*"} included: CouchPageSelector
 * refuses it. */
int cp_mango_placeholder_is_json_string(const char *placeholder);

/* The JSON value a placeholder string stands for in this request, or NULL
 * with *error set. */
typedef const json_t *cp_mango_fill(void *baton, const char *placeholder, const char **error);

/* A copy of selector (pool-owned) in which every placeholder string
 * (cp_mango_selector_placeholders) is replaced by fill's value for it: a
 * value, never text spliced into the selector. NULL when fill fails (its
 * *error). A selector without placeholders is returned as it is. */
const json_t *cp_mango_selector_fill(apr_pool_t *pool, const json_t *selector,
                                     cp_mango_fill *fill, void *baton, const char **error);

/* Whether CouchDB's Mango operators take value as an argument: CouchDB
 * 3.4.3 answers 500 function_clause to any selector whose value holds an
 * array as a member of an array, at any depth ({"$gt": [[1]]}, {"$eq":
 * {"a": [1, [2]]}}), though documents may hold such values and an index
 * sorts them. 0 for such a value. */
int cp_mango_value_comparable(const json_t *value);

/* CouchPageUpdate or CouchPageStable as _find's body takes it: a boolean,
 * or not sent (CouchDB's default: update true, stable false). */
typedef enum {
    CP_MANGO_UNSENT = 0,
    CP_MANGO_FALSE,
    CP_MANGO_TRUE,
} cp_mango_flag;

/* The flag for a view's update or stable word ("true", "false"; NULL: not
 * sent): 1, or 0 for a word _find does not take. CouchDB 3.4.3's _find
 * takes update and stable as JSON booleans only: update "lazy", which a
 * view takes, is answered 400 invalid_boolean. */
int cp_mango_flag_named(const char *word, cp_mango_flag *flag);

/* The fields of a Mango JSON index, in order, read from the design
 * document that holds it (text: GET /DB/_design/DDOC's body; name NULL:
 * its only index, whose name goes to *view_name), into *fields (const
 * char *): NULL, or why this index
 * cannot number a location's pages: not a Mango ("query") design
 * document, no such index, not a JSON index, or a field sorted otherwise
 * than ascending. An index with a partial_filter_selector serves: it is
 * CouchPageIndex's, which the pages' _find names without fallback, so
 * that it reads the documents the view holds and no others. */
const char *cp_mango_index_fields(apr_pool_t *pool, const char *text, apr_size_t len,
                                  const char *name, const char **view_name,
                                  apr_array_header_t **fields);

/* An index as CouchDB describes it (an entry of GET /DB/_index's
 * "indexes", _explain's "index"): its design document's id (*ddoc,
 * "_design/..."), its name (*name) and its fields, in order, into *fields
 * (const char *). NULL, or why the module cannot take this index as the
 * location's own, who (what described it: "_explain names") leading the
 * reasons of its own: no index, not a JSON index ("special": _all_docs;
 * "text"), no design document and name; a field sorted otherwise than
 * ascending; or, unlike cp_mango_index_fields (CouchPageIndex's), a
 * partial_filter_selector: an index the module finds itself must hold
 * every document. */
const char *cp_mango_json_index(apr_pool_t *pool, const json_t *index, const char *who,
                                const char **ddoc, const char **name,
                                apr_array_header_t **fields);

/* The index CouchDB's _explain (text: POST /DB/_explain's body, for the
 * location's own query) says its _find uses, as cp_mango_json_index reads
 * it: no index named (no "index", or another server's answer) among the
 * reasons. */
const char *cp_mango_explain_index(apr_pool_t *pool, const char *text, apr_size_t len,
                                   const char **ddoc, const char **name,
                                   apr_array_header_t **fields);

/* Where name is among an index's fields (const char *, as
 * cp_mango_index_fields reads them), or -1. */
int cp_mango_field_place(const apr_array_header_t *fields, const char *name);

/* A JSON index on fields F1..Fn is a view whose keys are [F1, ..., Fn] of
 * the documents that have them all, ties in id order: _find's own order
 * over that index. When the selector (its request values in) fixes F1..Fk
 * by equalities (a scalar, bare or as {"$eq": v}), may bound F(k+1) by
 * $gt, $gte and $lte of scalars (two bounds only when both are numbers,
 * the lower not above the upper), and has no other condition but
 * {"$gte": null} or {"$exists": true} on later fields (which every
 * document of the index meets), and the sort fields before _id (sort,
 * sort_count of them), past any of F1..Fk (which order nothing), are
 * F(k+1)..Fn, the location's rows are that view's rows from *low to *high,
 * and that view can count them. *low is [v1..vk], or [v1..vk, w] for
 * {"$gte": w}, or [v1..vk, w, {"\uffff": null}] for {"$gt": w} (a value
 * above any sort value but an object whose first member is named U+FFFF:
 * after every key [v1..vk, w, ...]); *high is [v1..vk, {"\uffff": null}],
 * or [v1..vk, w, {"\uffff": null}] for {"$lte": w}; *high = *low when k =
 * n. An end with neither equalities nor a bound is open (NULL), and both
 * open are the whole view (no range). CouchDB collates; the module never
 * does. *fixed: [v1..vk] (NULL when k = 0). NULL and the range (compact
 * JSON text), or why not. */
const char *cp_mango_index_range(apr_pool_t *pool, const json_t *selector,
                                 const cp_mango_field *sort, int sort_count,
                                 const apr_array_header_t *fields, const char **low,
                                 const char **high, const char **fixed);

/* The body of POST /DB/_index that makes the index a _find page of the
 * selector can start at its boundary row with ({..., Fn: {"$eq": v},
 * "_id": {"$gt": id}} scans from [.., v, id]): its fields the selector's
 * top-level equalities (cp_mango_index_range's kind), in its order, then
 * the sort fields before _id not among them, then "_id"; "partitioned"
 * true for the queries of a partition, false for the database's (the
 * default of a partitioned database's index is true, and such an index
 * serves no query of the whole database; false is taken by any database).
 * Compact JSON. */
const char *cp_mango_advised_index(apr_pool_t *pool, const json_t *selector,
                                   const cp_mango_field *sort, int sort_count, int partition);

/* Whether an index on fields (const char *, in order) starts a query of
 * the rows tied with a boundary row after it, the selector AND every sort
 * field equal to the row's AND {"_id": {"$gt": id}}, at the row itself:
 * its fields are the selector's top-level equalities (any of them, in any
 * order), then the sort fields before _id that those do not fix, in sort
 * order, then "_id" (cp_mango_advised_index's index is one), so that every
 * field of its key but _id is fixed by an equality and the scan starts at
 * [..., id]. 0 without sort fields before _id. */
int cp_mango_index_starts_at_row(const json_t *selector, const cp_mango_field *sort,
                                 int sort_count, const apr_array_header_t *fields);

/* How many of the sort fields the selector leaves open (does not fix by
 * an equality). */
int cp_mango_open_sort_fields(const json_t *selector, const cp_mango_field *sort,
                              int sort_count);

/* Where the rows past a boundary row's sort values start in the view of an
 * index that starts the ties at the row (cp_mango_index_starts_at_row),
 * whose key is the selector's equalities E, the open sort fields O1..Om
 * in sort order, then _id, when the row's key (its sort values) holds the
 * fixed sort fields at the selector's equalities. level 0 is Om, level 1
 * O(m-1), ...: the view keys (JSON text) that bound a read of the first
 * key past the row's value v of the level's field among the keys that
 * share E and the row's values of the open fields before it (P),
 * [E, P, v, BEYOND] to [E, P, BEYOND] up, [E, P, v] to [E, P] descending
 * the other way; returns that field's place in the sort. -1 otherwise (no
 * such level, a value Mango cannot compare, an index of other fields). */
int cp_mango_index_past_value(apr_pool_t *pool, const json_t *selector,
                              const cp_mango_field *sort, int sort_count,
                              const apr_array_header_t *fields, const json_t *key, int up,
                              int level, const char **startkey, const char **endkey);

/* The part of an index's view (fields, const char *, in order) that holds
 * every row the selector can match, whatever else it asks: the leading
 * fields it fixes by equalities (cp_mango_index_range's kind), F1..Fk,
 * then F(k+1), the open field, from a $gt or $gte of a scalar (*low:
 * [v1..vk, w]) to a $lt or $lte of one (*high: [v1..vk, w, BEYOND]), each
 * bound left out where it is not such (two bounds only when both are
 * numbers, the lower not above the upper), so that the part is never
 * narrower than the range CouchDB's _find reads. An end without
 * equalities or a bound is open (NULL). *prefix: [v1..vk], compact JSON.
 * Returns k, the open field's place, or -1 when the selector fixes every
 * field (no field is open) or is not an object. */
int cp_mango_index_envelope(apr_pool_t *pool, const json_t *selector,
                            const apr_array_header_t *fields, const char **low,
                            const char **high, const char **prefix);

/* A view key (JSON text): the key prefix (JSON text of an array), then
 * value (none when NULL), then, with beyond, a value above any other (the
 * key is then above every key that starts with the others). NULL when it
 * cannot be written. */
const char *cp_mango_range_key(apr_pool_t *pool, const char *prefix, const json_t *value,
                               int beyond);

#endif
