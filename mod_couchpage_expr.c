/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mod_couchpage_expr: the module's ap_expr functions, the parsing of the
 * expressions directives take, and the item template's renderer (see
 * mod_couchpage_expr.h): httpd's expressions in one room. Glue: no
 * directory config, no response to the client.
 */
#include "mod_couchpage_expr.h"

#include "http_config.h"
#include "http_log.h"
#include "apr_strings.h"

#include "couchpage_item.h"
#include "couchpage_json.h"
#include "mod_couchpage_module.h"

/* ap_expr_parse_cmd tags what it logs with the module's index */
APLOG_USE_MODULE(couchpage);

#define JSON_ARG_REFUSED_NOTE "couchpage-json-refused"

/* %{json:TEXT} in an expression: TEXT as a JSON string literal, so that a
 * request value can never add JSON structure to a range. Text that is not
 * UTF-8 has no such literal: the note tells couchpage_expr_eval, and the
 * request is refused. */
static const char *expr_json_string(ap_expr_eval_ctx_t *ctx, const void *data,
                                    const char *arg)
{
    const char *quoted = cp_json_quote(ctx->p, arg);

    if (!quoted && ctx->r) {
        apr_table_setn(ctx->r->notes, JSON_ARG_REFUSED_NOTE, "1");
    }
    return quoted ? quoted : "";
}

/* The row CouchPageItemTemplate is rendering: where its functions read. */
typedef struct couchpage_template_row {
    const cp_row *row;
    const apr_array_header_t *fields; /* CouchPageFields: what it may show of the doc */
} template_row;

/* What a %{couchpage_*:FIELD} function shows, checked at start-up. */
typedef struct {
    cp_show how;
    const cp_field *field;
    const char *separator;  /* %{couchpage_join:FIELD[]SEPARATOR}'s; NULL for the others */
} template_field;

static const struct {
    const char *name;
    cp_show how;
} template_functions[] = {
    { "couchpage_html", CP_SHOW_HTML },
    { "couchpage_url", CP_SHOW_URL },
    { "couchpage_number", CP_SHOW_NUMBER },
    { "couchpage_date", CP_SHOW_DATE },
};

/* %{couchpage_html:FIELD} and its kin: the field of the row being rendered,
 * HTML-safe. Outside an item template there is no row: nothing. */
static const char *expr_template_field(ap_expr_eval_ctx_t *ctx, const void *data,
                                       const char *arg)
{
    const template_field *shown = data;
    const couchpage_request_config *slot = ctx->r ? couchpage_request_config_of(ctx->r, 0)
                                                  : NULL;
    const template_row *current = slot ? slot->template_row : NULL;

    if (!current || !current->row) {
        return "";
    }
    if (shown->separator) {
        return cp_field_join(ctx->p, shown->field, shown->separator, current->row,
                             current->fields);
    }
    return cp_field_show(ctx->p, shown->how, shown->field, current->row, current->fields);
}

/* %{couchpage_escape:TEXT}: any text, such as a request value, HTML-escaped
 * for a template. */
static const char *expr_html_escape(ap_expr_eval_ctx_t *ctx, const void *data,
                                    const char *arg)
{
    return cp_html_text(ctx->p, arg, strlen(arg));
}

/* While couchpage_expr_parse_template parses, the array (const cp_field *)
 * that collects its functions' fields, in the parse's temporary pool: a
 * .htaccess file is read per request, in the request's own pool and
 * thread, so the pool carries it, not a global. */
#define COLLECTED_FIELDS_KEY "couchpage-template-fields"

/* The field is compiled here, once: an unknown one fails the configuration.
 * joins: the argument is couchpage_join's, FIELD[]SEPARATOR. */
