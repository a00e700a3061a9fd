/* SPDX-License-Identifier: Apache-2.0 */
#include "couchpage_response.h"
#include "couchpage_json.h"

#include <apr_strings.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* jsmn is header-only: its functions are this file's own. */
#define JSMN_STATIC
#define JSMN_STRICT
#define JSMN_PARENT_LINKS
#include <jsmn.h>

/* A string token's span leaves out its quotes: where it starts and ends in
 * the text, quotes included. */
static int tok_start(const jsmntok_t *t)
{
    return t->type == JSMN_STRING ? t->start - 1 : t->start;
}

static int tok_end(const jsmntok_t *t)
{
    return t->type == JSMN_STRING ? t->end + 1 : t->end;
}

/* The place after the value at t and everything inside it. A key's value
 * is its child: an object member is passed over whole. Tokens come in
 * document order, so a container's come before the first that starts past
 * its end. */
static int next_sibling(const jsmntok_t *tokens, int count, int t)
{
    int end;

    if (tokens[t].type == JSMN_STRING && tokens[t].size == 1) {
        t++;
    }
    if (tokens[t].type != JSMN_OBJECT && tokens[t].type != JSMN_ARRAY) {
        return t + 1;
    }
    end = tokens[t].end;
    for (t++; t < count && tokens[t].start < end; t++) {
    }
    return t;
}

/* --- checks jsmn leaves to its caller --------------------------------- */

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* text[from..to) is white space around at most one separator sep (0: none). */
static int is_gap(const char *text, int from, int to, char sep)
{
    int seen = sep == 0;

    for (; from < to; from++) {
        if (text[from] == sep && !seen) {
            seen = 1;
        }
        else if (!is_space(text[from])) {
            return 0;
        }
    }
    return seen;
}

