/* SPDX-License-Identifier: Apache-2.0 */
/* couchpage.js: moves mod_couchpage's HTML fragments (.couchpage) in place,
 * for sites without htmx. No dependency; include it once, anywhere:
 *   <script src="/couchpage/couchpage.js" defer></script>
 * A page link fetches that page (the link's own URL), swaps its fragment in,
 * pushes the URL, and Back/Forward bring the right page back; focus moves to
 * the new list and a live region announces it (the fragment's
 * data-couchpage-status). data-couchpage="more" on the fragment or around
 * it: a Load more button appends the next page's items; ?shown=N in the URL
 * says how many pages are shown from its start (opened afresh, at most
 * SHOWN_MAX of them; Back and Forward bring back the list as it was left).
 * data-couchpage="off": left alone. Without this script, or when a fetch
 * fails, the links are links.
 * Events (bubbling, on the fragment): couchpage:load {url, mode, items},
 * couchpage:error {url, error}. docs/pages.md has the contract. */
(function () {
  'use strict';
  if (!window.fetch || !window.DOMParser || !history.pushState || !Element.prototype.closest) {
    return;
  }
  var reduced = window.matchMedia && matchMedia('(prefers-reduced-motion: reduce)');
  var live = null;
  var asked = []; // by a fragment's place: the newest page asked for wins
  // A URL with shown=N, opened or reloaded, shows at most this many pages:
  // each is a request after the one before (its Next link), so a bound.
  var SHOWN_MAX = 5;
  // The fragments each history entry of this document showed when it was
  // left (by the entry's key, in history.state.couchpage; by the fragment's
  // place), which Back and Forward put back as they were, without a
  // request; the newest KEPT_MAX entries.
  var kept = new Map(), KEPT_MAX = 20;
  var entry = null; // the current entry's key

  function modeOf(frag) {
    var m = frag.closest('[data-couchpage]');
    return m ? m.getAttribute('data-couchpage') : 'page';
  }
  function all(root) {
    return Array.prototype.slice.call(root.querySelectorAll('.couchpage'));
  }
  // A URL's query without shown=, and with shown=N when more than one page shows.
  function shownUrl(url, n) {
    var hash = url.indexOf('#'), q, parts;
    url = hash < 0 ? url : url.slice(0, hash);
    q = url.indexOf('?');
    parts = q < 0 ? [] : url.slice(q + 1).split('&').filter(function (p) {
      return p && p.split('=')[0] !== 'shown';
    });
    if (n > 1) parts.push('shown=' + n);
    return (q < 0 ? url : url.slice(0, q)) + (parts.length ? '?' + parts.join('&') : '');
  }
  function shownOf(url) {
    var m = /[?&]shown=(\d+)/.exec(url.split('#')[0]);
    return m ? Math.min(parseInt(m[1], 10), SHOWN_MAX) : 1;
  }
  function emit(frag, name, detail) {
    frag.dispatchEvent(new CustomEvent(name, { bubbles: true, detail: detail }));
  }
  // What the live region says: the fragment's status ("Page 3, 41-60 of
  // 1,000"), else (a position the backend does not tell) the first and the
  // last item shown, by their first link or their text.
  function statusOf(frag) {
    var items = itemsOf(frag), name = function (li) {
      return (li.querySelector('a') || li).textContent.trim().slice(0, 80);
    };
    return frag.getAttribute('data-couchpage-status') ||
      (items.length ? name(items[0]) + (items.length > 1 ? ' \u2013 ' + name(items[items.length - 1]) : '') : '');
  }
  function announce(frag, text) {
    if (!live) return;
    // emptied first, so that the same words are announced again
    live.textContent = '';
    setTimeout(function () { live.textContent = text || statusOf(frag); }, 50);
  }
  function focusOn(el) {
    if (!el) return;
    el.setAttribute('tabindex', '-1');
    el.focus({ preventScroll: true });
  }
  function reveal(frag) {
    var top = frag.getBoundingClientRect().top;
    if (top < 0 || top > window.innerHeight) {
      frag.scrollIntoView({ block: 'start', behavior: reduced && !reduced.matches ? 'smooth' : 'auto' });
    }
  }

  // The fragment that answers for frag in the page at url (the including
  // page, or the fragment alone): the one at frag's place, or the only one.
  function fetchFragment(frag, url) {
    var index = all(document).indexOf(frag);
    return fetch(url, { headers: { Accept: 'text/html' }, credentials: 'same-origin' })
      .then(function (res) {
        if (!res.ok) throw new Error(res.status + ' ' + url);
        return res.text();
      })
      .then(function (html) {
        var found = all(new DOMParser().parseFromString(html, 'text/html'));
        var fresh = found.length === 1 ? found[0] : found[index];
        if (!fresh || fresh.classList.contains('couchpage-error')) throw new Error('no page in ' + url);
        return document.importNode(fresh, true);
      });
  }
  // A failed fetch: the link does what a link does.
  function fail(frag, url, error) {
    frag.removeAttribute('aria-busy');
    emit(frag, 'couchpage:error', { url: url, error: error });
    window.location.assign(url);
  }

  // Shows the page at url in place of frag: push says whether it is a new
  // history entry (a click) or the entry already there (Back, Forward).
  function show(frag, url, push) {
    var index = all(document).indexOf(frag), mine = (asked[index] || 0) + 1;
    asked[index] = mine;
    frag.setAttribute('aria-busy', 'true');
    return fetchFragment(frag, url).then(function (fresh) {
      if (mine !== asked[index]) return null;
      frag.removeAttribute('aria-busy');
      frag.replaceWith(fresh);
      if (push) {
        keep(entry, index, frag);
        entry = newKey();
        history.pushState({ couchpage: entry }, '', url);
      }
      enhance(fresh, url);
      arrived(fresh, url);
      return fresh;
    }, function (e) { if (mine === asked[index]) fail(frag, url, e); return null; });
  }
  // Puts back the fragment an entry kept in place of frag (Back, Forward).
  function restore(frag, back, url) {
    var index = all(document).indexOf(frag);
    asked[index] = (asked[index] || 0) + 1; // a page on its way for frag is dropped
    frag.replaceWith(back);
    back.removeAttribute('aria-busy');
    arrived(back, url);
  }
  // A page shown in place: focus, scroll, the live region, the event.
  function arrived(frag, url) {
    focusOn(frag.querySelector('.couchpage-items, .couchpage-empty'));
    reveal(frag);
    announce(frag);
    emit(frag, 'couchpage:load', { url: url, mode: 'page', items: itemsOf(frag) });
  }
  function newKey() {
    return Date.now().toString(36) + '-' + Math.random().toString(36).slice(2);
  }
  function keep(key, index, frag) {
    var frags = kept.get(key) || [];
    if (!key) return;
    frags[index] = frag;
    kept.delete(key); // the newest last
    kept.set(key, frags);
    if (kept.size > KEPT_MAX) kept.delete(kept.keys().next().value);
  }
  function itemsOf(frag) {
    return Array.prototype.slice.call(frag.querySelectorAll('.couchpage-item'));
  }

  // The position of frag's rows and fresh's after them: fresh's with the
  // first row of frag's ("1–20 of 100" and "41–60 of 100" make "1–60 of
  // 100"; the numbers are the module's, in the spans it marks them with);
  // null where either position is unknown.
  function joined(frag, fresh) {
    var mine = frag.querySelector('.couchpage-position .couchpage-first-row');
    var p = fresh.querySelector('.couchpage-position');
    var first = p && p.querySelector('.couchpage-first-row');
    var last = p && p.querySelector('.couchpage-last-row');
    if (!mine || !first || !last) return null;
    if (first === last) { // a page of one row: "61 of 61"
      first = first.cloneNode(false);
      first.className = 'couchpage-first-row';
      last.className = 'couchpage-last-row';
      last.before(first, '\u2013');
    }
    first.textContent = mine.textContent;
    return p;
  }

  // Load more: the next page's items after frag's, its nav in place of
  // frag's and the position of all the rows shown. A page is appended once,
  // whatever is clicked meanwhile.
  function more(frag, quiet) {
    var next = frag.querySelector('.couchpage-nav a.couchpage-next');
    var st = frag.couchpage;
    if (!next || st.busy || st.loaded.indexOf(next.href) >= 0) return Promise.resolve(null);
    st.busy = true;
    frag.setAttribute('aria-busy', 'true');
    return fetchFragment(frag, next.href).then(function (fresh) {
      var list = frag.querySelector('.couchpage-items');
      var items = itemsOf(fresh), said = statusOf(fresh);
      var position = joined(frag, fresh), mine = frag.querySelector('.couchpage-position');
      var nav = frag.querySelector('.couchpage-nav'), theirs = fresh.querySelector('.couchpage-nav');
      st.busy = false;
      frag.removeAttribute('aria-busy');
      // left meanwhile (Back, Forward): kept as it was
      if (!frag.isConnected) return null;
      st.loaded.push(next.href);
      items.forEach(function (li) { list.appendChild(li); });
      if (nav && theirs) nav.replaceWith(theirs);
      // the position of all the rows shown, else (unknown) none rather
      // than the last page's; the fragment's announcement the same
      if (mine && position) mine.replaceWith(position);
      else if (mine) mine.remove();
      if (position) frag.setAttribute('data-couchpage-status', position.textContent);
      else frag.removeAttribute('data-couchpage-status');
      mark(shownUrl(st.base, st.loaded.length + 1));
      button(frag);
      if (!quiet) {
        focusOn(items[0]);
        announce(frag, said);
      }
      emit(frag, 'couchpage:load', { url: next.href, mode: 'more', items: items });
      return frag;
    }, function (e) { st.busy = false; fail(frag, next.href, e); return null; });
  }
  // The Load more button, while there is a next page (its word:
  // data-couchpage-more-label, CouchPageText more).
  function button(frag) {
    var b = frag.querySelector('.couchpage-more');
    var next = frag.querySelector('.couchpage-nav a.couchpage-next');
    var list = frag.querySelector('.couchpage-items');
    if (!next || !list) {
      if (b) b.remove();
      return;
    }
    if (b) return;
    b = document.createElement('button');
    b.type = 'button';
    b.className = 'couchpage-more';
    b.textContent = frag.getAttribute('data-couchpage-more-label') || 'Load more';
    b.addEventListener('click', function () { more(frag); });
    list.after(b);
  }

  // Marks the current history entry as one this script restores, by its
  // key, keeping whatever state the site's own code put there.
  function mark(url) {
    var state = history.state && typeof history.state === 'object' ? history.state : {};
    entry = typeof state.couchpage === 'string' ? state.couchpage : newKey();
    history.replaceState(Object.assign({}, state, { couchpage: entry }), '', url);
  }
  // Makes frag a fragment this script moves; url is the page it shows.
  function enhance(frag, url) {
    frag.couchpage = { base: shownUrl(url, 1), loaded: [], busy: false };
    if (modeOf(frag) === 'more') button(frag);
  }
  // Loads more pages until n show (a URL with shown=N opened, or an entry
  // not kept), one after the other, then says in the URL how many do
  // (fewer at the view's end, SHOWN_MAX for more).
  function moreUntil(frag, n) {
    var st = frag && frag.couchpage, url;
    if (!frag || !frag.isConnected) return Promise.resolve(null);
    if (st.loaded.length + 1 >= n || !frag.querySelector('.couchpage-nav a.couchpage-next')) {
      url = shownUrl(st.base, st.loaded.length + 1);
      if (url !== location.href.split('#')[0]) mark(url);
      return Promise.resolve(frag);
    }
    return more(frag, true).then(function (f) { return f && moreUntil(f, n); });
  }

  function start() {
    var frags = all(document).filter(function (f) { return modeOf(f) !== 'off'; });
    if (!frags.length) return;
    live = document.createElement('div');
    live.className = 'couchpage-live';
    live.setAttribute('role', 'status');
    live.setAttribute('aria-live', 'polite');
    live.setAttribute('aria-atomic', 'true');
    // seen by screen readers only, without couchpage.css too
    live.style.cssText = 'position:absolute;width:1px;height:1px;margin:-1px;padding:0;' +
      'overflow:hidden;clip:rect(0 0 0 0);clip-path:inset(50%);white-space:nowrap;border:0';
    frags[0].after(live);
    mark(location.href);
    frags.forEach(function (f) {
      enhance(f, location.href);
      if (modeOf(f) === 'more') moreUntil(f, shownOf(location.href));
    });

    document.addEventListener('click', function (e) {
      var a = e.target.closest && e.target.closest('.couchpage-nav a[href]');
      var frag = a && a.closest('.couchpage');
      if (!frag || !frag.couchpage || e.defaultPrevented || e.button !== 0 ||
          e.metaKey || e.ctrlKey || e.shiftKey || e.altKey || a.origin !== location.origin) {
        return;
      }
      e.preventDefault();
      show(frag, a.href, true);
    });
    // The go-to-page form: its GET shown in place, as a link's page is;
    // without script (or these APIs) the form submits as forms do.
    document.addEventListener('submit', function (e) {
      var form = e.target, frag = form.closest && form.closest('.couchpage');
      if (!frag || !frag.couchpage || e.defaultPrevented || !form.matches('form.couchpage-jump') ||
          !window.URLSearchParams || !window.FormData) {
        return;
      }
      var url = new URL(form.action, location.href);
      url.search = new URLSearchParams(new FormData(form)).toString();
      if (url.origin !== location.origin) return;
      e.preventDefault();
      show(frag, url.href, true);
    });
    // Back and Forward: every fragment as the entry left it, else the page
    // the URL names (and its shown pages); the fragments left are kept for
    // the entry left.
    window.addEventListener('popstate', function (e) {
      // (back from a #fragment of the same entry: nothing to do)
      if (!e.state || !e.state.couchpage || e.state.couchpage === entry) return;
      var url = location.href, left = entry, back = kept.get(e.state.couchpage) || [];
      entry = typeof e.state.couchpage === 'string' ? e.state.couchpage : null;
      all(document).forEach(function (f, index) {
        if (!f.couchpage || back[index] === f) return;
        keep(left, index, f);
        if (back[index]) {
          restore(f, back[index], url);
          return;
        }
        show(f, shownUrl(url, 1), false).then(function (fresh) {
          if (fresh && modeOf(fresh) === 'more') moreUntil(fresh, shownOf(url));
        });
      });
      if (!entry) mark(url);
    });
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
