/* SPDX-License-Identifier: Apache-2.0 */
/*
 * couchpage_args.c: a client's query string read into cp_args, the
 * format its Accept header prefers, and the names of formats. Part of the httpd-free core: no httpd
 * header, no request_rec; it gives reasons, and the glue answers the client.
 */
#include "couchpage_args.h"

#include <apr_escape.h>
#include <apr_strings.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Indexed by cp_format. */
static const char *const format_names[] = { "auto", "json", "html" };

int cp_format_named(const char *name)
{
    int i;

    for (i = 0; i < (int)(sizeof(format_names) / sizeof(format_names[0])); i++) {
        if (strcmp(name, format_names[i]) == 0) {
            return i;
        }
    }
    return -1;
}

const char *cp_format_name(cp_format format)
{
    return format_names[format];
}

/* A decimal number of at most 9 digits, so it fits an int; -1 otherwise. */
static int parse_count(const char *text)
{
    int value = 0;
    const char *c;

    if (!*text || strlen(text) > 9) {
        return -1;
    }
    for (c = text; *c; c++) {
        if (*c < '0' || *c > '9') {
            return -1;
        }
        value = value * 10 + (*c - '0');
    }
    return value;
}

/* Percent-decodes one name or value. An empty forbid list makes %00 an
 * error, as apr_unescape_url treats a decoded NUL as forbidden. */
static const char *decode_component(apr_pool_t *pool, const char *raw)
{
    return apr_punescape_url(pool, raw, "", NULL, 1);
}

const char *cp_args_parse(apr_pool_t *pool, const char *query, int max_limit,
                          cp_args *args)
{
    char *copy, *pair, *state = NULL;
    const char *limit_text = NULL, *page_text = NULL;
    int named;

    args->start = NULL;
    args->limit = 0;
    args->format = CP_FORMAT_AUTO;
    args->page = 0;
    if (!query || !*query) {
        return NULL;
    }
    copy = apr_pstrdup(pool, query);
    for (pair = apr_strtok(copy, "&", &state); pair;
         pair = apr_strtok(NULL, "&", &state)) {
        char *eq = strchr(pair, '=');
        const char *name, *value;

        if (eq) {
            *eq = '\0';
        }
        name = decode_component(pool, pair);
        if (!name) {
            return "the query string has a malformed percent-escape";
        }
        if (strcmp(name, "start") != 0 && strcmp(name, "limit") != 0
            && strcmp(name, "format") != 0 && strcmp(name, "page") != 0) {
            continue;
        }
        value = decode_component(pool, eq ? eq + 1 : "");
        if (!value) {
            return apr_psprintf(pool, "the %s argument has a malformed percent-escape",
                                name);
        }
        if (strcmp(name, "start") == 0) {
            if (args->start) {
                return "the start argument is given more than once";
            }
            args->start = value;
        }
        else if (strcmp(name, "format") == 0) {
            if (args->format != CP_FORMAT_AUTO) {
                return "the format argument is given more than once";
            }
            named = cp_format_named(value);
            if (named != CP_FORMAT_JSON && named != CP_FORMAT_HTML) {
                return "format must be json or html";
            }
            args->format = (cp_format)named;
        }
        else if (strcmp(name, "page") == 0) {
            if (page_text) {
                return "the page argument is given more than once";
            }
            page_text = value;
        }
        else {
            if (limit_text) {
                return "the limit argument is given more than once";
            }
            limit_text = value;
        }
    }
    if (limit_text) {
        args->limit = parse_count(limit_text);
        if (args->limit < 1 || args->limit > max_limit) {
            args->limit = 0;
            return apr_psprintf(pool, "limit must be a whole number from 1 to %d",
                                max_limit);
        }
    }
    if (page_text) {
        args->page = parse_count(page_text);
        if (args->page < 1 || args->page > CP_ARGS_MAX_PAGE) {
            args->page = 0;
            return apr_psprintf(pool, "page must be a whole number from 1 to %d",
                                CP_ARGS_MAX_PAGE);
        }
        if (args->start) {
            args->page = 0;
            return "page and start name a page each: give one of them";
        }
    }
    return NULL;
}

/* The q-value of one media range's parameters, 1 when absent; -1 when bad. */
static double q_value(const char *params)
{
    const char *q = params;

    while ((q = strchr(q, ';')) != NULL) {
        q++;
        while (*q == ' ' || *q == '\t') {
            q++;
        }
        if ((q[0] == 'q' || q[0] == 'Q') && q[1] == '=') {
            char *end;
            double value = strtod(q + 2, &end);
            return end == q + 2 || value < 0 || value > 1 ? -1 : value;
        }
    }
    return 1;
}

cp_format cp_format_from_accept(apr_pool_t *pool, const char *accept)
{
    /* q-values of text/html and application/json; precedence 3 for the exact
     * type, 2 for type/ *, 1 for * / *, 0 for no match */
    double q[2] = { 0, 0 };
    int precedence[2] = { 0, 0 };
    static const char *const types[2] = { "text/html", "application/json" };
    static const char *const groups[2] = { "text/*", "application/*" };
    char *copy, *range, *state = NULL;
    int t;

    if (!accept || !*accept) {
        return CP_FORMAT_JSON;
    }
    copy = apr_pstrdup(pool, accept);
    for (range = apr_strtok(copy, ",", &state); range;
         range = apr_strtok(NULL, ",", &state)) {
        size_t len;
        double value;

        while (*range == ' ' || *range == '\t') {
            range++;
        }
        len = strcspn(range, "; \t");
        value = q_value(range + len);
        if (value < 0) {
            continue;
        }
        for (t = 0; t < 2; t++) {
            int p = (len == strlen(types[t]) && strncasecmp(range, types[t], len) == 0) ? 3
                  : (len == strlen(groups[t]) && strncasecmp(range, groups[t], len) == 0) ? 2
                  : (len == 3 && strncmp(range, "*/*", 3) == 0) ? 1 : 0;
            if (p > precedence[t]) {
                precedence[t] = p;
                q[t] = value;
            }
        }
    }
    return q[0] > q[1] ? CP_FORMAT_HTML : CP_FORMAT_JSON;
}
