# SPDX-License-Identifier: Apache-2.0
# Counted grouped reduce rows (issue 41): CouchDB gives grouped rows no
# offsets, so CouchPageCount counts them on the first and the Last page,
# with the page's own queries in one request, and the count travels in the
# tokens ({"g": [KEY], "t": T, "p": P}), so that every page shows
# total_rows, first_row and last_row equal to the backend's own grouped
# view read whole, walked both ways, and a later page stays one backend
# request. A capped count says "at least N" past N; Prefer: count=none
# leaves the pages relative; an old [key] token is a relative page; a
# forged count is a wrong number on that page or a 400, never a 5xx; a walk
# while groups come and go loses or repeats no group; and the same on
# CouchDB's 3-node cluster (COUCHDB_CLUSTER_URLS).
use strict;
use warnings;

use Apache::Test qw(plan ok);
use File::Temp qw(tempdir);
use JSON::PP ();
use CouchPageTest qw(get_json with_args backend_request backend_open_db backend_kind
                     error_log_mark error_log_since live_cluster cluster_node cluster_db_anew start_own_httpd);
use CouchPageFind qw(must walk same_list numbers_agree html_text);

my @CLUSTER = live_cluster();
plan tests => 14 + (@CLUSTER ? 3 : 0);

my $JSON = JSON::PP->new->utf8->canonical;
my $SIZE = 7;
my $DDOC = { views => {
    count => { map => 'function (d) { emit([d.g, d.i], 1); }', reduce => '_count' },
    sum => { map => 'function (d) { emit(d.g, d.i); }', reduce => '_sum' },
} };

# About six documents a group, in no order of their group.
sub group_docs {
    my (@groups) = @_;
    return map { { _id => sprintf('d%04d', ($_ * 7919) % 10000), g => $groups[$_ % @groups],
                   i => $_ } } 0 .. 6 * @groups - 1;
}

sub load {
    my ($db, @groups) = @_;
    backend_request(DELETE => "/$db");
    backend_open_db($db);
    must("loading $db", backend_request(POST => "/$db/_bulk_docs", { docs => [group_docs(@groups)] }));
    must("the design document of $db", backend_request(PUT => "/$db/_design/d", $DDOC));
}
load('gcounted', 0 .. 52);

# The backend's own grouped view, read whole: its keys, in JSON.
sub reference_keys {
    my ($db, $view, $query) = @_;
    my $res = backend_request(GET => "/$db/_design/d/_view/$view?$query");
    return map { $JSON->encode($_->{key}) } @{ $res->{rows} || [] };
}
my @level1 = reference_keys('gcounted', 'count', 'group_level=1');
my @desc = reference_keys('gcounted', 'sum', 'group=true&descending=true');
my @range = reference_keys('gcounted', 'count', 'group_level=1&startkey=[5]&endkey=[40,{}]');

sub keys_of { my ($page) = @_; return map { $JSON->encode($_->{key}) } @{ $page->{items} || [] } }

# Follows next (or prev from the Last page) to the end: (keys in order, pages).
sub key_walk {
    my ($path, %opt) = @_;
    my ($ids, $pages, $bad) = walk($path, %opt);
    my @keys = map { keys_of($_) } $opt{back} ? reverse @$pages : @$pages;
    return (\@keys, $pages, $bad);
}


