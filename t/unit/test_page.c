/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of couchpage_page: pages assembled from answers, their tokens,
 * links and numbers; they link the core alone. */
#include "pages.h"
#include "couchpage_json.h"
#include "couchpage_seal.h"

/* A view response with rows keyed first..first+n-1 (or downwards), ids
 * "d<key>", total_rows 100 and the given offset (negative: none). */
static json_t *response(int first, int n, int descending, int offset)
{
    json_t *body = json_object();
    json_t *rows = json_array();
    int i;

    for (i = 0; i < n; i++) {
        int k = descending ? first - i : first + i;
        json_array_append_new(rows, json_pack("{s:s, s:i, s:n}", "id",
                                              apr_psprintf(pool, "d%d", k), "key", k,
                                              "value"));
    }
    json_object_set_new(body, "total_rows", json_integer(100));
    if (offset >= 0) {
        json_object_set_new(body, "offset", json_integer(offset));
    }
    json_object_set_new(body, "rows", rows);
    return cp_json_pool_own(pool, body);
}

/* The same response, saying the view has total rows. */
static json_t *with_total(json_t *response, int total)
{
    json_object_set_new(response, "total_rows", json_integer(total));
    return response;
}

/* Adds an answered query to a page's answers. */
static cp_query *add_answer(cp_page_answers *in, cp_query_role role, const json_t *answer,
                            int limit)
{
    cp_query *query = apr_array_push((apr_array_header_t *)in->queries);

    memset(query, 0, sizeof(*query));
    query->role = role;
    query->limit = limit;
    query->answer = answer ? answer_json(answer) : NULL;
    return query;
}

/* The answers of a page with the forward answer and, on a later page, the
 * backward one, asked as cp_plan_page asks them (for a token at a row of
 * its own, [key, "d<key>"]). */
static cp_page_answers answers(int count, int links, const json_t *forward,
                               const json_t *backward, const char *start_key)
{
    cp_page_answers in;
    int pages = links > 1 ? links : 1;

    memset(&in, 0, sizeof(in));
    in.count = count;
    in.links = links;
    in.with_docid = 1;
    in.queries = apr_array_make(pool, 3, sizeof(cp_query));
    add_answer(&in, CP_QUERY_FORWARD, forward, pages * count + 1);
    if (backward) {
        add_answer(&in, CP_QUERY_BACKWARD, backward, pages * count + 1 + CP_PLAN_BACKWARD_SLACK);
    }
    if (start_key) {
        cp_token *token = apr_palloc(pool, sizeof(*token));

        *token = token_of(start_key, apr_psprintf(pool, "d%s", start_key), 0);
        in.start_token = token;
        in.start = apr_psprintf(pool, "[%s,\"d%s\"]", start_key, start_key);
    }
    return in;
}

/* A first page's answers made a later one's: the backward answer, and the
 * token decoded from its text. */
static void start_at(cp_page_answers *in, const char *token_text, const json_t *backward,
                     int backward_limit)
{
    cp_token *token = apr_pcalloc(pool, sizeof(*token));

    assert_null(cp_token_decode(pool, token_text, CP_TOKEN_VIEW_ROWS(1), token));
    add_answer(in, CP_QUERY_BACKWARD, backward, backward_limit);
    in->start_token = token;
    in->start = token_text;
}

/* The same for a token decoded from its text. */
static cp_page_answers answers_from(int count, const char *rows, const char *backward_rows,
                                    const char *token_text, int backward_limit)
{
    cp_page_answers in = answers(count, 0, parse(apr_psprintf(pool, "{\"rows\":[%s]}", rows)),
                                 NULL, NULL);

    start_at(&in, token_text, parse(apr_psprintf(pool, "{\"rows\":[%s]}", backward_rows)),
             backward_limit);
    return in;
}

/* A page's row i, as the JSON object CouchDB sent. */
static const json_t *page_row(const cp_page *page, int i)
{
    const cp_row *row = APR_ARRAY_IDX(page->rows, i, const cp_row *);

    return cp_json_load(pool, row->text.text, row->text.len, NULL);
}

/* Whether the page assembler takes the backward answer as placing the
 * `needed` rows behind the page (as many pages linked as they fill). */
static int behind_is_complete(const cp_page_answers *in, int needed)
{
    cp_page_answers linked = *in;
    cp_page page;

    linked.links = needed / in->count;
    return cp_page_assemble(pool, &linked, &page) == NULL;
}

static const char *page_numbers(const cp_page *page)
{
    const char *text = "";
    int i;

    for (i = 0; i < page->pages->nelts; i++) {
        const cp_page_link *link = &APR_ARRAY_IDX(page->pages, i, cp_page_link);
        text = apr_psprintf(pool, "%s%s%" APR_INT64_T_FMT "%s", text, i ? " " : "", link->number,
                            link->current ? "*" : "");
    }
    return text;
}

static void a_short_first_page_has_no_links(void **state)
{
    cp_page_answers in = answers(5, 0, response(0, 5, 0, 0), NULL, NULL);
    cp_page page;

    /* whatever the page held before: a view's items are its rows */
    memset(&page, 0xff, sizeof(page));
    cp_page_assemble(pool, &in, &page);
    assert_false(page.docs_as_items);
    assert_int_equal(page.rows->nelts, 5);
    assert_null(page.next);
    assert_null(page.prev);
    /* 5 rows read to the end of 100: CouchDB's total, but no position */
    assert_int_equal(page.total_rows, 100);
    assert_false(page.numbered);
    assert_int_equal(page.offset, -1);
    assert_int_equal(page.pages->nelts, 0);
}

/* A page hands out next, prev, the last page's token unless it is this
 * page, and every other page link's: the places sealing writes into. */
static void a_pages_issued_tokens_are_its_links_but_its_own(void **state)
{
    cp_page page;
    cp_page_link links[3] = { { 1, NULL, 0, 0 }, { 2, "[2]", 1, 0 }, { 3, "[3]", 0, 0 } };
    const apr_array_header_t *tokens;
    apr_size_t longest;
    int i;

    memset(&page, 0, sizeof(page));
    page.next = "[3]";
    page.prev = NULL;
    page.last = "[2]";
    page.last_is_current = 1;
    page.pages = apr_array_make(pool, 3, sizeof(cp_page_link));
    for (i = 0; i < 3; i++) {
        APR_ARRAY_PUSH(page.pages, cp_page_link) = links[i];
    }
    tokens = cp_page_issued_tokens(pool, &page);
    assert_int_equal(tokens->nelts, 4);
    /* what the debug log tells: the places that hold a token, and the longest */
    assert_int_equal(cp_page_issued_count(&page, pool, &longest), 2);
    assert_int_equal(longest, 3);
    assert_ptr_equal(APR_ARRAY_IDX(tokens, 0, const char **), &page.next);
    assert_ptr_equal(APR_ARRAY_IDX(tokens, 1, const char **), &page.prev);
    assert_ptr_equal(APR_ARRAY_IDX(tokens, 2, const char **),
                     &APR_ARRAY_IDX(page.pages, 0, cp_page_link).start);
    assert_ptr_equal(APR_ARRAY_IDX(tokens, 3, const char **),
                     &APR_ARRAY_IDX(page.pages, 2, cp_page_link).start);
    page.last_is_current = 0;
    tokens = cp_page_issued_tokens(pool, &page);
    assert_int_equal(tokens->nelts, 5);
    assert_ptr_equal(APR_ARRAY_IDX(tokens, 2, const char **), &page.last);
    page.last = "[\"the last\"]";
    assert_int_equal(cp_page_issued_count(&page, pool, &longest), 3);
    assert_int_equal(longest, strlen(page.last));
    page.next = NULL;
    APR_ARRAY_IDX(page.pages, 2, cp_page_link).start = NULL;
    page.last = NULL;
    assert_int_equal(cp_page_issued_count(&page, pool, &longest), 0);
    assert_int_equal(longest, 0);
}

