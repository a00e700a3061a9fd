/* SPDX-License-Identifier: Apache-2.0 */
/*
 * couchpage_serve: a location's page driven from start to end behind a
 * transport (couchpage_serve.h). A view location's page: its token opened
 * and decoded, a bounded token's row located (clamp probes, then the
 * locating query), every query asked at once and only the rare widening
 * asked again. A _find location's: by keyset over POST .../_find, or,
 * where its selector is a key range of the index CouchPageIndex names
 * (learnt from the design document, kept in the child's memory a minute),
 * numbered from that index's view (a source that names what is read
 * there): by keyset too, one read a page, and with page links one more
 * the other way in the same batch. Every keyset page is couchpage_keyset's.
 * Every answer is checked here, its faults typed for the glue to answer.
 * httpd-free.
 */
#include "couchpage_serve.h"

#include <string.h>
#include <apr_escape.h>
#include <apr_strings.h>

#include "couchpage_jump.h"
#include "couchpage_keyset.h"
#include "couchpage_learn.h"
#include "couchpage_mango.h"
#include "couchpage_token.h"
#include "couchpage_changed.h"

#define HTTP_BAD_REQUEST 400
#define HTTP_INTERNAL_SERVER_ERROR 500
#define HTTP_BAD_GATEWAY 502
#define HTTP_SERVICE_UNAVAILABLE 503
#define HTTP_GATEWAY_TIME_OUT 504

/* One page being served. */
typedef struct {
    apr_pool_t *pool;
    const cp_source *src;
    const cp_request *req;
    const cp_transport *tr;
    int ties_apart;   /* _find pages ask the ties and the rest apart, */
    const char *index_view;   /* through the index of this view (its partition's) */
    const apr_array_header_t *index_fields;   /* and these fields */
    cp_walk *walk;    /* the walk's start, which its tokens carry (couchpage_changed) */
} serving;

static void log_line(const serving *s, int level, const char *code, const char *text)
{
    s->tr->log(s->tr->baton, level, code, text);
}

/* " (CouchPageView URL, SECTION at FILE:LINE)" of the view read. */
static const char *view_context(const serving *s, const cp_view *view)
{
    return apr_psprintf(s->pool, " (CouchPageView %s, %s)", view->url,
                        s->tr->where(s->tr->baton, CP_WHERE_VIEW));
}

/* The backend's trouble, in full, for the error log with the request's
 * path and the view; visitors learn only which kind it was. */
static cp_fault *backend_fault(const serving *s, const cp_source *src,
                               const cp_transport_failure *failure)
{
    const char *hint = cp_fault_backend_hint(failure->backend_status, failure->reason,
                                             src->range_set), *text;

    if (failure->past_deadline) {
        /* the operator's knob is the deadline, not mod_proxy's timeout */
        text = apr_psprintf(s->pool, "the backend reads for %s were stopped: %s "
                            "(CouchPageBackendDeadline %" APR_TIME_T_FMT " s; CouchPageView "
                            "%s, %s)", src->uri, failure->reason,
                            apr_time_sec(src->deadline), src->view->url,
                            s->tr->where(s->tr->baton, CP_WHERE_VIEW));
    }
    else {
        text = apr_psprintf(s->pool, "the backend queries for %s failed with %d: %s%s%s",
                            src->uri, failure->status, failure->reason, hint,
                            view_context(s, src->view));
    }
    switch (failure->status) {
    case HTTP_GATEWAY_TIME_OUT:
        return cp_fault_make(s->pool, CP_FAULT_BACKEND, failure->status, "backend_timeout",
                             "the backend did not answer in time", CP_LOG_ERR,
                             failure->past_deadline ? "CP0183" : "CP0101", text);
    case HTTP_SERVICE_UNAVAILABLE:
        return cp_fault_make(s->pool, CP_FAULT_BACKEND, failure->status,
                             "backend_unavailable", "the backend is unavailable", CP_LOG_ERR,
                             "CP0101", text);
    case HTTP_BAD_GATEWAY:
        return cp_fault_make(s->pool, CP_FAULT_BACKEND, failure->status, "backend_error",
                             "the backend could not serve this page", CP_LOG_ERR, "CP0101",
                             text);
    default:
        return cp_fault_make(s->pool, CP_FAULT_SERVER, failure->status, "internal_error",
                             "the server could not serve this page", CP_LOG_ERR, "CP0101",
                             text);
    }
}

/* An answer with more rows than its query's limit (a backend that ignored
 * it): 502 on every kind of location. */
static cp_fault *overfull_fault(const serving *s, const cp_view *view, const char *reason)
{
    return cp_fault_make(s->pool, CP_FAULT_BACKEND, HTTP_BAD_GATEWAY, "backend_error",
                         "the backend could not serve this page", CP_LOG_ERR, "CP0181",
                         apr_psprintf(s->pool, "the backend answered a query for %s with %s: "
                                      "refused%s", s->src->uri, reason,
                                      view_context(s, view)));
}

