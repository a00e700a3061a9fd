# SPDX-License-Identifier: Apache-2.0
# What a request may make the module ask of CouchDB, and what it answers
# (issue 23), through the CouchDB view double and its request log: a
# token's row index is bounded by CouchPageMaxEmits, and every query's limit
# and skip by the page (forged tokens get 400 before any query; tokens at
# the ceiling, widened queries included, stay within the bound); a link
# whose token, even bounded, is longer than CouchPageMaxTokenLength is left
# out (a 100 KB key, sealed tokens under a cap of 64: small headers, a
# whole response, the page says which link is withheld); partition names an expression makes are checked ('.' and '..'
# never reach CouchDB's path), and literal ones at start-up.
use strict;
use warnings;

use Apache::Test qw(-withtestmore);
use Apache::TestRequest ();
use File::Temp qw(tempdir);
use File::Spec::Functions qw(catfile);
use JSON::PP ();
use CouchPageTest qw(get_json with_args double_load double_log double_queries double_request
                     error_log_mark error_log_since httpd_config_test);
use CouchPageHTML qw(parse_html by_class);

my $JSON = JSON::PP->new->canonical->allow_nonref;

# 1. forged tokens: 4 cases x 3; 2. at the ceiling: 3 x 2, and the walk;
# 3. the 100 KB key: 14; 4. partitions: 5 x 2 and 2; httpd -t: 3 + 2 + 1
plan tests => 4 * 3 + 3 * 2 + 1 + 14 + 5 * 2 + 2 + 3 + 2 + 1;

# 'bounds': d00 to d19, each emitting its number once; 'three' emits 100
# three times, one entry of three rows.
double_load('bounds', [ (map { { _id => sprintf('d%02d', $_), n => $_ } } 0 .. 19),
                        { _id => 'three', n => 100, times => 3 } ],
            { v => { map => 'function (doc) { for (var i = 0; i < (doc.times || 1); i++) emit(doc.n, i); }' } });

