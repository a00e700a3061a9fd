# SPDX-License-Identifier: Apache-2.0
# Hostile input gets a clear 4xx, never a 5xx; sealed tokens are opaque
# (nothing of the key or docid shows), bound to their location, refuse
# tampering, and rotate. The table of what was tried
# and what came back is printed with the results.
use strict;
use warnings;

use Apache::Test qw(plan ok);
use Apache::TestUtil qw(t_cmp);
use Apache::TestRequest ();
use CouchPageTest qw(get_json with_args walk_pages token_shows);
use MIME::Base64 qw(encode_base64url decode_base64url);
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
    ['a lone surrogate', 'start=%5B%22%5Cud800%22%2C%22a%22%5D', 400, qr/not JSON/],
    ['bytes after the token', 'start=%5B1%2C%22a%22%5D%20x', 400, qr/not JSON/],
    ['a token of one number', 'start=5', 400, qr/must be a JSON array/],
    ['a wide integer beside 01', 'start=%5B18446744073709551616%2C01%5D', 400, qr/not JSON/],
    ['a number beyond a double', 'start=%5B1e400%2C%22a%22%5D', 400, qr/not JSON/],
    # JSON, a name holding \u0000 included (CouchDB keys may have one), but no token's shape
    ['a name holding \\u0000', 'start=%7B%22%5Cu0000a%22%3A1%7D', 400, qr/must be a JSON array, or an object of "lo"/],
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
    ['format auto', 'format=auto', 400, qr/json or html/],
    ['format JSON', 'format=JSON', 400, qr/json or html/],
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

plan tests => 2 * @HOSTILE + 2 * @SMUGGLE + 2 + 27;

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

# --- sealed tokens ---------------------------------------------------------
my @pages = walk_pages('/signed/');
ok t_cmp(join('|', map { $_->{status} } @pages), '200|200|200', 'sealed: three pages of 5');
ok t_cmp(join('|', map { map { $_->{key} } @{ $_->{body}{items} } } @pages), join('|', @ORDER),
         'sealed: walking next yields every band in order');
my $next = $pages[0]{body}{next};
ok t_cmp($next, qr/^[A-Za-z0-9_-]+$/, 'sealed tokens are base64url, unpadded, one piece');
my @seen = grep { token_shows($next, $_) } ('Nirvana', $nirvana_id, '["Nirvana"', qq("$nirvana_id"));
ok t_cmp(join(', ', @seen), '', 'the next token shows neither the key nor the docid, '
                                . 'plainly or in base64');
