/* SPDX-License-Identifier: Apache-2.0 */
/*
 * couchpage_mango.c: Mango as a _find location writes it, apart from any
 * page: field names and their members, selectors checked at start-up and
 * filled with each request's values, the values CouchDB's operators can
 * compare, CouchPageUpdate and CouchPageStable as _find takes them, and
 * what a Mango JSON index is (its fields, read from its design document)
 * and which selectors are a key range of its view. Part of the httpd-free
 * core: no httpd header, no request_rec.
 */
#include "couchpage_mango.h"

#include <apr_strings.h>
#include <string.h>
#include <strings.h>

const char *const *cp_mango_field_steps(apr_pool_t *pool, const char *name, const char **error)
{
    apr_array_header_t *steps = apr_array_make(pool, 4, sizeof(const char *));
    char *member = apr_palloc(pool, strlen(name) + 1), *out = member;
    const char *in;

    for (in = name;; in++) {
        if (*in == '\\') {
            if (in[1] != '.') {
                *error = "a backslash escapes only a dot (a\\.b names the member \"a.b\")";
                return NULL;
            }
            *out++ = *++in;
            continue;
        }
        if (*in == '.' || *in == '\0') {
            if (out == member) {
                *error = "has an empty member (two dots, or a dot at an end)";
                return NULL;
            }
            *out++ = '\0';
            APR_ARRAY_PUSH(steps, const char *) = member;
            member = out;
            if (*in == '\0') {
                break;
            }
            continue;
        }
        *out++ = *in;
    }
    APR_ARRAY_PUSH(steps, const char *) = NULL;
    return (const char *const *)steps->elts;
}

/* What a selector's operators take: see cp_mango_check_selector. */
typedef enum {
    ARG_SELECTORS, /* an array of selectors */
    ARG_SELECTOR,  /* a selector (an object) */
    ARG_ARRAY,
    ARG_BOOLEAN,
    ARG_INTEGER,
    ARG_MOD,
    ARG_TYPE,
    ARG_STRING,
    ARG_ANY,
} argument_kind;

static const struct {
    const char *name;
    argument_kind takes;
} operators[] = {
    { "$and", ARG_SELECTORS },   { "$or", ARG_SELECTORS },    { "$nor", ARG_SELECTORS },
    { "$not", ARG_SELECTOR },    { "$elemMatch", ARG_SELECTOR },
    { "$allMatch", ARG_SELECTOR }, { "$keyMapMatch", ARG_SELECTOR },
    { "$in", ARG_ARRAY },        { "$nin", ARG_ARRAY },       { "$all", ARG_ARRAY },
    { "$exists", ARG_BOOLEAN },  { "$size", ARG_INTEGER },    { "$mod", ARG_MOD },
    { "$type", ARG_TYPE },       { "$regex", ARG_STRING },    { "$beginsWith", ARG_STRING },
    { "$eq", ARG_ANY },          { "$ne", ARG_ANY },          { "$gt", ARG_ANY },
    { "$gte", ARG_ANY },         { "$lt", ARG_ANY },          { "$lte", ARG_ANY },
};

/* How deep a selector may nest: CouchDB has no limit of its own, and a
 * configured selector deeper than this is a mistake. */
#define MAX_SELECTOR_DEPTH 64

static const char *check_object(apr_pool_t *pool, const json_t *object, int depth);

