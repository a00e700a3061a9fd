/* SPDX-License-Identifier: Apache-2.0 */
/*
 * couchpage_cache: a page's Cache-Control, from CouchPageMaxAge's words.
 *
 *     CouchPageMaxAge SECONDS [public|private] [s-maxage=S]
 *                     [stale-while-revalidate=S] [stale-if-error=S]
 *
 * the words after the seconds in any order, each at most once, names in
 * any case. The value is written in one order whatever the order of the
 * words: the scope, max-age, s-maxage, stale-while-revalidate,
 * stale-if-error ("public, max-age=60, stale-if-error=600"); without
 * words it is today's "max-age=N", "public, max-age=N" or
 * "private, max-age=N".
 *
 * Part of the httpd-free core: no httpd header, no request_rec.
 */
#ifndef COUCHPAGE_CACHE_H
#define COUCHPAGE_CACHE_H

#include <apr_pools.h>

/* The most seconds of any of the words: a year, RFC 9111's advice for
 * "never expires". */
#define CP_CACHE_MAX_SECONDS 31536000

/* Reads the directive's argc words (argv[0] the seconds). Returns NULL and
 * sets *value to the Cache-Control value, or returns why the words are
 * refused (a bad number, an unknown word, a word twice, public with
 * private, s-maxage with private), for the directive's name to lead. */
const char *cp_cache_control_parse(apr_pool_t *pool, int argc, const char *const *argv,
                                   const char **value);

#endif
