/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target: sealed tokens (CouchPageTokenSecret, AES-256-GCM). The
 * input after its first byte is a token a client sent, into cp_unseal,
 * which opens it only as what a sealed token is (its length the payload's
 * and the overhead) and never fails inside libcrypto; it is also a
 * payload, sealed twice on one page with cp_seal_tokens, each of which must
 * be base64url of the payload's length and the overhead, open again to the
 * same payload, with the previous secret too, and differ from the other;
 * and not open for another location or secret, with one byte changed, or
 * one character short.
 *
 * First byte ('0'..'3' in the seed corpus): bit 0, a previous secret is
 * configured; bit 1, the other location; bits 2-7, which byte of the
 * sealed token to change.
 */
#include "fuzz.h"
#include "couchpage_seal.h"

#include <apr_encode.h>
#include <apr_strings.h>

static const char *const bindings[] = {
    "http://127.0.0.1:5984/bands/_design/bands/_view/by-name\n/bands/",
    "http://127.0.0.1:5984/bands/_design/bands/_view/by-name\n/items/",
};

/* Derived once, as the module derives them at start-up, and wiped at exit
 * (LeakSanitizer does not look into pool memory for the ciphers they hold). */
static apr_pool_t *keys_pool;
static const cp_seal_key *secret, *previous, *other;

static void destroy_keys(void)
{
    apr_pool_destroy(keys_pool);
}

static const cp_seal_key *key_of(apr_pool_t *pool, const char *text)
{
    const cp_seal_key *key;

    if (cp_seal_key_derive(pool, text, &key)) {
        abort();
    }
    return key;
}

/* The length of a token of a payload of len bytes (base64url, unpadded). */
static size_t sealed_length(size_t len)
{
    return (4 * (CP_SEAL_OVERHEAD + len) + 2) / 3;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    apr_pool_t *pool;
    const char *text, *binding, *other_binding, *sealed, *again, *payload, *error;
    const char **const tokens[] = { &sealed, &again };
    const cp_seal_key *previous_key;
    unsigned char *raw;
    apr_size_t raw_len;
    cp_unseal_result result;

    if (size < 1) {
        return 0;
    }
    if (!keys_pool) {
        keys_pool = fuzz_pool();
        atexit(destroy_keys);
        secret = key_of(keys_pool, "fuzz-secret-0123456789");
        previous = key_of(keys_pool, "fuzz-previous-secret-9876543210");
        other = key_of(keys_pool, "another-secret-000000");
    }
    pool = fuzz_pool();
    text = fuzz_cstring(pool, data + 1, size - 1);
    previous_key = data[0] & 1 ? previous : NULL;
    binding = bindings[(data[0] >> 1) & 1];
    other_binding = bindings[!((data[0] >> 1) & 1)];

    /* what a client sent */
    payload = error = NULL;
    result = cp_unseal(pool, secret, previous_key, binding, text, &payload, &error);
    FUZZ_CHECK(result != CP_UNSEAL_FAILED, "%s: libcrypto failed: %s", text, error);
    if (result == CP_UNSEAL_OPENED) {
        FUZZ_CHECK(payload && strlen(text) == sealed_length(strlen(payload)),
                   "%s opened as %s, not a token of its length", text,
                   payload ? payload : "(null)");
    }
    else {
        FUZZ_CHECK(error && *error, "%s refused without a reason", text);
    }

    /* what the module hands out */
    sealed = again = text;
    error = cp_seal_tokens(pool, secret, binding, tokens, 2);
    FUZZ_CHECK(!error && sealed != text && again != text, "%s not sealed: %s", text,
               error ? error : "(no reason)");
    FUZZ_CHECK(strlen(sealed) == sealed_length(strlen(text))
               && strspn(sealed, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                 "0123456789-_") == strlen(sealed),
               "sealed %s as %s, not base64url of its length", text, sealed);
    payload = NULL;
    result = cp_unseal(pool, secret, previous_key, binding, sealed, &payload, &error);
    FUZZ_CHECK(result == CP_UNSEAL_OPENED && !strcmp(payload, text),
               "%s sealed as %s opens as %s (%s)", text, sealed, payload ? payload : "(null)",
               error ? error : "");
    payload = NULL;
    result = cp_unseal(pool, other, secret, binding, sealed, &payload, &error);
    FUZZ_CHECK(result == CP_UNSEAL_OPENED && !strcmp(payload, text),
               "%s does not open with the previous secret", sealed);
    FUZZ_CHECK(cp_unseal(pool, secret, previous_key, other_binding, sealed, &payload, &error)
               == CP_UNSEAL_REFUSED, "%s sealed for one location opens for the other", sealed);
    FUZZ_CHECK(cp_unseal(pool, previous, other, binding, sealed, &payload, &error)
               == CP_UNSEAL_REFUSED, "%s opens with another secret", sealed);
    FUZZ_CHECK(strcmp(again, sealed), "%s sealed twice as the same %s", text, sealed);
    payload = NULL;
    result = cp_unseal(pool, secret, NULL, binding, again, &payload, &error);
    FUZZ_CHECK(result == CP_UNSEAL_OPENED && !strcmp(payload, text),
               "%s sealed second as %s opens as %s", text, again, payload ? payload : "(null)");

    /* one byte changed (a bit of it), and one character short */
    raw = (unsigned char *)apr_pdecode_base64_binary(pool, sealed, APR_ENCODE_STRING,
                                                     APR_ENCODE_BASE64URL, &raw_len);
    FUZZ_CHECK(raw && raw_len == CP_SEAL_OVERHEAD + strlen(text), "%s does not decode", sealed);
    raw[(data[0] >> 2) % raw_len] ^= (unsigned char)(1u << (data[0] % 8));
    FUZZ_CHECK(cp_unseal(pool, secret, previous_key, binding,
                         apr_pencode_base64_binary(pool, raw, raw_len, APR_ENCODE_BASE64URL,
                                                   NULL), &payload, &error)
               == CP_UNSEAL_REFUSED, "%s opens with byte %u changed", sealed,
               (unsigned)((data[0] >> 2) % raw_len));
    FUZZ_CHECK(cp_unseal(pool, secret, previous_key, binding,
                         apr_pstrndup(pool, sealed, strlen(sealed) - 1), &payload, &error)
               == CP_UNSEAL_REFUSED, "%s opens one character short", sealed);

    apr_pool_destroy(pool);
    return 0;
}
