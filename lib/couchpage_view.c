/* SPDX-License-Identifier: Apache-2.0 */
/*
 * couchpage_view.c: a CouchPageView URL parsed into the view's parts, once,
 * when httpd reads the configuration, shown in messages without its
 * credentials, and matched against mod_proxy's worker names as mod_proxy
 * matches them; CouchPageUpdate's words. Part of the httpd-free core: no httpd
 * header, no request_rec.
 */
#include "couchpage_view.h"

#include <apr_lib.h>
#include <apr_escape.h>
#include <apr_strings.h>
#include <apr_uri.h>
#include <string.h>
#include <strings.h>

/* Splits path into the database part and the index part, which starts at
 * /_all_docs, /_find or /_design/ (after /_partition/P when there is one). */
static const char *split_index_path(apr_pool_t *pool, const char *url, const char *path,
                                    cp_view *view)
{
    apr_size_t len = strlen(path);
    const char *index, *partition;

    if (len > 10 && strcmp(path + len - 10, "/_all_docs") == 0) {
        view->is_all_docs = 1;
        index = path + len - 10;
    }
    else if (len > 6 && strcmp(path + len - 6, "/_find") == 0) {
        view->is_find = 1;
        index = path + len - 6;
    }
    else {
        const char *ddoc, *slash;

        index = strstr(path, "/_design/");
        if (!index) {
            return "must name a view (.../DB/_design/DDOC/_view/VIEW), .../DB/_all_docs "
                   "or .../DB/_find";
        }
        ddoc = index + 9;
        slash = strchr(ddoc, '/');
        if (!slash || slash == ddoc || strncmp(slash, "/_view/", 7) != 0
            || !slash[7] || strchr(slash + 7, '/')) {
            return "must name a view (.../DB/_design/DDOC/_view/VIEW), .../DB/_all_docs "
                   "or .../DB/_find";
        }
    }
    partition = strstr(path, "/_partition/");
    view->is_partitioned = partition != NULL && partition < index;
    if (index == path || (view->is_partitioned && partition == path)) {
        return "has no database before the view";
    }
    view->index_path = index;
    /* the database URL is the configured URL up to where the index starts */
    view->db_url = apr_pstrndup(pool, url, strlen(url) - strlen(index));
    if (view->is_partitioned) {
        view->db_url = apr_pstrndup(pool, view->db_url,
                                    strlen(view->db_url) - (index - partition));
        view->index_path = partition;
    }
    return NULL;
}

const char *cp_view_init(apr_pool_t *pool, const char *url, cp_view *view)
{
    apr_uri_t uri;

    if (apr_uri_parse(pool, url, &uri) != APR_SUCCESS || !uri.scheme || !uri.hostname) {
        return "must be an absolute URL such as "
               "http://127.0.0.1:5984/db/_design/ddoc/_view/name";
    }
    if (uri.query || uri.fragment) {
        return "must not have a query string or fragment; "
               "the CouchPage* directives set every view parameter";
    }
    if (uri.user || uri.password) {
        return "must not carry credentials; use CouchPageCredentials";
    }
    view->url = url;
    view->backend = apr_pstrcat(pool, uri.scheme, "://", uri.hostinfo, NULL);
    view->is_all_docs = 0;
    view->is_find = 0;
    return split_index_path(pool, url, uri.path ? uri.path : "", view);
}

const char *cp_view_url_shown(apr_pool_t *pool, const char *url)
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
    return apr_pstrcat(pool, apr_pstrndup(pool, url, authority - url), "***", at, NULL);
}

const char *cp_view_update_named(const char *word)
{
    static const char *const values[] = { "true", "false", "lazy" };
    int i;

    for (i = 0; i < 3; i++) {
        if (strcasecmp(word, values[i]) == 0) {
            return values[i];
        }
    }
    return NULL;
}

const char *cp_view_query_prefix(apr_pool_t *pool, const cp_view *view, int by_partition)
{
    return by_partition ? apr_pstrcat(pool, view->db_url, "/_partition/", NULL) : view->url;
}

/* Whether text starts with what pattern matches: $N matches any run of
 * characters, \x the character x, any other character itself. */
static int pattern_starts(const char *text, const char *pattern)
{
    for (; *pattern; pattern++, text++) {
        if (pattern[0] == '$' && apr_isdigit(pattern[1])) {
            while (pattern[0] == '$' && apr_isdigit(pattern[1])) {
                pattern += 2;
            }
            if (!*pattern) {
                return 1;
            }
            for (; *text; text++) {
                if (pattern_starts(text, pattern)) {
                    return 1;
                }
            }
            return 0;
        }
        if (pattern[0] == '\\' && pattern[1]) {
            pattern++;
        }
        if (*text != *pattern) {
            return 0;
        }
    }
    return 1;
}

