/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Shared set-up of the libFuzzer targets in fuzz/: APR is initialised once,
 * and every input gets its own pool on its own allocator, destroyed after
 * the input, so that anything the core leaks shows in LeakSanitizer and
 * anything it keeps past the pool shows as a use after free.
 */
#ifndef COUCHPAGE_FUZZ_H
#define COUCHPAGE_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

#include <apr_allocator.h>
#include <apr_general.h>
#include <apr_pools.h>
#include <jansson.h>

#include "couchpage_json.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    if (apr_initialize() != APR_SUCCESS) {
        abort();
    }
    return 0;
}

/* A pool whose memory goes back to malloc when it is destroyed: its
 * allocator keeps no free blocks and belongs to the pool. */
static inline apr_pool_t *fuzz_pool(void)
{
    apr_allocator_t *allocator;
    apr_pool_t *pool;

    if (apr_allocator_create(&allocator) != APR_SUCCESS) {
        abort();
    }
    apr_allocator_max_free_set(allocator, 1);
    if (apr_pool_create_ex(&pool, NULL, NULL, allocator) != APR_SUCCESS) {
        abort();
    }
    apr_allocator_owner_set(allocator, pool);
    return pool;
}

static apr_status_t fuzz_free(void *data)
{
    free(data);
    return APR_SUCCESS;
}

/* A copy of len bytes as a C string, in its own malloc block (freed with the
 * pool): unlike pool memory, reading past its end shows in ASan. */
static inline char *fuzz_strndup(apr_pool_t *pool, const void *data, size_t len)
{
    char *text = malloc(len + 1);

    if (!text) {
        abort();
    }
    memcpy(text, data, len);
    text[len] = '\0';
    apr_pool_cleanup_register(pool, text, fuzz_free, apr_pool_cleanup_null);
    return text;
}

/* The input as a C string (it ends at its first NUL, as a query string or a
 * token from httpd would). */
static inline char *fuzz_cstring(apr_pool_t *pool, const uint8_t *data, size_t size)
{
    return fuzz_strndup(pool, data, size);
}

/* Stops the fuzzer with a message: an invariant of the core broke. */
#define FUZZ_CHECK(cond, ...)                                                \
    do {                                                                     \
        if (!(cond)) {                                                       \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, \
                    #cond);                                                  \
            fprintf(stderr, __VA_ARGS__);                                    \
            fputc('\n', stderr);                                             \
            abort();                                                         \
        }                                                                    \
    } while (0)

/* Whether jansson refused JSON only for its own limits: nesting deeper
 * than 2048, or a member name holding \u0000. CouchDB documents may have
 * either, and a browser's parser reads both. */
static inline int fuzz_jansson_limit(const json_error_t *err)
{
    return json_error_code(err) == json_error_stack_overflow
        || json_error_code(err) == json_error_null_byte_in_key
        || strstr(err->text, "maximum parsing depth") != NULL;
}

/* jansson's own reading of text[0..len) (its parser: the module's,
 * cp_json_load, is simdjson's walk), any value, \u0000 in strings. Where
 * jansson cannot hold an integer beyond 64 bits it reads every integer as
 * a double (*as_real set; compare with fuzz_same_reading). NULL when
 * jansson refuses it; then *beyond says whether only for its own limits
 * (fuzz_jansson_limit), or a double's range of such an integer. */
static inline json_t *fuzz_jansson_load(const char *text, size_t len, int *as_real, int *beyond)
{
    json_error_t err;
    json_t *value = json_loadb(text, len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &err);

    *as_real = 0;
    *beyond = 0;
    if (!value && json_error_code(&err) == json_error_numeric_overflow) {
        *as_real = 1;
        value = json_loadb(text, len, JSON_DECODE_ANY | JSON_ALLOW_NUL | JSON_DECODE_INT_AS_REAL,
                           &err);
        *beyond = !value && json_error_code(&err) == json_error_numeric_overflow;
    }
    if (!value) {
        *beyond = *beyond || fuzz_jansson_limit(&err);
    }
    return value;
}

/* Whether ours (the module's reading) is theirs (fuzz_jansson_load's):
 * the same types and values, strings byte for byte, members in the same
 * order. With as_real, theirs holds every integer as a double: an integer
 * of ours, or a wide integer (its digits), must be that double. */
static inline int fuzz_same_reading(const json_t *ours, const json_t *theirs, int as_real)
{
    size_t i;

    if (!ours || !theirs) {
        return 0;
    }
    if (as_real && json_is_real(theirs)) {
        double value = json_real_value(theirs);

        return cp_json_is_number(ours) && cp_json_number_value(ours) == value
               && (!json_is_real(ours) || signbit(json_real_value(ours)) == signbit(value));
    }
    if (json_typeof(ours) != json_typeof(theirs)) {
        return 0;
    }
    switch (json_typeof(ours)) {
    case JSON_INTEGER:
        return json_integer_value(ours) == json_integer_value(theirs);
    case JSON_REAL:
        return memcmp(&(double){ json_real_value(ours) }, &(double){ json_real_value(theirs) },
                      sizeof(double)) == 0;
    case JSON_STRING:
        return json_string_length(ours) == json_string_length(theirs)
               && memcmp(json_string_value(ours), json_string_value(theirs),
                         json_string_length(ours)) == 0;
    case JSON_ARRAY:
        if (json_array_size(ours) != json_array_size(theirs)) {
            return 0;
        }
        for (i = 0; i < json_array_size(ours); i++) {
            if (!fuzz_same_reading(json_array_get(ours, i), json_array_get(theirs, i), as_real)) {
                return 0;
            }
        }
        return 1;
    case JSON_OBJECT: {
        void *a = json_object_iter((json_t *)ours), *b = json_object_iter((json_t *)theirs);

        if (json_object_size(ours) != json_object_size(theirs)) {
            return 0;
        }
        for (; a && b; a = json_object_iter_next((json_t *)ours, a),
                       b = json_object_iter_next((json_t *)theirs, b)) {
            if (json_object_iter_key_len(a) != json_object_iter_key_len(b)
                || memcmp(json_object_iter_key(a), json_object_iter_key(b),
                          json_object_iter_key_len(a))
                || !fuzz_same_reading(json_object_iter_value(a), json_object_iter_value(b),
                                      as_real)) {
                return 0;
            }
        }
        return 1;
    }
    default:
        return 1;
    }
}

/* Whether text is one JSON value, as a client's JSON parser would read it
 * (strings may hold \u0000; jansson's limits aside). */
static inline int fuzz_is_json(const char *text)
{
    json_error_t err;
    json_t *value;

    if (!text) {
        return 0;
    }
    value = json_loads(text, JSON_DECODE_ANY | JSON_ALLOW_NUL, &err);
    if (!value && json_error_code(&err) == json_error_numeric_overflow) {
        value = json_loads(text, JSON_DECODE_ANY | JSON_ALLOW_NUL | JSON_DECODE_INT_AS_REAL,
                           &err);
    }
    if (!value && fuzz_jansson_limit(&err)) {
        return 1;
    }
    if (!value) {
        fprintf(stderr, "not JSON (%s at %d:%d): %s\n", err.text, err.line, err.column, text);
        return 0;
    }
    json_decref(value);
    return 1;
}

#endif
