#include "couchpage_backend.h"
#include "couchpage_json.h"
#include "mod_couchpage.h"

#include "http_log.h"
#include "http_protocol.h"
#include "http_request.h"
#include "util_filter.h"
#include "apr_strings.h"

APLOG_USE_MODULE(couchpage);

#define CAPTURE_FILTER "COUCHPAGE_CAPTURE"

static ap_filter_rec_t *capture_filter_handle;
static ap_filter_rec_t *no_body_filter_handle;

typedef struct {
    apr_bucket_brigade *body;
    apr_off_t bytes;
    apr_off_t max_bytes;
    int too_large;
    int broken;     /* an error bucket or a failed read: the body is cut off */
} capture_ctx;

/* The body is cut off: the subrequest failed as a bad gateway. Saying so in
 * its status lets mod_proxy_balancer's failonstatus=502 put the member that
 * cut it off into error state (mod_proxy itself does only when the
 * connection fails before a response), so that the repeat goes to another
 * member and not back to a node that is going down. */
static void body_broken(ap_filter_t *f, capture_ctx *ctx)
{
    ctx->broken = 1;
    f->r->status = HTTP_BAD_GATEWAY;
}

/* Sets every data bucket aside into our own brigade: the subrequest's output
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
        ctx->bytes += len;
        apr_brigade_write(ctx->body, NULL, NULL, data, len);
    }
    apr_brigade_cleanup(bb);
    return rv;
}

/* The subrequest has no body, and must never read the client's. */
static apr_status_t no_body(ap_filter_t *f, apr_bucket_brigade *bb,
                            ap_input_mode_t mode, apr_read_type_e block,
                            apr_off_t readbytes)
{
    APR_BRIGADE_INSERT_TAIL(bb, apr_bucket_eos_create(f->c->bucket_alloc));
    return APR_SUCCESS;
}

void cp_backend_register(void)
{
    capture_filter_handle = ap_register_output_filter(CAPTURE_FILTER, capture_body,
                                                      NULL, AP_FTYPE_RESOURCE);
    no_body_filter_handle = ap_register_input_filter("COUCHPAGE_NO_BODY", no_body,
                                                     NULL, AP_FTYPE_RESOURCE);
}

