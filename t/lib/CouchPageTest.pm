package CouchPageTest;
# Helpers for mod_couchpage's Apache::Test files (t/**/*.t).
#
#   use Apache::Test qw(plan ok);
#   use CouchPageTest qw(get_json walk_pages);
#   my ($status, $body) = get_json('/bands/?limit=5');
#
# t/TEST puts t/lib on PERL5LIB, so test files need no 'use lib'.
use strict;
use warnings FATAL => 'all';

use Exporter 'import';
use JSON::PP ();
use URI::Escape qw(uri_escape_utf8);
use Apache::Test ();
use Apache::TestRequest ();
use File::Spec::Functions qw(catfile);
use Time::HiRes qw(time sleep);

our @EXPORT_OK = qw(
    decode_json_or_undef get_json walk_pages with_args
    backend_url backend_port
    double_url double_port double_request double_fault double_log double_load
    double_has_batch double_queries
    error_log_path error_log_mark error_log_since
    time_wait_count
);
our %EXPORT_TAGS = (all => \@EXPORT_OK);

my $JSON = JSON::PP->new->utf8->canonical->allow_nonref;

# Decoded JSON, or undef if the text is not JSON.
sub decode_json_or_undef {
    my ($text) = @_;
    return undef unless defined $text and length $text;
    my $value = eval { $JSON->decode($text) };
    return $value;
}

# GET a path of the test server: (status, decoded JSON body or undef, HTTP::Response).
sub get_json {
    my ($path, @headers) = @_;
    my $res = Apache::TestRequest::GET($path, @headers);
    return ($res->code, decode_json_or_undef($res->content), $res);
}

# Appends query arguments to a path, percent-encoding each value:
#   with_args('/bands/', start => $token, limit => 5)
sub with_args {
    my ($path, @args) = @_;
    my @pairs;
    while (my ($k, $v) = splice @args, 0, 2) {
        next unless defined $v;
        push @pairs, "$k=" . uri_escape_utf8($v);
    }
    return $path unless @pairs;
    return $path . ($path =~ /\?/ ? '&' : '?') . join '&', @pairs;
}

# Walks a view from its first page by following the "next" tokens.
#   walk_pages('/bands/', limit => 5, max_pages => 100)
# Returns a list of { status => ..., body => ..., path => ... }, one per page,
# stopping after a page whose status is not 200, whose body is not JSON, or
# whose "next" is null, or after max_pages (default 1000) pages.
sub walk_pages {
    my ($path, %opt) = @_;
    my $max = delete $opt{max_pages} // 1000;
    my $dir = delete $opt{direction} // 'next';
    my @args = map { ($_ => $opt{$_}) } sort keys %opt;
    my @pages;
    my $token;
    for (1 .. $max) {
        my $p = with_args($path, @args, defined $token ? (start => $token) : ());
        my ($status, $body) = get_json($p);
        push @pages, { status => $status, body => $body, path => $p };
        last unless $status == 200 and ref $body eq 'HASH';
        $token = $body->{$dir};
        last unless defined $token;
    }
    return @pages;
}

# A backend's base URL as t/TEST exported it (no trailing slash): from the
# environment, or from t/logs/NAME.url when the server was started earlier.
sub started_url {
    my ($env, $name) = @_;
    return $ENV{$env} if $ENV{$env};
    my $file = catfile(Apache::Test::vars('t_logs'), "$name.url");
    open my $fh, '<', $file or die "no $name URL: $env unset and $file: $!\n";
    chomp(my $url = <$fh>);
    return $url;
}

# pouchdb-server's base URL, e.g. http://127.0.0.1:40123.
sub backend_url { started_url('COUCHPAGE_BACKEND', 'backend') }

# The CouchDB view double's base URL (t/double/couchdb-double.js).
sub double_url { started_url('COUCHPAGE_DOUBLE', 'double') }

sub double_port { port_of(double_url()) }

