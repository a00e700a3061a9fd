/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mod_couchpage_find: a Mango _find location's page (CouchPageView
 * .../DB/_find), by keyset: one POST .../_find, the selector filled with
 * this request's values, CouchDB's warnings logged once a location and
 * child; or, where the selector is a key range of the index CouchPageIndex
 * names (learnt from its design document once a minute a child), numbered
 * from that index's view: by keyset, one query a page (and a range's
 * probes; with page links, one more for the pages behind). Its
 * directives are mod_couchpage_config.c's, and whether they suit the
 * location's view mod_couchpage_check.c's. The request is read and
 * answered by mod_couchpage_request.c, as a view's is; the query, its
 * token and the page's assembly are the core's (couchpage_find.c,
 * couchpage_keyset.c). Glue.
 */
#include "mod_couchpage_find.h"

#include "http_core.h"
#include "http_log.h"
#include "http_protocol.h"
#include "apr_hash.h"
#include "apr_strings.h"

#include "couchpage_find.h"
#include "couchpage_json.h"
#include "couchpage_keyset.h"
#include "couchpage_page.h"
#include "couchpage_response.h"
#include "couchpage_seal.h"
#include "couchpage_token.h"
#include "mod_couchpage_request.h"
#include "mod_couchpage_backend.h"
#include "mod_couchpage_child.h"
#include "mod_couchpage_expr.h"

APLOG_USE_MODULE(couchpage);

/* The _find locations of this process whose CouchDB warning has been
 * logged: each location's once a child (keyed by its CouchPageView line). */
static couchpage_child_set *find_warned;

static void find_warned_init(apr_pool_t *pchild, server_rec *s)
{
    find_warned = couchpage_child_set_make(pchild, s, "_find locations warned of");
}

/* CouchDB's warning on a _find answer (no index matches; too many
 * documents examined): at warn once a location and child, at debug after,
 * naming the index that would serve the query. */
static void log_find_warning(request_rec *r, const couchpage_dir_conf *conf,
                             const cp_find_sort *sort, const char *warning)
{
    const char *fields = "";
    /* decided once: ap_log_rerror's macro reads its level twice */
    int level = couchpage_child_set_add(find_warned, &conf->view_where,
                                        sizeof(conf->view_where))
                ? APLOG_WARNING : APLOG_DEBUG;
    int i;

    for (i = 0; i < sort->count; i++) {
        fields = apr_pstrcat(r->pool, fields, i ? ", " : "", "\"",
                             sort->fields[i].name, "\"", NULL);
    }
    ap_log_rerror(APLOG_MARK, level, 0, r,
                  CPLOGNO(0322) "CouchDB warns of the _find query of %s: %s (CouchPageView "
                  "%s, %s at %s). Create a JSON index whose fields are the equality "
                  "fields of CouchPageSelector, then %s (POST .../_index), and name it "
                  "with CouchPageIndex", r->uri, couchpage_loggable(r, warning),
                  conf->view.url, conf->view_section,
                  couchpage_directive_where(r->pool, conf->view_where),
                  sort->count ? fields : "nothing: the ids sort");
}

/* A CouchPageSelector string's value for this request (cp_find_fill): its
 * expression's JSON. NULL when the client has been answered with the
 * error. */
typedef struct {
    request_rec *r;
    const couchpage_dir_conf *conf;
} find_fill_baton;

static const json_t *fill_selector_value(void *data, const char *placeholder,
                                         const char **error)
{
    find_fill_baton *baton = data;
    request_rec *r = baton->r;
    const couchpage_key_bound *value = apr_hash_get(baton->conf->find_values, placeholder,
                                                    APR_HASH_KEY_STRING);
    const char *what = apr_psprintf(r->pool, "CouchPageSelector's value '%s'",
                                    couchpage_loggable(r, placeholder));
    const json_t *filled;
    const char *json;

    *error = "answered";
    if (!value) {
        couchpage_send_config_error(r, apr_pstrcat(r->pool, what, " has no expression", NULL));
        return NULL;
    }
    if (!couchpage_eval_value(r, what, "the selector", value, &json)) {
        return NULL;
    }
    if (!json) {
        couchpage_send_config_error(r, apr_pstrcat(r->pool, what, " yields nothing", NULL));
        return NULL;
    }
    filled = cp_json_load(r->pool, json, strlen(json), error);
    if (!filled) {
        couchpage_send_config_error(r, apr_pstrcat(r->pool, what, " could not be read: ",
                                                   *error ? *error : "unreadable", NULL));
    }
    return filled;
}

/* The location's selector with this request's values (cp_find_fill), or
 * NULL when the client has been answered with the error. */
