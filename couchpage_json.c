/* SPDX-License-Identifier: Apache-2.0 */
/*
 * couchpage_json.c: jansson values owned by APR pools, JSON text read and
 * written as CouchDB sends it (integers wider than 64 bits digit for
 * digit), and the comparisons the page needs. Part of the httpd-free core:
 * no httpd header, no request_rec.
 */
#include "couchpage_json.h"
#include "couchpage_bytes.h"

#include <apr_strings.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int cp_json_is_wide_integer(const char *text, apr_size_t len)
{
    static const char max[] = "9223372036854775807";
    apr_size_t i, negative = len > 0 && text[0] == '-';
    int cmp;

    if (len == negative || text[negative] == '0') {
        return 0;
    }
    for (i = negative; i < len; i++) {
        if (text[i] < '0' || text[i] > '9') {
            return 0;
        }
    }
    len -= negative;
    if (len != sizeof(max) - 1) {
        return len > sizeof(max) - 1;
    }
    cmp = memcmp(text + negative, max, len);
    return negative ? memcmp(text + 1, "9223372036854775808", len) > 0 : cmp > 0;
}

/* In the text jansson reads again: a string starting with NUL is tagged by
 * its second byte, a wide integer (its text follows) or a string of the
 * JSON text (that started with NUL, which follows). */
#define TAG_WIDE "\\u0000w"
#define TAG_STRING "\\u0000s"

/* The same JSON text with every integer literal too wide for 64 bits written
 * as a string TAG_WIDE and its digits, and every string that starts with
 * NUL behind TAG_STRING, so that jansson reads it all and untag() finds the
 * integers again. Anything else is copied untouched: jansson judges it. */
static char *tag_wide_integers(apr_pool_t *pool, const char *text, apr_size_t len,
                               apr_size_t *out_len)
{
    char *out = apr_palloc(pool, 4 * len + 2), *o = out;
    apr_size_t i = 0;

    while (i < len) {
        char c = text[i];

        if (c == '"') {
            /* a string, escapes included */
            *o++ = text[i++];
            if (len - i >= 6 && !memcmp(text + i, "\\u0000", 6)) {
                memcpy(o, TAG_STRING, strlen(TAG_STRING));
                o += strlen(TAG_STRING);
            }
            while (i < len && text[i] != '"') {
                if (text[i] == '\\' && i + 1 < len) {
                    *o++ = text[i++];
                }
                *o++ = text[i++];
            }
            if (i < len) {
                *o++ = text[i++];
            }
        }
        else if (c == '-' || (c >= '0' && c <= '9')) {
            apr_size_t start = i++;

            while (i < len && (text[i] == '.' || text[i] == 'e' || text[i] == 'E'
                               || text[i] == '+' || text[i] == '-'
                               || (text[i] >= '0' && text[i] <= '9'))) {
                i++;
            }
            if (cp_json_is_wide_integer(text + start, i - start)) {
                memcpy(o, "\"" TAG_WIDE, strlen(TAG_WIDE) + 1);
                o += strlen(TAG_WIDE) + 1;
                memcpy(o, text + start, i - start);
                o += i - start;
                *o++ = '"';
            }
            else {
                memcpy(o, text + start, i - start);
                o += i - start;
            }
        }
        else {
            *o++ = text[i++];
        }
    }
    *out_len = o - out;
    return out;
}

/* The value tag_wide_integers' tagged string stands for (a new reference),
 * or NULL when value is no tagged string. */
static json_t *untagged(const json_t *value)
{
    const char *s = json_string_value(value);

    if (!s || json_string_length(value) < 2 || s[0] != '\0') {
        return NULL;
    }
    return s[1] == 'w' ? cp_json_wide(s + 2, json_string_length(value) - 2)
                       : json_stringn_nocheck(s + 2, json_string_length(value) - 2);
}

/* Replaces every tagged string inside value (a new reference). */
static json_t *untag(json_t *value)
{
    json_t *inner, *plain;

    if (json_is_array(value)) {
        size_t i;

        json_array_foreach(value, i, inner) {
            if ((plain = untagged(inner))) {
                json_array_set_new(value, i, plain);
            }
            else {
                untag(inner);
            }
        }
    }
    else if (json_is_object(value)) {
        void *it;

        for (it = json_object_iter(value); it; it = json_object_iter_next(value, it)) {
            inner = json_object_iter_value(it);
            if ((plain = untagged(inner))) {
                json_object_iter_set_new(value, it, plain);
            }
            else {
                untag(inner);
            }
        }
    }
    else if ((plain = untagged(value))) {
        json_decref(value);
        return plain;
    }
    return value;
}

json_t *cp_json_load(apr_pool_t *pool, const char *text, apr_size_t len,
                     const char **error)
{
    json_error_t err;
    json_t *value = json_loadb(text, len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &err);

    if (!value && json_error_code(&err) == json_error_numeric_overflow) {
        apr_size_t tagged_len;
        const char *tagged = tag_wide_integers(pool, text, len, &tagged_len);

        value = json_loadb(tagged, tagged_len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &err);
        if (value) {
            value = untag(value);
        }
    }
    if (!value) {
        if (error) {
            *error = apr_psprintf(pool, "%s at line %d column %d",
                                  err.text, err.line, err.column);
        }
        return NULL;
    }
    return cp_json_pool_own(pool, value);
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
    char *text = dump(value);
    char *copy;

    if (!text) {
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

/* 0xff in each of the 16 bytes at text that is <, > or &, 0 in the others;
 * *any: whether there is one. */
static cp_bytes16 html_specials16(const char *text, int *any)
{
    cp_bytes16 v = cp_bytes16_at(text);
    cp_bytes16 m = (cp_bytes16)((v == '<') | (v == '>') | (v == '&'));

    *any = cp_bytes16_any(m);
    return m;
}

static int is_html_special(char c)
{
    return c == '<' || c == '>' || c == '&';
}

apr_size_t cp_json_html_specials(const char *text, apr_size_t len)
{
    apr_size_t count = 0, i = 0;
    int any, j;

    for (; i + 16 <= len; i += 16) {
        cp_bytes16 m = html_specials16(text + i, &any);

        for (j = 0; any && j < 16; j++) {
            count += m[j] != 0;
        }
    }
    for (; i < len; i++) {
        count += is_html_special(text[i]);
    }
    return count;
}

char *cp_json_copy_html_safe(char *out, const char *text, apr_size_t len)
{
    static const char hex[] = "0123456789abcdef";
    apr_size_t i = 0, end;
    int any;

    while (i < len) {
        if (i + 16 <= len) {
            html_specials16(text + i, &any);
            if (!any) {
                memcpy(out, text + i, 16);
                out += 16;
                i += 16;
                continue;
            }
            end = i + 16;
        }
        else {
            end = len;
        }
        for (; i < end; i++) {
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
