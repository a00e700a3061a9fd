/* SPDX-License-Identifier: Apache-2.0 */
/*
 * couchpage_fresh: revalidation that reads no rows. A page's entity tag is
 * its content digest (cp_render_etag: the identity, the same from every
 * server and cluster node for the same content) and a seal beside it:
 * "D.S", S a MAC under the configuration's key of (D, its weakness, the
 * page's binding, a sequence that moves whenever the page's content can
 * have changed). Which sequence (docs/operations.md, "Revalidation that
 * reads no rows"):
 *  - a view location whose page shows the view's rows alone (no
 *    documents; or _all_docs): the view's update_seq, which every query of
 *    the page asks with update_seq=true (no request more), taken from the
 *    answers the rows came from (cp_plan_seq: in a cluster, the shard
 *    copies that answered, named in the packed sequence, spelt one way:
 *    cp_seq_canonical), so every page is sealed; a sealed tag is checked
 *    by one limit=0 query of the view;
 *  - a page that shows documents (include_docs, _find): the database's
 *    update_seq, which an edit of any document moves (the view's does not
 *    move for an edit the view does not emit), read by a GET of the
 *    database before the page, only for a request with If-None-Match; the
 *    page sealed with it only where the two reads name the same shard
 *    copies: for every range the page read, the copy its answers name
 *    (each copy reads its rows' documents itself) is the one the
 *    database's sequence names, which had every write the sequence counts
 *    (cp_seq_copies_within); or where the database keeps one copy of each
 *    range (its GET's cluster.n is 1, or it has no cluster member). Else
 *    (another copy, which may lack a write the sequence counts; a _find
 *    answer, which names none) the tag gets no seal: a seal would bind the
 *    newer sequence to an older page.
 * The sequence itself never leaves the server. A tag whose seal verifies
 * against the sequence read now is answered 304 after that one read (no
 * rows, no rendering); any other gets the full page, whose digest is
 * compared with the client's tags (a tag's D alone: a sequence that
 * differs by the node that answered, or a tag of another server, still
 * gets its 304 when the content is the same). A seal cannot be made
 * without the key, and is trusted only for the sequence the backend
 * answers now. httpd-free.
 */
#ifndef COUCHPAGE_FRESH_H
#define COUCHPAGE_FRESH_H

#include <apr_pools.h>

#include "couchpage_serve.h"

/* The bytes of a configuration's key: the glue's, a digest of the
 * module's version, the configuration and the token secret. */
#define CP_FRESH_KEY_LEN 32

/* The key, key[CP_FRESH_KEY_LEN], digested (SHA-256) from text (the
 * glue's: the configuration as read). 1, or 0 when libcrypto fails. */
int cp_fresh_derive_key(const char *text, unsigned char *key);

/* A revalidation's inputs (the glue's) and what it found. */
typedef struct {
    const unsigned char *key;  /* CP_FRESH_KEY_LEN bytes; NULL: tags carry no seal */
    const char *if_none_match; /* the request's If-None-Match; NULL: none */
    const char *context;       /* what else shapes the page's bytes that the source does
                                  not say (the format, the links' path): bound to the
                                  seal */
    /* out */
    const char *seq;           /* the sequence the page is sealed with ("view S": its
                                  answers'; "db S": the database's read before it,
                                  where its shard copies are the page's);
                                  NULL: none (the tag gets no seal) */
    const char *binding;       /* the page's binding: the fields the seal binds
                                  (cp_fresh_serve's) */
    apr_size_t binding_fixed;  /* its first bytes, the same for every page of the
                                  location and context (its own start and size
                                  after them) */
    int not_modified;          /* the client's tag verified: answer 304, no page */
    const char *etag;          /* then: the tag to send (the client's, as verified) */
    int seq_reads;             /* backend reads made for the sequence before the page
                                  (0 or 1) */
} cp_fresh;

/* Serves the page as cp_serve does where fresh has a key and the source's
 * index is current (cp_source_index_current, couchpage_source.h): by its
 * view where its pages show the view's rows alone (cp_source_rows_alone),
 * its queries asking update_seq, an If-None-Match holding a sealed tag
 * first checked by one limit=0 query of the view; else, with an
 * If-None-Match, the database's update_seq read first (the page sealed
 * with it only where it names the page's shard copies, or there is one
 * copy a range). When a tag of the header verifies against the sequence
 * read, fresh->not_modified is set and no page is served (served is
 * untouched). A sequence that cannot be read is no fault: the page goes
 * without a seal (a debug line says why). */
const cp_fault *cp_fresh_serve(apr_pool_t *pool, const cp_source *source,
                               const cp_request *req, const cp_transport *transport,
                               cp_fresh *fresh, cp_served *served);

/* The page's tag: content_tag (cp_render_etag's) with the seal of
 * fresh->seq when there is one; content_tag as it is otherwise. NULL when
 * libcrypto fails. */
const char *cp_fresh_etag(apr_pool_t *pool, const cp_fresh *fresh, const char *content_tag);

/* Whether an If-None-Match header (any bytes; NULL: none) names the
 * page's tag by weak comparison of content digests ("*" names any): a
 * tag's seal is left out of the comparison. Malformed members are
 * skipped. */
int cp_fresh_matches(const char *if_none_match, const char *etag);

#endif
