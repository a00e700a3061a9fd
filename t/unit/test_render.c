/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of couchpage_render: JSON, the HTML fragment, links and ETags;
 * they link the core alone. */
#include "unit.h"
#include "couchpage_item.h"
#include "couchpage_json.h"
#include "couchpage_render.h"

#include <apr_encode.h>
#include <openssl/evp.h>

static cp_page page_of(const char *rows, const char *next, const char *prev,
                       int total, int offset)
{
    cp_page page;

    const cp_answer *answer = answer_text(apr_pstrcat(pool, "{\"rows\":", rows, "}", NULL));
    apr_size_t i;

    memset(&page, 0, sizeof(page));
    page.rows = apr_array_make(pool, 4, sizeof(const cp_row *));
    for (i = 0; i < cp_answer_rows(answer); i++) {
        APR_ARRAY_PUSH(page.rows, const cp_row *) = cp_answer_row(answer, i);
    }
    page.next = next;
    page.prev = prev;
    page.total_rows = total >= 0 ? total : -1;
    page.offset = offset >= 0 ? offset : -1;
    page.numbered = offset >= 0;
    page.pages = apr_array_make(pool, 4, sizeof(cp_page_link));
    return page;
}

/* The fragment with an item spec and the default words. */
static const char *html_of(const cp_page *page, const cp_links *links, const cp_item_spec *item)
{
    cp_html_spec spec = { item, NULL, NULL, NULL, NULL };
    const char *error = NULL;
    const char *out = cp_render_html(pool, page, links, &spec, &error);

    assert_non_null(out);
    assert_null(error);
    return out;
}

static void add_page(cp_page *page, apr_int64_t number, const char *start, int current)
{
    cp_page_link *link = apr_array_push(page->pages);

    link->number = number;
    link->start = start;
    link->current = current;
}

/* With CouchPageFields, an item shows of a row's doc only those members:
 * its field and its link's placeholders. */
static void items_show_only_the_fields(void **state)
{
    cp_page page = page_of("[{\"id\":\"a\",\"key\":1,\"value\":null,\"doc\":{\"_id\":\"a\","
                           "\"title\":\"T\",\"secret\":\"s3cret\"}}]", NULL, NULL, 1, 0);
    cp_links links = { "/p/", 0, NULL, NULL };
    apr_array_header_t *fields = apr_array_make(pool, 1, sizeof(const char *));
    cp_item_spec item = { NULL, NULL };
    cp_html_spec spec = { &item, NULL, NULL, NULL, NULL };
    const char *error = NULL, *out;

    APR_ARRAY_PUSH(fields, const char *) = "title";
    assert_null(cp_item_spec_parse(pool, "doc.secret", "/x/{doc.title}/{doc.secret}", &item));
    out = cp_render_html(pool, &page, &links, &spec, &error);
    assert_non_null(strstr(out, "<li class=\"couchpage-item\"><a href=\"/x/T/s3cret\">s3cret</a>"));
    spec.fields = fields;
    out = cp_render_html(pool, &page, &links, &spec, &error);
    assert_non_null(strstr(out, "<li class=\"couchpage-item\"><a href=\"/x/T/\"></a></li>"));
    assert_null(strstr(out, "s3cret"));
    assert_null(cp_item_spec_parse(pool, "doc", NULL, &item));
    out = cp_render_html(pool, &page, &links, &spec, &error);
    assert_non_null(strstr(out, "<li class=\"couchpage-item\">{&quot;title&quot;:&quot;T&quot;}"
                                "</li>"));
}

static void a_page_renders_items_tokens_and_links(void **state)
{
    cp_page page = page_of("[{\"id\":\"a\",\"key\":\"Biffy Clyro\",\"value\":null},"
                           " {\"id\":\"b\",\"key\":[1,{\"x\":0.5}],\"value\":{\"n\":1}}]",
                           "[\"Tool\",\"t\"]", "[\"Biffy Clyro\",\"a\"]", 11, 5);
    cp_links links = { "/bands/", 0, NULL, NULL };

    assert_string_equal(cp_render_json(pool, &page, &links, NULL, NULL),
        "{\"items\":[{\"id\":\"a\",\"key\":\"Biffy Clyro\",\"value\":null},"
        "{\"id\":\"b\",\"key\":[1,{\"x\":0.5}],\"value\":{\"n\":1}}],"
        "\"next\":\"[\\\"Tool\\\",\\\"t\\\"]\","
        "\"prev\":\"[\\\"Biffy Clyro\\\",\\\"a\\\"]\","
        "\"links\":{\"next\":\"/bands/?start=%5b%22Tool%22%2c%22t%22%5d\","
        "\"prev\":\"/bands/?start=%5b%22Biffy+Clyro%22%2c%22a%22%5d\","
        "\"first\":\"/bands/\"},"
        "\"numbering\":\"absolute\",\"total_rows\":11,\"count\":\"exact\",\"offset\":5,"
        "\"first_row\":6,\"last_row\":7}");
}

/* Rows are written as CouchDB sent them, in CouchDB's member order: id,
 * key, value and doc; other members are left out, and a row without a
 * value has null. */
static void items_are_the_rows_reduced_to_their_members(void **state)
{
    cp_page page = page_of("[{\"key\":1,\"id\":\"a\",\"value\":2},"
                           " {\"id\":\"b\",\"key\":2,\"error\":\"x\",\"value\":3},"
                           " {\"id\":\"c\",\"key\":3}]", NULL, NULL, -1, -1);
    cp_links links = { "/x/", 0, NULL, NULL };

    assert_string_equal(cp_render_json(pool, &page, &links, NULL, NULL),
        "{\"items\":[{\"id\":\"a\",\"key\":1,\"value\":2},"
        "{\"id\":\"b\",\"key\":2,\"value\":3},"
        "{\"id\":\"c\",\"key\":3,\"value\":null}],"
        "\"next\":null,\"prev\":null,"
        "\"links\":{\"next\":null,\"prev\":null,\"first\":\"/x/\"},"
        "\"numbering\":\"relative\"}");
}

static void a_lone_page_has_null_links_and_no_counts_when_absent(void **state)
{
    cp_page page = page_of("[]", NULL, NULL, -1, -1);
    cp_links links = { "/x/", 3, NULL, NULL };

    assert_string_equal(cp_render_json(pool, &page, &links, NULL, NULL),
        "{\"items\":[],\"next\":null,\"prev\":null,"
        "\"links\":{\"next\":null,\"prev\":null,\"first\":\"/x/?limit=3\"},"
        "\"numbering\":\"relative\"}");
}

static void documents_and_page_links_in_json(void **state)
{
    cp_page page = page_of("[{\"id\":\"a\",\"key\":1,\"value\":null,\"doc\":{\"_id\":\"a\"}}]",
                           "[2,\"b\"]", NULL, 9, -1);
    cp_links links = { "/p/", 0, "json", NULL };

    add_page(&page, 0, NULL, 1);
    add_page(&page, 1, "[2,\"b\"]", 0);
    assert_string_equal(cp_render_json(pool, &page, &links, NULL, NULL),
        "{\"items\":[{\"id\":\"a\",\"key\":1,\"value\":null,\"doc\":{\"_id\":\"a\"}}],"
        "\"next\":\"[2,\\\"b\\\"]\",\"prev\":null,"
        "\"links\":{\"next\":\"/p/?start=%5b2%2c%22b%22%5d\\u0026format=json\",\"prev\":null,"
        "\"first\":\"/p/?format=json\"},"
        "\"pages\":[{\"number\":0,\"start\":null,\"current\":true,\"url\":\"/p/?format=json\"},"
        "{\"number\":1,\"start\":\"[2,\\\"b\\\"]\",\"current\":false,"
        "\"url\":\"/p/?start=%5b2%2c%22b%22%5d\\u0026format=json\"}],"
        "\"numbering\":\"relative\",\"total_rows\":9}");
}

static void links_keep_the_clients_limit_and_format(void **state)
{
    cp_links links = { "/a%20b/", 7, "html", NULL };

    assert_string_equal(cp_link_url(pool, &links, "[1,\"x y\"]"),
                        "/a%20b/?start=%5b1%2c%22x+y%22%5d&limit=7&format=html");
    assert_string_equal(cp_link_url(pool, &links, NULL), "/a%20b/?limit=7&format=html");
}

/* Every combination of token, limit and format, written in one pass; a
 * page's links kept once made (its body and its Link header write each):
 * the same token gives the very URL made before, others their own, and
 * tokens past what is kept are still made. */
