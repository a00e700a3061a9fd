#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
/*
 * compare-couchdb.js -- sends the same multi-query requests to a real
 * CouchDB and to the double and reports every difference in their raw
 * responses (status line, headers, chunk framing, body bytes, and whether
 * the connection was closed early).
 *
 *   node t/double/compare-couchdb.js http://admin:secret@127.0.0.1:PORT [--batches N] [--seed S]
 *
 * It (re)creates the databases of fixtures/multi.json on that CouchDB with
 * the fixture's revisions (new_edits=false), starts the double on a free
 * port with the same fixture, runs a fixed list of requests and N random
 * batches (default 300), and exits 1 if any response differs. Headers that
 * differ by nature (Date, Server, X-Couch-Request-ID, X-CouchDB-Body-Time,
 * Connection, Keep-Alive) are left out; the 500's "ref" and update_seq
 * are masked (README: known differences 3 and 10; update_seq changes the
 * chunk sizes too, so the requests here do not ask for it).
 */
'use strict';

const net = require('node:net');
const path = require('node:path');
const fs = require('node:fs');
const { spawn } = require('node:child_process');

const FIXTURE = path.join(__dirname, 'fixtures', 'multi.json');

function parseArgs(argv) {
  const o = { url: argv[0], batches: 300, seed: 1 };
  for (let k = 1; k < argv.length; k++) {
    if (argv[k] === '--batches') o.batches = parseInt(argv[++k], 10);
    else if (argv[k] === '--seed') o.seed = parseInt(argv[++k], 10);
    else throw new Error(`unknown argument ${argv[k]}`);
  }
  if (!o.url || !/^http:\/\/[^:/]+:[^@/]+@[^/]+$/.test(o.url.replace(/\/$/, ''))) {
    throw new Error('usage: compare-couchdb.js http://USER:PASS@HOST:PORT [--batches N] [--seed S]');
  }
  return o;
}

// One raw HTTP/1.1 request on its own connection; the bytes until it closes.
function rawRequest(host, port, auth, method, p, body) {
  return new Promise((resolve, reject) => {
    let req = `${method} ${p} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: ${auth}\r\n`;
    if (body !== undefined) req += `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n`;
    req += `Connection: close\r\n\r\n${body === undefined ? '' : body}`;
    const s = net.connect(port, host, () => s.write(req));
    const parts = [];
    s.on('data', (d) => parts.push(d));
    s.on('error', reject);
    s.on('close', () => resolve(Buffer.concat(parts).toString('latin1')));
  });
}

const VARYING = /^(Date|Server|X-Couch-Request-ID|X-CouchDB-Body-Time|Connection|Keep-Alive): .*$/i;
function normalize(text) {
  const end = text.indexOf('\r\n\r\n');
  const [status, ...headers] = (end < 0 ? text : text.slice(0, end)).split('\r\n');
  const head = [status, ...headers.sort()].join('\r\n');
  return (end < 0 ? head : head + text.slice(end)).split('\r\n').filter((l) => !VARYING.test(l)).join('\r\n')
    .replace(/(X-Couch-Stack-Hash: |"ref":)\d+/gi, '$1N')
    .replace(/("update_seq":")[^"]*"/g, '$1SEQ"')
    .replace(/Content-Length: \d+(\r\n[^]*?\r\n\r\n\{"error":"unknown_error","reason":"function_clause","ref":N)/g, 'Content-Length: N$1');
}

async function loadIntoCouch(base, auth, fixture) {
  const call = async (method, p, body) => {
    const r = await fetch(base + p, { method, headers: { authorization: auth, 'content-type': 'application/json' }, body: body && JSON.stringify(body) });
    const text = await r.text();
    if (r.status >= 300 && !(method === 'DELETE' && r.status === 404)) throw new Error(`${method} ${p}: ${r.status} ${text}`);
  };
  for (const [name, spec] of Object.entries(fixture.dbs)) {
    await call('DELETE', `/${name}`);
    await call('PUT', `/${name}?q=${spec.q || 2}${spec.partitioned ? '&partitioned=true' : ''}`);
    await call('POST', `/${name}/_bulk_docs`, { docs: spec.docs, new_edits: false });
  }
}

function startDouble(admin) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(__dirname, 'couchdb-double.js'), '--port', '0', '--fixtures', FIXTURE, '--admin', admin], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const m = /^listening http:\/\/([^:]+):(\d+)\n/.exec(out);
      if (m) resolve({ child, host: m[1], port: Number(m[2]) });
    });
    child.on('exit', (code) => reject(new Error(`the double exited with ${code}`)));
  });
}

