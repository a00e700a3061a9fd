/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of couchpage_item: FIELD paths, LINK patterns and how a field
 * shows; they link the core alone. */
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

    return cp_field_text(pool, cp_field_get(pool, field, row_text(row)), &len);
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
    const cp_row *row = row_text("{\"id\":\"a/b c\",\"key\":[\"\\u00e9&<\"],\"value\":1}");

    assert_non_null(pattern);
    assert_string_equal(cp_pattern_expand(pool, pattern, row, NULL),
                        "/band/a%2Fb%20c/%C3%A9%26%3C?v=1");
    pattern = cp_pattern_parse(pool, "/x/{doc.none}", &err);
    assert_string_equal(cp_pattern_expand(pool, pattern, row, NULL), "/x/");
    /* a NUL in a value is encoded, not the end of it */
    pattern = cp_pattern_parse(pool, "/x/{key}", &err);
    assert_string_equal(cp_pattern_expand(pool, pattern,
                                          row_text("{\"key\":\"a\\u0000<b>\"}"), NULL),
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

/* what start-up asks of an item: does it read the row's document? */
static void fields_and_links_tell_the_member_they_read(void **state)
{
    const char *err = NULL;
    const cp_field *doc = cp_field_parse(pool, "doc", &err);
    const cp_field *deep = cp_field_parse(pool, "doc.tags[0]", &err);
    const cp_field *value = cp_field_parse(pool, "value.doc", &err);
    const cp_pattern *by_doc = cp_pattern_parse(pool, "/p/{key}?s={doc.slug}", &err);
    const cp_pattern *by_key = cp_pattern_parse(pool, "/p/{key}?id={id}&d={value.doc}", &err);
    const cp_pattern *literal = cp_pattern_parse(pool, "/doc/", &err);

    assert_true(cp_field_reads(doc, "doc"));
    assert_true(cp_field_reads(deep, "doc"));
    assert_false(cp_field_reads(deep, "key"));
    assert_false(cp_field_reads(value, "doc"));
    assert_true(cp_field_reads(value, "value"));
    assert_true(cp_pattern_reads(by_doc, "doc"));
    assert_false(cp_pattern_reads(by_key, "doc"));
    assert_true(cp_pattern_reads(by_key, "id"));
    assert_false(cp_pattern_reads(literal, "doc"));
}

/* CouchPageItem FIELD [LINK]: both compiled, or why not, and what the item
 * reads */
static void items_are_a_field_and_a_link(void **state)
{
    cp_item_spec item;

    assert_null(cp_item_spec_parse(pool, "value.title", NULL, &item));
    assert_non_null(item.field);
    assert_null(item.link);
    assert_true(cp_item_spec_reads(&item, "value"));
    assert_false(cp_item_spec_reads(&item, "doc"));
    assert_null(cp_item_spec_parse(pool, "key", "/p/{doc.slug}", &item));
    assert_non_null(item.link);
    assert_true(cp_item_spec_reads(&item, "doc"));
    assert_true(cp_item_spec_reads(&item, "key"));
    assert_null(cp_item_spec_parse(pool, "doc.name", "/p/{id}", &item));
    assert_true(cp_item_spec_reads(&item, "doc"));
    assert_true(cp_item_spec_reads(&item, "id"));
    assert_false(cp_item_spec_reads(&item, "value"));
    assert_true(!strncmp(cp_item_spec_parse(pool, "name", "/p/{id}", &item), "the field ", 10));
    assert_true(!strncmp(cp_item_spec_parse(pool, "key", "/p/{name}", &item), "the link ", 9));
    assert_true(!strncmp(cp_item_spec_parse(pool, "key", "/p/{id", &item), "the link ", 9));
}

static void percent_encoding_keeps_only_unreserved_bytes(void **state)
{
    const char *all = "AZaz09-._~ /?#[]@!$&'()*+,;=%\"<>\\^`{|}";

    assert_string_equal(cp_percent_encode(pool, "a\0b", 3), "a%00b");
    assert_string_equal(cp_percent_encode(pool, all, strlen(all)),
                        "AZaz09-._~%20%2F%3F%23%5B%5D%40%21%24%26%27%28%29%2A%2B%2C%3B%3D"
                        "%25%22%3C%3E%5C%5E%60%7B%7C%7D");
}

static const cp_field *field_of(const char *path)
{
    const char *err = NULL;
    const cp_field *field = cp_field_parse(pool, path, &err);

    if (!field) {
        fail_msg("'%s' refused: %s", path, err);
    }
    return field;
}

/* CouchPageFields is what leaves the server: an item shows of a row's doc
 * only those members, the doc itself as those members, and start-up can
 * tell which paths reach outside them. */
static void fields_bound_what_items_show(void **state)
{
    apr_array_header_t *fields = apr_array_make(pool, 2, sizeof(const char *));
    apr_array_header_t *read = apr_array_make(pool, 4, sizeof(const cp_field *));
    const cp_row *row = row_text("{\"id\":\"a1\",\"key\":\"k\",\"value\":{\"secret\":1},"
                                 "\"doc\":{\"title\":\"T <1>\",\"date\":\"2024-05-06\","
                                 "\"secret\":\"s3cret\",\"n\":{\"secret\":2}}}");
    const char *err = NULL;
    cp_pattern *link = cp_pattern_parse(pool, "/p/{doc.title}/{doc.secret}/{id}", &err);

    APR_ARRAY_PUSH(fields, const char *) = "title";
    APR_ARRAY_PUSH(fields, const char *) = "date";
    assert_string_equal(cp_field_path(field_of("doc.title")), "doc.title");
    /* inside: any path that is not into doc, and a path into a field */
    assert_true(cp_field_within(field_of("doc.title"), fields));
    assert_true(cp_field_within(field_of("doc.date"), fields));
    assert_true(cp_field_within(field_of("value.secret"), fields));
    assert_true(cp_field_within(field_of("key"), fields));
    assert_true(cp_field_within(field_of("doc.secret"), NULL));
    assert_true(cp_field_within(field_of("doc"), NULL));
    /* outside: another member, one nested in another, the whole doc, an index */
    assert_false(cp_field_within(field_of("doc.secret"), fields));
    assert_false(cp_field_within(field_of("doc.n.secret"), fields));
    assert_false(cp_field_within(field_of("doc"), fields));
    assert_false(cp_field_within(field_of("doc[0]"), fields));
    assert_false(cp_field_within(field_of("doc.titles"), fields));

    APR_ARRAY_PUSH(read, const cp_field *) = field_of("doc.title");
    APR_ARRAY_PUSH(read, const cp_field *) = field_of("id");
    assert_null(cp_fields_fault(pool, read, fields));
    assert_null(cp_fields_fault(pool, NULL, fields));
    APR_ARRAY_PUSH(read, const cp_field *) = field_of("doc.secret");
    APR_ARRAY_PUSH(read, const cp_field *) = field_of("doc");
    assert_string_equal(cp_fields_fault(pool, read, fields),
                        "reads doc.secret, a member CouchPageFields leaves out");
    assert_null(cp_fields_fault(pool, read, NULL));
    read->nelts = 2;
    APR_ARRAY_PUSH(read, const cp_field *) = field_of("doc");
    assert_string_equal(cp_fields_fault(pool, read, fields), "reads doc, the whole document");

    /* shown: the fields, every way; outside them nothing, as a missing value */
    assert_string_equal(cp_field_show(pool, CP_SHOW_HTML, field_of("doc.title"), row, fields),
                        "T &lt;1&gt;");
    assert_string_equal(cp_field_show(pool, CP_SHOW_DATE, field_of("doc.date"), row, fields),
                        "2024-05-06");
    assert_string_equal(cp_field_show(pool, CP_SHOW_HTML, field_of("doc.secret"), row, fields),
                        "");
    assert_string_equal(cp_field_show(pool, CP_SHOW_URL, field_of("doc.secret"), row, fields),
                        "");
    assert_string_equal(cp_field_show(pool, CP_SHOW_HTML, field_of("doc.n.secret"), row,
                                      fields), "");
    assert_string_equal(cp_field_show(pool, CP_SHOW_NUMBER, field_of("doc.n.secret"), row,
                                      fields), "");
    assert_string_equal(cp_field_show(pool, CP_SHOW_NUMBER, field_of("value.secret"), row,
                                      fields), "1");
    /* the whole doc is its fields, as a JSON page carries it */
    assert_string_equal(cp_field_show(pool, CP_SHOW_HTML, field_of("doc"), row, fields),
                        "{&quot;title&quot;:&quot;T &lt;1&gt;&quot;,&quot;date&quot;:"
                        "&quot;2024-05-06&quot;}");
    /* without fields, all of it */
    assert_string_equal(cp_field_show(pool, CP_SHOW_HTML, field_of("doc.secret"), row, NULL),
                        "s3cret");
    /* a link's placeholders likewise */
    assert_non_null(link);
    assert_string_equal(cp_pattern_expand(pool, link, row, fields), "/p/T%20%3C1%3E//a1");
    assert_string_equal(cp_pattern_expand(pool, link, row, NULL), "/p/T%20%3C1%3E/s3cret/a1");
}

static const char *show(cp_show how, const char *path, const char *row)
{
    const char *err = NULL;
    const cp_field *field = cp_field_parse(pool, path, &err);

    assert_non_null(field);
    return cp_field_show(pool, how, field, row_text(row), NULL);
}

/* Every way of showing a field, with a hostile row: never markup, never a
 * quote that ends an attribute, never a scheme. */
static void fields_show_as_inert_text(void **state)
{
    const char *row = "{\"id\":\"javascript:alert(1)\",\"key\":[\"<script>x</script>\",2],"
                      "\"value\":{\"q\":\"a\\\"b'c&d\",\"nul\":\"a\\u0000b\",\"n\":-1.5,"
                      "\"i\":42,\"t\":true,\"o\":{\"x\":\"<\"}}}";

    assert_string_equal(show(CP_SHOW_HTML, "key[0]", row), "&lt;script&gt;x&lt;/script&gt;");
    assert_string_equal(show(CP_SHOW_HTML, "value.q", row), "a&quot;b&#39;c&amp;d");
    assert_string_equal(show(CP_SHOW_HTML, "value.nul", row), "a\xef\xbf\xbd" "b");
    assert_string_equal(show(CP_SHOW_HTML, "value.o", row), "{&quot;x&quot;:&quot;&lt;&quot;}");
    assert_string_equal(show(CP_SHOW_HTML, "value.i", row), "42");
    assert_string_equal(show(CP_SHOW_HTML, "value.none", row), "");
    assert_string_equal(show(CP_SHOW_URL, "id", row), "javascript%3Aalert%281%29");
    assert_string_equal(show(CP_SHOW_URL, "value.q", row), "a%22b%27c%26d");
    assert_string_equal(show(CP_SHOW_URL, "value.nul", row), "a%00b");
    assert_string_equal(show(CP_SHOW_URL, "key[0]", row), "%3Cscript%3Ex%3C%2Fscript%3E");
    assert_string_equal(show(CP_SHOW_URL, "key[5]", row), "");
    assert_string_equal(show(CP_SHOW_NUMBER, "value.i", row), "42");
    assert_string_equal(show(CP_SHOW_NUMBER, "value.n", row), "-1.5");
    assert_string_equal(show(CP_SHOW_NUMBER, "key[1]", row), "2");
    assert_string_equal(show(CP_SHOW_NUMBER, "value.t", row), "");
    assert_string_equal(show(CP_SHOW_NUMBER, "key[0]", row), "");
    assert_string_equal(show(CP_SHOW_NUMBER, "value.o", row), "");
    assert_string_equal(show(CP_SHOW_DATE, "key[0]", row), "");
    assert_string_equal(show(CP_SHOW_DATE, "value.nul", row), "");
    assert_string_equal(show(CP_SHOW_DATE, "value.o", row), "");
}

static void dates_are_iso_strings_or_epoch_milliseconds(void **state)
{
    static const struct {
        const char *value;
        const char *shown;
    } cases[] = {
        { "\"2024-02-29\"", "2024-02-29" },
        { "\"2024-03-01T09:30Z\"", "2024-03-01" },
        { "\"2024-03-01T23:59:60.123+14:00\"", "2024-03-01" },
        { "\"2000-12-31T00:00:00-05:30\"", "2000-12-31" },
        { "\"1999-01-01T12:00:00\"", "1999-01-01" },
        { "0", "1970-01-01" },
        { "1700000000000", "2023-11-14" },
        { "-1", "1969-12-31" },
        { "951782400000.5", "2000-02-29" },
        { "253402300799999", "9999-12-31" },
        { "-62167219200000", "0000-01-01" },
        { "\"2023-02-29\"", "" },
        { "\"1900-02-29\"", "" },
        { "\"2024-13-01\"", "" },
        { "\"2024-04-31\"", "" },
        { "\"2024-1-01\"", "" },
        { "\"2024-\"", "" },
        { "\"2024-01-01 \"", "" },
        { "\"2024-01-01T25:00Z\"", "" },
        { "\"2024-01-01T10:00+1\"", "" },
        { "\"2024-01-01T10:00:00.\"", "" },
        { "\"2024-01-01T10:00Zjunk\"", "" },
        { "\"2024-01-01<script>\"", "" },
        { "\"2024-01-01\\u0000\"", "" },
        { "253402300800000", "" },
        { "-62167219200001", "" },
        { "1e300", "" },
        { "null", "" },
        { "[2024]", "" },
    };
    size_t i;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *row = apr_psprintf(pool, "{\"key\":%s}", cases[i].value);
        const char *shown = show(CP_SHOW_DATE, "key", row);

        if (strcmp(shown, cases[i].shown) != 0) {
            fail_msg("date %s shows '%s', not '%s'", cases[i].value, shown, cases[i].shown);
        }
    }
}

