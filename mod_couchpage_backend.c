/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mod_couchpage_backend.c: the transport cp_serve asks CouchDB through
 * (couchpage_serve.h): a page's waiting queries, a _find's POST, a
 * document's GET, each a subrequest that mod_proxy serves (the page's own
 * request, looked up as the page: look_up_as_page), with the filters that
 * capture its answer, the one retry loop, and what each request asked and
 * got for the debug log. Glue: it reads no directory config, writes into
 * no query of the plan's, and never answers the client.
 */
#include "mod_couchpage_backend.h"
#include "couchpage_read.h"
#include "couchpage_response.h"
#include "mod_couchpage_module.h"
#include "mod_couchpage_child.h"

#include "http_log.h"
#include "http_protocol.h"
#include "http_request.h"
#include "mod_proxy.h"
#include "util_filter.h"
#include "apr_hash.h"
#include "apr_lib.h"
#include "apr_strings.h"

APLOG_USE_MODULE(couchpage);

#define CAPTURE_FILTER "COUCHPAGE_CAPTURE"
#define KEPT_BODY_FILTER "COUCHPAGE_KEPT_BODY"
#define BATCH_STATUS_FILTER "COUCHPAGE_BATCH_STATUS"
#define DEADLINE_FILTER "COUCHPAGE_DEADLINE"

static ap_filter_rec_t *capture_filter_handle;
static ap_filter_rec_t *kept_body_filter_handle;
static ap_filter_rec_t *batch_status_filter_handle;
static ap_filter_rec_t *deadline_filter_handle;

/* A backend body as it is captured: one buffer of malloc's grown by
 * realloc (which moves a large one by remapping its pages), with room for
 * the CP_RESPONSE_PADDING bytes the response reader takes after a body. So
 * a body is held once, never as buckets and a flattened copy of them
 * together, and goes back to the system with the request's pool. */
typedef struct {
    char *text;
    apr_size_t len;
    apr_size_t room;
} captured_body;

static apr_status_t free_captured(void *data)
{
    captured_body *body = data;

    free(body->text);
    body->text = NULL;
    body->len = body->room = 0;
    return APR_SUCCESS;
}

static captured_body *captured_body_make(apr_pool_t *pool)
{
    captured_body *body = apr_pcalloc(pool, sizeof(*body));

    apr_pool_cleanup_register(pool, body, free_captured, apr_pool_cleanup_null);
    return body;
}

/* Appends data[0..len): 0 when memory runs out. */
static int captured_append(captured_body *body, const char *data, apr_size_t len)
{
    apr_size_t need = body->len + len + CP_RESPONSE_PADDING, room;
    char *grown;

    if (need > body->room) {
        for (room = body->room ? body->room : 16384; room < need; room *= 2) {
        }
        grown = realloc(body->text, room);
        if (!grown) {
            return 0;
        }
        body->text = grown;
        body->room = room;
    }
    if (len) {
        memcpy(body->text + body->len, data, len);
        body->len += len;
    }
    return 1;
}

typedef struct couchpage_capture {
    captured_body *body;
    apr_off_t bytes;
    apr_off_t max_bytes;
    int too_large;
    int broken;     /* an error bucket or a failed read: the body is cut off */
    int unanswered; /* broken before any status line came */
    int batch;      /* the read is a multi-query POST */
    apr_time_t deadline; /* the page's reads end by then (keep_deadline) */
    int past_deadline;   /* the read was stopped at the deadline */
} capture_ctx;

/* The body is cut off. A member that failed before it answered at all (no
 * status line came: mod_proxy_http then passes only an error bucket, when
 * the client's connection has had requests before) makes the subrequest a
 * bad gateway, as mod_proxy_http's own answer to that failure is on a
 * client's first request, so that failonstatus=502 puts the member in error
 * state and the repeat goes to another. An answer cut off after it began is
 * not charged to its member: see cp_read_failed_in_flight. */
