/* SPDX-License-Identifier: Apache-2.0 */
/*
 * couchpage_row.c: a row's values, read from the records the answer reader
 * made (couchpage_response.c, couchpage_records.h): a row's members, an
 * object's member and an array's element as spans of the body, walking the
 * bytes of a container whose values were not recorded; a value decoded, a
 * string's text, a row's key decoded at its first use, and the doc's
 * members projected as the bytes CouchDB sent. Declared in
 * couchpage_response.h. Part of the httpd-free core: no httpd header, no
 * request_rec.
 */
#include "couchpage_response.h"
#include "couchpage_json.h"
#include "couchpage_records.h"
#include "couchpage_simdjson.h"

#include <apr_strings.h>
#include <string.h>

/* The record of the row's value at (its bytes begin there), or NULL: the
 * records are in the body's order, so a search by where they begin. */
static const cp_node *node_at(const cp_row *row, cp_span at)
{
    const cp_node *nodes = row->answer->nodes;
    apr_size_t low = row->first_node, high = row->end_node;

    if (!at.len) {
        return NULL;
    }
    while (low < high) {
        apr_size_t mid = low + (high - low) / 2;

        if (nodes[mid].text == at.text) {
            return &nodes[mid];
        }
        if (nodes[mid].text < at.text) {
            low = mid + 1;
        }
        else {
            high = mid;
        }
    }
    return NULL;
}

static cp_span span_of(const cp_node *node)
{
    cp_span span = { node->text, node->len };

    return span;
}

cp_span cp_row_member(const cp_row *row, const char *name)
{
    static const cp_span none = { "", 0 };

    return !strcmp(name, "id") ? row->id_text : !strcmp(name, "key") ? row->key_text
         : !strcmp(name, "value") ? row->value : !strcmp(name, "doc") ? row->doc : none;
}

/* A value inside a container whose values are not recorded, found by
 * walking its bytes (in the body, read as JSON already): the last member
 * named name (as a JSON parser keeps it), else the element index. */
typedef struct {
    const char *name;    /* NULL: an element */
    apr_size_t name_len;
    apr_size_t index;
    apr_size_t seen;     /* elements so far */
    int open;            /* the value wanted is a container being walked */
    cp_span found;
} scan;

static int scan_visit(void *baton, const cp_sj_value *v)
{
    scan *s = baton;
    int wanted;

    if (v->depth != 1) {
        return 0;
    }
    if (v->kind == CP_SJ_CLOSE) {
        if (s->open) {
            s->open = 0;
            s->found.text = v->text;
            s->found.len = v->len;
            return !s->name;
        }
        return 0;
    }
    wanted = s->name ? v->name_len == s->name_len && !memcmp(v->name, s->name, s->name_len)
                     : s->seen++ == s->index;
    if (!wanted) {
        return 0;
    }
    if (v->kind == CP_SJ_OBJECT || v->kind == CP_SJ_ARRAY) {
        s->open = 1;
        return 0;
    }
    s->found.text = v->text;
    s->found.len = v->len;
    return !s->name;
}

static cp_span scan_for(cp_span at, const char *name, apr_size_t index)
{
    scan s;

    memset(&s, 0, sizeof(s));
    s.name = name;
    s.name_len = name ? strlen(name) : 0;
    s.index = index;
    s.found.text = "";
    cp_sj_walk_value(at.text, at.len, CP_RESPONSE_MAX_DEPTH, scan_visit, &s);
    return s.found;
}

/* Whether a lookup in at walks its bytes: a container of the row that has
 * no records of its values. */
static int unrecorded(const cp_node *node, cp_span at, char open)
{
    return at.len && at.text[0] == open && (!node || node->unread);
}

/* The last member of the object node named name (as a JSON parser keeps
 * it), or NULL. */
static const cp_node *member_named(const cp_node *nodes, const cp_node *object,
                                   const char *name)
{
    apr_size_t len = strlen(name), i = (apr_size_t)(object - nodes) + 1;
    const cp_node *found = NULL;

    if (object->kind != CP_SJ_OBJECT) {
        return NULL;
    }
    for (; i < object->after; i = nodes[i].after) {
        if (nodes[i].name_len == len && !memcmp(nodes[i].name, name, len)) {
            found = &nodes[i];
        }
    }
    return found;
}

cp_span cp_row_find(const cp_row *row, cp_span at, const char *name)
{
    const cp_node *object = node_at(row, at), *member;
    cp_span none = { "", 0 };

    if (unrecorded(object, at, '{')) {
        return scan_for(at, name, 0);
    }
    member = object ? member_named(row->answer->nodes, object, name) : NULL;
    return member ? span_of(member) : none;
}

cp_span cp_row_element(const cp_row *row, cp_span at, apr_size_t index)
{
    const cp_node *nodes = row->answer->nodes, *array = node_at(row, at);
    cp_span none = { "", 0 };
    apr_size_t i;

    if (unrecorded(array, at, '[')) {
        return scan_for(at, NULL, index);
    }
    if (!array || array->kind != CP_SJ_ARRAY) {
        return none;
    }
    for (i = (apr_size_t)(array - nodes) + 1; i < array->after; i = nodes[i].after) {
        if (index-- == 0) {
            return span_of(&nodes[i]);
        }
    }
    return none;
}

