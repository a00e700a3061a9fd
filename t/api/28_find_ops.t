# SPDX-License-Identifier: Apache-2.0
# A Mango _find location (issue 26) with what a view location has around
# it, through an httpd of the test's own:
#  - CouchPageUpdate and CouchPageStable, which CouchDB 3.4.3's _find takes
#    as JSON booleans in its body: apachectl -t takes true/false and On/Off
#    there and refuses update lazy (CouchDB answers it invalid_boolean);
#    the body the double receives says them; on a real CouchDB a page with
#    update false does not wait for the index (a document written since
#    the index was last read is not on it, with autoupdate off), update
#    true does;
#  - balancer:// of two BalancerMembers in front of CouchDB: walked forward
#    and back, every row once, in the backend's own _find order, and both
#    members elected (balancer-manager's table). The members are two nodes of
#    the real 3-node cluster where one is given (COUCHDB_CLUSTER_URLS, in
#    the real tier), else the tier's backend as 127.0.0.1 and as localhost.
#    With a cluster given and fewer than two of its nodes answering
#    (14_cluster.t stops two), the checks of the balancer's walks are
#    skipped, saying so: never one node under two names in their stead;
#  - the CouchPage section of mod_status: the _find pages, their backend
#    requests (one a page), time and rows, and their errors (400, 502, 503)
#    counted as a view's, equal to the access log's notes.
use strict;
use warnings;

use Apache::Test qw(plan ok skip);
use Apache::TestUtil qw(t_cmp);
use File::Temp qw(tempdir);
use HTTP::Tiny ();
use JSON::PP ();
use List::Util qw(sum0);
use MIME::Base64 ();
use Time::HiRes qw(time sleep);
use CouchPageTest qw(decode_json_or_undef with_args backend_url backend_request backend_open_db
                     backend_kind double_url double_fault double_log httpd_config_test
                     start_own_httpd);

plan tests => 22;

my $JSON = JSON::PP->new->utf8->canonical;
my $couchdb = backend_kind() eq 'couchdb';
my $double = double_url();
my $is_double = backend_kind($double) eq 'double';

# --- apachectl -t ---------------------------------------------------------------
my $FIND = 'http://127.0.0.1:5984/db/_find';
for my $case (
    ["CouchPageView $FIND\nCouchPageSort n\nCouchPageUpdate false\nCouchPageStable On", undef],
    ["CouchPageView $FIND\nCouchPageSort n\nCouchPageUpdate true\nCouchPageStable Off", undef],
    ["CouchPageView $FIND\nCouchPageSort n\nCouchPageUpdate lazy",
     qr{CP0320: CouchPageUpdate lazy is set where CouchPageView \(\S+:\d+\) names a _find, whose update is true or false only \(CouchDB answers invalid_boolean\)}],
    ["CouchPageView http://127.0.0.1:5984/db/_design/d/_view/v\nCouchPageUpdate lazy", undef],
) {
    my ($directives, $expect) = @$case;
    my ($rc, $out) = httpd_config_test($directives);
    ok(defined $expect ? $rc != 0 && $out =~ $expect : $rc == 0 && $out =~ /Syntax OK/)
        or print STDERR "# $directives\n# got: $out\n";
}
{
    # lazy from an outer section, merged into a _find location
    my ($rc, $out) = httpd_config_test(undef, conf => qq{<Location "/a/">\nCouchPageUpdate lazy\n</Location>\n}
        . qq{<Location "/a/b/">\nSetHandler couchpage\nCouchPageView $FIND\nCouchPageSort n\n</Location>\n});
    ok($rc != 0 && $out =~ /CP0320: CouchPageUpdate lazy is set where .* in <Location "\/a\/b\/">/)
        or print STDERR "# got: $out\n";
}

