#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
/*
 * couchdb-double.js -- a TEST DOUBLE of Apache CouchDB 3.4 (NOT CouchDB).
 *
 * It serves CouchDB 3.x view, _all_docs and partition semantics over fixture
 * documents so that mod_couchpage's tests can check pagination against the
 * exact behaviour of CouchDB where real CouchDB cannot be installed. Every
 * rule below was read from CouchDB 3.4.3's source (apache/couchdb tag 3.4.3)
 * and jiffy 1.1.2; the file names are cited where a rule is implemented.
 * Known differences from CouchDB are listed in t/double/README.md.
 *
 * Usage:
 *   node t/double/couchdb-double.js --port PORT [--host 127.0.0.1]
 *        [--fixtures FILE.json | --fixtures-js FILE.js] [--admin USER:PASS]
 *        [--q N] [--idle-timeout MS] [--verbose]
 * Prints one line "listening http://HOST:PORT" on stdout when ready.
 *
 * Only node's standard library is used.
 */
'use strict';

const http = require('node:http');
const fs = require('node:fs');
const path = require('node:path');
const vm = require('node:vm');
const crypto = require('node:crypto');

const DOUBLE_VERSION = '3.4.3';
const SERVER_HEADER = `CouchDB/${DOUBLE_VERSION} (mod_couchpage test double; not CouchDB)`;
const MAX_REQUEST_LINE = 8192;
const MOCHIWEB_SERVER_HEADER = 'MochiWeb/1.0 (Any of you quaids got a smint?)';
const MAX_VIEW_LIMIT = 0x10000000; // couch_mrview.hrl ?MAX_VIEW_LIMIT
const CHUNK_THRESHOLD = 1490; // chttpd:chunked_response_buffer_size() default

/* ------------------------------------------------------------------------ *
 * 1. EJSON: the Erlang term model CouchDB uses for JSON.
 *    null/true/false -> JS null/true/false; integers -> BigInt (exact, like
 *    Erlang bignums); floats -> JS number; strings -> JS string; arrays ->
 *    JS Array; objects -> Obj (ordered list of [key, value] pairs).
 * ------------------------------------------------------------------------ */

class Obj {
  constructor(pairs) { this.pairs = pairs || []; }
  get(k) {
    for (const [pk, pv] of this.pairs) if (pk === k) return pv;
    return undefined;
  }
  has(k) { return this.pairs.some(([pk]) => pk === k); }
}

// The {<<255,255,255,255>>} sentinel (couch_mrview_util ?HIGHEST_KEY): sorts
// above every JSON value under ICU collation.
const HIGH = Symbol('HIGHEST_KEY');

class JsonError extends Error {}

const utf8Fatal = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

// jiffy 1.1.2 c_src/decoder.c semantics: whitespace is " \t\n\r"; any value
// at top level; trailing data is an error; strings must be valid UTF-8 with
// no raw control characters; \u escapes must not leave lone surrogates;
// "-0", "01", "1.", ".5" follow jiffy's number state machine; integers are
// exact; numbers with a fraction or exponent are doubles; objects keep the
// LAST value of a duplicated key, at the position of its last occurrence
// (couch_util:json_decode uses the dedupe_keys option).
function decodeJson(input) {
  const buf = Buffer.isBuffer(input) ? input : Buffer.from(String(input), 'utf8');
  const n = buf.length;
  let i = 0;
  const fail = (what) => { throw new JsonError(what || 'invalid_json'); };
  const ws = () => {
    while (i < n) {
      const c = buf[i];
      if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) i++; else break;
    }
  };
  const hex4 = (p) => {
    if (p + 4 > n) return -1;
    let v = 0;
    for (let k = 0; k < 4; k++) {
      const c = buf[p + k];
      let d;
      if (c >= 0x30 && c <= 0x39) d = c - 0x30;
      else if (c >= 0x41 && c <= 0x46) d = c - 0x37;
      else if (c >= 0x61 && c <= 0x66) d = c - 0x57;
      else return -1;
      v = v * 16 + d;
    }
    return v;
  };
  function str() {
    i++; // opening quote
    const start = i;
    let esc = false;
    while (i < n) {
      const c = buf[i];
      if (c < 0x20) fail('invalid_string');
      if (c === 0x22) break;
      if (c === 0x5c) { esc = true; i += 2; continue; }
      i++;
    }
    if (i >= n) fail('invalid_string');
    const end = i;
    i++; // closing quote
    if (!esc) {
      try { return utf8Fatal.decode(buf.subarray(start, end)); } catch (e) { fail('invalid_string'); }
    }
    let out = '';
    let j = start;
    let run = start;
    const flush = (to) => {
      if (to > run) {
        try { out += utf8Fatal.decode(buf.subarray(run, to)); } catch (e) { fail('invalid_string'); }
      }
    };
    while (j < end) {
      if (buf[j] !== 0x5c) { j++; continue; }
      flush(j);
      const e = buf[j + 1];
      j += 2;
      switch (e) {
        case 0x22: out += '"'; break;
        case 0x5c: out += '\\'; break;
        case 0x2f: out += '/'; break;
        case 0x62: out += '\b'; break;
        case 0x66: out += '\f'; break;
        case 0x6e: out += '\n'; break;
        case 0x72: out += '\r'; break;
        case 0x74: out += '\t'; break;
        case 0x75: {
          const hi = hex4(j);
          if (hi < 0) fail('invalid_string');
          j += 4;
          if (hi >= 0xd800 && hi < 0xdc00) {
            if (buf[j] !== 0x5c || buf[j + 1] !== 0x75) fail('invalid_string');
            const lo = hex4(j + 2);
            if (lo < 0xdc00 || lo > 0xdfff) fail('invalid_string');
            j += 6;
            out += String.fromCharCode(hi, lo);
          } else if (hi >= 0xdc00 && hi <= 0xdfff) {
            fail('invalid_string');
          } else {
            out += String.fromCharCode(hi);
          }
          break;
        }
        default: fail('invalid_string');
      }
      run = j;
    }
    flush(end);
    return out;
  }
  function num() {
    const st = i;
    let frac = false;
    let exp = false;
    if (buf[i] === 0x2d) i++;
    if (buf[i] === 0x30) {
      i++;
    } else if (buf[i] >= 0x31 && buf[i] <= 0x39) {
      while (i < n && buf[i] >= 0x30 && buf[i] <= 0x39) i++;
    } else {
      fail('invalid_number');
    }
    if (buf[i] === 0x2e) {
      i++;
      frac = true;
      if (!(buf[i] >= 0x30 && buf[i] <= 0x39)) fail('invalid_number');
      while (i < n && buf[i] >= 0x30 && buf[i] <= 0x39) i++;
    }
    if (buf[i] === 0x65 || buf[i] === 0x45) {
      i++;
      exp = true;
      if (buf[i] === 0x2b || buf[i] === 0x2d) i++;
      if (!(buf[i] >= 0x30 && buf[i] <= 0x39)) fail('invalid_number');
      while (i < n && buf[i] >= 0x30 && buf[i] <= 0x39) i++;
    }
    const text = buf.toString('latin1', st, i);
    if (frac || exp) {
      const v = Number(text);
      if (!Number.isFinite(v)) fail('invalid_number'); // jiffy: {range, ...} error
      return v;
    }
    return BigInt(text);
  }
  function lit(word, val) {
    for (let k = 0; k < word.length; k++) {
      if (buf[i + k] !== word.charCodeAt(k)) fail('invalid_literal');
    }
    i += word.length;
    return val;
  }
  function value(depth) {
    if (depth > 3000) fail('too_deep');
    ws();
    if (i >= n) fail('truncated_json');
    const c = buf[i];
    if (c === 0x22) return str();
    if (c === 0x7b) {
      i++;
      const pairs = [];
      ws();
      if (buf[i] === 0x7d) { i++; return new Obj(pairs); }
      for (;;) {
        ws();
        if (buf[i] !== 0x22) fail('invalid_json');
        const k = str();
        ws();
        if (buf[i] !== 0x3a) fail('invalid_json');
        i++;
        const v = value(depth + 1);
        pairs.push([k, v]);
        ws();
        if (buf[i] === 0x2c) { i++; continue; }
        if (buf[i] === 0x7d) { i++; break; }
        fail('invalid_json');
      }
      return new Obj(dedupeLastWins(pairs));
    }
    if (c === 0x5b) {
      i++;
      const arr = [];
      ws();
      if (buf[i] === 0x5d) { i++; return arr; }
      for (;;) {
        arr.push(value(depth + 1));
        ws();
        if (buf[i] === 0x2c) { i++; continue; }
        if (buf[i] === 0x5d) { i++; break; }
        fail('invalid_json');
      }
      return arr;
    }
    if (c === 0x74) return lit('true', true);
    if (c === 0x66) return lit('false', false);
    if (c === 0x6e) return lit('null', null);
    if (c === 0x2d || (c >= 0x30 && c <= 0x39)) return num();
    fail('invalid_json');
    return undefined;
  }
  ws();
  if (i >= n) fail('invalid_json');
  const v = value(0);
  ws();
  if (i < n) fail('invalid_trailing_data');
  return v;
}

function dedupeLastWins(pairs) {
  if (pairs.length < 2) return pairs;
  const seen = new Set();
  const out = [];
  for (let k = pairs.length - 1; k >= 0; k--) {
    if (!seen.has(pairs[k][0])) { seen.add(pairs[k][0]); out.push(pairs[k]); }
  }
  return out.reverse();
}

// jiffy 1.1.2 c_src/doubles.cc: double-conversion ToShortest with
// UNIQUE_ZERO | EMIT_POSITIVE_EXPONENT_SIGN | EMIT_TRAILING_DECIMAL_POINT |
// EMIT_TRAILING_ZERO_AFTER_POINT, decimal_in_shortest_low -6, high 21. The
// shortest digits and the fixed/exponential switch points are those of
// ECMAScript Number::toString, so only ".0" (and -0.0 -> "0.0") differ.
function encodeDouble(x) {
  if (!Number.isFinite(x)) throw new Error('non-finite float cannot be encoded');
  if (x === 0) return '0.0';
  const s = String(x);
  if (s.indexOf('e') >= 0 || s.indexOf('.') >= 0) return s;
  return s + '.0';
}

// jiffy 1.1.2 c_src/encoder.c enc_string: escapes \" \\ \b \f \n \r \t, other
// control characters as \u00XX with upper-case hex; everything else,
// including "/", DEL, U+2028 and non-ASCII, is written raw as UTF-8.
const ESC_RE = /["\\\u0000-\u001f]/g;
function escChar(c) {
  switch (c) {
    case '"': return '\\"';
    case '\\': return '\\\\';
    case '\b': return '\\b';
    case '\f': return '\\f';
    case '\n': return '\\n';
    case '\r': return '\\r';
    case '\t': return '\\t';
    default: return '\\u' + c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0');
  }
}
function encodeString(s) {
  return '"' + s.replace(ESC_RE, escChar) + '"';
}

// Encode EJSON (or a plain JS object/array for our own responses; JS numbers
// are always floats here, use BigInt for integers).
function encodeJson(v) {
  if (v === null || v === undefined) return 'null';
  switch (typeof v) {
    case 'boolean': return v ? 'true' : 'false';
    case 'bigint': return v.toString();
    case 'number': return encodeDouble(v);
    case 'string': return encodeString(v);
    default: break;
  }
  if (Array.isArray(v)) {
    let s = '[';
    for (let k = 0; k < v.length; k++) s += (k ? ',' : '') + encodeJson(v[k]);
    return s + ']';
  }
  if (v instanceof Obj) {
    let s = '{';
    for (let k = 0; k < v.pairs.length; k++) {
      s += (k ? ',' : '') + encodeString(v.pairs[k][0]) + ':' + encodeJson(v.pairs[k][1]);
    }
    return s + '}';
  }
  if (v === HIGH) throw new Error('sentinel cannot be encoded');
  let s = '{';
  let first = true;
  for (const k of Object.keys(v)) {
    if (v[k] === undefined) continue;
    s += (first ? '' : ',') + encodeString(k) + ':' + encodeJson(v[k]);
    first = false;
  }
  return s + '}';
}

/* ------------------------------------------------------------------------ *
 * 2. Comparisons.
 * ------------------------------------------------------------------------ */

function cmpNum(a, b) {
  const ta = typeof a;
  const tb = typeof b;
  if (ta === 'bigint' && tb === 'bigint') return a < b ? -1 : a > b ? 1 : 0;
  if (ta === 'number' && tb === 'number') return a < b ? -1 : a > b ? 1 : 0;
  // Exact comparison between an integer and a float, as Erlang does.
  if (ta === 'bigint') { const r = cmpNum(b, a); return r === 0 ? 0 : -r; }
  // a float, b bigint
  if (Number.isInteger(a)) {
    const ai = BigInt(a);
    return ai < b ? -1 : ai > b ? 1 : 0;
  }
  const fl = BigInt(Math.floor(a));
  return fl < b ? -1 : 1; // a is not integral: a < b iff floor(a) < b
}

// ICU root collation. CouchDB's NIF opens ucol_open("") with default
// attributes (tertiary strength, no identical level) and compares with
// ucol_strcollIter (src/couch/priv/couch_ejson_compare/couch_ejson_compare.c).
// Strings that ICU calls equal ARE equal keys: there is no code point
// fallback; such rows are ordered by docid. Node's Intl.Collator for "en"
// (no tailoring, i.e. root) with variant sensitivity is the same collator.
const icuCollator = new Intl.Collator('en', {
  usage: 'sort', sensitivity: 'variant', ignorePunctuation: false, numeric: false, caseFirst: 'false',
});

function sign(x) { return x < 0 ? -1 : x > 0 ? 1 : 0; }

function typeRankIcu(v) {
  if (v === null) return 1;
  if (v === false) return 2;
  if (v === true) return 3;
  const t = typeof v;
  if (t === 'bigint' || t === 'number') return 4;
  if (t === 'string') return 5;
  if (Array.isArray(v)) return 6;
  if (v === HIGH) return 8;
  return 7;
}

// A collation context: ICU comparator with an optional rank cache (strings of
// an index pre-sorted once with the collator; consistent with it).
class IcuCollation {
  constructor(rank) { this.rank = rank || null; }
  str(a, b) {
    if (a === b) return 0;
    if (this.rank) {
      const ra = this.rank.get(a);
      if (ra !== undefined) {
        const rb = this.rank.get(b);
        if (rb !== undefined) return ra < rb ? -1 : ra > rb ? 1 : 0;
      }
    }
    return sign(icuCollator.compare(a, b));
  }
  // couch_ejson_compare:less/2 (NIF less_json): null < false < true <
  // numbers < strings < arrays < objects; arrays element-wise then by
  // length; objects pair by pair (key by ICU, then value) then by size.
  cmp(a, b) {
    const ra = typeRankIcu(a);
    const rb = typeRankIcu(b);
    if (ra !== rb) return ra < rb ? -1 : 1;
    switch (ra) {
      case 4: return cmpNum(a, b);
      case 5: return this.str(a, b);
      case 6: {
        const m = Math.min(a.length, b.length);
        for (let k = 0; k < m; k++) {
          const c = this.cmp(a[k], b[k]);
          if (c) return c;
        }
        return a.length < b.length ? -1 : a.length > b.length ? 1 : 0;
      }
      case 7: {
        const pa = a.pairs;
        const pb = b.pairs;
        const m = Math.min(pa.length, pb.length);
        for (let k = 0; k < m; k++) {
          let c = this.str(pa[k][0], pb[k][0]);
          if (c) return c;
          c = this.cmp(pa[k][1], pb[k][1]);
          if (c) return c;
        }
        return pa.length < pb.length ? -1 : pa.length > pb.length ? 1 : 0;
      }
      default: return 0;
    }
  }
  part(a, b) { return this.str(a, b); }
}

// Erlang term order on decoded JSON (used for the "raw" view collation, for
// _all_docs ids against JSON bounds, and to order duplicate emits):
// number < atom (false < null < true) < tuple (object, and the HIGH
// sentinel) < list (array; [] first) < binary (string, bytewise).
function typeRankRaw(v) {
  const t = typeof v;
  if (t === 'bigint' || t === 'number') return 1;
  if (v === false) return 2;
  if (v === null) return 3;
  if (v === true) return 4;
  if (v instanceof Obj || v === HIGH) return 5;
  if (Array.isArray(v)) return 6;
  return 7; // string
}
function cmpBytesStr(a, b) {
  if (a === b) return 0;
  return sign(Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8')));
}
function rawCmp(a, b) {
  const ra = typeRankRaw(a);
  const rb = typeRankRaw(b);
  if (ra !== rb) return ra < rb ? -1 : 1;
  switch (ra) {
    case 1: return cmpNum(a, b);
    case 5: {
      // {Props} vs {<<255,255,255,255>>}: same tuple size, compare the
      // element: a list (Props) sorts before a binary.
      if (a === HIGH || b === HIGH) return a === b ? 0 : a === HIGH ? 1 : -1;
      const pa = a.pairs;
      const pb = b.pairs;
      const m = Math.min(pa.length, pb.length);
      for (let k = 0; k < m; k++) {
        let c = cmpBytesStr(pa[k][0], pb[k][0]);
        if (c) return c;
        c = rawCmp(pa[k][1], pb[k][1]);
        if (c) return c;
      }
      return pa.length < pb.length ? -1 : pa.length > pb.length ? 1 : 0;
    }
    case 6: {
      const m = Math.min(a.length, b.length);
      for (let k = 0; k < m; k++) {
        const c = rawCmp(a[k], b[k]);
        if (c) return c;
      }
      return a.length < b.length ? -1 : a.length > b.length ? 1 : 0;
    }
    case 7: return cmpBytesStr(a, b);
    default: return 0;
  }
}
class RawCollation {
  cmp(a, b) { return rawCmp(a, b); }
  part(a, b) { return cmpBytesStr(a, b); }
}

// Erlang exact equality (=:=) on EJSON.
function termEq(a, b) {
  if (a === b) return true;
  const ta = typeof a;
  if (ta !== typeof b) return false;
  if (ta === 'number') return a === b;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let k = 0; k < a.length; k++) if (!termEq(a[k], b[k])) return false;
    return true;
  }
  if (a instanceof Obj && b instanceof Obj) {
    if (a.pairs.length !== b.pairs.length) return false;
    for (let k = 0; k < a.pairs.length; k++) {
      if (a.pairs[k][0] !== b.pairs[k][0] || !termEq(a.pairs[k][1], b.pairs[k][1])) return false;
    }
    return true;
  }
  return false;
}

