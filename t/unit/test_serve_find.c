/* SPDX-License-Identifier: Apache-2.0 */
/* cp_serve end to end on _find locations: keyset pages, counted and capped,
 * numbered through an index (named, or the one _explain names), residual
 * conditions and their ties, edits between reads, warnings, served through
 * the fake transport (fake_transport.c). */
#include "fake_transport.h"

#include <apr_strings.h>

/* --- _find --------------------------------------------------------------- */

static void find_keyset_pages(void **state)
{
    const char *pages[] = { "d0 d1 d2", "d3 d4 d5", "d6 d7 d8", "d9" };
    location *l = find_location(ten_rows(), "n", "{}", 3, 0);
    const cp_page *page;

    walk_both_ways(l, pages, 4, -1);
    page = page_at(l, NULL);
    assert_true(page->docs_as_items);
    assert_false(page->numbered);
    assert_string_equal(page->next, "{\"a\":[[2],\"d2\"]}");
    assert_int_equal(l->fake->asks, 0);
    /* the Last page, by keyset from the end */
    page = page_at(l, CP_TOKEN_LAST);
    assert_string_equal(row_names(page), "d7 d8 d9");
    assert_null(page->next);
}

static void find_keyset_pages_of_a_selector(void **state)
{
    const char *pages[] = { "d5 d6", "d7 d8", "d9" };
    location *l = find_location(ten_rows(), "n", "{\"n\":{\"$gte\":5}}", 2, 0);

    walk_both_ways(l, pages, 3, -1);
}


/* Counted once a walk: the first page asks for the count (keys only, at
 * most cap + 1 rows), the later pages read it from their tokens, one
 * _find each, numbered both ways as a view's pages are. */
static void find_counted_walk(void **state)
{
    const char *pages[] = { "d2 d3 d4", "d5 d6 d7", "d8 d9" };
    location *l = counted_location("{\"n\":{\"$gte\":2}}", 3, 1, 1000);
    const cp_page *page;
    int finds;

    walk_both_ways(l, pages, 3, 8);
    l->fake->finds = 0;
    page = page_at(l, NULL);
    assert_int_equal(l->fake->finds, 2);
    assert_true(page->numbered && !page->count_at_least && !page->count_earlier);
    assert_int_equal(page->last_number, 3);
    assert_string_equal(page->next, "{\"a\":[[4],\"d4\"],\"t\":8,\"p\":2}");
    finds = l->fake->finds;
    page = page_at(l, apr_pstrdup(pool, page->next));
    assert_int_equal(l->fake->finds - finds, 1);
    assert_true(page->numbered && page->count_earlier);
    assert_int_equal(page->offset, 3);
    assert_string_equal(page->prev, "{\"b\":[[5],\"d5\"],\"t\":8,\"p\":3}");
    /* the Last page counts again, and is aligned with the first's pages */
    page = page_at(l, CP_TOKEN_LAST);
    assert_string_equal(row_names(page), "d8 d9");
    assert_true(page->numbered && !page->count_earlier);
    assert_int_equal(page->offset, 6);
    assert_string_equal(page->prev, "{\"b\":[[8],\"d8\"],\"t\":8,\"p\":6}");
    page = page_at(l, apr_pstrdup(pool, page->prev));
    assert_string_equal(row_names(page), "d5 d6 d7");
    assert_int_equal(page->offset, 3);
    assert_true(page->count_earlier);
}

/* Where no index's view bounds a count (no index known), a location whose
 * CouchPageCount is left at its default is not counted: its pages are
 * relative, said once (CP0434), and a jump is refused; set, it counts by
 * the _find alone. */
static void find_uncounted_where_no_view_bounds_the_count(void **state)
{
    location *l = find_location(ten_rows(), "n", "{}", 3, 0);
    const cp_fault *fault;
    const cp_page *page;

    l->source.count.mode = CP_COUNT_UNSET;
    l->source.jump_reach = 10;
    l->req.prefer = "count=estimated";
    page = page_at(l, NULL);
    assert_int_equal(l->fake->finds, 1);
    assert_false(page->numbered);
    assert_string_equal(row_names(page), "d0 d1 d2");
    assert_true(logged(l->fake, "CP0434", CP_LOG_INFO));
    /* no count made: none said applied */
    assert_null(l->served.preference_applied);
    l->args.page = 2;
    fault = serve(l, NULL);
    assert_non_null(fault);
    assert_int_equal(fault->status, 400);
    assert_non_null(strstr(fault->reason, "rows are not counted"));
    l->args.page = 0;
    l->source.count.mode = CP_COUNT_CAPPED;
    l->source.count.cap = 1000;
    page = page_at(l, NULL);
    assert_true(page->numbered && page->total_rows == 10);
    assert_string_equal(l->served.preference_applied, "count=estimated");
}

/* A first or Last page whose own read holds every row asks no count. */
static void find_counted_by_the_page_alone(void **state)
{
    location *l = counted_location("{\"n\":{\"$gte\":6}}", 3, 1, 1000);
    const cp_page *page = page_at(l, NULL);

    assert_int_equal(l->fake->finds, 1);
    assert_true(page->numbered);
    assert_int_equal(page->total_rows, 4);
    assert_int_equal(page->last_number, 2);
    page = page_at(l, CP_TOKEN_LAST);
    assert_int_equal(l->fake->finds, 2);
    assert_string_equal(row_names(page), "d9");
    assert_int_equal(page->offset, 3);
    /* and says at least N where it holds more than N */
    l->source.count.cap = 2;
    page = page_at(l, NULL);
    assert_true(page->count_at_least);
    assert_int_equal(l->fake->finds, 3);
}

/* Capped: "at least N" past N, the page's place known, no Last page
 * number; the Last page of such a count is numbered relative to itself. */
static void find_counted_capped(void **state)
{
    location *l = counted_location("{}", 3, 0, 4);
    const cp_page *page = page_at(l, NULL);

    assert_true(page->numbered && page->count_at_least);
    assert_int_equal(page->total_rows, 4);
    assert_int_equal(page->last_number, 0);
    assert_string_equal(page->next, "{\"a\":[[2],\"d2\"],\"t\":4,\"p\":2,\"m\":1}");
    page = page_at(l, apr_pstrdup(pool, page->next));
    assert_string_equal(row_names(page), "d3 d4 d5");
    assert_true(page->numbered && page->count_at_least && page->count_earlier);
    assert_int_equal(page->offset, 3);
    assert_int_equal(page->total_rows, 6);
    page = page_at(l, apr_pstrdup(pool, page->next));
    assert_int_equal(page->offset, 6);
    page = page_at(l, CP_TOKEN_LAST);
    assert_false(page->numbered);
    assert_string_equal(row_names(page), "d7 d8 d9");
    /* the count reads at most cap + 1 rows */
    assert_int_equal((int)json_integer_value(json_object_get(load(l->fake->last_find), "limit")),
                     5);
}

/* Prefer: count=none skips the count (Preference-Applied says so); a
 * location of CouchPageCount none counts nothing whatever is asked. */
static void find_counted_as_preferred(void **state)
{
    location *l = counted_location("{}", 3, 0, 1000);
    const cp_page *page;

    l->req.prefer = "count=none";
    page = page_at(l, NULL);
    assert_false(page->numbered);
    assert_int_equal(l->fake->finds, 1);
    assert_string_equal(l->served.preference_applied, "count=none");
    l->req.prefer = "count=estimated";
    page = page_at(l, NULL);
    assert_true(page->numbered);
    assert_int_equal(page->total_rows, 10);
    assert_string_equal(l->served.preference_applied, "count=estimated");
    l->req.prefer = "count=exact";
    page_at(l, NULL);
    assert_null(l->served.preference_applied);
    l->source.count.mode = CP_COUNT_NONE;
    page = page_at(l, NULL);
    assert_false(page->numbered);
    assert_null(l->served.preference_applied);
}

/* A token's count that the rows read contradict, or that the location's
 * count cannot have made, numbers the page relative to itself; its rows
 * are the token's all the same. */
