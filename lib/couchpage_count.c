/* SPDX-License-Identifier: Apache-2.0 */
/*
 * couchpage_count: a _find location's count, paid once a walk (see the
 * header, and docs/algorithm.md, "Counting a _find location").
 */
#include <stdlib.h>
#include <string.h>

#include <apr_hash.h>
#include <apr_lib.h>
#include <apr_strings.h>

#include "couchpage_count.h"
#include "couchpage_json.h"
#include "couchpage_fault.h"
#include "couchpage_transport.h"

/* The total an at-least count is given to cp_keyset_page_assemble: more
 * rows than any location holds, so that no end of it is placed there. */
#define AT_LEAST_TOTAL ((apr_int64_t)1 << 60)

const char *cp_count_policy_parse(apr_pool_t *pool, int argc, const char *const *argv,
                                  cp_count_policy *policy)
{
    char *end;
    long n;

    memset(policy, 0, sizeof(*policy));
    if (argc == 1 && !strcasecmp(argv[0], "exact")) {
        policy->mode = CP_COUNT_EXACT;
        return NULL;
    }
    if (argc == 1 && !strcasecmp(argv[0], "none")) {
        policy->mode = CP_COUNT_NONE;
        return NULL;
    }
    if (argc >= 1 && !strcasecmp(argv[0], "capped")) {
        if (argc != 2) {
            return "capped takes one number: capped N, the rows a count reads at most";
        }
        n = strtol(argv[1], &end, 10);
        if (!apr_isdigit(*argv[1]) || *end || n < 1 || n > CP_COUNT_MAX) {
            return apr_psprintf(pool, "capped takes a whole number from 1 to %d, not '%s'",
                                CP_COUNT_MAX, argv[1]);
        }
        policy->mode = CP_COUNT_CAPPED;
        policy->cap = (int)n;
        return NULL;
    }
    return "takes exact, capped N or none";
}

/* The value of one preference "count=VALUE" (VALUE maybe quoted), or NULL
 * when the preference is not count's. */
static const char *count_value(apr_pool_t *pool, const char *pref, apr_size_t len)
{
    const char *end = pref + len, *eq;

    while (pref < end && apr_isspace(*pref)) {
        pref++;
    }
    while (end > pref && apr_isspace(end[-1])) {
        end--;
    }
    if (end - pref < 6 || strncasecmp(pref, "count", 5) != 0) {
        return NULL;
    }
    for (eq = pref + 5; eq < end && apr_isspace(*eq); eq++) {
    }
    if (eq == end || *eq != '=') {
        return NULL;
    }
    for (eq++; eq < end && apr_isspace(*eq); eq++) {
    }
    if (end - eq >= 2 && *eq == '"' && end[-1] == '"') {
        eq++;
        end--;
    }
    return apr_pstrmemdup(pool, eq, (apr_size_t)(end - eq));
}

cp_prefer_count cp_count_prefer(apr_pool_t *pool, const char *prefer)
{
    cp_prefer_count said = CP_PREFER_COUNT_UNSAID;
    const char *p = prefer;

    if (!prefer) {
        return said;
    }
    while (*p) {
        /* a preference ends at a comma; its parameters start at ";" */
        apr_size_t len = strcspn(p, ","), head = strcspn(p, ";,");
        const char *value = count_value(pool, p, head);

        if (value) {
            said = !strcasecmp(value, "exact") ? CP_PREFER_COUNT_EXACT
                 : !strcasecmp(value, "estimated") ? CP_PREFER_COUNT_ESTIMATED
                 : !strcasecmp(value, "none") ? CP_PREFER_COUNT_NONE
                 : CP_PREFER_COUNT_UNSAID;
        }
        p += len + (p[len] == ',');
    }
    return said;
}