int cp_view_worker_serves(apr_pool_t *pool, const char *name, int is_pattern,
                          const char *url)
{
    const char *authority = strstr(url, "://");
    char *lowered = apr_pstrdup(pool, url);
    apr_size_t head, i;

    if (!authority || !authority[3]) {
        return 0;
    }
    /* scheme://host[:port], the part every worker must cover */
    head = (apr_size_t)(authority + 3 - url) + strcspn(authority + 3, "/");
    for (i = 0; i < head; i++) {
        lowered[i] = (char)apr_tolower(lowered[i]);
    }
    if (strlen(name) < head || strlen(name) > strlen(url)) {
        return 0;
    }
    return is_pattern ? pattern_starts(lowered, name)
                      : strncmp(lowered, name, strlen(name)) == 0;
}

const char *cp_view_worker_of_other_host(apr_pool_t *pool, const apr_array_header_t *names,
                                         const char *url)
{
    apr_uri_t view, uri;
    int i;

    if (apr_uri_parse(pool, url, &view) != APR_SUCCESS || !view.hostname || !view.scheme) {
        return NULL;
    }
    for (i = 0; i < names->nelts; i++) {
        const char *name = APR_ARRAY_IDX(names, i, const char *);

        if (apr_uri_parse(pool, name, &uri) == APR_SUCCESS && uri.hostname && uri.scheme
            && strcasecmp(uri.scheme, view.scheme) == 0
            && (uri.port ? uri.port : apr_uri_port_of_scheme(uri.scheme))
               == (view.port ? view.port : apr_uri_port_of_scheme(view.scheme))
            && strcasecmp(uri.hostname, view.hostname) != 0) {
            return name;
        }
    }
    return NULL;
}

/* The proxy modules that serve a view URL's scheme: mod_proxy_http makes
 * the HTTP requests, mod_ssl the TLS of https, mod_proxy_balancer picks a
 * balancer's member (the members' own http:// needs mod_proxy_http). */
static const cp_view_scheme view_schemes[] = {
    { "http", { "mod_proxy.c", "mod_proxy_http.c", NULL } },
    { "https", { "mod_proxy.c", "mod_proxy_http.c", "mod_ssl.c" } },
    { "balancer", { "mod_proxy.c", "mod_proxy_balancer.c", "mod_proxy_http.c" } },
};
#define VIEW_SCHEMES (sizeof(view_schemes) / sizeof(view_schemes[0]))

const cp_view_scheme *cp_view_scheme_of(const char *url)
{
    const char *colon = strchr(url, ':');
    apr_size_t i;

    for (i = 0; colon && i < VIEW_SCHEMES; i++) {
        if (strlen(view_schemes[i].scheme) == (apr_size_t)(colon - url)
            && strncasecmp(url, view_schemes[i].scheme, colon - url) == 0) {
            return &view_schemes[i];
        }
    }
    return NULL;
}

const char *cp_view_scheme_fault(apr_pool_t *pool, const char *url)
{
    const char *reason = "has a scheme the module does not serve; use";
    apr_size_t i;

    if (cp_view_scheme_of(url)) {
        return NULL;
    }
    for (i = 0; i < VIEW_SCHEMES; i++) {
        reason = apr_pstrcat(pool, reason, !i ? " " : i + 1 < VIEW_SCHEMES ? ", " : " or ",
                             view_schemes[i].scheme, "://", NULL);
    }
    return reason;
}

const char *cp_view_scheme_missing(apr_pool_t *pool, const cp_view_scheme *scheme,
                                   int (*loaded)(const char *module))
{
    const char *missing = NULL;
    int i;

    for (i = 0; scheme->modules[i]; i++) {
        const char *module = scheme->modules[i];

        if (!loaded(module)) {
            /* "mod_proxy_http.c" is loaded as proxy_http_module */
            const char *name = apr_pstrndup(pool, module + 4, strlen(module) - 6);

            missing = apr_psprintf(pool, "%s%s%s (LoadModule %s_module)",
                                   missing ? missing : "", missing ? ", " : "",
                                   apr_pstrndup(pool, module, strlen(module) - 2), name);
        }
    }
    return missing;
}

int cp_view_has_docids(const cp_view *view)
{
    return !view->reduce;
}

const char *cp_view_ddoc_path(apr_pool_t *pool, const char *ddoc)
{
    if (!strncmp(ddoc, "_design/", 8)) {
        ddoc += 8;
    }
    return apr_pstrcat(pool, "/_design/", apr_pescape_path_segment(pool, ddoc), NULL);
}

const char *cp_view_db_url(apr_pool_t *pool, const cp_view *view, const char *rest)
{
    return apr_pstrcat(pool, apr_pstrndup(pool, view->url,
                                          strlen(view->url) - strlen(view->index_path)),
                       rest, NULL);
}

const char *cp_view_beside_find(apr_pool_t *pool, const char *find_url, const char *rest)
{
    const char *slash = strrchr(find_url, '/');

    return apr_pstrcat(pool, apr_pstrndup(pool, find_url, slash ? (apr_size_t)(slash - find_url)
                                                                : strlen(find_url)),
                       rest, NULL);
}
