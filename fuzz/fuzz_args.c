/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target: arbitrary query strings into cp_args_parse, with a few
 * limit caps. What it accepts must be in range, and a start it returns goes
 * on to cp_token_decode, as in the module. The same bytes, as an Accept
 * header, go to cp_format_from_accept.
 */
#include "fuzz.h"
#include "couchpage_args.h"
#include "couchpage_render.h"
#include "couchpage_token.h"

static const int max_limits[] = { 1, 20, 10000, 999999999 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    apr_pool_t *pool = fuzz_pool();
    const char *query = fuzz_cstring(pool, data, size);
    size_t i;

    for (i = 0; i < sizeof(max_limits) / sizeof(max_limits[0]); i++) {
        cp_args args;
        cp_token token;
        const char *reason;

        memset(&args, 0x5a, sizeof(args));
        reason = cp_args_parse(pool, query, max_limits[i], &args);
        if (reason) {
            FUZZ_CHECK(*reason, "empty reason for %s", query);
            /* the 400 the module sends */
            FUZZ_CHECK(fuzz_is_json(cp_render_error(pool, "bad_request", reason)),
                       "the error body for %s", query);
            continue;
        }
        FUZZ_CHECK(args.limit == 0 || (args.limit >= 1 && args.limit <= max_limits[i]),
                   "limit %d out of 1..%d for %s", args.limit, max_limits[i], query);
        FUZZ_CHECK(args.format == CP_FORMAT_AUTO || args.format == CP_FORMAT_JSON
                       || args.format == CP_FORMAT_HTML,
                   "format %d for %s", (int)args.format, query);
        if (args.start) {
            cp_token_decode(pool, args.start, CP_TOKEN_VIEW_ROWS(1), &token);
            cp_token_decode(pool, args.start, CP_TOKEN_VIEW_ROWS(0), &token);
        }
    }
    /* the bytes as an Accept header */
    {
        cp_format format = cp_format_from_accept(pool, query);

        FUZZ_CHECK(format == CP_FORMAT_JSON || format == CP_FORMAT_HTML,
                   "format %d for Accept: %s", (int)format, query);
    }
    /* no query string at all */
    if (size == 0) {
        cp_args args;

        FUZZ_CHECK(!cp_args_parse(pool, NULL, 20, &args) && !args.start && !args.limit,
                   "a NULL query string");
    }
    apr_pool_destroy(pool);
    return 0;
}
