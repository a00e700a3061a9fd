/* SPDX-License-Identifier: Apache-2.0 */
/*
 * couchpage_json.c: jansson values owned by APR pools, built from JSON text
 * walked by the simdjson shim (cp_json_load: jansson holds and writes
 * values, it reads no text), written back as CouchDB sends them (integers
 * wider than 64 bits digit for digit), a number's bytes as a value, and the
 * comparisons the page needs. Part of the httpd-free core: no httpd
 * header, no request_rec.
 */
#include "couchpage_json.h"
#include "couchpage_bytes.h"
#include "couchpage_simdjson.h"

#include <apr_general.h>
#include <apr_strings.h>
#include <apr_tables.h>
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Why a value nested too deeply is refused: jansson's limit, which
 * cp_json_load keeps. */
#define DEPTH_FAULT "values are nested deeper than " APR_STRINGIFY(JSON_PARSER_MAX_DEPTH) " levels"

static apr_status_t release_json(void *data)
{
    json_decref((json_t *)data);
    return APR_SUCCESS;
}

json_t *cp_json_pool_own(apr_pool_t *pool, json_t *value)
{
    if (value) {
        apr_pool_cleanup_register(pool, value, release_json,
                                  apr_pool_cleanup_null);
    }
    return value;
}

/* A wide integer is held as a jansson string of the byte 0xFF (which no
 * UTF-8 text, and so no decoded JSON string, holds) and the integer's text
 * as CouchDB wrote it. */
#define WIDE_MARK '\xff'

int cp_json_is_wide(const json_t *value)
{
    return json_is_string(value) && json_string_length(value) > 1
        && json_string_value(value)[0] == WIDE_MARK;
}

int cp_json_is_string(const json_t *value)
{
    return json_is_string(value) && !cp_json_is_wide(value);
}

const char *cp_json_string_text(const json_t *value)
{
    return cp_json_is_string(value) ? json_string_value(value) : NULL;
}

int cp_json_is_number(const json_t *value)
{
    return json_is_number(value) || cp_json_is_wide(value);
}

double cp_json_number_value(const json_t *value)
{
    /* the digits are C-locale number text: strtod reads them as JSON does */
    return cp_json_is_wide(value) ? strtod(json_string_value(value) + 1, NULL)
                                  : json_number_value(value);
}

json_t *cp_json_wide(const char *text, apr_size_t len)
{
    char *bytes = malloc(len + 1);
    json_t *value;

    if (!bytes) {
        return NULL;
    }
    bytes[0] = WIDE_MARK;
    memcpy(bytes + 1, text, len);
    value = json_stringn_nocheck(bytes, len + 1);
    free(bytes);
    return value;
}

/* Where the digits from text[i] end, before len. */
static apr_size_t digits_end(const char *text, apr_size_t i, apr_size_t len)
{
    while (i < len && text[i] >= '0' && text[i] <= '9') {
        i++;
    }
    return i;
}

/* Whether text[0..len) is one JSON number, and *integer whether it has
 * neither fraction nor exponent: the grammar of RFC 8259, section 6. The
 * walk has checked every number simdjson reads; this checks those it leaves
 * to the visitor (CP_SJ_NUMBER_VALUE's number_refused), and keeps
 * cp_json_number safe on any bytes. */
static int is_number(const char *text, apr_size_t len, int *integer)
{
    apr_size_t i = len > 0 && text[0] == '-', j;

    if (i < len && text[i] == '0') {
        i++;
    }
    else if ((j = digits_end(text, i, len)) > i) {
        i = j;
    }
    else {
        return 0;
    }
    *integer = i == len;
    if (i < len && text[i] == '.') {
        if ((j = digits_end(text, i + 1, len)) == i + 1) {
            return 0;
        }
        i = j;
    }
    if (i < len && (text[i] == 'e' || text[i] == 'E')) {
        i += i + 1 < len && (text[i + 1] == '+' || text[i + 1] == '-') ? 2 : 1;
        if ((j = digits_end(text, i, len)) == i) {
            return 0;
        }
        i = j;
    }
    return i == len;
}

