/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of couchpage_settings: the merged configuration's faults, as
 * a request meets them and as start-up refuses them (each with its code,
 * and none where a section it cannot place may change it), and what a
 * secret's file may hold; they link the core alone. */
#include "unit.h"
#include "couchpage_item.h"
#include "couchpage_settings.h"

/* A directive's place is its name here: where() writes it out so. */
static const char *where(apr_pool_t *p, const void *directive)
{
    return apr_pstrcat(p, "conf:", (const char *)directive, NULL);
}

static cp_view view;

/* A view location's settings that are at no fault: page size 20 of 100. */
static cp_settings view_location(void)
{
    cp_settings s;

    memset(&view, 0, sizeof(view));
    memset(&s, 0, sizeof(s));
    view.update = NULL;
    s.view = &view;
    s.view_set = 1;
    s.view_where = "view";
    s.handler_set = 1;
    s.handler_where = "handler";
    s.page_size = 20;
    s.max_page_size = 100;
    s.max_links = 5;
    s.where = where;
    return s;
}

static void a_sound_location_has_no_fault(void **state)
{
    cp_settings s = view_location();
    const char *code = NULL;

    assert_null(cp_settings_request_fault(pool, &s));
    assert_null(cp_settings_startup_fault(pool, &s, 0, "<Location \"/x\">", &code));
    assert_null(code);
}

static void a_request_meets_the_first_fault(void **state)
{
    cp_settings s = view_location();

    s.view_set = 0;
    assert_string_equal(cp_settings_request_fault(pool, &s), "no CouchPageView is set");
    s.view_set = 1;
    view.reduce = view.include_docs = 1;
    assert_string_equal(cp_settings_request_fault(pool, &s),
                        "CouchPageReduce On and CouchPageIncludeDocs On are merged here; "
                        "grouped rows have no documents");
    view.reduce = view.include_docs = 0;
    s.page_size = 200;
    s.page_size_set = 1;
    s.page_size_where = "size";
    assert_string_equal(cp_settings_request_fault(pool, &s),
                        "CouchPageSize 200 (conf:size) is larger than CouchPageMaxSize 100 "
                        "(the default)");
    s.max_page_size_set = 1;
    s.max_page_size_where = "max";
    assert_string_equal(cp_settings_request_fault(pool, &s),
                        "CouchPageSize 200 (conf:size) is larger than CouchPageMaxSize 100 "
                        "(conf:max)");
    /* more links than their maximum: start-up's alone (a page shows fewer) */
    s = view_location();
    s.links = 9;
    s.links_set = 1;
    s.links_where = "links";
    assert_null(cp_settings_request_fault(pool, &s));
}

static void documents_read_where_none_come_are_faults(void **state)
{
    cp_settings s = view_location();

    s.item_set = s.item_reads_doc = 1;
    s.item_where = "item";
    assert_string_equal(cp_settings_request_fault(pool, &s),
                        "CouchPageItem (conf:item) reads the rows' documents (doc), and "
                        "CouchPageIncludeDocs is not On");
    s.item_is_template = 1;
    assert_non_null(strstr(cp_settings_request_fault(pool, &s), "CouchPageItemTemplate"));
    s.format_is_json = 1;           /* no item is shown */
    assert_null(cp_settings_request_fault(pool, &s));
    s = view_location();
    s.fields = apr_array_make(pool, 1, sizeof(const char *));
    s.fields_set = 1;
    s.fields_where = "fields";
    assert_string_equal(cp_settings_request_fault(pool, &s),
                        "CouchPageFields (conf:fields) picks members of the rows' documents, "
                        "and CouchPageIncludeDocs is not On");
    view.is_find = 1;               /* a _find's rows carry documents */
    s.sort_set = 1;
    assert_null(cp_settings_request_fault(pool, &s));
}

static void directives_of_the_other_kind_are_faults(void **state)
{
    cp_settings s = view_location();

    s.index_set = 1;
    assert_string_equal(cp_settings_request_fault(pool, &s),
                        "CouchPageIndex is set where CouchPageView (conf:view) names a view: "
                        "it shapes _find queries only");
    s = view_location();
    view.is_find = 1;
    assert_string_equal(cp_settings_request_fault(pool, &s),
                        "CouchPageView (conf:view) names a _find, and no CouchPageSort is "
                        "set: a _find location pages in the order of its sort fields");
    s.sort_set = 1;
    view.update = "lazy";
    assert_non_null(strstr(cp_settings_request_fault(pool, &s), "CouchPageUpdate lazy is set"));
    view.update = "false";
    s.group_level_set = s.max_emits_set = 1;
    assert_string_equal(cp_settings_request_fault(pool, &s),
                        "CouchPageGroupLevel is set where CouchPageView (conf:view) names a "
                        "_find: it shapes view queries only (CouchPageSelector chooses the "
                        "documents)");
}

