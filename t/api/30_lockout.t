# SPDX-License-Identifier: Apache-2.0
# CouchDB 3.4's account lockout ([chttpd_auth_lockout]), through httpd, on
# the real CouchDB tier only (REAL_ONLY in scripts/test): a reader account
# of this file's own (made in _users, never the admin) is given a wrong
# password in CouchPageCredentials until CouchDB locks it, and then
#   - CouchDB answers 403 forbidden, with the right password too (asked
#     directly), and a visitor gets 502 backend_error;
#   - after a graceful restart with the password corrected, CouchDB still
#     refuses it, and CP0101 says that this is CouchDB's lockout, how long
#     it lasts, that the right password is refused too, and what to do, as
#     README's troubleshooting table quotes it;
#   - a new password set in _users (a new salt, which CouchDB's lock is
#     keyed by) and a restart with it serve the page at once: nothing in
#     the module remembers the failures.
# The account and the database are removed at the end.
use strict;
use warnings;

use Apache::Test qw(-withtestmore);
use File::Spec::Functions qw(catfile);
use File::Temp qw(tempdir);
use HTTP::Tiny ();
use JSON::PP ();
use MIME::Base64 ();
use Time::HiRes qw(time sleep);
use CouchPageTest qw(start_own_httpd double_url);
use CouchPageWalk qw(double_raw backend_is_double);

if (!$ENV{COUCHPAGE_DOUBLE} || backend_is_double()) {
    plan skip_all => 'needs a real CouchDB (its _users and account lockout): scripts/test with '
        . 'COUCHDB_URL=http://USER:PASSWORD@HOST:PORT runs it in the real tier';
}
plan tests => 13;