function collectStrings(v, set) {
  if (typeof v === 'string') { set.add(v); return; }
  if (Array.isArray(v)) { for (const x of v) collectStrings(x, set); return; }
  if (v instanceof Obj) for (const [k, x] of v.pairs) { set.add(k); collectStrings(x, set); }
}

function buildRank(strings) {
  const arr = Array.from(strings);
  arr.sort((a, b) => icuCollator.compare(a, b));
  const rank = new Map();
  let r = 0;
  for (let k = 0; k < arr.length; k++) {
    if (k > 0 && icuCollator.compare(arr[k - 1], arr[k]) !== 0) r++;
    rank.set(arr[k], r);
  }
  return rank;
}

/* ------------------------------------------------------------------------ *
 * 3. Sharding (mem3): crc32 of the docid, or of the partition in a
 *    partitioned database; q ranges of 2^32 div q, the last one to the top.
 * ------------------------------------------------------------------------ */

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let k = 0; k < 256; k++) {
    let c = k;
    for (let j = 0; j < 8; j++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[k] = c >>> 0;
  }
  return t;
})();
function crc32(buf) {
  let c = 0xffffffff;
  for (let k = 0; k < buf.length; k++) c = CRC_TABLE[(c ^ buf[k]) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}
function shardOf(db, id) {
  let key = id;
  if (db.partitioned && !id.startsWith('_')) {
    const p = id.indexOf(':');
    key = p >= 0 ? id.slice(0, p) : id;
  }
  return shardOfHashKey(db.q, key);
}
function shardOfHashKey(q, key) {
  const h = crc32(Buffer.from(key, 'utf8'));
  const inc = Math.floor(4294967296 / q);
  return Math.min(Math.floor(h / inc), q - 1);
}

/* ------------------------------------------------------------------------ *
 * 4. Errors with CouchDB's status codes and bodies (chttpd:error_info/1).
 * ------------------------------------------------------------------------ */

class HttpError extends Error {
  constructor(status, error, reason, headers) {
    super(`${status} ${error}: ${reason}`);
    this.status = status;
    this.error = error;
    this.reason = reason;
    this.headers = headers || {};
  }
}
const qpe = (reason) => new HttpError(400, 'query_parse_error', reason);
const badRequest = (reason) => new HttpError(400, 'bad_request', reason);
const invalidJson = () => badRequest('invalid UTF-8 JSON');
const notFound = (reason) => new HttpError(404, 'not_found', reason);

function parseJsonOr400(buf) {
  try { return decodeJson(buf); } catch (e) {
    if (e instanceof JsonError) throw invalidJson();
    throw e;
  }
}

/* ------------------------------------------------------------------------ *
 * 5. Databases and documents.
 * ------------------------------------------------------------------------ */

const SPECIAL_IGNORED = new Set(['_revs_info', '_local_seq', '_conflicts', '_deleted_conflicts', '_revisions']);
const DB_NAME_RE = /^[a-z][a-z0-9_$()+/-]*$/;

class Db {
  constructor(name, opts) {
    this.name = name;
    this.partitioned = !!(opts && opts.partitioned);
    this.q = (opts && opts.q) || 2;
    this.docs = new Map();
    this.seq = 0;
    this.indexCache = new Map();
    this.viewSeqs = new Map();
    this.allDocsCache = null;
    this.created = Date.now();
  }
  liveDocs() {
    const out = [];
    for (const d of this.docs.values()) if (!d.deleted) out.push(d);
    return out;
  }
}

function md5hex(s) { return crypto.createHash('md5').update(s).digest('hex'); }

function validateDocId(db, id) {
  if (typeof id !== 'string') throw new HttpError(400, 'illegal_docid', 'Document id must be a string');
  if (id === '') throw new HttpError(400, 'illegal_docid', 'Document id must not be empty');
  if (id === '_design/') throw new HttpError(400, 'illegal_docid', 'Illegal document id `_design/`');
  if (id === '_local/') throw new HttpError(400, 'illegal_docid', 'Illegal document id `_local/`');
  if (id.startsWith('_local/')) throw new HttpError(400, 'illegal_docid', 'the test double does not store _local documents');
  if (id.startsWith('_') && !id.startsWith('_design/')) {
    throw new HttpError(400, 'illegal_docid', 'Only reserved document ids may start with underscore.');
  }
  if (db.partitioned && !id.startsWith('_design/')) {
    const p = id.indexOf(':');
    if (p < 0) throw new HttpError(400, 'illegal_docid', 'Doc id must be of form partition:id');
    validatePartition(id.slice(0, p));
    const rest = id.slice(p + 1);
    if (rest === '') throw new HttpError(400, 'illegal_docid', 'Document id must not be empty');
    if (rest.startsWith('_')) throw new HttpError(400, 'illegal_docid', 'Only reserved document ids may start with underscore.');
  }
}

function validatePartition(p) {
  if (p === '' || p === undefined) throw new HttpError(400, 'illegal_partition', 'Partition must not be empty');
  if (p.startsWith('_')) throw new HttpError(400, 'illegal_partition', 'Partition must not start with an underscore');
  if (p.indexOf(':') >= 0) throw new HttpError(400, 'illegal_partition', 'Partition must not contain a colon');
}

function docToJson(doc) {
  const pairs = [['_id', doc.id], ['_rev', doc.rev]];
  for (const p of doc.body.pairs) pairs.push(p);
  if (doc.deleted) pairs.push(['_deleted', true]);
  return new Obj(pairs);
}

// Store one document update (PUT/POST/_bulk_docs/fixtures).
// opts.newEdits === false: take the given _rev as is (like new_edits=false).
function updateDoc(db, id, bodyObj, opts) {
  opts = opts || {};
  if (!(bodyObj instanceof Obj)) throw badRequest('Document must be a JSON object');
  let rev;
  let deleted = false;
  const pairs = [];
  for (const [k, v] of bodyObj.pairs) {
    if (k === '_id') continue;
    if (k === '_rev') { rev = v; continue; }
    if (k === '_deleted') { deleted = v === true; continue; }
    if (k === '_attachments') { pairs.push([k, v]); continue; }
    if (SPECIAL_IGNORED.has(k)) continue;
    if (k.startsWith('_')) throw new HttpError(400, 'doc_validation', `Bad special document member: ${k}`);
    pairs.push([k, v]);
  }
  if (opts.rev !== undefined && rev === undefined) rev = opts.rev;
  if (opts.rev !== undefined && rev !== undefined && opts.rev !== rev) {
    throw badRequest('Document rev from request body and query string have different values');
  }
  validateDocId(db, id);
  const body = new Obj(pairs);
  if (id.startsWith('_design/')) validateDesignDoc(db, id, body);
  const old = db.docs.get(id);
  let newRev;
  if (opts.newEdits === false) {
    if (typeof rev !== 'string' || !/^\d+-/.test(rev)) throw badRequest('Invalid rev format');
    newRev = rev;
  } else {
    if (old && !old.deleted) {
      if (rev !== old.rev) throw new HttpError(409, 'conflict', 'Document update conflict.');
    } else if (old && old.deleted) {
      if (rev !== undefined && rev !== old.rev) throw new HttpError(409, 'conflict', 'Document update conflict.');
    } else if (rev !== undefined) {
      throw new HttpError(409, 'conflict', 'Document update conflict.');
    }
    const prevN = old ? parseInt(old.rev, 10) : 0;
    newRev = `${prevN + 1}-${md5hex(JSON.stringify([deleted, old ? old.rev : null, encodeJson(body)]))}`;
  }
  db.seq++;
  const doc = { id, rev: newRev, deleted, body, seq: db.seq, idBuf: Buffer.from(id, 'utf8'), shard: shardOf(db, id) };
  db.docs.set(id, doc);
  db.indexCache.clear();
  db.allDocsCache = null;
  return doc;
}

const BUILTIN_REDUCERS = ['_sum', '_count', '_stats', '_approx_count_distinct'];

function validateDesignDoc(db, id, body) {
  const views = body.get('views');
  if (views === undefined) return;
  if (!(views instanceof Obj)) throw new HttpError(400, 'invalid_design_doc', '`views` is not an object');
  const options = body.get('options');
  const partOpt = options instanceof Obj ? options.get('partitioned') : undefined;
  if (partOpt === true && !db.partitioned) {
    throw new HttpError(400, 'invalid_design_doc', 'partitioned option cannot be true in a non-partitioned database.');
  }
  for (const [name, v] of views.pairs) {
    if (name === 'lib') continue;
    if (!(v instanceof Obj)) throw new HttpError(400, 'invalid_design_doc', `View ${name} must be an object`);
    const map = v.get('map');
    if (typeof map !== 'string') throw new HttpError(400, 'invalid_design_doc', `View ${name} must have a map function`);
    try { new vm.Script('(' + map + ')'); } catch (e) {
      throw new HttpError(400, 'compilation_error', `Compilation of the map function in the '${name}' view failed: ${e.message}`);
    }
    const red = v.get('reduce');
    if (red === undefined || red === null) continue;
    if (typeof red !== 'string') throw new HttpError(400, 'invalid_design_doc', `\`reduce\` of view ${name} must be a string`);
    if (red.startsWith('_')) {
      if (!BUILTIN_REDUCERS.some((b) => red.startsWith(b))) {
        throw new HttpError(400, 'invalid_design_doc', `\`${red}\` is not a supported reduce function.`);
      }
    } else {
      try { new vm.Script('(' + red + ')'); } catch (e) {
        throw new HttpError(400, 'compilation_error', `Compilation of the reduce function in the '${name}' view failed: ${e.message}`);
      }
    }
  }
}

/* ------------------------------------------------------------------------ *
 * 6. The JavaScript view server (couchjs) and the view indexes.
 * ------------------------------------------------------------------------ */

function sealDeep(o) {
  if (o && typeof o === 'object') {
    Object.seal(o);
    for (const k of Object.keys(o)) sealDeep(o[k]);
  }
  return o;
}

function makeSandbox(logger) {
  const state = { rows: null, raws: null };
  const ctx = vm.createContext({});
  const helpers = {
    emit(key, value) { state.rows.push([key, value]); },
    emitRaw(keyText, valueText) {
      state.raws.push([String(keyText), valueText === undefined ? 'null' : String(valueText)]);
    },
    log(msg) { logger(`[couchjs log] ${typeof msg === 'string' ? msg : JSON.stringify(msg)}`); },
    sum(values) { let rv = 0; for (const k in values) rv += values[k]; return rv; },
    isArray(o) { return Array.isArray(o); },
    toJSON(o) { return JSON.stringify(o); },
  };
  for (const [k, f] of Object.entries(helpers)) ctx[k] = f;
  // The context's own JSON (values must be parsed in the sandbox realm).
  ctx.JSON = vm.runInContext('JSON', ctx);
  return { ctx, state };
}

function compileFn(ctx, src, what) {
  try {
    const fn = vm.runInContext('(' + src + ')', ctx);
    if (typeof fn !== 'function') throw new Error('expression does not evaluate to a function');
    return fn;
  } catch (e) {
    throw new HttpError(500, 'compilation_error', `${what}: ${e.message}`);
  }
}

// The EJSON CouchDB stores for a value emitted from JavaScript: couchjs
// prints JSON.stringify of the map results and the Erlang side decodes the
// line with jiffy (so -0 -> 0, 1.0 -> 1, undefined -> null, ...).
function jsToEjson(ctx, jsValue) {
  return decodeJson(Buffer.from(viewServerJson(ctx, [jsValue === undefined ? null : jsValue]), 'utf8'))[0];
}

// couchjs's JSON.stringify of what a function gave. V8's own recursion
// overflows on sealed values (documents are sealed, as couchjs seals them)
// nested about 2,500 levels deep, where couchjs writes about 18,000 (and
// this double reads 3000): then the same text is written without recursion.
function viewServerJson(ctx, value) {
  try {
    return ctx.JSON.stringify(value);
  } catch (e) {
    if (!e || e.name !== 'RangeError') throw e;
    return stringifyWithoutRecursion(value);
  }
}

// JSON.stringify(value) (no replacer, no indent) with a stack of its own:
// toJSON is called, members that write nothing (undefined, functions,
// symbols) are left out of objects and written null in arrays, boxed
// primitives are their values.
function stringifyWithoutRecursion(root) {
  const BOXED = new Set(['[object Number]', '[object String]', '[object Boolean]', '[object BigInt]']);
  const prepared = (v, key) => (v !== null && (typeof v === 'object' || typeof v === 'bigint')
    && typeof v.toJSON === 'function' ? v.toJSON(key) : v);
  const out = [];
  const stack = [];
  // writes v, or opens it (its members come from the stack); false when
  // JSON.stringify would write nothing for it
  const open = (v) => {
    if (v === null || typeof v !== 'object' || BOXED.has(Object.prototype.toString.call(v))) {
      const text = JSON.stringify(v);
      if (text === undefined) return false;
      out.push(text);
    } else if (Array.isArray(v)) {
      out.push('[');
      stack.push({ v, i: 0, keys: null });
    } else {
      out.push('{');
      stack.push({ v, i: 0, keys: Object.keys(v), written: 0 });
    }
    return true;
  };
  if (!open(prepared(root, ''))) return undefined;
  while (stack.length) {
    const f = stack[stack.length - 1];
    if (!f.keys) {
      if (f.i >= f.v.length) { out.push(']'); stack.pop(); continue; }
      if (f.i > 0) out.push(',');
      const k = f.i++;
      if (!open(prepared(f.v[k], String(k)))) out.push('null');
    } else {
      if (f.i >= f.keys.length) { out.push('}'); stack.pop(); continue; }
      const key = f.keys[f.i++];
      const mark = out.length;
      out.push(f.written ? ',' : '', JSON.stringify(key), ':');
      if (open(prepared(f.v[key], key))) f.written++;
      else out.length = mark;
    }
  }
  return out.join('');
}

function viewsOfDdoc(ddoc) {
  const views = ddoc.body.get('views');
  const out = [];
  if (!(views instanceof Obj)) return out;
  for (const [name, v] of views.pairs) {
    if (name === 'lib' || !(v instanceof Obj)) continue;
    const red = v.get('reduce');
    const opts = v.get('options');
    out.push({
      name,
      map: v.get('map'),
      reduce: typeof red === 'string' ? red : null,
      collation: opts instanceof Obj && opts.get('collation') === 'raw' ? 'raw' : 'icu',
    });
  }
  return out;
}

function ddocOptions(db, ddoc) {
  const options = ddoc.body.get('options');
  const get = (k) => (options instanceof Obj ? options.get(k) : undefined);
  const partOpt = get('partitioned');
  return {
    partitioned: db.partitioned && (partOpt === undefined ? true : partOpt === true),
    includeDesign: get('include_design') === true,
  };
}

class ViewIndex {
  constructor(db, entries, coll, partitioned, collation) {
    this.entries = entries;
    this.coll = coll;
    this.partitioned = partitioned;
    this.collation = collation;
    this.q = db.q;
    const n = entries.length;
    this.prefix = [];
    for (let s = 0; s < db.q; s++) this.prefix.push(new Int32Array(n + 1));
    for (let k = 0; k < n; k++) {
      const e = entries[k];
      for (let s = 0; s < db.q; s++) this.prefix[s][k + 1] = this.prefix[s][k] + (e.shard === s ? e.vals.length : 0);
    }
  }
  total(s) { return this.prefix[s][this.entries.length]; }
  // Compare an entry with a bound {part, key, idBuf}: the view btree's less
  // (couch_ejson_compare:less_json_ids, or Erlang order for "raw").
  cmpEntry(e, b) {
    let c = 0;
    if (this.partitioned) {
      c = this.coll.part(e.part, b.part);
      if (c) return c;
    }
    c = this.coll.cmp(e.key, b.key);
    if (c) return c;
    return sign(Buffer.compare(e.idBuf, b.idBuf));
  }
  lowerBound(b) { // first entry >= b
    let lo = 0;
    let hi = this.entries.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.cmpEntry(this.entries[mid], b) < 0) lo = mid + 1; else hi = mid;
    }
    return lo;
  }
  upperBound(b) { // first entry > b
    let lo = 0;
    let hi = this.entries.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.cmpEntry(this.entries[mid], b) <= 0) lo = mid + 1; else hi = mid;
    }
    return lo;
  }
}

