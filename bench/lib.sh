# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Helpers shared by bench/run and bench/load: source it, don't run it.
# Builds on scripts/lib.sh (cp_* helpers; everything started is stopped by
# its PID when the script exits).
#
#   bench_deps              scripts/lib.sh's packages, plus wrk, valgrind,
#                           procps and apache2-utils (ab) when missing
#   bench_build             cp_build when the module is missing or older
#                           than a source
#   bench_backend ITEMS DIR [couchdb]
#                           use COUCHDB_URL; else, with "couchdb" and a
#                           CouchDB release found (bench_couchdb_dist),
#                           start a node of it; else pouchdb-server in
#                           memory; load ITEMS items (0: leave the items
#                           database as it is); sets BACKEND,
#                           BACKEND_PORT, BACKEND_AUTH, CREDENTIALS,
#                           BACKEND_KIND, BACKEND_LABEL, BACKEND_LOAD_URL,
#                           BACKEND_OWN
#   bench_posts POSTS       load POSTS blog posts of about 4 KB into a CouchDB
#                           backend (bench/posts.js) where missing
#   bench_couchdb_dist      the folder of the CouchDB release's start/stop
#   bench_couch_requests    CouchDB's own count of HTTP requests served
#   bench_httpd NAME PORT DIR [KEY=VALUE ...]
#                           write DIR/httpd.conf from bench/httpd.conf.in and
#                           start httpd (up once BENCH_WAIT_PATH, default
#                           /items/, answers 2xx); sets HTTPD_PID
#   bench_rss PID           resident memory of httpd PID and its children, kB
#   bench_backend_ports     ephemeral ports of every TCP socket to or from
#                           the backend port (all states but LISTEN)
#   bench_wrk OUT T C D ARGS...
#                           wrk with bench/paths.lua; OUT gets its output
#   bench_val OUT KEY       a value of the BENCH line in OUT
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"

BENCH_DIR=$CP_ROOT/bench
BENCH_LUA=$BENCH_DIR/paths.lua
VIEW_PATH=/items/_design/items/_view/by_n
# The real-sized page: bench/posts.js's posts by date, in three locations
# of bench/httpd.conf.in (JSON with the documents, HTML from an item
# template, JSON with the documents' members POSTS_FIELDS only).
# shellcheck disable=SC2034 # used by bench/run
POSTS_VIEW_PATH=/bench_posts/_design/posts/_view/by_date
POSTS_FIELDS='title date summary'

bench_log() { printf '==> [%3d s] %s\n' "$SECONDS" "$*" >&2; }

