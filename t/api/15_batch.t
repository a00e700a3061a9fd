# SPDX-License-Identifier: Apache-2.0
# One backend request per page (issue 10): the module plans every query a
# page needs before any is sent and sends them as one multi-query POST
# (CouchDB 2.2 and later), for every combination of a location's options
# (t/conf/batch.conf.in): map views, grouped reduce rows and _all_docs;
# descending, include_docs, page links, a key range and a partition; first
# and later pages, walked both ways.
#
# Counted where the backend counts them:
#  - on a real CouchDB (COUCHPAGE_DOUBLE pointing at one): its own request
#    counters, /_node/_local/_stats/couchdb/httpd: requests (those answered
#    whole; each read counts itself) and aborted_requests (a response ended
#    mid-stream), read as the admin around each combination's pages;
#  - on the CouchDB view double: its request log (the double answers the
#    multi-query endpoint, as CouchDB does; without it these checks fail).
# Also: a token outside the range costs one more request, only then, and is
# the client's 400; a document's many rows under one key take at most one
# more request (the backward query widened); the POSTs keep backend
# connections pooled; a backend without the endpoint (pouchdb-server) is
# paged with GETs, noted once per process in the error log.
use strict;
use warnings;

use Apache::Test qw(-withtestmore);
use Time::HiRes qw(sleep time);
use CouchPageTest qw(double_log double_queries double_port time_wait_count
                     error_log_path backend_url backend_kind);
use CouchPageWalk qw(:all);

my $STARTED = time;
my $DOUBLE = backend_is_double();
note $DOUBLE ? 'backend: the CouchDB view double' : 'backend: a CouchDB (not the double)';

# every combination (2), a later page's POST (1), the first page (5), two
# forged tokens (2 each), one document's many rows (2), pooling (2), a
# backend without the endpoint (3)
plan tests => 2 + 1 + 5 + 2 * 2 + 2 + 2 + 3;

# --- data ----------------------------------------------------------------------
# Five groups of twelve documents keyed [group, k] with repeated k; every
# fifth document emits its key twice (an entry of two rows, which the
# backward query's slack holds). batch_part holds the same in partitions p1
# and p2. One document of batch_flat emits one key twelve times (view many).
my @GROUPS = qw(a b c d e);
sub docs_of {
    my ($prefix) = @_;
    my @docs;
    for my $g (0 .. $#GROUPS) {
        for my $i (0 .. 11) {
            my $n = $g * 12 + $i;
            push @docs, { _id => sprintf('%s%s%03d', $prefix, $GROUPS[$g], (7 * $i) % 12), g => $GROUPS[$g],
                          k => ($i * 5) % 7, n => $n, ($n % 5 == 0 ? (twice => JSON::PP::true) : ()),
                          ($n == 20 ? (many => JSON::PP::true) : ()) };
        }
    }
    return @docs;
}
my %VIEWS = (
    v => { map => q{function (doc) {
        if (!doc.g) return;
        emit([doc.g, doc.k], doc.n);
        if (doc.twice) emit([doc.g, doc.k], 'two');
    }} },
    count => { map => q{function (doc) { if (doc.g) emit([doc.g, doc.k], 1); }}, reduce => '_count' },
    many => { map => q{function (doc) {
        if (!doc.g) return;
        for (var i = 0; i < (doc.many ? 12 : 1); i++) emit(doc.k, i);
    }} },
);
couch_load('batch_flat', docs => [ docs_of('') ], views => \%VIEWS);
couch_load('batch_part', partitioned => 1, docs => [ docs_of('p1:'), docs_of('p2:') ],
           views => { v => $VIEWS{v}, count => $VIEWS{count} });

# --- counting the backend's requests ----------------------------------------------

# CouchDB's requests, answered whole or aborted, in one read that counts
# itself.
sub couch_requests {
    my ($status, $raw) = double_raw(GET => '/_node/_local/_stats/couchdb/httpd');
    die "reading CouchDB's request counters: $status\n" unless $status == 200;
    my $stats = jparse($raw, bytes => 1);
    return jnum(jget(jget($stats, 'requests'), 'value')) + jnum(jget(jget($stats, 'aborted_requests'), 'value'));
}

