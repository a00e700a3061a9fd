# SPDX-License-Identifier: Apache-2.0
# Item templates (CouchPageItemTemplate) and the fragment's words
# (CouchPageText), issue 11: the exact markup of every template function on
# plain and hostile documents of the view double (NUL, quotes, markup,
# javascript: URLs), request values in templates, words in another language
# merged per location, the refusals of `httpd -t`, and the blog example
# (conf/couchpage-blog.conf) parsed and walked in Chromium.
use strict;
use warnings;
use utf8;

use Apache::Test qw(-withtestmore);
use Apache::TestRequest ();
use Encode qw(decode_utf8 encode_utf8);
use File::Spec::Functions qw(catfile catdir);
use JSON::PP ();
use URI ();
use URI::Escape qw(uri_escape_utf8);
use CouchPageTest qw(double_load double_fault httpd_config_test browser_walk);
use CouchPageHTML qw(parse_html elements by_class by_tag text_of html_escape);

my $vars = Apache::Test::vars();
my $JSON = JSON::PP->new->utf8->canonical;
my $FIREFOX = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

# The documents of 'tmpl', keyed by n, with what each function must show:
# date and number as the module shows them, count as couchpage_html does.
my @DOCS = (
    { doc => { _id => 'p1', n => 1, slug => "h\x{e9}llo w\x{f6}rld", title => 'Hello, world',
               date => '2024-03-01T10:00:00Z', count => 42, link => 'https://example.org/a b' },
      date => '2024-03-01', number => '42', count => '42' },
    { doc => { _id => 'p2', n => 2, slug => 'javascript:alert(1)',
               title => q{<script>alert(1)</script> "dq" 'sq' &amp;},
               date => '<img src=x onerror=alert(1)>', count => '<b>7</b>',
               link => 'javascript:alert(document.cookie)' },
      date => '', number => '', count => '&lt;b&gt;7&lt;/b&gt;' },
    { doc => { _id => 'p3', n => 3, slug => "a\0b", title => "nul\0<b>", date => 1700000000000,
               count => -2.5, link => "\0javascript:x" },
      date => '2023-11-14', number => '-2.5', count => '-2.5' },
    { doc => { _id => 'p4', n => 4, title => "only a title: Mot\x{f6}rhead \x{2013} \x{6771}\x{4eac} \x{1F600}" },
      date => '', number => '', count => '' },
    { doc => { _id => 'p5', n => 5, slug => '" onclick="x', title => q{' onmouseover='alert(1)' x='},
               date => '2024-02-30', count => '12', link => 'JAVASCRIPT:alert(1)' },
      date => '', number => '', count => '12' },
);

# HTML text as the module escapes it (NUL shown as U+FFFD), and percent-encoding.
sub h { html_escape(@_) }
sub u { defined $_[0] ? uri_escape_utf8($_[0], '^A-Za-z0-9\-._~') : '' }

# The template of /tmpl/ (t/conf/extra.conf.in), filled in by hand.
sub expected_item {
    my ($case, $uri) = @_;
    my $d = $case->{doc};
    return qq{<a href="/posts/} . u($d->{slug}) . qq{?from=$d->{n}" title='} . h($d->{title}) . q{'>}
         . h($d->{title}) . qq{</a> <time datetime="$case->{date}">$case->{date}</time> }
         . qq{<data value="$case->{number}">$case->{count}</data> }
         . q{<a href="/go?to=} . u($d->{link}) . q{">} . h($d->{link}) . q{</a> }
         . qq{<small>$uri the test site</small>};
}

# The raw inner HTML of each item of a fragment, decoded.
sub raw_items {
    my ($body) = @_;
    return [ map { decode_utf8($_) } $body =~ m{<li class="couchpage-item">(.*?)</li>\n}gs ];
}