# --- walked both ways, every page's numbers the backend's ---------------------
for my $case (['/gcounted/level1/', \@level1, 'group_level 1'],
              ['/gcounted/sum-desc/', \@desc, 'exact groups, descending'],
              ['/gcounted/range/', \@range, 'a key range']) {
    my ($path, $want, $what) = @$case;
    my ($fwd, $pages, $bad) = key_walk($path);
    my ($back, $bpages, $bbad) = key_walk($path, back => 1);
    ok(@$want > 3 * $SIZE && same_list($fwd, $want, "$what, forward")
       && same_list($back, $want, "$what, backward") && !@$bad && !@$bbad
       && numbers_agree($pages, $want, 0, "$what forward", $SIZE, \&keys_of)
       && numbers_agree($bpages, $want, 1, "$what backward", $SIZE, \&keys_of));
}
{
    # numbered page links, and their tokens carry the count
    my ($fwd, $pages) = key_walk('/gcounted/level1/');
    my @numbers = map { $_->{number} } @{ $pages->[1]{pages} // [] };
    my $next = eval { $JSON->decode($pages->[1]{next} // '') } // {};
    ok("@numbers" eq '1 2 3 4' && ($next->{t} // -1) == @level1 && ($next->{p} // -1) == 2 * $SIZE
       && ref $next->{g} eq 'ARRAY')
        or print STDERR "# page links: @numbers; next $pages->[1]{next}\n";
}

# --- one backend request a page, the count in the first page's batch ---------
{
    my $mark = error_log_mark();
    my ($status, $first) = get_json('/gcounted/capped/?format=json');
    my @lines = grep { /CP0150/ } error_log_since($mark, wait => 2, until => 'CP0151');
    $mark = error_log_mark();
    my ($s2, $second) = get_json(with_args('/gcounted/capped/', start => $first->{next},
                                           format => 'json'));
    my @later = grep { /CP0150/ } error_log_since($mark, wait => 2, until => 'CP0151');
    # CouchDB: one multi-query POST, the count (limit=21) in it; pouchdb-server,
    # which has no multi-query endpoint: the page's queries and the count,
    # one GET each. A later page asks no count.
    my $one = backend_kind() ne 'pouchdb-server';
    my $count = qr/limit=21&/;
    ok($status == 200 && $s2 == 200 && ($second->{first_row} // -1) == $SIZE + 1
       && ($one ? @lines == 1 && $lines[0] =~ /POST .*\/queries \(2 queries/ && @later == 1
                : @lines == 2 && (grep { $_ =~ $count } @lines) == 1 && @later == 3)
       && (!$one || $later[0] =~ /\(3 queries/)
       && !grep { $_ =~ $count } @later)
        or print STDERR "# first: @lines\n# later: @later\n";
}

# --- capped: at least N past N -------------------------------------------------
{
    my ($fwd, $pages) = key_walk('/gcounted/capped/', headers => [Accept => 'application/json']);
    my @past = grep { ($_->{first_row} // 0) > 20 } @$pages;
    my @wrong = grep {
        ($_->{count} // '') ne 'at least' || ($_->{total_rows} // -1) < 20
        || ($_->{total_rows} // -1) < ($_->{last_row} // 0) || defined $_->{last_page}
    } grep { ($_->{numbering} // '') eq 'absolute' } @$pages;
    my @relative = grep { ($_->{numbering} // '') ne 'absolute' } @$pages;
    ok(same_list($fwd, \@level1, 'capped walk') && @past >= 2 && !@wrong && !@relative
       && ($pages->[0]{total_rows} // -1) == 20 && ($pages->[0]{first_row} // -1) == 1)
        or print STDERR "# ", scalar(@past), " past 20; wrong: ",
                        join(' ', map { $JSON->encode({ %$_, items => [] }) } @wrong), "\n";
    my $res = Apache::TestRequest::GET('/gcounted/capped/?format=html');
    my $second = Apache::TestRequest::GET(with_args('/gcounted/capped/', format => 'html',
                                                    start => $pages->[0]{next}));
    ok($res->code == 200 && html_text($res) =~ /1\x{e2}\x{80}\x{93}7 of 20\+/
       && $second->code == 200
       && html_text($second) =~ /8\x{e2}\x{80}\x{93}14 of 20\+ \(as counted earlier\)/)
        or print STDERR "# ", $res->content, "\n";
    # the Last page of an at-least count: the last groups, relative
    my ($s, $last) = get_json('/gcounted/capped/?format=json&start=last');
    ok($s == 200 && join(' ', keys_of($last)) eq join(' ', @level1[-$SIZE .. -1])
       && $last->{numbering} eq 'relative');
}

# --- Prefer, Content-Range ---------------------------------------------------------
{
    my ($s, $page, $res) = get_json('/gcounted/level1/', Prefer => 'count=none');
    ok($s == 200 && ($res->header('Preference-Applied') // '') eq 'count=none'
       && $page->{numbering} eq 'relative' && ($res->header('Content-Range') // '') eq 'items */*'
       && ($res->header('Vary') // '') =~ /Prefer/);
    ($s, $page, $res) = get_json('/gcounted/sum-desc/', Prefer => 'count=exact');
    ok($s == 200 && ($res->header('Preference-Applied') // '') eq 'count=exact'
       && ($res->header('Content-Range') // '') eq 'items 0-6/' . scalar(@desc));
    ($s, $page, $res) = get_json('/gcounted/level1/?start=last');
    my $from = @level1 - (@level1 % $SIZE || $SIZE);
    ok($s == 200 && ($res->header('Content-Range') // '') eq
       "items $from-" . (@level1 - 1) . '/' . scalar(@level1) && !defined $page->{count_as_of})
        or print STDERR "# ", $res->header('Content-Range') // '', "\n";
}

# --- old and forged tokens: relative, a wrong number, or a 400; never a 5xx ----
{
    my ($s, $first) = get_json('/gcounted/level1/');
    my $token = $JSON->decode($first->{next});
    # an old [key] token: its page, relative
    my ($so, $old) = get_json(with_args('/gcounted/level1/', start => $JSON->encode($token->{g})));
    ok($so == 200 && $old->{numbering} eq 'relative'
       && join(' ', keys_of($old)) eq join(' ', @level1[$SIZE .. 2 * $SIZE - 1]));
    my @cases = (
        [{ %$token, t => 60, p => 30 }, 200],                # wrong, within bounds
        [{ %$token, t => 100000000 }, 200],                  # over the cap: not taken
        [{ %$token, t => 53, p => 0 }, 200],                 # the rows behind disagree
        [{ %$token, t => 10, p => 10 }, 400],                # place not below total
        [{ %$token, t => 'x' }, 400],
        [{ %$token, t => -1 }, 400],
        [{ g => $token->{g} }, 400],                         # no count
        [{ %$token, m => 2 }, 400],
        [{ %$token, x => 1 }, 400],
    );
    my @wrong;
    for my $case (@cases) {
        my ($forged, $want) = @$case;
        my ($status, $page) = get_json(with_args('/gcounted/level1/',
                                                 start => $JSON->encode($forged)));
        push @wrong, $JSON->encode($forged) . " -> $status" if $status != $want;
        push @wrong, $JSON->encode($forged) . ': not its rows'
            if $status == 200 && join(' ', keys_of($page)) ne join(' ', @level1[$SIZE .. 2 * $SIZE - 1]);
        push @wrong, $JSON->encode($forged) . ': numbered by the rows behind'
            if $status == 200 && defined $forged->{p} && $forged->{p} == 0 && $forged->{t} == 53
               && $page->{numbering} ne 'relative';
    }
    ok(!@wrong) or print STDERR map { "# $_\n" } @wrong;
}

# --- a walk while groups come and go: no group lost or repeated ----------------
{
    load('gcountlive', map { $_ * 2 } 0 .. 40);
    my @before = reference_keys('gcountlive', 'count', 'group_level=1');
    my $k = 0;
    my ($fwd, $pages, $bad) = key_walk('/gcounted/live/', each => sub {
        # a new group behind the walk and one ahead, and one ahead gone
        $k++;
        backend_request(POST => '/gcountlive/_bulk_docs', { docs => [
            { _id => "new-behind-$k", g => 2 * $k - 1, i => 1000 + $k },
            { _id => "new-ahead-$k", g => 100 + $k, i => 2000 + $k },
        ] });
    });
    my %seen;
    my @repeated = grep { $seen{$_}++ } @$fwd;
    # every group there from start to end is shown once: the old ones (none
    # deleted) and the ones added ahead of the walk
    my %shown = map { $_ => 1 } @$fwd;
    my @lost = grep { !$shown{$_} } @before;
    ok(!@$bad && !@repeated && !@lost && (grep { $_ eq '[101]' } @$fwd))
        or print STDERR "# repeated @repeated; lost @lost\n";
}

# --- the 3-node cluster (COUCHDB_CLUSTER_URLS) ----------------------------------------
# Through the module's own httpd on one node of the cluster (two shards,
# three copies each): grouped rows counted, walked both ways, every page's
# numbers those of the cluster's own grouped view read whole; a capped
# count "at least" past its cap; a walk while groups come and go loses or
# repeats no group. (The test's own httpd is stopped when it ends.)
if (@CLUSTER) {
    my ($base, $user, $password, $req) = cluster_node($CLUSTER[0]);
    cluster_db_anew($req, 'gcounted37', group_docs(0 .. 52));
    my ($s) = $req->(PUT => '/gcounted37/_design/d', $DDOC);
    die "the design document of gcounted37: $s\n" unless $s =~ /^20[12]$/;
    # every copy of each range has the documents
    sleep 2;
    my $cluster_keys = sub {
        my ($view, $query) = @_;
        my ($st, $res) = $req->(GET => "/gcounted37/_design/d/_view/$view?$query");
        die "the cluster's grouped view $view: $st\n" unless $st == 200;
        return map { $JSON->encode($_->{key}) } @{ $res->{rows} || [] };
    };
    my $conf = '';
    for my $loc (['level1', 'count', "    CouchPageGroupLevel 1\n"],
                 ['sum-desc', 'sum', "    CouchPageDescending On\n    CouchPageCount exact\n"],
                 ['capped', 'count', "    CouchPageGroupLevel 1\n    CouchPageCount capped 20\n"]) {
        my ($path, $view, $more) = @$loc;
        $conf .= qq{<Location "/$path/">\n    SetHandler couchpage\n}
               . qq{    CouchPageView "$base/gcounted37/_design/d/_view/$view"\n}
               . qq{    CouchPageCredentials "$user" "$password"\n    CouchPageReduce On\n}
               . qq{    CouchPageSize $SIZE\n    CouchPageFormat json\n$more</Location>\n};
    }
    my $root = tempdir(CLEANUP => 1);
    my ($port) = start_own_httpd($root, [qw(proxy proxy_http)], $conf);
    my $url = "http://127.0.0.1:$port";
    my @bad;
    for my $case (['level1', [$cluster_keys->('count', 'group_level=1')]],
                  ['sum-desc', [$cluster_keys->('sum', 'group=true&descending=true')]]) {
        my ($path, $want) = @$case;
        my ($fwd, $pages, $bad) = key_walk("$url/$path/");
        my ($back, $bpages, $bbad) = key_walk("$url/$path/", back => 1);
        push @bad, $path unless @$want > 3 * $SIZE && same_list($fwd, $want, "cluster $path, forward")
            && same_list($back, $want, "cluster $path, backward") && !@$bad && !@$bbad
            && numbers_agree($pages, $want, 0, "cluster $path forward", $SIZE, \&keys_of)
            && numbers_agree($bpages, $want, 1, "cluster $path backward", $SIZE, \&keys_of);
    }
    ok(!@bad) or print STDERR "# cluster: @bad\n";
    my ($fwd, $pages) = key_walk("$url/capped/");
    my @wrong = grep { ($_->{count} // '') ne 'at least' || ($_->{total_rows} // -1) < 20
                       || ($_->{total_rows} // -1) < ($_->{last_row} // 0) } @$pages;
    ok(same_list($fwd, [$cluster_keys->('count', 'group_level=1')], 'cluster capped') && !@wrong
       && ($pages->[0]{total_rows} // -1) == 20)
        or print STDERR "# cluster capped: ", scalar(@wrong), " pages not at least 20\n";
    # groups come and go: one new behind the walk and one ahead, each page
    my @before = $cluster_keys->('count', 'group_level=1');
    my $k = 0;
    my ($live, $lpages, $lbad) = key_walk("$url/level1/", each => sub {
        $k++;
        my ($st) = $req->(POST => '/gcounted37/_bulk_docs', { docs => [
            { _id => "new-behind-$k", g => $k - 0.5, i => 1000 + $k },
            { _id => "new-ahead-$k", g => 100 + $k, i => 2000 + $k },
        ] });
        die "adding groups to gcounted37: $st\n" unless $st =~ /^20[12]$/;
    });
    my %seen;
    my @repeated = grep { $seen{$_}++ } @$live;
    my @lost = grep { !$seen{$_} } @before;
    ok(!@$lbad && !@repeated && !@lost && (grep { $_ eq '[101]' } @$live))
        or print STDERR "# cluster live: repeated @repeated; lost @lost; bad @$lbad\n";
    $req->(DELETE => '/gcounted37');
}