int cp_count_cap(const cp_count_policy *policy, cp_prefer_count prefer, const char **applied)
{
    int cap = policy->mode == CP_COUNT_EXACT ? CP_COUNT_MAX
            : policy->mode == CP_COUNT_CAPPED ? policy->cap
            : policy->mode == CP_COUNT_NONE ? 0 : CP_COUNT_DEFAULT_CAP;

    *applied = NULL;
    switch (prefer) {
    case CP_PREFER_COUNT_NONE:
        *applied = "count=none";
        return 0;
    case CP_PREFER_COUNT_ESTIMATED:
        if (cap > CP_COUNT_DEFAULT_CAP && policy->mode == CP_COUNT_EXACT) {
            cap = CP_COUNT_DEFAULT_CAP;
        }
        *applied = cap ? "count=estimated" : NULL;
        return cap;
    case CP_PREFER_COUNT_EXACT:
        *applied = policy->mode == CP_COUNT_EXACT ? "count=exact" : NULL;
        return cap;
    default:
        return cap;
    }
}

const char *cp_count_free_applied(cp_prefer_count prefer)
{
    return prefer == CP_PREFER_COUNT_EXACT ? "count=exact" : NULL;
}

const char *cp_count_find_body(apr_pool_t *pool, const cp_find_spec *spec, int cap)
{
    cp_find_spec keys = *spec;
    json_t *fields = cp_json_pool_own(pool, json_pack("[s]", "_id"));

    /* cp_find_fields_param adds the sort fields, which the tokens need
     * on a page and a covering index holds here */
    keys.fields = fields;
    return fields && cap > 0 ? cp_find_body(pool, &keys, NULL, NULL, 0, cap + 1) : NULL;
}

const char *cp_count_skip_body(apr_pool_t *pool, const cp_find_spec *spec, apr_int64_t skip,
                               int limit)
{
    cp_find_spec keys = *spec;
    json_t *fields = cp_json_pool_own(pool, json_pack("[s]", "_id")), *query;
    const char *body;

    keys.fields = fields;
    if (!fields || limit < 1 || skip < 0
        || !(body = cp_find_body(pool, &keys, NULL, NULL, 0, limit))
        || !(query = cp_json_load(pool, body, strlen(body), NULL))) {
        return NULL;
    }
    json_object_set_new(query, "skip", json_integer((json_int_t)skip));
    return cp_json_text(pool, query);
}

void cp_count_from_rows(apr_int64_t rows, int cap, cp_count_walk *walk)
{
    memset(walk, 0, sizeof(*walk));
    walk->known = 1;
    walk->at_least = rows > cap;
    walk->total = walk->at_least ? cap : rows;
}

int cp_count_from_token(const cp_token *token, int cap, cp_count_walk *walk)
{
    memset(walk, 0, sizeof(*walk));
    if (!token->counted || cap <= 0 || token->count_total > cap
        || (token->count_at_least && token->count_total != cap)
        || (!token->count_at_least && token->count_place >= token->count_total)
        || (token->from != CP_FROM_AFTER && token->from != CP_FROM_BEFORE
            && (token->from != CP_FROM_ROW || token->docid))) {
        return 0;
    }
    walk->known = 1;
    walk->earlier = 1;
    walk->total = token->count_total;
    walk->at_least = token->count_at_least;
    walk->place = token->count_place;
    return 1;
}

int cp_count_keyset(const cp_token *token, const cp_count_walk *walk,
                    cp_keyset_count *counted)
{
    apr_int64_t total = walk->at_least ? AT_LEAST_TOTAL : walk->total;

    counted->total = counted->before = -1;
    if (!walk->known) {
        return 0;
    }
    switch (token->from) {
    case CP_FROM_FIRST:
        counted->before = 0;
        break;
    case CP_FROM_LAST:
        if (walk->at_least) {
            return 0;
        }
        counted->before = 0;
        break;
    case CP_FROM_AFTER:
        counted->before = walk->place + 1;
        break;
    case CP_FROM_BEFORE:
        counted->before = total - walk->place;
        break;
    default:
        return 0;
    }
    counted->total = total;
    return 1;
}

