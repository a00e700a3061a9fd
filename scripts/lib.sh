# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Shared helpers of scripts/demo and scripts/test: source it, don't run it.
#
#   cp_install_deps     install missing Debian packages, npm ci in embedded/
#   cp_build            autoreconf (when needed), configure, make -j2
#   cp_free_port        print a free TCP port on 127.0.0.1
#   cp_start_pouchdb PORT DIR
#                       start pouchdb-server in memory on 127.0.0.1:PORT, cwd DIR
#   cp_start_embedded PORT DIR
#                       start the demo's backend (embedded/server.js) on
#                       127.0.0.1:PORT, its data in DIR/data (kept), log DIR/server.log
#   cp_track PID        stop PID (TERM, then KILL) when the script exits
#   cp_at_exit CMD      run CMD when the script exits
#   cp_tap_counts LOG TAPDIR
#                       a Test::Harness run counted test by test: passed, failed,
#                       skipped, TODO, oracle checks
# Everything a script starts is stopped by its recorded PID, on any exit.
set -euo pipefail

CP_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CP_OUT=$CP_ROOT/out    # scratch output (gitignored)

CP_APT_PACKAGES=(
    apache2 apache2-dev libjansson-dev libsimdjson-dev libapr1-dev libaprutil1-dev
    libapache2-mod-perl2 autoconf automake libtool pkg-config libcmocka-dev
    wrk libssl-dev curl gcc make iproute2 util-linux perl
    # the browser test (t/browser/walk.js): Debian's chromium, and a font
    chromium fonts-dejavu-core
    # the libFuzzer targets (fuzz/): clang, its runtimes, llvm-symbolizer
    clang libclang-rt-14-dev llvm
    # the Debian package (debian/, scripts/test-deb): dpkg-buildpackage, dh, lintian
    dpkg-dev debhelper lintian
)

CP_PIDS=()
CP_EXIT_CMDS=()

cp_log() { printf '==> %s\n' "$*" >&2; }
cp_die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# Prints the last lines of a log and dies.
cp_fail_log() {
    local log=$1; shift
    tail -n 40 "$log" >&2 || true
    cp_die "$* (full log: $log)"
}

cp_track() { CP_PIDS+=("$1"); }
cp_at_exit() { CP_EXIT_CMDS+=("$1"); }

# Stops one PID: TERM, up to 10 s, then KILL.
cp_stop_pid() {
    local pid=$1 i
    kill -0 "$pid" 2>/dev/null || return 0
    kill -TERM "$pid" 2>/dev/null || return 0
    for ((i = 0; i < 100; i++)); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null || true
}

