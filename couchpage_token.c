/* SPDX-License-Identifier: Apache-2.0 */
/*
 * couchpage_token.c: page tokens written from a row and read back from a
 * client. Part of the httpd-free core: no httpd header, no request_rec;
 * the glue caps a token's length and unseals it first.
 */
#include "couchpage_token.h"
#include "couchpage_json.h"

#include <apr_strings.h>
#include <string.h>

const char *cp_token_encode(apr_pool_t *pool, const json_t *key, const char *docid,
                            int index)
{
    json_t *pair = cp_json_pool_own(pool, json_array());

    json_array_append(pair, (json_t *)key);
    if (docid) {
        json_array_append_new(pair, json_string(docid));
        if (index > 0) {
            json_array_append_new(pair, json_integer(index));
        }
    }
    return cp_json_text(pool, pair);
}

const char *cp_token_decode(apr_pool_t *pool, const char *text, int with_docid,
                            cp_token *token)
{
    apr_size_t len = strlen(text);
    const char *error = NULL;
    const json_t *id;
    json_t *value;

    if (len == 0) {
        return "the start token is empty";
    }
    token->key = NULL;
    token->key_json = NULL;
    token->docid = NULL;
    token->index = 0;
    token->at_end = !strcmp(text, CP_TOKEN_LAST);
    if (token->at_end) {
        return NULL;
    }
    value = cp_json_load(pool, text, len, &error);
    if (!value) {
        return apr_psprintf(pool, "the start token is not JSON: %s", error);
    }
    if (!json_is_array(value)) {
        return with_docid ? "the start token must be a JSON array [key, docid]"
                          : "the start token must be a JSON array [key]";
    }
    if (with_docid ? json_array_size(value) < 2 || json_array_size(value) > 3
                   : json_array_size(value) != 1) {
        return with_docid ? "the start token must have two members, [key, docid] "
                            "(or three, [key, docid, n])"
                          : "the start token must have one member, [key]";
    }
    token->key = json_array_get(value, 0);
    token->key_json = cp_json_text(pool, token->key);
    if (json_array_size(value) == 3) {
        const json_t *index = json_array_get(value, 2);

        if (!json_is_integer(index) || json_integer_value(index) < 1
            || json_integer_value(index) >= CP_TOKEN_MAX_EMITS) {
            return apr_psprintf(pool, "the start token's third member must be a whole "
                                "number from 1 to %d", CP_TOKEN_MAX_EMITS - 1);
        }
        token->index = (int)json_integer_value(index);
    }
    if (with_docid) {
        id = json_array_get(value, 1);
        if (!json_is_string(id) || json_string_length(id) == 0) {
            return "the start token's docid must be a non-empty string";
        }
        if (strlen(json_string_value(id)) != json_string_length(id)) {
            return "the start token's docid contains a NUL character";
        }
        token->docid = json_string_value(id);
    }
    return NULL;
}
