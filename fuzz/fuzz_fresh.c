/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target: arbitrary bytes as an If-None-Match header, into
 * cp_fresh_serve (a transport that answers the database's update_seq, and
 * every view query with no rows and the view's update_seq) for a view page
 * without documents (sealed by the view's sequence) and one with them (the
 * database's), and cp_fresh_matches. A 304 from the sequence only for
 * bytes that hold the page's own sealed tag; a match by digest only for
 * bytes that hold its digest (or "*").
 */
#include "fuzz.h"
#include "couchpage_fresh.h"
#include "couchpage_response.h"
#include "couchpage_seq.h"

#include <apr_encode.h>
#include <apr_strings.h>

#define DIGEST "c0ntentDigest0123456789abcd"

static int fake_get(void *baton, const char *url, const char **text, apr_size_t *len,
                    cp_transport_failure *failure)
{
    (void)baton;
    (void)url;
    (void)failure;
    *text = "{\"db_name\":\"db\",\"update_seq\":\"7-g1AAAA\"}";
    *len = strlen(*text);
    return 1;
}

static int fake_ask(void *baton, const char *backend, const char *index_url, int with_docid,
                    const apr_array_header_t *asked, int alone, cp_plan_answers *answers,
                    cp_transport_failure *failure)
{
    static const char body[] = "{\"total_rows\":0,\"offset\":0,\"update_seq\":\"3-g1AAAA\","
                               "\"rows\":[]}";
    apr_pool_t *pool = baton;
    int i;

    (void)backend, (void)index_url, (void)alone;
    for (i = 0; i < asked->nelts; i++) {
        const cp_query *query = APR_ARRAY_IDX(asked, i, const cp_query *);
        const cp_answer *answer = NULL;

        if (cp_response_read_view(pool, cp_response_padded(pool, body, strlen(body)),
                                  strlen(body), with_docid, &answer)) {
            failure->status = 502;
            failure->backend_status = 0;
            failure->reason = "the fuzz target's answer is refused";
            failure->past_deadline = 0;
            return 0;
        }
        answers->of[query->role] = answer;
    }
    return 1;
}

static void fake_log(void *baton, int level, const char *code, const char *text)
{
    (void)baton, (void)level, (void)code, (void)text;
}

static const char *fake_where(void *baton, cp_where which)
{
    (void)baton, (void)which;
    return "<Location /t> at t.conf:1";
}

static const unsigned char key[CP_FRESH_KEY_LEN] = "0123456789abcdef0123456789abcdef";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    apr_pool_t *pool = fuzz_pool();
    const char *header = fuzz_cstring(pool, data, size);
    cp_transport transport;
    cp_view view;
    cp_args args;
    cp_source source;
    cp_request req;
    cp_served served;
    cp_fresh fresh;
    const char *sealed;
    int docs;

    memset(&transport, 0, sizeof(transport));
    transport.baton = pool;
    transport.get = fake_get;
    transport.ask = fake_ask;
    transport.log = fake_log;
    transport.where = fake_where;
    memset(&view, 0, sizeof(view));
    FUZZ_CHECK(!cp_view_init(pool, "http://couch:5984/db/_design/d/_view/v", &view),
               "the view");
    view.max_emits = 64;
    memset(&args, 0, sizeof(args));
    memset(&source, 0, sizeof(source));
    source.uri = "/t";
    source.view = &view;
    source.max_token_length = 4096;
    source.token_url_room = 8000;
    source.deadline = apr_time_from_sec(30);
    memset(&req, 0, sizeof(req));
    req.args = &args;
    req.count = 3;

    for (docs = 0; docs < 2; docs++) {
        view.include_docs = docs;
        /* the page's own sealed tag, as a revalidation would have made it */
        memset(&fresh, 0, sizeof(fresh));
        fresh.key = key;
        fresh.if_none_match = "\"x\"";
        fresh.context = "json /t";
        FUZZ_CHECK(!cp_fresh_serve(pool, &source, &req, &transport, &fresh, &served),
                   "the page");
        sealed = cp_fresh_etag(pool, &fresh, "\"" DIGEST "\"");
        FUZZ_CHECK(sealed && strlen(sealed) > strlen(DIGEST) + 2, "no sealed tag");

        memset(&fresh, 0, sizeof(fresh));
        fresh.key = key;
        fresh.if_none_match = header;
        fresh.context = "json /t";
        (void)cp_fresh_serve(pool, &source, &req, &transport, &fresh, &served);
        FUZZ_CHECK(!fresh.not_modified || strstr(header, sealed + 1 /* past the quote */),
                   "a 304 from the sequence for %s", header);
    }
    /* the bytes as a packed sequence's payload too (raw and compressed
     * Erlang terms): spelt one way, or kept as they are, never a fault */
    (void)cp_seq_canonical(pool, header);
    (void)cp_seq_canonical(pool, apr_pstrcat(pool, "1-", apr_pencode_base64_binary(
                               pool, data, size, APR_ENCODE_BASE64URL, NULL), NULL));
    FUZZ_CHECK(!cp_fresh_matches(header, "\"" DIGEST "\"") || strstr(header, DIGEST)
               || strchr(header, '*'), "a match by digest for %s", header);
    apr_pool_destroy(pool);
    return 0;
}
