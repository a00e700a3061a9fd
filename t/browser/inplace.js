#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
// Pages moved in place, in a real browser (Debian's chromium, driven by
// playwright-core): couchpage.js in both modes, htmx, the page without
// script, and axe-core's accessibility check of each. It reports what it
// saw; t/api/26_inplace.t judges it.
//
//   node t/browser/inplace.js BASE [--timeout MS]
//
// BASE is the test server (http://127.0.0.1:PORT). Prints one JSON line per
// scenario, {"scenario": NAME, ...what it saw}, then {"done": true}:
//   paged     /demo/blog/: Next clicked three times, Back twice, each step's
//             state; a reload, then Forward; the last pushed URL opened afresh
//   keyboard  /demo/blog/ with the keyboard alone: Tab to Next, Enter, twice
//   jump      /jump.shtml (the double's rows, numbered, with page links):
//             the go-to-page form's label, page 4 asked by it (Enter in its
//             field), then Next; without JavaScript, page 3
//   more      /more.shtml: Load more until the view's end, each step's
//             state; the nav's Newer posts (a page in place), Back (the
//             whole list again), Forward, Back; the page reloaded with its
//             URL (?shown=8), then /more.shtml?shown=1000 opened
//   position  /more-position.shtml (every page with its position): Load
//             more clicked twice while its page loads (the answer held
//             back), then Load more until the end; ?shown=3 opened
//   noscript  /demo/blog/ without JavaScript: Next is a link that loads
//   htmx      /htmx/: Next, Back, a fresh load of the pushed URL
//   axe       axe-core's violations: the fragment without script, paged
//             mode after a move, the go-to-page form after a jump, more mode after a load, htmx after a move
// A step's state: {url, items, focus, live, status, position, busy, marker,
// loads, more, current, scroll, top}: the items' texts (a post's title), the
// fragment's position ("1–10 of 21") and aria-busy, what has focus
// (the class of the element, and whether it is the fragment's list or an
// item), the live region's text and the fragment's data-couchpage-status,
// whether the page's own marker survived (no reload), how many times the
// document loaded; fetches: the requests couchpage.js made for the step.
// Exits 1 on an error of its own (a step that timed out).
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');

const embedded = process.env.COUCHPAGE_EMBEDDED_DIR || path.join(__dirname, '..', '..', 'embedded');
const { chromium } = require(path.join(embedded, 'node_modules', 'playwright-core'));
const AXE = path.join(embedded, 'node_modules', 'axe-core', 'axe.min.js');

const CHROMIUM = process.env.COUCHPAGE_CHROMIUM || '/usr/bin/chromium';
const ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];

const argv = process.argv.slice(2);
const base = argv[0];
const timeout = argv[1] === '--timeout' ? Number(argv[2]) : 120000;
if (!base || !(timeout > 0)) {
  console.error('usage: node inplace.js BASE [--timeout MS]');
  process.exit(2);
}
const say = (o) => process.stdout.write(JSON.stringify(o) + '\n');

// What the page shows now.
function read(page) {
  return page.evaluate(() => {
    const frag = document.querySelector('.couchpage');
    const live = document.querySelector('.couchpage-live');
    const a = document.activeElement;
    const first = document.querySelector('.couchpage-item');
    const cur = document.querySelector('.couchpage-pages [aria-current="page"]');
    return {
      url: location.href,
      items: [...document.querySelectorAll('.couchpage-item')]
        .map((li) => (li.querySelector('.post-title') || li).textContent.trim()),
      fragments: document.querySelectorAll('.couchpage').length,
      focus: !a || a === document.body ? 'body'
        : a.matches('.couchpage-items') ? 'list'
          : a.matches('.couchpage-item') ? 'item:' + (a.querySelector('.post-title') || a).textContent.trim()
            : a.tagName.toLowerCase() + (a.className ? '.' + a.className : ''),
      live: live ? live.textContent : null,
      liveRole: live ? live.getAttribute('role') + '/' + live.getAttribute('aria-live') : null,
      status: frag ? frag.getAttribute('data-couchpage-status') : null,
      position: document.querySelector('.couchpage-position')
        ? document.querySelector('.couchpage-position').textContent : null,
      busy: frag ? frag.getAttribute('aria-busy') : null,
      marker: window.__couchpageMarker || null,
      more: !!document.querySelector('.couchpage-more'),
      next: !!document.querySelector('a.couchpage-next'),
      current: cur ? cur.textContent.trim() : null,
      scroll: Math.round(window.scrollY),
      top: first ? Math.round(first.getBoundingClientRect().top + window.scrollY) : null,
      transition: frag && frag.querySelector('.couchpage-items')
        ? getComputedStyle(frag.querySelector('.couchpage-items')).transitionDuration : null,
    };
  });
}

