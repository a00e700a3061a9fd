/*
 * couchpage_backend: GET a CouchDB URL as an httpd subrequest that
 * mod_proxy serves, and read the JSON answer.
 *
 * mod_proxy does the HTTP: connection pooling, balancer://, TLS and
 * timeouts are configured with its directives, never here.
 */
#ifndef COUCHPAGE_BACKEND_H
#define COUCHPAGE_BACKEND_H

#include "httpd.h"
#include <jansson.h>

typedef struct {
    const char *authorization; /* Authorization header for CouchDB, or NULL */
    apr_off_t max_response;    /* largest body read, in bytes */
} cp_backend_conf;

typedef struct {
    json_t *body;           /* the parsed 2xx answer, owned by r->pool */
    int status;             /* on failure: 502, 503 or 504 for the client */
    int backend_status;     /* the HTTP status CouchDB answered; 0 without one */
    const char *reason;     /* on failure: why, fit for the client and the log */
} cp_backend_result;

/* The output filter that captures a subrequest's body; registered once. */
void cp_backend_register(void);

/* Fetches url. Returns OK with result->body set, or a failure status with
 * result->status and result->reason set. */
int cp_backend_get_json(request_rec *r, const cp_backend_conf *conf,
                        const char *url, cp_backend_result *result);

#endif
