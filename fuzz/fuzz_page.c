/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target: the page assembler and the JSON renderer.
 *
 * Input: three header bytes, then up to four parts separated by '|':
 *
 *   C L R forward | backward | token | ahead
 *
 *   C        rows per page: C % 16, 0 meaning 16 (so '1'..'9' are 1..9)
 *   L        pages linked either side: L % 4 ('0'..'3')
 *   R        bit 0: the location has a key range ('0' no, '1' yes);
 *            bit 1: the client gave a limit, so links carry it ('2', '3');
 *            bit 2: the client gave a format, so links carry it ('4'..'7');
 *            bit 4: grouped rows: the own group probe found the token's
 *            group (its answer: the forward one)
 *   forward  the forward (or first-page) view response
 *   backward the backward view response, read from the token's own row;
 *            absent or empty: a first page
 *   token    the start token the queries started from (it must decode,
 *            as the module only reads backward with a valid token)
 *   ahead    the keys-only response for the pages ahead, from the token's
 *            row too, or nothing
 *
 * Each is read as the module does (cp_response_read_view, and
 * cp_token_decode for the token), once for map rows with docids and once for
 * grouped rows without, into the answers of the queries cp_plan_page plans
 * (the backward query with the limit it plans); then cp_page_assemble,
 * cp_render_json (whole documents, and CouchPageFields) and cp_render_html
 * (items as their key, and as a field with a link pattern). The JSON body
 * must be JSON, its items the values jansson reads from the rows (the page
 * as it was made before spans), every '<' of the HTML must open one of the
 * fragment's own tags (all row text escaped), the page may not hold more
 * than C rows, and every token the page links to must be one the module
 * accepts back.
 */
#include "fuzz.h"
#include "couchpage_item.h"
#include "couchpage_json.h"
#include "couchpage_page.h"
#include "couchpage_response.h"
#include "couchpage_render.h"
#include "couchpage_token.h"

#include <apr_strings.h>

#define PARTS 4

/* A response part: NULL when absent, empty or refused. */
static const cp_answer *response(apr_pool_t *pool, const char *text, size_t len,
                                 int with_docid, int *refused)
{
    const cp_answer *answer = NULL;
    const char *error;

    if (!text || len == 0) {
        return NULL;
    }
    error = cp_response_read_view(pool, cp_response_padded(pool, text, len), len, with_docid,
                                  &answer);
    if (error) {
        FUZZ_CHECK(*error, "a response refused without a reason");
        *refused = 1;
        return NULL;
    }
    return answer;
}

/* The page's items as jansson wrote them before spans (each row read by
 * jansson, reduced to its id, key, value and doc, value null when it has
 * none; the doc reduced to the fields named, the last of a name); the
 * rendered page's items must be the same values. */
