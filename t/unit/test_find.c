/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of couchpage_find: sort fields read, and the keyset conditions
 * and _find bodies a page asks for, its tokens, answers and pages (Mango's
 * selectors and indexes: test_mango.c). That CouchDB reads
 * these conditions in its own order (mixed types, equal-collating strings,
 * ids of mixed case, nested fields, a cluster) was walked on CouchDB 3.4.3
 * page by page, both ways, against _find's own full order. */
#include "unit.h"
#include "couchpage_find.h"

/* The sort of names (NULL-terminated); the test fails if it is refused. */
static cp_find_sort sort_of(int descending, const char *const *names)
{
    cp_find_sort sort;
    const char *why;
    int count = 0;

    while (names[count]) {
        count++;
    }
    why = cp_find_sort_init(pool, names, count, descending, &sort);
    if (why) {
        fail_msg("sort refused: %s", why);
    }
    return sort;
}

/* Why names (NULL-terminated) cannot sort, or NULL. */
static const char *sort_refusal(const char *const *names)
{
    cp_find_sort sort;
    int count = 0;

    while (names[count]) {
        count++;
    }
    return cp_find_sort_init(pool, names, count, 0, &sort);
}

static void sort_fields_step_through_members(void **state)
{
    const char *names[] = { "date", "author.name", "a\\.b.c", "_id", NULL };
    cp_find_sort sort = sort_of(0, names);

    assert_int_equal(sort.count, 3);
    assert_true(sort.id_named);
    assert_string_equal(sort.fields[1].name, "author.name");
    assert_string_equal(sort.fields[1].steps[0], "author");
    assert_string_equal(sort.fields[1].steps[1], "name");
    assert_null(sort.fields[1].steps[2]);
    assert_string_equal(sort.fields[2].steps[0], "a.b");
    assert_string_equal(sort.fields[2].steps[1], "c");
    assert_null(sort.fields[2].steps[2]);

    sort = sort_of(0, (const char *[]){ "_id", NULL });
    assert_int_equal(sort.count, 0);
    assert_true(sort.id_named);
}

static void unusable_sort_fields_are_refused(void **state)
{
    const char *const *bad[] = {
        (const char *[]){ NULL },
        (const char *[]){ "", NULL },
        (const char *[]){ "a..b", NULL },
        (const char *[]){ "a.", NULL },
        (const char *[]){ ".a", NULL },
        (const char *[]){ "$a", NULL },
        (const char *[]){ "a\\b", NULL },
        (const char *[]){ "a\\", NULL },
        (const char *[]){ "a", "b", "a", NULL },
        (const char *[]){ "_id", "date", NULL },
        (const char *[]){ "caf\xe9", NULL },
    };
    apr_size_t i;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        const char *why = sort_refusal(bad[i]);

        if (!why) {
            fail_msg("sort %zu was accepted", i);
        }
    }
    assert_non_null(strstr(sort_refusal((const char *[]){ "_id", "date", NULL }),
                           "_id must be the last"));
    assert_non_null(strstr(sort_refusal((const char *[]){ "a", "a", NULL }), "twice"));
}

static void sort_param_says_each_direction(void **state)
{
    const char *names[] = { "date", "a.b", NULL };
    const char *with_id[] = { "date", "_id", NULL };
    cp_find_sort up = sort_of(0, names), down = sort_of(1, names), id = sort_of(0, with_id);

    assert_string_equal(cp_json_text(pool, cp_find_sort_param(pool, &up, 0)),
                        "[{\"date\":\"asc\"},{\"a.b\":\"asc\"}]");
    assert_string_equal(cp_json_text(pool, cp_find_sort_param(pool, &up, 1)),
                        "[{\"date\":\"desc\"},{\"a.b\":\"desc\"}]");
    assert_string_equal(cp_json_text(pool, cp_find_sort_param(pool, &down, 0)),
                        "[{\"date\":\"desc\"},{\"a.b\":\"desc\"}]");
    assert_string_equal(cp_json_text(pool, cp_find_sort_param(pool, &down, 1)),
                        "[{\"date\":\"asc\"},{\"a.b\":\"asc\"}]");
    assert_string_equal(cp_json_text(pool, cp_find_sort_param(pool, &id, 0)),
                        "[{\"date\":\"asc\"},{\"_id\":\"asc\"}]");
}

static void row_keys_are_the_documents_sort_values(void **state)
{
    const char *names[] = { "date", "author.name", "a\\.b", NULL };
    cp_find_sort sort = sort_of(0, names);
    json_t *key;

    key = cp_find_row_key(pool, &sort, parse("{\"_id\": \"x\", \"date\": \"2020\", "
                                             "\"author\": {\"name\": {\"$gt\": null}}, "
                                             "\"a.b\": [1, {}], \"a\": {\"b\": 2}}"));
    assert_non_null(key);
    assert_string_equal(cp_json_text(pool, key), "[\"2020\",{\"$gt\":null},[1,{}]]");
    /* a document lacking a sort value (Mango leaves it out of sorted answers) */
    assert_null(cp_find_row_key(pool, &sort, parse("{\"date\": 1, \"a.b\": 1}")));
    assert_null(cp_find_row_key(pool, &sort, parse("{\"date\": 1, \"author\": \"Ann\", "
                                                   "\"a.b\": 1}")));
    /* null is a value */
    key = cp_find_row_key(pool, &sort, parse("{\"date\": null, \"author\": {\"name\": "
                                             "null}, \"a.b\": null}"));
    assert_string_equal(cp_json_text(pool, key), "[null,null,null]");
}

static const char *beyond_text(const cp_find_sort *sort, const char *key, const char *id,
                               int backward)
{
    json_t *beyond = cp_find_beyond(pool, sort, parse(key), id, backward);

    return beyond ? cp_json_text(pool, beyond) : NULL;
}

static void beyond_is_the_exact_order_as_operators(void **state)
{
    const char *names[] = { "date", "a.b", NULL };
    cp_find_sort up = sort_of(0, names), down = sort_of(1, names);

    assert_string_equal(
        beyond_text(&up, "[\"2020\", {\"$gt\": null}]", "p1", 0),
        "{\"$and\":[{\"date\":{\"$gte\":\"2020\"}},{\"$or\":["
        "{\"date\":{\"$gt\":\"2020\"}},"
        "{\"date\":{\"$eq\":\"2020\"},\"a.b\":{\"$gt\":{\"$gt\":null}}},"
        "{\"date\":{\"$eq\":\"2020\"},\"a.b\":{\"$eq\":{\"$gt\":null}},\"_id\":{\"$gt\":\"p1\"}}"
        "]}]}");
    /* backward reads the other way: before the row */
    assert_string_equal(
        beyond_text(&up, "[1, 2]", "p1", 1),
        "{\"$and\":[{\"date\":{\"$lte\":1}},{\"$or\":["
        "{\"date\":{\"$lt\":1}},"
        "{\"date\":{\"$eq\":1},\"a.b\":{\"$lt\":2}},"
        "{\"date\":{\"$eq\":1},\"a.b\":{\"$eq\":2},\"_id\":{\"$lt\":\"p1\"}}]}]}");
    /* descending: after the row is below it, before it above */
    assert_string_equal(beyond_text(&down, "[1, 2]", "p1", 0),
                        beyond_text(&up, "[1, 2]", "p1", 1));
    assert_string_equal(beyond_text(&down, "[1, 2]", "p1", 1),
                        beyond_text(&up, "[1, 2]", "p1", 0));
}

