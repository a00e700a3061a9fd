/* SPDX-License-Identifier: Apache-2.0 */
/*
 * couchpage_fresh: an If-None-Match answered from a page's sequence
 * (see couchpage_fresh.h). httpd-free.
 */
#include "couchpage_fresh.h"

#include <string.h>

#include <apr_encode.h>
#include <apr_strings.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/core_names.h>
#include <openssl/hmac.h>
#include <openssl/params.h>

#include "couchpage_json.h"
#include "couchpage_plan.h"
#include "couchpage_response.h"
#include "couchpage_seq.h"
#include "couchpage_view.h"

/* A seal: 16 bytes of HMAC-SHA-256, base64url: 22 characters. */
#define SEAL_BYTES 16
#define SEAL_CHARS 22
/* The most members of an If-None-Match weighed: a client's list is short. */
#define MAX_TAGS 16

/* The key's HMAC, keyed once a configuration (cp_fresh_derive_key, which
 * the glue calls in httpd's parent before its children fork) and copied
 * for each seal: OpenSSL 3 fetches an algorithm by name on every one-shot
 * call, which costs a page more than the digest itself. Only read after
 * start-up; a seal with another key (a test's) goes by the one-shot HMAC. */
static EVP_MAC_CTX *keyed_hmac;
static unsigned char keyed_for[CP_FRESH_KEY_LEN];
static unsigned keyed_generation;

/* What a thread fed the kept HMAC last before a page's own fields (the
 * location's binding and the sequence, which a location's pages share
 * until its index moves), and that HMAC, copied for each seal of the same
 * bytes. Per thread (no lock); malloc'd, one at a time; made again for
 * other bytes, or when the key is made again. */
#define MAX_ABSORBED 16384
static _Thread_local EVP_MAC_CTX *absorbed;
static _Thread_local char *absorbed_text;
static _Thread_local apr_size_t absorbed_len;
static _Thread_local unsigned absorbed_generation;

static void key_hmac(const unsigned char *key)
{
    char digest_name[] = "SHA256";
    OSSL_PARAM params[2];
    EVP_MAC *hmac = EVP_MAC_fetch(NULL, "HMAC", NULL);
    EVP_MAC_CTX *ctx = hmac ? EVP_MAC_CTX_new(hmac) : NULL;

    params[0] = OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest_name, 0);
    params[1] = OSSL_PARAM_construct_end();
    EVP_MAC_free(hmac);
    if (ctx && !EVP_MAC_init(ctx, key, CP_FRESH_KEY_LEN, params)) {
        EVP_MAC_CTX_free(ctx);
        ctx = NULL;
    }
    EVP_MAC_CTX_free(keyed_hmac);
    keyed_hmac = ctx;
    memcpy(keyed_for, key, CP_FRESH_KEY_LEN);
    keyed_generation++;
}

int cp_fresh_derive_key(const char *text, unsigned char *key)
{
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int len = 0;

    if (!EVP_Digest(text, strlen(text), digest, &len, EVP_sha256(), NULL)
        || len < CP_FRESH_KEY_LEN) {
        return 0;
    }
    memcpy(key, digest, CP_FRESH_KEY_LEN);
    key_hmac(key);
    return 1;
}

/* A seal's text: length-prefixed fields ("LEN:BYTES", "-:" for none), the
 * binding's (binding_of), then the sequence, the weakness and the content
 * digest. The kept HMAC is fed its pieces as they are; the one-shot (a
 * key not kept) gets them joined. */
#define MAX_PIECES 8
/* "LEN:" of a field: its digits and the colon */
#define PREFIX_CHARS 24

typedef struct {
    const char *text[MAX_PIECES];
    apr_size_t len[MAX_PIECES];
    int n;
} pieces;

static void piece(pieces *p, const char *text, apr_size_t len)
{
    p->text[p->n] = text;
    p->len[p->n++] = len;
}

