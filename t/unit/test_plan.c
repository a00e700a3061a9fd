/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of couchpage_plan: the queries of every kind of page, which
 * wait, which a cut answer leaves to ask alone, and their widening; they
 * link the core alone. */
#include "pages.h"

#include <apr_escape.h>

#define DB_URL "http://127.0.0.1:5984/bands"
#define VIEW_URL DB_URL "/_design/bands/_view/by-name"

static const char *const roles[] = { "range-start", "range-end", "forward", "ahead",
                                     "backward", "own-group", "locate", "token-first",
                                     "token-last", "count" };

/* The roles of queries (const cp_query *, as the plan says which wait), in
 * order, a space between. */
static const char *roles_of(const apr_array_header_t *queries)
{
    const char *text = "";
    int i;

    for (i = 0; i < queries->nelts; i++) {
        text = apr_pstrcat(pool, text, i ? " " : "",
                           roles[APR_ARRAY_IDX(queries, i, const cp_query *)->role], NULL);
    }
    return text;
}

/* The GET URLs of a page's queries, one a line, each after its role. */
static const char *plan_urls(const cp_plan *plan, const cp_token *start)
{
    apr_array_header_t *queries = cp_plan_page(pool, plan, start);
    const char *text = "";
    int i;

    for (i = 0; i < queries->nelts; i++) {
        const cp_query *query = &APR_ARRAY_IDX(queries, i, cp_query);

        text = apr_pstrcat(pool, text, i ? "\n" : "", roles[query->role], " ",
                           cp_plan_query_url(pool, plan->index_url, query), NULL);
    }
    return text;
}

static void first_page_asks_for_one_row_more(void **state)
{
    cp_view view = view_of(VIEW_URL);
    cp_plan plan = plan_of(&view, NULL, NULL, NULL, 5, 0);

    /* nothing else: over the whole index total_rows is the location's, and
     * the last page is found when its link is followed */
    assert_string_equal(plan_urls(&plan, NULL), "forward " VIEW_URL "?limit=6&reduce=false");
    view = view_of("http://h/db/_all_docs");
    plan = plan_of(&view, NULL, NULL, NULL, 20, 0);
    assert_string_equal(plan_urls(&plan, NULL), "forward http://h/db/_all_docs?limit=21");
}

/* Both queries of a later page start at the token's row; the backward one
 * reads its entry too, passes over all but the last two of the page's rows
 * behind it (skip=count-2, bounded by the page size) and reads the slack. */
static void later_pages_query_forward_and_backward_from_the_token(void **state)
{
    cp_view view = view_of(VIEW_URL);
    cp_plan plan = plan_of(&view, NULL, NULL, NULL, 5, 0);
    cp_token start = token_of("\"Nirvana\"", "a1", 0);

    assert_string_equal(plan_urls(&plan, &start),
                        "forward " VIEW_URL "?limit=6&reduce=false&startkey=%22Nirvana%22"
                        "&startkey_docid=a1\n"
                        "backward " VIEW_URL "?limit=6&reduce=false&descending=true"
                        "&startkey=%22Nirvana%22&startkey_docid=a1&skip=3");
}

/* The POST body holds the same parameters, as JSON values. */
static void the_batch_body_holds_the_same_queries(void **state)
{
    cp_view view = view_of(VIEW_URL);
    cp_plan plan = plan_of(&view, NULL, "[\"p\",0]", "[\"p\",{}]", 2, 0);
    cp_token start = token_of("[\"p\",7.5]", "c\"7", 1);
    apr_array_header_t *queries = cp_plan_page(pool, &plan, &start);

    assert_string_equal(cp_plan_batch_body(pool, cp_plan_waiting(pool, queries)),
                        "{\"queries\":["
                        "{\"limit\":0,\"reduce\":false,\"startkey\":[\"p\",0]},"
                        "{\"limit\":0,\"reduce\":false,\"descending\":true,"
                        "\"startkey\":[\"p\",{}]},"
                        "{\"limit\":3,\"reduce\":false,\"startkey\":[\"p\",7.5],"
                        "\"startkey_docid\":\"c\\\"7\",\"skip\":1,\"endkey\":[\"p\",{}]},"
                        "{\"limit\":7,\"reduce\":false,\"descending\":true,"
                        "\"startkey\":[\"p\",7.5],\"startkey_docid\":\"c\\\"7\","
                        "\"endkey\":[\"p\",0]}]}");
    /* only the queries that wait */
    assert_int_equal(cp_plan_waiting(pool, queries)->nelts, 4);
    APR_ARRAY_IDX(queries, 0, cp_query).answer = answer_text("{\"rows\":[]}");
    APR_ARRAY_IDX(queries, 1, cp_query).answer = answer_text("{\"rows\":[]}");
    APR_ARRAY_IDX(queries, 2, cp_query).answer = answer_text("{\"rows\":[]}");
    assert_int_equal(cp_plan_waiting(pool, queries)->nelts, 1);
    assert_string_equal(cp_plan_batch_body(pool, cp_plan_waiting(pool, queries)),
                        "{\"queries\":[{\"limit\":7,\"reduce\":false,\"descending\":true,"
                        "\"startkey\":[\"p\",7.5],\"startkey_docid\":\"c\\\"7\","
                        "\"endkey\":[\"p\",0]}]}");
}

/* Which queries wait is the plan's to say: those without an answer, in the
 * order sent; the answers a backend brings go to them by role, never over an
 * answer a query has, and a widened query waits again. */
static void the_plan_says_which_queries_wait_and_takes_their_answers(void **state)
{
    cp_view view = view_of(VIEW_URL);
    cp_plan plan = plan_of(&view, NULL, "[\"p\",0]", "[\"p\",{}]", 2, 0);
    cp_token start = token_of("[\"p\",7.5]", "c7", 1);
    apr_array_header_t *queries = cp_plan_page(pool, &plan, &start);
    const cp_answer *forward = answer_text("{\"rows\":[]}");
    const cp_answer *backward = answer_text("{\"rows\":[]}");
    const cp_answer *other = answer_text("{\"rows\":[]}");
    cp_plan_answers answers = { { NULL }, 0 };
    apr_array_header_t *waiting = cp_plan_waiting(pool, queries);
    cp_query *query;
    int i;

    assert_int_equal(waiting->nelts, queries->nelts);
    for (i = 0; i < waiting->nelts; i++) {
        assert_ptr_equal(APR_ARRAY_IDX(waiting, i, const cp_query *),
                         &APR_ARRAY_IDX(queries, i, cp_query));
    }
    /* a round that brought two answers: the other two still wait */
    answers.of[CP_QUERY_FORWARD] = forward;
    answers.of[CP_QUERY_BACKWARD] = backward;
    assert_int_equal(cp_plan_take_answers(queries, &answers), 2);
    assert_ptr_equal(cp_plan_query(queries, CP_QUERY_FORWARD)->answer, forward);
    assert_ptr_equal(cp_plan_query(queries, CP_QUERY_BACKWARD)->answer, backward);
    assert_string_equal(roles_of(cp_plan_waiting(pool, queries)), "range-start range-end");
    /* the next round's answers: a query keeps the answer it has */
    memset(&answers, 0, sizeof(answers));
    answers.of[CP_QUERY_RANGE_START] = other;
    answers.of[CP_QUERY_RANGE_END] = other;
    answers.of[CP_QUERY_FORWARD] = other;
    assert_int_equal(cp_plan_take_answers(queries, &answers), 0);
    assert_ptr_equal(cp_plan_query(queries, CP_QUERY_FORWARD)->answer, forward);
    assert_int_equal(cp_plan_waiting(pool, queries)->nelts, 0);
    /* widened, the backward query waits again, alone */
    query = cp_plan_query(queries, CP_QUERY_BACKWARD);
    assert_true(cp_plan_widen(pool, &plan, &start, query));
    waiting = cp_plan_waiting(pool, queries);
    assert_int_equal(waiting->nelts, 1);
    assert_ptr_equal(APR_ARRAY_IDX(waiting, 0, const cp_query *), query);
}

/* A multi-query answer cut off after its 200 (CouchDB refusing a later
 * query, or a node going down): the results complete before the cut stand,
 * and the queries still waiting are asked again, alone, in the order sent;
 * a whole answer, or a cut one that brought every result, leaves none. */
static void a_cut_answer_leaves_the_queries_after_it_to_ask_alone(void **state)
{
    cp_view view = view_of(VIEW_URL);
    cp_plan plan = plan_of(&view, NULL, "[\"p\",0]", "[\"p\",{}]", 2, 0);
    cp_token start = token_of("[\"p\",7.5]", "c7", 1);
    apr_array_header_t *queries = cp_plan_page(pool, &plan, &start), *alone;
    const cp_answer *probe = answer_text("{\"rows\":[]}");
    cp_plan_answers answers = { { NULL }, 1 };
    int i;

    /* cut after the range start probe, which leads the batch */
    answers.of[CP_QUERY_RANGE_START] = probe;
    assert_int_equal(cp_plan_take_answers(queries, &answers), 3);
    assert_ptr_equal(cp_plan_query(queries, CP_QUERY_RANGE_START)->answer, probe);
    alone = cp_plan_ask_alone(pool, queries, &answers);
    assert_non_null(alone);
    assert_string_equal(roles_of(alone), "range-end forward backward");
    /* asked alone, they are answered: none is left */
    memset(&answers, 0, sizeof(answers));
    for (i = 0; i < alone->nelts; i++) {
        answers.of[APR_ARRAY_IDX(alone, i, const cp_query *)->role] = probe;
    }
    assert_int_equal(cp_plan_take_answers(queries, &answers), 0);
    assert_null(cp_plan_ask_alone(pool, queries, &answers));
    answers.cut_off = 1;
    assert_null(cp_plan_ask_alone(pool, queries, &answers));
    /* cut before any result came whole: every query is asked alone */
    queries = cp_plan_page(pool, &plan, &start);
    memset(&answers, 0, sizeof(answers));
    answers.cut_off = 1;
    assert_int_equal(cp_plan_take_answers(queries, &answers), 4);
    alone = cp_plan_ask_alone(pool, queries, &answers);
    assert_non_null(alone);
    assert_string_equal(roles_of(alone), "range-start range-end forward backward");
    assert_ptr_equal(APR_ARRAY_IDX(alone, 0, const cp_query *),
                     &APR_ARRAY_IDX(queries, 0, cp_query));
    /* a whole answer leaves nothing to ask alone, whatever waits */
    answers.cut_off = 0;
    assert_null(cp_plan_ask_alone(pool, queries, &answers));
}

/* Whatever a key or id holds stays one parameter value. */
static void keys_cannot_smuggle_parameters(void **state)
{
    cp_view view = view_of(VIEW_URL);
    cp_plan plan = plan_of(&view, NULL, NULL, NULL, 5, 0);
    cp_token start = token_of("\"x&skip=100#\\r\\n\"", "a&endkey=\"z\"\r\n", 0);
    apr_array_header_t *queries = cp_plan_page(pool, &plan, &start);

    assert_string_equal(cp_plan_query_url(pool, plan.index_url,
                                          cp_plan_query(queries, CP_QUERY_FORWARD)),
                        VIEW_URL "?limit=6&reduce=false"
                        "&startkey=%22x%26skip%3d100%23%5cr%5cn%22"
                        "&startkey_docid=a%26endkey%3d%22z%22%0d%0a");
}

/* A log line shows the path and the parameters, never the scheme and
 * host; with hide_keys, keys and ids only by their length. */
