/* SPDX-License-Identifier: Apache-2.0 */
/*
 * couchpage_source: what a page is served from and for: the location's
 * query with this request's values (cp_source, its count policy among
 * them), the request's own arguments (cp_request), and the page served
 * with what sending it needs (cp_served). cp_serve, the jump and the
 * count read them. httpd-free.
 */
#ifndef COUCHPAGE_SOURCE_H
#define COUCHPAGE_SOURCE_H

#include <apr_pools.h>
#include <apr_tables.h>
#include <apr_time.h>

#include <string.h>

#include "couchpage_args.h"
#include "couchpage_find.h"
#include "couchpage_json.h"
#include "couchpage_page.h"
#include "couchpage_seal.h"
#include "couchpage_view.h"

/* CouchPageCount: how a _find location that no index's view numbers is
 * counted (couchpage_count.h). */
typedef enum {
    CP_COUNT_UNSET = 0, /* the default: capped CP_COUNT_DEFAULT_CAP */
    CP_COUNT_EXACT,
    CP_COUNT_CAPPED,
    CP_COUNT_NONE
} cp_count_mode;

typedef struct {
    cp_count_mode mode;
    int cap;           /* with CP_COUNT_CAPPED: N */
} cp_count_policy;

/* What a location asks, read from its configuration with this request's
 * values (the glue's, evaluated). */
typedef struct cp_source {
    const char *uri;        /* the request's path, for log lines and token bindings */
    const void *location;   /* what names the location in first_time's set */
    const cp_view *view;
    const char *low;        /* CouchPageRange's bounds, compact JSON; NULL: open */
    const char *high;
    int range_set;          /* CouchPageRange is set */
    const char *partition;  /* the request's partition; NULL: none */
    int partition_set;      /* CouchPagePartition is set */
    int links;              /* page links either side shown */
    const cp_find_spec *find; /* a _find location's query, selector filled; NULL: a view's */
    const apr_array_header_t *index_fields; /* a _find location's index's view, read
                               for a numbered page: that index's fields, its
                               view key; NULL elsewhere */
    const json_t *index_fixed; /* there: the values the selector's equalities fix its
                               leading fields to, [v1..vk]; NULL: none */
    const cp_seal_key *token_key; /* NULL: plain tokens */
    const cp_seal_key *previous_token_key;
    apr_size_t max_token_length;
    apr_size_t token_url_room; /* the bytes a token may take escaped in a link */
    apr_interval_time_t deadline; /* CouchPageBackendDeadline, for its log line */
    cp_count_policy count;  /* CouchPageCount: what a _find location's count may read */
    int jump_reach;         /* CouchPageJumpReach: ?page=N reads this many pages from
                               either end (couchpage_jump) */
    int update_seq;         /* a view location's queries ask update_seq=true: the
                               page's sequence in cp_served.seq (cp_plan_ask_seq) */
} cp_source;

/* The request's own: its arguments (args.start: the token as sent) and
 * the rows a page holds. */
typedef struct {
    const cp_args *args;    /* args->start no longer than the location's
                               CouchPageMaxTokenLength: the glue caps it */
    int count;
    const char *prefer;     /* the Prefer header as sent (count=...); NULL: none */
} cp_request;

/* A page served, and what sending it needs. */
typedef struct {
    cp_page page;
    const cp_view *view;    /* the view its tokens are bound to (a _find location's
                               index's, with page links): its URL names it in
                               log lines */
    const char *binding;    /* what its tokens are sealed to */
    const char *preference_applied; /* Preference-Applied's value; NULL: none */
    int prefer_varies;      /* the page's count depends on the Prefer header */
    const char *seq;        /* with source->update_seq, a view location's page: the
                               update_seq its every answer carried (cp_plan_seq);
                               NULL: none, or they differed */
} cp_served;

/* What a location's tokens must fit in: CouchPageMaxTokenLength as sent,
 * the bytes a link's URL leaves them escaped, sealed or not, and
 * _all_docs' ids, which CouchDB compares as bytes. */
static inline cp_token_room cp_source_token_room(const cp_source *src)
{
    cp_token_room room;

    room.max_sent = src->max_token_length;
    room.max_escaped = src->token_url_room;
    room.sealed = src->token_key != NULL;
    room.raw_ids = src->view->is_all_docs;
    room.extra = room.extra_escaped = 0;
    return room;
}

/* Whether every query of src brings its index up to date first
 * (CouchPageUpdate true or unset, CouchPageStable not On): only then does
 * a sequence tell when its pages can have changed (the ETag's seal of
 * couchpage_fresh, the walk's mark of couchpage_changed). Where the index
 * lags, it catches up without the database's sequence moving, and the
 * view's sequence misses the documents' edits. */
static inline int cp_source_index_current(const cp_source *src)
{
    const cp_view *view = src->view;

    return (!view->update || !strcmp(view->update, "true"))
           && (!view->stable || strcmp(view->stable, "true"));
}

/* Whether src's pages show a current index's rows alone (no documents;
 * _all_docs' are its own), so that the view's own sequence, which every
 * answer carries, tells when they change. */
static inline int cp_source_rows_alone(const cp_source *src)
{
    return cp_source_index_current(src) && !src->find
           && (!src->view->include_docs || src->view->is_all_docs);
}

#endif
