# SPDX-License-Identifier: Apache-2.0
package CouchPageWalk;
# Helpers for the tests of CouchDB's view semantics through the module
# (t/api/12_semantics.t, t/api/13_properties.t):
#
#  - an order-preserving JSON reader (jparse) and a canonical text of a JSON
#    value (jsig) in which object members keep their order, integers their
#    exact digits, and floats their value (0.1 and 0.10000000000000001 are
#    the same float; 1 and 1.0 are not the same JSON);
#  - the bytes of any value or member as the text had them (jparse with
#    spans, jraw, jmember_raw), to compare what the module copies with
#    what CouchDB sent;
#  - pages fetched through the test server on one keep-alive connection
#    (module_page), walked by next and by prev (walk_next, walk_prev), a
#    check that a whole walk agrees with the view (check_walk), and one that
#    numbered page links open the pages they name (check_links);
#  - views read straight from a backend as the oracle: the CouchDB view
#    double (a test double of CouchDB 3.4, t/double/) with double_view, and
#    the paging backend (pouchdb-server, or a real CouchDB) with backend_view;
#  - databases created through CouchDB's own API (couch_load), so that the
#    tests also run with COUCHPAGE_DOUBLE pointing at a real CouchDB, and
#    backend_is_double to leave out what only the double can do.
#
# Rows are compared as "signatures": one line per row with the JSON of its
# id, key, value and doc (see row_sig).
use strict;
use warnings;

use Exporter 'import';
use Digest::SHA ();
use Encode ();
use HTTP::Tiny ();
use JSON::PP ();
use MIME::Base64 ();
use URI::Escape qw(uri_escape_utf8);
use Apache::TestRequest ();
use CouchPageTest qw(double_url backend_url backend_auth backend_kind);

our @EXPORT_OK = qw(
    jparse jraw jmember_raw jsig jget jstr jnum num_sig utf8_text utf8_bytes
    bounded_token_names module_get module_page walk_next walk_prev check_walk check_links check_position
    reset_connections
    double_raw double_view backend_raw backend_view view_query backend_is_double couch_load
    row_sig token_parts first_difference
);
our %EXPORT_TAGS = (all => \@EXPORT_OK);

my $ASCII = JSON::PP->new->ascii->allow_nonref;
my $HTTP = HTTP::Tiny->new(timeout => 60, keep_alive => 1);    # to the backends

# --- JSON ------------------------------------------------------------------

# Parses JSON text (a character string, or UTF-8 bytes with bytes => 1) into
# [type, ...] nodes: ['null'], ['bool', 0|1], ['num', TEXT], ['str', STRING],
# ['arr', [NODES]], ['obj', [[NAME, NODE], ...]]. Dies on bad JSON.
# With spans => 1 every node also knows where it lies in the text, for
# jraw and jmember_raw (the bytes as sent, not a re-encoding).
our $SPANS;    # while parsing with spans: a reference to the text
sub jparse {
    my ($text, %opt) = @_;
    die "JSON: no text\n" unless defined $text;
    $text = utf8_text($text) if $opt{bytes};
    local $SPANS = $opt{spans} ? \$text : undef;
    pos($text) = 0;
    my $v = _value(\$text);
    $text =~ /\G[ \t\r\n]*/gc;
    die "JSON: trailing text at " . pos($text) . "\n" if pos($text) != length $text;
    return $v;
}

# The UTF-8 bytes of a node's own text, as the parsed text has them (a node
# of jparse(..., spans => 1)).
sub jraw {
    my ($v) = @_;
    die "jraw: the node has no span (jparse without spans => 1)\n" unless $v and $v->[2];
    return utf8_bytes(substr(${ $v->[2] }, $v->[3], $v->[4] - $v->[3]));
}

# The bytes of an object's member NAME (the last of that name, as a JSON
# parser keeps it), from its name to the end of its value: "name":value as
# sent. undef if the object has no such member.
sub jmember_raw {
    my ($v, $name) = @_;
    my ($member) = grep { $_->[0] eq $name } reverse @{ $v->[1] };
    return undef unless $member;
    my $value = $member->[1];
    return utf8_bytes(substr(${ $value->[2] }, $member->[2], $value->[4] - $member->[2]));
}

# UTF-8 bytes as text, as JSON takes them (RFC 3629: no overlong form,
# surrogate or code point past U+10FFFF; dies on those), noncharacters such
# as U+FFFF included, which Encode's strict 'UTF-8' refuses; and text as
# such bytes ('UTF-8' would write U+FFFD for a noncharacter).
sub utf8_text {
    my ($bytes) = @_;
    my $text = Encode::decode('utf8', $bytes, Encode::FB_CROAK);
    die "JSON: not UTF-8 (a surrogate or a code point past U+10FFFF)\n"
        if $text =~ /[\x{D800}-\x{DFFF}]|[^\x{0}-\x{10FFFF}]/;
    return $text;
}