/* The token text with the count and its row's place, or NULL when it is
 * not a keyset token of a row the page read (places: id to place). */
static const char *stamp(apr_pool_t *pool, const char *text, apr_hash_t *places,
                         const cp_count_walk *walk)
{
    json_t *token, *pair;
    const apr_int64_t *place;
    const char *id;

    if (!text || !(token = cp_json_load(pool, text, strlen(text), NULL))
        || !json_is_object(token)) {
        return NULL;
    }
    pair = json_object_get(token, "a");
    if (!pair) {
        pair = json_object_get(token, "b");
    }
    id = json_string_value(json_array_get(pair, 1));
    if (!id || !(place = apr_hash_get(places, id, APR_HASH_KEY_STRING))) {
        return NULL;
    }
    json_object_set_new(token, "t", json_integer((json_int_t)walk->total));
    json_object_set_new(token, "p", json_integer((json_int_t)*place));
    if (walk->at_least) {
        json_object_set_new(token, "m", json_integer(1));
    }
    return cp_json_text(pool, token);
}

const char *cp_count_token_after(apr_pool_t *pool, const cp_row *row, apr_int64_t place,
                                 const cp_count_walk *walk)
{
    apr_hash_t *places = apr_hash_make(pool);
    apr_int64_t *at = apr_palloc(pool, sizeof(*at));

    *at = place;
    if (!row->id) {
        return NULL;
    }
    apr_hash_set(places, row->id, APR_HASH_KEY_STRING, at);
    return stamp(pool, cp_token_encode_beside(pool, CP_FROM_AFTER, cp_row_key(row), row->id),
                 places, walk);
}

/* What a numbered page shows of its walk's count: an earlier page's, at
 * least some number (then no Last page number). */
static void show_count(const cp_count_walk *walk, cp_page *page)
{
    apr_int64_t seen = page->offset + page->rows->nelts;

    page->count_earlier = walk->earlier;
    if (walk->at_least) {
        page->count_at_least = 1;
        page->total_rows = walk->total > seen ? walk->total : seen;
        page->last_number = 0;
    }
}

const char *cp_count_page(apr_pool_t *pool, const cp_token *token,
                          const apr_array_header_t *rows, const cp_count_walk *walk,
                          cp_page *page)
{
    int backward = token->from == CP_FROM_BEFORE || token->from == CP_FROM_LAST;
    int shown = page->rows->nelts, i, unstamped = 0;
    apr_array_header_t *issued;
    apr_hash_t *places;

    if (!walk->known || !page->numbered || page->offset < 0) {
        return NULL;
    }
    show_count(walk, page);
    /* each row read, by its id: its place in the location */
    places = apr_hash_make(pool);
    for (i = 0; i < rows->nelts; i++) {
        const cp_row *row = APR_ARRAY_IDX(rows, i, const cp_row *);
        apr_int64_t *place = apr_palloc(pool, sizeof(*place));

        *place = backward ? page->offset + shown - 1 - i : page->offset + i;
        if (row->id && *place >= 0) {
            apr_hash_set(places, row->id, APR_HASH_KEY_STRING, place);
        }
    }
    issued = cp_page_issued_tokens(pool, page);
    for (i = 0; i < issued->nelts; i++) {
        const char **text = APR_ARRAY_IDX(issued, i, const char **);
        const char *stamped;

        if (!*text || !strcmp(*text, CP_TOKEN_LAST)) {
            continue;
        }
        stamped = stamp(pool, *text, places, walk);
        if (stamped) {
            *text = stamped;
        }
        else {
            unstamped++;
        }
    }
    return unstamped ? apr_psprintf(pool, "%d of the page's tokens name no row it read",
                                    unstamped)
                     : NULL;
}