const V = '/mq/_design/d/_view/v/queries';
const C = '/mq/_design/d/_view/c/queries';
const A = '/mq/_all_docs/queries';
const P = '/pq/_partition/d/_design/p/_view/v/queries';
const q = (...queries) => JSON.stringify({ queries });
// [method, path, body]: the shapes and errors the README describes.
const FIXED = [
  ['POST', V, q({ limit: 2 }, { startkey: 3, limit: 2, skip: 1 }, { keys: [1, 2], descending: true })],
  ['POST', V, q({ include_docs: true }, { limit: 1 }, { include_docs: true, descending: true })],
  ['POST', V, q()], ['POST', A, q()], ['POST', V, q({ limit: 0 }, { limit: 0, skip: 100 }, { key: null }, { keys: [] })],
  ['POST', V, q({ startkey: 5, endkey: 1 }, { limit: 1 }, { limit: 1, skip: 3 })],
  ['POST', V, q({ startkey: 5, endkey: 1 })], ['POST', V, q({ startkey: 5, endkey: 1 }, { startkey: 5, endkey: 1 })],
  ['POST', V, q({ startkey: 5, endkey: 1 }, { limit: 1 }, { startkey: 5, endkey: 1 })],
  ['POST', V, q({ limit: 2 }, { startkey: 5, endkey: 1 }, { limit: 1 })],
  ['POST', V, q({ limit: 0 }, { startkey: 1, endkey: 5, descending: true })],
  ['POST', C, q({ group: true, limit: 1 }, { startkey: [1], endkey: [0] })],
  ['POST', P, q({ limit: 1 }, { startkey: 2, endkey: 0 })],
  ['POST', `${V}?buffer_response=true`, q({ limit: 1 }, { startkey: 5, endkey: 1 }, { limit: 1 })],
  ['POST', `${V}?buffer_response=true`, q({ limit: 1 })],
  ['POST', `${V}?limit=1&descending=true`, q({}, { limit: 2 }, { descending: false })],
  ['POST', `${V}?keys=%5B1%2C2%5D`, q({ limit: 3 })], ['POST', `${V}?keys=%5B1%5D`, q({ limit: 5 })],
  ['POST', `${C}?group=true`, q({})], ['POST', `${C}?reduce=false&limit=1`, q({}, { reduce: true })],
  ['POST', C, q({}, { group: true }, { group_level: 1 }, { reduce: false, limit: 2, skip: 1 }, { keys: [[0, 0], [1, 1]], group: true })],
  ['POST', '/mq/_design/d/_view/s/queries', q({ group: true, limit: 2 }, {})],
  ['POST', A, q({ limit: 2 }, { startkey: 'd05', limit: 1, descending: true, include_docs: true }, { keys: ['d01', 'zz'] }, { keys: ['d01'] })],
  ['POST', `${A}?limit=1&skip=2`, q({}, { skip: 0 }, { limit: 268435457, skip: 20 })],
  ['POST', P, q({}, { limit: 1, skip: 1 }, { keys: [2, 0] }, { partition: 'a', limit: 1 })],
  ['POST', '/pq/_partition/d/_all_docs/queries', q({}, { descending: true, limit: 1 }, { keys: ['d:1', 'a:1'] })],
  ['POST', '/pq/_design/p/_view/v/queries?partition=d', q({ limit: 1 }, { limit: 1, partition: 'a' })],
  ['POST', `${P}?partition=a`, q({ limit: 1 })], ['POST', '/pq/_design/p/_view/v/queries', q({ limit: 1 })],
  ['GET', V], ['HEAD', V], ['GET', A], ['PUT', P, q()],
  ['POST', V, '{"queries":['], ['POST', V, ''], ['POST', V, '{"keys":[1]}'], ['POST', V, '{"queries":{}}'], ['POST', A, '[1]'],
  ['POST', V, q(1)], ['POST', A, q({ limit: 1 }, 'x')],
  ['POST', V, q({ limit: 1 }, { limit: 'x' })], ['POST', V, q({ descending: null })], ['POST', V, q({ descending: [104, 105] })],
  ['POST', V, q({ limit: [1, 'a', null, 1.5, { b: [] }] })], ['POST', V, '{"queries":[{"limit":1000.0}]}'],
  ['POST', V, q({ limit: [49, 48] }, { stale: [111, 107], limit: 1 }, { startkey_docid: [1], startkey: 1, limit: 1 })],
  ['POST', C, q({ include_docs: true })], ['POST', C, q({ keys: [[0, 0], [1, 1]] })],
  ['POST', '/mq/_design/d/_view/nope/queries', q({ limit: 'x' })], ['POST', '/mq/_design/nope/_view/v/queries', 'x'],
  ['POST', '/nodb/_all_docs/queries', q()], ['POST', `${V}/x`, q()],
];

