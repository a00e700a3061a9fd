/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mod_couchpage_config: the CouchPage* directives, each checked when httpd
 * reads its configuration (apachectl -t names the directive and the fault),
 * the per-directory merge, and the start-up checks of the merged config.
 * Glue: configuration time only; it serves no request.
 */
#include "mod_couchpage_config.h"

#include "http_core.h"
#include "http_log.h"
#include "apr_file_info.h"
#include "apr_file_io.h"
#include "apr_fnmatch.h"
#include "apr_strings.h"
#include "apr_lib.h"
#include "apr_user.h"

#include "couchpage_json.h"
#include "couchpage_plan.h"
#include "couchpage_seal.h"
#include "mod_couchpage_expr.h"
#include "mod_proxy.h"

void *couchpage_create_dir_conf(apr_pool_t *p, char *dir)
{
    couchpage_dir_conf *conf = apr_pcalloc(p, sizeof(*conf));

    conf->page_size = DEFAULT_PAGE_SIZE;
    conf->max_page_size = DEFAULT_MAX_PAGE_SIZE;
    conf->max_response = DEFAULT_MAX_RESPONSE;
    conf->view.group_level = CP_GROUP_EXACT;
    conf->max_token_length = DEFAULT_MAX_TOKEN_LENGTH;
    conf->view.max_emits = DEFAULT_MAX_EMITS;
    return conf;
}

/* A field from the innermost section that sets it, as set says. */
#define MERGE_AS(field, set) \
    conf->field = add->set ? add->field : base->field; \
    conf->set = add->set || base->set
#define MERGE(field) MERGE_AS(field, field##_set)

void *couchpage_merge_dir_conf(apr_pool_t *p, void *basev, void *addv)
{
    couchpage_dir_conf *base = basev, *add = addv;
    couchpage_dir_conf *conf = apr_pcalloc(p, sizeof(*conf));
    int i;

    /* the view: its URL's parts from the section that names it, each
     * option from the innermost that sets it, so that the merge gives the
     * final view every request reads */
    MERGE(view);
    MERGE_AS(view.descending, descending_set);
    MERGE_AS(view.reduce, reduce_set);
    MERGE_AS(view.group_level, group_level_set);
    MERGE_AS(view.include_docs, include_docs_set);
    MERGE_AS(view.update, update_set);
    MERGE_AS(view.stable, stable_set);
    MERGE_AS(view.max_emits, max_emits_set);
    conf->view_where = add->view_set ? add->view_where : base->view_where;
    conf->view_section = add->view_set ? add->view_section : base->view_section;
    MERGE(page_size);
    conf->page_size_where = add->page_size_set ? add->page_size_where
                                               : base->page_size_where;
    MERGE(max_page_size);
    conf->max_page_size_where = add->max_page_size_set ? add->max_page_size_where
                                                       : base->max_page_size_where;
    /* as core merges SetHandler: the innermost section's, "none" included */
    conf->handler = add->handler ? add->handler : base->handler;
    conf->handler_where = add->handler ? add->handler_where : base->handler_where;
    MERGE(authorization);
    MERGE(max_response);
    MERGE(partition);
    MERGE(fields);
    conf->fields_where = add->fields_set ? add->fields_where : base->fields_where;
    MERGE(format);
    /* CouchPageItem and CouchPageItemTemplate are one setting: a section's
     * own replaces an outer one's, whichever directive each used */
    MERGE(item);
    conf->item_template = add->item_set ? add->item_template : base->item_template;
    conf->item_reads_doc = add->item_set ? add->item_reads_doc : base->item_reads_doc;
    conf->item_where = add->item_set ? add->item_where : base->item_where;
    for (i = 0; i < CP_WORD_COUNT; i++) {
        conf->words[i] = add->words[i] ? add->words[i] : base->words[i];
    }
    MERGE(links);
    MERGE(max_token_length);
    MERGE(cache_control);
    conf->token_key = add->token_secret_set ? add->token_key : base->token_key;
    conf->previous_token_key = add->token_secret_set ? add->previous_token_key
                                                     : base->previous_token_key;
    conf->token_secret_set = add->token_secret_set || base->token_secret_set;
    conf->low = add->range_set ? add->low : base->low;
    conf->high = add->range_set ? add->high : base->high;
    conf->range_set = add->range_set || base->range_set;
    return conf;
}

const char *couchpage_directive_where(apr_pool_t *p, const ap_directive_t *directive)
{
    return apr_psprintf(p, "%s:%d", directive->filename, directive->line_num);
}

const char *couchpage_directive_section(apr_pool_t *p, const ap_directive_t *directive)
{
    const ap_directive_t *section = directive->parent;

    if (!section) {
        return "the server config";
    }
    /* a section's args keep their closing '>' */
    return apr_pstrcat(p, section->directive, " ", section->args, NULL);
}

/* A whole number in [min, max], or an error naming the directive. */
static const char *parse_bounded(cmd_parms *cmd, const char *arg, apr_int64_t min,
                                 apr_int64_t max, apr_int64_t *value)
{
    char *end;
    apr_int64_t n;

    errno = 0;
    n = apr_strtoi64(arg, &end, 10);
    if (errno || end == arg || *end || n < min || n > max) {
        return apr_psprintf(cmd->pool, "%s: '%s' is not a whole number from %"
                            APR_INT64_T_FMT " to %" APR_INT64_T_FMT,
                            cmd->directive->directive, arg, min, max);
    }
    *value = n;
    return NULL;
}

/* Constant bounds and the view, when one section sets both: an _all_docs
 * range of non-strings is refused now rather than on every request. */
static const char *check_constant_range(cmd_parms *cmd, const couchpage_dir_conf *conf)
{
    const char *reason;

    if (!conf->view_set || !conf->range_set) {
        return NULL;
    }
    reason = cp_plan_check_range(cmd->pool, &conf->view, conf->low.json, conf->high.json);
    return reason ? apr_pstrcat(cmd->pool, "CouchPageRange: ", reason, NULL) : NULL;
}

/* The proxy modules that serve a view URL's scheme: mod_proxy_http makes
 * the HTTP requests, mod_ssl the TLS of https, mod_proxy_balancer picks a
 * balancer's member (the members' own http:// needs mod_proxy_http). */
static const struct {
    const char *scheme;
    const char *modules[3]; /* source names, as ap_find_linked_module knows them */
} view_schemes[] = {
    { "http", { "mod_proxy.c", "mod_proxy_http.c", NULL } },
    { "https", { "mod_proxy.c", "mod_proxy_http.c", "mod_ssl.c" } },
    { "balancer", { "mod_proxy.c", "mod_proxy_balancer.c", "mod_proxy_http.c" } },
};
#define VIEW_SCHEMES (sizeof(view_schemes) / sizeof(view_schemes[0]))

/* The index of url's scheme in view_schemes, or -1. */
static int view_scheme(const char *url)
{
    const char *colon = strchr(url, ':');
    apr_size_t i;

    for (i = 0; colon && i < VIEW_SCHEMES; i++) {
        if (strlen(view_schemes[i].scheme) == (apr_size_t)(colon - url)
            && strncasecmp(url, view_schemes[i].scheme, colon - url) == 0) {
            return (int)i;
        }
    }
    return -1;
}

/* A URL as written, fit for a message: any user and password before an
 * '@' in its authority become "***", whether or not the URL parses. */
static const char *url_without_credentials(apr_pool_t *p, const char *url)
{
    const char *authority = strstr(url, "://"), *end, *at = NULL, *c;

    authority = authority ? authority + 3 : url;
    end = authority + strcspn(authority, "/?#");
    for (c = authority; c < end; c++) {
        if (*c == '@') {
            at = c;
        }
    }
    if (!at) {
        return url;
    }
    return apr_pstrcat(p, apr_pstrndup(p, url, authority - url), "***", at, NULL);
}

