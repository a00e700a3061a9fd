/* SPDX-License-Identifier: Apache-2.0 */
/*
 * couchpage_response.c: CouchDB's answers read once (see
 * couchpage_response.h): simdjson's walk (couchpage_simdjson) checks every
 * value, and a visitor here records the answers, rows, ids, keys, values,
 * documents and the members fields reach (couchpage_records.h); the
 * multi-query splitter and the recovery of a cut body. A row's values are
 * read from those records by couchpage_row.c. Part of the httpd-free core:
 * no httpd header, no request_rec.
 */
#include "couchpage_response.h"
#include "couchpage_json.h"
#include "couchpage_records.h"
#include "couchpage_simdjson.h"

#include <apr_strings.h>
#include <stdlib.h>
#include <string.h>

/* Keys nest at most this deep: cp_json_load's limit (jansson's), and a
 * token carries its key. */
#define KEY_MAX_DEPTH 2048

/* How deep inside a row's id, value and doc values are recorded: their
 * members, which projection and the ETag read. A record costs some 70
 * bytes where a value may take 2, so deeper values (a field's path, a
 * _find location's nested sort field) are found by walking their
 * container's bytes when they are asked for (scan). */
#define RECORDED_LEVELS 1

/* The row member being read. */
enum role { ROLE_NONE, ROLE_ID, ROLE_KEY, ROLE_VALUE, ROLE_DOC, ROLE_OTHER };

/* A recorded container still open: its node and its depth in the body. */
typedef struct {
    apr_size_t node;
    apr_size_t depth;
} open_node;

/* One body being read: what the visitor has seen so far. */
typedef struct {
    apr_pool_t *pool;
    const char *body;
    apr_size_t body_len;
    int with_docid;
    int find;                  /* a _find body: its docs are the rows */
    /* a multi-query body: its answers are at depth 2 */
    int batch, cut_off, n, k, read, whole, named, in_results;
    const cp_answer **answers;
    apr_size_t answer_depth;
    cp_answer *answer;         /* being read; NULL: values passed over */
    int in_rows;               /* the answer's rows array is open */
    const char *pending;       /* a refusal given when the value at */
    apr_size_t pending_depth;  /* pending_depth has been checked to its end */
    cp_row *row;               /* being read */
    int row_n, id_is_string;
    enum role role;            /* the row member being read, at role_depth */
    apr_size_t role_depth;
    apr_array_header_t *open;  /* of open_node */
    cp_sj_status fault;        /* what the visitor found not JSON */
    const char *reason;        /* the shape refused */
} reader;

/* --- growing arrays -------------------------------------------------- */

/* An answer's rows and records are arrays of malloc's, grown by realloc,
 * which moves a large one by remapping its pages: a pool's array would
 * leave every smaller copy behind. Freed with the answer's pool. */
static apr_status_t release_answer(void *data)
{
    cp_answer *answer = data;

    free(answer->rows);
    free(answer->nodes);
    answer->rows = NULL;
    answer->nodes = NULL;
    answer->row_count = answer->row_capacity = 0;
    answer->node_count = answer->node_capacity = 0;
    return APR_SUCCESS;
}

/* Room for twice the items (16 at first) of size bytes: 0 when memory runs out. */
static int grow(void **items, apr_size_t *capacity, apr_size_t size)
{
    apr_size_t more = *items ? *capacity * 2 : 16;
    void *grown = realloc(*items, more * size);

    if (!grown) {
        return 0;
    }
    *items = grown;
    *capacity = more;
    return 1;
}

static int refuse(reader *rd, const char *reason)
{
    rd->reason = reason;
    return 1;
}

/* --- records --------------------------------------------------------- */

static int same_name(const char *name, apr_size_t len, const char *wanted)
{
    return name && len == strlen(wanted) && !memcmp(name, wanted, len);
}

/* A decoded string (a value's, a name's) that lasts as long as the body:
 * its bytes in the body when they are the same (no escape in it: an escape
 * is longer than what it stands for), else a copy. quote is its opening
 * quote in the body. */