// Random batches over views, reduce views, _all_docs and partitions.
function randomBatches(n, seed) {
  let s = seed;
  const rnd = (k) => { s = (s * 1103515245 + 12345) & 0x7fffffff; return s % k; };
  const pick = (a) => a[rnd(a.length)];
  const targets = [[V, 'map'], [C, 'red'], ['/mq/_design/d/_view/s/queries', 'red'], [A, 'ids'],
    [P, 'map'], ['/pq/_partition/b/_design/p/_view/c/queries', 'red'], ['/pq/_partition/d/_all_docs/queries', 'ids'], ['/pq/_all_docs/queries', 'ids']];
  const out = [];
  for (let i = 0; i < n; i++) {
    const [p, kind] = pick(targets);
    const key = () => (kind === 'ids' ? pick(['d00', 'd05', 'd1', 'd19', 'a:2', 'd:1', 'd:3', '_design/', 'z', ''])
      : p === C ? pick([[0], [1], [0, 2], [1, 3], [0, 6], [], [2]]) : pick([0, 1, 2, 3, 4, 5, 6, 7, -1, 2.5, 'x', null]));
    const queries = [];
    for (let j = 1 + rnd(3); j > 0; j--) {
      const o = {};
      if (rnd(2)) o.startkey = key();
      if (rnd(2)) o.endkey = key();
      if (rnd(3) === 0) o.startkey_docid = pick(['d03', 'd10', 'd:2', 'a:0', 'd19', '']);
      if (rnd(3) === 0) o.endkey_docid = pick(['d03', 'd10', 'd:2', 'a:0', 'd19', '']);
      if (rnd(2)) o.limit = rnd(6);
      if (rnd(3) === 0) o.skip = rnd(8);
      if (rnd(2)) o.descending = true;
      if (rnd(4) === 0) o.inclusive_end = false;
      if (rnd(6) === 0) { delete o.startkey; delete o.endkey; o.keys = [key(), key()]; }
      if (rnd(8) === 0) o.key = key();
      if (kind === 'red') {
        const g = rnd(4);
        if (g === 0) o.reduce = false; else if (g === 1) o.group = true; else if (g === 2) o.group_level = rnd(3);
      }
      if (rnd(5) === 0) o.include_docs = true;
      queries.push(o);
    }
    out.push(['POST', p, JSON.stringify({ queries })]);
  }
  return out;
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const u = new URL(o.url);
  const creds = `${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`;
  const auth = 'Basic ' + Buffer.from(creds).toString('base64');
  const base = `http://${u.host}`;
  await loadIntoCouch(base, auth, JSON.parse(fs.readFileSync(FIXTURE, 'utf8')));
  const double = await startDouble(creds);
  let differ = 0;
  try {
    const requests = FIXED.concat(randomBatches(o.batches, o.seed));
    for (const [method, p, body] of requests) {
      const [real, dbl] = await Promise.all([
        rawRequest(u.hostname, Number(u.port), auth, method, p, body),
        rawRequest(double.host, double.port, auth, method, p, body),
      ]);
      if (normalize(real) !== normalize(dbl)) {
        differ++;
        process.stdout.write(`DIFFERENT: ${method} ${p} ${body || ''}\n  CouchDB: ${JSON.stringify(normalize(real))}\n  double:  ${JSON.stringify(normalize(dbl))}\n`);
      }
    }
    process.stdout.write(`${requests.length} requests, ${requests.length - differ} identical, ${differ} different\n`);
  } finally {
    double.child.kill('SIGTERM');
  }
  process.exitCode = differ ? 1 : 0;
}

main().catch((e) => { process.stderr.write(`compare-couchdb: ${e.message}\n`); process.exit(2); });
