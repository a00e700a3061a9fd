# SPDX-License-Identifier: Apache-2.0
# Pages that move in place, in a real browser (issue 27, items 2-4):
# t/browser/inplace.js drives Debian's chromium with playwright-core and
# reports what it saw; this file judges it against the pages as plain HTTP
# serves them (the demo blog's 36 posts, five a page, walked by its Next
# links here).
#  - couchpage.js, paged (/demo/blog/): Next three times and Back twice
#    show the right page each time, the URL that page's link, focus on the
#    new list, the live region saying the page's data-couchpage-status, the
#    document never reloaded; after a reload Forward brings the next page
#    back; the pushed URL opened afresh is that page;
#    prefers-reduced-motion: reduce turns the list's transition off;
#  - the keyboard alone (Tab to Next, Enter) moves the same way;
#  - the go-to-page form (a labelled number field) shows its page in place,
#    Next goes on from it, and without JavaScript the form loads its page
#    (/jump.shtml, the double's rows with page links);
#  - Load more (/more.shtml, data-couchpage="more"): every post once, none
#    missing, in order, focus on the first new item, the page above not
#    moved, the URL ?shown=N; a page in place (the nav's link), then Back
#    brings the whole list back as it was, without a request, and Forward
#    the page; a URL with shown=N opened (a reload, shown=1000) shows at
#    most 5 pages, 4 requests, and says so (?shown=5);
#  - Load more where every page knows its position (/more-position.shtml,
#    the double's 21 rows): the position says all the rows shown ("1–10 of
#    21", not the last page's "6–10"), the live region the page appended; a
#    second click while a page loads asks for nothing and appends nothing;
#    ?shown=3 opened shows rows 1-15, two requests;
#  - without script (disabled, or failed to load) Next is a link that loads;
#  - htmx (/htmx/, conf/couchpage-htmx.conf): Next moves in place and pushes
#    a real URL, Back restores, the URL opened afresh is that page;
#  - axe-core (pinned in embedded/package.json) finds no violation in the
#    fragment, in both modes of couchpage.js, nor with htmx.
use strict;
use warnings;
use utf8;

use Apache::Test qw(-withtestmore);
use Apache::TestRequest ();
use Encode qw(decode_utf8);
use File::Spec::Functions qw(catfile catdir);
use JSON::PP ();
use CouchPageTest qw(browser_script double_load);

my $vars = Apache::Test::vars();
my $chromium = $ENV{COUCHPAGE_CHROMIUM} || '/usr/bin/chromium';
my $embedded = $ENV{COUCHPAGE_EMBEDDED_DIR} || catdir($vars->{top_dir}, 'embedded');

plan tests => 92, Apache::Test::need(
    { "no chromium at $chromium (apt-get install chromium)" => -x $chromium },
    { "no playwright-core in $embedded/node_modules (npm ci)" =>
          -r catfile($embedded, 'node_modules', 'playwright-core', 'package.json') },
    { "no axe-core in $embedded/node_modules (npm ci)" =>
          -r catfile($embedded, 'node_modules', 'axe-core', 'axe.min.js') },
);
binmode Test::More->builder->$_, ':encoding(UTF-8)' for qw(output failure_output todo_output);

my $base = 'http://' . Apache::TestRequest::hostport();
my $JSON = JSON::PP->new->utf8->canonical;

# --- the blog's pages as plain HTTP serves them ---------------------------------
sub unescape { return $_[0] =~ s/&lt;/</gr =~ s/&gt;/>/gr =~ s/&quot;/"/gr =~ s/&#39;/'/gr =~ s/&amp;/&/gr }
my (@pages, %seen);
for (my $path = '/demo/blog/'; defined $path && @pages < 20;) {
    my $html = decode_utf8(Apache::TestRequest::GET($path, Accept => 'text/html')->content // '');
    my ($status) = $html =~ /data-couchpage-status="([^"]*)"/;
    push @pages, { url => $base . $path, status => defined $status ? unescape($status) : undef,
                   items => [ map { unescape($_) } $html =~ m{<h3 class="post-title"><a [^>]*>(.*?)</a></h3>}g ] };
    ($path) = $html =~ m{<a class="couchpage-next" rel="next" href="([^"]+)"};
    $path = unescape($path) if defined $path;
    $path = "/demo/blog/$path" if defined $path && $path =~ /^\?/;
}
my @all = map { @{ $_->{items} } } @pages;
is(scalar @pages, 8, 'plain HTTP: the blog has 8 pages of 5 (36 posts), by its Next links');

