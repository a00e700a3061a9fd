/* SPDX-License-Identifier: Apache-2.0 */
/*
 * couchpage_seal: opaque tokens (CouchPageTokenSecret), encrypted and
 * authenticated with AES-256-SIV (RFC 5297; OpenSSL's libcrypto).
 *
 * A sealed token is base64url, without padding, of
 *
 *     format (1 byte, 3) | SIV (16 bytes) | ciphertext
 *
 * the ciphertext as long as the payload; the associated data is the format
 * byte and the binding (what the token is valid for: the location's view
 * and path). The key (64 bytes) is HKDF-SHA-256 of the secret, derived
 * once. SIV is deterministic: the same payload under the same key and
 * binding always seals to the same token, so a page and its ETag stay the
 * same from one request to the next. Nothing of the payload can be read
 * from a token but its length and whether two tokens hold the same
 * payload; a token sealed for another binding, with another secret, or
 * changed in any byte does not open. Which secrets may seal is said here
 * too (cp_seal_keys_derive), for CouchPageTokenSecret.
 *
 * Below tokens and pages, it seals strings and knows no page:
 * couchpage_page seals the tokens a page hands out (cp_page_seal_tokens),
 * and couchpage_token counts a sealed token's length (CP_SEAL_OVERHEAD).
 *
 * Part of the httpd-free core: no httpd header, no request_rec.
 */
#ifndef COUCHPAGE_SEAL_H
#define COUCHPAGE_SEAL_H

#include <apr_pools.h>

/* What a secret must be to seal: at least CP_SEAL_MIN_SECRET characters,
 * whose length times the bits of its alphabet (the classes of characters
 * it uses) is at least CP_SEAL_MIN_BITS, with at least CP_SEAL_MIN_VARIETY
 * different characters; CP_SEAL_SECRET_ADVICE says how to make one. */
#define CP_SEAL_MIN_SECRET 32
#define CP_SEAL_MIN_BITS 256
#define CP_SEAL_MIN_VARIETY 12
#define CP_SEAL_SECRET_ADVICE "such as: openssl rand -base64 32"

/* The format byte and the SIV: a token's bytes are the payload's and
 * these. */
#define CP_SEAL_OVERHEAD (1 + 16)

/* A key derived from a secret: opaque. */
typedef struct cp_seal_key cp_seal_key;

/* Derives the key of secret into *key, in pool, which wipes it when it is
 * cleared: NULL, or why libcrypto could not. */
const char *cp_seal_key_derive(apr_pool_t *pool, const char *secret,
                               const cp_seal_key **key);

/* CouchPageTokenSecret SECRET [PREVIOUS]: when secret, and previous when
 * not NULL, may seal tokens, derives their keys (cp_seal_key_derive) into
 * *key and *previous_key (NULL without previous): NULL, or why not, in
 * words that never show a secret (a message may end up in a log): one is
 * the placeholder the shipped examples show, which is public and so seals
 * nothing, or holds too little randomness (CP_SEAL_MIN_SECRET and the
 * rest above): HKDF has no work factor, so a sealed token lets anyone check
 * guesses of the secret offline, as fast as SHA-256 runs. */
const char *cp_seal_keys_derive(apr_pool_t *pool, const char *secret, const char *previous,
                                const cp_seal_key **key, const cp_seal_key **previous_key);

/* Seals, in place, each of a page's count tokens that is not NULL (nor
 * empty), for binding with key: NULL, or why it could not (the server's
 * trouble, never the client's; the tokens are then not all sealed). */
const char *cp_seal_tokens(apr_pool_t *pool, const cp_seal_key *key, const char *binding,
                           const char **const tokens[], int count);

/* What cp_unseal made of a token. */
typedef enum {
    CP_UNSEAL_OPENED,
    CP_UNSEAL_REFUSED,  /* not a token sealed here for this binding: the client's error */
    CP_UNSEAL_FAILED    /* libcrypto failed: the server's */
} cp_unseal_result;

/* Opens sealed with key, or else with previous_key (may be NULL): on
 * CP_UNSEAL_OPENED, *payload; otherwise *error says why. */
cp_unseal_result cp_unseal(apr_pool_t *pool, const cp_seal_key *key,
                           const cp_seal_key *previous_key, const char *binding,
                           const char *sealed, const char **payload, const char **error);

#endif