function buildDdocIndex(db, ddoc, logger) {
  const views = viewsOfDdoc(ddoc);
  const opts = ddocOptions(db, ddoc);
  const { ctx, state } = makeSandbox(logger);
  const fns = views.map((v) => compileFn(ctx, v.map, `map function of view ${v.name}`));
  const perView = views.map(() => []);
  const docs = Array.from(db.docs.values())
    .filter((d) => !d.deleted && (opts.includeDesign || !d.id.startsWith('_design/')))
    .sort((a, b) => Buffer.compare(a.idBuf, b.idBuf));
  for (const doc of docs) {
    const jsDoc = sealDeep(ctx.JSON.parse(encodeJson(docToJson(doc))));
    const part = opts.partitioned ? doc.id.slice(0, doc.id.indexOf(':')) : null;
    for (let vi = 0; vi < views.length; vi++) {
      state.rows = [];
      state.raws = [];
      let kvs;
      try {
        fns[vi].call(undefined, jsDoc);
        kvs = decodeJson(Buffer.from(viewServerJson(ctx, state.rows), 'utf8'));
        for (const [kt, vt] of state.raws) kvs.push([decodeJson(kt), decodeJson(vt)]);
      } catch (e) {
        logger(`map function of view ${views[vi].name} raised exception ${e && e.message} with doc._id ${doc.id}`);
        continue; // couchjs views.js: results of a failing function are dropped
      }
      if (!kvs.length) continue;
      // couch_mrview_updater:insert_results: lists:sort(KVs) then combine
      // exactly-equal keys into {dups, Vals}; expand_dups yields the values
      // in ascending Erlang term order, in both directions.
      kvs.sort((a, b) => rawCmp(a[0], b[0]) || rawCmp(a[1], b[1]));
      let cur = null;
      for (const [k, v] of kvs) {
        if (cur && termEq(cur.key, k)) { cur.vals.push(v); continue; }
        cur = { key: k, id: doc.id, idBuf: doc.idBuf, part, shard: doc.shard, vals: [v] };
        perView[vi].push(cur);
      }
    }
  }
  const result = new Map();
  for (let vi = 0; vi < views.length; vi++) {
    const v = views[vi];
    const entries = perView[vi];
    let coll;
    if (v.collation === 'raw') {
      coll = new RawCollation();
    } else {
      const strings = new Set();
      for (const e of entries) { collectStrings(e.key, strings); if (e.part !== null) strings.add(e.part); }
      coll = new IcuCollation(buildRank(strings));
    }
    entries.sort((a, b) => {
      let c = 0;
      if (opts.partitioned) { c = coll.part(a.part, b.part); if (c) return c; }
      c = coll.cmp(a.key, b.key);
      if (c) return c;
      return Buffer.compare(a.idBuf, b.idBuf);
    });
    for (const e of entries) {
      e.keyJson = encodeJson(e.key);
      e.valJson = e.vals.map(encodeJson);
    }
    result.set(v.name, { def: v, index: new ViewIndex(db, entries, coll, opts.partitioned, v.collation) });
  }
  return { opts, views: result, ctx };
}

// A view's update_seq (couch_mrview's #mrview.update_seq): the database's
// sequence when the view's rows (ids, keys, values) last changed, not when a
// document was written whose rows stayed the same.
function getDdocIndex(db, ddoc, logger) {
  const cached = db.indexCache.get(ddoc.id);
  if (cached && cached.seq === db.seq) return cached.value;
  const value = buildDdocIndex(db, ddoc, logger);
  for (const [name, view] of value.views) {
    const fp = md5hex(view.index.entries.map((e) => e.id + '\u0000' + e.keyJson + '\u0000' + e.valJson.join('\u0000')).join('\u0001'));
    const key = ddoc.id + '\u0000' + name;
    const last = db.viewSeqs.get(key);
    if (!last || last.fp !== fp) db.viewSeqs.set(key, { fp, seq: db.seq });
    view.updateSeq = db.viewSeqs.get(key).seq;
  }
  db.indexCache.set(ddoc.id, { seq: db.seq, value });
  return value;
}

/* ------------------------------------------------------------------------ *
 * 7. Query parameters (couch_mrview_http:parse_params/parse_param) and
 *    validation (couch_mrview_util:validate_args).
 * ------------------------------------------------------------------------ */

// mochiweb_util:parse_qs: pairs separated by "&" or ";", "+" is a space,
// %XX decoded, a malformed % escape kept literally. Values are bytes.
function unquoteBytes(bytes, from, to) {
  const res = [];
  for (let j = from; j < to; j++) {
    const c = bytes[j];
    if (c === 0x2b) { res.push(0x20); continue; }
    if (c === 0x25 && j + 2 < to && isHex(bytes[j + 1]) && isHex(bytes[j + 2])) {
      res.push(parseInt(String.fromCharCode(bytes[j + 1], bytes[j + 2]), 16));
      j += 2;
      continue;
    }
    res.push(c);
  }
  return Buffer.from(res);
}
function parseQs(qs) {
  const out = [];
  if (!qs) return out;
  const bytes = Buffer.from(qs, 'latin1');
  const n = bytes.length;
  let k = 0;
  while (k < n) {
    let j = k;
    while (j < n && bytes[j] !== 0x3d && bytes[j] !== 0x26 && bytes[j] !== 0x3b) j++;
    const key = unquoteBytes(bytes, k, j);
    let val = Buffer.alloc(0);
    if (j < n && bytes[j] === 0x3d) {
      let e = j + 1;
      while (e < n && bytes[e] !== 0x26 && bytes[e] !== 0x3b) e++;
      val = unquoteBytes(bytes, j + 1, e);
      k = e < n ? e + 1 : e;
    } else {
      // A key without "=": mochiweb ends the key at ";" or "&" and the
      // value parser consumes that separator, giving an empty value.
      k = j < n ? j + 1 : j;
    }
    out.push([key.toString('latin1'), val]);
  }
  return out;
}
function isHex(c) {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
}