/* Writes "LEN:" for a field of len bytes at out: its length. */
static apr_size_t prefix(char *out, apr_size_t len)
{
    char digits[PREFIX_CHARS];
    apr_size_t n = 0, i;

    do {
        digits[n++] = (char)('0' + len % 10);
        len /= 10;
    } while (len);
    for (i = 0; i < n; i++) {
        out[i] = digits[n - 1 - i];
    }
    out[n] = ':';
    return n + 1;
}

/* Whether the thread's absorbed bytes are the first `shared` pieces. */
static int absorbed_are(const pieces *p, int shared, apr_size_t len)
{
    apr_size_t at = 0;
    int i;

    if (!absorbed || absorbed_generation != keyed_generation || absorbed_len != len) {
        return 0;
    }
    for (i = 0; i < shared; i++) {
        if (memcmp(absorbed_text + at, p->text[i], p->len[i])) {
            return 0;
        }
        at += p->len[i];
    }
    return 1;
}

/* The kept HMAC fed the first `shared` pieces, kept as the thread's
 * absorbed one: 1, or 0 (nothing kept) when they are too long or memory
 * or libcrypto fails. */
static int absorb(const pieces *p, int shared, apr_size_t len)
{
    EVP_MAC_CTX *ctx = EVP_MAC_CTX_dup(keyed_hmac);
    char *text = len <= MAX_ABSORBED ? malloc(len + 1) : NULL;
    apr_size_t at = 0;
    int ok = ctx && text, i;

    for (i = 0; ok && i < shared; i++) {
        ok = EVP_MAC_update(ctx, (const unsigned char *)p->text[i], p->len[i]);
        memcpy(text + at, p->text[i], p->len[i]);
        at += p->len[i];
    }
    if (!ok) {
        EVP_MAC_CTX_free(ctx);
        free(text);
        return 0;
    }
    EVP_MAC_CTX_free(absorbed);
    free(absorbed_text);
    absorbed = ctx;
    absorbed_text = text;
    absorbed_len = len;
    absorbed_generation = keyed_generation;
    return 1;
}

/* HMAC-SHA-256 under key of the pieces, one after the other, into mac
 * (EVP_MAX_MD_SIZE bytes): its length, or 0 when libcrypto fails. The
 * first `shared` pieces are the ones pages share (see absorbed). */
static size_t hmac_of(apr_pool_t *pool, const unsigned char *key, const pieces *p, int shared,
                      unsigned char *mac)
{
    const EVP_MAC_CTX *from = keyed_hmac;
    apr_size_t total = 0, len = 0;
    unsigned int mac_len = 0;
    size_t out = 0;
    EVP_MAC_CTX *ctx;
    int ok, i, start = 0;

    if (!keyed_hmac || memcmp(keyed_for, key, CP_FRESH_KEY_LEN)) {
        unsigned char *text, *at;

        for (i = 0; i < p->n; i++) {
            total += p->len[i];
        }
        at = text = apr_palloc(pool, total + 1);
        for (i = 0; i < p->n; i++) {
            memcpy(at, p->text[i], p->len[i]);
            at += p->len[i];
        }
        return HMAC(EVP_sha256(), key, CP_FRESH_KEY_LEN, text, total, mac, &mac_len)
               ? mac_len : 0;
    }
    for (i = 0; i < shared; i++) {
        len += p->len[i];
    }
    if (absorbed_are(p, shared, len) || absorb(p, shared, len)) {
        from = absorbed;
        start = shared;
    }
    ctx = EVP_MAC_CTX_dup(from);
    ok = ctx != NULL;
    for (i = start; ok && i < p->n; i++) {
        ok = EVP_MAC_update(ctx, (const unsigned char *)p->text[i], p->len[i]);
    }
    ok = ok && EVP_MAC_final(ctx, mac, &out, EVP_MAX_MD_SIZE);
    EVP_MAC_CTX_free(ctx);
    return ok ? out : 0;
}

/* The most fields of a binding. */
#define BINDING_FIELDS 20

