/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mod_couchpage_show: the directives of what a page shows of its rows and
 * how, whose setters couchpage_cmds (mod_couchpage_config.c) names. Glue.
 */
#ifndef MOD_COUCHPAGE_SHOW_H
#define MOD_COUCHPAGE_SHOW_H

#include "httpd.h"
#include "http_config.h"

#include "mod_couchpage_dir.h"

/* What a page shows of its rows and how (mod_couchpage_show.c): the
 * setters of CouchPageFields, CouchPageFormat, CouchPageItem,
 * CouchPageItemTemplate and CouchPageText, for couchpage_cmds. */
const char *couchpage_set_fields(cmd_parms *cmd, void *dirconf, const char *args);
const char *couchpage_set_format(cmd_parms *cmd, void *dirconf, const char *arg);
const char *couchpage_set_item(cmd_parms *cmd, void *dirconf, const char *field,
                               const char *link);
const char *couchpage_set_item_template(cmd_parms *cmd, void *dirconf, const char *arg);
const char *couchpage_set_text(cmd_parms *cmd, void *dirconf, const char *name,
                               const char *text);

/* The HTML fragment's spec points at the config's own item and words: set
 * once a config is made, so that a request only adds an item template. */
void couchpage_point_html_spec(couchpage_dir_conf *conf);

#endif
