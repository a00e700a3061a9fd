/* SPDX-License-Identifier: Apache-2.0 */
/* cp_serve's faults (overfull and cut answers, backend failures, deadlines,
 * bad requests) typed as the glue answers them, and revalidation from the
 * database's sequence (couchpage_fresh: sealed ETags, 304s), served through
 * the fake transport (fake_transport.c). */
#include "fake_transport.h"

#include <apr_encode.h>
#include <apr_strings.h>

#include "couchpage_fresh.h"
#include "couchpage_seq.h"

/* --- faults ---------------------------------------------------------------- */

static void overfull_answers_are_refused_on_every_location(void **state)
{
    location *l = location_of(ten_rows(), VIEW_URL, 3, 1);
    const cp_fault *fault;

    l->fake->overfull = 1;
    fault = serve(l, NULL);
    assert_fault(fault, CP_FAULT_BACKEND, 502, "backend_error", "CP0181");
    assert_int_equal(fault->log_level, CP_LOG_ERR);
    assert_non_null(strstr(fault->log_text, "(CouchPageView " VIEW_URL
                                            ", <Location /t> at t.conf:2)"));
    l = find_location(ten_rows(), "n", "{}", 3, 0);
    l->fake->overfull = 1;
    assert_fault(serve(l, NULL), CP_FAULT_BACKEND, 502, "backend_error", "CP0181");
    l = indexed_location(0);
    l->fake->overfull = 1;
    fault = serve(l, NULL);
    assert_fault(fault, CP_FAULT_BACKEND, 502, "backend_error", "CP0181");
    assert_non_null(strstr(fault->log_text, "/_design/idx/_view/by-kn"));
}

/* A multi-query answer cut after its first result: the rest asked alone
 * serve the page; refused alone (CouchDB refusing a token's reversed
 * range), the token's fault; failing alone, the backend's. */
static void cut_batch_answers(void **state)
{
    location *l = location_of(ten_rows(), VIEW_URL, 3, 1);
    const cp_transport_failure refused = { 502, 400, "CouchDB answered 400 "
                                           "query_parse_error: reversed", 0 };
    const cp_transport_failure lost = { 502, 0, "the backend response was cut off", 0 };
    const char *next = apr_pstrdup(pool, page_at(l, NULL)->next);
    const cp_page *page;

    l->fake->cut_after = 1;
    page = page_at(l, next);
    assert_string_equal(row_names(page), "d3 d4 d5");
    assert_true(l->fake->asked_alone > 0);
    assert_true(logged(l->fake, "CP0119", CP_LOG_INFO));
    l->fake->alone_fail = refused;
    assert_fault(serve(l, next), CP_FAULT_CLIENT, 400, "bad_request", "CP0122");
    assert_true(logged(l->fake, "CP0120", CP_LOG_DEBUG));
    l->fake->alone_fail = lost;
    assert_fault(serve(l, next), CP_FAULT_BACKEND, 502, "backend_error", "CP0101");
    assert_true(logged(l->fake, "CP0121", CP_LOG_INFO));
}