# The requests the backend served while $code ran (none of the test's own).
sub backend_requests {
    my ($code) = @_;
    if ($DOUBLE) {
        double_log(clear => 1);
        $code->();
        return scalar grep { ($_->{path} // '') =~ m{^/batch_} } double_log();
    }
    my $before = couch_requests();
    $code->();
    # the counter may lag: read until two reads in a row see only themselves
    my ($last, $deadline) = (couch_requests(), time + 10);
    while (time < $deadline) {
        sleep 0.05;
        my $now = couch_requests();
        return $last - $before - 1 if $now == $last + 1;
        $last = $now;
    }
    die "CouchDB's request counter did not settle\n";
}

# --- every combination --------------------------------------------------------------
my @COMBINATIONS;
for my $kind (qw(map reduce ids)) {
    for my $mask (0 .. 31) {
        my @opts = grep { $mask & (1 << $_->[1]) } ([desc => 0], [docs => 1], [links => 2], [range => 3], [part => 4]);
        next if $kind eq 'reduce' and grep { $_->[0] eq 'docs' } @opts;    # grouped rows have no documents
        push @COMBINATIONS, "/batch/$kind/" . (join('.', map { $_->[0] } @opts) || 'plain') . '/';
    }
}

# First page, three pages by next, one back by prev: the pages and their
# problems (a status other than 200, a missing token).
sub walk_some {
    my ($path) = @_;
    my (@pages, @problems);
    my $page = module_page($path);
    push @pages, $page;
    for (1 .. 3) {
        last unless defined $page->{next};
        $page = module_page($path, start => $page->{next});
        push @pages, $page;
    }
    push @pages, module_page($path, start => $page->{prev}) if defined $page->{prev};
    push @problems, map { "$_->{path}: $_->{status}" } grep { $_->{status} != 200 } @pages;
    push @problems, "$path: only " . scalar(@pages) . ' pages' if @pages < 5;
    return (\@pages, \@problems);
}

{
    my (@wrong, @problems, $pages);
    for my $path (@COMBINATIONS) {
        my ($walked, $problems);
        my $requests = backend_requests(sub { ($walked, $problems) = walk_some($path) });
        push @problems, @$problems;
        $pages += @$walked;
        if (!$DOUBLE && $requests != @$walked) {
            # CouchDB's counters are the whole server's: a request of
            # anything else (or an earlier abort counted late) lands in
            # them too. A module that asks too often does so again.
            diag "$path: $requests of CouchDB's requests for " . scalar(@$walked)
                . ' pages; walked again';
            $requests = backend_requests(sub { ($walked, $problems) = walk_some($path) });
            push @problems, @$problems;
        }
        push @wrong, "$path: $requests backend requests for " . scalar(@$walked) . ' pages'
            if $requests != @$walked;
    }
    is(join("\n", @problems), '', scalar(@COMBINATIONS) . ' combinations of options: every page served');
    is(join("\n", @wrong), '', "one backend request per page, first and later, in every combination ($pages pages)");
}

SKIP: {
    # what the double saw: one POST of every query of a later page
    skip 'only the double logs what it received', 1 unless $DOUBLE;
    my $first = module_page('/batch/map/docs.links.range/');
    double_log(clear => 1);
    my $page = module_page('/batch/map/docs.links.range/', start => $first->{next});
    my @log = grep { ($_->{path} // '') =~ m{^/batch_} } double_log();
    my @queries = double_queries(@log);
    is(join(' ', map { "$_->{method} $_->{path}" } @log) . ' / ' . scalar(@queries) . ' queries',
       'POST /batch_flat/_design/d/_view/v/queries / 5 queries',
       'a later page with documents, links and a range: one POST of its five queries '
       . '(the range start and end probes, forward, ahead, backward)');
}

# --- the first page: linked by its own URL ----------------------------------------
# The backward query passes over rows it only counts (skip); behind a token
# at the location's first row there are none to count, so that page takes
# a second round. The module's links never lead there.
{
    my $path = '/batch/map/plain/';
    my $first = module_page($path);
    my $second = module_page($path, start => $first->{next});
    my $prev_url = jstr(jget(jget($second->{tree}, 'links'), 'prev'));
    is($prev_url, $path, "page 2: links.prev is the first page's own URL, without a token");
    my ($via_link, $via_token);
    my $requests = backend_requests(sub { $via_link = module_page($prev_url) });
    is_deeply($via_link->{rows}, $first->{rows}, '... which gives the first page');
    is($requests, 1, '... in one backend request');
    $requests = backend_requests(sub { $via_token = module_page($path, start => $second->{prev}) });
    is_deeply($via_token->{rows}, $first->{rows}, "page 2's prev token gives the first page's rows too");
    ok($requests >= 1 && $requests <= 2, "... in at most 2 backend requests ($requests)");
}

# --- errors and the second round -------------------------------------------------
{
    my @forged = (['["a", 1]', 'a0', 'below'], ['["e", 1]', 'e0', 'above']);
    for my $case (@forged) {
        my ($key, $id, $where) = @$case;
        my $page;
        my $requests = backend_requests(sub {
            $page = module_page('/batch/map/range/', start => "[$key,\"$id\"]");
        });
        is("$page->{status} " . ($page->{error} // ''), '400 bad_request', "a token $where the range: the client's 400");
        is($requests, 2, "a token $where the range: the batch, and the refused query alone");
    }
}

{
    # twelve rows of one document under one key: pages of 2 that end in them
    # widen the backward query once
    my $want = double_view('/batch_flat/_design/d/_view/many', reduce => 'false');
    my ($problems, $pages) = check_walk('/batch-wide/', 2, $want->{rows});
    is(join("\n", @$problems), '', 'a document emitting one key twelve times, 2 a page: every row once, both ways');
    my @counts;
    my $token;
    for (1 .. 40) {
        my $page;
        push @counts, backend_requests(sub { $page = module_page('/batch-wide/', limit => 2,
                                                                 defined $token ? (start => $token) : ()) });
        $token = $page->{next} // last;
    }
    my $most = (sort { $b <=> $a } @counts)[0];
    ok($most <= 2 && grep({ $_ == 2 } @counts) && grep({ $_ == 1 } @counts),
       'one request a page, two where the backward query widens (' . join(',', @counts) . ')');
}

# --- pooled connections ------------------------------------------------------------
{
    my $first = module_page('/batch/map/links/');
    my $port = double_port();
    my $before = time_wait_count($port);
    my $failed = 0;
    for (1 .. 200) {
        $failed++ unless module_page('/batch/map/links/', start => $first->{next})->{status} == 200;
    }
    my $new = time_wait_count($port) - $before;
    is($failed, 0, '200 later pages answered');
    ok($new < 10, "their backend connections pooled: $new new TIME_WAIT sockets (a connection a page would leave 200)");
}

# --- a backend without the endpoint -------------------------------------------------
# In the real tier COUCHPAGE_BACKEND is the CouchDB too, which has the endpoint.
SKIP: {
    skip('COUCHPAGE_BACKEND is ' . backend_kind() . ', which has the multi-query endpoint: '
         . 'the fallback is checked with pouchdb-server', 3) unless backend_kind() eq 'pouchdb-server';
    my $first = module_page('/bands/', limit => 3);
    my $later = module_page('/bands/', limit => 3, start => $first->{next});
    is($later->{status}, 200, 'pouchdb-server (no multi-query endpoint): a later page is served');
    my $backend = backend_url();
    my @notes;
    for (1 .. 30) {
        open my $fh, '<', error_log_path() or die error_log_path() . ": $!";
        @notes = grep { /CP0107: \Q$backend\E has no multi-query endpoint/ } <$fh>;
        last if @notes;
        sleep 0.1;
    }
    my %per_process;
    $per_process{$_}++ for map { /\[pid (\d+)/ ? $1 : 'unknown' } @notes;
    ok(@notes && !grep({ $_ > 1 } values %per_process),
       'its lack of the endpoint is noted once in each process that met it (' . scalar(@notes) . ' notes, '
       . scalar(keys %per_process) . ' processes)');
    like($notes[0] // '', qr/\[couchpage:notice\]/, '... at notice');
}

diag sprintf('15_batch: %.1f s', time - $STARTED);