static void links_are_made_once_a_page(void **state)
{
    cp_link_made made[CP_LINKS_MADE] = { { NULL, NULL } };
    cp_links plain = { "/p/", 0, NULL, NULL }, limited = { "/p/", 12, NULL, NULL };
    cp_links formatted = { "/p/", 0, "a b&c", NULL }, kept = { "/q/", 2, "json", made };
    char token[32];
    const char *first, *again;
    int i;

    assert_string_equal(cp_link_url(pool, &plain, NULL), "/p/");
    assert_string_equal(cp_link_url(pool, &plain, "last"), "/p/?start=last");
    assert_string_equal(cp_link_url(pool, &limited, NULL), "/p/?limit=12");
    assert_string_equal(cp_link_url(pool, &limited, "[\"<&>\"]"),
                        "/p/?start=%5b%22%3c%26%3e%22%5d&limit=12");
    assert_string_equal(cp_link_url(pool, &formatted, NULL), "/p/?format=a+b%26c");
    assert_string_equal(cp_link_url(pool, &formatted, "\u00e9"),
                        "/p/?start=%c3%a9&format=a+b%26c");
    first = cp_link_url(pool, &kept, "[1,\"a\"]");
    assert_string_equal(first, "/q/?start=%5b1%2c%22a%22%5d&limit=2&format=json");
    again = cp_link_url(pool, &kept, apr_pstrdup(pool, "[1,\"a\"]"));
    assert_ptr_equal(first, again);
    for (i = 0; i < CP_LINKS_MADE + 2; i++) {
        apr_snprintf(token, sizeof(token), "[%d,\"b\"]", i);
        assert_string_equal(cp_link_url(pool, &kept, token),
                            apr_psprintf(pool, "/q/?start=%%5b%d%%2c%%22b%%22%%5d&limit=2"
                                         "&format=json", i));
    }
    assert_ptr_equal(cp_link_url(pool, &kept, "[1,\"a\"]"), first);
    assert_string_equal(cp_link_url(pool, &kept, NULL), "/q/?limit=2&format=json");
}

/* The previous page's URL: none on the first page, the first page's own
 * URL when it is the first page (JSON, HTML and the Link header alike). */
static void prev_links_to_the_first_page_without_a_token(void **state)
{
    cp_page page = page_of("[]", NULL, "[0,\"a\"]", 9, 3);
    cp_links links = { "/p/", 3, NULL, NULL };

    assert_string_equal(cp_prev_url(pool, &links, &page), "/p/?start=%5b0%2c%22a%22%5d&limit=3");
    page.prev_is_first = 1;
    assert_string_equal(cp_prev_url(pool, &links, &page), "/p/?limit=3");
    assert_non_null(strstr(cp_render_json(pool, &page, &links, NULL, NULL),
                           "\"prev\":\"[0,\\\"a\\\"]\",\"links\":{\"next\":null,"
                           "\"prev\":\"/p/?limit=3\""));
    assert_non_null(strstr(html_of(&page, &links, &(cp_item_spec){ NULL, NULL }),
                           "rel=\"prev\" href=\"/p/?limit=3\""));
    page.prev = NULL;
    assert_null(cp_prev_url(pool, &links, &page));
}

/* A token longer than the module takes back is never handed out: its link
 * is left out of the JSON and the HTML, and the page says which; a previous
 * page that is the first keeps its link, which needs no token. */
static void links_of_tokens_too_long_are_withheld(void **state)
{
    const char *long_token = apr_psprintf(pool, "[\"%0100d\",\"b\"]", 0);
    cp_page page = page_of("[]", long_token, long_token, 40, 20);
    cp_links links = { "/p/", 0, NULL, NULL };
    cp_page_link *link;
    const char *json, *html;

    link = apr_array_push(page.pages);
    *link = (cp_page_link){ 1, NULL, 0, 0 };
    link = apr_array_push(page.pages);
    *link = (cp_page_link){ 2, long_token, 0, 0 };
    link = apr_array_push(page.pages);
    *link = (cp_page_link){ 3, "[\"c\",\"c\"]", 1, 0 };
    link = apr_array_push(page.pages);
    *link = (cp_page_link){ 4, "[\"d\",\"d\"]", 0, 0 };
    assert_int_equal(cp_page_withhold_long_tokens(&page, 200), 0);
    assert_int_equal(cp_page_withhold_long_tokens(&page, 64), strlen(long_token));
    assert_null(page.next);
    assert_null(page.prev);
    assert_int_equal(page.withheld, CP_WITHHELD_NEXT | CP_WITHHELD_PREV);
    json = cp_render_json(pool, &page, &links, NULL, NULL);
    assert_non_null(strstr(json, "\"next\":null,\"prev\":null,\"links\":{\"next\":null,"
                                 "\"prev\":null,\"first\":\"/p/\"},\"withheld\":[\"next\",\"prev\"],"
                                 "\"pages\":[{\"number\":1,\"start\":null,\"current\":false,"
                                 "\"url\":\"/p/\"},{\"number\":2,\"start\":null,\"current\":false,"
                                 "\"url\":null},{\"number\":3,"));
    assert_non_null(strstr(json, "\"number\":4,\"start\":\"[\\\"d\\\",\\\"d\\\"]\""));
    html = html_of(&page, &links, &(cp_item_spec){ NULL, NULL });
    assert_non_null(strstr(html, "<span class=\"couchpage-prev couchpage-disabled "
                                 "couchpage-withheld\" aria-disabled=\"true\">Previous</span>"));
    assert_non_null(strstr(html, "<li><span class=\"couchpage-withheld\">2</span></li>"));
    assert_non_null(strstr(html, "<span class=\"couchpage-next couchpage-disabled "
                                 "couchpage-withheld\" aria-disabled=\"true\">Next</span>"));
    assert_null(strstr(html, "0000"));
    /* the previous page is the first: linked by its own URL all the same */
    page = page_of("[]", NULL, long_token, -1, -1);
    page.prev_is_first = 1;
    cp_page_withhold_long_tokens(&page, 64);
    assert_int_equal(page.withheld, CP_WITHHELD_PREV);
    assert_string_equal(cp_prev_url(pool, &links, &page), "/p/");
    assert_non_null(strstr(cp_render_json(pool, &page, &links, NULL, NULL),
                           "\"prev\":null,\"links\":{\"next\":null,\"prev\":\"/p/\""));
    assert_non_null(strstr(html_of(&page, &links, &(cp_item_spec){ NULL, NULL }),
                           "<a class=\"couchpage-prev\" rel=\"prev\" href=\"/p/\">"));
}

static void errors_inside_html_pages_are_escaped_html(void **state)
{
    const char *words[CP_WORD_COUNT] = { NULL };

    assert_string_equal(cp_render_html_error(pool, NULL),
        "<div class=\"couchpage couchpage-error\">\n"
        "<p class=\"couchpage-error-reason\">The list could not be shown.</p>\n"
        "</div>\n");
    /* the site's word (CouchPageText error), escaped */
    words[CP_WORD_ERROR] = "Liste indisponible <b>";
    assert_string_equal(cp_render_html_error(pool, words),
        "<div class=\"couchpage couchpage-error\">\n"
        "<p class=\"couchpage-error-reason\">Liste indisponible &lt;b&gt;</p>\n"
        "</div>\n");
}

static void errors_are_json_with_error_and_reason(void **state)
{
    assert_string_equal(cp_render_error(pool, "bad_request", "say \"why\"\n"),
                        "{\"error\":\"bad_request\",\"reason\":\"say \\\"why\\\"\\n\"}");
}

