#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
// Loads the mod_couchpage fixtures into a CouchDB-compatible server
// (the embedded pouchdb-server, or a real CouchDB).
//
//   node embedded/fixtures.js [URL] [--items N] [--no-bands]  (--no-bands: nor posts)
//
// URL defaults to $COUCHDB_URL, then $POUCHDB_URL; it may carry user:pass@
// (sent as HTTP Basic credentials). Databases:
//   bands  the eleven bands of CouchDB's pagination recipe, view _design/bands/by-name
//   posts  36 blog posts {_id, title, date, summary}, view _design/posts/by-date
//          (the blog example, conf/couchpage-blog.conf) and the JSON index
//          posts-find/by-date (conf/couchpage-find.conf); loaded with the bands
//   items  (only with --items N) N docs {_id: "item000000"..., n: 0..N-1},
//          view _design/items/by_n, written and indexed 1,000 at a time with
//          the progress shown (a bar on a terminal); --items 0 makes the
//          database and its view only.
// Re-running is safe: what already exists is left as it is, an interrupted
// load of the items resumes.
// Uses nothing but node's own modules.
'use strict';

const http = require('http');
const https = require('https');

const BANDS = [
  'Biffy Clyro', 'Foo Fighters', 'Tool', 'Nirvana', 'Helmet', 'Tenacious D',
  'Future of the Left', 'A Perfect Circle', 'Silverchair',
  'Queens of the Stone Age', 'Kerub',
];
const BANDS_DDOC = {
  _id: '_design/bands',
  language: 'javascript',
  views: {
    'by-name': {
      map: 'function(doc){ if(doc.name){ var name = doc.name.replace(/^(A|The) /, ""); emit(name, null); } }',
    },
  },
};
const ITEMS_DDOC = {
  _id: '_design/items',
  language: 'javascript',
  views: { by_n: { map: 'function(doc){ emit(doc.n, null); }' } },
};
// The blog example's posts: one a week from 2024-01-03, each title and
// summary made from its number, so that every load writes the same posts.
const POST_TOPICS = [
  'Paging without skip', 'Keys that collate', 'A view of one\'s own', 'Tokens & links',
  'Reduce, then page', 'Documents in rows', 'Partitions', 'Caching at the edge',
  'Signed tokens', '<Templates> in httpd', 'Counting pages', 'Ranges of keys',
];
const POSTS = Array.from({ length: 36 }, (_, i) => {
  const n = i + 1;
  const date = new Date(Date.UTC(2024, 0, 3 + 7 * i)).toISOString().slice(0, 10);
  const topic = POST_TOPICS[i % POST_TOPICS.length];
  return {
    _id: `post-${String(n).padStart(3, '0')}`,
    title: `${topic}, part ${Math.floor(i / POST_TOPICS.length) + 1}`,
    date,
    summary: `Post ${n} of the example blog, written ${date}: notes on ${topic.toLowerCase()}.`,
  };
});
const POSTS_DDOC = {
  _id: '_design/posts',
  language: 'javascript',
  views: { 'by-date': { map: 'function(doc){ if(doc.date && doc.title){ emit(doc.date, null); } }' } },
};
const BATCH = 1000;    // items per write, each followed by a view query

function usage(msg) {
  if (msg) console.error(`fixtures: ${msg}`);
  console.error('usage: node fixtures.js [URL] [--items N] [--no-bands]  (URL default: $COUCHDB_URL or $POUCHDB_URL)');
  process.exit(2);
}

function parseArgs(argv) {
  const opt = { url: process.env.COUCHDB_URL || process.env.POUCHDB_URL || '', items: null, bands: true };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--items') {
      opt.items = Number(argv[++i]);
      if (!Number.isInteger(opt.items) || opt.items < 0) usage('--items needs a count');
    } else if (a.startsWith('--items=')) {
      opt.items = Number(a.slice(8));
      if (!Number.isInteger(opt.items) || opt.items < 0) usage('--items needs a count');
    } else if (a === '--no-bands') {
      opt.bands = false;
    } else if (a === '--url') {
      opt.url = argv[++i] || '';
    } else if (a === '-h' || a === '--help') {
      usage();
    } else if (!a.startsWith('-')) {
      opt.url = a;
    } else {
      usage(`unknown option ${a}`);
    }
  }
  if (!opt.url) usage('no server URL');
  return opt;
}

