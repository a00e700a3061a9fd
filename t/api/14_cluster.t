# SPDX-License-Identifier: Apache-2.0
# A real 3-node CouchDB cluster behind mod_proxy_balancer (docs/scaling.md;
# issue 9): a node failure costs no client request.
#
# Needs a running cluster, started as the user the suite runs as:
#   COUCHDB_CLUSTER_URLS  the three node URLs with credentials, comma-separated,
#                         in node order (http://admin:secret@127.0.0.1:26000,...)
#   COUCHDB_CLUSTER_DIR   the DIR the cluster was started in (../shared/couchdb/start DIR PORT 3)
#   COUCHDB_STOP          the absolute path of ../shared/couchdb/stop
# The test takes nodes 1 and 2 down, so a cluster serves one run.
#
# It loads a database with 3,000 documents over a few hundred keys (a run of
# one key over several pages, documents that emit their key twice), starts
# its own httpd (on a free port) with the view paged through balancer:// of
# the three nodes and through each node alone, and checks that:
#  - a token issued through the balancer opens the same page through each node;
#  - 4 clients walking the view forward to its end and back again, in a loop,
#    get every row exactly once, in order, on every walk (the oracle is the
#    view read straight from the nodes), and no answer but 200 (each failure
#    is printed with its time and body), across two node failures:
#     1. node 1 is stopped (`$COUCHDB_STOP $COUCHDB_CLUSTER_DIR 1`: TERM, the
#        way an operator stops a node). The reads in flight on it at that
#        moment fail, as do reads another node was gathering from it (500
#        "nodedown"); how many there are is luck (often 1 to 4, sometimes 0).
#     2. node 2 hangs (SIGSTOP to its process group, recorded in
#        DIR/node2/couchdb.pid) and is then stopped the same way: a hung node
#        cannot act on TERM, so the stop script kills it after 20 s. The
#        clients' reads that went to it meanwhile were in flight when it died,
#        for certain;
#  - the backend reads that failed in flight were each repeated once (CP0116 ...)
#    and then served (no CP0101): without the module's repeat, the reads
#    cut by node 2's death alone fail the test.
# Everything it starts (httpd, the clients, the stop script) is stopped in
# END, and a node it froze is let go on.
use strict;
use warnings;

use Apache::Test qw(-withtestmore);
use File::Spec::Functions qw(catfile);
use File::Temp qw(tempdir);
use HTTP::Tiny ();
use IO::Socket::INET ();
use JSON::PP ();
use MIME::Base64 ();
use POSIX ();
use Time::HiRes qw(sleep time);
use URI::Escape qw(uri_escape_utf8);
use CouchPageTest qw(own_process spawn_process reap_process start_own_httpd);
use CouchPageWalk qw(jparse jget jstr row_sig first_difference);