static void backend_failures(void **state)
{
    location *l = location_of(ten_rows(), VIEW_URL, 3, 1);
    const cp_transport_failure not_found = { 502, 404, "CouchDB answered 404 not_found: "
                                             "missing", 0 };
    const cp_transport_failure crashed = { 502, 500, "CouchDB answered 500", 0 };
    const cp_transport_failure unreachable = { 503, 0, "the backend is unavailable", 0 };
    const cp_transport_failure late = { 504, 0, "the page's deadline of 30 s passed", 1 };
    const cp_fault *fault;

    l->fake->fail = not_found;
    fault = serve(l, NULL);
    assert_fault(fault, CP_FAULT_BACKEND, 502, "backend_error", "CP0101");
    assert_string_equal(fault->log_text, "the backend queries for /t failed with 502: "
                        "CouchDB answered 404 not_found: missing (CouchPageView " VIEW_URL
                        ", <Location /t> at t.conf:2)");
    l->fake->fail = crashed;
    assert_fault(serve(l, NULL), CP_FAULT_BACKEND, 502, "backend_error", "CP0101");
    l->fake->fail = unreachable;
    assert_fault(serve(l, NULL), CP_FAULT_BACKEND, 503, "backend_unavailable", "CP0101");
    l->fake->fail = late;
    fault = serve(l, NULL);
    assert_fault(fault, CP_FAULT_BACKEND, 504, "backend_timeout", "CP0183");
    assert_non_null(strstr(fault->log_text, "(CouchPageBackendDeadline 30 s; CouchPageView"));
    /* a _find location alike; a 400 to a token's query is the token's */
    l = find_location(ten_rows(), "n", "{}", 3, 0);
    l->fake->fail = late;
    assert_fault(serve(l, NULL), CP_FAULT_BACKEND, 504, "backend_timeout", "CP0183");
    l->fake->fail = not_found;
    l->fake->fail.backend_status = 400;
    assert_fault(serve(l, "{\"a\":[[2],\"d2\"]}"), CP_FAULT_CLIENT, 400, "bad_request",
                 "CP0323");
}

/* The design document's read passed the page's deadline: the page is a
 * 504 then, and no _find is asked after it. */
static void find_index_read_past_the_deadline(void **state)
{
    location *l = indexed_location(0);
    const cp_transport_failure late = { 504, 0, "the page's deadline of 30 s passed, 1 "
                                        "backend request sent", 1 };

    l->fake->ddoc_fail = late;
    assert_fault(serve(l, NULL), CP_FAULT_BACKEND, 504, "backend_timeout", "CP0183");
    assert_int_equal(l->fake->finds, 0);
    assert_int_equal(l->fake->asks, 0);
}

static void request_faults(void **state)
{
    location *l = location_of(ten_rows(), VIEW_URL, 3, 1);
    const cp_fault *fault;

    assert_fault(serve(l, "not a token"), CP_FAULT_CLIENT, 400, "bad_request", "CP0102");
    /* a token past the location's rows: CouchDB's answer places it */
    assert_string_equal(row_names(page_at(l, "[42,\"d42\"]")), "");
    /* a range whose bounds cannot bound it is the configuration's */
    l->fake->asks = 0;
    l->source.low = "[1";
    l->source.range_set = 1;
    fault = serve(l, NULL);
    assert_fault(fault, CP_FAULT_CONFIG, 500, "internal_error", "CP0104");
    assert_int_equal(l->fake->asks, 0);
    l = find_location(ten_rows(), "n", "{}", 3, 0);
    assert_fault(serve(l, "{\"z\":1}"), CP_FAULT_CLIENT, 400, "bad_request", "CP0102");
}

static void loggable_text_is_escaped_and_cut(void **state)
{
    char long_text[300];

    assert_string_equal(cp_fault_loggable(pool, "a\"b\\c\n\x01\xc3\xa9"),
                        "a\\\"b\\\\c\\n\\x01\\xc3\\xa9");
    memset(long_text, 'x', sizeof(long_text) - 1);
    long_text[sizeof(long_text) - 1] = '\0';
    assert_int_equal(strlen(cp_fault_loggable(pool, long_text)), 203);
}

/* --- revalidation from the database's sequence (couchpage_fresh) -------- */

static const unsigned char other_key[CP_FRESH_KEY_LEN] = "fedcba9876543210fedcba9876543210";

/* The sealed tag a full page at start gets with its content tag (the
 * If-None-Match of a client that holds that content unsealed). */
static const char *sealed_tag(location *l, const char *start, const char *content)
{
    cp_fresh fresh;
    const char *tag;

    assert_null(serve_fresh(l, start, content, &fresh));
    assert_false(fresh.not_modified);
    assert_non_null(fresh.seq);
    tag = cp_fresh_etag(pool, &fresh, content);
    assert_non_null(tag);
    assert_true(strlen(tag) > strlen(content));
    return tag;
}

