/* SPDX-License-Identifier: Apache-2.0 */
/* The fake CouchDB the tests of cp_serve serve their pages through (a
 * cp_transport answering as CouchDB would from rows and documents held in the
 * test: a view read by its parameters, a _find body by its selector, sort and
 * limit, a design document), the location a test serves, and the fixtures
 * the test programs share (fake_transport.c, serve_fixtures.c). */
#ifndef COUCHPAGE_FAKE_TRANSPORT_H
#define COUCHPAGE_FAKE_TRANSPORT_H

/* one test pool for the program's files: serve_fixtures.c defines it */
#define UNIT_POOL_EXTERN
#include "unit.h"

#include <apr_hash.h>

#include "couchpage_find.h"
#include "couchpage_fresh.h"
#include "couchpage_serve.h"

typedef struct {
    const char *id;
    json_t *key;
    json_t *value;
} fake_row;

typedef struct {
    apr_array_header_t *rows;   /* map rows (fake_row), in view order */
    apr_array_header_t *docs;   /* documents (json_t *) for _find and include_docs */
    const char *ddoc;           /* the design document a GET of /_design/ answers */
    int ddoc_status;            /* else: CouchDB's status for it (404, 500) */
    cp_transport_failure ddoc_fail; /* or its read fails so, when its status */
    const char *explain;        /* what _explain answers; NULL: 404 (no _explain) */
    const char *indexes;        /* what GET /db/_index answers; NULL: 404 */
    cp_transport_failure index_fail; /* or its read fails so, when its status */
    int index_gets;             /* reads of /db/_index */
    const char *warning;        /* a _find answer's warning */
    int overfull;               /* answers hold a row more than their limit */
    int cut_after;              /* a multi-query answer ends after this many results */
    cp_transport_failure alone_fail; /* the queries asked alone fail so, when its status */
    cp_transport_failure fail;  /* every ask fails so, when fail.status */
    int edit_at;                /* before this _find (1: the first), ... */
    int edit_probe;             /* (or, edit_at 0, before this read of the next key) */
    cp_transport_failure probe_fail; /* reads of the next key fail so, when its status */
    const char *probe;          /* the last read of the next key */
    const char *edit;           /* ... this document replaces the one of its _id */
    int counts;                 /* count queries of grouped rows asked */
    const char *last_find; /* the body of the last _find asked */
    const char *last_find_url, *last_get, *last_post; /* the URLs last asked so */
    const char *seq;            /* the database's update_seq, its JSON; NULL: a GET of the
                                   database fails (503) */
    const char *cluster;        /* the database's "cluster" member, its JSON; NULL: none */
    const char *view_seq;       /* the view's update_seq, its JSON, in every answer to a
                                   query that asks update_seq=true; NULL: none */
    int odd_role;               /* 1 + the role whose answer gets odd_seq instead */
    const char *odd_seq;
    int asks, asked_alone, finds, gets, posts, probes, db_gets;
    int asked_seq;              /* queries that asked update_seq=true */
    int range_probes;           /* range start and range end probes asked */
    int last_limit;             /* the limit of the last query asked */
    apr_hash_t *notes, *seen;
    apr_array_header_t *log;    /* "CPnnnn level text" */
} fake;

typedef struct {
    fake *fake;
    cp_transport transport;
    cp_view view;
    cp_source source;
    cp_find_spec spec;
    cp_find_sort sort[2];
    cp_args args;
    cp_request req;
    cp_served served;
} location;

#define VIEW_URL "http://couch:5984/db/_design/d/_view/v"

/* A design document of one JSON index on k and n. */
#define INDEX_DDOC "{\"_id\":\"_design/idx\",\"language\":\"query\",\"views\":{\"by-kn\":" \
    "{\"map\":{\"fields\":{\"k\":\"asc\",\"n\":\"asc\"}},\"reduce\":\"_count\"," \
    "\"options\":{\"def\":{\"fields\":[\"k\",\"n\"]}}}}}"

/* --- the fake (fake_transport.c) --- */
const char *url_param(const char *url, const char *name);
fake *fake_make(void);
void add_row(fake *f, const char *key, const char *id, int value);
fake *fake_of(const char *const *rows);
void add_doc(fake *f, const char *json);
int logged(const fake *f, const char *code, int level);
location *location_of(fake *f, const char *url, int count, int links);
location *find_location(fake *f, const char *field, const char *selector, int count,
                        int links);

/* --- serving (serve_fixtures.c) --- */
const cp_fault *serve(location *l, const char *start);
/* the key the revalidation tests seal with */
extern const unsigned char fresh_key[CP_FRESH_KEY_LEN];
/* Serves the location's page at start with an If-None-Match (inm NULL:
 * none), as cp_fresh_serve does: NULL, or the fault. */
const cp_fault *serve_fresh(location *l, const char *start, const char *inm, cp_fresh *fresh);
cp_page *page_at(location *l, const char *start);
const char *row_names(const cp_page *page);
const json_t *row_value(const cp_row *row);
void walk_both_ways(location *l, const char *const *pages, int n, apr_int64_t total);
fake *ten_rows(void);
location *counted_location(const char *selector, int count, int links, int cap);
fake *indexed_docs(void);
location *indexed_location(int links);
void assert_fault(const cp_fault *fault, cp_fault_class kind, int status, const char *error,
                  const char *code);

#endif