static int hex_value(const char *p)
{
    int v = 0, i;

    for (i = 0; i < 4; i++) {
        char c = p[i];

        v = v * 16 + (c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
    }
    return v;
}

/* The bytes of a string token (no quotes): UTF-8, no control character,
 * \u escapes that name characters (a high surrogate followed by a low one).
 * jsmn has checked the escapes' letters and hex digits. */
static int is_string_text(const unsigned char *s, int len)
{
    int i = 0;

    while (i < len) {
        unsigned char c = s[i];

        if (c >= 0x20 && c < 0x80) {
            if (c == '\\') {
                if (s[i + 1] == 'u') {
                    int u = hex_value((const char *)s + i + 2);

                    if (u >= 0xdc00 && u <= 0xdfff) {
                        return 0;
                    }
                    if (u >= 0xd800 && u <= 0xdbff) {
                        int low;

                        if (i + 12 > len || s[i + 6] != '\\' || s[i + 7] != 'u') {
                            return 0;
                        }
                        low = hex_value((const char *)s + i + 8);
                        if (low < 0xdc00 || low > 0xdfff) {
                            return 0;
                        }
                        i += 6;
                    }
                    i += 6;
                }
                else {
                    i += 2;
                }
            }
            else {
                i++;
            }
            continue;
        }
        if (c < 0x20) {
            return 0;
        }
        /* a UTF-8 sequence: no overlong forms, surrogates or code points
         * past U+10FFFF */
        if (c >= 0xc2 && c <= 0xdf) {
            if (i + 1 >= len || (s[i + 1] & 0xc0) != 0x80) {
                return 0;
            }
            i += 2;
        }
        else if (c >= 0xe0 && c <= 0xef) {
            unsigned char lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;

            if (i + 2 >= len || s[i + 1] < lo || s[i + 1] > hi || (s[i + 2] & 0xc0) != 0x80) {
                return 0;
            }
            i += 3;
        }
        else if (c >= 0xf0 && c <= 0xf4) {
            unsigned char lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;

            if (i + 3 >= len || s[i + 1] < lo || s[i + 1] > hi || (s[i + 2] & 0xc0) != 0x80
                || (s[i + 3] & 0xc0) != 0x80) {
                return 0;
            }
            i += 4;
        }
        else {
            return 0;
        }
    }
    return 1;
}

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Whether a number, as JSON spells it, is beyond a double's range: JSON
 * parsers (jansson, a browser's) cannot read it as a number. CouchDB never
 * writes one; a backend that does is refused. Only a number whose
 * magnitude is near 1e308 is converted, its digits written without the
 * decimal point so that the locale has no say. */
static int number_overflows(const char *s, int len)
{
    char digits[64];
    int i = 0, n = 0, point = -1, first = -1, exponent = 0, exp_sign = 1, magnitude;

    i += s[i] == '-';
    for (; i < len && (is_digit(s[i]) || s[i] == '.'); i++) {
        if (s[i] == '.') {
            point = n;
            continue;
        }
        if (first < 0 && s[i] != '0') {
            first = n;
        }
        n++;
    }
    if (first < 0) {
        return 0; /* zero, whatever its exponent */
    }
    if (i < len) {
        i++;
        exp_sign = s[i] == '-' ? -1 : 1;
        i += s[i] == '-' || s[i] == '+';
        for (; i < len; i++) {
            if (exponent > 100000) {
                break;
            }
            exponent = exponent * 10 + (s[i] - '0');
        }
    }
    /* the power of ten of the first significant digit */
    magnitude = (point < 0 ? n : point) - first - 1 + exp_sign * exponent;
    if (magnitude < 308) {
        return 0;
    }
    if (magnitude > 308) {
        return 1;
    }
    /* 1e308 to 9.99e308: the digits, at most 40 of them, as d.ddd e308 */
    {
        int k = 0, j;
        char *end;

        i = s[0] == '-';
        for (j = 0; i < len && (is_digit(s[i]) || s[i] == '.') && k < 40; i++) {
            if (s[i] == '.') {
                continue;
            }
            if (j++ >= first) {
                digits[k++] = s[i];
            }
        }
        sprintf(digits + k, "e%d", 308 - (k - 1));
        errno = 0;
        return strtod(digits, &end) == HUGE_VAL || errno == ERANGE;
    }
}

/* A primitive token: true, false, null, or a number as JSON spells one,
 * within a double's range. */
static int is_primitive_text(const char *s, int len)
{
    int i = 0;

    if ((len == 4 && !memcmp(s, "true", 4)) || (len == 5 && !memcmp(s, "false", 5))
        || (len == 4 && !memcmp(s, "null", 4))) {
        return 1;
    }
    i += i < len && s[i] == '-';
    if (i >= len || !is_digit(s[i])) {
        return 0;
    }
    if (s[i] == '0') {
        i++;
    }
    else {
        while (i < len && is_digit(s[i])) {
            i++;
        }
    }
    if (i < len && s[i] == '.') {
        if (++i >= len || !is_digit(s[i])) {
            return 0;
        }
        while (i < len && is_digit(s[i])) {
            i++;
        }
    }
    if (i < len && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        i += i < len && (s[i] == '+' || s[i] == '-');
        if (i >= len || !is_digit(s[i])) {
            return 0;
        }
        while (i < len && is_digit(s[i])) {
            i++;
        }
    }
    return i == len && !number_overflows(s, len);
}

/* Checks tokens[0..count) of text, as JSON requires what jsmn does not:
 * a key is a string with one value, the separators between values, and
 * each string's and number's own text. A container whose end was not
 * reached (a body cut off) is not checked for what closes it. Returns 1
 * when they are JSON. */
static int tokens_are_json(apr_pool_t *pool, const char *text, apr_size_t len,
                           const jsmntok_t *tokens, int count)
{
    /* where each container's next member may begin, and how many it has */
    int *cursor = apr_palloc(pool, sizeof(int) * 2 * (apr_size_t)count);
    int *members = cursor + count;
    int i;

    for (i = 0; i < count; i++) {
        const jsmntok_t *t = &tokens[i];
        int parent = t->parent;

        if (parent < 0) {
            if (i != 0 || !is_gap(text, 0, tok_start(t), 0)) {
                return 0;
            }
        }
        else if (tokens[tokens[parent].type == JSMN_STRING ? tokens[parent].parent
                                                            : parent].end >= 0
                 && tok_start(t) >= tokens[tokens[parent].type == JSMN_STRING
                                           ? tokens[parent].parent : parent].end) {
            /* jsmn gives a closed object's last key a value after the
             * object ("rows"}:[...]) */
            return 0;
        }
        else if (tokens[parent].type == JSMN_STRING) {
            /* an object member's value: after the key and a colon */
            int object = tokens[parent].parent;

            if (t->type == JSMN_STRING && t->size != 0) {
                return 0;
            }
            if (!is_gap(text, tok_end(&tokens[parent]), tok_start(t), ':')) {
                return 0;
            }
            cursor[object] = t->end < 0 ? INT_MAX : tok_end(t);
        }
        else {
            /* an array's element, or an object's key */
            if (tokens[parent].type == JSMN_OBJECT
                ? t->type != JSMN_STRING || t->size != 1
                : t->type == JSMN_STRING && t->size != 0) {
                return 0;
            }
            if (!is_gap(text, cursor[parent], tok_start(t), members[parent] ? ',' : 0)) {
                return 0;
            }
            members[parent]++;
            cursor[parent] = t->end < 0 ? INT_MAX : tok_end(t);
        }
        switch (t->type) {
        case JSMN_OBJECT:
        case JSMN_ARRAY:
            cursor[i] = t->start + 1;
            members[i] = 0;
            break;
        case JSMN_STRING:
            if (!is_string_text((const unsigned char *)text + t->start, t->end - t->start)) {
                return 0;
            }
            break;
        case JSMN_PRIMITIVE:
            if (t->size != 0 || !is_primitive_text(text + t->start, t->end - t->start)) {
                return 0;
            }
            break;
        default:
            return 0;
        }
    }
    /* after the value, white space only (jsmn passes over a colon) */
    if (count > 0 && tokens[0].end >= 0 && !is_gap(text, tok_end(&tokens[0]), (int)len, 0)) {
        return 0;
    }
    /* what closes each container: white space only since its last member */
    for (i = 0; i < count; i++) {
        const jsmntok_t *t = &tokens[i];

        if ((t->type == JSMN_OBJECT || t->type == JSMN_ARRAY) && t->end >= 0
            && (cursor[i] == INT_MAX || !is_gap(text, cursor[i], t->end - 1, 0))) {
            return 0;
        }
    }
    return 1;
}

/* --- reading --------------------------------------------------------- */

typedef struct {
    apr_pool_t *pool;
    const char *text;
    jsmntok_t *tokens;
    int count;
} tokenized;

/* Tokenizes text: the status of jsmn_parse (the token count, or an error;
 * JSMN_ERROR_PART when it ends before its values do) and the tokens in
 * *out. A NUL byte ends the text for jsmn: PART when values are open
 * there, else the bytes after the value are refused. */
static int tokenize(apr_pool_t *pool, const char *text, apr_size_t len, tokenized *out)
{
    unsigned int room = (unsigned int)(len / 24) + 64;
    jsmn_parser parser;
    int status;

    out->pool = pool;
    out->text = text;
    out->count = 0;
    if (len >= INT_MAX / 2) {
        return JSMN_ERROR_INVAL;
    }
    out->tokens = apr_palloc(pool, sizeof(jsmntok_t) * room);
    jsmn_init(&parser);
    /* jsmn goes on where it stopped once it has more room */
    while ((status = jsmn_parse(&parser, text, len, out->tokens, room)) == JSMN_ERROR_NOMEM) {
        jsmntok_t *more = apr_palloc(pool, sizeof(jsmntok_t) * room * 4);

        memcpy(more, out->tokens, sizeof(jsmntok_t) * room);
        out->tokens = more;
        room *= 4;
    }
    out->count = (int)parser.toknext;
    /* a NUL byte stopped it with every value closed */
    return status >= 0 && parser.pos < len ? JSMN_ERROR_INVAL : status;
}

/* Whether the string token t is exactly name. */
static int is_name(const tokenized *in, int t, const char *name)
{
    const jsmntok_t *tok = &in->tokens[t];
    apr_size_t len = (apr_size_t)(tok->end - tok->start);

    if (tok->type != JSMN_STRING) {
        return 0;
    }
    if (!memchr(in->text + tok->start, '\\', len)) {
        return strlen(name) == len && !memcmp(in->text + tok->start, name, len);
    }
    else {
        const json_t *decoded = cp_json_load(in->pool, in->text + tok->start - 1, len + 2, NULL);

        return json_is_string(decoded) && json_string_length(decoded) == strlen(name)
            && !memcmp(json_string_value(decoded), name, strlen(name));
    }
}

/* The values of the members names[0..n) of the object at t, the last of
 * each name as a JSON parser keeps it, in one pass: places[i], or -1. */
static void members_of(const tokenized *in, int t, int n, const char *const *names,
                       int *places)
{
    int k, m, i;

    for (i = 0; i < n; i++) {
        places[i] = -1;
    }
    if (t < 0 || in->tokens[t].type != JSMN_OBJECT) {
        return;
    }
    for (k = t + 1, m = 0; m < in->tokens[t].size; m++, k = next_sibling(in->tokens, in->count, k)) {
        for (i = 0; i < n; i++) {
            if (is_name(in, k, names[i])) {
                places[i] = k + 1;
                break;
            }
        }
    }
}

/* The value of the member name of the object at t, or -1. */
static int member_of(const tokenized *in, int t, const char *name)
{
    int place;

    members_of(in, t, 1, &name, &place);
    return place;
}

static cp_span span_of(const tokenized *in, int t)
{
    cp_span span = { "", 0 };

    if (t >= 0) {
        span.text = in->text + tok_start(&in->tokens[t]);
        span.len = (apr_size_t)(tok_end(&in->tokens[t]) - tok_start(&in->tokens[t]));
    }
    return span;
}

/* A count (total_rows, offset): a non-negative integer, else -1. */
static apr_int64_t count_at(const tokenized *in, int t)
{
    const jsmntok_t *tok;
    apr_int64_t value = 0;
    int i;

    if (t < 0 || (tok = &in->tokens[t])->type != JSMN_PRIMITIVE
        || tok->end - tok->start > 18) {
        return -1;
    }
    i = tok->start + (in->text[tok->start] == '-');
    for (; i < tok->end; i++) {
        if (!is_digit(in->text[i])) {
            return -1;
        }
        value = value * 10 + (in->text[i] - '0');
    }
    /* -0 is 0 */
    return in->text[tok->start] == '-' && value != 0 ? -1 : value;
}

/* A document id: a string decoded, without NUL characters (jansson's
 * string, checked, when it has escapes). */
static const char *id_at(const tokenized *in, int t)
{
    const jsmntok_t *tok = &in->tokens[t];
    apr_size_t len = (apr_size_t)(tok->end - tok->start);
    const json_t *decoded;

    if (!memchr(in->text + tok->start, '\\', len)) {
        return apr_pstrmemdup(in->pool, in->text + tok->start, len);
    }
    decoded = cp_json_load(in->pool, in->text + tok->start - 1, len + 2, NULL);
    if (!json_is_string(decoded)
        || strlen(json_string_value(decoded)) != json_string_length(decoded)) {
        return NULL;
    }
    return json_string_value(decoded);
}

static const char *const answer_members[] = { "rows", "total_rows", "offset" };
static const char *const row_members[] = { "id", "key", "value", "doc" };

/* The view response at place t, as an answer, or the reason it is not one. */
static const char *read_answer(const tokenized *in, int t, int with_docid,
                               const cp_answer **out)
{
    cp_answer *answer = apr_pcalloc(in->pool, sizeof(*answer));
    int places[4], rows, r, n;

    if (t < 0 || in->tokens[t].type != JSMN_OBJECT) {
        return "the view response is not a JSON object";
    }
    members_of(in, t, 3, answer_members, places);
    rows = places[0];
    if (rows < 0 || in->tokens[rows].type != JSMN_ARRAY) {
        return "the view response has no rows array";
    }
    answer->text = in->text;
    answer->tokens = in->tokens;
    answer->token_count = in->count;
    answer->pool = in->pool;
    answer->total_rows = count_at(in, places[1]);
    answer->offset = count_at(in, places[2]);
    answer->rows = apr_array_make(in->pool, in->tokens[rows].size + 1, sizeof(cp_row));
    for (r = rows + 1, n = 0; n < in->tokens[rows].size;
         n++, r = next_sibling(in->tokens, in->count, r)) {
        cp_row *row = apr_array_push(answer->rows);
        int id_is_string;

        if (in->tokens[r].type != JSMN_OBJECT) {
            return apr_psprintf(in->pool, "row %d of the view response has no key", n);
        }
        members_of(in, r, 4, row_members, places);
        row->answer = answer;
        row->text = span_of(in, r);
        row->id_at = places[0];
        row->key_at = places[1];
        row->value_at = places[2];
        row->doc_at = places[3];
        if (row->key_at < 0) {
            return apr_psprintf(in->pool, "row %d of the view response has no key", n);
        }
        row->key_text = span_of(in, row->key_at);
        row->key = cp_json_load(in->pool, row->key_text.text, row->key_text.len, NULL);
        if (!row->key) {
            return apr_psprintf(in->pool, "row %d of the view response has a key the "
                                "module cannot read (nested deeper than 2048)", n);
        }
        id_is_string = row->id_at >= 0 && in->tokens[row->id_at].type == JSMN_STRING;
        row->id = id_is_string ? id_at(in, row->id_at) : NULL;
        if (with_docid && !id_is_string) {
            return apr_psprintf(in->pool, "row %d of the view response has no document id",
                                n);
        }
        if (with_docid && (!row->id || !*row->id)) {
            return apr_psprintf(in->pool, row->id ? "row %d of the view response has no "
                                "document id" : "row %d of the view response has a document "
                                "id with a NUL character", n);
        }
        row->id_text = span_of(in, row->id ? row->id_at : -1);
        row->value = span_of(in, row->value_at);
        row->doc = span_of(in, row->doc_at);
    }
    *out = answer;
    return NULL;
}

static const char *refusal(apr_pool_t *pool, int status)
{
    return status == JSMN_ERROR_PART ? "it ends before its values do"
         : "it has a character JSON does not allow there";
}

const char *cp_response_read_view(apr_pool_t *pool, const char *text, apr_size_t len,
                                  int with_docid, const cp_answer **answer)
{
    tokenized in;
    apr_size_t at = 0;
    int status;

    while (at < len && is_space(text[at])) {
        at++;
    }
    if (at == len || text[at] != '{') {
        return "the view response is not a JSON object";
    }
    status = tokenize(pool, text, len, &in);
    if (status < 0) {
        return apr_pstrcat(pool, "the view response is not JSON: ", refusal(pool, status),
                           NULL);
    }
    if (!tokens_are_json(pool, text, len, in.tokens, in.count)) {
        return "the view response is not JSON: a value, separator or string is malformed, "
               "not UTF-8, or a number beyond a double's range";
    }
    return read_answer(&in, in.count ? 0 : -1, with_docid, answer);
}

/* The results array of a multi-query body whose member "results" comes
 * first: its place, or -1. */
static int leading_results(const tokenized *in)
{
    if (in->count < 3 || in->tokens[0].type != JSMN_OBJECT || !is_name(in, 1, "results")
        || in->tokens[2].type != JSMN_ARRAY) {
        return -1;
    }
    return 2;
}

int cp_response_read_batch(apr_pool_t *pool, const char *text, apr_size_t len, int cut_off,
                           int n, int with_docid, const cp_answer **answers,
                           const char **error)
{
    tokenized in;
    int status = tokenize(pool, text, len, &in), results, r, k;

    if (cut_off) {
        /* the results before the cut: complete ones, all of whose tokens
         * were read */
        if ((results = leading_results(&in)) < 0) {
            return 0;
        }
        k = 0;
        for (r = results + 1; r < in.count && k < n && in.tokens[r].parent == results
                              && in.tokens[r].type == JSMN_OBJECT && in.tokens[r].end >= 0;
             r = next_sibling(in.tokens, in.count, r)) {
            k++;
        }
        in.count = r < in.count ? r : in.count;
        /* a cut ends in a value: a body that broke before it is not a cut */
        if (k == 0 || !tokens_are_json(pool, text, len, in.tokens, in.count)) {
            return 0;
        }
    }
    else {
        if (status < 0) {
            *error = apr_pstrcat(pool, "the multi-query response is not JSON: ",
                                 refusal(pool, status), NULL);
            return -1;
        }
        if (!tokens_are_json(pool, text, len, in.tokens, in.count)) {
            *error = "the multi-query response is not JSON: a value, separator or string "
                     "is malformed, not UTF-8, or a number beyond a double's range";
            return -1;
        }
        results = member_of(&in, in.count ? 0 : -1, "results");
        if (results < 0 || in.tokens[results].type != JSMN_ARRAY
            || in.tokens[results].size != n) {
            *error = apr_psprintf(pool, "the multi-query response has no results array of "
                                  "%d results", n);
            return -1;
        }
        k = n;
    }
    for (r = results + 1, n = 0; n < k; n++, r = next_sibling(in.tokens, in.count, r)) {
        const char *reason = read_answer(&in, r, with_docid, &answers[n]);

        if (reason) {
            *error = apr_psprintf(pool, "result %d: %s", n, reason);
            return -1;
        }
    }
    return k;
}

/* --- a row's values ---------------------------------------------------- */

static tokenized row_tokens(const cp_row *row)
{
    tokenized in;

    in.pool = row->answer->pool;
    in.text = row->answer->text;
    in.tokens = (jsmntok_t *)row->answer->tokens;
    in.count = row->answer->token_count;
    return in;
}

int cp_row_member(const cp_row *row, const char *name)
{
    return !strcmp(name, "id") ? row->id_at : !strcmp(name, "key") ? row->key_at
         : !strcmp(name, "value") ? row->value_at : !strcmp(name, "doc") ? row->doc_at : -1;
}

int cp_row_find(const cp_row *row, int at, const char *name)
{
    tokenized in = row_tokens(row);

    return member_of(&in, at, name);
}

int cp_row_element(const cp_row *row, int at, apr_size_t index)
{
    tokenized in = row_tokens(row);
    int t;
    apr_size_t n;

    if (at < 0 || in.tokens[at].type != JSMN_ARRAY || index >= (apr_size_t)in.tokens[at].size) {
        return -1;
    }
    for (t = at + 1, n = 0; n < index; n++) {
        t = next_sibling(in.tokens, in.count, t);
    }
    return t;
}

cp_span cp_row_span(const cp_row *row, int at)
{
    tokenized in = row_tokens(row);

    return span_of(&in, at);
}

const json_t *cp_row_decode(apr_pool_t *pool, const cp_row *row, int at)
{
    cp_span span = cp_row_span(row, at);

    return at < 0 ? NULL : cp_json_load(pool, span.text, span.len, NULL);
}

cp_span cp_row_project(apr_pool_t *pool, const cp_row *row, const apr_array_header_t *names)
{
    tokenized in = row_tokens(row);
    apr_array_header_t *parts;
    char *out, *o;
    apr_size_t size = 2;
    cp_span span = { "", 0 };
    int i;

    if (row->doc_at < 0 || in.tokens[row->doc_at].type != JSMN_OBJECT) {
        return span;
    }
    parts = apr_array_make(pool, names->nelts, sizeof(int));
    for (i = 0; i < names->nelts; i++) {
        int value = member_of(&in, row->doc_at, APR_ARRAY_IDX(names, i, const char *));

        if (value >= 0) {
            /* the member's name as sent, its colon, its value */
            APR_ARRAY_PUSH(parts, int) = value;
            size += (apr_size_t)(tok_end(&in.tokens[value]) - tok_start(&in.tokens[value - 1]))
                    + 1;
        }
    }
    out = o = apr_palloc(pool, size);
    *o++ = '{';
    for (i = 0; i < parts->nelts; i++) {
        int value = APR_ARRAY_IDX(parts, i, int);
        int from = tok_start(&in.tokens[value - 1]);

        if (i > 0) {
            *o++ = ',';
        }
        memcpy(o, in.text + from, (apr_size_t)(tok_end(&in.tokens[value]) - from));
        o += tok_end(&in.tokens[value]) - from;
    }
    *o++ = '}';
    span.text = out;
    span.len = (apr_size_t)(o - out);
    return span;
}
