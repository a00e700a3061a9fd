#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# make check: make install refuses to write over a mod_couchpage.so that a
# package installed (dpkg-query -S names it), says why and what to do, and
# writes it with OVERWRITE_PACKAGED=yes, under DESTDIR, or where no package
# owns the file. The module directory is a scratch one (APXS_LIBEXECDIR), and
# dpkg-query reads a dpkg database made here (--admindir) that says the
# package libapache2-mod-couchpage owns the file there: the system's are
# never touched. Run in the build directory, after the module is built.
so=.libs/mod_couchpage.so
[ -f "$so" ] || { echo "no $so: build the module first"; exit 1; }
command -v dpkg-query >/dev/null || { echo "no dpkg-query: not a dpkg system"; exit 77; }
make=${MAKE:-make}
scratch=$(mktemp -d) || exit 1
trap 'rm -rf "$scratch"' EXIT
modules=$scratch/modules
target=$modules/mod_couchpage.so
mkdir -p "$modules" "$scratch/dpkg/info" "$scratch/dpkg/updates"
: >"$scratch/dpkg/diversions"
printf '%s\n' 'Package: libapache2-mod-couchpage' 'Status: install ok installed' 'Version: 0.1.0' \
    'Architecture: all' 'Maintainer: test <test@couchpage.invalid>' 'Description: the test' '' \
    >"$scratch/dpkg/status"
printf '%s\n' "$modules" "$target" >"$scratch/dpkg/info/libapache2-mod-couchpage.list"
dpkg="dpkg-query --admindir=$scratch/dpkg"
failed=0
fail() { echo "FAIL: $*"; failed=1; }
packaged() { echo 'the packaged module' >"$target"; }
install_module() { $make -s install APXS_LIBEXECDIR="$modules" DPKG_QUERY="$dpkg" "$@" >"$scratch/out" 2>&1; }

$dpkg -S "$target" >/dev/null 2>&1 || fail "the scratch dpkg database does not own $target"

# the packaged file: refused, untouched, with why and what to do
packaged
if install_module; then
    fail "make install wrote over the packaged $target"
fi
grep -q "make install: $target belongs to the package libapache2-mod-couchpage (dpkg-query -S)" "$scratch/out" ||
    fail "make install did not say whose file it is: $(cat "$scratch/out")"
grep -q "OVERWRITE_PACKAGED=yes" "$scratch/out" || fail "make install did not say how to write over it"
grep -q "APXS_LIBEXECDIR=/usr/local/lib/apache2/modules" "$scratch/out" ||
    fail "make install did not say how to install beside it"
[ "$(cat "$target")" = 'the packaged module' ] || fail "the packaged $target was changed"

# OVERWRITE_PACKAGED=yes writes it
packaged
install_module OVERWRITE_PACKAGED=yes || fail "make install OVERWRITE_PACKAGED=yes failed: $(cat "$scratch/out")"
cmp -s "$so" "$target" || fail "make install OVERWRITE_PACKAGED=yes did not install $so"

# DESTDIR: staged, the packaged file untouched
packaged
install_module DESTDIR="$scratch/stage" || fail "make install DESTDIR=... failed: $(cat "$scratch/out")"
cmp -s "$so" "$scratch/stage$target" || fail "make install DESTDIR=... did not install $so under DESTDIR"
[ "$(cat "$target")" = 'the packaged module' ] || fail "make install DESTDIR=... changed the packaged $target"

# a file no package owns is written as before
rm -f "$scratch/dpkg/info/libapache2-mod-couchpage.list"
packaged
install_module || fail "make install over an unpackaged $target failed: $(cat "$scratch/out")"
cmp -s "$so" "$target" || fail "make install did not install $so over an unpackaged file"

[ "$failed" = 0 ] && echo "make install refuses a packaged mod_couchpage.so, and installs it otherwise"
exit "$failed"