static void find_counted_tokens_checked(void **state)
{
    location *l = counted_location("{}", 3, 0, 1000);
    const cp_page *page;

    /* the read ends (d9) where a count of 20 says it does not */
    page = page_at(l, "{\"a\":[[5],\"d5\"],\"t\":20,\"p\":5}");
    assert_string_equal(row_names(page), "d6 d7 d8");
    page = page_at(l, "{\"a\":[[6],\"d6\"],\"t\":20,\"p\":6}");
    assert_string_equal(row_names(page), "d7 d8 d9");
    assert_false(page->numbered);
    /* more than the location counts */
    page = page_at(l, "{\"a\":[[2],\"d2\"],\"t\":5000,\"p\":2}");
    assert_false(page->numbered);
    assert_string_equal(row_names(page), "d3 d4 d5");
    /* a wrong count within bounds: a wrong number, on this page alone */
    page = page_at(l, "{\"a\":[[2],\"d2\"],\"t\":900,\"p\":100}");
    assert_true(page->numbered);
    assert_int_equal(page->offset, 101);
    /* refused by form: 400 */
    assert_int_equal(serve(l, "{\"a\":[[2],\"d2\"],\"t\":9,\"p\":9}")->status, 400);
    assert_int_equal(serve(l, "{\"a\":[[2],\"d2\"],\"t\":9}")->status, 400);
    assert_int_equal(serve(l, "{\"a\":[[2],\"d2\"],\"t\":9.5,\"p\":1}")->status, 400);
}


static void find_numbered_pages_by_keyset(void **state)
{
    const char *pages[] = { "d00 d02 d04", "d06 d08 d10", "d12" };
    location *l = indexed_location(0);
    const cp_page *page;

    walk_both_ways(l, pages, 3, 7);
    /* learnt once: the design document and one look at its view */
    assert_int_equal(l->fake->gets, 2);
    assert_int_equal(l->fake->finds, 0);
    assert_true(logged(l->fake, "CP0371", CP_LOG_DEBUG));
    page = page_at(l, NULL);
    assert_true(page->numbered);
    assert_true(page->docs_as_items);
    assert_string_equal(l->served.view->url, "http://couch:5984/db/_find");
    /* its tokens are _find's */
    assert_string_equal(page->next, "{\"a\":[[4],\"d04\"]}");
}

/* The page at start, its rows names, numbered from offset of total (the
 * walk's count earlier or not), by asks requests more, probes more among
 * them. */
static const cp_page *numbered_page(location *l, const char *start, const char *names,
                                    apr_int64_t offset, apr_int64_t total, int earlier,
                                    int asks, int probes)
{
    int asked = l->fake->asks, probed = l->fake->range_probes;
    const cp_page *page = page_at(l, start);

    assert_string_equal(row_names(page), names);
    assert_int_equal(page->offset, offset);
    assert_int_equal(page->total_rows, total);
    assert_int_equal(page->count_earlier, earlier);
    assert_int_equal(l->fake->asks, asked + asks);
    assert_int_equal(l->fake->range_probes, probed + probes);
    return page;
}

/* A numbered page's count goes on with its walk: the first page's tokens
 * carry it, and a later page, while its answer's sequence says the view
 * is as it was when the walk began, is numbered by it with no probe; once
 * a row is written, the probes follow its read, asked alone, and its
 * tokens carry no count on. */
static void find_numbered_count_carried_by_the_walk(void **state)
{
    const char *pages[] = { "d00 d02 d04", "d06 d08 d10", "d12" };
    location *l = indexed_location(0);
    fake *f = l->fake;
    fake_row *row;
    const cp_page *page;
    const cp_page_link *link;
    const char *second, *third;
    int asks, probes, i;

    (void)state;
    f->view_seq = "\"7-double\"";
    walk_both_ways(l, pages, 3, 7);
    page = page_at(l, NULL);
    assert_non_null(strstr(page->next, "\"t\":7,\"p\":2"));
    second = apr_pstrdup(pool, page->next);
    probes = f->range_probes;
    page = numbered_page(l, second, "d06 d08 d10", 3, 7, 0, 1, 0);
    third = apr_pstrdup(pool, page->next);
    assert_non_null(strstr(third, "\"t\":7,\"p\":5"));
    /* a forged count misleads its own page only: rows as the walk's, a
     * count the rows read contradict left unnumbered, never a fault */
    for (i = 0; i < 3; i++) {
        const char *forged[] = { "\"t\":3,\"p\":2", "\"t\":900,\"p\":2", "\"t\":7,\"p\":0" };

        page = page_at(l, apr_pstrcat(pool, "{\"a\":[[4],\"d04\"],", forged[i], ",",
                                      strstr(second, "\"w\""), NULL));
        assert_string_equal(row_names(page), "d06 d08 d10");
    }
    /* other copies answered (a cluster's), nothing tells whether the view
     * was written: the walk's count, said to be an earlier page's */
    f->view_seq = "\"7-other\"";
    numbered_page(l, third, "d12", 6, 7, 1, 1, 0);
    /* a row written before the page's: the view's sequence moves */
    add_doc(f, "{\"_id\":\"d99\",\"k\":\"a\",\"n\":-1}");
    apr_array_push(f->rows);
    memmove(f->rows->elts + sizeof(fake_row), f->rows->elts,
            sizeof(fake_row) * (size_t)(f->rows->nelts - 1));
    row = &APR_ARRAY_IDX(f->rows, 0, fake_row);
    row->key = cp_json_load(pool, "[\"a\",-1]", 8, NULL);
    row->id = "d99";
    row->value = cp_json_load(pool, "0", 1, NULL);
    f->view_seq = "\"8-double\"";
    page = numbered_page(l, third, "d12", 7, 8, 0, 2, 2);
    assert_null(strstr(page->prev, "\"t\":"));
    /* probes that answer from another state than the read: the read and
     * its probes again, in one request */
    f->odd_role = CP_QUERY_RANGE_START + 1;
    f->odd_seq = "\"9-double\"";
    asks = f->asks;
    page = page_at(l, third);
    assert_int_equal(page->offset, 7);
    assert_int_equal(f->asks, asks + 3);
    f->odd_role = 0;
    /* an older link, without a count: the probes asked with its read */
    asks = f->asks;
    page = page_at(l, "{\"a\":[[10],\"d10\"]}");
    assert_string_equal(row_names(page), "d12");
    assert_int_equal(page->offset, 7);
    assert_int_equal(f->asks, asks + 1);
    /* with page links, a link to rows the page read ahead carries it too */
    l = indexed_location(2);
    f = l->fake;
    f->view_seq = "\"7-double\"";
    page = page_at(l, NULL);
    link = &APR_ARRAY_IDX(page->pages, 2, cp_page_link);
    assert_int_equal(link->number, 3);
    assert_non_null(strstr(link->start, "\"t\":7,\"p\":5"));
    probes = f->range_probes;
    page = page_at(l, apr_pstrdup(pool, link->start));
    assert_string_equal(row_names(page), "d12");
    assert_int_equal(page->offset, 6);
    assert_int_equal(page->last_number, 3);
    assert_int_equal(f->range_probes, probes);
    /* ?page=2 is the walk's page 2, its tokens and all */
    page = page_at(l, apr_pstrdup(pool, page_at(l, NULL)->next));
    second = apr_pstrcat(pool, page->prev, " ", page->next, " ",
                         APR_ARRAY_IDX(page->pages, 1, cp_page_link).start, NULL);
    l->source.jump_reach = 3;
    l->args.page = 2;
    page = page_at(l, NULL);
    assert_string_equal(apr_pstrcat(pool, page->prev, " ", page->next, " ",
                                    APR_ARRAY_IDX(page->pages, 1, cp_page_link).start, NULL),
                        second);
    assert_non_null(strstr(second, "{\"a\":[[4],\"d04\"],\"t\":7,\"p\":2,"));
    l->args.page = 0;
}

/* With page links, numbered by the keyset pager too: one batch a page
 * (its read, and one read the other way for the links behind), keyset
 * tokens bound to the index's view; the view's links it handed out
 * before, at their row, keep working. */