static void check_items(apr_pool_t *pool, const cp_page *page, const char *rendered,
                        const apr_array_header_t *fields)
{
    json_error_t err;
    /* as the module reads JSON: integers beyond 64 bits digit for digit */
    json_t *body = json_incref(cp_json_load(pool, rendered, strlen(rendered), NULL));
    const json_t *items;
    int i, f;

    if (!body) {
        /* only where jansson reads no row either (fuzz_is_json has passed) */
        return;
    }
    cp_json_pool_own(pool, body);
    items = json_object_get(body, "items");

    FUZZ_CHECK(json_is_array(items) && json_array_size(items) == (size_t)page->rows->nelts,
               "the rendered page has %zu items for %d rows", json_array_size(items),
               page->rows->nelts);
    for (i = 0; i < page->rows->nelts; i++) {
        const cp_row *row = APR_ARRAY_IDX(page->rows, i, const cp_row *);
        json_t *read = json_loadb(row->text.text, row->text.len,
                                  JSON_DECODE_ANY | JSON_ALLOW_NUL, &err);
        json_t *item = cp_json_pool_own(pool, json_object());
        const char *const *member;

        if (!read && json_error_code(&err) == json_error_numeric_overflow) {
            const char *again = NULL;

            read = json_incref(cp_json_load(pool, row->text.text, row->text.len, &again));
            /* read again with the big integers as wide integers, jansson
             * may still meet one of its own limits */
            if (!read && (strstr(again, "NUL byte in object key")
                          || strstr(again, "maximum parsing depth"))) {
                continue;
            }
        }
        if (!read && fuzz_jansson_limit(&err)) {
            /* a member of the row that the item leaves out, which jansson
             * cannot read */
            continue;
        }
        FUZZ_CHECK(read, "row %d's text is not JSON", i);
        cp_json_pool_own(pool, read);
        for (member = cp_row_members; *member; member++) {
            json_t *value = json_object_get(read, *member);

            if (value) {
                json_object_set(item, *member, value);
            }
        }
        if (!json_object_get(item, "value")) {
            json_object_set_new(item, "value", json_null());
        }
        if (fields && json_is_object(json_object_get(item, "doc"))) {
            json_t *doc = json_object_get(item, "doc"), *projected = json_object();

            for (f = 0; f < fields->nelts; f++) {
                json_t *value = json_object_get(doc, APR_ARRAY_IDX(fields, f, const char *));

                if (value) {
                    json_object_set(projected, APR_ARRAY_IDX(fields, f, const char *), value);
                }
            }
            json_object_set_new(item, "doc", projected);
        }
        FUZZ_CHECK(json_equal(item, json_array_get(items, i)),
                   "item %d differs from the row jansson read", i);
    }
}

/* A token the page hands out must be one the module takes back. */
static void check_token(apr_pool_t *pool, const char *token, int with_docid,
                        const char *what)
{
    cp_token decoded;
    const char *reason;

    if (!token) {
        return;
    }
    reason = cp_token_decode(pool, token, with_docid, &decoded);
    FUZZ_CHECK(!reason, "the %s token %s is refused: %s", what, token, reason);
}

/* Adds an answered query. */
static cp_query *add_answer(apr_array_header_t *queries, cp_query_role role,
                            const cp_answer *answer, int limit)
{
    cp_query *query = apr_array_push(queries);

    memset(query, 0, sizeof(*query));
    query->role = role;
    query->answer = answer;
    query->limit = limit;
    return query;
}

/* One row more than the page (in the ahead answer, when there is one)
 * means a next page, starting at that row: its token names the row's key
 * and its whole document id. */
static void check_next(apr_pool_t *pool, const cp_page_answers *in, const cp_page *page)
{
    const cp_query *ahead = cp_plan_query(in->queries, CP_QUERY_AHEAD);
    const cp_query *forward = cp_plan_query(in->queries, CP_QUERY_FORWARD);
    const cp_answer *rows = (ahead ? ahead : forward)->answer;
    const cp_row *row = cp_answer_rows(rows) > (apr_size_t)in->count
                        ? cp_answer_row(rows, in->count) : NULL;
    cp_token next;

    if (!row) {
        FUZZ_CHECK(!page->next, "a next token %s without a row after the page", page->next);
        return;
    }
    FUZZ_CHECK(page->next, "no next token, though row %d follows the page", in->count);
    FUZZ_CHECK(!cp_token_decode(pool, page->next, in->with_docid, &next),
               "next token %s", page->next);
    FUZZ_CHECK(json_equal((json_t *)next.key, (json_t *)cp_row_key(row)),
               "the next token %s does not hold the next row's key", page->next);
    if (in->with_docid) {
        FUZZ_CHECK(!strcmp(next.docid, row->id),
                   "the next token %s does not hold the next row's id", page->next);
    }
}

/* How HTML items are shown: CouchPageItem FIELD [LINK], or the default (key). */
static const struct {
    const char *field, *link;
} item_specs[] = {
    { NULL, NULL },
    { "value.title", "/doc/{id}?key={key}&tag={doc.tags[0]}" },
};