static int lookup_template_function(ap_expr_lookup_parms *parms, cp_show how, int joins)
{
    template_field *shown;
    const char *err = NULL;
    void *collected = NULL;

    if (!parms->arg) {
        *parms->err = apr_psprintf(parms->ptemp, "%%{%s:%s} takes a field path "
                                   "written out (such as %s), not an expression",
                                   parms->name, joins ? "FIELD[]SEPARATOR" : "FIELD",
                                   joins ? "doc.tags[], " : "doc.title");
        return HTTP_INTERNAL_SERVER_ERROR;
    }
    shown = apr_palloc(parms->pool, sizeof(*shown));
    shown->how = how;
    shown->separator = NULL;
    if (joins) {
        err = cp_field_join_parse(parms->pool, parms->arg, &shown->field, &shown->separator);
        if (err) {
            *parms->err = apr_psprintf(parms->ptemp, "%%{%s:%s}: %s", parms->name,
                                       parms->arg, err);
            return HTTP_INTERNAL_SERVER_ERROR;
        }
    }
    else {
        shown->field = cp_field_parse(parms->pool, parms->arg, &err);
    }
    if (!shown->field) {
        *parms->err = apr_psprintf(parms->ptemp, "%%{%s:%s}: the field %s", parms->name,
                                   parms->arg, err);
        return HTTP_INTERNAL_SERVER_ERROR;
    }
    apr_pool_userdata_get(&collected, COLLECTED_FIELDS_KEY, parms->ptemp);
    if (collected) {
        APR_ARRAY_PUSH((apr_array_header_t *)collected, const cp_field *) = shown->field;
    }
    *parms->func = expr_template_field;
    *parms->data = shown;
    return OK;
}

/* While couchpage_expr_parse_template parses a template set in .htaccess,
 * this key on the parse's temporary pool (as COLLECTED_FIELDS_KEY) marks it
 * confined: it may read the row, the page and the request, never the
 * server's environment or files. httpd's functions and operators that read
 * them (server/util_expr_eval.c): osenv, and env, which falls back to the
 * OS environment; reqenv, the request's environment, which SetEnv and
 * PassEnv fill from the server's; file and filesize; the file tests -d -e
 * -f -s -L -h -x; and -F, -U and -A, which look a path or URL up as a
 * subrequest. AP_EXPR_FLAG_RESTRICTED refuses file and filesize alone. */
#define CONFINED_KEY "couchpage-template-confined"

static const char *const unconfined_functions[] = {
    "osenv", "env", "reqenv", "file", "filesize", NULL
};
static const char *const unconfined_operators[] = {
    "d", "e", "f", "s", "L", "h", "x", "F", "U", "A", NULL
};

/* Whether a template being parsed is confined and parms names what it may
 * not read: then *parms->err says so. */
static int refused_in_confined(ap_expr_lookup_parms *parms)
{
    const char *const *name = parms->type == AP_EXPR_FUNC_STRING ? unconfined_functions
                            : parms->type == AP_EXPR_FUNC_OP_UNARY ? unconfined_operators
                            : NULL;
    void *confined = NULL;

    apr_pool_userdata_get(&confined, CONFINED_KEY, parms->ptemp);
    if (!confined || !name) {
        return 0;
    }
    for (; *name; name++) {
        /* ap_expr's own comparison: functions case-blind, operators not */
        int is_function = parms->type == AP_EXPR_FUNC_STRING;

        if (is_function ? strcasecmp(*name, parms->name) == 0
                        : strcmp(*name, parms->name) == 0) {
            *parms->err = apr_psprintf(parms->ptemp, "%s%s%s reads the server's environment "
                                       "or files, which a template set in .htaccess may "
                                       "not: it may read the row, the page and the request",
                                       is_function ? "%{" : "-", parms->name,
                                       is_function ? ":...}" : "");
            return 1;
        }
    }
    return 0;
}

int couchpage_expr_lookup(ap_expr_lookup_parms *parms)
{
    size_t i;

    if (refused_in_confined(parms)) {
        return HTTP_INTERNAL_SERVER_ERROR;
    }
    if (parms->type != AP_EXPR_FUNC_STRING) {
        return DECLINED;
    }
    if (strcasecmp(parms->name, "json") == 0) {
        *parms->func = expr_json_string;
        *parms->data = NULL;
        return OK;
    }
    if (strcasecmp(parms->name, "couchpage_escape") == 0) {
        *parms->func = expr_html_escape;
        *parms->data = NULL;
        return OK;
    }
    for (i = 0; i < sizeof(template_functions) / sizeof(template_functions[0]); i++) {
        if (strcasecmp(parms->name, template_functions[i].name) == 0) {
            return lookup_template_function(parms, template_functions[i].how, 0);
        }
    }
    if (strcasecmp(parms->name, "couchpage_join") == 0) {
        return lookup_template_function(parms, CP_SHOW_HTML, 1);
    }
    return DECLINED;
}

