/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of couchpage_count: CouchPageCount's words, a client's
 * Prefer, what a count may read, the count a token carries, and a page's
 * Content-Range. The walks themselves are test_serve_view's and
 * test_serve_find's. */
#include "unit.h"
#include "couchpage_count.h"
#include "couchpage_simdjson.h"

static const char *parse_words(const char *a, const char *b, cp_count_policy *policy)
{
    const char *argv[2] = { a, b };

    return cp_count_policy_parse(pool, b ? 2 : 1, argv, policy);
}

static void policies_are_read(void **state)
{
    cp_count_policy policy;

    assert_null(parse_words("exact", NULL, &policy));
    assert_int_equal(policy.mode, CP_COUNT_EXACT);
    assert_null(parse_words("None", NULL, &policy));
    assert_int_equal(policy.mode, CP_COUNT_NONE);
    assert_null(parse_words("capped", "250", &policy));
    assert_int_equal(policy.mode, CP_COUNT_CAPPED);
    assert_int_equal(policy.cap, 250);
    assert_null(parse_words("capped", "100000", &policy));
    assert_string_equal(parse_words("sometimes", NULL, &policy), "takes exact, capped N or none");
    assert_string_equal(parse_words("exact", "5", &policy), "takes exact, capped N or none");
    assert_string_equal(parse_words("capped", NULL, &policy),
                        "capped takes one number: capped N, the rows a count reads at most");
    assert_string_equal(parse_words("capped", "0", &policy),
                        "capped takes a whole number from 1 to 100000, not '0'");
    assert_non_null(parse_words("capped", "100001", &policy));
    assert_non_null(parse_words("capped", "1e3", &policy));
    assert_non_null(parse_words("capped", "-5", &policy));
    assert_non_null(parse_words("capped", " 5", &policy));
    assert_non_null(parse_words("capped", "99999999999999999999", &policy));
}

static void preferences_are_read(void **state)
{
    assert_int_equal(cp_count_prefer(pool, NULL), CP_PREFER_COUNT_UNSAID);
    assert_int_equal(cp_count_prefer(pool, ""), CP_PREFER_COUNT_UNSAID);
    assert_int_equal(cp_count_prefer(pool, "count=exact"), CP_PREFER_COUNT_EXACT);
    assert_int_equal(cp_count_prefer(pool, "return=minimal, count=estimated"),
                     CP_PREFER_COUNT_ESTIMATED);
    assert_int_equal(cp_count_prefer(pool, "COUNT = \"None\""), CP_PREFER_COUNT_NONE);
    assert_int_equal(cp_count_prefer(pool, "count=exact;x=1"), CP_PREFER_COUNT_EXACT);
    assert_int_equal(cp_count_prefer(pool, "count=planned"), CP_PREFER_COUNT_UNSAID);
    assert_int_equal(cp_count_prefer(pool, "counter=exact"), CP_PREFER_COUNT_UNSAID);
    assert_int_equal(cp_count_prefer(pool, "count=exact, count=none"), CP_PREFER_COUNT_NONE);
    assert_int_equal(cp_count_prefer(pool, "count"), CP_PREFER_COUNT_UNSAID);
    assert_int_equal(cp_count_prefer(pool, ",,count=\""), CP_PREFER_COUNT_UNSAID);
}

