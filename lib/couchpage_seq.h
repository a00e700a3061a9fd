/* SPDX-License-Identifier: Apache-2.0 */
/*
 * couchpage_seq: CouchDB's update_seq in one spelling for one state.
 * CouchDB 2.x and later packs a sequence as "N-PAYLOAD": N the sum of the
 * shard copies' sequences, PAYLOAD base64url of Erlang's
 * term_to_binary([{Node, [Begin, End], Seq}, ...], [compressed]), one
 * element per shard range, listed in the order the copies answered, which
 * varies from one read to the next (a shard whose index just caught up
 * answers last). The same copies at the same sequences are the same
 * elements: sorted, they spell one state one way. httpd-free.
 */
#ifndef COUCHPAGE_SEQ_H
#define COUCHPAGE_SEQ_H

#include <apr_pools.h>
#include <apr_tables.h>

/* seq with a packed payload's elements sorted by their bytes ("N-" and
 * the sorted elements, base64url); any other sequence (a number, a string
 * that is no packed list) as it is. The spellings a thread made last are
 * kept (malloc'd, a few, bounded) and given again for the same seq,
 * pool-owned, without unpacking it again. */
const char *cp_seq_canonical(apr_pool_t *pool, const char *seq);

/* One element of a sequence: what names its shard copy (the bytes of its
 * node's and its range's terms; a sequence that is no packed list, a
 * number or "N-WORD", is one element named by WORD, "" for a number) and
 * that copy's sequence number. */
typedef struct {
    const unsigned char *name;
    apr_size_t name_len;
    apr_int64_t seq;
} cp_seq_element;

/* The elements (cp_seq_element) of a sequence in cp_seq_canonical's
 * spelling, in its order; NULL when it is none of the forms above, or an
 * element is not {Node, Range, Seq} with Seq a whole number (or a tuple
 * that begins with one) below 2^62. */
apr_array_header_t *cp_seq_elements(apr_pool_t *pool, const char *canonical);

/* Whether every shard copy named in page (cp_seq_canonical's spelling) is
 * named in db too: each of page's elements has its name (its node and
 * range) among db's. 0 when either cannot be read (cp_seq_elements). */
int cp_seq_copies_within(apr_pool_t *pool, const char *page, const char *db);

#endif
