# SPDX-License-Identifier: Apache-2.0
# README.md's "Page your own CouchDB", done as a new user would, against the
# real CouchDB of the real tier (scripts/test with COUCHDB_URL; .ci/run):
#  - step 2's shell commands, run as written (with $COUCH the test's CouchDB
#    admin URL) on the database `blog`, which the test first fills with
#    posts, make the view posts/by_date and the Mango index posts-find,
#    and the reader account, and give it the database;
#  - step 3's httpd.conf is conf/couchpage-minimal.conf, line for line; it
#    is run as written but for what a test machine must change: the port,
#    the pid file, the module paths (apxs -q LIBEXECDIR, the built module)
#    and CouchDB's address. httpd -t takes it, and its pages walk the whole
#    view with their documents, numbered absolutely, every row once, with
#    every member the README's JSON example shows; the `_find` location
#    step 3 shows, beside it, pages the same posts by the index, numbered;
#  - the troubleshooting table: each error-log line it quotes is the one
#    the module writes for that mistake (a location each, added to the
#    configuration), with the status and error the table gives visitors.
# Needs CouchDB's _users and _security: the real tier only (REAL_ONLY).
use strict;
use warnings;

use Apache::Test qw(-withtestmore);
use File::Spec::Functions qw(catfile);
use File::Temp qw(tempdir);
use HTTP::Tiny ();
use JSON::PP ();
use CouchPageTest qw(free_port start_own_httpd reap_process);
use CouchPageWalk qw(double_raw backend_is_double);

my $COUCH = $ENV{COUCHPAGE_DOUBLE};
if (!$COUCH || backend_is_double()) {
    plan skip_all => 'needs a real CouchDB (its _users and _security): scripts/test with '
        . 'COUCHDB_URL=http://USER:PASSWORD@HOST:PORT runs it in the real tier';
}
$COUCH =~ s{/+$}{};
my ($HOST_PORT) = $COUCH =~ m{^http://(?:[^@/]*\@)?([^/]+)} or die "COUCHPAGE_DOUBLE is not a URL: $COUCH\n";
my $ADMIN_URL = "http://$ENV{COUCHPAGE_DOUBLE_USER}:$ENV{COUCHPAGE_DOUBLE_PASSWORD}\@$HOST_PORT";

my $vars = Apache::Test::vars();
my $top = $vars->{top_dir};
my $readme = do { local (@ARGV, $/) = catfile($top, 'README.md'); <> };
my $minimal = do { local (@ARGV, $/) = catfile($top, 'conf', 'couchpage-minimal.conf'); <> };

# The troubleshooting table's rows: [code, error, what the log says, aside],
# and the location that makes each happen (undef: a row this test cannot
# make happen).
my @TABLE = $readme =~ /^\| (\d{3}) `(\w+)` \| `([^`]*)`([^|]*)\|/mg;
my %location_of = ('You are not authorized' => 'noauth', 'Name or password is incorrect' => 'wrongpw',
                   'missing_named_view' => 'noview', 'not_found: missing' => 'noddoc',
                   'Database does not exist' => 'nodb', 'no_usable_index' => 'noindex',
                   'the backend is unavailable' => 'down', 'query_parse_error' => 'reversed',
                   'did not answer in time' => undef,
                   # it locks an account for minutes: t/api/30_lockout.t, with a throwaway account
                   'Account is temporarily locked' => undef);
# a key ends where a word does: 'not_found: missing' is not the row 'not_found: missing_named_view'
sub table_key { my ($says) = @_; return (grep { $says =~ /\Q$_\E(?!\w)/ } keys %location_of)[0] }

# The plan, from the table: ten tests, and for each row one (a row this test
# knows), then for each row it can make happen three, and one more for a
# line the row says comes before it.
my $planned = 12;
for (my $i = 0; $i < @TABLE; $i += 4) {
    my ($says, $aside) = @TABLE[$i + 2, $i + 3];
    my $key = table_key($says);
    $planned += 1;
    $planned += 3 + ($aside =~ /\(after `CP\d{4}: [^`]*`/ ? 1 : 0) if defined $key && defined $location_of{$key};
}
plan tests => $planned;

