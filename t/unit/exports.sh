#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# make check: mod_couchpage.so defines one dynamic symbol, couchpage_module
# (mod_couchpage.map): any other would be visible to httpd and every module
# it loads. Run in the build directory, after the module is built.
so=.libs/mod_couchpage.so
[ -f "$so" ] || { echo "no $so: build the module first"; exit 1; }
defined=$(nm -D --defined-only "$so" | awk '{print $NF}' | sort) || { echo "nm -D $so failed"; exit 1; }
if [ "$defined" != couchpage_module ]; then
    echo "$so defines these dynamic symbols, not couchpage_module alone:"
    echo "$defined"
    exit 1
fi
echo "$so exports couchpage_module alone"
