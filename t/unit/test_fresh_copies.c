/* SPDX-License-Identifier: Apache-2.0 */
/* A page that shows documents is sealed with the database's sequence only
 * where that sequence names, for each shard range the page read, the copy
 * the page's rows and documents came from, or where the database keeps one
 * copy of each range (couchpage_fresh's db_seal_doubt,
 * cp_seq_copies_within): else a copy without a write the sequence counts
 * could have answered the page, and a seal would keep that older page. */
#include "fake_transport.h"

#include <apr_encode.h>
#include <apr_strings.h>

#include "couchpage_fresh.h"
#include "couchpage_seq.h"

#define CONTENT "W/\"c0ntentDigest\""
#define CLUSTER_3 "{\"q\":2,\"n\":3,\"w\":2,\"r\":2}"
#define CLUSTER_1 "{\"q\":2,\"n\":1,\"w\":1,\"r\":1}"

static void put_be32(unsigned char *out, apr_uint32_t v)
{
    out[0] = (unsigned char)(v >> 24);
    out[1] = (unsigned char)(v >> 16);
    out[2] = (unsigned char)(v >> 8);
    out[3] = (unsigned char)v;
}

/* An atom term (CouchDB's node names: tag 100, 2-byte length) at out. */
static apr_size_t atom(unsigned char *out, const char *name)
{
    apr_size_t len = strlen(name);

    out[0] = 100;
    out[1] = 0;
    out[2] = (unsigned char)len;
    memcpy(out + 3, name, len);
    return 3 + len;
}

/* A packed sequence as CouchDB 3.4.3 writes it, uncompressed, of
 * strlen(nodes) shard ranges: range i answered by node "couchdb@" + nodes[i]
 * at seqs[i]; listed from the last range when reversed. As the database's
 * GET packs them ({Seq, Uuid, Node}: db) or a view's answer (Seq). Its
 * JSON, as the fake answers it. */
static const char *packed(const char *nodes, const int *seqs, int db, int reversed)
{
    unsigned char raw[1024];
    apr_size_t at = 0;
    int n = (int)strlen(nodes), i;

    raw[at++] = 131;
    raw[at++] = 108;
    put_be32(raw + at, (apr_uint32_t)n);
    at += 4;
    for (i = 0; i < n; i++) {
        int r = reversed ? n - 1 - i : i;
        char node[32];

        apr_snprintf(node, sizeof(node), "couchdb@%c", nodes[r]);
        raw[at++] = 104;
        raw[at++] = 3;
        at += atom(raw + at, node);
        /* the range [B, E] */
        raw[at++] = 108;
        put_be32(raw + at, 2);
        at += 4;
        raw[at++] = 98;
        put_be32(raw + at, (apr_uint32_t)(r * 0x40000000));
        at += 4;
        raw[at++] = 98;
        put_be32(raw + at, (apr_uint32_t)(r * 0x40000000 + 0x3fffffff));
        at += 4;
        raw[at++] = 106;
        if (db) {
            raw[at++] = 104;
            raw[at++] = 3;
        }
        raw[at++] = 97;
        raw[at++] = (unsigned char)seqs[r];
        if (db) {
            raw[at++] = 109;
            put_be32(raw + at, 7);
            at += 4;
            memcpy(raw + at, "9d27748", 7);
            at += 7;
            at += atom(raw + at, node);
        }
    }
    raw[at++] = 106;
    for (i = 0, n = 0; nodes[i]; i++) {
        n += seqs[i];
    }
    return apr_psprintf(pool, "\"%d-%s\"", n,
                        apr_pencode_base64_binary(pool, raw, at, APR_ENCODE_BASE64URL, NULL));
}

/* The sequence's canonical spelling (its JSON's string). */
static const char *canonical(const char *json)
{
    return cp_seq_canonical(pool, apr_pstrndup(pool, json + 1, strlen(json) - 2));
}

/* Revalidates the location's first page with CONTENT's tag, unsealed: the
 * full page is served; its tag, sealed or not (*sealed). */