static void beyond_an_id_alone(void **state)
{
    cp_find_sort by_id = sort_of(0, (const char *[]){ "_id", NULL });
    cp_find_sort down = sort_of(1, (const char *[]){ "_id", NULL });

    assert_string_equal(beyond_text(&by_id, "[]", "Ab", 0), "{\"_id\":{\"$gt\":\"Ab\"}}");
    assert_string_equal(beyond_text(&down, "[]", "Ab", 0), "{\"_id\":{\"$lt\":\"Ab\"}}");
    assert_string_equal(beyond_text(&by_id, "[]", "Ab", 1), "{\"_id\":{\"$lt\":\"Ab\"}}");
}

static void beyond_refuses_keys_of_another_shape(void **state)
{
    const char *names[] = { "date", "n", NULL };
    cp_find_sort sort = sort_of(0, names);

    assert_null(beyond_text(&sort, "[1]", "x", 0));
    assert_null(beyond_text(&sort, "[1, 2, 3]", "x", 0));
    assert_null(beyond_text(&sort, "{\"date\": 1}", "x", 0));
    assert_null(beyond_text(&sort, "\"2020\"", "x", 0));
    assert_null(beyond_text(&sort, "[1, 2]", NULL, 0));
    assert_null(beyond_text(&sort, "[1, 2]", "caf\xe9", 0));
}

/* CouchDB 3.4.3 answers 500 function_clause to a selector whose value
 * holds an array as a member of an array, at any depth (measured with
 * $gt, $gte, $lt, $lte and $eq): no token makes one, and a page read by
 * _find hands out no link to a row with such sort values. */
static void values_couchdb_cannot_compare_bound_nothing(void **state)
{
    const char *names[] = { "date", "n", NULL };
    cp_find_sort sort = sort_of(0, names);
    const char *comparable[] = { "1", "\"a\"", "null", "[]", "[1]", "{}", "{\"x\":[1]}",
                                 "[{\"x\":[1]}]", "{\"a\":{\"b\":{\"c\":[1]}}}",
                                 "\"[[1]]\"", "[{\"$gt\":1}]" };
    const char *not_comparable[] = { "[[1]]", "[[]]", "[1,[2]]", "[[[1]]]", "{\"x\":[[1]]}",
                                     "[{\"x\":[[1]]}]", "{\"x\":{\"y\":[1,[2]]}}",
                                     "[1,{\"a\":[2,[3]]}]" };
    cp_page page;
    size_t i;

    for (i = 0; i < sizeof(comparable) / sizeof(comparable[0]); i++) {
        if (!cp_mango_value_comparable(parse(comparable[i]))) {
            fail_msg("%s taken as not comparable", comparable[i]);
        }
        assert_non_null(beyond_text(&sort, apr_pstrcat(pool, "[1,", comparable[i], "]", NULL),
                                    "x", 0));
    }
    for (i = 0; i < sizeof(not_comparable) / sizeof(not_comparable[0]); i++) {
        if (cp_mango_value_comparable(parse(not_comparable[i]))) {
            fail_msg("%s taken as comparable", not_comparable[i]);
        }
        assert_null(beyond_text(&sort, apr_pstrcat(pool, "[1,", not_comparable[i], "]", NULL),
                                "x", 1));
        assert_null(cp_find_body(pool, &(cp_find_spec){ .selector = parse("{}"), .sort = &sort },
                                 parse(apr_pstrcat(pool, "[", not_comparable[i], ",2]", NULL)),
                                 "x", 0, 5));
    }

    /* the page's links: those of rows with such values left out */
    memset(&page, 0, sizeof(page));
    page.pages = apr_array_make(pool, 3, sizeof(cp_page_link));
    page.next = "{\"a\":[[1,[[1]]],\"d3\"]}";
    page.prev = "{\"b\":[[1,2],\"d1\"]}";
    cp_page_add_link(page.pages, 1, NULL, 0);
    cp_page_add_link(page.pages, 2, "{\"b\":[[1,2],\"d1\"]}", 1);
    cp_page_add_link(page.pages, 3, "{\"a\":[[1,[[1]]],\"d3\"]}", 0);
    cp_page_add_link(page.pages, 4, CP_TOKEN_LAST, 0);
    assert_int_equal(cp_find_withhold_unbounding(pool, &sort, &page), 2);
    assert_null(page.next);
    assert_string_equal(page.prev, "{\"b\":[[1,2],\"d1\"]}");
    assert_int_equal(page.withheld, CP_WITHHELD_NEXT);
    assert_false(APR_ARRAY_IDX(page.pages, 0, cp_page_link).withheld);
    assert_false(APR_ARRAY_IDX(page.pages, 1, cp_page_link).withheld);
    assert_true(APR_ARRAY_IDX(page.pages, 2, cp_page_link).withheld);
    assert_null(APR_ARRAY_IDX(page.pages, 2, cp_page_link).start);
    assert_string_equal(APR_ARRAY_IDX(page.pages, 3, cp_page_link).start, CP_TOKEN_LAST);
    page.prev = "{\"b\":[[{\"x\":[[1]]},2],\"d1\"]}";
    assert_int_equal(cp_find_withhold_unbounding(pool, &sort, &page), 1);
    assert_null(page.prev);
    assert_int_equal(page.withheld, CP_WITHHELD_NEXT | CP_WITHHELD_PREV);
}

/* A Mango selector of $and, $or and comparisons, as CouchDB evaluates it,
 * over a document of top-level members whose values are integers or
 * strings (integers first, as CouchDB collates them; strings and ids by
 * their bytes, which the tests' ASCII agree with). */
static int collate(const json_t *a, const json_t *b)
{
    if (json_is_integer(a) != json_is_integer(b)) {
        return json_is_integer(a) ? -1 : 1;
    }
    if (json_is_integer(a)) {
        json_int_t x = json_integer_value(a), y = json_integer_value(b);

        return x < y ? -1 : x > y;
    }
    return strcmp(json_string_value(a), json_string_value(b));
}

