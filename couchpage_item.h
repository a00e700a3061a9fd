/*
 * couchpage_item: what an HTML item shows, set with CouchPageItem FIELD [LINK].
 *
 * FIELD is a path into a view row: it starts at key, value, id or doc and
 * goes on with .member and [index] steps (value.title, key[1], doc.tags[0]).
 * LINK is a URL pattern whose {FIELD} placeholders are replaced by the
 * row's values, each percent-encoded (every byte but A-Z a-z 0-9 - . _ ~),
 * so a value can never leave its place in the URL.
 */
#ifndef COUCHPAGE_ITEM_H
#define COUCHPAGE_ITEM_H

#include <apr_pools.h>
#include <apr_tables.h>
#include <jansson.h>

/* The members a view row can have, NULL-terminated: what a FIELD path can
 * start at, and what an item shows. */
extern const char *const cp_row_members[];

typedef struct cp_field cp_field;   /* a compiled FIELD path */
typedef struct cp_pattern cp_pattern; /* a compiled LINK pattern */

/* Compiles a FIELD path; NULL with *error set when it is not one. */
cp_field *cp_field_parse(apr_pool_t *pool, const char *path, const char **error);

/* The JSON value at the path in the row, or NULL when the row has none. */
const json_t *cp_field_get(const cp_field *field, const json_t *row);

/* What a value shows as text: a string as it is, anything else as its JSON;
 * *len is its length, as a string may hold NUL characters. NULL for a
 * missing value. */
const char *cp_field_text(apr_pool_t *pool, const json_t *value, apr_size_t *len);

/* Compiles a LINK pattern; NULL with *error set for a bad placeholder or an
 * unbalanced brace. */
cp_pattern *cp_pattern_parse(apr_pool_t *pool, const char *pattern, const char **error);

/* The pattern filled in from the row; a missing value fills in as empty. */
const char *cp_pattern_expand(apr_pool_t *pool, const cp_pattern *pattern,
                              const json_t *row);

/* Percent-encodes every byte of text[0..len) but the unreserved ones of
 * RFC 3986. */
const char *cp_percent_encode(apr_pool_t *pool, const char *text, apr_size_t len);

#endif
