/* SPDX-License-Identifier: Apache-2.0 */
/*
 * couchpage_response: CouchDB's answers, read once into records and checked.
 *
 * A backend body is walked once by simdjson's On-Demand parser behind a
 * small C interface (couchpage_simdjson), which checks every value as JSON
 * on the way: UTF-8, control characters, escapes and surrogates, numbers
 * (their syntax, and a double's range), true/false/null, the separators
 * between values, the nesting depth. A body that is not JSON is refused
 * with the reason. While it is walked, this reader records what the page
 * and the renderer will ask for: each answer's total_rows and offset, its
 * rows, each row's id (decoded), the bytes of its key, id, value and doc,
 * and the members of an id, value or doc object or array: each value's bytes, its member name, a string's
 * decoded text. Projection and the ETag read those records; a field that
 * reaches deeper walks the bytes of the container it reaches into when it
 * is asked for (a record costs some 70 bytes, where a value in a large
 * array may take 2); a row's scalars decode from their bytes. A key, a
 * small value of which a page asks for a handful (tokens, links) among
 * thousands of rows read to be counted, keeps no records: cp_json_load
 * decodes it at its first use (cp_row_key). A row's value and doc stay spans of
 * the body, the bytes CouchDB sent, which the page copies as they are.
 * The records do not depend on the view response's shape beyond its rows
 * member, so other answers of documents (Mango's {"docs": [...]}) can fill
 * the same ones. couchpage_response.c reads the answers; couchpage_row.c
 * reads a row's values from the records (cp_row_*).
 *
 * Memory: the body, the rows (a few words each), the records (a few words
 * a member of a row's id, value and doc), and simdjson's working memory while a body is read
 * (about 5 bytes a byte of it; see couchpage_simdjson.h for how long it is
 * kept).
 *
 * Part of the httpd-free core: nothing here knows about request_rec.
 */
#ifndef COUCHPAGE_RESPONSE_H
#define COUCHPAGE_RESPONSE_H

#include <apr_pools.h>
#include <apr_tables.h>
#include "couchpage_json.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes past its end that the reader may load from a body (SIMD reads in
 * blocks): every body given to it is followed by this many zero bytes
 * (simdjson's SIMDJSON_PADDING; zeros, so that nothing there reads as the
 * start of a value when a body ends early). */
#define CP_RESPONSE_PADDING 64

/* Values nested deeper than this are refused. CouchDB stores documents
 * nested as deep as its size limit allows (a JavaScript view server fails
 * on them, _all_docs serves them), and browsers read a million levels;
 * the reader keeps 40 bytes a level while it reads. */
#define CP_RESPONSE_MAX_DEPTH 1000000

/* JSON text as the backend sent it; an empty span is no value. */
typedef struct {
    const char *text;
    apr_size_t len;
} cp_span;

typedef struct cp_answer cp_answer;

/* The members of an object value, in order, as read (opaque). */
typedef struct cp_members cp_members;

/* A value of an answer as the reader recorded it (couchpage_records.h). */
typedef struct cp_node cp_node;

/* One view row. */
typedef struct {
    const cp_answer *answer; /* the answer it is in */
    cp_span text;            /* the row object */
    const char *id;          /* the document id, decoded; NULL: the row has no
                                id string, or one with a NUL character */
    cp_span id_text;         /* the row's id member (any JSON value) */
    cp_span key_text;        /* read with cp_row_key */
    const json_t *key;       /* a row made by hand, or a _find document's sort
                                values (cp_find_read): its key */
    cp_span value;
    cp_span doc;             /* empty without include_docs */
    apr_size_t first_node;   /* the row's records: its answer's nodes */
    apr_size_t end_node;     /* [first_node, end_node) */
} cp_row;

/* One view response: {"total_rows": N, "offset": N, "rows": [...]}. */
struct cp_answer {
    const char *body;         /* the whole body its spans are in, and the */
    apr_size_t body_len;      /* padding after it */
    apr_pool_t *pool;
    apr_int64_t total_rows;   /* -1: none, or not a count */
    apr_int64_t offset;       /* -1: none, or not a count */
    cp_row *rows;             /* in the answer's order (cp_answer_row) */
    apr_size_t row_count;
    apr_size_t row_capacity;  /* rows there is room for */
    cp_node *nodes;           /* the values recorded, in the body's order */
    apr_size_t node_count;
    apr_size_t node_capacity;
    const json_t **keys;      /* each row's key once decoded (cp_row_key) */
    const char *warning;      /* a _find answer's warning, decoded; NULL: none */
    const char *update_seq;   /* a view answer's update_seq (asked with update_seq=true):
                                 a string's value, a number's text; NULL: none */
};

