/* SPDX-License-Identifier: Apache-2.0 */
/*
 * couchpage_token: the page token a client passes back as ?start=.
 *
 * A token is the JSON text of [key, docid] for rows of a map view, or of
 * [key] for grouped reduce rows, which have no document id. The key keeps
 * the JSON CouchDB sent, member order included, so that sending it back as
 * startkey finds the same row.
 *
 * A document that emits one key several times makes one index entry with
 * several rows, which CouchDB always lists in the same order; startkey and
 * startkey_docid can only find the entry's first row. A page that starts at
 * a later row of its entry has the token [key, docid, n]: the n-th (from 0).
 *
 * The last page's token is the word "last" (CP_TOKEN_LAST), no JSON: where
 * that page starts depends on how many rows there are when it is asked for,
 * so it is found then, from the rows read back from the end (see
 * cp_plan_page), and no other page has to ask.
 *
 * Part of the httpd-free core: no httpd header, no request_rec.
 */
#ifndef COUCHPAGE_TOKEN_H
#define COUCHPAGE_TOKEN_H

#include <apr_pools.h>
#include "couchpage_json.h"

/* The most rows one document may emit under one key at any location
 * (CouchPageMaxEmits's maximum): a token's row index is below it. Each
 * location has its own, smaller ceiling (cp_view.max_emits), which
 * cp_plan_check_start applies. */
#define CP_TOKEN_MAX_EMITS 1000

#define CP_TOKEN_LAST "last"

typedef struct {
    const json_t *key;    /* pool-owned; NULL with at_end */
    const char *key_json; /* compact JSON text of key; NULL with at_end */
    const char *docid;    /* NULL for key-only tokens */
    int index;            /* the row within its (key, docid) entry; usually 0 */
    int at_end;           /* CP_TOKEN_LAST: the last page, wherever it starts */
} cp_token;

/* The token text for a row. docid NULL makes a key-only token; index is the
 * row's place in its (key, docid) entry. */
const char *cp_token_encode(apr_pool_t *pool, const json_t *key, const char *docid,
                            int index);

/* Reads a token a client sent, of any length: the caller caps what the
 * client may send (CouchPageMaxTokenLength). with_docid says which form this
 * location's rows use. Returns NULL on success, else the reason the token
 * is refused. */
const char *cp_token_decode(apr_pool_t *pool, const char *text, int with_docid,
                            cp_token *token);

#endif
