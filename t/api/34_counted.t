# SPDX-License-Identifier: Apache-2.0
# Counted _find locations (issue 41): a selector with a residual condition
# ($elemMatch, $regex), which no index's view numbers, is counted by
# CouchPageCount on its first and its Last page, and the count travels in
# the tokens, so that every page shows total_rows, first_row and last_row
# equal to the backend's own _find of the selector read whole, walked both
# ways. A capped count says "at least N" past N; Prefer: count=... is
# honoured within the location's policy (Preference-Applied); every JSON
# page carries Content-Range; a walk while documents are added and deleted
# shows a count of some moment and loses or repeats no row; a forged count
# in a token is a wrong number on that page or a 400, never a 5xx; in a
# partition (CouchDB) the count is bounded by the partition's view of the
# index as outside one, and sorted by _id alone by _all_docs; on CouchDB's
# 3-node cluster (COUCHDB_CLUSTER_URLS) a residual $elemMatch and $regex
# are walked both ways and jumped to as the cluster's own _find; and
# apachectl -t refuses a bad CouchPageCount.
use strict;
use warnings;

use Apache::Test qw(plan ok skip);
use File::Temp qw(tempdir);
use HTTP::Tiny ();
use JSON::PP ();
use CouchPageTest qw(get_json with_args backend_request backend_open_db httpd_config_test
                     error_log_mark error_log_since backend_kind start_own_httpd live_cluster
                     cluster_node cluster_db_anew);
use CouchPageFind qw(must reference_ids ids walk same_list bounded_count numbers_agree html_text);

my @CLUSTER = live_cluster();
plan tests => 39 + (@CLUSTER ? 6 : 0);

my $JSON = JSON::PP->new->utf8->canonical;
my $SIZE = 7;

sub load {
    my ($db, $n) = @_;
    backend_request(DELETE => "/$db");
    backend_open_db($db);
    # tags and titles in no order of n: a third of the documents tagged "a",
    # about half titled "T..."
    my @docs = map {
        { _id => sprintf('c%04d', ($_ * 7919) % 10000), n => $_ % 40,
          tags => [($_ * 31) % 3 == 0 ? 'a' : 'b', 'z'],
          title => ($_ * 17) % 2 ? "T$_" : "x$_" }
    } 0 .. $n - 1;
    must("loading $db", backend_request(POST => "/$db/_bulk_docs", { docs => \@docs }));
    must("index by-n of $db", backend_request(POST => "/$db/_index",
        { index => { fields => ['n'] }, ddoc => 'by-n', name => 'by-n', type => 'json' }));
    index_ready($db);
}

