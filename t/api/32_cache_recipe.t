# SPDX-License-Identifier: Apache-2.0
# The cache recipes, run as written on an httpd of the test's own each, but
# for what a test machine must change: CouchDB's address (a relay the test
# starts and stops, in front of the tier's backend: the view double, or the
# real CouchDB in the real tier), the credentials, the database, the cache
# directory, and shorter times (CouchPageMaxAge 2 stale-if-error=8,
# CacheSocacheMinTime 8). Its access log shows, per request, the module's
# backend requests and rows read (none: the module did not run) and the
# If-None-Match the module was asked with.
#  - conf/couchpage-cache.conf (mod_cache_socache, shmcb):
#    - a page is kept: the same page again is a HIT, with no backend request;
#    - a write does not show while the kept page is fresh, and shows once its
#      max-age is over (mod_cache revalidates, the page changed: 200);
#    - an unchanged page, expired: mod_cache asks with the kept ETag as
#      If-None-Match, which the recipe takes away before the module, so the
#      module reads the page and answers 200 and the entry is replaced, its
#      body whole; a client's own If-None-Match is answered 304 from a
#      fresh entry;
#    - CouchDB unreachable (the relay stopped): a fresh page is still a HIT;
#      expired, the module's 503 is answered with the kept page (Warning:
#      111) until max-age + CacheSocacheMinTime (httpd 2.4 reads no
#      stale-if-error: the recipe sets the two equal), then the 503 itself;
#      CouchDB back, pages are served again.
#  - the same file without its RequestHeader line (why it has it): the
#    module's 304 (one backend request, no row read) refreshes the entry and
#    this client gets the page, but mod_cache_socache keeps the entry's
#    headers without its body: the next hit is 200 with an empty body. A
#    control of httpd's own behaviour: should a later httpd keep the body,
#    this fails, and the recipe can drop the line.
#  - conf/couchpage-cache-disk.conf (mod_cache_disk): the same, but an
#    unchanged page, expired, is revalidated with the module's cheap 304
#    (one backend request, no row read; X-Cache: REVALIDATE, "entity
#    refreshed"), the client and the hits after it get the whole page, and
#    again at the next expiry; CouchDB unreachable, the kept page answers the
#    module's 503 also past max-age + stale-if-error (mod_cache_disk keeps
#    the entry: httpd bounds nothing); CouchDB back, the kept entry is
#    revalidated (304) and served.
use strict;
use warnings;

use Apache::Test qw(plan ok);
use Apache::TestUtil qw(t_cmp);
use File::Spec::Functions qw(catfile);
use File::Temp qw(tempdir);
use HTTP::Tiny ();
use IO::Select ();
use IO::Socket::INET ();
use POSIX ();
use Time::HiRes qw(time sleep);
use CouchPageTest qw(double_url double_load double_request decode_json_or_undef free_port
                     wait_for_port own_process reap_process start_own_httpd);

my ($MAX_AGE, $STALE) = (2, 8);
my $vars = Apache::Test::vars();

plan tests => (8 + 6 + 7 + 8 + 4) + 5 + (8 + 6 + 9 + 8 + 4);

