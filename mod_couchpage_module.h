/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mod_couchpage_module: the module's symbol and its log tags, all that the
 * glue files that need no directory config share (the backend fetch, the
 * status counters, the expression functions). Nothing else belongs here.
 */
#ifndef MOD_COUCHPAGE_MODULE_H
#define MOD_COUCHPAGE_MODULE_H

#include "httpd.h"
#include "http_config.h"

extern module AP_MODULE_DECLARE_DATA couchpage_module;

/* The module's own log tags: httpd's AH numbers belong to httpd. */
#define CPLOGNO(n) "CP" #n ": "

#endif