static const char *as_sent(reader *rd, const char *quote, const char *decoded, apr_size_t len)
{
    if (quote[len + 1] == '"' && !memchr(quote + 1, '\\', len)) {
        return quote + 1;
    }
    return apr_pstrmemdup(rd->pool, decoded, len);
}

/* Records v (a scalar, or a container opening) in the answer. */
static int record(reader *rd, const cp_sj_value *v)
{
    cp_answer *answer = rd->answer;
    cp_node *node;

    if (answer->node_count == answer->node_capacity
        && !grow((void **)&answer->nodes, &answer->node_capacity, sizeof(cp_node))) {
        return refuse(rd, "out of memory for the view response's values");
    }
    node = &answer->nodes[answer->node_count++];
    memset(node, 0, sizeof(*node));
    node->text = v->text;
    node->len = v->len;
    if (v->name) {
        node->name = as_sent(rd, v->name_quote, v->name, v->name_len);
        node->name_len = v->name_len;
        node->from = v->name_quote;
    }
    node->kind = (unsigned char)v->kind;
    node->whole = 1;
    node->after = answer->node_count;
    if (v->kind == CP_SJ_STRING) {
        node->string = as_sent(rd, v->text, v->string, v->string_len);
        node->string_len = v->string_len;
    }
    else if (v->kind == CP_SJ_OBJECT || v->kind == CP_SJ_ARRAY) {
        open_node *opened = apr_array_push(rd->open);

        opened->node = answer->node_count - 1;
        opened->depth = v->depth;
    }
    return 0;
}

/* A recorded container closes at depth: its bytes and its extent. */
static void record_close(reader *rd, const cp_sj_value *v)
{
    open_node *top;
    cp_node *node;

    if (!rd->open->nelts) {
        return;
    }
    top = &APR_ARRAY_IDX(rd->open, rd->open->nelts - 1, open_node);
    if (top->depth != v->depth) {
        return;
    }
    node = &rd->answer->nodes[top->node];
    node->len = v->len;
    node->after = rd->answer->node_count;
    rd->open->nelts--;
    if (!node->whole && rd->open->nelts) {
        top = &APR_ARRAY_IDX(rd->open, rd->open->nelts - 1, open_node);
        rd->answer->nodes[top->node].whole = 0;
    }
}

/* A value inside the row member being read: recorded within
 * RECORDED_LEVELS (a key wholly), else it leaves its container not whole. */
static int row_inner_value(reader *rd, const cp_sj_value *v)
{
    apr_size_t level = v->depth - rd->role_depth;

    if (rd->role == ROLE_NONE || rd->role == ROLE_OTHER) {
        return 0;
    }
    if (rd->role == ROLE_KEY) {
        /* checked, and decoded (cp_json_load) when the page asks (cp_row_key):
         * rows read to be counted, thousands of them, keep nothing more. A
         * value KEY_MAX_DEPTH deep, a scalar too, is beyond what it decodes
         * (2048 arrays around a number): such a key could make no token */
        if (level >= KEY_MAX_DEPTH) {
            return refuse(rd, apr_psprintf(rd->pool, "row %d of the view response has a key "
                                           "the module cannot read (nested deeper than %d)",
                                           rd->row_n, KEY_MAX_DEPTH));
        }
        return 0;
    }
    if (level <= RECORDED_LEVELS) {
        return record(rd, v);
    }
    if (level == RECORDED_LEVELS + 1) {
        open_node *top = &APR_ARRAY_IDX(rd->open, rd->open->nelts - 1, open_node);

        rd->answer->nodes[top->node].whole = 0;
        rd->answer->nodes[top->node].unread = 1;
    }
    return 0;
}

/* --- rows ------------------------------------------------------------ */

/* Where the row keeps the bytes of a member it reads, or NULL. */
static cp_span *span_of_role(cp_row *row, enum role role)
{
    return role == ROLE_ID ? &row->id_text : role == ROLE_KEY ? &row->key_text
         : role == ROLE_VALUE ? &row->value : role == ROLE_DOC ? &row->doc : NULL;
}

