/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mod_couchpage_request: a page request, in and out. What it asks, read
 * once and checked: the client's arguments (parsed once a request, in the
 * module's request_config slot) and start token (its length capped,
 * unsealed), the format they choose, the request's partition, the
 * operator's request-time values (couchpage_eval_value), where links point
 * and what a sealed token is bound to. How it is answered: the format of
 * the answer (the location's, the client's, htmx's, Accept's), the page
 * with its tokens sealed, its ETag or 304, Cache-Control and Link header,
 * the error responses (in the format a page would have, each logged at the
 * level its cause deserves), and the debug log's lines of a page and of
 * its backend requests; and how a page's planned queries are asked
 * (couchpage_fetch_answers: together, a cut answer's rest alone, none
 * over its limit). One room because each side needs the other (a
 * fault in what is asked is answered; an error's format is what the client
 * asked), and because a view's page (mod_couchpage.c) and a _find
 * location's (mod_couchpage_find.c) are asked and answered alike; what
 * only a view asks (its range, its token decoded) stays in
 * mod_couchpage.c. Glue.
 */
#include "mod_couchpage_request.h"

#include "http_core.h"
#include "http_log.h"
#include "http_protocol.h"
#include "http_request.h"
#include "apr_strings.h"

#include "couchpage_args.h"
#include "couchpage_json.h"
#include "couchpage_seal.h"
#include "mod_couchpage_expr.h"

APLOG_USE_MODULE(couchpage);

#define JSON_TYPE "application/json; charset=utf-8"
#define HTML_TYPE "text/html; charset=utf-8"

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

cp_format couchpage_asked_format(request_rec *r, const couchpage_dir_conf *conf)
{
    return client_args(r, conf)->args.format;
}

/* A request-time value of the operator's (a CouchPageRange bound, a
 * CouchPageSelector string holding %{...}): 1 with compact JSON, or NULL
 * when it yields nothing, in *json; or 0 when the client has been answered
 * with the error. what names it for the log ("CouchPageRange LOW"), of for
 * the client ("the LOW bound of the key range"). The expression is the
 * operator's: a result that is not JSON is the configuration's fault
 * (request values enter as JSON through %{json:...}), and only a request
 * value that has no JSON form is the client's. */
int couchpage_eval_value(request_rec *r, const char *what, const char *of,
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
        couchpage_send_config_error(r, apr_psprintf(r->pool, "%s could not be evaluated: %s",
                                                    what, err));
        return 0;
    }
    if (not_utf8) {
        couchpage_send_bad_request(r, apr_psprintf(r->pool, "a request value for %s is not "
                                                   "valid UTF-8", of));
        return 0;
    }
    if (!*text) {
        *json = NULL;
        return 1;
    }
    *json = cp_json_compact(r->pool, text, &err);
    if (!*json) {
        couchpage_send_config_error(r, apr_psprintf(r->pool, "%s yields '%s', which is not "
                                                    "JSON (%s); put request values in with "
                                                    "%%{json:...}", what,
                                                    couchpage_loggable(r, text), err));
        return 0;
    }
    return 1;
}

/* The path page links point at: the one the client asked for, of this
 * request or under mod_include of the including page, so that a fragment's
 * links lead back to the page. Not r->uri: mod_dir's DirectoryIndex (a fast
 * redirect) and mod_rewrite change it to the file served, and a link to
 * /index.shtml?start=... is not the page the reader is on. parsed_uri.path
 * is the request line's path; httpd decodes it in place, as r->uri. */
const char *couchpage_links_path(request_rec *r)
{
    const request_rec *top = r;

    while (top->main) {
        top = top->main;
    }
    return ap_escape_uri(r->pool, top->parsed_uri.path && *top->parsed_uri.path == '/'
                                  ? top->parsed_uri.path : top->uri);
}

/* What a sealed token is valid for: this location's view, at this path. */
const char *couchpage_token_binding(request_rec *r, const couchpage_dir_conf *conf)
{
    return apr_pstrcat(r->pool, conf->view.url, "\n", r->uri, NULL);
}

/* Reads what every location's request carries: the client's arguments and
 * token (its length capped, unsealed), and the request's partition: 1, or 0
 * when the client has been answered with the error. */
