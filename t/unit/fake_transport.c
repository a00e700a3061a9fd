/* SPDX-License-Identifier: Apache-2.0 */
/* A fake CouchDB behind a cp_transport: answers as CouchDB would from the
 * rows and documents a test holds, and counts and logs what it was asked. */
#include "fake_transport.h"

#include <apr_escape.h>
#include <apr_strings.h>

static int kind_rank(const json_t *v)
{
    return json_is_null(v) ? 0 : json_is_false(v) ? 1 : json_is_true(v) ? 2
         : json_is_number(v) ? 3 : json_is_string(v) ? 4 : json_is_array(v) ? 5 : 6;
}

/* CouchDB's collation, for the kinds the tests' keys have (ASCII strings
 * compare by their bytes here as they do in CouchDB). */
static int collate(const json_t *a, const json_t *b)
{
    size_t i;

    if (kind_rank(a) != kind_rank(b)) {
        return kind_rank(a) - kind_rank(b);
    }
    if (json_is_number(a)) {
        double x = json_number_value(a), y = json_number_value(b);

        return (x > y) - (x < y);
    }
    if (json_is_string(a)) {
        int c = strcmp(json_string_value(a), json_string_value(b));

        return (c > 0) - (c < 0);
    }
    if (json_is_array(a)) {
        for (i = 0; i < json_array_size(a) && i < json_array_size(b); i++) {
            int c = collate(json_array_get(a, i), json_array_get(b, i));

            if (c) {
                return c;
            }
        }
        return (json_array_size(a) > json_array_size(b))
               - (json_array_size(a) < json_array_size(b));
    }
    return 0;
}

static const json_t *doc_of(const fake *f, const char *id)
{
    size_t i;

    for (i = 0; f->docs && i < (size_t)f->docs->nelts; i++) {
        const json_t *doc = APR_ARRAY_IDX(f->docs, i, json_t *);

        if (!strcmp(json_string_value(json_object_get(doc, "_id")), id)) {
            return doc;
        }
    }
    return NULL;
}

/* The rows a view query reads: map rows, or grouped ones (reduce, _count). */
typedef struct {
    json_t *key;
    const char *id;   /* NULL: a grouped row */
    json_t *value;
} read_row;

static apr_array_header_t *readable_rows(const fake *f, const json_t *params,
                                         const char *partition, int descending)
{
    apr_array_header_t *out = apr_array_make(pool, 16, sizeof(read_row));
    int reduce = json_is_true(json_object_get(params, "reduce"));
    int level = json_object_get(params, "group_level")
                ? (int)json_integer_value(json_object_get(params, "group_level")) : -1;
    int i, first, last;

    for (i = 0; i < f->rows->nelts; i++) {
        const fake_row *row = &APR_ARRAY_IDX(f->rows, i, fake_row);
        read_row r = { row->key, row->id, row->value };

        if (partition && strncmp(row->id, partition, strlen(partition))) {
            continue;
        }
        if (reduce) {
            read_row *prev = out->nelts ? &APR_ARRAY_IDX(out, out->nelts - 1, read_row) : NULL;

            if (level >= 0 && json_is_array(row->key)
                && json_array_size(row->key) > (size_t)level) {
                size_t k;

                r.key = cp_json_pool_own(pool, json_array());
                for (k = 0; k < (size_t)level; k++) {
                    json_array_append(r.key, json_array_get(row->key, k));
                }
            }
            if (prev && !collate(prev->key, r.key)) {
                json_integer_set(prev->value, json_integer_value(prev->value) + 1);
                continue;
            }
            r.id = NULL;
            r.value = cp_json_pool_own(pool, json_integer(1));
        }
        APR_ARRAY_PUSH(out, read_row) = r;
    }
    if (descending) {
        /* entries (the rows one document emits under one key) in reverse,
         * each entry's rows in their one order */
        apr_array_header_t *rev = apr_array_make(pool, out->nelts + 1, sizeof(read_row));

        for (last = out->nelts - 1; last >= 0; last = first - 1) {
            read_row *end = &APR_ARRAY_IDX(out, last, read_row);

            for (first = last; first > 0; first--) {
                read_row *before = &APR_ARRAY_IDX(out, first - 1, read_row);

                if (!end->id || !before->id || strcmp(before->id, end->id)
                    || collate(before->key, end->key)) {
                    break;
                }
            }
            for (i = first; i <= last; i++) {
                APR_ARRAY_PUSH(rev, read_row) = APR_ARRAY_IDX(out, i, read_row);
            }
        }
        out = rev;
    }
    return out;
}