/* A view location without documents: its every page is sealed with the
 * update_seq its own answers carry (asked with the page's queries, no
 * request more), and a sealed tag is checked by one query that reads no
 * rows. */
static void fresh_unchanged_page_reads_no_rows(void **state)
{
    fake *f = ten_rows();
    location *l = location_of(f, VIEW_URL, 3, 0);
    const char *tag, *content = "\"c0ntentDigest\"", *next;
    cp_fresh fresh;
    int asks;

    (void)state;
    f->seq = "\"99-dbseq\"";
    f->view_seq = "\"7-g1AAAA\"";
    /* a plain GET: one ask, as without a seal, its query asking update_seq;
     * no GET of the database; the tag sealed */
    assert_null(serve_fresh(l, NULL, NULL, &fresh));
    assert_int_equal(f->asks, 1);
    assert_int_equal(f->asked_seq, 1);
    assert_int_equal(f->db_gets, 0);
    assert_int_equal(fresh.seq_reads, 0);
    tag = cp_fresh_etag(pool, &fresh, content);
    assert_true(strlen(tag) > strlen(content));
    assert_true(cp_fresh_matches(tag, content));
    assert_true(cp_fresh_matches(content, tag));
    /* revalidated: one query of limit 0, 304 */
    asks = f->asks;
    assert_null(serve_fresh(l, NULL, apr_pstrcat(pool, "\"x\", ", tag, NULL), &fresh));
    assert_true(fresh.not_modified);
    assert_string_equal(fresh.etag, tag);
    assert_int_equal(f->asks, asks + 1);
    assert_int_equal(f->last_limit, 0);
    assert_int_equal(f->db_gets, 0);
    assert_int_equal(fresh.seq_reads, 1);
    /* an unsealed tag reads no sequence first: the page, sealed */
    asks = f->asks;
    assert_string_equal(sealed_tag(l, NULL, content), tag);
    assert_int_equal(f->asks, asks + 1);
    /* the database's sequence is not the view's: it does not matter here */
    f->seq = "\"100-dbseq\"";
    assert_null(serve_fresh(l, NULL, tag, &fresh));
    assert_true(fresh.not_modified);
    /* a row of the view written: the whole page again (probe, page) */
    f->view_seq = "\"8-g1AAAB\"";
    asks = f->asks;
    assert_null(serve_fresh(l, NULL, tag, &fresh));
    assert_false(fresh.not_modified);
    assert_int_equal(f->asks, asks + 2);
    /* its content is the same: the client's tag still names it */
    assert_true(cp_fresh_matches(tag, cp_fresh_etag(pool, &fresh, content)));
    assert_false(cp_fresh_matches(tag, "\"an0therDigest\""));
    /* a sequence of the same number from other copies: no 304 from it */
    f->view_seq = "\"7-g1AAAC\"";
    assert_null(serve_fresh(l, NULL, tag, &fresh));
    assert_false(fresh.not_modified);
    /* numbers (pouchdb-server's) are sequences too */
    f->view_seq = "42";
    tag = sealed_tag(l, NULL, content);
    assert_null(serve_fresh(l, NULL, tag, &fresh));
    assert_true(fresh.not_modified);
    /* a later page's answers (forward, backward) that differ in their
     * sequence (other copies of a shard): no seal */
    next = apr_pstrdup(pool, page_at(l, NULL)->next);
    assert_non_null(sealed_tag(l, next, content));
    f->odd_role = CP_QUERY_BACKWARD + 1;
    f->odd_seq = "\"41-other\"";
    assert_null(serve_fresh(l, next, NULL, &fresh));
    assert_null(fresh.seq);
    assert_string_equal(cp_fresh_etag(pool, &fresh, content), content);
}

