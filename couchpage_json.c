/* SPDX-License-Identifier: Apache-2.0 */
/*
 * couchpage_json.c: jansson values owned by APR pools, JSON text read and
 * written as CouchDB sends it, and the comparisons the page needs. Part of
 * the httpd-free core: no httpd header, no request_rec.
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

/* Whether digits[0..len) (no sign) is beyond a 64-bit integer's range. */
static int exceeds_int64(const char *digits, apr_size_t len, int negative)
{
    static const char max[] = "9223372036854775807";
    int cmp;

    while (len > 1 && *digits == '0') {
        digits++;
        len--;
    }
    if (len != sizeof(max) - 1) {
        return len > sizeof(max) - 1;
    }
    cmp = memcmp(digits, max, len);
    return negative ? cmp > 0 && memcmp(digits, "9223372036854775808", len) > 0 : cmp > 0;
}

/* The same JSON text with every integer literal too wide for 64 bits written
 * as a double ("1e20" stays, "100000000000000000000" becomes
 * "100000000000000000000.0"), so that jansson reads those as doubles and
 * every other number as it is. Strings are copied untouched. */
static char *widen_big_integers(apr_pool_t *pool, const char *text, apr_size_t len,
                                apr_size_t *out_len)
{
    char *out = apr_palloc(pool, len + len / 2 + 2), *o = out;
    apr_size_t i = 0;

    while (i < len) {
        char c = text[i];

        if (c == '"') {
            /* a string, escapes included */
            *o++ = text[i++];
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
            apr_size_t start = i, digits;
            int negative = c == '-', integer = 1;

            i += negative;
            digits = i;
            while (i < len && text[i] >= '0' && text[i] <= '9') {
                i++;
            }
            digits = i - digits;
            while (i < len && (text[i] == '.' || text[i] == 'e' || text[i] == 'E'
                               || text[i] == '+' || text[i] == '-'
                               || (text[i] >= '0' && text[i] <= '9'))) {
                integer = 0;
                i++;
            }
            memcpy(o, text + start, i - start);
            o += i - start;
            if (integer && exceeds_int64(text + start + negative, digits, negative)) {
                memcpy(o, ".0", 2);
                o += 2;
            }
        }
        else {
            *o++ = text[i++];
        }
    }
    *out_len = o - out;
    return out;
}

json_t *cp_json_load(apr_pool_t *pool, const char *text, apr_size_t len,
                     const char **error)
{
    json_error_t err;
    json_t *value = json_loadb(text, len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &err);

    if (!value && json_error_code(&err) == json_error_numeric_overflow) {
        apr_size_t widened_len;
        const char *widened = widen_big_integers(pool, text, len, &widened_len);

        value = json_loadb(widened, widened_len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &err);
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

const char *cp_json_text(apr_pool_t *pool, const json_t *value)
{
    char *text = json_dumps(value, JSON_COMPACT | JSON_ENCODE_ANY);
    char *copy;

    if (!text) {
        return NULL;
    }
    copy = apr_pstrdup(pool, text);
    free(text);
    return copy;
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
