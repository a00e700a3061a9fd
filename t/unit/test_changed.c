/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of couchpage_changed: a sequence's elements and its mark, the
 * comparison of a walk's start with a later page's sequence (the same
 * copies, other copies, many ranges, the double's and plain numbers), the
 * mark in every form of token and read back, and a page's tokens marked
 * (cp_serve's walks against the real CouchDB: t/api/38_changed.t). */
#include "unit.h"
#include "couchpage_changed.h"
#include "couchpage_seq.h"

#include <apr_encode.h>

/* A packed sequence as CouchDB writes it (uncompressed): one element
 * {Node, [Begin, End], Seq} a range, range i of n covering its share of
 * 0..2^32-1; seqs[i] below 2^31. */
static const char *packed(int n, const char *const *nodes, const long *seqs)
{
    unsigned char term[4096];
    apr_size_t at = 0;
    long sum = 0;
    int i;

    term[at++] = 131;
    term[at++] = 108;
    term[at++] = 0, term[at++] = 0, term[at++] = 0, term[at++] = (unsigned char)n;
    for (i = 0; i < n; i++) {
        apr_size_t len = strlen(nodes[i]);
        unsigned long begin = (unsigned long)i * (0xffffffffUL / (unsigned long)n);

        term[at++] = 104, term[at++] = 3;
        term[at++] = 100, term[at++] = 0, term[at++] = (unsigned char)len;
        memcpy(term + at, nodes[i], len);
        at += len;
        term[at++] = 108, term[at++] = 0, term[at++] = 0, term[at++] = 0, term[at++] = 2;
        term[at++] = 98;
        term[at++] = (unsigned char)(begin >> 24), term[at++] = (unsigned char)(begin >> 16);
        term[at++] = (unsigned char)(begin >> 8), term[at++] = (unsigned char)begin;
        term[at++] = 97, term[at++] = (unsigned char)i;
        term[at++] = 106;
        term[at++] = 98;
        term[at++] = (unsigned char)(seqs[i] >> 24), term[at++] = (unsigned char)(seqs[i] >> 16);
        term[at++] = (unsigned char)(seqs[i] >> 8), term[at++] = (unsigned char)seqs[i];
        sum += seqs[i];
    }
    term[at++] = 106;
    return cp_seq_canonical(pool, apr_psprintf(pool, "%ld-%s", sum,
                                               apr_pencode_base64_binary(pool, term, at,
                                                                         APR_ENCODE_BASE64URL
                                                                         | APR_ENCODE_NOPADDING,
                                                                         NULL)));
}

static const char *const ONE_NODE[] = { "a@h", "a@h", "a@h", "a@h", "a@h", "a@h", "a@h", "a@h" };

static void a_packed_sequence_has_its_copies_and_numbers(void **state)
{
    static const char *const nodes[] = { "n1@h", "n2@h" };
    static const long seqs[] = { 7, 300000 };
    apr_array_header_t *elements = cp_seq_elements(pool, packed(2, nodes, seqs));
    const cp_seq_element *e;

    (void)state;
    assert_non_null(elements);
    assert_int_equal(elements->nelts, 2);
    e = &APR_ARRAY_IDX(elements, 0, cp_seq_element);
    assert_true(e->seq == 7 || e->seq == 300000);
    assert_true(e->name_len > 4);
    /* CouchDB's own, compressed, read back (a single node's two ranges) */
    elements = cp_seq_elements(pool, cp_seq_canonical(pool,
        "11-g1AAAABheJzLYWBgYMpgTmEQS84vTc5ISTI0tbQwcTA0MtczAELDHJB8HguQZGgAUv-BICuRnZCGRIak"
        "erBKliwAjxkabw"));
    assert_non_null(elements);
    assert_int_equal(elements->nelts, 2);
    assert_int_equal(APR_ARRAY_IDX(elements, 0, cp_seq_element).seq
                     + APR_ARRAY_IDX(elements, 1, cp_seq_element).seq, 11);
    /* a number, the double's spelling; nothing else */
    elements = cp_seq_elements(pool, "42");
    assert_int_equal(APR_ARRAY_IDX(elements, 0, cp_seq_element).seq, 42);
    elements = cp_seq_elements(pool, "9-double");
    assert_int_equal(APR_ARRAY_IDX(elements, 0, cp_seq_element).seq, 9);
    assert_null(cp_seq_elements(pool, "x-double"));
    assert_null(cp_seq_elements(pool, "9-dou ble"));
    assert_null(cp_seq_elements(pool, "9-sAAAA"));
    assert_null(cp_seq_elements(pool, NULL));
}

static void the_same_copies_compare_range_by_range(void **state)
{
    static const char *const nodes[] = { "n1@h", "n2@h" };
    static const long then[] = { 7, 5 }, same[] = { 7, 5 }, one_more[] = { 7, 6 };
    const char *mark = cp_changed_mark(pool, packed(2, nodes, then));

    (void)state;
    assert_non_null(mark);
    assert_true(cp_changed_mark_valid(mark, strlen(mark)));
    /* two entries, "TAG7" and "TAG5", in the sequence's order */
    assert_int_equal(strlen(mark), 2 * (CP_CHANGED_TAG + 1) + 1);
    assert_int_equal(cp_changed_compare(pool, mark, packed(2, nodes, same)), CP_CHANGED_NO);
    assert_int_equal(cp_changed_compare(pool, mark, packed(2, nodes, one_more)),
                     CP_CHANGED_YES);
    /* a number that went back: the copy made anew, nothing to tell */
    assert_int_equal(cp_changed_compare(pool, cp_changed_mark(pool, packed(2, nodes, one_more)),
                                        packed(2, nodes, then)), CP_CHANGED_UNKNOWN);
    assert_int_equal(cp_changed_compare(pool, NULL, packed(2, nodes, then)), CP_CHANGED_UNKNOWN);
    assert_int_equal(cp_changed_compare(pool, mark, NULL), CP_CHANGED_UNKNOWN);
}

static void another_copy_tells_nothing_of_its_range(void **state)
{
    static const char *const nodes[] = { "n1@h", "n2@h" }, *const other[] = { "n1@h", "n3@h" };
    static const long then[] = { 7, 5 }, quiet[] = { 7, 9 }, written[] = { 8, 9 };
    const char *mark = cp_changed_mark(pool, packed(2, nodes, then));

    (void)state;
    /* the second range answered by n3, counting another way: not comparable */
    assert_int_equal(cp_changed_compare(pool, mark, packed(2, other, quiet)),
                     CP_CHANGED_UNKNOWN);
    /* but the first, answered by n1 both times, was written */
    assert_int_equal(cp_changed_compare(pool, mark, packed(2, other, written)),
                     CP_CHANGED_YES);
}

/* A mark a thread kept is the mark made anew: for each of more sequences
 * than it keeps, asked again after others pushed it out, and the same
 * sequence spelled in a string of its own. */
static void a_kept_mark_is_the_mark_made_anew(void **state)
{
    static const char *const nodes[] = { "n1@h", "n2@h" };
    const char *first[7];
    long numbers[2];
    int i, round;

    (void)state;
    for (round = 0; round < 2; round++) {
        for (i = 0; i < 7; i++) {
            const char *mark;

            numbers[0] = 10 + i;
            numbers[1] = 20 * i;
            mark = cp_changed_mark(pool, apr_pstrdup(pool, packed(2, nodes, numbers)));
            assert_non_null(mark);
            if (round == 0) {
                first[i] = mark;
                /* at once again: from what the thread kept */
                assert_string_equal(cp_changed_mark(pool, packed(2, nodes, numbers)), mark);
            }
            else {
                assert_string_equal(mark, first[i]);
            }
        }
    }
    numbers[0] = 10;
    numbers[1] = 0;
    assert_int_not_equal(strcmp(first[0], first[1]), 0);
    assert_int_equal(cp_changed_compare(pool, first[0], packed(2, nodes, numbers)),
                     CP_CHANGED_NO);
}

static void many_ranges_are_one_entry(void **state)
{
    static const long then[] = { 1, 2, 3, 4, 5, 6, 7, 8 }, same[] = { 1, 2, 3, 4, 5, 6, 7, 8 };
    static const long more[] = { 1, 2, 3, 4, 5, 6, 7, 9 };
    static const char *const moved[] = { "a@h", "a@h", "a@h", "a@h", "a@h", "a@h", "a@h",
                                         "b@h" };
    const char *mark = cp_changed_mark(pool, packed(8, ONE_NODE, then));

    (void)state;
    assert_non_null(mark);
    /* one entry: TAG and the sum, 36 */
    assert_int_equal(strlen(mark), CP_CHANGED_TAG + 2);
    assert_string_equal(mark + CP_CHANGED_TAG, "36");
    assert_int_equal(cp_changed_compare(pool, mark, packed(8, ONE_NODE, same)), CP_CHANGED_NO);
    assert_int_equal(cp_changed_compare(pool, mark, packed(8, ONE_NODE, more)), CP_CHANGED_YES);
    assert_int_equal(cp_changed_compare(pool, mark, packed(8, moved, more)),
                     CP_CHANGED_UNKNOWN);
    /* four ranges are still named one by one */
    mark = cp_changed_mark(pool, packed(4, ONE_NODE, then));
    assert_int_equal(strlen(mark), 4 * (CP_CHANGED_TAG + 1) + 3);
}

static void plain_sequences_compare_as_numbers(void **state)
{
    const char *mark = cp_changed_mark(pool, "7-double");

    (void)state;
    assert_int_equal(cp_changed_compare(pool, mark, "7-double"), CP_CHANGED_NO);
    assert_int_equal(cp_changed_compare(pool, mark, "8-double"), CP_CHANGED_YES);
    assert_int_equal(cp_changed_compare(pool, mark, "8"), CP_CHANGED_UNKNOWN);
    assert_int_equal(cp_changed_compare(pool, cp_changed_mark(pool, "12"), "12"),
                     CP_CHANGED_NO);
    assert_null(cp_changed_mark(pool, "not a sequence"));
    assert_null(cp_changed_mark(pool, NULL));
}

/* text decoded for rows: its walk's mark, NULL for none; "refused" when
 * the decoder refuses it. */
static const char *walk_in(const char *text, const cp_token_rows *rows, cp_token *token)
{
    return cp_token_decode(pool, text, rows, token) ? "refused" : token->walk;
}

static void tokens_carry_the_mark_and_read_as_before(void **state)
{
    const char *mark = cp_changed_mark(pool, "7-double");
    const cp_token_rows keyset = { 1, 1, 1, 0 };
    cp_token token;
    const char *text;

    (void)state;
    /* a view's token: its last member */
    text = cp_token_mark(pool, "[3,\"a~3\"]", mark);
    assert_string_equal(text, apr_pstrcat(pool, "[3,\"a~3\",\"", mark, "\"]", NULL));
    assert_string_equal(walk_in(text, CP_TOKEN_VIEW_ROWS(1), &token), mark);
    assert_string_equal(token.docid, "a~3");
    assert_string_equal(token.key_json, "3");
    assert_int_equal(token.index, 0);
    text = cp_token_mark(pool, "[3,\"a3\",2]", mark);
    assert_string_equal(walk_in(text, CP_TOKEN_VIEW_ROWS(1), &token), mark);
    assert_int_equal(token.index, 2);
    /* a grouped row's [key]: [key, MARK] */
    text = cp_token_mark(pool, "[[1,2]]", mark);
    assert_string_equal(walk_in(text, CP_TOKEN_VIEW_ROWS(0), &token), mark);
    assert_string_equal(token.key_json, "[1,2]");
    /* objects: "w" beside their members */
    text = cp_token_mark(pool, "{\"g\":[[7]],\"t\":53,\"p\":7}", mark);
    assert_string_equal(walk_in(text, CP_TOKEN_VIEW_ROWS(0), &token), mark);
    assert_true(token.counted);
    text = cp_token_mark(pool, "{\"a\":[[\"x\"],\"id\"]}", mark);
    assert_string_equal(walk_in(text, &keyset, &token), mark);
    assert_int_equal(token.from, CP_FROM_AFTER);
    text = cp_token_mark(pool, cp_token_encode_bounded(pool, json_string("a long key"), "d1", 0,
                                                       4, 0), mark);
    assert_string_equal(walk_in(text, CP_TOKEN_VIEW_ROWS(1), &token), mark);
    assert_non_null(token.digest);
    /* "last" is every walk's; no mark: the token as it is */
    assert_string_equal(cp_token_mark(pool, CP_TOKEN_LAST, mark), CP_TOKEN_LAST);
    assert_string_equal(cp_token_mark(pool, "[3,\"a3\"]", NULL), "[3,\"a3\"]");
    assert_null(cp_token_mark(pool, NULL, mark));
    /* older tokens: no mark */
    assert_null(walk_in("[3,\"a3\"]", CP_TOKEN_VIEW_ROWS(1), &token));
    assert_null(walk_in("[3,\"AAAAA1\"]", CP_TOKEN_VIEW_ROWS(1), &token));
    assert_string_equal(token.docid, "AAAAA1");
    assert_null(walk_in("[3,\"a3\",2]", CP_TOKEN_VIEW_ROWS(1), &token));
    assert_null(walk_in("[[1,2]]", CP_TOKEN_VIEW_ROWS(0), &token));
    /* a mark not of the form, or one member too many: refused */
    assert_string_equal(walk_in("[3,\"a3\",\"nomark\"]", CP_TOKEN_VIEW_ROWS(1), &token),
                        "refused");
    assert_string_equal(walk_in("[3,\"a3\",\"AAAAA1..AAAAA2\"]", CP_TOKEN_VIEW_ROWS(1), &token),
                        "refused");
    assert_string_equal(walk_in("[3,\"a3\",1,\"AAAAA1\",\"AAAAA1\"]", CP_TOKEN_VIEW_ROWS(1),
                                &token), "refused");
    assert_string_equal(walk_in("[[1],\"AAAAA1.\"]", CP_TOKEN_VIEW_ROWS(0), &token), "refused");
    assert_string_equal(walk_in("{\"a\":[[\"x\"],\"id\"],\"w\":7}", &keyset, &token), "refused");
    assert_string_equal(walk_in("{\"a\":[[\"x\"],\"id\"],\"w\":\"AAAA!1\"}", &keyset, &token),
                        "refused");
    assert_string_equal(walk_in("{\"a\":[[\"x\"],\"id\"],\"w\":\"AAAAA1.BBBBB2.CCCCC3.DDDDD4."
                                "EEEEE5\"}", &keyset, &token), "refused");
    assert_string_equal(walk_in("{\"a\":[[\"x\"],\"id\"],\"w\":\"AAAAA1234567890123456789\"}",
                                &keyset, &token), "refused");
    assert_string_equal(walk_in("{\"a\":[[\"x\"],\"id\"],\"w\":\"AAAAA1.BBBBB2\"}", &keyset,
                                &token), "AAAAA1.BBBBB2");
}

/* A page of one row with a next, a prev and a last token. */
static cp_page *page_of_tokens(void)
{
    cp_page *page = apr_pcalloc(pool, sizeof(*page));

    page->rows = apr_array_make(pool, 1, sizeof(const cp_row *));
    page->pages = apr_array_make(pool, 2, sizeof(cp_page_link));
    page->next = "[4,\"d4\"]";
    page->prev = "[1,\"d1\"]";
    page->last = CP_TOKEN_LAST;
    cp_page_add_link(page->pages, 2, "[2,\"d2\"]", 1);
    cp_page_add_link(page->pages, 3, "[4,\"d4\"]", 0);
    return page;
}

static cp_walk walk_of(const char *walk, int says_no)
{
    cp_walk w;

    memset(&w, 0, sizeof(w));
    w.applies = 1;
    w.says_no = says_no;
    w.begins = walk == NULL;
    w.walk = walk;
    w.room.max_sent = 4096;
    w.room.max_escaped = 8192;
    return w;
}

static const char *marked(const char *token, const char *mark)
{
    return apr_pstrcat(pool, "[", token, ",\"", mark, "\"]", NULL);
}

/* cp_changed_finish on a page (no jump, plain tokens). */
static void finish(cp_walk *walk, const char *seq, cp_page *page)
{
    cp_served served;
    cp_source source;

    memset(&served, 0, sizeof(served));
    memset(&source, 0, sizeof(source));
    served.page = *page;
    served.seq = seq;
    assert_null(cp_changed_finish(pool, walk, &source, NULL, NULL, &served));
    *page = served.page;
}

static void a_page_tells_and_passes_its_walk_on(void **state)
{
    cp_walk walk = walk_of(NULL, 1);
    cp_page *page = page_of_tokens();
    const char *start = cp_changed_mark(pool, "7-double");
    const cp_page_link *current, *other;
    apr_size_t escaped;

    (void)state;
    /* a first page begins the walk: no "changed", its tokens carry its start */
    assert_int_equal(cp_changed_answered(pool, &walk, "7-double", NULL, &escaped),
                     strlen(start) + 7);
    assert_int_equal(escaped, strlen(start) + 19);
    finish(&walk, "7-double", page);
    assert_int_equal(page->changed, CP_CHANGED_UNKNOWN);
    assert_string_equal(page->next, marked("4,\"d4\"", start));
    assert_string_equal(page->prev, marked("1,\"d1\"", start));
    assert_string_equal(page->last, CP_TOKEN_LAST);
    current = &APR_ARRAY_IDX(page->pages, 0, cp_page_link);
    other = &APR_ARRAY_IDX(page->pages, 1, cp_page_link);
    /* the current page's is the client's, as sent */
    assert_string_equal(current->start, "[2,\"d2\"]");
    assert_string_equal(other->start, page->next);
    /* a later page of a quiet walk: nothing changed, the start passed on */
    walk = walk_of(start, 1);
    page = page_of_tokens();
    finish(&walk, "7-double", page);
    assert_int_equal(page->changed, CP_CHANGED_NO);
    assert_string_equal(page->next, marked("4,\"d4\"", start));
    /* rows written since: still the walk's start */
    walk = walk_of(start, 1);
    page = page_of_tokens();
    finish(&walk, "8-double", page);
    assert_int_equal(page->changed, CP_CHANGED_YES);
    assert_string_equal(page->next, marked("4,\"d4\"", start));
    /* a page of documents never says nothing changed */
    walk = walk_of(start, 0);
    page = page_of_tokens();
    finish(&walk, "7-double", page);
    assert_int_equal(page->changed, CP_CHANGED_UNKNOWN);
    walk = walk_of(start, 0);
    page = page_of_tokens();
    finish(&walk, "8-double", page);
    assert_int_equal(page->changed, CP_CHANGED_YES);
    /* no sequence in this page's answers: the walk goes on, untold */
    walk = walk_of(start, 1);
    page = page_of_tokens();
    finish(&walk, NULL, page);
    assert_int_equal(page->changed, CP_CHANGED_UNKNOWN);
    assert_string_equal(page->next, marked("4,\"d4\"", start));
    /* an old token: a walk without a start, which stays so */
    walk = walk_of(NULL, 1);
    walk.begins = 0;
    page = page_of_tokens();
    finish(&walk, "8-double", page);
    assert_int_equal(page->changed, CP_CHANGED_UNKNOWN);
    assert_string_equal(page->next, "[4,\"d4\"]");
    /* a location whose index lags: no marks at all */
    walk = walk_of(NULL, 1);
    walk.applies = 0;
    page = page_of_tokens();
    finish(&walk, "8-double", page);
    assert_string_equal(page->next, "[4,\"d4\"]");
}

static void a_walk_begins_at_the_first_and_the_last_page(void **state)
{
    cp_walk walk = walk_of("AAAAA1", 1);
    cp_token token;
    cp_page *page;

    (void)state;
    memset(&token, 0, sizeof(token));
    token.from = CP_FROM_LAST;
    walk.begins = 0;
    cp_changed_token(&walk, &token);
    assert_true(walk.begins);
    assert_null(walk.walk);
    walk = walk_of("AAAAA1", 1);
    walk.begins = 0;
    token.from = CP_FROM_ROW;
    token.walk = "BBBBB2";
    cp_changed_token(&walk, &token);
    assert_false(walk.begins);
    assert_string_equal(walk.walk, "BBBBB2");
    /* ?page=N's token, not the client's: its page begins a walk, and says
     * what the walk's page N would, nothing changed */
    walk = walk_of(NULL, 1);
    cp_changed_token(&walk, &token);
    assert_true(walk.begins);
    assert_true(walk.jumped);
    page = page_of_tokens();
    finish(&walk, "7-double", page);
    assert_int_equal(page->changed, CP_CHANGED_NO);
    assert_string_equal(page->next, marked("4,\"d4\"", cp_changed_mark(pool, "7-double")));
    /* its own link too: the token the walk's page N was reached by */
    {
        cp_served served;
        cp_source source;

        walk = walk_of(NULL, 1);
        cp_changed_token(&walk, &token);
        memset(&served, 0, sizeof(served));
        memset(&source, 0, sizeof(source));
        served.page = *page_of_tokens();
        served.seq = "7-double";
        assert_null(cp_changed_finish(pool, &walk, &source, "[2,\"d2\"]", "[2,\"d2\"]",
                                      &served));
        assert_string_equal(APR_ARRAY_IDX(served.page.pages, 0, cp_page_link).start,
                            marked("2,\"d2\"", cp_changed_mark(pool, "7-double")));
    }
}

static void a_count_of_an_earlier_page_goes_out_of_date(void **state)
{
    const char *start = cp_changed_mark(pool, "7-double");
    cp_walk walk = walk_of(start, 1);
    cp_page *page = page_of_tokens();

    (void)state;
    page->count_earlier = 1;
    finish(&walk, "9-double", page);
    assert_int_equal(page->changed, CP_CHANGED_YES);
    assert_true(page->count_changed);
    walk = walk_of(start, 1);
    page = page_of_tokens();
    page->count_earlier = 1;
    finish(&walk, "7-double", page);
    assert_false(page->count_changed);
    /* a count of its own is current */
    walk = walk_of(start, 1);
    page = page_of_tokens();
    finish(&walk, "9-double", page);
    assert_false(page->count_changed);
}

static void tokens_leave_room_for_the_mark(void **state)
{
    cp_token_room room = { 40, 200, 0, 0, 0, 0 };
    cp_walk walk = walk_of(NULL, 1);
    const char *text = "[\"0123456789\",\"0123456789\"]"; /* 27 bytes */
    apr_size_t escaped;

    (void)state;
    assert_true(cp_token_fits(&room, text));
    room.extra = 14;
    assert_false(cp_token_fits(&room, text));
    room.extra = 0;
    room.max_sent = 4096;
    room.max_escaped = 41; /* 20 digits, 7 characters escaped */
    assert_true(cp_token_fits(&room, text));
    room.extra_escaped = 1;
    assert_false(cp_token_fits(&room, text));
    room.sealed = 1;
    room.max_escaped = 4096;
    assert_true(cp_token_fits(&room, text));
    /* a cap too small to spare a quarter for the mark: none carried */
    walk.room.max_sent = 48;
    assert_int_equal(cp_changed_answered(pool, &walk, "7-double", NULL, &escaped), 0);
    assert_int_equal(escaped, 0);
    assert_null(walk.walk);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        UNIT_TEST(a_packed_sequence_has_its_copies_and_numbers),
        UNIT_TEST(the_same_copies_compare_range_by_range),
        UNIT_TEST(another_copy_tells_nothing_of_its_range),
        UNIT_TEST(a_kept_mark_is_the_mark_made_anew),
        UNIT_TEST(many_ranges_are_one_entry),
        UNIT_TEST(plain_sequences_compare_as_numbers),
        UNIT_TEST(tokens_carry_the_mark_and_read_as_before),
        UNIT_TEST(a_page_tells_and_passes_its_walk_on),
        UNIT_TEST(a_walk_begins_at_the_first_and_the_last_page),
        UNIT_TEST(a_count_of_an_earlier_page_goes_out_of_date),
        UNIT_TEST(tokens_leave_room_for_the_mark),
    };

    RUN_UNIT_TESTS("changed", tests);
}