/* Whether value is what operator `name` takes. */
static const char *check_argument(apr_pool_t *pool, const char *name, argument_kind takes,
                                  const json_t *value, int depth)
{
    static const char *const types[] = { "null", "boolean", "number", "string",
                                         "array", "object" };
    const char *why = NULL, *type;
    apr_size_t i;
    const json_t *element;

    switch (takes) {
    case ARG_SELECTORS:
        if (!json_is_array(value) || json_array_size(value) == 0) {
            return apr_psprintf(pool, "%s takes a non-empty array of selectors", name);
        }
        json_array_foreach(value, i, element) {
            if (!json_is_object(element)) {
                return apr_psprintf(pool, "%s takes an array of selectors (objects)", name);
            }
            if ((why = check_object(pool, element, depth + 1))) {
                return why;
            }
        }
        return NULL;
    case ARG_SELECTOR:
        if (!json_is_object(value)) {
            return apr_psprintf(pool, "%s takes a selector (an object)", name);
        }
        return check_object(pool, value, depth + 1);
    case ARG_ARRAY:
        return json_is_array(value) ? NULL : apr_psprintf(pool, "%s takes an array", name);
    case ARG_BOOLEAN:
        return json_is_boolean(value) ? NULL : apr_psprintf(pool, "%s takes true or false", name);
    case ARG_INTEGER:
        return json_is_integer(value) ? NULL : apr_psprintf(pool, "%s takes an integer", name);
    case ARG_MOD:
        if (json_is_array(value) && json_array_size(value) == 2
            && json_is_integer(json_array_get(value, 0))
            && json_integer_value(json_array_get(value, 0)) != 0
            && json_is_integer(json_array_get(value, 1))) {
            return NULL;
        }
        return apr_psprintf(pool, "%s takes [divisor, remainder], integers, the divisor "
                            "not 0", name);
    case ARG_TYPE:
        type = cp_json_string_text(value);
        for (i = 0; type && i < sizeof(types) / sizeof(types[0]); i++) {
            if (strcmp(type, types[i]) == 0) {
                return NULL;
            }
        }
        return apr_psprintf(pool, "%s takes one of \"null\", \"boolean\", \"number\", "
                            "\"string\", \"array\", \"object\"", name);
    case ARG_STRING:
        /* a wide integer is a number, refused as 12345 is */
        return cp_json_is_string(value) ? NULL : apr_psprintf(pool, "%s takes a string", name);
    case ARG_ANY:
        return NULL;
    }
    return NULL;
}

/* An object of a selector: field names and operators, each value a
 * condition. A field's object value holds operators, or, without a "$"
 * name, is itself a condition on nested fields, as Mango reads it. */
static const char *check_object(apr_pool_t *pool, const json_t *object, int depth)
{
    const char *name, *why;
    const json_t *value;
    apr_size_t i;

    if (depth > MAX_SELECTOR_DEPTH) {
        return apr_psprintf(pool, "nests deeper than %d", MAX_SELECTOR_DEPTH);
    }
    json_object_foreach((json_t *)object, name, value) {
        if (name[0] != '$') {
            if (json_is_object(value) && (why = check_object(pool, value, depth + 1))) {
                return why;
            }
            continue;
        }
        if (strcmp(name, "$text") == 0) {
            return "uses $text, which needs a text index: a text index cannot sort";
        }
        for (i = 0; i < sizeof(operators) / sizeof(operators[0]); i++) {
            if (strcmp(name, operators[i].name) == 0) {
                break;
            }
        }
        if (i == sizeof(operators) / sizeof(operators[0])) {
            return apr_psprintf(pool, "uses %s, which is no Mango operator", name);
        }
        if ((why = check_argument(pool, name, operators[i].takes, value, depth))) {
            return why;
        }
    }
    return NULL;
}

const char *cp_mango_check_selector(apr_pool_t *pool, const json_t *selector)
{
    if (!json_is_object(selector)) {
        return "must be a JSON object";
    }
    return check_object(pool, selector, 0);
}

static int is_placeholder(const json_t *value)
{
    const char *text = cp_json_string_text(value);

    return text && strstr(text, "%{") != NULL;
}

void cp_mango_selector_placeholders(const json_t *selector, apr_array_header_t *out)
{
    const json_t *value;
    const char *name;
    apr_size_t i;
    int k;

    if (is_placeholder(selector)) {
        for (k = 0; k < out->nelts; k++) {
            if (strcmp(APR_ARRAY_IDX(out, k, const char *), json_string_value(selector)) == 0) {
                return;
            }
        }
        APR_ARRAY_PUSH(out, const char *) = json_string_value(selector);
    }
    else if (json_is_array(selector)) {
        json_array_foreach(selector, i, value) {
            cp_mango_selector_placeholders(value, out);
        }
    }
    else if (json_is_object(selector)) {
        json_object_foreach((json_t *)selector, name, value) {
            cp_mango_selector_placeholders(value, out);
        }
    }
}

