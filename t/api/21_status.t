# SPDX-License-Identifier: Apache-2.0
# The CouchPage section of mod_status (/server-status and ?auto): pages
# served, backend requests and time, rows, errors by status, summed across
# every httpd process in httpd's shared memory (mod_slotmem_shm). An httpd
# of the test's own whose processes serve two connections each, so that
# the requests are spread over many processes, some of them gone by the
# time the counters are read; the counters are checked exactly against the
# requests made and the access log's notes. Then a graceful restart, which
# keeps the sums, and an httpd without mod_slotmem_shm, where the section
# is off and pages are served as before.
use strict;
use warnings;

use Apache::Test qw(plan ok);
use Apache::TestUtil qw(t_cmp);
use File::Temp qw(tempdir);
use HTTP::Tiny ();
use List::Util qw(sum0);
use Time::HiRes qw(time sleep);
use CouchPageTest qw(decode_json_or_undef with_args double_url double_load double_fault
                     double_log start_own_httpd);

plan tests => 27;

double_load('status', [ map { { _id => sprintf('doc%02d', $_), n => $_ } } 0 .. 9 ],
            { v => { map => 'function (doc) { emit(doc.n, null); }' } });

my $double = double_url();
my ($user, $password) = ($ENV{COUCHPAGE_DOUBLE_USER} // 'admin',
                         $ENV{COUCHPAGE_DOUBLE_PASSWORD} // 'double-admin-secret');
my $LOCATIONS = <<"CONF";
KeepAlive Off
LogFormat "%P %>s %U %{couchpage-backend-requests}n %{couchpage-backend-time}n %{couchpage-rows}n" couchpage_status
<Location "/server-status">
    SetHandler server-status
</Location>
<Proxy "$double/">
    ProxySet keepalive=On timeout=2
</Proxy>
<Location "/st/">
    SetHandler couchpage
    CouchPageView "$double/status/_design/d/_view/v"
    CouchPageCredentials "$user" "$password"
    CouchPageSize 3
    CouchPageFormat json
</Location>
# Nothing listens on port 1: 503.
<Location "/st-down/">
    SetHandler couchpage
    CouchPageView "http://127.0.0.1:1/status/_design/d/_view/v"
</Location>
CONF

my $root = tempdir('couchpage-status-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my ($port, $pid) = start_own_httpd($root, [qw(status slotmem_shm proxy proxy_http)], <<"CONF");
StartServers 2
ServerLimit 16
ThreadsPerChild 2
MinSpareThreads 2
MaxSpareThreads 8
MaxRequestWorkers 32
MaxConnectionsPerChild 2
CustomLog "$root/access_log" couchpage_status
$LOCATIONS
CONF

# A new connection for every request (KeepAlive Off, too).
sub get {
    my ($port, $path) = @_;
    return HTTP::Tiny->new(timeout => 30, keep_alive => 0)->get("http://127.0.0.1:$port$path");
}

# /server-status?auto as { name => value }.
sub status_auto {
    my ($port) = @_;
    my $res = get($port, '/server-status?auto');
    die "server-status?auto: $res->{status}\n" unless $res->{status} == 200;
    return { map { /^([^:]+):\s*(.*)$/ ? ($1 => $2) : () } split /\n/, $res->{content} };
}

# The access log's lines of the module's requests, once there are COUNT
# (httpd writes a line after its response): 10 s at most.
sub page_lines {
    my ($log, $count) = @_;
    my $until = time + 10;
    while (1) {
        my @lines;
        if (open my $fh, '<', $log) {
            @lines = grep { $_->{requests} ne '-' }
                     map { my @f = split ' '; { pid => $f[0], status => $f[1], path => $f[2],
                                                requests => $f[3], time => $f[4], rows => $f[5] } } <$fh>;
        }
        return @lines if @lines >= $count or time > $until;
        sleep 0.1;
    }
}

my $before = status_auto($port);
ok t_cmp($before->{CouchPagePages}, qr/^\d+$/, 'server-status?auto has the CouchPage lines');
double_log(clear => 1);

# Six pages: four first pages, two later ones.
my @codes;
for (1 .. 4) {
    my $res = get($port, '/st/');
    push @codes, $res->{status};
    my $next = (decode_json_or_undef($res->{content}) // {})->{next};
    push @codes, get($port, with_args('/st/', start => $next))->{status} if $_ <= 2;
}
ok t_cmp(join(',', @codes), '200,200,200,200,200,200', 'six pages served');
# Two bad tokens: 400.
@codes = map { get($port, '/st/?start=not-a-token')->{status} } 1 .. 2;
ok t_cmp(join(',', @codes), '400,400', 'two bad tokens: 400');
# CouchDB answers 500, twice: 502.
double_fault(mode => 'status', status => 500, path => '/status/', count => 2);
@codes = map { get($port, '/st/')->{status} } 1 .. 2;
double_fault(mode => 'none');
ok t_cmp(join(',', @codes), '502,502', 'two backend errors: 502');
# A backend that is down, twice: 503.
@codes = map { get($port, '/st-down/')->{status} } 1 .. 2;
ok t_cmp(join(',', @codes), '503,503', 'two backends down: 503');
# A backend slower than the worker's timeout: 504.
double_fault(mode => 'slow', ms => 4000, path => '/status/', count => 1);
@codes = map { get($port, '/st/')->{status} } 1;
double_fault(mode => 'none');
ok t_cmp(join(',', @codes), '504', 'a slow backend: 504');

my $after = status_auto($port);
my %diff = map { $_ => ($after->{$_} // 0) - ($before->{$_} // 0) }
           grep { /^CouchPage/ && $_ ne 'CouchPageVersion' } keys %$after;
ok t_cmp($diff{CouchPagePages}, 6, 'CouchPagePages counted the six pages');
ok t_cmp($diff{CouchPageErrors400}, 2, 'CouchPageErrors400: 2');
ok t_cmp($diff{CouchPageErrors502}, 2, 'CouchPageErrors502: 2');
ok t_cmp($diff{CouchPageErrors503}, 2, 'CouchPageErrors503: 2');
ok t_cmp($diff{CouchPageErrors504}, 1, 'CouchPageErrors504: 1');

# The counters are added to before the response is sent; the notes are
# logged after it.
my @lines = page_lines("$root/access_log", 13);
ok t_cmp(scalar @lines, 13, 'the access log has the 13 requests');
ok t_cmp($diff{CouchPageBackendRequests}, sum0(map { $_->{requests} } @lines),
         'CouchPageBackendRequests: the sum of the requests\' notes');
ok t_cmp($diff{CouchPageBackendTimeMicroseconds}, sum0(map { $_->{time} } @lines),
         'CouchPageBackendTimeMicroseconds: the sum of the requests\' notes');
ok t_cmp($diff{CouchPageRows}, sum0(map { $_->{rows} } @lines),
         'CouchPageRows: the sum of the requests\' notes');
my @to_double = grep { ($_->{path} // '') =~ m{^/status/} } double_log();
ok t_cmp(sum0(map { $_->{requests} } grep { $_->{path} =~ m{^/st/} } @lines), scalar @to_double,
         'the notes of the double\'s pages count the requests the double received');
my %pids = map { $_->{pid} => 1 } @lines;
ok t_cmp(keys(%pids) >= 2 ? 'several' : 'one', 'several',
         'the requests were served by ' . keys(%pids) . ' processes');
ok t_cmp($after->{CouchPageBackendMeanMicroseconds},
         $after->{CouchPageBackendRequests}
             ? int($after->{CouchPageBackendTimeMicroseconds} / $after->{CouchPageBackendRequests}) : 0,
         'CouchPageBackendMeanMicroseconds: the time a backend request');

my $html = get($port, '/server-status')->{content} // '';
ok t_cmp($html, qr{<h2>CouchPage</h2>}, 'the HTML report has the CouchPage section');
ok t_cmp($html, qr{Pages served: \Q$after->{CouchPagePages}\E<}, 'with the pages served');

# A graceful restart (post_config again, new processes): the sums go on.
my $generation = $after->{ParentServerConfigGeneration} // 0;
kill 'USR1', $pid;
my ($restarted, $until) = ($after, time + 30);
while (($restarted->{ParentServerConfigGeneration} // 0) <= $generation and time < $until) {
    sleep 0.2;
    $restarted = eval { status_auto($port) } // $restarted;
}
ok t_cmp($restarted->{ParentServerConfigGeneration}, $generation + 1, 'httpd restarted gracefully');
ok t_cmp($restarted->{CouchPagePages}, $after->{CouchPagePages}, 'the restart kept the sums');
get($port, '/st/');
ok t_cmp(status_auto($port)->{CouchPagePages}, $after->{CouchPagePages} + 1,
         'and counts on after it');

# Without mod_slotmem_shm: the module loads, says so, and serves; the
# section is off.
my $root_off = tempdir('couchpage-status-off-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my ($port_off) = start_own_httpd($root_off, [qw(status proxy proxy_http)], $LOCATIONS);
ok t_cmp(get($port_off, '/st/')->{status}, 200, 'without mod_slotmem_shm: pages are served');
my $auto = get($port_off, '/server-status?auto')->{content} // '';
ok t_cmp(join(',', map { /^(CouchPage\w+):/ } split /\n/, $auto), 'CouchPageVersion',
         'no CouchPage lines in ?auto but the version');
ok t_cmp(get($port_off, '/server-status')->{content} // '', qr{<h2>CouchPage</h2>\s*<p>mod_couchpage [^<]*</p>\s*<p>Off},
         'the HTML report says the section is off');
open my $fh, '<', "$root_off/error_log" or die "$root_off/error_log: $!\n";
ok t_cmp(scalar(grep { /\[couchpage:info\].*CP0110: mod_slotmem_shm is not loaded/ } <$fh>), 1,
         'the error log says why, once, at info');