json_t *cp_json_number(const char *text, apr_size_t len)
{
    int integer;
    char *end;

    if (!is_number(text, len, &integer)) {
        return NULL;
    }
    errno = 0;
    if (integer) {
        long long value = strtoll(text, &end, 10);

        if (end != text + len) {
            return NULL;
        }
        return errno != ERANGE ? json_integer(value) : cp_json_wide(text, len);
    }
    else {
        /* the C locale's decimal point, whatever the process's locale
         * (glibc hands out its static C locale: nothing is allocated) */
        locale_t c = newlocale(LC_ALL_MASK, "C", (locale_t)0);
        double value;

        if (!c) {
            return NULL;
        }
        value = strtod_l(text, &end, c);
        freelocale(c);
        /* beyond a double's range is refused, as jansson's reader does;
         * below it reads as 0 or a subnormal */
        if (end != text + len || (errno == ERANGE && isinf(value))) {
            return NULL;
        }
        return json_real(value);
    }
}

/* A value being built from a walk: the containers open (json_t *, each
 * held by its container, the root by root), and why the value is refused
 * where the walk took it. */
typedef struct {
    apr_array_header_t *open;
    json_t *root;
    const char *fault;
} building;

/* Puts value (a new reference, NULL when it could not be made) in the
 * innermost open container, or as the root: 0 when it could not. */
static int place(building *b, const cp_sj_value *v, json_t *value)
{
    json_t *container;

    if (!value) {
        return 0;
    }
    if (b->open->nelts == 0) {
        b->root = value;
        return 1;
    }
    container = APR_ARRAY_IDX(b->open, b->open->nelts - 1, json_t *);
    /* the last member of a name counts, in the place of the first, as
     * jansson's reader kept it */
    return v->name ? json_object_setn_new_nocheck(container, v->name, v->name_len, value) == 0
                   : json_array_append_new(container, value) == 0;
}

/* A scalar's value as jansson holds it (a new reference), NULL when it is a
 * number that is no number or beyond a double's range. */
static json_t *scalar(const cp_sj_value *v)
{
    switch (v->kind) {
    case CP_SJ_STRING:
        return json_stringn_nocheck(v->string, v->string_len);
    case CP_SJ_NUMBER_VALUE:
        return cp_json_number(v->text, v->len);
    case CP_SJ_TRUE:
        return json_true();
    case CP_SJ_FALSE:
        return json_false();
    default:
        return json_null();
    }
}

/* The visitor of cp_json_load's walk: each value built and placed. */
static int build(void *baton, const cp_sj_value *v)
{
    building *b = baton;
    json_t *value;

    if (v->kind == CP_SJ_CLOSE) {
        apr_array_pop(b->open);
        return 0;
    }
    /* jansson's depth, kept: a value at most JSON_PARSER_MAX_DEPTH deep
     * (the root 1; the walk stops deeper containers). A name may hold NUL:
     * jansson's reader refuses it, but holds and writes it by length */
    if (v->depth >= JSON_PARSER_MAX_DEPTH) {
        b->fault = DEPTH_FAULT;
        return 1;
    }
    if (v->kind == CP_SJ_OBJECT || v->kind == CP_SJ_ARRAY) {
        value = v->kind == CP_SJ_OBJECT ? json_object() : json_array();
    }
    else if (!(value = scalar(v)) && v->kind == CP_SJ_NUMBER_VALUE) {
        b->fault = cp_sj_fault(CP_SJ_NUMBER);
        return 1;
    }
    if (!place(b, v, value)) {
        b->fault = cp_sj_fault(CP_SJ_MEMORY);
        return 1;
    }
    if (v->kind == CP_SJ_OBJECT || v->kind == CP_SJ_ARRAY) {
        /* held by its container (or as the root) */
        APR_ARRAY_PUSH(b->open, json_t *) = value;
    }
    return 0;
}

json_t *cp_json_load(apr_pool_t *pool, const char *text, apr_size_t len,
                     const char **error)
{
    building b = { apr_array_make(pool, 8, sizeof(json_t *)), NULL, NULL };
    char *padded = apr_palloc(pool, len + CP_SJ_PADDING);
    cp_sj_status status;

    /* the walk reads blocks past the end: a copy, padded */
    memcpy(padded, text, len);
    memset(padded + len, 0, CP_SJ_PADDING);
    status = cp_sj_walk_value(padded, len, JSON_PARSER_MAX_DEPTH, build, &b);
    if (status != CP_SJ_OK) {
        json_decref(b.root);
        if (error) {
            *error = b.fault ? b.fault : status == CP_SJ_DEPTH ? DEPTH_FAULT
                                                               : cp_sj_fault(status);
        }
        return NULL;
    }
    return cp_json_pool_own(pool, b.root);
}