/* A string shown as text comes from the reader's records without a jansson
 * value (cp_row_string): the same text as the value jansson makes of it,
 * escapes, NUL, surrogate pairs, empty strings and strings in arrays and
 * nested objects alike; a value that is no string is shown as before. */
static void strings_shown_from_records_are_the_decoded_strings(void **state)
{
    static const char *const paths[] = {
        "id", "value", "doc.t", "doc.e", "doc.u", "doc.a[1]", "doc.o.p.q", "doc.n", "doc.o",
        "doc.a", "doc.none", "value.x"
    };
    const char *row = "{\"id\":\"a\\/b\\\"<&>\",\"key\":1,\"value\":\"plain <b>\","
                      "\"doc\":{\"t\":\"Caf\\u00e9 \\ud83d\\ude80 \\\\ \\n\\u0000!\",\"e\":\"\","
                      "\"u\":\"\xe6\x9d\xb1\xe4\xba\xac\",\"a\":[1,\"x&y\"],"
                      "\"o\":{\"p\":{\"q\":\"deep \\\"q\\\"\"}},\"n\":12.5}}";
    const cp_row *r = row_text(row);
    apr_size_t i, len = 0;
    int how;

    for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
        const char *err = NULL;
        const cp_field *field = cp_field_parse(pool, paths[i], &err);
        const json_t *value;
        const char *text;

        assert_non_null(field);
        value = cp_field_get(pool, field, r);
        text = value ? cp_field_text(pool, value, &len) : NULL;
        for (how = 0; how < 2; how++) {
            const char *expected = !text ? ""
                : how ? cp_html_text(pool, cp_percent_encode(pool, text, len),
                                     strlen(cp_percent_encode(pool, text, len)))
                : cp_html_text(pool, text, len);

            assert_string_equal(cp_field_show(pool, how ? CP_SHOW_URL : CP_SHOW_HTML, field, r, NULL),
                                expected);
        }
    }
    assert_string_equal(show(CP_SHOW_HTML, "doc.t", row),
                        "Caf\xc3\xa9 \xf0\x9f\x9a\x80 \\ \n\xef\xbf\xbd!");
    assert_string_equal(show(CP_SHOW_URL, "id", row), "a%2Fb%22%3C%26%3E");
}