bench_deps() {
    local missing=() p
    cp_install_deps
    for p in wrk valgrind procps apache2-utils iproute2; do
        dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q ' installed$' || missing+=("$p")
    done
    if ((${#missing[@]})); then
        bench_log "installing ${missing[*]}"
        {
            cp_as_root apt-get update -q &&
                cp_as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
                    --no-install-recommends "${missing[@]}"
        } >"$CP_OUT/bench-apt.log" 2>&1 </dev/null ||
            cp_fail_log "$CP_OUT/bench-apt.log" "apt-get install failed"
    fi
}

bench_build() {
    local so=$CP_ROOT/.libs/mod_couchpage.so newer
    if [ -f "$so" ]; then
        newer=$(find "$CP_ROOT" -maxdepth 1 \( -name '*.c' -o -name '*.h' -o -name Makefile.am \
            -o -name configure.ac \) -newer "$so" -print -quit)
        [ -z "$newer" ] && return 0
    fi
    (cp_build)
    [ -f "$so" ] || cp_die "no $so after the build"
}

# The folder of a CouchDB release with start/stop scripts: $COUCHDB_DIST,
# else ../shared/couchdb beside the repository, else beside the main
# checkout when this is a git worktree. Prints nothing when there is none.
bench_couchdb_dist() {
    local common d
    if [ -n "${COUCHDB_DIST:-}" ]; then
        [ -x "$COUCHDB_DIST/start" ] || cp_die "COUCHDB_DIST=$COUCHDB_DIST has no start script"
        echo "$COUCHDB_DIST"
        return
    fi
    common=$(git -C "$CP_ROOT" rev-parse --path-format=absolute --git-common-dir 2>/dev/null || true)
    for d in "$CP_ROOT/../shared/couchdb" ${common:+"$(dirname "$common")/../shared/couchdb"}; do
        if [ -x "$d/start" ] && [ -x "$d/stop" ]; then
            (cd "$d" && pwd)
            return
        fi
    done
}

# Starts a single CouchDB node of the release in DIST into DIR on
# COUCHDB_PORT (default: the port of the run before, DIR/port, when it is
# free, else a free port), stopped (by its recorded PID) when the script
# exits. The data stays in DIR for the next run. The node's name carries its
# port (couchdbPORT@127.0.0.1) and the shard map names the node, so data
# left on another port is no use: it is deleted, and loaded again. Sets
# COUCHDB_URL.
bench_start_couchdb() {
    local dist=$1 dir=$2 port=${COUCHDB_PORT:-} before='' log=$2/start.log
    mkdir -p "$dir"
    # a node left running in DIR by a run that was killed: stop it first (it
    # holds the port of the run before)
    "$dist/stop" "$dir" >"$log" 2>&1 || true
    [ -f "$dir/port" ] && before=$(cat "$dir/port")
    if [ -z "$port" ] && [[ $before =~ ^[0-9]+$ ]] && [ -z "$(ss -Htln "sport = :$before")" ]; then
        port=$before
    fi
    [ -n "$port" ] || port=$(cp_free_port)
    [[ $port =~ ^[0-9]+$ ]] || cp_die "COUCHDB_PORT must be a port number"
    [ "$port" = "$before" ] || rm -rf "${dir:?}"/node*
    echo "$port" >"$dir/port"
    cp_at_exit "\"$dist/stop\" \"$dir\" >>\"$log\" 2>&1"
    bench_log "starting CouchDB ($dist) on port $port, data in $dir"
    "$dist/start" "$dir" "$port" >>"$log" 2>&1 || cp_fail_log "$log" "CouchDB did not start"
    COUCHDB_URL="http://${COUCHDB_USER:-admin}:${COUCHDB_PASSWORD:-secret}@127.0.0.1:$port"
}

# CouchDB's own count of the HTTP requests it has served
# (/_node/_local/_stats/couchdb/httpd/requests); reading it is one of them.
bench_couch_requests() {
    curl -fsS --max-time 10 ${BACKEND_AUTH:+-H "Authorization: $BACKEND_AUTH"} \
        "$BACKEND/_node/_local/_stats/couchdb/httpd/requests" |
        sed -n 's/.*"value":\([0-9]*\).*/\1/p'
}

# Starts the backend (or takes COUCHDB_URL) and loads ITEMS items into it.
# BACKEND_LOAD_URL: the URL the loaders are given, credentials included;
# BACKEND_OWN: 1 when the backend is a node this script started (its data
# may be deleted and loaded again), else 0.
# shellcheck disable=SC2034 # BACKEND_AUTH, CREDENTIALS, BACKEND_*: for the callers
bench_backend() {
    local items=$1 dir=$2 want=${3:-} parsed cuser='' cpass='' url how dist count
    CREDENTIALS='# no CouchPageCredentials'
    BACKEND_AUTH=''
    BACKEND_OWN=0
    how='COUCHDB_URL'
    if [ -z "${COUCHDB_URL:-}" ] && [ "$want" = couchdb ] && [ "${BENCH_BACKEND:-}" != pouchdb ]; then
        dist=$(bench_couchdb_dist)
        if [ -n "$dist" ]; then
            bench_start_couchdb "$dist" "$CP_OUT/bench/couchdb"
            how="a single node started by bench/run, data in out/bench/couchdb"
            BACKEND_OWN=1
        fi
    fi
    if [ -n "${COUCHDB_URL:-}" ]; then
        # BACKEND: the URL without user:pass@; cuser and cpass percent-decoded.
        # shellcheck disable=SC2016 # JavaScript, not shell
        parsed=$(node -e '
            const u = new URL(process.argv[1]);
            const q = (s) => "\x27" + s.replace(/\x27/g, "\x27\\\x27\x27") + "\x27";
            const user = decodeURIComponent(u.username), pass = decodeURIComponent(u.password);
            u.username = ""; u.password = "";
            console.log(`BACKEND=${q(u.origin + u.pathname.replace(/\/+$/, ""))}`);
            console.log(`cuser=${q(user)}; cpass=${q(pass)}`);
        ' "$COUCHDB_URL" 2>/dev/null) || cp_die "COUCHDB_URL is not a URL"
        eval "$parsed"
        if [ -n "$cuser" ]; then
            esc() { local s=${1//\\/\\\\}; printf '"%s"' "${s//\"/\\\"}"; }
            CREDENTIALS="CouchPageCredentials $(esc "$cuser") $(esc "$cpass")"
            BACKEND_AUTH="Basic $(printf '%s:%s' "$cuser" "$cpass" | base64 -w0)"
        fi
        url=$COUCHDB_URL
    else
        local port
        port=$(cp_free_port)
        cp_start_pouchdb "$port" "$dir/pouchdb"
        BACKEND=http://127.0.0.1:$port
        url=$BACKEND
        how='in memory, started by the script'
    fi
    [[ $BACKEND =~ ^http://(127\.[0-9.]+|localhost|\[::1\]):([0-9]+)$ ]] ||
        cp_die "the backend must be http://127.x.x.x:PORT or localhost (got $BACKEND): load stays on loopback"
    BACKEND_PORT=${BASH_REMATCH[2]}
    # name and version from the welcome (GET /): {"couchdb": "Welcome",
    # "version": ...}, pouchdb-server's {"express-pouchdb": "Welcome!", ...}
    # shellcheck disable=SC2016 # JavaScript, not shell
    read -r BACKEND_KIND BACKEND_LABEL < <(curl -fsS --max-time 10 "$BACKEND/" | node -e '
        const w = JSON.parse(require("fs").readFileSync(0, "utf8"));
        const name = Object.keys(w).find((k) => /^Welcome/.test(w[k])) || "unknown";
        const kind = name === "couchdb" ? "couchdb" : name.includes("pouchdb") ? "pouchdb" : "other";
        const label = name === "couchdb" ? "CouchDB" : name.includes("pouchdb") ? `pouchdb-server (${name})` : name;
        console.log(kind, `${label} ${w.version || "(no version)"}`);
    ') || cp_die "the backend at $BACKEND gave no welcome (GET /)"
    BACKEND_LABEL="$BACKEND_LABEL at $BACKEND ($how)"
    BACKEND_LOAD_URL=$url
    bench_log "backend: $BACKEND_LABEL"
    # no items asked (bench/cpu-over-proxy needs the posts only): the
    # items database, there or not, is left alone
    ((items > 0)) || return 0
    if ((BACKEND_OWN)) && [ "$BACKEND_KIND" = couchdb ]; then
        # our own node keeps its data between runs: reused when it holds
        # exactly ITEMS items, loaded again otherwise
        count=$(curl -sS --max-time 30 -H "Authorization: $BACKEND_AUTH" "$BACKEND/items" |
            sed -n 's/.*"doc_count":\([0-9]*\).*/\1/p')
        if [ -n "$count" ] && [ "$count" != $((items + 1)) ]; then
            bench_log "out/bench/couchdb holds $((count - 1)) items, not $items: loading them again"
            curl -fsS --max-time 120 -X DELETE -H "Authorization: $BACKEND_AUTH" "$BACKEND/items" >/dev/null ||
                cp_die "could not delete the items database of out/bench/couchdb"
        fi
    fi
    bench_log "loading $items items where missing (200,000: about 60 s into CouchDB, 90 s into pouchdb-server)"
    local t0=$SECONDS
    node "$CP_ROOT/embedded/fixtures.js" "$url" --items "$items" --no-bands 2>&1 |
        sed -u 's/^/    /' >&2 || cp_die "loading the fixtures failed"
    count=$(curl -fsS --max-time 60 ${BACKEND_AUTH:+-H "Authorization: $BACKEND_AUTH"} \
        "$BACKEND$VIEW_PATH?limit=0&reduce=false" | sed -n 's/.*"total_rows":\([0-9]*\).*/\1/p')
    [ "$count" = "$items" ] ||
        cp_die "the view $VIEW_PATH has ${count:-no} rows, not ITEMS=$items (set ITEMS, or use another database)"
    bench_log "backend ready with $items items ($((SECONDS - t0)) s)"
}

# Loads POSTS posts into the backend's database bench_posts where missing
# (bench/posts.js: the same posts on every run) and builds its view's index.
# The node bench/run started keeps them in out/bench/couchdb for the next
# run, and loads them again when it holds another count; a COUCHDB_URL
# server's database is never deleted: the run stops instead.
bench_posts() {
    local posts=$1 replace=() t0=$SECONDS
    ((BACKEND_OWN)) && replace=(--replace)
    bench_log "posts: $posts blog posts of about 4 KB where missing (the first load of 20,000 takes about 15 s on a quiet machine, a minute or two on a busy one; kept for the next run)"
    node "$BENCH_DIR/posts.js" "$BACKEND_LOAD_URL" --posts "$posts" "${replace[@]}" 2>&1 |
        sed -u 's/^/    /' >&2 || cp_die "loading the posts failed"
    bench_log "posts ready: $posts, their view indexed ($((SECONDS - t0)) s)"
}

# Writes DIR/httpd.conf and starts httpd in the foreground (tracked).
# Extra KEY=VALUE set template tokens (SERVERS, THREADS, PROXY_EXTRA, ...).
bench_write_conf() {
    local port=$1 dir=$2; shift 2
    local apxs servers=2 threads=64 proxy_timeout=10 proxy_extra='' items=${ITEMS:-} kv
    for kv in "$@"; do
        case $kv in
        SERVERS=*) servers=${kv#*=} ;;
        THREADS=*) threads=${kv#*=} ;;
        PROXY_TIMEOUT=*) proxy_timeout=${kv#*=} ;;
        PROXY_EXTRA=*) proxy_extra=${kv#*=} ;;
        *) cp_die "bench_write_conf: unknown $kv" ;;
        esac
    done
    apxs=$(cp_apxs)
    mkdir -p "$dir/logs" "$dir/htdocs"
    local user=nobody group
    group=$(id -gn nobody 2>/dev/null || echo nogroup)
    sed_esc() { printf '%s' "$1" | sed -e 's/[\\&|]/\\&/g'; }
    sed -e "s|@SERVER_ROOT@|$(sed_esc "$dir")|g" \
        -e "s|@PORT@|$port|g" \
        -e "s|@MODULES_DIR@|$(sed_esc "$("$apxs" -q LIBEXECDIR)")|g" \
        -e "s|@MODULE@|$(sed_esc "$CP_ROOT/.libs/mod_couchpage.so")|g" \
        -e "s|@USER@|$user|g" -e "s|@GROUP@|$group|g" \
        -e "s|@SERVERS@|$servers|g" -e "s|@THREADS@|$threads|g" \
        -e "s|@MAX_WORKERS@|$((servers * threads))|g" \
        -e "s|@PROXY_TIMEOUT@|$proxy_timeout|g" \
        -e "s|@PROXY_EXTRA@|$(sed_esc "$proxy_extra")|g" \
        -e "s|@BACKEND@|$(sed_esc "$BACKEND")|g" \
        -e "s|@CREDENTIALS@|$(sed_esc "$CREDENTIALS")|g" \
        -e "s|@ITEMS@|$items|g" \
        -e "s|@POSTS_FIELDS@|$(sed_esc "$POSTS_FIELDS")|g" \
        "$BENCH_DIR/httpd.conf.in" >"$dir/httpd.conf"
    chmod 600 "$dir/httpd.conf"    # may hold credentials
}

bench_httpd_bin() {
    local apxs
    apxs=$(cp_apxs)
    echo "$("$apxs" -q SBINDIR)/$("$apxs" -q TARGET)"
}

bench_httpd() {
    local port=$1 dir=$2; shift 2
    local bin
    bench_write_conf "$port" "$dir" "$@"
    bin=$(bench_httpd_bin)
    "$bin" -t -f "$dir/httpd.conf" >"$dir/configtest.log" 2>&1 ||
        cp_fail_log "$dir/configtest.log" "httpd config test failed"
    "$bin" -f "$dir/httpd.conf" -DFOREGROUND </dev/null >>"$dir/logs/stdout.log" 2>&1 &
    HTTPD_PID=$!
    cp_track "$HTTPD_PID"
    cp_wait_http "http://127.0.0.1:$port${BENCH_WAIT_PATH:-/items/}" "$HTTPD_PID" 30 ||
        cp_fail_log "$dir/logs/error_log" "httpd did not start on port $port"
    bench_log "httpd on http://127.0.0.1:$port (pid $HTTPD_PID)"
}

# Waits until something listens on 127.0.0.1:PORT (no request sent).
bench_wait_listen() {
    local port=$1 pid=$2 secs=${3:-60} i
    for ((i = 0; i < secs * 5; i++)); do
        ss -Htln "sport = :$port" | grep -q . && return 0
        kill -0 "$pid" 2>/dev/null || return 1
        sleep 0.2
    done
    return 1
}

# Resident memory (VmRSS, kB) of PID and its children, summed.
bench_rss() {
    local pid=$1 sum=0 p kb
    for p in $pid $(pgrep -P "$pid" || true); do
        kb=$(awk '/^VmRSS:/ {print $2}' "/proc/$p/status" 2>/dev/null || true)
        sum=$((sum + ${kb:-0}))
    done
    echo "$sum"
}

bench_nprocs() { echo $((1 + $(pgrep -c -P "$1" || true))); }

# One line per TCP socket to or from the backend port, any state but
# LISTEN: the port of its other end (httpd's ephemeral port), sorted.
# A connection opened during a run is still listed at its end: open, or in
# TIME-WAIT (Linux keeps it 60 s) on whichever side closed it.
bench_backend_ports() {
    ss -Htan "( sport = :$BACKEND_PORT or dport = :$BACKEND_PORT )" |
        awk -v bp="$BACKEND_PORT" '
            $1 == "LISTEN" { next }
            {
                n = split($4, l, ":"); lp = l[n]
                n = split($5, r, ":"); rp = r[n]
                print (lp == bp ? rp : lp)
            }' | sort -u
}

# Ports in file AFTER that are not in file BEFORE: connections opened between.
bench_new_conns() { comm -13 "$1" "$2" | wc -l; }

# bench_wrk OUT THREADS CONNS DURATION_S LUA_ARGS...
# Runs wrk with bench/paths.lua against WRK_URL (default $BASE/), with
# WRK_TIMEOUT (default 10s) and WRK_AUTH (an Authorization value) if set.
# With WRK_MAX=N it ends after N responses (DURATION_S is then a cap).
# With WRK_LAT_FILE, bench/paths.lua writes every page's latency there.
bench_wrk() {
    local out=$1 t=$2 c=$3 d=$4; shift 4
    local url=${WRK_URL:-$BASE/} hdr=() max=() done_file=$out.done pid i
    [ -n "${WRK_AUTH:-}" ] && hdr=(-H "Authorization: $WRK_AUTH")
    [ -n "${WRK_MAX:-}" ] && max=("max=$WRK_MAX")
    rm -f "$done_file"
    BENCH_DONE_FILE=$done_file BENCH_LAT_FILE=${WRK_LAT_FILE:-} \
        BENCH_ONE_CONN_PER_THREAD=$([ "$t" = "$c" ] && echo 1 || echo 0) \
        wrk -t "$t" -c "$c" -d "${d}s" --timeout "${WRK_TIMEOUT:-10s}" \
        "${hdr[@]}" -s "$BENCH_LUA" "$url" -- "threads=$t" "${max[@]}" "$@" >"$out" 2>&1 &
    pid=$!
    cp_track "$pid"
    # wrk waits out -d even when every thread has stopped at WRK_MAX: SIGINT
    # ends it then (it prints its summary as at the end of -d). Past d + 30 s
    # it is stuck: killed.
    for ((i = 0; i < (d + 30) * 10; i++)); do
        kill -0 "$pid" 2>/dev/null || break
        if [ -n "${WRK_MAX:-}" ] && [ -f "$done_file" ] &&
            [ "$(wc -l <"$done_file")" -ge "$t" ]; then
            kill -INT "$pid" 2>/dev/null || true
        fi
        sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
        kill -KILL "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
        cat "$out" >&2
        cp_die "wrk did not end ($out)"
    fi
    wait "$pid" || { cat "$out" >&2; cp_die "wrk failed ($out)"; }
    grep -q '^BENCH ' "$out" || { cat "$out" >&2; cp_die "wrk printed no BENCH line ($out)"; }
}

bench_val() {
    sed -n 's/^BENCH //p' "$1" | tr ' ' '\n' | sed -n "s/^$2=//p" | awk 'NR == 1'
}

# URL-encoded start token of the row keyed N (keys are 0..N-1, ids item%06d),
# with MARK (a walk's mark: URL-safe characters) as its last member if given.
bench_token() {
    if [ -n "${2:-}" ]; then
        printf '%%5B%d%%2C%%22item%06d%%22%%2C%%22%s%%22%%5D' "$1" "$1" "$2"
    else
        printf '%%5B%d%%2C%%22item%06d%%22%%5D' "$1" "$1"
    fi
}

# Floor (a): the seed algorithm's two queries for a page starting at row N
# (CouchDB's pagination recipe, docs/algorithm.md; count 20, the location's
# options: no links, no documents): forward limit=count+1, backward
# descending skip=1 limit=count. bench/check.js checks before any timing that their rows make
# exactly the module's page, and fails the run when they do not. Each asks
# update_seq=true, as the module does for a page of a view's rows (the
# sequence that seals its ETag).
bench_forward() { printf '%s?limit=21&reduce=false&startkey=%d&startkey_docid=item%06d&update_seq=true' "$VIEW_PATH" "$1" "$1"; }
bench_backward() {
    printf '%s?limit=20&reduce=false&descending=true&startkey=%d&startkey_docid=item%06d&skip=1&update_seq=true' \
        "$VIEW_PATH" "$1" "$1"
}
# The first page's one query.
bench_first() { printf '%s?limit=21&reduce=false&update_seq=true' "$VIEW_PATH"; }

# Arithmetic with awk: bench_calc FORMAT EXPR, e.g. bench_calc %.2f '3 / 7'
bench_calc() { awk "BEGIN { printf \"$1\", $2 }" </dev/null; }

bench_machine() {
    local cpu mem
    cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | awk 'NR == 1')
    mem=$(awk '/^MemTotal:/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo)
    printf '%s cores (nproc), %s, %s RAM, %s' "$(nproc)" "${cpu:-unknown CPU}" "$mem" \
        "$(. /etc/os-release && echo "$PRETTY_NAME")"
}

# CPU time (utime + stime, clock ticks) of the processes PIDS, all threads.
bench_proc_ticks() {
    local sum=0 p t
    for p in "$@"; do
        t=$(awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$p/stat" 2>/dev/null || echo 0)
        sum=$((sum + t))
    done
    echo "$sum"
}

# "UTIME STIME" (clock ticks) of the processes PIDS, all threads.
bench_proc_ticks2() {
    local u=0 s=0 p t
    for p in "$@"; do
        t=$(awk '{ sub(/^.*\) /, ""); print $12, $13 }' "/proc/$p/stat" 2>/dev/null || echo 0 0)
        u=$((u + ${t% *}))
        s=$((s + ${t#* }))
    done
    echo "$u $s"
}

# "BUSY TOTAL" clock ticks of the whole machine (/proc/stat), all cores.
bench_sys_ticks() {
    awk '/^cpu / { t = 0; for (i = 2; i <= NF; i++) t += $i; print t - $5 - $6, t }' /proc/stat
}

# The PID listening on 127.0.0.1:PORT (ss -p), or nothing.
bench_listener_pid() {
    ss -Htlnp "sport = :$1" | sed -n 's/.*pid=\([0-9]*\).*/\1/p' | awk 'NR == 1'
}

# --- callgrind (bench/run, bench/callgrind-page) -----------------------------
# Set cg_dir (the profiles and reports) and CALLGRIND_PAGES first; CG_PORT:
# httpd's port under callgrind (default: a free one).
cg_dir=${cg_dir:-$CP_OUT/bench/callgrind}
CG_WARM=10
# callgrind_run NAME PAGES PATH [AUTHORIZATION]: PAGES pages of PATH, with
# that Authorization header if given
callgrind_run() {
    local name=$1 pages=$2 path=$3 auth=${4:-} port pid bin
    port=${CG_PORT:-$(cp_free_port)}
    bench_write_conf "$port" "$cg_dir/$name" SERVERS=1 THREADS=16 PROXY_TIMEOUT=60
    bin=$(bench_httpd_bin)
    # httpd drops to nobody even with -X: callgrind creates its file at
    # start (as root) and writes it at exit (as nobody), so it is made
    # beforehand, writable by nobody
    mkdir -p "$cg_dir/out"
    : >"$cg_dir/out/$name.out"
    chown nobody "$cg_dir/out/$name.out"
    chmod 666 "$cg_dir/out/$name.out"
    valgrind --tool=callgrind --vgdb=no --callgrind-out-file="$cg_dir/out/$name.out" \
        "$bin" -X -f "$cg_dir/$name/httpd.conf" </dev/null >"$cg_dir/$name.valgrind.log" 2>&1 &
    pid=$!
    cp_track "$pid"
    bench_wait_listen "$port" "$pid" 120 ||
        cp_fail_log "$cg_dir/$name.valgrind.log" "httpd under callgrind did not start"
    ab -q -k -c 1 -n "$pages" -s 60 ${auth:+-H "Authorization: $auth"} \
        "http://127.0.0.1:$port$path" >"$cg_dir/$name.ab" 2>&1 ||
        cp_fail_log "$cg_dir/$name.ab" "ab failed under callgrind"
    if ! grep -q '^Failed requests: *0$' "$cg_dir/$name.ab" ||
        ! grep -q "^Complete requests: *$pages$" "$cg_dir/$name.ab" ||
        grep -q '^Non-2xx responses' "$cg_dir/$name.ab"; then
        cp_fail_log "$cg_dir/$name.ab" "ab saw failed requests under callgrind"
    fi
    kill -TERM "$pid"
    for ((i = 0; i < 600; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    cp_stop_pid "$pid"
    [ -s "$cg_dir/out/$name.out" ] ||
        cp_fail_log "$cg_dir/$name.valgrind.log" "callgrind wrote no profile"
    # httpd killed by a signal under callgrind (valgrind writes the profile
    # all the same): reported beside the crashes of the measured phases
    if grep -q 'Process terminating with default action of signal' "$cg_dir/$name.valgrind.log"; then
        CG_CRASHES+="${CG_CRASHES:+; }$name ($(sed -n 's/.*default action of signal \([0-9]*\).*/signal \1/p' \
            "$cg_dir/$name.valgrind.log" | awk 'NR == 1'), $cg_dir/$name.valgrind.log)"
    fi
}
CG_CRASHES=''

# Self cost per function: "Ir<TAB>object<TAB>function"
cg_functions() { perl "$BENCH_DIR/callgrind-self.pl" "$1"; }

# The run's total Ir: the "totals:" (else "summary:") line of the callgrind file
cg_total() { sed -n 's/^\(totals\|summary\): *\([0-9]*\).*/\1 \2/p' "$1" | sort -r | awk 'NR == 1 { print $2 }'; }

# "IR<TAB>OBJECT<TAB>FUNCTION" lines with the object's group for the split
# (the module, jansson, OpenSSL's libcrypto (the ETag's SHA-1), mod_proxy
# (+ _http), httpd itself, APR and APR-util, libc, everything else) in
# place of the object, IR prefixed with $1.
cg_group() {
    awk -F'\t' -v OFS='\t' -v sign="$1" '{
        o = $2
        if (o ~ /mod_couchpage/) g = "mod_couchpage"
        else if (o ~ /libjansson/) g = "jansson"
        else if (o ~ /libcrypto/) g = "libcrypto"
        else if (o ~ /mod_proxy/) g = "mod_proxy + mod_proxy_http"
        else if (o ~ /libaprutil|libapr-/) g = "APR + APR-util"
        else if (o ~ /libc\.so|libc-/) g = "libc"
        else if (o ~ /\/apache2$|\/httpd$|\/mod_/) g = "httpd core + other modules"
        else g = "other (ld.so, libpthread, ...)"
        print sign $1, g, $3
    }'
}

# callgrind_page NAME PATH WHAT [AUTHORIZATION]: CG_WARM pages of PATH under callgrind, then
# CG_WARM + CALLGRIND_PAGES; sets IR_PER_PAGE[NAME] and
# CG_SUMMARY[NAME] (the split by object) and writes cg_dir/NAME.report.txt.
# shellcheck disable=SC2034 # CG_SUMMARY: for the callers
declare -A IR_PER_PAGE CG_SUMMARY
callgrind_page() {
    local name=$1 path=$2 what=$3 auth=${4:-} ir ir_warm per_page
    bench_log "callgrind: httpd -X serving $CG_WARM $what, then $((CG_WARM + CALLGRIND_PAGES)) (slow: about a minute)"
    callgrind_run "$name-warm" "$CG_WARM" "$path" "$auth"
    callgrind_run "$name" "$((CG_WARM + CALLGRIND_PAGES))" "$path" "$auth"
    ir=$(cg_total "$cg_dir/out/$name.out")
    ir_warm=$(cg_total "$cg_dir/out/$name-warm.out")
    IR_PER_PAGE[$name]=$(bench_calc %.0f "($ir - $ir_warm) / $CALLGRIND_PAGES")
    cg_functions "$cg_dir/out/$name.out" >"$cg_dir/$name.fn"
    cg_functions "$cg_dir/out/$name-warm.out" >"$cg_dir/$name-warm.fn"
    # per function and per group: (the longer run - the warm one) / pages
    cg_group '' <"$cg_dir/$name.fn" >"$cg_dir/$name.grouped"
    cg_group - <"$cg_dir/$name-warm.fn" >"$cg_dir/$name-warm.grouped"
    per_page=$cg_dir/$name.per-page.tsv
    cat "$cg_dir/$name.grouped" "$cg_dir/$name-warm.grouped" |
        awk -F'\t' -v n="$CALLGRIND_PAGES" '
            { g[$2] += $1; f[$2 "\t" $3] += $1 }
            END {
                for (k in g) printf "G\t%.0f\t%s\n", g[k] / n, k
                for (k in f) printf "F\t%.0f\t%s\n", f[k] / n, k
            }' | sort -t$'\t' -k1,1 -k2,2nr >"$per_page"
    CG_SUMMARY[$name]=$(awk -F'\t' -v t="${IR_PER_PAGE[$name]}" '$1 == "G" && $2 > 0 {
            printf "%s%s %.0f%%", sep, $3, 100 * $2 / t; sep = ", " }' "$per_page")
    {
        echo "$what: instructions per page (Ir, callgrind; the run of CG_WARM + N pages minus the run of CG_WARM) by object:"
        awk -F'\t' '$1 == "G" { printf "  %12d  %s\n", $2, $3 }' "$per_page"
        echo "top functions per page (self cost):"
        awk -F'\t' '$1 == "F"' "$per_page" | sort -t$'\t' -k2,2nr | awk 'NR <= 25' |
            awk -F'\t' '{ printf "  %12d  %-28s %s\n", $2, $3, $4 }'
        echo "inclusive cost per page (callees included) of some entry points:"
        callgrind_annotate --auto=no --inclusive=yes --threshold=100 "$cg_dir/out/$name.out" 2>/dev/null |
            perl -ne '
                next unless /^\s*([\d,]+)\s+(?:\([\d. %]+\)\s+)?\S*?:(\w+)(?:\s+\[|\s*$)/;
                my ($ir, $fn) = ($1, $2); $ir =~ tr/,//d;
                $max{$fn} = $ir if !defined $max{$fn} || $ir > $max{$fn};
                END {
                    for my $fn (qw(ap_run_process_connection ap_read_request
                                   ap_process_async_request couchpage_handler
                                   couchpage_backend_fetch ap_sub_req_method_uri ap_run_sub_req
                                   ap_destroy_sub_req cp_response_read_batch
                                   cp_page_assemble cp_render_json cp_render_etag
                                   json_loadb json_dumps json_delete
                                   cp_token_decode cp_token_encode
                                   cp_seal_tokens cp_unseal)) {
                        printf "  %12d  %s\n", ($max{$fn} // 0) / '"$CALLGRIND_PAGES"', $fn;
                    }
                }'
        echo "inside mod_couchpage (self cost per page):"
        awk -F'\t' '$1 == "F" && $3 == "mod_couchpage"' "$per_page" |
            sort -t$'\t' -k2,2nr | awk 'NR <= 15' | awk -F'\t' '{ printf "  %12d  %s\n", $2, $4 }'
    } >"$cg_dir/$name.report.txt"
}
