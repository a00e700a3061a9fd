# SPDX-License-Identifier: Apache-2.0
# Backend connections are reused: paging under load opens no new TCP
# connection per page (mod_proxy_http closes a subrequest's backend
# connection unless it has a kept body, and pools only for a defined
# worker). Closed connections leave TIME_WAIT sockets behind; pooled ones
# do not.
use strict;
use warnings;

use Apache::Test qw(plan ok);
use Apache::TestUtil qw(t_cmp);
use CouchPageTest qw(get_json time_wait_count with_args);
use LWP::UserAgent ();
use POSIX ();

plan tests => 3;

my ($status, $first) = get_json('/bands/?limit=5');
ok t_cmp($status, 200, 'the first page answers');

my $base = Apache::TestRequest::hostport();
my $page2 = "http://$base" . with_args('/bands/', start => $first->{next}, limit => 5);
my $before = time_wait_count();

# 4 clients, 100 later pages each: 800 backend queries
my ($clients, $per_client) = (4, 100);
my @pids;
for (1 .. $clients) {
    my $pid = fork // die "fork: $!";
    if ($pid == 0) {
        my $ua = LWP::UserAgent->new(keep_alive => 1, timeout => 30);
        my $failures = 0;
        for (1 .. $per_client) {
            $failures++ unless $ua->get($page2)->code == 200;
        }
        POSIX::_exit($failures ? 1 : 0);
    }
    push @pids, $pid;
}
my $failed = 0;
for (@pids) { waitpid($_, 0); $failed++ if $? }
ok t_cmp($failed, 0, "$clients clients x $per_client pages all answered 200");

my $after = time_wait_count();
my $new = $after - $before;
# A connection per query would leave about 800 behind.
ok t_cmp($new < 10 ? 'pooled' : "$new new TIME_WAIT sockets", 'pooled',
         "at most a few new TIME_WAIT sockets to the backend after 800 queries (saw $new)");
