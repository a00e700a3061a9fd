/* SPDX-License-Identifier: Apache-2.0 */
/*
 * couchpage_seq: a packed update_seq's elements in one order (see
 * couchpage_seq.h). httpd-free.
 */
#include "couchpage_seq.h"
#include "couchpage_memory.h"

#include <stdlib.h>
#include <string.h>

#include <apr_encode.h>
#include <apr_strings.h>
#include <apr_tables.h>
#include <zlib.h>

/* Erlang's external term format: the version byte, the compressed tag. */
#define ETF_VERSION 131
#define ETF_COMPRESSED 80
/* The most bytes a payload inflates to: a sequence of thousands of shard
 * ranges fits. */
#define MAX_TERM (1024 * 1024)
#define MAX_DEPTH 16
/* The sequences a thread last put in order, kept with their spelling: the
 * same packed sequence comes back page after page until the index moves,
 * and unpacking it (zlib, base64) is most of what sealing a page costs. */
static _Thread_local cp_thread_memo spellings;

static apr_size_t be(const unsigned char *p, int bytes)
{
    apr_size_t v = 0;

    while (bytes-- > 0) {
        v = (v << 8) | *p++;
    }
    return v;
}

/* Steps *at past one term of t[0..n): 1, or 0 for a term it does not know
 * or one cut off. */
static int skip_term(const unsigned char *t, apr_size_t n, apr_size_t *at, int depth)
{
    apr_size_t count, len, need;
    unsigned char tag;

    if (*at >= n || depth > MAX_DEPTH) {
        return 0;
    }
    tag = t[(*at)++];
    switch (tag) {
    case 97:  /* small integer */
        need = 1;
        break;
    case 98:  /* integer */
        need = 4;
        break;
    case 70:  /* float */
        need = 8;
        break;
    case 110: /* small big: length, sign, digits */
        if (*at >= n) {
            return 0;
        }
        need = 2 + (apr_size_t)t[*at];
        break;
    case 100: /* atom, latin-1 and UTF-8, 2-byte length */
    case 118:
    case 107: /* string */
        if (*at + 2 > n) {
            return 0;
        }
        need = 2 + be(t + *at, 2);
        break;
    case 115: /* atom, 1-byte length */
    case 119:
        if (*at >= n) {
            return 0;
        }
        need = 1 + (apr_size_t)t[*at];
        break;
    case 109: /* binary */
        if (*at + 4 > n) {
            return 0;
        }
        need = 4 + be(t + *at, 4);
        break;
    case 106: /* [] */
        return 1;
    case 104: /* small tuple */
    case 105: /* tuple */
    case 108: /* list: its elements, then its tail */
        len = tag == 104 ? 1 : 4;
        if (*at + len > n) {
            return 0;
        }
        count = be(t + *at, (int)len) + (tag == 108);
        *at += len;
        while (count-- > 0) {
            if (!skip_term(t, n, at, depth + 1)) {
                return 0;
            }
        }
        return 1;
    default:
        return 0;
    }
    if (need > n - *at) {
        return 0;
    }
    *at += need;
    return 1;
}

typedef struct {
    const unsigned char *bytes;
    apr_size_t len;
} span;

static int span_order(const void *a, const void *b)
{
    const span *x = a, *y = b;
    int c = memcmp(x->bytes, y->bytes, x->len < y->len ? x->len : y->len);

    return c ? c : x->len < y->len ? -1 : x->len > y->len;
}

/* seq in order (cp_seq_canonical), unpacked now; seq itself when it is no
 * packed list. */
static const char *put_in_order(apr_pool_t *pool, const char *seq)
{
    const char *dash = seq ? strchr(seq, '-') : NULL;
    const unsigned char *raw, *t;
    unsigned char *inflated;
    apr_size_t raw_len = 0, n, at, count, i, total = 0;
    uLongf size;
    span *spans;
    unsigned char *out;

    if (!dash || dash == seq || strspn(seq, "0123456789") != (apr_size_t)(dash - seq)) {
        return seq;
    }
    raw = (const unsigned char *)apr_pdecode_base64_binary(pool, dash + 1, APR_ENCODE_STRING,
                                                           APR_ENCODE_BASE64URL, &raw_len);
    if (!raw || raw_len < 2 || raw[0] != ETF_VERSION) {
        return seq;
    }
    if (raw[1] == ETF_COMPRESSED) {
        if (raw_len < 6 || (size = (uLongf)be(raw + 2, 4)) == 0 || size > MAX_TERM) {
            return seq;
        }
        inflated = apr_palloc(pool, size);
        if (uncompress(inflated, &size, raw + 6, (uLong)(raw_len - 6)) != Z_OK) {
            return seq;
        }
        t = inflated;
        n = size;
    }
    else {
        t = raw + 1;
        n = raw_len - 1;
    }
    /* a list of its elements, ended by [] */
    if (n < 5 || t[0] != 108 || (count = be(t + 1, 4)) > n) {
        return seq;
    }
    spans = apr_palloc(pool, (count + 1) * sizeof(*spans));
    at = 5;
    for (i = 0; i < count; i++) {
        apr_size_t from = at;

        if (!skip_term(t, n, &at, 0)) {
            return seq;
        }
        spans[i].bytes = t + from;
        spans[i].len = at - from;
        total += 4 + spans[i].len;
    }
    if (at + 1 != n || t[at] != 106) {
        return seq;
    }
    qsort(spans, count, sizeof(*spans), span_order);
    out = apr_palloc(pool, total + 1);
    for (i = 0, at = 0; i < count; i++) {
        out[at++] = (unsigned char)(spans[i].len >> 24);
        out[at++] = (unsigned char)(spans[i].len >> 16);
        out[at++] = (unsigned char)(spans[i].len >> 8);
        out[at++] = (unsigned char)spans[i].len;
        memcpy(out + at, spans[i].bytes, spans[i].len);
        at += spans[i].len;
    }
    return apr_pstrcat(pool, apr_pstrndup(pool, seq, (apr_size_t)(dash - seq) + 1), "s",
                       apr_pencode_base64_binary(pool, out, at, APR_ENCODE_BASE64URL, NULL),
                       NULL);
}