# The view's queries the double received since the log was cleared: the
# largest limit + skip of any of them, and how many there were.
sub widest_query {
    my ($db) = @_;
    my ($widest, $n) = (0, 0);
    for my $query (grep { $_->{path} =~ m{^/\Q$db\E/} } double_queries(double_log())) {
        my %p = map { @$_ } @{ $query->{query} };
        my $reach = ($p{limit} // 0) + ($p{skip} // 0);
        $widest = $reach if $reach > $widest;
        $n++;
    }
    return ($widest, $n);
}

sub token { $JSON->encode([@_]) }

# --- 1. forged row indexes: 400 before any query -----------------------------
# [what, location, token, reason]
my @FORGED = (
    ['an index of 1,000,000', '/bounds/', token(1, 'd01', 1000000), qr/third member must be a whole number from 1 to 999/],
    ['an index at CouchPageMaxEmits (default 64)', '/bounds/', token(1, 'd01', 64), qr/row 64 is beyond the 64 rows one document emits/],
    ['an index at CouchPageMaxEmits 4', '/bounds/emits/', token(1, 'd01', 4), qr/row 4 is beyond the 4 rows one document emits/],
    ['an index of 999 at CouchPageMaxEmits 4', '/bounds/emits/', token(1, 'd01', 999), qr/row 999 is beyond the 4 rows/],
);
for my $case (@FORGED) {
    my ($what, $path, $token, $reason) = @$case;
    double_log(clear => 1);
    my ($code, $body) = get_json(with_args($path, start => $token));
    is("$code " . ($body->{error} // ''), '400 bad_request', "$what: 400 bad_request");
    like($body->{reason} // '', $reason, "$what: the reason says why");
    my (undef, $n) = widest_query('bounds');
    is($n, 0, "$what: no query reached CouchDB");
}

# --- 2. tokens at the ceiling: every query within the page's bound -----------
# (1 + pages either side) x count + 2 x CouchPageMaxEmits + 3, widenings too
# [what, location, token, count, CouchPageMaxEmits]
my @AT_CEILING = (
    ['index 63 of 64, 3 a page', '/bounds/', token(1, 'd01', 63), 3, 64],
    ['index 3 of 4, 1 a page', '/bounds/emits/', token(1, 'd01', 3), 1, 4],
    ['index 2 of 4 inside an entry of three rows', '/bounds/emits/', token(100, 'three', 2), 1, 4],
);
for my $case (@AT_CEILING) {
    my ($what, $path, $token, $count, $emits) = @$case;
    my $bound = 2 * $count + 2 * $emits + 3;
    double_log(clear => 1);
    my ($code) = get_json(with_args($path, start => $token));
    is($code, 200, "$what: served");
    my ($widest, $n) = widest_query('bounds');
    ok($n > 0 && $widest <= $bound, "$what: every query reads at most $bound rows (widest $widest, of $n)");
}

# a walk through the document of three rows, one row a page, CouchPageMaxEmits 4
{
    my (undef, $view) = double_request(GET => '/bounds/_design/d/_view/v');
    my @want = map { "$_->{id}/$_->{value}" } @{ $view->{rows} };
    my (@got, $token, $pages);
    while (1) {
        my ($code, $page) = get_json(with_args('/bounds/emits/', defined $token ? (start => $token) : ()));
        last unless $code == 200 and ++$pages <= 30;
        push @got, map { "$_->{id}/$_->{value}" } @{ $page->{items} };
        last unless defined($token = $page->{next});
    }
    is(join(' ', @got), join(' ', @want), 'CouchPageMaxEmits 4: a walk one row a page gives every row once, the three of one entry too');
}

# --- 3. a 100 KB key: its links left out where even a bounded token is too --
# --- long (sealed, CouchPageMaxTokenLength 64), the page is served ------------
my $LONG = 'b' . ('x' x 100_000);
double_load('bounds_long', [ map { { _id => $_->[0], k => $_->[1] } } ['a', 'a'], ['b', $LONG], ['c', 'c'], ['d', 'd'] ],
            { v => { map => 'function (doc) { emit(doc.k, null); }' } });

# the response as curl gets it: (exit code, status, bytes received, headers)
sub curl {
    my ($url, @args) = @_;
    my $dir = tempdir(CLEANUP => 1);
    my ($body, $head) = (catfile($dir, 'body'), catfile($dir, 'head'));
    my $hostport = Apache::TestRequest::hostport();
    my $out = `curl -sS -o '$body' -D '$head' -w '%{http_code} %{size_download}' @args 'http://$hostport$url' 2>&1`;
    my $exit = $? >> 8;
    my ($status, $size) = $out =~ /(\d+) (\d+)$/;
    my $headers = do { local $/; open my $fh, '<', $head or return ($exit, 0, 0, ''); <$fh> };
    return ($exit, $status // 0, $size // 0, $headers);
}

{
    my $mark = error_log_mark();
    my $res = Apache::TestRequest::GET('/bounds/long/', Accept => 'application/json');
    my $page = eval { JSON::PP->new->utf8->decode($res->content) } || {};
    is($res->code, 200, 'a page whose next page starts at a 100 KB key: 200');
    is_deeply([map { $_->{key} } @{ $page->{items} || [] }], ['a'], '... with its row');
    is_deeply([$page->{next}, $page->{links}{next}, $page->{withheld}], [undef, undef, ['next']],
              '... next and links.next null, and "withheld": ["next"] says why');
    my $link = $res->header('Link') // '';
    ok(length($link) < 8192 && $link !~ /rel="next"/, 'the Link header is small and has no next (' . length($link) . ' bytes)');
    my ($exit, $status, $size, $headers) = curl('/bounds/long/');
    is("$exit $status", '0 200', 'curl gets the whole response, 200');
    ok(length($headers) < 8192, 'its headers are small (' . length($headers) . ' bytes)');
    my @lines = grep { /CP0180/ } error_log_since($mark, wait => 3, until => qr/CP0180/);
    is(scalar(@lines), 2, 'one CP0180 line a page (two pages were asked)');
    like($lines[0] // '', qr/\[couchpage:info\].*a link of \/bounds\/long\/ is left out: its token is \d{2,3} bytes, more than CouchPageMaxTokenLength 64 even bounded/,
         '... at info, naming the location and the lengths');

    # the page after the long key, by the first page's link to page 3 (the
    # tokens are sealed): its prev link is left out
    $res = Apache::TestRequest::GET('/bounds/long-links/', Accept => 'application/json');
    my ($third) = grep { ($_->{number} // 0) == 3 } @{ (eval { JSON::PP->new->utf8->decode($res->content) } || {})->{pages} || [] };
    my $c_token = $third ? $third->{start} : '';
    ($res) = Apache::TestRequest::GET(with_args('/bounds/long-links/', start => $c_token), Accept => 'application/json');
    $page = eval { JSON::PP->new->utf8->decode($res->content) } || {};
    is($res->code, 200, 'the page after the 100 KB key: 200');
    is_deeply([$page->{prev}, $page->{links}{prev}, $page->{withheld}, defined $page->{next} ? 'next' : 'none'], [undef, undef, ['prev'], 'next'],
              '... prev and links.prev null, "withheld": ["prev"], next as ever');
    unlike($res->header('Link') // '', qr/rel="prev"/, '... no prev in its Link header');

    # HTML: the links are disabled spans that say they were withheld
    $res = Apache::TestRequest::GET('/bounds/long/?format=html');
    my (undef, $tree) = parse_html($res->content);
    my ($next) = by_class($tree, 'couchpage-next');
    is($next && $next->{tag} . ' ' . $next->{attrs}{class}, 'span couchpage-next couchpage-disabled couchpage-withheld',
       'HTML: next is a span.couchpage-withheld');

    # page links: the page of the long key keeps its number, without a link
    ($res) = Apache::TestRequest::GET(with_args('/bounds/long-links/', start => $c_token), Accept => 'application/json');
    $page = eval { JSON::PP->new->utf8->decode($res->content) } || {};
    is_deeply([map { [$_->{number}, defined $_->{url} ? 'url' : 'no url', defined $_->{start} ? 'token' : 'no token'] } @{ $page->{pages} || [] }],
              [[1, 'url', 'no token'], [2, 'no url', 'no token'], [3, 'url', 'token'], [4, 'url', 'token']],
              'page links: page 2 (the long key) has no token and no URL, page 1 its URL');
    ok(length($res->header('Link') // '') < 8192, '... and the Link header stays small');
}

# --- 4. partition names -------------------------------------------------------
double_load('bounds_part', [ map { { _id => "$_->[0]:$_->[1]", n => $_->[1] } } ['alpha', 1], ['alpha', 2], ['beta', 3] ],
            { v => { map => 'function (doc) { emit(doc.n, null); }' } }, partitioned => 1);
for my $bad ('.', '..', '_design', 'a:b', '') {
    double_log(clear => 1);
    my ($code, $body) = get_json('/bounds/part/', 'X-Partition' => $bad);
    is("$code " . ($body->{error} // ''), '400 bad_request', "partition '$bad' from a request header: 400");
    is(scalar(grep { ($_->{path} // '') =~ m{^/bounds_part/} } double_log()), 0, "partition '$bad': nothing sent to CouchDB");
}
{
    double_log(clear => 1);
    my ($code, $body) = get_json('/bounds/part/', 'X-Partition' => 'alpha');
    is("$code " . join(',', map { $_->{id} } @{ $body->{items} || [] }), '200 alpha:1,alpha:2', "partition 'alpha': its rows");
    is(join(',', sort keys %{ { map { $_->{path} => 1 } grep { ($_->{path} // '') =~ m{^/bounds_part/} } double_queries(double_log()) } }),
       '/bounds_part/_partition/alpha/_design/d/_view/v', '... asked of its partition');
}

# --- 5. start-up ----------------------------------------------------------------
my $VIEW = 'CouchPageView http://127.0.0.1:5984/db/_design/d/_view/v';
for my $case (['..', qr/CouchPagePartition: '\.\.' is not a CouchDB partition name/],
              ['.', qr/CouchPagePartition: '\.' is not a CouchDB partition name/],
              ['_x', qr/CouchPagePartition: '_x' is not a CouchDB partition name/]) {
    my ($status, $out) = httpd_config_test("$VIEW\nCouchPagePartition \"$case->[0]\"");
    ok($status != 0 && $out =~ $case->[1], "httpd -t refuses CouchPagePartition '$case->[0]'") or diag $out;
}
for my $case (['0', qr/CouchPageMaxEmits: '0' is not a whole number from 1 to 1000/],
              ['1001', qr/CouchPageMaxEmits: '1001' is not a whole number from 1 to 1000/]) {
    my ($status, $out) = httpd_config_test("$VIEW\nCouchPageMaxEmits $case->[0]");
    ok($status != 0 && $out =~ $case->[1], "httpd -t refuses CouchPageMaxEmits $case->[0]") or diag $out;
}
{
    my ($status, $out) = httpd_config_test("$VIEW\nCouchPageMaxEmits 1000\nCouchPagePartition \"%{HTTP:X-P}\"");
    ok($status == 0 && $out =~ /Syntax OK/, 'CouchPageMaxEmits 1000 and a partition expression pass httpd -t') or diag $out;
}

