# SPDX-License-Identifier: Apache-2.0
# ?page=N, a jump to page N (issue 41): on every location whose pages are
# numbered, for each page size and every N, the page a jump gives is the
# walk's page N (the walk by next links from the first page): the same
# bytes, tokens and links included, but the Last page, which the jump reads
# as ?start=last (its rows, position, prev and next the walk's); pages
# farther than CouchPageJumpReach (3 here) from either end are refused
# with a 400 that names the pages that can be reached, and so is a page
# past the last. Views ascending and descending, key ranges both ways,
# include_docs with page links, sealed tokens, _all_docs in a range,
# partitions both ways, documents that emit one key three times (an
# entry of three rows, which a page may start inside), and, on CouchDB, a
# numbered _find location read from its index's view, with and without
# page links. On counted _find locations (a residual $elemMatch, a
# residual $regex, both tiers) every page within the reach is the walk's,
# the count in its tokens; a count "at least" its cap reaches only the
# pages within the reach of the first whose rows it read. Counted grouped
# reduce rows (group levels, exact groups descending with sealed tokens, a
# key range, page links, keys only bounded tokens hold): every page within
# the reach is the walk's, the count in its tokens; counted "at least" its
# cap, the pages within the reach of the first. Where rows are not numbered
# (grouped reduce rows or a _find location by _find not counted:
# CouchPageCount none or Prefer: count=none) ?page= is a 400 that says
# why; hostile values are a
# 400 with the module's error JSON and no error-log line above info. The
# HTML fragment of a numbered page list carries a go-to-page form (GET,
# page, the limit kept, labelled, CouchPageText words), absent without a
# page list or a known last page, and its submission is the walk's page.
use strict;
use warnings;
use utf8;

use Apache::Test qw(-withtestmore);
use Apache::TestRequest ();
use JSON::PP ();
use CouchPageTest qw(backend_kind backend_request backend_open_db error_log_mark
                     error_log_since with_args httpd_config_test);
use CouchPageWalk qw(:all);
use CouchPageFind qw(must reference_ids bounded_count);

binmode Test::More->builder->$_, ':encoding(UTF-8)' for qw(output failure_output todo_output);

my $REACH = 3;
my $JSON = JSON::PP->new->utf8->canonical;
my $couchdb = backend_kind() eq 'couchdb';

# --- data ------------------------------------------------------------------------

# 100 documents, two a key; every seventh emits its key three times
my $MAP = 'function (doc) { if (doc.n !== undefined) { emit(doc.n, doc.i);'
        . ' if (doc.i % 7 === 0) { emit(doc.n, doc.i); emit(doc.n, doc.i); } } }';
couch_load('jump',
    views => { v => { map => $MAP },
               count => { map => 'function (doc) { if (doc.n !== undefined) emit(doc.n % 5, 1); }',
                          reduce => '_count' } },
    docs => [ map { { _id => sprintf('d%03d', $_), n => int($_ / 2), i => $_, title => "T$_" } } 0 .. 99 ]);
couch_load('jumppart', partitioned => 1,
    views => { v => { map => $MAP } },
    docs => [ map { { _id => ('a', 'b', 'c')[$_ % 3] . sprintf(':p%03d', $_), n => int($_ / 3), i => $_ } }
              0 .. 149 ]);

# the backend's numbered _find location (CouchDB): posts by group, many
# sharing one, and documents of another type the selector leaves out
backend_request(DELETE => '/jumpfind');
backend_open_db('jumpfind');
must('loading jumpfind', backend_request(POST => '/jumpfind/_bulk_docs', { docs => [
    (map { { _id => sprintf('p%03d', ($_ * 37) % 90), type => 'post', group => 'g' . ($_ % 7),
             title => "T$_" } } 0 .. 89),
    (map { { _id => "o$_", type => 'other', group => 'g1' } } 1 .. 5) ] }));
