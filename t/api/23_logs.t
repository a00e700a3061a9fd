# SPDX-License-Identifier: Apache-2.0
# Quiet and telling logs (issue 23, item 3), read in t/logs/error_log, the
# lines of one request being those between a mark taken before it and a
# marker request after it (a bad request, logged at info):
#  - CouchDB down (a closed port with a <Proxy> worker): the request's 503,
#    and exactly one line at error level or above, the module's CP0101
#    naming the location, the view and the cause; none of mod_proxy's (AH
#    numbers), neither for the refused connection nor for the worker mod_proxy
#    puts in error state, nor for the module's second try; on the first
#    request and on the next, which meets the worker in error state;
#  - LogLevel proxy:debug (or couchpage:debug) at a location gives
#    mod_proxy's own lines back;
#  - a partition name from the URL that CouchDB would refuse is the
#    client's 400, at info;
#  - LogLevel couchpage:debug at a location: a line for each backend request
#    (what was asked, the answer's status, size and time, rows read and on
#    the page: the size is the body's, fetched again straight from the
#    backend) and one for the page (its rows, tokens issued, ETag, 304);
#    with sealed tokens, keys and ids only by their length; at info none;
#  - Basic authentication at a location checks the user once a page: the
#    backend subrequest is the page's own request, under its configuration;
#  - no line of this file's requests holds the backend password, its Basic
#    credentials, the token secret or a sealed token.
use strict;
use warnings;

use Apache::Test qw(-withtestmore);
use Apache::TestRequest ();
use HTTP::Tiny ();
use MIME::Base64 ();
use URI ();
use URI::Escape qw(uri_escape);
use CouchPageTest qw(decode_json_or_undef error_log_mark error_log_since double_load
                     double_url backend_kind);

my $FILE_MARK = error_log_mark();
double_load('logs', [ map { { _id => sprintf('doc%02d', $_), n => $_ } } 0 .. 9 ],
            { v => { map => 'function (doc) { emit(doc.n, null); }' } });

my $ERROR = qr/:(?:error|crit|alert|emerg)\]/;

# The lines the request for PATH (with HEADERS) wrote: (response, lines).
sub request_lines {
    my ($path, @headers) = @_;
    my $mark = error_log_mark();
    my $res = Apache::TestRequest::GET($path, @headers);
    Apache::TestRequest::GET("/bands/?limit=0");
    my $marker = qr{CP0102: bad request: limit must be};
    my @lines = error_log_since($mark, wait => 5, until => $marker);
    my @before;
    for (@lines) {
        last if /$marker/;
        push @before, $_;
    }
    return ($res, @before);
}