/* The fields (n of them; a NULL one told apart from an empty one) as one
 * text of length-prefixed fields; the length of its first `fixed` fields
 * in *fixed_len. */
static const char *fields_text(apr_pool_t *pool, const char *const *fields, int n, int fixed,
                               apr_size_t *fixed_len)
{
    apr_size_t len[BINDING_FIELDS], total = 1;
    char *text, *at;
    int i;

    for (i = 0; i < n; i++) {
        len[i] = fields[i] ? strlen(fields[i]) : 0;
        total += PREFIX_CHARS + len[i];
    }
    at = text = apr_palloc(pool, total);
    for (i = 0; i < n; i++) {
        if (i == fixed) {
            *fixed_len = (apr_size_t)(at - text);
        }
        if (!fields[i]) {
            *at++ = '-';
            *at++ = ':';
            continue;
        }
        at += prefix(at, len[i]);
        memcpy(at, fields[i], len[i]);
        at += len[i];
    }
    *at = '\0';
    return text;
}

/* What the page's bytes are made of besides CouchDB's data: the location,
 * the request's values, the glue's context, then the page's own arguments
 * (its start, its size, from *fixed_len on); fed to the seal's HMAC as
 * they are, no digest of their own. */
static const char *binding_of(apr_pool_t *pool, const cp_source *src, const cp_request *req,
                              const char *context, apr_size_t *fixed_len)
{
    const cp_view *v = src->view;
    const char *fields[BINDING_FIELDS];
    char flags[128], sizes[64];
    int n = 0, fixed;

    apr_snprintf(flags, sizeof(flags), "%d %d %d %d %d %d", v->descending, v->reduce,
                 v->group_level, v->include_docs, v->max_emits, src->links);
    apr_snprintf(sizes, sizeof(sizes), "%d %d %d %" APR_INT64_T_FMT, req->count,
                 req->args->limit, (int)req->args->format, req->args->page);
    fields[n++] = "couchpage-fresh-2";
    fields[n++] = context;
    fields[n++] = src->uri;
    fields[n++] = v->url;
    fields[n++] = flags;
    fields[n++] = v->update;
    fields[n++] = v->stable;
    fields[n++] = src->low;
    fields[n++] = src->high;
    fields[n++] = src->partition;
    fields[n++] = src->find ? cp_json_text(pool, src->find->selector) : NULL;
    fields[n++] = src->find && src->find->fields ? cp_json_text(pool, src->find->fields) : NULL;
    fields[n++] = src->find ? src->find->index_ddoc : NULL;
    fields[n++] = src->find ? src->find->index_name : NULL;
    fields[n++] = src->token_key ? "sealed" : "plain";
    fixed = n;
    fields[n++] = req->args->start;
    fields[n++] = sizes;
    return fields_text(pool, fields, n, fixed, fixed_len);
}

/* The seal of a content digest (its weakness too) for binding (its
 * first `fixed` bytes the location's, binding_of) at seq: SEAL_CHARS
 * characters, or NULL when libcrypto fails. What is sealed: the binding's
 * fixed fields, the sequence, the page's own fields, the weakness, the
 * digest. */
static const char *seal_of(apr_pool_t *pool, const unsigned char *key, const char *digest,
                           apr_size_t digest_len, int weak, const char *binding,
                           apr_size_t fixed, const char *seq)
{
    unsigned char mac[EVP_MAX_MD_SIZE];
    char seq_prefix[PREFIX_CHARS], digest_prefix[PREFIX_CHARS];
    apr_size_t seq_len = strlen(seq), binding_len = strlen(binding);
    pieces p;

    fixed = fixed < binding_len ? fixed : binding_len;
    p.n = 0;
    piece(&p, binding, fixed);
    piece(&p, seq_prefix, prefix(seq_prefix, seq_len));
    piece(&p, seq, seq_len);
    piece(&p, binding + fixed, binding_len - fixed);
    piece(&p, weak ? "1:W" : "1:S", 3);
    piece(&p, digest_prefix, prefix(digest_prefix, digest_len));
    piece(&p, digest, digest_len);
    if (hmac_of(pool, key, &p, 3, mac) < SEAL_BYTES) {
        return NULL;
    }
    return apr_pencode_base64_binary(pool, mac, SEAL_BYTES, APR_ENCODE_BASE64URL, NULL);
}