/* Reads one view response, text[0..len) followed by CP_RESPONSE_PADDING
 * zero bytes (cp_response_padded). Rows must be objects with a key, and with with_docid a
 * non-empty document id without NUL characters (a token carries it as
 * CouchDB's startkey_docid, a C string). NULL and the answer in *answer,
 * or the reason the body is refused. */
const char *cp_response_read_view(apr_pool_t *pool, const char *text, apr_size_t len,
                                  int with_docid, const cp_answer **answer);

/* Reads a Mango _find response, {"docs": [...], "warning": "..."} (its
 * bookmark and execution_stats are passed over), from text as
 * cp_response_read_view takes it: each document is a row whose doc it is,
 * recorded as a view row's doc, its _id the row's id (a non-empty string
 * without NUL, else the body is refused); rows have no key until
 * cp_find_read sets their sort values. NULL and the answer in *answer, or
 * the reason the body is refused. */
const char *cp_response_read_find(apr_pool_t *pool, const char *text, apr_size_t len,
                                  const cp_answer **answer);

/* Reads a multi-query response, {"results": [view response, ...]}, into
 * answers[0..n), from text as cp_response_read_view takes it. A whole body
 * must be exactly that, with n results: else -1 with the reason in *error.
 * A body that was cut off (cut_off) gives the results complete before the
 * cut, as CouchDB writes them (the member "results" first): CouchDB 3.4
 * ends its response so when it refuses a later query. Returns how many
 * results were read; a result that is not a view response is the reason
 * and -1, whole or cut. */
int cp_response_read_batch(apr_pool_t *pool, const char *text, apr_size_t len, int cut_off,
                           int n, int with_docid, const cp_answer **answers,
                           const char **error);

/* A copy of text[0..len) followed by CP_RESPONSE_PADDING zero bytes, as
 * the reader takes a body. */
char *cp_response_padded(apr_pool_t *pool, const char *text, apr_size_t len);

/* Rows in an answer. */
#define cp_answer_rows(answer) ((answer)->row_count)
#define cp_answer_row(answer, i) (&(answer)->rows[(i)])

/* Why an answer to a query that asked for at most limit rows is refused:
 * it holds more (a backend that ignored the limit), "N rows, more than its
 * limit of L"; NULL when it holds no more. The one check of every
 * location's answers, a view's, a _find's and its index's alike: such an
 * answer is refused, never used. */
const char *cp_answer_overfull(apr_pool_t *pool, const cp_answer *answer, int limit);

/* The row's key, decoded (owned by its answer's pool) at the first call;
 * NULL only when memory runs out. A row made by hand may set key itself. */
const json_t *cp_row_key(const cp_row *row);

/* A value in a row, one step a call, as a span (from the records, or
 * where a container's values are not recorded, by walking its bytes): the row member (id, key,
 * value or doc); the member name of the object at `at` (the last one of
 * that name, as a JSON parser keeps it); the element index of the array at
 * `at`, within the id, value or doc (a key is read as a whole, cp_row_key).
 * An empty span when there is none. */
cp_span cp_row_member(const cp_row *row, const char *name);
cp_span cp_row_find(const cp_row *row, cp_span at, const char *name);
cp_span cp_row_element(const cp_row *row, cp_span at, apr_size_t index);

/* The value of a span of the row's answer (a member, or a value the calls
 * above found), decoded from its records (pool-owned); a value with more
 * inside than is recorded is decoded from its bytes by cp_json_load. NULL
 * for an empty span, one not recorded, or one nested deeper than
 * cp_json_load reads (2048). */
const json_t *cp_row_decode(apr_pool_t *pool, const cp_row *row, cp_span at);

/* The text of a string of the row's answer (a span the calls above
 * found, or an id, value or doc member), decoded, as the reader recorded
 * it: no jansson value is made. Its length in *len (it may hold NUL, and
 * need not end in one). NULL for an empty span, a value that is no
 * string, or the key (read whole by cp_row_key). A string not recorded is
 * its bytes, or with escapes decoded from them (owned by the answer's
 * pool). */
const char *cp_row_string(const cp_row *row, cp_span at, apr_size_t *len);

/* The doc's members named in names (in that order; those the doc lacks are
 * left out) as the JSON object text CouchDB's bytes make:
 * {"name":value,...}, each name and value as sent. An empty span when the
 * row has no doc object. */
cp_span cp_row_project(apr_pool_t *pool, const cp_row *row,
                       const apr_array_header_t *names);

#ifdef __cplusplus
}
#endif

#endif
