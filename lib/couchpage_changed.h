/* SPDX-License-Identifier: Apache-2.0 */
/*
 * couchpage_changed: "the list changed since you began". A walk begins at
 * the first page read (a request without a token); the sequence that
 * page's answers carried (cp_plan_seq: a view's update_seq, _all_docs'
 * the database's) is its start. Every token a page of the walk hands out
 * carries that start, its mark, inside (cp_token_mark: a view token's
 * last member, an object's "w"; couchpage_token.h). The Last page's token
 * "last" is every walk's, so a walk begins there too (walking back). A mark is
 * what comparing needs, not the packed sequence (some 80 bytes a shard
 * range): one entry a shard range, "TAG" + the copy's sequence number in
 * decimal, entries joined by '.'; TAG 5 base64url characters, 30 bits of
 * a hash (FNV-1a) of the term naming the range's node and range (the copy
 * that answered). A sequence of more than CP_CHANGED_RANGES ranges is one entry:
 * the TAG of all its copies, and N, the sum CouchDB writes before its
 * packed payload. A sequence that is no packed list (a number, the double's
 * "N-double") is one entry of its own.
 *
 * A later page compares its own answers' sequence with its token's WALK,
 * range by range, where the same copy answered both: a copy whose number
 * grew was written (a row of the view emitted, changed or gone: CouchDB
 * 3.4 moves a view's sequence only when its rows change; _all_docs' at
 * every write): changed. Every range answered by the same copy at the same
 * number: nothing was written to the view (to the database, for
 * _all_docs). Anything else (another copy answered, whose numbers count
 * another way; a number that went back; an old token; no sequence): it
 * cannot tell. Only where a page shows the view's rows alone (cp_source_rows_alone)
 * does "nothing written" tell that the page's content stands: an edit of a
 * document the view does not emit moves no view sequence, so a page of
 * documents says changed, or nothing. A forged mark misleads only its
 * sender's own page. httpd-free.
 */
#ifndef COUCHPAGE_CHANGED_H
#define COUCHPAGE_CHANGED_H

#include <apr_pools.h>

#include "couchpage_fault.h"
#include "couchpage_page.h"
#include "couchpage_source.h"
#include "couchpage_token.h"

/* What a page can tell of its walk (cp_page.changed). */
typedef enum {
    CP_CHANGED_UNKNOWN = 0, /* it cannot tell: no "changed" member */
    CP_CHANGED_NO,          /* nothing was written to the list since the walk began */
    CP_CHANGED_YES,         /* rows may have been written since */
} cp_changed_state;

/* Shard ranges a mark names one by one; a sequence of more is one entry. */
#define CP_CHANGED_RANGES CP_TOKEN_MARK_RANGES
/* The characters of an entry's TAG. */
#define CP_CHANGED_TAG CP_TOKEN_MARK_TAG

/* The mark of a sequence (cp_plan_seq's spelling): NULL when it cannot be
 * read. */
const char *cp_changed_mark(apr_pool_t *pool, const char *seq);

/* Whether text[0..len) is a mark's form. */
int cp_changed_mark_valid(const char *text, apr_size_t len);

/* Compares a walk's mark with a page's sequence: CP_CHANGED_YES where a
 * copy that answered both counts more now, CP_CHANGED_NO where every range
 * was answered by the same copy at the same number, else
 * CP_CHANGED_UNKNOWN (mark or seq NULL too). */
cp_changed_state cp_changed_compare(apr_pool_t *pool, const char *mark, const char *seq);

/* A page's walk, as cp_serve carries it. */
typedef struct {
    int applies;        /* the location's answers tell sequences: every query asks
                           update_seq=true (the index brought up to date first) */
    int says_no;        /* a page can say nothing changed (cp_source_rows_alone) */
    int begins;         /* no token, or "last": this page begins the walk */
    const char *walk;   /* the walk's start (the token's, or, when it begins,
                           this page's) */
    const char *here;   /* this page's own mark */
    int jumped;         /* it begins at ?page=N's page, which says what the
                           walk's page N would: nothing changed since */
    int answered;       /* cp_changed_answered was called */
    const char *seq;    /* the page's sequence, where cp_served's is not set: a _find
                           location's page read from its index's view */
    cp_token_room room; /* the location's tokens' (cp_source_token_room) */
} cp_walk;

/* The walk of a request to source, client_start the token as the client
 * sent it (NULL: none). */
void cp_changed_open(const cp_source *source, const char *client_start, cp_walk *walk);

/* The token decoded (NULL: none): the walk's start it carries; a walk
 * begins at the first page and at the Last page ("last", which every walk
 * shares). */
void cp_changed_token(cp_walk *walk, const cp_token *token);

/* Once the page's answers came (seq: their sequence, NULL: none): this
 * page's mark, the walk's when it begins here; the bytes the mark will
 * add to every token the page hands out, as sent (returned) and escaped
 * in a URL (*escaped), for cp_token_room's extra; 0 where none is carried
 * (a cap too small to spare a quarter for it). room NULL: the location's. */
apr_size_t cp_changed_answered(apr_pool_t *pool, cp_walk *walk, const char *seq,
                               const cp_token_room *room, apr_size_t *escaped);

/* cp_changed_answered's bytes as room's extra, and made's (a smaller room
 * of the same location's, cp_count_group_room's). */
void cp_changed_room(apr_pool_t *pool, cp_walk *walk, const char *seq, cp_token_room *room,
                     cp_token_room *made);

/* The page served: served->seq (walk->seq where unset), its changed (and
 * count_changed where its count is an earlier page's), and every token it
 * hands out marked with the walk's start (cp_token_mark). A jumped page's
 * own token (?page=N's, as the jump made it: sent as a client would send
 * it, and opened; sent NULL: no jump) marked too, sealed where source's
 * tokens are (for served->binding), so that the page is the very page the
 * walk's token to page N opens: its current link, and its last when it is
 * the Last page. NULL, or the fault when sealing failed. */
const cp_fault *cp_changed_finish(apr_pool_t *pool, cp_walk *walk, const cp_source *source,
                                  const char *sent, const char *opened, cp_served *served);

#endif
