/* SPDX-License-Identifier: Apache-2.0 */
/*
 * couchpage_seal.c: tokens sealed and opened with HMAC-SHA-256 (OpenSSL).
 * Part of the httpd-free core: no httpd header, no request_rec; the glue
 * holds the secrets and the binding.
 */
#include "couchpage_seal.h"

#include <apr_encode.h>
#include <apr_strings.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <string.h>

#define MAC_LEN 32 /* SHA-256 */
#define SEAL_VERSION "couchpage-token-1"

static void mac_of(apr_pool_t *pool, const char *secret, const char *binding,
                   const char *payload, apr_size_t payload_len, unsigned char mac[MAC_LEN])
{
    apr_size_t binding_len = strlen(binding);
    apr_size_t len = sizeof(SEAL_VERSION) + binding_len + 1 + payload_len;
    unsigned char *data = apr_palloc(pool, len), *d = data;
    unsigned int mac_len = MAC_LEN;

    /* NUL separators: neither field can run into the next */
    memcpy(d, SEAL_VERSION, sizeof(SEAL_VERSION));
    d += sizeof(SEAL_VERSION);
    memcpy(d, binding, binding_len + 1);
    d += binding_len + 1;
    memcpy(d, payload, payload_len);
    HMAC(EVP_sha256(), secret, (int)strlen(secret), data, len, mac, &mac_len);
}

/* The one way a sealed token is written. */
static const char *seal_spelling(apr_pool_t *pool, const char *payload,
                                    apr_size_t payload_len, const unsigned char *mac)
{
    return apr_pstrcat(pool,
        apr_pencode_base64(pool, payload, payload_len, APR_ENCODE_BASE64URL, NULL),
        ".",
        apr_pencode_base64_binary(pool, mac, MAC_LEN, APR_ENCODE_BASE64URL, NULL),
        NULL);
}

const char *cp_seal(apr_pool_t *pool, const char *secret, const char *binding,
                    const char *payload)
{
    unsigned char mac[MAC_LEN];
    apr_size_t len = strlen(payload);

    mac_of(pool, secret, binding, payload, len, mac);
    return seal_spelling(pool, payload, len, mac);
}

static int mac_matches(apr_pool_t *pool, const char *secret, const char *binding,
                       const char *payload, apr_size_t payload_len,
                       const unsigned char *mac)
{
    unsigned char expected[MAC_LEN];

    mac_of(pool, secret, binding, payload, payload_len, expected);
    return CRYPTO_memcmp(expected, mac, MAC_LEN) == 0;
}

const char *cp_unseal(apr_pool_t *pool, const char *secret, const char *previous_secret,
                      const char *binding, const char *sealed, const char **error)
{
    const char *dot = strchr(sealed, '.');
    const char *payload;
    const unsigned char *mac;
    apr_size_t payload_len, mac_len;

    if (!dot || strchr(dot + 1, '.')) {
        *error = "the start token is not a token of this site";
        return NULL;
    }
    payload = apr_pdecode_base64(pool, sealed, dot - sealed, APR_ENCODE_BASE64URL,
                                 &payload_len);
    mac = apr_pdecode_base64_binary(pool, dot + 1, APR_ENCODE_STRING, APR_ENCODE_BASE64URL,
                                    &mac_len);
    /* one spelling per token: APR's decoder also takes padding and +/ */
    if (!payload || !mac || mac_len != MAC_LEN
        || strcmp(sealed, seal_spelling(pool, payload, payload_len, mac)) != 0) {
        *error = "the start token is not a token of this site";
        return NULL;
    }
    if (!mac_matches(pool, secret, binding, payload, payload_len, mac)
        && !(previous_secret
             && mac_matches(pool, previous_secret, binding, payload, payload_len, mac))) {
        *error = "the start token was not issued for this location";
        return NULL;
    }
    if (strlen(payload) != payload_len) {
        *error = "the start token holds a NUL byte";
        return NULL;
    }
    return payload;
}
