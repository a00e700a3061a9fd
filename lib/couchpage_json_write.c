/* SPDX-License-Identifier: Apache-2.0 */
/*
 * couchpage_json_write: cp_json_text's own writer (see couchpage_json.h).
 * It writes a jansson value's compact text into a buffer of the pool,
 * byte for byte as json_dumps (JSON_COMPACT | JSON_ENCODE_ANY) writes it,
 * without what json_dumps pays for every object and array (their address
 * formatted into a hash table to catch loops, a buffer grown by realloc,
 * then copied to the pool): members in the order jansson iterates and
 * writes them, strings escaped as jansson escapes them, integers in
 * decimal. What it does not write itself is jansson's: a real (jansson's
 * double formatting) and a string or a member's name with a byte beyond
 * ASCII (jansson checks its UTF-8); a wide integer (cp_json_is_wide) is its
 * text. httpd-free.
 */
#include "couchpage_json.h"

#include <stdlib.h>
#include <string.h>

/* Deeper values are left to jansson whole. */
#define MAX_DEPTH 256
#define COMPACT (JSON_COMPACT | JSON_ENCODE_ANY)

typedef struct {
    apr_pool_t *pool;
    char *text;
    apr_size_t len, size;
} writing;

/* Room for n bytes more and the NUL: the buffer moved to one twice as
 * large when it lacks it. */
static char *room(writing *w, apr_size_t n)
{
    if (w->len + n + 1 > w->size) {
        apr_size_t size = 2 * (w->len + n + 1);
        char *bigger = apr_palloc(w->pool, size);

        if (w->len) {
            memcpy(bigger, w->text, w->len);
        }
        w->text = bigger;
        w->size = size;
    }
    return w->text + w->len;
}

static void add(writing *w, const char *text, apr_size_t n)
{
    memcpy(room(w, n), text, n);
    w->len += n;
}

/* jansson's text of value (a real, a string beyond ASCII): 0 where
 * jansson writes none. */
static int add_jansson(writing *w, const json_t *value)
{
    char *text = json_dumps(value, COMPACT);

    if (!text) {
        return 0;
    }
    add(w, text, strlen(text));
    free(text);
    return 1;
}

apr_size_t cp_json_quote_into(char *o, const char *s, apr_size_t n, int ascii_only)
{
    static const char hex[] = "0123456789ABCDEF";
    char *start = o;
    apr_size_t i;

    *o++ = '"';
    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];

        if (c >= 0x80 && ascii_only) {
            return 0;
        }
        if (c >= 0x20 && c != '"' && c != '\\') {
            *o++ = (char)c;
            continue;
        }
        *o++ = '\\';
        switch (c) {
        case '"': *o++ = '"'; break;
        case '\\': *o++ = '\\'; break;
        case '\b': *o++ = 'b'; break;
        case '\f': *o++ = 'f'; break;
        case '\n': *o++ = 'n'; break;
        case '\r': *o++ = 'r'; break;
        case '\t': *o++ = 't'; break;
        default:
            *o++ = 'u';
            *o++ = '0';
            *o++ = '0';
            *o++ = hex[c >> 4];
            *o++ = hex[c & 15];
        }
    }
    *o++ = '"';
    return (apr_size_t)(o - start);
}

/* A string of ASCII as jansson quotes it; 0 at a byte beyond ASCII
 * (unwritten). */
static int add_ascii(writing *w, const char *s, apr_size_t n)
{
    apr_size_t len = cp_json_quote_into(room(w, 6 * n + 2), s, n, 1);

    w->len += len;
    return len > 0;
}

/* A string or a member's name: jansson's where it is beyond ASCII. */
static int add_string(writing *w, const char *s, apr_size_t n)
{
    json_t *string;
    int ok;

    if (add_ascii(w, s, n)) {
        return 1;
    }
    string = json_stringn_nocheck(s, n);
    ok = string && add_jansson(w, string);
    json_decref(string);
    return ok;
}

static void add_integer(writing *w, json_int_t value)
{
    char digits[24];
    apr_size_t n = sizeof(digits);
    unsigned long long v = value < 0 ? 0ULL - (unsigned long long)value
                                     : (unsigned long long)value;

    do {
        digits[--n] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    if (value < 0) {
        digits[--n] = '-';
    }
    add(w, digits + n, sizeof(digits) - n);
}

static int add_value(writing *w, const json_t *value, int depth)
{
    size_t i, n;
    void *it;

    if (depth > MAX_DEPTH) {
        return 0;
    }
    switch (json_typeof(value)) {
    case JSON_OBJECT:
        add(w, "{", 1);
        for (it = json_object_iter((json_t *)value), i = 0; it;
             it = json_object_iter_next((json_t *)value, it), i++) {
            if (i > 0) {
                add(w, ",", 1);
            }
            if (!add_string(w, json_object_iter_key(it), json_object_iter_key_len(it))) {
                return 0;
            }
            add(w, ":", 1);
            if (!add_value(w, json_object_iter_value(it), depth + 1)) {
                return 0;
            }
        }
        add(w, "}", 1);
        return 1;
    case JSON_ARRAY:
        add(w, "[", 1);
        for (i = 0, n = json_array_size(value); i < n; i++) {
            if (i > 0) {
                add(w, ",", 1);
            }
            if (!add_value(w, json_array_get(value, i), depth + 1)) {
                return 0;
            }
        }
        add(w, "]", 1);
        return 1;
    case JSON_STRING:
        if (cp_json_is_wide(value)) {
            add(w, json_string_value(value) + 1, json_string_length(value) - 1);
            return 1;
        }
        return add_ascii(w, json_string_value(value), json_string_length(value))
               || add_jansson(w, value);
    case JSON_INTEGER:
        add_integer(w, json_integer_value(value));
        return 1;
    case JSON_REAL:
        return add_jansson(w, value);
    case JSON_TRUE:
        add(w, "true", 4);
        return 1;
    case JSON_FALSE:
        add(w, "false", 5);
        return 1;
    case JSON_NULL:
        add(w, "null", 4);
        return 1;
    }
    return 0;
}

const char *cp_json_write(apr_pool_t *pool, const json_t *value)
{
    writing w = { pool, NULL, 0, 0 };

    if (!value) {
        return NULL;
    }
    room(&w, 256);
    if (!add_value(&w, value, 0)) {
        return NULL;
    }
    w.text[w.len] = '\0';
    return w.text;
}