# A cluster's node may answer a sorted _find no_usable_index for a moment
# after the index is made: wait (at most 10 s) until it sorts by n.
sub index_ready {
    my ($db) = @_;
    for (1 .. 100) {
        my ($status) = backend_request(POST => "/$db/_find",
            { selector => { n => { '$gte' => undef } }, sort => ['n'], limit => 1 });
        return if $status == 200;
        select(undef, undef, undef, 0.1);
    }
}
# Documents CouchDB's Mango queries examined so far, every node's (the
# module's requests may reach any node of a cluster).
sub docs_examined {
    my ($st, $members) = backend_request(GET => '/_membership');
    my $sum = 0;
    for my $node (@{ $members->{cluster_nodes} // [] }) {
        my ($s, $stats) = backend_request(GET => "/_node/$node/_stats/mango/docs_examined");
        $sum += $stats->{value} // 0;
    }
    return $sum;
}
load('counted', 300);

my $ELEM = { n => { '$gte' => undef }, tags => { '$elemMatch' => { '$eq' => 'a' } } };
my $REGEX = { n => { '$gte' => undef }, title => { '$regex' => '^T' } };
my @elem = reference_ids('counted', $ELEM, n => 'asc');
my @regex = reference_ids('counted', $REGEX, n => 'desc');
my $COUCHDB = backend_kind() eq 'couchdb';
# A location's first page counted, then not (Prefer: count=none): (status,
# page, status, page, the documents the count examined, those the page
# alone examined); on CouchDB only the examined (0 elsewhere).
sub counted_and_not {
    my ($path) = @_;
    my $before = $COUCHDB ? docs_examined() : 0;
    my ($s1, $counted) = get_json($path);
    my $between = $COUCHDB ? docs_examined() : 0;
    my ($s2, $uncounted) = get_json($path, Prefer => 'count=none');
    my $after = $COUCHDB ? docs_examined() : 0;
    return ($s1, $counted, $s2, $uncounted, ($between - $before) - ($after - $between),
            $after - $between);
}
# what capped 20 says of /counted/capped/: on CouchDB the matches among the
# first rows of the index's view (bounded_count), else at least 20
my ($CAPPED) = bounded_count('counted', '_design/by-n/_view/by-n', \@elem, 20);
sub at_least { my ($n) = @_; return $CAPPED > $n ? $CAPPED : $n }

# --- walked both ways, every page's numbers the backend's ---------------------
{
    my ($fwd, $pages, $bad) = walk('/counted/elem/');
    my ($back, $bpages, $bbad) = walk('/counted/elem/', back => 1);
    ok(@elem > 3 * $SIZE && same_list($fwd, \@elem, '$elemMatch, forward')
       && same_list($back, \@elem, '$elemMatch, backward') && !@$bad && !@$bbad);
    ok(numbers_agree($pages, \@elem, 0, '$elemMatch forward', $SIZE, \&ids));
    ok(numbers_agree($bpages, \@elem, 1, '$elemMatch backward', $SIZE, \&ids));
    my ($rfwd, $rpages) = walk('/counted/regex/');
    my ($rback, $rbpages) = walk('/counted/regex/', back => 1);
    ok(@regex > 3 * $SIZE && same_list($rfwd, \@regex, '$regex, forward')
       && same_list($rback, \@regex, '$regex, backward'));
    ok(numbers_agree($rpages, \@regex, 0, '$regex forward', $SIZE, \&ids)
       && numbers_agree($rbpages, \@regex, 1, '$regex backward', $SIZE, \&ids));
    # sealed tokens carry the count unseen
    my ($sfwd, $spages) = walk('/counted/sealed/');
    # (walking back from the Last page's sealed token, which its links give)
    my ($sback, $sbpages) = ([], []);
    my ($token) = ($spages->[0]{links}{last} // '') =~ /[?&]start=([^&]+)/;
    $token =~ s/%([0-9a-fA-F]{2})/chr hex $1/ge if defined $token;
    while (defined $token && @$sbpages < 100) {
        my ($status, $page) = get_json(with_args('/counted/sealed/', start => $token));
        last if $status != 200;
        push @$sbpages, $page;
        unshift @$sback, ids($page);
        $token = $page->{prev};
    }
    ok(same_list($sfwd, \@regex, 'sealed, forward') && same_list($sback, \@regex, 'sealed, backward')
       && numbers_agree($spages, \@regex, 0, 'sealed forward', $SIZE, \&ids)
       && numbers_agree($sbpages, \@regex, 1, 'sealed backward', $SIZE, \&ids)
       && ($spages->[1]{next} // '') !~ /"t"/);
    # numbered page links: the second page links pages 1 to 4 by number
    my @numbers = map { $_->{number} } @{ $pages->[1]{pages} // [] };
    ok("@numbers" eq '1 2 3 4') or print STDERR "# page links: @numbers\n";
}

# --- the default CouchPageCount: counted where the index's view bounds it ----
# (CouchDB: numbered as /counted/elem/), not where none does (pouchdb-server:
# relative, CP0434 once, and ?page=2 a 400), where a count would read every
# document until N + 1 match
{
    my $mark = error_log_mark();
    my ($s, $page) = get_json('/counted/default/');
    my ($sj, $jumped) = get_json('/counted/default/?page=2');
    # a count preferred is said applied only where the page is counted
    my (undef, undef, $preferred) = get_json('/counted/default/', Prefer => 'count=estimated');
    my $applied = $preferred->header('Preference-Applied') // '';
    my @said = grep { /CP0434/ } error_log_since($mark, wait => 2);
    ok($s == 200 && join(' ', ids($page)) eq join(' ', @elem[0 .. $SIZE - 1])
       && ($COUCHDB
           ? ($page->{numbering} // '') eq 'absolute' && ($page->{total_rows} // -1) == @elem
             && $sj == 200 && ($jumped->{first_row} // -1) == $SIZE + 1 && !@said
             && $applied eq 'count=estimated'
           : ($page->{numbering} // '') eq 'relative' && $sj == 400 && $applied eq ''
             && ($jumped->{reason} // '') =~ /rows are not counted/
             # (once a child)
             && @said >= 1 && !grep({ !/are not counted: .*set CouchPageCount capped N/ } @said)))
        or print STDERR "# default: $s ", $JSON->encode({ %$page, items => [ids($page)] }),
                        " page=2: $sj; Preference-Applied: $applied; @said\n";
}

# --- a later page is one backend request: the count travels in the token ------
{
    my ($status, $first) = get_json('/counted/capped/?format=json');
    my $mark = error_log_mark();
    my ($s2, $second) = get_json(with_args('/counted/capped/', start => $first->{next},
                                           format => 'json'));
    # (a child's first request may learn the index too: _explain, a look)
    my @requests = grep { /CP0150/ && m{/_find\b} } error_log_since($mark, wait => 2,
                                                                     until => 'CP0151');
    ok($s2 == 200 && @requests == 1 && ($second->{first_row} // -1) == $SIZE + 1)
        or print STDERR "# $s2 requests: @requests\n";
    # the first page's count: the page's _find and the count's, and on
    # CouchDB one look at the index's view before the count's
    $mark = error_log_mark();
    get_json('/counted/capped/?format=json');
    my @lines = error_log_since($mark, wait => 2, until => 'CP0151');
    my @count = grep { /CP0430/ } @lines;
    my $looks = grep { /CP0150/ && m{/_view/by-n\?reduce=false&limit=21\b} } @lines;
    ok((grep { /CP0150/ && m{/_find\b} } @lines) == 2 && @count == 1
       && $count[0] =~ /at least $CAPPED rows/ && $count[0] =~ /at most 21/
       && $looks == ($COUCHDB ? 1 : 0))
        or print STDERR "# at least $CAPPED: @lines\n";
}

# --- capped: at least N past N -------------------------------------------------
{
    my ($fwd, $pages) = walk('/counted/capped/', headers => [Accept => 'application/json']);
    my @past = grep { ($_->{first_row} // 0) > 20 } @$pages;
    my @wrong = grep {
        ($_->{count} // '') ne 'at least' || ($_->{total_rows} // -1) < $CAPPED
        || ($_->{total_rows} // -1) < ($_->{last_row} // 0) || defined $_->{last_page}
    } grep { ($_->{numbering} // '') eq 'absolute' } @$pages;
    ok(same_list($fwd, \@elem, 'capped walk') && @past >= 2 && !@wrong)
        or print STDERR "# ", scalar(@past), " past 20; wrong: ",
                        join(' ', map { $JSON->encode({ %$_, items => [] }) } @wrong), "\n";
    # its first page's numbers, exact up to the page
    # (the larger of the count and the page's last row)
    ok(($pages->[0]{first_row} // -1) == 1 && ($pages->[0]{count} // '') eq 'at least'
       && ($pages->[0]{total_rows} // -1) == at_least(7));
    my ($one, $two) = (at_least(7), at_least(14));
    my $res = Apache::TestRequest::GET('/counted/capped/?format=html');
    ok($res->code == 200 && html_text($res) =~ /1\x{e2}\x{80}\x{93}7 of $one\+/)
        or print STDERR "# ", $res->content, "\n";
    my $second = Apache::TestRequest::GET(with_args('/counted/capped/', format => 'html',
                                                    start => $pages->[0]{next}));
    ok($second->code == 200 && html_text($second) =~ /8\x{e2}\x{80}\x{93}14 of $two\+ \(as counted earlier\)/)
        or print STDERR "# ", $second->content, "\n";
}

# --- a count reads at most N + 1 documents, however few match -----------------
# 200 documents, n from 0 to 199 (the index by-n), 15 "rare" ones at the
# end of that order: the first page is full only once the page's own _find
# has read every document; its count, capped 20, reads on CouchDB the first
# 21 rows of the index's view, keys only, and then the documents of at most
# 20 of them (CouchDB's own count of documents examined by its Mango
# queries, every node's, the first page with its count less the same page
# without one),
# where a keys-only _find of the selector, limit 21, reads all 200. Where no
# index's view bounds it (pouchdb-server), the count is that _find, said
# once at info (CP0434). One shard: the page's own _find, read twice, then
# examines the same documents each time (shards read ahead of a _find's
# limit as their answers race).
{
    backend_request(DELETE => '/countrare');
    backend_open_db('countrare', 'q=1');
    must('loading countrare', backend_request(POST => '/countrare/_bulk_docs', { docs => [
        map { { _id => sprintf('r%03d', (199 - $_) * 7 % 200), n => $_, rare => $_ >= 185 ? JSON::PP::true : JSON::PP::false } }
        0 .. 199 ] }));
    must('index by-n of countrare', backend_request(POST => '/countrare/_index',
        { index => { fields => ['n'] }, ddoc => 'by-n', name => 'by-n', type => 'json' }));
    index_ready('countrare');
    my $sel = { n => { '$gte' => undef }, rare => { '$eq' => JSON::PP::true } };
    my @rare = reference_ids('countrare', $sel, n => 'asc');
    my ($total, $kind) = bounded_count('countrare', '_design/by-n/_view/by-n', \@rare, 20);
    my $mark = error_log_mark();
    my ($s1, $counted, $s2, $uncounted, $count_read, $page_read) = counted_and_not('/counted/rare/');
    my $shown = $total > 7 ? $total : 7;
    my $ok = $s1 == 200 && $s2 == 200 && @rare == 15 && ($counted->{count} // '') eq $kind
        && ($counted->{total_rows} // -1) == ($kind eq 'exact' ? $total : $shown)
        && join(' ', ids($counted)) eq join(' ', @rare[0 .. 6]) && !defined $uncounted->{count};
    if ($COUCHDB) {
        my $plain = must('the keys-only _find', backend_request(POST => '/countrare/_find',
            { selector => $sel, sort => ['n'], fields => ['_id', 'n'], limit => 21,
              execution_stats => JSON::PP::true }));
        ok($ok && $kind eq 'at least' && $page_read > 21 && $count_read >= 1
           && $count_read <= 21 && $plain->{execution_stats}{total_docs_examined} == 200)
            or print STDERR "# $s1 $s2 $kind $total; the count read $count_read documents, the "
                            . "page $page_read, a plain count "
                            . $plain->{execution_stats}{total_docs_examined} . "; "
                            . $JSON->encode({ %$counted, items => [ids($counted)] }) . " "
                            . $JSON->encode({ %$uncounted, items => [ids($uncounted)] }), "\n";
    }
    else {
        my @said = grep { /CP0434/ } error_log_since($mark, wait => 2, until => 'CP0151');
        ok($ok && $kind eq 'exact' && @said == 1 && $said[0] =~ /:info\]/
           && $said[0] =~ m{the count of /counted/rare/ reads every document of its index's range until 21 match})
            or print STDERR "# $kind $total: @said\n";
    }
    # a later page is one request still: its token carries the count
    $mark = error_log_mark();
    my ($s3, $next) = get_json(with_args('/counted/rare/', start => $counted->{next}));
    # (a child's first request may learn the index too: its design document, a look)
    my @asked = grep { /CP0150/ && (m{/_find\b} || /reduce=false&limit=[1-9]/) }
                error_log_since($mark, wait => 2, until => 'CP0151');
    ok($s3 == 200 && @asked == 1 && $asked[0] =~ m{/_find\b}
       && join(' ', ids($next)) eq join(' ', @rare[7 .. 13]) && ($next->{count} // '') eq $kind)
        or print STDERR "# $s3 @asked\n";
}

# Sorted by _id alone, with no JSON index: CouchDB's _find reads its special
# index, _all_docs, and the count is bounded by it as by an index's view:
# its first 21 rows, keys only (the ids: the design document's too), then
# the documents of the rows before the 21st, no more (CouchDB's count of
# documents examined), where a keys-only _find of the selector, limit 21,
# reads all 200; no CP0434. The matches among those 20 rows: "at least"
# them.
{
    my $sel = { _id => { '$gt' => undef }, rare => { '$eq' => JSON::PP::true } };
    my @rare = reference_ids('countrare', $sel, _id => 'asc');
    my $all = must('the first ids', backend_request(GET => '/countrare/_all_docs?limit=21'));
    my %is_rare = map { ($_ => 1) } @rare;
    my $want = grep { $is_rare{ $_->{id} } } @{ $all->{rows} }[0 .. 19];
    my $mark = error_log_mark();
    my ($s1, $counted, $s2, $uncounted, $count_read) = counted_and_not('/counted/rare-ids/');
    my @lines = error_log_since($mark, wait => 2, until => 'CP0151');
    my @looks = grep { m{CP0150: backend request \d+ of \d+: GET \S*/countrare/_all_docs\?} } @lines;
    ok($s1 == 200 && $s2 == 200 && @rare == 15 && $want < 15 && ($counted->{count} // '') eq 'at least'
       && ($counted->{total_rows} // -1) == ($want > 7 ? $want : 7)
       && join(' ', ids($counted)) eq join(' ', @rare[0 .. 6]) && !defined $uncounted->{count}
       && @looks == 1 && !grep({ /CP0434/ } @lines)
       && (!$COUCHDB || ($count_read >= 1 && $count_read <= 21)))
        or print STDERR "# $s1 $s2 want at least $want; the count read $count_read documents; "
                        . scalar(@looks) . " looks; "
                        . $JSON->encode({ %$counted, items => [ids($counted)] }) . "\n# "
                        . join("\n# ", grep { /CP0434|CP043[01]|CP0150/ } @lines) . "\n";
}

# --- counted in a partition (CouchDB: pouchdb-server has none) ------------------
# partition pa of the partitioned database countpart (pb's documents
# interleaved, alike): its count is bounded by the partition's view of the
# (partitioned) index by-n, as outside partitions, one look at
# .../_partition/pa/_design/by-n/_view/by-n and no CP0434; every page's
# numbers those of CouchDB's own _find in pa read whole. Capped 20 (the
# index _explain names in the partition), the count reads the documents of
# at most 20 rows, where a keys-only _find of the selector, limit 21, reads
# about three times that many.
if (!$COUCHDB) {
    skip('pouchdb-server has no partitions') for 1 .. 2;
}
else {
    my $PA = 'countpart/_partition/pa';
    backend_request(DELETE => '/countpart');
    must('countpart', backend_request(PUT => '/countpart?partitioned=true'));
    must('countpart open', backend_request(PUT => '/countpart/_security',
        { admins => { names => [], roles => [] }, members => { names => [], roles => [] } }));
    must('loading countpart', backend_request(POST => '/countpart/_bulk_docs', { docs => [ map {
        { _id => sprintf('%s:c%04d', $_ % 4 ? 'pa' : 'pb', ($_ * 7919) % 10000), n => $_ % 40,
          tags => [($_ * 31) % 3 == 0 ? 'a' : 'b', 'z'] } } 0 .. 399 ] }));
    must('index by-n of countpart', backend_request(POST => '/countpart/_index',
        { index => { fields => ['n'] }, ddoc => 'by-n', name => 'by-n', type => 'json' }));
    index_ready($PA);
    my @part = reference_ids($PA, $ELEM, n => 'asc');
    my @pa = ('X-Partition' => 'pa');
    my $mark = error_log_mark();
    my ($fwd, $pages, $bad) = walk('/counted/part/', headers => \@pa);
    my ($back, $bpages, $bbad) = walk('/counted/part/', back => 1, headers => \@pa);
    my @lines = error_log_since($mark, wait => 2, until => 'CP0151');
    my @looks = grep { /CP0150/ && m{GET \S*/$PA/_design/by-n/_view/by-n\?reduce=false&limit=32&skip=969\b} } @lines;
    ok(@part > 3 * $SIZE && same_list($fwd, \@part, 'partition, forward')
       && same_list($back, \@part, 'partition, backward') && !@$bad && !@$bbad
       && numbers_agree($pages, \@part, 0, 'partition forward', $SIZE, \&ids)
       && numbers_agree($bpages, \@part, 1, 'partition backward', $SIZE, \&ids)
       && @looks >= 2 && !grep { /CP0434/ } @lines)
        or print STDERR "# partition: ", scalar(@looks), " looks; ", join(' ', grep { /CP0434|CP043[01]/ } @lines), "\n";
    my ($total, $kind) = bounded_count($PA, '_design/by-n/_view/by-n', \@part, 20);
    $mark = error_log_mark();
    my ($s1, $counted, $s2, $uncounted, $count_read) = counted_and_not('/counted/part-capped/');
    @lines = error_log_since($mark, wait => 2, until => 'CP0151');
    my $plain = must('the keys-only _find', backend_request(POST => "/$PA/_find",
        { selector => $ELEM, sort => ['n'], fields => ['_id', 'n'], limit => 21,
          execution_stats => JSON::PP::true }));
    ok($s1 == 200 && $s2 == 200 && $kind eq 'at least' && ($counted->{count} // '') eq $kind
       && ($counted->{total_rows} // -1) == ($total > $SIZE ? $total : $SIZE)
       && join(' ', ids($counted)) eq join(' ', @part[0 .. $SIZE - 1]) && !defined $uncounted->{count}
       && (grep { /CP0150/ && m{GET \S*/$PA/_design/by-n/_view/by-n\?reduce=false&limit=21\b} } @lines)
       && !grep({ /CP0434/ } @lines) && $count_read >= 1 && $count_read <= 20
       && $plain->{execution_stats}{total_docs_examined} > 21)
        or print STDERR "# partition capped: $s1 $s2 $kind $total; the count read $count_read documents, "
                        . "a plain count $plain->{execution_stats}{total_docs_examined}; "
                        . $JSON->encode({ %$counted, items => [ids($counted)] }) . "\n";
}

# --- a partial index named by CouchPageIndex: its view holds the very
# documents the pages' _find reads (use_index, no fallback), those of its
# partial_filter_selector, so a range of it is numbered by its offsets and
# a residual selector is counted through it (on CouchDB: no CP0434; the
# look at its view) -------------------------------------------------------------
{
    backend_request(DELETE => '/countpartial');
    backend_open_db('countpartial', 'q=1');
    must('loading countpartial', backend_request(POST => '/countpartial/_bulk_docs', { docs => [ map {
        { _id => sprintf('q%04d', ($_ * 7919) % 10000), n => $_ % 40, k => $_ % 3 ? 'x' : 'y',
          tags => [$_ % 2 ? 'b' : 'a', 'z'] } } 0 .. 299 ] }));
    must('index px of countpartial', backend_request(POST => '/countpartial/_index',
        { index => { fields => ['n'], partial_filter_selector => { k => 'x' } },
          ddoc => 'px', name => 'px', type => 'json' }));
    # CouchDB's own _find through the index, every row at once
    my $pinned = sub {
        my ($selector) = @_;
        my $body = must('the _find through px', backend_request(POST => '/countpartial/_find',
            { selector => $selector, sort => [{ n => 'asc' }], use_index => ['px', 'px'],
              allow_fallback => JSON::PP::false, limit => 100000 }));
        return map { $_->{_id} } @{ $body->{docs} };
    };
    my @all = $pinned->({ n => { '$gte' => undef } });
    my @matching = $pinned->($ELEM);
    my $mark = error_log_mark();
    my ($fwd, $pages, $bad) = walk('/counted/partial/');
    my ($efwd, $epages, $ebad) = walk('/counted/partial-elem/');
    my ($eback, $ebpages, $ebbad) = walk('/counted/partial-elem/', back => 1);
    my @lines = error_log_since($mark, wait => 2, until => 'CP0151');
    my $pages_of_all = int((@all + $SIZE - 1) / $SIZE);
    my @unnumbered = grep {
        my $page = $pages->[$_];
        ($page->{numbering} // '') ne 'absolute' || ($page->{total_rows} // -1) != @all
        || ($page->{first_row} // -1) != $_ * $SIZE + 1 || ($page->{last_page} // -1) != $pages_of_all
    } 0 .. $#$pages;
    ok(($COUCHDB ? @all == 200 : @all > 3 * $SIZE) && same_list($fwd, \@all, 'partial index')
       && !@$bad && !@unnumbered)
        or print STDERR "# partial index: ", scalar(@all), " rows; unnumbered pages @unnumbered\n";
    ok(@matching > 3 * $SIZE && same_list($efwd, \@matching, 'partial index, residual, forward')
       && same_list($eback, \@matching, 'partial index, residual, backward') && !@$ebad && !@$ebbad
       && numbers_agree($epages, \@matching, 0, 'partial index forward', $SIZE, \&ids)
       && numbers_agree($ebpages, \@matching, 1, 'partial index backward', $SIZE, \&ids)
       && ($COUCHDB ? !grep({ /CP0434/ } @lines)
                      && grep({ /CP0150/ && m{GET \S*/countpartial/_design/px/_view/px\?} } @lines)
                    : 1))
        or print STDERR "# partial index, residual: ", scalar(@matching), " rows; ",
                        join(' ', grep { /CP0434|CP037[12]/ } @lines), "\n";
}

# --- Prefer and Preference-Applied, Content-Range -------------------------------
{
    my ($s, $page, $res) = get_json('/counted/exact/', Prefer => 'count=none');
    ok($s == 200 && ($res->header('Preference-Applied') // '') eq 'count=none'
       && !defined $page->{total_rows} && $page->{numbering} eq 'relative'
       && ($res->header('Content-Range') // '') eq 'items */*'
       && ($res->header('Vary') // '') =~ /Prefer/);
    ($s, $page, $res) = get_json('/counted/exact/', Prefer => 'return=minimal, count=exact');
    ok($s == 200 && ($res->header('Preference-Applied') // '') eq 'count=exact'
       && ($page->{total_rows} // -1) == @elem && $page->{count} eq 'exact'
       && ($res->header('Content-Range') // '') eq 'items 0-6/' . scalar(@elem));
    ($s, $page, $res) = get_json('/counted/exact/', Prefer => 'count="estimated"');
    ok($s == 200 && ($res->header('Preference-Applied') // '') eq 'count=estimated'
       && ($page->{total_rows} // -1) == @elem);
    # a capped location does not count exactly for the asking
    ($s, $page, $res) = get_json('/counted/capped/?format=json', Prefer => 'count=exact');
    ok($s == 200 && !defined $res->header('Preference-Applied')
       && $page->{count} eq 'at least' && ($res->header('Content-Range') // '') eq 'items 0-6/*');
    # CouchPageCount none: no count, whatever is asked
    ($s, $page, $res) = get_json('/counted/none/', Prefer => 'count=exact');
    ok($s == 200 && !defined $res->header('Preference-Applied') && !defined $page->{total_rows}
       && !defined $page->{count});
    # a view's page: exact, free
    ($s, $page, $res) = get_json('/bands/?format=json', Prefer => 'count=exact');
    my ($from, $to, $total) = ($res->header('Content-Range') // '') =~ m{^items (\d+)-(\d+)/(\d+)$};
    ok($s == 200 && defined $total && $total == $page->{total_rows} && $from == $page->{offset}
       && $to == $page->{offset} + @{ $page->{items} } - 1 && $page->{count} eq 'exact'
       && ($res->header('Preference-Applied') // '') eq 'count=exact')
        or print STDERR "# ", $res->as_string, "\n";
}

# --- forged counts: a wrong number on that page, or a 400; never a 5xx ----------
{
    my ($s, $first) = get_json('/counted/elem/');
    my $token = $JSON->decode($first->{next});
    my @cases = (
        [{ %$token, t => 5, p => 4 }, 200],                  # wrong, within bounds
        [{ %$token, t => 100000000 }, 200],                  # over the cap: not taken
        [{ %$token, t => 10, p => 10 }, 400],                # place not below total
        [{ %$token, t => 'x' }, 400],
        [{ %$token, t => -1 }, 400],
        [{ %$token, t => 2**60, p => 1 }, 400],
        [{ %$token, p => undef }, 400],
        [{ %$token, m => 2 }, 400],
        [{ %$token, t => 1000, m => 1 }, 200],               # at least the cap
        [{ %$token, t => 1000, m => 1, p => 5000 }, 200],    # a place past it
        [{ a => $token->{a}, t => $token->{t} }, 400],       # a total without its place
        [{ a => $token->{a} }, 200],                         # an older token: relative
    );
    my @bad;
    for my $case (@cases) {
        my ($status, $page) = get_json(with_args('/counted/elem/', start => $JSON->encode($case->[0])));
        push @bad, "$status for " . $JSON->encode($case->[0]) if $status != $case->[1];
    }
    ok(!@bad) or print STDERR map { "# $_\n" } @bad;
    # the older token pages relative, its rows right; the wrong count is taken
    my ($s1, $old) = get_json(with_args('/counted/elem/', start => $JSON->encode({ a => $token->{a} })));
    ok($old->{numbering} eq 'relative' && join(' ', ids($old)) eq join(' ', @elem[$SIZE .. 2 * $SIZE - 1]));
    my ($s2, $wrong) = get_json(with_args('/counted/elem/', start => $JSON->encode({ %$token, t => 500, p => 400 })));
    ok($s2 == 200 && join(' ', ids($wrong)) eq join(' ', @elem[$SIZE .. 2 * $SIZE - 1]));
}

# --- a walk while documents are added and deleted --------------------------------
{
    load('countlive', 200);
    my $sel = $ELEM;
    my @before = reference_ids('countlive', $sel, n => 'asc');
    my %counts = (scalar(@before) => 1);
    my (%deleted, %added, $k);
    my $each = sub {
        my ($page) = @_;
        $k++;
        # one matching document added at a random place, one not yet seen deleted
        my $id = sprintf('new%03d', $k);
        must('adding', backend_request(PUT => "/countlive/$id",
            { n => ($k * 13) % 40, tags => ['a'], title => "T$id" }));
        $added{$id} = 1;
        my %seen = map { $_ => 1 } ids($page);
        my @ahead = grep { !$seen{$_} && !$deleted{$_} && !/^new/ } @before;
        my $victim = $ahead[($k * 7) % @ahead] if @ahead > 10;
        if ($victim) {
            my ($st, $doc) = backend_request(GET => "/countlive/$victim");
            must('deleting', backend_request(DELETE => "/countlive/$victim?rev=$doc->{_rev}"));
            $deleted{$victim} = 1;
        }
        $counts{ scalar(reference_ids('countlive', $sel, n => 'asc')) } = 1;
    };
    my ($fwd, $pages, $bad) = walk('/counted/live/', each => $each);
    my %got;
    my @repeated = grep { $got{$_}++ } @$fwd;
    my @lost = grep { !$got{$_} && !$deleted{$_} } @before;
    my @odd = grep { ($_->{numbering} // '') eq 'absolute' && !$counts{ $_->{total_rows} // -1 } }
              @$pages;
    ok(!@repeated && !@lost && !@$bad && %deleted > 3)
        or print STDERR "# repeated @repeated; lost @lost; bad @$bad\n";
    ok(!@odd && ($pages->[0]{total_rows} // -1) == @before)
        or print STDERR "# counts ", join(' ', sort keys %counts), "; shown ",
                        join(' ', map { $_->{total_rows} // 'none' } @$pages), "\n";
    # the Last page, which counts again, shows the count now
    my ($s, $last) = get_json(with_args('/counted/live/', start => 'last'));
    my @now = reference_ids('countlive', $sel, n => 'asc');
    ok($s == 200 && ($last->{total_rows} // -1) == @now && !defined $last->{count_as_of}
       && join(' ', ids($last)) eq join(' ', @now[$last->{first_row} - 1 .. $#now]))
        or print STDERR "# last: ", $JSON->encode({ %$last, items => [ids($last)] }), " now ", scalar(@now), "\n";
}

# --- apachectl -t (a _find location of a backend the check does not ask) -----
my $VIEW = qq{CouchPageView "http://127.0.0.1:9/db/_find"\nCouchPageSort n};
for my $case (['CouchPageCount sometimes', qr/CouchPageCount: takes exact, capped N or none/],
              ['CouchPageCount capped', qr/capped takes one number/],
              ['CouchPageCount capped 0', qr/capped takes a whole number from 1 to 100000, not '0'/],
              ['CouchPageCount capped 100001', qr/capped takes a whole number from 1 to 100000/],
              ['CouchPageCount capped 1e3', qr/not '1e3'/]) {
    my ($status, $out) = httpd_config_test("$VIEW\n$case->[0]");
    ok($status != 0 && $out =~ $case->[1]) or print STDERR "# $case->[0]: $status $out\n";
}
{
    my ($status, $out) = httpd_config_test("$VIEW\nCouchPageCount capped 500");
    ok($status == 0 && $out =~ /Syntax OK/) or print STDERR "# $status $out\n";
}

# --- the 3-node cluster (COUCHDB_CLUSTER_URLS) ----------------------------------------
# Counted _find locations through the module's own httpd on one node of the
# cluster (two shards, three copies each): a residual $elemMatch and a
# residual $regex, walked both ways, every page's rows in the cluster's own
# order of the selector read whole and its total_rows, first_row and
# last_row that count's; ?page=N for every N the walk's page N (its rows and
# numbers); a count capped at 10 "at least", whose jumps reach only the
# pages whose rows it read; hostile page values a 400; a walk while
# documents are added and deleted. (The test's own httpd is stopped when it
# ends.)
if (@CLUSTER) {
    my $http = HTTP::Tiny->new(timeout => 30);
    my ($base, $user, $password, $req) = cluster_node($CLUSTER[0]);
    cluster_db_anew($req, 'counted34', map {
        { _id => sprintf('c%03d', ($_ * 37) % 200), n => $_ % 40, tags => [$_ % 3 ? 'b' : 'a'],
          title => ($_ % 4 ? 'T' : 'x') . $_ } } 0 .. 199);
    my ($s) = $req->(POST => '/counted34/_index', { index => { fields => ['n'] }, ddoc => 'by-n',
                                                 name => 'by-n', type => 'json' });
    die "indexing counted34: $s\n" unless $s =~ /^20[012]$/;
    # every copy of each range has the documents
    sleep 2;
    my %SEL = (e => { n => { '$gte' => undef }, tags => { '$elemMatch' => { '$eq' => 'a' } } },
               r => { n => { '$gte' => undef }, title => { '$regex' => '^T' } });
    # the cluster's own _find of a selector, read whole: its ids
    my $cluster_ids = sub {
        my ($k) = @_;
        my ($st, $body) = $req->(POST => '/counted34/_find', { selector => $SEL{$k},
            sort => [{ n => 'asc' }], use_index => ['by-n', 'by-n'], limit => 1000, fields => ['_id'] });
        die "the cluster's _find of $k: $st\n" unless $st == 200;
        return map { $_->{_id} } @{ $body->{docs} };
    };
    my %want = map { $_ => [ $cluster_ids->($_) ] } keys %SEL;
    my $conf = '';
    for my $loc (['e', 'e', ''], ['r', 'r', ''], ['c', 'e', "    CouchPageCount capped 10\n"]) {
        my ($path, $k, $more) = @$loc;
        my $sel = $JSON->encode($SEL{$k});
        $conf .= qq{<Location "/$path/">\n    SetHandler couchpage\n}
               . qq{    CouchPageView "$base/counted34/_find"\n    CouchPageCredentials "$user" "$password"\n}
               . qq{    CouchPageSelector '$sel'\n    CouchPageSort n\n    CouchPageIndex by-n by-n\n}
               . qq{    CouchPageSize $SIZE\n    CouchPageJumpReach 1000\n    CouchPageFormat json\n$more</Location>\n};
    }
    my $root = tempdir(CLEANUP => 1);
    my ($port) = start_own_httpd($root, [qw(proxy proxy_http)], $conf);
    my $url = "http://127.0.0.1:$port";
    my $get = sub {
        my ($path, %args) = @_;
        my $r = $http->get(with_args("$url$path", %args));
        my $body = eval { $JSON->decode($r->{content}) } // {};
        return { %$body, status => $r->{status} };
    };
    my $shape = sub { my ($p) = @_; join ' ', map({ $_ // '-' } @$p{qw(first_row last_row total_rows)}), ids($p) };
    for my $k (qw(e r)) {
        my @want = @{ $want{$k} };
        my ($fwd, $pages, $bad) = walk("$url/$k/");
        my ($back, $bpages, $bbad) = walk("$url/$k/", back => 1);
        my @bad = map { "a page answered $_" } @$bad, @$bbad;
        push @bad, "not the cluster's rows" unless same_list($fwd, \@want, "cluster $k forward")
                                                  && same_list($back, \@want, "cluster $k backward");
        push @bad, 'not numbered as the cluster counts'
            unless numbers_agree($pages, \@want, 0, "cluster $k forward", $SIZE, \&ids)
                   && numbers_agree($bpages, \@want, 1, "cluster $k backward", $SIZE, \&ids);
        # ?page=N: the walk's page N
        for my $n (1 .. @$pages) {
            my $jumped = $get->("/$k/", page => $n);
            push @bad, "?page=$n: $jumped->{status} " . $shape->($jumped) . ' against '
                       . $shape->($pages->[$n - 1])
                unless $jumped->{status} == 200 && $shape->($jumped) eq $shape->($pages->[$n - 1]);
        }
        # the cluster: counted, walked both ways and jumped to, as its own _find
        ok(@want > 2 * $SIZE && @$pages == int((@want + $SIZE - 1) / $SIZE) && !@bad)
            or print STDERR "# cluster /$k/: ", join("\n# ", @bad[0 .. ($#bad < 9 ? $#bad : 9)]), "\n";
    }
    # capped at 10: at least the matches among the index's first rows
    my ($capped_ids, $capped, $capped_bad) = walk("$url/c/");
    my $reached = 0;
    for my $n (1 .. @$capped) {
        my $jumped = $get->('/c/', page => $n);
        if ($jumped->{status} == 200) {
            $reached++ if $shape->($jumped) eq $shape->($capped->[$n - 1]);
        }
        elsif ($jumped->{status} != 400 || ($jumped->{reason} // '') !~ /counted up to 10 only/) {
            $reached = -1000;
        }
    }
    ok(@$capped > 2 && ($capped->[0]{count} // '') eq 'at least' && !@$capped_bad
       && same_list($capped_ids, $want{e}, 'cluster capped') && $reached >= 1)
        or print STDERR "# cluster /c/: ", $shape->($capped->[0] // {}), " count ",
                        ($capped->[0]{count} // 'none'), "; reached $reached\n";
    # hostile page values: a 400 that says why, as on one node
    my @hostile = grep {
        my $r = $http->get("$url/e/?page=$_");
        $r->{status} != 400 || $r->{content} !~ /page must be a whole number from 1 to 999999999/
    } ('0', '-1', 'abc', '', '2.0', '99999999999999999999999999');
    ok(!@hostile) or print STDERR "# cluster: page=@hostile not refused\n";
    # a walk of /e/ while documents are added and deleted through the node:
    # no row lost or repeated, every numbered page's count one the cluster's
    # _find read whole gave during the walk, and the Last page, asked once the
    # copies have the writes, counts again: the count then
    my @before = @{ $want{e} };
    my %counts = (scalar(@before) => 1);
    my (%deleted, $k);
    my ($fwd, $pages, $bad) = walk("$url/e/", each => sub {
        my ($page) = @_;
        $k++;
        my ($st) = $req->(PUT => sprintf('/counted34/new%03d', $k),
                          { n => ($k * 13) % 40, tags => ['a'], title => "Tnew$k" });
        die "adding to counted34: $st\n" unless $st =~ /^20[12]$/;
        $counts{ scalar($cluster_ids->('e')) } = 1;
        my %seen = map { $_ => 1 } ids($page);
        my @ahead = grep { !$seen{$_} && !$deleted{$_} } @before;
        return unless @ahead > 10;
        my $victim = $ahead[($k * 7) % @ahead];
        my ($sd, $doc) = $req->(GET => "/counted34/$victim");
        ($sd) = $req->(DELETE => "/counted34/$victim?rev=$doc->{_rev}");
        die "deleting $victim: $sd\n" unless $sd =~ /^20[012]$/;
        $deleted{$victim} = 1;
        $counts{ scalar($cluster_ids->('e')) } = 1;
    });
    my %got;
    my @repeated = grep { $got{$_}++ } @$fwd;
    my @lost = grep { !$got{$_} && !$deleted{$_} } @before;
    my @odd = grep { ($_->{numbering} // '') eq 'absolute' && !$counts{ $_->{total_rows} // -1 } }
              @$pages;
    ok(!@repeated && !@lost && !@$bad && %deleted > 3 && !@odd)
        or print STDERR "# cluster live walk: repeated @repeated; lost @lost; bad @$bad; counts ",
                        join(' ', sort keys %counts), "; shown ",
                        join(' ', map { $_->{total_rows} // 'none' } @$pages), "\n";
    sleep 1;
    my @now = $cluster_ids->('e');
    my $last = $get->('/e/', start => 'last');
    ok($last->{status} == 200 && ($last->{total_rows} // -1) == @now && !defined $last->{count_as_of}
       && join(' ', ids($last)) eq join(' ', @now[($last->{first_row} // 1) - 1 .. $#now]))
        or print STDERR "# cluster last: ", $shape->($last), " now ", scalar(@now), "\n";
    $req->(DELETE => '/counted34');
}