static void body_broken(ap_filter_t *f, capture_ctx *ctx)
{
    if (!ctx->broken && !f->r->status_line) {
        f->r->status = HTTP_BAD_GATEWAY;
        ctx->unanswered = 1;
    }
    ctx->broken = 1;
}

/* Copies every data bucket into the captured body: the subrequest's output
 * must never reach the client, and mod_proxy's buckets are transient. */
static apr_status_t capture_body(ap_filter_t *f, apr_bucket_brigade *bb)
{
    capture_ctx *ctx = f->ctx;
    apr_bucket *b;
    apr_status_t rv = APR_SUCCESS;

    for (b = APR_BRIGADE_FIRST(bb); b != APR_BRIGADE_SENTINEL(bb);
         b = APR_BUCKET_NEXT(b)) {
        const char *data;
        apr_size_t len;

        if (AP_BUCKET_IS_ERROR(b)) {
            body_broken(f, ctx);
        }
        if (APR_BUCKET_IS_METADATA(b) || ctx->too_large || ctx->broken) {
            continue;
        }
        rv = apr_bucket_read(b, &data, &len, APR_BLOCK_READ);
        if (rv != APR_SUCCESS) {
            body_broken(f, ctx);
            break;
        }
        if (ctx->bytes + (apr_off_t)len > ctx->max_bytes) {
            /* An error makes mod_proxy stop reading and drop the connection. */
            ctx->too_large = 1;
            rv = APR_ENOSPC;
            break;
        }
        if (!captured_append(ctx->body, data, len)) {
            body_broken(f, ctx);
            rv = APR_ENOMEM;
            break;
        }
        ctx->bytes += len;
    }
    apr_brigade_cleanup(bb);
    return rv;
}

/* The subrequest's body is its kept body (none for a GET), and it must
 * never read the client's: hands out the kept body, then EOS. */
static apr_status_t read_kept_body(ap_filter_t *f, apr_bucket_brigade *bb,
                                   ap_input_mode_t mode, apr_read_type_e block,
                                   apr_off_t readbytes)
{
    apr_bucket_brigade *kept = f->r->kept_body;
    apr_bucket *after;
    apr_status_t rv;

    if (!kept || APR_BRIGADE_EMPTY(kept)
        || (mode != AP_MODE_READBYTES && mode != AP_MODE_SPECULATIVE)) {
        APR_BRIGADE_INSERT_TAIL(bb, apr_bucket_eos_create(f->c->bucket_alloc));
        return APR_SUCCESS;
    }
    rv = apr_brigade_partition(kept, readbytes, &after);
    if (rv != APR_SUCCESS && rv != APR_INCOMPLETE) {
        return rv;
    }
    if (mode == AP_MODE_SPECULATIVE) {
        /* a speculative read keeps what it saw */
        apr_bucket *b, *copy;

        for (b = APR_BRIGADE_FIRST(kept); b != after; b = APR_BUCKET_NEXT(b)) {
            if ((rv = apr_bucket_copy(b, &copy)) != APR_SUCCESS) {
                return rv;
            }
            APR_BRIGADE_INSERT_TAIL(bb, copy);
        }
        return APR_SUCCESS;
    }
    while (APR_BRIGADE_FIRST(kept) != after) {
        apr_bucket *b = APR_BRIGADE_FIRST(kept);

        APR_BUCKET_REMOVE(b);
        APR_BRIGADE_INSERT_TAIL(bb, b);
    }
    if (APR_BRIGADE_EMPTY(kept)) {
        APR_BRIGADE_INSERT_TAIL(bb, apr_bucket_eos_create(f->c->bucket_alloc));
    }
    return APR_SUCCESS;
}

/* Reads the status line of a multi-query POST's answer on the backend
 * connection. CouchDB 3.4 answers a failure of the first query (a refusal,
 * a cluster's 500 nodedown) with a complete error response, and then goes
 * on to write the other queries' results after it on the same connection:
 * mod_proxy would hand them to the next request on that pooled connection
 * as its answer. So after any answer but a 2xx the connection is marked to
 * close (keepalive AP_CONN_CLOSE), which mod_proxy honours when it releases
 * it. The filter leaves once the final status line has passed. */