static void find_numbered_pages_with_page_links(void **state)
{
    const char *pages[] = { "d00 d02 d04", "d06 d08 d10", "d12" };
    location *l = indexed_location(2);
    const cp_page *page;
    const cp_page_link *link;
    const cp_fault *fault;

    walk_both_ways(l, pages, 3, 7);
    page = page_at(l, NULL);
    assert_true(page->numbered);
    assert_true(page->docs_as_items);
    assert_int_equal(page->pages->nelts, 3);
    assert_int_equal(page->last_number, 3);
    assert_string_equal(page->next, "{\"a\":[[4],\"d04\"]}");
    link = &APR_ARRAY_IDX(page->pages, 2, cp_page_link);
    assert_int_equal(link->number, 3);
    assert_string_equal(link->start, "{\"a\":[[10],\"d10\"]}");
    assert_string_equal(l->served.view->url,
                        "http://couch:5984/db/_design/idx/_view/by-kn");
    assert_string_equal(l->served.binding,
                        "http://couch:5984/db/_design/idx/_view/by-kn\n/t");
    /* the location's own view is left as it is */
    assert_false(l->view.include_docs);
    assert_string_equal(l->view.url, "http://couch:5984/db/_find");
    /* the middle page: one batch, with its prev and page links behind */
    l->fake->asks = 0;
    page = page_at(l, "{\"a\":[[4],\"d04\"]}");
    assert_string_equal(row_names(page), "d06 d08 d10");
    assert_int_equal(l->fake->asks, 1);
    assert_int_equal(l->fake->finds, 0);
    assert_int_equal(page->offset, 3);
    assert_true(page->prev_is_first);
    assert_string_equal(page->next, "{\"a\":[[10],\"d10\"]}");
    /* an old link of the index's view: the page starts at its row */
    page = page_at(l, "[[\"a\",6],\"d06\"]");
    assert_string_equal(row_names(page), "d06 d08 d10");
    assert_int_equal(page->offset, 3);
    assert_true(page->numbered);
    assert_string_equal(page->next, "{\"a\":[[10],\"d10\"]}");
    /* the view's rows have ids: a token without one is refused */
    fault = serve(l, "[[\"a\",6]]");
    assert_non_null(fault);
    assert_string_equal(fault->log_code, "CP0102");
    /* without page links, a view's token is no token of the location */
    l = indexed_location(0);
    fault = serve(l, "[[\"a\",6],\"d06\"]");
    assert_non_null(fault);
    assert_string_equal(fault->log_code, "CP0102");
    /* the Last page, aligned */
    l = indexed_location(2);
    page = page_at(l, CP_TOKEN_LAST);
    assert_string_equal(row_names(page), "d12");
    assert_int_equal(page->offset, 6);
    assert_true(page->last_is_current);
}

static void find_unnumbered_where_the_index_cannot_number(void **state)
{
    location *l = find_location(indexed_docs(), "n", "{\"n\":{\"$gt\":3}}", 3, 0);
    const cp_page *page;

    l->spec.index_ddoc = "idx";
    page = page_at(l, NULL);
    assert_false(page->numbered);
    assert_string_equal(row_names(page), "d04 d05 d06");
    assert_int_equal(l->fake->finds, 1);
    assert_true(logged(l->fake, "CP0372", CP_LOG_DEBUG));
    /* a design document that cannot be read now: by _find, learnt again next time */
    l = find_location(indexed_docs(), "n", "{\"k\":\"a\"}", 3, 0);
    l->spec.index_ddoc = "idx";
    l->fake->ddoc_status = 500;
    page = page_at(l, NULL);
    assert_false(page->numbered);
    assert_int_equal(apr_hash_count(l->fake->notes), 0);
    assert_true(logged(l->fake, "CP0370", CP_LOG_DEBUG));
}

/* What CouchDB 3.4.3's _explain names for a query through the index
 * on k and n (its answer, shortened to what is read). */
#define EXPLAIN_KN "{\"dbname\":\"db\",\"index\":{\"ddoc\":\"_design/idx\",\"name\":" \
    "\"by-kn\",\"type\":\"json\",\"partitioned\":false,\"def\":{\"fields\":[{\"k\":" \
    "\"asc\"},{\"n\":\"asc\"}]}},\"selector\":{\"k\":{\"$eq\":\"a\"}},\"limit\":4}"

/* Without CouchPageIndex, the index _explain names numbers the pages its
 * view holds as a key range: learnt once (one POST, one look at the view). */
static void find_numbered_by_the_index_explain_names(void **state)
{
    const char *pages[] = { "d00 d02 d04", "d06 d08 d10", "d12" };
    location *l = find_location(indexed_docs(), "n", "{\"k\":\"a\"}", 3, 0);
    const cp_page *page;

    l->fake->explain = EXPLAIN_KN;
    walk_both_ways(l, pages, 3, 7);
    assert_int_equal(l->fake->posts, 1);
    assert_int_equal(l->fake->gets, 1);
    assert_int_equal(l->fake->finds, 0);
    assert_true(logged(l->fake, "CP0371", CP_LOG_DEBUG));
    page = page_at(l, NULL);
    assert_true(page->numbered);
    assert_string_equal(page->next, "{\"a\":[[4],\"d04\"]}");
    assert_int_equal(l->fake->posts, 1);
}

/* A server without _explain (404), or an index _explain names that is no
 * range of the selector: the pages go by _find, and the 404 is noted. */
static void find_by_find_where_explain_cannot_tell(void **state)
{
    location *l = find_location(indexed_docs(), "n", "{\"k\":\"a\"}", 3, 0);
    const cp_page *page;

    page = page_at(l, NULL);
    assert_false(page->numbered);
    assert_string_equal(row_names(page), "d00 d02 d04");
    page_at(l, NULL);
    assert_int_equal(l->fake->posts, 1);
    assert_int_equal(l->fake->finds, 2);
    l = find_location(indexed_docs(), "n", "{\"n\":{\"$gt\":3}}", 3, 0);
    l->fake->explain = EXPLAIN_KN;
    page = page_at(l, NULL);
    assert_false(page->numbered);
    assert_string_equal(row_names(page), "d04 d05 d06");
    assert_true(logged(l->fake, "CP0372", CP_LOG_DEBUG));
}

/* CP0422 logged at warn once, the index to create on fields (JSON) for
 * the database's queries, which each child finds. */
static void assert_advised_once(const location *l, const char *fields)
{
    const char *body = apr_psprintf(pool, "POST http://couch:5984/db/_index {\"index\":"
                                    "{\"fields\":%s},\"type\":\"json\",\"partitioned\":"
                                    "false}: each child finds it", fields);
    int i, lines = 0;

    for (i = 0; i < l->fake->log->nelts; i++) {
        const char *line = APR_ARRAY_IDX(l->fake->log, i, const char *);

        if (!strncmp(line, "CP0422 4 ", 9)) {
            lines++;
            assert_non_null(strstr(line, body));
        }
    }
    assert_int_equal(lines, 1);
}

/* Where the view cannot serve (a condition besides the index's range),
 * the index that starts a page at its row is logged at warn, once. */
static void find_residual_logs_the_index_to_create_once(void **state)
{
    location *l = find_location(indexed_docs(), "n", "{\"k\":\"a\",\"n\":{\"$lt\":5}}", 2, 0);
    const cp_page *page;

    l->fake->explain = EXPLAIN_KN;
    page = page_at(l, NULL);
    assert_false(page->numbered);
    assert_string_equal(row_names(page), "d00 d02");
    assert_string_equal(row_names(page_at(l, page->next)), "d04");
    assert_advised_once(l, "[\"k\",\"n\",\"_id\"]");
}

/* What _explain names for a query through an index on t and _id. */
#define EXPLAIN_TID "{\"dbname\":\"db\",\"index\":{\"ddoc\":\"_design/tid\",\"name\":" \
    "\"by-t-id\",\"type\":\"json\",\"partitioned\":false,\"def\":{\"fields\":[{\"t\":" \
    "\"asc\"},{\"_id\":\"asc\"}]}},\"selector\":{},\"limit\":4}"