static int matches(const json_t *selector, const json_t *doc)
{
    const char *name;
    const json_t *arg;
    apr_size_t i;
    const json_t *each;

    json_object_foreach((json_t *)selector, name, arg) {
        int any = 0, cmp;
        const char *op;
        const json_t *value;

        if (strcmp(name, "$and") == 0) {
            json_array_foreach(arg, i, each) {
                if (!matches(each, doc)) {
                    return 0;
                }
            }
            continue;
        }
        if (strcmp(name, "$or") == 0) {
            json_array_foreach(arg, i, each) {
                any |= matches(each, doc);
            }
            if (!any) {
                return 0;
            }
            continue;
        }
        assert_int_equal(json_object_size(arg), 1);
        op = json_object_iter_key(json_object_iter((json_t *)arg));
        value = json_object_iter_value(json_object_iter((json_t *)arg));
        assert_non_null(json_object_get(doc, name));
        cmp = collate(json_object_get(doc, name), value);
        if (strcmp(op, "$gt") == 0 ? cmp <= 0 : strcmp(op, "$gte") == 0 ? cmp < 0
            : strcmp(op, "$lt") == 0 ? cmp >= 0 : strcmp(op, "$lte") == 0 ? cmp > 0
            : cmp != 0 || strcmp(op, "$eq") != 0) {
            return 0;
        }
    }
    return 1;
}

/* Every row of three sort fields (ties on each) is a boundary, both
 * directions, both sort orders: beyond it are exactly the rows after it
 * in the order read; the first field's range stands at the top, and the
 * $or beside it is exact alone, as a backend that drops that range
 * (pouchdb-server, merging it with a selector's {"$gte": null}) needs. */
static void beyond_selects_exactly_the_rows_after(void **state)
{
    const char *names[] = { "x", "y", "z", NULL };
    const char *ys[] = { "A", "a", "b" };
    json_t *rows[36];
    int n = 0, r, s, descending, backward;

    /* in ascending order: x, then y, then z, then _id */
    for (r = 0; r < 36; r++) {
        rows[n++] = cp_json_pool_own(pool, json_pack("{s:i, s:s, s:i, s:s}", "x", r / 12,
                                                     "y", ys[r / 4 % 3], "z", r / 2 % 2,
                                                     "_id", r % 2 ? "d2" : "D1"));
    }
    for (descending = 0; descending <= 1; descending++) {
        cp_find_sort sort = sort_of(descending, names);

        for (backward = 0; backward <= 1; backward++) {
            int up = descending == backward;

            for (r = 0; r < n; r++) {
                json_t *key = cp_find_row_key(pool, &sort, rows[r]);
                json_t *beyond = cp_find_beyond(pool, &sort, key,
                                                json_string_value(json_object_get(rows[r], "_id")),
                                                backward);
                json_t *first = json_array_get(json_object_get(beyond, "$and"), 0);

                assert_non_null(json_object_get(first, "x"));
                assert_non_null(json_object_get(json_object_get(first, "x"),
                                                up ? "$gte" : "$lte"));
                for (s = 0; s < n; s++) {
                    const json_t *either = json_array_get(json_object_get(beyond, "$and"), 1);

                    if (matches(beyond, rows[s]) != (up ? s > r : s < r)
                        || matches(either, rows[s]) != (up ? s > r : s < r)) {
                        fail_msg("row %d beyond row %d (descending %d, backward %d): %s", s, r,
                                 descending, backward, cp_json_text(pool, beyond));
                    }
                }
            }
        }
    }
}

static void bodies_and_the_location_selector(void **state)
{
    const char *names[] = { "date", NULL };
    cp_find_sort sort = sort_of(0, names);
    cp_find_spec spec = { parse("{\"type\": \"post\"}"), &sort, NULL, NULL, NULL, CP_MANGO_UNSENT, CP_MANGO_UNSENT };
    const char *body;

    assert_string_equal(cp_find_body(pool, &spec, NULL, NULL, 0, 21),
                        "{\"selector\":{\"type\":\"post\"},\"sort\":[{\"date\":\"asc\"}],"
                        "\"limit\":21}");
    /* the Last page: from the end */
    assert_string_equal(cp_find_body(pool, &spec, NULL, NULL, 1, 21),
                        "{\"selector\":{\"type\":\"post\"},\"sort\":[{\"date\":\"desc\"}],"
                        "\"limit\":21}");
    /* a token's row: the location's selector always ANDed in */
    body = cp_find_body(pool, &spec, parse("[\"2020\"]"), "p\"1", 0, 21);
    assert_string_equal(body,
                        "{\"selector\":{\"$and\":[{\"type\":\"post\"},{\"$and\":["
                        "{\"date\":{\"$gte\":\"2020\"}},{\"$or\":[{\"date\":{\"$gt\":\"2020\"}},"
                        "{\"date\":{\"$eq\":\"2020\"},\"_id\":{\"$gt\":\"p\\\"1\"}}]}]}]},"
                        "\"sort\":[{\"date\":\"asc\"}],\"limit\":21}");
    assert_null(cp_find_body(pool, &spec, parse("[1, 2]"), "x", 0, 21));
}

/* CouchDB 3.4 reads {} among $and's as {"": {"$eq": {}}}, which matches no
 * document: a location of every document bounds by the token's row alone. */
static void bodies_of_every_document_bound_alone(void **state)
{
    const char *names[] = { "n", NULL };
    cp_find_sort sort = sort_of(0, names);
    cp_find_spec spec = { parse("{}"), &sort, NULL, NULL, NULL, CP_MANGO_UNSENT, CP_MANGO_UNSENT };

    assert_string_equal(cp_find_body(pool, &spec, parse("[1]"), "x", 0, 5),
                        "{\"selector\":{\"$and\":[{\"n\":{\"$gte\":1}},{\"$or\":["
                        "{\"n\":{\"$gt\":1}},{\"n\":{\"$eq\":1},\"_id\":{\"$gt\":\"x\"}}]}]},"
                        "\"sort\":[{\"n\":\"asc\"}],\"limit\":5}");
    assert_string_equal(cp_find_body(pool, &spec, NULL, NULL, 0, 5),
                        "{\"selector\":{},\"sort\":[{\"n\":\"asc\"}],\"limit\":5}");
}

/* A partition named per request goes into the URL as one path segment. */
static void urls_name_the_partition(void **state)
{
    cp_view view, partitioned;
    const char *url;

    assert_null(cp_view_init(pool, "http://h:5984/db/_find", &view));
    assert_true(view.is_find);
    assert_false(view.is_all_docs);
    assert_null(cp_plan_index_url(pool, &view, NULL, &url));
    assert_string_equal(url, "http://h:5984/db/_find");
    assert_null(cp_plan_index_url(pool, &view, "p/1 x", &url));
    assert_string_equal(url, "http://h:5984/db/_partition/p%2f1%20x/_find");
    assert_non_null(cp_plan_index_url(pool, &view, "_p", &url));
    assert_non_null(cp_plan_index_url(pool, &view, "..", &url));
    assert_null(cp_view_init(pool, "http://h:5984/db/_partition/p1/_find", &partitioned));
    assert_true(partitioned.is_find && partitioned.is_partitioned);
    assert_string_equal(partitioned.db_url, "http://h:5984/db");
    assert_non_null(cp_plan_index_url(pool, &partitioned, "p2", &url));
    assert_non_null(cp_view_init(pool, "http://h:5984/_find", &view));
}

