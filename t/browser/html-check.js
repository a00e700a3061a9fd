#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
// Parses HTML from standard input with parse5, the WHATWG-conformant parser,
// and reports every parse error.
//
//   node t/browser/html-check.js [--document] [--json] < page.html
//
// Without --document the input is a fragment (parse5's parseFragment, as a
// page's <body> content would be parsed); with it, a whole document.
// Errors go to standard error, one a line: "LINE:COL CODE". With --json,
// standard output gets {"errors": [...], "tree": NODE}, where NODE is
// {"tag", "attrs": {name: value}, "children": [NODE...]} for an element and
// {"text"} for text (comments are left out), so that a test can look at the
// tree the parser built. Exits 1 if there was any parse error, 2 on misuse.
'use strict';

const path = require('path');

const embedded = process.env.COUCHPAGE_EMBEDDED_DIR || path.join(__dirname, '..', '..', 'embedded');
const parse5 = require(path.join(embedded, 'node_modules', 'parse5'));

const args = process.argv.slice(2);
for (const a of args) {
  if (a !== '--document' && a !== '--json') {
    console.error(`html-check: unknown argument ${a}`);
    console.error('usage: node html-check.js [--document] [--json] < input.html');
    process.exit(2);
  }
}
const asDocument = args.includes('--document');
const asJson = args.includes('--json');

function simplify(node) {
  if (node.nodeName === '#text') return { text: node.value };
  if (node.nodeName === '#comment' || node.nodeName === '#documentType') return null;
  const out = {};
  if (node.tagName) {
    out.tag = node.tagName;
    out.attrs = {};
    for (const a of node.attrs || []) out.attrs[a.name] = a.value;
  } else {
    out.tag = node.nodeName; // #document, #document-fragment
  }
  // <template> keeps its children in .content
  const kids = node.content ? node.content.childNodes : node.childNodes || [];
  out.children = kids.map(simplify).filter((n) => n !== null);
  return out;
}

const chunks = [];
process.stdin.on('data', (c) => chunks.push(c));
process.stdin.on('end', () => {
  const html = Buffer.concat(chunks).toString('utf8');
  const errors = [];
  const options = {
    sourceCodeLocationInfo: false,
    onParseError: (e) => errors.push({ code: e.code, line: e.startLine, col: e.startCol }),
  };
  const tree = asDocument ? parse5.parse(html, options) : parse5.parseFragment(html, options);
  for (const e of errors) console.error(`${e.line}:${e.col} ${e.code}`);
  if (asJson) process.stdout.write(JSON.stringify({ errors, tree: simplify(tree) }) + '\n');
  process.exitCode = errors.length ? 1 : 0;
});
