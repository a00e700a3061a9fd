/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mod_couchpage_named.c: what directives name, checked when they are read,
 * and where a directive is written (its file and line, its section), for
 * messages: CouchPageCredentials' user and password (from a file, read
 * and its permissions checked) as the Authorization header they make, and any secret a directive may
 * take from such a file (CouchPageTokenSecret's); the next word of a
 * directive's raw arguments. Glue below both
 * mod_couchpage_config.c (the directives, which call it) and
 * mod_couchpage_check.c (the start-up checks, which call it too), so that
 * neither calls the other back.
 */
#include "mod_couchpage_named.h"

#include "http_config.h"
#include "http_log.h"
#include "apr_file_info.h"
#include "apr_lib.h"
#include "apr_file_io.h"
#include "apr_strings.h"
#include "apr_user.h"

#include "couchpage_settings.h"
#include "mod_couchpage_module.h"

APLOG_USE_MODULE(couchpage);

const char *couchpage_next_word(apr_pool_t *p, const char **args)
{
    while (apr_isspace(**args)) {
        (*args)++;
    }
    return **args ? ap_getword_conf(p, args) : NULL;
}

const char *couchpage_directive_where(apr_pool_t *p, const ap_directive_t *directive)
{
    return apr_psprintf(p, "%s:%d", directive->filename, directive->line_num);
}

const char *couchpage_directive_section(apr_pool_t *p, const ap_directive_t *directive)
{
    const ap_directive_t *section = directive->parent;

    if (!section) {
        return "the server config";
    }
    /* a section's args keep their closing '>' */
    return apr_pstrcat(p, section->directive, " ", section->args, NULL);
}

/* Readable by others than root and the owner: warned of, once per read of
 * the configuration. APR's permission bits are the octal mode's digits,
 * written in hexadecimal (APR_FPROT_UREAD is 0x0400). */
static void warn_if_readable(cmd_parms *cmd, const char *noun, const char *path,
                             const apr_finfo_t *finfo)
{
    const char *who = NULL;
    char *group = NULL;

    if ((finfo->valid & APR_FINFO_PROT) && (finfo->protection & APR_FPROT_WREAD)) {
        who = "every user of this machine";
    }
    else if ((finfo->valid & (APR_FINFO_PROT | APR_FINFO_GROUP))
             == (APR_FINFO_PROT | APR_FINFO_GROUP)
             && (finfo->protection & APR_FPROT_GREAD) && finfo->group != 0) {
        who = apr_gid_name_get(&group, finfo->group, cmd->temp_pool) == APR_SUCCESS
              ? apr_psprintf(cmd->temp_pool, "the members of group %s", group)
              : "the members of its group";
    }
    if (who) {
        ap_log_error(APLOG_MARK, APLOG_WARNING, 0, cmd->server, CPLOGNO(0134)
                     "%s (%s): the %s file %s can be read by %s "
                     "(mode %03x); httpd reads it as root: chown root:root it and "
                     "chmod 0600 (or 0640) it", cmd->cmd->name,
                     couchpage_directive_where(cmd->temp_pool, cmd->directive), noun, path, who,
                     (unsigned)(finfo->protection & 0x0777));
    }
}

/* The secret in the file at path (couchpage_named_secret): NULL, or the
 * error. */
static const char *read_secret_file(cmd_parms *cmd, const char *noun, const char *path,
                                    const char **secret)
{
    char buf[CP_SECRET_FILE_MAX + 1], error[128];
    const char *fault = NULL;
    apr_file_t *file;
    apr_finfo_t finfo;
    apr_size_t len = 0;
    apr_status_t rv;

    path = ap_server_root_relative(cmd->temp_pool, path);
    if (!path) {
        return apr_psprintf(cmd->pool, "%s: the %s file's path is not valid", cmd->cmd->name,
                            noun);
    }
    rv = apr_file_open(&file, path, APR_FOPEN_READ, APR_FPROT_OS_DEFAULT, cmd->temp_pool);
    if (rv != APR_SUCCESS) {
        return apr_psprintf(cmd->pool, "%s: the %s file %s cannot be opened: %s",
                            cmd->cmd->name, noun, path, apr_strerror(rv, error, sizeof(error)));
    }
    rv = apr_file_info_get(&finfo, APR_FINFO_TYPE | APR_FINFO_PROT | APR_FINFO_GROUP, file);
    if ((rv == APR_SUCCESS || rv == APR_INCOMPLETE) && (finfo.valid & APR_FINFO_TYPE)
        && finfo.filetype != APR_REG) {
        fault = "is not a regular file";
    }
    else {
        rv = apr_file_read_full(file, buf, sizeof(buf), &len);
        if (rv != APR_SUCCESS && rv != APR_EOF) {
            fault = apr_pstrcat(cmd->temp_pool, "cannot be read: ",
                                apr_strerror(rv, error, sizeof(error)), NULL);
        }
    }
    apr_file_close(file);
    if (!fault) {
        fault = cp_settings_secret_file_fault(cmd->temp_pool, noun, buf, &len);
    }
    if (fault) {
        return apr_psprintf(cmd->pool, "%s: the %s file %s %s", cmd->cmd->name, noun,
                            path, fault);
    }
    *secret = apr_pstrmemdup(cmd->pool, buf, len);
    warn_if_readable(cmd, noun, path, &finfo);
    return NULL;
}

/* A secret of file:PATH is the one in the file at PATH. */
#define SECRET_FILE_PREFIX "file:"

const char *couchpage_named_secret(cmd_parms *cmd, const char *noun, const char *arg,
                                   const char **secret)
{
    if (strncmp(arg, SECRET_FILE_PREFIX, sizeof(SECRET_FILE_PREFIX) - 1) == 0) {
        return read_secret_file(cmd, noun, arg + sizeof(SECRET_FILE_PREFIX) - 1, secret);
    }
    *secret = arg;
    return NULL;
}

const char *couchpage_basic_authorization(cmd_parms *cmd, const char *user,
                                          const char *password, const char **authorization)
{
    const char *err;

    /* The password is never part of a message: it could end up in a log. */
    if (!*user || strchr(user, ':')) {
        return "CouchPageCredentials: the user name must be non-empty and "
               "have no colon";
    }
    err = couchpage_named_secret(cmd, "password", password, &password);
    if (err) {
        return err;
    }
    *authorization = apr_pstrcat(cmd->pool, "Basic ",
        ap_pbase64encode(cmd->pool, apr_pstrcat(cmd->pool, user, ":", password, NULL)),
        NULL);
    return NULL;
}