int cp_mango_placeholder_is_json_string(const char *placeholder)
{
    static const char call[] = "%{json:";
    const char *p = placeholder + sizeof(call) - 1;
    int depth = 1;

    if (strncasecmp(placeholder, call, sizeof(call) - 1) != 0) {
        return 0;
    }
    /* ap_expr nests %{...} inside the call's argument; its first
     * unmatched } ends the call, which must end the string */
    for (; *p && depth > 0; p++) {
        if (p[0] == '%' && p[1] == '{') {
            depth++;
            p++;
        }
        else if (*p == '}') {
            depth--;
        }
    }
    return depth == 0 && *p == '\0';
}

static int fill_in(json_t *value, cp_mango_fill *fill, void *baton, const char **error);

/* A member or element of a selector being filled: *filled is fill's value
 * for it when it is a placeholder (NULL: it is not, and what is inside it
 * has been filled in place). 0 when fill fails. */
static int fill_inner(json_t *inner, cp_mango_fill *fill, void *baton, const char **error,
                      const json_t **filled)
{
    *filled = NULL;
    if (!is_placeholder(inner)) {
        return fill_in(inner, fill, baton, error);
    }
    *filled = fill(baton, json_string_value(inner), error);
    return *filled != NULL;
}

/* Replaces the placeholders inside value (a copy of the configured
 * selector's, owned by the caller) in place: 0 when fill fails. */
static int fill_in(json_t *value, cp_mango_fill *fill, void *baton, const char **error)
{
    const json_t *filled;
    json_t *inner;
    const char *name;
    apr_size_t i;

    if (json_is_array(value)) {
        json_array_foreach(value, i, inner) {
            if (!fill_inner(inner, fill, baton, error, &filled)
                || (filled && json_array_set(value, i, (json_t *)filled) != 0)) {
                return 0;
            }
        }
    }
    else if (json_is_object(value)) {
        json_object_foreach(value, name, inner) {
            if (!fill_inner(inner, fill, baton, error, &filled)
                || (filled && json_object_set(value, name, (json_t *)filled) != 0)) {
                return 0;
            }
        }
    }
    return 1;
}

const json_t *cp_mango_selector_fill(apr_pool_t *pool, const json_t *selector,
                                     cp_mango_fill *fill, void *baton, const char **error)
{
    apr_array_header_t *placeholders = apr_array_make(pool, 1, sizeof(const char *));
    json_t *copy;

    cp_mango_selector_placeholders(selector, placeholders);
    if (placeholders->nelts == 0) {
        return selector;
    }
    copy = cp_json_pool_own(pool, json_deep_copy(selector));
    if (!copy) {
        *error = "out of memory";
        return NULL;
    }
    return fill_in(copy, fill, baton, error) ? copy : NULL;
}

int cp_mango_value_comparable(const json_t *value)
{
    const json_t *member_value;
    const char *name;
    apr_size_t i;

    if (json_is_array(value)) {
        json_array_foreach(value, i, member_value) {
            if (json_is_array(member_value) || !cp_mango_value_comparable(member_value)) {
                return 0;
            }
        }
    }
    else if (json_is_object(value)) {
        json_object_foreach((json_t *)value, name, member_value) {
            if (!cp_mango_value_comparable(member_value)) {
                return 0;
            }
        }
    }
    return 1;
}

int cp_mango_flag_named(const char *word, cp_mango_flag *flag)
{
    if (!word) {
        *flag = CP_MANGO_UNSENT;
    }
    else if (strcmp(word, "true") == 0) {
        *flag = CP_MANGO_TRUE;
    }
    else if (strcmp(word, "false") == 0) {
        *flag = CP_MANGO_FALSE;
    }
    else {
        return 0;
    }
    return 1;
}

