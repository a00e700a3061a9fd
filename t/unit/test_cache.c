/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of couchpage_cache: CouchPageMaxAge's words and the
 * Cache-Control value they make. */
#include "unit.h"
#include "couchpage_cache.h"

/* The value of the words given as one string split at spaces, or the
 * reason they are refused, prefixed "refused: ". */
static const char *control_of(const char *words)
{
    const char *argv[16], *value = NULL, *err;
    char *copy = apr_pstrdup(pool, words), *last, *word;
    int argc = 0;

    for (word = apr_strtok(copy, " ", &last); word && argc < 16;
         word = apr_strtok(NULL, " ", &last)) {
        argv[argc++] = word;
    }
    err = cp_cache_control_parse(pool, argc, argv, &value);
    return err ? apr_pstrcat(pool, "refused: ", err, NULL) : value;
}

static void todays_words_make_todays_header(void **state)
{
    assert_string_equal(control_of("60"), "max-age=60");
    assert_string_equal(control_of("0"), "max-age=0");
    assert_string_equal(control_of("600 public"), "public, max-age=600");
    assert_string_equal(control_of("60 Private"), "private, max-age=60");
    assert_string_equal(control_of("300 PUBLIC"), "public, max-age=300");
    assert_string_equal(control_of("31536000"), "max-age=31536000");
}

static void the_words_are_written_in_one_order(void **state)
{
    assert_string_equal(control_of("60 stale-while-revalidate=30 stale-if-error=600"),
                        "max-age=60, stale-while-revalidate=30, stale-if-error=600");
    assert_string_equal(control_of("60 stale-if-error=600 public stale-while-revalidate=30 "
                                   "s-maxage=300"),
                        "public, max-age=60, s-maxage=300, stale-while-revalidate=30, "
                        "stale-if-error=600");
    assert_string_equal(control_of("60 S-MaxAge=5 PUBLIC"), "public, max-age=60, s-maxage=5");
    assert_string_equal(control_of("10 private stale-if-error=0"),
                        "private, max-age=10, stale-if-error=0");
    assert_string_equal(control_of("0 s-maxage=31536000"), "max-age=0, s-maxage=31536000");
}

static void bad_numbers_are_refused(void **state)
{
    assert_string_equal(control_of("-1"),
                        "refused: '-1' is not a whole number from 0 to 31536000");
    assert_string_equal(control_of("1h"),
                        "refused: '1h' is not a whole number from 0 to 31536000");
    assert_string_equal(control_of("99999999"),
                        "refused: '99999999' is not a whole number from 0 to 31536000");
    assert_string_equal(control_of("60 stale-if-error=1h"),
                        "refused: 'stale-if-error=1h': stale-if-error= takes a whole number "
                        "of seconds from 0 to 31536000");
    assert_string_equal(control_of("60 s-maxage=-5"),
                        "refused: 's-maxage=-5': s-maxage= takes a whole number of seconds "
                        "from 0 to 31536000");
    assert_string_equal(control_of("60 stale-while-revalidate=31536001"),
                        "refused: 'stale-while-revalidate=31536001': stale-while-revalidate= "
                        "takes a whole number of seconds from 0 to 31536000");
    assert_string_equal(control_of("60 stale-if-error="),
                        "refused: 'stale-if-error=': stale-if-error= takes a whole number "
                        "of seconds from 0 to 31536000");
    assert_string_equal(control_of("60 s-maxage"),
                        "refused: 's-maxage': s-maxage= takes a whole number of seconds "
                        "from 0 to 31536000");
}

static void unknown_words_are_refused(void **state)
{
    const char *reason = "' is neither public nor private, nor s-maxage=S, "
                         "stale-while-revalidate=S or stale-if-error=S";

    assert_string_equal(control_of("60 shared"),
                        apr_pstrcat(pool, "refused: 'shared", reason, NULL));
    assert_string_equal(control_of("60 max-age=5"),
                        apr_pstrcat(pool, "refused: 'max-age=5", reason, NULL));
    assert_string_equal(control_of("60 stale-if-errors=5"),
                        apr_pstrcat(pool, "refused: 'stale-if-errors=5", reason, NULL));
    assert_string_equal(control_of("60 no-store"),
                        apr_pstrcat(pool, "refused: 'no-store", reason, NULL));
}

static void contradictions_are_refused(void **state)
{
    assert_string_equal(control_of("60 private s-maxage=30"),
                        "refused: s-maxage is for shared caches, which private keeps the "
                        "page from: give one of them");
    assert_string_equal(control_of("60 s-maxage=30 PRIVATE"),
                        "refused: s-maxage is for shared caches, which private keeps the "
                        "page from: give one of them");
    assert_string_equal(control_of("60 public private"),
                        "refused: public and private contradict each other: give one of them");
    assert_string_equal(control_of("60 public Public"), "refused: 'public' is given twice");
    assert_string_equal(control_of("60 stale-if-error=5 stale-if-error=5"),
                        "refused: 'stale-if-error' is given twice");
    assert_string_equal(control_of("60 s-maxage=5 S-MAXAGE=6"),
                        "refused: 's-maxage' is given twice");
    assert_string_equal(control_of(""),
                        "refused: takes the seconds a page may be kept, then optionally "
                        "public or private, s-maxage=S, stale-while-revalidate=S, "
                        "stale-if-error=S");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        UNIT_TEST(todays_words_make_todays_header),
        UNIT_TEST(the_words_are_written_in_one_order),
        UNIT_TEST(bad_numbers_are_refused),
        UNIT_TEST(unknown_words_are_refused),
        UNIT_TEST(contradictions_are_refused),
    };
    RUN_UNIT_TESTS("cache", tests);
}