static const json_t *request_selector(request_rec *r, const couchpage_dir_conf *conf)
{
    find_fill_baton baton = { r, conf };
    const json_t *selector = conf->find_selector ? conf->find_selector
                           : cp_json_pool_own(r->pool, json_object());
    const char *reason = NULL;

    if (!conf->find_values || !apr_hash_count(conf->find_values)) {
        return selector;
    }
    selector = cp_find_selector_fill(r->pool, selector, fill_selector_value, &baton, &reason);
    if (!selector) {
        return NULL;
    }
    /* an expression's value of a kind its operator does not take is the
     * configuration's: %{json:...} makes strings */
    if ((reason = cp_find_check_selector(r->pool, selector))) {
        couchpage_send_config_error(r, apr_pstrcat(r->pool, "CouchPageSelector with this "
                                                   "request's values: the selector ",
                                                   reason, NULL));
        return NULL;
    }
    return selector;
}

/* A _find location's request: the client's
 * (couchpage_read_client_request, its token unsealed as page_conf's), its
 * token (view_tokens: a view's too), where the query goes and what it
 * asks: 1, or 0 when the client has been answered with the error. */
static int read_find_request(request_rec *r, const couchpage_dir_conf *conf,
                             const couchpage_dir_conf *page_conf, int view_tokens,
                             couchpage_page_request *req, cp_token *token,
                             const char **url, cp_find_spec *spec)
{
    const char *reason = NULL;
    cp_token_rows rows;
    int i;

    memset(spec, 0, sizeof(*spec));
    spec->sort = &conf->find_sort[conf->view.descending != 0];
    if (!couchpage_read_client_request(r, page_conf, req)) {
        return 0;
    }
    rows = cp_keyset_token_rows(spec->sort, view_tokens);
    if ((reason = cp_token_decode(r->pool, req->token_text, &rows, token))) {
        couchpage_send_bad_request(r, reason);
        return 0;
    }
    if ((reason = cp_plan_index_url(r->pool, &conf->view, req->partition, url))) {
        couchpage_send_bad_request(r, reason);
        return 0;
    }
    if (!(spec->selector = request_selector(r, conf))) {
        return 0;
    }
    spec->index_ddoc = conf->find_index_ddoc;
    spec->index_name = conf->find_index_name;
    /* a word _find does not take (update lazy) never gets here:
     * couchpage_merged_fault refused the configuration */
    (void)cp_find_flag_named(conf->view.update, &spec->update);
    (void)cp_find_flag_named(conf->view.stable, &spec->stable);
    if (conf->fields) {
        json_t *fields = cp_json_pool_own(r->pool, json_array());

        for (i = 0; i < conf->fields->nelts; i++) {
            json_array_append_new(fields,
                                  json_string(APR_ARRAY_IDX(conf->fields, i, const char *)));
        }
        spec->fields = fields;
    }
    return 1;
}

/* What this child learnt of the indexes _find locations name, by design
 * document and index: {"view": "/_design/DDOC/_view/NAME", "fields":
 * [...]} when the index can number pages, "" when it cannot; learnt again
 * after a minute, by one request of the child while the others use the old
 * note, so that an index made, changed or dropped is followed. */
static couchpage_child_set *index_notes;
#define INDEX_NOTE_MAX_AGE apr_time_from_sec(60)

static void index_notes_init(apr_pool_t *pchild, server_rec *s)
{
    index_notes = couchpage_child_set_make(pchild, s, "the indexes of _find locations");
}

/* The URL of the location's database (or partition) followed by rest. */
static const char *location_url(request_rec *r, const couchpage_dir_conf *conf,
                                const char *rest)
{
    const char *url = conf->view.url;

    /* the location's URL ends with its index path, /_find */
    return apr_pstrcat(r->pool, apr_pstrndup(r->pool, url,
                                             strlen(url) - strlen(conf->view.index_path)),
                       rest, NULL);
}

/* The design document's path: CouchPageIndex names it with or without
 * _design/, as use_index does. */
static const char *ddoc_path(request_rec *r, const char *ddoc)
{
    if (!strncmp(ddoc, "_design/", 8)) {
        ddoc += 8;
    }
    return apr_pstrcat(r->pool, "/_design/", ap_escape_path_segment(r->pool, ddoc), NULL);
}

/* Learns the location's index from CouchDB: its design document, and
 * (outside partitions, with look) one look at its view, which must answer:
 * a Mango index of pouchdb-server is no view. The note (index_notes), or
 * NULL when CouchDB could not tell now. */
