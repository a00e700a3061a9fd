/* SPDX-License-Identifier: Apache-2.0 */
/*
 * couchpage_find.c: a _find location's sort fields and selector checked at
 * start-up, and each page's _find request body built as keyset conditions
 * that CouchDB evaluates. Part of the httpd-free core: no httpd header, no
 * request_rec.
 */
#include "couchpage_find.h"

#include <apr_strings.h>
#include <apr_tables.h>
#include <string.h>

/* Splits a Mango field name at its unescaped dots ("a\.b" is one member,
 * "a.b"): NULL and *error set when a member is empty or a backslash
 * escapes anything but a dot. */
static const char *const *field_steps(apr_pool_t *pool, const char *name, const char **error)
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

const char *cp_find_sort_init(apr_pool_t *pool, const char *const *names, int count,
                              int descending, cp_find_sort *sort)
{
    cp_find_field *fields;
    int i, j;

    memset(sort, 0, sizeof(*sort));
    if (count < 1) {
        return "names no field";
    }
    fields = apr_pcalloc(pool, count * sizeof(*fields));
    for (i = 0; i < count; i++) {
        const char *error = NULL;

        if (sort->id_named) {
            return apr_psprintf(pool, "names %s after _id, whose values are unique: "
                                "_id must be the last field", names[i]);
        }
        if (!cp_json_pool_own(pool, json_string(names[i]))) {
            return "names a field that is not UTF-8";
        }
        if (names[i][0] == '$') {
            return apr_psprintf(pool, "names %s: a field cannot start with $", names[i]);
        }
        for (j = 0; j < i; j++) {
            if (strcmp(names[i], names[j]) == 0) {
                return apr_psprintf(pool, "names %s twice", names[i]);
            }
        }
        if (strcmp(names[i], "_id") == 0) {
            sort->id_named = 1;
            continue;
        }
        fields[sort->count].name = names[i];
        fields[sort->count].steps = field_steps(pool, names[i], &error);
        if (error) {
            return apr_psprintf(pool, "names %s, which %s", names[i], error);
        }
        sort->count++;
    }
    sort->fields = fields;
    sort->descending = descending != 0;
    return NULL;
}

/* {"NAME": VALUE}, VALUE taken (a new reference). */
static json_t *member(const char *name, json_t *value)
{
    json_t *object = json_object();

    json_object_set_new(object, name, value);
    return object;
}

json_t *cp_find_sort_param(apr_pool_t *pool, const cp_find_sort *sort, int reverse)
{
    const char *way = (sort->descending != (reverse != 0)) ? "desc" : "asc";
    json_t *param = cp_json_pool_own(pool, json_array());
    int i;

    for (i = 0; i < sort->count; i++) {
        json_array_append_new(param, member(sort->fields[i].name, json_string(way)));
    }
    if (sort->id_named) {
        json_array_append_new(param, member("_id", json_string(way)));
    }
    return param;
}

/* What a selector's operators take: see cp_find_check_selector. */
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
    const char *why = NULL;
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
        for (i = 0; json_is_string(value) && i < sizeof(types) / sizeof(types[0]); i++) {
            if (strcmp(json_string_value(value), types[i]) == 0) {
                return NULL;
            }
        }
        return apr_psprintf(pool, "%s takes one of \"null\", \"boolean\", \"number\", "
                            "\"string\", \"array\", \"object\"", name);
    case ARG_STRING:
        return json_is_string(value) ? NULL : apr_psprintf(pool, "%s takes a string", name);
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

const char *cp_find_check_selector(apr_pool_t *pool, const json_t *selector)
{
    if (!json_is_object(selector)) {
        return "must be a JSON object";
    }
    return check_object(pool, selector, 0);
}

json_t *cp_find_row_key(apr_pool_t *pool, const cp_find_sort *sort, const json_t *doc)
{
    json_t *key = cp_json_pool_own(pool, json_array());
    int i;

    for (i = 0; i < sort->count; i++) {
        const json_t *at = doc;
        const char *const *step;

        for (step = sort->fields[i].steps; *step && at; step++) {
            at = json_is_object(at) ? json_object_get(at, *step) : NULL;
        }
        if (!at) {
            return NULL;
        }
        json_array_append(key, (json_t *)at);
    }
    return key;
}

