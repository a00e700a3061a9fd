/* SPDX-License-Identifier: Apache-2.0 */
/*
 * couchpage_fresh: revalidation that reads no rows. A page's entity tag is
 * its content digest (cp_render_etag: the identity, the same from every
 * server and cluster node for the same content), and, when the page was
 * served after the database's update_seq was read, a seal beside it:
 * "D.S", S a MAC under this server's key of (D, its weakness, the page's
 * binding, the sequence). The sequence itself never leaves the server. An
 * If-None-Match whose seal verifies against the database's update_seq read
 * now is answered 304 after that one read (GET on the database: no rows,
 * no rendering); any other is the full page, whose digest is compared with
 * the client's tags (a tag's D alone: a sequence that differs by the node
 * that answered, or a tag of another server, still gets its 304 when the
 * content is the same). A tag's seal is only a hint: it cannot be forged
 * without the key, is bound to the page's request and content digest, and
 * is trusted only for the sequence the backend answers now. httpd-free.
 */
#ifndef COUCHPAGE_FRESH_H
#define COUCHPAGE_FRESH_H

#include <apr_pools.h>

#include "couchpage_serve.h"

/* The bytes of a server's key: random, made each time httpd reads its
 * configuration (a restart or a new configuration seals anew). */
#define CP_FRESH_KEY_LEN 32

/* A revalidation's inputs (the glue's) and what it found. */
typedef struct {
    const unsigned char *key;  /* CP_FRESH_KEY_LEN bytes; NULL: tags carry no seal */
    const char *if_none_match; /* the request's If-None-Match; NULL: none */
    const char *context;       /* what else shapes the page's bytes that the source does
                                  not say (the format, the links' path): bound to the
                                  seal */
    /* out */
    const char *seq;           /* the database's update_seq read before the page;
                                  NULL: none (the tag gets no seal) */
    const char *binding;       /* the page's binding, digested (cp_fresh_serve's) */
    int not_modified;          /* the client's tag verified: answer 304, no page */
    const char *etag;          /* then: the tag to send (the client's, as verified) */
    int seq_reads;             /* backend reads made for the sequence (0 or 1) */
} cp_fresh;

/* Whether the database's sequence tells when a page of source can have
 * changed: only where every query brings the index up to date first
 * (CouchPageUpdate true or unset, CouchPageStable not On). Where the index
 * lags, the index catches up without the database's sequence moving, and
 * the view's sequence misses the documents' edits: no seal there. */
int cp_fresh_applies(const cp_source *source);

/* Serves the page as cp_serve does, first reading the database's
 * update_seq when fresh has a key, the request an If-None-Match and the
 * source cp_fresh_applies; when a tag of the header verifies against it,
 * fresh->not_modified is set and no page is served (served is untouched).
 * A sequence that cannot be read is no fault: the page goes without a seal
 * (a debug line says why). */
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
