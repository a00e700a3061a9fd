#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
// The real-sized page of bench/run: POSTS blog posts of about 4 KB each,
// generated (the same posts on every run: a seeded PRNG) and loaded into a
// CouchDB with _bulk_docs, with the view bench/run pages over.
//
//   node bench/posts.js URL [--posts N] [--replace]
//
// URL is the CouchDB server; it may carry user:pass@ (sent as HTTP Basic
// credentials). Database bench_posts; documents
//   {_id, title, date, summary, body, tags}
// title 4-9 words (some with < > & " in them), date ISO 8601 to the minute
// (one slot in five holds 2-4 posts: equal keys), summary 30 words, body
// 550 words in paragraphs, 4 tags; some words are not ASCII (é, ü, a CJK
// word, an emoji). View _design/posts/_view/by_date:
//   function (doc) { if (doc.date) emit(doc.date, null); }
// and a Mango JSON index over date, _design/posts-find's by-date, for the
// _find page (bench/run's /posts-find/ and CouchDB's bookmark).
// A finished load leaves _local/bench-posts saying how many posts of which
// generator it holds: a later run with the same count reuses the database
// (no load; the index is built already). A database with another count, or
// an interrupted load, is deleted and loaded again with --replace, and
// refused without it (a server of the user's own: nothing of it is deleted
// unasked). The view's index and the Mango index are built before the
// script ends, batch by batch while loading.
// Uses nothing but node's own modules (Node 20: global fetch).
'use strict';

// The database (--db): bench/run's, unless a bench of another size names its own.
let DB = 'bench_posts';
// Changes whenever the generated posts change: a database of another
// generator is not reused.
const GENERATOR = 2;
// The PRNG's seed: one whose row 12,000 of 20,000 (the page bench/run
// measures) shares its minute with the row before it, so that the page's
// startkey_docid decides where it starts.
const SEED = 4;
const BATCH = 500;          // posts per _bulk_docs, about 2 MB
const BODY_WORDS = 550;
const SUMMARY_WORDS = 30;
const TAGS_PER_POST = 4;

const DDOC = {
  _id: '_design/posts',
  language: 'javascript',
  views: { by_date: { map: 'function (doc) { if (doc.date) emit(doc.date, null); }' } },
};
// The Mango index of the _find page, made with POST /DB/_index.
const FIND_INDEX = { index: { fields: ['date'] }, ddoc: 'posts-find', name: 'by-date', type: 'json' };
// Design documents beside the posts: _design/posts and _design/posts-find.
const DESIGN_DOCS = 2;

// --- the words ---------------------------------------------------------------
const WORDS = `
the of and a to in is it that for on with as was at by be this from or have
an are not but had his they you were her she which their one all we there
been has when who will more no if out so said what up its about into than
them can only other new some could time these two may then do first any my
now such like our over man me even most made after also did many before must
through back years where much your way well down should because each just
those people how too little state good very make world still own see men
work long get here between both life being under never day same another know
while last might us great old year off come since against go came right used
take three states himself few house use during without again place american
around however home small found thought went say part once general high upon
school every don't does got united left number course war until always away
something fact though water less public put think almost hand enough far
took head yet government system better set told nothing night end why called
didn't eyes find going look asked later knew point next program city business
give group toward young days let room president side social given present
several order national second possible rather per face among form important
often things looking early white case john become large big need four within
felt children along saw best church ever least power development thing light
seemed family interest want members mind country area others done turned
although open god service problem certain kind different thus began door help
means sense whole matter perhaps itself york times human law line above name
example action company hands local show whether five history gave today
either act feet across taken past quite anyone having seen death experience
body word half really field am car words already themselves information tell
together college shall money period held keep sure real probably free seems
political cannot behind miss question air office making brought whose special
major heard problems ago became federal study available known result street
economic boy position reason change south board individual job society areas
west close turn love community true court force full seem am view paper
couch page view index query token cursor shard replica cluster revision
document database server proxy module header cache latency throughput
replication configuration performance documentation administrator
infrastructure availability consistency compaction partitioning
authentication authorization certificate deployment environment
measurement benchmark regression throughput concurrency connection
collation attachment conflict changes sequence checkpoint continuous
application interface library framework development production staging
operations monitoring observability dashboard notification subscription
distributed eventually transaction isolation durability scalability
understanding considerable particularly everything something sometimes
straightforward unfortunately interesting experiment experiences
responsibility organization conversation neighbourhood independent
`.trim().split(/\s+/);
// Not ASCII: a page escapes nothing of these, but its bytes are longer than
// its characters, and a reader that checks UTF-8 reads every byte.
const FOREIGN = ['café', 'naïve', 'über', 'Zürich', 'façade', 'résumé', 'smörgåsbord',
  'crème', 'jalapeño', 'Ærø', '東京', '日本語', '🚀', '☕'];