// A tiny JSON client for one server: base URL without credentials, Basic auth header.
function client(rawUrl) {
  const u = new URL(rawUrl);
  const auth = u.username
    ? 'Basic ' + Buffer.from(`${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`).toString('base64')
    : null;
  u.username = '';
  u.password = '';
  const base = u.toString().replace(/\/+$/, '');
  const mod = u.protocol === 'https:' ? https : http;
  const agent = new mod.Agent({ keepAlive: true, maxSockets: 4 });

  return function request(method, path, body) {
    return new Promise((resolve, reject) => {
      const payload = body === undefined ? null : Buffer.from(JSON.stringify(body));
      const headers = { Accept: 'application/json' };
      if (auth) headers.Authorization = auth;
      // pouchdb-server stores an empty doc when a PUT has no JSON Content-Type.
      if (payload) {
        headers['Content-Type'] = 'application/json';
        headers['Content-Length'] = payload.length;
      }
      const req = mod.request(base + path, { method, headers, agent }, (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json = null;
          try { json = text ? JSON.parse(text) : null; } catch (e) { json = { raw: text }; }
          resolve({ status: res.statusCode, body: json });
        });
      });
      req.on('error', reject);
      if (payload) req.write(payload);
      req.end();
    });
  };
}

function fail(what, res) {
  throw new Error(`${what}: HTTP ${res.status} ${JSON.stringify(res.body)}`);
}

async function ensureDb(req, db) {
  const res = await req('PUT', `/${db}`);
  if (res.status === 201 || res.status === 202) return true;
  if (res.status === 412) return false; // exists already
  fail(`create database ${db}`, res);
}

async function ensureDoc(req, db, doc) {
  const path = `/${db}/${doc._id.startsWith('_design/') ? '_design/' + encodeURIComponent(doc._id.slice(8)) : encodeURIComponent(doc._id)}`;
  const cur = await req('GET', path);
  if (cur.status === 200) return false;
  if (cur.status !== 404) fail(`read ${db}/${doc._id}`, cur);
  const res = await req('PUT', path, doc);
  if (res.status !== 201 && res.status !== 202) fail(`write ${db}/${doc._id}`, res);
  return true;
}

// Writes docs with _bulk_docs; a conflict means the doc is there already.
async function bulk(req, db, docs) {
  const res = await req('POST', `/${db}/_bulk_docs`, { docs });
  if (res.status !== 201 && res.status !== 202) fail(`_bulk_docs ${db}`, res);
  const bad = (res.body || []).filter((r) => r.error && r.error !== 'conflict');
  if (bad.length) throw new Error(`_bulk_docs ${db}: ${bad.length} failed, first: ${JSON.stringify(bad[0])}`);
}

function slug(name) {
  return name.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');
}

async function loadBands(req) {
  await ensureDb(req, 'bands');
  const have = await req('GET', '/bands/_all_docs');
  if (have.status !== 200) fail('list bands', have);
  const ids = new Set(have.body.rows.map((r) => r.id));
  const missing = BANDS.map((name) => ({ _id: slug(name), name })).filter((d) => !ids.has(d._id));
  if (missing.length) await bulk(req, 'bands', missing);
  await ensureDoc(req, 'bands', BANDS_DDOC);
  const check = await req('GET', '/bands/_design/bands/_view/by-name?limit=1');
  if (check.status !== 200) fail('query bands view', check);
  console.log(`fixtures: bands: ${check.body.total_rows} rows (${missing.length} added)`);
}

async function loadPosts(req) {
  await ensureDb(req, 'posts');
  const have = await req('GET', '/posts/_all_docs');
  if (have.status !== 200) fail('list posts', have);
  const ids = new Set(have.body.rows.map((r) => r.id));
  const missing = POSTS.filter((d) => !ids.has(d._id));
  if (missing.length) await bulk(req, 'posts', missing);
  await ensureDoc(req, 'posts', POSTS_DDOC);
  // the JSON index of the _find example (conf/couchpage-find.conf); CouchDB
  // and pouchdb-server answer "exists" when it is there already
  const index = await req('POST', '/posts/_index',
    { index: { fields: ['date'] }, ddoc: 'posts-find', name: 'by-date', type: 'json' });
  if (index.status !== 200) fail('create the posts-find index', index);
  const check = await req('GET', '/posts/_design/posts/_view/by-date?limit=1');
  if (check.status !== 200) fail('query posts view', check);
  console.log(`fixtures: posts: ${check.body.total_rows} rows (${missing.length} added)`);
}