/* Asks the queries a multi-query answer cut off after k of n results left
 * waiting, each alone: 1, or 0 with *failure. Which it was is known only
 * now: CouchDB refusing query k + 1 (a reversed range), or a connection
 * lost. */
static int ask_alone(const serving *s, const cp_plan *plan, int with_docid,
                     apr_array_header_t *queries, const apr_array_header_t *alone, int n,
                     cp_transport_failure *failure)
{
    cp_plan_answers answers = { { NULL }, 0 };
    int k = n - alone->nelts;
    int ok = s->tr->ask(s->tr->baton, plan->view->backend, plan->index_url, with_docid,
                        alone, 1, &answers, failure);

    if (ok) {
        cp_plan_take_answers(queries, &answers);
        log_line(s, CP_LOG_INFO, "CP0119", apr_psprintf(s->pool, "the multi-query read "
                 "failed in flight (cut off after %d of %d results); the other queries, "
                 "asked alone, were answered", k, n));
    }
    else if (failure->backend_status >= 400 && failure->backend_status < 500) {
        /* the fault tells CouchDB's words, at the level they deserve */
        if (s->tr->debug) {
            log_line(s, CP_LOG_DEBUG, "CP0120", apr_psprintf(s->pool, "CouchDB ended its "
                     "multi-query answer after %d of %d results: it refused query %d (%d)",
                     k, n, k + 1, failure->backend_status));
        }
    }
    else {
        log_line(s, CP_LOG_INFO, "CP0121", apr_psprintf(s->pool, "the multi-query read was "
                 "cut off after %d of %d results, and the other queries, asked alone, "
                 "failed too (%s)", k, n, failure->reason));
    }
    return ok;
}

/* Asks the planned queries that wait for an answer, together, and those a
 * cut answer left waiting again, alone: NULL with every answer in and
 * checked (none over its limit), or the fault. A CouchDB 400 on a page
 * that starts at a client's token means the token lies outside the
 * location's key range (CouchDB refuses a reversed range): the client's. */
static const cp_fault *ask(const serving *s, const cp_source *src, const cp_plan *plan,
                           int with_docid, apr_array_header_t *queries)
{
    cp_plan_answers answers = { { NULL }, 0 };
    cp_transport_failure failure;
    const apr_array_header_t *asked = cp_plan_waiting(s->pool, queries), *alone;
    const char *reason;
    int ok;

    cp_plan_ask_seq(plan, asked);
    ok = s->tr->ask(s->tr->baton, plan->view->backend, plan->index_url, with_docid, asked, 0,
                    &answers, &failure);
    if (ok) {
        cp_plan_take_answers(queries, &answers);
        alone = cp_plan_ask_alone(s->pool, queries, &answers);
        if (alone) {
            ok = ask_alone(s, plan, with_docid, queries, alone, asked->nelts, &failure);
        }
    }
    if (!ok) {
        if (s->req->args->start && failure.backend_status == HTTP_BAD_REQUEST) {
            return cp_fault_token_refused(s->pool, failure.reason);
        }
        return backend_fault(s, src, &failure);
    }
    if ((reason = cp_plan_overfull(s->pool, queries))) {
        return overfull_fault(s, src->view, reason);
    }
    return NULL;
}

/* The token as the client sent it (its length capped by the glue), opened
 * where tokens are sealed: bound to the view read and the page's path. */
static const cp_fault *open_token(const serving *s, const cp_source *src,
                                  const char **binding, const char **text)
{
    const char *start = s->req->args->start, *reason;

    *binding = apr_pstrcat(s->pool, src->view->url, "\n", src->uri, NULL);
    *text = start;
    if (!start || !src->token_key) {
        return NULL;
    }
    switch (cp_unseal(s->pool, src->token_key, src->previous_token_key, *binding, start,
                      text, &reason)) {
    case CP_UNSEAL_OPENED:
        return NULL;
    case CP_UNSEAL_REFUSED:
        return cp_fault_bad_request(s->pool, reason);
    case CP_UNSEAL_FAILED:
    default:
        return cp_fault_seal(s->pool, src->uri, reason);
    }
}

/* A bounded token's row, found among the location's rows that share its
 * bounds (the clamp probes, the locating query), becomes *start, a token
 * that holds its key. */
