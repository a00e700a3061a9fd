# SPDX-License-Identifier: Apache-2.0
package CouchPageTest;
# Helpers for mod_couchpage's Apache::Test files (t/**/*.t).
#
#   use Apache::Test qw(plan ok);
#   use CouchPageTest qw(get_json walk_pages);
#   my ($status, $body) = get_json('/bands/?limit=5');
#
# t/TEST puts t/lib on PERL5LIB, so test files need no 'use lib'.
use strict;
use warnings;

use Exporter ();
use JSON::PP ();
use URI::Escape qw(uri_escape_utf8);
use MIME::Base64 qw(encode_base64url decode_base64url);
use Apache::Test ();
use Apache::TestRequest ();
use File::Basename ();
use File::Spec::Functions qw(catfile);
use File::Temp ();
use IO::Socket::INET ();
use POSIX ();
use Time::HiRes qw(time sleep);

our @EXPORT_OK = qw(
    decode_json_or_undef get_json walk_pages with_args
    backend_url backend_port backend_auth backend_request backend_open_db backend_kind
    double_url double_port double_request double_fault double_log double_load
    double_queries
    error_log_path error_log_mark error_log_since write_text
    time_wait_count
    free_port wait_for_port own_process spawn_process reap_process start_own_httpd
    httpd_config_test browser_walk browser_script token_shows
    live_cluster cluster_node cluster_db_anew
);
our %EXPORT_TAGS = (all => \@EXPORT_OK);

# Warnings. A bad value (undefined, not a number, ...) in a test file or
# in these helpers warns, and does not end the file, which would lose
# every test after it: the file runs on, the test that reads the value
# fails by itself, and the file exits non-zero at its end, which the
# harness (and scripts/test) counts as one failure more. Warnings of the
# tests' own code (t/api/*.t, t/lib/*.pm) count; a library's are shown as
# they always were. A test file gets this by using CouchPageTest (t/TEST,
# which only requires it, does not).
my ($WARNINGS, $WARNINGS_OF) = (0, 0);
my $OWN_CODE = qr{ at (?:\S*/)?t/(?:api/[^/\s]+\.t|lib/[^/\s]+\.pm) line \d+};
sub import {
    if (!$WARNINGS_OF) {
        $WARNINGS_OF = $$;
        $SIG{__WARN__} = sub {
            my ($message) = @_;
            if ($message =~ $OWN_CODE) {
                $WARNINGS++;
                print STDERR "# warning (a failure of this file): $message";
            }
            else {
                print STDERR $message;
            }
        };
    }
    goto &Exporter::import;
}
END {
    if ($WARNINGS && $$ == $WARNINGS_OF) {
        print STDERR "# $WARNINGS warning(s) of the test's own code: the file fails\n";
        $? ||= 1;
    }
}

my $JSON = JSON::PP->new->utf8->canonical->allow_nonref;

# Decoded JSON, or undef if the text is not JSON.
sub decode_json_or_undef {
    my ($text) = @_;
    return undef unless defined $text and length $text;
    my $value = eval { $JSON->decode($text) };
    return $value;
}

