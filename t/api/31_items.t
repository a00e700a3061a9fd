# SPDX-License-Identifier: Apache-2.0
# Items a person reads (issue 38, items 6 and 7): a _find location's default
# HTML item is the document's title (a non-empty string CouchPageFields
# lets show), else its sort values as text joined with ", ", never their
# JSON array, while an explicit CouchPageItem still wins and the JSON page
# is unchanged; and %{couchpage_join:FIELD[]SEPARATOR} joins an array's
# elements, each escaped as couchpage_html shows it, with the template's
# separator between them, a value that is no array shown as couchpage_html
# shows it, its faults refused by apachectl -t. The file loads its own
# database, itemstest: on pouchdb-server in the first tier, on a real
# CouchDB in the real tier, where numbered pages read the index's view
# with whole documents, which CouchPageFields still bounds.
use strict;
use warnings;
use utf8;

use Apache::Test qw(-withtestmore);
use Apache::TestRequest ();
use Encode qw(decode_utf8);
use JSON::PP ();
use CouchPageTest qw(get_json backend_request backend_open_db httpd_config_test);

my $JSON = JSON::PP->new->utf8->canonical;
plan tests => 9 + 4 + 2 + 2 + 1 + 5;

# --- apachectl -t -------------------------------------------------------------
my $FIND = 'http://127.0.0.1:5984/db/_find';
for my $case (
    ['%{couchpage_join:doc.tags[], }', undef],
    ['%{couchpage_join:doc.tags[]}', undef],
    ['<p>%{couchpage_join:key[] | }</p>', undef],
    ['%{couchpage_join:doc.tags, }',
     qr{'%\{couchpage_join:doc\.tags, \}' is not a valid template: %\{couchpage_join:doc\.tags, \}: 'doc\.tags, ' has no \[\]: write the array's path, \[\] and the separator, as in doc\.tags\[\], }],
    ['%{couchpage_join:tags[], }',
     qr{%\{couchpage_join:tags\[\], \}: the field 'tags' must start with key, value, id or doc}],
    ['%{couchpage_join:doc.tags[x][], }', qr{the field 'doc\.tags\[x\]': an index must}],
    ['%{couchpage_join:%{REQUEST_URI}}', qr{%\{couchpage_join:FIELD\[\]SEPARATOR\} takes a field path written out \(such as doc\.tags\[\], \)}],
    # an array CouchPageFields leaves out, as for the other functions
    ['%{couchpage_join:doc.tags[], }',
     qr{CouchPageItemTemplate reads doc\.tags, a member CouchPageFields leaves out}, 'CouchPageFields title'],
    ['%{couchpage_join:doc.tags[], }', undef, 'CouchPageFields title tags'],
) {
    my ($template, $expect, $more) = @$case;
    my ($rc, $out) = httpd_config_test(qq{CouchPageView $FIND\nCouchPageSort n\nCouchPageItemTemplate "$template"\n}
                                       . ($more // ''));
    if (defined $expect) {
        ok($rc != 0 && $out =~ $expect, "refused: $template") or diag($out);
    }
    else {
        ok($rc == 0 && $out =~ /Syntax OK/, "taken: $template") or diag($out);
    }
}

# --- the data -----------------------------------------------------------------
sub must {
    my ($what, $status, $body) = @_;
    die "$what: $status " . $JSON->encode($body // {}) . "\n" unless $status =~ /^20[012]$/;
    return $body;
}

backend_request(DELETE => '/itemstest');
backend_open_db('itemstest');
my @DOCS = (
    { _id => 'n1', type => 'note', date => '2024-06-21', title => 'First <note> & "more"',
      tags => ['c', 'json'] },
    { _id => 'n2', type => 'note', date => '2024-06-22', tags => [] },
    { _id => 'n3', type => 'note', date => '2024-06-23', title => '', tags => ['<script>', 7, 0.1, JSON::PP::true, undef] },
    { _id => 'n4', type => 'memo', date => '2024-06-24', title => ['not', 'a string'],
      tags => [['x', 1], { k => 'v<' }] },
    { _id => 'n5', type => 'memo', date => '2024-06-25', title => "Caf\x{e9} \x{1f680}", tags => 'one' },
);
must('loading itemstest', backend_request(POST => '/itemstest/_bulk_docs', { docs => \@DOCS }));
must('index by-date', backend_request(POST => '/itemstest/_index',
    { index => { fields => ['date'] }, ddoc => 'by-date', name => 'by-date', type => 'json' }));
must('index by-type-date', backend_request(POST => '/itemstest/_index',
    { index => { fields => ['type', 'date'] }, ddoc => 'by-type-date', name => 'by-type-date',
      type => 'json' }));

# The inner HTML of each item of a page, as sent (decoded UTF-8).
sub items {
    my ($path, @headers) = @_;
    my $res = Apache::TestRequest::GET($path, @headers);
    die "$path: " . $res->code . ' ' . substr($res->content, 0, 300) . "\n" unless $res->code == 200;
    return decode_utf8($res->content) =~ m{<li class="couchpage-item">(.*?)</li>\n}g;
}

# --- the default item of a _find location -------------------------------------
my @TITLED = ('First &lt;note&gt; &amp; &quot;more&quot;', '2024-06-22', '2024-06-23', '2024-06-24',
              "Caf\x{e9} \x{1f680}");
is_deeply([items('/items/find/')], \@TITLED,
          'the title when it is a non-empty string, else the sort value as text');
is_deeply([items('/items/find-two/')],
          ['memo, 2024-06-24', "Caf\x{e9} \x{1f680}", 'First &lt;note&gt; &amp; &quot;more&quot;',
           'note, 2024-06-22', 'note, 2024-06-23'], 'several sort values joined with ", "');
is_deeply([items('/items/find-fields/')], [map { "2024-06-2$_" } 1 .. 5],
          'CouchPageFields without title: the sort values');
is_deeply([items('/items/find-item/', Accept => 'text/html')],
          [map { "[&quot;2024-06-2$_&quot;]" } 1 .. 5], 'an explicit CouchPageItem still wins');
{
    my ($status, $page) = get_json('/items/find-item/');
    is_deeply([map { $_->{_id} } @{ $page->{items} // [] }], [map { "n$_" } 1 .. 5],
              'the JSON page: the documents, as before');
    ok(!grep({ exists $_->{key} } @{ $page->{items} // [] }), 'no key in the JSON items');
}
# numbered pages, from the index's view and its whole documents on CouchDB
# (pouchdb-server's indexes are no views: its pages are _find's there)
is_deeply([items('/items/find-numbered/')], \@TITLED, 'numbered: the same items');
is_deeply([items('/items/find-numbered-fields/')], [map { "2024-06-2$_" } 1 .. 5],
          'numbered: CouchPageFields still keeps the title out');

# --- %{couchpage_join:...} -------------------------------------------------------
my @joined = items('/items/join/');
my @want = (
    '<span>c, json</span> <i>2024-06-21</i> <u>First &lt;note&gt; &amp; &quot;more&quot;</u> '
        . '<ul><li>c</li><li>json</li></ul>',
    '<span></span> <i>2024-06-22</i> <u></u> <ul><li></li></ul>',
    '<span>&lt;script&gt;, 7, 0.1, true, null</span> <i>2024-06-23</i> <u></u> '
        . '<ul><li>&lt;script&gt;</li><li>7</li><li>0.1</li><li>true</li><li>null</li></ul>',
    '<span>[&quot;x&quot;,1], {&quot;k&quot;:&quot;v&lt;&quot;}</span> <i>2024-06-24</i> '
        . '<u>not|a string</u> <ul><li>[&quot;x&quot;,1]</li><li>{&quot;k&quot;:&quot;v&lt;&quot;}</li></ul>',
    "<span>one</span> <i>2024-06-25</i> <u>Caf\x{e9} \x{1f680}</u> <ul><li>one</li></ul>",
);
is(scalar @joined, 5, 'five items joined');
is($joined[$_], $want[$_], "joined: $DOCS[$_]{_id}") for 0 .. 4;
