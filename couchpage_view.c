/* SPDX-License-Identifier: Apache-2.0 */
/*
 * couchpage_view.c: a CouchPageView URL parsed into the view's parts, once,
 * when httpd reads the configuration. Part of the httpd-free core: no httpd
 * header, no request_rec.
 */
#include "couchpage_view.h"

#include <apr_strings.h>
#include <apr_uri.h>
#include <string.h>

/* Splits path into the database part and the index part, which starts at
 * /_all_docs or /_design/ (after /_partition/P when there is one). */
static const char *split_index_path(apr_pool_t *pool, const char *url, const char *path,
                                    cp_view *view)
{
    apr_size_t len = strlen(path);
    const char *index, *partition;

    if (len > 10 && strcmp(path + len - 10, "/_all_docs") == 0) {
        view->is_all_docs = 1;
        index = path + len - 10;
    }
    else {
        const char *ddoc, *slash;

        index = strstr(path, "/_design/");
        if (!index) {
            return "must name a view (.../DB/_design/DDOC/_view/VIEW) or .../DB/_all_docs";
        }
        ddoc = index + 9;
        slash = strchr(ddoc, '/');
        if (!slash || slash == ddoc || strncmp(slash, "/_view/", 7) != 0
            || !slash[7] || strchr(slash + 7, '/')) {
            return "must name a view (.../DB/_design/DDOC/_view/VIEW) or .../DB/_all_docs";
        }
    }
    partition = strstr(path, "/_partition/");
    view->is_partitioned = partition != NULL && partition < index;
    if (index == path || (view->is_partitioned && partition == path)) {
        return "has no database before the view";
    }
    view->index_path = index;
    /* the database URL is the configured URL up to where the index starts */
    view->db_url = apr_pstrndup(pool, url, strlen(url) - strlen(index));
    if (view->is_partitioned) {
        view->db_url = apr_pstrndup(pool, view->db_url,
                                    strlen(view->db_url) - (index - partition));
        view->index_path = partition;
    }
    return NULL;
}

const char *cp_view_init(apr_pool_t *pool, const char *url, cp_view *view)
{
    apr_uri_t uri;

    if (apr_uri_parse(pool, url, &uri) != APR_SUCCESS || !uri.scheme || !uri.hostname) {
        return "must be an absolute URL such as "
               "http://127.0.0.1:5984/db/_design/ddoc/_view/name";
    }
    if (uri.query || uri.fragment) {
        return "must not have a query string or fragment; "
               "the CouchPage* directives set every view parameter";
    }
    if (uri.user || uri.password) {
        return "must not carry credentials; use CouchPageCredentials";
    }
    view->url = url;
    view->backend = apr_pstrcat(pool, uri.scheme, "://", uri.hostinfo, NULL);
    view->is_all_docs = 0;
    return split_index_path(pool, url, uri.path ? uri.path : "", view);
}

int cp_view_has_docids(const cp_view *view)
{
    return !view->reduce;
}
