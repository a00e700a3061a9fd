/* SPDX-License-Identifier: Apache-2.0 */
/*
 * couchpage_memory.c: a process's sets of remembered keys, and the notes
 * some keys carry (see couchpage_memory.h). Part of the httpd-free core:
 * no httpd header, no request_rec.
 */
#include "couchpage_memory.h"

#include <apr_strings.h>
#if APR_HAS_THREADS
#include <apr_thread_mutex.h>
#endif
#include <stdlib.h>
#include <string.h>

struct cp_memory {
    apr_pool_t *pool;
    apr_hash_t *keys;
#if APR_HAS_THREADS
    apr_thread_mutex_t *lock;
#endif
};

cp_memory *cp_memory_make(apr_pool_t *pool)
{
    cp_memory *set = apr_pcalloc(pool, sizeof(*set));

    set->pool = pool;
    set->keys = apr_hash_make(pool);
#if APR_HAS_THREADS
    if (apr_thread_mutex_create(&set->lock, APR_THREAD_MUTEX_DEFAULT, pool) != APR_SUCCESS) {
        return NULL;
    }
#endif
    return set;
}

static void lock(cp_memory *set)
{
#if APR_HAS_THREADS
    apr_thread_mutex_lock(set->lock);
#endif
}

static void unlock(cp_memory *set)
{
#if APR_HAS_THREADS
    apr_thread_mutex_unlock(set->lock);
#endif
}

int cp_memory_has(cp_memory *set, const void *key, apr_ssize_t len)
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

int cp_memory_add(cp_memory *set, const void *key, apr_ssize_t len)
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

/* A key's note: its text in a buffer of the set's pool, reused while the
 * text fits (a note rewritten each minute costs no memory), and when. */
typedef struct {
    char *text;
    apr_size_t size;
    apr_time_t written;
} memory_note;

void cp_memory_note_put(cp_memory *set, const char *key, const char *text)
{
    memory_note *note;
    apr_size_t len = strlen(text) + 1;

    if (!set) {
        return;
    }
    lock(set);
    note = apr_hash_get(set->keys, key, APR_HASH_KEY_STRING);
    if (!note) {
        note = apr_pcalloc(set->pool, sizeof(*note));
        apr_hash_set(set->keys, apr_pstrdup(set->pool, key), APR_HASH_KEY_STRING, note);
    }
    if (note->size < len) {
        note->size = len < 64 ? 64 : len;
        note->text = apr_palloc(set->pool, note->size);
    }
    memcpy(note->text, text, len);
    note->written = apr_time_now();
    unlock(set);
}

const char *cp_memory_note_get(cp_memory *set, const char *key, apr_interval_time_t max_age,
                               apr_pool_t *pool, int *learn_again)
{
    memory_note *note;
    const char *text = NULL;
    apr_time_t now = apr_time_now();

    *learn_again = 0;
    if (!set) {
        return NULL;
    }
    lock(set);
    note = apr_hash_get(set->keys, key, APR_HASH_KEY_STRING);
    if (note && note->text) {
        text = apr_pstrdup(pool, note->text);
        if (now - note->written > max_age) {
            /* this caller learns it again; the others keep the old note
             * meanwhile, rather than all asking at once */
            note->written = now;
            *learn_again = 1;
        }
    }
    unlock(set);
    return text;
}

const char *cp_thread_memo_get(const cp_thread_memo *memo, apr_pool_t *pool, const char *from)
{
    int i;

    for (i = 0; i < CP_THREAD_MEMO_SLOTS; i++) {
        if (memo->slot[i].from && !strcmp(memo->slot[i].from, from)) {
            return apr_pstrdup(pool, memo->slot[i].made);
        }
    }
    return NULL;
}

void cp_thread_memo_put(cp_thread_memo *memo, const char *from, const char *made)
{
    apr_size_t from_len = strlen(from) + 1, len = strlen(made) + 1;
    char *copy;

    if (from_len > CP_THREAD_MEMO_MAX || len > CP_THREAD_MEMO_MAX
        || !(copy = malloc(from_len + len))) {
        return;
    }
    free(memo->slot[memo->next].from);
    memcpy(copy, from, from_len);
    memcpy(copy + from_len, made, len);
    memo->slot[memo->next].from = copy;
    memo->slot[memo->next].made = copy + from_len;
    memo->next = (memo->next + 1) % CP_THREAD_MEMO_SLOTS;
}