/* The answers a page reads, as the core builds them from the plan: its size,
 * links and partiality, document ids by the view, the queries, token and room. */
static void a_pages_answers_are_built_from_its_plan(void **state)
{
    cp_view view;
    cp_plan plan;
    cp_page_answers in;
    cp_token token;
    cp_token_room room = { 0 };
    apr_array_header_t *queries;

    memset(&token, 0, sizeof(token));
    view = view_of("http://127.0.0.1:5984/db/_design/d/_view/v");
    plan = plan_of(&view, NULL, "0", "9", 7, 3);
    queries = cp_plan_page(pool, &plan, NULL);
    cp_page_answers_init(&in, &plan, queries, &token, "[1,\"d1\"]", &room);
    assert_ptr_equal(in.room, &room);
    assert_int_equal(in.count, 7);
    assert_int_equal(in.links, 3);
    assert_true(in.with_docid);
    assert_true(in.partial);
    assert_ptr_equal(in.queries, queries);
    assert_ptr_equal(in.start_token, &token);
    assert_string_equal(in.start, "[1,\"d1\"]");
    view.reduce = 1;
    plan = plan_of(&view, NULL, NULL, NULL, 5, 0);
    cp_page_answers_init(&in, &plan, queries, NULL, NULL, NULL);
    assert_null(in.room);
    assert_int_equal(in.count, 5);
    assert_int_equal(in.links, 0);
    assert_false(in.with_docid);
    assert_false(in.partial);
    assert_null(in.start_token);
    assert_null(in.start);
}

static void the_extra_row_starts_the_next_page(void **state)
{
    cp_page_answers in = answers(5, 0, response(0, 6, 0, 0), NULL, NULL);
    cp_page page;

    cp_page_assemble(pool, &in, &page);
    assert_int_equal(page.rows->nelts, 5);
    assert_int_equal(json_integer_value(json_object_get(page_row(&page, 4), "key")), 4);
    assert_string_equal(page.next, "[5,\"d5\"]");
    assert_null(page.prev);
}

static void the_last_backward_row_starts_the_previous_page(void **state)
{
    cp_page_answers in;
    cp_page page;

    /* page 10..14; backward from 10 gives the token's own row, then 9..5 */
    in = answers(5, 0, response(10, 6, 0, 10), response(10, 6, 1, -1), "10");
    cp_page_assemble(pool, &in, &page);
    assert_string_equal(page.next, "[15,\"d15\"]");
    assert_string_equal(page.prev, "[5,\"d5\"]");
    /* the token's row is gone (its document deleted): every row is behind */
    in = answers(5, 0, response(10, 6, 0, 10), response(9, 6, 1, -1), "10");
    cp_page_assemble(pool, &in, &page);
    assert_string_equal(page.prev, "[5,\"d5\"]");
    /* near the start: fewer rows backward still point at the first row */
    in = answers(5, 0, response(2, 6, 0, 2), response(2, 3, 1, -1), "2");
    cp_page_assemble(pool, &in, &page);
    assert_string_equal(page.prev, "[0,\"d0\"]");
    /* at the start: nothing but the token's own row backward */
    in = answers(5, 0, response(0, 3, 0, 0), response(0, 1, 1, -1), "0");
    cp_page_assemble(pool, &in, &page);
    assert_null(page.prev);
    assert_null(page.next);
}

static void grouped_rows_make_key_only_tokens(void **state)
{
    cp_page_answers in = answers(1, 0, parse(
        "{\"rows\":[{\"key\":[2026,1],\"value\":3},{\"key\":[2026,2],\"value\":4}]}"),
        NULL, NULL);
    cp_page page;

    in.with_docid = 0;
    cp_page_assemble(pool, &in, &page);
    assert_string_equal(page.next, "[[2026,2]]");
    assert_int_equal(page.total_rows, -1);
    assert_int_equal(page.offset, -1);
}

/* The answers of a later page of grouped rows (no document ids), from a
 * token at the group start_key, with the own group probe's answer: that
 * query into *own. */
static cp_page_answers grouped_answers(int count, const json_t *forward,
                                       const json_t *backward, const char *start_key,
                                       const char *own_group, cp_query **own)
{
    cp_page_answers in = answers(count, 0, forward, backward, start_key);

    in.with_docid = 0;
    *own = add_answer(&in, CP_QUERY_OWN_GROUP, parse(own_group), 1);
    return in;
}

/* Grouped rows are read backward without skip: the token's own group comes
 * first when the group key is a whole key, and is passed over. */
static void grouped_rows_pass_over_their_own_group_backward(void **state)
{
    json_t *forward = parse(
        "{\"rows\":[{\"key\":[5],\"value\":1},{\"key\":[6],\"value\":1},"
        "{\"key\":[7],\"value\":1}]}");
    const char *with_own = "{\"rows\":[{\"key\":[5],\"value\":1},{\"key\":[4],\"value\":1},"
                           "{\"key\":[3],\"value\":1}]}";
    const char *without_own = "{\"rows\":[{\"key\":[4],\"value\":1},{\"key\":[3],\"value\":1},"
                              "{\"key\":[2],\"value\":1}]}";
    cp_query *own;
    cp_page_answers in = grouped_answers(2, forward, parse(with_own), "[5]",
                                         "{\"rows\":[{\"key\":[5],\"value\":1}]}", &own);
    cp_query *backward = cp_plan_query(in.queries, CP_QUERY_BACKWARD);
    cp_page page;

    cp_page_assemble(pool, &in, &page);
    assert_string_equal(page.next, "[[7]]");
    assert_string_equal(page.prev, "[[3]]");
    own->answer = answer_text("{\"rows\":[]}");
    backward->answer = answer_text(without_own);
    cp_page_assemble(pool, &in, &page);
    assert_string_equal(page.prev, "[[3]]");
    own->answer = answer_text("{\"rows\":[{\"key\":[5],\"value\":1}]}");
    backward->answer = answer_text("{\"rows\":[{\"key\":[5],\"value\":1}]}");
    cp_page_assemble(pool, &in, &page);
    assert_null(page.prev);
}

/* The token's own group spelt otherwise by the backward answer (CouchDB
 * names a group by its first row in the direction read): the own group
 * probe, not the spelling, says it is the token's, and it is passed over;
 * a group spelt as the token's but absent from the probe is not. */
static void grouped_rows_know_their_own_group_by_collation(void **state)
{
    json_t *forward = parse("{\"rows\":[{\"key\":\"\\u00e9\",\"value\":2},"
                            "{\"key\":\"f\",\"value\":1}]}");
    cp_query *own;
    cp_page_answers in = grouped_answers(1, forward,
                                         parse("{\"rows\":[{\"key\":\"e\\u0301\",\"value\":2},"
                                               "{\"key\":\"c\",\"value\":1}]}"),
                                         "\"\\u00e9\"",
                                         "{\"rows\":[{\"key\":\"\\u00e9\",\"value\":2}]}",
                                         &own);
    cp_page page;

    cp_page_assemble(pool, &in, &page);
    assert_string_equal(page.prev, "[\"c\"]");
    own->answer = answer_text("{\"rows\":[]}");
    cp_page_assemble(pool, &in, &page);
    assert_string_equal(page.prev, "[\"e\xcc\x81\"]");
}

