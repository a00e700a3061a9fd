/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mod_couchpage_expr: the module's functions in httpd's expressions
 * (ap_expr): %{json:TEXT} for CouchPageRange's bounds, %{couchpage_escape:TEXT}
 * and the item template's %{couchpage_html:FIELD} and its kin, with the
 * fields a template reads; the expressions directives take, parsed once
 * when httpd reads them (their faults as apachectl -t shows them); and the
 * renderer that evaluates CouchPageItemTemplate for each row.
 *
 * Glue: it knows request_rec and ap_expr, but not the directory config,
 * and answers no client itself.
 */
#ifndef MOD_COUCHPAGE_EXPR_H
#define MOD_COUCHPAGE_EXPR_H

#include "httpd.h"
#include "http_config.h"
#include "ap_expr.h"

#include "couchpage_render.h"

/* The expr_lookup hook: the functions above, each field path of a template
 * function compiled once, when httpd reads the expression (an unknown field
 * fails the configuration). */
int couchpage_expr_lookup(ap_expr_lookup_parms *parms);

/* A string expression of cmd's directive, parsed once, now. NULL, or the
 * message httpd -t prints: the directive (and which argument, unless which
 * is NULL), the text, that it is no valid noun, and ap_expr's reason. */
const char *couchpage_expr_parse(cmd_parms *cmd, const char *which, const char *text,
                                 const char *noun, ap_expr_info_t **expr);

/* CouchPageItemTemplate's template, parsed so (noun "template"): an
 * unknown field in one of its functions is its fault too, and so is, in a
 * .htaccess file, a function or operator that reads the server's
 * environment or files (osenv, env, reqenv, file, filesize, the file tests
 * and -F -U -A): such a template may read the row, the page and the
 * request only. *read is the fields its functions read (const cp_field *,
 * in cmd's pool); *reads_doc says whether one reads the row's doc. */
const char *couchpage_expr_parse_template(cmd_parms *cmd, const char *text,
                                          ap_expr_info_t **template,
                                          apr_array_header_t **read, int *reads_doc);

/* A string expression's value for r, as ap_expr_str_exec gives it (*error
 * set when it cannot be evaluated); *not_utf8 says whether a request value
 * it gave %{json:...} has no JSON form (is not UTF-8): the client's fault,
 * where an error is the configuration's. */
const char *couchpage_expr_eval(request_rec *r, const ap_expr_info_t *expr, int *not_utf8,
                                const char **error);

/* Makes spec render each item with CouchPageItemTemplate's template for r:
 * the template evaluated with its functions reading the item's row, of
 * whose doc they show only spec's fields (cp_field_show). */
void couchpage_template_use(request_rec *r, ap_expr_info_t *template, cp_html_spec *spec);

#endif