const char *couchpage_expr_parse(cmd_parms *cmd, const char *which, const char *text,
                                 const char *noun, ap_expr_info_t **expr)
{
    const char *err = NULL;

    *expr = ap_expr_parse_cmd(cmd, text, AP_EXPR_FLAG_STRING_RESULT, &err, NULL);
    if (err) {
        return apr_psprintf(cmd->pool, "%s:%s%s '%s' is not a valid %s: %s", cmd->cmd->name,
                            which ? " " : "", which ? which : "", text, noun, err);
    }
    return NULL;
}

const char *couchpage_expr_parse_template(cmd_parms *cmd, const char *text,
                                          ap_expr_info_t **template,
                                          apr_array_header_t **read, int *reads_doc)
{
    apr_array_header_t *fields = apr_array_make(cmd->pool, 8, sizeof(const cp_field *));
    const char *err;
    int i;

    apr_pool_userdata_setn(fields, COLLECTED_FIELDS_KEY, NULL, cmd->temp_pool);
    /* a .htaccess file's (where NOT_IN_HTACCESS would be refused) */
    apr_pool_userdata_setn(ap_check_cmd_context(cmd, NOT_IN_HTACCESS) ? "1" : NULL,
                           CONFINED_KEY, NULL, cmd->temp_pool);
    err = couchpage_expr_parse(cmd, NULL, text, "template", template);
    apr_pool_userdata_setn(NULL, COLLECTED_FIELDS_KEY, NULL, cmd->temp_pool);
    apr_pool_userdata_setn(NULL, CONFINED_KEY, NULL, cmd->temp_pool);
    *reads_doc = 0;
    for (i = 0; i < fields->nelts; i++) {
        *reads_doc |= cp_field_reads(APR_ARRAY_IDX(fields, i, const cp_field *), "doc");
    }
    *read = fields;
    return err;
}

const char *couchpage_expr_eval(request_rec *r, const ap_expr_info_t *expr, int *not_utf8,
                                const char **error)
{
    const char *text;

    /* the note may be left from another module's use of %{json:...} */
    apr_table_unset(r->notes, JSON_ARG_REFUSED_NOTE);
    text = ap_expr_str_exec(r, expr, error);
    *not_utf8 = apr_table_get(r->notes, JSON_ARG_REFUSED_NOTE) != NULL;
    return text;
}

/* CouchPageItemTemplate for one request: the baton of template_item. */
typedef struct {
    request_rec *r;
    ap_expr_info_t *template;
    const apr_array_header_t *fields;
} item_template;

/* cp_render_html's item renderer (cp_item_renderer). */
static const char *template_item(void *baton, apr_pool_t *pool, const cp_row *row,
                                 const char **error)
{
    item_template *renderer = baton;
    request_rec *r = renderer->r;
    couchpage_request_config *slot = couchpage_request_config_of(r, 1);
    template_row *current = slot->template_row;
    const char *html;

    if (!current) {
        current = slot->template_row = apr_pcalloc(r->pool, sizeof(*current));
    }
    *error = NULL;
    current->row = row;
    current->fields = renderer->fields;
    html = ap_expr_str_exec(r, renderer->template, error);
    current->row = NULL;
    if (*error) {
        *error = apr_pstrcat(pool, "CouchPageItemTemplate could not be evaluated: ",
                             *error, NULL);
        return NULL;
    }
    return html;
}

void couchpage_template_use(request_rec *r, ap_expr_info_t *template, cp_html_spec *spec)
{
    item_template *renderer = apr_palloc(r->pool, sizeof(*renderer));

    renderer->r = r;
    renderer->template = template;
    renderer->fields = spec->fields;
    spec->render_item = template_item;
    spec->baton = renderer;
}
