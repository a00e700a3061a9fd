/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mod_couchpage_config: the directives (couchpage_cmds), the per-directory
 * config made and merged (its struct is mod_couchpage_dir.h's), and the
 * page links a location shows: the split mod_md has (mod_md_config.h,
 * mod_md_config.c, mod_md.c). Glue.
 */
#ifndef MOD_COUCHPAGE_CONFIG_H
#define MOD_COUCHPAGE_CONFIG_H

#include "httpd.h"
#include "http_config.h"

#include "mod_couchpage_dir.h"

/* The directives, and the per-directory config they fill. */
extern const command_rec couchpage_cmds[];
void *couchpage_create_dir_conf(apr_pool_t *p, char *dir);
void *couchpage_merge_dir_conf(apr_pool_t *p, void *basev, void *addv);

/* The page links either side a page shows, and reads rows for: CouchPageLinks,
 * never more than CouchPageMaxLinks (a .htaccess may set the one, never the
 * other). */
int couchpage_links_shown(const couchpage_dir_conf *conf);

/* Every CouchPageTokenSecret read with this configuration (its secrets,
 * resolved), for the key of the pages' ETags; NULL: none. */
const char *couchpage_token_secrets(void);

#endif