/* {"F": {"OP": VALUE}}, VALUE a new reference to the caller's. */
static json_t *condition(const char *field, const char *op, const json_t *value)
{
    return member(field, member(op, json_incref((json_t *)value)));
}

json_t *cp_find_beyond(apr_pool_t *pool, const cp_find_sort *sort, const json_t *key,
                       const char *docid, int backward)
{
    int up = sort->descending == (backward != 0);
    const char *beyond = up ? "$gt" : "$lt", *from = up ? "$gte" : "$lte";
    json_t *id = docid ? cp_json_pool_own(pool, json_string(docid)) : NULL;
    json_t *either, *all;
    int i, j;

    if (!json_is_array(key) || (int)json_array_size(key) != sort->count || !id) {
        return NULL;
    }
    if (sort->count == 0) {
        return cp_json_pool_own(pool, condition("_id", beyond, id));
    }
    either = json_array();
    for (i = 0; i <= sort->count; i++) {
        json_t *clause = json_object();

        for (j = 0; j < i; j++) {
            json_object_set_new(clause, sort->fields[j].name,
                                member("$eq", json_incref(json_array_get(key, j))));
        }
        if (i < sort->count) {
            json_object_set_new(clause, sort->fields[i].name,
                                member(beyond, json_incref(json_array_get(key, i))));
        }
        else {
            json_object_set_new(clause, "_id", member(beyond, json_incref(id)));
        }
        json_array_append_new(either, clause);
    }
    all = json_array();
    /* the range CouchDB's planner turns into where the index scan starts:
     * $or alone never narrows it (design: Mango's field ranges) */
    json_array_append_new(all, condition(sort->fields[0].name, from, json_array_get(key, 0)));
    json_array_append_new(all, member("$or", either));
    return cp_json_pool_own(pool, member("$and", all));
}

json_t *cp_find_fields_param(apr_pool_t *pool, const cp_find_spec *spec)
{
    json_t *fields;
    apr_size_t i;
    int k;

    if (!spec->fields) {
        return NULL;
    }
    fields = cp_json_pool_own(pool, json_copy((json_t *)spec->fields));
    for (k = -1; k < spec->sort->count; k++) {
        const char *name = k < 0 ? "_id" : spec->sort->fields[k].name;
        const json_t *asked;
        int present = 0;

        json_array_foreach(fields, i, asked) {
            present |= json_is_string(asked) && strcmp(json_string_value(asked), name) == 0;
        }
        if (!present) {
            json_array_append_new(fields, json_string(name));
        }
    }
    return fields;
}

const char *cp_find_body(apr_pool_t *pool, const cp_find_spec *spec, const json_t *key,
                         const char *docid, int backward, int limit)
{
    json_t *body = cp_json_pool_own(pool, json_object());
    json_t *selector = (json_t *)spec->selector, *fields;

    if (key) {
        json_t *beyond = cp_find_beyond(pool, spec->sort, key, docid, backward);
        json_t *both;

        if (!beyond) {
            return NULL;
        }
        both = json_array();
        json_array_append(both, selector);
        json_array_append(both, beyond);
        selector = cp_json_pool_own(pool, member("$and", both));
    }
    json_object_set(body, "selector", selector);
    json_object_set(body, "sort", cp_find_sort_param(pool, spec->sort, backward));
    json_object_set_new(body, "limit", json_integer(limit));
    if ((fields = cp_find_fields_param(pool, spec))) {
        json_object_set(body, "fields", fields);
    }
    if (spec->index_ddoc) {
        json_t *index = json_array();

        json_array_append_new(index, json_string(spec->index_ddoc));
        if (spec->index_name) {
            json_array_append_new(index, json_string(spec->index_name));
        }
        json_object_set_new(body, "use_index", index);
        json_object_set_new(body, "allow_fallback", json_false());
    }
    return cp_json_text(pool, body);
}