/* What a count may read, by policy and preference, and what is applied. */
static void caps_honour_preferences_within_the_policy(void **state)
{
    const cp_count_policy unset = { CP_COUNT_UNSET, 0 }, exact = { CP_COUNT_EXACT, 0 },
                          capped = { CP_COUNT_CAPPED, 50 }, none = { CP_COUNT_NONE, 0 };
    const char *applied;

    assert_int_equal(cp_count_cap(&unset, CP_PREFER_COUNT_UNSAID, &applied),
                     CP_COUNT_DEFAULT_CAP);
    assert_null(applied);
    assert_int_equal(cp_count_cap(&exact, CP_PREFER_COUNT_UNSAID, &applied), CP_COUNT_MAX);
    assert_int_equal(cp_count_cap(&exact, CP_PREFER_COUNT_EXACT, &applied), CP_COUNT_MAX);
    assert_string_equal(applied, "count=exact");
    assert_int_equal(cp_count_cap(&exact, CP_PREFER_COUNT_ESTIMATED, &applied),
                     CP_COUNT_DEFAULT_CAP);
    assert_string_equal(applied, "count=estimated");
    assert_int_equal(cp_count_cap(&exact, CP_PREFER_COUNT_NONE, &applied), 0);
    assert_string_equal(applied, "count=none");
    assert_int_equal(cp_count_cap(&capped, CP_PREFER_COUNT_EXACT, &applied), 50);
    assert_null(applied);
    assert_int_equal(cp_count_cap(&capped, CP_PREFER_COUNT_ESTIMATED, &applied), 50);
    assert_string_equal(applied, "count=estimated");
    assert_int_equal(cp_count_cap(&none, CP_PREFER_COUNT_EXACT, &applied), 0);
    assert_null(applied);
    assert_int_equal(cp_count_cap(&none, CP_PREFER_COUNT_ESTIMATED, &applied), 0);
    assert_null(applied);
    assert_int_equal(cp_count_cap(&none, CP_PREFER_COUNT_NONE, &applied), 0);
    assert_string_equal(applied, "count=none");
    assert_string_equal(cp_count_free_applied(CP_PREFER_COUNT_EXACT), "count=exact");
    assert_null(cp_count_free_applied(CP_PREFER_COUNT_NONE));
}

/* The count's _find: keys only, cap + 1 rows, the location's selector. */
static void the_count_reads_keys_only_and_cap_plus_one(void **state)
{
    const char *names[] = { "n" };
    cp_find_sort sort;
    cp_find_spec spec = { 0 };
    json_t *body;

    assert_null(cp_find_sort_init(pool, names, 1, 0, &sort));
    spec.selector = cp_json_pool_own(pool, json_pack("{s:{s:s}}", "tags", "$elemMatch", "a"));
    spec.sort = &sort;
    spec.index_ddoc = "by-n";
    body = cp_json_pool_own(pool, json_loads(cp_count_find_body(pool, &spec, 1000), 0, NULL));
    assert_int_equal(json_integer_value(json_object_get(body, "limit")), 1001);
    assert_string_equal(cp_json_text(pool, json_object_get(body, "fields")), "[\"_id\",\"n\"]");
    assert_string_equal(cp_json_text(pool, json_object_get(body, "selector")),
                        "{\"tags\":{\"$elemMatch\":\"a\"}}");
    assert_non_null(json_object_get(body, "use_index"));
    assert_null(cp_count_find_body(pool, &spec, 0));
}

static void counts_from_rows_and_tokens(void **state)
{
    cp_count_walk walk;
    cp_token token;
    cp_keyset_count counted;
    const cp_token_rows rows = { 1, 1, 1, 0 };

    cp_count_from_rows(5, 10, &walk);
    assert_true(walk.known && !walk.at_least && walk.total == 5);
    cp_count_from_rows(11, 10, &walk);
    assert_true(walk.known && walk.at_least && walk.total == 10);

    assert_null(cp_token_decode(pool, "{\"a\":[[1],\"x\"],\"t\":10,\"p\":3}", &rows, &token));
    assert_true(token.counted && token.count_total == 10 && token.count_place == 3);
    assert_true(cp_count_from_token(&token, 10, &walk));
    assert_true(walk.earlier && walk.total == 10 && walk.place == 3);
    assert_true(cp_count_keyset(&token, &walk, &counted));
    assert_int_equal(counted.before, 4);
    assert_int_equal(counted.total, 10);
    assert_false(cp_count_from_token(&token, 9, &walk));
    assert_false(cp_count_from_token(&token, 0, &walk));

    assert_null(cp_token_decode(pool, "{\"p\":3,\"b\":[[1],\"x\"],\"t\":10}", &rows, &token));
    assert_true(cp_count_from_token(&token, 100, &walk));
    assert_true(cp_count_keyset(&token, &walk, &counted));
    assert_int_equal(counted.before, 7);

    /* at least: the place may pass the total; the total within the cap
     * (a bounded count's matches among the rows it read may be fewer) */
    assert_null(cp_token_decode(pool, "{\"a\":[[1],\"x\"],\"t\":10,\"p\":30,\"m\":1}", &rows,
                                &token));
    assert_true(token.count_at_least);
    assert_false(cp_count_from_token(&token, 9, &walk));
    assert_true(cp_count_from_token(&token, 20, &walk));
    assert_true(walk.at_least && walk.total == 10 && walk.place == 30);
    assert_true(cp_count_from_token(&token, 10, &walk));
    assert_true(cp_count_keyset(&token, &walk, &counted));
    assert_int_equal(counted.before, 31);
    assert_true(counted.total > (apr_int64_t)1 << 53);

    /* an older token carries none */
    assert_null(cp_token_decode(pool, "{\"a\":[[1],\"x\"]}", &rows, &token));
    assert_false(token.counted);
    assert_false(cp_count_from_token(&token, 10, &walk));

    /* the first page counts; the Last page of an at-least count cannot be placed */
    memset(&token, 0, sizeof(token));
    token.from = CP_FROM_LAST;
    cp_count_from_rows(11, 10, &walk);
    assert_false(cp_count_keyset(&token, &walk, &counted));
    cp_count_from_rows(7, 10, &walk);
    assert_true(cp_count_keyset(&token, &walk, &counted));
    assert_int_equal(counted.before, 0);
    assert_int_equal(counted.total, 7);
}

