#include "unit.h"
#include "couchpage_json.h"
#include "couchpage_render.h"

static void a_page_renders_items_tokens_and_links(void **state)
{
    json_t *rows = cp_json_pool_own(pool, parse(
        "[{\"key\":\"Biffy Clyro\",\"id\":\"a\",\"value\":null},"
        " {\"id\":\"b\",\"key\":[1,{\"x\":0.5}],\"value\":{\"n\":1}}]"));
    json_t *total = cp_json_pool_own(pool, json_integer(11));
    json_t *offset = cp_json_pool_own(pool, json_integer(5));
    cp_page page = { rows, "[\"Tool\",\"t\"]", "[\"Biffy Clyro\",\"a\"]", total, offset };
    cp_links links = { "/bands/", 0 };

    assert_string_equal(cp_render_json(pool, &page, &links),
        "{\"items\":[{\"id\":\"a\",\"key\":\"Biffy Clyro\",\"value\":null},"
        "{\"id\":\"b\",\"key\":[1,{\"x\":0.5}],\"value\":{\"n\":1}}],"
        "\"next\":\"[\\\"Tool\\\",\\\"t\\\"]\","
        "\"prev\":\"[\\\"Biffy Clyro\\\",\\\"a\\\"]\","
        "\"links\":{\"next\":\"/bands/?start=%5b%22Tool%22%2c%22t%22%5d\","
        "\"prev\":\"/bands/?start=%5b%22Biffy+Clyro%22%2c%22a%22%5d\"},"
        "\"total_rows\":11,\"offset\":5}");
}

static void a_lone_page_has_null_links_and_no_counts_when_absent(void **state)
{
    cp_page page = { cp_json_pool_own(pool, json_array()), NULL, NULL, NULL, NULL };
    cp_links links = { "/x/", 3 };

    assert_string_equal(cp_render_json(pool, &page, &links),
        "{\"items\":[],\"next\":null,\"prev\":null,"
        "\"links\":{\"next\":null,\"prev\":null}}");
}

static void links_keep_the_clients_limit(void **state)
{
    cp_links links = { "/a%20b/", 7 };

    assert_string_equal(cp_link_url(pool, &links, "[1,\"x y\"]"),
                        "/a%20b/?start=%5b1%2c%22x+y%22%5d&limit=7");
}

static void errors_are_json_with_error_and_reason(void **state)
{
    assert_string_equal(cp_render_error(pool, "bad_request", "say \"why\"\n"),
                        "{\"error\":\"bad_request\",\"reason\":\"say \\\"why\\\"\\n\"}");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        UNIT_TEST(a_page_renders_items_tokens_and_links),
        UNIT_TEST(a_lone_page_has_null_links_and_no_counts_when_absent),
        UNIT_TEST(links_keep_the_clients_limit),
        UNIT_TEST(errors_are_json_with_error_and_reason),
    };
    RUN_UNIT_TESTS("render", tests);
}
