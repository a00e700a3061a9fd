/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mod_couchpage: linked-list pagination of CouchDB views, and of Mango
 * _find queries by keyset (mod_couchpage_find.c).
 *
 * This file is glue: the hooks, the handler, and a view location's page in
 * a straight line (its range, its token located, its queries asked and
 * widened). What every page request asks is read, its planned queries
 * asked, and a page or an error answered, in mod_couchpage_request.c; a
 * _find location's page is mod_couchpage_find.c's.
 * The directives and their merge are in mod_couchpage_config.c, what pages
 * cost (the access log's notes, mod_status's section) in
 * mod_couchpage_status.c, the expression functions and the item template
 * in mod_couchpage_expr.c, the checks of the merged config in
 * mod_couchpage_check.c. Tokens, client arguments, query plans, page
 * assembly and rendering live in the httpd-free couchpage_* core; the
 * backend fetch, a subrequest served by mod_proxy, in
 * mod_couchpage_backend.c. So this file reads no directive and makes no
 * subrequest; it asks the backend what the plan says waits
 * (cp_plan_waiting, cp_plan_ask_alone), and what it reads and writes of
 * JSON and HTML, the core does for it.
 */
#include "mod_couchpage_config.h"

#include "http_core.h"
#include "http_log.h"
#include "http_protocol.h"
#include "http_request.h"
#include "apr_strings.h"

#include "couchpage_page.h"
#include "couchpage_token.h"
#include "mod_couchpage_request.h"
#include "mod_couchpage_backend.h"
#include "mod_couchpage_check.h"
#include "mod_couchpage_child.h"
#include "mod_couchpage_expr.h"
#include "mod_couchpage_find.h"
#include "mod_couchpage_status.h"
#include "mod_couchpage_version.h"

#define HANDLER_NAME "couchpage"

/* A range bound for this request (couchpage_eval_value): 1 with compact
 * JSON, or NULL for an open side, in *json; or 0 when the client has been
 * answered. */
static int eval_bound(request_rec *r, const char *which, const couchpage_key_bound *bound,
                      const char **json)
{
    return couchpage_eval_value(r, apr_pstrcat(r->pool, "CouchPageRange ", which, NULL),
                                apr_psprintf(r->pool, "the %s bound of the key range",
                                             which),
                                bound, json);
}

/* Reads a view location's request: the client's
 * (couchpage_read_client_request), its token decoded, and the request's
 * range: 1, or 0 when the client has been answered with the error. */
static int read_page_request(request_rec *r, const couchpage_dir_conf *conf,
                             couchpage_page_request *req)
{
    const char *reason, *low, *high;

    req->with_docid = cp_view_has_docids(&conf->view);
    if (!couchpage_read_client_request(r, conf, req)) {
        return 0;
    }
    if (req->token_text) {
        reason = cp_token_decode(r->pool, req->token_text, CP_TOKEN_VIEW_ROWS(req->with_docid),
                                 &req->start);
        if (reason) {
            couchpage_send_bad_request(r, reason);
            return 0;
        }
    }
    if (!eval_bound(r, "LOW", &conf->low, &low)
        || !eval_bound(r, "HIGH", &conf->high, &high)) {
        return 0;
    }
    reason = cp_plan_init(r->pool, &req->plan, &conf->view, req->partition, low, high,
                          req->count, couchpage_links_shown(conf));
    /* bounds merged from several sections, or yielded by expressions, are
     * the configuration's fault; a partition name may be the client's */
    if (reason && cp_plan_check_range(r->pool, &conf->view, low, high)) {
        couchpage_send_config_error(r, apr_pstrcat(r->pool, "CouchPageRange: ", reason, NULL));
        return 0;
    }
    /* a bounded token's row is checked once located (couchpage_locate_start) */
    if (!reason && req->args.start && !req->start.digest) {
        reason = cp_plan_check_start(r->pool, &req->plan, &req->start);
    }
    if (reason) {
        couchpage_send_bad_request(r, reason);
        return 0;
    }
    return 1;
}