# The node URLs of COUCHDB_CLUSTER_URLS (.ci/run's 3-node cluster) where
# every one answers, else none (said where only some do): a test's cluster
# checks run on the whole cluster only (in CI, the first tier's run:
# 14_cluster.t, of the real tier, stops two nodes).
sub live_cluster {
    require HTTP::Tiny;
    my @urls = map { s{/$}{}r } split /\s*,\s*/, $ENV{COUCHDB_CLUSTER_URLS} // '';
    my $live = grep { (HTTP::Tiny->new(timeout => 10)->get("$_/_up")->{status} // 0) == 200 } @urls;
    return @urls if $live == @urls;
    print STDERR "# the cluster of COUCHDB_CLUSTER_URLS: $live node(s) answer, not all: its checks are left out\n"
        if $live;
    return ();
}

# A node URL with credentials (http://USER:PASS@HOST:PORT): (its URL without
# them, the user, the password, a client of it), the client
# $request->(METHOD, PATH[, BODY]) giving (status, the answer decoded or undef).
sub cluster_node {
    my ($url) = @_;
    require HTTP::Tiny;
    my ($user, $password, $hostport) = $url =~ m{^http://([^:]+):([^@]+)@(.+)$};
    my $base = "http://$hostport";
    my $http = HTTP::Tiny->new(timeout => 30);
    my %headers = (Authorization => 'Basic ' . MIME::Base64::encode_base64("$user:$password", ''),
                   'Content-Type' => 'application/json');
    my $request = sub {
        my ($method, $path, $body) = @_;
        my $r = $http->request($method, "$base$path", { headers => \%headers,
            defined $body ? (content => $JSON->encode($body)) : () });
        return ($r->{status}, decode_json_or_undef($r->{content}));
    };
    return ($base, $user, $password, $request);
}

# The database DB on the cluster, made anew through the client $request
# (cluster_node's) and loaded with DOCS (_bulk_docs); dies where either fails.
sub cluster_db_anew {
    my ($request, $db, @docs) = @_;
    $request->(DELETE => "/$db");
    my ($status) = $request->(PUT => "/$db");
    die "creating $db on the cluster: $status\n" unless $status =~ /^20[12]$/;
    ($status) = $request->(POST => "/$db/_bulk_docs", { docs => \@docs });
    die "loading $db: $status\n" unless $status =~ /^20[12]$/;
}

# GET a path of the test server: (status, decoded JSON body or undef, HTTP::Response).
sub get_json {
    my ($path, @headers) = @_;
    my $res = Apache::TestRequest::GET($path, @headers);
    return ($res->code, decode_json_or_undef($res->content), $res);
}

# Appends query arguments to a path, percent-encoding each value:
#   with_args('/bands/', start => $token, limit => 5)
sub with_args {
    my ($path, @args) = @_;
    my @pairs;
    while (my ($k, $v) = splice @args, 0, 2) {
        next unless defined $v;
        push @pairs, "$k=" . uri_escape_utf8($v);
    }
    return $path unless @pairs;
    return $path . ($path =~ /\?/ ? '&' : '?') . join '&', @pairs;
}

# Walks a view from its first page by following the "next" tokens.
#   walk_pages('/bands/', limit => 5, max_pages => 100)
# Returns a list of { status => ..., body => ..., path => ... }, one per page,
# stopping after a page whose status is not 200, whose body is not JSON, or
# whose "next" is null, or after max_pages (default 1000) pages.
sub walk_pages {
    my ($path, %opt) = @_;
    my $max = delete $opt{max_pages} // 1000;
    my $dir = delete $opt{direction} // 'next';
    my @args = map { ($_ => $opt{$_}) } sort keys %opt;
    my @pages;
    my $token;
    for (1 .. $max) {
        my $p = with_args($path, @args, defined $token ? (start => $token) : ());
        my ($status, $body) = get_json($p);
        push @pages, { status => $status, body => $body, path => $p };
        last unless $status == 200 and ref $body eq 'HASH';
        $token = $body->{$dir};
        last unless defined $token;
    }
    return @pages;
}

# Whether a sealed token shows $word: plainly, in base64url at any of the
# three offsets a byte string can start at, or among its decoded bytes.
sub token_shows {
    my ($token, $word) = @_;
    return 1 if index($token, $word) >= 0;
    for my $k (0 .. 2) {
        my $b64 = encode_base64url(("\0" x $k) . $word);
        my ($first, $end) = (int((8 * $k + 5) / 6), int(8 * ($k + length $word) / 6));
        return 1 if index($token, substr($b64, $first, $end - $first)) >= 0;
    }
    return index(decode_base64url($token), $word) >= 0 ? 1 : 0;
}

# A backend's base URL as t/TEST exported it (no trailing slash): from the
# environment, or from t/logs/NAME.url when the server was started earlier.
sub started_url {
    my ($env, $name) = @_;
    return $ENV{$env} if $ENV{$env};
    my $file = catfile(Apache::Test::vars('t_logs'), "$name.url");
    open my $fh, '<', $file or die "no $name URL: $env unset and $file: $!\n";
    chomp(my $url = <$fh>);
    return $url;
}

# The paging backend's base URL, e.g. http://127.0.0.1:40123: the embedded
# pouchdb-server, or the real CouchDB of the real tier (scripts/test).
sub backend_url { started_url('COUCHPAGE_BACKEND', 'backend') }

# The Authorization header for the tests' own requests to that backend:
# none for pouchdb-server (no admin, anyone may write); the admin's for a
# real CouchDB (COUCHPAGE_BACKEND_USER/PASSWORD), where only an admin may
# create databases.
sub backend_auth {
    return () unless defined $ENV{COUCHPAGE_BACKEND_USER};
    require MIME::Base64;
    return (Authorization => 'Basic ' . MIME::Base64::encode_base64(
        "$ENV{COUCHPAGE_BACKEND_USER}:" . ($ENV{COUCHPAGE_BACKEND_PASSWORD} // ''), ''));
}

# A request straight to the backend (as its admin, if it has one):
# (status, decoded body).
sub backend_request {
    my ($method, $path, $body) = @_;
    require HTTP::Tiny;
    my $res = HTTP::Tiny->new(timeout => 60)->request($method, backend_url() . $path, {
        headers => { backend_auth(), 'Content-Type' => 'application/json', Accept => 'application/json' },
        defined $body ? (content => $JSON->encode($body)) : (),
    });
    return ($res->{status}, decode_json_or_undef($res->{content}));
}

# Creates database DB in the backend unless it exists, and lets anyone read
# it: the test locations on COUCHPAGE_BACKEND carry no credentials, as with
# pouchdb-server, and a real CouchDB 3.x makes new databases admin-only. A
# _security object without members makes it public (and changes nothing on
# pouchdb-server, whose databases are public anyway).
sub backend_open_db {
    my ($db, $options) = @_;
    # $options: a query string for the PUT (q=1: one shard)
    my ($status, $body) = backend_request(PUT => "/$db" . ($options ? "?$options" : ''));
    die "creating $db in the backend failed: $status\n" unless $status =~ /^(201|202|412)$/;
    ($status) = backend_request(PUT => "/$db/_security", {
        admins => { names => [], roles => [] }, members => { names => [], roles => [] } });
    die "opening $db to readers without credentials failed: $status\n" unless $status == 200;
}

# What the backend is, from its welcome: 'couchdb' (Apache CouchDB),
# 'pouchdb-server', or 'double' (the CouchDB view double, t/double/).
# Where they differ, tests state what each one does (e.g. CouchDB reports
# true offsets, pouchdb-server 0).
my %KIND;
sub backend_kind {
    my ($url) = @_;
    $url //= backend_url();
    return $KIND{$url} //= do {
        require HTTP::Tiny;
        my $res = HTTP::Tiny->new(timeout => 10)->get("$url/");
        my $welcome = decode_json_or_undef($res->{content}) // {};
        my $vendor = ref $welcome->{vendor} eq 'HASH' ? $welcome->{vendor}{name} // '' : '';
        $welcome->{'express-pouchdb'} ? 'pouchdb-server'
            : $vendor =~ /test double/ ? 'double'
            : ($welcome->{couchdb} // '') eq 'Welcome' ? 'couchdb'
            : die "$url/ is neither CouchDB nor pouchdb-server: $res->{status} $res->{content}\n";
    };
}

# The CouchDB view double's base URL (t/double/couchdb-double.js).
sub double_url { started_url('COUCHPAGE_DOUBLE', 'double') }

sub double_port { port_of(double_url()) }

# A request straight to the double, as its admin: (status, decoded body).
#   double_request(PUT => '/db/doc', {name => 'x'})
sub double_request {
    my ($method, $path, $body) = @_;
    require HTTP::Tiny;
    require MIME::Base64;
    my $auth = MIME::Base64::encode_base64(
        ($ENV{COUCHPAGE_DOUBLE_USER} // 'admin') . ':'
        . ($ENV{COUCHPAGE_DOUBLE_PASSWORD} // 'double-admin-secret'), '');
    my $res = HTTP::Tiny->new(timeout => 60)->request($method, double_url() . $path, {
        headers => { Authorization => "Basic $auth", 'Content-Type' => 'application/json',
                     Accept => 'application/json' },
        defined $body ? (content => $JSON->encode($body)) : (),
    });
    return ($res->{status}, decode_json_or_undef($res->{content}));
}

# Sets the double's fault switch: double_fault(mode => 'slow', ms => 3000,
# path => '/faults/', count => 1); double_fault(mode => 'none') clears it.
sub double_fault {
    my (%fault) = @_;
    my ($status) = double_request(POST => '/_double/faults', \%fault);
    die "setting the double's fault failed: $status\n" unless $status == 200;
}

# The requests the double received since the log was last cleared; with
# clear => 1, clears it instead.
sub double_log {
    my (%opt) = @_;
    if ($opt{clear}) {
        double_request(DELETE => '/_double/log');
        return;
    }
    my (undef, $log) = double_request(GET => '/_double/log');
    return ref $log eq 'HASH' ? @{ $log->{requests} || [] } : ref $log eq 'ARRAY' ? @$log : ();
}

# The view queries in entries of the double's log (double_log), one
#   { method, path, query => [[name, value], ...], request => the entry }
# per query: a GET's own query string, and each query in the body of a
# multi-query POST (path without its /queries; values as a query string
# carries them: JSON text, document ids raw).
sub double_queries {
    my @queries;
    my $json = JSON::PP->new->canonical->allow_nonref;
    for my $entry (@_) {
        my $path = $entry->{path} // '';
        if (($entry->{method} // '') eq 'POST' and $path =~ m{^(.*/(?:_view/[^/]+|_all_docs))/queries$}) {
            my $index = $1;
            my $body = eval { $json->decode($entry->{body} // '') };
            for my $query (ref $body eq 'HASH' && ref $body->{queries} eq 'ARRAY' ? @{ $body->{queries} } : ()) {
                my @pairs = map {
                    [$_, /_docid$/ && !ref $query->{$_} ? $query->{$_} : $json->encode($query->{$_})]
                } sort keys %$query;
                push @queries, { method => 'POST', path => $index, query => \@pairs, request => $entry };
            }
        }
        elsif (($entry->{method} // '') eq 'GET') {
            push @queries, { method => 'GET', path => $path, query => $entry->{query} || [], request => $entry };
        }
    }
    return @queries;
}

# Creates database DB in the double with docs and a design document
# (replacing one of that name): double_load('dups', \@docs, {v => {map => ...}}).
sub double_load {
    my ($db, $docs, $views, %opt) = @_;
    double_request(DELETE => "/$db");
    my ($status) = double_request(PUT => "/$db" . ($opt{partitioned} ? '?partitioned=true' : ''));
    die "creating $db in the double failed: $status\n" unless $status == 201 || $status == 200;
    if ($views) {
        ($status) = double_request(PUT => "/$db/_design/" . ($opt{ddoc} // 'd'), { views => $views });
        die "design doc of $db: $status\n" unless $status == 201 || $status == 200;
    }
    for (my $i = 0; $i < @$docs; $i += 5000) {
        my $last = $i + 4999 < $#$docs ? $i + 4999 : $#$docs;
        ($status) = double_request(POST => "/$db/_bulk_docs", { docs => [ @$docs[$i .. $last] ] });
        die "loading $db into the double failed: $status\n" unless $status == 201 || $status == 200;
    }
}

sub port_of {
    my ($port) = $_[0] =~ m{:(\d+)(?:/|$)};
    return $port;
}

sub backend_port { port_of(backend_url()) }

sub error_log_path {
    return catfile(Apache::Test::vars('t_logs'), 'error_log');
}

# Byte offset of the end of t/logs/error_log (or of the error log FILE of
# an httpd of the test's own): pass it to error_log_since later.
sub error_log_mark {
    my ($file) = @_;
    return -s ($file // error_log_path()) || 0;
}

# Lines written to t/logs/error_log (file => another httpd's) after the
# mark (all lines without one). httpd may write a line a moment after the
# response: pass wait => seconds to poll until a line matches the regexp
# 'until' (or the time is up).
sub error_log_since {
    my ($mark, %opt) = @_;
    my $deadline = time + ($opt{wait} // 0);
    while (1) {
        my @lines;
        if (open my $fh, '<', $opt{file} // error_log_path()) {
            seek $fh, $mark // 0, 0;
            @lines = <$fh>;
            chomp @lines;
        }
        return @lines if !$opt{until} or grep { /$opt{until}/ } @lines or time >= $deadline;
        sleep 0.1;
    }
}

# Writes TEXT to FILE (an .htaccess, a secret), whole; returns FILE.
sub write_text {
    my ($file, $text) = @_;
    open my $fh, '>', $file or die "$file: $!";
    print $fh $text;
    close $fh or die "$file: $!";
    return $file;
}

# TCP sockets in TIME_WAIT on either end of a connection to PORT (default:
# the backend's port), as `ss -tan` shows them.
sub time_wait_count {
    my ($port) = @_;
    $port //= backend_port();
    $port =~ /^\d+$/ or die "bad port '$port'\n";
    my @lines = `ss -Htan state time-wait '( sport = :$port or dport = :$port )' 2>/dev/null`;
    die "ss failed: $?\n" if $?;
    return scalar grep { /\S/ } @lines;
}

# --- servers a test starts itself ---------------------------------------------------
# (t/api/06_faults.t, 11_failover.t, 14_cluster.t: httpd servers of their own
# and backends, on free loopback ports.) Every process registered here is
# stopped when the test ends, also when it dies: TERM, and KILL after 20 s.

my @OWN;    # [pid, what, the test's pid]

END {
    local $?;
    my @mine = grep { $_->[2] == $$ } @OWN;
    for (reverse @mine) { kill 'TERM', $_->[0] if kill 0, $_->[0] }
    for (reverse @mine) {
        my $pid = $_->[0];
        my $until = time + 20;
        sleep 0.1 while waitpid($pid, POSIX::WNOHANG()) == 0 and time < $until;
        if (kill 0, $pid) {
            kill 'KILL', $pid;
            waitpid($pid, 0);
        }
    }
}

# A loopback port nothing listens on now.
sub free_port {
    my $s = IO::Socket::INET->new(Listen => 1, LocalAddr => '127.0.0.1', LocalPort => 0) or die "free_port: $!\n";
    my $port = $s->sockport;
    close $s;
    return $port;
}

# Waits until something listens on PORT; dies after 60 s, or when process
# PID (optional) has exited.
sub wait_for_port {
    my ($port, $what, $pid) = @_;
    my $until = time + 60;
    until (IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $port, Timeout => 1)) {
        die "$what did not start on port $port\n"
            if time > $until or ($pid and waitpid($pid, POSIX::WNOHANG()) == $pid);
        sleep 0.2;
    }
}

# Registers a child process (forked by the test) to stop when the test ends.
sub own_process {
    my ($pid, $what) = @_;
    push @OWN, [$pid, $what, $$];
    return $pid;
}

# Starts COMMAND in the directory that holds the file LOG, with its output
# in LOG: its PID.
sub spawn_process {
    my ($what, $log, @command) = @_;
    my $pid = fork // die "fork: $!\n";
    if ($pid == 0) {
        chdir File::Basename::dirname($log) or POSIX::_exit(125);
        open STDIN, '<', '/dev/null';
        open STDOUT, '>', $log or POSIX::_exit(126);
        open STDERR, '>&', \*STDOUT;
        exec @command or POSIX::_exit(127);
    }
    return own_process($pid, $what);
}

# Waits for an own child until the time UNTIL (epoch seconds): its exit
# status ($?), or undef if it is still running then.
sub reap_process {
    my ($pid, $until) = @_;
    while (1) {
        if (waitpid($pid, POSIX::WNOHANG()) == $pid) {
            my $status = $?;
            @OWN = grep { $_->[0] != $pid } @OWN;
            return $status;
        }
        return undef if time > $until;
        sleep 0.05;
    }
}

# An httpd of the test's own, in the directory ROOT, on a free loopback port:
# the event MPM, mod_authz_core, the httpd modules named (mod_NAME.so from
# apxs -q LIBEXECDIR), the built mod_couchpage, the module's lines at info
# in ROOT/error_log, and CONF. Returns (port, pid). Option port => P: on
# port P (an own httpd's, stopped: the same configuration again).
#   start_own_httpd($root, [qw(proxy proxy_http)], qq{<Location "/x/">...</Location>\n})
sub start_own_httpd {
    my ($root, $modules, $conf, %opt) = @_;
    my $vars = Apache::Test::vars();
    chomp(my $libexec = `'$vars->{apxs}' -q LIBEXECDIR 2>/dev/null` || '/usr/lib/apache2/modules');
    my $port = $opt{port} // free_port();
    mkdir $root;
    open my $fh, '>', "$root/httpd.conf" or die "$root/httpd.conf: $!\n";
    print $fh qq{ServerRoot "$root"\nServerName localhost\nListen 127.0.0.1:$port\n},
        qq{PidFile "$root/httpd.pid"\nErrorLog "$root/error_log"\nLogLevel warn couchpage:info\n},
        qq{DefaultRuntimeDir "$root"\n},
        map({ qq{LoadModule ${_}_module "$libexec/mod_$_.so"\n} } 'mpm_event', 'authz_core', @$modules),
        qq{LoadModule couchpage_module "} . catfile($vars->{top_dir}, '.libs', 'mod_couchpage.so') . qq{"\n},
        $conf;
    close $fh;
    my $pid = spawn_process("httpd in $root", "$root/stdout.log",
                            $vars->{httpd}, '-f', "$root/httpd.conf", '-DFOREGROUND');
    wait_for_port($port, "httpd in $root", $pid);
    return ($port, $pid);
}

# httpd -t on a configuration of one <Location "/x/"> with the handler and
# DIRECTIVES, written as the bytes given, with mod_proxy and mod_proxy_http
# loaded (which every view URL needs). Returns (exit status, httpd's
# output): 0 and "Syntax OK", or httpd's message naming the directive.
# Options: modules => [NAME, ...], the httpd modules loaded besides the MPM
# and mod_authz_core (mod_NAME.so; default proxy, proxy_http); conf => TEXT,
# the configuration after the LoadModule lines instead of the <Location>
# (DIRECTIVES is then ignored).
#   httpd_config_test("CouchPageView $url\nCouchPageSize 5")
#   httpd_config_test(undef, modules => [], conf => qq{<Location "/a/">...</Location>\n})
sub httpd_config_test {
    my ($directives, %opt) = @_;
    my $vars = Apache::Test::vars();
    chomp(my $libexec = `'$vars->{apxs}' -q LIBEXECDIR 2>/dev/null` || '/usr/lib/apache2/modules');
    my $dir = File::Temp::tempdir(CLEANUP => 1);
    my $conf = catfile($dir, 'httpd.conf');
    my $module = catfile($vars->{top_dir}, '.libs', 'mod_couchpage.so');
    my @modules = ('mpm_event', 'authz_core', @{ $opt{modules} // [qw(proxy proxy_http)] });
    open my $fh, '>:raw', $conf or die "$conf: $!";
    print $fh qq{ServerRoot "$dir"\nServerName localhost\nListen 127.0.0.1:1\n},
        qq{PidFile "$dir/httpd.pid"\nErrorLog "$dir/error_log"\n},
        map({ qq{LoadModule ${_}_module "$libexec/mod_$_.so"\n} } @modules),
        qq{LoadModule couchpage_module "$module"\n},
        $opt{conf} // qq{<Location "/x/">\nSetHandler couchpage\n$directives\n</Location>\n};
    close $fh;
    my $out = `'$vars->{httpd}' -t -f '$conf' 2>&1`;
    return ($? >> 8, $out);
}

# t/browser/walk.js on URL with ARGS (--screenshot FILE, --expect JSON ...),
# killed after LIMIT seconds; its output in t/logs/browser-NAME.out and .err.
# Returns (exit code, the JSON lines it reported, walk.js's own failures
# from stderr, the whole stderr).
sub browser_walk { return browser_script('walk', @_) }

# The same for t/browser/SCRIPT.js (walk, inplace).
sub browser_script {
    my ($script, $name, $url, $limit, @args) = @_;
    my $vars = Apache::Test::vars();
    my $walk = catfile($vars->{top_dir}, 't', 'browser', "$script.js");
    my $out = catfile($vars->{t_logs}, "browser-$name.out");
    my $err = catfile($vars->{t_logs}, "browser-$name.err");
    my $pid = fork // die "fork: $!";
    if ($pid == 0) {
        open STDIN, '<', '/dev/null';
        open STDOUT, '>', $out or POSIX::_exit(126);
        open STDERR, '>', $err or POSIX::_exit(126);
        { exec 'node', $walk, $url, @args, '--timeout', ($limit - 30) * 1000 };
        POSIX::_exit(127);
    }
    my $deadline = time + $limit;
    while (waitpid($pid, POSIX::WNOHANG()) == 0) {
        if (time > $deadline) {
            kill 'TERM', $pid;
            waitpid($pid, 0);
            last;
        }
        sleep 0.1;
    }
    my $rc = $? >> 8;
    my @report = map { eval { $JSON->decode($_) } // () }
                 do { open my $fh, '<', $out or die "$out: $!"; <$fh> };
    my $stderr = do { local $/; open my $fh, '<', $err or die "$err: $!"; <$fh> } // '';
    # chromium's wrapper script and its own noise are not failures; walk.js's are
    my @failures = grep { /^\Q$script\E\.js:/ } split /\n/, $stderr;
    return ($rc, \@report, \@failures, $stderr);
}

1;