/* A row member opens (or is a scalar): which it is, and for the id, the id. */
static int row_member(reader *rd, const cp_sj_value *v)
{
    cp_row *row = rd->row;
    cp_span *span;

    rd->role_depth = v->depth;
    rd->role = same_name(v->name, v->name_len, "id") ? ROLE_ID
             : same_name(v->name, v->name_len, "key") ? ROLE_KEY
             : same_name(v->name, v->name_len, "value") ? ROLE_VALUE
             : same_name(v->name, v->name_len, "doc") ? ROLE_DOC : ROLE_OTHER;
    if (!(span = span_of_role(row, rd->role))) {
        return 0;
    }
    span->text = v->text;
    span->len = v->len;
    if (rd->role == ROLE_ID) {
        rd->id_is_string = v->kind == CP_SJ_STRING;
        row->id = !rd->id_is_string || memchr(v->string, 0, v->string_len)
                ? NULL : apr_pstrmemdup(rd->pool, v->string, v->string_len);
    }
    if (rd->role == ROLE_KEY) {
        /* decoded (cp_json_load) when the page asks (cp_row_key) */
        return 0;
    }
    if (v->kind != CP_SJ_OBJECT && v->kind != CP_SJ_ARRAY) {
        /* a scalar is read whole, and decoded from its bytes (cp_row_decode):
         * only a string with escapes is recorded, for its decoded text. Rows
         * read to be counted (200,001 of them for a page of links) keep no
         * records. */
        rd->role = ROLE_NONE;
        return v->kind == CP_SJ_STRING && v->string_len + 2 != v->len ? record(rd, v) : 0;
    }
    return record(rd, v);
}

/* A row member that is a container closes: its bytes. */
static void row_member_closes(reader *rd, const cp_sj_value *v)
{
    cp_span *span = span_of_role(rd->row, rd->role);

    if (span) {
        span->text = v->text;
        span->len = v->len;
    }
    rd->role = ROLE_NONE;
}

/* A row opens: an object, else refused once it has been read. */
static int row_opens(reader *rd, const cp_sj_value *v)
{
    cp_answer *answer = rd->answer;

    if (v->kind != CP_SJ_OBJECT) {
        const char *no_key = rd->find
            ? apr_psprintf(rd->pool, "document %d of the _find response is not an object",
                           rd->row_n)
            : apr_psprintf(rd->pool, "row %d of the view response has no key", rd->row_n);

        if (v->kind == CP_SJ_ARRAY) {
            rd->pending = no_key;
            rd->pending_depth = v->depth;
            return 0;
        }
        return refuse(rd, no_key);
    }
    if (answer->row_count == answer->row_capacity
        && !grow((void **)&answer->rows, &answer->row_capacity, sizeof(cp_row))) {
        return refuse(rd, "out of memory for the view response's rows");
    }
    rd->row = &answer->rows[answer->row_count++];
    memset(rd->row, 0, sizeof(*rd->row));
    rd->row->answer = answer;
    rd->row->first_node = answer->node_count;
    rd->id_is_string = 0;
    rd->role = ROLE_NONE;
    return 0;
}

/* A row closes: its bytes, and what a row must have. */
static int row_closes(reader *rd, const cp_sj_value *v)
{
    cp_row *row = rd->row;
    int n = rd->row_n++;

    rd->row = NULL;
    row->text.text = v->text;
    row->text.len = v->len;
    row->end_node = rd->answer->node_count;
    if (rd->find) {
        if (!row->id || !*row->id) {
            return refuse(rd, apr_psprintf(rd->pool, "document %d of the _find response has "
                                           "no _id (a non-empty string without NUL)", n));
        }
        return 0;
    }
    if (!row->key_text.len) {
        return refuse(rd, apr_psprintf(rd->pool, "row %d of the view response has no key", n));
    }
    if (rd->with_docid && (!rd->id_is_string || (row->id && !*row->id))) {
        return refuse(rd, apr_psprintf(rd->pool, "row %d of the view response has no "
                                       "document id", n));
    }
    if (rd->with_docid && !row->id) {
        return refuse(rd, apr_psprintf(rd->pool, "row %d of the view response has a "
                                       "document id with a NUL character", n));
    }
    return 0;
}

/* A document of a _find answer opens: a row whose doc it is, recorded
 * as a row's doc is: its members. */
