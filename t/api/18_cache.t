# SPDX-License-Identifier: Apache-2.0
# Conditional requests and httpd's cache (issue 12, item 5).
#  - Without a cache (/cache/etag/): every page has a strong ETag, the
#    SHA-1 of its body; If-None-Match (one tag, a list, a weak W/ tag, *)
#    is answered 304 with no body, for GET and HEAD, under the page's
#    digest (sealed with the database's sequence, t/api/36_revalidate.t); a tag of another page
#    or of the other format is not; Vary: Accept where Accept chose the
#    format; no Cache-Control without CouchPageMaxAge; errors are no-store.
#  - mod_cache with mod_cache_socache (shmcb) in front of /cache/kept/
#    (CouchPageMaxAge 300): counted in the view double's request log, a
#    repeated page costs no backend request; the JSON and HTML variants of
#    one URL are kept apart, each with its own body; a page of another token
#    is never served from another's entry; a backend error is not kept; a
#    'private' page is never kept by the shared cache.
#  - Without CouchPageCredentials (/cache/public/, the bands): mod_cache
#    keeps the page, and never acts on the backend subrequest, whose key is
#    the page's URL: no save filter on CouchDB's answer (which it would keep
#    as the page where CouchDB sends a validator), no invalidation by a later
#    page's multi-query POST, no kept page served as CouchDB's answer.
use strict;
use warnings;

use Apache::Test qw(plan ok);
use Apache::TestUtil qw(t_cmp);
use Apache::TestRequest ();
use CouchPageTest qw(with_args double_load double_log double_fault decode_json_or_undef
                     error_log_mark error_log_since);

plan tests => 31 + 32 + 6;

double_load('cache', [ map { { _id => sprintf('doc%02d', $_), n => $_ } } 0 .. 9 ],
            { v => { map => 'function (doc) { emit(doc.n, null); }' } });

my %ACCEPT = (json => 'application/json', html => 'text/html');

# GET (or HEAD) a path with Accept for FORMAT and more headers.
sub fetch {
    my ($method, $path, $format, @headers) = @_;
    no strict 'refs';
    return &{"Apache::TestRequest::$method"}($path, Accept => $ACCEPT{$format}, @headers);
}

sub keys_of {
    my ($res) = @_;
    my $page = decode_json_or_undef($res->content);
    return ref $page eq 'HASH' ? join(',', map { $_->{key} } @{ $page->{items} || [] }) : '(not JSON)';
}