static int fail(cp_backend_result *result, int status, const char *reason)
{
    result->body = NULL;
    result->backend_status = 0;
    result->status = status;
    result->reason = reason;
    return status;
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

static request_rec *make_proxy_subrequest(request_rec *r, const cp_backend_conf *conf,
                                          const char *url, capture_ctx *ctx)
{
    request_rec *rr = ap_sub_req_method_uri("GET", r->uri, r, NULL);

    if (rr->status != HTTP_OK) {
        return rr;
    }
    /* As mod_rewrite's [P] flag does: mod_proxy's handler takes it from here. */
    rr->filename = apr_pstrcat(rr->pool, "proxy:", url, NULL);
    rr->proxyreq = PROXYREQ_REVERSE;
    rr->handler = "proxy-server";
    rr->finfo.filetype = APR_NOFILE;
    rr->header_only = 0;
    rr->args = NULL;
    apr_table_setn(rr->notes, "proxy-nocanon", "1");

    /* CouchDB gets our headers, none of the client's. */
    rr->headers_in = apr_table_make(rr->pool, 4);
    apr_table_setn(rr->headers_in, "Accept", "application/json");
    if (conf->authorization) {
        apr_table_setn(rr->headers_in, "Authorization", conf->authorization);
    }

    /* mod_proxy_http closes the backend connection after a subrequest unless
     * it has a kept body; an empty one lets connections be reused. */
    rr->kept_body = apr_brigade_create(rr->pool, r->connection->bucket_alloc);

    rr->input_filters = rr->proto_input_filters = NULL;
    ap_add_input_filter_handle(no_body_filter_handle, NULL, rr, r->connection);
    rr->output_filters = rr->proto_output_filters = NULL;
    ap_add_output_filter_handle(capture_filter_handle, ctx, rr, r->connection);
    return rr;
}

/* What one subrequest brought back. */
typedef struct {
    int rv;              /* ap_run_sub_req's answer */
    int backend_status;  /* the status the backend answered, as the subrequest saw it */
    int timed_out;
} attempt;

static int run_attempt(request_rec *r, const cp_backend_conf *conf, const char *url,
                       capture_ctx *ctx, attempt *out)
{
    request_rec *rr = make_proxy_subrequest(r, conf, url, ctx);

    if (rr->status != HTTP_OK) {
        out->rv = rr->status;
        ap_destroy_sub_req(rr);
        return 0;
    }
    out->rv = ap_run_sub_req(rr);
    out->backend_status = rr->status;
    out->timed_out = apr_table_get(rr->notes, "proxy_timedout") != NULL;
    ap_destroy_sub_req(rr);
    return 1;
}

/* CouchDB's "error" member of a JSON answer, or NULL. */
static const char *couchdb_error(request_rec *r, apr_bucket_brigade *body)
{
    char *text;
    apr_size_t len;

    if (apr_brigade_pflatten(body, &text, &len, r->pool) != APR_SUCCESS) {
        return NULL;
    }
    return json_string_value(json_object_get(cp_json_load(r->pool, text, len, NULL), "error"));
}

/* Why a read failed in flight, or NULL if it did not. A refused or reset
 * connection, a body cut off, or a cluster node that went down while it
 * served the read (its coordinator answers 500 "nodedown": progress not
 * possible) are safe to repeat; behind a balancer the repeat goes to another
 * member once the failed one is in error state, and a coordinator that saw
 * the node go down no longer asks it. A timeout is not repeated: it would
 * double the client's wait. */
static const char *failed_in_flight(request_rec *r, const capture_ctx *ctx, const attempt *a)
{
    if (ctx->too_large || a->timed_out || a->rv == HTTP_GATEWAY_TIME_OUT) {
        return NULL;
    }
    if (ctx->broken) {
        return "the response was cut off";
    }
    if (a->rv == HTTP_BAD_GATEWAY || a->rv == HTTP_SERVICE_UNAVAILABLE) {
        return apr_psprintf(r->pool, "proxy status %d", a->rv);
    }
    if (a->rv == OK && a->backend_status == HTTP_INTERNAL_SERVER_ERROR) {
        const char *error = couchdb_error(r, ctx->body);

        if (error && !strcmp(error, "nodedown")) {
            return "CouchDB answered 500 nodedown: a cluster node went down during the read";
        }
    }
    return NULL;
}

int cp_backend_get_json(request_rec *r, const cp_backend_conf *conf,
                        const char *url, cp_backend_result *result)
{
    capture_ctx ctx;
    attempt a = { 0 };
    int tries;
    char *text;
    apr_size_t len;
    const char *error = NULL;
    const char *why;

    for (tries = 1;; tries++) {
        memset(&ctx, 0, sizeof(ctx));
        ctx.max_bytes = conf->max_response;
        ctx.body = apr_brigade_create(r->pool, r->connection->bucket_alloc);
        if (!run_attempt(r, conf, url, &ctx, &a)) {
            return fail(result, HTTP_INTERNAL_SERVER_ERROR,
                        apr_psprintf(r->pool, "the backend subrequest could not be "
                                     "set up (status %d)", a.rv));
        }
        if (tries == 2 || !(why = failed_in_flight(r, &ctx, &a))) {
            break;
        }
        ap_log_rerror(APLOG_MARK, APLOG_INFO, 0, r, CPLOGNO(0106) "the backend read failed "
                      "in flight (%s); repeating it once", why);
        apr_brigade_cleanup(ctx.body);
    }

    if (ctx.too_large) {
        apr_brigade_cleanup(ctx.body);
        return fail(result, HTTP_BAD_GATEWAY,
                    apr_psprintf(r->pool, "the backend response is larger than %"
                                 APR_OFF_T_FMT " bytes", conf->max_response));
    }
    if (a.rv == HTTP_GATEWAY_TIME_OUT || (a.rv != OK && a.timed_out)) {
        return fail(result, HTTP_GATEWAY_TIME_OUT, "the backend did not answer in time");
    }
    if (a.rv == HTTP_SERVICE_UNAVAILABLE) {
        return fail(result, HTTP_SERVICE_UNAVAILABLE, "the backend is unavailable");
    }
    if (a.rv != OK) {
        return fail(result, HTTP_BAD_GATEWAY,
                    apr_psprintf(r->pool, "the backend request failed (proxy status %d)",
                                 a.rv));
    }
    if (ctx.broken) {
        return fail(result, HTTP_BAD_GATEWAY, "the backend response was cut off");
    }
    if (apr_brigade_pflatten(ctx.body, &text, &len, r->pool) != APR_SUCCESS) {
        return fail(result, HTTP_BAD_GATEWAY, "the backend response could not be read");
    }
    apr_brigade_cleanup(ctx.body);
    if (a.backend_status < 200 || a.backend_status > 299) {
        fail(result, HTTP_BAD_GATEWAY, couchdb_reason(r, a.backend_status, text, len));
        result->backend_status = a.backend_status;
        return HTTP_BAD_GATEWAY;
    }
    result->body = cp_json_load(r->pool, text, len, &error);
    if (!result->body) {
        return fail(result, HTTP_BAD_GATEWAY,
                    apr_psprintf(r->pool, "the backend response is not JSON: %s", error));
    }
    result->status = HTTP_OK;
    result->backend_status = a.backend_status;
    result->reason = NULL;
    return OK;
}
