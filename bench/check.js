#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
// The checks bench/run makes before it times anything: that the pages it
// measures are real pages, that the floors ask CouchDB for exactly what the
// module asks, and that they send the same Authorization header. Any
// difference ends the run, loudly. Uses nothing but node's own modules.
//
//   node bench/check.js pages
//       Environment: BASE (httpd whose backend is bench/recorder.js),
//       BACKEND (the backend itself, no credentials), BACKEND_AUTH (the
//       Authorization value, or empty), REC_LOG (the recorder's log),
//       VIEW_PATH, SIZE (CouchPageSize), LATER_ROW, FIRST, FWD, BWD (the
//       floors' GET paths: first page; floor (a), the seed algorithm's
//       forward and backward queries), OUT (a folder).
//       Walks from the first page through links.next to the page at row
//       LATER_ROW; records the backend requests the module makes for that
//       page and for the first page; checks that the module's Authorization
//       header is BACKEND_AUTH; that floor (a)'s rows make exactly the
//       module's page (items, next, prev); that the module's later page is
//       one multi-query POST, which becomes floor (b) as recorded, and
//       whose results, sent again straight, hold every row the page is
//       made of (its rows, next's and prev's);
//       and that the first page's one query is the first-page floor's.
//       Writes to OUT: later.path (the walked page's path, as the module
//       linked it), floor-b.url and floor-b.json (the module's batch: URL
//       and body) or floor-b.unsupported (why there is none),
//       module-requests.txt.
//
//   node bench/check.js posts
//       Environment: BASE, BACKEND, BACKEND_AUTH, REC_LOG, SIZE, OUT as
//       above; POSTS_VIEW (the posts view's path), POSTS_ROW (the row the
//       page starts at), POSTS_JSON_PATH, POSTS_HTML_PATH, POSTS_FIELDS_PATH
//       (the three locations' paths: JSON, HTML from the item template,
//       JSON with CouchPageFields), FIELDS (that location's member names,
//       spaces between).
//       Reaches the page at row POSTS_ROW by links.next from the page
//       before it (whose token is built from the view's own row); records
//       what the module asks the backend for it in each location; checks
//       that each is one backend request with the floors' Authorization
//       header; that floor (a), the seed's two GETs (the forward one with
//       include_docs), makes exactly the JSON page (items with their docs,
//       next, prev); that the JSON page's batch, which the HTML and fields
//       pages send too, sent straight, holds the page's rows with their
//       docs; that the HTML page shows each row's title, date and summary,
//       escaped, through the item template of bench/httpd.conf.in; and
//       that the fields page's docs are exactly the named members of the
//       full docs. Writes to OUT: posts.query (the page's query string, as
//       the module linked it), posts-floor-a.txt (floor (a)'s two paths, a
//       line each), posts-floor-b.url and posts-floor-b.json,
//       posts-sizes.txt (bytes of a document, of (a)'s forward answer and of each page; rows sharing
//       the date of the row before), posts-requests.txt.
//
//   node bench/check.js find
//       Environment: BASE, BACKEND, BACKEND_AUTH, REC_LOG, SIZE, OUT as
//       above; POSTS_ROW; FIND_PATH (the _find location's path), FIND_URL
//       (the backend's _find path), FIND_QUERY (the location's query as
//       CouchDB's own: selector, sort, use_index, allow_fallback; JSON).
//       Walks the _find location from its first page through links.next
//       to the page at row POSTS_ROW, each page's documents the next of
//       one straight _find of the query in its order; checks that that
//       page is one backend request with the floors' Authorization header,
//       that CouchDB's bookmark page of the same query (the bookmark of a
//       _find of POSTS_ROW rows) and the skip page (skip=POSTS_ROW) are the
//       module's page's documents (each asked with the module's limit),
//       and that page 2 is one request too.
//       Writes to OUT: find.path, find-page2.path (the pages' paths as the
//       module linked them), find-bookmark.json and find-skip.json (the
//       floors' bodies), find-sizes.txt, find-requests.txt.
//
//   node bench/check.js sent LOG FROM AUTH SPEC...
//       The requests in LOG from line FROM on (0-based) are SPEC... in turn
//       (as bench/paths.lua takes them: a GET path, or "POST PATH BODY"),
//       each with Authorization AUTH (empty: none).
'use strict';

const fs = require('fs');
const http = require('http');
const { learningRead } = require('./learning.js');

function die(msg) {
  console.error(`check: ${msg}`);
  process.exit(1);
}

function env(name) {
  const v = process.env[name];
  if (v === undefined) die(`${name} is not set`);
  return v;
}

