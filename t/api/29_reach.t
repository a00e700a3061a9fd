# SPDX-License-Identifier: Apache-2.0
# What a .htaccess file and a request may reach (issue 37, point 5):
# - CouchPageFields is what leaves the server, in HTML as in JSON: an item
#   that reads another member is refused at -t where the merged config shows
#   it; an item set in .htaccess shows the fields alone;
# - an item template set in .htaccess may read the row, the page and the
#   request, never the server's environment or files (osenv, env, reqenv,
#   file, filesize);
# - CouchPageLinks, which .htaccess may set, never reads more links than the
#   server's CouchPageMaxLinks;
# - a CouchPageSelector value from the request is one whole %{json:...}:
#   any other %{...} is refused at -t;
# - CouchPageTokenSecret holds 32 random bytes, written out or in a file.
# It starts its own httpd (with .htaccess files, which the shared test
# server has none of) on the double.
use strict;
use warnings;

use Apache::Test qw(plan ok);
use Apache::TestUtil qw(t_cmp);
use File::Path qw(make_path);
use File::Spec::Functions qw(catfile);
use File::Temp qw(tempdir);
use HTTP::Tiny ();
use Time::HiRes qw(sleep time);
use CouchPageTest qw(double_url double_load start_own_httpd httpd_config_test
                     decode_json_or_undef error_log_mark error_log_since write_text);

my $root = tempdir(CLEANUP => 1);
my $htdocs = catfile($root, 'htdocs');
my $double = double_url();
my $user = $ENV{COUCHPAGE_DOUBLE_USER} // 'admin';
my $password = $ENV{COUCHPAGE_DOUBLE_PASSWORD} // 'double-admin-secret';
my $VIEW = "$double/reach/_design/d/_view/v";
my $SECRET = 'Jq7vX2mN9pL4wR8tY1zB6cF3hK5sD0gA/+eUoIi=';

double_load('reach', [ map { { _id => sprintf('doc%03d', $_), n => $_, title => "Title $_",
                               date => sprintf('2024-01-%02d', 1 + $_ % 28), secret => "hidden-$_",
                               nested => { secret => "deep-$_" } } } 1 .. 100 ],
            { v => { map => 'function (doc) { emit(doc.n, null); }' } });

# what the environment holds, as docs once suggested passing the reader's
# password (${VAR}): the httpd started below inherits it
$ENV{COUCHPAGE_REACH_PASSWORD} = 'env-password-of-the-reader';
my $secret_file = catfile($root, 'token.secret');
open my $sf, '>', $secret_file or die "$secret_file: $!";
print $sf "$SECRET\n";
close $sf;
chmod 0600, $secret_file;

make_path(map { catfile($htdocs, $_) } qw(fields fields/item fields/link template links links/wide sealed));
my ($port) = start_own_httpd($root, [qw(proxy proxy_http)], <<"CONF");
DocumentRoot "$htdocs"
CouchPageCredentials "$user" "$password"
<Proxy "$double/">
    ProxySet keepalive=On timeout=10
</Proxy>
<Directory "$htdocs/fields">
    SetHandler couchpage
    CouchPageView "$VIEW"
    CouchPageIncludeDocs On
    CouchPageFields title date
    CouchPageSize 2
    AllowOverride FileInfo
</Directory>
<Directory "$htdocs/template">
    SetHandler couchpage
    CouchPageView "$VIEW"
    CouchPageSize 2
    AllowOverride FileInfo
</Directory>
<Directory "$htdocs/links">
    SetHandler couchpage
    CouchPageView "$VIEW"
    CouchPageSize 2
    AllowOverride FileInfo
    LogLevel warn couchpage:debug
</Directory>
<Directory "$htdocs/links/wide">
    CouchPageMaxLinks 8
</Directory>
<Directory "$htdocs/sealed">
    SetHandler couchpage
    CouchPageView "$VIEW"
    CouchPageSize 5
    CouchPageTokenSecret "file:$secret_file"
</Directory>
CONF

