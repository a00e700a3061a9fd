/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of couchpage_mango: selectors checked as CouchDB 3.4 takes
 * them and filled with request values, CouchPageUpdate and CouchPageStable
 * as _find takes them, a Mango index's fields read from its design
 * document, and the selectors that are a range of its view. */
#include "unit.h"
#include "couchpage_mango.h"

#include <apr_lib.h>

static void selectors_couchdb_accepts_pass(void **state)
{
    const char *good[] = {
        "{}",
        "{\"type\": \"post\"}",
        "{\"type\": \"post\", \"date\": {\"$gt\": \"2020\", \"$lte\": \"2021\"}}",
        "{\"$and\": [{\"a\": 1}, {\"$or\": [{\"b\": {\"$exists\": true}}, {\"c\": null}]}]}",
        "{\"tags\": {\"$elemMatch\": {\"$eq\": \"x\"}}, \"n\": {\"$mod\": [3, 1]}}",
        "{\"title\": {\"$regex\": \"^A\"}, \"t\": {\"$type\": \"string\"}}",
        "{\"a\": {\"$in\": [1, 2]}, \"b\": {\"$nin\": []}, \"c\": {\"$all\": [1]}}",
        "{\"a\": {\"$size\": 2}, \"b\": {\"$not\": {\"$eq\": 1}}, \"c\": {\"$ne\": {\"$gt\": 1}}}",
        "{\"m\": {\"$keyMapMatch\": {\"$eq\": \"k\"}}, \"l\": {\"$allMatch\": {\"$gt\": 0}}}",
        "{\"author\": {\"name\": {\"$beginsWith\": \"An\"}}}",
        "{\"n\": {\"$gt\": 123456789012345678901234567890}, \"m\": -123456789012345678901234567890}",
        "{\"$nor\": [{\"a\": 1}], \"user\": \"%{json:%{REMOTE_USER}}\"}",
    };
    apr_size_t i;

    for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        const char *why = cp_mango_check_selector(pool, load(good[i]));

        if (why) {
            fail_msg("'%s' refused: %s", good[i], why);
        }
    }
}

static void selectors_couchdb_refuses_are_refused(void **state)
{
    const struct {
        const char *selector;
        const char *why;
    } bad[] = {
        { "[]", "JSON object" },
        { "\"post\"", "JSON object" },
        { "{\"a\": {\"$bogus\": 1}}", "$bogus" },
        { "{\"$text\": \"x\"}", "text index" },
        { "{\"$and\": {\"a\": 1}}", "$and" },
        { "{\"$or\": []}", "$or" },
        { "{\"$or\": [1]}", "$or" },
        { "{\"$or\": [{\"a\": {\"$bad\": 1}}]}", "$bad" },
        { "{\"a\": {\"$in\": 3}}", "$in" },
        { "{\"a\": {\"$exists\": 3}}", "$exists" },
        { "{\"a\": {\"$size\": \"x\"}}", "$size" },
        { "{\"a\": {\"$mod\": [0, 1]}}", "$mod" },
        { "{\"a\": {\"$mod\": [2]}}", "$mod" },
        { "{\"a\": {\"$type\": \"bogus\"}}", "$type" },
        { "{\"a\": {\"$regex\": 1}}", "$regex" },
        /* a wide integer is a number, as 12345 is: no string, no type name */
        { "{\"a\": {\"$regex\": 12345}}", "$regex" },
        { "{\"a\": {\"$regex\": 123456789012345678901234567890}}", "$regex" },
        { "{\"a\": {\"$type\": -123456789012345678901234567890}}", "$type" },
        { "{\"a\": {\"$not\": 1}}", "$not" },
        { "{\"a\": {\"b\": {\"$elemMatch\": []}}}", "$elemMatch" },
    };
    apr_size_t i;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        const char *why = cp_mango_check_selector(pool, load(bad[i].selector));

        if (!why || !strstr(why, bad[i].why)) {
            fail_msg("'%s': %s", bad[i].selector, why ? why : "accepted");
        }
    }
}

static void deep_selectors_are_refused(void **state)
{
    char *text = apr_pstrdup(pool, "1");
    int i;

    for (i = 0; i < 100; i++) {
        text = apr_psprintf(pool, "{\"a\": %s}", text);
    }
    assert_non_null(strstr(cp_mango_check_selector(pool, parse(text)), "deeper"));
}


/* The fill of the test: each placeholder's text, upper-cased, as a JSON
 * string; "FAIL" fails. */
static const json_t *fill_upper(void *baton, const char *placeholder, const char **error)
{
    char *text = apr_pstrdup(pool, placeholder), *c;

    (*(int *)baton)++;
    if (strstr(text, "FAIL")) {
        *error = "failed";
        return NULL;
    }
    for (c = text; *c; c++) {
        *c = (char)apr_toupper(*c);
    }
    return cp_json_pool_own(pool, json_string(text));
}

/* A placeholder is a request value only as one %{json:...} call, whose value
 * is a JSON string: anything else could give the request's own JSON. */