/* Whether row lies at or beyond (key, docid), read that way. */
static int at_or_beyond(const read_row *row, const json_t *key, const char *docid,
                        int descending)
{
    int c = collate(row->key, key) * (descending ? -1 : 1);

    if (c || !docid || !row->id) {
        return c >= 0;
    }
    c = strcmp(row->id, docid) * (descending ? -1 : 1);
    return c >= 0;
}

/* "P:", the id prefix of the partition P a URL names; NULL: none. */
static const char *url_partition(const char *url)
{
    const char *part = strstr(url, "/_partition/");

    if (!part) {
        return NULL;
    }
    part += strlen("/_partition/");
    return apr_pstrcat(pool, apr_pstrndup(pool, part, strcspn(part, "/")), ":", NULL);
}

/* CouchDB's answer to a view query at index_url. */
static const char *view_answer(const fake *f, const char *index_url, const json_t *params)
{
    const char *partition = url_partition(index_url);
    int descending = json_is_true(json_object_get(params, "descending"));
    int reduce = json_is_true(json_object_get(params, "reduce"));
    int docs = json_is_true(json_object_get(params, "include_docs"));
    const json_t *start = json_object_get(params, "startkey");
    const json_t *end = json_object_get(params, "endkey");
    const char *docid = json_string_value(json_object_get(params, "startkey_docid"));
    int limit = (int)json_integer_value(json_object_get(params, "limit"));
    int skip = (int)json_integer_value(json_object_get(params, "skip"));
    apr_array_header_t *rows;
    json_t *body = json_object(), *out = json_array();
    int at = 0, i;

    rows = readable_rows(f, params, partition, descending);
    while (start && at < rows->nelts
           && !at_or_beyond(&APR_ARRAY_IDX(rows, at, read_row), start, docid, descending)) {
        at++;
    }
    at = at + skip < rows->nelts ? at + skip : rows->nelts;
    for (i = at; i < rows->nelts && (int)json_array_size(out) < limit + f->overfull; i++) {
        const read_row *row = &APR_ARRAY_IDX(rows, i, read_row);
        json_t *item = json_object();

        if (end && collate(row->key, end) * (descending ? -1 : 1) > 0) {
            break;
        }
        if (row->id) {
            json_object_set_new(item, "id", json_string(row->id));
        }
        json_object_set(item, "key", row->key);
        json_object_set(item, "value", row->value);
        if (docs && row->id) {
            const json_t *doc = doc_of(f, row->id);

            json_object_set_new(item, "doc", doc ? json_deep_copy(doc) : json_null());
        }
        json_array_append_new(out, item);
    }
    if (!reduce) {
        json_object_set_new(body, "total_rows", json_integer(rows->nelts));
        json_object_set_new(body, "offset", json_integer(at));
    }
    json_object_set_new(body, "rows", out);
    return cp_json_text(pool, cp_json_pool_own(pool, body));
}

static const cp_answer *read_view(const char *text, int with_docid)
{
    const cp_answer *answer = NULL;
    const char *reason = cp_response_read_view(pool, cp_response_padded(pool, text,
                                                                        strlen(text)),
                                               strlen(text), with_docid, &answer);

    if (reason) {
        fail_msg("the fake's view answer '%s' is refused: %s", text, reason);
    }
    return answer;
}

static int fake_ask(void *baton, const char *backend, const char *index_url, int with_docid,
                    const apr_array_header_t *asked, int alone, cp_plan_answers *answers,
                    cp_transport_failure *failure)
{
    fake *f = baton;
    int i;

    f->asks++;
    f->asked_alone += alone;
    if (f->fail.status || (alone && f->alone_fail.status)) {
        *failure = alone && f->alone_fail.status ? f->alone_fail : f->fail;
        return 0;
    }
    for (i = 0; i < asked->nelts; i++) {
        const cp_query *query = APR_ARRAY_IDX(asked, i, const cp_query *);

        if (!alone && f->cut_after && asked->nelts > 1 && i == f->cut_after) {
            answers->cut_off = 1;
            break;
        }
        f->counts += query->role == CP_QUERY_COUNT;
        f->range_probes += query->role == CP_QUERY_RANGE_START
                           || query->role == CP_QUERY_RANGE_END;
        const char *text = view_answer(f, index_url, query->params);
        const char *seq = f->odd_role == (int)query->role + 1 ? f->odd_seq : f->view_seq;

        f->last_limit = (int)json_integer_value(json_object_get(query->params, "limit"));
        if (json_is_true(json_object_get(query->params, "update_seq"))) {
            f->asked_seq++;
            /* CouchDB's members: total_rows, offset, update_seq, rows */
            text = seq ? apr_pstrcat(pool, "{\"update_seq\":", seq, ",", text + 1, NULL)
                       : text;
        }
        answers->of[query->role] = read_view(text, with_docid);
    }
    return 1;
}