static void html_fragment_lists_items_and_navigation(void **state)
{
    cp_page page = page_of("[{\"key\":\"Nirvana\",\"id\":\"n\",\"value\":null},"
                           "{\"key\":\"Tool\",\"id\":\"t\",\"value\":null}]",
                           "[\"X\",\"x\"]", "[\"A\",\"a\"]", 11, 5);
    cp_links links = { "/bands/", 2, NULL, NULL };
    cp_item_spec item = { NULL, NULL };

    add_page(&page, 2, "[\"A\",\"a\"]", 0);
    add_page(&page, 3, "[\"Nirvana\",\"n\"]", 1);
    assert_string_equal(html_of(&page, &links, &item),
        "<div class=\"couchpage\" data-couchpage-status=\"Page 3, 6\xe2\x80\x93" "7 of 11\" "
        "data-couchpage-more-label=\"Load more\">\n"
        "<ul class=\"couchpage-items\">\n"
        "<li class=\"couchpage-item\">Nirvana</li>\n"
        "<li class=\"couchpage-item\">Tool</li>\n"
        "</ul>\n"
        "<p class=\"couchpage-position\">"
        "<span class=\"couchpage-first-row\">6</span>\xe2\x80\x93<span class=\"couchpage-last-row\">7</span> of 11</p>\n"
        "<nav class=\"couchpage-nav\" aria-label=\"Pages\">\n"
        "<a class=\"couchpage-prev\" rel=\"prev\" href=\"/bands/?start=%5b%22A%22%2c%22a%22%5d&amp;limit=2\">Previous</a>\n"
        "<ol class=\"couchpage-pages\">\n"
        "<li><a rel=\"first\" href=\"/bands/?limit=2\">1</a></li>\n"
        "<li><a href=\"/bands/?start=%5b%22A%22%2c%22a%22%5d&amp;limit=2\">2</a></li>\n"
        "<li><span aria-current=\"page\">3</span></li>\n"
        "</ol>\n"
        "<a class=\"couchpage-next\" rel=\"next\" href=\"/bands/?start=%5b%22X%22%2c%22x%22%5d&amp;limit=2\">Next</a>\n"
        "</nav>\n</div>\n");
}

static void html_first_and_last_pages_disable_their_links(void **state)
{
    cp_page page = page_of("[]", NULL, NULL, -1, -1);
    cp_links links = { "/x/", 0, NULL, NULL };
    cp_item_spec item = { NULL, NULL };
    const char *out = html_of(&page, &links, &item);

    assert_non_null(strstr(out, "<p class=\"couchpage-empty\">No items.</p>"));
    assert_non_null(strstr(out, "<span class=\"couchpage-first couchpage-disabled\" "
                                "aria-disabled=\"true\">First</span>\n"
                                "<span class=\"couchpage-prev couchpage-disabled\" "
                                "aria-disabled=\"true\">Previous</span>"));
    assert_non_null(strstr(out, "<span class=\"couchpage-next couchpage-disabled\" "
                                "aria-disabled=\"true\">Next</span>"));
    assert_null(strstr(out, "couchpage-position"));
}

/* Keys, values, ids and URLs are text, never markup. */
static void html_escapes_every_text(void **state)
{
    cp_page page = page_of("[{\"key\":\"<script>alert(1)</script>\",\"id\":\"\\\" onmouseover=x\","
                           "\"value\":{\"t\":\"a&b\"}}]", NULL, NULL, -1, -1);
    cp_links links = { "/x/", 0, NULL, NULL };
    const char *err = NULL;
    cp_item_spec item = { cp_field_parse(pool, "key", &err),
                          cp_pattern_parse(pool, "/band/{id}?t={value.t}", &err) };
    const char *out = html_of(&page, &links, &item);

    assert_non_null(strstr(out, "<li class=\"couchpage-item\"><a href=\"/band/%22%20onmouseover%3Dx?t=a%26b\">"
                                "&lt;script&gt;alert(1)&lt;/script&gt;</a></li>"));
    assert_null(strstr(out, "<script"));
}

static void html_shows_nul_as_a_replacement_character(void **state)
{
    cp_page page = page_of("[{\"key\":\"a\\u0000<b>bold</b>\",\"id\":\"n\",\"value\":null}]",
                           NULL, NULL, -1, -1);
    cp_links links = { "/x/", 0, NULL, NULL };
    cp_item_spec item = { NULL, NULL };

    assert_non_null(strstr(html_of(&page, &links, &item),
                           "<li class=\"couchpage-item\">a\xef\xbf\xbd&lt;b&gt;bold&lt;/b&gt;</li>"));
}

/* JSON is inert inside HTML: <, > and & only ever appear escaped. */
static void json_output_escapes_markup_characters(void **state)
{
    cp_page page = page_of("[{\"key\":\"</script><script>alert(1)</script>&amp;\",\"id\":\"a\","
                           "\"value\":null}]", NULL, NULL, -1, -1);
    cp_links links = { "/x/", 0, NULL, NULL };
    const char *out = cp_render_json(pool, &page, &links, NULL, NULL);

    assert_null(strchr(out, '<'));
    assert_null(strchr(out, '>'));
    assert_null(strchr(out, '&'));
    assert_non_null(strstr(out, "\"key\":\"\\u003c/script\\u003e\\u003cscript\\u003ealert(1)"
                                "\\u003c/script\\u003e\\u0026amp;\""));
    assert_string_equal(cp_render_error(pool, "bad_request", "near '<img>'"),
                        "{\"error\":\"bad_request\",\"reason\":\"near '\\u003cimg\\u003e'\"}");
    /* still the same JSON */
    assert_true(json_equal(parse(out), parse(cp_json_text(pool, parse(out)))));
}

static void relative_page_labels(void **state)
{
    cp_page page = page_of("[{\"key\":1,\"id\":\"a\",\"value\":null}]", NULL, "[0,\"z\"]", -1, -1);
    cp_links links = { "/x/", 0, NULL, NULL };
    cp_item_spec item = { NULL, NULL };
    const char *out;

    add_page(&page, -1, "[0,\"z\"]", 0);
    add_page(&page, 0, "[1,\"a\"]", 1);
    out = html_of(&page, &links, &item);
    assert_non_null(strstr(out, ">\xe2\x88\x92" "1</a>"));
    assert_non_null(strstr(out, "<li><span aria-current=\"page\">current</span></li>"));
}

/* A _find page of the one document of a _find answer's body: unnumbered,
 * no links yet. */
static cp_page find_page_of(const char *body)
{
    const cp_answer *answer = NULL;
    cp_page page;

    assert_null(cp_response_read_find(pool, cp_response_padded(pool, body, strlen(body)),
                                      strlen(body), &answer));
    memset(&page, 0, sizeof(page));
    page.rows = apr_array_make(pool, 1, sizeof(const cp_row *));
    APR_ARRAY_PUSH(page.rows, const cp_row *) = cp_answer_row(answer, 0);
    page.total_rows = page.offset = -1;
    page.docs_as_items = 1;
    page.pages = apr_array_make(pool, 1, sizeof(cp_page_link));
    return page;
}

/* A _find location's page: each item is its document (reduced to fields),
 * and the Last page is linked without a number, in JSON and beside the
 * relative page links of the fragment. */
static void find_pages_show_documents_and_an_unnumbered_last_page(void **state)
{
    cp_page page = find_page_of("{\"docs\":[{\"_id\":\"B1\",\"g\":1,\"t\":\"x<\"}],"
                                "\"bookmark\":\"b\"}");
    cp_links links = { "/f/", 0, NULL, NULL };
    cp_item_spec item = { NULL, NULL };
    apr_array_header_t *fields = apr_array_make(pool, 1, sizeof(const char *));
    const char *out;

    page.next = "{\"a\":[[1],\"B1\"]}";
    page.has_last = 1;
    page.last = "last";
    assert_string_equal(cp_render_json(pool, &page, &links, NULL, NULL),
        "{\"items\":[{\"_id\":\"B1\",\"g\":1,\"t\":\"x\\u003c\"}],"
        "\"next\":\"{\\\"a\\\":[[1],\\\"B1\\\"]}\",\"prev\":null,"
        "\"links\":{\"next\":\"/f/?start=%7b%22a%22%3a%5b%5b1%5d%2c%22B1%22%5d%7d\","
        "\"prev\":null,\"first\":\"/f/\",\"last\":\"/f/?start=last\"},"
        "\"numbering\":\"relative\"}");
    APR_ARRAY_PUSH(fields, const char *) = "t";
    assert_non_null(strstr(cp_render_json(pool, &page, &links, fields, NULL),
                           "{\"items\":[{\"t\":\"x\\u003c\"}],"));
    add_page(&page, 0, NULL, 1);
    add_page(&page, 1, page.next, 0);
    out = html_of(&page, &links, &item);
    assert_non_null(strstr(out, "href=\"/f/?start=last\""));
    assert_null(strstr(out, ">0</a>"));
}

/* A _find page's default item is the document's title, or without one
 * (or with CouchPageFields leaving it out) the sort values as text; an
 * item field still wins, and a view's default item is still its key. */
