# SPDX-License-Identifier: Apache-2.0
# Backend faults, through the CouchDB view double's fault switches: each is
# answered with the right status and a JSON error body, logged once, and the
# next request is served normally. A read that failed in flight is repeated
# once, never more; behind a balancer, on another member. An answer with
# more rows than its query's limit is refused. Also: what exactly reaches
# CouchDB.
use strict;
use warnings;

use Apache::Test qw(plan ok);
use Apache::TestUtil qw(t_cmp);
use Apache::TestRequest ();
use File::Temp qw(tempdir);
use HTTP::Tiny ();
use MIME::Base64 ();
use CouchPageTest qw(get_json with_args double_load double_fault double_log double_request
                     double_queries error_log_mark error_log_since double_port start_own_httpd
                     decode_json_or_undef);
use CouchPageWalk qw(jparse jraw jget jstr);

double_load('faults', [ map { { _id => sprintf('doc%02d', $_), n => $_ } } 0 .. 9 ],
            { v => { map => 'function (doc) { emit(doc.n, null); }' } });

# Faults that end a response the backend had begun, or refuse it, and a
# cluster node that went down during the read, are reads that failed in
# flight: the module repeats the query once. A connection dropped before any
# answer (reset) is sent again up to twice more besides: its member is in
# error state then, and nothing of the read was answered. The client gets a
# generic reason for its status; the error log's CP0101 line says why.
# [fault, times sent again, expected status, error, why (regexp, in the log)]
my @FAULTS = (
    [{ mode => 'slow', ms => 4000 }, 0, 504, 'backend_timeout', qr/did not answer in time/],
    [{ mode => 'status', status => 500 }, 0, 502, 'backend_error', qr/CouchDB answered 500/],
    # a cluster's coordinator whose node went down mid-read (fabric_view:check_down_shards)
    [{ mode => 'status', status => 500, body => { error => 'nodedown', reason => 'progress not possible' } },
     1, 502, 'backend_error', qr/CouchDB answered 500 nodedown: progress not possible/],
    [{ mode => 'garbage' }, 0, 502, 'backend_error', qr/not JSON/],
    [{ mode => 'truncate' }, 1, 502, 'backend_error', qr/cut off/],
    [{ mode => 'reset' }, 3, 502, 'backend_error', qr/backend request failed|cut off/],
    [{ mode => 'stall', ms => 4000 }, 1, 502, 'backend_error', qr/cut off/],
    # a first page over the whole view is its one query, a GET:
    # CouchPageMaxResponse 65536
    [{ mode => 'huge', bytes => 300_000 }, 0, 502, 'backend_error', qr/larger than 65536 bytes/],
);
my $REPEATED = grep { $_->[1] } @FAULTS;

# What a client is told of the backend's trouble, by status.
my %GENERIC = (502 => 'the backend could not serve this page', 503 => 'the backend is unavailable',
               504 => 'the backend did not answer in time');

# The module's lines for a read sent again: failed in flight (CP0106 before
# any answer, CP0116 a read, CP0118 a multi-query read, CP0119 one cut off
# whose other queries were answered alone).
my $AGAIN = qr/CP01(?:06|16|18|19): .*failed in flight/;