/* Appends part[0..part_len) to buf (grown, of malloc): 0 when out of memory. */
static int append(char **buf, size_t *len, size_t *size, const char *part, size_t part_len)
{
    if (*len + part_len + 1 > *size) {
        size_t grown = (*len + part_len + 1) * 2;
        char *bigger = realloc(*buf, grown);

        if (!bigger) {
            return 0;
        }
        *buf = bigger;
        *size = grown;
    }
    memcpy(*buf + *len, part, part_len);
    *len += part_len;
    (*buf)[*len] = '\0';
    return 1;
}

/* Compact JSON text of a value holding wide integers, into buf (grown, of
 * malloc): jansson writes everything else. 0 on failure. */
static int write_wide(const json_t *value, char **buf, size_t *len, size_t *size)
{
    char *part = NULL;
    size_t part_len;
    int ok = 1;

    if (cp_json_is_wide(value)) {
        part_len = json_string_length(value) - 1;
        part = malloc(part_len);
        if (part) {
            memcpy(part, json_string_value(value) + 1, part_len);
        }
    }
    else if (json_is_array(value) || json_is_object(value)) {
        int array = json_is_array(value);
        size_t i = 0;
        void *it = array ? NULL : json_object_iter((json_t *)value);

        if (!append(buf, len, size, array ? "[" : "{", 1)) {
            return 0;
        }
        for (; array ? i < json_array_size(value) : it != NULL; i++) {
            const json_t *inner;

            if (i > 0 && !append(buf, len, size, ",", 1)) {
                return 0;
            }
            if (array) {
                inner = json_array_get(value, i);
            }
            else {
                json_t *name = json_stringn_nocheck(json_object_iter_key(it),
                                                    json_object_iter_key_len(it));

                ok = name && write_wide(name, buf, len, size)
                     && append(buf, len, size, ":", 1);
                json_decref(name);
                inner = json_object_iter_value(it);
                it = json_object_iter_next((json_t *)value, it);
            }
            if (!ok || !write_wide(inner, buf, len, size)) {
                return 0;
            }
        }
        return append(buf, len, size, array ? "]" : "}", 1);
    }
    else {
        part = json_dumps(value, JSON_COMPACT | JSON_ENCODE_ANY);
        part_len = part ? strlen(part) : 0;
    }
    ok = part && append(buf, len, size, part, part_len);
    free(part);
    return ok;
}

/* Compact JSON text of any value, of malloc: jansson's, or where jansson
 * cannot write it (a wide integer is no UTF-8 string), write_wide's. */
static char *dump(const json_t *value)
{
    char *text = json_dumps(value, JSON_COMPACT | JSON_ENCODE_ANY);
    size_t len = 0, size = 0;

    if (text || !value) {
        return text;
    }
    if (!write_wide(value, &text, &len, &size)) {
        free(text);
        return NULL;
    }
    return text;
}

const char *cp_json_text(apr_pool_t *pool, const json_t *value)
{
    const char *written = cp_json_write(pool, value);
    char *text, *copy;

    if (written) {
        return written;
    }
    if (!(text = dump(value))) {
        return NULL;
    }
    copy = apr_pstrdup(pool, text);
    free(text);
    return copy;
}

apr_size_t cp_json_size(const json_t *value)
{
    size_t size = json_dumpb(value, NULL, 0, JSON_COMPACT | JSON_ENCODE_ANY);
    char *text;

    if (size || !value) {
        return size;
    }
    text = dump(value);
    size = text ? strlen(text) : 0;
    free(text);
    return size;
}

