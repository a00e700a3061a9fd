#include "unit.h"
#include "couchpage_plan.h"

#define DB_URL "http://127.0.0.1:5984/bands"
#define VIEW_URL DB_URL "/_design/bands/_view/by-name"

static cp_view view_of(const char *url)
{
    cp_view view;
    const char *reason;

    memset(&view, 0, sizeof(view));
    reason = cp_view_init(pool, url, &view);
    if (reason) {
        fail_msg("'%s' refused: %s", url, reason);
    }
    return view;
}

static cp_plan plan_of(const cp_view *view, const char *partition, const char *low,
                       const char *high, int count)
{
    cp_plan plan;
    const char *reason = cp_plan_init(pool, &plan, view, partition, low, high, count, 0);

    if (reason) {
        fail_msg("plan refused: %s", reason);
    }
    return plan;
}

static void view_urls_are_classified(void **state)
{
    cp_view view;

    view = view_of(VIEW_URL);
    assert_false(view.is_all_docs);
    assert_false(view.is_partitioned);
    assert_string_equal(view.db_url, DB_URL);
    assert_string_equal(view.index_path, "/_design/bands/_view/by-name");
    view = view_of("https://couch.example:6984/db/_all_docs");
    assert_true(view.is_all_docs);
    assert_string_equal(view.db_url, "https://couch.example:6984/db");
    view = view_of("balancer://couch/db/_design/d/_view/v");
    assert_false(view.is_all_docs);
    view = view_of("http://h/db/_partition/p1/_design/d/_view/v");
    assert_true(view.is_partitioned);
    assert_string_equal(view.db_url, "http://h/db");
    assert_string_equal(view.index_path, "/_partition/p1/_design/d/_view/v");
}

static void unusable_view_urls_are_refused(void **state)
{
    const char *bad[] = {
        "/bands/_design/bands/_view/by-name",          /* not absolute */
        "bands",
        "http://127.0.0.1:5984/bands",                  /* a database */
        "http://127.0.0.1:5984/bands/_design/bands",    /* a design document */
        "http://127.0.0.1:5984/bands/_design/bands/_view/",
        "http://127.0.0.1:5984/bands/_design//_view/v",
        "http://127.0.0.1:5984/bands/_design/bands/_view/v/extra",
        "http://127.0.0.1:5984/_all_docs",              /* no database */
        "http://127.0.0.1:5984/_design/d/_view/v",
        VIEW_URL "?limit=5",                            /* parameters are ours */
        VIEW_URL "#frag",
        "http://admin:secret@127.0.0.1:5984/db/_all_docs",
    };
    size_t i;
    cp_view view;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        if (!cp_view_init(pool, bad[i], &view)) {
            fail_msg("'%s' should be refused", bad[i]);
        }
    }
}

static void first_page_asks_for_one_row_more(void **state)
{
    cp_view view = view_of(VIEW_URL);
    cp_plan plan = plan_of(&view, NULL, NULL, NULL, 5);

    assert_string_equal(cp_plan_forward(pool, &plan, NULL), VIEW_URL "?limit=6&reduce=false");
    view = view_of("http://h/db/_all_docs");
    plan = plan_of(&view, NULL, NULL, NULL, 20);
    assert_string_equal(cp_plan_forward(pool, &plan, NULL), "http://h/db/_all_docs?limit=21");
}

static void later_pages_query_forward_and_backward_from_the_token(void **state)
{
    cp_view view = view_of(VIEW_URL);
    cp_plan plan = plan_of(&view, NULL, NULL, NULL, 5);
    cp_token start = { NULL, "\"Nirvana\"", "a1", 0 };

    assert_string_equal(cp_plan_forward(pool, &plan, &start),
                        VIEW_URL "?limit=6&reduce=false&startkey=%22Nirvana%22"
                        "&startkey_docid=a1");
    assert_string_equal(cp_plan_backward(pool, &plan, &start, 1, 0),
                        VIEW_URL "?limit=5&reduce=false&descending=true"
                        "&startkey=%22Nirvana%22&startkey_docid=a1&skip=1");
}

/* Whatever a key or id holds stays one parameter value. */
static void keys_cannot_smuggle_parameters(void **state)
{
    cp_view view = view_of(VIEW_URL);
    cp_plan plan = plan_of(&view, NULL, NULL, NULL, 5);
    cp_token start = { NULL, "\"x&skip=100#\\r\\n\"", "a&endkey=\"z\"\r\n", 0 };

    assert_string_equal(cp_plan_forward(pool, &plan, &start),
                        VIEW_URL "?limit=6&reduce=false"
                        "&startkey=%22x%26skip%3d100%23%5cr%5cn%22"
                        "&startkey_docid=a%26endkey%3d%22z%22%0d%0a");
}