# Bodies that are not JSON, each a 200 view response with one flaw, most of
# them in a row's document: the module reads answers with jsmn, which does
# not check UTF-8, control characters, surrogate escapes, number syntax or
# the separators, and checks them itself. Bytes, not characters (the double
# is given them in base64). [what, body]
my $HEAD = qq({"total_rows":10,"offset":0,"rows":[\r\n{"id":"doc00","key":0,"value":null,"doc":{"_id":"doc00","s":);
sub flawed_doc { $HEAD . $_[0] . qq(}}\r\n]}\n) }
my @BAD_BODIES = (
    ['an overlong UTF-8 form (C0 AF)', flawed_doc(qq("a\xc0\xafb"))],
    ['an overlong 3-byte form (E0 80 AF)', flawed_doc(qq("a\xe0\x80\xafb"))],
    ['a lone continuation byte', flawed_doc(qq("a\x80b"))],
    ['a UTF-8 sequence cut short', flawed_doc(qq("a\xe2\x82"))],
    ['an encoded surrogate (ED A0 80)', flawed_doc(qq("a\xed\xa0\x80b"))],
    ['a code point past U+10FFFF (F4 90 80 80)', flawed_doc(qq("a\xf4\x90\x80\x80b"))],
    ['a byte that is never UTF-8 (FF)', flawed_doc(qq("a\xffb"))],
    ['an invalid byte in a member name', flawed_doc(qq({"a\xffb":1}))],
    ['a raw control character (01) in a string', flawed_doc(qq("a\x01b"))],
    ['a raw tab in a string', flawed_doc(qq("a\tb"))],
    ['a raw NUL in a string', flawed_doc(qq("a\x00b"))],
    ['a lone high surrogate escape', flawed_doc(q("a\ud800b"))],
    ['a lone low surrogate escape', flawed_doc(q("a\udc00b"))],
    ['a high surrogate escape before another escape', flawed_doc(q("\ud800\u0041"))],
    ['an unknown escape', flawed_doc(q("a\xb"))],
    ['a number beyond a double (1e400)', flawed_doc('1e400')],
    ['a number just beyond a double (-1.8e308)', flawed_doc('-1.8e308')],
    ['a number that rounds past the largest double (1.7976931348623159e308)', flawed_doc('1.7976931348623159e308')],
    ['a fraction whose exponent takes it past a double (0.001e312)', flawed_doc('[0.001e312]')],
    ['NaN', flawed_doc('NaN')],
    ['-Infinity', flawed_doc('-Infinity')],
    # simdjson 4 reads these as a type "unknown", without an error
    ['a bare word (undefined)', flawed_doc('undefined')],
    ['markup (</script>)', flawed_doc('</script>')],
    ['a leading zero (012)', flawed_doc('012')],
    ['a number ending in its point (1.)', flawed_doc('1.')],
    ['a number with a plus sign (+1)', flawed_doc('+1')],
    ['an exponent without digits (1e)', flawed_doc('1e')],
    ['a misspelt literal (tru)', flawed_doc('tru')],
    ['a single-quoted string', flawed_doc(q('a'))],
    ['a missing colon', flawed_doc('{"a" 1}')],
    ['a missing comma', flawed_doc('[1 2]')],
    ['a form feed between values (not JSON white space)', flawed_doc(qq([1,\f2]))],
    ['brackets that do not match', flawed_doc('[1}')],
    ['a trailing comma in an object', flawed_doc('{"a":1,}')],
    ['a trailing comma in the rows', qq({"total_rows":10,"offset":0,"rows":[\r\n{"id":"doc00","key":0,"value":null},\r\n]}\n)],
    ['two values', qq({"total_rows":10,"offset":0,"rows":[]}\n{"total_rows":10,"offset":0,"rows":[]}\n)],
    ['a value after the body', qq({"total_rows":10,"offset":0,"rows":[]} 1\n)],
    ['a body cut in a string', $HEAD . '"abc'],
    ['a body cut after a member name', qq({"total_rows":10,"offset":0,"rows":[\r\n{"id":"doc00","key")],
);
# Valid bodies at the edges of what the reader checks: served, each value as
# it came. [what, the value's JSON text]
my @GOOD_VALUES = (
    ['the largest double', '[1.7976931348623157e308,-1.7976931348623157e308,1.7976931348623157E+308]'],
    ['numbers that round to the largest double, or come back under it',
     '[1.7976931348623158e308,0.00001e313,1' . '0' x 400 . 'e-100,179769313486231570' . '0' x 291 . ']'],
    ['numbers that underflow, and the smallest double', '[1e-400,5e-324,-0.0e-999]'],
    ['an integer of 30 digits, -0, 0e0 and 1E+2', '[123456789012345678901234567890,-0,0e0,1E+2]'],
    # an integer is never beyond range: CouchDB keeps any width, as the module does
    ['integers of 310 digits, either sign', '[1' . '0' x 309 . ',-1' . '0' x 309 . ']'],
    ['surrogate pairs as escapes, both cases', q(["\ud83d\ude00","\uDBFF\uDFFF","\ud800\udc00"])],
    ['the last code point and noncharacters as UTF-8', qq(["\xf4\x8f\xbf\xbf","\xef\xbf\xbf","\xef\xb7\x90","\xe2\x80\xa8"])],
    ['every escape', q(["\" \\\\ \/ \b \f \n \r \t \u0000 \u001f \u001F \u007f"])],
    ['white space everywhere JSON allows it', qq( \t\r\n[ 1 ,\r\n{ "a" : [ ] , "b" :\tnull } ] )],
    ['an array nested 20,000 levels', '[' x 20000 . ']' x 20000],
);

plan tests => 8 * @FAULTS + 5 * $REPEATED + 5 * @BAD_BODIES + 2 * @GOOD_VALUES + 2 * 4 + 1 + 5 * 4 + 3 + 7 + 9 + 6 + 5;

my ($status, $page) = get_json('/faults/');
ok t_cmp($status, 200, 'the faults location serves before any fault');
ok t_cmp(join(',', map { $_->{key} } @{ $page->{items} || [] }), '0,1,2', 'its first page');

sub view_queries { scalar grep { ($_->{url} // '') =~ m{^/faults/_design/d/_view/v} } double_log() }

for my $case (@FAULTS) {
    my ($fault, $repeated, $want, $error, $reason) = @$case;
    my $what = $fault->{mode} . ($fault->{body} ? " $fault->{body}{error}" : '');
    # a fault on every attempt: the client gets the error once the read was
    # sent as often as it may be
    double_log(clear => 1);
    double_fault(%$fault, path => '/faults/', count => 4);
    my $mark = error_log_mark();
    my ($code, $body) = get_json('/faults/');
    ok t_cmp($code, $want, "$what: $want");
    ok t_cmp($body && $body->{error}, $error, "$what: error $error");
    ok t_cmp($body && $body->{reason}, $GENERIC{$want}, "$what: a generic reason for the client");
    my @lines = error_log_since($mark, wait => 3, until => qr/CP0101/);
    my @logged = grep { /CP0101/ } @lines;
    ok t_cmp(scalar(@logged) . (@logged == 1 && $logged[0] =~ $reason ? ' saying why' : ": @logged"), '1 saying why',
             "$what: logged once, saying why");
    ok t_cmp(scalar(grep { $_ =~ $AGAIN } @lines), $repeated, "$what: repeated $repeated time(s), logged");
    ok t_cmp(view_queries(), 1 + $repeated, "$what: the backend saw " . (1 + $repeated) . " query(ies)");
    double_fault(mode => 'none');
    ($code, $body) = get_json('/faults/');
    ok t_cmp($code, 200, "$what: the next request is served");
    ok t_cmp(join(',', map { $_->{key} } @{ $body->{items} || [] }), '0,1,2',
             "$what: with the right rows");
    next unless $repeated;
    # a fault once: the repeat answers, and the client never sees it
    double_log(clear => 1);
    double_fault(%$fault, path => '/faults/', count => 1);
    $mark = error_log_mark();
    ($code, $body) = get_json('/faults/');
    ok t_cmp($code, 200, "$what once: the repeat serves the page");
    ok t_cmp(join(',', map { $_->{key} } @{ $body->{items} || [] }), '0,1,2',
             "$what once: with the right rows");
    @lines = error_log_since($mark, wait => 3, until => $AGAIN);
    ok t_cmp(scalar(grep { $_ =~ $AGAIN } @lines), 1, "$what once: the repeat is logged");
    ok t_cmp(scalar(grep { /CP0101/ } @lines), 0, "$what once: no error logged");
    ok t_cmp(view_queries(), 2, "$what once: the backend saw the query twice");
    double_fault(mode => 'none');
}

# A body that is not JSON: 502 backend_error with a JSON body (never the
# body's bytes) and a generic reason, one CP0101 line that says why, and the
# next page served.
sub refused_ok {
    my ($what, $bytes, $path, $request) = @_;
    double_fault(mode => 'garbage', body_base64 => MIME::Base64::encode_base64($bytes, ''), path => $path, count => 1);
    my $mark = error_log_mark();
    my $res = Apache::TestRequest::GET($request);
    double_fault(mode => 'none');
    my $body = eval { jparse($res->content, bytes => 1) };
    ok t_cmp($res->code, 502, "$what: 502");
    ok t_cmp($body ? jstr(jget($body, 'error')) // 'no error member' : 'not JSON: ' . $res->content,
             'backend_error', "$what: error backend_error, in a JSON body");
    ok t_cmp($body ? jstr(jget($body, 'reason')) // '' : '', $GENERIC{502}, "$what: a generic reason for the client");
    my @lines = grep { /CP0101/ } error_log_since($mark, wait => 3, until => qr/CP0101/);
    ok t_cmp(scalar(@lines) . (@lines == 1 && $lines[0] =~ /not JSON/ ? ' saying not JSON' : ": @lines"),
             '1 saying not JSON', "$what: one CP0101 line, saying not JSON");
    my ($code, $next) = get_json($request);
    ok t_cmp("$code " . join(',', map { $_->{key} } @{ $next->{items} || [] }),
             $request eq '/faults/' ? '200 0,1,2' : '200 3,4,5', "$what: the next request is served");
}

refused_ok($_->[0], $_->[1], '/faults/', '/faults/') for @BAD_BODIES;

for my $case (@GOOD_VALUES) {
    my ($what, $value) = @$case;
    double_fault(mode => 'garbage', path => '/faults/', count => 1, body_base64 => MIME::Base64::encode_base64(
        qq({"total_rows":10,"offset":0,"rows":[\r\n{"id":"doc00","key":0,"value":$value}\r\n]}\n), ''));
    my $res = Apache::TestRequest::GET('/faults/');
    double_fault(mode => 'none');
    ok t_cmp($res->code, 200, "valid JSON, $what: served");
    my $item = eval { jget(jparse($res->content, bytes => 1, spans => 1), 'items')->[1][0] };
    (my $trimmed = $value) =~ s/^[ \t\r\n]+|[ \t\r\n]+$//g;
    ok t_cmp($item ? jraw(jget($item, 'value')) : 'no item: ' . $res->content, $trimmed,
             "valid JSON, $what: the value as it came");
}

# A backend that ignores limit: its answer of 5,000 rows to a limit=3 query
# (CouchPageSize 2) is refused, 502, never used; one CP0181 line names the
# location, the view, the limit and the rows; the next page is served.
double_load('faults_many', [ map { { _id => sprintf('m%04d', $_), n => $_ } } 0 .. 4999 ],
            { v => { map => 'function (doc) { emit(doc.n, null); }' } });
for my $case (['a first page (one query)', '/faults-many/', 5000],
              ['a later page (forward and backward)', with_args('/faults-many/', start => '[10,"m0010"]'), 4990]) {
    my ($what, $path, $rows) = @$case;
    double_fault(mode => 'ignore_limit', path => '/faults_many/', count => 1);
    my $mark = error_log_mark();
    my ($code, $body) = get_json($path);
    double_fault(mode => 'none');
    ok t_cmp("$code " . ($body && $body->{error} // ''), '502 backend_error', "over its limit, $what: 502 backend_error");
    my @lines = error_log_since($mark, wait => 3, until => qr/CP0181/);
    my @over = grep { /CP0181/ } @lines;
    ok t_cmp(scalar(@over) . ' ' . scalar(grep { /CP0101/ } @lines), '1 0', "over its limit, $what: one CP0181 line, no other");
    ok t_cmp($over[0] // '', qr{for /faults-many/ with $rows rows, more than its limit of 3: refused \(CouchPageView \S+/faults_many/_design/d/_view/v},
             "over its limit, $what: the line names the location, the rows, the limit and the view");
    ($code, $body) = get_json($path);
    ok t_cmp("$code " . join(',', map { $_->{key} } @{ $body->{items} || [] }),
             $path eq '/faults-many/' ? '200 0,1' : '200 10,11', "over its limit, $what: the next request is served");
}

# The same checks on a later page, whose queries go as one multi-query POST:
# a flaw in its first result.
{
    my (undef, $first) = get_json('/faults/');
    my $later = with_args('/faults/', start => $first->{next});
    double_log(clear => 1);
    get_json($later);
    my @posts = grep { $_->{method} eq 'POST' } double_log();
    my $n = @posts == 1 && ref $posts[0]{queries} eq 'ARRAY' ? @{ $posts[0]{queries} } : 0;
    ok t_cmp(scalar(@posts) . " POST of $n queries", qr/^1 POST of [1-9]/, 'a later page is one multi-query POST');
    my $empty = '{"total_rows":10,"offset":0,"rows":[]}';
    my $batch = sub { qq({"results":[\r\n) . join(",\r\n", $_[0], ($empty) x ($n - 1)) . qq(\r\n]}\n) };
    for my $case (['a batch: an overlong UTF-8 form', $batch->(flawed_doc(qq("a\xc0\xafb")) =~ s/\r?\n$//r)],
                  ['a batch: a lone surrogate escape', $batch->(flawed_doc(q("\ud800")) =~ s/\r?\n$//r)],
                  ['a batch: a number beyond a double', $batch->(flawed_doc('1e400') =~ s/\r?\n$//r)],
                  ['a batch: a trailing comma between results', qq({"results":[\r\n) . join(",\r\n", ($empty) x $n) . qq(,\r\n]}\n)]) {
        refused_ok(@$case, '/faults/_design/d/_view/v/queries', $later);
    }
    # CouchPageMaxResponse 65536 bounds a request's answers together: each
    # result of 40,000 bytes is under it, the batch of them over it.
    double_log(clear => 1);
    double_fault(mode => 'huge', bytes => 40_000, each => 1, path => '/faults/', count => 4);
    my $mark = error_log_mark();
    my ($code, $body) = get_json($later);
    double_fault(mode => 'none');
    ok t_cmp("$code " . ($body->{error} // ''), '502 backend_error',
             'answers of 40,000 bytes each, over CouchPageMaxResponse 65536 together: 502');
    my @logged = grep { /CP0101/ } error_log_since($mark, wait => 3, until => qr/CP0101/);
    ok t_cmp(scalar(@logged) . (@logged == 1 && $logged[0] =~ /larger than 65536 bytes/ ? ' saying why' : ": @logged"),
             '1 saying why', 'logged once: the answers are larger than 65536 bytes');
    ok t_cmp(scalar(grep { ($_->{url} // '') =~ m{^/faults/} } double_log()), 1,
             'one read, not repeated, no query asked after it');
}

# CouchDB 3.4 answers a failure of a multi-query POST's first query (here a
# cluster's 500 nodedown) with a complete error response, and writes the other
# queries' results behind it on the same connection later, once its handler
# has run them (the double's trailing_ms): mod_proxy would read them as the
# answer to the next request on that pooled connection. So that connection
# is closed: the repeat goes out on another, and every page after is right.
($status, $page) = get_json('/faults/');
my $later = $page->{next};
double_log(clear => 1);
double_fault(mode => 'status', status => 500, body => { error => 'nodedown', reason => 'progress not possible' },
             trailing_ms => 300, path => '/faults/_design/d/_view/v/queries', count => 1);
my $trail_mark = error_log_mark();
my ($trail_status, $trail_page) = get_json(with_args('/faults/', start => $later));
ok t_cmp($trail_status, 200, 'a batch answered 500 nodedown, results written behind it later: the repeat serves the page');
ok t_cmp(join(',', map { $_->{key} } @{ $trail_page->{items} || [] }), '3,4,5', 'with the right rows');
my @posts = grep { $_->{method} eq 'POST' } double_log();
ok t_cmp(@posts == 2 && $posts[0]{conn} != $posts[1]{conn} ? 'another connection' : 'the same connection',
         'another connection', 'the repeat goes out on another connection than the one the error came back on');
my @after_trail = map { my ($c, $p) = get_json(with_args('/faults/', start => $later));
                        "$c " . join(',', map { $_->{key} } @{ $p->{items} || [] }) } 1 .. 4;
ok t_cmp(join('; ', @after_trail), join('; ', ('200 3,4,5') x 4), 'the pages after it are served right');
ok t_cmp(scalar(grep { /CP0101/ } error_log_since($trail_mark, wait => 1)), 0, 'no backend error logged');
double_fault(mode => 'none');

# CouchDB 3.x databases are admin-only: 401 is CouchDB's error, logged
my $auth_mark = error_log_mark();
($status, $page) = get_json('/faults-anonymous/');
ok t_cmp("$status $page->{reason}", "502 $GENERIC{502}", 'no credentials: 502, a generic reason');
ok t_cmp(join('', grep { /CP0101/ } error_log_since($auth_mark, wait => 3, until => qr/CP0101/)),
         qr{CP0101: the backend queries for /faults-anonymous/ failed with 502: CouchDB answered 401 unauthorized},
         "the log carries CouchDB's 401 and reason");
$auth_mark = error_log_mark();
my $res_auth = Apache::TestRequest::GET('/faults-wrong-password/');
($status, $page) = ($res_auth->code, decode_json_or_undef($res_auth->content) // {});
ok t_cmp("$status $page->{reason}", "502 $GENERIC{502}", 'a wrong password: 502, a generic reason');
my @auth_lines = error_log_since($auth_mark, wait => 3, until => qr/CP0101/);
ok t_cmp(join('', grep { /CP0101/ } @auth_lines), qr/CouchDB answered 401/, "the log carries CouchDB's 401");
ok t_cmp(index(join("\n", $res_auth->as_string, @auth_lines), 'not-the-password'), -1,
         'the password is neither in the answer nor in the log');

# What reaches CouchDB: our parameters and headers, nothing of the client's.
# A later page asks its forward and backward queries at once: one
# multi-query POST, or one GET each where the backend has no such endpoint.
double_log(clear => 1);
my $token = '["x&skip=5#frag\r\nX: y",' . '"doc03"]';
my $res = Apache::TestRequest::GET(with_args('/faults/', start => $token, limit => 2, skip => 9,
                                             endkey => '"z"', descending => 'true'),
    Cookie => 'session=secret-cookie', Authorization => 'Basic Y2xpZW50OnNlY3JldA==',
    'Accept-Encoding' => 'gzip', 'If-None-Match' => '"etag"', 'X-Client' => 'mine');
ok t_cmp($res->code, 200, 'a page with hostile arguments and headers is served');
my @requests = grep { ($_->{url} // '') =~ m{^/faults/_design/d/_view/v} } double_log();
my @queries = grep { $_->{path} eq '/faults/_design/d/_view/v' } double_queries(@requests);
ok t_cmp(scalar @queries, 2, 'two backend queries: forward and backward (no probe over the whole view)');
# the double logs each query as [name, value] pairs, repeats included
my @pairs = map { $_->{query} } @queries;
my %params = map { $_->[0] => 1 } map { @$_ } @pairs;
ok t_cmp(join(',', sort keys %params) . (grep({ my %seen; grep { $seen{ $_->[0] }++ } @$_ } @pairs) ? ' (repeated)' : ''),
         'descending,limit,reduce,startkey,startkey_docid,update_seq',
         'only the parameters the algorithm asks for, each once (update_seq: the sequence that seals the ETag)');
sub param { my ($query, $name) = @_; my ($pair) = grep { $_->[0] eq $name } @$query; $pair ? $pair->[1] : '-' }
ok t_cmp(join('|', map { param($_, 'startkey') } @pairs),
         '"x&skip=5#frag\r\nX: y"|"x&skip=5#frag\r\nX: y"',
         'the key travelled as one startkey value');
ok t_cmp(join('|', map { param($_, 'skip') } @pairs), '-|-',
         "no skip: never the client's, and the backward query reads the token's own row");
my %headers = map { lc($_) => 1 } map { keys %{ $_->{headers} || {} } } @requests;
ok t_cmp(join(',', grep { $headers{$_} } qw(cookie accept-encoding if-none-match x-client)), '',
         "none of the client's headers reach CouchDB");
ok t_cmp(join('|', map { $_->{headers}{authorization} // '' } @requests),
         join('|', ('Basic ' . MIME::Base64::encode_base64(
             "$ENV{COUCHPAGE_DOUBLE_USER}:$ENV{COUCHPAGE_DOUBLE_PASSWORD}", '')) x @requests),
         "CouchDB gets the configured credentials, not the client's");
ok t_cmp(join('|', map { $_->{headers}{accept} // '' } @requests),
         join('|', ('application/json') x @requests), 'Accept: application/json');
ok t_cmp(join('|', map { "$_->{method} " . ($_->{method} eq 'POST' ? $_->{headers}{'content-type'} // '-' : '') } @requests),
         join('|', map { $_->{method} eq 'POST' ? 'POST application/json' : 'GET ' } @requests),
         'GETs of the view, and POSTs of its queries as application/json: nothing else');

# Behind mod_proxy_balancer (docs/scaling.md): a member that dropped
# the connection before it answered goes into error state (failonstatus=502:
# the module answers such a subrequest 502), so that the repeat, and the
# queries after it, go to the other member, and not back to a node that may
# be going down. A member that cut an answer off after it began is not put in
# error state: a healthy CouchDB coordinator does that when another node goes
# down, and taking it out could leave no member at all. An httpd of this
# test's own has a balancer of two members that are both the double, as
# 127.0.0.1 and as localhost: the Host header the double logs tells them apart.
my $port = double_port();
my $root = tempdir(CLEANUP => 1);
my ($lb_port) = start_own_httpd($root, [qw(slotmem_shm proxy proxy_http proxy_balancer lbmethod_byrequests)], <<"CONF");
<Proxy "balancer://double">
    BalancerMember "http://127.0.0.1:$port" retry=60
    BalancerMember "http://localhost:$port" retry=60
    ProxySet lbmethod=byrequests failonstatus=502
</Proxy>
<Location "/faults/">
    SetHandler couchpage
    CouchPageView "balancer://double/faults/_design/d/_view/v"
    CouchPageCredentials "$ENV{COUCHPAGE_DOUBLE_USER}" "$ENV{COUCHPAGE_DOUBLE_PASSWORD}"
    CouchPageSize 3
</Location>
CONF
my $lb = HTTP::Tiny->new(timeout => 30);
sub lb_first_page { my $res = $lb->get("http://127.0.0.1:$lb_port/faults/"); ($res->{status}, $res->{content}) }
sub view_hosts { map { $_->{headers}{host} // '?' } grep { ($_->{url} // '') =~ m{^/faults/_design/d/_view/v} } double_log() }
sub other_member { my ($member) = @_; ($member // '') eq "localhost:$port" ? "127.0.0.1:$port" : "localhost:$port" }
double_log(clear => 1);
lb_first_page() for 1 .. 4;
my %members = map { $_ => 1 } view_hosts();
ok t_cmp(join(',', sort keys %members), "127.0.0.1:$port,localhost:$port", 'the balancer uses both members');

# an answer cut off after it began: repeated, and its member stays in
double_log(clear => 1);
double_fault(mode => 'truncate', path => '/faults/', count => 1);
my ($lb_status) = lb_first_page();
ok t_cmp($lb_status, 200, 'a read cut off behind the balancer is repeated and served');
lb_first_page() for 1 .. 4;
my ($cut, $repeat, @after) = view_hosts();
ok t_cmp(join(',', sort keys %{{ map { $_ => 1 } @after }}), "127.0.0.1:$port,localhost:$port",
         'the member that cut an answer off stays in use: both members serve the queries after it');

# a connection dropped before any answer: the member goes into error state
double_log(clear => 1);
double_fault(mode => 'reset', path => '/faults/', count => 1);
($lb_status) = lb_first_page();
ok t_cmp($lb_status, 200, 'a read whose connection was dropped behind the balancer is repeated and served');
lb_first_page() for 1 .. 4;
my ($dropped, $repeated, @later) = view_hosts();
ok t_cmp($repeated // 'none', other_member($dropped), 'the repeat went to the other member');
ok t_cmp(join(',', grep { $_ eq ($dropped // '') } @later), '',
         'and so did every query after it: the member that dropped the connection is in error state');
double_fault(mode => 'none');