/* The fragment's own tags (keep in step with cp_render_html); anything else
 * after a '<' is row text that was not escaped. */
static void check_html(const char *html)
{
    static const char *const tags[] = {
        "div ", "/div>", "ul ", "/ul>", "li>", "li ", "/li>", "a ", "/a>",
        "p ", "/p>", "nav ", "/nav>", "span ", "/span>", "ol ", "/ol>",
    };
    const char *lt;
    size_t i;

    for (lt = strchr(html, '<'); lt; lt = strchr(lt + 1, '<')) {
        for (i = 0; i < sizeof(tags) / sizeof(tags[0]); i++) {
            if (!strncmp(lt + 1, tags[i], strlen(tags[i]))) {
                break;
            }
        }
        FUZZ_CHECK(i < sizeof(tags) / sizeof(tags[0]), "unescaped '<' in the HTML at %.40s",
                   lt);
    }
}

static void one_page(apr_pool_t *pool, const uint8_t *data, size_t size, int with_docid)
{
    const char *part[PARTS] = { NULL };
    size_t len[PARTS] = { 0 };
    const char *body = (const char *)data + 3, *end = (const char *)data + size;
    cp_page_answers in;
    cp_page page;
    cp_token token;
    cp_links links;
    const char *rendered;
    const cp_answer *forward, *backward = NULL, *ahead;
    apr_array_header_t *fields = apr_array_make(pool, 3, sizeof(const char *));
    apr_array_header_t *queries = apr_array_make(pool, 3, sizeof(cp_query));
    cp_query *widen;
    int refused = 0, i, n;

    memset(&in, 0, sizeof(in));
    in.count = data[0] % 16 ? data[0] % 16 : 16;
    in.links = data[1] % 4;
    in.partial = data[2] & 1;
    in.with_docid = with_docid;

    for (n = 0; n < PARTS && body <= end; n++) {
        const char *bar = n < PARTS - 1 ? memchr(body, '|', (size_t)(end - body)) : NULL;

        part[n] = body;
        len[n] = (size_t)((bar ? bar : end) - body);
        body += len[n] + 1;
    }

    forward = response(pool, part[0], len[0], with_docid, &refused);
    if (!forward) {
        return;
    }
    if (part[1] && len[1] > 0 && part[2] && len[2] > 0) {
        const char *text = fuzz_strndup(pool, part[2], len[2]);

        if (cp_token_decode(pool, text, with_docid, &token)) {
            return;
        }
        backward = response(pool, part[1], len[1], with_docid, &refused);
        in.start_token = &token;
        in.start = text;
    }
    ahead = response(pool, part[3], len[3], with_docid, &refused);
    if (refused) {
        return;
    }
    add_answer(queries, CP_QUERY_FORWARD, forward, in.count + 1);
    if (ahead) {
        add_answer(queries, CP_QUERY_AHEAD, ahead, cp_plan_pages_either_side(in.links) * in.count + 1);
    }
    if (backward) {
        int needed = cp_plan_pages_either_side(in.links) * in.count;
        /* map rows: the rows passed over with skip, as cp_plan_page asks (or
         * none, as after a widening) */
        int skip = with_docid && (data[2] & 8) && in.count > 2 ? in.count - 2 : 0;
        cp_query *query;

        query = add_answer(queries, CP_QUERY_BACKWARD, backward,
                           with_docid ? needed + token.index + 1 + CP_PLAN_BACKWARD_SLACK - skip
                                      : needed + 1);
        if (skip > 0) {
            query->params = cp_json_pool_own(pool, json_pack("{s:i}", "skip", skip));
        }
        /* grouped rows: the own group probe found the token's group, or
         * (left out) none */
        if (!with_docid && (data[2] & 16)) {
            add_answer(queries, CP_QUERY_OWN_GROUP, forward, 1);
        }
    }
    /* the range's probes: the ahead answer stands for the rows back from the
     * range's end, the forward one's offset for the rows before the range */
    if (data[2] & 2) {
        add_answer(queries, CP_QUERY_RANGE_START, ahead ? ahead : forward, 0);
    }
    if (data[2] & 4) {
        add_answer(queries, CP_QUERY_RANGE_END, ahead ? ahead : forward,
                   in.count + CP_PLAN_BACKWARD_SLACK);
    }
    in.queries = queries;

    memset(&page, 0, sizeof(page));
    /* whether it needs a second round: any answer, either way; a query
     * named is one of the page's that reads behind it */
    widen = cp_page_assemble(pool, &in, &page);
    FUZZ_CHECK(!widen || widen->role == CP_QUERY_BACKWARD
               || (widen->role == CP_QUERY_RANGE_END && in.start_token
                   && in.start_token->at_end), "query %d named to widen", widen->role);

    FUZZ_CHECK(page.rows && page.rows->nelts <= in.count,
               "%d rows on a page of %d", page.rows->nelts, in.count);
    check_token(pool, page.next, with_docid, "next");
    check_next(pool, &in, &page);
    check_token(pool, page.prev, with_docid, "prev");
    FUZZ_CHECK(!page.prev_is_first || page.prev, "the previous page is the first, but none");
    if (page.has_last && !page.last_is_current) {
        check_token(pool, page.last, with_docid, "last");
    }
    FUZZ_CHECK(!page.numbered
               || (page.offset >= 0 && page.offset + page.rows->nelts <= page.total_rows),
               "a position past the location's total");
    FUZZ_CHECK(page.pages, "no page links array");
    for (i = 0; i < page.pages->nelts; i++) {
        const cp_page_link *link = &APR_ARRAY_IDX(page.pages, i, cp_page_link);

        /* the first page (the farthest behind) is linked by its own URL */
        if (!link->current && i > 0) {
            FUZZ_CHECK(link->start, "page link %lld has no token", (long long)link->number);
        }
        check_token(pool, link->start, with_docid, "page link");
    }

    memset(&links, 0, sizeof(links));
    links.path = "/db/";
    links.limit = data[2] & 2 ? in.count : 0;
    links.format = data[2] & 4 ? "html" : NULL;
    rendered = cp_render_json(pool, &page, &links, NULL);
    FUZZ_CHECK(fuzz_is_json(rendered), "the rendered page is not JSON");
    check_items(pool, &page, rendered, NULL);
    /* CouchPageFields */
    APR_ARRAY_PUSH(fields, const char *) = "title";
    APR_ARRAY_PUSH(fields, const char *) = "a";
    rendered = cp_render_json(pool, &page, &links, fields);
    FUZZ_CHECK(fuzz_is_json(rendered), "the rendered page with fields is not JSON");
    check_items(pool, &page, rendered, fields);
    for (i = 0; i < (int)(sizeof(item_specs) / sizeof(item_specs[0])); i++) {
        cp_item_spec spec;
        cp_html_spec html;
        const char *error = NULL;

        memset(&spec, 0, sizeof(spec));
        memset(&html, 0, sizeof(html));
        html.item = &spec;
        if (item_specs[i].field) {
            spec.field = cp_field_parse(pool, item_specs[i].field, &error);
            FUZZ_CHECK(spec.field, "field %s: %s", item_specs[i].field, error);
        }
        if (item_specs[i].link) {
            spec.link = cp_pattern_parse(pool, item_specs[i].link, &error);
            FUZZ_CHECK(spec.link, "link %s: %s", item_specs[i].link, error);
        }
        rendered = cp_render_html(pool, &page, &links, &html, &error);
        FUZZ_CHECK(rendered, "no HTML: %s", error ? error : "");
        check_html(rendered);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    apr_pool_t *pool;

    if (size < 3) {
        return 0;
    }
    pool = fuzz_pool();
    one_page(pool, data, size, 1);
    one_page(pool, data, size, 0);
    apr_pool_destroy(pool);
    return 0;
}