static void a_logged_query_hides_keys_when_asked(void **state)
{
    cp_view view = view_of(VIEW_URL);
    cp_plan plan = plan_of(&view, NULL, NULL, "\"zz\"", 5, 0);
    cp_token start = token_of("\"Nirvana\"", "band-7", 0);
    const cp_query *forward = cp_plan_query(cp_plan_page(pool, &plan, &start),
                                            CP_QUERY_FORWARD);

    assert_string_equal(cp_plan_query_loggable(pool, plan.index_url, forward, 0),
                        "/bands/_design/bands/_view/by-name?limit=6&reduce=false"
                        "&startkey=%22Nirvana%22&startkey_docid=band-7&endkey=%22zz%22");
    assert_string_equal(cp_plan_query_loggable(pool, plan.index_url, forward, 1),
                        "/bands/_design/bands/_view/by-name?limit=6&reduce=false"
                        "&startkey=<9 bytes>&startkey_docid=<6 bytes>&endkey=<4 bytes>");
    assert_string_equal(cp_plan_url_path("balancer://couch/db/_all_docs/queries"),
                        "/db/_all_docs/queries");
    assert_string_equal(cp_plan_url_path("http://h:1"), "/");
}

static void a_range_bounds_every_query(void **state)
{
    cp_view view = view_of(VIEW_URL);
    cp_plan plan = plan_of(&view, NULL, "[\"p\",0]", "[\"p\",{}]", 2, 0);
    cp_token start = token_of("[\"p\",7]", "c7", 0);

    /* the range's position: rows before its start, rows after its end */
    assert_string_equal(plan_urls(&plan, NULL),
                        "range-start " VIEW_URL "?limit=0&reduce=false"
                        "&startkey=%5b%22p%22%2c0%5d\n"
                        "range-end " VIEW_URL "?limit=0&reduce=false&descending=true"
                        "&startkey=%5b%22p%22%2c%7b%7d%5d\n"
                        "forward " VIEW_URL "?limit=3&reduce=false&startkey=%5b%22p%22%2c0%5d"
                        "&endkey=%5b%22p%22%2c%7b%7d%5d");
    /* CouchDB may refuse either query (a token beyond the range): a query
     * it never refuses leads */
    assert_string_equal(plan_urls(&plan, &start),
                        "range-start " VIEW_URL "?limit=0&reduce=false"
                        "&startkey=%5b%22p%22%2c0%5d\n"
                        "range-end " VIEW_URL "?limit=0&reduce=false&descending=true"
                        "&startkey=%5b%22p%22%2c%7b%7d%5d\n"
                        "forward " VIEW_URL "?limit=3&reduce=false&startkey=%5b%22p%22%2c7%5d"
                        "&startkey_docid=c7&endkey=%5b%22p%22%2c%7b%7d%5d\n"
                        "backward " VIEW_URL "?limit=6&reduce=false&descending=true"
                        "&startkey=%5b%22p%22%2c7%5d&startkey_docid=c7"
                        "&endkey=%5b%22p%22%2c0%5d");
    /* an open side sends no bound */
    plan = plan_of(&view, NULL, NULL, "9", 2, 0);
    assert_string_equal(plan_urls(&plan, NULL),
                        "range-start " VIEW_URL "?limit=0&reduce=false\n"
                        "range-end " VIEW_URL "?limit=0&reduce=false&descending=true"
                        "&startkey=9\n"
                        "forward " VIEW_URL "?limit=3&reduce=false&endkey=9");
    assert_string_equal(plan_urls(&plan, &start),
                        "range-start " VIEW_URL "?limit=0&reduce=false\n"
                        "range-end " VIEW_URL "?limit=0&reduce=false&descending=true"
                        "&startkey=9\n"
                        "forward " VIEW_URL "?limit=3&reduce=false&startkey=%5b%22p%22%2c7%5d"
                        "&startkey_docid=c7&endkey=9\n"
                        "backward " VIEW_URL "?limit=6&reduce=false&descending=true"
                        "&startkey=%5b%22p%22%2c7%5d&startkey_docid=c7");
    /* open above: only the backward query can be refused; _all_docs
     * never is, and has its probes of the range's position */
    plan = plan_of(&view, NULL, "1", NULL, 2, 0);
    assert_non_null(strstr(plan_urls(&plan, &start), "range-start " VIEW_URL
                           "?limit=0&reduce=false&startkey=1\n"
                           "range-end " VIEW_URL "?limit=0&reduce=false&descending=true\n"
                           "forward "));
    view = view_of(DB_URL "/_all_docs");
    plan = plan_of(&view, NULL, "\"a\"", "\"z\"", 2, 0);
    start = token_of("\"b\"", "b", 0);
    assert_non_null(strstr(plan_urls(&plan, &start),
                           "range-start " DB_URL "/_all_docs?limit=0&startkey=%22a%22\n"
                           "range-end " DB_URL "/_all_docs?limit=0&descending=true"
                           "&startkey=%22z%22\nforward "));
}

/* The GET URLs of a keyset page's queries (cp_plan_keyset_page), one a
 * line, each after its role, "!" after those CouchDB may refuse. */
static const char *keyset_urls(const cp_plan *plan, const cp_token *from, int backward,
                               int limit)
{
    apr_array_header_t *queries = cp_plan_keyset_page(pool, plan, from, backward, limit);
    const char *text = "";
    int i;

    for (i = 0; i < queries->nelts; i++) {
        const cp_query *query = &APR_ARRAY_IDX(queries, i, cp_query);

        text = apr_pstrcat(pool, text, i ? "\n" : "", roles[query->role],
                           query->refusable ? "! " : " ",
                           cp_plan_query_url(pool, plan->index_url, query), NULL);
    }
    return text;
}

/* A numbered _find page read by keyset over its index's view: one query
 * from the token's row, either way, no skip; a key range or a partition
 * adds its probes, which lead. */
static void keyset_pages_read_one_query_from_the_token(void **state)
{
    cp_view view = view_of(VIEW_URL);
    cp_plan plan;
    cp_token from = token_of("[\"g1\"]", "a1", 0);

    view.include_docs = 1;
    plan = plan_of(&view, NULL, NULL, NULL, 5, 0);
    assert_string_equal(keyset_urls(&plan, NULL, 0, 6),
                        "forward " VIEW_URL "?limit=6&reduce=false&include_docs=true");
    assert_string_equal(keyset_urls(&plan, &from, 0, 7),
                        "forward " VIEW_URL "?limit=7&reduce=false&startkey=%5b%22g1%22%5d"
                        "&startkey_docid=a1&include_docs=true");
    assert_string_equal(keyset_urls(&plan, &from, 1, 7),
                        "forward " VIEW_URL "?limit=7&reduce=false&descending=true"
                        "&startkey=%5b%22g1%22%5d&startkey_docid=a1&include_docs=true");
    /* the Last page: from the end, backward */
    assert_string_equal(keyset_urls(&plan, NULL, 1, 6),
                        "forward " VIEW_URL "?limit=6&reduce=false&descending=true"
                        "&include_docs=true");
    /* descending: the other way round */
    view.descending = 1;
    plan = plan_of(&view, NULL, NULL, NULL, 5, 0);
    assert_string_equal(keyset_urls(&plan, &from, 1, 7),
                        "forward " VIEW_URL "?limit=7&reduce=false"
                        "&startkey=%5b%22g1%22%5d&startkey_docid=a1&include_docs=true");
    view.descending = 0;
    /* a key range: the probes lead the query CouchDB may refuse */
    plan = plan_of(&view, NULL, "[\"p\"]", "[\"p\",{}]", 5, 0);
    from = token_of("[\"p\",7]", "c7", 0);
    assert_string_equal(keyset_urls(&plan, &from, 0, 7),
                        "range-start " VIEW_URL "?limit=0&reduce=false&startkey=%5b%22p%22%5d\n"
                        "range-end " VIEW_URL "?limit=0&reduce=false&descending=true"
                        "&startkey=%5b%22p%22%2c%7b%7d%5d\n"
                        "forward! " VIEW_URL "?limit=7&reduce=false&startkey=%5b%22p%22%2c7%5d"
                        "&startkey_docid=c7&endkey=%5b%22p%22%2c%7b%7d%5d&include_docs=true");
    assert_non_null(strstr(keyset_urls(&plan, &from, 1, 7),
                           "forward! " VIEW_URL "?limit=7&reduce=false&descending=true"
                           "&startkey=%5b%22p%22%2c7%5d&startkey_docid=c7"
                           "&endkey=%5b%22p%22%5d&include_docs=true"));
    assert_non_null(strstr(keyset_urls(&plan, NULL, 1, 6),
                           "forward! " VIEW_URL "?limit=6&reduce=false&descending=true"
                           "&startkey=%5b%22p%22%2c%7b%7d%5d&endkey=%5b%22p%22%5d"
                           "&include_docs=true"));
    /* a range open at one end: only its bounded side is probed (from the
     * index's own end, no row lies before a probe: its offset is 0) */
    plan = plan_of(&view, NULL, "[\"p\"]", NULL, 5, 0);
    assert_string_equal(keyset_urls(&plan, NULL, 0, 6),
                        "range-start " VIEW_URL "?limit=0&reduce=false&startkey=%5b%22p%22%5d\n"
                        "forward " VIEW_URL "?limit=6&reduce=false&startkey=%5b%22p%22%5d"
                        "&include_docs=true");
    plan = plan_of(&view, NULL, NULL, "[\"p\"]", 5, 0);
    assert_string_equal(keyset_urls(&plan, NULL, 0, 6),
                        "range-end " VIEW_URL "?limit=0&reduce=false&descending=true"
                        "&startkey=%5b%22p%22%5d\n"
                        "forward " VIEW_URL "?limit=6&reduce=false&endkey=%5b%22p%22%5d"
                        "&include_docs=true");
    /* a partition: in the path, with its probes */
    plan = plan_of(&view, "p1", NULL, NULL, 5, 0);
    assert_string_equal(keyset_urls(&plan, NULL, 0, 6),
                        "range-start " DB_URL "/_partition/p1/_design/bands/_view/by-name"
                        "?limit=0&reduce=false\n"
                        "range-end " DB_URL "/_partition/p1/_design/bands/_view/by-name"
                        "?limit=0&reduce=false&descending=true\n"
                        "forward " DB_URL "/_partition/p1/_design/bands/_view/by-name"
                        "?limit=6&reduce=false&include_docs=true");
}

/* Which queries CouchDB may refuse as a reversed range: those with both
 * startkey and endkey, on a view; never the probes, never _all_docs. */
static const char *refusable_roles(const cp_plan *plan, const cp_token *start)
{
    static const char *const roles[] = { "range-start", "range-end", "forward", "ahead",
                                         "backward" };
    apr_array_header_t *queries = cp_plan_page(pool, plan, start);
    const char *out = "";
    int i;

    for (i = 0; i < queries->nelts; i++) {
        const cp_query *query = &APR_ARRAY_IDX(queries, i, cp_query);

        if (query->refusable) {
            out = apr_pstrcat(pool, out, *out ? " " : "", roles[query->role], NULL);
        }
    }
    return out;
}

static void queries_couchdb_may_refuse_are_marked(void **state)
{
    cp_view view = view_of(VIEW_URL);
    cp_plan plan = plan_of(&view, NULL, "[\"p\",0]", "[\"p\",{}]", 2, 0);
    cp_token start = token_of("[\"p\",7]", "c7", 0);
    cp_token last = { 0 };

    assert_string_equal(refusable_roles(&plan, NULL), "forward");
    assert_string_equal(refusable_roles(&plan, &start), "forward backward");
    last.from = CP_FROM_LAST;
    assert_string_equal(refusable_roles(&plan, &last), "range-end");
    /* open above: the forward query has no endkey */
    plan = plan_of(&view, NULL, "1", NULL, 2, 0);
    assert_string_equal(refusable_roles(&plan, &start), "backward");
    plan = plan_of(&view, NULL, NULL, NULL, 2, 0);
    assert_string_equal(refusable_roles(&plan, &start), "");
    view = view_of(DB_URL "/_all_docs");
    plan = plan_of(&view, NULL, "\"a\"", "\"z\"", 2, 0);
    start = token_of("\"b\"", "b", 0);
    assert_string_equal(refusable_roles(&plan, &start), "");
}