static int doc_opens(reader *rd, const cp_sj_value *v)
{
    int stop = row_opens(rd, v);

    if (stop || v->kind != CP_SJ_OBJECT) {
        return stop;
    }
    rd->role = ROLE_DOC;
    rd->role_depth = v->depth;
    return record(rd, v);
}

/* A member of a _find document: recorded, and _id is the row's id. */
static int doc_member(reader *rd, const cp_sj_value *v)
{
    if (same_name(v->name, v->name_len, "_id")) {
        rd->row->id_text.text = v->text;
        rd->row->id_text.len = v->len;
        rd->row->id = v->kind != CP_SJ_STRING || memchr(v->string, 0, v->string_len)
                    ? NULL : apr_pstrmemdup(rd->pool, v->string, v->string_len);
    }
    return row_inner_value(rd, v);
}

/* --- answers --------------------------------------------------------- */

/* A count (total_rows, offset): a non-negative integer of at most 18
 * digits, else -1. */
static apr_int64_t count_of(const cp_sj_value *v)
{
    apr_int64_t value = 0;
    apr_size_t i;

    if (v->kind != CP_SJ_NUMBER_VALUE) {
        return -1;
    }
    i = v->text[0] == '-';
    if (v->len - i == 0 || v->len - i > 18) {
        return -1;
    }
    for (; i < v->len; i++) {
        if (v->text[i] < '0' || v->text[i] > '9') {
            return -1;
        }
        value = value * 10 + (v->text[i] - '0');
    }
    /* -0 is 0 */
    return v->text[0] == '-' && value != 0 ? -1 : value;
}

/* An answer opens: an object, else refused once it has been read. */
static int answer_opens(reader *rd, const cp_sj_value *v)
{
    const char *not_object = "the view response is not a JSON object";
    cp_answer *answer;

    if (v->kind != CP_SJ_OBJECT) {
        if (v->kind == CP_SJ_ARRAY) {
            rd->pending = not_object;
            rd->pending_depth = v->depth;
            return 0;
        }
        return refuse(rd, not_object);
    }
    answer = apr_pcalloc(rd->pool, sizeof(*answer));
    answer->body = rd->body;
    answer->body_len = rd->body_len;
    answer->pool = rd->pool;
    answer->total_rows = -1;
    answer->offset = -1;
    apr_pool_cleanup_register(rd->pool, answer, release_answer, apr_pool_cleanup_null);
    rd->answer = answer;
    rd->answer_depth = v->depth;
    rd->row_n = 0;
    return 0;
}

/* A member of the answer: the rows array (the last counts, as a JSON
 * parser keeps it), total_rows, offset, update_seq. */
static int answer_member(reader *rd, const cp_sj_value *v)
{
    cp_answer *answer = rd->answer;

    if (same_name(v->name, v->name_len, rd->find ? "docs" : "rows")) {
        if (v->kind != CP_SJ_ARRAY) {
            free(answer->rows);
            answer->rows = NULL;
            answer->row_count = answer->row_capacity = 0;
            return 0;
        }
        answer->row_count = 0;
        rd->row_n = 0;
        rd->in_rows = 1;
        if (!answer->rows && !grow((void **)&answer->rows, &answer->row_capacity,
                                   sizeof(cp_row))) {
            return refuse(rd, "out of memory for the view response's rows");
        }
    }
    else if (rd->find) {
        if (same_name(v->name, v->name_len, "warning") && v->kind == CP_SJ_STRING) {
            answer->warning = apr_pstrmemdup(rd->pool, v->string, v->string_len);
        }
    }
    else if (same_name(v->name, v->name_len, "total_rows")) {
        answer->total_rows = count_of(v);
    }
    else if (same_name(v->name, v->name_len, "offset")) {
        answer->offset = count_of(v);
    }
    else if (same_name(v->name, v->name_len, "update_seq")) {
        /* the sequence of the index the rows came from: CouchDB's a string
         * (packed in a cluster), pouchdb-server's a number */
        answer->update_seq = v->kind == CP_SJ_STRING
                             ? apr_pstrmemdup(rd->pool, v->string, v->string_len)
                             : v->kind == CP_SJ_NUMBER_VALUE
                             ? apr_pstrmemdup(rd->pool, v->text, v->len) : NULL;
    }
    return 0;
}

