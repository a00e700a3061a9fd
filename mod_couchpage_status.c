/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mod_couchpage_status: what the module's pages cost.
 *
 * Per request, in notes the access log prints with %{NAME}n: the backend
 * requests a page made, their time, the rows read, and what answered the
 * queries. Summed over every httpd process, in a section of mod_status's
 * report (/server-status, and ?auto for machines): pages served, backend
 * requests and time, rows, errors by status.
 *
 * The sums live in one slot of httpd's own shared memory, made by the
 * slotmem provider "shm" (mod_slotmem_shm); what they are, how they are
 * added to, and what the section says of them are the core's
 * (couchpage_counts.c). Without
 * mod_status or mod_slotmem_shm the module runs as before: the notes are
 * still set, and the section is off (logged at startup).
 *
 * Glue: it reads what the handler hands it (couchpage_backend_stats), not the
 * directory config, and changes no response.
 */
#include "mod_couchpage_status.h"
#include "mod_couchpage_module.h"
#include "mod_couchpage_backend.h"
#include "mod_couchpage_version.h"

#include "ap_provider.h"
#include "ap_slotmem.h"
#include "http_core.h"
#include "http_log.h"
#include "http_protocol.h"
#include "mod_status.h"
#include "apr_optional_hooks.h"
#include "apr_strings.h"

#include "couchpage_counts.h"

APLOG_USE_MODULE(couchpage);

/* The request notes, for LogFormat's %{NAME}n (docs/operations.md). */
#define NOTE_REQUESTS "couchpage-backend-requests"
#define NOTE_TIME "couchpage-backend-time"
#define NOTE_ROWS "couchpage-rows"
#define NOTE_SERVED_BY "couchpage-served-by"

/* The slot's name: mod_slotmem_shm keeps its files in DefaultRuntimeDir. */
#define SLOT_NAME "couchpage-status"

/* NULL when the section is off; set in post_config, inherited by the
 * children with the mapping. */
static cp_counters *counters;

/* --- the access log's notes ------------------------------------------- */

static apr_uint64_t note_number(const request_rec *r, const char *name)
{
    const char *value = apr_table_get(r->notes, name);

    return value ? apr_strtoi64(value, NULL, 10) : 0;
}

static void add_to_note(request_rec *r, const char *name, apr_uint64_t value)
{
    /* sums of a request's backend reads: far below 2^63 */
    apr_table_setn(r->notes, name,
                   apr_off_t_toa(r->pool, (apr_off_t)(note_number(r, name) + value)));
}

/* The notes go to the request the access log writes: the main request. A
 * page included by mod_include is a subrequest, whose notes the log never
 * sees; there the including page's notes add up those of its fragments. */
static void set_notes(request_rec *r, const couchpage_backend_stats *stats)
{
    request_rec *top = r;
    const char *served_by;

    while (top->main) {
        top = top->main;
    }
    add_to_note(top, NOTE_REQUESTS, (apr_uint64_t)stats->requests);
    add_to_note(top, NOTE_TIME, (apr_uint64_t)stats->time);
    add_to_note(top, NOTE_ROWS, (apr_uint64_t)stats->rows);
    served_by = cp_served_by_note(top->pool, apr_table_get(top->notes, NOTE_SERVED_BY),
                                  stats->served_by);
    if (served_by) {
        apr_table_setn(top->notes, NOTE_SERVED_BY, served_by);
    }
}

/* --- the shared counters ------------------------------------------------ */

void couchpage_status_record(request_rec *r, const couchpage_backend_stats *stats)
{
    set_notes(r, stats);
    if (counters) {
        cp_counters_add(counters, r->status, (apr_uint64_t)stats->requests,
                        (apr_uint64_t)stats->time, (apr_uint64_t)stats->rows);
    }
}

/* Makes the slot. httpd runs post_config twice at startup: the first pass
 * only checks the configuration, and makes nothing.
 *
 * mod_slotmem_shm makes a new segment for every generation of the
 * configuration, and destroys it when the generation ends. A persisted
 * slot is saved to a file then and read back into the next generation's
 * (as mod_proxy_balancer's BalancerPersist does): the sums go on across
 * restarts, graceful or not, as mod_status's own do. The first generation
 * of a server starts from zero, whatever a server before it saved. */
static int status_post_config(apr_pool_t *pconf, apr_pool_t *plog, apr_pool_t *ptemp,
                              server_rec *s)
{
    const ap_slotmem_provider_t *storage;
    ap_slotmem_instance_t *slot;
    void *memory;
    apr_status_t rv;

    counters = NULL;
    if (ap_state_query(AP_SQ_MAIN_STATE) == AP_SQ_MS_CREATE_PRE_CONFIG) {
        return OK;
    }
    if (!ap_find_linked_module("mod_status.c")) {
        ap_log_error(APLOG_MARK, APLOG_INFO, 0, s, CPLOGNO(0109) "mod_status is not loaded: "
                     "no CouchPage section in server-status, and no shared counters");
        return OK;
    }
    storage = ap_lookup_provider(AP_SLOTMEM_PROVIDER_GROUP, "shm", AP_SLOTMEM_PROVIDER_VERSION);
    if (!storage) {
        ap_log_error(APLOG_MARK, APLOG_INFO, 0, s, CPLOGNO(0110) "mod_slotmem_shm is not "
                     "loaded: the CouchPage section of server-status is off (load it, "
                     "on Debian with 'a2enmod slotmem_shm', to count pages across processes)");
        return OK;
    }
    rv = storage->create(&slot, SLOT_NAME, sizeof(cp_counters), 1,
                         AP_SLOTMEM_TYPE_PERSIST, pconf);
    if (rv == APR_SUCCESS) {
        rv = storage->dptr(slot, 0, &memory);
    }
    if (rv != APR_SUCCESS) {
        ap_log_error(APLOG_MARK, APLOG_ERR, rv, s, CPLOGNO(0111) "no shared memory for the "
                     "CouchPage section of server-status: it is off");
        return OK;
    }
    counters = memory;
    if (ap_state_query(AP_SQ_CONFIG_GEN) == 0) {
        memset(counters, 0, sizeof(*counters));
    }
    return OK;
}

/* --- mod_status's section ------------------------------------------------ */

static int status_section(request_rec *r, int flags)
{
    ap_rputs(cp_counters_section(r->pool, counters, COUCHPAGE_VERSION,
                                 flags & AP_STATUS_SHORT), r);
    return OK;
}

void couchpage_status_register(void)
{
    /* Before mod_slotmem_shm's own post_config (APR_HOOK_LAST), as every
     * user of slotmem: its cleanup, registered there, must run before the
     * segments' own when the configuration's pool is cleared. */
    ap_hook_post_config(status_post_config, NULL, NULL, APR_HOOK_MIDDLE);
    /* optional: mod_status need not be loaded */
    APR_OPTIONAL_HOOK(ap, status_hook, status_section, NULL, NULL, APR_HOOK_MIDDLE);
}
