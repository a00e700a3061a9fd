/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target: cp_token_decode on arbitrary bytes, for both token forms
 * ([key, docid] and [key]). A token that decodes is
 * encoded again with cp_token_encode and decoded again: the key's JSON text
 * and the docid must come back the same, and encoding is a fixed point. The
 * one token without a key is the word CP_TOKEN_LAST, exactly; a bounded
 * token ({"lo", "hi", "h"}) has its keys and digest and no key. A key
 * decoded also makes a bounded token, which decodes to the key's digest.
 * The same bytes as a keyset location's token (two sort values), with and
 * without a view's tokens: {"a"} and {"b"} come back from
 * cp_token_encode_beside the same, a view's token only where the location
 * reads them, and nothing else.
 */
#include "fuzz.h"
#include "couchpage_json.h"
#include "couchpage_token.h"

#include <apr_strings.h>

static void round_trip(apr_pool_t *pool, const char *text, int with_docid)
{
    cp_token token, again;
    const char *reason, *encoded, *reencoded, *bounded;

    memset(&token, 0, sizeof(token));
    reason = cp_token_decode(pool, text, CP_TOKEN_VIEW_ROWS(with_docid), &token);
    if (reason) {
        FUZZ_CHECK(*reason, "empty reason for %s", text);
        return;
    }
    if (token.from == CP_FROM_LAST) {
        FUZZ_CHECK(!strcmp(text, CP_TOKEN_LAST), "%s was read as the last page's token", text);
        FUZZ_CHECK(!token.key && !token.key_json && !token.docid && !token.index,
                   "the last page's token has a key, docid or index");
        return;
    }
    FUZZ_CHECK(strcmp(text, CP_TOKEN_LAST), "%s was not read as the last page's token", text);
    if (token.digest) {
        FUZZ_CHECK(token.low && token.high && !token.key && !token.docid
                   && strlen(token.digest) == CP_TOKEN_DIGEST_LENGTH,
                   "bounded token %s read wrong", text);
        return;
    }
    FUZZ_CHECK(token.key && token.key_json, "no key for %s", text);
    FUZZ_CHECK(with_docid ? token.docid && *token.docid : !token.docid,
               "docid %s for %s", token.docid ? token.docid : "(null)", text);
    FUZZ_CHECK(fuzz_is_json(token.key_json), "key_json of %s", text);

    encoded = cp_token_encode(pool, token.key, token.docid, token.index);
    FUZZ_CHECK(encoded, "cp_token_encode failed for %s", text);
    memset(&again, 0, sizeof(again));
    reason = cp_token_decode(pool, encoded, CP_TOKEN_VIEW_ROWS(with_docid), &again);
    FUZZ_CHECK(!reason, "re-encoded token %s (from %s) refused: %s", encoded, text, reason);
    FUZZ_CHECK(!strcmp(token.key_json, again.key_json), "key %s came back as %s",
               token.key_json, again.key_json);
    /* cp_json_identical: jansson's json_equal misses names holding \u0000 */
    FUZZ_CHECK(cp_json_identical(token.key, again.key),
               "key %s is not equal after a round trip", token.key_json);
    FUZZ_CHECK((!token.docid && !again.docid)
                   || (token.docid && again.docid && !strcmp(token.docid, again.docid)),
               "docid of %s came back as %s", text, again.docid ? again.docid : "(null)");
    reencoded = cp_token_encode(pool, again.key, again.docid, again.index);
    FUZZ_CHECK(reencoded && !strcmp(encoded, reencoded), "%s encodes as %s, then as %s",
               text, encoded, reencoded ? reencoded : "(null)");
    bounded = cp_token_encode_bounded(pool, token.key, token.docid, token.index,
                                      strlen(text) / 2, 0);
    FUZZ_CHECK(bounded, "no bounded token for %s", text);
    memset(&again, 0, sizeof(again));
    reason = cp_token_decode(pool, bounded, CP_TOKEN_VIEW_ROWS(with_docid), &again);
    FUZZ_CHECK(!reason && again.digest
               && !strcmp(again.digest, cp_token_digest(pool, token.key, token.docid))
               && again.index == token.index,
               "bounded token %s (of %s) read wrong: %s", bounded, text, reason ? reason : "");
}

static void keyset_round_trip(apr_pool_t *pool, const char *text, int view_tokens)
{
    const cp_token_rows rows = { 1, 1, 2, view_tokens };
    cp_token token, again;
    const char *reason, *encoded;

    reason = cp_token_decode(pool, text, &rows, &token);
    if (reason) {
        FUZZ_CHECK(*reason, "empty reason for %s", text);
        return;
    }
    if (token.from == CP_FROM_LAST) {
        FUZZ_CHECK(!strcmp(text, CP_TOKEN_LAST), "%s was read as the last page's token", text);
        return;
    }
    if (token.from == CP_FROM_ROW) {
        FUZZ_CHECK(view_tokens, "a view's token %s read at a keyset location", text);
        FUZZ_CHECK(token.digest || (token.key && token.docid), "view token %s read wrong", text);
        return;
    }
    FUZZ_CHECK(token.from == CP_FROM_AFTER || token.from == CP_FROM_BEFORE,
               "%s read as from %d", text, (int)token.from);
    FUZZ_CHECK(json_is_array(token.key) && json_array_size(token.key) == 2 && token.docid
               && *token.docid && fuzz_is_json(token.key_json),
               "keyset token %s read wrong", text);
    encoded = cp_token_encode_beside(pool, token.from, token.key, token.docid);
    FUZZ_CHECK(encoded, "cp_token_encode_beside failed for %s", text);
    reason = cp_token_decode(pool, encoded, &rows, &again);
    FUZZ_CHECK(!reason && again.from == token.from && !strcmp(again.key_json, token.key_json)
               && !strcmp(again.docid, token.docid),
               "keyset token %s (from %s) came back wrong: %s", encoded, text,
               reason ? reason : "");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    apr_pool_t *pool = fuzz_pool();
    const char *text = fuzz_cstring(pool, data, size);
    int with_docid;

    for (with_docid = 0; with_docid <= 1; with_docid++) {
        round_trip(pool, text, with_docid);
        keyset_round_trip(pool, text, with_docid);
    }
    apr_pool_destroy(pool);
    return 0;
}
