/* SPDX-License-Identifier: Apache-2.0 */
/*
 * couchpage_seal: opaque, signed tokens (CouchPageTokenSecret).
 *
 * A sealed token is base64url(payload) "." base64url(HMAC-SHA-256), the MAC
 * taken over a version tag, the binding (what the token is valid for: the
 * location) and the payload, with OpenSSL's HMAC. A token sealed for one
 * location, or with another secret, does not open.
 *
 * Part of the httpd-free core: no httpd header, no request_rec.
 */
#ifndef COUCHPAGE_SEAL_H
#define COUCHPAGE_SEAL_H

#include <apr_pools.h>

/* The shortest secret accepted. */
#define CP_SEAL_MIN_SECRET 16

/* Seals payload for binding with secret. */
const char *cp_seal(apr_pool_t *pool, const char *secret, const char *binding,
                    const char *payload);

/* Opens a sealed token with secret, or else with previous_secret (may be
 * NULL): the payload, or NULL with *error set. */
const char *cp_unseal(apr_pool_t *pool, const char *secret, const char *previous_secret,
                      const char *binding, const char *sealed, const char **error);

#endif
