/* SPDX-License-Identifier: Apache-2.0 */
/* cp_serve end to end on views: every page kind of a view (numbered,
 * descending, a range, a partition, grouped and counted, multi-emits, long
 * keys, sealed tokens) and ?page=N jumps, served through the fake transport
 * (fake_transport.c). Pages are walked by the tokens they hand out, so what
 * is checked is what a client sees: every row once, in order, at its number. */
#include "fake_transport.h"

#include <apr_strings.h>

#include "couchpage_token.h"

static void view_pages_numbered_walk(void **state)
{
    const char *pages[] = { "d0 d1 d2", "d3 d4 d5", "d6 d7 d8", "d9" };
    location *l = location_of(ten_rows(), VIEW_URL, 3, 2);
    const cp_page *page;

    walk_both_ways(l, pages, 4, 10);
    l->fake->asks = 0;
    page = page_at(l, NULL);
    assert_true(page->numbered);
    assert_true(page->has_last);
    assert_int_equal(page->last_number, 4);
    /* one multi-query batch a first page */
    assert_int_equal(l->fake->asks, 1);
}

static void view_pages_descending(void **state)
{
    const char *pages[] = { "d9 d8 d7", "d6 d5 d4", "d3 d2 d1", "d0" };
    location *l = location_of(ten_rows(), VIEW_URL, 3, 1);

    l->view.descending = 1;
    walk_both_ways(l, pages, 4, 10);
}

static void view_pages_of_a_range(void **state)
{
    const char *pages[] = { "d2 d3 d4", "d5 d6 d7" };
    location *l = location_of(ten_rows(), VIEW_URL, 3, 1);

    l->source.low = "2";
    l->source.high = "7";
    l->source.range_set = 1;
    walk_both_ways(l, pages, 2, 6);
}

static void view_pages_of_a_partition(void **state)
{
    const char *pages[] = { "p:a p:c", "p:e" };
    const char *rows[] = { "1", "p:a", "2", "q:b", "3", "p:c", "4", "q:d", "5", "p:e", NULL };
    location *l = location_of(fake_of(rows), VIEW_URL, 2, 1);

    l->source.partition = "p";
    l->source.partition_set = 1;
    walk_both_ways(l, pages, 2, 3);
}

static void view_pages_grouped(void **state)
{
    const char *pages[] = { "[\"a\"] [\"b\"]", "[\"c\"]" };
    const char *rows[] = { "[\"a\",1]", "d1", "[\"a\",2]", "d2", "[\"b\",1]", "d3",
                           "[\"c\",1]", "d4", "[\"c\",5]", "d5", NULL };
    location *l = location_of(fake_of(rows), VIEW_URL, 2, 0);

    l->view.reduce = 1;
    l->view.group_level = 1;
    walk_both_ways(l, pages, 2, -1);
    assert_int_equal(json_integer_value(row_value(
        APR_ARRAY_IDX(page_at(l, NULL)->rows, 0, const cp_row *))), 2);
}

/* Seven groups g0..g6 (two rows each, the first grouped by level 1). */
static location *seven_groups(int count, int links)
{
    fake *f = fake_make();
    location *l;
    int i;

    for (i = 0; i < 14; i++) {
        add_row(f, apr_psprintf(pool, "[\"g%d\",%d]", i / 2, i), apr_psprintf(pool, "d%02d", i), 1);
    }
    l = location_of(f, VIEW_URL, count, links);
    l->view.reduce = 1;
    l->view.group_level = 1;
    return l;
}

/* Grouped rows are counted once a walk: the first page's count query in
 * its one batch, the tokens carrying the count, every page numbered. */
