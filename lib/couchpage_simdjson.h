/* SPDX-License-Identifier: Apache-2.0 */
/*
 * couchpage_simdjson: the one place simdjson (Debian's libsimdjson-dev, a
 * C++ library) is called, behind this plain C interface.
 *
 * cp_sj_walk reads a padded body with simdjson's On-Demand parser, checks
 * every value as JSON on the way (UTF-8, control characters, escapes and
 * surrogates, number syntax and a double's range, true/false/null, the
 * separators, the nesting depth, nothing after the root value) and tells a
 * visitor of each value in document order: its kind, its bytes, its member
 * name decoded, and a string's decoded text. Containers are
 * told twice: when they open and when they close (with all their bytes).
 * It is the module's one reader of JSON text: what the values mean (rows,
 * answers) is C, couchpage_response.c; jansson values are built from a
 * walk by couchpage_json.c (cp_json_load, through cp_sj_walk_value).
 *
 * One parser per thread (a child's worker), reused from read to read as
 * simdjson advises; its working memory (about 5 bytes a byte of the body)
 * is kept only up to CP_SJ_KEEP bytes of body, so that nothing of a large
 * answer outlives its read.
 *
 * Part of the httpd-free core: nothing here knows about request_rec.
 */
#ifndef COUCHPAGE_SIMDJSON_H
#define COUCHPAGE_SIMDJSON_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Zero bytes every body is followed by: simdjson loads blocks past a
 * body's end (at least its SIMDJSON_PADDING), and zeros read as no value. */
#define CP_SJ_PADDING 64

/* Bodies up to this size keep their thread's parser for the next read. */
#define CP_SJ_KEEP (256 * 1024)

/* How a walk ended: CP_SJ_OK, a fault of the body's JSON (cp_sj_fault says
 * which), or CP_SJ_SCALAR_ROOT (the body is one scalar: no answer is),
 * CP_SJ_STOPPED (the visitor asked), CP_SJ_MEMORY. */
typedef enum {
    CP_SJ_OK = 0,
    CP_SJ_UTF8,
    CP_SJ_CONTROL,
    CP_SJ_UNCLOSED_STRING,
    CP_SJ_ESCAPE,
    CP_SJ_NUMBER,
    CP_SJ_WORD,
    CP_SJ_DEPTH,
    CP_SJ_TRAILING,
    CP_SJ_EMPTY,
    CP_SJ_MALFORMED,
    CP_SJ_SCALAR_ROOT,
    CP_SJ_STOPPED,
    CP_SJ_MEMORY
} cp_sj_status;

typedef enum {
    CP_SJ_OBJECT,   /* a container opens: text is its first byte, len 0 */
    CP_SJ_ARRAY,
    CP_SJ_STRING,   /* scalars: text[0..len) their bytes as sent */
    CP_SJ_NUMBER_VALUE,
    CP_SJ_TRUE,
    CP_SJ_FALSE,
    CP_SJ_NULL,
    CP_SJ_CLOSE     /* the container opened last closes: text[0..len) all of it */
} cp_sj_kind;

typedef struct {
    cp_sj_kind kind;
    size_t depth;           /* the root 0, its members and elements 1, ... */
    const char *name;       /* an object member's name, decoded (it may hold */
    size_t name_len;        /* NUL characters); NULL for elements, the root, CLOSE */
    const char *name_quote; /* the name's opening quote in the body */
    const char *text;
    size_t len;
    const char *string;     /* a string's value, decoded */
    size_t string_len;
    int number_refused;     /* a number simdjson refuses: some JSON allows
                               (0e400987654321...); the visitor decides whether
                               text is one (cp_json_number, which reads every
                               number's value from its bytes) */
} cp_sj_value;

/* Told of each value; a non-zero return stops the walk (CP_SJ_STOPPED).
 * Every pointer in value lasts until the walk returns, no longer. */
typedef int (*cp_sj_visit)(void *baton, const cp_sj_value *value);

/* Walks text[0..len), followed by at least CP_SJ_PADDING readable zero
 * bytes, whose root must be an object or an array nested at most
 * max_depth levels. */
cp_sj_status cp_sj_walk(const char *text, size_t len, size_t max_depth, cp_sj_visit visit,
                        void *baton);

/* As cp_sj_walk, but the root may be any JSON value: a scalar root is told
 * alone, at depth 0. How a token, a key or an error body is read. A visitor
 * may walk another body inside a walk (with a parser of its own). */
cp_sj_status cp_sj_walk_value(const char *text, size_t len, size_t max_depth,
                              cp_sj_visit visit, void *baton);

/* Whether simdjson's first pass (structure, strings, UTF-8) reads
 * text[0..len) as above: CP_SJ_OK, or its fault. No value is read. */
cp_sj_status cp_sj_first_pass(const char *text, size_t len);

/* What a fault says of a body, as a phrase ("a string is not UTF-8"). */
const char *cp_sj_fault(cp_sj_status status);

#ifdef __cplusplus
}
#endif

#endif