# --- CouchDB down -------------------------------------------------------------
my $IN = qr{\(CouchPageView http://127\.0\.0\.1:2/logs/_design/d/_view/v, <Location "/logs/down/"> at \S+extra\.conf:\d+\)};

# CouchDB down (2 x 5), with proxy:debug (3), with couchpage:debug (3), a
# partition that is not UTF-8 (3), two pages of three debug locations (8
# each), hidden keys (1), a location at info (2), no secrets (2)
plan tests => 2 * 5 + 3 + 3 + 3 + 3 * 2 * 8 + 1 + 4 + 2 + 2;
for my $which ('first request', 'next request (the worker in error state)') {
    my ($res, @lines) = request_lines('/logs/down/');
    my $body = decode_json_or_undef($res->content) // {};
    is($res->code . ' ' . ($body->{error} // ''), '503 backend_unavailable', "CouchDB down, $which: 503");
    my @errors = grep { /$ERROR/ } @lines;
    is(scalar(@errors), 1, "$which: one line at error level or above")
        or diag join "\n", @lines;
    like($errors[0] // '', qr{\[couchpage:error\].*CP0101: the backend queries for /logs/down/ failed with 503: the backend is unavailable \(mod_proxy made no connection to it, 2 tries\) $IN},
         "$which: it is CP0101, with the location, the view and the cause");
    is(join("\n", grep { /AH\d{5}/ } @lines), '', "$which: none of mod_proxy's lines (AH...)");
    is(scalar(grep { /\[couchpage:info\].*CP0115: the backend could not be reached/ } @lines), 1,
       "$which: the second try is said once, at info");
}

# An operator who asks for mod_proxy's lines gets them: LogLevel proxy:debug
{
    my ($res, @lines) = request_lines('/logs/down-proxy-debug/');
    is($res->code, 503, 'with LogLevel proxy:debug: 503 too');
    ok((grep { /\[proxy:error\].*AH00957: .*connect to 127\.0\.0\.1:3/ } @lines)
       && (grep { /\[proxy_http:error\].*AH01114: / } @lines),
       "mod_proxy's own lines show: AH00957 (the refused connection), AH01114")
        or diag join "\n", @lines;
    ok(scalar(grep { /\[proxy:debug\]/ } @lines), '... and its debug lines');
}

# ... and so does one who asks for the module's: LogLevel couchpage:debug,
# where mod_proxy's lines are at the server's level (warn: its errors)
{
    my ($res, @lines) = request_lines('/logs/down-debug/');
    is($res->code, 503, 'with LogLevel couchpage:debug: 503 too');
    is(scalar(grep { /\[proxy:error\].*AH00957: .*connect to 127\.0\.0\.1:4/ } @lines) . ' '
       . scalar(grep { /\[proxy_http:error\].*AH01114: / } @lines), '2 2',
       "mod_proxy's error lines show, for each of the two tries") or diag join "\n", @lines;
    ok(scalar(grep { /\[couchpage:debug\].*CP0150: backend request 2 of 2: GET \S+: no answer \(mod_proxy 503\) in [\d.]+ ms; 0 rows read, no page$/ } @lines),
       '... and the module\'s debug line for each') or diag join "\n", @lines;
}

# A client's partition name that CouchDB would refuse (not UTF-8: 400
# illegal_partition) is the client's mistake, refused before any query and
# logged at info.
{
    my ($res, @lines) = request_lines('/parts/%FF/view/');
    my $body = decode_json_or_undef($res->content) // {};
    is($res->code . ' ' . ($body->{reason} // ''), '400 the partition name is not valid UTF-8',
       'a partition name that is not UTF-8: 400');
    is(join("\n", grep { /$ERROR/ } @lines), '', '... and no line at error level');
    is(scalar(grep { /\[couchpage:info\].*CP0102: bad request: the partition name is not valid UTF-8/ } @lines), 1,
       '... but one at info');
}

# --- couchpage:debug ------------------------------------------------------------
my $DOUBLE = double_url();
my $SECRETS = join '|', map { quotemeta } grep { length }
    $ENV{COUCHPAGE_DOUBLE_PASSWORD} // 'double-admin-secret',
    MIME::Base64::encode_base64(($ENV{COUCHPAGE_DOUBLE_USER} // 'admin') . ':'
                                . ($ENV{COUCHPAGE_DOUBLE_PASSWORD} // 'double-admin-secret'), ''),
    'C4PFyMUqFNS0kiNQqDjEDkurUSeGdfFJcIUNV33NQAw=', 'Authorization';

# The size of the body the backend sends for PATH?QUERY, asked straight, and
# the length of the view's update_seq in it (0 without one).  CouchDB packs
# that sequence compressed, so its length may change between the module's
# read and this one with no row changing: the rest of the body must match.
sub backend_bytes {
    my ($asked) = @_;
    my $auth = MIME::Base64::encode_base64(($ENV{COUCHPAGE_DOUBLE_USER} // 'admin') . ':'
                                           . ($ENV{COUCHPAGE_DOUBLE_PASSWORD} // 'double-admin-secret'), '');
    my $res = HTTP::Tiny->new(timeout => 30)->get("$DOUBLE$asked",
                                                    { headers => { Authorization => "Basic $auth", Accept => 'application/json' } });
    my ($seq) = $res->{content} =~ /"update_seq":"([^"]*)"/;
    return (length $res->{content}, length($seq // ''));
}

# The tokens a page hands out, as strings: next, prev, the last page's
# (unless it is this page, reached with START) and the numbered pages'.
sub tokens_of {
    my ($body, $start) = @_;
    my $token = sub { my ($url) = @_; defined $url ? { URI->new("http://x$url")->query_form }->{start} : undef };
    my $last = $token->($body->{links}{last});
    my @tokens = ($body->{next}, $body->{prev}, defined $last && $last ne ($start // '') ? $last : undef,
                  map { $_->{current} ? undef : $token->($_->{url}) } @{ $body->{pages} || [] });
    return grep { defined } @tokens;
}

my @issued;
my $BACKEND_LINE = qr{CP0150: backend request (\d+) of (\d+): (GET|POST) (.+?)(?: \((\d+) queries, (\d+) bytes\))?: answered (\d+), (\d+) bytes in ([\d.]+) ms; (\d+) rows read, (\d+) on the page$};
my $hidden_keys = 0;
for my $case (['/logs/debug/', 'sealed'], ['/logs/debug-plain/', 'plain'], ['/logs/debug-bands/', 'sealed']) {
    my ($location, $kind) = @$case;
    my ($path, $start) = ($location, undef);
    for my $n (1, 2) {
        my ($res, @lines) = request_lines($path);
        my $body = decode_json_or_undef($res->content) // {};
        is($res->code, 200, "$location page $n ($kind tokens): 200");
        my @backend = grep { /CP0150/ } @lines;
        my @parsed = map { [ /$BACKEND_LINE/ ] } @backend;
        ok(@backend && !grep({ !@$_ } @parsed), "page $n: a well-formed line for each backend request")
            or diag join "\n", @lines;
        my ($used, $rows_on_page) = (0, scalar @{ $body->{items} || [] });
        $used += $_->[10] // 0 for @parsed;
        is($used, $rows_on_page, "page $n: the requests' rows on the page add up to its $rows_on_page rows");
        is(join(',', map { $_->[0] } @parsed), join(',', 1 .. @parsed), "page $n: numbered in order");
        # one test for the page's GETs (their number depends on the backend)
        my @gets = grep { @$_ && $_->[2] eq 'GET' } @parsed;
        my @wrong;
        for my $q (@gets) {
            my ($asked, $bytes) = @$q[3, 7];
            if ($kind eq 'sealed') {
                push @wrong, "keys shown: $asked" if $asked =~ /(?:startkey|endkey|startkey_docid|endkey_docid)=(?!<\d+ bytes>)/;
                $hidden_keys++ if $asked =~ /startkey=<\d+ bytes>/;
            }
            else {
                my ($sent, $seq_length) = backend_bytes($asked);
                # a packed sequence of another length, the rest the same bytes
                my $seq_moved = $seq_length && abs($bytes - $sent) <= 8;
                push @wrong, "$asked: $bytes bytes, the backend sends $sent" if $bytes != $sent && !$seq_moved;
            }
        }
        is(join("\n", @wrong), '', $kind eq 'sealed'
            ? "page $n: sealed, so keys and ids only by their length in its GETs (" . scalar(@gets) . ')'
            : "page $n: each GET's bytes as the backend sends them (" . scalar(@gets) . ')');
        my @tokens = tokens_of($body, $start);
        push @issued, @tokens if $kind eq 'sealed';
        my $longest = 0;
        $longest = length > $longest ? length : $longest for @tokens;
        my $position = ($body->{numbering} // '') eq 'absolute'
            ? "rows $body->{first_row}-$body->{last_row} of $body->{total_rows}"
            : "$rows_on_page rows, numbered relative to this page";
        my $etag = $res->header('ETag') // '(none)';
        my ($page_line) = grep { /CP0151/ } @lines;
        my $issued = @tokens;
        like($page_line // '(no CP0151 line)',
             qr{\[couchpage:debug\].*CP0151: page of \Q$location\E: \Q$position\E; $issued tokens issued \($kind, the longest $longest bytes\); ETag \Q$etag\E; answered 200$},
             "page $n: its line says where it is ($position), the tokens issued, the ETag");
        my ($again, @again_lines) = request_lines($path, 'If-None-Match' => $etag);
        is($again->code, 304, "page $n again with its ETag: 304");
        # the 304's tag: the page's digest, sealed with a sequence: the
        # page read again (CP0151), or, where the page's tag was sealed
        # already (a view's rows), its sequence alone (CP0152;
        # t/api/36_revalidate.t)
        my $unquoted = substr($etag, 0, -1);
        ok(scalar(grep { /CP0151: page of \Q$location\E: .*; ETag \Q$unquoted\E(?:\.[A-Za-z0-9_-]{22})?"; answered 304 Not Modified$/
                         || /CP0152: page of \S+: answered 304 Not Modified from its sequence, ETag \Q$etag\E$/ } @again_lines),
           '... and its line says so') or diag join "\n", @again_lines;
        $start = $body->{next} // '';
        $path = "$location?start=" . uri_escape($start);
    }
}
SKIP: {
    skip('the backend of /logs/debug-bands/ is ' . backend_kind() . ', which answers a later page\'s '
         . 'queries in one POST: no GET with a key to see', 1) unless backend_kind() eq 'pouchdb-server';
    ok($hidden_keys, "GETs with keys were logged with their keys' lengths ($hidden_keys)");
}

# Basic authentication at a location: the page's request checks the user
# once; the backend subrequest, the page's own request, not again.
{
    my ($denied) = request_lines('/logs/basic-auth/');
    is($denied->code, 401, 'a location with Basic authentication, no credentials: 401');
    my $basic = 'Basic ' . MIME::Base64::encode_base64('reader:page-reader', '');
    my ($res, @lines) = request_lines('/logs/basic-auth/', Authorization => $basic);
    is($res->code, 200, '... with them: 200');
    my $body = decode_json_or_undef($res->content);
    is(scalar @{ $body->{items} // [] }, 5, '... a page of 5 bands');
    is(scalar(grep { /authorization result of Require valid-user\s*: granted/ } @lines), 1,
       '... and the user is checked once: the backend subrequest is the page\'s own')
        or diag join "\n", @lines;
}

# At info (the test server's level) the module writes no debug line.
{
    my ($res, @lines) = request_lines('/logs/info/');
    is($res->code, 200, 'a location at info: 200');
    is(join("\n", grep { /CP015[01]/ } @lines), '', '... and no debug line');
}

# Nothing of this file's requests reveals a secret.
my @all = error_log_since($FILE_MARK);
is(join("\n", grep { /$SECRETS/ } @all), '', 'no line holds the backend password, its Basic credentials or the token secret');
my %issued = map { $_ => 1 } @issued;
is(join("\n", grep { my $line = $_; grep { index($line, $_) >= 0 } keys %issued } @all), '',
   'nor a sealed token (' . scalar(keys %issued) . ' issued)');

