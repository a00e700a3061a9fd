/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of couchpage_counts: the served-by note, the shared counters
 * and mod_status's section of them; they link the core alone. */
#include "unit.h"
#include "couchpage_counts.h"

static void served_by_notes_join_what_answered_in_order(void **state)
{
    assert_null(cp_served_by_note(pool, NULL, 0));
    assert_string_equal(cp_served_by_note(pool, NULL, CP_SERVED_BY_GET), "get");
    assert_string_equal(cp_served_by_note(pool, NULL, CP_SERVED_BY_FIND | CP_SERVED_BY_BATCH),
                        "batch+find");
    /* an included page's note adds to the including page's */
    assert_string_equal(cp_served_by_note(pool, "find", CP_SERVED_BY_GET), "get+find");
    assert_string_equal(cp_served_by_note(pool, "batch+get", 0), "batch+get");
}

static void pages_and_counted_errors_are_added(void **state)
{
    cp_counters counters;

    memset(&counters, 0, sizeof(counters));
    cp_counters_add(&counters, 200, 2, 1500, 40);
    cp_counters_add(&counters, 200, 1, 500, 20);
    cp_counters_add(&counters, 502, 1, 100, 0);
    cp_counters_add(&counters, 304, 1, 100, 20); /* neither a page nor a counted error */
    assert_int_equal(counters.pages, 2);
    assert_int_equal(counters.backend_requests, 5);
    assert_int_equal(counters.backend_time, 2200);
    assert_int_equal(counters.rows, 80);
    assert_int_equal(counters.errors[0], 0);
    assert_int_equal(counters.errors[1], 1);
}

static void the_section_is_html_or_auto_lines(void **state)
{
    cp_counters counters;
    const char *text;

    memset(&counters, 0, sizeof(counters));
    cp_counters_add(&counters, 200, 4, 1000, 7);
    cp_counters_add(&counters, 504, 0, 0, 0);
    text = cp_counters_section(pool, &counters, "1.2.3", 1);
    assert_string_equal(text, "CouchPageVersion: 1.2.3\nCouchPagePages: 1\n"
                        "CouchPageBackendRequests: 4\nCouchPageBackendTimeMicroseconds: 1000\n"
                        "CouchPageBackendMeanMicroseconds: 250\nCouchPageRows: 7\n"
                        "CouchPageErrors400: 0\nCouchPageErrors502: 0\n"
                        "CouchPageErrors503: 0\nCouchPageErrors504: 1\n");
    text = cp_counters_section(pool, &counters, "1.2.3", 0);
    assert_non_null(strstr(text, "<hr />\n<h2>CouchPage</h2>\n<p>mod_couchpage 1.2.3</p>\n"
                                 "<dl>\n<dt>Pages served: 1</dt>\n"));
    assert_non_null(strstr(text, "<dt>Backend time a request (&micro;s): 250</dt>\n"));
    assert_non_null(strstr(text, "<dt>Errors 504: 1</dt>\n</dl>\n"));
    /* off: the version alone, and the HTML says so */
    assert_string_equal(cp_counters_section(pool, NULL, "1.2.3", 1),
                        "CouchPageVersion: 1.2.3\n");
    assert_non_null(strstr(cp_counters_section(pool, NULL, "1.2.3", 0), "<p>Off: no shared "
                           "memory for the counters (the error log says why).</p>\n"));
    memset(&counters, 0, sizeof(counters));
    assert_non_null(strstr(cp_counters_section(pool, &counters, "v", 1),
                           "CouchPageBackendMeanMicroseconds: 0\n"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        UNIT_TEST(served_by_notes_join_what_answered_in_order),
        UNIT_TEST(pages_and_counted_errors_are_added),
        UNIT_TEST(the_section_is_html_or_auto_lines),
    };

    RUN_UNIT_TESTS("counts", tests);
}
