#!/usr/bin/perl
# SPDX-License-Identifier: Apache-2.0
# Self cost per object and function from a callgrind output file (the first
# event, Ir): prints "IR<TAB>OBJECT<TAB>FUNCTION", one line per pair.
# Used by bench/run. Reads the file itself rather than callgrind_annotate's
# listing, which names a function's object on one of its lines only.
#
#   perl bench/callgrind-self.pl callgrind.out
#
# Format (valgrind's docs, "Callgrind Format Specification"): ob=, fl=, fi=,
# fe=, fn= set the current object, file and function ("(id) name" defines a
# compressed name, "(id)" refers to it); cob=, cfi=, cfn= name a call's
# target; a cost line after "calls=" is the call's inclusive cost, not self
# cost; other cost lines are "POSITION COST...". Recursion levels ("fn'2")
# are folded into the function.
use strict;
use warnings;

my (%names, %self);
my ($ob, $fn) = ('?', '?');
my $call_cost_next = 0;

sub name {
    my ($kind, $v) = @_;
    if ($v =~ /^\((\d+)\)\s*(.*)$/) {
        my ($id, $n) = ($1, $2);
        if (length $n) {
            $names{$kind}{$id} = $n;
            return $n;
        }
        return $names{$kind}{$id} // "($id)";
    }
    return $v;
}

while (<>) {
    chomp;
    if (/^(c?)ob=(.*)$/) {
        my $n = name('ob', $2);
        $ob = $n unless $1;
    }
    elsif (/^(c?)fn=(.*)$/) {
        my $n = name('fn', $2);
        $fn = $n unless $1;
    }
    elsif (/^(?:fl|fi|fe|cfi|cfl)=(.*)$/) {
        name('fl', $1);
    }
    elsif (/^calls=/) {
        $call_cost_next = 1;
    }
    elsif (/^(?:[+\-]?\d+|\*)\s+(\d+)/) {
        my $cost = $1;
        if ($call_cost_next) {
            $call_cost_next = 0;
            next;
        }
        (my $f = $fn) =~ s/'\d+$//;
        $self{"$ob\t$f"} += $cost;
    }
}
print "$self{$_}\t$_\n" for sort keys %self;
