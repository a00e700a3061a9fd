/* SPDX-License-Identifier: Apache-2.0 */
/*
 * couchpage_read.c: what one backend read came to (see couchpage_read.h).
 * Part of the httpd-free core: no httpd header, no request_rec.
 */
#include "couchpage_read.h"

#include <string.h>
#include <apr_strings.h>

#include "couchpage_json.h"
#include "couchpage_serve.h"

#define NODEDOWN_REASON "CouchDB answered 500 nodedown: a cluster node went down during the read"

int cp_read_is_cut_batch(const cp_read_outcome *a)
{
    return a->batch && a->broken && !a->unanswered && a->rv == 0 && a->backend_status == 200;
}

/* Behind a balancer, a member that refused the connection is put in error
 * state by mod_proxy, and one that dropped it before answering by
 * failonstatus=502 (the transport makes such a read a 502), so the repeat
 * goes to another member. A body cut off after the answer began is not
 * charged to its member: a healthy CouchDB coordinator cuts its answer when
 * another node it gathers from goes down, or when it refuses a later query
 * of a batch (which a client's forged token can ask for), and the bytes do
 * not tell these from the member's own death. A member that died refuses
 * the repeat's connection, and mod_proxy passes the repeat on. */
const char *cp_read_failed_in_flight(apr_pool_t *pool, const cp_read_outcome *a)
{
    if (a->past_deadline || a->too_large || cp_read_is_cut_batch(a)) {
        return NULL;
    }
    if (a->timed_out || a->rv == 504) {
        return NULL;
    }
    if (a->unanswered) {
        return "the connection was dropped before the status line";
    }
    if (a->broken) {
        return "the response was cut off";
    }
    if (a->rv == 502 || a->rv == 503) {
        return apr_psprintf(pool, "mod_proxy answered %d", a->rv);
    }
    if (a->rv == 0 && a->backend_status == 500 && a->text
        && cp_couchdb_nodedown(pool, a->backend_status, a->text, a->len)) {
        return NODEDOWN_REASON;
    }
    return NULL;
}

/* Whether a read failed before any answer began: the member dropped the
 * connection it had taken (a node going down), and mod_proxy_http answered
 * 502 or passed only an error bucket. Such a member is in error state now
 * (failonstatus=502), and nothing of the read was answered. */
static int failed_unanswered(const cp_read_outcome *a)
{
    return a->unanswered || (a->rv == 502 && !a->broken);
}

int cp_read_next(apr_pool_t *pool, const cp_read_outcome *a, int *resends, int *repeats,
                 const char **line)
{
    const char *why = cp_read_failed_in_flight(pool, a);

    if (!why) {
        return 0;
    }
    if (a->rv == 503 && *repeats > 0) {
        /* no connection was made: nothing was in flight */
        (*repeats)--;
        *line = apr_psprintf(pool, a->batch
                             ? "CP0117: the backend could not be reached for the multi-query "
                               "request (%s: no connection was made); trying once more"
                             : "CP0115: the backend could not be reached (%s: no connection "
                               "was made); trying once more", why);
    }
    else if (failed_unanswered(a) && *resends < CP_READ_RESENDS) {
        (*resends)++;
        *line = apr_psprintf(pool, "CP0106: the backend read failed in flight before any "
                             "answer (%s); sending it again", why);
    }
    else if (*repeats > 0) {
        (*repeats)--;
        *line = apr_psprintf(pool, a->batch
                             ? "CP0118: the multi-query read failed in flight (%s); "
                               "repeating it once"
                             : "CP0116: the backend read failed in flight (%s); repeating "
                               "it once", why);
    }
    else {
        return 0;
    }
    return 1;
}

int cp_read_failure(apr_pool_t *pool, const cp_read_outcome *a, int tries,
                    apr_off_t max_response, apr_off_t bytes_before, const char **reason)
{
    if (a->too_large) {
        *reason = bytes_before == 0
                ? apr_psprintf(pool, "the backend response is larger than %" APR_OFF_T_FMT
                               " bytes", max_response)
                : apr_psprintf(pool, "the backend responses for this request are larger "
                               "than %" APR_OFF_T_FMT " bytes together (this one came after "
                               "%" APR_OFF_T_FMT ")", max_response, bytes_before);
        return 502;
    }
    if (a->rv == 504 || (a->rv != 0 && a->timed_out)) {
        *reason = "the backend did not answer in time";
        return 504;
    }
    if (a->rv == 503) {
        /* a refused or timed-out connection, or mod_proxy's worker in error
         * state after one (for its retry= time): mod_proxy's own lines,
         * quiet for the module's subrequests, tell which */
        *reason = apr_psprintf(pool, "the backend is unavailable (mod_proxy made no "
                               "connection to it, %d %s)", tries, tries == 1 ? "try" : "tries");
        return 503;
    }
    if (a->rv != 0) {
        *reason = apr_psprintf(pool, "the backend request failed (proxy status %d)", a->rv);
        return 502;
    }
    if (a->broken && !cp_read_is_cut_batch(a)) {
        *reason = "the backend response was cut off";
        return 502;
    }
    if (!a->text) {
        *reason = "the backend response could not be read";
        return 502;
    }
    return 0;
}

int cp_read_may_lack_batch(int status)
{
    return status == 400 || status == 404 || status == 405 || status == 415 || status == 501;
}

/* --- CouchDB's error bodies ---------------------------------------------- */

const char *cp_couchdb_reason(apr_pool_t *pool, int status, const char *text, apr_size_t len)
{
    const json_t *body = cp_json_load(pool, text, len, NULL);
    const char *error = cp_json_string_text(json_object_get(body, "error"));
    const char *reason = cp_json_string_text(json_object_get(body, "reason"));

    if (error && reason) {
        return apr_psprintf(pool, "CouchDB answered %d %s: %s", status, error, reason);
    }
    return apr_psprintf(pool, "CouchDB answered %d", status);
}

int cp_couchdb_nodedown(apr_pool_t *pool, int status, const char *text, apr_size_t len)
{
    const char *error;

    if (status != 500) {
        return 0;
    }
    error = cp_json_string_text(json_object_get(cp_json_load(pool, text, len, NULL), "error"));
    return error && !strcmp(error, "nodedown");
}

/* cp_serve_loggable (couchpage_serve.h): a backend's or a client's text
 * as a log line may hold it. */
const char *cp_serve_loggable(apr_pool_t *pool, const char *text)
{
    static const char hex[] = "0123456789abcdef";
    const apr_size_t most = 200;
    apr_size_t len = strlen(text), i;
    char *out = apr_palloc(pool, 4 * (len > most ? most : len) + 4), *o = out;

    for (i = 0; i < len && i < most; i++) {
        unsigned char c = (unsigned char)text[i];
        const char *named = c == '\b' ? "\\b" : c == '\n' ? "\\n" : c == '\r' ? "\\r"
                          : c == '\t' ? "\\t" : c == '\v' ? "\\v" : c == '\\' ? "\\\\"
                          : c == '"' ? "\\\"" : NULL;

        if (named) {
            *o++ = named[0];
            *o++ = named[1];
        }
        else if (c < 0x20 || c >= 0x7f) {
            *o++ = '\\';
            *o++ = 'x';
            *o++ = hex[c >> 4];
            *o++ = hex[c & 0xf];
        }
        else {
            *o++ = (char)c;
        }
    }
    if (len > most) {
        memcpy(o, "...", 3);
        o += 3;
    }
    *o = '\0';
    return out;
}
