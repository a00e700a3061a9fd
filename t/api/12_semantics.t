# SPDX-License-Identifier: Apache-2.0
# CouchDB's view semantics, paged through the module (issue 3): duplicate
# keys, keys of every JSON type, key ranges per location, descending views,
# grouped reduce rows, include_docs, _all_docs, partitioned databases and
# numbered page links. Every page is fetched from httpd as JSON and walked by
# next and by prev.
#
# The views are served by the CouchDB view double (t/double/), a test double
# of CouchDB 3.4 that reproduces CouchDB's collation, docid tie-breaking,
# reversed-range refusal, offsets and reduce grouping; it is not CouchDB.
# Each test loads its own databases into it through CouchDB's API, and the
# view read straight from the double with the same options is the oracle the
# pages are compared with. With COUCHPAGE_DOUBLE pointing at a real CouchDB
# the same tests run against it, but for the checks that need the double's
# emitRaw (exact big integers) or its request log, and with a few of their
# own (a Mango index over integers wider than 64 bits).
use strict;
use warnings;
use utf8;

use Apache::Test qw(-withtestmore);
use Time::HiRes qw(time);
use CouchPageTest qw(double_load double_log double_queries double_request with_args httpd_config_test
                     error_log_mark error_log_since);
use Encode ();
use URI::Escape qw(uri_escape_utf8);
use CouchPageWalk qw(:all);

binmode Test::More->builder->$_, ':encoding(UTF-8)' for qw(output failure_output todo_output);

my $STARTED = time;

# The double, or a real CouchDB (see the top of this file)?
my $DOUBLE = backend_is_double();
note $DOUBLE ? 'backend: the CouchDB view double' : 'backend: a CouchDB (not the double): double-only checks are skipped';

# 244 tests on any backend; 14 on the double only: big integers sent
# exactly (1) and their tokens (4), integers wider than 64 bits (2), the
# queries of CouchPageReduce Off (1), which queries fetch documents (1),
# where partition queries went (2 x 2 + 1); and 6 on a real CouchDB only:
# integers wider than 64 bits in a Mango index (1 oracle, 2 x 2 walks, 1 on
# the tokens). Each backend skips the other's, saying why (reasons of
# docs/testing.md's allowed skips: each runs in the other tier). A test
# added or left out changes this count: so a file that stops early fails.
plan tests => 244 + 14 + 6;

# Why a check of the other backend is skipped here.
my $EMITS_EXACTLY = 'only the double emits numbers exactly as written (emitRaw)';
my $REQUEST_LOG = "the request log is the view double's";
my $MANGO_WIDE = "a Mango index keying integers wider than 64 bits is a real CouchDB's";

# The requests the double received since the last clear_log (none from a
# real CouchDB, where the checks that use them are skipped).
sub clear_log { double_log(clear => 1) if $DOUBLE }