const char *cp_count_content_range(apr_pool_t *pool, const cp_page *page)
{
    const char *total = page->total_rows >= 0 && !page->count_at_least && page->numbered
                        && !page->count_changed
                        ? apr_psprintf(pool, "%" APR_INT64_T_FMT, page->total_rows) : "*";

    if (!page->numbered || page->offset < 0) {
        return "items */*";
    }
    if (page->rows->nelts == 0) {
        return apr_pstrcat(pool, "items */", total, NULL);
    }
    return apr_psprintf(pool, "items %" APR_INT64_T_FMT "-%" APR_INT64_T_FMT "/%s",
                        page->offset, page->offset + page->rows->nelts - 1, total);
}

/* A _find location's count: one POST .../_find of the selector, keys only,
 * at most cap + 1 rows. A count that fails leaves the page unnumbered, as
 * a location without a count is: it is logged, never the page's fault. */
static void read_count(apr_pool_t *pool, const cp_transport *tr, const cp_source *src,
                       const char *url, int cap, cp_count_walk *walk)
{
    const char *body = cp_count_find_body(pool, src->find, cap), *reason = NULL;
    cp_transport_failure failure;
    const cp_answer *answer;

    memset(walk, 0, sizeof(*walk));
    if (!body) {
        reason = "its query could not be built";
    }
    else if (!tr->find(tr->baton, url, body, src->find->sort, &answer, &failure)) {
        reason = failure.reason;
    }
    else if (!(reason = cp_answer_overfull(pool, answer, cap + 1))) {
        cp_count_from_rows((apr_int64_t)cp_answer_rows(answer), cap, walk);
        if (tr->debug) {
            tr->log(tr->baton, CP_LOG_DEBUG, "CP0430", apr_psprintf(pool, "the count of %s: "
                    "%s%" APR_INT64_T_FMT " rows (CouchPageCount reads at most %d)", src->uri,
                    walk->at_least ? "at least " : "", walk->total, cap + 1));
        }
        return;
    }
    tr->log(tr->baton, CP_LOG_INFO, "CP0431", apr_psprintf(pool, "the rows of %s are not "
            "counted (%s): the page is numbered relative to itself", src->uri,
            cp_fault_loggable(pool, reason)));
}

const cp_keyset_count *cp_count_for_page(apr_pool_t *pool, const cp_transport *tr,
                                         const cp_source *src, const char *url, int cap,
                                         const cp_token *token, int read, int limit,
                                         int *count_read, cp_count_walk *walk,
                                         cp_keyset_count *counted)
{
    if (cap <= 0) {
        walk->known = 0;
        return NULL;
    }
    if (token->from == CP_FROM_FIRST || token->from == CP_FROM_LAST) {
        if (read < limit) {
            /* the page's own read, from one end, reached the other: it
             * holds every row, and no count is asked */
            cp_count_from_rows(read, cap, walk);
        }
        else if (!*count_read) {
            read_count(pool, tr, src, url, cap, walk);
            *count_read = 1;
        }
    }
    else if (!cp_count_from_token(token, cap, walk)) {
        walk->known = 0;
    }
    return cp_count_keyset(token, walk, counted) ? counted : NULL;
}

/* --- grouped reduce rows ------------------------------------------------ */

const cp_page_count *cp_count_group_walk(const apr_array_header_t *queries,
                                         const cp_token *token, int cap,
                                         cp_count_walk *walk, cp_page_count *counted)
{
    cp_token_from from = token ? token->from : CP_FROM_FIRST;
    const cp_query *query = cp_plan_query(queries, CP_QUERY_COUNT);

    memset(walk, 0, sizeof(*walk));
    if (cap <= 0) {
        return NULL;
    }
    if (from == CP_FROM_FIRST || from == CP_FROM_LAST) {
        if (!query || !query->answer) {
            return NULL;
        }
        cp_count_from_rows((apr_int64_t)cp_answer_rows(query->answer), query->limit - 1,
                           walk);
    }
    else if (from != CP_FROM_ROW || !cp_count_from_token(token, cap, walk)) {
        return NULL;
    }
    counted->total = walk->total;
    counted->at_least = walk->at_least;
    counted->before = from == CP_FROM_ROW ? walk->place : 0;
    /* the Last page of an at-least count: nothing says where it starts */
    return from == CP_FROM_LAST && walk->at_least ? NULL : counted;
}