/* A Mango selector of $and, $or, comparisons and equalities, over top-level
 * members. */
static int matches(const json_t *selector, const json_t *doc)
{
    const char *name, *op;
    const json_t *arg, *each, *cond;
    size_t i;

    json_object_foreach((json_t *)selector, name, arg) {
        int any = 0;

        if (!strcmp(name, "$and") || !strcmp(name, "$or")) {
            json_array_foreach(arg, i, each) {
                if (matches(each, doc) ? (any = 1, 0) : !strcmp(name, "$and")) {
                    return 0;
                }
            }
            if (!strcmp(name, "$or") && !any) {
                return 0;
            }
            continue;
        }
        if (!json_is_object(arg)) {
            if (!json_object_get(doc, name) || collate(json_object_get(doc, name), arg)) {
                return 0;
            }
            continue;
        }
        json_object_foreach((json_t *)arg, op, cond) {
            const json_t *value = json_object_get(doc, name);
            int c;

            if (!value) {
                return 0;
            }
            c = collate(value, cond);
            if (strcmp(op, "$gt") && strcmp(op, "$gte") && strcmp(op, "$lt")
                && strcmp(op, "$lte") && strcmp(op, "$eq")) {
                fail_msg("an operator the fake does not know: %s", op);
            }
            if (!strcmp(op, "$gt") ? c <= 0 : !strcmp(op, "$gte") ? c < 0
                : !strcmp(op, "$lt") ? c >= 0 : !strcmp(op, "$lte") ? c > 0 : c != 0) {
                return 0;
            }
        }
    }
    return 1;
}

static const json_t *sort_spec;

static int by_sort(const void *a, const void *b)
{
    const json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b, *each;
    size_t i;

    json_array_foreach(sort_spec, i, each) {
        const char *field = json_object_iter_key(json_object_iter((json_t *)each));
        int c = collate(json_object_get(x, field), json_object_get(y, field));

        if (c) {
            return strcmp(json_string_value(json_object_iter_value(
                       json_object_iter((json_t *)each))), "desc") ? c : -c;
        }
    }
    /* ties in id order, the sort's way, as a Mango index breaks them */
    each = json_array_get(sort_spec, 0);
    i = (size_t)strcmp(json_string_value(json_object_get(x, "_id")),
                       json_string_value(json_object_get(y, "_id")));
    return each && !strcmp(json_string_value(json_object_iter_value(
                                json_object_iter((json_t *)each))), "desc")
           ? -(int)i : (int)i;
}

/* The fake's edit: its document replaces the one of its _id. */
static void edit_doc(fake *f)
{
    json_t *edited = (json_t *)load(f->edit);
    int i;

    for (i = 0; i < f->docs->nelts; i++) {
        if (!strcmp(json_string_value(json_object_get(edited, "_id")),
                    json_string_value(json_object_get(APR_ARRAY_IDX(f->docs, i, json_t *),
                                                      "_id")))) {
            APR_ARRAY_IDX(f->docs, i, json_t *) = edited;
        }
    }
}

