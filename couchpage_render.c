/* SPDX-License-Identifier: Apache-2.0 */
/*
 * couchpage_render.c: a page written out as JSON or as the HTML fragment,
 * its links and ETag, and the error bodies. Part of the httpd-free core: no
 * httpd header, no request_rec; the glue sends what it writes.
 */
#include "couchpage_render.h"
#include "couchpage_json.h"

#include <apr_encode.h>
#include <apr_escape.h>
#include <openssl/evp.h>
#include <apr_strings.h>
#include <string.h>
#include <strings.h>

const char *cp_link_url(apr_pool_t *pool, const cp_links *links, const char *token)
{
    apr_array_header_t *args = apr_array_make(pool, 3, sizeof(const char *));

    if (token) {
        APR_ARRAY_PUSH(args, const char *) =
            apr_pstrcat(pool, "start=", apr_pescape_urlencoded(pool, token), NULL);
    }
    if (links->limit > 0) {
        APR_ARRAY_PUSH(args, const char *) = apr_psprintf(pool, "limit=%d", links->limit);
    }
    if (links->format) {
        APR_ARRAY_PUSH(args, const char *) =
            apr_pstrcat(pool, "format=", apr_pescape_urlencoded(pool, links->format), NULL);
    }
    if (args->nelts == 0) {
        return links->path;
    }
    return apr_pstrcat(pool, links->path, "?", apr_array_pstrcat(pool, args, '&'), NULL);
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

static json_t *string_or_null(const char *text)
{
    return text ? json_string(text) : json_null();
}

/* Pieces of a body, joined once: spans of CouchDB's answers go into the
 * page as they are, with < > & written as \u003c \u003e \u0026 (they can
 * only occur inside strings), as the page's own members are (see
 * cp_json_text_html_safe). */
typedef struct {
    const char *text;
    apr_size_t len;
    apr_size_t specials; /* its < > & */
} body_piece;

static void add_piece(apr_array_header_t *pieces, const char *text, apr_size_t len,
                      apr_size_t *size)
{
    body_piece *piece = apr_array_push(pieces);

    piece->text = text;
    piece->len = len;
    piece->specials = cp_json_html_specials(text, len);
    *size += len + 5 * piece->specials;
}

static const char *join_pieces(apr_pool_t *pool, const apr_array_header_t *pieces,
                               apr_size_t size)
{
    char *out = apr_palloc(pool, size + 1), *o = out;
    int p;

    for (p = 0; p < pieces->nelts; p++) {
        const body_piece *piece = &APR_ARRAY_IDX(pieces, p, body_piece);

        if (piece->specials) {
            o = cp_json_copy_html_safe(o, piece->text, piece->len);
        }
        else {
            memcpy(o, piece->text, piece->len);
            o += piece->len;
        }
    }
    *o = '\0';
    return out;
}

#define ADD(text) add_piece(pieces, (text), sizeof(text) - 1, &size)
#define ADD_SPAN(span) add_piece(pieces, (span).text, (span).len, &size)

/* A row as the client sees it: {"id", "key", "value", "doc"} as CouchDB
 * sent them (grouped rows have no id, and no doc without include_docs; a
 * row without a value has null), the doc reduced to fields when given. */
static void add_item(apr_pool_t *pool, apr_array_header_t *pieces, apr_size_t *sizep,
                     const cp_row *row, const apr_array_header_t *fields)
{
    apr_size_t size = *sizep;

    if (row->id_text.len) {
        ADD("{\"id\":");
        ADD_SPAN(row->id_text);
        ADD(",\"key\":");
    }
    else {
        ADD("{\"key\":");
    }
    ADD_SPAN(row->key_text);
    ADD(",\"value\":");
    if (row->value.len) {
        ADD_SPAN(row->value);
    }
    else {
        ADD("null");
    }
    if (row->doc.len) {
        ADD(",\"doc\":");
        if (fields && row->doc.text[0] == '{') {
            ADD_SPAN(cp_row_project(pool, row, fields));
        }
        else {
            ADD_SPAN(row->doc);
        }
    }
    ADD("}");
    *sizep = size;
}

const char *cp_render_json(apr_pool_t *pool, const cp_page *page, const cp_links *links,
                           const apr_array_header_t *fields)
{
    json_t *body = cp_json_pool_own(pool, json_object());
    json_t *link_urls = json_object();
    apr_array_header_t *pieces = apr_array_make(pool, 8 * page->rows->nelts + 4,
                                                sizeof(body_piece));
    apr_size_t size = 0;
    const char *members;
    int p;

    /* the page's own members, written by jansson; the items before them */
    json_object_set_new(body, "next", string_or_null(page->next));
    json_object_set_new(body, "prev", string_or_null(page->prev));
    json_object_set_new(link_urls, "next", string_or_null(
        page->next ? cp_link_url(pool, links, page->next) : NULL));
    json_object_set_new(link_urls, "prev", string_or_null(cp_prev_url(pool, links, page)));
    json_object_set_new(link_urls, "first", json_string(cp_link_url(pool, links, NULL)));
    if (page->has_last) {
        json_object_set_new(link_urls, "last", json_string(cp_link_url(pool, links, page->last)));
    }
    json_object_set_new(body, "links", link_urls);
    if (page->withheld) {
        json_t *withheld = json_array();

        if (page->withheld & CP_WITHHELD_NEXT) {
            json_array_append_new(withheld, json_string("next"));
        }
        if (page->withheld & CP_WITHHELD_PREV) {
            json_array_append_new(withheld, json_string("prev"));
        }
        json_object_set_new(body, "withheld", withheld);
    }
    if (page->pages->nelts > 0) {
        json_t *pages = json_array();

        for (p = 0; p < page->pages->nelts; p++) {
            const cp_page_link *link = &APR_ARRAY_IDX(page->pages, p, cp_page_link);

            json_array_append_new(pages, json_pack("{s:I, s:o, s:b, s:o}",
                "number", (json_int_t)link->number, "start", string_or_null(link->start),
                "current", link->current, "url", string_or_null(
                    link->withheld ? NULL : cp_link_url(pool, links, link->start))));
        }
        json_object_set_new(body, "pages", pages);
    }
    json_object_set_new(body, "numbering", json_string(page->numbered ? "absolute" : "relative"));
    if (page->total_rows >= 0) {
        json_object_set_new(body, "total_rows", json_integer(page->total_rows));
    }
    if (page->offset >= 0) {
        json_object_set_new(body, "offset", json_integer(page->offset));
        if (page->rows->nelts > 0) {
            json_object_set_new(body, "first_row", json_integer(page->offset + 1));
            json_object_set_new(body, "last_row", json_integer(page->offset
                                                               + page->rows->nelts));
        }
    }
    if (page->has_last) {
        json_object_set_new(body, "last_page", json_integer(page->last_number));
    }
    members = cp_json_text(pool, body);

    ADD("{\"items\":[");
    for (p = 0; p < page->rows->nelts; p++) {
        if (p > 0) {
            ADD(",");
        }
        add_item(pool, pieces, &size, APR_ARRAY_IDX(page->rows, p, const cp_row *), fields);
    }
    ADD("],");
    /* the members' object without its opening brace */
    add_piece(pieces, members + 1, strlen(members + 1), &size);
    return join_pieces(pool, pieces, size);
}

static const char *html(apr_pool_t *pool, const char *text)
{
    return cp_html_text(pool, text, strlen(text));
}

const char *const cp_word_names[CP_WORD_COUNT] = {
    "first", "previous", "next", "last", "of", "empty", "nav-label", "current", "thousands",
    "error", "page", "more"
};

const char *const cp_word_defaults[CP_WORD_COUNT] = {
    "First", "Previous", "Next", "Last", "of", "No items.", "Pages", "current", ",",
    "The list could not be shown.", "Page", "Load more"
};

int cp_word_find(const char *name)
{
    int i;

    for (i = 0; i < CP_WORD_COUNT; i++) {
        if (strcasecmp(name, cp_word_names[i]) == 0) {
            return i;
        }
    }
    return -1;
}

/* A word of the fragment, escaped. */
static const char *word(apr_pool_t *pool, const cp_html_spec *spec, cp_word which)
{
    const char *text = spec->words && spec->words[which] ? spec->words[which]
                                                         : cp_word_defaults[which];
    return cp_html_text(pool, text, strlen(text));
}

static const char *item_html(apr_pool_t *pool, const cp_row *row, const cp_item_spec *item)
{
    const json_t *value = item->field ? cp_field_get(pool, item->field, row) : cp_row_key(row);
    apr_size_t len = 0;
    const char *text = cp_field_text(pool, value, &len);
    const char *shown = text ? cp_html_text(pool, text, len) : "";

    if (item->link) {
        return apr_pstrcat(pool, "<a href=\"",
                           html(pool, cp_pattern_expand(pool, item->link, row)), "\">",
                           shown, "</a>", NULL);
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

/* "11–15 of 42" ("11 of 42" for one row), when CouchDB's offset is the
 * page's true position; else NULL. */
static const char *position_text(apr_pool_t *pool, const cp_page *page,
                                 const cp_html_spec *spec, const char *separator)
{
    apr_int64_t offset = page->offset, total = page->total_rows;
    apr_int64_t n = page->rows->nelts;
    const char *rows;

    if (offset < 0 || total < 0) {
        return NULL;
    }
    rows = n == 0 ? "0"
         : n == 1 ? number_html(pool, offset + 1, separator)
         : apr_pstrcat(pool, number_html(pool, offset + 1, separator), "\xe2\x80\x93",
                       number_html(pool, offset + n, separator), NULL);
    return apr_pstrcat(pool, rows, " ", word(pool, spec, CP_WORD_OF), " ",
                       number_html(pool, total, separator), NULL);
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
        return apr_pstrcat(pool, number, ", ", position, NULL);
    }
    return number ? number : position;
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

const char *cp_render_html(apr_pool_t *pool, const cp_page *page, const cp_links *links,
                           const cp_html_spec *spec, const char **error)
{
    apr_array_header_t *out = apr_array_make(pool, 16 + 3 * page->rows->nelts,
                                             sizeof(const char *));
    const char *separator = word(pool, spec, CP_WORD_THOUSANDS);
    const char *position = position_text(pool, page, spec, separator);
    const char *status = status_text(pool, page, spec, position, separator);
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
                              : item_html(pool, row, spec->item);

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
            if (p == page->pages->nelts - 1 && page->has_last
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
    /* without page links, the last page has a link of its own, but on the
     * last page itself */
    if (page->pages->nelts == 0 && page->has_last) {
        EMIT(nav_link(pool, "last", word(pool, spec, CP_WORD_LAST),
                      page->last_is_current ? NULL : cp_link_url(pool, links, page->last), 0));
    }
    EMIT("</nav>\n</div>\n");
#undef EMIT
    return apr_array_pstrcat(pool, out, 0);
}

const char *cp_render_html_error(apr_pool_t *pool, const char *const *words)
{
    const cp_html_spec spec = { NULL, NULL, NULL, words };

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

const char *cp_render_etag(apr_pool_t *pool, const char *body)
{
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int len = 0;

    /* OpenSSL's SHA-1 (the processor's SHA instructions where it has them):
     * a page of documents is tens of kilobytes */
    if (!EVP_Digest(body, strlen(body), digest, &len, EVP_sha1(), NULL)) {
        return NULL;
    }
    return apr_pstrcat(pool, "\"", apr_pencode_base64_binary(pool, digest, len,
                                                             APR_ENCODE_BASE64URL, NULL),
                       "\"", NULL);
}