static void find_items_default_to_the_title_or_the_sort_values(void **state)
{
    cp_page page = find_page_of("{\"docs\":[{\"_id\":\"B1\",\"date\":\"2024-06-25\","
                                "\"title\":\"On <b>\"},{\"_id\":\"B2\",\"date\":\"2024-06-26\"}]}");
    cp_links links = { "/f/", 0, NULL, NULL };
    cp_item_spec item = { NULL, NULL };
    apr_array_header_t *fields = apr_array_make(pool, 1, sizeof(const char *));
    cp_html_spec spec = { &item, NULL, NULL, NULL, NULL };
    json_t *key1 = cp_json_pool_own(pool, json_pack("[s]", "2024-06-25"));
    json_t *key2 = cp_json_pool_own(pool, json_pack("[s,i]", "2024-06-26", 2));
    const cp_answer *answer = APR_ARRAY_IDX(page.rows, 0, const cp_row *)->answer;
    const char *error = NULL, *out;

    /* the sort values, as cp_find_read sets them */
    ((cp_row *)cp_answer_row(answer, 0))->key = key1;
    ((cp_row *)cp_answer_row(answer, 1))->key = key2;
    APR_ARRAY_PUSH(page.rows, const cp_row *) = cp_answer_row(answer, 1);
    out = cp_render_html(pool, &page, &links, &spec, &error);
    assert_non_null(strstr(out, "<li class=\"couchpage-item\">On &lt;b&gt;</li>\n"
                                "<li class=\"couchpage-item\">2024-06-26, 2</li>\n"));
    APR_ARRAY_PUSH(fields, const char *) = "date";
    spec.fields = fields;
    out = cp_render_html(pool, &page, &links, &spec, &error);
    assert_non_null(strstr(out, "<li class=\"couchpage-item\">2024-06-25</li>\n"
                                "<li class=\"couchpage-item\">2024-06-26, 2</li>\n"));
    assert_null(cp_item_spec_parse(pool, "key", NULL, &item));
    out = cp_render_html(pool, &page, &links, &spec, &error);
    assert_non_null(strstr(out, "<li class=\"couchpage-item\">[&quot;2024-06-25&quot;]</li>\n"));
    item.field = NULL;
    page.docs_as_items = 0;
    out = cp_render_html(pool, &page, &links, &spec, &error);
    assert_non_null(strstr(out, "<li class=\"couchpage-item\">[&quot;2024-06-25&quot;]</li>\n"));
}

/* A _find document with its _id and _rev is what the ETag digests in
 * place of its bytes, as a view row's doc is; projected, it is not. */
static void find_documents_are_digested_by_revision(void **state)
{
    cp_page page = find_page_of("{\"docs\":[{\"_id\":\"B1\",\"_rev\":\"2-x\",\"g\":1}]}");
    const apr_array_header_t *revisions;
    apr_array_header_t *fields = apr_array_make(pool, 1, sizeof(const char *));
    cp_links links = { "/f/", 0, NULL, NULL };
    const cp_etag_revision *noted;
    const char *out;

    out = cp_render_json(pool, &page, &links, NULL, &revisions);
    assert_int_equal(revisions->nelts, 1);
    noted = &APR_ARRAY_IDX(revisions, 0, cp_etag_revision);
    assert_memory_equal(out + noted->from, "{\"_id\":\"B1\",\"_rev\":\"2-x\",\"g\":1}",
                        noted->to - noted->from);
    assert_memory_equal(noted->rev.text, "\"2-x\"", noted->rev.len);
    assert_int_equal(strncmp(cp_render_etag(pool, out, revisions), "W/", 2), 0);
    APR_ARRAY_PUSH(fields, const char *) = "g";
    cp_render_json(pool, &page, &links, fields, &revisions);
    assert_int_equal(revisions->nelts, 0);
}

/* A page inside a range: its rows' numbers among the range's, absolute
 * page numbers with page 1 and the last page always linked, gaps between,
 * and the last page's link in JSON. */
/* A counted _find page past a capped count: "of 1,000+", its Last page
 * linked by the word, not a number; and a count an earlier page took. */
static void a_lower_bound_count_shows_a_plus_and_no_last_number(void **state)
{
    cp_page page = page_of("[{\"key\":5,\"id\":\"e\",\"value\":null},"
                           "{\"key\":6,\"id\":\"f\",\"value\":null}]",
                           "[25,\"y\"]", "[1,\"a\"]", 1000, 1040);
    cp_links links = { "/r/", 0, NULL, NULL };
    cp_item_spec item = { NULL, NULL };
    const char *out;
    int n;

    page.has_last = 1;
    page.last = CP_TOKEN_LAST;
    page.last_number = 0;
    page.count_at_least = 1;
    page.count_earlier = 1;
    for (n = 520; n <= 522; n++) {
        add_page(&page, n, apr_psprintf(pool, "[%d,\"p\"]", n), n == 521);
    }
    out = html_of(&page, &links, &item);
    assert_non_null(strstr(out, "1,042</span> of 1,000+ (as counted earlier)</p>\n"));
    assert_non_null(strstr(out, "<li><a href=\"/r/?start=%5b522%2c%22p%22%5d\">522</a></li>\n"
                                "</ol>\n"));
    assert_non_null(strstr(out, "<a class=\"couchpage-last\" rel=\"last\" "
                                "href=\"/r/?start=last\">Last</a>\n</nav>"));
    out = cp_render_json(pool, &page, &links, NULL, NULL);
    assert_non_null(strstr(out, "\"total_rows\":1000,\"count\":\"at least\","
                                "\"count_as_of\":\"an earlier page\",\"offset\":1040,"));
    assert_null(strstr(out, "last_page"));
}

static void a_known_position_shows_first_and_last_pages(void **state)
{
    cp_page page = page_of("[{\"key\":5,\"id\":\"e\",\"value\":null},"
                           "{\"key\":6,\"id\":\"f\",\"value\":null},"
                           "{\"key\":7,\"id\":\"g\",\"value\":null},"
                           "{\"key\":8,\"id\":\"h\",\"value\":null}]",
                           "[25,\"y\"]", "[1,\"a\"]", 200, 20);
    cp_links links = { "/r/", 4, NULL, NULL };
    cp_item_spec item = { NULL, NULL };
    const char *out;
    int n;

    page.has_last = 1;
    page.last = "[197,\"z\"]";
    page.last_number = 50;
    for (n = 4; n <= 8; n++) {
        add_page(&page, n, apr_psprintf(pool, "[%d,\"p\"]", n), n == 6);
    }
    out = html_of(&page, &links, &item);
    assert_non_null(strstr(out, "<p class=\"couchpage-position\">"
                                "<span class=\"couchpage-first-row\">21</span>\xe2\x80\x93"
                                "<span class=\"couchpage-last-row\">24</span> of 200</p>\n"));
    assert_non_null(strstr(out,
        "<ol class=\"couchpage-pages\">\n"
        "<li><a rel=\"first\" href=\"/r/?limit=4\">1</a></li>\n"
        "<li class=\"couchpage-gap\" aria-hidden=\"true\">\xe2\x80\xa6</li>\n"
        "<li><a href=\"/r/?start=%5b4%2c%22p%22%5d&amp;limit=4\">4</a></li>\n"));
    assert_non_null(strstr(out,
        "<li><a href=\"/r/?start=%5b8%2c%22p%22%5d&amp;limit=4\">8</a></li>\n"
        "<li class=\"couchpage-gap\" aria-hidden=\"true\">\xe2\x80\xa6</li>\n"
        "<li><a rel=\"last\" href=\"/r/?start=%5b197%2c%22z%22%5d&amp;limit=4\">50</a></li>\n"
        "</ol>\n"));
    out = cp_render_json(pool, &page, &links, NULL, NULL);
    assert_non_null(strstr(out, "\"first\":\"/r/?limit=4\","
                                "\"last\":\"/r/?start=%5b197%2c%22z%22%5d\\u0026limit=4\"}"));
    assert_non_null(strstr(out, "\"numbering\":\"absolute\",\"total_rows\":200,\"count\":\"exact\","
                                "\"offset\":20,\"first_row\":21,\"last_row\":24,"
                                "\"last_page\":50}"));
    /* a numbered page list ends with the go-to-page form: a GET of the
     * path with the links' limit, labelled, without script */
    assert_non_null(strstr(html_of(&page, &links, &item),
        "<form class=\"couchpage-jump\" method=\"get\" action=\"/r/\">\n"
        "<label>Go to page <input type=\"number\" name=\"page\" min=\"1\" max=\"50\" "
        "step=\"1\" required></label>\n"
        "<input type=\"hidden\" name=\"limit\" value=\"4\">\n"
        "<button type=\"submit\">Go</button>\n</form>\n</nav>\n</div>\n"));
    page.numbered = 0;
    assert_null(strstr(html_of(&page, &links, &item), "couchpage-jump"));
    page.numbered = 1;
    /* no page list: a link to the last page of its own, and no form */
    page.pages->nelts = 0;
    out = html_of(&page, &links, &item);
    assert_null(strstr(out, "couchpage-jump"));
    assert_non_null(strstr(out, "<a class=\"couchpage-first\" rel=\"first\" "
                                "href=\"/r/?limit=4\">First</a>\n<a class=\"couchpage-prev\""));
    assert_non_null(strstr(out, "<a class=\"couchpage-last\" rel=\"last\" "
                                "href=\"/r/?start=%5b197%2c%22z%22%5d&amp;limit=4\">Last</a>\n"
                                "</nav>"));
    /* the last page in the list: no link of its own, no gap before it */
    for (n = 1; n <= 3; n++) {
        add_page(&page, n + 47, apr_psprintf(pool, "[%d,\"p\"]", n), n == 3);
    }
    out = html_of(&page, &links, &item);
    assert_non_null(strstr(out, "\">1</a></li>\n<li class=\"couchpage-gap\" aria-hidden=\"true\">"
                                "\xe2\x80\xa6</li>\n<li><a href=\"/r/?start=%5b1%2c"));
    assert_non_null(strstr(out, "<li><span aria-current=\"page\">50</span></li>\n</ol>"));
    assert_null(strstr(out, "rel=\"last\""));
    /* the last page without a page list: Last is no link, as First is not
     * on the first page */
    page.pages->nelts = 0;
    page.last_is_current = 1;
    page.last = "[\"page\",\"token\"]";
    page.next = NULL;
    out = html_of(&page, &links, &item);
    assert_non_null(strstr(out, "<span class=\"couchpage-next couchpage-disabled\" "
                                "aria-disabled=\"true\">Next</span>\n"
                                "<span class=\"couchpage-last couchpage-disabled\" "
                                "aria-disabled=\"true\">Last</span>\n</nav>"));
    assert_null(strstr(out, "rel=\"last\""));
}