static int fake_find(void *baton, const char *url, const char *body, const cp_find_sort *sort,
                     const cp_answer **answer, cp_transport_failure *failure)
{
    fake *f = baton;
    const json_t *query = load(body);
    const json_t *selector = json_object_get(query, "selector");
    int limit = (int)json_integer_value(json_object_get(query, "limit"));
    int skip = (int)json_integer_value(json_object_get(query, "skip"));
    apr_array_header_t *hits = apr_array_make(pool, 8, sizeof(json_t *));
    json_t *docs = json_array(), *out = json_object();
    const char *text, *reason, *partition = url_partition(url);
    int i;

    f->finds++;
    f->last_find = body;
    f->last_find_url = url;
    if (f->fail.status) {
        *failure = f->fail;
        return 0;
    }
    if (f->edit && f->finds == f->edit_at) {
        edit_doc(f);
    }
    for (i = 0; i < f->docs->nelts; i++) {
        const char *id = json_string_value(json_object_get(APR_ARRAY_IDX(f->docs, i, json_t *),
                                                           "_id"));

        if (partition && (!id || strncmp(id, partition, strlen(partition)))) {
            continue;
        }
        if (matches(selector, APR_ARRAY_IDX(f->docs, i, json_t *))) {
            APR_ARRAY_PUSH(hits, json_t *) = APR_ARRAY_IDX(f->docs, i, json_t *);
        }
    }
    sort_spec = json_object_get(query, "sort");
    qsort(hits->elts, (size_t)hits->nelts, sizeof(json_t *), by_sort);
    for (i = skip; i < hits->nelts && i < skip + limit + f->overfull; i++) {
        json_array_append(docs, APR_ARRAY_IDX(hits, i, json_t *));
    }
    json_object_set_new(out, "docs", docs);
    json_object_set_new(out, "bookmark", json_string("nil"));
    if (f->warning) {
        json_object_set_new(out, "warning", json_string(f->warning));
    }
    text = cp_json_text(pool, cp_json_pool_own(pool, out));
    reason = cp_find_read(pool, cp_response_padded(pool, text, strlen(text)), strlen(text),
                          sort, answer);
    if (reason) {
        fail_msg("the fake's _find answer is refused: %s", reason);
    }
    return 1;
}

/* A parameter of a URL's query, decoded; NULL when it is not there. */
const char *url_param(const char *url, const char *name)
{
    const char *at = strchr(url, '?'), *end;
    size_t n = strlen(name);

    for (; at; at = strchr(at + 1, '&')) {
        if (!strncmp(at + 1, name, n) && at[1 + n] == '=') {
            end = strchr(at + 1, '&');
            return apr_punescape_url(pool, apr_pstrndup(pool, at + 2 + n, end ? (size_t)(end
                                     - at - 2 - n) : strlen(at + 2 + n)), NULL, NULL, 1);
        }
    }
    return NULL;
}

/* The definition's fields of the index whose view url reads: among the
 * database's indexes where it is listed there, else the one _explain
 * names. */
static const json_t *index_fields_of(const fake *f, const char *url)
{
    const json_t *each;
    size_t i;

    json_array_foreach(f->indexes ? json_object_get(load(f->indexes), "indexes") : NULL, i,
                       each) {
        const char *ddoc = json_string_value(json_object_get(each, "ddoc"));

        if (ddoc && strstr(url, apr_pstrcat(pool, "/", ddoc, "/_view/", NULL))) {
            return json_object_get(json_object_get(each, "def"), "fields");
        }
    }
    return json_object_get(json_object_get(json_object_get(load(f->explain), "index"), "def"),
                           "fields");
}

/* A read of the view of the location's index (its fields' values, in
 * order, the keys; a partition's documents alone in a partition's URL), by
 * startkey, endkey, descending, skip and limit: the next key past a group
 * of ties, or a count's look. */
static int index_down;

static int by_index_key(const void *a, const void *b)
{
    int c = collate(json_object_get(*(json_t *const *)a, "key"),
                    json_object_get(*(json_t *const *)b, "key"));

    return index_down ? -c : c;
}

