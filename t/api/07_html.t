# SPDX-License-Identifier: Apache-2.0
# The HTML fragment (issue 4): format negotiation, the fragment's structure
# and classes, numbered page links, RFC 8288 Link headers, hostile keys shown
# as text, and the fragment included into a page by mod_include. Every
# fragment and page is parsed with parse5 (t/browser/html-check.js), and
# must parse without a single parse error.
use strict;
use warnings;
use utf8;

use Apache::Test qw(-withtestmore);
use Apache::TestRequest ();
use HTTP::Tiny ();
use JSON::PP ();
use URI::Escape qw(uri_escape_utf8);
use CouchPageTest qw(get_json with_args backend_url backend_kind backend_request backend_open_db);
use CouchPageHTML qw(parse_html elements by_class by_tag has_class text_of child_elements
                     link_header);

my @ORDER = ('Biffy Clyro', 'Foo Fighters', 'Future of the Left', 'Helmet', 'Kerub',
             'Nirvana', 'Perfect Circle', 'Queens of the Stone Age', 'Silverchair',
             'Tenacious D', 'Tool');
my @PAGE1 = @ORDER[0 .. 4];
my @PAGE2 = @ORDER[5 .. 9];
my @PAGE3 = ('Tool');

# Browsers' Accept headers (Firefox, Chromium).
my $FIREFOX = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
my $CHROMIUM = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,'
             . 'image/webp,image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7';

# The hostile keys (and ids) of the database 'evil'.
my @EVIL = (
    { _id => 'script', name => '<script>alert(1)</script>' },
    { _id => 'quote"id', name => '" onmouseover=alert(1) x="' },
    { _id => 'amp', name => '&amp;' },
    { _id => "img'><img src=x onerror=alert(2)>", name => "'><img src=x onerror=alert(1)>" },
    { _id => 'unicode', name => "Mot\x{f6}rhead \x{2013} \x{6771}\x{4eac} \x{2603} \x{1F600}" },
    { _id => 'url', name => 'a/b?c=d&e#f %41+' },
);

plan tests => 169 + 6 + 24;
# test names hold non-ASCII text (after plan, which resets Test::Builder)
binmode Test::More->builder->$_, ':encoding(UTF-8)' for qw(output failure_output todo_output);

my $JSON = JSON::PP->new->utf8->canonical;

# A real CouchDB reports a row's true offset on a page after the first (Tool
# is row 10); pouchdb-server says 0. So page numbers after the first are
# absolute on the one, relative (and the position left out) on the other.
my $http = HTTP::Tiny->new(timeout => 10);
my $backend = backend_url();
my $KIND = backend_kind();
my $ABSOLUTE = $KIND eq 'couchdb';
my $probe = $http->get("$backend/bands/_design/bands/_view/by-name?startkey=%22Tool%22&limit=1");
is($probe->{success} ? $JSON->decode($probe->{content})->{offset} : "HTTP $probe->{status}", $ABSOLUTE ? 10 : 0,
   "the backend ($KIND) reports Tool's offset as " . ($ABSOLUTE ? '10, its true offset' : '0'));

# GET: the HTTP::Response.
sub get {
    my ($path, %headers) = @_;
    return Apache::TestRequest::GET($path, %headers);
}

# GET an HTML page and parse it: (response, tree); one test: no parse errors.
sub get_html {
    my ($path, %opt) = @_;
    my $document = delete $opt{document};
    my $res = get($path, Accept => $FIREFOX, %opt);
    my ($errors, $tree) = parse_html($res->content, document => $document);
    is_deeply($errors, [], "$path parses with parse5 without errors")
        or diag($res->content);
    return ($res, $tree);
}

sub texts { [ map { text_of($_) } @_ ] }
# The page list's entries but its gaps: each <li>'s <a>, or the current
# page's <span>.
sub page_entries {
    my ($tree) = @_;
    my ($list) = by_class($tree, 'couchpage-pages');
    return () unless $list;
    return map { child_elements($_) } grep { !has_class($_, 'couchpage-gap') } child_elements($list);
}
sub items_of { texts(by_class($_[0], 'couchpage-item')) }

