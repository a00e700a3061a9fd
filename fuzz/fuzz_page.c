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
 * (the backward query with the limit it plans; for the last page's token,
 * "last", the backward response is the tail read back from the range's end,
 * the forward one's offset the range start probe's); then cp_page_assemble,
 * cp_render_json (whole documents, and CouchPageFields) and cp_render_html
 * (items as their key, as a field with a link pattern, and as a link whose
 * pattern and whose words (CouchPageText) hold quotes, taken from the
 * input).
 *
 * Checked: the page's rows are the answer's, in order (the first C rows read
 * forward, or on the last page the rows nearest the range's end, starting on
 * a page boundary when numbered), no more than C; the JSON body is JSON, its
 * items the values jansson reads from the rows (the page as it was made
 * before spans), each doc's HTML-safe copy byte for byte what one byte a
 * step writes, and what its ETag digests in place of whole documents
 * (cp_etag_revision) their bytes in the body and their _id and _rev; the HTML is read as a browser would: every '<' opens one of
 * the fragment's own tags, every attribute is name="value" with no raw
 * " ' < > or stray '&' in values or text, and what the entities decode to is
 * what was rendered (each item's text and link, the nav's label, the next
 * and previous links); every token the page links to is one the module
 * accepts back, the next one naming the row after the page.
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

/* Whether the item the page wrote (ours) has the members of the one made
 * from jansson's reading (theirs), in any order, each the same reading. */
static int same_members(const json_t *ours, const json_t *theirs, int as_real)
{
    const char *name;
    json_t *value;

    if (!json_is_object(ours) || json_object_size(ours) != json_object_size(theirs)) {
        return 0;
    }
    json_object_foreach((json_t *)theirs, name, value) {
        if (!fuzz_same_reading(json_object_get(ours, name), value, as_real)) {
            return 0;
        }
    }
    return 1;
}

/* The HTML-safe copy of each row's doc, byte for byte what one byte a
 * step writes (the copy goes 64 and 16 bytes a step). */
static void check_html_safe_docs(apr_pool_t *pool, const cp_page *page)
{
    int r;

    for (r = 0; r < page->rows->nelts; r++) {
        const cp_row *row = APR_ARRAY_IDX(page->rows, r, const cp_row *);
        char *out = apr_palloc(pool, 6 * row->doc.len + 1), *want = apr_palloc(pool, 6 * row->doc.len + 1);
        apr_size_t i, n = 0, written;

        for (i = 0; i < row->doc.len; i++) {
            char c = row->doc.text[i];

            if (c == '<' || c == '>' || c == '&') {
                n += (apr_size_t)snprintf(want + n, 7, "\\u%04x", (unsigned char)c);
            }
            else {
                want[n++] = c;
            }
        }
        written = (apr_size_t)(cp_json_copy_html_safe(out, row->doc.text, row->doc.len) - out);
        FUZZ_CHECK(written == n && !memcmp(out, want, n), "row %d: the HTML-safe copy of its doc differs", r);
    }
}

/* What the ETag digests in place of documents: the same body, and for
 * documents copied whole, in order, each one's bytes in it (an object), its
 * _id and _rev strings; then a tag that is weak exactly when there are some. */
static void check_revisions(apr_pool_t *pool, const cp_page *page, const cp_links *links,
                            const char *rendered)
{
    const apr_array_header_t *revisions;
    const char *body = cp_render_json(pool, page, links, NULL, &revisions), *etag;
    apr_size_t done = 0, len = strlen(body);
    int i;

    FUZZ_CHECK(!strcmp(body, rendered), "a page with its revisions is another body");
    FUZZ_CHECK(revisions && revisions->nelts <= page->rows->nelts, "more revisions than rows");
    for (i = 0; i < revisions->nelts; i++) {
        const cp_etag_revision *doc = &APR_ARRAY_IDX(revisions, i, cp_etag_revision);

        FUZZ_CHECK(doc->from >= done && doc->to > doc->from + 1 && doc->to <= len
                   && body[doc->from] == '{' && body[doc->to - 1] == '}',
                   "revision %d is no object of the body", i);
        FUZZ_CHECK(doc->id.len >= 2 && doc->id.text[0] == '"' && doc->rev.len >= 2
                   && doc->rev.text[0] == '"', "revision %d: _id or _rev is no string", i);
        done = doc->to;
    }
    etag = cp_render_etag(pool, body, revisions);
    FUZZ_CHECK(etag && (etag[0] == 'W') == (revisions->nelts > 0), "a tag of the wrong kind");
}