/* One of an index definition's fields: "F" or {"F": "asc"} (a JSON index
 * sorts ascending only); NULL for anything else. */
static const char *index_field(const json_t *field)
{
    const char *name = cp_json_string_text(field), *way;
    json_t *direction;

    if (name) {
        return name;
    }
    if (!json_is_object(field) || json_object_size(field) != 1) {
        return NULL;
    }
    json_object_foreach((json_t *)field, name, direction) {
        way = cp_json_string_text(direction);
        return way && !strcmp(way, "asc") ? name : NULL;
    }
    return NULL;
}

/* Whether a partial_filter_selector is there and selects: such an index
 * holds only some documents, so the module never chooses one itself (its
 * pages would leave out the others); CouchPageIndex may name one. */
static int filters(const json_t *object)
{
    const json_t *partial = json_object_get(object, "partial_filter_selector");

    return partial && !(json_is_object(partial) && json_object_size(partial) == 0);
}

/* An index definition's fields (def.fields) into *fields: NULL, or why
 * they cannot number pages. */
static const char *definition_fields(apr_pool_t *pool, const json_t *def,
                                     apr_array_header_t **fields)
{
    const json_t *list = json_object_get(def, "fields"), *each;
    const char *field;
    size_t i;

    *fields = NULL;
    if (!json_is_array(list) || json_array_size(list) == 0) {
        return "the index is not a JSON index (it has no fields)";
    }
    *fields = apr_array_make(pool, (int)json_array_size(list), sizeof(const char *));
    json_array_foreach(list, i, each) {
        if (!(field = index_field(each))) {
            *fields = NULL;
            return "an index field is not a name in ascending order";
        }
        APR_ARRAY_PUSH(*fields, const char *) = apr_pstrdup(pool, field);
    }
    return NULL;
}

const char *cp_mango_json_index(apr_pool_t *pool, const json_t *index, const char *who,
                                const char **ddoc, const char **name,
                                apr_array_header_t **fields)
{
    const json_t *def;
    const char *type;

    *ddoc = *name = NULL;
    *fields = NULL;
    if (!json_is_object(index)) {
        return apr_pstrcat(pool, who, " no index", NULL);
    }
    type = cp_json_string_text(json_object_get(index, "type"));
    if (!type || strcmp(type, "json")) {
        return apr_psprintf(pool, "%s an index of type %s, not a JSON index", who,
                            type ? type : "(none)");
    }
    *ddoc = cp_json_string_text(json_object_get(index, "ddoc"));
    *name = cp_json_string_text(json_object_get(index, "name"));
    if (!*ddoc || strncmp(*ddoc, "_design/", 8) || !(*ddoc)[8] || !*name || !**name) {
        *ddoc = *name = NULL;
        return apr_pstrcat(pool, who, " no design document and index name", NULL);
    }
    def = json_object_get(index, "def");
    if (filters(def)) {
        *ddoc = *name = NULL;
        return "the index has a partial_filter_selector: it holds only some documents";
    }
    *ddoc = apr_pstrdup(pool, *ddoc);
    *name = apr_pstrdup(pool, *name);
    return definition_fields(pool, def, fields);
}

const char *cp_mango_explain_index(apr_pool_t *pool, const char *text, apr_size_t len,
                                   const char **ddoc, const char **name,
                                   apr_array_header_t **fields)
{
    const json_t *explain = cp_json_load(pool, text, len, NULL);

    return cp_mango_json_index(pool, json_object_get(explain, "index"), "_explain names", ddoc,
                               name, fields);
}