static const char *learn_index(request_rec *r, const couchpage_dir_conf *conf, int look,
                               couchpage_backend_stats *stats)
{
    const char *path = ddoc_path(r, conf->find_index_ddoc), *text, *why, *view_name;
    const char *view_path = NULL;
    couchpage_backend_result result;
    apr_array_header_t *fields = NULL;
    apr_size_t len;
    json_t *note;
    int i;

    /* the design document is the database's, partitioned or not */
    if (couchpage_backend_get(r, &conf->backend, apr_pstrcat(r->pool, conf->view.db_url, path,
                                                             NULL),
                              &text, &len, stats, &result) != OK) {
        if (result.backend_status < 400 || result.backend_status > 499) {
            ap_log_rerror(APLOG_MARK, APLOG_DEBUG, 0, r, CPLOGNO(0370) "the index of %s "
                          "could not be learnt now (%s): the page goes by _find",
                          r->uri, result.reason);
            return NULL;
        }
        why = apr_pstrcat(r->pool, "its design document cannot be read (", result.reason,
                          ")", NULL);
    }
    else {
        why = cp_find_index_fields(r->pool, text, len, conf->find_index_name, &view_name,
                                   &fields);
    }
    if (!why) {
        view_path = apr_pstrcat(r->pool, path, "/_view/",
                                ap_escape_path_segment(r->pool, view_name), NULL);
    }
    if (!why && look && !conf->view.is_partitioned && !conf->partition) {
        if (couchpage_backend_get(r, &conf->backend,
                                  location_url(r, conf, apr_pstrcat(r->pool, view_path,
                                                                    "?limit=0&reduce=false",
                                                                    NULL)),
                                  &text, &len, stats, &result) != OK) {
            if (result.backend_status < 400 || result.backend_status > 499) {
                return NULL;
            }
            why = apr_pstrcat(r->pool, "its view does not answer (", result.reason, ")", NULL);
        }
    }
    ap_log_rerror(APLOG_MARK, APLOG_DEBUG, 0, r, CPLOGNO(0371) "the index of the _find "
                  "location %s (CouchPageIndex %s%s%s, %s at %s) %s%s", r->uri,
                  conf->find_index_ddoc, conf->find_index_name ? " " : "",
                  conf->find_index_name ? conf->find_index_name : "", conf->view_section,
                  couchpage_directive_where(r->pool, conf->find_index_where),
                  why ? "cannot number its pages: " : "is a JSON index: its view numbers "
                  "pages of equalities on its leading fields",
                  why ? why : "");
    if (why) {
        return "";
    }
    note = cp_json_pool_own(r->pool, json_object());
    json_object_set_new(note, "view", json_string(view_path));
    json_object_set_new(note, "fields", json_array());
    for (i = 0; i < fields->nelts; i++) {
        json_array_append_new(json_object_get(note, "fields"),
                              json_string(APR_ARRAY_IDX(fields, i, const char *)));
    }
    return cp_json_text(r->pool, note);
}

int couchpage_find_by_index(request_rec *r, const couchpage_dir_conf *conf,
                            couchpage_backend_stats *stats,
                            const couchpage_dir_conf **by_index)
{
    const char *key, *text, *low, *high, *why, *url;
    const json_t *note, *selector, *each;
    apr_array_header_t *fields;
    couchpage_dir_conf *copy;
    size_t i;
    int again;

    *by_index = NULL;
    if (!conf->find_index_ddoc) {
        return 1;
    }
    key = apr_pstrcat(r->pool, conf->view.db_url, ddoc_path(r, conf->find_index_ddoc), "\n",
                      conf->find_index_name ? conf->find_index_name : "", NULL);
    text = couchpage_child_note_get(index_notes, key, INDEX_NOTE_MAX_AGE, r->pool, &again);
    if (!text || again) {
        /* one request of the child learns it (again: the design document
         * alone, when the old note says the backend's indexes are views);
         * when CouchDB cannot tell now, the old note serves a minute more,
         * and without one the page goes by _find (the next request asks
         * again) */
        const char *learnt = learn_index(r, conf, !text || !*text, stats);

        if (learnt) {
            couchpage_child_note_put(index_notes, key, learnt);
            text = learnt;
        }
        else if (!text) {
            return 1;
        }
    }
    if (!*text || !(note = cp_json_load(r->pool, text, strlen(text), NULL))) {
        return 1;
    }
    if (!(selector = request_selector(r, conf))) {
        return 0;
    }
    fields = apr_array_make(r->pool, 4, sizeof(const char *));
    json_array_foreach(json_object_get(note, "fields"), i, each) {
        APR_ARRAY_PUSH(fields, const char *) = json_string_value(each);
    }
    why = cp_find_index_range(r->pool, selector, &conf->find_sort[conf->view.descending != 0],
                              fields, &low, &high);
    if (why) {
        ap_log_rerror(APLOG_MARK, APLOG_DEBUG, 0, r, CPLOGNO(0372) "the page of %s goes by "
                      "_find, unnumbered: %s", r->uri, why);
        return 1;
    }
    copy = apr_pmemdup(r->pool, conf, sizeof(*conf));
    url = location_url(r, conf, json_string_value(json_object_get(note, "view")));
    if ((why = cp_view_init(r->pool, url, &copy->view))) {
        ap_log_rerror(APLOG_MARK, APLOG_DEBUG, 0, r, CPLOGNO(0373) "the page of %s goes by "
                      "_find: its index's view %s %s", r->uri, url, why);
        return 1;
    }
    /* the index's view: its rows in _find's order, each with its document,
     * never reduced (its reduce is _count) */
    copy->view.include_docs = 1;
    copy->view.reduce = 0;
    copy->low.json = low;
    copy->low.expr = NULL;
    copy->high.json = high;
    copy->high.expr = NULL;
    copy->range_set = low != NULL;
    copy->find_index_fields = fields;
    *by_index = copy;
    return 1;
}