/* One page, which is the first and the last: neither First nor Last links
 * anywhere; one row: "11 of 11", not "11-11 of 11". */
static void a_lone_row_and_a_lone_page(void **state)
{
    cp_page page = page_of("[{\"key\":\"Tool\",\"id\":\"t\",\"value\":null}]",
                           NULL, NULL, 11, 10);
    cp_links links = { "/bands/", 0, NULL, NULL };
    cp_item_spec item = { NULL, NULL };
    const char *out;

    out = html_of(&page, &links, &item);
    /* its number marked as both the first and the last row (couchpage.js
     * joins positions by them), plain in the announcement */
    assert_non_null(strstr(out, "<p class=\"couchpage-position\">"
                                "<span class=\"couchpage-first-row couchpage-last-row\">11</span>"
                                " of 11</p>\n"));
    assert_non_null(strstr(out, "data-couchpage-status=\"11 of 11\""));
    page = page_of("[{\"key\":\"Tool\",\"id\":\"t\",\"value\":null}]", NULL, NULL, 1, 0);
    page.has_last = 1;
    page.last_is_current = 1;
    page.last_number = 1;
    out = html_of(&page, &links, &item);
    assert_non_null(strstr(out, "<p class=\"couchpage-position\">"
                                "<span class=\"couchpage-first-row couchpage-last-row\">1</span>"
                                " of 1</p>\n"));
    assert_non_null(strstr(out, "<span class=\"couchpage-first couchpage-disabled\" "
                                "aria-disabled=\"true\">First</span>"));
    assert_non_null(strstr(out, "<span class=\"couchpage-last couchpage-disabled\" "
                                "aria-disabled=\"true\">Last</span>"));
    assert_null(strstr(out, "<a "));
}

/* Every number the fragment shows has the thousands word between its
 * groups of three digits: the position, the page numbers, page 1 and the
 * last page, relative numbers; "" for none, and the word is escaped. */
static void thousands_are_separated_in_every_number(void **state)
{
    cp_page page = page_of("[{\"key\":1,\"id\":\"a\",\"value\":null},"
                           "{\"key\":2,\"id\":\"b\",\"value\":null}]",
                           "[3,\"c\"]", "[0,\"z\"]", 1234567, 99998);
    cp_links links = { "/n/", 0, NULL, NULL };
    cp_item_spec item = { NULL, NULL };
    const char *words[CP_WORD_COUNT] = { NULL };
    cp_html_spec spec = { &item, NULL, NULL, words, NULL };
    const char *error = NULL, *out;

    page.has_last = 1;
    page.last = "[\"last\"]";
    page.last_number = 617284;
    add_page(&page, 49999, "[0,\"z\"]", 0);
    add_page(&page, 50000, "[1,\"a\"]", 1);
    add_page(&page, 50001, "[3,\"c\"]", 0);
    out = html_of(&page, &links, &item);
    assert_non_null(strstr(out, "<p class=\"couchpage-position\">"
                                "<span class=\"couchpage-first-row\">99,999</span>\xe2\x80\x93"
                                "<span class=\"couchpage-last-row\">100,000</span> of 1,234,567</p>\n"));
    assert_non_null(strstr(out, "\">1</a></li>\n<li class=\"couchpage-gap\""));
    assert_non_null(strstr(out, "\">49,999</a></li>\n"
                                "<li><span aria-current=\"page\">50,000</span></li>\n"));
    assert_non_null(strstr(out, "\">50,001</a></li>\n"));
    assert_non_null(strstr(out, "<a rel=\"last\" href=\"/n/?start=%5b%22last%22%5d\">"
                                "617,284</a>"));
    /* French: a narrow no-break space */
    words[CP_WORD_THOUSANDS] = "\xe2\x80\xaf";
    words[CP_WORD_OF] = "sur";
    out = cp_render_html(pool, &page, &links, &spec, &error);
    assert_non_null(strstr(out, ">99\xe2\x80\xaf" "999</span>\xe2\x80\x93"
                                "<span class=\"couchpage-last-row\">100\xe2\x80\xaf" "000</span> sur "
                                "1\xe2\x80\xaf" "234\xe2\x80\xaf" "567</p>"));
    /* none, and one that needs escaping */
    words[CP_WORD_THOUSANDS] = "";
    out = cp_render_html(pool, &page, &links, &spec, &error);
    assert_non_null(strstr(out, ">99999</span>\xe2\x80\x93"
                                "<span class=\"couchpage-last-row\">100000</span> sur 1234567</p>"));
    assert_non_null(strstr(out, ">617284</a>"));
    words[CP_WORD_THOUSANDS] = "<";
    out = cp_render_html(pool, &page, &links, &spec, &error);
    assert_non_null(strstr(out, " sur 1&lt;234&lt;567</p>"));
    /* relative numbers, and numbers of fewer than four digits */
    page = page_of("[{\"key\":1,\"id\":\"a\",\"value\":null}]", NULL, "[0,\"z\"]", -1, -1);
    add_page(&page, -1234, "[0,\"z\"]", 0);
    add_page(&page, -999, "[0,\"y\"]", 0);
    add_page(&page, 0, "[1,\"a\"]", 1);
    add_page(&page, 1000, "[2,\"b\"]", 0);
    out = html_of(&page, &links, &item);
    assert_non_null(strstr(out, ">\xe2\x88\x92" "1,234</a>"));
    assert_non_null(strstr(out, ">\xe2\x88\x92" "999</a>"));
    assert_non_null(strstr(out, ">+1,000</a>"));
}

/* Every word of the fragment replaced, each escaped; the link relations
 * stay. */
