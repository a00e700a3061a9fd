/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target: sealed tokens (CouchPageTokenSecret). The input after
 * its first byte is a token a client sent, into cp_unseal; it is also a
 * payload, sealed with cp_seal, which must open again to the same payload,
 * with the previous secret too, and not for another location or secret.
 *
 * First byte: bit 0, a previous secret is configured; bit 1, the other
 * location ('0'..'3').
 */
#include "fuzz.h"
#include "couchpage_seal.h"

static const char secret[] = "fuzz-secret-0123456789";
static const char previous[] = "fuzz-previous-secret-9876543210";
static const char *const bindings[] = { "/bands/", "/items/" };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    apr_pool_t *pool;
    const char *text, *previous_secret, *binding, *other, *sealed, *payload, *error;

    if (size < 1) {
        return 0;
    }
    pool = fuzz_pool();
    text = fuzz_cstring(pool, data + 1, size - 1);
    previous_secret = data[0] & 1 ? previous : NULL;
    binding = bindings[(data[0] >> 1) & 1];
    other = bindings[!((data[0] >> 1) & 1)];

    /* what a client sent */
    error = NULL;
    payload = cp_unseal(pool, secret, previous_secret, binding, text, &error);
    if (payload) {
        FUZZ_CHECK(strchr(text, '.'), "%s opened without a MAC", text);
    }
    else {
        FUZZ_CHECK(error && *error, "%s refused without a reason", text);
    }

    /* what the module hands out */
    sealed = cp_seal(pool, secret, binding, text);
    FUZZ_CHECK(sealed && !strchr(sealed, '=') && !strchr(sealed, '+') && !strchr(sealed, '/'),
               "sealed %s as %s, not base64url", text, sealed ? sealed : "(null)");
    error = NULL;
    payload = cp_unseal(pool, secret, previous_secret, binding, sealed, &error);
    FUZZ_CHECK(payload && !strcmp(payload, text), "%s sealed as %s opens as %s (%s)", text,
               sealed, payload ? payload : "(null)", error ? error : "");
    payload = cp_unseal(pool, "another-secret-000000", secret, binding, sealed, &error);
    FUZZ_CHECK(payload && !strcmp(payload, text), "%s does not open with the previous secret",
               sealed);
    payload = cp_unseal(pool, secret, previous_secret, other, sealed, &error);
    FUZZ_CHECK(!payload, "%s sealed for %s opens for %s", sealed, binding, other);
    payload = cp_unseal(pool, previous, NULL, binding, sealed, &error);
    FUZZ_CHECK(!payload, "%s opens with another secret", sealed);

    apr_pool_destroy(pool);
    return 0;
}