sub get_html {
    my ($path, %opt) = @_;
    my $res = Apache::TestRequest::GET($path, Accept => $FIREFOX);
    my ($errors, $tree) = parse_html($res->content, document => $opt{document});
    is_deeply($errors, [], "$path parses with parse5 without errors") or diag($res->content);
    return ($res, $tree);
}

# The blog's posts (embedded/fixtures.js), newest first.
my @TOPICS = ('Paging without skip', 'Keys that collate', "A view of one's own", 'Tokens & links',
              'Reduce, then page', 'Documents in rows', 'Partitions', 'Caching at the edge',
              'Signed tokens', '<Templates> in httpd', 'Counting pages', 'Ranges of keys');
my @POST_TITLES = reverse map { $TOPICS[($_ - 1) % 12] . ', part ' . (int(($_ - 1) / 12) + 1) } 1 .. 36;
my @BLOG_PAGES = map { [ @POST_TITLES[$_ * 5 .. ($_ * 5 + 4 > 35 ? 35 : $_ * 5 + 4)] ] } 0 .. 7;

my $chromium = $ENV{COUCHPAGE_CHROMIUM} || '/usr/bin/chromium';
my $embedded = $ENV{COUCHPAGE_EMBEDDED_DIR} || catdir($vars->{top_dir}, 'embedded');
my $browser = -x $chromium && -r catfile($embedded, 'node_modules', 'playwright-core', 'package.json');