/* The answer closes: it must have had rows. */
static int answer_closes(reader *rd)
{
    cp_answer *answer = rd->answer;

    rd->answer = NULL;
    if (!answer->rows) {
        return refuse(rd, rd->find ? "the _find response has no docs array"
                                   : "the view response has no rows array");
    }
    answer->keys = apr_pcalloc(rd->pool, (answer->row_count + 1) * sizeof(*answer->keys));
    rd->answers[rd->k++] = answer;
    return 0;
}

/* --- the multi-query splitter ---------------------------------------- */

/* A value at the depth of a multi-query body's root (0) or its members
 * (1): the results array (the last counts; the first when the body was
 * cut, value_closes stops there). */
static int batch_value(reader *rd, const cp_sj_value *v)
{
    if (v->depth == 0) {
        return 0;
    }
    if (rd->cut_off && !rd->named && !same_name(v->name, v->name_len, "results")) {
        rd->fault = CP_SJ_MALFORMED;
        return 1;
    }
    rd->named = 1;
    if (v->name && v->kind == CP_SJ_ARRAY && same_name(v->name, v->name_len, "results")) {
        rd->k = 0;
        rd->read = 0;
        rd->in_results = 1;
    }
    return 0;
}

/* A result opens: before a cut, CouchDB's results are objects (anything
 * else ends what it sent); one past the n asked for is passed over. */
static int result_opens(reader *rd, const cp_sj_value *v)
{
    if (rd->cut_off && v->kind != CP_SJ_OBJECT) {
        rd->fault = CP_SJ_MALFORMED;
        return 1;
    }
    if (rd->read++ >= rd->n) {
        return 0;
    }
    return answer_opens(rd, v);
}

/* --- the visitor ----------------------------------------------------- */

/* A scalar, or a container opening. */
static int value_opens(reader *rd, const cp_sj_value *v)
{
    apr_size_t depth = v->depth;

    if (rd->pending) {
        return 0;
    }
    if (rd->batch && depth < 2) {
        /* the root of a batch is an object, or its values pass over */
        return v->depth == 0 && v->kind != CP_SJ_OBJECT ? (rd->pending = "", 0)
                                                          : batch_value(rd, v);
    }
    if (rd->batch && depth == 2) {
        return rd->in_results ? result_opens(rd, v) : 0;
    }
    if (!rd->batch && depth == 0) {
        return answer_opens(rd, v);
    }
    if (!rd->answer) {
        return 0;
    }
    depth -= rd->answer_depth;
    if (depth == 1) {
        return answer_member(rd, v);
    }
    if (depth == 2) {
        if (!rd->in_rows) {
            return 0;
        }
        return rd->find ? doc_opens(rd, v) : row_opens(rd, v);
    }
    if (!rd->row) {
        return 0;
    }
    if (rd->find) {
        return depth == 3 ? doc_member(rd, v) : row_inner_value(rd, v);
    }
    return depth == 3 ? row_member(rd, v) : row_inner_value(rd, v);
}

/* A container closes. */
static int value_closes(reader *rd, const cp_sj_value *v)
{
    apr_size_t depth = v->depth;

    if (rd->pending) {
        if (depth != rd->pending_depth) {
            return 0;
        }
        if (*rd->pending) {
            return refuse(rd, rd->pending);
        }
        rd->pending = NULL;
        return 0;
    }
    if (rd->batch && depth == 1 && rd->in_results) {
        rd->in_results = 0;
        rd->whole = rd->read == rd->n;
        /* a cut body's first results array is CouchDB's: a later one is
         * not read, or a shorter cut would take another array's results */
        return rd->cut_off;
    }
    if (!rd->answer || depth < rd->answer_depth) {
        return 0;
    }
    depth -= rd->answer_depth;
    if (depth == 0) {
        return answer_closes(rd);
    }
    if (depth == 1) {
        rd->in_rows = 0;
        return 0;
    }
    if (!rd->row) {
        return 0;
    }
    if (depth == 2) {
        if (rd->find) {
            record_close(rd, v);
            rd->row->doc.text = v->text;
            rd->row->doc.len = v->len;
        }
        return row_closes(rd, v);
    }
    record_close(rd, v);
    if (rd->find) {
        return 0;
    }
    if (depth == 3) {
        row_member_closes(rd, v);
    }
    return 0;
}