static void a_range_bounds_every_query(void **state)
{
    cp_view view = view_of(VIEW_URL);
    cp_plan plan = plan_of(&view, NULL, "[\"p\",0]", "[\"p\",{}]", 2);
    cp_token start = { NULL, "[\"p\",7]", "c7", 0 };

    assert_string_equal(cp_plan_forward(pool, &plan, NULL),
                        VIEW_URL "?limit=3&reduce=false&startkey=%5b%22p%22%2c0%5d"
                        "&endkey=%5b%22p%22%2c%7b%7d%5d");
    assert_string_equal(cp_plan_forward(pool, &plan, &start),
                        VIEW_URL "?limit=3&reduce=false&startkey=%5b%22p%22%2c7%5d"
                        "&startkey_docid=c7&endkey=%5b%22p%22%2c%7b%7d%5d");
    assert_string_equal(cp_plan_backward(pool, &plan, &start, 1, 0),
                        VIEW_URL "?limit=2&reduce=false&descending=true"
                        "&startkey=%5b%22p%22%2c7%5d&startkey_docid=c7"
                        "&endkey=%5b%22p%22%2c0%5d&skip=1");
    /* an open side sends no bound */
    plan = plan_of(&view, NULL, NULL, "9", 2);
    assert_string_equal(cp_plan_forward(pool, &plan, NULL),
                        VIEW_URL "?limit=3&reduce=false&endkey=9");
    assert_string_equal(cp_plan_backward(pool, &plan, &start, 1, 0),
                        VIEW_URL "?limit=2&reduce=false&descending=true"
                        "&startkey=%5b%22p%22%2c7%5d&startkey_docid=c7&skip=1");
}

static void descending_swaps_directions_and_bounds(void **state)
{
    cp_view view = view_of(VIEW_URL);
    cp_plan plan;
    cp_token start = { NULL, "5", "d5", 0 };

    view.descending = 1;
    plan = plan_of(&view, NULL, "1", "9", 2);
    assert_string_equal(cp_plan_forward(pool, &plan, NULL),
                        VIEW_URL "?limit=3&reduce=false&descending=true&startkey=9&endkey=1");
    assert_string_equal(cp_plan_forward(pool, &plan, &start),
                        VIEW_URL "?limit=3&reduce=false&descending=true&startkey=5"
                        "&startkey_docid=d5&endkey=1");
    assert_string_equal(cp_plan_backward(pool, &plan, &start, 1, 0),
                        VIEW_URL "?limit=2&reduce=false&startkey=5&startkey_docid=d5"
                        "&endkey=9&skip=1");
}

static void grouped_rows_read_backward_without_skip(void **state)
{
    cp_view view = view_of(VIEW_URL);
    cp_plan plan;
    cp_token start = { NULL, "[2026,11]", NULL, 0 };

    view.reduce = 1;
    view.group_level = CP_GROUP_EXACT;
    plan = plan_of(&view, NULL, NULL, NULL, 2);
    assert_string_equal(cp_plan_forward(pool, &plan, &start),
                        VIEW_URL "?limit=3&reduce=true&group=true&startkey=%5b2026%2c11%5d");
    assert_string_equal(cp_plan_backward(pool, &plan, &start, 1, 0),
                        VIEW_URL "?limit=3&reduce=true&group=true&descending=true"
                        "&startkey=%5b2026%2c11%5d");
    view.group_level = 2;
    plan = plan_of(&view, NULL, NULL, NULL, 2);
    assert_string_equal(cp_plan_forward(pool, &plan, NULL),
                        VIEW_URL "?limit=3&reduce=true&group_level=2");
}

static void documents_only_for_the_page_itself(void **state)
{
    cp_view view = view_of(VIEW_URL);
    cp_plan plan;
    cp_token start = { NULL, "1", "d1", 0 };

    view.include_docs = 1;
    plan = plan_of(&view, NULL, NULL, NULL, 2);
    assert_string_equal(cp_plan_forward(pool, &plan, &start),
                        VIEW_URL "?limit=3&reduce=false&startkey=1&startkey_docid=d1"
                        "&include_docs=true");
    /* rows read backward only make a link: keys only */
    assert_null(strstr(cp_plan_backward(pool, &plan, &start, 1, 0), "include_docs"));
}