int couchpage_read_client_request(request_rec *r, const couchpage_dir_conf *conf,
                                  couchpage_page_request *req)
{
    const struct couchpage_client_args *client = client_args(r, conf);
    const char *reason;

    req->args = client->args;
    reason = client->fault;
    if (reason) {
        couchpage_send_bad_request(r, reason);
        return 0;
    }
    /* The client chooses only where the operator left the choice open, and
     * never for a page that includes the location. */
    req->format = couchpage_choose_format(r, conf, req->args.format, 1);
    req->chosen_format = conf->format == CP_FORMAT_AUTO && !couchpage_is_included_html(r)
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
            couchpage_send_bad_request(r, apr_psprintf(r->pool, "the start token is longer "
                                                       "than %" APR_SIZE_T_FMT " bytes",
                                                       conf->max_token_length));
            return 0;
        }
        if (conf->token_key) {
            switch (cp_unseal(r->pool, conf->token_key, conf->previous_token_key,
                              couchpage_token_binding(r, conf), req->args.start,
                              &req->token_text, &reason)) {
            case CP_UNSEAL_OPENED:
                break;
            case CP_UNSEAL_REFUSED:
                couchpage_send_bad_request(r, reason);
                return 0;
            case CP_UNSEAL_FAILED:
            default:
                couchpage_send_seal_error(r, reason);
                return 0;
            }
        }
    }
    req->partition = NULL;
    if (conf->partition) {
        req->partition = ap_expr_str_exec(r, conf->partition, &reason);
        if (reason) {
            couchpage_send_config_error(r, apr_pstrcat(r->pool, "CouchPagePartition could "
                                                       "not be evaluated: ", reason, NULL));
            return 0;
        }
    }
    return 1;
}

/* --- how it is answered ------------------------------------------------ */

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
int couchpage_is_included_html(const request_rec *r)
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
cp_format couchpage_choose_format(request_rec *r, const couchpage_dir_conf *conf,
                                  cp_format asked, int vary)
{
    const char *htmx = apr_table_get(r->headers_in, "HX-Request");

    if (conf->format != CP_FORMAT_AUTO) {
        return conf->format;
    }
    if (couchpage_is_included_html(r)) {
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

/* Errors come in the format a page would: JSON, which front-end code
 * reads, with the error and a reason; HTML (a browser's page, an included
 * fragment) with the location's CouchPageText error word alone. No cache
 * keeps one: the next request may well succeed. */
int couchpage_send_error(request_rec *r, int status, const char *error, const char *reason)
{
    const couchpage_dir_conf *conf = ap_get_module_config(r->per_dir_config,
                                                          &couchpage_module);

    apr_table_setn(r->headers_out, "Cache-Control", "no-store");
    if (couchpage_choose_format(r, conf, couchpage_asked_format(r, conf), 0)
        == CP_FORMAT_HTML) {
        return send_body(r, status, HTML_TYPE, cp_render_html_error(r->pool, conf->words));
    }
    return send_body(r, status, JSON_TYPE, cp_render_error(r->pool, error, reason));
}

/* CouchDB 3.4's answer to a login of an account it has locked
 * (couch_httpd_auth.erl), as couchdb_reason words it. */
#define COUCHDB_LOCKOUT "403 forbidden: Account is temporarily locked due to multiple " \
    "authentication failures"

/* The backend's trouble, in full, goes to the error log with the request's
 * path and the location's view; visitors learn only which kind it was. */
int couchpage_send_backend_error(request_rec *r, const couchpage_dir_conf *conf,
                                 const couchpage_backend_result *result)
{
    const char *hint = "";

    if (result->backend_status == HTTP_BAD_REQUEST && conf->range_set) {
        hint = "; does CouchDB collate CouchPageRange's LOW after its HIGH?";
    }
    else if (result->backend_status == HTTP_FORBIDDEN
             && ap_strstr_c(result->reason, COUCHDB_LOCKOUT)) {
        /* The lock is CouchDB's, keyed by the address, the account and its
         * password's salt: nothing here remembers it, and the right password
         * does not end it; a new password (a new salt) does. */
        hint = ": this is CouchDB's account lockout ([chttpd_auth_lockout]): after "
               "5 failed logins (its threshold, by default) of this account from this "
               "server's address, CouchDB refuses every login of it from here, with the "
               "right password too, until about 5 minutes (its max_lifetime, by "
               "default) after the first failure. Correct CouchPageCredentials and "
               "reload httpd; pages come back when the lock ends, or at once if "
               "CouchDB's admin sets the account a new password (in _users) and "
               "CouchPageCredentials has that one";
    }
    if (result->past_deadline) {
        /* the operator's knob is the deadline, not mod_proxy's timeout */
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r, CPLOGNO(0183)
                      "the backend reads for %s were stopped: %s (CouchPageBackendDeadline %"
                      APR_TIME_T_FMT " s; CouchPageView %s, %s at %s)", r->uri, result->reason,
                      apr_time_sec(conf->backend.deadline), conf->view.url, conf->view_section,
                      couchpage_directive_where(r->pool, conf->view_where));
    }
    else {
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r, CPLOGNO(0101)
                      "the backend queries for %s failed with %d: %s%s (CouchPageView %s, "
                      "%s at %s)", r->uri, result->status, result->reason, hint,
                      conf->view.url, conf->view_section,
                      couchpage_directive_where(r->pool, conf->view_where));
    }
    if (result->status == HTTP_GATEWAY_TIME_OUT) {
        return couchpage_send_error(r, result->status, "backend_timeout",
                                    "the backend did not answer in time");
    }
    if (result->status == HTTP_SERVICE_UNAVAILABLE) {
        return couchpage_send_error(r, result->status, "backend_unavailable",
                                    "the backend is unavailable");
    }
    if (result->status == HTTP_BAD_GATEWAY) {
        return couchpage_send_error(r, result->status, "backend_error",
                                    "the backend could not serve this page");
    }
    return couchpage_send_error(r, result->status, "internal_error",
                                "the server could not serve this page");
}

