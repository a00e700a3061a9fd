/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mod_couchpage_config: the CouchPage* directives, each checked when httpd
 * reads its configuration (apachectl -t names the directive and the fault),
 * and the per-directory merge. The checks of the merged config, at start-up
 * and per request, are mod_couchpage_check.c's; what a directive names
 * (a view's scheme, a password file) and where it is written,
 * mod_couchpage_named.c's; the expressions directives take,
 * mod_couchpage_expr.c's; what a page shows of its rows and how (the
 * fields, the format, the item, the words), mod_couchpage_show.c's; a
 * _find location's directives (CouchPageSelector,
 * CouchPageSort, CouchPageIndex) are here with the others; what needs no
 * httpd (a view URL, a range, a secret, field names, words), the
 * core's. Glue: configuration time only; it serves no request.
 */
#include "mod_couchpage_config.h"
#include "mod_couchpage_show.h"

#include "http_core.h"
#include "http_log.h"
#include "apr_strings.h"

#include "couchpage_cache.h"
#include "couchpage_json.h"
#include "couchpage_mango.h"
#include "couchpage_plan.h"
#include "couchpage_seal.h"
#include "couchpage_settings.h"
#include "mod_couchpage_expr.h"

APLOG_USE_MODULE(couchpage);

#define DEFAULT_PAGE_SIZE 20
#define DEFAULT_MAX_PAGE_SIZE 100
#define PAGE_SIZE_CEILING 10000
#define DEFAULT_MAX_RESPONSE (16 * 1024 * 1024)
#define DEFAULT_BACKEND_DEADLINE 30 /* seconds for a page's backend reads together */
#define BACKEND_DEADLINE_CEILING 3600
#define MAX_LINKS 20
#define DEFAULT_MAX_LINKS 5
#define DEFAULT_MAX_TOKEN_LENGTH 4096 /* bytes of ?start=, as the client sent it */
#define DEFAULT_MAX_EMITS 64 /* rows one document emits under one key */
#define DEFAULT_JUMP_REACH 10 /* pages from either end ?page= reads: docs/directives.md */
#define MAX_JUMP_REACH 1000

void *couchpage_create_dir_conf(apr_pool_t *p, char *dir)
{
    couchpage_dir_conf *conf = apr_pcalloc(p, sizeof(*conf));

    conf->page_size = DEFAULT_PAGE_SIZE;
    conf->max_page_size = DEFAULT_MAX_PAGE_SIZE;
    conf->backend.max_response = DEFAULT_MAX_RESPONSE;
    conf->backend.deadline = apr_time_from_sec(DEFAULT_BACKEND_DEADLINE);
    conf->view.group_level = CP_GROUP_EXACT;
    conf->max_token_length = DEFAULT_MAX_TOKEN_LENGTH;
    conf->view.max_emits = DEFAULT_MAX_EMITS;
    conf->max_links = DEFAULT_MAX_LINKS;
    conf->jump_reach = DEFAULT_JUMP_REACH;
    couchpage_point_html_spec(conf);
    return conf;
}

int couchpage_links_shown(const couchpage_dir_conf *conf)
{
    return conf->links < conf->max_links ? conf->links : conf->max_links;
}

