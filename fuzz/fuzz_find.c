/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target: the _find answer reader (cp_find_read) against jansson's
 * own parser on the same bytes (fuzz_jansson_load, fuzz_same_reading: wide
 * integers as their digits). Arbitrary bytes, as a Mango _find response sorted by
 * "date" and "author.name": a body it takes is JSON to jansson, with a docs
 * array of as many objects as it has rows; each row's id is its document's
 * _id, its key the document's values at the sort paths, its doc the
 * document (decoded from the records, and, whole, from its bytes), and the
 * answer's warning the body's. A body it refuses that jansson reads is one
 * whose docs are missing, not objects, without a usable _id or a sort
 * value: never one that fits. Bodies jansson cannot read are left to
 * fuzz_simdjson and fuzz_view_response.
 *
 * The same bytes are read as an index's design document
 * (cp_mango_index_fields: the fields only of a JSON index of a "query"
 * document, as jansson reads them) and as a selector over the index
 * ["type", "date", "author.name"] (cp_mango_index_range: a range only of
 * equalities on its leading fields, [v...] to [v..., beyond], or [v...]
 * when they fix all three).
 *
 * The rows read are also assembled into a numbered page (check_numbered),
 * as if read from an index's view, with a count of them the bytes choose.
 */
#include "fuzz.h"
#include "couchpage_find.h"
#include "couchpage_keyset.h"
#include "couchpage_json.h"
#include "couchpage_mango.h"
#include "couchpage_response.h"
#include "couchpage_simdjson.h"

/* The document's value at a sort field's steps, or NULL. */
static const json_t *at_steps(const json_t *doc, const char *const *steps)
{
    for (; *steps && doc; steps++) {
        doc = json_is_object(doc) ? json_object_get(doc, *steps) : NULL;
    }
    return doc;
}

/* Counts the body's members named "docs". */
static int count_docs(void *baton, const cp_sj_value *v)
{
    if (v->kind != CP_SJ_CLOSE && v->depth == 1 && v->name && v->name_len == 4
        && memcmp(v->name, "docs", 4) == 0) {
        (*(int *)baton)++;
    }
    return 0;
}

/* Whether jansson's docs are all what the reader takes. */
static int fits(const cp_find_sort *sort, const json_t *docs)
{
    size_t i;
    const json_t *doc, *id;
    int f;

    if (!json_is_array(docs)) {
        return 0;
    }
    json_array_foreach(docs, i, doc) {
        id = json_object_get(doc, "_id");
        if (!json_is_object(doc) || !json_is_string(id) || json_string_length(id) == 0
            || strlen(json_string_value(id)) != json_string_length(id)) {
            return 0;
        }
        for (f = 0; f < sort->count; f++) {
            if (!at_steps(doc, sort->fields[f].steps)) {
                return 0;
            }
        }
    }
    return 1;
}

/* The value an equality gives its field, as the reader takes it. */
static const json_t *equality(const json_t *condition)
{
    const json_t *eq = json_is_object(condition) ? json_object_get(condition, "$eq") : condition;

    return eq && !json_is_object(eq) && !json_is_array(eq) ? eq : NULL;
}