static void all_docs_sends_no_docid_and_no_reduce(void **state)
{
    cp_view view = view_of(DB_URL "/_all_docs");
    cp_plan plan = plan_of(&view, NULL, NULL, NULL, 2);
    cp_token start = { NULL, "\"b\"", "b", 0 };

    assert_string_equal(cp_plan_forward(pool, &plan, &start),
                        DB_URL "/_all_docs?limit=3&startkey=%22b%22");
    assert_string_equal(cp_plan_backward(pool, &plan, &start, 1, 0),
                        DB_URL "/_all_docs?limit=2&descending=true&startkey=%22b%22&skip=1");
}

static void partitions_go_into_the_path(void **state)
{
    cp_view view = view_of(VIEW_URL);
    cp_plan plan = plan_of(&view, "sensor 1/x", NULL, NULL, 2);
    const char *reason;

    assert_string_equal(cp_plan_forward(pool, &plan, NULL),
                        DB_URL "/_partition/sensor%201%2fx/_design/bands/_view/by-name"
                        "?limit=3&reduce=false");
    view = view_of(DB_URL "/_all_docs");
    plan = plan_of(&view, "p", NULL, NULL, 2);
    assert_string_equal(cp_plan_forward(pool, &plan, NULL),
                        DB_URL "/_partition/p/_all_docs?limit=3");
    assert_non_null(cp_plan_init(pool, &plan, &view, "", NULL, NULL, 2, 0));
    assert_non_null(cp_plan_init(pool, &plan, &view, "_system", NULL, NULL, 2, 0));
    assert_non_null(cp_plan_init(pool, &plan, &view, "a:b", NULL, NULL, 2, 0));
    view = view_of(DB_URL "/_partition/p/_all_docs");
    reason = cp_plan_init(pool, &plan, &view, "q", NULL, NULL, 2, 0);
    assert_non_null(reason);
    assert_non_null(strstr(reason, "names a partition already"));
}

/* Page links widen the queries; rows only for links never carry documents. */
static void page_links_read_several_pages_keys_only(void **state)
{
    cp_view view = view_of(VIEW_URL);
    cp_plan plan;
    cp_token start = { NULL, "7", "d7", 0 };

    cp_plan_init(pool, &plan, &view, NULL, NULL, NULL, 5, 3);
    assert_false(cp_plan_needs_ahead(&plan));
    assert_string_equal(cp_plan_forward(pool, &plan, &start),
                        VIEW_URL "?limit=16&reduce=false&startkey=7&startkey_docid=d7");
    assert_string_equal(cp_plan_backward(pool, &plan, &start, 1, 0),
                        VIEW_URL "?limit=15&reduce=false&descending=true&startkey=7"
                        "&startkey_docid=d7&skip=1");
    view.include_docs = 1;
    cp_plan_init(pool, &plan, &view, NULL, NULL, "99", 5, 3);
    assert_true(cp_plan_needs_ahead(&plan));
    assert_string_equal(cp_plan_forward(pool, &plan, &start),
                        VIEW_URL "?limit=6&reduce=false&startkey=7&startkey_docid=d7"
                        "&endkey=99&include_docs=true");
    assert_string_equal(cp_plan_ahead(pool, &plan, &start),
                        VIEW_URL "?limit=11&reduce=false&startkey=7&startkey_docid=d7"
                        "&endkey=99");
    cp_plan_init(pool, &plan, &view, NULL, NULL, NULL, 5, 1);
    assert_false(cp_plan_needs_ahead(&plan));
}

/* Read descending, a group a level cut short starts after all it groups. */
static void descending_groups_start_after_their_keys(void **state)
{
    cp_view view = view_of(VIEW_URL);
    cp_plan plan;
    cp_token start = { NULL, "[2023]", NULL, 0 };

    start.key = parse("[2023]");
    view.reduce = 1;
    view.descending = 1;
    view.group_level = 1;
    plan = plan_of(&view, NULL, NULL, NULL, 1);
    assert_string_equal(cp_plan_forward(pool, &plan, &start),
                        VIEW_URL "?limit=2&reduce=true&group_level=1&descending=true"
                        "&startkey=%5b2023%2c%7b%7d%5d");
    /* backward, ascending: from the group key itself */
    assert_string_equal(cp_plan_backward(pool, &plan, &start, 1, 0),
                        VIEW_URL "?limit=2&reduce=true&group_level=1&startkey=%5b2023%5d");
    /* a key shorter than the level is a whole key */
    view.group_level = 2;
    plan = plan_of(&view, NULL, NULL, NULL, 1);
    assert_non_null(strstr(cp_plan_forward(pool, &plan, &start), "&startkey=%5b2023%5d"));
    /* ascending needs nothing */
    view.descending = 0;
    view.group_level = 1;
    plan = plan_of(&view, NULL, NULL, NULL, 1);
    assert_non_null(strstr(cp_plan_forward(pool, &plan, &start), "&startkey=%5b2023%5d"));
}

