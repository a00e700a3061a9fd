# SPDX-License-Identifier: Apache-2.0
# Scaling out (docs/scaling.md): CouchPageView balancer:// over two
# backends with the same data, and two httpd servers with the same
# configuration. A token one server issued works on the other (the module
# keeps no state), and stopping a backend under load loses at most the
# requests in flight, and every page served meanwhile has exactly the rows a
# direct query to the remaining backend gives for it. This test starts its own two pouchdb-servers and two
# httpd servers on free loopback ports, and stops them all.
use strict;
use warnings;

use Apache::Test qw(plan ok);
use Apache::TestUtil qw(t_cmp);
use File::Spec::Functions qw(catfile);
use File::Temp qw(tempdir);
use JSON::PP ();
use LWP::UserAgent ();
use URI::Escape ();
use POSIX ();
use Time::HiRes qw(sleep time);
use CouchPageTest qw(free_port wait_for_port spawn_process reap_process start_own_httpd
                     token_shows);

my $vars = Apache::Test::vars();
my $embedded = $ENV{COUCHPAGE_EMBEDDED_DIR} || catfile($vars->{top_dir}, 'embedded');
my $pouchdb = catfile($embedded, 'node_modules', 'pouchdb-server', 'bin', 'pouchdb-server');
my $dir = tempdir(CLEANUP => 1);
my $JSON = JSON::PP->new->utf8;

sub start_backend {
    my ($name) = @_;
    my $port = free_port();
    my $cwd = catfile($dir, $name);
    mkdir $cwd;
    my $pid = spawn_process($name, catfile($cwd, 'stdout.log'),
                            'node', $pouchdb, '--in-memory', '-p', $port, '-o', '127.0.0.1');
    wait_for_port($port, $name, $pid);
    system('node', catfile($embedded, 'fixtures.js'), "http://127.0.0.1:$port") == 0
        or die "loading fixtures into $name failed\n";
    return ($pid, $port);
}

sub start_httpd {
    my ($name, @backends) = @_;
    my $root = catfile($dir, $name);
    my $members = join '', map { "    BalancerMember \"http://127.0.0.1:$_\" keepalive=On timeout=5 retry=30\n" } @backends;
    my ($port) = start_own_httpd($root, [qw(slotmem_shm proxy proxy_http proxy_balancer lbmethod_byrequests)], <<"CONF");
<Proxy "balancer://couch">
$members</Proxy>
<Location "/bands/">
    SetHandler couchpage
    CouchPageView "balancer://couch/bands/_design/bands/_view/by-name"
    CouchPageSize 5
    CouchPageTokenSecret "jy5znh4hLbBR6H4dmk9vTeHEVekPy0wBfKnMmnTkSlE="
</Location>
CONF
    return ($port, $root);
}

sub get {
    my ($ua, $port, $path) = @_;
    my $res = $ua->get("http://127.0.0.1:$port$path");
    my $body = eval { $JSON->decode($res->content) };
    return ($res->code, $body);
}

# The view's rows as backend $port answers them directly, in pages of
# $size: each page's "key id" pairs joined by '|'.
sub pages_from_backend {
    my ($ua, $port, $size) = @_;
    my $res = $ua->get("http://127.0.0.1:$port/bands/_design/bands/_view/by-name");
    die "querying the view on port $port failed: " . $res->status_line . "\n" unless $res->is_success;
    my @rows = map { "$_->{key} $_->{id}" } @{ $JSON->decode($res->content)->{rows} };
    my @pages;
    push @pages, join('|', splice @rows, 0, $size) while @rows;
    return @pages;
}
sub rows_of { join '|', map { "$_->{key} $_->{id}" } @{ $_[0]{items} || [] } }

plan tests => 11;

my ($x_pid, $x_port) = start_backend('backend-x');
my ($y_pid, $y_port) = start_backend('backend-y');
my ($a_port, $a_root) = start_httpd('httpd-a', $x_port, $y_port);
my ($b_port) = start_httpd('httpd-b', $x_port, $y_port);
my $ua = LWP::UserAgent->new(keep_alive => 1, timeout => 30);

# statelessness: a token of server A, used on server B
my ($status, $first) = get($ua, $a_port, '/bands/');
ok t_cmp($status, 200, 'server A serves the first page through the balancer');
my $token = $first->{next} // '';
ok t_cmp(join(', ', grep { token_shows($token, $_) } 'Nirvana', 'nirvana', '"Nirvana"'), '',
         'the sealed next token shows neither the key nor the docid, plainly or in base64');
($status, my $second) = get($ua, $b_port, '/bands/?start=' . URI::Escape::uri_escape($token));
ok t_cmp($status, 200, "server B accepts server A's sealed token");
ok t_cmp(join('|', map { $_->{key} } @{ $second->{items} || [] }),
         'Nirvana|Perfect Circle|Queens of the Stone Age|Silverchair|Tenacious D',
         "server B shows the page A's token names");