static int visit(void *baton, const cp_sj_value *v)
{
    reader *rd = baton;

    /* simdjson refuses some numbers JSON allows (a zero with an exponent of
     * thirty digits) and misreads some long ones: cp_json_number, which
     * reads exactly JSON's numbers within a double's range, decides */
    if (v->kind == CP_SJ_NUMBER_VALUE && v->number_refused) {
        json_t *number = cp_json_number(v->text, v->len);

        if (!number) {
            rd->fault = CP_SJ_NUMBER;
            return 1;
        }
        json_decref(number);
    }
    return v->kind == CP_SJ_CLOSE ? value_closes(rd, v) : value_opens(rd, v);
}

/* Reads text[0..len) with the visitor: the walk's status, the visitor's
 * fault for CP_SJ_STOPPED when it found one. */
static cp_sj_status walk(reader *rd, apr_pool_t *pool, const char *text, apr_size_t len)
{
    cp_sj_status status;

    rd->pool = pool;
    rd->body = text;
    rd->body_len = len;
    rd->open = apr_array_make(pool, 16, sizeof(open_node));
    status = cp_sj_walk(text, len, CP_RESPONSE_MAX_DEPTH, visit, rd);
    return status == CP_SJ_STOPPED && rd->fault ? rd->fault : status;
}

/* A body that is not JSON, as the reason to give. */
static const char *not_json(apr_pool_t *pool, const char *what, cp_sj_status status)
{
    return apr_pstrcat(pool, "the ", what, " is not JSON: ",
                       status == CP_SJ_DEPTH
                       ? "values are nested deeper than "
                         APR_STRINGIFY(CP_RESPONSE_MAX_DEPTH) " levels"
                       : cp_sj_fault(status), NULL);
}

/* Reads one answer, a view's or (find) a _find's, named what in reasons. */
static const char *read_answer(apr_pool_t *pool, const char *text, apr_size_t len,
                               int with_docid, int find, const char *what,
                               const cp_answer **answer)
{
    reader rd;
    cp_sj_status status;

    memset(&rd, 0, sizeof(rd));
    rd.find = find;
    rd.with_docid = with_docid;
    rd.n = 1;
    rd.answers = answer;
    status = walk(&rd, pool, text, len);
    if (status == CP_SJ_STOPPED) {
        return rd.reason;
    }
    if (status == CP_SJ_SCALAR_ROOT) {
        return apr_pstrcat(pool, "the ", what, " is not a JSON object", NULL);
    }
    return status ? not_json(pool, what, status) : NULL;
}

const char *cp_response_read_view(apr_pool_t *pool, const char *text, apr_size_t len,
                                  int with_docid, const cp_answer **answer)
{
    return read_answer(pool, text, len, with_docid, 0, "view response", answer);
}

const char *cp_response_read_find(apr_pool_t *pool, const char *text, apr_size_t len,
                                  const cp_answer **answer)
{
    return read_answer(pool, text, len, 1, 1, "_find response", answer);
}

/* --- multi-query bodies, whole and cut ------------------------------- */

/* Reads the results of a multi-query body: up to n of them into answers,
 * counted in rd->k; rd->whole when the body has a results array of exactly
 * n. The body's first member must be "results" when cut off (as CouchDB
 * writes it); a whole body may have it anywhere. */
static cp_sj_status read_results(reader *rd, apr_pool_t *pool, const char *text,
                                 apr_size_t len, int cut_off, int n, int with_docid,
                                 const cp_answer **answers)
{
    memset(rd, 0, sizeof(*rd));
    rd->batch = 1;
    rd->cut_off = cut_off;
    rd->n = n;
    rd->with_docid = with_docid;
    rd->answers = answers;
    return walk(rd, pool, text, len);
}

/* Where the last '}' outside a string in text[0..len) ends, or 0. */
static apr_size_t after_last_brace(const char *text, apr_size_t len)
{
    apr_size_t i, end = 0;
    int in_string = 0;

    for (i = 0; i < len; i++) {
        if (in_string) {
            if (text[i] == '\\') {
                i++;
            }
            else if (text[i] == '"') {
                in_string = 0;
            }
        }
        else if (text[i] == '"') {
            in_string = 1;
        }
        else if (text[i] == '}') {
            end = i + 1;
        }
    }
    return end;
}

