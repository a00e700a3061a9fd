/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mod_couchpage_named: what directives name (CouchPageCredentials' user
 * and password file, made its Authorization header), checked when they
 * are read, where a directive is written (its file and line, its
 * section), and the words of a directive's arguments. Glue that the
 * directives (mod_couchpage_config) and the start-up checks
 * (mod_couchpage_check) both call.
 */
#ifndef MOD_COUCHPAGE_NAMED_H
#define MOD_COUCHPAGE_NAMED_H

#include "httpd.h"
#include "http_config.h"

/* The next word of a RAW_ARGS directive's arguments, as httpd quotes them,
 * the empty one ('') too; NULL when none is left. */
const char *couchpage_next_word(apr_pool_t *p, const char **args);

/* Where a directive was written: "FILE:LINE". */
const char *couchpage_directive_where(apr_pool_t *p, const ap_directive_t *directive);

/* The section a directive is in, as written ("<Location /x/>"), or "the
 * server config". */
const char *couchpage_directive_section(apr_pool_t *p, const ap_directive_t *directive);

/* The Authorization header ("Basic ...") of CouchPageCredentials USER
 * PASSWORD, into *authorization: a user name that is not empty and has no
 * colon; a PASSWORD of file:PATH is the password in that file (relative to
 * ServerRoot, as httpd's own file arguments), which holds the password
 * alone (a trailing newline is no part of it), and is read when httpd reads
 * its configuration, as root, so that it can be root's alone; one others
 * may read is warned of (CP0134). NULL, or the error; messages name the
 * file, never the password. */
const char *couchpage_basic_authorization(cmd_parms *cmd, const char *user,
                                          const char *password, const char **authorization);

/* A secret a directive takes written out or as file:PATH (CouchPageCredentials'
 * password, CouchPageTokenSecret's secrets): arg itself, or the secret in
 * the file at PATH (relative to ServerRoot, as httpd's own file arguments),
 * which holds it alone, on one line (a trailing newline is no part of it),
 * at most 4096 bytes; read when httpd reads its configuration, as root, so
 * that the file can be root's alone: one others may read is warned of
 * (CP0134). noun ("password", "secret") names it in messages. NULL, or the
 * error, which names the directive, the noun and the file, never the
 * secret. */
const char *couchpage_named_secret(cmd_parms *cmd, const char *noun, const char *arg,
                                   const char **secret);

#endif
