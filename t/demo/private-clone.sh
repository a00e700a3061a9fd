#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# scripts/demo as a new user runs it: from a fresh clone of this checkout in
# a directory that only root may enter (mode 700, like root's home), where
# httpd's children (nobody) cannot reach the clone. The clone builds there,
# the demo serves its pages and views, a second start reuses the loaded
# data, and stopping the demo stops all it started. Prints TAP; scripts/test
# runs it. Needs root (as another user httpd does not switch users).
#
#   t/demo/private-clone.sh
#
# The clone (scripts/clone-checkout) gets the checkout's uncommitted
# changes and new (not ignored) files too, and embedded/node_modules as a
# symlink to the checkout's, so nothing is downloaded. The demo's output and httpd's logs are kept in
# out/demo-clone/; the clone is removed.
# shellcheck source=scripts/lib.sh
source "$(dirname "$0")/../../scripts/lib.sh"

ITEMS=2500    # not a multiple of the loader's batch of 1,000
LOGS=$CP_OUT/demo-clone
tests=0
failures=0

ok() {
    local cond=$1; shift
    tests=$((tests + 1))
    if [ "$cond" = 0 ]; then
        echo "ok $tests - $*"
    else
        echo "not ok $tests - $*"
        failures=$((failures + 1))
    fi
}
check() {
    local what=$1; shift
    if "$@" >/dev/null 2>&1; then ok 0 "$what"; else ok 1 "$what"; fi
}
bail() {
    echo "Bail out! $*"
    cp -r "$clone/out/demo/httpd/logs" "$LOGS/httpd-logs" 2>/dev/null || true
    exit 1
}

if [ "$(id -u)" != 0 ]; then
    echo "1..0 # SKIP the demo from a private clone needs root (httpd then runs as nobody)"
    exit 0
fi
# (SANITIZE=1 runs the tests in out/sanitize/, a copy that is no checkout)
if [ "$(git -C "$CP_ROOT" rev-parse --show-toplevel 2>/dev/null)" != "$(cd "$CP_ROOT" && pwd -P)" ]; then
    echo "1..0 # SKIP $CP_ROOT is not a git checkout: nothing to clone"
    exit 0
fi

rm -rf "$LOGS"
mkdir -p "$LOGS"
private=$(mktemp -d /tmp/couchpage-private.XXXXXX)    # mode 700
cp_at_exit "rm -rf '$private'"
clone=$private/mod_couchpage

nobody_is_shut_out() {
    [ "$(stat -c %a "$private")" = 700 ] && ! runuser -u nobody -- test -x "$private"
}
check "nobody cannot enter $private (the case under test)" nobody_is_shut_out

"$CP_ROOT/scripts/clone-checkout" "$CP_ROOT" "$clone" || bail "cloning the checkout failed"
ln -s "$CP_ROOT/embedded/node_modules" "$clone/embedded/node_modules"

port=$(cp_free_port)
base=http://127.0.0.1:$port
demo_pid=

# Starts the demo (output in $LOGS/$1.log) from / (any cwd will do).
# The embedded backend is what a new user gets: a COUCHDB_URL of the caller's
# (.ci/run exports one for the real tier) must not point the demo elsewhere.
# Variables after the log's name go to the demo's environment.
start_demo() {
    local log=$1; shift
    (cd / && PORT=$port ITEMS=$ITEMS exec env -u COUCHDB_URL "$@" "$clone/scripts/demo") </dev/null >"$LOGS/$log.log" 2>&1 &
    demo_pid=$!
    cp_track "$demo_pid"
}

# A test: the demo's log $1 comes to have a line matching $2 while the demo
# runs (up to $3 s: the first start builds in the clone; a bound, not a
# timing). Else the log's end is shown, and nothing after it can be tested.
wait_log() {
    local log=$LOGS/$1.log pattern=$2 secs=$3 what=$4 i
    for ((i = 0; i < secs * 5; i++)); do
        if grep -qE "$pattern" "$log"; then
            ok 0 "$what"
            return 0
        fi
        kill -0 "$demo_pid" 2>/dev/null || break
        sleep 0.2
    done
    ok 1 "$what"
    tail -n 12 "$log" | sed 's/^/# /'
    bail "the demo did not get that far (its output: $log)"
}

