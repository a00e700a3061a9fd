/* SPDX-License-Identifier: Apache-2.0 */
/*
 * couchpage_response: CouchDB's answers, read once into spans and checked.
 *
 * A backend body is tokenized by jsmn (Debian's libjsmn-dev), which finds
 * where every value begins and ends without building it. Only what the
 * page needs is decoded: total_rows and offset, and each row's id and key
 * (tokens, entry checks, positions). A row's value and doc stay spans of
 * the body, the bytes CouchDB sent, which the page copies as they are, and
 * from which an item reads only the fields it names (cp_row_find).
 *
 * jsmn checks less than a JSON parser: not the commas and colons between
 * values, nor UTF-8, control characters, surrogate escapes or number
 * syntax. The reader checks all of these on every token, so that every
 * span it hands out is JSON that a client's parser takes; a body that is
 * not is refused with the reason.
 *
 * Part of the httpd-free core: nothing here knows about request_rec.
 */
#ifndef COUCHPAGE_RESPONSE_H
#define COUCHPAGE_RESPONSE_H

#include <apr_pools.h>
#include <apr_tables.h>
#include <jansson.h>

/* JSON text as the backend sent it. */
typedef struct {
    const char *text;
    apr_size_t len;
} cp_span;

typedef struct cp_answer cp_answer;

/* One view row. */
typedef struct {
    const cp_answer *answer; /* the answer it is in */
    cp_span text;            /* the row object */
    const char *id;          /* the document id, decoded; NULL: the row has none */
    const json_t *key;       /* decoded (pool-owned) */
    cp_span id_text;         /* the id's JSON string; empty without an id */
    cp_span key_text;
    cp_span value;           /* empty: the row has none */
    cp_span doc;             /* empty: the row has none (no include_docs) */
    int id_at, key_at, value_at, doc_at; /* the members' places (cp_row_member); -1: none */
} cp_row;

/* One view response: {"total_rows": N, "offset": N, "rows": [...]}. */
struct cp_answer {
    const char *text;         /* the body the spans are in */
    const void *tokens;       /* jsmn's, for cp_row_find */
    int token_count;
    apr_pool_t *pool;
    apr_int64_t total_rows;   /* -1: none, or not a count */
    apr_int64_t offset;       /* -1: none, or not a count */
    apr_array_header_t *rows; /* of cp_row, in the answer's order */
};

/* Reads one view response. Rows must be objects with a key, and with
 * with_docid a non-empty document id without NUL characters (a token
 * carries it as CouchDB's startkey_docid, a C string). NULL and the answer
 * in *answer, or the reason the body is refused. */
const char *cp_response_read_view(apr_pool_t *pool, const char *text, apr_size_t len,
                                  int with_docid, const cp_answer **answer);

/* Reads a multi-query response, {"results": [view response, ...]}, into
 * answers[0..n). A whole body must be exactly that, with n results: else -1
 * with the reason in *error. A body that was cut off (cut_off) gives the
 * results complete before the cut, as CouchDB writes them (the member
 * "results" first): CouchDB 3.4 ends its response so when it refuses a
 * later query. Returns how many results were read; a result that is not a
 * view response is the reason and -1, whole or cut. */
int cp_response_read_batch(apr_pool_t *pool, const char *text, apr_size_t len, int cut_off,
                           int n, int with_docid, const cp_answer **answers,
                           const char **error);

/* Rows in an answer. */
#define cp_answer_rows(answer) ((apr_size_t)(answer)->rows->nelts)
#define cp_answer_row(answer, i) (&APR_ARRAY_IDX((answer)->rows, (i), cp_row))

/* The row member (id, key, value or doc) or a value inside it, one step a
 * call: at is a place from cp_row_member, or from an earlier step. */
int cp_row_member(const cp_row *row, const char *name);
/* The member name of the object at place `at` (the last one of that name,
 * as a JSON parser keeps it), or -1. */
int cp_row_find(const cp_row *row, int at, const char *name);
/* The element index of the array at place `at`, or -1. */
int cp_row_element(const cp_row *row, int at, apr_size_t index);
/* The value at a place, decoded (pool-owned); NULL for -1. */
const json_t *cp_row_decode(apr_pool_t *pool, const cp_row *row, int at);
/* The bytes of the value at a place. */
cp_span cp_row_span(const cp_row *row, int at);

/* The doc's members named in names (in that order; those the doc lacks are
 * left out) as the JSON object text CouchDB's bytes make:
 * {"name":value,...}, each name and value as sent. An empty span when the
 * row has no doc object. */
cp_span cp_row_project(apr_pool_t *pool, const cp_row *row,
                       const apr_array_header_t *names);

#endif
