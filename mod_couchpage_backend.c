/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mod_couchpage_backend.c: a page's waiting queries (the plan says which)
 * asked as subrequests that mod_proxy serves (each the page's own request,
 * looked up as the page: look_up_as_page), their answers returned by role
 * (of a multi-query answer cut off after its 200, the results complete
 * before the cut: the plan says what is asked again), with the filters that
 * capture them, mod_proxy's lines for them kept to crit (by
 * couchpage_child_quiet_proxy, beside the child's set-up), the one retry
 * loop, what each request asked and got for the debug log, and the memory
 * of backends without the multi-query endpoint (see
 * mod_couchpage_backend.h). Glue: it reads no directory config
 * (the handler passes couchpage_backend_conf), writes into no query of the
 * plan's, and never answers the client.
 */
#include "mod_couchpage_backend.h"
#include "couchpage_json.h"
#include "couchpage_response.h"
#include "mod_couchpage_module.h"
#include "mod_couchpage_child.h"
#include "mod_couchpage_named.h"

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

/* The backends of this process that have no multi-query endpoint: their
 * queries go as one GET each. Per process (each child learns for itself,
 * from one answer), guarded for the threads of an MPM. */
static couchpage_child_set *no_batch;

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
 * not charged to its member: see failed_in_flight. */
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

static void no_batch_init(apr_pool_t *pchild, server_rec *s)
{
    no_batch = couchpage_child_set_make(pchild, s, "backends without a multi-query endpoint");
}

/* What this child learnt of the indexes _find locations name (cp_serve's
 * notes), and the _find locations whose CouchDB warning it has logged. */
static couchpage_child_set *index_notes, *find_warned;

static void find_memory_init(apr_pool_t *pchild, server_rec *s)
{
    index_notes = couchpage_child_set_make(pchild, s, "the indexes of _find locations");
    find_warned = couchpage_child_set_make(pchild, s, "_find locations warned of");
}

static int lacks_batch(const char *backend)
{
    return couchpage_child_set_has(no_batch, backend, APR_HASH_KEY_STRING);
}

/* Remembers that backend has no multi-query endpoint, and notes it the
 * first time in this process. */
