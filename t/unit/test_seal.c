/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of couchpage_seal: secrets checked, tokens sealed
 * (AES-256-SIV) and opened; they link the core alone. */
#include "unit.h"
#include "couchpage_page.h"
#include "couchpage_seal.h"

#include <apr_encode.h>
#include <openssl/err.h>

#define SECRET "q3Jx0Vn8ZbL2rT6yWc1Hs9Km4Pd7Fa5GeNuRoYiXtBw="
#define OLD_SECRET "0f9a6c2e7b41d8935ac07e16b2d94f58c3a1e7062db94c8f5e3a71b0d6c24f98"
#define BINDING "http://h/db/_design/d/_view/v\n/bands/"
#define PAYLOAD "[\"Nirvana\",\"nirvana-1994\"]"

static const char BASE64URL[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

static const cp_seal_key *key_of(const char *secret)
{
    const cp_seal_key *key = NULL;
    const char *reason = cp_seal_key_derive(pool, secret, &key);

    if (reason || !key) {
        fail_msg("no key: %s", reason ? reason : "(none)");
    }
    return key;
}

static const char *seal(const cp_seal_key *key, const char *binding, const char *payload)
{
    const char *sealed = payload;
    const char **const tokens[] = { &sealed };
    const char *error = cp_seal_tokens(pool, key, binding, tokens, 1);

    if (error) {
        fail_msg("%s not sealed: %s", payload, error);
    }
    return sealed;
}

/* The payload sealed opens to, or NULL; *error is then the reason, and a
 * refused token is the client's error, never libcrypto's failure. */
static const char *opened(const cp_seal_key *key, const cp_seal_key *previous,
                          const char *binding, const char *sealed, const char **error)
{
    const char *payload = NULL;
    cp_unseal_result result;

    *error = NULL;
    result = cp_unseal(pool, key, previous, binding, sealed, &payload, error);
    if (result == CP_UNSEAL_OPENED) {
        return payload;
    }
    if (result != CP_UNSEAL_REFUSED || !*error || !**error) {
        fail_msg("'%s' neither opened nor refused with a reason", sealed);
    }
    return NULL;
}

static unsigned char *raw_of(const char *sealed, apr_size_t *len)
{
    unsigned char *raw = (unsigned char *)apr_pdecode_base64_binary(
        pool, sealed, APR_ENCODE_STRING, APR_ENCODE_BASE64URL, len);

    assert_non_null(raw);
    return raw;
}

static const char *text_of(const unsigned char *raw, apr_size_t len)
{
    return apr_pencode_base64_binary(pool, raw, len, APR_ENCODE_BASE64URL, NULL);
}

static void sealed_tokens_open_with_their_secret_and_binding(void **state)
{
    const cp_seal_key *key = key_of(SECRET);
    const char *payloads[] = { PAYLOAD, "[\"n\\u00e9\",\"\xc3\xa9t\xc3\xa9\",3]", "last", "x" };
    const char *sealed, *error;
    apr_size_t i, raw_len;

    for (i = 0; i < sizeof(payloads) / sizeof(payloads[0]); i++) {
        sealed = seal(key, BINDING, payloads[i]);
        /* URL-safe, unpadded, one piece */
        assert_int_equal(strspn(sealed, BASE64URL), strlen(sealed));
        /* its bytes: the format byte, the SIV and the ciphertext (the
         * payload's length, no more: that much it tells), 17 bytes more
         * than the payload */
        raw_of(sealed, &raw_len);
        assert_int_equal(raw_len, CP_SEAL_OVERHEAD + strlen(payloads[i]));
        assert_int_equal(strlen(sealed), (4 * raw_len + 2) / 3);
        assert_string_equal(opened(key, NULL, BINDING, sealed, &error), payloads[i]);
        assert_null(error);
    }
}

/* The base64url of word wherever it could start in a token's bytes (at
 * offset 0, 1 or 2 of a 3-byte group), without the characters it shares
 * with the bytes either side. */
static void assert_no_base64_of(const char *sealed, const char *word)
{
    apr_size_t k, len = strlen(word);

    for (k = 0; k < 3; k++) {
        char *shifted = apr_pcalloc(pool, k + len);
        const char *text;
        apr_size_t first = (8 * k + 5) / 6, end = 8 * (k + len) / 6;

        memcpy(shifted + k, word, len);
        text = text_of((unsigned char *)shifted, k + len);
        text = apr_pstrndup(pool, text + first, end - first);
        if (strstr(sealed, text)) {
            fail_msg("%s holds %s, base64url of %s", sealed, text, word);
        }
    }
    if (strstr(sealed, word)) {
        fail_msg("%s holds %s", sealed, word);
    }
}

static void a_sealed_token_shows_nothing_of_its_key_or_id(void **state)
{
    const cp_seal_key *key = key_of(SECRET);
    const char *words[] = { PAYLOAD, "Nirvana", "nirvana-1994", "[\"Nirvana\"", "1994" };
    const char *sealed, *error;
    apr_size_t i, raw_len;
    const unsigned char *raw;

    sealed = seal(key, BINDING, PAYLOAD);
    raw = raw_of(sealed, &raw_len);
    for (i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
        assert_no_base64_of(sealed, words[i]);
        assert_null(memmem(raw, raw_len, words[i], strlen(words[i])));
    }
    assert_int_equal(raw_len, CP_SEAL_OVERHEAD + strlen(PAYLOAD));
    assert_int_equal(CP_SEAL_OVERHEAD, 17);
    assert_string_equal(opened(key, NULL, BINDING, sealed, &error), PAYLOAD);
}

static void the_same_token_key_and_binding_seal_to_the_same_text(void **state)
{
    const cp_seal_key *key = key_of(SECRET), *other = key_of(OLD_SECRET);
    const char *sealed = seal(key, BINDING, PAYLOAD), *again, *error;
    apr_size_t len;

    /* deterministic: what lets a page keep its ETag */
    again = seal(key_of(SECRET), BINDING, PAYLOAD);
    assert_string_equal(sealed, again);
    assert_string_equal(opened(key, NULL, BINDING, again, &error), PAYLOAD);
    /* another binding, key or payload: another text, its SIV too */
    again = seal(key, "http://h/db/_design/d/_view/v\n/other/", PAYLOAD);
    assert_string_not_equal(sealed, again);
    assert_int_not_equal(memcmp(raw_of(again, &len) + 1, raw_of(sealed, &len) + 1, 16), 0);
    again = seal(other, BINDING, PAYLOAD);
    assert_string_not_equal(sealed, again);
    assert_int_not_equal(memcmp(raw_of(again, &len) + 1, raw_of(sealed, &len) + 1, 16), 0);
    again = seal(key, BINDING, "[\"Nirvana\",\"nirvana-1995\"]");
    assert_string_not_equal(sealed, again);
    assert_int_not_equal(memcmp(raw_of(again, &len) + 1, raw_of(sealed, &len) + 1, 16), 0);
}

static void a_page_s_tokens_are_sealed_together(void **state)
{
    const cp_seal_key *key = key_of(SECRET);
    const char *next = "[21,\"a\"]", *prev = NULL, *last = "last", *same = "[21,\"a\"]";
    const char **const tokens[] = { &next, &prev, &last, &same };
    const char *error;
    apr_size_t len;

    assert_null(cp_seal_tokens(pool, key, BINDING, tokens, 4));
    assert_null(prev);
    assert_string_equal(opened(key, NULL, BINDING, next, &error), "[21,\"a\"]");
    assert_string_equal(opened(key, NULL, BINDING, last, &error), "last");
    assert_string_equal(opened(key, NULL, BINDING, same, &error), "[21,\"a\"]");
    /* the same token twice on a page: the same text; each as sealed alone */
    assert_string_equal(next, same);
    assert_string_equal(next, seal(key, BINDING, "[21,\"a\"]"));
    assert_string_equal(last, seal(key, BINDING, "last"));
    assert_int_not_equal(memcmp(raw_of(next, &len) + 1, raw_of(last, &len) + 1, 16), 0);
    /* nothing to seal: nothing done */
    assert_null(cp_seal_tokens(pool, key, BINDING, tokens + 1, 1));
    assert_null(cp_seal_tokens(pool, key, BINDING, tokens, 0));
}

/* cp_page_seal_tokens seals every token the page hands out, and the current
 * page's own (the client's, sealed already) not again. */
static void a_page_is_sealed_in_the_core(void **state)
{
    const cp_seal_key *key = key_of(SECRET);
    cp_page page;
    cp_page_link link = { 2, "[2,\"b\"]", 0, 0 }, current = { 3, "sealed", 1, 0 };
    const char *error;

    memset(&page, 0, sizeof(page));
    page.next = "[21,\"a\"]";
    page.last = "last";
    page.pages = apr_array_make(pool, 2, sizeof(cp_page_link));
    APR_ARRAY_PUSH(page.pages, cp_page_link) = link;
    APR_ARRAY_PUSH(page.pages, cp_page_link) = current;
    assert_null(cp_page_seal_tokens(pool, key, BINDING, &page));
    assert_null(page.prev);
    assert_string_equal(opened(key, NULL, BINDING, page.next, &error), "[21,\"a\"]");
    assert_string_equal(opened(key, NULL, BINDING, page.last, &error), "last");
    assert_string_equal(opened(key, NULL, BINDING,
                               APR_ARRAY_IDX(page.pages, 0, cp_page_link).start, &error),
                        "[2,\"b\"]");
    assert_string_equal(APR_ARRAY_IDX(page.pages, 1, cp_page_link).start, "sealed");
}

static void an_empty_token_is_not_sealed(void **state)
{
    const cp_seal_key *key = key_of(SECRET);
    const char *next = "[1]", *empty = "";
    const char **const tokens[] = { &next, &empty };
    const char *error;

    /* the module issues none; OpenSSL 3.0's SIV could not seal it */
    assert_string_equal(cp_seal_tokens(pool, key, BINDING, tokens, 2),
                        "an empty token cannot be sealed");
    assert_string_equal(empty, "");
    /* nor opens one: the format byte and an SIV alone */
    assert_null(opened(key, NULL, BINDING, "AwAAAAAAAAAAAAAAAAAAAAA", &error));
    assert_string_equal(error, "the start token is not a token of this site");
}

static void the_previous_secret_still_opens_tokens(void **state)
{
    const cp_seal_key *key = key_of(SECRET), *old = key_of(OLD_SECRET);
    const cp_seal_key *retired = key_of("a secret this site no longer has");
    const char *sealed = seal(old, BINDING, "[1,\"a\"]");
    const char *error;

    assert_string_equal(opened(key, old, BINDING, sealed, &error), "[1,\"a\"]");
    /* the current one first, the previous one too */
    assert_string_equal(opened(key, old, BINDING, seal(key, BINDING, "[2,\"b\"]"), &error),
                        "[2,\"b\"]");
    assert_null(opened(key, NULL, BINDING, sealed, &error));
    assert_string_equal(error, "the start token was not issued for this location");
    assert_null(opened(key, old, BINDING, seal(retired, BINDING, "[1,\"a\"]"), &error));
    assert_string_equal(error, "the start token was not issued for this location");
    /* the same secret derives the same key */
    assert_string_equal(opened(key_of(SECRET), NULL, BINDING, seal(key, BINDING, "[3]"),
                               &error), "[3]");
}

/* A secret seals when it can hold 32 random bytes (what openssl rand
 * -base64 32 or -hex 32 makes) and is not the examples' placeholder, the
 * previous one too; no message shows a secret. */
static void weak_and_placeholder_secrets_are_refused(void **state)
{
    const cp_seal_key *key = NULL, *previous_key = NULL;
    const char *reason, *weak;

    assert_null(cp_seal_keys_derive(pool, SECRET, NULL, &key, &previous_key));
    assert_non_null(key);
    assert_null(previous_key);
    assert_null(cp_seal_keys_derive(pool, SECRET, OLD_SECRET, &key, &previous_key));
    assert_non_null(previous_key);
    assert_ptr_not_equal(key, previous_key);
    /* base64 of 32 bytes without a + or /: 44 letters and digits, enough */
    assert_null(cp_seal_keys_derive(pool, "Zq3Jx0Vn8ZbL2rT6yWc1Hs9Km4Pd7Fa5GeNuRoYiXtBw",
                                    NULL, &key, &previous_key));
    assert_null(previous_key);
    /* too short, however varied: 31 characters, or base64 of 24 bytes */
    reason = cp_seal_keys_derive(pool, "aB3$eF6^hI9*kL2@nO5#qR8!tU1%wX4", NULL, &key,
                                 &previous_key);
    assert_non_null(reason);
    assert_non_null(strstr(reason, "a secret must hold at least 32 random bytes"));
    assert_non_null(strstr(reason, "openssl rand -base64 32"));
    weak = reason;
    assert_string_equal(cp_seal_keys_derive(pool, "q3Jx0Vn8ZbL2rT6yWc1Hs9Km4Pd7Fa5G", NULL,
                                            &key, &previous_key), weak);
    /* long, of a narrow alphabet: the test secrets of old, a phrase of lower
     * case and spaces, 40 decimal digits, 64 hex digits of one case but
     * with few different ones */
    assert_string_equal(cp_seal_keys_derive(pool, "the secret of the logs test", NULL, &key,
                                            &previous_key), weak);
    assert_string_equal(cp_seal_keys_derive(pool, "correct horse battery staple plus one more",
                                            NULL, &key, &previous_key), weak);
    assert_string_equal(cp_seal_keys_derive(pool, "1234567890123456789012345678901234567890",
                                            NULL, &key, &previous_key), weak);
    assert_string_equal(cp_seal_keys_derive(pool, "abababababababababababababababababababab"
                                            "abababababababababababab", NULL, &key,
                                            &previous_key), weak);
    assert_string_equal(cp_seal_keys_derive(pool, "aB1!aB1!aB1!aB1!aB1!aB1!aB1!aB1!aB1!aB1!"
                                            "aB1!", NULL, &key, &previous_key), weak);
    /* the previous secret is held to the same, and named */
    reason = cp_seal_keys_derive(pool, SECRET, "too short", &key, &previous_key);
    assert_string_equal(reason, apr_pstrcat(pool, "the previous secret: ", weak, NULL));
    reason = cp_seal_keys_derive(pool, "Replace With A Long Random String", NULL, &key,
                                 &previous_key);
    assert_non_null(reason);
    assert_non_null(strstr(reason, "the examples' placeholder is no secret"));
    assert_string_equal(cp_seal_keys_derive(pool, SECRET, "replace with a long random string",
                                            &key, &previous_key),
                        apr_pstrcat(pool, "the previous secret: ", reason, NULL));
}

static void tokens_of_another_location_or_secret_do_not_open(void **state)
{
    const cp_seal_key *key = key_of(SECRET);
    const char *sealed = seal(key, BINDING, PAYLOAD);
    const char *error;

    assert_null(opened(key, NULL, "http://h/db/_all_docs\n/bands/", sealed, &error));
    assert_string_equal(error, "the start token was not issued for this location");
    assert_null(opened(key, NULL, BINDING "x", sealed, &error));
    assert_null(opened(key, NULL, "", sealed, &error));
    assert_null(opened(key_of("another secret of 16+ chars"), NULL, BINDING, sealed, &error));
    assert_string_equal(error, "the start token was not issued for this location");
    /* nor with the two secrets swapped: the previous one is not the current */
    assert_null(opened(key_of("another secret of 16+ chars"), key_of(OLD_SECRET), BINDING,
                       sealed, &error));
}

static void a_token_changed_in_any_byte_or_character_does_not_open(void **state)
{
    const cp_seal_key *key = key_of(SECRET);
    const char *sealed = seal(key, BINDING, PAYLOAD);
    const unsigned char flips[] = { 0x01, 0x80, 0xff };
    const char *error;
    apr_size_t raw_len, i, j;
    unsigned char *raw = raw_of(sealed, &raw_len);
    char *changed;

    for (i = 0; i < raw_len; i++) {
        for (j = 0; j < sizeof(flips); j++) {
            raw[i] ^= flips[j];
            if (opened(key, key, BINDING, text_of(raw, raw_len), &error)) {
                fail_msg("byte %zu changed by %#x still opens", i, flips[j]);
            }
            raw[i] ^= flips[j];
        }
    }
    /* the format byte: a format this site does not read, the AES-256-GCM
     * one (2) of unreleased code too */
    for (i = 0; i < 3; i++) {
        raw[0] = (unsigned char)i;
        assert_null(opened(key, NULL, BINDING, text_of(raw, raw_len), &error));
        assert_string_equal(error, "the start token is of a format this site does not read");
    }
    raw[0] = 3;
    /* refusals leave nothing on libcrypto's error queue (mod_ssl's next) */
    assert_int_equal(ERR_peek_error(), 0);
    for (i = 0; sealed[i]; i++) {
        changed = apr_pstrdup(pool, sealed);
        changed[i] = changed[i] == 'A' ? 'B' : 'A';
        if (opened(key, NULL, BINDING, changed, &error)) {
            fail_msg("character %zu changed still opens", i);
        }
    }
}

static void truncated_short_and_garbage_tokens_are_refused(void **state)
{
    const cp_seal_key *key = key_of(SECRET);
    const char *sealed = seal(key, BINDING, "[1,\"ab\"]");
    const char *bad[] = {
        "", ".", "A", "abc", "[1,\"a\"]", "a.b.c", "!!!", "YQ", "YQ==",
        "AAAAAAAAAAAAAAAAAAAAAAA", /* 17 bytes of zeros: too short to forge */
        "AwAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", /* format 3, SIV and ciphertext all zero */
        "AwAAAAAAAAAAAAAAAAAAAAAAAA", /* format 3, one byte of ciphertext */
        "\xff\xfe", "A\nB", "AAAA AAAA",
        /* the signed tokens of before: base64url of [1950,"book-280"], a dot, a MAC */
        "WzE5NTAsImJvb2stMjgwIl0.3q2-796tvu_erb7v3q2-796tvu_erb7v3q2-796tvu8",
    };
    const char *error;
    apr_size_t i, len = strlen(sealed);
    char *changed;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        if (opened(key, key, BINDING, bad[i], &error)) {
            fail_msg("'%s' should not open", bad[i]);
        }
    }
    assert_null(opened(key, NULL, BINDING, bad[sizeof(bad) / sizeof(bad[0]) - 1], &error));
    assert_string_equal(error, "the start token is not a token of this site");
    /* every truncation, and more characters */
    for (i = 0; i < len; i++) {
        if (opened(key, NULL, BINDING, apr_pstrndup(pool, sealed, i), &error)) {
            fail_msg("the first %zu characters open", i);
        }
    }
    assert_null(opened(key, NULL, BINDING, apr_pstrcat(pool, sealed, "A", NULL), &error));
    assert_null(opened(key, NULL, BINDING, apr_pstrcat(pool, sealed, "AAAA", NULL), &error));
    /* other spellings of the same bytes: padded, or a last character's
     * unused low bits set (17 + 8 bytes leave 2 of them) */
    assert_int_equal((CP_SEAL_OVERHEAD + 8) % 3, 1);
    assert_null(opened(key, NULL, BINDING, apr_pstrcat(pool, sealed, "==", NULL), &error));
    changed = apr_pstrdup(pool, sealed);
    changed[len - 1] = BASE64URL[(strchr(BASE64URL, changed[len - 1]) - BASE64URL) ^ 1];
    assert_null(opened(key, NULL, BINDING, changed, &error));
    assert_string_equal(error, "the start token is not a token of this site");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        UNIT_TEST(sealed_tokens_open_with_their_secret_and_binding),
        UNIT_TEST(a_sealed_token_shows_nothing_of_its_key_or_id),
        UNIT_TEST(the_same_token_key_and_binding_seal_to_the_same_text),
        UNIT_TEST(a_page_s_tokens_are_sealed_together),
        UNIT_TEST(a_page_is_sealed_in_the_core),
        UNIT_TEST(an_empty_token_is_not_sealed),
        UNIT_TEST(the_previous_secret_still_opens_tokens),
        UNIT_TEST(weak_and_placeholder_secrets_are_refused),
        UNIT_TEST(tokens_of_another_location_or_secret_do_not_open),
        UNIT_TEST(a_token_changed_in_any_byte_or_character_does_not_open),
        UNIT_TEST(truncated_short_and_garbage_tokens_are_refused),
    };
    RUN_UNIT_TESTS("seal", tests);
}
