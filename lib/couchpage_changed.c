/* SPDX-License-Identifier: Apache-2.0 */
/*
 * couchpage_changed: a walk's start in its tokens, and whether the list
 * changed since (see couchpage_changed.h). httpd-free.
 */
#include "couchpage_changed.h"
#include "couchpage_memory.h"
#include "couchpage_seq.h"
#include "couchpage_fault.h"

#include <string.h>

#include <apr_strings.h>

/* The digits of an entry's number at most (cp_seq_elements' numbers are
 * below 2^62, a sum of a few thousand of them below 10^18). */
#define MAX_DIGITS 18
#define BASE64URL "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

typedef cp_token_mark_entry entry;

/* The TAG of bytes, kind 'r' (one range's copy) or 'a' (all of them): 30
 * bits of their 64-bit FNV-1a hash. A tag only tells copies of one
 * sequence apart, which the server names: no key or secret to guard, so a
 * hash of a few instructions a byte, not a digest. */
static void tag_of(char kind, const unsigned char *bytes, apr_size_t len, char *tag)
{
    apr_uint64_t h = 14695981039346656037ULL;
    apr_size_t i;

    h = (h ^ (unsigned char)kind) * 1099511628211ULL;
    for (i = 0; i < len; i++) {
        h = (h ^ bytes[i]) * 1099511628211ULL;
    }
    for (i = 0; i < CP_CHANGED_TAG; i++) {
        tag[i] = BASE64URL[(h >> (58 - 6 * i)) & 63];
    }
    tag[CP_CHANGED_TAG] = '\0';
}

/* A sequence's entries: one a range (*count of them), and, when there are
 * more than CP_CHANGED_RANGES, in *all the entry of all of them (the sum;
 * else its tag is empty: no mark holds it). 0 when the sequence cannot be
 * read. */
static int entries_of(apr_pool_t *pool, const char *seq, entry **ranges, int *count, entry *all)
{
    apr_array_header_t *elements = seq ? cp_seq_elements(pool, seq) : NULL;
    unsigned char *names;
    apr_size_t at = 0, size = 0;
    int i;

    if (!elements) {
        return 0;
    }
    *count = elements->nelts;
    *ranges = apr_pcalloc(pool, (apr_size_t)elements->nelts * sizeof(entry));
    all->seq = 0;
    all->tag[0] = '\0';
    for (i = 0; i < elements->nelts; i++) {
        const cp_seq_element *e = &APR_ARRAY_IDX(elements, i, cp_seq_element);

        size += 4 + e->name_len;
        all->seq += e->seq;
        (*ranges)[i].seq = e->seq;
        /* past CP_CHANGED_RANGES a mark names all the copies at once */
        if (elements->nelts <= CP_CHANGED_RANGES) {
            tag_of('r', e->name, e->name_len, (*ranges)[i].tag);
        }
    }
    if (elements->nelts <= CP_CHANGED_RANGES) {
        return all->seq >= 0;
    }
    /* all the copies: each name's length, then the name, in the
     * sequence's one order */
    names = apr_palloc(pool, size + 1);
    for (i = 0; i < elements->nelts; i++) {
        const cp_seq_element *e = &APR_ARRAY_IDX(elements, i, cp_seq_element);

        names[at++] = (unsigned char)(e->name_len >> 24);
        names[at++] = (unsigned char)(e->name_len >> 16);
        names[at++] = (unsigned char)(e->name_len >> 8);
        names[at++] = (unsigned char)e->name_len;
        memcpy(names + at, e->name, e->name_len);
        at += e->name_len;
    }
    tag_of('a', names, at, all->tag);
    return all->seq >= 0;
}

static const char *mark_of(apr_pool_t *pool, const char *seq)
{
    entry *ranges, all;
    const char *mark = NULL;
    int count, i;

    if (!entries_of(pool, seq, &ranges, &count, &all)) {
        return NULL;
    }
    if (count > CP_CHANGED_RANGES) {
        return apr_psprintf(pool, "%s%" APR_INT64_T_FMT, all.tag, all.seq);
    }
    for (i = 0; i < count; i++) {
        mark = apr_psprintf(pool, "%s%s%s%" APR_INT64_T_FMT, mark ? mark : "", mark ? "." : "",
                            ranges[i].tag, ranges[i].seq);
    }
    return mark;
}

/* The marks a thread last made, with their sequences: a view's sequence
 * comes back page after page until its rows change, and reading it again
 * (base64, terms) is most of what a mark costs. */
static _Thread_local cp_thread_memo marks;

const char *cp_changed_mark(apr_pool_t *pool, const char *seq)
{
    const char *mark;

    if (!seq) {
        return NULL;
    }
    if ((mark = cp_thread_memo_get(&marks, pool, seq))) {
        return mark;
    }
    if ((mark = mark_of(pool, seq))) {
        cp_thread_memo_put(&marks, seq, mark);
    }
    return mark;
}

int cp_changed_mark_valid(const char *text, apr_size_t len)
{
    entry e[CP_CHANGED_RANGES];

    return cp_token_mark_read(text, len, e) > 0;
}

/* The walk's mark against the page's own (cp_changed_compare). */
static cp_changed_state compare_marks(const char *mark, const char *here)
{
    entry start[CP_CHANGED_RANGES], now[CP_CHANGED_RANGES];
    int n = mark ? cp_token_mark_read(mark, strlen(mark), start) : 0;
    int count = here ? cp_token_mark_read(here, strlen(here), now) : 0, i, j, matched = 0, unsure = 0;

    if (!n || !count) {
        return CP_CHANGED_UNKNOWN;
    }
    for (i = 0; i < n; i++) {
        const entry *same = NULL;

        for (j = 0; !same && j < count; j++) {
            same = !strcmp(start[i].tag, now[j].tag) ? &now[j] : NULL;
        }
        if (same && same->seq > start[i].seq) {
            /* the copy that answered then answers now, and was written */
            return CP_CHANGED_YES;
        }
        if (!same || same->seq < start[i].seq) {
            /* another copy, whose numbers count another way; or a number
             * that went back (the copy made anew) */
            unsure = 1;
        }
        else {
            matched++;
        }
    }
    return !unsure && matched == count ? CP_CHANGED_NO : CP_CHANGED_UNKNOWN;
}