static const char *set_view(cmd_parms *cmd, void *dirconf, const char *arg)
{
    const char *forbidden = ap_check_cmd_context(cmd, NOT_IN_HTACCESS);
    couchpage_dir_conf *conf = dirconf;
    const char *reason;
    apr_size_t i;

    if (forbidden) {
        return forbidden;
    }
    reason = cp_view_init(cmd->pool, arg, &conf->view);
    if (!reason && view_scheme(arg) < 0) {
        reason = "has a scheme the module does not serve; use";
        for (i = 0; i < VIEW_SCHEMES; i++) {
            reason = apr_pstrcat(cmd->pool, reason, !i ? " " : i + 1 < VIEW_SCHEMES ? ", "
                                 : " or ", view_schemes[i].scheme, "://", NULL);
        }
    }
    if (reason) {
        return apr_psprintf(cmd->pool, "CouchPageView: '%s' %s",
                            url_without_credentials(cmd->pool, arg), reason);
    }
    if (conf->partition_set && conf->view.is_partitioned) {
        return "CouchPageView: the URL names a partition, and CouchPagePartition "
               "is set too";
    }
    conf->view_set = 1;
    conf->view_where = cmd->directive;
    conf->view_section = couchpage_directive_section(cmd->pool, cmd->directive);
    return check_constant_range(cmd, conf);
}

static const char *set_page_size(cmd_parms *cmd, void *dirconf, const char *arg)
{
    couchpage_dir_conf *conf = dirconf;
    apr_int64_t n;
    const char *err = parse_bounded(cmd, arg, 1, PAGE_SIZE_CEILING, &n);

    if (err) {
        return err;
    }
    if (conf->max_page_size_set && n > conf->max_page_size) {
        return apr_psprintf(cmd->pool, "CouchPageSize: %s is larger than "
                            "CouchPageMaxSize %d", arg, conf->max_page_size);
    }
    conf->page_size = (int)n;
    conf->page_size_set = 1;
    conf->page_size_where = cmd->directive;
    return NULL;
}

static const char *set_max_page_size(cmd_parms *cmd, void *dirconf, const char *arg)
{
    const char *forbidden = ap_check_cmd_context(cmd, NOT_IN_HTACCESS);
    couchpage_dir_conf *conf = dirconf;
    apr_int64_t n;
    const char *err = parse_bounded(cmd, arg, 1, PAGE_SIZE_CEILING, &n);

    if (forbidden) {
        return forbidden;
    }
    if (err) {
        return err;
    }
    if (conf->page_size_set && n < conf->page_size) {
        return apr_psprintf(cmd->pool, "CouchPageMaxSize: %s is smaller than "
                            "CouchPageSize %d", arg, conf->page_size);
    }
    conf->max_page_size = (int)n;
    conf->max_page_size_set = 1;
    conf->max_page_size_where = cmd->directive;
    return NULL;
}

/* CouchPageCredentials USER file:PATH names a file that holds the password
 * alone (a trailing newline is no part of it): read when httpd reads its
 * configuration, as root, so that the file can be root's alone. */
#define PASSWORD_FILE_PREFIX "file:"
#define PASSWORD_FILE_MAX 4096

/* Readable by others than root and the owner: warned of, once per read of
 * the configuration. APR's permission bits are the octal mode's digits,
 * written in hexadecimal (APR_FPROT_UREAD is 0x0400). */
static void warn_if_readable(cmd_parms *cmd, const char *path, const apr_finfo_t *finfo)
{
    const char *who = NULL;
    char *group = NULL;

    if ((finfo->valid & APR_FINFO_PROT) && (finfo->protection & APR_FPROT_WREAD)) {
        who = "every user of this machine";
    }
    else if ((finfo->valid & (APR_FINFO_PROT | APR_FINFO_GROUP))
             == (APR_FINFO_PROT | APR_FINFO_GROUP)
             && (finfo->protection & APR_FPROT_GREAD) && finfo->group != 0) {
        who = apr_gid_name_get(&group, finfo->group, cmd->temp_pool) == APR_SUCCESS
              ? apr_psprintf(cmd->temp_pool, "the members of group %s", group)
              : "the members of its group";
    }
    if (who) {
        ap_log_error(APLOG_MARK, APLOG_WARNING, 0, cmd->server, CPLOGNO(0134)
                     "CouchPageCredentials (%s): the password file %s can be read by %s "
                     "(mode %03x); httpd reads it as root: chown root:root it and "
                     "chmod 0600 (or 0640) it",
                     couchpage_directive_where(cmd->temp_pool, cmd->directive), path, who,
                     (unsigned)(finfo->protection & 0x0777));
    }
}

/* The password in the file at path (relative to ServerRoot, as httpd's own
 * file arguments), or the error. Messages name the file, never its bytes. */
static const char *read_password_file(cmd_parms *cmd, const char *path, const char **password)
{
    char buf[PASSWORD_FILE_MAX + 1], error[128];
    const char *fault = NULL;
    apr_file_t *file;
    apr_finfo_t finfo;
    apr_size_t len = 0;
    apr_status_t rv;

    path = ap_server_root_relative(cmd->temp_pool, path);
    if (!path) {
        return "CouchPageCredentials: the password file's path is not valid";
    }
    rv = apr_file_open(&file, path, APR_FOPEN_READ, APR_FPROT_OS_DEFAULT, cmd->temp_pool);
    if (rv != APR_SUCCESS) {
        return apr_psprintf(cmd->pool, "CouchPageCredentials: the password file %s cannot "
                            "be opened: %s", path, apr_strerror(rv, error, sizeof(error)));
    }
    rv = apr_file_info_get(&finfo, APR_FINFO_TYPE | APR_FINFO_PROT | APR_FINFO_GROUP, file);
    if ((rv == APR_SUCCESS || rv == APR_INCOMPLETE) && (finfo.valid & APR_FINFO_TYPE)
        && finfo.filetype != APR_REG) {
        fault = "is not a regular file";
    }
    else {
        rv = apr_file_read_full(file, buf, sizeof(buf), &len);
        if (rv != APR_SUCCESS && rv != APR_EOF) {
            fault = apr_pstrcat(cmd->temp_pool, "cannot be read: ",
                                apr_strerror(rv, error, sizeof(error)), NULL);
        }
    }
    apr_file_close(file);
    if (!fault) {
        if (len > 0 && buf[len - 1] == '\n') {
            len -= len > 1 && buf[len - 2] == '\r' ? 2 : 1;
        }
        fault = len > PASSWORD_FILE_MAX
              ? apr_psprintf(cmd->temp_pool, "is longer than %d bytes; it holds the "
                             "password alone", PASSWORD_FILE_MAX)
              : len == 0 ? "is empty; it holds the password alone"
              : memchr(buf, '\n', len) || memchr(buf, '\r', len) || memchr(buf, '\0', len)
              ? "holds more than one line, or a NUL; it holds the password alone, on one line"
              : NULL;
    }
    if (fault) {
        return apr_psprintf(cmd->pool, "CouchPageCredentials: the password file %s %s",
                            path, fault);
    }
    *password = apr_pstrmemdup(cmd->pool, buf, len);
    warn_if_readable(cmd, path, &finfo);
    return NULL;
}

