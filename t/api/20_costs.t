# SPDX-License-Identifier: Apache-2.0
# What a page cost, in the access log: the module's request notes
# (couchpage-backend-requests, -time, couchpage-rows, couchpage-served-by),
# printed by a CustomLog of t/conf/extra.conf.in, checked against the CouchDB
# view double's request log: the requests it received, and the rows it
# returned (asked again, as its log shows them). A first page, a later one,
# a client error, a backend error, a page that includes two fragments, and
# a backend without the multi-query endpoint (an httpd of the test's own).
use strict;
use warnings;

use Apache::Test qw(plan ok);
use Apache::TestUtil qw(t_cmp);
use Apache::TestRequest ();
use File::Spec::Functions qw(catfile);
use File::Temp qw(tempdir);
use HTTP::Tiny ();
use Time::HiRes qw(time sleep);
use CouchPageTest qw(decode_json_or_undef get_json with_args double_url double_load
                     double_fault double_log double_request start_own_httpd);

plan tests => 5 * 8 + 2 + 1 + 2 + 6;

double_load('costs', [ map { { _id => sprintf('doc%02d', $_), n => $_ } } 0 .. 9 ],
            { v => { map => 'function (doc) { emit(doc.n, null); }' } });

# The line of the request named ID in a log of the couchpage_costs format:
# { status, requests, time, rows, served_by }. httpd writes it after the
# response: waits for it, 10 s at most.
sub cost_line {
    my ($log, $id) = @_;
    my $until = time + 10;
    while (1) {
        if (open my $fh, '<', $log) {
            for (<$fh>) {
                my @f = split ' ';
                next unless @f == 6 and $f[0] eq $id;
                return { status => $f[1], requests => $f[2], time => $f[3], rows => $f[4],
                         served_by => $f[5] };
            }
        }
        return {} if time > $until;
        sleep 0.1;
    }
}

