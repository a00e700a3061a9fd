/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mod_couchpage_check.c: the start-up checks (the check_config hook) of the
 * configuration the directives of mod_couchpage_config.c made: each
 * section merged as a request at its path would merge it (httpd's location
 * walk, repeated), the modules a view's scheme needs, the mod_proxy worker
 * or balancer that serves a view; and couchpage_merged_fault, which a
 * request whose merged configuration start-up could not place meets. What
 * each merged configuration is at fault for, and the messages, are the
 * core's (couchpage_settings.c): this file places the sections. The
 * split mod_md has: its directives in mod_md_config.c, what it does with
 * the configuration at start-up apart. Glue: configuration time, and a
 * request's merged config only read.
 */
#include "mod_couchpage_check.h"
#include "mod_couchpage_named.h"
#include "couchpage_settings.h"

#include "http_core.h"
#include "http_log.h"
#include "apr_file_info.h"
#include "apr_file_io.h"
#include "apr_fnmatch.h"
#include "apr_hash.h"
#include "apr_strings.h"
#include "apr_user.h"

#include "couchpage_view.h"
#include "mod_proxy.h"

APLOG_USE_MODULE(couchpage);

/* httpd keeps no list of merged per-directory configurations: a request's
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
    unsigned sets;                  /* CP_SETS_*: what conf sets */
} config_section;

static unsigned sets_of(const couchpage_dir_conf *conf)
{
    if (!conf) {
        return 0;
    }
    return (conf->handler ? CP_SETS_HANDLER : 0) | (conf->view_set ? CP_SETS_VIEW : 0)
         | (conf->page_size_set ? CP_SETS_PAGE_SIZE : 0)
         | (conf->max_page_size_set ? CP_SETS_MAX_PAGE_SIZE : 0)
         | (conf->include_docs_set ? CP_SETS_INCLUDE_DOCS : 0)
         | (conf->item_set ? CP_SETS_ITEM : 0) | (conf->fields_set ? CP_SETS_FIELDS : 0)
         | (conf->format_set ? CP_SETS_FORMAT : 0)
         | (conf->links_set ? CP_SETS_LINKS : 0) | (conf->max_links_set ? CP_SETS_MAX_LINKS : 0)
         | (conf->range_set || conf->reduce_set || conf->group_level_set
            || conf->max_emits_set || conf->update_set || conf->stable_set
            || conf->find_selector_set || conf->find_sort_set || conf->find_index_set
            ? CP_SETS_QUERY : 0);
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
    section->sets = sets_of(section->conf);
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
        { "SetHandler", CP_SETS_HANDLER }, { "CouchPageSize", CP_SETS_PAGE_SIZE },
        { "CouchPageItem", CP_SETS_ITEM }, { "CouchPageItemTemplate", CP_SETS_ITEM },
        { "CouchPageFormat", CP_SETS_FORMAT }, { "CouchPageLinks", CP_SETS_LINKS },
    };
    unsigned sets = 0;
    apr_size_t i;

    if (!(core->override & OR_UNSET)) {
        sets |= core->override & OR_FILEINFO ? CP_SETS_FILEINFO : 0;
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

static const char *where_written(apr_pool_t *p, const void *directive)
{
    return couchpage_directive_where(p, directive);
}

/* The merged configuration's settings, as the core's checks read them. */
static void settings_of(const couchpage_dir_conf *conf, cp_settings *s)
{
    memset(s, 0, sizeof(*s));
    s->view = &conf->view;
    s->view_set = conf->view_set;
    s->view_where = conf->view_where;
    s->handler_set = conf->handler == COUCHPAGE_HANDLER_COUCHPAGE;
    s->handler_where = conf->handler_where;
    s->page_size = conf->page_size;
    s->page_size_set = conf->page_size_set;
    s->page_size_where = conf->page_size_where;
    s->max_page_size = conf->max_page_size;
    s->max_page_size_set = conf->max_page_size_set;
    s->max_page_size_where = conf->max_page_size_where;
    s->links = conf->links;
    s->links_set = conf->links_set;
    s->links_where = conf->links_where;
    s->max_links = conf->max_links;
    s->max_links_set = conf->max_links_set;
    s->max_links_where = conf->max_links_where;
    s->format_is_json = conf->format == CP_FORMAT_JSON;
    s->item_set = conf->item_set;
    s->item_is_template = conf->item_template != NULL;
    s->item_reads_doc = conf->item_reads_doc;
    s->item_read = conf->item_read;
    s->item_where = conf->item_where;
    s->fields = conf->fields;
    s->fields_set = conf->fields_set;
    s->fields_where = conf->fields_where;
    s->range_set = conf->range_set;
    s->reduce_set = conf->reduce_set;
    s->group_level_set = conf->group_level_set;
    s->include_docs_set = conf->include_docs_set;
    s->max_emits_set = conf->max_emits_set;
    s->selector_set = conf->find_selector_set;
    s->sort_set = conf->find_sort_set;
    s->index_set = conf->find_index_set;
    s->where = where_written;
}

const char *couchpage_merged_fault(apr_pool_t *p, const couchpage_dir_conf *conf)
{
    cp_settings settings;

    settings_of(conf, &settings);
    return cp_settings_request_fault(p, &settings);
}

/* One merged configuration and what other sections may change in it. */
static int check_merged(apr_pool_t *p, server_rec *s, const config_section *section,
                        const couchpage_dir_conf *merged, unsigned unknown)
{
    cp_settings settings;
    const char *fault, *code;

    if (merged->handler != COUCHPAGE_HANDLER_COUCHPAGE || (unknown & CP_SETS_HANDLER)) {
        return OK;
    }
    settings_of(merged, &settings);
    fault = cp_settings_startup_fault(p, &settings, unknown, section_name(p, section, s),
                                      &code);
    if (fault) {
        ap_log_error(APLOG_MARK, APLOG_ERR | APLOG_STARTUP, 0, s, "%s: %s", code, fault);
        return !OK;
    }
    return OK;
}

/* The view URL's scheme needs its proxy modules loaded: without them
 * mod_proxy answers every page's subrequest with an error that names
 * nothing of the module's. */
static int module_loaded(const char *module)
{
    return ap_find_linked_module(module) != NULL;
}

static int check_view_modules(apr_pool_t *p, server_rec *s, const couchpage_dir_conf *conf)
{
    const cp_view_scheme *scheme;
    const char *missing;

    if (!conf || !conf->view_set || !(scheme = cp_view_scheme_of(conf->view.url))
        || !(missing = cp_view_scheme_missing(p, scheme, module_loaded))) {
        return OK;
    }
    ap_log_error(APLOG_MARK, APLOG_ERR | APLOG_STARTUP, 0, s, CPLOGNO(0114)
                 "CouchPageView %s (%s): %s:// needs modules that are not loaded: %s",
                 conf->view.url, couchpage_directive_where(p, conf->view_where),
                 scheme->scheme, missing);
    return !OK;
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
    apr_array_header_t *plain = apr_array_make(p, 4, sizeof(const char *));
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
        if (!is_pattern) {
            APR_ARRAY_PUSH(plain, const char *) = name;
        }
    }
    other = cp_view_worker_of_other_host(p, plain, url);
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