static const char *join(const char *arg, const char *row)
{
    const cp_field *field = NULL;
    const char *separator = NULL;

    assert_null(cp_field_join_parse(pool, arg, &field, &separator));
    return cp_field_join(pool, field, separator, row_text(row), NULL);
}

/* FIELD[]SEPARATOR: the first [] ends the path (no path holds one), the
 * rest is the separator, as written; a path without [] or a bad path is
 * refused. */
static void joins_take_a_path_brackets_and_a_separator(void **state)
{
    const cp_field *field = NULL;
    const char *separator = NULL;

    assert_null(cp_field_join_parse(pool, "doc.tags[], ", &field, &separator));
    assert_string_equal(separator, ", ");
    assert_true(cp_field_reads(field, "doc"));
    assert_null(cp_field_join_parse(pool, "key[1][] | []", &field, &separator));
    assert_string_equal(separator, " | []");
    assert_null(cp_field_join_parse(pool, "value[]", &field, &separator));
    assert_string_equal(separator, "");
    assert_non_null(strstr(cp_field_join_parse(pool, "doc.tags, ", &field, &separator),
                           "has no []"));
    assert_non_null(strstr(cp_field_join_parse(pool, "tags[], ", &field, &separator),
                           "the field 'tags' must start with key"));
    assert_non_null(strstr(cp_field_join_parse(pool, "doc.[], ", &field, &separator),
                           "the field 'doc.' has an empty member name"));
    assert_non_null(cp_field_join_parse(pool, "[], ", &field, &separator));
}