static void page_links_number_pages_from_the_offset(void **state)
{
    cp_page_answers in;
    cp_page page;
    const cp_page_link *link;

    /* page 3 of rows 0..99 by 5: offset 10; 2 pages either side */
    in = answers(5, 2, response(10, 11, 0, 10), response(10, 11, 1, -1), "10");
    cp_page_assemble(pool, &in, &page);
    assert_true(page.numbered);
    assert_string_equal(page_numbers(&page), "1 2 3* 4 5");
    /* the backward answer reached the start: page 1 is the first page,
     * linked without a token */
    link = &APR_ARRAY_IDX(page.pages, 0, cp_page_link);
    assert_null(link->start);
    assert_false(page.prev_is_first);
    assert_string_equal(page.prev, "[5,\"d5\"]");
    link = &APR_ARRAY_IDX(page.pages, 1, cp_page_link);
    assert_string_equal(link->start, "[5,\"d5\"]");
    link = &APR_ARRAY_IDX(page.pages, 2, cp_page_link);
    assert_string_equal(link->start, "[10,\"d10\"]");
    link = &APR_ARRAY_IDX(page.pages, 4, cp_page_link);
    assert_string_equal(link->start, "[20,\"d20\"]");

    /* the first page of 8 rows: no start token, pages ahead only */
    in = answers(5, 2, with_total(response(0, 8, 0, 0), 8), NULL, NULL);
    cp_page_assemble(pool, &in, &page);
    assert_string_equal(page_numbers(&page), "1* 2");
    assert_null(APR_ARRAY_IDX(page.pages, 0, cp_page_link).start);

    /* a start off the page grid: the first page is short */
    in = answers(5, 3, with_total(response(3, 6, 0, 3), 9), response(3, 4, 1, -1), "3");
    cp_page_assemble(pool, &in, &page);
    assert_string_equal(page_numbers(&page), "1 2* 3");
    assert_null(APR_ARRAY_IDX(page.pages, 0, cp_page_link).start);
    assert_string_equal(page.prev, "[0,\"d0\"]");
    assert_true(page.prev_is_first);

    /* a backward answer cut by its limit has not reached the start */
    in = answers(5, 0, response(20, 6, 0, 20), response(20, 9, 1, -1), "20");
    cp_page_assemble(pool, &in, &page);
    assert_string_equal(page.prev, "[15,\"d15\"]");
    assert_false(page.prev_is_first);
}

/* Pages ahead from their own keys-only query from the page's start
 * (include_docs): the forward answer has one page and a row. */
static void pages_ahead_from_the_ahead_query(void **state)
{
    cp_page_answers in = answers(5, 3, response(0, 6, 0, 0), NULL, NULL);
    cp_page page;

    cp_plan_query(in.queries, CP_QUERY_FORWARD)->limit = 6;
    add_answer(&in, CP_QUERY_AHEAD, response(0, 16, 0, 0), 16);
    cp_page_assemble(pool, &in, &page);
    assert_int_equal(page.rows->nelts, 5);
    assert_string_equal(page.next, "[5,\"d5\"]");
    assert_string_equal(page_numbers(&page), "1* 2 3 4");
    assert_string_equal(APR_ARRAY_IDX(page.pages, 3, cp_page_link).start, "[15,\"d15\"]");
    /* a later page: from the token, with the pages behind */
    in = answers(5, 3, response(20, 6, 0, 20), response(20, 19, 1, -1), "20");
    cp_plan_query(in.queries, CP_QUERY_FORWARD)->limit = 6;
    add_answer(&in, CP_QUERY_AHEAD, response(20, 12, 0, 20), 16);
    cp_page_assemble(pool, &in, &page);
    assert_string_equal(page_numbers(&page), "2 3 4 5* 6 7");
    assert_string_equal(APR_ARRAY_IDX(page.pages, 5, cp_page_link).start, "[30,\"d30\"]");
    assert_string_equal(APR_ARRAY_IDX(page.pages, 0, cp_page_link).start, "[5,\"d5\"]");
}

/* An offset that cannot be true is left out, and numbers are relative. */
static void an_inconsistent_offset_is_not_shown(void **state)
{
    cp_page_answers in;
    cp_page page;

    /* rows behind the page, but offset 0: some servers report that */
    in = answers(5, 1, response(10, 6, 0, 0), response(10, 6, 1, -1), "10");
    cp_page_assemble(pool, &in, &page);
    assert_false(page.numbered);
    assert_int_equal(page.offset, -1);
    assert_string_equal(page_numbers(&page), "-1 0* 1");
    /* with a key range, offsets count from the view's start */
    in = answers(5, 1, response(10, 6, 0, 10), response(10, 6, 1, -1), "10");
    in.partial = 1;
    cp_page_assemble(pool, &in, &page);
    assert_false(page.numbered);
    assert_int_equal(page.offset, -1);
    /* an offset past the total, or one that would overflow */
    in = answers(5, 1, response(10, 6, 0, 1000), response(10, 6, 1, -1), "10");
    cp_page_assemble(pool, &in, &page);
    assert_false(page.numbered);
    assert_int_equal(page.offset, -1);
    /* no offset at all (reduce) */
    in = answers(5, 1, response(0, 3, 0, -1), NULL, NULL);
    cp_page_assemble(pool, &in, &page);
    assert_false(page.numbered);
    assert_string_equal(page_numbers(&page), "0*");
}

/* The rows of a view where one document emitted one key three times:
 * a(d0) x(d1)#0 x#1 x#2 z(d2). Its three rows are one entry, which CouchDB
 * lists in the same order both ways. */
static const char *const row_x0 = "{\"id\":\"d1\",\"key\":\"x\",\"value\":0}";
static const char *const row_x1 = "{\"id\":\"d1\",\"key\":\"x\",\"value\":1}";
static const char *const row_x2 = "{\"id\":\"d1\",\"key\":\"x\",\"value\":2}";
static const char *const row_a = "{\"id\":\"d0\",\"key\":\"a\",\"value\":9}";
static const char *const row_z = "{\"id\":\"d2\",\"key\":\"z\",\"value\":9}";

/* Pages of 2 over those rows. */
static void a_page_boundary_inside_one_documents_rows(void **state)
{
    cp_page_answers in;
    cp_page page;

    /* page 1: a x#0 | next starts at x#1 */
    in = answers(2, 0, parse(apr_psprintf(pool, "{\"rows\":[%s,%s,%s]}", row_a, row_x0, row_x1)),
                 NULL, NULL);
    cp_page_assemble(pool, &in, &page);
    assert_string_equal(page.next, "[\"x\",\"d1\",1]");

    /* page 2 from [x, d1, 1]: forward skip=1 gives x#1 x#2 z; backward (its
     * own entry first) gives x#0 x#1 x#2 a: behind, nearest first, x#0, a */
    in = answers_from(2, apr_pstrcat(pool, row_x1, ",", row_x2, ",", row_z, NULL),
                      apr_pstrcat(pool, row_x0, ",", row_x1, ",", row_x2, ",", row_a, NULL),
                      "[\"x\",\"d1\",1]", 5);
    cp_page_assemble(pool, &in, &page);
    assert_string_equal(page.next, "[\"z\",\"d2\"]");
    assert_string_equal(page.prev, "[\"a\",\"d0\"]");
    assert_true(behind_is_complete(&in, 2));

    /* page 3 from [z, d2]: backward gives z, then x's rows x#0 x#1 x#2 (one
     * order both ways), then a: read backward x#2 x#1 x#0 a, so the page
     * before starts at x#1 */
    in = answers_from(2, row_z,
                      apr_pstrcat(pool, row_z, ",", row_x0, ",", row_x1, ",", row_x2, ",", row_a, NULL),
                      "[\"z\",\"d2\"]", 4);
    cp_page_assemble(pool, &in, &page);
    assert_string_equal(page.prev, "[\"x\",\"d1\",1]");
    assert_null(page.next);

    /* from [x, d1, 2] with links: the ahead query skips to the token too */
    in = answers_from(1, row_x2,
                      apr_pstrcat(pool, row_x0, ",", row_x1, ",", row_x2, ",", row_a, NULL),
                      "[\"x\",\"d1\",2]", 6);
    in.links = 2;
    add_answer(&in, CP_QUERY_AHEAD,
               parse(apr_psprintf(pool, "{\"rows\":[%s,%s]}", row_x2, row_z)), 3);
    cp_page_assemble(pool, &in, &page);
    assert_string_equal(page.next, "[\"z\",\"d2\"]");
    assert_string_equal(page_numbers(&page), "-2 -1 0* 1");
    assert_string_equal(APR_ARRAY_IDX(page.pages, 0, cp_page_link).start, "[\"x\",\"d1\"]");
    assert_string_equal(APR_ARRAY_IDX(page.pages, 1, cp_page_link).start, "[\"x\",\"d1\",1]");
}

