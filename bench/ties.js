#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
// The _find data set with ties of bench/ties (issue 40): DOCS posts of
// bench/posts.js's generator (about 4 KB each, its own seed), each with a
// category `cat` of 5 values in fixed shares and a day `day` (YYYY-MM-DD,
// about 7 posts a day; `date` is a time of that day), loaded into a CouchDB
// with _bulk_docs, with Mango JSON indexes over `cat` and over `day`; and
// the checks and execution_stats bench/ties takes before timing.
//
//   node bench/ties.js load URL [--docs N] [--replace]
//   node bench/ties.js check
//
// load: database bench_ties; indexes _design/ties-find's by-cat (["cat"]),
// by-day (["day"]), by-cat-id (["cat", "_id"]), by-day-id (["day", "_id"])
// and by-cat-day-id (["cat", "day", "_id"]). Reused when
// _local/bench-ties names the same count and generator; else deleted and
// loaded again with --replace, refused without it (as bench/posts.js does).
//
// check: environment BASE (an httpd of bench/httpd.conf.in whose backend is
// bench/recorder.js), BACKEND, BACKEND_AUTH, REC_LOG, SIZE, ROWS (rows the
// measured pages start at, spaces between, each a multiple of SIZE), OUT.
// For each case of CASES (a _find location of bench/httpd.conf.in and its
// query as CouchDB's own _find takes it) it walks the location from its
// first page by links.next, each page the next documents of one straight
// _find of the query (CouchDB's own order), to the last row of ROWS;
// records the module's one backend request for page 2 and for the page at
// each row of ROWS; gets CouchDB's bookmark after that many rows (a _find
// of ROW rows) and checks that the bookmark page of the same query (the
// module's limit) holds the module's page's documents; then sends the
// module's recorded body and the bookmark page's, each with
// "execution_stats": true, STATS_RUNS times straight, and keeps the keys
// and documents examined and the median of CouchDB's execution_time_ms.
// Writes OUT/pages.tsv, a line a page:
//   case row path bookmark_file ties_before mod_keys mod_docs mod_ms bm_keys bm_docs bm_ms mod_bytes bm_bytes
// and OUT/requests.txt (the module's request for each page).
// Uses nothing but node's own modules (Node 20: global fetch).
'use strict';

const fs = require('fs');
const posts = require('./posts.js');
const { learningRead } = require('./learning.js');

const DB = 'bench_ties';
// Changes whenever the generated documents change.
const GENERATOR = 1;
const SEED = 40;
const BATCH = 500;
// The categories in their sort order, with their counts' shares of DOCS:
// uneven, so that rows 800, 2,800 and 4,000 of 5,000 fall deep inside a
// category (800 of 900, 800 of 1,000, 1,000 of 1,250 rows in).
const CATS = [['announcements', 0.18], ['engineering', 0.22], ['operations', 0.20],
  ['releases', 0.25], ['tutorials', 0.15]];
const POSTS_A_DAY = 7;
const INDEXES = [
  { index: { fields: ['cat'] }, ddoc: 'ties-find', name: 'by-cat', type: 'json' },
  { index: { fields: ['day'] }, ddoc: 'ties-find', name: 'by-day', type: 'json' },
  // The residual location's: an index ending in _id lets a page inside a
  // tie group start at its row (CP0422 names it to an operator).
  { index: { fields: ['cat', '_id'] }, ddoc: 'ties-find', name: 'by-cat-id', type: 'json' },
  // The residual locations over small groups: a day's (about 7), a
  // category's day's (about 1.4)
  { index: { fields: ['day', '_id'] }, ddoc: 'ties-find', name: 'by-day-id', type: 'json' },
  { index: { fields: ['cat', 'day', '_id'] }, ddoc: 'ties-find', name: 'by-cat-day-id', type: 'json' },
];
// Half the tags (bench/posts.js's): a post has 4, so about 95 % of the
// posts hold one of them; the residual condition of /ties-cat-tags/.
const SOME_TAGS = ['couchdb', 'apache', 'httpd', 'paging', 'views', 'json', 'http', 'caching',
  'performance', 'replication', 'clusters', 'security', 'tokens', 'html', 'templates',
  'mango', 'indexes', 'erlang', 'c', 'linux'];