($status, my $back) = get($ua, $a_port, '/bands/?start=' . URI::Escape::uri_escape($second->{prev} // ''));
ok t_cmp($status, 200, "and server A accepts server B's prev token");
ok t_cmp(rows_of($back), (pages_from_backend($ua, $x_port, 5))[0],
         "server A shows the page B's prev token names, the first");

# failover: 4 clients walk every page of server A, again and again, for 4 s;
# backend X stops after 1.5 s. Every page served must have exactly the rows
# that a direct query to backend Y (which stays) gives for it. "In flight" is
# measured, not assumed: each client notes when every failed request began
# and ended, and a failure is allowed only if the request was under way
# while X was stopping (begun before X had gone, ended after the signal). A
# request sent while X is dying can still reach it, so the count is not
# capped at one per client; the window (tens of ms) is what bounds it. A
# failed request starts the client's walk again at the first page.
my @expected = pages_from_backend($ua, $y_port, 5);
my ($clients, $seconds) = (4, 4);
my $started = time;
my @pids;
for my $n (1 .. $clients) {
    my $pid = fork // die "fork: $!";
    if ($pid == 0) {
        my $ua = LWP::UserAgent->new(keep_alive => 1, timeout => 30);
        my ($ok, @wrong, @failed) = (0);
        my ($path, $at) = ('/bands/', 0);
        while (time - $started < $seconds) {
            my $began = time;
            my $res = $ua->get("http://127.0.0.1:$a_port$path");
            my $page = $res->code == 200 ? eval { $JSON->decode($res->content) } : undef;
            if ($page) {
                $ok++;
                my $rows = rows_of($page);
                push @wrong, "page " . ($at + 1) . ": $rows, expected " . ($expected[$at] // 'no page')
                    unless defined $expected[$at] && $rows eq $expected[$at];
                ($path, $at) = defined $page->{next}
                    ? ('/bands/?start=' . URI::Escape::uri_escape($page->{next}), $at + 1) : ('/bands/', 0);
            }
            else {
                (my $body = substr($res->content, 0, 160)) =~ s/\s+/ /g;
                push @failed, sprintf "%.6f %.6f %d %s", $began, time, $res->code, $body;
                ($path, $at) = ('/bands/', 0);
            }
        }
        open my $out, '>', catfile($dir, "client$n") or POSIX::_exit(2);
        print $out join("\n", $ok, scalar @wrong, @wrong, @failed), "\n";
        close $out;
        POSIX::_exit(0);
    }
    push @pids, $pid;
}
sleep 1.5;
my $signalled = time;
kill 'TERM', $x_pid;
reap_process($x_pid, time + 60) // die "backend X did not stop\n";
my $stopped = time;
waitpid($_, 0) for @pids;

my ($ok, @failed, @outside, @wrong) = (0);
for my $n (1 .. $clients) {
    open my $in, '<', catfile($dir, "client$n") or die "client $n left no result\n";
    chomp(my @lines = <$in>);
    $ok += shift @lines;
    push @wrong, splice @lines, 0, shift @lines;
    for (@lines) {
        my ($began, $ended) = split ' ';
        push @failed, $_;
        push @outside, $_ unless $began <= $stopped && $ended >= $signalled;
    }
}
printf "# failover: %d pages served, %d failed; backend X signalled at %.6f, gone at %.6f\n",
    $ok, scalar @failed, $signalled, $stopped;
print "# failed: began ended status body: $_\n" for @failed;
ok t_cmp($ok > 50 ? 'served' : "only $ok", 'served', 'pages kept being served while a backend stopped');
ok t_cmp(join("\n", @wrong), '', "every page served had the rows backend Y gives for it (${\ scalar @expected} pages a walk)");
ok t_cmp(scalar(@outside) . ' of ' . scalar(@failed) . ' failures outside the stop', '0 of ' . scalar(@failed) . ' failures outside the stop',
         'only requests in flight while backend X stopped failed');

# afterwards every page is served by the remaining backend
my @after;
for (1 .. 20) {
    ($status, my $page) = get($ua, $a_port, '/bands/?start=' . URI::Escape::uri_escape($token));
    push @after, "$status " . rows_of($page // {});
}
ok t_cmp(join("\n", grep { $_ ne "200 $expected[1]" } @after), '',
         'with one backend left, every page is served, with the rows backend Y gives for it');
my $log = do { local $/; open my $fh, '<', "$a_root/error_log" or die; <$fh> };
if (@outside) {
    print "# httpd A's error log:\n";
    print "#   $_\n" for grep { /\S/ } split /\n/, $log;
}
ok t_cmp($log =~ /exit signal|Segmentation fault/ ? 'crash' : 'no crash', 'no crash',
         'no httpd child crashed');