static void bodies_name_the_index_and_the_fields_tokens_need(void **state)
{
    const char *names[] = { "date", "author.name", NULL };
    cp_find_sort sort = sort_of(1, names);
    cp_find_spec spec = { parse("{}"), &sort, "posts", "by-date",
                          parse("[\"title\", \"date\"]"), CP_MANGO_UNSENT,
                          CP_MANGO_UNSENT };

    assert_string_equal(cp_find_body(pool, &spec, NULL, NULL, 0, 3),
                        "{\"selector\":{},\"sort\":[{\"date\":\"desc\"},"
                        "{\"author.name\":\"desc\"}],\"limit\":3,"
                        "\"fields\":[\"title\",\"date\",\"_id\",\"author.name\"],"
                        "\"use_index\":[\"posts\",\"by-date\"],\"allow_fallback\":false}");
    spec.index_name = NULL;
    spec.fields = NULL;
    assert_string_equal(cp_find_body(pool, &spec, NULL, NULL, 0, 3),
                        "{\"selector\":{},\"sort\":[{\"date\":\"desc\"},"
                        "{\"author.name\":\"desc\"}],\"limit\":3,"
                        "\"use_index\":[\"posts\"],\"allow_fallback\":false}");
}

/* CouchPageUpdate and CouchPageStable: JSON booleans in the body, sent
 * when set. */
static void bodies_say_update_and_stable(void **state)
{
    const char *names[] = { "n", NULL };
    cp_find_sort sort = sort_of(0, names);
    cp_find_spec spec = { parse("{}"), &sort, NULL, NULL, NULL, CP_MANGO_FALSE, CP_MANGO_TRUE };

    assert_string_equal(cp_find_body(pool, &spec, NULL, NULL, 0, 5),
                        "{\"selector\":{},\"sort\":[{\"n\":\"asc\"}],\"limit\":5,"
                        "\"update\":false,\"stable\":true}");
    spec.update = CP_MANGO_TRUE;
    spec.stable = CP_MANGO_UNSENT;
    assert_string_equal(cp_find_body(pool, &spec, parse("[1]"), "x", 1, 5),
                        "{\"selector\":{\"$and\":[{\"n\":{\"$lte\":1}},{\"$or\":["
                        "{\"n\":{\"$lt\":1}},{\"n\":{\"$eq\":1},\"_id\":{\"$lt\":\"x\"}}]}]},"
                        "\"sort\":[{\"n\":\"desc\"}],\"limit\":5,\"update\":true}");
}

/* A location's rows for the walks below: sort value i / 3 (ties of three,
 * told apart by id), ids in the same order; deleted[i] leaves row i out. */
#define WALK_ROWS 40
static cp_row walk_rows[WALK_ROWS];
static int deleted[WALK_ROWS];

static void make_walk_rows(void)
{
    int i;

    for (i = 0; i < WALK_ROWS; i++) {
        memset(&walk_rows[i], 0, sizeof(walk_rows[i]));
        walk_rows[i].id = apr_psprintf(pool, "d%03d", i);
        walk_rows[i].key = cp_json_pool_own(pool, json_pack("[i]", i / 3));
        deleted[i] = 0;
    }
}

/* Where (key, id) lies among the walk's rows: 2 × the index of an equal
 * row, else 2 × the index of the next row − 1; compared as CouchDB would,
 * value then id. */
static int place_of(const json_t *key, const char *id)
{
    int value = (int)json_integer_value(json_array_get(key, 0)), i;

    for (i = 0; i < WALK_ROWS; i++) {
        int cmp = i / 3 != value ? (i / 3 < value ? -1 : 1) : strcmp(walk_rows[i].id, id);

        if (cmp == 0) {
            return 2 * i;
        }
        if (cmp > 0) {
            return 2 * i - 1;
        }
    }
    return 2 * WALK_ROWS - 1;
}

/* What CouchDB answers the body cp_find_body would make for token: the
 * rows beyond its row in the direction read, at most limit. */
static apr_array_header_t *walk_answer(const cp_find_token *token, int limit)
{
    apr_array_header_t *rows = apr_array_make(pool, limit, sizeof(const cp_row *));
    int backward = cp_find_reads_backward(token), place = 0, i;

    if (token->key) {
        place = place_of(token->key, token->docid);
    }
    for (i = backward ? WALK_ROWS - 1 : 0; i >= 0 && i < WALK_ROWS && rows->nelts < limit;
         i += backward ? -1 : 1) {
        if (deleted[i]) {
            continue;
        }
        if (token->from == CP_FIND_AFTER && 2 * i <= place) {
            continue;
        }
        if (token->from == CP_FIND_BEFORE && 2 * i >= place) {
            continue;
        }
        APR_ARRAY_PUSH(rows, const cp_row *) = &walk_rows[i];
    }
    return rows;
}

/* The page a token leads to, asked again as the module would when the
 * assembler says so. */
static cp_page walk_page(const cp_find_sort *sort, const char *text, int count, int links)
{
    cp_find_token token;
    cp_page page;
    cp_find_from again;

    assert_null(cp_find_token_decode(pool, text, sort, &token));
    again = cp_find_page_assemble(pool, &token, walk_answer(&token, cp_find_limit(count, links)),
                                  count, links, NULL, text, &page);
    if (again != token.from) {
        token.from = again;
        token.key = NULL;
        text = again == CP_FIND_LAST ? CP_TOKEN_LAST : NULL;
        assert_int_equal(cp_find_page_assemble(pool, &token,
                                               walk_answer(&token, cp_find_limit(count, links)),
                                               count, links, NULL, text, &page), again);
    }
    return page;
}

/* The walk's rows, as ids in order, not deleted. */
static const char *walk_ids(void)
{
    char *ids = "";
    int i;

    for (i = 0; i < WALK_ROWS; i++) {
        if (!deleted[i]) {
            ids = apr_pstrcat(pool, ids, walk_rows[i].id, " ", NULL);
        }
    }
    return ids;
}

static const char *page_ids(const cp_page *page)
{
    char *ids = "";
    int i;

    for (i = 0; i < page->rows->nelts; i++) {
        ids = apr_pstrcat(pool, ids, APR_ARRAY_IDX(page->rows, i, const cp_row *)->id, " ",
                          NULL);
    }
    return ids;
}

static void walks_both_ways_read_every_row_once(void **state)
{
    const char *names[] = { "n", NULL };
    cp_find_sort sort = sort_of(0, names);
    int count, links;

    make_walk_rows();
    for (count = 1; count <= 7; count++) {
        for (links = 0; links <= 2; links++) {
            const char *forward = "", *backward = "", *text = NULL;
            cp_page page;
            int pages = 0;

            do {
                page = walk_page(&sort, text, count, links);
                assert_true(page.rows->nelts == count || !page.next);
                assert_true(pages == 0 ? page.prev == NULL : page.prev != NULL);
                forward = apr_pstrcat(pool, forward, page_ids(&page), NULL);
                text = page.next;
            } while (text && ++pages < 100);
            assert_string_equal(forward, walk_ids());

            text = CP_TOKEN_LAST;
            pages = 0;
            do {
                page = walk_page(&sort, text, count, links);
                assert_true(pages == 0 ? page.next == NULL : page.next != NULL);
                backward = apr_pstrcat(pool, page_ids(&page), backward, NULL);
                text = page.prev;
            } while (text && ++pages < 100);
            assert_string_equal(backward, walk_ids());
        }
    }
}