static void words_are_replaced_and_escaped(void **state)
{
    cp_page page = page_of("[{\"key\":\"k\",\"id\":\"a\",\"value\":null}]",
                           "[\"X\",\"x\"]", "[\"A\",\"a\"]", 11, 5);
    cp_links links = { "/x/", 0, NULL, NULL };
    cp_item_spec item = { NULL, NULL };
    const char *words[CP_WORD_COUNT] = { NULL };
    cp_html_spec spec = { &item, NULL, NULL, words, NULL };
    const char *error = NULL, *out;

    words[CP_WORD_FIRST] = "Premi\xc3\xa8re";
    words[CP_WORD_PREVIOUS] = "Pr\xc3\xa9" "c\xc3\xa9" "dent";
    words[CP_WORD_NEXT] = "Suivant <b>";
    words[CP_WORD_LAST] = "Derni\xc3\xa8re";
    words[CP_WORD_OF] = "sur";
    words[CP_WORD_EMPTY] = "Aucun \"article\".";
    words[CP_WORD_NAV_LABEL] = "Pages d'articles";
    words[CP_WORD_CURRENT] = "ici";
    words[CP_WORD_PAGE] = "Page \"n\xc2\xb0\"";
    words[CP_WORD_MORE] = "Plus <d'articles>";
    page.has_last = 1;
    page.last = "[\"Z\",\"z\"]";
    page.last_number = 3;
    out = cp_render_html(pool, &page, &links, &spec, &error);
    assert_non_null(strstr(out, "<p class=\"couchpage-position\">"
        "<span class=\"couchpage-first-row couchpage-last-row\">6</span> sur 11</p>\n"
        "<nav class=\"couchpage-nav\" aria-label=\"Pages d&#39;articles\">\n"
        "<a class=\"couchpage-first\" rel=\"first\" href=\"/x/\">Premi\xc3\xa8re</a>\n"
        "<a class=\"couchpage-prev\" rel=\"prev\" href=\"/x/?start=%5b%22A%22%2c%22a%22%5d\">"
        "Pr\xc3\xa9" "c\xc3\xa9" "dent</a>\n"
        "<a class=\"couchpage-next\" rel=\"next\" href=\"/x/?start=%5b%22X%22%2c%22x%22%5d\">"
        "Suivant &lt;b&gt;</a>\n"
        "<a class=\"couchpage-last\" rel=\"last\" href=\"/x/?start=%5b%22Z%22%2c%22z%22%5d\">"
        "Derni\xc3\xa8re</a>\n</nav>"));
    /* couchpage.js's words ride on the fragment, escaped; without a page
     * list the announcement is the position alone */
    assert_non_null(strstr(out, "<div class=\"couchpage\" data-couchpage-status=\"6 sur 11\" "
                                "data-couchpage-more-label=\"Plus &lt;d&#39;articles&gt;\">\n"));
    /* with a numbered page list, the page's number and the word for it */
    add_page(&page, 2, "[\"k\",\"a\"]", 1);
    out = cp_render_html(pool, &page, &links, &spec, &error);
    assert_non_null(strstr(out, "data-couchpage-status=\"Page &quot;n\xc2\xb0&quot; 2, 6 sur 11\""));
    /* the relative page list's current page: no number, no position, no
     * announcement */
    page.offset = -1;
    page.numbered = 0;
    page.pages = apr_array_make(pool, 1, sizeof(cp_page_link));
    add_page(&page, 0, "[\"k\",\"a\"]", 1);
    out = cp_render_html(pool, &page, &links, &spec, &error);
    assert_non_null(strstr(out, "<span aria-current=\"page\">ici</span>"));
    assert_null(strstr(out, "data-couchpage-status"));
    /* the empty page; words left NULL keep their English default */
    page = page_of("[]", NULL, NULL, 0, 0);
    words[CP_WORD_PREVIOUS] = NULL;
    out = cp_render_html(pool, &page, &links, &spec, &error);
    assert_non_null(strstr(out, "<p class=\"couchpage-empty\">Aucun &quot;article&quot;.</p>\n"
                                "<p class=\"couchpage-position\">0 sur 0</p>\n"));
    assert_non_null(strstr(out, "aria-disabled=\"true\">Previous</span>"));
}

/* The words by their directive names, in any case; an unknown name or a
 * text that is not UTF-8 refused, with the reason apachectl -t shows. */
static void words_are_found_by_name(void **state)
{
    int i, which = -1;
    const char *reason;

    for (i = 0; i < CP_WORD_COUNT; i++) {
        assert_null(cp_word_check(pool, cp_word_names[i], "x", &which));
        assert_int_equal(which, i);
    }
    assert_null(cp_word_check(pool, "NAV-LABEL", "Seiten \xc3\xbc", &which));
    assert_int_equal(which, CP_WORD_NAV_LABEL);
    assert_null(cp_word_check(pool, "thousands", "", &which));
    assert_int_equal(which, CP_WORD_THOUSANDS);
    reason = cp_word_check(pool, "second", "x", &which);
    assert_string_equal(reason, "'second' is not a word of the fragment; the words are first, "
                                "previous, next, last, of, empty, nav-label, current, "
                                "thousands, error, page, more, counted-earlier, jump, go, changed, "
                                "counted-before-change");
    assert_non_null(cp_word_check(pool, "", "x", &which));
    assert_string_equal(cp_word_check(pool, "Next", "Suivant \xff", &which),
                        "the text for next is not valid UTF-8");
    assert_string_equal(cp_word_check(pool, "of", "\xed\xa0\x80", &which),
                        "the text for of is not valid UTF-8");
}

/* Why cp_render_fields_parse refuses names (NULL-terminated), NULL when it
 * takes them; a refusal gives no fields, a success no word at fault. */
static const char *fields_fault(const char *const *names, const char **about)
{
    apr_array_header_t *words = apr_array_make(pool, 4, sizeof(const char *));
    apr_array_header_t *fields = NULL;
    const char *reason;

    for (; *names; names++) {
        APR_ARRAY_PUSH(words, const char *) = *names;
    }
    reason = cp_render_fields_parse(pool, words, &fields, about);
    assert_true(reason ? fields == NULL : *about == NULL);
    return reason;
}

/* CouchPageFields: names of members, in UTF-8 and once each ("" too: JSON
 * allows it), or * alone for every member; the first word at fault named. */
static void fields_are_names_or_a_lone_star(void **state)
{
    static const char *const star[] = { "*", NULL };
    static const char *const names[] = { "title", "", "r\xc3\xa9sum\xc3\xa9", "two words",
                                         "_id", NULL };
    static const char *const star_after[] = { "title", "*", NULL };
    static const char *const star_first[] = { "*", "title", NULL };
    static const char *const two_stars[] = { "*", "*", NULL };
    static const char *const twice[] = { "title", "date", "title", NULL };
    static const char *const empty_twice[] = { "title", "", "", NULL };
    static const char *const not_utf8[] = { "title", "ti\xfftle", "ti\xfftle", NULL };
    static const char *const surrogate[] = { "\xed\xa0\x80", NULL };
    static const char *const twice_then_star[] = { "a", "a", "*", NULL };
    apr_array_header_t *words = apr_array_make(pool, 4, sizeof(const char *));
    apr_array_header_t *fields = words;
    const char *about = "unset";
    int i;

    APR_ARRAY_PUSH(words, const char *) = "*";
    assert_null(cp_render_fields_parse(pool, words, &fields, &about));
    assert_null(fields);
    assert_null(about);
    assert_null(fields_fault(star, &about));
    words = apr_array_make(pool, 4, sizeof(const char *));
    for (i = 0; names[i]; i++) {
        APR_ARRAY_PUSH(words, const char *) = names[i];
    }
    assert_null(cp_render_fields_parse(pool, words, &fields, &about));
    assert_ptr_equal(fields, words);
    assert_int_equal(fields->nelts, 5);
    assert_string_equal(fields_fault(star_after, &about), "* (every member) stands alone");
    assert_null(about);
    assert_string_equal(fields_fault(star_first, &about), "* (every member) stands alone");
    assert_string_equal(fields_fault(two_stars, &about), "* (every member) stands alone");
    assert_string_equal(fields_fault(twice, &about), "is named twice");
    assert_string_equal(about, "title");
    assert_string_equal(fields_fault(empty_twice, &about), "is named twice");
    assert_string_equal(about, "");
    assert_string_equal(fields_fault(not_utf8, &about), "is not valid UTF-8");
    assert_string_equal(about, "ti\xfftle");
    assert_string_equal(fields_fault(surrogate, &about), "is not valid UTF-8");
    /* the first word at fault, in order, as httpd -t reads the line */
    assert_string_equal(fields_fault(twice_then_star, &about), "is named twice");
    assert_string_equal(about, "a");
}

/* A renderer of the caller's: its output is the item's inner HTML, as it
 * is; when it fails, so does the fragment, with its error. */
static const char *render_id_in_em(void *baton, apr_pool_t *p, const cp_row *row,
                                   const char **error)
{
    const char *id = row->id;

    (*(int *)baton)++;
    if (!strcmp(id, "bad")) {
        *error = "no template for bad";
        return NULL;
    }
    return apr_pstrcat(p, "<em>", id, "</em>", NULL);
}