// io_lib:format("~p", [String]) for a byte list, as used in CouchDB's
// parameter error messages.
function erlP(bytes) {
  if (bytes.length === 0) return '[]';
  let printable = true;
  for (const c of bytes) {
    if (!((c >= 32 && c <= 126) || (c >= 160 && c <= 255) || (c >= 8 && c <= 13) || c === 27)) { printable = false; break; }
  }
  if (!printable) return '[' + Array.from(bytes).join(',') + ']';
  let s = '"';
  for (const c of bytes) {
    switch (c) {
      case 0x22: s += '\\"'; break;
      case 0x5c: s += '\\\\'; break;
      case 8: s += '\\b'; break;
      case 9: s += '\\t'; break;
      case 10: s += '\\n'; break;
      case 11: s += '\\v'; break;
      case 12: s += '\\f'; break;
      case 13: s += '\\r'; break;
      case 27: s += '\\e'; break;
      default: s += String.fromCharCode(c);
    }
  }
  return s + '"';
}
// The ~p rendering of a decoded JSON body value (POST bodies), as a string
// of byte-valued characters like erlP: binaries <<"..">> (or <<1,2>>),
// lists of printable character codes as strings (JSON [104,105] is "hi"),
// objects {[{<<"k">>,V}]}, atoms null/true/false, floats as Erlang prints them.
function erlPTerm(v) {
  if (typeof v === 'string') {
    const p = erlP(Buffer.from(v, 'utf8'));
    if (p === '[]') return '<<>>';
    return p.startsWith('[') ? `<<${p.slice(1, -1)}>>` : `<<${p}>>`;
  }
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number') return erlFloat(v);
  if (v === null) return 'null';
  if (v === true || v === false) return String(v);
  if (Array.isArray(v)) {
    const codes = charList(v);
    if (codes && codes.length && codes.every((c) => c <= 255)) {
      const p = erlP(Buffer.from(codes));
      if (p.startsWith('"')) return p;
    }
    return '[' + v.map(erlPTerm).join(',') + ']';
  }
  if (v instanceof Obj) return '{[' + v.pairs.map(([k, x]) => `{${erlPTerm(k)},${erlPTerm(x)}}`).join(',') + ']}';
  return encodeJson(v);
}
// Erlang's shortest float text (OTP 25 ~p): the shortest round-trip digits,
// written plainly or with an exponent, whichever is shorter (plain on a tie).
function erlFloat(x) {
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const sgn = x < 0 ? '-' : '';
  const m = /^(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(Math.abs(x).toExponential());
  const digits = m[1] + (m[2] || '');
  const exp = parseInt(m[3], 10);
  const place = exp + 1;
  let plain;
  if (place <= 0) plain = '0.' + '0'.repeat(-place) + digits;
  else if (place >= digits.length) plain = digits + '0'.repeat(place - digits.length) + '.0';
  else plain = digits.slice(0, place) + '.' + digits.slice(place);
  const sci = `${digits[0]}.${digits.slice(1) || '0'}e${exp}`;
  return sgn + (sci.length < plain.length ? sci : plain);
}
// A JSON array of integers is an Erlang string (a list of character codes)
// to the parameter parser: the codes, or null for any other value.
function charList(v) {
  if (!Array.isArray(v) || !v.every((c) => typeof c === 'bigint' && c >= 0n && c <= 0x10ffffn)) return null;
  return v.map(Number);
}
// couch_util:to_binary/1 of a decoded value: binaries as they are, atoms by
// name, iolists (nested lists of bytes and binaries) flattened, others ~p.
function toBinaryTerm(v) {
  if (typeof v === 'string') return Buffer.from(v, 'utf8');
  if (v === null || v === true || v === false) return Buffer.from(String(v), 'latin1');
  if (Array.isArray(v)) {
    const out = [];
    const flat = (x) => {
      if (typeof x === 'bigint' && x >= 0n && x <= 255n) { out.push(Buffer.from([Number(x)])); return true; }
      if (typeof x === 'string') { out.push(Buffer.from(x, 'utf8')); return true; }
      return Array.isArray(x) && x.every(flat);
    };
    if (v.every(flat)) return Buffer.concat(out);
  }
  return Buffer.from(erlPTerm(v), 'latin1');
}
// A value the Erlang code has no clause for (parse_boolean(null), a query
// that is not an object): CouchDB answers 500 function_clause with a "ref",
// the erlang:phash2 of the stack trace, which the double cannot compute;
// it gives a stable number derived from where the clause failed.
function functionClause(where) {
  const ref = crc32(Buffer.from(`function_clause:${where}`, 'utf8'));
  const e = new HttpError(500, 'unknown_error', 'function_clause', { 'X-Couch-Stack-Hash': String(ref) });
  e.ref = BigInt(ref);
  return e;
}

// io_lib:format output is a list of bytes (query values are byte lists);
// ?l2b turns it into a binary, which the JSON encoder writes as UTF-8.
function qpeBytes(latin1Text) {
  return qpe(Buffer.from(latin1Text, 'latin1').toString('utf8'));
}

// couch_mrview_http:parse_boolean/1: binaries become byte lists, lists are
// lower-cased (string:to_lower/1, which also takes a single integer) and
// compared with "true"/"false"; anything else has no clause.
function parseBoolean(val, decoded) {
  if (val === true || val === false) return val;
  if (!decoded) {
    const s = val.toString('latin1').toLowerCase();
    if (s === 'true') return true;
    if (s === 'false') return false;
    throw qpeBytes(`Invalid boolean parameter: ${erlP(val)}`);
  }
  let codes = null;
  if (typeof val === 'string') codes = Array.from(Buffer.from(val, 'utf8'));
  else codes = charList(val);
  if (codes) {
    const s = String.fromCharCode(...codes.map((c) => (c >= 0x41 && c <= 0x5a) || (c >= 0xc0 && c <= 0xde && c !== 0xd7) ? c + 32 : c));
    if (s === 'true') return true;
    if (s === 'false') return false;
    const shown = typeof val === 'string' ? erlP(Buffer.from(val, 'utf8')) : erlPTerm(val);
    throw qpeBytes(`Invalid boolean parameter: ${shown}`);
  }
  if (typeof val === 'bigint') throw qpeBytes(`Invalid boolean parameter: ${val}`);
  throw functionClause('parse_boolean');
}
// parse_int/1: integers as they are, character lists through
// list_to_integer/1 ("+5", "-1"); binaries and the rest are refused.
function parseInt_(val, decoded) {
  if (typeof val === 'bigint') return val;
  if (!decoded) {
    const s = val.toString('latin1');
    if (/^[+-]?[0-9]+$/.test(s)) return BigInt(s);
    throw qpeBytes(`Invalid value for integer: ${erlP(val)}`);
  }
  const codes = charList(val);
  if (codes) {
    const s = String.fromCodePoint(...codes);
    if (/^[+-]?[0-9]+$/.test(s)) return BigInt(s);
  }
  throw qpeBytes(`Invalid value for integer: ${erlPTerm(val)}`);
}
function parsePosInt(val, decoded) {
  const v = parseInt_(val, decoded);
  if (v >= 0n) return v;
  if (decoded) throw qpeBytes(`Invalid value for positive integer: ${erlPTerm(val)}`);
  throw qpeBytes(`Invalid value for positive integer: ${erlP(val)}`);
}

function newArgs() {
  return {
    viewType: undefined,
    reduce: undefined,
    startKey: undefined,
    startKeyDocid: undefined,
    endKey: undefined,
    endKeyDocid: undefined,
    keys: undefined,
    direction: 'fwd',
    limit: BigInt(MAX_VIEW_LIMIT),
    skip: 0n,
    groupLevel: undefined,
    group: undefined,
    stable: false,
    update: true,
    inclusiveEnd: true,
    includeDocs: false,
    updateSeq: false,
    conflicts: undefined,
    sorted: true,
    partition: undefined,
    extra: [],
  };
}

function jsonParam(val, decoded) {
  if (decoded) return val;
  return parseJsonOr400(val);
}
function binParam(val, decoded) {
  if (!decoded) return val;
  return toBinaryTerm(val);
}

function parseParam(key, val, a, decoded) {
  // Val == "ok" orelse Val == <<"ok">>: a list of character codes matches too.
  const strIs = (s) => (decoded ? val === s || (charList(val) !== null && String.fromCodePoint(...charList(val)) === s) : val.toString('latin1') === s);
  switch (key) {
    case '': return;
    case 'reduce': a.reduce = parseBoolean(val, decoded); return;
    case 'key': { const k = jsonParam(val, decoded); a.startKey = k; a.endKey = k; return; }
    case 'keys': {
      const ks = jsonParam(val, decoded);
      if (Array.isArray(ks) && ks.length === 1) { a.startKey = ks[0]; a.endKey = ks[0]; } else a.keys = ks;
      return;
    }
    case 'startkey': case 'start_key': a.startKey = jsonParam(val, decoded); return;
    case 'startkey_docid': case 'start_key_doc_id': a.startKeyDocid = binParam(val, decoded); return;
    case 'endkey': case 'end_key': a.endKey = jsonParam(val, decoded); return;
    case 'endkey_docid': case 'end_key_doc_id': a.endKeyDocid = binParam(val, decoded); return;
    case 'limit': a.limit = parsePosInt(val, decoded); return;
    case 'stale':
      if (strIs('ok')) { a.stable = true; a.update = false; return; }
      if (strIs('update_after')) { a.stable = true; a.update = 'lazy'; return; }
      throw qpe('Invalid value for `stale`.');
    case 'stable':
      if (strIs('true') || val === true) { a.stable = true; return; }
      if (strIs('false') || val === false) { a.stable = false; return; }
      throw qpe('Invalid value for `stable`.');
    case 'update':
      if (strIs('true') || val === true) { a.update = true; return; }
      if (strIs('false') || val === false) { a.update = false; return; }
      if (strIs('lazy')) { a.update = 'lazy'; return; }
      throw qpe('Invalid value for `update`.');
    case 'descending': a.direction = parseBoolean(val, decoded) ? 'rev' : 'fwd'; return;
    case 'skip': a.skip = parsePosInt(val, decoded); return;
    case 'group': a.group = parseBoolean(val, decoded); return;
    case 'group_level': a.groupLevel = parsePosInt(val, decoded); return;
    case 'inclusive_end': a.inclusiveEnd = parseBoolean(val, decoded); return;
    case 'include_docs': a.includeDocs = parseBoolean(val, decoded); return;
    case 'attachments': case 'att_encoding_info': parseBoolean(val, decoded); return;
    case 'update_seq': a.updateSeq = parseBoolean(val, decoded); return;
    case 'conflicts': a.conflicts = parseBoolean(val, decoded); return;
    case 'callback': return;
    case 'sorted': a.sorted = parseBoolean(val, decoded); return;
    case 'partition': {
      const p = (decoded ? toBinaryTerm(val) : val).toString('utf8');
      validatePartition(p);
      a.partition = p;
      return;
    }
    default:
      // Unknown parameters are kept in #mrargs.extra and otherwise ignored.
      a.extra.push([key, val]);
  }
}

// couch_mrview_http:parse_params(Props, Keys, Args, Options)
function parseParams(props, keys, a, opts) {
  opts = opts || {};
  if (!opts.keepGroupLevel) {
    if (!(Array.isArray(keys) && keys.length === 1)) a.keys = keys;
    a.group = undefined;
    a.groupLevel = undefined;
  }
  for (const [k, v] of props) parseParam(k, v, a, !!opts.decoded);
  return a;
}

function determineGroupLevel(a) {
  if (a.group === undefined && a.groupLevel === undefined) return 0n;
  if (a.group === false && a.groupLevel === undefined) return 0n;
  if (a.group === false && a.groupLevel > 0n) throw qpe("Can't specify group=false and group_level>0 at the same time");
  if (a.group === true && a.groupLevel === undefined) return 'exact';
  return a.groupLevel;
}

// couch_mrview_util:apply_limit/2 with query_limit = infinity.
function applyLimit(a) {
  if (a.limit > BigInt(MAX_VIEW_LIMIT)) throw qpe(`Limit is too large, must not exceed ${MAX_VIEW_LIMIT}`);
}

// The ignore_limit fault: set while a request it applies to is routed (a
// synchronous call: route awaits nothing), so that every query of that
// request, each of a multi-query POST too, is answered as without a limit.
let limitIgnored = false;
function faultLimit(a) {
  if (limitIgnored) a.limit = BigInt(MAX_VIEW_LIMIT);
}

// couch_mrview_util:validate_args_int/1, same checks, same order.
function validateArgsInt(a) {
  const gl = determineGroupLevel(a);
  if (a.viewType === 'map' && a.reduce === true) throw qpe('Reduce is invalid for map-only views.');
  if (a.viewType === 'red' && gl !== 'exact' && Array.isArray(a.keys)) {
    throw qpe('Multi-key fetches for reduce views must use `group=true`');
  }
  if (a.keys !== undefined && !Array.isArray(a.keys)) throw qpe('`keys` must be an array of strings.');
  if (a.keys !== undefined && a.keys.length > 0) {
    const single = a.keys.length === 1 && a.startKey !== undefined && a.endKey !== undefined
      && termEq(a.keys[0], a.startKey) && termEq(a.keys[0], a.endKey);
    const none = a.startKey === undefined && a.endKey === undefined;
    if (!single && !none) throw qpe('`keys` is incompatible with `key`, `start_key` and `end_key`');
  }
  if (gl !== 'exact' && gl !== 0n) {
    if (a.viewType === 'map') throw qpe('Invalid use of grouping on a map view.');
  } else if (gl === 'exact' && a.viewType === 'map') {
    throw qpe('Invalid use of grouping on a map view.');
  }
  if (a.viewType === 'red' && a.includeDocs === true) throw qpe('`include_docs` is invalid for reduce');
  if (a.viewType === 'red' && a.conflicts !== undefined) throw qpe('`conflicts` is invalid for reduce views.');
  const FF = Buffer.from([0xff]);
  const EMPTY = Buffer.alloc(0);
  a.startKeyDocidEff = a.startKeyDocid !== undefined ? a.startKeyDocid : (a.direction === 'fwd' ? EMPTY : FF);
  a.endKeyDocidEff = a.endKeyDocid !== undefined ? a.endKeyDocid : (a.direction === 'fwd' ? FF : EMPTY);
  a.groupLevelEff = gl;
  return a;
}

/* ------------------------------------------------------------------------ *
 * 8. Query execution.
 * ------------------------------------------------------------------------ */

const FFBUF = Buffer.from([0xff]);
const EMPTYBUF = Buffer.alloc(0);
function reverseKeyDefault(d) {
  if (d.length === 0) return FFBUF;
  if (d.length === 1 && d[0] === 0xff) return EMPTYBUF;
  return d;
}

// One key range ("key_opts" of couch_mrview_util) resolved to entry indexes.
// Returns {lo, hi} (entries lo..hi-1 are in range) and `before` giving, for
// a shard, the rows of that shard before the fold's start position.
// A bound of `undefined` means the fold has no such option.
function resolveRange(idx, dir, start, end, endGt) {
  const n = idx.entries.length;
  if (dir === 'fwd') {
    const lo = start !== undefined ? idx.lowerBound(start) : 0;
    let hi = n;
    if (end !== undefined) hi = endGt ? idx.lowerBound(end) : idx.upperBound(end);
    return { lo, hi: Math.max(hi, lo), before: (s) => idx.prefix[s][lo] };
  }
  const top = start !== undefined ? idx.upperBound(start) : n; // entries < top are <= start
  let lo = 0;
  if (end !== undefined) lo = endGt ? idx.upperBound(end) : idx.lowerBound(end);
  return { lo: Math.min(lo, top), hi: top, before: (s) => idx.total(s) - idx.prefix[s][top] };
}

function* iterRange(idx, r, dir, shards) {
  const ents = idx.entries;
  if (dir === 'fwd') {
    for (let k = r.lo; k < r.hi; k++) {
      const e = ents[k];
      if (shards && !shards.has(e.shard)) continue;
      for (let v = 0; v < e.vals.length; v++) yield [e, v];
    }
  } else {
    for (let k = r.hi - 1; k >= r.lo; k--) {
      const e = ents[k];
      if (shards && !shards.has(e.shard)) continue;
      for (let v = 0; v < e.vals.length; v++) yield [e, v];
    }
  }
}


function mkBound(part, key, idBuf) { return { part, key, idBuf }; }

// The list of folds a query makes: one per key of `keys`, else one range.
function foldSpecs(a, partition) {
  const wrapPart = partition !== undefined ? partition : null;
  const specs = [];
  const endGt = !a.inclusiveEnd;
  const ekd = endGt ? reverseKeyDefault(a.endKeyDocidEff) : a.endKeyDocidEff;
  if (Array.isArray(a.keys)) {
    // fabric_view_map:go reverses the keys for descending=true.
    const keys = a.direction === 'rev' ? a.keys.slice().reverse() : a.keys;
    for (const k of keys) {
      specs.push({ start: mkBound(wrapPart, k, a.startKeyDocidEff), end: mkBound(wrapPart, k, ekd), endGt });
    }
    return specs;
  }
  let sk = a.startKey;
  let ek = a.endKey;
  if (partition !== undefined) {
    // couch_mrview_util:apply_partition: default bounds LOWEST/HIGHEST.
    if (sk === undefined) sk = a.direction === 'fwd' ? null : HIGH;
    if (ek === undefined) ek = a.direction === 'fwd' ? HIGH : null;
  }
  specs.push({
    start: sk === undefined ? undefined : mkBound(wrapPart, sk, a.startKeyDocidEff),
    end: ek === undefined ? undefined : mkBound(wrapPart, ek, ekd),
    endGt,
  });
  return specs;
}

// couch_mrview_util:check_range/2.
function checkRange(idx, a, partition) {
  let sk = a.startKey;
  let ek = a.endKey;
  if (partition !== undefined && a.keys === undefined) {
    // apply_partition wraps start/end as {p, P, K} with LOWEST/HIGHEST
    // defaults (only when there is no `keys`).
    if (sk === undefined) sk = a.direction === 'fwd' ? null : HIGH;
    if (ek === undefined) ek = a.direction === 'fwd' ? HIGH : null;
  }
  if (sk === undefined || ek === undefined) return;
  if (termEq(sk, ek)) return;
  const part = partition !== undefined ? partition : null;
  const fake = { part, key: sk, idBuf: a.startKeyDocidEff };
  const less = idx.cmpEntry(fake, mkBound(part, ek, a.endKeyDocidEff)) < 0;
  if (a.direction === 'fwd' && !less) {
    throw qpe('No rows can match your key range, reverse your start_key and end_key or set descending=true');
  }
  if (a.direction === 'rev' && less) {
    throw qpe('No rows can match your key range, reverse your start_key and end_key or set descending=false');
  }
}

function shardSet(db, partition) {
  if (partition === undefined) return null;
  return new Set([shardOfHashKey(db.q, partition)]);
}

// total_rows and offset the way the clustered coordinator computes them
// (fabric_view_map: Total = sum of shard totals, Offset = sum of shard
// offsets; FinalOffset = min(Total, Offset + Skip)). A shard's offset is the
// count of its rows before the first row it streams, or, if it streams
// none, before the start of its last fold (couch_mrview:map_fold/finish_fold).
//
// For a partition query (fabric_view:fix_skip_and_limit) the single shard
// applies skip itself, so its offset counts the rows it skipped, but at most
// the rows its folds met: offset = before + min(skip, rows in range).
function totalAndOffset(db, idx, ranges, shards, skip) {
  const list = shards ? Array.from(shards) : Array.from({ length: db.q }, (_, s) => s);
  const workerSkip = shards !== null;
  let total = 0;
  let offset = 0n;
  for (const s of list) {
    total += idx.total(s);
    if (!ranges.length) continue;
    let off;
    let remaining = workerSkip ? skip : 0n;
    for (const r of ranges) {
      const cnt = BigInt(idx.prefix[s][r.hi] - idx.prefix[s][r.lo]);
      if (remaining < cnt) { off = BigInt(r.before(s)) + remaining; break; }
      remaining -= cnt;
    }
    if (off === undefined) {
      const last = ranges[ranges.length - 1];
      off = BigInt(last.before(s)) + (workerSkip ? BigInt(idx.prefix[s][last.hi] - idx.prefix[s][last.lo]) : 0n);
    }
    offset += off;
  }
  const final = offset + (workerSkip ? 0n : skip);
  return { total: BigInt(total), offset: final < BigInt(total) ? final : BigInt(total) };
}

function docForRow(db, id, value) {
  // couch_mrview_util:maybe_load_doc / fabric_view:possibly_embed_doc:
  // a value object with "_id" (and optional "_rev") links another document.
  let docId = id;
  let rev;
  if (value instanceof Obj && value.has('_id')) {
    docId = value.get('_id');
    rev = value.get('_rev');
    if (docId === null) return null;
  }
  if (typeof docId !== 'string') return null;
  const d = db.docs.get(docId);
  if (!d) return null;
  if (rev !== undefined) return d.rev === rev ? docToJson(d) : null;
  if (d.deleted) return null;
  return docToJson(d);
}

// ---- reduce functions (couch_query_servers builtin_reduce) ----

function erlAdd(a, b) {
  if (typeof a === 'bigint' && typeof b === 'bigint') return a + b;
  const r = Number(a) + Number(b);
  if (!Number.isFinite(r)) throw new HttpError(500, 'badarith', 'float overflow in reduce');
  return r;
}
function erlMul(a, b) {
  if (typeof a === 'bigint' && typeof b === 'bigint') return a * b;
  const r = Number(a) * Number(b);
  if (!Number.isFinite(r)) throw new HttpError(500, 'badarith', 'float overflow in reduce');
  return r;
}
const isNum = (v) => typeof v === 'bigint' || typeof v === 'number';

const SUMERROR = 'The _sum function requires that map values be numbers, arrays of numbers, or objects. '
  + 'Objects cannot be mixed with other data structures. Objects can be arbitrarily nested, provided that '
  + 'the values for all fields are themselves numbers, arrays of numbers, or objects.';

class SumError extends Error { constructor(obj) { super('sum'); this.obj = obj; } }

function sumArrays(xs, ys) {
  const out = [];
  let k = 0;
  for (;;) {
    if (k >= xs.length && k >= ys.length) return out;
    if (k >= ys.length) return out.concat(xs.slice(k));
    if (k >= xs.length) return out.concat(ys.slice(k));
    if (isNum(xs[k]) && isNum(ys[k])) { out.push(erlAdd(xs[k], ys[k])); k++; continue; }
    throw new SumError(new Obj([['error', 'builtin_reduce_error'], ['reason', SUMERROR], ['caused_by', xs.slice(k)]]));
  }
}
function sortPairs(pairs) { return pairs.slice().sort((p, q) => cmpBytesStr(p[0], q[0]) || rawCmp(p[1], q[1])); }
function sumObjects(p1, p2) {
  const out = [];
  let i = 0;
  let j = 0;
  while (i < p1.length && j < p2.length) {
    const c = cmpBytesStr(p1[i][0], p2[j][0]);
    if (c === 0) { out.push([p1[i][0], sumValues(p1[i][1], p2[j][1])]); i++; j++; } else if (c < 0) { out.push(p1[i]); i++; } else { out.push(p2[j]); j++; }
  }
  return out.concat(p1.slice(i), p2.slice(j));
}
function sumValues(value, acc) {
  if (isNum(value) && isNum(acc)) return erlAdd(acc, value);
  if (Array.isArray(value) && Array.isArray(acc)) return sumArrays(acc, value);
  if (isNum(value) && Array.isArray(acc)) return sumArrays(acc, [value]);
  if (Array.isArray(value) && isNum(acc)) return sumArrays([acc], value);
  if (value instanceof Obj) {
    if (value.get('error') === 'builtin_reduce_error') throw new SumError(value);
    if (acc === 0n) return value;
    if (acc instanceof Obj) return new Obj(sumObjects(sortPairs(value.pairs), sortPairs(acc.pairs)));
    // CouchDB crashes here (case_clause); the double reports a sum error.
    throw new SumError(new Obj([['error', 'builtin_reduce_error'], ['reason', SUMERROR], ['caused_by', value]]));
  }
  throw new SumError(new Obj([['error', 'builtin_reduce_error'], ['reason', SUMERROR], ['caused_by', value]]));
}
function builtinSum(values) {
  let acc = 0n;
  try {
    for (const v of values) acc = sumValues(v, acc);
  } catch (e) {
    if (e instanceof SumError) return e.obj;
    throw e;
  }
  return acc;
}

function statsInvalid(msg) { return new HttpError(500, 'invalid_value', msg); }
function unpackStats(o) {
  const get = (k) => {
    const v = o.get(k);
    if (isNum(v)) return v;
    if (v === undefined) throw statsInvalid(`user _stats input missing required field ${k} (${encodeJson(o)})`);
    throw statsInvalid(`non-numeric _stats input received for ${k}: ${erlPTerm(v)}`);
  };
  return { sum: get('sum'), count: get('count'), min: get('min'), max: get('max'), sumsqr: get('sumsqr') };
}
function initStats(x) {
  if (Array.isArray(x)) return x.map(initStats);
  if (isNum(x)) return { sum: x, count: 1n, min: x, max: x, sumsqr: erlMul(x, x) };
  if (x instanceof Obj) return unpackStats(x);
  throw statsInvalid(`non-numeric _stats input: ${erlPTerm(x)}`);
}
function statValues(value, acc) {
  if (Array.isArray(value) && Array.isArray(acc)) {
    const m = Math.min(value.length, acc.length);
    if (value.length !== acc.length) throw statsInvalid('_stats arrays of different lengths');
    const out = [];
    for (let k = 0; k < m; k++) out.push(statValues(value[k], acc[k]));
    return out;
  }
  if (value instanceof Obj) return statValues(unpackStats(value), acc);
  if (isNum(value)) return statValues({ sum: value, count: 1n, min: value, max: value, sumsqr: erlMul(value, value) }, acc);
  if (isNum(acc)) return statValues(value, { sum: acc, count: 1n, min: acc, max: acc, sumsqr: erlMul(acc, acc) });
  if (value && typeof value === 'object' && 'sumsqr' in value && acc && typeof acc === 'object' && 'sumsqr' in acc) {
    return {
      sum: erlAdd(value.sum, acc.sum),
      count: erlAdd(value.count, acc.count),
      min: cmpNum(acc.min, value.min) < 0 ? acc.min : value.min, // erlang:min(Min0, Min1)
      max: cmpNum(value.max, acc.max) < 0 ? acc.max : value.max, // erlang:max(Max0, Max1)
      sumsqr: erlAdd(value.sumsqr, acc.sumsqr),
    };
  }
  throw statsInvalid(`The _stats function requires that map values be numbers or arrays of numbers, not '${erlPTerm(value)}'`);
}
function packStats(s) {
  if (Array.isArray(s)) return s.map(packStats);
  return new Obj([['sum', s.sum], ['count', s.count], ['min', s.min], ['max', s.max], ['sumsqr', s.sumsqr]]);
}
function builtinStats(values) {
  if (!values.length) return packStats({ sum: 0n, count: 0n, min: 0n, max: 0n, sumsqr: 0n });
  let acc = initStats(values[0]);
  for (let k = 1; k < values.length; k++) acc = statValues(values[k], acc);
  return packStats(acc);
}

function runReduce(def, ctx, rows) {
  const red = def.reduce;
  if (red.startsWith('_count')) return BigInt(rows.length);
  if (red.startsWith('_sum')) return builtinSum(rows.map((r) => r.value));
  if (red.startsWith('_stats')) return builtinStats(rows.map((r) => r.value));
  if (red.startsWith('_approx_count_distinct')) {
    const seen = new Set(rows.map((r) => encodeJson(r.key)));
    return BigInt(seen.size);
  }
  // A JavaScript reduce function, called once with rereduce=false over the
  // whole group (couchjs would also rereduce partial results).
  if (!def.compiledReduce || def.compiledCtx !== ctx) {
    def.compiledReduce = compileFn(ctx, red, `reduce function of view ${def.name}`);
    def.compiledCtx = ctx;
  }
  const fn = def.compiledReduce;
  const keys = ctx.JSON.parse(encodeJson(rows.map((r) => [r.key, r.id])));
  const values = ctx.JSON.parse(encodeJson(rows.map((r) => r.value)));
  let out;
  try { out = fn.call(undefined, keys, values, false); } catch (e) { out = null; }
  return jsToEjson(ctx, out);
}

// ---- the view query ----

function queryView(db, ddocName, viewName, args, partitionFromPath, logger) {
  return runView(prepareView(openView(db, ddocName, viewName, logger), args, partitionFromPath));
}

function openView(db, ddocName, viewName, logger) {
  const ddoc = db.docs.get(`_design/${ddocName}`);
  if (!ddoc) throw notFound('missing');
  if (ddoc.deleted) throw notFound('deleted');
  const dindex = getDdocIndex(db, ddoc, logger);
  const view = dindex.views.get(viewName);
  if (!view) throw notFound('missing_named_view');
  return { db, dindex, view };
}

// What the coordinator checks before anything is sent (set_view_type,
// fabric_util:validate_args): a multi-query checks every query this way
// before it streams the first result.
function prepareView(opened, args, partitionFromPath) {
  const { dindex, view } = opened;
  const a = args;
  // couch_mrview_util:set_view_type
  a.viewType = view.def.reduce !== null ? (a.reduce === false ? 'map' : 'red') : 'map';
  if (partitionFromPath !== undefined) a.partition = partitionFromPath;
  applyLimit(a);
  faultLimit(a);
  validateArgsInt(a);
  if (a.partition !== undefined && a.partition === '') throw qpe('Invalid value for `partition`.');
  const viewPartitioned = dindex.opts.partitioned;
  if (viewPartitioned && a.partition === undefined) throw qpe('`partition` parameter is mandatory for queries to this view.');
  if (!viewPartitioned && a.partition !== undefined) throw qpe('`partition` parameter is not supported in this design doc');
  return Object.assign({ a }, opened);
}

// The shard workers' part: check_range (so a reversed range fails only when
// the query runs), then the rows.
function runView(prepared) {
  const { db, dindex, view, a } = prepared;
  const viewPartitioned = dindex.opts.partitioned;
  const idx = view.index;
  const partition = viewPartitioned ? a.partition : undefined;
  checkRange(idx, a, partition);
  const shards = shardSet(db, partition);
  const specs = foldSpecs(a, partition);
  const ranges = specs.map((sp) => resolveRange(idx, a.direction, sp.start, sp.end, sp.endGt));
  const skip = a.skip;
  const limit = a.limit;
  if (a.viewType === 'map') {
    const meta = totalAndOffset(db, idx, ranges, shards, skip);
    const rows = [];
    let skipped = 0n;
    let taken = 0n;
    outer: for (const r of ranges) {
      for (const [e, vi] of iterRange(idx, r, a.direction, shards)) {
        if (skipped < skip) { skipped++; continue; }
        if (taken >= limit) break outer;
        taken++;
        let json = '{"id":' + encodeString(e.id) + ',"key":' + e.keyJson + ',"value":' + e.valJson[vi];
        if (a.includeDocs) json += ',"doc":' + encodeJson(docForRow(db, e.id, e.vals[vi]));
        rows.push(json + '}');
      }
    }
    return { kind: 'map', meta: { total: meta.total, offset: meta.offset, updateSeq: a.updateSeq ? view.updateSeq : undefined }, rows };
  }
  // Reduce: couch_btree:fold_reduce groups consecutive rows whose keys are
  // equal under the view's collation (or whose first group_level elements
  // are, when both keys are non-empty arrays); the group key is that of the
  // first row met; skip and limit count groups.
  const gl = a.groupLevelEff;
  const coll = idx.coll;
  const sameGroup = (k1, k2) => {
    if (gl === 0n) return true;
    if (gl !== 'exact' && Array.isArray(k1) && Array.isArray(k2) && k1.length && k2.length) {
      const n = Number(gl);
      return coll.cmp(k1.slice(0, n), k2.slice(0, n)) === 0;
    }
    return coll.cmp(k1, k2) === 0;
  };
  const groupKey = (k) => {
    if (gl === 0n) return null;
    if (gl === 'exact') return k;
    return Array.isArray(k) ? k.slice(0, Number(gl)) : k;
  };
  const groups = [];
  for (const r of ranges) {
    let cur = null;
    for (const [e, vi] of iterRange(idx, r, a.direction, shards)) {
      const row = { key: e.key, id: e.id, value: e.vals[vi] };
      if (cur && sameGroup(cur.first, e.key)) { cur.rows.push(row); continue; }
      cur = { first: e.key, rows: [row] };
      groups.push(cur);
    }
  }
  const rows = [];
  let skipped = 0n;
  for (const g of groups) {
    if (skipped < skip) { skipped++; continue; }
    if (BigInt(rows.length) >= limit) break;
    const value = runReduce(view.def, dindex.ctx, g.rows);
    rows.push('{"key":' + encodeJson(groupKey(g.first)) + ',"value":' + encodeJson(value) + '}');
  }
  return { kind: 'red', meta: { updateSeq: a.updateSeq ? view.updateSeq : undefined }, rows };
}

// ---- _all_docs ----

class AllDocsIndex {
  constructor(db) {
    this.entries = db.liveDocs().sort((x, y) => Buffer.compare(x.idBuf, y.idBuf));
    this.q = db.q;
    const n = this.entries.length;
    this.prefix = [];
    for (let s = 0; s < db.q; s++) this.prefix.push(new Int32Array(n + 1));
    for (let k = 0; k < n; k++) {
      for (let s = 0; s < db.q; s++) this.prefix[s][k + 1] = this.prefix[s][k] + (this.entries[k].shard === s ? 1 : 0);
    }
  }
  total(s) { return this.prefix[s][this.entries.length]; }
  // The id btree's less is Erlang term order; a bound may be any JSON term
  // (startkey=1 sorts before every id) or a raw byte string (docid params).
  cmpEntry(e, b) {
    if (Buffer.isBuffer(b)) return sign(Buffer.compare(e.idBuf, b));
    if (typeof b === 'string') return sign(Buffer.compare(e.idBuf, Buffer.from(b, 'utf8')));
    return rawCmpBound(b) < 0 ? 1 : -1;
  }
  lowerBound(b) {
    let lo = 0;
    let hi = this.entries.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.cmpEntry(this.entries[mid], b) < 0) lo = mid + 1; else hi = mid;
    }
    return lo;
  }
  upperBound(b) {
    let lo = 0;
    let hi = this.entries.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.cmpEntry(this.entries[mid], b) <= 0) lo = mid + 1; else hi = mid;
    }
    return lo;
  }
}
// Order of a non-string JSON bound against any binary id.
function rawCmpBound(b) { return typeRankRaw(b) < 7 ? -1 : 1; }