static void links_name_the_pages_read_through(void **state)
{
    const char *names[] = { "n", NULL };
    cp_find_sort sort = sort_of(0, names);
    cp_page page, there;
    const cp_page_link *link;
    int i;

    make_walk_rows();
    page = walk_page(&sort, NULL, 5, 2);
    assert_int_equal(page.pages->nelts, 3);
    for (i = 0; i < 3; i++) {
        link = &APR_ARRAY_IDX(page.pages, i, cp_page_link);
        assert_int_equal(link->number, i);
        assert_int_equal(link->current, i == 0);
    }
    /* page +2 is the page after page +1 */
    there = walk_page(&sort, APR_ARRAY_IDX(page.pages, 1, cp_page_link).start, 5, 2);
    there = walk_page(&sort, there.next, 5, 2);
    assert_string_equal(page_ids(&there),
                        page_ids(&(cp_page){ .rows = walk_page(&sort,
                            APR_ARRAY_IDX(page.pages, 2, cp_page_link).start, 5, 2).rows }));
    /* read backward: the pages behind, this one, and next */
    page = walk_page(&sort, CP_TOKEN_LAST, 5, 2);
    assert_int_equal(page.pages->nelts, 3);
    link = &APR_ARRAY_IDX(page.pages, 0, cp_page_link);
    assert_int_equal(link->number, -2);
    there = walk_page(&sort, link->start, 5, 2);
    assert_string_equal(page_ids(&there), "d025 d026 d027 d028 d029 ");
    assert_true(APR_ARRAY_IDX(page.pages, 2, cp_page_link).current);
    assert_null(page.next);
    assert_true(page.last_is_current);
}

static void walks_survive_deleted_boundaries(void **state)
{
    const char *names[] = { "n", NULL };
    cp_find_sort sort = sort_of(0, names);
    cp_page first, second, back;
    int i;

    make_walk_rows();
    first = walk_page(&sort, NULL, 4, 0);
    second = walk_page(&sort, first.next, 4, 0);
    assert_string_equal(page_ids(&second), "d004 d005 d006 d007 ");
    /* the rows both tokens name go: the next page still starts after d007,
     * and back from the second page comes the first page, less d003 */
    deleted[3] = deleted[7] = deleted[4] = 1;
    assert_string_equal(page_ids(&(cp_page){ .rows = walk_page(&sort, second.next, 4, 0).rows }),
                        "d008 d009 d010 d011 ");
    back = walk_page(&sort, second.prev, 4, 0);
    assert_string_equal(page_ids(&back), "d000 d001 d002 ");
    assert_null(back.prev);
    /* every row before a page deleted: its prev leads to the first page */
    deleted[0] = deleted[1] = deleted[2] = 1;
    back = walk_page(&sort, second.prev, 4, 0);
    assert_string_equal(page_ids(&back), "d005 d006 d008 d009 ");
    assert_null(back.prev);
    /* every row after a page deleted: its next leads to the Last page */
    for (i = 8; i < WALK_ROWS; i++) {
        deleted[i] = 1;
    }
    back = walk_page(&sort, first.next, 4, 0);
    assert_string_equal(page_ids(&back), "d005 d006 ");
    assert_null(back.next);
    assert_false(back.last_is_current);
    back = walk_page(&sort, second.next, 4, 0);
    assert_string_equal(page_ids(&back), "d005 d006 ");
    assert_null(back.next);
    assert_null(back.prev);
    assert_true(back.last_is_current);
}

/* What the index's view answers the query cp_plan_keyset_page makes for
 * token: from the token's row, itself included, in the direction read, at
 * most limit, with CouchDB's offset (the rows passed over) and total_rows. */
static const cp_answer *view_answer(const cp_find_token *token, int limit)
{
    cp_answer *answer = apr_pcalloc(pool, sizeof(*answer));
    int backward = cp_find_reads_backward(token), place = 0, i;

    answer->rows = apr_pcalloc(pool, sizeof(cp_row) * (apr_size_t)(limit + 1));
    answer->offset = 0;
    answer->total_rows = 0;
    if (token->key) {
        place = place_of(token->key, token->docid);
    }
    for (i = backward ? WALK_ROWS - 1 : 0; i >= 0 && i < WALK_ROWS; i += backward ? -1 : 1) {
        if (deleted[i]) {
            continue;
        }
        answer->total_rows++;
        if (token->key && (backward ? 2 * i > place : 2 * i < place)) {
            answer->offset++;
        }
        else if (answer->row_count < (apr_size_t)limit) {
            answer->rows[answer->row_count++] = walk_rows[i];
        }
    }
    return answer;
}

/* The numbered page a token leads to, read as the module reads a numbered
 * _find page from its index's view (one query, the token's row left out),
 * asked again when the assembler says so. */
static cp_page walk_numbered_page(const cp_find_sort *sort, const char *text, int count,
                                  int links)
{
    apr_array_header_t *fields = apr_array_make(pool, 1, sizeof(const char *));
    cp_find_token token;
    cp_find_count counted;
    cp_page page;
    cp_find_from again;
    const cp_answer *answer;
    apr_array_header_t *rows;
    int dropped;

    APR_ARRAY_PUSH(fields, const char *) = "n";
    assert_null(cp_find_token_decode(pool, text, sort, &token));
    for (;;) {
        answer = view_answer(&token, cp_find_limit(count, links) + (token.key != NULL));
        rows = cp_find_index_rows(pool, answer, &token, sort, fields, &dropped);
        counted.total = answer->total_rows;
        counted.before = answer->offset + dropped;
        again = cp_find_page_assemble(pool, &token, rows, count, links, &counted, text, &page);
        if (again == token.from) {
            return page;
        }
        token.from = again;
        token.key = NULL;
        token.docid = NULL;
        text = again == CP_FIND_LAST ? CP_TOKEN_LAST : NULL;
    }
}

/* Live rows of the walk. */
static int walk_live(void)
{
    int i, n = 0;

    for (i = 0; i < WALK_ROWS; i++) {
        n += !deleted[i];
    }
    return n;
}

