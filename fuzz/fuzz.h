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
#include <string.h>

#include <apr_allocator.h>
#include <apr_general.h>
#include <apr_pools.h>
#include <jansson.h>

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