function allDocsBoundMax(x, y) { return rawCmpAD(x, y) > 0 ? x : y; }
function allDocsBoundMin(x, y) { return rawCmpAD(x, y) < 0 ? x : y; }
function rawCmpAD(x, y) {
  const bx = Buffer.isBuffer(x) ? x : null;
  const by = Buffer.isBuffer(y) ? y : null;
  if (bx && by) return sign(Buffer.compare(bx, by));
  const tx = bx ? bx.toString('utf8') : x;
  const ty = by ? by.toString('utf8') : y;
  return rawCmp(tx, ty);
}

function queryAllDocs(db, args, partitionFromPath) {
  return runAllDocs(db, prepareAllDocs(db, args, partitionFromPath));
}

// fabric_util:validate_all_docs_args: all of _all_docs' checks (it has no
// check_range).
function prepareAllDocs(db, args, partitionFromPath) {
  const a = args;
  a.viewType = 'map';
  if (partitionFromPath !== undefined) a.partition = partitionFromPath;
  validateArgsInt(a);
  if (!db.partitioned && a.partition !== undefined) throw qpe('`partition` parameter is not supported on this db');
  // apply_limit runs only for partition queries: _all_docs takes any limit.
  if (a.partition !== undefined) applyLimit(a);
  faultLimit(a);
  return a;
}

function runAllDocs(db, a) {
  if (!db.allDocsCache) db.allDocsCache = new AllDocsIndex(db);
  const idx = db.allDocsCache;
  const shards = shardSet(db, a.partition);
  if (Array.isArray(a.keys)) {
    // fabric_view_all_docs: one document lookup per key, offset null.
    let keys = a.direction === 'fwd' ? a.keys : a.keys.slice().reverse();
    const skip = Number(a.skip > BigInt(keys.length) ? BigInt(keys.length) : a.skip);
    keys = keys.slice(skip);
    if (a.limit < BigInt(keys.length)) keys = keys.slice(0, Number(a.limit));
    const rows = [];
    for (const k of keys) {
      const d = typeof k === 'string' ? db.docs.get(k) : undefined;
      if (!d) { rows.push('{"key":' + encodeJson(k) + ',"error":"not_found"}'); continue; }
      const value = d.deleted ? new Obj([['rev', d.rev], ['deleted', true]]) : new Obj([['rev', d.rev]]);
      let json = '{"id":' + encodeString(d.id) + ',"key":' + encodeString(d.id) + ',"value":' + encodeJson(value);
      if (a.includeDocs) json += ',"doc":' + (d.deleted ? 'null' : encodeJson(docToJson(d)));
      rows.push(json + '}');
    }
    let total = 0;
    for (let s = 0; s < db.q; s++) total += idx.total(s);
    return { kind: 'map', meta: { total: BigInt(total), offset: null, updateSeq: a.updateSeq ? db.seq : undefined }, rows };
  }
  // couch_mrview_util:all_docs_key_opts: start_key else start_key_docid.
  let start = a.startKey !== undefined ? a.startKey : a.startKeyDocidEff;
  let end = a.endKey !== undefined ? a.endKey : a.endKeyDocidEff;
  if (a.partition !== undefined) {
    // apply_all_docs_partition: clamp to [<<P,":">>, <<P,";">>].
    const pStart = Buffer.from(a.partition + ':', 'utf8');
    const pEnd = Buffer.from(a.partition + ';', 'utf8');
    const sk0 = a.startKey !== undefined ? a.startKey : (a.direction === 'fwd' ? pStart : pEnd);
    const ek0 = a.endKey !== undefined ? a.endKey : (a.direction === 'fwd' ? pEnd : pStart);
    if (a.direction === 'fwd') { start = allDocsBoundMax(pStart, sk0); end = allDocsBoundMin(pEnd, ek0); } else { start = allDocsBoundMin(pEnd, sk0); end = allDocsBoundMax(pStart, ek0); }
  }
  const r = resolveRange(idx, a.direction, start, end, !a.inclusiveEnd);
  const meta = totalAndOffset(db, idx, [r], shards, a.skip);
  const rows = [];
  let skipped = 0n;
  let taken = 0n;
  const it = a.direction === 'fwd' ? range(r.lo, r.hi, 1) : range(r.hi - 1, r.lo - 1, -1);
  for (const k of it) {
    const d = idx.entries[k];
    if (shards && !shards.has(d.shard)) continue;
    if (skipped < a.skip) { skipped++; continue; }
    if (taken >= a.limit) break;
    taken++;
    let json = '{"id":' + encodeString(d.id) + ',"key":' + encodeString(d.id) + ',"value":{"rev":' + encodeString(d.rev) + '}';
    if (a.includeDocs) json += ',"doc":' + encodeJson(docToJson(d));
    rows.push(json + '}');
  }
  return { kind: 'map', meta: { total: meta.total, offset: meta.offset, updateSeq: a.updateSeq ? db.seq : undefined }, rows };
}
function* range(from, to, step) { for (let k = from; step > 0 ? k < to : k > to; k += step) yield k; }

