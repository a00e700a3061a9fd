# SPDX-License-Identifier: Apache-2.0
# Linked-list paging of the recipe's bands, 5 at a time, forward to the end
# and back again: exactly CouchDB's order, tokens and links that agree.
use strict;
use warnings;

use Apache::Test qw(plan ok);
use Apache::TestUtil qw(t_cmp);
use Apache::TestRequest ();
use CouchPageTest qw(get_json walk_pages with_args);

my @ORDER = ('Biffy Clyro', 'Foo Fighters', 'Future of the Left', 'Helmet', 'Kerub',
             'Nirvana', 'Perfect Circle', 'Queens of the Stone Age', 'Silverchair',
             'Tenacious D', 'Tool');

plan tests => 22;

sub keys_of { [ map { $_->{key} } @{ $_[0]{items} } ] }
sub joined { join '|', @{ $_[0] } }

# forward: three pages of 5, 5 and 1
my @pages = walk_pages('/bands/', limit => 5);
ok t_cmp(scalar @pages, 3, 'three pages of five');
ok t_cmp(join(',', map { $_->{status} } @pages), '200,200,200', 'every page answers 200');
ok t_cmp(joined(keys_of($pages[0]{body})), joined([@ORDER[0..4]]), 'page 1: Biffy Clyro .. Kerub');
ok t_cmp(joined(keys_of($pages[1]{body})), joined([@ORDER[5..9]]), 'page 2: Nirvana .. Tenacious D');
ok t_cmp(joined(keys_of($pages[2]{body})), 'Tool', 'page 3: Tool');
ok t_cmp($pages[0]{body}{prev}, undef, 'the first page has no prev');
ok t_cmp($pages[2]{body}{next}, undef, 'the last page has no next');
ok t_cmp($pages[0]{body}{total_rows}, 11, 'total_rows as CouchDB reports it');

# a token is the JSON text of [key, docid] of the next page's first row
my $token = JSON::PP->new->decode($pages[0]{body}{next});
ok t_cmp($token->[0], 'Nirvana', "the next token's key is the next page's first key");
ok t_cmp($token->[1], $pages[1]{body}{items}[0]{id}, "the next token's id is that row's id");

# backward from the last page by prev
my @back = walk_pages('/bands/', limit => 5, direction => 'prev', max_pages => 1)
    ;    # the first page alone: prev is null
ok t_cmp($back[0]{body}{prev}, undef, 'walking back from the first page stops at once');
my @seen;
my $body = $pages[2]{body};
my $hops = 0;
while ($body) {
    unshift @seen, @{ keys_of($body) };
    last unless defined $body->{prev};
    (my $status, $body) = get_json(with_args('/bands/', start => $body->{prev}, limit => 5));
    last if ++$hops > 5 or $status != 200;
}
ok t_cmp(joined(\@seen), joined(\@ORDER), 'prev from the last page yields every band, in order');
ok t_cmp($hops, 2, 'two hops back reach the first page');

# the links are this location's URLs, keep the limit, and lead to the same pages
my $next_link = $pages[0]{body}{links}{next};
ok t_cmp($next_link, qr{^/bands/\?start=[^&]+&limit=5$}, 'links.next is /bands/?start=...&limit=5');
my ($status, $via_link) = get_json($next_link);
ok t_cmp(joined(keys_of($via_link)), joined([@ORDER[5..9]]), 'links.next leads to page 2');
my ($s2, $back_link) = get_json($via_link->{links}{prev});
ok t_cmp(joined(keys_of($back_link)), joined([@ORDER[0..4]]), 'its links.prev leads back to page 1');
ok t_cmp($pages[2]{body}{links}{next}, undef, 'the last page has no links.next');

# the default page size, and a limit from the client
my ($s3, $default) = get_json('/bands/');
ok t_cmp(scalar @{ $default->{items} }, 5, 'CouchPageSize 5 applies without a limit');
ok t_cmp($default->{links}{next}, qr{^/bands/\?start=[^&]+$}, 'without a limit the links carry none');
my ($s4, $three) = get_json('/bands/?limit=3');
ok t_cmp(joined(keys_of($three)), joined([@ORDER[0..2]]), 'limit=3 gives three rows');

# HEAD answers like GET, without a body
my $head = Apache::TestRequest::HEAD('/bands/');
ok t_cmp($head->code, 200, 'HEAD answers 200');
ok t_cmp($head->content, '', 'HEAD has no body');