# The href of the first element of a class (an <a>), or undef.
sub href_of {
    my ($tree, $class) = @_;
    my ($el) = by_class($tree, $class);
    return $el && $el->{tag} eq 'a' ? $el->{attrs}{href} : undef;
}

# Percent-encoding of a link pattern's placeholder: all but A-Za-z0-9-._~.
sub pct { uri_escape_utf8($_[0], '^A-Za-z0-9\-._~') }

# --- 1. negotiation ----------------------------------------------------------
for my $case (
    [$FIREFOX, 'text/html', 'Firefox'],
    [$CHROMIUM, 'text/html', 'Chromium'],
    ['*/*', 'application/json', '*/*'],
    ['application/json', 'application/json', 'application/json'],
    ['application/json, text/html;q=0.9', 'application/json', 'JSON preferred'],
    ['text/html;q=0.5, application/json;q=0.4', 'text/html', 'HTML preferred by q'],
) {
    my ($accept, $type, $name) = @$case;
    my $res = get('/html/bands/', Accept => $accept);
    is($res->code, 200, "Accept $name: 200");
    is($res->header('Content-Type'), "$type; charset=utf-8", "Accept $name gives $type");
    like($res->header('Vary') // '', qr/\bAccept\b/, "Accept $name: negotiated, so Vary: Accept");
}
for my $case (
    ['/html/bands/?format=json', $FIREFOX, 'application/json', '?format=json overrides a browser'],
    ['/html/bands/?format=html', '*/*', 'text/html', '?format=html overrides */*'],
    ['/json/bands/', $FIREFOX, 'application/json', 'CouchPageFormat json'],
    ['/fragments/bands/', '*/*', 'text/html', 'CouchPageFormat html'],
) {
    my ($path, $accept, $type, $name) = @$case;
    my $res = get($path, Accept => $accept);
    is($res->header('Content-Type'), "$type; charset=utf-8", "$name: $type");
    is($res->header('Vary'), undef, "$name: not negotiated, no Vary");
}

# --- 2. the fragment ---------------------------------------------------------
{
    my ($res, $tree) = get_html('/html/bands/');
    is($res->header('Content-Type'), 'text/html; charset=utf-8', 'the fragment is text/html; charset=utf-8');
    my @top = child_elements($tree);
    is(scalar @top, 1, 'the fragment is one element');
    is($top[0]{tag} . '.' . ($top[0]{attrs}{class} // ''), 'div.couchpage', '... a <div class="couchpage">');
    is_deeply([map { "$_->{tag}." . ($_->{attrs}{class} // '') } child_elements($top[0])],
              ['ul.couchpage-items', 'p.couchpage-position', 'nav.couchpage-nav'],
              'it holds the items, the position and the nav, in that order');
    my @li = by_class($tree, 'couchpage-item');
    is_deeply([map { $_->{tag} } @li], [('li') x 5], 'five <li class="couchpage-item">');
    is_deeply(texts(@li), \@PAGE1, 'page 1 shows Biffy Clyro .. Kerub');
    is_deeply([map { $_->{attrs}{href} } map { by_tag($_, 'a') } @li],
              ['/band/biffy-clyro?name=Biffy%20Clyro', '/band/foo-fighters?name=Foo%20Fighters',
               '/band/future-of-the-left?name=Future%20of%20the%20Left', '/band/helmet?name=Helmet',
               '/band/kerub?name=Kerub'],
              'CouchPageItem key "/band/{id}?name={key}": each item links, placeholders percent-encoded');
    is(text_of((by_class($tree, 'couchpage-position'))[0]), '1–5 of 11', 'the position: 1–5 of 11');

    my ($nav) = by_class($tree, 'couchpage-nav');
    is($nav->{tag}, 'nav', 'the nav is a <nav>');
    is($nav->{attrs}{'aria-label'}, 'Pages', '... labelled Pages');
    is_deeply([map { "$_->{tag}." . $_->{attrs}{class} } child_elements($nav)],
              ['span.couchpage-prev couchpage-disabled', 'ol.couchpage-pages', 'a.couchpage-next',
               'form.couchpage-jump'],
              'nav: a disabled Previous, the page numbers, Next, the go-to-page form');
    my ($form) = by_class($tree, 'couchpage-jump');
    is(join(' ', map { $form->{attrs}{$_} // '-' } qw(method action)), 'get /html/bands/',
       'the form GETs the page\'s own path');
    my ($label) = by_tag($form, 'label');
    my ($input) = $label ? by_tag($label, 'input') : ();
    is(join(' ', text_of($label // {}), map { $input->{attrs}{$_} // '-' } qw(type name min max)),
       'Go to page number page 1 3', '... a number field "page" from 1 to the last page, inside its label');
    my ($button) = by_tag($form, 'button');
    is(($button->{attrs}{type} // '') . ' ' . text_of($button // {}), 'submit Go', '... a submit button, Go');
    my ($rj, $tj) = get_html('/html/bands/?page=3');
    is_deeply(items_of($tj), \@PAGE3, '... and its GET of page 3 shows page 3');
    my ($prev) = by_class($tree, 'couchpage-prev');
    is($prev->{attrs}{'aria-disabled'}, 'true', 'Previous on page 1 is aria-disabled');
    is(text_of($prev), 'Previous', '... and says Previous');
    my ($next) = by_class($tree, 'couchpage-next');
    is($next->{attrs}{rel}, 'next', 'Next is rel="next"');
    is(text_of($next), 'Next', '... and says Next');
    like($next->{attrs}{href}, qr{^/html/bands/\?start=[^&]+$}, '... and links to /html/bands/?start=TOKEN');

    my @pages = page_entries($tree);
    is_deeply(texts(@pages), ['1', '2', '3'], 'CouchPageLinks 2: pages 1, 2, 3 (absolute numbers)');
    is_deeply([map { $_->{attrs}{'aria-current'} // '-' } @pages], ['page', '-', '-'],
              'aria-current="page" on page 1 only');
    is_deeply([map { $_->{tag} } @pages], ['span', 'a', 'a'],
              'page 1, the page shown, is a <span>, no link; pages 2 and 3 are links');
    is($pages[0]{attrs}{href}, undef, '... page 1 has no href');
    is($pages[1]{attrs}{href}, $next->{attrs}{href}, 'page 2 links where Next does');
    is(link_header($res->header('Link'))->{next}, $next->{attrs}{href}, 'the Link header agrees with Next');

    # page 3 by its number link, page 2 by Next, back by Previous
    my ($r3, $t3) = get_html($pages[2]{attrs}{href});
    is_deeply(items_of($t3), \@PAGE3, 'page link 3 leads to Tool');
    my ($next3) = by_class($t3, 'couchpage-next');
    is("$next3->{tag} " . ($next3->{attrs}{'aria-disabled'} // ''), 'span true',
       'the last page: Next is a disabled <span>');
    my @p3 = page_entries($t3);
    if ($ABSOLUTE) {
        is_deeply(texts(@p3), ['1', '2', '3'], 'the last page: page numbers 1, 2, 3');
    }
    else {
        is_deeply(texts(@p3), ["\x{2212}2", "\x{2212}1", 'current'],
                  'the last page (backend offset unknown): relative numbers −2, −1, current');
    }
    is($p3[2]{attrs}{'aria-current'}, 'page', '... with aria-current="page" on the current one');
    is_deeply([map { $_->{tag} } @p3], ['a', 'a', 'span'], '... which is a <span>, the others links');
    is($p3[0]{attrs}{href}, '/html/bands/', '... the first of which leads to the first page');
    my @pos3 = map { text_of($_) } by_class($t3, 'couchpage-position');
    is_deeply(\@pos3, $ABSOLUTE ? ['11 of 11'] : [], $ABSOLUTE ? '... and the position of its one row: 11 of 11'
                                                            : '... and no position (backend offset unknown)');

    my ($r2, $t2) = get_html($next->{attrs}{href});
    is_deeply(items_of($t2), \@PAGE2, 'Next leads to page 2: Nirvana .. Tenacious D');
    my ($prev2) = by_class($t2, 'couchpage-prev');
    is("$prev2->{tag} " . ($prev2->{attrs}{rel} // ''), 'a prev', 'page 2: Previous is a link, rel="prev"');
    my ($r1, $t1) = get_html($prev2->{attrs}{href});
    is_deeply(items_of($t1), \@PAGE1, '... that leads back to page 1');
    my ($r3b, $t3b) = get_html(href_of($t2, 'couchpage-next'));
    is_deeply(items_of($t3b), \@PAGE3, "page 2's Next leads to Tool");
}

# the empty page
{
    my ($res, $tree) = get_html('/html/empty/');
    my ($empty) = by_class($tree, 'couchpage-empty');
    is($empty && "$empty->{tag}: " . text_of($empty), 'p: No items.', 'an empty page: <p class="couchpage-empty">No items.</p>');
    is(scalar by_class($tree, 'couchpage-items'), 0, '... and no list');
    is(scalar by_class($tree, 'couchpage-next'), 1, '... but the nav is there');
}

# limit and format are kept in every link
{
    my ($res, $tree) = get_html('/html/bands/?limit=3&format=html', Accept => '*/*');
    is_deeply(items_of($tree), [@ORDER[0 .. 2]], 'limit=3: three items');
    my $next = href_of($tree, 'couchpage-next');
    like($next, qr{^/html/bands/\?start=[^&]+&limit=3&format=html$}, 'Next keeps limit=3 and format=html');
    my @hrefs = map { $_->{attrs}{href} } by_tag((by_class($tree, 'couchpage-pages'))[0], 'a');
    is(scalar(grep { /[?&]limit=3(&|$)/ and /[?&]format=html(&|$)/ } @hrefs), scalar @hrefs,
       'every page link keeps limit=3 and format=html');
    my $header = link_header($res->header('Link'));
    my $last = delete $header->{last};
    is_deeply($header, { first => '/html/bands/?limit=3&format=html', next => $next },
              'the Link header: first and next, with limit and format');
    like($last, qr{^/html/bands/\?start=[^&]+&limit=3&format=html$},
         '... and last (the first page\'s position is known on any backend), with limit and format');
    my ($r2, $t2) = get_html($next, Accept => '*/*');
    is($r2->header('Content-Type'), 'text/html; charset=utf-8', 'following Next with */* stays HTML (format=html kept)');
    is_deeply(items_of($t2), [@ORDER[3 .. 5]], '... and shows the next three');
    is(href_of($t2, 'couchpage-prev'), '/html/bands/?limit=3&format=html',
       '... whose Previous (page 1: the first page, no token) keeps them too');
}

# --- 3. Link headers and JSON page links ---------------------------------------
sub keys_of { [ map { $_->{key} } @{ $_[0]{items} || [] } ] }
{
    my ($s1, $p1, $res1) = get_json('/bands/?limit=5');
    my $l1 = link_header($res1->header('Link'));
    is_deeply([sort keys %$l1], ['first', 'last', 'next'], 'JSON page 1: Link rel="first", rel="next" and rel="last", no prev');
    is($l1->{last}, $p1->{links}{last}, 'rel="last" is links.last');
    my ($s_last, $p_last) = get_json($l1->{last});
    is_deeply(keys_of($p_last), [$ORDER[10]], 'rel="last" opens the last page: 11 rows, 5 a page, its one row');
    is($l1->{first}, '/bands/?limit=5', 'rel="first" is the first page, limit kept');
    is($p1->{links}{first}, $l1->{first}, 'links.first in the JSON is the same URL');
    is($l1->{next}, $p1->{links}{next}, 'rel="next" is links.next');

    my ($s2, $p2, $res2) = get_json($l1->{next});
    is_deeply(keys_of($p2), \@PAGE2, 'following rel="next" gives page 2');
    my $l2 = link_header($res2->header('Link'));
    # CouchDB's offsets give the position on every page, so rel="last" too;
    # pouchdb-server's only on the first page (see "How it pages")
    my @last = $KIND eq 'couchdb' ? ('last') : ();
    is_deeply([sort keys %$l2], ['first', @last, 'next', 'prev'],
              "page 2: first, prev and next" . (@last ? ', and last' : ''));
    is($l2->{prev}, $p2->{links}{prev}, 'rel="prev" is links.prev');
    my ($sp, $pp) = get_json($l2->{prev});
    is_deeply(keys_of($pp), \@PAGE1, 'following rel="prev" gives page 1');
    my ($s3, $p3, $res3) = get_json($l2->{next});
    is_deeply(keys_of($p3), \@PAGE3, 'following rel="next" again gives Tool');
    my $l3 = link_header($res3->header('Link'));
    is_deeply([sort keys %$l3], ['first', @last, 'prev'],
              'the last page: first and prev, no next' . (@last ? ', and last (itself), as first is on page 1' : ''));
    # page 1's rel="last" is ?start=last, found when followed; on the last
    # page itself it is the page's own URL, as rel="first" is on page 1
    is($l3->{last}, @last ? $l2->{next} : undef,
       @last ? 'the last page\'s rel="last" is its own URL' : 'no rel="last" where the position is unknown');
    my ($sf, $pf) = get_json($l3->{first});
    is_deeply(keys_of($pf), \@PAGE1, 'following rel="first" gives page 1');

    my $html = get('/html/bands/?format=html');
    my $lh = link_header($html->header('Link'));
    is($lh->{first}, '/html/bands/?format=html', 'HTML pages have a Link header too, format kept');
}
{
    # CouchPageLinks in JSON
    my ($s1, $p1) = get_json('/json/bands/');
    is($p1->{numbering}, 'absolute', 'JSON page 1: numbering absolute');
    is_deeply([map { $_->{number} } @{ $p1->{pages} }], [1, 2, 3], 'pages 1, 2, 3');
    is_deeply([map { $_->{current} ? 1 : 0 } @{ $p1->{pages} }], [1, 0, 0], 'page 1 is current');
    is($p1->{pages}[0]{url}, $p1->{links}{first}, "page 1's url is links.first");
    is($p1->{pages}[0]{start}, undef, "page 1's start is null");
    is($p1->{pages}[1]{url}, $p1->{links}{next}, "page 2's url is links.next");
    is($p1->{pages}[1]{start}, $p1->{next}, "page 2's start is the next token");
    my ($s3, $p3) = get_json($p1->{pages}[2]{url});
    is_deeply(keys_of($p3), \@PAGE3, "page 3's url leads to Tool");
    is($p3->{numbering}, $ABSOLUTE ? 'absolute' : 'relative',
       'a later page: numbering ' . ($ABSOLUTE ? 'absolute' : 'relative (backend offset unknown)'));
    is_deeply([map { $_->{number} } @{ $p3->{pages} }], $ABSOLUTE ? [1, 2, 3] : [-2, -1, 0],
              $ABSOLUTE ? '... 1, 2, 3' : '... -2, -1, 0');
    is_deeply([map { $_->{current} ? 1 : 0 } @{ $p3->{pages} }], [0, 0, 1], '... 0 is current');
    my ($sb, $pb) = get_json($p3->{pages}[0]{url});
    is_deeply(keys_of($pb), \@PAGE1, '-2 leads back to page 1');

    my ($sl, $pl) = get_json('/json/bands/?limit=3');
    is_deeply([map { $_->{number} } @{ $pl->{pages} }], [1, 2, 3], 'limit=3: pages 1, 2, 3');
    is(scalar(grep { $_->{url} =~ /[?&]limit=3$/ } @{ $pl->{pages} }), 3, 'every page url keeps limit=3');
    my ($s2, $p2) = get_json($pl->{pages}[2]{url});
    is_deeply(keys_of($p2), [@ORDER[6 .. 8]], 'page 3 of 3-row pages: Perfect Circle .. Silverchair');
}

# --- 4. hostile keys -------------------------------------------------------------
{
    ok(eval { backend_open_db('evil'); 1 }, 'the database evil on the backend, readable by the test locations')
        or diag $@;
    my ($status) = backend_request(PUT => '/evil/_design/evil', { language => 'javascript', views => { 'by-name' =>
        { map => 'function(doc){ if (doc.name) emit(doc.name, null); }' } } });
    ok($status == 201 || $status == 409, "the design doc ($status)");
    my $written = 0;
    for my $doc (@EVIL) {
        ($status) = backend_request(PUT => '/evil/' . pct($doc->{_id}), { name => $doc->{name} });
        $written++ if $status == 201 || $status == 409;
    }
    is($written, scalar @EVIL, 'the hostile docs are in');
}
# CouchDB's order of the rows, straight from the backend.
my $view = $http->get("$backend/evil/_design/evil/_view/by-name");
my $rows = $view->{success} ? $JSON->decode($view->{content})->{rows} : [];
my @evil_names = map { $_->{key} } @$rows;
my %id_of = map { ($_->{key} => $_->{id}) } @$rows;
is_deeply([sort @evil_names], [sort map { $_->{name} } @EVIL], 'the backend view has every hostile name');

{
    my ($res, $tree) = get_html('/evil/');
    my $body = $res->content;
    is_deeply(items_of($tree), \@evil_names, 'every hostile key is shown, as its text, in view order');
    unlike($body, qr/<script/i, 'no <script in the fragment');
    unlike($body, qr/<img/i, 'no <img in the fragment');
    like($body, qr/&quot; onmouseover=alert\(1\) x=&quot;/, 'the " of a key is escaped as &quot;');
    like($body, qr/>&amp;amp;</, 'the key &amp; is shown as &amp;amp; (text, not an entity)');
    is_deeply([sort map { $_->{tag} } elements($tree)],
              # the position's two row numbers are spans too
              [sort('div', 'ul', (('li', 'a') x @EVIL), 'p', 'span', 'span', 'nav', 'span', 'ol', 'li', 'span', 'span')],
              'the parser sees exactly the fragment\'s own elements');
    is_deeply([grep { /^on/i } map { keys %{ $_->{attrs} } } elements($tree)], [],
              'no on* attribute anywhere');
    my @li = by_class($tree, 'couchpage-item');
    is_deeply([map { join ',', map { $_->{tag} . ':' . join('|', sort keys %{ $_->{attrs} }) } child_elements($_) } @li],
              [('a:href') x @EVIL], 'each item holds one <a href> and nothing else');
    is_deeply([map { $_->{attrs}{href} } map { by_tag($_, 'a') } @li],
              [map { '/evil/' . pct($_) . '?id=' . pct($id_of{$_}) } @evil_names],
              'link patterns percent-encode every hostile key and id');
    my ($uni) = grep { /Mot/ } @{ items_of($tree) };
    is($uni, "Mot\x{f6}rhead \x{2013} \x{6771}\x{4eac} \x{2603} \x{1F600}", 'the unicode key is shown as itself');

    my ($sj, $json, $jres) = get_json('/evil-json/');
    is_deeply(keys_of($json), \@evil_names, 'the JSON has every hostile key as it is');
    unlike($jres->content, qr/[<>&]/, 'and holds no <, > or & outside escapes');
}
{
    # documents: CouchPageItem doc.name with a link on it, walking 2 a page
    my (@seen, $pages);
    my $path = '/evil-docs/';
    my $all_clean = 1;
    while (defined $path and ++$pages <= 10) {
        my $res = get($path, Accept => $FIREFOX);
        my ($errors, $tree) = parse_html($res->content);
        $all_clean = 0 if @$errors or $res->content =~ /<script|<img/i;
        for my $li (by_class($tree, 'couchpage-item')) {
            my ($a) = by_tag($li, 'a');
            push @seen, [text_of($li), $a ? $a->{attrs}{href} : undef];
        }
        my $next = href_of($tree, 'couchpage-next');
        is(link_header($res->header('Link'))->{next}, $next, "evil-docs page $pages: Link next is the nav's Next")
            if $pages <= 3;
        $path = $next;
    }
    ok($all_clean, 'every page of hostile documents parses cleanly, without markup from the data');
    is_deeply([map { $_->[0] } @seen], \@evil_names, 'walking Next through tokens of hostile keys shows every row once');
    is_deeply([map { $_->[1] } @seen], [map { '/doc/' . pct($_) } @evil_names],
              'CouchPageItem doc.name "/doc/{doc.name}": links to the encoded document field');
}
{
    # hostile keys included into a page
    my ($res, $tree) = get_html('/evil.shtml', document => 1);
    is_deeply(items_of($tree), \@evil_names, 'included: every hostile key shown as text');
    unlike($res->content, qr/<script|<img/i, 'included: no markup from the data');
    # a client's ?format=json does not reach an include, nor a fixed format
    my ($json, $jtree) = get_html('/evil.shtml?format=json', document => 1);
    unlike($json->content, qr/<script|<img/i, 'included with ?format=json: still no markup from the data');
    is_deeply(items_of($jtree), \@evil_names, 'included with ?format=json: still the HTML fragment');
    my $fixed = get('/fragments/bands/?format=json');
    is($fixed->header('Content-Type'), 'text/html; charset=utf-8',
       '?format=json does not override CouchPageFormat html');
    # errors inside an included page are escaped HTML, not JSON
    my ($err, $etree) = get_html('/evil.shtml?start=%3Cscript%3Ealert(1)%3C/script%3E', document => 1);
    unlike($err->content, qr/<script/i, 'an error inside an include echoes no markup');
    my ($reason) = by_class($etree, 'couchpage-error-reason');
    is($reason ? text_of($reason) : '', 'The list could not be shown.',
       "it shows the error word (CouchPageText error), as text in the page; why is the log's");
}

# --- 5. numbers past a thousand, the page one is on --------------------------------
# 'many': 1,050 rows keyed 0..1049, one a page; the first page's position is
# known on any backend, and so is the Last page's (read back from the end).
{
    ok(eval { backend_open_db('many'); 1 }, 'the database many on the backend') or diag $@;
    my ($status) = backend_request(PUT => '/many/_design/many', { language => 'javascript', views => { 'by-n' =>
        { map => 'function(doc){ emit(doc.n, null); }' } } });
    ok($status == 201 || $status == 409, "its design doc ($status)");
    my ($have, $info) = backend_request(GET => '/many');
    if (($info->{doc_count} // 0) < 1051) {
        ($status) = backend_request(POST => '/many/_bulk_docs',
                                    { docs => [ map { { _id => sprintf('m%04d', $_), n => $_ } } 0 .. 1049 ] });
    }
    ($status, $info) = backend_request(GET => '/many/_design/many/_view/by-n?limit=0');
    is($info->{total_rows}, 1050, 'its view has 1,050 rows');
}
{
    my ($res, $tree) = get_html('/html/many/');
    is(text_of((by_class($tree, 'couchpage-position'))[0]), '1 of 1,050',
       'page 1 of 1,050 one-row pages: "1 of 1,050", thousands separated');
    my @pages = page_entries($tree);
    is_deeply(texts(@pages), ['1', '2', '3', '1,050'], '... pages 1, 2, 3 and the last, 1,050');
    is_deeply([map { $_->{tag} } @pages], ['span', 'a', 'a', 'a'], '... page 1 a <span>, the others links');
    is($pages[3]{attrs}{rel}, 'last', '... the last one rel="last"');

    my ($rl, $tl) = get_html($pages[3]{attrs}{href});
    is_deeply(items_of($tl), ['1049'], 'rel="last" leads to the last row');
    is(text_of((by_class($tl, 'couchpage-position'))[0]), '1,050 of 1,050', '... "1,050 of 1,050"');
    my @last = page_entries($tl);
    is_deeply(texts(@last), ['1', '1,048', '1,049', '1,050'], '... pages 1, 1,048, 1,049 and 1,050');
    is_deeply([map { $_->{tag} } @last], ['a', 'a', 'a', 'span'],
              '... 1,050, the page shown, a <span> with aria-current="page": no link to the page one is on');
    is($last[3]{attrs}{'aria-current'}, 'page', '... aria-current="page" on it');
    is(scalar(grep { ($_->{attrs}{rel} // '') eq 'last' } by_tag($tl, 'a')), 0, '... and no rel="last" link');
    my ($next) = by_class($tl, 'couchpage-next');
    is($next->{tag}, 'span', '... Next a disabled <span>');
}
{
    # French: U+202F between the groups; no page list, so First and Last
    my ($res, $tree) = get_html('/html/many-fr/');
    is(text_of((by_class($tree, 'couchpage-position'))[0]), "1 sur 1\x{202f}050",
       'CouchPageText thousands U+202F, of "sur": "1 sur 1 050"');
    my ($first) = by_class($tree, 'couchpage-first');
    is("$first->{tag} " . ($first->{attrs}{'aria-disabled'} // ''), 'span true', 'page 1: First is a disabled <span>');
    my ($last) = by_class($tree, 'couchpage-last');
    is("$last->{tag} " . ($last->{attrs}{rel} // ''), 'a last', '... Last a link, rel="last"');
    my ($rl, $tl) = get_html($last->{attrs}{href});
    is(text_of((by_class($tl, 'couchpage-position'))[0]), "1\x{202f}050 sur 1\x{202f}050",
       'the last page: "1 050 sur 1 050"');
    my ($last2) = by_class($tl, 'couchpage-last');
    is("$last2->{tag} " . ($last2->{attrs}{'aria-disabled'} // ''), 'span true',
       '... where Last is a disabled <span>, no link to the page one is on');
    my ($first2) = by_class($tl, 'couchpage-first');
    is("$first2->{tag} " . ($first2->{attrs}{rel} // ''), 'a first', '... and First a link');
}

# --- 6. mod_include ---------------------------------------------------------------
{
    my ($res, $tree) = get_html('/page.shtml', document => 1, Accept => '*/*');
    is($res->code, 200, 'GET /page.shtml: 200');
    unlike($res->content, qr/an error occurred while processing this directive/, 'the include worked');
    my ($main) = grep { ($_->{attrs}{id} // '') eq 'page-main' } elements($tree);
    my @frag = $main ? by_class($main, 'couchpage') : ();
    is(scalar @frag, 1, "the fragment is inside the page's own <main>");
    is(scalar(grep { ($_->{attrs}{id} // '') =~ /^page-(header|footer)$/ } elements($tree)), 2,
       "the page's header and footer are there too");
    is_deeply(items_of($tree), \@PAGE1, 'it shows page 1 (HTML although the client accepts */*)');
    my $next = href_of($tree, 'couchpage-next');
    like($next, qr{^/page\.shtml\?start=[^&]+$}, 'its Next links to /page.shtml?start=..., the including page');
    is_deeply([grep { !m{^/page\.shtml(\?|$)} } map { $_->{attrs}{href} } by_tag((by_class($tree, 'couchpage-pages'))[0], 'a')],
              [], 'every page link points at /page.shtml');

    my ($r2, $t2) = get_html($next, document => 1);
    is_deeply(items_of($t2), \@PAGE2, 'following Next re-renders the page with the next bands');
    ($main) = grep { ($_->{attrs}{id} // '') eq 'page-main' } elements($t2);
    is(scalar($main ? by_class($main, 'couchpage') : ()), 1, '... inside the page again');
    my $prev = href_of($t2, 'couchpage-prev');
    is($prev, '/page.shtml', '... with Previous to /page.shtml (page 1: the first page, no token)');
    my $next3 = href_of($t2, 'couchpage-next');
    like($next3, qr{^/page\.shtml\?start=}, '... and Next to /page.shtml?start=...');
    my ($r3, $t3) = get_html(href_of($t2, 'couchpage-next'), document => 1);
    is_deeply(items_of($t3), \@PAGE3, 'Next again: Tool');
    my ($r1, $t1) = get_html($prev, document => 1);
    is_deeply(items_of($t1), \@PAGE1, 'Previous from page 2: page 1');

    my ($rl, $tl) = get_html('/page.shtml?limit=3', document => 1);
    is_deeply(items_of($tl), [@ORDER[0 .. 2]], '/page.shtml?limit=3 passes the limit to the fragment');
    like(href_of($tl, 'couchpage-next'), qr{^/page\.shtml\?start=[^&]+&limit=3$}, '... and its Next keeps it');

    # the demo's page, served by the test server too (t/htdocs/demo)
    my ($rd, $td) = get_html('/demo/', document => 1);
    is_deeply(items_of($td), \@PAGE1, 'the demo page /demo/ shows page 1');
    like(href_of($td, 'couchpage-next'), qr{^/demo/\?start=}, "... and its Next stays on the URL asked (/demo/, not DirectoryIndex's /demo/index.shtml)");
    my ($rd2, $td2) = get_html(href_of($td, 'couchpage-next') // '/missing', document => 1);
    is_deeply(items_of($td2), \@PAGE2, '... which shows page 2');
    like(href_of($td2, 'couchpage-prev') // '', qr{^/demo/(\?|$)}, '... whose Previous is /demo/ again');
    my ($link) = grep { ($_->{attrs}{rel} // '') eq 'stylesheet' } by_tag($td, 'link');
    my $css = get('/demo/' . ($link ? $link->{attrs}{href} : 'missing'));
    is($css->code, 200, 'its stylesheet is served');
    like($css->content, qr/\.couchpage-pages \[aria-current="page"\] \{/, '... and styles the current page');
}