/* ------------------------------------------------------------------------ *
 * 9. Response bodies: couch_mrview_http:view_cb with the chunk buffer of
 *    chttpd (1490 bytes), then "\n" (couch_httpd:end_json_response).
 * ------------------------------------------------------------------------ */

// In a multi-query (multiPrepend given) a result starts with "\r\n" (the
// first) or ",\r\n", and ends at "\r\n]}": the "\n" ends the whole response.
function viewChunks(result, multiPrepend) {
  const chunks = [];
  let buffer = '';
  let bufsize = 0;
  let prepend = '';
  const flush = (data) => {
    const len = Buffer.byteLength(data);
    if (bufsize > 0 && bufsize + len > CHUNK_THRESHOLD) {
      chunks.push(buffer);
      buffer = data;
      bufsize = len;
    } else {
      buffer += data;
      bufsize += len;
    }
    prepend = ',\r\n';
  };
  const parts = [];
  if (result.kind === 'map') {
    parts.push(`"total_rows":${result.meta.total}`);
    parts.push(`"offset":${result.meta.offset === null ? 'null' : result.meta.offset}`);
  }
  if (result.meta.updateSeq !== undefined) parts.push(`"update_seq":"${result.meta.updateSeq}-double"`);
  parts.push('"rows":[');
  flush((multiPrepend || '') + '{' + parts.join(',') + '\r\n');
  prepend = '';
  for (const row of result.rows) flush(prepend + row);
  chunks.push(buffer + '\r\n]}');
  if (multiPrepend === undefined) chunks.push('\n');
  return chunks;
}

// A multi-query's response (chttpd_view:multi_query_view,
// chttpd_db:multi_all_docs_view) as the steps chttpd's delayed response
// takes, given each query's outcome in order ({result} or {error}, the error
// a query raised while running: check_range). Every other error is raised
// before the response starts and answered as usual. Steps:
//   {op: 'head'}          200 headers, chunked
//   {op: 'chunk', data}   one chunk of the 200 response
//   {op: 'error', error}  an error response with a Content-Length
//   {op: 'raw', data}     a chunk written after that error response, on the
//                         same connection (mochiweb's write_chunk)
//   {op: 'response', chunks}  a whole 200 response written after the error
//                         response (buffer_response=true)
//   {op: 'end'}           the last chunk ("0\r\n\r\n")
//   {op: 'abort'}         the connection is closed (chttpd's http_abort)
// Measured on CouchDB 3.4.3: an error in the first query gives a 400 and,
// behind it on the same connection, the chunks of the queries after it,
// "\r\n]}", ");\n" (end_jsonp, never initialised on that path) and the last
// chunk; an error in a later query ends the 200 after the results before
// it; a second error closes the connection.
function multiQueryOps(outcomes, buffered) {
  const ops = [];
  let prepend = '\r\n';
  let errorSent = false;
  if (buffered) {
    // chttpd:buffer_response: chunks are kept and the 200 is written at the end.
    const chunks = ['{"results":['];
    for (const o of outcomes) {
      if (o.error) {
        if (errorSent) { ops.push({ op: 'abort' }); return ops; }
        ops.push({ op: 'error', error: o.error });
        errorSent = true;
        continue;
      }
      chunks.push(...viewChunks(o.result, prepend));
      prepend = ',\r\n';
    }
    chunks.push('\r\n]}', '\n');
    if (errorSent) ops.push({ op: 'response', chunks });
    else ops.push({ op: 'head' }, ...chunks.map((data) => ({ op: 'chunk', data })), { op: 'end' });
    return ops;
  }
  let started = false;
  const send = (data) => {
    if (errorSent) { ops.push({ op: 'raw', data }); return; }
    if (!started) { ops.push({ op: 'head' }, { op: 'chunk', data: '{"results":[' }); started = true; }
    ops.push({ op: 'chunk', data });
  };
  for (const o of outcomes) {
    if (o.error) {
      if (started || errorSent) { ops.push({ op: 'abort' }); return ops; }
      ops.push({ op: 'error', error: o.error });
      errorSent = true;
      continue;
    }
    for (const c of viewChunks(o.result, prepend)) send(c);
    prepend = ',\r\n';
  }
  send('\r\n]}');
  send(errorSent ? ');\n' : '\n');
  ops.push({ op: 'end' });
  return ops;
}

/* ------------------------------------------------------------------------ *
 * 10. HTTP server.
 * ------------------------------------------------------------------------ */

class Double {
  constructor(opts) {
    this.opts = opts;
    this.dbs = new Map();
    this.log = [];
    this.fault = { mode: 'none' };
    this.connSeq = 0;
    this.openConns = 0;
    this.totalConns = 0;
    this.requestSeq = 0;
    this.uuid = crypto.randomBytes(16).toString('hex');
    this.logger = opts.verbose ? (m) => process.stderr.write(m + '\n') : () => {};
  }

  loadFixtures(fx) {
    if (!fx || typeof fx !== 'object') throw new Error('fixtures must be an object');
    const dbs = fx.dbs instanceof Obj ? fx.dbs : toEjsonLoose(fx.dbs || {});
    for (const [name, spec0] of dbs.pairs) {
      const spec = spec0 instanceof Obj ? spec0 : new Obj();
      const q = spec.get('q');
      const db = new Db(name, { partitioned: spec.get('partitioned') === true, q: q !== undefined ? Number(q) : this.opts.q });
      this.dbs.set(name, db);
      const design = spec.get('design');
      if (design instanceof Obj) {
        for (const [dname, dbody] of design.pairs) {
          const body = dbody instanceof Obj ? dbody : new Obj();
          // Fixture shorthand: "reduce": null means no reduce function.
          const views = body.get('views');
          if (views instanceof Obj) {
            for (const [, v] of views.pairs) {
              if (v instanceof Obj) v.pairs = v.pairs.filter(([k, val]) => !(k === 'reduce' && val === null));
            }
          }
          updateDoc(db, `_design/${dname}`, body, {});
        }
      }
      const docs = spec.get('docs');
      if (Array.isArray(docs)) {
        for (const d0 of docs) {
          const d = typeof d0 === 'string' ? decodeJson(d0) : d0;
          if (!(d instanceof Obj)) throw new Error(`db ${name}: a fixture doc is not an object`);
          const id = d.get('_id');
          if (typeof id !== 'string') throw new Error(`db ${name}: a fixture doc has no string _id`);
          const rev = d.get('_rev');
          updateDoc(db, id, d, rev !== undefined ? { newEdits: false } : {});
        }
      }
    }
  }