/* Keys CouchDB collates apart though a double cannot tell them apart, in
 * its order: 2^53 + 1, 2^64 - 1 and 2^64 as integers, 2^64 as a double,
 * 1e20. */
static const char *const wide_rows[] = {
    "{\"id\":\"a\",\"key\":9007199254740993,\"value\":null}",
    "{\"id\":\"b\",\"key\":18446744073709551615,\"value\":null}",
    "{\"id\":\"c\",\"key\":18446744073709551616,\"value\":null}",
    "{\"id\":\"d\",\"key\":1.8446744073709552e19,\"value\":null}",
    "{\"id\":\"e\",\"key\":1.0e20,\"value\":null}",
};

/* The rows wide_rows[from..to] (to below from: read backward), an answer. */
static const json_t *wide_answer(int from, int to)
{
    const char *rows = "";
    int i, step = to >= from ? 1 : -1;

    for (i = from; i != to + step; i += step) {
        rows = apr_pstrcat(pool, rows, i == from ? "" : ",", wide_rows[i], NULL);
    }
    return cp_json_load(pool, apr_psprintf(pool, "{\"rows\":[%s]}", rows),
                        strlen(rows) + 11, NULL);
}

/* Pages of 2 and of 1 over those rows name each by its exact key: a token
 * for 2^64 - 1 or 2^64 is never the other's, nor the double's. */
static void wide_integers_page_exactly(void **state)
{
    cp_page_answers in;
    cp_page page;

    in = answers(2, 0, wide_answer(0, 2), NULL, NULL);
    assert_null(cp_page_assemble(pool, &in, &page));
    assert_string_equal(page.next, "[18446744073709551616,\"c\"]");

    /* from 2^64 (an integer): forward c d e, backward c b a */
    in = answers(2, 0, wide_answer(2, 4), NULL, NULL);
    start_at(&in, "[18446744073709551616,\"c\"]", wide_answer(2, 0), 5 + CP_PLAN_BACKWARD_SLACK);
    assert_null(cp_page_assemble(pool, &in, &page));
    assert_int_equal(page.rows->nelts, 2);
    assert_string_equal(cp_json_text(pool, page_row(&page, 0)), wide_rows[2]);
    assert_string_equal(cp_json_text(pool, page_row(&page, 1)), wide_rows[3]);
    assert_string_equal(page.next, "[1e20,\"e\"]");
    assert_string_equal(page.prev, "[9007199254740993,\"a\"]");

    /* pages of 1 from 2^64 - 1: its own row, then 2^64 next, 2^53 + 1 before */
    in = answers(1, 0, wide_answer(1, 2), NULL, NULL);
    start_at(&in, "[18446744073709551615,\"b\"]", wide_answer(1, 0), 2 + CP_PLAN_BACKWARD_SLACK);
    assert_null(cp_page_assemble(pool, &in, &page));
    assert_int_equal(page.rows->nelts, 1);
    assert_string_equal(cp_json_text(pool, page_row(&page, 0)), wide_rows[1]);
    assert_string_equal(page.next, "[18446744073709551616,\"c\"]");
    assert_string_equal(page.prev, "[9007199254740993,\"a\"]");
}

/* An entry of several rows cut by the backward limit: its rows nearest the
 * page are missing, so the answer is not complete where the pages need it. */
static void a_cut_entry_behind_asks_for_more(void **state)
{
    const char *r = "{\"id\":\"d5\",\"key\":\"r\",\"value\":0}";
    const char *q0 = "{\"id\":\"d3\",\"key\":\"q\",\"value\":0}";
    const char *q1 = "{\"id\":\"d3\",\"key\":\"q\",\"value\":1}";
    const char *p4 = "{\"id\":\"d4\",\"key\":\"q\",\"value\":0}";
    const char *p5 = "{\"id\":\"d4\",\"key\":\"q\",\"value\":1}";
    cp_page_answers in;
    cp_page page;

    /* pages of 3; behind the token r: d4#1 d4#0, then d3, which the limit
     * (4) cut at d3#0 */
    in = answers_from(3, r, apr_pstrcat(pool, r, ",", p4, ",", p5, ",", q0, NULL),
                      "[\"r\",\"d5\"]", 4);
    assert_false(behind_is_complete(&in, 3));
    /* asked again with more: d3 is whole, the page before starts at d3#1 */
    in = answers_from(3, r, apr_pstrcat(pool, r, ",", p4, ",", p5, ",", q0, ",", q1, NULL),
                      "[\"r\",\"d5\"]", 34);
    assert_true(behind_is_complete(&in, 3));
    cp_page_assemble(pool, &in, &page);
    assert_string_equal(page.prev, "[\"q\",\"d3\",1]");
    /* an answer shorter than its limit reached the view's start: complete */
    in = answers_from(3, r, apr_pstrcat(pool, r, ",", p4, ",", p5, ",", q0, NULL),
                      "[\"r\",\"d5\"]", 5);
    assert_true(behind_is_complete(&in, 3));
    /* the token's own entry fills a cut answer: complete only if its rows
     * before the token are enough */
    in = answers_from(1, p5, apr_pstrcat(pool, p4, ",", p5, NULL), "[\"q\",\"d4\",1]", 2);
    assert_true(behind_is_complete(&in, 1));
    assert_false(behind_is_complete(&in, 2));
    cp_page_assemble(pool, &in, &page);
    assert_string_equal(page.prev, "[\"q\",\"d4\"]");
}

/* The answers of a last page (CP_TOKEN_LAST): the tail read back from the
 * end with its limit, and the range start probe's answer (NULL: none). */
static cp_page_answers last_answers(int count, int links, const json_t *tail, int limit,
                                    const json_t *range_start)
{
    cp_page_answers in;
    cp_token *token = apr_pcalloc(pool, sizeof(*token));

    memset(&in, 0, sizeof(in));
    in.count = count;
    in.links = links;
    in.with_docid = 1;
    in.queries = apr_array_make(pool, 2, sizeof(cp_query));
    if (range_start) {
        add_answer(&in, CP_QUERY_RANGE_START, range_start, 0);
        in.partial = 1;
    }
    add_answer(&in, CP_QUERY_RANGE_END, tail, limit);
    assert_null(cp_token_decode(pool, CP_TOKEN_LAST, CP_TOKEN_VIEW_ROWS(1), token));
    in.start_token = token;
    in.start = CP_TOKEN_LAST;
    return in;
}

/* The key of a page's row i. */
static int row_key(const cp_page *page, size_t i)
{
    return (int)json_integer_value(json_object_get(page_row(page, i), "key"));
}

/* The last page holds the remainder, counted back from the end, so that it
 * starts where the walk from the first page reaches it; prev and the pages
 * behind from the rest of the same answer; the position from its offsets. */