static void placeholders_are_one_json_call(void **state)
{
    assert_true(cp_mango_placeholder_is_json_string("%{json:%{HTTP:X-Group}}"));
    assert_true(cp_mango_placeholder_is_json_string("%{JSON:%{env:MATCH_POST}}"));
    assert_true(cp_mango_placeholder_is_json_string("%{json:post-%{HTTP:X-N}-%{HTTP:X-M}}"));
    assert_true(cp_mango_placeholder_is_json_string("%{json:}"));
    assert_false(cp_mango_placeholder_is_json_string("%{HTTP:X-Author}"));
    assert_false(cp_mango_placeholder_is_json_string("%{tolower:%{HTTP:X-Author}}"));
    assert_false(cp_mango_placeholder_is_json_string("x%{json:%{HTTP:X}}"));
    assert_false(cp_mango_placeholder_is_json_string("%{json:%{HTTP:X}} "));
    assert_false(cp_mango_placeholder_is_json_string("%{json:a}%{json:b}"));
    assert_false(cp_mango_placeholder_is_json_string("%{json:%{HTTP:X}"));
    assert_false(cp_mango_placeholder_is_json_string("%{jsonx:a}"));
    assert_false(cp_mango_placeholder_is_json_string("{\"$regex\": \"%{HTTP:X}\"}"));
}

/* Request-time strings are values put in place of the string, never text
 * spliced into the selector; names are never placeholders. */
static void selector_values_are_filled_in_as_values(void **state)
{
    const json_t *selector = parse("{\"a\": \"%{x}\", \"%{n}\": 1, \"$or\": [{\"b\": "
                                   "{\"$in\": [\"%{x}\", \"%{y\\\"}\"]}}], \"c\": \"plain\"}");
    apr_array_header_t *found = apr_array_make(pool, 2, sizeof(const char *));
    const char *error = NULL;
    const json_t *filled;
    int calls = 0;

    cp_mango_selector_placeholders(selector, found);
    assert_int_equal(found->nelts, 2);
    assert_string_equal(APR_ARRAY_IDX(found, 0, const char *), "%{x}");
    assert_string_equal(APR_ARRAY_IDX(found, 1, const char *), "%{y\"}");
    filled = cp_mango_selector_fill(pool, selector, fill_upper, &calls, &error);
    assert_non_null(filled);
    assert_string_equal(cp_json_text(pool, filled),
                        "{\"a\":\"%{X}\",\"%{n}\":1,\"$or\":[{\"b\":{\"$in\":[\"%{X}\","
                        "\"%{Y\\\"}\"]}}],\"c\":\"plain\"}");
    /* the configured selector is left as it was */
    assert_string_equal(json_string_value(json_object_get(selector, "a")), "%{x}");
    selector = parse("{\"a\": \"%{FAIL}\"}");
    assert_null(cp_mango_selector_fill(pool, selector, fill_upper, &calls, &error));
    assert_string_equal(error, "failed");
    selector = parse("{\"a\": \"b\"}");
    calls = 0;
    assert_ptr_equal(cp_mango_selector_fill(pool, selector, fill_upper, &calls, &error), selector);
    assert_int_equal(calls, 0);
}


/* CouchPageUpdate and CouchPageStable: JSON booleans, as _find takes them;
 * a view's update "lazy" is no word _find takes. */
static void update_and_stable_are_booleans(void **state)
{
    cp_mango_flag flag = CP_MANGO_TRUE;

    assert_true(cp_mango_flag_named(NULL, &flag));
    assert_int_equal(flag, CP_MANGO_UNSENT);
    assert_true(cp_mango_flag_named("true", &flag));
    assert_int_equal(flag, CP_MANGO_TRUE);
    assert_true(cp_mango_flag_named("false", &flag));
    assert_int_equal(flag, CP_MANGO_FALSE);
    assert_false(cp_mango_flag_named("lazy", &flag));
    assert_false(cp_mango_flag_named("True", &flag));
}

/* The fields of the index's design document, joined by ","; or why it
 * cannot number, prefixed "no: ". */
static const char *index_fields_of(const char *ddoc, const char *name)
{
    apr_array_header_t *fields;
    const char *view = NULL, *out = "";
    const char *why = cp_mango_index_fields(pool, ddoc, strlen(ddoc), name, &view, &fields);
    int i;

    if (why) {
        assert_null(fields);
        return apr_pstrcat(pool, "no: ", why, NULL);
    }
    assert_non_null(view);
    out = apr_pstrcat(pool, view, ": ", NULL);
    for (i = 0; i < fields->nelts; i++) {
        out = apr_pstrcat(pool, out, i ? "," : "", APR_ARRAY_IDX(fields, i, const char *), NULL);
    }
    return out;
}

/* A Mango JSON index's fields are read from its design document as CouchDB
 * 3.4.3 writes it (POST /DB/_index); what cannot number is refused. */
