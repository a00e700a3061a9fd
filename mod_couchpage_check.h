/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mod_couchpage_check: the checks of the merged configuration, at start-up
 * (the check_config hook) and for a request (couchpage_merged_fault).
 * Glue, beside mod_couchpage_config
 * (the directives and their merge), as mod_md keeps its directives
 * (mod_md_config.c) apart from its start-up work.
 */
#ifndef MOD_COUCHPAGE_CHECK_H
#define MOD_COUCHPAGE_CHECK_H

#include "mod_couchpage_config.h"

/* The check_config hook: the mistakes only the merged configuration
 * shows, and view URLs whose scheme has no proxy module loaded, refused
 * at start-up and by apachectl -t; views no mod_proxy worker serves (and
 * balancer:// views without their balancer), warned of. */
int couchpage_check_config(apr_pool_t *pconf, apr_pool_t *plog, apr_pool_t *ptemp,
                           server_rec *s);

/* What makes a request's merged configuration unusable, though each section
 * in it passed (cp_settings_request_fault): NULL, or what is wrong. Start-up
 * refuses it wherever it can place the sections; a request gets 500. */
const char *couchpage_merged_fault(apr_pool_t *p, const couchpage_dir_conf *conf);

#endif
