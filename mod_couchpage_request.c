/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mod_couchpage_request: what a page request asks, read once and checked:
 * the client's arguments (parsed once a request, in the module's
 * request_config slot) and start token (its length capped, unsealed), the
 * format they choose, the request's partition, the operator's request-time
 * values (couchpage_eval_value), where links point and what a sealed token
 * is bound to. A room of its own because a view's page (mod_couchpage.c)
 * and a _find location's (mod_couchpage_find.c) both read a request so;
 * what only a view asks (its range, its token decoded) stays in
 * mod_couchpage.c. A fault found here is answered through
 * mod_couchpage_answer.c. Glue.
 */
#include "mod_couchpage_request.h"

#include "http_core.h"
#include "http_log.h"
#include "apr_strings.h"

#include "couchpage_args.h"
#include "couchpage_json.h"
#include "couchpage_seal.h"
#include "mod_couchpage_answer.h"
#include "mod_couchpage_expr.h"

APLOG_USE_MODULE(couchpage);

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

/* The path page links point at: this request's, or under mod_include the
 * including page's, so that a fragment's links lead back to the page. */
const char *couchpage_links_path(request_rec *r)
{
    const request_rec *top = r;

    while (top->main) {
        top = top->main;
    }
    /* r->uri is decoded (httpd decodes parsed_uri.path in place too) */
    return ap_escape_uri(r->pool, top->uri);
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
