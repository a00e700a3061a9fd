# SPDX-License-Identifier: Apache-2.0
# What the _find tests (27_find.t, 33_find_ties.t; the counted walks of
# 34_counted.t and 37_grouped_counted.t) share: loading checked,
# the backend's own order of a query read whole, and a walk of a location
# by its own links, compared with that order.
package CouchPageFind;
use strict;
use warnings;

use Exporter 'import';
use JSON::PP ();
use CouchPageTest qw(get_json with_args backend_request backend_kind);

our @EXPORT_OK = qw(must reference_ids ids walk same_list edge_rows bounded_count
                    numbers_agree html_text);

my $JSON = JSON::PP->new->utf8->canonical;

# The body of a backend answer that must succeed; the file dies otherwise.
sub must {
    my ($what, $status, $body) = @_;
    die "$what: $status " . $JSON->encode($body // {}) . "\n" unless $status =~ /^20[012]$/;
    return $body;
}

# What a count of at most cap rows says of a _find location of database db
# whose rows are ids (the backend's order of its selector) through the JSON
# index whose view is view (_design/D/_view/V) on one field: (total,
# 'exact' or 'at least'). On CouchDB the count reads that view's first cap
# + 1 rows in the location's order (desc: descending) and counts the rows
# before the group of the (cap + 1)-th row's value that match; where the
# view holds at most cap rows, all that match. Elsewhere (no index's view
# bounds it) the matches up to cap + 1.
sub bounded_count {
    my ($db, $view, $ids, $cap, $desc) = @_;
    my $matches = @$ids;
    return $matches > $cap ? ($cap, 'at least') : ($matches, 'exact')
        unless backend_kind() eq 'couchdb';
    my $body = must('the index\'s view', backend_request(GET => "/$db/$view?reduce=false"
                                                          . ($desc ? '&descending=true' : '')));
    my @rows = @{ $body->{rows} };
    return ($matches, 'exact') if @rows <= $cap;
    my %match = map { $_ => 1 } @$ids;
    my $group = $JSON->encode($rows[$cap]{key});
    my $before = grep { $match{ $_->{id} } && $JSON->encode($_->{key}) ne $group } @rows[0 .. $cap - 1];
    return ($before, 'at least');
}

# The backend's own order of a query on database db, every row at once.
sub reference_ids {
    my ($db, $selector, $field, $dir) = @_;
    my $body = must('reference _find', backend_request(POST => "/$db/_find",
        { selector => $selector, sort => [{ $field => $dir }], limit => 100000 }));
    return map { $_->{_id} } @{ $body->{docs} };
}

sub ids { my ($page) = @_; return map { $_->{_id} } @{ $page->{items} || [] } }

# Follows next (or prev from the Last page, back => 1) to the end, at most
# 1,000 pages: (ids in the location's order, the pages, any status but 200
# seen). each: called with every page; headers: sent with every request.
sub walk {
    my ($path, %opt) = @_;
    my $back = $opt{back};
    my @headers = @{ $opt{headers} // [] };
    my ($token, @ids, @pages, @bad) = ($back ? 'last' : undef);
    for (1 .. 1000) {
        my ($status, $body) = get_json(with_args($path, start => $token), @headers);
        if ($status != 200 or ref $body ne 'HASH') { push @bad, $status; last }
        push @pages, $body;
        if ($back) { unshift @ids, ids($body) } else { push @ids, ids($body) }
        $opt{each}->($body) if $opt{each};
        $token = $body->{ $back ? 'prev' : 'next' };
        last unless defined $token;
    }
    return (\@ids, \@pages, \@bad);
}

# The last and the first item of a page of more than two (the rows its
# next and prev tokens point at, which a live walk changes); () otherwise.
sub edge_rows {
    my ($page) = @_;
    my @items = @{ $page->{items} };
    return @items > 2 ? ($items[-1], $items[0]) : ();
}

# Whether two lists of ids are the same; where not, both are shown.
sub same_list {
    my ($got, $want, $what) = @_;
    my $same = @$got == @$want && !grep { $got->[$_] ne $want->[$_] } 0 .. $#$want;
    print STDERR "# $what: got ", scalar(@$got), " ids (@$got[0 .. ($#$got < 9 ? $#$got : 9)] ...), want ",
        scalar(@$want), " (@$want[0 .. ($#$want < 9 ? $#$want : 9)] ...)\n" unless $same;
    return $same;
}

# Whether each page of a counted walk (pages from the first, or, back, from
# the Last page) is numbered as the backend's whole order want (the names
# of its rows, as names(page) gives a page's) puts it, size rows a page:
# its rows where that order puts them, total_rows that order's length,
# count exact, the first and the Last page counting, the others carrying
# the count. The first few pages that are not are written as diagnostics
# under what.
sub numbers_agree {
    my ($pages, $want, $back, $what, $size, $names) = @_;
    my $total = @$want;
    my $last_rows = $total % $size || $size;
    my @bad;
    for my $i (0 .. $#$pages) {
        my $page = $pages->[$i];
        # from the Last page back: it holds what the pages before it leave
        my $first = $back ? $total - $last_rows - $i * $size + 1 : $i * $size + 1;
        my $n = @{ $page->{items} };
        my $ok = ($page->{numbering} // '') eq 'absolute' && ($page->{count} // '') eq 'exact'
            && ($page->{total_rows} // -1) == $total && ($page->{first_row} // -1) == $first
            && ($page->{last_row} // -1) == $first + $n - 1
            && join(' ', $names->($page)) eq join(' ', @$want[$first - 1 .. $first + $n - 2])
            && ($page->{last_page} // -1) == int(($total + $size - 1) / $size)
            # the first and the Last page count; the others carry the count
            && (($i == 0) == !defined $page->{count_as_of});
        push @bad, "page $i: " . $JSON->encode({ %$page, items => [$names->($page)], pages => undef })
            unless $ok;
    }
    print STDERR "# $what: $_\n" for @bad[0 .. ($#bad < 2 ? $#bad : 2)];
    return !@bad;
}

# An HTML answer's text, without its tags.
sub html_text { my ($res) = @_; return $res->content =~ s/<[^>]*>//gr }

1;