# The README's fenced blocks of a language, in order.
sub blocks {
    my ($lang) = @_;
    return $readme =~ /^```\Q$lang\E\n(.*?)^```$/msg;
}

# --- step 3 is conf/couchpage-minimal.conf ------------------------------------
my ($conf) = blocks('apache');
ok(defined $conf, "README has step 3's httpd.conf");
(my $file = $minimal) =~ s/^#.*\n//mg;
my $readme_conf = $conf =~ s/^#.*\n//mgr;
is($file, $readme_conf, 'conf/couchpage-minimal.conf is README\'s step 3, line for line (comments aside)');

# --- the database, then step 2 as written ----------------------------------
my $json = JSON::PP->new->canonical;
my @dates = map { sprintf('2024-05-%02dT%02d:%02d:00Z', 1 + int($_ / 4), 8 + $_ % 4, $_ % 3) } 0 .. 52;
double_raw(DELETE => '/blog');
my ($status, $body) = double_raw(PUT => '/blog');
die "creating blog: $status $body\n" unless $status == 201 || $status == 202;
# posts that share a date (several a minute), so that startkey_docid matters
my @posts = map { { _id => sprintf('post%03d', $_), title => "Post $_ <&>", date => $dates[int($_ * 53 / 60)] } } 0 .. 59;
($status, $body) = double_raw(POST => '/blog/_bulk_docs', $json->encode({ docs => \@posts }));
die "loading blog: $status $body\n" unless $status == 201 || $status == 202;
# a reader account left by an earlier run would make step 2's PUT a 409
my ($user_status, $user) = double_raw(GET => '/_users/org.couchdb.user:pager');
if ($user_status == 200) {
    my $rev = $json->decode($user)->{_rev};
    double_raw(DELETE => "/_users/org.couchdb.user:pager?rev=$rev");
}