static apr_status_t watch_batch_status(ap_filter_t *f, apr_bucket_brigade *bb,
                                       ap_input_mode_t mode, apr_read_type_e block,
                                       apr_off_t readbytes)
{
    apr_status_t rv = ap_get_brigade(f->next, bb, mode, block, readbytes);
    char line[12];
    apr_size_t len = sizeof(line);

    if (rv != APR_SUCCESS || mode != AP_MODE_GETLINE
        || apr_brigade_flatten(bb, line, &len) != APR_SUCCESS
        || len < sizeof(line) || strncmp(line, "HTTP/1.", 7) != 0
        || !apr_isdigit(line[9]) || line[9] == '1') {
        /* not a final status line (a stray blank line, a 1xx) */
        return rv;
    }
    if (line[9] != '2') {
        f->c->keepalive = AP_CONN_CLOSE;
    }
    ap_remove_input_filter(f);
    return rv;
}

/* Every read of the backend's answer, its status line and headers as its
 * body, ends by the page's deadline (CouchPageBackendDeadline): a blocking
 * read waits at most until then (the connection's socket timeout lowered
 * for it, mod_proxy's restored after), and none starts after it. A backend
 * that sends a byte now and then, each within mod_proxy's timeout, or
 * nothing at all, holds the page no longer; the read fails with
 * APR_TIMEUP, and mod_proxy drops the connection. */
static apr_status_t keep_deadline(ap_filter_t *f, apr_bucket_brigade *bb,
                                  ap_input_mode_t mode, apr_read_type_e block,
                                  apr_off_t readbytes)
{
    capture_ctx *ctx = f->ctx;
    apr_interval_time_t left = ctx->deadline - apr_time_now(), timeout;
    apr_socket_t *sock;
    apr_status_t rv;

    if (left <= 0) {
        ctx->past_deadline = 1;
        return APR_TIMEUP;
    }
    sock = block == APR_BLOCK_READ ? ap_get_conn_socket(f->c) : NULL;
    if (!sock || apr_socket_timeout_get(sock, &timeout) != APR_SUCCESS
        || (timeout >= 0 && timeout <= left)) {
        return ap_get_brigade(f->next, bb, mode, block, readbytes);
    }
    apr_socket_timeout_set(sock, left);
    rv = ap_get_brigade(f->next, bb, mode, block, readbytes);
    apr_socket_timeout_set(sock, timeout);
    /* the timeout that ran out is the deadline's (the poll's milliseconds
     * may end it a moment before the deadline's microsecond) */
    if (rv != APR_SUCCESS && (APR_STATUS_IS_TIMEUP(rv) || apr_time_now() >= ctx->deadline)) {
        ctx->past_deadline = 1;
    }
    return rv;
}

/* mod_proxy_http's hook for the request it makes of the backend (pr) on
 * behalf of r: a read of ours keeps the page's deadline, and a multi-query
 * POST gets its status watched. */
static int watch_backend_request(request_rec *r, request_rec *pr)
{
    const couchpage_request_config *slot = couchpage_request_config_of(r, 0);
    capture_ctx *ctx = slot ? slot->capture : NULL;

    if (!ctx) {
        return OK;
    }
    ap_add_input_filter_handle(deadline_filter_handle, ctx, pr, pr->connection);
    if (ctx->batch) {
        ap_add_input_filter_handle(batch_status_filter_handle, NULL, pr, pr->connection);
    }
    return OK;
}

/* Remembers that backend has no multi-query endpoint, and notes it the
 * first time in this process. */
static void remember_lacks_batch(request_rec *r, const char *backend, int status,
                                 const char *reason)
{
    if (couchpage_child_learn_lacks_batch(backend)) {
        ap_log_rerror(APLOG_MARK, APLOG_NOTICE, 0, r, CPLOGNO(0107)
                      "%s has no multi-query endpoint (POST .../queries answered %d: %s); "
                      "this process asks it one GET per query from now on",
                      backend, status, reason);
    }
}

