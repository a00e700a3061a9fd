/* SPDX-License-Identifier: Apache-2.0 */
/* cp_serve end to end: every page kind served through a fake transport that
 * answers as CouchDB would from rows and documents held in the test (a view
 * read by its parameters, a _find body by its selector, sort and limit, a
 * design document), and every fault typed as the glue answers it. Pages are
 * walked by the tokens they hand out, so what is checked is what a client
 * sees: every row once, in order, at its number. */
#include "unit.h"

#include <apr_escape.h>
#include <apr_hash.h>
#include <apr_strings.h>

#include "couchpage_find.h"
#include "couchpage_fresh.h"
#include "couchpage_seq.h"
#include "couchpage_serve.h"
#include "couchpage_token.h"

/* --- a fake CouchDB ----------------------------------------------------- */

typedef struct {
    const char *id;
    json_t *key;
    json_t *value;
} fake_row;

typedef struct {
    apr_array_header_t *rows;   /* map rows (fake_row), in view order */
    apr_array_header_t *docs;   /* documents (json_t *) for _find and include_docs */
    const char *ddoc;           /* the design document a GET of /_design/ answers */
    int ddoc_status;            /* else: CouchDB's status for it (404, 500) */
    cp_transport_failure ddoc_fail; /* or its read fails so, when its status */
    const char *explain;        /* what _explain answers; NULL: 404 (no _explain) */
    const char *warning;        /* a _find answer's warning */
    int overfull;               /* answers hold a row more than their limit */
    int cut_after;              /* a multi-query answer ends after this many results */
    cp_transport_failure alone_fail; /* the queries asked alone fail so, when its status */
    cp_transport_failure fail;  /* every ask fails so, when fail.status */
    int edit_at;                /* before this _find (1: the first), ... */
    int edit_probe;             /* (or, edit_at 0, before this read of the next key) */
    cp_transport_failure probe_fail; /* reads of the next key fail so, when its status */
    const char *probe;          /* the last read of the next key */
    const char *edit;           /* ... this document replaces the one of its _id */
    int counts;                 /* count queries of grouped rows asked */
    const char *last_find; /* the body of the last _find asked */
    const char *seq;            /* the database's update_seq, its JSON; NULL: a GET of the
                                   database fails (503) */
    const char *view_seq;       /* the view's update_seq, its JSON, in every answer to a
                                   query that asks update_seq=true; NULL: none */
    int odd_role;               /* 1 + the role whose answer gets odd_seq instead */
    const char *odd_seq;
    int asks, asked_alone, finds, gets, posts, probes, db_gets;
    int asked_seq;              /* queries that asked update_seq=true */
    int last_limit;             /* the limit of the last query asked */
    apr_hash_t *notes, *seen;
    apr_array_header_t *log;    /* "CPnnnn level text" */
} fake;

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

