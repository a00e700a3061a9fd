#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs every libFuzzer target in fuzz/ for a bounded time, each over a copy
# of its seed corpus (fuzz/corpus/TARGET/) in a scratch directory: the tree
# is never written to. Builds the targets first (fuzz/build.sh). Prints one
# line per target, 'fuzz: TARGET ok|FAILED, N execs in S s ...', and exits
# non-zero when any target found a crash, a leak, undefined behaviour or a
# broken check. What a failing target found is kept in out/fuzz/artifacts/
# (crash-*, leak-*, ...; replay one with out/fuzz/bin/TARGET FILE), its log
# in out/fuzz/TARGET.log.
#
#   fuzz/run.sh [SECONDS] [TARGET...]     default: 20 s each, every target
#
#   FUZZ_JOBS=N        run the targets N at a time (default 1)
#   FUZZ_ARGS="..."    more libFuzzer options, e.g. -max_len=65536
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
secs=${1:-20}
shift || true
[[ $secs =~ ^[0-9]+$ ]] || { echo "usage: fuzz/run.sh [SECONDS] [TARGET...]" >&2; exit 2; }
out=$root/out/fuzz
bin=$out/bin

mkdir -p "$out/artifacts"
if ! "$root/fuzz/build.sh" "$@" >"$out/build.log" 2>&1; then
    tail -n 30 "$out/build.log" >&2
    echo "fuzz: build FAILED (see out/fuzz/build.log)"
    exit 1
fi

targets=("$@")
if ((${#targets[@]} == 0)); then
    for f in "$root"/fuzz/fuzz_*.c; do targets+=("$(basename "$f" .c)"); done
fi

scratch=$(mktemp -d /tmp/couchpage-fuzz.XXXXXX)
# Stops what is still running (on an interrupt): the fuzzers, by their PIDs.
cleanup() {
    local f
    for f in "$scratch"/*.pid; do
        [ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null
    done
    wait
    rm -rf "$scratch"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:symbolize=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

# Runs one target; writes 'ok|FAILED execs' to $scratch/TARGET.result.
run_one() {
    local t=$1 corpus=$scratch/$1/corpus art=$scratch/$1/artifacts log=$out/$1.log rc=0 execs dict=()
    mkdir -p "$corpus" "$art"
    if [ -d "$root/fuzz/corpus/$t" ]; then
        cp -r "$root/fuzz/corpus/$t/." "$corpus/"
    fi
    if [ -f "$root/fuzz/$t.dict" ]; then
        dict=(-dict="$root/fuzz/$t.dict")
    elif [ -f "$root/fuzz/json.dict" ]; then
        dict=(-dict="$root/fuzz/json.dict")
    fi
    # shellcheck disable=SC2086
    "$bin/$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$art/" "${dict[@]}" ${FUZZ_ARGS:-} "$corpus" >"$log" 2>&1 </dev/null &
    echo $! >"$scratch/$t.pid"
    wait $! || rc=$?
    rm -f "$scratch/$t.pid"
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n1)
    if ((rc == 0)) && [ -z "$(ls -A "$art")" ]; then
        echo "ok ${execs:-?} $(find "$corpus" -type f | wc -l)" >"$scratch/$t.result"
    else
        cp "$art"/* "$out/artifacts/" 2>/dev/null
        echo "FAILED ${execs:-?} $rc $(cd "$art" && ls | head -n1)" >"$scratch/$t.result"
    fi
}

jobs=${FUZZ_JOBS:-1}
for t in "${targets[@]}"; do
    [ -x "$bin/$t" ] || { echo "fuzz: no target $t" >&2; exit 2; }
    run_one "$t" &
    while (($(jobs -rp | wc -l) >= jobs)); do wait -n; done
done
wait

failed=0
for t in "${targets[@]}"; do
    read -r res execs a b <"$scratch/$t.result" 2>/dev/null || res=FAILED
    if [ "$res" = ok ]; then
        echo "fuzz: $t ok, ${execs} execs in ${secs} s, corpus ${a} inputs"
    else
        failed=$((failed + 1))
        echo "fuzz: $t FAILED after ${execs:-?} execs (exit ${a:-?}${b:+, out/fuzz/artifacts/$b}; log out/fuzz/$t.log)"
        grep -m1 -E 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:|check failed:' "$out/$t.log" | sed 's/^/    /'
    fi
done
((failed == 0))