/* The page at start, two rows a page: its rows' names, after _find was
 * asked finds times and the index's view probes times. */
static const cp_page *two_rows_at(location *l, const char *start, const char *names,
                                  int finds, int probes)
{
    const cp_page *page;

    l->req.count = 2;
    l->fake->finds = l->fake->probes = 0;
    page = page_at(l, start);
    assert_string_equal(row_names(page), names);
    assert_int_equal(l->fake->finds, finds);
    assert_int_equal(l->fake->probes, probes);
    return page;
}

/* Twelve documents PREFIXd00..PREFIXd11 into f, t = (i + shift) % 3:
 * three groups of four ties. */
static fake *add_tied(fake *f, const char *prefix, int shift)
{
    int i;

    for (i = 0; i < 12; i++) {
        add_doc(f, apr_psprintf(pool, "{\"_id\":\"%sd%02d\",\"t\":%d}", prefix, i,
                                (i + shift) % 3));
    }
    return f;
}

/* Twelve documents d00..d11, t = i % 3. */
static fake *tied_docs(void)
{
    return add_tied(fake_make(), "", 0);
}

/* A residual condition ($lt, which the view cannot read) through an index
 * on [t, _id]: the ties asked apart, one _find a page inside a group of
 * ties and two where the page crosses one, both ways and descending, the
 * walk CouchDB's order; no CP0422. */
static void find_residual_asks_the_ties_apart(void **state)
{
    const char *pages[] = { "d00 d03 d06", "d09 d01 d04", "d07 d10 d02", "d05 d08 d11" };
    const char *down[] = { "d11 d08 d05", "d02 d10 d07", "d04 d01 d09", "d06 d03 d00" };
    location *l = find_location(tied_docs(), "t", "{\"t\":{\"$lt\":9}}", 3, 0);
    const cp_page *page;

    l->fake->explain = EXPLAIN_TID;
    walk_both_ways(l, pages, 4, -1);
    assert_false(logged(l->fake, "CP0422", CP_LOG_WARNING));
    assert_true(logged(l->fake, "CP0372", CP_LOG_DEBUG));
    /* inside a group: the ties fill the page, one query */
    page = two_rows_at(l, "{\"a\":[[0],\"d00\"]}", "d03 d06", 1, 0);
    /* across a group: the ties, the next value past theirs (a read of the
     * index's view, from past [0, every id]), then the rest from it */
    page = page_at(l, page->next);
    assert_string_equal(row_names(page), "d09 d01");
    assert_int_equal(l->fake->finds, 3);
    assert_int_equal(l->fake->probes, 1);
    assert_string_equal(url_param(l->fake->probe, "startkey"), "[0,{\"\\uffff\":null}]");
    assert_string_equal(url_param(l->fake->probe, "endkey"), "[{\"\\uffff\":null}]");
    assert_null(url_param(l->fake->probe, "descending"));
    assert_string_equal(url_param(l->fake->probe, "reduce"), "false");
    /* backward likewise: the ties before the row, then the rest (here
     * the row beyond the page, which shows a prev, is the rest's), from
     * the next value down, read before [1] */
    page = page_at(l, "{\"b\":[[1],\"d10\"]}");
    assert_string_equal(row_names(page), "d04 d07");
    assert_int_equal(l->fake->finds, 4);
    page = page_at(l, page->prev);
    assert_string_equal(row_names(page), "d09 d01");
    assert_int_equal(l->fake->finds, 6);
    assert_int_equal(l->fake->probes, 2);
    assert_string_equal(url_param(l->fake->probe, "startkey"), "[1]");
    assert_string_equal(url_param(l->fake->probe, "endkey"), "[]");
    assert_string_equal(url_param(l->fake->probe, "descending"), "true");
    /* past the last group, no value: the rest is not asked */
    page = page_at(l, "{\"a\":[[2],\"d08\"]}");
    assert_string_equal(row_names(page), "d11");
    assert_null(page->next);
    assert_int_equal(l->fake->finds, 7);
    assert_int_equal(l->fake->probes, 3);
    /* the read of the next value fails: the rest from the row's value */
    l->fake->probe_fail.status = 502;
    l->fake->probe_fail.backend_status = 500;
    l->fake->probe_fail.reason = "CouchDB answered 500";
    page = page_at(l, "{\"a\":[[0],\"d06\"]}");
    assert_string_equal(row_names(page), "d09 d01");
    assert_int_equal(l->fake->finds, 9);
    assert_true(logged(l->fake, "CP0374", CP_LOG_DEBUG));
    /* descending */
    l = find_location(tied_docs(), "t", "{\"t\":{\"$lt\":9}}", 3, 0);
    l->fake->explain = EXPLAIN_TID;
    l->spec.sort = &l->sort[1];
    walk_both_ways(l, down, 4, -1);
    /* an index not ending in _id: the tie-blind query, and CP0422 */
    l = find_location(tied_docs(), "t", "{\"t\":{\"$lt\":9}}", 3, 0);
    l->fake->explain = EXPLAIN_KN;
    page = page_at(l, "{\"a\":[[0],\"d06\"]}");
    assert_string_equal(row_names(page), "d09 d01 d04");
    assert_int_equal(l->fake->finds, 1);
    assert_true(logged(l->fake, "CP0422", CP_LOG_WARNING));
}

/* What _explain names for a query sorted by t when the database has both
 * an index on [t] and one on [t, _id]: Mango prefers the fewer columns. */
#define EXPLAIN_T "{\"dbname\":\"db\",\"index\":{\"ddoc\":\"_design/by-t\",\"name\":" \
    "\"by-t\",\"type\":\"json\",\"partitioned\":false,\"def\":{\"fields\":[{\"t\":" \
    "\"asc\"}]}},\"selector\":{},\"limit\":4}"

/* GET /db/_index as CouchDB 3.4.3 answers it (_all_docs first), its JSON
 * indexes ENTRIES. */
#define INDEXES(ENTRIES) "{\"total_rows\":9,\"indexes\":[{\"ddoc\":null,\"name\":" \
    "\"_all_docs\",\"type\":\"special\",\"def\":{\"fields\":[{\"_id\":\"asc\"}]}}," \
    ENTRIES "]}"
#define LISTED_T "{\"ddoc\":\"_design/by-t\",\"name\":\"by-t\",\"type\":\"json\"," \
    "\"partitioned\":false,\"def\":{\"fields\":[{\"t\":\"asc\"}]}}"
#define LISTED_TID(DDOC, MORE) "{\"ddoc\":\"_design/" DDOC "\",\"name\":\"by-t-id\",\"type\":" \
    "\"json\"," MORE "\"def\":{\"fields\":[{\"t\":\"asc\"},{\"_id\":\"asc\"}]}}"

/* A location over the tied documents whose selector has a residual
 * condition, through the index on [t] _explain names, the database's
 * indexes listed as listed. */
static location *tied_location(const char *listed)
{
    location *l = find_location(tied_docs(), "t", "{\"t\":{\"$lt\":9}}", 3, 0);

    l->fake->explain = EXPLAIN_T;
    l->fake->indexes = listed;
    return l;
}

/* The use_index of the last _find body, "DDOC NAME", and " or another"
 * where CouchDB may fall back; "" without one. */
static const char *use_index_of(const location *l)
{
    const json_t *body = load(l->fake->last_find), *use = json_object_get(body, "use_index");
    const json_t *fallback = json_object_get(body, "allow_fallback");

    if (!use) {
        return "";
    }
    assert_true(!fallback || json_is_false(fallback));
    return apr_pstrcat(pool, json_string_value(json_array_get(use, 0)), " ",
                       json_string_value(json_array_get(use, 1)) ? json_string_value(
                           json_array_get(use, 1)) : "", fallback ? "" : " or another", NULL);
}

/* _explain names [t], which reads the ties again; the database also has
 * [t, _id], which starts them at the row: learnt with the index _explain
 * names (one read of the list, once), the pages name it in their _find
 * bodies and ask the ties apart through its view, the walk CouchDB's
 * order; no CP0422. */