/* The lookup of a page's backend subrequest. It is the page's own request
 * sent on to CouchDB, under the page's configuration, and maps to no file;
 * so it takes the page's configuration and user here, as a quick handler
 * answers a lookup it serves, and httpd does not process the request again:
 * its translation, the directory walk (which stats the path and each of
 * its directories again: 10 calls a page under the benchmark's
 * DocumentRoot), the location walk, and the access checks, which httpd
 * skips anyway for a configuration that is the page's. */
static int look_up_as_page(request_rec *rr, int lookup)
{
    request_rec *page = rr->main;
    const couchpage_request_config *slot;

    if (!lookup || !page || !(slot = couchpage_request_config_of(page, 0))
        || !slot->looking_up_backend) {
        return DECLINED;
    }
    rr->per_dir_config = page->per_dir_config;
    rr->user = page->user;
    rr->ap_auth_type = page->ap_auth_type;
    return OK;
}

void couchpage_backend_register(void)
{
    ap_hook_quick_handler(look_up_as_page, NULL, NULL, APR_HOOK_REALLY_FIRST);
    capture_filter_handle = ap_register_output_filter(CAPTURE_FILTER, capture_body,
                                                      NULL, AP_FTYPE_RESOURCE);
    batch_status_filter_handle = ap_register_input_filter(BATCH_STATUS_FILTER,
                                                          watch_batch_status, NULL,
                                                          AP_FTYPE_PROTOCOL);
    deadline_filter_handle = ap_register_input_filter(DEADLINE_FILTER, keep_deadline, NULL,
                                                      AP_FTYPE_PROTOCOL);
    APR_OPTIONAL_HOOK(proxy, create_req, watch_backend_request, NULL, NULL, APR_HOOK_MIDDLE);
    kept_body_filter_handle = ap_register_input_filter(KEPT_BODY_FILTER, read_kept_body,
                                                       NULL, AP_FTYPE_RESOURCE);
}

/* One read: a GET of one query, or the multi-query POST of several. */
typedef struct {
    const char *url;
    const char *asked;      /* for the debug log: couchpage_backend_request.asked */
    const char *body;       /* the POST's {"queries": [...]} (or a _find's query);
                               NULL for a GET */
    int repeats;            /* how often it is repeated when it failed in flight:
                               1, or 0 for the queries asked alone
                               (asked alone) */
    int queries;            /* how many queries it asks (the POST's, 1 for a GET) */
} backend_read;