int cp_json_identical(const json_t *a, const json_t *b)
{
    if (!a || !b || json_typeof(a) != json_typeof(b)) {
        return 0;
    }
    switch (json_typeof(a)) {
    case JSON_INTEGER:
        return json_integer_value(a) == json_integer_value(b);
    case JSON_REAL: {
        /* jansson writes doubles with 17 digits: equal text is equal bits
         * (so -0.0 is not 0.0) */
        double x = json_real_value(a), y = json_real_value(b);

        return memcmp(&x, &y, sizeof(x)) == 0;
    }
    case JSON_STRING:
        return json_string_length(a) == json_string_length(b)
            && memcmp(json_string_value(a), json_string_value(b),
                      json_string_length(a)) == 0;
    case JSON_ARRAY: {
        size_t i, n = json_array_size(a);

        if (json_array_size(b) != n) {
            return 0;
        }
        for (i = 0; i < n; i++) {
            if (!cp_json_identical(json_array_get(a, i), json_array_get(b, i))) {
                return 0;
            }
        }
        return 1;
    }
    case JSON_OBJECT: {
        void *ia = json_object_iter((json_t *)a), *ib = json_object_iter((json_t *)b);

        if (json_object_size(a) != json_object_size(b)) {
            return 0;
        }
        for (; ia && ib; ia = json_object_iter_next((json_t *)a, ia),
                         ib = json_object_iter_next((json_t *)b, ib)) {
            size_t len = json_object_iter_key_len(ia);

            if (json_object_iter_key_len(ib) != len
                || memcmp(json_object_iter_key(ia), json_object_iter_key(ib), len) != 0
                || !cp_json_identical(json_object_iter_value(ia),
                                      json_object_iter_value(ib))) {
                return 0;
            }
        }
        return 1;
    }
    default: /* true, false, null */
        return 1;
    }
}

/* 0xff in each of the 16 bytes at text that is <, > or &, 0 in the others
 * (< and > are the two bytes that | 2 makes >). */
static cp_bytes16 html_specials16(const char *text)
{
    cp_bytes16 v = cp_bytes16_at(text);

    return (cp_bytes16)(((v | 2) == '>') | (v == '&'));
}

static int is_html_special(char c)
{
    return c == '<' || c == '>' || c == '&';
}

apr_size_t cp_json_html_specials(const char *text, apr_size_t len)
{
    apr_size_t count = 0, i = 0;
    int j;

    for (; i + 16 <= len; i += 16) {
        cp_bytes16 m = html_specials16(text + i);

        for (j = 0; cp_bytes16_any(m) && j < 16; j++) {
            count += m[j] != 0;
        }
    }
    for (; i < len; i++) {
        count += is_html_special(text[i]);
    }
    return count;
}

/* Whether the 64 bytes at text hold none of < > &. */
static int html_clean64(const char *text)
{
    return !cp_bytes16_any(html_specials16(text) | html_specials16(text + 16)
                           | html_specials16(text + 32) | html_specials16(text + 48));
}

char *cp_json_copy_html_safe(char *out, const char *text, apr_size_t len)
{
    static const char hex[] = "0123456789abcdef";
    apr_size_t i = 0, block_end, end;

    /* most of a page has none of them: 64 bytes a step; a block that has
     * one 16 a step, and the 16 that have one a byte a step */
    while (i < len) {
        if (i + 64 <= len && html_clean64(text + i)) {
            memcpy(out, text + i, 64);
            out += 64;
            i += 64;
            continue;
        }
        block_end = i + 64 < len ? i + 64 : len;
        while (i < block_end) {
            if (i + 16 <= block_end && !cp_bytes16_any(html_specials16(text + i))) {
                memcpy(out, text + i, 16);
                out += 16;
                i += 16;
                continue;
            }
            for (end = i + 16 < block_end ? i + 16 : block_end; i < end; i++) {
                if (is_html_special(text[i])) {
                    memcpy(out, "\\u00", 4);
                    out[4] = hex[(unsigned char)text[i] >> 4];
                    out[5] = hex[text[i] & 15];
                    out += 6;
                }
                else {
                    *out++ = text[i];
                }
            }
        }
    }
    return out;
}

const char *cp_json_text_html_safe(apr_pool_t *pool, const json_t *value)
{
    const char *text = cp_json_text(pool, value);
    apr_size_t len, specials;
    char *out;

    if (!text) {
        return NULL;
    }
    len = strlen(text);
    if ((specials = cp_json_html_specials(text, len)) == 0) {
        return text;
    }
    out = apr_palloc(pool, len + 5 * specials + 1);
    *cp_json_copy_html_safe(out, text, len) = '\0';
    return out;
}