const char *cp_mango_index_fields(apr_pool_t *pool, const char *text, apr_size_t len,
                                  const char *name, const char **view_name,
                                  apr_array_header_t **fields)
{
    const char *error = NULL, *field, *language;
    const json_t *ddoc = cp_json_load(pool, text, len, &error), *views, *view = NULL;
    const json_t *def, *list;
    json_t *found;

    *fields = NULL;
    *view_name = name;
    if (!json_is_object(ddoc)) {
        return "the design document is not a JSON object";
    }
    language = cp_json_string_text(json_object_get(ddoc, "language"));
    if (!language || strcmp(language, "query")) {
        return "the design document does not hold Mango indexes (its language is not "
               "\"query\")";
    }
    views = json_object_get(ddoc, "views");
    if (!json_is_object(views)) {
        return "the design document has no views";
    }
    if (name) {
        view = json_object_get(views, name);
    }
    else if (json_object_size(views) == 1) {
        json_object_foreach((json_t *)views, field, found) {
            view = found;
            *view_name = apr_pstrdup(pool, field);
        }
    }
    else {
        return "the design document holds several indexes: name one with CouchPageIndex";
    }
    if (!json_is_object(view)) {
        return "the design document has no such index";
    }
    def = json_object_get(json_object_get(view, "options"), "def");
    list = json_object_get(def, "fields");
    if (!json_is_array(list) || json_array_size(list) == 0) {
        return "the index is not a JSON index (it has no fields)";
    }
    /* a partial_filter_selector is no reason: the pages name the index
     * (use_index, no fallback), so their _find reads the very documents its
     * view holds */
    return definition_fields(pool, def, fields);
}

/* The value an equality condition of a selector names: a scalar, bare or
 * as {"$eq": scalar}; NULL for any other condition. Arrays and objects are
 * left out: a bare object is a condition on the field's members. */
static const json_t *equal_to(const json_t *condition)
{
    if (json_is_object(condition) && json_object_size(condition) == 1) {
        condition = json_object_get(condition, "$eq");
    }
    return condition && !json_is_object(condition) && !json_is_array(condition)
               ? condition : NULL;
}

/* The highest value a sort value may collate below: an object whose member
 * name is U+FFFF, the character CouchDB collates highest (verified on
 * 3.4.3, as for bounded tokens): above every scalar, array and object but
 * one whose first member is named U+FFFF itself. */
#define CP_MANGO_KEY_BEYOND "{\"\\uffff\":null}"

/* Whether a condition holds for every value a field may have in the
 * index (which holds only documents that have the field): {"$gte": null}
 * (null collates lowest) or {"$exists": true}, which operators write on a
 * sort field so that Mango picks the index that sorts (pouchdb-server
 * needs it). */
static int holds_for_all(const json_t *condition)
{
    const json_t *argument;

    if (!json_is_object(condition) || json_object_size(condition) != 1) {
        return 0;
    }
    return ((argument = json_object_get(condition, "$gte")) && json_is_null(argument))
           || ((argument = json_object_get(condition, "$exists")) && json_is_true(argument));
}

int cp_mango_field_place(const apr_array_header_t *fields, const char *name)
{
    int i;

    for (i = 0; i < fields->nelts; i++) {
        if (!strcmp(APR_ARRAY_IDX(fields, i, const char *), name)) {
            return i;
        }
    }
    return -1;
}

/* The bounds a condition on the first sort field after the equalities
 * puts on it: $gt, $gte and $lte, each of a scalar (*lower, *upper: NULL
 * when it has none; *above: the lower bound is $gt). 0 for any other
 * condition: $lt would need the view's end to leave out the keys of its
 * value alone, which a view query leaves out only with inclusive_end=false
 * (the plan's ends are inclusive). */
