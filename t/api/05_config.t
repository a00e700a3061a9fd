# SPDX-License-Identifier: Apache-2.0
# Directives are checked when httpd reads its configuration: `httpd -t`
# (apachectl -t) names the directive and the reason for a bad value. What
# only the merged configuration shows (SetHandler couchpage without a view,
# a page size above the maximum in force) and view URLs whose proxy
# modules are not loaded are refused too, naming the directive and the
# section; correct configurations of nested sections start and serve.
use strict;
use warnings;

use Apache::Test qw(plan ok);
use Apache::TestUtil qw(t_cmp);
use File::Spec::Functions qw(catfile);
use File::Temp qw(tempdir);
use HTTP::Tiny ();
use CouchPageTest qw(httpd_config_test start_own_httpd backend_url decode_json_or_undef
                     double_url double_load);

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
    ['CouchPageView http://admin:pw@127.0.0.1:5984/db/_all_docs', qr{CouchPageView: 'http://\*\*\*\@127\.0\.0\.1:5984/db/_all_docs' must not carry credentials; use CouchPageCredentials}],
    ['CouchPageView ftp://127.0.0.1/db/_all_docs', qr{CouchPageView: 'ftp://127.0.0.1/db/_all_docs' has a scheme the module does not serve; use http://, https:// or balancer://}],
    # the examples' placeholder secret, as the current or the previous one
    ['CouchPageTokenSecret "replace with a long random string"', qr{CouchPageTokenSecret: the examples' placeholder is no secret; replace it}],
    ['CouchPageTokenSecret "R2tGu1n0kqEJp4y2cW6Zb8Xh3LfVd9sTq7Am5PeNoYw=" "Replace with a long random string"', qr{CouchPageTokenSecret: the previous secret: the examples' placeholder is no secret}],
    ["CouchPageView $VIEW\nCouchPageTokenSecret \"R2tGu1n0kqEJp4y2cW6Zb8Xh3LfVd9sTq7Am5PeNoYw=\" \"Wc7Hn2Lq9Vx4Kd1Ft6Zs8Pb3Jm0Ry5Ge2Ua7Ni4Ok6=\"", undef],
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
    # two words, each as httpd quotes them ('' for an open side), no more, no fewer
    [q|CouchPageRange '"a"'|, qr{CouchPageRange takes two arguments, LOW and HIGH}],
    [q|CouchPageRange   ''  |, qr{CouchPageRange takes two arguments, LOW and HIGH}],
    [q|CouchPageRange 1 2 3|, qr{CouchPageRange takes two arguments, LOW and HIGH}],
    [q|CouchPageRange|, qr{CouchPageRange takes two arguments, LOW and HIGH}],
    ["CouchPageView $VIEW\nCouchPageRange '' ''  ", undef],
    # a keyword, case-blind as httpd's own
    ["CouchPageView $VIEW\nCouchPageFormat HTML", undef],
    ["CouchPageView $VIEW\nCouchPageFormat Auto", undef],
    ['CouchPageFormat xml', qr{CouchPageFormat: 'xml' is not json, html or auto}],
    [q|CouchPageRange '[%{json:%{env:X}, 0]' ''|, qr{CouchPageRange: LOW '\[%\{json:%\{env:X\}, 0\]' is not a valid expression}],
    ["CouchPageView http://127.0.0.1:5984/db/_all_docs\nCouchPageRange 5 ''", qr{CouchPageRange: LOW '5' is not a document id}],
    ["CouchPageRange '\"a\"' '[\"b\"]'\nCouchPageView http://127.0.0.1:5984/db/_all_docs", qr{CouchPageRange: HIGH '\[\"b\"\]' is not a document id}],
    ["CouchPageView $VIEW\nCouchPageRange '[%{json:%{env:X}}, 0]' '[\"b\", {}]'", undef],
    ["CouchPageView $VIEW\nCouchPageMaxAge 0\nCouchPageMaxAge 600 public\nCouchPageMaxAge 60 Private", undef],
    ['CouchPageMaxAge -1', qr{CouchPageMaxAge: '-1' is not a whole number from 0 to 31536000}],
    ['CouchPageMaxAge 1h', qr{CouchPageMaxAge: '1h' is not a whole number}],
    ['CouchPageMaxAge 99999999', qr{CouchPageMaxAge: '99999999' is not a whole number from 0 to 31536000}],
    ['CouchPageMaxAge 60 shared', qr{CouchPageMaxAge: 'shared' is neither public nor private}],
    # the words after the seconds (couchpage_cache.h), in any order; contradictions refused
    ["CouchPageView $VIEW\nCouchPageMaxAge 60 stale-if-error=600 public s-maxage=300 stale-while-revalidate=30", undef],
    ["CouchPageView $VIEW\nCouchPageMaxAge 60 Private stale-if-error=600", undef],
    ['CouchPageMaxAge 60 private s-maxage=30', qr{CouchPageMaxAge: s-maxage is for shared caches, which private keeps the page from}],
    ['CouchPageMaxAge 60 public private', qr{CouchPageMaxAge: public and private contradict each other}],
    ['CouchPageMaxAge 60 stale-if-error=5 stale-if-error=6', qr{CouchPageMaxAge: 'stale-if-error' is given twice}],
    ['CouchPageMaxAge 60 stale-while-revalidate=soon', qr{CouchPageMaxAge: 'stale-while-revalidate=soon': stale-while-revalidate= takes a whole number of seconds from 0 to 31536000}],
    ['CouchPageMaxAge 60 must-revalidate', qr{CouchPageMaxAge: 'must-revalidate' is neither public nor private, nor s-maxage=S}],
    ['CouchPageMaxAge', qr{CouchPageMaxAge: takes the seconds a page may be kept}],
    ["CouchPageView $VIEW\nCouchPageUpdate lazy\nCouchPageUpdate False\nCouchPageStable On", undef],
    ['CouchPageUpdate later', qr{CouchPageUpdate: 'later' is not true, false or lazy}],
    ['CouchPageStable yes', qr{CouchPageStable must be On or Off}],
    # grouped rows have no documents: CouchPageReduce and CouchPageIncludeDocs
    # never both On in one section, whichever comes first
    ["CouchPageReduce On\nCouchPageIncludeDocs On", qr{CouchPageIncludeDocs: grouped rows have no documents; CouchPageReduce is On here}],
    ["CouchPageIncludeDocs On\nCouchPageReduce On", qr{CouchPageReduce: grouped rows have no documents; CouchPageIncludeDocs is On here}],
    ["CouchPageView $VIEW\nCouchPageReduce On\nCouchPageIncludeDocs Off\nCouchPageDescending On\nCouchPageStable Off", undef],
    ["CouchPageView $VIEW\nCouchPageReduce Off\nCouchPageIncludeDocs On\nCouchPageReduce Off", undef],
    ['CouchPageDescending maybe', qr{CouchPageDescending must be On or Off}],
    # CouchPageFields: names of document members (bytes as written, UTF-8), or * alone
    ["CouchPageView $VIEW\nCouchPageIncludeDocs On\nCouchPageFields title date summary", undef],
    ["CouchPageView $VIEW\nCouchPageFields *", undef],
    ["CouchPageView $VIEW\nCouchPageIncludeDocs On\nCouchPageFields \"r\xc3\xa9sum\xc3\xa9\" 'two words' _id \xf0\x9f\x98\x80", undef],
    ['CouchPageFields * title', qr{CouchPageFields: \* \(every member\) stands alone}],
    ['CouchPageFields title *', qr{CouchPageFields: \* \(every member\) stands alone}],
    ['CouchPageFields * *', qr{CouchPageFields: \* \(every member\) stands alone}],
    ['CouchPageFields title date title', qr{CouchPageFields: 'title' is named twice}],
    ['CouchPageFields', qr{CouchPageFields takes the names of document members, or \*}],
    # the empty name is a name (JSON allows it, CouchDB keeps it), once
    ["CouchPageView $VIEW\nCouchPageIncludeDocs On\nCouchPageFields \"\" title", undef],
    ['CouchPageFields title "" ""', qr{CouchPageFields: '' is named twice}],
    ['CouchPageFields "*" title', qr{CouchPageFields: \* \(every member\) stands alone}],
    # a byte shown as \xHH (httpd -t escapes the backslash once more)
    ["CouchPageFields ti\xfftle", qr{CouchPageFields: 'ti\\+xfftle' is not valid UTF-8}],
    ["CouchPageFields title \xc0\xaf", qr{CouchPageFields: '\\+xc0\\+xaf' is not valid UTF-8}],
    ["CouchPageFields \xed\xa0\x80", qr{CouchPageFields: '\\+xed\\+xa0\\+x80' is not valid UTF-8}],
    ["CouchPageFields \xe2\x82", qr{CouchPageFields: '\\+xe2\\+x82' is not valid UTF-8}],
);

# Whole configurations: [what, configuration, expected message (regexp) or
# undef for Syntax OK, modules (default proxy, proxy_http)]. Line numbers
# count from the file's first line: 5 lines of server settings and the
# LoadModule lines come first (the MPM, mod_authz_core, the modules and
# mod_couchpage: the configuration starts on line 11 with the default two).
my $ALL = 'http://127.0.0.1:5984/db/_all_docs';
my @CONFS = (
    ['SetHandler couchpage without a CouchPageView',
     qq{<Location "/a/">\nSetHandler couchpage\nCouchPageSize 5\n</Location>\n},
     qr{CP0112: SetHandler couchpage \(\S+httpd\.conf:12\) applies in <Location "/a/">, where no CouchPageView is set: every request there would be answered 500}],
    ['the handler in an outer <Location>, the view only in an inner one',
     qq{<Location "/a/">\nSetHandler couchpage\n</Location>\n<Location "/a/b/">\nCouchPageView $ALL\n</Location>\n},
     qr{CP0112: SetHandler couchpage \(\S+:12\) applies in <Location "/a/">, where no CouchPageView}],
    ['the handler in a <LocationMatch> that no view reaches',
     qq{<LocationMatch "^/posts/(?<post>[^/]+)/comments/">\nSetHandler couchpage\n</LocationMatch>\n},
     qr{CP0112: SetHandler couchpage \(\S+:12\) applies in <LocationMatch "\^/posts/\(\?<post>\[\^/\]\+\)/comments/">}],
    ['the handler for a whole virtual host, views in some locations',
     qq{<VirtualHost 127.0.0.1:1>\nSetHandler couchpage\n<Location "/a/">\nCouchPageView $ALL\n</Location>\n</VirtualHost>\n},
     qr{CP0112: SetHandler couchpage \(\S+:12\) applies in the server config of the <VirtualHost> at \S+:11, where no CouchPageView}],
    ['the handler inside an <If> without a view',
     qq{<Location "/a/">\n<If "%{QUERY_STRING} =~ /x/">\nSetHandler couchpage\n</If>\n</Location>\n},
     qr{CP0112: SetHandler couchpage \(\S+:13\) applies in <If>}],
    ['the handler in a <Directory> without a view',
     qq{<Directory "/srv/pages">\nSetHandler CouchPage\n</Directory>\n},
     qr{CP0112: SetHandler couchpage \(\S+:12\) applies in <Directory "/srv/pages/?">}],
    ['CouchPageSize above the default CouchPageMaxSize',
     qq{<Location "/a/">\nSetHandler couchpage\nCouchPageView $ALL\nCouchPageSize 500\n</Location>\n},
     qr{CP0113: CouchPageSize 500 \(\S+:14\) is larger than CouchPageMaxSize 100 \(the default\) in <Location "/a/">: every request there would be answered 500}],
    # the default size is no fault: a smaller maximum caps it
    ['CouchPageMaxSize below the default CouchPageSize',
     qq{<Location "/a/">\nSetHandler couchpage\nCouchPageView $ALL\nCouchPageMaxSize 10\n</Location>\n}, undef],
    ['CouchPageSize above a CouchPageMaxSize merged from an inner section',
     qq{<Location "/a/">\nSetHandler couchpage\nCouchPageView $ALL\nCouchPageMaxSize 500\nCouchPageSize 300\n</Location>\n}
     . qq{<Location "/a/b/">\nCouchPageMaxSize 200\n</Location>\n},
     qr{CP0113: CouchPageSize 300 \(\S+:15\) is larger than CouchPageMaxSize 200 \(\S+:18\) in <Location "/a/b/">}],
    ['CouchPageSize of a virtual host above its location\'s CouchPageMaxSize',
     qq{<VirtualHost 127.0.0.1:1>\nCouchPageSize 50\n<Location "/a/">\nSetHandler couchpage\nCouchPageView $ALL\nCouchPageMaxSize 40\n</Location>\n</VirtualHost>\n},
     qr{CP0113: CouchPageSize 50 \(\S+:12\) is larger than CouchPageMaxSize 40 \(\S+:16\) in <Location "/a/"> of the <VirtualHost> at \S+:11}],
    ['nested sections, each setting part of a correct configuration',
     qq{<VirtualHost 127.0.0.1:1>\nCouchPageView $ALL\nCouchPageMaxSize 500\n<Location "/a/">\nSetHandler couchpage\nCouchPageSize 300\n</Location>\n}
     . qq{<Location "/a/small/">\nCouchPageSize 10\nCouchPageMaxSize 50\n</Location>\n<Location "/a/static/">\nSetHandler none\n</Location>\n</VirtualHost>\n}
     . qq{<Location "/posts/">\nCouchPageView $ALL\n</Location>\n<LocationMatch "^/posts/(?<post>[^/]+)/comments/">\nSetHandler couchpage\n</LocationMatch>\n}
     . qq{<LocationMatch "^/b/">\nCouchPageView $ALL\n</LocationMatch>\n<Location "/b/c/">\nSetHandler couchpage\n</Location>\n}
     . qq{<Directory "/srv/pages">\nSetHandler couchpage\nCouchPageView $ALL\n<Files "*.html">\nSetHandler none\n</Files>\n</Directory>\n}
     . qq{<Location "/d/">\nSetHandler "%{env:HANDLER}"\n</Location>\n},
     undef],
    # what start-up cannot place is never refused: a view a <Directory> sets
    # may reach the location; a .htaccess file never sets a view (CouchPageView
    # is server config, virtual host and directory only), whatever it may set
    ['a view a <Directory> may add',
     qq{<Directory "/srv">\nCouchPageView $ALL\n</Directory>\n<Location "/a/">\nSetHandler couchpage\n</Location>\n}, undef],
    ['a view that no .htaccess file can add (AllowOverride All)',
     qq{<Directory "/srv">\nAllowOverride All\n</Directory>\n<Location "/a/">\nSetHandler couchpage\n</Location>\n},
     qr{CP0112: SetHandler couchpage \(\S+:15\) applies in <Location "/a/">, where no CouchPageView is set}],
    ['a view that no .htaccess file can add (AllowOverrideList CouchPageView)',
     qq{<Directory "/srv">\nAllowOverride None\nAllowOverrideList SetHandler CouchPageView\n</Directory>\n<Location "/a/">\nSetHandler couchpage\n</Location>\n},
     qr{CP0112: SetHandler couchpage \(\S+:16\) applies in <Location "/a/">, where no CouchPageView is set}],
    # an item, a template or CouchPageFields that reads the rows' documents
    # where CouchPageIncludeDocs is not On
    ['CouchPageItem of a doc field without CouchPageIncludeDocs',
     qq{<Location "/a/">\nSetHandler couchpage\nCouchPageView $ALL\nCouchPageItem doc.title\n</Location>\n},
     qr{CP0130: CouchPageItem \(\S+:14\) reads the rows' documents \(doc\), and CouchPageIncludeDocs is not On in <Location "/a/">: every item there would show nothing\. Set CouchPageIncludeDocs On there, or show the row's key, value or id}],
    ['CouchPageItem whose link reads a doc field, without CouchPageIncludeDocs',
     qq{<Location "/a/">\nSetHandler couchpage\nCouchPageView $ALL\nCouchPageItem key "/posts/{doc.slug}"\n</Location>\n},
     qr{CP0130: CouchPageItem \(\S+:14\) reads the rows' documents}],
    ['CouchPageItemTemplate of a doc field without CouchPageIncludeDocs',
     qq{<Location "/a/">\nSetHandler couchpage\nCouchPageView $ALL\nCouchPageItemTemplate "<b>%{couchpage_html:key}</b> %{couchpage_date:doc.date}"\n</Location>\n},
     qr{CP0130: CouchPageItemTemplate \(\S+:14\) reads the rows' documents \(doc\), and CouchPageIncludeDocs is not On in <Location "/a/">}],
    ['CouchPageFields without CouchPageIncludeDocs',
     qq{<Location "/a/">\nSetHandler couchpage\nCouchPageView $ALL\nCouchPageFields title date\n</Location>\n},
     qr{CP0131: CouchPageFields \(\S+:14\) picks members of the rows' documents, and CouchPageIncludeDocs is not On in <Location "/a/">: it would pick nothing\. Set CouchPageIncludeDocs On there, or remove CouchPageFields}],
    ['a server-wide item of a doc field, in a location without documents',
     qq{CouchPageItem doc.title\n<Location "/docs/">\nSetHandler couchpage\nCouchPageView $ALL\nCouchPageIncludeDocs On\n</Location>\n}
     . qq{<Location "/keys/">\nSetHandler couchpage\nCouchPageView $ALL\n</Location>\n},
     qr{CP0130: CouchPageItem \(\S+:11\) reads the rows' documents \(doc\), and CouchPageIncludeDocs is not On in <Location "/keys/">}],
    ['CouchPageIncludeDocs Off in an inner location under an item of a doc field',
     qq{<Location "/a/">\nSetHandler couchpage\nCouchPageView $ALL\nCouchPageIncludeDocs On\nCouchPageItem doc.title\n</Location>\n}
     . qq{<Location "/a/b/">\nCouchPageIncludeDocs Off\n</Location>\n},
     qr{CP0130: CouchPageItem \(\S+:15\) reads the rows' documents \(doc\), and CouchPageIncludeDocs is not On in <Location "/a/b/">}],
    ['documents from an outer location, the item in an inner one; a JSON-only location',
     qq{<Location "/a/">\nSetHandler couchpage\nCouchPageView $ALL\nCouchPageIncludeDocs On\n</Location>\n}
     . qq{<Location "/a/b/">\nCouchPageItemTemplate "%{couchpage_html:doc.title}"\nCouchPageFields title\n</Location>\n}
     . qq{<Location "/json/">\nSetHandler couchpage\nCouchPageView $ALL\nCouchPageFormat json\nCouchPageItem doc.title\n</Location>\n},
     undef],
    # what start-up cannot place is never refused: a .htaccess file may set
    # another item (AllowOverride FileInfo); a request still gets 500
    ['a server-wide item of a doc field that a .htaccess file may replace',
     qq{CouchPageItem doc.title\n<Directory "/srv">\nAllowOverride FileInfo\n</Directory>\n<Location "/a/">\nSetHandler couchpage\nCouchPageView $ALL\n</Location>\n},
     undef],
    # the proxy modules a view URL's scheme needs
    ['http:// without any proxy module',
     qq{<Location "/a/">\nSetHandler couchpage\nCouchPageView $ALL\n</Location>\n},
     qr{CP0114: CouchPageView http://127\.0\.0\.1:5984/db/_all_docs \(\S+:11\): http:// needs modules that are not loaded: mod_proxy \(LoadModule proxy_module\), mod_proxy_http \(LoadModule proxy_http_module\)$}m, []],
    ['http:// without mod_proxy_http',
     qq{<Location "/a/">\nSetHandler couchpage\nCouchPageView $ALL\n</Location>\n},
     qr{CP0114: .*: http:// needs modules that are not loaded: mod_proxy_http \(LoadModule proxy_http_module\)$}m, ['proxy']],
    ['https:// without mod_ssl',
     qq{<Location "/a/">\nSetHandler couchpage\nCouchPageView https://127.0.0.1:6984/db/_all_docs\n</Location>\n},
     qr{CP0114: .*: https:// needs modules that are not loaded: mod_ssl \(LoadModule ssl_module\)$}m],
    ['https:// with mod_ssl',
     qq{<Location "/a/">\nSetHandler couchpage\nCouchPageView https://127.0.0.1:6984/db/_all_docs\n</Location>\n}
     . qq{<Proxy "https://127.0.0.1:6984/">\nProxySet keepalive=On\n</Proxy>\n},
     undef, [qw(proxy proxy_http ssl)]],
    ['balancer:// without mod_proxy_balancer',
     qq{<Location "/a/">\nSetHandler couchpage\nCouchPageView balancer://couchdb/db/_all_docs\n</Location>\n},
     qr{CP0114: .*: balancer:// needs modules that are not loaded: mod_proxy_balancer \(LoadModule proxy_balancer_module\)$}m],
    ['balancer:// with mod_proxy_balancer',
     qq{<Location "/a/">\nSetHandler couchpage\nCouchPageView balancer://couchdb/db/_all_docs\n</Location>\n}
     . qq{<Proxy "balancer://couchdb">\nBalancerMember "http://127.0.0.1:5984"\n</Proxy>\n},
     undef, [qw(proxy proxy_http proxy_balancer)]],
);

# A worker for the views of @CONFS, after each configuration (so that line
# numbers stay), where mod_proxy is loaded: without one, start-up warns.
my $WORKER = qq{<Proxy "http://127.0.0.1:5984/">\nProxySet keepalive=On\n</Proxy>\n};

# Views no mod_proxy worker serves: start-up warns (CP0133; CP0132 for a
# balancer:// view without its balancer), naming the <Proxy> block to add,
# and starts. [what, configuration, expected warning (regexp) or undef for
# none, modules (default proxy, proxy_http)]
my $V5 = 'http://127.0.0.1:5985/db/_all_docs';
my $AT_A = qq{<Location "/a/">\nSetHandler couchpage\nCouchPageView $V5\n</Location>\n};
my @WORKERS = (
    ['a view without a worker', $AT_A,
     qr{CP0133: CouchPageView http://127\.0\.0\.1:5985/db/_all_docs \(\S+:13\): no mod_proxy worker serves http://127\.0\.0\.1:5985, so mod_proxy's default worker makes its queries, which keeps no connection: each query opens a new one\. Define a worker: <Proxy "http://127\.0\.0\.1:5985/"> with ProxySet keepalive=On}],
    ['a worker for localhost, the view on 127.0.0.1',
     qq{<Proxy "http://localhost:5985/">\nProxySet keepalive=On\n</Proxy>\n$AT_A},
     qr{CP0133: CouchPageView http://127\.0\.0\.1:5985/db/_all_docs \(\S+:16\): no mod_proxy worker serves .*<Proxy "http://127\.0\.0\.1:5985/">.*; the worker http://localhost:5985/ is not it: mod_proxy compares host names as written}],
    ['a <Proxy> block without ProxySet (it defines no worker)',
     qq{<Proxy "http://127.0.0.1:5985/">\nRequire all granted\n</Proxy>\n$AT_A}, qr{CP0133: CouchPageView http://127\.0\.0\.1:5985/}],
    ['a worker for another port',
     qq{<Proxy "http://127.0.0.1:5986/">\nProxySet keepalive=On\n</Proxy>\n$AT_A}, qr{CP0133: CouchPageView http://127\.0\.0\.1:5985/}],
    ['a worker for another database only',
     qq{<Proxy "http://127.0.0.1:5985/other/">\nProxySet keepalive=On\n</Proxy>\n$AT_A}, qr{CP0133: CouchPageView http://127\.0\.0\.1:5985/}],
    ['a worker in another virtual host',
     qq{<VirtualHost 127.0.0.1:1>\n<Proxy "http://127.0.0.1:5985/">\nProxySet keepalive=On\n</Proxy>\n</VirtualHost>\n<VirtualHost 127.0.0.1:2>\n$AT_A</VirtualHost>\n},
     qr{CP0133: CouchPageView http://127\.0\.0\.1:5985/db/_all_docs \(\S+:19\): no mod_proxy worker serves http://127\.0\.0\.1:5985 in this virtual host}],
    ['the worker of a <Proxy> block with ProxySet',
     qq{<Proxy "http://127.0.0.1:5985/">\nProxySet keepalive=On\n</Proxy>\n$AT_A}, undef],
    ['the worker of a <Proxy> block with parameters',
     qq{<Proxy "HTTP://127.0.0.1:5985" timeout=5>\n</Proxy>\n$AT_A}, undef],
    ['the worker of a ProxyPass',
     qq{ProxyPass "/couch/" "http://127.0.0.1:5985/"\n$AT_A}, undef],
    ['the worker of a ProxyPassMatch',
     qq{ProxyPassMatch "^/couch/(.*)\$" "http://127.0.0.1:5985/\$1"\n$AT_A}, undef],
    ['the main server\'s worker, the view in a virtual host',
     qq{<Proxy "http://127.0.0.1:5985/">\nProxySet keepalive=On\n</Proxy>\n<VirtualHost 127.0.0.1:1>\n$AT_A</VirtualHost>\n}, undef],
    ['a balancer:// view without its balancer',
     qq{<Location "/a/">\nSetHandler couchpage\nCouchPageView balancer://couchdb/db/_all_docs\n</Location>\n},
     qr{CP0132: CouchPageView balancer://couchdb/db/_all_docs \(\S+:14\): no balancer balancer://couchdb is defined, and every page there would fail\. Define it: <Proxy "balancer://couchdb"> with a BalancerMember for each CouchDB node},
     [qw(proxy proxy_http proxy_balancer)]],
    ['a balancer:// view of another balancer',
     qq{<Proxy "balancer://other">\nBalancerMember "http://127.0.0.1:5985"\n</Proxy>\n<Location "/a/">\nSetHandler couchpage\nCouchPageView balancer://couchdb/db/_all_docs\n</Location>\n},
     qr{CP0132: CouchPageView balancer://couchdb/}, [qw(proxy proxy_http proxy_balancer)]],
);

# --- CouchPageCredentials USER file:PATH ------------------------------------
# The password is read from the file at start-up (as httpd reads its
# configuration: root on a server, the test's user here); -t refuses a file
# it cannot use, naming it, and warns of one others can read. The password
# itself is never in httpd's output.
my $pwdir = tempdir(CLEANUP => 1);
my $FILE_SECRET = 'Pw-0f-The-Fil3';
sub password_file {
    my ($name, $content, $mode) = @_;
    my $path = catfile($pwdir, $name);
    open my $pf, '>', $path or die "$path: $!";
    print $pf $content;
    close $pf;
    chmod $mode, $path or die "chmod $path: $!";
    return $path;
}
# [what, path, expected refusal (regexp), or warning (regexp), or undef for neither]
my @FILES = (
    ['a missing password file', catfile($pwdir, 'none'),
     qr{CouchPageCredentials: the password file \S+/none cannot be opened: No such file or directory}, 'refused'],
    ['a password file its reader may not read', password_file('closed', "$FILE_SECRET\n", 0000),
     qr{CouchPageCredentials: the password file \S+/closed cannot be opened: Permission denied}, 'refused'],
    ['an empty password file', password_file('empty', '', 0600),
     qr{CouchPageCredentials: the password file \S+/empty is empty}, 'refused'],
    ['a password file of a newline alone', password_file('newline', "\n", 0600),
     qr{the password file \S+/newline is empty}, 'refused'],
    ['a password file of two lines', password_file('two', "$FILE_SECRET\nmore\n", 0600),
     qr{the password file \S+/two holds more than one line}, 'refused'],
    ['a password file over 4096 bytes', password_file('long', 'x' x 5000, 0600),
     qr{the password file \S+/long is longer than 4096 bytes}, 'refused'],
    ['a directory for a password file', $pwdir,
     qr{the password file \S+ is not a regular file}, 'refused'],
    ['a password file of its owner alone (0600)', password_file('owner', "$FILE_SECRET\n", 0600), undef, 'accepted'],
    ['a password file with CRLF', password_file('crlf', "$FILE_SECRET\r\n", 0600), undef, 'accepted'],
    ['a world-readable password file (0644)', password_file('world', "$FILE_SECRET\n", 0644),
     qr{CP0134: CouchPageCredentials \(\S+:\d+\): the password file \S+/world can be read by every user of this machine \(mode 644\); httpd reads it as root: chown root:root it and chmod 0600 \(or 0640\) it},
     'accepted'],
    ['a password file its group may read (0640, not root\'s group)', password_file('group', "$FILE_SECRET\n", 0640),
     qr{CP0134: .*the password file \S+/group can be read by the members of (group \S+|its group) \(mode 640\)}, 'accepted'],
);
plan tests => scalar @CASES + 2 * @CONFS + 2 * @WORKERS + 1 + 2 * @FILES + 3 + 6 + 4;

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

for my $case (@CONFS) {
    my ($what, $conf, $expect, $modules) = @$case;
    $conf .= $WORKER if grep { $_ eq 'proxy' } @{ $modules // ['proxy'] };
    my ($status, $out) = httpd_config_test(undef, conf => $conf, defined $modules ? (modules => $modules) : ());
    if (defined $expect) {
        ok t_cmp($status != 0 && $out =~ $expect ? 'refused' : "status $status: $out", 'refused',
                 "httpd -t refuses $what, naming the directive and the section");
        ok t_cmp($out =~ /AH00014: Configuration check failed/ ? 'failed' : $out, 'failed',
                 "$what: httpd says the configuration check failed");
    }
    else {
        ok t_cmp($status == 0 && $out =~ /Syntax OK/ ? 'ok' : "status $status: $out", 'ok',
                 "httpd -t accepts $what");
        ok t_cmp($out =~ /CP01/ ? $out : 'silent', 'silent', "$what: no message of the module's");
    }
}

for my $case (@WORKERS) {
    my ($what, $conf, $expect, $modules) = @$case;
    my ($status, $out) = httpd_config_test(undef, conf => $conf, defined $modules ? (modules => $modules) : ());
    ok t_cmp($status == 0 && $out =~ /Syntax OK/ ? 'ok' : "status $status: $out", 'ok',
             "httpd -t accepts $what");
    if (defined $expect) {
        ok t_cmp($out =~ $expect ? 'warned' : $out, 'warned', "$what: a warning names the block to add");
    }
    else {
        ok t_cmp($out =~ /CP013[23]/ ? $out : 'silent', 'silent', "$what: no warning");
    }
}
{
    # one warning a URL, however many locations page it
    my ($status, $out) = httpd_config_test(undef, conf => $AT_A . $AT_A =~ s{/a/}{/b/}r
                                                    . qq{<Location "/c/">\nSetHandler couchpage\nCouchPageView $V5\n</Location>\n});
    my $count = () = $out =~ /CP0133/g;
    ok t_cmp($count, 1, 'three locations of one view URL without a worker: one warning');
}

# A view URL's password is never echoed, whether or not the URL parses.
for my $url ('http://admin:Secr3tViewPassw0rd@127.0.0.1:5984/db/_all_docs',
             'admin:Secr3tViewPassw0rd@127.0.0.1:5984/db/_all_docs') {
    my ($status, $out) = httpd_config_test("CouchPageView $url");
    ok t_cmp($status != 0 && $out !~ /Secr3tViewPassw0rd/ ? 'refused, not echoed' : "status $status: $out",
             'refused, not echoed', "a CouchPageView URL with a password: refused, the password not echoed");
}

# A correct configuration of nested sections starts and serves: the outer
# section's view and handler, the inner one's page size under the virtual
# host's maximum; a <Location> inside it that serves files keeps its own.
{
    my $root = tempdir(CLEANUP => 1);
    my $backend = backend_url();
    my ($port) = start_own_httpd($root, [qw(proxy proxy_http)], <<"CONF");
CouchPageMaxSize 50
<Location "/nested/">
    SetHandler couchpage
    CouchPageView "$backend/bands/_design/bands/_view/by-name"
</Location>
<Location "/nested/four/">
    CouchPageSize 4
</Location>
<Location "/nested/four/none/">
    SetHandler none
</Location>
CONF
    my $http = HTTP::Tiny->new(timeout => 30);
    my $res = $http->get("http://127.0.0.1:$port/nested/four/");
    my $page = decode_json_or_undef($res->{content});
    ok t_cmp($res->{status} . ' ' . (ref $page eq 'HASH' ? scalar @{ $page->{items} } : 'no page'), '200 4',
             'nested sections: the inner section\'s page size, the outer one\'s view');
    $res = $http->get("http://127.0.0.1:$port/nested/four/none/");
    ok t_cmp($res->{status}, 404, 'SetHandler none inside it: not a page (no such file)');
    # no <Proxy> for the backend here: the start-up log says which to add
    my $log = do { local $/; open my $lf, '<', "$root/error_log" or die "$root/error_log: $!"; <$lf> };
    ok t_cmp($log, qr{CP0133: CouchPageView \Q$backend\E/bands/.* Define a worker: <Proxy "\Q$backend\E/">},
             'a view without a worker: the start-up log names the <Proxy> block to add');
}

for my $case (@FILES) {
    my ($what, $path, $expect, $verdict) = @$case;
    my ($status, $out) = httpd_config_test("CouchPageView $VIEW\nCouchPageCredentials reader \"file:$path\"");
    my $got = $status != 0 ? 'refused' : $out =~ /Syntax OK/ ? 'accepted' : "status $status";
    ok t_cmp($got eq $verdict && (defined $expect ? $out =~ $expect : $out !~ /CP0134/) ? 'as expected' : "$got: $out",
             'as expected', "$what: $verdict" . (defined $expect && $verdict eq 'accepted' ? ', with a warning' : ''));
    ok t_cmp(index($out, $FILE_SECRET), -1, "$what: the password is not in httpd's output");
}

# A page whose credentials come from a file: the right password serves it,
# a wrong one gets the usual 502 with CouchDB's 401 in the error log.
{
    my $double = double_url();
    double_load('creds', [ map { { _id => sprintf('c%02d', $_), n => $_ } } 1 .. 5 ],
                { v => { map => 'function (doc) { emit(doc.n, null); }' } });
    my $right = password_file('right', ($ENV{COUCHPAGE_DOUBLE_PASSWORD} // 'double-admin-secret') . "\n", 0600);
    my $wrong = password_file('wrong', "not-the-password\n", 0600);
    my $user = $ENV{COUCHPAGE_DOUBLE_USER} // 'admin';
    my $root = tempdir(CLEANUP => 1);
    my ($port) = start_own_httpd($root, [qw(proxy proxy_http)], <<"CONF");
<Proxy "$double/">
    ProxySet keepalive=On timeout=10
</Proxy>
<Location "/creds/right/">
    SetHandler couchpage
    CouchPageView "$double/creds/_design/d/_view/v"
    CouchPageCredentials "$user" "file:$right"
</Location>
<Location "/creds/wrong/">
    SetHandler couchpage
    CouchPageView "$double/creds/_design/d/_view/v"
    CouchPageCredentials "$user" "file:$wrong"
</Location>
CONF
    my $http = HTTP::Tiny->new(timeout => 30);
    my $res = $http->get("http://127.0.0.1:$port/creds/right/", { headers => { Accept => 'application/json' } });
    my $page = decode_json_or_undef($res->{content});
    ok t_cmp($res->{status} . ' ' . (ref $page eq 'HASH' ? join(',', map { $_->{key} } @{ $page->{items} }) : 'no page'),
             '200 1,2,3,4,5', 'the password from a file: the page is served');
    $res = $http->get("http://127.0.0.1:$port/creds/wrong/", { headers => { Accept => 'application/json' } });
    ok t_cmp($res->{status}, 502, 'a wrong password in the file: 502');
    my $log = '';
    for (1 .. 30) {
        $log = do { local $/; open my $lf, '<', "$root/error_log" or die "$root/error_log: $!"; <$lf> };
        last if $log =~ /CP0101/;
        select undef, undef, undef, 0.1;
    }
    ok t_cmp($log, qr{CP0101: .*/creds/wrong/.*CouchDB answered 401}, 'and the error log has CouchDB\'s 401 (CP0101)');
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

# The start-up checks' lines carry the module's tag: the module's LogLevel
# governs them, not the server's (httpd -t prints them without the error
# log's prefix, so the tag shows by what LogLevel couchpage: does).
{
    my $no_view = qq{<Location "/a/">\nSetHandler couchpage\n</Location>\n};
    my ($status, $out) = httpd_config_test(undef, conf => "LogLevel crit couchpage:error\n$no_view");
    ok t_cmp($status != 0 && $out =~ /CP0112: SetHandler couchpage/ ? 'shown' : "status $status: $out",
             'shown', 'CP0112 is the module\'s: LogLevel crit couchpage:error shows it');
    ($status, $out) = httpd_config_test(undef, conf => "LogLevel error couchpage:crit\n$no_view");
    ok t_cmp($status != 0 && $out !~ /CP0112/ ? 'quiet' : "status $status: $out",
             'quiet', 'CP0112 is the module\'s: LogLevel couchpage:crit keeps it out');
    ($status, $out) = httpd_config_test(undef, conf => "LogLevel crit couchpage:error\n"
                                              . qq{<Location "/a/">\nSetHandler couchpage\nCouchPageView $V5\nCouchPageSize 500\n</Location>\n}
                                              . $WORKER);
    ok t_cmp($status != 0 && $out =~ /CP0113: CouchPageSize 500/ ? 'shown' : "status $status: $out",
             'shown', 'CP0113 is the module\'s: LogLevel crit couchpage:error shows it');
    ($status, $out) = httpd_config_test(undef, modules => [], conf => "LogLevel crit couchpage:error\n"
                                              . qq{<Location "/a/">\nSetHandler couchpage\nCouchPageView $V5\n</Location>\n});
    ok t_cmp($status != 0 && $out =~ /CP0114: .*needs modules that are not loaded/ ? 'shown' : "status $status: $out",
             'shown', 'CP0114 is the module\'s: LogLevel crit couchpage:error shows it');
}
