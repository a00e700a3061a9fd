/* SPDX-License-Identifier: Apache-2.0 */
/*
 * couchpage_counts.c: the served-by note, the counters shared by every
 * process, and mod_status's section of them (see couchpage_counts.h).
 * Part of the httpd-free core: no httpd header, no request_rec.
 */
#include "couchpage_counts.h"

#include <apr_atomic.h>
#include <apr_strings.h>
#include <string.h>

static const int counted_errors[CP_COUNTED_ERRORS] = { 400, 502, 503, 504 };

const char *cp_served_by_note(apr_pool_t *pool, const char *before, unsigned served_by)
{
    if (before) {
        served_by |= (strstr(before, "batch") ? CP_SERVED_BY_BATCH : 0)
                   | (strstr(before, "get") ? CP_SERVED_BY_GET : 0)
                   | (strstr(before, "find") ? CP_SERVED_BY_FIND : 0);
    }
    if (!served_by) {
        return NULL;
    }
    /* what answered, in this order, joined by + */
    return apr_pstrcat(pool, served_by & CP_SERVED_BY_BATCH ? "+batch" : "",
                       served_by & CP_SERVED_BY_GET ? "+get" : "",
                       served_by & CP_SERVED_BY_FIND ? "+find" : "", NULL) + 1;
}

void cp_counters_add(cp_counters *counters, int status, apr_uint64_t requests,
                     apr_uint64_t time, apr_uint64_t rows)
{
    int i;

    apr_atomic_add64(&counters->backend_requests, requests);
    apr_atomic_add64(&counters->backend_time, time);
    apr_atomic_add64(&counters->rows, rows);
    if (status == 200) {
        apr_atomic_inc64(&counters->pages);
        return;
    }
    for (i = 0; i < CP_COUNTED_ERRORS; i++) {
        if (status == counted_errors[i]) {
            apr_atomic_inc64(&counters->errors[i]);
        }
    }
}

static apr_uint64_t read_counter(const apr_uint64_t *counter)
{
    return apr_atomic_read64((volatile apr_uint64_t *)counter);
}

/* One line of the section: its ?auto name and its label in the HTML. */
typedef struct {
    const char *name;
    const char *label;
    apr_uint64_t value;
} status_line;

const char *cp_counters_section(apr_pool_t *pool, const cp_counters *counters,
                                const char *version, int machine)
{
    status_line lines[5 + CP_COUNTED_ERRORS];
    apr_uint64_t requests, time;
    const char *text;
    int i, n = 0;

    /* the version first, and whether the counters are on or off */
    text = machine ? apr_pstrcat(pool, "CouchPageVersion: ", version, "\n", NULL)
                   : apr_pstrcat(pool, "<hr />\n<h2>CouchPage</h2>\n<p>mod_couchpage ",
                                 version, "</p>\n", NULL);
    if (!counters) {
        return machine ? text : apr_pstrcat(pool, text, "<p>Off: no shared memory for the "
                                            "counters (the error log says why).</p>\n", NULL);
    }
    requests = read_counter(&counters->backend_requests);
    time = read_counter(&counters->backend_time);
#define LINE(NAME, LABEL, VALUE) \
    (lines[n].name = (NAME), lines[n].label = (LABEL), lines[n++].value = (VALUE))
    LINE("Pages", "Pages served", read_counter(&counters->pages));
    LINE("BackendRequests", "Backend requests", requests);
    LINE("BackendTimeMicroseconds", "Backend time (&micro;s)", time);
    LINE("BackendMeanMicroseconds", "Backend time a request (&micro;s)",
         requests ? time / requests : 0);
    LINE("Rows", "Rows read", read_counter(&counters->rows));
    for (i = 0; i < CP_COUNTED_ERRORS; i++) {
        LINE(apr_psprintf(pool, "Errors%d", counted_errors[i]),
             apr_psprintf(pool, "Errors %d", counted_errors[i]),
             read_counter(&counters->errors[i]));
    }
#undef LINE
    text = machine ? text : apr_pstrcat(pool, text, "<dl>\n", NULL);
    for (i = 0; i < n; i++) {
        text = machine ? apr_psprintf(pool, "%sCouchPage%s: %" APR_UINT64_T_FMT "\n", text,
                                      lines[i].name, lines[i].value)
                       : apr_psprintf(pool, "%s<dt>%s: %" APR_UINT64_T_FMT "</dt>\n", text,
                                      lines[i].label, lines[i].value);
    }
    return machine ? text : apr_pstrcat(pool, text, "</dl>\n", NULL);
}
