/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mod_couchpage_child.c: the sets a child process's requests keep, in the
 * core's couchpage_memory (backends without the multi-query endpoint, the
 * memory cp_serve's transport has of _find indexes and warnings); and the
 * child's set-up (child_init): the quiet twins through which mod_proxy's lines for
 * the module's subrequests are kept to crit, and malloc's mmap threshold.
 */
#include "mod_couchpage_child.h"
#include "mod_couchpage_module.h"
#include "couchpage_memory.h"

#include "http_log.h"
#include "apr_hash.h"
#include "apr_strings.h"
#ifdef __GLIBC__
#include <malloc.h>
#endif

APLOG_USE_MODULE(couchpage);

/* What the module's subrequests log of mod_proxy's (see
 * couchpage_child_quiet_proxy): the module indexes of mod_proxy and its
 * modules (mod_proxy_http, mod_proxy_balancer, ...), and for each server of
 * this process (keyed by its address) its quiet twin, made once a process,
 * since a backend connection that mod_proxy makes for a subrequest keeps
 * the subrequest's server for as long as it is pooled. */
static int proxy_index = -1;
static apr_array_header_t *proxy_modules;
static apr_hash_t *quiet_servers;

/* A request that reads a large answer allocates a few large blocks (the
 * body, its rows, simdjson's working memory) and frees them at its end.
 * glibc's malloc raises its mmap threshold to the size of every mmapped
 * block freed (up to 32 MB), and its heap's trim threshold to twice that:
 * after one large answer, the next ones' blocks come from the heap, and up
 * to 64 MB of it stays with the child, free, for good. A fixed threshold
 * turns that adjustment off: blocks of CP_MMAP_THRESHOLD and more are
 * mapped, and unmapped when freed. */
#define CP_MMAP_THRESHOLD (256 * 1024)

/* A module's level in a log config (ap_get_module_loglevel, which AP_DEBUG
 * builds lack). */
static int module_level(const struct ap_logconf *log, int index)
{
    return log->module_levels && log->module_levels[index] >= 0
           ? log->module_levels[index] : log->level;
}

/* A copy of log in which mod_proxy's modules write only critical lines. */
static struct ap_logconf *quiet_log_config(apr_pool_t *pool, const struct ap_logconf *log)
{
    struct ap_logconf *quiet = ap_new_log_config(pool, log);
    int i;

    for (i = 0; i < proxy_modules->nelts; i++) {
        int index = APR_ARRAY_IDX(proxy_modules, i, int);

        if (module_level(quiet, index) > APLOG_CRIT) {
            ap_set_module_loglevel(pool, quiet, index, APLOG_CRIT);
        }
    }
    return quiet;
}

/* mod_proxy's modules, and a quiet twin of each server: a copy whose own
 * log config is quiet_log_config's (mod_proxy logs some lines with
 * ap_log_error on the request's server, which no request's log config
 * reaches). The twins live as long as the process. */
static void quiet_init(apr_pool_t *pchild, server_rec *main_server)
{
    module *m;
    server_rec *s;

    proxy_modules = apr_array_make(pchild, 8, sizeof(int));
    for (m = ap_top_module; m; m = m->next) {
        if (strncmp(m->name, "mod_proxy", 9) == 0) {
            APR_ARRAY_PUSH(proxy_modules, int) = m->module_index;
        }
        if (strcmp(m->name, "mod_proxy.c") == 0) {
            proxy_index = m->module_index;
        }
    }
    quiet_servers = apr_hash_make(pchild);
    for (s = main_server; s; s = s->next) {
        server_rec *twin = apr_pmemdup(pchild, s, sizeof(*s));
        server_rec **key = apr_pmemdup(pchild, &s, sizeof(s));

        twin->log = *quiet_log_config(pchild, &s->log);
        apr_hash_set(quiet_servers, key, sizeof(*key), twin);
    }
}

/* What the module's requests remember in this child: the backends that
 * have no multi-query endpoint (their queries go as one GET each), what it
 * learnt of the indexes _find locations name (cp_serve's notes), and the
 * _find locations whose CouchDB warning it has logged. */
