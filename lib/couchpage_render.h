/* SPDX-License-Identifier: Apache-2.0 */
/*
 * couchpage_render: the response bodies the module sends: JSON, the HTML
 * fragment, and errors; and what the directives that shape them give, as
 * they are read: the members a page's JSON carries (CouchPageFields) and
 * the fragment's words (CouchPageText).
 *
 * Part of the httpd-free core: no httpd header, no request_rec. It writes
 * bodies; the glue sets the headers and sends them.
 */
#ifndef COUCHPAGE_RENDER_H
#define COUCHPAGE_RENDER_H

#include <apr_pools.h>
#include "couchpage_item.h"
#include "couchpage_page.h"

/* A link made for a page's token (cp_links.made). */
typedef struct {
    const char *token;
    const char *url;
} cp_link_made;

/* The links a page keeps once made: its next, prev and last, and one more
 * (a page link's, which the Link header does not repeat). */
#define CP_LINKS_MADE 4

/* Where page links point: the page's own path, plus the limit and format the
 * client asked for, so that following a link keeps them. */
typedef struct {
    const char *path;   /* already URL-escaped */
    int limit;          /* 0: none */
    const char *format; /* NULL: none */
    cp_link_made *made; /* NULL, or CP_LINKS_MADE zeroed entries that keep the
                           URLs made for one page: its body and its Link
                           header write each link, made once */
} cp_links;

/* The URL of the page that starts at token; NULL token: the first page. */
const char *cp_link_url(apr_pool_t *pool, const cp_links *links, const char *token);

/* The URL of the previous page, NULL without one (or when its token was
 * left out): the first page's own URL when it is the first page
 * (cp_page.prev_is_first), its token left out or not. */
const char *cp_prev_url(apr_pool_t *pool, const cp_links *links, const cp_page *page);

/* A document the JSON page copies whole (include_docs, a _find answer's
 * docs) and that has a string _id and _rev: a revision of a CouchDB
 * document never changes (its rev id is a digest of its content), so the
 * ETag digests the two in place of its bytes. */
typedef struct {
    apr_size_t from;  /* the document's bytes in the body: [from, to) */
    apr_size_t to;
    cp_span id;       /* its _id and _rev members' values as sent */
    cp_span rev;
} cp_etag_revision;

/* {"items":[{"id","key","value","doc"}...],"next","prev",
 *  "links":{"next","prev","first","last"},"pages":[{"number","start","current","url"}...],
 *  "numbering","total_rows","offset","first_row","last_row","last_page"}: id only
 *  on rows that have one, doc only with include_docs, pages only with page
 *  links; numbering "absolute" when the position is known, else "relative";
 *  total_rows the location's rows when known (see cp_page), offset, first_row
 *  and last_row (1-based, only on a page with rows) only with the position,
 *  links.last only when the last page is known, last_page when its number is too; "withheld"
 *  (["next"], ["prev"] or both) only when that page exists but its token was
 *  left out (cp_page_withhold_long_tokens), its token null, its link null but
 *  for a previous page that is the first; a page link whose token was left
 *  out has a null start and url. Each row's id,
 *  key, value and doc are the bytes CouchDB sent (< > & written as \u
 *  escapes, as everywhere in the body), the doc reduced to its members named
 *  in fields (const char *, CouchPageFields; NULL: the whole doc). A _find
 *  location's item is the document alone, reduced to fields likewise. With
 *  revisions, *revisions is what the ETag digests in place of documents
 *  copied whole (cp_etag_revision, pool-owned; see cp_render_etag). */
const char *cp_render_json(apr_pool_t *pool, const cp_page *page,
                           const cp_links *links, const apr_array_header_t *fields,
                           const apr_array_header_t **revisions);

/* CouchPageFields' words (const char *, as written, one at least): the
 * names of document members, each UTF-8 and named once, or "*" alone for
 * every member. NULL with *fields the names for cp_render_json (NULL for
 * "*"); or why they are refused, *about the word that is at fault (NULL
 * when the fault is not one word's). */
const char *cp_render_fields_parse(apr_pool_t *pool, apr_array_header_t *words,
                                   apr_array_header_t **fields, const char **about);

/* The fragment's words, each replaceable (CouchPageText NAME TEXT). The
 * link relations (rel="prev" ...) are not words: they are names browsers
 * and crawlers know. */
