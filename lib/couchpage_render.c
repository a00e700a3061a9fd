/* SPDX-License-Identifier: Apache-2.0 */
/*
 * couchpage_render.c: a page written out as JSON or as the HTML fragment,
 * its links and ETag, and the error bodies; CouchPageFields' names and
 * CouchPageText's words checked. Part of the httpd-free core: no httpd
 * header, no request_rec; the glue sends what it writes.
 */
#include "couchpage_render.h"
#include "couchpage_bytes.h"
#include "couchpage_json.h"
#include "couchpage_changed.h"

#include <apr_atomic.h>
#include <apr_encode.h>
#include <apr_escape.h>
#include <openssl/evp.h>
#include <apr_strings.h>
#include <string.h>
#include <strings.h>

/* The room of a link's "&limit=N" (an int's digits and sign). */
#define LIMIT_ROOM (sizeof("&limit=") + 11)

/* The URL of the page at token, written in one pass: no token's bytes
 * are escaped twice (apr_pescape_urlencoded measures, then writes). */
static const char *make_link_url(apr_pool_t *pool, const cp_links *links, const char *token)
{
    apr_size_t path_len = strlen(links->path), token_len = token ? strlen(token) : 0;
    apr_size_t format_len = links->format ? strlen(links->format) : 0, len;
    char *url, *o;

    if (!token && links->limit <= 0 && !links->format) {
        return links->path;
    }
    /* "PATH?start=TOKEN&limit=N&format=FORMAT", a byte escaped three */
    o = url = apr_palloc(pool, path_len + sizeof("?start=") + 3 * token_len + LIMIT_ROOM
                         + sizeof("&format=") + 3 * format_len);
    memcpy(o, links->path, path_len);
    o += path_len;
    *o++ = '?';
    if (token) {
        memcpy(o, "start=", 6);
        apr_escape_urlencoded(o + 6, token, APR_ESCAPE_STRING, &len);
        o += 6 + len - 1;
    }
    if (links->limit > 0) {
        o += apr_snprintf(o, LIMIT_ROOM, "%slimit=%d", token ? "&" : "", links->limit);
    }
    if (links->format) {
        if (token || links->limit > 0) {
            *o++ = '&';
        }
        memcpy(o, "format=", 7);
        apr_escape_urlencoded(o + 7, links->format, APR_ESCAPE_STRING, &len);
        o += 7 + len - 1;
    }
    *o = '\0';
    return url;
}

const char *cp_link_url(apr_pool_t *pool, const cp_links *links, const char *token)
{
    cp_link_made *made = links->made;
    int i;

    for (i = 0; token && made && i < CP_LINKS_MADE && made[i].token; i++) {
        if (!strcmp(made[i].token, token)) {
            return made[i].url;
        }
    }
    if (token && made && i < CP_LINKS_MADE) {
        made[i].token = apr_pstrdup(pool, token);
        return made[i].url = make_link_url(pool, links, token);
    }
    return make_link_url(pool, links, token);
}

const char *cp_prev_url(apr_pool_t *pool, const cp_links *links, const cp_page *page)
{
    int has_prev = page->prev || (page->withheld & CP_WITHHELD_PREV);

    /* the first page's link needs no token, one left out included */
    if (has_prev && page->prev_is_first) {
        return cp_link_url(pool, links, NULL);
    }
    return page->prev ? cp_link_url(pool, links, page->prev) : NULL;
}

/* The JSON page is written in one pass into one buffer: spans of
 * CouchDB's answers as they are, the page's own strings as JSON string
 * literals, and the syntax around them. Every byte is HTML-safe: < > &
 * written as \u003c \u003e \u0026, which can only occur inside strings (as
 * cp_json_text_html_safe writes the error bodies). */
typedef struct {
    cp_text out;                   /* the body so far */
    apr_array_header_t *revisions; /* cp_etag_revision; NULL: not wanted */
} json_body;

/* CouchDB's bytes are copied this many at a time, each time with room for
 * every one of them escaped (6 bytes), so that they are read only once. */
#define SPAN_BLOCK 1024

/* What a page's body is first given room for: its rows' bytes, the syntax
 * and strings around them, and a block's escapes; rarely outgrown (by many
 * < > & in its rows, or long tokens). */
