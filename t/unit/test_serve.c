/* SPDX-License-Identifier: Apache-2.0 */
/* cp_serve end to end: every page kind served through a fake transport that
 * answers as CouchDB would from rows and documents held in the test (a view
 * read by its parameters, a _find body by its selector, sort and limit, a
 * design document), and every fault typed as the glue answers it. Pages are
 * walked by the tokens they hand out, so what is checked is what a client
 * sees: every row once, in order, at its number. */
#include "unit.h"

#include <apr_hash.h>

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
    const char *seq;            /* the database's update_seq, its JSON; NULL: a GET of the
                                   database fails (503) */
    const char *view_seq;       /* the view's update_seq, its JSON, in every answer to a
                                   query that asks update_seq=true; NULL: none */
    int odd_role;               /* 1 + the role whose answer gets odd_seq instead */
    const char *odd_seq;
    int asks, asked_alone, finds, gets, posts, db_gets;
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
    return 0;
}

static int fake_find(void *baton, const char *url, const char *body, const cp_find_sort *sort,
                     const cp_answer **answer, cp_transport_failure *failure)
{
    fake *f = baton;
    const json_t *query = load(body);
    const json_t *selector = json_object_get(query, "selector");
    int limit = (int)json_integer_value(json_object_get(query, "limit"));
    apr_array_header_t *hits = apr_array_make(pool, 8, sizeof(json_t *));
    json_t *docs = json_array(), *out = json_object();
    const char *text, *reason;
    int i;

    f->finds++;
    if (f->fail.status) {
        *failure = f->fail;
        return 0;
    }
    for (i = 0; i < f->docs->nelts; i++) {
        if (matches(selector, APR_ARRAY_IDX(f->docs, i, json_t *))) {
            APR_ARRAY_PUSH(hits, json_t *) = APR_ARRAY_IDX(f->docs, i, json_t *);
        }
    }
    sort_spec = json_object_get(query, "sort");
    qsort(hits->elts, (size_t)hits->nelts, sizeof(json_t *), by_sort);
    for (i = 0; i < hits->nelts && i < limit + f->overfull; i++) {
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

static int fake_get(void *baton, const char *url, const char **text, apr_size_t *len,
                    cp_transport_failure *failure)
{
    fake *f = baton;

    f->gets++;
    if (!strcmp(url, "http://couch:5984/db")) {
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

    assert_string_equal(cp_serve_loggable(pool, "a\"b\\c\n\x01\xc3\xa9"),
                        "a\\\"b\\\\c\\n\\x01\\xc3\\xa9");
    memset(long_text, 'x', sizeof(long_text) - 1);
    long_text[sizeof(long_text) - 1] = '\0';
    assert_int_equal(strlen(cp_serve_loggable(pool, long_text)), 203);
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
    /* a plain GET: no sequence read or asked, no seal */
    assert_null(serve_fresh(l, NULL, NULL, &fresh));
    assert_int_equal(f->db_gets, 0);
    assert_int_equal(f->asked_seq, 0);
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
        UNIT_TEST(fresh_forged_tags_get_the_page),
        UNIT_TEST(fresh_not_where_the_index_lags),
        UNIT_TEST(fresh_find_location),
        UNIT_TEST(view_pages_numbered_walk),
        UNIT_TEST(view_pages_descending),
        UNIT_TEST(view_pages_of_a_range),
        UNIT_TEST(view_pages_of_a_partition),
        UNIT_TEST(view_pages_grouped),
        UNIT_TEST(view_pages_of_multi_emits),
        UNIT_TEST(view_pages_of_long_keys_by_bounded_tokens),
        UNIT_TEST(view_first_and_last),
        UNIT_TEST(view_pages_with_sealed_tokens),
        UNIT_TEST(find_keyset_pages),
        UNIT_TEST(find_keyset_pages_of_a_selector),
        UNIT_TEST(find_numbered_pages_by_keyset),
        UNIT_TEST(find_numbered_pages_with_page_links),
        UNIT_TEST(find_unnumbered_where_the_index_cannot_number),
        UNIT_TEST(find_numbered_by_the_index_explain_names),
        UNIT_TEST(find_by_find_where_explain_cannot_tell),
        UNIT_TEST(find_residual_logs_the_index_to_create_once),
        UNIT_TEST(find_deleted_boundary_rows),
        UNIT_TEST(find_warnings_are_logged_once_a_location),
        UNIT_TEST(overfull_answers_are_refused_on_every_location),
        UNIT_TEST(cut_batch_answers),
        UNIT_TEST(backend_failures),
        UNIT_TEST(find_index_read_past_the_deadline),
        UNIT_TEST(request_faults),
        UNIT_TEST(loggable_text_is_escaped_and_cut),
    };

    RUN_UNIT_TESTS("serve", tests);
}