// The measured cases: the _find location of bench/httpd.conf.in, and its
// query as CouchDB's _find takes it (the bookmark's).
const CASES = [
  { name: 'cat', path: '/ties-cat/', what: '5 categories, sort `cat`',
    query: { selector: { cat: { $gt: null } }, sort: [{ cat: 'asc' }], use_index: ['ties-find', 'by-cat'], allow_fallback: false } },
  { name: 'cat-tags', path: '/ties-cat-tags/', what: '5 categories, sort `cat`, residual `tags` `$elemMatch` (95 % match)',
    query: { selector: { cat: { $gt: null }, tags: { $elemMatch: { $in: SOME_TAGS } } }, sort: [{ cat: 'asc' }], use_index: ['ties-find', 'by-cat-id'], allow_fallback: false } },
  { name: 'cat-numbered', path: '/ties-cat-numbered/', what: '5 categories, sort `cat`, numbered (`{"cat": {"$gte": null}}`: the whole index, read from its view)',
    query: { selector: { cat: { $gte: null } }, sort: [{ cat: 'asc' }], use_index: ['ties-find', 'by-cat'], allow_fallback: false } },
  { name: 'day', path: '/ties-day/', what: 'about 7 posts a day, sort `day`',
    query: { selector: { day: { $gt: null } }, sort: [{ day: 'asc' }], use_index: ['ties-find', 'by-day'], allow_fallback: false } },
  { name: 'day-tags', path: '/ties-day-tags/', what: 'about 7 posts a day, sort `day`, residual `tags` `$elemMatch` (95 % match)',
    query: { selector: { day: { $gt: null }, tags: { $elemMatch: { $in: SOME_TAGS } } }, sort: [{ day: 'asc' }], use_index: ['ties-find', 'by-day-id'], allow_fallback: false } },
  { name: 'cat-day-tags', path: '/ties-cat-day-tags/', what: '5 categories, then the day, sort `cat`, `day`, residual `tags` `$elemMatch` (95 % match)',
    query: { selector: { cat: { $gt: null }, tags: { $elemMatch: { $in: SOME_TAGS } } }, sort: [{ cat: 'asc' }, { day: 'asc' }], use_index: ['ties-find', 'by-cat-day-id'], allow_fallback: false } },
];

const { prng } = posts;

// All DOCS documents: bench/posts.js's posts, with cat (exact counts,
// shuffled), day (a new day after each post with probability 1/7) and date
// (a time of that day).
function documents(n) {
  const next = posts.generator(SEED);
  const rnd = prng(SEED + 1);
  const cats = [];
  CATS.forEach(([c, share], i) => {
    const count = i === CATS.length - 1 ? n - cats.length : Math.round(n * share);
    for (let k = 0; k < count; k++) cats.push(c);
  });
  for (let i = cats.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [cats[i], cats[j]] = [cats[j], cats[i]];
  }
  let day = 0;
  return cats.map((cat, i) => {
    if (i > 0 && rnd() < 1 / POSTS_A_DAY) day++;
    const d = new Date(Date.UTC(2019, 0, 1) + day * 86400000 + Math.floor(rnd() * 1440) * 60000).toISOString();
    const p = next();
    return { _id: p._id, title: p.title, cat, day: d.slice(0, 10), date: d, summary: p.summary, body: p.body, tags: p.tags };
  });
}

function die(msg) {
  console.error(`ties: ${msg}`);
  process.exit(1);
}

function client(url, authorization) {
  const u = new URL(url);
  let auth = authorization || '';
  if (u.username) auth = 'Basic ' + Buffer.from(`${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`).toString('base64');
  u.username = '';
  u.password = '';
  const base = u.origin + u.pathname.replace(/\/+$/, '');
  return async (method, path, body, ok = [200, 201, 202]) => {
    const headers = { Accept: 'application/json', ...(auth ? { Authorization: auth } : {}) };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const res = await fetch(base + path, { method, headers, body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body) });
    const text = await res.text();
    if (!ok.includes(res.status)) throw new Error(`${method} ${path}: HTTP ${res.status} ${text.slice(0, 300).trim()}`);
    return { status: res.status, text, json: text ? JSON.parse(text) : null };
  };
}

const { settled } = posts;

// Every index built: a _find that must use it waits for it.
async function indexesBuilt(couch) {
  for (const ix of INDEXES) {
    await couch('POST', `/${DB}/_find`, { selector: {}, sort: ix.index.fields.map((f) => ({ [f]: 'asc' })), limit: 1,
      fields: ['_id'], use_index: [ix.ddoc, ix.name], allow_fallback: false });
  }
}

