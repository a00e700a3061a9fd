/* SPDX-License-Identifier: Apache-2.0 */
/*
 * couchpage_plan: the CouchDB queries that make one page, each planned
 * before any is sent, so that they can go as one multi-query POST
 * (cp_plan_batch_body) or one GET each (cp_plan_query_url). The algorithm
 * and the CouchDB facts it relies on are in docs/algorithm.md: no query
 * skips by depth, and a key range goes into every query as its bound, so
 * CouchDB collates and the module never does.
 *
 * Part of the httpd-free core: nothing here knows about request_rec. It
 * plans queries and says which wait for an answer (cp_plan_waiting) and
 * which a cut answer leaves to ask again (cp_plan_ask_alone); it neither
 * sends them nor reads their answers, only takes them
 * (cp_plan_take_answers).
 */
#ifndef COUCHPAGE_PLAN_H
#define COUCHPAGE_PLAN_H

#include <apr_pools.h>
#include <apr_tables.h>
#include "couchpage_json.h"

#include "couchpage_token.h"
#include "couchpage_view.h"

/* One request's queries. */
typedef struct {
    const cp_view *view;
    const char *index_url; /* the view URL, with the request's partition */
    const char *partition; /* the request's partition, NULL without one */
    const char *low;       /* JSON of the range's lowest key, NULL: open */
    const char *high;      /* JSON of the range's highest key, NULL: open */
    const json_t *low_key; /* the same, parsed */
    const json_t *high_key;
    int count;             /* rows per page */
    int links;             /* pages linked either side, 0 for prev/next only */
    int update_seq;        /* every query asks update_seq=true (cp_plan_ask_seq): the
                              page's sequence (cp_plan_seq); 0 from cp_plan_init */
    int count_cap;         /* grouped reduce rows counted (couchpage_count): the
                              first and the Last page ask for at most count_cap + 1
                              groups of the range too (CP_QUERY_COUNT); 0: no
                              count (cp_plan_init's) */
    int place_known;       /* the page's place is known without CouchDB's offsets
                              (a token's count, checked by the page's sequence):
                              a keyset page asks no probes (cp_plan_keyset_page);
                              0 from cp_plan_init */
} cp_plan;

/* Whether LOW and HIGH (JSON text, or NULL for an open side) can bound the
 * view's keys: NULL, or why not. A bound is the operator's, so a reason here
 * is a fault of the configuration, never of a request. _all_docs needs
 * document ids (JSON strings), which cp_plan_check_start compares. */
const char *cp_plan_check_range(apr_pool_t *pool, const cp_view *view, const char *low,
                                const char *high);

/* NULL when partition can name a CouchDB partition in a URL's path, else
 * the reason: CouchDB's rule (not empty, no leading '_', no ':', UTF-8),
 * and neither "." nor "..", which a path reads as its dot segments. */
const char *cp_plan_check_partition(apr_pool_t *pool, const char *partition);

/* The URL a view's (or a _find's) queries go to: the view's own, or with a
 * partition named per request (CouchPagePartition) the database's URL,
 * /_partition/P (P percent-encoded) and the index's path. NULL and the URL
 * in *url, or why the partition cannot be asked (cp_plan_check_partition;
 * the URL names one already). */
const char *cp_plan_index_url(apr_pool_t *pool, const cp_view *view, const char *partition,
                              const char **url);

/* partition may be NULL; low and high are compact JSON (or NULL). Returns
 * NULL, or the reason the bounds (cp_plan_check_range's) or the partition
 * name cannot be used. */
const char *cp_plan_init(apr_pool_t *pool, cp_plan *plan, const cp_view *view,
                         const char *partition, const char *low, const char *high,
                         int count, int links);

/* How many pages the queries read either side of the current one: the
 * linked pages, or, without links, the one that prev and next need. */
int cp_plan_pages_either_side(int links);

/* What a query of a page is for: the page assembler finds answers by it. */
typedef enum {
    CP_QUERY_RANGE_START, /* limit=0 from the range's start, no end: see cp_plan_page */
    CP_QUERY_RANGE_END, /* read backward from the range's end: limit=0 for the rows
                           after the range; on the last page, its rows and the
                           pages behind it */
    CP_QUERY_FORWARD,  /* the page's rows, then the first rows of the pages ahead */
    CP_QUERY_AHEAD,    /* keys-only rows from the page's start for the pages ahead
                          (include_docs with more than one page linked ahead) */
    CP_QUERY_BACKWARD, /* rows read backward from the token's row, its own entry
                          first: prev and the pages behind */
    CP_QUERY_OWN_GROUP, /* grouped rows: limit=1 over the token's own group, which
                           shows whether one collates equal to its key (the
                           backward answer may spell it otherwise) */
    CP_QUERY_LOCATE,   /* a bounded token's rows from its low to its high key, in
                          the view's order: cp_plan_locate */
    CP_QUERY_TOKEN_FIRST, /* limit=0 from a bounded token's first key (the view's
                             order), and */
    CP_QUERY_TOKEN_LAST,  /* from its last key the other way: cp_plan_clamp_probes */
    CP_QUERY_COUNT,    /* grouped rows counted: the range's groups, at most
                          count_cap + 1 of them, counted, not shown */
    CP_QUERY_ROLES     /* how many roles there are; a page asks at most one query
                          of each */
} cp_query_role;

