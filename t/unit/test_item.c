#include "unit.h"
#include "couchpage_item.h"

static const char *field_text(const char *path, const char *row)
{
    const char *err = NULL;
    cp_field *field = cp_field_parse(pool, path, &err);

    if (!field) {
        fail_msg("'%s' refused: %s", path, err);
    }
    apr_size_t len;

    return cp_field_text(pool, cp_field_get(field, parse(row)), &len);
}

static void fields_reach_into_rows(void **state)
{
    const char *row = "{\"id\":\"a1\",\"key\":[\"post\",[7,8]],\"value\":{\"title\":\"T\","
                      "\"n\":0.5,\"tags\":[\"x\",\"y\"]},\"doc\":{\"name\":\"Biffy\"}}";

    assert_string_equal(field_text("id", row), "a1");
    assert_string_equal(field_text("key", row), "[\"post\",[7,8]]");
    assert_string_equal(field_text("key[0]", row), "post");
    assert_string_equal(field_text("key[1][1]", row), "8");
    assert_string_equal(field_text("value.title", row), "T");
    assert_string_equal(field_text("value.n", row), "0.5");
    assert_string_equal(field_text("value.tags[1]", row), "y");
    assert_string_equal(field_text("doc.name", row), "Biffy");
    assert_null(field_text("doc.missing", row));
    assert_null(field_text("key[5]", row));
    assert_null(field_text("value.title.deeper", row));
}

static void bad_field_paths_are_refused(void **state)
{
    const char *bad[] = { "", "name", "value.", "value..x", "key[", "key[x]", "key[1",
                          "[0]", "value.[0]", "key]x", "key[99999999]" };
    size_t i;
    const char *err;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err = NULL;
        if (cp_field_parse(pool, bad[i], &err) || !err) {
            fail_msg("'%s' should be refused", bad[i]);
        }
    }
}

static void links_fill_in_percent_encoded_values(void **state)
{
    const char *err = NULL;
    cp_pattern *pattern = cp_pattern_parse(pool, "/band/{id}/{key[0]}?v={value}", &err);
    json_t *row = parse("{\"id\":\"a/b c\",\"key\":[\"\\u00e9&<\"],\"value\":1}");

    assert_non_null(pattern);
    assert_string_equal(cp_pattern_expand(pool, pattern, row),
                        "/band/a%2Fb%20c/%C3%A9%26%3C?v=1");
    pattern = cp_pattern_parse(pool, "/x/{doc.none}", &err);
    assert_string_equal(cp_pattern_expand(pool, pattern, row), "/x/");
    /* a NUL in a value is encoded, not the end of it */
    pattern = cp_pattern_parse(pool, "/x/{key}", &err);
    assert_string_equal(cp_pattern_expand(pool, pattern, parse("{\"key\":\"a\\u0000<b>\"}")),
                        "/x/a%00%3Cb%3E");
}

static void bad_link_patterns_are_refused(void **state)
{
    const char *bad[] = { "/band/{id", "/band/id}", "/band/{}", "/band/{name}", "/{a{b}}" };
    size_t i;
    const char *err;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err = NULL;
        if (cp_pattern_parse(pool, bad[i], &err) || !err) {
            fail_msg("'%s' should be refused", bad[i]);
        }
    }
}

static void percent_encoding_keeps_only_unreserved_bytes(void **state)
{
    const char *all = "AZaz09-._~ /?#[]@!$&'()*+,;=%\"<>\\^`{|}";

    assert_string_equal(cp_percent_encode(pool, "a\0b", 3), "a%00b");
    assert_string_equal(cp_percent_encode(pool, all, strlen(all)),
                        "AZaz09-._~%20%2F%3F%23%5B%5D%40%21%24%26%27%28%29%2A%2B%2C%3B%3D"
                        "%25%22%3C%3E%5C%5E%60%7B%7C%7D");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        UNIT_TEST(fields_reach_into_rows),
        UNIT_TEST(bad_field_paths_are_refused),
        UNIT_TEST(links_fill_in_percent_encoded_values),
        UNIT_TEST(bad_link_patterns_are_refused),
        UNIT_TEST(percent_encoding_keeps_only_unreserved_bytes),
    };
    RUN_UNIT_TESTS("item", tests);
}