# check_walk as one test: the problems found are its diagnostics.
sub walk_ok {
    my ($path, $limit, $want, $name, %opt) = @_;
    my ($problems, $pages) = check_walk($path, $limit, ref $want eq 'HASH' ? $want->{rows} : $want, %opt);
    ok(!@$problems, $name) or diag join "\n", "$path?limit=$limit:", @$problems[0 .. ($#$problems < 4 ? $#$problems : 4)];
    return $pages;
}

# httpd -t of a <Location> with these directives: (syntax ok, output).
sub httpd_t {
    my ($status, $out) = httpd_config_test(@_);
    return ($status == 0 && $out =~ /Syntax OK/, $out);
}

# A token for ?start=: the JSON text of [key, docid].
sub token { JSON::PP->new->canonical->allow_nonref->encode([@_]) }

# JSON as CouchPageWalk's signatures spell it (ASCII, \u escapes).
sub jtext { JSON::PP->new->canonical->ascii->allow_nonref->encode($_[0]) }

# ---------------------------------------------------------------------------
# 1. Duplicate keys
# ---------------------------------------------------------------------------
# 1,000 rows with the key "k" whose ids sort differently by code point
# (CouchDB's docid order) than by collation; runs of three equal keys; and
# documents that emit their key twice.
my @PREFIXES = ('D', 'd', 'e', "\x{e9}", 'a b', 'A', "\x{1F600}", 'z', 'E', "\x{e8}");
my @one = map { { _id => $PREFIXES[$_ % @PREFIXES] . sprintf('%04d', (7919 * $_) % 1000), t => 'one', n => $_ } } 0 .. 999;
my @runs = map { { _id => ('x', 'X', "\x{fc}")[$_ % 3] . sprintf('%02d', 29 - $_), t => 'runs', run => int($_ / 3), n => $_ } } 0 .. 29;
my @twice = (
    { _id => 'tw-once', t => 'twice', k => 'a', once => JSON::PP::true },
    map { { _id => "tw-$_->[0]", t => 'twice', k => $_->[1] } } ['1', 'p'], ['2', 'p'], ['3', 'q'], ['4', 'q'], ['5', 'r'],
);
double_load('sem_dups', [ @one, @runs, @twice ], {
    one => { map => q{function (doc) { if (doc.t === 'one') emit('k', doc.n); }} },
    runs => { map => q{function (doc) { if (doc.t === 'runs') emit(doc.run, doc.n); }} },
    twice => { map => q{function (doc) {
        if (doc.t !== 'twice') return;
        emit(doc.k, 1);
        if (!doc.once) emit(doc.k, 'two');
    }} },
});

{
    my $view = double_view('/sem_dups/_design/d/_view/one', reduce => 'false');
    my @want = map { 'id=' . jtext($_) . ' key="k"' } sort map { $_->{_id} } @one;
    my @got = map { s/ value=.*//r } @{ $view->{rows} };
    is(first_difference(\@got, \@want), undef,
       "oracle: the double orders 1,000 equal keys by docid, by code point");
    my $pages = walk_ok('/sem/dups/', 7, $view, '1,000 equal keys, 7 a page: every row once, in order, and back');
    is(scalar @$pages, 143, '143 pages of 7 (the last of 6)');
    my %seen;
    $seen{ jstr(jget($_, 'id')) }++ for map { @{ $_->{items} } } @$pages;
    is(scalar(grep { $_ == 1 } values %seen), 1000, 'each of the 1,000 ids exactly once');
    # the tokens carry the docid that tells the rows of one key apart
    my ($key, $id) = token_parts($pages->[0]{next});
    is(jsig($key) . ' ' . $id, '"k" ' . jstr(jget($pages->[1]{items}[0], 'id')),
       "the next token is [\"k\", the next page's first id]");
}

{
    my $view = double_view('/sem_dups/_design/d/_view/runs', reduce => 'false');
    my @want = map { 'id=' . jtext($_->{_id}) . " key=$_->{run} value=$_->{n}" }
               sort { $a->{run} <=> $b->{run} or $a->{_id} cmp $b->{_id} } @runs;
    is(first_difference($view->{rows}, \@want), undef, 'oracle: runs of three equal keys, by docid in each');
    walk_ok('/sem/runs/', $_, $view, "runs of three equal keys, $_ a page: boundaries inside runs")
        for 2, 5, 1, 3, 4;
}

{
    my $view = double_view('/sem_dups/_design/d/_view/twice', reduce => 'false');
    # CouchDB keeps both rows of a document that emits one key twice, in the
    # Erlang order of their values (numbers before strings)
    is(join(',', map { jstr(jget($_, 'id')) . ':' . jsig(jget($_, 'value')) } @{ $view->{items} }),
       'tw-once:1,tw-1:1,tw-1:"two",tw-2:1,tw-2:"two",tw-3:1,tw-3:"two",tw-4:1,tw-4:"two",tw-5:1,tw-5:"two"',
       'oracle: both rows of a document that emits its key twice');
    # Rows 1, 3, 5, ... start a document's pair. Pages of 1 to 4 end between
    # the two rows of one document: the token of the second row, [key, docid],
    # names the first. Pages of 7 end between documents, but the backward
    # query's skip=1 skips only one of the two rows at the token.
    walk_ok('/sem/twice/', 11, $view, 'a document emitting its key twice, all on one page');
    walk_ok('/sem/twice/', $_, $view, "a document emitting its key twice, $_ a page: both rows once, in order")
        for 1, 2, 3, 4, 7;
}

# ---------------------------------------------------------------------------
# 2. Keys of every JSON type
# ---------------------------------------------------------------------------
# [id, JSON text of the key]; 'raw:' keys are emitted with the double's
# emitRaw (exact integers and floats as CouchDB holds them; a real CouchDB's
# couchjs has no emitRaw and emits them as JavaScript numbers).
my @TYPED = (
    [t01 => 'null'], [t02 => 'false'], [t03 => 'true'], [t04 => '0'], [t05 => '-1'],
    [t06 => '0.1'], [t07 => '1e21'], [t08 => 'raw:9007199254740993'], [t09 => 'raw:-9007199254740993'],
    [t10 => '9007199254740991'], [t11 => '1.5e-7'], [t12 => '-0.5'], [t13 => '2'], [t14 => 'raw:2.0'],
    [t15 => '-0.0'], [t16 => '""'], [t17 => '"a"'], [t18 => '"A"'], [t19 => '"\u00e1"'],
    [t20 => '"a\u0301"'], [t21 => '"b"'], [t22 => '"B"'], [t23 => '"\u00df"'], [t24 => '"ss"'],
    [t25 => '"e\u0301"'], [t26 => '"\u00e9"'], [t27 => '"\u65e5\u672c\u8a9e"'], [t28 => '"\ud83d\ude00"'],
    [t29 => '"a b"'], [t30 => '"ab"'], [t31 => '"10"'], [t32 => '"9"'], [t33 => '"\ufb01"'],
    [t34 => '"\u212b"'], [t35 => '"\u00c5"'], [t36 => '"<&>\"\\\\"'], [t37 => '"line\nbreak\ttab"'],
    [t38 => '[]'], [t39 => '[null]'], [t40 => '[1]'], [t41 => '[1,2]'], [t42 => '[1,"a"]'],
    [t43 => '["a",1]'], [t44 => '[[1]]'], [t45 => '[[]]'], [t46 => '[{}]'], [t47 => '{}'],
    [t48 => '{"a":1,"b":2}'], [t49 => '{"b":2,"a":1}'], [t50 => '{"a":{"b":[1,{"c":null}]}}'],
    [t51 => '{"a":[]}'], [t52 => '{"":1}'], [t53 => '"a"'], [t54 => '[1,2]'], [t55 => '{"a":1,"b":2}'],
    [t56 => 'null'], [t57 => '0.1'], [t58 => 'raw:9007199254740993'], [t59 => '{"b":2,"a":1}'],
    [t60 => '"\u00e9"'], [t61 => 'true'], [t62 => '[1,[2,[3,{"x":"\u00e9"}]]]'],
);
my @typed_docs = map {
    my ($id, $key) = @{ $TYPED[$_] };
    $key =~ /^raw:(.*)/ ? qq({"_id":"$id","i":$_,"raw":"$1"}) : qq({"_id":"$id","i":$_,"k":$key})
} 0 .. $#TYPED;
# the same numbers in a view that also emits integers wider than 64 bits
push @typed_docs, '{"_id":"w1","wide":"12345678901234567890123"}', '{"_id":"w2","wide":"18446744073709551615"}',
                  '{"_id":"w3","wide":"-98765432109876543210"}';
# a document holding an integer wider than 64 bits (for include_docs)
push @typed_docs, '{"_id":"t99","i":99,"k":"big doc","big":123456789012345678901234567890,"small":7}';
couch_load('sem_types', docs => \@typed_docs, views => {
    v => { map => q{function (doc) {
        if (doc.wide) return;
        if (doc.raw === undefined) emit(doc.k, doc.i);
        else if (typeof emitRaw === 'function') emitRaw(doc.raw, String(doc.i));
        else emit(JSON.parse(doc.raw), doc.i);
    }} },
    wide => { map => q{function (doc) {
        if (doc.wide) emitRaw(doc.wide, '0');
        else if (typeof doc.k === 'number') emit(doc.k, doc.i);
        else if (doc.raw !== undefined) emitRaw(doc.raw, String(doc.i));
    }} },
});

{
    my $view = double_view('/sem_types/_design/d/_view/v', reduce => 'false');
    is(scalar @{ $view->{rows} }, @TYPED + 1, 'oracle: a row for every typed key');
    my @types = map { jget($_, 'key')->[0] } @{ $view->{items} };
    my %rank = (null => 0, bool => 1, num => 2, str => 3, arr => 4, obj => 5);
    is(join(',', @types), join(',', sort { $rank{$a} <=> $rank{$b} } @types),
       'oracle: null, booleans, numbers, strings, arrays, objects');
    # the raw text the double sent for the exact integer
    SKIP: {
        skip $EMITS_EXACTLY, 1 unless $DOUBLE;
        like($view->{raw}, qr/"key":9007199254740993,/, 'oracle: the double sends 9007199254740993 exactly');
    }
    for my $limit (1, 2, 3) {
        my $pages = walk_ok('/sem/types/', $limit, $view, "keys of every JSON type, $limit a page");
        next unless $limit == 1;
        # with one row a page every row but the first is named by a next token:
        # its key must be the key as the double sent it (a later page's token
        # carries the walk's mark after it)
        my @tokens = map { $_->{next} } @$pages[0 .. $#$pages - 1];
        my @token_keys = map { my ($k) = token_parts($_); jsig($k) } @tokens;
        my @want_keys = map { jsig(jget($_, 'key')) } @{ $view->{items} }[1 .. $#{ $view->{items} }];
        is(first_difference(\@token_keys, \@want_keys), undef,
           "every next token's key is the row's key as CouchDB sent it (exact integers, float values, member order)");
        is(scalar(grep { /^\[\{"b":2,"a":1\},"t(49|59)"(?:,"[^"]+")?\]$/ } @tokens), 2,
           'an object key keeps its member order in the token');
        SKIP: {
            skip $EMITS_EXACTLY, 4 unless $DOUBLE;    # exact big integers and 2.0 come from emitRaw
            is(scalar(grep { /^\[9007199254740993,"t(08|58)"(?:,"[^"]+")?\]$/ } @tokens), 2,
               'the tokens of 9007199254740993 carry exactly that integer');
            is(scalar(grep { /^\[-9007199254740993,"t09"(?:,"[^"]+")?\]$/ } @tokens), 1, '... and of -9007199254740993');
            my @floats = map { my ($k) = token_parts($_); $k->[0] eq 'num' ? num_sig($k->[1]) : () } @tokens;
            ok((grep { $_ eq '1e+21' } @floats) && (grep { $_ eq '0.1' } @floats) == 2
               && (grep { $_ eq '2.0' } @floats) && (grep { $_ eq '1.5e-07' } @floats),
               '1e21, 0.1 (twice), 2.0 and 1.5e-7 keep their value, and 2.0 stays a float')
                or diag "float keys in tokens: @floats";
            my ($item) = grep { jstr(jget($_, 'id')) eq 't08' } map { @{ $_->{items} } } @$pages;
            like($item ? jsig(jget($item, 'key')) : '', qr/^9007199254740993$/, "the item's key is 9007199254740993 too");
        }
    }
    my $desc = double_view('/sem_types/_design/d/_view/v', reduce => 'false', descending => 'true');
    is_deeply([ reverse @{ $desc->{rows} } ], $view->{rows}, 'oracle: descending is the exact reverse here');
    walk_ok('/sem/types-desc/', $_, $desc, "keys of every JSON type, descending, $_ a page") for 1, 2, 3;
}

SKIP: {
    skip $EMITS_EXACTLY, 2 unless $DOUBLE;
    # Integers wider than 64 bits (emitted with the double's emitRaw): the
    # module keeps their digits (docs/pages.md, Numbers), so a row keyed
    # between such an integer and its nearest double is not passed over.
    my $view = double_view('/sem_types/_design/d/_view/wide', reduce => 'false');
    my (undef, $pages) = check_walk('/sem/types-wide/', 2, $view->{rows});
    my @got = map { @{ $_->{rows} } } @$pages;
    my %got = map { $_ => 1 } @got;
    is(join("\n", grep { !$got{$_} } @{ $view->{rows} }), '',
       'every key and value keeps its digits on those pages, the wide integers too');
    walk_ok('/sem/types-wide/', 1, $view, 'every row of a view with keys wider than 64 bits, 1 a page');
}

SKIP: {
    skip $MANGO_WIDE, 6 if $DOUBLE;
    # The same on a real CouchDB, which keys integers wider than 64 bits
    # exactly in a Mango index (a design document of "language": "query"):
    # 2^64 - 1 collates before 2^64, which (as an integer or as a double)
    # collates before 2^64 + 1; equal keys go by document id. JavaScript
    # views emit doubles only.
    my @wide = (
        [w01 => '-18446744073709551617'], [w02 => '-18446744073709551616'], [w03 => '-9223372036854775809'],
        [w04 => '9007199254740992'], [w05 => '9007199254740993'], [w06 => '9007199254740992.0'],
        [w07 => '18446744073709551615'], [w08 => '18446744073709551616'], [w09 => '18446744073709551616.0'],
        [w10 => '18446744073709551616'], [w11 => '18446744073709551617'], [w12 => '1e20'],
        [w13 => '18446744073709551615'], [w14 => '1.8446744073709552e19'], [w15 => '9223372036854775808'],
        [w16 => '123456789012345678901234567890'], [w17 => '"text"'],
    );
    couch_load('sem_wide', docs => [ map { qq({"_id":"$_->[0]","n":$_->[1]}) } @wide ]);
    my ($status, $body) = double_raw(PUT => '/sem_wide/_design/m', JSON::PP->new->canonical->encode({
        language => 'query',
        views => { 'by-n' => { map => { fields => { n => 'asc' }, partial_filter_selector => {} },
                               reduce => '_count', options => { def => { fields => ['n'] } } } },
    }));
    die "the Mango index of sem_wide: $status $body\n" unless $status == 201 || $status == 202;
    my $view = double_view('/sem_wide/_design/m/_view/by-n', reduce => 'false');
    my $desc = double_view('/sem_wide/_design/m/_view/by-n', reduce => 'false', descending => 'true');
    my @ints = $view->{raw} =~ /\{"id":"(w\d+)","key":\[(-?[0-9]+)\]/g;
    is(join(' ', map { $ints[$_] } grep { $_ % 2 } 0 .. $#ints),
       '-18446744073709551617 -18446744073709551616 -9223372036854775809 9007199254740992 9007199254740993 '
       . '9223372036854775808 18446744073709551615 18446744073709551615 18446744073709551616 '
       . '18446744073709551616 18446744073709551617 123456789012345678901234567890',
       'oracle: CouchDB keys integers wider than 64 bits exactly, in order, in a Mango index');
    for my $limit (1, 2) {
        my $pages = walk_ok('/sem/wide-mango/', $limit, $view,
                            "integers wider than 64 bits and their doubles, $limit a page: every row once, next and prev");
        walk_ok('/sem/wide-mango-desc/', $limit, $desc, "the same descending, $limit a page");
        next unless $limit == 1;
        # every integer row but the first is named by a next token, digit for digit
        # (its walk's mark, a later token's last member, left out)
        my %tokens = map { ($_->{next} =~ s/,"$CouchPageWalk::MARK"\]$/]/r) => 1 }
                     grep { defined $_->{next} } @$pages;
        my %int = @ints;
        my @missing = grep { !$tokens{qq([[$int{$_}],"$_"])} } grep { $_ ne $ints[0] } keys %int;
        is(join(' ', sort @missing), '', "the next tokens carry those integers' digits");
    }
}

{
    # include_docs with a document holding an integer wider than 64 bits
    my $view = double_view('/sem_types/_design/d/_view/v', reduce => 'false', include_docs => 'true');
    my $pages = [ walk_next('/sem/docs-wide/', limit => 100) ];
    my @got = grep { !/"big doc"/ } map { @{ $_->{rows} } } @$pages;
    my @want = grep { !/"big doc"/ } @{ $view->{rows} };
    is(first_difference(\@got, \@want), undef, 'the other rows of that page keep their integers');
}

{
    # Long keys: a token holds the whole key while it fits
    # CouchPageMaxTokenLength (default 4096 bytes) and, percent-encoded, the
    # LimitRequestLine (8190) of a link; a longer key makes a bounded token,
    # {"lo", "hi", "h"}: keys CouchDB collates either side of the row's, and
    # its digest, by which the row is found among the rows between them
    # (docs/algorithm.md, "Keys too long for a token").
    my @long = (['k01', 'a'], ['k02', 'b' x 3000], ['k03', 'c' . ("\x{e9}" x 1200)], ['k04', 'd'],
                ['k05', 'e' x 5000], ['k06', 'f' . ("\x{e9}" x 2000)], ['k07', ['g', 'h' x 4500]], ['k08', 'i'],
                ['k09', 'b' x 10240], ['k10', 'c' x 102400],
                (map { ["r$_", 'j' x 10240] } 1 .. 4),              # a run of rows of one 10 KB key
                (map { ["s$_", ('k' x 10000) . $_] } 1 .. 3),       # 10 KB keys that differ at their end
                (map { ["t$_", ['l', 'm' x 9000, $_]] } 1 .. 3),    # long array keys
                ['u1', ['l', 'm' x 102400]],                         # ... of 100 KB
                ['v1', { n => 'o' x 8000 }], ['v2', 'p' . ("\x{e9}" x 6000)],
                ['w1', 'z']);
    double_load('sem_long', [ map { { _id => $_->[0], k => $_->[1] } } @long ],
                { v => { map => q{function (doc) { emit(doc.k, null); }} } });
    my $view = double_view('/sem_long/_design/d/_view/v', reduce => 'false');
    my $desc = double_view('/sem_long/_design/d/_view/v', reduce => 'false', descending => 'true');
    is(scalar @{ $view->{rows} }, scalar @long, 'oracle: a row for every long key');
    my @pages;
    for my $limit (1, 2, 3) {
        push @pages, @{ walk_ok('/sem/long/', $limit, $view, "keys up to 100 KB: every row, by next and by prev, $limit a page") };
        push @pages, @{ walk_ok('/sem/long-desc/', $limit, $desc, "keys up to 100 KB, descending: every row, both ways, $limit a page") };
    }
    for my $limit (1, 2) {
        # sealed tokens are opaque: the rows of the walks by next and by prev
        my @forward = walk_next('/sem/long-sealed/', limit => $limit, max_pages => 40);
        my @backward = walk_prev('/sem/long-sealed/', $forward[-1]{token}, limit => $limit, max_pages => 40);
        my $rows = sub { join "\n", map { $_->{status} == 200 ? @{ $_->{rows} } : "status $_->{status}" } @_ };
        is($rows->(@forward) . "\n--\n" . $rows->(reverse @backward), join("\n", @{ $view->{rows} }) . "\n--\n" . join("\n", @{ $view->{rows} }),
           "keys up to 100 KB, sealed tokens, 2 pages linked, $limit a page: every row by next and by prev");
        push @pages, @forward, @backward;
    }
    my @tokens = grep { defined } map { ($_->{next}, $_->{prev}) } @pages;
    my @bounded = grep { /^\{/ } @tokens;
    ok(@bounded >= 40, 'keys too long for a token make bounded tokens (' . scalar(@bounded) . ')');
    my ($longest) = sort { $b <=> $a } map { length } @tokens;
    my ($escaped) = sort { $b <=> $a } map { length uri_escape_utf8($_) } @tokens;
    ok($longest <= 4096 && $escaped <= 8190 - 64, "every token fits CouchPageMaxTokenLength and LimitRequestLine ($longest bytes, $escaped escaped)");

    # More rows between a bounded token's keys than its query reads: a 500
    # that says so (docs/algorithm.md), never a wrong page.
    double_load('sem_long_run', [ map { { _id => sprintf('q%02d', $_), k => 'q' x 5000 } } 1 .. 10 ],
                { v => { map => q{function (doc) { emit(doc.k, null); }} } });
    my $mark = error_log_mark();
    my @tight = walk_next('/sem/long-tight/', limit => 1, max_pages => 12);
    is(join(' ', map { $_->{status} } @tight), '200 200 200 200 200 200 200 500',
       'rows of one long key: the first 7 found by their bounded tokens (a query of 7 rows), the 8th a 500');
    like($tight[-1]{reason} // '', qr/too many rows share the start of its key/, '... which says why');
    like(join('', error_log_since($mark)), qr/CP0200: the page of a bounded token of \/sem\/long-tight\/ cannot be found: more than 7 rows share the start of the start token's key/,
         '... and the error log says so, with what to raise');

    # The row a bounded token names deleted meanwhile: the page starts where
    # the rows that share its bounds begin, so none is lost (some come again).
    for my $case (['sem_long_del', '/sem/long-del/', 'a j1 j2', 'j1 j2 j4 z'],
                  ['sem_long_del_desc', '/sem/long-del-desc/', 'z j4', 'j4 j2 j1 a']) {
        my ($db, $path, $before, $after) = @$case;
        double_load($db, [ { _id => 'a', k => 'a' }, (map { { _id => "j$_", k => 'j' x 10240 } } 1 .. 4), { _id => 'z', k => 'z' } ],
                    { v => { map => q{function (doc) { emit(doc.k, null); }} } });
        my @walk = walk_next($path, limit => 1, max_pages => scalar(split ' ', $before));
        my $token = $walk[-1]{next} // '';
        my ($status, $doc) = double_request(GET => "/$db/j3");
        my ($deleted) = double_request(DELETE => "/$db/j3?rev=" . ($doc->{_rev} // ''));
        my @rest = walk_next($path, limit => 1, start => $token);
        my $ids = sub { join ' ', map { my $i = $_->{items}[0]; $i ? jstr(jget($i, 'id')) : '-' } @_ };
        is($ids->(@walk) . ' / ' . ($token =~ /^\{/ ? 'bounded' : 'plain') . " / $deleted / " . $ids->(@rest),
           "$before / bounded / 200 / $after",
           "$path: the row a bounded next token names deleted: its page starts at the first row of its bounds, none lost");
    }
}

# ---------------------------------------------------------------------------
# 3. Key ranges per location (and 4. descending within one)
# ---------------------------------------------------------------------------
my @POSTS = ('p1', 'p2', 'p3', 'a', 'a",{}]', "\x{fc}n\x{ef}", 'p2 ', 'a"],["p1');
my @post_docs;
for my $pi (0 .. $#POSTS) {
    my $post = $POSTS[$pi];
    my $n = $post eq 'p2' ? 11 : 4;
    push @post_docs, map { { _id => sprintf('c%d-%02d', $pi, $_), post => $post, ts => (($_ * 7) % 13) + 1, text => "comment $_ of $post" } } 1 .. $n;
    # rows of the post below the range's [post, 0]: [post], [post, null], [post, -1]
    push @post_docs, { _id => "c$pi-short", post => $post, short => JSON::PP::true },
                     { _id => "c$pi-null", post => $post, ts => undef },
                     { _id => "c$pi-neg", post => $post, ts => -1 },
                     { _id => "c$pi-word", post => $post, ts => 'zzz' };
}
# equal timestamps within a post: a boundary between equal keys
push @post_docs, map { { _id => "c1-same$_", post => 'p2', ts => 5 } } 1 .. 3;
double_load('sem_posts', \@post_docs, {
    comments => { map => q{function (doc) { emit(doc.short ? [doc.post] : [doc.post, doc.ts], doc.text || null); }} },
});

sub post_view {
    my ($post, %opt) = @_;
    my ($low, $high) = (jtext([$post, 0]), jtext([$post, {}]));
    return double_view('/sem_posts/_design/d/_view/comments', reduce => 'false',
                       $opt{descending} ? (descending => 'true', startkey => $high, endkey => $low)
                                        : (startkey => $low, endkey => $high));
}

sub posts_of {
    my ($rows) = @_;
    my %posts;
    $posts{ $_ =~ /key=\[("(?:[^"\\]|\\.)*")/ ? $1 : '?' }++ for @$rows;
    return join ',', sort keys %posts;
}

{
    my $view = post_view('p2');
    is(scalar @{ $view->{rows} }, 15, "oracle: p2 has 15 comments in its range (not [p2], [p2, null], [p2, -1])");
    is(posts_of($view->{rows}), '"p2"', 'oracle: all of post p2');
    walk_ok('/posts/p2/comments/', $_, $view, "the comments of post p2, $_ a page, both ways") for 1, 2, 3, 4, 15, 16;
    my $all = module_page('/posts/p2/comments/', limit => 100);
    is(posts_of($all->{rows}), '"p2"', 'one page of p2: only p2');

    my $desc = post_view('p2', descending => 1);
    is_deeply([ reverse @{ $desc->{rows} } ], $view->{rows}, 'oracle: descending p2 is the reverse');
    walk_ok('/posts-desc/p2/comments/', $_, $desc, "the comments of post p2, descending, $_ a page") for 1, 3, 4;

    my $hostile = post_view('a",{}]');
    is(posts_of($hostile->{rows}), '"a\",{}]"', 'oracle: the post a",{}] has comments of its own');
    walk_ok('/posts/a%22%2C%7B%7D%5D/comments/', 3, $hostile,
            'a post id with quotes and brackets pages its own comments, and nothing else');
    my $walk = walk_ok('/posts/a%22%5D%2C%5B%22p1/comments/', 2, post_view('a"],["p1'),
                       'a post id that would close the array and open another stays one string');
    is(posts_of([ map { @{ $_->{rows} } } @$walk ]), '"a\"],[\"p1"', '... only its own comments');
    my $unicode = post_view("\x{fc}n\x{ef}");
    is(scalar @{ $unicode->{rows} }, 5, 'oracle: the post ünï');
    walk_ok('/posts/%C3%BCn%C3%AF/comments/', 2, $unicode, 'a post id in UTF-8 in the URL');
    my ($s, $empty) = module_get('/posts/nosuchpost/comments/');
    is($s . ' ' . jsig(jget(jparse($empty, bytes => 1), 'items')), '200 []', 'a post without comments: an empty page');
    ($s, my $bad) = module_get('/posts/%FF/comments/');
    is($s, 400, 'a post id that is not UTF-8 gets 400');

    # forged tokens outside the range: CouchDB refuses the reversed range
    my @FORGED = (
        [token(['p1', 1], 'c0-01'), 'a key of another post (below)'],
        [token(['p3', 1], 'c2-01'), 'a key of another post (above)'],
        [token(['p2', -1], 'c1-neg'), 'below the range: [p2, -1]'],
        [token(['p2', undef], 'c1-null'), 'below the range: [p2, null]'],
        [token(['p2'], 'c1-short'), 'below the range: [p2]'],
        [token(['p2 ', 1], 'c6-01'), 'a key of post "p2 " (above)'],
        [token('p2', 'x'), 'a key of another type'],
    );
    my $forged_mark = error_log_mark();
    for my $case (@FORGED) {
        my ($tok, $what) = @$case;
        for my $loc ('/posts/p2/comments/', '/posts-desc/p2/comments/') {
            my $page = module_page($loc, start => $tok);
            is($page->{status} . ' ' . ($page->{error} // ''), '400 bad_request', "$loc: a forged token, $what: 400")
                or diag $page->{raw};
        }
    }
    # CouchDB refuses a later query of the page's multi-query request and
    # cuts its answer off: neither mod_proxy_http nor the module may log
    # that at error level (a client could fill the log at will), nor call a
    # refused query a read that failed in flight
    my @forged_lines = error_log_since($forged_mark, wait => 1);
    is(join("\n", grep { /:(?:error|crit|alert|emerg)\]|failed in flight/ } @forged_lines), '',
       'forged tokens: no line at error level, none saying "failed in flight"');
    is(scalar(grep { /CP0122: bad request: the start token is outside this location's key range \(CouchDB answered 400 / } @forged_lines),
       2 * @FORGED, "forged tokens: each logged at info, with CouchDB's words");
    my $page = module_page('/posts/p2/comments/', start => token(['p2', 1], 'c1-same1'));
    is($page->{status}, 200, 'a token inside the range but between rows is served');

    # ranges open on one side
    my $to = double_view('/sem_posts/_design/d/_view/comments', reduce => 'false', endkey => jtext(['p2', {}]));
    ok(scalar(@{ $to->{rows} }) > 30, 'oracle: the comments up to p2');
    walk_ok('/sem/posts-to-p2/', $_, $to, "a range open below (LOW yields ''), $_ a page") for 4, 7;
    my $from = double_view('/sem_posts/_design/d/_view/comments', reduce => 'false', startkey => jtext(['p2', 0]));
    walk_ok('/sem/posts-from-p2/', $_, $from, "a range open above (HIGH yields ''), $_ a page") for 4, 7;
    my $from_desc = double_view('/sem_posts/_design/d/_view/comments', reduce => 'false', descending => 'true',
                                endkey => jtext(['p2', 0]));
    is_deeply([ reverse @{ $from_desc->{rows} } ], $from->{rows}, 'oracle: its reverse');
    walk_ok('/sem/posts-from-p2-desc/', $_, $from_desc, "a range open above, descending, $_ a page") for 4, 7;
    # docs/directives.md's '' for an open side, as httpd -t reads it (the walks above
    # use an expression that yields '' instead)
    for my $range (q{'' '["p2", {}]'}, q{'["p2", 0]' ''}, q{'%{env:SEM_OPEN}' '["p2", {}]'}) {
        my ($ok, $out) = httpd_t("CouchPageView http://127.0.0.1:5984/db/_design/d/_view/v\nCouchPageRange $range");
        ok($ok, "httpd -t accepts CouchPageRange $range") or diag $out;
    }
    $page = module_page('/sem/posts-to-p2/', start => token(['p3', 1], 'c2-01'));
    is($page->{status}, 400, 'open below: a token above the range gets 400');
    $page = module_page('/sem/posts-from-p2/', start => token(['p1', 1], 'c0-01'));
    is($page->{status}, 400, 'open above: a token below the range gets 400');
    $page = module_page('/sem/posts-from-p2-desc/', start => token(['p1', 1], 'c0-01'));
    is($page->{status}, 400, 'open above, descending: a token below the range gets 400');
}

# ---------------------------------------------------------------------------
# 5. Grouped reduce rows
# ---------------------------------------------------------------------------
my @dates;
{
    my @days = ([2023, 11, 28], [2023, 11, 30], [2023, 12, 1], [2023, 12, 24], [2023, 12, 31],
                [2024, 1, 1], [2024, 1, 2], [2024, 1, 15], [2024, 2, 29], [2024, 3, 1],
                [2024, 12, 31], [2025, 1, 1], [2025, 6, 15], [2022, 5, 5], [2024, 2, 1]);
    my $n = 0;
    for my $i (0 .. $#days) {
        push @dates, map { { _id => sprintf('ev%03d', $n++), date => $days[$i], n => ($n * 37) % 11 } } 0 .. ($i % 4);
    }
    # keys that are not [y, m, d]: shorter arrays and non-arrays group on their own
    push @dates, { _id => 'ev-year', date => [2024], n => 3 }, { _id => 'ev-month', date => [2024, 1], n => 4 },
                 { _id => 'ev-str', date => 'unknown', n => 5 }, { _id => 'ev-null', date => undef, n => 6 };
}
double_load('sem_dates', \@dates, {
    count => { map => q{function (doc) { emit(doc.date, doc.n); }}, reduce => '_count' },
    sum => { map => q{function (doc) { emit(doc.date, doc.n); }}, reduce => '_sum' },
});

{
    my %views;
    for my $case (['count-1', 'count', group_level => 1], ['count-2', 'count', group_level => 2],
                  ['count-exact', 'count', group => 'true'], ['sum-2', 'sum', group_level => 2],
                  ['sum-exact', 'sum', group => 'true']) {
        my ($loc, $view, @group) = @$case;
        my $want = double_view("/sem_dates/_design/d/_view/$view", reduce => 'true', @group);
        $views{$loc} = $want;
        my $rows = @{ $want->{rows} };
        for my $limit (1, 2, 3, 5) {
            my $pages = walk_ok("/sem/reduce/$loc/", $limit, $want, "reduce $loc ($rows groups), $limit a page",
                                key_only => 1);
            next unless $limit == 2;
            # grouped rows have no offsets: CouchPageCount (its default,
            # capped 1000) counts them on the first and the Last page, and
            # the tokens carry the count
            my @members = map { my $t = $_->{tree};
                                join ',', map { jnum(jget($t, $_)) // '-' } qw(total_rows offset) } @$pages;
            is("@members", join(' ', map { "$rows," . 2 * $_ } 0 .. $#$pages),
               "reduce $loc: every page counted: total_rows and offset");
            my @ids = grep { defined jget($_, 'id') } map { @{ $_->{items} } } @$pages;
            is(scalar @ids, 0, "reduce $loc: items have no id");
            # the Last page holds what the walk from the first leaves it,
            # numbered, and its prev the groups before
            my @want = @{ $want->{rows} };
            my $tail = $rows % 2 || 2;
            my $last = module_page("/sem/reduce/$loc/", limit => 2, start => 'last');
            is(join(' ', $last->{status}, @{ $last->{rows} || [] }), join(' ', 200, @want[-$tail .. -1]),
               "reduce $loc: start=last gives the last $tail groups");
            is(join(',', map { jstr(jget($last->{tree}, $_)) // jnum(jget($last->{tree}, $_)) // '-' } qw(numbering offset last_page next)),
               join(',', 'absolute', $rows - $tail, int(($rows + 1) / 2), '-'),
               "reduce $loc: the Last page is numbered, with no next");
            my $before = module_page("/sem/reduce/$loc/", limit => 2, start => $last->{prev});
            is(join(' ', @{ $before->{rows} || [] }), join(' ', @want[-$tail - 2 .. -$tail - 1]),
               "reduce $loc: its prev gives the 2 groups before");
        }
    }
    is(scalar @{ $views{'count-1'}{rows} }, 6, 'oracle: group_level 1: null, "unknown", 2022..2025 ([2024] merged)');
    like(join(' ', @{ $views{'count-exact'}{rows} }), qr/key=\[2024\] value=1 key=\[2024,1\] value=1 key=\[2024,1,1\]/,
         'oracle: exact groups keep [2024] and [2024, 1] apart');

    my $map = double_view('/sem_dates/_design/d/_view/count', reduce => 'false');
    clear_log();
    walk_ok('/sem/reduce/off/', $_, $map, "CouchPageReduce Off on a reduce view: its map rows, $_ a page") for 3, 7;
    SKIP: {
        skip $REQUEST_LOG, 1 unless $DOUBLE;
        my @queries = grep { $_->{path} =~ m{^/sem_dates/} } double_queries(double_log());
        my @reduce = map { my ($p) = grep { $_->[0] eq 'reduce' } @{ $_->{query} }; $p ? $p->[1] : '(none)' } @queries;
        is(join(',', sort { $a cmp $b } keys %{ { map { $_ => 1 } @reduce } }), 'false',
           'CouchPageReduce Off: every query sent reduce=false') or diag "@reduce";
    }

    # descending grouped rows
    my $exact_desc = double_view('/sem_dates/_design/d/_view/count', reduce => 'true', group => 'true',
                                 descending => 'true');
    walk_ok('/sem/reduce/count-exact-desc/', $_, $exact_desc, "reduce exact, descending, $_ a page", key_only => 1)
        for 1, 2, 3;
    my $level_desc = double_view('/sem_dates/_design/d/_view/count', reduce => 'true', group_level => 1,
                                 descending => 'true');
    walk_ok('/sem/reduce/count-1-desc/', $_, $level_desc, "reduce group_level 1, descending, $_ a page",
            key_only => 1) for 1, 2, 3;
}

{
    # grouped rows whose keys collate equal (ICU) but are spelt differently
    my @names = (
        '{"_id":"a1","name":"\u00e9"}', '{"_id":"a2","name":"e\u0301"}', '{"_id":"b1","name":"b"}',
        '{"_id":"c1","name":"c"}', '{"_id":"d1","name":"\u00e5"}', '{"_id":"d2","name":"a\u030a"}',
        '{"_id":"e1","name":"f"}', '{"_id":"e2","name":"a"}',
    );
    my $count = { count => { map => q{function (doc) { emit(doc.name, 1); }}, reduce => '_count' } };
    my $spellings = sub { join ' ', map { jtext(jstr(jget($_, 'key'))) } @{ $_[0]{items} } };

    # In one shard (q=1) CouchDB's btree names a group by the first row it
    # meets (couch_btree:reduce_stream_kv_node2), so the spelling depends on
    # the direction; the double does the same.
    couch_load('sem_names', q => 1, docs => \@names, views => $count);
    my $want = double_view('/sem_names/_design/d/_view/count', reduce => 'true', group => 'true');
    my $desc = double_view('/sem_names/_design/d/_view/count', reduce => 'true', group => 'true',
                           descending => 'true');
    is(scalar @{ $want->{rows} }, 6, 'oracle: six groups of eight names');
    is($spellings->($want) . ' / ' . $spellings->({ items => [ reverse @{ $desc->{items} } ] }),
       '"a" "\u00e5" "b" "c" "\u00e9" "f" / "a" "a\u030a" "b" "c" "e\u0301" "f"',
       'oracle: in one shard a group is named by its first row in the direction of the query');
    # the own group probe, not the spelling, says whether the backward
    # answer's first group is the token's (docs/algorithm.md)
    walk_ok('/sem/reduce/names/', $_, $want, "reduce exact, keys that collate equal, $_ a page", key_only => 1)
        for 1, 2;

    # Across two shards (q=2; here each pair of spellings is split between
    # them) CouchDB's coordinator merges the shards' groups under one of
    # their keys (fabric_view:get_next_row), the same in both directions, and
    # the walk is exact. The double names the group by its first row in the
    # direction of the query whatever the shards.
    couch_load('sem_names_shards', q => 2, docs => \@names, views => $count);
    SKIP: {
        skip 'the double does not merge the groups of two shards as CouchDB does '
           . '(t/double/README.md, known difference 8)', 3 if $DOUBLE;
        my $merged = double_view('/sem_names_shards/_design/d/_view/count', reduce => 'true', group => 'true');
        my $merged_desc = double_view('/sem_names_shards/_design/d/_view/count', reduce => 'true', group => 'true',
                                      descending => 'true');
        is($spellings->($merged), $spellings->({ items => [ reverse @{ $merged_desc->{items} } ] }),
           'oracle: groups merged from two shards have one spelling in both directions');
        walk_ok('/sem/reduce/names-shards/', $_, $merged,
                "reduce exact, keys that collate equal in two shards, $_ a page", key_only => 1) for 1, 2;
    }
}

{
    # groups at level 1 whose keys differ only in the member order of an
    # object: CouchDB collates them apart ({"a":2,"b":1} < {"b":1,"a":2})
    couch_load('sem_objs', docs => [
        '{"_id":"o1","k":[{"a":2,"b":1},1]}', '{"_id":"o2","k":[{"b":1,"a":2},1]}', '{"_id":"o3","k":[{"a":2,"b":1},2]}',
        '{"_id":"o4","k":[{"b":1,"a":2},2]}', '{"_id":"o5","k":[{"a":1},1]}', '{"_id":"o6","k":[{"c":0},1]}',
    ], views => { count => { map => q{function (doc) { emit(doc.k, 1); }}, reduce => '_count' } });
    my $want = double_view('/sem_objs/_design/d/_view/count', reduce => 'true', group_level => 1);
    is(join(' ', map { jsig(jget($_, 'key')) } @{ $want->{items} }), '[{"a":1}] [{"a":2,"b":1}] [{"b":1,"a":2}] [{"c":0}]',
       'oracle: object members in order make different groups');
    walk_ok('/sem/reduce/objects/', 1, $want, 'reduce group_level 1, object keys in two member orders, 1 a page',
            key_only => 1);
}

# ---------------------------------------------------------------------------
# 6. include_docs
# ---------------------------------------------------------------------------
{
    my @words = qw(pear apple Fig apple date Banana cherry apple Elder grape);
    my @docs = map { +{ _id => sprintf('doc-%02d', $_), name => $words[$_ % @words], n => $_,
                        nested => { list => [ $_, "x$_", { deep => $_ % 2 ? JSON::PP::true : undef } ] },
                        ($_ % 5 == 4 ? (link => sprintf('doc-%02d', $_ - 3)) : ()) } } 0 .. 22;
    double_load('sem_docs', \@docs, {
        v => { map => q{function (doc) { emit(doc.name, doc.link ? {_id: doc.link} : doc.n); }} },
    });
    my $want = double_view('/sem_docs/_design/d/_view/v', reduce => 'false', include_docs => 'true');
    my @linked = grep { /value=\{"_id"/ } @{ $want->{rows} };
    ok(@linked == 4 && !grep({ !/doc=\{"_id"/ } @{ $want->{rows} }),
       'oracle: every row has its doc, four of them a linked one');
    walk_ok('/sem/docs/', $_, $want, "include_docs: every item's doc, $_ a page") for 1, 3, 5;
    walk_ok('/sem/docs-links/', $_, $want, "include_docs with CouchPageLinks 3: every item's doc, $_ a page") for 2, 3;

    # which queries fetched documents
    SKIP: {
        skip $REQUEST_LOG, 1 unless $DOUBLE;
        my ($token, $pages, @problems) = (undef, 0);
        for (1 .. 20) {
            double_log(clear => 1);
            my $page = module_page('/sem/docs-links/', limit => 3, defined $token ? (start => $token) : ());
            my @queries = grep { $_->{path} =~ m{^/sem_docs/} } double_queries(double_log());
            my @with_docs = grep { grep { $_->[0] eq 'include_docs' } @{ $_->{query} } } @queries;
            my %q = map { $_->[0] => $_->[1] } map { @{ $_->{query} } } @with_docs;
            my $page_start = defined $token ? (token_parts($token))[1] : undef;
            push @problems, "page $_: " . scalar(@with_docs) . " queries with include_docs" if @with_docs != 1;
            push @problems, "page $_: include_docs=$q{include_docs}, limit=$q{limit}, descending=" . ($q{descending} // '-')
                if @with_docs == 1 and ($q{include_docs} ne 'true' or $q{limit} ne '4' or defined $q{descending});
            push @problems, "page $_: the docs query starts at " . ($q{startkey_docid} // 'the start')
                if @with_docs == 1 and ($q{startkey_docid} // '') ne ($page_start // '');
            $pages++;
            $token = $page->{next} // last;
        }
        ok(!@problems && $pages == 8, 'CouchPageLinks 3: only the page\'s own query has include_docs=true (limit 4); link rows are keys-only')
            or diag join "\n", "$pages pages", @problems;
    }
}

# ---------------------------------------------------------------------------
# 7. _all_docs and partitioned databases
# ---------------------------------------------------------------------------
my @IDS = ('a', 'A', 'aa', 'a b', 'ab', "\x{e9}", "e\x{301}", 'e', 'E', 'z', 'Z', '10', '9', "\x{65e5}\x{672c}",
           "\x{1F600}", '~', 'a+b', 'a&b=c', 'a%2Fb', 'a/b', 'a?b', 'a#b', '-', '0', "\x{ff}", "\x{100}",
           'b', 'y', 'yz', "\x{7f}x", 'a"b', 'a\\b');
double_load('sem_ids', [ map { { _id => $_, n => length $_ } } @IDS ]);

{
    my $want = double_view('/sem_ids/_all_docs');
    is(join(' ', map { jstr(jget($_, 'id')) } @{ $want->{items} }), join(' ', sort @IDS),
       'oracle: _all_docs is in code point order of the ids');
    ok(!grep({ jsig(jget($_, 'key')) ne jsig(jget($_, 'id')) } @{ $want->{items} }), 'oracle: keys are the ids');
    walk_ok('/sem/ids/', $_, $want, "_all_docs, $_ a page") for 1, 2, 5, 32, 33;
    my $pages = [ walk_next('/sem/ids/', limit => 1) ];
    is(scalar(grep { my ($k, $id) = token_parts($_->{next}); $k && jstr($k) eq $id } @$pages[0 .. $#$pages - 1]),
       @IDS - 1, '_all_docs tokens are [id, id]');

    # a key range over _all_docs
    my $range = double_view('/sem_ids/_all_docs', startkey => '"b"', endkey => '"y"');
    walk_ok('/sem/ids-range/', $_, $range, "_all_docs in a key range, $_ a page") for 1, 3;
    for my $case ([token('a', 'a'), 'below'], [token('~', '~'), 'above'], [token('A', 'A'), 'below (A)']) {
        my ($tok, $what) = @$case;
        my $page = module_page('/sem/ids-range/', start => $tok);
        my @outside = grep { my $id = jstr(jget($_, 'id')); $id lt 'b' or $id gt 'y' } @{ $page->{items} || [] };
        is(join(' ', map { jstr(jget($_, 'id')) } @outside), '', "_all_docs range, a token $what it: no row outside the range");
        my $one = module_page('/sem/ids-range/', start => $tok, limit => 1);
        my @named = grep { $_ lt 'b' or $_ gt 'y' } map { (token_parts($_))[1] // () } grep { defined } @$one{qw(next prev)};
        is("@named", '', "_all_docs range, a token $what it, 1 a page: its tokens name no id outside the range");
        is($page->{status}, 400, "_all_docs range, a token $what it: 400, as for views");
    }
}

{
    my @PARTS = (['alpha', 12], ['beta', 15], ['gamma', 9]);
    my @docs;
    for my $part (@PARTS) {
        my ($name, $n) = @$part;
        push @docs, map { { _id => sprintf('%s:%03d', $name, ($_ * 11) % 97), x => ($_ * 5) % 4, n => $_ } } 1 .. $n;
    }
    couch_load('sem_part', partitioned => 1, q => 1, docs => \@docs,
            views => { by_x => { map => q{function (doc) { emit(doc.x, doc.n); }} } });
    for my $p ('beta', 'gamma') {
        my $want = double_view("/sem_part/_partition/$p/_design/d/_view/by_x", reduce => 'false');
        is(scalar(grep { /^id="\Q$p\E:/ } @{ $want->{rows} }), scalar @{ $want->{rows} }, "oracle: partition $p alone");
        clear_log();
        walk_ok("/parts/$p/view/", $_, $want, "partition $p of a partitioned view, $_ a page") for 2, 4;
        SKIP: {
            skip $REQUEST_LOG, 1 unless $DOUBLE;
            my @paths = map { $_->{path} } grep { $_->{path} =~ m{^/sem_part/} } double_queries(double_log());
            is(join(',', sort keys %{ { map { $_ => 1 } @paths } }), "/sem_part/_partition/$p/_design/d/_view/by_x",
               "partition $p: every query went to /sem_part/_partition/$p/...");
        }
        my $all = double_view("/sem_part/_partition/$p/_all_docs");
        clear_log();
        walk_ok("/parts/$p/all/", $_, $all, "/_partition/$p/_all_docs, $_ a page") for 1, 4;
        SKIP: {
            skip $REQUEST_LOG, 1 unless $DOUBLE;
            my @paths = map { $_->{path} } grep { $_->{path} =~ m{^/sem_part/} } double_queries(double_log());
            is(join(',', sort keys %{ { map { $_ => 1 } @paths } }), "/sem_part/_partition/$p/_all_docs",
               "partition $p: _all_docs queries went to /sem_part/_partition/$p/_all_docs");
        }
    }
    clear_log();
    for my $bad ('_bad', 'a:b', '_design') {
        for my $kind ('view', 'all') {
            my $page = module_page("/parts/$bad/$kind/");
            is($page->{status} . ' ' . ($page->{error} // ''), '400 bad_request', "partition name '$bad' ($kind): 400");
        }
    }
    SKIP: {
        skip $REQUEST_LOG, 1 unless $DOUBLE;
        is(scalar(grep { ($_->{path} // '') =~ m{^/sem_part/} } double_log()), 0, '... without a query to CouchDB');
    }

    # page numbers: a partition query's offset counts the rows of the
    # partitions before it on its shard, not the partition's own
    my $want = double_view('/sem_part/_partition/gamma/_design/d/_view/by_x', reduce => 'false');
    ok($want->{offset} > 0, "oracle: partition gamma's first offset is $want->{offset}, the rows of alpha and beta");
    my @pages = walk_next('/parts/gamma/linked/', limit => 3);
    my @wrong;
    for my $i (0 .. $#pages) {
        my $t = $pages[$i]{tree};
        my $numbering = jstr(jget($t, 'numbering')) // '';
        my ($current) = grep { jget($_, 'current')->[1] } @{ (jget($t, 'pages') || ['arr', []])->[1] };
        my $number = jnum(jget($current, 'number'));
        my $offset = jnum(jget($t, 'offset'));
        push @wrong, "page " . ($i + 1) . " says it is page $number" if $numbering eq 'absolute' and $number != $i + 1;
        push @wrong, "page " . ($i + 1) . " has offset $offset" if defined $offset and $offset != 3 * $i;
    }
    is(join('; ', @wrong), '', 'partition gamma with page links: no wrong page number or offset');
}

# ---------------------------------------------------------------------------
# 8. Numbered page links from CouchDB's offsets
# ---------------------------------------------------------------------------
{
    my @docs = map { { _id => sprintf('l%02d', (13 * $_) % 47), k => int($_ / 3) } } 0 .. 46;
    double_load('sem_links', \@docs, { v => { map => q{function (doc) { emit(doc.k, null); }} } });
    for my $case (['/sem/links/', []], ['/sem/links-desc/', [descending => 'true']]) {
        my ($loc, $opts) = @$case;
        my $want = double_view('/sem_links/_design/d/_view/v', reduce => 'false', @$opts);
        my $pages = walk_ok($loc, 5, $want, "$loc: 47 rows with duplicate keys, 5 a page");
        my (@problems, @link_problems);
        for my $i (0 .. $#$pages) {
            my $t = $pages->[$i]{tree};
            my $n = $i + 1;
            push @problems, "page $n: numbering " . (jstr(jget($t, 'numbering')) // 'none')
                if (jstr(jget($t, 'numbering')) // '') ne 'absolute';
            push @problems, "page $n: offset " . (jnum(jget($t, 'offset')) // 'none')
                if (jnum(jget($t, 'offset')) // -1) != 5 * $i;
            push @problems, "page $n: total_rows " . (jnum(jget($t, 'total_rows')) // 'none')
                if (jnum(jget($t, 'total_rows')) // -1) != 47;
            my @links = @{ jget($t, 'pages')->[1] };
            my @numbers = map { jnum(jget($_, 'number')) . (jget($_, 'current')->[1] ? '*' : '') } @links;
            my @expect = map { $_ . ($_ == $n ? '*' : '') } grep { $_ >= 1 && $_ <= 10 } $n - 2 .. $n + 2;
            push @problems, "page $n: pages @numbers, want @expect" if "@numbers" ne "@expect";
            for my $link (@links) {
                next if jget($link, 'current')->[1];
                my $number = jnum(jget($link, 'number'));
                my $target = $pages->[$number - 1] or next;
                my $via = module_page(jstr(jget($link, 'url')));
                push @link_problems, "page $n: the link to page $number opens other rows"
                    if join("\n", @{ $via->{rows} || [] }) ne join("\n", @{ $target->{rows} });
                my $offset = jnum(jget($via->{tree}, 'offset')) // -1;
                push @link_problems, "page $n: the link to page $number has offset $offset"
                    if $offset != 5 * ($number - 1);
                my $start = jstr(jget($link, 'start'));
                push @link_problems, "page $n: the link to page $number has start " . ($start // 'null')
                    . ", the walk's is " . ($target->{token} // 'null')
                    if ($start // '') ne ($target->{token} // '') and $number > 1;
            }
        }
        is(scalar @$pages, 10, "$loc: ten pages");
        ok(!@problems, "$loc: absolute numbers 1..10, offset and total_rows right on every page")
            or diag join "\n", @problems[0 .. ($#problems < 5 ? $#problems : 5)];
        ok(!@link_problems, "$loc: every numbered link opens that page")
            or diag join "\n", @link_problems[0 .. ($#link_problems < 5 ? $#link_problems : 5)];
        # back from the last page: the same numbers and offsets
        my @back = walk_prev($loc, $pages->[-1]{token}, limit => 5);
        my @offsets = map { jnum(jget($_->{tree}, 'offset')) // 'none' } @back;
        is("@offsets", '45 40 35 30 25 20 15 10 5 0', "$loc: walking back, CouchDB's offsets on every page");
    }
}

# ---------------------------------------------------------------------------
# 9. The exact position inside a key range and a partition
# ---------------------------------------------------------------------------
{
    double_load('sem_pos', [ map { { _id => sprintf('p%02d', $_), n => $_ } } 0 .. 59 ],
                { v => { map => q{function (doc) { emit(doc.n, null); }} } });
    for my $case (['/sem/pos-range/', [startkey => '10', endkey => '29'], '10 .. 29'],
                  ['/sem/pos-range-desc/', [descending => 'true', startkey => '29', endkey => '10'], '29 .. 10']) {
        my ($loc, $opts, $keys) = @$case;
        my $want = double_view('/sem_pos/_design/d/_view/v', reduce => 'false', @$opts);
        is(scalar @{ $want->{rows} }, 20, "oracle: the range holds 20 of the view's 60 rows");
        for my $size (3, 4, 7) {
            my $pages = walk_ok($loc, $size, $want, "$loc: keys $keys, $size a page");
            my @problems = check_position($loc, $size, $pages, 20, exact => 1);
            ok(!@problems, "$loc, $size a page: offset, first_row, last_row, total_rows 20 and the last page exact")
                or diag join "\n", @problems;
        }
        # page 2, 4 a page: "5–8 of 20" in HTML, the same numbers in JSON
        my $first = module_page($loc);
        my $second = module_page($loc, start => $first->{next});
        is(join(' ', map { jnum(jget($second->{tree}, $_)) // 'none' } qw(first_row last_row total_rows offset last_page)),
           '5 8 20 4 5', "$loc page 2: first_row 5, last_row 8, total_rows 20, offset 4, last_page 5");
        my (undef, $content, $res) = module_get(with_args($loc, start => $first->{next}, format => 'html'));
        my $html = Encode::decode('UTF-8', $content // '');
        like($html, qr{<p class="couchpage-position"><span class="couchpage-first-row">5</span>\x{2013}<span class="couchpage-last-row">8</span> of 20</p>}, "$loc page 2 in HTML: 5\x{2013}8 of 20");
        like($res->{headers}{link} // '', qr{rel="last"}, "$loc: a Link header with rel=\"last\"");
    }
    my (undef, $content) = module_get(with_args('/sem/pos-range/', format => 'html'));
    my $html = Encode::decode('UTF-8', $content // '');
    like($html, qr{<ol class="couchpage-pages">\n<li><span aria-current="page">1</span></li>\n<li><a href="[^"]*">2</a></li>\n<li><a href="[^"]*">3</a></li>\n<li class="couchpage-gap" aria-hidden="true">\x{2026}</li>\n<li><a rel="last" href="[^"]*">5</a></li>\n</ol>},
         '/sem/pos-range/ page 1 in HTML: pages 1 2 3 ... 5');

    # partitions: offsets count the shard's other partitions, positions do not
    for my $p ('beta', 'gamma') {
        for my $kind ('view', 'all') {
            my $want = $kind eq 'view' ? double_view("/sem_part/_partition/$p/_design/d/_view/by_x", reduce => 'false')
                                       : double_view("/sem_part/_partition/$p/_all_docs");
            for my $size (2, 4) {
                my ($problems, $pages) = check_walk("/parts/$p/$kind/", $size, $want->{rows});
                push @$problems, check_position("/parts/$p/$kind/", $size, $pages, scalar @{ $want->{rows} }, exact => 1)
                    unless @$problems;
                ok(!@$problems, "partition $p ($kind), $size a page: positions, total and the last page exact")
                    or diag join "\n", @$problems[0 .. ($#$problems < 4 ? $#$problems : 4)];
            }
        }
    }
}

diag sprintf('12_semantics: %.1f s', time - $STARTED);
