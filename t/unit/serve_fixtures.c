/* SPDX-License-Identifier: Apache-2.0 */
/* What the tests of cp_serve share: serving a location's page, its rows'
 * names, a walk by links, and the fakes and locations several programs use. */
#include "fake_transport.h"

#include <apr_strings.h>

apr_pool_t *pool;

const cp_fault *serve(location *l, const char *start)
{
    l->args.start = start;
    return cp_serve(pool, &l->source, &l->req, &l->transport, &l->served);
}

const unsigned char fresh_key[CP_FRESH_KEY_LEN] = "0123456789abcdef0123456789abcdef";

const cp_fault *serve_fresh(location *l, const char *start, const char *inm, cp_fresh *fresh)
{
    memset(fresh, 0, sizeof(*fresh));
    fresh->key = fresh_key;
    fresh->if_none_match = inm;
    fresh->context = "json /t";
    l->args.start = start;
    return cp_fresh_serve(pool, &l->source, &l->req, &l->transport, fresh, &l->served);
}

/* Serves the page, which must not fail. */
cp_page *page_at(location *l, const char *start)
{
    const cp_fault *fault = serve(l, start);

    if (fault) {
        fail_msg("the page at %s failed: %d %s (%s %s)", start ? start : "the start",
                 fault->status, fault->reason, fault->log_code, fault->log_text);
    }
    return &l->served.page;
}

/* The page's rows: their ids (a view's, or a _find document's), or keys
 * of grouped rows, space-separated. */
const char *row_names(const cp_page *page)
{
    const char *out = "";
    int i;

    for (i = 0; i < page->rows->nelts; i++) {
        const cp_row *row = APR_ARRAY_IDX(page->rows, i, const cp_row *);
        const char *name = row->id ? row->id : cp_json_text(pool, cp_row_key(row));

        out = apr_pstrcat(pool, out, i ? " " : "", name, NULL);
    }
    return out;
}

const json_t *row_value(const cp_row *row)
{
    return cp_row_decode(pool, row, cp_row_member(row, "value"));
}

/* Walks the location from its first page by next links to its last, then
 * back by prev links, checking that each page holds the expected rows
 * (pages: one string of row names a page) and, when numbered, its number
 * and the location's total. */
void walk_both_ways(location *l, const char *const *pages, int n, apr_int64_t total)
{
    const char **tokens = apr_pcalloc(pool, sizeof(*tokens) * (size_t)(n + 1));
    const cp_page *page;
    int i;

    for (i = 0; i < n; i++) {
        page = page_at(l, tokens[i]);
        assert_string_equal(row_names(page), pages[i]);
        if (page->numbered && total >= 0) {
            assert_int_equal(page->total_rows, total);
            assert_int_equal(page->offset, (apr_int64_t)i * l->req.count);
        }
        if (i + 1 < n) {
            assert_non_null(page->next);
            tokens[i + 1] = apr_pstrdup(pool, page->next);
        }
        else {
            assert_null(page->next);
        }
    }
    for (i = n - 1; i > 0; i--) {
        page = page_at(l, tokens[i]);
        assert_non_null(page->prev);
        page = page_at(l, page->prev_is_first ? NULL : page->prev);
        assert_string_equal(row_names(page), pages[i - 1]);
    }
}

/* Ten rows keyed 0..9, ids d0..d9, each with its document {"n": i}. */
fake *ten_rows(void)
{
    fake *f = fake_make();
    int i;

    for (i = 0; i < 10; i++) {
        add_row(f, apr_psprintf(pool, "%d", i), apr_psprintf(pool, "d%d", i), i);
        add_doc(f, apr_psprintf(pool, "{\"_id\":\"d%d\",\"n\":%d}", i, i));
    }
    return f;
}

/* A _find location counted (CouchPageCount, cap rows): the default's. */
location *counted_location(const char *selector, int count, int links, int cap)
{
    location *l = find_location(ten_rows(), "n", selector, count, links);

    l->source.count.mode = cap ? CP_COUNT_CAPPED : CP_COUNT_NONE;
    l->source.count.cap = cap;
    return l;
}

/* Documents under k "a" and "b", and the index's view of them: keys
 * [k, n] in collation order. */
fake *indexed_docs(void)
{
    fake *f = fake_make();
    int i;

    for (i = 0; i < 14; i++) {
        const char *k = i % 2 ? "b" : "a";

        add_doc(f, apr_psprintf(pool, "{\"_id\":\"d%02d\",\"k\":\"%s\",\"n\":%d}", i, k, i));
    }
    for (i = 0; i < 14; i += 2) {
        add_row(f, apr_psprintf(pool, "[\"a\",%d]", i), apr_psprintf(pool, "d%02d", i), 0);
    }
    for (i = 1; i < 14; i += 2) {
        add_row(f, apr_psprintf(pool, "[\"b\",%d]", i), apr_psprintf(pool, "d%02d", i), 0);
    }
    f->ddoc = INDEX_DDOC;
    return f;
}

location *indexed_location(int links)
{
    location *l = find_location(indexed_docs(), "n", "{\"k\":\"a\"}", 3, links);

    l->spec.index_ddoc = "idx";
    return l;
}

void assert_fault(const cp_fault *fault, cp_fault_class kind, int status,
                         const char *error, const char *code)
{
    assert_non_null(fault);
    assert_int_equal(fault->kind, kind);
    assert_int_equal(fault->status, status);
    assert_string_equal(fault->error, error);
    assert_string_equal(fault->log_code, code);
}