static void index_fields_are_read_from_the_design_document(void **state)
{
    const char *mango = "{\"_id\":\"_design/posts\",\"_rev\":\"1-a\",\"language\":\"query\","
                        "\"views\":{\"by-author\":{\"map\":{\"fields\":{\"author\":\"asc\","
                        "\"date\":\"asc\"},\"partial_filter_selector\":{}},\"reduce\":"
                        "\"_count\",\"options\":{\"def\":{\"fields\":[\"author\",{\"date\":"
                        "\"asc\"}]}}}}}";
    const char *two = "{\"language\":\"query\",\"views\":{\"a\":{\"options\":{\"def\":{"
                      "\"fields\":[\"x\"]}}},\"b\":{\"options\":{\"def\":{\"fields\":[\"y\","
                      "\"z\"]}}}}}";

    assert_string_equal(index_fields_of(mango, "by-author"), "by-author: author,date");
    assert_string_equal(index_fields_of(mango, NULL), "by-author: author,date");
    assert_string_equal(index_fields_of(two, "b"), "b: y,z");
    assert_true(strstr(index_fields_of(two, NULL), "several indexes"));
    assert_true(strstr(index_fields_of(two, "c"), "no such index"));
    assert_true(strstr(index_fields_of(mango, "by-date"), "no such index"));
    assert_true(strstr(index_fields_of("{\"views\":{\"v\":{\"map\":\"function(d){}\"}}}", NULL),
                       "not \"query\""));
    assert_true(strstr(index_fields_of("[1]", NULL), "not a JSON object"));
    assert_true(strstr(index_fields_of("{\"language\":", NULL), "not a JSON object"));
    assert_true(strstr(index_fields_of("{\"language\":\"query\",\"views\":{\"t\":{"
                                       "\"options\":{\"def\":{\"default_field\":{}}}}}}", NULL),
                       "not a JSON index"));
    assert_true(strstr(index_fields_of("{\"language\":\"query\",\"views\":{\"t\":{\"options\":"
                                       "{\"def\":{\"fields\":[{\"d\":\"desc\"}]}}}}}", NULL),
                       "ascending"));
    assert_true(strstr(index_fields_of("{\"language\":\"query\",\"views\":{\"t\":{\"options\":"
                                       "{\"def\":{\"fields\":[7]}}}}}", NULL), "ascending"));
    /* a partial index serves: the pages name it, and read what it holds */
    assert_string_equal(index_fields_of("{\"language\":\"query\",\"views\":{\"t\":{\"map\":{"
                                        "\"partial_filter_selector\":{\"a\":1}},\"options\":"
                                        "{\"def\":{\"fields\":[\"d\"]}}}}}", NULL), "t: d");
    assert_string_equal(index_fields_of("{\"language\":\"query\",\"views\":{\"t\":{\"options\":"
                                        "{\"def\":{\"fields\":[\"d\",\"_id\"],\"partial_filter_"
                                        "selector\":{\"a\":{\"$gt\":1}}}}}}}", NULL), "t: d,_id");
}

/* The index _explain names, its fields joined by ","; or why not,
 * prefixed "no: ". */
static const char *explained_index(const char *text)
{
    apr_array_header_t *fields;
    const char *ddoc, *name, *out;
    const char *why = cp_mango_explain_index(pool, text, strlen(text), &ddoc, &name, &fields);
    int i;

    if (why) {
        assert_null(fields);
        return apr_pstrcat(pool, "no: ", why, NULL);
    }
    out = apr_pstrcat(pool, ddoc, " ", name, ": ", NULL);
    for (i = 0; i < fields->nelts; i++) {
        out = apr_pstrcat(pool, out, i ? "," : "", APR_ARRAY_IDX(fields, i, const char *), NULL);
    }
    return out;
}

/* The index of CouchDB 3.4.3's _explain answers (captured from POST
 * /DB/_explain): a JSON index's design document, name and fields; a
 * special index (_all_docs), a partial index, no index or another
 * server's answer cannot number. */