static void find_ties_index_found_among_the_database_indexes(void **state)
{
    const char *pages[] = { "d00 d03 d06", "d09 d01 d04", "d07 d10 d02", "d05 d08 d11" };
    location *l = tied_location(INDEXES(LISTED_T "," LISTED_TID("tid", "\"partitioned\":false,")));
    const cp_page *page;
    int i, named = 0;

    walk_both_ways(l, pages, 4, -1);
    assert_int_equal(l->fake->posts, 1);
    assert_int_equal(l->fake->index_gets, 1);
    assert_string_equal(use_index_of(l), "tid by-t-id or another");
    assert_false(logged(l->fake, "CP0422", 0));
    for (i = 0; i < l->fake->log->nelts; i++) {
        const char *line = APR_ARRAY_IDX(l->fake->log, i, const char *);

        named += !strncmp(line, "CP0371 7 ", 9)
                 && strstr(line, "(_design/tid by-t-id, among the database's indexes") != NULL;
        assert_true(strncmp(line, "CP0372 ", 7)
                    || strstr(line, "the ties asked apart through http://couch:5984/db/"
                                    "_design/tid/_view/by-t-id"));
    }
    assert_int_equal(named, 1);
    /* a page inside a group of ties: one _find, the ties alone */
    l->req.count = 2;
    l->fake->finds = l->fake->probes = 0;
    page = page_at(l, "{\"a\":[[0],\"d00\"]}");
    assert_string_equal(row_names(page), "d03 d06");
    assert_int_equal(l->fake->finds, 1);
    assert_string_equal(use_index_of(l), "tid by-t-id or another");
    assert_non_null(strstr(l->fake->last_find, "\"_id\":{\"$gt\":\"d00\"}"));
    /* across one: the next value from the found index's view */
    page = page_at(l, page->next);
    assert_string_equal(row_names(page), "d09 d01");
    assert_int_equal(l->fake->finds, 3);
    assert_int_equal(l->fake->probes, 1);
    assert_non_null(strstr(l->fake->probe, "/db/_design/tid/_view/by-t-id?"));
    assert_string_equal(use_index_of(l), "tid by-t-id or another");
    /* the first page and the Last name it too */
    page_at(l, NULL);
    assert_string_equal(use_index_of(l), "tid by-t-id or another");
    assert_string_equal(row_names(page_at(l, CP_TOKEN_LAST)), "d08 d11");
    assert_string_equal(use_index_of(l), "tid by-t-id or another");
    assert_int_equal(l->fake->index_gets, 1);
    /* CouchDB's warning (the learnt index dropped meanwhile): the index to
     * create again, which each child finds, for no CouchPageIndex names it */
    l->fake->warning = "_design/tid by-t-id was not found";
    page_at(l, NULL);
    assert_true(logged(l->fake, "CP0322", CP_LOG_WARNING));
    for (i = 0; i < l->fake->log->nelts; i++) {
        const char *line = APR_ARRAY_IDX(l->fake->log, i, const char *);

        assert_true(strncmp(line, "CP0322 ", 7)
                    || strstr(line, "\"_id\"]},\"type\":\"json\",\"partitioned\":false}: each "
                                    "child finds it among the database's indexes"));
    }
    l->fake->warning = NULL;
    /* of two that start at the row, the one with more of the selector's
     * equalities in its key */
    l = find_location(tied_docs(), "t", "{\"k\":\"a\",\"t\":{\"$lt\":9}}", 3, 0);
    l->fake->explain = EXPLAIN_T;
    l->fake->indexes = INDEXES(LISTED_TID("tid", "") ",{\"ddoc\":\"_design/ktid\",\"name\":"
                               "\"k-t-id\",\"type\":\"json\",\"def\":{\"fields\":[\"k\",\"t\","
                               "\"_id\"]}}");
    page_at(l, NULL);
    assert_string_equal(use_index_of(l), "ktid k-t-id or another");
}

/* None of the database's indexes starts the ties at the row (one with a
 * partial_filter_selector, one partitioned where the query is the
 * database's, one of other fields): the pages as before, through the
 * index _explain names, and CP0422 once, with the exact body. In a
 * partition, the partitioned one serves. */
static void find_ties_index_none_fits(void **state)
{
    const char *listed = INDEXES(LISTED_T ","
        "{\"ddoc\":\"_design/partial\",\"name\":\"p\",\"type\":\"json\",\"def\":"
        "{\"fields\":[\"t\",\"_id\"],\"partial_filter_selector\":{\"t\":{\"$gt\":0}}}},"
        LISTED_TID("parted", "\"partitioned\":true,") ","
        "{\"ddoc\":\"_design/uid\",\"name\":\"u-id\",\"type\":\"json\",\"def\":{\"fields\":"
        "[\"u\",\"_id\"]}}");
    location *l = tied_location(listed);
    const cp_page *page;
    int i;

    page = page_at(l, "{\"a\":[[0],\"d06\"]}");
    assert_string_equal(row_names(page), "d09 d01 d04");
    assert_int_equal(l->fake->finds, 1);
    assert_string_equal(use_index_of(l), "");
    page_at(l, page->next);
    assert_int_equal(l->fake->index_gets, 1);
    assert_true(logged(l->fake, "CP0376", CP_LOG_DEBUG));
    assert_non_null(strstr(APR_ARRAY_IDX(l->fake->log, 0, const char *), "none of its 5 is"));
    assert_advised_once(l, "[\"t\",\"_id\"]");
    /* the queries of a partition (which holds none of the database's
     * documents here): the partitioned index */
    l = tied_location(listed);
    l->source.partition = "p";
    l->source.partition_set = 1;
    page = page_at(l, "{\"a\":[[0],\"d06\"]}");
    assert_non_null(page);
    assert_string_equal(row_names(page), "");
    assert_string_equal(use_index_of(l), "parted by-t-id or another");
    assert_false(logged(l->fake, "CP0422", 0));
    /* a location that names its index keeps it; CP0422 says to name the
     * new one */
    l = tied_location(listed);
    l->spec.index_ddoc = "by-t";
    l->fake->ddoc = "{\"_id\":\"_design/by-t\",\"language\":\"query\",\"views\":{\"by-t\":"
                    "{\"map\":{\"fields\":{\"t\":\"asc\"}},\"reduce\":\"_count\",\"options\":"
                    "{\"def\":{\"fields\":[\"t\"]}}}}}";
    page = page_at(l, "{\"a\":[[0],\"d06\"]}");
    assert_string_equal(row_names(page), "d09 d01 d04");
    assert_string_equal(use_index_of(l), "by-t ");
    assert_int_equal(l->fake->index_gets, 0);
    for (i = 0; i < l->fake->log->nelts; i++) {
        const char *line = APR_ARRAY_IDX(l->fake->log, i, const char *);

        assert_true(strncmp(line, "CP0422 ", 7)
                    || strstr(line, "\"partitioned\":false}, and name it with "
                                    "CouchPageIndex (<Location /t> at t.conf:5 names by-t)"));
    }
    assert_true(logged(l->fake, "CP0422", CP_LOG_WARNING));
}

/* The list of indexes cannot be read: refused (404, a server without it),
 * the pages go through the index _explain names, as before, noted a
 * minute, CP0422 logged; failing (500), this page goes by _find, learnt
 * again by the next; past the page's deadline, the page's 504. No fault
 * for the client otherwise. */