/* An answer read and checked by couchpage_response: the plan only holds it. */
struct cp_answer;

/* One CouchDB query. Its parameters are a JSON object, sent as they are in
 * a multi-query POST body, and written out as a GET URL's query string
 * (cp_plan_query_url): one source for both. The view's update and stable go
 * into every query as strings, which CouchDB reads in both places (a JSON
 * "lazy" in a query string it would refuse). */
typedef struct {
    cp_query_role role;
    int limit;              /* the rows it asks for */
    json_t *params;         /* name: value, in the order sent (pool-owned) */
    const struct cp_answer *answer; /* CouchDB's answer, read and checked; NULL while
                                       the query waits (cp_plan_take_answers sets it) */
    int widened;            /* how often the query was asked again, wider */
    int refusable;          /* CouchDB may refuse it as a reversed range: a view
                               query with both startkey and endkey */
} cp_query;

/* Every query of a page (start NULL: a first page; from CP_FROM_LAST: the
 * Last page): an array of cp_query in the order they are sent, none depending on
 * another's answer. Send the waiting ones (cp_plan_waiting), give them their
 * answers (cp_plan_take_answers), and hand them to cp_page_assemble. A
 * first page is a forward query, a later page adds a backward one, and
 * include_docs with page links an ahead query; map rows in a key range or a
 * partition add the limit=0 probes of its start and end; grouped rows from
 * a token add the own group probe; grouped rows counted (count_cap), the
 * first and the Last page add the count query. The range start
 * probe, which CouchDB never refuses, also leads any batch in which it may
 * refuse a query (cp_query.refusable). The Last page is one range end query
 * read back from the end, led by the range start probe likewise. Why each
 * query is as it is: docs/algorithm.md, "The queries of a later page" and
 * "Ranges and partitions". */
apr_array_header_t *cp_plan_page(apr_pool_t *pool, const cp_plan *plan,
                                 const cp_token *start);

/* The queries that find where page N of a jump (?page=N) starts: one
 * read of limit rows (role CP_QUERY_FORWARD, keys only) from the range's
 * start in the view's order, or, backward, from its end the other way,
 * passing over skip rows, bounded by the range's other end; led by the
 * range start and end probes (limit=0) in a key range or a partition, so
 * that CouchDB's offsets count the location's rows. skip is the jump's,
 * which CouchPageJumpReach bounds (couchpage_jump), never a token's.
 * Grouped rows, which have no offsets, are counted instead (count_cap:
 * the count query, CP_QUERY_COUNT, which holds their keys), and read
 * with skip only where limit > 0; no probes but the range start's where
 * CouchDB may refuse the range. */
apr_array_header_t *cp_plan_jump(apr_pool_t *pool, const cp_plan *plan, apr_int64_t skip,
                                 int backward, int limit);

/* The queries of a page read by keyset over the view (a numbered _find
 * page, from its index's view: couchpage_find): one query of limit rows
 * (role CP_QUERY_FORWARD, whichever way it reads) from the row `from`
 * names, its key and document id, itself included (NULL: from the range's
 * start, or from its end when backward), in the view's order or, backward,
 * the other way, bounded by the range's end that way; with the documents
 * when the view's rows carry them. A partition adds the range start and
 * range end probes (limit=0), which lead it, so that CouchDB's offsets
 * place its rows (docs/algorithm.md, "Offsets and positions"); a key range
 * the probes of the sides it bounds (from an open side, outside a
 * partition, no row lies before the probe); none where plan->place_known.
 * No skip: the reader of the answer leaves out the row `from` names, when
 * it comes first (cp_keyset_index_rows). */
apr_array_header_t *cp_plan_keyset_page(apr_pool_t *pool, const cp_plan *plan,
                                        const cp_token *from, int backward, int limit);