async function load(argv) {
  let url = null, n = 5000, replace = false;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--docs') n = Number(argv[++i]);
    else if (argv[i] === '--replace') replace = true;
    else if (!url) url = argv[i];
    else die(`unknown argument ${argv[i]}`);
  }
  if (!url || !Number.isInteger(n) || n < 1000) die('usage: node bench/ties.js load URL [--docs N>=1000] [--replace]');
  const couch = client(url);
  const db = await couch('GET', `/${DB}`, undefined, [200, 404]);
  if (db.status === 200) {
    const marker = await couch('GET', `/${DB}/_local/bench-ties`, undefined, [200, 404]);
    if (marker.status === 200 && marker.json.docs === n && marker.json.generator === GENERATOR) {
      console.log(`${DB} holds the ${n} documents already: reused`);
      // an index added to INDEXES since it was loaded is made now
      for (const ix of INDEXES) await settled(() => couch('POST', `/${DB}/_index`, ix));
      await indexesBuilt(couch);
      return;
    }
    if (!replace) die(`${DB} holds other documents than ${n} of generator ${GENERATOR}: delete it, or give --replace`);
    console.log(`${DB} holds other documents: loading ${n} again`);
    await couch('DELETE', `/${DB}`);
  }
  const t0 = Date.now();
  await settled(() => couch('PUT', `/${DB}`, undefined, [201, 202, 412]));
  for (const ix of INDEXES) await settled(() => couch('POST', `/${DB}/_index`, ix));
  const docs = documents(n);
  let bytes = 0;
  for (let done = 0; done < n; done += BATCH) {
    const batch = docs.slice(done, done + BATCH);
    for (const d of batch) bytes += Buffer.byteLength(JSON.stringify(d));
    const res = await couch('POST', `/${DB}/_bulk_docs`, { docs: batch });
    const failed = res.json.filter((r) => r.error);
    if (failed.length) die(`_bulk_docs: ${failed.length} failed, first ${JSON.stringify(failed[0])}`);
    await indexesBuilt(couch);
  }
  await couch('PUT', `/${DB}/_local/bench-ties`, { docs: n, generator: GENERATOR, seed: SEED, mean_doc_bytes: Math.round(bytes / n) });
  console.log(`${n} documents loaded into ${DB}, about ${Math.round(bytes / n)} bytes each, indexed (${Math.round((Date.now() - t0) / 1000)} s)`);
}

const env = (k) => {
  const v = process.env[k];
  if (v === undefined) die(`${k} is not set`);
  return v;
};
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
const median = (a) => { const s = [...a].sort((x, y) => x - y); return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2; };