# --- the data -------------------------------------------------------------------
sub must {
    my ($what, $status, $body) = @_;
    die "$what: $status " . $JSON->encode($body // {}) . "\n" unless $status =~ /^20[012]$/;
    return $body;
}

# 60 posts, n = i % 4 (fifteen equal values each), ids of mixed case.
my @DOCS = map { { _id => (qw(a B c D))[$_ % 4] . sprintf('%02d', ($_ * 7) % 60), n => $_ % 4 } } 0 .. 59;
my $INDEX = { index => { fields => ['n'] }, ddoc => 'by-n', name => 'by-n', type => 'json' };
my $QUERY = { selector => { n => { '$gte' => undef } }, sort => [{ n => 'asc' }], limit => 1000 };

# A CouchDB node of the cluster, straight: (status, decoded body).
my $HTTP = HTTP::Tiny->new(timeout => 60);
sub node_request {
    my ($node, $method, $path, $body) = @_;
    my $res = $HTTP->request($method, "$node->{base}$path", {
        headers => { Authorization => 'Basic ' . MIME::Base64::encode_base64("$node->{user}:$node->{password}", ''),
                     'Content-Type' => 'application/json', Accept => 'application/json' },
        defined $body ? (content => $JSON->encode($body)) : (),
    });
    return ($res->{status}, decode_json_or_undef($res->{content}));
}

# Where the balancer's members are, and a request to their data: two of
# the cluster's nodes that answer, or the tier's backend under two names.
# With a cluster given of which fewer than two nodes answer, the backend
# serves the file, and $no_cluster says why the walks through the balancer
# are skipped.
my (@members, $request, $where, $credentials);
my @cluster = $couchdb ? map {
    m{^http://([^:/@]+):([^/@]+)\@([^/]+?)/?$} ? { user => $1, password => $2, base => "http://$3" } : ()
} split /\s*,\s*/, $ENV{COUCHDB_CLUSTER_URLS} // '' : ();
my @up = grep { (node_request($_, GET => '/_up'))[0] == 200 } @cluster;
my $no_cluster = @cluster && @up < 2
    ? sprintf('%d of the %d nodes of COUCHDB_CLUSTER_URLS answer: a balancer of two of them needs two',
              scalar @up, scalar @cluster)
    : '';
print STDERR "# $no_cluster\n" if $no_cluster;
@up = () if $no_cluster;
if (@up) {
    my $node = $up[0];
    $request = sub { node_request($node, @_) };
    @members = map { $_->{base} } @up[0, 1];
    $where = 'the 3-node cluster\'s nodes ' . join(' and ', @members);
    # its admin's: a database's _security cannot be set while nodes are down
    $credentials = qq{CouchPageCredentials "$node->{user}" "$node->{password}"};
}
else {
    $request = \&backend_request;
    @members = (backend_url(), backend_url() =~ s{//127\.0\.0\.1:}{//localhost:}r);
    $where = 'the backend ' . backend_url() . ' under two names';
}
print "# the balancer's members: $where\n";
$request->(DELETE => '/findops');
must('findops', $request->(PUT => '/findops'));
must('findops open', $request->(PUT => '/findops/_security',
    { admins => { names => [], roles => [] }, members => { names => [], roles => [] } })) unless $credentials;
must('findops docs', $request->(POST => '/findops/_bulk_docs', { docs => \@DOCS }));
must('findops index', $request->(POST => '/findops/_index', $INDEX));
# Each node finds a new index through a cache of its own (mango_idx:list
# reads ddoc_cache), which a write refreshes soon, not at once: under load a
# node may answer a _find no_usable_index (400) just after _index. The
# reference _find is asked of each member node until it answers, for a
# minute at most.
sub soon {
    my ($what, $ask) = @_;
    my $until = time + 60;
    while (1) {
        my ($status, $body) = $ask->();
        return ($what, $status, $body) if $status =~ /^20[012]$/ or time > $until;
        print "# $what: $status, asked again\n";
        sleep 0.5;
    }
}
my @want;
for my $node (@up ? @up[0, 1] : (undef)) {
    my $ask = $node ? sub { node_request($node, POST => '/findops/_find', $QUERY) }
                    : sub { $request->(POST => '/findops/_find', $QUERY) };
    @want = map { $_->{_id} } @{ must(soon('findops reference', $ask))->{docs} };
}

# --- the httpd --------------------------------------------------------------------
my $members = join '', map { qq{    BalancerMember "$_" keepalive=On timeout=10 retry=5\n} } @members;
my $backend = backend_url();
my ($double_user, $double_password) = ($ENV{COUCHPAGE_DOUBLE_USER} // 'admin',
                                       $ENV{COUCHPAGE_DOUBLE_PASSWORD} // 'double-admin-secret');
my $root = tempdir('couchpage-findops-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my ($port) = start_own_httpd($root, [qw(status slotmem_shm proxy proxy_http proxy_balancer lbmethod_byrequests)], <<"CONF");
LogFormat "%>s %U %{couchpage-backend-requests}n %{couchpage-backend-time}n %{couchpage-rows}n %{couchpage-served-by}n" findops
CustomLog "$root/access_log" findops
<Location "/server-status">
    SetHandler server-status
</Location>
<Location "/balancer-manager">
    SetHandler balancer-manager
</Location>
<Proxy "balancer://couch">
$members    ProxySet lbmethod=byrequests
</Proxy>
<Location "/lb/">
    SetHandler couchpage
    CouchPageView "balancer://couch/findops/_find"
    CouchPageCount none
    ${\ ($credentials // '')}
    CouchPageSelector '{"n": {"\$gte": null}}'
    CouchPageSort n
    CouchPageSize 7
    CouchPageFormat json
</Location>
# the same rows numbered, by keyset over the index's view (its fields are
# the sort's, the selector fixes none), through the balancer
<Location "/lb-numbered/">
    SetHandler couchpage
    CouchPageView "balancer://couch/findops/_find"
    CouchPageCount none
    ${\ ($credentials // '')}
    CouchPageSelector '{"n": {"\$gte": null}}'
    CouchPageSort n
    CouchPageIndex by-n by-n
    CouchPageSize 7
    CouchPageFormat json
</Location>
# nothing listens on port 1: 503
<Location "/down/">
    SetHandler couchpage
    CouchPageView "http://127.0.0.1:1/findops/_find"
    CouchPageCount none
    CouchPageSort n
</Location>
# an index that does not exist, without fallback: CouchDB refuses, 502
<Location "/no-index/">
    SetHandler couchpage
    CouchPageView "$backend/findops/_find"
    CouchPageCount none
    CouchPageSelector '{"n": {"\$gte": null}}'
    CouchPageSort n
    CouchPageIndex no-such-index
    CouchPageFormat json
</Location>
<Location "/opts/">
    SetHandler couchpage
    CouchPageView "$double/findopts/_find"
    CouchPageCount none
    CouchPageCredentials "$double_user" "$double_password"
    CouchPageSort n
    CouchPageUpdate false
    CouchPageStable On
    CouchPageFormat json
</Location>
<Location "/opts-plain/">
    SetHandler couchpage
    CouchPageView "$double/findopts/_find"
    CouchPageCount none
    CouchPageCredentials "$double_user" "$double_password"
    CouchPageSort n
    CouchPageFormat json
</Location>
<Location "/lag-false/">
    SetHandler couchpage
    CouchPageView "$backend/findlag/_find"
    CouchPageCount none
    CouchPageSelector '{"n": {"\$gte": null}}'
    CouchPageSort n
    CouchPageUpdate false
    CouchPageStable On
    CouchPageSize 3
    CouchPageFormat json
</Location>
<Location "/lag-true/">
    SetHandler couchpage
    CouchPageView "$backend/findlag/_find"
    CouchPageCount none
    CouchPageSelector '{"n": {"\$gte": null}}'
    CouchPageSort n
    CouchPageUpdate true
    CouchPageSize 3
    CouchPageFormat json
</Location>
CONF

my $ua = HTTP::Tiny->new(timeout => 60);
sub get {
    my ($path) = @_;
    my $res = $ua->get("http://127.0.0.1:$port$path", { headers => { Accept => 'application/json' } });
    return ($res->{status}, decode_json_or_undef($res->{content}), $res);
}

sub status_auto {
    my (undef, undef, $res) = get('/server-status?auto');
    die "server-status?auto: $res->{status}\n" unless $res->{status} == 200;
    return { map { /^([^:]+):\s*(.*)$/ ? ($1 => $2) : () } split /\n/, $res->{content} };
}

# The balancer's members and how often each was elected: balancer-manager's
# table, a row a member (Worker URL, Route, RouteRedir, Factor, Set, Status,
# Elected, ...).
sub elected {
    my (undef, undef, $res) = get('/balancer-manager');
    my %elected = $res->{content} =~ m{<td><a href="[^"]*">([^<]+)</a></td>(?:<td>[^<]*</td>){5}<td>(\d+)</td>}g;
    return \%elected;
}

# Follows next (or prev from the Last page) to the end: (ids in the
# location's order, pages, statuses but 200).
sub walk {
    my ($path, $back) = @_;
    my ($token, @ids, @bad, $pages) = ($back ? 'last' : undef);
    for (1 .. 100) {
        my ($status, $body) = get(with_args($path, start => $token));
        if ($status != 200 or ref $body ne 'HASH') { push @bad, $status; last }
        $pages++;
        my @page = map { $_->{_id} } @{ $body->{items} };
        if ($back) { unshift @ids, @page } else { push @ids, @page }
        $token = $body->{ $back ? 'prev' : 'next' };
        last unless defined $token;
    }
    return (\@ids, $pages, \@bad);
}

# The access log's lines with the module's notes, once there are COUNT.
sub log_lines {
    my ($count) = @_;
    my $until = time + 10;
    while (1) {
        my @lines;
        if (open my $fh, '<', "$root/access_log") {
            @lines = grep { $_->{requests} ne '-' }
                     map { my @f = split ' '; { status => $f[0], path => $f[1], requests => $f[2],
                                                time => $f[3], rows => $f[4], served_by => $f[5] } } <$fh>;
        }
        return @lines if @lines >= $count or time > $until;
        sleep 0.1;
    }
}

# --- balancer:// and the status section ------------------------------------------
my $before = status_auto();
my $elected_before = elected();
my ($fwd, $fpages, $fbad) = walk('/lb/');
my ($back, $bpages, $bbad) = walk('/lb/', 1);
if ($no_cluster) {
    skip($no_cluster) for 1 .. 4;
}
else {
    ok(t_cmp(join(' ', @$fwd), join(' ', @want), "forward through balancer:// of $where") && @want == 60 && !@$fbad)
        or print STDERR "# statuses @$fbad\n";
    ok(t_cmp(join(' ', @$back), join(' ', @want), 'backward through the balancer') && !@$bbad)
        or print STDERR "# statuses @$bbad\n";
    my %count;
    $count{$_}++ for @$fwd, @$back;
    ok(t_cmp(join(' ', grep { $count{$_} != 2 } sort keys %count), '', 'every row once each way'));
    my $elected = elected();
    my @used = grep { ($elected->{$_} // 0) > ($elected_before->{$_} // 0) } @members;
    ok(t_cmp(scalar @used, 2, 'both members were elected: ' . join(', ', map { "$_ $elected->{$_}" } sort keys %$elected)));
}

# errors: two bad tokens (400), an index CouchDB has not (502), a backend down (503)
my @codes = map { (get($_))[0] } '/lb/?start=not-a-token', '/lb/?start=%7B%22c%22%3A1%7D',
                                  '/no-index/', '/down/', '/down/';
ok(t_cmp("@codes", '400 400 502 503 503', 'the errors of _find pages'));
my $after = status_auto();
my %diff = map { $_ => ($after->{$_} // 0) - ($before->{$_} // 0) }
           grep { /^CouchPage/ && $_ ne 'CouchPageVersion' } keys %$after;
my $pages = $fpages + $bpages;
ok(t_cmp($diff{CouchPagePages}, $pages, 'CouchPagePages counted the _find pages'));
ok(t_cmp(join(',', map { $diff{"CouchPageErrors$_"} } 400, 502, 503), '2,1,2',
         'CouchPageErrors400, 502, 503 counted the _find errors'));
my @lines = log_lines($pages + 5);
my @served = grep { $_->{status} == 200 } @lines;
# one _find request a page; a child's first page of the location in a minute
# also learns its index (POST _explain, and a look at the view it names;
# pouchdb-server's Mango indexes are no views, so the pages go by _find;
# on CouchDB the index's view may serve them: one GET)
ok(t_cmp(join(',', scalar @served, scalar(grep { $_->{requests} >= 1 && $_->{requests} <= 3 } @served),
              (grep({ $_->{requests} == 1 } @served) ? 1 : 0),
              scalar(grep { $_->{served_by} eq 'find' || ($couchdb && $_->{served_by} eq 'get') } @served)),
         join(',', $pages, $pages, 1, $pages), 'one request a page (a child learning its index: up to 3), each noted "find" (CouchDB: or "get")'));
ok(t_cmp($diff{CouchPageBackendRequests}, sum0(map { $_->{requests} } @lines),
         'CouchPageBackendRequests: the sum of the notes'));
ok(t_cmp($diff{CouchPageBackendTimeMicroseconds}, sum0(map { $_->{time} } @lines),
         'CouchPageBackendTimeMicroseconds: the sum of the notes'));
ok(t_cmp($diff{CouchPageRows}, sum0(map { $_->{rows} } @lines), 'CouchPageRows: the sum of the notes')
   && $diff{CouchPageRows} >= 120);

# --- numbered through the balancer: the index's view, one query a page -------------
{
    my (%walked, @offsets);
    for my $back (0, 1) {
        my ($token, @ids, @bad, @pages) = ($back ? 'last' : undef);
        for (1 .. 100) {
            my ($status, $body) = get(with_args('/lb-numbered/', start => $token));
            if ($status != 200 or ref $body ne 'HASH') { push @bad, $status; last }
            push @pages, $body;
            my @page = map { $_->{_id} } @{ $body->{items} };
            if ($back) { unshift @ids, @page } else { push @ids, @page }
            $token = $body->{ $back ? 'prev' : 'next' };
            last unless defined $token;
        }
        $walked{$back} = join(' ', @ids) . (@bad ? " (statuses @bad)" : '');
        # on CouchDB numbered from the view's offsets; pouchdb-server's
        # Mango index is no view: relative, by _find
        push @offsets, join(' ', map { $couchdb ? ($_->{offset} // '-') . '/' . ($_->{total_rows} // '-')
                                                : $_->{numbering} } $back ? reverse @pages : @pages);
    }
    my $numbered = join ' ', map { $couchdb ? ($_ * 7) . '/60' : 'relative' } 0 .. 8;
    if ($no_cluster) {
        skip($no_cluster) for 1 .. 2;
    }
    else {
        ok(t_cmp("$walked{0} | $walked{1}", join(' ', @want) . ' | ' . join(' ', @want),
                 "numbered through balancer:// of $where, both ways"));
        ok(t_cmp("$offsets[0] | $offsets[1]", "$numbered | $numbered",
                 'the pages where CouchDB\'s offsets place them, both ways'));
    }
}

# --- CouchPageUpdate and CouchPageStable in the body ---------------------------------
if ($is_double) {
    # the double answers the _find with a page of its own, and logs the body it got
    my $answer = { docs => [ map { { _id => "d$_", n => $_ } } 1 .. 3 ], bookmark => 'nil' };
    double_log(clear => 1);
    my @statuses;
    for my $path ('/opts/', '/opts-plain/') {
        double_fault(mode => 'status', status => 200, body => $answer, path => '/findopts/_find', count => 1);
        push @statuses, (get($path))[0];
    }
    double_fault(mode => 'none');
    my @bodies = map { decode_json_or_undef($_->{body} // '') // {} }
                 grep { ($_->{path} // '') eq '/findopts/_find' } double_log();
    ok(t_cmp("@statuses", '200 200', 'pages of the double\'s _find answers'));
    ok(t_cmp(join(' ', map { $JSON->encode([$_->{update}, $_->{stable}]) } @bodies),
             '[false,true] [null,null]', 'update false and stable true in the body; neither unset'));
}
else {
    skip('only the double logs what it received') for 1 .. 2;
}
if ($couchdb) {
    # an index CouchDB's background indexer leaves alone: only a query updates it
    backend_request(DELETE => '/findlag');
    backend_open_db('findlag');
    must('findlag docs', backend_request(POST => '/findlag/_bulk_docs',
        { docs => [ map { { _id => "k$_", n => $_ } } 0 .. 9 ] }));
    must('findlag index', backend_request(POST => '/findlag/_index', $INDEX));
    my $ddoc = must('findlag ddoc', backend_request(GET => '/findlag/_design/by-n'));
    must('findlag autoupdate', backend_request(PUT => '/findlag/_design/by-n', { %$ddoc, autoupdate => JSON::PP::false }));
    my ($s0, $p0) = get('/lag-true/');
    must('findlag late', backend_request(PUT => '/findlag/late', { n => -1 }));
    sleep 1;
    my ($s1, $p1) = get('/lag-false/');
    my ($s2, $p2) = get('/lag-true/');
    my ($s3, $p3) = get('/lag-false/');
    my $ids = sub { join ' ', map { $_->{_id} } @{ $_[0]{items} || [] } };
    ok(t_cmp("$s0 $s1 " . $ids->($p1), '200 200 k0 k1 k2',
             'update false (and stable true): the page from the index as it is, without the new document'));
    ok(t_cmp("$s2 " . $ids->($p2) . " / $s3 " . $ids->($p3), '200 late k0 k1 / 200 late k0 k1',
             'update true brings the index up to date, and update false then reads it'));
}
else {
    skip('the index lag is a real CouchDB\'s') for 1 .. 2;
}