static request_rec *make_proxy_subrequest(request_rec *r, const couchpage_backend_conf *conf,
                                          const backend_read *read, capture_ctx *ctx)
{
    couchpage_request_config *slot = couchpage_request_config_of(r, 1);
    request_rec *rr;

    /* A filter to start from, so that httpd asks the quick handlers whether
     * they serve the lookup: look_up_as_page does. */
    slot->looking_up_backend = 1;
    rr = ap_sub_req_method_uri("GET", r->uri, r, r->output_filters);
    slot->looking_up_backend = 0;

    if (rr->status != HTTP_OK) {
        return rr;
    }
    /* As mod_rewrite's [P] flag does: mod_proxy's handler takes it from here. */
    rr->filename = apr_pstrcat(rr->pool, "proxy:", read->url, NULL);
    rr->proxyreq = PROXYREQ_REVERSE;
    rr->handler = "proxy-server";
    /* No file, but not "none": ap_run_sub_req asks the quick handlers to
     * serve a subrequest of no file, and mod_cache's, where the page's URL
     * is cached, would take this request for the page (its key is the
     * page's URL): add its save filter to CouchDB's answer, or answer with
     * the page kept. A cache belongs in front of the page, not behind it. */
    rr->finfo.filetype = APR_UNKFILE;
    rr->header_only = 0;
    rr->args = NULL;
    apr_table_setn(rr->notes, "proxy-nocanon", "1");

    /* CouchDB gets our headers, none of the client's. */
    rr->headers_in = apr_table_make(rr->pool, 5);
    apr_table_setn(rr->headers_in, "Accept", "application/json");
    if (conf->authorization) {
        apr_table_setn(rr->headers_in, "Authorization", conf->authorization);
    }

    /* mod_proxy_http closes the backend connection after a subrequest unless
     * it has a kept body, which it then sends as the request body (read
     * through the input filters): empty for a GET, the queries for a POST. */
    rr->kept_body = apr_brigade_create(rr->pool, r->connection->bucket_alloc);
    if (read->body) {
        apr_size_t len = strlen(read->body);

        rr->method = "POST";
        rr->method_number = M_POST;
        apr_table_setn(rr->headers_in, "Content-Type", "application/json");
        apr_table_setn(rr->headers_in, "Content-Length",
                       apr_off_t_toa(rr->pool, (apr_off_t)len));
        APR_BRIGADE_INSERT_TAIL(rr->kept_body,
                                apr_bucket_immortal_create(read->body, len,
                                                           r->connection->bucket_alloc));
    }

    rr->input_filters = rr->proto_input_filters = NULL;
    ap_add_input_filter_handle(kept_body_filter_handle, NULL, rr, r->connection);
    rr->output_filters = rr->proto_output_filters = NULL;
    ap_add_output_filter_handle(capture_filter_handle, ctx, rr, r->connection);
    ctx->batch = read->body != NULL;
    couchpage_request_config_of(rr, 1)->capture = ctx;
    couchpage_child_quiet_proxy(r, rr);
    return rr;
}

/* What one subrequest brought back. */
typedef struct {
    int rv;              /* ap_run_sub_req's answer */
    int backend_status;  /* the status the backend answered, as the subrequest saw it */
    int timed_out;
    capture_ctx capture;
    char *text;          /* the body, padded (padded_body), once it is read */
    apr_size_t len;
    couchpage_backend_request *log; /* its entry in the debug log, or NULL */
} attempt;

/* The debug log's entry for an attempt. */
static couchpage_backend_request *log_request(request_rec *r, const backend_read *read,
                                       const attempt *a, apr_interval_time_t time)
{
    couchpage_backend_request *entry = apr_pcalloc(r->pool, sizeof(*entry));

    entry->method = read->body ? "POST" : "GET";
    entry->asked = read->asked;
    entry->queries = read->queries;
    entry->body_len = read->body ? strlen(read->body) : 0;
    entry->rv = a->rv;
    entry->status = a->backend_status;
    entry->bytes = a->capture.bytes;
    entry->cut_off = a->capture.broken;
    entry->time = time;
    return entry;
}

/* Notes in the debug log the results read from an attempt's answer. */
static void log_answers(request_rec *r, const attempt *a, const cp_answer **answers, int n)
{
    if (a->log) {
        a->log->answers = apr_pmemdup(r->pool, answers, sizeof(*answers) * (n ? n : 1));
        a->log->answered = n;
    }
}

/* The captured body, followed by the zero padding the response reader may
 * load past its end (CP_RESPONSE_PADDING). */
static apr_status_t padded_body(captured_body *body, char **text, apr_size_t *len)
{
    if (!captured_append(body, NULL, 0)) {
        return APR_ENOMEM;
    }
    memset(body->text + body->len, 0, CP_RESPONSE_PADDING);
    *text = body->text;
    *len = body->len;
    return APR_SUCCESS;
}

/* Runs one subrequest, counted in stats with its wall time: 1, or 0 when
 * it could not be set up (then nothing was sent). */
