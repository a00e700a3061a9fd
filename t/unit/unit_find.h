/* SPDX-License-Identifier: Apache-2.0 */
/* Shared set-up for the cmocka tests of _find locations (couchpage_find,
 * couchpage_keyset): a location's sort. Include after unit.h. */
#ifndef COUCHPAGE_UNIT_FIND_H
#define COUCHPAGE_UNIT_FIND_H

#include "couchpage_find.h"

/* The sort of names (NULL-terminated); the test fails if it is refused. */
static inline cp_find_sort sort_of(int descending, const char *const *names)
{
    cp_find_sort sort;
    const char *why;
    int count = 0;

    while (names[count]) {
        count++;
    }
    why = cp_find_sort_init(pool, names, count, descending, &sort);
    if (why) {
        fail_msg("sort refused: %s", why);
    }
    return sort;
}

#endif