static void view_pages_grouped_counted(void **state)
{
    const char *pages[] = { "[\"g0\"] [\"g1\"]", "[\"g2\"] [\"g3\"]", "[\"g4\"] [\"g5\"]",
                            "[\"g6\"]" };
    location *l = seven_groups(2, 1);
    const cp_page *page;
    cp_token token;
    char *next;

    walk_both_ways(l, pages, 4, 7);
    l->fake->asks = l->fake->counts = 0;
    page = page_at(l, NULL);
    assert_true(page->numbered);
    assert_int_equal(page->total_rows, 7);
    assert_int_equal(page->last_number, 4);
    assert_false(page->count_earlier);
    assert_int_equal(l->fake->asks, 1);
    assert_int_equal(l->fake->counts, 1);
    assert_string_equal(page->next, "{\"g\":[[\"g2\"]],\"t\":7,\"p\":2}");
    next = apr_pstrdup(pool, page->next);
    /* a later page: one batch, no count query, numbered from its token */
    l->fake->asks = l->fake->counts = 0;
    page = page_at(l, next);
    assert_int_equal(l->fake->asks, 1);
    assert_int_equal(l->fake->counts, 0);
    assert_true(page->numbered);
    assert_true(page->count_earlier);
    assert_int_equal(page->offset, 2);
    assert_null(cp_token_decode(pool, page->next, CP_TOKEN_VIEW_ROWS(0), &token));
    assert_int_equal(token.count_place, 4);
    /* the Last page counts again, and holds what the walk leaves it */
    l->fake->counts = 0;
    page = page_at(l, CP_TOKEN_LAST);
    assert_int_equal(l->fake->counts, 1);
    assert_true(page->numbered);
    assert_int_equal(page->offset, 6);
    assert_string_equal(row_names(page), "[\"g6\"]");
    assert_null(cp_token_decode(pool, page->prev, CP_TOKEN_VIEW_ROWS(0), &token));
    assert_int_equal(token.count_place, 4);
    /* and its prev pages are numbered back to the first */
    page = page_at(l, apr_pstrdup(pool, page->prev));
    assert_true(page->numbered);
    assert_int_equal(page->offset, 4);
    assert_string_equal(row_names(page), "[\"g4\"] [\"g5\"]");
}

/* An old [key] token, a count the rows read contradict, one beyond the
 * location's cap: the page is relative, never refused; none: no count. */
static void view_pages_grouped_counted_tokens(void **state)
{
    location *l = seven_groups(2, 0);
    const char *relative[] = { "[[\"g2\"]]", "{\"g\":[[\"g2\"]],\"t\":7,\"p\":0}",
                               "{\"g\":[[\"g2\"]],\"t\":3,\"p\":2}",
                               "{\"g\":[[\"g2\"]],\"t\":5000,\"p\":2}" };
    const cp_page *page;
    size_t i;

    for (i = 0; i < sizeof(relative) / sizeof(*relative); i++) {
        page = page_at(l, relative[i]);
        assert_string_equal(row_names(page), "[\"g2\"] [\"g3\"]");
        assert_false(page->numbered);
    }
    /* a wrong count within bounds numbers the client's own page wrongly */
    page = page_at(l, "{\"g\":[[\"g2\"]],\"t\":9,\"p\":2}");
    assert_true(page->numbered);
    assert_int_equal(page->total_rows, 9);
    assert_non_null(serve(l, "{\"g\":[[\"g2\"]],\"t\":2,\"p\":2}"));
    assert_non_null(serve(l, "{\"g\":[[\"g2\"]]}"));
    /* CouchPageCount none */
    l->source.count.mode = CP_COUNT_NONE;
    l->fake->counts = 0;
    page = page_at(l, NULL);
    assert_false(page->numbered);
    assert_int_equal(l->fake->counts, 0);
}

/* Keys too long for a token: bounded tokens carry the count too, so the
 * walk stays numbered to its end and back. */
static void view_pages_grouped_counted_long_keys(void **state)
{
    fake *f = fake_make();
    location *l;
    const cp_page *page;
    const char *next = NULL, *prev;
    int i;

    char *long_text = apr_palloc(pool, 5001);

    memset(long_text, 'k', 5000);
    long_text[5000] = '\0';
    for (i = 0; i < 10; i++) {
        add_row(f, apr_psprintf(pool, "[\"%s%c\",%d]", long_text, 'a' + i / 2, i % 2),
                apr_psprintf(pool, "d%d", i), 1);
    }
    l = location_of(f, VIEW_URL, 2, 1);
    l->view.reduce = 1;
    l->view.group_level = 1;
    for (i = 0; i < 3; i++) {
        page = page_at(l, next);
        assert_true(page->numbered);
        assert_int_equal(page->offset, 2 * i);
        assert_int_equal(page->total_rows, 5);
        assert_int_equal(page->rows->nelts, i < 2 ? 2 : 1);
        next = page->next ? apr_pstrdup(pool, page->next) : NULL;
        if (next) {
            assert_non_null(strstr(next, "\"h\""));
            assert_non_null(strstr(next, "\"t\":5"));
        }
    }
    assert_null(next);
    page = page_at(l, CP_TOKEN_LAST);
    assert_int_equal(page->offset, 4);
    prev = apr_pstrdup(pool, page->prev);
    page = page_at(l, prev);
    assert_true(page->numbered);
    assert_int_equal(page->offset, 2);
}