static int run_attempt(request_rec *r, const couchpage_backend_conf *conf, const backend_read *read,
                       couchpage_backend_stats *stats, attempt *out)
{
    request_rec *rr;
    apr_time_t started;

    memset(out, 0, sizeof(*out));
    /* what the request's earlier answers left of CouchPageMaxResponse */
    out->capture.max_bytes = conf->max_response - stats->bytes;
    out->capture.deadline = stats->began + conf->deadline;
    out->capture.body = captured_body_make(r->pool);
    rr = make_proxy_subrequest(r, conf, read, &out->capture);
    if (rr->status != HTTP_OK) {
        out->rv = rr->status;
        ap_destroy_sub_req(rr);
        return 0;
    }
    started = apr_time_now();
    out->rv = ap_run_sub_req(rr);
    stats->time += apr_time_now() - started;
    stats->requests++;
    out->backend_status = rr->status;
    out->timed_out = apr_table_get(rr->notes, "proxy_timedout") != NULL;
    ap_destroy_sub_req(rr);
    if (stats->log) {
        out->log = log_request(r, read, out, apr_time_now() - started);
        APR_ARRAY_PUSH(stats->log, couchpage_backend_request *) = out->log;
    }
    if (padded_body(out->capture.body, &out->text, &out->len) != APR_SUCCESS) {
        out->text = NULL;
    }
    return 1;
}

/* What an attempt came to, as the core reads it (couchpage_read.h). */
static cp_read_outcome outcome_of(const backend_read *read, const attempt *a)
{
    cp_read_outcome o = { a->rv, a->backend_status, a->timed_out, a->capture.unanswered,
                          a->capture.broken, a->capture.too_large, a->capture.past_deadline,
                          read->body && read->queries > 1, a->text, a->len };

    return o;
}

static int fail(cp_transport_failure *result, int status, int backend_status,
                const char *reason)
{
    result->status = status;
    result->backend_status = backend_status;
    result->reason = reason;
    result->past_deadline = 0;
    return status;
}

/* The page's reads passed their deadline: 504. */
static int fail_past_deadline(request_rec *r, const couchpage_backend_conf *conf,
                              const couchpage_backend_stats *stats,
                              cp_transport_failure *result)
{
    fail(result, HTTP_GATEWAY_TIME_OUT, 0,
         apr_psprintf(r->pool, "the page's deadline of %" APR_TIME_T_FMT " s passed, %d "
                      "backend request%s sent", apr_time_sec(conf->deadline), stats->requests,
                      stats->requests == 1 ? "" : "s"));
    result->past_deadline = 1;
    return result->status;
}

/* The one retry loop, for a GET and for the multi-query POST alike: sends
 * the read, and again while the core says so (cp_read_next); then the last
 * attempt stands. Returns OK with the attempt's body in a->text, a->len
 * (any HTTP status: see a->backend_status; a multi-query answer cut off
 * after its 200 as far as it came: cp_read_is_cut_batch), or a failure
 * status with result set (cp_read_failure). */
static int read_backend(request_rec *r, const couchpage_backend_conf *conf, const backend_read *read,
                        attempt *a, couchpage_backend_stats *stats, cp_transport_failure *result)
{
    int resends = 0, repeats = read->repeats, tries = 0, status;
    cp_read_outcome outcome;
    const char *line, *reason;

    if (!stats->began) {
        stats->began = apr_time_now();
    }
    for (;;) {
        if (apr_time_now() >= stats->began + conf->deadline) {
            /* nothing is sent once the page's deadline has passed */
            memset(a, 0, sizeof(*a));
            return fail_past_deadline(r, conf, stats, result);
        }
        tries++;
        if (!run_attempt(r, conf, read, stats, a)) {
            return fail(result, HTTP_INTERNAL_SERVER_ERROR, 0,
                        apr_psprintf(r->pool, "the backend subrequest could not be "
                                     "set up (status %d)", a->rv));
        }
        outcome = outcome_of(read, a);
        if (!cp_read_next(r->pool, &outcome, &resends, &repeats, &line)) {
            break;
        }
        ap_log_rerror(APLOG_MARK, APLOG_INFO, 0, r, "%s", line);
        free_captured(a->capture.body);
    }

    if (a->capture.past_deadline) {
        free_captured(a->capture.body);
        return fail_past_deadline(r, conf, stats, result);
    }
    status = cp_read_failure(r->pool, &outcome, tries, conf->max_response, stats->bytes,
                             &reason);
    if (status) {
        free_captured(a->capture.body);
        return fail(result, status, 0, reason);
    }
    stats->bytes += a->capture.bytes;
    return OK;
}