function itemId(n) {
  return 'item' + String(n).padStart(6, '0');
}

function thousands(n) {
  return n.toLocaleString('en-US');
}

// How the items are coming along: a bar redrawn in place on a terminal, a
// line at every tenth otherwise (a log file).
function progressReporter(total) {
  const t0 = Date.now();
  const tty = process.stdout.isTTY;
  let lastTenth = -1;
  const seconds = () => ((Date.now() - t0) / 1000).toFixed(1);
  return {
    update(loaded, indexed) {
      const text = `${thousands(loaded)} / ${thousands(total)} loaded, ${thousands(indexed)} indexed (${seconds()} s)`;
      if (tty) {
        const filled = Math.round((30 * indexed) / total);
        process.stdout.write(`\rfixtures: items [${'#'.repeat(filled)}${'.'.repeat(30 - filled)}] ${text}\x1b[K`);
      } else if (Math.floor((10 * loaded) / total) > lastTenth) {
        lastTenth = Math.floor((10 * loaded) / total);
        console.log(`fixtures: items: ${text}`);
      }
    },
    done(rows, added) {
      if (tty) process.stdout.write('\n');
      console.log(`fixtures: items: view by_n ready, ${thousands(rows)} rows (${thousands(added)} docs added, ${seconds()} s)`);
    },
  };
}

// Writes the items start..end-1 that are not there yet; returns how many.
async function writeMissingItems(req, start, end) {
  const range = `startkey=${encodeURIComponent(JSON.stringify(itemId(start)))}` +
    `&endkey=${encodeURIComponent(JSON.stringify(itemId(end - 1)))}`;
  const have = await req('GET', `/items/_all_docs?${range}`);
  if (have.status !== 200) fail('list items', have);
  const ids = new Set(have.body.rows.map((r) => r.id));
  const docs = [];
  for (let n = start; n < end; n++) if (!ids.has(itemId(n))) docs.push({ _id: itemId(n), n });
  if (docs.length) await bulk(req, 'items', docs);
  return docs.length;
}

// Queries the view, which brings its index up to date; returns its rows.
async function indexItems(req) {
  const res = await req('GET', '/items/_design/items/_view/by_n?limit=0');
  if (res.status !== 200) fail('query items view', res);
  return res.body.total_rows;
}

// Loads the items a batch at a time, each batch indexed before the next is
// written: the view answers from the start and grows with the load, and an
// interrupted load resumes where it stopped.
async function loadItems(req, count) {
  await ensureDb(req, 'items');
  await ensureDoc(req, 'items', ITEMS_DDOC);
  if (count === 0) {
    console.log('fixtures: items: database and view in place');
    return;
  }
  const info = await req('GET', '/items');
  if (info.status !== 200) fail('read items info', info);
  const progress = progressReporter(count);
  let added = 0;
  // doc_count includes the design doc.
  if (info.body.doc_count < count + 1) {
    for (let start = 0; start < count; start += BATCH) {
      const end = Math.min(start + BATCH, count);
      const written = await writeMissingItems(req, start, end);
      added += written;
      // batches there already (a resumed load) pass unindexed and unshown
      if (written > 0 || end === count) progress.update(end, await indexItems(req));
    }
  }
  progress.done(await indexItems(req), added);
}

async function main() {
  const opt = parseArgs(process.argv.slice(2));
  const req = client(opt.url);
  const hello = await req('GET', '/');
  if (hello.status !== 200) fail('server welcome', hello);
  if (opt.bands) {
    await loadBands(req);
    await loadPosts(req);
  }
  if (opt.items !== null) await loadItems(req, opt.items);
}

main().then(
  () => process.exit(0),
  (err) => { console.error(`fixtures: ${err.message}`); process.exit(1); },
);
