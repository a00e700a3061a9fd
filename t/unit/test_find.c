/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of couchpage_find: sort fields read, and the keyset conditions
 * and _find bodies a page asks for, its answers (Mango's selectors and
 * indexes: test_mango.c; tokens and pages: test_keyset.c). That CouchDB reads
 * these conditions in its own order (mixed types, equal-collating strings,
 * ids of mixed case, nested fields, a cluster) was walked on CouchDB 3.4.3
 * page by page, both ways, against _find's own full order. */
#include "unit.h"
#include "unit_find.h"

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
    cp_find_spec spec = { parse("{\"type\": \"post\"}"), &sort, NULL, NULL, NULL, CP_MANGO_UNSENT, CP_MANGO_UNSENT, 0 };
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
    cp_find_spec spec = { parse("{}"), &sort, NULL, NULL, NULL, CP_MANGO_UNSENT, CP_MANGO_UNSENT, 0 };

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
                          CP_MANGO_UNSENT, 0 };

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
    /* an index learnt, not named: CouchDB's fallback stays */
    spec.index_fallback = 1;
    assert_string_equal(cp_find_body(pool, &spec, NULL, NULL, 0, 3),
                        "{\"selector\":{},\"sort\":[{\"date\":\"desc\"},"
                        "{\"author.name\":\"desc\"}],\"limit\":3,"
                        "\"use_index\":[\"posts\"]}");
}

/* CouchPageUpdate and CouchPageStable: JSON booleans in the body, sent
 * when set. */
static void bodies_say_update_and_stable(void **state)
{
    const char *names[] = { "n", NULL };
    cp_find_sort sort = sort_of(0, names);
    cp_find_spec spec = { parse("{}"), &sort, NULL, NULL, NULL, CP_MANGO_FALSE, CP_MANGO_TRUE, 0 };

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
        UNIT_TEST(find_answers_are_rows_of_documents),
        UNIT_TEST(find_answers_of_another_shape_are_refused),
        UNIT_TEST(index_rows_are_keyed_by_their_sort_values),
    };

    RUN_UNIT_TESTS("couchpage_find", tests);
}
