// SPDX-License-Identifier: Apache-2.0
// The demo's embedded backend (embedded/server.js) answers view queries with
// CouchDB's offsets and startkey_docid (embedded/offsets.js): the same
// queries go to it and to an oracle, and total_rows, offset and the rows
// must be the same. The oracle is the CouchDB view double (t/double/, which
// encodes CouchDB 3.4's rules); with COUCHDB_URL (an admin of a CouchDB
// 3.x) a real CouchDB as well (it gets a database 'embedded_offsets').
//
//   node --test t/embedded/
//   COUCHDB_URL=http://admin:secret@127.0.0.1:5984 node --test t/embedded/
//
// The data keep to what the two servers collate alike (pouchdb collates
// strings by code point, CouchDB with ICU): numbers, lowercase ASCII
// strings, arrays of them, null and booleans, ids of any code points (both
// order ids by their UTF-8 bytes). Several documents share keys, some emit
// several keys, some one key twice (with one value, so that both orders of
// such rows look the same), some none. After the first round of queries the
// data change (keys moved, documents deleted and added), and the queries run
// again: the embedded server's row positions follow its index's updates;
// then once more after a restart, which reads them from disk.
'use strict';

const { describe, it, before, after } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');

const TOP = path.join(__dirname, '..', '..');
const DB = 'embedded_offsets';
const MAP = 'function(doc){ if (doc.keys) { for (var i = 0; i < doc.keys.length; i++) { emit(doc.keys[i], doc.v); } } }';

// --- servers ---------------------------------------------------------------

// Starts `node ARGS...` and resolves with its URL once a line of its stdout
// matches `listening`.
function startNode(args, listening) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => {
      out += d;
      const m = listening.exec(out);
      if (m) resolve({ child, url: m[1] });
    });
    child.stderr.on('data', (d) => { err += d; });
    child.on('exit', (code) => reject(new Error(`${args[0]} exited with ${code}: ${out}${err}`)));
  });
}

function stop(server) {
  return new Promise((resolve) => {
    if (!server || server.child.exitCode !== null) { resolve(); return; }
    server.child.once('exit', () => resolve());
    server.child.kill('SIGTERM');
  });
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = require('node:net').createServer();
    s.listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)); });
    s.on('error', reject);
  });
}

async function startEmbedded(dir) {
  const port = await freePort();
  return startNode([path.join(TOP, 'embedded', 'server.js'), '--dir', dir, '--port', String(port)],
    /server: listening on (http:\/\/\S+?)\/?,/);
}

function startDouble() {
  return startNode([path.join(TOP, 't', 'double', 'couchdb-double.js'), '--port', '0'],
    /^listening (http:\/\/\S+)\n/);
}

// A JSON request; base may carry user:pass@.
function request(base, method, p, body) {
  const u = new URL(base);
  const headers = { Accept: 'application/json' };
  if (u.username) {
    headers.Authorization = 'Basic ' + Buffer.from(`${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`).toString('base64');
  }
  const payload = body === undefined ? null : Buffer.from(JSON.stringify(body));
  if (payload) {
    headers['Content-Type'] = 'application/json';
    headers['Content-Length'] = payload.length;
  }
  return new Promise((resolve, reject) => {
    const req = http.request({ host: u.hostname, port: u.port, method, path: p, headers, agent: false }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json = null;
        try { json = JSON.parse(text); } catch (e) { json = { unparsed: text }; }
        resolve({ status: res.statusCode, body: json });
      });
    });
    req.on('error', reject);
    if (payload) req.write(payload);
    req.end();
  });
}

