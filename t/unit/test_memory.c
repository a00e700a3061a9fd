/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of couchpage_memory: a process's sets of keys, and notes that
 * one caller learns again when they are old; they link the core alone. */
#include "unit.h"
#include "couchpage_memory.h"

static void a_key_is_added_once(void **state)
{
    cp_memory *set = cp_memory_make(pool);
    const char bytes[] = { 'a', '\0', 'b' };

    assert_non_null(set);
    assert_false(cp_memory_has(set, "http://couch:5984", APR_HASH_KEY_STRING));
    assert_true(cp_memory_add(set, "http://couch:5984", APR_HASH_KEY_STRING));
    assert_false(cp_memory_add(set, "http://couch:5984", APR_HASH_KEY_STRING));
    assert_true(cp_memory_has(set, "http://couch:5984", APR_HASH_KEY_STRING));
    /* a key of bytes, a NUL among them, is its bytes */
    assert_true(cp_memory_add(set, bytes, sizeof(bytes)));
    assert_false(cp_memory_has(set, "a", APR_HASH_KEY_STRING));
    assert_true(cp_memory_has(set, bytes, sizeof(bytes)));
}

static void no_set_remembers_nothing(void **state)
{
    int again = 1;

    assert_false(cp_memory_add(NULL, "k", APR_HASH_KEY_STRING));
    assert_false(cp_memory_has(NULL, "k", APR_HASH_KEY_STRING));
    cp_memory_note_put(NULL, "k", "text");
    assert_null(cp_memory_note_get(NULL, "k", 0, pool, &again));
    assert_false(again);
}

static void an_old_note_is_learnt_again_by_one_caller(void **state)
{
    cp_memory *set = cp_memory_make(pool);
    int again = 1;

    assert_null(cp_memory_note_get(set, "index", apr_time_from_sec(60), pool, &again));
    assert_false(again);
    cp_memory_note_put(set, "index", "[\"year\"]");
    assert_string_equal(cp_memory_note_get(set, "index", apr_time_from_sec(60), pool, &again),
                        "[\"year\"]");
    assert_false(again);
    /* older than max_age: this caller learns it again, the next does not */
    assert_string_equal(cp_memory_note_get(set, "index", -1, pool, &again), "[\"year\"]");
    assert_true(again);
    assert_string_equal(cp_memory_note_get(set, "index", apr_time_from_sec(60), pool, &again),
                        "[\"year\"]");
    assert_false(again);
    /* a longer note replaces it */
    cp_memory_note_put(set, "index", "[\"a very long field name, longer than the buffer of "
                                     "sixty-four bytes a note starts with\"]");
    assert_non_null(strstr(cp_memory_note_get(set, "index", apr_time_from_sec(60), pool,
                                              &again), "sixty-four"));
}

/* A thread memo gives what was kept for each text it holds, and nothing
 * for a text pushed out by newer ones or too long to keep. */
static void a_thread_memo_keeps_the_last_few(void **state)
{
    static cp_thread_memo memo;
    char from[16], made[16];
    char *longer = apr_palloc(pool, CP_THREAD_MEMO_MAX + 1);
    int i;

    (void)state;
    assert_null(cp_thread_memo_get(&memo, pool, "a"));
    for (i = 0; i < CP_THREAD_MEMO_SLOTS + 2; i++) {
        apr_snprintf(from, sizeof(from), "from%d", i);
        apr_snprintf(made, sizeof(made), "made%d", i);
        cp_thread_memo_put(&memo, from, made);
    }
    /* the two first were replaced; the others are what was made of them */
    assert_null(cp_thread_memo_get(&memo, pool, "from0"));
    assert_null(cp_thread_memo_get(&memo, pool, "from1"));
    for (i = 2; i < CP_THREAD_MEMO_SLOTS + 2; i++) {
        apr_snprintf(from, sizeof(from), "from%d", i);
        apr_snprintf(made, sizeof(made), "made%d", i);
        assert_string_equal(cp_thread_memo_get(&memo, pool, from), made);
    }
    memset(longer, 'x', CP_THREAD_MEMO_MAX);
    longer[CP_THREAD_MEMO_MAX] = '\0';
    cp_thread_memo_put(&memo, longer, "y");
    assert_null(cp_thread_memo_get(&memo, pool, longer));
    assert_string_equal(cp_thread_memo_get(&memo, pool, "from2"), "made2");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        UNIT_TEST(a_key_is_added_once),
        UNIT_TEST(no_set_remembers_nothing),
        UNIT_TEST(an_old_note_is_learnt_again_by_one_caller),
        UNIT_TEST(a_thread_memo_keeps_the_last_few),
    };

    RUN_UNIT_TESTS("memory", tests);
}
