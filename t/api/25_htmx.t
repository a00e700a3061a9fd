# SPDX-License-Identifier: Apache-2.0
# htmx's conventions on the module's side, and what couchpage.js reads from
# the fragment (issue 27, items 1 and 2), over HTTP:
#  - HX-Request: true gets the HTML fragment whatever Accept says, where the
#    format is negotiated (CouchPageFormat auto, no ?format=); a fixed format
#    and ?format= still win; every negotiated answer says Vary: Accept,
#    HX-Request, and mod_cache keeps the htmx fragment and the JSON of one
#    URL apart;
#  - the fragment's links are real URLs: an htmx answer's Next, opened
#    afresh, is the next page; the htmx example (conf/couchpage-htmx.conf,
#    htdocs/htmx/) links to its own page and serves the pinned htmx itself;
#  - the fragment carries couchpage.js's words: data-couchpage-status
#    ("Page 1, 1–5 of 11", CouchPageText page and of) and
#    data-couchpage-more-label (CouchPageText more), escaped;
#  - couchpage.js is served at the Alias of debian/couchpage.conf, and
#    docs/pages.md gives its size.
use strict;
use warnings;
use utf8;

use Apache::Test qw(-withtestmore);
use Apache::TestRequest ();
use Encode qw(decode_utf8);
use File::Spec::Functions qw(catfile);
use CouchPageTest qw(with_args double_load decode_json_or_undef backend_kind);

plan tests => 34;
binmode Test::More->builder->$_, ':encoding(UTF-8)' for qw(output failure_output todo_output);

my $vars = Apache::Test::vars();

