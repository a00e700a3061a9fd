/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mod_couchpage_request: a page request in, its response out. In: the
 * client's arguments (parsed once a request, in the module's
 * request_config slot), the format they choose, the request's partition,
 * the operator's request-time values (CouchPageRange's bounds, every
 * CouchPageSelector placeholder), evaluated into the source cp_serve
 * takes. Out: the page (its tokens sealed, its ETag or 304,
 * Cache-Control and Link header, its body in its format) or the fault
 * cp_serve (or this reading) found, from one function that logs it at its
 * level with its code and answers it in the format a page would have; and
 * the debug log's lines of a page and of its backend requests. Glue.
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
#include "couchpage_serve.h"
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

static cp_format asked_format(request_rec *r, const couchpage_dir_conf *conf)
{
    return client_args(r, conf)->args.format;
}

/* A request-time value of the operator's (a CouchPageRange bound, a
 * CouchPageSelector string holding %{...}): compact JSON, or NULL when it
 * yields nothing, in *json; or the fault. what names it for the log
 * ("CouchPageRange LOW"), of for the client ("the LOW bound of the key
 * range"). The expression is the operator's: a result that is not JSON is
 * the configuration's fault (request values enter as JSON through
 * %{json:...}), and only a request value that has no JSON form is the
 * client's. */
static const cp_fault *eval_value(request_rec *r, const char *what, const char *of,
                                  const couchpage_key_bound *bound, const char **json)
{
    const char *err = NULL, *text;
    int not_utf8;

    *json = bound->json;
    if (!bound->expr) {
        return NULL;
    }
    text = couchpage_expr_eval(r, bound->expr, &not_utf8, &err);
    if (err) {
        return cp_fault_config(r->pool, r->uri, apr_psprintf(r->pool, "%s could not be "
                                                             "evaluated: %s", what, err));
    }
    if (not_utf8) {
        return cp_fault_bad_request(r->pool, apr_psprintf(r->pool, "a request value for %s "
                                                          "is not valid UTF-8", of));
    }
    if (!*text) {
        *json = NULL;
        return NULL;
    }
    *json = cp_json_compact(r->pool, text, &err);
    if (!*json) {
        return cp_fault_config(r->pool, r->uri,
                               apr_psprintf(r->pool, "%s yields '%s', which is not JSON (%s); "
                                            "put request values in with %%{json:...}", what,
                                            cp_fault_loggable(r->pool, text), err));
    }
    return NULL;
}

/* The path page links point at: the one the client asked for, of this
 * request or under mod_include of the including page, so that a fragment's
 * links lead back to the page. Not r->uri: mod_dir's DirectoryIndex (a fast
 * redirect) and mod_rewrite change it to the file served, and a link to
 * /index.shtml?start=... is not the page the reader is on. parsed_uri.path
 * is the request line's path; httpd decodes it in place, as r->uri. */
