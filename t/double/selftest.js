// SPDX-License-Identifier: Apache-2.0
// Self-test of the CouchDB TEST DOUBLE (t/double/couchdb-double.js).
// Run: node --test t/double/        (or: node --test t/double/selftest.js)
// It starts the double as child processes on free ports and checks the
// CouchDB 3.x semantics it claims (see t/double/README.md).
'use strict';

const { describe, it, before, after } = require('node:test');
const assert = require('node:assert/strict');
const http = require('node:http');
const net = require('node:net');
const path = require('node:path');
const { spawn } = require('node:child_process');

const DOUBLE = path.join(__dirname, 'couchdb-double.js');
const lib = require('./couchdb-double.js');

// ------------------------------------------------------------------ helpers

function startDouble(args) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [DOUBLE, '--port', '0', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => {
      out += d;
      const m = /^listening (http:\/\/\S+)\n/.exec(out);
      if (m) resolve({ child, url: m[1], stop: () => stopChild(child) });
    });
    child.stderr.on('data', (d) => { err += d; });
    child.on('exit', (code) => reject(new Error(`double exited with ${code}: ${err}`)));
  });
}
function stopChild(child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null) { resolve(); return; }
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

function request(base, method, p, opts = {}) {
  return new Promise((resolve, reject) => {
    const u = new URL(base);
    const headers = Object.assign({}, opts.headers || {});
    let body = opts.body;
    if (body !== undefined && typeof body !== 'string' && !Buffer.isBuffer(body)) {
      body = JSON.stringify(body);
      if (!headers['content-type']) headers['content-type'] = 'application/json';
    }
    const r = http.request({
      host: u.hostname, port: u.port, method, path: p, headers, agent: opts.agent !== undefined ? opts.agent : false,
    }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode, headers: res.headers, text, bytes: Buffer.concat(chunks), complete: res.complete, socket: res.socket });
      });
      res.on('error', reject);
    });
    r.on('error', reject);
    if (body !== undefined) r.write(body);
    r.end();
  });
}
const json = (r) => JSON.parse(r.text);
const get = (base, p, opts) => request(base, 'GET', p, opts);

// Send a raw HTTP/1.1 request and return the unparsed response bytes.
function rawRequest(base, text) {
  return new Promise((resolve, reject) => {
    const u = new URL(base);
    const sock = net.connect(Number(u.port), u.hostname, () => sock.write(text));
    const chunks = [];
    sock.on('data', (c) => chunks.push(c));
    sock.on('end', () => resolve(Buffer.concat(chunks)));
    sock.on('error', reject);
  });
}
function parseChunked(buf) {
  const s = buf.toString('latin1');
  const headEnd = s.indexOf('\r\n\r\n');
  const head = s.slice(0, headEnd);
  let i = headEnd + 4;
  const chunks = [];
  for (;;) {
    const eol = s.indexOf('\r\n', i);
    const size = parseInt(s.slice(i, eol), 16);
    i = eol + 2;
    if (size === 0) break;
    chunks.push(Buffer.from(s.slice(i, i + size), 'latin1').toString('utf8'));
    i += size + 2;
  }
  return { head, chunks };
}

async function mkdb(base, name, opts = {}) {
  const q = [];
  if (opts.partitioned) q.push('partitioned=true');
  if (opts.q) q.push(`q=${opts.q}`);
  const r = await request(base, 'PUT', `/${name}${q.length ? '?' + q.join('&') : ''}`, { headers: opts.headers });
  assert.equal(r.status, 201, r.text);
  if (opts.docs) {
    const b = await request(base, 'POST', `/${name}/_bulk_docs`, { body: { docs: opts.docs }, headers: opts.headers });
    assert.equal(b.status, 201, b.text);
    for (const res of json(b)) assert.ok(res.ok, JSON.stringify(res));
  }
  for (const [dname, ddoc] of Object.entries(opts.ddocs || {})) {
    const d = await request(base, 'PUT', `/${name}/_design/${dname}`, { body: ddoc, headers: opts.headers });
    assert.equal(d.status, 201, d.text);
  }
}
// Query string: key-like parameters are JSON, the others raw strings.
const JSON_PARAMS = new Set(['key', 'keys', 'startkey', 'start_key', 'endkey', 'end_key']);
const q = (o) => Object.entries(o).map(([k, v]) => `${k}=${encodeURIComponent(JSON_PARAMS.has(k) || typeof v !== 'string' ? JSON.stringify(v) : v)}`).join('&');
const ids = (r) => json(r).rows.map((x) => x.id);
const keysOf = (r) => json(r).rows.map((x) => x.key);
const rowLines = (r) => r.text.split('\r\n').slice(1, -1).map((l) => l.replace(/,$/, ''));

const emitK = { views: { v: { map: 'function(doc){ if (doc.k !== undefined) emit(doc.k, doc.v === undefined ? null : doc.v); }' } } };

// ------------------------------------------------------------------ unit

describe('EJSON and collation (unit)', () => {
  it('decodes like jiffy and re-encodes like jiffy', () => {
    const rt = (t) => lib.encodeJson(lib.decodeJson(t));
    assert.equal(rt('1.0'), '1.0');
    assert.equal(rt('1E2'), '100.0');
    assert.equal(rt('1e21'), '1e+21');
    assert.equal(rt('-0'), '0');
    assert.equal(rt('-0.0'), '0.0');
    assert.equal(rt('0.1'), '0.1');
    assert.equal(rt('1e-7'), '1e-7');
    assert.equal(rt('123456789012345678901234567890'), '123456789012345678901234567890');
    assert.equal(rt('"\\u001f\\/\\u00e9"'), '"\\u001F/\u00e9"');
    assert.equal(rt(Buffer.from('"\ufeffa"', 'utf8')), '"\ufeffa"', 'a leading U+FEFF is kept');
    assert.equal(rt('{"a":1,"b":2,"a":3}'), '{"b":2,"a":3}');
    assert.equal(rt(' [1 , {"x" : null}] '), '[1,{"x":null}]');
    for (const bad of ['', '01', '1.', '.5', '+1', '[1,]', '{"a"}', 'nul', '"\\ud800"', '"\\udc00x"', '1 2', '"a\tb"', '1e400']) {
      assert.throws(() => lib.decodeJson(bad), lib.JsonError, bad);
    }
    assert.throws(() => lib.decodeJson(Buffer.from([0x22, 0xc3, 0x28, 0x22])), lib.JsonError, 'invalid utf-8');
  });

  it('orders types null < false < true < numbers < strings < arrays < objects', () => {
    const c = new lib.IcuCollation();
    const order = ['null', 'false', 'true', '-1', '0', '0.5', '1', '9007199254740993', '1e21', '""', '"a"', '[]', '[1]', '[1,2]', '[2]', '{}', '{"a":1}', '{"a":1,"b":1}', '{"a":2}', '{"b":0}'];
    for (let i = 0; i + 1 < order.length; i++) {
      assert.equal(c.cmp(lib.decodeJson(order[i]), lib.decodeJson(order[i + 1])), -1, `${order[i]} < ${order[i + 1]}`);
    }
    assert.equal(c.cmp(lib.decodeJson('1'), lib.decodeJson('1.0')), 0, 'integer and float compare by value');
    assert.equal(c.cmp(lib.decodeJson('9007199254740993'), lib.decodeJson('9007199254740992.0')), 1, 'exact big integer compare');
  });

  it('compares strings with ICU root collation', () => {
    const c = new lib.IcuCollation();
    const sorted = ['a', 'A', '\u00e1', 'b', 'B', 'e', 'E', '\u00e9', 'f', 'z', 'Z'];
    for (let i = 0; i + 1 < sorted.length; i++) assert.equal(c.cmp(sorted[i], sorted[i + 1]), -1, `${sorted[i]} < ${sorted[i + 1]}`);
    assert.equal(c.cmp('\u00e9', 'e\u0301'), 0, 'canonically equivalent strings are equal keys');
    assert.equal(c.cmp('a b', 'ab'), -1, 'space is not ignorable');
    assert.equal(c.cmp('10', '9'), -1, 'no numeric collation');
  });

  it('parses query strings like mochiweb', () => {
    const p = lib.parseQs('a=1;b=x+y&c=%22q%22&d&e=%zz&=f');
    assert.deepEqual(p.map(([k, v]) => [k, v.toString('latin1')]), [['a', '1'], ['b', 'x y'], ['c', '"q"'], ['d', ''], ['e', '%zz'], ['', 'f']]);
  });
});

describe('stringifyWithoutRecursion', () => {
  it('writes what JSON.stringify writes', () => {
    const date = new Date(Date.UTC(2024, 0, 2));
    const values = [null, true, 0, -0, 1.5e-7, NaN, Infinity, 'a"\\\u2028\u0000\ud83d\ude00', [], {}, [undefined, () => 1, Symbol('s'), NaN],
      { a: undefined, b: () => 1, c: 1, 2: 'two', 1: 'one', d: [{ e: [] }], date, nested: { toJSON(k) { return `key ${k}`; } } },
      [new Number(3), new String('s'), new Boolean(false)], undefined, () => 1, date];
    values.forEach((v, i) => assert.equal(lib.stringifyWithoutRecursion(v), JSON.stringify(v), `value ${i}`));
  });

  it('writes values nested deeper than JSON.stringify can', () => {
    let v = 'leaf';
    for (let i = 0; i < 100000; i++) v = i % 2 ? { d: v } : [v];
    assert.equal(lib.stringifyWithoutRecursion(v), '{"d":['.repeat(50000) + '"leaf"' + ']}'.repeat(50000));
  });
});

// ------------------------------------------------------------------ server

