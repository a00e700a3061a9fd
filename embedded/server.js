#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
// The demo's embedded CouchDB-compatible backend: pouchdb-server's own parts
// (express-pouchdb, PouchDB on LevelDB) with the data on disk, so that a
// second start finds the fixtures and their view indexes ready.
//
//   node embedded/server.js --dir DIR --port PORT [--host 127.0.0.1]
//
// Differs from `pouchdb-server --dir DIR` in one respect: view functions.
// pouchdb-mapreduce evaluates the map function in a new node:vm context for
// every document; on 100,000 documents that is most of two minutes and 2 GB.
// Here a view update compiles it once, in one fresh context (as CouchDB's
// couchjs keeps one per design document), and documents and emitted rows
// cross into and out of that context as JSON text, as they cross CouchDB's
// process boundary. Reduce functions are refused with a clear error: the
// demo's views have none (pouchdb-server itself, which the tests run, has
// them). leveldown loads its prebuilt binary, so `npm ci --ignore-scripts`
// is enough.
//
// And view queries answer with CouchDB's offset and honour startkey_docid
// (offsets.js), so that mod_couchpage knows every page's position. Mango's
// _index and _find are served too (pouchdb-find, as pouchdb-server serves
// them), for the demo's _find location.
'use strict';

const path = require('path');
const vm = require('vm');
const { createRequire } = require('module');

// pouchdb-server's dependencies, resolved the way pouchdb-server resolves them.
const fromServer = createRequire(require.resolve('pouchdb-server/package.json'));
const express = fromServer('express');
const expressPouchDB = fromServer('express-pouchdb');
const createAbstractMapReduce = fromServer('pouchdb-abstract-mapreduce');
const { NotFoundError } = fromServer('pouchdb-mapreduce-utils');
// the pouchdb-collate that pouchdb-abstract-mapreduce builds its index keys with
const collate = createRequire(fromServer.resolve('pouchdb-abstract-mapreduce'))('pouchdb-collate');
const { installOffsets, rawDocidParams } = require('./offsets.js');

function usage(msg) {
  console.error(`server: ${msg}`);
  console.error('usage: node server.js --dir DIR --port PORT [--host HOST]');
  process.exit(2);
}

function parseArgs(argv) {
  const opt = { dir: '', port: 0, host: '127.0.0.1' };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i], v = argv[i + 1];
    if (a === '--dir' && v) opt.dir = argv[++i];
    else if (a === '--port' && /^[0-9]+$/.test(v || '')) opt.port = Number(argv[++i]);
    else if (a === '--host' && v) opt.host = argv[++i];
    else usage(`bad argument ${a}`);
  }
  if (!opt.dir) usage('no --dir');
  if (!(opt.port > 0 && opt.port < 65536)) usage('no --port');
  return opt;
}

// The names CouchDB's query server gives a map function, besides emit.
const SANDBOX_PRELUDE = `
  var log = function () {};
  var isArray = Array.isArray;
  var toJSON = JSON.stringify;`;

// mapper(source, emit) for pouchdb-abstract-mapreduce: called once per view
// update; the function it returns is called once per document.
function mapper(source, emit) {
  const context = vm.createContext({});
  const mapJson = vm.runInContext(`(function () {
    'use strict';
    var emitted = [];
    var emit = function (key, value) { emitted.push([key, value]); };
    ${SANDBOX_PRELUDE}
    var map = (${String(source).replace(/;\s*$/, '')});
    return function (docJson) {
      emitted = [];
      map(JSON.parse(docJson));
      return JSON.stringify(emitted);
    };
  })()`, context, { filename: 'map function' });
  return function (doc) {
    for (const [key, value] of JSON.parse(mapJson(JSON.stringify(doc)))) emit(key, value);
  };
}

function reducer() {
  throw new Error('the demo\'s embedded backend does not run reduce functions (query with reduce=false, or use CouchDB)');
}

function ddocValidator(ddoc, viewName) {
  const view = ddoc.views && ddoc.views[viewName];
  if (typeof view.map !== 'string') {
    throw new NotFoundError(`ddoc ${ddoc._id} has no string view named ${viewName}, instead found object of type: ${typeof view.map}`);
  }
}

const views = createAbstractMapReduce('mrviews', mapper, reducer, ddocValidator);

const opt = parseArgs(process.argv.slice(2));
const dir = path.resolve(opt.dir);
require('fs').mkdirSync(dir, { recursive: true });

const PouchCore = fromServer('pouchdb-core')
  .plugin(fromServer('pouchdb-adapter-http'))
  .plugin(fromServer('pouchdb-adapter-leveldb'));
const offsets = installOffsets(PouchCore, collate);
const PouchDB = PouchCore
  .plugin({
    query(fun, opts, callback) {
      if (typeof opts === 'function') [callback, opts] = [opts, {}];
      const answer = offsets.query(() => views.query.call(this, fun, opts || {}), opts || {});
      if (callback) answer.then((res) => callback(null, res), (err) => callback(err));
      return answer;
    },
    viewCleanup(callback) { return views.viewCleanup.call(this, callback); },
  })
  .defaults({ prefix: dir + path.sep });

// LevelDB takes a lock per database: a second server on the same directory
// fails here, at start, rather than on its first request.
new PouchDB('pouch__all_dbs__').info().then(() => {
  const app = express();
  app.use(rawDocidParams);
  app.use(expressPouchDB(PouchDB, { mode: 'minimumForPouchDB', overrideMode: { include: ['routes/find'] } }));
  const server = app.listen(opt.port, opt.host, () => {
    console.log(`server: listening on http://${opt.host}:${opt.port}/, data in ${dir}`);
  });
  server.on('error', (err) => {
    console.error(`server: ${err.message}`);
    process.exit(1);
  });
}, (err) => {
  console.error(`server: cannot open the data in ${dir}: ${err.message}` +
    (/lock/i.test(err.message) ? ' (another server, e.g. another scripts/demo, uses it)' : ''));
  process.exit(1);
});
