#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
// Issue 40's mechanisms, measured on bench/ties.js's data (bench_ties, loaded
// by `node bench/ties.js load URL` first): how each starts a _find page at
// its boundary row, what it examines (execution_stats), what it costs, and
// whether its rows are _find's rows exactly. Straight to CouchDB, no httpd.
//
//   node bench/ties-mechanisms.js URL [NODE_URL ...] > report.md
//
// URL: the CouchDB (user:pass@ allowed); NODE_URLs: the other nodes of its
// cluster, whose _find tie order is compared with URL's. Adds a design
// document _design/ties-mech to bench_ties with JSON indexes on [cat, _id]
// and [day, _id]. RUNS (environment, default 15): timed queries per
// mechanism and page (the median is printed). Writes the raw figures as
// JSON to RAW (environment) when set.
//
// Mechanisms, for a page of 20 (limit 21) after the boundary row b (value
// v of the sort field F, id i):
//   (a) the module's keyset query: {"$and": [SEL, {"$and": [{F: {"$gte": v}},
//       {"$or": [{F: {"$gt": v}}, {F: {"$eq": v}, "_id": {"$gt": i}}]}]}]}
//   (b) CouchDB's bookmark page of SEL (the bookmark from a _find of that
//       many rows)
//   (c) the index's view: GET .../_view/by-F?startkey=[v]&startkey_docid=i
//       &include_docs=true&reduce=false&limit=22 (b's own row, the page, one
//       more); with a residual condition the rows are filtered here
//   (d) an index [F, _id]: {"$and": [SEL, {F: {"$eq": v}, "_id": {"$gt": i}}]}
//       sorted [F, _id], then, when the tie group ends within the page,
//       {"$and": [SEL, {F: {"$gt": v}}]} for the rest; (d1) the same first
//       query through the index [F] alone
//   (f) _explain of each: the index, its fields, the key range
// and, on a scratch database, the bookmark's page and the view's after the
// boundary row was edited or deleted (PART=moved: that alone; PART=order:
// the orders alone).
'use strict';

const { CASES, client } = require('./ties.js');

const RUNS = Number(process.env.RUNS || 15);
const SIZE = 20;
const DB = 'bench_ties';
const MECH = {
  _id: '_design/ties-mech', language: 'query', indexes: [
    { index: { fields: ['cat', '_id'] }, ddoc: 'ties-mech', name: 'by-cat-id', type: 'json' },
    { index: { fields: ['day', '_id'] }, ddoc: 'ties-mech', name: 'by-day-id', type: 'json' },
  ],
};
// the pages measured: rows deep in a tie group, and one that crosses into
// the next group (cat: "announcements" ends at row 900)
const ROWS = { cat: [800, 2800, 4000, 890], 'cat-tags': [800, 4000, 852], day: [800, 4000] };

const median = (a) => { const s = [...a].sort((x, y) => x - y); return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2; };
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
const hasTag = (tags) => (d) => Array.isArray(d.tags) && d.tags.some((t) => tags.includes(t));