static void find_ties_index_list_unread(void **state)
{
    location *l = tied_location(NULL);
    const cp_page *page;
    const cp_fault *fault;

    page = page_at(l, "{\"a\":[[0],\"d06\"]}");
    assert_string_equal(row_names(page), "d09 d01 d04");
    assert_string_equal(use_index_of(l), "");
    page_at(l, page->next);
    assert_int_equal(l->fake->index_gets, 1);
    assert_int_equal(l->fake->posts, 1);
    assert_true(logged(l->fake, "CP0422", CP_LOG_WARNING));
    l = tied_location(INDEXES(LISTED_TID("tid", "")));
    l->fake->index_fail.status = 502;
    l->fake->index_fail.backend_status = 500;
    l->fake->index_fail.reason = "CouchDB answered 500";
    page = page_at(l, "{\"a\":[[0],\"d06\"]}");
    assert_string_equal(row_names(page), "d09 d01 d04");
    assert_string_equal(use_index_of(l), "");
    assert_int_equal(apr_hash_count(l->fake->notes), 0);
    assert_true(logged(l->fake, "CP0370", CP_LOG_DEBUG));
    /* the next page learns again, and finds it */
    l->fake->index_fail.status = 0;
    page = page_at(l, "{\"a\":[[0],\"d00\"]}");
    assert_string_equal(row_names(page), "d03 d06 d09");
    assert_string_equal(use_index_of(l), "tid by-t-id or another");
    assert_int_equal(l->fake->index_gets, 2);
    assert_false(logged(l->fake, "CP0422", 0));
    l = tied_location(INDEXES(LISTED_TID("tid", "")));
    l->fake->index_fail.status = 504;
    l->fake->index_fail.reason = "the backend did not answer in time";
    l->fake->index_fail.past_deadline = 1;
    fault = serve(l, "{\"a\":[[0],\"d06\"]}");
    assert_non_null(fault);
    assert_int_equal(fault->status, 504);
}

/* A row edited between the ties' read and the rest's, from the ties to
 * the rest's first rows (before the read of the next value, which finds
 * its new value): once on the page, where the later read found it, and
 * the rest asked again whole from the row's value, since it left the page
 * short. Edited after that read, between the row's value and the next,
 * it is on the page once, where the ties' read found it, and not again
 * on the next page; no other row is lost or repeated. */
static void find_ties_apart_edited_between_the_reads(void **state)
{
    const char *pages[] = { "d06 d09 d01", "d04 d07 d10" };
    location *l = find_location(tied_docs(), "t", "{\"t\":{\"$lt\":9}}", 3, 0);
    const cp_page *page;

    l->fake->explain = EXPLAIN_TID;
    page_at(l, NULL);
    l->fake->finds = 0;
    l->fake->edit_probe = 1;
    l->fake->edit = "{\"_id\":\"d06\",\"t\":0.5}";
    page = page_at(l, "{\"a\":[[0],\"d03\"]}");
    assert_string_equal(row_names(page), "d09 d06 d01");
    assert_int_equal(l->fake->finds, 3);
    assert_int_equal(l->fake->probes, 1);
    /* (its row's ties on the side the next page reads first, none, were
     * on this page) */
    assert_string_equal(page->next, "{\"a\":[[1],\"d01\"],\"e\":1}");
    /* into the gap between 0 and the next value, 1, after it was read */
    l = find_location(tied_docs(), "t", "{\"t\":{\"$lt\":9}}", 3, 0);
    l->fake->explain = EXPLAIN_TID;
    page_at(l, NULL);
    l->fake->finds = 0;
    l->fake->edit_at = 2;
    l->fake->edit = "{\"_id\":\"d06\",\"t\":0.5}";
    page = page_at(l, "{\"a\":[[0],\"d03\"]}");
    assert_string_equal(row_names(page), pages[0]);
    assert_int_equal(l->fake->finds, 2);
    assert_string_equal(row_names(page_at(l, page->next)), pages[1]);
}

/* Two sort fields through an index [t, u, _id]: the ties equal on both,
 * then the rest a field at a time from the next value (u among the row's
 * t, then t); the walk both ways is the sort's order. */
static void find_residual_ties_apart_on_two_fields(void **state)
{
    const char *pages[] = { "d00 d06 d02", "d08 d04 d10", "d01 d07 d03", "d09 d05 d11" };
    const char *names[] = { "t", "u" };
    location *l = find_location(fake_make(), "t", "{\"t\":{\"$lt\":9}}", 3, 0);
    int i;

    for (i = 0; i < 12; i++) {
        add_doc(l->fake, apr_psprintf(pool, "{\"_id\":\"d%02d\",\"t\":%d,\"u\":%d}", i, i % 2,
                                      (i / 2) % 3));
    }
    assert_null(cp_find_sort_init(pool, names, 2, 0, &l->sort[0]));
    l->fake->explain = "{\"index\":{\"ddoc\":\"_design/tu\",\"name\":\"tu\",\"type\":"
                       "\"json\",\"def\":{\"fields\":[{\"t\":\"asc\"},{\"u\":\"asc\"},"
                       "{\"_id\":\"asc\"}]}}}";
    walk_both_ways(l, pages, 4, -1);
    assert_true(logged(l->fake, "CP0372", CP_LOG_DEBUG));
    assert_false(logged(l->fake, "CP0422", CP_LOG_WARNING));
    /* a page and the row beyond it cross from a pair of ties: the ties,
     * the next u among t 1's keys, the rest from it; either way */
    l->req.count = 1;
    l->fake->finds = l->fake->probes = 0;
    assert_string_equal(row_names(page_at(l, "{\"a\":[[1,0],\"d01\"]}")), "d07");
    assert_int_equal(l->fake->finds, 2);
    assert_int_equal(l->fake->probes, 1);
    assert_string_equal(url_param(l->fake->probe, "startkey"), "[1,0,{\"\\uffff\":null}]");
    assert_string_equal(url_param(l->fake->probe, "endkey"), "[1,{\"\\uffff\":null}]");
    assert_string_equal(row_names(page_at(l, "{\"b\":[[1,1],\"d09\"]}")), "d03");
    assert_int_equal(l->fake->finds, 4);
    assert_int_equal(l->fake->probes, 2);
    /* across both fields: the ties, no u past 2 among t 0's keys (no
     * rest asked), the next t, then the rows from it whatever their u */
    l->req.count = 2;
    l->fake->finds = l->fake->probes = 0;
    assert_string_equal(row_names(page_at(l, "{\"a\":[[0,2],\"d04\"]}")), "d10 d01");
    assert_int_equal(l->fake->finds, 2);
    assert_int_equal(l->fake->probes, 2);
    assert_string_equal(url_param(l->fake->probe, "startkey"), "[0,{\"\\uffff\":null}]");
    assert_string_equal(url_param(l->fake->probe, "endkey"), "[{\"\\uffff\":null}]");
    /* and back: before [1, 0] no u among t 1's keys, before [1] t 0's last */
    assert_string_equal(row_names(page_at(l, "{\"b\":[[1,0],\"d07\"]}")), "d10 d01");
    assert_int_equal(l->fake->finds, 4);
    assert_int_equal(l->fake->probes, 4);
    assert_string_equal(url_param(l->fake->probe, "startkey"), "[1]");
    assert_string_equal(url_param(l->fake->probe, "endkey"), "[]");
}

/* Small groups of ties (two rows a value of t, three rows a page): each
 * page's next and prev tokens say their row's ties are few ("e": 1), so
 * the page they open is one _find from the row's value, which reads those
 * few again, not the ties, the next value and the rest; the walk both
 * ways the sort's order. With two open fields the same query keeps to the
 * row's t, and a page that leaves it reads the next t as a crossing page
 * does. */
