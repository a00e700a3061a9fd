/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mod_couchpage: linked-list pagination of CouchDB views, and of Mango
 * _find queries by keyset.
 *
 * This file is glue: the hooks, and the handler in a straight line: the
 * request read (mod_couchpage_request.c), the page served by the core's
 * cp_serve (couchpage_serve.c) through the transport of
 * mod_couchpage_backend.c (subrequests that mod_proxy serves), and the
 * page or the fault answered (mod_couchpage_request.c). The directives
 * and their merge are in mod_couchpage_config.c, what pages cost (the
 * access log's notes, mod_status's section) in mod_couchpage_status.c, the
 * expression functions and the item template in mod_couchpage_expr.c, the
 * checks of the merged config in mod_couchpage_check.c. So this file reads
 * no JSON, makes no subrequest and writes no response itself.
 */
#include "mod_couchpage_config.h"

#include "http_core.h"
#include "http_log.h"
#include "http_protocol.h"
#include "http_request.h"
#include "apr_strings.h"

#include "couchpage_fresh.h"
#include "couchpage_serve.h"
#include "mod_couchpage_request.h"
#include "mod_couchpage_backend.h"
#include "mod_couchpage_check.h"
#include "mod_couchpage_child.h"
#include "mod_couchpage_expr.h"
#include "mod_couchpage_named.h"
#include "mod_couchpage_status.h"
#include "mod_couchpage_version.h"

#define HANDLER_NAME "couchpage"

/* The key that seals a page's ETag to a sequence (couchpage_fresh.h):
 * the same from every server that reads the same configuration, so that
 * they give a page the same tag, and another whenever the configuration
 * changes: a digest of the module's version, every directive read (name
 * and arguments, in order, sections nested: the tree mod_info shows) and
 * the token secrets (whose file: content the tree does not hold). Made in
 * the parent after each reading of the configuration, so that every child
 * has it; NULL when libcrypto fails (pages then go without a seal). What a
 * .htaccess file sets is not in the tree: the seal binds each value it may
 * set (couchpage_fresh_request). */
static unsigned char fresh_key_bytes[CP_FRESH_KEY_LEN];
static const unsigned char *fresh_key;

static void directives_text(apr_array_header_t *out, const ap_directive_t *d)
{
    for (; d; d = d->next) {
        APR_ARRAY_PUSH(out, const char *) =
            apr_psprintf(out->pool, "%" APR_SIZE_T_FMT ":%s%" APR_SIZE_T_FMT ":%s%s",
                         strlen(d->directive), d->directive, d->args ? strlen(d->args) : 0,
                         d->args ? d->args : "", d->first_child ? "{" : ";");
        if (d->first_child) {
            directives_text(out, d->first_child);
            APR_ARRAY_PUSH(out, const char *) = "}";
        }
    }
}

static int make_fresh_key(apr_pool_t *pconf, apr_pool_t *plog, apr_pool_t *ptemp,
                          server_rec *s)
{
    apr_array_header_t *text = apr_array_make(ptemp, 256, sizeof(const char *));
    const char *secrets = couchpage_token_secrets();

    APR_ARRAY_PUSH(text, const char *) = "mod_couchpage " COUCHPAGE_VERSION "\n";
    APR_ARRAY_PUSH(text, const char *) = secrets ? apr_psprintf(ptemp, "%" APR_SIZE_T_FMT
                                                                ":%s", strlen(secrets),
                                                                secrets) : "-";
    directives_text(text, ap_conftree);
    fresh_key = cp_fresh_derive_key(apr_array_pstrcat(ptemp, text, 0), fresh_key_bytes)
                ? fresh_key_bytes : NULL;
    if (!fresh_key) {
        ap_log_error(APLOG_MARK, APLOG_WARNING, 0, s, CPLOGNO(0381) "no key for the ETags' "
                     "seals (libcrypto failed): pages are revalidated by their content "
                     "only");
    }
    return OK;
}

/* What the location cannot serve whatever the request asks: a method
 * other than GET (and HEAD), or a merged configuration at fault (what
 * start-up could not place: a .htaccess file's, say). */
static const cp_fault *location_fault(request_rec *r, const couchpage_dir_conf *conf)
{
    const char *fault;

    r->allowed |= (AP_METHOD_BIT << M_GET);
    if (r->method_number != M_GET) {
        apr_table_setn(r->headers_out, "Allow", "GET, HEAD");
        return cp_fault_make(r->pool, CP_FAULT_CLIENT, HTTP_METHOD_NOT_ALLOWED,
                             "method_not_allowed", "only GET and HEAD are served here",
                             APLOG_INFO, "CP0103",
                             apr_psprintf(r->pool, "method %s refused", r->method));
    }
    fault = couchpage_merged_fault(r->pool, conf);
    return fault ? cp_fault_config(r->pool, r->uri, fault) : NULL;
}

/* cp_serve's log lines, with their codes, in the request's error log. */
static void log_line(void *baton, int level, const char *code, const char *text)
{
    ap_log_rerror(APLOG_MARK, level, 0, ((couchpage_transport_baton *)baton)->r, "%s: %s",
                  code, text);
}

/* Where the location's CouchPageView or CouchPageIndex is set, for log lines. */
static const char *directive_where(void *baton, cp_where which)
{
    couchpage_transport_baton *t = baton;

    return apr_pstrcat(t->r->pool, t->section, " at ",
                       couchpage_directive_where(t->r->pool, which == CP_WHERE_INDEX
                                                             ? t->index_where
                                                             : t->view_where), NULL);
}

/* Answers the request with its page, or with the fault that stops it;
 * what its backend reads cost is added to stats. */
static int serve_page(request_rec *r, couchpage_backend_stats *stats)
{
    const couchpage_dir_conf *conf = ap_get_module_config(r->per_dir_config,
                                                          &couchpage_module);
    couchpage_transport_baton baton = { r, &conf->backend, stats, conf->view_section,
                                        conf->view_where, conf->find_index_where };
    couchpage_page_request req;
    const cp_fault *fault;
    cp_transport transport;
    cp_find_spec spec;
    cp_request asked;
    cp_source source;
    cp_served served;
    cp_fresh fresh;

    memset(&fresh, 0, sizeof(fresh));
    fault = location_fault(r, conf);
    if (!fault) {
        fault = couchpage_read_request(r, conf, &req, &source, &spec);
    }
    if (!fault) {
        couchpage_backend_transport(&transport, &baton);
        couchpage_child_memory(&transport);
        transport.log = log_line;
        transport.where = directive_where;
        transport.debug = APLOGrdebug(r);
        asked.args = &req.args;
        asked.count = req.count;
        asked.prefer = apr_table_get(r->headers_in, "Prefer");
        couchpage_fresh_request(r, conf, &req, fresh_key, &fresh);
        fault = cp_fresh_serve(r->pool, &source, &asked, &transport, &fresh, &served);
    }
    return fault ? couchpage_send_fault(r, stats, fault)
                 : couchpage_send_page(r, conf, &req, &served, &fresh, stats);
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
    couchpage_backend_register();
    couchpage_child_register();
    couchpage_status_register();
    ap_hook_post_config(announce_version, NULL, NULL, APR_HOOK_MIDDLE);
    ap_hook_post_config(make_fresh_key, NULL, NULL, APR_HOOK_MIDDLE);
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