static void the_last_page_holds_the_remainder(void **state)
{
    cp_page_answers in;
    cp_page page;

    /* 98 rows by 5: page 20 holds 95..97, read back with 3 pages behind */
    in = last_answers(5, 2, with_total(response(97, 18, 1, 0), 98), 18, NULL);
    cp_page_assemble(pool, &in, &page);
    assert_true(page.numbered);
    assert_int_equal(page.rows->nelts, 3);
    assert_int_equal(row_key(&page, 0), 95);
    assert_int_equal(row_key(&page, 2), 97);
    assert_null(page.next);
    assert_string_equal(page.prev, "[90,\"d90\"]");
    assert_int_equal(page.offset, 95);
    assert_int_equal(page.total_rows, 98);
    assert_true(page.has_last);
    assert_true(page.last_is_current);
    assert_string_equal(page.last, CP_TOKEN_LAST);
    assert_int_equal(page.last_number, 20);
    assert_string_equal(page_numbers(&page), "18 19 20*");
    assert_string_equal(APR_ARRAY_IDX(page.pages, 0, cp_page_link).start, "[85,\"d85\"]");
    assert_string_equal(APR_ARRAY_IDX(page.pages, 2, cp_page_link).start, CP_TOKEN_LAST);

    /* a key range: rows 10..59 of the index's 100 (10 before, 40 after) */
    in = last_answers(5, 0, response(59, 13, 1, 40), 13, response(10, 0, 0, 10));
    cp_page_assemble(pool, &in, &page);
    assert_true(page.numbered);
    assert_int_equal(page.total_rows, 50);
    assert_int_equal(page.offset, 45);
    assert_int_equal(row_key(&page, 0), 55);
    assert_string_equal(page.prev, "[50,\"d50\"]");
    assert_int_equal(page.last_number, 10);
    /* ... but without the range's start offsets say nothing of it */
    in = last_answers(5, 0, response(59, 13, 1, 40), 13, NULL);
    in.partial = 1;
    cp_page_assemble(pool, &in, &page);
    assert_false(page.numbered);
    assert_int_equal(page.rows->nelts, 5);
    assert_int_equal(row_key(&page, 0), 55);
}

/* When the rows divide into pages, the last page is a full one. */
static void a_full_last_page_when_the_rows_divide(void **state)
{
    cp_page_answers in = last_answers(5, 0, response(99, 13, 1, 0), 13, NULL);
    cp_page page;

    cp_page_assemble(pool, &in, &page);
    assert_true(page.numbered);
    assert_int_equal(page.rows->nelts, 5);
    assert_int_equal(row_key(&page, 0), 95);
    assert_int_equal(row_key(&page, 4), 99);
    assert_string_equal(page.prev, "[90,\"d90\"]");
    assert_int_equal(page.offset, 95);
    assert_int_equal(page.last_number, 20);
    assert_int_equal(page.pages->nelts, 0);
}

/* A location of one page, or of none. */
static void the_last_page_of_one_page_or_none(void **state)
{
    cp_page_answers in = last_answers(5, 1, with_total(response(2, 3, 1, 0), 3), 13, NULL);
    cp_page page;

    cp_page_assemble(pool, &in, &page);
    assert_true(page.numbered);
    assert_int_equal(page.rows->nelts, 3);
    assert_int_equal(row_key(&page, 0), 0);
    assert_null(page.prev);
    assert_null(page.next);
    assert_int_equal(page.offset, 0);
    assert_int_equal(page.last_number, 1);
    assert_string_equal(page_numbers(&page), "1*");
    /* an empty range: offsets that add up to total_rows */
    in = last_answers(5, 1, response(0, 0, 1, 60), 13, response(0, 0, 0, 40));
    cp_page_assemble(pool, &in, &page);
    assert_true(page.numbered);
    assert_int_equal(page.rows->nelts, 0);
    assert_int_equal(page.total_rows, 0);
    assert_int_equal(page.offset, 0);
    assert_false(page.has_last);
    assert_null(page.prev);
    assert_null(page.next);
    /* offsets that say there are more rows than the answer has: not shown */
    in = last_answers(5, 1, response(2, 3, 1, 0), 13, NULL);
    cp_page_assemble(pool, &in, &page);
    assert_false(page.numbered);
    assert_int_equal(page.offset, -1);
    assert_int_equal(page.rows->nelts, 3);
}

/* The rows a x#0 x#1 x#2 z again: CouchDB lists an entry's rows in one
 * order both ways, so read back from the end they come z x#0 x#1 x#2 a. */
static void an_entry_across_the_last_pages_boundaries(void **state)
{
    cp_page_answers in;
    cp_page page;

    /* pages of 2: a x#0 | x#1 x#2 | z; the prev boundary inside x */
    in = last_answers(2, 2, parse(apr_psprintf(pool, "{\"total_rows\":5,\"offset\":0,"
                                               "\"rows\":[%s,%s,%s,%s,%s]}",
                                               row_z, row_x0, row_x1, row_x2, row_a)),
                      9, NULL);
    cp_page_assemble(pool, &in, &page);
    assert_true(page.numbered);
    assert_int_equal(page.rows->nelts, 1);
    assert_string_equal(json_string_value(json_object_get(page_row(&page, 0), "id")),
                        "d2");
    assert_string_equal(page.prev, "[\"x\",\"d1\",1]");
    assert_string_equal(page_numbers(&page), "1 2 3*");
    /* the answer reached the start: page 1 is the first page */
    assert_null(APR_ARRAY_IDX(page.pages, 0, cp_page_link).start);
    assert_false(page.prev_is_first);
    /* without z: the last page starts inside x, at x#1, its rows in order */
    in = last_answers(2, 0, parse(apr_psprintf(pool, "{\"total_rows\":4,\"offset\":0,"
                                               "\"rows\":[%s,%s,%s,%s]}",
                                               row_x0, row_x1, row_x2, row_a)),
                      7, NULL);
    cp_page_assemble(pool, &in, &page);
    assert_true(page.numbered);
    assert_int_equal(page.rows->nelts, 2);
    assert_true(cp_json_identical(page_row(&page, 0), parse(row_x1)));
    assert_true(cp_json_identical(page_row(&page, 1), parse(row_x2)));
    assert_string_equal(page.prev, "[\"a\",\"d0\"]");
    assert_true(page.prev_is_first);
    assert_int_equal(page.offset, 2);
}

/* The tail's limit cut an entry where the page or the pages behind need
 * it: not complete; a page is never made of rows whose places are unknown. */
static void a_tail_cut_inside_an_entry(void **state)
{
    const char *z = "{\"id\":\"d2\",\"key\":\"z\",\"value\":9}";
    const char *rows = apr_psprintf(pool, "%s", z);
    cp_page_answers in;
    cp_page page;
    int i;

    for (i = 0; i < 6; i++) {
        rows = apr_psprintf(pool, "%s,{\"id\":\"d1\",\"key\":\"x\",\"value\":%d}", rows, i);
    }
    /* z, then six rows of x and perhaps more: 1 row known */
    in = last_answers(2, 0, parse(apr_psprintf(pool, "{\"total_rows\":10,\"offset\":0,"
                                               "\"rows\":[%s]}", rows)), 7, NULL);
    /* the page and the page behind need 4: asked again wider; asked as
     * often as the plan allows, the known row only, unnumbered */
    assert_ptr_equal(cp_page_assemble(pool, &in, &page),
                     cp_plan_query(in.queries, CP_QUERY_RANGE_END));
    assert_false(page.numbered);
    assert_int_equal(page.rows->nelts, 1);
    assert_null(page.prev);
    /* the same rows short of the limit are all there are: complete */
    cp_plan_query(in.queries, CP_QUERY_RANGE_END)->limit = 8;
    assert_null(cp_page_assemble(pool, &in, &page));
}

/* Where the position is unknown (grouped rows, no offsets), the last page
 * is the last count rows, numbered relative to itself. */