static void the_index_explain_names_is_read(void **state)
{
    static const char json_index[] =
        "{\"dbname\":\"xp\",\"index\":{\"ddoc\":\"_design/by-td\",\"name\":\"td\",\"type\":\"json\",\"partit"
        "ioned\":false,\"def\":{\"fields\":[{\"type\":\"asc\"},{\"date\":\"asc\"}]}},\"partitioned\":fal"
        "se,\"selector\":{\"type\":{\"$eq\":\"post\"}},\"opts\":{\"use_index\":[],\"bookmark\":\"nil\",\"l"
        "imit\":8,\"skip\":0,\"sort\":{\"date\":\"asc\"},\"fields\":[],\"partition\":\"\",\"r\":1,\"conflic"
        "ts\":false,\"stale\":false,\"update\":true,\"stable\":false,\"execution_stats\":false,\"al"
        "low_fallback\":true},\"limit\":8,\"skip\":0,\"fields\":[],\"index_candidates\":[{\"index\":"
        "{\"ddoc\":\"_design/pf\",\"name\":\"pf\",\"type\":\"json\",\"partitioned\":false,\"def\":{\"field"
        "s\":[{\"date\":\"asc\"}],\"partial_filter_selector\":{\"type\":{\"$eq\":\"post\"}}}},\"analysi"
        "s\":{\"usable\":false,\"reasons\":[{\"name\":\"is_partial\"}],\"ranking\":2,\"covering\":fals"
        "e}},{\"index\":{\"ddoc\":null,\"name\":\"_all_docs\",\"type\":\"special\",\"def\":{\"fields\":[{"
        "\"_id\":\"asc\"}]}},\"analysis\":{\"usable\":false,\"reasons\":[{\"name\":\"field_mismatch\"}]"
        ",\"ranking\":1,\"covering\":null}}],\"selector_hints\":[{\"type\":\"json\",\"indexable_fiel"
        "ds\":[\"type\"],\"unindexable_fields\":[]}],\"mrargs\":{\"include_docs\":true,\"view_type\""
        ":\"map\",\"reduce\":false,\"partition\":null,\"start_key\":[\"post\"],\"end_key\":[\"post\",\"<"
        "MAX>\"],\"direction\":\"fwd\",\"stable\":false,\"update\":true,\"conflicts\":\"undefined\"},\""
        "covering\":false}";
    static const char partial_index[] =
        "{\"dbname\":\"xp\",\"index\":{\"ddoc\":\"_design/pf\",\"name\":\"pf\",\"type\":\"json\",\"partition"
        "ed\":false,\"def\":{\"fields\":[{\"date\":\"asc\"}],\"partial_filter_selector\":{\"type\":{\"$"
        "eq\":\"post\"}}}},\"partitioned\":false,\"selector\":{\"date\":{\"$gt\":null}},\"opts\":{\"use"
        "_index\":[\"pf\",\"pf\"],\"bookmark\":\"nil\",\"limit\":8,\"skip\":0,\"sort\":{\"date\":\"asc\"},\"f"
        "ields\":[],\"partition\":\"\",\"r\":1,\"conflicts\":false,\"stale\":false,\"update\":true,\"st"
        "able\":false,\"execution_stats\":false,\"allow_fallback\":false},\"limit\":8,\"skip\":0,\""
        "fields\":[],\"index_candidates\":[{\"index\":{\"ddoc\":\"_design/by-td\",\"name\":\"td\",\"typ"
        "e\":\"json\",\"partitioned\":false,\"def\":{\"fields\":[{\"type\":\"asc\"},{\"date\":\"asc\"}]}},"
        "\"analysis\":{\"usable\":false,\"reasons\":[{\"name\":\"field_mismatch\"}],\"ranking\":1,\"co"
        "vering\":false}},{\"index\":{\"ddoc\":null,\"name\":\"_all_docs\",\"type\":\"special\",\"def\":"
        "{\"fields\":[{\"_id\":\"asc\"}]}},\"analysis\":{\"usable\":false,\"reasons\":[{\"name\":\"field"
        "_mismatch\"}],\"ranking\":1,\"covering\":null}}],\"selector_hints\":[{\"type\":\"json\",\"in"
        "dexable_fields\":[\"date\"],\"unindexable_fields\":[]}],\"mrargs\":{\"include_docs\":true"
        ",\"view_type\":\"map\",\"reduce\":false,\"partition\":null,\"start_key\":[null],\"end_key\":"
        "[\"<MAX>\"],\"direction\":\"fwd\",\"stable\":false,\"update\":true,\"conflicts\":\"undefined\""
        "},\"covering\":false}";
    static const char all_docs[] =
        "{\"dbname\":\"xp\",\"index\":{\"ddoc\":null,\"name\":\"_all_docs\",\"type\":\"special\",\"def\":{\""
        "fields\":[{\"_id\":\"asc\"}]}},\"partitioned\":false,\"selector\":{\"_id\":{\"$gt\":\"a\"}},\"op"
        "ts\":{\"use_index\":[],\"bookmark\":\"nil\",\"limit\":8,\"skip\":0,\"sort\":{},\"fields\":[],\"p"
        "artition\":\"\",\"r\":1,\"conflicts\":false,\"stale\":false,\"update\":true,\"stable\":false,"
        "\"execution_stats\":false,\"allow_fallback\":true},\"limit\":8,\"skip\":0,\"fields\":[],\"i"
        "ndex_candidates\":[{\"index\":{\"ddoc\":\"_design/pf\",\"name\":\"pf\",\"type\":\"json\",\"parti"
        "tioned\":false,\"def\":{\"fields\":[{\"date\":\"asc\"}],\"partial_filter_selector\":{\"type\""
        ":{\"$eq\":\"post\"}}}},\"analysis\":{\"usable\":false,\"reasons\":[{\"name\":\"is_partial\"}],"
        "\"ranking\":2,\"covering\":false}},{\"index\":{\"ddoc\":\"_design/by-td\",\"name\":\"td\",\"typ"
        "e\":\"json\",\"partitioned\":false,\"def\":{\"fields\":[{\"type\":\"asc\"},{\"date\":\"asc\"}]}},"
        "\"analysis\":{\"usable\":false,\"reasons\":[{\"name\":\"field_mismatch\"}],\"ranking\":1,\"co"
        "vering\":false}}],\"selector_hints\":[{\"type\":\"json\",\"indexable_fields\":[\"_id\"],\"un"
        "indexable_fields\":[]}],\"mrargs\":{\"include_docs\":true,\"view_type\":\"map\",\"reduce\":"
        "false,\"partition\":null,\"start_key\":\"a\",\"end_key\":\"<MAX>\",\"direction\":\"fwd\",\"stab"
        "le\":false,\"update\":true,\"conflicts\":\"undefined\"},\"covering\":false}";

    (void)state;
    assert_string_equal(explained_index(json_index), "_design/by-td td: type,date");
    assert_true(strstr(explained_index(partial_index), "partial_filter_selector"));
    assert_true(strstr(explained_index(all_docs), "type special"));
    assert_true(strstr(explained_index("{\"dbname\":\"x\",\"index\":null}"), "no index"));
    assert_true(strstr(explained_index("{\"error\":\"not_found\"}"), "no index"));
    assert_true(strstr(explained_index("[]"), "no index"));
    assert_true(strstr(explained_index("{\"index\":{\"ddoc\":null,\"name\":\"x\","
                                       "\"type\":\"json\",\"def\":{\"fields\":[\"a\"]}}}"),
                       "no design document"));
    assert_true(strstr(explained_index("{\"index\":{\"ddoc\":\"_design/d\",\"name\":\"x\","
                                       "\"type\":\"json\",\"def\":{\"fields\":[{\"a\":"
                                       "\"desc\"}]}}}"), "ascending"));
    assert_string_equal(explained_index("{\"index\":{\"ddoc\":\"_design/d\",\"name\":\"x\","
                                        "\"type\":\"json\",\"def\":{\"fields\":[\"a.b\","
                                        "{\"c\":\"asc\"}],\"partial_filter_selector\":{}}}}"),
                        "_design/d x: a.b,c");
}