static void descending_swaps_directions_and_bounds(void **state)
{
    cp_view view = view_of(VIEW_URL);
    cp_plan plan;
    cp_token start = token_of("5", "d5", 0);

    view.descending = 1;
    plan = plan_of(&view, NULL, "1", "9", 2, 0);
    assert_string_equal(plan_urls(&plan, NULL),
                        "range-start " VIEW_URL "?limit=0&reduce=false&descending=true"
                        "&startkey=9\n"
                        "range-end " VIEW_URL "?limit=0&reduce=false&startkey=1\n"
                        "forward " VIEW_URL "?limit=3&reduce=false&descending=true&startkey=9"
                        "&endkey=1");
    assert_string_equal(plan_urls(&plan, &start),
                        "range-start " VIEW_URL "?limit=0&reduce=false&descending=true"
                        "&startkey=9\n"
                        "range-end " VIEW_URL "?limit=0&reduce=false&startkey=1\n"
                        "forward " VIEW_URL "?limit=3&reduce=false&descending=true&startkey=5"
                        "&startkey_docid=d5&endkey=1\n"
                        "backward " VIEW_URL "?limit=6&reduce=false&startkey=5"
                        "&startkey_docid=d5&endkey=9");
}

static void grouped_rows_read_backward_from_their_own_group(void **state)
{
    cp_view view = view_of(VIEW_URL);
    cp_plan plan;
    cp_token start = token_of("[2026,11]", NULL, 0);

    view.reduce = 1;
    view.group_level = CP_GROUP_EXACT;
    plan = plan_of(&view, NULL, NULL, NULL, 2, 0);
    assert_string_equal(plan_urls(&plan, &start),
                        "forward " VIEW_URL "?limit=3&reduce=true&group=true"
                        "&startkey=%5b2026%2c11%5d\n"
                        "backward " VIEW_URL "?limit=3&reduce=true&group=true&descending=true"
                        "&startkey=%5b2026%2c11%5d\n"
                        "own-group " VIEW_URL "?limit=1&reduce=true&group=true"
                        "&startkey=%5b2026%2c11%5d&endkey=%5b2026%2c11%5d");
    view.group_level = 2;
    plan = plan_of(&view, NULL, NULL, NULL, 2, 0);
    assert_string_equal(plan_urls(&plan, NULL),
                        "forward " VIEW_URL "?limit=3&reduce=true&group_level=2");
}

/* Grouped rows counted (count_cap): the first and the Last page ask for
 * count_cap + 1 groups of the range too, in the same batch; a later page
 * does not, nor does a map view. */
static void grouped_rows_counted_by_the_first_and_the_last_page(void **state)
{
    cp_view view = view_of(VIEW_URL);
    cp_plan plan;
    cp_token start = token_of("[2026,11]", NULL, 0), last;

    memset(&last, 0, sizeof(last));
    last.from = CP_FROM_LAST;
    view.reduce = 1;
    view.group_level = 2;
    plan = plan_of(&view, NULL, "[2020]", "[2030]", 2, 0);
    plan.count_cap = 1000;
    assert_string_equal(plan_urls(&plan, NULL),
                        "forward " VIEW_URL "?limit=3&reduce=true&group_level=2"
                        "&startkey=%5b2020%5d&endkey=%5b2030%5d\n"
                        "count " VIEW_URL "?limit=1001&reduce=true&group_level=2"
                        "&startkey=%5b2020%5d&endkey=%5b2030%5d");
    assert_null(strstr(plan_urls(&plan, &start), "count "));
    assert_non_null(strstr(plan_urls(&plan, &last), "\ncount " VIEW_URL "?limit=1001&"));
    view.reduce = 0;
    assert_null(strstr(plan_urls(&plan, NULL), "count "));
}

static void documents_only_for_the_page_itself(void **state)
{
    cp_view view = view_of(VIEW_URL);
    cp_plan plan;
    cp_token start = token_of("1", "d1", 0);

    view.include_docs = 1;
    plan = plan_of(&view, NULL, NULL, NULL, 2, 0);
    /* rows read backward only make a link: keys only */
    assert_string_equal(plan_urls(&plan, &start),
                        "forward " VIEW_URL "?limit=3&reduce=false&startkey=1&startkey_docid=d1"
                        "&include_docs=true\n"
                        "backward " VIEW_URL "?limit=6&reduce=false&descending=true&startkey=1"
                        "&startkey_docid=d1");
}

static void all_docs_sends_no_docid_and_no_reduce(void **state)
{
    cp_view view = view_of(DB_URL "/_all_docs");
    cp_plan plan = plan_of(&view, NULL, NULL, NULL, 2, 0);
    cp_token start = token_of("\"b\"", "b", 0);

    assert_string_equal(plan_urls(&plan, &start),
                        "forward " DB_URL "/_all_docs?limit=3&startkey=%22b%22\n"
                        "backward " DB_URL "/_all_docs?limit=6&descending=true&startkey=%22b%22");
}

static void partitions_go_into_the_path(void **state)
{
    cp_view view = view_of(VIEW_URL);
    cp_plan plan = plan_of(&view, "sensor 1/x", NULL, NULL, 2, 0);
    const char *reason;

    assert_string_equal(plan.index_url,
                        DB_URL "/_partition/sensor%201%2fx/_design/bands/_view/by-name");
    /* the partition's position: offsets count the shard's other partitions */
    assert_string_equal(plan_urls(&plan, NULL),
                        "range-start " DB_URL "/_partition/sensor%201%2fx/_design/bands/_view/"
                        "by-name?limit=0&reduce=false\n"
                        "range-end " DB_URL "/_partition/sensor%201%2fx/_design/bands/_view/"
                        "by-name?limit=0&reduce=false&descending=true\n"
                        "forward " DB_URL "/_partition/sensor%201%2fx/_design/bands/_view/by-name"
                        "?limit=3&reduce=false");
    view = view_of(DB_URL "/_all_docs");
    plan = plan_of(&view, "p", NULL, NULL, 2, 0);
    assert_string_equal(plan_urls(&plan, NULL),
                        "range-start " DB_URL "/_partition/p/_all_docs?limit=0\n"
                        "range-end " DB_URL "/_partition/p/_all_docs?limit=0&descending=true\n"
                        "forward " DB_URL "/_partition/p/_all_docs?limit=3");
    assert_non_null(cp_plan_init(pool, &plan, &view, "", NULL, NULL, 2, 0));
    assert_non_null(cp_plan_init(pool, &plan, &view, "_system", NULL, NULL, 2, 0));
    assert_non_null(cp_plan_init(pool, &plan, &view, "a:b", NULL, NULL, 2, 0));
    /* CouchDB answers 400 illegal_partition: the client's mistake, said first */
    assert_string_equal(cp_plan_init(pool, &plan, &view, "p\xff", NULL, NULL, 2, 0),
                        "the partition name is not valid UTF-8");
    assert_null(cp_plan_init(pool, &plan, &view, "caf\xc3\xa9", NULL, NULL, 2, 0));
    view = view_of(DB_URL "/_partition/p/_all_docs");
    reason = cp_plan_init(pool, &plan, &view, "q", NULL, NULL, 2, 0);
    assert_non_null(reason);
    assert_non_null(strstr(reason, "names a partition already"));
}

/* Page links widen the queries; rows only for links never carry documents:
 * with include_docs the pages ahead come from a keys-only query from the
 * token, which does not wait for the forward answer. */
static void page_links_read_several_pages_keys_only(void **state)
{
    cp_view view = view_of(VIEW_URL);
    cp_plan plan;
    cp_token start = token_of("7", "d7", 0);

    cp_plan_init(pool, &plan, &view, NULL, NULL, NULL, 5, 3);
    assert_string_equal(plan_urls(&plan, &start),
                        "forward " VIEW_URL "?limit=16&reduce=false&startkey=7&startkey_docid=d7\n"
                        "backward " VIEW_URL "?limit=16&reduce=false&descending=true&startkey=7"
                        "&startkey_docid=d7&skip=3");
    view.include_docs = 1;
    cp_plan_init(pool, &plan, &view, NULL, NULL, "99", 5, 3);
    assert_string_equal(plan_urls(&plan, &start),
                        "range-start " VIEW_URL "?limit=0&reduce=false\n"
                        "range-end " VIEW_URL "?limit=0&reduce=false&descending=true"
                        "&startkey=99\n"
                        "forward " VIEW_URL "?limit=6&reduce=false&startkey=7&startkey_docid=d7"
                        "&endkey=99&include_docs=true\n"
                        "ahead " VIEW_URL "?limit=16&reduce=false&startkey=7&startkey_docid=d7"
                        "&endkey=99\n"
                        "backward " VIEW_URL "?limit=16&reduce=false&descending=true&startkey=7"
                        "&startkey_docid=d7&skip=3");
    assert_string_equal(plan_urls(&plan, NULL),
                        "range-start " VIEW_URL "?limit=0&reduce=false\n"
                        "range-end " VIEW_URL "?limit=0&reduce=false&descending=true"
                        "&startkey=99\n"
                        "forward " VIEW_URL "?limit=6&reduce=false&endkey=99&include_docs=true\n"
                        "ahead " VIEW_URL "?limit=16&reduce=false&endkey=99");
    /* one page either side: the forward query's extra row is the next page */
    cp_plan_init(pool, &plan, &view, NULL, NULL, NULL, 5, 1);
    assert_null(strstr(plan_urls(&plan, &start), "ahead"));
}

/* Read descending, a group a level cut short starts after all it groups. */
static void descending_groups_start_after_their_keys(void **state)
{
    cp_view view = view_of(VIEW_URL);
    cp_plan plan;
    cp_token start = token_of("[2023]", NULL, 0);

    view.reduce = 1;
    view.descending = 1;
    view.group_level = 1;
    plan = plan_of(&view, NULL, NULL, NULL, 1, 0);
    /* backward, ascending: from the group key itself */
    assert_string_equal(plan_urls(&plan, &start),
                        "forward " VIEW_URL "?limit=2&reduce=true&group_level=1&descending=true"
                        "&startkey=%5b2023%2c%7b%7d%5d\n"
                        "backward " VIEW_URL "?limit=2&reduce=true&group_level=1"
                        "&startkey=%5b2023%5d\n"
                        "own-group " VIEW_URL "?limit=1&reduce=true&group_level=1"
                        "&startkey=%5b2023%5d&endkey=%5b2023%2c%7b%7d%5d");
    /* a key shorter than the level is a whole key */
    view.group_level = 2;
    plan = plan_of(&view, NULL, NULL, NULL, 1, 0);
    assert_non_null(strstr(plan_urls(&plan, &start), "&startkey=%5b2023%5d\n"));
    /* ascending needs nothing */
    view.descending = 0;
    view.group_level = 1;
    plan = plan_of(&view, NULL, NULL, NULL, 1, 0);
    assert_non_null(strstr(plan_urls(&plan, &start), "&startkey=%5b2023%5d\n"));
}