static void forged_counts_are_refused_by_form(void **state)
{
    const cp_token_rows rows = { 1, 1, 1, 0 };
    const char *bad[] = {
        "{\"a\":[[1],\"x\"],\"t\":10}",
        "{\"a\":[[1],\"x\"],\"p\":1}",
        "{\"a\":[[1],\"x\"],\"t\":10,\"p\":10}",
        "{\"a\":[[1],\"x\"],\"t\":-1,\"p\":0}",
        "{\"a\":[[1],\"x\"],\"t\":\"10\",\"p\":0}",
        "{\"a\":[[1],\"x\"],\"t\":10.0,\"p\":0}",
        "{\"a\":[[1],\"x\"],\"t\":9007199254740992,\"p\":0}",
        "{\"a\":[[1],\"x\"],\"t\":10,\"p\":0,\"m\":2}",
        "{\"a\":[[1],\"x\"],\"m\":1}",
        "{\"a\":[[1],\"x\"],\"t\":10,\"p\":0,\"q\":1}",
        "{\"a\":[[1],\"x\"],\"b\":[[1],\"x\"]}",
        "{\"t\":10,\"p\":0}",
    };
    cp_token token;
    size_t i;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        if (!cp_token_decode(pool, bad[i], &rows, &token)) {
            fail_msg("accepted: %s", bad[i]);
        }
    }
    assert_null(cp_token_decode(pool, "{\"a\":[[1],\"x\"],\"t\":9007199254740991,\"p\":0}",
                                &rows, &token));
}

static void content_ranges(void **state)
{
    cp_page page;
    int i;

    memset(&page, 0, sizeof(page));
    page.rows = apr_array_make(pool, 4, sizeof(const cp_row *));
    page.offset = -1;
    page.total_rows = -1;
    assert_string_equal(cp_count_content_range(pool, &page), "items */*");
    page.numbered = 1;
    page.offset = 20;
    page.total_rows = 347;
    assert_string_equal(cp_count_content_range(pool, &page), "items */347");
    for (i = 0; i < 20; i++) {
        APR_ARRAY_PUSH(page.rows, const cp_row *) = NULL;
    }
    assert_string_equal(cp_count_content_range(pool, &page), "items 20-39/347");
    page.count_at_least = 1;
    assert_string_equal(cp_count_content_range(pool, &page), "items 20-39/*");
    page.count_at_least = 0;
    page.total_rows = -1;
    assert_string_equal(cp_count_content_range(pool, &page), "items 20-39/*");
}


/* --- a count bounded by its index's view ------------------------------ */

static apr_array_header_t *field_list(const char *a, const char *b)
{
    apr_array_header_t *fields = apr_array_make(pool, 2, sizeof(const char *));

    APR_ARRAY_PUSH(fields, const char *) = a;
    if (b) {
        APR_ARRAY_PUSH(fields, const char *) = b;
    }
    return fields;
}

/* The part of the index that holds every row a selector can match: its
 * equalities, then the bounds of the next field that CouchDB's range
 * takes, never narrower. */