/* CouchDB makes no reversed-range check on _all_docs: ids are checked here,
 * by bytes as CouchDB collates them. */
static void all_docs_starts_are_checked_against_the_range(void **state)
{
    cp_view view = view_of(DB_URL "/_all_docs");
    cp_plan plan = plan_of(&view, NULL, "\"b\"", "\"y\"", 3);
    cp_token start = { NULL, NULL, NULL, 0 };
    const char *inside[] = { "\"b\"", "\"b \"", "\"xyz\"", "\"y\"" };
    const char *outside[] = { "\"a\"", "\"B\"", "\"y \"", "\"z\"", "\"\\u00e9\"", "1", "null" };
    size_t i;

    for (i = 0; i < sizeof(inside) / sizeof(inside[0]); i++) {
        start.key = parse(inside[i]);
        if (cp_plan_check_start(pool, &plan, &start)) {
            fail_msg("%s is inside the range", inside[i]);
        }
    }
    for (i = 0; i < sizeof(outside) / sizeof(outside[0]); i++) {
        start.key = parse(outside[i]);
        if (!cp_plan_check_start(pool, &plan, &start)) {
            fail_msg("%s is outside the range", outside[i]);
        }
    }
    /* views are CouchDB's to check */
    view = view_of(VIEW_URL);
    plan = plan_of(&view, NULL, "\"b\"", "\"y\"", 3);
    start.key = parse("\"a\"");
    assert_null(cp_plan_check_start(pool, &plan, &start));
}

/* A token inside one document's rows: forward skips to it; backward reads
 * the whole entry (no skip) when it has several rows. */
static void tokens_inside_one_documents_rows(void **state)
{
    cp_view view = view_of(VIEW_URL);
    cp_plan plan = plan_of(&view, NULL, NULL, NULL, 2);
    cp_token start = { NULL, "\"x\"", "d1", 2 };

    assert_string_equal(cp_plan_forward(pool, &plan, &start),
                        VIEW_URL "?limit=3&reduce=false&startkey=%22x%22&startkey_docid=d1&skip=2");
    assert_string_equal(cp_plan_backward(pool, &plan, &start, 3, 0),
                        VIEW_URL "?limit=5&reduce=false&descending=true&startkey=%22x%22"
                        "&startkey_docid=d1");
    /* one row more than the pages need, to see whether the far entry goes on */
    assert_int_equal(cp_plan_backward_limit(&plan, 1, 1), 3);
    assert_non_null(strstr(cp_plan_backward(pool, &plan, &start, 1, 1), "?limit=3&"));
    assert_int_equal(cp_plan_backward_limit(&plan, 3, 1), 6);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        UNIT_TEST(view_urls_are_classified),
        UNIT_TEST(unusable_view_urls_are_refused),
        UNIT_TEST(first_page_asks_for_one_row_more),
        UNIT_TEST(later_pages_query_forward_and_backward_from_the_token),
        UNIT_TEST(keys_cannot_smuggle_parameters),
        UNIT_TEST(a_range_bounds_every_query),
        UNIT_TEST(descending_swaps_directions_and_bounds),
        UNIT_TEST(grouped_rows_read_backward_without_skip),
        UNIT_TEST(documents_only_for_the_page_itself),
        UNIT_TEST(all_docs_sends_no_docid_and_no_reduce),
        UNIT_TEST(partitions_go_into_the_path),
        UNIT_TEST(page_links_read_several_pages_keys_only),
        UNIT_TEST(descending_groups_start_after_their_keys),
        UNIT_TEST(all_docs_starts_are_checked_against_the_range),
        UNIT_TEST(tokens_inside_one_documents_rows),
    };
    RUN_UNIT_TESTS("plan", tests);
}
