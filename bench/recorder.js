#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
// A recording HTTP proxy for bench/run's checks: it forwards every request
// to the backend unchanged and appends to LOG one JSON line per request,
// {"method", "url", "authorization", "content_type", "body"}, written before
// the request is forwarded (so before its answer reaches the client). It
// tells what the module really asks the backend and which Authorization
// header it sends, and the same for the floors' wrk requests; no timing is
// ever taken through it.
//
//   node bench/recorder.js PORT BACKEND_URL LOG
//
// Listens on 127.0.0.1:PORT. Uses nothing but node's own modules.
'use strict';

const fs = require('fs');
const http = require('http');

const [port, backend, log] = process.argv.slice(2);
if (!port || !backend || !log) {
  console.error('usage: node bench/recorder.js PORT BACKEND_URL LOG');
  process.exit(2);
}
const target = new URL(backend);
const agent = new http.Agent({ keepAlive: true });

http
  .createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      fs.appendFileSync(log, JSON.stringify({
        method: req.method,
        url: req.url,
        authorization: req.headers.authorization ?? null,
        content_type: req.headers['content-type'] ?? null,
        body: body.toString('utf8'),
      }) + '\n');
      const headers = { ...req.headers, host: target.host };
      const up = http.request({
        host: target.hostname, port: target.port, method: req.method, path: req.url, headers, agent,
      }, (ures) => {
        res.writeHead(ures.statusCode, ures.headers);
        ures.pipe(res);
      });
      up.on('error', (e) => {
        res.writeHead(502, { 'content-type': 'text/plain' });
        res.end(`recorder: ${e.message}\n`);
      });
      up.end(body);
    });
  })
  .listen(Number(port), '127.0.0.1', () => console.log(`recorder on 127.0.0.1:${port} -> ${backend}`));
