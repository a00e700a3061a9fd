#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
// Paired time per page, for bench/run: request A (a page through the module)
// and request B (CouchDB's own request for the same rows) sent in turn,
// A B B A A B ..., so that both meet the machine as it is at that moment (the
// rounds of wrk phases run seconds apart, and drift between them). A pair's
// ratio is A's time per page ÷ B's; node's own cost is in both. Prints one
// line:
//
//   PAIRS n=N c=C a_p50_us=.. b_p50_us=.. ratio_median=.. ratio_lo=.. ratio_hi=.. conf=.. verdict=..
//
// the median of the pairs' ratios, the distribution-free interval of that
// median (bench/stats.js) and, against LIMIT, met (the interval at or below
// it), not met (above it) or cannot tell; a_p50_us and b_p50_us are the
// medians of the halves' times per page.
//
//   node bench/latency-pairs.js PAIRS WARMUP LIMIT A_URL B_URL [B_BODY]
//
// At one connection (CONNECTIONS unset or 1) each half of a pair is one
// request over its own kept-alive connection, timed from sending it to the
// answer's last byte: the ratio is of latencies. With CONNECTIONS=C, each
// half is a burst of BURST requests (default 4 × C) over C kept-alive
// connections of its own, each sending its next request when its answer is
// whole, timed from the first request to the last answer and divided by
// BURST: the ratio is of time per page under load, B's pages per second ÷
// A's. A goes with the Authorization header A_AUTHORIZATION, B with
// B_AUTHORIZATION (environment), each when set (credentials in a URL are
// not sent); B with a BODY (JSON text) is a POST, else a GET. Any answer but
// 200 stops it (exit 1). Uses nothing but node's own modules.
'use strict';

const http = require('http');
const { quantile, medianInterval, verdict } = require('./stats.js');

const [pairsS, warmupS, limitS, aUrl, bUrl, bBody] = process.argv.slice(2);
const pairs = Number(pairsS), warmup = Number(warmupS), limit = Number(limitS);
const connections = Number(process.env.CONNECTIONS || 1);
const burst = Number(process.env.BURST || (connections === 1 ? 1 : 4 * connections));
if (!(pairs >= 6) || !(warmup >= 0) || !(limit > 0) || !aUrl || !bUrl
    || !Number.isInteger(connections) || connections < 1 || !Number.isInteger(burst) || burst < connections) {
  console.error('usage: [CONNECTIONS=C] [BURST=N>=C] node bench/latency-pairs.js PAIRS(>=6) WARMUP LIMIT A_URL B_URL [B_BODY]');
  process.exit(2);
}

// One connection's request: its own agent keeps one socket alive.
function request(url, body, authorization) {
  const u = new URL(url);
  return {
    agent: new http.Agent({ keepAlive: true, maxSockets: 1 }),
    options: {
      host: u.hostname, port: u.port, path: u.pathname + u.search, method: body ? 'POST' : 'GET',
      headers: { Accept: 'application/json', ...(authorization ? { Authorization: authorization } : {}),
                 ...(body ? { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) } : {}) },
    },
    body,
  };
}

// One request's time in µs, from sending to the last byte.
function once(r) {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const q = http.request({ ...r.options, agent: r.agent }, (res) => {
      res.on('data', () => {});
      res.on('end', () => {
        if (res.statusCode !== 200) reject(new Error(`${r.options.method} ${r.options.path}: ${res.statusCode}`));
        else resolve(Number(process.hrtime.bigint() - t0) / 1000);
      });
    });
    q.on('error', reject);
    q.end(r.body);
  });
}

// A half pair's time per page in µs: BURST requests over the half's
// connections, from the first sent to the last answer.
async function half(conns) {
  let sent = 0;
  const t0 = process.hrtime.bigint();
  await Promise.all(conns.map(async (r) => {
    while (sent < burst) { sent++; await once(r); }
  }));
  return Number(process.hrtime.bigint() - t0) / 1000 / burst;
}

(async () => {
  const each = (url, body, auth) => Array.from({ length: connections }, () => request(url, body, auth));
  const a = each(aUrl, undefined, process.env.A_AUTHORIZATION), b = each(bUrl, bBody, process.env.B_AUTHORIZATION);
  const at = [], bt = [], ratios = [];
  for (let i = 0; i < warmup + pairs; i++) {
    // every other pair B first, so that what follows a half (a warmer
    // cache, a connection just used) favours neither side
    let ta, tb;
    if (i % 2 === 0) { ta = await half(a); tb = await half(b); }
    else { tb = await half(b); ta = await half(a); }
    if (i < warmup) continue;
    at.push(ta); bt.push(tb); ratios.push(ta / tb);
  }
  for (const r of [...a, ...b]) r.agent.destroy();
  const iv = medianInterval(ratios);
  console.log(`PAIRS n=${pairs} c=${connections} a_p50_us=${quantile(at, 0.5).toFixed(0)} b_p50_us=${quantile(bt, 0.5).toFixed(0)}`
              + ` ratio_median=${quantile(ratios, 0.5).toFixed(3)} ratio_lo=${iv.lo.toFixed(3)}`
              + ` ratio_hi=${iv.hi.toFixed(3)} conf=${(100 * iv.conf).toFixed(1)} verdict=${verdict(iv, limit).replace(' ', '_')}`);
})().catch((e) => { console.error(`latency-pairs: ${e.message}`); process.exit(1); });