static void remember_lacks_batch(request_rec *r, const char *backend, int status,
                                 const char *reason)
{
    if (couchpage_child_set_add(no_batch, backend, APR_HASH_KEY_STRING)) {
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
    ap_hook_child_init(no_batch_init, NULL, NULL, APR_HOOK_MIDDLE);
    ap_hook_child_init(find_memory_init, NULL, NULL, APR_HOOK_MIDDLE);
}

/* CouchDB's own words for a non-2xx answer: {"error": ..., "reason": ...}. */
static const char *couchdb_reason(request_rec *r, int status, const char *text,
                                  apr_size_t len)
{
    const json_t *body = cp_json_load(r->pool, text, len, NULL);
    const char *error = json_string_value(json_object_get(body, "error"));
    const char *reason = json_string_value(json_object_get(body, "reason"));

    if (error && reason) {
        return apr_psprintf(r->pool, "CouchDB answered %d %s: %s", status, error, reason);
    }
    return apr_psprintf(r->pool, "CouchDB answered %d", status);
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
    return 1;
}

/* CouchDB's "error" member of a JSON answer, or NULL. */
static const char *couchdb_error(request_rec *r, const char *text, apr_size_t len)
{
    return json_string_value(json_object_get(cp_json_load(r->pool, text, len, NULL), "error"));
}

/* Whether an answer is a cluster's 500 "nodedown": the node a coordinator
 * gathered the read from went down while it served it (progress not
 * possible); asked again, a coordinator that saw the node go down no longer
 * asks it. */
static int is_nodedown(request_rec *r, int backend_status, const char *text, apr_size_t len)
{
    const char *error;

    if (backend_status != HTTP_INTERNAL_SERVER_ERROR) {
        return 0;
    }
    error = couchdb_error(r, text, len);
    return error && !strcmp(error, "nodedown");
}

#define NODEDOWN_REASON "CouchDB answered 500 nodedown: a cluster node went down during the read"

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

/* Whether a read is a multi-query POST (a _find's POST asks one query). */
static int is_batch(const backend_read *read)
{
    return read->body && read->queries > 1;
}

/* Whether an attempt is a multi-query answer that CouchDB cut off after
 * its 200: it ends its answer so when it refuses a later query, or when a
 * node it gathers from goes down. Such an answer came: the results complete
 * before the cut are read, and the plan decides what is asked again
 * (cp_plan_ask_alone). */
static int is_cut_batch(const backend_read *read, const attempt *a)
{
    return is_batch(read) && a->capture.broken && !a->capture.unanswered && a->rv == OK
           && a->backend_status == HTTP_OK;
}

/* Why a read failed in flight, or NULL if it did not. A refused or reset
 * connection, a body cut off, or a cluster's 500 nodedown are safe to
 * repeat. A timeout is not repeated: it would double the client's wait. A
 * multi-query answer cut off after its 200 did not fail in flight: it is
 * read as far as it came (is_cut_batch).
 *
 * Behind a balancer, a member that refused the connection is put in error
 * state by mod_proxy, and one that dropped it before answering by
 * failonstatus=502 (body_broken), so the repeat goes to another member. A
 * body cut off after the answer began is not charged to its member: a
 * healthy CouchDB coordinator cuts its answer when another node it gathers
 * from goes down, or when it refuses a later query of a batch (which a
 * client's forged token can ask for), and the bytes do not tell these from
 * the member's own death. A member that died refuses the repeat's
 * connection, and mod_proxy passes the repeat on. */
static const char *failed_in_flight(request_rec *r, const backend_read *read,
                                    const attempt *a)
{
    if (a->capture.past_deadline || a->capture.too_large || is_cut_batch(read, a)) {
        return NULL;
    }
    if (a->timed_out || a->rv == HTTP_GATEWAY_TIME_OUT) {
        return NULL;
    }
    if (a->capture.unanswered) {
        return "the connection was dropped before the status line";
    }
    if (a->capture.broken) {
        return "the response was cut off";
    }
    if (a->rv == HTTP_BAD_GATEWAY || a->rv == HTTP_SERVICE_UNAVAILABLE) {
        return apr_psprintf(r->pool, "mod_proxy answered %d", a->rv);
    }
    if (a->rv == OK && a->backend_status == HTTP_INTERNAL_SERVER_ERROR) {
        char *text;
        apr_size_t len;

        if (padded_body(a->capture.body, &text, &len) == APR_SUCCESS
            && is_nodedown(r, a->backend_status, text, len)) {
            return NODEDOWN_REASON;
        }
    }
    return NULL;
}

/* Whether a read failed before any answer began: the member dropped the
 * connection it had taken (a node going down), and mod_proxy_http answered
 * 502 or passed only an error bucket. Such a member is in error state now
 * (failonstatus=502), and nothing of the read was answered: it is sent
 * again, up to BACKEND_RESENDS times, besides the one repeat. */
#define BACKEND_RESENDS 2
static int failed_unanswered(const attempt *a)
{
    return a->capture.unanswered || (a->rv == HTTP_BAD_GATEWAY && !a->capture.broken);
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
 * the read, and again while it failed in flight (failed_in_flight) and may
 * be sent again. A connection never made (503) uses the read's repeat; a
 * read no answer began to (failed_unanswered) is resent, up to
 * BACKEND_RESENDS times; any other failure in flight uses the repeat;
 * then the last attempt stands. Returns OK with the attempt's body in
 * a->text, a->len (any HTTP status: see a->backend_status; a multi-query
 * answer cut off after its 200 as far as it came: is_cut_batch), or a
 * failure status with result set. */
static int read_backend(request_rec *r, const couchpage_backend_conf *conf, const backend_read *read,
                        attempt *a, couchpage_backend_stats *stats, cp_transport_failure *result)
{
    int resends = 0, repeats = read->repeats, tries = 0;
    const char *why;

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
        if (!(why = failed_in_flight(r, read, a))) {
            break;
        }
        if (a->rv == HTTP_SERVICE_UNAVAILABLE && repeats > 0) {
            /* no connection was made: nothing was in flight */
            repeats--;
            ap_log_rerror(APLOG_MARK, APLOG_INFO, 0, r, is_batch(read)
                          ? CPLOGNO(0117) "the backend could not be reached for the "
                            "multi-query request (%s: no connection was made); trying "
                            "once more"
                          : CPLOGNO(0115) "the backend could not be reached (%s: no "
                            "connection was made); trying once more", why);
        }
        else if (failed_unanswered(a) && resends < BACKEND_RESENDS) {
            resends++;
            ap_log_rerror(APLOG_MARK, APLOG_INFO, 0, r, CPLOGNO(0106) "the backend read "
                          "failed in flight before any answer (%s); sending it again", why);
        }
        else if (repeats > 0) {
            repeats--;
            ap_log_rerror(APLOG_MARK, APLOG_INFO, 0, r, is_batch(read)
                          ? CPLOGNO(0118) "the multi-query read failed in flight (%s); "
                            "repeating it once"
                          : CPLOGNO(0116) "the backend read failed in flight (%s); "
                            "repeating it once", why);
        }
        else {
            break;
        }
        free_captured(a->capture.body);
    }

    if (a->capture.past_deadline) {
        free_captured(a->capture.body);
        return fail_past_deadline(r, conf, stats, result);
    }
    if (a->capture.too_large) {
        free_captured(a->capture.body);
        return fail(result, HTTP_BAD_GATEWAY, 0, stats->bytes == 0
                    ? apr_psprintf(r->pool, "the backend response is larger than %"
                                   APR_OFF_T_FMT " bytes", conf->max_response)
                    : apr_psprintf(r->pool, "the backend responses for this request are "
                                   "larger than %" APR_OFF_T_FMT " bytes together (this "
                                   "one came after %" APR_OFF_T_FMT ")", conf->max_response,
                                   stats->bytes));
    }
    if (a->rv == HTTP_GATEWAY_TIME_OUT || (a->rv != OK && a->timed_out)) {
        return fail(result, HTTP_GATEWAY_TIME_OUT, 0, "the backend did not answer in time");
    }
    if (a->rv == HTTP_SERVICE_UNAVAILABLE) {
        /* a refused or timed-out connection, or mod_proxy's worker in error
         * state after one (for its retry= time): mod_proxy's own lines,
         * quiet for the module's subrequests, tell which
         * (couchpage_child_quiet_proxy) */
        return fail(result, HTTP_SERVICE_UNAVAILABLE, 0,
                    apr_psprintf(r->pool, "the backend is unavailable (mod_proxy made no "
                                 "connection to it, %d %s)", tries,
                                 tries == 1 ? "try" : "tries"));
    }
    if (a->rv != OK) {
        return fail(result, HTTP_BAD_GATEWAY, 0,
                    apr_psprintf(r->pool, "the backend request failed (proxy status %d)",
                                 a->rv));
    }
    if (a->capture.broken && !is_cut_batch(read, a)) {
        free_captured(a->capture.body);
        return fail(result, HTTP_BAD_GATEWAY, 0, "the backend response was cut off");
    }
    if (padded_body(a->capture.body, &a->text, &a->len) != APR_SUCCESS) {
        return fail(result, HTTP_BAD_GATEWAY, 0, "the backend response could not be read");
    }
    stats->bytes += a->capture.bytes;
    return OK;
}

/* A read's non-2xx answer as a failure carrying CouchDB's status and words. */
static int backend_refused(request_rec *r, const attempt *a, cp_transport_failure *result)
{
    return fail(result, HTTP_BAD_GATEWAY, a->backend_status,
                couchdb_reason(r, a->backend_status, a->text, a->len));
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

/* Adds the rows of a query's result to stats. */
static void count_rows(couchpage_backend_stats *stats, const cp_answer *answer)
{
    stats->rows += cp_answer_rows(answer);
}

/* Asks one query with a GET (repeats: backend_read.repeats); its answer
 * goes to answers, by the query's role. */
static int get_query(request_rec *r, const couchpage_backend_conf *conf, const char *index_url,
                     int with_docid, const cp_query *query, int repeats,
                     cp_plan_answers *answers, couchpage_backend_stats *stats,
                     cp_transport_failure *result)
{
    backend_read read = { 0 };
    attempt a;
    const cp_answer *answer;
    const char *reason;
    int status;

    read.url = cp_plan_query_url(r->pool, index_url, query);
    read.asked = stats->log ? cp_plan_query_loggable(r->pool, index_url, query,
                                                     conf->hide_keys) : NULL;
    read.repeats = repeats;
    read.queries = 1;
    status = read_success(r, conf, &read, &a, stats, result);
    if (status != OK) {
        return status;
    }
    reason = cp_response_read_view(r->pool, a.text, a.len, with_docid, &answer);
    if (reason) {
        return fail(result, HTTP_BAD_GATEWAY, 0, reason);
    }
    count_rows(stats, answer);
    log_answers(r, &a, &answer, 1);
    answers->of[query->role] = answer;
    stats->served_by |= COUCHPAGE_SERVED_BY_GET;
    return OK;
}

/* Asks the queries asked[from..] with a GET each, in order. */
static int get_each(request_rec *r, const couchpage_backend_conf *conf, const char *index_url,
                    int with_docid, const apr_array_header_t *asked, int from, int repeats,
                    cp_plan_answers *answers, couchpage_backend_stats *stats,
                    cp_transport_failure *result)
{
    int i, status;

    for (i = from; i < asked->nelts; i++) {
        status = get_query(r, conf, index_url, with_docid,
                           APR_ARRAY_IDX(asked, i, const cp_query *), repeats, answers, stats,
                           result);
        if (status != OK) {
            return status;
        }
    }
    return OK;
}

/* Statuses a server without the multi-query endpoint answers it with
 * (pouchdb-server: 400 only_multipart_accepted; others 404, 405, 415, 501),
 * among which CouchDB's own refusal of the first query (400): the first
 * query asked alone tells which. */
static int may_lack_batch(int status)
{
    return status == HTTP_BAD_REQUEST || status == HTTP_NOT_FOUND
        || status == HTTP_METHOD_NOT_ALLOWED || status == HTTP_UNSUPPORTED_MEDIA_TYPE
        || status == HTTP_NOT_IMPLEMENTED;
}

static int ask_queries(request_rec *r, const couchpage_backend_conf *conf,
                       const char *backend, const char *index_url, int with_docid,
                       const apr_array_header_t *asked, int alone, cp_plan_answers *answers,
                       couchpage_backend_stats *stats, cp_transport_failure *result)
{
    int n = asked->nelts, status, k, i;
    backend_read read = { 0 };
    attempt a;
    const cp_answer **results;
    const char *error = NULL;

    if (n == 0) {
        return OK;
    }
    if (alone) {
        /* asking them is the repeat of the read that left them waiting */
        return get_each(r, conf, index_url, with_docid, asked, 0, 0, answers, stats, result);
    }
    if (n == 1 || lacks_batch(backend)) {
        return get_each(r, conf, index_url, with_docid, asked, 0, 1, answers, stats, result);
    }
    read.url = apr_pstrcat(r->pool, index_url, "/queries", NULL);
    read.asked = cp_plan_url_path(read.url);
    read.body = cp_plan_batch_body(r->pool, asked);
    read.repeats = 1;
    read.queries = n;
    status = read_backend(r, conf, &read, &a, stats, result);
    if (status != OK) {
        return status;
    }
    if (a.backend_status < 200 || a.backend_status > 299) {
        cp_transport_failure refused;

        backend_refused(r, &a, &refused);
        if (!may_lack_batch(a.backend_status)) {
            *result = refused;
            return result->status;
        }
        /* the server refused the request, or has no such endpoint: the
         * first query alone tells */
        status = get_query(r, conf, index_url, with_docid,
                           APR_ARRAY_IDX(asked, 0, const cp_query *), 1, answers, stats,
                           result);
        if (status != OK) {
            return status;
        }
        remember_lacks_batch(r, backend, a.backend_status, refused.reason);
        return get_each(r, conf, index_url, with_docid, asked, 1, 1, answers, stats, result);
    }
    /* a body cut off brings the results complete before the cut */
    results = apr_pcalloc(r->pool, sizeof(*results) * n);
    k = cp_response_read_batch(r->pool, a.text, a.len, a.capture.broken, n, with_docid,
                               results, &error);
    if (k < 0) {
        return fail(result, HTTP_BAD_GATEWAY, 0, error);
    }
    for (i = 0; i < k; i++) {
        count_rows(stats, results[i]);
        answers->of[APR_ARRAY_IDX(asked, i, const cp_query *)->role] = results[i];
    }
    answers->cut_off = a.capture.broken;
    if (k > 0) {
        stats->served_by |= COUCHPAGE_SERVED_BY_BATCH;
    }
    log_answers(r, &a, results, k);
    return OK;
}

/* One read of url that is no view query: a _find's POST (body) or a GET
 * of a document (body NULL), repeated once when it failed in flight;
 * read_success's answer. */
static int read_one(request_rec *r, const couchpage_backend_conf *conf, const char *url,
                    const char *body, attempt *a, couchpage_backend_stats *stats,
                    cp_transport_failure *result)
{
    backend_read read = { 0 };

    read.url = url;
    read.asked = cp_plan_url_path(url);
    read.body = body;
    read.repeats = 1;
    read.queries = body ? 1 : 0;
    return read_success(r, conf, &read, a, stats, result);
}

static int find_rows(request_rec *r, const couchpage_backend_conf *conf, const char *url,
                     const char *body, const cp_find_sort *sort, const cp_answer **answer,
                     couchpage_backend_stats *stats, cp_transport_failure *result)
{
    attempt a;
    const char *reason;
    int status;

    status = read_one(r, conf, url, body, &a, stats, result);
    if (status != OK) {
        return status;
    }
    reason = cp_find_read(r->pool, a.text, a.len, sort, answer);
    if (reason) {
        return fail(result, HTTP_BAD_GATEWAY, 0, reason);
    }
    count_rows(stats, *answer);
    log_answers(r, &a, answer, 1);
    stats->served_by |= COUCHPAGE_SERVED_BY_FIND;
    return OK;
}

/* --- the transport: cp_serve's backend, log and child memory --- */

static int transport_ask(void *baton, const char *backend, const char *index_url,
                         int with_docid, const apr_array_header_t *asked, int alone,
                         cp_plan_answers *answers, cp_transport_failure *failure)
{
    couchpage_transport_baton *t = baton;

    return ask_queries(t->r, t->conf, backend, index_url, with_docid, asked, alone, answers,
                       t->stats, failure) == OK;
}

static int transport_find(void *baton, const char *url, const char *body,
                          const cp_find_sort *sort, const cp_answer **answer,
                          cp_transport_failure *failure)
{
    couchpage_transport_baton *t = baton;

    return find_rows(t->r, t->conf, url, body, sort, answer, t->stats, failure) == OK;
}

static int transport_get(void *baton, const char *url, const char **text, apr_size_t *len,
                         cp_transport_failure *failure)
{
    couchpage_transport_baton *t = baton;
    attempt a;

    if (read_one(t->r, t->conf, url, NULL, &a, t->stats, failure) != OK) {
        return 0;
    }
    *text = a.text;
    *len = a.len;
    return 1;
}

static const char *transport_note_get(void *baton, const char *key,
                                      apr_interval_time_t max_age, int *again)
{
    return couchpage_child_note_get(index_notes, key, max_age,
                                    ((couchpage_transport_baton *)baton)->r->pool, again);
}

static void transport_note_put(void *baton, const char *key, const char *text)
{
    couchpage_child_note_put(index_notes, key, text);
}

static int transport_first_time(void *baton, const void *key, apr_size_t len)
{
    return couchpage_child_set_add(find_warned, key, (apr_ssize_t)len);
}

static void transport_log(void *baton, int level, const char *code, const char *text)
{
    /* decided once: ap_log_rerror's macro reads its level twice */
    request_rec *r = ((couchpage_transport_baton *)baton)->r;

    ap_log_rerror(APLOG_MARK, level, 0, r, "%s: %s", code, text);
}

static const char *transport_where(void *baton, cp_where which)
{
    couchpage_transport_baton *t = baton;

    return apr_pstrcat(t->r->pool, t->section, " at ",
                       couchpage_directive_where(t->r->pool, which == CP_WHERE_INDEX
                                                             ? t->index_where
                                                             : t->view_where), NULL);
}

void couchpage_transport_init(cp_transport *transport, couchpage_transport_baton *baton)
{
    transport->baton = baton;
    transport->ask = transport_ask;
    transport->find = transport_find;
    transport->get = transport_get;
    transport->note_get = transport_note_get;
    transport->note_put = transport_note_put;
    transport->first_time = transport_first_time;
    transport->log = transport_log;
    transport->where = transport_where;
    transport->debug = APLOGrdebug(baton->r);
}
