#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs the libFuzzer targets in fuzz/ (every fuzz_*.c and fuzz_*.cc, or those named),
# builds them first (fuzz/build.sh), and merges what long runs grew back
# into the kept seed corpora (fuzz/corpus/TARGET/).
#
#   fuzz/run.sh [SECONDS] [TARGET...]       default: 20 s each, every target
#   fuzz/run.sh merge DIR [TARGET...]       what DIR/TARGET grew, into fuzz/corpus/TARGET
#
# A run prints one line per target, 'fuzz: TARGET ok|FAILED, N execs in S s,
# corpus N inputs (K KB)', and exits non-zero when any target found a crash,
# a leak, undefined behaviour or a broken check. What a failing target found
# is kept in out/fuzz/artifacts/ (crash-*, leak-*, ...; replay one with
# out/fuzz/bin/TARGET FILE), its log in out/fuzz/TARGET.log (a long run's in
# out/fuzz/TARGET.long.log).
#
# The short run (CI: scripts/test, FUZZ_SECONDS) fuzzes over a scratch copy
# of fuzz/corpus/TARGET/: the tree is never written to, what it finds is
# thrown away. The long mode keeps what the corpus grows into:
#
#   FUZZ_KEEP=DIR      each target's corpus is DIR/TARGET (made the first
#                      time, kept after; fuzz/corpus/TARGET and
#                      FUZZ_SEEDS/TARGET are read too, never written)
#   FUZZ_RUNS=N        stop each target after N executions (SECONDS then
#                      caps the time; 0: no cap)
#   FUZZ_SEEDS=DIR     more seeds, read from DIR/TARGET (fuzz/make-seeds
#                      writes real-sized answers to out/fuzz/seeds/)
#   FUZZ_JOBS=N        run the targets N at a time (default 1)
#   FUZZ_ARGS="..."    more libFuzzer options, e.g. -max_len=65536
#
# merge minimises with libFuzzer's -merge=1: of the inputs in DIR/TARGET
# (those of up to FUZZ_MERGE_KB, default 16, KB: the corpora stay small in
# git) and in FUZZ_SEEDS/TARGET (whole), only those that reach coverage the
# kept corpus does not are copied into fuzz/corpus/TARGET (named by their
# SHA-1, a seed as real-NAME); the kept inputs stay, named for the case
# each one is. Run it with the build the corpus was grown with; commit the
# result.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
usage="usage: fuzz/run.sh [SECONDS] [TARGET...] | fuzz/run.sh merge DIR [TARGET...]"
mode=run
if [ "${1:-}" = merge ]; then
    mode=merge
    keep=${2:?$usage}
    shift 2
    [ -d "$keep" ] || { echo "fuzz/run.sh: no directory $keep" >&2; exit 2; }
    keep=$(cd "$keep" && pwd)
else
    secs=${1:-20}
    shift || true
    [[ $secs =~ ^[0-9]+$ ]] || { echo "$usage" >&2; exit 2; }
    keep=${FUZZ_KEEP:-}
    if [ -n "$keep" ]; then
        mkdir -p "$keep" && keep=$(cd "$keep" && pwd) || exit 2
    fi
fi
runs=${FUZZ_RUNS:-}
[[ -z $runs || $runs =~ ^[0-9]+$ ]] || { echo "fuzz/run.sh: FUZZ_RUNS=$runs is not a number" >&2; exit 2; }
seeds=${FUZZ_SEEDS:-}
# a long run logs apart, so that a short one (scripts/test) beside it does not write over its log
logtag=${keep:+.long}
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
    for f in "$root"/fuzz/fuzz_*.c "$root"/fuzz/fuzz_*.cc; do
        [ -f "$f" ] && targets+=("$(basename "${f%.cc}" .c)")
    done
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

# The dictionary of a target: fuzz/TARGET.dict, else fuzz/json.dict.
dict_of() {
    if [ -f "$root/fuzz/$1.dict" ]; then
        echo "-dict=$root/fuzz/$1.dict"
    elif [ -f "$root/fuzz/json.dict" ]; then
        echo "-dict=$root/fuzz/json.dict"
    fi
}

# The directories of existing seeds of a target, besides its own corpus.
seed_dirs() {
    [ -d "$root/fuzz/corpus/$1" ] && echo "$root/fuzz/corpus/$1"
    [ -n "$seeds" ] && [ -d "$seeds/$1" ] && echo "$seeds/$1"
    true
}

