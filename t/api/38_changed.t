# SPDX-License-Identifier: Apache-2.0
# "The list changed since you began" (issues 41 and 42): a walk's start
# (the sequence its first page's answers carried) rides in every later
# token, and a later page compares its own answers' sequence with it, at no
# backend request more:
#  - a quiet walk, forward and back from the Last page, never says changed
#    (a page of the view's rows, and of _all_docs: "changed": false; a page
#    of documents: no "changed" member, since an edit the view does not
#    emit moves no sequence);
#  - a write elsewhere in the database (a document that emits nothing into
#    the view): the view's pages false, _all_docs' true, the documents' none;
#  - a row written inside the page, elsewhere in the list (before the
#    page), a row deleted, an edit of a shown field (the emitted value):
#    true, and the walk stays marked on; an edit of a field the view does not
#    emit: false on the view's rows, nothing on the documents' page;
#  - an old token (without the mark): no "changed", and its tokens carry
#    none; a malformed mark: 400; a location whose index lags: no mark;
#  - HTML: "The list has changed since you began." in words, in the
#    fragment and its status; not on a quiet walk;
#  - a counted walk of grouped rows: a later page's count, taken by the
#    first page, says "out of date" once rows were written (Content-Range
#    "/*", HTML "(counted before the list changed)"), and the Last page
#    counts again, exact; pages back from it say nothing changed;
#  - with COUCHDB_CLUSTER_URLS (CI's 3-node cluster), every node up: quiet
#    walks never say changed, whichever shard copies answer; a page after a
#    write says false only where the copy it read has not the write yet (it
#    shows nothing of it either: a view reads each range from one copy).
use strict;
use warnings;

use Apache::Test qw(-withtestmore);
use Apache::TestRequest ();
use File::Temp qw(tempdir);
use HTTP::Tiny ();
use JSON::PP ();
use CouchPageTest qw(get_json with_args double_load double_request start_own_httpd live_cluster
                     cluster_node cluster_db_anew);

my @CLUSTER = live_cluster();
plan tests => 14 + (@CLUSTER ? 4 : 0);

my $JSON = JSON::PP->new->utf8->canonical;
my @DOCS = ((map { { _id => sprintf('p%02d', $_), type => 'post', n => $_, t => "post $_" } } 0 .. 11),
            (map { { _id => "other$_", type => 'other' } } 1 .. 2));
my $VIEWS = {
    v => { map => 'function (doc) { if (doc.type == "post") emit(doc.n, doc.t); }' },
    g => { map => 'function (doc) { if (doc.type == "post") emit(doc.n, 1); }',
           reduce => '_count' },
};
double_load('changed', \@DOCS, $VIEWS);
double_request(GET => '/changed/_design/d/_view/v?limit=0');

