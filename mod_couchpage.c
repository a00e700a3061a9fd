/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mod_couchpage: linked-list pagination of CouchDB views, and of Mango
 * _find queries by keyset (serve_find_page).
 *
 * This file is glue: the hooks and the handler, with its error responses
 * and Link header; the directives and their merge are in
 * mod_couchpage_config.c, what pages cost (the access log's notes,
 * mod_status's section) in mod_couchpage_status.c, the expression
 * functions and the item template in mod_couchpage_expr.c, the checks of
 * the merged config in mod_couchpage_check.c. Tokens, client
 * arguments, query plans, page assembly and rendering live in the
 * httpd-free couchpage_* core; the backend fetch, a subrequest served by
 * mod_proxy, in mod_couchpage_backend.c. So this file reads no directive
 * and makes no subrequest; it asks the backend what the plan says waits
 * (cp_plan_waiting, cp_plan_ask_alone), and what it reads and writes of
 * JSON and HTML, the core does for it.
 */
#include "mod_couchpage_config.h"

#include "http_core.h"
#include "http_log.h"
#include "http_protocol.h"
#include "http_request.h"
#include "apr_hash.h"
#include "apr_strings.h"
#if APR_HAS_THREADS
#include "apr_thread_mutex.h"
#endif

#include "couchpage_args.h"
#include "couchpage_find.h"
#include "couchpage_json.h"
#include "couchpage_page.h"
#include "couchpage_seal.h"
#include "couchpage_token.h"
#include "mod_couchpage_backend.h"
#include "mod_couchpage_check.h"
#include "mod_couchpage_expr.h"
#include "mod_couchpage_status.h"

#define HANDLER_NAME "couchpage"
#define JSON_TYPE "application/json; charset=utf-8"
#define HTML_TYPE "text/html; charset=utf-8"

static int send_body(request_rec *r, int status, const char *content_type,
                     const char *body)
{
    apr_size_t len = strlen(body);

    r->status = status;
    ap_set_content_type(r, content_type);
    ap_set_content_length(r, len);
    if (!r->header_only) {
        ap_rwrite(body, len, r);
    }
    return OK;
}

/* Included into another page (mod_include), the module answers HTML unless
 * the location is fixed to JSON: a page must never receive a client's bytes
 * as anything but escaped text. */
static int is_included_html(const request_rec *r)
{
    const couchpage_dir_conf *conf = ap_get_module_config(r->per_dir_config,
                                                          &couchpage_module);
    return r->main && conf->format != CP_FORMAT_JSON;
}

/* The format of the answer, a page or an error: the location's, if fixed;
 * HTML inside an included page; else the client's ?format= (asked), else
 * HTML for htmx (HX-Request: true, whose requests accept anything), else
 * what its Accept header prefers. Those two headers then vary a page (vary:
 * add Vary: Accept, HX-Request; an error is never kept by a cache). */
static cp_format choose_format(request_rec *r, const couchpage_dir_conf *conf,
                               cp_format asked, int vary)
{
    const char *htmx = apr_table_get(r->headers_in, "HX-Request");

    if (conf->format != CP_FORMAT_AUTO) {
        return conf->format;
    }
    if (is_included_html(r)) {
        return CP_FORMAT_HTML;
    }
    if (asked != CP_FORMAT_AUTO) {
        return asked;
    }
    if (vary) {
        apr_table_mergen(r->headers_out, "Vary", "Accept, HX-Request");
    }
    if (htmx && ap_cstr_casecmp(htmx, "true") == 0) {
        return CP_FORMAT_HTML;
    }
    return cp_format_from_accept(r->pool, apr_table_get(r->headers_in, "Accept"));
}

/* The client's arguments, parsed once a request: the page reads them, and
 * so does an error's format, as far as they parse. */
struct couchpage_client_args {
    cp_args args;
    const char *fault; /* why they are refused, or NULL */
};

static const struct couchpage_client_args *client_args(request_rec *r,
                                                       const couchpage_dir_conf *conf)
{
    couchpage_request_config *slot = couchpage_request_config_of(r, 1);

    if (!slot->client_args) {
        slot->client_args = apr_palloc(r->pool, sizeof(*slot->client_args));
        slot->client_args->fault = cp_args_parse(r->pool, r->args, conf->max_page_size,
                                                 &slot->client_args->args);
    }
    return slot->client_args;
}

/* Errors come in the format a page would: JSON, which front-end code
 * reads, with the error and a reason; HTML (a browser's page, an included
 * fragment) with the location's CouchPageText error word alone. No cache
 * keeps one: the next request may well succeed. */
static int send_error(request_rec *r, int status, const char *error, const char *reason)
{
    const couchpage_dir_conf *conf = ap_get_module_config(r->per_dir_config,
                                                          &couchpage_module);

    apr_table_setn(r->headers_out, "Cache-Control", "no-store");
    if (choose_format(r, conf, client_args(r, conf)->args.format, 0) == CP_FORMAT_HTML) {
        return send_body(r, status, HTML_TYPE, cp_render_html_error(r->pool, conf->words));
    }
    return send_body(r, status, JSON_TYPE, cp_render_error(r->pool, error, reason));
}

/* The backend's trouble, in full, goes to the error log with the request's
 * path and the location's view; visitors learn only which kind it was. */
static int send_backend_error(request_rec *r, const couchpage_dir_conf *conf,
                              const couchpage_backend_result *result)
{
    const char *hint = "";

    if (result->backend_status == HTTP_BAD_REQUEST && conf->range_set) {
        hint = "; does CouchDB collate CouchPageRange's LOW after its HIGH?";
    }
    ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r, CPLOGNO(0101)
                  "the backend queries for %s failed with %d: %s%s (CouchPageView %s, "
                  "%s at %s)", r->uri, result->status, result->reason, hint,
                  conf->view.url, conf->view_section,
                  couchpage_directive_where(r->pool, conf->view_where));
    if (result->status == HTTP_GATEWAY_TIME_OUT) {
        return send_error(r, result->status, "backend_timeout",
                          "the backend did not answer in time");
    }
    if (result->status == HTTP_SERVICE_UNAVAILABLE) {
        return send_error(r, result->status, "backend_unavailable",
                          "the backend is unavailable");
    }
    if (result->status == HTTP_BAD_GATEWAY) {
        return send_error(r, result->status, "backend_error",
                          "the backend could not serve this page");
    }
    return send_error(r, result->status, "internal_error",
                      "the server could not serve this page");
}