/* CouchDB 3.4.3's packed sequences of one state, its two shards listed in
 * either order, and of another state. */
#define SEQ_AB "\"11-g1AAAABheJzLYWBgYMpgTmEQS84vTc5ISTIyMzI0cDA0MtczAELDHJB8HguQZGgAUv-BICuRhZCGRIakerBK9iwAiA8aTw\""
#define SEQ_BA "\"11-g1AAAABheJzLYWBgYMpgTmEQS84vTc5ISTIyMzI0cDA0MtczAELDHJB8IkNS_f___7MS2QmpzGMBkgwNQOo_WANLFgCuVxpP\""
#define SEQ_8 "\"8-g1AAAABheJzLYWBgYMpgTmEQS84vTc5ISTIyMzI0cDA0MtczAELDHJB8HguQZGgAUv-BICuRhZCGRIakeojKLACICRpM\""

static void fresh_packed_sequences_in_one_spelling(void **state)
{
    fake *f = ten_rows();
    location *l = location_of(f, VIEW_URL, 3, 0);
    const char *ab = cp_seq_canonical(pool, apr_pstrndup(pool, SEQ_AB + 1, strlen(SEQ_AB) - 2));
    const char *ba = cp_seq_canonical(pool, apr_pstrndup(pool, SEQ_BA + 1, strlen(SEQ_BA) - 2));
    const char *other = cp_seq_canonical(pool, apr_pstrndup(pool, SEQ_8 + 1, strlen(SEQ_8) - 2));
    const char *tag, *content = "\"c0ntentDigest\"", *next;
    cp_fresh fresh;

    (void)state;
    assert_string_equal(ab, ba);
    assert_true(!strncmp(ab, "11-s", 4));
    assert_string_not_equal(ab, other);
    /* what is no packed list stays as it is */
    assert_string_equal(cp_seq_canonical(pool, "42"), "42");
    assert_string_equal(cp_seq_canonical(pool, "7-g1AAAA"), "7-g1AAAA");
    assert_string_equal(cp_seq_canonical(pool, "x-g1AAAABheJzLYWBgYMpgTmEQ"), "x-g1AAAABheJzLYWBgYMpgTmEQ");
    assert_string_equal(cp_seq_canonical(pool, "11-g1AAAABheJzLYWBgYMpgTmEQS84vTc5ISTIyMzI0"),
                        "11-g1AAAABheJzLYWBgYMpgTmEQS84vTc5ISTIyMzI0");
    /* the page sealed with one order verifies with the other */
    f->view_seq = SEQ_AB;
    tag = sealed_tag(l, NULL, content);
    f->view_seq = SEQ_BA;
    assert_null(serve_fresh(l, NULL, tag, &fresh));
    assert_true(fresh.not_modified);
    /* a batch whose answers differ only by order: sealed */
    next = apr_pstrdup(pool, page_at(l, NULL)->next);
    f->odd_role = CP_QUERY_BACKWARD + 1;
    f->odd_seq = SEQ_AB;
    assert_null(serve_fresh(l, next, NULL, &fresh));
    assert_non_null(fresh.seq);
    /* another state: the page again */
    f->odd_role = 0;
    f->view_seq = SEQ_8;
    assert_null(serve_fresh(l, NULL, tag, &fresh));
    assert_false(fresh.not_modified);
}

/* A packed sequence of n shards, uncompressed (term_to_binary without
 * [compressed]), shard i's element the small integer first + i, listed
 * from the last when reversed. */
static const char *packed_seq(int first, int n, int reversed)
{
    unsigned char raw[64];
    apr_size_t at = 0;
    int i;

    raw[at++] = 131;
    raw[at++] = 108;
    raw[at++] = 0;
    raw[at++] = 0;
    raw[at++] = 0;
    raw[at++] = (unsigned char)n;
    for (i = 0; i < n; i++) {
        raw[at++] = 97;
        raw[at++] = (unsigned char)(reversed ? first + n - 1 - i : first + i);
    }
    raw[at++] = 106;
    return apr_psprintf(pool, "%d-%s", first,
                        apr_pencode_base64_binary(pool, raw, at, APR_ENCODE_BASE64URL, NULL));
}