static void the_last_page_without_a_position(void **state)
{
    const json_t *groups = parse(
        "{\"rows\":[{\"key\":[9],\"value\":1},{\"key\":[8],\"value\":1},"
        "{\"key\":[7],\"value\":1},{\"key\":[6],\"value\":1},{\"key\":[5],\"value\":1},"
        "{\"key\":[4],\"value\":1},{\"key\":[3],\"value\":1}]}");
    cp_page_answers in = last_answers(2, 2, groups, 7, NULL);
    cp_page page;

    in.with_docid = 0;
    cp_page_assemble(pool, &in, &page);
    assert_false(page.numbered);
    assert_int_equal(page.offset, -1);
    assert_int_equal(page.total_rows, -1);
    assert_false(page.has_last);
    assert_int_equal(page.rows->nelts, 2);
    assert_true(cp_json_identical(json_object_get(page_row(&page, 0), "key"),
                                  parse("[8]")));
    assert_true(cp_json_identical(json_object_get(page_row(&page, 1), "key"),
                                  parse("[9]")));
    assert_string_equal(page.prev, "[[6]]");
    assert_string_equal(page_numbers(&page), "-2 -1 0*");
    assert_string_equal(APR_ARRAY_IDX(page.pages, 0, cp_page_link).start, "[[4]]");
    assert_string_equal(APR_ARRAY_IDX(page.pages, 2, cp_page_link).start, CP_TOKEN_LAST);
    /* fewer groups than a page: all of them */
    in = last_answers(2, 0, parse("{\"rows\":[{\"key\":[1],\"value\":1}]}"), 5, NULL);
    in.with_docid = 0;
    cp_page_assemble(pool, &in, &page);
    assert_int_equal(page.rows->nelts, 1);
    assert_null(page.prev);
}

/* A simulated CouchDB index of `rows` rows, row i keyed i / 3 (several rows
 * under one key) with id "d<i>" (on _all_docs keyed by the id), seen through
 * a partition with `pad_before` and `pad_after` rows of other partitions in
 * its shard: offsets and total_rows count them, as CouchDB's do. With
 * `entry` > 1 (views only), the rows of a key come from documents that emit
 * it `entry` times: row i's id is that of row i - i % entry, if under the
 * same key. Each row's value is its number. */
typedef struct {
    int rows, all_docs, pad_before, pad_after, zero_offsets, entry;
} sim_index;

/* The document id of row i. */
static const char *sim_id(const sim_index *ix, int i)
{
    int first = ix->entry > 1 ? i - i % ix->entry : i;

    while (first < i && first / 3 != i / 3) {
        first++;
    }
    return apr_psprintf(pool, "d%03d", first);
}

/* The row at step s of a read in that direction: CouchDB lists an entry's
 * rows in one order both ways, so read descending, entries come in reverse
 * and the rows of each in order. */
static int sim_row_at(const sim_index *ix, int s, int descending)
{
    int i, first;

    if (!descending) {
        return s;
    }
    i = ix->rows - 1 - s;
    /* the entry of row i, read from its first row */
    first = i;
    while (first > 0 && (first - 1) / 3 == i / 3 && !strcmp(sim_id(ix, first - 1), sim_id(ix, i))) {
        first--;
    }
    {
        int last = i;

        while (last + 1 < ix->rows && (last + 1) / 3 == i / 3
               && !strcmp(sim_id(ix, last + 1), sim_id(ix, i))) {
            last++;
        }
        /* i is (last - i) rows from the entry's end: in the entry's order,
         * that many rows from its first */
        return first + (last - i);
    }
}

static json_t *sim_key(const sim_index *ix, int i)
{
    return ix->all_docs ? json_sprintf("d%03d", i) : json_integer(i / 3);
}

/* A kind's place in CouchDB's collation, of the kinds the simulated keys
 * and a bounded token's keys have: null, numbers, strings, objects. */
static int sim_rank(const json_t *v)
{
    return json_is_null(v) ? 0 : json_is_number(v) ? 1 : json_is_string(v) ? 2 : 3;
}

static int sim_compare(const json_t *a, const json_t *b)
{
    if (sim_rank(a) != sim_rank(b)) {
        return sim_rank(a) - sim_rank(b);
    }
    if (json_is_null(a) || json_is_object(a)) {
        return 0;
    }
    if (json_is_string(a)) {
        return strcmp(json_string_value(a), json_string_value(b));
    }
    return (json_integer_value(a) > json_integer_value(b))
           - (json_integer_value(a) < json_integer_value(b));
}

/* Whether row i lies at or beyond the start (key, docid) read that way. */
static int sim_from(const sim_index *ix, int i, const json_t *key, const char *docid,
                    int descending)
{
    json_t *row_key = sim_key(ix, i);
    int cmp = sim_compare(row_key, key), id_cmp;

    json_decref(row_key);
    if (cmp != 0) {
        return descending ? cmp < 0 : cmp > 0;
    }
    if (!docid) {
        return 1;
    }
    id_cmp = strcmp(sim_id(ix, i), docid);
    return descending ? id_cmp <= 0 : id_cmp >= 0;
}

/* CouchDB's answer to one query's parameters. */
static json_t *sim_answer(const sim_index *ix, const json_t *params)
{
    int descending = json_is_true(json_object_get(params, "descending"));
    const json_t *start = json_object_get(params, "startkey");
    const json_t *end = json_object_get(params, "endkey");
    const char *docid = json_string_value(json_object_get(params, "startkey_docid"));
    int limit = (int)json_integer_value(json_object_get(params, "limit"));
    int skip = (int)json_integer_value(json_object_get(params, "skip"));
    json_t *body = json_object(), *rows = json_array();
    int at = 0, i, step;

    /* the start, in read order */
    while (at < ix->rows && start
           && !sim_from(ix, sim_row_at(ix, at, descending), start, docid, descending)) {
        at++;
    }
    at += skip < ix->rows - at ? skip : ix->rows - at;
    json_object_set_new(body, "total_rows",
                        json_integer(ix->rows + ix->pad_before + ix->pad_after));
    json_object_set_new(body, "offset", json_integer(ix->zero_offsets ? skip
                        : at + (descending ? ix->pad_after : ix->pad_before)));
    for (step = at; step < ix->rows && (int)json_array_size(rows) < limit; step++) {
        json_t *key;

        i = sim_row_at(ix, step, descending);
        key = sim_key(ix, i);
        if (end && (descending ? sim_compare(key, end) < 0 : sim_compare(key, end) > 0)) {
            json_decref(key);
            break;
        }
        json_array_append_new(rows, json_pack("{s:s, s:o, s:i}", "id", sim_id(ix, i),
                                              "key", key, "value", i));
    }
    json_object_set_new(body, "rows", rows);
    return cp_json_pool_own(pool, body);
}

/* Second rounds (widenings) the simulated pages took. */
static int sim_second_rounds;

/* What the simulated pages' tokens must fit in: NULL, no cap. */
static const cp_token_room *sim_room;

/* A bounded token's row, found as the handler finds it (its keys clamped
 * to the range: cp_plan_clamp_probes, cp_plan_clamp; cp_plan_locate,
 * cp_page_locate), the token then planned as one that holds its key. */
static cp_token *sim_locate(const sim_index *ix, const cp_plan *plan, cp_token *token)
{
    apr_array_header_t *probes = cp_plan_clamp_probes(pool, plan, token), *queries;
    cp_token *located = apr_pcalloc(pool, sizeof(*located)), clamped;
    cp_query *query;
    int i;

    for (i = 0; probes && i < probes->nelts; i++) {
        query = &APR_ARRAY_IDX(probes, i, cp_query);
        query->answer = answer_json(sim_answer(ix, query->params));
    }
    assert_null(cp_plan_clamp(plan, probes, token, &clamped));
    queries = cp_plan_locate(pool, plan, &clamped);
    query = &APR_ARRAY_IDX(queries, 0, cp_query);
    query->answer = answer_json(sim_answer(ix, query->params));
    assert_null(cp_page_locate(pool, queries, &clamped, 1, plan->view->descending, located));
    assert_non_null(located->key);
    return located;
}