static const char *links_path(request_rec *r)
{
    const request_rec *top = r;

    while (top->main) {
        top = top->main;
    }
    return ap_escape_uri(r->pool, top->parsed_uri.path && *top->parsed_uri.path == '/'
                                  ? top->parsed_uri.path : top->uri);
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
static cp_format choose_format(request_rec *r, const couchpage_dir_conf *conf, cp_format asked,
                               int vary)
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

/* A CouchPageSelector string's value for this request (cp_mango_fill): its
 * expression's JSON; NULL with the fault in the baton. */
typedef struct {
    request_rec *r;
    const couchpage_dir_conf *conf;
    const cp_fault *fault;
} selector_fill;

static const json_t *fill_selector_value(void *data, const char *placeholder,
                                         const char **error)
{
    selector_fill *fill = data;
    request_rec *r = fill->r;
    const couchpage_key_bound *value = apr_hash_get(fill->conf->find_values, placeholder,
                                                    APR_HASH_KEY_STRING);
    const char *what = apr_psprintf(r->pool, "CouchPageSelector's value '%s'",
                                    cp_fault_loggable(r->pool, placeholder));
    const json_t *filled;
    const char *json;

    if (!value) {
        fill->fault = cp_fault_config(r->pool, r->uri, apr_pstrcat(r->pool, what, " has no "
                                                                   "expression", NULL));
        return NULL;
    }
    if ((fill->fault = eval_value(r, what, "the selector", value, &json))) {
        return NULL;
    }
    if (!json) {
        fill->fault = cp_fault_config(r->pool, r->uri, apr_pstrcat(r->pool, what, " yields "
                                                                   "nothing", NULL));
        return NULL;
    }
    filled = cp_json_load(r->pool, json, strlen(json), error);
    if (!filled) {
        fill->fault = cp_fault_config(r->pool, r->uri,
                                      apr_pstrcat(r->pool, what, " could not be read: ",
                                                  *error ? *error : "unreadable", NULL));
    }
    return filled;
}

/* A _find location's query for this request: its selector with this
 * request's values (cp_mango_selector_fill), its sort, index, fields and
 * flags; NULL, or the fault. */
static const cp_fault *read_find_spec(request_rec *r, const couchpage_dir_conf *conf,
                                      cp_find_spec *spec)
{
    selector_fill fill = { r, conf, NULL };
    const char *reason = NULL;
    int i;

    memset(spec, 0, sizeof(*spec));
    spec->sort = &conf->find_sort[conf->view.descending != 0];
    spec->selector = conf->find_selector ? conf->find_selector
                   : cp_json_pool_own(r->pool, json_object());
    if (conf->find_values && apr_hash_count(conf->find_values)) {
        spec->selector = cp_mango_selector_fill(r->pool, spec->selector, fill_selector_value,
                                               &fill, &reason);
        if (!spec->selector) {
            return fill.fault ? fill.fault : cp_fault_config(r->pool, r->uri, reason);
        }
        /* an expression's value of a kind its operator does not take is
         * the configuration's: %{json:...} makes strings */
        if ((reason = cp_mango_check_selector(r->pool, spec->selector))) {
            return cp_fault_config(r->pool, r->uri,
                                   apr_pstrcat(r->pool, "CouchPageSelector with this "
                                               "request's values: the selector ", reason,
                                               NULL));
        }
    }
    spec->index_ddoc = conf->find_index_ddoc;
    spec->index_name = conf->find_index_name;
    spec->index_fallback = 0;
    /* a word _find does not take (update lazy) never gets here:
     * couchpage_merged_fault refused the configuration */
    (void)cp_mango_flag_named(conf->view.update, &spec->update);
    (void)cp_mango_flag_named(conf->view.stable, &spec->stable);
    if (conf->fields) {
        json_t *fields = cp_json_pool_own(r->pool, json_array());

        for (i = 0; i < conf->fields->nelts; i++) {
            json_array_append_new(fields,
                                  json_string(APR_ARRAY_IDX(conf->fields, i, const char *)));
        }
        spec->fields = fields;
    }
    return NULL;
}

/* A range bound for this request (eval_value). */
static const cp_fault *eval_bound(request_rec *r, const char *which,
                                  const couchpage_key_bound *bound, const char **json)
{
    /* a constant bound, or none (most locations): no names built per page */
    if (!bound->expr) {
        *json = bound->json;
        return NULL;
    }
    return eval_value(r, apr_pstrcat(r->pool, "CouchPageRange ", which, NULL),
                      apr_psprintf(r->pool, "the %s bound of the key range", which), bound,
                      json);
}

const cp_fault *couchpage_read_request(request_rec *r, const couchpage_dir_conf *conf,
                                       couchpage_page_request *req, cp_source *source,
                                       cp_find_spec *spec)
{
    const struct couchpage_client_args *client = client_args(r, conf);
    const cp_fault *fault;
    const char *reason = NULL;

    req->args = client->args;
    if (client->fault) {
        return cp_fault_bad_request(r->pool, client->fault);
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
    /* The one cap on a token's length: on what the client sent, sealed or
     * not, before it is unsealed (decrypted whole) or decoded. */
    if (req->args.start && strlen(req->args.start) > conf->max_token_length) {
        return cp_fault_bad_request(r->pool, apr_psprintf(r->pool, "the start token is longer "
                                                          "than %" APR_SIZE_T_FMT " bytes",
                                                          conf->max_token_length));
    }
    memset(source, 0, sizeof(*source));
    source->uri = r->uri;
    source->location = conf->view_where;
    source->view = &conf->view;
    source->range_set = conf->range_set;
    source->partition_set = conf->partition != NULL;
    source->links = couchpage_links_shown(conf);
    source->token_key = conf->token_key;
    source->previous_token_key = conf->previous_token_key;
    source->max_token_length = conf->max_token_length;
    req->links_path = links_path(r);
    source->token_url_room = token_url_room(r, req->links_path);
    source->deadline = conf->backend.deadline;
    source->count = conf->count;
    source->jump_reach = conf->jump_reach;
    if (conf->partition) {
        source->partition = ap_expr_str_exec(r, conf->partition, &reason);
        if (reason) {
            return cp_fault_config(r->pool, r->uri, apr_pstrcat(r->pool, "CouchPagePartition "
                                                                "could not be evaluated: ",
                                                                reason, NULL));
        }
    }
    if (conf->view.is_find) {
        source->find = spec;
        return read_find_spec(r, conf, spec);
    }
    if ((fault = eval_bound(r, "LOW", &conf->low, &source->low))) {
        return fault;
    }
    return eval_bound(r, "HIGH", &conf->high, &source->high);
}

/* --- how it is answered ------------------------------------------------ */

/* Errors come in the format a page would: JSON, which front-end code
 * reads, with the error and a reason; HTML (a browser's page, an included
 * fragment) with the location's CouchPageText error word alone. No cache
 * keeps one: the next request may well succeed. */
static int send_error(request_rec *r, int status, const char *error, const char *reason)
{
    const couchpage_dir_conf *conf = ap_get_module_config(r->per_dir_config,
                                                          &couchpage_module);

    apr_table_setn(r->headers_out, "Cache-Control", "no-store");
    if (choose_format(r, conf, asked_format(r, conf), 0)
        == CP_FORMAT_HTML) {
        return send_body(r, status, HTML_TYPE, cp_render_html_error(r->pool, conf->words));
    }
    return send_body(r, status, JSON_TYPE, cp_render_error(r->pool, error, reason));
}

/* The fault's line, at its level with its code, and its answer. */
static int answer_fault(request_rec *r, const cp_fault *fault)
{
    ap_log_rerror(APLOG_MARK, fault->log_level, 0, r, "%s: %s", fault->log_code,
                  fault->log_text);
    return send_error(r, fault->status, fault->error, fault->reason);
}

/* A key too long for a token makes a bounded token (cp_token_for_row),
 * which fits unless CouchPageMaxTokenLength is too small for even that
 * (some 100 bytes, more sealed): the page then leaves such links out (a
 * link the module would refuse), and says so once. Logged at info, once a
 * page: the operator raises CouchPageMaxTokenLength. */
static void withhold_long_tokens(request_rec *r, const couchpage_dir_conf *conf,
                                 const cp_view *view, cp_page *page)
{
    apr_size_t longest = cp_page_withhold_long_tokens(page, conf->max_token_length);

    if (longest) {
        ap_log_rerror(APLOG_MARK, APLOG_INFO, 0, r, CPLOGNO(0180)
                      "a link of %s is left out: its token is %" APR_SIZE_T_FMT " bytes, "
                      "more than CouchPageMaxTokenLength %" APR_SIZE_T_FMT " even bounded "
                      "(CouchPageView %s); raise it, or the pages past it cannot be "
                      "reached", r->uri, longest, conf->max_token_length, view->url);
    }
}

/* RFC 8288 Link header: first, prev, next, and last when it is known. */
static void set_link_header(request_rec *r, const cp_page *page, const cp_links *links)
{
    const char *prev = page->prev ? cp_prev_url(r->pool, links, page) : NULL;
    const char *next = page->next ? cp_link_url(r->pool, links, page->next) : NULL;
    const char *last = page->has_last ? cp_link_url(r->pool, links, page->last) : NULL;

    apr_table_setn(r->headers_out, "Link", apr_pstrcat(r->pool,
                   "<", cp_link_url(r->pool, links, NULL), ">; rel=\"first\"",
                   prev ? ", <" : "", prev ? prev : "", prev ? ">; rel=\"prev\"" : "",
                   next ? ", <" : "", next ? next : "", next ? ">; rel=\"next\"" : "",
                   last ? ", <" : "", last ? last : "", last ? ">; rel=\"last\"" : "",
                   NULL));
}

/* A 304, with the ETag and Cache-Control RFC 9110 keeps on it. Not
 * returned from the handler: httpd would answer it as an error response,
 * without those headers, and past the filters of a cache in front
 * (mod_cache), which then could not refresh its copy. So it goes down the
 * filters as httpd's own default handler sends a body: the status, then
 * EOS. */
static int send_not_modified(request_rec *r, const couchpage_dir_conf *conf, const char *etag)
{
    apr_bucket_brigade *bb = apr_brigade_create(r->pool, r->connection->bucket_alloc);

    apr_table_setn(r->headers_out, "ETag", etag);
    if (conf->cache_control) {
        apr_table_setn(r->headers_out, "Cache-Control", conf->cache_control);
    }
    r->status = HTTP_NOT_MODIFIED;
    APR_BRIGADE_INSERT_TAIL(bb, apr_bucket_eos_create(r->connection->bucket_alloc));
    return ap_pass_brigade(r->output_filters, bb) == APR_SUCCESS ? OK : AP_FILTER_ERROR;
}

/* A page is answered with its validator (an ETag of the body, or of the
 * revisions of the documents it copies whole: cp_render_etag; sealed with
 * a sequence when one was read: cp_fresh_etag) and the
 * location's Cache-Control; a client or cache that holds the same content
 * gets 304 (If-None-Match by its content digest, compared weakly for GET
 * and HEAD as RFC 9110 says: cp_fresh_matches; the other conditions as
 * httpd's ap_meets_conditions weighs them). A page included into another
 * has neither: the including page's conditions are not its own. */
static int send_page_body(request_rec *r, const couchpage_dir_conf *conf,
                          const char *content_type, const char *body,
                          const apr_array_header_t *revisions, const cp_fresh *fresh)
{
    if (!r->main) {
        const char *etag = cp_fresh_etag(r->pool, fresh, cp_render_etag(r->pool, body,
                                                                         revisions));
        int status;

        /* without a digest (libcrypto failed), the page goes without a
         * validator: never a header without a value */
        if (!etag) {
            ap_log_rerror(APLOG_MARK, APLOG_WARNING, 0, r, CPLOGNO(0182)
                          "no ETag for %s: libcrypto could not digest the page", r->uri);
        }
        else if (cp_fresh_matches(apr_table_get(r->headers_in, "If-None-Match"), etag)) {
            return send_not_modified(r, conf, etag);
        }
        else {
            apr_table_setn(r->headers_out, "ETag", etag);
        }
        if (conf->cache_control) {
            apr_table_setn(r->headers_out, "Cache-Control", conf->cache_control);
        }
        status = ap_meets_conditions(r);
        if (status == HTTP_NOT_MODIFIED) {
            return send_not_modified(r, conf, etag);
        }
        if (status != OK) {
            return status;
        }
    }
    return send_body(r, HTTP_OK, content_type, body);
}

/* The page: its tokens sealed, its Link header, its body in req's format
 * with its ETag (or 304) and Cache-Control. */
static int answer_page(request_rec *r, const couchpage_dir_conf *conf,
                       const couchpage_page_request *req, cp_served *served,
                       const cp_fresh *fresh)
{
    cp_page *page = &served->page;
    cp_link_made made[CP_LINKS_MADE] = { { NULL, NULL } };
    cp_links links;
    const apr_array_header_t *revisions;
    const char *body;

    if (conf->token_key) {
        const char *reason = cp_page_seal_tokens(r->pool, conf->token_key, served->binding,
                                                 page);

        if (reason) {
            return answer_fault(r, cp_fault_seal(r->pool, r->uri, reason));
        }
    }
    withhold_long_tokens(r, conf, served->view, page);
    if (served->preference_applied) {
        apr_table_setn(r->headers_out, "Preference-Applied", served->preference_applied);
    }
    if (served->prefer_varies) {
        apr_table_mergen(r->headers_out, "Vary", "Prefer");
    }
    links.path = req->links_path;
    links.limit = req->args.limit;
    links.format = req->chosen_format ? cp_format_name(req->format) : NULL;
    links.made = made;
    set_link_header(r, page, &links);
    if (req->format == CP_FORMAT_HTML) {
        cp_html_spec html = conf->html;
        const char *reason = NULL;

        if (conf->item_template) {
            couchpage_template_use(r, conf->item_template, &html);
        }
        body = cp_render_html(r->pool, page, &links, &html, &reason);
        if (!body) {
            return answer_fault(r, cp_fault_config(r->pool, r->uri, reason));
        }
        return send_page_body(r, conf, HTML_TYPE, body, NULL, fresh);
    }
    apr_table_setn(r->headers_out, "Content-Range", cp_count_content_range(r->pool, page));
    body = cp_render_json(r->pool, page, &links, conf->fields, &revisions);
    return send_page_body(r, conf, JSON_TYPE, body, revisions, fresh);
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
static void log_page(request_rec *r, const couchpage_dir_conf *conf, cp_page *page, int status)
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

int couchpage_send_fault(request_rec *r, const couchpage_backend_stats *stats,
                         const cp_fault *fault)
{
    log_backend_requests(r, stats, NULL);
    return answer_fault(r, fault);
}

void couchpage_fresh_request(request_rec *r, const couchpage_dir_conf *conf,
                             const couchpage_page_request *req, const unsigned char *key,
                             cp_fresh *fresh)
{
    const char *words = "";
    const char *item = conf->item_where ? conf->item_where->args : NULL;
    int i;

    memset(fresh, 0, sizeof(*fresh));
    if (r->main || !key || (req->format == CP_FORMAT_HTML && conf->item_template)) {
        return;
    }
    fresh->key = key;
    fresh->if_none_match = apr_table_get(r->headers_in, "If-None-Match");
    if (req->format == CP_FORMAT_HTML) {
        for (i = 0; i < CP_WORD_COUNT; i++) {
            words = apr_psprintf(r->pool, "%s%" APR_SIZE_T_FMT ":%s", words,
                                 conf->words[i] ? strlen(conf->words[i]) : 0,
                                 conf->words[i] ? conf->words[i] : "");
        }
    }
    /* "HOST SERVER:PORT SECTION FILE:LINE FORMAT CHOSEN PATH LEN:ITEM WORDS" */
    fresh->context = apr_pstrcat(r->pool, r->hostname ? r->hostname : "", " ",
                                 r->server->server_hostname ? r->server->server_hostname : "",
                                 ":", apr_itoa(r->pool, r->server->port), " ",
                                 conf->view_section ? conf->view_section : "", " ",
                                 conf->view_where ? conf->view_where->filename : "", ":",
                                 apr_itoa(r->pool, conf->view_where
                                                   ? conf->view_where->line_num : 0), " ",
                                 cp_format_name(req->format), " ",
                                 apr_itoa(r->pool, req->chosen_format), " ", req->links_path,
                                 " ", apr_off_t_toa(r->pool, item ? (apr_off_t)strlen(item) : 0),
                                 ":", item ? item : "", " ", words, NULL);
}

int couchpage_send_page(request_rec *r, const couchpage_dir_conf *conf,
                        const couchpage_page_request *req, cp_served *served,
                        const cp_fresh *fresh, const couchpage_backend_stats *stats)
{
    int status;

    if (fresh->not_modified) {
        log_backend_requests(r, stats, NULL);
        status = send_not_modified(r, conf, fresh->etag);
        if (APLOGrdebug(r)) {
            ap_log_rerror(APLOG_MARK, APLOG_DEBUG, 0, r, CPLOGNO(0152)
                          "page of %s: answered 304 Not Modified from its "
                          "sequence, ETag %s", r->uri, fresh->etag);
        }
        return status;
    }
    log_backend_requests(r, stats, &served->page);
    status = answer_page(r, conf, req, served, fresh);
    log_page(r, conf, &served->page, status == OK ? r->status : status);
    return status;
}
