# SPDX-License-Identifier: Apache-2.0
# Property tests of linked-list paging through the module (issue 3): for
# random data sets with many duplicate keys of mixed JSON types, for every
# page size from 1 to 25 and each option (plain, descending, a key range in
# both directions, include_docs, grouped reduce rows exact and at level 1,
# _all_docs), walking next from the first page yields every row of the view
# exactly once and in order, walking prev from the last page yields them in
# reverse, and each page's prev opens the page before it. With numbered page
# links (absolute, relative, with include_docs), each page's links open the
# pages of the walk they name. Every page's position (first and last row,
# the location's total, the last page and its link) is exact wherever
# CouchDB has offsets: map views and _all_docs, ranges, descending,
# partitions; grouped reduce rows are counted (CouchPageCount's default), exact.
#
# Every seventh document emits its key twice (one index entry of two rows).
# Keys include strings that collate equal but differ (NFC and NFD), and keys
# too long for a token (5 KB and 10 KB strings, some sharing 5,000 bytes,
# 6,000 bytes of non-ASCII text, long arrays and objects), whose links are
# bounded tokens, and integers wider than 64 bits beside their doubles
# (emitted exactly with the double's emitRaw; a real CouchDB's JavaScript
# views emit them as doubles).
#
# The oracle is the whole view read straight from the CouchDB view double
# (t/double/), a test double of CouchDB 3.4 (not CouchDB), with the same
# options (or from a real CouchDB, when COUCHPAGE_DOUBLE points at one). The
# unique-key subset (plain and descending) also runs against the paging
# backend (COUCHPAGE_BACKEND: pouchdb-server, or in the real tier a real
# CouchDB), whose own answer is then the oracle (pouchdb-server ignores
# startkey_docid, so only unique keys page right there).
#
# Seeds: COUCHPAGE_PROP_SEEDS=1,2,3 runs those data sets; by default two
# fixed seeds and COUCHPAGE_SEED, which defaults to a fixed one under CI=true
# (CI's runs are the same every time) and to a new one per run otherwise.
# The seeds are printed first; every failure names its seed.
# COUCHPAGE_PROP_ROWS sets the rows per data set (default 200).
use strict;
use warnings;
use utf8;

use Apache::Test qw(-withtestmore);
use JSON::PP ();
use POSIX ();
use Time::HiRes qw(time);
use CouchPageTest qw(backend_kind backend_open_db);
use CouchPageWalk qw(:all);

binmode Test::More->builder->$_, ':encoding(UTF-8)' for qw(output failure_output todo_output);

my $STARTED = time;
my $ROWS = $ENV{COUCHPAGE_PROP_ROWS} || 200;
my $SEED = $ENV{COUCHPAGE_SEED}
        // (($ENV{CI} // '') eq 'true' ? 20261125 : int(time * 1000) % 1_000_000_007);
my @SEEDS = $ENV{COUCHPAGE_PROP_SEEDS} ? split(/,/, $ENV{COUCHPAGE_PROP_SEEDS}) : (20261121, 4242, $SEED);
diag '13_properties: seeds ', join(',', @SEEDS), ' (rerun with COUCHPAGE_PROP_SEEDS=', join(',', @SEEDS), ')';
my @SIZES = (1 .. 25);
my $JSON = JSON::PP->new->canonical;

# --- data ------------------------------------------------------------------------