# the double's 21 rows of /more-position.shtml, five a page, each page with
# its position
my @rows = map { sprintf 'row-%02d', $_ } 1 .. 21;
double_load('inplace', [ map { { _id => $_ } } @rows ], { v => { map => 'function(doc){ emit(doc._id, null); }' } });
my $numbered = decode_utf8(Apache::TestRequest::GET('/more-position.shtml')->content // '');
like($numbered, qr{<span class="couchpage-first-row">1</span>–<span class="couchpage-last-row">5</span> of 21},
     'plain HTTP: /more-position.shtml is rows 1–5 of 21, the row numbers marked');

# What couchpage.js's live region says for a step's page: the fragment's
# data-couchpage-status, else (where the backend does not tell the position:
# pouchdb-server's later pages) its first and last item.
sub said {
    my ($step) = @_;
    return $step->{status} if defined $step->{status};
    my @items = @{ $step->{items} };
    return @items > 1 ? "$items[0] – $items[-1]" : $items[0];
}

# --- the browser -------------------------------------------------------------------
my ($rc, $report, $failures, $stderr) = browser_script('inplace', 'inplace', $base, 240);
is($rc, 0, 'inplace.js ran') or diag($stderr);
my %r = map { $_->{scenario} ? ($_->{scenario} => $_) : () } @$report;
ok((grep { $_->{done} } @$report), 'it finished every scenario') or diag($stderr);

# paged: Next x3, Back x2
my @steps = @{ $r{paged}{steps} || [] };
my @want = (0, 1, 2, 3, 2, 1);
is_deeply([map { $_->{step} } @steps], ['first', 'next 1', 'next 2', 'next 3', 'back 1', 'back 2'],
          'paged: first, Next three times, Back twice');
is_deeply([map { $_->{items} } @steps], [map { $pages[$_]{items} } @want],
          '... each step shows the right page (1, 2, 3, 4, 3, 2)');
is_deeply([map { $_->{url} } @steps[1 .. 5]], [map { $pages[$_]{url} } @want[1 .. 5]],
          "... the URL is that page's own link each time") or diag(join "\n", map { $_->{url} } @steps);
is_deeply([map { $_->{focus} } @steps[1 .. 5]], [('list') x 5], '... focus on the new list after every move');
is_deeply([map { $_->{live} } @steps[1 .. 5]], [map { said($_) } @steps[1 .. 5]],
          "... the live region says the page each time, e.g. '$steps[3]{live}'");
is($steps[0]{status}, 'Page 1, 1–5 of 36', "... the first page's status: 'Page 1, 1–5 of 36'");
is($steps[1]{liveRole}, 'status/polite', '... a role=status, aria-live=polite region');
is_deeply([map { $_->{marker} // 'lost' } @steps], [('kept') x 6], '... the document was never reloaded');
is($r{paged}{loads}, 1, '... it loaded once');
is_deeply([map { $_->{fragments} } @steps], [(1) x 6], '... one fragment on the page at every step');
is_deeply($r{paged}{reloaded}{items}, $pages[1]{items}, 'a reload on page 2 shows page 2');
is_deeply([$r{paged}{forward}{url}, $r{paged}{forward}{items}], [$pages[2]{url}, $pages[2]{items}],
          '... and Forward after it page 3, at its URL');
is($r{paged}{fresh}{url}, $steps[3]{url}, 'the pushed URL of page 4 opened afresh');
is_deeply($r{paged}{fresh}{items}, $pages[3]{items}, '... shows page 4');
is_deeply($r{paged}{freshNext}{items}, $pages[4]{items}, '... and moves on to page 5 in place');
is($r{paged}{reducedTransition}, '0s', 'prefers-reduced-motion: reduce: no transition');
is($r{paged}{transition}, '0.15s', 'without it: the list fades (0.15s)');
is_deeply($r{paged}{errors}, [], 'no failed request, no script error');

# keyboard
my @keys = @{ $r{keyboard}{steps} || [] };
is(scalar @keys, 2, 'keyboard only: Tab to Next, Enter, twice');
is_deeply([map { $_->{items} } @keys], [$pages[1]{items}, $pages[2]{items}], '... pages 2 and 3');
is_deeply([map { $_->{focus} } @keys], ['list', 'list'], '... focus on the list after each');
is_deeply([map { $_->{marker} // 'lost' } @keys], ['kept', 'kept'], '... no reload');
is_deeply($r{keyboard}{errors}, [], '... no error');

# more
my @more = @{ $r{more}{steps} || [] };
my $last = $more[-1] || {};
is(scalar @more, 8, 'Load more: the first page and seven loads');
is_deeply($last->{items}, \@all, '... every post of the view, once, in order');
my %count;
$count{$_}++ for @{ $last->{items} || [] };
is(scalar(grep { $count{$_} > 1 } keys %count), 0, '... none twice');
is(scalar(@{ $last->{items} || [] }), 36, '... none missing (36)');
is_deeply([map { scalar @{ $_->{items} } } @more], [5, 10, 15, 20, 25, 30, 35, 36], '... five more each time');
is_deeply([map { $_->{focus} } @more[1 .. $#more]],
          [map { "item:$all[5 * $_]" } 1 .. $#more], '... focus on the first new item each time');
is_deeply([map { $_->{top} } @more], [($more[0]{top}) x @more], '... the items above never move');
is_deeply([map { $_->{live} } @more[1 .. $#more]], [map { said($pages[$_]) } 1 .. $#more],
          '... the live region says each loaded page');
is($more[0]{position}, '1–5 of 36', '... the first page says 1–5 of 36');
is_deeply([map { $_->{position} } @more[1 .. $#more]], [(undef) x $#more],
          "... then no position: pouchdb-server's later pages do not tell theirs, and 1–5 is not what shows");
is_deeply([map { $_->{status} } @more[1 .. $#more]], [map { $_->{position} } @more[1 .. $#more]],
          "... the fragment's announcement is its position, none without one");
ok(!$last->{more} && !$last->{next}, '... at the end, no Load more and no Next');
ok($more[0]{more} && $more[0]{next}, '... before, a Load more button beside the Next link');
like($r{more}{url}, qr{/more\.shtml\?shown=8$}, "... the URL says 8 pages show: $r{more}{url}");
is_deeply([map { $_->{marker} // 'lost' } @more], [('kept') x @more], '... no reload');

# more: away and back
my @travel = @{ $r{more}{travel} || [] };
is_deeply([map { $_->{step} } @travel], ['newer', 'back', 'forward', 'back again'],
          "Load more's list, then Newer posts (a page in place), Back, Forward, Back");
is_deeply([map { $_->{items} } @travel], [$pages[6]{items}, \@all, $pages[6]{items}, \@all],
          '... page 7 alone, the whole list of 36 again, page 7, the list');
is_deeply([map { $_->{url} } @travel[1, 3]], [($r{more}{url}) x 2], '... at its URL, ?shown=8');
is_deeply([map { $_->{fetches} } @travel[1 .. 3]], [0, 0, 0], '... Back and Forward without a request');
is_deeply([map { $_->{focus} } @travel], [('list') x 4], '... focus on the list each time');
is_deeply([map { $_->{live} } @travel], [map { said($_) } @travel], '... and the live region says it');
is_deeply([map { $_->{marker} // 'lost' } @travel], [('kept') x 4], '... no reload');
# more: shown=N opened
for my $case (['reload', $r{more}{reloaded}, 'reloaded (?shown=8)'], ['1000', $r{more}{thousand}, '?shown=1000 opened afresh']) {
    my ($name, $at, $what) = @$case;
    is_deeply($at->{items}, [ @all[0 .. 24] ], "$what: 5 pages (25 posts), not more");
    is($at->{fetches}, 4, '... four requests after the page');
    like($at->{url}, qr{/more\.shtml\?shown=5$}, "... and the URL says 5 show: $at->{url}");
}
is_deeply($r{more}{errors}, [], '... no error');

# position: Load more where every page knows its position
my @pos = @{ $r{position}{steps} || [] };
my $twice = $pos[1] || {};
is_deeply([map { $_->{step} } @pos], ['first', 'more, clicked twice', 'more 2', 'more 3', 'more 4'],
          'rows: the first page, Load more clicked twice, three more');
is($pos[0]{position}, '1–5 of 21', '... the first page: 1–5 of 21');
is($twice->{busyAtSecond}, 'true', '... the second click came while the page loaded (aria-busy)');
is_deeply($twice->{items}, [ @rows[0 .. 9] ], '... and appended nothing: rows 1-10, once');
is($twice->{fetches}, 1, '... one request');
is_deeply([map { $_->{items} } @pos[2 .. 4]], [ [ @rows[0 .. 14] ], [ @rows[0 .. 19] ], \@rows ],
          '... then rows 1-15, 1-20, 1-21');
is_deeply([map { $_->{position} } @pos], ['1–5 of 21', '1–10 of 21', '1–15 of 21', '1–20 of 21', '1–21 of 21'],
          '... the position says all the rows shown, the last page of one row too (1–21)');
is_deeply([map { $_->{status} } @pos], [map { $_->{position} } @pos], "... the fragment's announcement the same");
is_deeply([map { $_->{live} } @pos[1 .. 4]], ['6–10 of 21', '11–15 of 21', '16–20 of 21', '21 of 21'],
          '... the live region says the page appended');
is_deeply([map { $_->{focus} } @pos[1 .. 4]], [map { "item:$rows[5 * $_]" } 1 .. 4], '... focus on its first item');
ok(!$pos[4]{more}, '... at the end no Load more');
my $three = $r{position}{opened} || {};
is_deeply([$three->{items}, $three->{position}, $three->{fetches}], [ [ @rows[0 .. 14] ], '1–15 of 21', 2 ],
          '?shown=3 opened: rows 1-15, "1–15 of 21", two requests');
like($three->{url} // '', qr{/more-position\.shtml\?shown=3$}, "... the URL still ?shown=3: $three->{url}");
is_deeply($r{position}{errors}, [], '... no error');

# the go-to-page form, on the double's rows (pouchdb-server does not number
# its later pages): pages of 5, 5 pages
is($r{jump}{label}, 'Go to page', 'jump: the form\'s number field is labelled "Go to page"');
is_deeply([$r{jump}{jumped}{items}, $r{jump}{jumped}{current}, $r{jump}{jumped}{position}],
          [[@rows[15 .. 19]], '4', '16–20 of 21'], '... page 4 asked by it shows rows 16–20, in place');
like($r{jump}{jumped}{url} // '', qr{/jump\.shtml\?page=4$}, "... its URL pushed: $r{jump}{jumped}{url}");
is_deeply([$r{jump}{jumped}{marker}, $r{jump}{jumped}{focus}, $r{jump}{loads}], ['kept', 'list', 1],
          '... no reload, focus on the new list');
is($r{jump}{jumped}{live}, 'Page 4, 16–20 of 21', "... the live region says it: '$r{jump}{jumped}{live}'");
is_deeply($r{jump}{next}{items}, [$rows[20]], '... and Next from it is page 5, row 21');
is_deeply([$r{jump}{noscript}{items}, $r{jump}{plainLoads}], [[@rows[10 .. 14]], 2],
          'without JavaScript the form loads page 3 as a new document');
is_deeply($r{jump}{errors}, [], '... no error');

# without script
is_deeply($r{noscript}{first}{items}, $pages[0]{items}, 'JavaScript disabled: page 1');
is_deeply($r{noscript}{second}{items}, $pages[1]{items}, '... Next is a link: page 2');
is($r{noscript}{loads}, 2, '... loaded as a new document');
is($r{noscript}{second}{live}, undef, '... no live region without script');
is_deeply($r{'failed-script'}{after}{items}, $pages[1]{items}, 'couchpage.js failed to load: Next still loads page 2');

# htmx
my @hx = @{ $r{htmx}{steps} || [] };
is_deeply([map { $_->{items}[0] } @hx], ['Biffy Clyro', 'Nirvana', 'Biffy Clyro'], 'htmx: page 1, Next, Back');
like($hx[1]{url} // '', qr{/htmx/(index\.shtml)?\?start=}, "... Next pushed the page's real URL: $hx[1]{url}");
is_deeply([map { $_->{marker} // 'lost' } @hx], [('kept') x 3], '... no reload');
is_deeply($r{htmx}{fresh}{items}, $hx[1]{items}, '... the pushed URL opened afresh is that page');
is_deeply([map { $_->{fragments} } @hx], [1, 1, 1], '... one fragment, not one inside another');
is_deeply($r{htmx}{errors}, [], '... no error');

# axe-core
my @axe = @{ $r{axe}{results} || [] };
is_deeply([map { $_->{label} } @axe],
          ['paged mode, after moving', 'the go-to-page form, after a jump', 'more mode, after a load',
           'the fragment without script', 'htmx, after moving'],
          'axe-core ran on the fragment, both modes and htmx');
is_deeply([map { @{ $_->{violations} } } @axe], [], '... no violations') or diag($JSON->encode(\@axe));
ok(!grep({ $_->{passes} < 10 } @axe), '... and passed rules on each (' . join(', ', map { $_->{passes} } @axe) . ')');
