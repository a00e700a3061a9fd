/* SPDX-License-Identifier: Apache-2.0 */
/*
 * couchpage_json: jansson values whose lifetime is an APR pool, built from
 * JSON text that the simdjson shim reads (jansson reads no text here: it
 * builds, holds and writes values), and written back as CouchDB wrote them.
 * What jansson cannot hold as CouchDB does (an integer beyond 64 bits) is
 * this file's alone: no caller tests how it is held.
 *
 * No opaque cp_json type (as mod_md's md_json_t) wraps jansson's json_t:
 * it would not pay for itself. The values jansson holds are few and small
 * (a token's key, a selector, a query's parameters, a _find body): the
 * answers, a page's rows and the JSON a page sends are read and written
 * from their bytes (couchpage_response, couchpage_row, cp_json_span_text),
 * a row's value decoded only where a field asks for it. What a wrapper
 * would buy, that no caller sees how a wide integer is held, the calls
 * below give (cp_json_is_string,
 * cp_json_is_number, cp_json_number_value, cp_json_string_text,
 * cp_json_text). What it would cost: json_t stands in most core headers,
 * and jansson's calls (object and array walks, their foreach macros, value
 * makers), most of them in the _find, Mango and token files, would each
 * become a wrapper of the same call (md_json's path getters fit none of
 * them), jansson's reference counting still under it. Revisit if jansson
 * is to be replaced.
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
 * says whether a value is one (what a reading of JSON text made).
 *
 * Callers never test for that marker: to them a wide integer is a number,
 * and no string. cp_json_is_string: a JSON string (jansson's json_is_string
 * less wide integers); cp_json_is_number: a JSON number (jansson's
 * json_is_number and wide integers); cp_json_number_value: a number's value
 * as a double (a wide integer's rounded), 0 for anything else;
 * cp_json_string_text: a JSON string's text (json_string_value's, its
 * length json_string_length's), NULL for any other value, a wide integer
 * and NULL included, so that a member that should be a string is read in
 * one call. A number's exact text is cp_json_text's. */
json_t *cp_json_wide(const char *text, apr_size_t len);
int cp_json_is_wide(const json_t *value);
int cp_json_is_string(const json_t *value);
const char *cp_json_string_text(const json_t *value);
int cp_json_is_number(const json_t *value);
double cp_json_number_value(const json_t *value);

/* The value of the JSON number text[0..len) as jansson's reader held it (a
 * new reference): an integer within 64 bits a JSON_INTEGER, one beyond a
 * wide integer, any other number a JSON_REAL, read in the C locale. NULL
 * when the bytes are not one JSON number or it is beyond a double's range.
 * The byte text[len] must be readable (a number's bytes in a body are
 * followed by another byte or the padding). */
json_t *cp_json_number(const char *text, apr_size_t len);

/* Reads JSON text (any value, not only arrays and objects) by walking it
 * with the simdjson shim (cp_sj_walk_value) and building the jansson value
 * of what the walk tells; hands the result to the pool. Numbers as
 * cp_json_number gives them (integers beyond 64 bits, which CouchDB sends
 * and keeps, as wide integers), strings and member names as decoded
 * (\u0000 included: CouchDB keeps such names in keys, and a token must
 * carry them; jansson holds and writes them by length). Refused: what is
 * not JSON (the walk's checks: UTF-8, escapes, number syntax, separators,
 * one value and nothing after it), and as jansson's reader did, a value
 * nested deeper than JSON_PARSER_MAX_DEPTH (2048, the root at 1). Of two members of one name
 * the last counts, in the place of the first.
 * On failure returns NULL and, when error is not NULL, why (a phrase). */
json_t *cp_json_load(apr_pool_t *pool, const char *text, apr_size_t len,
                     const char **error);

/* Compact JSON text of any value, allocated from the pool. Object members
 * keep their order: CouchDB collates objects member by member. Wide
 * integers are written as their text. cp_json_size: its length, unwritten
 * where jansson can write the value. */
const char *cp_json_text(apr_pool_t *pool, const json_t *value);

/* s[0..n) quoted into o as jansson's writer quotes a string (JSON_COMPACT;
 * no JSON_ENSURE_ASCII or JSON_ESCAPE_SLASH): \" \\ \b \f \n \r \t, \u00XX
 * for the other control characters, every other byte as it is; o has room
 * for 6 * n + 2 bytes. The bytes written; with ascii_only, 0 at a byte
 * beyond ASCII (the text then unfinished). The one quoting of the module's
 * own JSON writers (cp_json_text, the view answers' spans). */
apr_size_t cp_json_quote_into(char *o, const char *s, apr_size_t n, int ascii_only);
apr_size_t cp_json_size(const json_t *value);

/* cp_json_text's own writer (in couchpage_json.c): the same text, byte
 * for byte json_dumps's, written into the pool without json_dumps's cost
 * for each object and array; NULL where it leaves the whole value to
 * jansson (a string jansson cannot write, a value nested too deep). */
const char *cp_json_write(apr_pool_t *pool, const json_t *value);

/* The text cp_json_text writes for the value of JSON text[0..len), which
 * has been read as JSON already (a value's bytes in a body the reader
 * took, readable for CP_SJ_PADDING bytes past its end), written from a walk
 * of those bytes, in place: no jansson value is built for an object or an
 * array (where an object names a member twice, jansson's value decides
 * where the last one stands). Its length in *text_len; NULL where
 * cp_json_load refuses the value (nested deeper than it reads) or memory
 * runs out. The text is the pool's (freed with it). */
const char *cp_json_span_text(apr_pool_t *pool, const char *text, apr_size_t len,
                              apr_size_t *text_len);

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
