/* SPDX-License-Identifier: Apache-2.0 */
/* couchpage_cache: a page's Cache-Control from CouchPageMaxAge's words
 * (see couchpage_cache.h). */
#include "couchpage_cache.h"

#include <apr_strings.h>
#include <string.h>
#include <strings.h>

#include "couchpage_settings.h"

/* The words that carry seconds after the first, in the order the value
 * writes them. */
static const char *const TIMED[] = { "s-maxage", "stale-while-revalidate", "stale-if-error" };
#define N_TIMED (sizeof(TIMED) / sizeof(TIMED[0]))

const char *cp_cache_control_parse(apr_pool_t *pool, int argc, const char *const *argv,
                                   const char **value)
{
    apr_int64_t max_age, timed[N_TIMED];
    const char *scope = NULL, *out;
    apr_size_t k;
    int i;

    if (argc < 1) {
        return "takes the seconds a page may be kept, then optionally public or private, "
               "s-maxage=S, stale-while-revalidate=S, stale-if-error=S";
    }
    if ((out = cp_settings_whole_number(pool, NULL, argv[0], 0, CP_CACHE_MAX_SECONDS,
                                        &max_age))) {
        return out;
    }
    for (k = 0; k < N_TIMED; k++) {
        timed[k] = -1;
    }
    for (i = 1; i < argc; i++) {
        const char *word = argv[i], *eq = strchr(word, '=');

        if (!strcasecmp(word, "public") || !strcasecmp(word, "private")) {
            const char *named = strcasecmp(word, "public") ? "private" : "public";

            if (scope) {
                return !strcmp(scope, named)
                       ? apr_psprintf(pool, "'%s' is given twice", named)
                       : "public and private contradict each other: give one of them";
            }
            scope = named;
            continue;
        }
        for (k = 0; k < N_TIMED; k++) {
            apr_size_t len = strlen(TIMED[k]);

            if (!strncasecmp(word, TIMED[k], len) && (word[len] == '=' || !word[len])) {
                break;
            }
        }
        if (k == N_TIMED) {
            return apr_psprintf(pool, "'%s' is neither public nor private, nor s-maxage=S, "
                                "stale-while-revalidate=S or stale-if-error=S", word);
        }
        if (timed[k] >= 0) {
            return apr_psprintf(pool, "'%s' is given twice", TIMED[k]);
        }
        if (!eq || cp_settings_whole_number(pool, NULL, eq + 1, 0, CP_CACHE_MAX_SECONDS,
                                            &timed[k])) {
            return apr_psprintf(pool, "'%s': %s= takes a whole number of seconds "
                                "from 0 to %d", word, TIMED[k], CP_CACHE_MAX_SECONDS);
        }
    }
    /* s-maxage speaks to shared caches, which private keeps the page from */
    if (scope && !strcmp(scope, "private") && timed[0] >= 0) {
        return "s-maxage is for shared caches, which private keeps the page from: "
               "give one of them";
    }
    out = apr_psprintf(pool, "%s%smax-age=%" APR_INT64_T_FMT, scope ? scope : "",
                       scope ? ", " : "", max_age);
    for (k = 0; k < N_TIMED; k++) {
        if (timed[k] >= 0) {
            out = apr_psprintf(pool, "%s, %s=%" APR_INT64_T_FMT, out, TIMED[k], timed[k]);
        }
    }
    *value = out;
    return NULL;
}