/* An entity tag read from a header: its opaque part's digest (up to the
 * first '.') and seal (after it; NULL: none), and its weakness. */
typedef struct {
    const char *opaque;     /* from the opening quote, not NUL-terminated */
    apr_size_t digest_len;
    const char *seal;       /* SEAL_CHARS long when not NULL */
    apr_size_t opaque_len;
    int weak;
} tag;

/* Reads the members of an If-None-Match: entity tags into tags (at most
 * MAX_TAGS), *any when "*" is one; a member that is not an entity tag is
 * skipped to its comma. The number read. */
static int read_tags(const char *header, tag *tags, int *any)
{
    const char *p = header;
    int n = 0;

    *any = 0;
    while (p && *p && n < MAX_TAGS) {
        const char *q, *end;
        tag *t = &tags[n];

        while (*p == ' ' || *p == '\t' || *p == ',') {
            p++;
        }
        if (!*p) {
            break;
        }
        if (*p == '*') {
            /* "*" alone, not the start of other bytes */
            p++;
            *any |= !*p || *p == ',' || *p == ' ' || *p == '\t';
        }
        else {
            t->weak = p[0] == 'W' && p[1] == '/';
            q = t->weak ? p + 2 : p;
            end = *q == '"' ? strchr(q + 1, '"') : NULL;
            if (end) {
                const char *dot = memchr(q + 1, '.', (apr_size_t)(end - q - 1));

                t->opaque = q + 1;
                t->opaque_len = (apr_size_t)(end - q - 1);
                t->digest_len = dot ? (apr_size_t)(dot - t->opaque) : t->opaque_len;
                t->seal = dot && (apr_size_t)(end - dot - 1) == SEAL_CHARS ? dot + 1 : NULL;
                n++;
                p = end + 1;
            }
        }
        /* on to the next member: whatever else this one holds is skipped */
        while (*p && *p != ',') {
            p++;
        }
    }
    return n;
}

/* The database's update_seq (cp_seq_canonical's spelling; a number's
 * text); NULL (and why in *why) when it cannot be read. *copies: the
 * copies it keeps of each shard range, its "cluster" member's "n"; 1 where
 * it has none (a server of one copy: PouchDB Server, CouchDB 1), 0 where it
 * tells no number. */
static const char *read_seq(apr_pool_t *pool, const cp_source *src,
                            const cp_transport *transport, int *copies, const char **why)
{
    cp_transport_failure failure;
    const char *text, *error = NULL;
    const json_t *info, *seq, *cluster, *n;
    apr_size_t len;

    *copies = 0;
    if (!transport->get(transport->baton, src->view->db_url, &text, &len, &failure)) {
        *why = failure.reason;
        return NULL;
    }
    info = cp_json_load(pool, text, len, &error);
    seq = json_is_object(info) ? json_object_get(info, "update_seq") : NULL;
    if (!seq || !(json_is_string(seq) || json_is_integer(seq))) {
        *why = error ? error : "the database's answer has no update_seq";
        return NULL;
    }
    cluster = json_object_get(info, "cluster");
    n = json_object_get(cluster, "n");
    *copies = !cluster ? 1 : json_is_integer(n) && json_integer_value(n) > 0
                             && json_integer_value(n) < 1000 ? (int)json_integer_value(n) : 0;
    return json_is_string(seq) ? cp_seq_canonical(pool, json_string_value(seq))
                               : cp_json_text(pool, seq);
}