/* Capped: at least N past N; the Last page of such a count is relative. */
static void view_pages_grouped_capped(void **state)
{
    location *l = seven_groups(2, 0);
    const cp_page *page;

    l->source.count.mode = CP_COUNT_CAPPED;
    l->source.count.cap = 3;
    page = page_at(l, NULL);
    assert_true(page->numbered);
    assert_true(page->count_at_least);
    assert_int_equal(page->total_rows, 3);
    assert_int_equal(page->last_number, 0);
    assert_non_null(strstr(page->next, "\"m\":1"));
    page = page_at(l, apr_pstrdup(pool, page->next));
    page = page_at(l, apr_pstrdup(pool, page->next));
    assert_true(page->numbered);
    assert_true(page->count_at_least);
    assert_int_equal(page->offset, 4);
    assert_int_equal(page->total_rows, 6);
    page = page_at(l, CP_TOKEN_LAST);
    assert_false(page->numbered);
    assert_string_equal(row_names(page), "[\"g5\"] [\"g6\"]");
}

/* One document emits its key three times: pages split its entry. */
static void view_pages_of_multi_emits(void **state)
{
    const char *pages[] = { "d0 d1 d1", "d1 d2" };
    const char *rows[] = { "\"a\"", "d0", "\"b\"", "d1", "\"b\"", "d1", "\"b\"", "d1",
                           "\"c\"", "d2", NULL };
    location *l = location_of(fake_of(rows), VIEW_URL, 3, 0);

    walk_both_ways(l, pages, 2, 5);
    assert_int_equal(json_integer_value(row_value(
        APR_ARRAY_IDX(page_at(l, page_at(l, NULL)->next)->rows, 0, const cp_row *))), 3);
}

/* Keys longer than a token may be: the tokens are bounded, and each page
 * of one is found again by its row (the clamp probes, then the locating
 * query). */
static void view_pages_of_long_keys_by_bounded_tokens(void **state)
{
    const char *pages[] = { "d0 d1", "d2 d3", "d4" };
    fake *f = fake_make();
    location *l;
    const cp_page *page;
    int i;

    for (i = 0; i < 5; i++) {
        char *key = apr_palloc(pool, 600);

        memset(key, 'k', 600);
        key[0] = '"';
        key[597] = (char)('a' + i);
        key[598] = '"';
        key[599] = '\0';
        add_row(f, key, apr_psprintf(pool, "d%d", i), i);
    }
    l = location_of(f, VIEW_URL, 2, 0);
    l->source.max_token_length = 300;
    page = page_at(l, NULL);
    assert_true(strlen(page->next) <= 300);
    assert_null(strstr(page->next, "kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk"
                                   "kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk"));
    walk_both_ways(l, pages, 3, 5);
    /* a token written to name no row of the location is refused */
    {
        cp_token token;
        const cp_fault *fault;

        assert_null(cp_token_decode(pool, page->next, CP_TOKEN_VIEW_ROWS(1), &token));
        assert_non_null(token.digest);
        fault = serve(l, apr_pstrcat(pool, apr_pstrndup(pool, page->next,
                                                        strlen(page->next) - 3), "AAA]",
                                     NULL));
        assert_non_null(fault);
        assert_int_equal(fault->kind, CP_FAULT_CLIENT);
        assert_int_equal(fault->status, 400);
    }
}