describe('the double over HTTP', () => {
  let srv;
  let B;
  before(async () => {
    srv = await startDouble(['--fixtures', path.join(__dirname, 'fixtures', 'bands.json')]);
    B = srv.url;
  });
  after(async () => { await srv.stop(); });

  it('answers GET / and GET /db like CouchDB', async () => {
    const r = await get(B, '/');
    assert.equal(r.status, 200);
    assert.equal(json(r).couchdb, 'Welcome');
    assert.match(json(r).vendor.name, /test double/);
    const i = await get(B, '/artists');
    assert.equal(json(i).doc_count, 12);
    const m = await get(B, '/nope');
    assert.equal(m.status, 404);
    assert.deepEqual(json(m), { error: 'not_found', reason: 'Database does not exist.' });
  });

  it('streams view bodies in CouchDB\'s format: chunked, no ETag, rows separated by ",\\r\\n"', async () => {
    const r = await get(B, '/artists/_design/artists/_view/by-name?limit=2');
    assert.equal(r.status, 200);
    assert.equal(r.headers['transfer-encoding'], 'chunked');
    assert.equal(r.headers['content-length'], undefined);
    assert.equal(r.headers.etag, undefined);
    assert.equal(r.headers['content-type'], 'application/json');
    assert.equal(r.headers['cache-control'], 'must-revalidate');
    assert.equal(r.text,
      '{"total_rows":11,"offset":0,"rows":[\r\n'
      + '{"id":"a0746072bba60a62b01209f467ca4fe2","key":"Biffy Clyro","value":null},\r\n'
      + '{"id":"b47d82284969f10cd1b6ea460ad62d00","key":"Foo Fighters","value":null}\r\n'
      + ']}\n');
    // Content-Type does not depend on Accept in CouchDB 3.x.
    const t = await get(B, '/artists/_design/artists/_view/by-name?limit=0', { headers: { accept: 'text/html' } });
    assert.equal(t.headers['content-type'], 'application/json');
    assert.equal(t.text, '{"total_rows":11,"offset":0,"rows":[\r\n\r\n]}\n');
  });

  it('buffers rows into chunks of about 1490 bytes, then "\\r\\n]}" and "\\n"', async () => {
    const docs = [];
    for (let i = 0; i < 100; i++) docs.push({ _id: `d${String(i).padStart(3, '0')}`, k: i });
    await mkdb(B, 'chunks', { docs, ddocs: { d: emitK } });
    const raw = await rawRequest(B, 'GET /chunks/_design/d/_view/v HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    const { head, chunks } = parseChunked(raw);
    assert.match(head, /Transfer-Encoding: chunked/i);
    assert.doesNotMatch(head, /Content-Length|ETag/i);
    assert.ok(chunks.length > 3, `several chunks, got ${chunks.length}`);
    assert.equal(chunks[chunks.length - 1], '\n');
    assert.ok(chunks[chunks.length - 2].endsWith('\r\n]}'));
    for (const c of chunks.slice(0, -2)) assert.ok(Buffer.byteLength(c) <= 1490, `chunk of ${Buffer.byteLength(c)} bytes`);
    assert.ok(chunks[0].startsWith('{"total_rows":100,"offset":0,"rows":[\r\n{"id":"d000"'));
  });

  it('orders keys by CouchDB collation across types', async () => {
    const keys = [null, false, true, -1, 0, 0.5, 1, 2, 1e21, '', 'a', 'A', '\u00e1', 'b', 'B', [], [1], [1, 2], [2], {}, { a: 1 }, { a: 1, b: 1 }, { a: 2 }, { b: 0 }];
    const docs = keys.map((k, i) => ({ _id: `x${String((i * 7) % keys.length).padStart(2, '0')}`, k }));
    await mkdb(B, 'coll', { docs, ddocs: { d: emitK } });
    const r = await get(B, '/coll/_design/d/_view/v');
    assert.deepEqual(keysOf(r), keys);
    assert.ok(r.text.includes('"key":1e+21'));
    const d = await get(B, '/coll/_design/d/_view/v?descending=true');
    assert.deepEqual(keysOf(d), keys.slice().reverse());
  });

  it('treats ICU-equal strings as equal keys, ordered by docid (no code point fallback)', async () => {
    await mkdb(B, 'icu', {
      docs: [
        { _id: 'b', k: 'e\u0301' }, // decomposed
        { _id: 'a', k: '\u00e9' }, // precomposed
        { _id: 'c', k: 'e' },
        { _id: 'd', k: 'E' },
        { _id: 'e', k: 'f' },
      ],
      ddocs: { d: emitK },
    });
    const r = await get(B, '/icu/_design/d/_view/v');
    assert.deepEqual(ids(r), ['c', 'd', 'a', 'b', 'e']);
    const k = await get(B, `/icu/_design/d/_view/v?${q({ key: '\u00e9' })}`);
    assert.deepEqual(ids(k), ['a', 'b']);
    const g = await get(B, `/icu/_design/d/_view/v?${q({ startkey: 'e', endkey: 'e' })}`);
    assert.deepEqual(ids(g), ['c']);
  });

  it('orders duplicate keys by docid, raw code point order for docids', async () => {
    await mkdb(B, 'dups', {
      docs: [
        { _id: 'd3', k: 'k' }, { _id: 'd1', k: 'k' }, { _id: 'D2', k: 'k' }, { _id: 'd2', k: 'k' },
        { _id: '_x', k: 'k' }, { _id: 'a', k: 'j' }, { _id: 'z', k: 'l' },
        { _id: '\u00e9', k: 'k' }, { _id: 'e', k: 'k' },
      ].filter((d) => d._id !== '_x'),
      ddocs: { d: emitK },
    });
    const r = await get(B, '/dups/_design/d/_view/v');
    assert.deepEqual(ids(r), ['a', 'D2', 'd1', 'd2', 'd3', 'e', '\u00e9', 'z']);
  });

  it('keeps duplicate emits of one doc in ascending value order, in both directions', async () => {
    await mkdb(B, 'samedoc', {
      docs: [{ _id: 'x', k: 1 }, { _id: 'y', k: 1 }],
      ddocs: { d: { views: { v: { map: 'function(doc){ emit(doc.k, "b"); emit(doc.k, 3); emit(doc.k, "a"); emit(2, doc._id); }' } } } },
    });
    const r = await get(B, '/samedoc/_design/d/_view/v');
    assert.deepEqual(json(r).rows.map((x) => [x.id, x.key, x.value]), [
      ['x', 1, 3], ['x', 1, 'a'], ['x', 1, 'b'], ['y', 1, 3], ['y', 1, 'a'], ['y', 1, 'b'], ['x', 2, 'x'], ['y', 2, 'y']]);
    assert.equal(json(r).total_rows, 8);
    const d = await get(B, '/samedoc/_design/d/_view/v?descending=true&limit=5');
    assert.deepEqual(json(d).rows.map((x) => [x.id, x.key, x.value]), [
      ['y', 2, 'y'], ['x', 2, 'x'], ['y', 1, 3], ['y', 1, 'a'], ['y', 1, 'b']]);
    const s = await get(B, '/samedoc/_design/d/_view/v?startkey=1&startkey_docid=y&skip=1&limit=1');
    assert.deepEqual(json(s), { total_rows: 8, offset: 4, rows: [{ id: 'y', key: 1, value: 'a' }] });
  });

  describe('ranges with duplicate keys', () => {
    before(async () => {
      const docs = [{ _id: 'a0', k: 'j' }];
      for (let i = 1; i <= 5; i++) docs.push({ _id: `d${i}`, k: 'k' });
      docs.push({ _id: 'z0', k: 'l' });
      await mkdb(B, 'runs', { docs, ddocs: { d: emitK } });
    });
    const V = '/runs/_design/d/_view/v?';
    it('startkey_docid starts inside a run of equal keys', async () => {
      const r = await get(B, V + q({ startkey: 'k', startkey_docid: 'd3' }));
      assert.deepEqual(ids(r), ['d3', 'd4', 'd5', 'z0']);
      assert.equal(json(r).offset, 3);
      const p = await get(B, V + q({ startkey: 'k', start_key_doc_id: 'd3', limit: '2' }));
      assert.deepEqual(ids(p), ['d3', 'd4']);
    });
    it('startkey_docid is ignored without startkey', async () => {
      const r = await get(B, V + q({ startkey_docid: 'd3' }));
      assert.deepEqual(ids(r), ['a0', 'd1', 'd2', 'd3', 'd4', 'd5', 'z0']);
    });
    it('endkey_docid ends inside a run, inclusive_end decides about the last row', async () => {
      assert.deepEqual(ids(await get(B, V + q({ endkey: 'k', endkey_docid: 'd2' }))), ['a0', 'd1', 'd2']);
      assert.deepEqual(ids(await get(B, V + q({ endkey: 'k', endkey_docid: 'd2', inclusive_end: 'false' }))), ['a0', 'd1']);
      assert.deepEqual(ids(await get(B, V + q({ endkey: 'k', inclusive_end: 'false' }))), ['a0']);
      assert.deepEqual(ids(await get(B, V + q({ endkey: 'k' }))), ['a0', 'd1', 'd2', 'd3', 'd4', 'd5']);
    });
    it('descending applies the bounds in reversed order', async () => {
      const r = await get(B, V + q({ descending: 'true', startkey: 'k', startkey_docid: 'd3' }));
      assert.deepEqual(ids(r), ['d3', 'd2', 'd1', 'a0']);
      assert.equal(json(r).offset, 3);
      assert.deepEqual(ids(await get(B, V + q({ descending: 'true', startkey: 'l', endkey: 'k', endkey_docid: 'd4' }))), ['z0', 'd5', 'd4']);
      assert.deepEqual(ids(await get(B, V + q({ descending: 'true', startkey: 'l', endkey: 'k', inclusive_end: 'false' }))), ['z0']);
      assert.deepEqual(ids(await get(B, V + q({ descending: 'true', endkey: 'k', endkey_docid: 'd4', inclusive_end: 'false' }))), ['z0', 'd5']);
      assert.deepEqual(ids(await get(B, V + q({ descending: 'true', key: 'k' }))), ['d5', 'd4', 'd3', 'd2', 'd1']);
    });
    it('rejects a reversed range with CouchDB\'s 400', async () => {
      const r = await get(B, V + q({ startkey: 'l', endkey: 'j' }));
      assert.equal(r.status, 400);
      assert.deepEqual(json(r), { error: 'query_parse_error', reason: 'No rows can match your key range, reverse your start_key and end_key or set descending=true' });
      const d = await get(B, V + q({ startkey: 'j', endkey: 'l', descending: 'true' }));
      assert.equal(d.status, 400);
      assert.equal(json(d).reason, 'No rows can match your key range, reverse your start_key and end_key or set descending=false');
      const docids = await get(B, V + q({ startkey: 'k', endkey: 'k', startkey_docid: 'd4', endkey_docid: 'd2' }));
      assert.equal(docids.status, 200, 'equal keys are not range-checked');
      assert.deepEqual(ids(docids), []);
      const byDocid = await get(B, V + q({ startkey: 'k', endkey: 'k ', startkey_docid: 'd4' }));
      assert.equal(byDocid.status, 200);
    });
    it('counts offset with skipped rows, capped at total_rows', async () => {
      let r = await get(B, V + q({ skip: '2', limit: '2' }));
      assert.deepEqual([json(r).offset, ids(r)], [2, ['d2', 'd3']]);
      r = await get(B, V + q({ startkey: 'k', skip: '3' }));
      assert.deepEqual([json(r).offset, ids(r)], [4, ['d4', 'd5', 'z0']]);
      r = await get(B, V + q({ skip: '50' }));
      assert.deepEqual([json(r).total_rows, json(r).offset, ids(r)], [7, 7, []]);
      r = await get(B, V + q({ startkey: 'zzz' }));
      assert.deepEqual([json(r).offset, ids(r)], [7, []]);
      r = await get(B, V + q({ descending: 'true', skip: '1', limit: '2' }));
      assert.deepEqual([json(r).offset, ids(r)], [1, ['d5', 'd4']]);
      r = await get(B, V + q({ limit: '0' }));
      assert.deepEqual([json(r).offset, ids(r)], [0, []]);
    });
    it('serves keys=[...] in the given order (reversed with descending)', async () => {
      let r = await get(B, V + q({ keys: ['l', 'j', 'nope'] }));
      assert.deepEqual(ids(r), ['z0', 'a0']);
      r = await get(B, V + q({ keys: ['l', 'k'], descending: 'true', limit: '3' }));
      assert.deepEqual(ids(r), ['d5', 'd4', 'd3']);
      r = await get(B, V + q({ keys: ['k'], skip: '4' }));
      assert.deepEqual(ids(r), ['d5'], 'a single key works as key=');
      const p = await request(B, 'POST', '/runs/_design/d/_view/v?limit=1', { body: { keys: ['l', 'j'] } });
      assert.deepEqual(ids(p), ['z0']);
    });
  });

  describe('reduce', () => {
    before(async () => {
      const docs = [
        { _id: 'a', k: [2024, 1, 5], v: 1 }, { _id: 'b', k: [2024, 1, 7], v: 2 }, { _id: 'c', k: [2024, 2, 1], v: 3 },
        { _id: 'd', k: [2025, 1, 1], v: 4.5 }, { _id: 'e', k: 'str', v: 10 }, { _id: 'f', k: [2025, 1, 1], v: 1 },
      ];
      await mkdb(B, 'red', {
        docs,
        ddocs: {
          d: {
            views: {
              count: { map: emitK.views.v.map, reduce: '_count' },
              sum: { map: emitK.views.v.map, reduce: '_sum' },
              stats: { map: emitK.views.v.map, reduce: '_stats' },
              js: { map: emitK.views.v.map, reduce: 'function(keys, values, rereduce) { return values.length * 100; }' },
              plain: { map: emitK.views.v.map },
            },
          },
        },
      });
    });
    const V = '/red/_design/d/_view/';
    it('reduces to one row by default, without total_rows/offset', async () => {
      const r = await get(B, V + 'count');
      assert.equal(r.text, '{"rows":[\r\n{"key":null,"value":6}\r\n]}\n');
      const s = await get(B, V + 'sum');
      assert.equal(json(s).rows[0].value, 21.5);
    });
    it('groups by group_level and by exact key', async () => {
      let r = await get(B, V + 'count?group_level=1');
      // strings sort before arrays
      assert.deepEqual(json(r).rows, [{ key: 'str', value: 1 }, { key: [2024], value: 3 }, { key: [2025], value: 2 }]);
      r = await get(B, V + 'sum?group_level=2');
      assert.deepEqual(json(r).rows, [{ key: 'str', value: 10 }, { key: [2024, 1], value: 3 }, { key: [2024, 2], value: 3 }, { key: [2025, 1], value: 5.5 }]);
      r = await get(B, V + 'count?group=true&skip=1&limit=2');
      assert.deepEqual(json(r).rows, [{ key: [2024, 1, 5], value: 1 }, { key: [2024, 1, 7], value: 1 }]);
      r = await get(B, V + 'count?group_level=1&descending=true&limit=2');
      assert.deepEqual(json(r).rows, [{ key: [2025], value: 2 }, { key: [2024], value: 3 }]);
      r = await get(B, V + `count?group=true&${q({ keys: [[2025, 1, 1], 'str'] })}`);
      assert.deepEqual(json(r).rows, [{ key: [2025, 1, 1], value: 2 }, { key: 'str', value: 1 }]);
    });
    it('computes _stats and JavaScript reduce functions', async () => {
      const r = await get(B, V + 'stats?group_level=1&skip=1&limit=1');
      assert.equal(rowLines(r)[0], '{"key":[2024],"value":{"sum":6,"count":3,"min":1,"max":3,"sumsqr":14}}');
      const s = await get(B, V + 'stats?group_level=1&skip=2&limit=1');
      assert.equal(rowLines(s)[0], '{"key":[2025],"value":{"sum":5.5,"count":2,"min":1,"max":4.5,"sumsqr":21.25}}');
      const j = await get(B, V + 'js?group_level=1');
      assert.deepEqual(json(j).rows.map((x) => x.value), [100, 300, 200]);
    });
    it('returns rows with reduce=false and refuses invalid combinations', async () => {
      const r = await get(B, V + 'count?reduce=false&limit=2&include_docs=true');
      assert.equal(json(r).total_rows, 6);
      assert.equal(json(r).rows[0].doc._id, 'e', 'the string key sorts first');
      const cases = [
        [V + 'count?include_docs=true', '`include_docs` is invalid for reduce'],
        [V + 'plain?reduce=true', 'Reduce is invalid for map-only views.'],
        [V + 'plain?group=true', 'Invalid use of grouping on a map view.'],
        [V + `count?${q({ keys: ['str', 'x'] })}`, 'Multi-key fetches for reduce views must use `group=true`'],
        [V + 'count?group=false&group_level=1', "Can't specify group=false and group_level>0 at the same time"],
        [V + 'count?conflicts=true', '`conflicts` is invalid for reduce views.'],
      ];
      for (const [p, reason] of cases) {
        const e = await get(B, p);
        assert.equal(e.status, 400, p);
        assert.deepEqual(json(e), { error: 'query_parse_error', reason }, p);
      }
    });
    it('reports an empty reduce as an empty rows array', async () => {
      const r = await get(B, V + 'count?startkey=%7B%7D');
      assert.equal(r.text, '{"rows":[\r\n\r\n]}\n');
    });
  });

  describe('sums like CouchDB\'s builtin _sum', () => {
    it('sums arrays and objects, reports bad values in the row', async () => {
      await mkdb(B, 'sums', {
        docs: [
          { _id: 'a', k: 'arr', v: [1, 2] }, { _id: 'b', k: 'arr', v: [10, 20, 30] },
          { _id: 'c', k: 'obj', v: { y: 1, x: 2 } }, { _id: 'd', k: 'obj', v: { x: 5 } },
          { _id: 'e', k: 'bad', v: 1 }, { _id: 'f', k: 'bad', v: 'oops' },
          { _id: 'g', k: 'big', v: 9007199254740992 }, { _id: 'h', k: 'big', v: 1 }, { _id: 'i', k: 'big', v: 1 },
        ],
        ddocs: { d: { views: { s: { map: emitK.views.v.map, reduce: '_sum' } } } },
      });
      const r = await get(B, '/sums/_design/d/_view/s?group=true');
      const lines = rowLines(r);
      assert.equal(lines[0], '{"key":"arr","value":[11,22,30]}');
      assert.match(lines[1], /^\{"key":"bad","value":\{"error":"builtin_reduce_error","reason":"The _sum function requires that map values be numbers, .*","caused_by":"oops"\}\}$/);
      assert.equal(lines[2], '{"key":"big","value":9007199254740994}', 'integers sum exactly');
      assert.equal(lines[3], '{"key":"obj","value":{"x":7,"y":1}}');
    });
  });

  it('adds docs with include_docs, following linked documents', async () => {
    await mkdb(B, 'incl', {
      docs: [{ _id: 'a', k: 1 }, { _id: 'b', k: 2, v: { _id: 'a' } }, { _id: 'c', k: 3, v: { _id: 'gone' } }, { _id: 'd', k: 4, v: { _id: null } }],
      ddocs: { d: emitK },
    });
    const r = await get(B, '/incl/_design/d/_view/v?include_docs=true');
    const rows = json(r).rows;
    assert.equal(rows[0].doc._id, 'a');
    assert.match(rows[0].doc._rev, /^1-[0-9a-f]{32}$/);
    assert.equal(rows[1].doc._id, 'a', 'a value {"_id": ...} links another doc');
    assert.equal(rows[2].doc, null);
    assert.equal(rows[3].doc, null);
  });

  it('formats keys and values as CouchDB (jiffy) prints them', async () => {
    await mkdb(B, 'fmt', {
      ddocs: {
        d: {
          views: {
            v: {
              map: 'function(doc) { if (doc._id !== "nums") return; emit(0.1, 1.0); emit(1e21, -0); emit(-1.5e-7, 123456789012345680000);'
                + ' emit("e\\u0301 \\u001f/\\u2028", [[1,[2]],{"a":{"b":[]}}]); emitRaw("9007199254740993", "12345678901234567890123"); emitRaw("[1.0, 1E2]", "1.50"); }',
            },
            f: { map: 'function(doc) { if (doc.f !== undefined) emit(doc.f, doc.big); }' },
          },
        },
      },
    });
    await request(B, 'PUT', '/fmt/nums', { body: '{}' });
    await request(B, 'PUT', '/fmt/floaty', { body: '{"f":1.0,"big":12345678901234567890,"e":1E2}' });
    const r = await get(B, '/fmt/_design/d/_view/v');
    assert.deepEqual(rowLines(r), [
      '{"id":"nums","key":-1.5e-7,"value":123456789012345680000}',
      '{"id":"nums","key":0.1,"value":1}',
      '{"id":"nums","key":9007199254740993,"value":12345678901234567890123}',
      '{"id":"nums","key":1e+21,"value":0}',
      '{"id":"nums","key":"e\u0301 \\u001F/\u2028","value":[[1,[2]],{"a":{"b":[]}}]}',
      '{"id":"nums","key":[1.0,100.0],"value":1.5}',
    ]);
    const big = await get(B, '/fmt/_design/d/_view/v?startkey=9007199254740993&endkey=9007199254740993');
    assert.equal(json(big).rows.length, 1, 'big integer bound compared exactly');
    const big2 = await get(B, '/fmt/_design/d/_view/v?key=9007199254740992');
    assert.equal(json(big2).rows.length, 0);
    const f = await get(B, '/fmt/_design/d/_view/f?include_docs=true');
    assert.equal(rowLines(f)[0].replace(/"_rev":"[^"]+"/, '"_rev":"R"'),
      '{"id":"floaty","key":1,"value":12345678901234567000,"doc":{"_id":"floaty","_rev":"R","f":1.0,"big":12345678901234567890,"e":100.0}}');
  });

  describe('_all_docs', () => {
    before(async () => {
      await mkdb(B, 'alld', {
        docs: ['a', 'B', 'Z', 'e', '\u00e9', 'b'].map((id) => ({ _id: id })),
        ddocs: { x: emitK },
      });
    });
    it('orders by raw code point order and reports {"rev"} values', async () => {
      const r = await get(B, '/alld/_all_docs');
      assert.deepEqual(ids(r), ['B', 'Z', '_design/x', 'a', 'b', 'e', '\u00e9']);
      const row = json(r).rows[0];
      assert.deepEqual(Object.keys(row), ['id', 'key', 'value']);
      assert.equal(row.key, 'B');
      assert.match(row.value.rev, /^1-/);
      assert.equal(json(r).total_rows, 7);
    });
    it('applies startkey/endkey/skip/limit/descending and counts offset', async () => {
      let r = await get(B, '/alld/_all_docs?' + q({ startkey: 'a', limit: '2', skip: '1' }));
      assert.deepEqual([json(r).offset, ids(r)], [4, ['b', 'e']]);
      r = await get(B, '/alld/_all_docs?' + q({ descending: 'true', startkey: 'b', endkey: 'Z', inclusive_end: 'false' }));
      assert.deepEqual([json(r).offset, ids(r)], [2, ['b', 'a', '_design/x']]);
      r = await get(B, '/alld/_all_docs?' + q({ startkey: 'z', endkey: 'a' }));
      assert.equal(r.status, 200, '_all_docs does not range-check');
      assert.deepEqual(ids(r), []);
      r = await get(B, '/alld/_all_docs?' + q({ startkey_docid: 'b' }));
      assert.deepEqual(ids(r), ['b', 'e', '\u00e9'], 'startkey_docid works on its own for _all_docs');
    });
    it('serves keys with not_found rows and a null offset', async () => {
      const r = await get(B, '/alld/_all_docs?' + q({ keys: ['b', 'nope'], include_docs: 'true' }));
      const lines = rowLines(r);
      assert.ok(r.text.startsWith('{"total_rows":7,"offset":null,"rows":[\r\n'));
      assert.match(lines[0], /^\{"id":"b","key":"b","value":\{"rev":"1-[0-9a-f]+"\},"doc":\{"_id":"b"/);
      assert.equal(lines[1], '{"key":"nope","error":"not_found"}');
    });
  });

  describe('partitioned databases', () => {
    before(async () => {
      const docs = [];
      for (const p of ['p1', 'p2', 'p3']) for (let i = 0; i < 3; i++) docs.push({ _id: `${p}:d${i}`, k: i });
      await mkdb(B, 'parts', {
        partitioned: true,
        q: 1,
        docs,
        ddocs: { d: emitK, g: { options: { partitioned: false }, views: emitK.views } },
      });
      await mkdb(B, 'parts8', { partitioned: true, q: 8, docs, ddocs: { d: emitK } });
    });
    it('serves a partition\'s rows; total_rows and offset are those of the partition\'s shard', async () => {
      const r = await get(B, '/parts/_partition/p2/_design/d/_view/v?skip=1');
      assert.deepEqual(ids(r), ['p2:d1', 'p2:d2']);
      assert.equal(json(r).total_rows, 9, 'with q=1 the shard holds every partition');
      assert.equal(json(r).offset, 4, 'rows of partition p1 sort before p2 in the shard');
      const r8 = await get(B, '/parts8/_partition/p2/_design/d/_view/v');
      const shard = (p) => lib.shardOfHashKey(8, p);
      const sameShard = ['p1', 'p2', 'p3'].filter((p) => shard(p) === shard('p2'));
      assert.equal(json(r8).total_rows, 3 * sameShard.length);
      assert.deepEqual(ids(r8), ['p2:d0', 'p2:d1', 'p2:d2']);
      const beyond = await get(B, '/parts/_partition/p2/_design/d/_view/v?skip=10');
      assert.equal(json(beyond).offset, 6, 'partition queries skip on the shard: offset stops after the range');
    });
    it('serves partitioned _all_docs', async () => {
      const r = await get(B, '/parts/_partition/p3/_all_docs?limit=2');
      assert.deepEqual(ids(r), ['p3:d0', 'p3:d1']);
      assert.equal(json(r).total_rows, 11, 'the shard holds 9 docs and 2 design docs');
      assert.equal(json(r).offset, 8, '_design/d, _design/g and the p1, p2 docs come first');
      const d = await get(B, '/parts/_partition/p3/_all_docs?descending=true');
      assert.deepEqual(ids(d), ['p3:d2', 'p3:d1', 'p3:d0']);
    });
    it('answers partition errors as CouchDB does', async () => {
      let r = await get(B, '/parts/_design/d/_view/v');
      assert.deepEqual([r.status, json(r).reason], [400, '`partition` parameter is mandatory for queries to this view.']);
      r = await get(B, '/parts/_design/d/_view/v?partition=p1&limit=1');
      assert.deepEqual(ids(r), ['p1:d0'], 'partition= works like the _partition path');
      r = await get(B, '/parts/_partition/p1/_design/g/_view/v');
      assert.deepEqual([r.status, json(r).reason], [400, '`partition` parameter is not supported in this design doc']);
      r = await get(B, '/parts/_design/g/_view/v?limit=2');
      assert.deepEqual(ids(r), ['p1:d0', 'p2:d0'], 'a global view in a partitioned db');
      r = await get(B, '/coll/_partition/p1/_all_docs');
      assert.deepEqual([r.status, json(r)], [400, { error: 'bad_request', reason: 'database is not partitioned' }]);
      r = await get(B, '/parts/_partition/_x/_all_docs');
      assert.deepEqual([r.status, json(r)], [400, { error: 'illegal_partition', reason: 'Partition must not start with an underscore' }]);
      r = await get(B, '/parts/_partition/p1/_all_docs?partition=p2');
      assert.deepEqual([r.status, json(r).reason], [400, 'Conflicting value for `partition` in query string']);
      r = await get(B, '/parts/_partition/p1');
      assert.deepEqual([r.status, json(r).partition, json(r).doc_count], [200, 'p1', 3]);
      r = await request(B, 'PUT', '/parts/nocolon', { body: {} });
      assert.deepEqual([r.status, json(r)], [400, { error: 'illegal_docid', reason: 'Doc id must be of form partition:id' }]);
    });
  });

  it('rejects malformed parameters with CouchDB\'s errors and ignores unknown ones', async () => {
    const V = '/artists/_design/artists/_view/by-name?';
    const cases = [
      ['limit=abc', 'query_parse_error', 'Invalid value for integer: "abc"'],
      ['limit=', 'query_parse_error', 'Invalid value for integer: []'],
      ['limit=-1', 'query_parse_error', 'Invalid value for positive integer: "-1"'],
      ['skip=1.5', 'query_parse_error', 'Invalid value for integer: "1.5"'],
      ['limit=268435457', 'query_parse_error', 'Limit is too large, must not exceed 268435456'],
      ['limit=%C3%A9', 'query_parse_error', 'Invalid value for integer: "\u00e9"'],
      ['limit=%E2%82%AC', 'query_parse_error', 'Invalid value for integer: [226,130,172]'],
      ['descending=yes', 'query_parse_error', 'Invalid boolean parameter: "yes"'],
      ['inclusive_end=1', 'query_parse_error', 'Invalid boolean parameter: "1"'],
      ['group_level=x', 'query_parse_error', 'Invalid value for integer: "x"'],
      ['stale=bad', 'query_parse_error', 'Invalid value for `stale`.'],
      ['update=maybe', 'query_parse_error', 'Invalid value for `update`.'],
      ['startkey=abc', 'bad_request', 'invalid UTF-8 JSON'],
      ['key=%22a', 'bad_request', 'invalid UTF-8 JSON'],
      ['endkey=%22%FF%22', 'bad_request', 'invalid UTF-8 JSON'],
      ['keys=%5B1', 'bad_request', 'invalid UTF-8 JSON'],
      ['keys=%22a%22', 'query_parse_error', '`keys` must be an array of strings.'],
      ['keys=%5B1%2C2%5D&startkey=1', 'query_parse_error', '`keys` is incompatible with `key`, `start_key` and `end_key`'],
      ['partition=p1', 'query_parse_error', '`partition` parameter is not supported in this design doc'],
    ];
    for (const [qs, error, reason] of cases) {
      const r = await get(B, V + qs);
      assert.equal(r.status, 400, qs);
      assert.deepEqual(json(r), { error, reason }, qs);
      assert.ok(r.headers['content-length'], 'errors are not chunked');
      assert.ok(r.text.endsWith('}\n'));
    }
    const ok = await get(B, V + 'limit=1&foo=bar&descending=TRUE&stale=ok&update=lazy&stable=true&sorted=true&callback=x&conflicts=false');
    assert.equal(ok.status, 200);
    assert.deepEqual(ids(ok), ['fd590d4ad53771db47b0406054f02243']);
    const later = await get(B, V + 'limit=1&limit=3;skip=1');
    assert.equal(json(later).rows.length, 3, 'the last of repeated parameters wins, ";" separates too');
    const m = await get(B, '/artists/_design/nope/_view/x?limit=bad');
    assert.deepEqual([m.status, json(m)], [404, { error: 'not_found', reason: 'missing' }], 'the design doc is opened first');
    const mv = await get(B, '/artists/_design/artists/_view/nope?limit=5');
    assert.deepEqual([mv.status, json(mv)], [404, { error: 'not_found', reason: 'missing_named_view' }]);
    const pe = await get(B, '/artists/_design/artists/_view/nope?limit=bad');
    assert.equal(pe.status, 400, 'parameters are parsed before the view is looked up');
  });

  it('indexes values nested 2997 levels deep (couchjs writes them; V8 overflows on sealed ones)', async () => {
    let text = '"leaf <&>"';
    for (let i = 1; i <= 2997; i++) text = i % 2 ? `{"d":${text}}` : `[${text}]`;
    await mkdb(B, 'deep', { docs: [{ _id: 'deep', k: 1, v: JSON.parse(text) }, { _id: 'flat', k: 2, v: 'x' }], ddocs: { d: emitK } });
    const r = await get(B, '/deep/_design/d/_view/v');
    assert.equal(r.status, 200);
    assert.equal(r.text, `{"total_rows":2,"offset":0,"rows":[\r\n{"id":"deep","key":1,"value":${text}},\r\n`
      + '{"id":"flat","key":2,"value":"x"}\r\n]}\n');
  });

  it('loads data at runtime and recomputes views lazily', async () => {
    await mkdb(B, 'live', { docs: [{ _id: 'a', k: 1 }], ddocs: { d: emitK } });
    let r = await get(B, '/live/_design/d/_view/v');
    assert.equal(json(r).total_rows, 1);
    const put = await request(B, 'PUT', '/live/b', { body: { k: 0 } });
    assert.equal(put.status, 201);
    const rev = json(put).rev;
    r = await get(B, '/live/_design/d/_view/v');
    assert.deepEqual(ids(r), ['b', 'a']);
    const conflict = await request(B, 'PUT', '/live/b', { body: { k: 5 } });
    assert.deepEqual([conflict.status, json(conflict)], [409, { error: 'conflict', reason: 'Document update conflict.' }]);
    await request(B, 'PUT', '/live/b', { body: { _rev: rev, k: 5 } });
    r = await get(B, '/live/_design/d/_view/v');
    assert.deepEqual(ids(r), ['a', 'b']);
    const cur = json(await get(B, '/live/b'));
    const del = await request(B, 'DELETE', `/live/b?rev=${cur._rev}`);
    assert.equal(del.status, 200);
    r = await get(B, '/live/_design/d/_view/v');
    assert.deepEqual(ids(r), ['a']);
    const ddoc = json(await get(B, '/live/_design/d'));
    ddoc.views.v.map = 'function(doc){ emit(doc._id, 2); }';
    await request(B, 'PUT', '/live/_design/d', { body: ddoc });
    r = await get(B, '/live/_design/d/_view/v');
    assert.equal(rowLines(r)[0], '{"id":"a","key":"a","value":2}');
    const bad = await request(B, 'PUT', '/live/_design/e', { body: { views: { v: { map: 'function(doc) {' } } } });
    assert.equal(bad.status, 400);
    assert.equal(json(bad).error, 'compilation_error');
    const ct = await request(B, 'POST', '/live/_bulk_docs', { body: '{"docs":[]}', headers: { 'content-type': 'text/plain' } });
    assert.deepEqual([ct.status, json(ct).error], [415, 'bad_content_type']);
  });

  it('refuses a request line over 8192 bytes as mochiweb does: 400, no body, connection closed', async () => {
    const line = (n) => `/artists/_design/artists/_view/by-name?startkey=%22${'a'.repeat(n)}%22&limit=1`;
    // 'GET ' + path + ' HTTP/1.1' + CRLF: 8192 bytes with n = 8115
    const fits = await get(B, line(8115));
    assert.equal(fits.status, 200);
    const over = await get(B, line(8116));
    assert.deepEqual([over.status, over.text, over.headers.connection], [400, '', 'close']);
  });

  it('answers HEAD like GET without a body', async () => {
    const r = await request(B, 'HEAD', '/artists/_design/artists/_view/by-name');
    assert.equal(r.status, 200);
    assert.equal(r.text, '');
    assert.equal(r.headers['transfer-encoding'], 'chunked');
    const e = await request(B, 'HEAD', '/artists/_design/artists/_view/by-name?limit=x');
    assert.equal(e.status, 400);
  });

  describe('control endpoints', () => {
    const V = '/artists/_design/artists/_view/by-name?limit=1';
    const fault = async (f) => {
      const r = await request(B, 'POST', '/_double/faults', { body: f });
      assert.equal(r.status, 200, r.text);
    };
    after(async () => { await fault({ mode: 'none' }); });

    it('logs requests with their headers; DELETE clears the log', async () => {
      await request(B, 'DELETE', '/_double/log');
      await get(B, V + '&startkey_docid=x%2By', { headers: { 'x-probe': 'yes', accept: 'application/json' } });
      const log = json(await get(B, '/_double/log'));
      assert.equal(log.length, 1, 'control requests are not logged');
      assert.equal(log[0].method, 'GET');
      assert.equal(log[0].url, V + '&startkey_docid=x%2By');
      assert.deepEqual(log[0].query, [['limit', '1'], ['startkey_docid', 'x+y']]);
      assert.equal(log[0].headers['x-probe'], 'yes');
      await request(B, 'DELETE', '/_double/log');
      assert.deepEqual(json(await get(B, '/_double/log')), []);
    });

    it('keeps HTTP/1.1 connections alive', async () => {
      await request(B, 'DELETE', '/_double/log');
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      const a = await get(B, V, { agent });
      const b = await get(B, V, { agent });
      assert.equal(a.status, 200);
      assert.equal(b.status, 200);
      const log = json(await get(B, '/_double/log'));
      assert.equal(log[0].conn, log[1].conn, 'same connection');
      assert.deepEqual([log[0].connRequest, log[1].connRequest], [1, 2]);
      const stats = json(await get(B, '/_double/stats'));
      assert.ok(stats.connections_open >= 1);
      agent.destroy();
    });

    it('slow: delays the answer', async () => {
      await fault({ mode: 'slow', ms: 400, count: 1 });
      let t0 = Date.now();
      const r = await get(B, V);
      assert.equal(r.status, 200);
      assert.ok(Date.now() - t0 >= 380, 'slow');
      t0 = Date.now();
      await get(B, V);
      assert.ok(Date.now() - t0 < 300, 'count=1 applies once');
    });

    it('stall: sends the headers and first chunk, then waits', async () => {
      await fault({ mode: 'stall', ms: 400, count: 1 });
      const t0 = Date.now();
      const r = await get(B, V);
      assert.ok(Date.now() - t0 >= 380);
      assert.equal(json(r).rows.length, 1);
    });

    it('drip: the real response, one byte every ms', async () => {
      await fault({ mode: 'drip', ms: 5, count: 1 });
      const t0 = Date.now();
      const r = await get(B, V);
      assert.equal(r.status, 200);
      assert.ok(Date.now() - t0 >= 5 * r.bytes.length * 0.9, 'a byte every 5 ms');
      assert.deepEqual(json(r), json(await get(B, V)));
    });

    it('status: answers with the given status and a CouchDB error body', async () => {
      await fault({ mode: 'status', status: 503, count: 1 });
      const r = await get(B, V);
      assert.equal(r.status, 503);
      assert.equal(json(r).error, 'service unavailable');
      assert.equal((await get(B, V)).status, 200);
    });

    it('garbage: a 200 whose body is not JSON', async () => {
      await fault({ mode: 'garbage', count: 1 });
      const r = await get(B, V);
      assert.equal(r.status, 200);
      assert.throws(() => JSON.parse(r.text));
    });

    it('garbage with body or body_base64: exactly that body, whose bytes need not be UTF-8', async () => {
      await fault({ mode: 'garbage', body: '{"rows":[]} é', count: 1 });
      assert.deepEqual((await get(B, V)).bytes, Buffer.from('{"rows":[]} é', 'utf8'));
      const bytes = Buffer.from([0x7b, 0x22, 0xc0, 0xaf, 0xed, 0xa0, 0x80, 0x80, 0x00, 0xff, 0x22, 0x7d]);
      await fault({ mode: 'garbage', body_base64: bytes.toString('base64'), count: 1 });
      const r = await get(B, V);
      assert.equal(r.status, 200);
      assert.deepEqual(r.bytes, bytes);
    });

    it('truncate: part of the chunked body, then the connection closes', async () => {
      await fault({ mode: 'truncate', count: 1 });
      const outcome = await get(B, '/artists/_design/artists/_view/by-name').then((r) => (r.complete ? 'complete' : 'incomplete'), (e) => e.code || e.message);
      assert.notEqual(outcome, 'complete');
      const raw = await rawRequest(B, 'GET /artists/_design/artists/_view/by-name HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
      assert.match(raw.toString(), /\r\n\r\n[0-9a-f]+\r\n\{"total_rows":11.*\r\n0\r\n\r\n$/s, 'after count=1 the answer is whole again');
      await fault({ mode: 'truncate', bytes: 10, count: 1 });
      const cut = await rawRequest(B, 'GET /artists/_design/artists/_view/by-name HTTP/1.1\r\nHost: x\r\n\r\n');
      const body = cut.toString().split('\r\n\r\n')[1];
      assert.equal(body, 'a\r\n{"total_ro\r\n', 'one 10-byte chunk and no terminating chunk');
    });

    it('reset: closes the connection without an answer', async () => {
      await fault({ mode: 'reset', count: 1 });
      await assert.rejects(get(B, V), (e) => ['ECONNRESET', 'EPIPE'].includes(e.code) || /socket hang up/.test(e.message));
      assert.equal((await get(B, V)).status, 200);
    });

    it('huge: a valid view body of at least N bytes', async () => {
      await fault({ mode: 'huge', bytes: 300000, count: 1 });
      const r = await get(B, V);
      assert.ok(Buffer.byteLength(r.text) >= 300000);
      const j = json(r);
      assert.equal(j.rows.length, j.total_rows);
    });

    it('ignore_limit: the rows as without a limit, the skip kept', async () => {
      await fault({ mode: 'ignore_limit', count: 1 });
      const r = json(await get(B, V + '&skip=2'));
      assert.equal(r.rows.length, r.total_rows - 2);
      assert.equal(json(await get(B, V)).rows.length, 1, 'count=1 applies once');
    });

    it('path filters and counts', async () => {
      await fault({ mode: 'status', status: 500, path: '/_all_docs', count: 2 });
      assert.equal((await get(B, V)).status, 200);
      assert.equal((await get(B, '/artists/_all_docs?limit=1')).status, 500);
      assert.equal((await get(B, '/artists/_all_docs?limit=1')).status, 500);
      assert.equal((await get(B, '/artists/_all_docs?limit=1')).status, 200);
      assert.deepEqual(json(await get(B, '/_double/faults')), { mode: 'none' });
      await fault({ mode: 'status', status: 500 });
      assert.equal((await get(B, V)).status, 500);
      assert.equal((await get(B, V)).status, 500, 'no count: until reset');
      await fault({ mode: 'none' });
      assert.equal((await get(B, V)).status, 200);
      const bad = await request(B, 'POST', '/_double/faults', { body: { mode: 'explode' } });
      assert.equal(bad.status, 400);
    });
  });
});

// ------------------------------------------------------------------ multi-query

// POST /db/_design/D/_view/V/queries and /db/_all_docs/queries (also under
// /db/_partition/P/), compared with Apache CouchDB 3.4.3 run with the same
// documents (fixtures/multi.json holds them with the revisions CouchDB gave
// them; its "mq" and "pq" databases have q=2 shards, "pq" is partitioned,
// and partitions "a" and "d" share a shard). Every expected response below
// was captured from that CouchDB (single node, chunked bytes read from the
// socket); the comment of each test names what was checked.
describe('multi-query endpoints (POST .../queries)', () => {
  let srv;
  let B;
  const AUTH = 'Basic ' + Buffer.from('admin:secret').toString('base64');
  const V = '/mq/_design/d/_view/v/queries';
  const C = '/mq/_design/d/_view/c/queries';
  const A = '/mq/_all_docs/queries';
  const fixture = JSON.parse(require('node:fs').readFileSync(path.join(__dirname, 'fixtures', 'multi.json'), 'utf8'));
  const revs = new Map();
  for (const db of Object.values(fixture.dbs)) for (const d of db.docs) revs.set(d._id, d._rev);
  const doc = (id) => fixture.dbs[id.includes(':') ? 'pq' : 'mq'].docs.find((d) => d._id === id);
  // A result as CouchDB writes it: sep is "\r\n" for the first, ",\r\n" after.
  const mapResult = (sep, total, offset, rows) => `${sep}{"total_rows":${total},"offset":${offset},"rows":[\r\n${rows.join(',\r\n')}\r\n]}`;
  const redResult = (sep, rows) => `${sep}{"rows":[\r\n${rows.join(',\r\n')}\r\n]}`;
  const row = (id, key, value) => JSON.stringify({ id, key, value });
  const rowDoc = (id, key, value) => JSON.stringify({ id, key, value, doc: doc(id) });
  const adRow = (id) => JSON.stringify({ id, key: id, value: { rev: revs.get(id) } });
  const red = (key, value) => JSON.stringify({ key, value });
  const vrows = (...pairs) => pairs.map(([id, k]) => row(id, k, Number(id.slice(1))));

  const post = (p, body, opts = {}) => request(B, opts.method || 'POST', p, {
    body, headers: Object.assign({ authorization: AUTH }, body !== undefined ? { 'content-type': 'application/json' } : {}, opts.headers || {}),
  });
  // The raw bytes of one POST on its own connection, read until CouchDB (or
  // the double) closes it.
  const rawPost = (p, body, extra = '') => rawRequest(B, `POST ${p} HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH}\r\n`
    + `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extra}\r\n${body}`);
  const bodyOf = (raw) => { const s = raw.toString('utf8'); return s.slice(s.indexOf('\r\n\r\n') + 4); };
  const chunksOf = async (p, body) => {
    const raw = await rawPost(p, JSON.stringify(body), 'Connection: close\r\n');
    assert.match(raw.toString(), /^HTTP\/1\.1 200 OK\r\n/);
    return parseChunked(raw).chunks;
  };
  const BAD_RANGE = 'No rows can match your key range, reverse your start_key and end_key or set descending=true';

  before(async () => {
    srv = await startDouble(['--fixtures', path.join(__dirname, 'fixtures', 'multi.json'), '--admin', 'admin:secret']);
    B = srv.url;
  });
  after(async () => { await srv.stop(); });

  it('answers each query of a view batch in order, in CouchDB\'s chunks', async () => {
    // Checked on CouchDB 3.4.3: headers, and these six chunks byte for byte.
    const raw = await rawPost(V, '{"queries":[{"limit":2},{"startkey":3,"limit":2,"skip":1},{"keys":[1,2],"descending":true}]}', 'Connection: close\r\n');
    const { head, chunks } = parseChunked(raw);
    assert.match(head, /^HTTP\/1\.1 200 OK\r\n/);
    assert.match(head, /\r\nTransfer-Encoding: chunked/);
    assert.match(head, /\r\nContent-Type: application\/json/);
    assert.match(head, /\r\nCache-Control: must-revalidate/);
    assert.doesNotMatch(head, /Content-Length|ETag/i);
    assert.deepEqual(chunks, [
      '{"results":[',
      mapResult('\r\n', 20, 0, vrows(['d00', 0], ['d07', 0])),
      mapResult(',\r\n', 20, 10, vrows(['d10', 3], ['d17', 3])),
      mapResult(',\r\n', 20, 11, vrows(['d16', 2], ['d09', 2], ['d02', 2], ['d15', 1], ['d08', 1], ['d01', 1])),
      '\r\n]}',
      '\n',
    ]);
    assert.equal(raw.toString().endsWith('\r\n0\r\n\r\n'), true, 'the response is complete');
  });

  it('takes every view parameter per query: JSON keys, docids, include_docs, update_seq', async () => {
    // Checked on CouchDB 3.4.3 (update_seq differs: the double's is "N-double").
    const chunks = await chunksOf(V, { queries: [
      { startkey: '3', limit: 1 },
      { startkey: 3, startkey_docid: 'd10', limit: 2, endkey: 4, endkey_docid: 'd04', inclusive_end: false },
      { keys: [3, 1] }, { keys: [2] }, { key: 4, include_docs: true },
      { limit: 1, update_seq: true }, { limit: 0, stable: true, update: 'lazy', sorted: false, conflicts: true, foo: 'bar' },
    ] });
    assert.deepEqual(chunks.slice(0, 6), [
      '{"results":[',
      mapResult('\r\n', 20, 20, []).replace('[\r\n\r\n]', '[\r\n\r\n]'),
      mapResult(',\r\n', 20, 10, vrows(['d10', 3], ['d17', 3])),
      mapResult(',\r\n', 20, 9, vrows(['d03', 3], ['d10', 3], ['d17', 3], ['d01', 1], ['d08', 1], ['d15', 1])),
      mapResult(',\r\n', 20, 6, vrows(['d02', 2], ['d09', 2], ['d16', 2])),
      mapResult(',\r\n', 20, 12, [rowDoc('d04', 4, 4), rowDoc('d11', 4, 11), rowDoc('d18', 4, 18)]),
    ]);
    assert.match(chunks[6], /^,\r\n\{"total_rows":20,"offset":0,"update_seq":"[^"]+","rows":\[\r\n\{"id":"d00","key":0,"value":0\}\r\n\]\}$/);
    assert.deepEqual(chunks.slice(7), [mapResult(',\r\n', 20, 0, []), '\r\n]}', '\n']);
  });

  it('uses the URL\'s parameters as every query\'s defaults, except keys, group and group_level', async () => {
    // Checked on CouchDB 3.4.3: ?limit=1&descending=true applies to each
    // query unless it says otherwise; ?keys=[1,2] is dropped, ?keys=[1] is
    // key=1 and stays; ?group=true is dropped; ?reduce=false is a default.
    let chunks = await chunksOf(V + '?limit=1&descending=true', { queries: [{}, { limit: 2 }, { descending: false }] });
    assert.deepEqual(chunks.slice(1, 4), [
      mapResult('\r\n', 20, 0, vrows(['d13', 6])),
      mapResult(',\r\n', 20, 0, vrows(['d13', 6], ['d06', 6])),
      mapResult(',\r\n', 20, 0, vrows(['d00', 0])),
    ]);
    chunks = await chunksOf(V + '?keys=%5B1%2C2%5D', { queries: [{ limit: 3 }] });
    assert.equal(chunks[1], mapResult('\r\n', 20, 0, vrows(['d00', 0], ['d07', 0], ['d14', 0])));
    chunks = await chunksOf(V + '?keys=%5B1%5D', { queries: [{ limit: 5 }] });
    assert.equal(chunks[1], mapResult('\r\n', 20, 3, vrows(['d01', 1], ['d08', 1], ['d15', 1])));
    chunks = await chunksOf(C + '?group=true', { queries: [{}] });
    assert.equal(chunks[1], redResult('\r\n', [red(null, 20)]));
    chunks = await chunksOf(C + '?reduce=false&limit=1', { queries: [{}, { reduce: true }] });
    assert.deepEqual(chunks.slice(1, 3), [
      mapResult('\r\n', 20, 0, [JSON.stringify({ id: 'd00', key: [0, 0], value: 1 })]),
      redResult(',\r\n', [red(null, 20)]),
    ]);
    chunks = await chunksOf(V + '?skip=19', { queries: [{ limit: 5 }, { skip: 0, limit: 1 }] });
    assert.deepEqual(chunks.slice(1, 3), [mapResult('\r\n', 20, 19, vrows(['d13', 6])), mapResult(',\r\n', 20, 0, vrows(['d00', 0]))]);
  });

  it('mixes reduce, group, group_level and reduce=false in one batch', async () => {
    // Checked on CouchDB 3.4.3: reduce results have no total_rows/offset.
    let chunks = await chunksOf(C, { queries: [
      {}, { group: true }, { group_level: 1 }, { reduce: false, limit: 2, skip: 1 },
      { group: true, limit: 1, skip: 1, descending: true }, { startkey: [1], endkey: [0], descending: true, group: true },
      { keys: [[0, 0], [1, 1]], group: true },
    ] });
    assert.deepEqual(chunks, [
      '{"results":[',
      redResult('\r\n', [red(null, 20)]),
      redResult(',\r\n', [red([0, 0], 3), red([0, 2], 3), red([0, 4], 3), red([0, 6], 2), red([1, 1], 3), red([1, 3], 3), red([1, 5], 3)]),
      redResult(',\r\n', [red([0], 11), red([1], 9)]),
      mapResult(',\r\n', 20, 1, [JSON.stringify({ id: 'd07', key: [0, 0], value: 1 }), JSON.stringify({ id: 'd14', key: [0, 0], value: 1 })]),
      redResult(',\r\n', [red([1, 3], 3)]),
      redResult(',\r\n', [red([0, 6], 2), red([0, 4], 3), red([0, 2], 3), red([0, 0], 3)]),
      redResult(',\r\n', [red([0, 0], 3), red([1, 1], 3)]),
      '\r\n]}', '\n',
    ]);
    chunks = await chunksOf(C, { queries: [{ startkey: [5], endkey: [6] }, { startkey: [5], endkey: [6], group: true }, { startkey: [5], endkey: [6], reduce: false }, { group_level: 1 }, {}] });
    assert.deepEqual(chunks.slice(1, 6), [
      '\r\n{"rows":[\r\n\r\n]}', ',\r\n{"rows":[\r\n\r\n]}', ',\r\n{"total_rows":20,"offset":20,"rows":[\r\n\r\n]}',
      redResult(',\r\n', [red([0], 11), red([1], 9)]), redResult(',\r\n', [red(null, 20)]),
    ]);
    chunks = await chunksOf('/mq/_design/d/_view/s/queries', { queries: [{ group: true, limit: 2 }, {}] });
    assert.deepEqual(chunks.slice(1, 3), [redResult('\r\n', [red(0, 21), red(1, 24)]), redResult(',\r\n', [red(null, 190)])]);
  });

  it('answers an empty batch and empty results', async () => {
    // Checked on CouchDB 3.4.3.
    assert.deepEqual(await chunksOf(V, { queries: [] }), ['{"results":[', '\r\n]}', '\n']);
    assert.deepEqual(await chunksOf(A, { queries: [] }), ['{"results":[', '\r\n]}', '\n']);
    assert.deepEqual(await chunksOf(V, { queries: [{ limit: 0 }, { limit: 0, skip: 100 }, { key: null }, { keys: [] }] }), [
      '{"results":[', mapResult('\r\n', 20, 0, []), mapResult(',\r\n', 20, 20, []), mapResult(',\r\n', 20, 0, []), mapResult(',\r\n', 20, 0, []), '\r\n]}', '\n',
    ]);
  });

  it('flushes each result in chunks of at most 1490 bytes, like a view', async () => {
    // Checked on CouchDB 3.4.3: chunk sizes 12, 1464, 777, 75, 1471, 771, 4, 1.
    const chunks = await chunksOf(V, { queries: [{ include_docs: true }, { limit: 1 }, { include_docs: true, descending: true }] });
    assert.deepEqual(chunks.map((c) => Buffer.byteLength(c)), [12, 1464, 777, 75, 1471, 771, 4, 1]);
    assert.ok(chunks[2].startsWith(',\r\n{"id":"d11"'), 'a row that passes the threshold starts the next chunk');
  });

  it('answers _all_docs batches, with offset null for keys and no Content-Type check', async () => {
    // Checked on CouchDB 3.4.3, including that a one-element `keys` is a key
    // (offset 2) and that the design document is a row of _all_docs.
    let chunks = await chunksOf(A, { queries: [
      { limit: 2 }, { startkey: 'd05', limit: 1, descending: true, include_docs: true }, { keys: ['d01', 'zz'] },
      { startkey: 'd09', endkey: 'd01' }, { key: 'd03' }, { keys: ['d01'] }, { keys: ['d01', 'd02', 'd03'], skip: 1, limit: 1, descending: true },
    ] });
    assert.deepEqual(chunks, [
      '{"results":[',
      mapResult('\r\n', 21, 0, [adRow('_design/d'), adRow('d00')]),
      mapResult(',\r\n', 21, 14, [JSON.stringify({ id: 'd05', key: 'd05', value: { rev: revs.get('d05') }, doc: doc('d05') })]),
      mapResult(',\r\n', 21, 'null', [adRow('d01'), '{"key":"zz","error":"not_found"}']),
      mapResult(',\r\n', 21, 10, []),
      mapResult(',\r\n', 21, 4, [adRow('d03')]),
      mapResult(',\r\n', 21, 2, [adRow('d01')]),
      mapResult(',\r\n', 21, 'null', [adRow('d02')]),
      '\r\n]}', '\n',
    ]);
    const plain = await post(A, '{"queries":[{"limit":1}]}', { headers: { 'content-type': 'text/plain' } });
    assert.equal(plain.status, 200, 'no Content-Type check on _all_docs/queries');
    chunks = await chunksOf(A + '?limit=1&skip=2', { queries: [{}, { skip: 0 }, { limit: 268435457, skip: 20 }] });
    assert.deepEqual(chunks.slice(1, 4), [
      mapResult('\r\n', 21, 2, [adRow('d01')]), mapResult(',\r\n', 21, 0, [adRow('_design/d')]),
      mapResult(',\r\n', 21, 20, [adRow('d19')]),
    ], '_all_docs has no limit maximum outside partitions');
  });

  it('answers partition batches with the shard\'s offsets; a query may name another partition', async () => {
    // Checked on CouchDB 3.4.3: partitions "a" and "d" share a shard, so the
    // offsets and total_rows of partition "d" count the 5 rows of "a".
    const P = '/pq/_partition/d/_design/p/_view/v/queries';
    const prow = (id, key) => row(id, key, Number(id.slice(2)));
    let chunks = await chunksOf(P, { queries: [
      {}, { limit: 1, skip: 1 }, { startkey: 1, limit: 2, include_docs: true }, { descending: true, limit: 2 }, { keys: [2, 0] },
      { skip: 100, limit: 0 }, { partition: 'a', limit: 1 },
    ] });
    assert.deepEqual(chunks, [
      '{"results":[',
      mapResult('\r\n', 10, 5, [prow('d:0', 0), prow('d:3', 0), prow('d:1', 1), prow('d:4', 1), prow('d:2', 2)]),
      mapResult(',\r\n', 10, 6, [prow('d:3', 0)]),
      mapResult(',\r\n', 10, 7, [rowDoc('d:1', 1, 1), rowDoc('d:4', 1, 4)]),
      mapResult(',\r\n', 10, 0, [prow('d:2', 2), prow('d:4', 1)]),
      mapResult(',\r\n', 10, 9, [prow('d:2', 2), prow('d:0', 0), prow('d:3', 0)]),
      mapResult(',\r\n', 10, 10, []),
      mapResult(',\r\n', 10, 0, [prow('a:0', 0)]),
      '\r\n]}', '\n',
    ]);
    chunks = await chunksOf('/pq/_partition/d/_design/p/_view/c/queries', { queries: [{}, { group: true }, { reduce: false, limit: 1 }] });
    assert.deepEqual(chunks.slice(1, 4), [
      redResult('\r\n', [red(null, 5)]), redResult(',\r\n', [red(0, 2), red(1, 2), red(2, 1)]),
      mapResult(',\r\n', 10, 5, [JSON.stringify({ id: 'd:0', key: 0, value: 1 })]),
    ]);
    chunks = await chunksOf('/pq/_partition/d/_all_docs/queries', { queries: [
      {}, { limit: 2, skip: 1 }, { descending: true, limit: 1 }, { startkey: 'd:2', limit: 1 }, { startkey: 'a:0', limit: 1 }, { keys: ['d:1', 'a:1'] },
    ] });
    assert.deepEqual(chunks.slice(1, 7), [
      mapResult('\r\n', 10, 5, ['d:0', 'd:1', 'd:2', 'd:3', 'd:4'].map(adRow)),
      mapResult(',\r\n', 10, 6, [adRow('d:1'), adRow('d:2')]),
      mapResult(',\r\n', 10, 0, [adRow('d:4')]),
      mapResult(',\r\n', 10, 7, [adRow('d:2')]),
      mapResult(',\r\n', 10, 5, [adRow('d:0')]),
      mapResult(',\r\n', 21, 'null', [adRow('d:1'), adRow('a:1')]),
    ], '`keys` ignores the partition, as in CouchDB');
    chunks = await chunksOf('/pq/_design/p/_view/v/queries?partition=d', { queries: [{ limit: 1 }, { limit: 1, partition: 'a' }] });
    assert.deepEqual(chunks.slice(1, 3), [mapResult('\r\n', 10, 5, [prow('d:0', 0)]), mapResult(',\r\n', 10, 0, [prow('a:0', 0)])]);
    chunks = await chunksOf('/pq/_all_docs/queries', { queries: [{ limit: 1 }, { partition: 'd', limit: 1 }] });
    assert.deepEqual(chunks.slice(1, 3), [mapResult('\r\n', 21, 0, [adRow('_design/p')]), mapResult(',\r\n', 10, 5, [adRow('d:0')])]);
    const conflict = await post(P + '?partition=a', { queries: [{ limit: 1 }] });
    assert.deepEqual([conflict.status, json(conflict)], [400, { error: 'bad_request', reason: 'Conflicting value for `partition` in query string' }]);
    const mandatory = await post('/pq/_design/p/_view/v/queries', { queries: [{ limit: 1 }] });
    assert.deepEqual([mandatory.status, json(mandatory).reason], [400, '`partition` parameter is mandatory for queries to this view.']);
    const notPartitioned = await post('/mq/_partition/d/_all_docs/queries', { queries: [] });
    assert.deepEqual([notPartitioned.status, json(notPartitioned).reason], [400, 'database is not partitioned']);
  });

  it('refuses bad requests before the response starts, in CouchDB\'s order', async () => {
    // Checked on CouchDB 3.4.3, each status and body (the 500's "ref" is
    // erlang:phash2 of the stack trace there; the double's number differs).
    const cases = [
      [V, '{"queries":[', 400, { error: 'bad_request', reason: 'invalid UTF-8 JSON' }],
      [V, '', 400, { error: 'bad_request', reason: 'invalid UTF-8 JSON' }],
      [V, { keys: [1] }, 400, { error: 'bad_request', reason: 'POST body must include `queries` parameter.' }],
      [V, { queries: {} }, 400, { error: 'bad_request', reason: '`queries` member must be an array.' }],
      [V, { queries: null }, 400, { error: 'bad_request', reason: '`queries` member must be an array.' }],
      [A, { queries: 1 }, 400, { error: 'bad_request', reason: '`queries` member must be an array.' }],
      [V, [1], 400, { error: 'bad_request', reason: 'Request body must be a JSON object' }],
      [A, [1], 400, { error: 'bad_request', reason: 'Request body must be a JSON object' }],
      [V, { queries: [{ limit: 1 }, { limit: 'x' }] }, 400, { error: 'query_parse_error', reason: 'Invalid value for integer: <<"x">>' }],
      [V, { queries: [{ limit: 1 }, { limit: -1 }] }, 400, { error: 'query_parse_error', reason: 'Invalid value for positive integer: -1' }],
      [V, { queries: [{ descending: 'yes' }] }, 400, { error: 'query_parse_error', reason: 'Invalid boolean parameter: "yes"' }],
      [V, { queries: [{ limit: 1 }, { reduce: true }] }, 400, { error: 'query_parse_error', reason: 'Reduce is invalid for map-only views.' }],
      [V, { queries: [{ group: true }] }, 400, { error: 'query_parse_error', reason: 'Invalid use of grouping on a map view.' }],
      [V, { queries: [{ keys: 'a' }] }, 400, { error: 'query_parse_error', reason: '`keys` must be an array of strings.' }],
      [V, { queries: [{ keys: [1, 2], key: 1 }] }, 400, { error: 'query_parse_error', reason: '`keys` is incompatible with `key`, `start_key` and `end_key`' }],
      [V, { queries: [{ stale: 'x' }] }, 400, { error: 'query_parse_error', reason: 'Invalid value for `stale`.' }],
      [V, { queries: [{ limit: 268435457 }] }, 400, { error: 'query_parse_error', reason: 'Limit is too large, must not exceed 268435456' }],
      [V, { queries: [{ partition: 'a' }] }, 400, { error: 'query_parse_error', reason: '`partition` parameter is not supported in this design doc' }],
      [V, { queries: [{ partition: '_a' }] }, 400, { error: 'illegal_partition', reason: 'Partition must not start with an underscore' }],
      [C, { queries: [{ reduce: false, limit: 1, include_docs: true }, { include_docs: true }] }, 400, { error: 'query_parse_error', reason: '`include_docs` is invalid for reduce' }],
      [C, { queries: [{ keys: [[0, 0], [1, 1]] }] }, 400, { error: 'query_parse_error', reason: 'Multi-key fetches for reduce views must use `group=true`' }],
      [C, { queries: [{ group: false, group_level: 1 }] }, 400, { error: 'query_parse_error', reason: "Can't specify group=false and group_level>0 at the same time" }],
      [A, { queries: [{ limit: 1 }, { reduce: true }] }, 400, { error: 'query_parse_error', reason: 'Reduce is invalid for map-only views.' }],
      [A, { queries: [{ group_level: 1, limit: 1 }] }, 400, { error: 'query_parse_error', reason: 'Invalid use of grouping on a map view.' }],
      [A, { queries: [{ partition: 'a' }] }, 400, { error: 'query_parse_error', reason: '`partition` parameter is not supported on this db' }],
      [V + '?limit=x', { queries: [{}] }, 400, { error: 'query_parse_error', reason: 'Invalid value for integer: "x"' }],
      [V + '?limit=x', 'nope', 400, { error: 'bad_request', reason: 'invalid UTF-8 JSON' }, 'the body is read before the URL'],
      ['/mq/_design/d/_view/nope/queries', { queries: [{}] }, 404, { error: 'not_found', reason: 'missing_named_view' }],
      ['/mq/_design/d/_view/nope/queries', 'x', 400, { error: 'bad_request', reason: 'invalid UTF-8 JSON' }],
      ['/mq/_design/d/_view/nope/queries?limit=x', { queries: [] }, 400, { error: 'query_parse_error', reason: 'Invalid value for integer: "x"' }],
      ['/mq/_design/d/_view/nope/queries', { queries: [{ limit: 'x' }] }, 404, { error: 'not_found', reason: 'missing_named_view' }, 'the view before the queries'],
      ['/mq/_design/nope/_view/v/queries', 'x', 404, { error: 'not_found', reason: 'missing' }, 'the design document first'],
      ['/nodb/_design/d/_view/v/queries', { queries: [{}] }, 404, { error: 'not_found', reason: 'Database does not exist.' }],
      ['/nodb/_all_docs/queries', { queries: [] }, 404, { error: 'not_found', reason: 'Database does not exist.' }],
      [V + '/x', { queries: [] }, 405, { error: 'method_not_allowed', reason: 'Only GET,POST,HEAD allowed' }],
    ];
    for (const [p, body, status, expected, why] of cases) {
      const r = await post(p, body);
      assert.deepEqual([r.status, json(r)], [status, expected], `${p} ${JSON.stringify(body)} ${why || ''}`);
      assert.ok(r.headers['content-length'], 'errors are not chunked');
    }
    for (const [p, body, where] of [[V, { queries: [1] }, 0], [V, { queries: [{ limit: 1 }, 'x'] }, 1], [V, { queries: [null] }, 0], [A, { queries: [[]] }, 0]]) {
      const r = await post(p, body);
      assert.equal(r.status, 500, `query ${where} is not an object`);
      const j = json(r);
      assert.deepEqual([j.error, j.reason, typeof j.ref], ['unknown_error', 'function_clause', 'number']);
      assert.equal(r.headers['x-couch-stack-hash'], String(j.ref));
    }
    const ct = await post(V, '{"queries":[{}]}', { headers: { 'content-type': 'text/plain' } });
    assert.deepEqual([ct.status, json(ct)], [415, { error: 'bad_content_type', reason: 'Content-Type must be application/json' }]);
    for (const p of [V, A, '/pq/_partition/d/_design/p/_view/v/queries']) {
      for (const method of ['GET', 'PUT', 'HEAD']) {
        const r = await post(p, method === 'PUT' ? { queries: [] } : undefined, { method });
        assert.equal(r.status, 405, `${method} ${p}`);
        assert.equal(r.headers.allow, 'POST');
        assert.equal(r.text, method === 'HEAD' ? '' : '{"error":"method_not_allowed","reason":"Only POST allowed"}\n');
      }
    }
    const missingDdoc = await post('/mq/_design/nope/_view/v/queries', undefined, { method: 'GET' });
    assert.equal(missingDdoc.status, 404, 'the design document is opened before the method is checked');
    assert.equal((await post(V, { queries: [{ limit: 1, foo: 'bar', queries: [1] }] })).status, 200, 'unknown parameters are ignored');
    const dup = await post(V, '{"queries":[{"limit":1}],"queries":[{"limit":2}]}');
    assert.equal(json(dup).results[0].rows.length, 2, 'the last of duplicated members wins');
  });

  it('decodes and renders body values as CouchDB\'s Erlang code does', async () => {
    // Checked on CouchDB 3.4.3, each reason: a JSON array of integers is a
    // character list ([104,105] is "hi", [49,48] is the integer 10); floats,
    // binaries and objects are printed by io_lib's ~p; null has no clause
    // in parse_boolean (500); docids and partitions go through to_binary.
    const reason = async (q) => {
      const r = await post(V, { queries: [q] });
      return r.status === 400 ? json(r).reason : r.status;
    };
    const raw = async (text) => json(await post(V, `{"queries":[{"limit":${text}}]}`)).reason;
    assert.equal(await reason({ descending: 1 }), 'Invalid boolean parameter: 1');
    assert.equal(await reason({ descending: [104, 105] }), 'Invalid boolean parameter: "hi"');
    assert.equal(await reason({ descending: '' }), 'Invalid boolean parameter: []');
    assert.equal(await reason({ descending: '\u00e9' }), 'Invalid boolean parameter: "\u00e9"');
    assert.equal(await reason({ descending: [1] }), 'Invalid boolean parameter: [1]');
    for (const q of [{ descending: null }, { descending: 1.5 }, { descending: { a: 1 } }, { include_docs: null }, { reduce: null }, { inclusive_end: null }]) {
      assert.equal(await reason(q), 500, JSON.stringify(q));
    }
    assert.equal(await reason({ stable: null }), 'Invalid value for `stable`.');
    assert.equal(await reason({ update: null }), 'Invalid value for `update`.');
    assert.equal(await reason({ limit: true }), 'Invalid value for integer: true');
    assert.equal(await reason({ limit: null }), 'Invalid value for integer: null');
    assert.equal(await reason({ limit: [1, 'a', null, 1.5, { b: [] }] }), 'Invalid value for integer: [1,<<"a">>,null,1.5,{[{<<"b">>,[]}]}]');
    assert.equal(await reason({ limit: { a: 1 } }), 'Invalid value for integer: {[{<<"a">>,1}]}');
    assert.equal(await reason({ limit: '\u00e9' }), 'Invalid value for integer: <<"\u00e9">>');
    assert.equal(await reason({ limit: '\u20ac' }), 'Invalid value for integer: <<226,130,172>>');
    assert.equal(await reason({ limit: '' }), 'Invalid value for integer: <<>>');
    assert.equal(await reason({ limit: '\u0001' }), 'Invalid value for integer: <<1>>');
    assert.equal(await reason({ limit: '-1' }), 'Invalid value for integer: <<"-1">>');
    assert.equal(await reason({ limit: [300] }), 'Invalid value for integer: [300]');
    assert.equal(await reason({ limit: [45, 49] }), 'Invalid value for positive integer: "-1"');
    assert.equal(await reason({ skip: -5 }), 'Invalid value for positive integer: -5');
    assert.equal(await reason({ partition: [] }), 'Partition must not be empty');
    assert.equal(await reason({ partition: null }), '`partition` parameter is not supported in this design doc');
    const floats = [['1e21', '1.0e21'], ['100.0', '100.0'], ['1000.0', '1.0e3'], ['1e4', '1.0e4'], ['0.001', '0.001'], ['1e-4', '0.0001'],
      ['1e-5', '1.0e-5'], ['123.456', '123.456'], ['1.5e300', '1.5e300'], ['1234567.0', '1234567.0'], ['12345678901234567890.0', '1.2345678901234567e19'], ['-5.0', '-5.0']];
    for (const [text, shown] of floats) assert.equal(await raw(text), `Invalid value for integer: ${shown}`, text);
    const ok = json(await post(V, { queries: [
      { limit: [49, 48] }, { limit: [43, 49] }, { descending: 'TRUE', limit: 1 }, { stale: [111, 107], limit: 1 },
      { startkey_docid: [1], startkey: 1, limit: 1 }, { startkey_docid: { a: 1 }, startkey: 1, limit: 1 }, { startkey_docid: null, startkey: 1, limit: 1 },
      { startkey_docid: 1, startkey: 3, limit: 1 },
    ] })).results;
    assert.deepEqual(ok.map((r) => [r.offset, r.rows.length, r.rows[0].id]), [
      [0, 10, 'd00'], [0, 1, 'd00'], [0, 1, 'd13'], [0, 1, 'd00'], [3, 1, 'd01'], [6, 1, 'd02'], [6, 1, 'd02'], [9, 1, 'd03'],
    ]);
  });

  it('a reversed range in the first query: a 400, then the rest of the batch on the same connection', async () => {
    // Checked on CouchDB 3.4.3: the error response (Content-Length 133) is
    // followed on the kept-alive connection by the other queries' chunks,
    // "\r\n]}", ");\n" and the last chunk; a pipelined request behind it is
    // answered after those bytes.
    const err = `{"error":"query_parse_error","reason":"${BAD_RANGE}"}\n`;
    const body = '{"queries":[{"startkey":5,"endkey":1},{"limit":1},{"limit":1,"skip":3}]}';
    const raw = await rawRequest(B, `POST ${V} HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH}\r\nContent-Type: application/json\r\n`
      + `Content-Length: ${body.length}\r\n\r\n${body}GET /_up HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    const text = raw.toString();
    assert.match(text, /^HTTP\/1\.1 400 Bad Request\r\n/);
    assert.match(text, /\r\nContent-Length: 133\r\n/);
    const first = text.slice(text.indexOf('\r\n\r\n') + 4);
    const tail = '4a\r\n\r\n{"total_rows":20,"offset":0,"rows":[\r\n{"id":"d00","key":0,"value":0}\r\n]}\r\n'
      + '4b\r\n,\r\n{"total_rows":20,"offset":3,"rows":[\r\n{"id":"d01","key":1,"value":1}\r\n]}\r\n'
      + '4\r\n\r\n]}\r\n3\r\n);\n\r\n0\r\n\r\n';
    assert.equal(first.slice(0, err.length + tail.length), err + tail);
    assert.match(first.slice(err.length + tail.length), /^HTTP\/1\.1 200 OK\r\n[^]*\r\n\r\n\{"status":"ok","seeds":\{\}\}\n$/);
    const alone = bodyOf(await rawPost(V, '{"queries":[{"startkey":5,"endkey":1}]}', 'Connection: close\r\n'));
    assert.equal(alone, `${err}4\r\n\r\n]}\r\n3\r\n);\n\r\n0\r\n\r\n`, 'even alone, the 400 has bytes behind it');
  });

  it('a reversed range in a later query: the 200 ends after the results before it and the connection closes', async () => {
    // Checked on CouchDB 3.4.3: no last chunk; the connection is closed (this
    // request does not ask for it; rawRequest returns when it ends).
    let raw = await rawPost(V, '{"queries":[{"limit":2},{"startkey":5,"endkey":1},{"limit":1}]}');
    assert.match(raw.toString(), /^HTTP\/1\.1 200 OK\r\n/);
    assert.equal(bodyOf(raw), 'c\r\n{"results":[\r\n'
      + '6b\r\n\r\n{"total_rows":20,"offset":0,"rows":[\r\n{"id":"d00","key":0,"value":0},\r\n{"id":"d07","key":0,"value":7}\r\n]}\r\n');
    raw = await rawPost(V, '{"queries":[{"limit":0},{"startkey":1,"endkey":5,"descending":true}]}');
    assert.equal(bodyOf(raw), 'c\r\n{"results":[\r\n2c\r\n\r\n{"total_rows":20,"offset":0,"rows":[\r\n\r\n]}\r\n', 'descending');
    raw = await rawPost(C, '{"queries":[{"group":true,"limit":1},{"startkey":[1],"endkey":[0]}]}');
    assert.equal(bodyOf(raw), 'c\r\n{"results":[\r\n28\r\n\r\n{"rows":[\r\n{"key":[0,0],"value":3}\r\n]}\r\n', 'reduce');
    raw = await rawPost('/pq/_partition/d/_design/p/_view/v/queries', '{"queries":[{"limit":1},{"startkey":2,"endkey":0}]}');
    assert.equal(bodyOf(raw), 'c\r\n{"results":[\r\n4a\r\n\r\n{"total_rows":10,"offset":5,"rows":[\r\n{"id":"d:0","key":0,"value":0}\r\n]}\r\n', 'partition');
    // A second failing query after a first one: the 400 (and what came
    // between), then the connection closes.
    raw = await rawPost(V, '{"queries":[{"startkey":5,"endkey":1},{"limit":1},{"startkey":5,"endkey":1}]}');
    assert.equal(bodyOf(raw), `{"error":"query_parse_error","reason":"${BAD_RANGE}"}\n`
      + '4a\r\n\r\n{"total_rows":20,"offset":0,"rows":[\r\n{"id":"d00","key":0,"value":0}\r\n]}\r\n');
    raw = await rawPost(V, '{"queries":[{"startkey":5,"endkey":1},{"startkey":5,"endkey":1}]}');
    assert.equal(bodyOf(raw), `{"error":"query_parse_error","reason":"${BAD_RANGE}"}\n`);
    const cut = await post(V, { queries: [{ limit: 2 }, { startkey: 5, endkey: 1 }] }).then((r) => (r.complete ? 'complete' : 'incomplete'), (e) => e.code || e.message);
    assert.notEqual(cut, 'complete', 'an HTTP client sees an incomplete response');
  });

  it('buffer_response=true: a whole 200 written after the error of a later query', async () => {
    // Checked on CouchDB 3.4.3 (chttpd buffers the chunks and starts the
    // response at the end; the error response had gone out before).
    const ok = await chunksOf(V + '?buffer_response=true', { queries: [{ limit: 1 }] });
    assert.deepEqual(ok, ['{"results":[', mapResult('\r\n', 20, 0, vrows(['d00', 0])), '\r\n]}', '\n']);
    const raw = await rawPost(V + '?buffer_response=true', '{"queries":[{"limit":1},{"startkey":5,"endkey":1},{"limit":1}]}', 'Connection: close\r\n');
    const text = raw.toString();
    assert.match(text, /^HTTP\/1\.1 400 Bad Request\r\n/);
    const after = bodyOf(raw).slice(`{"error":"query_parse_error","reason":"${BAD_RANGE}"}\n`.length);
    assert.match(after, /^HTTP\/1\.1 200 OK\r\n/);
    assert.deepEqual(parseChunked(Buffer.from(after, 'utf8')).chunks, [
      '{"results":[', mapResult('\r\n', 20, 0, vrows(['d00', 0])), mapResult(',\r\n', 20, 0, vrows(['d00', 0])), '\r\n]}', '\n',
    ]);
  });

  it('needs the admin\'s credentials, as the double\'s other database requests', async () => {
    // Checked on CouchDB 3.4.3.
    for (const p of [V, A, '/pq/_partition/d/_all_docs/queries']) {
      const anon = await request(B, 'POST', p, { body: { queries: [{}] } });
      assert.deepEqual([anon.status, json(anon)], [401, { error: 'unauthorized', reason: 'You are not authorized to access this db.' }]);
      const wrong = await request(B, 'POST', p, { body: 'x', headers: { authorization: 'Basic ' + Buffer.from('admin:nope').toString('base64') } });
      assert.deepEqual([wrong.status, json(wrong).reason], [401, 'Name or password is incorrect.']);
    }
  });

  it('logs one entry per POST with the body\'s queries', async () => {
    await request(B, 'DELETE', '/_double/log');
    const queries = [{ startkey: [0, 2], limit: 3, include_docs: false }, { limit: 0, descending: true }, { keys: [[1, 1]], group: true, reduce: true }];
    assert.equal((await post(C + '?reduce=false', { queries })).status, 200);
    assert.equal((await post('/pq/_partition/d/_all_docs/queries', { queries: [{ limit: 1 }] })).status, 200);
    await post(V, '{"queries":');
    await post(V, { keys: [1] });
    await get(B, '/mq/_design/d/_view/v?limit=1', { headers: { authorization: AUTH } });
    const log = json(await get(B, '/_double/log'));
    assert.equal(log.length, 5, 'one entry per request');
    assert.deepEqual([log[0].method, log[0].path, log[0].query, log[0].queries], ['POST', C, [['reduce', 'false']], queries]);
    assert.deepEqual([log[1].path, log[1].queries], ['/pq/_partition/d/_all_docs/queries', [{ limit: 1 }]]);
    assert.deepEqual([log[2].queries, log[3].queries], [null, null], 'null when the body has no queries array');
    assert.equal('queries' in log[4], false, 'no queries member on other requests');
    assert.equal(log[4].method, 'GET');
  });

  describe('fault switches', () => {
    const fault = async (f) => {
      const r = await request(B, 'POST', '/_double/faults', { body: f });
      assert.equal(r.status, 200, r.text);
    };
    const Q = { queries: [{ limit: 2 }, { startkey: 3, limit: 1 }] };
    after(async () => { await fault({ mode: 'none' }); });

    it('status, reset, garbage and path filters apply to the POST', async () => {
      await fault({ mode: 'status', status: 503, path: '/queries', count: 1 });
      assert.equal((await get(B, '/mq/_design/d/_view/v?limit=1', { headers: { authorization: AUTH } })).status, 200, 'path filter');
      const r = await post(V, Q);
      assert.deepEqual([r.status, json(r).error], [503, 'service unavailable']);
      assert.equal((await post(V, Q)).status, 200, 'count');
      await fault({ mode: 'reset', path: '/_all_docs/queries', count: 1 });
      assert.equal((await post(V, Q)).status, 200);
      await assert.rejects(post(A, Q), (e) => ['ECONNRESET', 'EPIPE'].includes(e.code) || /socket hang up/.test(e.message));
      await fault({ mode: 'garbage', count: 1 });
      const g = await post(A, Q);
      assert.equal(g.status, 200);
      assert.throws(() => JSON.parse(g.text));
      await request(B, 'DELETE', '/_double/log');
      await fault({ mode: 'status', status: 500, count: 1 });
      await post(V, Q);
      const log = json(await get(B, '/_double/log'));
      assert.deepEqual([log[0].fault, log[0].queries], ['status', Q.queries]);
    });

    it('truncate, stall and slow apply to the whole multi-query response', async () => {
      await fault({ mode: 'truncate', bytes: 30, count: 1 });
      const cut = await rawPost(V, JSON.stringify(Q));
      assert.equal(bodyOf(cut), '1e\r\n{"results":[\r\n{"total_rows":20\r\n', 'its first 30 bytes as one chunk, then the connection ends');
      await fault({ mode: 'stall', ms: 50, count: 1 });
      const whole = { results: [{ total_rows: 20, offset: 0, rows: [{ id: 'd00', key: 0, value: 0 }, { id: 'd07', key: 0, value: 7 }] }, { total_rows: 20, offset: 9, rows: [{ id: 'd03', key: 3, value: 3 }] }] };
      assert.deepEqual(json(await post(V, Q)), whole);
      await fault({ mode: 'slow', ms: 50, count: 1 });
      await request(B, 'DELETE', '/_double/log');
      assert.deepEqual(json(await post(V, Q)), whole);
      assert.equal(json(await get(B, '/_double/log'))[0].fault, 'slow');
    });

    it('ignore_limit: every query of a multi-query POST without its limit', async () => {
      await fault({ mode: 'ignore_limit', count: 1 });
      const j = json(await post(V, { queries: [{ limit: 1 }, { limit: 0, skip: 3 }] }));
      assert.deepEqual(j.results.map((x) => x.rows.length), [20, 17]);
      assert.deepEqual(json(await post(V, { queries: [{ limit: 1 }] })).results[0].rows.length, 1);
    });

    it('huge: a valid multi-query body of at least N bytes, one result per query', async () => {
      await fault({ mode: 'huge', bytes: 200000, count: 1 });
      const r = await post(V, { queries: [{}, {}, {}] });
      assert.ok(Buffer.byteLength(r.text) >= 200000);
      const j = json(r);
      assert.equal(j.results.length, 3);
      assert.equal(j.results[0].rows.length, j.results[0].total_rows);
      assert.deepEqual(j.results[2], { total_rows: j.results[0].total_rows, offset: 0, rows: [] });
      assert.match(r.text, /^\{"results":\[\r\n\{"total_rows":\d+,"offset":0,"rows":\[\r\n/);
    });
  });
});

describe('command line and options', () => {
  it('loads a --fixtures-js generator', async () => {
    const srv = await startDouble(['--fixtures-js', path.join(__dirname, 'fixtures', 'generated.js')]);
    try {
      const r = await get(srv.url, '/gen/_design/g/_view/by_group?reduce=false&startkey=3&startkey_docid=doc000010&limit=2');
      assert.deepEqual(json(r), {
        total_rows: 2000,
        offset: 3 * 286 + 1,
        rows: [{ id: 'doc000010', key: 3, value: 10 }, { id: 'doc000017', key: 3, value: 17 }],
      });
      const s = await get(srv.url, '/gen/_design/g/_view/by_group?group=true&limit=1');
      assert.equal(rowLines(s)[0], `{"key":0,"value":${Array.from({ length: 286 }, (_, i) => i * 7).reduce((x, y) => x + y, 0)}}`);
      const raw = await get(srv.url, '/gen/raw-doc');
      assert.match(raw.text, /"n":12345678901234567890,"f":1.0/);
    } finally { await srv.stop(); }
  });

  it('requires Basic auth for databases with --admin', async () => {
    const srv = await startDouble(['--fixtures', path.join(__dirname, 'fixtures', 'bands.json'), '--admin', 'adm:s3cret']);
    try {
      const V = '/artists/_design/artists/_view/by-name?limit=1';
      const anon = await get(srv.url, V);
      assert.deepEqual([anon.status, json(anon)], [401, { error: 'unauthorized', reason: 'You are not authorized to access this db.' }]);
      const wrong = await get(srv.url, V, { headers: { authorization: 'Basic ' + Buffer.from('adm:nope').toString('base64') } });
      assert.deepEqual([wrong.status, json(wrong).reason], [401, 'Name or password is incorrect.']);
      const ok = await get(srv.url, V, { headers: { authorization: 'Basic ' + Buffer.from('adm:s3cret').toString('base64') } });
      assert.equal(ok.status, 200);
      assert.equal((await get(srv.url, '/')).status, 200, 'the welcome page is public');
      const create = await request(srv.url, 'PUT', '/newdb');
      assert.deepEqual([create.status, json(create).reason], [401, 'You are not a server admin.']);
      assert.equal((await get(srv.url, '/missing')).status, 404);
    } finally { await srv.stop(); }
  });

  it('refuses bad arguments', async () => {
    await assert.rejects(startDouble(['--bogus']), /exited with 2/);
  });
});