static const cp_fault *locate_start(const serving *s, const cp_source *src,
                                    const cp_plan *plan, int with_docid, cp_token *start)
{
    apr_array_header_t *probes = cp_plan_clamp_probes(s->pool, plan, start), *queries;
    const cp_fault *fault;
    cp_token clamped, located;
    const char *reason;

    /* a client writes a bounded token's keys: the locating query stays
     * within the range, and tells nothing of the rows outside it */
    if (probes && (fault = ask(s, src, plan, with_docid, probes))) {
        return fault;
    }
    if ((reason = cp_plan_clamp(plan, probes, start, &clamped))) {
        return cp_fault_token_refused(s->pool, reason);
    }
    queries = cp_plan_locate(s->pool, plan, &clamped);
    if ((fault = ask(s, src, plan, with_docid, queries))) {
        return fault;
    }
    reason = cp_page_locate(s->pool, queries, &clamped, with_docid, src->view->descending,
                            &located);
    if (reason && !src->token_key) {
        /* a plain token may be forged: refused as any token that names no
         * row of the location, whatever the rows between its keys */
        return cp_fault_token_refused(s->pool, reason);
    }
    if (reason) {
        /* a sealed token is the module's own: the data's doing, which the
         * operator mends */
        return cp_fault_make(s->pool, CP_FAULT_SERVER, HTTP_INTERNAL_SERVER_ERROR,
                             "internal_error", "the page of this link cannot be found: too "
                             "many rows share the start of its key", CP_LOG_ERR, "CP0200",
                             apr_psprintf(s->pool, "the page of a bounded token of %s cannot "
                                          "be found: %s (CouchPageView %s); raise "
                                          "CouchPageMaxTokenLength, so that tokens keep more "
                                          "of such keys", src->uri, reason, src->view->url));
    }
    if ((reason = cp_plan_check_start(s->pool, plan, &located))) {
        return cp_fault_token_refused(s->pool, reason);
    }
    *start = located;
    return NULL;
}

/* A view location's page: every query it needs asked at once; only the rare
 * widening of a query whose answer cannot place the pages behind asks
 * again. */
static const cp_fault *serve_view(const serving *s, const cp_source *src, const char *text,
                                  cp_served *served)
{
    const cp_args *args = s->req->args;
    int with_docid = cp_view_has_docids(src->view);
    const cp_fault *fault;
    const char *reason = NULL;
    const cp_token *from = NULL;
    apr_array_header_t *queries;
    cp_page_answers answers;
    cp_token_room room, made;
    cp_token start;
    cp_plan plan;
    cp_count_walk walk = { 0 };
    cp_page_count counted;
    int cap = 0;

    if (text && (reason = cp_token_decode(s->pool, text, CP_TOKEN_VIEW_ROWS(with_docid),
                                          &start))) {
        return cp_fault_bad_request(s->pool, reason);
    }
    cp_changed_token(s->walk, text ? &start : NULL);
    reason = cp_plan_init(s->pool, &plan, src->view, src->partition, src->low, src->high,
                          s->req->count, src->links);
    plan.update_seq = src->update_seq || s->walk->applies;
    /* bounds merged from several sections, or yielded by expressions, are
     * the configuration's fault; a partition name may be the client's */
    if (reason && cp_plan_check_range(s->pool, src->view, src->low, src->high)) {
        return cp_fault_config(s->pool, src->uri, apr_pstrcat(s->pool, "CouchPageRange: ",
                                                               reason, NULL));
    }
    /* a bounded token's row is checked once located */
    if (!reason && text && !start.digest) {
        reason = cp_plan_check_start(s->pool, &plan, &start);
    }
    if (reason) {
        return cp_fault_bad_request(s->pool, reason);
    }
    if (text && start.digest && (fault = locate_start(s, src, &plan, with_docid, &start))) {
        return fault;
    }
    if (text) {
        from = &start;
    }
    room = cp_source_token_room(src);
    if (src->view->reduce) {
        /* grouped rows are counted as a _find location's are */
        cap = cp_count_cap(&src->count, cp_count_prefer(s->pool, s->req->prefer),
                           &served->preference_applied);
        served->prefer_varies = 1;
        plan.count_cap = !from || from->from == CP_FROM_LAST ? cap : 0;
    }
    cp_count_group_room(&room, &made);
    queries = cp_plan_page(s->pool, &plan, from);
    cp_page_answers_init(&answers, &plan, queries, from, args->start, cap ? &made : &room);
    do {
        if ((fault = ask(s, src, &plan, with_docid, queries))) {
            return fault;
        }
        /* every token carries the walk's mark: room for it */
        served->seq = plan.update_seq ? cp_plan_seq(s->pool, queries) : NULL;
        cp_changed_room(s->pool, s->walk, served->seq, &room, &made);
        answers.counted = cp_count_group_walk(queries, from, cap, &walk, &counted);
    } while (cp_plan_widen(s->pool, &plan, from, cp_page_assemble(s->pool, &answers,
                                                                  &served->page)));
    if ((reason = cp_count_group_page(s->pool, &walk, s->req->count, &room, &served->page))) {
        log_line(s, CP_LOG_DEBUG, "CP0433", apr_psprintf(s->pool, "a page of %s hands out "
                 "tokens without its count: %s", src->uri, reason));
    }
    served->view = src->view;
    return NULL;
}

/* --- a _find location's index ------------------------------------------ */

/* A read that learns the index failed: a 4xx is CouchDB's word that it
 * cannot (1: the note says so); anything else is now's (0: not learnt now,
 * with *late set when the page's reads passed their deadline). */