  listen(port, host) {
    this.server = http.createServer({ keepAliveTimeout: this.opts.idleTimeout, requestTimeout: 0, headersTimeout: 60000 });
    this.server.keepAliveTimeout = this.opts.idleTimeout;
    this.server.on('connection', (sock) => {
      sock.doubleId = ++this.connSeq;
      sock.doubleReqs = 0;
      this.openConns++;
      this.totalConns++;
      sock.on('close', () => { this.openConns--; });
    });
    this.server.on('request', (req, res) => {
      this.handle(req, res).catch((e) => {
        this.logger(`internal error: ${e && e.stack}`);
        try {
          if (!res.headersSent) this.sendError(req, res, new HttpError(500, 'unknown_error', String(e && e.message)));
          else res.destroy();
        } catch (e2) { /* ignore */ }
      });
    });
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => resolve(this.server.address()));
    });
  }

  baseHeaders(extra) {
    return Object.assign({
      'X-CouchDB-Body-Time': '0',
      'X-Couch-Request-ID': crypto.randomBytes(5).toString('hex'),
      Server: SERVER_HEADER,
      'Cache-Control': 'must-revalidate',
      'Content-Type': 'application/json',
    }, extra || {});
  }

  sendJson(req, res, status, obj, extraHeaders) {
    const body = encodeJson(obj) + '\n';
    // mochiweb's reason phrase for 404 (httpd_util:reason_phrase/1)
    const phrase = status === 404 ? 'Object Not Found' : http.STATUS_CODES[status];
    res.writeHead(status, phrase, this.baseHeaders(Object.assign({ 'Content-Length': Buffer.byteLength(body) }, extraHeaders || {})));
    res.end(req.method === 'HEAD' ? undefined : body);
  }

  sendError(req, res, e) {
    this.sendJson(req, res, e.status, Object.assign({ error: e.error, reason: e.reason }, e.ref !== undefined ? { ref: e.ref } : {}), e.headers);
  }

  async readBody(req) {
    const parts = [];
    for await (const c of req) parts.push(c);
    return Buffer.concat(parts);
  }

  // Faults apply to requests other than /_double/* and other than writes.
  takeFault(req) {
    const f = this.fault;
    if (!f || f.mode === 'none') return null;
    if (!['GET', 'HEAD'].includes(req.method) && !(req.method === 'POST' && /\/_view\/|\/_all_docs|\/_find$/.test(req.url))) return null;
    if (f.path && req.url.indexOf(f.path) < 0) return null;
    if (f.count !== undefined) {
      if (f.count <= 0) return null;
      f.count--;
      const taken = Object.assign({}, f);
      if (f.count <= 0) this.fault = { mode: 'none' };
      return taken;
    }
    return Object.assign({}, f);
  }

  async handle(req, res) {
    const sock = req.socket;
    sock.doubleReqs++;
    const rawUrl = req.url;
    const qpos = rawUrl.indexOf('?');
    const rawPath = qpos >= 0 ? rawUrl.slice(0, qpos) : rawUrl;
    const rawQs = qpos >= 0 ? rawUrl.slice(qpos + 1).split('#')[0] : '';
    const body = await this.readBody(req);

    if (rawPath === '/_double' || rawPath.startsWith('/_double/')) {
      return this.handleControl(req, res, rawPath, body);
    }

    const qsPairs = parseQs(rawQs);
    const entry = {
      seq: ++this.requestSeq,
      time: new Date().toISOString(),
      method: req.method,
      url: rawUrl,
      path: rawPath,
      query: qsPairs.map(([k, v]) => [k, v.toString('utf8')]),
      httpVersion: req.httpVersion,
      headers: req.headers,
      rawHeaders: req.rawHeaders,
      conn: sock.doubleId,
      connRequest: sock.doubleReqs,
      remotePort: sock.remotePort,
      body: body.length ? body.toString('utf8').slice(0, 65536) : undefined,
    };
    // A multi-query POST: its queries, so that a test can see what one request asked.
    if (req.method === 'POST' && isMultiQueryPath(this.pathParts(rawPath))) entry.queries = queriesForLog(body);
    this.log.push(entry);
    if (this.log.length > 100000) this.log.shift();
    this.logger(`${req.method} ${rawUrl}`);

    // CouchDB's HTTP server (mochiweb) refuses a request line longer than
    // 8192 bytes, CRLF included, before CouchDB sees it: 400, no body, and
    // the connection closed (measured on CouchDB 3.4.3, t/double/README.md).
    if (Buffer.byteLength(`${req.method} ${rawUrl} HTTP/${req.httpVersion}\r\n`, 'latin1') > MAX_REQUEST_LINE) {
      res.writeHead(400, { Connection: 'close', 'Content-Length': 0, Server: MOCHIWEB_SERVER_HEADER });
      res.end();
      return undefined;
    }

    const fault = this.takeFault(req);
    if (fault) entry.fault = fault.mode;
    if (fault && fault.mode === 'reset') {
      if (typeof sock.resetAndDestroy === 'function') sock.resetAndDestroy(); else sock.destroy();
      return undefined;
    }
    if (fault && fault.mode === 'slow') await sleep(fault.ms || 0);
    if (fault && fault.mode === 'status') {
      const status = fault.status || 500;
      if (fault.trailing_ms !== undefined) this.trailAfter(req, res, fault.trailing_ms);
      if (fault.body !== undefined) {
        const b = typeof fault.body === 'string' ? fault.body : JSON.stringify(fault.body);
        res.writeHead(status, this.baseHeaders({ 'Content-Length': Buffer.byteLength(b) }));
        res.end(req.method === 'HEAD' ? undefined : b);
        return undefined;
      }
      const errs = { 400: 'bad_request', 401: 'unauthorized', 403: 'forbidden', 404: 'not_found', 409: 'conflict', 412: 'precondition_failed', 500: 'unknown_error', 503: 'service unavailable' };
      this.sendJson(req, res, status, { error: errs[status] || 'unknown_error', reason: 'fault injected by the test double' });
      return undefined;
    }
    if (fault && fault.mode === 'garbage') {
      res.writeHead(200, this.baseHeaders(chunkedHeader(req)));
      // body_base64: bytes a JSON string cannot carry (invalid UTF-8)
      const g = fault.body_base64 !== undefined ? Buffer.from(String(fault.body_base64), 'base64')
        : fault.body !== undefined ? String(fault.body)
          : '{"total_rows":3,"offset":0,"rows":[\r\n{"id":"a","key":<<not json>>,\u0000garbage';
      if (req.method !== 'HEAD') res.write(g);
      res.end();
      return undefined;
    }
    if (fault && fault.mode === 'huge') return this.sendHuge(req, res, fault.bytes || 1048576, entry.queries, fault.each);

    let result;
    try {
      limitIgnored = !!fault && fault.mode === 'ignore_limit';
      let routed;
      try {
        routed = this.route(req, res, rawPath, qsPairs, body);
      } finally {
        limitIgnored = false;
      }
      result = await routed;
    } catch (e) {
      if (e instanceof HttpError) { this.sendError(req, res, e); return undefined; }
      throw e;
    }
    if (!result) return undefined; // already answered
    if (result.kind === 'multi') return this.sendMulti(req, res, result.ops, fault);
    const chunks = viewChunks(result);
    return this.sendChunks(req, res, chunks, fault);
  }

  async sendChunks(req, res, chunks, fault) {
    res.writeHead(200, this.baseHeaders(chunkedHeader(req)));
    if (req.method === 'HEAD') { res.end(); return; }
    if (fault && fault.mode === 'truncate') {
      const all = Buffer.from(chunks.join(''), 'utf8');
      const cut = Math.max(1, Math.min(all.length - 1, fault.bytes !== undefined ? fault.bytes : Math.floor(all.length / 2)));
      await new Promise((resolve) => res.write(all.subarray(0, cut), () => resolve()));
      if (res.socket) res.socket.destroy();
      return;
    }
    if (fault && fault.mode === 'drip') {
      // the answer a byte at a time, each ms apart: a backend that is never
      // silent for long, yet never done
      const all = Buffer.from(chunks.join(''), 'utf8');
      for (let k = 0; k < all.length; k++) {
        if (!(await writeAsync(res, all.subarray(k, k + 1)))) return;
        await sleep(fault.ms || 1000);
      }
      res.end();
      return;
    }
    for (let k = 0; k < chunks.length; k++) {
      await writeAsync(res, chunks[k]);
      if (k === 0 && fault && fault.mode === 'stall') await sleep(fault.ms || 0);
    }
    res.end();
  }

  // For a multi-query (multiQueries: its logged queries, null when the body
  // has none) the huge rows are the first result, every other query gets an
  // empty one; with each, every result gets them.
  async sendHuge(req, res, bytes, multiQueries, each) {
    const pad = 'x'.repeat(900);
    const rowFor = (k) => {
      const id = 'huge-' + String(k).padStart(9, '0');
      return `{"id":"${id}","key":"${id}","value":"${pad}"}`;
    };
    const rowLen = Buffer.byteLength(rowFor(0)) + 3;
    const nrows = Math.max(1, Math.ceil(bytes / rowLen));
    res.writeHead(200, this.baseHeaders(chunkedHeader(req)));
    if (req.method === 'HEAD') { res.end(); return; }
    const multi = multiQueries !== undefined;
    let buf = `${multi ? '{"results":[\r\n' : ''}{"total_rows":${nrows},"offset":0,"rows":[\r\n`;
    for (let k = 0; k < nrows; k++) {
      buf += (k ? ',\r\n' : '') + rowFor(k);
      if (buf.length > 65536) {
        if (!(await writeAsync(res, buf))) return;
        buf = '';
      }
    }
    let tail = '\r\n]}';
    if (multi) {
      for (let k = 1; k < (multiQueries || []).length; k++) {
        if (!each) {
          tail += `,\r\n{"total_rows":${nrows},"offset":0,"rows":[\r\n\r\n]}`;
          continue;
        }
        buf += tail + `,\r\n{"total_rows":${nrows},"offset":0,"rows":[\r\n`;
        for (let j = 0; j < nrows; j++) {
          buf += (j ? ',\r\n' : '') + rowFor(j);
          if (buf.length > 65536) {
            if (!(await writeAsync(res, buf))) return;
            buf = '';
          }
        }
      }
      tail += '\r\n]}';
    }
    await writeAsync(res, buf + tail);
    await writeAsync(res, '\n');
    res.end();
  }

  // chttpd_auth: bad Basic credentials are refused on every endpoint.
  checkCreds(req) {
    if (!this.opts.admin) return;
    const h = req.headers.authorization;
    if (!h) return;
    const m = /^Basic\s+(.+)$/i.exec(h);
    if (m && Buffer.from(m[1], 'base64').toString('utf8') === this.opts.admin) return;
    throw new HttpError(401, 'unauthorized', 'Name or password is incorrect.');
  }

  // Databases are admin-only (CouchDB 3.x default security).
  checkAuth(req, kind) {
    if (!this.opts.admin) return;
    if (req.headers.authorization) return; // already verified by checkCreds
    if (kind === 'none') return;
    if (kind === 'server') throw new HttpError(401, 'unauthorized', 'You are not a server admin.');
    throw new HttpError(401, 'unauthorized', 'You are not authorized to access this db.');
  }

  // chttpd path_parts: split on "/", empty segments dropped, each segment
  // percent-decoded with "+" as a space (decode_plus_to_space = true).
  pathParts(rawPath) {
    return rawPath.split('/').filter((x) => x !== '').map((x) => {
      const b = Buffer.from(x, 'latin1');
      return unquoteBytes(b, 0, b.length).toString('utf8');
    });
  }

  async route(req, res, rawPath, qs, body) {
    const parts = this.pathParts(rawPath);
    const m = req.method;
    this.checkCreds(req);
    if (parts.length === 0) {
      this.checkAuth(req, 'none');
      if (m !== 'GET' && m !== 'HEAD') throw new HttpError(405, 'method_not_allowed', 'Only GET,HEAD allowed');
      this.sendJson(req, res, 200, {
        couchdb: 'Welcome',
        version: DOUBLE_VERSION,
        git_sha: 'test-double',
        uuid: this.uuid,
        features: ['access-ready', 'partitioned', 'pluggable-storage-engines', 'reshard', 'scheduler'],
        vendor: { name: 'mod_couchpage CouchDB test double (not Apache CouchDB)' },
      });
      return null;
    }
    if (parts[0] === '_up') { this.checkAuth(req, 'none'); this.sendJson(req, res, 200, { status: 'ok', seeds: {} }); return null; }
    if (parts[0] === '_all_dbs') {
      this.checkAuth(req, 'server');
      this.sendJson(req, res, 200, Array.from(this.dbs.keys()).sort());
      return null;
    }
    if (parts[0].startsWith('_')) {
      this.checkAuth(req, 'server');
      throw new HttpError(400, 'illegal_database_name', `Name: '${parts[0]}'. Only lowercase characters (a-z), digits (0-9), and any of the characters _, $, (, ), +, -, and / are allowed. Must begin with a letter.`);
    }
    const dbName = parts[0];
    let db = this.dbs.get(dbName);
    if (parts.length === 1) {
      if (m === 'PUT') {
        this.checkAuth(req, 'server');
        if (!DB_NAME_RE.test(dbName)) {
          throw new HttpError(400, 'illegal_database_name', `Name: '${dbName}'. Only lowercase characters (a-z), digits (0-9), and any of the characters _, $, (, ), +, -, and / are allowed. Must begin with a letter.`);
        }
        if (db) throw new HttpError(412, 'file_exists', 'The database could not be created, the file already exists.');
        const qv = qsValue(qs, 'q');
        const pv = qsValue(qs, 'partitioned');
        if (pv !== undefined && pv !== 'true' && pv !== 'false') throw badRequest('Invalid `partitioned` parameter');
        const q = qv !== undefined ? parseInt(qv, 10) : this.opts.q;
        if (!(q >= 1)) throw badRequest('q must be a positive integer');
        this.dbs.set(dbName, new Db(dbName, { partitioned: pv === 'true', q }));
        this.sendJson(req, res, 201, { ok: true }, { Location: `http://${req.headers.host || 'localhost'}/${encodeURIComponent(dbName)}` });
        return null;
      }
      if (!db) throw notFound('Database does not exist.');
      if (m === 'DELETE') {
        this.checkAuth(req, 'server');
        this.dbs.delete(dbName);
        this.sendJson(req, res, 200, { ok: true });
        return null;
      }
      this.checkAuth(req, 'db');
      if (m === 'GET' || m === 'HEAD') { this.sendJson(req, res, 200, dbInfo(db)); return null; }
      if (m === 'POST') {
        requireJsonCtype(req);
        const doc = parseJsonOr400(body);
        if (!(doc instanceof Obj)) throw badRequest('Document must be a JSON object');
        let id = doc.get('_id');
        if (id === undefined) id = crypto.randomBytes(16).toString('hex');
        const d = updateDoc(db, id, doc, {});
        this.sendJson(req, res, 201, { ok: true, id: d.id, rev: d.rev }, { Location: `http://${req.headers.host}/${dbName}/${encodeURIComponent(d.id)}` });
        return null;
      }
      throw new HttpError(405, 'method_not_allowed', 'Only DELETE,GET,HEAD,POST,PUT allowed');
    }
    if (!db) throw notFound('Database does not exist.');
    this.checkAuth(req, 'db');
    const rest = parts.slice(1);

    if (rest[0] === '_partition') {
      if (rest.length < 2) throw badRequest('invalid_partition_req');
      if (!db.partitioned) throw badRequest('database is not partitioned');
      const p = rest[1];
      validatePartition(p);
      const pBytes = Buffer.from(p, 'utf8');
      const user = qs.find(([k]) => k === 'partition');
      if (user && Buffer.compare(user[1], pBytes) !== 0) throw badRequest('Conflicting value for `partition` in query string');
      // chttpd_db:handle_partition_req: lists:ukeysort(1, [{"partition", P} | QS])
      const newQs = ukeysort([['partition', pBytes]].concat(qs));
      const sub = rest.slice(2);
      if (sub.length === 0) {
        if (m !== 'GET' && m !== 'HEAD') throw new HttpError(405, 'method_not_allowed', 'Only GET allowed');
        let live = 0;
        let del = 0;
        for (const d of db.docs.values()) {
          if (d.id.startsWith(p + ':')) { if (d.deleted) del++; else live++; }
        }
        this.sendJson(req, res, 200, {
          db_name: db.name, sizes: { active: 0n, external: 0n }, partition: p, doc_count: BigInt(live), doc_del_count: BigInt(del),
        });
        return null;
      }
      if (sub.length === 1 && sub[0] === '_all_docs') return this.allDocsReq(req, db, newQs, body, p);
      // The partition reaches the queries as a URL parameter: a query may
      // name another partition, and CouchDB then answers for that one.
      if (sub.length === 2 && sub[0] === '_all_docs' && sub[1] === 'queries') return this.multiAllDocsReq(req, db, newQs, body);
      if (sub.length === 5 && sub[0] === '_design' && sub[2] === '_view' && sub[4] === 'queries') return this.multiViewReq(req, db, sub[1], sub[3], newQs, body);
      if (sub.length === 4 && sub[0] === '_design' && sub[2] === '_view') return this.viewReq(req, db, sub[1], sub[3], newQs, body, p);
      if (sub.length > 4 && sub[0] === '_design' && sub[2] === '_view') throw viewMethodNotAllowed(db, sub[1]);
      throw notFound('missing');
    }
    if (rest.length === 1 && rest[0] === '_all_docs') return this.allDocsReq(req, db, qs, body, undefined);
    if (rest.length === 2 && rest[0] === '_all_docs' && rest[1] === 'queries') return this.multiAllDocsReq(req, db, qs, body);
    if (rest.length === 1 && rest[0] === '_bulk_docs') {
      if (m !== 'POST') throw new HttpError(405, 'method_not_allowed', 'Only POST allowed');
      requireJsonCtype(req);
      const b = parseJsonOr400(body);
      const docs = b instanceof Obj ? b.get('docs') : undefined;
      if (!Array.isArray(docs)) throw badRequest('POST body must include `docs` parameter.');
      const newEdits = b.get('new_edits') !== false;
      const results = [];
      for (const d of docs) {
        const id = d instanceof Obj && typeof d.get('_id') === 'string' ? d.get('_id') : crypto.randomBytes(16).toString('hex');
        try {
          const nd = updateDoc(db, id, d, { newEdits });
          results.push(newEdits ? { ok: true, id: nd.id, rev: nd.rev } : undefined);
        } catch (e) {
          if (!(e instanceof HttpError)) throw e;
          results.push({ id, error: e.error, reason: e.reason });
        }
      }
      this.sendJson(req, res, 201, results.filter((x) => x !== undefined));
      return null;
    }
    if (rest[0] === '_design' && rest.length >= 4 && rest[2] === '_view') {
      if (rest.length === 5 && rest[4] === 'queries') return this.multiViewReq(req, db, rest[1], rest[3], qs, body);
      if (rest.length !== 4) throw viewMethodNotAllowed(db, rest[1]);
      return this.viewReq(req, db, rest[1], rest[3], qs, body, undefined);
    }
    let docId;
    if (rest[0] === '_design' && rest.length === 2) docId = `_design/${rest[1]}`;
    else if (rest.length === 1) docId = rest[0];
    else throw notFound('missing');
    return this.docReq(req, res, db, docId, qs, body);
  }

  docReq(req, res, db, docId, qs, body) {
    const m = req.method;
    if (m === 'GET' || m === 'HEAD') {
      const d = db.docs.get(docId);
      if (!d) throw notFound('missing');
      if (d.deleted) throw notFound('deleted');
      this.sendJson(req, res, 200, docToJson(d), { ETag: `"${d.rev}"` });
      return null;
    }
    if (m === 'PUT') {
      const doc = parseJsonOr400(body);
      if (!(doc instanceof Obj)) throw badRequest('Document must be a JSON object');
      const rev = qsValue(qs, 'rev');
      const d = updateDoc(db, docId, doc, { rev: rev !== undefined ? rev : ifMatch(req) });
      this.sendJson(req, res, 201, { ok: true, id: d.id, rev: d.rev }, { ETag: `"${d.rev}"`, Location: `http://${req.headers.host}/${db.name}/${encodeURIComponent(d.id)}` });
      return null;
    }
    if (m === 'DELETE') {
      const old = db.docs.get(docId);
      if (!old || old.deleted) throw notFound(old ? 'deleted' : 'missing');
      let rev = qsValue(qs, 'rev');
      if (rev === undefined) rev = ifMatch(req);
      const pairs = [['_deleted', true]];
      if (rev !== undefined) pairs.unshift(['_rev', rev]);
      const d = updateDoc(db, docId, new Obj(pairs), {});
      this.sendJson(req, res, 200, { ok: true, id: d.id, rev: d.rev }, { ETag: `"${d.rev}"` });
      return null;
    }
    throw new HttpError(405, 'method_not_allowed', 'Only DELETE,GET,HEAD,POST,PUT,COPY allowed');
  }

  viewReq(req, db, ddocName, viewName, qs, body, partition) {
    const m = req.method;
    // chttpd_db:handle_design_req opens the design document before the
    // view handler parses any parameter.
    const ddoc = db.docs.get(`_design/${ddocName}`);
    if (!ddoc) throw notFound('missing');
    if (ddoc.deleted) throw notFound('deleted');
    let a;
    if (m === 'GET' || m === 'HEAD') {
      // chttpd_view: Keys = chttpd:qs_json_value(Req, "keys", undefined)
      const kp = qs.find(([k]) => k === 'keys');
      const keys = kp ? parseJsonOr400(kp[1]) : undefined;
      a = parseParams(qs, keys, newArgs(), {});
    } else if (m === 'POST') {
      requireJsonCtype(req);
      const b = parseJsonOr400(body);
      if (!(b instanceof Obj)) throw badRequest('Request body must be a JSON object');
      if (b.has('queries')) throw badRequest('The `queries` parameter is no longer supported at this endpoint');
      let keys = b.get('keys');
      if (keys !== undefined && !Array.isArray(keys)) throw badRequest('`keys` member must be an array.');
      if (keys === undefined) keys = undefined;
      a = newArgs();
      a.keys = keys;
      parseParams(b.pairs, keys, a, { decoded: true });
      if (Array.isArray(a.keys) && a.keys.length === 1) a.keys = undefined;
      parseParams(qs, keys, a, { keepGroupLevel: true });
    } else {
      throw new HttpError(405, 'method_not_allowed', 'Only GET,POST,HEAD allowed');
    }
    return queryView(db, ddocName, viewName, a, partition, this.logger);
  }

  allDocsReq(req, db, qs, body, partition) {
    const m = req.method;
    let a = newArgs();
    a.group = undefined;
    a.groupLevel = undefined;
    if (m === 'GET' || m === 'HEAD') {
      const kp = qs.find(([k]) => k === 'keys');
      let keys;
      if (kp) {
        keys = parseJsonOr400(kp[1]);
        if (!Array.isArray(keys)) throw badRequest('`keys` parameter must be an array.');
      }
      a.keys = keys;
      parseParams(qs, keys, a, { keepGroupLevel: true });
    } else if (m === 'POST') {
      requireJsonCtype(req);
      const b = parseJsonOr400(body);
      if (!(b instanceof Obj)) throw badRequest('Request body must be a JSON object');
      const keys = b.get('keys');
      if (keys !== undefined && !Array.isArray(keys)) throw badRequest('`keys` body member must be an array.');
      a.keys = Array.isArray(keys) ? keys : undefined;
      parseParams(b.pairs, a.keys, a, { decoded: true, keepGroupLevel: true });
      parseParams(qs, a.keys, a, { keepGroupLevel: true });
    } else {
      throw new HttpError(405, 'method_not_allowed', 'Only GET,HEAD,POST allowed');
    }
    a = queryAllDocs(db, a, partition);
    return a;
  }

  // POST /db/_design/D/_view/V/queries (chttpd_view:handle_view_req,
  // multi_query_view): the design document is opened first, then the body
  // read; the URL's parameters are every query's defaults (keys, group and
  // group_level excepted); the view is looked up; each query is parsed and
  // validated in turn, and only then do they run, in order.
  multiViewReq(req, db, ddocName, viewName, qs, body) {
    const ddoc = db.docs.get(`_design/${ddocName}`);
    if (!ddoc) throw notFound('missing');
    if (ddoc.deleted) throw notFound('deleted');
    const queries = multiQueriesOf(req, body, true);
    const defaults = parseParams(qs, undefined, newArgs(), {});
    const opened = openView(db, ddocName, viewName, this.logger);
    const prepared = queries.map((q, i) => prepareView(opened, parseQuery(q, defaults, `view query ${i}`), undefined));
    const outcomes = prepared.map((p) => outcomeOf(() => runView(p)));
    return { kind: 'multi', ops: multiQueryOps(outcomes, bufferResponse(qs)) };
  }

  // POST /db/_all_docs/queries (chttpd_db:multi_all_docs_view): as above,
  // but without a Content-Type check.
  multiAllDocsReq(req, db, qs, body) {
    const queries = multiQueriesOf(req, body, false);
    const defaults = parseParams(qs, undefined, newArgs(), {});
    const prepared = queries.map((q, i) => prepareAllDocs(db, parseQuery(q, defaults, `all_docs query ${i}`), undefined));
    const outcomes = prepared.map((a) => outcomeOf(() => runAllDocs(db, a)));
    return { kind: 'multi', ops: multiQueryOps(outcomes, bufferResponse(qs)) };
  }

  // The status fault's trailing_ms: as CouchDB does after an error in the
  // first query of a multi-query POST, the connection's handler goes on to
  // run the other queries and writes their chunks behind the error response,
  // trailing_ms later; only then does it read the connection's next request.
  trailAfter(req, res, ms) {
    const sock = res.socket;
    if (!sock) return;
    const chunked = chunkedHeader(req)['Transfer-Encoding'] !== undefined;
    const data = '\r\n{"total_rows":0,"offset":0,"rows":[\r\n\r\n]}';
    sock.pause();
    res.once('finish', () => setTimeout(() => {
      if (!sock.destroyed) {
        sock.write(chunked ? `${Buffer.byteLength(data).toString(16)}\r\n${data}\r\n0\r\n\r\n` : data);
        sock.resume();
      }
    }, ms));
  }

  // Plays multiQueryOps' steps. A 200 that CouchDB completes goes through
  // sendChunks, so the truncate and stall faults apply to it as to a view.
  async sendMulti(req, res, ops, fault) {
    if (ops[0].op === 'head' && ops[ops.length - 1].op === 'end') {
      return this.sendChunks(req, res, ops.filter((o) => o.op === 'chunk').map((o) => o.data), fault);
    }
    const sock = res.socket;
    const chunked = chunkedHeader(req)['Transfer-Encoding'] !== undefined;
    // mochiweb's write_chunk: framed on HTTP/1.1, raw on HTTP/1.0.
    const frame = (data) => (chunked ? `${Buffer.byteLength(data).toString(16)}\r\n${data}\r\n` : data);
    let errorSent = false;
    for (const o of ops) {
      if (!sock || sock.destroyed) return undefined;
      switch (o.op) {
        case 'head': res.writeHead(200, this.baseHeaders(chunkedHeader(req))); break;
        case 'chunk': await writeAsync(res, o.data); break;
        case 'error':
          // CouchDB writes what follows at once: one segment with the error.
          sock.cork();
          process.nextTick(() => sock.uncork());
          this.sendError(req, res, o.error);
          errorSent = true;
          break;
        case 'raw': sock.write(frame(o.data)); break;
        case 'response': sock.write(this.rawChunkedHead(req) + o.chunks.map(frame).join('') + (chunked ? '0\r\n\r\n' : '')); break;
        case 'end':
          if (!errorSent) res.end();
          else if (chunked) sock.write('0\r\n\r\n');
          break;
        case 'abort':
          // What was written is flushed, then the connection closes.
          sock.end();
          sock.once('finish', () => sock.destroy());
          return undefined;
        default: throw new Error(`unknown step ${o.op}`);
      }
    }
    return undefined;
  }

  // The head of a 200 written straight to the socket (a second response
  // behind an error, as CouchDB does with buffer_response=true).
  rawChunkedHead(req) {
    const h = this.baseHeaders(Object.assign({ Date: new Date().toUTCString() }, chunkedHeader(req)));
    if (/\bclose\b/i.test(req.headers.connection || '')) h.Connection = 'close';
    // mochiweb writes its headers sorted
    return 'HTTP/1.1 200 OK\r\n' + Object.keys(h).sort().map((k) => `${k}: ${h[k]}\r\n`).join('') + '\r\n';
  }

  async handleControl(req, res, rawPath, body) {
    const send = (status, obj) => {
      const b = JSON.stringify(obj) + '\n';
      res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(b) });
      res.end(b);
    };
    const sub = rawPath.replace(/^\/_double\/?/, '');
    const m = req.method;
    try {
      if (sub === 'log') {
        if (m === 'GET') return send(200, this.log);
        if (m === 'DELETE') { this.log = []; return send(200, { ok: true }); }
      } else if (sub === 'faults') {
        if (m === 'GET') return send(200, this.fault);
        if (m === 'POST' || m === 'PUT') {
          const f = JSON.parse(body.toString('utf8') || '{}');
          const modes = ['none', 'slow', 'stall', 'drip', 'status', 'garbage', 'truncate', 'reset', 'huge', 'ignore_limit'];
          if (!modes.includes(f.mode)) return send(400, { error: 'bad_request', reason: `mode must be one of ${modes.join(', ')}` });
          if (f.count !== undefined && !(Number.isInteger(f.count) && f.count >= 0)) return send(400, { error: 'bad_request', reason: 'count must be a non-negative integer' });
          this.fault = f.mode === 'none' ? { mode: 'none' } : f;
          return send(200, { ok: true, fault: this.fault });
        }
        if (m === 'DELETE') { this.fault = { mode: 'none' }; return send(200, { ok: true }); }
      } else if (sub === 'stats') {
        if (m === 'GET') return send(200, { connections_open: this.openConns, connections_total: this.totalConns, requests_total: this.requestSeq });
      } else if (sub === 'reset') {
        if (m === 'POST') { this.log = []; this.fault = { mode: 'none' }; return send(200, { ok: true }); }
      } else if (sub === 'fixtures') {
        if (m === 'POST') {
          const fx = decodeJson(body);
          this.loadFixtures({ dbs: fx instanceof Obj ? fx.get('dbs') : undefined });
          return send(200, { ok: true });
        }
      } else {
        return send(404, { error: 'not_found', reason: 'unknown control endpoint' });
      }
      return send(405, { error: 'method_not_allowed', reason: 'method not allowed here' });
    } catch (e) {
      return send(400, { error: 'bad_request', reason: String(e && e.message) });
    }
  }
}