const TAGS = ['couchdb', 'apache', 'httpd', 'paging', 'views', 'json', 'http', 'caching',
  'performance', 'replication', 'clusters', 'security', 'tokens', 'html', 'templates',
  'mango', 'indexes', 'erlang', 'c', 'linux', 'debian', 'benchmarks', 'design', 'ops',
  'monitoring', 'testing', 'fuzzing', 'unicode', 'dates', 'links', 'proxies', 'tls',
  'logging', 'memory', 'latency', 'apis', 'rest', 'documents', 'reduce', 'partitions'];

// mulberry32: a small seeded PRNG, so that every run generates the same posts
function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function generator(seed) {
  const rnd = prng(seed);
  const int = (lo, hi) => lo + Math.floor(rnd() * (hi - lo + 1));
  const pick = (list) => list[Math.floor(rnd() * list.length)];
  // one word in 150 is not ASCII
  const word = () => (rnd() < 1 / 150 ? pick(FOREIGN) : pick(WORDS));
  const capital = (w) => w.charAt(0).toUpperCase() + w.slice(1);
  const words = (n) => Array.from({ length: n }, word);

  // exactly n words in sentences of 6-18 words, some with a comma
  function sentences(n) {
    const out = [];
    let left = n;
    while (left > 0) {
      let len = Math.min(left, int(6, 18));
      if (left - len > 0 && left - len < 4) len = left;    // no stub sentence at the end
      const s = words(len);
      s[0] = capital(s[0]);
      if (len > 8 && rnd() < 0.4) s[int(2, len - 4)] += ',';
      out.push(s.join(' ') + (rnd() < 0.08 ? '?' : '.'));
      left -= len;
    }
    return out;
  }

  // the body: its sentences in paragraphs of 3-6, blank lines between
  function body() {
    const s = sentences(BODY_WORDS);
    const paras = [];
    while (s.length) paras.push(s.splice(0, int(3, 6)).join(' '));
    return paras.join('\n\n');
  }

  // one title in ten holds characters a page must escape
  function title() {
    const t = words(int(4, 9)).map((w, i) => (i === 0 || rnd() < 0.5 ? capital(w) : w));
    if (rnd() < 0.1) {
      const i = int(0, t.length - 2);
      switch (int(0, 3)) {
        case 0: t[i] = `"${t[i]}"`; break;
        case 1: t[i] = `<${t[i]}>`; break;
        case 2: t.splice(i + 1, 0, '&'); break;
        default: t.splice(i + 1, 0, rnd() < 0.5 ? '<' : '>'); break;
      }
    }
    return t.join(' ');
  }

  // ids like CouchDB's own: 32 hex digits, drawn, so that the order of
  // posts sharing a minute (by id) is not the order they were written in
  const ids = new Set();
  function id() {
    let s;
    do {
      s = Array.from({ length: 4 }, () => Math.floor(rnd() * 2 ** 32).toString(16).padStart(8, '0')).join('');
    } while (ids.has(s));
    ids.add(s);
    return s;
  }

  // minutes from 2016-01-01: a slot every 1-240 minutes, and one slot in
  // five holding 2-4 posts (a site that publishes several at once)
  let minute = 0;
  let inSlot = 0;
  function date() {
    if (inSlot === 0) {
      minute += int(1, 240);
      inSlot = rnd() < 1 / 5 ? int(2, 4) : 1;
    }
    inSlot--;
    return new Date(Date.UTC(2016, 0, 1) + minute * 60000).toISOString();
  }

  return () => {
    const tags = new Set();
    while (tags.size < TAGS_PER_POST) tags.add(pick(TAGS));
    return {
      _id: id(),
      title: title(),
      date: date(),
      summary: sentences(SUMMARY_WORDS).join(' '),
      body: body(),
      tags: [...tags],
    };
  };
}

// --- CouchDB -------------------------------------------------------------------
function usage(msg) {
  if (msg) console.error(`posts: ${msg}`);
  console.error('usage: node bench/posts.js URL [--posts N] [--db NAME] [--replace]');
  process.exit(2);
}

function parseArgs(argv) {
  const opt = { url: null, posts: 20000, replace: false, db: DB };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--posts') {
      opt.posts = Number(argv[++i]);
      if (!Number.isInteger(opt.posts) || opt.posts < 1) usage('--posts needs a count');
    } else if (a === '--db') {
      opt.db = argv[++i];
      if (!/^[a-z][a-z0-9_]*$/.test(opt.db || '')) usage('--db needs a database name');
    } else if (a === '--replace') {
      opt.replace = true;
    } else if (!opt.url && !a.startsWith('--')) {
      opt.url = a;
    } else {
      usage(`unknown argument ${a}`);
    }
  }
  if (!opt.url) usage('no URL');
  return opt;
}