/* Bounds are the operator's: checked apart from any request. */
static void range_bounds_must_be_json_and_ids_for_all_docs(void **state)
{
    cp_view view = view_of(VIEW_URL);
    cp_view all_docs = view_of(DB_URL "/_all_docs");
    cp_plan plan;
    const char *reason;

    assert_null(cp_plan_check_range(pool, &view, NULL, NULL));
    assert_null(cp_plan_check_range(pool, &view, "[1,\"a\"]", "{}"));
    assert_null(cp_plan_check_range(pool, &view, "null", NULL));
    reason = cp_plan_check_range(pool, &view, "[1", "2");
    assert_non_null(reason);
    assert_non_null(strstr(reason, "LOW '[1' is not JSON"));
    reason = cp_plan_check_range(pool, &view, "1", "two");
    assert_non_null(reason);
    assert_non_null(strstr(reason, "HIGH 'two' is not JSON"));
    assert_null(cp_plan_check_range(pool, &all_docs, "\"b\"", NULL));
    assert_null(cp_plan_check_range(pool, &all_docs, NULL, "\"y\""));
    reason = cp_plan_check_range(pool, &all_docs, "\"b\"", "5");
    assert_non_null(reason);
    assert_non_null(strstr(reason, "HIGH '5' is not a document id"));
    assert_non_null(cp_plan_check_range(pool, &all_docs, "[\"b\"]", NULL));
    /* a plan reads its bounds by the same rules */
    reason = cp_plan_init(pool, &plan, &all_docs, NULL, "\"b\"", "5", 3, 0);
    assert_non_null(reason);
    assert_non_null(strstr(reason, "HIGH '5' is not a document id"));
    reason = cp_plan_init(pool, &plan, &view, NULL, "[1", NULL, 3, 0);
    assert_non_null(reason);
    assert_non_null(strstr(reason, "LOW '[1' is not JSON"));
}

/* Integers wider than 64 bits travel to CouchDB digit for digit, as
 * tokens and as range bounds, in URLs and in batch bodies; as ids of
 * _all_docs they are refused like every other number. */
static void wide_integers_reach_couchdb_digit_for_digit(void **state)
{
    cp_view view = view_of(VIEW_URL);
    cp_view all_docs = view_of(DB_URL "/_all_docs");
    cp_plan plan = plan_of(&view, NULL, "-18446744073709551617", "[18446744073709551616]", 2, 0);
    cp_token start;
    const char *reason;

    assert_null(cp_token_decode(pool, "[18446744073709551615,\"b\"]", CP_TOKEN_VIEW_ROWS(1),
                                &start));
    assert_string_equal(plan_urls(&plan, &start),
                        "range-start " VIEW_URL "?limit=0&reduce=false"
                        "&startkey=-18446744073709551617\n"
                        "range-end " VIEW_URL "?limit=0&reduce=false&descending=true"
                        "&startkey=%5b18446744073709551616%5d\n"
                        "forward " VIEW_URL "?limit=3&reduce=false&startkey=18446744073709551615"
                        "&startkey_docid=b&endkey=%5b18446744073709551616%5d\n"
                        "backward " VIEW_URL "?limit=6&reduce=false&descending=true"
                        "&startkey=18446744073709551615&startkey_docid=b"
                        "&endkey=-18446744073709551617");
    assert_string_equal(cp_plan_batch_body(pool, cp_plan_waiting(pool, cp_plan_page(pool, &plan,
                                                                                    &start))),
                        "{\"queries\":["
                        "{\"limit\":0,\"reduce\":false,\"startkey\":-18446744073709551617},"
                        "{\"limit\":0,\"reduce\":false,\"descending\":true,"
                        "\"startkey\":[18446744073709551616]},"
                        "{\"limit\":3,\"reduce\":false,\"startkey\":18446744073709551615,"
                        "\"startkey_docid\":\"b\",\"endkey\":[18446744073709551616]},"
                        "{\"limit\":6,\"reduce\":false,\"descending\":true,"
                        "\"startkey\":18446744073709551615,\"startkey_docid\":\"b\","
                        "\"endkey\":-18446744073709551617}]}");
    reason = cp_plan_check_range(pool, &all_docs, "18446744073709551616", NULL);
    assert_non_null(reason);
    assert_non_null(strstr(reason, "is not a document id"));
}

/* CouchDB makes no reversed-range check on _all_docs: ids are checked here,
 * by bytes as CouchDB collates them. */
static void all_docs_starts_are_checked_against_the_range(void **state)
{
    cp_view view = view_of(DB_URL "/_all_docs");
    cp_plan plan = plan_of(&view, NULL, "\"b\"", "\"y\"", 3, 0);
    cp_token start = { .from = CP_FROM_ROW };
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
    plan = plan_of(&view, NULL, "\"b\"", "\"y\"", 3, 0);
    start.key = parse("\"a\"");
    assert_null(cp_plan_check_start(pool, &plan, &start));
}

/* A token inside one document's rows: forward skips to it; backward reads
 * the entry up to the token, and the rows behind. */
static void tokens_inside_one_documents_rows(void **state)
{
    cp_view view = view_of(VIEW_URL);
    cp_plan plan = plan_of(&view, NULL, NULL, NULL, 2, 0);
    cp_token start = token_of("\"x\"", "d1", 2);

    assert_string_equal(plan_urls(&plan, &start),
                        "forward " VIEW_URL "?limit=3&reduce=false&startkey=%22x%22"
                        "&startkey_docid=d1&skip=2\n"
                        "backward " VIEW_URL "?limit=8&reduce=false&descending=true"
                        "&startkey=%22x%22&startkey_docid=d1");
}

static const cp_answer *rows_text(const char *rows)
{
    return answer_text(apr_pstrcat(pool, "{\"total_rows\":9,\"offset\":0,\"rows\":[", rows,
                                   "]}", NULL));
}

/* What the handler does once a page's answers are in: the page assembler
 * names the query to ask again wider, if any, and the plan widens it. */
static int widen(const cp_plan *plan, const cp_token *start, apr_array_header_t *queries)
{
    cp_page_answers in;
    cp_page page;

    cp_page_answers_init(&in, plan, queries, start, "the token", NULL);
    return cp_plan_widen(pool, plan, start, cp_page_assemble(pool, &in, &page));
}

/* A row {"id": ID, "key": KEY, "value": N}. */
static const char *row_of(const char *id, const char *key, int value)
{
    return apr_psprintf(pool, "{\"id\":\"%s\",\"key\":\"%s\",\"value\":%d}", id, key, value);
}

/* The token's row ["r", "d5"], then n - 1 rows of one entry of d4. */
static const cp_answer *rows_of_one_entry(int n)
{
    apr_array_header_t *rows = apr_array_make(pool, n, sizeof(const char *));
    int i;

    APR_ARRAY_PUSH(rows, const char *) = row_of("d5", "r", 0);
    for (i = 1; i < n; i++) {
        APR_ARRAY_PUSH(rows, const char *) = row_of("d4", "q", i);
    }
    return rows_text(apr_array_pstrcat(pool, rows, ','));
}

/* The token's row ["r", "d5"], then d4's two rows, d3, d2, d1 and d0 of
 * one row each, as far as n rows in all: entries that are short. */
static const cp_answer *rows_of_short_entries(int n)
{
    apr_array_header_t *rows = apr_array_make(pool, n, sizeof(const char *));
    int i;

    APR_ARRAY_PUSH(rows, const char *) = row_of("d5", "r", 0);
    for (i = 1; i < n; i++) {
        APR_ARRAY_PUSH(rows, const char *) = row_of(apr_psprintf(pool, "d%d", i <= 2 ? 4 : 6 - i),
                                                    "q", i == 2);
    }
    return rows_text(apr_array_pstrcat(pool, rows, ','));
}

/* The query of role answered by one entry that fills its limit: the page
 * assembler names it, and the plan widens it the first time, to limit × 8
 * + 2 rows, its answer dropped: the one query that waits, sent as body. */
static cp_query *assert_widened_once(const cp_plan *plan, const cp_token *start,
                                     apr_array_header_t *queries, cp_query_role role,
                                     const char *body)
{
    cp_query *query = cp_plan_query(queries, role);
    int limit = query->limit;

    query->answer = rows_of_one_entry(limit);
    assert_true(widen(plan, start, queries));
    query = cp_plan_query(queries, role);
    assert_null(query->answer);
    assert_int_equal(query->widened, 1);
    assert_int_equal(query->limit, limit * 8 + 2);
    assert_int_equal(cp_plan_waiting(pool, queries)->nelts, 1);
    assert_string_equal(cp_plan_batch_body(pool, cp_plan_waiting(pool, queries)), body);
    return query;
}

/* While its answer is one entry that fills its limit, the query is widened
 * times more times, never beyond cp_plan_max_reach, and then no more. */
static void assert_widens(const cp_plan *plan, const cp_token *start,
                          apr_array_header_t *queries, cp_query *query, int times)
{
    int i, from = query->widened;

    for (i = 1; i <= times; i++) {
        query->answer = rows_of_one_entry(query->limit);
        assert_true(widen(plan, start, queries));
        assert_int_equal(query->widened, from + i);
        assert_true(query->limit <= cp_plan_max_reach(plan));
    }
    query->answer = rows_of_one_entry(query->limit);
    assert_false(widen(plan, start, queries));
}

/* The backward answer is asked again, wider, only when its limit cut an
 * entry where the pages behind need it; at most CP_PLAN_MAX_WIDENINGS times. */
static void a_cut_entry_behind_widens_the_backward_query(void **state)
{
    cp_view view = view_of(VIEW_URL);
    cp_plan plan = plan_of(&view, NULL, NULL, NULL, 2, 0);
    cp_token start = token_of("\"r\"", "d5", 0);
    apr_array_header_t *queries = cp_plan_page(pool, &plan, &start);
    cp_query *forward = cp_plan_query(queries, CP_QUERY_FORWARD);
    cp_query *backward = cp_plan_query(queries, CP_QUERY_BACKWARD);

    assert_int_equal(backward->limit, 6);
    assert_int_equal(cp_plan_skip(backward), 0);
    forward->answer = rows_text(row_of("d5", "r", 0));
    assert_null(cp_plan_query(queries, CP_QUERY_RANGE_END));
    /* the token's row, d4's two rows, d3, d2, then d1 cut: complete */
    backward->answer = rows_of_short_entries(6);
    assert_false(widen(&plan, &start, queries));
    /* d4 fills the rest: it may go on, its last rows nearest the page */
    backward = assert_widened_once(&plan, &start, queries, CP_QUERY_BACKWARD,
                                   "{\"queries\":[{\"limit\":50,\"reduce\":false,"
                                   "\"descending\":true,\"startkey\":\"r\","
                                   "\"startkey_docid\":\"d5\"}]}");
    /* an answer shorter than its limit reached the start: complete */
    backward->answer = rows_of_short_entries(2);
    assert_false(widen(&plan, &start, queries));
    /* growing to cp_plan_max_reach and no further: an entry longer than
     * max_emits is not read whole (2 × 2 + 2 × 64 + 3 = 135 rows) */
    assert_int_equal(cp_plan_max_reach(&plan), 135);
    assert_widens(&plan, &start, queries, backward, 1);
    assert_int_equal(backward->limit, 135);
    /* never more than CP_PLAN_MAX_WIDENINGS rounds, where the bound is wider */
    view.max_emits = CP_TOKEN_MAX_EMITS - 1;
    plan = plan_of(&view, NULL, NULL, NULL, 2, 0);
    queries = cp_plan_page(pool, &plan, &start);
    cp_plan_query(queries, CP_QUERY_FORWARD)->answer = rows_text(row_of("d5", "r", 0));
    assert_widens(&plan, &start, queries, cp_plan_query(queries, CP_QUERY_BACKWARD),
                  CP_PLAN_MAX_WIDENINGS);
}

/* The token of the previous page, as the page assembler finds it. */
static const char *prev_of(const cp_plan *plan, const apr_array_header_t *queries,
                           const cp_token *start)
{
    cp_page_answers in;
    cp_page page;

    cp_page_answers_init(&in, plan, queries, start, "token", NULL);
    cp_page_assemble(pool, &in, &page);
    return page.prev ? page.prev : "(none)";
}

/* With pages of 4 the backward query passes over 2 rows: a document that
 * emits its key twice where the previous page starts is placed in one
 * round; what the skip leaves unknown takes a second round, without skip. */
