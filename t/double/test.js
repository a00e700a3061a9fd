// SPDX-License-Identifier: Apache-2.0
// node --test t/double/ only runs files named like tests; this one runs the
// self-test of the CouchDB test double, which lives in selftest.js.
'use strict';

require('./selftest.js');