static void an_item_renderer_makes_each_item(void **state)
{
    cp_page page = page_of("[{\"key\":1,\"id\":\"a\",\"value\":null},"
                           "{\"key\":2,\"id\":\"b\",\"value\":null}]", NULL, NULL, -1, -1);
    cp_links links = { "/x/", 0, NULL, NULL };
    int calls = 0;
    cp_html_spec spec = { NULL, render_id_in_em, &calls, NULL, NULL };
    const char *error = NULL, *out;

    out = cp_render_html(pool, &page, &links, &spec, &error);
    assert_non_null(strstr(out, "<ul class=\"couchpage-items\">\n"
                                "<li class=\"couchpage-item\"><em>a</em></li>\n"
                                "<li class=\"couchpage-item\"><em>b</em></li>\n</ul>\n"));
    assert_int_equal(calls, 2);
    page = page_of("[{\"key\":1,\"id\":\"a\",\"value\":null},"
                   "{\"key\":2,\"id\":\"bad\",\"value\":null}]", NULL, NULL, -1, -1);
    assert_null(cp_render_html(pool, &page, &links, &spec, &error));
    assert_string_equal(error, "no template for bad");
}

/* The ETag is the SHA-1 of the exact body, base64url without padding,
 * quoted: a strong validator; bodies longer than APR's pieces hash whole. */
static void etags_are_the_bodys_sha1(void **state)
{
    char *long_body = apr_palloc(pool, 3000001);

    assert_string_equal(cp_render_etag(pool, "", NULL), "\"2jmj7l5rSw0yVb_vlWAYkK_YBwk\"");
    assert_string_equal(cp_render_etag(pool, "abc", NULL), "\"qZk-NkcGgWq6PiVxeFDCbJzQ2J0\"");
    memset(long_body, 'a', 3000000);
    long_body[3000000] = '\0';
    assert_string_equal(cp_render_etag(pool, long_body, NULL), "\"6JNa8If6_OFL8VfVCrmSyGFoj_o\"");
}

/* A page of two rows: a, whose doc is doc_a, and b, whose doc has no _rev. */
static const char *docs_page(const char *doc_a, const char *key_b,
                             const apr_array_header_t **revisions)
{
    cp_page page = page_of(apr_pstrcat(pool, "[{\"id\":\"a\",\"key\":1,\"value\":null,\"doc\":",
                                       doc_a, "},{\"id\":\"b\",\"key\":", key_b,
                                       ",\"value\":null,\"doc\":{\"_id\":\"b\",\"n\":2}}]", NULL),
                           NULL, NULL, -1, -1);
    cp_links links = { "/d/", 0, NULL, NULL };

    return cp_render_json(pool, &page, &links, NULL, revisions);
}

static const char *etag_of_docs_page(const char *doc_a, const char *key_b)
{
    const apr_array_header_t *revisions;
    const char *body = docs_page(doc_a, key_b, &revisions);

    return cp_render_etag(pool, body, revisions);
}

/* A JSON page's ETag digests a document it copies whole by its _id and
 * _rev (a revision never changes), all else as written, and is weak: the
 * SHA-1 of the body with the document's bytes replaced by NUL "a" NUL
 * "1-x" NUL. A document without a string _id and _rev is digested whole. */
static void etags_digest_documents_by_revision(void **state)
{
    const char *doc = "{\"_id\":\"a\",\"_rev\":\"1-x\",\"n\":\"<1>\"}";
    const apr_array_header_t *revisions;
    const char *body = docs_page(doc, "2", &revisions), *from, *to;
    const cp_etag_revision *noted;
    char *text;
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int len;
    apr_size_t n;

    assert_int_equal(revisions->nelts, 1);
    noted = &APR_ARRAY_IDX(revisions, 0, cp_etag_revision);
    from = body + noted->from;
    to = body + noted->to;
    assert_int_equal(to - from, strlen("{\"_id\":\"a\",\"_rev\":\"1-x\",\"n\":\"\\u003c1\\u003e\"}"));
    assert_memory_equal(from, "{\"_id\":\"a\",\"_rev\":\"1-x\",\"n\":\"\\u003c1\\u003e\"}",
                        (size_t)(to - from));
    assert_memory_equal(noted->id.text, "\"a\"", 3);
    assert_int_equal(noted->id.len, 3);
    assert_memory_equal(noted->rev.text, "\"1-x\"", 5);
    assert_int_equal(noted->rev.len, 5);
    /* the digest, made here from the body */
    n = (apr_size_t)(from - body);
    text = apr_palloc(pool, strlen(body) + 16);
    memcpy(text, body, n);
    memcpy(text + n, "\0\"a\"\0\"1-x\"\0", 11);
    memcpy(text + n + 11, to, strlen(to));
    assert_true(EVP_Digest(text, n + 11 + strlen(to), digest, &len, EVP_sha1(), NULL));
    assert_string_equal(cp_render_etag(pool, body, revisions),
                        apr_pstrcat(pool, "W/\"", apr_pencode_base64_binary(
                                        pool, digest, len, APR_ENCODE_BASE64URL, NULL),
                                    "\"", NULL));
    /* other bytes of the same revision: the same tag */
    assert_string_equal(etag_of_docs_page(doc, "2"),
                        etag_of_docs_page("{\"_rev\":\"1-x\",\"_id\":\"a\",\"n\":\"<2>\"}", "2"));
    /* another revision, another document, another key, the document
     * without a _rev edited: another tag */
    assert_string_not_equal(etag_of_docs_page(doc, "2"),
                            etag_of_docs_page("{\"_id\":\"a\",\"_rev\":\"2-y\",\"n\":\"<1>\"}", "2"));
    assert_string_not_equal(etag_of_docs_page(doc, "2"),
                            etag_of_docs_page("{\"_id\":\"c\",\"_rev\":\"1-x\",\"n\":\"<1>\"}", "2"));
    assert_string_not_equal(etag_of_docs_page(doc, "2"), etag_of_docs_page(doc, "3"));
    /* a _rev that is no string, no _id, no doc object: digested whole, a
     * strong tag as of an HTML page */
    body = docs_page("{\"_id\":\"a\",\"_rev\":1,\"n\":\"<1>\"}", "2", &revisions);
    assert_int_equal(revisions->nelts, 0);
    assert_string_equal(cp_render_etag(pool, body, revisions), cp_render_etag(pool, body, NULL));
    assert_int_equal(cp_render_etag(pool, body, revisions)[0], '"');
    docs_page("{\"_rev\":\"1-x\",\"n\":\"<1>\"}", "2", &revisions);
    assert_int_equal(revisions->nelts, 0);
    docs_page("null", "2", &revisions);
    assert_int_equal(revisions->nelts, 0);
}

/* CouchPageFields: a document reduced to some members is digested as
 * written (which members depends on the location, not the revision). */
static void etags_digest_projected_documents_whole(void **state)
{
    cp_page page = page_of("[{\"id\":\"a\",\"key\":1,\"value\":null,"
                           "\"doc\":{\"_id\":\"a\",\"_rev\":\"1-x\",\"n\":1}}]", NULL, NULL, -1, -1);
    cp_links links = { "/d/", 0, NULL, NULL };
    apr_array_header_t *fields = apr_array_make(pool, 1, sizeof(const char *));
    const apr_array_header_t *revisions;

    APR_ARRAY_PUSH(fields, const char *) = "n";
    assert_non_null(strstr(cp_render_json(pool, &page, &links, fields, &revisions),
                           "\"doc\":{\"n\":1}"));
    assert_int_equal(revisions->nelts, 0);
}

/* What jansson writes (compact, then HTML-safe) for the page's own members,
 * built as jansson values: the reference the JSON page's writer must match
 * byte for byte. */