static void view_first_and_last(void **state)
{
    location *l = location_of(ten_rows(), VIEW_URL, 4, 1);
    const cp_page *page = page_at(l, CP_TOKEN_LAST);

    assert_string_equal(row_names(page), "d8 d9");
    assert_true(page->last_is_current);
    assert_int_equal(page->offset, 8);
    page = page_at(l, page->prev);
    assert_string_equal(row_names(page), "d4 d5 d6 d7");
    page = page_at(l, page->prev_is_first ? NULL : page->prev);
    assert_string_equal(row_names(page), "d0 d1 d2 d3");
    assert_null(page->prev);
}

/* Sealed tokens: opened with the location's binding; one of another
 * location is the client's error. */
static void view_pages_with_sealed_tokens(void **state)
{
    location *l = location_of(ten_rows(), VIEW_URL, 3, 0);
    const cp_seal_key *key;
    const char *next, **tokens[] = { &next };
    const cp_fault *fault;

    assert_null(cp_seal_key_derive(pool, "an unguessable secret of the unit tests 8f3a", &key));
    l->source.token_key = key;
    next = apr_pstrdup(pool, page_at(l, NULL)->next);
    assert_string_equal(l->served.binding, VIEW_URL "\n/t");
    assert_null(cp_seal_tokens(pool, key, l->served.binding, tokens, 1));
    assert_string_equal(row_names(page_at(l, next)), "d3 d4 d5");
    l->source.uri = "/elsewhere";
    fault = serve(l, next);
    assert_non_null(fault);
    assert_int_equal(fault->kind, CP_FAULT_CLIENT);
    assert_string_equal(fault->log_code, "CP0102");
}

/* --- ?page=N ----------------------------------------------------------- */

/* Walks the location by next links, then asks ?page=N for every N to one
 * past the last with a reach of reach pages: the pages within it are the
 * walk's (rows, tokens, position; the Last page by its own token), the
 * others 400s that say why, and each jump asks at most two batches. The
 * number of pages. */
static int jumps_are_the_walks_pages(location *l, int reach)
{
    const char *names[64], *nexts[64], *prevs[64], *token = NULL;
    apr_int64_t offsets[64];
    int n = 0, i;

    do {
        const cp_page *page = page_at(l, token);

        assert_true(page->numbered);
        names[n] = row_names(page);
        nexts[n] = page->next ? apr_pstrdup(pool, page->next) : NULL;
        prevs[n] = page->prev_is_first ? NULL : page->prev ? apr_pstrdup(pool, page->prev) : NULL;
        offsets[n++] = page->offset;
        token = nexts[n - 1];
    } while (token && n < 64);
    l->source.jump_reach = reach;
    for (i = 1; i <= n + 1; i++) {
        const cp_fault *fault;
        int reached = i == 1 || i == n || i <= reach || n - i < reach;

        l->fake->asks = l->fake->finds = 0;
        l->args.page = i;
        fault = serve(l, NULL);
        if (i > n || !reached) {
            assert_non_null(fault);
            assert_int_equal(fault->status, 400);
            assert_string_equal(fault->log_code, "CP0102");
            assert_int_equal(fault->log_level, CP_LOG_INFO);
            assert_non_null(strstr(fault->reason, i > n ? "is past the last page"
                                                        : reach ? "can be; follow" : "only the first"));
            continue;
        }
        if (fault) {
            fail_msg("page %d: %d %s", i, fault->status, fault->reason);
        }
        assert_string_equal(row_names(&l->served.page), names[i - 1]);
        assert_int_equal(l->served.page.offset, offsets[i - 1]);
        if (nexts[i - 1] || l->served.page.next) {
            assert_string_equal(l->served.page.next, nexts[i - 1]);
        }
        if (i > 2 && i < n) {
            assert_string_equal(l->served.page.prev, prevs[i - 1]);
        }
        assert_in_range(l->fake->asks + l->fake->finds, 1, 3);
    }
    l->args.page = 0;
    return n;
}

/* Twenty rows keyed by twos (0, 0, 1, 1, ...), ids e00..e19, and every
 * fifth document's key emitted three times: entries of three rows, which
 * pages start inside. */
static fake *jump_rows(void)
{
    fake *f = fake_make();
    int i, k;

    for (i = 0; i < 20; i++) {
        for (k = 0; k < (i % 5 ? 1 : 3); k++) {
            add_row(f, apr_psprintf(pool, "%d", i / 2), apr_psprintf(pool, "e%02d", i), i);
        }
    }
    return f;
}