get() { curl -fs --max-time 10 "$base$1"; }
# $1 JSON text, $2 a JavaScript condition on it (j).
json_is() { node -e 'const j = JSON.parse(process.argv[1]); process.exit(eval(process.argv[2]) ? 0 : 1)' "$1" "$2"; }

thousands() { node -p '(+process.argv[1]).toLocaleString("en-US")' "$1"; }

# The href of the fragment's link of class couchpage-$2 in the HTML $1, as
# a path ('' when there is none), &amp; undone.
nav_href() {
    sed -n "s/.*<a class=\"couchpage-$2\" rel=\"$2\" href=\"\([^\"]*\)\".*/\1/p" <<<"$1" |
        head -n1 | sed 's/&amp;/\&/g'
}

# Whether the HTML $1 has the exact text $2 (a fixed string).
has() { grep -qF -- "$2" <<<"$1"; }

# Whether the HTML $1's position paragraph reads $2 (its text, the spans
# that mark the row numbers for couchpage.js taken out).
position_is() {
    [ "$(sed -n 's/.*<p class="couchpage-position">\(.*\)<\/p>.*/\1/p' <<<"$1" | head -n1 |
        sed 's/<[^>]*>//g')" = "$2" ]
}

# Walks the bands' page in Chromium (t/browser/walk.js), a picture of each
# page: pages 1, 2 and the last in $LOGS/screenshots/.
walk_bands() {
    node "$clone/t/browser/walk.js" "$base/" --pages "$LOGS/screenshots" --timeout 90000 \
        --expect '[["Biffy Clyro","Foo Fighters","Future of the Left","Helmet","Kerub"],
                   ["Nirvana","Perfect Circle","Queens of the Stone Age","Silverchair","Tenacious D"],
                   ["Tool"]]' >"$LOGS/walk.out" 2>"$LOGS/walk.err" &&
        [ -s "$LOGS/screenshots/page-1.png" ] && [ -s "$LOGS/screenshots/page-2.png" ] &&
        [ -s "$LOGS/screenshots/page-3.png" ]
}

children_are_nobody() {
    local pid
    pid=$(cat "$clone/out/demo/httpd/logs/httpd.pid") &&
        [ "$(ps -o user= --ppid "$pid" | sort -u)" = nobody ]
}

# What the demo's log $1 says it started, read before it is stopped.
started_by() {
    backend_pid=$(sed -n 's/.*embedded backend .*(pid \([0-9]*\)).*/\1/p' "$LOGS/$1.log" | head -n1)
    pages=$(sed -n 's/^pages: \(.*\)\/ (.*/\1/p' "$LOGS/$1.log" | head -n1)
    httpd_pid=$(cat "$clone/out/demo/httpd/logs/httpd.pid" 2>/dev/null || true)
}

all_gone() {
    ! ss -Htln "sport = :$port" | grep -q . &&
        [ -n "$backend_pid" ] && ! kill -0 "$backend_pid" 2>/dev/null &&
        [ -n "$httpd_pid" ] && ! kill -0 "$httpd_pid" 2>/dev/null &&
        [ -n "$pages" ] && [ ! -e "$pages" ]
}

# Stops the demo as a Ctrl-C would (its traps), and checks what it started is gone.
stop_demo() {
    started_by "$1"
    cp_stop_pid "$demo_pid"
    check "$1: stopping it stops httpd and the backend, and removes the pages' copy" all_gone
}

# --- first start: builds in the clone, loads everything ----------------------
start_demo first
wait_log first 'mod_couchpage demo is up' 1200 "first: the demo builds in the clone and starts"
check "first: /bands/ answers with the first five bands" \
    json_is "$(get /bands/)" 'j.items.length === 5 && j.items[0].key === "Biffy Clyro" && j.next !== null'
check "first: / (the page under the DocumentRoot) includes the bands' fragment" \
    grep -q 'Biffy Clyro' <<<"$(get /)"
check "first: /blog/ includes the posts, newest first, through the item template" \
    grep -q '<li class="couchpage-item"><h3 class="post-title"><a href="posts/post-036">' <<<"$(get /blog/)"
check "first: a post's link leads to its page, /blog/posts/post-036" \
    grep -q '<h2 class="post-title">Ranges of keys, part 3</h2>' <<<"$(get /blog/posts/post-036)"