// The boundary row moved or deleted between two pages: CouchDB's bookmark
// page against the view read from the boundary's position, on a scratch
// database of 60 documents (cat "a" for d000..d029, "b" after), deleted at
// the end. The page after d011 is d012 onwards, the boundary itself gone.
async function moved(couch) {
  const db = '/ties_scratch';
  await couch('DELETE', db, undefined, [200, 404]);
  await couch('PUT', db, undefined, [201]);
  await couch('POST', `${db}/_index`, { index: { fields: ['cat'] }, ddoc: 's', name: 'by-cat', type: 'json' });
  const docs = Array.from({ length: 60 }, (_, i) => ({ _id: `d${String(i).padStart(3, '0')}`, cat: i < 30 ? 'a' : 'b' }));
  await couch('POST', `${db}/_bulk_docs`, { docs });
  const q = { selector: { cat: { $gt: null } }, sort: [{ cat: 'asc' }], fields: ['_id'] };
  const first = (await couch('POST', `${db}/_find`, { ...q, limit: 12 })).json;
  const boundary = first.docs[11]._id;
  const after = async () => {
    const bm = (await couch('POST', `${db}/_find`, { ...q, limit: 3, bookmark: first.bookmark })).json.docs.map((d) => d._id);
    const rows = (await couch('GET', `${db}/_design/s/_view/by-cat?reduce=false&limit=4&startkey=${encodeURIComponent('["a"]')}&startkey_docid=${boundary}`)).json.rows
      .map((r) => r.id).filter((id) => id !== boundary).slice(0, 3);
    return `bookmark: ${bm.join(' ')}; view from ["a"], ${boundary}: ${rows.join(' ')}`;
  };
  const out = [`- unchanged: ${await after()}`];
  const rev = async (id) => (await couch('GET', `${db}/${id}`)).json._rev;
  await couch('PUT', `${db}/${boundary}`, { _rev: await rev(boundary), cat: 'b' });
  out.push(`- the boundary row ${boundary} edited to cat "b": ${await after()}`);
  await couch('DELETE', `${db}/${boundary}?rev=${await rev(boundary)}`);
  out.push(`- the boundary row ${boundary} deleted: ${await after()}`);
  await couch('DELETE', db);
  return out;
}

