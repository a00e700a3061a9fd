/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mod_couchpage_show: the directives of what a page shows of its rows and
 * how: CouchPageFields (the document members that leave the server),
 * CouchPageFormat, CouchPageItem and CouchPageItemTemplate (an HTML item)
 * and CouchPageText (the fragment's words), each checked when httpd reads
 * it, and the HTML fragment's spec that points at them. Declared in
 * mod_couchpage_show.h, for the directive table that names them. Glue:
 * configuration time only; it serves no request.
 */
#include "mod_couchpage_show.h"

#include "httpd.h"
#include "apr_strings.h"

#include "mod_couchpage_expr.h"

void couchpage_point_html_spec(couchpage_dir_conf *conf)
{
    conf->html.item = &conf->item;
    conf->html.words = conf->words;
    conf->html.fields = conf->fields;
}

/* An item, CouchPageItem's or CouchPageItemTemplate's, that reads a member
 * of the documents outside CouchPageFields, both set in one section: what
 * leaves the server is the fields, in HTML as in JSON. Where they are set
 * apart, start-up refuses it when it can place both
 * (mod_couchpage_check.c), and otherwise the item shows the fields alone
 * (cp_field_show). */
static const char *item_outside_fields(cmd_parms *cmd, const couchpage_dir_conf *conf)
{
    const char *fault;

    if (!conf->item_set || !conf->fields_set
        || !(fault = cp_fields_fault(cmd->pool, conf->item_read, conf->fields))) {
        return NULL;
    }
    return apr_psprintf(cmd->pool, "%s %s, and CouchPageFields is set in this section: "
                        "only its fields leave the server", conf->item_template
                        ? "CouchPageItemTemplate" : "CouchPageItem", fault);
}

/* CouchPageFields NAME...: the document members a page's JSON carries;
 * "*" alone, every member (the default, to undo an outer section's). */
const char *couchpage_set_fields(cmd_parms *cmd, void *dirconf, const char *args)
{
    const char *forbidden = ap_check_cmd_context(cmd, NOT_IN_HTACCESS);
    couchpage_dir_conf *conf = dirconf;
    apr_array_header_t *words = apr_array_make(cmd->pool, 4, sizeof(const char *));
    const char *word, *reason, *about;

    if (forbidden) {
        return forbidden;
    }
    /* every word up to the end, the empty one ("") too: JSON allows a
     * member of that name, and CouchDB keeps it */
    while ((word = couchpage_next_word(cmd->pool, &args)) != NULL) {
        APR_ARRAY_PUSH(words, const char *) = word;
    }
    if (words->nelts == 0) {
        return "CouchPageFields takes the names of document members, or *";
    }
    reason = cp_render_fields_parse(cmd->pool, words, &conf->fields, &about);
    if (reason) {
        return about ? apr_psprintf(cmd->pool, "CouchPageFields: '%s' %s",
                                    ap_escape_logitem(cmd->pool, about), reason)
                     : apr_pstrcat(cmd->pool, "CouchPageFields: ", reason, NULL);
    }
    conf->fields_set = 1;
    conf->fields_where = cmd->directive;
    couchpage_point_html_spec(conf);
    return item_outside_fields(cmd, conf);
}

const char *couchpage_set_format(cmd_parms *cmd, void *dirconf, const char *arg)
{
    couchpage_dir_conf *conf = dirconf;
    char *word = apr_pstrdup(cmd->temp_pool, arg);
    int named;

    /* a keyword, case-blind as httpd's own */
    ap_str_tolower(word);
    named = cp_format_named(word);
    if (named < 0) {
        return apr_psprintf(cmd->pool, "CouchPageFormat: '%s' is not json, html or auto", arg);
    }
    conf->format = (cp_format)named;
    conf->format_set = 1;
    return NULL;
}

const char *couchpage_set_item(cmd_parms *cmd, void *dirconf, const char *field,
                            const char *link)
{
    couchpage_dir_conf *conf = dirconf;
    apr_array_header_t *read;
    const char *reason;

    if (conf->item_template) {
        return "CouchPageItem: CouchPageItemTemplate is set in this section already; "
               "an item is shown by one or the other";
    }
    reason = cp_item_spec_parse(cmd->pool, field, link, &conf->item);
    if (reason) {
        return apr_pstrcat(cmd->pool, "CouchPageItem: ", reason, NULL);
    }
    conf->item_reads_doc = cp_item_spec_reads(&conf->item, "doc");
    read = apr_array_make(cmd->pool, 2, sizeof(const cp_field *));
    cp_item_spec_fields(&conf->item, read);
    conf->item_read = read;
    conf->item_where = cmd->directive;
    conf->item_set = 1;
    return item_outside_fields(cmd, conf);
}

/* Parsed once: an expression error, or an unknown field in one of the
 * template's functions (checked by the module's expression lookup), fails
 * the configuration here. */
const char *couchpage_set_item_template(cmd_parms *cmd, void *dirconf, const char *arg)
{
    couchpage_dir_conf *conf = dirconf;
    apr_array_header_t *read;
    const char *err;

    if (conf->item_set && !conf->item_template) {
        return "CouchPageItemTemplate: CouchPageItem is set in this section already; "
               "an item is shown by one or the other";
    }
    err = couchpage_expr_parse_template(cmd, arg, &conf->item_template, &read,
                                        &conf->item_reads_doc);
    if (err) {
        return err;
    }
    conf->item_read = read;
    conf->item_where = cmd->directive;
    conf->item_set = 1;
    return item_outside_fields(cmd, conf);
}

const char *couchpage_set_text(cmd_parms *cmd, void *dirconf, const char *name,
                            const char *text)
{
    couchpage_dir_conf *conf = dirconf;
    int which;
    const char *reason = cp_word_check(cmd->pool, name, text, &which);

    if (reason) {
        return apr_pstrcat(cmd->pool, "CouchPageText: ", reason, NULL);
    }
    conf->words[which] = text;
    return NULL;
}