my ($backend_host, $backend_port) = double_url() =~ m{^http://(?:[^@/]*\@)?([^:/]+):(\d+)}
    or die 'COUCHPAGE_DOUBLE is not a URL: ' . double_url() . "\n";
my $relay_port = free_port();
my @DOCS = map { { _id => sprintf('doc%02d', $_), n => $_, t => 'first' } } 0 .. 9;

# A TCP relay from RELAY_PORT to the backend, in a child of its own: its
# exit closes every connection, and the port refuses new ones, as a stopped
# CouchDB's would.
my $relay;
sub start_relay {
    my $listen = IO::Socket::INET->new(Listen => 16, LocalAddr => '127.0.0.1', LocalPort => $relay_port,
                                       ReuseAddr => 1) or die "relay on $relay_port: $!\n";
    my $pid = fork // die "fork: $!\n";
    if ($pid == 0) {
        my $select = IO::Select->new($listen);
        my %peer;
        while (1) {
            for my $fh ($select->can_read) {
                if ($fh == $listen) {
                    my $client = $listen->accept or next;
                    my $backend = IO::Socket::INET->new(PeerAddr => $backend_host, PeerPort => $backend_port);
                    if (!$backend) { close $client; next }
                    @peer{$client, $backend} = ($backend, $client);
                    $select->add($client, $backend);
                    next;
                }
                my $other = $peer{$fh};
                my $n = sysread($fh, my $buf, 65536);
                my $sent = 0;
                while ($n && $sent < $n) {
                    my $w = syswrite($other, $buf, $n - $sent, $sent);
                    last unless $w;
                    $sent += $w;
                }
                if (!$n || $sent < $n) {
                    $select->remove($fh, $other);
                    delete @peer{$fh, $other};
                    close $fh;
                    close $other;
                }
            }
        }
    }
    close $listen;
    $relay = own_process($pid, 'relay to the backend');
}
sub stop_relay {
    kill 'TERM', $relay;
    reap_process($relay, time + 10) // die "the relay did not stop\n";
}

# conf/FILE with this machine's address, credentials, database DB, times
# and the changes given ([from, to], each found once).
sub recipe_conf {
    my ($file, $db, @changes) = @_;
    my $path = catfile($vars->{top_dir}, 'conf', $file);
    my $conf = do { local $/; open my $fh, '<', $path or die "$path: $!\n"; <$fh> };
    for my $change (['CouchPageCredentials reader "s3cret"',
                     qq{CouchPageCredentials "$ENV{COUCHPAGE_DOUBLE_USER}" "$ENV{COUCHPAGE_DOUBLE_PASSWORD}"}],
                    ['/bands/_design/bands/_view/by-name', "/$db/_design/d/_view/v"],
                    ['CouchPageMaxAge 60 stale-if-error=600', "CouchPageMaxAge $MAX_AGE stale-if-error=$STALE"],
                    @changes) {
        my ($from, $to) = @$change;
        my $at = index($conf, $from);
        die "conf/$file has no '$from'\n" if $at < 0;
        substr($conf, $at, length $from) = $to;
    }
    return $conf;
}

# An httpd of its own with CONF (and the relay's worker, the access log),
# in ROOT: (port, pid).
sub start_recipe_httpd {
    my ($root, $conf) = @_;
    # mod_log_config is built into Debian's httpd, and loaded where it is not
    my $builtin = `'$vars->{httpd}' -l 2>/dev/null` // '';
    my @modules = (qw(proxy proxy_http headers cache cache_socache socache_shmcb cache_disk),
                   map { $builtin =~ /\bmod_$_\.c\b/ ? () : $_ } qw(log_config setenvif));
    return start_own_httpd($root, \@modules,
        qq{Define COUCHPAGE_COUCHDB "http://127.0.0.1:$relay_port"\n}
        . qq{<Proxy "http://127.0.0.1:$relay_port/">\n    ProxySet keepalive=On connectiontimeout=2 timeout=10\n</Proxy>\n}
        . qq{CacheDetailHeader On\n}
        # the If-None-Match the module was asked with: mod_cache adds its own to
        # the request in its quick handler, before the header parser that runs
        # a location's SetEnvIf, and restores the client's headers when it
        # serves its entry
        . qq{<Location "/bands/">\n    SetEnvIf If-None-Match "^(.+)\$" asked_if_none_match=\$1\n</Location>\n}
        . qq{LogFormat "%>s|%{couchpage-backend-requests}n|%{couchpage-rows}n|%{asked_if_none_match}e" recipe\n}
        . qq{CustomLog "$root/access_log" recipe\n}
        . $conf);
}
sub stop_httpd {
    my ($pid) = @_;
    kill 'TERM', $pid;
    reap_process($pid, time + 20) // die "httpd $pid did not stop\n";
}

my $http = HTTP::Tiny->new(timeout => 30);
my ($root, $port, $logged, $asked_at);

# GET the recipe's location as JSON (when: $asked_at): (response, its access-log line as
# { status, backend (requests, '-' when the module did not run), rows, sent (the If-None-Match) }).
sub get_page {
    my (%headers) = @_;
    $asked_at = time;
    my $res = $http->get("http://127.0.0.1:$port/bands/",
                         { headers => { Accept => 'application/json', %headers } });
    my @lines;
    my $until = time + 5;
    while (1) {
        @lines = do { open my $fh, '<', "$root/access_log" or die "access_log: $!\n"; <$fh> };
        last if @lines > $logged or time > $until;
        sleep 0.05;
    }
    my ($status, $backend, $rows, $sent) = split /\|/, ($lines[$logged] // '|||'), 4;
    if (defined $sent) {
        chomp $sent;
        $sent =~ s/\\"/"/g;    # the access log escapes a tag's quotes
    }
    $logged = @lines;
    return ($res, { status => $status, backend => $backend, rows => $rows, sent => $sent });
}
sub texts_of {
    my $page = decode_json_or_undef($_[0]{content});
    return ref $page eq 'HASH' ? join(',', map { $_->{value} // '' } @{ $page->{items} || [] }) : '(not JSON)';
}
sub header { return $_[0]{headers}{lc $_[1]} // '' }
sub sleep_until { my $wait = $_[0] - time; sleep $wait if $wait > 0 }
sub costs { return sprintf('%s %s', $_[0]{backend} // '', $_[0]{rows} // '') }

# The whole story on one recipe: KIND 'socache' (conf/couchpage-cache.conf)
# or 'disk' (conf/couchpage-cache-disk.conf).
sub run_recipe {
    my ($kind) = @_;
    my $disk = $kind eq 'disk';
    my $db = "cacherecipe$kind";
    $root = tempdir(CLEANUP => 1);
    chmod 0755, $root;
    my $conf = $disk
        ? recipe_conf('couchpage-cache-disk.conf', $db,
                      ['CacheRoot "/var/cache/apache2/mod_cache_disk"', qq{CacheRoot "$root/cache"}])
        : recipe_conf('couchpage-cache.conf', $db, ['CacheSocacheMinTime 600', "CacheSocacheMinTime $STALE"]);
    mkdir "$root/cache" if $disk;
    double_load($db, \@DOCS, { v => { map => 'function (doc) { emit(doc.n, doc.t); }' } });
    start_relay();
    ($logged, $asked_at) = (0, 0);
    my $httpd;
    ($port, $httpd) = start_recipe_httpd($root, $conf);

    # --- a page is kept --------------------------------------------------------
    my ($first, $log) = get_page();
    my ($stored, $stored_by) = ($asked_at, time);    # the entry is from between the two
    ok t_cmp($first->{status}, 200, "$kind: the recipe's location: a first page");
    ok t_cmp(header($first, 'Cache-Control'), "max-age=$MAX_AGE, stale-if-error=$STALE",
             "$kind: Cache-Control from CouchPageMaxAge $MAX_AGE stale-if-error=$STALE");
    ok t_cmp(header($first, 'X-Cache'), qr/^MISS/, "$kind: X-Cache: MISS");
    ok t_cmp($log->{backend} =~ /^[1-9]/ ? 1 : 0, 1, "$kind: the module asked the backend");
    my ($again, $again_log) = get_page();
    ok t_cmp(header($again, 'X-Cache'), qr/^HIT/, "$kind: the same page again: X-Cache: HIT");
    ok t_cmp($again->{content}, $first->{content}, "$kind: with the same body");
    ok t_cmp(header($again, 'ETag'), header($first, 'ETag'), "$kind: and the same ETag");
    ok t_cmp($again_log->{backend}, '-', "$kind: the module did not run: no backend request");

    # --- a write shows once max-age is over -------------------------------------
    my (undef, $doc) = double_request(GET => "/$db/doc00");
    my ($put) = double_request(PUT => "/$db/doc00", { %$doc, t => 'second' });
    ok t_cmp($put, qr/^20[12]$/, "oracle: $kind: doc00 written");
    my ($fresh, $fresh_log) = get_page();
    ok t_cmp(texts_of($fresh) . ' ' . ($fresh_log->{backend} // ''), qr/^first,first,first\S* -$/,
             "$kind: within max-age: the kept page, the write not yet shown, no backend request");
    sleep_until($stored_by + $MAX_AGE + 1.2);
    my ($changed, $changed_log) = get_page();
    ($stored, $stored_by) = ($asked_at, time);
    ok t_cmp(texts_of($changed), qr/^second,first/, "$kind: max-age over: the write shows");
    ok t_cmp($changed_log->{sent}, header($first, 'ETag'), "$kind: mod_cache asked the module with the kept ETag");
    ok t_cmp(header($changed, 'ETag') ne header($first, 'ETag') ? 1 : 0, 1, "$kind: under a new ETag");
    my ($kept) = get_page();
    ok t_cmp(header($kept, 'X-Cache') . ' ' . texts_of($kept), qr/^HIT.* second,first/, "$kind: and kept: a HIT");

    # --- an unchanged page, expired ------------------------------------------------
    sleep_until($stored_by + $MAX_AGE + 1.2);
    my ($expired, $expired_log) = get_page();
    ($stored, $stored_by) = ($asked_at, time);
    ok t_cmp($expired_log->{sent}, header($changed, 'ETag'), "$kind: expired, unchanged: mod_cache asked with the kept ETag");
    if ($disk) {
        # the module's 304 from the seal: one request, no row read
        ok t_cmp(costs($expired_log), '1 0', "$kind: the module answered after one backend request that read no rows");
        ok t_cmp(header($expired, 'X-Cache-Detail'), qr/conditional cache hit: entity refreshed/,
                 "$kind: mod_cache took the module's 304: X-Cache-Detail: entity refreshed");
    }
    else {
        # the recipe took the tag away: the page read
        ok t_cmp(sprintf('%s %s', $expired_log->{status}, costs($expired_log)), qr/^200 [1-9]\d* [1-9]/,
                 "$kind: the module, without it, read the page and answered it: 200");
    }
    ok t_cmp($expired->{status}, 200, "$kind: the client, which sent no condition, gets 200");
    ok t_cmp($expired->{content}, $changed->{content}, "$kind: with the page");
    my ($after, $after_log) = get_page();
    ok t_cmp(header($after, 'X-Cache') . ' ' . $after_log->{backend}, qr/^HIT.* -$/, "$kind: the entry: a HIT");
    ok t_cmp($after->{content}, $changed->{content}, "$kind: with the whole page (not an empty body)");
    if ($disk) {
        # and again: the refreshed entry is revalidated the same way
        sleep_until($stored_by + $MAX_AGE + 1.2);
        my ($twice, $twice_log) = get_page();
        ($stored, $stored_by) = ($asked_at, time);
        my ($then) = get_page();
        ok t_cmp(join(' ', header($twice, 'X-Cache') =~ /^(\S+)/, costs($twice_log), $twice->{content} eq $changed->{content} ? 'page' : 'other',
                      header($then, 'X-Cache') =~ /^(\S+)/, $then->{content} eq $changed->{content} ? 'page' : 'other'),
                 'REVALIDATE 1 0 page HIT page', "$kind: expired again: revalidated by a 304 again, the page whole after it");
    }
    my ($conditional) = get_page('If-None-Match' => header($changed, 'ETag'));
    ok t_cmp($conditional->{status}, 304, "$kind: a client's own If-None-Match: 304 from the fresh entry");

    # --- CouchDB unreachable: the stale page while the entry is kept, then the error ----
    stop_relay();
    my ($hit, $hit_log) = get_page();
    ok t_cmp(header($hit, 'X-Cache') . ' ' . $hit_log->{backend}, qr/^HIT.* -$/,
             "$kind: the backend stopped, the page fresh: a HIT, the module not run");
    sleep_until($stored_by + $MAX_AGE + 1.2);
    my ($stale) = get_page();
    ok t_cmp($stale->{status}, 200, "$kind: expired, the backend stopped: 200");
    ok t_cmp(texts_of($stale), qr/^second,first/, "$kind: the kept page");
    ok t_cmp(header($stale, 'Warning'), qr/^111 /, "$kind: Warning: 111 Revalidation failed");
    ok t_cmp(header($stale, 'X-Cache-Detail'), qr/cache hit: 503 status; stale content returned/,
             "$kind: X-Cache-Detail: the module's 503, stale content returned");
    sleep_until($stored + $MAX_AGE + $STALE - 3);
    my ($late) = get_page();
    ok t_cmp(sprintf('%d %s', $late->{status}, texts_of($late)), qr/^200 second,first/,
             "$kind: still within max-age + stale-if-error: the kept page");
    sleep_until($stored_by + $MAX_AGE + $STALE + 1.5);
    my ($gone) = get_page();
    if ($disk) {
        ok t_cmp(sprintf('%d %s', $gone->{status}, texts_of($gone)), qr/^200 second,first/,
                 "$kind: after max-age + stale-if-error: still the kept page (mod_cache_disk keeps the entry)");
        ok t_cmp(header($gone, 'Warning'), qr/^111 /, "$kind: with Warning: 111");
    }
    else {
        ok t_cmp($gone->{status}, 503, "$kind: after max-age + stale-if-error: the module's 503");
        ok t_cmp(header($gone, 'Cache-Control'), 'no-store', "$kind: no-store");
    }

    # --- CouchDB back ----------------------------------------------------------------
    start_relay();
    my ($back, $back_log) = get_page();
    ok t_cmp($back->{status}, 200, "$kind: the backend back: 200");
    ok t_cmp(texts_of($back), qr/^second,first/, "$kind: with the page");
    if ($disk) {
        ok t_cmp(header($back, 'X-Cache') . ' ' . costs($back_log), qr/^REVALIDATE.* 1 0$/,
                 "$kind: the kept entry revalidated: X-Cache: REVALIDATE, one backend request, no row read");
    }
    else {
        ok t_cmp(header($back, 'X-Cache'), qr/^MISS/, "$kind: a new entry");
    }
    my ($back_again) = get_page();
    ok t_cmp(header($back_again, 'X-Cache'), qr/^HIT/, "$kind: kept again: HIT");
    stop_relay();
    stop_httpd($httpd);
}

# conf/couchpage-cache.conf without its RequestHeader line: what httpd's
# mod_cache_socache does with the module's 304.
sub run_socache_without_unset {
    my $db = 'cacherecipebare';
    $root = tempdir(CLEANUP => 1);
    chmod 0755, $root;
    my $conf = recipe_conf('couchpage-cache.conf', $db, ['CacheSocacheMinTime 600', "CacheSocacheMinTime $STALE"],
                           ['RequestHeader unset If-None-Match', '']);
    double_load($db, \@DOCS, { v => { map => 'function (doc) { emit(doc.n, doc.t); }' } });
    start_relay();
    ($logged, $asked_at) = (0, 0);
    my $httpd;
    ($port, $httpd) = start_recipe_httpd($root, $conf);
    my ($first) = get_page();
    my $stored_by = time;
    ok t_cmp(sprintf('%d %s', $first->{status}, header($first, 'X-Cache')), qr/^200 MISS/,
             'socache, no RequestHeader: a first page, kept');
    sleep_until($stored_by + $MAX_AGE + 1.2);
    my ($expired, $expired_log) = get_page();
    ok t_cmp(costs($expired_log), '1 0', 'socache, no RequestHeader: expired: the module\'s 304 after one request, no row read');
    ok t_cmp(header($expired, 'X-Cache-Detail'), qr/conditional cache hit: entity refreshed/,
             'socache, no RequestHeader: mod_cache took it: entity refreshed');
    ok t_cmp(sprintf('%d %s', $expired->{status}, $expired->{content} eq $first->{content} ? 'page' : 'other'), '200 page',
             'socache, no RequestHeader: the client gets 200 and the page');
    my ($after, $after_log) = get_page();
    ok t_cmp(sprintf('%s %d %s %d', header($after, 'X-Cache') =~ /^(\S+)/, $after->{status}, $after_log->{backend},
                     length $after->{content}), 'HIT 200 - 0',
             'socache, no RequestHeader: the next hit is 200 with an empty body (httpd keeps no body on a 304)');
    stop_relay();
    stop_httpd($httpd);
}

run_recipe('socache');
run_socache_without_unset();
run_recipe('disk');