async function main() {
  const [url, ...nodes] = process.argv.slice(2);
  if (!url) { console.error('usage: node bench/ties-mechanisms.js URL [NODE_URL ...]'); process.exit(2); }
  const couch = client(url);
  if (process.env.PART === 'moved') {
    console.log(`${new URL(url).host}, the page after the 12th row (d011) of 60:\n${(await moved(couch)).join('\n')}`);
    return;
  }
  const label = new URL(url).host;
  const welcome = (await couch('GET', '/')).json;
  const membership = await couch('GET', '/_membership', undefined, [200, 404]);
  const cluster = membership.status === 200 ? membership.json.cluster_nodes.length : 1;
  for (const ix of MECH.indexes) await couch('POST', `/${DB}/_index`, ix);
  const find = async (body) => (await couch('POST', `/${DB}/_find`, body)).json;
  const timed = async (fn) => {
    const ms = [];
    let out;
    for (let k = 0; k < RUNS; k++) {
      const t0 = process.hrtime.bigint();
      out = await fn();
      ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    return { ms: median(ms), out };
  };
  const stats = async (body) => {
    const ex = [];
    let s;
    for (let k = 0; k < 3; k++) { s = (await find({ ...body, execution_stats: true })).execution_stats; ex.push(s.execution_time_ms); }
    return { keys: s.total_keys_examined, docs: s.total_docs_examined, exec: median(ex) };
  };
  const explain = async (body) => {
    const e = (await couch('POST', `/${DB}/_explain`, body, [200, 400])).json;
    if (!e.index) return `error: ${e.error} ${e.reason}`;
    return `${e.index.ddoc ? e.index.ddoc.replace('_design/', '') + '/' : ''}${e.index.name} [${e.index.def.fields.map((f) => Object.keys(f)[0]).join(', ')}], ` +
      `keys ${JSON.stringify(e.mrargs.start_key)} to ${JSON.stringify(e.mrargs.end_key)}`;
  };
  const raw = { server: label, version: welcome.version, nodes: cluster, runs: RUNS, cases: [] };
  const out = [];
  out.push(`### ${label}: CouchDB ${welcome.version}, ${cluster === 1 ? 'single node' : `a cluster of ${cluster} nodes`}, bench_ties (5,000 documents of about 4 KB)`);
  out.push('');

  // tie order: _find's whole order against (value, _id) in code-point order,
  // the index's view, and (in a cluster) each node's _find
  out.push('| order | cat | day |');
  out.push('| --- | --- | --- |');
  const orders = {};
  const cells = { find: [], view: [], walk: [], nodes: [], desc: [] };
  for (const F of ['cat', 'day']) {
    const q = { selector: { [F]: { $gt: null } }, sort: [{ [F]: 'asc' }], use_index: ['ties-find', `by-${F}`], allow_fallback: false, limit: 100000, fields: ['_id', F] };
    const all = (await find(q)).docs;
    orders[F] = all;
    const byId = [...all].sort((x, y) => (x[F] < y[F] ? -1 : x[F] > y[F] ? 1 : x._id < y._id ? -1 : x._id > y._id ? 1 : 0));
    cells.find.push(same(all.map((d) => d._id), byId.map((d) => d._id)) ? `equal (${all.length} rows)` : '**differs**');
    const view = (await couch('GET', `/${DB}/_design/ties-find/_view/by-${F}?reduce=false`)).json.rows;
    cells.view.push(same(view.map((r) => r.id), all.map((d) => d._id)) ? 'equal' : '**differs**');
    // the view walked as a page would: startkey=[v]&startkey_docid=i of the
    // page's first row, limit 21, 20 rows kept
    const walked = [];
    let start = view[0];
    for (;;) {
      const rows = (await couch('GET', `/${DB}/_design/ties-find/_view/by-${F}?reduce=false&limit=21&startkey=${encodeURIComponent(JSON.stringify(start.key))}&startkey_docid=${encodeURIComponent(start.id)}`)).json.rows;
      walked.push(...rows.slice(0, SIZE).map((r) => r.id));
      if (rows.length <= SIZE) break;
      start = rows[SIZE];
    }
    cells.walk.push(same(walked, all.map((d) => d._id)) ? `equal (${Math.ceil(all.length / SIZE)} pages)` : '**differs**');
    // descending: _find's order against the view read descending=true
    const desc = (await find({ ...q, sort: [{ [F]: 'desc' }] })).docs.map((d) => d._id);
    const vdesc = (await couch('GET', `/${DB}/_design/ties-find/_view/by-${F}?reduce=false&descending=true`)).json.rows.map((r) => r.id);
    cells.desc.push(same(desc, vdesc) ? (same(desc, [...all].reverse().map((d) => d._id)) ? 'equal, and the ascending order reversed (ties by `_id` descending)' : 'equal') : '**differs**');
    const per = [];
    for (const n of nodes) {
      const other = (await client(n)('POST', `/${DB}/_find`, q)).json.docs;
      per.push(`${new URL(n).port}: ${same(other.map((d) => d._id), all.map((d) => d._id)) ? 'equal' : '**differs**'}`);
    }
    cells.nodes.push(per.join(', ') || '–');
  }
  out.push(`| _find's whole order (\`limit\` 100000) against sorting by (value, \`_id\`), \`_id\` by code points | ${cells.find.join(' | ')} |`);
  out.push(`| the index's view (\`_design/ties-find/_view/by-F?reduce=false\`), whole | ${cells.view.join(' | ')} |`);
  out.push(`| the view walked by pages of 20 (\`startkey=[v]&startkey_docid=ID\`, limit 21) | ${cells.walk.join(' | ')} |`);
  out.push(`| _find sorted descending against the view read with \`descending=true\` | ${cells.desc.join(' | ')} |`);
  if (nodes.length) out.push(`| the same _find sent to each other node, against ${new URL(url).port}'s | ${cells.nodes.join(' | ')} |`);
  raw.order = cells;
  out.push('');
  if (process.env.PART === 'order') { console.log(out.join('\n')); return; }

  out.push('| query, page at row (rows before it tied with it) | mechanism | queries | keys / docs examined (a view: rows read) | CouchDB execution_time_ms (summed over queries) | time per page, client, median of ' + RUNS + ' | rows = _find\'s page | `_explain`: index [fields], key range |');
  out.push('| --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const c of CASES.filter((k) => ROWS[k.name])) {
    const F = Object.keys(c.query.sort[0])[0];
    const sel = c.query.selector;
    const residual = c.name === 'cat-tags' ? hasTag(sel.tags.$elemMatch.$in) : null;
    const base = { selector: sel, sort: c.query.sort, use_index: c.query.use_index, allow_fallback: false };
    const all = (await find({ ...base, limit: 100000, fields: ['_id', F] })).docs;
    for (const row of ROWS[c.name] || []) {
      if (row + SIZE > all.length) continue;
      const b = all[row - 1], v = b[F], id = b._id;
      const want = all.slice(row, row + SIZE + 1).map((d) => d._id);
      let ties = 0;
      for (let k = row - 1; k >= 0 && all[k][F] === all[row][F]; k--) ties++;
      const crosses = all[row + SIZE][F] !== v;
      const what = `${c.name} ${row} (${ties})${crosses ? ', crosses into the next group' : ''}`;
      const rec = { case: c.name, row, ties, crosses, mech: {} };
      const line = async (name, n, st, t, exact, ex) => {
        rec.mech[name] = { queries: n, ...st, ms: t, exact, explain: ex };
        out.push(`| ${what} | ${name} | ${n} | ${st.keys} / ${st.docs} | ${Number.isNaN(st.exec) ? '– (a view)' : st.exec.toFixed(1)} | ${t.toFixed(1)} ms | ${exact ? 'yes' : '**no**'} | ${ex} |`);
      };
      // (a)
      const a = { ...base, selector: { $and: [sel, { $and: [{ [F]: { $gte: v } }, { $or: [{ [F]: { $gt: v } }, { [F]: { $eq: v }, _id: { $gt: id } }] }] }] }, limit: SIZE + 1 };
      const ta = await timed(() => find(a));
      await line('(a) keyset (the module\'s)', 1, await stats(a), ta.ms, same(ta.out.docs.map((d) => d._id), want), await explain(a));
      // (b)
      const { bookmark } = await find({ ...base, limit: row, fields: ['_id'] });
      const bq = { ...base, limit: SIZE + 1, bookmark };
      const tb = await timed(() => find(bq));
      await line('(b) bookmark', 1, await stats(bq), tb.ms, same(tb.out.docs.map((d) => d._id), want), (await explain({ ...base, limit: SIZE + 1 })) + ' (before the bookmark)');
      // (c) the view from the boundary row, its own row first
      const limit = residual ? SIZE + 2 + 4 : SIZE + 2;
      const vpath = `/${DB}/_design/ties-find/_view/by-${F}?reduce=false&include_docs=true&limit=${limit}` +
        `&startkey=${encodeURIComponent(JSON.stringify([v]))}&startkey_docid=${encodeURIComponent(id)}`;
      const tc = await timed(() => couch('GET', vpath));
      let vrows = tc.out.json.rows;
      const first = vrows[0] && vrows[0].id === id;
      vrows = vrows.slice(1);
      const kept = residual ? vrows.filter((r) => residual(r.doc)) : vrows;
      const enough = kept.length >= SIZE + 1;
      await line(`(c) the index's view, limit ${limit}${residual ? ', filtered here' : ''}`, 1,
        { keys: vrows.length + 1, docs: vrows.length + 1, exec: NaN }, tc.ms,
        first && enough && same(kept.slice(0, SIZE + 1).map((r) => r.id), want), `view by-${F}${residual ? `: ${kept.length} of ${vrows.length} rows match` : ''}`);
      // (d) [F, _id]: the rest of the tie group, then what follows
      const sort2 = [{ [F]: 'asc' }, { _id: 'asc' }];
      const d1 = { selector: { $and: [sel, { [F]: { $eq: v }, _id: { $gt: id } }] }, sort: sort2, limit: SIZE + 1, use_index: ['ties-mech', `by-${F}-id`], allow_fallback: false };
      const d2 = (n) => ({ selector: { $and: [sel, { [F]: { $gt: v } }] }, sort: sort2, limit: n, use_index: ['ties-mech', `by-${F}-id`], allow_fallback: false });
      const td = await timed(async () => {
        const r1 = await find(d1);
        if (r1.docs.length > SIZE) return { docs: r1.docs, n: 1 };
        const r2 = await find(d2(SIZE + 1 - r1.docs.length));
        return { docs: [...r1.docs, ...r2.docs], n: 2 };
      });
      const s1 = await stats(d1);
      let sd = s1;
      let ex = await explain(d1);
      if (td.out.n === 2) {
        const s2 = await stats(d2(SIZE + 1 - (await find(d1)).docs.length));
        sd = { keys: s1.keys + s2.keys, docs: s1.docs + s2.docs, exec: s1.exec + s2.exec };
        ex += `; then ${await explain(d2(1))}`;
      }
      await line('(d) index [F, _id]: ties, then the rest', td.out.n, sd, td.ms, same(td.out.docs.map((d) => d._id), want), ex);
      // (d2) crossing: the next value w from the index's view (its first
      // key after [v]: startkey=[v, {}], limit 1), then {F: {"$gte": w}},
      // which starts the scan at w where {"$gt": v} starts it at v
      if (td.out.n === 2) {
        const nextKey = async () => (await couch('GET', `/${DB}/_design/ties-find/_view/by-${F}?reduce=false&limit=1` +
          `&startkey=${encodeURIComponent(JSON.stringify([v, {}]))}`)).json.rows;
        const d3 = (w, n) => ({ selector: { $and: [sel, { [F]: { $gte: w } }] }, sort: sort2, limit: n, use_index: ['ties-mech', `by-${F}-id`], allow_fallback: false });
        const te = await timed(async () => {
          const r1 = await find(d1);
          const nk = await nextKey();
          if (!nk.length) return { docs: r1.docs };
          const r2 = await find(d3(nk[0].key[0], SIZE + 1 - r1.docs.length));
          return { docs: [...r1.docs, ...r2.docs], w: nk[0].key[0], n1: r1.docs.length };
        });
        const s3 = await stats(d3(te.out.w, SIZE + 1 - te.out.n1));
        await line('(d2) index [F, _id]: ties, the view\'s next key w, then {F: {"$gte": w}}', 3,
          { keys: s1.keys + 1 + s3.keys, docs: s1.docs + s3.docs, exec: s1.exec + s3.exec }, te.ms,
          same(te.out.docs.map((d) => d._id), want), `${await explain(d1)}; view by-${F} startkey [v, {}] limit 1; then ${await explain(d3(te.out.w, 1))}`);
      }
      // (d1) the same first query through the index [F] alone
      const d1f = { ...d1, sort: c.query.sort, use_index: c.query.use_index };
      const t1 = await timed(() => find(d1f));
      await line('(d1) the ties\' query through index [F]', 1, await stats(d1f), t1.ms,
        same(t1.out.docs.map((d) => d._id), want.slice(0, t1.out.docs.length)), await explain(d1f));
      // (f) what the planner picks for d1 without use_index
      const { use_index: _u, allow_fallback: _f, ...free } = d1;
      rec.mech['(f) planner, no use_index'] = await explain(free);
      out.push(`| ${what} | (f) the ties' query sorted [F, _id] without \`use_index\` | | | | | | ${rec.mech['(f) planner, no use_index']} |`);
      raw.cases.push(rec);
    }
  }
  // (f) the planner's pick for the plain query with both indexes there
  out.push('');
  for (const c of CASES.filter((k) => ROWS[k.name])) {
    const { use_index: _u, allow_fallback: _f, ...free } = c.query;
    out.push(`- \`_explain\` of ${c.name}'s query without \`use_index\` (indexes [${Object.keys(c.query.sort[0])[0]}] and [${Object.keys(c.query.sort[0])[0]}, _id] both there): ${await explain(free)}`);
  }
  out.push('');
  out.push(`The boundary row moved or deleted between two pages (a scratch database \`ties_scratch\`, the page after the 12th row, d011, of 60):`);
  out.push('');
  out.push(...(await moved(couch)));
  console.log(out.join('\n'));
  if (process.env.RAW) require('fs').writeFileSync(process.env.RAW, JSON.stringify(raw, null, 1) + '\n');
}

main().catch((e) => { console.error(`ties-mechanisms: ${e.stack || e}`); process.exit(1); });