async function check() {
  const base = env('BASE');
  const auth = env('BACKEND_AUTH');
  const couch = client(env('BACKEND'), auth);
  const log = env('REC_LOG');
  const size = Number(env('SIZE'));
  const rows = env('ROWS').trim().split(/\s+/).map(Number);
  const runs = Number(process.env.STATS_RUNS || 5);
  const out = env('OUT');
  for (const r of rows) if (!(r >= size && r % size === 0)) die(`ROWS: ${r} is not a positive multiple of ${size}`);
  const findUrl = `/${DB}/_find`;
  const lines = [], requests = [];
  for (const c of CASES) {
    // CouchDB's own order of the query, sort values beside
    const sortFields = c.query.sort.map((f) => Object.keys(f)[0]);
    const field = sortFields.join(', ');
    const all = (await couch('POST', findUrl, { ...c.query, limit: 100000, fields: ['_id', ...sortFields] })).json.docs;
    const values = (d) => JSON.stringify(sortFields.map((f) => d[f]));
    const want = [size, ...rows].filter((r) => r + size <= all.length);
    for (const r of rows) if (!want.includes(r)) console.error(`ties: ${c.name}: the query has ${all.length} rows: no page at row ${r}`);
    const last = Math.max(...want);
    // the walk by links.next; the module's requests for the measured pages
    let path = c.path;
    for (let at = 0; at <= last; at += size) {
      const from = fs.existsSync(log) ? fs.readFileSync(log, 'utf8').split('\n').filter(Boolean).length : 0;
      const res = await fetch(base + path, { headers: { Accept: 'application/json' } });
      const text = await res.text();
      if (res.status !== 200) die(`${c.name}: GET ${path}: HTTP ${res.status} ${text.slice(0, 300)}`);
      const page = JSON.parse(text);
      const ids = (page.items || []).map((d) => d._id);
      if (!same(ids, all.slice(at, at + size).map((d) => d._id))) {
        die(`${c.name}: the page at row ${at} (${path}) holds ${JSON.stringify(ids).slice(0, 200)}, not CouchDB's _find order`);
      }
      if (want.includes(at)) {
        // (beside what a child asks to learn the location's index: learningRead)
        const reqs = fs.readFileSync(log, 'utf8').split('\n').filter(Boolean).slice(from).map((l) => JSON.parse(l)).filter((r) => !learningRead(r));
        // a view's page: a GET, or, with a range's probes, one multi-query POST
        const view = reqs.length === 1 && /\/_view\//.test(reqs[0].url)
          && (reqs[0].method === 'GET' || /\/queries$/.test(reqs[0].url));
        if (reqs.length !== 1 || !(view || (reqs[0].method === 'POST' && reqs[0].url.endsWith('/_find')))) {
          die(`${c.name}: the page at row ${at}: ${reqs.length} backend requests, not one POST _find or view GET: ${JSON.stringify(reqs).slice(0, 300)}`);
        }
        if ((reqs[0].authorization || '') !== auth) die(`${c.name}: the module's Authorization header is not the floors'`);
        // a view's page: no execution_stats; the rows it reads are its limit
        const viewLimit = !view ? 0 : reqs[0].method === 'GET'
          ? Number(new URL(reqs[0].url, 'http://x').searchParams.get('limit'))
          : Math.max(...JSON.parse(reqs[0].body).queries.map((q) => Number(q.limit || 0)));
        const asked = view ? { limit: size + 1 } : JSON.parse(reqs[0].body);
        // the bookmark after `at` rows, and its page with the module's limit
        const { bookmark } = (await couch('POST', findUrl, { ...c.query, limit: at, fields: ['_id'] })).json;
        const byBookmark = { ...c.query, limit: asked.limit, bookmark };
        const bm = await couch('POST', findUrl, byBookmark);
        if (!same(bm.json.docs.slice(0, size), page.items)) die(`${c.name}: the bookmark page at row ${at} is not the module's page`);
        const sv = sortFields.map((f) => all[at][f]).join(', ');
        let tiesBefore = 0;
        for (let i = at - 1; i >= 0 && values(all[i]) === values(all[at]); i--) tiesBefore++;
        const stats = async (body) => {
          const ms = [];
          let s = null;
          for (let i = 0; i < runs; i++) {
            s = (await couch('POST', findUrl, { ...body, execution_stats: true })).json.execution_stats;
            ms.push(s.execution_time_ms);
          }
          return [s.total_keys_examined, s.total_docs_examined, median(ms).toFixed(1)];
        };
        const bmFile = `${out}/${c.name}-${at}.bookmark.json`;
        fs.writeFileSync(bmFile, JSON.stringify(byBookmark) + '\n');
        const mine = view ? [`${viewLimit} (view rows)`, `${viewLimit} (view rows)`, '–'] : await stats(asked);
        lines.push([c.name, at, path, bmFile, tiesBefore, ...mine, ...(await stats(byBookmark)),
          Buffer.byteLength(text), bm.text.length].join('\t'));
        requests.push(`${c.name} row ${at} (${tiesBefore} rows before it share its ${field} "${sv}"): GET ${path}\n    ${reqs[0].method} ${reqs[0].url} ${reqs[0].body}\n`);
      }
      if (at === last) break;
      if (!page.links || typeof page.links.next !== 'string') die(`${c.name}: the page at row ${at} has no links.next`);
      const next = new URL(page.links.next, 'http://x');
      path = next.pathname + next.search;
    }
    console.error(`ties: ${c.name}: the walk to row ${last} by links.next is CouchDB's own _find order; ` +
      `the bookmark pages hold the module's pages' documents`);
  }
  fs.writeFileSync(`${out}/pages.tsv`, lines.join('\n') + '\n');
  fs.writeFileSync(`${out}/requests.txt`, requests.join(''));
}

if (require.main === module) {
  const [cmd, ...rest] = process.argv.slice(2);
  const run = cmd === 'load' ? () => load(rest) : cmd === 'check' ? check : null;
  if (!run) die('usage: node bench/ties.js load URL [--docs N] [--replace] | check');
  run().catch((e) => die(e.stack || String(e)));
}
module.exports = { DB, CASES, INDEXES, SOME_TAGS, documents, client };