static int send_bad_request(request_rec *r, const char *reason)
{
    ap_log_rerror(APLOG_MARK, APLOG_INFO, 0, r, CPLOGNO(0102)
                  "bad request: %s", reason);
    return send_error(r, HTTP_BAD_REQUEST, "bad_request", reason);
}

static int send_config_error(request_rec *r, const char *reason)
{
    ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r, CPLOGNO(0104)
                  "configuration error for %s: %s", r->uri, reason);
    return send_error(r, HTTP_INTERNAL_SERVER_ERROR, "internal_error",
                      "this location is misconfigured; see the server's error log");
}

/* Text of an operator's expression result for the error log: request
 * values may be in it. */
static const char *loggable(request_rec *r, const char *text)
{
    const apr_size_t most = 200;

    return ap_escape_logitem(r->pool, strlen(text) > most
                             ? apr_pstrcat(r->pool, apr_pstrndup(r->pool, text, most),
                                           "...", NULL)
                             : text);
}

/* A request-time value of the operator's (a CouchPageRange bound, a
 * CouchPageSelector string holding %{...}): 1 with compact JSON, or NULL
 * when it yields nothing, in *json; or 0 when the client has been answered
 * with the error. what names it for the log ("CouchPageRange LOW"), of for
 * the client ("the LOW bound of the key range"). The expression is the
 * operator's: a result that is not JSON is the configuration's fault
 * (request values enter as JSON through %{json:...}), and only a request
 * value that has no JSON form is the client's. */
static int eval_value(request_rec *r, const char *what, const char *of,
                      const couchpage_key_bound *bound, const char **json)
{
    const char *err = NULL, *text;
    int not_utf8;

    *json = bound->json;
    if (!bound->expr) {
        return 1;
    }
    text = couchpage_expr_eval(r, bound->expr, &not_utf8, &err);
    if (err) {
        send_config_error(r, apr_psprintf(r->pool, "%s could not be evaluated: %s", what,
                                          err));
        return 0;
    }
    if (not_utf8) {
        send_bad_request(r, apr_psprintf(r->pool, "a request value for %s is not valid "
                                         "UTF-8", of));
        return 0;
    }
    if (!*text) {
        *json = NULL;
        return 1;
    }
    *json = cp_json_compact(r->pool, text, &err);
    if (!*json) {
        send_config_error(r, apr_psprintf(r->pool, "%s yields '%s', which is not JSON (%s); "
                                          "put request values in with %%{json:...}", what,
                                          loggable(r, text), err));
        return 0;
    }
    return 1;
}

/* A range bound for this request (eval_value): 1 with compact JSON, or
 * NULL for an open side, in *json; or 0 when the client has been answered. */
static int eval_bound(request_rec *r, const char *which, const couchpage_key_bound *bound,
                      const char **json)
{
    return eval_value(r, apr_pstrcat(r->pool, "CouchPageRange ", which, NULL),
                      apr_psprintf(r->pool, "the %s bound of the key range", which), bound,
                      json);
}

/* The path page links point at: this request's, or under mod_include the
 * including page's, so that a fragment's links lead back to the page. */
static const char *links_path(request_rec *r)
{
    const request_rec *top = r;

    while (top->main) {
        top = top->main;
    }
    /* r->uri is decoded (httpd decodes parsed_uri.path in place too) */
    return ap_escape_uri(r->pool, top->uri);
}

/* What a sealed token is valid for: this location's view, at this path. */
static const char *token_binding(request_rec *r, const couchpage_dir_conf *conf)
{
    return apr_pstrcat(r->pool, conf->view.url, "\n", r->uri, NULL);
}

/* libcrypto failing is the server's trouble: logged, and a 500 that says
 * nothing of it. */
static int send_seal_error(request_rec *r, const char *reason)
{
    ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r, CPLOGNO(0140)
                  "the tokens of %s could not be sealed or opened: %s", r->uri, reason);
    return send_error(r, HTTP_INTERNAL_SERVER_ERROR, "internal_error",
                      "the server could not serve this page");
}

