/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of couchpage_view: CouchPageView URLs, classified or refused,
 * and shown in messages; CouchPageUpdate's words; they link the core alone. */
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

/* mod_proxy's worker lookup, as ap_proxy_get_worker_ex does it */
static void worker_names_serve_urls_as_mod_proxy_matches_them(void **state)
{
    assert_true(cp_view_worker_serves(pool, "http://127.0.0.1:5984/", 0, VIEW_URL));
    assert_true(cp_view_worker_serves(pool, "http://127.0.0.1:5984", 0, VIEW_URL));
    assert_true(cp_view_worker_serves(pool, "http://127.0.0.1:5984/bands/", 0, VIEW_URL));
    /* the scheme and host of the URL are compared in lower case, its path not */
    assert_true(cp_view_worker_serves(pool, "http://couch.example:5984/",
                                      0, "HTTP://Couch.Example:5984/db/_all_docs"));
    assert_false(cp_view_worker_serves(pool, "http://couch.example:5984/DB/",
                                       0, "http://couch.example:5984/db/_all_docs"));
    /* host names as written: localhost is not 127.0.0.1 */
    assert_false(cp_view_worker_serves(pool, "http://localhost:5984/", 0, VIEW_URL));
    /* another port, a longer port, another path, another scheme */
    assert_false(cp_view_worker_serves(pool, "http://127.0.0.1:5985/", 0, VIEW_URL));
    assert_false(cp_view_worker_serves(pool, "http://127.0.0.1:59", 0, VIEW_URL));
    assert_false(cp_view_worker_serves(pool, "http://127.0.0.1:5984/other/", 0, VIEW_URL));
    assert_false(cp_view_worker_serves(pool, "https://127.0.0.1:5984/", 0, VIEW_URL));
    /* a name longer than the URL */
    assert_false(cp_view_worker_serves(pool, VIEW_URL "/more", 0, VIEW_URL));
    /* ProxyPassMatch workers: $N stands for any run */
    assert_true(cp_view_worker_serves(pool, "http://127.0.0.1:5984/$1", 1, VIEW_URL));
    assert_true(cp_view_worker_serves(pool, "http://127.0.0.1:5984/$1/_design/$2", 1, VIEW_URL));
    assert_false(cp_view_worker_serves(pool, "http://127.0.0.1:5984/$1/_all_docs", 1, VIEW_URL));
    assert_false(cp_view_worker_serves(pool, "http://127.0.0.1:5984/$1", 0, VIEW_URL));
    assert_false(cp_view_worker_serves(pool, "http://127.0.0.1:5984/", 0, "not a url"));
}

static void query_urls_start_at_the_view_or_the_partitions(void **state)
{
    cp_view view = view_of(VIEW_URL);

    assert_string_equal(cp_view_query_prefix(pool, &view, 0), VIEW_URL);
    assert_string_equal(cp_view_query_prefix(pool, &view, 1), DB_URL "/_partition/");
}

/* Messages show a view URL without its credentials, parsed or not. */
/* Beside a _find: its database's or its partition's _explain and views;
 * the database's URL leaves the partition a URL names out. */
static void urls_beside_a_find_keep_its_partition(void **state)
{
    cp_view view;

    assert_string_equal(cp_view_beside_find(pool, "http://c:5984/db/_find", "/_explain"),
                        "http://c:5984/db/_explain");
    assert_string_equal(cp_view_beside_find(pool, "http://c:5984/db/_partition/p%2fq/_find",
                                            "/_design/x/_view/y"),
                        "http://c:5984/db/_partition/p%2fq/_design/x/_view/y");
    assert_null(cp_view_init(pool, "http://c:5984/db/_partition/p/_find", &view));
    assert_string_equal(cp_view_db_url(pool, &view, "/_design/x/_view/y"),
                        "http://c:5984/db/_design/x/_view/y");
    assert_string_equal(cp_view_beside_find(pool, view.url, "/_design/x/_view/y"),
                        "http://c:5984/db/_partition/p/_design/x/_view/y");
}