static void envelopes_of_selectors(void **state)
{
    const char *low, *high, *prefix;

    assert_int_equal(cp_mango_index_envelope(pool, parse("{\"type\": \"post\", \"n\": {\"$gte\": "
                                                         "null}, \"tags\": {\"$elemMatch\": "
                                                         "{\"$eq\": \"a\"}}}"),
                                             field_list("type", "n"), &low, &high, &prefix), 1);
    assert_string_equal(low, "[\"post\"]");
    assert_string_equal(high, "[\"post\",{\"\\uffff\":null}]");
    assert_string_equal(prefix, "[\"post\"]");
    /* a residual on the open field leaves the part whole */
    assert_int_equal(cp_mango_index_envelope(pool, parse("{\"n\": {\"$gte\": null}, \"t\": "
                                                         "{\"$regex\": \"^T\"}}"),
                                             field_list("n", NULL), &low, &high, &prefix), 0);
    assert_null(low);
    assert_null(high);
    assert_string_equal(prefix, "[]");
    assert_int_equal(cp_mango_index_envelope(pool, parse("{\"n\": {\"$gt\": 5, \"$lte\": 9}}"),
                                             field_list("n", NULL), &low, &high, &prefix), 0);
    assert_string_equal(low, "[5]");
    assert_string_equal(high, "[9,{\"\\uffff\":null}]");
    /* bounds the module does not compare: the lower alone */
    assert_int_equal(cp_mango_index_envelope(pool, parse("{\"n\": {\"$gt\": \"a\", \"$lt\": 3}}"),
                                             field_list("n", NULL), &low, &high, &prefix), 0);
    assert_string_equal(low, "[\"a\"]");
    assert_null(high);
    assert_int_equal(cp_mango_index_envelope(pool, parse("{\"n\": {\"$gt\": 9, \"$lt\": 3}}"),
                                             field_list("n", NULL), &low, &high, &prefix), 0);
    assert_null(high);
    /* an equality of an object is no equality: the field is open */
    assert_int_equal(cp_mango_index_envelope(pool, parse("{\"type\": {\"a\": 1}}"),
                                             field_list("type", "n"), &low, &high, &prefix), 0);
    /* every field fixed: nothing to stop at */
    assert_int_equal(cp_mango_index_envelope(pool, parse("{\"type\": \"post\", \"x\": 1}"),
                                             field_list("type", NULL), &low, &high, &prefix),
                     -1);
    assert_int_equal(cp_mango_index_envelope(pool, parse("[]"), field_list("n", NULL), &low,
                                             &high, &prefix), -1);
    assert_string_equal(cp_mango_range_key(pool, "[\"post\"]", parse("3"), 1),
                        "[\"post\",3,{\"\\uffff\":null}]");
}

static cp_find_sort sort_n;

static cp_find_spec *spec_of(const char *selector, int descending)
{
    const char *names[] = { "n" };
    cp_find_spec *spec = apr_pcalloc(pool, sizeof(*spec));

    assert_null(cp_find_sort_init(pool, names, 1, descending, &sort_n));
    spec->selector = parse(selector);
    spec->sort = &sort_n;
    return spec;
}

/* The looks at the index's view: keys only, in the location's order. */
static void looks_read_the_view_in_the_locations_order(void **state)
{
    cp_find_spec *spec = spec_of("{}", 0);

    assert_string_equal(cp_count_look_query(pool, spec, "[\"a\"]", "[\"a\",{}]", 969, 32),
                        "?reduce=false&limit=32&skip=969&startkey=%5b%22a%22%5d"
                        "&endkey=%5b%22a%22%2c%7b%7d%5d");
    assert_string_equal(cp_count_look_query(pool, spec, NULL, NULL, 0, 21),
                        "?reduce=false&limit=21");
    spec->update = CP_MANGO_FALSE;
    spec->stable = CP_MANGO_TRUE;
    assert_string_equal(cp_count_look_query(pool, spec, NULL, NULL, 0, 21),
                        "?reduce=false&limit=21&update=false&stable=true");
    spec = spec_of("{}", 1);
    assert_string_equal(cp_count_look_query(pool, spec, "[1]", "[2]", 5, 3),
                        "?reduce=false&limit=3&skip=5&descending=true&startkey=%5b2%5d"
                        "&endkey=%5b1%5d");
    /* before a group: down from below its keys, or up from above them */
    spec = spec_of("{}", 0);
    assert_string_equal(cp_count_before_query(pool, spec, "[]", parse("7"), NULL, NULL),
                        "?reduce=false&limit=1&descending=true&startkey=%5b7%5d"
                        "&startkey_docid=");
    assert_string_equal(cp_count_before_query(pool, spec, "[\"p\"]", parse("7"), "[\"p\"]",
                                              NULL),
                        "?reduce=false&limit=1&descending=true&startkey=%5b%22p%22%2c7%5d"
                        "&startkey_docid=&endkey=%5b%22p%22%5d");
    spec = spec_of("{}", 1);
    assert_string_equal(cp_count_before_query(pool, spec, "[]", parse("7"), NULL, "[9]"),
                        "?reduce=false&limit=1&startkey=%5b7%2c%7b%22%5cuffff%22%3anull%7d%5d"
                        "&endkey=%5b9%5d");
}