static cp_memory *no_batch, *index_notes, *find_warned;

/* A set of this child's, named what in the error log when it has no mutex:
 * then it holds nothing and remembers nothing. */
static cp_memory *child_set_make(apr_pool_t *pchild, server_rec *s, const char *what)
{
    cp_memory *set = cp_memory_make(pchild);

    if (!set) {
        ap_log_error(APLOG_MARK, APLOG_ERR, 0, s, CPLOGNO(0108) "no mutex for the "
                     "memory of %s: nothing of it is remembered", what);
    }
    return set;
}

int couchpage_child_lacks_batch(const char *backend)
{
    return cp_memory_has(no_batch, backend, APR_HASH_KEY_STRING);
}

int couchpage_child_learn_lacks_batch(const char *backend)
{
    return cp_memory_add(no_batch, backend, APR_HASH_KEY_STRING);
}

static const char *index_note_get(void *baton, const char *key, apr_interval_time_t max_age,
                                  apr_pool_t *pool, int *again)
{
    return cp_memory_note_get(index_notes, key, max_age, pool, again);
}

static void index_note_put(void *baton, const char *key, const char *text)
{
    cp_memory_note_put(index_notes, key, text);
}

static int first_warning(void *baton, const void *key, apr_size_t len)
{
    return cp_memory_add(find_warned, key, (apr_ssize_t)len);
}

void couchpage_child_memory(cp_transport *transport)
{
    transport->note_get = index_note_get;
    transport->note_put = index_note_put;
    transport->first_time = first_warning;
}

static void child_init(apr_pool_t *pchild, server_rec *s)
{
    quiet_init(pchild, s);
    no_batch = child_set_make(pchild, s, "backends without a multi-query endpoint");
    index_notes = child_set_make(pchild, s, "the indexes of _find locations");
    find_warned = child_set_make(pchild, s, "_find locations warned of");
#if defined(__GLIBC__) && defined(M_MMAP_THRESHOLD)
    if (!mallopt(M_MMAP_THRESHOLD, CP_MMAP_THRESHOLD)) {
        ap_log_error(APLOG_MARK, APLOG_WARNING, 0, s, CPLOGNO(0190) "mallopt("
                     "M_MMAP_THRESHOLD) failed: memory of large answers may stay with "
                     "the child after its request");
    }
#endif
}

void couchpage_child_register(void)
{
    ap_hook_child_init(child_init, NULL, NULL, APR_HOOK_MIDDLE);
}

/* mod_proxy's own lines for the module's subrequests: only critical ones.
 * The module reports what its reads came to itself, one line for a page
 * that fails (CP0101, at error; a client's mistake at info), and what each
 * read met at info (CP0106, CP0115 to CP0121); mod_proxy's lines would add
 * four error lines a request when CouchDB is down (a refused connection and
 * a failed attempt for each try; more for a balancer's member it puts in
 * error state), and a client could make it write some (AH01110 when CouchDB cuts off a
 * multi-query answer because it refuses a query that the client's token
 * chose). Its lines written with the request (ap_log_rerror) follow the
 * subrequest's log config; those it writes with the server (ap_log_error:
 * connecting, a worker's state) follow the server's, so the subrequest
 * runs on the server's quiet twin (quiet_init). An operator who asks for
 * mod_proxy's lines, with LogLevel proxy:debug or couchpage:debug for the
 * request, gets them all as configured. */
void couchpage_child_quiet_proxy(request_rec *r, request_rec *rr)
{
    server_rec *twin;

    if (proxy_index < 0 || APLOGrdebug(r)
        || ap_get_request_module_loglevel(r, proxy_index) >= APLOG_DEBUG) {
        return;
    }
    rr->log = quiet_log_config(rr->pool, rr->log ? rr->log
                                         : rr->connection->log ? rr->connection->log
                                         : &rr->server->log);
    twin = apr_hash_get(quiet_servers, &rr->server, sizeof(rr->server));
    if (twin) {
        rr->server = twin;
    }
}