// Marks the document (a reload loses the mark) and counts couchpage:load.
async function mark(page) {
  await page.evaluate(() => {
    window.__couchpageMarker = 'kept';
    window.__couchpageLoads = 0;
    document.addEventListener('couchpage:load', () => { window.__couchpageLoads++; });
  });
}
// Does action and waits for couchpage.js's next couchpage:load, then for
// its live region to say the page's status.
async function moved(page, action) {
  const n = await page.evaluate(() => window.__couchpageLoads);
  await action();
  await page.waitForFunction((k) => window.__couchpageLoads > k, n, { timeout: 15000 });
  // couchpage.js empties the region, then says the page
  await page.waitForFunction(() => {
    const live = document.querySelector('.couchpage-live');
    return live && live.textContent !== '';
  }, null, { timeout: 15000 });
}
async function axe(page, label) {
  await page.addScriptTag({ path: AXE });
  const result = await page.evaluate(() => window.axe.run(document, {
    runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'] },
  }));
  return {
    label,
    passes: result.passes.length,
    violations: result.violations.map((v) => ({
      id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(' ')).slice(0, 5),
    })),
  };
}

async function scenarios(browser) {
  const newPage = async (opts = {}) => {
    const context = await browser.newContext({ viewport: { width: 900, height: 700 }, ...opts });
    const page = await context.newPage();
    page.errors = [];
    page.loads = 0;
    page.fetches = 0;
    page.on('load', () => { page.loads++; });
    page.on('request', (r) => { if (r.resourceType() === 'fetch') page.fetches++; });
    page.on('pageerror', (e) => page.errors.push(e.message));
    page.on('response', (r) => { if (r.status() >= 400) page.errors.push(`${r.status()} ${r.url()}`); });
    return page;
  };
  const axes = [];

  // --- paged: Next three times, Back twice, then a fresh load -------------
  {
    const page = await newPage({ reducedMotion: 'reduce' });
    await page.goto(base + '/demo/blog/', { waitUntil: 'load' });
    await mark(page);
    const steps = [{ step: 'first', ...(await read(page)) }];
    for (let i = 1; i <= 3; i++) {
      await moved(page, () => page.click('a.couchpage-next'));
      steps.push({ step: `next ${i}`, ...(await read(page)) });
    }
    for (let i = 1; i <= 2; i++) {
      await moved(page, () => page.evaluate(() => history.back()));
      steps.push({ step: `back ${i}`, ...(await read(page)) });
    }
    axes.push(await axe(page, 'paged mode, after moving'));
    const pushed = steps[3].url;
    const loads = page.loads;
    // after a reload (of page 2), Forward still brings page 3 back
    await page.reload({ waitUntil: 'load' });
    const reloaded = { step: 'reload', ...(await read(page)) };
    await page.evaluate(() => history.forward());
    await page.waitForFunction((t) => {
      const li = document.querySelector('.couchpage-item');
      return li && (li.querySelector('.post-title') || li).textContent.trim() === t;
    }, steps[2].items[0], { timeout: 15000 });
    const forward = { step: 'forward after reload', ...(await read(page)) };
    const fresh = await newPage();
    await fresh.goto(pushed, { waitUntil: 'load' });
    const opened = { step: 'fresh', ...(await read(fresh)) };
    // and the page moves on from there
    await mark(fresh);
    await moved(fresh, () => fresh.click('a.couchpage-next'));
    const after = { step: 'fresh next', ...(await read(fresh)) };
    // motion for those who did not ask for less
    const motion = (await read(fresh)).transition;
    say({ scenario: 'paged', steps, loads, reloaded, forward, fresh: opened, freshNext: after, reducedTransition: steps[0].transition,
      transition: motion, errors: page.errors.concat(fresh.errors) });
    await page.context().close();
    await fresh.context().close();
  }

  // --- keyboard only ---------------------------------------------------------
  {
    const page = await newPage();
    await page.goto(base + '/demo/blog/', { waitUntil: 'load' });
    await mark(page);
    const steps = [];
    let tabs = 0;
    for (let round = 1; round <= 2; round++) {
      let on = '';
      for (let i = 0; i < 80 && on !== 'next'; i++) {
        await page.keyboard.press('Tab');
        tabs++;
        on = await page.evaluate(() => (document.activeElement.matches('a.couchpage-next') ? 'next' : ''));
      }
      if (on !== 'next') break;
      await moved(page, () => page.keyboard.press('Enter'));
      steps.push({ step: `enter ${round}`, ...(await read(page)) });
    }
    say({ scenario: 'keyboard', steps, tabs, loads: page.loads, errors: page.errors });
    await page.context().close();
  }

  // --- jump: the go-to-page form, with script and without ---------------------
  {
    const page = await newPage();
    await page.goto(base + '/jump.shtml', { waitUntil: 'load' });
    await mark(page);
    const label = await page.evaluate(() => {
      const input = document.querySelector('form.couchpage-jump input[name="page"]');
      return input && input.labels.length ? input.labels[0].textContent.trim() : null;
    });
    await page.fill('form.couchpage-jump input[name="page"]', '4');
    await moved(page, () => page.press('form.couchpage-jump input[name="page"]', 'Enter'));
    const jumped = { step: 'page 4', ...(await read(page)) };
    axes.push(await axe(page, 'the go-to-page form, after a jump'));
    await moved(page, () => page.click('a.couchpage-next'));
    const next = { step: 'next', ...(await read(page)) };
    const plain = await newPage({ javaScriptEnabled: false });
    await plain.goto(base + '/jump.shtml', { waitUntil: 'load' });
    await plain.fill('form.couchpage-jump input[name="page"]', '3');
    await Promise.all([plain.waitForEvent('load'), plain.click('form.couchpage-jump button')]);
    const noscript = { step: 'page 3 without script', ...(await read(plain)) };
    say({ scenario: 'jump', label, jumped, next, noscript, loads: page.loads, plainLoads: plain.loads,
      errors: page.errors.concat(plain.errors) });
    await page.context().close();
    await plain.context().close();
  }

  // --- more: Load more over the whole view, then a reload -----------------------
  {
    const page = await newPage();
    await page.goto(base + '/more.shtml', { waitUntil: 'load' });
    await mark(page);
    const steps = [{ step: 'first', ...(await read(page)) }];
    for (let i = 1; i <= 50 && steps[steps.length - 1].more; i++) {
      await page.focus('.couchpage-more');
      await moved(page, () => page.keyboard.press('Enter'));
      steps.push({ step: `more ${i}`, ...(await read(page)) });
      if (i === 1) axes.push(await axe(page, 'more mode, after a load'));
    }
    const url = page.url();
    const loads = page.loads;
    // Newer posts (the nav's link) shows that page in place; Back brings
    // the whole list back, Forward the page, Back the list again
    const travel = [];
    const step = async (name, action) => {
      const n = page.fetches;
      await moved(page, action);
      travel.push({ step: name, fetches: page.fetches - n, ...(await read(page)) });
    };
    await step('newer', () => page.click('a.couchpage-prev'));
    await step('back', () => page.evaluate(() => history.back()));
    await step('forward', () => page.evaluate(() => history.forward()));
    await step('back again', () => page.evaluate(() => history.back()));
    // a URL with shown=N opened: reloaded, and shown=1000 afresh; each
    // waits until couchpage.js has done (the URL says how many show)
    const opened = async (action) => {
      page.fetches = 0;
      await action();
      await page.waitForFunction(() => !document.querySelector('.couchpage[aria-busy]') &&
        /[?&]shown=\d+$/.test(location.href) && !/shown=(8|1000)$/.test(location.href), null, { timeout: 30000 })
        .catch(() => {});
      await page.waitForTimeout(500); // and no request after that
      return { fetches: page.fetches, ...(await read(page)) };
    };
    const reloaded = { step: 'reload', ...(await opened(() => page.reload({ waitUntil: 'load' }))) };
    const thousand = { step: 'shown=1000', ...(await opened(() => page.goto(base + '/more.shtml?shown=1000', { waitUntil: 'load' }))) };
    say({ scenario: 'more', steps, url, loads, travel, reloaded, thousand, errors: page.errors });
    await page.context().close();
  }

  // --- position: Load more over pages that know their position ---------------
  {
    const page = await newPage();
    await page.goto(base + '/more-position.shtml', { waitUntil: 'load' });
    await mark(page);
    const steps = [{ step: 'first', ...(await read(page)) }];
    // a second click while the page loads (its answer held back) appends
    // nothing and asks for nothing
    const held = /\/more-position\.shtml\?start=/;
    await page.route(held, async (route) => {
      await new Promise((resolve) => setTimeout(resolve, 800));
      await route.continue();
    });
    let n = page.fetches, busy = null;
    await moved(page, async () => {
      await page.click('.couchpage-more');
      busy = (await read(page)).busy;
      await page.click('.couchpage-more');
    });
    await page.waitForTimeout(1600); // a second answer would be in by now
    steps.push({ step: 'more, clicked twice', busyAtSecond: busy, fetches: page.fetches - n, ...(await read(page)) });
    await page.unroute(held);
    for (let i = 2; i <= 10 && steps[steps.length - 1].more; i++) {
      n = page.fetches;
      await moved(page, () => page.click('.couchpage-more'));
      steps.push({ step: `more ${i}`, fetches: page.fetches - n, ...(await read(page)) });
    }
    page.fetches = 0;
    await page.goto(base + '/more-position.shtml?shown=3', { waitUntil: 'load' });
    await page.waitForFunction(() => document.querySelectorAll('.couchpage-item').length >= 15 &&
      !document.querySelector('.couchpage[aria-busy]'), null, { timeout: 15000 }).catch(() => {});
    await page.waitForTimeout(500);
    const opened = { step: 'shown=3', fetches: page.fetches, ...(await read(page)) };
    say({ scenario: 'position', steps, opened, errors: page.errors });
    await page.context().close();
  }

  // --- no script: the links are links -----------------------------------------
  {
    const page = await newPage({ javaScriptEnabled: false });
    await page.goto(base + '/demo/blog/', { waitUntil: 'load' });
    const first = await read(page);
    await Promise.all([page.waitForEvent('load'), page.click('a.couchpage-next')]);
    const second = await read(page);
    say({ scenario: 'noscript', first, second, loads: page.loads, errors: page.errors });
    await page.context().close();
  }
  // --- the fragment as the server sent it, for axe: script blocked ------------------
  {
    const context = await browser.newContext({ viewport: { width: 900, height: 700 } });
    await context.route('**/couchpage.js', (route) => route.abort());
    const page = await context.newPage();
    await page.goto(base + '/demo/blog/?' + 'limit=5', { waitUntil: 'load' });
    axes.push(await axe(page, 'the fragment without script'));
    // the script failed to load: the links still work
    await Promise.all([page.waitForEvent('load'), page.click('a.couchpage-next')]);
    say({ scenario: 'failed-script', after: await read(page) });
    await context.close();
  }

  // --- htmx ------------------------------------------------------------------------
  {
    const page = await newPage();
    await page.goto(base + '/htmx/', { waitUntil: 'load' });
    await page.waitForFunction(() => window.htmx && document.querySelector('[hx-boost]'));
    await page.evaluate(() => {
      window.__couchpageMarker = 'kept';
      window.__settled = 0;
      document.body.addEventListener('htmx:afterSettle', () => { window.__settled++; });
    });
    const settle = async (action) => {
      const n = await page.evaluate(() => window.__settled);
      await action();
      await page.waitForFunction((k) => window.__settled > k, n, { timeout: 15000 });
    };
    const steps = [{ step: 'first', ...(await read(page)) }];
    await settle(() => page.click('a.couchpage-next'));
    steps.push({ step: 'next', ...(await read(page)) });
    axes.push(await axe(page, 'htmx, after moving'));
    await page.evaluate(() => history.back());
    await page.waitForFunction((u) => location.href === u, steps[0].url);
    await page.waitForFunction((t) => document.querySelector('.couchpage-item') &&
      document.querySelector('.couchpage-item').textContent.trim() === t, steps[0].items[0], { timeout: 15000 });
    steps.push({ step: 'back', ...(await read(page)) });
    const fresh = await newPage();
    await fresh.goto(steps[1].url, { waitUntil: 'load' });
    say({ scenario: 'htmx', steps, loads: page.loads, fresh: await read(fresh), errors: page.errors });
    await page.context().close();
    await fresh.context().close();
  }
  say({ scenario: 'axe', results: axes });
}

async function main() {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'couchpage-chromium-'));
  const timer = setTimeout(() => {
    console.error(`inplace.js: timed out after ${timeout} ms`);
    process.exit(1);
  }, timeout);
  let browser;
  try {
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ARGS,
      env: { ...process.env, HOME: home, XDG_CONFIG_HOME: path.join(home, '.config'), XDG_CACHE_HOME: path.join(home, '.cache') },
    });
    await scenarios(browser);
    say({ done: true });
  } finally {
    clearTimeout(timer);
    if (browser) await browser.close();
    fs.rmSync(home, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(`inplace.js: ${err && err.stack ? err.stack : err}`);
  process.exitCode = 1;
});