/* CouchDB's answer to a view query at index_url. */
static const char *view_answer(const fake *f, const char *index_url, const json_t *params)
{
    const char *part = strstr(index_url, "/_partition/");
    const char *partition = NULL;
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

    if (part) {
        part += strlen("/_partition/");
        partition = apr_pstrcat(pool, apr_pstrndup(pool, part, strcspn(part, "/")), ":", NULL);
    }
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
    const char *text, *reason;
    int i;

    f->finds++;
    f->last_find = body;
    if (f->fail.status) {
        *failure = f->fail;
        return 0;
    }
    if (f->edit && f->finds == f->edit_at) {
        edit_doc(f);
    }
    for (i = 0; i < f->docs->nelts; i++) {
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
static const char *url_param(const char *url, const char *name)
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

/* A read of the view of the index _explain names (its fields' values, in
 * order, the keys), by startkey, endkey, descending and limit: the next
 * key past a group of ties. */
static const char *fake_index_view(const fake *f, const char *url)
{
    const json_t *fields = json_object_get(json_object_get(json_object_get(
        load(f->explain), "index"), "def"), "fields"), *each;
    const char *start = url_param(url, "startkey"), *end = url_param(url, "endkey");
    int down = url_param(url, "descending") != NULL, i, best = -1;
    json_t *keys = json_array(), *out = json_object(), *rows = json_array(), *row;
    size_t k;

    for (i = 0; i < f->docs->nelts; i++) {
        const json_t *doc = APR_ARRAY_IDX(f->docs, i, json_t *);
        json_t *key = json_array();

        json_array_foreach(fields, k, each) {
            const char *name = json_object_iter_key(json_object_iter((json_t *)each));

            if (json_object_get(doc, name)) {
                json_array_append(key, json_object_get(doc, name));
            }
        }
        json_array_append_new(keys, key);
    }
    /* limit=1: the first key from startkey the view's way, up to endkey */
    json_array_foreach(keys, k, each) {
        int from = collate(each, load(start)), to = collate(each, load(end));

        if (json_array_size(each) == json_array_size(fields)
            && (down ? from <= 0 && to >= 0 : from >= 0 && to <= 0)
            && (best < 0 || (down ? -1 : 1) * collate(each, json_array_get(keys, best)) < 0)) {
            best = (int)k;
        }
    }
    assert_string_equal(url_param(url, "limit"), "1");
    if (best >= 0) {
        row = json_object();
        json_object_set(row, "id", json_object_get(APR_ARRAY_IDX(f->docs, best, json_t *),
                                                   "_id"));
        json_object_set(row, "key", json_array_get(keys, best));
        json_object_set_new(row, "value", json_null());
        json_array_append_new(rows, row);
    }
    json_object_set_new(out, "rows", rows);
    json_decref(keys);
    return cp_json_text(pool, cp_json_pool_own(pool, out));
}

static int fake_get(void *baton, const char *url, const char **text, apr_size_t *len,
                    cp_transport_failure *failure)
{
    fake *f = baton;

    f->gets++;
    if (strstr(url, "/_view/") && strstr(url, "startkey=")) {
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
        *text = apr_psprintf(pool, "{\"db_name\":\"db\",\"update_seq\":%s,\"doc_count\":10}",
                             f->seq);
    }
    else if (strstr(url, "/_view/")) {
        *text = "{\"total_rows\":0,\"offset\":0,\"rows\":[]}";
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

static fake *fake_make(void)
{
    fake *f = apr_pcalloc(pool, sizeof(*f));

    f->rows = apr_array_make(pool, 16, sizeof(fake_row));
    f->docs = apr_array_make(pool, 16, sizeof(json_t *));
    f->notes = apr_hash_make(pool);
    f->seen = apr_hash_make(pool);
    f->log = apr_array_make(pool, 4, sizeof(const char *));
    return f;
}

static void add_row(fake *f, const char *key, const char *id, int value)
{
    fake_row *row = apr_array_push(f->rows);

    row->key = load(key);
    row->id = apr_pstrdup(pool, id);
    row->value = cp_json_pool_own(pool, json_integer(value));
}

/* A fake of the map rows (key JSON, id, ... NULL), each row's value its
 * place among them. */
static fake *fake_of(const char *const *rows)
{
    fake *f = fake_make();
    int i;

    for (i = 0; rows[i]; i += 2) {
        add_row(f, rows[i], rows[i + 1], i / 2);
    }
    return f;
}

static void add_doc(fake *f, const char *json)
{
    APR_ARRAY_PUSH(f->docs, json_t *) = load(json);
}

/* Whether a line with the code was logged (at level; 0: any level). */
static int logged(const fake *f, const char *code, int level)
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

/* --- serving ------------------------------------------------------------ */

typedef struct {
    fake *fake;
    cp_transport transport;
    cp_view view;
    cp_source source;
    cp_find_spec spec;
    cp_find_sort sort[2];
    cp_args args;
    cp_request req;
    cp_served served;
} location;

static location *location_of(fake *f, const char *url, int count, int links)
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
static location *find_location(fake *f, const char *field, const char *selector, int count,
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

static const cp_fault *serve(location *l, const char *start)
{
    l->args.start = start;
    return cp_serve(pool, &l->source, &l->req, &l->transport, &l->served);
}

/* Serves the page, which must not fail. */
static cp_page *page_at(location *l, const char *start)
{
    const cp_fault *fault = serve(l, start);

    if (fault) {
        fail_msg("the page at %s failed: %d %s (%s %s)", start ? start : "the start",
                 fault->status, fault->reason, fault->log_code, fault->log_text);
    }
    return &l->served.page;
}

/* The page's rows: their ids (a view's, or a _find document's), or keys
 * of grouped rows, space-separated. */
static const char *row_names(const cp_page *page)
{
    const char *out = "";
    int i;

    for (i = 0; i < page->rows->nelts; i++) {
        const cp_row *row = APR_ARRAY_IDX(page->rows, i, const cp_row *);
        const char *name = row->id ? row->id : cp_json_text(pool, cp_row_key(row));

        out = apr_pstrcat(pool, out, i ? " " : "", name, NULL);
    }
    return out;
}

static const json_t *row_value(const cp_row *row)
{
    return cp_row_decode(pool, row, cp_row_member(row, "value"));
}

/* Walks the location from its first page by next links to its last, then
 * back by prev links, checking that each page holds the expected rows
 * (pages: one string of row names a page) and, when numbered, its number
 * and the location's total. */
static void walk(location *l, const char *const *pages, int n, apr_int64_t total)
{
    const char **tokens = apr_pcalloc(pool, sizeof(*tokens) * (size_t)(n + 1));
    const cp_page *page;
    int i;

    for (i = 0; i < n; i++) {
        page = page_at(l, tokens[i]);
        assert_string_equal(row_names(page), pages[i]);
        if (page->numbered && total >= 0) {
            assert_int_equal(page->total_rows, total);
            assert_int_equal(page->offset, (apr_int64_t)i * l->req.count);
        }
        if (i + 1 < n) {
            assert_non_null(page->next);
            tokens[i + 1] = apr_pstrdup(pool, page->next);
        }
        else {
            assert_null(page->next);
        }
    }
    for (i = n - 1; i > 0; i--) {
        page = page_at(l, tokens[i]);
        assert_non_null(page->prev);
        page = page_at(l, page->prev_is_first ? NULL : page->prev);
        assert_string_equal(row_names(page), pages[i - 1]);
    }
}

/* Ten rows keyed 0..9, ids d0..d9, each with its document {"n": i}. */
static fake *ten_rows(void)
{
    fake *f = fake_make();
    int i;

    for (i = 0; i < 10; i++) {
        add_row(f, apr_psprintf(pool, "%d", i), apr_psprintf(pool, "d%d", i), i);
        add_doc(f, apr_psprintf(pool, "{\"_id\":\"d%d\",\"n\":%d}", i, i));
    }
    return f;
}

#define VIEW_URL "http://couch:5984/db/_design/d/_view/v"

static void view_pages_numbered_walk(void **state)
{
    const char *pages[] = { "d0 d1 d2", "d3 d4 d5", "d6 d7 d8", "d9" };
    location *l = location_of(ten_rows(), VIEW_URL, 3, 2);
    const cp_page *page;

    walk(l, pages, 4, 10);
    l->fake->asks = 0;
    page = page_at(l, NULL);
    assert_true(page->numbered);
    assert_true(page->has_last);
    assert_int_equal(page->last_number, 4);
    /* one multi-query batch a first page */
    assert_int_equal(l->fake->asks, 1);
}

static void view_pages_descending(void **state)
{
    const char *pages[] = { "d9 d8 d7", "d6 d5 d4", "d3 d2 d1", "d0" };
    location *l = location_of(ten_rows(), VIEW_URL, 3, 1);

    l->view.descending = 1;
    walk(l, pages, 4, 10);
}

static void view_pages_of_a_range(void **state)
{
    const char *pages[] = { "d2 d3 d4", "d5 d6 d7" };
    location *l = location_of(ten_rows(), VIEW_URL, 3, 1);

    l->source.low = "2";
    l->source.high = "7";
    l->source.range_set = 1;
    walk(l, pages, 2, 6);
}

static void view_pages_of_a_partition(void **state)
{
    const char *pages[] = { "p:a p:c", "p:e" };
    const char *rows[] = { "1", "p:a", "2", "q:b", "3", "p:c", "4", "q:d", "5", "p:e", NULL };
    location *l = location_of(fake_of(rows), VIEW_URL, 2, 1);

    l->source.partition = "p";
    l->source.partition_set = 1;
    walk(l, pages, 2, 3);
}

static void view_pages_grouped(void **state)
{
    const char *pages[] = { "[\"a\"] [\"b\"]", "[\"c\"]" };
    const char *rows[] = { "[\"a\",1]", "d1", "[\"a\",2]", "d2", "[\"b\",1]", "d3",
                           "[\"c\",1]", "d4", "[\"c\",5]", "d5", NULL };
    location *l = location_of(fake_of(rows), VIEW_URL, 2, 0);

    l->view.reduce = 1;
    l->view.group_level = 1;
    walk(l, pages, 2, -1);
    assert_int_equal(json_integer_value(row_value(
        APR_ARRAY_IDX(page_at(l, NULL)->rows, 0, const cp_row *))), 2);
}

/* Seven groups g0..g6 (two rows each, the first grouped by level 1). */
static location *seven_groups(int count, int links)
{
    fake *f = fake_make();
    location *l;
    int i;

    for (i = 0; i < 14; i++) {
        add_row(f, apr_psprintf(pool, "[\"g%d\",%d]", i / 2, i), apr_psprintf(pool, "d%02d", i), 1);
    }
    l = location_of(f, VIEW_URL, count, links);
    l->view.reduce = 1;
    l->view.group_level = 1;
    return l;
}

/* Grouped rows are counted once a walk: the first page's count query in
 * its one batch, the tokens carrying the count, every page numbered. */
static void view_pages_grouped_counted(void **state)
{
    const char *pages[] = { "[\"g0\"] [\"g1\"]", "[\"g2\"] [\"g3\"]", "[\"g4\"] [\"g5\"]",
                            "[\"g6\"]" };
    location *l = seven_groups(2, 1);
    const cp_page *page;
    cp_token token;
    char *next;

    walk(l, pages, 4, 7);
    l->fake->asks = l->fake->counts = 0;
    page = page_at(l, NULL);
    assert_true(page->numbered);
    assert_int_equal(page->total_rows, 7);
    assert_int_equal(page->last_number, 4);
    assert_false(page->count_earlier);
    assert_int_equal(l->fake->asks, 1);
    assert_int_equal(l->fake->counts, 1);
    assert_string_equal(page->next, "{\"g\":[[\"g2\"]],\"t\":7,\"p\":2}");
    next = apr_pstrdup(pool, page->next);
    /* a later page: one batch, no count query, numbered from its token */
    l->fake->asks = l->fake->counts = 0;
    page = page_at(l, next);
    assert_int_equal(l->fake->asks, 1);
    assert_int_equal(l->fake->counts, 0);
    assert_true(page->numbered);
    assert_true(page->count_earlier);
    assert_int_equal(page->offset, 2);
    assert_null(cp_token_decode(pool, page->next, CP_TOKEN_VIEW_ROWS(0), &token));
    assert_int_equal(token.count_place, 4);
    /* the Last page counts again, and holds what the walk leaves it */
    l->fake->counts = 0;
    page = page_at(l, CP_TOKEN_LAST);
    assert_int_equal(l->fake->counts, 1);
    assert_true(page->numbered);
    assert_int_equal(page->offset, 6);
    assert_string_equal(row_names(page), "[\"g6\"]");
    assert_null(cp_token_decode(pool, page->prev, CP_TOKEN_VIEW_ROWS(0), &token));
    assert_int_equal(token.count_place, 4);
    /* and its prev pages are numbered back to the first */
    page = page_at(l, apr_pstrdup(pool, page->prev));
    assert_true(page->numbered);
    assert_int_equal(page->offset, 4);
    assert_string_equal(row_names(page), "[\"g4\"] [\"g5\"]");
}

/* An old [key] token, a count the rows read contradict, one beyond the
 * location's cap: the page is relative, never refused; none: no count. */
static void view_pages_grouped_counted_tokens(void **state)
{
    location *l = seven_groups(2, 0);
    const char *relative[] = { "[[\"g2\"]]", "{\"g\":[[\"g2\"]],\"t\":7,\"p\":0}",
                               "{\"g\":[[\"g2\"]],\"t\":3,\"p\":2}",
                               "{\"g\":[[\"g2\"]],\"t\":5000,\"p\":2}" };
    const cp_page *page;
    size_t i;

    for (i = 0; i < sizeof(relative) / sizeof(*relative); i++) {
        page = page_at(l, relative[i]);
        assert_string_equal(row_names(page), "[\"g2\"] [\"g3\"]");
        assert_false(page->numbered);
    }
    /* a wrong count within bounds numbers the client's own page wrongly */
    page = page_at(l, "{\"g\":[[\"g2\"]],\"t\":9,\"p\":2}");
    assert_true(page->numbered);
    assert_int_equal(page->total_rows, 9);
    assert_non_null(serve(l, "{\"g\":[[\"g2\"]],\"t\":2,\"p\":2}"));
    assert_non_null(serve(l, "{\"g\":[[\"g2\"]]}"));
    /* CouchPageCount none */
    l->source.count.mode = CP_COUNT_NONE;
    l->fake->counts = 0;
    page = page_at(l, NULL);
    assert_false(page->numbered);
    assert_int_equal(l->fake->counts, 0);
}

/* Keys too long for a token: bounded tokens carry the count too, so the
 * walk stays numbered to its end and back. */
static void view_pages_grouped_counted_long_keys(void **state)
{
    fake *f = fake_make();
    location *l;
    const cp_page *page;
    const char *next = NULL, *prev;
    int i;

    char *long_text = apr_palloc(pool, 5001);

    memset(long_text, 'k', 5000);
    long_text[5000] = '\0';
    for (i = 0; i < 10; i++) {
        add_row(f, apr_psprintf(pool, "[\"%s%c\",%d]", long_text, 'a' + i / 2, i % 2),
                apr_psprintf(pool, "d%d", i), 1);
    }
    l = location_of(f, VIEW_URL, 2, 1);
    l->view.reduce = 1;
    l->view.group_level = 1;
    for (i = 0; i < 3; i++) {
        page = page_at(l, next);
        assert_true(page->numbered);
        assert_int_equal(page->offset, 2 * i);
        assert_int_equal(page->total_rows, 5);
        assert_int_equal(page->rows->nelts, i < 2 ? 2 : 1);
        next = page->next ? apr_pstrdup(pool, page->next) : NULL;
        if (next) {
            assert_non_null(strstr(next, "\"h\""));
            assert_non_null(strstr(next, "\"t\":5"));
        }
    }
    assert_null(next);
    page = page_at(l, CP_TOKEN_LAST);
    assert_int_equal(page->offset, 4);
    prev = apr_pstrdup(pool, page->prev);
    page = page_at(l, prev);
    assert_true(page->numbered);
    assert_int_equal(page->offset, 2);
}

/* Capped: at least N past N; the Last page of such a count is relative. */
static void view_pages_grouped_capped(void **state)
{
    location *l = seven_groups(2, 0);
    const cp_page *page;

    l->source.count.mode = CP_COUNT_CAPPED;
    l->source.count.cap = 3;
    page = page_at(l, NULL);
    assert_true(page->numbered);
    assert_true(page->count_at_least);
    assert_int_equal(page->total_rows, 3);
    assert_int_equal(page->last_number, 0);
    assert_non_null(strstr(page->next, "\"m\":1"));
    page = page_at(l, apr_pstrdup(pool, page->next));
    page = page_at(l, apr_pstrdup(pool, page->next));
    assert_true(page->numbered);
    assert_true(page->count_at_least);
    assert_int_equal(page->offset, 4);
    assert_int_equal(page->total_rows, 6);
    page = page_at(l, CP_TOKEN_LAST);
    assert_false(page->numbered);
    assert_string_equal(row_names(page), "[\"g5\"] [\"g6\"]");
}

/* One document emits its key three times: pages split its entry. */
static void view_pages_of_multi_emits(void **state)
{
    const char *pages[] = { "d0 d1 d1", "d1 d2" };
    const char *rows[] = { "\"a\"", "d0", "\"b\"", "d1", "\"b\"", "d1", "\"b\"", "d1",
                           "\"c\"", "d2", NULL };
    location *l = location_of(fake_of(rows), VIEW_URL, 3, 0);

    walk(l, pages, 2, 5);
    assert_int_equal(json_integer_value(row_value(
        APR_ARRAY_IDX(page_at(l, page_at(l, NULL)->next)->rows, 0, const cp_row *))), 3);
}

/* Keys longer than a token may be: the tokens are bounded, and each page
 * of one is found again by its row (the clamp probes, then the locating
 * query). */
static void view_pages_of_long_keys_by_bounded_tokens(void **state)
{
    const char *pages[] = { "d0 d1", "d2 d3", "d4" };
    fake *f = fake_make();
    location *l;
    const cp_page *page;
    int i;

    for (i = 0; i < 5; i++) {
        char *key = apr_palloc(pool, 600);

        memset(key, 'k', 600);
        key[0] = '"';
        key[597] = (char)('a' + i);
        key[598] = '"';
        key[599] = '\0';
        add_row(f, key, apr_psprintf(pool, "d%d", i), i);
    }
    l = location_of(f, VIEW_URL, 2, 0);
    l->source.max_token_length = 300;
    page = page_at(l, NULL);
    assert_true(strlen(page->next) <= 300);
    assert_null(strstr(page->next, "kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk"
                                   "kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk"));
    walk(l, pages, 3, 5);
    /* a token written to name no row of the location is refused */
    {
        cp_token token;
        const cp_fault *fault;

        assert_null(cp_token_decode(pool, page->next, CP_TOKEN_VIEW_ROWS(1), &token));
        assert_non_null(token.digest);
        fault = serve(l, apr_pstrcat(pool, apr_pstrndup(pool, page->next,
                                                        strlen(page->next) - 3), "AAA]",
                                     NULL));
        assert_non_null(fault);
        assert_int_equal(fault->kind, CP_FAULT_CLIENT);
        assert_int_equal(fault->status, 400);
    }
}

static void view_first_and_last(void **state)
{
    location *l = location_of(ten_rows(), VIEW_URL, 4, 1);
    const cp_page *page = page_at(l, CP_TOKEN_LAST);

    assert_string_equal(row_names(page), "d8 d9");
    assert_true(page->last_is_current);
    assert_int_equal(page->offset, 8);
    page = page_at(l, page->prev);
    assert_string_equal(row_names(page), "d4 d5 d6 d7");
    page = page_at(l, page->prev_is_first ? NULL : page->prev);
    assert_string_equal(row_names(page), "d0 d1 d2 d3");
    assert_null(page->prev);
}

/* Sealed tokens: opened with the location's binding; one of another
 * location is the client's error. */
static void view_pages_with_sealed_tokens(void **state)
{
    location *l = location_of(ten_rows(), VIEW_URL, 3, 0);
    const cp_seal_key *key;
    const char *next, **tokens[] = { &next };
    const cp_fault *fault;

    assert_null(cp_seal_key_derive(pool, "an unguessable secret of the unit tests 8f3a", &key));
    l->source.token_key = key;
    next = apr_pstrdup(pool, page_at(l, NULL)->next);
    assert_string_equal(l->served.binding, VIEW_URL "\n/t");
    assert_null(cp_seal_tokens(pool, key, l->served.binding, tokens, 1));
    assert_string_equal(row_names(page_at(l, next)), "d3 d4 d5");
    l->source.uri = "/elsewhere";
    fault = serve(l, next);
    assert_non_null(fault);
    assert_int_equal(fault->kind, CP_FAULT_CLIENT);
    assert_string_equal(fault->log_code, "CP0102");
}

/* --- _find --------------------------------------------------------------- */

static void find_keyset_pages(void **state)
{
    const char *pages[] = { "d0 d1 d2", "d3 d4 d5", "d6 d7 d8", "d9" };
    location *l = find_location(ten_rows(), "n", "{}", 3, 0);
    const cp_page *page;

    walk(l, pages, 4, -1);
    page = page_at(l, NULL);
    assert_true(page->docs_as_items);
    assert_false(page->numbered);
    assert_string_equal(page->next, "{\"a\":[[2],\"d2\"]}");
    assert_int_equal(l->fake->asks, 0);
    /* the Last page, by keyset from the end */
    page = page_at(l, CP_TOKEN_LAST);
    assert_string_equal(row_names(page), "d7 d8 d9");
    assert_null(page->next);
}

static void find_keyset_pages_of_a_selector(void **state)
{
    const char *pages[] = { "d5 d6", "d7 d8", "d9" };
    location *l = find_location(ten_rows(), "n", "{\"n\":{\"$gte\":5}}", 2, 0);

    walk(l, pages, 3, -1);
}

/* A _find location counted (CouchPageCount, cap rows): the default's. */
static location *counted_location(const char *selector, int count, int links, int cap)
{
    location *l = find_location(ten_rows(), "n", selector, count, links);

    l->source.count.mode = cap ? CP_COUNT_CAPPED : CP_COUNT_NONE;
    l->source.count.cap = cap;
    return l;
}

/* Counted once a walk: the first page asks for the count (keys only, at
 * most cap + 1 rows), the later pages read it from their tokens, one
 * _find each, numbered both ways as a view's pages are. */
static void find_counted_walk(void **state)
{
    const char *pages[] = { "d2 d3 d4", "d5 d6 d7", "d8 d9" };
    location *l = counted_location("{\"n\":{\"$gte\":2}}", 3, 1, 1000);
    const cp_page *page;
    int finds;

    walk(l, pages, 3, 8);
    l->fake->finds = 0;
    page = page_at(l, NULL);
    assert_int_equal(l->fake->finds, 2);
    assert_true(page->numbered && !page->count_at_least && !page->count_earlier);
    assert_int_equal(page->last_number, 3);
    assert_string_equal(page->next, "{\"a\":[[4],\"d4\"],\"t\":8,\"p\":2}");
    finds = l->fake->finds;
    page = page_at(l, apr_pstrdup(pool, page->next));
    assert_int_equal(l->fake->finds - finds, 1);
    assert_true(page->numbered && page->count_earlier);
    assert_int_equal(page->offset, 3);
    assert_string_equal(page->prev, "{\"b\":[[5],\"d5\"],\"t\":8,\"p\":3}");
    /* the Last page counts again, and is aligned with the first's pages */
    page = page_at(l, CP_TOKEN_LAST);
    assert_string_equal(row_names(page), "d8 d9");
    assert_true(page->numbered && !page->count_earlier);
    assert_int_equal(page->offset, 6);
    assert_string_equal(page->prev, "{\"b\":[[8],\"d8\"],\"t\":8,\"p\":6}");
    page = page_at(l, apr_pstrdup(pool, page->prev));
    assert_string_equal(row_names(page), "d5 d6 d7");
    assert_int_equal(page->offset, 3);
    assert_true(page->count_earlier);
}

/* A first or Last page whose own read holds every row asks no count. */
static void find_counted_by_the_page_alone(void **state)
{
    location *l = counted_location("{\"n\":{\"$gte\":6}}", 3, 1, 1000);
    const cp_page *page = page_at(l, NULL);

    assert_int_equal(l->fake->finds, 1);
    assert_true(page->numbered);
    assert_int_equal(page->total_rows, 4);
    assert_int_equal(page->last_number, 2);
    page = page_at(l, CP_TOKEN_LAST);
    assert_int_equal(l->fake->finds, 2);
    assert_string_equal(row_names(page), "d9");
    assert_int_equal(page->offset, 3);
    /* and says at least N where it holds more than N */
    l->source.count.cap = 2;
    page = page_at(l, NULL);
    assert_true(page->count_at_least);
    assert_int_equal(l->fake->finds, 3);
}

/* Capped: "at least N" past N, the page's place known, no Last page
 * number; the Last page of such a count is numbered relative to itself. */
static void find_counted_capped(void **state)
{
    location *l = counted_location("{}", 3, 0, 4);
    const cp_page *page = page_at(l, NULL);

    assert_true(page->numbered && page->count_at_least);
    assert_int_equal(page->total_rows, 4);
    assert_int_equal(page->last_number, 0);
    assert_string_equal(page->next, "{\"a\":[[2],\"d2\"],\"t\":4,\"p\":2,\"m\":1}");
    page = page_at(l, apr_pstrdup(pool, page->next));
    assert_string_equal(row_names(page), "d3 d4 d5");
    assert_true(page->numbered && page->count_at_least && page->count_earlier);
    assert_int_equal(page->offset, 3);
    assert_int_equal(page->total_rows, 6);
    page = page_at(l, apr_pstrdup(pool, page->next));
    assert_int_equal(page->offset, 6);
    page = page_at(l, CP_TOKEN_LAST);
    assert_false(page->numbered);
    assert_string_equal(row_names(page), "d7 d8 d9");
    /* the count reads at most cap + 1 rows */
    assert_int_equal((int)json_integer_value(json_object_get(load(l->fake->last_find), "limit")),
                     5);
}

/* Prefer: count=none skips the count (Preference-Applied says so); a
 * location of CouchPageCount none counts nothing whatever is asked. */
static void find_counted_as_preferred(void **state)
{
    location *l = counted_location("{}", 3, 0, 1000);
    const cp_page *page;

    l->req.prefer = "count=none";
    page = page_at(l, NULL);
    assert_false(page->numbered);
    assert_int_equal(l->fake->finds, 1);
    assert_string_equal(l->served.preference_applied, "count=none");
    l->req.prefer = "count=estimated";
    page = page_at(l, NULL);
    assert_true(page->numbered);
    assert_int_equal(page->total_rows, 10);
    assert_string_equal(l->served.preference_applied, "count=estimated");
    l->req.prefer = "count=exact";
    page_at(l, NULL);
    assert_null(l->served.preference_applied);
    l->source.count.mode = CP_COUNT_NONE;
    page = page_at(l, NULL);
    assert_false(page->numbered);
    assert_null(l->served.preference_applied);
}

/* A token's count that the rows read contradict, or that the location's
 * count cannot have made, numbers the page relative to itself; its rows
 * are the token's all the same. */
static void find_counted_tokens_checked(void **state)
{
    location *l = counted_location("{}", 3, 0, 1000);
    const cp_page *page;

    /* the read ends (d9) where a count of 20 says it does not */
    page = page_at(l, "{\"a\":[[5],\"d5\"],\"t\":20,\"p\":5}");
    assert_string_equal(row_names(page), "d6 d7 d8");
    page = page_at(l, "{\"a\":[[6],\"d6\"],\"t\":20,\"p\":6}");
    assert_string_equal(row_names(page), "d7 d8 d9");
    assert_false(page->numbered);
    /* more than the location counts */
    page = page_at(l, "{\"a\":[[2],\"d2\"],\"t\":5000,\"p\":2}");
    assert_false(page->numbered);
    assert_string_equal(row_names(page), "d3 d4 d5");
    /* a wrong count within bounds: a wrong number, on this page alone */
    page = page_at(l, "{\"a\":[[2],\"d2\"],\"t\":900,\"p\":100}");
    assert_true(page->numbered);
    assert_int_equal(page->offset, 101);
    /* refused by form: 400 */
    assert_int_equal(serve(l, "{\"a\":[[2],\"d2\"],\"t\":9,\"p\":9}")->status, 400);
    assert_int_equal(serve(l, "{\"a\":[[2],\"d2\"],\"t\":9}")->status, 400);
    assert_int_equal(serve(l, "{\"a\":[[2],\"d2\"],\"t\":9.5,\"p\":1}")->status, 400);
}

/* A design document of one JSON index on k and n. */
#define INDEX_DDOC "{\"_id\":\"_design/idx\",\"language\":\"query\",\"views\":{\"by-kn\":" \
    "{\"map\":{\"fields\":{\"k\":\"asc\",\"n\":\"asc\"}},\"reduce\":\"_count\"," \
    "\"options\":{\"def\":{\"fields\":[\"k\",\"n\"]}}}}}"

/* Documents under k "a" and "b", and the index's view of them: keys
 * [k, n] in collation order. */
static fake *indexed_docs(void)
{
    fake *f = fake_make();
    int i;

    for (i = 0; i < 14; i++) {
        const char *k = i % 2 ? "b" : "a";

        add_doc(f, apr_psprintf(pool, "{\"_id\":\"d%02d\",\"k\":\"%s\",\"n\":%d}", i, k, i));
    }
    for (i = 0; i < 14; i += 2) {
        add_row(f, apr_psprintf(pool, "[\"a\",%d]", i), apr_psprintf(pool, "d%02d", i), 0);
    }
    for (i = 1; i < 14; i += 2) {
        add_row(f, apr_psprintf(pool, "[\"b\",%d]", i), apr_psprintf(pool, "d%02d", i), 0);
    }
    f->ddoc = INDEX_DDOC;
    return f;
}

static location *indexed_location(int links)
{
    location *l = find_location(indexed_docs(), "n", "{\"k\":\"a\"}", 3, links);

    l->spec.index_ddoc = "idx";
    return l;
}

static void find_numbered_pages_by_keyset(void **state)
{
    const char *pages[] = { "d00 d02 d04", "d06 d08 d10", "d12" };
    location *l = indexed_location(0);
    const cp_page *page;

    walk(l, pages, 3, 7);
    /* learnt once: the design document and one look at its view */
    assert_int_equal(l->fake->gets, 2);
    assert_int_equal(l->fake->finds, 0);
    assert_true(logged(l->fake, "CP0371", CP_LOG_DEBUG));
    page = page_at(l, NULL);
    assert_true(page->numbered);
    assert_true(page->docs_as_items);
    assert_string_equal(l->served.view->url, "http://couch:5984/db/_find");
    /* its tokens are _find's */
    assert_string_equal(page->next, "{\"a\":[[4],\"d04\"]}");
}

/* With page links, numbered by the keyset pager too: one batch a page
 * (its read, and one read the other way for the links behind), keyset
 * tokens bound to the index's view; the view's links it handed out
 * before, at their row, keep working. */
static void find_numbered_pages_with_page_links(void **state)
{
    const char *pages[] = { "d00 d02 d04", "d06 d08 d10", "d12" };
    location *l = indexed_location(2);
    const cp_page *page;
    const cp_page_link *link;
    const cp_fault *fault;

    walk(l, pages, 3, 7);
    page = page_at(l, NULL);
    assert_true(page->numbered);
    assert_true(page->docs_as_items);
    assert_int_equal(page->pages->nelts, 3);
    assert_int_equal(page->last_number, 3);
    assert_string_equal(page->next, "{\"a\":[[4],\"d04\"]}");
    link = &APR_ARRAY_IDX(page->pages, 2, cp_page_link);
    assert_int_equal(link->number, 3);
    assert_string_equal(link->start, "{\"a\":[[10],\"d10\"]}");
    assert_string_equal(l->served.view->url,
                        "http://couch:5984/db/_design/idx/_view/by-kn");
    assert_string_equal(l->served.binding,
                        "http://couch:5984/db/_design/idx/_view/by-kn\n/t");
    /* the location's own view is left as it is */
    assert_false(l->view.include_docs);
    assert_string_equal(l->view.url, "http://couch:5984/db/_find");
    /* the middle page: one batch, with its prev and page links behind */
    l->fake->asks = 0;
    page = page_at(l, "{\"a\":[[4],\"d04\"]}");
    assert_string_equal(row_names(page), "d06 d08 d10");
    assert_int_equal(l->fake->asks, 1);
    assert_int_equal(l->fake->finds, 0);
    assert_int_equal(page->offset, 3);
    assert_true(page->prev_is_first);
    assert_string_equal(page->next, "{\"a\":[[10],\"d10\"]}");
    /* an old link of the index's view: the page starts at its row */
    page = page_at(l, "[[\"a\",6],\"d06\"]");
    assert_string_equal(row_names(page), "d06 d08 d10");
    assert_int_equal(page->offset, 3);
    assert_true(page->numbered);
    assert_string_equal(page->next, "{\"a\":[[10],\"d10\"]}");
    /* the view's rows have ids: a token without one is refused */
    fault = serve(l, "[[\"a\",6]]");
    assert_non_null(fault);
    assert_string_equal(fault->log_code, "CP0102");
    /* without page links, a view's token is no token of the location */
    l = indexed_location(0);
    fault = serve(l, "[[\"a\",6],\"d06\"]");
    assert_non_null(fault);
    assert_string_equal(fault->log_code, "CP0102");
    /* the Last page, aligned */
    l = indexed_location(2);
    page = page_at(l, CP_TOKEN_LAST);
    assert_string_equal(row_names(page), "d12");
    assert_int_equal(page->offset, 6);
    assert_true(page->last_is_current);
}

static void find_unnumbered_where_the_index_cannot_number(void **state)
{
    location *l = find_location(indexed_docs(), "n", "{\"n\":{\"$gt\":3}}", 3, 0);
    const cp_page *page;

    l->spec.index_ddoc = "idx";
    page = page_at(l, NULL);
    assert_false(page->numbered);
    assert_string_equal(row_names(page), "d04 d05 d06");
    assert_int_equal(l->fake->finds, 1);
    assert_true(logged(l->fake, "CP0372", CP_LOG_DEBUG));
    /* a design document that cannot be read now: by _find, learnt again next time */
    l = find_location(indexed_docs(), "n", "{\"k\":\"a\"}", 3, 0);
    l->spec.index_ddoc = "idx";
    l->fake->ddoc_status = 500;
    page = page_at(l, NULL);
    assert_false(page->numbered);
    assert_int_equal(apr_hash_count(l->fake->notes), 0);
    assert_true(logged(l->fake, "CP0370", CP_LOG_DEBUG));
}

/* What CouchDB 3.4.3's _explain names for a query through the index
 * on k and n (its answer, shortened to what is read). */
#define EXPLAIN_KN "{\"dbname\":\"db\",\"index\":{\"ddoc\":\"_design/idx\",\"name\":" \
    "\"by-kn\",\"type\":\"json\",\"partitioned\":false,\"def\":{\"fields\":[{\"k\":" \
    "\"asc\"},{\"n\":\"asc\"}]}},\"selector\":{\"k\":{\"$eq\":\"a\"}},\"limit\":4}"

/* Without CouchPageIndex, the index _explain names numbers the pages its
 * view holds as a key range: learnt once (one POST, one look at the view). */
static void find_numbered_by_the_index_explain_names(void **state)
{
    const char *pages[] = { "d00 d02 d04", "d06 d08 d10", "d12" };
    location *l = find_location(indexed_docs(), "n", "{\"k\":\"a\"}", 3, 0);
    const cp_page *page;

    l->fake->explain = EXPLAIN_KN;
    walk(l, pages, 3, 7);
    assert_int_equal(l->fake->posts, 1);
    assert_int_equal(l->fake->gets, 1);
    assert_int_equal(l->fake->finds, 0);
    assert_true(logged(l->fake, "CP0371", CP_LOG_DEBUG));
    page = page_at(l, NULL);
    assert_true(page->numbered);
    assert_string_equal(page->next, "{\"a\":[[4],\"d04\"]}");
    assert_int_equal(l->fake->posts, 1);
}

/* A server without _explain (404), or an index _explain names that is no
 * range of the selector: the pages go by _find, and the 404 is noted. */
static void find_by_find_where_explain_cannot_tell(void **state)
{
    location *l = find_location(indexed_docs(), "n", "{\"k\":\"a\"}", 3, 0);
    const cp_page *page;

    page = page_at(l, NULL);
    assert_false(page->numbered);
    assert_string_equal(row_names(page), "d00 d02 d04");
    page_at(l, NULL);
    assert_int_equal(l->fake->posts, 1);
    assert_int_equal(l->fake->finds, 2);
    l = find_location(indexed_docs(), "n", "{\"n\":{\"$gt\":3}}", 3, 0);
    l->fake->explain = EXPLAIN_KN;
    page = page_at(l, NULL);
    assert_false(page->numbered);
    assert_string_equal(row_names(page), "d04 d05 d06");
    assert_true(logged(l->fake, "CP0372", CP_LOG_DEBUG));
}

/* Where the view cannot serve (a condition besides the index's range),
 * the index that starts a page at its row is logged at warn, once. */
static void find_residual_logs_the_index_to_create_once(void **state)
{
    location *l = find_location(indexed_docs(), "n", "{\"k\":\"a\",\"n\":{\"$lt\":5}}", 2, 0);
    const cp_page *page;
    int i, lines = 0;

    l->fake->explain = EXPLAIN_KN;
    page = page_at(l, NULL);
    assert_false(page->numbered);
    assert_string_equal(row_names(page), "d00 d02");
    assert_string_equal(row_names(page_at(l, page->next)), "d04");
    for (i = 0; i < l->fake->log->nelts; i++) {
        const char *line = APR_ARRAY_IDX(l->fake->log, i, const char *);

        if (!strncmp(line, "CP0422 4 ", 9)) {
            lines++;
            assert_non_null(strstr(line, "POST http://couch:5984/db/_index {\"index\":{\"fields"
                                         "\":[\"k\",\"n\",\"_id\"]},\"type\":\"json\"}"));
        }
    }
    assert_int_equal(lines, 1);
}

/* What _explain names for a query through an index on t and _id. */
#define EXPLAIN_TID "{\"dbname\":\"db\",\"index\":{\"ddoc\":\"_design/tid\",\"name\":" \
    "\"by-t-id\",\"type\":\"json\",\"partitioned\":false,\"def\":{\"fields\":[{\"t\":" \
    "\"asc\"},{\"_id\":\"asc\"}]}},\"selector\":{},\"limit\":4}"

/* Twelve documents d00..d11, t = i % 3: three groups of four ties. */
static fake *tied_docs(void)
{
    fake *f = fake_make();
    int i;

    for (i = 0; i < 12; i++) {
        add_doc(f, apr_psprintf(pool, "{\"_id\":\"d%02d\",\"t\":%d}", i, i % 3));
    }
    return f;
}

/* A residual condition ($lt, which the view cannot read) through an index
 * on [t, _id]: the ties asked apart, one _find a page inside a group of
 * ties and two where the page crosses one, both ways and descending, the
 * walk CouchDB's order; no CP0422. */
static void find_residual_asks_the_ties_apart(void **state)
{
    const char *pages[] = { "d00 d03 d06", "d09 d01 d04", "d07 d10 d02", "d05 d08 d11" };
    const char *down[] = { "d11 d08 d05", "d02 d10 d07", "d04 d01 d09", "d06 d03 d00" };
    location *l = find_location(tied_docs(), "t", "{\"t\":{\"$lt\":9}}", 3, 0);
    const cp_page *page;

    l->fake->explain = EXPLAIN_TID;
    walk(l, pages, 4, -1);
    assert_false(logged(l->fake, "CP0422", CP_LOG_WARNING));
    assert_true(logged(l->fake, "CP0372", CP_LOG_DEBUG));
    /* inside a group: the ties fill the page, one query */
    l->req.count = 2;
    l->fake->finds = l->fake->probes = 0;
    page = page_at(l, "{\"a\":[[0],\"d00\"]}");
    assert_string_equal(row_names(page), "d03 d06");
    assert_int_equal(l->fake->finds, 1);
    assert_int_equal(l->fake->probes, 0);
    /* across a group: the ties, the next value past theirs (a read of the
     * index's view, from past [0, every id]), then the rest from it */
    page = page_at(l, page->next);
    assert_string_equal(row_names(page), "d09 d01");
    assert_int_equal(l->fake->finds, 3);
    assert_int_equal(l->fake->probes, 1);
    assert_string_equal(url_param(l->fake->probe, "startkey"), "[0,{\"\\uffff\":null}]");
    assert_string_equal(url_param(l->fake->probe, "endkey"), "[{\"\\uffff\":null}]");
    assert_null(url_param(l->fake->probe, "descending"));
    assert_string_equal(url_param(l->fake->probe, "reduce"), "false");
    /* backward likewise: the ties before the row, then the rest (here
     * the row beyond the page, which shows a prev, is the rest's), from
     * the next value down, read before [1] */
    page = page_at(l, "{\"b\":[[1],\"d10\"]}");
    assert_string_equal(row_names(page), "d04 d07");
    assert_int_equal(l->fake->finds, 4);
    page = page_at(l, page->prev);
    assert_string_equal(row_names(page), "d09 d01");
    assert_int_equal(l->fake->finds, 6);
    assert_int_equal(l->fake->probes, 2);
    assert_string_equal(url_param(l->fake->probe, "startkey"), "[1]");
    assert_string_equal(url_param(l->fake->probe, "endkey"), "[]");
    assert_string_equal(url_param(l->fake->probe, "descending"), "true");
    /* past the last group, no value: the rest is not asked */
    page = page_at(l, "{\"a\":[[2],\"d08\"]}");
    assert_string_equal(row_names(page), "d11");
    assert_null(page->next);
    assert_int_equal(l->fake->finds, 7);
    assert_int_equal(l->fake->probes, 3);
    /* the read of the next value fails: the rest from the row's value */
    l->fake->probe_fail.status = 502;
    l->fake->probe_fail.backend_status = 500;
    l->fake->probe_fail.reason = "CouchDB answered 500";
    page = page_at(l, "{\"a\":[[0],\"d06\"]}");
    assert_string_equal(row_names(page), "d09 d01");
    assert_int_equal(l->fake->finds, 9);
    assert_true(logged(l->fake, "CP0374", CP_LOG_DEBUG));
    /* descending */
    l = find_location(tied_docs(), "t", "{\"t\":{\"$lt\":9}}", 3, 0);
    l->fake->explain = EXPLAIN_TID;
    l->spec.sort = &l->sort[1];
    walk(l, down, 4, -1);
    /* in a partition: the rest from the row's value, no read of the view */
    l = find_location(tied_docs(), "t", "{\"t\":{\"$lt\":9}}", 2, 0);
    l->fake->explain = EXPLAIN_TID;
    l->source.partition = "p";
    l->source.partition_set = 1;
    page = page_at(l, "{\"a\":[[0],\"d06\"]}");
    assert_string_equal(row_names(page), "d09 d01");
    assert_int_equal(l->fake->finds, 2);
    assert_int_equal(l->fake->probes, 0);
    /* an index not ending in _id: the tie-blind query, and CP0422 */
    l = find_location(tied_docs(), "t", "{\"t\":{\"$lt\":9}}", 3, 0);
    l->fake->explain = EXPLAIN_KN;
    page = page_at(l, "{\"a\":[[0],\"d06\"]}");
    assert_string_equal(row_names(page), "d09 d01 d04");
    assert_int_equal(l->fake->finds, 1);
    assert_true(logged(l->fake, "CP0422", CP_LOG_WARNING));
}

/* A row edited between the ties' read and the rest's, from the ties to
 * the rest's first rows (before the read of the next value, which finds
 * its new value): once on the page, where the later read found it, and
 * the rest asked again whole from the row's value, since it left the page
 * short. Edited after that read, between the row's value and the next,
 * it is on the page once, where the ties' read found it, and not again
 * on the next page; no other row is lost or repeated. */
static void find_ties_apart_edited_between_the_reads(void **state)
{
    const char *pages[] = { "d06 d09 d01", "d04 d07 d10" };
    location *l = find_location(tied_docs(), "t", "{\"t\":{\"$lt\":9}}", 3, 0);
    const cp_page *page;

    l->fake->explain = EXPLAIN_TID;
    page_at(l, NULL);
    l->fake->finds = 0;
    l->fake->edit_probe = 1;
    l->fake->edit = "{\"_id\":\"d06\",\"t\":0.5}";
    page = page_at(l, "{\"a\":[[0],\"d03\"]}");
    assert_string_equal(row_names(page), "d09 d06 d01");
    assert_int_equal(l->fake->finds, 3);
    assert_int_equal(l->fake->probes, 1);
    assert_string_equal(page->next, "{\"a\":[[1],\"d01\"]}");
    /* into the gap between 0 and the next value, 1, after it was read */
    l = find_location(tied_docs(), "t", "{\"t\":{\"$lt\":9}}", 3, 0);
    l->fake->explain = EXPLAIN_TID;
    page_at(l, NULL);
    l->fake->finds = 0;
    l->fake->edit_at = 2;
    l->fake->edit = "{\"_id\":\"d06\",\"t\":0.5}";
    page = page_at(l, "{\"a\":[[0],\"d03\"]}");
    assert_string_equal(row_names(page), pages[0]);
    assert_int_equal(l->fake->finds, 2);
    assert_string_equal(row_names(page_at(l, page->next)), pages[1]);
}

/* Two sort fields through an index [t, u, _id]: the ties equal on both,
 * then the rest; the walk both ways is the sort's order. */
static void find_residual_ties_apart_on_two_fields(void **state)
{
    const char *pages[] = { "d00 d06 d02", "d08 d04 d10", "d01 d07 d03", "d09 d05 d11" };
    const char *names[] = { "t", "u" };
    location *l = find_location(fake_make(), "t", "{\"t\":{\"$lt\":9}}", 3, 0);
    int i;

    for (i = 0; i < 12; i++) {
        add_doc(l->fake, apr_psprintf(pool, "{\"_id\":\"d%02d\",\"t\":%d,\"u\":%d}", i, i % 2,
                                      (i / 2) % 3));
    }
    assert_null(cp_find_sort_init(pool, names, 2, 0, &l->sort[0]));
    l->fake->explain = "{\"index\":{\"ddoc\":\"_design/tu\",\"name\":\"tu\",\"type\":"
                       "\"json\",\"def\":{\"fields\":[{\"t\":\"asc\"},{\"u\":\"asc\"},"
                       "{\"_id\":\"asc\"}]}}}";
    walk(l, pages, 4, -1);
    assert_true(logged(l->fake, "CP0372", CP_LOG_DEBUG));
    assert_false(logged(l->fake, "CP0422", CP_LOG_WARNING));
    /* a page and the row beyond it cross from a pair of ties: two queries,
     * either way */
    l->req.count = 1;
    l->fake->finds = 0;
    assert_string_equal(row_names(page_at(l, "{\"a\":[[1,0],\"d01\"]}")), "d07");
    assert_int_equal(l->fake->finds, 2);
    assert_string_equal(row_names(page_at(l, "{\"b\":[[1,1],\"d09\"]}")), "d03");
    assert_int_equal(l->fake->finds, 4);
}

/* The rows beyond a token's row went: the Last page (or the first),
 * which that page's own token then is, sealed where tokens are. */
static void find_deleted_boundary_rows(void **state)
{
    location *l = find_location(ten_rows(), "n", "{}", 3, 0);
    const char *next, *prev;
    const cp_page *page;

    next = apr_pstrdup(pool, page_at(l, NULL)->next);
    prev = apr_pstrdup(pool, page_at(l, "{\"a\":[[5],\"d5\"]}")->prev);
    /* every row after d2 goes */
    l->fake->docs->nelts = 3;
    l->fake->finds = 0;
    page = page_at(l, next);
    assert_string_equal(row_names(page), "d0 d1 d2");
    assert_int_equal(l->fake->finds, 2);
    assert_string_equal(page->last, CP_TOKEN_LAST);
    assert_true(page->last_is_current);
    /* every row before d6 goes: the first page */
    l = find_location(ten_rows(), "n", "{}", 3, 0);
    memmove(l->fake->docs->elts, l->fake->docs->elts + 6 * sizeof(json_t *),
            4 * sizeof(json_t *));
    l->fake->docs->nelts = 4;
    page = page_at(l, prev);
    assert_string_equal(row_names(page), "d6 d7 d8");
    assert_null(page->prev);
}

static void find_warnings_are_logged_once_a_location(void **state)
{
    location *l = find_location(ten_rows(), "n", "{}", 3, 0);

    l->fake->warning = "No matching index found, create an index to optimize query time.";
    page_at(l, NULL);
    page_at(l, NULL);
    assert_true(logged(l->fake, "CP0322", CP_LOG_WARNING));
    assert_true(logged(l->fake, "CP0322", CP_LOG_DEBUG));
    /* the first line, after what the location's _explain told (CP0371) */
    assert_true(logged(l->fake, "CP0371", CP_LOG_DEBUG));
    assert_non_null(strstr(APR_ARRAY_IDX(l->fake->log, 1, const char *),
                           "(CouchPageView http://couch:5984/db/_find, <Location /t> at "
                           "t.conf:2). Create a JSON index whose fields are the equality "
                           "fields of CouchPageSelector, then \"n\""));
}

/* --- faults ---------------------------------------------------------------- */

static void assert_fault(const cp_fault *fault, cp_fault_class kind, int status,
                         const char *error, const char *code)
{
    assert_non_null(fault);
    assert_int_equal(fault->kind, kind);
    assert_int_equal(fault->status, status);
    assert_string_equal(fault->error, error);
    assert_string_equal(fault->log_code, code);
}

static void overfull_answers_are_refused_on_every_location(void **state)
{
    location *l = location_of(ten_rows(), VIEW_URL, 3, 1);
    const cp_fault *fault;

    l->fake->overfull = 1;
    fault = serve(l, NULL);
    assert_fault(fault, CP_FAULT_BACKEND, 502, "backend_error", "CP0181");
    assert_int_equal(fault->log_level, CP_LOG_ERR);
    assert_non_null(strstr(fault->log_text, "(CouchPageView " VIEW_URL
                                            ", <Location /t> at t.conf:2)"));
    l = find_location(ten_rows(), "n", "{}", 3, 0);
    l->fake->overfull = 1;
    assert_fault(serve(l, NULL), CP_FAULT_BACKEND, 502, "backend_error", "CP0181");
    l = indexed_location(0);
    l->fake->overfull = 1;
    fault = serve(l, NULL);
    assert_fault(fault, CP_FAULT_BACKEND, 502, "backend_error", "CP0181");
    assert_non_null(strstr(fault->log_text, "/_design/idx/_view/by-kn"));
}

/* A multi-query answer cut after its first result: the rest asked alone
 * serve the page; refused alone (CouchDB refusing a token's reversed
 * range), the token's fault; failing alone, the backend's. */
static void cut_batch_answers(void **state)
{
    location *l = location_of(ten_rows(), VIEW_URL, 3, 1);
    const cp_transport_failure refused = { 502, 400, "CouchDB answered 400 "
                                           "query_parse_error: reversed", 0 };
    const cp_transport_failure lost = { 502, 0, "the backend response was cut off", 0 };
    const char *next = apr_pstrdup(pool, page_at(l, NULL)->next);
    const cp_page *page;

    l->fake->cut_after = 1;
    page = page_at(l, next);
    assert_string_equal(row_names(page), "d3 d4 d5");
    assert_true(l->fake->asked_alone > 0);
    assert_true(logged(l->fake, "CP0119", CP_LOG_INFO));
    l->fake->alone_fail = refused;
    assert_fault(serve(l, next), CP_FAULT_CLIENT, 400, "bad_request", "CP0122");
    assert_true(logged(l->fake, "CP0120", CP_LOG_DEBUG));
    l->fake->alone_fail = lost;
    assert_fault(serve(l, next), CP_FAULT_BACKEND, 502, "backend_error", "CP0101");
    assert_true(logged(l->fake, "CP0121", CP_LOG_INFO));
}

static void backend_failures(void **state)
{
    location *l = location_of(ten_rows(), VIEW_URL, 3, 1);
    const cp_transport_failure not_found = { 502, 404, "CouchDB answered 404 not_found: "
                                             "missing", 0 };
    const cp_transport_failure crashed = { 502, 500, "CouchDB answered 500", 0 };
    const cp_transport_failure unreachable = { 503, 0, "the backend is unavailable", 0 };
    const cp_transport_failure late = { 504, 0, "the page's deadline of 30 s passed", 1 };
    const cp_fault *fault;

    l->fake->fail = not_found;
    fault = serve(l, NULL);
    assert_fault(fault, CP_FAULT_BACKEND, 502, "backend_error", "CP0101");
    assert_string_equal(fault->log_text, "the backend queries for /t failed with 502: "
                        "CouchDB answered 404 not_found: missing (CouchPageView " VIEW_URL
                        ", <Location /t> at t.conf:2)");
    l->fake->fail = crashed;
    assert_fault(serve(l, NULL), CP_FAULT_BACKEND, 502, "backend_error", "CP0101");
    l->fake->fail = unreachable;
    assert_fault(serve(l, NULL), CP_FAULT_BACKEND, 503, "backend_unavailable", "CP0101");
    l->fake->fail = late;
    fault = serve(l, NULL);
    assert_fault(fault, CP_FAULT_BACKEND, 504, "backend_timeout", "CP0183");
    assert_non_null(strstr(fault->log_text, "(CouchPageBackendDeadline 30 s; CouchPageView"));
    /* a _find location alike; a 400 to a token's query is the token's */
    l = find_location(ten_rows(), "n", "{}", 3, 0);
    l->fake->fail = late;
    assert_fault(serve(l, NULL), CP_FAULT_BACKEND, 504, "backend_timeout", "CP0183");
    l->fake->fail = not_found;
    l->fake->fail.backend_status = 400;
    assert_fault(serve(l, "{\"a\":[[2],\"d2\"]}"), CP_FAULT_CLIENT, 400, "bad_request",
                 "CP0323");
}

/* The design document's read passed the page's deadline: the page is a
 * 504 then, and no _find is asked after it. */
static void find_index_read_past_the_deadline(void **state)
{
    location *l = indexed_location(0);
    const cp_transport_failure late = { 504, 0, "the page's deadline of 30 s passed, 1 "
                                        "backend request sent", 1 };

    l->fake->ddoc_fail = late;
    assert_fault(serve(l, NULL), CP_FAULT_BACKEND, 504, "backend_timeout", "CP0183");
    assert_int_equal(l->fake->finds, 0);
    assert_int_equal(l->fake->asks, 0);
}

/* --- ?page=N ----------------------------------------------------------- */

/* Walks the location by next links, then asks ?page=N for every N to one
 * past the last with a reach of reach pages: the pages within it are the
 * walk's (rows, tokens, position; the Last page by its own token), the
 * others 400s that say why, and each jump asks at most two batches. The
 * number of pages. */
static int jumps_are_the_walks_pages(location *l, int reach)
{
    const char *names[64], *nexts[64], *prevs[64], *token = NULL;
    apr_int64_t offsets[64];
    int n = 0, i;

    do {
        const cp_page *page = page_at(l, token);

        assert_true(page->numbered);
        names[n] = row_names(page);
        nexts[n] = page->next ? apr_pstrdup(pool, page->next) : NULL;
        prevs[n] = page->prev_is_first ? NULL : page->prev ? apr_pstrdup(pool, page->prev) : NULL;
        offsets[n++] = page->offset;
        token = nexts[n - 1];
    } while (token && n < 64);
    l->source.jump_reach = reach;
    for (i = 1; i <= n + 1; i++) {
        const cp_fault *fault;
        int reached = i == 1 || i == n || i <= reach || n - i < reach;

        l->fake->asks = l->fake->finds = 0;
        l->args.page = i;
        fault = serve(l, NULL);
        if (i > n || !reached) {
            assert_non_null(fault);
            assert_int_equal(fault->status, 400);
            assert_string_equal(fault->log_code, "CP0102");
            assert_int_equal(fault->log_level, CP_LOG_INFO);
            assert_non_null(strstr(fault->reason, i > n ? "is past the last page"
                                                        : reach ? "can be; follow" : "only the first"));
            continue;
        }
        if (fault) {
            fail_msg("page %d: %d %s", i, fault->status, fault->reason);
        }
        assert_string_equal(row_names(&l->served.page), names[i - 1]);
        assert_int_equal(l->served.page.offset, offsets[i - 1]);
        if (nexts[i - 1] || l->served.page.next) {
            assert_string_equal(l->served.page.next, nexts[i - 1]);
        }
        if (i > 2 && i < n) {
            assert_string_equal(l->served.page.prev, prevs[i - 1]);
        }
        assert_in_range(l->fake->asks + l->fake->finds, 1, 3);
    }
    l->args.page = 0;
    return n;
}

/* Twenty rows keyed by twos (0, 0, 1, 1, ...), ids e00..e19, and every
 * fifth document's key emitted three times: entries of three rows, which
 * pages start inside. */
static fake *jump_rows(void)
{
    fake *f = fake_make();
    int i, k;

    for (i = 0; i < 20; i++) {
        for (k = 0; k < (i % 5 ? 1 : 3); k++) {
            add_row(f, apr_psprintf(pool, "%d", i / 2), apr_psprintf(pool, "e%02d", i), i);
        }
    }
    return f;
}

static void jumps_on_views(void **state)
{
    location *l = location_of(jump_rows(), VIEW_URL, 3, 0);
    int reach;

    for (reach = 0; reach <= 4; reach++) {
        assert_int_equal(jumps_are_the_walks_pages(l, reach), 10);
    }
    l = location_of(jump_rows(), VIEW_URL, 4, 2);
    l->view.descending = 1;
    assert_int_equal(jumps_are_the_walks_pages(l, 2), 7);
    l = location_of(jump_rows(), VIEW_URL, 2, 1);
    l->source.low = "2";
    l->source.high = "7";
    l->source.range_set = 1;
    assert_int_equal(jumps_are_the_walks_pages(l, 3), 9);
    l->view.descending = 1;
    assert_int_equal(jumps_are_the_walks_pages(l, 2), 9);
}

static void jumps_on_a_partition(void **state)
{
    const char *rows[] = { "1", "p:a", "2", "q:b", "3", "p:c", "4", "q:d", "5", "p:e",
                           "6", "p:f", "7", "q:g", "8", "p:h", "9", "p:i", NULL };
    location *l = location_of(fake_of(rows), VIEW_URL, 2, 1);

    l->source.partition = "p";
    l->source.partition_set = 1;
    assert_int_equal(jumps_are_the_walks_pages(l, 1), 3);
    l->view.descending = 1;
    assert_int_equal(jumps_are_the_walks_pages(l, 1), 3);
}

static void jumps_on_a_numbered_find(void **state)
{
    location *l = indexed_location(0);

    assert_int_equal(jumps_are_the_walks_pages(l, 1), 3);
    l = indexed_location(1);
    assert_int_equal(jumps_are_the_walks_pages(l, 1), 3);
    l->req.count = 1;
    assert_int_equal(jumps_are_the_walks_pages(l, 2), 7);
}

/* A counted _find location: every page within the reach is the walk's,
 * its tokens with their count, found among the count's rows: the count's
 * _find and the page's own. */
static void jumps_on_a_counted_find(void **state)
{
    location *l = counted_location("{\"n\":{\"$gte\":2}}", 3, 1, 1000);
    const cp_fault *fault;
    int reach;

    for (reach = 0; reach <= 3; reach++) {
        assert_int_equal(jumps_are_the_walks_pages(l, reach), 3);
    }
    l = counted_location("{}", 2, 0, 1000);
    for (reach = 0; reach <= 3; reach++) {
        assert_int_equal(jumps_are_the_walks_pages(l, reach), 5);
    }
    l->req.count = 1;
    assert_int_equal(jumps_are_the_walks_pages(l, 3), 10);
    /* page 4 of 5 (from the end): the count, then the page */
    l->req.count = 2;
    l->source.jump_reach = 2;
    l->args.page = 4;
    l->fake->finds = 0;
    assert_null(serve(l, NULL));
    assert_string_equal(row_names(&l->served.page), "d6 d7");
    assert_int_equal(l->fake->finds, 2);
    assert_string_equal(l->served.page.prev, "{\"b\":[[6],\"d6\"],\"t\":10,\"p\":6}");
    /* Prefer: count=none: not counted, refused */
    l->req.prefer = "count=none";
    l->fake->finds = 0;
    fault = serve(l, NULL);
    assert_fault(fault, CP_FAULT_CLIENT, 400, "bad_request", "CP0102");
    assert_non_null(strstr(fault->reason, "this _find location's rows are not counted"));
    assert_int_equal(l->fake->finds, 0);
}

/* A count that stopped at its cap (at least 3 rows, 10 there): only the
 * pages within the reach of the first are reached, those past the count's
 * rows by one _find that passes over the rows before with skip; a page
 * past the end is refused, and so is one beyond the reach. */
static void jumps_on_a_capped_count(void **state)
{
    const char *pages[] = { "d0 d1", "d2 d3", "d4 d5", "d6 d7", "d8 d9" };
    location *l = counted_location("{}", 2, 0, 3);
    const char *token = NULL, *nexts[5];
    const cp_fault *fault;
    int i;

    for (i = 0; i < 5; i++) {
        const cp_page *page = page_at(l, token);

        assert_string_equal(row_names(page), pages[i]);
        token = nexts[i] = page->next ? apr_pstrdup(pool, page->next) : NULL;
    }
    l->source.jump_reach = 6;
    for (i = 2; i <= 5; i++) {
        l->args.page = i;
        l->fake->finds = 0;
        assert_null(serve(l, NULL));
        assert_string_equal(row_names(&l->served.page), pages[i - 1]);
        /* the walk's last page here came short of the count's cap's
         * end: unnumbered, as the walk's */
        assert_int_equal(l->served.page.numbered, i < 5);
        assert_true(i == 5 || (l->served.page.count_at_least
                               && l->served.page.offset == 2 * (i - 1)));
        if (nexts[i - 1]) {
            assert_string_equal(l->served.page.next, nexts[i - 1]);
        }
        /* page 2's row is among the count's 4 rows; the others' not */
        assert_int_equal(l->fake->finds, i == 2 ? 2 : 3);
    }
    l->args.page = 6;
    fault = serve(l, NULL);
    assert_fault(fault, CP_FAULT_CLIENT, 400, "bad_request", "CP0102");
    assert_string_equal(fault->reason, "page 6 is past the last page, 5");
    l->source.jump_reach = 7;
    l->args.page = 7;
    fault = serve(l, NULL);
    assert_fault(fault, CP_FAULT_CLIENT, 400, "bad_request", "CP0102");
    assert_string_equal(fault->reason, "page 7 is past the last page");
    l->source.jump_reach = 3;
    l->args.page = 4;
    l->fake->finds = 0;
    fault = serve(l, NULL);
    assert_fault(fault, CP_FAULT_CLIENT, 400, "bad_request", "CP0102");
    assert_non_null(strstr(fault->reason, "page 4 is too far from the first page"));
    assert_non_null(strstr(fault->reason, "counted up to 3 only"));
    assert_non_null(strstr(fault->reason, "pages 1 to 3 can be"));
    assert_int_equal(l->fake->finds, 1);
    l->source.jump_reach = 0;
    l->args.page = 2;
    fault = serve(l, NULL);
    assert_non_null(fault);
    assert_non_null(strstr(fault->reason, "only the first page can"));
    l->args.page = 0;
}

/* Where rows are not numbered, a jump is a 400 that says why, before any
 * read of rows. */
static void jumps_where_rows_are_not_numbered(void **state)
{
    const char *rows[] = { "[\"a\",1]", "d1", "[\"b\",1]", "d3", NULL };
    location *l = location_of(fake_of(rows), VIEW_URL, 1, 0);
    const cp_fault *fault;

    l->view.reduce = 1;
    l->view.group_level = 1;
    l->source.jump_reach = 10;
    l->args.page = 2;
    fault = serve(l, NULL);
    assert_fault(fault, CP_FAULT_CLIENT, 400, "bad_request", "CP0102");
    assert_non_null(strstr(fault->reason, "grouped reduce rows have no offsets to skip by"));
    assert_int_equal(l->fake->asks, 0);
    l = find_location(ten_rows(), "n", "{}", 3, 0);
    l->source.jump_reach = 10;
    l->args.page = 1;
    fault = serve(l, NULL);
    assert_fault(fault, CP_FAULT_CLIENT, 400, "bad_request", "CP0102");
    assert_non_null(strstr(fault->reason, "this _find location's rows are not counted"));
    assert_int_equal(l->fake->finds, 0);
}

static void request_faults(void **state)
{
    location *l = location_of(ten_rows(), VIEW_URL, 3, 1);
    const cp_fault *fault;

    assert_fault(serve(l, "not a token"), CP_FAULT_CLIENT, 400, "bad_request", "CP0102");
    /* a token past the location's rows: CouchDB's answer places it */
    assert_string_equal(row_names(page_at(l, "[42,\"d42\"]")), "");
    /* a range whose bounds cannot bound it is the configuration's */
    l->fake->asks = 0;
    l->source.low = "[1";
    l->source.range_set = 1;
    fault = serve(l, NULL);
    assert_fault(fault, CP_FAULT_CONFIG, 500, "internal_error", "CP0104");
    assert_int_equal(l->fake->asks, 0);
    l = find_location(ten_rows(), "n", "{}", 3, 0);
    assert_fault(serve(l, "{\"z\":1}"), CP_FAULT_CLIENT, 400, "bad_request", "CP0102");
}

static void loggable_text_is_escaped_and_cut(void **state)
{
    char long_text[300];

    assert_string_equal(cp_fault_loggable(pool, "a\"b\\c\n\x01\xc3\xa9"),
                        "a\\\"b\\\\c\\n\\x01\\xc3\\xa9");
    memset(long_text, 'x', sizeof(long_text) - 1);
    long_text[sizeof(long_text) - 1] = '\0';
    assert_int_equal(strlen(cp_fault_loggable(pool, long_text)), 203);
}

/* --- revalidation from the database's sequence (couchpage_fresh) -------- */

static const unsigned char fresh_key[CP_FRESH_KEY_LEN] = "0123456789abcdef0123456789abcdef";
static const unsigned char other_key[CP_FRESH_KEY_LEN] = "fedcba9876543210fedcba9876543210";

/* Serves the location's page at start with an If-None-Match (NULL: none):
 * NULL, or the fault. */
static const cp_fault *serve_fresh(location *l, const char *start, const char *inm,
                                   cp_fresh *fresh)
{
    memset(fresh, 0, sizeof(*fresh));
    fresh->key = fresh_key;
    fresh->if_none_match = inm;
    fresh->context = "json /t";
    l->args.start = start;
    return cp_fresh_serve(pool, &l->source, &l->req, &l->transport, fresh, &l->served);
}

/* The sealed tag a full page at start gets with its content tag (the
 * If-None-Match of a client that holds that content unsealed). */
static const char *sealed_tag(location *l, const char *start, const char *content)
{
    cp_fresh fresh;
    const char *tag;

    assert_null(serve_fresh(l, start, content, &fresh));
    assert_false(fresh.not_modified);
    assert_non_null(fresh.seq);
    tag = cp_fresh_etag(pool, &fresh, content);
    assert_non_null(tag);
    assert_true(strlen(tag) > strlen(content));
    return tag;
}

/* A view location without documents: its every page is sealed with the
 * update_seq its own answers carry (asked with the page's queries, no
 * request more), and a sealed tag is checked by one query that reads no
 * rows. */
static void fresh_unchanged_page_reads_no_rows(void **state)
{
    fake *f = ten_rows();
    location *l = location_of(f, VIEW_URL, 3, 0);
    const char *tag, *content = "\"c0ntentDigest\"", *next;
    cp_fresh fresh;
    int asks;

    (void)state;
    f->seq = "\"99-dbseq\"";
    f->view_seq = "\"7-g1AAAA\"";
    /* a plain GET: one ask, as without a seal, its query asking update_seq;
     * no GET of the database; the tag sealed */
    assert_null(serve_fresh(l, NULL, NULL, &fresh));
    assert_int_equal(f->asks, 1);
    assert_int_equal(f->asked_seq, 1);
    assert_int_equal(f->db_gets, 0);
    assert_int_equal(fresh.seq_reads, 0);
    tag = cp_fresh_etag(pool, &fresh, content);
    assert_true(strlen(tag) > strlen(content));
    assert_true(cp_fresh_matches(tag, content));
    assert_true(cp_fresh_matches(content, tag));
    /* revalidated: one query of limit 0, 304 */
    asks = f->asks;
    assert_null(serve_fresh(l, NULL, apr_pstrcat(pool, "\"x\", ", tag, NULL), &fresh));
    assert_true(fresh.not_modified);
    assert_string_equal(fresh.etag, tag);
    assert_int_equal(f->asks, asks + 1);
    assert_int_equal(f->last_limit, 0);
    assert_int_equal(f->db_gets, 0);
    assert_int_equal(fresh.seq_reads, 1);
    /* an unsealed tag reads no sequence first: the page, sealed */
    asks = f->asks;
    assert_string_equal(sealed_tag(l, NULL, content), tag);
    assert_int_equal(f->asks, asks + 1);
    /* the database's sequence is not the view's: it does not matter here */
    f->seq = "\"100-dbseq\"";
    assert_null(serve_fresh(l, NULL, tag, &fresh));
    assert_true(fresh.not_modified);
    /* a row of the view written: the whole page again (probe, page) */
    f->view_seq = "\"8-g1AAAB\"";
    asks = f->asks;
    assert_null(serve_fresh(l, NULL, tag, &fresh));
    assert_false(fresh.not_modified);
    assert_int_equal(f->asks, asks + 2);
    /* its content is the same: the client's tag still names it */
    assert_true(cp_fresh_matches(tag, cp_fresh_etag(pool, &fresh, content)));
    assert_false(cp_fresh_matches(tag, "\"an0therDigest\""));
    /* a sequence of the same number from other copies: no 304 from it */
    f->view_seq = "\"7-g1AAAC\"";
    assert_null(serve_fresh(l, NULL, tag, &fresh));
    assert_false(fresh.not_modified);
    /* numbers (pouchdb-server's) are sequences too */
    f->view_seq = "42";
    tag = sealed_tag(l, NULL, content);
    assert_null(serve_fresh(l, NULL, tag, &fresh));
    assert_true(fresh.not_modified);
    /* a later page's answers (forward, backward) that differ in their
     * sequence (other copies of a shard): no seal */
    next = apr_pstrdup(pool, page_at(l, NULL)->next);
    assert_non_null(sealed_tag(l, next, content));
    f->odd_role = CP_QUERY_BACKWARD + 1;
    f->odd_seq = "\"41-other\"";
    assert_null(serve_fresh(l, next, NULL, &fresh));
    assert_null(fresh.seq);
    assert_string_equal(cp_fresh_etag(pool, &fresh, content), content);
}

/* CouchDB 3.4.3's packed sequences of one state, its two shards listed in
 * either order, and of another state. */
#define SEQ_AB "\"11-g1AAAABheJzLYWBgYMpgTmEQS84vTc5ISTIyMzI0cDA0MtczAELDHJB8HguQZGgAUv-BICuRhZCGRIakerBK9iwAiA8aTw\""
#define SEQ_BA "\"11-g1AAAABheJzLYWBgYMpgTmEQS84vTc5ISTIyMzI0cDA0MtczAELDHJB8IkNS_f___7MS2QmpzGMBkgwNQOo_WANLFgCuVxpP\""
#define SEQ_8 "\"8-g1AAAABheJzLYWBgYMpgTmEQS84vTc5ISTIyMzI0cDA0MtczAELDHJB8HguQZGgAUv-BICuRhZCGRIakeojKLACICRpM\""

static void fresh_packed_sequences_in_one_spelling(void **state)
{
    fake *f = ten_rows();
    location *l = location_of(f, VIEW_URL, 3, 0);
    const char *ab = cp_seq_canonical(pool, apr_pstrndup(pool, SEQ_AB + 1, strlen(SEQ_AB) - 2));
    const char *ba = cp_seq_canonical(pool, apr_pstrndup(pool, SEQ_BA + 1, strlen(SEQ_BA) - 2));
    const char *other = cp_seq_canonical(pool, apr_pstrndup(pool, SEQ_8 + 1, strlen(SEQ_8) - 2));
    const char *tag, *content = "\"c0ntentDigest\"", *next;
    cp_fresh fresh;

    (void)state;
    assert_string_equal(ab, ba);
    assert_true(!strncmp(ab, "11-s", 4));
    assert_string_not_equal(ab, other);
    /* what is no packed list stays as it is */
    assert_string_equal(cp_seq_canonical(pool, "42"), "42");
    assert_string_equal(cp_seq_canonical(pool, "7-g1AAAA"), "7-g1AAAA");
    assert_string_equal(cp_seq_canonical(pool, "x-g1AAAABheJzLYWBgYMpgTmEQ"), "x-g1AAAABheJzLYWBgYMpgTmEQ");
    assert_string_equal(cp_seq_canonical(pool, "11-g1AAAABheJzLYWBgYMpgTmEQS84vTc5ISTIyMzI0"),
                        "11-g1AAAABheJzLYWBgYMpgTmEQS84vTc5ISTIyMzI0");
    /* the page sealed with one order verifies with the other */
    f->view_seq = SEQ_AB;
    tag = sealed_tag(l, NULL, content);
    f->view_seq = SEQ_BA;
    assert_null(serve_fresh(l, NULL, tag, &fresh));
    assert_true(fresh.not_modified);
    /* a batch whose answers differ only by order: sealed */
    next = apr_pstrdup(pool, page_at(l, NULL)->next);
    f->odd_role = CP_QUERY_BACKWARD + 1;
    f->odd_seq = SEQ_AB;
    assert_null(serve_fresh(l, next, NULL, &fresh));
    assert_non_null(fresh.seq);
    /* another state: the page again */
    f->odd_role = 0;
    f->view_seq = SEQ_8;
    assert_null(serve_fresh(l, NULL, tag, &fresh));
    assert_false(fresh.not_modified);
}

/* A page that shows documents: the view's sequence does not move for an
 * edit of a field it does not emit, so the database's is read, before the
 * page and only for a revalidation. */
static void fresh_documents_read_the_database(void **state)
{
    fake *f = ten_rows();
    location *l = location_of(f, VIEW_URL, 3, 0);
    const char *tag, *content = "W/\"c0ntentDigest\"";
    cp_fresh fresh;
    int asks;

    (void)state;
    l->view.include_docs = 1;
    f->seq = "\"7-dbseq\"";
    f->view_seq = "\"3-g1AAAA\"";
    assert_false(cp_fresh_by_view(&l->source));
    /* a plain GET: no sequence read, no seal (its queries ask the view's
     * for the walk's start: couchpage_changed) */
    assert_null(serve_fresh(l, NULL, NULL, &fresh));
    assert_int_equal(f->db_gets, 0);
    assert_string_equal(cp_fresh_etag(pool, &fresh, content), content);
    /* a revalidation: the database's sequence, then the page */
    tag = sealed_tag(l, NULL, content);
    assert_int_equal(f->db_gets, 1);
    asks = f->asks;
    assert_null(serve_fresh(l, NULL, tag, &fresh));
    assert_true(fresh.not_modified);
    assert_int_equal(f->asks, asks);
    assert_int_equal(f->db_gets, 2);
    /* a document edited: the database's sequence moves, the view's not */
    f->seq = "\"8-dbseq\"";
    assert_null(serve_fresh(l, NULL, tag, &fresh));
    assert_false(fresh.not_modified);
    assert_int_equal(f->asks, asks + 1);
    /* _all_docs' sequence is the database's: its documents are sealed by it */
    l = location_of(f, "http://couch:5984/db/_all_docs", 3, 0);
    l->view.include_docs = 1;
    assert_true(cp_fresh_by_view(&l->source));
}

/* The seal binds the content digest, its weakness, the page (start,
 * size, context) and this server's key: a tag changed in any of them is
 * a hint that fails, and the page is served whole. */
/* The key's HMAC made once (cp_fresh_derive_key) seals as the one-shot
 * HMAC does: the same tag by either way, and another key's another. */
static void fresh_keyed_once_seals_as_one_shot(void **state)
{
    unsigned char key[CP_FRESH_KEY_LEN], other[CP_FRESH_KEY_LEN];
    cp_fresh fresh;
    const char *kept, *one_shot, *by_other;

    memset(&fresh, 0, sizeof(fresh));
    fresh.binding = "binding";
    fresh.seq = "view 12-abc";
    assert_true(cp_fresh_derive_key("a configuration", key));
    fresh.key = key;
    kept = cp_fresh_etag(pool, &fresh, "\"digest\"");
    assert_true(cp_fresh_derive_key("another configuration", other));
    one_shot = cp_fresh_etag(pool, &fresh, "\"digest\"");
    fresh.key = other;
    by_other = cp_fresh_etag(pool, &fresh, "\"digest\"");
    assert_non_null(kept);
    assert_string_equal(kept, one_shot);
    assert_int_equal(strncmp(kept, "\"digest.", 8), 0);
    assert_string_not_equal(kept, by_other);
    (void)state;
}

static void fresh_forged_tags_get_the_page(void **state)
{
    fake *f = ten_rows();
    location *l = location_of(f, VIEW_URL, 3, 0);
    const char *content = "\"c0ntentDigest\"", *tag, *seal, *next;
    const char *forged[12];
    cp_fresh fresh;
    int i;

    (void)state;
    f->view_seq = "\"7-g1AAAA\"";
    tag = sealed_tag(l, NULL, content);
    seal = strchr(tag, '.');
    next = apr_pstrdup(pool, page_at(l, NULL)->next);
    forged[0] = apr_pstrcat(pool, "\"an0therDigest", seal, NULL);          /* another digest */
    forged[1] = apr_pstrcat(pool, "W/", tag, NULL);                        /* weak now */
    forged[2] = apr_pstrcat(pool, "\"c0ntentDigest.", "AAAAAAAAAAAAAAAAAAAAAA\"", NULL);
    forged[3] = apr_pstrcat(pool, "\"c0ntentDigest.", seal + 2, NULL);     /* short seal */
    forged[4] = "\"";
    forged[5] = "W/\"..\", ,,, W/, \"\", *x";
    forged[6] = apr_pstrcat(pool, "\"c0ntentDigest", apr_pstrndup(pool, seal, 23), seal + 1,
                            NULL);                                        /* long seal */
    forged[7] = "\xff\xfe\"\x01.\x02\"";
    forged[8] = apr_pstrndup(pool, tag, strlen(tag) - 1);                  /* unclosed */
    for (i = 0; i < 9; i++) {
        assert_null(serve_fresh(l, NULL, forged[i], &fresh));
        assert_false(fresh.not_modified);
    }
    /* the same tag on another page (its start), of another size, in another
     * context, or under another key */
    assert_null(serve_fresh(l, next, tag, &fresh));
    assert_false(fresh.not_modified);
    l->req.count = 4;
    assert_null(serve_fresh(l, NULL, tag, &fresh));
    assert_false(fresh.not_modified);
    l->req.count = 3;
    memset(&fresh, 0, sizeof(fresh));
    fresh.key = fresh_key;
    fresh.if_none_match = tag;
    fresh.context = "html /t";
    assert_null(cp_fresh_serve(pool, &l->source, &l->req, &l->transport, &fresh, &l->served));
    assert_false(fresh.not_modified);
    fresh.key = other_key;
    fresh.context = "json /t";
    assert_null(cp_fresh_serve(pool, &l->source, &l->req, &l->transport, &fresh, &l->served));
    assert_false(fresh.not_modified);
    /* and the tag itself still verifies */
    assert_null(serve_fresh(l, NULL, tag, &fresh));
    assert_true(fresh.not_modified);
    /* what a 304 from the page's content compares: its digest alone */
    assert_true(cp_fresh_matches("*", content));
    assert_true(cp_fresh_matches(" W/\"c0ntentDigest\" ", content));
    assert_false(cp_fresh_matches(forged[5], content));
    assert_false(cp_fresh_matches(forged[7], content));
    assert_false(cp_fresh_matches("\"c0ntentDigestX\"", content));
    assert_false(cp_fresh_matches(NULL, content));
}

/* Where the index lags (update false or lazy, stable), the database's
 * sequence does not tell when the rows change: no sequence is read and no
 * tag gets a seal; a sequence that cannot be read is no fault either. */
static void fresh_not_where_the_index_lags(void **state)
{
    fake *f = ten_rows();
    location *l = location_of(f, VIEW_URL, 3, 0);
    const char *content = "\"c0ntentDigest\"", *tag;
    const char *modes[][2] = { { "false", NULL }, { "lazy", NULL }, { NULL, "true" } };
    cp_fresh fresh;
    int i;

    (void)state;
    f->seq = "\"7-g1AAAA\"";
    f->view_seq = "\"7-g1AAAA\"";
    tag = sealed_tag(l, NULL, content);
    for (i = 0; i < 3; i++) {
        l->view.update = modes[i][0];
        l->view.stable = modes[i][1];
        f->db_gets = 0;
        f->asked_seq = 0;
        assert_false(cp_fresh_applies(&l->source));
        assert_null(serve_fresh(l, NULL, tag, &fresh));
        assert_false(fresh.not_modified);
        assert_int_equal(f->db_gets, 0);
        assert_int_equal(f->asked_seq, 0);
        assert_string_equal(cp_fresh_etag(pool, &fresh, content), content);
    }
    l->view.update = "true";
    l->view.stable = "false";
    assert_true(cp_fresh_applies(&l->source));
    f->view_seq = NULL;
    assert_null(serve_fresh(l, NULL, tag, &fresh));
    assert_false(fresh.not_modified);
    assert_null(fresh.seq);
    assert_string_equal(cp_fresh_etag(pool, &fresh, content), content);
    assert_true(logged(f, "CP0390", CP_LOG_DEBUG));
}

/* A _find location's seal reads the same sequence, bound to its selector. */
static void fresh_find_location(void **state)
{
    fake *f = ten_rows();
    location *l = find_location(f, "n", "{\"n\":{\"$gt\":2}}", 3, 0);
    const char *content = "W/\"c0ntentDigest\"", *tag;
    cp_fresh fresh;
    int finds;

    (void)state;
    f->seq = "\"7-g1AAAA\"";
    tag = sealed_tag(l, NULL, content);
    assert_true(!strncmp(tag, "W/\"", 3));
    finds = f->finds;
    assert_null(serve_fresh(l, NULL, tag, &fresh));
    assert_true(fresh.not_modified);
    assert_int_equal(f->finds, finds);
    l->spec.selector = load("{\"n\":{\"$gt\":3}}");
    assert_null(serve_fresh(l, NULL, tag, &fresh));
    assert_false(fresh.not_modified);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        UNIT_TEST(fresh_unchanged_page_reads_no_rows),
        UNIT_TEST(fresh_documents_read_the_database),
        UNIT_TEST(fresh_packed_sequences_in_one_spelling),
        UNIT_TEST(fresh_keyed_once_seals_as_one_shot),
        UNIT_TEST(fresh_forged_tags_get_the_page),
        UNIT_TEST(fresh_not_where_the_index_lags),
        UNIT_TEST(fresh_find_location),
        UNIT_TEST(view_pages_numbered_walk),
        UNIT_TEST(view_pages_descending),
        UNIT_TEST(view_pages_of_a_range),
        UNIT_TEST(view_pages_of_a_partition),
        UNIT_TEST(view_pages_grouped),
        UNIT_TEST(view_pages_grouped_counted),
        UNIT_TEST(view_pages_grouped_counted_tokens),
        UNIT_TEST(view_pages_grouped_capped),
        UNIT_TEST(view_pages_grouped_counted_long_keys),
        UNIT_TEST(view_pages_of_multi_emits),
        UNIT_TEST(view_pages_of_long_keys_by_bounded_tokens),
        UNIT_TEST(view_first_and_last),
        UNIT_TEST(view_pages_with_sealed_tokens),
        UNIT_TEST(find_keyset_pages),
        UNIT_TEST(find_counted_walk),
        UNIT_TEST(find_counted_by_the_page_alone),
        UNIT_TEST(find_counted_capped),
        UNIT_TEST(find_counted_as_preferred),
        UNIT_TEST(find_counted_tokens_checked),
        UNIT_TEST(find_keyset_pages_of_a_selector),
        UNIT_TEST(find_numbered_pages_by_keyset),
        UNIT_TEST(find_numbered_pages_with_page_links),
        UNIT_TEST(find_unnumbered_where_the_index_cannot_number),
        UNIT_TEST(find_numbered_by_the_index_explain_names),
        UNIT_TEST(find_by_find_where_explain_cannot_tell),
        UNIT_TEST(find_residual_logs_the_index_to_create_once),
        UNIT_TEST(find_residual_asks_the_ties_apart),
        UNIT_TEST(find_residual_ties_apart_on_two_fields),
        UNIT_TEST(find_ties_apart_edited_between_the_reads),
        UNIT_TEST(find_deleted_boundary_rows),
        UNIT_TEST(find_warnings_are_logged_once_a_location),
        UNIT_TEST(overfull_answers_are_refused_on_every_location),
        UNIT_TEST(cut_batch_answers),
        UNIT_TEST(backend_failures),
        UNIT_TEST(find_index_read_past_the_deadline),
        UNIT_TEST(jumps_on_views),
        UNIT_TEST(jumps_on_a_partition),
        UNIT_TEST(jumps_on_a_numbered_find),
        UNIT_TEST(jumps_on_a_counted_find),
        UNIT_TEST(jumps_on_a_capped_count),
        UNIT_TEST(jumps_where_rows_are_not_numbered),
        UNIT_TEST(request_faults),
        UNIT_TEST(loggable_text_is_escaped_and_cut),
    };

    RUN_UNIT_TESTS("serve", tests);
}
