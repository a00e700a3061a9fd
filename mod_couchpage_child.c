/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mod_couchpage_child.c: a child process's sets of remembered keys (see
 * mod_couchpage_child.h).
 */
#include "mod_couchpage_child.h"
#include "mod_couchpage_module.h"

#include "http_log.h"
#include "apr_hash.h"
#include "apr_strings.h"
#if APR_HAS_THREADS
#include "apr_thread_mutex.h"
#endif

APLOG_USE_MODULE(couchpage);

struct couchpage_child_set {
    apr_pool_t *pool;
    apr_hash_t *keys;
#if APR_HAS_THREADS
    apr_thread_mutex_t *lock;
#endif
};

couchpage_child_set *couchpage_child_set_make(apr_pool_t *pchild, server_rec *s,
                                              const char *what)
{
    couchpage_child_set *set = apr_pcalloc(pchild, sizeof(*set));

    set->pool = pchild;
    set->keys = apr_hash_make(pchild);
#if APR_HAS_THREADS
    if (apr_thread_mutex_create(&set->lock, APR_THREAD_MUTEX_DEFAULT, pchild)
        != APR_SUCCESS) {
        ap_log_error(APLOG_MARK, APLOG_ERR, 0, s, CPLOGNO(0108) "no mutex for the "
                     "memory of %s: nothing of it is remembered", what);
        return NULL;
    }
#endif
    return set;
}

static void lock(couchpage_child_set *set)
{
#if APR_HAS_THREADS
    apr_thread_mutex_lock(set->lock);
#endif
}

static void unlock(couchpage_child_set *set)
{
#if APR_HAS_THREADS
    apr_thread_mutex_unlock(set->lock);
#endif
}

int couchpage_child_set_has(couchpage_child_set *set, const void *key, apr_ssize_t len)
{
    int has;

    if (!set) {
        return 0;
    }
    lock(set);
    has = apr_hash_get(set->keys, key, len) != NULL;
    unlock(set);
    return has;
}

int couchpage_child_set_add(couchpage_child_set *set, const void *key, apr_ssize_t len)
{
    int added;

    if (!set) {
        return 0;
    }
    lock(set);
    added = apr_hash_get(set->keys, key, len) == NULL;
    if (added) {
        apr_size_t size = len == APR_HASH_KEY_STRING ? strlen(key) + 1 : (apr_size_t)len;

        apr_hash_set(set->keys, apr_pmemdup(set->pool, key, size), len, "");
    }
    unlock(set);
    return added;
}
