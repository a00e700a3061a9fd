#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
// Walks a page that includes a mod_couchpage fragment in a real browser:
// Debian's chromium, driven by playwright-core (which downloads no browser).
// From the first page it clicks Next until there is none, then Previous back
// to the first page, and at every step reads the visible items.
//
//   node t/browser/walk.js URL [--screenshot FILE] [--pages DIR] [--expect JSON] [--timeout MS]
//
//   --screenshot FILE  a PNG of the middle page of the walk (whole page)
//   --pages DIR        a PNG of every page on the way forward: DIR/page-1.png,
//                      DIR/page-2.png, ... (the last one is the last page)
//   --expect JSON      the items each page must show, first to last, e.g.
//                      '[["Biffy Clyro", ...], ..., ["Tool"]]'
//   --timeout MS       give up after MS milliseconds (default 60000)
//
// Prints one JSON line per page visited to standard output:
//   {"step", "url", "items", "prev", "next", "current", "position", "styled"}
// ("prev"/"next": whether that link is there; "current": the text of the
// page link with aria-current="page"; "styled": whether couchpage.css
// applied), then {"done": true, "pages", "screenshot", "problems"}.
// Exits 1 if a check failed (each is named on standard error), 2 on misuse.
// The browser gets a fresh temporary profile (and HOME), removed at the end.
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');

const embedded = process.env.COUCHPAGE_EMBEDDED_DIR || path.join(__dirname, '..', '..', 'embedded');
const { chromium } = require(path.join(embedded, 'node_modules', 'playwright-core'));

const CHROMIUM = process.env.COUCHPAGE_CHROMIUM || '/usr/bin/chromium';
const ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];
const MAX_PAGES = 100;

function usage(msg) {
  if (msg) console.error(`walk.js: ${msg}`);
  console.error('usage: node walk.js URL [--screenshot FILE] [--pages DIR] [--expect JSON] [--timeout MS]');
  process.exit(2);
}

function parseArgs(argv) {
  const opt = { url: null, screenshot: null, pages: null, expect: null, timeout: 60000 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--screenshot') opt.screenshot = argv[++i] || usage('--screenshot needs a file');
    else if (a === '--pages') opt.pages = argv[++i] || usage('--pages needs a directory');
    else if (a === '--expect') {
      try { opt.expect = JSON.parse(argv[++i]); } catch (e) { usage('--expect needs JSON'); }
      if (!Array.isArray(opt.expect)) usage('--expect needs an array of pages');
    } else if (a === '--timeout') {
      opt.timeout = Number(argv[++i]);
      if (!(opt.timeout > 0)) usage('--timeout needs milliseconds');
    } else if (!a.startsWith('-') && !opt.url) opt.url = a;
    else usage(`unknown argument ${a}`);
  }
  if (!opt.url) usage('no URL');
  return opt;
}

const opt = parseArgs(process.argv.slice(2));
const problems = [];
function check(cond, what) {
  if (!cond) {
    problems.push(what);
    console.error(`walk.js: FAILED: ${what}`);
  }
  return cond;
}
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

// What a person sees of the fragment on the current page.
async function readPage(page, step) {
  const state = await page.evaluate(() => {
    const visible = (el) => {
      if (!el) return false;
      const r = el.getBoundingClientRect();
      const s = getComputedStyle(el);
      return r.width > 0 && r.height > 0 && s.visibility !== 'hidden' && s.display !== 'none';
    };
    const frag = document.querySelector('.couchpage');
    const items = [...document.querySelectorAll('.couchpage-item')];
    const current = document.querySelector('.couchpage-pages [aria-current="page"]');
    const position = document.querySelector('.couchpage-position');
    return {
      fragments: document.querySelectorAll('.couchpage').length,
      items: items.filter(visible).map((el) => el.innerText.trim()),
      hidden: items.filter((el) => !visible(el)).length,
      prev: visible(document.querySelector('a.couchpage-prev')),
      next: visible(document.querySelector('a.couchpage-next')),
      current: current ? current.innerText.trim() : null,
      position: position ? position.innerText.trim() : null,
      // couchpage.css gives the fragment a border radius of 8px
      styled: !!frag && getComputedStyle(frag).borderTopLeftRadius === '8px',
    };
  });
  const report = { step, url: page.url(), ...state };
  delete report.fragments;
  delete report.hidden;
  process.stdout.write(JSON.stringify(report) + '\n');
  check(state.fragments === 1, `${step}: one fragment on the page (saw ${state.fragments})`);
  check(state.hidden === 0, `${step}: every item is visible (${state.hidden} hidden)`);
  check(state.items.length > 0, `${step}: the page shows items`);
  check(state.styled, `${step}: couchpage.css applies`);
  return report;
}

