# SPDX-License-Identifier: Apache-2.0
# Every error of the skeleton: a JSON body {"error", "reason"}, the right
# status, one line in the error log, and httpd goes on serving.
use strict;
use warnings FATAL => 'all';

use Apache::Test qw(plan ok);
use Apache::TestUtil qw(t_cmp);
use Apache::TestRequest ();
use CouchPageTest qw(get_json decode_json_or_undef error_log_mark error_log_since);

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
    ['/errors/missing-view/', 'GET', 502, 'backend_error', qr/CouchDB answered 404 not_found/, qr/CP0101: the backend queries failed with 502: CouchDB answered 404/],
    ['/errors/unreachable/', 'GET', 503, 'backend_unavailable', qr/unavailable/, qr/CP0101: the backend queries failed with 503/],
    ['/errors/no-view/', 'GET', 500, 'internal_error', qr/misconfigured/, qr/CP0104: configuration error for \/errors\/no-view\/: no CouchPageView/],
    # a range expression's result that is not JSON is the operator's error, logged at error level
    ['/errors/range-not-json/p1/', 'GET', 500, 'internal_error', qr/misconfigured/,
     qr/\[couchpage:error\].*CP0104: configuration error for \/errors\/range-not-json\/p1\/: CouchPageRange LOW yields '\[p1, 0\]', which is not JSON .*%\{json:\.\.\.\}/],
    ['/errors/ids-merged/numbers/', 'GET', 500, 'internal_error', qr/misconfigured/,
     qr/\[couchpage:error\].*CP0104: .*CouchPageRange: HIGH '5' is not a document id/],
);

plan tests => 5 * @CASES + 3;

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
    my @lines = grep { /\[couchpage:/ } error_log_since($mark, wait => 2, until => $log);
    ok t_cmp(scalar(grep { /$log/ } @lines), 1, "$method $path: one error-log line");
}

# A backend that is down: one repeat of the refused connection, then 503.
my $mark = error_log_mark();
get_json('/errors/unreachable/');
my @lines = error_log_since($mark, wait => 2, until => qr/CP0101/);
ok t_cmp(scalar(grep { /CP0106: the backend read failed in flight/ } @lines), 1,
         'a refused connection is repeated once, not more');

my $res = Apache::TestRequest::POST('/bands/', content => 'x=1');
ok t_cmp($res->header('Allow'), 'GET, HEAD', '405 says what is allowed');

# after all of that, httpd still serves
my ($status) = get_json('/bands/');
ok t_cmp($status, 200, 'httpd still serves pages');
