/* SPDX-License-Identifier: Apache-2.0 */
/*
 * couchpage_records: how the answer reader records a value of an answer
 * (cp_node): written by the reader (couchpage_response.c) as simdjson's
 * walk goes, read by a row's value lookups (couchpage_row.c). Private to
 * those two: the rest of the core sees cp_node as opaque
 * (couchpage_response.h).
 *
 * Part of the httpd-free core: nothing here knows about request_rec.
 */
#ifndef COUCHPAGE_RECORDS_H
#define COUCHPAGE_RECORDS_H

#include <apr.h>

/* A recorded value: its bytes, its member name, its scalar decoded. */
struct cp_node {
    const char *text;       /* the value's bytes as sent */
    apr_size_t len;
    const char *name;       /* a member's name, decoded (pool); NULL: an element */
    apr_size_t name_len;
    const char *from;       /* the member name's opening quote */
    const char *string;     /* a string, decoded (the body's bytes, or pool) */
    apr_size_t string_len;
    apr_size_t after;       /* the index past this value's records */
    unsigned char kind;     /* a cp_sj_kind */
    unsigned char whole;    /* every value inside is recorded */
    unsigned char unread;   /* a container whose values are not recorded:
                               a lookup walks its bytes
                               (couchpage_row.c) */
};

#endif