my $http = HTTP::Tiny->new(timeout => 30);
sub htaccess { my ($dir, $text) = @_; return write_text(catfile($htdocs, $dir, '.htaccess'), $text) }
sub get {
    my ($path, $accept, %headers) = @_;
    return $http->get("http://127.0.0.1:$port$path",
                      { headers => { Accept => $accept // 'application/json', %headers } });
}
sub error_log_size { return error_log_mark(catfile($root, 'error_log')) }
# The error log's lines after offset MARK, once one matches UNTIL (or after 3 s).
sub error_log_after {
    my ($mark, $until) = @_;
    return join '', map { "$_\n" } error_log_since($mark, file => catfile($root, 'error_log'),
                                                   until => $until, wait => 3);
}
sub items_html { return [ $_[0] =~ m{<li class="couchpage-item">(.*?)</li>}gs ] }

# -t: [what, the configuration after the LoadModule lines, expected message or undef]
my $FIND = 'http://127.0.0.1:5984/db/_find';
my $AT = 'http://127.0.0.1:5984/db/_design/d/_view/v';
sub location { my ($path, $body) = @_; return qq{<Location "$path">\nSetHandler couchpage\n$body\n</Location>\n} }
my @T = (
    # --- CouchPageFields and the item, in one section or merged
    ['a template reading a member outside CouchPageFields, one section',
     location('/x/', qq{CouchPageView $AT\nCouchPageIncludeDocs On\nCouchPageFields title date\nCouchPageItemTemplate "%{couchpage_html:doc.title} %{couchpage_html:doc.secret}"}),
     qr{CouchPageItemTemplate reads doc\.secret, a member CouchPageFields leaves out, and CouchPageFields is set in this section: only its fields leave the server}],
    ['... the template first, then CouchPageFields',
     location('/x/', qq{CouchPageView $AT\nCouchPageIncludeDocs On\nCouchPageItemTemplate "%{couchpage_html:doc}"\nCouchPageFields title}),
     qr{CouchPageItemTemplate reads doc, the whole document, and CouchPageFields is set}],
    ['CouchPageItem whose link reads outside CouchPageFields',
     location('/x/', qq{CouchPageView $AT\nCouchPageIncludeDocs On\nCouchPageFields title\nCouchPageItem doc.title "/p/{doc.secret}"}),
     qr{CouchPageItem reads doc\.secret, a member CouchPageFields leaves out}],
    ['merged: CouchPageFields in <Location /m/>, the template in <Location /m/x/>',
     location('/m/', qq{CouchPageView $AT\nCouchPageIncludeDocs On\nCouchPageFields title date})
       . qq{<Location "/m/x/">\nCouchPageItemTemplate "%{couchpage_date:doc.date} %{couchpage_html:doc.nested.secret}"\n</Location>\n},
     qr{CP0421: CouchPageItemTemplate \(\S+:\d+\) reads doc\.nested\.secret, a member CouchPageFields leaves out \(\S+:\d+\) in <Location "/m/x/">}],
    ['an item of the fields only, merged', location('/m/', qq{CouchPageView $AT\nCouchPageIncludeDocs On\nCouchPageFields title date})
       . qq{<Location "/m/x/">\nCouchPageItemTemplate "%{couchpage_date:doc.date} %{couchpage_html:doc.title} %{couchpage_html:key} %{couchpage_url:id}"\n</Location>\n}, undef],
    ['CouchPageFields * undoes the fields', location('/x/', qq{CouchPageView $AT\nCouchPageIncludeDocs On\nCouchPageFields *\nCouchPageItem doc.secret}), undef],
    # --- the server's own templates may still read the environment
    ['a template in the server configuration reading %{reqenv:...}', location('/x/', qq{CouchPageView $AT\nCouchPageItemTemplate "%{reqenv:SITE} %{couchpage_html:key}"}), undef],
    # --- CouchPageMaxLinks
    ['CouchPageLinks above the default CouchPageMaxLinks 5', location('/x/', qq{CouchPageView $AT\nCouchPageLinks 6}),
     qr{CP0420: CouchPageLinks 6 \(\S+:\d+\) is more than CouchPageMaxLinks 5 \(the default\) in <Location "/x/">}],
    ['merged: CouchPageMaxLinks 3 above, CouchPageLinks 4 below',
     location('/l/', qq{CouchPageView $AT\nCouchPageMaxLinks 3}) . qq{<Location "/l/x/">\nCouchPageLinks 4\n</Location>\n},
     qr{CP0420: CouchPageLinks 4 \(\S+:\d+\) is more than CouchPageMaxLinks 3 \(\S+:\d+\)}],
    ['CouchPageLinks above CouchPageMaxLinks, one section', location('/x/', qq{CouchPageView $AT\nCouchPageMaxLinks 2\nCouchPageLinks 3}),
     qr{CouchPageLinks: 3 is more than CouchPageMaxLinks 2}],
    ['CouchPageMaxLinks below CouchPageLinks, one section', location('/x/', qq{CouchPageView $AT\nCouchPageLinks 3\nCouchPageMaxLinks 2}),
     qr{CouchPageMaxLinks: 2 is less than CouchPageLinks 3}],
    ['CouchPageMaxLinks 21', location('/x/', 'CouchPageMaxLinks 21'), qr{CouchPageMaxLinks: '21' is not a whole number from 0 to 20}],
    ['CouchPageMaxLinks 20 and CouchPageLinks 20', location('/x/', qq{CouchPageView $AT\nCouchPageMaxLinks 20\nCouchPageLinks 20}), undef],
    # --- request values in a selector: one whole %{json:...}
    ['a selector value of a header as it is',
     location('/x/', qq{CouchPageView $FIND\nCouchPageSort date\nCouchPageSelector '{"type":"post","author.name":"%{HTTP:X-Author}"}'}),
     qr{CouchPageSelector: the value '%\{HTTP:X-Author\}' is not one %\{json:\.\.\.\} and nothing else}],
    ['a selector value with text around %{json:...}',
     location('/x/', qq{CouchPageView $FIND\nCouchPageSort date\nCouchPageSelector '{"a":{"\$gt":"x%{json:%{HTTP:X-A}}"}}'}),
     qr{CouchPageSelector: the value 'x%\{json:%\{HTTP:X-A\}\}' is not one %\{json:}],
    ['a selector value of another function', location('/x/', qq{CouchPageView $FIND\nCouchPageSort date\nCouchPageSelector '{"a":["%{tolower:%{HTTP:X-A}}"]}'}),
     qr{CouchPageSelector: the value '%\{tolower:%\{HTTP:X-A\}\}' is not one}],
    ['a selector value of one %{json:...}',
     location('/x/', qq{CouchPageView $FIND\nCouchPageSort date\nCouchPageSelector '{"type":"post","author.name":"%{json:%{HTTP:X-Author}}"}'}), undef],
    # --- CouchPageTokenSecret: 32 random bytes
    ['a secret of 16 characters', location('/x/', qq{CouchPageView $AT\nCouchPageTokenSecret "sixteen chars ok"}),
     qr{CouchPageTokenSecret: a secret must hold at least 32 random bytes: 32 characters or more, of a wide alphabet, with at least 12 different ones \(such as: openssl rand -base64 32\)}],
    ['a phrase of 40 lower-case letters and spaces', location('/x/', qq{CouchPageView $AT\nCouchPageTokenSecret "the secret of the logs test and some more"}),
     qr{CouchPageTokenSecret: a secret must hold at least 32 random bytes}],
    ['a long secret of few characters', location('/x/', qq{CouchPageView $AT\nCouchPageTokenSecret "} . ('aB1!' x 16) . '"'),
     qr{CouchPageTokenSecret: a secret must hold at least 32 random bytes}],
    ['a weak previous secret', location('/x/', qq{CouchPageView $AT\nCouchPageTokenSecret "$SECRET" "abcdefghijklmnop"}),
     qr{CouchPageTokenSecret: the previous secret: a secret must hold at least 32 random bytes}],
    ['openssl rand -base64 32', location('/x/', qq{CouchPageView $AT\nCouchPageTokenSecret "$SECRET"}), undef],
    ['openssl rand -hex 32', location('/x/', qq{CouchPageView $AT\nCouchPageTokenSecret "} . join('', map { sprintf '%02x', ($_ * 37 + 11) % 256 } 1 .. 32) . '"'), undef],
    ['the secret in a file (file:PATH), the previous one too', location('/x/', qq{CouchPageView $AT\nCouchPageTokenSecret "file:$secret_file" "file:$secret_file"}), undef],
    ['a missing secret file', location('/x/', qq{CouchPageView $AT\nCouchPageTokenSecret "file:$root/none"}),
     qr{CouchPageTokenSecret: the secret file \S+/none cannot be opened: No such file or directory}],
);
my @WEAK_FILE = ('a secret file holding a weak secret', "the secret of the logs test\n",
                 qr{CouchPageTokenSecret: a secret must hold at least 32 random bytes});

my @CONFINED = (
    ['osenv', '%{osenv:COUCHPAGE_REACH_PASSWORD}', '%{osenv:...}'],
    ['env', '%{env:COUCHPAGE_REACH_PASSWORD}', '%{env:...}'],
    ['env, as ENV', '%{ENV:COUCHPAGE_REACH_PASSWORD}', '%{ENV:...}'],
    ['reqenv', '%{reqenv:COUCHPAGE_REACH_PASSWORD}', '%{reqenv:...}'],
    ['file', "%{file:$secret_file}", '%{file:...}'],
    ['filesize', "%{filesize:$secret_file}", '%{filesize:...}'],
);

plan tests => scalar @T + 1 + 6 + 2 * @CONFINED + 2 + 6 + 3;

# --- -t ---------------------------------------------------------------------------
for my $case (@T) {
    my ($what, $conf, $want) = @$case;
    my ($status, $out) = httpd_config_test(undef, conf => $conf);
    if (defined $want) {
        ok t_cmp($status . ' ' . $out, qr{^[1-9]\d* .*$want}s, "-t refuses $what");
    }
    else {
        ok t_cmp($status . ' ' . $out, qr{^0 .*Syntax OK}s, "-t accepts $what");
    }
}
{
    my ($what, $text, $want) = @WEAK_FILE;
    my $weak = catfile($root, 'weak.secret');
    open my $fh, '>', $weak or die "$weak: $!";
    print $fh $text;
    close $fh;
    chmod 0600, $weak;
    my ($status, $out) = httpd_config_test(undef, conf => location('/x/', qq{CouchPageView $AT\nCouchPageTokenSecret "file:$weak"}));
    ok t_cmp($status . ' ' . $out, qr{^[1-9]\d* .*$want}s, "-t refuses $what");
}

# --- CouchPageFields: what leaves the server, in HTML too ----------------------
htaccess('fields', qq{CouchPageFormat html\nCouchPageItemTemplate "[%{couchpage_html:doc.title}|%{couchpage_html:doc.secret}|%{couchpage_html:doc.nested.secret}|%{couchpage_html:doc}]"\n});
my $res = get('/fields/', 'text/html');
my $items = items_html($res->{content});
ok t_cmp($res->{status} . ' ' . scalar(@$items), '200 2', '.htaccess template where CouchPageFields title date: a page of 2');
ok t_cmp($items->[0] // '', '[Title 1|||{&quot;title&quot;:&quot;Title 1&quot;,&quot;date&quot;:&quot;2024-01-02&quot;}]',
         'doc.title shows; doc.secret and doc.nested.secret nothing; doc only the fields');
ok t_cmp($res->{content} =~ /hidden-|deep-/ ? 'leaked' : 'kept', 'kept', 'no member outside the fields in the page');
htaccess('fields/item', qq{CouchPageFormat html\nCouchPageItem doc.secret\n});
$res = get('/fields/item/', 'text/html');
ok t_cmp($res->{status} . ' ' . join(',', @{ items_html($res->{content}) }), '200 ,',
         '.htaccess CouchPageItem doc.secret: 200, every item empty');
htaccess('fields/link', qq{CouchPageFormat auto\nCouchPageItem doc.title "/p/{doc.secret}/{doc.title}"\n});
$res = get('/fields/link/', 'text/html');
ok t_cmp($res->{status} . ' ' . join(',', @{ items_html($res->{content}) }),
         '200 <a href="/p//Title%201">Title 1</a>,<a href="/p//Title%202">Title 2</a>',
         '.htaccess CouchPageItem with a link of doc.secret: the placeholder empty');
$res = get('/fields/link/', 'application/json');
my $page = decode_json_or_undef($res->{content});
ok t_cmp(ref $page eq 'HASH' ? join(',', map { join '+', sort keys %{ $_->{doc} } } @{ $page->{items} }) : "no page: $res->{status} $res->{content}",
         'date+title,date+title', 'the JSON page of the same location: the fields alone, as ever');

# --- .htaccess templates: the row, the page and the request; not the environment or files
for my $case (@CONFINED) {
    my ($what, $expr, $named) = @$case;
    my $mark = error_log_size();
    my $file = htaccess('template', qq{CouchPageFormat html\nCouchPageItemTemplate "%{couchpage_html:key} $expr"\n});
    $res = get('/template/', 'text/html');
    ok t_cmp($res->{status} . ' ' . ($res->{content} =~ /env-password|Jq7vX2mN/ ? 'leaked' : 'kept'), '500 kept',
             ".htaccess template with %{$what:...}: 500, nothing of it shown");
    ok t_cmp(error_log_after($mark, qr/\.htaccess/),
             qr{\Q$file\E: CouchPageItemTemplate: '.*' is not a valid template: \Q$named\E reads the server's environment or files, which a template set in \.htaccess may not: it may read the row, the page and the request},
             "%{$what:...}: the error log names the .htaccess file and why");
}
htaccess('template', qq{CouchPageFormat html\nCouchPageItemTemplate "<b>%{couchpage_html:key}</b> %{couchpage_escape:%{HTTP:X-Greeting}} %{tolower:%{REQUEST_METHOD}}"\n});
$res = get('/template/', 'text/html', 'X-Greeting' => '<hi>');
ok t_cmp($res->{status} . ' ' . join(',', @{ items_html($res->{content}) }), '200 <b>1</b> &lt;hi&gt; get,<b>2</b> &lt;hi&gt; get',
         '.htaccess template reading the row and the request: served');
htaccess('template', qq{CouchPageFormat html\nCouchPageItemTemplate "%{couchpage_html:key}"\n});
ok t_cmp(get('/template/', 'text/html')->{status}, 200, '... and a plain one');

# --- CouchPageLinks in .htaccess: never above CouchPageMaxLinks ----------------
# [directory, .htaccess CouchPageLinks] -> the first page's links and its query's limit
sub links_of {
    my ($dir, $links) = @_;
    htaccess($dir, "CouchPageLinks $links\n");
    my $mark = error_log_size();
    my $res = get("/$dir/");
    my $page = decode_json_or_undef($res->{content});
    my ($limit) = error_log_after($mark, qr/CP0150/) =~ /CP0150: backend request 1 of \d+: GET \S*[?&]limit=(\d+)/;
    return ($res->{status}, ref $page eq 'HASH' && ref $page->{pages} eq 'ARRAY' ? scalar @{ $page->{pages} } : -1, $limit // -1);
}
my @three = links_of('links', 3);
my @five = links_of('links', 5);
my @twenty = links_of('links', 20);
ok t_cmp("@three", qr{^200 4 \d+$}, '.htaccess CouchPageLinks 3: this page and 3 more');
ok t_cmp("@twenty", "@five", '.htaccess CouchPageLinks 20 under the default CouchPageMaxLinks 5: the links and query of CouchPageLinks 5');
ok t_cmp($five[1], 6, '... this page and 5 more');
ok t_cmp($three[2] < $five[2] ? 'fewer' : "$three[2] vs $five[2]", 'fewer', "... and the query of 3 links reads fewer rows ($three[2] < $five[2])");
my @wide = links_of('links/wide', 20);
ok t_cmp("$wide[0] $wide[1]", '200 9', 'where the server sets CouchPageMaxLinks 8: .htaccess CouchPageLinks 20 shows 8 more');
my $mark = error_log_size();
my $file = htaccess('links', "CouchPageMaxLinks 20\n");
ok t_cmp(get('/links/')->{status} . ' ' . error_log_after($mark, qr/not allowed here/), qr{^500 .*\Q$file\E: CouchPageMaxLinks not allowed here}s,
         'CouchPageMaxLinks in .htaccess: 500, the log names it');

# --- a sealed location whose secret is in a file --------------------------------
$res = get('/sealed/');
$page = decode_json_or_undef($res->{content});
my $next = ref $page eq 'HASH' ? $page->{next} : undef;
ok t_cmp($res->{status} . ' ' . (defined $next && $next !~ /^[\[{"]/ ? 'sealed' : 'plain'), '200 sealed',
         'CouchPageTokenSecret file:PATH: the page\'s next token is sealed');
$res = $http->get("http://127.0.0.1:$port/sealed/?start=" . ($next // ''), { headers => { Accept => 'application/json' } });
$page = decode_json_or_undef($res->{content});
ok t_cmp($res->{status} . ' ' . (ref $page eq 'HASH' ? join(',', map { $_->{key} } @{ $page->{items} }) : 'no page'),
         '200 6,7,8,9,10', '... and opens: the second page');
ok t_cmp(catfile($root, 'error_log') && (error_log_after(0, qr/CP0134/) =~ /CP0134/ ? 'warned' : 'quiet'), 'quiet',
         'a secret file of its owner alone (0600): no warning');