sub get { return Apache::TestRequest::GET(@_) }
sub body { return decode_utf8($_[0]->content // '') }
sub vary_has {
    my ($res, $name) = @_;
    return scalar grep { lc $_ eq lc $name } map { s/^\s+|\s+$//gr } split /,/, $res->header('Vary') // '';
}
# The items' texts and the rel=next link of an HTML fragment.
sub items_of { return [ body($_[0]) =~ m{<li class="couchpage-item">(.*?)</li>}g ] }
sub next_of {
    my ($html) = @_;
    my ($href) = $html =~ m{<a class="couchpage-next" rel="next" href="([^"]+)"};
    return defined $href ? $href =~ s/&amp;/&/gr : undef;
}

# --- HX-Request: true gets the fragment ------------------------------------------
my $htmx = get('/bands/', Accept => 'application/json', 'HX-Request' => 'true');
is($htmx->code, 200, 'HX-Request: true, Accept: application/json: 200');
like($htmx->header('Content-Type') // '', qr{^text/html}, '... the HTML fragment, not JSON');
like(body($htmx), qr{^<div class="couchpage"}, '... a <div class="couchpage">');
ok(vary_has($htmx, 'Accept') && vary_has($htmx, 'HX-Request'), '... Vary: Accept, HX-Request');
is_deeply(items_of($htmx), ['Biffy Clyro', 'Foo Fighters', 'Future of the Left', 'Helmet', 'Kerub'],
          '... the first page');

my $json = get('/bands/', Accept => 'application/json');
like($json->header('Content-Type') // '', qr{^application/json}, 'without HX-Request: JSON');
ok(vary_has($json, 'Accept') && vary_has($json, 'HX-Request'), '... and Vary: Accept, HX-Request too');
my $star = get('/bands/', Accept => '*/*', 'HX-Request' => 'true');
like($star->header('Content-Type') // '', qr{^text/html}, 'HX-Request: true, Accept: */* (htmx\'s fetch): HTML');
my $no = get('/bands/', Accept => 'application/json', 'HX-Request' => 'false');
like($no->header('Content-Type') // '', qr{^application/json}, 'HX-Request: false: JSON');
my $upper = get('/bands/', Accept => 'application/json', 'HX-Request' => 'TRUE');
like($upper->header('Content-Type') // '', qr{^text/html}, 'HX-Request: TRUE: HTML (any case)');
my $asked = get('/bands/?format=json', 'HX-Request' => 'true');
like($asked->header('Content-Type') // '', qr{^application/json}, '?format=json wins over HX-Request');
ok(!vary_has($asked, 'HX-Request'), '... and is not negotiated: no Vary: HX-Request');
my $fixed = get('/json/bands/', 'HX-Request' => 'true');
like($fixed->header('Content-Type') // '', qr{^application/json}, 'CouchPageFormat json wins over HX-Request');
my $error = get('/bands/?start=%5B', Accept => 'application/json', 'HX-Request' => 'true');
is($error->code, 400, 'a bad token with HX-Request: 400');
like(body($error), qr{^<div class="couchpage couchpage-error">}, '... as the HTML error htmx can swap in');

# --- links stay real URLs --------------------------------------------------------
my $next = next_of(body($htmx));
like($next // '', qr{^/bands/\?start=}, "the htmx fragment's Next is a URL of the location: $next");
my $fresh = get($next, Accept => 'text/html');
is_deeply(items_of($fresh), ['Nirvana', 'Perfect Circle', 'Queens of the Stone Age', 'Silverchair', 'Tenacious D'],
          '... which, opened afresh by a browser, is the next page');
my $fresh_htmx = get($next, Accept => 'application/json', 'HX-Request' => 'true');
is(body($fresh_htmx), body($fresh), '... the same fragment htmx gets for it');

# --- mod_cache keeps them apart (CacheEnable socache /cache/kept/) ----------------
double_load('cache', [ map { { _id => sprintf('doc%02d', $_), n => $_ } } 0 .. 9 ],
            { v => { map => 'function (doc) { emit(doc.n, null); }' } });
my $kept = '/cache/kept/?limit=1';
my $h1 = get($kept, Accept => 'application/json', 'HX-Request' => 'true');
my $j1 = get($kept, Accept => 'application/json');
my $h2 = get($kept, Accept => 'application/json', 'HX-Request' => 'true');
like($h1->header('Content-Type') // '', qr{^text/html}, 'mod_cache: the htmx request gets HTML');
like($j1->header('Content-Type') // '', qr{^application/json}, '... the JSON request after it JSON, not the kept HTML');
ok(ref decode_json_or_undef($j1->content) eq 'HASH', '... a JSON page');
like($h2->header('Content-Type') // '', qr{^text/html}, '... and the htmx request again HTML');
like($h2->header('X-Cache') // '', qr/^HIT/, '... kept by mod_cache as its own variant');

# --- the htmx example: its page, its links, htmx served here ----------------------
my $page = get('/htmx/');
is($page->code, 200, 'the htmx example page (htdocs/htmx/)');
like(body($page), qr{<div hx-boost="true" hx-target="this" hx-select="\.couchpage"}, '... the hx- attributes of conf/couchpage-htmx.conf');
my $page_next = next_of(body($page));
like($page_next // '', qr{^/htmx/(index\.shtml)?\?start=}, "... its fragment's Next is the page itself: $page_next");
my $page2 = get($page_next, 'HX-Request' => 'true', 'HX-Boosted' => 'true', Accept => '*/*');
like(body($page2), qr{<!doctype html>.*<li class="couchpage-item">Nirvana</li>}s,
     '... htmx gets the whole page of the next rows, hx-select takes the fragment from it');
my $lib = get('/vendor/htmx.min.js');
is($lib->code, 200, 'htmx is served by this server (/vendor/htmx.min.js)');
my $pinned = do {
    my $pkg = catfile($vars->{top_dir}, 'embedded', 'package.json');
    open my $fh, '<', $pkg or die "$pkg: $!";
    local $/;
    (<$fh> =~ /"htmx\.org":\s*"([^"]+)"/)[0];
};
like($lib->content, qr/version:"\Q$pinned\E"/, "... the version embedded/package.json pins ($pinned)");

# --- couchpage.js's words on the fragment ------------------------------------------
my $de = get('/fragments/bands-de/');
like(body($de), qr{^<div class="couchpage" data-couchpage-status="Seite 1, 1–5 von 11" data-couchpage-more-label="Mehr &lt;laden&gt;">},
     'the fragment carries the announcement (CouchPageText page, of) and the Load more label (more), escaped');
# page 2: CouchDB's offsets number it; pouchdb-server's do not (its later
# pages are relative), and then there is nothing to announce but the items
my $de2 = get('/fragments/bands-de/?' . ($next =~ s/^[^?]*\?//r));
my ($status2) = body($de2) =~ /^<div class="couchpage"( data-couchpage-status="[^"]*")?/;
is($status2 // '', backend_kind() eq 'couchdb' ? ' data-couchpage-status="Seite 2, 6–10 von 11"' : '',
   'page 2 says "Seite 2, 6–10 von 11" where the backend tells its position (' . backend_kind() . ')');
my $script = get('/couchpage/couchpage.js');
is($script->code, 200, 'couchpage.js at the Alias of debian/couchpage.conf');
my $src = catfile($vars->{top_dir}, 'conf', 'demo-htdocs', 'couchpage.js');
is(length($script->content), -s $src, '... the shipped file');
my $pages_md = do {
    my $md = catfile($vars->{top_dir}, 'docs', 'pages.md');
    open my $fh, '<:encoding(UTF-8)', $md or die "$md: $!";
    local $/;
    <$fh>;
};
my ($said) = $pages_md =~ /couchpage\.js`: ([\d,]+) bytes as\s+shipped/;
is($said =~ tr/,//dr, -s $src, "docs/pages.md gives its size: $said bytes");