static void numbered_walks_are_aligned_and_exact(void **state)
{
    const char *names[] = { "n", NULL };
    cp_find_sort sort = sort_of(0, names);
    int count, links;

    make_walk_rows();
    for (count = 1; count <= 7; count++) {
        for (links = 0; links <= 2; links++) {
            const char *forward = "", *backward = "", *text = NULL;
            apr_int64_t last_number = (WALK_ROWS + count - 1) / count;
            cp_page page;
            int pages = 0;

            do {
                page = walk_numbered_page(&sort, text, count, links);
                assert_true(page.numbered);
                assert_int_equal(page.total_rows, WALK_ROWS);
                assert_int_equal(page.offset, pages * count);
                assert_int_equal(page.last_number, last_number);
                assert_true(pages == 0 ? page.prev == NULL : page.prev != NULL);
                assert_int_equal(page.prev_is_first, pages == 1);
                assert_int_equal(page.last_is_current, page.next == NULL);
                forward = apr_pstrcat(pool, forward, page_ids(&page), NULL);
                text = page.next;
            } while (text && ++pages < 100);
            assert_int_equal(pages + 1, last_number);
            assert_string_equal(forward, walk_ids());

            /* back from the Last page, which holds the remainder: every page
             * where the walk forward had it */
            text = CP_TOKEN_LAST;
            pages = 0;
            do {
                page = walk_numbered_page(&sort, text, count, links);
                assert_true(page.numbered);
                assert_int_equal(page.offset, (last_number - 1 - pages) * count);
                assert_true(pages == 0 ? page.next == NULL : page.next != NULL);
                assert_int_equal(page.last_is_current, pages == 0);
                if (links && page.pages->nelts) {
                    const cp_page_link *current = NULL;
                    int i;

                    for (i = 0; i < page.pages->nelts; i++) {
                        if (APR_ARRAY_IDX(page.pages, i, cp_page_link).current) {
                            current = &APR_ARRAY_IDX(page.pages, i, cp_page_link);
                        }
                    }
                    assert_non_null(current);
                    assert_int_equal(current->number, last_number - pages);
                }
                backward = apr_pstrcat(pool, page_ids(&page), backward, NULL);
                text = page.prev;
            } while (text && ++pages < 100);
            assert_string_equal(backward, walk_ids());
        }
    }
}

static void numbered_pages_know_their_ends_after_deletions(void **state)
{
    const char *names[] = { "n", NULL };
    cp_find_sort sort = sort_of(0, names);
    cp_page first, second, page;
    int i;

    make_walk_rows();
    first = walk_numbered_page(&sort, NULL, 4, 0);
    second = walk_numbered_page(&sort, first.next, 4, 0);
    assert_string_equal(page_ids(&second), "d004 d005 d006 d007 ");
    /* every row before the second page goes: it is the first now, by count */
    deleted[0] = deleted[1] = deleted[2] = deleted[3] = 1;
    page = walk_numbered_page(&sort, first.next, 4, 0);
    assert_string_equal(page_ids(&page), "d004 d005 d006 d007 ");
    assert_int_equal(page.offset, 0);
    assert_null(page.prev);
    assert_int_equal(page.total_rows, walk_live());
    /* the rows the tokens name go: no row lost, none repeated */
    deleted[7] = deleted[8] = 1;
    page = walk_numbered_page(&sort, second.next, 4, 0);
    assert_string_equal(page_ids(&page), "d009 d010 d011 d012 ");
    assert_int_equal(page.offset, 3);
    page = walk_numbered_page(&sort, page.prev, 4, 0);
    assert_string_equal(page_ids(&page), "d004 d005 d006 ");
    assert_null(page.prev);
    assert_int_equal(page.offset, 0);
    /* every row after a page read backward goes: it has no next */
    for (i = 9; i < WALK_ROWS; i++) {
        deleted[i] = 1;
    }
    page = walk_numbered_page(&sort, second.prev, 4, 0);
    assert_null(page.prev);
    page = walk_numbered_page(&sort, CP_TOKEN_LAST, 4, 0);
    assert_string_equal(page_ids(&page), "d004 d005 d006 ");
    assert_null(page.next);
    assert_null(page.prev);
    assert_true(page.last_is_current);
    assert_int_equal(page.last_number, 1);
    assert_string_equal(page.last, CP_TOKEN_LAST);
}

/* CouchDB's count disagreeing with the rows read (a backend that misreports
 * offsets): the page is numbered relative to itself, as from _find. */
static void a_count_that_disagrees_numbers_nothing(void **state)
{
    const char *names[] = { "n", NULL };
    cp_find_sort sort = sort_of(0, names);
    apr_array_header_t *fields = apr_array_make(pool, 1, sizeof(const char *));
    cp_find_token token = { CP_FIND_FIRST, NULL, NULL };
    const cp_answer *answer;
    apr_array_header_t *rows;
    cp_find_count counted;
    cp_page page;
    int dropped;

    make_walk_rows();
    APR_ARRAY_PUSH(fields, const char *) = "n";
    answer = view_answer(&token, 5);
    rows = cp_find_index_rows(pool, answer, &token, &sort, fields, &dropped);
    assert_int_equal(dropped, 0);
    counted.total = WALK_ROWS;
    counted.before = 3;      /* a first page after rows */
    assert_int_equal(cp_find_page_assemble(pool, &token, rows, 4, 0, &counted, NULL, &page),
                     CP_FIND_FIRST);
    assert_false(page.numbered);
    assert_int_equal(page.total_rows, -1);
    counted.before = 0;
    counted.total = 3;       /* fewer rows than were read */
    cp_find_page_assemble(pool, &token, rows, 4, 0, &counted, NULL, &page);
    assert_false(page.numbered);
    counted.total = -1;
    cp_find_page_assemble(pool, &token, rows, 4, 0, &counted, NULL, &page);
    assert_false(page.numbered);
    counted.total = 40;
    cp_find_page_assemble(pool, &token, rows, 4, 0, &counted, NULL, &page);
    assert_true(page.numbered);
}

/* The view key of a token's row: the location's equalities, then the
 * token's values for the index's fields after them; the token's values for
 * fields the equalities fix are never used. */
static void index_keys_keep_the_locations_equalities(void **state)
{
    apr_array_header_t *fields = apr_array_make(pool, 3, sizeof(const char *));
    const json_t *low = parse("[\"post\"]");

    APR_ARRAY_PUSH(fields, const char *) = "type";
    APR_ARRAY_PUSH(fields, const char *) = "group";
    assert_string_equal(cp_json_text(pool, cp_find_index_key(pool, fields, low,
                                                             parse("[\"g1\"]"))),
                        "[\"post\",\"g1\"]");
    assert_string_equal(cp_json_text(pool, cp_find_index_key(pool, fields, low,
                                                             parse("[\"other\",\"g1\"]"))),
                        "[\"post\",\"g1\"]");
    assert_string_equal(cp_json_text(pool, cp_find_index_key(pool, fields, NULL,
                                                             parse("[{\"$gt\":null},1]"))),
                        "[{\"$gt\":null},1]");
    assert_null(cp_find_index_key(pool, fields, NULL, parse("[1]")));
    assert_null(cp_find_index_key(pool, fields, low, parse("[]")));
    assert_null(cp_find_index_key(pool, fields, low, parse("{}")));
    APR_ARRAY_PUSH(fields, const char *) = "title";
    assert_string_equal(cp_json_text(pool, cp_find_index_key(pool, fields,
                                                             parse("[\"post\",\"g1\",\"t\"]"),
                                                             parse("[\"x\",\"y\",\"z\"]"))),
                        "[\"post\",\"g1\",\"t\"]");
}