static int learning_refused(const serving *s, const cp_transport_failure *failure,
                            const cp_fault **late)
{
    if (failure->backend_status >= 400 && failure->backend_status <= 499) {
        return 1;
    }
    if (s->tr->debug) {
        log_line(s, CP_LOG_DEBUG, "CP0370", apr_psprintf(s->pool, "the index of %s could not "
                 "be learnt now (%s): the page goes by _find", s->src->uri, failure->reason));
    }
    *late = failure->past_deadline ? backend_fault(s, s->src, failure) : NULL;
    return 0;
}

/* The URL of rest (/_explain, an index's view) beside the location's
 * _find: in its partition where it has one, as CouchDB reads a
 * partitioned index; NULL for a partition name the page refuses. */
static const char *beside_find(const serving *s, const char *rest)
{
    const char *url;

    if (cp_plan_index_url(s->pool, s->src->view, s->src->partition, &url)) {
        return NULL;
    }
    return cp_view_beside_find(s->pool, url, rest);
}

/* Learns the location's index from CouchDB: the design document
 * CouchPageIndex names, or, without it, the index CouchDB's _explain names
 * for the location's query (this request's selector: its values never
 * change which fields it conditions); and (with look) one look at its
 * view, in the location's partition where it has one, which must answer:
 * a Mango index of pouchdb-server is no view, a global index none in a
 * partition. The note: {"view": PATH, "fields": [...]} when the index can
 * number pages, "" when it cannot; or NULL when CouchDB could not tell now,
 * with *late set when the page's reads passed their deadline (no read
 * follows: the page is a 504). */
static const char *learn_index(const serving *s, int look, const cp_fault **late)
{
    const cp_source *src = s->src;
    const cp_find_spec *spec = src->find;
    const char *path = NULL, *text, *why = NULL, *view_name = NULL, *named, *ddoc = NULL;
    const char *view_path = NULL, *url;
    cp_transport_failure failure;
    apr_array_header_t *fields = NULL;
    apr_size_t len;
    int chosen = 0;

    if (spec->index_ddoc) {
        /* the design document is the database's, partitioned or not */
        path = cp_view_ddoc_path(s->pool, spec->index_ddoc);
        if (!s->tr->get(s->tr->baton, apr_pstrcat(s->pool, src->view->db_url, path, NULL),
                        &text, &len, &failure)) {
            if (!learning_refused(s, &failure, late)) {
                return NULL;
            }
            why = apr_pstrcat(s->pool, "its design document cannot be read (", failure.reason,
                              ")", NULL);
        }
        else {
            why = cp_mango_index_fields(s->pool, text, len, spec->index_name, &view_name,
                                        &fields);
        }
    }
    else if (!(url = beside_find(s, "/_explain"))) {
        return NULL;   /* the page refuses the partition's name */
    }
    else if (!(text = cp_find_body(s->pool, spec, NULL, NULL, 0,
                                   cp_keyset_limit(s->req->count, src->links)))) {
        why = "its query cannot be written";
    }
    else if (!s->tr->post(s->tr->baton, url, text, &text, &len, &failure)) {
        if (!learning_refused(s, &failure, late)) {
            return NULL;
        }
        why = apr_pstrcat(s->pool, "_explain does not answer (", failure.reason, ")", NULL);
    }
    else if (!(why = cp_mango_explain_index(s->pool, text, len, &ddoc, &view_name, &fields))) {
        /* or the database's index that starts the ties at the row */
        if ((chosen = cp_learn_ties_index(s->pool, s->tr, src, &ddoc, &view_name, &fields,
                                          &failure)) < 0 && !learning_refused(s, &failure, late)) {
            return NULL;
        }
        path = cp_view_ddoc_path(s->pool, ddoc);
    }
    if (!why) {
        view_path = apr_pstrcat(s->pool, path, "/_view/",
                                apr_pescape_path_segment(s->pool, view_name), NULL);
    }
    if (!why && look) {
        if (!(url = beside_find(s, view_path))) {
            return NULL;   /* the page refuses the partition's name: nothing learnt */
        }
        if (!s->tr->get(s->tr->baton, apr_pstrcat(s->pool, url,
                                                  "?limit=0&reduce=false&update=false", NULL),
                        &text, &len, &failure)) {
            if (!learning_refused(s, &failure, late)) {
                return NULL;
            }
            why = apr_pstrcat(s->pool, "its view does not answer (", failure.reason, ")",
                              NULL);
        }
    }
    if (s->tr->debug) {
        named = spec->index_ddoc
                ? apr_psprintf(s->pool, "CouchPageIndex %s%s%s, %s", spec->index_ddoc,
                               spec->index_name ? " " : "",
                               spec->index_name ? spec->index_name : "",
                               s->tr->where(s->tr->baton, CP_WHERE_INDEX))
                : ddoc ? apr_psprintf(s->pool, chosen > 0 ? "%s %s, among the database's "
                                      "indexes: _explain names another" : "%s %s, as _explain "
                                      "names it", ddoc, view_name)
                : "as _explain names it";
        log_line(s, CP_LOG_DEBUG, "CP0371", apr_psprintf(s->pool, "the index of the _find "
                 "location %s (%s) %s%s", src->uri, named,
                 why ? "cannot number its pages: " : "is a JSON index: its view numbers "
                 "pages of equalities on its leading fields", why ? why : ""));
    }
    return why ? "" : cp_learn_note(s->pool, view_path, fields, chosen > 0 ? ddoc : NULL,
                                    view_name);
}

