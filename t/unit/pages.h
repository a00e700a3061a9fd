/* SPDX-License-Identifier: Apache-2.0 */
/* Fixtures the plan and page tests share (test_plan.c, test_page.c): a
 * location's plan, and a token as a client's decodes. */
#ifndef COUCHPAGE_UNIT_PAGES_H
#define COUCHPAGE_UNIT_PAGES_H

#include "unit.h"
#include "couchpage_page.h"
#include "couchpage_plan.h"

/* The plan of view's location (partition, low and high as
 * cp_plan_init takes them), count rows a page and links pages linked
 * either side; the test fails if it is refused. */
static inline cp_plan plan_of(const cp_view *view, const char *partition, const char *low,
                              const char *high, int count, int links)
{
    cp_plan plan;
    const char *reason = cp_plan_init(pool, &plan, view, partition, low, high, count, links);

    if (reason) {
        fail_msg("plan refused: %s", reason);
    }
    return plan;
}

/* A token as cp_token_decode gives it: a key (JSON), a document id and an
 * index among the rows the document emits under the key. */
static inline cp_token token_of(const char *key, const char *docid, int index)
{
    cp_token token;

    memset(&token, 0, sizeof(token));
    token.from = CP_FROM_ROW;
    token.key = parse(key);
    token.key_json = cp_json_text(pool, token.key);
    token.docid = docid;
    token.index = index;
    return token;
}

#endif