int couchpage_locate_start(request_rec *r, const couchpage_dir_conf *conf,
                           couchpage_page_request *req, couchpage_backend_stats *stats)
{
    apr_array_header_t *probes = cp_plan_clamp_probes(r->pool, &req->plan, &req->start);
    apr_array_header_t *queries;
    cp_token clamped, located;
    const char *reason;

    /* a client writes a bounded token's keys: the locating query stays
     * within the range, and tells nothing of the rows outside it */
    if (probes && !couchpage_fetch_answers(r, conf, req, probes, stats)) {
        return 0;
    }
    if ((reason = cp_plan_clamp(&req->plan, probes, &req->start, &clamped))) {
        couchpage_send_token_refused(r, reason);
        return 0;
    }
    queries = cp_plan_locate(r->pool, &req->plan, &clamped);
    if (!couchpage_fetch_answers(r, conf, req, queries, stats)) {
        return 0;
    }
    reason = cp_page_locate(r->pool, queries, &clamped, req->with_docid,
                            conf->view.descending, &located);
    if (reason && !conf->token_key) {
        /* a plain token may be forged: refused as any token that names no
         * row of the location, whatever the rows between its keys */
        couchpage_send_token_refused(r, reason);
        return 0;
    }
    if (reason) {
        /* a sealed token is the module's own: the data's doing, which the
         * operator mends */
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r, CPLOGNO(0200)
                      "the page of a bounded token of %s cannot be found: %s (CouchPageView "
                      "%s); raise CouchPageMaxTokenLength, so that tokens keep more of "
                      "such keys", r->uri, reason, conf->view.url);
        couchpage_send_error(r, HTTP_INTERNAL_SERVER_ERROR, "internal_error",
                             "the page of this link cannot be found: too many rows share "
                             "the start of its key");
        return 0;
    }
    reason = cp_plan_check_start(r->pool, &req->plan, &located);
    if (reason) {
        couchpage_send_token_refused(r, reason);
        return 0;
    }
    req->start = located;
    return 1;
}

/* The bytes a token may take percent-encoded in a link's URL: what
 * LimitRequestLine leaves of "GET PATH?start=...&limit=N&format=html
 * HTTP/1.1" (64 bytes for all but the path and the token). */
static apr_size_t token_url_room(request_rec *r, const char *path)
{
    apr_size_t rest = strlen(path) + 64;
    apr_size_t line = r->server->limit_req_line > 0 ? (apr_size_t)r->server->limit_req_line : 0;

    return line > rest ? line - rest : 0;
}

/* Answers the request with its page, or with the error that stops it;
 * what its backend reads cost is added to stats. */