static void find_small_groups_ask_one_query(void **state)
{
    const char *pages[] = { "d00 d01 d02", "d03 d04 d05", "d06 d07 d08", "d09 d10 d11" };
    const char *names[] = { "t", "u" };
    location *l = find_location(fake_make(), "t", "{\"t\":{\"$lt\":99}}", 3, 0);
    const cp_fault *fault;
    const cp_page *page;
    int i;

    (void)state;
    for (i = 0; i < 12; i++) {
        add_doc(l->fake, apr_psprintf(pool, "{\"_id\":\"d%02d\",\"t\":%d,\"u\":%d}", i, i / 2,
                                      i % 2));
    }
    l->fake->explain = EXPLAIN_TID;
    walk_both_ways(l, pages, 4, -1);
    page = page_at(l, NULL);
    assert_string_equal(page->next, "{\"a\":[[1],\"d02\"],\"e\":1}");
    l->fake->finds = l->fake->probes = 0;
    page = page_at(l, page->next);
    assert_string_equal(row_names(page), "d03 d04 d05");
    assert_int_equal(l->fake->finds, 1);
    assert_int_equal(l->fake->probes, 0);
    assert_non_null(strstr(l->fake->last_find, "{\"t\":{\"$gte\":1}}"));
    /* its prev: d04 after d03 is not tied with it: one query back from
     * d03's value */
    assert_string_equal(page->prev, "{\"b\":[[1],\"d03\"],\"e\":1}");
    assert_string_equal(row_names(page_at(l, page->prev)), "d00 d01 d02");
    assert_int_equal(l->fake->finds, 2);
    /* a token without "e" (an older link): the ties apart, as before */
    assert_string_equal(row_names(page_at(l, "{\"a\":[[1],\"d02\"]}")), "d03 d04 d05");
    assert_int_equal(l->fake->finds, 4);
    assert_int_equal(l->fake->probes, 1);
    /* counted, with page links: the link to the page after says it too */
    l->source.count.mode = CP_COUNT_CAPPED;
    l->source.count.cap = 1000;
    l->source.links = 1;
    page = page_at(l, NULL);
    assert_true(page->numbered && page->pages->nelts == 2);
    page = page_at(l, APR_ARRAY_IDX(page->pages, 1, cp_page_link).start);
    assert_string_equal(row_names(page), "d03 d04 d05");
    assert_true(page->numbered && page->pages->nelts == 3);
    assert_non_null(strstr(APR_ARRAY_IDX(page->pages, 2, cp_page_link).start, "\"e\":1"));
    assert_string_equal(row_names(page_at(l, APR_ARRAY_IDX(page->pages, 2, cp_page_link).start)),
                        "d06 d07 d08");
    /* two open fields, [t, u, _id]: within the row's t, then the next t */
    l = find_location(fake_make(), "t", "{\"t\":{\"$lt\":99}}", 3, 0);
    for (i = 0; i < 12; i++) {
        add_doc(l->fake, apr_psprintf(pool, "{\"_id\":\"d%02d\",\"t\":%d,\"u\":%d}", i, i / 4,
                                      (i / 2) % 2));
    }
    assert_null(cp_find_sort_init(pool, names, 2, 0, &l->sort[0]));
    l->fake->explain = "{\"index\":{\"ddoc\":\"_design/tu\",\"name\":\"tu\",\"type\":"
                       "\"json\",\"def\":{\"fields\":[{\"t\":\"asc\"},{\"u\":\"asc\"},"
                       "{\"_id\":\"asc\"}]}}}";
    walk_both_ways(l, pages, 4, -1);
    l->fake->finds = l->fake->probes = 0;
    page = page_at(l, "{\"a\":[[0,1],\"d02\"],\"e\":1}");
    assert_string_equal(row_names(page), "d03 d04 d05");
    assert_int_equal(l->fake->finds, 2);
    assert_int_equal(l->fake->probes, 1);
    assert_string_equal(url_param(l->fake->probe, "startkey"), "[0,{\"\\uffff\":null}]");
    /* "e" is 1 or absent */
    fault = serve(l, "{\"a\":[[0,1],\"d02\"],\"e\":2}");
    assert_non_null(fault);
    assert_int_equal(fault->status, 400);
}

/* The rows beyond a token's row went: the Last page (or the first),
 * which that page's own token then is, sealed where tokens are. */
static void find_deleted_boundary_rows(void **state)
{
    location *l = find_location(ten_rows(), "n", "{}", 3, 0);
    const char *next, *prev;
    const cp_page *page;

    next = apr_pstrdup(pool, page_at(l, NULL)->next);
    prev = apr_pstrdup(pool, page_at(l, "{\"a\":[[5],\"d5\"]}")->prev);
    /* every row after d2 goes */
    l->fake->docs->nelts = 3;
    l->fake->finds = 0;
    page = page_at(l, next);
    assert_string_equal(row_names(page), "d0 d1 d2");
    assert_int_equal(l->fake->finds, 2);
    assert_string_equal(page->last, CP_TOKEN_LAST);
    assert_true(page->last_is_current);
    /* every row before d6 goes: the first page */
    l = find_location(ten_rows(), "n", "{}", 3, 0);
    memmove(l->fake->docs->elts, l->fake->docs->elts + 6 * sizeof(json_t *),
            4 * sizeof(json_t *));
    l->fake->docs->nelts = 4;
    page = page_at(l, prev);
    assert_string_equal(row_names(page), "d6 d7 d8");
    assert_null(page->prev);
}

static void find_warnings_are_logged_once_a_location(void **state)
{
    location *l = find_location(ten_rows(), "n", "{}", 3, 0);

    l->fake->warning = "No matching index found, create an index to optimize query time.";
    page_at(l, NULL);
    page_at(l, NULL);
    assert_true(logged(l->fake, "CP0322", CP_LOG_WARNING));
    assert_true(logged(l->fake, "CP0322", CP_LOG_DEBUG));
    /* the first line, after what the location's _explain told (CP0371) */
    assert_true(logged(l->fake, "CP0371", CP_LOG_DEBUG));
    assert_non_null(strstr(APR_ARRAY_IDX(l->fake->log, 1, const char *),
                           "(CouchPageView http://couch:5984/db/_find, <Location /t> at "
                           "t.conf:2). Create the index that serves it: POST "
                           "http://couch:5984/db/_index {\"index\":{\"fields\":[\"n\","
                           "\"_id\"]},\"type\":\"json\",\"partitioned\":false}: each "
                           "child finds it among the database's indexes within a minute "
                           "(CouchPageIndex need not name it)"));
}

/* What _explain in a partition names: the partitioned index on t and _id. */
#define EXPLAIN_TID_PARTITIONED "{\"dbname\":\"db\",\"index\":{\"ddoc\":\"_design/tid\"," \
    "\"name\":\"by-t-id\",\"type\":\"json\",\"partitioned\":true,\"def\":{\"fields\":" \
    "[{\"t\":\"asc\"},{\"_id\":\"asc\"}]}},\"partitioned\":true,\"selector\":{},\"limit\":4}"

/* Partitions p and q of twelve documents each, p:d00..p:d11 with t = i % 3
 * and q:d00..q:d11 with t = (i + 1) % 3: each value's rows interleave. */
static fake *partitioned_docs(void)
{
    return add_tied(add_tied(fake_make(), "p:", 0), "q:", 1);
}

#define PARTITION_VIEW "http://couch:5984/db/_partition/p/_design/tid/_view/by-t-id"

/* In a partition (CouchPagePartition p) the ties are asked apart as
 * outside one: _explain and the look at the index's view asked in the
 * partition, the next value read from the partition's view, the rest from
 * it; the walk the partition's rows alone, both ways. */
static void find_partition_asks_the_ties_apart(void **state)
{
    const char *pages[] = { "p:d00 p:d03 p:d06", "p:d09 p:d01 p:d04", "p:d07 p:d10 p:d02",
                            "p:d05 p:d08 p:d11" };
    location *l = find_location(partitioned_docs(), "t", "{\"t\":{\"$lt\":9}}", 3, 0);
    const cp_page *page;

    l->fake->explain = EXPLAIN_TID_PARTITIONED;
    l->source.partition = "p";
    l->source.partition_set = 1;
    page_at(l, NULL);
    assert_string_equal(l->fake->last_post, "http://couch:5984/db/_partition/p/_explain");
    assert_string_equal(l->fake->last_get,
                        PARTITION_VIEW "?limit=0&reduce=false&update=false");
    assert_string_equal(l->fake->last_find_url, "http://couch:5984/db/_partition/p/_find");
    walk_both_ways(l, pages, 4, -1);
    assert_false(logged(l->fake, "CP0422", CP_LOG_WARNING));
    /* across a group: the ties, the next value from the partition's view,
     * the rest from it */
    page = two_rows_at(l, "{\"a\":[[0],\"p:d06\"]}", "p:d09 p:d01", 2, 1);
    assert_string_equal(apr_pstrndup(pool, l->fake->probe, strlen(PARTITION_VIEW "?")),
                        PARTITION_VIEW "?");
    assert_string_equal(url_param(l->fake->probe, "startkey"), "[0,{\"\\uffff\":null}]");
    assert_true(strstr(l->fake->last_find, "{\"t\":{\"$gte\":1,\"$gt\":0}}") != NULL);
    /* backward: down the partition's view */
    page = page_at(l, "{\"b\":[[1],\"p:d01\"]}");
    assert_string_equal(row_names(page), "p:d06 p:d09");
    page = page_at(l, "{\"b\":[[1],\"p:d04\"]}");
    assert_string_equal(row_names(page), "p:d09 p:d01");
    /* the partition's view cannot be read now: the rest from the row's
     * value, as before, logged */
    l->fake->probe_fail.status = 502;
    l->fake->probe_fail.backend_status = 400;
    l->fake->probe_fail.reason = "CouchDB answered 400";
    l->fake->finds = 0;
    page = page_at(l, "{\"a\":[[0],\"p:d06\"]}");
    assert_string_equal(row_names(page), "p:d09 p:d01");
    assert_int_equal(l->fake->finds, 2);
    assert_true(logged(l->fake, "CP0374", CP_LOG_DEBUG));
}

