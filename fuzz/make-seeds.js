#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
// Real-sized seeds for the fuzz targets, from a real CouchDB: it fills a
// database with documents of some 5 KB (quotes, '<', '&', NULs, escapes,
// non-ASCII, big and small numbers, values nested up to 1,500 deep), asks
// the views the module would ask for a page of 16 documents (some 80 KB) and
// the pages around it, and writes what CouchDB answers, byte for byte:
//
//   DIR/fuzz_view_response/NAME   one view response
//   DIR/fuzz_page/NAME            "C L R forward|backward|token|ahead" (fuzz_page.c)
//
//   COUCHDB_URL=http://admin:secret@127.0.0.1:5984 fuzz/make-seeds.js [DIR]
//
// DIR defaults to out/fuzz/seeds. The documents come from a fixed seed, so
// a run makes the same answers (CouchDB's revisions are digests of the
// documents). The database couchpage_fuzz_seeds is made anew each run and
// removed after. A long run grows the corpora from these (fuzz/run.sh with
// FUZZ_SEEDS=DIR), and `fuzz/run.sh merge` keeps what they add.
'use strict';

const fs = require('fs');
const path = require('path');

const base = process.env.COUCHDB_URL;
if (!base) {
    console.error('fuzz/make-seeds.js: set COUCHDB_URL (a real CouchDB, admin credentials in it)');
    process.exit(2);
}
const out = process.argv[2] || path.join(__dirname, '..', 'out', 'fuzz', 'seeds');
const url = new URL(base);
const auth = 'Basic ' + Buffer.from(decodeURIComponent(url.username) + ':'
                                    + decodeURIComponent(url.password)).toString('base64');
url.username = '';
url.password = '';
const db = url.origin + '/couchpage_fuzz_seeds';

const COUNT = 16;          // rows a page: fuzz_page's header byte '0'
const LINKS = 2;           // pages linked either side: header byte '2'
const SLACK = 3;           // CP_PLAN_BACKWARD_SLACK

