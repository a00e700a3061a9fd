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

/* seq with a packed payload's elements sorted by their bytes ("N-" and
 * the sorted elements, base64url); any other sequence (a number, a string
 * that is no packed list) as it is. The spellings a thread made last are
 * kept (malloc'd, a few, bounded) and given again for the same seq,
 * pool-owned, without unpacking it again. */
const char *cp_seq_canonical(apr_pool_t *pool, const char *seq);

#endif