static apr_size_t page_room(const cp_page *page)
{
    apr_size_t room = 1024 + 6 * SPAN_BLOCK + 512 * (apr_size_t)page->pages->nelts;
    int p;

    for (p = 0; p < page->rows->nelts; p++) {
        const cp_row *row = APR_ARRAY_IDX(page->rows, p, const cp_row *);

        room += 40 + row->id_text.len + row->key_text.len + row->value.len + row->doc.len;
    }
    return room;
}

static void add_syntax(json_body *body, const char *text, apr_size_t len)
{
    cp_text_add(&body->out, text, len);
}

static void add_span(json_body *body, cp_span span)
{
    apr_size_t done, n;

    for (done = 0; done < span.len; done += n) {
        char *start;

        n = span.len - done < SPAN_BLOCK ? span.len - done : SPAN_BLOCK;
        start = cp_text_room(&body->out, 6 * n);
        body->out.len += (apr_size_t)(cp_json_copy_html_safe(start, span.text + done, n) - start);
    }
}

/* What a string literal's character becomes beyond itself: the escapes
 * jansson's writer uses (\" \\ \b \f \n \r \t, else \u00XX for the other
 * control characters), and the HTML-safe \u003c \u003e \u0026. UTF-8 is
 * written as it is. */
static const char *string_escape(unsigned char c)
{
    static const char *const controls[32] = {
        "\\u0000", "\\u0001", "\\u0002", "\\u0003", "\\u0004", "\\u0005", "\\u0006",
        "\\u0007", "\\b", "\\t", "\\n", "\\u000B", "\\f", "\\r", "\\u000E", "\\u000F",
        "\\u0010", "\\u0011", "\\u0012", "\\u0013", "\\u0014", "\\u0015", "\\u0016",
        "\\u0017", "\\u0018", "\\u0019", "\\u001A", "\\u001B", "\\u001C", "\\u001D",
        "\\u001E", "\\u001F"
    };

    if (c < 32) {
        return controls[c];
    }
    switch (c) {
    case '"': return "\\\"";
    case '\\': return "\\\\";
    case '<': return "\\u003c";
    case '>': return "\\u003e";
    case '&': return "\\u0026";
    default: return NULL;
    }
}

/* A string as a JSON string literal, or null without one. Strings here are
 * tokens and URLs: JSON text or URL-escaped, always UTF-8. */
static void add_string(json_body *body, const char *text)
{
    apr_size_t len, i;
    char *o;

    if (!text) {
        add_syntax(body, "null", 4);
        return;
    }
    len = strlen(text);
    o = cp_text_room(&body->out, 6 * len + 2);
    *o++ = '"';
    for (i = 0; i < len; i++) {
        unsigned char c = (unsigned char)text[i];
        const char *escape;

        if (c >= 32 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&') {
            /* most bytes of a token or a URL: as they are */
            *o++ = (char)c;
            continue;
        }
        escape = string_escape(c);
        memcpy(o, escape, strlen(escape));
        o += strlen(escape);
    }
    *o++ = '"';
    body->out.len = (apr_size_t)(o - body->out.text);
}