static const char *members_by_jansson(const cp_page *page, const cp_links *links)
{
    json_t *body = cp_json_pool_own(pool, json_object()), *urls = json_object(), *pages;
    const char *next_url = page->next ? cp_link_url(pool, links, page->next) : NULL;
    const char *prev_url = cp_prev_url(pool, links, page);
    int p;

#define STRING_OR_NULL(s) ((s) ? json_string(s) : json_null())
    json_object_set_new(body, "next", STRING_OR_NULL(page->next));
    json_object_set_new(body, "prev", STRING_OR_NULL(page->prev));
    json_object_set_new(urls, "next", STRING_OR_NULL(next_url));
    json_object_set_new(urls, "prev", STRING_OR_NULL(prev_url));
    json_object_set_new(urls, "first", json_string(cp_link_url(pool, links, NULL)));
    if (page->has_last) {
        json_object_set_new(urls, "last", json_string(cp_link_url(pool, links, page->last)));
    }
    json_object_set_new(body, "links", urls);
    if (page->withheld) {
        json_t *withheld = json_array();

        if (page->withheld & CP_WITHHELD_NEXT) {
            json_array_append_new(withheld, json_string("next"));
        }
        if (page->withheld & CP_WITHHELD_PREV) {
            json_array_append_new(withheld, json_string("prev"));
        }
        json_object_set_new(body, "withheld", withheld);
    }
    if (page->pages->nelts > 0) {
        pages = json_array();
        for (p = 0; p < page->pages->nelts; p++) {
            const cp_page_link *link = &APR_ARRAY_IDX(page->pages, p, cp_page_link);
            const char *url = link->withheld ? NULL : cp_link_url(pool, links, link->start);

            json_array_append_new(pages, json_pack("{s:I, s:o, s:b, s:o}",
                "number", (json_int_t)link->number, "start", STRING_OR_NULL(link->start),
                "current", link->current, "url", STRING_OR_NULL(url)));
        }
        json_object_set_new(body, "pages", pages);
    }
#undef STRING_OR_NULL
    json_object_set_new(body, "numbering", json_string(page->numbered ? "absolute"
                                                                      : "relative"));
    if (page->total_rows >= 0) {
        json_object_set_new(body, "total_rows", json_integer(page->total_rows));
        if (page->numbered) {
            json_object_set_new(body, "count", json_string(page->count_at_least ? "at least"
                                                                                : "exact"));
        }
        if (page->count_earlier) {
            json_object_set_new(body, "count_as_of", json_string("an earlier page"));
        }
    }
    if (page->offset >= 0) {
        json_object_set_new(body, "offset", json_integer(page->offset));
        if (page->rows->nelts > 0) {
            json_object_set_new(body, "first_row", json_integer(page->offset + 1));
            json_object_set_new(body, "last_row", json_integer(page->offset
                                                               + page->rows->nelts));
        }
    }
    if (page->has_last && !page->count_at_least) {
        json_object_set_new(body, "last_page", json_integer(page->last_number));
    }
    return cp_json_text_html_safe(pool, body);
}

/* The JSON page writes its own members itself, without building jansson
 * values: its strings (tokens, which are JSON text or sealed, and URLs)
 * are escaped as jansson escapes them (\" \\ \b \f \n \r \t, \u00XX for
 * the other control characters, UTF-8 as it is, DEL too) and HTML-safe,
 * and its numbers, page links, withheld links and last page are what
 * jansson would write, byte for byte. */
static void page_members_are_written_as_jansson_writes_them(void **state)
{
    char controls[33];
    const char *tokens[5];
    cp_links links = { "/p/", 0, "json", NULL };
    int i, shape;

    for (i = 0; i < 32; i++) {
        controls[i] = (char)(i + 1 == 32 ? 0x7f : i + 1);
    }
    controls[32] = '\0';
    tokens[0] = "[\"a\\\"b\\\\c\",\"d\"]";
    tokens[1] = apr_pstrcat(pool, "[\"", controls, "\",\"e\"]", NULL);
    tokens[2] = "[\"<script>&amp;</script>\",\"\xc3\xa9\xe6\x9d\xb1\xf0\x9f\x9a\x80\"]";
    tokens[3] = "[-9223372036854775807,\"x\",3]";
    tokens[4] = "3.AbC-_x";
    for (shape = 0; shape < 8; shape++) {
        cp_page page = page_of(shape & 1 ? "[{\"id\":\"a\",\"key\":1,\"value\":null}]" : "[]",
                               tokens[shape % 5], tokens[(shape + 1) % 5],
                               shape & 2 ? 123456789 : -1, shape & 4 ? 0 : -1);
        const char *json, *members;

        page.prev_is_first = shape == 3;
        page.withheld = shape % 4;
        if (shape & 4) {
            page.has_last = 1;
            page.last = tokens[(shape + 2) % 5];
            page.last_number = (apr_int64_t)1 << 40;
            add_page(&page, -2, tokens[shape % 5], 0);
            add_page(&page, -1, NULL, 0);
            APR_ARRAY_IDX(page.pages, 1, cp_page_link).withheld = 1;
            add_page(&page, 0, tokens[(shape + 3) % 5], 1);
        }
        json = cp_render_json(pool, &page, &links, NULL, NULL);
        members = members_by_jansson(&page, &links);
        /* the items, then the members' object without its opening brace */
        assert_non_null(strstr(json, "],\""));
        assert_string_equal(strstr(json, "],\"") + 2, members + 1);
    }
}

/* The body is written into room guessed from the rows' bytes: rows full
 * of < > & (each written as 6 bytes) outgrow it, and the body moves to a
 * larger buffer, nothing lost or repeated. */
static void a_page_full_of_markup_is_written_whole(void **state)
{
    char *amps = apr_palloc(pool, 20001);
    const char *row, *out;
    cp_links links = { "/x/", 0, NULL, NULL };
    cp_page page;
    json_t *body, *items;

    memset(amps, '&', 20000);
    amps[20000] = '\0';
    row = apr_pstrcat(pool, "{\"id\":\"a\",\"key\":1,\"value\":\"", amps, "\"}", NULL);
    page = page_of(apr_pstrcat(pool, "[", row, ",", row, ",", row, "]", NULL),
                   "[1,\"a\"]", NULL, -1, -1);
    out = cp_render_json(pool, &page, &links, NULL, NULL);
    assert_null(strchr(out, '&'));
    assert_int_equal(strlen(out), 3 * (strlen(row) + 5 * 20000) + 2
                                  + strlen("{\"items\":[]}") + strlen(members_by_jansson(&page, &links)) - 1);
    body = parse(out);
    items = json_object_get(body, "items");
    assert_int_equal(json_array_size(items), 3);
    assert_string_equal(json_string_value(json_object_get(json_array_get(items, 2), "value")), amps);
    assert_string_equal(json_string_value(json_object_get(body, "next")), "[1,\"a\"]");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        UNIT_TEST(a_known_position_shows_first_and_last_pages),
        UNIT_TEST(a_lower_bound_count_shows_a_plus_and_no_last_number),
        UNIT_TEST(a_page_renders_items_tokens_and_links),
        UNIT_TEST(items_show_only_the_fields),
        UNIT_TEST(a_lone_page_has_null_links_and_no_counts_when_absent),
        UNIT_TEST(items_are_the_rows_reduced_to_their_members),
        UNIT_TEST(documents_and_page_links_in_json),
        UNIT_TEST(page_members_are_written_as_jansson_writes_them),
        UNIT_TEST(a_page_full_of_markup_is_written_whole),
        UNIT_TEST(links_keep_the_clients_limit_and_format),
        UNIT_TEST(links_are_made_once_a_page),
        UNIT_TEST(prev_links_to_the_first_page_without_a_token),
        UNIT_TEST(links_of_tokens_too_long_are_withheld),
        UNIT_TEST(errors_are_json_with_error_and_reason),
        UNIT_TEST(errors_inside_html_pages_are_escaped_html),
        UNIT_TEST(html_fragment_lists_items_and_navigation),
        UNIT_TEST(html_first_and_last_pages_disable_their_links),
        UNIT_TEST(html_escapes_every_text),
        UNIT_TEST(relative_page_labels),
        UNIT_TEST(find_pages_show_documents_and_an_unnumbered_last_page),
        UNIT_TEST(find_items_default_to_the_title_or_the_sort_values),
        UNIT_TEST(find_documents_are_digested_by_revision),
        UNIT_TEST(html_shows_nul_as_a_replacement_character),
        UNIT_TEST(json_output_escapes_markup_characters),
        UNIT_TEST(words_are_replaced_and_escaped),
        UNIT_TEST(words_are_found_by_name),
        UNIT_TEST(fields_are_names_or_a_lone_star),
        UNIT_TEST(a_lone_row_and_a_lone_page),
        UNIT_TEST(thousands_are_separated_in_every_number),
        UNIT_TEST(an_item_renderer_makes_each_item),
        UNIT_TEST(etags_are_the_bodys_sha1),
        UNIT_TEST(etags_digest_documents_by_revision),
        UNIT_TEST(etags_digest_projected_documents_whole),
    };
    RUN_UNIT_TESTS("render", tests);
}
