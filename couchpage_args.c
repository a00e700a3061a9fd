#include "couchpage_args.h"

#include <apr_escape.h>
#include <apr_strings.h>
#include <string.h>

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
    const char *limit_text = NULL;

    args->start = NULL;
    args->limit = 0;
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
        if (strcmp(name, "start") != 0 && strcmp(name, "limit") != 0) {
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
    return NULL;
}