my @tokens = map { ($_->{body}{next} // (), $_->{body}{prev} // ()) } @pages;
my @words = map { map { ($_->{key}, $_->{id}) } @{ $_->{body}{items} } } @pages;
@seen = grep { my $t = $_; grep { token_shows($t, $_) } @words } @tokens;
ok t_cmp(@tokens . ' tokens, ' . @seen . ' show one of ' . @words . ' keys and ids',
         @tokens . ' tokens, 0 show one of 22 keys and ids',
         'no next or prev token of the walk shows a key or docid');
# What a sealed token tells: its length, the plain token's plus 17 bytes
# (format, SIV).
my ($s, $plain_page) = get_json('/bands/?limit=5');
ok t_cmp(length(decode_base64url($next)), length($plain_page->{next}) + 17,
         "its bytes are the plain token's ($plain_page->{next}) and 17 more");
# Sealing is deterministic (AES-SIV): the same page asked again has the same
# tokens, so the same ETag, and a conditional GET gets 304.
my $second = with_args('/signed/', start => $next);
my ($code2, $first_ask, $first_res) = get_json($second);
my ($code3, $second_ask, $second_res) = get_json($second);
ok t_cmp(join(' ', $code3, map { $_ // 'null' } @$second_ask{qw(prev next)}, $second_res->header('ETag') // '(none)'),
         join(' ', $code2, map { $_ // 'null' } @$first_ask{qw(prev next)}, $first_res->header('ETag') // '(none)'),
         'a sealed page asked twice: the same prev and next tokens, the same ETag');
ok t_cmp(defined $first_ask->{prev} && defined $first_ask->{next} && defined $first_res->header('ETag')
         ? 'all three' : 'one missing', 'all three', 'that page has a prev, a next and an ETag');
my $conditional = Apache::TestRequest::GET($second, 'If-None-Match' => $first_res->header('ETag') // '"none"');
ok t_cmp($conditional->code, 304, 'a conditional GET of a sealed page with its ETag: 304');
($s, my $prev_page) = get_json(with_args('/signed/', start => $pages[1]{body}{prev}));
ok t_cmp(join('|', map { $_->{key} } @{ $prev_page->{items} }), join('|', @ORDER[0 .. 4]),
         'sealed: prev leads back to the first page');

my $plain = qq(["Nirvana","$nirvana_id"]);
($code, $body) = get_json(with_args('/signed/', start => $plain));
ok t_cmp($code, 400, 'a plain JSON token is refused where tokens are sealed');
my @raw = unpack 'C*', decode_base64url($next);
my @refused;
for my $i (0 .. $#raw) {
    my @changed = @raw;
    $changed[$i] ^= 0x01;
    ($code, $body) = get_json(with_args('/signed/', start => encode_base64url(pack 'C*', @changed)));
    push @refused, $code == 400 && $body->{reason} =~ /not issued for this location|format this site does not read/
        ? () : "byte $i: $code";
}
ok t_cmp(join(', ', @refused), '', 'a token changed in any of its ' . @raw . ' bytes gets 400, and says why');
($code, $body) = get_json(with_args('/signed/', start => substr($next, 0, -4)));
ok t_cmp($code, 400, 'a truncated token gets 400');
($code, $body) = get_json(with_args('/signed-other/', start => $next));
ok t_cmp("$code $body->{reason}", '400 the start token was not issued for this location',
         'a token of another location gets 400, though the secret is the same');
($code, $body) = get_json(with_args('/bands/', start => $next));
ok t_cmp($code, 400, 'a location without a secret refuses a sealed token');
# The signed tokens of before (base64url payload, a dot, HMAC) after an upgrade.
($code, $body) = get_json(with_args('/signed/', start => encode_base64url($plain) . '.'
                                    . encode_base64url('m' x 32)));
ok t_cmp("$code $body->{reason}", '400 the start token is not a token of this site',
         'a signed token of the format before gets 400: the client starts again');
# The AES-256-GCM tokens of development versions: format 2, a 12-byte nonce,
# the ciphertext, a 16-byte tag.
($code, $body) = get_json(with_args('/signed/', start => encode_base64url(
    pack('C', 2) . ("\x5a" x 12) . ('c' x length $plain) . ("\xa5" x 16))));
ok t_cmp("$code $body->{reason}", '400 the start token is of a format this site does not read',
         'an AES-256-GCM token (format 2) gets 400');

# Rotation: the same location, as it was before (its one secret is now the
# previous one), and with a secret since retired.
(undef, my $before) = get_json('/signed/', 'X-Test-Secret' => 'previous');
($code, $body) = get_json(with_args('/signed/', start => $before->{next} // ''));
ok t_cmp(join('|', $code, map { $_->{key} } @{ $body->{items} || [] }),
         join('|', 200, @ORDER[5 .. 9]), 'a token sealed with the previous secret is still accepted');
($code, $body) = get_json(with_args('/signed/', start => $next), 'X-Test-Secret' => 'previous');
ok t_cmp($code, 400, 'the location before the rotation refuses a token of the new secret');
(undef, my $retired) = get_json('/signed/', 'X-Test-Secret' => 'retired');
($code, $body) = get_json(with_args('/signed/', start => $retired->{next} // ''));
ok t_cmp("$code $body->{reason}", '400 the start token was not issued for this location',
         'a token sealed with a retired secret is refused');

# The Last page's token, the word "last", is sealed like any other: the
# link is opaque, opens the last page, and the bare word is refused here.
my $last_link = $pages[0]{body}{links}{last} // '';
ok t_cmp($last_link, qr{^/signed/\?start=[A-Za-z0-9_-]+$}, 'sealed: links.last is sealed');
($code, $body) = get_json($last_link);
ok t_cmp(join('|', $code, map { $_->{key} } @{ $body->{items} || [] }), '200|Tool',
         'sealed: links.last opens the last page');
($code, $prev_page) = get_json($body->{links}{prev} // '/signed/?start=none');
ok t_cmp(join('|', $code, map { $_->{key} } @{ $prev_page->{items} || [] }),
         join('|', 200, @ORDER[5 .. 9]), 'sealed: and its prev the page before');
($code, $body) = get_json('/signed/?start=last');
ok t_cmp($code, 400, 'an unsealed start=last is refused where tokens are sealed');

# The numbered page links of the HTML fragment (CouchPageLinks 1) are
# sealed too, and open.
my $html = Apache::TestRequest::GET(with_args('/signed/', start => $pages[1]{body}{next},
                                              format => 'html'))->content;
my @starts = $html =~ /[?;]start=([^&"]+)/g;
my @opened = map { (get_json(with_args('/signed/', start => $_)))[0] } grep { /^[A-Za-z0-9_-]+$/ } @starts;
ok t_cmp(@starts >= 2 ? join(' ', @opened) : 'only ' . @starts . ' links', join(' ', ('200') x @starts),
         'sealed: the HTML page links (' . @starts . ') are sealed tokens, each opens its page');

# CouchPageMaxTokenLength counts a token as the client sent it: a token
# longer than the cap is refused before it is decoded or decrypted.
my $long = encode_base64url(pack('C', 2) . ('x' x 3100));
($code, $body) = get_json(with_args('/signed/', start => $long));
ok t_cmp(length($long) . ": $code", qr/^\d{4}: 400$/,
         'a token over CouchPageMaxTokenLength (4096): 400');
ok t_cmp($body->{reason}, qr/longer than 4096 bytes/, 'and says so');