# A pool of keys of every type, from which documents draw theirs (so many
# rows share a key): strings that collate equal (NFC and NFD spellings) and
# keys too long for a token among them, and integers wider than 64 bits (as
# JSON text: Perl has no such numbers) beside 2^53 + 1 and the double 2^64.
sub key_pool {
    my @strings = ('', 'a', 'A', 'b', 'B', 'ab', 'a b', 'aa', "\x{e9}", 'e', 'z', 'Z', '10', '9', "\x{df}",
                   "\x{65e5}", "\x{1F600}", '~', '-', 'b c', 'Ab', "e\x{301}", "a\x{30a}", "\x{e5}");
    # keys too long for a token: bounded tokens, some sharing their cut
    my @long = (('L' x 5000) . 'a', ('L' x 5000) . 'b', 'M' x 10240, "\x{e9}" x 3000);
    my @pool = (undef, JSON::PP::false, JSON::PP::true, -3, -1, 0, 1, 2, 3, 7, 0.5, -1.25, 1e-3, 2.5e10, 1e21,
                @strings);
    my $n = sub { (-1, 0, 1, 2, 0.5)[int rand 5] };
    my $s = sub { $strings[int rand @strings] };
    push @pool, map { [$n->()] } 1 .. 3;
    push @pool, map { [$s->(), $n->()] } 1 .. 6;
    push @pool, map { [$s->()] } 1 .. 3;
    push @pool, [], [undef, JSON::PP::true], [[1]], [[]], ['a', [1, 2]], ['b'], ['b', 0];
    push @pool, { a => 1 }, { a => 2 }, { b => 'x' }, {}, { a => [1] };
    # member order matters: written as JSON text below
    push @pool, \'{"b":1,"a":2}', \'{"a":2,"b":1}';
    push @pool, @long, ['k', 'm' x 6000], ['k', 'm' x 6000, 1], { t => 'x' x 5000 };
    push @pool, \'18446744073709551615', \'18446744073709551616', \'18446744073709551617',
                \'-18446744073709551617', \'9007199254740993', \'1.8446744073709552e19',
                \'[18446744073709551615,"a"]';
    return @pool;
}

sub key_json {
    my ($key) = @_;
    return ref $key eq 'SCALAR' ? $$key : JSON::PP->new->allow_nonref->canonical->encode($key);
}

# [docs as JSON text] for one seed: $ROWS documents with unique random ids,
# keys from the pool (many shared), values and bodies of their own.
sub data_set {
    my ($seed) = @_;
    srand($seed);
    my @pool = key_pool();
    # a few keys are frequent, most rare
    my @weighted = (@pool, map { $pool[int rand @pool] } 1 .. 20);
    my @id_chars = ('a' .. 'f', 'A' .. 'C', '0' .. '3', "\x{e9}", "\x{fc}", '-', '~', ' ');
    my (%ids, @docs);
    while (@docs < $ROWS) {
        my $id = join '', map { $id_chars[int rand @id_chars] } 1 .. 1 + int rand 4;
        next if $id =~ /^[_ ]/ or $ids{$id}++;
        my $key = $weighted[int rand @weighted];
        my $i = scalar @docs;
        # an exact integer beyond a double's is emitted from its text (emitRaw)
        my $raw = ref $key eq 'SCALAR' && $$key =~ /[0-9]{16}/ ? ',"raw":"' . ($$key =~ s/"/\\"/gr) . '"' : '';
        push @docs, '{"_id":' . JSON::PP->new->allow_nonref->encode($id) . ',"k":' . key_json($key) . $raw
                    . ',"i":' . $i . ',"body":' . $JSON->encode({ n => $i, s => "doc $i", l => [ $i % 3, { x => $i % 2 } ] }) . '}';
    }
    return \@docs;
}

my $MAP = 'function (doc) {
    function e(v) {
        if (doc.raw !== undefined && typeof emitRaw === "function") emitRaw(doc.raw, JSON.stringify(v));
        else emit(doc.k, v);
    }
    e(doc.i);
    if (doc.i % 7 === 0) e(-1 - doc.i);
}';

sub load_prop_db {
    my ($docs) = @_;
    couch_load('prop', docs => $docs, views => { v => { map => $MAP, reduce => '_count' } });
}