/* A view answer of rows whose keys are [n], n from keys (JSON). */
static const char *view_answer(const char *keys)
{
    json_t *rows = json_array(), *each = parse(keys), *key;
    size_t i;

    json_array_foreach(each, i, key) {
        json_array_append_new(rows, json_pack("{s:s,s:[O],s:n}", "id",
                                              apr_psprintf(pool, "d%02d", (int)i), "key", key,
                                              "value"));
    }
    return cp_json_text(pool, cp_json_pool_own(pool, json_pack("{s:i,s:i,s:o}", "total_rows",
                                                               99, "offset", 0, "rows", rows)));
}

static cp_count_cut cut_of(const char *keys, apr_int64_t skip, int cap, const char **value)
{
    const char *text = view_answer(keys);
    char *padded = apr_pcalloc(pool, strlen(text) + CP_SJ_PADDING);
    const json_t *at;
    cp_count_cut cut;

    memcpy(padded, text, strlen(text));
    cut = cp_count_cut_from_look(pool, padded, strlen(text), 0, skip, cap, &at);
    *value = at ? cp_json_text(pool, at) : NULL;
    return cut;
}

/* Where a count stops: before the group of the (cap + 1)-th row. */
static void the_count_stops_before_the_last_rows_group(void **state)
{
    const char *value;
    char *bad = apr_pcalloc(pool, 16 + CP_SJ_PADDING);
    const json_t *at;

    assert_int_equal(cut_of("[1, 2, 3]", 0, 3, &value), CP_COUNT_CUT_NONE);
    assert_int_equal(cut_of("[1, 2, 3]", 5, 8, &value), CP_COUNT_CUT_NONE);
    assert_int_equal(cut_of("[1, 2, 2, 3]", 0, 3, &value), CP_COUNT_CUT_AT);
    assert_string_equal(value, "2");
    assert_int_equal(cut_of("[1, 3, 3, 3]", 0, 3, &value), CP_COUNT_CUT_AT);
    assert_string_equal(value, "1");
    /* 1 and 1.0 are one value to CouchDB */
    assert_int_equal(cut_of("[0, 1, 1.0]", 0, 2, &value), CP_COUNT_CUT_AT);
    assert_string_equal(value, "0");
    assert_int_equal(cut_of("[\"a\", \"a\"]", 0, 1, &value), CP_COUNT_CUT_EMPTY);
    assert_int_equal(cut_of("[\"a\", \"a\"]", 7, 8, &value), CP_COUNT_CUT_BEFORE);
    assert_string_equal(value, "\"a\"");
    memcpy(bad, "{\"rows\": 1}", 11);
    assert_int_equal(cp_count_cut_from_look(pool, bad, 11, 0, 0, 3, &at), CP_COUNT_CUT_UNREAD);
    assert_int_equal(cut_of("[1, 2]", 0, 1, &value), CP_COUNT_CUT_AT);
    /* keys without the open field */
    value = view_answer("[1, 2]");
    bad = apr_pcalloc(pool, strlen(value) + CP_SJ_PADDING);
    memcpy(bad, value, strlen(value));
    assert_int_equal(cp_count_cut_from_look(pool, bad, strlen(value), 1, 0, 1, &at),
                     CP_COUNT_CUT_UNREAD);
}

