/* SPDX-License-Identifier: Apache-2.0 */
/*
 * couchpage_item: what an HTML item shows, set with CouchPageItem FIELD [LINK].
 *
 * FIELD is a path into a view row: it starts at key, value, id or doc and
 * goes on with .member and [index] steps (value.title, key[1], doc.tags[0]).
 * LINK is a URL pattern whose {FIELD} placeholders are replaced by the
 * row's values, each percent-encoded (every byte but A-Z a-z 0-9 - . _ ~),
 * so a value can never leave its place in the URL.
 *
 * Part of the httpd-free core: no httpd header, no request_rec.
 */
#ifndef COUCHPAGE_ITEM_H
#define COUCHPAGE_ITEM_H

#include <apr_pools.h>
#include <apr_tables.h>
#include "couchpage_json.h"

#include "couchpage_response.h"

/* The members a view row can have, NULL-terminated: what a FIELD path can
 * start at, and what an item shows. */
extern const char *const cp_row_members[];

typedef struct cp_field cp_field;   /* a compiled FIELD path */
typedef struct cp_pattern cp_pattern; /* a compiled LINK pattern */

/* Compiles a FIELD path; NULL with *error set when it is not one. */
cp_field *cp_field_parse(apr_pool_t *pool, const char *path, const char **error);

/* Whether the path starts at the row's member named (id, key, value, doc):
 * a path into doc reads nothing where rows carry no document. */
int cp_field_reads(const cp_field *field, const char *member);

/* The path as written. */
const char *cp_field_path(const cp_field *field);

/* Whether a page carrying only fields (CouchPageFields' names of document
 * members; NULL: every member) shows what the path reads: any path but
 * into doc; a path into doc only when its first member is one of the
 * fields (doc.title with title), never doc itself. */
int cp_field_within(const cp_field *field, const apr_array_header_t *fields);

/* The first of the paths read (const cp_field *, NULL: none) that fields
 * leave out (cp_field_within), said as "reads doc.secret, a member
 * CouchPageFields leaves out" (or "the whole document"); NULL when
 * none is. */
const char *cp_fields_fault(apr_pool_t *pool, const apr_array_header_t *read,
                            const apr_array_header_t *fields);

/* The JSON value at the path in the row, decoded (pool-owned), or NULL
 * when the row has none. */
const json_t *cp_field_get(apr_pool_t *pool, const cp_field *field, const cp_row *row);

/* What a value shows as text: a string as it is, anything else as its JSON;
 * *len is its length, as a string may hold NUL characters. NULL for a
 * missing value. */
const char *cp_field_text(apr_pool_t *pool, const json_t *value, apr_size_t *len);

/* Compiles a LINK pattern; NULL with *error set for a bad placeholder or an
 * unbalanced brace. */
cp_pattern *cp_pattern_parse(apr_pool_t *pool, const char *pattern, const char **error);

/* Whether a placeholder of the pattern starts at the row's member named. */
int cp_pattern_reads(const cp_pattern *pattern, const char *member);

/* What an HTML item shows: a field, linked when link is not NULL. */
typedef struct {
    const cp_field *field;   /* NULL: the row's key */
    const cp_pattern *link;  /* NULL: plain text */
} cp_item_spec;

/* CouchPageItem FIELD [LINK] (link NULL when not given): NULL with *item
 * set; or why not, "the field ..." or "the link ...". */
const char *cp_item_spec_parse(apr_pool_t *pool, const char *field, const char *link,
                               cp_item_spec *item);

/* Adds the item's field and its link's placeholders to out
 * (const cp_field *). */
void cp_item_spec_fields(const cp_item_spec *item, apr_array_header_t *out);

/* Whether the item's field, or a placeholder of its link, starts at the
 * row's member named. */
int cp_item_spec_reads(const cp_item_spec *item, const char *member);

/* The pattern filled in from the row; a missing value fills in as empty,
 * and so does one that fields leave out (as cp_field_show). */
const char *cp_pattern_expand(apr_pool_t *pool, const cp_pattern *pattern,
                              const cp_row *row, const apr_array_header_t *fields);

/* Percent-encodes every byte of text[0..len) but the unreserved ones of
 * RFC 3986. */
const char *cp_percent_encode(apr_pool_t *pool, const char *text, apr_size_t len);

/* text[0..len) as HTML text or as an attribute value in either quotes:
 * NUL, which HTML cannot carry, becomes U+FFFD, and < > & " ' are escaped. */
const char *cp_html_text(apr_pool_t *pool, const char *text, apr_size_t len);

/* How an item template shows a field: every way gives HTML-safe text; none
 * inserts a row's value as markup.
 * CP_SHOW_HTML   the value as cp_field_text gives it, escaped;
 * CP_SHOW_URL    the same text percent-encoded (cp_percent_encode), for a
 *                path segment or query value: a value can never pick a URL's
 *                scheme or leave its place in it;
 * CP_SHOW_NUMBER a JSON number as its JSON text, anything else nothing;
 * CP_SHOW_DATE   a date as YYYY-MM-DD: an ISO 8601 string (YYYY-MM-DD, or
 *                followed by THH:MM[:SS[.fraction]][Z|+HH:MM|-HH:MM]) shows
 *                its own date, a number is milliseconds since 1970 (UTC,
 *                JavaScript's Date.now()) and shows its UTC date for the
 *                years 0000 to 9999; anything else shows nothing.
 * A missing value shows nothing. With fields (CouchPageFields; NULL: every
 * member), the row's doc is what a JSON page carries of it: doc shows only
 * those members, and a path into a member outside them shows nothing
 * (cp_field_within), as a missing value. */
typedef enum { CP_SHOW_HTML, CP_SHOW_URL, CP_SHOW_NUMBER, CP_SHOW_DATE } cp_show;

const char *cp_field_show(apr_pool_t *pool, cp_show how, const cp_field *field,
                          const cp_row *row, const apr_array_header_t *fields);

/* %{couchpage_join:FIELD[]SEPARATOR}'s argument: the path, then [] (which no
 * path holds: an index is a number), then the separator, any text, empty
 * included. NULL with *field and *separator set; or why not. */
const char *cp_field_join_parse(apr_pool_t *pool, const char *arg, const cp_field **field,
                                const char **separator);

/* The elements of the array at the path, each as text (a string as it
 * is, a number as CouchDB wrote it, or where the value was decoded (the
 * key) in the fewest digits that read back as it, true, false, null, an
 * array or object as its compact JSON), escaped, with separator (the template's own text, taken as
 * it is) between them; an empty array shows nothing, and a value that is no
 * array shows as CP_SHOW_HTML. With fields, as cp_field_show: an array
 * outside them shows nothing. The array's bytes are walked once: its
 * elements are not decoded into one value. */
const char *cp_field_join(apr_pool_t *pool, const cp_field *field, const char *separator,
                          const cp_row *row, const apr_array_header_t *fields);

/* The default HTML item of a _find location's row (a document, its key the
 * sort values): the document's title when it is a non-empty string and
 * fields (CouchPageFields' names; NULL: every member) lets it show; else
 * the sort values as text (a number in the fewest digits that read back
 * as it), joined with ", ". HTML-escaped. */
const char *cp_item_find_default(apr_pool_t *pool, const cp_row *row,
                                 const apr_array_header_t *fields);

#endif
