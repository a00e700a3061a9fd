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
 * A key too long for a token a client can send back (CouchPageMaxTokenLength,
 * LimitRequestLine) makes a bounded token instead, a JSON object:
 *
 *     {"lo": LOW, "hi": HIGH, "h": DIGEST, "n": n}
 *
 * LOW and HIGH are short keys that CouchDB collates at or before and at or
 * after the row's key (a cut string, and that string followed by U+FFFF, the
 * highest character; an array or object cut likewise); DIGEST names the
 * row, its key and document id (cp_token_digest); "n" is left out at 0. The
 * module never collates: it asks CouchDB for the rows from LOW to HIGH and
 * finds the row among them by its digest (cp_plan_locate, cp_page_locate).
 *
 * The last page's token is the word "last" (CP_TOKEN_LAST), no JSON: where
 * that page starts depends on how many rows there are when it is asked for,
 * so it is found then, from the rows read back from the end (see
 * cp_plan_page), and no other page has to ask.
 *
 * A page read by keyset (couchpage_keyset: a _find location's) starts
 * beside its row rather than at it, and says which side:
 *
 *     {"a": [KEY, ID]}   the page after the row
 *     {"b": [KEY, ID]}   the page before it
 *
 * KEY the row's sort values (an array, one a sort field), ID its document
 * id. A counted walk's keyset token carries its count too (couchpage_count):
 *
 *     {"a": [KEY, ID], "t": TOTAL, "p": PLACE}     ("m": 1: at least TOTAL)
 *
 * and a token without them (an older link) reads as before. A keyset
 * token of a _find page whose ties go apart says "e": 1 where the rows
 * tied with its row that its page reaches first were all on the page that
 * handed it out (cp_keyset_near_ties). A counted
 * walk of grouped reduce rows hands out, for [key],
 *
 *     {"g": [KEY], "t": TOTAL, "p": PLACE}         ("m": 1: at least TOTAL)
 *
 * at the row as [key] is, PLACE the row's place, and a bounded token of
 * such a walk carries "t", "p" (and "m") beside "lo", "hi", "h"; [key]
 * still reads, its page numbered relative to itself. Every form is read by one decoder,
 * told what the location's rows look like (cp_token_rows).
 *
 * A walk's later tokens carry its start (couchpage_changed's mark, a
 * short string: "TAG" and a number, a shard range's, entries joined by
 * '.'): a view's token as its last member, one more than its form has
 *
 *     [key, docid, MARK]   [key, docid, n, MARK]   [key, MARK] (grouped)
 *
 * and an object as "w": MARK beside its other members. A token without it
 * (an older link, the first page's and the Last page's "last", which every
 * walk shares) reads as before. cp_token_mark adds it to a token's text.
 * The mark is what comparing needs, not the packed sequence, which takes
 * some 80 bytes a shard range: a 30-bit tag of the copy that answered a
 * range and its number, some 25 bytes a range, one entry for all past 4
 * ranges (couchpage_changed.h says why that is enough). Inside the JSON,
 * so a token stays the JSON text clients may read.
 *
 * Part of the httpd-free core: no httpd header, no request_rec.
 */
#ifndef COUCHPAGE_TOKEN_H
#define COUCHPAGE_TOKEN_H

#include <apr_pools.h>
#include "couchpage_json.h"

/* A walk's mark (couchpage_changed): entries of a TAG, CP_TOKEN_MARK_TAG
 * base64url characters, and a decimal number, joined by '.', at most
 * CP_TOKEN_MARK_RANGES of them. */
#define CP_TOKEN_MARK_RANGES 4
#define CP_TOKEN_MARK_TAG 5

typedef struct {
    char tag[CP_TOKEN_MARK_TAG + 1];
    apr_int64_t seq;
} cp_token_mark_entry;

/* The entries of the mark text[0..len) into e[CP_TOKEN_MARK_RANGES]: how
 * many; 0 when it is not a mark's form. */
int cp_token_mark_read(const char *text, apr_size_t len, cp_token_mark_entry *e);

/* The most rows one document may emit under one key at any location
 * (CouchPageMaxEmits's maximum): a token's row index is below it. Each
 * location has its own, smaller ceiling (cp_view.max_emits), which
 * cp_plan_check_start applies. */
#define CP_TOKEN_MAX_EMITS 1000

#define CP_TOKEN_LAST "last"

/* Where a page starts, relative to its token's row. */
typedef enum {
    CP_FROM_FIRST = 0, /* no token: the first page */
    CP_FROM_ROW,       /* at the row: a view's token, [key, docid], [key], bounded */
    CP_FROM_AFTER,     /* after the row: {"a": [KEY, ID]} */
    CP_FROM_BEFORE,    /* before the row, read backward: {"b": [KEY, ID]} */
    CP_FROM_LAST,      /* CP_TOKEN_LAST: the last page, wherever it starts */
} cp_token_from;

