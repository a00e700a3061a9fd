/* SPDX-License-Identifier: Apache-2.0 */
/*
 * couchpage_seal.c: tokens sealed and opened with AES-256-GCM, the key
 * HKDF-SHA-256 of the secret (OpenSSL 3's libcrypto; every return checked).
 * Part of the httpd-free core: no httpd header, no request_rec; the glue
 * holds the keys and the binding.
 */
#include "couchpage_seal.h"

#include <apr_encode.h>
#include <apr_strings.h>
#include <limits.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/params.h>
#include <openssl/rand.h>
#include <string.h>

/* Format 1 was the signed, readable token before it (payload.HMAC). */
#define SEAL_FORMAT 2
#define NONCE_LEN 12
#define TAG_LEN 16
#define KEY_LEN 32
#define HEADER_LEN (1 + NONCE_LEN)

/* HKDF's salt and info name the use, so that the secret's key for tokens
 * is no key of anything else, and a later format gets a key of its own. */
#define HKDF_SALT "mod_couchpage"
#define HKDF_INFO "couchpage token format 2: AES-256-GCM"

/* Not a sealed token at all; or one that does not open here: forged,
 * changed, or sealed for another location or with another secret. */
#define MALFORMED "the start token is not a token of this site"
#define NOT_AUTHENTIC "the start token was not issued for this location"

struct cp_seal_key {
    unsigned char bytes[KEY_LEN];
    EVP_CIPHER *cipher; /* fetched once: an implicit fetch per token costs a lookup */
};

/* what failed, and libcrypto's first reason, taken off the thread's error
 * queue: the next user of the thread (mod_ssl) must not find it there */
static const char *crypto_failure(apr_pool_t *pool, const char *what)
{
    unsigned long code = ERR_get_error();
    char reason[256];

    ERR_clear_error();
    if (!code) {
        return what;
    }
    ERR_error_string_n(code, reason, sizeof(reason));
    return apr_pstrcat(pool, what, " (", reason, ")", NULL);
}

static apr_status_t wipe_key(void *data)
{
    cp_seal_key *key = data;

    OPENSSL_cleanse(key->bytes, KEY_LEN);
    EVP_CIPHER_free(key->cipher);
    key->cipher = NULL;
    return APR_SUCCESS;
}

const char *cp_seal_key_derive(apr_pool_t *pool, const char *secret,
                               const cp_seal_key **key)
{
    cp_seal_key *derived = apr_pcalloc(pool, sizeof(*derived));
    EVP_KDF *kdf;
    EVP_KDF_CTX *ctx = NULL;
    OSSL_PARAM params[5];
    int ok;

    apr_pool_cleanup_register(pool, derived, wipe_key, apr_pool_cleanup_null);
    kdf = EVP_KDF_fetch(NULL, OSSL_KDF_NAME_HKDF, NULL);
    if (kdf) {
        ctx = EVP_KDF_CTX_new(kdf);
        EVP_KDF_free(kdf);
    }
    params[0] = OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, (char *)"SHA256", 0);
    params[1] = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, (char *)secret,
                                                  strlen(secret));
    params[2] = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, (char *)HKDF_SALT,
                                                  sizeof(HKDF_SALT) - 1);
    params[3] = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, (char *)HKDF_INFO,
                                                  sizeof(HKDF_INFO) - 1);
    params[4] = OSSL_PARAM_construct_end();
    ok = ctx && EVP_KDF_derive(ctx, derived->bytes, KEY_LEN, params) == 1;
    EVP_KDF_CTX_free(ctx);
    if (!ok) {
        return crypto_failure(pool, "libcrypto could not derive the key (HKDF-SHA-256)");
    }
    derived->cipher = EVP_CIPHER_fetch(NULL, "AES-256-GCM", NULL);
    if (!derived->cipher) {
        return crypto_failure(pool, "libcrypto has no AES-256-GCM");
    }
    *key = derived;
    return NULL;
}

/* The associated data, after the format byte: the binding. Lengths are
 * ints in EVP's calls. */
static int add_aad(EVP_CIPHER_CTX *ctx, const unsigned char *format, const char *binding,
                   int binding_len)
{
    int len;

    return EVP_CipherUpdate(ctx, NULL, &len, format, 1) == 1
           && EVP_CipherUpdate(ctx, NULL, &len, (const unsigned char *)binding,
                               binding_len) == 1;
}

/* Seals payload with ctx, which holds the key, under nonce: the token, or
 * NULL. */
static const char *seal_one(apr_pool_t *pool, EVP_CIPHER_CTX *ctx, const char *binding,
                            int binding_len, const char *payload, const unsigned char *nonce)
{
    apr_size_t payload_len = strlen(payload);
    unsigned char *raw, *ciphertext;
    int len, final_len;

    if (payload_len > INT_MAX - CP_SEAL_OVERHEAD) {
        return NULL;
    }
    raw = apr_palloc(pool, CP_SEAL_OVERHEAD + payload_len);
    ciphertext = raw + HEADER_LEN;
    raw[0] = SEAL_FORMAT;
    memcpy(raw + 1, nonce, NONCE_LEN);
    /* a new nonce with the key kept: GCM starts over */
    if (EVP_EncryptInit_ex2(ctx, NULL, NULL, raw + 1, NULL) != 1
        || !add_aad(ctx, raw, binding, binding_len)
        || EVP_EncryptUpdate(ctx, ciphertext, &len, (const unsigned char *)payload,
                             (int)payload_len) != 1
        || EVP_EncryptFinal_ex(ctx, ciphertext + len, &final_len) != 1
        || (apr_size_t)(len + final_len) != payload_len
        || EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, TAG_LEN,
                               ciphertext + payload_len) != 1) {
        return NULL;
    }
    return apr_pencode_base64_binary(pool, raw, CP_SEAL_OVERHEAD + payload_len,
                                     APR_ENCODE_BASE64URL, NULL);
}

