/* SPDX-License-Identifier: Apache-2.0 */
/*
 * couchpage_view: what a location pages (CouchPageView and the options
 * that shape every query), a config object built once, when httpd reads
 * the configuration (its URL shown in messages without credentials), and
 * read by every request.
 *
 * Part of the httpd-free core: nothing here knows about request_rec or
 * the directory config.
 */
#ifndef COUCHPAGE_VIEW_H
#define COUCHPAGE_VIEW_H

#include <apr_pools.h>
#include <apr_tables.h>

#define CP_GROUP_EXACT (-1)

/* What a location pages, fixed at configuration time. */
typedef struct {
    const char *url;         /* as configured, no query string */
    const char *backend;     /* scheme://host[:port]: the server that answers */
    const char *db_url;      /* scheme://host/db: where a partition goes */
    const char *index_path;  /* /_design/D/_view/V, /_all_docs or /_find */
    int is_all_docs;         /* keys are the ids; no reduce parameter */
    int is_find;             /* a Mango query (POST .../_find), not a view */
    int is_partitioned;      /* the URL names a partition already */
    int descending;          /* pages run in reverse view order */
    int reduce;              /* grouped reduce rows instead of map rows */
    int group_level;         /* CP_GROUP_EXACT or a level, with reduce */
    int include_docs;        /* items carry their documents */
    const char *update;      /* CouchDB's update: "true", "false", "lazy"; NULL: not sent */
    const char *stable;      /* CouchDB's stable: "true", "false"; NULL: not sent */
    int max_emits;           /* the most rows one document emits under one key: a
                                token's row index is below it, and it bounds what
                                every query reads (cp_plan_max_reach) */
} cp_view;

/* Classifies a CouchPageView URL and fills url, backend, db_url,
 * index_path, is_all_docs, is_find and is_partitioned; the options are the
 * caller's. Returns NULL when it names a view, _all_docs or a database's
 * _find, else the reason it does not. */
const char *cp_view_init(apr_pool_t *pool, const char *url, cp_view *view);

/* A view URL fit for a message, as written, whether or not cp_view_init
 * takes it: any user and password before an '@' in its authority become
 * "***". */
const char *cp_view_url_shown(apr_pool_t *pool, const char *url);

/* CouchPageUpdate's word, in any case, as CouchDB takes it (lower case
 * only): "true", "false" or "lazy"; NULL for any other word. */
const char *cp_view_update_named(const char *word);

/* The start of every URL the location's queries go to: the view's URL, or
 * with a partition named per request (CouchPagePartition), the database's
 * URL and /_partition/. */
const char *cp_view_query_prefix(apr_pool_t *pool, const cp_view *view, int by_partition);

/* Whether mod_proxy serves url with the worker named name, as its worker
 * lookup tests it (ap_proxy_get_worker_ex, modules/proxy/proxy_util.c):
 * name, which mod_proxy normalised when it defined the worker (scheme and
 * host in lower case, no default port), starts url once url's
 * scheme://host[:port] is in lower case, and covers all of that part. A
 * ProxyPassMatch worker's name (is_pattern) may hold $N, each standing for
 * any run of characters, and \x for x. */
int cp_view_worker_serves(apr_pool_t *pool, const char *name, int is_pattern,
                          const char *url);

/* A view URL scheme the module serves, and the proxy modules it needs. */
typedef struct {
    const char *scheme;
    const char *modules[4]; /* source names, as httpd's ap_find_linked_module knows
                               them; NULL after the last */
} cp_view_scheme;

/* url's scheme (any case), or NULL when the module does not serve it. */
const cp_view_scheme *cp_view_scheme_of(const char *url);

/* NULL when the module serves url's scheme (http, https, balancer), else
 * the reason, naming the schemes it serves: CouchPageView's check. */
const char *cp_view_scheme_fault(apr_pool_t *pool, const char *url);

/* The modules of scheme that loaded(name) says are not loaded, as the
 * start-up message lists them ("mod_proxy_http (LoadModule
 * proxy_http_module), ..."); NULL when every one is. */
const char *cp_view_scheme_missing(apr_pool_t *pool, const cp_view_scheme *scheme,
                                   int (*loaded)(const char *module));

/* Of mod_proxy's plain worker names (const char *), the first for url's
 * scheme and port on another host name, which an operator may take for
 * url's (localhost for 127.0.0.1): mod_proxy compares host names as
 * written. NULL when none is. */
const char *cp_view_worker_of_other_host(apr_pool_t *pool, const apr_array_header_t *names,
                                         const char *url);

/* Whether this location's rows and tokens carry document ids. */
int cp_view_has_docids(const cp_view *view);

/* A design document's path, /_design/NAME escaped: ddoc names it with or
 * without _design/, as CouchPageIndex and use_index do. */
const char *cp_view_ddoc_path(apr_pool_t *pool, const char *ddoc);

/* The URL of the view's database followed by rest: the view's URL
 * without its index path (/_find, /_design/D/_view/V, and the partition
 * before it, /_partition/P/_find, when the URL names one). */
const char *cp_view_db_url(apr_pool_t *pool, const cp_view *view, const char *rest);

/* The URL of rest (/_explain, /_design/D/_view/V) beside the _find of
 * find_url: in its database (.../DB/_find), or in its partition
 * (.../DB/_partition/P/_find), where CouchDB reads a partitioned index's
 * view and explains the partition's query. */
const char *cp_view_beside_find(apr_pool_t *pool, const char *find_url, const char *rest);

#endif
