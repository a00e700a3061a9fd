/* SPDX-License-Identifier: Apache-2.0 */
/*
 * couchpage_json: jansson values whose lifetime is an APR pool.
 *
 * Part of the httpd-free core: nothing here knows about request_rec.
 */
#ifndef COUCHPAGE_JSON_H
#define COUCHPAGE_JSON_H

#include <apr_pools.h>
#include <jansson.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Hands a jansson reference to the pool: it is released when the pool is
 * cleared or destroyed. Returns the value for chaining; NULL passes through. */
json_t *cp_json_pool_own(apr_pool_t *pool, json_t *value);

/* An integer beyond 64 bits, which CouchDB keeps and collates exactly (a
 * Mango index over such a field keys it so) but jansson cannot hold, is held
 * as a "wide integer": a jansson string no JSON text decodes to (it starts
 * with the byte 0xFF) that cp_json_text writes back as the integer's text,
 * digit for digit, and cp_json_identical tells from every other number.
 * cp_json_wide makes one from its text (a new reference); cp_json_is_wide
 * says whether a value is one; cp_json_is_wide_integer whether
 * text[0..len) is a JSON integer literal beyond 64 bits. */
json_t *cp_json_wide(const char *text, apr_size_t len);
int cp_json_is_wide(const json_t *value);
int cp_json_is_wide_integer(const char *text, apr_size_t len);

/* Parses JSON text (any value, not only arrays and objects) and hands the
 * result to the pool. Integers beyond 64 bits, which CouchDB sends verbatim,
 * make jansson fail: only then the text is read again with those integers
 * as wide integers (above).
 * On failure returns NULL and, when error is not NULL, a message from the pool. */
json_t *cp_json_load(apr_pool_t *pool, const char *text, apr_size_t len,
                     const char **error);

/* Compact JSON text of any value, allocated from the pool. Object members
 * keep their order: CouchDB collates objects member by member. Wide
 * integers are written as their text. cp_json_size: its length, unwritten
 * where jansson can write the value. */
const char *cp_json_text(apr_pool_t *pool, const json_t *value);
apr_size_t cp_json_size(const json_t *value);

/* Whether a and b have the same compact JSON text, without writing it: the
 * same types and values, strings byte for byte, object members in the same
 * order (jansson's json_equal ignores member order, which CouchDB's
 * collation does not). NULL is identical to nothing. */
int cp_json_identical(const json_t *a, const json_t *b);

/* Compact JSON text as cp_json_text gives it, with every <, > and & written
 * as \u003c, \u003e, \u0026: the same JSON, but inert wherever it lands in
 * HTML (an include, a sniffing browser). They can only occur inside strings. */
const char *cp_json_text_html_safe(apr_pool_t *pool, const json_t *value);

/* How many <, > and & JSON text[0..len) holds, and its copy into out with
 * each written as \u003c, \u003e, \u0026 (5 bytes more each): the end of
 * what was written. How every body the module sends is made HTML-safe. */
apr_size_t cp_json_html_specials(const char *text, apr_size_t len);
char *cp_json_copy_html_safe(char *out, const char *text, apr_size_t len);

/* The JSON string literal for text, quotes included, allocated from the
 * pool; NULL when text is not valid UTF-8. */
const char *cp_json_quote(apr_pool_t *pool, const char *text);

/* Reads JSON text and gives it back compact: how a configured or computed
 * key travels to CouchDB. NULL with *error set when it is not JSON. */
const char *cp_json_compact(apr_pool_t *pool, const char *text, const char **error);

#ifdef __cplusplus
}
#endif

#endif