/* A scalar's value from its bytes; string its decoded text. */
static json_t *scalar_value(const char *text, apr_size_t len, const char *string,
                            apr_size_t string_len)
{
    switch (text[0]) {
    case '"':
        return json_stringn_nocheck(string, string_len);
    case 't':
        return json_true();
    case 'f':
        return json_false();
    case 'n':
        return json_null();
    default:
        return cp_json_number(text, len);
    }
}

/* A value's bytes (checked as JSON with the body they came in) decoded
 * without a reader where they are a scalar without escapes, whose bytes
 * are its text; NULL for any other (a container, an escaped string). */
static const json_t *scalar_of_bytes(apr_pool_t *pool, cp_span at)
{
    if (at.text[0] == '{' || at.text[0] == '['
        || (at.text[0] == '"' && memchr(at.text, '\\', at.len))) {
        return NULL;
    }
    return cp_json_pool_own(pool, scalar_value(at.text, at.len, at.text + 1, at.len - 2));
}

/* The value of a record whose values are all recorded, as jansson's. */
static json_t *value_of(const cp_node *nodes, apr_size_t i)
{
    const cp_node *node = &nodes[i];
    json_t *value, *inner;
    apr_size_t c;

    if (node->kind != CP_SJ_OBJECT && node->kind != CP_SJ_ARRAY) {
        return scalar_value(node->text, node->len, node->string, node->string_len);
    }
    value = node->kind == CP_SJ_OBJECT ? json_object() : json_array();
    for (c = i + 1; value && c < node->after; c = nodes[c].after) {
        if (!(inner = value_of(nodes, c))) {
            json_decref(value);
            return NULL;
        }
        /* the last of a name counts, in the place of the first, as
         * jansson's reader keeps it */
        if (node->kind == CP_SJ_OBJECT) {
            json_object_setn_new_nocheck(value, nodes[c].name, nodes[c].name_len, inner);
        }
        else {
            json_array_append_new(value, inner);
        }
    }
    return value;
}

const json_t *cp_row_decode(apr_pool_t *pool, const cp_row *row, cp_span at)
{
    const cp_node *node = node_at(row, at);
    const json_t *value;

    if (!at.len) {
        return NULL;
    }
    if (at.text == row->key_text.text) {
        return cp_row_key(row);
    }
    if (!node && (value = scalar_of_bytes(pool, at))) {
        /* a scalar without escapes, not recorded */
        return value;
    }
    if (!node || !node->whole) {
        /* more inside than the records reach: its bytes are walked again */
        return cp_json_load(pool, at.text, at.len, NULL);
    }
    return cp_json_pool_own(pool, value_of(row->answer->nodes,
                                           (apr_size_t)(node - row->answer->nodes)));
}

const char *cp_row_string(const cp_row *row, cp_span at, apr_size_t *len)
{
    const cp_node *node = node_at(row, at);

    if (!at.len || at.text[0] != '"' || at.text == row->key_text.text) {
        return NULL;
    }
    if (!node && memchr(at.text, '\\', at.len)) {
        /* a string not recorded, with escapes: decoded from its bytes */
        const json_t *string = cp_json_load(row->answer->pool, at.text, at.len, NULL);

        if (!string) {
            return NULL;
        }
        *len = json_string_length(string);
        return json_string_value(string);
    }
    if (!node) {
        /* a string not recorded, without escapes: its bytes are its text */
        *len = at.len - 2;
        return at.text + 1;
    }
    *len = node->string_len;
    return node->string_len ? node->string : "";
}

const json_t *cp_row_key(const cp_row *row)
{
    const json_t **key;

    if (row->key || !row->answer) {
        return row->key;
    }
    key = &row->answer->keys[row - row->answer->rows];
    if (!*key && row->key_text.len
        && !(*key = scalar_of_bytes(row->answer->pool, row->key_text))) {
        /* a key is decoded from its bytes (cp_json_load), checked as JSON with the
         * body: one row in thousands is asked for its key (a token, a link) */
        *key = cp_json_load(row->answer->pool, row->key_text.text, row->key_text.len, NULL);
    }
    return *key;
}

cp_span cp_row_project(apr_pool_t *pool, const cp_row *row, const apr_array_header_t *names)
{
    const cp_node *nodes = row->answer->nodes, *doc = node_at(row, row->doc);
    cp_span span = { "", 0 };
    apr_array_header_t *parts;
    apr_size_t size = 2;
    char *out, *o;
    int i;

    if (!doc || doc->kind != CP_SJ_OBJECT) {
        return span;
    }
    parts = apr_array_make(pool, names->nelts, sizeof(const cp_node *));
    for (i = 0; i < names->nelts; i++) {
        const cp_node *member = member_named(nodes, doc, APR_ARRAY_IDX(names, i, const char *));

        if (member) {
            /* the member's name as sent, its colon, its value */
            APR_ARRAY_PUSH(parts, const cp_node *) = member;
            size += (apr_size_t)(member->text + member->len - member->from) + 1;
        }
    }
    out = o = apr_palloc(pool, size);
    *o++ = '{';
    for (i = 0; i < parts->nelts; i++) {
        const cp_node *member = APR_ARRAY_IDX(parts, i, const cp_node *);
        apr_size_t bytes = (apr_size_t)(member->text + member->len - member->from);

        if (i > 0) {
            *o++ = ',';
        }
        memcpy(o, member->from, bytes);
        o += bytes;
    }
    *o++ = '}';
    span.text = out;
    span.len = (apr_size_t)(o - out);
    return span;
}
