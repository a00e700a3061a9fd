/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mod_couchpage_config: the per-directory config, which the directives of
 * mod_couchpage_config.c fill and merge, and the handler (mod_couchpage.c)
 * reads: the split mod_md has (mod_md_config.h, mod_md_config.c, mod_md.c).
 * Glue: only these two files see the directory config.
 */
#ifndef MOD_COUCHPAGE_CONFIG_H
#define MOD_COUCHPAGE_CONFIG_H

#include "httpd.h"
#include "http_config.h"
#include "ap_expr.h"

#include "couchpage_args.h"
#include "couchpage_item.h"
#include "couchpage_render.h"
#include "couchpage_seal.h"
#include "couchpage_view.h"
#include "mod_couchpage_module.h"

#define DEFAULT_PAGE_SIZE 20
#define DEFAULT_MAX_PAGE_SIZE 100
#define PAGE_SIZE_CEILING 10000
#define DEFAULT_MAX_RESPONSE (16 * 1024 * 1024)
#define MAX_LINKS 20
#define DEFAULT_MAX_TOKEN_LENGTH 4096 /* bytes of ?start=, as the client sent it */
#define DEFAULT_MAX_EMITS 64 /* rows one document emits under one key */
#define MAX_AGE_CEILING 31536000 /* a year, RFC 9111's advice for "never expires" */

/* A key bound of CouchPageRange: constant JSON read at start-up, or an
 * expression evaluated per request; neither means that side is open. */
typedef struct {
    const char *json;
    ap_expr_info_t *expr;
} key_bound;

/* SetHandler as the module sees it (mod_couchpage_config.c): core handles
 * the directive; the module notes which handler a section names, so that
 * start-up can tell where the couchpage handler is set. */
typedef enum {
    CP_HANDLER_UNSET = 0,
    CP_HANDLER_COUCHPAGE,
    CP_HANDLER_OTHER,          /* another handler, or none */
    CP_HANDLER_EXPRESSION      /* an expression: known per request only */
} cp_handler;

typedef struct {
    cp_view view;              /* CouchPageView's URL and the options of every query:
                                  the final view, each part merged from where it is set */
    int view_set;              /* CouchPageView is set (the URL's parts) */
    const ap_directive_t *view_where; /* the CouchPageView line, for messages */
    const char *view_section;  /* the section it is set in, as written */
    int page_size;
    int page_size_set;
    const ap_directive_t *page_size_where;
    int max_page_size;
    int max_page_size_set;
    const ap_directive_t *max_page_size_where;
    cp_handler handler;        /* SetHandler's, inherited like core's */
    const ap_directive_t *handler_where;
    const char *authorization; /* "Basic ..." built once, at config time */
    int authorization_set;
    apr_off_t max_response;
    int max_response_set;
    key_bound low;
    key_bound high;
    int range_set;
    ap_expr_info_t *partition;
    int partition_set;
    int descending_set;        /* the view's options, each set apart */
    int reduce_set;
    int group_level_set;
    int include_docs_set;
    int update_set;
    int stable_set;
    int max_emits_set;         /* CouchPageMaxEmits (view.max_emits) */
    apr_array_header_t *fields; /* CouchPageFields (const char *); NULL: whole docs */
    int fields_set;
    const ap_directive_t *fields_where;
    cp_format format;          /* CP_FORMAT_AUTO: by the Accept header */
    int format_set;
    cp_item_spec item;         /* what an HTML item shows ... */
    ap_expr_info_t *item_template; /* ... or CouchPageItemTemplate's, when set */
    int item_set;              /* either: the innermost section's one wins */
    int item_reads_doc;        /* the item's fields or link read the row's doc */
    const ap_directive_t *item_where;
    const char *words[CP_WORD_COUNT]; /* CouchPageText; NULL: inherited or English */
    int links;                 /* page links either side */
    int links_set;
    const cp_seal_key *token_key; /* CouchPageTokenSecret's, derived; NULL: plain JSON */
    const cp_seal_key *previous_token_key; /* its PREVIOUS-SECRET's; NULL: none */
    int token_secret_set;
    apr_size_t max_token_length;
    int max_token_length_set;
    const char *cache_control; /* a page's Cache-Control; NULL: none */
    int cache_control_set;
} couchpage_dir_conf;

/* The directives, and the per-directory config they fill. */
extern const command_rec couchpage_cmds[];
void *couchpage_create_dir_conf(apr_pool_t *p, char *dir);
void *couchpage_merge_dir_conf(apr_pool_t *p, void *basev, void *addv);

/* The check_config hook: the mistakes only the merged configuration
 * shows, and view URLs whose scheme has no proxy module loaded, refused
 * at start-up and by apachectl -t; views no mod_proxy worker serves (and
 * balancer:// views without their balancer), warned of. */
int couchpage_check_config(apr_pool_t *pconf, apr_pool_t *plog, apr_pool_t *ptemp,
                           server_rec *s);

/* What makes a request's merged configuration unusable, though each section
 * in it passed: a CouchPageSize above the CouchPageMaxSize merged with it
 * (one may come from a .htaccess file), an item or CouchPageFields that
 * reads the rows' documents where CouchPageIncludeDocs is not On. NULL, or
 * what is wrong, naming the directives and where each is written. Start-up
 * refuses it wherever it can place the sections; a request gets 500. */
const char *couchpage_merged_fault(apr_pool_t *p, const couchpage_dir_conf *conf);

/* Where a directive was written, "FILE:LINE", and the section it is in as
 * written ("<Location /x/>"), or "the server config". */
const char *couchpage_directive_where(apr_pool_t *p, const ap_directive_t *directive);
const char *couchpage_directive_section(apr_pool_t *p, const ap_directive_t *directive);

#endif