# Runs one target; writes 'ok|FAILED execs seconds ...' to $scratch/TARGET.result.
run_one() {
    local t=$1 corpus=$scratch/$1/corpus art=$scratch/$1/artifacts log=$out/$1$logtag.log rc=0 execs
    local start=$SECONDS took size d dict=() limit=(-max_total_time="$secs") seeded=()
    mkdir -p "$art"
    mapfile -t seeded < <(seed_dirs "$t")
    if [ -n "$keep" ]; then
        # long mode: the corpus grows in DIR/TARGET, the seeds only read
        corpus=$keep/$t
        mkdir -p "$corpus"
    else
        mkdir -p "$corpus"
        for d in "${seeded[@]}"; do cp -r "$d/." "$corpus/"; done
        seeded=()
    fi
    mapfile -t dict < <(dict_of "$t")
    [ -n "$runs" ] && limit+=(-runs="$runs")
    # shellcheck disable=SC2086
    "$bin/$t" "${limit[@]}" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$art/" "${dict[@]}" ${FUZZ_ARGS:-} "$corpus" "${seeded[@]}" \
        >"$log" 2>&1 </dev/null &
    echo $! >"$scratch/$t.pid"
    wait $! || rc=$?
    rm -f "$scratch/$t.pid"
    took=$((SECONDS - start))
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n1)
    size="$(find "$corpus" "${seeded[@]}" -type f | wc -l) $(($(du -scb "$corpus" "${seeded[@]}" | tail -n1 | cut -f1) / 1024))"
    if ((rc == 0)) && [ -z "$(ls -A "$art")" ]; then
        echo "ok ${execs:-?} $took $size" >"$scratch/$t.result"
    else
        cp "$art"/* "$out/artifacts/" 2>/dev/null
        echo "FAILED ${execs:-?} $took $rc $(cd "$art" && ls | head -n1)" >"$scratch/$t.result"
    fi
}

# Merges what DIR/TARGET grew into fuzz/corpus/TARGET (see the head).
merge_one() {
    local t=$1 kept before after small=$scratch/$1/small f sum
    kept=$root/fuzz/corpus/$t
    local -a more=()
    if [ -d "$keep/$t" ]; then
        # what the run grew, up to FUZZ_MERGE_KB each: the big inputs are
        # the seeds' variants, which the seeds themselves stand for
        mkdir -p "$small"
        find "$keep/$t" -maxdepth 1 -type f -size -"$((${FUZZ_MERGE_KB:-16} + 1))"k \
            -exec cp -t "$small" {} +
        more+=("$small")
    fi
    [ -n "$seeds" ] && [ -d "$seeds/$t" ] && more+=("$seeds/$t")
    mkdir -p "$kept"
    before=$(find "$kept" -type f | wc -l)
    if ((${#more[@]})) && ! "$bin/$t" -merge=1 -timeout=10 -rss_limit_mb=2048 \
        -artifact_prefix="$out/artifacts/" "$kept" "${more[@]}" >"$out/$t.merge.log" 2>&1 </dev/null; then
        echo "fuzz: $t merge FAILED (see out/fuzz/$t.merge.log)"
        return 1
    fi
    # a seed taken keeps its name, as real-NAME
    if [ -n "$seeds" ] && [ -d "$seeds/$t" ]; then
        for f in "$seeds/$t"/*; do
            sum=$(sha1sum <"$f" | cut -d' ' -f1)
            [ -f "$kept/$sum" ] && mv "$kept/$sum" "$kept/real-$(basename "$f")"
        done
    fi
    after=$(find "$kept" -type f | wc -l)
    echo "fuzz: $t merged, corpus $before -> $after inputs ($(($(du -sb "$kept" | cut -f1) / 1024)) KB)"
}

if [ "$mode" = merge ]; then
    failed=0
    for t in "${targets[@]}"; do
        [ -x "$bin/$t" ] || { echo "fuzz: no target $t" >&2; exit 2; }
        merge_one "$t" || failed=$((failed + 1))
    done
    exit $((failed > 0))
fi

jobs=${FUZZ_JOBS:-1}
for t in "${targets[@]}"; do
    [ -x "$bin/$t" ] || { echo "fuzz: no target $t" >&2; exit 2; }
    run_one "$t" &
    while (($(jobs -rp | wc -l) >= jobs)); do wait -n; done
done
wait

failed=0
for t in "${targets[@]}"; do
    read -r res execs took a b <"$scratch/$t.result" 2>/dev/null || res=FAILED
    if [ "$res" = ok ]; then
        echo "fuzz: $t ok, ${execs} execs in ${took} s, corpus ${a} inputs (${b} KB)"
    else
        failed=$((failed + 1))
        echo "fuzz: $t FAILED after ${execs:-?} execs in ${took:-?} s (exit ${a:-?}${b:+, out/fuzz/artifacts/$b}; log out/fuzz/$t$logtag.log)"
        grep -m1 -E 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:|check failed:' "$out/$t$logtag.log" | sed 's/^/    /'
    fi
done
((failed == 0))