static int serve_page(request_rec *r, couchpage_backend_stats *stats)
{
    const couchpage_dir_conf *conf;
    const char *fault;
    couchpage_page_request req;
    const cp_token *start;
    apr_array_header_t *queries;
    cp_page_answers answers;
    cp_token_room room;
    cp_page page;
    int status;

    conf = ap_get_module_config(r->per_dir_config, &couchpage_module);
    r->allowed |= (AP_METHOD_BIT << M_GET);
    if (r->method_number != M_GET) {
        ap_log_rerror(APLOG_MARK, APLOG_INFO, 0, r, CPLOGNO(0103)
                      "method %s refused", r->method);
        apr_table_setn(r->headers_out, "Allow", "GET, HEAD");
        return couchpage_send_error(r, HTTP_METHOD_NOT_ALLOWED, "method_not_allowed",
                                    "only GET and HEAD are served here");
    }
    if (!conf->view_set) {
        return couchpage_send_config_error(r, "no CouchPageView is set");
    }
    if (conf->view.reduce && conf->view.include_docs) {
        return couchpage_send_config_error(r, "CouchPageReduce On and CouchPageIncludeDocs On "
                                           "are merged here; grouped rows have no documents");
    }
    /* what start-up could not place: a .htaccess file's, say */
    fault = couchpage_merged_fault(r->pool, conf);
    if (fault) {
        return couchpage_send_config_error(r, fault);
    }
    if (conf->view.is_find) {
        const couchpage_dir_conf *by_index;

        if (!couchpage_find_by_index(r, conf, stats, &by_index)) {
            couchpage_log_backend_requests(r, stats, NULL);
            return OK;
        }
        /* by keyset: over _find, or numbered over its index's view */
        return couchpage_find_serve(r, conf, by_index, stats);
    }
    /* Each step answers the client itself when it fails. */
    if (!read_page_request(r, conf, &req)) {
        return OK;
    }
    /* Every query the page needs, asked at once; only the rare widening of
     * a query whose answer cannot place the pages behind asks again. */
    if (req.args.start && req.start.digest && !couchpage_locate_start(r, conf, &req, stats)) {
        couchpage_log_backend_requests(r, stats, NULL);
        return OK;
    }
    start = req.args.start ? &req.start : NULL;
    room.max_sent = conf->max_token_length;
    room.max_escaped = token_url_room(r, couchpage_links_path(r));
    room.sealed = conf->token_key != NULL;
    room.raw_ids = conf->view.is_all_docs;
    queries = cp_plan_page(r->pool, &req.plan, start);
    cp_page_answers_init(&answers, &req.plan, queries, start, req.args.start, &room);
    do {
        if (!couchpage_fetch_answers(r, conf, &req, queries, stats)) {
            couchpage_log_backend_requests(r, stats, NULL);
            return OK;
        }
    } while (cp_plan_widen(r->pool, &req.plan, start,
                           cp_page_assemble(r->pool, &answers, &page)));
    couchpage_log_backend_requests(r, stats, &page);
    status = couchpage_send_page(r, conf, &req, &page);
    couchpage_log_page(r, conf, &page, status == OK ? r->status : status);
    return status;
}

int couchpage_handler(request_rec *r)
{
    couchpage_backend_stats stats = { 0 };
    int rv;

    if (!r->handler || strcmp(r->handler, HANDLER_NAME) != 0) {
        return DECLINED;
    }
    if (APLOGrdebug(r)) {
        stats.log = apr_array_make(r->pool, 4, sizeof(couchpage_backend_request *));
    }
    rv = serve_page(r, &stats);
    couchpage_status_record(r, &stats);
    return rv;
}

/* The version where httpd's modules show theirs: a component of the server's
 * banner (the Server header under ServerTokens Full; the description
 * mod_status shows, always) and one line at info for each configuration
 * the server runs (the first post_config pass at start-up only checks the
 * configuration). */
static int announce_version(apr_pool_t *pconf, apr_pool_t *plog, apr_pool_t *ptemp,
                            server_rec *s)
{
    ap_add_version_component(pconf, "couchpage/" COUCHPAGE_VERSION);
    if (ap_state_query(AP_SQ_MAIN_STATE) != AP_SQ_MS_CREATE_PRE_CONFIG) {
        ap_log_error(APLOG_MARK, APLOG_INFO, 0, s, CPLOGNO(0380) "mod_couchpage "
                     COUCHPAGE_VERSION " loaded");
    }
    return OK;
}

static void register_hooks(apr_pool_t *p)
{
    couchpage_find_register();
    couchpage_backend_register();
    couchpage_child_register();
    couchpage_status_register();
    ap_hook_post_config(announce_version, NULL, NULL, APR_HOOK_MIDDLE);
    /* first: before core's lookup finds what a .htaccess template may not read */
    ap_hook_expr_lookup(couchpage_expr_lookup, NULL, NULL, APR_HOOK_FIRST);
    ap_hook_check_config(couchpage_check_config, NULL, NULL, APR_HOOK_MIDDLE);
    ap_hook_handler(couchpage_handler, NULL, NULL, APR_HOOK_MIDDLE);
}

AP_DECLARE_MODULE(couchpage) = {
    STANDARD20_MODULE_STUFF,
    couchpage_create_dir_conf,
    couchpage_merge_dir_conf,
    NULL,
    NULL,
    couchpage_cmds,
    register_hooks,
    AP_MODULE_FLAG_NONE
};

