/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of couchpage_args: query strings and Accept headers; they link
 * the core alone. */
#include "unit.h"
#include "couchpage_args.h"

static void no_query_string_means_defaults(void **state)
{
    cp_args args;

    assert_null(cp_args_parse(pool, NULL, 100, &args));
    assert_null(args.start);
    assert_int_equal(args.limit, 0);
    assert_null(cp_args_parse(pool, "", 100, &args));
    assert_null(args.start);
}

static void start_and_limit_are_percent_decoded(void **state)
{
    cp_args args;

    assert_null(cp_args_parse(pool, "start=%5B%22Biffy+Clyro%22%2C%22a%26b%22%5D&limit=5",
                              100, &args));
    assert_string_equal(args.start, "[\"Biffy Clyro\",\"a&b\"]");
    assert_int_equal(args.limit, 5);
}

static void unknown_arguments_are_ignored(void **state)
{
    cp_args args;

    assert_null(cp_args_parse(pool, "skip=100&endkey=%22z%22&_=123&&flag&limit=3", 100,
                              &args));
    assert_null(args.start);
    assert_int_equal(args.limit, 3);
}

static void limit_must_be_within_bounds(void **state)
{
    const char *bad[] = { "limit=0", "limit=101", "limit=-1", "limit=abc", "limit=",
                          "limit=5x", "limit=+5", "limit=%205", "limit=99999999999999",
                          "limit=1e2" };
    cp_args args;
    size_t i;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        const char *reason = cp_args_parse(pool, bad[i], 100, &args);
        if (!reason || !strstr(reason, "from 1 to 100")) {
            fail_msg("'%s' should be refused, got '%s'", bad[i], reason ? reason : "(none)");
        }
    }
    assert_null(cp_args_parse(pool, "limit=100", 100, &args));
    assert_int_equal(args.limit, 100);
    assert_null(cp_args_parse(pool, "limit=007", 100, &args));
    assert_int_equal(args.limit, 7);
}

static void page_is_a_page_number_given_once_without_start(void **state)
{
    const char *bad[] = { "page=0", "page=-1", "page=abc", "page=", "page", "page=1e2",
                          "page=+2", "page=%202", "page=1000000000", "page=99999999999999",
                          "page=0x10", "page=2.0" };
    cp_args args;
    size_t i;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        const char *reason = cp_args_parse(pool, bad[i], 100, &args);
        if (!reason || !strstr(reason, "page must be a whole number from 1 to 999999999")) {
            fail_msg("'%s' should be refused, got '%s'", bad[i], reason ? reason : "(none)");
        }
        assert_int_equal(args.page, 0);
    }
    assert_non_null(strstr(cp_args_parse(pool, "page=2&page=2", 100, &args),
                           "more than once"));
    assert_non_null(strstr(cp_args_parse(pool, "page=2&start=last", 100, &args),
                           "give one of them"));
    assert_non_null(strstr(cp_args_parse(pool, "start=last&page=2", 100, &args),
                           "give one of them"));
    assert_null(cp_args_parse(pool, "page=007&limit=5", 100, &args));
    assert_int_equal(args.page, 7);
    assert_int_equal(args.limit, 5);
    assert_null(cp_args_parse(pool, "page=999999999", 100, &args));
    assert_int_equal(args.page, 999999999);
    assert_null(cp_args_parse(pool, "limit=5", 100, &args));
    assert_int_equal(args.page, 0);
}

static void repeated_arguments_are_refused(void **state)
{
    cp_args args;

    assert_non_null(strstr(cp_args_parse(pool, "start=[1,\"a\"]&start=[2,\"b\"]", 100, &args),
                           "more than once"));
    assert_non_null(strstr(cp_args_parse(pool, "limit=1&limit=1", 100, &args),
                           "more than once"));
}

static void malformed_escapes_and_nul_are_refused(void **state)
{
    cp_args args;

    assert_non_null(cp_args_parse(pool, "start=%zz", 100, &args));
    assert_non_null(cp_args_parse(pool, "start=%5", 100, &args));
    assert_non_null(cp_args_parse(pool, "start=%5B1%2C%22a%00b%22%5D", 100, &args));
    assert_non_null(cp_args_parse(pool, "lim%zzit=1", 100, &args));
}