must('index by-type-group', backend_request(POST => '/jumpfind/_index',
    { index => { fields => ['type', 'group'] }, ddoc => 'by-type-group', name => 'by-type-group',
      type => 'json' }));

# the backend's counted _find locations: 200 documents, a third tagged
# "a" ($elemMatch), about half titled "T..." ($regex), sorted by n (ties
# of three), which no index's view numbers
backend_request(DELETE => '/jumpcounted');
backend_open_db('jumpcounted');
must('loading jumpcounted', backend_request(POST => '/jumpcounted/_bulk_docs', { docs => [
    map { { _id => sprintf('c%04d', ($_ * 7919) % 10000), n => $_ % 67,
            tags => [($_ * 31) % 3 == 0 ? 'a' : 'b', 'z'], title => ($_ * 17) % 2 ? "T$_" : "x$_" } }
    0 .. 199 ] }));
must('index by-n', backend_request(POST => '/jumpcounted/_index',
    { index => { fields => ['n'] }, ddoc => 'by-n', name => 'by-n', type => 'json' }));
# what capped 10 says of /jump-counted/capped/ (on CouchDB the matches among
# the first rows of the index's view: bounded_count)
my ($AT_LEAST) = bounded_count('jumpcounted', '_design/by-n/_view/by-n', [reference_ids(
    'jumpcounted', { n => { '$gte' => undef }, tags => { '$elemMatch' => { '$eq' => 'a' } } },
    n => 'asc')], 10);

# the backend's grouped rows: [g, i] keys of 53 groups at level 1 (count),
# the same groups exactly (sum), 300-byte string keys (long)
backend_request(DELETE => '/jumpgrouped');
backend_open_db('jumpgrouped');
must('loading jumpgrouped', backend_request(POST => '/jumpgrouped/_bulk_docs', { docs => [
    map { { _id => sprintf('g%04d', ($_ * 7919) % 10000), g => $_ % 53, i => $_ } } 0 .. 6 * 53 - 1 ] }));
must('the design document of jumpgrouped', backend_request(PUT => '/jumpgrouped/_design/d', { views => {
    count => { map => 'function (d) { emit([d.g, d.i], 1); }', reduce => '_count' },
    sum => { map => 'function (d) { emit(d.g, d.i); }', reduce => '_sum' },
    long => { map => 'function (d) { emit(new Array(298).join("k") + ("00" + d.g).slice(-3), 1); }',
              reduce => '_count' } } }));

# --- jumps against the walk -------------------------------------------------------

sub jnode { my ($page, $name) = @_; my $n = $page->{tree} ? jget($page->{tree}, $name) : undef; return $n }
sub num_of { my ($page, $name) = @_; my $n = jnode($page, $name); return $n && $n->[0] eq 'num' ? $n->[1] + 0 : undef }