my @URLS = split /\s*,\s*/, $ENV{COUCHDB_CLUSTER_URLS} // '';
my ($CLUSTER_DIR, $STOP) = @ENV{qw(COUCHDB_CLUSTER_DIR COUCHDB_STOP)};
unless (@URLS or $CLUSTER_DIR or $STOP) {
    plan skip_all => 'needs a 3-node CouchDB cluster: start one with ../shared/couchdb/start DIR PORT 3 '
        . '(as the user the suite runs as) and set COUCHDB_CLUSTER_URLS=http://USER:PASS@HOST:PORT,... '
        . '(its three nodes), COUCHDB_CLUSTER_DIR=DIR and COUCHDB_STOP=/absolute/path/of/couchdb/stop';
}
die "COUCHDB_CLUSTER_URLS must name three node URLs with credentials (http://USER:PASS\@HOST:PORT), "
    . "COUCHDB_CLUSTER_DIR the cluster's DIR and COUCHDB_STOP the stop script\n"
    unless @URLS == 3 and !grep({ !m{^http://[^:/@]+:[^/@]+\@[^/:]+:\d+/?$} } @URLS)
    and defined $CLUSTER_DIR and -d $CLUSTER_DIR and defined $STOP and -x $STOP;

# node i: { base => http://host:port, user, password }
my @NODES = map {
    my ($user, $password, $host) = m{^http://([^:/@]+):([^/@]+)\@([^/]+)/?$};
    { base => "http://$host", user => $user, password => $password }
} @URLS;
$NODES[$_]{n} = $_ for 0 .. 2;
my ($STOPPED, $HUNG) = (1, 2);    # the nodes taken down, by their numbers in `start DIR PORT 3`

my $DB = 'couchpage_cluster';
my $VIEW = "/$DB/_design/d/_view/v";
my $PAGE = 50;           # CouchPageSize
my $CLIENTS = 4;
my $DEADLINE = time + 600;    # the whole test; every wait below ends by it

my $vars = Apache::Test::vars();
my $dir = tempdir(CLEANUP => 1);
my $JSON = JSON::PP->new->utf8->canonical;
my $frozen;      # the process group of a node this test froze: let go on at the end

END { kill 'CONT', -$frozen if $frozen }

sub until_deadline { my ($seconds) = @_; my $t = time + $seconds; $t < $DEADLINE ? $t : $DEADLINE }

# --- CouchDB, straight -----------------------------------------------------------

my $COUCH = HTTP::Tiny->new(timeout => 60, keep_alive => 1);

sub couch {
    my ($node, $method, $path, $body) = @_;
    my $res = $COUCH->request($method, $node->{base} . $path, {
        headers => {
            Authorization => 'Basic ' . MIME::Base64::encode_base64("$node->{user}:$node->{password}", ''),
            'Content-Type' => 'application/json', Accept => 'application/json',
        },
        defined $body ? (content => ref $body ? $JSON->encode($body) : $body) : (),
    });
    return ($res->{status}, $res->{content});
}

# The whole view from one node, as row signatures in order.
sub view_rows {
    my ($node) = @_;
    my ($status, $raw) = couch($node, GET => $VIEW);
    die "node $node->{n}: GET $VIEW answered $status: " . substr($raw // '', 0, 300) . "\n" unless $status == 200;
    my $rows = jget(jparse($raw, bytes => 1), 'rows');
    return [ map { row_sig($_) } @{ $rows->[1] } ];
}

# 3,000 documents: keys k000..k249 (11 or 12 documents each), but the first
# 200 documents all have k100 (a run of equal keys over several pages); every
# 9th document emits its key twice. Ids are spread, so that id order is not
# insertion order.
sub load_database {
    my $node = $NODES[0];
    couch($node, DELETE => "/$DB");
    my ($status, $body) = couch($node, PUT => "/$DB");
    die "creating $DB: $status $body\n" unless $status == 201 || $status == 202;
    ($status, $body) = couch($node, PUT => "/$DB/_design/d", { views => { v => { map =>
        'function (doc) { if (doc.k) { emit(doc.k, doc.n); if (doc.twice) { emit(doc.k, "again"); } } }' } } });
    die "the design document: $status $body\n" unless $status == 201 || $status == 202;
    my @docs = map {
        { _id => sprintf('d%05d', (7919 * $_) % 3000), n => $_,
          k => $_ < 200 ? 'k100' : sprintf('k%03d', $_ % 250), ($_ % 9 == 0 ? (twice => JSON::PP::true) : ()) }
    } 0 .. 2999;
    for (my $i = 0; $i < @docs; $i += 1000) {
        ($status, $body) = couch($node, POST => "/$DB/_bulk_docs", { docs => [ @docs[$i .. $i + 999] ] });
        die "loading $DB: $status $body\n" unless $status == 201 || $status == 202;
        my @refused = grep { !$_->{ok} } @{ $JSON->decode($body) };
        die "loading $DB: " . scalar(@refused) . " documents refused\n" if @refused;
    }
    return scalar @docs;
}

# --- httpd -----------------------------------------------------------------------

# The configuration docs/scaling.md and conf/couchpage-cluster.conf
# give an operator, with the test's nodes.
sub start_httpd {
    my $root = catfile($dir, 'httpd');
    my ($user, $password) = @{ $NODES[0] }{qw(user password)};
    my $members = join '', map { qq{    BalancerMember "$_->{base}" connectiontimeout=2 timeout=30 retry=30 keepalive=On\n} } @NODES;
    my $alone = join '', map { <<"NODE" } @NODES;
<Proxy "$_->{base}/">
    ProxySet connectiontimeout=2 timeout=30 keepalive=On
</Proxy>
<Location "/node$_->{n}/">
    SetHandler couchpage
    CouchPageView "$_->{base}$VIEW"
    CouchPageCredentials "$_->{user}" "$_->{password}"
    CouchPageSize $PAGE
</Location>
NODE
    my ($port) = start_own_httpd($root, [qw(slotmem_shm proxy proxy_http proxy_balancer lbmethod_byrequests)], <<"CONF");
<Proxy "balancer://couchdb">
$members    ProxySet lbmethod=byrequests maxattempts=2 failonstatus=502
</Proxy>
<Location "/cluster/">
    SetHandler couchpage
    CouchPageView "balancer://couchdb$VIEW"
    CouchPageCredentials "$user" "$password"
    CouchPageSize $PAGE
</Location>
$alone
CONF
    return ($port, $root);
}

# --- walking the view through httpd --------------------------------------------------

# One page: { status, began, ended, raw, rows, next, prev }.
sub page {
    my ($ua, $port, $location, $token) = @_;
    my $url = "http://127.0.0.1:$port/$location/" . (defined $token ? '?start=' . uri_escape_utf8($token) : '');
    my $began = time;
    my $res = $ua->get($url, { headers => { Accept => 'application/json' } });
    my $page = { url => $url, status => $res->{status}, began => $began, ended => time, raw => $res->{content} };
    if ($res->{status} == 200) {
        my $tree = eval { jparse($res->{content}, bytes => 1) };
        my $items = $tree && jget($tree, 'items');
        if ($items and $items->[0] eq 'arr') {
            $page->{rows} = [ map { row_sig($_) } @{ $items->[1] } ];
            $page->{$_} = jstr(jget($tree, $_)) for qw(next prev);
        }
        else {
            $page->{status} = "200 without items";
        }
    }
    return $page;
}

# A client process: walks /cluster/ forward to the end and back to the start
# until the file 'finish' exists, appending to OUT one JSON line per round
# ({began, ended, requests, problem}) and one per failed request ({failed:
# began, ended, status, body}). A failed request ends its round.
sub client {
    my ($port, $want, $out) = @_;
    my $ua = HTTP::Tiny->new(keep_alive => 1, timeout => 60);
    open my $log, '>>', $out or POSIX::_exit(2);
    $log->autoflush(1);
    my $max_pages = int(@$want / $PAGE) + 5;
    until (-e catfile($dir, 'finish') or time > $DEADLINE) {
        my ($began, $requests, $problem, @forward, @backward) = (time, 0);
        my $token;    # after the next walk, the last page's: the prev walk opens it again
        WALK: for my $direction ('next', 'prev') {
            my $pages = $direction eq 'next' ? \@forward : \@backward;
            for (1 .. $max_pages) {
                my $p = page($ua, $port, 'cluster', $token);
                $requests++;
                if ($p->{status} ne '200') {
                    print $log $JSON->encode({ failed => 1, began => $p->{began}, ended => $p->{ended},
                                               status => $p->{status}, url => $p->{url},
                                               body => substr($p->{raw} // '', 0, 300) }), "\n";
                    $problem = "a request failed";
                    last WALK;
                }
                push @$pages, $p;
                last unless defined $p->{$direction};
                $token = $p->{$direction};
            }
            if (defined $pages->[-1]{$direction}) {
                $problem = "the $direction walk did not end within $max_pages pages";
                last WALK;
            }
        }
        unless ($problem) {
            my $diff = first_difference([ map { @{ $_->{rows} } } @forward ], $want);
            $problem = "forward: $diff" if $diff;
        }
        unless ($problem) {
            my $diff = first_difference([ map { @{ $_->{rows} } } reverse @backward ], $want);
            $problem = "backward: $diff" if $diff;
        }
        print $log $JSON->encode({ began => $began, ended => time, requests => $requests,
                                   pages => @forward + @backward, problem => $problem }), "\n";
    }
    close $log;
    POSIX::_exit(0);
}

# What the clients wrote: (rounds, failures), each a list of hashes with 'client'.
sub client_results {
    my (@rounds, @failures);
    for my $n (1 .. $CLIENTS) {
        open my $in, '<', catfile($dir, "client$n") or next;
        while (my $line = <$in>) {
            my $r = eval { $JSON->decode($line) } or next;    # a line being written
            $r->{client} = $n;
            push @{ $r->{failed} ? \@failures : \@rounds }, $r;
        }
    }
    return (\@rounds, \@failures);
}

# Waits until every client has finished a round that began after AFTER.
sub wait_rounds {
    my ($after, $until) = @_;
    while (time < $until) {
        my ($rounds) = client_results();
        my %done = map { $_->{client} => 1 } grep { $_->{began} > $after } @$rounds;
        return 1 if keys %done == $CLIENTS;
        sleep 0.2;
    }
    return 0;
}

# ======================================================================================

plan tests => 19;

# the cluster, and the database on it
for my $node (@NODES) {
    my ($status) = couch($node, GET => '/_up');
    die "node $node->{n} ($node->{base}) does not answer /_up ($status): start the cluster afresh\n"
        unless $status == 200;
}
my ($status, $membership) = couch($NODES[0], GET => '/_membership');
my $members = $status == 200 ? scalar @{ $JSON->decode($membership)->{cluster_nodes} || [] } : 0;
is $members, 3, 'the cluster has three nodes';
my $docs = load_database();

# Indexed on every node, and the same view on each: it is the oracle.
my (@views, $same);
my $until = until_deadline(120);
while (1) {
    @views = map { view_rows($_) } @NODES;
    $same = !grep { join("\n", @{ $views[$_] }) ne join("\n", @{ $views[0] }) } 1 .. 2;
    last if $same or time > $until;
    sleep 1;
}
my @want = @{ $views[0] };
ok $same, "every node serves the same view ($docs documents, " . scalar(@want) . ' rows)'
    or diag join "\n", map { "node $_: " . (first_difference($views[$_], $views[0]) // 'same') } 1 .. 2;
my %per_key;
$per_key{ (m/ key=(\S+)/)[0] }++ for @want;
cmp_ok scalar(keys %per_key), '<', @want / 5, 'many rows share a key (' . scalar(keys %per_key) . ' keys)';

my ($port, $root) = start_httpd();
note "httpd on port $port; balancer://couchdb of " . join(', ', map { $_->{base} } @NODES);

# A token issued through the balancer opens the same page through each node.
my $ua = HTTP::Tiny->new(keep_alive => 1, timeout => 60);
my @walk = (page($ua, $port, 'cluster'));
push @walk, page($ua, $port, 'cluster', $walk[-1]{next})
    while $walk[-1]{status} eq '200' and defined $walk[-1]{next} and @walk < @want / $PAGE + 5;
for my $i (1 .. $#walk) { $walk[$i]{token} = $walk[$i - 1]{next} }
is join(',', map { $_->{status} } grep { $_->{status} ne '200' } @walk), '', 'a walk through the balancer';
is first_difference([ map { @{ $_->{rows} || [] } } @walk ], \@want) // 'same rows',
    'same rows', 'gives the view, row for row';
my @mismatch;
my @sample = grep { defined $_->{token} } @walk;
for my $page (@sample) {
    for my $node (@NODES) {
        my $via = page($ua, $port, "node$node->{n}", $page->{token});
        next if $via->{status} eq '200' and join("\n", @{ $via->{rows} }) eq join("\n", @{ $page->{rows} })
            and ($via->{next} // 'null') eq ($page->{next} // 'null') and ($via->{prev} // 'null') eq ($page->{prev} // 'null');
        push @mismatch, "token $page->{token} on node $node->{n}: $via->{status} "
            . (first_difference($via->{rows} || [], $page->{rows}) // 'other links');
    }
}
is scalar(@mismatch), 0, 'every token of the walk (' . scalar(@sample) . ') opens the same page through each node alone'
    or diag join "\n", @mismatch[0 .. ($#mismatch < 4 ? $#mismatch : 4)];

# 4 clients walk forward and back in a loop, while node 1 stops and node 2
# hangs and is stopped.
my @clients;
for my $n (1 .. $CLIENTS) {
    my $pid = fork // die "fork: $!";
    client($port, \@want, catfile($dir, "client$n")) if $pid == 0;
    push @clients, own_process($pid, "client $n");
}
my $started = time;
ok wait_rounds(0, until_deadline(180)), "each client walked the view once with every node up";

# Stops node N with the stop script: (its exit status or undef, began, ended).
sub stop_node {
    my ($n) = @_;
    my $began = time;
    my $pid = spawn_process("stop node $n", catfile($dir, "stop$n.log"), $STOP, $CLUSTER_DIR, $n);
    my $status = reap_process($pid, until_deadline(90));
    return ($status, $began, time);
}

# Whether a node refuses connections (a killed process may still hold its
# socket for a moment).
sub refuses {
    my ($node) = @_;
    my $until = until_deadline(10);
    while (IO::Socket::INET->new(PeerAddr => $node->{base} =~ s{^http://}{}r, Timeout => 2)) {
        return 0 if time > $until;
        sleep 0.1;
    }
    return 1;
}

sub log_mark { -s "$root/error_log" || 0 }

# 1. node 1 stops
my $mark1 = log_mark();
my ($status1, $signalled1, $gone1) = stop_node($STOPPED);
ok defined $status1 && $status1 == 0 && refuses($NODES[$STOPPED]),
    sprintf('node %d stopped (in %.2f s) and refuses connections', $STOPPED, $gone1 - $signalled1);
ok wait_rounds($gone1, until_deadline(180)), 'each client walked the view again on the two nodes left';
my @left = map { first_difference(view_rows($NODES[$_]), \@want) // () } 0, $HUNG;
is scalar(@left), 0, "nodes 0 and $HUNG serve the same view" or diag join "\n", @left;

# 2. node 2 hangs, and is stopped
my $mark2 = log_mark();
open my $pidfile, '<', catfile($CLUSTER_DIR, "node$HUNG", 'couchdb.pid')
    or die "node $HUNG: no couchdb.pid in $CLUSTER_DIR/node$HUNG: $!\n";
chomp(my $group = <$pidfile> // '');
close $pidfile;
die "node $HUNG: bad couchdb.pid '$group'\n" unless $group =~ /^[1-9][0-9]*$/;
$frozen = $group;
kill 'STOP', -$group or die "node $HUNG: SIGSTOP to process group $group: $!\n";
my ($status2, $signalled2, $gone2) = stop_node($HUNG);
$frozen = undef;
ok defined $status2 && $status2 == 0 && refuses($NODES[$HUNG]),
    sprintf('node %d, hung, was stopped (in %.2f s) and refuses connections', $HUNG, $gone2 - $signalled2);
ok wait_rounds($gone2, until_deadline(180)), 'each client walked the view again on the one node left';

open my $finish, '>', catfile($dir, 'finish') or die;
close $finish;
my $until_clients = until_deadline(120);
my @unfinished = grep { !defined reap_process($_, $until_clients) } @clients;
is scalar(@unfinished), 0, 'the clients finished';

my ($rounds, $failures) = client_results();
my $requests = 0;
$requests += $_->{requests} for @$rounds;
my @inexact = grep { $_->{problem} } @$rounds;
my $spanning = sub { my ($from, $to) = @_; scalar grep { $_->{began} <= $to and $_->{ended} >= $from } @$rounds };
note sprintf '%d clients: %d walks, %d requests in %.1f s; node %d stopped in %.2f s (%d walks under way), '
    . 'node %d hung and stopped in %.2f s (%d walks under way)', $CLIENTS, scalar @$rounds, $requests,
    time - $started, $STOPPED, $gone1 - $signalled1, $spanning->($signalled1, $gone1),
    $HUNG, $gone2 - $signalled2, $spanning->($signalled2, $gone2);
is scalar(@$failures), 0, "no client request failed ($requests requests)"
    or diag join "\n", map { sprintf 'client %d: began %.6f ended %.6f %s %s: %s', @$_{qw(client began ended status url body)} } @$failures;
is scalar(@inexact), 0, 'every walk (' . scalar(@$rounds) . ') gave exactly the view\'s rows in order, both ways'
    or diag join "\n", map { "client $_->{client}, walk begun at $_->{began}: $_->{problem}" } @inexact[0 .. ($#inexact < 4 ? $#inexact : 4)];
is first_difference(view_rows($NODES[0]), \@want) // 'same rows', 'same rows', 'node 0 alone serves the same view';

# The repeat: every backend read that failed in flight was repeated once
# (CP0106, CP0116, CP0118, CP0119), and served (no CP0101: no read failed twice). httpd's error log
# is kept as t/logs/cluster_error_log.
system('cp', "$root/error_log", catfile($vars->{t_logs}, 'cluster_error_log'));
sub log_lines {
    my ($from, $to) = @_;
    open my $fh, '<', "$root/error_log" or die "$root/error_log: $!";
    seek $fh, $from, 0;
    read $fh, my $text, ($to // -s $fh) - $from;
    return split /\n/, $text;
}
my @lines = log_lines($mark1);
# the module's lines for a read sent again (CP0106 before any answer, CP0116
# a read, CP0118 a multi-query read, CP0119 one cut off whose other queries
# were answered alone)
my $again = qr/CP01(?:06|16|18|19): .*failed in flight/;
my @stopped = grep { $_ =~ $again } log_lines($mark1, $mark2);
my @hung = grep { $_ =~ $again } log_lines($mark2);
my @errors = grep { /CP0101/ } @lines;
note sprintf 'backend reads that failed in flight and were repeated once: %d when node %d stopped, '
    . '%d when node %d hung and stopped; %d failed for good', scalar @stopped, $STOPPED, scalar @hung, $HUNG, scalar @errors;
note "  $_" for @stopped, @hung;
cmp_ok scalar(@hung), '>=', 1, "the reads in flight on node $HUNG when it died were repeated"
    or diag join "\n", 'error log since node 2 hung:', log_lines($mark2);
is scalar(@errors), 0, 'every repeated read was served: none failed twice'
    or diag join "\n", 'error log since the walks began:', @lines;
is scalar(grep { /exit signal|Segmentation fault/ } @lines), 0, 'no httpd child crashed';
