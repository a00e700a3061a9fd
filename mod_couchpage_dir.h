/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mod_couchpage_dir: the per-directory config's struct, which the
 * directives fill (mod_couchpage_config.c, mod_couchpage_show.c) and merge,
 * mod_couchpage_check.c checks, and the handler reads
 * (mod_couchpage_request.c builds cp_serve's source from it). A header of
 * its own, below every file that fills or reads it, so that the directive
 * files need not include each other. Glue: only the glue sees the
 * directory config.
 */
#ifndef MOD_COUCHPAGE_DIR_H
#define MOD_COUCHPAGE_DIR_H

#include "httpd.h"
#include "http_config.h"
#include "ap_expr.h"
#include "apr_hash.h"

#include "couchpage_args.h"
#include "couchpage_count.h"
#include "couchpage_find.h"
#include "couchpage_item.h"
#include "couchpage_render.h"
#include "couchpage_seal.h"
#include "couchpage_view.h"
#include "mod_couchpage_backend.h"
#include "mod_couchpage_module.h"
#include "mod_couchpage_named.h"

/* A key bound of CouchPageRange: constant JSON read at start-up, or an
 * expression evaluated per request; neither means that side is open. */
typedef struct {
    const char *json;
    ap_expr_info_t *expr;
} couchpage_key_bound;

/* SetHandler as the module sees it (mod_couchpage_config.c): core handles
 * the directive; the module notes which handler a section names, so that
 * start-up can tell where the couchpage handler is certainly set. */
typedef enum {
    COUCHPAGE_HANDLER_UNSET = 0,
    COUCHPAGE_HANDLER_COUCHPAGE,
    COUCHPAGE_HANDLER_OTHER    /* another handler, none, or an expression (known per
                                  request only): not certainly couchpage */
} couchpage_sethandler;

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
    couchpage_sethandler handler; /* SetHandler's, inherited like core's */
    const ap_directive_t *handler_where;
    couchpage_backend_conf backend; /* what the backend fetch reads: its
                                  authorization ("Basic ...", built once, at config
                                  time), max_response, deadline and hide_keys, each
                                  merged from where it is set */
    int authorization_set;
    int max_response_set;
    int deadline_set;
    couchpage_key_bound low;
    couchpage_key_bound high;
    int range_set;
    ap_expr_info_t *partition;
    int partition_set;
    int descending_set;        /* the view's options, each set apart */
    int reduce_set;
    int group_level_set;
    int include_docs_set;
    int update_set;
    int stable_set;
    cp_count_policy count;     /* CouchPageCount: what a _find location's count reads */
    int count_set;
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
    const apr_array_header_t *item_read; /* the fields the item reads (const cp_field *) */
    const ap_directive_t *item_where;
    const char *words[CP_WORD_COUNT]; /* CouchPageText; NULL: inherited or English */
    cp_html_spec html;         /* the HTML fragment's item and words: this config's
                                  own (item, words), pointed at once; a request adds
                                  only an item template's renderer */
    int links;                 /* page links either side, as CouchPageLinks says; a
                                  page shows couchpage_links_shown's */
    int links_set;
    const ap_directive_t *links_where;
    int max_links;             /* CouchPageMaxLinks: the server's ceiling on links */
    int max_links_set;
    int jump_reach;            /* CouchPageJumpReach: pages from either end ?page= reads */
    int jump_reach_set;
    const ap_directive_t *max_links_where;
    const cp_seal_key *token_key; /* CouchPageTokenSecret's, derived; NULL: plain JSON */
    const cp_seal_key *previous_token_key; /* its PREVIOUS-SECRET's; NULL: none */
    int token_secret_set;
    apr_size_t max_token_length;
    int max_token_length_set;
    const char *cache_control; /* a page's Cache-Control; NULL: none */
    int cache_control_set;
    /* a _find location's query (CouchPageView .../_find): each directive
     * merged from the innermost section that sets it */
    const json_t *find_selector; /* CouchPageSelector's; NULL: {} (every document) */
    apr_hash_t *find_values;   /* its request-time strings (holding %{): the text ->
                                  couchpage_key_bound, an expression yielding JSON */
    int find_selector_set;
    const ap_directive_t *find_selector_where;
    const cp_find_sort *find_sort; /* CouchPageSort's, [0] ascending, [1] descending
                                  (CouchPageDescending On) */
    int find_sort_set;
    const ap_directive_t *find_sort_where;
    const char *find_index_ddoc; /* CouchPageIndex's; NULL: CouchDB chooses */
    const char *find_index_name; /* NULL: the design document's only index */
    int find_index_set;
    const ap_directive_t *find_index_where;
} couchpage_dir_conf;

#endif