static void an_empty_start_is_passed_on_for_the_token_check(void **state)
{
    cp_args args;

    assert_null(cp_args_parse(pool, "start=", 100, &args));
    assert_string_equal(args.start, "");
    assert_null(cp_args_parse(pool, "start", 100, &args));
    assert_string_equal(args.start, "");
}

static void format_is_json_or_html(void **state)
{
    cp_args args;

    assert_null(cp_args_parse(pool, "", 100, &args));
    assert_int_equal(args.format, CP_FORMAT_AUTO);
    assert_null(cp_args_parse(pool, "format=html", 100, &args));
    assert_int_equal(args.format, CP_FORMAT_HTML);
    assert_null(cp_args_parse(pool, "format=json", 100, &args));
    assert_int_equal(args.format, CP_FORMAT_JSON);
    assert_non_null(strstr(cp_args_parse(pool, "format=xml", 100, &args), "json or html"));
    assert_non_null(strstr(cp_args_parse(pool, "format=html&format=json", 100, &args),
                           "more than once"));
}

/* One reading of format names: ?format= takes json and html, CouchPageFormat
 * (lower-cased) auto too; the names a link writes read back the same. */
static void format_names_are_read_one_way(void **state)
{
    cp_args args;

    assert_int_equal(cp_format_named("json"), CP_FORMAT_JSON);
    assert_int_equal(cp_format_named("html"), CP_FORMAT_HTML);
    assert_int_equal(cp_format_named("auto"), CP_FORMAT_AUTO);
    assert_int_equal(cp_format_named("JSON"), -1);
    assert_int_equal(cp_format_named(""), -1);
    assert_int_equal(cp_format_named("xml"), -1);
    assert_int_equal(cp_format_named(cp_format_name(CP_FORMAT_HTML)), CP_FORMAT_HTML);
    assert_int_equal(cp_format_named(cp_format_name(CP_FORMAT_JSON)), CP_FORMAT_JSON);
    assert_int_equal(cp_format_named(cp_format_name(CP_FORMAT_AUTO)), CP_FORMAT_AUTO);
    assert_string_equal(cp_args_parse(pool, "format=auto", 100, &args),
                        "format must be json or html");
    assert_string_equal(cp_args_parse(pool, "format=HTML", 100, &args),
                        "format must be json or html");
}

static void accept_header_picks_the_format(void **state)
{
    struct { const char *accept; cp_format format; } cases[] = {
        { NULL, CP_FORMAT_JSON },
        { "", CP_FORMAT_JSON },
        { "*/*", CP_FORMAT_JSON },
        { "application/json", CP_FORMAT_JSON },
        { "text/html", CP_FORMAT_HTML },
        /* a browser's */
        { "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", CP_FORMAT_HTML },
        { "application/json, text/html;q=0.5", CP_FORMAT_JSON },
        { "text/html;q=0.4, application/json;q=0.3", CP_FORMAT_HTML },
        { "text/*, application/json;q=0.9", CP_FORMAT_HTML },
        { "TEXT/HTML", CP_FORMAT_HTML },
        { "text/html;q=0", CP_FORMAT_JSON },
        { "text/html;q=bogus", CP_FORMAT_JSON },
        { "text/plain", CP_FORMAT_JSON },
        { "text/html;level=1;q=0.7, */*;q=0.5", CP_FORMAT_HTML },
    };
    size_t i;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        if (cp_format_from_accept(pool, cases[i].accept) != cases[i].format) {
            fail_msg("Accept '%s' chose the wrong format", cases[i].accept ? cases[i].accept
                                                                            : "(none)");
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        UNIT_TEST(no_query_string_means_defaults),
        UNIT_TEST(start_and_limit_are_percent_decoded),
        UNIT_TEST(unknown_arguments_are_ignored),
        UNIT_TEST(limit_must_be_within_bounds),
        UNIT_TEST(page_is_a_page_number_given_once_without_start),
        UNIT_TEST(repeated_arguments_are_refused),
        UNIT_TEST(malformed_escapes_and_nul_are_refused),
        UNIT_TEST(an_empty_start_is_passed_on_for_the_token_check),
        UNIT_TEST(format_is_json_or_html),
        UNIT_TEST(format_names_are_read_one_way),
        UNIT_TEST(accept_header_picks_the_format),
    };
    RUN_UNIT_TESTS("args", tests);
}