/* A key too long for a token makes a bounded token (cp_token_for_row),
 * which fits unless CouchPageMaxTokenLength is too small for even that
 * (some 100 bytes, more sealed): the page then leaves such links out (a
 * link the module would refuse), and says so once. Logged at info, once a
 * page: the operator raises CouchPageMaxTokenLength. */
static void withhold_long_tokens(request_rec *r, const couchpage_dir_conf *conf,
                                 cp_page *page)
{
    apr_size_t longest = cp_page_withhold_long_tokens(page, conf->max_token_length);

    if (longest) {
        ap_log_rerror(APLOG_MARK, APLOG_INFO, 0, r, CPLOGNO(0180)
                      "a link of %s is left out: its token is %" APR_SIZE_T_FMT " bytes, "
                      "more than CouchPageMaxTokenLength %" APR_SIZE_T_FMT " even bounded "
                      "(CouchPageView %s); raise it, or the pages past it cannot be "
                      "reached", r->uri,
                      longest, conf->max_token_length, conf->view.url);
    }
}

/* RFC 8288 Link header: first, prev, next, and last when it is known. */
static void set_link_header(request_rec *r, const cp_page *page, const cp_links *links)
{
    const char *value = apr_pstrcat(r->pool, "<", cp_link_url(r->pool, links, NULL),
                                    ">; rel=\"first\"", NULL);

    if (page->prev) {
        value = apr_pstrcat(r->pool, value, ", <", cp_prev_url(r->pool, links, page),
                            ">; rel=\"prev\"", NULL);
    }
    if (page->next) {
        value = apr_pstrcat(r->pool, value, ", <", cp_link_url(r->pool, links, page->next),
                            ">; rel=\"next\"", NULL);
    }
    if (page->has_last) {
        value = apr_pstrcat(r->pool, value, ", <", cp_link_url(r->pool, links, page->last),
                            ">; rel=\"last\"", NULL);
    }
    apr_table_setn(r->headers_out, "Link", value);
}

/* One request for a page, read and checked. */
typedef struct {
    cp_args args;
    cp_format format;   /* json or html, decided */
    int chosen_format;  /* by the client's ?format=, which links then keep */
    int count;          /* rows on the page */
    const char *token_text; /* the client's start token, unsealed; NULL: none */
    const char *partition;  /* CouchPagePartition's for this request; NULL: none */
    cp_token start;     /* a view's: decoded from token_text, when there is one */
    cp_plan plan;       /* a view's: its view is the location's, merged (conf->view) */
    int with_docid;
} page_request;

/* Reads what every location's request carries: the client's arguments and
 * token (its length capped, unsealed), and the request's partition: 1, or 0
 * when the client has been answered with the error. */
static int read_client_request(request_rec *r, const couchpage_dir_conf *conf,
                               page_request *req)
{
    const struct couchpage_client_args *client = client_args(r, conf);
    const char *reason;

    req->args = client->args;
    reason = client->fault;
    if (reason) {
        send_bad_request(r, reason);
        return 0;
    }
    /* The client chooses only where the operator left the choice open, and
     * never for a page that includes the location. */
    req->format = choose_format(r, conf, req->args.format, 1);
    req->chosen_format = conf->format == CP_FORMAT_AUTO && !is_included_html(r)
                         && req->args.format != CP_FORMAT_AUTO;
    /* The default size is capped by a smaller CouchPageMaxSize; a
     * CouchPageSize set above it never gets here (couchpage_merged_fault). */
    req->count = req->args.limit ? req->args.limit
               : (conf->page_size < conf->max_page_size ? conf->page_size
                                                        : conf->max_page_size);
    req->token_text = req->args.start;
    if (req->args.start) {
        /* The one cap on a token's length: on what the client sent, sealed
         * or not, before it is unsealed (decrypted whole) or decoded. A
         * sealed token's payload is shorter than the token. */
        if (strlen(req->args.start) > conf->max_token_length) {
            send_bad_request(r, apr_psprintf(r->pool, "the start token is longer than %"
                                             APR_SIZE_T_FMT " bytes", conf->max_token_length));
            return 0;
        }
        if (conf->token_key) {
            switch (cp_unseal(r->pool, conf->token_key, conf->previous_token_key,
                              token_binding(r, conf), req->args.start, &req->token_text,
                              &reason)) {
            case CP_UNSEAL_OPENED:
                break;
            case CP_UNSEAL_REFUSED:
                send_bad_request(r, reason);
                return 0;
            case CP_UNSEAL_FAILED:
            default:
                send_seal_error(r, reason);
                return 0;
            }
        }
    }
    req->partition = NULL;
    if (conf->partition) {
        req->partition = ap_expr_str_exec(r, conf->partition, &reason);
        if (reason) {
            send_config_error(r, apr_pstrcat(r->pool, "CouchPagePartition could not be "
                                             "evaluated: ", reason, NULL));
            return 0;
        }
    }
    return 1;
}

/* Reads a view location's request: the client's (read_client_request),
 * its token decoded, and the request's range: 1, or 0 when the client has
 * been answered with the error. */
