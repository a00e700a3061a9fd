/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of couchpage_read: what a backend read came to, whether it is
 * sent again, and the failure it ends in; they link the core alone. */
#include "unit.h"
#include "couchpage_read.h"

static cp_read_outcome answered(int status, const char *body)
{
    cp_read_outcome a;

    memset(&a, 0, sizeof(a));
    a.backend_status = status;
    a.text = body;
    a.len = strlen(body);
    return a;
}

static void what_failed_in_flight(void **state)
{
    cp_read_outcome a = answered(200, "{}");

    assert_null(cp_read_failed_in_flight(pool, &a));
    a.broken = 1;
    assert_string_equal(cp_read_failed_in_flight(pool, &a), "the response was cut off");
    /* a multi-query answer cut off after its 200 came: it is read */
    a.batch = 1;
    assert_true(cp_read_is_cut_batch(&a));
    assert_null(cp_read_failed_in_flight(pool, &a));
    a.unanswered = 1;
    assert_false(cp_read_is_cut_batch(&a));
    assert_string_equal(cp_read_failed_in_flight(pool, &a),
                        "the connection was dropped before the status line");
    a = answered(0, "");
    a.rv = 503;
    assert_string_equal(cp_read_failed_in_flight(pool, &a), "mod_proxy answered 503");
    /* a timeout is never repeated, nor a read past its bound or deadline */
    a.timed_out = 1;
    assert_null(cp_read_failed_in_flight(pool, &a));
    a = answered(200, "{}");
    a.broken = a.too_large = 1;
    assert_null(cp_read_failed_in_flight(pool, &a));
    a = answered(500, "{\"error\":\"nodedown\",\"reason\":\"progress not possible\"}");
    assert_string_equal(cp_read_failed_in_flight(pool, &a), "CouchDB answered 500 nodedown: "
                        "a cluster node went down during the read");
    a = answered(500, "{\"error\":\"unknown_error\",\"reason\":\"function_clause\"}");
    assert_null(cp_read_failed_in_flight(pool, &a));
}

static void reads_are_sent_again_as_far_as_they_may(void **state)
{
    cp_read_outcome a = answered(0, "");
    int resends = 0, repeats = 1;
    const char *line = NULL;

    /* no connection made: the repeat, then no more */
    a.rv = 503;
    assert_true(cp_read_next(pool, &a, &resends, &repeats, &line));
    assert_string_equal(line, "CP0115: the backend could not be reached (mod_proxy answered "
                        "503: no connection was made); trying once more");
    assert_int_equal(repeats, 0);
    assert_false(cp_read_next(pool, &a, &resends, &repeats, &line));
    /* no answer began: resent twice, then the repeat */
    a.rv = 502;
    a.batch = 1;
    repeats = 1;
    assert_true(cp_read_next(pool, &a, &resends, &repeats, &line));
    assert_true(cp_read_next(pool, &a, &resends, &repeats, &line));
    assert_string_equal(line, "CP0106: the backend read failed in flight before any answer "
                        "(mod_proxy answered 502); sending it again");
    assert_int_equal(resends, CP_READ_RESENDS);
    assert_true(cp_read_next(pool, &a, &resends, &repeats, &line));
    assert_string_equal(line, "CP0118: the multi-query read failed in flight (mod_proxy "
                        "answered 502); repeating it once");
    assert_false(cp_read_next(pool, &a, &resends, &repeats, &line));
    /* an answer is never sent again */
    a = answered(200, "{}");
    repeats = 1;
    assert_false(cp_read_next(pool, &a, &resends, &repeats, &line));
    assert_int_equal(repeats, 1);
}

static void the_last_attempt_ends_in_its_failure(void **state)
{
    cp_read_outcome a = answered(404, "{}");
    const char *reason = NULL;

    /* any HTTP answer is read: its status is the caller's */
    assert_int_equal(cp_read_failure(pool, &a, 1, 1024, 0, &reason), 0);
    a.too_large = 1;
    assert_int_equal(cp_read_failure(pool, &a, 1, 1024, 0, &reason), 502);
    assert_string_equal(reason, "the backend response is larger than 1024 bytes");
    assert_int_equal(cp_read_failure(pool, &a, 1, 1024, 100, &reason), 502);
    assert_string_equal(reason, "the backend responses for this request are larger than 1024 "
                        "bytes together (this one came after 100)");
    a = answered(0, "");
    a.rv = 503;
    assert_int_equal(cp_read_failure(pool, &a, 2, 1024, 0, &reason), 503);
    assert_string_equal(reason, "the backend is unavailable (mod_proxy made no connection to "
                        "it, 2 tries)");
    a.timed_out = 1;
    assert_int_equal(cp_read_failure(pool, &a, 1, 1024, 0, &reason), 504);
    a = answered(0, "");
    a.rv = 500;
    assert_int_equal(cp_read_failure(pool, &a, 1, 1024, 0, &reason), 502);
    assert_string_equal(reason, "the backend request failed (proxy status 500)");
    a = answered(200, "{\"results\":[");
    a.broken = 1;
    assert_int_equal(cp_read_failure(pool, &a, 1, 1024, 0, &reason), 502);
    assert_string_equal(reason, "the backend response was cut off");
    a.batch = 1;
    assert_int_equal(cp_read_failure(pool, &a, 1, 1024, 0, &reason), 0);
    a = answered(200, "");
    a.text = NULL;
    assert_int_equal(cp_read_failure(pool, &a, 1, 1024, 0, &reason), 502);
    assert_string_equal(reason, "the backend response could not be read");
}

static void refusals_that_may_mean_no_batch_endpoint(void **state)
{
    assert_true(cp_read_may_lack_batch(400));
    assert_true(cp_read_may_lack_batch(405));
    assert_true(cp_read_may_lack_batch(501));
    assert_false(cp_read_may_lack_batch(401));
    assert_false(cp_read_may_lack_batch(500));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        UNIT_TEST(what_failed_in_flight),
        UNIT_TEST(reads_are_sent_again_as_far_as_they_may),
        UNIT_TEST(the_last_attempt_ends_in_its_failure),
        UNIT_TEST(refusals_that_may_mean_no_batch_endpoint),
    };

    RUN_UNIT_TESTS("read", tests);
}
