# SPDX-License-Identifier: Apache-2.0
# Every error of the skeleton: a JSON body {"error", "reason"}, the right
# status, one line in the error log, and httpd goes on serving. Visitors get
# a generic reason for the backend's trouble, the error log the full one
# with the location and the view; an HTML page gets the CouchPageText error
# word. Nothing a client sends makes httpd log at error level.
use strict;
use warnings;

use Apache::Test qw(plan ok);
use Apache::TestUtil qw(t_cmp);
use Apache::TestRequest ();
use CouchPageTest qw(get_json with_args decode_json_or_undef error_log_mark error_log_since
                     double_load);

double_load('errors', [ map { { _id => sprintf('doc%02d', $_), n => $_ } } 0 .. 9 ],
            { v => { map => 'function (doc) { emit(doc.n, null); }' } });
my $IN = qr{\(CouchPageView \S+/(?:_all_docs|_view/[^/,]+), <Location "[^"]+"> at \S+extra\.conf:\d+\)};

# [path, method, status, error, reason (regexp), log line (regexp)]
my @CASES = (
    ['/bands/?start=xx', 'GET', 400, 'bad_request', qr/not JSON/, qr/CP0102: bad request: the start token is not JSON/],
    ['/bands/?start=%5B%22Nirvana%22%5D', 'GET', 400, 'bad_request', qr/two members/, qr/CP0102/],
    ['/bands/?start=%5B1%2C2%5D', 'GET', 400, 'bad_request', qr/docid must be a non-empty string/, qr/CP0102/],
    ['/bands/?start=%5B%22a%22%2C%22%FF%22%5D', 'GET', 400, 'bad_request', qr/not JSON/, qr/CP0102/],
    ['/bands/?start=%zz', 'GET', 400, 'bad_request', qr/malformed percent-escape/, qr/CP0102/],
    ['/bands/?limit=0', 'GET', 400, 'bad_request', qr/limit must be a whole number from 1 to 100/, qr/CP0102/],
    ['/bands/?limit=101', 'GET', 400, 'bad_request', qr/from 1 to 100/, qr/CP0102/],
    ['/bands/?limit=five', 'GET', 400, 'bad_request', qr/from 1 to 100/, qr/CP0102/],
    ['/bands/?limit=5&limit=6', 'GET', 400, 'bad_request', qr/more than once/, qr/CP0102/],
    ['/bands/', 'POST', 405, 'method_not_allowed', qr/only GET and HEAD/, qr/CP0103: method POST refused/],
    ['/bands/', 'PUT', 405, 'method_not_allowed', qr/only GET and HEAD/, qr/CP0103: method PUT refused/],
    # the backend's trouble: a generic reason, CouchDB's own words in the log
    # with the request's path, the view and where the location is
    ['/errors/missing-view/', 'GET', 502, 'backend_error', qr/^the backend could not serve this page$/,
     qr{\[couchpage:error\].*CP0101: the backend queries for /errors/missing-view/ failed with 502: CouchDB answered 404 not_found: .+ \(CouchPageView \S+/bands/_design/bands/_view/no-such-view, <Location "/errors/missing-view/"> at \S+extra\.conf:\d+\)$}],
    ['/errors/missing-db/', 'GET', 502, 'backend_error', qr/^the backend could not serve this page$/,
     qr{CP0101: the backend queries for /errors/missing-db/ failed with 502: CouchDB answered 404 not_found: Database does not exist\. $IN}],
    ['/errors/unreachable/', 'GET', 503, 'backend_unavailable', qr/^the backend is unavailable$/,
     qr{CP0101: the backend queries for /errors/unreachable/ failed with 503: the backend is unavailable \(mod_proxy made no connection to it, 2 tries\) \(CouchPageView http://127\.0\.0\.1:1/}],
    # the operator's reversed constant range: CouchDB refuses the page's query
    ['/errors/range-reversed/', 'GET', 502, 'backend_error', qr/^the backend could not serve this page$/,
     qr{\[couchpage:error\].*CP0101: the backend queries for /errors/range-reversed/ failed with 502: CouchDB answered 400 query_parse_error: .*; does CouchDB collate CouchPageRange's LOW after its HIGH\? $IN}],
    # a client's token outside a constant range (above it, below it):
    # CouchDB refuses a later query of the page's multi-query request
    [with_args('/errors/range/', start => '[9,"doc09"]'), 'GET', 400, 'bad_request',
     qr/^the start token is outside this location's key range$/,
     qr{\[couchpage:info\].*CP0122: bad request: the start token is outside this location's key range \(CouchDB answered 400 query_parse_error: }],
    [with_args('/errors/range/', start => '[0,"doc00"]'), 'GET', 400, 'bad_request',
     qr/^the start token is outside this location's key range$/, qr{CP0122: .*\(CouchDB answered 400 query_parse_error: }],
    [with_args('/errors/range-reversed/', start => '[5,"doc05"]'), 'GET', 400, 'bad_request',
     qr/^the start token is outside this location's key range$/, qr{CP0122: }],
    ['/errors/no-view/', 'GET', 500, 'internal_error', qr/misconfigured/, qr/CP0104: configuration error for \/errors\/no-view\/: no CouchPageView/],
    # a range expression's result that is not JSON is the operator's error, logged at error level
    ['/errors/range-not-json/p1/', 'GET', 500, 'internal_error', qr/misconfigured/,
     qr/\[couchpage:error\].*CP0104: configuration error for \/errors\/range-not-json\/p1\/: CouchPageRange LOW yields '\[p1, 0\]', which is not JSON .*%\{json:\.\.\.\}/],
    ['/errors/ids-merged/numbers/', 'GET', 500, 'internal_error', qr/misconfigured/,
     qr/\[couchpage:error\].*CP0104: .*CouchPageRange: HIGH '5' is not a document id/],
);

# What a client's request must never make httpd log: anything at error
# level or above, and a refused query called a failure in flight.
my $CLIENTS_OWN = qr{^/errors/range/|[?&]start=|^/bands/};

# Words of the backend's that visitors must not see.
my $BACKEND_WORDS = qr/CouchDB|not_found|missing|no-such|Database does not exist|query_parse_error|127\.0\.0\.1/;

plan tests => 7 * @CASES + 10;

for my $case (@CASES) {
    my ($path, $method, $status, $error, $reason, $log) = @$case;
    my $mark = error_log_mark();
    my $res = $method eq 'GET' ? Apache::TestRequest::GET($path)
            : $method eq 'POST' ? Apache::TestRequest::POST($path, content => 'x=1')
            : Apache::TestRequest::PUT($path, content => 'x');
    my $body = decode_json_or_undef($res->content) // {};
    ok t_cmp($res->code, $status, "$method $path answers $status");
    ok t_cmp($res->header('Content-Type'), 'application/json; charset=utf-8', "$method $path: JSON");
    ok t_cmp($body->{error}, $error, "$method $path: error $error");
    ok t_cmp($body->{reason}, $reason, "$method $path: the reason says why");
    ok t_cmp($status >= 500 && $res->content =~ $BACKEND_WORDS ? "the body says: $res->content" : 'nothing',
             'nothing', "$method $path: nothing of the backend's in the body");
    my @all = error_log_since($mark, wait => 2, until => $log);
    my @lines = grep { /\[couchpage:/ } @all;
    ok t_cmp(scalar(grep { /$log/ } @lines), 1, "$method $path: one error-log line");
    my @unfit = $path =~ $CLIENTS_OWN ? grep { /:(?:error|crit|alert|emerg)\]|failed in flight/ } @all
                                       : grep { /failed in flight/ } @all;
    ok t_cmp(join("\n", @unfit), '', $path =~ $CLIENTS_OWN
             ? "$method $path: no line at error level, none saying 'failed in flight'"
             : "$method $path: no line saying 'failed in flight'");
}

# A backend that is down: one repeat of the refused connection, then 503;
# a connection never made is not a read that failed in flight.
my $mark = error_log_mark();
get_json('/errors/unreachable/');
my @lines = error_log_since($mark, wait => 2, until => qr/CP0101/);
ok t_cmp(scalar(grep { /CP0115: the backend could not be reached \(mod_proxy answered 503: no connection was made\); trying once more/ } @lines), 1,
         'a refused connection is tried once more, not more, and logged as such');
ok t_cmp(scalar(grep { /failed in flight/ } @lines), 0, 'and not as a read that failed in flight');

# HTML: the location's CouchPageText error word in place of the fragment,
# nothing of the backend's; a browser's Accept on a negotiated location
# gets the English word.
my %HTML = (
    '/errors/html/missing-view/' => [502, "La liste n'a pas pu \x{c3}\x{aa}tre affich\x{c3}\x{a9}e."],
    '/errors/html/missing-view/?limit=0' => [400, "La liste n'a pas pu \x{c3}\x{aa}tre affich\x{c3}\x{a9}e."],
    '/errors/missing-view/' => [502, 'The list could not be shown.'],
);
for my $path (sort keys %HTML) {
    my ($status, $word) = @{ $HTML{$path} };
    (my $escaped = $word) =~ s/'/&#39;/g;
    my $res = Apache::TestRequest::GET($path, Accept => 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.8');
    ok t_cmp($res->code . ' ' . $res->header('Content-Type'), "$status text/html; charset=utf-8",
             "$path for a browser: $status, HTML");
    ok t_cmp($res->content, qq{<div class="couchpage couchpage-error">\n<p class="couchpage-error-reason">$escaped</p>\n</div>\n},
             "$path for a browser: the error word, and nothing else");
}

my $res = Apache::TestRequest::POST('/bands/', content => 'x=1');
ok t_cmp($res->header('Allow'), 'GET, HEAD', '405 says what is allowed');

# after all of that, httpd still serves
my ($status) = get_json('/bands/');
ok t_cmp($status, 200, 'httpd still serves pages');