/* A grouped row's token [KEY] as {"g": [KEY], "t": TOTAL, "p": place}
 * ("m": 1 at least), a bounded one with "t", "p" ("m") added; or NULL when
 * it is neither, or the counted one would not fit the room. */
static const char *stamp_group(apr_pool_t *pool, const char *text, apr_int64_t place,
                               const cp_count_walk *walk, const cp_token_room *room)
{
    json_t *key = text ? cp_json_load(pool, text, strlen(text), NULL) : NULL;
    json_t *token;
    const char *stamped;

    if (key && json_is_object(key) && json_object_get(key, "h")) {
        token = key;
    }
    else if (!key || !json_is_array(key) || json_array_size(key) != 1
             || !(token = cp_json_pool_own(pool, json_object()))) {
        return NULL;
    }
    else {
        json_object_set(token, "g", key);
    }
    json_object_set_new(token, "t", json_integer((json_int_t)walk->total));
    json_object_set_new(token, "p", json_integer((json_int_t)place));
    if (walk->at_least) {
        json_object_set_new(token, "m", json_integer(1));
    }
    stamped = cp_json_text(pool, token);
    return stamped && (!room || cp_token_fits(room, stamped)) ? stamped : NULL;
}

/* Stamps *text, the token of the page whose first row is at place. */
static int stamp_at(apr_pool_t *pool, const char **text, apr_int64_t place,
                    const cp_count_walk *walk, const cp_token_room *room)
{
    const char *stamped;

    if (!*text || !strcmp(*text, CP_TOKEN_LAST)) {
        return 0;
    }
    stamped = stamp_group(pool, *text, place < 0 ? 0 : place, walk, room);
    if (stamped) {
        *text = stamped;
    }
    return !stamped;
}

void cp_count_group_room(const cp_token_room *room, cp_token_room *smaller)
{
    *smaller = *room;
    if (room->max_sent > 4 * CP_COUNT_TOKEN_RESERVE
        && room->max_escaped > 12 * CP_COUNT_TOKEN_RESERVE) {
        /* sealed, the reserve grows by 4/3; percent-encoded, by 3 */
        smaller->max_sent -= (apr_size_t)(room->sealed ? 2 : 1) * CP_COUNT_TOKEN_RESERVE;
        smaller->max_escaped -= 3 * CP_COUNT_TOKEN_RESERVE;
    }
}

const char *cp_count_group_page(apr_pool_t *pool, const cp_count_walk *walk, int count,
                                const cp_token_room *room, cp_page *page)
{
    apr_int64_t current = 0;
    int i, unstamped = 0;

    if (!walk->known || !page->numbered || page->offset < 0) {
        return NULL;
    }
    show_count(walk, page);
    /* every token names the first row of its page: count rows a page
     * away from this one's (the first row, nearer, behind) */
    unstamped += stamp_at(pool, &page->next, page->offset + count, walk, room);
    unstamped += stamp_at(pool, &page->prev, page->offset - count, walk, room);
    for (i = 0; i < page->pages->nelts; i++) {
        const cp_page_link *link = &APR_ARRAY_IDX(page->pages, i, cp_page_link);

        if (link->current) {
            current = link->number;
        }
    }
    for (i = 0; i < page->pages->nelts; i++) {
        cp_page_link *link = &APR_ARRAY_IDX(page->pages, i, cp_page_link);

        if (!link->current) {
            unstamped += stamp_at(pool, &link->start,
                                  page->offset + (link->number - current) * count, walk, room);
        }
    }
    return unstamped ? apr_psprintf(pool, "%d of the page's tokens could not carry the count",
                                    unstamped)
                     : NULL;
}