static int sort_field_bounds(const json_t *condition, const json_t **lower, int *above,
                             const json_t **upper)
{
    const char *op;
    const json_t *value;

    *lower = *upper = NULL;
    *above = 0;
    if (!json_is_object(condition) || json_object_size(condition) == 0) {
        return 0;
    }
    json_object_foreach((json_t *)condition, op, value) {
        if (json_is_object(value) || json_is_array(value)) {
            return 0;
        }
        if ((!strcmp(op, "$gt") || !strcmp(op, "$gte")) && !*lower) {
            *lower = value;
            *above = op[3] == '\0';
        }
        else if (!strcmp(op, "$lte") && !*upper) {
            *upper = value;
        }
        else {
            return 0;
        }
    }
    /* two bounds the view would take the wrong way round are CouchDB's 400,
     * where _find finds no row: only numbers are compared here */
    if (*lower && *upper && (!json_is_number(*lower) || !json_is_number(*upper)
                             || json_number_value(*lower) > json_number_value(*upper))) {
        return 0;
    }
    return 1;
}

/* prefix (the equalities' values) and then value, as compact JSON text;
 * beyond: then a key above every key that starts so. */
static const char *range_key(apr_pool_t *pool, const json_t *prefix, const json_t *value,
                             int beyond)
{
    json_t *key = cp_json_pool_own(pool, json_copy((json_t *)prefix));
    const char *text;

    if (value) {
        json_array_append(key, (json_t *)value);
    }
    text = cp_json_text(pool, key);
    if (!text || !beyond) {
        return text;
    }
    return apr_pstrcat(pool, apr_pstrndup(pool, text, strlen(text) - 1),
                       json_array_size(key) ? "," : "", CP_MANGO_KEY_BEYOND "]", NULL);
}

const char *cp_mango_index_range(apr_pool_t *pool, const json_t *selector,
                                 const cp_mango_field *sort, int sort_count,
                                 const apr_array_header_t *fields, const char **low,
                                 const char **high, const char **fixed)
{
    int equalities = 0, sorted = 0, i, place, above = 0, ranged = 0;
    const char *name;
    const json_t *lower = NULL, *upper = NULL;
    json_t *prefix, *condition;

    *low = *high = *fixed = NULL;
    if (!json_is_object(selector)) {
        return "the selector is not equalities on the index's leading fields";
    }
    /* the leading fields the selector fixes */
    prefix = cp_json_pool_own(pool, json_array());
    while (equalities < fields->nelts) {
        const json_t *value = equal_to(json_object_get(selector, APR_ARRAY_IDX(fields,
                                                       equalities, const char *)));

        if (!value) {
            break;
        }
        json_array_append(prefix, (json_t *)value);
        equalities++;
    }
    /* then at most a range on the next field, the first the rows sort by */
    if (equalities < fields->nelts) {
        condition = json_object_get(selector, APR_ARRAY_IDX(fields, equalities, const char *));
        ranged = condition && !holds_for_all(condition)
                 && sort_field_bounds(condition, &lower, &above, &upper);
    }
    /* besides them, only conditions every document of the index meets, on
     * the fields after them */
    json_object_foreach((json_t *)selector, name, condition) {
        place = cp_mango_field_place(fields, name);
        if (place < 0 || (place >= equalities && !(ranged && place == equalities)
                          && !holds_for_all(condition))) {
            return "the selector is not equalities on the index's leading fields, then "
                   "at most $gt, $gte or $lte on the next";
        }
    }
    /* sort fields the equalities fix order nothing; the rest are the index's */
    while (sorted < sort_count && (place = cp_mango_field_place(fields, sort[sorted].name)) >= 0
           && place < equalities) {
        sorted++;
    }
    if (sort_count - sorted != fields->nelts - equalities) {
        return "CouchPageSort is not the index's fields after the selector's";
    }
    for (i = sorted; i < sort_count; i++) {
        if (strcmp(sort[i].name,
                   APR_ARRAY_IDX(fields, equalities + i - sorted, const char *))) {
            return "CouchPageSort is not the index's fields after the selector's";
        }
    }
    if (equalities) {
        if (!(*fixed = cp_json_text(pool, prefix))) {
            return "the selector's values cannot be written";
        }
    }
    if (equalities == 0 && !ranged) {
        /* the whole index: the view pages and counts it without a range,
         * with no query for where a range starts and ends */
        return NULL;
    }
    if (equalities == fields->nelts) {
        /* the keys are the equalities alone: one key, its rows by id */
        *low = *high = *fixed;
        return NULL;
    }
    /* [v1..vk] (and w: [v1..vk, w], or, after w, [v1..vk, w, BEYOND]) to
     * [v1..vk, BEYOND] (or, to w, [v1..vk, w, BEYOND]); an end the
     * selector leaves open, without equalities, is the view's */
    if (lower || equalities) {
        *low = range_key(pool, prefix, lower, lower && above);
    }
    if (upper || equalities) {
        *high = range_key(pool, prefix, upper, 1);
    }
    if ((lower || equalities) && !*low) {
        return "the selector's values cannot be written";
    }
    if ((upper || equalities) && !*high) {
        return "the selector's values cannot be written";
    }
    return NULL;
}