typedef struct {
    cp_token_from from;
    const json_t *key;    /* pool-owned; NULL for FIRST and LAST, and for a
                             bounded token until located */
    const char *key_json; /* compact JSON text of key, as key */
    const char *docid;    /* NULL for key-only tokens */
    int index;            /* the row within its (key, docid) entry; usually 0 */
    const char *digest;   /* a bounded token's row (cp_token_digest); NULL for a
                             token that holds its key, whose key is then set */
    const json_t *low;    /* a bounded token's keys at or before and at or after */
    const json_t *high;   /* the row's key: NULL unless digest */
    /* a keyset token's (or a grouped row's "g" token's) count of the walk
     * (couchpage_count), when it
     * carries one: "t" the location's rows when counted ("at least" them
     * with "m"), "p" the place of the token's row among them (from 0).
     * Their form is checked here, 0 <= p < t; whether they fit the
     * location's count is couchpage_count's to say. */
    int counted;
    apr_int64_t count_total;
    apr_int64_t count_place;
    int count_at_least;
    /* the walk's start the token carries (couchpage_changed): a view
     * token's last member, a string, beyond its form's ([key, docid,
     * MARK], [key, docid, n, MARK], [key, MARK]); an object's "w".
     * NULL: none (an older token). Its form is checked here. */
    const char *walk;
    /* a keyset token's "e": 1: the rows tied with its row that its page's
     * query reaches first (before it after the row, after it before the
     * row) were all among the rows read by the page that handed it out
     * (cp_keyset_near_ties) */
    int ties_near;
} cp_token;

/* The length of cp_token_digest's text: base64url of 128 bits. */
#define CP_TOKEN_DIGEST_LENGTH 22

/* What names a row in a bounded token: base64url (no padding) of the first
 * 128 bits of SHA-256 of the key's compact JSON text, and, for rows with
 * document ids, a NUL and the id. NULL when libcrypto fails. */
const char *cp_token_digest(apr_pool_t *pool, const json_t *key, const char *docid);

/* A bounded token for a row: LOW and HIGH keep about `keep` bytes of the
 * key's JSON each. raw_ids: the keys are document ids (_all_docs), which
 * CouchDB compares as bytes, so HIGH ends in U+10FFFF's bytes, the highest
 * UTF-8 has. NULL when libcrypto fails to make the digest. */
const char *cp_token_encode_bounded(apr_pool_t *pool, const json_t *key, const char *docid,
                                    int index, apr_size_t keep, int raw_ids);

/* The token text for a row. docid NULL makes a key-only token; index is the
 * row's place in its (key, docid) entry. */
const char *cp_token_encode(apr_pool_t *pool, const json_t *key, const char *docid,
                            int index);

/* What a token a client sends back must fit in: the module's cap on it as
 * sent (CouchPageMaxTokenLength), sealed when sealed (CP_SEAL_OVERHEAD
 * bytes more, in base64url), and its length percent-encoded in a link's
 * URL, which LimitRequestLine bounds. */
typedef struct {
    apr_size_t max_sent;
    apr_size_t max_escaped;
    int sealed;
    int raw_ids; /* keys are document ids (_all_docs), compared as bytes */
    apr_size_t extra;  /* bytes every token will carry more (couchpage_changed's
                          walk mark, cp_token_mark), as sent and as escaped in a URL */
    apr_size_t extra_escaped;
} cp_token_room;

/* Whether a token's text fits the room. */
int cp_token_fits(const cp_token_room *room, const char *text);

/* The token for a row: the key whole (cp_token_encode) when that fits the
 * room (room NULL: always), else a bounded token that keeps as much of the
 * key as fits, or, when none fits, the shortest bounded token (which the
 * glue then leaves out as too long). NULL when libcrypto fails. */
const char *cp_token_for_row(apr_pool_t *pool, const cp_token_room *room, const json_t *key,
                             const char *docid, int index);

/* The token text for a page after (CP_FROM_AFTER) or before
 * (CP_FROM_BEFORE) a row read by keyset: {"a": [KEY, ID]} or {"b": [KEY,
 * ID]}. NULL when the row has no key or id, or from is neither. */
const char *cp_token_encode_beside(apr_pool_t *pool, cp_token_from from, const json_t *key,
                                   const char *docid);

/* What a location's rows look like, which says which tokens it reads. */
typedef struct {
    int with_docid;  /* a view's rows have document ids: [key, docid] (else
                        [key], grouped rows) */
    int keyset;      /* a location paged by keyset: {"a"|"b": [KEY, ID]},
                        KEY of sort_length values, and not a view's token */
    int sort_length; /* with keyset: the sort fields before _id */
    int view_tokens; /* with keyset: a view's tokens too ([key, docid],
                        bounded, as with_docid), at the row: the links
                        a location handed out when a view paged it */
} cp_token_rows;

/* token's text (the module's own, compact JSON, or CP_TOKEN_LAST) with
 * its walk's mark: an array's last member, an object's "w"; "last", and
 * mark NULL, as they are. */
const char *cp_token_mark(apr_pool_t *pool, const char *token, const char *mark);

/* What cp_token_mark adds to a token for a mark of len bytes, at most: as
 * sent, and percent-encoded in a URL. */
#define CP_TOKEN_MARK_EXTRA(len) ((len) + 7)
#define CP_TOKEN_MARK_EXTRA_ESCAPED(len) ((len) + 19)

/* Reads a token a client sent, of any length: the caller caps what the
 * client may send (CouchPageMaxTokenLength). text NULL is the first page;
 * "last" the Last page. A bounded token sets digest, low and high, and no
 * key: it names its row once located. Returns NULL on success, else the
 * reason the token is refused, a sentence that names the start token. */
const char *cp_token_decode(apr_pool_t *pool, const char *text, const cp_token_rows *rows,
                            cp_token *token);

/* The rows of a view location: with document ids or not. */
#define CP_TOKEN_VIEW_ROWS(with_docid) (&(const cp_token_rows){ (with_docid), 0, 0, 0 })

#endif