static void jumps_on_views(void **state)
{
    location *l = location_of(jump_rows(), VIEW_URL, 3, 0);
    int reach;

    for (reach = 0; reach <= 4; reach++) {
        assert_int_equal(jumps_are_the_walks_pages(l, reach), 10);
    }
    l = location_of(jump_rows(), VIEW_URL, 4, 2);
    l->view.descending = 1;
    assert_int_equal(jumps_are_the_walks_pages(l, 2), 7);
    l = location_of(jump_rows(), VIEW_URL, 2, 1);
    l->source.low = "2";
    l->source.high = "7";
    l->source.range_set = 1;
    assert_int_equal(jumps_are_the_walks_pages(l, 3), 9);
    l->view.descending = 1;
    assert_int_equal(jumps_are_the_walks_pages(l, 2), 9);
}

static void jumps_on_a_partition(void **state)
{
    const char *rows[] = { "1", "p:a", "2", "q:b", "3", "p:c", "4", "q:d", "5", "p:e",
                           "6", "p:f", "7", "q:g", "8", "p:h", "9", "p:i", NULL };
    location *l = location_of(fake_of(rows), VIEW_URL, 2, 1);

    l->source.partition = "p";
    l->source.partition_set = 1;
    assert_int_equal(jumps_are_the_walks_pages(l, 1), 3);
    l->view.descending = 1;
    assert_int_equal(jumps_are_the_walks_pages(l, 1), 3);
}

static void jumps_on_a_numbered_find(void **state)
{
    location *l = indexed_location(0);

    assert_int_equal(jumps_are_the_walks_pages(l, 1), 3);
    l = indexed_location(1);
    assert_int_equal(jumps_are_the_walks_pages(l, 1), 3);
    l->req.count = 1;
    assert_int_equal(jumps_are_the_walks_pages(l, 2), 7);
}

/* A counted _find location: every page within the reach is the walk's,
 * its tokens with their count, found among the count's rows: the count's
 * _find and the page's own. */
static void jumps_on_a_counted_find(void **state)
{
    location *l = counted_location("{\"n\":{\"$gte\":2}}", 3, 1, 1000);
    const cp_fault *fault;
    int reach;

    for (reach = 0; reach <= 3; reach++) {
        assert_int_equal(jumps_are_the_walks_pages(l, reach), 3);
    }
    l = counted_location("{}", 2, 0, 1000);
    for (reach = 0; reach <= 3; reach++) {
        assert_int_equal(jumps_are_the_walks_pages(l, reach), 5);
    }
    l->req.count = 1;
    assert_int_equal(jumps_are_the_walks_pages(l, 3), 10);
    /* page 4 of 5 (from the end): the count, then the page */
    l->req.count = 2;
    l->source.jump_reach = 2;
    l->args.page = 4;
    l->fake->finds = 0;
    assert_null(serve(l, NULL));
    assert_string_equal(row_names(&l->served.page), "d6 d7");
    assert_int_equal(l->fake->finds, 2);
    assert_string_equal(l->served.page.prev, "{\"b\":[[6],\"d6\"],\"t\":10,\"p\":6}");
    /* Prefer: count=none: not counted, refused */
    l->req.prefer = "count=none";
    l->fake->finds = 0;
    fault = serve(l, NULL);
    assert_fault(fault, CP_FAULT_CLIENT, 400, "bad_request", "CP0102");
    assert_non_null(strstr(fault->reason, "this _find location's rows are not counted"));
    assert_int_equal(l->fake->finds, 0);
}

/* A count that stopped at its cap (at least 3 rows, 10 there): only the
 * pages within the reach of the first whose rows the count read are
 * reached (past them, a _find that skipped matches would examine
 * documents without bound where few match); the others are refused after
 * the count alone, with the pages that can be. */
