# SPDX-License-Identifier: Apache-2.0
# Smoke test: the first page of the bands view through mod_couchpage.
use strict;
use warnings;

use Apache::Test qw(plan ok);
use Apache::TestUtil qw(t_cmp);
use CouchPageTest qw(get_json);

plan tests => 4;

my ($status, $body) = get_json('/bands/?limit=5');

ok t_cmp($status, 200, 'GET /bands/?limit=5 answers 200');
ok t_cmp(ref $body, 'HASH', 'the body is a JSON object');
ok t_cmp(ref($body) eq 'HASH' && ref($body->{items}) eq 'ARRAY' ? scalar @{ $body->{items} } : -1,
         5, 'the page holds 5 items');
ok t_cmp(ref($body) eq 'HASH' ? $body->{items}[0]{key} : undef,
         'Biffy Clyro', 'the first item is the first band by name');
