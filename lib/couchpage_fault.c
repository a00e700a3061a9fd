/* SPDX-License-Identifier: Apache-2.0 */
/*
 * couchpage_fault: the faults a page is refused with (couchpage_fault.h).
 * httpd-free.
 */
#include "couchpage_fault.h"

#include <string.h>
#include <apr_strings.h>

#define HTTP_BAD_REQUEST 400
#define HTTP_INTERNAL_SERVER_ERROR 500

cp_fault *cp_fault_make(apr_pool_t *pool, cp_fault_class kind, int status,
                        const char *error, const char *reason, int log_level,
                        const char *log_code, const char *log_text)
{
    cp_fault *fault = apr_palloc(pool, sizeof(*fault));

    fault->kind = kind;
    fault->status = status;
    fault->error = error;
    fault->reason = reason;
    fault->log_level = log_level;
    fault->log_code = log_code;
    fault->log_text = log_text;
    return fault;
}

cp_fault *cp_fault_bad_request(apr_pool_t *pool, const char *reason)
{
    return cp_fault_make(pool, CP_FAULT_CLIENT, HTTP_BAD_REQUEST, "bad_request", reason,
                         CP_LOG_INFO, "CP0102", apr_pstrcat(pool, "bad request: ", reason,
                                                            NULL));
}

/* Every refusal of where a token points alike, so that none tells more of
 * the data than a page shows. */
cp_fault *cp_fault_token_refused(apr_pool_t *pool, const char *why)
{
    return cp_fault_make(pool, CP_FAULT_CLIENT, HTTP_BAD_REQUEST, "bad_request",
                         "the start token is outside this location's key range",
                         CP_LOG_INFO, "CP0122",
                         apr_psprintf(pool, "bad request: the start token is outside this "
                                      "location's key range (%s)", why));
}

cp_fault *cp_fault_config(apr_pool_t *pool, const char *uri, const char *reason)
{
    return cp_fault_make(pool, CP_FAULT_CONFIG, HTTP_INTERNAL_SERVER_ERROR, "internal_error",
                         "this location is misconfigured; see the server's error log",
                         CP_LOG_ERR, "CP0104",
                         apr_psprintf(pool, "configuration error for %s: %s", uri, reason));
}

/* libcrypto failing is the server's trouble: a 500 that says nothing of it. */
cp_fault *cp_fault_seal(apr_pool_t *pool, const char *uri, const char *reason)
{
    return cp_fault_make(pool, CP_FAULT_SERVER, HTTP_INTERNAL_SERVER_ERROR, "internal_error",
                         "the server could not serve this page", CP_LOG_ERR, "CP0140",
                         apr_psprintf(pool, "the tokens of %s could not be sealed or "
                                      "opened: %s", uri, reason));
}

const char *cp_fault_loggable(apr_pool_t *pool, const char *text)
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

/* CouchDB 3.4's answer to a login of an account it has locked
 * (couch_httpd_auth.erl), as the transport words it. */
#define COUCHDB_LOCKOUT "403 forbidden: Account is temporarily locked due to multiple " \
    "authentication failures"

const char *cp_fault_backend_hint(int backend_status, const char *reason, int range_set)
{
    if (backend_status == 400 && range_set) {
        return "; does CouchDB collate CouchPageRange's LOW after its HIGH?";
    }
    if (backend_status == 403 && reason && strstr(reason, COUCHDB_LOCKOUT)) {
        /* The lock is CouchDB's, keyed by the address, the account and its
         * password's salt: nothing here remembers it, and the right password
         * does not end it; a new password (a new salt) does. */
        return ": this is CouchDB's account lockout ([chttpd_auth_lockout]): after "
               "5 failed logins (its threshold, by default) of this account from this "
               "server's address, CouchDB refuses every login of it from here, with the "
               "right password too, until about 5 minutes (its max_lifetime, by "
               "default) after the first failure. Correct CouchPageCredentials and "
               "reload httpd; pages come back when the lock ends, or at once if "
               "CouchDB's admin sets the account a new password (in _users) and "
               "CouchPageCredentials has that one";
    }
    return "";
}
