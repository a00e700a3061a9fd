# SPDX-License-Identifier: Apache-2.0
package CouchPageHTML;
# HTML helpers of mod_couchpage's Apache::Test files: parse with parse5 (the
# WHATWG-conformant parser, through t/browser/html-check.js and node), then
# look at the tree it built.
#
#   use CouchPageHTML qw(parse_html elements by_class text_of has_class link_header);
#   my ($errors, $tree) = parse_html($html);               # a fragment
#   my ($errors, $tree) = parse_html($html, document => 1);
#   my @items = by_class($tree, 'couchpage-item');
#   text_of($items[0]);                                    # 'Biffy Clyro'
#
# $errors is an array of 'LINE:COL CODE' strings (empty when the HTML parses
# without error); $tree is html-check.js's JSON: {tag, attrs, children} for
# an element, {text} for text. parse_html dies if node or parse5 cannot run.
use strict;
use warnings;

use Exporter 'import';
use JSON::PP ();
use File::Temp qw(tempfile);
use File::Spec::Functions qw(catfile);
use POSIX ();
use Apache::Test ();

our @EXPORT_OK = qw(
    parse_html elements by_class by_tag has_class text_of child_elements
    link_header html_escape
);

my $JSON = JSON::PP->new->utf8;

# Text as the module escapes it for HTML (undef: ''; a NUL as U+FFFD, as
# the module shows a string holding one).
sub html_escape {
    my ($s) = @_;
    return '' unless defined $s;
    $s =~ s/\0/\x{FFFD}/g;
    $s =~ s/&/&amp;/g;
    $s =~ s/</&lt;/g;
    $s =~ s/>/&gt;/g;
    $s =~ s/"/&quot;/g;
    $s =~ s/'/&#39;/g;
    return $s;
}

sub html_check_script {
    return catfile(Apache::Test::vars('top_dir'), 't', 'browser', 'html-check.js');
}

sub node_bin {
    return $ENV{COUCHPAGE_NODE} if $ENV{COUCHPAGE_NODE};
    for (split /:/, $ENV{PATH} // '') {
        return "$_/node" if -x "$_/node";
    }
    return -x '/usr/bin/node' ? '/usr/bin/node' : 'node';
}

# (errors, tree): runs html-check.js --json on the HTML (a byte string, UTF-8).
sub parse_html {
    my ($html, %opt) = @_;
    my ($in, $in_path) = tempfile('couchpage-html-XXXXXX', TMPDIR => 1, UNLINK => 1);
    binmode $in;
    print $in $html;
    close $in;
    my (undef, $out_path) = tempfile('couchpage-html-XXXXXX', TMPDIR => 1, UNLINK => 1);
    my (undef, $err_path) = tempfile('couchpage-html-XXXXXX', TMPDIR => 1, UNLINK => 1);
    my @cmd = (node_bin(), html_check_script(), '--json', $opt{document} ? '--document' : ());
    my $pid = fork // die "fork: $!\n";
    if ($pid == 0) {
        open STDIN, '<', $in_path or POSIX::_exit(126);
        open STDOUT, '>', $out_path or POSIX::_exit(126);
        open STDERR, '>', $err_path or POSIX::_exit(126);
        { exec @cmd };
        POSIX::_exit(127);
    }
    waitpid($pid, 0);
    my $rc = $? >> 8;
    my $out = do { local $/; open my $fh, '<', $out_path or die "$out_path: $!\n"; <$fh> } // '';
    my $err = do { local $/; open my $fh, '<', $err_path or die "$err_path: $!\n"; <$fh> } // '';
    my $result = eval { $JSON->decode($out) };
    die "html-check.js failed (exit $rc): $err\n" unless ref $result eq 'HASH' and ($rc == 0 or $rc == 1);
    my @errors = map { "$_->{line}:$_->{col} $_->{code}" } @{ $result->{errors} };
    return (\@errors, $result->{tree});
}

# Every element under (and including) a node, in document order.
sub elements {
    my ($node) = @_;
    return () unless ref $node eq 'HASH' and exists $node->{tag};
    my @out = $node->{tag} =~ /^#/ ? () : ($node);
    push @out, elements($_) for @{ $node->{children} || [] };
    return @out;
}

sub has_class {
    my ($el, $class) = @_;
    my $classes = $el->{attrs}{class} // return 0;
    return scalar grep { $_ eq $class } split ' ', $classes;
}

sub by_class {
    my ($node, $class) = @_;
    return grep { has_class($_, $class) } elements($node);
}

sub by_tag {
    my ($node, $tag) = @_;
    return grep { $_->{tag} eq $tag } elements($node);
}

# The element children of a node.
sub child_elements {
    my ($node) = @_;
    return grep { exists $_->{tag} } @{ $node->{children} || [] };
}

# The text of a node and its descendants, whitespace at both ends trimmed.
sub text_of {
    my ($node) = @_;
    my $walk;
    $walk = sub {
        my ($n) = @_;
        return $n->{text} if exists $n->{text};
        return join '', map { $walk->($_) } @{ $n->{children} || [] };
    };
    my $text = $walk->($node);
    $text =~ s/^\s+|\s+$//g;
    return $text;
}

# An RFC 8288 Link header as { rel => url }: '<url>; rel="next", ...'.
sub link_header {
    my ($value) = @_;
    my %links;
    return \%links unless defined $value;
    while ($value =~ /<([^>]*)>\s*;\s*rel="?([^";,]+)"?/g) {
        $links{$2} = $1;
    }
    return \%links;
}

1;