/* Why a page that shows documents, read after the database's sequence db
 * (copies: read_seq's), cannot be sealed with it; NULL where it can. Its
 * documents are the ones the copies its rows came from hold (a shard copy
 * reads the documents of its rows itself): where each of those copies is
 * the one db names for its range, each had every write db counts when it
 * answered, so the page shows db's state or a later one (and a later one
 * of a copy never reads as db again). Another copy of a range may lack
 * writes db counts: its page is older than db, and a seal would keep it
 * until db moves. page: the sequence the page's answers carried
 * (served->seq), NULL where they tell none (_find's). One copy of each
 * range: every read is of it. */
static const char *db_seal_doubt(apr_pool_t *pool, const char *db, int copies,
                                 const char *page)
{
    if (copies == 1) {
        return NULL;
    }
    if (!page) {
        return apr_psprintf(pool, "the database keeps %s copies of each shard range, and the "
                            "page's answers name none", copies ? apr_itoa(pool, copies)
                                                               : "several");
    }
    return cp_seq_copies_within(pool, page, db) ? NULL
           : "a shard range of the page was answered by another copy than the one the "
             "database's sequence names";
}

/* The sequence of the location's view now: one query that reads no rows
 * (cp_plan_seq_probe), at the index and partition the page's rows come
 * from; NULL (and why in *why) when it cannot be read. */
static const char *read_view_seq(apr_pool_t *pool, const cp_source *src, const cp_request *req,
                                 const cp_transport *transport, const char **why)
{
    cp_plan_answers answers = { { NULL }, 0 };
    cp_transport_failure failure;
    const cp_answer *answer;
    cp_plan plan;

    if ((*why = cp_plan_init(pool, &plan, src->view, src->partition, src->low, src->high,
                             req->count, src->links))) {
        return NULL;
    }
    if (!transport->ask(transport->baton, src->view->backend, plan.index_url,
                        cp_view_has_docids(src->view),
                        cp_plan_waiting(pool, cp_plan_seq_probe(pool, &plan)), 0, &answers,
                        &failure)) {
        *why = failure.reason;
        return NULL;
    }
    answer = answers.of[CP_QUERY_RANGE_START];
    if (!answer || !answer->update_seq) {
        *why = "the view's answer has no update_seq";
        return NULL;
    }
    return cp_seq_canonical(pool, answer->update_seq);
}

/* Whether an If-None-Match holds a sealed tag: only then is the sequence
 * read before the page. */
static int has_sealed_tag(const char *if_none_match)
{
    tag tags[MAX_TAGS];
    int any, n = if_none_match ? read_tags(if_none_match, tags, &any) : 0;

    while (n-- > 0) {
        if (tags[n].seal) {
            return 1;
        }
    }
    return 0;
}

/* Whether a tag of fresh->if_none_match is sealed for seq: then
 * fresh->not_modified and fresh->etag say so. */
static int verify_tags(apr_pool_t *pool, cp_fresh *fresh, const char *seq)
{
    tag tags[MAX_TAGS];
    int any, n = read_tags(fresh->if_none_match, tags, &any), i;

    for (i = 0; i < n; i++) {
        const char *seal = tags[i].seal
                           ? seal_of(pool, fresh->key, tags[i].opaque, tags[i].digest_len,
                                     tags[i].weak, fresh->binding, fresh->binding_fixed, seq)
                           : NULL;

        if (seal && !CRYPTO_memcmp(seal, tags[i].seal, SEAL_CHARS)) {
            fresh->not_modified = 1;
            fresh->etag = apr_psprintf(pool, "%s\"%.*s\"", tags[i].weak ? "W/" : "",
                                       (int)tags[i].opaque_len, tags[i].opaque);
            return 1;
        }
    }
    return 0;
}