static void rows_passed_over_are_counted(void **state)
{
    cp_view view = view_of(VIEW_URL);
    cp_plan plan = plan_of(&view, NULL, NULL, NULL, 4, 0);
    cp_token start = token_of("\"r\"", "d5", 0);
    const char *r = row_of("d5", "r", 0);
    apr_array_header_t *queries = cp_plan_page(pool, &plan, &start);
    cp_query *backward = cp_plan_query(queries, CP_QUERY_BACKWARD);

    assert_int_equal(cp_plan_skip(backward), 2);
    assert_int_equal(backward->limit, 4 + 1 + CP_PLAN_BACKWARD_SLACK - 2);
    cp_plan_query(queries, CP_QUERY_FORWARD)->answer = rows_text(r);
    /* passed over: r and d6; then d4, d3's two rows (the previous page
     * starts at d3#0, 4 rows behind), d2, d1, d0 */
    backward->answer = rows_text(apr_pstrcat(pool, row_of("d4", "q", 0), ",",
        row_of("d3", "q", 0), ",", row_of("d3", "q", 1), ",", row_of("d2", "q", 0), ",",
        row_of("d1", "q", 0), ",", row_of("d0", "q", 0), NULL));
    assert_false(widen(&plan, &start, queries));
    assert_string_equal(prev_of(&plan, queries, &start), "[\"q\",\"d3\"]");
    /* d3's three rows begin among those passed over: where d3 begins, and
     * so the previous page's start, is not known */
    backward->answer = rows_text(apr_pstrcat(pool, row_of("d3", "q", 0), ",",
        row_of("d3", "q", 1), ",", row_of("d3", "q", 2), ",", row_of("d2", "q", 0), ",",
        row_of("d1", "q", 0), ",", row_of("d0", "q", 0), NULL));
    assert_true(widen(&plan, &start, queries));
    assert_int_equal(cp_plan_skip(backward), 0);
    assert_int_equal(backward->limit, (6 + 2) * 8 + 4);
    /* asked without skip: r, d6, then d3's rows, nearest first d3#2 d3#1
     * d3#0: the previous page starts at d3#0, 4 rows back */
    backward->answer = rows_text(apr_pstrcat(pool, r, ",", row_of("d6", "q", 0), ",",
        row_of("d3", "q", 0), ",", row_of("d3", "q", 1), ",", row_of("d3", "q", 2), ",",
        row_of("d2", "q", 0), NULL));
    assert_false(widen(&plan, &start, queries));
    assert_string_equal(prev_of(&plan, queries, &start), "[\"q\",\"d3\"]");

    /* fewer rows behind the token than the skip passes over: how many is
     * not known (the module's own links lead to the first page without a
     * token, see cp_page.prev_is_first) */
    queries = cp_plan_page(pool, &plan, &start);
    cp_plan_query(queries, CP_QUERY_FORWARD)->answer = rows_text(r);
    backward = cp_plan_query(queries, CP_QUERY_BACKWARD);
    backward->answer = rows_text("");
    assert_true(widen(&plan, &start, queries));
    backward->answer = rows_text(apr_pstrcat(pool, r, ",", row_of("d4", "q", 0), NULL));
    assert_false(widen(&plan, &start, queries));
    assert_string_equal(prev_of(&plan, queries, &start), "[\"q\",\"d4\"]");

    /* a token inside its document's rows, r#1 of r#0 r#1: the forward
     * answer shows the entry ends after r#1, so r#0 is passed over but
     * counted, and the previous page starts 4 rows back, at d2 */
    start = token_of("\"r\"", "d5", 1);
    queries = cp_plan_page(pool, &plan, &start);
    backward = cp_plan_query(queries, CP_QUERY_BACKWARD);
    assert_int_equal(cp_plan_skip(backward), 2);
    cp_plan_query(queries, CP_QUERY_FORWARD)->answer =
        rows_text(apr_pstrcat(pool, row_of("d5", "r", 1), ",", row_of("d9", "s", 0), NULL));
    backward->answer = rows_text(apr_pstrcat(pool, row_of("d4", "q", 0), ",",
        row_of("d3", "q", 0), ",", row_of("d2", "q", 0), ",", row_of("d1", "q", 0), NULL));
    assert_false(widen(&plan, &start, queries));
    assert_string_equal(prev_of(&plan, queries, &start), "[\"q\",\"d2\"]");
    /* the forward answer all the token's entry: its size is not known */
    queries = cp_plan_page(pool, &plan, &start);
    cp_plan_query(queries, CP_QUERY_FORWARD)->answer = rows_text(apr_pstrcat(pool,
        row_of("d5", "r", 1), ",", row_of("d5", "r", 2), ",", row_of("d5", "r", 3), ",",
        row_of("d5", "r", 4), ",", row_of("d5", "r", 5), NULL));
    backward = cp_plan_query(queries, CP_QUERY_BACKWARD);
    backward->answer = rows_text(row_of("d5", "r", 2));
    assert_true(widen(&plan, &start, queries));
}

/* The last page (CP_TOKEN_LAST): one query back from the range's end,
 * bounded by its start, with a page, the pages behind and slack; led by the
 * range start probe where a position needs it or CouchDB may refuse the
 * tail. No end probe, no forward query. */
static void the_last_page_reads_back_from_the_end(void **state)
{
    cp_view view = view_of(VIEW_URL);
    cp_plan plan = plan_of(&view, NULL, NULL, NULL, 5, 0);
    cp_token last = { .from = CP_FROM_LAST };

    /* the whole view: total_rows is the location's */
    assert_string_equal(plan_urls(&plan, &last),
                        "range-end " VIEW_URL "?limit=13&reduce=false&descending=true");
    /* a range: the start probe for the rows before it, the tail to its start */
    plan = plan_of(&view, NULL, "[\"p\",0]", "[\"p\",{}]", 2, 0);
    assert_string_equal(plan_urls(&plan, &last),
                        "range-start " VIEW_URL "?limit=0&reduce=false"
                        "&startkey=%5b%22p%22%2c0%5d\n"
                        "range-end " VIEW_URL "?limit=7&reduce=false&descending=true"
                        "&startkey=%5b%22p%22%2c%7b%7d%5d&endkey=%5b%22p%22%2c0%5d");
    plan = plan_of(&view, NULL, "1", NULL, 2, 0);
    assert_string_equal(plan_urls(&plan, &last),
                        "range-start " VIEW_URL "?limit=0&reduce=false&startkey=1\n"
                        "range-end " VIEW_URL "?limit=7&reduce=false&descending=true"
                        "&endkey=1");
    plan = plan_of(&view, NULL, NULL, "9", 2, 0);
    assert_string_equal(plan_urls(&plan, &last),
                        "range-start " VIEW_URL "?limit=0&reduce=false\n"
                        "range-end " VIEW_URL "?limit=7&reduce=false&descending=true"
                        "&startkey=9");
    /* descending: the tail reads ascending from the low bound */
    view.descending = 1;
    plan = plan_of(&view, NULL, "1", "9", 2, 0);
    assert_string_equal(plan_urls(&plan, &last),
                        "range-start " VIEW_URL "?limit=0&reduce=false&descending=true"
                        "&startkey=9\n"
                        "range-end " VIEW_URL "?limit=7&reduce=false&startkey=1&endkey=9");
    plan = plan_of(&view, NULL, NULL, NULL, 2, 0);
    assert_string_equal(plan_urls(&plan, &last),
                        "range-end " VIEW_URL "?limit=7&reduce=false");
    /* the items carry documents: so does the tail, whose rows are the page's */
    view.descending = 0;
    view.include_docs = 1;
    plan = plan_of(&view, NULL, NULL, NULL, 2, 0);
    assert_string_equal(plan_urls(&plan, &last),
                        "range-end " VIEW_URL "?limit=7&reduce=false&descending=true"
                        "&include_docs=true");
    /* page links: the pages behind are in the tail too */
    view.include_docs = 0;
    cp_plan_init(pool, &plan, &view, NULL, NULL, NULL, 5, 3);
    assert_string_equal(plan_urls(&plan, &last),
                        "range-end " VIEW_URL "?limit=23&reduce=false&descending=true");
}

static void the_last_page_of_all_docs_partitions_and_groups(void **state)
{
    cp_view view = view_of(DB_URL "/_all_docs");
    cp_plan plan = plan_of(&view, NULL, NULL, NULL, 2, 0);
    cp_token last = { .from = CP_FROM_LAST };

    assert_string_equal(plan_urls(&plan, &last),
                        "range-end " DB_URL "/_all_docs?limit=7&descending=true");
    /* CouchDB never refuses _all_docs a reversed range: the probe is for
     * the position only; ids are checked against the range, "last" is none */
    plan = plan_of(&view, NULL, "\"a\"", "\"z\"", 2, 0);
    assert_null(cp_plan_check_start(pool, &plan, &last));
    assert_string_equal(plan_urls(&plan, &last),
                        "range-start " DB_URL "/_all_docs?limit=0&startkey=%22a%22\n"
                        "range-end " DB_URL "/_all_docs?limit=7&descending=true"
                        "&startkey=%22z%22&endkey=%22a%22");
    plan = plan_of(&view, "p", NULL, NULL, 2, 0);
    assert_string_equal(plan_urls(&plan, &last),
                        "range-start " DB_URL "/_partition/p/_all_docs?limit=0\n"
                        "range-end " DB_URL "/_partition/p/_all_docs?limit=7&descending=true");
    view = view_of(VIEW_URL);
    plan = plan_of(&view, "p", NULL, NULL, 2, 0);
    assert_string_equal(plan_urls(&plan, &last),
                        "range-start " DB_URL "/_partition/p/_design/bands/_view/by-name"
                        "?limit=0&reduce=false\n"
                        "range-end " DB_URL "/_partition/p/_design/bands/_view/by-name"
                        "?limit=7&reduce=false&descending=true");
    /* grouped rows have no position: the last groups, one row of slack (the
     * group a full answer may end in); a probe only where CouchDB may refuse */
    view.reduce = 1;
    view.group_level = CP_GROUP_EXACT;
    plan = plan_of(&view, NULL, NULL, NULL, 2, 0);
    assert_string_equal(plan_urls(&plan, &last),
                        "range-end " VIEW_URL "?limit=5&reduce=true&group=true&descending=true");
    plan = plan_of(&view, "p", "1", NULL, 2, 0);
    assert_string_equal(plan_urls(&plan, &last),
                        "range-end " DB_URL "/_partition/p/_design/bands/_view/by-name"
                        "?limit=5&reduce=true&group=true&descending=true&endkey=1");
    view.group_level = 1;
    plan = plan_of(&view, NULL, "[1]", "[9]", 2, 0);
    assert_string_equal(plan_urls(&plan, &last),
                        "range-start " VIEW_URL "?limit=0&reduce=true&group_level=1"
                        "&startkey=%5b1%5d\n"
                        "range-end " VIEW_URL "?limit=5&reduce=true&group_level=1"
                        "&descending=true&startkey=%5b9%5d&endkey=%5b1%5d");
}

/* The tail is asked again, wider, only when the page or the pages behind
 * reach into an entry its limit cut; at most CP_PLAN_MAX_WIDENINGS times. */
