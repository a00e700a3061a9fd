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
     * $or alone never narrows it (design: Mango's field ranges). The $or
     * restates the equal fields, exact alone, because pouchdb-server
     * merges this range with a selector's {"$gte": null} and keeps null */
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
    json_t *body = cp_json_pool_own(pool, json_object());
    json_t *selector = (json_t *)spec->selector, *fields;

    if (key) {
        json_t *beyond = cp_find_beyond(pool, spec->sort, key, docid, backward);
        json_t *both;

        if (!beyond) {
            return NULL;
        }
        if (json_object_size(selector) == 0) {
            /* every document: CouchDB 3.4 reads an empty selector among
             * $and's as {"": {"$eq": {}}}, which matches none */
            selector = beyond;
        }
        else {
            both = json_array();
            json_array_append(both, selector);
            json_array_append(both, beyond);
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
        json_object_set_new(body, "allow_fallback", json_false());
    }
    set_flag(body, "update", spec->update);
    set_flag(body, "stable", spec->stable);
    return cp_json_text(pool, body);
}

const char *cp_find_token_encode(apr_pool_t *pool, cp_find_from from, const json_t *key,
                                 const char *docid)
{
    json_t *id = docid ? json_string(docid) : NULL;

    if (!key || !id || (from != CP_FIND_AFTER && from != CP_FIND_BEFORE)) {
        json_decref(id);
        return NULL;
    }
    return cp_json_text(pool, cp_json_pool_own(pool, member(
        from == CP_FIND_AFTER ? "a" : "b", json_pack("[Oo]", (json_t *)key, id))));
}

const char *cp_find_token_decode(apr_pool_t *pool, const char *text, const cp_find_sort *sort,
                                 cp_find_token *token)
{
    const char *error = NULL, *name;
    const json_t *value, *pair, *id;

    memset(token, 0, sizeof(*token));
    if (!text) {
        token->from = CP_FIND_FIRST;
        return NULL;
    }
    if (strcmp(text, CP_TOKEN_LAST) == 0) {
        token->from = CP_FIND_LAST;
        return NULL;
    }
    value = cp_json_load(pool, text, strlen(text), &error);
    if (!value) {
        return apr_psprintf(pool, "is not JSON: %s", error ? error : "unreadable");
    }
    if (!json_is_object(value) || json_object_size(value) != 1) {
        return "is not {\"a\": [KEY, ID]} nor {\"b\": [KEY, ID]}";
    }
    name = json_object_iter_key(json_object_iter((json_t *)value));
    pair = json_object_iter_value(json_object_iter((json_t *)value));
    if (strcmp(name, "a") != 0 && strcmp(name, "b") != 0) {
        return "is not {\"a\": [KEY, ID]} nor {\"b\": [KEY, ID]}";
    }
    if (!json_is_array(pair) || json_array_size(pair) != 2) {
        return "does not hold [KEY, ID]";
    }
    token->key = json_array_get(pair, 0);
    id = json_array_get(pair, 1);
    if (!json_is_array(token->key) || (int)json_array_size(token->key) != sort->count) {
        return apr_psprintf(pool, "does not hold a key of %d sort value%s", sort->count,
                            sort->count == 1 ? "" : "s");
    }
    if (!cp_json_is_string(id) || json_string_length(id) == 0
        || strlen(json_string_value(id)) != json_string_length(id)) {
        return "does not hold a document id (a non-empty string without NUL)";
    }
    token->docid = json_string_value(id);
    token->from = name[0] == 'a' ? CP_FIND_AFTER : CP_FIND_BEFORE;
    return NULL;
}

/* Whether a token text the page hands out can bound a _find query: a
 * token of a row (not the first page's NULL, nor "last") whose sort
 * values CouchDB's operators take. */
static int token_bounds_find(apr_pool_t *pool, const cp_find_sort *sort, const char *text)
{
    cp_find_token token;
    int i;

    if (!text || cp_find_token_decode(pool, text, sort, &token) || !token.key) {
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

int cp_find_reads_backward(const cp_find_token *token)
{
    return token->from == CP_FIND_BEFORE || token->from == CP_FIND_LAST;
}

int cp_find_limit(int count, int links)
{
    return (1 + links) * count + 1;
}

/* The token for a page next to a row of the answer. */
static const char *token_at(apr_pool_t *pool, cp_find_from from, const apr_array_header_t *rows,
                            int i)
{
    const cp_row *row = APR_ARRAY_IDX(rows, i, const cp_row *);

    return cp_find_token_encode(pool, from, cp_row_key(row), row->id);
}

/* Where the page's first row lies in the location, by CouchDB's count of
 * the rows read (n of them, in the order read), when it agrees with them,
 * else -1: a read that came short of a page ended the location that way;
 * a first page starts it, and the Last page ends it and holds the rows
 * that the pages before it leave (*shown), so that it is aligned with the
 * first page's. */
static apr_int64_t counted_place(const cp_find_token *token, const cp_find_count *counted,
                                 int n, int count, int *shown)
{
    apr_int64_t total = counted->total, before = counted->before, last_rows;

    if (total < 0 || before < 0 || before + n > total || (n <= count && before + n != total)) {
        return -1;
    }
    if (!cp_find_reads_backward(token)) {
        return token->from == CP_FIND_FIRST && before != 0 ? -1 : before;
    }
    if (token->from == CP_FIND_LAST) {
        last_rows = cp_page_last_rows(total, count);
        if (before != 0 || last_rows > n) {
            return -1;
        }
        *shown = (int)last_rows;
    }
    return total - before - *shown;
}

/* A numbered page: its place, the location's rows, exact ends (no rows
 * before it: no prev; none after it: no next), a previous page within the
 * first page's rows linked as the first page, and its last page. */
static void number_page(const cp_find_token *token, int count, apr_int64_t place,
                        apr_int64_t total, int shown, const char *start, cp_page *page)
{
    page->numbered = 1;
    page->offset = place;
    page->total_rows = total;
    if (place == 0) {
        page->prev = NULL;
    }
    if (place + shown == total) {
        page->next = NULL;
    }
    page->prev_is_first = page->prev && place <= count;
    page->has_last = total > 0;
    page->last_number = cp_page_pages_for(total, count);
    page->last_is_current = token->from == CP_FIND_LAST || !page->next;
    page->last = page->last_is_current ? start : page->last_number == 1 ? NULL : CP_TOKEN_LAST;
}

cp_find_from cp_find_page_assemble(apr_pool_t *pool, const cp_find_token *token,
                                   const apr_array_header_t *rows, int count, int links,
                                   const cp_find_count *counted, const char *start,
                                   cp_page *page)
{
    int backward = cp_find_reads_backward(token);
    int n = rows->nelts, shown = n < count ? n : count, beyond = 0, i;
    apr_int64_t place = -1, current = 0;

    if (token->from == CP_FIND_AFTER && n == 0) {
        return CP_FIND_LAST;   /* every row after it went meanwhile */
    }
    if (token->from == CP_FIND_BEFORE && n == 0) {
        return CP_FIND_FIRST;  /* likewise every row before it */
    }
    if (counted) {
        place = counted_place(token, counted, n, count, &shown);
    }
    memset(page, 0, sizeof(*page));
    page->total_rows = -1;
    page->offset = -1;
    page->rows = apr_array_make(pool, shown + 1, sizeof(const cp_row *));
    page->docs_as_items = 1;
    for (i = 0; i < shown; i++) {
        APR_ARRAY_PUSH(page->rows, const cp_row *)
            = APR_ARRAY_IDX(rows, backward ? shown - 1 - i : i, const cp_row *);
    }
    /* the pages the rows read reach beyond this one, in the reading direction */
    while (beyond < links && n > shown + beyond * count) {
        beyond++;
    }
    if (!backward) {
        page->next = n > shown ? token_at(pool, CP_FIND_AFTER, rows, shown - 1) : NULL;
        page->prev = token->from == CP_FIND_FIRST || shown == 0
                         ? NULL : token_at(pool, CP_FIND_BEFORE, rows, 0);
    }
    else {
        page->prev = n > shown ? token_at(pool, CP_FIND_BEFORE, rows, shown - 1) : NULL;
        page->next = token->from == CP_FIND_LAST || shown == 0
                         ? NULL : token_at(pool, CP_FIND_AFTER, rows, 0);
    }
    if (place >= 0) {
        number_page(token, count, place, counted->total, shown, start, page);
        current = cp_page_pages_for(place, count) + 1;
    }
    else {
        page->has_last = 1;
        page->last_is_current = token->from == CP_FIND_LAST;
        page->last = page->last_is_current ? start : CP_TOKEN_LAST;
    }
    page->pages = apr_array_make(pool, 2 * links + 1, sizeof(cp_page_link));
    if (links == 0) {
        return token->from;
    }
    if (!backward) {
        if (page->prev) {
            cp_page_add_link(page->pages, current - 1, page->prev_is_first ? NULL : page->prev,
                             0);
        }
        cp_page_add_link(page->pages, current, start, 1);
        for (i = 1; i <= beyond; i++) {
            cp_page_add_link(page->pages, current + i,
                             token_at(pool, CP_FIND_AFTER, rows, shown + (i - 1) * count - 1),
                             0);
        }
    }
    else {
        for (i = beyond; i >= 1; i--) {
            cp_page_add_link(page->pages, current - i,
                             token_at(pool, CP_FIND_BEFORE, rows, shown + (i - 1) * count - 1),
                             0);
        }
        cp_page_add_link(page->pages, current, start, 1);
        if (page->next) {
            cp_page_add_link(page->pages, current + 1, page->next, 0);
        }
    }
    return token->from;
}

json_t *cp_find_index_key(apr_pool_t *pool, const apr_array_header_t *index_fields,
                          const json_t *low, const json_t *key)
{
    size_t fixed = low ? json_array_size(low) : 0, n = json_array_size(key), rest, i;
    json_t *view_key;

    if ((size_t)index_fields->nelts < fixed || (low && !json_is_array(low))) {
        return NULL;
    }
    rest = (size_t)index_fields->nelts - fixed;
    if (!json_is_array(key) || rest > n) {
        return NULL;
    }
    view_key = cp_json_pool_own(pool, low ? json_copy((json_t *)low) : json_array());
    for (i = n - rest; view_key && i < n; i++) {
        json_array_append(view_key, json_array_get(key, i));
    }
    return view_key;
}

apr_array_header_t *cp_find_index_rows(apr_pool_t *pool, const cp_answer *answer,
                                       const cp_find_token *token, const cp_find_sort *sort,
                                       const apr_array_header_t *index_fields, int *dropped)
{
    apr_size_t n = cp_answer_rows(answer), i = 0;
    apr_array_header_t *rows = apr_array_make(pool, (int)n + 1, sizeof(const cp_row *));
    const cp_row *first = n ? cp_answer_row(answer, 0) : NULL;

    /* one row a document in a Mango index: the row with the token's id at
     * the token's place is the token's own */
    *dropped = token->docid && first && first->id && !strcmp(first->id, token->docid);
    for (i = (apr_size_t)*dropped; i < n; i++) {
        APR_ARRAY_PUSH(rows, const cp_row *) = cp_answer_row(answer, i);
    }
    cp_find_key_index_rows(pool, sort, index_fields, rows);
    return rows;
}

void cp_find_index_count(const apr_array_header_t *queries, int backward, int dropped,
                         cp_find_count *counted)
{
    const cp_query *read = cp_plan_query(queries, CP_QUERY_FORWARD);
    const cp_query *range_start = cp_plan_query(queries, CP_QUERY_RANGE_START);
    const cp_query *range_end = cp_plan_query(queries, CP_QUERY_RANGE_END);
    apr_int64_t before_range = range_start ? range_start->answer->offset : 0;
    apr_int64_t after_range = range_end ? range_end->answer->offset : 0;
    apr_int64_t skipped = backward ? after_range : before_range;

    counted->total = counted->before = -1;
    if (!read || !read->answer || read->answer->total_rows < 0 || read->answer->offset < 0
        || before_range < 0 || after_range < 0
        || read->answer->total_rows - before_range < after_range
        || read->answer->offset < skipped) {
        return;
    }
    counted->total = read->answer->total_rows - before_range - after_range;
    counted->before = read->answer->offset - skipped + dropped;
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