// Clicks a.couchpage-{rel} and waits for the new page to load.
async function follow(page, rel) {
  const before = page.url();
  const link = page.locator(`a.couchpage-${rel}`);
  await Promise.all([
    page.waitForURL((u) => u.toString() !== before, { waitUntil: 'load' }),
    link.click(),
  ]);
}

async function main() {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'couchpage-chromium-'));
  let context;
  const timer = setTimeout(() => {
    console.error(`walk.js: timed out after ${opt.timeout} ms`);
    // playwright closes the browser it launched when this process exits
    process.exit(1);
  }, opt.timeout);
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: ARGS,
      env: {
        ...process.env,
        HOME: profile,
        XDG_CONFIG_HOME: path.join(profile, '.config'),
        XDG_CACHE_HOME: path.join(profile, '.cache'),
      },
      viewport: { width: 900, height: 760 },
    });
    const page = context.pages()[0] || (await context.newPage());
    const failed = [];
    page.on('response', (res) => { if (res.status() >= 400) failed.push(`${res.status()} ${res.url()}`); });
    page.on('requestfailed', (req) => failed.push(`failed ${req.url()}`));
    page.on('pageerror', (err) => failed.push(`page error ${err.message}`));

    // a picture of each page on the way forward, with --pages
    const shoot = async (n) => {
      if (!opt.pages) return;
      fs.mkdirSync(opt.pages, { recursive: true });
      await page.screenshot({ path: path.join(opt.pages, `page-${n}.png`), fullPage: true });
    };
    await page.goto(opt.url, { waitUntil: 'load' });
    const forward = [await readPage(page, 'first')];
    await shoot(1);
    check(!forward[0].prev, 'first: no Previous link on the first page');
    while (forward[forward.length - 1].next && forward.length < MAX_PAGES) {
      await follow(page, 'next');
      forward.push(await readPage(page, `next ${forward.length}`));
      await shoot(forward.length);
    }
    check(forward.length < MAX_PAGES, `Next ends within ${MAX_PAGES} pages`);
    const middle = Math.floor((forward.length - 1) / 2);
    const backward = [forward[forward.length - 1]];
    while (backward[backward.length - 1].prev && backward.length < MAX_PAGES) {
      await follow(page, 'prev');
      const report = await readPage(page, `prev ${backward.length}`);
      backward.push(report);
      // the middle page again, on the way back: take its picture
      if (opt.screenshot && backward.length === forward.length - middle) {
        fs.mkdirSync(path.dirname(path.resolve(opt.screenshot)), { recursive: true });
        await page.screenshot({ path: opt.screenshot, fullPage: true });
      }
    }
    if (opt.screenshot && forward.length === 1) {
      await page.screenshot({ path: opt.screenshot, fullPage: true });
    }
    check(same(backward.map((p) => p.items).reverse(), forward.map((p) => p.items)),
      'Previous back from the last page shows the same pages as Next did, in reverse');
    check(!backward[backward.length - 1].prev, 'back on the first page: no Previous link');
    if (opt.expect) {
      check(same(forward.map((p) => p.items), opt.expect),
        `the pages show the expected items: ${JSON.stringify(forward.map((p) => p.items))}`);
    }
    check(failed.length === 0, `no failed requests or page errors: ${failed.join('; ')}`);
    process.stdout.write(JSON.stringify({
      done: true, pages: forward.length, screenshot: opt.screenshot, problems,
    }) + '\n');
  } finally {
    clearTimeout(timer);
    if (context) await context.close();
    fs.rmSync(profile, { recursive: true, force: true });
  }
}

main().then(
  () => { process.exitCode = problems.length ? 1 : 0; },
  (err) => { console.error(`walk.js: ${err && err.stack ? err.stack : err}`); process.exitCode = 1; },
);