/* The spellings a thread keeps are the ones unpacking gives: the same
 * sequence again (kept), its other order, and each of more states than
 * the thread keeps, asked again after the others pushed it out. */
static void fresh_kept_sequences_spell_as_unpacked(void **state)
{
    const char *ab = apr_pstrndup(pool, SEQ_AB + 1, strlen(SEQ_AB) - 2);
    const char *ba = apr_pstrndup(pool, SEQ_BA + 1, strlen(SEQ_BA) - 2);
    const char *first = cp_seq_canonical(pool, ab), *again = cp_seq_canonical(pool, ab);
    const char *spelt[12];
    int i;

    (void)state;
    assert_string_equal(first, again);
    assert_ptr_not_equal(first, again);
    assert_string_equal(cp_seq_canonical(pool, ba), first);
    assert_string_equal(cp_seq_canonical(pool, ba), first);
    for (i = 0; i < 12; i++) {
        spelt[i] = cp_seq_canonical(pool, packed_seq(10 * i + 1, 3, 0));
        assert_true(!strncmp(spelt[i], apr_psprintf(pool, "%d-s", 10 * i + 1),
                             strlen(apr_psprintf(pool, "%d-s", 10 * i + 1))));
        assert_string_equal(cp_seq_canonical(pool, packed_seq(10 * i + 1, 3, 1)), spelt[i]);
        assert_string_not_equal(spelt[i], first);
    }
    for (i = 0; i < 12; i++) {
        assert_string_equal(cp_seq_canonical(pool, packed_seq(10 * i + 1, 3, 1)), spelt[i]);
        assert_string_equal(cp_seq_canonical(pool, packed_seq(10 * i + 1, 3, 0)), spelt[i]);
        assert_string_not_equal(cp_seq_canonical(pool, packed_seq(10 * i + 1, 2, 0)), spelt[i]);
    }
    assert_string_equal(cp_seq_canonical(pool, ab), first);
}

/* A page that shows documents: the view's sequence does not move for an
 * edit of a field it does not emit, so the database's is read, before the
 * page and only for a revalidation. */
static void fresh_documents_read_the_database(void **state)
{
    fake *f = ten_rows();
    location *l = location_of(f, VIEW_URL, 3, 0);
    const char *tag, *content = "W/\"c0ntentDigest\"";
    cp_fresh fresh;
    int asks;

    (void)state;
    l->view.include_docs = 1;
    f->seq = "\"7-dbseq\"";
    f->view_seq = "\"3-g1AAAA\"";
    assert_false(cp_source_rows_alone(&l->source));
    /* a plain GET: no sequence read, no seal (its queries ask the view's
     * for the walk's start: couchpage_changed) */
    assert_null(serve_fresh(l, NULL, NULL, &fresh));
    assert_int_equal(f->db_gets, 0);
    assert_string_equal(cp_fresh_etag(pool, &fresh, content), content);
    /* a revalidation: the database's sequence, then the page */
    tag = sealed_tag(l, NULL, content);
    assert_int_equal(f->db_gets, 1);
    asks = f->asks;
    assert_null(serve_fresh(l, NULL, tag, &fresh));
    assert_true(fresh.not_modified);
    assert_int_equal(f->asks, asks);
    assert_int_equal(f->db_gets, 2);
    /* a document edited: the database's sequence moves, the view's not */
    f->seq = "\"8-dbseq\"";
    assert_null(serve_fresh(l, NULL, tag, &fresh));
    assert_false(fresh.not_modified);
    assert_int_equal(f->asks, asks + 1);
    /* _all_docs' sequence is the database's: its documents are sealed by it */
    l = location_of(f, "http://couch:5984/db/_all_docs", 3, 0);
    l->view.include_docs = 1;
    assert_true(cp_source_rows_alone(&l->source));
}