my ($step2) = grep { /_security/ } blocks('sh');
ok(defined $step2, "README has step 2's commands");
(my $script = $step2) =~ s/^COUCH=.*$/COUCH='$ADMIN_URL'/m;
my $script_file = catfile(tempdir(CLEANUP => 1), 'step2.sh');
open my $sh, '>', $script_file or die "$script_file: $!\n";
print $sh $script;
close $sh;
my $out = `bash '$script_file' 2>&1` // '';
# what each command answers: the design document, the index, the account, the members
my @answers = $out =~ /(\{"(?:ok":true|result":"created")[^}]*\})/g;
is(join(' ', map { /"id":"([^"]*)"/ ? $1 : /"ok":true/ ? 'ok' : '?' } @answers),
   '_design/posts _design/posts-find org.couchdb.user:pager ok',
   "step 2's four commands succeed (the view, the index, the account, the database's members)")
    or diag($out);

# --- step 3 run, with the troubleshooting table's mistakes beside it ----------
my $port = free_port();
chomp(my $libexec = `'$vars->{apxs}' -q LIBEXECDIR 2>/dev/null` || '/usr/lib/apache2/modules');
my $root = tempdir(CLEANUP => 1);
chmod 0755, $root;
my $run = $conf;
# step 3's _find location, beside /posts/
my (undef, $find_location) = blocks('apache');
ok(defined $find_location && $find_location =~ m{^\s*<Location "/find/posts/">}, 'README shows a _find location after step 3');
$run =~ s{^</IfModule>\n\z}{$find_location</IfModule>\n}m or die "step 3 does not end with </IfModule>\n";
$run =~ s/^Listen 127\.0\.0\.1:8080$/Listen 127.0.0.1:$port/m or die "step 3 has no Listen 127.0.0.1:8080\n";
$run =~ s{^PidFile .*$}{PidFile "$root/httpd.pid"\nDefaultRuntimeDir "$root"}m or die "step 3 has no PidFile\n";
$run =~ s{/usr/lib/apache2/modules/mod_couchpage\.so}{catfile($top, '.libs', 'mod_couchpage.so')}e
    or die "step 3 loads no mod_couchpage.so\n";
$run =~ s{/usr/lib/apache2/modules/}{$libexec/}g;
$run =~ s{http://127\.0\.0\.1:5984/}{http://$HOST_PORT/}g;
my $view = "http://$HOST_PORT/blog/_design/posts/_view/by_date";
my $down = 'http://127.0.0.1:' . free_port() . '/blog/_design/posts/_view/by_date';
my %MISTAKE = (
    noauth   => qq{CouchPageView "$view"},
    wrongpw  => qq{CouchPageView "$view"\n    CouchPageCredentials pager "not-the-password"},
    noview   => qq{CouchPageView "http://$HOST_PORT/blog/_design/posts/_view/by_title"\n    CouchPageCredentials pager "READER-PASSWORD"},
    noddoc   => qq{CouchPageView "http://$HOST_PORT/blog/_design/post/_view/by_date"\n    CouchPageCredentials pager "READER-PASSWORD"},
    nodb     => qq{CouchPageView "http://$HOST_PORT/no_such_blog/_design/posts/_view/by_date"\n    CouchPageCredentials pager "READER-PASSWORD"},
    # a _find sorted by a field no index sorts
    noindex  => qq{CouchPageView "http://$HOST_PORT/blog/_find"\n    CouchPageCredentials pager "READER-PASSWORD"\n    CouchPageSort title},
    down     => qq{CouchPageView "$down"},
    reversed => qq{CouchPageView "$view"\n    CouchPageCredentials pager "READER-PASSWORD"\n    CouchPageRange '"2024-06"' '"2024-05"'},
);
$run .= join '', map { qq{<Location "/$_/">\n    Require all granted\n    SetHandler couchpage\n    $MISTAKE{$_}\n</Location>\n} }
    sort keys %MISTAKE;
open my $fh, '>', "$root/httpd.conf" or die "$root/httpd.conf: $!\n";
print $fh $run;
close $fh;

my $syntax = `'$vars->{httpd}' -t -f '$root/httpd.conf' 2>&1`;
like($syntax, qr/Syntax OK/, 'httpd -t takes step 3\'s configuration');

my $pid = CouchPageTest::spawn_process('step 3\'s httpd', "$root/stdout.log", $vars->{httpd}, '-f',
                                        "$root/httpd.conf", '-DFOREGROUND');
CouchPageTest::wait_for_port($port, 'step 3\'s httpd', $pid);
my $http = HTTP::Tiny->new(timeout => 30);

# every page, by links.next, and the members the README's example shows
my ($example) = blocks('json');
# the example's members: its items' own aside, links' named links.NAME
(my $members_text = $example) =~ s/("items": \[).*?\],\n/$1],\n/s;
my ($links_text) = $members_text =~ s/"links": \{(.*?)\}/"links": {}/s ? ($1) : ('');
my @shown = (($members_text =~ /"(\w+)":/g), map { "links.$_" } $links_text =~ /"(\w+)":/g);
my (@seen, %members, @problems);
my $path = '/posts/';
for my $n (1 .. 10) {
    my $res = $http->get("http://127.0.0.1:$port$path");
    my $page = $res->{status} == 200 ? eval { $json->decode($res->{content}) } : undef;
    unless ($page) {
        push @problems, "$path: $res->{status} $res->{content}";
        last;
    }
    $members{$_} = 1 for keys %$page, map { "links.$_" } keys %{ $page->{links} || {} };
    push @problems, "$path: numbering $page->{numbering}" unless ($page->{numbering} // '') eq 'absolute';
    push @problems, "$path: first_row $page->{first_row}, not " . (@seen + 1)
        unless ($page->{first_row} // 0) == @seen + 1;
    push @problems, "$path: an item without its document"
        if grep { ref $_->{doc} ne 'HASH' || $_->{doc}{_id} ne $_->{id} } @{ $page->{items} };
    push @seen, map { $_->{id} } @{ $page->{items} };
    last unless $page->{links}{next};
    $path = $page->{links}{next};
}
# newest first (CouchPageDescending On): the view's order, date and id, reversed
my @want = map { $_->{_id} } sort { $b->{date} cmp $a->{date} || $b->{_id} cmp $a->{_id} } @posts;
is_deeply(\@problems, [], 'step 3 pages the view: numbered absolutely, with documents, one page after another');
is(join(',', @seen), join(',', @want), 'the walk by links.next gives every post once, newest first');
# the _find location: the same posts, numbered, its items the documents
my (@found, @find_problems);
$path = '/find/posts/';
for my $n (1 .. 10) {
    my $res = $http->get("http://127.0.0.1:$port$path");
    my $page = $res->{status} == 200 ? eval { $json->decode($res->{content}) } : undef;
    unless ($page) {
        push @find_problems, "$path: $res->{status} $res->{content}";
        last;
    }
    push @find_problems, "$path: numbering $page->{numbering}" unless ($page->{numbering} // '') eq 'absolute';
    push @find_problems, "$path: first_row " . ($page->{first_row} // 'none') . ', not ' . (@found + 1)
        unless ($page->{first_row} // 0) == @found + 1;
    push @find_problems, "$path: an item that is no post" if grep { !defined $_->{_id} || !defined $_->{date} } @{ $page->{items} };
    push @found, map { $_->{_id} // '' } @{ $page->{items} };
    last unless $page->{links}{next};
    $path = $page->{links}{next};
}
is(join(',', @find_problems, @found), join(',', @want),
   'the _find location of step 3 pages every post once, newest first, numbered, by step 2\'s index');
ok(@shown >= 10, 'the README\'s JSON example shows members (' . scalar(@shown) . ')');
is(join(',', grep { !$members{$_} } sort @shown), '', 'every member of the README\'s JSON example is on the pages');

# the troubleshooting table, row by row (@TABLE, %location_of: above)
my $rows = 0;
my @rows = @TABLE;
while (my ($code, $error, $says, $aside) = splice @rows, 0, 4) {
    my $key = table_key($says);
    ok(defined $key, "the table's row '$says' is one this test knows") or next;
    # a timeout needs a backend that stalls: t/api/06_faults.t on the view double
    next unless defined $location_of{$key};
    $rows++;
    my $where = $location_of{$key};
    my $res = $http->get("http://127.0.0.1:$port/$where/");
    my $answer = eval { $json->decode($res->{content}) } || {};
    is("$res->{status} " . ($answer->{error} // ''), "$code $error", "/$where/: visitors get $code $error");
    # the table's … stands for what it leaves out
    my $quoted = join '.*', map { quotemeta } split /…/, $says;
    my @log = do {
        open my $log, '<', "$root/stdout.log" or die "$root/stdout.log: $!\n";
        <$log>;
    };
    my ($line) = grep { m{CP0101: the backend queries for /$where/ } } @log;
    like($line // '(no CP0101 line)', qr/failed with $code: $quoted(?![\w])/,
         "/$where/: the error log says what the table quotes");
    # a line the table says comes before it, at the level step 3 logs
    if (my ($before) = $aside =~ /\(after `(CP\d{4}: [^`]*)`/) {
        ok(scalar(grep { index($_, $before) >= 0 } @log), "/$where/: and before it, $before");
    }
    # and nothing else at error level: mod_proxy's lines for the module's
    # requests are quiet
    my $tried = join '|', grep { defined } values %location_of;
    is(join('', grep { /:(?:error|crit|alert|emerg)\]/ && !m{CP0101: the backend queries for /(?:$tried)/ } } @log),
       '', "/$where/: no other line at error level");
}
ok($rows >= 8, "the table's rows were tried ($rows)");

kill 'TERM', $pid;
reap_process($pid, time + 20);