static void jumps_on_a_capped_count(void **state)
{
    const char *pages[] = { "d0 d1", "d2 d3", "d4 d5", "d6 d7", "d8 d9" };
    location *l = counted_location("{}", 2, 0, 3);
    const char *token = NULL, *nexts[5];
    const cp_fault *fault;
    int i;

    (void)state;
    for (i = 0; i < 5; i++) {
        const cp_page *page = page_at(l, token);

        assert_string_equal(row_names(page), pages[i]);
        token = nexts[i] = page->next ? apr_pstrdup(pool, page->next) : NULL;
    }
    /* the count's 4 rows hold page 2's row before and first row */
    l->source.jump_reach = 6;
    l->args.page = 2;
    l->fake->finds = 0;
    assert_null(serve(l, NULL));
    assert_string_equal(row_names(&l->served.page), pages[1]);
    assert_true(l->served.page.count_at_least && l->served.page.offset == 2);
    assert_string_equal(l->served.page.next, nexts[1]);
    assert_int_equal(l->fake->finds, 2);
    for (i = 3; i <= 7; i++) {
        l->args.page = i;
        l->fake->finds = 0;
        fault = serve(l, NULL);
        assert_fault(fault, CP_FAULT_CLIENT, 400, "bad_request", "CP0102");
        assert_non_null(strstr(fault->reason, apr_psprintf(pool, "page %d is too far from the "
                                                           "first page", i)));
        assert_non_null(strstr(fault->reason, "counted up to 3 only"));
        assert_non_null(strstr(fault->reason, "pages 1 to 2 can be"));
        assert_int_equal(l->fake->finds, 1);
    }
    for (i = 0; i <= 1; i++) {
        l->source.jump_reach = i;
        l->args.page = 2;
        fault = serve(l, NULL);
        assert_non_null(fault);
        assert_non_null(strstr(fault->reason, "only the first page can"));
    }
    l->args.page = 0;
}

/* Where rows are not numbered (grouped rows or a _find location not
 * counted), a jump is a 400 that says why, before any read of rows. */
static void jumps_where_rows_are_not_numbered(void **state)
{
    const char *rows[] = { "[\"a\",1]", "d1", "[\"b\",1]", "d3", NULL };
    location *l = location_of(fake_of(rows), VIEW_URL, 1, 0);
    const cp_fault *fault;

    l->view.reduce = 1;
    l->view.group_level = 1;
    l->source.count.mode = CP_COUNT_NONE;
    l->source.jump_reach = 10;
    l->args.page = 2;
    fault = serve(l, NULL);
    assert_fault(fault, CP_FAULT_CLIENT, 400, "bad_request", "CP0102");
    assert_non_null(strstr(fault->reason, "grouped reduce rows are not counted"));
    assert_int_equal(l->fake->asks, 0);
    l = find_location(ten_rows(), "n", "{}", 3, 0);
    l->source.jump_reach = 10;
    l->args.page = 1;
    fault = serve(l, NULL);
    assert_fault(fault, CP_FAULT_CLIENT, 400, "bad_request", "CP0102");
    assert_non_null(strstr(fault->reason, "this _find location's rows are not counted"));
    assert_int_equal(l->fake->finds, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        UNIT_TEST(view_pages_numbered_walk),
        UNIT_TEST(view_pages_descending),
        UNIT_TEST(view_pages_of_a_range),
        UNIT_TEST(view_pages_of_a_partition),
        UNIT_TEST(view_pages_grouped),
        UNIT_TEST(view_pages_grouped_counted),
        UNIT_TEST(view_pages_grouped_counted_tokens),
        UNIT_TEST(view_pages_grouped_capped),
        UNIT_TEST(view_pages_grouped_counted_long_keys),
        UNIT_TEST(view_pages_of_multi_emits),
        UNIT_TEST(view_pages_of_long_keys_by_bounded_tokens),
        UNIT_TEST(view_first_and_last),
        UNIT_TEST(view_pages_with_sealed_tokens),
        UNIT_TEST(jumps_on_views),
        UNIT_TEST(jumps_on_a_partition),
        UNIT_TEST(jumps_on_a_numbered_find),
        UNIT_TEST(jumps_on_a_counted_find),
        UNIT_TEST(jumps_on_a_capped_count),
        UNIT_TEST(jumps_where_rows_are_not_numbered),
    };

    RUN_UNIT_TESTS("serve_view", tests);
}