/* The seal binds the content digest, its weakness, the page (start,
 * size, context) and this server's key: a tag changed in any of them is
 * a hint that fails, and the page is served whole. */
/* The key's HMAC made once (cp_fresh_derive_key) seals as the one-shot
 * HMAC does: the same tag by either way, and another key's another. */
static void fresh_keyed_once_seals_as_one_shot(void **state)
{
    unsigned char key[CP_FRESH_KEY_LEN], other[CP_FRESH_KEY_LEN];
    cp_fresh fresh;
    const char *kept, *one_shot, *by_other;

    memset(&fresh, 0, sizeof(fresh));
    fresh.binding = "binding";
    fresh.seq = "view 12-abc";
    assert_true(cp_fresh_derive_key("a configuration", key));
    fresh.key = key;
    kept = cp_fresh_etag(pool, &fresh, "\"digest\"");
    assert_true(cp_fresh_derive_key("another configuration", other));
    one_shot = cp_fresh_etag(pool, &fresh, "\"digest\"");
    fresh.key = other;
    by_other = cp_fresh_etag(pool, &fresh, "\"digest\"");
    assert_non_null(kept);
    assert_string_equal(kept, one_shot);
    assert_int_equal(strncmp(kept, "\"digest.", 8), 0);
    assert_string_not_equal(kept, by_other);
    (void)state;
}

/* The kept HMAC fed a location's fixed fields and the sequence once a
 * thread (and copied for each page) seals as the one-shot HMAC does: pages
 * of two locations, two sequences, two starts and two digests, in an
 * order that keeps and replaces what the thread absorbed, each tag that
 * of the one-shot HMAC, all of them different; and the same again once the
 * key is made again. */
static void fresh_absorbed_binding_seals_as_one_shot(void **state)
{
    static const char *const bindings[] = { "3:loc1:a", "3:loc1:b", "4:loc21:a", "4:loc21:b" };
    static const apr_size_t fixed[] = { 6, 6, 7, 7 };
    static const char *const seqs[] = { "view 12-abc", "view 13-abd" };
    static const char *const digests[] = { "\"d1\"", "W/\"d2\"" };
    unsigned char key[CP_FRESH_KEY_LEN], other[CP_FRESH_KEY_LEN];
    const char *kept[2][16], *one_shot;
    cp_fresh fresh;
    int round, i, j;

    (void)state;
    memset(&fresh, 0, sizeof(fresh));
    for (round = 0; round < 2; round++) {
        assert_true(cp_fresh_derive_key("a configuration", key));
        fresh.key = key;
        for (i = 0; i < 16; i++) {
            /* the location slowest, then the sequence, the digest */
            fresh.binding = bindings[i >> 2];
            fresh.binding_fixed = fixed[i >> 2];
            fresh.seq = seqs[(i >> 1) & 1];
            kept[round][i] = cp_fresh_etag(pool, &fresh, digests[i & 1]);
            assert_non_null(kept[round][i]);
        }
    }
    assert_true(cp_fresh_derive_key("another configuration", other));
    for (i = 0; i < 16; i++) {
        fresh.binding = bindings[i >> 2];
        fresh.binding_fixed = fixed[i >> 2];
        fresh.seq = seqs[(i >> 1) & 1];
        one_shot = cp_fresh_etag(pool, &fresh, digests[i & 1]);
        assert_string_equal(kept[0][i], one_shot);
        assert_string_equal(kept[1][i], one_shot);
        for (j = 0; j < i; j++) {
            assert_string_not_equal(kept[0][j], kept[0][i]);
        }
    }
}