/* Where the selector is a key range of the location's index, the source
 * that reads that index's view (its rows in _find's order, each with its
 * document, never reduced: its reduce is _count), in *index; else NULL.
 * NULL, or the fault of a read past the page's deadline. */
static const cp_fault *index_source(serving *s, cp_source **index)
{
    const cp_source *src = s->src;
    const cp_find_spec *spec = src->find;
    const char *key, *text, *low, *high, *fixed, *why, *url, *in_partition;
    const json_t *note, *each;
    apr_array_header_t *fields;
    cp_view *view;
    cp_source *copy;
    size_t i;
    int again;

    *index = NULL;
    /* the design document's note is the database's (its partitions'
     * apart: a global index has no view there); _explain's, the
     * location's query's */
    key = spec->index_ddoc
          ? apr_pstrcat(s->pool, src->view->db_url,
                        cp_view_ddoc_path(s->pool, spec->index_ddoc), "\n",
                        spec->index_name ? spec->index_name : "",
                        src->view->is_partitioned || src->partition_set ? "\n_partition" : "",
                        NULL)
          : apr_psprintf(s->pool, "%s\n_explain\n%pp", src->view->url, src->location);
    text = s->tr->note_get(s->tr->baton, key, CP_SERVE_INDEX_NOTE_MAX_AGE, s->pool,
                           &again);
    if (!text || again) {
        /* one request of the child learns it (again: the design document
         * alone, when the old note says the backend's indexes are views);
         * when CouchDB cannot tell now, the old note serves a minute more,
         * and without one the page goes by _find (the next request asks
         * again) */
        const cp_fault *late = NULL;
        const char *learnt = learn_index(s, !text || !*text, &late);

        if (learnt) {
            s->tr->note_put(s->tr->baton, key, learnt);
            text = learnt;
        }
        else if (late || !text) {
            return late;
        }
    }
    if (!*text || !(note = cp_json_load(s->pool, text, strlen(text), NULL))) {
        return NULL;
    }
    /* the index learnt for the ties, named in the pages' _find bodies */
    src = s->src = cp_learn_source(s->pool, src, note);
    spec = src->find;
    fields = apr_array_make(s->pool, 4, sizeof(const char *));
    json_array_foreach(json_object_get(note, "fields"), i, each) {
        APR_ARRAY_PUSH(fields, const char *) = json_string_value(each);
    }
    why = cp_mango_index_range(s->pool, spec->selector, spec->sort->fields, spec->sort->count,
                               fields, &low, &high, &fixed);
    /* its view in the location's partition (a numbered page's plan names
     * CouchPagePartition's itself) */
    url = json_string_value(json_object_get(note, "view"));
    in_partition = beside_find(s, url);
    url = src->partition_set ? cp_view_db_url(s->pool, src->view, url) : in_partition;
    if (why) {
        /* by _find; the ties apart where the index starts them at the row */
        s->ties_apart = cp_mango_index_starts_at_row(spec->selector, spec->sort->fields,
                                                     spec->sort->count, s->index_fields = fields);
        s->index_view = in_partition;
        if (s->tr->debug) {
            log_line(s, CP_LOG_DEBUG, "CP0372", apr_psprintf(s->pool, "the page of %s goes "
                     "by _find, unnumbered%s%s: %s", src->uri, s->ties_apart ? ", the ties "
                     "asked apart through " : "", s->ties_apart ? url : "", why));
        }
        return s->ties_apart ? NULL : (cp_learn_advise(s->pool, s->tr, src, why), NULL);
    }
    view = apr_pmemdup(s->pool, src->view, sizeof(*view));
    if ((why = cp_view_init(s->pool, url, view))) {
        if (s->tr->debug) {
            log_line(s, CP_LOG_DEBUG, "CP0373", apr_psprintf(s->pool, "the page of %s goes "
                     "by _find: its index's view %s %s", src->uri, url, why));
        }
        return NULL;
    }
    view->include_docs = 1;
    view->reduce = 0;
    copy = apr_pmemdup(s->pool, src, sizeof(*copy));
    copy->view = view;
    copy->low = low;
    copy->high = high;
    copy->range_set = low || high;
    copy->index_fields = fields;
    copy->index_fixed = fixed ? cp_json_load(s->pool, fixed, strlen(fixed), NULL) : NULL;
    *index = copy;
    return NULL;
}

/* --- a _find location's page ------------------------------------------- */

/* The rows of a numbered page, by keyset over the index's view: its one
 * query (and the probes of a key range or a partition, asked with it),
 * from the token's row (its own left out, unless the page starts at it: an
 * old link's, a view's token, located first when bounded), and CouchDB's
 * count of them; with page links, the rows the other way from that row
 * (*behind), by one query more in the same batch. No probes where the
 * token carries the walk's count (*carried) and the view may be as then;
 * *carried->known: the page's count is the walk's (its tokens carry it). */