/* Whether no object of text[0..len) ends where simdjson's first pass
 * refuses what came before: the text up to the last object closed in it
 * reads, or none is closed. */
static int objects_read_to(const char *text, apr_size_t len)
{
    apr_size_t end = after_last_brace(text, len);

    return end == 0 || cp_sj_first_pass(text, end) == CP_SJ_OK;
}

/* The longest beginning of a cut text that ends an object (a result ends
 * with its '}'; simdjson 4 refuses an object document whose last token is
 * not one) and that simdjson's first pass reads, or 0. Such a beginning
 * closes every string it opens, so whether it reads changes once along
 * the text, where bytes that are not JSON begin (not UTF-8, a control
 * character in a string), and a binary search finds it: what is taken
 * from a text never grows when the text is cut shorter. */
static apr_size_t longest_reading_cut(const char *text, apr_size_t len)
{
    apr_size_t low = 0, high = len, mid;

    if (objects_read_to(text, len)) {
        return after_last_brace(text, len);
    }
    /* objects_read_to holds at low and fails past high */
    while (low < high) {
        mid = low + (high - low + 1) / 2;
        if (objects_read_to(text, mid)) {
            low = mid;
        }
        else {
            high = mid - 1;
        }
    }
    return after_last_brace(text, low);
}

/* A cut body: the results before the cut, whatever stops the reading
 * after them. simdjson's first pass reads all of a text or nothing, so the
 * reading is of the longest beginning of it that ends an object and that
 * the first pass reads (longest_reading_cut), a copy with zeros after it. */
static int read_cut_batch(apr_pool_t *pool, const char *text, apr_size_t len, int n,
                          int with_docid, const cp_answer **answers, const char **error)
{
    apr_size_t usable = longest_reading_cut(text, len);
    reader rd;

    if (usable == 0) {
        return 0;
    }
    if (usable < len) {
        text = cp_response_padded(pool, text, usable);
    }
    if (read_results(&rd, pool, text, usable, 1, n, with_docid, answers) == CP_SJ_STOPPED
        && rd.reason) {
        *error = apr_psprintf(pool, "result %d: %s", rd.k, rd.reason);
        return -1;
    }
    return rd.k;
}

static const char *no_results(apr_pool_t *pool, int n)
{
    return apr_psprintf(pool, "the multi-query response has no results array of %d results", n);
}

int cp_response_read_batch(apr_pool_t *pool, const char *text, apr_size_t len, int cut_off,
                           int n, int with_docid, const cp_answer **answers,
                           const char **error)
{
    cp_sj_status status;
    reader rd;

    if (cut_off) {
        return read_cut_batch(pool, text, len, n, with_docid, answers, error);
    }
    status = read_results(&rd, pool, text, len, 0, n, with_docid, answers);
    if (status == CP_SJ_STOPPED) {
        *error = apr_psprintf(pool, "result %d: %s", rd.k, rd.reason);
        return -1;
    }
    if (status) {
        *error = status == CP_SJ_SCALAR_ROOT ? no_results(pool, n)
                                             : not_json(pool, "multi-query response", status);
        return -1;
    }
    if (!rd.whole) {
        *error = no_results(pool, n);
        return -1;
    }
    return n;
}

char *cp_response_padded(apr_pool_t *pool, const char *text, apr_size_t len)
{
    char *copy = apr_palloc(pool, len + CP_RESPONSE_PADDING);

    memcpy(copy, text, len);
    memset(copy + len, 0, CP_RESPONSE_PADDING);
    return copy;
}

const char *cp_answer_overfull(apr_pool_t *pool, const cp_answer *answer, int limit)
{
    if (!answer || limit < 0 || cp_answer_rows(answer) <= (apr_size_t)limit) {
        return NULL;
    }
    return apr_psprintf(pool, "%" APR_SIZE_T_FMT " rows, more than its limit of %d",
                        cp_answer_rows(answer), limit);
}
