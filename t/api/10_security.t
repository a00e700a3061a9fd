# SPDX-License-Identifier: Apache-2.0
# Hostile input gets a clear 4xx, never a 5xx; signed tokens are opaque,
# bound to their location, and refuse tampering. The table of what was tried
# and what came back is printed with the results.
use strict;
use warnings FATAL => 'all';

use Apache::Test qw(plan ok);
use Apache::TestUtil qw(t_cmp);
use Apache::TestRequest ();
use CouchPageTest qw(get_json with_args walk_pages backend_url);
use Digest::SHA qw(hmac_sha256);
use MIME::Base64 qw(encode_base64url);
use JSON::PP ();

my $JSON = JSON::PP->new->utf8->canonical;
my @ORDER = ('Biffy Clyro', 'Foo Fighters', 'Future of the Left', 'Helmet', 'Kerub',
             'Nirvana', 'Perfect Circle', 'Queens of the Stone Age', 'Silverchair',
             'Tenacious D', 'Tool');
my $nirvana_id = 'nirvana';    # embedded/fixtures.js gives the bands fixed ids

# [what, query string, expected status, reason regexp]
my @HOSTILE = (
    ['not JSON', 'start=%7Bnope', 400, qr/not JSON/],
    ['an object', 'start=%7B%22key%22%3A1%7D', 400, qr/must be a JSON array/],
    ['one member', 'start=%5B%22Nirvana%22%5D', 400, qr/two members/],
    ['four members', 'start=%5B1%2C%22a%22%2C3%2C4%5D', 400, qr/two members/],
    ['a third member of 0', 'start=%5B1%2C%22a%22%2C0%5D', 400, qr/third member/],
    ['a third member of 1e9', 'start=%5B1%2C%22a%22%2C1000000000%5D', 400, qr/third member/],
    ['a number as docid', 'start=%5B1%2C2%5D', 400, qr/docid/],
    ['an empty docid', 'start=%5B1%2C%22%22%5D', 400, qr/docid/],
    ['NUL in the docid', 'start=%5B1%2C%22a%5Cu0000b%22%5D', 400, qr/NUL/],
    ['a raw NUL', 'start=%5B1%2C%22a%00b%22%5D', 400, qr/malformed percent-escape/],
    ['invalid UTF-8', 'start=%5B%22%C3%28%22%2C%22a%22%5D', 400, qr/not JSON/],
    ['overlong UTF-8', 'start=%5B%22%C0%AF%22%2C%22a%22%5D', 400, qr/not JSON/],
    ['a bad percent-escape', 'start=%G1', 400, qr/malformed percent-escape/],
    ['an empty token', 'start=', 400, qr/empty/],
    ['a 5000-byte token', 'start=' . ('%5B%22' . ('a' x 5000) . '%22%2C%22a%22%5D'), 400, qr/longer than 4096 bytes/],
    ['two start arguments', 'start=%5B1%2C%22a%22%5D&start=%5B2%2C%22b%22%5D', 400, qr/more than once/],
    ['limit 0', 'limit=0', 400, qr/from 1 to 100/],
    ['limit -5', 'limit=-5', 400, qr/from 1 to 100/],
    ['limit 1e9', 'limit=1000000000', 400, qr/from 1 to 100/],
    ['limit NaN', 'limit=NaN', 400, qr/from 1 to 100/],
    ['limit 0x10', 'limit=0x10', 400, qr/from 1 to 100/],
    ['two limits', 'limit=1&limit=2', 400, qr/more than once/],
    ['format xml', 'format=xml', 400, qr/json or html/],
);

# Keys that try to smuggle CouchDB options: each must stay one startkey
# value. A token of such a key is valid JSON, so the page is served, starting
# after "Nirvana" in the view's order and skipping nothing.
my @SMUGGLE = (
    ['&skip=', '["Nirvana&skip=3","x"]'],
    ['&endkey=', '["Nirvana&endkey=\"Perfect\"","x"]'],
    ['#', '["Nirvana#fragment","x"]'],
    ['CR/LF', "[\"Nirvana\\r\\nX-Injected: 1\",\"x\"]"],
    ['&descending=', '["Nirvana&descending=true","x"]'],
);

plan tests => 2 * @HOSTILE + 2 * @SMUGGLE + 2 + 21;

my @table;
for my $case (@HOSTILE) {
    my ($what, $query, $status, $reason) = @$case;
    my ($code, $body) = get_json("/bands/?$query");
    push @table, sprintf "%-22s %s", $what, $code;
    ok t_cmp($code, $status, "$what: $status");
    ok t_cmp(ref $body eq 'HASH' ? $body->{reason} : '', $reason, "$what: the reason says why");
}
for my $case (@SMUGGLE) {
    my ($what, $token) = @$case;
    my ($code, $body) = get_json(with_args('/bands/', start => $token, limit => 3));
    push @table, sprintf "%-22s %s", "key with $what", $code;
    ok t_cmp($code, 200, "a key with $what is one startkey value");
    ok t_cmp(ref $body eq 'HASH' ? join('|', map { $_->{key} } @{ $body->{items} }) : '',
             join('|', @ORDER[6 .. 8]), "a key with $what: rows after Nirvana, none skipped");
}
my ($code, $body) = get_json('/short-tokens/?start=' . ('%5B%22' . ('a' x 80) . '%22%2C%22a%22%5D'));
push @table, sprintf "%-22s %s", 'over CouchPageMaxTokenLength', $code;
ok t_cmp($code, 400, 'CouchPageMaxTokenLength 64 refuses a longer token');
ok t_cmp($body->{reason}, qr/longer than 64 bytes/, 'and says so');
print "# what was tried                     status\n", map { "#   $_\n" } @table;