const cp_fault *cp_fresh_serve(apr_pool_t *pool, const cp_source *source,
                               const cp_request *req, const cp_transport *transport,
                               cp_fresh *fresh, cp_served *served)
{
    const char *seq = NULL, *why = NULL;
    const cp_fault *fault;
    cp_source asking;

    fresh->seq = NULL;
    fresh->binding = NULL;
    fresh->binding_fixed = 0;
    fresh->not_modified = 0;
    fresh->etag = NULL;
    fresh->seq_reads = 0;
    if (!fresh->key || !cp_source_index_current(source)
        || !(fresh->binding = binding_of(pool, source, req, fresh->context,
                                         &fresh->binding_fixed))) {
        return cp_serve(pool, source, req, transport, served);
    }
    if (cp_source_rows_alone(source)) {
        /* the page's own answers tell its sequence: every page is sealed,
         * and a sealed tag is checked by one query that reads no rows */
        if (fresh->if_none_match && has_sealed_tag(fresh->if_none_match)) {
            fresh->seq_reads = 1;
            seq = read_view_seq(pool, source, req, transport, &why);
            if (seq && verify_tags(pool, fresh, apr_pstrcat(pool, "view ", seq, NULL))) {
                return NULL;
            }
        }
        asking = *source;
        asking.update_seq = 1;
        fault = cp_serve(pool, &asking, req, transport, served);
        if (!fault && served->seq) {
            fresh->seq = apr_pstrcat(pool, "view ", served->seq, NULL);
        }
        else if (!fault && transport->debug) {
            why = "the view's answers carry no update_seq, or differ";
        }
    }
    else {
        /* the page shows documents (or comes from _find): the database's
         * sequence, read before the page, where a client revalidates; the
         * page sealed with it where its copies are the page's
         * (db_seal_doubt) */
        int copies = 0;

        if (fresh->if_none_match) {
            fresh->seq_reads = 1;
            seq = read_seq(pool, source, transport, &copies, &why);
            fresh->seq = seq ? apr_pstrcat(pool, "db ", seq, NULL) : NULL;
            if (seq && verify_tags(pool, fresh, fresh->seq)) {
                return NULL;
            }
        }
        fault = cp_serve(pool, source, req, transport, served);
        if (!fault && seq && (why = db_seal_doubt(pool, seq, copies, served->seq))) {
            /* the page may be older than the sequence: no seal */
            fresh->seq = NULL;
        }
    }
    if (!fault && !fresh->seq && why && transport->debug) {
        transport->log(transport->baton, CP_LOG_DEBUG, "CP0390",
                       apr_psprintf(pool, "the page of %s gets no sequence in its ETag (%s)",
                                    source->uri, cp_fault_loggable(pool, why)));
    }
    return fault;
}

const char *cp_fresh_etag(apr_pool_t *pool, const cp_fresh *fresh, const char *content_tag)
{
    int weak = content_tag && content_tag[0] == 'W';
    const char *digest = content_tag ? content_tag + (weak ? 3 : 1) : NULL;
    apr_size_t len = digest ? strlen(digest) : 0;
    const char *seal;

    if (!content_tag || !fresh || !fresh->key || !fresh->seq || !fresh->binding || len < 1) {
        return content_tag;
    }
    len--; /* the closing quote */
    seal = seal_of(pool, fresh->key, digest, len, weak, fresh->binding, fresh->binding_fixed,
                   fresh->seq);
    /* the content tag up to its closing quote, the seal, the quote */
    return seal ? apr_pstrcat(pool, apr_pstrmemdup(pool, content_tag,
                                                   (apr_size_t)(digest - content_tag) + len),
                              ".", seal, "\"", NULL)
                : NULL;
}

int cp_fresh_matches(const char *if_none_match, const char *etag)
{
    tag tags[MAX_TAGS], mine[1];
    int any, n, i;

    if (!if_none_match || !etag) {
        return 0;
    }
    n = read_tags(if_none_match, tags, &any);
    if (any) {
        return 1;
    }
    if (read_tags(etag, mine, &i) != 1) {
        return 0;
    }
    for (i = 0; i < n; i++) {
        if (tags[i].digest_len == mine[0].digest_len && tags[i].digest_len > 0
            && !memcmp(tags[i].opaque, mine[0].opaque, mine[0].digest_len)) {
            return 1;
        }
    }
    return 0;
}
