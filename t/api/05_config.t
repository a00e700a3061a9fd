# SPDX-License-Identifier: Apache-2.0
# Directives are checked when httpd reads its configuration: `httpd -t`
# (apachectl -t) names the directive and the reason for a bad value.
use strict;
use warnings FATAL => 'all';

use Apache::Test qw(plan ok);
use Apache::TestUtil qw(t_cmp);
use File::Spec::Functions qw(catfile);
use File::Temp qw(tempdir);
use CouchPageTest qw(httpd_config_test);

my $vars = Apache::Test::vars();
my $httpd = $vars->{httpd};
my $module = catfile($vars->{top_dir}, '.libs', 'mod_couchpage.so');
chomp(my $modules = `'$vars->{apxs}' -q LIBEXECDIR 2>/dev/null` || '/usr/lib/apache2/modules');
my $dir = tempdir(CLEANUP => 1);

my $VIEW = 'http://127.0.0.1:5984/db/_design/d/_view/v';
# [directives inside <Location>, expected message (regexp) or undef for Syntax OK]
my @CASES = (
    ["CouchPageView $VIEW\nCouchPageSize 5\nCouchPageMaxSize 50\nCouchPageCredentials reader s3cret", undef],
    ['CouchPageView /db/_design/d/_view/v', qr{CouchPageView: '/db/_design/d/_view/v' must be an absolute URL}],
    ['CouchPageView http://127.0.0.1:5984/db', qr{CouchPageView: .* must name a view}],
    ["CouchPageView $VIEW?limit=3", qr{CouchPageView: .* must not have a query string}],
    ['CouchPageView http://admin:pw@127.0.0.1:5984/db/_all_docs', qr{must not carry credentials; use CouchPageCredentials}],
    ['CouchPageSize 0', qr{CouchPageSize: '0' is not a whole number from 1 to 10000}],
    ['CouchPageSize ten', qr{CouchPageSize: 'ten' is not a whole number}],
    ['CouchPageSize 20000', qr{CouchPageSize: '20000' is not a whole number from 1 to 10000}],
    ['CouchPageMaxSize -1', qr{CouchPageMaxSize: '-1' is not a whole number}],
    ["CouchPageMaxSize 10\nCouchPageSize 20", qr{CouchPageSize: 20 is larger than CouchPageMaxSize 10}],
    ["CouchPageSize 20\nCouchPageMaxSize 10", qr{CouchPageMaxSize: 10 is smaller than CouchPageSize 20}],
    ['CouchPageCredentials a:b secret', qr{CouchPageCredentials: the user name must be non-empty and have no colon}],
    ['CouchPageCredentials onlyuser', qr{CouchPageCredentials takes two arguments}],
    ['CouchPageMaxResponse 10', qr{CouchPageMaxResponse: '10' is not a whole number from 1024}],
    # a bound without %{...} must be JSON as written
    [q|CouchPageRange "[1" "2"|, qr{CouchPageRange: LOW '\[1' is not JSON \(.+\); a bound that varies per request is an expression with %\{\.\.\.\}}],
    [q|CouchPageRange '"a"' zebra|, qr{CouchPageRange: HIGH 'zebra' is not JSON}],
    [q|CouchPageRange '[%{json:%{env:X}, 0]' ''|, qr{CouchPageRange: LOW '\[%\{json:%\{env:X\}, 0\]' is not a valid expression}],
    ["CouchPageView http://127.0.0.1:5984/db/_all_docs\nCouchPageRange 5 ''", qr{CouchPageRange: LOW '5' is not a document id}],
    ["CouchPageRange '\"a\"' '[\"b\"]'\nCouchPageView http://127.0.0.1:5984/db/_all_docs", qr{CouchPageRange: HIGH '\[\"b\"\]' is not a document id}],
    ["CouchPageView $VIEW\nCouchPageRange '[%{json:%{env:X}}, 0]' '[\"b\", {}]'", undef],
    ["CouchPageView $VIEW\nCouchPageMaxAge 0\nCouchPageMaxAge 600 public\nCouchPageMaxAge 60 Private", undef],
    ['CouchPageMaxAge -1', qr{CouchPageMaxAge: '-1' is not a whole number from 0 to 31536000}],
    ['CouchPageMaxAge 1h', qr{CouchPageMaxAge: '1h' is not a whole number}],
    ['CouchPageMaxAge 99999999', qr{CouchPageMaxAge: '99999999' is not a whole number from 0 to 31536000}],
    ['CouchPageMaxAge 60 shared', qr{CouchPageMaxAge: 'shared' is neither public nor private}],
    ["CouchPageView $VIEW\nCouchPageUpdate lazy\nCouchPageUpdate False\nCouchPageStable On", undef],
    ['CouchPageUpdate later', qr{CouchPageUpdate: 'later' is not true, false or lazy}],
    ['CouchPageStable yes', qr{CouchPageStable must be On or Off}],
    # CouchPageFields: names of document members (bytes as written, UTF-8), or * alone
    ["CouchPageView $VIEW\nCouchPageIncludeDocs On\nCouchPageFields title date summary", undef],
    ["CouchPageView $VIEW\nCouchPageFields *", undef],
    ["CouchPageView $VIEW\nCouchPageFields \"r\xc3\xa9sum\xc3\xa9\" 'two words' _id \xf0\x9f\x98\x80", undef],
    ['CouchPageFields * title', qr{CouchPageFields: \* \(every member\) stands alone}],
    ['CouchPageFields title *', qr{CouchPageFields: \* \(every member\) stands alone}],
    ['CouchPageFields * *', qr{CouchPageFields: \* \(every member\) stands alone}],
    ['CouchPageFields title date title', qr{CouchPageFields: 'title' is named twice}],
    ['CouchPageFields', qr{CouchPageFields takes the names of document members, or \*}],
    # the empty name is a name (JSON allows it, CouchDB keeps it), once
    ["CouchPageView $VIEW\nCouchPageFields \"\" title", undef],
    ['CouchPageFields title "" ""', qr{CouchPageFields: '' is named twice}],
    ['CouchPageFields "*" title', qr{CouchPageFields: \* \(every member\) stands alone}],
    # a byte shown as \xHH (httpd -t escapes the backslash once more)
    ["CouchPageFields ti\xfftle", qr{CouchPageFields: 'ti\\+xfftle' is not valid UTF-8}],
    ["CouchPageFields title \xc0\xaf", qr{CouchPageFields: '\\+xc0\\+xaf' is not valid UTF-8}],
    ["CouchPageFields \xed\xa0\x80", qr{CouchPageFields: '\\+xed\\+xa0\\+x80' is not valid UTF-8}],
    ["CouchPageFields \xe2\x82", qr{CouchPageFields: '\\+xe2\\+x82' is not valid UTF-8}],
);