static const char *set_credentials(cmd_parms *cmd, void *dirconf, const char *user,
                                   const char *password)
{
    const char *forbidden = ap_check_cmd_context(cmd, NOT_IN_HTACCESS);
    couchpage_dir_conf *conf = dirconf;
    const char *err;

    if (forbidden) {
        return forbidden;
    }
    /* The password is never part of a message: it could end up in a log. */
    if (!*user || strchr(user, ':')) {
        return "CouchPageCredentials: the user name must be non-empty and "
               "have no colon";
    }
    if (strncmp(password, PASSWORD_FILE_PREFIX, sizeof(PASSWORD_FILE_PREFIX) - 1) == 0) {
        err = read_password_file(cmd, password + sizeof(PASSWORD_FILE_PREFIX) - 1, &password);
        if (err) {
            return err;
        }
    }
    conf->authorization = apr_pstrcat(cmd->pool, "Basic ",
        ap_pbase64encode(cmd->pool, apr_pstrcat(cmd->pool, user, ":", password, NULL)),
        NULL);
    conf->authorization_set = 1;
    return NULL;
}

static const char *set_max_response(cmd_parms *cmd, void *dirconf, const char *arg)
{
    const char *forbidden = ap_check_cmd_context(cmd, NOT_IN_HTACCESS);
    couchpage_dir_conf *conf = dirconf;
    apr_int64_t n;
    const char *err = parse_bounded(cmd, arg, 1024, APR_INT64_C(1) << 32, &n);

    if (forbidden) {
        return forbidden;
    }
    if (err) {
        return err;
    }
    conf->max_response = (apr_off_t)n;
    conf->max_response_set = 1;
    return NULL;
}

/* A string expression of the directive's, parsed once, now. NULL, or the
 * message httpd -t prints: the directive (and which argument), the text,
 * and ap_expr's reason. */
