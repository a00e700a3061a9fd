# SPDX-License-Identifier: Apache-2.0
# A real CouchDB's faults, through httpd (the real tier only: REAL_ONLY in
# scripts/test). The double's fault switches (06_faults.t) say what a fault
# looks like as the double fakes it; here CouchDB 3.4.3 itself makes them:
#   - no credentials and a wrong password: CouchDB's 401, a 502 for the
#     client, the 401 in the error log (the test httpd's /faults-anonymous/
#     and /faults-wrong-password/, on the real CouchDB in this tier);
#   - a node of its own, started for this file (the start script beside
#     COUCHDB_STOP, on a free port, in a scratch folder), which
#       * hangs (SIGSTOP on its beam process, the PID its start recorded)
#         for one request: 504 within the worker timeout (timeout=2), and
#         after SIGCONT the next request is served with the right rows;
#       * is stopped: a port where CouchDB was refuses connections: 503;
#       * is one of two balancer members (the other the tier's CouchDB, the
#         same documents): every page of every walk, with both up, while it
#         stops under 2 walking clients (only requests in flight may fail,
#         as in 11_failover.t) and with it stopped, has exactly the rows a
#         direct query to the live CouchDB gives.
# The node is always resumed (SIGCONT) and stopped, even if the test dies.
# 404 view and 404 database against a real CouchDB: 03_errors.t, which runs
# in the real tier as well.
use strict;
use warnings;

use Apache::Test qw(plan ok skip);
use Apache::TestUtil qw(t_cmp);
use Apache::TestRequest ();
use File::Basename qw(dirname);
use File::Path ();
use File::Spec::Functions qw(catfile);
use File::Temp qw(tempdir);
use HTTP::Tiny ();
use IO::Socket::INET ();
use MIME::Base64 ();
use JSON::PP ();
use POSIX ();
use Time::HiRes qw(time sleep);
use URI::Escape ();
use CouchPageTest qw(get_json decode_json_or_undef double_url double_load error_log_mark error_log_since
                     free_port start_own_httpd);

my $JSON = JSON::PP->new->utf8->canonical;
my %GENERIC = (502 => 'the backend could not serve this page', 503 => 'the backend is unavailable',
               504 => 'the backend did not answer in time');
my $USER = $ENV{COUCHPAGE_DOUBLE_USER} // 'admin';
my $PASSWORD = $ENV{COUCHPAGE_DOUBLE_PASSWORD} // '';
my $STOP = $ENV{COUCHDB_STOP} // '';
my $START = $STOP eq '' ? '' : catfile(dirname($STOP), 'start');

plan tests => 5 + 19;

# --- 401: CouchDB 3.x databases are admin-only -------------------------------
my @DOCS = map { { _id => sprintf('doc%02d', $_), n => $_ } } 0 .. 9;
my $VIEWS = { v => { map => 'function (doc) { emit(doc.n, null); }' } };
double_load('faults', \@DOCS, $VIEWS);