plan tests => scalar @CASES + 1;

for my $case (@CASES) {
    my ($directives, $expect) = @$case;
    my ($status, $out) = httpd_config_test($directives);
    my $first = (split /\n/, $directives)[0];
    if (defined $expect) {
        ok t_cmp($status != 0 && $out =~ $expect ? 'refused' : "status $status: $out", 'refused',
                 "httpd -t refuses '$first' and says why");
    }
    else {
        ok t_cmp($status == 0 && $out =~ /Syntax OK/ ? 'ok' : "status $status: $out", 'ok',
                 'httpd -t accepts a valid configuration');
    }
}

# the password is never echoed, even when the directive is refused
my $conf = catfile($dir, 'secret.conf');
open my $fh, '>', $conf or die;
print $fh "ServerRoot \"$dir\"\nServerName localhost\nLoadModule mpm_event_module \"$modules/mod_mpm_event.so\"\n"
        . "LoadModule couchpage_module \"$module\"\n<Location /x/>\nCouchPageCredentials a:b TopSecretPassword\n</Location>\n";
close $fh;
my $out = `'$httpd' -t -f '$conf' 2>&1`;
ok t_cmp($out =~ /TopSecretPassword/ ? 'echoed' : 'not echoed', 'not echoed',
         'a refused CouchPageCredentials does not echo the password');
