/* SPDX-License-Identifier: Apache-2.0 */
/*
 * couchpage_bytes: sixteen bytes a step, for the loops that every byte of
 * a page passes through (the HTML-safe copy of a JSON body, the HTML
 * escaping of an item's text). GCC's and clang's vector extension: SSE2 on
 * x86-64, NEON on arm64, plain words elsewhere.
 *
 * Part of the httpd-free core; used by its .c files only.
 */
#ifndef COUCHPAGE_BYTES_H
#define COUCHPAGE_BYTES_H

#include <apr.h>
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

#endif
