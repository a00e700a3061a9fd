/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of couchpage_view: CouchPageView URLs, classified or refused;
 * they link the core alone. */
#include "unit.h"
#include "couchpage_view.h"

#define DB_URL "http://127.0.0.1:5984/bands"
#define VIEW_URL DB_URL "/_design/bands/_view/by-name"

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        UNIT_TEST(view_urls_are_classified),
        UNIT_TEST(unusable_view_urls_are_refused),
    };
    RUN_UNIT_TESTS("view", tests);
}