static const char *revalidated(location *l, int *sealed)
{
    cp_fresh fresh;
    const char *tag;

    assert_null(serve_fresh(l, NULL, CONTENT, &fresh));
    assert_false(fresh.not_modified);
    assert_int_equal(fresh.seq_reads, 1);
    assert_non_null(l->served.page.rows);
    tag = cp_fresh_etag(pool, &fresh, CONTENT);
    assert_non_null(tag);
    *sealed = fresh.seq != NULL;
    /* sealed or not, the tag names the content */
    assert_true(cp_fresh_matches(tag, CONTENT));
    assert_true(*sealed ? strlen(tag) > strlen(CONTENT) : !strcmp(tag, CONTENT));
    return tag;
}

/* Whether the tag is answered 304 from its seal, no rows read. */
static int not_modified(location *l, const char *tag)
{
    cp_fresh fresh;
    int asks = l->fake->asks, finds = l->fake->finds;

    assert_null(serve_fresh(l, NULL, tag, &fresh));
    if (fresh.not_modified) {
        assert_int_equal(l->fake->asks, asks);
        assert_int_equal(l->fake->finds, finds);
    }
    return fresh.not_modified;
}

/* Revalidates the page (revalidated) and its tag: sealed and answered 304
 * from the seal, or neither. */
static void revalidated_as(location *l, int sealed_and_not_modified)
{
    int sealed;
    const char *tag = revalidated(l, &sealed);

    assert_int_equal(sealed, sealed_and_not_modified);
    assert_int_equal(not_modified(l, tag), sealed_and_not_modified);
}

static location *documents_location(const char *cluster)
{
    location *l = location_of(ten_rows(), VIEW_URL, 3, 0);

    l->view.include_docs = 1;
    l->fake->cluster = cluster;
    return l;
}

/* A view page with documents in a cluster: each range's copy the
 * database's sequence names answered the page too (listed in another
 * order): sealed, and its seal verifies until the database moves. */
static void same_copies_are_sealed(void **state)
{
    static const int db_seqs[] = { 5, 7 }, view_seqs[] = { 2, 3 }, moved[] = { 6, 7 };
    location *l = documents_location(CLUSTER_3);
    const char *tag;
    int sealed;

    (void)state;
    l->fake->seq = packed("AB", db_seqs, 1, 0);
    l->fake->view_seq = packed("AB", view_seqs, 0, 1);
    tag = revalidated(l, &sealed);
    assert_true(sealed);
    assert_true(not_modified(l, tag));
    /* a write to range 0: the database's sequence moves, the page again */
    l->fake->seq = packed("AB", moved, 1, 0);
    assert_false(not_modified(l, tag));
}

/* The database's sequence read from copies A and B, the page's second
 * range from C, which may not have the write B has (w=2): no seal, the
 * full page with its content's tag; and a later revalidation reading the
 * same database sequence gets no 304 from a seal, but the page again. */
static void a_range_from_another_copy_is_not_sealed(void **state)
{
    static const int db_seqs[] = { 5, 8 }, view_seqs[] = { 2, 3 };
    location *l = documents_location(CLUSTER_3);
    const char *tag;
    int sealed, asks;

    (void)state;
    l->fake->seq = packed("AB", db_seqs, 1, 0);
    l->fake->view_seq = packed("AC", view_seqs, 0, 0);
    tag = revalidated(l, &sealed);
    assert_false(sealed);
    assert_true(logged(l->fake, "CP0390", CP_LOG_DEBUG));
    asks = l->fake->asks;
    assert_false(not_modified(l, tag));
    assert_int_equal(l->fake->asks, asks + 1);
    /* once the copies agree, sealed */
    l->fake->view_seq = packed("AB", view_seqs, 0, 0);
    revalidated_as(l, 1);
}

/* One copy of each range (n=1, or no cluster at all): every read is of the
 * same copies, so the page is sealed whatever its answers name. */