/* A URL that names the partition (CouchPageView .../db/_partition/p/_find):
 * the same reads, through its path; the index's view numbers the
 * partition's pages where the selector is its key range. */
static void find_partition_named_by_the_url(void **state)
{
    const char *pages[] = { "p:d00 p:d03 p:d06", "p:d09 p:d01 p:d04", "p:d07 p:d10 p:d02",
                            "p:d05 p:d08 p:d11" };
    location *l = find_location(partitioned_docs(), "t", "{\"t\":{\"$lt\":9}}", 3, 0);
    const cp_page *page;

    assert_null(cp_view_init(pool, "http://couch:5984/db/_partition/p/_find", &l->view));
    l->fake->explain = EXPLAIN_TID_PARTITIONED;
    walk_both_ways(l, pages, 4, -1);
    assert_string_equal(l->fake->last_post, "http://couch:5984/db/_partition/p/_explain");
    l->fake->probes = 0;
    page = page_at(l, "{\"a\":[[0],\"p:d06\"]}");
    assert_string_equal(row_names(page), "p:d09 p:d01 p:d04");
    assert_int_equal(l->fake->probes, 1);
    assert_string_equal(apr_pstrndup(pool, l->fake->probe, strlen(PARTITION_VIEW "?")),
                        PARTITION_VIEW "?");
    /* with CouchPageIndex: the design document is the database's, the look
     * at the view the partition's */
    l = find_location(partitioned_docs(), "t", "{\"t\":{\"$lt\":9}}", 3, 0);
    assert_null(cp_view_init(pool, "http://couch:5984/db/_partition/p/_find", &l->view));
    l->fake->explain = EXPLAIN_TID_PARTITIONED;
    l->fake->ddoc = "{\"_id\":\"_design/tid\",\"language\":\"query\",\"views\":{\"by-t-id\":"
                    "{\"map\":{\"fields\":{\"t\":\"asc\",\"_id\":\"asc\"}},\"reduce\":\"_count\","
                    "\"options\":{\"def\":{\"fields\":[\"t\",\"_id\"]}}}}}";
    l->spec.index_ddoc = "tid";
    l->spec.index_name = "by-t-id";
    page_at(l, NULL);
    assert_string_equal(l->fake->last_get,
                        PARTITION_VIEW "?limit=0&reduce=false&update=false");
    assert_int_equal(l->fake->posts, 0);
    assert_non_null(apr_hash_get(l->fake->notes, "http://couch:5984/db/_design/tid\nby-t-id\n"
                                 "_partition", APR_HASH_KEY_STRING));
    walk_both_ways(l, pages, 4, -1);
}

/* The partitioned documents in partition p, counted by CouchPageCount
 * capped cap. */
static location *partition_counted(int cap)
{
    location *l = find_location(partitioned_docs(), "t", "{\"t\":{\"$lt\":9}}", 3, 0);

    l->fake->explain = EXPLAIN_TID_PARTITIONED;
    l->source.partition = "p";
    l->source.partition_set = 1;
    l->source.count.mode = CP_COUNT_CAPPED;
    l->source.count.cap = cap;
    return l;
}

/* A counted location in a partition is counted through the partition's
 * view of its index, bounded (no CP0434): the look's skip and limit, then
 * the _find of the partition's rows up to the value it stops at. */
static void find_partition_counted_by_its_view(void **state)
{
    location *l = partition_counted(1000);
    const cp_page *page;

    page = page_at(l, NULL);
    assert_true(page->numbered && !page->count_at_least);
    assert_int_equal(page->total_rows, 12);
    assert_string_equal(url_param(l->fake->last_get, "skip"), "969");
    assert_string_equal(apr_pstrndup(pool, l->fake->last_get, strlen(PARTITION_VIEW "?")),
                        PARTITION_VIEW "?");
    assert_true(strstr(l->fake->last_find, "\"use_index\":[\"tid\",\"by-t-id\"]") != NULL);
    assert_false(logged(l->fake, "CP0434", CP_LOG_INFO));
    /* capped at 5: the sixth row of the partition's view is t 1, the count
     * the rows up to t 0, at least 4 */
    l = partition_counted(5);
    page = page_at(l, NULL);
    assert_true(page->numbered && page->count_at_least);
    assert_int_equal(page->total_rows, 4);
    assert_string_equal(url_param(l->fake->last_get, "limit"), "6");
    assert_true(strstr(l->fake->last_find, "{\"t\":{\"$lte\":0}}") != NULL);
    assert_false(logged(l->fake, "CP0434", CP_LOG_INFO));
    /* no index known (no _explain): the count by the _find alone, CP0434 */
    l = find_location(partitioned_docs(), "t", "{\"t\":{\"$lt\":9}}", 3, 0);
    l->source.partition = "p";
    l->source.partition_set = 1;
    l->source.count.mode = CP_COUNT_CAPPED;
    l->source.count.cap = 1000;
    page = page_at(l, NULL);
    assert_int_equal(page->total_rows, 12);
    assert_true(logged(l->fake, "CP0434", CP_LOG_INFO));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        UNIT_TEST(find_keyset_pages),
        UNIT_TEST(find_counted_walk),
        UNIT_TEST(find_counted_by_the_page_alone),
        UNIT_TEST(find_uncounted_where_no_view_bounds_the_count),
        UNIT_TEST(find_counted_capped),
        UNIT_TEST(find_counted_as_preferred),
        UNIT_TEST(find_counted_tokens_checked),
        UNIT_TEST(find_keyset_pages_of_a_selector),
        UNIT_TEST(find_numbered_pages_by_keyset),
        UNIT_TEST(find_numbered_count_carried_by_the_walk),
        UNIT_TEST(find_numbered_pages_with_page_links),
        UNIT_TEST(find_unnumbered_where_the_index_cannot_number),
        UNIT_TEST(find_numbered_by_the_index_explain_names),
        UNIT_TEST(find_by_find_where_explain_cannot_tell),
        UNIT_TEST(find_residual_logs_the_index_to_create_once),
        UNIT_TEST(find_residual_asks_the_ties_apart),
        UNIT_TEST(find_residual_ties_apart_on_two_fields),
        UNIT_TEST(find_small_groups_ask_one_query),
        UNIT_TEST(find_ties_apart_edited_between_the_reads),
        UNIT_TEST(find_partition_asks_the_ties_apart),
        UNIT_TEST(find_partition_named_by_the_url),
        UNIT_TEST(find_partition_counted_by_its_view),
        UNIT_TEST(find_ties_index_found_among_the_database_indexes),
        UNIT_TEST(find_ties_index_none_fits),
        UNIT_TEST(find_ties_index_list_unread),
        UNIT_TEST(find_deleted_boundary_rows),
        UNIT_TEST(find_warnings_are_logged_once_a_location),
    };

    RUN_UNIT_TESTS("serve_find", tests);
}