/* The probes cp_plan_keyset_page asks where the place is not known, added
 * to queries: asked after the page's read where a token's count turned
 * out not to hold (couchpage_serve). */
void cp_plan_keyset_probes(apr_pool_t *pool, const cp_plan *plan, apr_array_header_t *queries);

/* A bounded token (start->digest) names its row by a digest, between two
 * keys it carries: before its page is planned, the row is found among the
 * rows CouchDB collates from the token's low to its high key (the view's
 * order: from high to low when descending), by one query of
 * cp_plan_max_reach rows (cp_page_locate reads it). start's keys must lie
 * within the location's range first (cp_plan_clamp), so that the query
 * reads no row outside it; the row found is then checked as any token's
 * (cp_plan_check_start, CouchDB). */
apr_array_header_t *cp_plan_locate(apr_pool_t *pool, const cp_plan *plan,
                                   const cp_token *start);

/* A client may write a bounded token's keys, and a genuine one's may lie
 * outside the range (a key's cut collates before the range's start), so
 * the locating query is clamped to the range: from the later of the
 * token's first key and the range's start, to the earlier of its last key
 * and the range's end. The module never collates; CouchDB's offsets tell
 * which is later: limit=0 probes from each key (reduce=false, map rows,
 * which carry offsets), the token's and the range's, one pair each side
 * the range bounds. NULL when none is needed: no range, or _all_docs,
 * whose ids cp_plan_clamp compares as bytes, as CouchDB does. */
apr_array_header_t *cp_plan_clamp_probes(apr_pool_t *pool, const cp_plan *plan,
                                         const cp_token *start);

/* start with its low and high keys clamped to the range (see
 * cp_plan_clamp_probes, whose answered queries are probes, NULL when it
 * planned none) into *clamped: on each side the token's key where as many
 * rows or more lie before it (after it, at the end) as before the range's
 * (as many: no row lies between them, and both start the same rows), else
 * the range's. A probe without an offset keeps the range's; a backend
 * whose offsets count nothing (pouchdb-server's are the skip, 0) keeps
 * the token's. On _all_docs, the later (earlier) id by bytes;
 * NULL, or why the token's keys are no document ids. */
const char *cp_plan_clamp(const cp_plan *plan, const apr_array_header_t *probes,
                          const cp_token *start, cp_token *clamped);

/* The first query of that role, or NULL. */
cp_query *cp_plan_query(const apr_array_header_t *queries, cp_query_role role);

/* The queries that wait for an answer, in the order they are sent (const
 * cp_query *): what the backend is asked, one GET each or one multi-query
 * POST (cp_plan_batch_body). The one place that says which queries wait:
 * those without an answer, a widened one (cp_plan_widen) among them. */
apr_array_header_t *cp_plan_waiting(apr_pool_t *pool, const apr_array_header_t *queries);

/* The answers a backend brought, by the role of the query each answers
 * (a page asks at most one query of each role); NULL where none came. */
typedef struct {
    const struct cp_answer *of[CP_QUERY_ROLES];
    int cut_off;            /* they came in a multi-query answer cut off after its
                               200, the results complete before the cut */
} cp_plan_answers;

/* Gives each waiting query the answer brought for its role, if any; a query
 * that has its answer keeps it. Returns how many queries still wait. */
int cp_plan_take_answers(apr_array_header_t *queries, const cp_plan_answers *answers);

/* What a multi-query answer cut off after its 200 (answers->cut_off) means
 * for the page, once its answers are taken (cp_plan_take_answers): the
 * results complete before the cut stand, and the queries still waiting
 * (const cp_query *, in the order sent) are asked again, each alone: CouchDB
 * ends such an answer when it refuses a later query (a reversed range:
 * cp_query.refusable), which a query asked alone gets as CouchDB's own
 * answer, or when a node it gathers from goes down, which the rows asked
 * again get past. That asking is the cut answer's one repeat. NULL when
 * the answer was whole, or none waits. */
apr_array_header_t *cp_plan_ask_alone(apr_pool_t *pool, const apr_array_header_t *queries,
                                      const cp_plan_answers *answers);

/* The query as a GET URL of index_url: name=value for each parameter, each
 * value percent-encoded; keys as JSON, document ids raw. */
const char *cp_plan_query_url(apr_pool_t *pool, const char *index_url,
                              const cp_query *query);

/* The path of a URL: what follows its scheme://authority ("/" if nothing). */
const char *cp_plan_url_path(const char *url);

/* The query as a log line shows it: cp_plan_query_url's path and query
 * string, without the scheme and authority. With hide_keys (where tokens
 * are sealed, their keys are confidential), the value of each key and
 * document id (startkey, endkey, startkey_docid, endkey_docid) is its
 * length instead: startkey=<12 bytes>. */