const char *cp_seq_canonical(apr_pool_t *pool, const char *seq)
{
    const char *canonical;

    if (!seq || !strchr(seq, '-')) {
        return seq;
    }
    if ((canonical = cp_thread_memo_get(&spellings, pool, seq))) {
        return canonical;
    }
    canonical = put_in_order(pool, seq);
    if (canonical != seq) {
        cp_thread_memo_put(&spellings, seq, canonical);
    }
    return canonical;
}

/* A whole number term at t[*at] (small integer, integer, small big of at
 * most 7 bytes, not negative), *at stepped past it: 1, else 0. */
static int read_whole(const unsigned char *t, apr_size_t n, apr_size_t *at, apr_int64_t *v)
{
    apr_size_t len, i;

    if (*at >= n) {
        return 0;
    }
    switch (t[(*at)++]) {
    case 97:
        if (*at + 1 > n) {
            return 0;
        }
        *v = t[(*at)++];
        return 1;
    case 98:
        if (*at + 4 > n || (t[*at] & 0x80)) {
            return 0;
        }
        *v = (apr_int64_t)be(t + *at, 4);
        *at += 4;
        return 1;
    case 110:
        if (*at + 2 > n || (len = t[*at]) > 7 || t[*at + 1] != 0 || *at + 2 + len > n) {
            return 0;
        }
        for (*v = 0, i = len; i > 0; i--) {
            *v = (*v << 8) | t[*at + 1 + i];
        }
        *at += 2 + len;
        return 1;
    default:
        return 0;
    }
}

/* A decimal number of at most 18 digits, the whole of text[0..len). */
static int read_decimal(const char *text, apr_size_t len, apr_int64_t *v)
{
    apr_size_t i;

    if (len == 0 || len > 18) {
        return 0;
    }
    for (*v = 0, i = 0; i < len; i++) {
        if (text[i] < '0' || text[i] > '9') {
            return 0;
        }
        *v = *v * 10 + (text[i] - '0');
    }
    return 1;
}

apr_array_header_t *cp_seq_elements(apr_pool_t *pool, const char *canonical)
{
    const char *dash = canonical ? strchr(canonical, '-') : NULL;
    apr_array_header_t *out = apr_array_make(pool, 4, sizeof(cp_seq_element));
    const unsigned char *t;
    apr_size_t n = 0, at = 0;
    cp_seq_element *e;

    if (!canonical) {
        return NULL;
    }
    if (!dash || dash[1] != 's'
        || !(t = (const unsigned char *)apr_pdecode_base64_binary(
                 pool, dash + 2, APR_ENCODE_STRING, APR_ENCODE_BASE64URL, &n))) {
        /* a number, or "N-WORD": one element */
        e = apr_array_push(out);
        e->name = (const unsigned char *)(dash ? dash + 1 : "");
        e->name_len = dash ? strlen(dash + 1) : 0;
        return read_decimal(canonical, dash ? (apr_size_t)(dash - canonical) : strlen(canonical),
                            &e->seq) && strspn((const char *)e->name,
                                               "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                               "0123456789-_") == e->name_len ? out : NULL;
    }
    /* cp_seq_canonical's: each element's length, then its term */
    while (at < n) {
        apr_size_t len, end, from;
        apr_int64_t v;

        if (at + 4 > n || (len = be(t + at, 4)) > n - at - 4) {
            return NULL;
        }
        at += 4;
        end = at + len;
        /* {Node, Range, Seq}; Seq a number or {Number, Uuid, EpochNode} */
        if (len < 2 || t[at] != 104 || t[at + 1] != 3) {
            return NULL;
        }
        from = at += 2;
        if (!skip_term(t, end, &at, 0) || !skip_term(t, end, &at, 0)) {
            return NULL;
        }
        e = apr_array_push(out);
        e->name = t + from;
        e->name_len = at - from;
        if (at + 2 <= end && t[at] == 104 && t[at + 1] >= 1) {
            at += 2;
            if (!read_whole(t, end, &at, &v)) {
                return NULL;
            }
        }
        else if (!read_whole(t, end, &at, &v) || at != end) {
            return NULL;
        }
        if (v >= ((apr_int64_t)1 << 62)) {
            return NULL;
        }
        e->seq = v;
        at = end;
    }
    return out->nelts ? out : NULL;
}

int cp_seq_copies_within(apr_pool_t *pool, const char *page, const char *db)
{
    apr_array_header_t *in = cp_seq_elements(pool, page), *of = cp_seq_elements(pool, db);
    int i, j;

    if (!in || !of) {
        return 0;
    }
    for (i = 0; i < in->nelts; i++) {
        const cp_seq_element *e = &APR_ARRAY_IDX(in, i, cp_seq_element);

        for (j = 0; j < of->nelts; j++) {
            const cp_seq_element *d = &APR_ARRAY_IDX(of, j, cp_seq_element);

            if (d->name_len == e->name_len && !memcmp(d->name, e->name, e->name_len)) {
                break;
            }
        }
        if (j == of->nelts) {
            return 0;
        }
    }
    return 1;
}