# Stops what this script started, newest first, then runs the exit commands.
cp_stop() {
    local i
    for ((i = ${#CP_PIDS[@]} - 1; i >= 0; i--)); do cp_stop_pid "${CP_PIDS[i]}"; done
    CP_PIDS=()
    for ((i = ${#CP_EXIT_CMDS[@]} - 1; i >= 0; i--)); do eval "${CP_EXIT_CMDS[i]}" || true; done
    CP_EXIT_CMDS=()
}
trap 'cp_stop' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

cp_as_root() {
    if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}

cp_install_deps() {
    local missing=() p
    mkdir -p "$CP_OUT"
    for p in "${CP_APT_PACKAGES[@]}"; do
        dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q ' installed$' || missing+=("$p")
    done
    # node and npm may come from elsewhere (nodesource): only their absence counts.
    command -v node >/dev/null || missing+=(nodejs)
    command -v npm >/dev/null || missing+=(npm)
    if ((${#missing[@]})); then
        cp_log "installing ${missing[*]}"
        {
            cp_as_root apt-get update -q &&
                cp_as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
        } >"$CP_OUT/apt.log" 2>&1 </dev/null || cp_fail_log "$CP_OUT/apt.log" "apt-get install failed"
    fi
    cp_npm_ci
}

# npm ci in embedded/ when node_modules is missing or older than the lockfile.
# --ignore-scripts: no native builds; leveldown (the demo's LevelDB) loads the
# prebuilt binary its package ships (node-gyp-build), sqlite3 is not used.
cp_npm_ci() {
    local dir=$CP_ROOT/embedded stamp sum
    stamp=$dir/node_modules/.couchpage-lock.sha256
    sum=$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)
    [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$sum" ] && return 0
    cp_log "npm ci (embedded/)"
    (cd "$dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error) \
        >"$CP_OUT/npm.log" 2>&1 </dev/null || cp_fail_log "$CP_OUT/npm.log" "npm ci failed"
    echo "$sum" >"$stamp"
}

cp_apxs() { command -v apxs || command -v apxs2 || echo /usr/bin/apxs; }

# Build output goes to out/build.log; compiler warnings are shown.
cp_build() {
    local log=$CP_OUT/build.log
    mkdir -p "$CP_OUT"
    : >"$log"
    cd "$CP_ROOT"
    if [ ! -x configure ] || [ configure.ac -nt configure ]; then
        cp_log "autoreconf"
        autoreconf -fi >>"$log" 2>&1 || cp_fail_log "$log" "autoreconf failed"
    fi
    if [ ! -f Makefile ] || [ ! -f config.status ] || [ configure -nt config.status ]; then
        cp_log "configure"
        ./configure --with-apxs="$(cp_apxs)" >>"$log" 2>&1 || cp_fail_log "$log" "configure failed"
    fi
    cp_log "make"
    make -j2 >>"$log" 2>&1 || cp_fail_log "$log" "make failed"
    grep -E '(warning|error):' "$log" >&2 || true
}

cp_free_port() {
    perl -MIO::Socket::INET -e \
        'print IO::Socket::INET->new(Listen => 1, LocalAddr => "127.0.0.1", LocalPort => 0)->sockport, "\n"'
}

# Waits until URL answers 2xx (up to SECONDS, default 60) while PID lives.
cp_wait_http() {
    local url=$1 pid=$2 secs=${3:-60} i
    for ((i = 0; i < secs * 5; i++)); do
        curl -fsS -o /dev/null --max-time 2 "$url" 2>/dev/null && return 0
        kill -0 "$pid" 2>/dev/null || return 1
        sleep 0.2
    done
    return 1
}

cp_start_pouchdb() {
    local port=$1 dir=$2 pid
    mkdir -p "$dir"
    # pouchdb-server writes config.json and log.txt into its cwd
    (cd "$dir" && exec node "$CP_ROOT/embedded/node_modules/pouchdb-server/bin/pouchdb-server" \
        --in-memory -p "$port" -o 127.0.0.1 </dev/null >"$dir/stdout.log" 2>&1) &
    pid=$!
    cp_track "$pid"
    cp_wait_http "http://127.0.0.1:$port/" "$pid" ||
        cp_fail_log "$dir/stdout.log" "pouchdb-server did not start on port $port"
    cp_log "pouchdb-server on http://127.0.0.1:$port (pid $pid)"
}

# The demo's backend: pouchdb-server's parts on LevelDB, the data kept in
# DIR/data for the next start (see embedded/server.js).
cp_start_embedded() {
    local port=$1 dir=$2 pid
    mkdir -p "$dir"
    node "$CP_ROOT/embedded/server.js" --dir "$dir/data" --port "$port" --host 127.0.0.1 \
        </dev/null >"$dir/server.log" 2>&1 &
    pid=$!
    cp_track "$pid"
    cp_wait_http "http://127.0.0.1:$port/" "$pid" ||
        cp_fail_log "$dir/server.log" "the embedded backend did not start on port $port"
    cp_log "embedded backend on http://127.0.0.1:$port (pid $pid), data in $dir/data"
}

# Counts a Test::Harness run (t/TEST, prove) test by test. LOG is its output
# (the Test Summary Report and the closing 'Files=N, Tests=N' line); TAPDIR
# holds the TAP of each file as the harness read it (the harness writes it
# there when PERL_TEST_HARNESS_DUMP_TAP=TAPDIR). Prints one line for each test
# that needs a word, then the counts:
#   failed FILE N DESC      a failed test of the module
#   oracle_failed FILE N DESC   a failed oracle check
#   skip FILE N REASON      a skipped test (N is '-' for a file that skipped all)
#   todo FILE N DESC        a TODO test that failed: a known failure
#   todo_passed FILE N DESC a TODO test that passed (counted as passed)
#   broken FILE REASON      the file died or missed its plan: a non-zero exit
#                           status without a failed test, or a parse error
#                           (then what it printed to stderr, its last 8
#                           lines, e.g. why it died); or TAPDIR lacks tests
#                           the harness counted
#   counts PASSED FAILED SKIPPED TODO ORACLE_PASSED ORACLE_FAILED BROKEN TODO_PASSED
# An oracle check tests the backend (the double, CouchDB), not the module:
# its description starts with 'oracle:'; it counts apart, unless skipped or
# TODO. PASSED is '-' when LOG has no closing line (the run did not finish).
cp_tap_counts() {
    perl -MTAP::Parser -MFile::Find -e '
        my ($log, $dir) = @ARGV;
        my ($tests, $broken, %n) = ("-", 0);
        $n{$_} = 0 for qw(passed failed skipped todo oracle_passed oracle_failed todo_passed);
        my (@lines, $file, $wstat, $failed, $parse, %printed, @since);
        sub finish_file {
            return unless defined $file;
            if ($parse or ($wstat and !$failed)) {
                $broken++;
                my $said = @{ $printed{$file} || [] } ? "; it printed: " . join(" | ", @{ $printed{$file} }) : "";
                push @lines, "broken $file " . ($parse ? "parse errors" : "exit status $wstat") . $said;
            }
            undef $file;
        }
        open my $in, "<", $log or die "$log: $!\n";
        while (<$in>) {
            chomp(my $line = $_);
            # What a file prints to stderr (a die message) comes before its
            # progress line: kept, less the harness'"'"'s words, for a broken file.
            if ($line =~ /^(\S+\.t) \.+ /) { $printed{$1} = [ @since > 8 ? @since[-8 .. -1] : @since ]; @since = () }
            elsif ($line =~ /\S/ and $line !~ /^(?:Dubious, test returned|Failed \d+\/\d+ subtests|# Looks like |Test Summary Report|-+$)/) {
                push @since, $line;
            }
            if (/^(\S.*?)\s+\(Wstat: (\d+)(?: \([^)]*\))? Tests: \d+ Failed: (\d+)\)$/) {
                finish_file();
                ($file, $wstat, $failed, $parse) = ($1, $2, $3, 0);
            }
            elsif (/^Files=\d+, Tests=(\d+),/) { finish_file(); $tests = $1 }
            elsif (defined $file and /^  Parse errors:/) { $parse = 1 }
            elsif (defined $file and !/^\s/) { finish_file() }
        }
        finish_file();
        my @tap;
        find({ no_chdir => 1, wanted => sub { push @tap, $_ if -f } }, $dir) if -d $dir;
        my $seen = 0;
        for my $path (sort @tap) {
            (my $name = substr($path, length $dir)) =~ s{^/+}{};
            open my $fh, "<", $path or die "$path: $!\n";
            my $parser = TAP::Parser->new({ tap => do { local $/; <$fh> } });
            while (my $r = $parser->next) {
                next unless $r->is_test;
                $seen++;
                my ($num, $desc) = ($r->number, $r->description // "");
                $desc =~ s/^-\s*//;
                my $say = sub { push @lines, "$_[0] $name $num " . ($_[1] // $desc) };
                if ($r->has_skip) { $n{skipped}++; $say->("skip", $r->explanation) }
                elsif ($r->has_todo) {
                    if ($r->is_actual_ok) { $n{todo_passed}++; $n{passed}++; $say->("todo_passed") }
                    else { $n{todo}++; $say->("todo", $desc . " (TODO: " . $r->explanation . ")") }
                }
                elsif ($desc =~ /^oracle:/) {
                    if ($r->is_ok) { $n{oracle_passed}++ } else { $n{oracle_failed}++; $say->("oracle_failed") }
                }
                elsif ($r->is_ok) { $n{passed}++ }
                else { $n{failed}++; $say->("failed") }
            }
            if (defined(my $why = $parser->skip_all)) {
                $n{skipped}++;
                push @lines, "skip $name - " . ($why eq "" ? "(no reason given)" : $why);
            }
        }
        if ($tests ne "-" and $seen != $tests) {
            $broken++;
            push @lines, "broken - the harness counted $tests tests, the TAP in $dir holds $seen";
        }
        print "$_\n" for @lines;
        print join(" ", "counts", $tests eq "-" ? "-" : $n{passed},
                   @n{qw(failed skipped todo oracle_passed oracle_failed)}, $broken, $n{todo_passed}), "\n";
    ' "$1" "$2"
}