# `httpd -t` on a location with these directives: [directives, expected message or undef].
my $VIEW = 'http://127.0.0.1:5984/db/_design/d/_view/v';
my @CONFIG = (
    [qq{CouchPageView $VIEW\nCouchPageIncludeDocs On\nCouchPageItemTemplate "<b>%{couchpage_html:doc.title}</b> %{couchpage_url:id} }
     . qq{%{couchpage_number:value} %{couchpage_date:key[1]} %{REQUEST_URI}"\nCouchPageText previous "Pr\x{e9}c\x{e9}dent"}, undef],
    ['CouchPageItemTemplate "<b>%{couchpage_html:doc.title</b>"',
     qr{CouchPageItemTemplate: '<b>%\{couchpage_html:doc.title</b>' is not a valid template: .+}],
    ['CouchPageItemTemplate "<b>%{couchpage_html:title}</b>"',
     qr{CouchPageItemTemplate: .* %\{couchpage_html:title\}: the field 'title' must start with key, value, id or doc}],
    ['CouchPageItemTemplate "%{couchpage_date:doc.tags[x]}"',
     qr{CouchPageItemTemplate: .* %\{couchpage_date:doc.tags\[x\]\}: the field .* an index must}],
    ['CouchPageItemTemplate "%{couchpage_url:%{QUERY_STRING}}"',
     qr{CouchPageItemTemplate: .* %\{couchpage_url:FIELD\} takes a field path written out}],
    ['CouchPageItemTemplate "%{couchpage_raw:doc.title}"',
     qr{CouchPageItemTemplate: .* Function 'couchpage_raw' does not exist}],
    ["CouchPageItem key\nCouchPageItemTemplate \"%{couchpage_html:key}\"",
     qr{CouchPageItemTemplate: CouchPageItem is set in this section already}],
    ['CouchPageText previos "Back"',
     qr{CouchPageText: 'previos' is not a word of the fragment; the words are first, previous, next, last, of, empty, nav-label, current, thousands, error}],
    ['CouchPageText previous', qr{CouchPageText takes two arguments}],
    ["CouchPageText next \"Suivant \xff\"", qr{CouchPageText: the text for next is not valid UTF-8}],
);

plan tests => 36 + 5 + 14 + @DOCS + @CONFIG + ($browser ? 8 : 1);
binmode Test::More->builder->$_, ':encoding(UTF-8)' for qw(output failure_output todo_output);

# --- 1. every function, on plain and hostile documents -----------------------
double_load('tmpl', [ map { $_->{doc} } @DOCS ], { v => { map => 'function(doc){ emit(doc.n, null); }' } });
{
    my ($res, $tree) = get_html('/tmpl/');
    my $items = raw_items($res->content);
    is(scalar @$items, scalar @DOCS, 'one item per document');
    for my $i (0 .. $#DOCS) {
        is($items->[$i], expected_item($DOCS[$i], '/tmpl/'),
           "document $DOCS[$i]{doc}{_id}: the template's exact markup");
    }
    my $body = $res->content;
    unlike($body, qr/<script|<img|<b>/i, 'no markup from the documents');
    is_deeply([grep { /^on/i } map { keys %{ $_->{attrs} } } elements($tree)], [],
              'no on* attribute anywhere');
    my @hrefs = map { $_->{attrs}{href} } map { by_tag($_, 'a') } by_class($tree, 'couchpage-item');
    is(scalar(grep { m{^/(posts/|go\?to=)} } @hrefs), 2 * @DOCS,
       'every link stays where the template put it: /posts/... or /go?to=...');
    is_deeply([grep { /javascript:/i } @hrefs], [], 'no javascript: URL in any link');
    is_deeply([sort keys %{ { map { ($_->{tag} => 1) } map { elements($_) } by_class($tree, 'couchpage-item') } }],
              [qw(a data li small time)], "the items hold the template's elements only");
    my ($p2) = grep { ($_->{attrs}{href} // '') =~ /^\/posts\/javascript/ } map { by_tag($_, 'a') } by_class($tree, 'couchpage-item');
    is($p2 && $p2->{attrs}{title}, q{<script>alert(1)</script> "dq" 'sq' &amp;},
       "a title in '...' holds the hostile text, as text");
    my ($nav) = by_class($tree, 'couchpage-nav');
    is($nav->{attrs}{'aria-label'}, 'Pages', 'the default words stay: aria-label Pages');
    is(text_of((by_class($tree, 'couchpage-prev'))[0]), 'Previous', '... Previous');
    is(text_of((by_class($tree, 'couchpage-position'))[0]), '1–5 of 5', '... and "of"');
}
{
    my $res = Apache::TestRequest::GET('/tmpl/?limit=1&format=html');
    like(raw_items($res->content)->[0], qr{<small>/tmpl/ the test site</small>$},
         '%{REQUEST_URI} is the path, %{env:...} a SetEnv variable');
    my $uri = Apache::TestRequest::GET('/tmpl/%3Cb%3E%22\'?limit=1');
    like(raw_items($uri->content)->[0], qr{<small>/tmpl/&lt;b&gt;&quot;&#39; the test site</small>$},
         '%{couchpage_escape:%{REQUEST_URI}}: a client\'s path, escaped');
    # a lone surrogate cannot be decoded: the page is refused, nothing shown
    double_fault(mode => 'status', status => 200, path => '/tmpl/', count => 10,
                 body => '{"total_rows":1,"offset":0,"rows":[{"id":"x","key":1,"value":null,'
                       . '"doc":{"title":"\ud800<script>"}}],"results":[]}');
    my $bad = Apache::TestRequest::GET('/tmpl/', Accept => $FIREFOX);
    double_fault(mode => 'none');
    is($bad->code, 502, 'a lone surrogate (\ud800) from the backend: 502');
    unlike($bad->content, qr/<script|couchpage-item/, '... and no item, no markup');
}

{
    # a whole href or src from a document, through %{couchpage_url:...}: a
    # relative reference, whatever the document holds (javascript:,
    # JAVASCRIPT:, a NUL before it), never a URL with a scheme
    my ($res, $tree) = get_html('/tmpl-href/');
    my @urls = map { (map { $_->{attrs}{href} } by_tag($_, 'a')), (map { $_->{attrs}{src} } by_tag($_, 'img')) }
               by_class($tree, 'couchpage-item');
    is(scalar(@urls), 2 * @DOCS, '%{couchpage_url:...} as a whole href and src: one each an item');
    is_deeply([grep { defined URI->new($_)->scheme } @urls], [], '... none has a scheme: javascript: cannot become one');
    is_deeply([grep { URI->new_abs($_, 'http://localhost/tmpl-href/')->scheme ne 'http' } @urls], [],
              '... each leads under the page, as a relative path');
    like($res->content, qr{href="javascript%3Aalert%28document.cookie%29"}, '... javascript:alert(document.cookie) stays a path segment');
}

# --- 2. words in French, merged per location ---------------------------------
{
    my ($res, $tree) = get_html('/tmpl-fr/');
    is_deeply([map { text_of($_) } by_class($tree, 'couchpage-item')], ["h\x{e9}llo w\x{f6}rld", 'javascript:alert(1)'],
              '/tmpl-fr/: two items through its template');
    my ($nav) = by_class($tree, 'couchpage-nav');
    is($nav->{attrs}{'aria-label'}, "Pages d'articles", 'nav-label: aria-label="Pages d\'articles"');
    like($res->content, qr{aria-label="Pages d&#39;articles"}, "... its ' escaped");
    is(text_of((by_class($tree, 'couchpage-first'))[0]), 'Première', 'first: Première');
    is(text_of((by_class($tree, 'couchpage-prev'))[0]), 'Précédent', 'previous: Précédent');
    is(text_of((by_class($tree, 'couchpage-next'))[0]), 'Suivant', 'NEXT (any case): Suivant');
    is(text_of((by_class($tree, 'couchpage-last'))[0]), 'Dernière', 'last: Dernière');
    is(text_of((by_class($tree, 'couchpage-position'))[0]), '1–2 sur 5', 'of: 1–2 sur 5');

    my ($ri, $ti) = get_html('/tmpl-fr/inner/');
    is(text_of((by_class($ti, 'couchpage-next'))[0]), 'Plus loin', 'an inner location changes one word');
    is(text_of((by_class($ti, 'couchpage-prev'))[0]), 'Précédent', '... and inherits the others');
    is_deeply(raw_items($ri->content), ["h\x{e9}llo w\x{f6}rld", 'javascript:alert(1)'],
              "... and its CouchPageItem replaces the outer location's template");

    my ($re, $te) = get_html('/tmpl-fr-empty/');
    is(text_of((by_class($te, 'couchpage-empty'))[0]), 'Aucun article.', 'empty: Aucun article.');
    is((by_class($te, 'couchpage-nav'))[0]{attrs}{'aria-label'}, 'Pages', '... the words not set stay English');
}

# --- 3. httpd -t ----------------------------------------------------------------
{
    for my $case (@CONFIG) {
        my ($directives, $expect) = @$case;
        # the UTF-8 case as UTF-8, the invalid byte as it is
        my ($status, $out) = httpd_config_test(encode_utf8($directives) =~ s/\xc3\xbf"/\xff"/r);
        my $last = (split /\n/, $directives)[-1];
        if (defined $expect) {
            ok($status != 0 && $out =~ $expect, "httpd -t refuses '$last' and says why") or diag($out);
        }
        else {
            ok($status == 0 && $out =~ /Syntax OK/, 'httpd -t accepts a template of every function and a word')
                or diag($out);
        }
    }
}

# --- 4. the blog example ----------------------------------------------------------
{
    my ($res, $tree) = get_html('/demo/blog/', document => 1);
    my @titles = map { text_of($_) } map { by_class($_, 'post-title') } by_class($tree, 'couchpage-item');
    is_deeply(\@titles, $BLOG_PAGES[0], 'the blog page shows the five newest posts, by their titles');
    my $first = '<li class="couchpage-item"><h3 class="post-title"><a href="posts/post-036">Ranges of keys, '
              . 'part 3</a></h3> <p class="post-meta"><time datetime="2024-09-04">2024-09-04</time></p> '
              . '<p class="post-summary">Post 36 of the example blog, written 2024-09-04: notes on ranges '
              . 'of keys.</p></li>';
    ok(index($res->content, $first) >= 0, "each post: linked title, date and summary, in the template's markup")
        or diag($res->content);
    like($res->content, qr{Tokens &amp; links|&lt;Templates&gt; in httpd}, 'titles with & or < are escaped');
    is(text_of((by_class($tree, 'couchpage-next'))[0]), 'Older posts', 'the blog\'s words: Older posts');
    is((by_class($tree, 'couchpage-nav'))[0]{attrs}{'aria-label'}, 'Blog pages', '... and its nav-label: Blog pages');
    my ($site) = grep { ($_->{attrs}{'aria-label'} // '') eq 'Site' } by_tag($tree, 'nav');
    is_deeply([map { text_of($_) } by_tag($site, 'a')], ['Bands', 'Items', 'Blog', 'Posts as JSON'],
              "the page's own nav names the blog's JSON, not the bands'");

    # a title's link, relative to the list's page, leads to the post's page
    my ($link) = by_tag((by_class($tree, 'post-title'))[0], 'a');
    my $post_url = URI->new_abs($link->{attrs}{href}, 'http://x/demo/blog/')->path;
    is($post_url, '/demo/blog/posts/post-036', 'the newest post links to blog/posts/post-036');
    my ($post, $ptree) = get_html($post_url, document => 1);
    is($post->code, 200, '... which is a page: 200');
    is_deeply([map { text_of($_) } by_class($ptree, 'post-title')], ['Ranges of keys, part 3'],
              '... showing that post, by its title');
    is_deeply([map { text_of($_) } by_class($ptree, 'post-summary')],
              ['Post 36 of the example blog, written 2024-09-04: notes on ranges of keys.'], '... and its text');
    my ($back) = grep { text_of($_) eq 'All posts' } by_tag($ptree, 'a');
    is($back && URI->new_abs($back->{attrs}{href}, "http://x$post_url")->path, '/demo/blog/',
       '... with a link back to the list');
    for my $case (['/demo/blog/posts/post-999', 'an id no post has'],
                  ['/demo/blog/posts/a%22b%3Cc', 'an id of other characters'],
                  ['/demo/blog/posts', 'no id']) {
        my ($none, $ntree) = get_html($case->[0], document => 1);
        is_deeply([map { text_of($_) } by_class($ntree, 'couchpage-empty')], ['No such post.'],
                  "$case->[1]: the post page says No such post.");
    }
}

SKIP: {
    skip "no chromium at $chromium or no playwright-core in $embedded/node_modules", 1 unless $browser;
    my $shot = catfile($vars->{t_logs}, 'browser', 'walk-blog.png');
    my $url = 'http://' . Apache::TestRequest::hostport() . '/demo/blog/';
    unlink $shot;
    my ($rc, $report, $failures, $stderr) = browser_walk('walk-blog', $url, 180, '--screenshot', $shot);
    my @steps = grep { exists $_->{step} } @$report;
    # an item's visible text starts with its title, on a line of its own
    my @seen = map { [ map { (split /\n/)[0] } @{ $_->{items} } ] } @steps;

    is($rc, 0, 'walk.js passes on the blog') or diag($stderr);
    is_deeply($failures, [], '... and reports no failed check');
    is(scalar @steps, 15, 'first page, Next seven times to the last, Previous seven times back');
    is_deeply([@seen[0 .. 7]], \@BLOG_PAGES, 'Next shows every post once, newest first');
    is_deeply([@seen[7 .. 14]], [reverse @BLOG_PAGES], 'Previous shows them again back to the first page');
    is(scalar(grep { $_->{styled} } @steps), 15, 'couchpage.css applies on every page');
    ok(-s $shot && -s $shot > 10_000, "a screenshot of the middle page: $shot");
    my $png = do { open my $fh, '<:raw', $shot or die "$shot: $!"; local $/; <$fh> } // '';
    is(substr($png, 0, 8), "\x89PNG\r\n\x1a\n", '... a PNG');
}