/* The sort fields before _id of names (NULL-terminated), as Mango
 * field names. */
typedef struct {
    const cp_mango_field *fields;
    int count;
} sort_fields;

static sort_fields sorted_by(const char *const *names)
{
    cp_mango_field *fields = apr_pcalloc(pool, 4 * sizeof(*fields));
    sort_fields sort = { fields, 0 };
    const char *error = NULL;

    for (; *names && strcmp(*names, "_id"); names++, sort.count++) {
        assert_true(sort.count < 4);
        fields[sort.count].name = *names;
        fields[sort.count].steps = cp_mango_field_steps(pool, *names, &error);
        assert_non_null(fields[sort.count].steps);
    }
    return sort;
}

/* "LOW .. HIGH", or why not, prefixed "no: ". */
static const char *range_of(const char *selector, const sort_fields *sort,
                            const char *const *index)
{
    const char *low, *high, *fixed;
    const char *why = cp_mango_index_range(pool, cp_json_load(pool, selector, strlen(selector),
                                                              NULL),
                                           sort->fields, sort->count, fields_of(index), &low,
                                           &high, &fixed);

    return why ? apr_pstrcat(pool, "no: ", why, NULL)
               : !low && !high ? "the whole view"
               : apr_pstrcat(pool, low ? low : "(null)", " .. ", high ? high : "(null)", NULL);
}

/* A selector of equalities on an index's leading fields, sorted by the
 * rest, is a range of the index's view; anything else is not. */
static void equalities_on_leading_fields_are_a_view_range(void **state)
{
    const char *const author_date[] = { "author", "date", NULL };
    const char *const type_author_date[] = { "type", "author", "date", NULL };
    const char *const date[] = { "date", NULL };
    const char *const by_date[] = { "date", NULL };
    const char *const by_date_id[] = { "date", "_id", NULL };
    const char *const by_id[] = { "_id", NULL };
    const char *const by_author[] = { "author", NULL };
    sort_fields sort = sorted_by(by_date), sort_id = sorted_by(by_date_id);
    sort_fields ids = sorted_by(by_id);

    assert_string_equal(range_of("{\"author\":\"ann\"}", &sort, author_date),
                        "[\"ann\"] .. [\"ann\",{\"\\uffff\":null}]");
    assert_string_equal(range_of("{\"author\":{\"$eq\":\"ann\"}}", &sort_id, author_date),
                        "[\"ann\"] .. [\"ann\",{\"\\uffff\":null}]");
    assert_string_equal(range_of("{\"author\":7}", &sort, author_date),
                        "[7] .. [7,{\"\\uffff\":null}]");
    /* the equalities in the index's order, whatever the selector's */
    assert_string_equal(range_of("{\"author\":null,\"type\":true}", &sort, type_author_date),
                        "[true,null] .. [true,null,{\"\\uffff\":null}]");
    /* no equality: the whole index, paged and counted without a range */
    assert_string_equal(range_of("{}", &sort, date), "the whole view");
    assert_string_equal(range_of("{\"date\":{\"$gte\":null}}", &sort, date), "the whole view");
    assert_string_equal(range_of("{\"date\":{\"$exists\":true}}", &sort_id, date),
                        "the whole view");
    /* sorted by _id alone: one key */
    assert_string_equal(range_of("{\"date\":1.5}", &ids, date), "[1.5] .. [1.5]");

    /* conditions every document of the index meets, on the sort fields */
    assert_string_equal(range_of("{\"author\":\"ann\",\"date\":{\"$gte\":null}}", &sort,
                                 author_date), "[\"ann\"] .. [\"ann\",{\"\\uffff\":null}]");
    assert_string_equal(range_of("{\"date\":{\"$exists\":true},\"author\":1}", &sort,
                                 author_date), "[1] .. [1,{\"\\uffff\":null}]");
    assert_string_equal(range_of("{\"author\":\"ann\",\"date\":{\"$gt\":null}}", &sort,
                                 author_date),
                        "[\"ann\",null,{\"\\uffff\":null}] .. [\"ann\",{\"\\uffff\":null}]");
    assert_true(strstr(range_of("{\"author\":\"ann\",\"date\":{\"$exists\":false}}", &sort,
                                author_date), "not equalities"));
    assert_true(strstr(range_of("{\"author\":{\"$gte\":null}}", &sort, author_date),
                       "CouchPageSort"));
    /* every field fixed: one key */
    assert_string_equal(range_of("{\"author\":\"ann\",\"date\":3}", &sort, author_date),
                        "[\"ann\",3] .. [\"ann\",3]");
    assert_true(strstr(range_of("{\"author\":\"ann\"}", &sort, date), "not equalities"));
    assert_true(strstr(range_of("{\"type\":\"post\"}", &sort, author_date), "not equalities"));
    assert_true(strstr(range_of("{\"author\":\"ann\",\"x\":1}", &sort, author_date),
                       "not equalities"));
    /* a bound on a field the rows do not sort by first */
    assert_true(strstr(range_of("{\"author\":{\"$gt\":\"ann\"}}", &sort, author_date),
                       "CouchPageSort"));
    assert_true(strstr(range_of("{\"author\":{\"$eq\":\"a\",\"$ne\":\"b\"}}", &sort,
                                author_date), "not equalities"));
    assert_true(strstr(range_of("{\"author\":{\"first\":\"ann\"}}", &sort, author_date),
                       "not equalities"));
    assert_true(strstr(range_of("{\"author\":[\"ann\"]}", &sort, author_date),
                       "not equalities"));
    assert_true(strstr(range_of("{\"author\":{\"$eq\":{\"a\":1}}}", &sort, author_date),
                       "not equalities"));
    assert_true(strstr(range_of("{\"$and\":[{\"author\":\"ann\"}]}", &sort, author_date),
                       "not equalities"));
    assert_true(strstr(range_of("{}", &sort, author_date), "CouchPageSort"));
    /* a sort field the selector fixes orders nothing: pouchdb-server's
     * queries name the index's fields whole */
    {
        const char *const by_type_date[] = { "type", "date", NULL };
        const char *const by_author_type_date[] = { "author", "type", "date", NULL };
        sort_fields typed = sorted_by(by_type_date);
        sort_fields all = sorted_by(by_author_type_date);

        assert_string_equal(range_of("{\"type\":\"post\",\"date\":{\"$gte\":null}}", &typed,
                                     by_type_date),
                            "[\"post\"] .. [\"post\",{\"\\uffff\":null}]");
        assert_string_equal(range_of("{\"type\":\"post\",\"author\":\"a\"}", &all,
                                     type_author_date),
                            "[\"post\",\"a\"] .. [\"post\",\"a\",{\"\\uffff\":null}]");
        /* an equality past a field the selector leaves open is no range */
        assert_true(strstr(range_of("{\"type\":\"post\",\"date\":1}", &sort, type_author_date),
                           "no: "));
    }
    {
        sort_fields by_a = sorted_by(by_author);

        assert_true(strstr(range_of("{\"date\":1}", &by_a, author_date), "not equalities"));
        assert_true(strstr(range_of("{\"author\":{\"$exists\":true}}", &by_a, author_date),
                           "CouchPageSort"));
    }
}