/* A page as the handler makes it: plan, answers (widened if need be), page. */
static void sim_page(const sim_index *ix, const cp_plan *plan, const char *start_text,
                     cp_page *page)
{
    cp_token *token = NULL;
    apr_array_header_t *queries;
    cp_page_answers in;
    int i;

    if (start_text) {
        token = apr_pcalloc(pool, sizeof(*token));
        assert_null(cp_token_decode(pool, start_text, CP_TOKEN_VIEW_ROWS(1), token));
        if (token->digest) {
            token = sim_locate(ix, plan, token);
        }
    }
    queries = cp_plan_page(pool, plan, token);
    cp_page_answers_init(&in, plan, queries, token, start_text, sim_room);
    for (;;) {
        for (i = 0; i < queries->nelts; i++) {
            cp_query *query = &APR_ARRAY_IDX(queries, i, cp_query);

            if (!query->answer) {
                query->answer = answer_json(sim_answer(ix, query->params));
            }
        }
        if (!cp_plan_widen(pool, plan, token, cp_page_assemble(pool, &in, page))) {
            break;
        }
        sim_second_rounds++;
    }
}

/* The number of a page's row j (its value), or -1 */
static int row_number(const cp_page *page, size_t j)
{
    const json_t *value = json_object_get(page_row(page, j), "value");

    return json_is_integer(value) ? (int)json_integer_value(value) : -1;
}

/* Checks a page that should hold rows `at`... of the location's `expected`
 * row numbers (in the view's order), of `total` rows: every row. Only the
 * first page of an empty location may be empty: a page at or past the
 * last row (an extra empty last page) fails. */
static void sim_check(const char *what, const cp_page *page, const int *expected,
                      int total, int count, int at)
{
    int last = total ? (total + count - 1) / count : 0, n = total - at < count
                                                              ? total - at : count, j;

    if (at > 0 && at >= total) {
        fail_msg("%s: a page at row %d of %d: past the last row (%d rows)", what, at, total,
                 (int)page->rows->nelts);
    }
    if (!page->numbered || page->offset != at
        || page->total_rows != total
        || (int)page->rows->nelts != n) {
        fail_msg("%s: the page at row %d of %d: numbered %d, offset %d, total %d, "
                 "%d rows from %d", what, at, total, page->numbered,
                 (int)page->offset,
                 (int)page->total_rows,
                 (int)page->rows->nelts, row_number(page, 0));
    }
    for (j = 0; j < n; j++) {
        if (row_number(page, (size_t)j) != expected[at + j]) {
            fail_msg("%s: the page at row %d: row %d is %d, want %d", what, at, j,
                     row_number(page, (size_t)j), expected[at + j]);
        }
    }
    if (total > 0 && (!page->has_last || page->last_number != last)) {
        fail_msg("%s: the page at row %d: last page %d (known %d), want %d", what, at,
                 (int)page->last_number, page->has_last, last);
    }
}

/* Every page of a location, from the first by next, from the last by prev:
 * each one's position, the location's total, and the last page, exact;
 * pages aligned with the first page's, the last holding the remainder. */
static void sim_walk(const char *what, const sim_index *ix, const cp_plan *plan, int lo,
                     int hi)
{
    int *expected = apr_pcalloc(pool, sizeof(int) * (ix->rows + 1));
    int total = 0, i, at, count = plan->count, last_at;
    cp_page page, last_page;

    for (i = 0; i < ix->rows; i++) {
        int row = sim_row_at(ix, i, plan->view->descending);
        int key = ix->all_docs ? row : row / 3;

        if (key >= lo && key <= hi) {
            expected[total++] = row;
        }
    }
    sim_page(ix, plan, NULL, &page);
    for (at = 0;; at += count) {
        sim_check(what, &page, expected, total, count, at);
        if (!page.next) {
            break;
        }
        sim_page(ix, plan, page.next, &page);
    }
    if (at + count < total) {
        fail_msg("%s: next ended at row %d of %d", what, at, total);
    }
    if (total == 0) {
        return;
    }
    last_at = (int)(page.last_number - 1) * count;
    sim_page(ix, plan, NULL, &page);
    sim_page(ix, plan, page.last, &last_page);
    sim_check(apr_pstrcat(pool, what, " via the last link", NULL), &last_page, expected,
              total, count, last_at);
    for (at = last_at, page = last_page; page.prev; at -= count) {
        /* as a client follows the link: the first page's without a token */
        if (page.prev_is_first != (at - count == 0)) {
            fail_msg("%s: the page at row %d: prev is the first page: %d", what, at,
                     page.prev_is_first);
        }
        sim_page(ix, plan, page.prev_is_first ? NULL : page.prev, &page);
        sim_check(apr_pstrcat(pool, what, " by prev from the last", NULL), &page, expected,
                  total, count, at - count);
    }
    if (at != 0) {
        fail_msg("%s: prev from the last page ended at row %d", what, at);
    }
}

/* Positions, totals and the last page, exact for every kind of location:
 * views and _all_docs, ascending and descending, key ranges (fixed bounds
 * are the same to the core as a request's), partitions, pages of 3 and 4,
 * with and without page links; an empty range; views whose documents emit
 * a key once, twice or three times (pages that start inside a document's
 * rows). Where documents emit a key at most twice, no page takes a second
 * round. */
static void positions_are_exact_in_every_location(void **state)
{
    static const int ranges[][2] = { { -1000, 1000 }, { 2, 1000 }, { -1000, 4 }, { 2, 4 },
                                     { 100, 200 }, { 3, 3 } };
    sim_index ix;
    cp_view view;
    cp_plan plan;
    int all_docs, descending, r, partition, count, links, entry, walked = 0;

    for (entry = 1; entry <= 3; entry++)
    for (all_docs = 0; all_docs <= (entry == 1); all_docs++)
    for (descending = 0; descending <= 1; descending++)
    for (r = 0; r < 6; r++)
    for (partition = 0; partition <= 1; partition++)
    for (count = 3; count <= 4; count++)
    for (links = 0; links <= 2; links += 2) {
        int lo = ranges[r][0], hi = ranges[r][1];
        const char *low = NULL, *high = NULL, *what;

        memset(&ix, 0, sizeof(ix));
        ix.rows = 20;
        ix.all_docs = all_docs;
        ix.entry = entry;
        ix.pad_before = partition ? 7 : 0;
        ix.pad_after = partition ? 5 : 0;
        view = view_of(all_docs ? "http://h/db/_all_docs" : "http://h/db/_design/d/_view/v");
        view.descending = descending;
        if (lo > -1000) {
            low = all_docs ? apr_psprintf(pool, "\"d%03d\"", lo) : apr_itoa(pool, lo);
        }
        if (hi < 1000) {
            high = all_docs ? apr_psprintf(pool, "\"d%03d\"", hi) : apr_itoa(pool, hi);
        }
        plan = plan_of(&view, partition ? "p" : NULL, low, high, count, links);
        what = apr_psprintf(pool, "%s%s range %s..%s%s, %d a page, links %d, entries of %d",
                            all_docs ? "_all_docs" : "view", descending ? " descending" : "",
                            low ? low : "", high ? high : "", partition ? " partition" : "",
                            count, links, entry);
        sim_second_rounds = 0;
        sim_walk(what, &ix, &plan, lo, hi);
        if (entry <= 2 && sim_second_rounds != 0) {
            fail_msg("%s: %d second rounds", what, sim_second_rounds);
        }
        walked++;
    }
    assert_int_equal(walked, (2 + 1 + 1) * 2 * 6 * 2 * 2 * 2);
}

/* Every token bounded (a room too small for any key): each page's row is
 * found by its digest among the rows between its token's keys, and every
 * walk is as exact as with tokens that hold their keys, positions too. */
