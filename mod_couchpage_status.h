/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mod_couchpage_status: what pages cost, per request in the access log's
 * notes and summed over every process in mod_status's section. Glue: no
 * directory config.
 */
#ifndef MOD_COUCHPAGE_STATUS_H
#define MOD_COUCHPAGE_STATUS_H

#include "httpd.h"

/* What a page's backend reads cost (mod_couchpage_backend.h). */
struct couchpage_backend_stats;

/* The hooks of the shared counters and of mod_status's section, called
 * from register_hooks. */
void couchpage_status_register(void);

/* The record of one page, called once at the end of the handler. */
void couchpage_status_record(request_rec *r, const struct couchpage_backend_stats *stats);

#endif