/* $gt, $gte and $lte on the first sort field after the equalities bound
 * the view's range by keys CouchDB collates: [.., w] starts at w's rows,
 * [.., w, {"\uffff": null}] after them (more index fields after it or
 * not); $lt, two bounds that are not numbers, and bounds of arrays or
 * objects are not ranges of the view. */
static void bounds_on_the_first_sort_field_are_a_view_range(void **state)
{
    static const char *const author_date[] = { "author", "date", NULL };
    static const char *const date_title[] = { "date", "title", NULL };
    static const char *const date[] = { "date", NULL };
    static const struct {
        const char *selector;
        int by_title;               /* sorted by date, then title */
        const char *const *index;
        const char *range;          /* NULL: no range */
    } cases[] = {
        { "{\"author\":\"ann\",\"date\":{\"$gte\":\"2020\"}}", 0, author_date,
          "[\"ann\",\"2020\"] .. [\"ann\",{\"\\uffff\":null}]" },
        { "{\"author\":\"ann\",\"date\":{\"$gt\":\"2020\"}}", 0, author_date,
          "[\"ann\",\"2020\",{\"\\uffff\":null}] .. [\"ann\",{\"\\uffff\":null}]" },
        { "{\"author\":\"ann\",\"date\":{\"$lte\":\"2020\"}}", 0, author_date,
          "[\"ann\"] .. [\"ann\",\"2020\",{\"\\uffff\":null}]" },
        /* no equality: an end the selector leaves open is the view's */
        { "{\"date\":{\"$gt\":5}}", 0, date, "[5,{\"\\uffff\":null}] .. (null)" },
        { "{\"date\":{\"$lte\":5}}", 0, date, "(null) .. [5,{\"\\uffff\":null}]" },
        { "{\"date\":{\"$gte\":1,\"$lte\":5}}", 0, date, "[1] .. [5,{\"\\uffff\":null}]" },
        /* more index fields after it, sorted by them too */
        { "{\"date\":{\"$gt\":\"x\"},\"title\":{\"$gte\":null}}", 1, date_title,
          "[\"x\",{\"\\uffff\":null}] .. (null)" },
        { "{\"date\":{\"$lt\":5}}", 0, date, NULL },
        { "{\"date\":{\"$gte\":\"a\",\"$lte\":\"b\"}}", 0, date, NULL },
        { "{\"date\":{\"$gte\":6,\"$lte\":5}}", 0, date, NULL },
        { "{\"date\":{\"$gt\":1,\"$gte\":2}}", 0, date, NULL },
        { "{\"date\":{\"$gt\":[1]}}", 0, date, NULL },
        { "{\"date\":{\"$gt\":1,\"$ne\":3}}", 0, date, NULL },
        /* a bound on a later field than the first sorted is no range */
        { "{\"date\":{\"$gte\":null},\"title\":{\"$gt\":\"x\"}}", 1, date_title, NULL },
    };
    sort_fields sort = sorted_by(date), sort_dt = sorted_by(date_title);
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *got = range_of(cases[i].selector, cases[i].by_title ? &sort_dt : &sort,
                                   cases[i].index);

        if (cases[i].range) {
            assert_string_equal(got, cases[i].range);
        }
        else {
            assert_true(!strncmp(got, "no: ", 4));
        }
    }
}