cp_changed_state cp_changed_compare(apr_pool_t *pool, const char *mark, const char *seq)
{
    return compare_marks(mark, seq ? cp_changed_mark(pool, seq) : NULL);
}

void cp_changed_open(const cp_source *source, const char *client_start, cp_walk *walk)
{
    memset(walk, 0, sizeof(*walk));
    walk->applies = cp_source_index_current(source);
    walk->says_no = cp_source_rows_alone(source);
    walk->begins = client_start == NULL;
    walk->room = cp_source_token_room(source);
}

void cp_changed_token(cp_walk *walk, const cp_token *token)
{
    if (!token) {
        return;
    }
    /* the Last page's "last" is every walk's: a walk begins there too */
    if (token->from == CP_FROM_LAST || token->from == CP_FROM_FIRST) {
        walk->begins = 1;
    }
    else if (walk->begins) {
        /* a token the client did not send: ?page=N's, whose page begins a
         * walk and is the page that walk's token to page N opens */
        walk->jumped = 1;
    }
    walk->walk = walk->begins ? NULL : token->walk;
}

apr_size_t cp_changed_answered(apr_pool_t *pool, cp_walk *walk, const char *seq,
                               const cp_token_room *room, apr_size_t *escaped)
{
    apr_size_t len;

    if (!walk->answered) {
        walk->answered = 1;
        walk->here = walk->applies && seq ? cp_changed_mark(pool, seq) : NULL;
        if (walk->begins) {
            walk->walk = walk->here;
        }
    }
    len = walk->walk ? strlen(walk->walk) : 0;
    room = room ? room : &walk->room;
    if (len) {
        apr_size_t sent = CP_TOKEN_MARK_EXTRA(len);

        sent = room->sealed ? (sent * 4 + 2) / 3 : sent;
        if (4 * sent > room->max_sent || 4 * CP_TOKEN_MARK_EXTRA_ESCAPED(len) > room->max_escaped) {
            /* a cap too small to spare a quarter for it: no mark */
            walk->walk = NULL;
            len = 0;
        }
    }
    *escaped = len ? CP_TOKEN_MARK_EXTRA_ESCAPED(len) : 0;
    return len ? CP_TOKEN_MARK_EXTRA(len) : 0;
}

void cp_changed_room(apr_pool_t *pool, cp_walk *walk, const char *seq, cp_token_room *room,
                     cp_token_room *made)
{
    room->extra = made->extra = cp_changed_answered(pool, walk, seq, room,
                                                    &room->extra_escaped);
    made->extra_escaped = room->extra_escaped;
}

/* A jumped page's own token marked (cp_changed_finish). */
static const char *mark_jumped(apr_pool_t *pool, const cp_walk *walk, const cp_seal_key *key,
                               const char *binding, const char *sent, const char *opened,
                               cp_page *page)
{
    const char *marked = walk->jumped && walk->walk && sent
                         ? cp_token_mark(pool, opened, walk->walk) : NULL;
    const char **tokens[] = { &marked };
    const char *reason;
    int i;

    if (!marked || marked == opened) {
        return NULL;
    }
    if (key && (reason = cp_seal_tokens(pool, key, binding, tokens, 1))) {
        return reason;
    }
    for (i = 0; i < page->pages->nelts; i++) {
        cp_page_link *link = &APR_ARRAY_IDX(page->pages, i, cp_page_link);

        if (link->current && link->start && !strcmp(link->start, sent)) {
            link->start = marked;
        }
    }
    if (page->last_is_current && page->last && !strcmp(page->last, sent)) {
        page->last = marked;
    }
    return NULL;
}

const cp_fault *cp_changed_finish(apr_pool_t *pool, cp_walk *walk, const cp_source *source,
                                  const char *sent, const char *opened, cp_served *served)
{
    const char *seq = served->seq ? served->seq : (served->seq = walk->seq);
    cp_page *page = &served->page;
    const apr_array_header_t *tokens;
    const char *reason;
    apr_size_t escaped;
    int i;

    cp_changed_answered(pool, walk, seq, NULL, &escaped);
    page->changed = CP_CHANGED_UNKNOWN;
    page->count_changed = 0;
    if (!walk->walk) {
        return NULL;
    }
    if ((!walk->begins || walk->jumped) && walk->here) {
        /* a jumped page's walk begins at it: nothing changed since */
        page->changed = compare_marks(walk->walk, walk->here);
        if (page->changed == CP_CHANGED_NO && !walk->says_no) {
            page->changed = CP_CHANGED_UNKNOWN;
        }
        /* a count the token carried was taken where the walk began (its
         * first page, or its Last page) */
        page->count_changed = page->count_earlier && page->changed == CP_CHANGED_YES;
    }
    tokens = cp_page_issued_tokens(pool, page);
    for (i = 0; i < tokens->nelts; i++) {
        const char **token = APR_ARRAY_IDX(tokens, i, const char **);

        *token = cp_token_mark(pool, *token, walk->walk);
    }
    reason = mark_jumped(pool, walk, source->token_key, served->binding, sent, opened, page);
    return reason ? cp_fault_seal(pool, source->uri, reason) : NULL;
}
