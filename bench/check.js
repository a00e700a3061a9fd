#!/usr/bin/env node
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
//       floors' GET paths: first page, forward, backward), OUT (a folder).
//       Walks from the first page through links.next to the page at row
//       LATER_ROW; records the backend requests the module makes for that
//       page and for the first page; checks that every floor query is one
//       the module makes (same view, same parameters), that the module's
//       Authorization header is BACKEND_AUTH, that the floor (a) GETs and
//       the floor (b) multi-query POST answer the same rows, and that the
//       module's pages hold exactly those rows and tokens. Writes to OUT:
//       later.path (the walked page's path, as the module linked it),
//       floor-b.json (the POST body) or floor-b.unsupported (why not),
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

// Every floor query must be one the module makes for the same page.
function sameQueries(what, floorPaths, reqs) {
  const moduleQs = reqs.flatMap((r) => queriesOf(r.method, r.url, r.body));
  const left = [...moduleQs];
  for (const p of floorPaths) {
    const [fq] = queriesOf('GET', p, '');
    const i = left.findIndex((mq) => mq.view === fq.view && same(mq.params, fq.params));
    if (i < 0) {
      die(`${what}: the floor asks ${show(fq)}, which the module does not ask; the module asks:\n    ${moduleQs.map(show).join('\n    ')}\n` +
        'the floors must ask CouchDB for what the module asks: update bench_forward/bench_backward/bench_first in bench/lib.sh');
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

// The multi-query POST body of the floor GETs: each GET's parameters, as the
// JSON values CouchDB reads them as.
function postBody(paths) {
  return JSON.stringify({ queries: paths.map((p) => queriesOf('GET', p, '')[0].params) });
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

// Floor (b): the same GETs as one multi-query POST; its rows must be the
// GETs' rows. Writes OUT/NAME.json (the body), or OUT/NAME.unsupported when
// the backend has no multi-query endpoint (pouchdb-server: 404).
async function floorPost(name, backend, auth, view, paths, getAnswers, out) {
  const body = postBody(paths);
  const res = await get(backend + view + '/queries', { method: 'POST', auth, body });
  if (res.status !== 200 || !res.json || !Array.isArray(res.json.results)) {
    const why = `POST ${view}/queries answered HTTP ${res.status}: ${res.text.slice(0, 200).trim()}`;
    fs.writeFileSync(`${out}/${name}.unsupported`, why + '\n');
    console.error(`check: ${name}: no multi-query floor: ${why}`);
    return;
  }
  if (res.json.results.length !== paths.length) die(`${name}: ${res.json.results.length} results for ${paths.length} queries`);
  paths.forEach((p, i) => {
    if (!same(res.json.results[i].rows, getAnswers[i].rows)) {
      die(`${name}: the POST's result ${i + 1} has other rows than GET ${p}`);
    }
  });
  fs.writeFileSync(`${out}/${name}.json`, body);
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
  const laterQs = sameQueries('later page', [fwd, bwd], later.reqs);
  const firstQs = sameQueries('first page', [first], firstPage.reqs);

  // 3. the floors' own answers, straight from the backend
  const [fwdAns, bwdAns, firstAns] = await Promise.all([fwd, bwd, first].map((p) => getJson(backend + p, { auth })));
  samePage('later page', later.page, size, fwdAns.rows, bwdAns.rows);
  samePage('first page', firstPage.page, size, firstAns.rows, null);
  if (firstPage.page.prev !== null) die('first page: prev is not null');
  await floorPost('floor-b', backend, auth, view, [fwd, bwd], [fwdAns, bwdAns], out);

  const extra = (qs) => (qs.extra.length ? `; beyond the floor's queries: ${qs.extra.map(show).join('; ')}` : '');
  fs.writeFileSync(`${out}/module-requests.txt`,
    `later page ${laterPath}: ${later.reqs.length} backend ${later.reqs.length === 1 ? 'request' : 'requests'}${extra(laterQs)}\n    ${describe(later.reqs)}\n` +
    `first page /items/: ${firstPage.reqs.length} backend ${firstPage.reqs.length === 1 ? 'request' : 'requests'}${extra(firstQs)}\n    ${describe(firstPage.reqs)}\n`);
  console.error(`check: the module asks what the floors ask (later page: ${later.reqs.length} backend requests, ` +
    `${laterQs.moduleQs.length} queries; first page: ${firstPage.reqs.length}, ${firstQs.moduleQs.length}), ` +
    'with the same Authorization header; the rows and tokens are the same');
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
module.exports = { queriesOf, sameQueries, postBody };
