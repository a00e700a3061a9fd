/* SPDX-License-Identifier: Apache-2.0 */
/*
 * couchpage_settings: what a location's merged configuration sets, as
 * plain values (cp_settings), and the mistakes only the merged
 * configuration shows: a page size above its maximum, more links than
 * their maximum, an item or CouchPageFields that reads documents the
 * queries do not ask for, an item that reads outside CouchPageFields, a
 * _find location's directives on a view or a view's on a _find. The
 * start-up checks (mod_couchpage_check.c) refuse each where they can place
 * the sections, with its code and its fix; a request meets the rest
 * (cp_settings_request_fault). Also what a secret's file may hold.
 *
 * Part of the httpd-free core: a directive's place is an opaque pointer,
 * which the caller's where() writes out ("FILE:LINE").
 */
#ifndef COUCHPAGE_SETTINGS_H
#define COUCHPAGE_SETTINGS_H

#include <apr_pools.h>
#include <apr_tables.h>

#include "couchpage_view.h"

/* What a configuration section sets, as the start-up checks count what
 * sections they cannot place may change. */
enum {
    CP_SETS_HANDLER = 1,
    CP_SETS_VIEW = 2,
    CP_SETS_PAGE_SIZE = 4,
    CP_SETS_MAX_PAGE_SIZE = 8,
    CP_SETS_INCLUDE_DOCS = 16,
    CP_SETS_ITEM = 32,         /* CouchPageItem or CouchPageItemTemplate */
    CP_SETS_FIELDS = 64,
    CP_SETS_FORMAT = 128,
    CP_SETS_QUERY = 256,       /* what shapes the queries of a view or of a _find:
                                  CouchPageRange, Reduce, GroupLevel, MaxEmits,
                                  Update, Stable, Selector, Sort, Index */
    CP_SETS_LINKS = 512,
    CP_SETS_MAX_LINKS = 1024,
    /* what a .htaccess file may set with AllowOverride FileInfo */
    CP_SETS_FILEINFO = CP_SETS_HANDLER | CP_SETS_PAGE_SIZE | CP_SETS_ITEM | CP_SETS_FORMAT
                       | CP_SETS_LINKS
};

/* A merged configuration's settings that its faults read; each *_where is
 * the directive's place, written out by where(). */
typedef struct {
    const cp_view *view;       /* its is_find, include_docs, reduce and update */
    int view_set;
    const void *view_where;
    int handler_set;           /* SetHandler couchpage, certainly */
    const void *handler_where;
    int page_size, page_size_set, max_page_size, max_page_size_set;
    const void *page_size_where, *max_page_size_where;
    int links, links_set, max_links, max_links_set;
    const void *links_where, *max_links_where;
    int format_is_json;        /* CouchPageFormat json: no HTML item is shown */
    int item_set, item_is_template, item_reads_doc;
    const apr_array_header_t *item_read; /* the fields the item reads (const cp_field *) */
    const void *item_where;
    const apr_array_header_t *fields; /* CouchPageFields; NULL: whole documents */
    int fields_set;
    const void *fields_where;
    /* the query directives set, each apart */
    int range_set, reduce_set, group_level_set, include_docs_set, max_emits_set;
    int selector_set, sort_set, index_set;
    const char *(*where)(apr_pool_t *pool, const void *directive);
} cp_settings;

/* What makes a request's merged configuration unusable, though each
 * section in it passed: no CouchPageView, CouchPageReduce and
 * CouchPageIncludeDocs both On, a CouchPageSize above the CouchPageMaxSize
 * merged with it (one may come from a .htaccess file), an item or
 * CouchPageFields that reads the rows' documents where CouchPageIncludeDocs
 * is not On, a directive that does not suit the location's kind. NULL, or
 * what is wrong, naming the directives and where each is written. */
const char *cp_settings_request_fault(apr_pool_t *pool, const cp_settings *settings);

/* The first mistake start-up refuses in a merged configuration where
 * SetHandler couchpage applies, in the section named section, leaving out
 * what other sections may change (unknown: CP_SETS_*): the whole message,
 * with its fix, and its code in *code ("CP0112"); or NULL. */
const char *cp_settings_startup_fault(apr_pool_t *pool, const cp_settings *settings,
                                      unsigned unknown, const char *section,
                                      const char **code);

/* A directive's whole number from min to max (apr_strtoi64: a sign may
 * lead), in *value: NULL, or the message apachectl -t shows, naming the
 * directive (NULL: the caller names it). */
const char *cp_settings_whole_number(apr_pool_t *pool, const char *directive, const char *arg,
                                     apr_int64_t min, apr_int64_t max, apr_int64_t *value);

/* The most a secret's file holds, in bytes. */
#define CP_SECRET_FILE_MAX 4096

/* What is wrong with text[0..*len), read from a secret's file, which holds
 * the noun ("password", "secret") alone, on one line: NULL, with a
 * trailing newline (or CRLF) taken off *len; else why, as the end of a
 * message that names the file ("is empty; ..."). */
const char *cp_settings_secret_file_fault(apr_pool_t *pool, const char *noun,
                                          const char *text, apr_size_t *len);

#endif
