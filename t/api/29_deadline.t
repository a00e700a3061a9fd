# SPDX-License-Identifier: Apache-2.0
# Bounds on what a backend may make of a page (issue 37, points 2 and 6),
# through the view double's fault switches:
# - an answer with more rows than its query's limit is refused on a _find
#   location as on a view location (t/api/06_faults.t): 502 and one CP0181
#   line naming the rows and the limit; one at its limit is served; and on
#   a _find location numbered from its index's view, by keyset and with
#   page links;
# - a page's backend reads together end by CouchPageBackendDeadline: a
#   backend that drips its answer a byte at a time, each within mod_proxy's
#   timeout, or that is silent for less than that timeout but longer than
#   the deadline, gives 504 by the deadline, with one error line (CP0183)
#   and no repeat; a page's later read is not sent once the deadline has
#   passed; and the directive is checked by httpd -t;
# - what CouchDB's <Proxy> section governs for the module's backend
#   requests (docs/operations.md): its worker's settings (ProxySet
#   timeout=), not its access control (Require all denied).
use strict;
use warnings;

use Apache::Test qw(plan ok);
use Apache::TestUtil qw(t_cmp);
use Time::HiRes qw(time);
use File::Temp qw(tempdir);
use HTTP::Tiny ();
use CouchPageTest qw(get_json double_load double_fault double_log error_log_mark error_log_since
                     httpd_config_test start_own_httpd double_url decode_json_or_undef);

plan tests => 5 + 2 * 4 + 7 + 5 + 4 + 3 + 4;

double_load('deadline', [ map { { _id => sprintf('doc%03d', $_), n => $_ } } 0 .. 99 ],
            { v => { map => 'function (doc) { emit(doc.n, null); }' } });
# a JSON index of n, as CouchDB makes one (POST /deadline/_index), whose
# view the double serves: _find locations numbered from it
my ($made) = CouchPageTest::double_request(PUT => '/deadline/_design/by-n', {
    language => 'query',
    views => { 'by-n' => { map => 'function (doc) { if (doc.n !== undefined) emit([doc.n], null); }',
                           reduce => '_count', options => { def => { fields => ['n'] } } } } });
die "the index by-n in the double: $made\n" unless $made == 201;

# The error-level lines (and worse) among lines of the error log.
sub error_lines { grep { /\[[a-z_]+:(?:error|crit|alert|emerg)\]/ } @_ }