# The double's log entries of the costs database, since it was cleared.
sub costs_requests { grep { ($_->{path} // '') =~ m{^/costs/} } double_log() }

# What the double returned to those requests: a fault it injected, or the
# answer it gives when asked again (the data has not changed): (rows in
# every result, what answered: batch, get, both, or -).
sub returned {
    my ($rows, $batch, $get) = (0, 0, 0);
    for my $entry (@_) {
        next if $entry->{fault};
        my $post = $entry->{method} eq 'POST';
        my ($status, $body) = double_request($entry->{method}, $entry->{url},
                                             $post ? decode_json_or_undef($entry->{body}) : undef);
        next unless $status == 200;
        my @results = $post ? @{ $body->{results} || [] } : ($body);
        $rows += @{ $_->{rows} || [] } for @results;
        $post ? $batch++ : $get++;
    }
    return ($rows, $batch && $get ? 'batch+get' : $batch ? 'batch' : $get ? 'get' : '-');
}

# Checks the logged notes of request ID against the double's log: 5 tests.
sub check_costs {
    my ($log, $id, $status, @requests) = @_;
    my $line = cost_line($log, $id);
    double_log(clear => 1);
    my ($rows, $served_by) = returned(@requests);
    double_log(clear => 1);
    ok t_cmp($line->{status}, $status, "$id: logged with status $status");
    ok t_cmp($line->{requests}, scalar @requests,
             "$id: the backend requests the double received (" . scalar(@requests) . ")");
    ok t_cmp($line->{rows}, $rows, "$id: the rows the double returned ($rows)");
    ok t_cmp($line->{served_by}, $served_by, "$id: served by $served_by");
    ok t_cmp($line->{time}, @requests ? qr/^[1-9][0-9]*$/ : '0',
             "$id: backend time " . ($line->{time} // '?') . ' us');
    return $line;
}

my $LOG = catfile(Apache::Test::vars('t_logs'), 'costs_log');

# A first page over the whole view: its one query, one GET (no probe: the
# view's total_rows is the location's; the Last link is found when followed).
double_log(clear => 1);
my ($status, $page) = get_json('/costs/', 'X-Cost-Test' => 'first');
ok t_cmp($status, 200, 'the first page is served');
my @requests = costs_requests();
my $first = check_costs($LOG, 'first', 200, @requests);
ok t_cmp($first->{served_by}, 'get', 'the first page: by one GET');

# A later page: its queries, at once.
double_log(clear => 1);
($status) = get_json(with_args('/costs/', start => $page->{next}), 'X-Cost-Test' => 'later');
ok t_cmp($status, 200, 'the later page is served');
check_costs($LOG, 'later', 200, costs_requests());

# A bad token: the client's error, no backend request.
double_log(clear => 1);
($status) = get_json('/costs/?start=not-a-token', 'X-Cost-Test' => 'bad-token');
check_costs($LOG, 'bad-token', 400, costs_requests());

# CouchDB answers 500: the page is a 502, and its request is counted.
double_log(clear => 1);
double_fault(mode => 'status', status => 500, path => '/costs/', count => 1);
($status) = get_json('/costs/', 'X-Cost-Test' => 'backend-error');
double_fault(mode => 'none');
check_costs($LOG, 'backend-error', 502, costs_requests());

# Two pages included by mod_include: the including page's notes add up both
# (the fragments are subrequests, which the access log never sees).
double_log(clear => 1);
my $res = Apache::TestRequest::GET('/costs.shtml', 'X-Cost-Test' => 'included');
ok t_cmp($res->code, 200, 'the including page is served');
@requests = costs_requests();
ok t_cmp(join(' ', map { $_->{method} } @requests), 'GET GET', 'each fragment (a first page) asked its one query');
check_costs($LOG, 'included', 200, @requests);

# A backend without the multi-query endpoint (CouchDB before 2.2,
# pouchdb-server): the double refuses POST .../queries with 404. An httpd of
# the test's own, with one process, asks a first page's one query with a
# GET, learns it from the first page of several queries (which then asks
# each with a GET) and asks the next page with GETs only.
my $root = tempdir('couchpage-costs-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $double = double_url();
my ($user, $password) = ($ENV{COUCHPAGE_DOUBLE_USER} // 'admin',
                         $ENV{COUCHPAGE_DOUBLE_PASSWORD} // 'double-admin-secret');
my ($port) = start_own_httpd($root, [qw(proxy proxy_http)], <<"CONF");
StartServers 1
ServerLimit 1
ThreadsPerChild 4
MinSpareThreads 1
MaxSpareThreads 4
MaxRequestWorkers 4
LogFormat "%{X-Cost-Test}i %>s %{couchpage-backend-requests}n %{couchpage-backend-time}n %{couchpage-rows}n %{couchpage-served-by}n" couchpage_costs
CustomLog "$root/costs_log" couchpage_costs
<Proxy "$double/">
    ProxySet keepalive=On timeout=5
</Proxy>
<Location "/costs/">
    SetHandler couchpage
    CouchPageView "$double/costs/_design/d/_view/v"
    CouchPageCredentials "$user" "$password"
    CouchPageSize 3
    CouchPageFormat json
</Location>
CONF
my $http = HTTP::Tiny->new(timeout => 30);
double_log(clear => 1);
double_fault(mode => 'status', status => 404, path => '/costs/_design/d/_view/v/queries');
my $got = $http->get("http://127.0.0.1:$port/costs/", { headers => { 'X-Cost-Test' => 'fallback-first' } });
@requests = costs_requests();
ok t_cmp($got->{status}, 200, 'without the multi-query endpoint: the first page is served');
ok t_cmp(join(' ', map { $_->{method} } @requests), 'GET', 'the first page: its one query, a GET');
my $next = (decode_json_or_undef($got->{content}) // {})->{next} // '';
double_fault(mode => 'none');
check_costs("$root/costs_log", 'fallback-first', 200, @requests);

double_fault(mode => 'status', status => 404, path => '/costs/_design/d/_view/v/queries');
$got = $http->get("http://127.0.0.1:$port" . with_args('/costs/', start => $next),
                  { headers => { 'X-Cost-Test' => 'fallback-later' } });
@requests = costs_requests();
double_fault(mode => 'none');
ok t_cmp($got->{status}, 200, 'without the multi-query endpoint: a later page is served');
ok t_cmp(join(' ', map { $_->{method} } @requests), 'POST GET GET',
         'a later page: the refused POST, then one GET per query (forward, backward)');
$next = (decode_json_or_undef($got->{content}) // {})->{next} // '';
check_costs("$root/costs_log", 'fallback-later', 200, @requests);

double_fault(mode => 'status', status => 404, path => '/costs/_design/d/_view/v/queries');
$got = $http->get("http://127.0.0.1:$port" . with_args('/costs/', start => $next),
                  { headers => { 'X-Cost-Test' => 'fallback-again' } });
@requests = costs_requests();
double_fault(mode => 'none');
ok t_cmp($got->{status}, 200, 'without the multi-query endpoint: the next page is served');
ok t_cmp(join(' ', map { $_->{method} } @requests), 'GET GET',
         'the next page: GETs only, the process remembers');
check_costs("$root/costs_log", 'fallback-again', 200, @requests);
