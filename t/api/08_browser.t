# SPDX-License-Identifier: Apache-2.0
# A person's walk through the demo page (t/htdocs/demo, the same files as
# scripts/demo's index page) in a real browser: t/browser/walk.js drives
# Debian's chromium with playwright-core. Page 1 shows Biffy Clyro .. Kerub;
# Next leads to the last page (Tool) and Previous back to the first, with the
# visible items checked at every step. A screenshot of the middle page is
# left in t/logs/browser/ (out/t-logs/browser/ after scripts/test).
use strict;
use warnings;
use utf8;

use Apache::Test qw(-withtestmore);
use Apache::TestRequest ();
use File::Spec::Functions qw(catfile catdir);
use JSON::PP ();
use CouchPageTest qw(browser_walk);

my $vars = Apache::Test::vars();
my $chromium = $ENV{COUCHPAGE_CHROMIUM} || '/usr/bin/chromium';
my $embedded = $ENV{COUCHPAGE_EMBEDDED_DIR} || catdir($vars->{top_dir}, 'embedded');
my $shot = catfile($vars->{t_logs}, 'browser', 'walk-middle-page.png');

my @PAGES = (
    ['Biffy Clyro', 'Foo Fighters', 'Future of the Left', 'Helmet', 'Kerub'],
    ['Nirvana', 'Perfect Circle', 'Queens of the Stone Age', 'Silverchair', 'Tenacious D'],
    ['Tool'],
);

plan tests => 16, Apache::Test::need(
    { "no chromium at $chromium (apt-get install chromium)" => -x $chromium },
    { "no playwright-core in $embedded/node_modules (npm ci)" =>
          -r catfile($embedded, 'node_modules', 'playwright-core', 'package.json') },
);
binmode Test::More->builder->$_, ':encoding(UTF-8)' for qw(output failure_output todo_output);

my $JSON = JSON::PP->new->utf8;
my $url = 'http://' . Apache::TestRequest::hostport() . '/demo/';
unlink $shot;

# walk.js with a time limit
my ($rc, $report, $failures, $stderr) = browser_walk('walk', $url, 120, '--screenshot', $shot,
                                                     '--expect', $JSON->encode(\@PAGES));
my @report = @$report;
my @failures = @$failures;

is($rc, 0, 'walk.js passes') or diag($stderr);
is_deeply(\@failures, [], 'walk.js reports no failed check');
my @steps = grep { exists $_->{step} } @report;
my ($done) = grep { $_->{done} } @report;
ok($done, 'the walk finished');
is_deeply([map { $_->{step} } @steps], ['first', 'next 1', 'next 2', 'prev 1', 'prev 2'],
          'first page, Next twice to the last page, Previous twice back');
is_deeply([map { $_->{items} } @steps], [@PAGES, $PAGES[1], $PAGES[0]],
          'the visible items: Biffy Clyro .. Kerub, Nirvana .. Tenacious D, Tool, and back');
is_deeply([map { ($_->{prev} ? 'P' : '-') . ($_->{next} ? 'N' : '-') } @steps],
          ['-N', 'PN', 'P-', 'PN', '-N'],
          'Previous and Next links where they belong');
is($steps[0]{position}, '1–5 of 11', 'page 1 says 1–5 of 11');
is($steps[0]{current}, '1', 'page 1 is the current page link');
is($steps[0]{url}, $url, 'the walk starts at /demo/');
is(scalar(grep { $_->{url} =~ m{/demo/(index\.shtml)?\?start=} } @steps[1 .. 3]), 3,
   'every later page is the demo page itself with ?start=');
like($steps[4]{url}, qr{/demo/(index\.shtml)?$},
     'Previous back to page 1 is the demo page itself, without a token');
is(scalar(grep { $_->{styled} } @steps), 5, 'couchpage.css applies on every page');

# the screenshot: a PNG of a real size
ok(-s $shot, "screenshot saved: $shot");
my $png = do { open my $fh, '<:raw', $shot or die "$shot: $!"; local $/; <$fh> } // '';
is(substr($png, 0, 8), "\x89PNG\r\n\x1a\n", 'it is a PNG');
my ($w, $h) = length $png >= 24 ? unpack('NN', substr($png, 16, 8)) : (0, 0);
ok($w >= 600 && $h >= 400, "it has a page's size (${w}x$h)");
ok(-s $shot > 10_000, 'it is not blank (' . (-s $shot // 0) . ' bytes)');