const char *cp_mango_advised_index(apr_pool_t *pool, const json_t *selector,
                                   const cp_mango_field *sort, int sort_count, int partition)
{
    json_t *fields = json_array(), *body;
    const json_t *condition;
    const char *name;
    int i;

    if (json_is_object(selector)) {
        json_object_foreach((json_t *)selector, name, condition) {
            if (name[0] != '$' && strcmp(name, "_id") && equal_to(condition)) {
                json_array_append_new(fields, json_string(name));
            }
        }
    }
    for (i = 0; i < sort_count; i++) {
        const json_t *fixed = json_is_object(selector)
                              ? json_object_get(selector, sort[i].name) : NULL;

        if (!fixed || !equal_to(fixed)) {
            json_array_append_new(fields, json_string(sort[i].name));
        }
    }
    json_array_append_new(fields, json_string("_id"));
    body = cp_json_pool_own(pool, json_pack("{s:{s:o},s:s,s:b}", "index", "fields", fields,
                                            "type", "json", "partitioned", partition));
    return body ? cp_json_text(pool, body) : NULL;
}

/* Whether the selector fixes name by a top-level equality. */
static int fixed_by(const json_t *selector, const char *name)
{
    const json_t *condition = json_is_object(selector) ? json_object_get(selector, name) : NULL;

    return name[0] != '$' && strcmp(name, "_id") && condition && equal_to(condition);
}

int cp_mango_index_starts_at_row(const json_t *selector, const cp_mango_field *sort,
                                 int sort_count, const apr_array_header_t *fields)
{
    int n = fields->nelts, unfixed = 0, at, i;

    if (sort_count < 1 || n < 2 || strcmp(APR_ARRAY_IDX(fields, n - 1, const char *), "_id")) {
        return 0;
    }
    for (i = 0; i < sort_count; i++) {
        unfixed += !fixed_by(selector, sort[i].name);
    }
    at = n - 1 - unfixed;   /* where the unfixed sort fields start */
    if (at < 0) {
        return 0;
    }
    for (i = 0; i < at; i++) {
        if (!fixed_by(selector, APR_ARRAY_IDX(fields, i, const char *))) {
            return 0;
        }
    }
    for (i = 0; i < sort_count; i++) {
        if (!fixed_by(selector, sort[i].name)
            && strcmp(APR_ARRAY_IDX(fields, at++, const char *), sort[i].name)) {
            return 0;
        }
    }
    return 1;
}

int cp_mango_open_sort_fields(const json_t *selector, const cp_mango_field *sort,
                              int sort_count)
{
    int open = 0, i;

    for (i = 0; i < sort_count; i++) {
        open += !fixed_by(selector, sort[i].name);
    }
    return open;
}