sub utf8_bytes {
    my ($text) = @_;
    return Encode::encode('utf8', $text);
}

my %ESCAPE = ('"' => '"', '\\' => '\\', '/' => '/', b => "\b", f => "\f", n => "\n",
              r => "\r", t => "\t");

# A value after white space; with spans, its place: [TYPE, VALUE, \TEXT,
# START, END] (null's VALUE is undef).
sub _value {
    my ($r) = @_;
    no warnings 'recursion';    # documents nest thousands of levels deep
    $$r =~ /\G[ \t\r\n]*/gc;
    return _bare_value($r) unless $SPANS;
    my $start = pos($$r);
    my $v = _bare_value($r);
    $#$v = 1;
    push @$v, $SPANS, $start, pos($$r);
    return $v;
}

sub _bare_value {
    my ($r) = @_;
    no warnings 'recursion';
    if ($$r =~ /\G\{/gc) {
        my @pairs;
        $$r =~ /\G[ \t\r\n]*/gc;
        return ['obj', \@pairs] if $$r =~ /\G\}/gc;
        while (1) {
            $$r =~ /\G[ \t\r\n]*/gc;
            my $name_at = pos($$r);
            $$r =~ /\G"/gc or die "JSON: member name expected at " . pos($$r) . "\n";
            my $name = _string($r);
            $$r =~ /\G[ \t\r\n]*:/gc or die "JSON: ':' expected at " . pos($$r) . "\n";
            # with spans, a member also knows where its name starts
            push @pairs, [$name, _value($r), $SPANS ? ($name_at) : ()];
            $$r =~ /\G[ \t\r\n]*/gc;
            next if $$r =~ /\G,/gc;
            return ['obj', \@pairs] if $$r =~ /\G\}/gc;
            die "JSON: ',' or '}' expected at " . pos($$r) . "\n";
        }
    }
    if ($$r =~ /\G\[/gc) {
        my @items;
        $$r =~ /\G[ \t\r\n]*/gc;
        return ['arr', \@items] if $$r =~ /\G\]/gc;
        while (1) {
            push @items, _value($r);
            $$r =~ /\G[ \t\r\n]*/gc;
            next if $$r =~ /\G,/gc;
            return ['arr', \@items] if $$r =~ /\G\]/gc;
            die "JSON: ',' or ']' expected at " . pos($$r) . "\n";
        }
    }
    return ['str', _string($r)] if $$r =~ /\G"/gc;
    return ['num', $1] if $$r =~ /\G(-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?)/gc;
    return ['null'] if $$r =~ /\Gnull/gc;
    return ['bool', 1] if $$r =~ /\Gtrue/gc;
    return ['bool', 0] if $$r =~ /\Gfalse/gc;
    die "JSON: value expected at " . (pos($$r) // 0) . "\n";
}