static int read_page_request(request_rec *r, const couchpage_dir_conf *conf,
                             page_request *req)
{
    const char *reason, *low, *high;

    req->with_docid = cp_view_has_docids(&conf->view);
    if (!read_client_request(r, conf, req)) {
        return 0;
    }
    if (req->token_text) {
        reason = cp_token_decode(r->pool, req->token_text, req->with_docid, &req->start);
        if (reason) {
            send_bad_request(r, reason);
            return 0;
        }
    }
    if (!eval_bound(r, "LOW", &conf->low, &low)
        || !eval_bound(r, "HIGH", &conf->high, &high)) {
        return 0;
    }
    reason = cp_plan_init(r->pool, &req->plan, &conf->view, req->partition, low, high,
                          req->count, conf->links);
    /* bounds merged from several sections, or yielded by expressions, are
     * the configuration's fault; a partition name may be the client's */
    if (reason && cp_plan_check_range(r->pool, &conf->view, low, high)) {
        send_config_error(r, apr_pstrcat(r->pool, "CouchPageRange: ", reason, NULL));
        return 0;
    }
    /* a bounded token's row is checked once located (locate_start) */
    if (!reason && req->args.start && !req->start.digest) {
        reason = cp_plan_check_start(r->pool, &req->plan, &req->start);
    }
    if (reason) {
        send_bad_request(r, reason);
        return 0;
    }
    return 1;
}

/* An answer with more rows than its query's limit (a backend that ignored
 * it) is refused, not used: 1 when every answer is within its limit, else 0
 * when the client has been answered 502. */
static int overfull_answer(request_rec *r, const couchpage_dir_conf *conf,
                           const apr_array_header_t *queries)
{
    const cp_query *overfull = cp_plan_overfull(queries);

    if (!overfull) {
        return 1;
    }
    ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r, CPLOGNO(0181)
                  "the backend answered a query for %s with %" APR_SIZE_T_FMT " rows, more "
                  "than its limit of %d: refused (CouchPageView %s, %s at %s)", r->uri,
                  cp_answer_rows(overfull->answer), overfull->limit, conf->view.url,
                  conf->view_section, couchpage_directive_where(r->pool, conf->view_where));
    send_error(r, HTTP_BAD_GATEWAY, "backend_error", "the backend could not serve this page");
    return 0;
}

/* Asks CouchDB the queries a multi-query answer cut off after k of n results
 * left waiting (cp_plan_ask_alone), each alone, and gives them their
 * answers: OK, or the failure in result. Which it was is known only now:
 * CouchDB refusing query k + 1 (a reversed range), or a connection lost. */
static int ask_alone(request_rec *r, const couchpage_dir_conf *conf, const page_request *req,
                     apr_array_header_t *queries, const apr_array_header_t *alone, int n,
                     couchpage_backend_stats *stats, couchpage_backend_result *result)
{
    cp_plan_answers answers = { { NULL }, 0 };
    int k = n - alone->nelts;
    int status = couchpage_backend_fetch(r, &conf->backend, conf->view.backend,
                                         req->plan.index_url, req->with_docid, alone,
                                         COUCHPAGE_ASK_ALONE, &answers, stats, result);

    if (status == OK) {
        cp_plan_take_answers(queries, &answers);
        ap_log_rerror(APLOG_MARK, APLOG_INFO, 0, r, CPLOGNO(0119) "the multi-query read "
                      "failed in flight (cut off after %d of %d results); the other "
                      "queries, asked alone, were answered", k, n);
    }
    else if (result->backend_status >= 400 && result->backend_status < 500) {
        /* the caller logs CouchDB's words, at the level they deserve */
        ap_log_rerror(APLOG_MARK, APLOG_DEBUG, 0, r, CPLOGNO(0120) "CouchDB ended its "
                      "multi-query answer after %d of %d results: it refused query %d "
                      "(%d)", k, n, k + 1, result->backend_status);
    }
    else {
        ap_log_rerror(APLOG_MARK, APLOG_INFO, 0, r, CPLOGNO(0121) "the multi-query read "
                      "was cut off after %d of %d results, and the other queries, "
                      "asked alone, failed too (%s)", k, n, result->reason);
    }
    return status;
}

/* Asks CouchDB the queries that have no answer yet, and those a cut answer
 * left waiting again, alone (cp_plan_ask_alone): 1 with every answer in,
 * read and checked (none over its limit), or 0 when the client has been
 * answered with the error. A CouchDB 400 on a page that starts at a
 * client's token means the token lies outside the location's key range
 * (CouchDB refuses a reversed range): the client's error. What the reads
 * cost is added to stats. */
static int fetch_answers(request_rec *r, const couchpage_dir_conf *conf,
                         const page_request *req, apr_array_header_t *queries,
                         couchpage_backend_stats *stats)
{
    cp_plan_answers answers = { { NULL }, 0 };
    couchpage_backend_result result;
    const apr_array_header_t *asked = cp_plan_waiting(r->pool, queries), *alone;
    int status = couchpage_backend_fetch(r, &conf->backend, conf->view.backend,
                                         req->plan.index_url, req->with_docid, asked,
                                         COUCHPAGE_ASK_TOGETHER, &answers, stats, &result);

    if (status == OK) {
        cp_plan_take_answers(queries, &answers);
        alone = cp_plan_ask_alone(r->pool, queries, &answers);
        if (alone) {
            status = ask_alone(r, conf, req, queries, alone, asked->nelts, stats, &result);
        }
    }
    if (status != OK) {
        if (req->args.start && result.backend_status == HTTP_BAD_REQUEST) {
            /* the client's doing: logged as a bad request, CouchDB's words
             * kept for the log */
            ap_log_rerror(APLOG_MARK, APLOG_INFO, 0, r, CPLOGNO(0122) "bad request: the "
                          "start token is outside this location's key range (%s)",
                          result.reason);
            send_error(r, HTTP_BAD_REQUEST, "bad_request",
                       "the start token is outside this location's key range");
        }
        else {
            send_backend_error(r, conf, &result);
        }
        return 0;
    }
    return overfull_answer(r, conf, queries);
}

