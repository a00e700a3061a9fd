# SPDX-License-Identifier: Apache-2.0
# Revalidation that reads no rows (issue 42): a page's ETag is its content
# digest, sealed ("D.SEAL") with a sequence: a view page without documents
# with the view's update_seq its own answers carry (every page, a plain GET
# too: no request more), checked by one limit=0 query of the view; a page
# with documents (include_docs, _find) with the database's update_seq, read
# before the page when the request revalidates. A tag whose seal verifies
# against the sequence read now is answered 304 after that one request (the
# costs log: one backend request, no row read), anything else the whole
# page, 304 when its digest is the client's.
#  - /fresh/rows/, /fresh/html/ (the view's rows), /fresh/docs/
#    (include_docs), /fresh/find/ (_find): unchanged: 304 from the sequence
#    alone; a write elsewhere: 304 (the same content); an edit the page does
#    not show: 304; an edit of a shown field (a document's field the view
#    does not emit on /fresh/docs/), a row written inside the page, a shown
#    document deleted: 200 with the new content;
#  - forged and malformed If-None-Match (a seal of today's sequence on
#    another digest, a seal of another page, any bytes): the page itself,
#    never a 304 it does not name, never a 5xx or a line above info;
#  - /fresh/lag/ (CouchPageUpdate false, include_docs): no sequence is
#    read and no tag sealed; an edit of a shown document: 200;
#  - two httpd processes of the same configuration give the page the same
#    sealed tag and verify each other's; a configuration changed elsewhere
#    seals anew;
#  - with COUCHDB_CLUSTER_URLS (CI's 3-node cluster), every node up: a page
#    with documents (include_docs; _find through its index's view) is
#    sealed with the database's sequence only where it names the copies the
#    page came from: a shown document edited (w=2) and revalidated at once,
#    then after a quiet moment (the copies agree again), the page the client
#    holds then always shows the edit: never a stale 304.
use strict;
use warnings;

use Apache::Test qw(-withtestmore);
use Apache::TestRequest ();
use File::Spec::Functions qw(catfile);
use Time::HiRes qw(time sleep);
use CouchPageTest qw(with_args double_load double_request double_url decode_json_or_undef
                     error_log_mark error_log_since backend_kind backend_request backend_open_db
                     start_own_httpd reap_process live_cluster cluster_node cluster_db_anew);
use File::Temp qw(tempdir);
use HTTP::Tiny ();
use JSON::PP ();

my @CLUSTER = live_cluster();

plan tests => 4 * 26 + 8 + 7 + 5 + (@CLUSTER ? 6 : 0);

my @DOCS = map { { _id => sprintf('doc%02d', $_), n => $_, t => "post $_" } } 0 .. 9;

# The database afresh: the posts and the view in the double's 'fresh'; the
# posts and the _find location's index in the backend's 'freshfind' (the
# double answers no _find).
sub load_fresh {
    double_load('fresh', \@DOCS, { v => { map => 'function (doc) { if (typeof doc.n == "number") emit(doc.n, null); }' } });
    double_request(GET => '/fresh/_design/d/_view/v?limit=0');
    backend_request(DELETE => '/freshfind');
    backend_open_db('freshfind');
    my ($status) = backend_request(POST => '/freshfind/_bulk_docs', { docs => \@DOCS });
    die "loading freshfind: $status\n" unless $status =~ /^20[01]$/;
    ($status) = backend_request(POST => '/freshfind/_index', { index => { fields => ['n'] }, ddoc => 'byn', name => 'byn' });
    die "the index of freshfind: $status\n" unless $status =~ /^20[01]$/;
}

my $COSTS = catfile(Apache::Test::vars('t_logs'), 'costs_log');
my $serial = 0;

# The costs log's line of request ID: { status, requests, rows }. httpd
# writes it after the response: waits for it, 10 s at most.
sub cost_of {
    my ($id) = @_;
    my $until = time + 10;
    while (time < $until) {
        if (open my $fh, '<', $COSTS) {
            for (<$fh>) {
                my @f = split ' ';
                return { status => $f[1], requests => $f[2], rows => $f[4] } if @f == 6 && $f[0] eq $id;
            }
        }
        sleep 0.1;
    }
    return {};
}