/* The rows of a _find answer, as cp_keyset_page_assemble takes them. */
static apr_array_header_t *answer_rows(apr_pool_t *pool, const cp_answer *answer)
{
    apr_size_t n = cp_answer_rows(answer), i;
    apr_array_header_t *rows = apr_array_make(pool, (int)n + 1, sizeof(const cp_row *));

    for (i = 0; i < n; i++) {
        APR_ARRAY_PUSH(rows, const cp_row *) = cp_answer_row(answer, i);
    }
    return rows;
}

/* The rows of a numbered page, by keyset over the index's view (index,
 * couchpage_find_by_index's): its one query (and the probes of a key
 * range or a partition, with it in one POST), from the token's row (its
 * own left out, unless the page starts at it: an old link's, a view's
 * token, located first when bounded), and CouchDB's count of them; with
 * page links, the rows the other way from that row (*behind), by one
 * query more in the same POST. 1, or 0 when the client has been answered
 * with the error. */
static int read_index_rows(request_rec *r, const couchpage_dir_conf *index,
                           couchpage_page_request *req, cp_token *token,
                           const cp_find_sort *sort, int limit, int links,
                           couchpage_backend_stats *stats, apr_array_header_t **rows,
                           apr_array_header_t **behind, cp_keyset_count *counted)
{
    int backward = cp_keyset_reads_backward(token), dropped;
    apr_array_header_t *queries;
    const char *reason;

    reason = cp_plan_init(r->pool, &req->plan, &index->view, req->partition, index->low.json,
                          index->high.json, req->count, links);
    if (reason) {
        couchpage_send_bad_request(r, reason);
        return 0;
    }
    req->with_docid = 1;
    if (token->from == CP_FROM_ROW) {
        /* a view's token: its row in the index's view, as the view
         * location that handed it out read it */
        req->start = *token;
        if (token->digest) {
            if (!couchpage_locate_start(r, index, req, stats)) {
                return 0;
            }
        }
        else if ((reason = cp_plan_check_start(r->pool, &req->plan, &req->start))) {
            couchpage_send_bad_request(r, reason);
            return 0;
        }
        *token = req->start;
    }
    queries = cp_keyset_index_queries(r->pool, &req->plan, index->find_index_fields, token,
                                      limit, cp_keyset_behind_limit(token, req->count, links));
    if (!queries) {
        couchpage_send_bad_request(r, "the start token cannot bound a query");
        return 0;
    }
    if (!couchpage_fetch_answers(r, index, req, queries, stats)) {
        return 0;
    }
    *rows = cp_keyset_index_rows(r->pool, cp_plan_query(queries, CP_QUERY_FORWARD)->answer,
                                 token, sort, index->find_index_fields, &dropped);
    *behind = cp_keyset_index_behind(r->pool, queries, token, sort, index->find_index_fields);
    cp_keyset_index_count(queries, backward, dropped, counted);
    return 1;
}

/* The rows of a page by _find: one POST .../_find. 1, or 0 when the client
 * has been answered with the error. */