my $mark = error_log_mark();
my ($status, $page) = get_json('/faults-anonymous/');
ok t_cmp("$status " . ($page->{reason} // ''), "502 $GENERIC{502}", 'no credentials: 502, a generic reason');
ok t_cmp(join('', grep { /CP0101/ } error_log_since($mark, wait => 3, until => qr/CP0101/)),
         qr{CP0101: the backend queries for /faults-anonymous/ failed with 502: CouchDB answered 401 unauthorized},
         "no credentials: the log carries CouchDB's 401 and reason");
$mark = error_log_mark();
my $res = Apache::TestRequest::GET('/faults-wrong-password/');
$page = decode_json_or_undef($res->content) // {};
ok t_cmp($res->code . ' ' . ($page->{reason} // ''), "502 $GENERIC{502}", 'a wrong password: 502, a generic reason');
my @lines = error_log_since($mark, wait => 3, until => qr/CP0101/);
ok t_cmp(join('', grep { /CP0101/ } @lines), qr/CouchDB answered 401 unauthorized/,
         "a wrong password: the log carries CouchDB's 401");
ok t_cmp(index(join("\n", $res->as_string, @lines), 'not-the-password'), -1,
         'the password is neither in the answer nor in the log');

# --- a node of its own: hung, stopped, a balancer member ------------------------
unless (-x $START && -x $STOP) {
    skip('needs COUCHDB_STOP, the absolute path of ../shared/couchdb/stop with its start script beside it '
         . '(.ci/run exports it): this file starts, hangs and stops a CouchDB node of its own') for 1 .. 19;
    exit 0;
}

my $scratch = tempdir(CLEANUP => 1);
my $node_dir = catfile($scratch, 'couch');
my ($node_started, $paused);
# SIGCONT for a paused node, whatever ends the test
sub resume_node {
    kill 'CONT', $paused if $paused;
    $paused = undef;
}
END {
    local $?;    # the test's exit status, not the stop script's
    resume_node();
    system($STOP, $node_dir) if $node_started;
}
$SIG{INT} = $SIG{TERM} = sub { resume_node(); exit 1 };

my $node_port = free_port();
$node_started = 1;
{
    # Erlang keeps its cookie under HOME: a folder of this file's own
    local $ENV{HOME} = $scratch;
    local $ENV{COUCHDB_USER} = $USER;
    local $ENV{COUCHDB_PASSWORD} = $PASSWORD;
    # The start script can lose a race with the fresh node, which creates
    # its system databases at the same moment ("could not create _users
    # (HTTP 500)"): then, as .ci/run does, the node is stopped, its folder
    # emptied, and it is started again, up to 3 times.
    my $began = time;
    for my $try (1 .. 3) {
        last if system("'$START' '$node_dir' $node_port >'$scratch/start.log' 2>&1") == 0;
        my $why = do { local $/; open my $fh, '<', "$scratch/start.log"; <$fh> } // '';
        system($STOP, $node_dir);
        die "starting a CouchDB node on port $node_port failed 3 times:\n$why" if $try == 3;
        print "# starting a CouchDB node failed (try $try of 3): $why";
        File::Path::remove_tree($node_dir);
    }
    printf "# a CouchDB node of its own on port %d, started in %.1f s\n", $node_port, time - $began;
}
my $node = "http://127.0.0.1:$node_port";
my $live = double_url();    # the tier's CouchDB

my $couch = HTTP::Tiny->new(timeout => 30);
my %auth = (Authorization => 'Basic ' . MIME::Base64::encode_base64("$USER:$PASSWORD", ''),
            'Content-Type' => 'application/json');
sub couch {
    my ($base, $method, $path, $body) = @_;
    my $r = $couch->request($method, "$base$path",
                            { headers => \%auth, defined $body ? (content => $JSON->encode($body)) : () });
    die "$method $base$path: $r->{status} $r->{content}\n" unless $r->{success} || ($method eq 'DELETE' && $r->{status} == 404);
    return $r->{content} ? $JSON->decode($r->{content}) : undef;
}
couch($node, PUT => '/realfaults');
couch($node, PUT => '/realfaults/_design/d', { views => $VIEWS });
couch($node, POST => '/realfaults/_bulk_docs', { docs => \@DOCS });
double_load('realfaults', \@DOCS, $VIEWS);

# The view's rows as the tier's CouchDB answers them directly, in pages of 3.
my @rows = map { "$_->{key} $_->{id}" } @{ couch($live, GET => '/realfaults/_design/d/_view/v')->{rows} };
my @EXPECTED;
push @EXPECTED, join('|', splice @rows, 0, 3) while @rows;

my $root = catfile($scratch, 'httpd');
my ($port) = start_own_httpd($root, [qw(slotmem_shm proxy proxy_http proxy_balancer lbmethod_byrequests)], <<"CONF");
<Proxy "$node/">
    ProxySet keepalive=On timeout=2 connectiontimeout=2
</Proxy>
<Proxy "balancer://both">
    BalancerMember "$node" keepalive=On timeout=5 connectiontimeout=2 retry=30
    BalancerMember "$live" keepalive=On timeout=5 connectiontimeout=2 retry=30
</Proxy>
<Location "/node/">
    SetHandler couchpage
    CouchPageView "$node/realfaults/_design/d/_view/v"
    CouchPageCredentials "$USER" "$PASSWORD"
    CouchPageSize 3
</Location>
<Location "/both/">
    SetHandler couchpage
    CouchPageView "balancer://both/realfaults/_design/d/_view/v"
    CouchPageCredentials "$USER" "$PASSWORD"
    CouchPageSize 3
</Location>
CONF
my $ua = HTTP::Tiny->new(timeout => 30, keep_alive => 1);
sub page {
    my ($path) = @_;
    my $r = $ua->get("http://127.0.0.1:$port$path", { headers => { Accept => 'application/json' } });
    return ($r->{status}, decode_json_or_undef($r->{content}) // {});
}
sub rows_of { join '|', map { "$_->{key} $_->{id}" } @{ $_[0]{items} || [] } }
sub log_since {
    my ($from, $until) = @_;
    my $text = '';
    for (1 .. 30) {
        $text = do { local $/; open my $fh, '<', "$root/error_log" or die "$root/error_log: $!\n"; <$fh> };
        last if substr($text, $from) =~ $until;
        sleep 0.1;
    }
    return substr($text, $from);
}
# $n walks of every page of $path: the pages whose status or rows are not
# those expected, one a line ('' when all are right).
sub walks {
    my ($path, $n) = @_;
    my @wrong;
    for my $walk (1 .. $n) {
        my ($at, $next) = (0, $path);
        while (defined $next) {
            my ($code, $p) = page($next);
            my $got = "$code " . rows_of($p);
            push @wrong, "walk $walk, page " . ($at + 1) . ": $got" unless $got eq '200 ' . ($EXPECTED[$at] // 'no page');
            last unless $code == 200;
            $next = defined $p->{next} ? "$path?start=" . URI::Escape::uri_escape($p->{next}) : undef;
            $at++;
        }
        push @wrong, "walk $walk: $at pages, expected " . scalar @EXPECTED unless $at == @EXPECTED;
    }
    return join "\n", @wrong;
}

ok t_cmp(join('|', map { "$_->{key} $_->{id}" } @{ couch($node, GET => '/realfaults/_design/d/_view/v')->{rows} }),
         join('|', @EXPECTED), 'the node of its own and the tier\'s CouchDB give the same rows');
($status, $page) = page('/node/');
ok t_cmp("$status " . rows_of($page), "200 $EXPECTED[0]", 'the node of its own serves its first page');
ok t_cmp(walks('/both/', 4), '', 'a balancer over it and the tier\'s CouchDB: every page of 4 walks has the right rows');

# a hung node: its beam process stopped for the duration of one request
my $beam = do { open my $fh, '<', "$node_dir/node0/couchdb.pid" or die "$node_dir/node0/couchdb.pid: $!\n"; <$fh> };
chomp $beam;
my $log_mark = -s "$root/error_log";
$paused = $beam;
kill 'STOP', $beam or die "SIGSTOP to $beam: $!\n";
my $began = time;
($status, $page) = page('/node/');
my $took = time - $began;
resume_node();
ok t_cmp("$status " . ($page->{error} // '') . ', ' . ($page->{reason} // ''), "504 backend_timeout, $GENERIC{504}",
         'a hung node: 504, a generic reason');
ok t_cmp($took >= 1.5 && $took < 6 ? 'within the worker timeout' : sprintf('after %.2f s', $took),
         'within the worker timeout', sprintf('the 504 came after the worker timeout of 2 s (%.2f s)', $took));
ok t_cmp(log_since($log_mark, qr/CP0101/), qr{CP0101: the backend queries for /node/ failed with 504: .*did not answer in time},
         'the log says the backend did not answer in time');
($status, $page) = page('/node/');
ok t_cmp("$status " . rows_of($page), "200 $EXPECTED[0]", 'after SIGCONT, the next request is served, with the right rows');
($status, $page) = page('/node/?start=' . URI::Escape::uri_escape($page->{next} // ''));
ok t_cmp("$status " . rows_of($page), "200 $EXPECTED[1]", 'and so is the page after it');
ok t_cmp(walks('/both/', 2), '', 'and the balancer over both: every page of 2 walks has the right rows');

# a stopped node: a port where CouchDB was. It stops while 2 clients walk
# the balancer over it and the tier's CouchDB, until 1 s after it has gone:
# every page served must have the right rows, and a request may fail only
# if it was under way while the node stopped (begun before it had gone,
# ended after the signal). A failure starts the client's walk again.
my $flag = catfile($scratch, 'node-gone');
my @clients;
for my $n (1 .. 2) {
    my $pid = fork // die "fork: $!\n";
    if ($pid == 0) {    # POSIX::_exit: the parent's END blocks are not the client's
        my ($served, @wrong, @failed) = (0);
        eval {
            my $walker = HTTP::Tiny->new(timeout => 30, keep_alive => 1);
            my ($path, $at, $until) = ('/both/', 0);
            while (!defined $until || time < $until) {
                $until = time + 1 if !defined $until && -e $flag;
                my $began = time;
                my $r = $walker->get("http://127.0.0.1:$port$path", { headers => { Accept => 'application/json' } });
                my $p = $r->{status} == 200 ? decode_json_or_undef($r->{content}) : undef;
                if ($p) {
                    $served++;
                    push @wrong, 'page ' . ($at + 1) . ': ' . rows_of($p) unless rows_of($p) eq ($EXPECTED[$at] // 'no page');
                    ($path, $at) = defined $p->{next}
                        ? ('/both/?start=' . URI::Escape::uri_escape($p->{next}), $at + 1) : ('/both/', 0);
                }
                else {
                    push @failed, sprintf '%.6f %.6f %d', $began, time, $r->{status};
                    ($path, $at) = ('/both/', 0);
                }
            }
            1;
        } or push @wrong, "client died: $@";
        open my $out, '>', catfile($scratch, "client$n") or POSIX::_exit(2);
        print $out join("\n", $served, scalar @wrong, @wrong, @failed), "\n";
        close $out;
        POSIX::_exit(0);
    }
    push @clients, $pid;
}
sleep 1;
$log_mark = -s "$root/error_log";
my $signalled = time;
system($STOP, $node_dir, 0) == 0 or die "$STOP $node_dir 0 failed\n";
my $gone = time;
{ open my $fh, '>', $flag or die "$flag: $!\n"; }
waitpid($_, 0) for @clients;
my ($served, @wrong, @failed, @outside) = (0);
for my $n (1 .. 2) {
    open my $in, '<', catfile($scratch, "client$n") or die "client $n left no result\n";
    chomp(my @lines = <$in>);
    $served += shift @lines;
    push @wrong, splice @lines, 0, shift @lines;
    push @failed, @lines;
    push @outside, grep { my ($b, $e) = split ' '; !($b <= $gone && $e >= $signalled) } @lines;
}
printf "# node stopped in %.2f s under 2 walking clients: %d pages served, %d failed\n",
    $gone - $signalled, $served, scalar @failed;
print "# failed: began ended status: $_\n" for @failed;
ok t_cmp($served > 10 ? 'served' : "only $served", 'served', 'the balancer kept serving pages while the node stopped');
ok t_cmp(join("\n", @wrong), '', 'every page served while the node stopped had the right rows');
ok t_cmp(scalar(@outside) . ' of ' . scalar(@failed) . ' failures outside the stop',
         '0 of ' . scalar(@failed) . ' failures outside the stop', 'only requests in flight while the node stopped failed');
ok t_cmp(IO::Socket::INET->new(PeerAddr => "127.0.0.1:$node_port", Timeout => 2) ? 'accepts' : 'refuses',
         'refuses', 'the stopped node\'s port refuses connections');
$began = time;
($status, $page) = page('/node/');
$took = time - $began;
ok t_cmp("$status " . ($page->{error} // '') . ', ' . ($page->{reason} // ''), "503 backend_unavailable, $GENERIC{503}",
         'a stopped node: 503, a generic reason');
ok t_cmp($took < 5 ? 'at once' : sprintf('after %.2f s', $took), 'at once',
         sprintf('without waiting for a timeout (%.2f s)', $took));
ok t_cmp(log_since($log_mark, qr/CP0101/),
         qr{CP0101: the backend queries for /node/ failed with 503: the backend is unavailable \(mod_proxy made no connection to it},
         'the log says no connection was made');
($status) = page('/node/');
ok t_cmp($status, 503, 'and the next request too');
ok t_cmp(walks('/both/', 4), '',
         'the balancer with that member stopped: every page of 4 walks is served, with the right rows');

my $log = do { local $/; open my $fh, '<', "$root/error_log" or die; <$fh> };
ok t_cmp($log =~ /exit signal|Segmentation fault/ ? 'crash' : 'no crash', 'no crash', 'no httpd child crashed');