/* Each element as couchpage_html shows it, escaped, the separator between
 * them as written; a value that is no array as couchpage_html shows it. */
static void joins_show_each_element_escaped(void **state)
{
    const char *row = "{\"id\":\"a\",\"key\":[\"x<\",2.5,[1, 2]],\"value\":{\"e\":[],"
                      "\"one\":[\"only\"],\"s\":\"a&b\",\"n\":7},"
                      "\"doc\":{\"tags\":[\"c\", \"j\\\\s\\u0000\", 10 , -0.5e1, true, null,"
                      " [ \"n<\" , {\"o\": 1} ], {\"k\" : \"v\"}, \"\\u00e9\"]}}";

    assert_string_equal(join("doc.tags[], ", row),
                        "c, j\\s\xef\xbf\xbd, 10, -0.5e1, true, null, "
                        "[&quot;n&lt;&quot;,{&quot;o&quot;:1}], {&quot;k&quot;:&quot;v&quot;}, "
                        "\xc3\xa9");
    assert_string_equal(join("doc.tags[]</li><li>", row),
                        "c</li><li>j\\s\xef\xbf\xbd</li><li>10</li><li>-0.5e1</li><li>true"
                        "</li><li>null</li><li>[&quot;n&lt;&quot;,{&quot;o&quot;:1}]</li><li>"
                        "{&quot;k&quot;:&quot;v&quot;}</li><li>\xc3\xa9");
    assert_string_equal(join("key[] / ", row), "x&lt; / 2.5 / [1,2]");
    assert_string_equal(join("key[2][]+", row), "1+2");
    /* decoded reals in the fewest digits that read back, as CouchDB writes
     * them; an array's own numbers as sent */
    assert_string_equal(join("key[], ", "{\"id\":\"a\",\"key\":[0.1,1.5e-7,1e21,1.0,-2.5e-300,"
                             "123456789012345678901234567890],\"value\":[0.1,1.0]}"),
                        "0.1, 1.5e-7, 1e21, 1, -2.5e-300, 123456789012345678901234567890");
    assert_string_equal(join("value[], ", "{\"id\":\"a\",\"key\":1,\"value\":[0.1,1.0,1e21]}"),
                        "0.1, 1.0, 1e21");
    assert_string_equal(join("value.e[], ", row), "");
    assert_string_equal(join("value.one[], ", row), "only");
    assert_string_equal(join("value.s[], ", row), "a&amp;b");
    assert_string_equal(join("value.n[], ", row), "7");
    assert_string_equal(join("key[0][], ", row), "x&lt;");
    assert_string_equal(join("doc.none[], ", row), "");
    {
        apr_array_header_t *fields = apr_array_make(pool, 1, sizeof(const char *));
        const cp_field *field = NULL;
        const char *separator = NULL;

        /* CouchPageFields: an array outside them shows nothing */
        APR_ARRAY_PUSH(fields, const char *) = "title";
        assert_null(cp_field_join_parse(pool, "doc.tags[], ", &field, &separator));
        assert_string_equal(cp_field_join(pool, field, separator, row_text(row), fields), "");
        APR_ARRAY_PUSH(fields, const char *) = "tags";
        assert_non_null(strstr(cp_field_join(pool, field, separator, row_text(row), fields),
                               "c, j\\s"));
        assert_null(cp_field_join_parse(pool, "key[], ", &field, &separator));
        assert_string_equal(cp_field_join(pool, field, separator, row_text(row), fields),
                            "x&lt;, 2.5, [1,2]");
    }
    assert_string_equal(join("value[], ", row),
                        "{&quot;e&quot;:[],&quot;one&quot;:[&quot;only&quot;],&quot;s&quot;:"
                        "&quot;a&amp;b&quot;,&quot;n&quot;:7}");
}