// A fixed pseudo-random sequence (mulberry32), so every run writes the same.
let state = 0x5eed;
function random() {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const pick = (list) => list[Math.floor(random() * list.length)];

const words = ['alpha', 'Beta', 'gamma', 'Ωmega', 'naïve', 'café', '日本語', 'emoji 😀',
    'quote "q"', "it's", '<b>bold</b>', 'a & b', 'tab\tend', 'line\nbreak', 'nul\u0000byte',
    'back\\slash', '\u2028sep', 'x'.repeat(40)];

function text(n) {
    let s = '';
    while (s.length < n) s += pick(words) + ' ';
    return Array.from(s).slice(0, n).join(''); // whole characters: CouchDB refuses a lone surrogate
}

// A value nested depth levels: arrays and objects in turn.
function nested(depth) {
    let v = pick([1, 'leaf "x"', null, true, -0.5, 12345678901234567890]);
    for (let d = 0; d < depth; d++) v = d % 2 ? [v, d] : { ['l' + d]: v, q: "'" };
    return v;
}

const numbers = [0, -1, 1.5, 1e300, -1e-300, 9007199254740993, 123456789012345680000,
    2147483648, -9223372036854775808, 3.141592653589793];

function documents() {
    const docs = [];
    for (let i = 0; i < 240; i++) {
        docs.push({
            _id: 'doc-' + String(i).padStart(4, '0') + (i % 11 === 0 ? ' "quoted" <&>' : ''),
            title: i % 13 === 0 ? pick(words) : text(12 + Math.floor(random() * 40)),
            group: pick(['red', 'green', 'blue', 'ünïcode', '"q"']),
            n: pick(numbers),
            tags: [pick(words), pick(words), pick(words)],
            body: text(3000 + Math.floor(random() * 2000)),
            nested: nested(2 + Math.floor(random() * 60)),
            a: { b: [i, { c: text(30) }] },
        });
    }
    // values nested past what the readers take (simdjson's and jansson's depths)
    for (const depth of [200, 1000, 1500]) {
        docs.push({ _id: 'deep-' + depth, deep: nested(depth) });
    }
    return docs;
}

const design = {
    _id: '_design/seeds',
    views: {
        by_title: { map: 'function (doc) { if (doc.title !== undefined) emit(doc.title, { title: doc.title, n: doc.n }); }' },
        // one document emits each tag twice: entries of several rows, duplicate keys
        by_tag: { map: 'function (doc) { (doc.tags || []).forEach(function (t) { emit(t, null); emit(t, doc.n); }); }' },
        by_path: { map: 'function (doc) { if (doc.group) emit([doc.group, doc.n, doc.title], doc.nested); }' },
        by_group: {
            map: 'function (doc) { if (doc.group) emit([doc.group, doc.tags[0], doc.nested], 1); }',
            reduce: '_count',
        },
        deep: { map: 'function (doc) { if (doc.deep) emit(doc._id, doc.deep); }' },
    },
};

async function couch(method, where, body) {
    const res = await fetch(where, {
        method,
        headers: { Authorization: auth, 'Content-Type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
    });
    const raw = await res.text();
    if (!res.ok && !(method === 'DELETE' && res.status === 404)) {
        throw new Error(`${method} ${where}: ${res.status} ${raw.slice(0, 200)}`);
    }
    return raw;
}

// A view's answer, as CouchDB writes it; params are JSON-encoded as the module does.
function view(name, params) {
    const q = Object.entries(params)
        .map(([k, v]) => k + '=' + encodeURIComponent(typeof v === 'string' && k === 'startkey_docid' ? v : JSON.stringify(v)))
        .join('&');
    return couch('GET', `${db}/${name.startsWith('_') ? name : '_design/seeds/_view/' + name}?${q}`);
}

function write(target, name, data) {
    fs.mkdirSync(path.join(out, target), { recursive: true });
    fs.writeFileSync(path.join(out, target, name), data);
}

// fuzz_page's input: the header bytes (count 16, LINKS, flags), then the parts.
function page(flags, forward, backward, token, ahead) {
    return Buffer.concat([Buffer.from('0' + LINKS + flags), Buffer.from(forward), Buffer.from('|'),
        Buffer.from(backward), Buffer.from('|'), Buffer.from(token), Buffer.from('|'),
        Buffer.from(ahead)]);
}

// The first, second and last pages of a view, as the module asks for them.
async function pages(name, params, grouped) {
    const ahead = LINKS * COUNT + 1;
    const keys = Object.assign({}, params);
    delete keys.include_docs;
    const first = await view(name, Object.assign({ limit: COUNT + 1 }, params));
    const firstAhead = await view(name, Object.assign({ limit: ahead }, keys));
    write('fuzz_view_response', name + '-first', first);
    write('fuzz_view_response', name + '-ahead', firstAhead);
    write('fuzz_page', name + '-first', page('0', first, '', '', firstAhead));

    // the second page starts at row COUNT of the first answer read ahead
    const row = JSON.parse(firstAhead).rows[COUNT];
    const token = JSON.stringify(grouped ? [row.key] : [row.key, row.id]);
    const from = grouped ? { startkey: row.key } : { startkey: row.key, startkey_docid: row.id };
    const forward = await view(name, Object.assign({ limit: COUNT + 1 }, params, from));
    const backward = await view(name, Object.assign(
        { limit: grouped ? LINKS * COUNT + 1 : LINKS * COUNT + 1 + SLACK, descending: true },
        keys, from));
    const second = await view(name, Object.assign({ limit: ahead }, keys, from));
    write('fuzz_view_response', name + '-backward', backward);
    write('fuzz_page', name + '-second', page('4', forward, backward, token, second));

    // the last page: the tail read back from the end (without documents:
    // with them it is three pages, too big to mutate quickly), and the
    // range start probe
    const tail = await view(name, Object.assign(
        { limit: (1 + LINKS) * COUNT + (grouped ? 1 : SLACK), descending: true }, keys));
    const probe = await view(name, Object.assign({ limit: 0 }, keys));
    write('fuzz_view_response', name + '-tail', tail);
    write('fuzz_page', name + '-last', page('2', probe, tail, 'last', ''));
}

async function main() {
    await couch('DELETE', db);
    await couch('PUT', db);
    await couch('POST', db + '/_bulk_docs', { docs: documents().concat([design]) });

    await pages('by_title', { include_docs: true }, false);
    await pages('by_tag', { include_docs: true }, false);
    await pages('by_path', {}, false);
    await pages('by_group', { group: true }, true);
    write('fuzz_view_response', 'all-docs-include-docs',
          await view('_all_docs', { include_docs: true, limit: COUNT + 1 }));
    write('fuzz_view_response', 'deep', await view('deep', {}));
    write('fuzz_view_response', 'by-group-level-1', await view('by_group', { group_level: 1 }));
    await couch('DELETE', db);
}

main().catch((err) => {
    console.error('fuzz/make-seeds.js: ' + err.message);
    process.exit(1);
});
