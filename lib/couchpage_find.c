/* SPDX-License-Identifier: Apache-2.0 */
/*
 * couchpage_find.c: a _find location's sort fields read at start-up, each
 * page's _find request body built as keyset conditions that CouchDB
 * evaluates, its tokens, its answer read and its page assembled, and a
 * numbered page read from its index's view. The selector and the index
 * are couchpage_mango's. Part of the httpd-free core: no httpd header, no
 * request_rec.
 */
#include "couchpage_find.h"
#include "couchpage_plan.h"

#include <apr_strings.h>
#include <apr_tables.h>
#include <string.h>


const char *cp_find_sort_init(apr_pool_t *pool, const char *const *names, int count,
                              int descending, cp_find_sort *sort)
{
    cp_mango_field *fields;
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
        fields[sort->count].steps = cp_mango_field_steps(pool, names[i], &error);
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
    return cp_find_beyond_part(pool, sort, key, docid, backward, CP_FIND_BEYOND);
}

static json_t *beyond_within(apr_pool_t *pool, const cp_find_sort *sort, const json_t *key,
                              const char *docid, int backward, cp_find_part part, int within);

json_t *cp_find_beyond_part(apr_pool_t *pool, const cp_find_sort *sort, const json_t *key,
                            const char *docid, int backward, cp_find_part part)
{
    return beyond_within(pool, sort, key, docid, backward, part, 0);
}

/* cp_find_beyond_part among the rows that share the key's values of the
 * sort fields before within (0: all rows). */
static json_t *beyond_within(apr_pool_t *pool, const cp_find_sort *sort, const json_t *key,
                              const char *docid, int backward, cp_find_part part, int within)
{
    int up = sort->descending == (backward != 0);
    const char *beyond = up ? "$gt" : "$lt", *from = up ? "$gte" : "$lte";
    json_t *id = docid ? cp_json_pool_own(pool, json_string(docid)) : NULL;
    json_t *either, *all;
    int i, j;

    if (!json_is_array(key) || (int)json_array_size(key) != sort->count || !id) {
        return NULL;
    }
    for (i = 0; i < sort->count; i++) {
        if (!cp_mango_value_comparable(json_array_get(key, i))) {
            return NULL;
        }
    }
    if (sort->count == 0) {
        return part == CP_FIND_BEYOND ? cp_json_pool_own(pool, condition("_id", beyond, id))
                                      : NULL;
    }
    either = json_array();
    /* the clauses of the rows past the row's values, then the ties' */
    for (i = part == CP_FIND_TIES ? sort->count : within;
         i <= sort->count - (part == CP_FIND_PAST_TIES); i++) {
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
    if (part == CP_FIND_TIES) {
        /* the sort fields' equalities and _id's range: the scan's start */
        all = json_incref(json_array_get(either, 0));
        json_decref(either);
        return cp_json_pool_own(pool, all);
    }
    all = json_array();
    /* the range CouchDB's planner turns into where the index scan starts:
     * $or alone never narrows it (design: Mango's field ranges). The $or
     * restates the equal fields, exact alone, because pouchdb-server
     * merges this range with a selector's {"$gte": null} and keeps null */
    for (j = 0; j < within; j++) {
        json_array_append_new(all, condition(sort->fields[j].name, "$eq", json_array_get(key, j)));
    }
    json_array_append_new(all, condition(sort->fields[within].name, from,
                                         json_array_get(key, within)));
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
            present |= cp_json_is_string(asked) && strcmp(json_string_value(asked), name) == 0;
        }
        if (!present) {
            json_array_append_new(fields, json_string(name));
        }
    }
    return fields;
}


/* A flag into the body, when it is sent. */
static void set_flag(json_t *body, const char *name, cp_mango_flag flag)
{
    if (flag != CP_MANGO_UNSENT) {
        json_object_set_new(body, name, json_boolean(flag == CP_MANGO_TRUE));
    }
}

const char *cp_find_body(apr_pool_t *pool, const cp_find_spec *spec, const json_t *key,
                         const char *docid, int backward, int limit)
{
    return cp_find_body_part(pool, spec, key, docid, backward, limit, CP_FIND_BEYOND);
}

static const char *body_beyond(apr_pool_t *pool, const cp_find_spec *spec,
                               const json_t *beyond, int backward, int limit);

const char *cp_find_body_part(apr_pool_t *pool, const cp_find_spec *spec, const json_t *key,
                              const char *docid, int backward, int limit, cp_find_part part)
{
    const json_t *beyond = NULL;

    if (key && !(beyond = cp_find_beyond_part(pool, spec->sort, key, docid, backward, part))) {
        return NULL;
    }
    return body_beyond(pool, spec, beyond, backward, limit);
}

const char *cp_find_body_within(apr_pool_t *pool, const cp_find_spec *spec, const json_t *key,
                                const char *docid, int backward, int limit, int within)
{
    const json_t *beyond;

    if (within < 0 || within >= spec->sort->count
        || !(beyond = beyond_within(pool, spec->sort, key, docid, backward, CP_FIND_BEYOND,
                                    within))) {
        return NULL;
    }
    return body_beyond(pool, spec, beyond, backward, limit);
}

const char *cp_find_from_body(apr_pool_t *pool, const cp_find_spec *spec, const json_t *key,
                              int open, const json_t *past, int backward, int limit)
{
    const cp_find_sort *sort = spec->sort;
    json_t *from = cp_json_pool_own(pool, json_object()), *range;
    int up = sort->descending == (backward != 0), i;

    if (!json_is_array(key) || (int)json_array_size(key) != sort->count || open < 0
        || open >= sort->count || !cp_mango_value_comparable(json_array_get(key, open))
        || !cp_mango_value_comparable(past)) {
        return NULL;
    }
    for (i = 0; i < open; i++) {
        json_object_set_new(from, sort->fields[i].name,
                            member("$eq", json_incref(json_array_get(key, i))));
    }
    range = member(up ? "$gte" : "$lte", json_incref(json_array_get(key, open)));
    json_object_set_new(range, up ? "$gt" : "$lt", json_incref((json_t *)past));
    json_object_set_new(from, sort->fields[open].name, range);
    return body_beyond(pool, spec, from, backward, limit);
}