/* The text as a design document and as a selector (see the top). */
static void check_index(apr_pool_t *pool, const char *text, size_t size, const json_t *whole,
                        const cp_find_sort *sort)
{
    static const char *const index[] = { "type", "date", "author.name" };
    apr_array_header_t *fields = apr_array_make(pool, 3, sizeof(const char *));
    const char *view = NULL, *low, *high, *fixed, *why;
    const json_t *def, *lowv, *highv, *fixedv;
    size_t i, k;

    why = cp_mango_index_fields(pool, text, size, NULL, &view, &fields);
    if (!why) {
        def = json_object_get(json_object_get(json_object_get(json_object_get(whole, "views"),
                                                              view), "options"), "def");
        FUZZ_CHECK(json_is_string(json_object_get(whole, "language"))
                       && !strcmp(json_string_value(json_object_get(whole, "language")), "query")
                       && json_array_size(json_object_get(def, "fields"))
                              == (size_t)fields->nelts && fields->nelts > 0,
                   "index fields of a document that is no JSON index");
    }
    fields = apr_array_make(pool, 3, sizeof(const char *));
    for (i = 0; i < 3; i++) {
        APR_ARRAY_PUSH(fields, const char *) = index[i];
    }
    why = cp_mango_index_range(pool, whole, sort->fields, sort->count, fields, &low, &high,
                               &fixed);
    if (why) {
        return;
    }
    /* the sort starts after type: only an equality on type fits, and an
     * equality makes a range (no range is the whole index, no equality) */
    FUZZ_CHECK(low && high && fixed, "no range, though the sort leaves type to an equality");
    lowv = cp_json_load(pool, low, strlen(low), NULL);
    highv = cp_json_load(pool, high, strlen(high), NULL);
    fixedv = cp_json_load(pool, fixed, strlen(fixed), NULL);
    FUZZ_CHECK(json_is_array(lowv) && json_is_array(highv) && json_is_array(fixedv),
               "a range of arrays");
    /* the leading fields the selector fixes, type first (the sort starts
     * at date), in the index's order, begin both ends; a bound on the
     * next field, or the end's sentinel, may follow them */
    k = json_array_size(fixedv);
    FUZZ_CHECK(k >= 1 && k <= 3, "a range of %zu equalities: %s", k, fixed);
    FUZZ_CHECK(json_array_size(lowv) >= k && json_array_size(highv) >= k,
               "a range shorter than its equalities: %s .. %s", low, high);
    for (i = 0; i < k; i++) {
        FUZZ_CHECK(fuzz_same_reading(json_array_get(fixedv, i),
                                     equality(json_object_get(whole, index[i])), 0)
                       && json_equal(json_array_get(lowv, i), json_array_get(fixedv, i))
                       && json_equal(json_array_get(highv, i), json_array_get(fixedv, i)),
                   "the range's value %zu is not the selector's: %s .. %s", i, low, high);
    }
    FUZZ_CHECK(k == 3 ? json_array_size(highv) == 3
                      : json_array_size(highv) > k
                            && json_is_object(json_array_get(highv,
                                                             json_array_size(highv) - 1)),
               "the range's end: %s .. %s", low, high);
    /* only type's equality and conditions every sorted value meets */
    FUZZ_CHECK(json_object_size(whole) <= 3, "a selector of other fields");
}

/* The answer's rows as a numbered page read from an index's view, with a
 * count of them that the bytes choose (CouchDB's, or a backend's that
 * misreports): numbered only where the count agrees with the rows, and
 * then inside the location, its ends exact and its Last page aligned. */