# The walk's pages, then ?page=N for every N from 1 to one past the last:
# the problems found (an empty list when every jump is right).
sub check_jumps {
    my ($path, $limit, %opt) = @_;
    my $reach = $opt{reach} // $REACH;
    my @problems;
    my @walk = walk_next($path, limit => $limit, max_pages => 200);
    my $last = @walk;
    push @problems, "the walk of $path ended with $walk[-1]{status}" if $walk[-1]{status} != 200;
    my $said = num_of($walk[0], 'last_page');
    push @problems, "the walk of $path has $last pages, its first says " . ($said // 'none')
        unless defined $said && $said == $last;
    for my $n (1 .. $last + 1) {
        my $page = module_page($path, limit => $limit, page => $n);
        my $reached = $n == 1 || $n == $last || $n <= $reach || $last - $n < $reach;
        if ($n > $last) {
            push @problems, "page $n of $path (of $last): $page->{status} " . ($page->{reason} // '')
                unless $page->{status} == 400 && ($page->{error} // '') eq 'bad_request'
                       && ($page->{reason} // '') =~ /^page $n is past the last page, $last$/;
            next;
        }
        if (!$reached) {
            my $from = $last - $reach + 1;
            push @problems, "page $n of $path (of $last) is out of reach: $page->{status} "
                . ($page->{reason} // '')
                unless $page->{status} == 400 && ($page->{error} // '') eq 'bad_request'
                       && ($page->{reason} // '') =~ /pages 1 to $reach and $from to $last can be/;
            next;
        }
        my $want = $walk[$n - 1];
        if ($page->{status} != 200) {
            push @problems, "page $n of $path (of $last): $page->{status} " . ($page->{reason} // '');
            next;
        }
        if ($n < $last) {
            # the walk's page itself: the same bytes, its token and links too
            push @problems, "page $n of $path (limit $limit) is not the walk's: "
                . first_difference([$page->{raw}], [$want->{raw}]) unless $page->{raw} eq $want->{raw};
            next;
        }
        # the Last page, read from the end: the walk's rows, position and links
        push @problems, "the last page of $path (limit $limit) has other rows"
            unless join("\n", @{ $page->{rows} }) eq join("\n", @{ $want->{rows} });
        for my $name (qw(first_row last_row total_rows last_page offset)) {
            my ($got, $exp) = (num_of($page, $name), num_of($want, $name));
            push @problems, "the last page of $path (limit $limit): $name "
                . ($got // 'none') . ', the walk ' . ($exp // 'none')
                unless defined $got && defined $exp && $got == $exp;
        }
        push @problems, "the last page of $path (limit $limit) has a next token" if defined $page->{next};
        push @problems, "the last page of $path (limit $limit): prev differs"
            unless ($page->{prev} // '') eq ($want->{prev} // '');
    }
    return ($last, @problems);
}

my @LOCATIONS = qw(/jump/ /jump/desc/ /jump/range/ /jump/range-desc/ /jump/docs-links/
                   /jump/sealed/ /jump/ids/ /jump/part/ /jump/part-desc/);
for my $path (@LOCATIONS) {
    for my $limit (4, 7) {
        my ($pages, @problems) = check_jumps($path, $limit);
        ok(!@problems && $pages > 2 * $REACH, "every page of $path, $limit a page ($pages pages)")
            or diag join "\n", @problems[0 .. ($#problems < 9 ? $#problems : 9)];
    }
}
# the default reach, 10 pages
{
    my ($pages, @problems) = check_jumps('/jump-default/', 4, reach => 10);
    ok(!@problems && $pages > 20, "the default reach, 10 pages from either end ($pages pages)")
        or diag join "\n", @problems[0 .. ($#problems < 9 ? $#problems : 9)];
}
# a reach of 0: the first and the last page only
{
    my ($pages, @problems) = check_jumps('/jump/reach0/', 9, reach => 0);
    my $page = module_page('/jump/reach0/', limit => 9, page => 2);
    ok(@problems == $pages - 2 && $page->{status} == 400
       && $page->{reason} =~ /^page 2 cannot be asked for by number here: only the first page and the last, $pages, can/,
       'CouchPageJumpReach 0: the first and the last page') or diag join "\n", @problems, $page->{reason};
}

# a numbered _find location (CouchDB: from its index's view; pouchdb-server
# answers this location's _find 400 whatever is asked, so there the
# counted jumps are /jump-counted/'s below)
for my $path ($couchdb ? ('/jump-find/', '/jump-find-links/') : ()) {
    my ($pages, @problems) = check_jumps($path, 4);
    ok(!@problems && $pages > 2 * $REACH, "every page of the numbered _find location $path ($pages pages)")
        or diag join "\n", @problems[0 .. ($#problems < 9 ? $#problems : 9)];
}

# counted _find locations (a residual $elemMatch, a residual $regex read
# descending with sealed tokens): every page within the reach is the
# walk's, its tokens carrying the count; the others are refused
for my $path ('/jump-counted/', '/jump-counted/links/', '/jump-counted/regex/') {
    for my $limit (4, 7) {
        my ($pages, @problems) = check_jumps($path, $limit);
        ok(!@problems && $pages > 2 * $REACH, "every page of the counted _find location $path, "
           . "$limit a page ($pages pages)")
            or diag join "\n", @problems[0 .. ($#problems < 9 ? $#problems : 9)];
    }
}
# A count that stops at its cap ("at least 10"): the end is not known, so
# only the pages within the reach of the first (and, on a _find location,
# whose rows the count read: $reachable of them) are reached, each the
# walk's; the walk's first page counted at least, total_rows total.
sub capped_jumps {
    my ($path, $limit, $total, $reachable) = @_;
    $reachable //= $REACH;
    my @walk = walk_next($path, limit => $limit, max_pages => 200);
    my @problems;
    push @problems, "the walk of $path ended with $walk[-1]{status}" if $walk[-1]{status} != 200;
    push @problems, "the walk of $path is not counted at least $total"
        unless (jstr(jnode($walk[0], 'count')) // '') eq 'at least'
               && num_of($walk[0], 'total_rows') == $total;
    for my $n (1 .. $reachable) {
        my $page = module_page($path, limit => $limit, page => $n);
        push @problems, "page $n of $path (limit $limit) is not the walk's: $page->{status} "
            . first_difference([$page->{raw}], [$walk[$n - 1]{raw}]) unless $page->{raw} eq $walk[$n - 1]{raw};
    }
    my $can = $reachable > 1 ? qr/is too far from the first page to be asked for by number: .*; pages 1 to $reachable can be/
                             : qr/cannot be asked for by number here: .*; only the first page can/;
    for my $n ($reachable + 1, scalar(@walk), 999) {
        my $page = module_page($path, limit => $limit, page => $n);
        push @problems, "page $n of $path (limit $limit): $page->{status} " . ($page->{reason} // '')
            unless $page->{status} == 400 && ($page->{error} // '') eq 'bad_request'
                   && ($page->{reason} // '') =~ /^page $n $can/
                   && ($page->{reason} // '') =~ /: this location's rows are counted up to 10 only \(there are more: CouchPageCount\), so its last page is not known;/;
    }
    ok(!@problems && @walk > $REACH + 1, "$path, $limit a page: the pages within the reach of the first "
       . "that the count read ($reachable of " . scalar(@walk) . ' pages)')
        or diag join "\n", @problems[0 .. ($#problems < 9 ? $#problems : 9)];
}
# a counted _find location: the pages whose row before and first row lie
# among the count's rows (on CouchDB the matches it counted, bounded by the
# index's view; elsewhere the cap's 11), no farther: past them a _find that
# skips matches would examine documents without bound where few match;
# total_rows the larger of the count and the first page's last row
{
    my $count_rows = $couchdb ? $AT_LEAST : 11;
    for my $limit (4, 6) {
        my $reachable = int(($count_rows - 1) / $limit) + 1;
        capped_jumps('/jump-counted/capped/', $limit, $AT_LEAST > $limit ? $AT_LEAST : $limit,
                     $reachable < $REACH ? $reachable : $REACH);
    }
}
# counted grouped reduce rows: every page within the reach is the walk's,
# its tokens carrying the count ({"g": [KEY], "t": T, "p": P}), bounded
# ones too
for my $path ('/jump-grouped/', '/jump-grouped/links/', '/jump-grouped/range/',
              '/jump-grouped/desc/', '/jump-grouped/long/') {
    for my $limit (4, 7) {
        my ($pages, @problems) = check_jumps($path, $limit);
        my $second = module_page($path, limit => $limit, page => 2);
        # its next token (text; sealed: not to be read) carries the count
        my $next = eval { JSON::PP->new->decode($second->{next} // '') } || {};
        push @problems, "page 2 of $path: first_row " . (num_of($second, 'first_row') // 'none')
            . ", next $second->{next}"
            unless (num_of($second, 'first_row') // 0) == $limit + 1
                   && ($path eq '/jump-grouped/desc/'
                       || (($next->{p} // -1) == 2 * $limit && ($next->{t} // -1) == num_of($second, 'total_rows')
                           && ($path eq '/jump-grouped/long/' ? defined $next->{h} : ref $next->{g} eq 'ARRAY')));
        ok(!@problems && $pages > 2 * $REACH, "every page of the counted grouped location $path, "
           . "$limit a page ($pages pages)")
            or diag join "\n", @problems[0 .. ($#problems < 9 ? $#problems : 9)];
    }
}
# grouped rows counted "at least 10" (with limit 6, page 3's first group
# lies past the count's rows: read with skip beside it)
capped_jumps('/jump-grouped/capped/', $_, 10) for 4, 6;
# the double's five groups, counted by default: one page
{
    my $first = module_page('/jump/reduce/', page => 1);
    my $walked = module_page('/jump/reduce/');
    my $past = module_page('/jump/reduce/', page => 2);
    ok($first->{status} == 200 && $first->{raw} eq $walked->{raw} && @{ $first->{rows} } == 5
       && $past->{status} == 400 && ($past->{reason} // '') eq 'page 2 is past the last page, 1',
       '/jump/reduce/: five groups, one page') or diag "$first->{raw}\n$past->{raw}";
}

# Prefer: count=none: the rows are not counted, and page numbers are refused
{
    my $res = Apache::TestRequest::GET('/jump-counted/?page=2', Accept => 'application/json',
                                       Prefer => 'count=none');
    my $body = eval { $JSON->decode($res->content) } || {};
    ok($res->code == 400 && ($body->{reason} // '') =~ /^page numbers cannot be asked for here: this _find location's rows are not counted/,
       'Prefer: count=none: no count, no page numbers') or diag $res->content;
}
{
    my $res = Apache::TestRequest::GET('/jump-grouped/?page=2', Accept => 'application/json',
                                       Prefer => 'count=none');
    my $body = eval { $JSON->decode($res->content) } || {};
    ok($res->code == 400 && ($body->{reason} // '') =~ /^page numbers cannot be asked for here: this location's grouped reduce rows are not counted/,
       'Prefer: count=none on grouped rows: no count, no page numbers') or diag $res->content;
}

# --- where rows are not numbered --------------------------------------------------

for my $case (['/jump/reduce-none/', qr/^page numbers cannot be asked for here: this location's grouped reduce rows are not counted \(CouchPageCount or the request's Prefer says none\); follow the page links$/],
              ['/jump-grouped/none/', qr/^page numbers cannot be asked for here: this location's grouped reduce rows are not counted/],
              ['/jump-find-relative/', qr/^page numbers cannot be asked for here: this _find location's rows are not counted/]) {
    my ($path, $want) = @$case;
    for my $n (1, 2) {
        my $page = module_page($path, page => $n);
        ok($page->{status} == 400 && ($page->{error} // '') eq 'bad_request' && $page->{reason} =~ $want,
           "page $n of $path: not numbered") or diag "$page->{status} $page->{raw}";
    }
}

# --- hostile values -----------------------------------------------------------------

{
    my $mark = error_log_mark();
    my %why = (
        number => qr/^page must be a whole number from 1 to 999999999$/,
        twice => qr/^the page argument is given more than once$/,
        both => qr/^page and start name a page each: give one of them$/,
        past => qr/^page \d+ is past the last page, \d+$/,
        escape => qr/malformed percent-escape/,
    );
    my @cases = (['page=0', 'number'], ['page=-1', 'number'], ['page=abc', 'number'], ['page=', 'number'],
                 ['page', 'number'], ['page=1e3', 'number'], ['page=%2B2', 'number'], ['page=2.0', 'number'],
                 ['page=0x10', 'number'], ['page=1000000000', 'number'],
                 ['page=99999999999999999999999999', 'number'], ['page=%00', 'escape'],
                 ['page=%zz', 'escape'], ['page=2&page=3', 'twice'], ['page=2&page=2', 'twice'],
                 ['page=2&start=last', 'both'], ['start=last&page=2', 'both'],
                 ['page=999999999', 'past'], ['page=999999999&limit=1', 'past']);
    for my $case (@cases) {
        my ($query, $kind) = @$case;
        for my $path ('/jump/', '/jump/sealed/', '/jump/reduce/', '/jump-grouped/', '/jump/reduce-none/') {
            my ($status, $raw, $res) = module_get("$path?$query");
            my $body = eval { $JSON->decode($raw) } || {};
            my $ok = $status == 400 && ($body->{error} // '') eq 'bad_request'
                     && ($res->{headers}{'content-type'} // '') =~ m{^application/json}
                     && ($path eq '/jump/reduce-none/' && $kind eq 'past'
                         ? $body->{reason} =~ /grouped reduce rows are not counted/
                         : ($body->{reason} // '') =~ $why{$kind});
            ok($ok, "$path?$query: 400") or diag "$status $raw";
        }
    }
    my @lines = grep { m{/jump[/-]} && /\[(?!couchpage:info|couchpage:debug|proxy:debug|proxy:trace)[a-z_]+:(warn|error|crit|alert|emerg)\]/ }
                error_log_since($mark, wait => 1);
    ok(!@lines, 'no error-log line above info for any of them') or diag join '', @lines[0 .. ($#lines < 4 ? $#lines : 4)];
}

# --- the directive ------------------------------------------------------------------

for my $case (['-1', qr/CouchPageJumpReach: '-1' is not a whole number from 0 to 1000/],
              ['1001', qr/CouchPageJumpReach: '1001' is not a whole number from 0 to 1000/],
              ['ten', qr/CouchPageJumpReach: 'ten' is not a whole number from 0 to 1000/],
              ['0', undef], ['1000', undef]) {
    my ($status, $out) = httpd_config_test("CouchPageView http://127.0.0.1:5984/db/_design/d/_view/v\n"
                                           . "CouchPageJumpReach $case->[0]");
    ok($case->[1] ? $status != 0 && $out =~ $case->[1] : $status == 0 && $out =~ /Syntax OK/,
       "httpd -t and CouchPageJumpReach $case->[0]") or diag $out;
}

# --- the HTML form ------------------------------------------------------------------

sub html_get {
    my ($url) = @_;
    my $res = Apache::TestRequest::GET($url);
    my $body = $res->content;
    utf8::decode($body);
    return ($res->code, $body);
}

{
    my ($status, $html) = html_get('/jump/html/?limit=5');
    my $last = () = map { 1 } walk_next('/jump/', limit => 5, max_pages => 200);
    my ($form) = $html =~ m{(<form class="couchpage-jump".*?</form>)}s;
    ok($status == 200 && defined $form && $html =~ m{<nav[^>]*>.*\Q$form\E\s*</nav>}s,
       'a numbered page list ends with the go-to-page form, in the nav') or diag $html;
    $form //= '';
    ok($form =~ m{^<form class="couchpage-jump" method="get" action="/jump/html/">}
       && $form =~ m{<label>Go to page <input type="number" name="page" min="1" max="$last" step="1" required></label>}
       && $form =~ m{<input type="hidden" name="limit" value="5">}
       && $form =~ m{<button type="submit">Go</button>}
       && $form !~ /<script|on[a-z]+=/,
       'a GET of page, labelled, the limit kept, the last page its max, no script') or diag $form;
    # its submission is the walk's page 3, as HTML
    my @walk = walk_next('/jump/', limit => 5, max_pages => 4);
    my ($s3, $jumped) = html_get('/jump/html/?page=3&limit=5');
    my ($s4, $walked) = html_get(with_args('/jump/html/', start => $walk[2]{token}, limit => 5));
    ok($s3 == 200 && $s4 == 200 && $jumped eq $walked && $jumped =~ /aria-current="page">3</,
       'the form\'s page is the walk\'s page, in HTML') or diag "$s3 $s4\n$jumped\n---\n$walked";
    my ($sf, $fr) = html_get('/jump/html-fr/');
    ok($sf == 200 && $fr =~ m{<label>Aller à la page <input type="number" name="page"}
       && $fr =~ m{<button type="submit">Aller</button>}, 'CouchPageText jump and go') or diag $fr;
    my ($sp, $plain) = html_get('/jump/html-plain/');
    ok($sp == 200 && $plain =~ /couchpage-nav/ && $plain !~ /couchpage-jump/,
       'without page links, no form') or diag $plain;
    # a counted _find location whose last page is known carries the form,
    # and its submission is the walk's page; one counted "at least" not
    my $counted = () = map { 1 } walk_next('/jump-counted/', limit => 4, max_pages => 200);
    my ($sc, $chtml) = html_get('/jump-counted/html/?limit=4');
    ok($sc == 200 && $chtml =~ m{<form class="couchpage-jump" method="get" action="/jump-counted/html/">}
       && $chtml =~ m{name="page" min="1" max="$counted" step="1" required>},
       "a counted _find location's page list: the form, its last page ($counted) the max") or diag $chtml;
    my @cwalk = walk_next('/jump-counted/links/', limit => 4, max_pages => 3);
    my ($sj, $cjumped) = html_get('/jump-counted/html/?page=3&limit=4');
    my ($sw, $cwalked) = html_get(with_args('/jump-counted/html/', start => $cwalk[2]{token}, limit => 4));
    ok($sj == 200 && $sw == 200 && $cjumped eq $cwalked && $cjumped =~ /aria-current="page">3</,
       "the counted location's form gives the walk's page, in HTML") or diag "$sj $sw\n$cjumped\n---\n$cwalked";
    my ($sa, $ahtml) = html_get('/jump-counted/html-capped/?limit=4');
    ok($sa == 200 && $ahtml =~ /couchpage-nav/ && $ahtml !~ /couchpage-jump/,
       'counted "at least": the last page is not known, no form') or diag $ahtml;
    # counted grouped rows: the form, and its submission is the walk's page
    my $groups = () = map { 1 } walk_next('/jump-grouped/', limit => 5, max_pages => 200);
    my ($sg, $ghtml) = html_get('/jump-grouped/html/?limit=5');
    ok($sg == 200 && $ghtml =~ m{<form class="couchpage-jump" method="get" action="/jump-grouped/html/">}
       && $ghtml =~ m{name="page" min="1" max="$groups" step="1" required>}
       && $ghtml =~ m{<input type="hidden" name="limit" value="5">},
       "a counted grouped location's page list: the form, its last page ($groups) the max") or diag $ghtml;
    my @gwalk = walk_next('/jump-grouped/links/', limit => 5, max_pages => 3);
    my ($sgj, $gjumped) = html_get('/jump-grouped/html/?page=3&limit=5');
    my ($sgw, $gwalked) = html_get(with_args('/jump-grouped/html/', start => $gwalk[2]{token}, limit => 5));
    ok($sgj == 200 && $sgw == 200 && $gjumped eq $gwalked && $gjumped =~ /aria-current="page">3</,
       "the counted grouped location's form gives the walk's page, in HTML") or diag "$sgj $sgw\n$gjumped\n---\n$gwalked";
    my ($se, $err) = html_get('/jump/html/?page=0');
    ok($se == 400 && $err =~ /couchpage-error/, 'a bad page in HTML: the error fragment') or diag $err;
}

done_testing();