static const char *fake_index_view(const fake *f, const char *url)
{
    const json_t *fields = index_fields_of(f, url), *each;
    const char *start = url_param(url, "startkey"), *end = url_param(url, "endkey");
    const char *partition = url_partition(url), *skip = url_param(url, "skip");
    int down = url_param(url, "descending") != NULL, i, from, to;
    int limit = atoi(url_param(url, "limit")), at = skip ? atoi(skip) : 0;
    apr_array_header_t *hits = apr_array_make(pool, 8, sizeof(json_t *));
    json_t *out = json_object(), *rows = json_array(), *row;
    size_t k;

    for (i = 0; i < f->docs->nelts; i++) {
        const json_t *doc = APR_ARRAY_IDX(f->docs, i, json_t *);
        const char *id = json_string_value(json_object_get(doc, "_id"));
        json_t *key = cp_json_pool_own(pool, json_array());

        json_array_foreach(fields, k, each) {
            const char *name = json_object_iter_key(json_object_iter((json_t *)each));

            if (json_object_get(doc, name)) {
                json_array_append(key, json_object_get(doc, name));
            }
        }
        from = start ? collate(key, load(start)) : down ? -1 : 1;
        to = end ? collate(key, load(end)) : down ? 1 : -1;
        if (json_array_size(key) == json_array_size(fields)
            && (!partition || !strncmp(id, partition, strlen(partition)))
            && (down ? from <= 0 && to >= 0 : from >= 0 && to <= 0)) {
            row = cp_json_pool_own(pool, json_object());
            json_object_set(row, "id", json_object_get(doc, "_id"));
            json_object_set(row, "key", key);
            json_object_set_new(row, "value", json_null());
            APR_ARRAY_PUSH(hits, json_t *) = row;
        }
    }
    index_down = down;
    qsort(hits->elts, (size_t)hits->nelts, sizeof(json_t *), by_index_key);
    for (i = at; i < hits->nelts && i < at + limit; i++) {
        json_array_append(rows, APR_ARRAY_IDX(hits, i, json_t *));
    }
    json_object_set_new(out, "rows", rows);
    return cp_json_text(pool, cp_json_pool_own(pool, out));
}

static int fake_get(void *baton, const char *url, const char **text, apr_size_t *len,
                    cp_transport_failure *failure)
{
    fake *f = baton;

    f->gets++;
    f->last_get = url;
    if (strstr(url, "/_view/") && (strstr(url, "startkey=") || strstr(url, "endkey=")
                                   || strstr(url, "skip="))) {
        f->probes++;
        f->probe = apr_pstrdup(pool, url);
        if (f->probe_fail.status) {
            *failure = f->probe_fail;
            return 0;
        }
        for (; f->edit && f->probes == f->edit_probe && f->edit_at == 0; f->edit_at = -1) {
            edit_doc(f);
        }
        *text = fake_index_view(f, url);
    }
    else if (!strcmp(url, "http://couch:5984/db")) {
        f->db_gets++;
        if (!f->seq) {
            failure->status = 503;
            failure->backend_status = 0;
            failure->reason = "the backend is unavailable";
            failure->past_deadline = 0;
            return 0;
        }
        *text = apr_psprintf(pool, "{\"db_name\":\"db\",\"update_seq\":%s,\"doc_count\":10%s%s}",
                             f->seq, f->cluster ? ",\"cluster\":" : "",
                             f->cluster ? f->cluster : "");
    }
    else if (strstr(url, "/_view/")) {
        *text = "{\"total_rows\":0,\"offset\":0,\"rows\":[]}";
    }
    else if (!strcmp(url, "http://couch:5984/db/_index")) {
        f->index_gets++;
        if (f->index_fail.status || !f->indexes) {
            *failure = f->index_fail;
            if (!f->indexes && !f->index_fail.status) {
                failure->status = 502;
                failure->backend_status = 404;
                failure->reason = "CouchDB answered 404 not_found: missing";
                failure->past_deadline = 0;
            }
            return 0;
        }
        *text = f->indexes;
    }
    else if (f->ddoc_fail.status) {
        *failure = f->ddoc_fail;
        return 0;
    }
    else if (f->ddoc_status) {
        failure->status = 502;
        failure->backend_status = f->ddoc_status;
        failure->reason = apr_psprintf(pool, "CouchDB answered %d", f->ddoc_status);
        failure->past_deadline = 0;
        return 0;
    }
    else {
        assert_non_null(strstr(url, "/db/_design/"));
        *text = f->ddoc;
    }
    *len = strlen(*text);
    return 1;
}

static int fake_post(void *baton, const char *url, const char *body, const char **text,
                     apr_size_t *len, cp_transport_failure *failure)
{
    fake *f = baton;

    f->posts++;
    f->last_post = url;
    assert_non_null(load(body));
    assert_non_null(strstr(url, "/_explain"));
    if (!f->explain) {
        failure->status = 502;
        failure->backend_status = 404;
        failure->reason = "CouchDB answered 404 not_found: missing";
        failure->past_deadline = 0;
        return 0;
    }
    *text = f->explain;
    *len = strlen(*text);
    return 1;
}

static const char *fake_note_get(void *baton, const char *key, apr_interval_time_t max_age,
                                 apr_pool_t *p, int *again)
{
    *again = 0;
    return apr_hash_get(((fake *)baton)->notes, key, APR_HASH_KEY_STRING);
}

