# SPDX-License-Identifier: Apache-2.0
# Large and deep values shown by fields (issue 37, point 3): an item
# template, CouchPageItem and its link, and CouchPageFields on documents
# holding an array of 100,000 numbers, an object of 20,000 members and
# values nested five levels deep. A field's text is its JSON as jansson
# writes it, now written from the value's bytes: every function's exact
# markup, the whole document's text byte for byte as the backend sent it,
# and values deeper than the members the reader records found in their
# container's bytes.
use strict;
use warnings;
use utf8;

use Apache::Test qw(-withtestmore);
use Apache::TestRequest ();
use Encode qw(decode_utf8 encode_utf8);
use HTTP::Tiny ();
use JSON::PP ();
use MIME::Base64 ();
use URI::Escape qw(uri_escape_utf8);
use CouchPageTest qw(double_load double_url);
use CouchPageHTML qw(html_escape);

my $JSON = JSON::PP->new->utf8->canonical;
my $FIREFOX = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

my @list = map { $_ * 3 } 0 .. 99_999;
my %map = map { (sprintf('m%05d', $_) => $_) } 0 .. 19_999;
my $deep = { a => { b => { c => { d => { e => [1, "x\"<y>", JSON::PP::true, undef, 2.5] } } } } };
my @DOCS = (
    { _id => 'd1', n => 1, title => 'One <b>', list => \@list, map => \%map, deep => $deep,
      esc => "tab\there \"q\" \x{e9}" },
    { _id => 'd2', n => 2, title => 'Two' },
    { _id => 'd3', n => 3, list => [], map => {}, deep => 'not an object' },
);

# HTML text as the module escapes it, and percent-encoding
sub h { html_escape(@_) }
sub u { uri_escape_utf8($_[0], '^A-Za-z0-9\-._~') }

# The members' compact JSON, in the order the double keeps them (its
# JSON::PP request is canonical: names sorted)
my $list_text = '[' . join(',', @list) . ']';
my $map_text = '{' . join(',', map { sprintf('"m%05d":%d', $_, $_) } 0 .. 19_999) . '}';
my $e_text = '[1,"x\"<y>",true,null,2.5]';
my $c_text = qq({"d":{"e":$e_text}});

# A document as the double sends it: its bytes, the whole document's text
sub raw_doc {
    my ($id) = @_;
    my $auth = MIME::Base64::encode_base64(
        ($ENV{COUCHPAGE_DOUBLE_USER} // 'admin') . ':'
        . ($ENV{COUCHPAGE_DOUBLE_PASSWORD} // 'double-admin-secret'), '');
    my $res = HTTP::Tiny->new(timeout => 60)->get(double_url() . "/bigv/$id",
        { headers => { Authorization => "Basic $auth", Accept => 'application/json' } });
    die "GET /bigv/$id from the double: $res->{status}\n" unless $res->{status} == 200;
    (my $text = decode_utf8($res->{content})) =~ s/\n\z//;
    return $text;
}

# Where two texts part, with some of each around it
sub first_difference {
    my ($got, $want) = @_;
    my ($g, $w) = map { encode_utf8($_) } $got, $want;
    my $i = 0;
    $i += 1024 while $i + 1024 <= length($g) && substr($g, $i, 1024) eq substr($w, $i, 1024);
    $i++ while $i < length($g) && $i < length($w) && substr($g, $i, 1) eq substr($w, $i, 1);
    my $from = $i > 60 ? $i - 60 : 0;
    return "at byte $i: got '" . substr($g, $from, 160) . "', want '" . substr($w, $from, 160) . "'";
}

sub items {
    my ($path) = @_;
    my $res = Apache::TestRequest::GET($path, Accept => $FIREFOX);
    return ($res, [ map { decode_utf8($_) } $res->content =~ m{<li class="couchpage-item">(.*?)</li>\n}gs ]);
}

plan tests => 3 + 3 + 3 + 6;

double_load('bigv', \@DOCS, { v => { map => 'function(doc){ emit(doc.n, null); }' } });

# --- 1. an item template ------------------------------------------------------
{
    my ($res, $items) = items('/bigv-tmpl/');
    is($res->code, 200, '/bigv-tmpl/: 200');
    my @want = (
        'L=' . h($list_text) . '|M=' . h($map_text) . '|E=' . h($e_text) . '|X=' . h('x"<y>')
        . '|I=299997|K=19999|U=' . u($c_text) . '|N=|D=|S=' . h("tab\there \"q\" \x{e9}")
        . '|W=' . h(raw_doc('d1')),
        'L=|M=|E=|X=|I=|K=|U=|N=|D=|S=|W=' . h(raw_doc('d2')),
        'L=[]|M={}|E=|X=|I=|K=|U=|N=|D=|S=|W=' . h(raw_doc('d3')),
    );
    is(scalar @$items, 3, 'one item per document');
    my @bad = grep { ($items->[$_] // '') ne $want[$_] } 0 .. 2;
    is_deeply(\@bad, [], 'every function shows the value as its JSON, whole documents byte for byte')
        or diag(join("\n", map { "item $_: " . first_difference($items->[$_] // '', $want[$_]) } @bad));
}

# --- 2. CouchPageItem and its link ---------------------------------------------
{
    my ($res, $items) = items('/bigv-item/');
    is($res->code, 200, '/bigv-item/: 200');
    is($items->[0], '<a href="/x/' . h(u(qq({"e":$e_text}))) . '/6">' . h($c_text) . '</a>',
       'an object deep in a document: the item and its link, from its bytes');
    is($items->[2], '<a href="/x//">' . '</a>', 'a document without them: empty');
}

# --- 3. CouchPageFields ---------------------------------------------------------
{
    my $res = Apache::TestRequest::GET('/bigv-fields/', Accept => 'application/json');
    is($res->code, 200, '/bigv-fields/: 200');
    my $page = eval { $JSON->decode($res->content) } || {};
    my @docs = map { $_->{doc} } @{ $page->{items} || [] };
    is_deeply($docs[0], { title => 'One <b>', list => \@list, deep => $deep },
              'the members named, whole');
    is_deeply($docs[2], { list => [], deep => 'not an object' }, 'and only those a document has');
}

# --- 4. what the child holds: a page of the large document, many times ----------
# The HTML and JSON pages of a 2 MB answer, twenty times: each answered
# whole, the same each time.
{
    my %first;
    my %same = (tmpl => 0, fields => 0, item => 0);
    for my $round (1 .. 20) {
        for my $kind (sort keys %same) {
            my $res = Apache::TestRequest::GET("/bigv-$kind/",
                Accept => $kind eq 'fields' ? 'application/json' : $FIREFOX);
            $first{$kind} //= $res->content;
            $same{$kind}++ if $res->code == 200 && $res->content eq $first{$kind};
        }
    }
    is($same{$_}, 20, "/bigv-$_/ twenty times: the same page each time") for sort keys %same;
    cmp_ok(length($first{tmpl}), '>', 2 * length($list_text), 'the template page holds the values');
    cmp_ok(length($first{fields}), '>', length($list_text), 'the fields page holds the list');
    cmp_ok(length($first{item}), '<', 4096, 'the item page shows only the deep object');
}