static void startup_names_the_code_section_and_fix(void **state)
{
    cp_settings s = view_location();
    const char *code = NULL, *fault;

    s.view_set = 0;
    fault = cp_settings_startup_fault(pool, &s, 0, "<Location \"/x\">", &code);
    assert_string_equal(code, "CP0112");
    assert_string_equal(fault, "SetHandler couchpage (conf:handler) applies in <Location "
                        "\"/x\">, where no CouchPageView is set: every request there would "
                        "be answered 500. Set CouchPageView there, or SetHandler couchpage "
                        "only where a view is set");
    /* a view another section may set is not refused, nor anything else */
    assert_null(cp_settings_startup_fault(pool, &s, CP_SETS_VIEW, "x", &code));
    s = view_location();
    s.links = 9;
    s.links_set = 1;
    s.links_where = "links";
    fault = cp_settings_startup_fault(pool, &s, 0, "the server config", &code);
    assert_string_equal(code, "CP0420");
    assert_string_equal(fault, "CouchPageLinks 9 (conf:links) is more than CouchPageMaxLinks "
                        "5 (the default) in the server config: its pages would show fewer "
                        "links than it says. Raise CouchPageMaxLinks (each link costs a page "
                        "of rows) or lower CouchPageLinks");
    assert_null(cp_settings_startup_fault(pool, &s, CP_SETS_MAX_LINKS, "x", &code));
    /* where SetHandler is not certainly couchpage, nothing is refused */
    s.handler_set = 0;
    assert_null(cp_settings_startup_fault(pool, &s, 0, "x", &code));
    s = view_location();
    s.index_set = 1;
    fault = cp_settings_startup_fault(pool, &s, CP_SETS_PAGE_SIZE, "<Location \"/y\">", &code);
    assert_string_equal(code, "CP0320");
    assert_non_null(strstr(fault, "view: it shapes _find queries only, in <Location \"/y\">: "
                                  "every request there would be answered 500"));
}

static void an_item_outside_the_fields_is_refused_at_startup(void **state)
{
    cp_settings s = view_location();
    apr_array_header_t *read = apr_array_make(pool, 1, sizeof(const cp_field *));
    apr_array_header_t *fields = apr_array_make(pool, 1, sizeof(const char *));
    const char *code = NULL, *fault, *err = NULL;

    APR_ARRAY_PUSH(read, const cp_field *) = cp_field_parse(pool, "doc.secret", &err);
    APR_ARRAY_PUSH(fields, const char *) = "title";
    view.include_docs = 1;
    s.item_set = s.item_reads_doc = 1;
    s.item_read = read;
    s.item_where = "item";
    s.fields = fields;
    s.fields_set = 1;
    s.fields_where = "fields";
    assert_null(cp_settings_request_fault(pool, &s));
    fault = cp_settings_startup_fault(pool, &s, 0, "S", &code);
    assert_string_equal(code, "CP0421");
    assert_string_equal(fault, apr_psprintf(pool, "CouchPageItem (conf:item) %s (conf:fields) "
                                            "in S: only CouchPageFields' members leave the "
                                            "server, so the item would not show what it "
                                            "reads. Read only those members in the item, or "
                                            "add the member to CouchPageFields",
                                            cp_fields_fault(pool, read, fields)));
    assert_null(cp_settings_startup_fault(pool, &s, CP_SETS_FIELDS, "S", &code));
}

static void whole_numbers_are_bounded(void **state)
{
    apr_int64_t n = 0;

    assert_null(cp_settings_whole_number(pool, "CouchPageSize", "20", 1, 10000, &n));
    assert_int_equal(n, 20);
    assert_string_equal(cp_settings_whole_number(pool, "CouchPageSize", "0", 1, 10000, &n),
                        "CouchPageSize: '0' is not a whole number from 1 to 10000");
    assert_non_null(cp_settings_whole_number(pool, "CouchPageSize", "2x", 1, 10000, &n));
    assert_non_null(cp_settings_whole_number(pool, "CouchPageSize", "", 1, 10000, &n));
    assert_non_null(cp_settings_whole_number(pool, "CouchPageSize", "99999999999999999999", 1,
                                             10000, &n));
    assert_int_equal(n, 20);
}

static void a_secret_file_holds_one_line(void **state)
{
    char big[CP_SECRET_FILE_MAX + 1];
    apr_size_t len;

    len = 5;
    assert_null(cp_settings_secret_file_fault(pool, "secret", "abc\r\n", &len));
    assert_int_equal(len, 3);
    len = 4;
    assert_null(cp_settings_secret_file_fault(pool, "password", "abc\n", &len));
    assert_int_equal(len, 3);
    len = 1;
    assert_string_equal(cp_settings_secret_file_fault(pool, "password", "\n", &len),
                        "is empty; it holds the password alone");
    len = 8;
    assert_string_equal(cp_settings_secret_file_fault(pool, "secret", "abc\r\ndef", &len),
                        "holds more than one line, or a NUL; it holds the secret alone, on "
                        "one line");
    len = 3;
    assert_non_null(cp_settings_secret_file_fault(pool, "secret", "a\0b", &len));
    memset(big, 'x', sizeof(big));
    len = sizeof(big);
    assert_string_equal(cp_settings_secret_file_fault(pool, "secret", big, &len),
                        "is longer than 4096 bytes; it holds the secret alone");
    len = sizeof(big) - 1;
    assert_null(cp_settings_secret_file_fault(pool, "secret", big, &len));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        UNIT_TEST(a_sound_location_has_no_fault),
        UNIT_TEST(a_request_meets_the_first_fault),
        UNIT_TEST(documents_read_where_none_come_are_faults),
        UNIT_TEST(directives_of_the_other_kind_are_faults),
        UNIT_TEST(startup_names_the_code_section_and_fix),
        UNIT_TEST(an_item_outside_the_fields_is_refused_at_startup),
        UNIT_TEST(whole_numbers_are_bounded),
        UNIT_TEST(a_secret_file_holds_one_line),
    };

    RUN_UNIT_TESTS("settings", tests);
}