static int read_find_rows(request_rec *r, const couchpage_dir_conf *conf,
                          const cp_find_spec *spec, const cp_token *token,
                          const char *url, int limit, couchpage_backend_stats *stats,
                          apr_array_header_t **rows)
{
    const char *body = cp_keyset_find_body(r->pool, spec, token, limit);
    couchpage_backend_result result;
    const cp_answer *answer;
    const char *reason;
    int status;

    if (!body) {
        couchpage_send_bad_request(r, "the start token cannot bound a query");
        return 0;
    }
    status = couchpage_backend_find(r, &conf->backend, url, body, spec->sort, &answer,
                                    stats, &result);
    if (status != OK) {
        if (token->key && result.backend_status == HTTP_BAD_REQUEST) {
            /* the values a client's token put into the query */
            ap_log_rerror(APLOG_MARK, APLOG_INFO, 0, r, CPLOGNO(0323) "bad request: "
                          "CouchDB refused the _find query of the start token (%s)",
                          result.reason);
            couchpage_send_error(r, HTTP_BAD_REQUEST, "bad_request",
                                 "the start token makes a query CouchDB refuses");
            return 0;
        }
        couchpage_send_backend_error(r, conf, &result);
        return 0;
    }
    if ((reason = cp_answer_overfull(r->pool, answer, limit))) {
        couchpage_refuse_overfull(r, conf, reason);
        return 0;
    }
    if (answer->warning) {
        log_find_warning(r, conf, spec->sort, answer->warning);
    }
    *rows = answer_rows(r->pool, answer);
    return 1;
}

/* A _find location's page: one POST .../_find, or, numbered, one read of
 * its index's view (index; with page links, and the rows behind, in the
 * same batch); a second only when the rows beyond the token's row all went
 * meanwhile (cp_keyset_page_assemble then asks for the first or the Last
 * page). */
int couchpage_find_serve(request_rec *r, const couchpage_dir_conf *conf,
                         const couchpage_dir_conf *index, couchpage_backend_stats *stats)
{
    couchpage_page_request req;
    cp_token token;
    cp_find_spec spec;
    cp_token_from from;
    cp_keyset_count counted;
    apr_array_header_t *rows, *behind = NULL;
    const char *url, *start;
    cp_page page;
    int status, limit, links = couchpage_links_shown(conf);
    /* a numbered location with page links handed out links of its index's
     * view when a view location's page served it: they keep working, at
     * their row, and sealed as they were, for that view */
    const couchpage_dir_conf *page_conf = index && links ? index : conf;

    memset(&req, 0, sizeof(req));
    if (!read_find_request(r, conf, page_conf, page_conf != conf, &req, &token, &url, &spec)) {
        return OK;
    }
    start = req.args.start;
    limit = cp_keyset_limit(req.count, links);
    for (;;) {
        if (index ? !read_index_rows(r, index, &req, &token, spec.sort, limit, links, stats,
                                     &rows, &behind, &counted)
                  : !read_find_rows(r, conf, &spec, &token, url, limit, stats, &rows)) {
            couchpage_log_backend_requests(r, stats, NULL);
            return OK;
        }
        from = cp_keyset_page_assemble(r->pool, &token, rows, behind, req.count, links,
                                       index ? &counted : NULL, start, &page);
        if (from == token.from) {
            break;
        }
        /* the rows beyond the token's row went: the first or the Last page,
         * whose token this page then is */
        memset(&token, 0, sizeof(token));
        token.from = from;
        start = from == CP_FROM_LAST ? CP_TOKEN_LAST : NULL;
        if (start && conf->token_key) {
            const char **tokens[] = { &start };
            const char *reason = cp_seal_tokens(r->pool, conf->token_key,
                                                couchpage_token_binding(r, page_conf), tokens,
                                                1);

            if (reason) {
                return couchpage_send_seal_error(r, reason);
            }
        }
    }
    /* a row whose sort values _find cannot compare ends the walk by _find
     * there: its link is left out rather than one that fails (CouchDB
     * answers its query 500); its index's view, which takes any key, pages
     * such rows where it numbers the location */
    if (!index && cp_find_withhold_unbounding(r->pool, spec.sort, &page)) {
        ap_log_rerror(APLOG_MARK, APLOG_INFO, 0, r, CPLOGNO(0326)
                      "a link of %s is left out: a row at its edge has a sort value "
                      "holding an array inside an array, which CouchDB's _find cannot "
                      "compare (CouchPageView %s); the pages past it cannot be reached "
                      "by _find", r->uri, conf->view.url);
    }
    couchpage_log_backend_requests(r, stats, &page);
    status = couchpage_send_page(r, page_conf, &req, &page);
    couchpage_log_page(r, page_conf, &page, status == OK ? r->status : status);
    return status;
}

void couchpage_find_register(void)
{
    ap_hook_child_init(find_warned_init, NULL, NULL, APR_HOOK_MIDDLE);
    ap_hook_child_init(index_notes_init, NULL, NULL, APR_HOOK_MIDDLE);
}
