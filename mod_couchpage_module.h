/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mod_couchpage_module: the module's symbol, its log tags and its slot in a
 * request's request_config, all that the glue files that need no directory
 * config share (the backend fetch, the status counters, the expression
 * functions). Nothing else belongs here.
 */
#ifndef MOD_COUCHPAGE_MODULE_H
#define MOD_COUCHPAGE_MODULE_H

#include "httpd.h"
#include "http_config.h"

extern module AP_MODULE_DECLARE_DATA couchpage_module;

/* The module's own log tags: httpd's AH numbers belong to httpd. */
#define CPLOGNO(n) "CP" #n ": "

/* The module's slot in a request's request_config: one type, a member for
 * each use, so that no reader takes one use's pointer for another's. */
struct couchpage_capture;      /* mod_couchpage_backend.c */
struct couchpage_template_row; /* mod_couchpage_expr.c */
struct couchpage_client_args;  /* mod_couchpage_request.c */
typedef struct {
    struct couchpage_capture *capture; /* a backend subrequest: what collects its
                                          answer */
    struct couchpage_client_args *client_args; /* a page's request: the client's
                                                  arguments, parsed once */
    struct couchpage_template_row *template_row; /* a page's request: the row its
                                                    item template renders */
    int looking_up_backend; /* a page's request: its backend subrequest is being
                               made (see look_up_as_page) */
} couchpage_request_config;

/* r's slot; NULL when it has none yet, unless make, which makes it. */
static APR_INLINE couchpage_request_config *couchpage_request_config_of(request_rec *r,
                                                                        int make)
{
    couchpage_request_config *slot = ap_get_module_config(r->request_config,
                                                          &couchpage_module);

    if (!slot && make) {
        slot = apr_pcalloc(r->pool, sizeof(*slot));
        ap_set_module_config(r->request_config, &couchpage_module, slot);
    }
    return slot;
}

#endif