sub _string {
    my ($r) = @_;
    my $start = pos($$r);
    # a bounded repetition, as often as it takes: one over the whole string
    # stops at Perl's limit of 65534 repetitions of a group (a 100 kB value)
    1 while $$r =~ /\G(?:[^"\\\x00-\x1f]++|\\.){1,10000}/gcs;
    $$r =~ /\G"/gc or die "JSON: bad string at " . pos($$r) . "\n";
    my $s = substr($$r, $start, pos($$r) - $start - 1);
    no warnings qw(surrogate nonchar non_unicode);
    $s =~ s{\\(?:u([dD][89abAB][0-9a-fA-F]{2})\\u([dD][c-fC-F][0-9a-fA-F]{2})|u([0-9a-fA-F]{4})|(.))}
           {defined $1 ? chr(0x10000 + ((hex($1) - 0xD800) << 10) + (hex($2) - 0xDC00))
            : defined $3 ? chr(hex $3)
            : ($ESCAPE{$4} // die "JSON: bad escape \\$4\n")}gse;
    return $s;
}

# Canonical text of a number: integers with their exact digits, floats as the
# shortest of %.15g/%.17g that keeps their value, with ".0" when integral.
sub num_sig {
    my ($text) = @_;
    if ($text =~ /^(-?)0*([0-9]+)$/) {
        return ($2 eq '0' ? '' : $1) . $2;
    }
    my $n = 0 + $text;
    my $s = sprintf('%.15g', $n);
    $s = sprintf('%.17g', $n) if 0 + $s != $n;
    $s .= '.0' if $s =~ /^-?[0-9]+$/;
    return $s;
}

# Canonical JSON text of a node: object members in their order, strings
# \u-escaped to ASCII, numbers by num_sig.
# Written from a stack of its own, in one pass: nesting a recursion would
# copy each level's text into the one around it (quadratic in the depth).
sub jsig {
    my ($root) = @_;
    return '(none)' unless defined $root;
    my @out;
    my @todo = ($root);    # nodes (array references) and text, the next last
    while (@todo) {
        my $v = pop @todo;
        if (!ref $v) {
            push @out, $v;
            next;
        }
        my $t = $v->[0];
        if ($t eq 'arr' or $t eq 'obj') {
            my $members = $v->[1];
            push @todo, $t eq 'arr' ? ']' : '}';
            for my $i (reverse 0 .. $#$members) {
                push @todo, $t eq 'arr' ? $members->[$i]
                          : ($members->[$i][1], $ASCII->encode($members->[$i][0]) . ':');
                push @todo, ',' if $i > 0;
            }
            push @todo, $t eq 'arr' ? '[' : '{';
        }
        else {
            push @out, $t eq 'null' ? 'null' : $t eq 'bool' ? ($v->[1] ? 'true' : 'false')
                     : $t eq 'num' ? num_sig($v->[1]) : $ASCII->encode($v->[1]);
        }
    }
    return join '', @out;
}

# A member of an object node (the last of that name), or undef.
sub jget {
    my ($v, $name) = @_;
    return undef unless $v and $v->[0] eq 'obj';
    my $found;
    $_->[0] eq $name and $found = $_->[1] for @{ $v->[1] };
    return $found;
}

# A string node's string; undef for null or absent.
sub jstr {
    my ($v) = @_;
    return undef unless $v and $v->[0] eq 'str';
    return $v->[1];
}

# A number node's text; undef for anything else.
sub jnum {
    my ($v) = @_;
    return undef unless $v and $v->[0] eq 'num';
    return $v->[1];
}

# One line per row: the signatures of its id (if any), key, value and doc (if any).
sub row_sig {
    my ($row) = @_;
    my @parts;
    my $id = jget($row, 'id');
    push @parts, 'id=' . jsig($id) if $id;
    push @parts, 'key=' . jsig(jget($row, 'key')), 'value=' . jsig(jget($row, 'value'));
    my $doc = jget($row, 'doc');
    push @parts, 'doc=' . jsig($doc) if $doc;
    return join ' ', @parts;
}

# A walk's mark (couchpage_changed): a string a later token carries past
# its form's members, [key, docid, MARK], [key, docid, n, MARK], [key, MARK].
our $MARK = qr/[A-Za-z0-9_-]{5}[0-9]+(?:\.[A-Za-z0-9_-]{5}[0-9]+){0,3}/;

# A token's parts: (key node, docid or undef), or () if it is not [key(, id)];
# its mark left out (key_only: a grouped row's token, whose second member
# can only be a mark).
sub token_parts {
    my ($token, $key_only) = @_;
    return () unless defined $token;
    my $t = eval { jparse($token) } or return ();
    # a counted walk's grouped row, {"g": [key], "t": TOTAL, "p": PLACE}: [key]
    $t = jget($t, 'g') // return () if $t->[0] eq 'obj' and defined jget($t, 'g');
    # [key], [key, docid], or [key, docid, n]: the n-th row of a document
    # that emitted the key several times
    my @m = @{ $t->[1] };
    pop @m if $t->[0] eq 'arr' and @m >= ($key_only ? 2 : 3) and $m[-1][0] eq 'str'
              and (jstr($m[-1]) // '') =~ /^$MARK$/;
    return () unless $t->[0] eq 'arr' and @m >= 1 and @m <= 3;
    return () if @m == 3 and !($m[2][0] eq 'num' and $m[2][1] =~ /^[1-9][0-9]*$/);
    return ($m[0], @m >= 2 ? jstr($m[1]) : undef, @m == 3 ? $m[2][1] : 0);
}

# A text cut to 300 characters for a diagnostic.
sub _short {
    my ($text) = @_;
    return '(nothing)' unless defined $text;
    return length $text <= 300 ? $text : substr($text, 0, 300) . '... (' . length($text) . ' characters)';
}

# "index N: got X, want Y" for the first difference of two lists, or undef.
sub first_difference {
    my ($got, $want) = @_;
    my $n = @$got > @$want ? @$got : @$want;
    for my $i (0 .. $n - 1) {
        my ($g, $w) = ($got->[$i], $want->[$i]);
        next if defined $g and defined $w and $g eq $w;
        return sprintf("%d rows, want %d; first difference at %d:\n  got  %s\n  want %s",
                       scalar @$got, scalar @$want, $i, _short($g), _short($w));
    }
    return undef;
}

# --- the test server ----------------------------------------------------------

# One keep-alive connection to the test server (HTTP::Tiny: a third of
# LWP's time per request, which matters for the thousands of pages walked).
my $UA = HTTP::Tiny->new(keep_alive => 1, timeout => 30, agent => 'couchpage-semantics');

# New connections to the test server and the backends: a forked process
# must not share its parent's.
sub reset_connections {
    $UA = HTTP::Tiny->new(keep_alive => 1, timeout => 30, agent => 'couchpage-semantics');
    $HTTP = HTTP::Tiny->new(timeout => 60, keep_alive => 1);
}

# GET a path of the test server: (status, body bytes, HTTP::Tiny response).
sub module_get {
    my ($path) = @_;
    my $res = $UA->get(Apache::TestRequest::resolve_url($path), { headers => { Accept => 'application/json' } });
    return ($res->{status}, $res->{content}, $res);
}

sub _query {
    my ($path, @args) = @_;
    my @pairs;
    while (my ($k, $v) = splice @args, 0, 2) {
        push @pairs, "$k=" . uri_escape_utf8($v) if defined $v;
    }
    return $path unless @pairs;
    return $path . ($path =~ /\?/ ? '&' : '?') . join '&', @pairs;
}

# One page of a location: { path, token, status, raw, tree (undef unless JSON),
# items (row nodes), rows (row signatures), next, prev, error, reason }.
sub module_page {
    my ($path, %args) = @_;
    my $token = delete $args{start};
    my $url = _query($path, (map { ($_ => $args{$_}) } sort keys %args),
                     defined $token ? (start => $token) : ());
    my ($status, $raw) = module_get($url);
    my $tree = eval { jparse($raw, bytes => 1) };
    my $page = { path => $url, token => $token, status => $status, raw => $raw, tree => $tree };
    if ($tree and $tree->[0] eq 'obj') {
        my $items = jget($tree, 'items');
        $page->{items} = $items && $items->[0] eq 'arr' ? $items->[1] : [];
        $page->{rows} = [ map { row_sig($_) } @{ $page->{items} } ];
        $page->{$_} = jstr(jget($tree, $_)) for qw(next prev error reason);
    }
    return $page;
}

# Pages from the first (or from start => TOKEN) by following 'next' (or
# direction => 'prev'), until a page that is not 200, has no such token, or
# whose token was seen already (then the last page gets loop => 1), or
# max_pages (default 1000).
sub walk_next {
    my ($path, %opt) = @_;
    my $max = delete $opt{max_pages} // 1000;
    my $dir = delete $opt{direction} // 'next';
    my $token = delete $opt{start};
    my (@pages, %seen);
    for (1 .. $max) {
        my $page = module_page($path, %opt, defined $token ? (start => $token) : ());
        push @pages, $page;
        last unless $page->{status} == 200 and $page->{items};
        $token = $page->{$dir};
        last unless defined $token;
        if ($seen{$token}++) {
            $page->{loop} = 1;
            last;
        }
    }
    return @pages;
}

sub walk_prev {
    my ($path, $start, %opt) = @_;
    return walk_next($path, %opt, start => $start, direction => 'prev');
}

# Walks a location by next from its first page with ?limit=LIMIT, and by prev
# from its last page, and compares with the rows the view should page
# (signatures, in order). Returns the problems found (an empty list when the
# walk is right) and the forward pages:
#  - every row exactly once, in order, each page full but the last;
#  - the first page has no prev, the last no next;
#  - each next token names the next page's first row ([key, id], or [key]
#    for grouped rows: keys compared by jsig);
#  - each page's prev token opens the page before it (the same token text,
#    or a page with the same rows), and page 2's names the first row;
#  - walking prev from the last page visits the same pages in reverse.
# Options: max_pages; key_only => 1 (grouped reduce rows: tokens are [key]).
sub check_walk {
    my ($path, $limit, $want, %opt) = @_;
    my @problems;
    my $max = $opt{max_pages} // (@$want / $limit + 5);
    my @pages = walk_next($path, limit => $limit, max_pages => $max);
    my @bad = grep { $_->{status} != 200 or !$_->{items} } @pages;
    if (@bad) {
        return (['page ' . _short($bad[0]{path}) . " answered $bad[0]{status}: " . _short($bad[0]{raw})], \@pages);
    }
    push @problems, 'forward walk: a next token repeats (page ' . _short($pages[-1]{path}) . ')' if $pages[-1]{loop};
    push @problems, 'forward walk did not end' if defined $pages[-1]{next} and !$pages[-1]{loop};
    my @got = map { @{ $_->{rows} } } @pages;
    my $diff = first_difference(\@got, $want);
    push @problems, "forward walk: $diff" if $diff;
    for my $i (0 .. $#pages) {
        my $p = $pages[$i];
        my $n = @{ $p->{items} };
        if ($i < $#pages ? $n != $limit : ($n > $limit or ($n == 0 and @$want))) {
            push @problems, "page " . ($i + 1) . " has $n rows (limit $limit)";
        }
        if ($i < $#pages and !$p->{loop}) {
            my $problem = _token_names($p->{next}, $pages[$i + 1]{items}[0], $opt{key_only});
            push @problems, "page " . ($i + 1) . "'s next token $problem" if $problem;
        }
    }
    push @problems, "the first page has a prev token" if defined $pages[0]{prev};
    return (\@problems, \@pages) if @problems;

    # each page's prev opens the page before it
    for my $k (2 .. @pages) {
        my ($page, $before) = ($pages[$k - 1], $pages[$k - 2]);
        my $prev = $page->{prev};
        if (!defined $prev) {
            push @problems, "page $k has no prev token";
            next;
        }
        next if defined $before->{token} and $prev eq $before->{token};
        if ($k == 2 and !$opt{key_only}) {
            my $problem = _token_names($prev, $before->{items}[0], 0);
            push @problems, "page 2's prev token $problem" if $problem;
            next;
        }
        my $via = module_page($path, limit => $limit, start => $prev);
        if ($via->{status} != 200 or join("\n", @{ $via->{rows} || [] }) ne join("\n", @{ $before->{rows} })) {
            push @problems, "page $k\'s prev token " . _short($prev) . " opens " . ($via->{status} != 200 ? "a $via->{status}" : 'other rows')
                . " than page " . ($k - 1) . ': ' . (first_difference($via->{rows} || [], $before->{rows}) // '');
        }
        elsif ($k == 2 and defined $via->{prev}) {
            push @problems, "the page at page 2's prev token has a prev token";
        }
    }

    # back from the last page
    if (@pages > 1) {
        my @back = walk_prev($path, $pages[-1]{token}, limit => $limit, max_pages => @pages + 3);
        my @bad = grep { $_->{status} != 200 or !$_->{items} } @back;
        if (@bad) {
            push @problems, 'page ' . _short($bad[0]{path}) . " answered $bad[0]{status}: " . _short($bad[0]{raw});
            return (\@problems, \@pages);
        }
        push @problems, 'backward walk: a prev token repeats (page ' . _short($back[-1]{path}) . ')' if $back[-1]{loop};
        push @problems, sprintf("backward walk: %d pages, forward %d", scalar @back, scalar @pages)
            if @back != @pages;
        my @back_rows = map { @{ $_->{rows} } } reverse @back;
        my $bdiff = first_difference(\@back_rows, $want);
        push @problems, "backward walk: $bdiff" if $bdiff;
        for my $j (0 .. $#back) {
            my $fwd = $pages[$#pages - $j] or last;
            my $b = $back[$j];
            if (join("\n", @{ $b->{rows} }) ne join("\n", @{ $fwd->{rows} })) {
                push @problems, "backward page " . ($j + 1) . " is not forward page " . (@pages - $j);
                last;
            }
            if (($b->{next} // '(null)') ne ($fwd->{next} // '(null)') and !$opt{key_only}) {
                push @problems, "backward page " . ($j + 1) . "'s next differs from forward page "
                    . (@pages - $j) . "'s: " . _short($b->{next} // 'null') . ' vs ' . _short($fwd->{next} // 'null');
            }
        }
        push @problems, "the first page reached by prev has a prev token" if defined $back[-1]{prev};
    }
    return (\@problems, \@pages);
}

# Checks the numbered page links of the pages of a walk (check_walk's
# forward pages) of a location with CouchPageLinks N: each page links the
# pages of the walk within N of it, numbered from its own number (its
# position from 1 with "numbering": "absolute", 0 with "relative"), and each
# link opens that page (the same token as the walk's, or a page with the
# same rows). absolute => 0|1 says which numbering every page must have.
# Returns the problems found.
sub check_links {
    my ($pages, $n, %opt) = @_;
    my @problems;
    for my $i (0 .. $#$pages) {
        my $t = $pages->[$i]{tree};
        my $what = 'page ' . ($i + 1);
        my $numbering = jstr(jget($t, 'numbering')) // '(none)';
        if (defined $opt{absolute} and $numbering ne ($opt{absolute} ? 'absolute' : 'relative')) {
            push @problems, "$what: numbering $numbering";
        }
        my $links = jget($t, 'pages');
        if (!$links or $links->[0] ne 'arr') {
            push @problems, "$what: no pages";
            next;
        }
        my $base = $numbering eq 'absolute' ? $i + 1 : 0;
        my @got = map { (jnum(jget($_, 'number')) // '?') . (jsig(jget($_, 'current')) eq 'true' ? '*' : '') }
                  @{ $links->[1] };
        my @want = map { ($_ - $i + $base) . ($_ == $i ? '*' : '') }
                   grep { $_ >= 0 and $_ <= $#$pages } $i - $n .. $i + $n;
        if ("@got" ne "@want") {
            push @problems, "$what: pages @got, want @want";
            next;
        }
        for my $link (@{ $links->[1] }) {
            next if jsig(jget($link, 'current')) eq 'true';
            my $target = $i + jnum(jget($link, 'number')) - $base;
            my $start = jstr(jget($link, 'start'));
            my $page = $pages->[$target];
            next if defined $start and defined $page->{token} and $start eq $page->{token};
            my $via = module_page(jstr(jget($link, 'url')) // '/');
            if ($via->{status} != 200 or join("\n", @{ $via->{rows} || [] }) ne join("\n", @{ $page->{rows} })) {
                push @problems, "$what: its link to page " . ($target + 1) . ' opens '
                    . ($via->{status} != 200 ? "a $via->{status}" : 'other rows');
            }
        }
    }
    return @problems;
}

# The position each page of a walk (check_walk's pages, limit rows a page,
# total rows in the location) reports. exact => 1: every page numbered
# absolutely, offset, first_row, last_row, total_rows and last_page exact,
# and links.last (asked from the first page) opens the walk's last page at
# its offset, whose prev opens the page before it, at its offset; asked from
# a page in the middle, links.last opens the same last page.
# relative => 1: relative numbering and no position. grouped => 1: rows of
# grouped reduce rows, whose keys a backward read may spell otherwise (NFC
# or NFD): compared in NFC.
# Otherwise (a server whose offsets may be wrong): a page that says its
# numbering is absolute is exact.
sub check_position {
    my ($path, $limit, $pages, $total, %opt) = @_;
    my @problems;
    my $last = $total ? int(($total + $limit - 1) / $limit) : 0;
    my $exact_page = sub {
        my ($t, $at, $what) = @_;
        my $n = $total - $at < $limit ? $total - $at : $limit;
        my %want = (offset => $at, total_rows => $total, $n ? (first_row => $at + 1, last_row => $at + $n) : (),
                    $last ? (last_page => $last) : ());
        my @bad = map { "$_ " . (jnum(jget($t, $_)) // '(none)') . " (want $want{$_})" }
                  grep { (jnum(jget($t, $_)) // -1) != $want{$_} } sort keys %want;
        push @bad, 'numbering ' . (jstr(jget($t, 'numbering')) // '(none)')
            unless (jstr(jget($t, 'numbering')) // '') eq 'absolute';
        push @bad, 'no links.last' if $last and !defined jstr(jget(jget($t, 'links'), 'last'));
        return @bad ? ("$what: " . join(', ', @bad)) : ();
    };
    for my $i (0 .. $#$pages) {
        my $t = $pages->[$i]{tree};
        my $numbering = jstr(jget($t, 'numbering')) // '(none)';
        if ($opt{relative}) {
            push @problems, 'page ' . ($i + 1) . ": numbering $numbering, offset or last link"
                if $numbering ne 'relative' or defined jget($t, 'offset') or defined jget(jget($t, 'links'), 'last');
        }
        elsif ($opt{exact} or $numbering eq 'absolute') {
            push @problems, $exact_page->($t, $i * $limit, 'page ' . ($i + 1));
        }
        last if @problems >= 3;
    }
    return @problems if @problems or !$opt{exact} or !$last;
    # grouped rows (grouped => 1): CouchDB names a group by the first row it
    # meets in the direction read, so a page read backward (the Last page,
    # its prev) may spell a group's key otherwise (NFC or NFD): the same
    # group, compared in NFC
    my $rows_of = sub {
        my ($page) = @_;
        my @rows = @{ $page->{rows} || [] };
        return join "\n", @rows unless $opt{grouped};
        require Unicode::Normalize;
        no warnings;
        return join "\n", map { Unicode::Normalize::NFC(s/\\u([0-9a-fA-F]{4})/chr hex $1/ger) } @rows;
    };
    my $via = module_page(jstr(jget(jget($pages->[0]{tree}, 'links'), 'last')));
    if ($via->{status} != 200 or $rows_of->($via) ne $rows_of->($pages->[-1])) {
        return ("links.last opens " . ($via->{status} != 200 ? "a $via->{status}"
                : 'other rows than the last page: ' . _short(first_difference($via->{rows} || [], $pages->[-1]{rows}))));
    }
    push @problems, $exact_page->($via->{tree}, ($last - 1) * $limit, 'the page at links.last');
    if ($last > 1 and !@problems) {
        my $before = module_page($path, limit => $limit, start => $via->{prev});
        if ($before->{status} != 200 or $rows_of->($before) ne $rows_of->($pages->[-2])) {
            push @problems, "prev from links.last opens other rows than page " . ($last - 1);
        }
        push @problems, $exact_page->($before->{tree}, ($last - 2) * $limit, 'prev from links.last');
    }
    if ($last > 2 and !@problems) {
        my $middle = int($#$pages / 2);
        my $from = module_page(jstr(jget(jget($pages->[$middle]{tree}, 'links'), 'last')) // '/');
        if ($from->{status} != 200 or $rows_of->($from) ne $rows_of->($pages->[-1])) {
            push @problems, 'links.last of page ' . ($middle + 1) . ' opens '
                . ($from->{status} != 200 ? "a $from->{status}" : 'other rows than the last page');
        }
        else {
            push @problems, $exact_page->($from->{tree}, ($last - 1) * $limit,
                                          'links.last of page ' . ($middle + 1));
        }
    }
    return @problems;
}

# Whether a token names a row: undef if it does, else what is wrong.
# A node's compact JSON text as jansson writes it (the text a bounded
# token's digest is of): members in order, strings in UTF-8 with '"', '\\'
# and control characters escaped, numbers as sent.
sub _jansson_text {
    my ($v) = @_;
    no warnings 'recursion';
    my $t = $v->[0];
    return 'null' if $t eq 'null';
    return $v->[1] ? 'true' : 'false' if $t eq 'bool';
    return $v->[1] if $t eq 'num';
    if ($t eq 'str') {
        my $s = $v->[1];
        $s =~ s{(["\\\x00-\x1f])}{ my $c = $1; $c eq '"' ? '\\"' : $c eq '\\' ? '\\\\'
            : $c eq "\n" ? '\\n' : $c eq "\r" ? '\\r' : $c eq "\t" ? '\\t' : $c eq "\b" ? '\\b'
            : $c eq "\f" ? '\\f' : sprintf('\\u%04x', ord $c) }ge;
        return qq{"$s"};
    }
    return '[' . join(',', map { _jansson_text($_) } @{ $v->[1] }) . ']' if $t eq 'arr';
    return '{' . join(',', map { _jansson_text(['str', $_->[0]]) . ':' . _jansson_text($_->[1]) } @{ $v->[1] }) . '}';
}

# Whether a token is a bounded token ({"lo", "hi", "h"(, "n")}, for a key
# too long to carry) naming the row: its digest is the row's, base64url of
# the first 128 bits of SHA-256 of the key's JSON text, a NUL and the id.
sub bounded_token_names {
    my ($token, $row, $key_only) = @_;
    my $t = eval { JSON::PP->new->decode($token) };
    return 0 unless ref $t eq 'HASH' and defined $t->{h};
    my $text = utf8_bytes(_jansson_text(jget($row, 'key')));
    $text .= "\0" . utf8_bytes(jstr(jget($row, 'id'))) unless $key_only;
    my $digest = MIME::Base64::encode_base64url(substr(Digest::SHA::sha256($text), 0, 16));
    return $t->{h} eq $digest;
}

sub _token_names {
    my ($token, $row, $key_only) = @_;
    return 'is missing' unless defined $token;
    return 'names no row' unless $row;
    return undef if $token =~ /^\{/ and $token !~ /^\{"g":/
                    and bounded_token_names($token, $row, $key_only);
    my ($key, $id) = token_parts($token, $key_only);
    return "is not a token: " . _short($token) unless $key;
    return "has a docid: " . _short($token) if $key_only and defined $id;
    return "has no docid: " . _short($token) if !$key_only and !defined $id;
    my $want_key = jsig(jget($row, 'key'));
    return "names key " . _short(jsig($key)) . ", the row's is " . _short($want_key) if jsig($key) ne $want_key;
    my $row_id = jstr(jget($row, 'id'));
    return "names id $id, the row's is " . ($row_id // 'none') if !$key_only and $id ne ($row_id // '');
    return undef;
}

# --- backends directly ----------------------------------------------------------


sub _double_auth {
    return 'Basic ' . MIME::Base64::encode_base64(
        ($ENV{COUCHPAGE_DOUBLE_USER} // 'admin') . ':'
        . ($ENV{COUCHPAGE_DOUBLE_PASSWORD} // 'double-admin-secret'), '');
}

# A request to the CouchDB view double with a body of raw JSON text (a
# character string, sent as UTF-8, noncharacters included; for documents whose big numbers must keep
# their digits): (status, body bytes).
sub double_raw {
    my ($method, $path, $body) = @_;
    my $res = $HTTP->request($method, double_url() . $path, {
        headers => { Authorization => _double_auth(), 'Content-Type' => 'application/json',
                     Accept => 'application/json' },
        defined $body ? (content => utf8_bytes($body)) : (),
    });
    return ($res->{status}, $res->{content});
}

# The same to the paging backend (COUCHPAGE_BACKEND: pouchdb-server, which
# needs no credentials, or a real CouchDB, as its admin).
sub backend_raw {
    my ($method, $path, $body) = @_;
    my $res = $HTTP->request($method, backend_url() . $path, {
        headers => { backend_auth(), 'Content-Type' => 'application/json', Accept => 'application/json' },
        defined $body ? (content => utf8_bytes($body)) : (),
    });
    return ($res->{status}, $res->{content});
}

# Whether COUCHPAGE_DOUBLE is the CouchDB view double (t/double/), and not a
# real CouchDB someone pointed the suite at: emitRaw, the request log and
# the fault switches exist only in the double.
sub backend_is_double {
    return backend_kind(double_url()) eq 'double';
}

# Creates database DB (replacing one of that name) through CouchDB's own
# API, so that it works on the double and on a real CouchDB alike:
#   couch_load('db', docs => [...], views => { v => { map => ..., reduce => ... } },
#              partitioned => 1, q => 1)
# Documents are hashes, or JSON text (exact big numbers, member order). The
# design document is _design/d.
sub couch_load {
    my ($db, %spec) = @_;
    my $json = JSON::PP->new->canonical->allow_nonref;
    double_raw(DELETE => "/$db");
    my @params = (($spec{partitioned} ? 'partitioned=true' : ()), ($spec{q} ? "q=$spec{q}" : ()));
    my ($status, $body) = double_raw(PUT => "/$db" . (@params ? '?' . join('&', @params) : ''));
    die "creating $db failed: $status $body\n" unless $status == 201 || $status == 202;
    if ($spec{views}) {
        ($status, $body) = double_raw(PUT => "/$db/_design/d", $json->encode({ views => $spec{views} }));
        die "the design document of $db: $status $body\n" unless $status == 201 || $status == 202;
    }
    my @docs = map { ref $_ ? $json->encode($_) : $_ } @{ $spec{docs} || [] };
    for (my $i = 0; $i < @docs; $i += 2000) {
        my $last = $i + 1999 < $#docs ? $i + 1999 : $#docs;
        ($status, $body) = double_raw(POST => "/$db/_bulk_docs", '{"docs":[' . join(',', @docs[$i .. $last]) . ']}');
        die "loading $db failed: $status $body\n" unless $status == 201 || $status == 202;
        my $results = eval { JSON::PP->new->utf8->decode($body) } || [];
        my @failed = grep { !$_->{ok} } @$results;
        die "loading $db: " . scalar(@failed) . " documents refused: " . JSON::PP->new->encode($failed[0]) . "\n"
            if @failed;
    }
}

# A view's query string from [name, value] pairs, values encoded.
sub view_query {
    my ($path, @args) = @_;
    return _query($path, @args);
}

sub _view {
    my ($getter, $path, @args) = @_;
    my ($status, $raw) = $getter->(GET => view_query($path, @args));
    die "GET $path answered $status: $raw\n" unless $status == 200;
    my $tree = jparse($raw, bytes => 1);
    my $rows = jget($tree, 'rows');
    return {
        raw => $raw, tree => $tree, items => $rows->[1],
        rows => [ map { row_sig($_) } @{ $rows->[1] } ],
        total_rows => jnum(jget($tree, 'total_rows')), offset => jnum(jget($tree, 'offset')),
    };
}

# The view as the double answers it (the oracle): { rows => [signatures],
# items => [row nodes], total_rows, offset, raw }.
#   double_view('/db/_design/d/_view/v', reduce => 'false', descending => 'true')
sub double_view { return _view(\&double_raw, @_) }

# The same from the paging backend (COUCHPAGE_BACKEND).
sub backend_view { return _view(\&backend_raw, @_) }

1;
