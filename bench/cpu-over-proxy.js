// SPDX-License-Identifier: Apache-2.0
// The statistics of bench/cpu-over-proxy, from its phases.tsv (one line a
// phase: kind, connections, round, pages, ns per page, user ms, system ms,
// busy %, others %):
//
//   node bench/cpu-over-proxy.js PHASES.TSV LIMIT_MS OUT_DIR ANSWER_BYTES
//
// Per pair: the page's httpd CPU per page less the plain ProxyPass's of the
// same pair. Over the pairs of a page and connection count: the median, the
// interquartile range, and the distribution-free interval of the median from
// the order statistics (the sign test's: [d(k), d(n+1-k)] holds the true
// median with probability 1 - 2 P(Binomial(n, 1/2) < k), k the largest with
// that at least 95 %). Met when the interval lies at or below LIMIT, not met
// when above it, else it cannot tell (so with fewer than 6 pairs, whose
// widest interval holds the median with less than 95 %). Writes OUT_DIR/report.md and
// OUT_DIR/verdicts.tsv (page, connections, median, the interval's ends, its
// confidence in %, verdict).
'use strict';
const fs = require("fs");
const [tsv, limitS, outDir, answerBytes] = process.argv.slice(2);
const limit = Number(limitS);
const rows = fs.readFileSync(tsv, "utf8").trim().split("\n").map((l) => l.split("\t"));
const ph = rows.map(([kind, c, r, pages, ns, u, s, busy, others]) =>
  ({ kind, c: Number(c), r, pages: Number(pages), ms: Number(ns) / 1e6, u: Number(u), s: Number(s), busy: Number(busy), others: Number(others) }));
const kinds = ["json", "html", "fields"];
const label = { json: "JSON (whole documents)", html: "HTML (item template)", fields: "fields (CouchPageFields)" };
const conns = [...new Set(ph.map((p) => p.c))];
const { quantile: q, medianInterval: interval, verdict: judge } = require("./stats.js");
const f2 = (x) => (x >= 0 ? "+" : "−") + Math.abs(x).toFixed(3);
const f3 = (x) => x.toFixed(3);
let md = [], tsvOut = [];
md.push(`| httpd CPU ms per page (median of ${ph.length / (2 * kinds.length * conns.length)} pairs) | conns | plain \`ProxyPass\` | page | page − proxy: median (IQR) | interval of the median (confidence) | ≤ +${limit} ms |`);
md.push("| --- | --- | --- | --- | --- | --- | --- |");
for (const k of kinds) for (const c of conns) {
  const pages = ph.filter((p) => p.kind === k && p.c === c);
  const d = pages.map((p) => p.ms - ph.find((x) => x.kind === "proxy" && x.c === c && x.r === `${p.r}-${k}`).ms);
  const proxy = ph.filter((x) => x.kind === "proxy" && x.c === c && x.r.endsWith(`-${k}`)).map((x) => x.ms);
  const med = q(d, 0.5), iv = interval(d);
  const verdict = judge(iv, limit);
  md.push(`| ${label[k]} | ${c} | ${f3(q(proxy, 0.5))} | ${f3(q(pages.map((p) => p.ms), 0.5))} | **${f2(med)}** (${f2(q(d, 0.25))} to ${f2(q(d, 0.75))}) | ${f2(iv.lo)} to ${f2(iv.hi)} (${(100 * iv.conf).toFixed(1)} %) | ${verdict === "met" ? "met" : `**${verdict}**`} |`);
  tsvOut.push([k, c, med.toFixed(3), iv.lo.toFixed(3), iv.hi.toFixed(3), (100 * iv.conf).toFixed(1), verdict].join("\t"));
}
md.push("");
md.push("| httpd CPU ms per page, user / system (/proc/PID/stat ticks, all phases) | " + conns.map((c) => `${c} conn.`).join(" | ") + " |");
md.push("| --- | " + conns.map(() => "---").join(" | ") + " |");
for (const k of ["proxy", ...kinds]) {
  const cells = conns.map((c) => {
    const p = ph.filter((x) => x.kind === k && x.c === c), n = p.reduce((a, x) => a + x.pages, 0);
    return `${f3(p.reduce((a, x) => a + x.u * x.pages, 0) / n)} / ${f3(p.reduce((a, x) => a + x.s * x.pages, 0) / n)}`;
  });
  md.push(`| ${k === "proxy" ? `plain \`ProxyPass\` of the module's batch (${(answerBytes / 1024).toFixed(1)} KB answer)` : label[k]} | ${cells.join(" | ")} |`);
}
const busy = ph.map((p) => p.busy), others = ph.map((p) => p.others);
md.push("");
md.push(`the machine during the phases: busy ${Math.min(...busy).toFixed(0)}–${Math.max(...busy).toFixed(0)} % of its cores; processes other than httpd, the backend and wrk took ${Math.min(...others).toFixed(0)}–${Math.max(...others).toFixed(0)} % (median ${q(others, 0.5).toFixed(0)} %)`);
fs.writeFileSync(`${outDir}/report.md`, md.join("\n") + "\n");
fs.writeFileSync(`${outDir}/verdicts.tsv`, tsvOut.join("\n") + "\n");