static const cp_fault *read_index_rows(const serving *s, const cp_source *index,
                                       cp_token *token, int limit, apr_array_header_t **rows,
                                       apr_array_header_t **behind, cp_keyset_count *counted,
                                       cp_count_walk *carried)
{
    const cp_find_sort *sort = index->find->sort;
    int backward = cp_keyset_reads_backward(token), dropped, behind_limit;
    apr_array_header_t *queries;
    cp_changed_state changed;
    const cp_fault *fault;
    const char *reason;
    cp_plan plan;

    memset(carried, 0, sizeof(*carried));
    reason = cp_plan_init(s->pool, &plan, index->view, index->partition, index->low,
                          index->high, s->req->count, index->links);
    if (reason) {
        return cp_fault_bad_request(s->pool, reason);
    }
    plan.update_seq = s->walk->applies;
    plan.place_known = plan.update_seq && !s->walk->begins && s->walk->walk
                       && cp_plan_is_partial(&plan)
                       && cp_count_from_token(token, INT_MAX, carried) && !carried->at_least;
    if (token->from == CP_FROM_ROW) {
        /* a view's token: its row in the index's view, as the view
         * location that handed it out read it */
        if (token->digest) {
            if ((fault = locate_start(s, index, &plan, 1, token))) {
                return fault;
            }
        }
        else if ((reason = cp_plan_check_start(s->pool, &plan, token))) {
            return cp_fault_bad_request(s->pool, reason);
        }
    }
    /* (a bounded token's key is known once located) */
    behind_limit = cp_keyset_behind_limit(token, s->req->count, index->links);
    do {
        queries = cp_keyset_index_queries(s->pool, &plan, index->index_fields,
                                          index->index_fixed, token, limit, behind_limit);
        if (!queries) {
            return cp_fault_bad_request(s->pool, "the start token cannot bound a query");
        }
        if ((fault = ask(s, index, &plan, 1, queries))) {
            return fault;
        }
        s->walk->seq = plan.update_seq ? cp_plan_seq(s->pool, queries) : NULL;
        changed = plan.place_known ? cp_changed_compare(s->pool, s->walk->walk, s->walk->seq)
                                   : CP_CHANGED_NO;
        if (changed == CP_CHANGED_YES) {
            /* written since: the probes after the read, or with it again
             * where their answers disagree with it */
            plan.place_known = 0;
            cp_plan_keyset_probes(s->pool, &plan, queries);
            if ((fault = ask(s, index, &plan, 1, queries))) {
                return fault;
            }
        }
    } while (changed == CP_CHANGED_YES && !cp_plan_seq(s->pool, queries));
    *rows = cp_keyset_index_rows(s->pool, cp_plan_query(queries, CP_QUERY_FORWARD)->answer,
                                 token, sort, index->index_fields, &dropped);
    *behind = cp_keyset_index_behind(s->pool, queries, token, sort, index->index_fields);
    if (plan.place_known) {
        /* other copies answered (a cluster's): an earlier page's count */
        carried->earlier = changed != CP_CHANGED_NO;
        cp_count_keyset(token, carried, counted);
    }
    else {
        cp_keyset_index_count(queries, backward, dropped, counted);
        memset(carried, 0, sizeof(*carried));
        carried->known = s->walk->begins && cp_plan_is_partial(&plan);
    }
    return NULL;
}

/* The rows of one POST .../_find of body. */
static const cp_fault *find_rows(const serving *s, const char *url, const cp_token *token,
                                 const char *body, int limit, apr_array_header_t **rows)
{
    cp_transport_failure failure;
    const cp_answer *answer;
    const char *reason;
    apr_size_t n, i;

    if (!body) {
        return cp_fault_bad_request(s->pool, "the start token cannot bound a query");
    }
    if (!s->tr->find(s->tr->baton, url, body, s->src->find->sort, &answer, &failure)) {
        if (token->key && failure.backend_status == HTTP_BAD_REQUEST) {
            /* the values a client's token put into the query */
            return cp_fault_make(s->pool, CP_FAULT_CLIENT, HTTP_BAD_REQUEST, "bad_request",
                                 "the start token makes a query CouchDB refuses",
                                 CP_LOG_INFO, "CP0323",
                                 apr_psprintf(s->pool, "bad request: CouchDB refused the "
                                              "_find query of the start token (%s)",
                                              failure.reason));
        }
        return backend_fault(s, s->src, &failure);
    }
    if ((reason = cp_answer_overfull(s->pool, answer, limit))) {
        return overfull_fault(s, s->src->view, reason);
    }
    if (answer->warning) {
        cp_learn_warned(s->pool, s->tr, s->src, answer->warning);
    }
    n = cp_answer_rows(answer);
    *rows = apr_array_make(s->pool, (int)n + 1, sizeof(const cp_row *));
    for (i = 0; i < n; i++) {
        APR_ARRAY_PUSH(*rows, const cp_row *) = cp_answer_row(answer, i);
    }
    return NULL;
}