# --- an overfull _find answer -------------------------------------------------
# The double has no _find: a 'status' fault with a body answers it. The
# location's page size is 20, so its query asks for 21 documents.
sub find_answer {
    my ($n) = @_;
    return { docs => [ map { { _id => sprintf('doc%03d', $_), n => $_ } } 0 .. $n - 1 ],
             bookmark => 'nil' };
}
{
    double_fault(mode => 'status', status => 200, body => find_answer(500), path => '/deadline/_find', count => 1);
    my $mark = error_log_mark();
    my ($code, $body) = get_json('/deadline/find/');
    double_fault(mode => 'none');
    ok t_cmp("$code " . ($body && $body->{error} // ''), '502 backend_error',
             'a _find answer of 500 documents to a limit of 21: 502 backend_error');
    my @lines = error_log_since($mark, wait => 3, until => qr/CP0181/);
    my @over = grep { /CP0181/ } @lines;
    ok t_cmp(scalar(@over) . ' ' . scalar(error_lines(@lines)), '1 1', 'one CP0181 line, and no other error line');
    ok t_cmp($over[0] // '', qr{for /deadline/find/ with 500 rows, more than its limit of 21: refused \(CouchPageView \S+/deadline/_find, <Location "/deadline/find/"> at },
             'the line names the location, the rows, the limit and the view');

    double_fault(mode => 'status', status => 200, body => find_answer(21), path => '/deadline/_find', count => 1);
    ($code, $body) = get_json('/deadline/find/');
    double_fault(mode => 'none');
    ok t_cmp("$code " . scalar(@{ $body->{items} || [] }), '200 20', 'an answer at its limit (21): a page of 20');
    ok t_cmp($body->{next} ? 'a next token' : 'none', 'a next token', '... and the 21st makes a next page');
}

# The same check on a _find location numbered from its index's view: its
# keyset page (one view query) and its page with links (a view location's
# page of that view), against a backend that ignores the view's limit.
for my $case (['by keyset', '/deadline/find-numbered/', 5],
              ['with page links', '/deadline/find-numbered-links/', undef]) {
    my ($what, $path, $limit) = @$case;
    my ($code, $body) = get_json($path);
    ok t_cmp("$code " . join(',', map { $_->{n} // '?' } @{ $body->{items} || [] }), '200 0,1,2,3',
             "a _find location numbered from its index's view, $what: its first page");
    double_fault(mode => 'ignore_limit', path => '/deadline/_design/by-n/_view/by-n', count => 4);
    my $mark = error_log_mark();
    ($code, $body) = get_json($path);
    double_fault(mode => 'none');
    ok t_cmp("$code " . ($body && $body->{error} // ''), '502 backend_error', "... over its limit, $what: 502");
    my @lines = error_log_since($mark, wait => 3, until => qr/CP0181/);
    my @over = grep { /CP0181/ } @lines;
    ok t_cmp(scalar(@over) . ' ' . scalar(error_lines(@lines)), '1 1', "... $what: one CP0181 line, and no other error line");
    my $limited = defined $limit ? $limit : '\d+';
    ok t_cmp($over[0] // '', qr{for \Q$path\E with 100 rows, more than its limit of $limited: refused \(CouchPageView \S+/deadline/_design/by-n/_view/by-n, <Location "\Q$path\E"> at },
             "... $what: the line names the location, the rows, the limit and the index's view");
}

# --- a backend that drips its answer --------------------------------------------
# A byte every 300 ms: each read is well within mod_proxy's timeout (2 s),
# and the whole answer would take minutes. CouchPageBackendDeadline 2.
sub view_queries { scalar grep { ($_->{path} // '') =~ m{^/deadline/_design/d/_view/v} } double_log() }
{
    double_log(clear => 1);
    double_fault(mode => 'drip', ms => 300, path => '/deadline/', count => 4);
    my $mark = error_log_mark();
    my $t0 = time;
    my ($code, $body) = get_json('/deadline/view/');
    my $took = time - $t0;
    double_fault(mode => 'none');
    ok t_cmp("$code " . ($body && $body->{error} // ''), '504 backend_timeout', 'a dripping backend: 504 backend_timeout');
    ok t_cmp($took >= 1.9 && $took < 3.5 ? 'by the deadline' : sprintf('after %.2f s', $took), 'by the deadline',
             'answered by the deadline of 2 s, not when the drip ends');
    ok t_cmp($body && $body->{reason} // '', 'the backend did not answer in time', 'a generic reason for the client');
    my @lines = error_log_since($mark, wait => 3, until => qr/CP0183/);
    my @late = grep { /CP0183/ } @lines;
    ok t_cmp(scalar(@late) . ' ' . scalar(error_lines(@lines)), '1 1', 'one CP0183 line, and no other error line');
    ok t_cmp($late[0] // '', qr{the backend reads for /deadline/view/ were stopped: the page's deadline of 2 s passed, 1 backend request sent \(CouchPageBackendDeadline 2 s; CouchPageView \S+/deadline/_design/d/_view/v, <Location "/deadline/view/"> at },
             'the line names the location, the deadline and the view');
    ok t_cmp(view_queries(), 1, 'the read stopped by the deadline is not repeated');
    ($code, $body) = get_json('/deadline/view/');
    ok t_cmp("$code " . join(',', map { $_->{key} } @{ $body->{items} || [] }), '200 0,1,2', 'the next request is served');
}

# --- a silent backend, for less than mod_proxy's timeout ------------------------
# 1.9 s of silence is within the worker's timeout of 2 s; the deadline of
# /deadline/view-1s/ is 1 s: the read waits no longer than that.
{
    double_log(clear => 1);
    double_fault(mode => 'slow', ms => 1900, path => '/deadline/', count => 1);
    my $mark = error_log_mark();
    my $t0 = time;
    my ($code, $body) = get_json('/deadline/view-1s/');
    my $took = time - $t0;
    ok t_cmp("$code " . ($body && $body->{error} // ''), '504 backend_timeout', 'a backend silent for 1.9 s, deadline 1 s: 504');
    ok t_cmp($took >= 0.9 && $took < 1.8 ? 'by the deadline' : sprintf('after %.2f s', $took), 'by the deadline',
             'answered by the deadline of 1 s, before mod_proxy\'s timeout');
    my @lines = error_log_since($mark, wait => 3, until => qr/CP0183/);
    ok t_cmp(scalar(grep { /CP0183: .*\(CouchPageBackendDeadline 1 s;/ } @lines) . ' ' . scalar(error_lines(@lines)), '1 1',
             'one CP0183 line, and no other error line');
    ok t_cmp(view_queries(), 1, 'not repeated');
    sleep 1;   # the double's late answer goes to a closed connection
    double_fault(mode => 'none');
    ($code) = get_json('/deadline/view-1s/');
    ok t_cmp($code, 200, 'the next request is served');
}

# --- a page's later read is not sent after the deadline -------------------------
# /deadline/find-index/ first reads its index's design document (which the
# fault keeps silent past the deadline of 1 s), then would ask _find: that
# read is not sent.
{
    double_log(clear => 1);
    double_fault(mode => 'slow', ms => 1900, path => '/deadline/_design/by-n', count => 1);
    my $mark = error_log_mark();
    my ($code, $body) = get_json('/deadline/find-index/');
    my @seen = map { ($_->{method} // '') . ' ' . ($_->{path} // '') } double_log();
    ok t_cmp("$code " . ($body && $body->{error} // ''), '504 backend_timeout', 'its first read past the deadline: 504');
    ok t_cmp(scalar(grep { m{^GET /deadline/_design/by-n$} } @seen), 1, 'the design document was asked for');
    ok t_cmp(join(', ', grep { m{_find} } @seen), '', 'the _find query was not sent');
    my @lines = error_log_since($mark, wait => 3, until => qr/CP0183/);
    ok t_cmp(scalar(grep { m{CP0183: the backend reads for /deadline/find-index/ were stopped: the page's deadline of 1 s passed, 1 backend request sent} } @lines)
             . ' ' . scalar(error_lines(@lines)), '1 1', 'one CP0183 line, and no other error line');
    sleep 1;
    double_fault(mode => 'none');
}

# --- httpd -t ---------------------------------------------------------------------
for my $case (['0', qr{CouchPageBackendDeadline: '0' is not a whole number from 1 to 3600}],
              ['2.5', qr{CouchPageBackendDeadline: '2.5' is not a whole number from 1 to 3600}],
              ['3600', undef]) {
    my ($value, $expect) = @$case;
    my ($status, $out) = httpd_config_test("CouchPageView http://127.0.0.1:5984/db/_design/d/_view/v\nCouchPageBackendDeadline $value");
    ok t_cmp($expect ? ($status != 0 && $out =~ $expect ? 'refused' : "status $status: $out")
                     : ($status == 0 && $out =~ /Syntax OK/ ? 'accepted' : "status $status: $out"),
             $expect ? 'refused' : 'accepted', "httpd -t: CouchPageBackendDeadline $value");
}

# --- what a <Proxy> section governs (docs/operations.md) ------------------------
# An httpd of its own whose <Proxy> for the double sets the worker's
# timeout to 1 s and denies every request: a ProxyPass through it is
# refused, the module's page is not (its backend requests take the page's
# configuration, not the <Proxy> section's), and the worker's timeout
# bounds the module's read.
{
    my $double = double_url();
    my ($user, $password) = ($ENV{COUCHPAGE_DOUBLE_USER} // 'admin', $ENV{COUCHPAGE_DOUBLE_PASSWORD} // 'double-admin-secret');
    my $root = tempdir(CLEANUP => 1);
    my ($port) = start_own_httpd($root, [qw(proxy proxy_http)], <<"CONF");
<Proxy "$double/">
    ProxySet keepalive=On timeout=1
    Require all denied
</Proxy>
ProxyPass "/direct/" "$double/"
<Location "/page/">
    SetHandler couchpage
    CouchPageView "$double/deadline/_design/d/_view/v"
    CouchPageCredentials "$user" "$password"
    CouchPageSize 3
    CouchPageFormat json
</Location>
CONF
    my $http = HTTP::Tiny->new(timeout => 30);
    ok t_cmp($http->get("http://127.0.0.1:$port/direct/deadline")->{status}, 403,
             '<Proxy> with Require all denied: a ProxyPass through it is refused, 403');
    my $res = $http->get("http://127.0.0.1:$port/page/");
    my $page = decode_json_or_undef($res->{content});
    ok t_cmp("$res->{status} " . join(',', map { $_->{key} } @{ ref $page eq 'HASH' && $page->{items} || [] }), '200 0,1,2',
             '... the module\'s page is served: its backend requests are not under the <Proxy> section\'s Require');
    double_fault(mode => 'slow', ms => 1600, path => '/deadline/', count => 1);
    my $t0 = time;
    $res = $http->get("http://127.0.0.1:$port/page/");
    my $took = time - $t0;
    sleep 1;
    double_fault(mode => 'none');
    ok t_cmp("$res->{status} " . ($took >= 0.9 && $took < 3 ? 'after about 1 s' : sprintf('after %.2f s', $took)),
             '504 after about 1 s', '... and its worker\'s ProxySet timeout=1 bounds the module\'s read: 504');
    my @lines = do { open my $fh, '<', "$root/error_log" or die "$root/error_log: $!"; grep { /CP0101|CP0183/ } <$fh> };
    ok t_cmp(join('', @lines), qr{^[^\n]*CP0101: the backend queries for /page/ failed with 504: the backend did not answer in time[^\n]*\n$},
             '... logged as mod_proxy\'s timeout (CP0101), not the deadline');
}