/* The body of the location's query AND beyond (NULL: the query alone). */
static const char *body_beyond(apr_pool_t *pool, const cp_find_spec *spec,
                               const json_t *beyond, int backward, int limit)
{
    json_t *body = cp_json_pool_own(pool, json_object());
    json_t *selector = (json_t *)spec->selector, *fields;

    if (beyond) {
        json_t *both;

        if (json_object_size(selector) == 0) {
            /* every document: CouchDB 3.4 reads an empty selector among
             * $and's as {"": {"$eq": {}}}, which matches none */
            selector = (json_t *)beyond;
        }
        else {
            both = json_array();
            json_array_append(both, selector);
            json_array_append(both, (json_t *)beyond);
            selector = cp_json_pool_own(pool, member("$and", both));
        }
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
        if (!spec->index_fallback) {
            json_object_set_new(body, "allow_fallback", json_false());
        }
    }
    set_flag(body, "update", spec->update);
    set_flag(body, "stable", spec->stable);
    return cp_json_text(pool, body);
}

/* Whether a token text the page hands out can bound a _find query: a
 * token of a row (not the first page's NULL, nor "last") whose sort
 * values CouchDB's operators take. */
static int token_bounds_find(apr_pool_t *pool, const cp_find_sort *sort, const char *text)
{
    cp_token_rows rows = { 1, 1, sort->count, 0 };
    cp_token token;
    int i;

    if (!text || cp_token_decode(pool, text, &rows, &token) || !token.key) {
        return 1;
    }
    for (i = 0; i < sort->count; i++) {
        if (!cp_mango_value_comparable(json_array_get(token.key, i))) {
            return 0;
        }
    }
    return 1;
}

int cp_find_withhold_unbounding(apr_pool_t *pool, const cp_find_sort *sort, cp_page *page)
{
    int withheld = 0, i;

    if (!token_bounds_find(pool, sort, page->next)) {
        page->next = NULL;
        page->withheld |= CP_WITHHELD_NEXT;
        withheld++;
    }
    if (!token_bounds_find(pool, sort, page->prev)) {
        page->prev = NULL;
        page->withheld |= CP_WITHHELD_PREV;
        withheld++;
    }
    for (i = 0; i < page->pages->nelts; i++) {
        cp_page_link *link = &APR_ARRAY_IDX(page->pages, i, cp_page_link);

        if (!link->current && !token_bounds_find(pool, sort, link->start)) {
            link->start = NULL;
            link->withheld = 1;
            withheld++;
        }
    }
    return withheld;
}

/* A row's sort values from its records: each field's member, step by step. */
static json_t *row_sort_values(apr_pool_t *pool, const cp_find_sort *sort, const cp_row *row)
{
    json_t *key = cp_json_pool_own(pool, json_array());
    int i;

    for (i = 0; i < sort->count; i++) {
        const char *const *step;
        cp_span at = row->doc;
        const json_t *value;

        for (step = sort->fields[i].steps; *step && at.len; step++) {
            at = cp_row_find(row, at, *step);
        }
        if (!at.len || !(value = cp_row_decode(pool, row, at))) {
            return NULL;
        }
        json_array_append(key, (json_t *)value);
    }
    return key;
}

const char *cp_find_read(apr_pool_t *pool, const char *text, apr_size_t len,
                         const cp_find_sort *sort, const cp_answer **answer)
{
    const char *why = cp_response_read_find(pool, text, len, answer);
    apr_size_t i;

    if (why) {
        return why;
    }
    for (i = 0; i < cp_answer_rows(*answer); i++) {
        cp_row *row = (cp_row *)cp_answer_row(*answer, i);

        if (!(row->key = row_sort_values(pool, sort, row))) {
            return apr_psprintf(pool, "document %" APR_SIZE_T_FMT " of the _find response "
                                "(_id %s) lacks a sort value", i, row->id);
        }
    }
    return NULL;
}


void cp_find_key_index_rows(apr_pool_t *pool, const cp_find_sort *sort,
                            const apr_array_header_t *index_fields, apr_array_header_t *rows)
{
    int *places = apr_pcalloc(pool, sizeof(int) * (apr_size_t)(sort->count + 1));
    int same = sort->count == index_fields->nelts, i, j;

    for (j = 0; j < sort->count; j++) {
        places[j] = cp_mango_field_place(index_fields, sort->fields[j].name);
        same = same && places[j] == j;
    }
    for (i = 0; !same && i < rows->nelts; i++) {
        const cp_row *row = APR_ARRAY_IDX(rows, i, const cp_row *);
        const json_t *key = cp_row_key(row);
        json_t *values = cp_json_pool_own(pool, json_array());
        cp_row *copy;

        for (j = 0; j < sort->count; j++) {
            const json_t *value = places[j] >= 0 ? json_array_get(key, (size_t)places[j]) : NULL;

            if (!value) {
                break;
            }
            json_array_append(values, (json_t *)value);
        }
        if (j < sort->count) {
            /* a key of another shape than the index's: left as CouchDB sent it */
            continue;
        }
        copy = apr_pmemdup(pool, row, sizeof(*row));
        copy->key = values;
        APR_ARRAY_IDX(rows, i, const cp_row *) = copy;
    }
}

