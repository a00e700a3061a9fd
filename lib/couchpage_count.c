/* SPDX-License-Identifier: Apache-2.0 */
/*
 * couchpage_count: a _find location's count, paid once a walk (see the
 * header, and docs/algorithm.md, "Counting a _find location").
 */
#include <stdlib.h>
#include <string.h>

#include <apr_escape.h>
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

const char *cp_count_token_stamped(apr_pool_t *pool, const char *text, const char *id,
                                   apr_int64_t place, const cp_count_walk *walk)
{
    apr_hash_t *places = apr_hash_make(pool);
    apr_int64_t *at = apr_palloc(pool, sizeof(*at));

    *at = place;
    apr_hash_set(places, id, APR_HASH_KEY_STRING, at);
    return stamp(pool, text, places, walk);
}

const char *cp_count_token_after(apr_pool_t *pool, const cp_row *row, apr_int64_t place,
                                 const cp_count_walk *walk)
{
    return row->id ? cp_count_token_stamped(pool, cp_token_encode_beside(
                                                pool, CP_FROM_AFTER, cp_row_key(row), row->id),
                                            row->id, place, walk)
                   : NULL;
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

void cp_count_carry(apr_pool_t *pool, const cp_token *token, const apr_array_header_t *rows,
                    cp_count_walk *walk, int jumped, const char **opened, cp_page *page)
{
    const char *stamped;

    if (!page->numbered) {
        return;
    }
    walk->total = page->total_rows;
    /* a link to rows not read ahead carries none: its page asks the probes */
    cp_count_page(pool, token, rows, walk, page);
    if (jumped && token->from == CP_FROM_AFTER && token->docid) {
        /* ?page=N's token, its page's own link, as the walk's carries it */
        stamped = cp_count_token_stamped(pool, *opened, token->docid, page->offset - 1, walk);
        *opened = stamped ? stamped : *opened;
    }
}

const char *cp_count_content_range(apr_pool_t *pool, const cp_page *page)
{
    const char *total = page->total_rows >= 0 && !page->count_at_least && page->numbered
                        && !page->count_changed
                        ? apr_off_t_toa(pool, (apr_off_t)page->total_rows) : "*";

    if (!page->numbered || page->offset < 0) {
        return "items */*";
    }
    if (page->rows->nelts == 0) {
        return apr_pstrcat(pool, "items */", total, NULL);
    }
    return apr_pstrcat(pool, "items ", apr_off_t_toa(pool, (apr_off_t)page->offset), "-",
                       apr_off_t_toa(pool, (apr_off_t)(page->offset + page->rows->nelts - 1)),
                       "/", total, NULL);
}

/* --- a count bounded by its index's view -------------------------------- */

/* The rows the count's first look at the index's view reads, at most: the
 * last of them the (N + 1)-th of the range, those before it where the
 * sort value before that row's group is found, mostly. */
#define LOOK_ROWS 32

/* Whether two values of an index's key are one value to CouchDB's
 * collation, as far as the module can tell without collating: equal JSON,
 * or two numbers of one value (1 and 1.0). */
static int same_value(const json_t *a, const json_t *b)
{
    if (cp_json_is_number(a) && cp_json_is_number(b)) {
        return cp_json_number_value(a) == cp_json_number_value(b);
    }
    return json_equal((json_t *)a, (json_t *)b);
}

/* A view query's flags as fresh as the location's _find. */
static const char *fresh_as(const cp_find_spec *spec)
{
    return spec->update == CP_MANGO_FALSE
           ? (spec->stable == CP_MANGO_TRUE ? "&update=false&stable=true" : "&update=false")
           : spec->stable == CP_MANGO_TRUE ? "&stable=true" : "";
}

/* "&NAME=KEY", or "" for no key. */
static const char *key_param(apr_pool_t *pool, const char *name, const char *key)
{
    return key ? apr_pstrcat(pool, "&", name, "=", apr_pescape_urlencoded(pool, key), NULL)
               : "";
}

const char *cp_count_look_query(apr_pool_t *pool, const cp_find_spec *spec, const char *low,
                                const char *high, apr_int64_t skip, int limit)
{
    int down = spec->sort->descending;

    return apr_psprintf(pool, "?reduce=false&limit=%d%s%s%s%s%s", limit,
                        skip ? apr_psprintf(pool, "&skip=%" APR_INT64_T_FMT, skip) : "",
                        down ? "&descending=true" : "",
                        key_param(pool, "startkey", down ? high : low),
                        key_param(pool, "endkey", down ? low : high), fresh_as(spec));
}

const char *cp_count_before_query(apr_pool_t *pool, const cp_find_spec *spec,
                                  const char *prefix, const json_t *value, const char *low,
                                  const char *high)
{
    const char *key;

    if (spec->sort->descending) {
        /* the location's order is the view's descending: the rows after
         * the group in the view's, from above its every key */
        key = cp_mango_range_key(pool, prefix, value, 1);
        return key ? apr_pstrcat(pool, "?reduce=false&limit=1", key_param(pool, "startkey", key),
                                 key_param(pool, "endkey", high), fresh_as(spec), NULL) : NULL;
    }
    /* the rows before the group, down from below its every key: a key
     * [..., value] itself (the value the key's last) sorts before every id
     * but the empty one, which no document has */
    key = cp_mango_range_key(pool, prefix, value, 0);
    return key ? apr_pstrcat(pool, "?reduce=false&limit=1&descending=true",
                             key_param(pool, "startkey", key), "&startkey_docid=",
                             key_param(pool, "endkey", low), fresh_as(spec), NULL) : NULL;
}

/* The open field's value of a view row's key (open < 0: the key itself,
 * a document id of _all_docs), or NULL. */
static const json_t *open_value(const json_t *row, int open)
{
    const json_t *key = json_object_get(row, "key");

    if (open < 0) {
        return json_is_string(key) ? key : NULL;
    }
    return json_is_array(key) && (int)json_array_size(key) > open
           ? json_array_get(key, (size_t)open) : NULL;
}

cp_count_cut cp_count_cut_from_look(apr_pool_t *pool, const char *text, apr_size_t len,
                                    int open, apr_int64_t skip, int cap, const json_t **value)
{
    const json_t *answer = cp_json_load(pool, text, len, NULL);
    const json_t *rows = json_object_get(answer, "rows"), *last, *each;
    apr_size_t n, i;

    *value = NULL;
    if (!json_is_object(answer) || !json_is_array(rows)) {
        return CP_COUNT_CUT_UNREAD;
    }
    n = json_array_size(rows);
    if (skip + (apr_int64_t)n <= cap) {
        return CP_COUNT_CUT_NONE;
    }
    if (!(last = open_value(json_array_get(rows, n - 1), open))) {
        return CP_COUNT_CUT_UNREAD;
    }
    /* the (cap + 1)-th row's group starts after the last row of another
     * value: the count reads up to that row's value, and no further */
    for (i = n - 1; i-- > 0;) {
        if (!(each = open_value(json_array_get(rows, i), open))) {
            return CP_COUNT_CUT_UNREAD;
        }
        if (!same_value(each, last)) {
            *value = each;
            return CP_COUNT_CUT_AT;
        }
    }
    *value = last;
    return skip ? CP_COUNT_CUT_BEFORE : CP_COUNT_CUT_EMPTY;
}

/* The index's design document and name in its view's URL
 * (.../_design/DDOC/_view/NAME), into spec's use_index, unless the
 * location names its index. 0 when the URL is not a view's. */
static int use_index_of(apr_pool_t *pool, const char *view_url, cp_find_spec *spec)
{
    const char *ddoc = view_url, *at, *name;

    if (spec->index_ddoc) {
        return 1;
    }
    for (at = view_url; (at = strstr(at, "/_design/")); ddoc = at++) {
    }
    if (ddoc == view_url || !(name = strstr(ddoc + 9, "/_view/")) || strchr(name + 7, '/')
        || strchr(name + 7, '?')) {
        return 0;
    }
    spec->index_ddoc = apr_punescape_url(pool, apr_pstrndup(pool, ddoc + 9,
                                                            (apr_size_t)(name - ddoc - 9)),
                                         NULL, NULL, 0);
    spec->index_name = apr_punescape_url(pool, name + 7, NULL, NULL, 0);
    return spec->index_ddoc && spec->index_name;
}

const char *cp_count_cut_body(apr_pool_t *pool, const cp_find_spec *spec, const char *field,
                              const json_t *value, int cap)
{
    cp_find_spec cut = *spec;
    json_t *both = json_array(), *bound;

    bound = json_pack("{s:{s:O}}", field, spec->sort->descending ? "$gte" : "$lte", value);
    if (json_object_size(spec->selector)) {
        json_array_append(both, (json_t *)spec->selector);
    }
    json_array_append_new(both, bound);
    cut.selector = cp_json_pool_own(pool, json_pack("{s:o}", "$and", both));
    return cut.selector && bound ? cp_count_find_body(pool, &cut, cap) : NULL;
}

/* The count of src by one keys-only _find of body, answered at most
 * limit rows: NULL, or why not (*failure set when the transport failed). */
static const char *count_find(apr_pool_t *pool, const cp_transport *tr, const cp_source *src,
                              const char *url, const char *body, int limit,
                              const cp_answer **answer, cp_transport_failure *failure)
{
    if (!body) {
        return "its query could not be built";
    }
    if (!tr->find(tr->baton, url, body, src->find->sort, answer, failure)) {
        return failure->reason;
    }
    return cp_answer_overfull(pool, *answer, limit);
}

/* The document id a key of the index [_id] holds (JSON text: [v], or [v,
 * BEYOND]), as _all_docs' key: a string, else NULL (an open end: every id
 * is a string, so a bound of another kind bounds none of them, or all). */
static const char *id_of_key(apr_pool_t *pool, const char *key)
{
    const json_t *parsed = key ? cp_json_load(pool, key, strlen(key), NULL) : NULL;
    const json_t *id = json_array_get(parsed, 0);

    return json_is_string(id) ? cp_json_text(pool, id) : NULL;
}

/* The _all_docs beside a _find URL (.../_find: the database's, or its
 * partition's), or NULL. */
static const char *all_docs_url(apr_pool_t *pool, const char *find_url)
{
    apr_size_t len = strlen(find_url);

    return len > 6 && !strcmp(find_url + len - 6, "/_find")
           ? apr_pstrcat(pool, apr_pstrndup(pool, find_url, len - 5), "_all_docs", NULL)
           : NULL;
}

/* A GET of the index's view for the count: NULL, or why not. */
static const char *look(const cp_transport *tr, const char *url, const char **text,
                        apr_size_t *len, cp_transport_failure *failure)
{
    return tr->get(tr->baton, url, text, len, failure) ? NULL : failure->reason;
}

const char *cp_count_read(apr_pool_t *pool, const cp_transport *tr, const cp_source *src,
                          const char *url, const char *index_view,
                          const apr_array_header_t *index_fields, int cap,
                          cp_count_walk *walk, const cp_answer **answer,
                          cp_transport_failure *failure)
{
    const cp_find_spec *spec = src->find;
    cp_find_spec named = *spec;
    const char *low, *high, *prefix, *text, *reason, *bound = NULL;
    const json_t *value;
    apr_int64_t skip = cap + 1 > LOOK_ROWS ? cap + 1 - LOOK_ROWS : 0;
    apr_size_t len;
    cp_count_cut cut = CP_COUNT_CUT_NONE;
    int open = -1;

    apr_array_header_t *id_field = NULL;
    const char *field;

    memset(walk, 0, sizeof(*walk));
    memset(failure, 0, sizeof(*failure));
    *answer = NULL;
    /* sorted by _id alone, with no JSON index known: CouchDB's _find reads
     * its special index, _all_docs, whose rows bound the count as a JSON
     * index's view does (one row a document, its id the key) */
    if (!index_view && spec->sort->count == 0 && (index_view = all_docs_url(pool, url))) {
        id_field = apr_array_make(pool, 1, sizeof(const char *));
        APR_ARRAY_PUSH(id_field, const char *) = "_id";
        index_fields = id_field;
    }
    /* what bounds the count: its index's view, as fresh as the _find */
    if (!index_view || !index_fields) {
        bound = "no view of the location's JSON index (CouchPageIndex's, or the one "
                "_explain names) is known for it";
    }
    else if (spec->update == CP_MANGO_FALSE && !spec->index_ddoc) {
        bound = "CouchPageUpdate false reads the index's view only where CouchPageIndex "
                "names it";
    }
    else if ((open = cp_mango_index_envelope(pool, spec->selector, index_fields, &low, &high,
                                             &prefix)) < 0
             || (!id_field && !use_index_of(pool, index_view, &named))) {
        bound = "its selector fixes every field of its index";
    }
    else if (id_field) {
        /* _all_docs' keys are the ids themselves */
        low = id_of_key(pool, low);
        high = id_of_key(pool, high);
        open = -1;
    }
    if (bound) {
        /* the count would be bounded in rows only: CouchDB reads each
         * document of the index's range until cap + 1 match. Made only
         * where the operator's CouchPageCount asks for it */
        const char *key = apr_psprintf(pool, "CP0434 %pp", src->location);
        int asked = src->count.mode != CP_COUNT_UNSET;

        if (tr->first_time(tr->baton, key, strlen(key))) {
            tr->log(tr->baton, CP_LOG_INFO, "CP0434", asked
                    ? apr_psprintf(pool, "the count of %s reads every document of its "
                                   "index's range until %d match (the rows it counts are "
                                   "bounded, the documents CouchDB reads are not): %s. Name "
                                   "a JSON index with CouchPageIndex, or set CouchPageCount "
                                   "none", src->uri, cap + 1, bound)
                    : apr_psprintf(pool, "the rows of %s are not counted: %s, so a count "
                                   "would read every document of its index's range until "
                                   "%d match. Name a JSON index with CouchPageIndex, or set "
                                   "CouchPageCount capped N to count them so", src->uri,
                                   bound, cap + 1));
        }
        if (!asked) {
            return NULL;   /* walk->known 0: the pages are numbered relative to themselves */
        }
        reason = count_find(pool, tr, src, url, cp_count_find_body(pool, spec, cap), cap + 1,
                            answer, failure);
        if (!reason) {
            cp_count_from_rows((apr_int64_t)cp_answer_rows(*answer), cap, walk);
        }
        return reason;
    }
    /* the (cap + 1)-th row of the index's range, keys only, and the rows
     * just before it */
    if ((reason = look(tr, apr_pstrcat(pool, index_view, cp_count_look_query(
                           pool, spec, low, high, skip, (int)(cap + 1 - skip)), NULL),
                       &text, &len, failure))) {
        return reason;
    }
    cut = cp_count_cut_from_look(pool, text, len, open, skip, cap, &value);
    if (cut == CP_COUNT_CUT_BEFORE && !id_field) {
        /* the rows read tie with that row: the row before their group */
        if (!(text = cp_count_before_query(pool, spec, prefix, value, low, high))) {
            return "its index's key cannot be written";
        }
        if ((reason = look(tr, apr_pstrcat(pool, index_view, text, NULL), &text, &len,
                           failure))) {
            return reason;
        }
        cut = cp_count_cut_from_look(pool, text, len, open, 0, 0, &value);
        cut = cut == CP_COUNT_CUT_NONE ? CP_COUNT_CUT_EMPTY
            : cut == CP_COUNT_CUT_EMPTY ? CP_COUNT_CUT_AT : CP_COUNT_CUT_UNREAD;
    }
    switch (cut) {
    case CP_COUNT_CUT_NONE:
        /* at most cap rows in the range: each read once, the count exact */
        reason = count_find(pool, tr, src, url, cp_count_find_body(pool, &named, cap),
                            cap + 1, answer, failure);
        if (!reason) {
            cp_count_from_rows((apr_int64_t)cp_answer_rows(*answer), cap, walk);
        }
        return reason;
    case CP_COUNT_CUT_EMPTY:
        /* the range's first cap + 1 rows tie: none before them to count */
        walk->known = walk->at_least = 1;
        return NULL;
    case CP_COUNT_CUT_AT:
        if (!cp_mango_value_comparable(value)) {
            return "the sort value its count stops at is one _find cannot compare";
        }
        field = open < 0 ? "_id" : APR_ARRAY_IDX(index_fields, open, const char *);
        reason = count_find(pool, tr, src, url, cp_count_cut_body(pool, &named, field, value,
                                                                  cap), cap + 1, answer,
                            failure);
        if (!reason) {
            /* the matches among the range's first rows, at most cap;
             * there are more rows past them */
            walk->known = walk->at_least = 1;
            walk->total = (apr_int64_t)cp_answer_rows(*answer);
            walk->total = walk->total > cap ? cap : walk->total;
        }
        return reason;
    default:
        return "its index's view answered what the count cannot read";
    }
}

/* A _find location's count (cp_count_read). A count that fails leaves the
 * page unnumbered, as a location without a count is: it is logged, never
 * the page's fault. */
static void read_count(apr_pool_t *pool, const cp_transport *tr, const cp_source *src,
                       const char *url, const char *index_view,
                       const apr_array_header_t *index_fields, int cap, cp_count_walk *walk)
{
    cp_transport_failure failure;
    const cp_answer *answer;
    const char *reason = cp_count_read(pool, tr, src, url, index_view, index_fields, cap,
                                       walk, &answer, &failure);

    if (!reason) {
        if (tr->debug && walk->known) {
            tr->log(tr->baton, CP_LOG_DEBUG, "CP0430", apr_psprintf(pool, "the count of %s: "
                    "%s%" APR_INT64_T_FMT " rows (CouchPageCount reads at most %d)", src->uri,
                    walk->at_least ? "at least " : "", walk->total, cap + 1));
        }
        return;
    }
    memset(walk, 0, sizeof(*walk));
    tr->log(tr->baton, CP_LOG_INFO, "CP0431", apr_psprintf(pool, "the rows of %s are not "
            "counted (%s): the page is numbered relative to itself", src->uri,
            cp_fault_loggable(pool, reason)));
}

const cp_keyset_count *cp_count_for_page(apr_pool_t *pool, const cp_transport *tr,
                                         const cp_source *src, const char *url,
                                         const char *index_view,
                                         const apr_array_header_t *index_fields, int cap,
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
            read_count(pool, tr, src, url, index_view, index_fields, cap, walk);
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

const char *cp_count_group_token(apr_pool_t *pool, const json_t *key, apr_int64_t place,
                                 const cp_count_walk *walk, const cp_token_room *room)
{
    cp_token_room made;
    const char *text;

    /* made as a counted page makes its tokens, then stamped as it stamps
     * them */
    cp_count_group_room(room, &made);
    if (!(text = cp_token_for_row(pool, &made, key, NULL, 0))) {
        return NULL;
    }
    stamp_at(pool, &text, place, walk, room);
    return text;
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