int couchpage_send_bad_request(request_rec *r, const char *reason)
{
    ap_log_rerror(APLOG_MARK, APLOG_INFO, 0, r, CPLOGNO(0102)
                  "bad request: %s", reason);
    return couchpage_send_error(r, HTTP_BAD_REQUEST, "bad_request", reason);
}

int couchpage_send_token_refused(request_rec *r, const char *why)
{
    ap_log_rerror(APLOG_MARK, APLOG_INFO, 0, r, CPLOGNO(0122) "bad request: the start "
                  "token is outside this location's key range (%s)", why);
    return couchpage_send_error(r, HTTP_BAD_REQUEST, "bad_request",
                                "the start token is outside this location's key range");
}

int couchpage_send_config_error(request_rec *r, const char *reason)
{
    ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r, CPLOGNO(0104)
                  "configuration error for %s: %s", r->uri, reason);
    return couchpage_send_error(r, HTTP_INTERNAL_SERVER_ERROR, "internal_error",
                                "this location is misconfigured; see the server's error log");
}

/* Text of an operator's expression result for the error log: request
 * values may be in it. */
const char *couchpage_loggable(request_rec *r, const char *text)
{
    const apr_size_t most = 200;

    return ap_escape_logitem(r->pool, strlen(text) > most
                             ? apr_pstrcat(r->pool, apr_pstrndup(r->pool, text, most),
                                           "...", NULL)
                             : text);
}

/* libcrypto failing is the server's trouble: logged, and a 500 that says
 * nothing of it. */
int couchpage_send_seal_error(request_rec *r, const char *reason)
{
    ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r, CPLOGNO(0140)
                  "the tokens of %s could not be sealed or opened: %s", r->uri, reason);
    return couchpage_send_error(r, HTTP_INTERNAL_SERVER_ERROR, "internal_error",
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

int couchpage_send_page(request_rec *r, const couchpage_dir_conf *conf,
                        const couchpage_page_request *req, cp_page *page)
{
    cp_links links;
    const apr_array_header_t *revisions;
    const char *body;

    if (conf->token_key) {
        const char *reason = cp_page_seal_tokens(r->pool, conf->token_key,
                                                 couchpage_token_binding(r, conf), page);

        if (reason) {
            return couchpage_send_seal_error(r, reason);
        }
    }
    withhold_long_tokens(r, conf, page);
    links.path = couchpage_links_path(r);
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
            return couchpage_send_config_error(r, reason);
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
void couchpage_log_backend_requests(request_rec *r, const couchpage_backend_stats *stats,
                                    const cp_page *page)
{
    int i;

    for (i = 0; stats->log && i < stats->log->nelts; i++) {
        const couchpage_backend_request *q = APR_ARRAY_IDX(stats->log, i,
                                                           couchpage_backend_request *);
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
void couchpage_log_page(request_rec *r, const couchpage_dir_conf *conf, cp_page *page,
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

/* --- how its queries are asked --- */

int couchpage_refuse_overfull(request_rec *r, const couchpage_dir_conf *conf,
                              const char *reason)
{
    ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r, CPLOGNO(0181)
                  "the backend answered a query for %s with %s: refused (CouchPageView %s, "
                  "%s at %s)", r->uri, reason, conf->view.url, conf->view_section,
                  couchpage_directive_where(r->pool, conf->view_where));
    return couchpage_send_error(r, HTTP_BAD_GATEWAY, "backend_error",
                                "the backend could not serve this page");
}

/* Asks CouchDB the queries a multi-query answer cut off after k of n results
 * left waiting (cp_plan_ask_alone), each alone, and gives them their
 * answers: OK, or the failure in result. Which it was is known only now:
 * CouchDB refusing query k + 1 (a reversed range), or a connection lost. */
static int ask_alone(request_rec *r, const couchpage_dir_conf *conf,
                     const couchpage_page_request *req, apr_array_header_t *queries,
                     const apr_array_header_t *alone, int n,
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

int couchpage_fetch_answers(request_rec *r, const couchpage_dir_conf *conf,
                            const couchpage_page_request *req, apr_array_header_t *queries,
                            couchpage_backend_stats *stats)
{
    cp_plan_answers answers = { { NULL }, 0 };
    couchpage_backend_result result;
    const apr_array_header_t *asked = cp_plan_waiting(r->pool, queries), *alone;
    const char *reason;
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
            couchpage_send_token_refused(r, result.reason);
        }
        else {
            couchpage_send_backend_error(r, conf, &result);
        }
        return 0;
    }
    if ((reason = cp_plan_overfull(r->pool, queries))) {
        couchpage_refuse_overfull(r, conf, reason);
        return 0;
    }
    return 1;
}