/* A field from the innermost section that sets it, as set says. */
#define MERGE_AS(field, set) \
    do { \
        conf->field = add->set ? add->field : base->field; \
        conf->set = add->set || base->set; \
    } while (0)
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
    MERGE(count);
    MERGE_AS(view.max_emits, max_emits_set);
    MERGE_AS(view_where, view_set);
    MERGE_AS(view_section, view_set);
    MERGE(page_size);
    MERGE(jump_reach);
    MERGE_AS(page_size_where, page_size_set);
    MERGE(max_page_size);
    MERGE_AS(max_page_size_where, max_page_size_set);
    /* as core merges SetHandler: the innermost section's, "none" included */
    conf->handler = add->handler ? add->handler : base->handler;
    conf->handler_where = add->handler ? add->handler_where : base->handler_where;
    MERGE_AS(backend.authorization, authorization_set);
    MERGE_AS(backend.max_response, max_response_set);
    MERGE_AS(backend.deadline, deadline_set);
    MERGE(partition);
    MERGE(fields);
    MERGE_AS(fields_where, fields_set);
    MERGE(format);
    /* CouchPageItem and CouchPageItemTemplate are one setting: a section's
     * own replaces an outer one's, whichever directive each used */
    MERGE(item);
    MERGE_AS(item_template, item_set);
    MERGE_AS(item_reads_doc, item_set);
    MERGE_AS(item_read, item_set);
    MERGE_AS(item_where, item_set);
    for (i = 0; i < CP_WORD_COUNT; i++) {
        conf->words[i] = add->words[i] ? add->words[i] : base->words[i];
    }
    MERGE(links);
    MERGE_AS(links_where, links_set);
    MERGE(max_links);
    MERGE_AS(max_links_where, max_links_set);
    MERGE(max_token_length);
    MERGE(cache_control);
    MERGE_AS(token_key, token_secret_set);
    MERGE_AS(previous_token_key, token_secret_set);
    conf->backend.hide_keys = conf->token_key != NULL;
    MERGE_AS(low, range_set);
    MERGE_AS(high, range_set);
    MERGE(find_selector);
    MERGE_AS(find_values, find_selector_set);
    MERGE_AS(find_selector_where, find_selector_set);
    MERGE(find_sort);
    MERGE_AS(find_sort_where, find_sort_set);
    MERGE_AS(find_index_ddoc, find_index_set);
    MERGE_AS(find_index_name, find_index_set);
    MERGE_AS(find_index_where, find_index_set);
    couchpage_point_html_spec(conf);
    return conf;
}

/* A whole number in [min, max], or an error naming the directive. */
static const char *parse_bounded(cmd_parms *cmd, const char *arg, apr_int64_t min,
                                 apr_int64_t max, apr_int64_t *value)
{
    return cp_settings_whole_number(cmd->pool, cmd->directive->directive, arg, min, max,
                                    value);
}

/* A whole number in [min, max] of a directive that only the server's
 * configuration may set, not .htaccess (see SERVER_ONLY): the error says
 * which of the two is wrong. */
