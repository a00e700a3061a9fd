// SPDX-License-Identifier: Apache-2.0
// CouchDB's view offsets and startkey_docid for the embedded backend
// (server.js), which pouchdb-abstract-mapreduce lacks: it answers every map
// query with offset = skip and ignores startkey_docid. mod_couchpage numbers
// its pages by the differences of CouchDB's offsets, so with these the demo's
// pages show where they are ("6–10 of 11") and have a Last link.
//
// CouchDB 3.4 (couch_mrview:map_fold, fabric_view_map; t/double/ follows
// it): offset = min(total_rows, R + skip), where R is the number of the
// index's rows that come before the query's start in the query's direction
// (read descending, the rows after it in ascending order), whatever the
// limit (limit=0 probes) and wherever the range ends. The start is
// (startkey, startkey_docid) when both are given: ascending the rows from
// that (key, docid) on, descending that entry and the rows before it;
// without a docid, ascending the key's first row, descending its last.
//
// How: pouchdb-abstract-mapreduce keeps a view's index as the documents of a
// database of its own ('DB-mrview-HASH'), one per row, whose _id is the
// row's [key, docid] as pouchdb-collate's indexable string, and reads a page
// with one allDocs on it, inside the view's task queue (no index update runs
// meanwhile). This module keeps, per index database, its row ids in the
// index's order in memory (read once, then kept up to date from the writes
// that update the index), so that R is a binary search: a page deep in
// 100,000 rows costs what the first does. The query (the `query` method
// server.js gives PouchDB) runs in an AsyncLocalStorage context that carries
// startkey_docid in and the offset out; the index's allDocs, called in that
// context, moves its start to (startkey, startkey_docid) and counts R.
//
// Not covered: endkey_docid (ignored, as before) and `keys` queries
// (offset = skip), which mod_couchpage never sends; and _all_docs, which is
// pouchdb's allDocs of the database itself (offset = skip): the module then
// numbers such a location's later pages relative to themselves.
'use strict';

const { AsyncLocalStorage } = require('async_hooks');

// The index databases pouchdb-abstract-mapreduce makes (createView).
const INDEX_DB = /-mrview-/;

// LevelDB orders keys by their UTF-8 bytes, that is by code point. JavaScript
// compares UTF-16 code units, which puts U+E000..U+FFFF after the surrogate
// pairs of U+10000 and up; mapping the units first gives code point order.
function codeUnitRank(u) {
  if (u >= 0xd800 && u <= 0xdfff) return u + 0x2000;
  if (u >= 0xe000) return u - 0x800;
  return u;
}

function compareCodePoints(a, b) {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i), y = b.charCodeAt(i);
    if (x !== y) return codeUnitRank(x) - codeUnitRank(y);
  }
  return a.length - b.length;
}

// The ids of an index's rows, in the index's order.
class RowIds {
  constructor(ids) {
    for (let i = 1; i < ids.length; i++) {
      if (compareCodePoints(ids[i - 1], ids[i]) >= 0) {
        throw new Error(`view index rows out of order: ${JSON.stringify(ids[i - 1])} before ${JSON.stringify(ids[i])}`);
      }
    }
    this.ids = ids;
  }

  get size() { return this.ids.length; }