typedef enum {
    CP_WORD_FIRST,      /* the link to the first page, without a page list */
    CP_WORD_PREVIOUS,   /* the link to the page before */
    CP_WORD_NEXT,       /* the link to the page after */
    CP_WORD_LAST,       /* the link to the last page, without a page list */
    CP_WORD_OF,         /* "1-5 of 11" */
    CP_WORD_EMPTY,      /* the text of a page without rows */
    CP_WORD_NAV_LABEL,  /* the nav's aria-label */
    CP_WORD_CURRENT,    /* the current page in a page list without numbers */
    CP_WORD_THOUSANDS,  /* between groups of three digits: "100,000"; "" for none */
    CP_WORD_ERROR,      /* the text of an error, in place of the page */
    CP_WORD_PAGE,       /* "Page 3, 41-60 of 1,000": what couchpage.js announces */
    CP_WORD_MORE,       /* the label of couchpage.js's Load more button */
    CP_WORD_COUNTED_EARLIER, /* after "21-40 of 347": the count is an earlier
                           page's of the walk, which the token carried */
    CP_WORD_JUMP,       /* the label of the go-to-page form's number field */
    CP_WORD_GO,         /* its submit button */
    CP_WORD_CHANGED,    /* rows were written since the walk began (couchpage_changed) */
    CP_WORD_COUNTED_BEFORE_CHANGE, /* in place of COUNTED_EARLIER where rows were
                           written since that count */
    CP_WORD_COUNT
} cp_word;

/* Their names, as CouchPageText takes them, and their English defaults. */
extern const char *const cp_word_names[CP_WORD_COUNT];
extern const char *const cp_word_defaults[CP_WORD_COUNT];

/* CouchPageText NAME TEXT: NULL with *which the word named name (any
 * case); or why not: name is no word (the reason lists the words), or text
 * is not UTF-8. */
const char *cp_word_check(apr_pool_t *pool, const char *name, const char *text, int *which);

/* One row's inner HTML, from a renderer the caller provides (an item
 * template); NULL with *error set when it cannot render the row. */
typedef const char *cp_item_renderer(void *baton, apr_pool_t *pool, const cp_row *row,
                                     const char **error);

/* How the fragment is made. */
typedef struct {
    const cp_item_spec *item;       /* what an item shows, without render_item */
    cp_item_renderer *render_item;  /* NULL: item decides */
    void *baton;                    /* render_item's */
    const char *const *words;       /* CP_WORD_COUNT texts, a NULL one the default;
                                     * NULL: every word the default */
    const apr_array_header_t *fields; /* CouchPageFields: the only members of a
                                     * row's doc an item shows (cp_field_show);
                                     * NULL: every member. render_item keeps to
                                     * them itself */
} cp_html_spec;

/* The HTML5 fragment: a div.couchpage holding ul.couchpage-items,
 * p.couchpage-position (when the position is known: "21-40 of 1,000", or
 * "11 of 11" for one row) and nav.couchpage-nav: prev, the page list
 * (absolute numbers with page 1 and the last page always linked,
 * li.couchpage-gap for the pages between; the current page a span with
 * aria-current="page", not a link), next; without a page list,
 * a.couchpage-first before prev and a.couchpage-last after next when the
 * last page is known, each a disabled span on its own page. A link whose
 * token was left out is a span.couchpage-withheld (prev and next disabled
 * too), its number shown. Every number
 * shown has the thousands word between its groups of three digits.
 * Without render_item or an item field, an item of a _find location's page
 * (docs_as_items) is cp_item_find_default's, any other the row's key.
 * Every text, word and URL is escaped; render_item's output is taken as it
 * is. NULL with *error set when render_item fails. */
const char *cp_render_html(apr_pool_t *pool, const cp_page *page, const cp_links *links,
                           const cp_html_spec *spec, const char **error);

/* An error as HTML, in place of the fragment: <div class="couchpage
 * couchpage-error"> holding the error word (words as in cp_html_spec),
 * escaped. Visitors learn nothing of why: that is in the error log. */
const char *cp_render_html_error(apr_pool_t *pool, const char *const *words);

/* The entity tag of a page's body: base64url of a SHA-1, quoted. Without
 * revisions (NULL or empty: an HTML page, or JSON with no document copied
 * whole) the SHA-1 of the body, a strong tag: equal bodies have equal
 * tags. With them (cp_etag_revision, in the body's order, from
 * cp_render_json), the SHA-1 of the body with each such document's bytes
 * replaced by NUL, its _id, NUL, its _rev, NUL (no NUL is in a body), and
 * the tag is weak (W/"..."): pages with the same revisions of the same
 * documents are equivalent, not always byte for byte. Either way a
 * revalidated page that CouchDB still answers the same way is answered
 * 304 (If-None-Match compares weakly), and a page with a document edited
 * is not. A page of documents hashes a few kilobytes instead of all of
 * them. NULL when libcrypto fails. */
const char *cp_render_etag(apr_pool_t *pool, const char *body,
                           const apr_array_header_t *revisions);

/* {"error": error, "reason": reason} */
const char *cp_render_error(apr_pool_t *pool, const char *error, const char *reason);

#endif