static void fake_note_put(void *baton, const char *key, const char *text)
{
    apr_hash_set(((fake *)baton)->notes, apr_pstrdup(pool, key), APR_HASH_KEY_STRING,
                 apr_pstrdup(pool, text));
}

static int fake_first_time(void *baton, const void *key, apr_size_t len)
{
    fake *f = baton;

    if (apr_hash_get(f->seen, key, (apr_ssize_t)len)) {
        return 0;
    }
    apr_hash_set(f->seen, apr_pmemdup(pool, key, len), (apr_ssize_t)len, "");
    return 1;
}

static void fake_log(void *baton, int level, const char *code, const char *text)
{
    APR_ARRAY_PUSH(((fake *)baton)->log, const char *) = apr_psprintf(pool, "%s %d %s", code,
                                                                      level, text);
}

static const char *fake_where(void *baton, cp_where which)
{
    return which == CP_WHERE_VIEW ? "<Location /t> at t.conf:2" : "<Location /t> at t.conf:5";
}

fake *fake_make(void)
{
    fake *f = apr_pcalloc(pool, sizeof(*f));

    f->rows = apr_array_make(pool, 16, sizeof(fake_row));
    f->docs = apr_array_make(pool, 16, sizeof(json_t *));
    f->notes = apr_hash_make(pool);
    f->seen = apr_hash_make(pool);
    f->log = apr_array_make(pool, 4, sizeof(const char *));
    return f;
}

void add_row(fake *f, const char *key, const char *id, int value)
{
    fake_row *row = apr_array_push(f->rows);

    row->key = load(key);
    row->id = apr_pstrdup(pool, id);
    row->value = cp_json_pool_own(pool, json_integer(value));
}

/* A fake of the map rows (key JSON, id, ... NULL), each row's value its
 * place among them. */
fake *fake_of(const char *const *rows)
{
    fake *f = fake_make();
    int i;

    for (i = 0; rows[i]; i += 2) {
        add_row(f, rows[i], rows[i + 1], i / 2);
    }
    return f;
}

void add_doc(fake *f, const char *json)
{
    APR_ARRAY_PUSH(f->docs, json_t *) = load(json);
}

/* Whether a line with the code was logged (at level; 0: any level). */
int logged(const fake *f, const char *code, int level)
{
    const char *prefix = apr_psprintf(pool, level ? "%s %d " : "%s ", code, level);
    int i;

    for (i = 0; i < f->log->nelts; i++) {
        if (!strncmp(APR_ARRAY_IDX(f->log, i, const char *), prefix, strlen(prefix))) {
            return 1;
        }
    }
    return 0;
}

location *location_of(fake *f, const char *url, int count, int links)
{
    location *l = apr_pcalloc(pool, sizeof(*l));

    l->fake = f;
    l->transport.baton = f;
    l->transport.ask = fake_ask;
    l->transport.find = fake_find;
    l->transport.get = fake_get;
    l->transport.post = fake_post;
    l->transport.note_get = fake_note_get;
    l->transport.note_put = fake_note_put;
    l->transport.first_time = fake_first_time;
    l->transport.log = fake_log;
    l->transport.where = fake_where;
    l->transport.debug = 1;
    l->view = view_of(url);
    l->source.uri = "/t";
    l->source.location = l;
    l->source.view = &l->view;
    l->source.links = links;
    l->source.max_token_length = 4096;
    l->source.token_url_room = 8000;
    l->source.deadline = apr_time_from_sec(30);
    l->req.args = &l->args;
    l->req.count = count;
    return l;
}

/* A _find location sorted by field (and _id), selector JSON. */
location *find_location(fake *f, const char *field, const char *selector, int count,
                               int links)
{
    location *l = location_of(f, "http://couch:5984/db/_find", count, links);
    const char *names[] = { field };

    assert_null(cp_find_sort_init(pool, names, field ? 1 : 0, 0, &l->sort[0]));
    assert_null(cp_find_sort_init(pool, names, field ? 1 : 0, 1, &l->sort[1]));
    l->spec.selector = load(selector);
    l->spec.sort = &l->sort[0];
    l->source.find = &l->spec;
    /* uncounted, numbered relative to each page, unless a test counts */
    l->source.count.mode = CP_COUNT_NONE;
    return l;
}