/* A read's non-2xx answer as a failure carrying CouchDB's status and words. */
static int backend_refused(request_rec *r, const attempt *a, cp_transport_failure *result)
{
    return fail(result, HTTP_BAD_GATEWAY, a->backend_status,
                cp_couchdb_reason(r->pool, a->backend_status, a->text, a->len));
}

/* A read that CouchDB answered with 2xx: OK, or the failure (a non-2xx
 * answer's with CouchDB's status and words). */
static int read_success(request_rec *r, const couchpage_backend_conf *conf,
                        const backend_read *read, attempt *a,
                        couchpage_backend_stats *stats, cp_transport_failure *result)
{
    int status = read_backend(r, conf, read, a, stats, result);

    if (status == OK && (a->backend_status < 200 || a->backend_status > 299)) {
        return backend_refused(r, a, result);
    }
    return status;
}

/* Asks one query with a GET (repeats: backend_read.repeats); its answer
 * goes to answers, by the query's role: 1, or 0 with result set. */
static int get_query(const couchpage_transport_baton *t, const char *index_url, int with_docid,
                     const cp_query *query, int repeats, cp_plan_answers *answers,
                     cp_transport_failure *result)
{
    request_rec *r = t->r;
    couchpage_backend_stats *stats = t->stats;
    backend_read read = { 0 };
    attempt a;
    const cp_answer *answer;
    const char *reason;

    read.url = cp_plan_query_url(r->pool, index_url, query);
    read.asked = stats->log ? cp_plan_query_loggable(r->pool, index_url, query,
                                                     t->conf->hide_keys) : NULL;
    read.repeats = repeats;
    read.queries = 1;
    if (read_success(r, t->conf, &read, &a, stats, result) != OK) {
        return 0;
    }
    if ((reason = cp_response_read_view(r->pool, a.text, a.len, with_docid, &answer))) {
        fail(result, HTTP_BAD_GATEWAY, 0, reason);
        return 0;
    }
    stats->rows += cp_answer_rows(answer);
    log_answers(r, &a, &answer, 1);
    answers->of[query->role] = answer;
    stats->served_by |= CP_SERVED_BY_GET;
    return 1;
}

/* Asks the queries asked[from..] with a GET each, in order. */
static int get_each(const couchpage_transport_baton *t, const char *index_url, int with_docid,
                    const apr_array_header_t *asked, int from, int repeats,
                    cp_plan_answers *answers, cp_transport_failure *result)
{
    int i;

    for (i = from; i < asked->nelts; i++) {
        if (!get_query(t, index_url, with_docid, APR_ARRAY_IDX(asked, i, const cp_query *),
                       repeats, answers, result)) {
            return 0;
        }
    }
    return 1;
}

