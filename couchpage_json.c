#include "couchpage_json.h"

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

json_t *cp_json_load(apr_pool_t *pool, const char *text, apr_size_t len,
                     const char **error)
{
    json_error_t err;
    json_t *value = json_loadb(text, len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &err);

    if (!value && json_error_code(&err) == json_error_numeric_overflow) {
        value = json_loadb(text, len,
                           JSON_DECODE_ANY | JSON_ALLOW_NUL | JSON_DECODE_INT_AS_REAL,
                           &err);
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

const char *cp_json_text_html_safe(apr_pool_t *pool, const json_t *value)
{
    const char *text = cp_json_text(pool, value);
    const char *c;
    apr_size_t extra = 0;
    char *out, *o;

    if (!text) {
        return NULL;
    }
    for (c = text; *c; c++) {
        extra += (*c == '<' || *c == '>' || *c == '&') ? 5 : 0;
    }
    if (extra == 0) {
        return text;
    }
    out = o = apr_palloc(pool, strlen(text) + extra + 1);
    for (c = text; *c; c++) {
        if (*c == '<' || *c == '>' || *c == '&') {
            o += sprintf(o, "\\u%04x", (unsigned)*c);
        }
        else {
            *o++ = *c;
        }
    }
    *o = '\0';
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