const char *cp_json_quote(apr_pool_t *pool, const char *text)
{
    json_t *string = cp_json_pool_own(pool, json_string(text));

    return string ? cp_json_text(pool, string) : NULL;
}

const char *cp_json_compact(apr_pool_t *pool, const char *text, const char **error)
{
    const json_t *value = cp_json_load(pool, text, strlen(text), error);

    return value ? cp_json_text(pool, value) : NULL;
}

/* --- cp_json_text's own writer ------------------------------------------ */

/*
 * cp_json_text writes a jansson value's compact text into a buffer of the
 * pool, byte for byte as json_dumps (JSON_COMPACT | JSON_ENCODE_ANY)
 * writes it, without what json_dumps pays for every object and array
 * (their address formatted into a hash table to catch loops, a buffer
 * grown by realloc, then copied to the pool): members in the order
 * jansson iterates and writes them, strings escaped as jansson escapes
 * them, integers in decimal. What it does not write itself is jansson's: a
 * real (jansson's double formatting) and a string or a member's name with
 * a byte beyond ASCII (jansson checks its UTF-8); a wide integer is its
 * text.
 */
/* Deeper values are left to jansson whole. */
#define MAX_DEPTH 256
#define COMPACT (JSON_COMPACT | JSON_ENCODE_ANY)

/* jansson's text of value (a real, a string beyond ASCII): 0 where
 * jansson writes none. */
static int add_jansson(cp_text *w, const json_t *value)
{
    char *text = json_dumps(value, COMPACT);

    if (!text) {
        return 0;
    }
    cp_text_add(w, text, strlen(text));
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
static int add_ascii(cp_text *w, const char *s, apr_size_t n)
{
    apr_size_t len = cp_json_quote_into(cp_text_room(w, 6 * n + 2), s, n, 1);

    w->len += len;
    return len > 0;
}

/* A string or a member's name: jansson's where it is beyond ASCII. */
static int add_string(cp_text *w, const char *s, apr_size_t n)
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

static void add_integer(cp_text *w, json_int_t value)
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
    cp_text_add(w, digits + n, sizeof(digits) - n);
}

static int add_value(cp_text *w, const json_t *value, int depth)
{
    size_t i, n;
    void *it;

    if (depth > MAX_DEPTH) {
        return 0;
    }
    switch (json_typeof(value)) {
    case JSON_OBJECT:
        cp_text_add(w, "{", 1);
        for (it = json_object_iter((json_t *)value), i = 0; it;
             it = json_object_iter_next((json_t *)value, it), i++) {
            if (i > 0) {
                cp_text_add(w, ",", 1);
            }
            if (!add_string(w, json_object_iter_key(it), json_object_iter_key_len(it))) {
                return 0;
            }
            cp_text_add(w, ":", 1);
            if (!add_value(w, json_object_iter_value(it), depth + 1)) {
                return 0;
            }
        }
        cp_text_add(w, "}", 1);
        return 1;
    case JSON_ARRAY:
        cp_text_add(w, "[", 1);
        for (i = 0, n = json_array_size(value); i < n; i++) {
            if (i > 0) {
                cp_text_add(w, ",", 1);
            }
            if (!add_value(w, json_array_get(value, i), depth + 1)) {
                return 0;
            }
        }
        cp_text_add(w, "]", 1);
        return 1;
    case JSON_STRING:
        if (cp_json_is_wide(value)) {
            cp_text_add(w, json_string_value(value) + 1, json_string_length(value) - 1);
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
        cp_text_add(w, "true", 4);
        return 1;
    case JSON_FALSE:
        cp_text_add(w, "false", 5);
        return 1;
    case JSON_NULL:
        cp_text_add(w, "null", 4);
        return 1;
    }
    return 0;
}

const char *cp_json_write(apr_pool_t *pool, const json_t *value)
{
    cp_text w = { pool, NULL, 0, 0 };

    if (!value) {
        return NULL;
    }
    cp_text_room(&w, 256);
    if (!add_value(&w, value, 0)) {
        return NULL;
    }
    w.text[w.len] = '\0';
    return w.text;
}