/* The count up to a value: the selector AND the open field's bound. */
static void the_cut_count_is_bounded_by_the_open_field(void **state)
{
    cp_find_spec *spec = spec_of("{\"n\": {\"$gte\": null}, \"t\": {\"$regex\": \"^T\"}}", 0);
    json_t *body;

    spec->index_ddoc = "by-n";
    body = parse(cp_count_cut_body(pool, spec, "n", parse("25"), 1000));
    assert_string_equal(cp_json_text(pool, json_object_get(body, "selector")),
                        "{\"$and\":[{\"n\":{\"$gte\":null},\"t\":{\"$regex\":\"^T\"}},"
                        "{\"n\":{\"$lte\":25}}]}");
    assert_int_equal(json_integer_value(json_object_get(body, "limit")), 1001);
    assert_string_equal(cp_json_text(pool, json_object_get(body, "fields")), "[\"_id\",\"n\"]");
    assert_non_null(json_object_get(body, "use_index"));
    spec = spec_of("{}", 1);
    body = parse(cp_count_cut_body(pool, spec, "n", parse("\"x\""), 5));
    assert_string_equal(cp_json_text(pool, json_object_get(body, "selector")),
                        "{\"$and\":[{\"n\":{\"$gte\":\"x\"}}]}");
}

/* A fake transport: GETs answered in turn from gets, _finds from finds;
 * what was asked kept. */
typedef struct {
    const char *gets[4];
    const char *finds[4];
    int got, found, logged, first;
    const char *asked[8];
    int asked_n;
    const char *logs[4];
    int count_unset;   /* the location's CouchPageCount left at its default */
} fake_backend;

static int fake_get(void *baton, const char *url, const char **text, apr_size_t *len,
                    cp_transport_failure *failure)
{
    fake_backend *b = baton;
    const char *answer = b->gets[b->got++];
    char *padded;

    b->asked[b->asked_n++] = apr_pstrcat(pool, "GET ", url, NULL);
    if (!answer) {
        failure->reason = "no answer";
        return 0;
    }
    padded = apr_pcalloc(pool, strlen(answer) + CP_SJ_PADDING);
    memcpy(padded, answer, strlen(answer));
    *text = padded;
    *len = strlen(answer);
    return 1;
}

static int fake_find(void *baton, const char *url, const char *body, const cp_find_sort *sort,
                     const cp_answer **answer, cp_transport_failure *failure)
{
    fake_backend *b = baton;
    const char *text = b->finds[b->found++];
    char *padded = apr_pcalloc(pool, strlen(text) + CP_SJ_PADDING);

    (void)url;
    (void)failure;
    b->asked[b->asked_n++] = apr_pstrcat(pool, "POST ", body, NULL);
    memcpy(padded, text, strlen(text));
    return !cp_find_read(pool, padded, strlen(text), sort, answer);
}

static int fake_first_time(void *baton, const void *key, apr_size_t len)
{
    fake_backend *b = baton;

    (void)key;
    (void)len;
    return b->first++ == 0;
}

static void fake_log(void *baton, int level, const char *code, const char *text)
{
    fake_backend *b = baton;

    (void)level;
    if (b->logged < 4) {
        b->logs[b->logged++] = apr_pstrcat(pool, code, " ", text, NULL);
    }
}

/* A _find answer of n rows, n from 0. */
static const char *find_answer(int n)
{
    json_t *docs = json_array();
    int i;

    for (i = 0; i < n; i++) {
        json_array_append_new(docs, json_pack("{s:s,s:i}", "_id",
                                              apr_psprintf(pool, "d%02d", i), "n", i));
    }
    return cp_json_text(pool, cp_json_pool_own(pool, json_pack("{s:o}", "docs", docs)));
}

static const char *count_with(fake_backend *b, const cp_find_spec *spec, const char *view,
                              int cap, cp_count_walk *walk)
{
    cp_transport tr = { 0 };
    cp_source src = { 0 };
    cp_transport_failure failure;
    const cp_answer *answer;

    tr.baton = b;
    tr.find = fake_find;
    tr.get = fake_get;
    tr.first_time = fake_first_time;
    tr.log = fake_log;
    src.uri = "/loc/";
    src.location = b;
    src.find = spec;
    src.count.mode = b->count_unset ? CP_COUNT_UNSET : CP_COUNT_CAPPED;
    src.count.cap = cap;
    return cp_count_read(pool, &tr, &src, "http://c/db/_find", view,
                         view ? field_list("n", NULL) : NULL, cap, walk, &answer, &failure);
}

/* A count past cap (3) rows: one look (asked as look_url, answered
 * look), then the _find up to the cut, which found rows: at least them. */
