# SPDX-License-Identifier: Apache-2.0
# The module's version, configure's (AC_INIT in configure.ac, its one
# source), where httpd's modules show theirs: in the built module's bytes,
# in the Server header under ServerTokens Full (and not under Prod), in
# mod_status's report (the description, the CouchPage section and its
# ?auto line), and in one line at info in the error log at start-up. Two
# httpds of the test's own: ServerTokens is server-wide.
use strict;
use warnings;

use Apache::Test qw(plan ok);
use Apache::TestUtil qw(t_cmp);
use File::Spec::Functions qw(catfile);
use File::Temp qw(tempdir);
use HTTP::Tiny ();
use CouchPageTest qw(start_own_httpd);

plan tests => 9;

my $top = Apache::Test::vars()->{top_dir};
my $configure_ac = do { local (@ARGV, $/) = catfile($top, 'configure.ac'); <> };
my ($VERSION) = $configure_ac =~ /^AC_INIT\(\[mod_couchpage\], \[([^\]]+)\]/m
    or die "configure.ac has no AC_INIT([mod_couchpage], [VERSION])\n";
my $COMPONENT = "couchpage/$VERSION";

my $module = catfile($top, '.libs', 'mod_couchpage.so');
my $strings = `strings '$module'`;
die "strings $module: $?\n" if $?;
ok t_cmp(scalar(grep { index($_, $COMPONENT) >= 0 } split /\n/, $strings), 1,
         "strings mod_couchpage.so shows $COMPONENT");

sub get {
    my ($port, $path) = @_;
    return HTTP::Tiny->new(timeout => 30)->get("http://127.0.0.1:$port$path");
}

my $STATUS = <<'CONF';
<Location "/server-status">
    SetHandler server-status
</Location>
CONF

my $root = tempdir('couchpage-version-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my ($port) = start_own_httpd($root, [qw(status slotmem_shm)], "ServerTokens Full\n$STATUS");
my $res = get($port, '/server-status?auto');
ok t_cmp($res->{headers}{server} // '', qr{^Apache/\S+ .*\Q$COMPONENT\E(?: |$)},
         'ServerTokens Full: the Server header names the module and its version');
my %auto = map { /^([^:]+):\s*(.*)$/ ? ($1 => $2) : () } split /\n/, $res->{content} // '';
ok t_cmp($auto{CouchPageVersion} // '', $VERSION, 'server-status?auto: CouchPageVersion');
ok t_cmp($auto{ServerVersion} // '', qr{\Q$COMPONENT\E}, 'server-status?auto: the server\'s version too');
my $html = get($port, '/server-status')->{content} // '';
ok t_cmp($html, qr{<h2>CouchPage</h2>\s*<p>mod_couchpage \Q$VERSION\E</p>},
         'the HTML report\'s CouchPage section shows the version');
open my $fh, '<', "$root/error_log" or die "$root/error_log: $!\n";
my @loaded = grep { /CP0380: / } <$fh>;
close $fh;
ok t_cmp(scalar @loaded, 1, 'the error log has one start-up line');
ok t_cmp($loaded[0] // '', qr{\[couchpage:info\] .*CP0380: mod_couchpage \Q$VERSION\E loaded$},
         'at info, with the version');

# Under ServerTokens Prod the header is httpd's product alone; mod_status
# still shows the version to whom may read it.
my $root_prod = tempdir('couchpage-version-prod-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my ($port_prod) = start_own_httpd($root_prod, [qw(status)], "ServerTokens Prod\n$STATUS");
$res = get($port_prod, '/server-status?auto');
ok t_cmp($res->{headers}{server} // '', 'Apache', 'ServerTokens Prod: the Server header is Apache alone');
%auto = map { /^([^:]+):\s*(.*)$/ ? ($1 => $2) : () } split /\n/, $res->{content} // '';
ok t_cmp($auto{CouchPageVersion} // '', $VERSION,
         'server-status?auto: CouchPageVersion, with the section\'s counters off');
