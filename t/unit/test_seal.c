/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of couchpage_seal: tokens sealed and opened; they link the core
 * alone. */
#include "unit.h"
#include "couchpage_seal.h"

#define SECRET "correct horse battery staple"
#define OLD_SECRET "an older secret of this site"
#define BINDING "http://h/db/_design/d/_view/v\n/bands/"

static void sealed_tokens_open_with_their_secret_and_binding(void **state)
{
    const char *payload = "[\"Nirvana\",\"n\\u00e9\"]";
    const char *sealed = cp_seal(pool, SECRET, BINDING, payload);
    const char *error = NULL;

    /* opaque and URL-safe: base64url, a dot, base64url */
    assert_null(strchr(sealed, '['));
    assert_int_equal(strspn(sealed, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                    "0123456789-_."), strlen(sealed));
    assert_string_equal(cp_unseal(pool, SECRET, NULL, BINDING, sealed, &error), payload);
}

static void the_previous_secret_still_opens_tokens(void **state)
{
    const char *sealed = cp_seal(pool, OLD_SECRET, BINDING, "[1,\"a\"]");
    const char *error = NULL;

    assert_string_equal(cp_unseal(pool, SECRET, OLD_SECRET, BINDING, sealed, &error),
                        "[1,\"a\"]");
    assert_null(cp_unseal(pool, SECRET, NULL, BINDING, sealed, &error));
    assert_non_null(strstr(error, "not issued for this location"));
}

static void foreign_and_tampered_tokens_do_not_open(void **state)
{
    const char *sealed = cp_seal(pool, SECRET, BINDING, "[1,\"a\"]");
    const char *other = cp_seal(pool, SECRET, BINDING, "[2,\"b\"]");
    const char *dot = strchr(sealed, '.'), *other_dot = strchr(other, '.');
    const char *error;
    char *tampered;
    const char *bad[] = { "", ".", "abc", "[1,\"a\"]", "a.b.c", "!!!.???", "YQ.YQ" };
    size_t i;

    /* another location */
    error = NULL;
    assert_null(cp_unseal(pool, SECRET, NULL, "http://h/db/_all_docs\n/x/", sealed, &error));
    assert_non_null(error);
    /* another secret */
    error = NULL;
    assert_null(cp_unseal(pool, "another secret of 16+ chars", NULL, BINDING, sealed, &error));
    assert_non_null(error);
    /* one payload with another's MAC */
    tampered = apr_pstrcat(pool, apr_pstrndup(pool, sealed, dot - sealed), other_dot, NULL);
    error = NULL;
    assert_null(cp_unseal(pool, SECRET, NULL, BINDING, tampered, &error));
    assert_non_null(error);
    /* one flipped character */
    tampered = apr_pstrdup(pool, sealed);
    tampered[1] = tampered[1] == 'A' ? 'B' : 'A';
    error = NULL;
    assert_null(cp_unseal(pool, SECRET, NULL, BINDING, tampered, &error));
    assert_non_null(error);
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        error = NULL;
        if (cp_unseal(pool, SECRET, NULL, BINDING, bad[i], &error) || !error) {
            fail_msg("'%s' should not open", bad[i]);
        }
    }
    /* another spelling of the same bytes: padded */
    error = NULL;
    assert_null(cp_unseal(pool, SECRET, NULL, BINDING, apr_pstrcat(pool, sealed, "=", NULL),
                          &error));
    assert_non_null(error);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        UNIT_TEST(sealed_tokens_open_with_their_secret_and_binding),
        UNIT_TEST(the_previous_secret_still_opens_tokens),
        UNIT_TEST(foreign_and_tampered_tokens_do_not_open),
    };
    RUN_UNIT_TESTS("seal", tests);
}
