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
//   node bench/check.js sent LOG FROM AUTH SPEC...
//       The requests in LOG from line FROM on (0-based) are SPEC... in turn
//       (as bench/paths.lua takes them: a GET path, or "POST PATH BODY"),
//       each with Authorization AUTH (empty: none).
'use strict';

const fs = require('fs');
const http = require('http');

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
        resolve({ status: res.statusCode, text, json });
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
async function recordPage(base, path, log) {
  const before = readLog(log).length;
  const page = await getJson(base + path);
  const reqs = readLog(log).slice(before);
  if (reqs.length === 0) die(`the module answered ${path} without asking the backend: is the recorder in front of it?`);
  return { page, reqs };
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

function parseToken(what, t) {
  try {
    return JSON.parse(t);
  } catch (e) {
    return die(`${what}: the token ${JSON.stringify(t).slice(0, 80)} is not plain JSON (CouchPageTokenSecret set?): the check cannot read it`);
  }
}

// The module's page holds the floor's rows: items = the forward rows of a
// page, next = the row after them, prev = the first row of the page before.
function samePage(what, page, size, fwdRows, bwdRows) {
  if (!Array.isArray(page.items)) die(`${what}: the module's page has no items`);
  const want = fwdRows.slice(0, size).map(item);
  if (!same(page.items.map(item), want)) {
    die(`${what}: the module's items are not the floor's forward rows:\n  module ${JSON.stringify(page.items.map(item)).slice(0, 400)}\n  floor  ${JSON.stringify(want).slice(0, 400)}`);
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

// Floor (b): the module's own batch for the later page, the one
// multi-query POST it sent (recorded), sent again straight. Its results must
// hold every row the module's page is made of: the page's rows, the row
// after them (next) and the previous page's first row (prev), as floor (a)
// answered them. Writes OUT/floor-b.url and OUT/floor-b.json, or
// OUT/floor-b.unsupported when the module sent GETs because the backend
// has no multi-query endpoint (pouchdb-server).
async function floorPost(backend, auth, reqs, shown, out) {
  const posts = reqs.filter((r) => r.method === 'POST' && new URL(r.url, 'http://x').pathname.endsWith('/queries'));
  if (posts.length === 0) {
    const res = await get(`${backend}${new URL(reqs[0].url, 'http://x').pathname}/queries`,
      { method: 'POST', auth, body: JSON.stringify({ queries: [{ limit: 0 }] }) });
    if (res.status === 200) die(`later page: the module sent ${reqs.length} GETs, but the backend has a multi-query endpoint`);
    const why = `the module sent ${reqs.length} GETs: the backend has no multi-query endpoint (POST .../queries answered HTTP ${res.status})`;
    fs.writeFileSync(`${out}/floor-b.unsupported`, why + '\n');
    console.error(`check: no floor (b): ${why}`);
    return null;
  }
  if (reqs.length !== 1) die(`later page: the module made ${reqs.length} backend requests, not its one multi-query POST: floor (b) would not be its batch`);
  const batch = posts[0];
  if (batch.content_type !== 'application/json') die(`floor (b): the module's batch carried Content-Type ${batch.content_type}, wrk sends application/json`);
  const res = await get(backend + batch.url, { method: 'POST', auth, body: batch.body });
  if (res.status !== 200 || !res.json || !Array.isArray(res.json.results)) {
    die(`floor (b): POST ${batch.url} answered HTTP ${res.status}: ${res.text.slice(0, 200).trim()}`);
  }
  const nq = JSON.parse(batch.body).queries.length;
  if (res.json.results.length !== nq) die(`floor (b): ${res.json.results.length} results for ${nq} queries`);
  const held = new Set(res.json.results.flatMap((r) => r.rows.map((row) => JSON.stringify(canonical(item(row))))));
  const missing = shown.filter((row) => !held.has(JSON.stringify(canonical(item(row)))));
  if (missing.length) {
    die(`floor (b): the module's batch, sent straight, lacks ${missing.length} of the rows the page shows, e.g. ${JSON.stringify(item(missing[0]))}`);
  }
  fs.writeFileSync(`${out}/floor-b.url`, batch.url);
  fs.writeFileSync(`${out}/floor-b.json`, batch.body);
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
    die(`walk: the token of row ${laterRow} is ${startParam}, not [${laterRow},"${laterId}"] (bench_token builds the deep page's token that way)`);
  }
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
  const shown = [...fwdAns.rows.slice(0, size + 1), ...bwdAns.rows.slice(-1)];
  const b = await floorPost(backend, auth, later.reqs, shown, out);

  const extra = (qs) => (qs.extra.length ? `; beyond the floor's query: ${qs.extra.map(show).join('; ')}` : '');
  fs.writeFileSync(`${out}/module-requests.txt`,
    `later page ${laterPath}: ${later.reqs.length} backend ${later.reqs.length === 1 ? 'request' : 'requests'}\n    ${describe(later.reqs)}\n` +
    `first page /items/: ${firstPage.reqs.length} backend ${firstPage.reqs.length === 1 ? 'request' : 'requests'}${extra(firstQs)}\n    ${describe(firstPage.reqs)}\n`);
  console.error(`check: the seed's two GETs (a) make the module's later page exactly; ` +
    (b ? `the module's batch (b), ${b.queries} queries in one POST ${b.url} (${b.rows.join(' + ')} rows), holds all ${shown.length} rows the page is made of; ` : '') +
    `the first page is its floor's one query (${firstPage.reqs.length} request); the same Authorization header throughout`);
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
  } else if (cmd === 'sent') {
    sent(rest);
  } else {
    die('usage: node bench/check.js pages | sent LOG FROM AUTH SPEC...');
  }
}
module.exports = { queriesOf, sameQueries };