/* The page's items as jansson wrote them before spans (each row read by
 * jansson, reduced to its id, key, value and doc, value null when it has
 * none; the doc reduced to the fields named, the last of a name); the
 * rendered page's items must be the same values. */
static void check_items(apr_pool_t *pool, const cp_page *page, const char *rendered,
                        const apr_array_header_t *fields)
{
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
        int as_real, beyond;
        /* jansson's own parser: integers beyond 64 bits as doubles, which the
         * module's digits must equal (fuzz_same_reading) */
        json_t *read = fuzz_jansson_load(row->text.text, row->text.len, &as_real, &beyond);
        json_t *item = cp_json_pool_own(pool, json_object());
        const char *const *member;

        if (!read && beyond) {
            /* a member of the row, perhaps one the item leaves out, beyond
             * what jansson reads */
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
        FUZZ_CHECK(same_members(json_array_get(items, i), item, as_real),
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
    reason = cp_token_decode(pool, token, CP_TOKEN_VIEW_ROWS(with_docid), &decoded);
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

/* Whether two rows are the same row: the same text. */
static int same_row(const cp_row *a, const cp_row *b)
{
    return a == b || (a->text.len == b->text.len && !memcmp(a->text.text, b->text.text, a->text.len));
}

/* Whether two rows of an answer are one index entry: a document that
 * emitted one key several times (map rows only). */
static int one_entry(const cp_row *a, const cp_row *b, int with_docid)
{
    return with_docid && a->id && b->id && !strcmp(a->id, b->id)
        && ((a->key_text.len == b->key_text.len
             && !memcmp(a->key_text.text, b->key_text.text, a->key_text.len))
            || cp_json_identical(cp_row_key(a), cp_row_key(b)));
}

/* The rows of an answer read backward, in view order: its entries in
 * reverse, each entry's rows as they came (CouchDB lists an entry's rows in
 * one order either way). */
static apr_array_header_t *view_order(apr_pool_t *pool, const cp_answer *answer, int with_docid)
{
    int n = (int)cp_answer_rows(answer), end = n, start, i;
    apr_array_header_t *rows = apr_array_make(pool, n + 1, sizeof(const cp_row *));

    while (end > 0) {
        for (start = end - 1;
             start > 0 && one_entry(cp_answer_row(answer, start - 1), cp_answer_row(answer, end - 1),
                                    with_docid);
             start--) {
        }
        for (i = start; i < end; i++) {
            APR_ARRAY_PUSH(rows, const cp_row *) = cp_answer_row(answer, i);
        }
        end = start;
    }
    return rows;
}

/* The page's rows are the answer's, in order, none left out or added: the
 * first rows read forward from the page's start (the count, or every row
 * there is), or on the last page the rows nearest the range's end of those
 * read back from it (view_order); when the last page is numbered it starts
 * on a page boundary, and when the tail was read to the range's start
 * (nothing cut), it holds the count or every row there is. */
static void check_rows(apr_pool_t *pool, const cp_page_answers *in, const cp_page *page)
{
    int n = page->rows->nelts, i;

    if (in->start_token && in->start_token->from == CP_FROM_LAST) {
        const cp_query *tail = cp_plan_query(in->queries, CP_QUERY_RANGE_END);
        const apr_array_header_t *rows = view_order(pool, tail->answer, in->with_docid);
        int read = rows->nelts;

        FUZZ_CHECK(n <= read, "%d rows on the last page of %d read", n, read);
        for (i = 0; i < n; i++) {
            FUZZ_CHECK(same_row(APR_ARRAY_IDX(page->rows, i, const cp_row *),
                                APR_ARRAY_IDX(rows, read - n + i, const cp_row *)),
                       "the last page's row %d is not row %d from the end", i, n - i);
        }
        if (page->numbered) {
            FUZZ_CHECK(page->offset % in->count == 0 && page->offset + n == page->total_rows
                       && (n > 0 || page->total_rows == 0),
                       "the last page holds rows %lld to %lld of %lld, %d a page",
                       (long long)page->offset, (long long)page->offset + n,
                       (long long)page->total_rows, in->count);
        }
        else if (read < tail->limit) {
            FUZZ_CHECK(n == (read < in->count ? read : in->count),
                       "%d rows on the last page, of %d read back from the end", n, read);
        }
        return;
    }
    {
        const cp_answer *forward = cp_plan_query(in->queries, CP_QUERY_FORWARD)->answer;
        int read = (int)cp_answer_rows(forward);

        FUZZ_CHECK(n == (read < in->count ? read : in->count),
                   "%d rows on a page of %d, of %d read forward", n, in->count, read);
        for (i = 0; i < n; i++) {
            FUZZ_CHECK(same_row(APR_ARRAY_IDX(page->rows, i, const cp_row *),
                                cp_answer_row(forward, i)),
                       "the page's row %d is not the answer's row %d", i, i);
        }
    }
}

/* One row more than the page (in the ahead answer, when there is one)
 * means a next page, starting at that row: its token names the row's key
 * and its whole document id. */
static void check_next(apr_pool_t *pool, const cp_page_answers *in, const cp_page *page)
{
    const cp_query *ahead = cp_plan_query(in->queries, CP_QUERY_AHEAD);
    const cp_query *forward = cp_plan_query(in->queries, CP_QUERY_FORWARD);
    const cp_answer *rows;
    const cp_row *row;
    cp_token next;

    if (in->start_token && in->start_token->from == CP_FROM_LAST) {
        FUZZ_CHECK(!page->next, "a next token %s on the last page", page->next);
        return;
    }
    rows = (ahead ? ahead : forward)->answer;
    row = cp_answer_rows(rows) > (apr_size_t)in->count ? cp_answer_row(rows, in->count) : NULL;
    if (!row) {
        FUZZ_CHECK(!page->next, "a next token %s without a row after the page", page->next);
        return;
    }
    FUZZ_CHECK(page->next, "no next token, though row %d follows the page", in->count);
    FUZZ_CHECK(!cp_token_decode(pool, page->next, CP_TOKEN_VIEW_ROWS(in->with_docid), &next),
               "next token %s", page->next);
    FUZZ_CHECK(cp_json_identical(next.key, cp_row_key(row)),
               "the next token %s does not hold the next row's key", page->next);
    if (in->with_docid) {
        FUZZ_CHECK(!strcmp(next.docid, row->id),
                   "the next token %s does not hold the next row's id", page->next);
    }
}

/* How HTML items are shown: CouchPageItem FIELD [LINK], or the default
 * (key); the last with quotes, '&' and '<' in its pattern, and its words
 * (CouchPageText) from the input (html_words). */
static const struct {
    const char *field, *link;
} item_specs[] = {
    { NULL, NULL },
    { "value.title", "/doc/{id}?key={key}&tag={doc.tags[0]}" },
    { "doc.title", "/find?q=\"{key}\"&by='{id}'<{value}>" },
};

/* Every word of the fragment (CouchPageText), as an administrator might
 * write it: the first row's key as JSON text, quotes and all (a C string, as
 * the configuration holds it); NULL (the defaults) without rows. */
static const char *const *html_words(apr_pool_t *pool, const cp_page *page)
{
    const char **words;
    const cp_row *row;
    int i;

    if (page->rows->nelts == 0) {
        return NULL;
    }
    row = APR_ARRAY_IDX(page->rows, 0, const cp_row *);
    words = apr_palloc(pool, CP_WORD_COUNT * sizeof(*words));
    for (i = 0; i < CP_WORD_COUNT; i++) {
        words[i] = fuzz_strndup(pool, row->key_text.text, row->key_text.len);
    }
    return words;
}

/* The fragment's own tags and attributes (keep in step with
 * cp_render_html); anything else is row text that was not escaped. */
static const char *const html_tags[] = {
    "div", "ul", "li", "a", "p", "nav", "span", "ol", "form", "label", "input", "button",
};
static const char *const html_attributes[] = {
    "class", "href", "rel", "aria-label", "aria-current", "aria-hidden", "aria-disabled",
    "data-couchpage-status", "data-couchpage-more-label",
    "method", "action", "type", "name", "min", "max", "step", "value",
    "required", /* the one without a value */
};

#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

/* A name of the fragment's ([a-z-]+) at *at, one of names: its index, and
 * *at past it. */
static size_t html_name(const char **at, const char *const *names, size_t n, const char *what)
{
    const char *p = *at;
    size_t i;

    while ((*p >= 'a' && *p <= 'z') || *p == '-') {
        p++;
    }
    for (i = 0; i < n; i++) {
        if (strlen(names[i]) == (size_t)(p - *at) && !strncmp(*at, names[i], (size_t)(p - *at))) {
            *at = p;
            return i;
        }
    }
    FUZZ_CHECK(0, "not one of the fragment's %s at %.40s", what, *at);
    return 0;
}

/* Text of the fragment (between tags, or an attribute's value) as a browser
 * reads it: the entities cp_html_text writes decoded. A raw < > " or ',
 * or an '&' that starts no such entity, is row text left unescaped. */
static const char *html_unescape(apr_pool_t *pool, const char *p, const char *end)
{
    static const struct {
        const char *entity;
        char c;
    } entities[] = {
        { "&lt;", '<' }, { "&gt;", '>' }, { "&amp;", '&' }, { "&quot;", '"' }, { "&#39;", '\'' },
    };
    char *out = apr_palloc(pool, (size_t)(end - p) + 1), *o = out;
    size_t i;

    while (p < end) {
        if (*p == '&') {
            for (i = 0; i < COUNT_OF(entities); i++) {
                size_t len = strlen(entities[i].entity);

                if ((size_t)(end - p) >= len && !strncmp(p, entities[i].entity, len)) {
                    *o++ = entities[i].c;
                    p += len;
                    break;
                }
            }
            FUZZ_CHECK(i < COUNT_OF(entities), "a bare '&' in the HTML at %.40s", p);
            continue;
        }
        FUZZ_CHECK(*p != '<' && *p != '>' && *p != '"' && *p != '\'',
                   "an unescaped '%c' in the HTML at %.40s", *p, p);
        *o++ = *p++;
    }
    *o = '\0';
    return out;
}

/* What an item shows, as a browser reads it: the field's text, a NUL as
 * U+FFFD (cp_html_text). */
static const char *item_text(apr_pool_t *pool, const cp_item_spec *item, const cp_row *row)
{
    const json_t *value = item->field ? cp_field_get(pool, item->field, row) : cp_row_key(row);
    apr_size_t len = 0, i;
    const char *text = cp_field_text(pool, value, &len);
    char *out, *o;

    if (!text) {
        return "";
    }
    out = o = apr_palloc(pool, 3 * len + 1);
    for (i = 0; i < len; i++) {
        if (text[i]) {
            *o++ = text[i];
        }
        else {
            o = stpcpy(o, "\xef\xbf\xbd");
        }
    }
    *o = '\0';
    return out;
}

/* Reads the fragment tag by tag, as a browser would (see html_unescape),
 * and checks what it says against the page: each item's text (and link)
 * is its row's, in the page's order, the nav's label the word given, the
 * next and previous links the page's. */
static void check_html(apr_pool_t *pool, const char *html, const cp_page *page,
                       const cp_links *links, const cp_item_spec *item, const char *nav_label)
{
    const char *p = html, *text = NULL;
    int items = 0, in_item = 0;

    while (*p) {
        const char *lt = strchr(p, '<'), *end = lt ? lt : p + strlen(p);
        const char *attr[COUNT_OF(html_attributes)] = { NULL };
        size_t tag;
        int closing;

        if (end > p) {
            const char *read = html_unescape(pool, p, end);

            text = in_item ? apr_pstrcat(pool, text, read, NULL) : text;
        }
        if (!lt) {
            break;
        }
        p = lt + 1;
        closing = *p == '/';
        p += closing;
        tag = html_name(&p, html_tags, COUNT_OF(html_tags), "tags");
        while (!closing && *p == ' ') {
            size_t a;
            const char *quote;

            p++;
            a = html_name(&p, html_attributes, COUNT_OF(html_attributes), "attributes");
            if (!strcmp(html_attributes[a], "required")) {
                attr[a] = "";
                continue;
            }
            FUZZ_CHECK(!strncmp(p, "=\"", 2), "an attribute without =\" at %.40s", p);
            quote = strchr(p + 2, '"');
            FUZZ_CHECK(quote, "an attribute value without its closing quote at %.40s", p);
            attr[a] = html_unescape(pool, p + 2, quote);
            p = quote + 1;
        }
        FUZZ_CHECK(*p == '>', "a tag that does not end at %.40s", p);
        p++;
        if (!strcmp(html_tags[tag], "li") && !closing && attr[0]
            && !strcmp(attr[0], "couchpage-item")) {
            in_item = 1;
            text = "";
        }
        else if (!strcmp(html_tags[tag], "li") && closing && in_item) {
            const cp_row *row;

            FUZZ_CHECK(items < page->rows->nelts, "more items in the HTML than rows");
            row = APR_ARRAY_IDX(page->rows, items, const cp_row *);
            FUZZ_CHECK(!strcmp(text, item_text(pool, item, row)),
                       "item %d shows \"%s\", not \"%s\"", items, text,
                       item_text(pool, item, row));
            in_item = 0;
            items++;
        }
        else if (!strcmp(html_tags[tag], "a") && !closing && in_item) {
            const char *want;

            FUZZ_CHECK(item->link && items < page->rows->nelts, "item %d has a link", items);
            want = cp_pattern_expand(pool, item->link,
                                     APR_ARRAY_IDX(page->rows, items, const cp_row *), NULL);
            FUZZ_CHECK(attr[1] && !strcmp(attr[1], want),
                       "item %d links to \"%s\", not \"%s\"", items, attr[1] ? attr[1] : "",
                       want);
        }
        else if (!strcmp(html_tags[tag], "nav") && !closing) {
            FUZZ_CHECK(attr[3] && !strcmp(attr[3], nav_label),
                       "the nav is labelled \"%s\", not \"%s\"", attr[3] ? attr[3] : "",
                       nav_label);
        }
        else if (!strcmp(html_tags[tag], "a") && !closing && attr[0]
                 && (!strcmp(attr[0], "couchpage-next") || !strcmp(attr[0], "couchpage-prev"))) {
            const char *want = !strcmp(attr[0], "couchpage-next")
                             ? (page->next ? cp_link_url(pool, links, page->next) : NULL)
                             : cp_prev_url(pool, links, page);

            FUZZ_CHECK(want && attr[1] && !strcmp(attr[1], want), "%s goes to \"%s\", not \"%s\"",
                       attr[0], attr[1] ? attr[1] : "", want ? want : "(none)");
        }
    }
    FUZZ_CHECK(!in_item && items == page->rows->nelts, "%d items in the HTML for %d rows", items,
               page->rows->nelts);
}

static void one_page(apr_pool_t *pool, const uint8_t *data, size_t size, int with_docid)
{
    const char *part[PARTS] = { NULL };
    size_t len[PARTS] = { 0 };
    const char *body = (const char *)data + 3, *end = (const char *)data + size;
    cp_page_answers in;
    cp_page page;
    cp_token token;
    cp_link_made made[CP_LINKS_MADE] = { { NULL, NULL } };
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

        if (cp_token_decode(pool, text, CP_TOKEN_VIEW_ROWS(with_docid), &token)) {
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
    if (in.start_token && token.from == CP_FROM_LAST) {
        /* the last page's queries (cp_plan_page): the range start probe, and
         * the tail read back from the range's end */
        if (data[2] & 2) {
            add_answer(queries, CP_QUERY_RANGE_START, forward, 0);
        }
        add_answer(queries, CP_QUERY_RANGE_END, backward,
                   (1 + cp_plan_pages_either_side(in.links)) * in.count
                   + (with_docid ? CP_PLAN_BACKWARD_SLACK : 1));
    }
    else {
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
    }
    in.queries = queries;

    memset(&page, 0, sizeof(page));
    /* whether it needs a second round: any answer, either way; a query
     * named is one of the page's that reads behind it */
    widen = cp_page_assemble(pool, &in, &page);
    FUZZ_CHECK(!widen || widen->role == CP_QUERY_BACKWARD
               || (widen->role == CP_QUERY_RANGE_END && in.start_token
                   && in.start_token->from == CP_FROM_LAST),
               "query %d named to widen", widen->role);

    FUZZ_CHECK(page.rows && page.rows->nelts <= in.count,
               "%d rows on a page of %d", page.rows->nelts, in.count);
    check_rows(pool, &in, &page);
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
    /* the page's links kept once made, as the glue keeps them */
    links.made = made;
    rendered = cp_render_json(pool, &page, &links, NULL, NULL);
    FUZZ_CHECK(fuzz_is_json(rendered), "the rendered page is not JSON");
    check_items(pool, &page, rendered, NULL);
    check_revisions(pool, &page, &links, rendered);
    check_html_safe_docs(pool, &page);
    /* CouchPageFields */
    APR_ARRAY_PUSH(fields, const char *) = "title";
    APR_ARRAY_PUSH(fields, const char *) = "a";
    rendered = cp_render_json(pool, &page, &links, fields, NULL);
    FUZZ_CHECK(fuzz_is_json(rendered), "the rendered page with fields is not JSON");
    check_items(pool, &page, rendered, fields);
    for (i = 0; i < (int)COUNT_OF(item_specs); i++) {
        cp_item_spec spec;
        cp_html_spec html;
        const char *error = NULL;

        memset(&spec, 0, sizeof(spec));
        memset(&html, 0, sizeof(html));
        html.item = &spec;
        /* the words the input gives with the last item spec, else the defaults */
        html.words = i == (int)COUNT_OF(item_specs) - 1 ? html_words(pool, &page) : NULL;
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
        check_html(pool, rendered, &page, &links, &spec,
                   html.words ? html.words[CP_WORD_NAV_LABEL]
                              : cp_word_defaults[CP_WORD_NAV_LABEL]);
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
