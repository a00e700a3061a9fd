/* SPDX-License-Identifier: Apache-2.0 */
/*
 * couchpage_seal.c: tokens sealed and opened with AES-256-SIV (RFC 5297,
 * deterministic), the secrets that may seal checked, the key HKDF-SHA-256
 * of the secret (OpenSSL 3's libcrypto; every return checked).
 * Part of the httpd-free core: no httpd header, no request_rec; the glue
 * holds the keys and the binding.
 */
#include "couchpage_seal.h"

#include <apr_encode.h>
#include <apr_strings.h>
#include <ctype.h>
#include <limits.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/params.h>
#include <string.h>
#include <strings.h>

/* Format 1 was the signed, readable token (payload.HMAC), format 2 the
 * AES-256-GCM one, whose random nonce changed a page's tokens, and so its
 * ETag, on every request. */
#define SEAL_FORMAT 3
#define SIV_LEN 16
#define KEY_LEN 64 /* AES-SIV's two keys: CMAC's for the SIV, CTR's */
#define HEADER_LEN (1 + SIV_LEN)
#define CIPHER_NAME "AES-256-SIV"

/* HKDF's salt and info name the use, so that the secret's key for tokens
 * is no key of anything else, and a later format gets a key of its own. */
#define HKDF_SALT "mod_couchpage"
#define HKDF_INFO "couchpage token format 3: AES-256-SIV"

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

/* The secret the shipped examples show (debian/couchpage.conf,
 * conf/couchpage-cluster.conf, docs/scaling.md). */
#define PLACEHOLDER_SECRET "replace with a long random string"

/* Whether a secret's text can hold CP_SEAL_MIN_BITS of randomness: whether
 * the number of texts of its length over the classes of characters it uses
 * (digits, lower case, upper case, the rest of printable ASCII, any other
 * byte) reaches 2^CP_SEAL_MIN_BITS. HKDF has no work factor, so a guess is
 * checked against a sealed token offline as fast as a hash: only
 * randomness keeps a secret. This bounds what a text can hold, so that a
 * short one, or one of a narrow alphabet, is refused; it cannot tell a
 * random text from a sentence of as many letters. */
static int secret_can_hold_enough(const char *secret)
{
    int digit = 0, lower = 0, upper = 0, punct = 0, other = 0;
    const unsigned char *c;
    double texts = 1, enough = 1, alphabet;
    int i;

    for (i = 0; i < CP_SEAL_MIN_BITS; i++) {
        enough *= 2;
    }

    for (c = (const unsigned char *)secret; *c; c++) {
        digit |= *c >= '0' && *c <= '9';
        lower |= *c >= 'a' && *c <= 'z';
        upper |= *c >= 'A' && *c <= 'Z';
        punct |= *c >= 0x20 && *c < 0x7f && !isalnum(*c);
        other |= *c < 0x20 || *c >= 0x7f;
    }
    alphabet = 10 * digit + 26 * lower + 26 * upper + 33 * punct + 161 * other;
    for (c = (const unsigned char *)secret; *c; c++) {
        texts *= alphabet;
        if (texts >= enough) {
            return 1;
        }
    }
    return 0;
}

/* How many different bytes secret has: a long run of few characters is no
 * random text, whatever its alphabet. */
static int secret_variety(const char *secret)
{
    unsigned char seen[256] = { 0 };
    const unsigned char *c;
    int distinct = 0;

    for (c = (const unsigned char *)secret; *c; c++) {
        distinct += !seen[*c];
        seen[*c] = 1;
    }
    return distinct;
}

/* Why one secret may not seal, or NULL. */
static const char *secret_fault(apr_pool_t *pool, const char *secret)
{
    if (strcasecmp(secret, PLACEHOLDER_SECRET) == 0) {
        return "the examples' placeholder is no secret; replace it with a random string "
               "of your own (" CP_SEAL_SECRET_ADVICE ")";
    }
    if (strlen(secret) < CP_SEAL_MIN_SECRET || !secret_can_hold_enough(secret)
        || secret_variety(secret) < CP_SEAL_MIN_VARIETY) {
        return apr_psprintf(pool, "a secret must hold at least %d random bytes: %d "
                            "characters or more, of a wide alphabet, with at least %d "
                            "different ones (" CP_SEAL_SECRET_ADVICE ")",
                            CP_SEAL_MIN_BITS / 8, CP_SEAL_MIN_SECRET, CP_SEAL_MIN_VARIETY);
    }
    return NULL;
}

/* Whether secret, and previous when not NULL, may seal: NULL, or why not
 * (cp_seal_keys_derive). */
static const char *secrets_fault(apr_pool_t *pool, const char *secret, const char *previous)
{
    const char *fault = secret_fault(pool, secret);

    if (!fault && previous && (fault = secret_fault(pool, previous)) != NULL) {
        fault = apr_pstrcat(pool, "the previous secret: ", fault, NULL);
    }
    return fault;
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
    derived->cipher = EVP_CIPHER_fetch(NULL, CIPHER_NAME, NULL);
    if (!derived->cipher || EVP_CIPHER_get_key_length(derived->cipher) != KEY_LEN) {
        return crypto_failure(pool, "libcrypto has no " CIPHER_NAME);
    }
    *key = derived;
    return NULL;
}