/* The rows of a page by _find: one POST .../_find; with the ties apart,
 * the ties first (or, where the token says its row's ties are few, the
 * rows beyond it from its value, cp_keyset_find_near_body), then, while
 * the page is short, the rows past them a level at a time from the next
 * sort value (cp_keyset_find_rest_body; "": none at that level), else
 * from the row's values at once (cp_keyset_find_part_body,
 * cp_keyset_find_join). */
static const cp_fault *read_find_rows(const serving *s, const char *url,
                                      const cp_token *token, int limit,
                                      apr_array_header_t **rows)
{
    const cp_find_spec *spec = s->src->find;
    int top = 1, whole = 0;
    const char *near = s->ties_apart ? cp_keyset_find_near_body(s->pool, spec, token,
                                                                 s->index_fields, limit, &top)
                                     : NULL;
    const char *ties = s->ties_apart && !near
                       ? cp_keyset_find_part_body(s->pool, spec, token, limit, CP_FIND_TIES) : NULL;
    const cp_fault *fault = find_rows(s, url, token, near ? near : ties ? ties
                                      : cp_keyset_find_body(s->pool, spec, token, limit),
                                      limit, rows);
    int asked = fault || !(ties || (near && !top)) ? 0 : limit - (*rows)->nelts, level = !!near;
    const char *rest;
    apr_array_header_t *past;

    while (asked > 0 && !fault) {
        rest = whole ? NULL : cp_keyset_find_rest_body(s->pool, s->tr, s->index_view,
                                                        s->index_fields, spec, token, asked,
                                                        level++, &top);
        if (rest && !*rest) {
            asked = top ? 0 : asked;
        }
        else if (!(fault = find_rows(s, url, token, rest ? rest : cp_keyset_find_part_body(
                                         s->pool, spec, token, asked, CP_FIND_PAST_TIES),
                                     asked, &past))) {
            whole = cp_keyset_find_join(*rows, past, asked, limit);
            asked = whole ? limit : rest && !top ? limit - (*rows)->nelts : 0;
        }
    }
    return fault;
}

/* A _find location's page, by the keyset pager: one POST .../_find, or,
 * numbered, one read of its index's view (with page links, and the rows
 * behind, in the same batch); a second only when the rows beyond the
 * token's row all went meanwhile (the first or the Last page is asked
 * then). */
static const cp_fault *serve_find(const serving *s, const cp_source *index, const char **text,
                                  cp_served *served)
{
    const cp_source *src = s->src;
    const cp_find_sort *sort = src->find->sort;
    const cp_fault *fault;
    apr_array_header_t *rows = NULL, *behind = NULL;
    const char *url, *start = s->req->args->start, *reason;
    /* a numbered location with page links handed out links of its index's
     * view when that view paged it: they keep working, at their row */
    cp_token_rows token_rows = cp_keyset_token_rows(sort, index && index->links);
    cp_token token;
    cp_keyset_count counted;
    cp_token_from from;
    cp_prefer_count prefer = cp_count_prefer(s->pool, s->req->prefer);
    const cp_keyset_count *numbered;
    cp_count_walk walk = { 0 };
    int limit, cap = 0, count_read = 0;

    /* CouchDB numbers a page read from the index's view; else a count does */
    if (index) {
        served->preference_applied = cp_count_free_applied(prefer);
    }
    else {
        cap = cp_count_cap(&src->count, prefer, &served->preference_applied);
        served->prefer_varies = 1;
    }
    if ((reason = cp_token_decode(s->pool, *text, &token_rows, &token))) {
        return cp_fault_bad_request(s->pool, reason);
    }
    cp_changed_token(s->walk, &token);
    if ((reason = cp_plan_index_url(s->pool, src->view, src->partition, &url))) {
        return cp_fault_bad_request(s->pool, reason);
    }
    limit = cp_keyset_limit(s->req->count, src->links);
    for (;;) {
        fault = index ? read_index_rows(s, index, &token, limit, &rows, &behind, &counted,
                                          &walk)
                      : read_find_rows(s, url, &token, limit, &rows);
        if (fault) {
            return fault;
        }
        numbered = index ? &counted
                 : cp_count_for_page(s->pool, s->tr, src, url, s->index_view, s->index_fields,
                                     cap, &token, rows->nelts, limit, &count_read, &walk,
                                     &counted);
        from = cp_keyset_page_assemble(s->pool, &token, rows, behind, s->req->count,
                                       src->links, numbered, start, &served->page);
        if (from == token.from) {
            break;
        }
        /* the rows beyond the token's row went: the first or the Last page,
         * whose token this page then is */
        memset(&token, 0, sizeof(token));
        token.from = from;
        start = from == CP_FROM_LAST ? CP_TOKEN_LAST : NULL;
        if (start && src->token_key) {
            const char **tokens[] = { &start };

            if ((reason = cp_seal_tokens(s->pool, src->token_key, served->binding, tokens,
                                         1))) {
                return cp_fault_seal(s->pool, src->uri, reason);
            }
        }
    }
    if (index && walk.known && (s->walk->walk || s->walk->seq)) {
        /* beside the walk's mark (read_index_rows) */
        cp_count_carry(s->pool, &token, rows, &walk, s->walk->jumped, text, &served->page);
    }
    else if (!index && walk.known && (reason = cp_count_page(s->pool, &token, rows, &walk,
                                                             &served->page))) {
        log_line(s, CP_LOG_DEBUG, "CP0432", apr_psprintf(s->pool, "a page of %s hands out "
                 "tokens without its count: %s", src->uri, reason));
    }
    if (!index && s->ties_apart) {
        cp_keyset_near_ties(s->pool, &token, rows, &s->walk->room, &served->page);
    }
    /* a row whose sort values _find cannot compare ends the walk by _find
     * there: its link is left out rather than one that fails (CouchDB
     * answers its query 500); its index's view, which takes any key, pages
     * such rows where it numbers the location */
    if (!index && cp_find_withhold_unbounding(s->pool, sort, &served->page)) {
        log_line(s, CP_LOG_INFO, "CP0326", apr_psprintf(s->pool, "a link of %s is left out: "
                 "a row at its edge has a sort value holding an array inside an array, which "
                 "CouchDB's _find cannot compare (CouchPageView %s); the pages past it "
                 "cannot be reached by _find", src->uri, src->view->url));
    }
    /* with page links its tokens are bound to the index's view, as those a
     * view location's page of it handed out */
    served->view = index && index->links ? index->view : src->view;
    return NULL;
}