static void assert_cut_count(fake_backend *b, const cp_find_spec *spec, const char *view,
                             const char *look, int found, const char *look_url,
                             const char *cut)
{
    cp_count_walk walk;

    memset(b, 0, sizeof(*b));
    b->gets[0] = look;
    b->finds[0] = find_answer(found);
    assert_null(count_with(b, spec, view, 3, &walk));
    assert_true(walk.known && walk.at_least && walk.total == found);
    assert_int_equal(b->asked_n, 2);
    assert_string_equal(b->asked[0], look_url);
    assert_non_null(strstr(b->asked[1], cut));
    assert_int_equal(b->logged, 0);
}

/* What a count asks, each way it goes. */
static void a_count_reads_at_most_cap_plus_one_rows(void **state)
{
    cp_find_spec *spec = spec_of("{\"n\": {\"$gte\": null}, \"t\": {\"$regex\": \"^T\"}}", 0);
    const char *view = "http://c/db/_design/by-n/_view/by-n";
    const char *tied = apr_pstrcat(pool, "[", apr_pstrcat(pool, "5, 5, 5, 5, 5, 5, 5, 5, ",
                                                          "5, 5, 5, 5, 5, 5, 5, 5, ",
                                                          "5, 5, 5, 5, 5, 5, 5, 5, ",
                                                          "5, 5, 5, 5, 5, 5, 5, 5]", NULL),
                                   NULL);
    fake_backend b;
    cp_count_walk walk;

    /* past cap rows: a look, then the _find up to the group before */
    assert_cut_count(&b, spec, view, view_answer("[1, 1, 2, 2]"), 2,
                     "GET http://c/db/_design/by-n/_view/by-n?reduce=false&limit=4",
                     "{\"n\":{\"$lte\":1}}");
    assert_non_null(strstr(b.asked[1], "\"use_index\":[\"by-n\",\"by-n\"]"));

    /* at most cap rows: the selector alone, exact */
    memset(&b, 0, sizeof(b));
    b.gets[0] = view_answer("[1, 2]");
    b.finds[0] = find_answer(1);
    assert_null(count_with(&b, spec, view, 3, &walk));
    assert_true(walk.known && !walk.at_least && walk.total == 1);
    assert_null(strstr(b.asked[1], "$and"));

    /* the look's rows tie: one look more, before their group */
    memset(&b, 0, sizeof(b));
    b.gets[0] = view_answer(tied);
    b.gets[1] = view_answer("[4]");
    b.finds[0] = find_answer(3);
    assert_null(count_with(&b, spec, view, 40, &walk));
    assert_true(walk.at_least && walk.total == 3);
    assert_string_equal(b.asked[0], "GET http://c/db/_design/by-n/_view/by-n"
                                    "?reduce=false&limit=32&skip=9");
    assert_string_equal(b.asked[1], "GET http://c/db/_design/by-n/_view/by-n"
                                    "?reduce=false&limit=1&descending=true&startkey=%5b5%5d"
                                    "&startkey_docid=");
    assert_non_null(strstr(b.asked[2], "{\"n\":{\"$lte\":4}}"));
    /* and none before it: nothing to count, no _find */
    memset(&b, 0, sizeof(b));
    b.gets[0] = view_answer(tied);
    b.gets[1] = view_answer("[]");
    assert_null(count_with(&b, spec, view, 40, &walk));
    assert_true(walk.known && walk.at_least && walk.total == 0);
    assert_int_equal(b.asked_n, 2);

    /* a look that fails: the count's failure */
    memset(&b, 0, sizeof(b));
    assert_string_equal(count_with(&b, spec, view, 3, &walk), "no answer");

    /* no view: the selector's _find, said once */
    memset(&b, 0, sizeof(b));
    b.finds[0] = find_answer(4);
    b.finds[1] = find_answer(2);
    assert_null(count_with(&b, spec, NULL, 3, &walk));
    assert_true(walk.known && walk.at_least && walk.total == 3);
    assert_null(count_with(&b, spec, NULL, 3, &walk));
    assert_true(walk.known && !walk.at_least && walk.total == 2);
    assert_int_equal(b.asked_n, 2);
    assert_int_equal(b.logged, 1);
    assert_non_null(strstr(b.logs[0], "CP0434 the count of /loc/ reads every document"));
    /* and none where CouchPageCount is left at its default: said once */
    memset(&b, 0, sizeof(b));
    b.count_unset = 1;
    b.finds[0] = find_answer(4);
    assert_null(count_with(&b, spec, NULL, 3, &walk));
    assert_false(walk.known);
    assert_null(count_with(&b, spec, NULL, 3, &walk));
    assert_int_equal(b.asked_n, 0);
    assert_int_equal(b.logged, 1);
    assert_non_null(strstr(b.logs[0], "CP0434 the rows of /loc/ are not counted: no view"));
    assert_non_null(strstr(b.logs[0], "set CouchPageCount capped N"));
}