static void fresh_forged_tags_get_the_page(void **state)
{
    fake *f = ten_rows();
    location *l = location_of(f, VIEW_URL, 3, 0);
    const char *content = "\"c0ntentDigest\"", *tag, *seal, *next;
    const char *forged[12];
    cp_fresh fresh;
    int i;

    (void)state;
    f->view_seq = "\"7-g1AAAA\"";
    tag = sealed_tag(l, NULL, content);
    seal = strchr(tag, '.');
    next = apr_pstrdup(pool, page_at(l, NULL)->next);
    forged[0] = apr_pstrcat(pool, "\"an0therDigest", seal, NULL);          /* another digest */
    forged[1] = apr_pstrcat(pool, "W/", tag, NULL);                        /* weak now */
    forged[2] = apr_pstrcat(pool, "\"c0ntentDigest.", "AAAAAAAAAAAAAAAAAAAAAA\"", NULL);
    forged[3] = apr_pstrcat(pool, "\"c0ntentDigest.", seal + 2, NULL);     /* short seal */
    forged[4] = "\"";
    forged[5] = "W/\"..\", ,,, W/, \"\", *x";
    forged[6] = apr_pstrcat(pool, "\"c0ntentDigest", apr_pstrndup(pool, seal, 23), seal + 1,
                            NULL);                                        /* long seal */
    forged[7] = "\xff\xfe\"\x01.\x02\"";
    forged[8] = apr_pstrndup(pool, tag, strlen(tag) - 1);                  /* unclosed */
    for (i = 0; i < 9; i++) {
        assert_null(serve_fresh(l, NULL, forged[i], &fresh));
        assert_false(fresh.not_modified);
    }
    /* the same tag on another page (its start), of another size, in another
     * context, or under another key */
    assert_null(serve_fresh(l, next, tag, &fresh));
    assert_false(fresh.not_modified);
    l->req.count = 4;
    assert_null(serve_fresh(l, NULL, tag, &fresh));
    assert_false(fresh.not_modified);
    l->req.count = 3;
    memset(&fresh, 0, sizeof(fresh));
    fresh.key = fresh_key;
    fresh.if_none_match = tag;
    fresh.context = "html /t";
    assert_null(cp_fresh_serve(pool, &l->source, &l->req, &l->transport, &fresh, &l->served));
    assert_false(fresh.not_modified);
    fresh.key = other_key;
    fresh.context = "json /t";
    assert_null(cp_fresh_serve(pool, &l->source, &l->req, &l->transport, &fresh, &l->served));
    assert_false(fresh.not_modified);
    /* and the tag itself still verifies */
    assert_null(serve_fresh(l, NULL, tag, &fresh));
    assert_true(fresh.not_modified);
    /* what a 304 from the page's content compares: its digest alone */
    assert_true(cp_fresh_matches("*", content));
    assert_true(cp_fresh_matches(" W/\"c0ntentDigest\" ", content));
    assert_false(cp_fresh_matches(forged[5], content));
    assert_false(cp_fresh_matches(forged[7], content));
    assert_false(cp_fresh_matches("\"c0ntentDigestX\"", content));
    assert_false(cp_fresh_matches(NULL, content));
}

/* Where the index lags (update false or lazy, stable), the database's
 * sequence does not tell when the rows change: no sequence is read and no
 * tag gets a seal; a sequence that cannot be read is no fault either. */