/* The index advised where the view cannot serve: the selector's
 * equalities, then the sort fields, then _id; partitioned for the
 * queries of a partition alone. */
static void the_advised_index_ends_in_id(void **state)
{
    const char *const by_cat[] = { "cat", NULL };
    const char *const by_type_date[] = { "type", "date", NULL };
    sort_fields cat = sorted_by(by_cat), type_date = sorted_by(by_type_date);
    const char *selector = "{\"type\":\"post\",\"cat\":{\"$gte\":null},\"tags\":"
                           "{\"$elemMatch\":{\"$eq\":\"b\"}},\"lang\":{\"$eq\":\"en\"}}";
    const json_t *parsed = cp_json_load(pool, selector, strlen(selector), NULL);

    (void)state;
    assert_string_equal(cp_mango_advised_index(pool, parsed, cat.fields, cat.count, 0),
                        "{\"index\":{\"fields\":[\"type\",\"lang\",\"cat\",\"_id\"]},"
                        "\"type\":\"json\",\"partitioned\":false}");
    /* a sort field the selector fixes is among the equalities, once */
    assert_string_equal(cp_mango_advised_index(pool, parsed, type_date.fields, type_date.count,
                                               1),
                        "{\"index\":{\"fields\":[\"type\",\"lang\",\"date\",\"_id\"]},"
                        "\"type\":\"json\",\"partitioned\":true}");
}

/* Index fields from a comma-separated list. */
static apr_array_header_t *fields_list(const char *list)
{
    apr_array_header_t *fields = apr_array_make(pool, 4, sizeof(const char *));
    char *last, *each;

    for (each = apr_strtok(apr_pstrdup(pool, list), ",", &last); each;
         each = apr_strtok(NULL, ",", &last)) {
        APR_ARRAY_PUSH(fields, const char *) = each;
    }
    return fields;
}

/* An index starts the ties at their row when every field of its key but
 * _id is an equality of the selector or an unfixed sort field, in order. */
static void indexes_that_start_the_ties_at_the_row(void **state)
{
    const char *const by_cat[] = { "cat", NULL };
    const char *const by_type_date[] = { "type", "date", NULL };
    const char *const by_a_b[] = { "a", "b", NULL };
    sort_fields cat = sorted_by(by_cat), type_date = sorted_by(by_type_date);
    sort_fields a_b = sorted_by(by_a_b);
    const char *selector = "{\"type\":\"post\",\"cat\":{\"$gte\":null},\"tags\":"
                           "{\"$elemMatch\":{\"$eq\":\"b\"}},\"lang\":{\"$eq\":\"en\"}}";
    const json_t *parsed = cp_json_load(pool, selector, strlen(selector), NULL);

    (void)state;
    assert_true(cp_mango_index_starts_at_row(parsed, cat.fields, cat.count,
                                             fields_list("cat,_id")));
    assert_true(cp_mango_index_starts_at_row(parsed, cat.fields, cat.count,
                                             fields_list("lang,type,cat,_id")));
    assert_true(cp_mango_index_starts_at_row(parsed, type_date.fields, type_date.count,
                                             fields_list("type,date,_id")));
    assert_true(cp_mango_index_starts_at_row(parsed, type_date.fields, type_date.count,
                                             fields_list("date,_id")));
    assert_true(cp_mango_index_starts_at_row(parsed, a_b.fields, a_b.count,
                                             fields_list("a,b,_id")));
    /* not ending in _id; a field before the sort's that nothing fixes; the
     * sort fields out of order or missing */
    assert_false(cp_mango_index_starts_at_row(parsed, cat.fields, cat.count,
                                              fields_list("cat")));
    assert_false(cp_mango_index_starts_at_row(parsed, cat.fields, cat.count,
                                              fields_list("tags,cat,_id")));
    assert_false(cp_mango_index_starts_at_row(parsed, a_b.fields, a_b.count,
                                              fields_list("b,a,_id")));
    assert_false(cp_mango_index_starts_at_row(parsed, a_b.fields, a_b.count,
                                              fields_list("a,_id")));
    assert_false(cp_mango_index_starts_at_row(parsed, cat.fields, cat.count,
                                              fields_list("cat,type,_id")));
    assert_false(cp_mango_index_starts_at_row(parsed, cat.fields, 0, fields_list("_id")));
}

/* Where the rows past a row's value of an open sort field start in
 * the index's view: past [equalities..., v, every id] up, before [...,
 * v] down, within the equalities' keys; the other sort fields must hold
 * the selector's values; with several open fields, a level each. */