int cp_mango_index_past_value(apr_pool_t *pool, const json_t *selector,
                              const cp_mango_field *sort, int sort_count,
                              const apr_array_header_t *fields, const json_t *key, int up,
                              int level, const char **startkey, const char **endkey)
{
    int n = fields->nelts, open = 0, at = -1, i;
    const json_t *value;
    json_t *prefix;

    if (!cp_mango_index_starts_at_row(selector, sort, sort_count, fields)
        || !json_is_array(key) || (int)json_array_size(key) != sort_count || level < 0
        || level >= (open = cp_mango_open_sort_fields(selector, sort, sort_count))) {
        return -1;
    }
    /* the index's key: the equalities' values, the open sort fields in
     * sort order, then _id (cp_mango_index_starts_at_row); the prefix: the
     * equalities, then the row's values of the open fields before the
     * level's, which the read stays among */
    prefix = cp_json_pool_own(pool, json_array());
    for (i = 0; i < n - 1 - open; i++) {
        json_array_append(prefix, (json_t *)equal_to(json_object_get(selector,
                                                     APR_ARRAY_IDX(fields, i, const char *))));
    }
    for (i = 0; i < sort_count; i++) {
        value = json_array_get(key, i);
        if (fixed_by(selector, sort[i].name)) {
            /* the row's key holds a fixed field at the selector's value */
            if (!json_equal((json_t *)value,
                            (json_t *)equal_to(json_object_get(selector, sort[i].name)))) {
                return -1;
            }
        }
        else if (!cp_mango_value_comparable(value)) {
            return -1;
        }
        else if ((int)json_array_size(prefix) < n - 2 - level) {
            json_array_append(prefix, (json_t *)value);
        }
        else if (at < 0) {
            at = i;
        }
    }
    value = json_array_get(key, at);
    /* up: after [..., v, every id], to the prefix's end; down: before
     * [..., v] (below its every [..., v, id]), to the prefix itself */
    *startkey = range_key(pool, prefix, value, up);
    *endkey = up ? range_key(pool, prefix, NULL, 1) : cp_json_text(pool, prefix);
    return *startkey && *endkey ? at : -1;
}

int cp_mango_index_envelope(apr_pool_t *pool, const json_t *selector,
                            const apr_array_header_t *fields, const char **low,
                            const char **high, const char **prefix)
{
    const json_t *condition, *value, *lower = NULL, *upper = NULL;
    json_t *fixed;
    const char *op;
    int k = 0;

    *low = *high = *prefix = NULL;
    if (!json_is_object(selector)) {
        return -1;
    }
    fixed = cp_json_pool_own(pool, json_array());
    while (k < fields->nelts && (value = equal_to(json_object_get(
                                     selector, APR_ARRAY_IDX(fields, k, const char *))))) {
        json_array_append(fixed, (json_t *)value);
        k++;
    }
    if (k == fields->nelts || !(*prefix = cp_json_text(pool, fixed))) {
        return -1;
    }
    condition = json_object_get(selector, APR_ARRAY_IDX(fields, k, const char *));
    if (json_is_object(condition)) {
        json_object_foreach((json_t *)condition, op, value) {
            if (json_is_object(value) || json_is_array(value) || json_is_null(value)) {
                continue;
            }
            if (!lower && (!strcmp(op, "$gt") || !strcmp(op, "$gte"))) {
                lower = value;
            }
            else if (!upper && (!strcmp(op, "$lt") || !strcmp(op, "$lte"))) {
                upper = value;
            }
        }
    }
    /* a view asked from a start above its end answers 400: only numbers
     * are compared here, and any other pair keeps its lower bound alone */
    if (lower && upper && (!json_is_number(lower) || !json_is_number(upper)
                           || json_number_value(lower) > json_number_value(upper))) {
        upper = NULL;
    }
    if (lower || k) {
        *low = range_key(pool, fixed, lower, 0);
    }
    if (upper || k) {
        *high = range_key(pool, fixed, upper, 1);
    }
    return ((lower || k) && !*low) || ((upper || k) && !*high) ? -1 : k;
}

const char *cp_mango_range_key(apr_pool_t *pool, const char *prefix, const json_t *value,
                               int beyond)
{
    const json_t *key = cp_json_load(pool, prefix, strlen(prefix), NULL);

    return json_is_array(key) ? range_key(pool, key, value, beyond) : NULL;
}
