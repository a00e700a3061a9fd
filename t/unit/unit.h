/* SPDX-License-Identifier: Apache-2.0 */
/* Shared set-up for the core's cmocka tests: one APR pool per test. */
#ifndef COUCHPAGE_UNIT_H
#define COUCHPAGE_UNIT_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <apr_general.h>
#include <apr_pools.h>
#include <apr_strings.h>
#include <apr_tables.h>
#include <jansson.h>

#include "couchpage_json.h"
#include "couchpage_response.h"
#include "couchpage_view.h"

#ifdef UNIT_POOL_EXTERN
extern apr_pool_t *pool; /* a test program of several files: one of them defines it */
#else
static apr_pool_t *pool;
#endif

static inline int pool_setup(void **state)
{
    (void)state;
    return apr_pool_create(&pool, NULL) == APR_SUCCESS ? 0 : -1;
}

static inline int pool_teardown(void **state)
{
    (void)state;
    apr_pool_destroy(pool);
    return 0;
}

#define UNIT_TEST(f) cmocka_unit_test_setup_teardown(f, pool_setup, pool_teardown)

#define RUN_UNIT_TESTS(name, tests)                                      \
    do {                                                                 \
        int failed;                                                      \
        apr_initialize();                                                \
        failed = cmocka_run_group_tests_name(name, tests, NULL, NULL);   \
        apr_terminate();                                                 \
        return failed;                                                   \
    } while (0)

/* Parses JSON text that a test writes by hand, owned by the test's pool; the
 * test fails if it is not JSON. */
static inline json_t *parse(const char *text)
{
    json_error_t err;
    json_t *value = json_loads(text, JSON_DECODE_ANY | JSON_ALLOW_NUL, &err);

    if (!value) {
        fail_msg("bad test JSON '%s': %s", text, err.text);
    }
    return cp_json_pool_own(pool, value);
}

/* JSON text as the module reads it (cp_json_load: wide integers kept, where
 * parse, jansson's reader, refuses them), owned by the test's pool. */
static inline json_t *load(const char *text)
{
    json_t *value = cp_json_load(pool, text, strlen(text), NULL);

    if (!value) {
        fail_msg("bad test JSON '%s'", text);
    }
    return value;
}

/* An index's fields, NULL-terminated, as an array (const char *). */
static inline apr_array_header_t *fields_of(const char *const *names)
{
    apr_array_header_t *fields = apr_array_make(pool, 4, sizeof(const char *));

    while (*names) {
        APR_ARRAY_PUSH(fields, const char *) = *names++;
    }
    return fields;
}

/* CouchPageMaxEmits's default, as the tests' views have it. */
#define UNIT_MAX_EMITS 64

/* The view a CouchPageView URL names, no option set but max_emits; the
 * test fails if it is refused. */
static inline cp_view view_of(const char *url)
{
    cp_view view;
    const char *reason;

    memset(&view, 0, sizeof(view));
    reason = cp_view_init(pool, url, &view);
    if (reason) {
        fail_msg("'%s' refused: %s", url, reason);
    }
    view.max_emits = UNIT_MAX_EMITS;
    return view;
}

/* A view response a test writes by hand, read as the backend reads one
 * (rows need no document ids); the test fails if it is refused. */
static inline const cp_answer *answer_text(const char *text)
{
    const cp_answer *answer = NULL;
    const char *reason = cp_response_read_view(pool, cp_response_padded(pool, text, strlen(text)),
                                               strlen(text), 0, &answer);

    if (reason) {
        fail_msg("bad test view response '%s': %s", text, reason);
    }
    return answer;
}

/* The row a test writes by hand, as the one row of a view response. */
static inline const cp_row *row_text(const char *row)
{
    const cp_answer *answer = answer_text(apr_pstrcat(pool, "{\"rows\":[", row, "]}", NULL));

    if (cp_answer_rows(answer) != 1) {
        fail_msg("bad test row '%s'", row);
    }
    return cp_answer_row(answer, 0);
}

/* The same for a response a test builds with jansson. */
static inline const cp_answer *answer_json(const json_t *value)
{
    return answer_text(cp_json_text(pool, value));
}

#endif