sub varies_by_accept { return (($_[0]->header('Vary') // '') =~ /\bAccept\b/i) ? 1 : 0 }

# --- ETag and 304, no cache --------------------------------------------------------
my $first = fetch(GET => '/cache/etag/', 'json');
my $etag = $first->header('ETag') // '';
ok t_cmp($first->code, 200, 'a first page');
ok t_cmp($etag, qr/^"[A-Za-z0-9_-]{27}(?:\.[A-Za-z0-9_-]{22})?"$/,
         'it has a strong ETag: the base64url SHA-1 of the body, quoted (sealed with the sequence its view answers carry)');
ok t_cmp($first->header('Cache-Control'), undef, 'no Cache-Control without CouchPageMaxAge');
ok t_cmp(varies_by_accept($first), 1, 'Vary: Accept, since Accept chose the format');
ok t_cmp(fetch(GET => '/cache/etag/', 'json')->header('ETag'), $etag, 'the same page again: the same ETag');

for my $case (['the tag', $etag], ['a weak W/ tag (If-None-Match compares weakly)', "W/$etag"],
              ['a list holding the tag', qq{"elsewhere", $etag}], ['*', '*']) {
    my ($what, $value) = @$case;
    my $res = fetch(GET => '/cache/etag/', 'json', 'If-None-Match' => $value);
    ok t_cmp($res->code, 304, "If-None-Match: $what: 304");
    ok t_cmp(length($res->content), 0, "If-None-Match: $what: no body");
}
my $not_modified = fetch(GET => '/cache/etag/', 'json', 'If-None-Match' => $etag);
# its digest the page's, sealed with a sequence (couchpage_fresh.h), which
# a later revalidation verifies cheaply
my ($digest) = $etag =~ /^"([^".]*)/;
ok t_cmp($not_modified->header('ETag'), qr/^"\Q$digest\E(?:\.[A-Za-z0-9_-]{22})?"$/,
         'the 304 carries the ETag: the page\'s digest');
ok t_cmp(varies_by_accept($not_modified), 1, 'and Vary: Accept');
my $other = fetch(GET => '/cache/etag/', 'json', 'If-None-Match' => '"not-this-page"');
ok t_cmp($other->code, 200, 'another tag: 200');
ok t_cmp(keys_of($other), '0,1,2', 'with the page');

my $head = fetch(HEAD => '/cache/etag/', 'json', 'If-None-Match' => $etag);
ok t_cmp($head->code, 304, 'HEAD with the tag: 304');
$head = fetch(HEAD => '/cache/etag/', 'json');
ok t_cmp($head->code, 200, 'HEAD without: 200');
ok t_cmp($head->header('ETag'), $etag, 'with the GET\'s ETag');

my $html = fetch(GET => '/cache/etag/', 'html', 'If-None-Match' => $etag);
ok t_cmp($html->code, 200, 'the JSON page\'s tag does not match the HTML page');
ok t_cmp($html->header('Content-Type'), qr{^text/html}, 'which is HTML');
ok t_cmp(($html->header('ETag') // '') ne $etag && ($html->header('ETag') // '') =~ /^"/ ? 1 : 0, 1,
         'and has an ETag of its own');
my $next_token = decode_json_or_undef($first->content)->{next};
my $second = fetch(GET => with_args('/cache/etag/', start => $next_token), 'json', 'If-None-Match' => $etag);
ok t_cmp($second->code, 200, 'the first page\'s tag does not match the second page');
ok t_cmp(keys_of($second), '3,4,5', 'which is served');
ok t_cmp(($second->header('ETag') // $etag) ne $etag ? 1 : 0, 1, 'under a tag of its own');

my $fixed = fetch(GET => '/cache/json/', 'html');
ok t_cmp($fixed->code, 200, 'a location fixed to JSON');
ok t_cmp(varies_by_accept($fixed), 0, 'does not vary by Accept');
my $bad = fetch(GET => '/cache/etag/?limit=zero', 'json', 'If-None-Match' => '*');
ok t_cmp($bad->code, 400, 'a bad request is an error, conditions or not');
ok t_cmp($bad->header('Cache-Control'), 'no-store', 'errors are no-store');
ok t_cmp($bad->header('ETag'), undef, 'and have no ETag');

# --- mod_cache (socache, shmcb) in front of /cache/kept/ -------------------------------
# The backend requests since the last call.
sub backend_requests {
    my $n = grep { ($_->{path} // '') =~ m{^/cache/} } double_log();
    double_log(clear => 1);
    return $n;
}

double_log(clear => 1);
my $json1 = fetch(GET => '/cache/kept/', 'json');
ok t_cmp($json1->code, 200, 'cached location: a first page');
ok t_cmp($json1->header('Cache-Control'), 'max-age=300', 'Cache-Control: max-age=300 (CouchPageMaxAge 300)');
ok t_cmp(backend_requests() > 0 ? 1 : 0, 1, 'the first request asks the backend');
my $json2 = fetch(GET => '/cache/kept/', 'json');
ok t_cmp($json2->content, $json1->content, 'the same page again: the same body');
ok t_cmp(backend_requests(), 0, 'from the cache: no backend request');
ok t_cmp($json2->header('X-Cache') // '', qr/^HIT/, 'mod_cache says HIT');

my $html1 = fetch(GET => '/cache/kept/', 'html');
ok t_cmp($html1->header('Content-Type'), qr{^text/html}, 'the same URL with Accept: text/html: HTML');
ok t_cmp(backend_requests() > 0 ? 1 : 0, 1, 'a variant of its own: the backend is asked');
my $html2 = fetch(GET => '/cache/kept/', 'html');
ok t_cmp($html2->content, $html1->content, 'HTML again: the HTML body');
ok t_cmp($html2->header('Content-Type'), qr{^text/html}, 'as HTML');
ok t_cmp(backend_requests(), 0, 'from the cache');
my $json3 = fetch(GET => '/cache/kept/', 'json');
ok t_cmp($json3->content, $json1->content, 'JSON again: the JSON body, not the HTML one');
ok t_cmp($json3->header('Content-Type'), qr{^application/json}, 'as JSON');
ok t_cmp(backend_requests(), 0, 'from the cache');

my $token = decode_json_or_undef($json1->content)->{next};
my $page2 = fetch(GET => with_args('/cache/kept/', start => $token), 'json');
ok t_cmp(keys_of($page2), '3,4,5', 'the next page (another token): its own rows');
ok t_cmp(backend_requests() > 0 ? 1 : 0, 1, 'never another page\'s entry: the backend is asked');
my $page2again = fetch(GET => with_args('/cache/kept/', start => $token), 'json');
ok t_cmp($page2again->content, $page2->content, 'the next page again: its body');
ok t_cmp(backend_requests(), 0, 'from the cache');
my $page3 = fetch(GET => with_args('/cache/kept/', start => decode_json_or_undef($page2->content)->{next}), 'json');
ok t_cmp(keys_of($page3), '6,7,8', 'the page after it: its own rows');
ok t_cmp(backend_requests() > 0 ? 1 : 0, 1, 'from the backend');
ok t_cmp(keys_of(fetch(GET => '/cache/kept/', 'json')), '0,1,2', 'the first page still holds its own rows');
ok t_cmp(backend_requests(), 0, 'from the cache');

my $revalidated = fetch(GET => '/cache/kept/', 'json', 'If-None-Match' => $json1->header('ETag'));
ok t_cmp($revalidated->code, 304, 'If-None-Match with the kept page\'s tag: 304');
ok t_cmp(backend_requests(), 0, 'from the cache');

# A backend error is answered, and not kept: the next request is served.
double_fault(mode => 'status', status => 500, path => '/cache/', count => 1);
my $failed = fetch(GET => '/cache/kept/?limit=2', 'json');
ok t_cmp($failed->code, 502, 'a backend error: 502');
ok t_cmp($failed->header('Cache-Control'), 'no-store', 'no-store');
double_fault(mode => 'none');
backend_requests();
my $after = fetch(GET => '/cache/kept/?limit=2', 'json');
ok t_cmp($after->code, 200, 'the same URL next: 200, the error was not kept');
ok t_cmp(keys_of($after), '0,1', 'with its rows');
ok t_cmp(backend_requests() > 0 ? 1 : 0, 1, 'from the backend');

my $private1 = fetch(GET => '/cache/private/', 'json');
ok t_cmp($private1->header('Cache-Control'), 'private, max-age=300', 'CouchPageMaxAge 300 private');
backend_requests();
my $private2 = fetch(GET => '/cache/private/', 'json');
ok t_cmp($private2->code, 200, 'a private page again');
ok t_cmp(backend_requests() > 0 ? 1 : 0, 1, 'is not kept by the shared cache: the backend is asked');

# Without credentials: mod_cache keeps the page, and leaves the backend
# subrequests alone (its debug lines name each filter it adds).
my $mark = error_log_mark();
my $public1 = fetch(GET => '/cache/public/', 'json');
my $public2 = fetch(GET => '/cache/public/', 'json');
ok t_cmp($public2->header('X-Cache') // '', qr/^HIT/, 'a page without CouchPageCredentials is kept');
my $reload = fetch(GET => '/cache/public/', 'json', 'Cache-Control' => 'no-cache');
ok t_cmp($reload->code, 200, 'a reload of it (Cache-Control: no-cache) reaches the module: 200');
ok t_cmp(keys_of($reload), keys_of($public1), '... with the same page');
my $next = decode_json_or_undef($public1->content)->{next} // '';
my $later = fetch(GET => with_args('/cache/public/', start => $next), 'json');
ok t_cmp($later->code, 200, 'its next page: 200');
my @cache_lines = grep { /\[cache:debug\]/ } error_log_since($mark, wait => 1);
ok t_cmp(join("\n", grep { /CACHE_SAVE_SUBREQ|CACHE_INVALIDATE/ } @cache_lines), '',
         'mod_cache added no filter to a backend subrequest (' . scalar(@cache_lines) . ' lines of it)');
ok t_cmp(fetch(GET => '/cache/public/', 'json')->header('X-Cache') // '', qr/^HIT/,
         'the first page is still kept after the next page was asked');