const char *cp_seal_tokens(apr_pool_t *pool, const cp_seal_key *key, const char *binding,
                           const char **const tokens[], int count)
{
    apr_size_t binding_len = strlen(binding);
    unsigned char *nonces;
    EVP_CIPHER_CTX *ctx;
    const char *sealed = "";
    int i, n = 0;

    for (i = 0; i < count; i++) {
        n += *tokens[i] != NULL;
    }
    if (!n) {
        return NULL;
    }
    if (binding_len > INT_MAX) {
        return "the binding is too long to seal tokens for";
    }
    /* The page's nonces in one draw: the generator costs per call. A nonce
     * never repeats under one key, but by chance: 96 random bits. */
    nonces = apr_palloc(pool, (apr_size_t)n * NONCE_LEN);
    if (RAND_bytes(nonces, n * NONCE_LEN) != 1) {
        return crypto_failure(pool, "libcrypto's random generator failed");
    }
    /* one context, keyed once, for the page's tokens */
    ctx = EVP_CIPHER_CTX_new();
    if (!ctx || EVP_EncryptInit_ex2(ctx, key->cipher, key->bytes, NULL, NULL) != 1) {
        EVP_CIPHER_CTX_free(ctx);
        return crypto_failure(pool, "libcrypto could not set up AES-256-GCM");
    }
    for (i = 0, n = 0; i < count && sealed; i++) {
        if (*tokens[i]) {
            sealed = seal_one(pool, ctx, binding, (int)binding_len, *tokens[i],
                              nonces + (apr_size_t)n++ * NONCE_LEN);
            *tokens[i] = sealed ? sealed : *tokens[i];
        }
    }
    EVP_CIPHER_CTX_free(ctx);
    return sealed ? NULL : crypto_failure(pool, "a token could not be encrypted (AES-256-GCM)");
}

/* Decrypts raw's ciphertext with key into plain: 1 when it is authentic, 0
 * when it is not, -1 when libcrypto failed. */
static int open_with(const cp_seal_key *key, const unsigned char *raw,
                     apr_size_t plain_len, const char *binding, int binding_len,
                     unsigned char *plain)
{
    const unsigned char *ciphertext = raw + HEADER_LEN;
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    int len, final_len, ok, authentic = 0;

    ok = ctx
         && EVP_DecryptInit_ex2(ctx, key->cipher, key->bytes, raw + 1, NULL) == 1
         && add_aad(ctx, raw, binding, binding_len)
         && EVP_DecryptUpdate(ctx, plain, &len, ciphertext, (int)plain_len) == 1
         && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, TAG_LEN,
                                (void *)(ciphertext + plain_len)) == 1;
    /* only the tag's check may fail here: what it fails on is the token */
    if (ok) {
        authentic = EVP_DecryptFinal_ex(ctx, plain + len, &final_len) == 1;
    }
    EVP_CIPHER_CTX_free(ctx);
    if (!ok) {
        return -1;
    }
    if (!authentic) {
        /* what was decrypted of a forgery is not kept */
        OPENSSL_cleanse(plain, plain_len);
    }
    return authentic;
}

cp_unseal_result cp_unseal(apr_pool_t *pool, const cp_seal_key *key,
                           const cp_seal_key *previous_key, const char *binding,
                           const char *sealed, const char **payload, const char **error)
{
    apr_size_t raw_len, binding_len = strlen(binding);
    const unsigned char *raw;
    unsigned char *plain;
    int opened;

    raw = apr_pdecode_base64_binary(pool, sealed, APR_ENCODE_STRING, APR_ENCODE_BASE64URL,
                                    &raw_len);
    /* one spelling per token: APR's decoder also takes padding, +/ and
     * stray low bits in the last character */
    if (!raw || raw_len < CP_SEAL_OVERHEAD || raw_len - CP_SEAL_OVERHEAD > INT_MAX
        || binding_len > INT_MAX
        || strcmp(sealed, apr_pencode_base64_binary(pool, raw, raw_len,
                                                    APR_ENCODE_BASE64URL, NULL)) != 0) {
        *error = MALFORMED;
        return CP_UNSEAL_REFUSED;
    }
    if (raw[0] != SEAL_FORMAT) {
        *error = "the start token is of a format this site does not read";
        return CP_UNSEAL_REFUSED;
    }
    /* the payload, and its NUL: the token's length bounds it */
    plain = apr_palloc(pool, raw_len - CP_SEAL_OVERHEAD + 1);
    opened = open_with(key, raw, raw_len - CP_SEAL_OVERHEAD, binding, (int)binding_len,
                       plain);
    if (opened == 0 && previous_key) {
        opened = open_with(previous_key, raw, raw_len - CP_SEAL_OVERHEAD, binding,
                           (int)binding_len, plain);
    }
    if (opened < 0) {
        *error = crypto_failure(pool, "libcrypto could not decrypt the token (AES-256-GCM)");
        return CP_UNSEAL_FAILED;
    }
    if (!opened) {
        *error = NOT_AUTHENTIC;
        return CP_UNSEAL_REFUSED;
    }
    /* authentic: what cp_seal_tokens sealed, a string without NUL */
    plain[raw_len - CP_SEAL_OVERHEAD] = '\0';
    *payload = (const char *)plain;
    return CP_UNSEAL_OPENED;
}