check "first: httpd's children run as nobody" children_are_nobody
# The embedded backend reports CouchDB's offsets: every page knows where it is.
page1=$(get /)
page2=$(get "$(nav_href "$page1" next)")
page3=$(get "$(nav_href "$page2" next)")
check "first: / page 1 says 1–5 of 11, page 1 current and no link" \
    eval 'position_is "$page1" "1–5 of 11" &&
          has "$page1" "<li><span aria-current=\"page\">1</span></li>"'
check "first: / page 2 says 6–10 of 11, page 2 current, page 1 a link" \
    eval 'position_is "$page2" "6–10 of 11" &&
          has "$page2" "<li><span aria-current=\"page\">2</span></li>" &&
          has "$page2" "<li><a href=\"/\">1</a></li>"'
# The fragment's links keep the URL the reader asked for: / (served by
# DirectoryIndex as index.shtml) leads to /?start=..., never /index.shtml.
check "first: / page 1's Next is /?start=..." eval '[[ $(nav_href "$page1" next) == "/?start="* ]]'
check "first: /blog/ page 1's Next is /blog/?start=..." \
    eval '[[ $(nav_href "$(get /blog/)" next) == "/blog/?start="* ]]'
check "first: / page 3, the last, says 11 of 11" \
    eval 'position_is "$page3" "11 of 11" &&
          has "$page3" "<li><span aria-current=\"page\">3</span></li>"'
check "first: the bands in Chromium, pages 1, 2 and 3 pictured (out/demo-clone/screenshots/)" walk_bands
check "first: /items/ answers while the items load" \
    json_is "$(get '/items/?limit=1')" 'Array.isArray(j.items) && j.total_rows <= '"$ITEMS"
wait_log first "all $ITEMS items are in" 600 "first: the items are loaded and indexed"
n=$(thousands "$ITEMS")
check "first: the loader showed its progress" grep -q "^fixtures: items: $n / $n loaded, $n indexed" "$LOGS/first.log"
check "first: /items/ answers with all $ITEMS rows" \
    json_is "$(get '/items/?limit=1000')" \
    "j.total_rows === $ITEMS && j.items.length === 1000 && j.items[999].key === 999"
check "first: the data is in the clone's out/demo/pouchdb/" test -d "$clone/out/demo/pouchdb/data/items"
last_page=$(( (ITEMS + 19) / 20 ))
items1=$(get /items.shtml)
check "first: /items.shtml says 1–20 of $n, and links its last page, $(thousands $last_page)" \
    eval 'position_is "$items1" "1–20 of $n" &&
          has "$items1" "start=last\">$(thousands $last_page)</a></li>"'
items_last=$(get '/items.shtml?start=last')
check "first: the items' last page says $(thousands $((ITEMS - 19)))–$n of $n, and is no link" \
    eval 'position_is "$items_last" "$(thousands $((ITEMS - 19)))–$n of $n" &&
          has "$items_last" "<li><span aria-current=\"page\">$(thousands $last_page)</span></li>"'
stop_demo first

# --- second start: the data on disk is reused, the backend on BACKEND_PORT ------
backend_port=$(cp_free_port)
start_demo second BACKEND_PORT="$backend_port"
wait_log second "all $ITEMS items are in" 600 "second: the demo starts again"
check "second: the embedded backend listens on BACKEND_PORT ($backend_port)" \
    eval 'grep -q "embedded backend on http://127.0.0.1:$backend_port " "$LOGS/second.log" &&
          curl -fs --max-time 10 -o /dev/null "http://127.0.0.1:$backend_port/"'
check "second: the bands were found loaded" grep -q "bands: 11 rows (0 added)" "$LOGS/second.log"
check "second: the items were found loaded" grep -q "by_n ready, $n rows (0 docs added" "$LOGS/second.log"
check "second: /bands/ answers" json_is "$(get /bands/)" 'j.items.length === 5'
# the token of the last row: [key, docid]
last=$(node -p 'const n = +process.argv[1]; encodeURIComponent(JSON.stringify([n, "item" + String(n).padStart(6, "0")]))' $((ITEMS - 1)))
check "second: /items/ pages to the last row" \
    json_is "$(get "/items/?limit=1&start=$last")" \
    "j.total_rows === $ITEMS && j.items[0].key === $((ITEMS - 1)) && j.next === null"
stop_demo second

cp -r "$clone/out/demo/httpd/logs" "$LOGS/httpd-logs" 2>/dev/null || true
echo "1..$tests"
((failures == 0))