static void fresh_not_where_the_index_lags(void **state)
{
    fake *f = ten_rows();
    location *l = location_of(f, VIEW_URL, 3, 0);
    const char *content = "\"c0ntentDigest\"", *tag;
    const char *modes[][2] = { { "false", NULL }, { "lazy", NULL }, { NULL, "true" } };
    cp_fresh fresh;
    int i;

    (void)state;
    f->seq = "\"7-g1AAAA\"";
    f->view_seq = "\"7-g1AAAA\"";
    tag = sealed_tag(l, NULL, content);
    for (i = 0; i < 3; i++) {
        l->view.update = modes[i][0];
        l->view.stable = modes[i][1];
        f->db_gets = 0;
        f->asked_seq = 0;
        assert_false(cp_source_index_current(&l->source));
        assert_null(serve_fresh(l, NULL, tag, &fresh));
        assert_false(fresh.not_modified);
        assert_int_equal(f->db_gets, 0);
        assert_int_equal(f->asked_seq, 0);
        assert_string_equal(cp_fresh_etag(pool, &fresh, content), content);
    }
    l->view.update = "true";
    l->view.stable = "false";
    assert_true(cp_source_index_current(&l->source));
    f->view_seq = NULL;
    assert_null(serve_fresh(l, NULL, tag, &fresh));
    assert_false(fresh.not_modified);
    assert_null(fresh.seq);
    assert_string_equal(cp_fresh_etag(pool, &fresh, content), content);
    assert_true(logged(f, "CP0390", CP_LOG_DEBUG));
}

/* A _find location's seal reads the same sequence, bound to its selector. */
static void fresh_find_location(void **state)
{
    fake *f = ten_rows();
    location *l = find_location(f, "n", "{\"n\":{\"$gt\":2}}", 3, 0);
    const char *content = "W/\"c0ntentDigest\"", *tag;
    cp_fresh fresh;
    int finds;

    (void)state;
    f->seq = "\"7-g1AAAA\"";
    tag = sealed_tag(l, NULL, content);
    assert_true(!strncmp(tag, "W/\"", 3));
    finds = f->finds;
    assert_null(serve_fresh(l, NULL, tag, &fresh));
    assert_true(fresh.not_modified);
    assert_int_equal(f->finds, finds);
    l->spec.selector = load("{\"n\":{\"$gt\":3}}");
    assert_null(serve_fresh(l, NULL, tag, &fresh));
    assert_false(fresh.not_modified);
}

/* ?page=N names another page than the location's first: its tag is
 * sealed for it, and the first page's tag is no 304 there. */
static void fresh_binds_the_page_number(void **state)
{
    fake *f = ten_rows();
    location *l = location_of(f, VIEW_URL, 3, 1);
    const char *content = "\"c0ntentDigest\"", *first, *third;
    cp_fresh fresh;

    (void)state;
    f->view_seq = "\"7-g1AAAA\"";
    first = sealed_tag(l, NULL, content);
    l->source.jump_reach = 5;
    l->args.page = 3;
    assert_null(serve_fresh(l, NULL, first, &fresh));
    assert_false(fresh.not_modified);
    assert_string_equal(row_names(&l->served.page), "d6 d7 d8");
    third = cp_fresh_etag(pool, &fresh, content);
    assert_string_not_equal(third, first);
    assert_null(serve_fresh(l, NULL, third, &fresh));
    assert_true(fresh.not_modified);
    l->args.page = 0;
    assert_null(serve_fresh(l, NULL, third, &fresh));
    assert_false(fresh.not_modified);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        UNIT_TEST(fresh_unchanged_page_reads_no_rows),
        UNIT_TEST(fresh_documents_read_the_database),
        UNIT_TEST(fresh_packed_sequences_in_one_spelling),
        UNIT_TEST(fresh_kept_sequences_spell_as_unpacked),
        UNIT_TEST(fresh_keyed_once_seals_as_one_shot),
        UNIT_TEST(fresh_absorbed_binding_seals_as_one_shot),
        UNIT_TEST(fresh_forged_tags_get_the_page),
        UNIT_TEST(fresh_not_where_the_index_lags),
        UNIT_TEST(fresh_find_location),
        UNIT_TEST(fresh_binds_the_page_number),
        UNIT_TEST(overfull_answers_are_refused_on_every_location),
        UNIT_TEST(cut_batch_answers),
        UNIT_TEST(backend_failures),
        UNIT_TEST(find_index_read_past_the_deadline),
        UNIT_TEST(request_faults),
        UNIT_TEST(loggable_text_is_escaped_and_cut),
    };

    RUN_UNIT_TESTS("serve_faults", tests);
}