# GET path with If-None-Match (undef: none): (response, its costs).
sub get_page {
    my ($path, $inm) = @_;
    my $id = 'fresh-' . $$ . '-' . ++$serial;
    my $res = Apache::TestRequest::GET($path, 'X-Cost-Test' => $id,
                                       defined $inm ? ('If-None-Match' => $inm) : ());
    return ($res, cost_of($id));
}

sub digest_of { my ($tag) = @_; return ($tag // '') =~ m{^(?:W/)?"([^".]*)} ? $1 : '' }

# A request to the database of a location: the double's fresh, or (a
# path of /fresh/find/) the backend's freshfind; (status, body).
sub db_request {
    my ($path, $method, $doc, $body) = @_;
    return $path =~ m{/find/} ? backend_request($method, "/freshfind$doc", $body)
                              : double_request($method, "/fresh$doc", $body);
}

# Document ID of the location's database changed (hash of members), or
# deleted (no change).
sub doc_put {
    my ($path, $id, $change) = @_;
    my (undef, $doc) = db_request($path, GET => "/$id");
    my ($status) = $change ? db_request($path, PUT => "/$id", { %$doc, %$change })
                           : db_request($path, DELETE => "/$id?rev=$doc->{_rev}");
    die "changing $id: $status\n" unless $status =~ /^20[01]$/;
}

my $REAL = backend_kind(double_url()) eq 'couchdb';
my $mark = error_log_mark();
# each location: its path, whether its page is sealed by its view's own
# sequence (the view's rows alone) or the database's (documents shown), an
# edit of a field it shows and how the page shows it (the HTML page shows
# the keys), and an edit it does not show
for my $case (['/fresh/rows/', 1, { n => 1.25 }, qr/"key":1\.25/, 'doc01', { t => 'unshown', n => 1 }],
              ['/fresh/html/', 1, { n => 1.25 }, qr/>1\.25</, 'doc01', { t => 'unshown', n => 1 }],
              ['/fresh/docs/', 0, { t => 'edited', n => 1 }, qr/"t":"edited"/, 'doc08', { t => 'far', n => 8 }],
              ['/fresh/find/', 0, { t => 'edited', n => 1 }, qr/"t":"edited"/, 'doc08', { t => 'far', n => 8 }]) {
    my ($path, $by_view, $edit, $shows_edit, $unshown_id, $unshown) = @$case;
    load_fresh();
    my ($first, $first_cost) = get_page($path);
    my $plain = $first->header('ETag') // '';
    is $first->code, 200, "$path: a first page";
    if ($by_view) {
        like $plain, qr/^"[A-Za-z0-9_-]{27}\.[A-Za-z0-9_-]{22}"$/,
             "$path: a plain GET's tag is sealed already: the sequence came with its rows";
        is $first_cost->{requests}, 1, "$path: in the page's one backend request";
    }
    else {
        like $plain, qr/^W\/"[A-Za-z0-9_-]{27}"$/, "$path: a plain GET's tag is the content digest alone (weak: documents copied whole)";
        ok $first_cost->{requests} >= 1, "$path: no sequence read ($first_cost->{requests} requests)";
    }

    my ($res, $cost) = get_page($path, $plain);
    my $sealed = $res->header('ETag') // '';
    is $res->code, 304, "$path: revalidated with it: 304";
    like $sealed, qr/^(?:W\/)?"\Q${\ digest_of($plain)}\E\.[A-Za-z0-9_-]{22}"$/,
         "$path: under the same digest, sealed";
    if ($by_view) {
        is_deeply [$cost->{requests}, $cost->{rows}], [1, 0], "$path: from one query that reads no rows (the second request already)";
        is $sealed, $plain, "$path: the same tag";
    }
    else {
        ok $cost->{rows} > 0, "$path: the page was read to compare its digest ($cost->{rows} rows)";
        isnt $sealed, $plain, "$path: its tag now sealed with the database's sequence";
    }

    ($res, $cost) = get_page($path, $sealed);
    is $res->code, 304, "$path: revalidated with the sealed tag: 304";
    is $res->header('ETag'), $sealed, "$path: the same tag";
    is_deeply [$cost->{requests}, $cost->{rows}], [1, 0], "$path: one backend request, no row read";

    # a write elsewhere in the database
    db_request($path, PUT => '/elsewhere' . $serial, { other => 1 });
    ($res, $cost) = get_page($path, $sealed);
    my $resealed = $res->header('ETag') // '';
    is $res->code, 304, "$path: a write elsewhere: still 304 (the same content)";
    is digest_of($resealed), digest_of($sealed), "$path: ... its digest the same";
    if ($by_view && $REAL) {
        # CouchDB's view sequence moves only when the view's rows change,
        # but its packed form lists the shards in the order they answered,
        # which a shard's index catching up may change: the seal answers
        # alone, or the page is read again and sealed anew
        ok $cost->{requests} >= 1, "$path: ... ($cost->{requests} requests, $cost->{rows} rows)";
        is $cost->{rows} == 0 ? 'the seal alone, the same tag' : 'the page, another seal',
           $resealed eq $sealed ? 'the seal alone, the same tag' : 'the page, another seal',
           "$path: ... from the seal alone under the same tag, or from the page under a new seal";
    }
    elsif ($by_view) {
        # the double's view sequence moves only when the view's rows change
        is_deeply [$cost->{requests}, $cost->{rows}], [1, 0], "$path: ... from the seal alone: the view's sequence did not move";
        is $resealed, $sealed, "$path: ... under the same seal";
    }
    else {
        # the database's sequence moved
        ok $cost->{rows} > 0, "$path: ... from the page read again";
        isnt $resealed, $sealed, "$path: ... sealed with the new sequence";
    }
    ($res, $cost) = get_page($path, $resealed);
    is_deeply [$res->code, $cost->{requests}, $cost->{rows}], [304, 1, 0],
              "$path: which the next revalidation verifies alone";

    # an edit the page does not show: a field the view does not emit, or a
    # document off the page
    doc_put($path, $unshown_id, $unshown);
    ($res) = get_page($path, $resealed);
    is $res->code, 304, "$path: an edit it does not show ($unshown_id): 304";

    # an edit of a shown field
    doc_put($path, 'doc01', $edit);
    ($res, $cost) = get_page($path, $resealed);
    is $res->code, 200, "$path: a shown document edited: 200";
    my $body = $res->content;
    my $edited_tag = $res->header('ETag') // '';
    like $body, $shows_edit, "$path: with the edit";
    isnt digest_of($edited_tag), digest_of($resealed), "$path: under a new digest";
    ($res) = get_page($path, $edited_tag);
    is $res->code, 304, "$path: and that tag is 304 again";

    # a row written inside the page
    db_request($path, PUT => '/inside' . $serial, { n => 1.5, t => 'inside' });
    ($res) = get_page($path, $edited_tag);
    is $res->code, 200, "$path: a row written inside the page: 200";
    like $res->content, qr/1\.5/, "$path: with the row";
    my $inside_tag = $res->header('ETag') // '';

    # a shown document deleted
    doc_put($path, 'doc00');
    ($res) = get_page($path, $inside_tag);
    is $res->code, 200, "$path: a shown document deleted: 200";
    unlike $res->content, $path =~ /html/ ? qr/>0</ : qr/doc00/, "$path: without it";
    my $deleted_tag = $res->header('ETag') // '';

    # forged: today's seal on another digest, another page's seal, any bytes
    (my $forged = $deleted_tag) =~ s/"[A-Za-z0-9_-]{27}\./"AAAAAAAAAAAAAAAAAAAAAAAAAAA./;
    my ($next) = get_page(with_args($path, limit => 2), $deleted_tag);
    my @codes = map { (get_page($path, $_))[0]->code }
        $forged, $next->header('ETag') // '"x"', "W/\"..\", *x, \"\xff\"", '"' . ('.' x 3000) . '"', 'W/';
    is "@codes", '200 200 200 200 200', "$path: forged or malformed tags: the page (@codes)";
    my ($again) = get_page($path, $deleted_tag);
    is $again->code, 304, "$path: and its own tag is still 304";
}

my @above_info = grep { /\[couchpage:(?:emerg|alert|crit|error|warn)\]/ } error_log_since($mark, wait => 1);
is join("\n", @above_info), '', 'no line above info';

# --- where the index lags: no seal ---------------------------------------------
load_fresh();
my ($lag) = get_page('/fresh/lag/');
my $lag_tag = $lag->header('ETag') // '';
is $lag->code, 200, '/fresh/lag/: a first page';
my ($res, $cost) = get_page('/fresh/lag/', $lag_tag);
is $res->code, 304, '/fresh/lag/: revalidated: 304';
is $res->header('ETag'), $lag_tag, '/fresh/lag/: its tag has no seal';
ok $cost->{rows} > 0, '/fresh/lag/: the page itself was read';
doc_put('/fresh/lag/', 'doc01', { t => 'edited while the index lags', n => 1 });
($res) = get_page('/fresh/lag/', $lag_tag);
is $res->code, 200, '/fresh/lag/: a shown document edited: 200';
like $res->content, qr/edited while the index lags/, '/fresh/lag/: with the edit';
($res) = get_page('/fresh/lag/', $res->header('ETag'));
is $res->code, 304, '/fresh/lag/: its new tag: 304';

# --- the costs of a full page and of a revalidation, as CouchDB counts requests ---
my ($full, $full_cost) = get_page('/fresh/docs/');
my ($cheap) = get_page('/fresh/docs/', $full->header('ETag'));
my ($again, $again_cost) = get_page('/fresh/docs/', $cheap->header('ETag'));
is $again->code, 304, 'a page revalidated';
is $again_cost->{requests}, 1, 'costs one backend request';
is $again_cost->{rows}, 0, 'which reads no row';
ok $full_cost->{rows} >= 3, "a full page reads its rows ($full_cost->{rows})";
ok $full_cost->{requests} >= 1, "in $full_cost->{requests} request(s)";
my ($head) = Apache::TestRequest::HEAD('/fresh/docs/', 'If-None-Match' => $cheap->header('ETag'));
is $head->code, 304, 'HEAD with the sealed tag: 304';
my ($plain) = get_page('/fresh/docs/', '*');
is $plain->code, 304, 'If-None-Match: *: 304';

# --- the same tag from every server of the same configuration ----------------
# The seal's key is a digest of the configuration: an httpd of its own, then
# another process on the same configuration (what a second server of the
# same configuration is), give the page the same sealed tag and each
# revalidates the other's; a configuration changed anywhere seals anew.
load_fresh();
my $double = double_url();
my ($user, $password) = ($ENV{COUCHPAGE_DOUBLE_USER} // 'admin',
                         $ENV{COUCHPAGE_DOUBLE_PASSWORD} // 'double-admin-secret');
my $OWN = <<"CONF";
<Location "/fr/">
    SetHandler couchpage
    CouchPageView "$double/fresh/_design/d/_view/v"
    CouchPageCredentials "$user" "$password"
    CouchPageSize 3
    CouchPageFormat json
</Location>
CONF
my $root = tempdir('couchpage-fresh-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $http = HTTP::Tiny->new(timeout => 30);
# an own httpd on $conf (on $port: again): (ETag of /fr/, status of /fr/
# with If-None-Match $inm, the port)
sub own_tag {
    my ($conf, $port, $inm) = @_;
    my ($p, $pid) = start_own_httpd($root, [qw(proxy proxy_http)], $conf, defined $port ? (port => $port) : ());
    my $tag = $http->get("http://127.0.0.1:$p/fr/")->{headers}{etag} // '';
    my $status = defined $inm ? $http->get("http://127.0.0.1:$p/fr/", { headers => { 'If-None-Match' => $inm } })->{status} : 0;
    kill 'TERM', $pid;
    reap_process($pid, time + 30);
    return ($tag, $status, $p);
}
my ($one, undef, $port) = own_tag($OWN);
like $one, qr/^"[A-Za-z0-9_-]{27}\.[A-Za-z0-9_-]{22}"$/, 'an own httpd: a sealed tag';
my ($two, $status) = own_tag($OWN, $port, $one);
is $two, $one, 'another httpd process of the same configuration: the same tag';
is $status, 304, "which revalidates the first one's tag";
my ($three) = own_tag($OWN . qq{<Location "/elsewhere/">\n    CouchPageMaxAge 5\n</Location>\n}, $port);
is digest_of($three), digest_of($one), 'a configuration changed elsewhere: the same content digest';
isnt $three, $one, '... under another seal';

# --- the 3-node cluster: never a stale 304 (COUCHDB_CLUSTER_URLS) --------------
# A write acknowledged by two copies (w=2) reaches the third a moment later.
# Read just after it, a page may come from the third (a view read is no
# quorum read) while the database's GET before it counted the write: such
# a page is not sealed with that sequence, else the seal would keep it
# once the copies agree. After a quiet moment, the page the client holds
# shows every write.
if (@CLUSTER) {
    my $json = JSON::PP->new->utf8->canonical;
    my ($base, $cuser, $cpassword, $req) = cluster_node($CLUSTER[0]);
    cluster_db_anew($req, 'fresh36', @DOCS,
        { _id => '_design/d', views => { v => { map => 'function (doc) { if (typeof doc.n == "number") emit(doc.n, null); }' } } });
    my ($s) = $req->(POST => '/fresh36/_index', { index => { fields => ['n'] }, ddoc => 'byn', name => 'byn' });
    die "the index of fresh36: $s\n" unless $s =~ /^20[01]$/;
    sleep 2;
    my $croot = tempdir('couchpage-fresh36-XXXXXX', TMPDIR => 1, CLEANUP => 1);
    my ($cport) = start_own_httpd($croot, [qw(proxy proxy_http)], <<"CONF");
LogFormat "%{X-Cost-Test}i %>s %{couchpage-backend-requests}n %{couchpage-rows}n" c36
CustomLog "$croot/costs_log" c36
<Location "/cd/">
    SetHandler couchpage
    CouchPageView "$base/fresh36/_design/d/_view/v"
    CouchPageCredentials "$cuser" "$cpassword"
    CouchPageIncludeDocs On
    CouchPageSize 3
    CouchPageFormat json
</Location>
<Location "/cf/">
    SetHandler couchpage
    CouchPageView "$base/fresh36/_find"
    CouchPageCredentials "$cuser" "$cpassword"
    CouchPageSelector '{"n": {"\$gte": 0}}'
    CouchPageSort n
    CouchPageSize 3
    CouchPageFormat json
</Location>
CONF
    # GET of the own httpd with If-None-Match: (status, tag, body or undef,
    # how: 200, "seal" (304 from the seal: no row read), "digest")
    my $n = 0;
    my $get = sub {
        my ($path, $inm) = @_;
        my $id = "c36-$$-" . ++$n;
        my $r = $http->get("http://127.0.0.1:$cport$path", { headers => { 'X-Cost-Test' => $id,
            defined $inm ? ('If-None-Match' => $inm) : () } });
        my $rows;
        for my $try (1 .. 50) {
            if (open my $fh, '<', "$croot/costs_log") {
                for (<$fh>) { my @f = split ' '; $rows = $f[3] if @f == 4 && $f[0] eq $id }
            }
            last if defined $rows;
            sleep 0.1;
        }
        my $how = $r->{status} == 304 ? (($rows // '') eq '0' ? 'seal' : 'digest') : $r->{status};
        return ($r->{status}, $r->{headers}{etag}, $r->{status} == 200 ? $r->{content} : undef, $how);
    };
    for my $path ('/cd/', '/cf/') {
        my ($status, $tag, $body) = $get->($path);
        my (%how, @stale, @bad);
        my $rev;
        for my $round (1 .. 16) {
            # a shown document edited, w=2, through the node the pages are
            # read through: its own copies, which its database GET names
            # first, take the write among the first two
            my (undef, $doc) = $req->(GET => '/fresh36/doc01?r=3');
            my ($st) = $req->(PUT => '/fresh36/doc01?w=2', { %$doc, t => "edit $round" });
            die "editing doc01 on the cluster: $st\n" unless $st =~ /^20[12]$/;
            for my $when ('at once', 'quiet') {
                sleep 1.5 if $when eq 'quiet';
                my ($code, $new, $content, $how) = $get->($path, $tag);
                push @bad, "$round $when $code" unless $code == 200 || $code == 304;
                ($tag, $body) = ($new // $tag, $content // $body) if $code == 200 || $code == 304;
                $how{"$when $how"}++;
                push @stale, "$round ($how)" if $when eq 'quiet' && ($body // '') !~ /"t":"edit $round"/;
            }
        }
        is "@bad", '', "the cluster $path: every revalidation 200 or 304";
        is "@stale", '', "the cluster $path: after a quiet moment, the client's page shows every edit: no stale 304";
        ok(($how{'quiet 200'} // 0) + ($how{'at once 200'} // 0) >= 16,
           "the cluster $path: every edit read as a full page at least once")
            or diag($json->encode(\%how));
        diag("the cluster $path: " . $json->encode(\%how));
    }
}