async function ok(res, what) {
  assert.ok(res.status >= 200 && res.status < 300, `${what}: HTTP ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

// --- data --------------------------------------------------------------------

// A small deterministic generator (mulberry32), so that a failure repeats.
function random(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const KEYS = [null, false, true, -3, 0, 1, 1.5, 2, 7, 'apple', 'kiwi', 'pear', [1, 'a'], [1, 'b'], [2]];
// ids that look like JSON (the server must take startkey_docid as it is),
// and ids around the surrogate pairs, whose UTF-16 order is not LevelDB's
const ODD_IDS = ['123', 'null', 'true', '"q"', 'z\u00e9', 'z\ue000', 'z\u{1f600}', 'z\uffff'];

function makeDocs(rand, count) {
  const pick = (list) => list[Math.floor(rand() * list.length)];
  const docs = [];
  for (let n = 0; n < count; n++) {
    const id = n < ODD_IDS.length ? ODD_IDS[n] : `d${String(n).padStart(3, '0')}`;
    const shape = rand();
    const keys = shape < 0.1 ? [] // emits nothing
      : shape < 0.75 ? [pick(KEYS)]
        : shape < 0.9 ? [pick(KEYS), pick(KEYS)] // two keys, maybe one key twice
          : (() => { const k = pick(KEYS); return [k, k]; })(); // one key twice
    docs.push({ _id: id, keys, v: Math.floor(rand() * 3) });
  }
  return docs;
}

async function load(base, docs) {
  await request(base, 'DELETE', `/${DB}`);
  await ok(await request(base, 'PUT', `/${DB}`), `create ${DB} on ${base}`);
  await ok(await request(base, 'PUT', `/${DB}/_design/t`, { views: { v: { map: MAP } } }), 'design doc');
  await ok(await request(base, 'POST', `/${DB}/_bulk_docs`, { docs }), 'documents');
}

// Changes the data alike on each server: moves keys, deletes and adds
// documents (the updates pouchdb writes to its index as deletions and new rows).
async function change(base, rand, added) {
  const all = await ok(await request(base, 'GET', `/${DB}/_all_docs?include_docs=true`), '_all_docs');
  const docs = all.rows.map((r) => r.doc).filter((d) => !d._id.startsWith('_design/'));
  const edits = [];
  docs.forEach((d, i) => {
    if (i % 7 === 0) edits.push({ ...d, _deleted: true });
    else if (i % 5 === 0) edits.push({ ...d, keys: d.keys.length ? [d.keys[0], 'kiwi'] : [[2]] });
  });
  await ok(await request(base, 'POST', `/${DB}/_bulk_docs`, { docs: edits.concat(added) }), 'changes');
}

// --- queries -------------------------------------------------------------------

// Where queries start: keys in the data, between and beyond them, each with
// docids before, at and after the rows' ids (and without one).
const STARTS = [undefined, null, -5, 0, 1.2, 2, 'kiwi', 'lime', [1, 'b'], [3], {}];
const DOCIDS = [undefined, '', 'd100', 'null', 'z\ue000', 'z\u{1f600}', '\u{10ffff}'];

function queries() {
  const list = [];
  for (const descending of [false, true]) {
    for (const startkey of STARTS) {
      for (const docid of startkey === undefined ? [undefined, 'd100'] : DOCIDS) {
        for (const [skip, limit] of [[0, 0], [0, 3], [2, 1], [5, 1000], [1000, 1]]) {
          const q = new URLSearchParams();
          if (descending) q.set('descending', 'true');
          if (startkey !== undefined) q.set('startkey', JSON.stringify(startkey));
          if (docid !== undefined) q.set('startkey_docid', docid);
          if (skip) q.set('skip', String(skip));
          q.set('limit', String(limit));
          list.push(q.toString());
        }
      }
    }
    // a range's end (inclusive), the way mod_couchpage bounds its queries
    for (const [startkey, endkey] of [[0, 'kiwi'], [2, 2], ['pear', null]]) {
      const q = new URLSearchParams();
      if (descending) q.set('descending', 'true');
      q.set('startkey', JSON.stringify(descending ? endkey : startkey));
      q.set('endkey', JSON.stringify(descending ? startkey : endkey));
      q.set('limit', '4');
      list.push(q.toString());
    }
  }
  return list;
}

function answer(res) {
  if (res.status !== 200) return { status: res.status };
  const { total_rows: total, offset, rows } = res.body;
  return { status: 200, total_rows: total, offset, rows: rows.map((r) => [r.id, r.key, r.value]) };
}

// Each query to both servers: the differences, at most `max` of them.
async function compare(embedded, oracle, max = 10) {
  const differences = [];
  let asked = 0;
  for (const q of queries()) {
    const p = `/${DB}/_design/t/_view/v?${q}`;
    const [mine, theirs] = await Promise.all([request(embedded, 'GET', p), request(oracle, 'GET', p)]);
    asked++;
    const a = answer(mine), b = answer(theirs);
    if (JSON.stringify(a) !== JSON.stringify(b) && differences.length < max) {
      differences.push(`?${decodeURIComponent(q)}\n  embedded: ${JSON.stringify(a)}\n  oracle:   ${JSON.stringify(b)}`);
    }
  }
  return { asked, differences };
}

// --- the tests -----------------------------------------------------------------

const oracles = [{ name: 'the view double', start: startDouble }];
if (process.env.COUCHDB_URL) {
  oracles.push({ name: `CouchDB ${new URL(process.env.COUCHDB_URL).host}`, url: process.env.COUCHDB_URL });
}

for (const oracle of oracles) {
  describe(`embedded server's offsets against ${oracle.name}`, () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'couchpage-embedded-'));
    let embedded, double, oracleUrl;

    before(async () => {
      embedded = await startEmbedded(dir);
      if (oracle.start) {
        double = await oracle.start();
        oracleUrl = double.url;
      } else {
        oracleUrl = oracle.url;
      }
      const docs = makeDocs(random(19), 160);
      await load(embedded.url, docs);
      await load(oracleUrl, docs);
    });
    after(async () => {
      await stop(embedded);
      await stop(double);
      if (!oracle.start) await request(oracleUrl, 'DELETE', `/${DB}`);
      fs.rmSync(dir, { recursive: true, force: true });
    });

    it("a row past the start: CouchDB's offset, where pouchdb says 0 (the skip)", async () => {
      const p = `/${DB}/_design/t/_view/v?startkey=%22kiwi%22&limit=1`;
      const [mine, theirs] = await Promise.all([request(embedded.url, 'GET', p), request(oracleUrl, 'GET', p)]);
      assert.ok(theirs.body.offset > 0, `the oracle's offset of kiwi is past the start (${theirs.body.offset})`);
      assert.equal(mine.body.offset, theirs.body.offset);
    });

    it('every query: the same total_rows, offset and rows', async () => {
      const { asked, differences } = await compare(embedded.url, oracleUrl);
      assert.ok(asked > 700, `${asked} queries`);
      assert.deepEqual(differences, []);
    });

    it('after keys move, documents go and come: the same again', async () => {
      const added = makeDocs(random(7), 40).map((d, i) => ({ ...d, _id: `n${String(i).padStart(2, '0')}` }));
      await change(embedded.url, random(3), added);
      await change(oracleUrl, random(3), added);
      const { differences } = await compare(embedded.url, oracleUrl);
      assert.deepEqual(differences, []);
    });

    it('after a restart, which reads the index from disk: the same again', async () => {
      await stop(embedded);
      embedded = await startEmbedded(dir);
      const { differences } = await compare(embedded.url, oracleUrl);
      assert.deepEqual(differences, []);
    });
  });
}