/* How a jump asks (cp_jump_resolve): as a page's queries. */
static const cp_fault *jump_ask(void *baton, const cp_source *src, const cp_plan *plan,
                                apr_array_header_t *queries)
{
    return ask(baton, src, plan, cp_view_has_docids(plan->view), queries);
}

/* How a jump asks a counted _find location's count (cp_jump_resolve), as
 * its pages do. */
static const cp_fault *jump_count(void *baton, int cap, const cp_answer **answer,
                                  cp_count_walk *walk)
{
    const serving *s = baton;
    const char *url = NULL;
    const char *reason = cp_plan_index_url(s->pool, s->src->view, s->src->partition, &url);
    cp_transport_failure failure = { 0 };

    if (reason) {
        /* a partition's name it refuses */
        return cp_fault_bad_request(s->pool, reason);
    }
    reason = cp_count_read(s->pool, s->tr, s->src, url, s->index_view, s->index_fields, cap,
                           walk, answer, &failure);
    return !reason ? NULL : failure.reason ? backend_fault(s, s->src, &failure)
           : overfull_fault(s, s->src->view, reason);
}

const cp_fault *cp_serve(apr_pool_t *pool, const cp_source *source, const cp_request *req,
                         const cp_transport *transport, cp_served *served)
{
    cp_walk walk;
    serving s = { pool, source, req, transport, 0, NULL, NULL, &walk };
    cp_source *index = NULL;
    const cp_fault *fault;
    const char *text;

    memset(served, 0, sizeof(*served));
    if (source->find && (fault = index_source(&s, &index))) {
        return fault;
    }
    source = s.src;   /* (naming the index learnt for it) */
    /* numbered with page links, a _find location's tokens are sealed to
     * its index's view, as when a view location's page of it handed them
     * out */
    if ((fault = open_token(&s, index && index->links ? index : source, &served->binding,
                            &text))) {
        return fault;
    }
    /* the walk's start, which its tokens carry (couchpage_changed) */
    cp_changed_open(source, req->args->start, &walk);
    if (req->args->page) {
        /* ?page=N is the page the walk's token to page N opens */
        cp_args *args = apr_pmemdup(pool, req->args, sizeof(*args));
        cp_request *jumped = apr_pmemdup(pool, req, sizeof(*jumped));
        cp_jump_backend backend = { jump_ask, jump_count, &s };

        if ((fault = cp_jump_resolve(pool, source, index, req, served->binding, &backend,
                                     &args->start, &text))) {
            return fault;
        }
        args->page = 0;
        jumped->args = args;
        s.req = jumped;
    }
    if (source->find) {
        fault = serve_find(&s, index, &text, served);
    }
    else {
        /* a view's pages are counted by CouchDB's offsets, at no cost */
        served->preference_applied = cp_count_free_applied(cp_count_prefer(pool, req->prefer));
        fault = serve_view(&s, source, text, served);
    }
    fault = fault ? fault : cp_changed_finish(pool, &walk, source, req->args->page
                                              ? s.req->args->start : NULL, text, served);
    /* a count asked for is applied only where the page holds one */
    if (!served->page.numbered && served->preference_applied
        && strcmp(served->preference_applied, "count=none")) {
        served->preference_applied = NULL;
    }
    /* a counted _find location's page past an at-least count, or a
     * counted page whose rows moved since the count, is the walk's,
     * unnumbered as there */
    return fault || !req->args->page || served->page.numbered || (source->find && !index)
           || source->view->reduce ? fault : cp_jump_unnumbered(pool);
}