const char *cp_seal_keys_derive(apr_pool_t *pool, const char *secret, const char *previous,
                                const cp_seal_key **key, const cp_seal_key **previous_key)
{
    const char *reason = secrets_fault(pool, secret, previous);

    *previous_key = NULL;
    if (!reason) {
        reason = cp_seal_key_derive(pool, secret, key);
    }
    if (!reason && previous) {
        reason = cp_seal_key_derive(pool, previous, previous_key);
    }
    return reason;
}

/* The associated data, the S2V's components before the plaintext: the
 * format byte, then the binding. Lengths are ints in EVP's calls. */
static int add_aad(EVP_CIPHER_CTX *ctx, const char *binding, int binding_len)
{
    static const unsigned char format = SEAL_FORMAT;
    int len;

    return EVP_CipherUpdate(ctx, NULL, &len, &format, 1) == 1
           && EVP_CipherUpdate(ctx, NULL, &len, (const unsigned char *)binding,
                               binding_len) == 1;
}

/* Seals payload (not empty) with ctx and key: the token, or NULL. */
static const char *seal_one(apr_pool_t *pool, EVP_CIPHER_CTX *ctx, const cp_seal_key *key,
                            const char *binding, int binding_len, const char *payload)
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
    /* keyed for each token: OpenSSL's SIV context does one operation per
     * key set; the plaintext in one call, as SIV needs it whole */
    if (EVP_EncryptInit_ex2(ctx, NULL, key->bytes, NULL, NULL) != 1
        || !add_aad(ctx, binding, binding_len)
        || EVP_EncryptUpdate(ctx, ciphertext, &len, (const unsigned char *)payload,
                             (int)payload_len) != 1
        || EVP_EncryptFinal_ex(ctx, ciphertext + len, &final_len) != 1
        || (apr_size_t)(len + final_len) != payload_len
        || EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, SIV_LEN, raw + 1) != 1) {
        return NULL;
    }
    return apr_pencode_base64_binary(pool, raw, CP_SEAL_OVERHEAD + payload_len,
                                     APR_ENCODE_BASE64URL, NULL);
}

const char *cp_seal_tokens(apr_pool_t *pool, const cp_seal_key *key, const char *binding,
                           const char **const tokens[], int count)
{
    apr_size_t binding_len = strlen(binding);
    EVP_CIPHER_CTX *ctx;
    const char *sealed = "";
    int i, n = 0;

    for (i = 0; i < count; i++) {
        if (*tokens[i] && !**tokens[i]) {
            /* OpenSSL 3.0's SIV takes no empty plaintext; no token is empty */
            return "an empty token cannot be sealed";
        }
        n += *tokens[i] != NULL;
    }
    if (!n) {
        return NULL;
    }
    if (binding_len > INT_MAX) {
        return "the binding is too long to seal tokens for";
    }
    /* one context for the page's tokens, the cipher set once */
    ctx = EVP_CIPHER_CTX_new();
    if (!ctx || EVP_EncryptInit_ex2(ctx, key->cipher, NULL, NULL, NULL) != 1) {
        EVP_CIPHER_CTX_free(ctx);
        return crypto_failure(pool, "libcrypto could not set up " CIPHER_NAME);
    }
    for (i = 0; i < count && sealed; i++) {
        if (*tokens[i]) {
            sealed = seal_one(pool, ctx, key, binding, (int)binding_len, *tokens[i]);
            *tokens[i] = sealed ? sealed : *tokens[i];
        }
    }
    EVP_CIPHER_CTX_free(ctx);
    return sealed ? NULL : crypto_failure(pool, "a token could not be encrypted (" CIPHER_NAME ")");
}

/* Decrypts raw's ciphertext with key into plain: 1 when it is authentic, 0
 * when it is not, -1 when libcrypto failed. */
static int open_with(const cp_seal_key *key, const unsigned char *raw,
                     apr_size_t plain_len, const char *binding, int binding_len,
                     unsigned char *plain)
{
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    int len, final_len, ok, authentic = 0;

    /* the SIV first: decrypting checks it */
    ok = ctx
         && EVP_DecryptInit_ex2(ctx, key->cipher, key->bytes, NULL, NULL) == 1
         && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, SIV_LEN, (void *)(raw + 1)) == 1
         && add_aad(ctx, binding, binding_len);
    /* only the SIV's check may fail here: what it fails on is the token */
    if (ok) {
        authentic = EVP_DecryptUpdate(ctx, plain, &len, raw + HEADER_LEN, (int)plain_len) == 1
                    && EVP_DecryptFinal_ex(ctx, plain + len, &final_len) == 1;
    }
    EVP_CIPHER_CTX_free(ctx);
    if (!ok) {
        return -1;
    }
    if (!authentic) {
        /* what was decrypted of a forgery is not kept, nor a trace of it
         * on the thread's error queue */
        OPENSSL_cleanse(plain, plain_len);
        ERR_clear_error();
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
    if (!raw || raw_len <= CP_SEAL_OVERHEAD || raw_len - CP_SEAL_OVERHEAD > INT_MAX
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
        *error = crypto_failure(pool, "libcrypto could not decrypt the token (" CIPHER_NAME ")");
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