/* The token's own row is left out only when it comes first; CouchDB's
 * count of the rest, from the probes' offsets, the way it was read. */
static void index_reads_leave_out_the_tokens_row_and_count_the_rest(void **state)
{
    const char *names[] = { "n", NULL };
    cp_find_sort sort = sort_of(0, names);
    apr_array_header_t *fields = apr_array_make(pool, 1, sizeof(const char *));
    apr_array_header_t *queries = apr_array_make(pool, 3, sizeof(cp_query));
    cp_find_token token = { CP_FIND_AFTER, NULL, "d005" };
    cp_answer probe_start = { 0 }, probe_end = { 0 }, read = { 0 };
    apr_array_header_t *rows;
    cp_find_count counted;
    cp_query *query;
    int dropped;

    make_walk_rows();
    APR_ARRAY_PUSH(fields, const char *) = "n";
    token.key = walk_rows[5].key;
    read.rows = &walk_rows[5];
    read.row_count = 3;
    rows = cp_find_index_rows(pool, &read, &token, &sort, fields, &dropped);
    assert_int_equal(dropped, 1);
    assert_int_equal(rows->nelts, 2);
    assert_string_equal(APR_ARRAY_IDX(rows, 0, const cp_row *)->id, "d006");
    token.docid = "d004";
    rows = cp_find_index_rows(pool, &read, &token, &sort, fields, &dropped);
    assert_int_equal(dropped, 0);
    assert_int_equal(rows->nelts, 3);

    probe_start.offset = 10;
    probe_end.offset = 20;
    read.total_rows = 100;
    read.offset = 30;
    query = apr_array_push(queries);
    memset(query, 0, sizeof(*query));
    query->role = CP_QUERY_RANGE_START;
    query->answer = &probe_start;
    query = apr_array_push(queries);
    memset(query, 0, sizeof(*query));
    query->role = CP_QUERY_RANGE_END;
    query->answer = &probe_end;
    query = apr_array_push(queries);
    memset(query, 0, sizeof(*query));
    query->role = CP_QUERY_FORWARD;
    query->answer = &read;
    cp_find_index_count(queries, 0, 1, &counted);
    assert_int_equal(counted.total, 70);
    assert_int_equal(counted.before, 21);
    cp_find_index_count(queries, 1, 0, &counted);
    assert_int_equal(counted.before, 10);
    /* a read that starts inside the rows the probe says precede the range */
    read.offset = 15;
    cp_find_index_count(queries, 1, 0, &counted);
    assert_int_equal(counted.total, -1);
    read.offset = -1;
    cp_find_index_count(queries, 0, 0, &counted);
    assert_int_equal(counted.before, -1);
    /* over the whole index: no probes */
    read.offset = 30;
    queries->nelts = 0;
    query = apr_array_push(queries);
    memset(query, 0, sizeof(*query));
    query->role = CP_QUERY_FORWARD;
    query->answer = &read;
    cp_find_index_count(queries, 0, 0, &counted);
    assert_int_equal(counted.total, 100);
    assert_int_equal(counted.before, 30);
}

static void hostile_tokens_are_refused(void **state)
{
    const char *names[] = { "date", "n", NULL };
    cp_find_sort sort = sort_of(0, names);
    cp_find_token token;
    const char *bad[] = {
        "[[1, 2], \"x\"]", "{\"a\": [[1, 2], \"x\"], \"b\": [[1, 2], \"x\"]}",
        "{\"c\": [[1, 2], \"x\"]}", "{\"a\": [[1, 2]]}", "{\"a\": [[1], \"x\"]}",
        "{\"a\": [[1, 2, 3], \"x\"]}", "{\"a\": [{\"$gt\": null}, \"x\"]}",
        "{\"a\": [[1, 2], 7]}", "{\"a\": [[1, 2], \"\"]}", "{\"a\": [[1, 2], \"x\\u0000y\"]}",
        "{\"a\": [[1, 2], \"x\", 1]}", "{\"a\": ", "last ", "",
        "{\"a\": [[1, 2], 123456789012345678901234567890]}",
    };
    apr_size_t i;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        if (!cp_find_token_decode(pool, bad[i], &sort, &token)) {
            fail_msg("token '%s' accepted", bad[i]);
        }
    }
    /* operators in a token are values: they reach CouchDB as arguments */
    assert_null(cp_find_token_decode(pool, "{\"b\": [[{\"$gt\": null}, {\"$or\": []}], \"x\"]}",
                                     &sort, &token));
    assert_int_equal(token.from, CP_FIND_BEFORE);
    assert_string_equal(beyond_text(&sort, cp_json_text(pool, token.key), token.docid, 1),
                        "{\"$and\":[{\"date\":{\"$lte\":{\"$gt\":null}}},{\"$or\":["
                        "{\"date\":{\"$lt\":{\"$gt\":null}}},"
                        "{\"date\":{\"$eq\":{\"$gt\":null}},\"n\":{\"$lt\":{\"$or\":[]}}},"
                        "{\"date\":{\"$eq\":{\"$gt\":null}},\"n\":{\"$eq\":{\"$or\":[]}},"
                        "\"_id\":{\"$lt\":\"x\"}}]}]}");
    assert_string_equal(cp_find_token_encode(pool, CP_FIND_AFTER, parse("[1, \"b\"]"), "d\"1"),
                        "{\"a\":[[1,\"b\"],\"d\\\"1\"]}");
}

/* A _find body read as the backend reads one: NULL, or why it is refused. */
static const char *read_find(const char *text, const cp_find_sort *sort,
                             const cp_answer **answer)
{
    return cp_find_read(pool, cp_response_padded(pool, text, strlen(text)), strlen(text), sort,
                        answer);
}

static void find_answers_are_rows_of_documents(void **state)
{
    const char *names[] = { "date", "author.name", NULL };
    cp_find_sort sort = sort_of(0, names);
    const cp_answer *answer;
    const cp_row *row;
    /* as CouchDB 3.4.3 writes it */
    const char *body =
        "{\"docs\":[\n"
        "{\"_id\":\"p\\u00e9\",\"_rev\":\"1-a\",\"date\":\"2020\",\"author\":{\"name\":\"Ann\"},"
        "\"n\":12345678901234567890123},\n"
        "{\"author\":{\"name\":{\"$gt\":null}},\"_id\":\"P2\",\"date\":\"2020\"}\n"
        "],\n\"bookmark\": \"g1AAAA\",\n"
        "\"warning\": \"No matching index found, create an index to optimize query time.\","
        "\n\"execution_stats\": {\"total_keys_examined\":2}}";

    assert_null(read_find(body, &sort, &answer));
    assert_int_equal(cp_answer_rows(answer), 2);
    assert_string_equal(answer->warning, "No matching index found, create an index to "
                                         "optimize query time.");
    row = cp_answer_row(answer, 0);
    assert_string_equal(row->id, "p\xc3\xa9");
    assert_string_equal(cp_json_text(pool, cp_row_key(row)), "[\"2020\",\"Ann\"]");
    /* the document as CouchDB sent it, wide integer and all */
    assert_int_equal(row->doc.text - answer->body, strstr(body, "{\"_id\"") - body);
    assert_int_equal(row->doc.len, strstr(body, "},\n{") + 1 - strstr(body, "{\"_id\""));
    assert_string_equal(cp_json_text(pool, cp_row_decode(pool, row, cp_row_find(row, row->doc,
                                                                                "n"))),
                        "12345678901234567890123");
    row = cp_answer_row(answer, 1);
    assert_string_equal(row->id, "P2");
    assert_string_equal(cp_json_text(pool, cp_row_key(row)), "[\"2020\",{\"$gt\":null}]");
    /* no warning, no docs */
    assert_null(read_find("{\"docs\":[],\"bookmark\":\"nil\"}", &sort, &answer));
    assert_int_equal(cp_answer_rows(answer), 0);
    assert_null(answer->warning);
}