/* The transport's ask (couchpage_serve.h): 1, or 0 with result set. */
static int transport_ask(void *baton, const char *backend, const char *index_url,
                         int with_docid, const apr_array_header_t *asked, int alone,
                         cp_plan_answers *answers, cp_transport_failure *result)
{
    const couchpage_transport_baton *t = baton;
    request_rec *r = t->r;
    couchpage_backend_stats *stats = t->stats;
    int n = asked->nelts, k, i;
    backend_read read = { 0 };
    attempt a;
    const cp_answer **results;
    const char *error = NULL;

    if (alone || n < 2 || couchpage_child_lacks_batch(backend)) {
        /* asked alone, asking them is the repeat of the read that left
         * them waiting */
        return get_each(t, index_url, with_docid, asked, 0, !alone, answers, result);
    }
    read.url = apr_pstrcat(r->pool, index_url, "/queries", NULL);
    read.asked = cp_plan_url_path(read.url);
    read.body = cp_plan_batch_body(r->pool, asked);
    read.repeats = 1;
    read.queries = n;
    if (read_backend(r, t->conf, &read, &a, stats, result) != OK) {
        return 0;
    }
    if (a.backend_status < 200 || a.backend_status > 299) {
        cp_transport_failure refused;

        backend_refused(r, &a, &refused);
        if (!cp_read_may_lack_batch(a.backend_status)) {
            *result = refused;
            return 0;
        }
        /* the server refused the request, or has no such endpoint: the
         * first query alone tells */
        if (!get_query(t, index_url, with_docid, APR_ARRAY_IDX(asked, 0, const cp_query *), 1,
                       answers, result)) {
            return 0;
        }
        remember_lacks_batch(r, backend, a.backend_status, refused.reason);
        return get_each(t, index_url, with_docid, asked, 1, 1, answers, result);
    }
    /* a body cut off brings the results complete before the cut */
    results = apr_pcalloc(r->pool, sizeof(*results) * n);
    k = cp_response_read_batch(r->pool, a.text, a.len, a.capture.broken, n, with_docid,
                               results, &error);
    if (k < 0) {
        fail(result, HTTP_BAD_GATEWAY, 0, error);
        return 0;
    }
    for (i = 0; i < k; i++) {
        stats->rows += cp_answer_rows(results[i]);
        answers->of[APR_ARRAY_IDX(asked, i, const cp_query *)->role] = results[i];
    }
    answers->cut_off = a.capture.broken;
    if (k > 0) {
        stats->served_by |= CP_SERVED_BY_BATCH;
    }
    log_answers(r, &a, results, k);
    return 1;
}

/* One read of url that is no view query, a _find's POST (body) or a
 * document's GET, repeated once when it failed in flight: 1, or 0. */
static int read_one(const couchpage_transport_baton *t, const char *url, const char *body,
                    attempt *a, cp_transport_failure *result)
{
    backend_read read = { 0 };

    read.url = url;
    read.asked = cp_plan_url_path(url);
    read.body = body;
    read.repeats = 1;
    read.queries = body ? 1 : 0;
    return read_success(t->r, t->conf, &read, a, t->stats, result) == OK;
}

/* The transport's find, get and post (couchpage_serve.h). */
static int transport_find(void *baton, const char *url, const char *body,
                          const cp_find_sort *sort, const cp_answer **answer,
                          cp_transport_failure *failure)
{
    couchpage_transport_baton *t = baton;
    const char *reason;
    attempt a;

    if (!read_one(t, url, body, &a, failure)) {
        return 0;
    }
    if ((reason = cp_find_read(t->r->pool, a.text, a.len, sort, answer))) {
        fail(failure, HTTP_BAD_GATEWAY, 0, reason);
        return 0;
    }
    t->stats->rows += cp_answer_rows(*answer);
    log_answers(t->r, &a, answer, 1);
    t->stats->served_by |= CP_SERVED_BY_FIND;
    return 1;
}

static int transport_post(void *baton, const char *url, const char *body, const char **text,
                          apr_size_t *len, cp_transport_failure *failure)
{
    couchpage_transport_baton *t = baton;
    attempt a;

    if (!read_one(t, url, body, &a, failure)) {
        return 0;
    }
    *text = a.text;
    *len = a.len;
    return 1;
}

/* A GET is the same read without a body. */
static int transport_get(void *baton, const char *url, const char **text, apr_size_t *len,
                         cp_transport_failure *failure)
{
    return transport_post(baton, url, NULL, text, len, failure);
}

void couchpage_backend_transport(cp_transport *transport, couchpage_transport_baton *baton)
{
    transport->baton = baton;
    transport->ask = transport_ask;
    transport->find = transport_find;
    transport->get = transport_get;
    transport->post = transport_post;
}