/* A _find row's default item: its document's title, a non-empty string,
 * unless CouchPageFields leaves it out; else its sort values as text. */
static void find_items_show_the_title_or_the_sort_values(void **state)
{
    apr_array_header_t *fields = apr_array_make(pool, 2, sizeof(const char *));
    const char *titled = "{\"id\":\"p1\",\"key\":[\"2024-06-25\"],\"value\":null,"
                         "\"doc\":{\"_id\":\"p1\",\"title\":\"Caf\\u00e9 <3\","
                         "\"date\":\"2024-06-25\"}}";

    assert_string_equal(cp_item_find_default(pool, row_text(titled), NULL),
                        "Caf\xc3\xa9 &lt;3");
    APR_ARRAY_PUSH(fields, const char *) = "date";
    assert_string_equal(cp_item_find_default(pool, row_text(titled), fields), "2024-06-25");
    APR_ARRAY_PUSH(fields, const char *) = "title";
    assert_string_equal(cp_item_find_default(pool, row_text(titled), fields),
                        "Caf\xc3\xa9 &lt;3");
    assert_string_equal(cp_item_find_default(pool, row_text(
        "{\"id\":\"p\",\"key\":[\"g&1\",3,null,[1]],\"value\":null,"
        "\"doc\":{\"_id\":\"p\",\"title\":\"\",\"name\":\"N\"}}"), NULL),
        "g&amp;1, 3, null, [1]");
    assert_string_equal(cp_item_find_default(pool, row_text(
        "{\"id\":\"p\",\"key\":[0.1,7],\"value\":null,\"doc\":{}}"), NULL), "0.1, 7");
    assert_string_equal(cp_item_find_default(pool, row_text(
        "{\"id\":\"p\",\"key\":[\"a\"],\"value\":null,\"doc\":{\"title\":[\"no\"]}}"), NULL),
        "a");
    assert_string_equal(cp_item_find_default(pool, row_text(
        "{\"id\":\"p\",\"key\":[\"a\"],\"value\":null,\"doc\":null}"), NULL), "a");
    assert_string_equal(cp_item_find_default(pool, row_text(
        "{\"id\":\"p\",\"key\":\"lone\",\"value\":null}"), NULL), "lone");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        UNIT_TEST(fields_reach_into_rows),
        UNIT_TEST(fields_bound_what_items_show),
        UNIT_TEST(bad_field_paths_are_refused),
        UNIT_TEST(links_fill_in_percent_encoded_values),
        UNIT_TEST(bad_link_patterns_are_refused),
        UNIT_TEST(fields_and_links_tell_the_member_they_read),
        UNIT_TEST(items_are_a_field_and_a_link),
        UNIT_TEST(percent_encoding_keeps_only_unreserved_bytes),
        UNIT_TEST(fields_show_as_inert_text),
        UNIT_TEST(strings_shown_from_records_are_the_decoded_strings),
        UNIT_TEST(dates_are_iso_strings_or_epoch_milliseconds),
        UNIT_TEST(joins_take_a_path_brackets_and_a_separator),
        UNIT_TEST(joins_show_each_element_escaped),
        UNIT_TEST(find_items_show_the_title_or_the_sort_values),
    };
    RUN_UNIT_TESTS("item", tests);
}