function get(url, { method = 'GET', auth = '', body = null } = {}) {
  return new Promise((resolve, reject) => {
    const headers = { Accept: 'application/json' };
    if (auth) headers.Authorization = auth;
    if (body !== null) headers['Content-Type'] = 'application/json';
    const req = http.request(url, { method, headers, timeout: 30000 }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json = null;
        try {
          json = JSON.parse(text);
        } catch (e) {
          // left null: the caller says what it expected
        }
        resolve({ status: res.statusCode, headers: res.headers, text, json });
      });
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${url}: timed out`)));
    req.on('error', reject);
    req.end(body);
  });
}

async function getJson(url, opts) {
  const res = await get(url, opts);
  if (res.status !== 200 || res.json === null) {
    die(`${(opts && opts.method) || 'GET'} ${url}: HTTP ${res.status}, ${res.text.slice(0, 300)}`);
  }
  return res.json;
}

// --- view queries, compared by meaning ------------------------------------------
// CouchDB reads these query parameters as JSON, the others as strings
// (couch_mrview_http:parse_params); the aliases mean the same thing.
const JSON_PARAMS = new Set([
  'key', 'keys', 'startkey', 'endkey', 'limit', 'skip', 'descending', 'group', 'group_level',
  'reduce', 'include_docs', 'inclusive_end', 'update_seq', 'conflicts', 'attachments',
  'att_encoding_info', 'sorted', 'stable', 'partition',
]);
const ALIASES = {
  start_key: 'startkey', end_key: 'endkey',
  start_key_doc_id: 'startkey_docid', end_key_doc_id: 'endkey_docid',
};

function canonical(value) {
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === 'object') {
    const out = {};
    for (const k of Object.keys(value).sort()) out[k] = canonical(value[k]);
    return out;
  }
  return value;
}

function paramsOfSearch(search) {
  const params = {};
  for (const [k0, v] of new URLSearchParams(search)) {
    const k = ALIASES[k0] || k0;
    if (JSON_PARAMS.has(k)) {
      try {
        params[k] = JSON.parse(v);
      } catch (e) {
        params[k] = { unparsable: v };
      }
    } else {
      params[k] = v;
    }
  }
  return params;
}

function paramsOfObject(obj) {
  const params = {};
  for (const [k0, v] of Object.entries(obj)) params[ALIASES[k0] || k0] = v;
  return params;
}

// The view queries one backend request makes: [{view, params}], a GET one,
// a multi-query POST (.../queries) one per query, URL parameters under each.
function queriesOf(method, url, body) {
  const u = new URL(url, 'http://backend');
  const base = paramsOfSearch(u.search);
  if (method === 'POST' && u.pathname.endsWith('/queries')) {
    let parsed;
    try {
      parsed = JSON.parse(body);
    } catch (e) {
      die(`a POST to ${u.pathname} whose body is not JSON: ${body.slice(0, 200)}`);
    }
    if (!parsed || !Array.isArray(parsed.queries)) die(`a POST to ${u.pathname} without "queries": ${body.slice(0, 200)}`);
    const view = u.pathname.slice(0, -'/queries'.length);
    return parsed.queries.map((q) => ({ view, params: canonical({ ...base, ...paramsOfObject(q) }) }));
  }
  if (method === 'POST') {
    let parsed = {};
    try {
      parsed = JSON.parse(body || '{}');
    } catch (e) {
      die(`a POST to ${u.pathname} whose body is not JSON: ${String(body).slice(0, 200)}`);
    }
    return [{ view: u.pathname, params: canonical({ ...base, ...paramsOfObject(parsed) }) }];
  }
  return [{ view: u.pathname, params: canonical(base) }];
}

const show = (q) => `${q.view} ${JSON.stringify(q.params)}`;
const same = (a, b) => JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));

function readLog(log) {
  if (!fs.existsSync(log)) return [];
  return fs.readFileSync(log, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
}

// The backend requests the module makes for PATH: recorded around one GET.
// page: the answer read as JSON (with html, not read: any 200 answer).
async function recordPage(base, path, log, { html = false } = {}) {
  const before = readLog(log).length;
  const res = await get(base + path);
  if (res.status !== 200 || (!html && res.json === null)) {
    die(`GET ${base + path}: HTTP ${res.status}, ${res.text.slice(0, 300)}`);
  }
  const reqs = readLog(log).slice(before);
  if (reqs.length === 0) die(`the module answered ${path} without asking the backend: is the recorder in front of it?`);
  return { page: res.json, text: res.text, type: res.headers['content-type'] || '', reqs };
}

function describe(reqs) {
  return reqs.map((r) => {
    const qs = queriesOf(r.method, r.url, r.body);
    return `${r.method} ${r.url}${r.body ? ` ${r.body}` : ''}\n      = ${qs.length} ${qs.length === 1 ? 'query' : 'queries'}: ${qs.map(show).join('; ')}`;
  }).join('\n    ');
}

// Every floor query must be one the module makes for the same page (the
// first page: its one query).
function sameQueries(what, floorPaths, reqs) {
  const moduleQs = reqs.flatMap((r) => queriesOf(r.method, r.url, r.body));
  const left = [...moduleQs];
  for (const p of floorPaths) {
    const [fq] = queriesOf('GET', p, '');
    const i = left.findIndex((mq) => mq.view === fq.view && same(mq.params, fq.params));
    if (i < 0) {
      die(`${what}: the floor asks ${show(fq)}, which the module does not ask; the module asks:\n    ${moduleQs.map(show).join('\n    ')}\n` +
        'update bench_first in bench/lib.sh');
    }
    left.splice(i, 1);
  }
  return { moduleQs, extra: left };
}

function sameAuth(what, reqs, auth) {
  for (const r of reqs) {
    if ((r.authorization || '') !== auth) {
      die(`${what}: the module sent Authorization ${r.authorization === null ? '(none)' : '(a different value)'}, ` +
        `the floors send ${auth ? 'the CouchPageCredentials header' : '(none)'}`);
    }
  }
}

const token = (row) => [row.key, row.id];
const item = (row) => ({ id: row.id, key: row.key, value: row.value });
// an item with its document, when the row has one (include_docs)
const itemWithDoc = (row) => ('doc' in row ? { ...item(row), doc: row.doc } : item(row));

// A mark of the walk's start, as tokens carry it (couchpage_changed.h):
// entries of a 5-character tag and digits, joined by '.'.
const MARK = /^[A-Za-z0-9_-]{5}[0-9]+(\.[A-Za-z0-9_-]{5}[0-9]+)*$/;

// The walk's mark a token carries: a view token's last member after its
// key and id, an object token's "w"; null without one.
function tokenMark(value) {
  if (Array.isArray(value)) {
    const last = value[value.length - 1];
    return value.length >= 3 && typeof last === 'string' && MARK.test(last) ? last : null;
  }
  return value && typeof value === 'object' && typeof value.w === 'string' ? value.w : null;
}

// A token as JSON, without the walk's mark: where a page starts is
// compared; the mark tells only "changed" (checked by the API tests).
function parseToken(what, t) {
  let value;
  try {
    value = JSON.parse(t);
  } catch (e) {
    return die(`${what}: the token ${JSON.stringify(t).slice(0, 80)} is not plain JSON (CouchPageTokenSecret set?): the check cannot read it`);
  }
  if (tokenMark(value) === null) return value;
  if (Array.isArray(value)) return value.slice(0, -1);
  const { w, ...rest } = value;
  return rest;
}

// The module's page holds the floor's rows: items = the forward rows of a
// page, next = the row after them, prev = the first row of the page before.
function samePage(what, page, size, fwdRows, bwdRows) {
  if (!Array.isArray(page.items)) die(`${what}: the module's page has no items`);
  const want = fwdRows.slice(0, size).map(itemWithDoc);
  const got = page.items.map((it, i) => (i < want.length && 'doc' in want[i] ? itemWithDoc(it) : item(it)));
  if (!same(got, want)) {
    const at = got.findIndex((g, i) => !same(g, want[i]));
    die(`${what}: the module's items are not the floor's forward rows (${got.length} items, ${want.length} rows; first difference at item ${at}):\n` +
      `  module ${JSON.stringify(got[at]).slice(0, 400)}\n  floor  ${JSON.stringify(want[at]).slice(0, 400)}`);
  }
  const wantNext = fwdRows.length > size ? token(fwdRows[size]) : null;
  if (!same(page.next === null ? null : parseToken(what, page.next), wantNext)) {
    die(`${what}: next is ${page.next}, the floor's rows say ${JSON.stringify(wantNext)}`);
  }
  if (bwdRows !== null) {
    const wantPrev = bwdRows.length === 0 ? null : token(bwdRows[Math.min(size, bwdRows.length) - 1]);
    if (!same(page.prev === null ? null : parseToken(what, page.prev), wantPrev)) {
      die(`${what}: prev is ${page.prev}, the floor's rows say ${JSON.stringify(wantPrev)}`);
    }
  }
}

// Floor (b): the module's own batch for a page, the one multi-query POST
// it sent (recorded), sent again straight. Its results must hold every row
// the module's page is made of, SHOWN as floor (a) answered them (the
// page's rows with their documents when it has them, the row after them
// (next) and the previous page's first row (prev)). Writes OUT/NAME.url and
// OUT/NAME.json, or OUT/NAME.unsupported when the module sent GETs because
// the backend has no multi-query endpoint (pouchdb-server).
async function floorPost(what, name, backend, auth, reqs, shown, out) {
  const posts = reqs.filter((r) => r.method === 'POST' && new URL(r.url, 'http://x').pathname.endsWith('/queries'));
  if (posts.length === 0) {
    const res = await get(`${backend}${new URL(reqs[0].url, 'http://x').pathname}/queries`,
      { method: 'POST', auth, body: JSON.stringify({ queries: [{ limit: 0 }] }) });
    if (res.status === 200) die(`${what}: the module sent ${reqs.length} GETs, but the backend has a multi-query endpoint`);
    const why = `the module sent ${reqs.length} GETs: the backend has no multi-query endpoint (POST .../queries answered HTTP ${res.status})`;
    fs.writeFileSync(`${out}/${name}.unsupported`, why + '\n');
    console.error(`check: no floor (b): ${why}`);
    return null;
  }
  if (reqs.length !== 1) die(`${what}: the module made ${reqs.length} backend requests, not its one multi-query POST: floor (b) would not be its batch`);
  const batch = posts[0];
  if (batch.content_type !== 'application/json') die(`${what}, floor (b): the module's batch carried Content-Type ${batch.content_type}, wrk sends application/json`);
  const res = await get(backend + batch.url, { method: 'POST', auth, body: batch.body });
  if (res.status !== 200 || !res.json || !Array.isArray(res.json.results)) {
    die(`${what}, floor (b): POST ${batch.url} answered HTTP ${res.status}: ${res.text.slice(0, 200).trim()}`);
  }
  const nq = JSON.parse(batch.body).queries.length;
  if (res.json.results.length !== nq) die(`${what}, floor (b): ${res.json.results.length} results for ${nq} queries`);
  // every row of the results, as a bare row and, when it has one, with its document
  const held = new Set(res.json.results.flatMap((r) => r.rows.flatMap((row) =>
    [item(row), itemWithDoc(row)].map((x) => JSON.stringify(canonical(x))))));
  const missing = shown.filter((x) => !held.has(JSON.stringify(canonical(x))));
  if (missing.length) {
    die(`${what}, floor (b): the module's batch, sent straight, lacks ${missing.length} of the rows the page is made of, e.g. ${JSON.stringify(missing[0]).slice(0, 300)}`);
  }
  fs.writeFileSync(`${out}/${name}.url`, batch.url);
  fs.writeFileSync(`${out}/${name}.json`, batch.body);
  return { url: batch.url, queries: nq, rows: res.json.results.map((r) => r.rows.length) };
}

async function pages() {
  const base = env('BASE');
  const backend = env('BACKEND');
  const auth = env('BACKEND_AUTH');
  const log = env('REC_LOG');
  const view = env('VIEW_PATH');
  const size = Number(env('SIZE'));
  const laterRow = Number(env('LATER_ROW'));
  const [first, fwd, bwd] = [env('FIRST'), env('FWD'), env('BWD')];
  const out = env('OUT');
  if (!(laterRow > 0 && laterRow % size === 0)) die(`LATER_ROW (${laterRow}) must be a multiple of SIZE (${size})`);

  // 1. the walk: first page, then links.next until row LATER_ROW
  let path = '/items/';
  for (let row = 0; row < laterRow; row += size) {
    const p = await getJson(base + path);
    const want = 'item' + String(row).padStart(6, '0');
    if (!Array.isArray(p.items) || p.items.length !== size || p.items[0].id !== want) {
      die(`walk: the page at row ${row} (${path}) does not start at ${want} with ${size} items`);
    }
    if (!p.links || typeof p.links.next !== 'string') die(`walk: the page at row ${row} has no links.next`);
    path = p.links.next;
  }
  const laterPath = path;
  fs.writeFileSync(`${out}/later.path`, laterPath + '\n');
  const startParam = new URL(laterPath, 'http://x').searchParams.get('start');
  const laterId = 'item' + String(laterRow).padStart(6, '0');
  if (!same(parseToken('walk', startParam), [laterRow, laterId])) {
    die(`walk: the token of row ${laterRow} is ${startParam}, not [${laterRow},"${laterId}"] and the walk's mark (bench_token builds the deep page's token that way)`);
  }
  // the deep page's token carries the same walk's mark, as a walk would
  fs.writeFileSync(`${out}/walk.mark`, (tokenMark(JSON.parse(startParam)) || '') + '\n');
  console.error(`check: walked ${laterRow / size} pages to ${laterPath}`);

  // 2. what the module asks the backend, and with which credentials
  const later = await recordPage(base, laterPath, log);
  const firstPage = await recordPage(base, '/items/', log);
  sameAuth('later page', later.reqs, auth);
  sameAuth('first page', firstPage.reqs, auth);
  const firstQs = sameQueries('first page', [first], firstPage.reqs);

  // 3. floor (a): the seed algorithm's two GETs, straight; their rows make
  // the module's page exactly
  const [fwdAns, bwdAns, firstAns] = await Promise.all([fwd, bwd, first].map((p) => getJson(backend + p, { auth })));
  samePage('later page, floor (a)', later.page, size, fwdAns.rows, bwdAns.rows);
  samePage('first page', firstPage.page, size, firstAns.rows, null);
  if (firstPage.page.prev !== null) die('first page: prev is not null');
  if (bwdAns.rows.length !== size) die(`floor (a): the backward GET answered ${bwdAns.rows.length} rows, not ${size}`);

  // 4. floor (b): the module's batch, as recorded, straight
  // the rows the page is made of: its own, the next page's first (next) and
  // the previous page's first (prev); the rows between the page and that one
  // the module passes over with skip
  const shown = [...fwdAns.rows.slice(0, size + 1), ...bwdAns.rows.slice(-1)].map(item);
  const b = await floorPost('later page', 'floor-b', backend, auth, later.reqs, shown, out);

  const extra = (qs) => (qs.extra.length ? `; beyond the floor's query: ${qs.extra.map(show).join('; ')}` : '');
  fs.writeFileSync(`${out}/module-requests.txt`,
    `later page ${laterPath}: ${later.reqs.length} backend ${later.reqs.length === 1 ? 'request' : 'requests'}\n    ${describe(later.reqs)}\n` +
    `first page /items/: ${firstPage.reqs.length} backend ${firstPage.reqs.length === 1 ? 'request' : 'requests'}${extra(firstQs)}\n    ${describe(firstPage.reqs)}\n`);
  console.error(`check: the seed's two GETs (a) make the module's later page exactly; ` +
    (b ? `the module's batch (b), ${b.queries} queries in one POST ${b.url} (${b.rows.join(' + ')} rows), holds all ${shown.length} rows the page is made of; ` : '') +
    `the first page is its floor's one query (${firstPage.reqs.length} request); the same Authorization header throughout`);
}

// --- the real-sized page: blog posts with their documents ------------------------
// One item of the posts' HTML page: bench/httpd.conf.in's template
//   <h3><a href="/blog/posts/%{couchpage_url:id}">%{couchpage_html:doc.title}</a></h3>
//   <p><time datetime="%{couchpage_html:doc.date}">%{couchpage_date:doc.date}</time></p>
//   <p>%{couchpage_html:doc.summary}</p>
// (one line there, a space between the parts). No < > " may come from a
// row: every value is escaped.
const POST_ITEM = /^<h3><a href="\/blog\/posts\/([^"<>]*)">([^"<>]*)<\/a><\/h3> <p><time datetime="([^"<>]*)">([^"<>]*)<\/time><\/p> <p>([^"<>]*)<\/p>$/;
const ENTITIES = { amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" };

// Text escaped as the module escapes it: every & starts one of its entities.
function unescapeHtml(what, text) {
  if (/&(?!(amp|lt|gt|quot|#39);)/.test(text)) die(`${what}: an & that starts no entity in ${JSON.stringify(text).slice(0, 200)}`);
  return text.replace(/&(amp|lt|gt|quot|#39);/g, (_, e) => ENTITIES[e]);
}

// The HTML page shows each row's id (in the link), title, date and summary,
// escaped, in the floor's order.
function sameHtml(what, res, size, rows) {
  if (!/^text\/html/.test(res.type)) die(`${what}: Content-Type ${res.type}, not text/html`);
  const items = [...res.text.matchAll(/<li class="couchpage-item">(.*?)<\/li>\n/g)].map((m) => m[1]);
  if (items.length !== size) die(`${what}: ${items.length} items, not ${size}`);
  items.forEach((html, i) => {
    const m = html.match(POST_ITEM);
    if (!m) die(`${what}: item ${i} is not the template's HTML: ${html.slice(0, 300)}`);
    const doc = rows[i].doc;
    const shown = {
      id: decodeURIComponent(m[1]), title: unescapeHtml(what, m[2]), date: unescapeHtml(what, m[3]),
      day: m[4], summary: unescapeHtml(what, m[5]),
    };
    const want = { id: rows[i].id, title: doc.title, date: doc.date, day: doc.date.slice(0, 10), summary: doc.summary };
    if (!same(shown, want)) die(`${what}: item ${i} shows ${JSON.stringify(shown).slice(0, 300)}, the floor's row ${JSON.stringify(want).slice(0, 300)}`);
  });
}

// The fields page: the JSON page's rows, each doc exactly the named
// members of the full doc (those it has).
function sameFields(what, page, full, fields) {
  if (!Array.isArray(page.items) || page.items.length !== full.items.length) die(`${what}: not the JSON page's ${full.items.length} items`);
  page.items.forEach((it, i) => {
    const doc = full.items[i].doc;
    const want = Object.fromEntries(fields.filter((f) => f in doc).map((f) => [f, doc[f]]));
    if (!same(item(it), item(full.items[i]))) die(`${what}: item ${i} is ${JSON.stringify(item(it))}, the JSON page's ${JSON.stringify(item(full.items[i]))}`);
    if (!same(it.doc, want)) die(`${what}: item ${i}'s doc is ${JSON.stringify(it.doc).slice(0, 300)}, not the named members of the full doc ${JSON.stringify(want).slice(0, 300)}`);
  });
  if (page.next !== full.next || page.prev !== full.prev) die(`${what}: next and prev are not the JSON page's`);
}

async function posts() {
  const base = env('BASE');
  const backend = env('BACKEND');
  const auth = env('BACKEND_AUTH');
  const log = env('REC_LOG');
  const view = env('POSTS_VIEW');
  const size = Number(env('SIZE'));
  const row = Number(env('POSTS_ROW'));
  const loc = { json: env('POSTS_JSON_PATH'), html: env('POSTS_HTML_PATH'), fields: env('POSTS_FIELDS_PATH') };
  const fields = env('FIELDS').split(/\s+/).filter(Boolean);
  const out = env('OUT');
  if (!(row >= size && row % size === 0)) die(`POSTS_ROW (${row}) must be a positive multiple of SIZE (${size})`);
  const q = (v) => encodeURIComponent(v);

  // 1. the page, reached by links.next from the page before it, whose token
  // is made from the view's own row as the module makes tokens
  const rowAt = async (k) => {
    const a = await getJson(`${backend}${view}?reduce=false&limit=1&skip=${k}`, { auth });
    if (!Array.isArray(a.rows) || a.rows.length !== 1) die(`posts: the view has no row ${k}`);
    return a.rows[0];
  };
  const before = await rowAt(row - size);
  const start = await rowAt(row);
  const pageBefore = await getJson(`${base}${loc.json}?start=${q(JSON.stringify(token(before)))}`);
  if (!Array.isArray(pageBefore.items) || pageBefore.items.length !== size || pageBefore.items[0].id !== before.id) {
    die(`posts: the page at row ${row - size} does not start at ${before.id} with ${size} items`);
  }
  if (!pageBefore.links || typeof pageBefore.links.next !== 'string') die(`posts: the page at row ${row - size} has no links.next`);
  const nextUrl = new URL(pageBefore.links.next, 'http://x');
  if (nextUrl.pathname !== loc.json) die(`posts: links.next leads to ${nextUrl.pathname}, not ${loc.json}`);
  const query = nextUrl.search;
  if (!same(parseToken('posts', nextUrl.searchParams.get('start')), token(start))) {
    die(`posts: links.next's token is ${nextUrl.searchParams.get('start')}, not row ${row}'s ${JSON.stringify(token(start))}`);
  }
  fs.writeFileSync(`${out}/posts.query`, query + '\n');

  // 2. what the module asks the backend for the page, in each location:
  // one request, with the floors' Authorization header
  const rec = {
    json: await recordPage(base, loc.json + query, log),
    html: await recordPage(base, loc.html + query, log, { html: true }),
    fields: await recordPage(base, loc.fields + query, log),
  };
  for (const [k, r] of Object.entries(rec)) {
    sameAuth(`posts ${k} page`, r.reqs, auth);
    if (r.reqs.length !== 1) die(`posts ${k} page: ${r.reqs.length} backend requests, not 1:\n    ${describe(r.reqs)}`);
  }

  // 3. floor (a): the seed's two GETs, the forward one with the documents;
  // their rows make the JSON page exactly
  const startAt = `startkey=${q(JSON.stringify(start.key))}&startkey_docid=${q(start.id)}`;
  const fwd = `${view}?include_docs=true&limit=${size + 1}&reduce=false&${startAt}`;
  const bwd = `${view}?limit=${size}&reduce=false&descending=true&${startAt}&skip=1`;
  const [fwdRes, bwdAns] = await Promise.all([get(backend + fwd, { auth }), getJson(backend + bwd, { auth })]);
  if (fwdRes.status !== 200 || fwdRes.json === null) die(`GET ${fwd}: HTTP ${fwdRes.status}, ${fwdRes.text.slice(0, 300)}`);
  const fwdAns = fwdRes.json;
  if (!fwdAns.rows.every((r) => r.doc && typeof r.doc === 'object')) die('posts, floor (a): the forward GET answered rows without documents');
  if (bwdAns.rows.length !== size) die(`posts, floor (a): the backward GET answered ${bwdAns.rows.length} rows, not ${size}`);
  samePage('posts JSON page, floor (a)', rec.json.page, size, fwdAns.rows, bwdAns.rows);
  // equal keys: the page and the rows either side of it share dates
  const around = [bwdAns.rows[0], ...fwdAns.rows];
  const equal = around.slice(1).filter((r, i) => same(r.key, around[i].key)).length;
  if (equal === 0) die('posts: no two rows of the page and its neighbours share a date: the data does not exercise equal keys (bench/posts.js)');
  const boundary = same(bwdAns.rows[0].key, start.key);

  // 4. floor (b): the JSON page's batch, which the other two pages send too
  const shown = [...fwdAns.rows.slice(0, size).map(itemWithDoc),
    ...fwdAns.rows.slice(size, size + 1).map(item), ...bwdAns.rows.slice(-1).map(item)];
  const b = await floorPost('posts JSON page', 'posts-floor-b', backend, auth, rec.json.reqs, shown, out);
  if (!b) die('posts JSON page: no multi-query batch, so no floor (b)');
  const jb = rec.json.reqs[0];
  for (const k of ['html', 'fields']) {
    const kb = rec[k].reqs[0];
    if (kb.method !== jb.method || kb.url !== jb.url || kb.body !== jb.body) {
      die(`posts ${k} page: its backend request is not the JSON page's batch, so floor (b) would not be its own:\n    ${describe([kb])}\n    ${describe([jb])}`);
    }
  }

  // 5. the HTML page from the item template; the fields page
  sameHtml('posts HTML page', rec.html, size, fwdAns.rows);
  sameFields(`posts fields page (CouchPageFields ${fields.join(' ')})`, rec.fields.page, rec.json.page, fields);

  const bytes = (t) => Buffer.byteLength(t);
  const docBytes = Math.round(fwdAns.rows.slice(0, size).reduce((n, r) => n + bytes(JSON.stringify(r.doc)), 0) / size);
  fs.writeFileSync(`${out}/posts-floor-a.txt`, `${fwd}\n${bwd}\n`);
  fs.writeFileSync(`${out}/posts-sizes.txt`,
    `doc=${docBytes} forward=${bytes(fwdRes.text)} json=${bytes(rec.json.text)} html=${bytes(rec.html.text)} fields=${bytes(rec.fields.text)} equal=${equal} boundary=${boundary ? 1 : 0}\n`);
  fs.writeFileSync(`${out}/posts-requests.txt`, Object.entries(rec).map(([k, r]) =>
    `posts ${k} page ${loc[k]}${query}: ${r.reqs.length} backend request\n    ${describe(r.reqs)}\n`).join(''));
  console.error(`check: posts page at row ${row} (${query}): the seed's two GETs (a) make the JSON page exactly, documents included ` +
    `(${docBytes} bytes a document; ${equal} rows share the date of the row before them${boundary ? ', the first row among them: startkey_docid decides where the page starts' : ''}); ` +
    `the module's batch (b), ${b.queries} queries in one POST (${b.rows.join(' + ')} rows), holds the page's rows and documents, and is the HTML and fields pages' request too; ` +
    `the HTML page shows every title, date and summary escaped; the fields page's documents are the named members; one backend request each; the same Authorization header throughout`);
}

// The _find page: the module's walk is CouchDB's own _find order, its page
// at POSTS_ROW is CouchDB's bookmark page and skip page of the same query.
async function find() {
  const base = env('BASE');
  const backend = env('BACKEND');
  const auth = env('BACKEND_AUTH');
  const log = env('REC_LOG');
  const size = Number(env('SIZE'));
  const row = Number(env('POSTS_ROW'));
  const loc = env('FIND_PATH');
  const findUrl = env('FIND_URL');
  const query = JSON.parse(env('FIND_QUERY'));
  const out = env('OUT');
  if (!(row >= size && row % size === 0)) die(`POSTS_ROW (${row}) must be a positive multiple of SIZE (${size})`);
  const straight = async (body) => {
    const r = await get(backend + findUrl, { method: 'POST', auth, body: JSON.stringify(body) });
    if (r.status !== 200 || !r.json || !Array.isArray(r.json.docs)) die(`POST ${findUrl} ${JSON.stringify(body)}: HTTP ${r.status}, ${r.text.slice(0, 300)}`);
    return r.json;
  };
  const ids = (docs) => docs.map((d) => d._id);

  // 1. CouchDB's own order of the query, to the page after the measured one
  const order = ids((await straight({ ...query, limit: row + 2 * size, fields: ['_id'] })).docs);
  if (order.length !== row + 2 * size) die(`find: the query has ${order.length} rows, not the ${row + 2 * size} the walk needs`);

  // 2. the module's walk by links.next: every page the next rows of that order
  let path = loc;
  let page2 = '';
  let page = null;
  for (let at = 0; ; at += size) {
    const res = await get(base + path);
    if (res.status !== 200 || res.json === null) die(`find: GET ${path}: HTTP ${res.status}, ${res.text.slice(0, 300)}`);
    page = res.json;
    const want = order.slice(at, at + size);
    if (!Array.isArray(page.items) || !same(ids(page.items), want)) {
      die(`find: the page at row ${at} (${path}) holds ${JSON.stringify(ids(page.items || [])).slice(0, 300)}, CouchDB's _find order ${JSON.stringify(want).slice(0, 300)}`);
    }
    if (at === row) break;
    if (!page.links || typeof page.links.next !== 'string') die(`find: the page at row ${at} has no links.next`);
    const next = new URL(page.links.next, 'http://x');
    if (next.pathname !== loc) die(`find: links.next leads to ${next.pathname}, not ${loc}`);
    path = next.pathname + next.search;
    if (at === 0) page2 = path;
  }

  // 3. what the module asks the backend for the measured page and page 2
  // (beside what a child asks to learn the location's index: learningRead)
  const recordFind = async (p) => {
    const r = await recordPage(base, p, log);
    sameAuth('the find page', r.reqs, auth);
    return { ...r, reqs: r.reqs.filter((q) => !learningRead(q)) };
  };
  const rec = await recordFind(path);
  const rec2 = await recordFind(page2);
  for (const [what, r] of [['find page', rec], ['find page 2', rec2]]) {
    if (r.reqs.length !== 1) die(`${what}: ${r.reqs.length} backend requests, not 1`);
  }

  // 4. the floors: CouchDB's bookmark page (the bookmark after POSTS_ROW
  // rows) and its skip page, with the module's limit (the page and the row
  // that shows whether another follows), their pages the module's page's
  // documents
  // (a numbered page asks its index's view, a GET, and one row more for
  // its token's own: the floors take the page and the row that shows
  // whether another follows)
  const asked = rec.reqs[0].method === 'GET' ? { view: true } : JSON.parse(rec.reqs[0].body || '{}');
  const limit = asked.view || asked.queries ? size + 1 : asked.limit;
  if (!Number.isInteger(limit) || limit < size) die(`find: the module's _find asks a limit of ${limit}`);
  const { bookmark } = await straight({ ...query, limit: row, fields: ['_id'] });
  if (typeof bookmark !== 'string') die('find: CouchDB gave no bookmark');
  const byBookmark = { ...query, limit, bookmark };
  const bySkip = { ...query, limit, skip: row };
  for (const [what, body] of [['the bookmark page', byBookmark], ['the skip page', bySkip]]) {
    const a = await straight(body);
    if (!same(a.docs.slice(0, size), rec.page.items)) die(`find: ${what} ${JSON.stringify(ids(a.docs)).slice(0, 300)} is not the module's page ${JSON.stringify(ids(rec.page.items)).slice(0, 300)}`);
  }
  const bookmarkText = await get(backend + findUrl, { method: 'POST', auth, body: JSON.stringify(byBookmark) });
  const bytes = (t) => Buffer.byteLength(t);
  fs.writeFileSync(`${out}/find.path`, path + '\n');
  fs.writeFileSync(`${out}/find-page2.path`, page2 + '\n');
  fs.writeFileSync(`${out}/find-bookmark.json`, JSON.stringify(byBookmark) + '\n');
  fs.writeFileSync(`${out}/find-skip.json`, JSON.stringify(bySkip) + '\n');
  fs.writeFileSync(`${out}/find-sizes.txt`, `json=${bytes(rec.text)} bookmark=${bytes(bookmarkText.text)}\n`);
  fs.writeFileSync(`${out}/find-requests.txt`, [['find page', path, rec], ['find page 2', page2, rec2]].map(([w, p, r]) =>
    `${w} ${p}: ${r.reqs.length} backend request\n    ${r.reqs.map((q) => `${q.method} ${q.url} ${q.body}`).join('\n    ')}\n`).join(''));
  console.error(`check: the _find location walked ${row / size + 1} pages by links.next in CouchDB's own _find order; ` +
    `its page at row ${row} is CouchDB's bookmark page and skip page of the same query; one backend request for it and for page 2; the same Authorization header throughout`);
}

function sent(args) {
  const [log, from, auth, ...specs] = args;
  const reqs = readLog(log).slice(Number(from));
  if (reqs.length < specs.length) die(`sent: ${reqs.length} requests recorded, ${specs.length} expected`);
  specs.forEach((spec, i) => {
    const m = spec.match(/^([A-Z]+) (\S+) (.*)$/s);
    const [method, url, body] = m ? [m[1], m[2], m[3]] : ['GET', spec, ''];
    const r = reqs[i];
    if (r.method !== method || r.url !== url || r.body !== body) {
      die(`sent: request ${i + 1} was ${r.method} ${r.url} ${r.body.slice(0, 100)}, expected ${method} ${url} ${body.slice(0, 100)}`);
    }
    if ((r.authorization || '') !== auth) die(`sent: request ${i + 1} (${method} ${url}) carried another Authorization header than the module's`);
    if (method === 'POST' && r.content_type !== 'application/json') die(`sent: the POST carried Content-Type ${r.content_type}`);
  });
}

if (require.main === module) {
  const [cmd, ...rest] = process.argv.slice(2);
  if (cmd === 'pages') {
    pages().catch((e) => die(e.stack || String(e)));
  } else if (cmd === 'posts') {
    posts().catch((e) => die(e.stack || String(e)));
  } else if (cmd === 'find') {
    find().catch((e) => die(e.stack || String(e)));
  } else if (cmd === 'sent') {
    sent(rest);
  } else {
    die('usage: node bench/check.js pages | posts | find | sent LOG FROM AUTH SPEC...');
  }
}
module.exports = { queriesOf, sameQueries };