static const char *parse_string_expr(cmd_parms *cmd, const char *which, const char *text,
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

/* A bound with a %{...} in it is an expression, evaluated per request;
 * any other must be JSON as written, read now, once: so that a typo such as
 * '[1' is the operator's error at start-up, not every client's 400. */
static const char *parse_bound(cmd_parms *cmd, const char *which, const char *text,
                               key_bound *bound)
{
    const char *err = NULL;

    bound->json = NULL;
    bound->expr = NULL;
    if (!*text) {
        return NULL;
    }
    if (!strstr(text, "%{")) {
        bound->json = cp_json_compact(cmd->pool, text, &err);
        if (!bound->json) {
            return apr_psprintf(cmd->pool, "CouchPageRange: %s '%s' is not JSON (%s); a "
                                "bound that varies per request is an expression with "
                                "%%{...}", which, text, err);
        }
        return NULL;
    }
    return parse_string_expr(cmd, which, text, "expression", &bound->expr);
}

/* RAW_ARGS, because httpd's TAKE2 takes an empty word ('') for a missing
 * one, and '' is how a side of the range is left open. */
static const char *set_range(cmd_parms *cmd, void *dirconf, const char *args)
{
    const char *forbidden = ap_check_cmd_context(cmd, NOT_IN_HTACCESS);
    couchpage_dir_conf *conf = dirconf;
    const char *low, *high, *err;

    if (forbidden) {
        return forbidden;
    }
    while (apr_isspace(*args)) {
        args++;
    }
    low = ap_getword_conf(cmd->pool, &args);
    if (!*args) {
        return "CouchPageRange takes two arguments, LOW and HIGH ('' for an open side)";
    }
    high = ap_getword_conf(cmd->pool, &args);
    while (apr_isspace(*args)) {
        args++;
    }
    if (*args) {
        return "CouchPageRange takes two arguments, LOW and HIGH ('' for an open side)";
    }
    err = parse_bound(cmd, "LOW", low, &conf->low);
    if (!err) {
        err = parse_bound(cmd, "HIGH", high, &conf->high);
    }
    if (err) {
        return err;
    }
    conf->range_set = 1;
    return check_constant_range(cmd, conf);
}

static const char *set_partition(cmd_parms *cmd, void *dirconf, const char *arg)
{
    const char *forbidden = ap_check_cmd_context(cmd, NOT_IN_HTACCESS);
    couchpage_dir_conf *conf = dirconf;
    const char *err = NULL;

    if (forbidden) {
        return forbidden;
    }
    if (conf->view_set && conf->view.is_partitioned) {
        return "CouchPagePartition: the CouchPageView URL names a partition already";
    }
    /* a name written out is checked now; one an expression makes, per
     * request (cp_plan_init) */
    if (!strstr(arg, "%{")) {
        err = cp_plan_check_partition(cmd->pool, arg);
        if (err) {
            return apr_pstrcat(cmd->pool, "CouchPagePartition: ", err, NULL);
        }
    }
    err = parse_string_expr(cmd, NULL, arg, "expression", &conf->partition);
    if (err) {
        return err;
    }
    conf->partition_set = 1;
    return NULL;
}

static const char *set_descending(cmd_parms *cmd, void *dirconf, int on)
{
    const char *forbidden = ap_check_cmd_context(cmd, NOT_IN_HTACCESS);
    couchpage_dir_conf *conf = dirconf;

    if (forbidden) {
        return forbidden;
    }
    conf->view.descending = on;
    conf->descending_set = 1;
    return NULL;
}

static const char *set_reduce(cmd_parms *cmd, void *dirconf, int on)
{
    const char *forbidden = ap_check_cmd_context(cmd, NOT_IN_HTACCESS);
    couchpage_dir_conf *conf = dirconf;

    if (forbidden) {
        return forbidden;
    }
    if (on && conf->include_docs_set && conf->view.include_docs) {
        return "CouchPageReduce: grouped rows have no documents; "
               "CouchPageIncludeDocs is On here";
    }
    conf->view.reduce = on;
    conf->reduce_set = 1;
    return NULL;
}

static const char *set_group_level(cmd_parms *cmd, void *dirconf, const char *arg)
{
    const char *forbidden = ap_check_cmd_context(cmd, NOT_IN_HTACCESS);
    couchpage_dir_conf *conf = dirconf;
    apr_int64_t n;
    const char *err;

    if (forbidden) {
        return forbidden;
    }
    if (strcasecmp(arg, "exact") == 0) {
        conf->view.group_level = CP_GROUP_EXACT;
    }
    else {
        err = parse_bounded(cmd, arg, 0, 1000, &n);
        if (err) {
            return apr_pstrcat(cmd->pool, err, ", nor 'exact'", NULL);
        }
        conf->view.group_level = (int)n;
    }
    conf->group_level_set = 1;
    return NULL;
}

static const char *set_include_docs(cmd_parms *cmd, void *dirconf, int on)
{
    const char *forbidden = ap_check_cmd_context(cmd, NOT_IN_HTACCESS);
    couchpage_dir_conf *conf = dirconf;

    if (forbidden) {
        return forbidden;
    }
    if (on && conf->reduce_set && conf->view.reduce) {
        return "CouchPageIncludeDocs: grouped rows have no documents; "
               "CouchPageReduce is On here";
    }
    conf->view.include_docs = on;
    conf->include_docs_set = 1;
    return NULL;
}

/* CouchPageFields NAME...: the document members a page's JSON carries;
 * "*" alone, every member (the default, to undo an outer section's). */
static const char *set_fields(cmd_parms *cmd, void *dirconf, const char *args)
{
    const char *forbidden = ap_check_cmd_context(cmd, NOT_IN_HTACCESS);
    couchpage_dir_conf *conf = dirconf;
    apr_array_header_t *fields = apr_array_make(cmd->pool, 4, sizeof(const char *));
    const char *name;
    int i;

    if (forbidden) {
        return forbidden;
    }
    /* every word up to the end, the empty one ("") too: JSON allows a
     * member of that name, and CouchDB keeps it */
    for (;;) {
        while (apr_isspace(*args)) {
            args++;
        }
        if (!*args) {
            break;
        }
        name = ap_getword_conf(cmd->pool, &args);
        if (!strcmp(name, "*")) {
            while (apr_isspace(*args)) {
                args++;
            }
            if (fields->nelts > 0 || *args) {
                return "CouchPageFields: * (every member) stands alone";
            }
            conf->fields = NULL;
            conf->fields_set = 1;
            conf->fields_where = cmd->directive;
            return NULL;
        }
        if (!cp_json_quote(cmd->pool, name)) {
            return apr_psprintf(cmd->pool, "CouchPageFields: '%s' is not valid UTF-8",
                                ap_escape_logitem(cmd->pool, name));
        }
        for (i = 0; i < fields->nelts; i++) {
            if (!strcmp(APR_ARRAY_IDX(fields, i, const char *), name)) {
                return apr_psprintf(cmd->pool, "CouchPageFields: '%s' is named twice",
                                    ap_escape_logitem(cmd->pool, name));
            }
        }
        APR_ARRAY_PUSH(fields, const char *) = name;
    }
    if (fields->nelts == 0) {
        return "CouchPageFields takes the names of document members, or *";
    }
    conf->fields = fields;
    conf->fields_set = 1;
    conf->fields_where = cmd->directive;
    return NULL;
}

static const char *set_format(cmd_parms *cmd, void *dirconf, const char *arg)
{
    couchpage_dir_conf *conf = dirconf;

    if (strcasecmp(arg, "json") == 0) {
        conf->format = CP_FORMAT_JSON;
    }
    else if (strcasecmp(arg, "html") == 0) {
        conf->format = CP_FORMAT_HTML;
    }
    else if (strcasecmp(arg, "auto") == 0) {
        conf->format = CP_FORMAT_AUTO;
    }
    else {
        return apr_psprintf(cmd->pool, "CouchPageFormat: '%s' is not json, html or auto",
                            arg);
    }
    conf->format_set = 1;
    return NULL;
}

static const char *set_item(cmd_parms *cmd, void *dirconf, const char *field,
                            const char *link)
{
    couchpage_dir_conf *conf = dirconf;
    const char *err = NULL;

    if (conf->item_template) {
        return "CouchPageItem: CouchPageItemTemplate is set in this section already; "
               "an item is shown by one or the other";
    }
    conf->item.field = cp_field_parse(cmd->pool, field, &err);
    if (!conf->item.field) {
        return apr_pstrcat(cmd->pool, "CouchPageItem: the field ", err, NULL);
    }
    conf->item.link = NULL;
    if (link) {
        conf->item.link = cp_pattern_parse(cmd->pool, link, &err);
        if (!conf->item.link) {
            return apr_pstrcat(cmd->pool, "CouchPageItem: the link ", err, NULL);
        }
    }
    conf->item_reads_doc = cp_field_reads(conf->item.field, "doc")
                           || (conf->item.link && cp_pattern_reads(conf->item.link, "doc"));
    conf->item_where = cmd->directive;
    conf->item_set = 1;
    return NULL;
}

/* Parsed once: an expression error, or an unknown field in one of the
 * template's functions (checked by the module's expression lookup), fails
 * the configuration here. */
static const char *set_item_template(cmd_parms *cmd, void *dirconf, const char *arg)
{
    couchpage_dir_conf *conf = dirconf;
    apr_array_header_t *fields = apr_array_make(cmd->temp_pool, 8, sizeof(const cp_field *));
    const char *err = NULL;
    int i;

    if (conf->item_set && !conf->item_template) {
        return "CouchPageItemTemplate: CouchPageItem is set in this section already; "
               "an item is shown by one or the other";
    }
    couchpage_expr_collect_fields(cmd->temp_pool, fields);
    err = parse_string_expr(cmd, NULL, arg, "template", &conf->item_template);
    couchpage_expr_collect_fields(cmd->temp_pool, NULL);
    if (err) {
        return err;
    }
    conf->item_reads_doc = 0;
    for (i = 0; i < fields->nelts; i++) {
        conf->item_reads_doc |= cp_field_reads(APR_ARRAY_IDX(fields, i, const cp_field *),
                                               "doc");
    }
    conf->item_where = cmd->directive;
    conf->item_set = 1;
    return NULL;
}

static const char *set_text(cmd_parms *cmd, void *dirconf, const char *name,
                            const char *text)
{
    couchpage_dir_conf *conf = dirconf;
    int which = cp_word_find(name);

    if (which < 0) {
        const char *known = cp_word_names[0];
        int i;

        for (i = 1; i < CP_WORD_COUNT; i++) {
            known = apr_pstrcat(cmd->pool, known, ", ", cp_word_names[i], NULL);
        }
        return apr_psprintf(cmd->pool, "CouchPageText: '%s' is not a word of the fragment; "
                            "the words are %s", name, known);
    }
    /* cp_json_quote refuses exactly the text that is not UTF-8 */
    if (!cp_json_quote(cmd->pool, text)) {
        return apr_psprintf(cmd->pool, "CouchPageText: the text for %s is not valid UTF-8",
                            cp_word_names[which]);
    }
    conf->words[which] = text;
    return NULL;
}

static const char *set_links(cmd_parms *cmd, void *dirconf, const char *arg)
{
    couchpage_dir_conf *conf = dirconf;
    apr_int64_t n;
    const char *err = parse_bounded(cmd, arg, 0, MAX_LINKS, &n);

    if (err) {
        return err;
    }
    conf->links = (int)n;
    conf->links_set = 1;
    return NULL;
}

/* The secret the shipped examples show (debian/couchpage.conf,
 * conf/couchpage-cluster.conf, docs/scaling.md): public, so it seals nothing. */
#define PLACEHOLDER_SECRET "replace with a long random string"

static const char *set_token_secret(cmd_parms *cmd, void *dirconf, const char *secret,
                                    const char *previous)
{
    const char *forbidden = ap_check_cmd_context(cmd, NOT_IN_HTACCESS);
    couchpage_dir_conf *conf = dirconf;
    const char *reason;

    if (forbidden) {
        return forbidden;
    }
    /* Secrets are never part of a message: they could end up in a log. */
    if (strlen(secret) < CP_SEAL_MIN_SECRET
        || (previous && strlen(previous) < CP_SEAL_MIN_SECRET)) {
        return apr_psprintf(cmd->pool, "CouchPageTokenSecret: a secret must be at least "
                            "%d characters long", CP_SEAL_MIN_SECRET);
    }
    if (strcasecmp(secret, PLACEHOLDER_SECRET) == 0
        || (previous && strcasecmp(previous, PLACEHOLDER_SECRET) == 0)) {
        return "CouchPageTokenSecret: the examples' placeholder is no secret; "
               "replace it with a long random string of your own "
               "(such as: openssl rand -base64 32)";
    }
    /* derived once, here in the config pool: a page only encrypts */
    conf->previous_token_key = NULL;
    reason = cp_seal_key_derive(cmd->pool, secret, &conf->token_key);
    if (!reason && previous) {
        reason = cp_seal_key_derive(cmd->pool, previous, &conf->previous_token_key);
    }
    if (reason) {
        return apr_pstrcat(cmd->pool, "CouchPageTokenSecret: ", reason, NULL);
    }
    conf->token_secret_set = 1;
    return NULL;
}

static const char *set_max_token_length(cmd_parms *cmd, void *dirconf, const char *arg)
{
    const char *forbidden = ap_check_cmd_context(cmd, NOT_IN_HTACCESS);
    couchpage_dir_conf *conf = dirconf;
    apr_int64_t n;
    const char *err = parse_bounded(cmd, arg, 64, 65536, &n);

    if (forbidden) {
        return forbidden;
    }
    if (err) {
        return err;
    }
    conf->max_token_length = (apr_size_t)n;
    conf->max_token_length_set = 1;
    return NULL;
}

static const char *set_max_emits(cmd_parms *cmd, void *dirconf, const char *arg)
{
    const char *forbidden = ap_check_cmd_context(cmd, NOT_IN_HTACCESS);
    couchpage_dir_conf *conf = dirconf;
    apr_int64_t n;
    const char *err = parse_bounded(cmd, arg, 1, CP_TOKEN_MAX_EMITS, &n);

    if (forbidden) {
        return forbidden;
    }
    if (err) {
        return err;
    }
    conf->view.max_emits = (int)n;
    conf->max_emits_set = 1;
    return NULL;
}

static const char *set_update(cmd_parms *cmd, void *dirconf, const char *arg)
{
    static const char *const values[] = { "true", "false", "lazy" };
    const char *forbidden = ap_check_cmd_context(cmd, NOT_IN_HTACCESS);
    couchpage_dir_conf *conf = dirconf;
    int i;

    if (forbidden) {
        return forbidden;
    }
    /* CouchDB takes them in lower case only */
    for (i = 0; i < 3; i++) {
        if (strcasecmp(arg, values[i]) == 0) {
            conf->view.update = values[i];
            conf->update_set = 1;
            return NULL;
        }
    }
    return apr_psprintf(cmd->pool, "CouchPageUpdate: '%s' is not true, false or lazy", arg);
}

static const char *set_stable(cmd_parms *cmd, void *dirconf, int on)
{
    const char *forbidden = ap_check_cmd_context(cmd, NOT_IN_HTACCESS);
    couchpage_dir_conf *conf = dirconf;

    if (forbidden) {
        return forbidden;
    }
    conf->view.stable = on ? "true" : "false";
    conf->stable_set = 1;
    return NULL;
}

/* The page is the same for every client: the module reads CouchDB with its
 * own credentials. A shared cache may keep it (RFC 9111 keeps responses to
 * requests with Authorization out, unless 'public'); 'private' keeps it in
 * browsers only, for locations whose range or partition depends on who
 * asks. */
static const char *set_max_age(cmd_parms *cmd, void *dirconf, const char *seconds,
                               const char *scope)
{
    couchpage_dir_conf *conf = dirconf;
    apr_int64_t n;
    const char *err = parse_bounded(cmd, seconds, 0, MAX_AGE_CEILING, &n);

    if (err) {
        return err;
    }
    if (scope && strcasecmp(scope, "public") && strcasecmp(scope, "private")) {
        return apr_psprintf(cmd->pool, "CouchPageMaxAge: '%s' is neither public nor private",
                            scope);
    }
    conf->cache_control = apr_psprintf(cmd->pool, "%smax-age=%" APR_INT64_T_FMT,
                                       !scope ? "" : strcasecmp(scope, "public") == 0
                                       ? "public, " : "private, ", n);
    conf->cache_control_set = 1;
    return NULL;
}

/* SetHandler is core's: the module reads it too, so that start-up knows
 * where the couchpage handler is set, and declines, so that core then
 * handles it as ever (mod_auth_digest reads core's AuthName so). Core
 * takes the argument as a string expression and compares the handler
 * lower-cased; "none" sets none. */
static const char *note_handler(cmd_parms *cmd, void *dirconf, const char *arg)
{
    couchpage_dir_conf *conf = dirconf;

    conf->handler = strstr(arg, "%{") ? CP_HANDLER_EXPRESSION
                  : strcasecmp(arg, "couchpage") == 0 ? CP_HANDLER_COUCHPAGE
                  : CP_HANDLER_OTHER;
    conf->handler_where = cmd->directive;
    return DECLINE_CMD;
}

/* Where each directive may stand. Only presentation may be set in .htaccess
 * (with AllowOverride FileInfo, which SetHandler needs too): the page size,
 * never above the CouchPageMaxSize of the server's configuration (a request
 * whose merged size is above it is answered 500), the format, the items, the
 * words, the page links and Cache-Control. What decides what is asked of
 * CouchDB, with which credentials, and which of its data leaves, is the
 * server's alone, as ProxyPass is: server config, virtual host, <Directory>
 * and <Location>; its setters refuse .htaccess also where AllowOverrideList
 * names them (ap_check_cmd_context's NOT_IN_HTACCESS). */
#define SERVER_ONLY (RSRC_CONF | ACCESS_CONF)
#define PRESENTATION OR_FILEINFO

const command_rec couchpage_cmds[] = {
    /* core's OR_FILEINFO, so that core alone decides where it may stand */
    AP_INIT_TAKE1("SetHandler", note_handler, NULL, OR_FILEINFO,
        "a handler for every request of the section; the module notes couchpage's"),
    AP_INIT_TAKE1("CouchPageView", set_view, NULL, SERVER_ONLY,
        "the CouchDB view URL to page: http(s)://host:port/db/_design/ddoc/_view/name, "
        ".../db/_all_docs, or a balancer:// URL"),
    AP_INIT_TAKE1("CouchPageSize", set_page_size, NULL, PRESENTATION,
        "rows per page when the client gives no limit (default 20)"),
    AP_INIT_TAKE1("CouchPageMaxSize", set_max_page_size, NULL, SERVER_ONLY,
        "the largest limit a client may ask for (default 100)"),
    AP_INIT_TAKE2("CouchPageCredentials", set_credentials, NULL, SERVER_ONLY,
        "user and password sent to CouchDB with Basic authentication"),
    AP_INIT_TAKE1("CouchPageMaxResponse", set_max_response, NULL, SERVER_ONLY,
        "the largest CouchDB response read, in bytes (default 16777216)"),
    AP_INIT_RAW_ARGS("CouchPageRange", set_range, NULL, SERVER_ONLY,
        "the lowest and highest key shown, each JSON or an expression giving JSON "
        "('' for no bound); use %{json:...} for request values"),
    AP_INIT_TAKE1("CouchPagePartition", set_partition, NULL, SERVER_ONLY,
        "an expression giving the partition of a partitioned database"),
    AP_INIT_FLAG("CouchPageDescending", set_descending, NULL, SERVER_ONLY,
        "On pages the view in reverse order (default Off)"),
    AP_INIT_FLAG("CouchPageReduce", set_reduce, NULL, SERVER_ONLY,
        "On pages the view's grouped reduce rows; Off (default) its map rows"),
    AP_INIT_TAKE1("CouchPageGroupLevel", set_group_level, NULL, SERVER_ONLY,
        "with CouchPageReduce On: 'exact' (default) or a group level from 0"),
    AP_INIT_FLAG("CouchPageIncludeDocs", set_include_docs, NULL, SERVER_ONLY,
        "On adds each row's document to its item (default Off)"),
    AP_INIT_RAW_ARGS("CouchPageFields", set_fields, NULL, SERVER_ONLY,
        "with CouchPageIncludeDocs On: the document members each item's doc carries in "
        "JSON, by name (as Mango's fields: title date summary); * for all (default)"),
    AP_INIT_TAKE1("CouchPageFormat", set_format, NULL, PRESENTATION,
        "json, html, or auto (default): by the Accept header; ?format= overrides"),
    AP_INIT_TAKE12("CouchPageItem", set_item, NULL, PRESENTATION,
        "what an HTML item shows: a field path (key, value.title, doc.name, key[1], id) "
        "and an optional link pattern with {field} placeholders"),
    AP_INIT_TAKE1("CouchPageItemTemplate", set_item_template, NULL, PRESENTATION,
        "an item's inner HTML, an expression in httpd's syntax: trusted markup with "
        "%{couchpage_html:FIELD}, %{couchpage_url:FIELD}, %{couchpage_number:FIELD} and "
        "%{couchpage_date:FIELD} for the row's values, always escaped; "
        "%{couchpage_escape:TEXT} escapes request values"),
    AP_INIT_TAKE2("CouchPageText", set_text, NULL, PRESENTATION,
        "a word of the HTML fragment and its text in UTF-8: first, previous, next, last, of, "
        "empty, nav-label or current"),
    AP_INIT_TAKE1("CouchPageLinks", set_links, NULL, PRESENTATION,
        "how many numbered page links to show either side, 0 to 20 (default 0)"),
    AP_INIT_TAKE12("CouchPageTokenSecret", set_token_secret, NULL, SERVER_ONLY,
        "a secret (16 characters or more) that makes tokens opaque: encrypted and "
        "authenticated (AES-256-GCM), bound to the location; a second, previous secret is still accepted, for rotation"),
    AP_INIT_TAKE1("CouchPageMaxTokenLength", set_max_token_length, NULL, SERVER_ONLY,
        "the longest start token accepted, in bytes, 64 to 65536 (default 4096)"),
    /* it bounds what a client's token makes the module ask of CouchDB:
     * never .htaccess's */
    AP_INIT_TAKE1("CouchPageMaxEmits", set_max_emits, NULL, SERVER_ONLY,
        "the most rows one document emits under one key in the view, 1 to 1000 "
        "(default 64): a start token's row index stays below it, and it bounds every "
        "query's limit and skip"),
    AP_INIT_TAKE1("CouchPageUpdate", set_update, NULL, SERVER_ONLY,
        "CouchDB's update for every query: true (CouchDB's default) brings the index up "
        "to date first, lazy answers from the index as it is and updates it after, "
        "false never updates it"),
    AP_INIT_FLAG("CouchPageStable", set_stable, NULL, SERVER_ONLY,
        "CouchDB's stable for every query: On reads the same copy of each shard "
        "(a cluster's pages stay consistent), Off (CouchDB's default) the fastest"),
    AP_INIT_TAKE12("CouchPageMaxAge", set_max_age, NULL, PRESENTATION,
        "seconds a page may be kept by caches (Cache-Control: max-age), 0 to 31536000, "
        "optionally public or private; default: no Cache-Control on pages"),
    { NULL }
};

/* --- start-up checks ------------------------------------------------------
 *
 * httpd keeps no list of merged per-directory configurations: a request's
 * is merged when it is served, from the server's and every section that
 * applies to it. So for each section of each server that has the module's
 * directives (and for the server's own), the checks merge what a request
 * at that section's own path would merge, as httpd does, and refuse only
 * what is certain there: what sections the checks cannot place might change
 * (below) counts as unknown, and an unknown setting is never refused.
 *
 * A literal <Location> is placed exactly: a request for its own path merges
 * the server's configuration, then every <Location> and <LocationMatch>
 * that matches that path, in order (ap_location_walk's matching, repeated
 * here); <Directory>, <Files> and .htaccess come before the <Location>s, so
 * they can change only what no matching <Location> sets, and <If> sections
 * come last and can change anything. Any other section (regular expression
 * or wildcard, <Directory>, <Files>, <If>) is checked merged onto the
 * server's alone, with whatever any other section sets counted as unknown.
 * The server's own configuration is checked for a path that only the
 * <Location "/"> sections match. */

enum {
    SETS_HANDLER = 1,
    SETS_VIEW = 2,
    SETS_PAGE_SIZE = 4,
    SETS_MAX_PAGE_SIZE = 8,
    SETS_INCLUDE_DOCS = 16,
    SETS_ITEM = 32,            /* CouchPageItem or CouchPageItemTemplate */
    SETS_FIELDS = 64,
    SETS_FORMAT = 128,
    /* what a .htaccess file may set with AllowOverride FileInfo */
    SETS_FILEINFO = SETS_HANDLER | SETS_PAGE_SIZE | SETS_ITEM | SETS_FORMAT
};

typedef enum {
    SECTION_LOCATION,
    SECTION_DIRECTORY,
    SECTION_FILES,
    SECTION_IF
} section_kind;

typedef struct {
    section_kind kind;
    const core_dir_config *core;
    const couchpage_dir_conf *conf; /* NULL: none of the module's directives */
    unsigned sets;                  /* SETS_*: what conf sets */
} config_section;

static unsigned settings_of(const couchpage_dir_conf *conf)
{
    if (!conf) {
        return 0;
    }
    return (conf->handler ? SETS_HANDLER : 0) | (conf->view_set ? SETS_VIEW : 0)
         | (conf->page_size_set ? SETS_PAGE_SIZE : 0)
         | (conf->max_page_size_set ? SETS_MAX_PAGE_SIZE : 0)
         | (conf->include_docs_set ? SETS_INCLUDE_DOCS : 0)
         | (conf->item_set ? SETS_ITEM : 0) | (conf->fields_set ? SETS_FIELDS : 0)
         | (conf->format_set ? SETS_FORMAT : 0);
}

static void collect_sections(apr_array_header_t *out, section_kind kind,
                             const apr_array_header_t *vectors);

/* A section, and the <Files> and <If> sections nested in it. */
static void collect_section(apr_array_header_t *out, section_kind kind,
                            ap_conf_vector_t *vector)
{
    config_section *section = apr_array_push(out);

    section->kind = kind;
    section->core = ap_get_core_module_config(vector);
    section->conf = ap_get_module_config(vector, &couchpage_module);
    section->sets = settings_of(section->conf);
    collect_sections(out, SECTION_FILES, section->core->sec_file);
    collect_sections(out, SECTION_IF, section->core->sec_if);
}

static void collect_sections(apr_array_header_t *out, section_kind kind,
                             const apr_array_header_t *vectors)
{
    int i;

    for (i = 0; vectors && i < vectors->nelts; i++) {
        collect_section(out, kind, APR_ARRAY_IDX(vectors, i, ap_conf_vector_t *));
    }
}

/* What .htaccess files may set: with AllowOverride FileInfo, SetHandler and
 * the module's presentation directives, or those AllowOverrideList names;
 * never a view or what else decides the queries (SERVER_ONLY). */
static unsigned htaccess_settings(const core_dir_config *core)
{
    static const struct {
        const char *directive;
        unsigned sets;
    } listed[] = {
        { "SetHandler", SETS_HANDLER }, { "CouchPageSize", SETS_PAGE_SIZE },
        { "CouchPageItem", SETS_ITEM }, { "CouchPageItemTemplate", SETS_ITEM },
        { "CouchPageFormat", SETS_FORMAT },
    };
    unsigned sets = 0;
    apr_size_t i;

    if (!(core->override & OR_UNSET)) {
        sets |= core->override & OR_FILEINFO ? SETS_FILEINFO : 0;
    }
    for (i = 0; core->override_list && i < sizeof(listed) / sizeof(listed[0]); i++) {
        sets |= apr_table_get(core->override_list, listed[i].directive) ? listed[i].sets : 0;
    }
    return sets;
}

/* Whether a <Location> or <LocationMatch> applies to a request for uri:
 * ap_location_walk's test. */
static int location_applies(const core_dir_config *location, const char *uri)
{
    apr_size_t len = strlen(location->d);

    if (location->r) {
        return ap_regexec(location->r, uri, 0, NULL, 0) == 0;
    }
    if (location->d_is_fnmatch) {
        return apr_fnmatch(location->d, uri, APR_FNM_PATHNAME) == APR_SUCCESS;
    }
    return strncmp(location->d, uri, len) == 0
        && !(len > 0 && location->d[len - 1] != '/' && uri[len] != '/' && uri[len] != '\0');
}

/* A plain <Location> (no pattern): a request for its own path is known. */
static int is_literal_location(const config_section *section)
{
    return section->kind == SECTION_LOCATION && !section->core->r
        && !section->core->d_is_fnmatch;
}

/* A <Location> that every request's path matches. */
static int location_matches_all(const config_section *section)
{
    return is_literal_location(section)
        && (!*section->core->d || strcmp(section->core->d, "/") == 0);
}

/* The section as an operator wrote it, and the virtual host it is in. */
static const char *section_name(apr_pool_t *p, const config_section *section,
                                const server_rec *s)
{
    static const char *const kinds[] = { "Location", "Directory", "Files" };
    const char *name;

    if (!section) {
        name = "the server config";
    }
    else if (section->kind == SECTION_IF) {
        name = section->core->condition_ifelse == AP_CONDITION_ELSE ? "<Else>"
             : section->core->condition_ifelse == AP_CONDITION_ELSEIF ? "<ElseIf>" : "<If>";
    }
    else {
        name = apr_psprintf(p, "<%s%s \"%s\">", kinds[section->kind],
                            section->core->r ? "Match" : "", section->core->d);
    }
    if (s->is_virtual) {
        name = apr_psprintf(p, "%s of the <VirtualHost> at %s:%d", name, s->defn_name,
                            s->defn_line_number);
    }
    return name;
}

/* A CouchPageSize above the CouchPageMaxSize merged with it: which, and
 * where each is written. The default size is no fault: a smaller maximum
 * caps it (the handler's read_page_request). */
static const char *page_size_fault(apr_pool_t *p, const couchpage_dir_conf *conf)
{
    if (!conf->page_size_set || conf->page_size <= conf->max_page_size) {
        return NULL;
    }
    return apr_psprintf(p, "CouchPageSize %d (%s) is larger than CouchPageMaxSize %d (%s)",
                        conf->page_size, couchpage_directive_where(p, conf->page_size_where),
                        conf->max_page_size, conf->max_page_size_set
                        ? couchpage_directive_where(p, conf->max_page_size_where)
                        : "the default");
}

/* An HTML item that reads the rows' documents, which the queries do not
 * ask for: every item would show nothing. */
static const char *item_fault(apr_pool_t *p, const couchpage_dir_conf *conf)
{
    if (!conf->item_reads_doc || conf->view.include_docs || conf->format == CP_FORMAT_JSON) {
        return NULL;
    }
    return apr_psprintf(p, "%s (%s) reads the rows' documents (doc), and "
                        "CouchPageIncludeDocs is not On",
                        conf->item_template ? "CouchPageItemTemplate" : "CouchPageItem",
                        couchpage_directive_where(p, conf->item_where));
}

/* CouchPageFields without documents to pick members of. */
static const char *fields_fault(apr_pool_t *p, const couchpage_dir_conf *conf)
{
    if (!conf->fields || conf->view.include_docs) {
        return NULL;
    }
    return apr_psprintf(p, "CouchPageFields (%s) picks members of the rows' documents, "
                        "and CouchPageIncludeDocs is not On",
                        couchpage_directive_where(p, conf->fields_where));
}

const char *couchpage_merged_fault(apr_pool_t *p, const couchpage_dir_conf *conf)
{
    const char *fault = page_size_fault(p, conf);

    if (!fault) {
        fault = item_fault(p, conf);
    }
    return fault ? fault : fields_fault(p, conf);
}

/* One merged configuration and what other sections may change in it. */
static int check_merged(apr_pool_t *p, server_rec *s, const config_section *section,
                        const couchpage_dir_conf *merged, unsigned unknown)
{
    const char *fault;

    if (merged->handler != CP_HANDLER_COUCHPAGE || (unknown & SETS_HANDLER)) {
        return OK;
    }
    if (!merged->view_set && !(unknown & SETS_VIEW)) {
        ap_log_error(APLOG_MARK, APLOG_ERR | APLOG_STARTUP, 0, s, CPLOGNO(0112)
                     "SetHandler couchpage (%s) applies in %s, where no CouchPageView "
                     "is set: every request there would be answered 500. Set "
                     "CouchPageView there, or SetHandler couchpage only where a view "
                     "is set", couchpage_directive_where(p, merged->handler_where),
                     section_name(p, section, s));
        return !OK;
    }
    if (!(unknown & (SETS_PAGE_SIZE | SETS_MAX_PAGE_SIZE))
        && (fault = page_size_fault(p, merged))) {
        ap_log_error(APLOG_MARK, APLOG_ERR | APLOG_STARTUP, 0, s, CPLOGNO(0113)
                     "%s in %s: every request there would be answered 500. Raise "
                     "CouchPageMaxSize or lower CouchPageSize", fault,
                     section_name(p, section, s));
        return !OK;
    }
    if (!(unknown & (SETS_INCLUDE_DOCS | SETS_ITEM | SETS_FORMAT))
        && (fault = item_fault(p, merged))) {
        ap_log_error(APLOG_MARK, APLOG_ERR | APLOG_STARTUP, 0, s, CPLOGNO(0130)
                     "%s in %s: every item there would show nothing. Set "
                     "CouchPageIncludeDocs On there, or show the row's key, value or id",
                     fault, section_name(p, section, s));
        return !OK;
    }
    if (!(unknown & (SETS_INCLUDE_DOCS | SETS_FIELDS)) && (fault = fields_fault(p, merged))) {
        ap_log_error(APLOG_MARK, APLOG_ERR | APLOG_STARTUP, 0, s, CPLOGNO(0131)
                     "%s in %s: it would pick nothing. Set CouchPageIncludeDocs On there, "
                     "or remove CouchPageFields",
                     fault, section_name(p, section, s));
        return !OK;
    }
    return OK;
}

/* The view URL's scheme needs its proxy modules loaded: without them
 * mod_proxy answers every page's subrequest with an error that names
 * nothing of the module's. */
static int check_view_modules(apr_pool_t *p, server_rec *s, const couchpage_dir_conf *conf)
{
    const char *missing = NULL;
    int scheme, i;

    if (!conf || !conf->view_set || (scheme = view_scheme(conf->view.url)) < 0) {
        return OK;
    }
    for (i = 0; i < 3 && view_schemes[scheme].modules[i]; i++) {
        const char *module = view_schemes[scheme].modules[i];

        if (!ap_find_linked_module(module)) {
            /* "mod_proxy_http.c" is loaded as proxy_http_module */
            const char *name = apr_pstrndup(p, module + 4, strlen(module) - 6);

            missing = apr_psprintf(p, "%s%s%s (LoadModule %s_module)", missing ? missing : "",
                                   missing ? ", " : "", apr_pstrndup(p, module, strlen(module) - 2),
                                   name);
        }
    }
    if (missing) {
        ap_log_error(APLOG_MARK, APLOG_ERR | APLOG_STARTUP, 0, s, CPLOGNO(0114)
                     "CouchPageView %s (%s): %s:// needs modules that are not loaded: %s",
                     conf->view.url, couchpage_directive_where(p, conf->view_where),
                     view_schemes[scheme].scheme, missing);
        return !OK;
    }
    return OK;
}

/* mod_proxy's name of a worker, as its lookup compares it, and whether it
 * is a pattern: name_ex and is_name_matchable since httpd 2.4.51 (MMN
 * 20120211.124); before, name, always a plain prefix. */
static const char *worker_name(const proxy_worker *worker, int *is_pattern)
{
#if AP_MODULE_MAGIC_AT_LEAST(20120211, 124)
    *is_pattern = worker->s->is_name_matchable;
    return worker->s->name_ex;
#else
    *is_pattern = 0;
    return worker->s->name;
#endif
}

/* A worker for the same scheme and port on another host name, which an
 * operator may take for the view's (localhost for 127.0.0.1): its name,
 * or NULL. */
static const char *worker_of_other_host(apr_pool_t *p, const proxy_server_conf *proxy,
                                        const char *url)
{
    const proxy_worker *workers = (const proxy_worker *)proxy->workers->elts;
    apr_uri_t view, uri;
    int i, is_pattern;

    if (apr_uri_parse(p, url, &view) != APR_SUCCESS || !view.hostname) {
        return NULL;
    }
    for (i = 0; i < proxy->workers->nelts; i++) {
        const char *name = worker_name(&workers[i], &is_pattern);

        if (!is_pattern && apr_uri_parse(p, name, &uri) == APR_SUCCESS && uri.hostname
            && uri.scheme && strcasecmp(uri.scheme, view.scheme) == 0
            && (uri.port ? uri.port : apr_uri_port_of_scheme(uri.scheme))
               == (view.port ? view.port : apr_uri_port_of_scheme(view.scheme))
            && strcasecmp(uri.hostname, view.hostname) != 0) {
            return name;
        }
    }
    return NULL;
}

/* A view's queries keep their backend connections only with a worker of
 * mod_proxy's that serves the view's URL: without one mod_proxy's default
 * worker makes them, which keeps no connection, and every query opens a new
 * one (it still works). A balancer:// view needs its balancer, without
 * which every page fails. Either is warned of, once a URL and server; the
 * configuration is read through mod_proxy's structures (mod_proxy.h), never
 * its functions, so that the module loads without it. */
static void check_view_worker(apr_pool_t *p, server_rec *s, const couchpage_dir_conf *conf,
                              apr_hash_t *warned)
{
    module *proxy_module = ap_find_linked_module("mod_proxy.c");
    const proxy_server_conf *proxy;
    const char *url, *key, *other;
    int i, is_pattern;

    if (!proxy_module || !conf || !conf->view_set) {
        return;
    }
    proxy = ap_get_module_config(s->module_config, proxy_module);
    url = cp_view_query_prefix(p, &conf->view, conf->partition != NULL);
    key = apr_psprintf(p, "%pp %s", (const void *)proxy, url);
    if (apr_hash_get(warned, key, APR_HASH_KEY_STRING)) {
        return;
    }
    if (strncasecmp(url, "balancer:", 9) == 0) {
        const proxy_balancer *balancers = (const proxy_balancer *)proxy->balancers->elts;

        for (i = 0; i < proxy->balancers->nelts; i++) {
            if (strcasecmp(balancers[i].s->name, conf->view.backend) == 0) {
                return;
            }
        }
        ap_log_error(APLOG_MARK, APLOG_WARNING | APLOG_STARTUP, 0, s, CPLOGNO(0132)
                     "CouchPageView %s (%s): no balancer %s is defined%s, and every page "
                     "there would fail. Define it: <Proxy \"%s\"> with a BalancerMember "
                     "for each CouchDB node", conf->view.url,
                     couchpage_directive_where(p, conf->view_where), conf->view.backend,
                     s->is_virtual ? " for this virtual host" : "", conf->view.backend);
        apr_hash_set(warned, key, APR_HASH_KEY_STRING, key);
        return;
    }
    for (i = 0; i < proxy->workers->nelts; i++) {
        const char *name = worker_name(&((const proxy_worker *)proxy->workers->elts)[i],
                                       &is_pattern);

        if (cp_view_worker_serves(p, name, is_pattern, url)) {
            return;
        }
    }
    other = worker_of_other_host(p, proxy, url);
    ap_log_error(APLOG_MARK, APLOG_WARNING | APLOG_STARTUP, 0, s, CPLOGNO(0133)
                 "CouchPageView %s (%s): no mod_proxy worker serves %s%s, so mod_proxy's "
                 "default worker makes its queries, which keeps no connection: each "
                 "query opens a new one. Define a worker: <Proxy \"%s/\"> with "
                 "ProxySet keepalive=On (a <Proxy> block without ProxySet defines none)%s%s%s",
                 conf->view.url, couchpage_directive_where(p, conf->view_where),
                 conf->view.backend, s->is_virtual ? " in this virtual host" : "",
                 conf->view.backend, other ? "; the worker " : "", other ? other : "",
                 other ? " is not it: mod_proxy compares host names as written" : "");
    apr_hash_set(warned, key, APR_HASH_KEY_STRING, key);
}

static int check_server(apr_pool_t *p, server_rec *s, apr_hash_t *warned)
{
    core_server_config *server = ap_get_core_module_config(s->module_config);
    const core_dir_config *defaults_core = ap_get_core_module_config(s->lookup_defaults);
    couchpage_dir_conf *defaults = ap_get_module_config(s->lookup_defaults,
                                                        &couchpage_module);
    apr_array_header_t *sections = apr_array_make(p, 16, sizeof(config_section));
    const config_section *all;
    unsigned htaccess = htaccess_settings(defaults_core), before_locations = 0, in_ifs = 0;
    unsigned in_patterns = 0, in_others = 0;
    couchpage_dir_conf *merged;
    int i, j;

    collect_sections(sections, SECTION_FILES, defaults_core->sec_file);
    collect_sections(sections, SECTION_IF, defaults_core->sec_if);
    collect_sections(sections, SECTION_DIRECTORY, server->sec_dir);
    collect_sections(sections, SECTION_LOCATION, server->sec_url);
    all = (const config_section *)sections->elts;
    for (i = 0; i < sections->nelts; i++) {
        if (all[i].kind == SECTION_DIRECTORY) {
            before_locations |= all[i].sets;
            htaccess |= htaccess_settings(all[i].core);
        }
        else if (all[i].kind == SECTION_FILES) {
            before_locations |= all[i].sets;
        }
        else if (all[i].kind == SECTION_IF) {
            in_ifs |= all[i].sets;
        }
        else if (!is_literal_location(&all[i])) {
            in_patterns |= all[i].sets;
        }
        if (check_view_modules(p, s, all[i].conf) != OK) {
            return !OK;
        }
        check_view_worker(p, s, all[i].conf, warned);
    }
    if (check_view_modules(p, s, defaults) != OK) {
        return !OK;
    }
    check_view_worker(p, s, defaults, warned);
    before_locations |= htaccess;

    /* the server's own, for a path only <Location "/"> matches */
    merged = defaults;
    for (i = 0; i < sections->nelts; i++) {
        if (location_matches_all(&all[i]) && all[i].conf) {
            merged = couchpage_merge_dir_conf(p, merged, (void *)all[i].conf);
            in_others |= all[i].sets;
        }
    }
    if (check_merged(p, s, NULL, merged,
                     in_ifs | in_patterns | (before_locations & ~in_others)) != OK) {
        return !OK;
    }

    for (i = 0; i < sections->nelts; i++) {
        unsigned unknown = 0, in_locations = 0;

        if (!all[i].conf) {
            continue;
        }
        merged = defaults;
        if (is_literal_location(&all[i])) {
            for (j = 0; j < sections->nelts; j++) {
                if (all[j].kind == SECTION_LOCATION && all[j].conf
                    && location_applies(all[j].core, all[i].core->d)) {
                    merged = couchpage_merge_dir_conf(p, merged, (void *)all[j].conf);
                    in_locations |= all[j].sets;
                }
            }
            unknown = in_ifs | (before_locations & ~in_locations);
        }
        else {
            merged = couchpage_merge_dir_conf(p, merged, (void *)all[i].conf);
            for (j = 0; j < sections->nelts; j++) {
                unknown |= j != i ? all[j].sets : 0;
            }
            unknown |= htaccess;
        }
        if (check_merged(p, s, &all[i], merged, unknown) != OK) {
            return !OK;
        }
    }
    return OK;
}

int couchpage_check_config(apr_pool_t *pconf, apr_pool_t *plog, apr_pool_t *ptemp,
                           server_rec *s)
{
    apr_hash_t *warned = apr_hash_make(ptemp);

    for (; s; s = s->next) {
        if (check_server(ptemp, s, warned) != OK) {
            return !OK;
        }
    }
    return OK;
}