static void a_cut_entry_in_the_tail_widens_it(void **state)
{
    cp_view view = view_of(VIEW_URL);
    cp_plan plan = plan_of(&view, NULL, "\"a\"", "\"z\"", 2, 0);
    cp_token last = { .from = CP_FROM_LAST };
    apr_array_header_t *queries = cp_plan_page(pool, &plan, &last);
    cp_query *range_start = cp_plan_query(queries, CP_QUERY_RANGE_START);
    cp_query *tail = cp_plan_query(queries, CP_QUERY_RANGE_END);

    assert_int_equal(queries->nelts, 2);
    assert_int_equal(tail->limit, 7);
    range_start->answer = rows_text("");
    /* d5, d4's two rows, d3, d2, d1, then d0 cut: 6 rows known, a page and
     * the page behind */
    tail->answer = rows_of_short_entries(7);
    assert_false(widen(&plan, &last, queries));
    /* d4 fills the rest: where its rows lie in their entry is not known */
    tail = assert_widened_once(&plan, &last, queries, CP_QUERY_RANGE_END,
                               "{\"queries\":[{\"limit\":58,\"reduce\":false,"
                               "\"descending\":true,\"startkey\":\"z\",\"endkey\":\"a\"}]}");
    assert_non_null(range_start->answer);
    /* an answer shorter than its limit reached the range's start: complete */
    tail->answer = rows_of_one_entry(6);
    assert_false(widen(&plan, &last, queries));
    /* growing to cp_plan_max_reach and no further */
    assert_widens(&plan, &last, queries, tail, 1);
    assert_int_equal(tail->limit, cp_plan_max_reach(&plan));
    /* never more than CP_PLAN_MAX_WIDENINGS rounds, where the bound is wider */
    view.max_emits = CP_TOKEN_MAX_EMITS - 1;
    plan = plan_of(&view, NULL, "\"a\"", "\"z\"", 2, 0);
    queries = cp_plan_page(pool, &plan, &last);
    cp_plan_query(queries, CP_QUERY_RANGE_START)->answer = rows_text("");
    assert_widens(&plan, &last, queries, cp_plan_query(queries, CP_QUERY_RANGE_END),
                  CP_PLAN_MAX_WIDENINGS);
}

/* One combination of a location's options and a page. */
typedef struct {
    int all_docs, reduce, group_level, include_docs, descending, range, links, index;
    const char *partition;
    int later;
} combination;

static const char *describe(const combination *c)
{
    return apr_psprintf(pool, "%s reduce=%d/%d docs=%d desc=%d range=%d part=%s links=%d "
                        "%s page (index %d)", c->all_docs ? "_all_docs" : "view", c->reduce, c->group_level, c->include_docs, c->descending, c->range,
                        c->partition ? c->partition : "-", c->links,
                        c->later ? "later" : "first", c->index);
}

/* The parameter's value must be want (NULL: absent), whose reference this
 * takes. */
static void expect_param(const combination *c, const cp_query *query, const char *name,
                         json_t *want)
{
    const json_t *got = json_object_get(query->params, name);

    cp_json_pool_own(pool, want);
    if (want ? !cp_json_identical(got, want) : got != NULL) {
        fail_msg("%s, query %d: %s is %s, want %s", describe(c), query->role, name,
                 got ? cp_json_text(pool, got) : "absent",
                 want ? cp_json_text(pool, want) : "absent");
    }
}

/* The GET URL holds exactly the parameters, in order, each value encoded:
 * document ids raw, every other value as JSON. */
static void expect_url_matches_params(const combination *c, const cp_plan *plan,
                                      const cp_query *query)
{
    const char *url = cp_plan_query_url(pool, plan->index_url, query);
    size_t base = strlen(plan->index_url);
    char *pairs, *pair, *last;
    void *iter = json_object_iter(query->params);

    if (strncmp(url, plan->index_url, base) || url[base] != '?') {
        fail_msg("%s: the URL %s is not under %s", describe(c), url, plan->index_url);
    }
    pairs = apr_pstrdup(pool, url + base + 1);
    for (pair = apr_strtok(pairs, "&", &last); pair; pair = apr_strtok(NULL, "&", &last)) {
        char *eq = strchr(pair, '=');
        const char *name, *value;
        const json_t *want;

        assert_non_null(eq);
        *eq = '\0';
        assert_non_null(iter);
        name = json_object_iter_key(iter);
        want = json_object_iter_value(iter);
        value = apr_punescape_url(pool, eq + 1, NULL, NULL, 0);
        assert_string_equal(pair, name);
        if (strstr(name, "_docid")) {
            assert_string_equal(value, json_string_value(want));
        }
        else if (!cp_json_identical(parse(value), want)) {
            fail_msg("%s: %s=%s in the URL, %s in the body", describe(c), name, value,
                     cp_json_text(pool, want));
        }
        iter = json_object_iter_next(query->params, iter);
    }
    assert_null(iter);
}

static void check_combination(const combination *c)
{
    const char *url = c->all_docs ? DB_URL "/_all_docs" : VIEW_URL;
    const char *low = c->range & 1 ? (c->all_docs ? "\"a\"" : "[\"a\"]") : NULL;
    const char *high = c->range & 2 ? (c->all_docs ? "\"z\"" : "[\"z\",{}]") : NULL;
    cp_view view = view_of(url);
    cp_plan plan;
    cp_token start;
    apr_array_header_t *queries;
    int docids = !c->reduce, pages = c->links > 1 ? c->links : 1, keys_apart, guarded, i;
    /* map rows have offsets: a key range's or a partition's end is probed
     * on every page; over the whole index total_rows is the location's */
    int probed = !c->reduce && (c->range || c->partition);
    const json_t *first_bound, *last_bound, *bound;
    json_t *body;

    view.reduce = c->reduce;
    view.group_level = c->group_level;
    view.include_docs = c->include_docs;
    view.descending = c->descending;
    if (cp_plan_init(pool, &plan, &view, c->partition, low, high, 5, c->links)) {
        fail_msg("%s: refused", describe(c));
    }
    if (c->all_docs) {
        start = token_of("\"doc-7\"", "doc-7", 0);
    }
    else {
        start = token_of(c->reduce ? "[2026,11]" : "[\"k\",1]", c->reduce ? NULL : "d7",
                         c->index);
    }
    queries = cp_plan_page(pool, &plan, c->later ? &start : NULL);
    keys_apart = c->include_docs && c->links > 1;
    first_bound = c->descending ? plan.high_key : plan.low_key;
    last_bound = c->descending ? plan.low_key : plan.high_key;
    /* several queries, of which CouchDB may refuse one (a view query with
     * both startkey and endkey): one it never refuses leads */
    guarded = (c->later || keys_apart) && !c->all_docs
              && ((last_bound && (c->later || first_bound)) || (c->later && first_bound));
    /* ... and it probes the position of a key range or a partition */
    guarded |= probed && (c->range || c->partition);
    /* grouped rows from a token: the own group probe comes last */
    assert_int_equal(queries->nelts, guarded + probed + 1 + keys_apart + c->later
                                     + (c->later && c->reduce));
    assert_int_equal(cp_plan_waiting(pool, queries)->nelts, queries->nelts);
    assert_string_equal(plan.index_url,
                        c->partition ? apr_pstrcat(pool, DB_URL "/_partition/", c->partition,
                                                   view.index_path, NULL) : url);

    for (i = 0; i < queries->nelts; i++) {
        const cp_query *query = &APR_ARRAY_IDX(queries, i, cp_query);
        int at = i - guarded - probed;

        if (c->later && c->reduce && i == queries->nelts - 1) {
            json_t *high = json_copy((json_t *)start.key);

            if (c->group_level == 2) {
                json_array_append_new(high, json_object());
            }
            assert_int_equal(query->role, CP_QUERY_OWN_GROUP);
            assert_string_equal(cp_json_text(pool, query->params),
                                apr_psprintf(pool, "{\"limit\":1,\"reduce\":true,%s,"
                                             "\"startkey\":[2026,11],\"endkey\":%s}",
                                             c->group_level == 2 ? "\"group_level\":2"
                                                                 : "\"group\":true",
                                             cp_json_text(pool, high)));
            json_decref(high);
            continue;
        }
        cp_query_role role = i < guarded ? CP_QUERY_RANGE_START
                           : at < 0 ? CP_QUERY_RANGE_END
                           : at == 0 ? CP_QUERY_FORWARD
                           : at == 1 && keys_apart ? CP_QUERY_AHEAD : CP_QUERY_BACKWARD;
        int end_probe = role == CP_QUERY_RANGE_END;
        int backward = role == CP_QUERY_BACKWARD || end_probe;
        int guard = role == CP_QUERY_RANGE_START || end_probe;
        int reads_descending = backward ? !c->descending : c->descending;
        int limit = role == CP_QUERY_RANGE_START ? 0
                  : end_probe ? 0
                  : role == CP_QUERY_FORWARD && keys_apart ? 5 + 1
                  : role == CP_QUERY_BACKWARD && docids
                  ? pages * 5 + c->index + 1 + CP_PLAN_BACKWARD_SLACK - (5 - 2)
                  : backward ? pages * 5 + 1
                  : pages * 5 + 1;
        size_t params = 1;
        int skip;
        json_t *key = NULL;

        if (query->role != role) {
            fail_msg("%s: query %d is for %d, want %d", describe(c), i, query->role, role);
        }
        assert_int_equal(query->limit, limit);
        assert_null(query->answer);
        expect_param(c, query, "limit", json_integer(limit));
        if (c->all_docs) {
            expect_param(c, query, "reduce", NULL);
        }
        else {
            expect_param(c, query, "reduce", c->reduce ? json_true() : json_false());
            params++;
        }
        expect_param(c, query, "group", c->reduce && c->group_level == CP_GROUP_EXACT
                                        ? json_true() : NULL);
        expect_param(c, query, "group_level", c->reduce && c->group_level > 0
                                              ? json_integer(c->group_level) : NULL);
        params += c->reduce;
        expect_param(c, query, "descending", reads_descending ? json_true() : NULL);
        params += reads_descending;
        expect_param(c, query, "include_docs",
                     role == CP_QUERY_FORWARD && c->include_docs ? json_true() : NULL);
        params += role == CP_QUERY_FORWARD && c->include_docs;
        /* forward, a token inside one document's rows skips, by its index;
         * backward, map rows pass over all but the last two of a page's rows */
        skip = role == CP_QUERY_BACKWARD ? (docids ? 5 - 2 : 0)
             : c->later && !backward && !guard ? c->index : 0;
        expect_param(c, query, "skip", skip > 0 ? json_integer(skip) : NULL);
        params += skip > 0;
        if (c->later && !guard) {
            key = json_copy((json_t *)start.key);
            /* read descending, a group a level cut short starts after its keys */
            if (reads_descending && c->reduce && c->group_level == 2) {
                json_array_append_new(key, json_object());
            }
        }
        else if (end_probe ? last_bound != NULL : first_bound != NULL) {
            key = json_incref((json_t *)(end_probe ? last_bound : first_bound));
        }
        expect_param(c, query, "startkey", key);
        params += key != NULL;
        expect_param(c, query, "startkey_docid", c->later && docids && !c->all_docs && !guard
                                                 ? json_string(start.docid) : NULL);
        params += c->later && docids && !c->all_docs && !guard;
        /* forward to the range's end, backward to its start; the guard has
         * none: that is why CouchDB never refuses it */
        bound = guard ? NULL : backward ? first_bound : last_bound;
        expect_param(c, query, "endkey", json_incref((json_t *)bound));
        params += bound != NULL;
        if (json_object_size(query->params) != params) {
            fail_msg("%s: query %d has %s", describe(c), i,
                     cp_json_text(pool, query->params));
        }
        expect_url_matches_params(c, &plan, query);
    }
    /* the POST body: the same parameters, in order */
    body = parse(cp_plan_batch_body(pool, cp_plan_waiting(pool, queries)));
    assert_int_equal(json_object_size(body), 1);
    assert_int_equal(json_array_size(json_object_get(body, "queries")), queries->nelts);
    for (i = 0; i < queries->nelts; i++) {
        assert_true(cp_json_identical(json_array_get(json_object_get(body, "queries"), i),
                                      APR_ARRAY_IDX(queries, i, cp_query).params));
    }
}

/* Every combination of the options a location and a request can have, on a
 * first and a later page: the queries a page needs, each with exactly its
 * parameters, the same in the GET URL and the POST body. */