/* A bounded token's row, found among the rows that share its bounds
 * (cp_plan_locate, cp_page_locate), becomes req->start, a token that holds
 * its key: 1, or 0 when the client has been answered with the error. The
 * page then is planned as from any token. */
static int locate_start(request_rec *r, const couchpage_dir_conf *conf, page_request *req,
                        couchpage_backend_stats *stats)
{
    apr_array_header_t *queries = cp_plan_locate(r->pool, &req->plan, &req->start);
    cp_token located;
    const char *reason;

    if (!fetch_answers(r, conf, req, queries, stats)) {
        return 0;
    }
    reason = cp_page_locate(r->pool, queries, &req->start, req->with_docid,
                            conf->view.descending, &located);
    if (reason) {
        /* the data's and the configuration's doing, never the client's */
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r, CPLOGNO(0200)
                      "the page of a bounded token of %s cannot be found: %s (CouchPageView "
                      "%s); raise CouchPageMaxTokenLength, so that tokens keep more of "
                      "such keys", r->uri, reason, conf->view.url);
        send_error(r, HTTP_INTERNAL_SERVER_ERROR, "internal_error",
                   "the page of this link cannot be found: too many rows share the start "
                   "of its key");
        return 0;
    }
    reason = cp_plan_check_start(r->pool, &req->plan, &located);
    if (reason) {
        send_bad_request(r, reason);
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

/* A page is answered with its validator (an ETag of the body, or of the
 * revisions of the documents it copies whole: cp_render_etag) and the
 * location's Cache-Control; a client or cache that holds the same body
 * gets 304 (If-None-Match, compared weakly for GET and HEAD as RFC 9110
 * says; httpd's ap_meets_conditions). A page included into another has
 * neither: the including page's conditions are not its own. */
static int send_page_body(request_rec *r, const couchpage_dir_conf *conf,
                          const char *content_type, const char *body,
                          const apr_array_header_t *revisions)
{
    if (!r->main) {
        const char *etag = cp_render_etag(r->pool, body, revisions);
        int status;

        /* without a digest (libcrypto failed), the page goes without a
         * validator: never a header without a value */
        if (etag) {
            apr_table_setn(r->headers_out, "ETag", etag);
        }
        else {
            ap_log_rerror(APLOG_MARK, APLOG_WARNING, 0, r, CPLOGNO(0182)
                          "no ETag for %s: libcrypto could not digest the page", r->uri);
        }
        if (conf->cache_control) {
            apr_table_setn(r->headers_out, "Cache-Control", conf->cache_control);
        }
        status = ap_meets_conditions(r);
        if (status != OK) {
            return status;
        }
    }
    return send_body(r, HTTP_OK, content_type, body);
}

static int send_page(request_rec *r, const couchpage_dir_conf *conf,
                     const page_request *req, cp_page *page)
{
    cp_links links;
    const apr_array_header_t *revisions;
    const char *body;

    if (conf->token_key) {
        const char *reason = cp_seal_page_tokens(r->pool, conf->token_key,
                                                 token_binding(r, conf), page);

        if (reason) {
            return send_seal_error(r, reason);
        }
    }
    withhold_long_tokens(r, conf, page);
    links.path = links_path(r);
    links.limit = req->args.limit;
    links.format = req->chosen_format ? cp_format_name(req->format) : NULL;
    set_link_header(r, page, &links);
    if (req->format == CP_FORMAT_HTML) {
        cp_html_spec html = conf->html;
        const char *reason = NULL;

        if (conf->item_template) {
            couchpage_template_use(r, conf->item_template, &html);
        }
        body = cp_render_html(r->pool, page, &links, &html, &reason);
        if (!body) {
            return send_config_error(r, reason);
        }
        return send_page_body(r, conf, HTML_TYPE, body, NULL);
    }
    body = cp_render_json(r->pool, page, &links, conf->fields, &revisions);
    return send_page_body(r, conf, JSON_TYPE, body, revisions);
}

/* How many of the page's rows came from the given answers. */
static int rows_on_page(const cp_page *page, const cp_answer **answers, int n)
{
    int i, j, used = 0;

    for (i = 0; i < page->rows->nelts; i++) {
        const cp_row *row = APR_ARRAY_IDX(page->rows, i, const cp_row *);

        for (j = 0; j < n; j++) {
            used += row->answer == answers[j];
        }
    }
    return used;
}

/* The debug log: a line for each backend request the page made, with what
 * it asked (keys only by their length where tokens are sealed), what came
 * back, and how many rows of it are on the page (page NULL: the page
 * failed). Never a credential: they are in headers, which it leaves out. */
static void log_backend_requests(request_rec *r, const couchpage_backend_stats *stats,
                                 const cp_page *page)
{
    int i;

    for (i = 0; stats->log && i < stats->log->nelts; i++) {
        const couchpage_backend_request *q = APR_ARRAY_IDX(stats->log, i, couchpage_backend_request *);
        apr_size_t rows = 0;
        int j;

        for (j = 0; j < q->answered; j++) {
            rows += cp_answer_rows(q->answers[j]);
        }
        ap_log_rerror(APLOG_MARK, APLOG_DEBUG, 0, r, CPLOGNO(0150)
                      "backend request %d of %d: %s %s%s: %s in %.2f ms; %" APR_SIZE_T_FMT
                      " rows read, %s", i + 1, stats->log->nelts, q->method, q->asked,
                      q->body_len ? apr_psprintf(r->pool, " (%d queries, %" APR_SIZE_T_FMT
                                                 " bytes)", q->queries, q->body_len) : "",
                      q->rv != OK ? apr_psprintf(r->pool, "no answer (mod_proxy %d)", q->rv)
                      : apr_psprintf(r->pool, "answered %d, %" APR_OFF_T_FMT " bytes%s",
                                     q->status, q->bytes, q->cut_off ? ", cut off" : ""),
                      (double)q->time / 1000.0, rows,
                      page ? apr_psprintf(r->pool, "%d on the page",
                                          rows_on_page(page, q->answers, q->answered))
                           : "no page");
    }
}

/* Where the page is, for the debug log: as its JSON numbers it. */
static const char *page_position(request_rec *r, const cp_page *page)
{
    int rows = page->rows->nelts;

    if (!page->numbered || page->offset < 0) {
        return apr_psprintf(r->pool, "%d rows, numbered relative to this page", rows);
    }
    if (rows == 0) {
        return apr_psprintf(r->pool, "no rows, after row %" APR_INT64_T_FMT, page->offset);
    }
    return apr_psprintf(r->pool, "rows %" APR_INT64_T_FMT "-%" APR_INT64_T_FMT " of %s",
                        page->offset + 1, page->offset + rows,
                        page->total_rows >= 0
                        ? apr_psprintf(r->pool, "%" APR_INT64_T_FMT, page->total_rows)
                        : "an unknown number");
}

/* The debug log's line for a page answered with status: where it is, the
 * tokens it hands out (how many, and the longest's length: never their
 * text, which holds keys), its ETag and whether it was a 304. */
static void log_page(request_rec *r, const couchpage_dir_conf *conf, cp_page *page,
                     int status)
{
    const char *etag = apr_table_get(r->headers_out, "ETag");
    apr_size_t longest;
    int issued;

    if (!APLOGrdebug(r)) {
        return;
    }
    issued = cp_page_issued_count(page, r->pool, &longest);
    ap_log_rerror(APLOG_MARK, APLOG_DEBUG, 0, r, CPLOGNO(0151)
                  "page of %s: %s; %d tokens issued (%s, the longest %" APR_SIZE_T_FMT
                  " bytes); %s; answered %d%s", r->uri, page_position(r, page), issued,
                  conf->token_key ? "sealed" : "plain", longest,
                  etag ? apr_pstrcat(r->pool, "ETag ", etag, NULL) : "no ETag (included)",
                  status, status == HTTP_NOT_MODIFIED ? " Not Modified" : "");
}

/* The _find locations of this process whose CouchDB warning has been
 * logged: each location's once a child (keyed by its CouchPageView line). */
static struct {
    apr_hash_t *locations;
#if APR_HAS_THREADS
    apr_thread_mutex_t *lock;
#endif
} find_warned;

static void find_warned_init(apr_pool_t *pchild, server_rec *s)
{
    find_warned.locations = apr_hash_make(pchild);
#if APR_HAS_THREADS
    if (apr_thread_mutex_create(&find_warned.lock, APR_THREAD_MUTEX_DEFAULT, pchild)
        != APR_SUCCESS) {
        /* without a lock nothing is remembered: warnings are logged at debug */
        ap_log_error(APLOG_MARK, APLOG_ERR, 0, s, CPLOGNO(0321) "no mutex for the memory "
                     "of _find locations warned of");
        find_warned.locations = NULL;
    }
#endif
}

/* Whether this location's warning is logged for the first time in this
 * process (and remembers it). */
static int find_warning_first(const couchpage_dir_conf *conf)
{
    int first;

    if (!find_warned.locations) {
        return 0;
    }
#if APR_HAS_THREADS
    apr_thread_mutex_lock(find_warned.lock);
#endif
    first = apr_hash_get(find_warned.locations, &conf->view_where,
                         sizeof(conf->view_where)) == NULL;
    if (first) {
        apr_hash_set(find_warned.locations,
                     apr_pmemdup(apr_hash_pool_get(find_warned.locations), &conf->view_where,
                                 sizeof(conf->view_where)),
                     sizeof(conf->view_where), "");
    }
#if APR_HAS_THREADS
    apr_thread_mutex_unlock(find_warned.lock);
#endif
    return first;
}

/* CouchDB's warning on a _find answer (no index matches; too many
 * documents examined): at warn once a location and child, at debug after,
 * naming the index that would serve the query. */
static void log_find_warning(request_rec *r, const couchpage_dir_conf *conf,
                             const cp_find_sort *sort, const char *warning)
{
    const char *fields = "";
    /* decided once: ap_log_rerror's macro reads its level twice */
    int level = find_warning_first(conf) ? APLOG_WARNING : APLOG_DEBUG;
    int i;

    for (i = 0; i < sort->count; i++) {
        fields = apr_pstrcat(r->pool, fields, i ? ", " : "", "\"",
                             sort->fields[i].name, "\"", NULL);
    }
    ap_log_rerror(APLOG_MARK, level, 0, r,
                  CPLOGNO(0322) "CouchDB warns of the _find query of %s: %s (CouchPageView "
                  "%s, %s at %s). Create a JSON index whose fields are the equality "
                  "fields of CouchPageSelector, then %s (POST .../_index), and name it "
                  "with CouchPageIndex", r->uri, loggable(r, warning), conf->view.url,
                  conf->view_section, couchpage_directive_where(r->pool, conf->view_where),
                  sort->count ? fields : "nothing: the ids sort");
}

/* A CouchPageSelector string's value for this request (cp_find_fill): its
 * expression's JSON. NULL when the client has been answered with the
 * error. */
typedef struct {
    request_rec *r;
    const couchpage_dir_conf *conf;
} find_fill_baton;

static const json_t *fill_selector_value(void *data, const char *placeholder,
                                         const char **error)
{
    find_fill_baton *baton = data;
    request_rec *r = baton->r;
    const couchpage_key_bound *value = apr_hash_get(baton->conf->find_values, placeholder,
                                                    APR_HASH_KEY_STRING);
    const char *what = apr_psprintf(r->pool, "CouchPageSelector's value '%s'",
                                    loggable(r, placeholder));
    const json_t *filled;
    const char *json;

    *error = "answered";
    if (!value) {
        send_config_error(r, apr_pstrcat(r->pool, what, " has no expression", NULL));
        return NULL;
    }
    if (!eval_value(r, what, "the selector", value, &json)) {
        return NULL;
    }
    if (!json) {
        send_config_error(r, apr_pstrcat(r->pool, what, " yields nothing", NULL));
        return NULL;
    }
    filled = cp_json_load(r->pool, json, strlen(json), error);
    if (!filled) {
        send_config_error(r, apr_pstrcat(r->pool, what, " could not be read: ",
                                         *error ? *error : "unreadable", NULL));
    }
    return filled;
}

/* A _find location's request: the client's (read_client_request), its
 * token, where the query goes and what it asks: 1, or 0 when the client
 * has been answered with the error. */
static int read_find_request(request_rec *r, const couchpage_dir_conf *conf,
                             page_request *req, cp_find_token *token, const char **url,
                             cp_find_spec *spec)
{
    find_fill_baton baton = { r, conf };
    const char *reason = NULL;
    int i;

    memset(spec, 0, sizeof(*spec));
    spec->sort = &conf->find_sort[conf->view.descending != 0];
    if (!read_client_request(r, conf, req)) {
        return 0;
    }
    if ((reason = cp_find_token_decode(r->pool, req->token_text, spec->sort, token))) {
        send_bad_request(r, apr_pstrcat(r->pool, "the start token ", reason, NULL));
        return 0;
    }
    if ((reason = cp_find_url(r->pool, &conf->view, req->partition, url))) {
        send_bad_request(r, reason);
        return 0;
    }
    spec->selector = conf->find_selector ? conf->find_selector
                   : cp_json_pool_own(r->pool, json_object());
    if (conf->find_values && apr_hash_count(conf->find_values)) {
        spec->selector = cp_find_selector_fill(r->pool, spec->selector, fill_selector_value,
                                               &baton, &reason);
        if (!spec->selector) {
            return 0;
        }
        /* an expression's value of a kind its operator does not take is the
         * configuration's: %{json:...} makes strings */
        if ((reason = cp_find_check_selector(r->pool, spec->selector))) {
            send_config_error(r, apr_pstrcat(r->pool, "CouchPageSelector with this "
                                             "request's values: the selector ", reason, NULL));
            return 0;
        }
    }
    spec->index_ddoc = conf->find_index_ddoc;
    spec->index_name = conf->find_index_name;
    if (conf->fields) {
        json_t *fields = cp_json_pool_own(r->pool, json_array());

        for (i = 0; i < conf->fields->nelts; i++) {
            json_array_append_new(fields,
                                  json_string(APR_ARRAY_IDX(conf->fields, i, const char *)));
        }
        spec->fields = fields;
    }
    return 1;
}

/* The rows of a _find answer, as cp_find_page_assemble takes them. */
static apr_array_header_t *answer_rows(apr_pool_t *pool, const cp_answer *answer)
{
    apr_size_t n = cp_answer_rows(answer), i;
    apr_array_header_t *rows = apr_array_make(pool, (int)n + 1, sizeof(const cp_row *));

    for (i = 0; i < n; i++) {
        APR_ARRAY_PUSH(rows, const cp_row *) = cp_answer_row(answer, i);
    }
    return rows;
}

/* A _find location's page: one POST .../_find, and a second only when the
 * rows beyond the token's row all went meanwhile (cp_find_page_assemble
 * then asks for the first or the Last page). */
static int serve_find_page(request_rec *r, const couchpage_dir_conf *conf,
                           couchpage_backend_stats *stats)
{
    page_request req;
    cp_find_token token;
    cp_find_spec spec;
    cp_find_from from;
    const char *url, *body, *start;
    const cp_answer *answer;
    couchpage_backend_result result;
    cp_page page;
    int status;

    memset(&req, 0, sizeof(req));
    if (!read_find_request(r, conf, &req, &token, &url, &spec)) {
        return OK;
    }
    start = req.args.start;
    for (;;) {
        body = cp_find_body(r->pool, &spec, token.key, token.docid,
                            cp_find_reads_backward(&token),
                            cp_find_limit(req.count, conf->links));
        if (!body) {
            send_bad_request(r, "the start token cannot bound a query");
            log_backend_requests(r, stats, NULL);
            return OK;
        }
        status = couchpage_backend_find(r, &conf->backend, url, body, spec.sort, &answer,
                                        stats, &result);
        if (status != OK) {
            log_backend_requests(r, stats, NULL);
            if (token.key && result.backend_status == HTTP_BAD_REQUEST) {
                /* the values a client's token put into the query */
                ap_log_rerror(APLOG_MARK, APLOG_INFO, 0, r, CPLOGNO(0323) "bad request: "
                              "CouchDB refused the _find query of the start token (%s)",
                              result.reason);
                return send_error(r, HTTP_BAD_REQUEST, "bad_request",
                                  "the start token makes a query CouchDB refuses");
            }
            return send_backend_error(r, conf, &result);
        }
        if (answer->warning) {
            log_find_warning(r, conf, spec.sort, answer->warning);
        }
        from = cp_find_page_assemble(r->pool, &token, answer_rows(r->pool, answer),
                                     req.count, conf->links, start, &page);
        if (from == token.from) {
            break;
        }
        /* the rows beyond the token's row went: the first or the Last page,
         * whose token this page then is */
        memset(&token, 0, sizeof(token));
        token.from = from;
        start = from == CP_FIND_LAST ? CP_TOKEN_LAST : NULL;
        if (start && conf->token_key) {
            const char **tokens[] = { &start };
            const char *reason = cp_seal_tokens(r->pool, conf->token_key,
                                                token_binding(r, conf), tokens, 1);

            if (reason) {
                return send_seal_error(r, reason);
            }
        }
    }
    log_backend_requests(r, stats, &page);
    status = send_page(r, conf, &req, &page);
    log_page(r, conf, &page, status == OK ? r->status : status);
    return status;
}

/* Answers the request with its page, or with the error that stops it;
 * what its backend reads cost is added to stats. */
static int serve_page(request_rec *r, couchpage_backend_stats *stats)
{
    const couchpage_dir_conf *conf;
    const char *fault;
    page_request req;
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
        return send_error(r, HTTP_METHOD_NOT_ALLOWED, "method_not_allowed",
                          "only GET and HEAD are served here");
    }
    if (!conf->view_set) {
        return send_config_error(r, "no CouchPageView is set");
    }
    if (conf->view.reduce && conf->view.include_docs) {
        return send_config_error(r, "CouchPageReduce On and CouchPageIncludeDocs On "
                                 "are merged here; grouped rows have no documents");
    }
    /* what start-up could not place: a .htaccess file's, say */
    fault = couchpage_merged_fault(r->pool, conf);
    if (fault) {
        return send_config_error(r, fault);
    }
    if (conf->view.is_find) {
        return serve_find_page(r, conf, stats);
    }
    /* Each step answers the client itself when it fails. */
    if (!read_page_request(r, conf, &req)) {
        return OK;
    }
    /* Every query the page needs, asked at once; only the rare widening of
     * a query whose answer cannot place the pages behind asks again. */
    if (req.args.start && req.start.digest && !locate_start(r, conf, &req, stats)) {
        log_backend_requests(r, stats, NULL);
        return OK;
    }
    start = req.args.start ? &req.start : NULL;
    room.max_sent = conf->max_token_length;
    room.max_escaped = token_url_room(r, links_path(r));
    room.sealed = conf->token_key != NULL;
    room.raw_ids = conf->view.is_all_docs;
    queries = cp_plan_page(r->pool, &req.plan, start);
    cp_page_answers_init(&answers, &req.plan, queries, start, req.args.start, &room);
    do {
        if (!fetch_answers(r, conf, &req, queries, stats)) {
            log_backend_requests(r, stats, NULL);
            return OK;
        }
    } while (cp_plan_widen(r->pool, &req.plan, start,
                           cp_page_assemble(r->pool, &answers, &page)));
    log_backend_requests(r, stats, &page);
    status = send_page(r, conf, &req, &page);
    log_page(r, conf, &page, status == OK ? r->status : status);
    return status;
}

static int couchpage_handler(request_rec *r)
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

static void register_hooks(apr_pool_t *p)
{
    ap_hook_child_init(find_warned_init, NULL, NULL, APR_HOOK_MIDDLE);
    couchpage_backend_register();
    couchpage_status_register();
    ap_hook_expr_lookup(couchpage_expr_lookup, NULL, NULL, APR_HOOK_MIDDLE);
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