const char *cp_plan_query_loggable(apr_pool_t *pool, const char *index_url,
                                   const cp_query *query, int hide_keys);

/* The body of a multi-query POST of the waiting queries (cp_plan_waiting's
 * const cp_query *), in order: {"queries": [params, ...]}. */
const char *cp_plan_batch_body(apr_pool_t *pool, const apr_array_header_t *waiting);

/* Rows the backward query asks beyond the pages behind and the token's
 * entry up to the token: one past the far end shows whether the limit cut
 * an entry there, two more hold the rows of a document that emits its key
 * twice (the token's own after it, or one at the far end). */
#define CP_PLAN_BACKWARD_SLACK 3

/* The most rows a query of the page reads, those it passes over with skip
 * included (limit + skip):
 *     (1 + P) × count + 2 × max_emits + CP_PLAN_BACKWARD_SLACK
 * where P is cp_plan_pages_either_side(links) and max_emits the view's.
 * Every query cp_plan_page and cp_plan_widen plan keeps within it, whatever
 * the token, once cp_plan_check_start has held the token's row index below
 * max_emits: forward and ahead read P × count + 1 rows after skipping
 * index (< max_emits); backward passes over count − 2 and reads to
 * P × count + index + 1 + slack rows in all; the last page's query reads
 * (1 + P) × count + slack; a widening grows a query up to this bound and
 * no further (entries of up to max_emits rows at either end fit in it);
 * the range probes read none. The count query of grouped rows
 * (CP_QUERY_COUNT) is the one beyond it: count_cap + 1 rows, which
 * CouchPageCount bounds, never a token. So no client can make the module ask CouchDB
 * for more than the page it may ask for, whatever its depth or token. */
int cp_plan_max_reach(const cp_plan *plan);

/* Why the answers are refused: the first query's whose answer holds more
 * rows than its limit asked for (cp_answer_overfull), or NULL when none
 * does. */
const char *cp_plan_overfull(apr_pool_t *pool, const apr_array_header_t *queries);

/* The rare second round: when the page assembler cannot place the rows
 * the pages behind need from an answer (cp_page_assemble names it: the
 * backward query's, an entry of several rows cut by its limit or its skip,
 * or fewer rows behind the token than it passed over; or the last page's,
 * ending inside an entry where the page or the pages behind need it), that
 * query is replaced by a wider one, with no answer and no skip, and 1 is
 * returned: send the waiting queries again. 0 for NULL, a query widened
 * CP_PLAN_MAX_WIDENINGS times already, or one that reads cp_plan_max_reach
 * rows already. */
#define CP_PLAN_MAX_WIDENINGS 3
int cp_plan_widen(apr_pool_t *pool, const cp_plan *plan, const cp_token *start,
                  cp_query *query);

/* Where plan->update_seq is set, each waiting query (const cp_query *)
 * asks update_seq=true too: CouchDB then tells, in each answer (a
 * multi-query POST's results too), the sequence of the view index its rows
 * came from, which moves when an emitted key or value changes (a row
 * written, edited or deleted), not for a document edited where the view
 * does not emit. Adds no request. */
void cp_plan_ask_seq(const cp_plan *plan, const apr_array_header_t *waiting);

/* The sequence of a page's answered queries: their update_seq, in one
 * spelling (cp_seq_canonical), when every one carries one and all are
 * equal (in a cluster each may come from other copies of a shard: then
 * none), else NULL. */
const char *cp_plan_seq(apr_pool_t *pool, const apr_array_header_t *queries);

/* One query that reads no rows (role CP_QUERY_RANGE_START: limit=0 from
 * the range's start, never refused) asking update_seq=true: what a page's
 * sequence is now, by the same index and partition its rows come from. */
apr_array_header_t *cp_plan_seq_probe(apr_pool_t *pool, const cp_plan *plan);

/* The rows a query passes over with skip (0 without). */
int cp_plan_skip(const cp_query *query);

/* Whether the queries see only part of the index (a key range or a
 * partition), so that CouchDB's offsets do not count from their start. */
int cp_plan_is_partial(const cp_plan *plan);

/* A start token's row index must be below the view's max_emits, which
 * bounds the forward query's skip. CouchDB refuses a view query whose start
 * lies beyond its range, but makes no such check on _all_docs; there ids
 * collate as raw bytes, so the start is checked here. Returns NULL, or the
 * reason a token is refused. */
const char *cp_plan_check_start(apr_pool_t *pool, const cp_plan *plan,
                                const cp_token *start);

#endif