# A page as JSON (a token of undef: the first page).
sub page {
    my ($path, $start) = @_;
    my ($status, $body) = get_json(with_args($path, start => $start, format => 'json'));
    return { %{ $body // {} }, status => $status };
}

# What a page says: 'true', 'false', or 'none' (no "changed" member).
sub said {
    my ($page) = @_;
    return 'none' unless exists $page->{changed};
    return $page->{changed} ? 'true' : 'false';
}

sub keys_of { my ($page) = @_; return join ' ', map { $JSON->encode($_->{key}) } @{ $page->{items} || [] } }

my $serial = 0;
sub put_doc {
    my ($doc) = @_;
    my ($status) = double_request(PUT => "/changed/$doc->{_id}", $doc);
    die "writing $doc->{_id}: $status\n" unless $status =~ /^20[12]$/;
}
sub new_post { my ($n) = @_; put_doc({ _id => 'new' . ++$serial, type => 'post', n => $n, t => "new $n" }) }
sub edit_doc {
    my ($id, %set) = @_;
    my ($status, $doc) = double_request(GET => "/changed/$id");
    die "reading $id: $status\n" unless $status == 200;
    put_doc({ %$doc, %set });
}
sub delete_doc {
    my ($id) = @_;
    my ($status, $doc) = double_request(GET => "/changed/$id");
    ($status) = double_request(DELETE => "/changed/$id?rev=$doc->{_rev}");
    die "deleting $id: $status\n" unless $status =~ /^20[02]$/;
}

# A token's JSON, or undef.
sub token_json { my ($t) = @_; return eval { $JSON->decode($t // '') } }
# A view token's mark: its last member, a string past [key, docid].
sub mark_of {
    my ($t) = @_;
    my $j = token_json($t);
    return ref $j eq 'ARRAY' ? (@$j == 3 && !ref $j->[2] && $j->[2] =~ /^[A-Za-z0-9_-]{5}\d/ ? $j->[2] : undef)
         : ref $j eq 'HASH' ? $j->{w} : undef;
}

# Follows next from the first page (or prev from the Last page): the pages.
sub walk {
    my ($path, $back) = @_;
    my @pages = (page($path, $back ? 'last' : undef));
    while (@pages < 20 && $pages[-1]{status} == 200) {
        my $t = $back ? $pages[-1]{prev} : $pages[-1]{next};
        last unless defined $t;
        push @pages, page($path, $t);
    }
    return @pages;
}

# --- quiet walks ---------------------------------------------------------------
{
    my @fwd = walk('/changed/rows/');
    my @back = walk('/changed/rows/', 1);
    my $first_mark = mark_of($fwd[0]{next});
    my @bad = grep { $_->{status} != 200 } @fwd, @back;
    push @bad, 'first page says ' . said($fwd[0]) if said($fwd[0]) ne 'none';
    push @bad, 'Last page says ' . said($back[0]) if said($back[0]) ne 'none';
    push @bad, map { "later page says " . said($_) } grep { said($_) ne 'false' } @fwd[1 .. $#fwd], @back[1 .. $#back];
    # every later token carries the first page's mark; the Last page's is every walk's
    push @bad, "tokens without the walk's start" if grep { defined $_->{next} && (mark_of($_->{next}) // '') ne $first_mark } @fwd;
    push @bad, "the last link is not 'last'" if ($fwd[0]{links}{last} // '') !~ /start=last/;
    ok(@fwd == 4 && @back == 4 && defined $first_mark && !@bad, 'a quiet walk of the view\'s rows says nothing changed, both ways')
        or diag("@bad");
}
{
    my @docs = walk('/changed/docs/');
    my @all = walk('/changed/all/');
    ok(@docs == 4 && !grep({ said($_) ne 'none' } @docs)
       && @all == 5 && said($all[0]) eq 'none' && !grep({ said($_) ne 'false' } @all[1 .. $#all]),
       'a quiet walk: documents\' pages say nothing, _all_docs\' pages false')
        or diag(join ' ', map { said($_) } @docs, @all);
}

# --- writes ------------------------------------------------------------------------
# The first page of each location, then write, then the second page.
sub after_write {
    my ($write, @paths) = @_;
    my %next = map { ($_ => page($_)->{next}) } @paths;
    $write->();
    return map { ($_ => page($_, $next{$_})) } @paths;
}
{
    my %p = after_write(sub { edit_doc('other1', note => 'written') },
                        '/changed/rows/', '/changed/docs/', '/changed/all/');
    ok(said($p{'/changed/rows/'}) eq 'false' && said($p{'/changed/all/'}) eq 'true'
       && said($p{'/changed/docs/'}) eq 'none',
       'a write elsewhere in the database: the view\'s page false, _all_docs\' true, documents\' none')
        or diag(join ' ', map { "$_ " . said($p{$_}) } sort keys %p);
}
{
    my %p = after_write(sub { new_post(4.5) }, '/changed/rows/', '/changed/docs/');
    my $rows = $p{'/changed/rows/'};
    ok(said($rows) eq 'true' && said($p{'/changed/docs/'}) eq 'true' && keys_of($rows) eq '3 4 4.5',
       'a row written inside the page: changed')
        or diag(said($rows) . ' ' . said($p{'/changed/docs/'}) . ' ' . keys_of($rows));
}
{
    my $first = page('/changed/rows/');
    new_post(-1);
    my $second = page('/changed/rows/', $first->{next});
    my $third = page('/changed/rows/', $second->{next});
    ok(said($second) eq 'true' && said($third) eq 'true'
       && (mark_of($third->{next}) // '') eq (mark_of($first->{next}) // 'none'),
       'a row written before the page: changed, and the walk stays marked from its start')
        or diag(said($second) . ' ' . said($third));
}
{
    my %p = after_write(sub { delete_doc('p10') }, '/changed/rows/');
    ok(said($p{'/changed/rows/'}) eq 'true', 'a row deleted on a later page: changed')
        or diag(said($p{'/changed/rows/'}));
}
{
    my %p = after_write(sub { edit_doc('p01', t => 'a new title') }, '/changed/rows/', '/changed/docs/');
    ok(said($p{'/changed/rows/'}) eq 'true' && said($p{'/changed/docs/'}) eq 'true',
       'an edit of a shown field (the emitted value): changed')
        or diag(join ' ', map { said($p{$_}) } sort keys %p);
    %p = after_write(sub { edit_doc('p05', hidden => 'not emitted') }, '/changed/rows/', '/changed/docs/');
    ok(said($p{'/changed/rows/'}) eq 'false' && said($p{'/changed/docs/'}) eq 'none',
       'an edit of a field the view does not emit: the rows false, the documents\' page cannot tell')
        or diag(join ' ', map { said($p{$_}) } sort keys %p);
}

# --- old tokens, malformed marks, an index that lags ---------------------------------
{
    my $first = page('/changed/rows/');
    my $token = token_json($first->{next});
    my $mark = pop @$token;
    my $old = page('/changed/rows/', $JSON->encode($token));
    my $marked = page('/changed/rows/', $first->{next});
    ok($old->{status} == 200 && said($old) eq 'none' && !defined mark_of($old->{next})
       && keys_of($old) eq keys_of($marked) && said($marked) eq 'false',
       'an old token: the same page, no "changed", and its tokens carry no mark')
        or diag(said($old) . ' ' . ($old->{next} // 'null'));
    my $bad = page('/changed/rows/', $JSON->encode([@$token, 'not a mark']));
    my $forged = page('/changed/rows/', $JSON->encode([@$token, 'AAAAA0']));
    ok($bad->{status} == 400 && $forged->{status} == 200 && keys_of($forged) eq keys_of($marked)
       && said($forged) eq 'none',
       'a malformed mark is a 400; a forged one misleads only its own page')
        or diag("$bad->{status} $forged->{status} " . said($forged));
}
{
    my @lag = walk('/changed/lag/');
    ok(@lag >= 4 && !grep({ said($_) ne 'none' || (defined $_->{next} && defined mark_of($_->{next})) } @lag),
       'an index that lags: no mark, no "changed"');
}

# --- HTML ----------------------------------------------------------------------------
sub html_page {
    my ($start) = @_;
    return Apache::TestRequest::GET(with_args('/changed/html/', start => $start))->content;
}
{
    my $note = 'The list has changed since you began.';
    my $first = page('/changed/rows/');
    # the HTML location's own first page, its next link's token
    my $html = html_page(undef);
    my ($href) = $html =~ /rel="next" href="([^"]+)"/;
    $href =~ s/&amp;/&/g if defined $href;
    my ($start) = ($href // '') =~ /[?&]start=([^&]+)/;
    $start =~ s/%([0-9A-Fa-f]{2})/chr hex $1/ge if defined $start;
    my $quiet = html_page($start);
    new_post(7.5);
    my $written = html_page($start);
    ok(defined $start && index($quiet, $note) < 0 && index($written, $note) >= 0
       && $written =~ /<p class="couchpage-changed">\Q$note\E<\/p>/
       && $written =~ /data-couchpage-status="[^"]*\Q$note\E"/,
       'HTML: the note in words, in the fragment and its status, only where the list changed')
        or diag($written);
}

# --- a counted walk of grouped rows -------------------------------------------------
{
    my $first = page('/changed/groups/');
    my $total = $first->{total_rows} // -1;
    my $quiet = page('/changed/groups/', $first->{next});
    my $next = token_json($first->{next}) // {};
    new_post(100);
    my ($status, $second, $res) = get_json(with_args('/changed/groups/', start => $first->{next}, format => 'json'));
    $second //= {};
    my $html = Apache::TestRequest::GET(with_args('/changed/groups/', start => $first->{next}, format => 'html'))->content;
    ok(($first->{count} // '') eq 'exact' && defined $next->{w} && defined $next->{t}
       && said($quiet) eq 'false' && ($quiet->{count} // '') eq 'exact'
       && ($quiet->{count_as_of} // '') eq 'an earlier page'
       && said($second) eq 'true' && ($second->{count} // '') eq 'out of date'
       && ($second->{total_rows} // -1) == $total
       && ($res->header('Content-Range') // '') =~ m{/\*$}
       && index($html, '(counted before the list changed)') >= 0,
       'an earlier page\'s count says it is out of date once rows were written')
        or diag($JSON->encode({ %$second, items => undef }) . ' ' . ($res->header('Content-Range') // ''));
    my @back = walk('/changed/groups/', 1);
    ok(($back[0]{count} // '') eq 'exact' && ($back[0]{total_rows} // -1) == $total + 1
       && !defined $back[0]{count_as_of} && said($back[0]) eq 'none'
       && @back > 1 && !grep({ said($_) ne 'false' || ($_->{count} // '') ne 'exact' } @back[1 .. $#back]),
       'the Last page counts again; the pages back from it say nothing changed')
        or diag(join ' ', map { said($_) . '/' . ($_->{count} // '-') } @back);
}

# --- the 3-node cluster (COUCHDB_CLUSTER_URLS) ----------------------------------------
# (the test's own httpd, registered by start_own_httpd, is stopped when it ends)
if (@CLUSTER) {
    my $http = HTTP::Tiny->new(timeout => 30);
    my ($base, $user, $password, $req) = cluster_node($CLUSTER[0]);
    cluster_db_anew($req, 'changed38', @DOCS, { _id => '_design/d', views => $VIEWS });
    # the copies of each range have the documents (a write reaches the
    # last copy a moment after it is acknowledged)
    sleep 2;
    my $root = tempdir(CLEANUP => 1);
    my ($port) = start_own_httpd($root, [qw(proxy proxy_http)], <<"CONF");
<Location "/c/">
    SetHandler couchpage
    CouchPageView "$base/changed38/_design/d/_view/v"
    CouchPageCredentials "$user" "$password"
    CouchPageSize 3
    CouchPageFormat json
</Location>
CONF
    my $get = sub {
        my ($start) = @_;
        my $r = $http->get(with_args("http://127.0.0.1:$port/c/", start => $start));
        my $body = eval { $JSON->decode($r->{content}) } // {};
        return { %$body, status => $r->{status} };
    };
    my (%quiet, %written, @marks);
    for (1 .. 8) {
        my @pages = ($get->(undef));
        push @marks, mark_of($pages[0]{next});
        while (@pages < 6 && defined $pages[-1]{next}) {
            push @pages, $get->($pages[-1]{next});
        }
        $quiet{ said($_) }++ for @pages[1 .. $#pages];
        $quiet{status}++ for grep { $_->{status} != 200 } @pages;
    }
    ok(!$quiet{true} && !$quiet{status} && ($quiet{false} // 0) + ($quiet{none} // 0) > 0,
       'the cluster: a quiet walk never says changed')
        or diag($JSON->encode(\%quiet));
    for my $i (1 .. 8) {
        my $first = $get->(undef);
        my ($s) = $req->(PUT => "/changed38/c$i", { type => 'post', n => 3.5, t => "c$i" });
        die "writing c$i: $s\n" unless $s =~ /^20[12]$/;
        my $second = $get->($first->{next});
        $written{ said($second) }++;
        $written{status}++ if $second->{status} != 200;
        # a view reads each range from one copy: one the write has not
        # reached yet says false, and shows nothing of it either
        $written{'false, with the row'}++
            if said($second) eq 'false' && grep { ($_->{id} // '') eq "c$i" } @{ $second->{items} || [] };
        # gone again, so that the next write lands inside page 2 too
        my ($st, $doc) = $req->(GET => "/changed38/c$i");
        $req->(DELETE => "/changed38/c$i?rev=$doc->{_rev}") if $doc;
    }
    ok(!$written{'false, with the row'} && !$written{status} && ($written{true} // 0) + ($written{none} // 0) > 0,
       'the cluster: a page after a write says nothing changed only where its copy has not the write')
        or diag($JSON->encode(\%written));
    # a mark names the shard ranges (CouchDB's default q is 2): an entry each
    ok(!grep({ !defined $_ || $_ !~ /^[A-Za-z0-9_-]{5}\d+(\.[A-Za-z0-9_-]{5}\d+)*$/ } @marks),
       'the cluster: every first page marks its walk, an entry a shard range')
        or diag("@{[ map { $_ // 'none' } @marks ]}");
    diag('cluster: quiet later pages ' . $JSON->encode(\%quiet) . ', after a write ' . $JSON->encode(\%written));
    # quiet again after the writes
    sleep 2;
    my @again = ($get->(undef));
    push @again, $get->($again[-1]{next}) while @again < 6 && defined $again[-1]{next};
    ok(@again >= 4 && !grep({ $_->{status} != 200 || said($_) eq 'true' } @again),
       'the cluster: a walk after the writes, quiet again, never says changed');
    $req->(DELETE => '/changed38');
}