my $json = JSON::PP->new->canonical;
(my $couch = double_url()) =~ s{^(https?://)[^@/]*\@}{$1};
$couch =~ s{/+$}{};
my $DB = 'lockout';
my $USER = "lockout-reader-$$";
my ($RIGHT, $WRONG, $NEW) = ('right-password', 'not-the-password', 'a-new-password');

# --- the reader, its database -------------------------------------------------
sub must {
    my ($what, $status, $body) = @_;
    die "$what: $status $body\n" unless $status >= 200 && $status < 300;
    return $json->decode($body);
}
sub user_doc { must("the account $USER", double_raw(GET => "/_users/org.couchdb.user:$USER")) }
END {
    local $?;
    my ($status, $body) = double_raw(GET => "/_users/org.couchdb.user:$USER");
    double_raw(DELETE => "/_users/org.couchdb.user:$USER?rev=" . $json->decode($body)->{_rev}) if $status == 200;
    double_raw(DELETE => "/$DB");
}
double_raw(DELETE => "/$DB");
must("creating $DB", double_raw(PUT => "/$DB"));
must("${DB}'s view", double_raw(PUT => "/$DB/_design/d",
                              $json->encode({ views => { v => { map => 'function (doc) { emit(doc.n, null); }' } } })));
must("${DB}'s documents", double_raw(POST => "/$DB/_bulk_docs",
                                   $json->encode({ docs => [ map { { _id => "doc$_", n => $_ } } 1 .. 3 ] })));
must("the account $USER", double_raw(PUT => "/_users/org.couchdb.user:$USER",
                                     $json->encode({ name => $USER, password => $RIGHT, roles => [], type => 'user' })));
must("${DB}'s members", double_raw(PUT => "/$DB/_security",
                                 $json->encode({ members => { names => [$USER], roles => [] },
                                                 admins => { names => [], roles => [] } })));

# The view as the reader, asked directly: (status, error, reason).
my $http = HTTP::Tiny->new(timeout => 30);
sub as_reader {
    my ($password) = @_;
    my $res = $http->get("$couch/$DB/_design/d/_view/v", { headers => {
        Authorization => 'Basic ' . MIME::Base64::encode_base64("$USER:$password", '') } });
    my $body = eval { $json->decode($res->{content}) } || {};
    return ($res->{status}, $body->{error} // '', $body->{reason} // '');
}
is(join(' ', (as_reader($RIGHT))[0]), '200', 'the reader reads the view with its password');

# --- httpd, with the wrong password ---------------------------------------------
my $root = tempdir('couchpage-lockout-XXXXXX', TMPDIR => 1, CLEANUP => 1);
sub locations {
    my ($password) = @_;
    return <<"CONF";
<Proxy "$couch/">
    ProxySet keepalive=On timeout=10
</Proxy>
<Location "/reader/">
    SetHandler couchpage
    CouchPageView "$couch/$DB/_design/d/_view/v"
    CouchPageCredentials "$USER" "$password"
    CouchPageFormat json
</Location>
CONF
}
my ($port, $pid) = start_own_httpd($root, [qw(proxy proxy_http)], locations($WRONG));

sub page {
    my $res = $http->get("http://127.0.0.1:$port/reader/");
    my $body = eval { $json->decode($res->{content}) } || {};
    return ($res->{status}, $body);
}
# The CP0101 lines of the error log from line FROM on.
sub cp0101_lines {
    my ($from) = @_;
    open my $fh, '<', "$root/error_log" or die "$root/error_log: $!\n";
    my @lines = <$fh>;
    return grep { /CP0101: / } @lines[$from .. $#lines];
}
sub log_length {
    open my $fh, '<', "$root/error_log" or die "$root/error_log: $!\n";
    my @lines = <$fh>;
    return scalar @lines;
}

# Pages until CouchDB locks the account: each page's backend requests fail
# its login; 5 failures (CouchDB's default threshold) lock it.
my (@statuses, @reasons);
for (1 .. 8) {
    my $from = log_length();
    my ($status, $body) = page();
    push @statuses, "$status " . ($body->{error} // '');
    my ($line) = cp0101_lines($from);
    my ($reason) = ($line // '') =~ /failed with \d+: CouchDB answered (\d{3} \w+)/;
    push @reasons, $reason // '(no CP0101 line)';
    last if ($reason // '') eq '403 forbidden';
}
like(join(',', @reasons), qr/^(?:401 unauthorized,){1,5}403 forbidden$/,
     'a wrong password: 401 for at most 5 pages, then CouchDB\'s 403 (' . join(',', @reasons) . ')');
is(join(',', sort { $a cmp $b } keys %{ { map { $_ => 1 } @statuses } }), '502 backend_error',
   'visitors get 502 backend_error throughout');

# CouchDB itself refuses the right password now: the lock is CouchDB's.
my ($status, $error, $reason) = as_reader($RIGHT);
is("$status $error: $reason",
   '403 forbidden: Account is temporarily locked due to multiple authentication failures',
   'CouchDB refuses the right password too, asked directly');

# --- the password corrected, httpd reloaded: CouchDB still refuses -----------------
sub reload {
    my ($password) = @_;
    my $conf = do { local (@ARGV, $/) = "$root/httpd.conf"; <> };
    $conf =~ s/\QCouchPageCredentials "$USER" "\E[^"]*"/CouchPageCredentials "$USER" "$password"/
        or die "no CouchPageCredentials in $root/httpd.conf\n";
    open my $fh, '>', "$root/httpd.conf" or die "$root/httpd.conf: $!\n";
    print $fh $conf;
    close $fh;
    my $from = log_length();
    kill 'USR1', $pid;
    # the restart is done when its start-up line (CP0380) is logged
    my $until = time + 30;
    until (grep { /CP0380: / } do {
               open my $log, '<', "$root/error_log" or die "$root/error_log: $!\n";
               my @lines = <$log>;
               @lines[$from .. $#lines];
           }) {
        die "httpd did not restart in 30 s\n" if time > $until;
        sleep 0.1;
    }
}
reload($RIGHT);
my $from = log_length();
my ($page_status, $page) = page();
is("$page_status " . ($page->{error} // ''), '502 backend_error',
   'with the password corrected, while the lock lasts: 502 backend_error');
my ($line) = cp0101_lines($from);
$line //= '(no CP0101 line)';
like($line, qr{\[couchpage:error\] .*CP0101: the backend queries for /reader/ failed with 502: CouchDB answered 403 forbidden: Account is temporarily locked due to multiple authentication failures: },
     'CP0101 carries CouchDB\'s 403');
like($line, qr{this is CouchDB's account lockout \(\[chttpd_auth_lockout\]\)}, 'and says it is CouchDB\'s lockout');
like($line, qr{until about 5 minutes .* after the first failure}, 'how long it lasts');
like($line, qr{with the right password too}, 'that the right password is refused too');
like($line, qr{Correct CouchPageCredentials .*CouchDB's admin sets the account a new password},
     'and what to do');
unlike($line, qr/\Q$RIGHT\E|\Q$WRONG\E/, 'no password in the line');
# README's troubleshooting row quotes it (its … stands for what it leaves out)
my $readme = do { local (@ARGV, $/) = catfile(Apache::Test::vars()->{top_dir}, 'README.md'); <> };
my ($quoted) = grep { /Account is temporarily locked/ } $readme =~ /^\| 502 `backend_error` \| `([^`]*)`/mg;
like($line, defined $quoted ? qr/failed with 502: ${\ join '.*', map { quotemeta } split m{…}, $quoted}/
                            : qr/^README has no row of the lockout$/,
     'README\'s troubleshooting table quotes the line');

# --- a new password: the lock is gone, and the module serves at once ---------------
my $doc = user_doc();
$doc->{password} = $NEW;
must("the account's new password", double_raw(PUT => "/_users/org.couchdb.user:$USER", $json->encode($doc)));
# CouchDB's user cache follows _users: a moment, at most
my $until = time + 15;
sleep 0.2 until (as_reader($NEW))[0] == 200 || time > $until;
reload($NEW);
($page_status, $page) = page();
is("$page_status " . join(',', map { $_->{id} } @{ $page->{items} || [] }), '200 doc1,doc2,doc3',
   'a new password in _users and in CouchPageCredentials: the page is served at once');