static void the_next_value_is_read_past_the_rows_value(void **state)
{
    const char *const by_cat[] = { "cat", NULL };
    const char *const by_type_cat[] = { "type", "cat", NULL };
    const char *const by_a_b[] = { "a", "b", NULL };
    sort_fields cat = sorted_by(by_cat), type_cat = sorted_by(by_type_cat);
    sort_fields a_b = sorted_by(by_a_b);
    const char *selector = "{\"type\":\"post\",\"cat\":{\"$gte\":null},\"tags\":"
                           "{\"$elemMatch\":{\"$eq\":\"b\"}},\"lang\":{\"$eq\":\"en\"}}";
    const json_t *parsed = cp_json_load(pool, selector, strlen(selector), NULL);
    const char *start, *end;

    (void)state;
    assert_int_equal(cp_mango_index_past_value(pool, parsed, cat.fields, cat.count,
                                               fields_list("cat,_id"), parse("[\"c1\"]"), 1, 0,
                                               &start, &end), 0);
    assert_string_equal(start, "[\"c1\",{\"\\uffff\":null}]");
    assert_string_equal(end, "[{\"\\uffff\":null}]");
    assert_int_equal(cp_mango_index_past_value(pool, parsed, cat.fields, cat.count,
                                               fields_list("cat,_id"), parse("[\"c1\"]"), 0, 0,
                                               &start, &end), 0);
    assert_string_equal(start, "[\"c1\"]");
    assert_string_equal(end, "[]");
    /* the equalities first in the index's order; a sort field they fix
     * holds their value in the row's key */
    assert_int_equal(cp_mango_index_past_value(pool, parsed, type_cat.fields, type_cat.count,
                                               fields_list("lang,type,cat,_id"),
                                               parse("[\"post\",3]"), 1, 0, &start, &end), 1);
    assert_string_equal(start, "[\"en\",\"post\",3,{\"\\uffff\":null}]");
    assert_string_equal(end, "[\"en\",\"post\",{\"\\uffff\":null}]");
    assert_int_equal(cp_mango_index_past_value(pool, parsed, type_cat.fields, type_cat.count,
                                               fields_list("lang,type,cat,_id"),
                                               parse("[\"post\",3]"), 0, 0, &start, &end), 1);
    assert_string_equal(start, "[\"en\",\"post\",3]");
    assert_string_equal(end, "[\"en\",\"post\"]");
    /* a fixed sort value other than the selector's; two open fields; a
     * value Mango cannot compare; an index that does not start the ties */
    assert_int_equal(cp_mango_index_past_value(pool, parsed, type_cat.fields, type_cat.count,
                                               fields_list("type,cat,_id"),
                                               parse("[\"page\",3]"), 1, 0, &start, &end), -1);
    /* two open fields: level 0 is b among the keys of the row's a, level
     * 1 is a; there is no level 2 */
    assert_int_equal(cp_mango_index_past_value(pool, parsed, a_b.fields, a_b.count,
                                               fields_list("a,b,_id"), parse("[1,2]"), 1, 0,
                                               &start, &end), 1);
    assert_string_equal(start, "[1,2,{\"\\uffff\":null}]");
    assert_string_equal(end, "[1,{\"\\uffff\":null}]");
    assert_int_equal(cp_mango_index_past_value(pool, parsed, a_b.fields, a_b.count,
                                               fields_list("a,b,_id"), parse("[1,2]"), 1, 1,
                                               &start, &end), 0);
    assert_string_equal(start, "[1,{\"\\uffff\":null}]");
    assert_string_equal(end, "[{\"\\uffff\":null}]");
    assert_int_equal(cp_mango_index_past_value(pool, parsed, a_b.fields, a_b.count,
                                               fields_list("lang,type,a,b,_id"),
                                               parse("[1,2]"), 0, 1, &start, &end), 0);
    assert_string_equal(start, "[\"en\",\"post\",1]");
    assert_string_equal(end, "[\"en\",\"post\"]");
    assert_int_equal(cp_mango_index_past_value(pool, parsed, a_b.fields, a_b.count,
                                               fields_list("a,b,_id"), parse("[1,2]"), 1, 2,
                                               &start, &end), -1);
    assert_int_equal(cp_mango_index_past_value(pool, parsed, a_b.fields, a_b.count,
                                               fields_list("a,b,_id"), parse("[1,2]"), 1, -1,
                                               &start, &end), -1);
    assert_int_equal(cp_mango_index_past_value(pool, parsed, cat.fields, cat.count,
                                               fields_list("cat,_id"), parse("[[[1]]]"), 1, 0,
                                               &start, &end), -1);
    assert_int_equal(cp_mango_index_past_value(pool, parsed, cat.fields, cat.count,
                                               fields_list("cat"), parse("[1]"), 1, 0,
                                               &start, &end), -1);
    assert_int_equal(cp_mango_index_past_value(pool, parsed, cat.fields, cat.count,
                                               fields_list("cat,_id"), parse("[1,2]"), 1, 0,
                                               &start, &end), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        UNIT_TEST(selectors_couchdb_accepts_pass),
        UNIT_TEST(selectors_couchdb_refuses_are_refused),
        UNIT_TEST(deep_selectors_are_refused),
        UNIT_TEST(placeholders_are_one_json_call),
        UNIT_TEST(selector_values_are_filled_in_as_values),
        UNIT_TEST(update_and_stable_are_booleans),
        UNIT_TEST(index_fields_are_read_from_the_design_document),
        UNIT_TEST(the_index_explain_names_is_read),
        UNIT_TEST(equalities_on_leading_fields_are_a_view_range),
        UNIT_TEST(bounds_on_the_first_sort_field_are_a_view_range),
        UNIT_TEST(the_advised_index_ends_in_id),
        UNIT_TEST(indexes_that_start_the_ties_at_the_row),
        UNIT_TEST(the_next_value_is_read_past_the_rows_value),
    };

    RUN_UNIT_TESTS("couchpage_mango", tests);
}
