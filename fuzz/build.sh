#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the libFuzzer targets (fuzz/fuzz_*.c, fuzz/fuzz_*.cc) with clang, each compiled
# together with the core's sources (the .c and .cc files of
# libcouchpage_core_la_SOURCES in Makefile.am; C++ for simdjson), all
# instrumented with -fsanitize=fuzzer,address,undefined.
# Independent of ./configure: flags come from apr-1-config, apu-1-config and
# pkg-config (the modules configure.ac's PKG_CHECK_MODULES name, but cmocka). A target is rebuilt when a source or header is newer than it.
#
#   fuzz/build.sh [TARGET...]       default: every fuzz/fuzz_*.c and fuzz_*.cc
#
#   CC        the compiler (default clang; it needs libclang-rt-14-dev); C++
#             sources are compiled, and the targets linked, by its clang++
#   FUZZ_OUT  where binaries go (default out/fuzz/bin, gitignored)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
out=${FUZZ_OUT:-$root/out/fuzz/bin}
cc=${CC:-clang}
# CC=gcc from the environment (as ./configure leaves it) cannot build libFuzzer targets.
case $("$cc" --version 2>/dev/null | head -n1) in
*clang*) ;;
*) cc=clang ;;
esac
command -v "$cc" >/dev/null || { echo "fuzz/build.sh: clang not found (apt-get install clang libclang-rt-14-dev)" >&2; exit 1; }
cxx=${cc/%clang/clang++}
command -v "$cxx" >/dev/null || { echo "fuzz/build.sh: $cxx not found" >&2; exit 1; }

# The core's C and C++ files, as Makefile.am lists them (so a new core file comes along).
core=()
# shellcheck disable=SC1003,SC2020
while read -r f; do
    [ -n "$f" ] && core+=("$root/$f")
done < <(sed -n '/^libcouchpage_core_la_SOURCES[[:space:]]*=/,/[^\\]$/p' "$root/Makefile.am" |
    tr ' \t\\' '\n\n\n' | grep -E '\.(c|cc)$' || true)
if ((${#core[@]} == 0)); then
    echo "fuzz/build.sh: no libcouchpage_core_la_SOURCES in Makefile.am" >&2
    exit 1
fi

# The libraries configure.ac asks pkg-config for (jansson, ...), but cmocka.
mapfile -t pkgs < <(sed -n 's/^[[:space:]]*PKG_CHECK_MODULES(\[[A-Za-z0-9_]*\],[[:space:]]*\[\([A-Za-z0-9_.+-]*\).*/\1/p' \
    "$root/configure.ac" | grep -vx cmocka | sort -u)
read -ra cflags <<<"$(apr-1-config --cppflags --includes --cflags) $(apu-1-config --includes) $(pkg-config --cflags "${pkgs[@]}")"
read -ra libs <<<"$(pkg-config --libs "${pkgs[@]}") $(apu-1-config --link-ld --libs) $(apr-1-config --link-ld --libs)"
# shellcheck disable=SC2054
sanitize=(-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)

targets=("$@")
if ((${#targets[@]} == 0)); then
    for f in "$root"/fuzz/fuzz_*.c "$root"/fuzz/fuzz_*.cc; do
        [ -f "$f" ] && targets+=("$(basename "${f%.cc}" .c)")
    done
fi

mkdir -p "$out"
for t in "${targets[@]}"; do
    # a target in C, or in C++ (a shim's own target)
    src=$root/fuzz/$t.c
    [ -f "$src" ] || src=$root/fuzz/$t.cc
    [ -f "$src" ] || { echo "fuzz/build.sh: no $root/fuzz/$t.c or .cc" >&2; exit 1; }
    bin=$out/$t
    if [ -x "$bin" ] && [ -z "$(find "$src" "${core[@]}" "$root"/fuzz/*.h "$root"/lib/couchpage_*.h \
        "$root/Makefile.am" "$root/configure.ac" "$0" -newer "$bin" 2>/dev/null | head -n1)" ]; then
        continue
    fi
    echo "fuzz/build.sh: $t" >&2
    # the C++ files compiled apart (C++17, no exceptions), all linked by clang++
    csources=()
    objects=()
    for f in "$src" "${core[@]}"; do
        case $f in
        *.cc)
            objects+=("$bin.tmp.$$.$(basename "$f" .cc).o")
            "$cxx" -c -g -O1 -std=c++17 -fno-exceptions -Wall -Wextra -Wno-unused-parameter \
                "${sanitize[@]}" "${cflags[@]}" -I"$root" -I"$root/lib" -I"$root/fuzz" -o "${objects[-1]}" "$f"
            ;;
        *) csources+=("$f") ;;
        esac
    done
    "$cxx" -g -O1 -Wall -Wextra -Wno-unused-parameter "${sanitize[@]}" "${cflags[@]}" \
        -I"$root" -I"$root/lib" -I"$root/fuzz" -o "$bin.tmp.$$" -x c "${csources[@]}" -x none \
        "${objects[@]}" "${libs[@]}"
    rm -f "${objects[@]}"
    mv -f "$bin.tmp.$$" "$bin"
done