static void view_urls_are_shown_without_credentials(void **state)
{
    assert_string_equal(cp_view_url_shown(pool, VIEW_URL), VIEW_URL);
    assert_string_equal(cp_view_url_shown(pool, "http://admin:secret@h:5984/db/_all_docs"),
                        "http://***@h:5984/db/_all_docs");
    /* the last '@' of the authority ends the credentials; one after it not */
    assert_string_equal(cp_view_url_shown(pool, "http://a@b:p@w@h/db/x@y"),
                        "http://***@h/db/x@y");
    assert_string_equal(cp_view_url_shown(pool, "user:pw@host/db"), "***@host/db");
    assert_string_equal(cp_view_url_shown(pool, "http://h/db?u=a@b"), "http://h/db?u=a@b");
}

/* CouchPageUpdate's words, in any case, become CouchDB's lower-case ones. */
static void update_words_are_couchdbs_in_lower_case(void **state)
{
    assert_string_equal(cp_view_update_named("true"), "true");
    assert_string_equal(cp_view_update_named("False"), "false");
    assert_string_equal(cp_view_update_named("LAZY"), "lazy");
    assert_null(cp_view_update_named("yes"));
    assert_null(cp_view_update_named(""));
    assert_null(cp_view_update_named("lazy "));
}

static void a_worker_on_another_host_name_is_named(void **state)
{
    apr_array_header_t *names = apr_array_make(pool, 4, sizeof(const char *));

    APR_ARRAY_PUSH(names, const char *) = "https://127.0.0.1:5984";   /* another scheme */
    APR_ARRAY_PUSH(names, const char *) = "http://localhost:5985";    /* another port */
    assert_null(cp_view_worker_of_other_host(pool, names, "http://127.0.0.1:5984/db/_all_docs"));
    APR_ARRAY_PUSH(names, const char *) = "http://localhost:5984";
    assert_string_equal(cp_view_worker_of_other_host(pool, names,
                                                     "http://127.0.0.1:5984/db/_all_docs"),
                        "http://localhost:5984");
    /* the same host, in another case, is no other host; a default port is its own */
    apr_array_clear(names);
    APR_ARRAY_PUSH(names, const char *) = "http://COUCH:80";
    assert_null(cp_view_worker_of_other_host(pool, names, "http://couch/db/_all_docs"));
    APR_ARRAY_PUSH(names, const char *) = "http://other";
    assert_string_equal(cp_view_worker_of_other_host(pool, names, "http://couch:80/db/_find"),
                        "http://other");
}

static int loaded_but_ssl(const char *module)
{
    return strcmp(module, "mod_ssl.c") != 0;
}

static int none_loaded(const char *module)
{
    return 0;
}

static void schemes_are_served_with_their_proxy_modules(void **state)
{
    const cp_view_scheme *https = cp_view_scheme_of("HTTPS://couch:6984/db/_all_docs");

    assert_non_null(https);
    assert_string_equal(https->scheme, "https");
    assert_string_equal(cp_view_scheme_of("balancer://c/db/_find")->scheme, "balancer");
    assert_null(cp_view_scheme_of("ftp://h/db/_all_docs"));
    assert_null(cp_view_scheme_of("httpx://h/db/_all_docs"));
    assert_null(cp_view_scheme_fault(pool, "http://h/db/_all_docs"));
    assert_string_equal(cp_view_scheme_fault(pool, "ftp://h/db/_all_docs"),
                        "has a scheme the module does not serve; use http://, https:// or "
                        "balancer://");
    assert_string_equal(cp_view_scheme_missing(pool, https, loaded_but_ssl),
                        "mod_ssl (LoadModule ssl_module)");
    assert_string_equal(cp_view_scheme_missing(pool, cp_view_scheme_of("http://h"),
                                               none_loaded),
                        "mod_proxy (LoadModule proxy_module), mod_proxy_http (LoadModule "
                        "proxy_http_module)");
    assert_null(cp_view_scheme_missing(pool, cp_view_scheme_of("http://h"), loaded_but_ssl));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        UNIT_TEST(view_urls_are_classified),
        UNIT_TEST(schemes_are_served_with_their_proxy_modules),
        UNIT_TEST(a_worker_on_another_host_name_is_named),
        UNIT_TEST(unusable_view_urls_are_refused),
        UNIT_TEST(worker_names_serve_urls_as_mod_proxy_matches_them),
        UNIT_TEST(query_urls_start_at_the_view_or_the_partitions),
        UNIT_TEST(urls_beside_a_find_keep_its_partition),
        UNIT_TEST(view_urls_are_shown_without_credentials),
        UNIT_TEST(update_words_are_couchdbs_in_lower_case),
    };
    RUN_UNIT_TESTS("view", tests);
}