static void find_answers_of_another_shape_are_refused(void **state)
{
    const char *names[] = { "date", NULL };
    cp_find_sort sort = sort_of(0, names);
    const cp_answer *answer;
    const struct {
        const char *body;
        const char *why;
    } bad[] = {
        { "[]", "not a JSON object" },
        { "7", "not a JSON object" },
        { "{\"rows\":[]}", "no docs array" },
        { "{\"docs\":{}}", "no docs array" },
        { "{\"docs\":[[]]}", "document 0 of the _find response is not an object" },
        { "{\"docs\":[{\"_id\":\"a\",\"date\":1},7]}", "document 1" },
        { "{\"docs\":[{\"date\":1}]}", "no _id" },
        { "{\"docs\":[{\"_id\":7,\"date\":1}]}", "no _id" },
        { "{\"docs\":[{\"_id\":\"\",\"date\":1}]}", "no _id" },
        { "{\"docs\":[{\"_id\":\"a\\u0000b\",\"date\":1}]}", "no _id" },
        { "{\"docs\":[{\"_id\":\"a\"}]}", "lacks a sort value" },
        { "{\"docs\":[{\"_id\":\"a\",\"date\":1}", "not JSON" },
        { "{\"docs\":[{\"_id\":\"a\",\"date\":01}]}", "not JSON" },
    };
    apr_size_t i;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        const char *why = read_find(bad[i].body, &sort, &answer);

        if (!why || !strstr(why, bad[i].why)) {
            fail_msg("'%s': %s", bad[i].body, why ? why : "accepted");
        }
    }
}

/* The rows of an index's view, keyed by all its fields, keyed again by
 * their sort values, each from its field's place in the view key. */
static const char *rekeyed(const char *const *sort_names, const char *const *index,
                           const char *key, const cp_row **same)
{
    cp_find_sort sort = sort_of(0, sort_names);
    apr_array_header_t *rows = apr_array_make(pool, 1, sizeof(const cp_row *));
    cp_row *row = apr_pcalloc(pool, sizeof(*row));
    const cp_row *after;

    row->id = "p1";
    row->key = cp_json_load(pool, key, strlen(key), NULL);
    APR_ARRAY_PUSH(rows, const cp_row *) = row;
    cp_find_key_index_rows(pool, &sort, fields_of(index), rows);
    after = APR_ARRAY_IDX(rows, 0, const cp_row *);
    *same = after == row ? row : NULL;
    assert_string_equal(after->id, "p1");
    return cp_json_text(pool, cp_row_key(after));
}

static void index_rows_are_keyed_by_their_sort_values(void **state)
{
    const char *const type_group[] = { "type", "group", NULL };
    const char *const type_author_date[] = { "type", "author", "date", NULL };
    const char *const by_group[] = { "group", NULL };
    const char *const by_author_date[] = { "author", "date", NULL };
    const char *const by_type_date[] = { "type", "date", NULL };
    const char *const by_author_type_date[] = { "author", "type", "date", NULL };
    const cp_row *same;

    (void)state;
    /* the sort leaves out the equality's field, names part of them, or
     * names them in another order */
    assert_string_equal(rekeyed(by_group, type_group, "[\"post\",\"g1\"]", &same), "[\"g1\"]");
    assert_null(same);
    assert_string_equal(rekeyed(by_author_date, type_author_date, "[\"post\",\"a\",1]", &same),
                        "[\"a\",1]");
    assert_string_equal(rekeyed(by_type_date, type_author_date, "[\"post\",\"a\",1]", &same),
                        "[\"post\",1]");
    assert_string_equal(rekeyed(by_author_type_date, type_author_date,
                                "[\"post\",\"a\",{\"x\":[2]}]", &same),
                        "[\"a\",\"post\",{\"x\":[2]}]");
    /* the sort is the index's fields: the row stays as it is */
    assert_string_equal(rekeyed(type_group, type_group, "[\"post\",\"g1\"]", &same),
                        "[\"post\",\"g1\"]");
    assert_non_null(same);
    /* a key of another shape than the index's is left as CouchDB sent it */
    assert_string_equal(rekeyed(by_author_date, type_author_date, "[\"post\"]", &same),
                        "[\"post\"]");
    assert_non_null(same);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        UNIT_TEST(sort_fields_step_through_members),
        UNIT_TEST(unusable_sort_fields_are_refused),
        UNIT_TEST(sort_param_says_each_direction),
        UNIT_TEST(row_keys_are_the_documents_sort_values),
        UNIT_TEST(beyond_is_the_exact_order_as_operators),
        UNIT_TEST(beyond_an_id_alone),
        UNIT_TEST(beyond_refuses_keys_of_another_shape),
        UNIT_TEST(values_couchdb_cannot_compare_bound_nothing),
        UNIT_TEST(beyond_selects_exactly_the_rows_after),
        UNIT_TEST(bodies_and_the_location_selector),
        UNIT_TEST(bodies_of_every_document_bound_alone),
        UNIT_TEST(urls_name_the_partition),
        UNIT_TEST(bodies_name_the_index_and_the_fields_tokens_need),
        UNIT_TEST(bodies_say_update_and_stable),
        UNIT_TEST(walks_both_ways_read_every_row_once),
        UNIT_TEST(links_name_the_pages_read_through),
        UNIT_TEST(walks_survive_deleted_boundaries),
        UNIT_TEST(numbered_walks_are_aligned_and_exact),
        UNIT_TEST(numbered_pages_know_their_ends_after_deletions),
        UNIT_TEST(a_count_that_disagrees_numbers_nothing),
        UNIT_TEST(index_keys_keep_the_locations_equalities),
        UNIT_TEST(index_reads_leave_out_the_tokens_row_and_count_the_rest),
        UNIT_TEST(hostile_tokens_are_refused),
        UNIT_TEST(find_answers_are_rows_of_documents),
        UNIT_TEST(find_answers_of_another_shape_are_refused),
        UNIT_TEST(index_rows_are_keyed_by_their_sort_values),
    };

    RUN_UNIT_TESTS("couchpage_find", tests);
}