static void bounded_tokens_walk_exactly(void **state)
{
    sim_index ix;
    cp_view view;
    cp_plan plan;
    cp_token_room room = { 1, 1, 0, 0, 0, 0 };
    int all_docs, descending, r, entry, links, walked = 0;
    static const int ranges[][2] = { { -1000, 1000 }, { 2, 4 }, { 100, 200 } };

    sim_room = &room;
    for (entry = 1; entry <= 3; entry++)
    for (all_docs = 0; all_docs <= (entry == 1); all_docs++)
    for (descending = 0; descending <= 1; descending++)
    for (r = 0; r < 3; r++)
    for (links = 0; links <= 2; links += 2) {
        int lo = ranges[r][0], hi = ranges[r][1];
        const char *low = NULL, *high = NULL;

        memset(&ix, 0, sizeof(ix));
        ix.rows = 20;
        ix.all_docs = all_docs;
        ix.entry = entry;
        room.raw_ids = all_docs;
        view = view_of(all_docs ? "http://h/db/_all_docs" : "http://h/db/_design/d/_view/v");
        view.descending = descending;
        if (lo > -1000) {
            low = all_docs ? apr_psprintf(pool, "\"d%03d\"", lo) : apr_itoa(pool, lo);
            high = all_docs ? apr_psprintf(pool, "\"d%03d\"", hi) : apr_itoa(pool, hi);
        }
        plan = plan_of(&view, NULL, low, high, 3, links);
        sim_walk(apr_psprintf(pool, "bounded tokens, %s%s range %s..%s, links %d, entries of %d",
                              all_docs ? "_all_docs" : "view", descending ? " descending" : "",
                              low ? low : "", high ? high : "", links, entry),
                 &ix, &plan, lo, hi);
        walked++;
    }
    sim_room = NULL;
    assert_int_equal(walked, (2 + 1 + 1) * 2 * 3 * 2);
}

/* The locate query's answer: the row of the digest (its key, id and the
 * token's index); none, every row read: from where the bounds begin in the
 * view's order; none, the answer full: the reason. */
static void bounded_tokens_find_their_row_or_where_it_was(void **state)
{
    cp_token token, located;
    cp_page_answers in;
    cp_query *query;
    json_t *rows = parse("{\"total_rows\":9,\"offset\":2,\"rows\":["
                         "{\"id\":\"a\",\"key\":\"kk1\",\"value\":null},"
                         "{\"id\":\"b\",\"key\":\"kk2\",\"value\":null},"
                         "{\"id\":\"c\",\"key\":\"kk2\",\"value\":null}]}");

    memset(&in, 0, sizeof(in));
    in.queries = apr_array_make(pool, 1, sizeof(cp_query));
    query = add_answer(&in, CP_QUERY_LOCATE, rows, 4);
    assert_null(cp_token_decode(pool, cp_token_encode_bounded(pool, parse("\"kk2\""), "c", 2, 3, 0),
                                CP_TOKEN_VIEW_ROWS(1), &token));
    assert_null(cp_page_locate(pool, in.queries, &token, 1, 0, &located));
    assert_string_equal(located.key_json, "\"kk2\"");
    assert_string_equal(located.docid, "c");
    assert_int_equal(located.index, 2);
    assert_int_equal(located.from, CP_FROM_ROW);
    assert_null(located.digest);
    /* its row gone: from the low key and the first id, or descending from
     * the high key and the last */
    assert_null(cp_token_decode(pool, cp_token_encode_bounded(pool, parse("\"kk3\""), "d", 0, 3, 0),
                                CP_TOKEN_VIEW_ROWS(1), &token));
    assert_null(cp_page_locate(pool, in.queries, &token, 1, 0, &located));
    assert_string_equal(located.key_json, "\"k\"");
    assert_string_equal(located.docid, "");
    assert_int_equal(located.from, CP_FROM_ROW);
    assert_null(cp_page_locate(pool, in.queries, &token, 1, 1, &located));
    assert_string_equal(located.key_json, "\"k\xef\xbf\xbf\"");
    assert_true(strlen(located.docid) > 0 && (unsigned char)located.docid[0] == 0xf4);
    /* grouped rows: the key alone */
    assert_null(cp_page_locate(pool, in.queries, &token, 0, 0, &located));
    assert_null(located.docid);
    /* a full answer without the row: more rows share its bounds than read */
    query->limit = 3;
    assert_non_null(strstr(cp_page_locate(pool, in.queries, &token, 1, 0, &located),
                           "more than 3 rows share"));
}

/* A server whose offset is the skip (pouchdb-server): on the whole index a
 * first page is right and later pages fall back to relative numbers. */
static void offsets_of_the_skip_fall_back_to_relative(void **state)
{
    sim_index ix = { 20, 0, 0, 0, 1, 1 };
    cp_view view;
    cp_plan plan;
    cp_page page;
    int pages = 1;

    view = view_of("http://h/db/_design/d/_view/v");
    plan = plan_of(&view, NULL, NULL, NULL, 4, 2);
    sim_page(&ix, &plan, NULL, &page);
    assert_true(page.numbered);
    assert_int_equal(page.offset, 0);
    while (page.next) {
        sim_page(&ix, &plan, page.next, &page);
        pages++;
        assert_false(page.numbered);
        assert_int_equal(page.offset, -1);
        assert_false(page.has_last);
    }
    assert_int_equal(pages, 5);
}

/* cp_page_withhold_long_tokens never leaves out the Last page's link: its
 * token, the word CP_TOKEN_LAST, fits the smallest CouchPageMaxTokenLength
 * (64) sealed too, whatever the binding. */
static void the_last_pages_token_fits_every_cap(void **state)
{
    const char *binding = apr_psprintf(pool, "http://h/db/_design/d/_view/v\n/%01000d", 0);
    const char *token = CP_TOKEN_LAST;
    const char **const tokens[] = { &token };
    const cp_seal_key *key;

    assert_true(strlen(CP_TOKEN_LAST) <= 64);
    assert_null(cp_seal_key_derive(pool, "a secret of sixteen", &key));
    assert_null(cp_seal_tokens(pool, key, binding, tokens, 1));
    assert_true(strcmp(token, CP_TOKEN_LAST) != 0);
    assert_true(strlen(token) <= 64);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        UNIT_TEST(a_short_first_page_has_no_links),
        UNIT_TEST(the_last_pages_token_fits_every_cap),
        UNIT_TEST(a_pages_issued_tokens_are_its_links_but_its_own),
        UNIT_TEST(a_pages_answers_are_built_from_its_plan),
        UNIT_TEST(the_extra_row_starts_the_next_page),
        UNIT_TEST(the_last_backward_row_starts_the_previous_page),
        UNIT_TEST(grouped_rows_make_key_only_tokens),
        UNIT_TEST(grouped_rows_pass_over_their_own_group_backward),
        UNIT_TEST(page_links_number_pages_from_the_offset),
        UNIT_TEST(pages_ahead_from_the_ahead_query),
        UNIT_TEST(an_inconsistent_offset_is_not_shown),
        UNIT_TEST(a_page_boundary_inside_one_documents_rows),
        UNIT_TEST(wide_integers_page_exactly),
        UNIT_TEST(a_cut_entry_behind_asks_for_more),
        UNIT_TEST(the_last_page_holds_the_remainder),
        UNIT_TEST(a_full_last_page_when_the_rows_divide),
        UNIT_TEST(the_last_page_of_one_page_or_none),
        UNIT_TEST(an_entry_across_the_last_pages_boundaries),
        UNIT_TEST(a_tail_cut_inside_an_entry),
        UNIT_TEST(the_last_page_without_a_position),
        UNIT_TEST(positions_are_exact_in_every_location),
        UNIT_TEST(offsets_of_the_skip_fall_back_to_relative),
        UNIT_TEST(bounded_tokens_walk_exactly),
        UNIT_TEST(grouped_rows_know_their_own_group_by_collation),
        UNIT_TEST(bounded_tokens_find_their_row_or_where_it_was),
    };
    RUN_UNIT_TESTS("page", tests);
}
