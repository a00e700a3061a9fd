/* SPDX-License-Identifier: Apache-2.0 */
/*
 * couchpage_bytes: sixteen bytes a step, for the loops that every byte of
 * a page passes through (the HTML-safe copy of a JSON body, the HTML
 * escaping of an item's text). GCC's and clang's vector extension: SSE2 on
 * x86-64, NEON on arm64, plain words elsewhere. And the text those loops
 * write into: pool memory that grows as it is written (cp_text).
 *
 * Part of the httpd-free core; used by its .c files only.
 */
#ifndef COUCHPAGE_BYTES_H
#define COUCHPAGE_BYTES_H

#include <apr.h>
#include <apr_pools.h>
#include <string.h>

typedef unsigned char cp_bytes16 __attribute__((vector_size(16)));

/* The 16 bytes at p (any alignment). */
static inline cp_bytes16 cp_bytes16_at(const char *p)
{
    cp_bytes16 v;

    memcpy(&v, p, 16);
    return v;
}

/* Whether any byte of a comparison's result is set. */
static inline int cp_bytes16_any(cp_bytes16 m)
{
    apr_uint64_t half[2];

    memcpy(half, &m, 16);
    return (half[0] | half[1]) != 0;
}

/* Text written into pool memory (a page's body, the JSON writer's): room
 * is made as it is written, the text moved to a buffer twice as large when
 * it lacks it, so that a page's bytes are copied a few times at most. */
typedef struct {
    apr_pool_t *pool;
    char *text;      /* the bytes so far; NULL before the first */
    apr_size_t len;  /* how many */
    apr_size_t size; /* what text has room for */
} cp_text;

/* Where n more bytes go, with room for a NUL after them. */
static inline char *cp_text_room(cp_text *t, apr_size_t n)
{
    if (t->len + n + 1 > t->size) {
        apr_size_t size = 2 * t->size > t->len + n + 1 ? 2 * t->size : 2 * (t->len + n + 1);
        char *bigger = apr_palloc(t->pool, size);

        if (t->len) {
            memcpy(bigger, t->text, t->len);
        }
        t->text = bigger;
        t->size = size;
    }
    return t->text + t->len;
}

/* n bytes written. */
static inline void cp_text_add(cp_text *t, const char *bytes, apr_size_t n)
{
    memcpy(cp_text_room(t, n), bytes, n);
    t->len += n;
}

#endif