  // How many ids sort before `id` (or, with `orEqual`, before or at it).
  countBelow(id, orEqual) {
    let lo = 0, hi = this.ids.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const c = compareCodePoints(this.ids[mid], id);
      if (c < 0 || (orEqual && c === 0)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  has(id) {
    const at = this.countBelow(id, false);
    return at < this.ids.length && this.ids[at] === id;
  }

  // One index update: rows written (present afterwards) and rows deleted.
  apply(written, deleted) {
    const gone = new Set(deleted);
    const added = [...new Set(written)].filter((id) => !gone.has(id) && !this.has(id))
      .sort(compareCodePoints);
    const kept = gone.size ? this.ids.filter((id) => !gone.has(id)) : this.ids;
    if (!added.length) {
      this.ids = kept;
      return;
    }
    const merged = new Array(kept.length + added.length);
    let i = 0, j = 0, k = 0;
    while (i < kept.length && j < added.length) {
      merged[k++] = compareCodePoints(kept[i], added[j]) < 0 ? kept[i++] : added[j++];
    }
    while (i < kept.length) merged[k++] = kept[i++];
    while (j < added.length) merged[k++] = added[j++];
    this.ids = merged;
  }
}

// The rows before `start` (an indexable string, or undefined: the index's
// first row) when an allDocs reads from there in that direction: ascending
// it reads ids >= start, descending ids <= start.
function rowsBefore(rowIds, start, descending) {
  if (start === undefined) return 0;
  return descending ? rowIds.size - rowIds.countBelow(start, true) : rowIds.countBelow(start, false);
}

// Installs the offsets on a PouchDB class (before any database is opened).
// collate: the pouchdb-collate that pouchdb-abstract-mapreduce uses.
// Returns { query(runQuery, opts) }: runs a view query (runQuery() returns
// pouchdb-abstract-mapreduce's promise) with CouchDB's offset and
// startkey_docid.
function installOffsets(PouchDB, collate) {
  const queryContext = new AsyncLocalStorage();
  const rowIdsOf = new Map(); // index database name -> RowIds
  const { allDocs, bulkDocs } = PouchDB.prototype;

  async function loadRowIds(db) {
    let rowIds = rowIdsOf.get(db.name);
    if (!rowIds) {
      const all = await allDocs.call(db, {});
      rowIds = new RowIds(all.rows.map((row) => row.id));
      rowIdsOf.set(db.name, rowIds);
    }
    return rowIds;
  }

  // The one allDocs a map query makes on its index (never with `keys`: the
  // index update reads with keys), in the query's context.
  async function readIndex(db, opts, query) {
    query.read = true;
    let readOpts = opts;
    if (query.startkeyDocid !== undefined) {
      // the row (key, docid) and, descending, every row of that entry
      // ([key, docid, n] for a document's repeated key) before it
      const start = query.descending ? [query.startkey, query.startkeyDocid, {}]
        : [query.startkey, query.startkeyDocid];
      readOpts = { ...opts, startkey: collate.toIndexableString(start) };
    }
    const rowIds = await loadRowIds(db);
    query.totalRows = rowIds.size;
    query.offset = Math.min(rowIds.size,
      rowsBefore(rowIds, readOpts.startkey, !!readOpts.descending) + (readOpts.skip || 0));
    return allDocs.call(db, readOpts);
  }

  // The index's row ids follow its updates; after a write that failed in
  // part they are read again.
  async function writeIndex(db, req, opts) {
    const result = await bulkDocs.call(db, req, opts);
    const rowIds = rowIdsOf.get(db.name);
    if (rowIds) {
      const docs = (Array.isArray(req) ? req : req.docs).filter((doc) => !doc._id.startsWith('_local/'));
      if (result.some((r) => r.error)) {
        rowIdsOf.delete(db.name);
      } else {
        rowIds.apply(docs.filter((doc) => !doc._deleted).map((doc) => doc._id),
          docs.filter((doc) => doc._deleted).map((doc) => doc._id));
      }
    }
    return result;
  }

  // (pouch's methods take a callback as their last argument, never an
  // undefined one)
  function withCallback(promise, callback) {
    if (callback) promise.then((res) => callback(null, res), (err) => callback(err));
    return promise;
  }

  PouchDB.plugin({
    allDocs(opts, callback) {
      if (typeof opts === 'function') [callback, opts] = [opts, {}];
      opts = opts || {};
      const query = queryContext.getStore();
      if (!query || query.read || !INDEX_DB.test(this.name) || 'keys' in opts) {
        return callback ? allDocs.call(this, opts, callback) : allDocs.call(this, opts);
      }
      return withCallback(readIndex(this, opts, query), callback);
    },
    bulkDocs(req, opts, callback) {
      if (typeof opts === 'function') [callback, opts] = [opts, {}];
      if (!INDEX_DB.test(this.name) || !rowIdsOf.has(this.name)) {
        return callback ? bulkDocs.call(this, req, opts || {}, callback) : bulkDocs.call(this, req, opts || {});
      }
      return withCallback(writeIndex(this, req, opts || {}), callback);
    },
  });
  PouchDB.on('destroyed', (name) => rowIdsOf.delete(name));

  return {
    query(runQuery, opts) {
      const hasStart = 'startkey' in opts || 'start_key' in opts;
      const docid = 'startkey_docid' in opts ? opts.startkey_docid : opts.start_key_doc_id;
      const query = {
        descending: opts.descending === true || opts.descending === 'true',
        startkey: 'startkey' in opts ? opts.startkey : opts.start_key,
        // CouchDB uses startkey_docid only with a startkey
        startkeyDocid: hasStart && typeof docid === 'string' ? docid : undefined,
        read: false,
      };
      if ('keys' in opts) return runQuery();
      return queryContext.run(query, runQuery).then((res) => {
        // map rows (reduce results have no offset)
        if (query.read && res && 'offset' in res) {
          res.total_rows = query.totalRows;
          res.offset = query.offset;
        }
        return res;
      });
    },
  };
}

// express-pouchdb JSON-parses every query parameter; CouchDB takes a docid
// as it is, so that "123" or "null" stays that string. This middleware, run
// before express-pouchdb, quotes the docid parameters, which it then parses
// back into the strings the client sent.
function rawDocidParams(req, res, next) {
  for (const name of ['startkey_docid', 'start_key_doc_id', 'endkey_docid', 'end_key_doc_id']) {
    if (req.query && typeof req.query[name] === 'string') req.query[name] = JSON.stringify(req.query[name]);
  }
  next();
}

module.exports = { installOffsets, rawDocidParams, RowIds, compareCodePoints };