static const char *parse_server_bounded(cmd_parms *cmd, const char *arg, apr_int64_t min,
                                        apr_int64_t max, apr_int64_t *value)
{
    const char *forbidden = ap_check_cmd_context(cmd, NOT_IN_HTACCESS);

    return forbidden ? forbidden : parse_bounded(cmd, arg, min, max, value);
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

static const char *set_view(cmd_parms *cmd, void *dirconf, const char *arg)
{
    const char *forbidden = ap_check_cmd_context(cmd, NOT_IN_HTACCESS);
    couchpage_dir_conf *conf = dirconf;
    const char *reason;

    if (forbidden) {
        return forbidden;
    }
    reason = cp_view_init(cmd->pool, arg, &conf->view);
    if (!reason) {
        reason = cp_view_scheme_fault(cmd->pool, arg);
    }
    if (reason) {
        return apr_psprintf(cmd->pool, "CouchPageView: '%s' %s",
                            cp_view_url_shown(cmd->pool, arg), reason);
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
    couchpage_dir_conf *conf = dirconf;
    apr_int64_t n;
    const char *err = parse_server_bounded(cmd, arg, 1, PAGE_SIZE_CEILING, &n);

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

static const char *set_credentials(cmd_parms *cmd, void *dirconf, const char *user,
                                   const char *password)
{
    const char *forbidden = ap_check_cmd_context(cmd, NOT_IN_HTACCESS);
    couchpage_dir_conf *conf = dirconf;
    const char *err = forbidden ? forbidden
                    : couchpage_basic_authorization(cmd, user, password,
                                                    &conf->backend.authorization);

    if (!err) {
        conf->authorization_set = 1;
    }
    return err;
}

static const char *set_max_response(cmd_parms *cmd, void *dirconf, const char *arg)
{
    couchpage_dir_conf *conf = dirconf;
    apr_int64_t n;
    const char *err = parse_server_bounded(cmd, arg, 1024, APR_INT64_C(1) << 32, &n);

    if (!err) {
        conf->backend.max_response = (apr_off_t)n;
        conf->max_response_set = 1;
    }
    return err;
}

/* CouchPageBackendDeadline SECONDS: how long a page's backend reads may
 * take together, whatever mod_proxy's timeout lets one read take. */
static const char *set_backend_deadline(cmd_parms *cmd, void *dirconf, const char *arg)
{
    couchpage_dir_conf *conf = dirconf;
    apr_int64_t n;
    const char *err = parse_server_bounded(cmd, arg, 1, BACKEND_DEADLINE_CEILING, &n);

    if (!err) {
        conf->backend.deadline = apr_time_from_sec(n);
        conf->deadline_set = 1;
    }
    return err;
}

/* A bound with a %{...} in it is an expression, evaluated per request;
 * any other must be JSON as written, read now, once: so that a typo such as
 * '[1' is the operator's error at start-up, not every client's 400. */
static const char *parse_bound(cmd_parms *cmd, const char *which, const char *text,
                               couchpage_key_bound *bound)
{
    const char *err = NULL;

    bound->json = NULL;
    bound->expr = NULL;
    if (strstr(text, "%{")) {
        return couchpage_expr_parse(cmd, which, text, "expression", &bound->expr);
    }
    if (*text && !(bound->json = cp_json_compact(cmd->pool, text, &err))) {
        return apr_psprintf(cmd->pool, "CouchPageRange: %s '%s' is not JSON (%s); a bound "
                            "that varies per request is an expression with %%{...}",
                            which, text, err);
    }
    return NULL;
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
    low = couchpage_next_word(cmd->pool, &args);
    high = low ? couchpage_next_word(cmd->pool, &args) : NULL;
    if (!high || couchpage_next_word(cmd->pool, &args)) {
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
    if (!strstr(arg, "%{") && (err = cp_plan_check_partition(cmd->pool, arg)) != NULL) {
        return apr_pstrcat(cmd->pool, "CouchPagePartition: ", err, NULL);
    }
    err = couchpage_expr_parse(cmd, NULL, arg, "expression", &conf->partition);
    if (!err) {
        conf->partition_set = 1;
    }
    return err;
}

static const char *set_group_level(cmd_parms *cmd, void *dirconf, const char *arg)
{
    const char *forbidden = ap_check_cmd_context(cmd, NOT_IN_HTACCESS);
    couchpage_dir_conf *conf = dirconf;
    apr_int64_t n = CP_GROUP_EXACT;
    const char *err;

    if (forbidden) {
        return forbidden;
    }
    if (strcasecmp(arg, "exact") != 0 && (err = parse_bounded(cmd, arg, 0, 1000, &n))) {
        return apr_pstrcat(cmd->pool, err, ", nor 'exact'", NULL);
    }
    conf->view.group_level = (int)n;
    conf->group_level_set = 1;
    return NULL;
}

/* CouchPageDescending, CouchPageReduce, CouchPageIncludeDocs and
 * CouchPageStable: the On/Off options of every query, the server's alone.
 * One setter, told which by cmd->info (as httpd's flag slots are told
 * their field). */
typedef enum { VIEW_DESCENDING, VIEW_REDUCE, VIEW_INCLUDE_DOCS, VIEW_STABLE } view_flag;

static const char *set_view_flag(cmd_parms *cmd, void *dirconf, int on)
{
    const char *forbidden = ap_check_cmd_context(cmd, NOT_IN_HTACCESS);
    couchpage_dir_conf *conf = dirconf;
    view_flag which = (view_flag)(apr_uintptr_t)cmd->info;

    if (forbidden) {
        return forbidden;
    }
    if (on && which == VIEW_REDUCE && conf->include_docs_set && conf->view.include_docs) {
        return "CouchPageReduce: grouped rows have no documents; CouchPageIncludeDocs is On here";
    }
    if (on && which == VIEW_INCLUDE_DOCS && conf->reduce_set && conf->view.reduce) {
        return "CouchPageIncludeDocs: grouped rows have no documents; CouchPageReduce is On here";
    }
    switch (which) {
    case VIEW_DESCENDING:
        conf->view.descending = on;
        conf->descending_set = 1;
        break;
    case VIEW_REDUCE:
        conf->view.reduce = on;
        conf->reduce_set = 1;
        break;
    case VIEW_INCLUDE_DOCS:
        conf->view.include_docs = on;
        conf->include_docs_set = 1;
        break;
    case VIEW_STABLE:
        conf->view.stable = on ? "true" : "false";
        conf->stable_set = 1;
        break;
    }
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
    if (conf->max_links_set && n > conf->max_links) {
        return apr_psprintf(cmd->pool, "CouchPageLinks: %s is more than CouchPageMaxLinks %d",
                            arg, conf->max_links);
    }
    conf->links = (int)n;
    conf->links_set = 1;
    conf->links_where = cmd->directive;
    return NULL;
}

/* The links a page shows cost rows of CouchDB's (each link a page's worth
 * either side): the server's ceiling, as CouchPageMaxSize is the size's. */
static const char *set_max_links(cmd_parms *cmd, void *dirconf, const char *arg)
{
    couchpage_dir_conf *conf = dirconf;
    apr_int64_t n;
    const char *err = parse_server_bounded(cmd, arg, 0, MAX_LINKS, &n);

    if (err) {
        return err;
    }
    if (conf->links_set && n < conf->links) {
        return apr_psprintf(cmd->pool, "CouchPageMaxLinks: %s is less than CouchPageLinks %d",
                            arg, conf->links);
    }
    conf->max_links = (int)n;
    conf->max_links_set = 1;
    conf->max_links_where = cmd->directive;
    return NULL;
}

/* The token secrets as read (each resolved: as written, or file:PATH's
 * content), length-prefixed, for the ETag's key (couchpage_token_secrets):
 * in the configuration's pool, forgotten with it. */
static const char *secrets_read;

static apr_status_t forget_secrets(void *unused)
{
    secrets_read = NULL;
    return APR_SUCCESS;
}

const char *couchpage_token_secrets(void)
{
    return secrets_read;
}

static const char *set_token_secret(cmd_parms *cmd, void *dirconf, const char *secret,
                                    const char *previous)
{
    const char *forbidden = ap_check_cmd_context(cmd, NOT_IN_HTACCESS);
    couchpage_dir_conf *conf = dirconf;
    const char *reason;

    if (forbidden) {
        return forbidden;
    }
    /* each as written, or file:PATH, as CouchPageCredentials' password */
    if ((reason = couchpage_named_secret(cmd, "secret", secret, &secret)) != NULL
        || (previous && (reason = couchpage_named_secret(cmd, "secret", previous,
                                                         &previous)) != NULL)) {
        return reason;
    }
    if (!secrets_read) {
        apr_pool_cleanup_register(cmd->pool, &secrets_read, forget_secrets,
                                  apr_pool_cleanup_null);
    }
    secrets_read = apr_psprintf(cmd->pool, "%s%" APR_SIZE_T_FMT ":%s%" APR_SIZE_T_FMT ":%s",
                                secrets_read ? secrets_read : "", strlen(secret), secret,
                                previous ? strlen(previous) : 0, previous ? previous : "");
    /* derived once, here in the config pool: a page only encrypts */
    reason = cp_seal_keys_derive(cmd->pool, secret, previous, &conf->token_key,
                                 &conf->previous_token_key);
    if (reason) {
        return apr_pstrcat(cmd->pool, "CouchPageTokenSecret: ", reason, NULL);
    }
    /* where tokens are sealed, their keys are confidential: the backend's
     * log lines show their lengths only */
    conf->backend.hide_keys = 1;
    conf->token_secret_set = 1;
    return NULL;
}

static const char *set_max_token_length(cmd_parms *cmd, void *dirconf, const char *arg)
{
    couchpage_dir_conf *conf = dirconf;
    apr_int64_t n;
    const char *err = parse_server_bounded(cmd, arg, 64, 65536, &n);

    if (!err) {
        conf->max_token_length = (apr_size_t)n;
        conf->max_token_length_set = 1;
    }
    return err;
}

static const char *set_max_emits(cmd_parms *cmd, void *dirconf, const char *arg)
{
    couchpage_dir_conf *conf = dirconf;
    apr_int64_t n;
    const char *err = parse_server_bounded(cmd, arg, 1, CP_TOKEN_MAX_EMITS, &n);

    if (!err) {
        conf->view.max_emits = (int)n;
        conf->max_emits_set = 1;
    }
    return err;
}

static const char *set_jump_reach(cmd_parms *cmd, void *dirconf, const char *arg)
{
    couchpage_dir_conf *conf = dirconf;
    apr_int64_t n;
    const char *err = parse_server_bounded(cmd, arg, 0, MAX_JUMP_REACH, &n);

    if (!err) {
        conf->jump_reach = (int)n;
        conf->jump_reach_set = 1;
    }
    return err;
}

static const char *set_update(cmd_parms *cmd, void *dirconf, const char *arg)
{
    const char *forbidden = ap_check_cmd_context(cmd, NOT_IN_HTACCESS);
    couchpage_dir_conf *conf = dirconf;

    if (forbidden) {
        return forbidden;
    }
    conf->view.update = cp_view_update_named(arg);
    if (!conf->view.update) {
        return apr_psprintf(cmd->pool, "CouchPageUpdate: '%s' is not true, false or lazy", arg);
    }
    conf->update_set = 1;
    return NULL;
}

/* What a _find location's count may cost CouchDB: server config, as every
 * cost is. */
static const char *set_count(cmd_parms *cmd, void *dirconf, const char *word,
                             const char *n)
{
    const char *forbidden = ap_check_cmd_context(cmd, NOT_IN_HTACCESS);
    const char *argv[2] = { word, n };
    couchpage_dir_conf *conf = dirconf;
    const char *err;

    if (forbidden) {
        return forbidden;
    }
    err = cp_count_policy_parse(cmd->pool, n ? 2 : 1, argv, &conf->count);
    if (err) {
        return apr_pstrcat(cmd->pool, "CouchPageCount: ", err, NULL);
    }
    conf->count_set = 1;
    return NULL;
}

/* The page is the same for every client: the module reads CouchDB with its
 * own credentials. A shared cache may keep it (RFC 9111 keeps responses to
 * requests with Authorization out, unless 'public' or s-maxage); 'private' keeps it in
 * browsers only, for locations whose range or partition depends on who
 * asks. The words and the value they make: couchpage_cache.h. */
static const char *set_max_age(cmd_parms *cmd, void *dirconf, int argc, char *const argv[])
{
    couchpage_dir_conf *conf = dirconf;
    const char *err = cp_cache_control_parse(cmd->pool, argc, (const char *const *)argv,
                                             &conf->cache_control);

    if (err) {
        return apr_pstrcat(cmd->pool, cmd->directive->directive, ": ", err, NULL);
    }
    conf->cache_control_set = 1;
    return NULL;
}

/* The directives of a _find location (CouchPageView .../DB/_find): which
 * documents (CouchPageSelector), their order (CouchPageSort) and the index
 * that serves them (CouchPageIndex). Whether they suit the location's
 * CouchPageView is checked on the merged configuration
 * (mod_couchpage_check.c). */

/* CouchPageSelector JSON: a Mango selector, read and checked now; its
 * strings holding %{...} are expressions yielding JSON per request, as
 * CouchPageRange's bounds (parse_bound), each parsed once, now. */
static const char *set_selector(cmd_parms *cmd, void *dirconf, const char *arg)
{
    const char *forbidden = ap_check_cmd_context(cmd, NOT_IN_HTACCESS);
    couchpage_dir_conf *conf = dirconf;
    apr_array_header_t *placeholders;
    const json_t *selector;
    const char *err = NULL;
    int i;

    if (forbidden) {
        return forbidden;
    }
    selector = cp_json_load(cmd->pool, arg, strlen(arg), &err);
    if (!selector) {
        return apr_psprintf(cmd->pool, "CouchPageSelector: '%s' is not JSON (%s)",
                            ap_escape_logitem(cmd->pool, arg), err ? err : "unreadable");
    }
    err = cp_mango_check_selector(cmd->pool, selector);
    if (err) {
        return apr_psprintf(cmd->pool, "CouchPageSelector: the selector %s", err);
    }
    placeholders = apr_array_make(cmd->temp_pool, 4, sizeof(const char *));
    cp_mango_selector_placeholders(selector, placeholders);
    conf->find_values = apr_hash_make(cmd->pool);
    for (i = 0; i < placeholders->nelts; i++) {
        const char *text = APR_ARRAY_IDX(placeholders, i, const char *);
        couchpage_key_bound *value = apr_pcalloc(cmd->pool, sizeof(*value));

        err = couchpage_expr_parse(cmd, "value", text, "expression", &value->expr);
        if (err) {
            return err;
        }
        /* a request's text is never the selector's JSON: only a JSON string */
        if (!cp_mango_placeholder_is_json_string(text)) {
            return apr_psprintf(cmd->pool, "CouchPageSelector: the value '%s' is not one "
                                "%%{json:...} and nothing else: a request value given "
                                "otherwise could be any JSON, an operator such as "
                                "{\"$regex\": \".*\"} too; write \"%%{json:%%{HTTP:X-Name}}\"",
                                ap_escape_logitem(cmd->pool, text));
        }
        apr_hash_set(conf->find_values, text, APR_HASH_KEY_STRING, value);
    }
    conf->find_selector = selector;
    conf->find_selector_set = 1;
    conf->find_selector_where = cmd->directive;
    return NULL;
}

/* CouchPageSort FIELD...: read for both directions now, so that
 * CouchPageDescending, from this section or another, only chooses. */
static const char *set_sort(cmd_parms *cmd, void *dirconf, const char *args)
{
    const char *forbidden = ap_check_cmd_context(cmd, NOT_IN_HTACCESS);
    couchpage_dir_conf *conf = dirconf;
    apr_array_header_t *names = apr_array_make(cmd->temp_pool, 4, sizeof(const char *));
    cp_find_sort *sort = apr_pcalloc(cmd->pool, 2 * sizeof(*sort));
    const char *name, *err;

    if (forbidden) {
        return forbidden;
    }
    while ((name = couchpage_next_word(cmd->pool, &args)) != NULL) {
        APR_ARRAY_PUSH(names, const char *) = name;
    }
    err = cp_find_sort_init(cmd->pool, (const char *const *)names->elts, names->nelts, 0,
                            &sort[0]);
    if (!err) {
        err = cp_find_sort_init(cmd->pool, (const char *const *)names->elts, names->nelts,
                                1, &sort[1]);
    }
    if (err) {
        return apr_pstrcat(cmd->pool, "CouchPageSort ", err, NULL);
    }
    conf->find_sort = sort;
    conf->find_sort_set = 1;
    conf->find_sort_where = cmd->directive;
    return NULL;
}

/* CouchPageIndex DDOC [NAME]: Mango's use_index, without fallback. */
static const char *set_index(cmd_parms *cmd, void *dirconf, const char *ddoc,
                             const char *name)
{
    const char *forbidden = ap_check_cmd_context(cmd, NOT_IN_HTACCESS);
    couchpage_dir_conf *conf = dirconf;

    if (forbidden) {
        return forbidden;
    }
    if (!*ddoc || (name && !*name)) {
        return "CouchPageIndex takes a design document's name and an optional index name";
    }
    if (!cp_json_quote(cmd->pool, ddoc) || (name && !cp_json_quote(cmd->pool, name))) {
        return "CouchPageIndex: a name is not valid UTF-8";
    }
    conf->find_index_ddoc = ddoc;
    conf->find_index_name = name;
    conf->find_index_set = 1;
    conf->find_index_where = cmd->directive;
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

    conf->handler = !strstr(arg, "%{") && strcasecmp(arg, "couchpage") == 0
                  ? COUCHPAGE_HANDLER_COUCHPAGE : COUCHPAGE_HANDLER_OTHER;
    conf->handler_where = cmd->directive;
    return DECLINE_CMD;
}

/* Where each directive may stand. Only presentation may be set in .htaccess
 * (with AllowOverride FileInfo, which SetHandler needs too): the page size,
 * never above the CouchPageMaxSize of the server's configuration (a request
 * whose merged size is above it is answered 500), the format, the items, the
 * words, the page links (never more than CouchPageMaxLinks) and
 * Cache-Control. What decides what is asked of
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
    AP_INIT_TAKE1("CouchPageBackendDeadline", set_backend_deadline, NULL, SERVER_ONLY,
        "seconds a page's backend reads may take together, 1 to 3600 (default 30): "
        "then the page is 504"),
    AP_INIT_RAW_ARGS("CouchPageRange", set_range, NULL, SERVER_ONLY,
        "the lowest and highest key shown, each JSON or an expression giving JSON "
        "('' for no bound); use %{json:...} for request values"),
    AP_INIT_TAKE1("CouchPagePartition", set_partition, NULL, SERVER_ONLY,
        "an expression giving the partition of a partitioned database"),
    AP_INIT_FLAG("CouchPageDescending", set_view_flag, (void *)VIEW_DESCENDING, SERVER_ONLY,
        "On pages the view in reverse order (default Off)"),
    AP_INIT_FLAG("CouchPageReduce", set_view_flag, (void *)VIEW_REDUCE, SERVER_ONLY,
        "On pages the view's grouped reduce rows; Off (default) its map rows"),
    AP_INIT_TAKE1("CouchPageGroupLevel", set_group_level, NULL, SERVER_ONLY,
        "with CouchPageReduce On: 'exact' (default) or a group level from 0"),
    AP_INIT_FLAG("CouchPageIncludeDocs", set_view_flag, (void *)VIEW_INCLUDE_DOCS, SERVER_ONLY,
        "On adds each row's document to its item (default Off)"),
    AP_INIT_RAW_ARGS("CouchPageFields", couchpage_set_fields, NULL, SERVER_ONLY,
        "with CouchPageIncludeDocs On, or on a _find location: the document members each "
        "item's doc carries in JSON, by name (as Mango's fields: title date summary); * for "
        "all (default)"),
    AP_INIT_TAKE1("CouchPageFormat", couchpage_set_format, NULL, PRESENTATION,
        "json, html, or auto (default): by the Accept header; ?format= overrides"),
    AP_INIT_TAKE12("CouchPageItem", couchpage_set_item, NULL, PRESENTATION,
        "what an HTML item shows: a field path (key, value.title, doc.name, key[1], id) "
        "and an optional link pattern with {field} placeholders"),
    AP_INIT_TAKE1("CouchPageItemTemplate", couchpage_set_item_template, NULL, PRESENTATION,
        "an item's inner HTML, an expression in httpd's syntax: trusted markup with "
        "%{couchpage_html:FIELD}, %{couchpage_url:FIELD}, %{couchpage_number:FIELD} and "
        "%{couchpage_date:FIELD} for the row's values, always escaped; "
        "%{couchpage_escape:TEXT} escapes request values"),
    AP_INIT_TAKE2("CouchPageText", couchpage_set_text, NULL, PRESENTATION,
        "a word of the HTML fragment and its text in UTF-8: first, previous, next, last, of, "
        "empty, nav-label, current, thousands, error, page, more, jump or go"),
    AP_INIT_TAKE1("CouchPageLinks", set_links, NULL, PRESENTATION,
        "how many numbered page links to show either side, 0 to 20 (default 0), never "
        "more than CouchPageMaxLinks"),
    /* each link is a page's rows read from CouchDB: never .htaccess's */
    AP_INIT_TAKE1("CouchPageMaxLinks", set_max_links, NULL, SERVER_ONLY,
        "the most page links either side CouchPageLinks may show, 0 to 20 (default 5): "
        "a larger CouchPageLinks in .htaccess shows this many"),
    AP_INIT_TAKE12("CouchPageTokenSecret", set_token_secret, NULL, SERVER_ONLY,
        "a secret of 32 random bytes or more (openssl rand -base64 32), or file:PATH of a "
        "file that holds it, that makes tokens opaque: encrypted and authenticated "
        "(AES-256-SIV), bound to the location; a second, previous secret is still "
        "accepted, for rotation"),
    AP_INIT_TAKE1("CouchPageMaxTokenLength", set_max_token_length, NULL, SERVER_ONLY,
        "the longest start token accepted, in bytes, 64 to 65536 (default 4096)"),
    /* it bounds what a client's token makes the module ask of CouchDB:
     * never .htaccess's */
    AP_INIT_TAKE1("CouchPageMaxEmits", set_max_emits, NULL, SERVER_ONLY,
        "the most rows one document emits under one key in the view, 1 to 1000 "
        "(default 64): a start token's row index stays below it, and it bounds every "
        "query's limit and skip"),
    /* a jump's skip is paid row by row by CouchDB: never .htaccess's */
    AP_INIT_TAKE1("CouchPageJumpReach", set_jump_reach, NULL, SERVER_ONLY,
        "how many pages from either end of a numbered location ?page=N reaches, 0 to 1000 "
        "(default 10; 0: none): a page further in is refused, as its read would skip "
        "that many pages' rows"),
    AP_INIT_TAKE1("CouchPageUpdate", set_update, NULL, SERVER_ONLY,
        "CouchDB's update for every query: true (CouchDB's default) brings the index up "
        "to date first, lazy answers from the index as it is and updates it after, "
        "false never updates it"),
    AP_INIT_FLAG("CouchPageStable", set_view_flag, (void *)VIEW_STABLE, SERVER_ONLY,
        "CouchDB's stable for every query: On reads the same copy of each shard "
        "(a cluster's pages stay consistent), Off (CouchDB's default) the fastest"),
    AP_INIT_TAKE_ARGV("CouchPageMaxAge", set_max_age, NULL, PRESENTATION,
        "seconds a page may be kept by caches (Cache-Control: max-age), 0 to 31536000, "
        "then optionally public or private, s-maxage=S, stale-while-revalidate=S, "
        "stale-if-error=S; default: no Cache-Control on pages"),
    AP_INIT_TAKE1("CouchPageSelector", set_selector, NULL, SERVER_ONLY,
        "a _find location's Mango selector, a JSON object; a string holding %{...} is "
        "an expression yielding JSON per request: use %{json:...} for request values"),
    AP_INIT_RAW_ARGS("CouchPageSort", set_sort, NULL, SERVER_ONLY,
        "a _find location's sort fields (nested with dots), before _id, which breaks "
        "ties; required there"),
    AP_INIT_TAKE12("CouchPageIndex", set_index, NULL, SERVER_ONLY,
        "a _find location's index: its design document and optional name (use_index, "
        "never a fallback); default: CouchDB chooses"),
    AP_INIT_TAKE12("CouchPageCount", set_count, NULL, SERVER_ONLY,
        "what a _find location's count may read: exact, capped N (at least N beyond) or "
        "none; default: capped 1000"),
    { NULL }
};