# A request straight to the double, as its admin: (status, decoded body).
#   double_request(PUT => '/db/doc', {name => 'x'})
sub double_request {
    my ($method, $path, $body) = @_;
    require HTTP::Tiny;
    require MIME::Base64;
    my $auth = MIME::Base64::encode_base64(
        ($ENV{COUCHPAGE_DOUBLE_USER} // 'admin') . ':'
        . ($ENV{COUCHPAGE_DOUBLE_PASSWORD} // 'double-admin-secret'), '');
    my $res = HTTP::Tiny->new(timeout => 60)->request($method, double_url() . $path, {
        headers => { Authorization => "Basic $auth", 'Content-Type' => 'application/json',
                     Accept => 'application/json' },
        defined $body ? (content => $JSON->encode($body)) : (),
    });
    return ($res->{status}, decode_json_or_undef($res->{content}));
}

# Sets the double's fault switch: double_fault(mode => 'slow', ms => 3000,
# path => '/faults/', count => 1); double_fault(mode => 'none') clears it.
sub double_fault {
    my (%fault) = @_;
    my ($status) = double_request(POST => '/_double/faults', \%fault);
    die "setting the double's fault failed: $status\n" unless $status == 200;
}

# The requests the double received since the log was last cleared; with
# clear => 1, clears it instead.
sub double_log {
    my (%opt) = @_;
    if ($opt{clear}) {
        double_request(DELETE => '/_double/log');
        return;
    }
    my (undef, $log) = double_request(GET => '/_double/log');
    return ref $log eq 'HASH' ? @{ $log->{requests} || [] } : ref $log eq 'ARRAY' ? @$log : ();
}

# Whether the double answers CouchDB's multi-query endpoint (POST
# .../_all_docs/queries, .../_view/V/queries), as CouchDB 2.2 and later do:
# probed once, on a database of its own.
my $HAS_BATCH;
sub double_has_batch {
    return $HAS_BATCH //= do {
        double_request(PUT => '/couchpage_batch_probe');
        my ($status, $body) = double_request(POST => '/couchpage_batch_probe/_all_docs/queries',
                                             { queries => [{ limit => 0 }] });
        $status == 200 && ref $body eq 'HASH' && ref $body->{results} eq 'ARRAY' ? 1 : 0;
    };
}

# The view queries in entries of the double's log (double_log), one
#   { method, path, query => [[name, value], ...], request => the entry }
# per query: a GET's own query string, and each query in the body of a
# multi-query POST (path without its /queries; values as a query string
# carries them: JSON text, document ids raw). When the double has no
# multi-query endpoint its POSTs were answered 404, and the module asked
# their queries again: they are left out.
sub double_queries {
    my @queries;
    my $json = JSON::PP->new->canonical->allow_nonref;
    for my $entry (@_) {
        my $path = $entry->{path} // '';
        if (($entry->{method} // '') eq 'POST' and $path =~ m{^(.*/(?:_view/[^/]+|_all_docs))/queries$}) {
            next unless double_has_batch();
            my $index = $1;
            my $body = eval { $json->decode($entry->{body} // '') };
            for my $query (ref $body eq 'HASH' && ref $body->{queries} eq 'ARRAY' ? @{ $body->{queries} } : ()) {
                my @pairs = map {
                    [$_, /_docid$/ && !ref $query->{$_} ? $query->{$_} : $json->encode($query->{$_})]
                } sort keys %$query;
                push @queries, { method => 'POST', path => $index, query => \@pairs, request => $entry };
            }
        }
        elsif (($entry->{method} // '') eq 'GET') {
            push @queries, { method => 'GET', path => $path, query => $entry->{query} || [], request => $entry };
        }
    }
    return @queries;
}

# Creates database DB in the double with docs and a design document
# (replacing one of that name): double_load('dups', \@docs, {v => {map => ...}}).
sub double_load {
    my ($db, $docs, $views, %opt) = @_;
    double_request(DELETE => "/$db");
    my ($status) = double_request(PUT => "/$db" . ($opt{partitioned} ? '?partitioned=true' : ''));
    die "creating $db in the double failed: $status\n" unless $status == 201 || $status == 200;
    if ($views) {
        ($status) = double_request(PUT => "/$db/_design/" . ($opt{ddoc} // 'd'), { views => $views });
        die "design doc of $db: $status\n" unless $status == 201 || $status == 200;
    }
    for (my $i = 0; $i < @$docs; $i += 5000) {
        my $last = $i + 4999 < $#$docs ? $i + 4999 : $#$docs;
        ($status) = double_request(POST => "/$db/_bulk_docs", { docs => [ @$docs[$i .. $last] ] });
        die "loading $db into the double failed: $status\n" unless $status == 201 || $status == 200;
    }
}

sub port_of {
    my ($port) = $_[0] =~ m{:(\d+)(?:/|$)};
    return $port;
}

sub backend_port { port_of(backend_url()) }

sub error_log_path {
    return catfile(Apache::Test::vars('t_logs'), 'error_log');
}

# Byte offset of the end of t/logs/error_log: pass it to error_log_since later.
sub error_log_mark {
    return -s error_log_path() || 0;
}

# Lines written to t/logs/error_log after the mark (all lines without one).
# httpd may write a line a moment after the response: pass wait => seconds to
# poll until a line matches the regexp 'until' (or the time is up).
sub error_log_since {
    my ($mark, %opt) = @_;
    my $deadline = time + ($opt{wait} // 0);
    while (1) {
        my @lines;
        if (open my $fh, '<', error_log_path()) {
            seek $fh, $mark // 0, 0;
            @lines = <$fh>;
            chomp @lines;
        }
        return @lines if !$opt{until} or grep { /$opt{until}/ } @lines or time >= $deadline;
        sleep 0.1;
    }
}

# TCP sockets in TIME_WAIT on either end of a connection to PORT (default:
# the backend's port), as `ss -tan` shows them.
sub time_wait_count {
    my ($port) = @_;
    $port //= backend_port();
    $port =~ /^\d+$/ or die "bad port '$port'\n";
    my @lines = `ss -Htan state time-wait '( sport = :$port or dport = :$port )' 2>/dev/null`;
    die "ss failed: $?\n" if $?;
    return scalar grep { /\S/ } @lines;
}

1;
