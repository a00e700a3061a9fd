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