/* CouchPageUpdate and CouchPageStable go into every query of a page, the
 * position probes and a widened backward query too, as strings: raw in a
 * GET URL (update="lazy" there is CouchDB's 400), strings in a POST body. */
static void index_freshness_goes_into_every_query(void **state)
{
    cp_view view = view_of(VIEW_URL);
    cp_plan plan;
    cp_token start = token_of("[\"p\",3]", "d1", 0);
    apr_array_header_t *queries;
    cp_query *backward;
    int i;

    view.update = "lazy";
    view.stable = "true";
    plan = plan_of(&view, NULL, NULL, NULL, 2, 0);
    assert_string_equal(plan_urls(&plan, NULL),
                        "forward " VIEW_URL "?limit=3&reduce=false&update=lazy&stable=true");

    /* every role: a key range, documents and page links on a later page */
    view.include_docs = 1;
    view.update = "false";
    view.stable = NULL;
    if (cp_plan_init(pool, &plan, &view, NULL, "[\"p\",0]", "[\"p\",{}]", 2, 3)) {
        fail_msg("plan refused");
    }
    queries = cp_plan_page(pool, &plan, &start);
    assert_int_equal(queries->nelts, 5);
    for (i = 0; i < queries->nelts; i++) {
        const cp_query *query = &APR_ARRAY_IDX(queries, i, cp_query);
        const char *url = cp_plan_query_url(pool, plan.index_url, query);

        assert_string_equal(json_string_value(json_object_get(query->params, "update")),
                            "false");
        assert_null(json_object_get(query->params, "stable"));
        assert_non_null(strstr(url, "&update=false"));
        assert_null(strstr(url, "stable"));
    }
    assert_non_null(strstr(cp_plan_batch_body(pool, cp_plan_waiting(pool, queries)), "\"update\":\"false\""));

    /* the backward answer cut inside the token's entry: the wider query keeps it */
    view.include_docs = 0;
    view.update = "true";
    view.stable = "false";
    plan = plan_of(&view, NULL, NULL, NULL, 2, 0);
    start = token_of("\"r\"", "d5", 0);
    queries = cp_plan_page(pool, &plan, &start);
    backward = cp_plan_query(queries, CP_QUERY_BACKWARD);
    for (i = 0; i < queries->nelts; i++) {
        APR_ARRAY_IDX(queries, i, cp_query).answer = answer_text("{\"rows\":[]}");
    }
    backward->answer = rows_of_one_entry(backward->limit);
    assert_int_equal(widen(&plan, &start, queries), 1);
    backward = cp_plan_query(queries, CP_QUERY_BACKWARD);
    assert_int_equal(backward->widened, 1);
    assert_string_equal(json_string_value(json_object_get(backward->params, "update")), "true");
    assert_string_equal(json_string_value(json_object_get(backward->params, "stable")), "false");
    assert_string_equal(cp_plan_batch_body(pool, cp_plan_waiting(pool, queries)),
                        apr_psprintf(pool, "{\"queries\":[{\"limit\":%d,\"reduce\":false,"
                                     "\"descending\":true,\"update\":\"true\","
                                     "\"stable\":\"false\",\"startkey\":\"r\","
                                     "\"startkey_docid\":\"d5\"}]}", backward->limit));
}

static void every_option_combination_is_planned(void **state)
{
    static const int reduce_modes[][2] = { { 0, 0 }, { 1, CP_GROUP_EXACT }, { 1, 2 } };
    static const int links[] = { 0, 1, 3 };
    static const char *const partitions[] = { NULL, "p" };
    combination c;
    size_t r, l, p;
    int checked = 0;

    for (c.all_docs = 0; c.all_docs <= 1; c.all_docs++)
    for (r = 0; r < 3; r++)
    for (c.include_docs = 0; c.include_docs <= 1; c.include_docs++)
    for (c.descending = 0; c.descending <= 1; c.descending++)
    for (c.range = 0; c.range <= 3; c.range++)
    for (p = 0; p < 2; p++)
    for (l = 0; l < 3; l++)
    for (c.later = 0; c.later <= 2; c.later++) {
        c.reduce = reduce_modes[r][0];
        c.group_level = reduce_modes[r][1];
        /* grouped rows have no documents, _all_docs no reduce */
        if ((c.reduce && (c.include_docs || c.all_docs))
            || (c.later == 2 && (c.reduce || c.all_docs))) {
            continue;
        }
        c.partition = partitions[p];
        c.links = links[l];
        /* later == 2: a token at row 2 of its document's rows under one key */
        c.index = c.later == 2 ? 2 : 0;
        {
            combination one = c;

            one.later = c.later != 0;
            check_combination(&one);
        }
        checked++;
    }
    /* six kinds of location (a view with and without documents, grouped
     * exactly and at a level, _all_docs with and without documents), each
     * direction, range, partition and links, on a first and a later page,
     * and map views also from inside one document's rows */
    assert_int_equal(checked, 2 * 4 * 2 * 3 * (6 * 2 + 2));
}

/* Every limit and skip the module sends is bounded by the page, never by
 * the token: for every kind of location and page, every page size and
 * number of page links, every ceiling of rows one document emits, and every
 * token row index below it, each query (and each widening of it, as often as
 * cp_plan_widen allows) reads at most
 * (1 + pages either side) × count + 2 × max_emits + CP_PLAN_BACKWARD_SLACK
 * rows, skipped ones included; a token at the ceiling is refused. */
static void every_query_is_bounded_by_the_page(void **state)
{
    static const int reduce_modes[][2] = { { 0, 0 }, { 1, CP_GROUP_EXACT }, { 1, 2 } };
    static const int counts[] = { 1, 2, 3, 5, 100, 10000 };
    static const int links[] = { 0, 1, 3, 20 };
    static const int ceilings[] = { 1, 2, 64, CP_TOKEN_MAX_EMITS };
    static const char *const ranges[][2] = { { NULL, NULL }, { "[\"a\"]", "[\"z\",{}]" } };
    int all_docs, r, docs, descending, range, partition, c, l, e, kind, checked = 0;

    for (all_docs = 0; all_docs <= 1; all_docs++)
    for (r = 0; r < 3; r++)
    for (docs = 0; docs <= 1; docs++)
    for (descending = 0; descending <= 1; descending++)
    for (range = 0; range <= 1; range++)
    for (partition = 0; partition <= 1; partition++)
    for (c = 0; c < (int)(sizeof(counts) / sizeof(counts[0])); c++)
    for (l = 0; l < (int)(sizeof(links) / sizeof(links[0])); l++)
    for (e = 0; e < (int)(sizeof(ceilings) / sizeof(ceilings[0])); e++)
    for (kind = 0; kind < 3; kind++) {
        cp_view view = view_of(all_docs ? DB_URL "/_all_docs" : VIEW_URL);
        int count = counts[c], max_emits = ceilings[e];
        int bound = (1 + (links[l] > 1 ? links[l] : 1)) * count + 2 * max_emits
                  + CP_PLAN_BACKWARD_SLACK;
        int indexes[4] = { 0, 1, max_emits / 2, max_emits - 1 }, x;
        cp_plan plan;

        if (reduce_modes[r][0] && (docs || all_docs)) {
            continue;
        }
        view.reduce = reduce_modes[r][0];
        view.group_level = reduce_modes[r][1];
        view.include_docs = docs;
        view.descending = descending;
        view.max_emits = max_emits;
        assert_null(cp_plan_init(pool, &plan, &view, partition ? "p" : NULL,
                                 all_docs && range ? "\"a\"" : ranges[range][0],
                                 all_docs && range ? "\"z\"" : ranges[range][1], count,
                                 links[l]));
        assert_int_equal(cp_plan_max_reach(&plan), bound);
        /* kind 0: a first page; 1: a later page, for each index; 2: the last */
        for (x = 0; x < (kind == 1 ? 4 : 1); x++) {
            int index = cp_view_has_docids(&view) ? indexes[x] : 0;
            cp_token start = token_of(all_docs ? "\"k\"" : "[\"k\",1]",
                                      cp_view_has_docids(&view) ? "d7" : NULL, index);
            cp_token last = { .from = CP_FROM_LAST };
            const cp_token *token = kind == 0 ? NULL : kind == 1 ? &start : &last;
            apr_array_header_t *queries;
            int q;

            if (index < 0 || (index > 0 && index >= max_emits)) {
                continue;
            }
            if (token) {
                assert_null(cp_plan_check_start(pool, &plan, token));
            }
            queries = cp_plan_page(pool, &plan, token);
            for (q = 0; q < queries->nelts; q++) {
                cp_query *query = &APR_ARRAY_IDX(queries, q, cp_query);

                do {
                    int limit = (int)json_integer_value(json_object_get(query->params,
                                                                        "limit"));
                    int skip = cp_plan_skip(query);

                    assert_int_equal(limit, query->limit);
                    if (limit + skip > bound) {
                        fail_msg("count %d links %d max_emits %d index %d kind %d: query %d "
                                 "(role %d, widened %d) reads %d + skips %d, over %d",
                                 count, links[l], max_emits, index, kind, q, query->role,
                                 query->widened, limit, skip, bound);
                    }
                } while ((query->role == CP_QUERY_BACKWARD
                          || (query->role == CP_QUERY_RANGE_END && kind == 2))
                         && cp_plan_widen(pool, &plan, token, query));
            }
            checked++;
        }
        /* a token at the ceiling, or past it, is refused before any query */
        if (kind == 1 && cp_view_has_docids(&view)) {
            cp_token over = token_of(all_docs ? "\"k\"" : "[\"k\",1]", "d7", max_emits);

            assert_non_null(cp_plan_check_start(pool, &plan, &over));
            over.index = max_emits + 1000;
            assert_non_null(cp_plan_check_start(pool, &plan, &over));
        }
    }
    assert_true(checked > 10000);
}

/* An answer with more rows than its query's limit is named, to be refused. */
static void an_answer_over_its_limit_is_named(void **state)
{
    cp_view view = view_of(VIEW_URL);
    cp_plan plan = plan_of(&view, NULL, NULL, NULL, 2, 0);
    cp_token start = token_of("\"r\"", "d5", 0);
    apr_array_header_t *queries = cp_plan_page(pool, &plan, &start);
    cp_query *forward = cp_plan_query(queries, CP_QUERY_FORWARD);
    cp_query *backward = cp_plan_query(queries, CP_QUERY_BACKWARD);

    assert_null(cp_plan_overfull(pool, queries));
    forward->answer = rows_of_one_entry(forward->limit);
    backward->answer = rows_of_one_entry(backward->limit);
    assert_null(cp_plan_overfull(pool, queries));
    backward->answer = rows_of_one_entry(backward->limit + 1);
    assert_string_equal(cp_plan_overfull(pool, queries),
                        apr_psprintf(pool, "%d rows, more than its limit of %d",
                                     backward->limit + 1, backward->limit));
    forward->answer = rows_of_one_entry(5000);
    assert_string_equal(cp_plan_overfull(pool, queries),
                        apr_psprintf(pool, "5000 rows, more than its limit of %d",
                                     forward->limit));
}

/* Partition names: CouchDB's rule, and never a path's dot segment. */
static void partition_names_are_checked(void **state)
{
    static const char *const bad[] = { "", ".", "..", "_design", "_", "a:b", "\xff" };
    static const char *const good[] = { "a", "a.b", "...", ".a", "a/b", "caf\xc3\xa9", "-" };
    size_t i;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        if (!cp_plan_check_partition(pool, bad[i])) {
            fail_msg("partition '%s' accepted", bad[i]);
        }
    }
    for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        const char *reason = cp_plan_check_partition(pool, good[i]);

        if (reason) {
            fail_msg("partition '%s' refused: %s", good[i], reason);
        }
    }
}

/* A bounded token's row is looked for between its keys, in the view's
 * order, by one query of cp_plan_max_reach rows, without the range's
 * bounds: CouchDB collates, the module compares digests. */
