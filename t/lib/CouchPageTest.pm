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
    backend_url backend_port backend_auth backend_request backend_open_db backend_kind
    double_url double_port double_request double_fault double_log double_load
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

# The paging backend's base URL, e.g. http://127.0.0.1:40123: the embedded
# pouchdb-server, or the real CouchDB of the real tier (scripts/test).
sub backend_url { started_url('COUCHPAGE_BACKEND', 'backend') }

# The Authorization header for the tests' own requests to that backend:
# none for pouchdb-server (no admin, anyone may write); the admin's for a
# real CouchDB (COUCHPAGE_BACKEND_USER/PASSWORD), where only an admin may
# create databases.
sub backend_auth {
    return () unless defined $ENV{COUCHPAGE_BACKEND_USER};
    require MIME::Base64;
    return (Authorization => 'Basic ' . MIME::Base64::encode_base64(
        "$ENV{COUCHPAGE_BACKEND_USER}:" . ($ENV{COUCHPAGE_BACKEND_PASSWORD} // ''), ''));
}

# A request straight to the backend (as its admin, if it has one):
# (status, decoded body).
sub backend_request {
    my ($method, $path, $body) = @_;
    require HTTP::Tiny;
    my $res = HTTP::Tiny->new(timeout => 60)->request($method, backend_url() . $path, {
        headers => { backend_auth(), 'Content-Type' => 'application/json', Accept => 'application/json' },
        defined $body ? (content => $JSON->encode($body)) : (),
    });
    return ($res->{status}, decode_json_or_undef($res->{content}));
}

# Creates database DB in the backend unless it exists, and lets anyone read
# it: the test locations on COUCHPAGE_BACKEND carry no credentials, as with
# pouchdb-server, and a real CouchDB 3.x makes new databases admin-only. A
# _security object without members makes it public (and changes nothing on
# pouchdb-server, whose databases are public anyway).
sub backend_open_db {
    my ($db) = @_;
    my ($status, $body) = backend_request(PUT => "/$db");
    die "creating $db in the backend failed: $status\n" unless $status =~ /^(201|202|412)$/;
    ($status) = backend_request(PUT => "/$db/_security", {
        admins => { names => [], roles => [] }, members => { names => [], roles => [] } });
    die "opening $db to readers without credentials failed: $status\n" unless $status == 200;
}

# What the backend is, from its welcome: 'couchdb' (Apache CouchDB),
# 'pouchdb-server', or 'double' (the CouchDB view double, t/double/).
# Where they differ, tests state what each one does (e.g. CouchDB reports
# true offsets, pouchdb-server 0).
my %KIND;
sub backend_kind {
    my ($url) = @_;
    $url //= backend_url();
    return $KIND{$url} //= do {
        require HTTP::Tiny;
        my $res = HTTP::Tiny->new(timeout => 10)->get("$url/");
        my $welcome = decode_json_or_undef($res->{content}) // {};
        my $vendor = ref $welcome->{vendor} eq 'HASH' ? $welcome->{vendor}{name} // '' : '';
        $welcome->{'express-pouchdb'} ? 'pouchdb-server'
            : $vendor =~ /test double/ ? 'double'
            : ($welcome->{couchdb} // '') eq 'Welcome' ? 'couchdb'
            : die "$url/ is neither CouchDB nor pouchdb-server: $res->{status} $res->{content}\n";
    };
}

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