# The same documents in a partitioned database of one shard, partition
# a, b or c by their number: the shard's other partitions count in CouchDB's
# offsets, and not in the positions.
sub load_partitioned_db {
    my ($docs) = @_;
    my @parted = map { my $i = /"i":(\d+)/ ? $1 : 0; s/^\{"_id":"/'{"_id":"' . (qw(a b c))[$i % 3] . ':'/er } @$docs;
    couch_load('proppart', partitioned => 1, q => 1, docs => \@parted, views => { v => { map => $MAP } });
}

# --- the options ----------------------------------------------------------------
my $VIEW = '/prop/_design/d/_view/v';
my @OPTIONS = (
    { name => 'plain', path => '/prop/plain/', view => [$VIEW, reduce => 'false'], position => 'exact' },
    { name => 'descending', path => '/prop/desc/', view => [$VIEW, reduce => 'false', descending => 'true'],
      position => 'exact' },
    { name => 'range', path => '/prop/range/', view => [$VIEW, reduce => 'false', startkey => '0', endkey => '["b"]'],
      position => 'exact' },
    { name => 'range descending', path => '/prop/range-desc/',
      view => [$VIEW, reduce => 'false', descending => 'true', startkey => '["b"]', endkey => '0'],
      position => 'exact' },
    { name => 'include_docs', path => '/prop/docs/', view => [$VIEW, reduce => 'false', include_docs => 'true'],
      position => 'exact' },
    { name => 'reduce exact', path => '/prop/reduce-exact/', view => [$VIEW, reduce => 'true', group => 'true'],
      key_only => 1, position => 'exact' },
    { name => 'reduce level 1', path => '/prop/reduce-1/', view => [$VIEW, reduce => 'true', group_level => 1],
      key_only => 1, position => 'exact' },
    { name => '_all_docs', path => '/prop/ids/', view => ['/prop/_all_docs'], position => 'exact' },
    { name => 'partition b', path => '/prop/part/', view => ['/proppart/_partition/b/_design/d/_view/v'],
      position => 'exact' },
    { name => 'partition b descending', path => '/prop/part-desc/',
      view => ['/proppart/_partition/b/_design/d/_view/v', descending => 'true'], position => 'exact' },
    { name => 'partition c, _all_docs', path => '/prop/part-ids/', view => ['/proppart/_partition/c/_all_docs'],
      position => 'exact' },
    # with numbered page links: each page's links open the pages of the walk
    { name => 'page links', path => '/prop/links/', view => [$VIEW, reduce => 'false'],
      links => 2, absolute => 1, position => 'exact' },
    { name => 'page links, include_docs', path => '/prop/links-docs/',
      view => [$VIEW, reduce => 'false', include_docs => 'true'], links => 3, absolute => 1,
      position => 'exact' },
    { name => 'page links, range descending', path => '/prop/links-range-desc/',
      view => [$VIEW, reduce => 'false', descending => 'true', startkey => '["b"]', endkey => '0'],
      links => 2, absolute => 1, position => 'exact' },
    { name => 'page links, reduce level 1', path => '/prop/links-reduce/',
      view => [$VIEW, reduce => 'true', group_level => 1], key_only => 1, links => 2, absolute => 1,
      position => 'exact' },
);

# One test per (seed, option): every page size, both ways. Returns
# [ok, name, diagnostics] for report().
sub check_option {
    my ($seed, $option, $oracle, $backend) = @_;
    my @failures;
    for my $size (@SIZES) {
        my ($problems, $pages) = check_walk($option->{path}, $size, $oracle->{rows}, key_only => $option->{key_only});
        push @$problems, check_links($pages, $option->{links}, absolute => $option->{absolute})
            if $option->{links} and !@$problems;
        push @$problems, check_position($option->{path}, $size, $pages, scalar @{ $oracle->{rows} },
                                        ($option->{position} // '') => 1, grouped => $option->{key_only})
            if !@$problems;
        push @failures, "page size $size: " . join("\n    ", @$problems[0 .. ($#$problems < 2 ? $#$problems : 2)])
            if @$problems;
        last if @failures >= 3;
    }
    my $name = sprintf('seed %s, %s%s (%d rows): every page size 1..25, next and prev%s',
                       $seed, $option->{name}, $backend ? " on $backend" : '', scalar @{ $oracle->{rows} },
                       $option->{links} ? ', numbered links' : '');
    return [!@failures, $name,
            @failures ? join("\n", "seed $seed (rerun with COUCHPAGE_PROP_SEEDS=$seed), $option->{path}:", @failures) : ''];
}

sub report {
    my ($result) = @_;
    my ($ok, $name, $diag) = @$result;
    ok($ok, $name) or diag $diag;
}

# Runs jobs (subs returning check_option's result) in two processes, one
# per core, and returns their results in order. A job that dies fails.
sub in_parallel {
    my (@jobs) = @_;
    my $codec = JSON::PP->new->utf8;
    my @workers;
    for my $w (0, 1) {
        pipe(my $reader, my $writer) or die "pipe: $!\n";
        my $pid = fork // die "fork: $!\n";
        if ($pid == 0) {
            close $reader;
            reset_connections();
            my @out;
            for my $j (grep { $_ % 2 == $w } 0 .. $#jobs) {
                my $result = eval { $jobs[$j]->() } || [0, "job $j", "died: $@"];
                push @out, [$j, $result];
            }
            print $writer $codec->encode(\@out);
            close $writer;
            POSIX::_exit(0);    # no END blocks: the parent reports
        }
        close $writer;
        push @workers, [$pid, $reader, $w];
    }
    my @results = map { [0, "job $_", 'its worker process failed'] } 0 .. $#jobs;
    for my $worker (@workers) {
        my ($pid, $reader) = @$worker;
        my $text = do { local $/; <$reader> };
        waitpid $pid, 0;
        my $out = eval { $codec->decode($text) } || [];
        $results[ $_->[0] ] = $_->[1] for @$out;
    }
    return @results;
}

# On pouchdb-server (offsets wrong) a page that claims an absolute position
# must be exact; the unique keys on the double: positions exact.
my @POUCH = (
    { name => 'plain', path => '/prop/pouch/plain/', view => ['/propuniq/_design/d/_view/v'] },
    { name => 'descending', path => '/prop/pouch/desc/', view => ['/propuniq/_design/d/_view/v', descending => 'true'] },
);
# each seed, each option; the first seed's unique keys, each @POUCH option on
# the backend and on the double
plan tests => @SEEDS * @OPTIONS + 2 * @POUCH;

for my $seed (@SEEDS) {
    load_prop_db(data_set($seed));
    load_partitioned_db(data_set($seed));
    report($_) for in_parallel(map { my $option = $_; sub { check_option($seed, $option, double_view(@{ $option->{view} })) } } @OPTIONS);
}
diag sprintf('13_properties: double done after %.1f s', time - $STARTED);

# --- unique keys, also on the paging backend ---------------------------------------
# The /prop/pouch/ locations carry no credentials (backend_open_db makes the
# database readable without them on a real CouchDB). pouchdb-server's
# collation (strings by code point) and offsets differ from CouchDB's, so the
# backend's own answer is the oracle and no offsets are checked.
sub unique_set {
    my ($seed, $n) = @_;
    srand($seed);
    my @pool = key_pool();
    my (%seen, @docs);
    my $i = 0;
    # the pool's keys, then random strings and numbers until there are n;
    # not the keys too long for a token: pouchdb-server has no multi-query
    # POST, so each query is a GET, and Node refuses request headers over
    # 16 KB (431) before the key is read (docs/algorithm.md); nor integers
    # beyond a double's, which pouchdb-server's JavaScript reads as one
    # double (2^64 - 1, 2^64, 2^64 + 1): keys no longer unique there
    for my $key (@pool, map { int(rand 1000) - 500 } 1 .. $n) {
        my $text = key_json($key);
        next if $seen{$text}++ or length(utf8_bytes($text)) > 4096 or $text =~ /[0-9]{16}/;
        push @docs, '{"_id":"u' . sprintf('%04d', $i) . '","k":' . $text . ',"i":' . $i . '}';
        last if ++$i >= $n;
    }
    return \@docs;
}

for my $seed ($SEEDS[0]) {
    my $docs = unique_set($seed, 90);
    load_db_in_both($docs);
    my @jobs;
    for my $option (@POUCH) {
        push @jobs, sub { check_option($seed, $option, backend_view(@{ $option->{view} }), backend_kind()) };
        # the same unique keys on the double with the same options
        my %double = (%$option, path => $option->{path} =~ s{/pouch}{}r, name => "$option->{name} (unique keys)",
                      position => 'exact');
        push @jobs, sub { check_option($seed, \%double, double_view('/prop/_design/d/_view/v', reduce => 'false',
                                                                   @{ $option->{view} }[1 .. $#{ $option->{view} }])) };
    }
    report($_) for in_parallel(@jobs);
}

sub load_db_in_both {
    my ($docs) = @_;
    backend_raw(DELETE => '/propuniq');
    backend_open_db('propuniq');
    my ($status, $body) = backend_raw(PUT => '/propuniq/_design/d',
                                      $JSON->encode({ views => { v => { map => 'function (doc) { emit(doc.k, doc.i); }' } } }));
    die "the design document of propuniq in the backend: $status $body\n" unless $status == 201;
    ($status, $body) = backend_raw(POST => '/propuniq/_bulk_docs', '{"docs":[' . join(',', @$docs) . ']}');
    die "loading propuniq into the backend failed: $status $body\n" unless $status == 201;
    load_prop_db($docs);
}

diag sprintf('13_properties: %.1f s, seeds %s', time - $STARTED, join(',', @SEEDS));
