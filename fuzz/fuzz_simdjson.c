/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target: the simdjson shim alone (couchpage_simdjson), and
 * cp_json_load, which builds jansson values from its walk, against
 * jansson's own parser on the same bytes. Arbitrary bytes, padded, walked
 * by cp_sj_walk with a visitor that builds a value from what it is told.
 *
 * - The walk tells a well-formed story: every value's depth is its
 *   container's plus one, every container closes once, at its own depth,
 *   every member has a name and no element one, every span lies in the
 *   body, a container's span from its '{' or '[' to its '}' or ']', a
 *   scalar's bytes read by jansson are its decoded value, a number's bytes
 *   read by cp_json_number are jansson's reading of them (a number the
 *   walk left to the visitor, cp_json_number refuses only where jansson
 *   does).
 * - What the walk takes, jansson takes, value for value (the value built
 *   from the walk is jansson's reading of the whole body); what it refuses
 *   as not JSON, jansson refuses. Exceptions: nesting deeper than jansson
 *   reads, a name with \u0000, NUL bytes, which jansson passes over.
 * - cp_json_load (any root) takes exactly what jansson's parser takes, with
 *   its depth (2048), and gives its value; it also takes a name with
 *   \u0000, which jansson holds but its parser refuses:
 *   where jansson cannot hold an integer beyond 64 bits, jansson reads the
 *   body with integers as doubles, and each wide integer's digits must be
 *   that double (fuzz_same_reading). Exceptions: NUL bytes; integers
 *   beyond a double's range, which jansson cannot read at all.
 * - The first pass alone takes all the walk takes.
 */
#include "fuzz.h"
#include "couchpage_json.h"
#include "couchpage_response.h"
#include "couchpage_simdjson.h"

#define MAX_DEPTH 4096

typedef struct {
    apr_pool_t *pool;
    const char *body;
    size_t len;
    json_t *stack[MAX_DEPTH + 1]; /* the containers open, and the root's holder */
    const char *name[MAX_DEPTH + 1];
    size_t name_len[MAX_DEPTH + 1];
    size_t open;
    json_t *root;
} building;

static int in_body(const building *b, const char *text, size_t len)
{
    return text >= b->body && text + len <= b->body + b->len;
}

/* A scalar as the module holds it: strings and words as told, numbers as
 * cp_json_number reads their bytes, which must be jansson's reading of
 * them. NULL: a number cp_json_number refuses (the walk must have
 * left it to the visitor, and jansson must refuse it). */
static json_t *scalar_of(building *b, const cp_sj_value *v)
{
    json_t *number, *read;
    int as_real, beyond;

    if (v->kind == CP_SJ_STRING) {
        return json_stringn_nocheck(v->string, v->string_len);
    }
    if (v->kind != CP_SJ_NUMBER_VALUE) {
        return v->kind == CP_SJ_TRUE ? json_true() : v->kind == CP_SJ_FALSE ? json_false()
                                                                            : json_null();
    }
    number = cp_json_number(v->text, v->len);
    read = fuzz_jansson_load(v->text, v->len, &as_real, &beyond);
    if (!number) {
        FUZZ_CHECK(v->number_refused && !read, "a number taken by the walk or jansson, "
                   "refused by cp_json_number: %.*s", (int)v->len, v->text);
        return NULL;
    }
    FUZZ_CHECK(read || (as_real && beyond), "a number jansson refuses, taken: %.*s",
               (int)v->len, v->text);
    FUZZ_CHECK(!read || fuzz_same_reading(number, read, as_real),
               "cp_json_number's reading of %.*s is not jansson's", (int)v->len, v->text);
    json_decref(read);
    return number;
}

/* Puts value into the innermost open container (or as the root). */
static void place(building *b, const cp_sj_value *v, json_t *value)
{
    json_t *container = b->open ? b->stack[b->open - 1] : NULL;

    if (!container) {
        FUZZ_CHECK(!b->root && !v->name, "a second root, or a root with a name");
        b->root = value;
        return;
    }
    if (json_is_object(container)) {
        FUZZ_CHECK(v->name && v->name_quote && *v->name_quote == '"'
                   && in_body(b, v->name_quote, 1), "a member without its name");
        json_object_setn_new_nocheck(container, v->name, v->name_len, value);
    }
    else {
        FUZZ_CHECK(!v->name, "an element with a name");
        json_array_append_new(container, value);
    }
}

static int visit(void *baton, const cp_sj_value *v)
{
    building *b = baton;
    json_t *value;

    if (v->kind == CP_SJ_CLOSE) {
        json_t *closed;

        FUZZ_CHECK(b->open > 0 && v->depth == b->open - 1, "a close at depth %zu, %zu open",
                   v->depth, b->open);
        closed = b->stack[--b->open];
        FUZZ_CHECK(in_body(b, v->text, v->len) && v->len >= 2
                   && v->text[0] == (json_is_object(closed) ? '{' : '[')
                   && v->text[v->len - 1] == (json_is_object(closed) ? '}' : ']'),
                   "a container's span");
        return 0;
    }
    FUZZ_CHECK(v->depth == b->open, "a value at depth %zu, %zu open", v->depth, b->open);
    if (v->kind == CP_SJ_OBJECT || v->kind == CP_SJ_ARRAY) {
        FUZZ_CHECK(b->open < MAX_DEPTH, "nested beyond the depth asked for");
        FUZZ_CHECK(in_body(b, v->text, 1) && *v->text == (v->kind == CP_SJ_OBJECT ? '{' : '['),
                   "a container's first byte");
        value = v->kind == CP_SJ_OBJECT ? json_object() : json_array();
        place(b, v, value);
        b->stack[b->open++] = value;
        return 0;
    }
    FUZZ_CHECK(in_body(b, v->text, v->len) && v->len > 0, "a scalar's span");
    if (!(value = scalar_of(b, v))) {
        /* a number neither simdjson nor jansson reads: the reader refuses it */
        return 1;
    }
    /* its bytes are its value */
    {
        json_t *read = json_loadb(v->text, v->len, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);

        FUZZ_CHECK(!read || json_equal(read, value), "a scalar's bytes are not its value");
        json_decref(read);
    }
    place(b, v, value);
    return 0;
}

/* Whether jansson's parser stops at a member's name holding \u0000. */
static int jansson_refuses_nul_name(const char *text, size_t size)
{
    json_error_t err;
    json_t *value = json_loadb(text, size, JSON_DECODE_ANY | JSON_ALLOW_NUL, &err);

    json_decref(value);
    return !value && json_error_code(&err) == json_error_null_byte_in_key;
}

/* cp_json_load, the module's reading of JSON text, takes what jansson's
 * parser takes (theirs, as fuzz_jansson_load read it) and gives its value. */
static void check_load(apr_pool_t *pool, const char *text, size_t size, const json_t *theirs,
                       int as_real, int beyond)
{
    const char *error = NULL;
    const json_t *ours = cp_json_load(pool, text, size, &error);

    if (ours) {
        FUZZ_CHECK(theirs || (as_real && beyond) || jansson_refuses_nul_name(text, size),
                   "cp_json_load takes what jansson refuses");
        FUZZ_CHECK(!theirs || fuzz_same_reading(ours, theirs, as_real),
                   "cp_json_load's value is not jansson's");
    }
    else {
        FUZZ_CHECK(error && *error, "cp_json_load refuses without a reason");
        FUZZ_CHECK(!theirs || memchr(text, 0, size), "cp_json_load refuses (%s) what jansson "
                   "reads", error);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    apr_pool_t *pool = fuzz_pool();
    const char *text = cp_response_padded(pool, (const char *)data, size);
    building *b = calloc(1, sizeof(*b));
    json_t *whole;
    cp_sj_status status;
    int as_real, beyond;

    if (!b) {
        abort();
    }
    b->pool = pool;
    b->body = text;
    b->len = size;
    status = cp_sj_walk(text, size, MAX_DEPTH, visit, b);
    whole = fuzz_jansson_load(text, size, &as_real, &beyond);
    if (status == CP_SJ_OK) {
        FUZZ_CHECK(b->open == 0 && b->root, "a walk that took the body left values open");
        FUZZ_CHECK(cp_sj_first_pass(text, size) == CP_SJ_OK, "the first pass refuses it");
        FUZZ_CHECK(whole || beyond, "taken, but jansson refuses it");
        FUZZ_CHECK(!whole || fuzz_same_reading(b->root, whole, as_real),
                   "the walk's value is not jansson's");
    }
    else if (status != CP_SJ_STOPPED && status != CP_SJ_SCALAR_ROOT && status != CP_SJ_DEPTH) {
        FUZZ_CHECK(*cp_sj_fault(status), "a fault without a reason");
        FUZZ_CHECK(!whole || memchr(text, 0, size), "refused (%s), but jansson reads it",
                   cp_sj_fault(status));
    }
    else if (status == CP_SJ_SCALAR_ROOT) {
        FUZZ_CHECK(!whole || !(json_is_object(whole) || json_is_array(whole)),
                   "a container refused as a scalar");
    }
    check_load(pool, text, size, whole, as_real, beyond);
    json_decref(whole);
    json_decref(b->root);
    free(b);
    apr_pool_destroy(pool);
    return 0;
}