# --- signed tokens ---------------------------------------------------------
my @pages = walk_pages('/signed/');
ok t_cmp(join('|', map { $_->{status} } @pages), '200|200|200', 'signed: three pages of 5');
ok t_cmp(join('|', map { map { $_->{key} } @{ $_->{body}{items} } } @pages), join('|', @ORDER),
         'signed: walking next yields every band in order');
my $next = $pages[0]{body}{next};
ok t_cmp($next, qr/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/, 'signed tokens are opaque base64url');
ok t_cmp(index($next, 'Nirvana'), -1, 'a signed token does not show the key');
my ($s, $prev_page) = get_json(with_args('/signed/', start => $pages[1]{body}{prev}));
ok t_cmp(join('|', map { $_->{key} } @{ $prev_page->{items} }), join('|', @ORDER[0 .. 4]),
         'signed: prev leads back to the first page');

my $plain = qq(["Nirvana","$nirvana_id"]);
($code, $body) = get_json(with_args('/signed/', start => $plain));
ok t_cmp($code, 400, 'a plain JSON token is refused where tokens are signed');
(my $tampered = $next) =~ s/^(.)/$1 eq 'A' ? 'B' : 'A'/e;
($code, $body) = get_json(with_args('/signed/', start => $tampered));
ok t_cmp($code, 400, 'a tampered token gets 400');
ok t_cmp($body->{reason}, qr/not (issued for this location|a token of this site)/, 'and says why');
($code, $body) = get_json(with_args('/signed-other/', start => $next));
ok t_cmp($code, 400, 'a token of another location gets 400, though the secret is the same');
($code, $body) = get_json(with_args('/bands/', start => $next));
ok t_cmp($code, 400, 'an unsigned location refuses a signed token');

# The documented format, sealed here with the previous secret: rotation.
sub seal {
    my ($secret, $binding, $payload) = @_;
    my $mac = hmac_sha256("couchpage-token-1\0$binding\0$payload", $secret);
    return encode_base64url($payload) . '.' . encode_base64url($mac);
}
my $view = backend_url() . '/bands/_design/bands/_view/by-name';
my $old = seal('the previous secret of the test site', "$view\n/signed/", $plain);
($code, $body) = get_json(with_args('/signed/', start => $old));
ok t_cmp($code, 200, 'a token sealed with the previous secret is still accepted');
ok t_cmp($body->{items}[0]{key}, 'Nirvana', 'and starts where it says');
my $retired = seal('a secret this site no longer has', "$view\n/signed/", $plain);
($code, $body) = get_json(with_args('/signed/', start => $retired));
ok t_cmp($code, 400, 'a token sealed with a retired secret is refused');
my $current = seal('the current secret of the test site', "$view\n/signed/", $plain);
($code, $body) = get_json(with_args('/signed/', start => $current));
ok t_cmp($code, 200, 'a token sealed as documented with the current secret opens');

# The Last page's token, the word "last", is sealed like any other: the
# link is opaque, opens the last page, and the bare word is refused here.
my $last_link = $pages[0]{body}{links}{last} // '';
ok t_cmp($last_link, qr{^/signed/\?start=[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$}, 'signed: links.last is sealed');
($code, $body) = get_json($last_link);
ok t_cmp(join('|', $code, map { $_->{key} } @{ $body->{items} || [] }), '200|Tool',
         'signed: links.last opens the last page');
($code, $prev_page) = get_json($body->{links}{prev} // '/signed/?start=none');
ok t_cmp(join('|', $code, map { $_->{key} } @{ $prev_page->{items} || [] }),
         join('|', 200, @ORDER[5 .. 9]), 'signed: and its prev the page before');
($code, $body) = get_json('/signed/?start=last');
ok t_cmp($code, 400, 'an unsealed start=last is refused where tokens are signed');
($code, $body) = get_json(with_args('/signed/', start => seal('the current secret of the test site', "$view\n/signed/", 'last')));
ok t_cmp(join('|', $code, map { $_->{key} } @{ $body->{items} || [] }), '200|Tool',
         '"last" sealed as documented opens the last page');

# CouchPageMaxTokenLength counts a token as the client sent it: a sealed
# token longer than the cap is refused before it is unsealed, though the
# payload inside is shorter than the cap.
my $long_payload = '["' . ('a' x 3200) . '","a"]';
my $long = seal('the current secret of the test site', "$view\n/signed/", $long_payload);
($code, $body) = get_json(with_args('/signed/', start => $long));
ok t_cmp(length($long_payload) . ' inside ' . length($long) . ": $code", qr/^\d{4} inside \d{4}: 400$/,
         'a sealed token over CouchPageMaxTokenLength (4096) whose payload is under it: 400');
ok t_cmp($body->{reason}, qr/longer than 4096 bytes/, 'and says so');