// A path below .../_view/V other than /queries: no clause of
// chttpd_view:handle_view_req matches it, once the design document is open.
function viewMethodNotAllowed(db, ddocName) {
  const ddoc = db.docs.get(`_design/${ddocName}`);
  if (!ddoc) return notFound('missing');
  if (ddoc.deleted) return notFound('deleted');
  return new HttpError(405, 'method_not_allowed', 'Only GET,POST,HEAD allowed', { Allow: 'GET,POST,HEAD' });
}

function isMultiQueryPath(parts) {
  const n = parts.length;
  return n >= 3 && parts[n - 1] === 'queries' && (parts[n - 2] === '_all_docs' || parts[n - 3] === '_view');
}

// The request log's view of a multi-query body: its `queries` as parsed
// JSON (numbers beyond 2^53 lose precision: the entry's body has the text),
// or null when the body has no `queries` array.
function queriesForLog(body) {
  try {
    const b = JSON.parse(body.toString('utf8'));
    return b !== null && typeof b === 'object' && Array.isArray(b.queries) ? b.queries : null;
  } catch (e) {
    return null;
  }
}

// The `queries` of a multi-query POST (couch_mrview_util:get_view_queries),
// with the checks before it in CouchDB's order.
function multiQueriesOf(req, body, checkCtype) {
  if (req.method !== 'POST') throw new HttpError(405, 'method_not_allowed', 'Only POST allowed', { Allow: 'POST' });
  if (checkCtype) requireJsonCtype(req);
  const b = parseJsonOr400(body);
  if (!(b instanceof Obj)) throw badRequest('Request body must be a JSON object');
  const queries = b.get('queries');
  if (queries === undefined) throw badRequest('POST body must include `queries` parameter.');
  if (!Array.isArray(queries)) throw badRequest('`queries` member must be an array.');
  return queries;
}

// One query over a copy of the URL's arguments: parse_params(Query,
// undefined, Args1, [decoded]) resets keys, group and group_level. A query
// that is not an object has no clause in CouchDB (fun({Query}) -> ...).
function parseQuery(q, defaults, where) {
  if (!(q instanceof Obj)) throw functionClause(where);
  const a = Object.assign({}, defaults, { extra: defaults.extra.slice() });
  return parseParams(q.pairs, undefined, a, { decoded: true });
}

function outcomeOf(run) {
  try {
    return { result: run() };
  } catch (e) {
    if (e instanceof HttpError) return { error: e };
    throw e;
  }
}

// chttpd:buffer_response/1: the first buffer_response in the URL, "true" or
// "false"; the config default is false.
function bufferResponse(qs) {
  const p = qs.find(([k]) => k === 'buffer_response');
  return p !== undefined && p[1].toString('latin1') === 'true';
}

function ukeysort(pairs) {
  const withIdx = pairs.map((p, k) => [p, k]);
  withIdx.sort((x, y) => Buffer.compare(Buffer.from(x[0][0], 'latin1'), Buffer.from(y[0][0], 'latin1')) || x[1] - y[1]);
  const out = [];
  for (const [p] of withIdx) if (!out.length || out[out.length - 1][0] !== p[0]) out.push(p);
  return out;
}

function qsValue(qs, name) {
  const p = qs.find(([k]) => k === name);
  return p ? p[1].toString('utf8') : undefined;
}

function ifMatch(req) {
  const h = req.headers['if-match'];
  if (!h) return undefined;
  return h.replace(/^"|"$/g, '');
}

function requireJsonCtype(req) {
  const ct = (req.headers['content-type'] || '').split(';')[0].trim().toLowerCase();
  if (ct !== 'application/json') throw new HttpError(415, 'bad_content_type', 'Content-Type must be application/json');
}

function dbInfo(db) {
  let live = 0;
  let del = 0;
  for (const d of db.docs.values()) { if (d.deleted) del++; else live++; }
  return {
    instance_start_time: '0',
    db_name: db.name,
    purge_seq: '0-double',
    update_seq: `${db.seq}-double`,
    sizes: { file: 0n, external: 0n, active: 0n },
    props: db.partitioned ? { partitioned: true } : {},
    doc_del_count: BigInt(del),
    doc_count: BigInt(live),
    disk_format_version: 8n,
    compact_running: false,
    cluster: { q: BigInt(db.q), n: 1n, w: 1n, r: 1n },
  };
}

// Chunked for HTTP/1.1 (also announced on HEAD); an HTTP/1.0 client gets
// the body up to the connection close, as mochiweb does.
function chunkedHeader(req) {
  return req.httpVersionMajor > 1 || (req.httpVersionMajor === 1 && req.httpVersionMinor >= 1) ? { 'Transfer-Encoding': 'chunked' } : {};
}

function sleep(ms) { return new Promise((r) => setTimeout(r, ms)); }

function writeAsync(res, data) {
  return new Promise((resolve) => {
    if (res.destroyed || res.socket === null) { resolve(false); return; }
    const ok = res.write(data);
    if (ok) { resolve(true); return; }
    const onDrain = () => { cleanup(); resolve(true); };
    const onClose = () => { cleanup(); resolve(false); };
    const cleanup = () => { res.off('drain', onDrain); res.off('close', onClose); };
    res.on('drain', onDrain);
    res.on('close', onClose);
  });
}

// Plain JS values (from a --fixtures-js generator) to EJSON, through JSON
// text like everything CouchDB receives. Functions become their source.
function toEjsonLoose(v) {
  const text = JSON.stringify(v, (k, x) => (typeof x === 'function' ? x.toString() : x));
  return decodeJson(Buffer.from(text === undefined ? 'null' : text, 'utf8'));
}

/* ------------------------------------------------------------------------ *
 * 11. Command line.
 * ------------------------------------------------------------------------ */

function parseCli(argv) {
  const o = { port: 5984, host: '127.0.0.1', q: 2, idleTimeout: 300000, verbose: false };
  for (let k = 0; k < argv.length; k++) {
    const arg = argv[k];
    const next = () => {
      if (k + 1 >= argv.length) throw new Error(`${arg} needs a value`);
      return argv[++k];
    };
    switch (arg) {
      case '--port': o.port = parseInt(next(), 10); break;
      case '--host': o.host = next(); break;
      case '--fixtures': o.fixtures = next(); break;
      case '--fixtures-js': o.fixturesJs = next(); break;
      case '--admin': o.admin = next(); if (o.admin.indexOf(':') < 0) throw new Error('--admin takes USER:PASS'); break;
      case '--q': o.q = parseInt(next(), 10); break;
      case '--idle-timeout': o.idleTimeout = parseInt(next(), 10); break;
      case '--verbose': o.verbose = true; break;
      case '-h': case '--help':
        process.stdout.write('usage: couchdb-double.js --port PORT [--host 127.0.0.1] [--fixtures FILE.json | --fixtures-js FILE.js]\n'
          + '                         [--admin USER:PASS] [--q N] [--idle-timeout MS] [--verbose]\n'
          + 'A TEST DOUBLE of CouchDB 3.4 view semantics; see t/double/README.md.\n');
        process.exit(0);
        break;
      default: throw new Error(`unknown argument ${arg}`);
    }
  }
  if (!(o.q >= 1)) throw new Error('--q must be >= 1');
  return o;
}

async function main() {
  let o;
  try { o = parseCli(process.argv.slice(2)); } catch (e) {
    process.stderr.write(`couchdb-double: ${e.message}\n`);
    process.exit(2);
  }
  const d = new Double(o);
  try {
    if (o.fixtures) {
      const fx = decodeJson(fs.readFileSync(o.fixtures));
      if (!(fx instanceof Obj)) throw new Error('fixtures file must hold a JSON object');
      d.loadFixtures({ dbs: fx.get('dbs') });
    }
    if (o.fixturesJs) {
      // eslint-disable-next-line global-require, import/no-dynamic-require
      let gen = require(path.resolve(o.fixturesJs));
      if (gen && typeof gen.default === 'function') gen = gen.default;
      const fx = typeof gen === 'function' ? await gen() : gen;
      d.loadFixtures({ dbs: toEjsonLoose((fx && fx.dbs) || {}) });
    }
  } catch (e) {
    process.stderr.write(`couchdb-double: cannot load fixtures: ${e.message}\n`);
    process.exit(2);
  }
  const addr = await d.listen(o.port, o.host);
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  process.stdout.write(`listening http://${host}:${addr.port}\n`);
  const stop = () => { d.server.close(); d.server.closeAllConnections(); process.exit(0); };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

module.exports = {
  Obj, HIGH, decodeJson, encodeJson, encodeDouble, IcuCollation, rawCmp, termEq, crc32, shardOfHashKey,
  parseQs, erlP, Double, JsonError, stringifyWithoutRecursion,
};

if (require.main === module) main();