static void one_copy_is_sealed(void **state)
{
    static const int db_seqs[] = { 5, 7 }, view_seqs[] = { 2, 3 };
    location *l = documents_location(CLUSTER_1);
    int sealed;

    (void)state;
    l->fake->seq = packed("AB", db_seqs, 1, 0);
    l->fake->view_seq = NULL;
    revalidated_as(l, 1);
    /* a database that says nothing of copies (PouchDB Server's, numbers) */
    l = documents_location(NULL);
    l->fake->seq = "12";
    l->fake->view_seq = "4";
    revalidated_as(l, 1);
    /* a cluster that tells no n: the copies must agree */
    l = documents_location("{\"q\":2}");
    l->fake->seq = packed("AB", db_seqs, 1, 0);
    l->fake->view_seq = packed("AC", view_seqs, 0, 0);
    revalidated(l, &sealed);
    assert_false(sealed);
    l->fake->view_seq = packed("BA", view_seqs, 0, 0);
    revalidated(l, &sealed);
    assert_false(sealed);
    l->fake->view_seq = packed("AB", view_seqs, 0, 0);
    revalidated(l, &sealed);
    assert_true(sealed);
}

/* A _find page by POST .../_find: its answer names no copies. Sealed on a
 * database of one copy a range, not on a cluster of three. */
static void find_without_copies_on_a_cluster_is_not_sealed(void **state)
{
    static const int db_seqs[] = { 5, 7 };
    location *l = find_location(ten_rows(), "n", "{\"n\":{\"$gt\":2}}", 3, 0);

    (void)state;
    l->fake->seq = packed("AB", db_seqs, 1, 0);
    l->fake->cluster = CLUSTER_3;
    revalidated_as(l, 0);
    assert_true(logged(l->fake, "CP0390", CP_LOG_DEBUG));
    l->fake->cluster = CLUSTER_1;
    revalidated_as(l, 1);
}

/* A _find location numbered through its index's view: the view's answer
 * names the copies its rows and documents came from. */
static void find_through_its_index_names_its_copies(void **state)
{
    static const int db_seqs[] = { 5, 7 }, view_seqs[] = { 2, 3 };
    location *l = indexed_location(0);
    const char *tag;
    int sealed;

    (void)state;
    l->fake->seq = packed("AB", db_seqs, 1, 0);
    l->fake->cluster = CLUSTER_3;
    l->fake->view_seq = packed("AB", view_seqs, 0, 1);
    tag = revalidated(l, &sealed);
    assert_true(l->served.page.numbered);
    assert_true(sealed);
    assert_true(not_modified(l, tag));
    l->fake->view_seq = packed("CB", view_seqs, 0, 0);
    revalidated_as(l, 0);
}

/* cp_seq_copies_within: by node and range, whatever the sequences, the
 * order, or the form of the element's sequence. */
static void copies_within(void **state)
{
    static const int a[] = { 5, 7, 9 }, b[] = { 1, 2, 3 };

    (void)state;
    assert_true(cp_seq_copies_within(pool, canonical(packed("ABC", b, 0, 0)),
                                     canonical(packed("ABC", a, 1, 1))));
    assert_false(cp_seq_copies_within(pool, canonical(packed("ABA", b, 0, 0)),
                                      canonical(packed("ABC", a, 1, 0))));
    /* a range the page did not read (a partition's) does not matter */
    assert_true(cp_seq_copies_within(pool, canonical(packed("A", b, 0, 0)),
                                     canonical(packed("AB", a, 1, 0))));
    assert_false(cp_seq_copies_within(pool, canonical(packed("AB", b, 0, 0)),
                                      canonical(packed("A", a, 1, 0))));
    /* the same node for another range is another copy */
    assert_false(cp_seq_copies_within(pool, canonical(packed("AA", b, 0, 0)),
                                      canonical(packed("AB", a, 1, 0))));
    /* numbers are one copy's; what cannot be read names nothing */
    assert_true(cp_seq_copies_within(pool, "12", "40"));
    assert_false(cp_seq_copies_within(pool, "12", canonical(packed("A", a, 1, 0))));
    assert_false(cp_seq_copies_within(pool, NULL, "12"));
    assert_false(cp_seq_copies_within(pool, "12", "x-?"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        UNIT_TEST(same_copies_are_sealed),
        UNIT_TEST(a_range_from_another_copy_is_not_sealed),
        UNIT_TEST(one_copy_is_sealed),
        UNIT_TEST(find_without_copies_on_a_cluster_is_not_sealed),
        UNIT_TEST(find_through_its_index_names_its_copies),
        UNIT_TEST(copies_within),
    };

    RUN_UNIT_TESTS("fresh_copies", tests);
}