static void check_numbered(apr_pool_t *pool, const cp_answer *answer, const uint8_t *data,
                           size_t size)
{
    unsigned choice = size ? (unsigned)data[0] | (unsigned)data[size - 1] << 8 : 0;
    int count = 1 + (int)(choice % 7), n = (int)cp_answer_rows(answer), shown, i;
    apr_array_header_t *rows = apr_array_make(pool, n + 1, sizeof(const cp_row *));
    static const cp_token_from froms[] = { CP_FROM_FIRST, CP_FROM_AFTER, CP_FROM_BEFORE,
                                           CP_FROM_LAST };
    cp_token token = { .from = froms[(choice >> 3) % 4] };
    cp_keyset_count counted;
    cp_token_from from;
    cp_page page;

    for (i = 0; i < n; i++) {
        APR_ARRAY_PUSH(rows, const cp_row *) = cp_answer_row(answer, (apr_size_t)i);
    }
    if (token.from == CP_FROM_AFTER || token.from == CP_FROM_BEFORE) {
        token.key = cp_json_pool_own(pool, json_pack("[i,s]", 1, "x"));
        token.docid = "x";
    }
    counted.total = n + (apr_int64_t)((choice >> 5) % 9) - 2;
    counted.before = (apr_int64_t)((choice >> 9) % 6) - 1;
    from = cp_keyset_page_assemble(pool, &token, rows, NULL, count, (int)(choice >> 12) % 3,
                                   &counted, token.from == CP_FROM_LAST ? CP_TOKEN_LAST : NULL,
                                   &page);
    if (from != token.from) {
        FUZZ_CHECK(n == 0 && (token.from == CP_FROM_AFTER ? from == CP_FROM_LAST
                                                          : from == CP_FROM_FIRST),
                   "asked again with %d rows", n);
        return;
    }
    shown = page.rows->nelts;
    FUZZ_CHECK(shown <= count && shown <= n, "%d rows on a page of %d from %d", shown, count, n);
    if (!page.numbered) {
        FUZZ_CHECK(page.total_rows == -1 && page.offset == -1, "unnumbered, with a count");
        return;
    }
    FUZZ_CHECK(page.total_rows == counted.total && page.offset >= 0
                   && page.offset + shown <= page.total_rows,
               "page at %" APR_INT64_T_FMT " of %d rows in %" APR_INT64_T_FMT, page.offset,
               shown, page.total_rows);
    FUZZ_CHECK((page.offset != 0 || !page.prev) && (page.offset + shown != page.total_rows
                                                    || !page.next),
               "a link past the location's end");
    FUZZ_CHECK(token.from != CP_FROM_FIRST || page.offset == 0, "a first page not first");
    FUZZ_CHECK(token.from != CP_FROM_LAST
                   || (page.offset % count == 0 && page.offset + shown == page.total_rows),
               "a Last page not aligned: at %" APR_INT64_T_FMT " of %" APR_INT64_T_FMT,
               page.offset, page.total_rows);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const names[] = { "date", "author.name" };
    apr_pool_t *pool = fuzz_pool();
    const char *text = cp_response_padded(pool, (const char *)data, size);
    const cp_answer *answer = NULL;
    const json_t *whole, *docs, *warning;
    cp_find_sort sort;
    const char *why;
    apr_size_t i;
    int as_real, beyond;

    FUZZ_CHECK(!cp_find_sort_init(pool, names, 2, 0, &sort), "the sort");
    why = cp_find_read(pool, text, size, &sort, &answer);
    if (!(whole = cp_json_pool_own(pool, fuzz_jansson_load(text, size, &as_real, &beyond)))) {
        /* beyond what jansson reads (a NUL in a member name, depth): whether
         * it is JSON is fuzz_simdjson's and fuzz_view_response's part */
        apr_pool_destroy(pool);
        return 0;
    }
    check_index(pool, text, size, whole, &sort);
    docs = json_object_get(whole, "docs");
    if (why) {
        int docs_members = 0;

        /* refused: a shape that does not fit, text simdjson judges not JSON
         * where jansson reads it (numbers: fuzz_simdjson's part), or a
         * second docs member (jansson keeps the last; the reader refuses a
         * document that is not an object in any, as CouchDB sends one) */
        cp_sj_walk(text, size, CP_RESPONSE_MAX_DEPTH, count_docs, &docs_members);
        FUZZ_CHECK(!json_is_object(whole) || !fits(&sort, docs) || strstr(why, "not JSON")
                       || docs_members > 1,
                   "a _find answer that fits was refused: %s", why);
        apr_pool_destroy(pool);
        return 0;
    }
    FUZZ_CHECK(json_is_array(docs) && json_array_size(docs) == cp_answer_rows(answer),
               "the rows are not the docs");
    warning = json_object_get(whole, "warning");
    FUZZ_CHECK(json_is_string(warning) ? answer->warning
                   && strlen(answer->warning) <= json_string_length(warning)
                   && !memcmp(answer->warning, json_string_value(warning),
                              strlen(answer->warning))
               : answer->warning == NULL, "the warning");
    for (i = 0; i < cp_answer_rows(answer); i++) {
        const cp_row *row = cp_answer_row(answer, i);
        const json_t *doc = json_array_get(docs, i), *key = cp_row_key(row);
        int f;

        FUZZ_CHECK(strcmp(row->id, json_string_value(json_object_get(doc, "_id"))) == 0,
                   "row %zu's id", (size_t)i);
        FUZZ_CHECK(json_array_size(key) == 2, "row %zu's key", (size_t)i);
        for (f = 0; f < 2; f++) {
            FUZZ_CHECK(fuzz_same_reading(json_array_get(key, f),
                                         at_steps(doc, sort.fields[f].steps), as_real),
                       "row %zu's sort value %d", (size_t)i, f);
        }
        FUZZ_CHECK(fuzz_same_reading(cp_row_decode(pool, row, row->doc), doc, as_real),
                   "row %zu's doc from its records", (size_t)i);
        FUZZ_CHECK(fuzz_same_reading(cp_json_load(pool, row->doc.text, row->doc.len, NULL), doc,
                                     as_real), "row %zu's doc from its bytes", (size_t)i);
    }
    check_numbered(pool, answer, data, size);
    apr_pool_destroy(pool);
    return 0;
}
