/* SPDX-License-Identifier: Apache-2.0 */
/*
 * couchpage_fault: why a page is not served, typed by whose fault it is,
 * with the status, the JSON answer and the log line the glue gives it as
 * it is; the common faults, and the text of what a backend or a client
 * sent made fit for a log line. httpd-free.
 */
#ifndef COUCHPAGE_FAULT_H
#define COUCHPAGE_FAULT_H

#include <apr_pools.h>

/* Log levels, httpd's numbers (APLOG_ERR ...), so that the glue passes
 * them through. */
#define CP_LOG_ERR 3
#define CP_LOG_WARNING 4
#define CP_LOG_INFO 6
#define CP_LOG_DEBUG 7

/* Whose a fault is: the client's (a bad argument or token), the
 * configuration's (the operator mends it), the backend's (CouchDB refused,
 * failed or was late), the server's (libcrypto failed; the data outgrew a
 * bounded token). */
typedef enum {
    CP_FAULT_CLIENT,
    CP_FAULT_CONFIG,
    CP_FAULT_BACKEND,
    CP_FAULT_SERVER
} cp_fault_class;

/* Why a page is not served, and how that is answered and logged. */
typedef struct {
    cp_fault_class kind;
    int status;           /* the HTTP status answered */
    const char *error;    /* the JSON answer's error word */
    const char *reason;   /* the JSON answer's reason, for the client */
    int log_level;        /* CP_LOG_* */
    const char *log_code; /* "CP0101" */
    const char *log_text; /* the error log's line, after its code */
} cp_fault;

cp_fault *cp_fault_make(apr_pool_t *pool, cp_fault_class kind, int status,
                        const char *error, const char *reason, int log_level,
                        const char *log_code, const char *log_text);

/* The common faults: a bad request (CP0102, 400, reason to the client), a
 * start token refused for where it points (CP0122, 400: why goes to the
 * log only), a configuration error (CP0104, 500) and tokens that could
 * not be sealed or opened (CP0140, 500); uri names the page in the log. */
cp_fault *cp_fault_bad_request(apr_pool_t *pool, const char *reason);
cp_fault *cp_fault_token_refused(apr_pool_t *pool, const char *why);
cp_fault *cp_fault_config(apr_pool_t *pool, const char *uri, const char *reason);
cp_fault *cp_fault_seal(apr_pool_t *pool, const char *uri, const char *reason);

/* What the error log adds to a backend's refusal (its status, its reason
 * as the transport words it; range_set: the location has CouchPageRange)
 * to tell the operator its likely cause: a reversed range, CouchDB's
 * account lockout; else "". */
const char *cp_fault_backend_hint(int backend_status, const char *reason, int range_set);

/* Text for the error log: control bytes, quotes and backslashes escaped
 * as httpd's ap_escape_logitem does, cut after 200 bytes. */
const char *cp_fault_loggable(apr_pool_t *pool, const char *text);

#endif
