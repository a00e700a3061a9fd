# SPDX-License-Identifier: Apache-2.0
# Pages that never wait for the indexer (issue 12, item 6): CouchPageUpdate
# and CouchPageStable put CouchDB's update and stable into every query of a
# page.
#  - On the view double: its request log shows them in every query of a
#    first and a later page (the multi-query POST).
#  - On COUCHPAGE_BACKEND (pouchdb-server, which has no multi-query
#    endpoint: one GET per query) the pages are served with them.
#  - On a real CouchDB (the real tier, scripts/test with COUCHDB_URL): after
#    a burst of writes into a view's database whose index was built, a page
#    under update=false and one under update=lazy answer from the index as
#    it was, the burst's rows not in it (and update=false left the index as
#    it was: its update_seq in /db/_design/d/_info), while the default
#    location waits for the indexer and shows them. The burst's keys sort
#    before every older key, so that the first page tells which index a page
#    read. The design document has autoupdate false: CouchDB's background
#    indexer (ken) stays away, so only the pages' own queries update it.
use strict;
use warnings;

use Apache::Test qw(-withtestmore);
use CouchPageTest qw(get_json with_args double_load double_log double_queries double_request
                     double_url backend_kind);

my $REAL = backend_kind(double_url()) eq 'couchdb';
plan tests => 11 + 15;

sub keys_of { my ($page) = @_; return join ',', map { $_->{key} } @{ ref $page eq 'HASH' && $page->{items} || [] } }

# --- every query of a page carries them -----------------------------------------------
double_load('update', [ map { { _id => sprintf('doc%02d', $_), n => $_ } } 0 .. 9 ],
            { v => { map => 'function (doc) { emit(doc.n, null); }' } });
# the index is built (on CouchDB, update=lazy reads a new index empty)
double_request(GET => '/update/_design/d/_view/v?limit=0');
double_log(clear => 1) unless $REAL;
my ($status, $first) = get_json('/update/lazy/');
is $status, 200, 'CouchPageUpdate lazy, CouchPageStable On: a first page';
is keys_of($first), '0,1,2', 'with its rows';
($status, my $second) = get_json(with_args('/update/lazy/', start => $first->{next}));
is $status, 200, 'a later page';
is keys_of($second), '3,4,5', 'with its rows';
SKIP: {
    skip 'the request log is the view double\'s', 3 if $REAL;
    # values as a query string carries them; in a POST body they are JSON strings
    my @queries = grep { $_->{path} =~ m{^/update/} } double_queries(double_log());
    my %asked;
    for my $query (@queries) {
        my %param = map { ($_->[0] => $_->[1] =~ s/^"(.*)"$/$1/r) } @{ $query->{query} };
        $asked{'update=' . ($param{update} // '(none)') . ' stable=' . ($param{stable} // '(none)')}++;
    }
    is scalar @queries, 3, 'the pages asked their queries (the first page forward; the later page forward, backward)';
    is join(';', sort keys %asked), 'update=lazy stable=true', 'every query asked update=lazy and stable=true';
    is join(' ', map { $_->{method} } @queries), 'GET POST POST',
       'the first page in a GET (its one query), the later page in a multi-query POST';
}
($status, my $bands) = get_json('/update/bands/');
is $status, 200, 'on ' . backend_kind() . ': a first page with update=lazy&stable=true';
is keys_of($bands), 'Biffy Clyro,Foo Fighters,Future of the Left,Helmet,Kerub', 'with its rows';
($status, my $bands2) = get_json(with_args('/update/bands/', start => $bands->{next}));
is $status, 200, 'a later page';
is keys_of($bands2), 'Nirvana,Perfect Circle,Queens of the Stone Age,Silverchair,Tenacious D', 'with its rows';

# --- the write burst, on a real CouchDB -----------------------------------------------
SKIP: {
    skip 'the index lag is a real CouchDB\'s (the real tier)', 15 unless $REAL;
    my ($OLD, $BURST) = (1000, 1000);
    double_request(DELETE => '/burst');
    my ($code) = double_request(PUT => '/burst');
    die "creating burst: $code\n" unless $code == 201;
    ($code) = double_request(PUT => '/burst/_design/d', {
        autoupdate => JSON::PP::false,
        views => { v => { map => 'function (doc) { emit(doc.n, null); }' } },
    });
    die "burst's design document: $code\n" unless $code == 201;
    ($code) = double_request(POST => '/burst/_bulk_docs',
                             { docs => [ map { { _id => sprintf('old%05d', $_), n => $_ } } 0 .. $OLD - 1 ] });
    die "loading burst: $code\n" unless $code == 201;
    # the index is built, with every older document
    my ($built, $view) = double_request(GET => '/burst/_design/d/_view/v?limit=0');
    is $view && $view->{total_rows}, $OLD, "the index is built: $OLD rows";
    my (undef, $info) = double_request(GET => '/burst/_design/d/_info');
    my $seq_built = $info->{view_index}{update_seq};

    ($code) = double_request(POST => '/burst/_bulk_docs',
                             { docs => [ map { { _id => sprintf('new%05d', $_), n => -$_ } } 1 .. $BURST ] });
    is $code, 201, "a burst of $BURST writes, each key before every older one";

    ($status, my $page) = get_json('/update/burst-false/');
    is $status, 200, 'update=false: a page';
    is keys_of($page), '0,1,2,3,4', 'from the index as it was: the older rows';
    is $page->{total_rows}, $OLD, 'and their count';
    (undef, $info) = double_request(GET => '/burst/_design/d/_info');
    is $info->{view_index}{update_seq}, $seq_built, 'the index was left as it was (its update_seq)';

    ($status, $page) = get_json('/update/burst-lazy/');
    is $status, 200, 'update=lazy: a page';
    is keys_of($page), '0,1,2,3,4', 'answered at once, from the index as it was';
    is $page->{total_rows}, $OLD, 'its count';
    ($status, my $next) = get_json(with_args('/update/burst-lazy/', start => $page->{next}));
    is keys_of($next), '5,6,7,8,9', 'and its next page';

    ($status, $page) = get_json('/update/burst/');
    is $status, 200, 'the default location: a page';
    is keys_of($page), join(',', map { -$_ } reverse $BURST - 4 .. $BURST),
       'it waited for the indexer: the burst\'s rows first';
    is $page->{total_rows}, $OLD + $BURST, 'every row counted';
    (undef, $info) = double_request(GET => '/burst/_design/d/_info');
    cmp_ok $info->{view_index}{update_seq}, '>', $seq_built, 'the index is up to date now';
    ($status, $page) = get_json('/update/burst-lazy/');
    is keys_of($page), join(',', map { -$_ } reverse $BURST - 4 .. $BURST), 'and update=lazy reads it';
    double_request(DELETE => '/burst');
}