static void bounded_tokens_are_located_between_their_keys(void **state)
{
    cp_view view = view_of(VIEW_URL);
    cp_plan plan = plan_of(&view, NULL, "\"a\"", "\"z\"", 5, 0);
    cp_token token;
    apr_array_header_t *queries;
    const cp_query *query;

    assert_null(cp_token_decode(pool, "{\"lo\":[\"l\",\"mm\"],\"hi\":[\"l\",\"mm\xef\xbf\xbf\"],"
                                "\"h\":\"AAAAAAAAAAAAAAAAAAAAAA\"}",
                                CP_TOKEN_VIEW_ROWS(1), &token));
    queries = cp_plan_locate(pool, &plan, &token);
    assert_int_equal(queries->nelts, 1);
    query = &APR_ARRAY_IDX(queries, 0, cp_query);
    assert_int_equal(query->role, CP_QUERY_LOCATE);
    assert_int_equal(query->limit, cp_plan_max_reach(&plan));
    assert_string_equal(cp_json_text(pool, query->params),
                        apr_psprintf(pool, "{\"limit\":%d,\"reduce\":false,\"startkey\":[\"l\",\"mm\"],"
                                     "\"endkey\":[\"l\",\"mm\xef\xbf\xbf\"]}",
                                     cp_plan_max_reach(&plan)));
    view.descending = 1;
    plan = plan_of(&view, NULL, NULL, NULL, 5, 0);
    query = &APR_ARRAY_IDX(cp_plan_locate(pool, &plan, &token), 0, cp_query);
    assert_string_equal(cp_json_text(pool, query->params),
                        apr_psprintf(pool, "{\"limit\":%d,\"reduce\":false,\"descending\":true,"
                                     "\"startkey\":[\"l\",\"mm\xef\xbf\xbf\"],"
                                     "\"endkey\":[\"l\",\"mm\"]}", cp_plan_max_reach(&plan)));
}

/* The probes' answers given offsets, in the order cp_plan_clamp_probes
 * planned them (-1: an answer without one). */
static void answer_offsets(apr_array_header_t *probes, const int *offsets)
{
    int i;

    for (i = 0; i < probes->nelts; i++) {
        APR_ARRAY_IDX(probes, i, cp_query).answer =
            answer_text(offsets[i] < 0 ? "{\"rows\":[]}"
                                       : apr_psprintf(pool, "{\"total_rows\":50,\"offset\":%d,"
                                                      "\"rows\":[]}", offsets[i]));
    }
}

/* The JSON of a clamped token's low and high keys. */
static const char *clamped_bounds(const cp_plan *plan, apr_array_header_t *probes,
                                  const cp_token *token, const int *offsets)
{
    cp_token clamped;

    if (probes) {
        answer_offsets(probes, offsets);
    }
    assert_null(cp_plan_clamp(plan, probes, token, &clamped));
    return apr_pstrcat(pool, cp_json_text(pool, clamped.low), " ",
                       cp_json_text(pool, clamped.high), NULL);
}

/* A bounded token's keys are clamped to the location's range before its
 * row is looked for: probes of limit=0 from each key, the token's and the
 * range's, over map rows; the later first key by CouchDB's offsets (a tie:
 * the token's, which starts the same rows), the earlier last key; an
 * answer without an offset keeps the range's key; _all_docs by bytes. */
static void bounded_tokens_are_clamped_to_the_range(void **state)
{
    cp_view view = view_of(VIEW_URL);
    cp_plan plan = plan_of(&view, NULL, "\"f\"", "\"p\"", 5, 0);
    cp_token token;
    apr_array_header_t *probes;
    const char *text = "", *reason;
    int i;

    assert_null(cp_token_decode(pool, "{\"lo\":\"b\",\"hi\":\"k\xef\xbf\xbf\","
                                "\"h\":\"AAAAAAAAAAAAAAAAAAAAAA\"}",
                                CP_TOKEN_VIEW_ROWS(1), &token));
    probes = cp_plan_clamp_probes(pool, &plan, &token);
    for (i = 0; i < probes->nelts; i++) {
        const cp_query *query = &APR_ARRAY_IDX(probes, i, cp_query);

        text = apr_pstrcat(pool, text, i ? "\n" : "", roles[query->role], " ",
                           cp_plan_query_url(pool, plan.index_url, query), NULL);
    }
    assert_string_equal(text,
                        "token-first " VIEW_URL "?limit=0&reduce=false&startkey=%22b%22\n"
                        "range-start " VIEW_URL "?limit=0&reduce=false&startkey=%22f%22\n"
                        "token-last " VIEW_URL "?limit=0&reduce=false&descending=true"
                        "&startkey=%22k%ef%bf%bf%22\n"
                        "range-end " VIEW_URL "?limit=0&reduce=false&descending=true"
                        "&startkey=%22p%22");
    /* b before f: from f; k before p: to k */
    assert_string_equal(clamped_bounds(&plan, probes, &token, (int[]){ 3, 10, 30, 20 }),
                        "\"f\" \"k\xef\xbf\xbf\"");
    /* the token's keys within: kept */
    assert_string_equal(clamped_bounds(&plan, probes, &token, (int[]){ 12, 10, 21, 20 }),
                        "\"b\" \"k\xef\xbf\xbf\"");
    /* no row between them: the token's keys, the same rows (and where
     * offsets count nothing, as pouchdb-server's, the token's as sent) */
    assert_string_equal(clamped_bounds(&plan, probes, &token, (int[]){ 10, 10, 20, 20 }),
                        "\"b\" \"k\xef\xbf\xbf\"");
    assert_string_equal(clamped_bounds(&plan, probes, &token, (int[]){ 0, 0, 0, 0 }),
                        "\"b\" \"k\xef\xbf\xbf\"");
    /* past the range's end: from the token's first key to the range's end,
     * a reversed range CouchDB refuses */
    assert_string_equal(clamped_bounds(&plan, probes, &token, (int[]){ 45, 10, 2, 20 }),
                        "\"b\" \"p\"");
    /* no offsets: the range's */
    assert_string_equal(clamped_bounds(&plan, probes, &token, (int[]){ 12, -1, -1, 20 }),
                        "\"f\" \"p\"");

    /* descending: the first key is the high one, read descending */
    view.descending = 1;
    plan = plan_of(&view, NULL, "\"f\"", NULL, 5, 0);
    probes = cp_plan_clamp_probes(pool, &plan, &token);
    assert_int_equal(probes->nelts, 2);
    assert_string_equal(cp_plan_query_url(pool, plan.index_url,
                                          &APR_ARRAY_IDX(probes, 0, cp_query)),
                        VIEW_URL "?limit=0&reduce=false&startkey=%22b%22");
    assert_int_equal(APR_ARRAY_IDX(probes, 0, cp_query).role, CP_QUERY_TOKEN_LAST);
    assert_string_equal(clamped_bounds(&plan, probes, &token, (int[]){ 5, 9 }),
                        "\"f\" \"k\xef\xbf\xbf\"");
    assert_string_equal(clamped_bounds(&plan, probes, &token, (int[]){ 9, 5 }),
                        "\"b\" \"k\xef\xbf\xbf\"");

    /* grouped rows: the probes read map rows, which have offsets */
    view = view_of(VIEW_URL);
    view.reduce = 1;
    view.group_level = 1;
    plan = plan_of(&view, NULL, NULL, "[\"p\"]", 5, 0);
    probes = cp_plan_clamp_probes(pool, &plan, &token);
    assert_int_equal(probes->nelts, 2);
    assert_string_equal(cp_plan_query_url(pool, plan.index_url,
                                          &APR_ARRAY_IDX(probes, 1, cp_query)),
                        VIEW_URL "?limit=0&reduce=false&descending=true"
                        "&startkey=%5b%22p%22%5d");

    /* no range: no probe, the token's keys */
    view = view_of(VIEW_URL);
    plan = plan_of(&view, NULL, NULL, NULL, 5, 0);
    assert_null(cp_plan_clamp_probes(pool, &plan, &token));
    assert_string_equal(clamped_bounds(&plan, NULL, &token, NULL), "\"b\" \"k\xef\xbf\xbf\"");

    /* _all_docs: ids compared as bytes, no probe */
    view = view_of(DB_URL "/_all_docs");
    plan = plan_of(&view, NULL, "\"f\"", "\"h\"", 5, 0);
    assert_null(cp_plan_clamp_probes(pool, &plan, &token));
    assert_string_equal(clamped_bounds(&plan, NULL, &token, NULL), "\"f\" \"h\"");
    plan = plan_of(&view, NULL, "\"a\"", "\"z\"", 5, 0);
    assert_string_equal(clamped_bounds(&plan, NULL, &token, NULL), "\"b\" \"k\xef\xbf\xbf\"");
    view.descending = 1;
    plan = plan_of(&view, NULL, "\"c\"", "\"e\"", 5, 0);
    assert_string_equal(clamped_bounds(&plan, NULL, &token, NULL), "\"c\" \"e\"");
    assert_null(cp_token_decode(pool, "{\"lo\":1,\"hi\":{},\"h\":\"AAAAAAAAAAAAAAAAAAAAAA\"}",
                                CP_TOKEN_VIEW_ROWS(1), &token));
    reason = cp_plan_clamp(&plan, NULL, &token, &(cp_token){ 0 });
    assert_non_null(reason);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        UNIT_TEST(first_page_asks_for_one_row_more),
        UNIT_TEST(every_query_is_bounded_by_the_page),
        UNIT_TEST(an_answer_over_its_limit_is_named),
        UNIT_TEST(partition_names_are_checked),
        UNIT_TEST(later_pages_query_forward_and_backward_from_the_token),
        UNIT_TEST(the_batch_body_holds_the_same_queries),
        UNIT_TEST(the_plan_says_which_queries_wait_and_takes_their_answers),
        UNIT_TEST(a_cut_answer_leaves_the_queries_after_it_to_ask_alone),
        UNIT_TEST(keys_cannot_smuggle_parameters),
        UNIT_TEST(a_logged_query_hides_keys_when_asked),
        UNIT_TEST(a_range_bounds_every_query),
        UNIT_TEST(keyset_pages_read_one_query_from_the_token),
        UNIT_TEST(queries_couchdb_may_refuse_are_marked),
        UNIT_TEST(descending_swaps_directions_and_bounds),
        UNIT_TEST(grouped_rows_read_backward_from_their_own_group),
        UNIT_TEST(documents_only_for_the_page_itself),
        UNIT_TEST(all_docs_sends_no_docid_and_no_reduce),
        UNIT_TEST(partitions_go_into_the_path),
        UNIT_TEST(page_links_read_several_pages_keys_only),
        UNIT_TEST(descending_groups_start_after_their_keys),
        UNIT_TEST(range_bounds_must_be_json_and_ids_for_all_docs),
        UNIT_TEST(wide_integers_reach_couchdb_digit_for_digit),
        UNIT_TEST(all_docs_starts_are_checked_against_the_range),
        UNIT_TEST(tokens_inside_one_documents_rows),
        UNIT_TEST(a_cut_entry_behind_widens_the_backward_query),
        UNIT_TEST(rows_passed_over_are_counted),
        UNIT_TEST(the_last_page_reads_back_from_the_end),
        UNIT_TEST(the_last_page_of_all_docs_partitions_and_groups),
        UNIT_TEST(a_cut_entry_in_the_tail_widens_it),
        UNIT_TEST(index_freshness_goes_into_every_query),
        UNIT_TEST(every_option_combination_is_planned),
        UNIT_TEST(bounded_tokens_are_located_between_their_keys),
        UNIT_TEST(bounded_tokens_are_clamped_to_the_range),
        UNIT_TEST(grouped_rows_counted_by_the_first_and_the_last_page),
    };
    RUN_UNIT_TESTS("plan", tests);
}