/* _all_docs' rows: ids as keys. */
static const char *all_docs_answer(const char *ids)
{
    json_t *rows = json_array(), *each = parse(ids), *id;
    size_t i;

    json_array_foreach(each, i, id) {
        json_array_append_new(rows, json_pack("{s:O,s:O,s:{}}", "id", id, "key", id, "value"));
    }
    return cp_json_text(pool, cp_json_pool_own(pool, json_pack("{s:i,s:i,s:o}", "total_rows",
                                                               99, "offset", 0, "rows", rows)));
}

/* Sorted by _id alone, no index known: the count bounded by _all_docs
 * beside the _find, between the selector's string bounds on _id, the cut
 * an _id; a bound of another kind leaves its end open. */
static void a_count_by_id_is_bounded_by_all_docs(void **state)
{
    const char *names[] = { "_id" };
    cp_find_sort by_id;
    cp_find_spec spec = { 0 };
    fake_backend b;
    cp_count_walk walk;

    (void)state;
    assert_null(cp_find_sort_init(pool, names, 1, 0, &by_id));
    assert_int_equal(by_id.count, 0);
    spec.sort = &by_id;
    spec.selector = parse("{\"_id\": {\"$gt\": \"r\", \"$lt\": 5}, \"t\": {\"$regex\": \"^T\"}}");
    assert_cut_count(&b, &spec, NULL, all_docs_answer("[\"r1\", \"r2\", \"r3\", \"r4\"]"), 1,
                     "GET http://c/db/_all_docs?reduce=false&limit=4&startkey=%22r%22",
                     "{\"_id\":{\"$lte\":\"r3\"}}");
    assert_null(strstr(b.asked[1], "use_index"));
    /* descending, at most cap rows: the selector alone, exact */
    assert_null(cp_find_sort_init(pool, names, 1, 1, &by_id));
    memset(&b, 0, sizeof(b));
    b.gets[0] = all_docs_answer("[\"r9\", \"r8\"]");
    b.finds[0] = find_answer(2);
    assert_null(count_with(&b, &spec, NULL, 3, &walk));
    assert_true(walk.known && !walk.at_least && walk.total == 2);
    assert_string_equal(b.asked[0], "GET http://c/db/_all_docs?reduce=false&limit=4"
                                    "&descending=true&endkey=%22r%22");
    /* an equality on _id fixes the one field: the _find alone, said */
    spec.selector = parse("{\"_id\": \"r1\"}");
    memset(&b, 0, sizeof(b));
    b.finds[0] = find_answer(1);
    assert_null(count_with(&b, &spec, NULL, 3, &walk));
    assert_int_equal(b.asked_n, 1);
    assert_int_equal(b.logged, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        UNIT_TEST(policies_are_read),
        UNIT_TEST(preferences_are_read),
        UNIT_TEST(caps_honour_preferences_within_the_policy),
        UNIT_TEST(the_count_reads_keys_only_and_cap_plus_one),
        UNIT_TEST(counts_from_rows_and_tokens),
        UNIT_TEST(forged_counts_are_refused_by_form),
        UNIT_TEST(content_ranges),
        UNIT_TEST(envelopes_of_selectors),
        UNIT_TEST(looks_read_the_view_in_the_locations_order),
        UNIT_TEST(the_count_stops_before_the_last_rows_group),
        UNIT_TEST(the_cut_count_is_bounded_by_the_open_field),
        UNIT_TEST(a_count_reads_at_most_cap_plus_one_rows),
        UNIT_TEST(a_count_by_id_is_bounded_by_all_docs),
    };
    RUN_UNIT_TESTS("count", tests);
}