static void add_integer(json_body *body, apr_int64_t n)
{
    char digits[24], *end = digits + sizeof(digits), *d = end;
    apr_uint64_t u = n < 0 ? -(apr_uint64_t)n : (apr_uint64_t)n;

    do {
        *--d = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (n < 0) {
        *--d = '-';
    }
    add_syntax(body, d, (apr_size_t)(end - d));
}

#define ADD(text) add_syntax(body, (text), sizeof(text) - 1)

/* A row's document as the page shows it: reduced to fields when given,
 * else copied whole, and then, with a string _id and _rev, noted for the
 * ETag to digest those in place of its bytes (cp_render_etag). */
static void add_document(json_body *body, const cp_row *row, const apr_array_header_t *fields)
{
    apr_size_t from = body->out.len;
    cp_span id, rev;
    cp_etag_revision *noted;

    if (fields && row->doc.text[0] == '{') {
        add_span(body, cp_row_project(body->out.pool, row, fields));
        return;
    }
    add_span(body, row->doc);
    if (!body->revisions || row->doc.text[0] != '{') {
        return;
    }
    id = cp_row_find(row, row->doc, "_id");
    rev = cp_row_find(row, row->doc, "_rev");
    if (id.len && id.text[0] == '"' && rev.len && rev.text[0] == '"') {
        noted = apr_array_push(body->revisions);
        noted->from = from;
        noted->to = body->out.len;
        noted->id = id;
        noted->rev = rev;
    }
}

/* A row as the client sees it: {"id", "key", "value", "doc"} as CouchDB
 * sent them (grouped rows have no id, and no doc without include_docs; a
 * row without a value has null), the doc reduced to fields when given; a
 * _find location's row is its document, reduced likewise (docs_as_items). */
static void add_item(json_body *body, const cp_row *row, const apr_array_header_t *fields,
                     int docs_as_items)
{
    if (docs_as_items) {
        add_document(body, row, fields);
        return;
    }
    if (row->id_text.len) {
        ADD("{\"id\":");
        add_span(body, row->id_text);
        ADD(",\"key\":");
    }
    else {
        ADD("{\"key\":");
    }
    add_span(body, row->key_text);
    ADD(",\"value\":");
    if (row->value.len) {
        add_span(body, row->value);
    }
    else {
        ADD("null");
    }
    if (row->doc.len) {
        ADD(",\"doc\":");
        add_document(body, row, fields);
    }
    ADD("}");
}

/* The Last page is known by its number: numbered, and its count no lower
 * bound. */
static int last_numbered(const cp_page *page)
{
    return page->has_last && page->numbered && !page->count_at_least;
}

/* The page's own members, after the items: see cp_render_json. */
static void add_members(json_body *body, const cp_page *page, const cp_links *links)
{
    apr_pool_t *pool = body->out.pool;
    int p;

    ADD(",\"next\":");
    add_string(body, page->next);
    ADD(",\"prev\":");
    add_string(body, page->prev);
    ADD(",\"links\":{\"next\":");
    add_string(body, page->next ? cp_link_url(pool, links, page->next) : NULL);
    ADD(",\"prev\":");
    add_string(body, cp_prev_url(pool, links, page));
    ADD(",\"first\":");
    add_string(body, cp_link_url(pool, links, NULL));
    if (page->has_last) {
        ADD(",\"last\":");
        add_string(body, cp_link_url(pool, links, page->last));
    }
    ADD("}");
    if (page->withheld) {
        ADD(",\"withheld\":[");
        if (page->withheld & CP_WITHHELD_NEXT) {
            ADD("\"next\"");
        }
        if (page->withheld == (CP_WITHHELD_NEXT | CP_WITHHELD_PREV)) {
            ADD(",");
        }
        if (page->withheld & CP_WITHHELD_PREV) {
            ADD("\"prev\"");
        }
        ADD("]");
    }
    for (p = 0; p < page->pages->nelts; p++) {
        const cp_page_link *link = &APR_ARRAY_IDX(page->pages, p, cp_page_link);

        if (p == 0) {
            ADD(",\"pages\":[{\"number\":");
        }
        else {
            ADD(",{\"number\":");
        }
        add_integer(body, link->number);
        ADD(",\"start\":");
        add_string(body, link->start);
        if (link->current) {
            ADD(",\"current\":true,\"url\":");
        }
        else {
            ADD(",\"current\":false,\"url\":");
        }
        add_string(body, link->withheld ? NULL : cp_link_url(pool, links, link->start));
        if (p == page->pages->nelts - 1) {
            ADD("}]");
        }
        else {
            ADD("}");
        }
    }
    if (page->numbered) {
        ADD(",\"numbering\":\"absolute\"");
    }
    else {
        ADD(",\"numbering\":\"relative\"");
    }
    /* rows written since the walk began (couchpage_changed); left out
     * where the page cannot tell */
    if (page->changed == CP_CHANGED_YES) {
        ADD(",\"changed\":true");
    }
    else if (page->changed == CP_CHANGED_NO) {
        ADD(",\"changed\":false");
    }
    if (page->total_rows >= 0) {
        ADD(",\"total_rows\":");
        add_integer(body, page->total_rows);
        /* a numbered page's total: exact, or at least it (a capped count);
         * counted by an earlier page of the walk, whose token carried it */
        if (page->numbered) {
            if (page->count_changed) {
                /* counted by an earlier page, before rows were written */
                ADD(",\"count\":\"out of date\"");
            }
            else if (page->count_at_least) {
                ADD(",\"count\":\"at least\"");
            }
            else {
                ADD(",\"count\":\"exact\"");
            }
        }
        if (page->count_earlier) {
            ADD(",\"count_as_of\":\"an earlier page\"");
        }
    }
    if (page->offset >= 0) {
        ADD(",\"offset\":");
        add_integer(body, page->offset);
        if (page->rows->nelts > 0) {
            ADD(",\"first_row\":");
            add_integer(body, page->offset + 1);
            ADD(",\"last_row\":");
            add_integer(body, page->offset + page->rows->nelts);
        }
    }
    /* a _find page knows its Last page, not its number */
    if (last_numbered(page)) {
        ADD(",\"last_page\":");
        add_integer(body, page->last_number);
    }
}

const char *cp_render_json(apr_pool_t *pool, const cp_page *page, const cp_links *links,
                           const apr_array_header_t *fields,
                           const apr_array_header_t **revisions)
{
    json_body body_of_page, *body = &body_of_page;
    int p;

    body->out.pool = pool;
    body->revisions = revisions ? apr_array_make(pool, page->rows->nelts + 1,
                                                 sizeof(cp_etag_revision)) : NULL;
    body->out.size = page_room(page);
    body->out.text = apr_palloc(pool, body->out.size);
    body->out.len = 0;
    ADD("{\"items\":[");
    for (p = 0; p < page->rows->nelts; p++) {
        if (p > 0) {
            ADD(",");
        }
        add_item(body, APR_ARRAY_IDX(page->rows, p, const cp_row *), fields,
                 page->docs_as_items);
    }
    ADD("]");
    add_members(body, page, links);
    ADD("}");
    *cp_text_room(&body->out, 0) = '\0';
    if (revisions) {
        *revisions = body->revisions;
    }
    return body->out.text;
}

#undef ADD

static const char *html(apr_pool_t *pool, const char *text)
{
    return cp_html_text(pool, text, strlen(text));
}

const char *const cp_word_names[CP_WORD_COUNT] = {
    "first", "previous", "next", "last", "of", "empty", "nav-label", "current", "thousands",
    "error", "page", "more", "counted-earlier", "jump", "go", "changed", "counted-before-change"
};

const char *const cp_word_defaults[CP_WORD_COUNT] = {
    "First", "Previous", "Next", "Last", "of", "No items.", "Pages", "current", ",",
    "The list could not be shown.", "Page", "Load more", "(as counted earlier)", "Go to page",
    "Go", "The list has changed since you began.", "(counted before the list changed)"
};

const char *cp_word_check(apr_pool_t *pool, const char *name, const char *text, int *which)
{
    const char *known = cp_word_names[0];
    int i;

    for (i = 0; i < CP_WORD_COUNT; i++) {
        if (strcasecmp(name, cp_word_names[i]) == 0) {
            *which = i;
            /* cp_json_quote refuses exactly the text that is not UTF-8 */
            return cp_json_quote(pool, text) ? NULL
                   : apr_psprintf(pool, "the text for %s is not valid UTF-8", cp_word_names[i]);
        }
    }
    for (i = 1; i < CP_WORD_COUNT; i++) {
        known = apr_pstrcat(pool, known, ", ", cp_word_names[i], NULL);
    }
    return apr_psprintf(pool, "'%s' is not a word of the fragment; the words are %s", name,
                        known);
}

const char *cp_render_fields_parse(apr_pool_t *pool, apr_array_header_t *words,
                                   apr_array_header_t **fields, const char **about)
{
    int i, j;

    *fields = NULL;
    *about = NULL;
    for (i = 0; i < words->nelts; i++) {
        const char *name = APR_ARRAY_IDX(words, i, const char *);
        const char *fault = NULL;

        if (!strcmp(name, "*")) {
            return words->nelts == 1 ? NULL : "* (every member) stands alone";
        }
        /* cp_json_quote refuses exactly the text that is not UTF-8 */
        if (!cp_json_quote(pool, name)) {
            fault = "is not valid UTF-8";
        }
        for (j = 0; !fault && j < i; j++) {
            if (!strcmp(APR_ARRAY_IDX(words, j, const char *), name)) {
                fault = "is named twice";
            }
        }
        if (fault) {
            *about = name;
            return fault;
        }
    }
    *fields = words;
    return NULL;
}

/* A word of the fragment, escaped. */
static const char *word(apr_pool_t *pool, const cp_html_spec *spec, cp_word which)
{
    const char *text = spec->words && spec->words[which] ? spec->words[which]
                                                         : cp_word_defaults[which];
    return cp_html_text(pool, text, strlen(text));
}

static const char *item_html(apr_pool_t *pool, const cp_row *row, const cp_item_spec *item,
                             const apr_array_header_t *fields)
{
    apr_size_t len = 0;
    const char *text = item->field ? NULL : cp_field_text(pool, cp_row_key(row), &len);
    const char *shown = item->field
                      ? cp_field_show(pool, CP_SHOW_HTML, item->field, row, fields)
                      : text ? cp_html_text(pool, text, len) : "";

    if (item->link) {
        return apr_pstrcat(pool, "<a href=\"",
                           html(pool, cp_pattern_expand(pool, item->link, row, fields)),
                           "\">", shown, "</a>", NULL);
    }
    return shown;
}

/* A number as the fragment shows it: the digits of n (not negative) in
 * groups of three from the right, separator (HTML) between them, as
 * "100,000". */
static const char *number_html(apr_pool_t *pool, apr_int64_t n, const char *separator)
{
    char digits[32];
    apr_size_t len = (apr_size_t)apr_snprintf(digits, sizeof(digits), "%" APR_UINT64_T_FMT,
                                              (apr_uint64_t)(n < 0 ? 0 : n));
    apr_size_t sep_len = strlen(separator), i;
    char *out = apr_palloc(pool, len + (len - 1) / 3 * sep_len + 1), *o = out;

    for (i = 0; i < len; i++) {
        if (i > 0 && (len - i) % 3 == 0) {
            memcpy(o, separator, sep_len);
            o += sep_len;
        }
        *o++ = digits[i];
    }
    *o = '\0';
    return out;
}

/* A row number of the position, in the fragment's <p> marked by class
 * (couchpage-first-row, couchpage-last-row) for couchpage.js: after Load
 * more it joins the first page's first row to the last page's last
 * ("1–60 of 1,000", not the last page's "41–60"); plain in the
 * announcement. */
static const char *row_number(apr_pool_t *pool, const char *number, const char *class,
                              int marked)
{
    return marked ? apr_pstrcat(pool, "<span class=\"", class, "\">", number, "</span>", NULL)
                  : number;
}

/* "11–15 of 42" ("11 of 42" for one row), when CouchDB's offset is the
 * page's true position; else NULL. marked: its row numbers in spans, as
 * row_number says. */
static const char *position_text(apr_pool_t *pool, const cp_page *page,
                                 const cp_html_spec *spec, const char *separator, int marked)
{
    apr_int64_t offset = page->offset, total = page->total_rows;
    apr_int64_t n = page->rows->nelts;
    const char *rows;

    if (offset < 0 || total < 0) {
        return NULL;
    }
    rows = n == 0 ? "0"
         : n == 1 ? row_number(pool, number_html(pool, offset + 1, separator),
                               "couchpage-first-row couchpage-last-row", marked)
         : apr_pstrcat(pool, row_number(pool, number_html(pool, offset + 1, separator),
                                        "couchpage-first-row", marked),
                       "\xe2\x80\x93",
                       row_number(pool, number_html(pool, offset + n, separator),
                                  "couchpage-last-row", marked), NULL);
    return apr_pstrcat(pool, rows, " ", word(pool, spec, CP_WORD_OF), " ",
                       number_html(pool, total, separator), page->count_at_least ? "+" : "",
                       page->count_earlier ? " " : "",
                       page->count_earlier ? word(pool, spec, page->count_changed
                                                  ? CP_WORD_COUNTED_BEFORE_CHANGE
                                                  : CP_WORD_COUNTED_EARLIER) : "",
                       NULL);
}

/* The page's announcement for couchpage.js's live region: "Page 3,
 * 41–60 of 1,000", its number where the page list numbers it, its position
 * where known; NULL when neither is. */
static const char *status_text(apr_pool_t *pool, const cp_page *page, const cp_html_spec *spec,
                               const char *position, const char *separator)
{
    const char *number = NULL;
    int p;

    for (p = 0; page->numbered && p < page->pages->nelts; p++) {
        const cp_page_link *link = &APR_ARRAY_IDX(page->pages, p, cp_page_link);

        if (link->current) {
            number = apr_pstrcat(pool, word(pool, spec, CP_WORD_PAGE), " ",
                                 number_html(pool, link->number, separator), NULL);
        }
    }
    if (number && position) {
        number = apr_pstrcat(pool, number, ", ", position, NULL);
    }
    else if (!number) {
        number = position;
    }
    /* rows written since the walk began: said in words, announced too */
    if (page->changed == CP_CHANGED_YES) {
        number = apr_pstrcat(pool, number ? number : "", number ? ". " : "",
                             word(pool, spec, CP_WORD_CHANGED), NULL);
    }
    return number;
}

static const char *page_label(apr_pool_t *pool, const cp_page *page, const cp_page_link *link,
                              const cp_html_spec *spec, const char *separator)
{
    if (page->numbered) {
        return number_html(pool, link->number, separator);
    }
    if (link->current) {
        return word(pool, spec, CP_WORD_CURRENT);
    }
    /* relative numbers: U+2212 minus sign, or a plus */
    return apr_pstrcat(pool, link->number < 0 ? "\xe2\x88\x92" : "+",
                       number_html(pool, link->number < 0 ? -link->number : link->number,
                                   separator), NULL);
}

#define GAP "<li class=\"couchpage-gap\" aria-hidden=\"true\">\xe2\x80\xa6</li>\n"

/* A page list's link to the first or the last page, by its number. */
static const char *numbered_link(apr_pool_t *pool, const cp_links *links, const char *start,
                                 apr_int64_t number, const char *rel, const char *separator)
{
    return apr_pstrcat(pool, "<li><a rel=\"", rel, "\" href=\"",
                       html(pool, cp_link_url(pool, links, start)), "\">",
                       number_html(pool, number, separator), "</a></li>\n", NULL);
}

/* A page list's entry: a link, or, for the page shown, its label alone
 * (a link to the page one is on leads nowhere). */
static const char *page_entry(apr_pool_t *pool, const cp_page *page, const cp_links *links,
                              const cp_page_link *link, const cp_html_spec *spec,
                              const char *separator)
{
    const char *label = page_label(pool, page, link, spec, separator);

    if (link->current) {
        return apr_pstrcat(pool, "<li><span aria-current=\"page\">", label, "</span></li>\n",
                           NULL);
    }
    if (link->withheld) {
        return apr_pstrcat(pool, "<li><span class=\"couchpage-withheld\">", label,
                           "</span></li>\n", NULL);
    }
    return apr_pstrcat(pool, "<li><a href=\"", html(pool, cp_link_url(pool, links, link->start)),
                       "\">", label, "</a></li>\n", NULL);
}

/* A link of the nav, or without url a disabled span: couchpage-withheld
 * when there is such a page, but its token was left out. */
static const char *nav_link(apr_pool_t *pool, const char *rel, const char *label,
                            const char *url, int withheld)
{
    if (!url) {
        return apr_pstrcat(pool, "<span class=\"couchpage-", rel, " couchpage-disabled",
                           withheld ? " couchpage-withheld" : "",
                           "\" aria-disabled=\"true\">", label, "</span>\n", NULL);
    }
    return apr_pstrcat(pool, "<a class=\"couchpage-", rel, "\" rel=\"", rel, "\" href=\"",
                       html(pool, url), "\">", label, "</a>\n", NULL);
}

/* The go-to-page form of a numbered page list: a GET of the page's own
 * path with page=N (and the limit and format its links keep), which works
 * without script; the label holds the field. */
static const char *jump_form(apr_pool_t *pool, const cp_page *page, const cp_links *links,
                             const cp_html_spec *spec)
{
    return apr_pstrcat(pool, "<form class=\"couchpage-jump\" method=\"get\" action=\"",
                       html(pool, links->path), "\">\n<label>",
                       word(pool, spec, CP_WORD_JUMP), " <input type=\"number\" name=\"page\" "
                       "min=\"1\" max=\"", apr_ltoa(pool, (long)page->last_number),
                       "\" step=\"1\" required></label>\n",
                       links->limit > 0 ? apr_psprintf(pool, "<input type=\"hidden\" "
                                                       "name=\"limit\" value=\"%d\">\n",
                                                       links->limit) : "",
                       links->format ? apr_pstrcat(pool, "<input type=\"hidden\" name=\"format\" "
                                                   "value=\"", html(pool, links->format),
                                                   "\">\n", NULL) : "",
                       "<button type=\"submit\">", word(pool, spec, CP_WORD_GO),
                       "</button>\n</form>\n", NULL);
}

const char *cp_render_html(apr_pool_t *pool, const cp_page *page, const cp_links *links,
                           const cp_html_spec *spec, const char **error)
{
    apr_array_header_t *out = apr_array_make(pool, 16 + 3 * page->rows->nelts,
                                             sizeof(const char *));
    const char *separator = word(pool, spec, CP_WORD_THOUSANDS);
    const char *position = position_text(pool, page, spec, separator, 1);
    const char *status = status_text(pool, page, spec,
                                     position_text(pool, page, spec, separator, 0), separator);
    int p;

#define EMIT(s) (APR_ARRAY_PUSH(out, const char *) = (s))
    /* the words and the announcement couchpage.js needs ride on the fragment */
    EMIT(apr_pstrcat(pool, "<div class=\"couchpage\"",
                     status ? apr_pstrcat(pool, " data-couchpage-status=\"", status, "\"", NULL)
                            : "",
                     " data-couchpage-more-label=\"", word(pool, spec, CP_WORD_MORE), "\">\n",
                     NULL));
    if (page->rows->nelts == 0) {
        EMIT(apr_pstrcat(pool, "<p class=\"couchpage-empty\">",
                         word(pool, spec, CP_WORD_EMPTY), "</p>\n", NULL));
    }
    else {
        EMIT("<ul class=\"couchpage-items\">\n");
        for (p = 0; p < page->rows->nelts; p++) {
            const cp_row *row = APR_ARRAY_IDX(page->rows, p, const cp_row *);
            const char *inner = spec->render_item
                              ? spec->render_item(spec->baton, pool, row, error)
                              : page->docs_as_items && !spec->item->field
                              ? cp_item_find_default(pool, row, spec->fields)
                              : item_html(pool, row, spec->item, spec->fields);

            if (!inner) {
                return NULL;
            }
            EMIT("<li class=\"couchpage-item\">");
            EMIT(inner);
            EMIT("</li>\n");
        }
        EMIT("</ul>\n");
    }
    if (position) {
        EMIT(apr_pstrcat(pool, "<p class=\"couchpage-position\">", position, "</p>\n", NULL));
    }
    if (page->changed == CP_CHANGED_YES) {
        EMIT(apr_pstrcat(pool, "<p class=\"couchpage-changed\">",
                         word(pool, spec, CP_WORD_CHANGED), "</p>\n", NULL));
    }
    EMIT(apr_pstrcat(pool, "<nav class=\"couchpage-nav\" aria-label=\"",
                     word(pool, spec, CP_WORD_NAV_LABEL), "\">\n", NULL));
    /* without page links, the first page has a link of its own */
    if (page->pages->nelts == 0) {
        EMIT(nav_link(pool, "first", word(pool, spec, CP_WORD_FIRST),
                      page->prev || (page->withheld & CP_WITHHELD_PREV)
                      ? cp_link_url(pool, links, NULL) : NULL, 0));
    }
    EMIT(nav_link(pool, "prev", word(pool, spec, CP_WORD_PREVIOUS),
                  cp_prev_url(pool, links, page), page->withheld & CP_WITHHELD_PREV));
    if (page->pages->nelts > 0) {
        EMIT("<ol class=\"couchpage-pages\">\n");
        for (p = 0; p < page->pages->nelts; p++) {
            const cp_page_link *link = &APR_ARRAY_IDX(page->pages, p, cp_page_link);

            /* absolute numbers: page 1 always linked, a gap shown */
            if (p == 0 && page->numbered && link->number > 1) {
                EMIT(numbered_link(pool, links, NULL, 1, "first", separator));
                EMIT(link->number > 2 ? GAP : "");
            }
            EMIT(page_entry(pool, page, links, link, spec, separator));
            /* and the last page, when it is known */
            if (p == page->pages->nelts - 1 && last_numbered(page)
                && link->number < page->last_number) {
                EMIT(link->number < page->last_number - 1 ? GAP : "");
                EMIT(numbered_link(pool, links, page->last, page->last_number, "last",
                                   separator));
            }
        }
        EMIT("</ol>\n");
    }
    EMIT(nav_link(pool, "next", word(pool, spec, CP_WORD_NEXT),
                  page->next ? cp_link_url(pool, links, page->next) : NULL,
                  page->withheld & CP_WITHHELD_NEXT));
    /* without page links, or with links numbered relative to this page (a
     * _find page's Last page has no number), the last page has a link of
     * its own, but on the last page itself */
    if (page->has_last && (page->pages->nelts == 0 || !last_numbered(page))) {
        EMIT(nav_link(pool, "last", word(pool, spec, CP_WORD_LAST),
                      page->last_is_current ? NULL : cp_link_url(pool, links, page->last), 0));
    }
    if (page->pages->nelts > 0 && page->numbered && page->has_last && page->last_number > 1) {
        EMIT(jump_form(pool, page, links, spec));
    }
    EMIT("</nav>\n</div>\n");
#undef EMIT
    return apr_array_pstrcat(pool, out, 0);
}

const char *cp_render_html_error(apr_pool_t *pool, const char *const *words)
{
    const cp_html_spec spec = { NULL, NULL, NULL, words, NULL };

    return apr_pstrcat(pool, "<div class=\"couchpage couchpage-error\">\n"
                       "<p class=\"couchpage-error-reason\">", word(pool, &spec, CP_WORD_ERROR),
                       "</p>\n</div>\n", NULL);
}

const char *cp_render_error(apr_pool_t *pool, const char *error, const char *reason)
{
    json_t *body = cp_json_pool_own(pool, json_object());

    json_object_set_new(body, "error", json_string(error));
    json_object_set_new(body, "reason", json_string(reason));
    return cp_json_text_html_safe(pool, body);
}

/* OpenSSL's SHA-1, fetched once for the process: EVP_sha1() makes every
 * digest fetch it again, a lookup in OpenSSL's tables under its locks that
 * cost more than the digest of a small page. NULL when libcrypto has none. */
static const EVP_MD *page_digest(void)
{
    static volatile void *fetched; /* the process's, until it exits */
    void *md = apr_atomic_casptr(&fetched, NULL, NULL);

    if (!md && (md = EVP_MD_fetch(NULL, "SHA1", NULL)) != NULL) {
        /* threads that fetch at once: the first one's is kept */
        void *first = apr_atomic_casptr(&fetched, md, NULL);

        if (first) {
            EVP_MD_free(md);
            md = first;
        }
    }
    return md;
}

/* Digests what cp_render_etag says (revisions may be NULL) into digest;
 * 0 when libcrypto fails. OpenSSL's SHA-1 uses the processor's SHA
 * instructions where it has them. */
static int digest_page(const char *body, const apr_array_header_t *revisions,
                       unsigned char *digest, unsigned int *len)
{
    const EVP_MD *sha1 = page_digest();
    EVP_MD_CTX *context = sha1 ? EVP_MD_CTX_new() : NULL;
    apr_size_t done = 0;
    int i, ok;

    ok = context && EVP_DigestInit_ex2(context, sha1, NULL);
    for (i = 0; ok && revisions && i < revisions->nelts; i++) {
        const cp_etag_revision *doc = &APR_ARRAY_IDX(revisions, i, cp_etag_revision);

        ok = EVP_DigestUpdate(context, body + done, doc->from - done)
             && EVP_DigestUpdate(context, "", 1)
             && EVP_DigestUpdate(context, doc->id.text, doc->id.len)
             && EVP_DigestUpdate(context, "", 1)
             && EVP_DigestUpdate(context, doc->rev.text, doc->rev.len)
             && EVP_DigestUpdate(context, "", 1);
        done = doc->to;
    }
    ok = ok && EVP_DigestUpdate(context, body + done, strlen(body + done))
         && EVP_DigestFinal_ex(context, digest, len);
    EVP_MD_CTX_free(context);
    return ok;
}

const char *cp_render_etag(apr_pool_t *pool, const char *body,
                           const apr_array_header_t *revisions)
{
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    int weak = revisions && revisions->nelts > 0;

    if (!digest_page(body, revisions, digest, &len)) {
        return NULL;
    }
    return apr_pstrcat(pool, weak ? "W/\"" : "\"",
                       apr_pencode_base64_binary(pool, digest, len, APR_ENCODE_BASE64URL, NULL),
                       "\"", NULL);
}