function client(url) {
  const u = new URL(url);
  const headers = { Accept: 'application/json' };
  if (u.username) {
    const cred = `${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`;
    headers.Authorization = 'Basic ' + Buffer.from(cred).toString('base64');
  }
  u.username = '';
  u.password = '';
  const base = u.origin + u.pathname.replace(/\/+$/, '');
  return async (method, path, body, okStatuses = [200, 201, 202]) => {
    const init = { method, headers: { ...headers } };
    if (body !== undefined) {
      init.headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    const res = await fetch(base + path, init);
    const text = await res.text();
    if (!okStatuses.includes(res.status)) {
      throw new Error(`${method} ${path}: HTTP ${res.status} ${text.slice(0, 300).trim()}`);
    }
    return { status: res.status, json: text ? JSON.parse(text) : null };
  };
}

// The database's state: null (none), or its doc count and the marker of a
// finished load.
async function state(couch) {
  const db = await couch('GET', `/${DB}`, undefined, [200, 404]);
  if (db.status === 404) return null;
  const marker = await couch('GET', `/${DB}/_local/bench-posts`, undefined, [200, 404]);
  return { docs: db.json.doc_count, marker: marker.status === 200 ? marker.json : null };
}

// The view's index built: a query waits for the indexer.
async function viewRows(couch) {
  const v = await couch('GET', `/${DB}/_design/posts/_view/by_date?limit=0`);
  return v.json.total_rows;
}

// The Mango index built likewise: a _find that must use it waits for it.
async function findIndexBuilt(couch) {
  await couch('POST', `/${DB}/_find`, {
    selector: {}, sort: [{ date: 'asc' }], limit: 1, fields: ['_id'],
    use_index: [FIND_INDEX.ddoc, FIND_INDEX.name], allow_fallback: false,
  });
}

// A database deleted a moment before may answer 500 while its old shards
// go (CouchDB 3.4.3 did, to the design document's PUT of a database made
// again at once): its first writes are tried again, for up to 5 s.
async function settled(write) {
  for (let tries = 1; ; tries++) {
    try {
      return await write();
    } catch (e) {
      if (tries >= 10 || !/HTTP 500/.test(e.message)) throw e;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}

async function load(couch, posts) {
  const t0 = Date.now();
  await settled(() => couch('PUT', `/${DB}`, undefined, [201, 202, 412]));
  await settled(() => couch('PUT', `/${DB}/${DDOC._id}`, DDOC, [201, 409]));
  await settled(() => couch('POST', `/${DB}/_index`, FIND_INDEX));
  const next = generator(SEED);
  let bytes = 0;
  let shown = 0;
  for (let done = 0; done < posts;) {
    const docs = Array.from({ length: Math.min(BATCH, posts - done) }, next);
    for (const d of docs) bytes += Buffer.byteLength(JSON.stringify(d));
    const res = await couch('POST', `/${DB}/_bulk_docs`, { docs });
    const failed = res.json.filter((r) => r.error);
    if (failed.length) throw new Error(`_bulk_docs: ${failed.length} failed, first: ${JSON.stringify(failed[0])}`);
    done += docs.length;
    // the index follows the load, so that no single query waits for all of it
    await viewRows(couch);
    await findIndexBuilt(couch);
    if (done * 10 >= (shown + 1) * posts || done === posts) {
      shown = Math.floor((done * 10) / posts);
      console.log(`${done} / ${posts} posts written and indexed (${Math.round((Date.now() - t0) / 1000)} s)`);
    }
  }
  const mean = Math.round(bytes / posts);
  await couch('PUT', `/${DB}/_local/bench-posts`, { posts, generator: GENERATOR, seed: SEED, mean_doc_bytes: mean });
  return mean;
}

async function main() {
  const opt = parseArgs(process.argv.slice(2));
  DB = opt.db;
  const couch = client(opt.url);
  const want = { posts: opt.posts, generator: GENERATOR, seed: SEED };
  const s = await state(couch);
  const complete = s && s.marker && s.docs === opt.posts + DESIGN_DOCS &&
    Object.keys(want).every((k) => s.marker[k] === want[k]);
  if (complete) {
    console.log(`${DB} holds the ${opt.posts} posts already (about ${s.marker.mean_doc_bytes} bytes each): reused`);
  } else {
    if (s) {
      const what = s.marker ? `${s.marker.posts} posts of generator ${s.marker.generator}` : `${s.docs} documents of an unfinished load`;
      if (!opt.replace) throw new Error(`${DB} holds ${what}, not ${opt.posts} posts: delete it, or give --replace`);
      console.log(`${DB} holds ${what}: loading ${opt.posts} posts again`);
      await couch('DELETE', `/${DB}`);
    }
    const mean = await load(couch, opt.posts);
    console.log(`${opt.posts} posts loaded, about ${mean} bytes each`);
  }
  const rows = await viewRows(couch);
  if (rows !== opt.posts) throw new Error(`the view by_date has ${rows} rows, not ${opt.posts}`);
  await findIndexBuilt(couch);
}

if (require.main === module) {
  main().catch((e) => {
    console.error(`posts: ${e.message}`);
    process.exit(1);
  });
}
module.exports = { generator, prng, settled, SEED, DB, FIND_INDEX };
