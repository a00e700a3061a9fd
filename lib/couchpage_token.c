/* SPDX-License-Identifier: Apache-2.0 */
/*
 * couchpage_token.c: page tokens written from a row and read back from a
 * client. Part of the httpd-free core: no httpd header, no request_rec;
 * the glue caps a token's length and unseals it first.
 */
#include "couchpage_token.h"
#include "couchpage_json.h"
#include "couchpage_seal.h"

#include <apr_encode.h>
#include <apr_strings.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

/* UTF-8 of U+FFFF, which CouchDB's collation (ICU's root collation, as
 * CLDR makes it) puts after every other character; and of U+10FFFF, the
 * highest bytes of UTF-8, for document ids, which CouchDB compares as
 * bytes. */
#define ABOVE_TEXT "\xef\xbf\xbf"
#define ABOVE_BYTES "\xf4\x8f\xbf\xbf"

/* How far back a cut string looks for a place between two ASCII
 * characters. */
#define ASCII_CUT_LOOKBACK 64

const char *cp_token_encode(apr_pool_t *pool, const json_t *key, const char *docid,
                            int index)
{
    json_t *pair = cp_json_pool_own(pool, json_array());

    json_array_append(pair, (json_t *)key);
    if (docid) {
        json_array_append_new(pair, json_string(docid));
        if (index > 0) {
            json_array_append_new(pair, json_integer(index));
        }
    }
    return cp_json_text(pool, pair);
}

const char *cp_token_digest(apr_pool_t *pool, const json_t *key, const char *docid)
{
    const char *text = cp_json_text(pool, key);
    apr_size_t key_len = strlen(text), id_len = docid ? strlen(docid) + 1 : 0;
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int md_len = 0;
    char *data = apr_palloc(pool, key_len + id_len + 1);

    memcpy(data, text, key_len);
    if (docid) {
        data[key_len] = '\0';
        memcpy(data + key_len + 1, docid, id_len - 1);
    }
    if (EVP_Digest(data, key_len + id_len, md, &md_len, EVP_sha256(), NULL) != 1
        || md_len < 16) {
        return NULL;
    }
    return apr_pencode_base64_binary(pool, md, 16, APR_ENCODE_BASE64URL | APR_ENCODE_NOPADDING,
                                     NULL);
}

/* The bytes of a value's compact JSON text. */
static apr_size_t text_size(const json_t *value)
{
    return cp_json_size(value);
}

/* Where a string of len bytes is cut to keep about room bytes: at a whole
 * code point; under CouchDB's collation, between two ASCII characters when
 * one is near (no contraction or combining mark spans such a cut, so the
 * cut string collates at or before the whole), and never just before
 * U+FFFF, so that the cut string followed by U+FFFF collates after it. */
static apr_size_t string_cut(const char *s, apr_size_t len, apr_size_t room, int raw_ids)
{
    apr_size_t cut = room < len ? room : len, at;

    while (cut > 0 && ((unsigned char)s[cut] & 0xC0) == 0x80) {
        cut--;
    }
    if (raw_ids) {
        return cut;
    }
    for (at = cut; at > 0 && cut - at < ASCII_CUT_LOOKBACK; at--) {
        if ((unsigned char)s[at - 1] < 0x80 && (unsigned char)s[at] < 0x80) {
            return at;
        }
    }
    while (cut > 0 && cut + 3 <= len && !memcmp(s + cut, ABOVE_TEXT, 3)) {
        do {
            cut--;
        } while (cut > 0 && ((unsigned char)s[cut] & 0xC0) == 0x80);
    }
    return cut;
}

/* A value CouchDB collates after v and after every value that starts like
 * it: an empty object after any other type; after an object, one whose
 * first member's name is U+FFFF. */
static json_t *above(const json_t *v)
{
    return json_is_object(v) ? json_pack("{s:n}", ABOVE_TEXT) : json_object();
}

/* The bounds of a key cut to about *room bytes (consumed): *low at or
 * before v, *high at or after it (new references). Returns 1 when v is
 * kept whole (*low and *high are v), 0 when cut, *high then strictly
 * after v and after every value that starts with *low's kept part. An
 * array or object is cut at a member, whose own bounds end *low and *high
 * (a shorter array or object collates first). */
static int bound_value(const json_t *v, apr_size_t *room, int raw_ids, json_t **low,
                       json_t **high)
{
    apr_size_t size = text_size(v);

    if (size <= *room) {
        *room -= size;
        *low = json_incref((json_t *)v);
        *high = json_incref((json_t *)v);
        return 1;
    }
    if (cp_json_is_string(v)) {
        const char *s = json_string_value(v);
        apr_size_t cut = string_cut(s, json_string_length(v), *room > 2 ? *room - 2 : 0,
                                    raw_ids);
        const char *max = raw_ids ? ABOVE_BYTES : ABOVE_TEXT;
        char *upper = malloc(cut + strlen(max));

        *room = 0;
        memcpy(upper, s, cut);
        memcpy(upper + cut, max, strlen(max));
        *low = json_stringn(s, cut);
        *high = json_stringn(upper, cut + strlen(max));
        free(upper);
        return 0;
    }
    if (json_is_array(v)) {
        size_t i;

        *low = json_array();
        *high = json_array();
        *room = *room > 2 ? *room - 2 : 0;
        for (i = 0; i < json_array_size(v); i++) {
            const json_t *item = json_array_get(v, i);
            json_t *item_low, *item_high;

            if (*room > 1 && (cp_json_is_string(item) || json_is_array(item)
                              || json_is_object(item) || text_size(item) < *room)) {
                *room -= 1;
                if (bound_value(item, room, raw_ids, &item_low, &item_high)) {
                    json_array_append_new(*low, item_low);
                    json_array_append_new(*high, item_high);
                    continue;
                }
                json_array_append_new(*low, item_low);
                json_array_append_new(*high, item_high);
            }
            else {
                json_array_append_new(*high, above(item));
            }
            break;
        }
        *room = 0;
        return 0;
    }
    if (json_is_object(v)) {
        const char *name;
        const json_t *member;

        *low = json_object();
        *high = json_object();
        *room = *room > 2 ? *room - 2 : 0;
        json_object_foreach((json_t *)v, name, member) {
            json_t *name_json = json_string(name), *member_low, *member_high;
            apr_size_t name_size = text_size(name_json) + 2;

            if (name_size < *room) {
                *room -= name_size;
                json_decref(name_json);
                if (bound_value(member, room, raw_ids, &member_low, &member_high)) {
                    json_object_set_new(*low, name, member_low);
                    json_object_set_new(*high, name, member_high);
                    continue;
                }
                json_object_set_new(*low, name, member_low);
                json_object_set_new(*high, name, member_high);
            }
            else {
                /* a name CouchDB collates after this one ends *high */
                json_t *name_low, *name_high;

                bound_value(name_json, room, raw_ids, &name_low, &name_high);
                json_object_set_new(*high, json_string_value(name_high), json_null());
                json_decref(name_json);
                json_decref(name_low);
                json_decref(name_high);
            }
            break;
        }
        *room = 0;
        return 0;
    }
    /* a number too long for the room: from null, the first of all keys */
    *room = 0;
    *low = json_null();
    *high = above(v);
    return 0;
}

const char *cp_token_encode_bounded(apr_pool_t *pool, const json_t *key, const char *docid,
                                    int index, apr_size_t keep, int raw_ids)
{
    json_t *token = cp_json_pool_own(pool, json_object()), *low, *high;
    const char *digest = cp_token_digest(pool, key, docid);

    if (!digest) {
        return NULL;
    }
    bound_value(key, &keep, raw_ids, &low, &high);
    json_object_set_new(token, "lo", low);
    json_object_set_new(token, "hi", high);
    json_object_set_new(token, "h", json_string(digest));
    if (index > 0) {
        json_object_set_new(token, "n", json_integer(index));
    }
    return cp_json_text(pool, token);
}

/* A row index as a token carries it, in its member `what`: NULL, or why
 * not. */
static const char *read_index(apr_pool_t *pool, const json_t *index, const char *what,
                              cp_token *token)
{
    if (!json_is_integer(index) || json_integer_value(index) < 1
        || json_integer_value(index) >= CP_TOKEN_MAX_EMITS) {
        return apr_psprintf(pool, "the start token's %s must be a whole number from 1 to %d",
                            what, CP_TOKEN_MAX_EMITS - 1);
    }
    token->index = (int)json_integer_value(index);
    return NULL;
}

static const char *decode_count(const json_t *value, cp_token *token, size_t *members);

/* The digits of a mark entry's number at most. */
#define MARK_MAX_DIGITS 18
/* A character of a mark's TAG: base64url's. */
static int mark_tag_char(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')
           || c == '-' || c == '_';
}

/* The entry of text[0..len), "TAG" and digits: 1, else 0. */
static int read_mark_entry(const char *text, apr_size_t len, cp_token_mark_entry *e)
{
    apr_size_t i;

    if (len < CP_TOKEN_MARK_TAG + 1 || len > CP_TOKEN_MARK_TAG + MARK_MAX_DIGITS) {
        return 0;
    }
    for (i = 0; i < CP_TOKEN_MARK_TAG; i++) {
        if (!mark_tag_char(text[i])) {
            return 0;
        }
    }
    memcpy(e->tag, text, CP_TOKEN_MARK_TAG);
    e->tag[CP_TOKEN_MARK_TAG] = '\0';
    for (e->seq = 0; i < len; i++) {
        if (text[i] < '0' || text[i] > '9') {
            return 0;
        }
        e->seq = e->seq * 10 + (text[i] - '0');
    }
    return 1;
}

/* The entries of a mark text[0..len), into e[CP_TOKEN_MARK_RANGES]: how many,
 * 0 when it is not a mark. */
int cp_token_mark_read(const char *text, apr_size_t len, cp_token_mark_entry *e)
{
    int n = 0;

    while (len > 0) {
        const char *dot = memchr(text, '.', len);
        apr_size_t part = dot ? (apr_size_t)(dot - text) : len;

        if (n == CP_TOKEN_MARK_RANGES || !read_mark_entry(text, part, &e[n++])) {
            return 0;
        }
        if (!dot) {
            return n;
        }
        len -= part + 1;
        text = dot + 1;
        if (len == 0) {
            return 0;
        }
    }
    return 0;
}

/* A walk's mark, a string of couchpage_changed's form: NULL, or why not. */
static const char *read_mark(const json_t *mark, cp_token *token)
{
    cp_token_mark_entry entries[CP_TOKEN_MARK_RANGES];

    if (!cp_json_is_string(mark)
        || cp_token_mark_read(json_string_value(mark), json_string_length(mark), entries) == 0) {
        return "the start token's walk mark is not valid";
    }
    token->walk = json_string_value(mark);
    return NULL;
}

/* An object token's "w" (its walk's mark): NULL and how many members it
 * took (0 or 1), or why it is refused. */
static const char *decode_walk(const json_t *value, cp_token *token, size_t *members)
{
    const json_t *mark = json_object_get(value, "w");

    *members = mark != NULL;
    return mark ? read_mark(mark, token) : NULL;
}

/* A bounded token's object (of grouped rows, maybe with its walk's count):
 * NULL, or why it is refused. */
static const char *decode_bounded(apr_pool_t *pool, json_t *value, int grouped,
                                  cp_token *token)
{
    const json_t *low = json_object_get(value, "lo"), *high = json_object_get(value, "hi");
    const json_t *digest = json_object_get(value, "h"), *index = json_object_get(value, "n");
    const char *text, *reason;
    size_t i, counts = 0, marks = 0;

    if (grouped && (reason = decode_count(value, token, &counts))) {
        return reason;
    }
    if ((reason = decode_walk(value, token, &marks))) {
        return reason;
    }
    if (!low || !high || !digest
        || json_object_size(value) != 3 + (index != NULL) + counts + marks) {
        return "the start token must be a JSON array, or an object of \"lo\", \"hi\", "
               "\"h\" and \"n\"";
    }
    text = json_string_value(digest);
    if (!text || json_string_length(digest) != CP_TOKEN_DIGEST_LENGTH) {
        return "the start token's digest is not valid";
    }
    for (i = 0; i < CP_TOKEN_DIGEST_LENGTH; i++) {
        if (!strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_",
                    text[i])) {
            return "the start token's digest is not valid";
        }
    }
    token->low = low;
    token->high = high;
    token->digest = text;
    return index ? read_index(pool, index, "\"n\"", token) : NULL;
}

const char *cp_token_encode_beside(apr_pool_t *pool, cp_token_from from, const json_t *key,
                                   const char *docid)
{
    json_t *token, *id = docid ? json_string(docid) : NULL;

    /* json_string refuses an id that is not UTF-8 */
    if (!key || !id || (from != CP_FROM_AFTER && from != CP_FROM_BEFORE)) {
        json_decref(id);
        return NULL;
    }
    token = cp_json_pool_own(pool, json_object());
    json_object_set_new(token, from == CP_FROM_AFTER ? "a" : "b",
                        json_pack("[Oo]", (json_t *)key, id));
    return cp_json_text(pool, token);
}

/* The largest count a token may carry: JSON's exact integers in a double. */
#define COUNT_MAX ((apr_int64_t)1 << 53)

/* A count member of a keyset token, a whole number 0 <= n < COUNT_MAX:
 * 1 with *n, 0 when absent; -1 when it is not such a number. */
static int count_member(const json_t *value, const char *name, apr_int64_t *n)
{
    const json_t *v = json_object_get(value, name);

    if (!v) {
        return 0;
    }
    if (!json_is_integer(v) || json_integer_value(v) < 0
        || (apr_int64_t)json_integer_value(v) >= COUNT_MAX) {
        return -1;
    }
    *n = (apr_int64_t)json_integer_value(v);
    return 1;
}

/* A keyset token's count, "t" and "p" (and "m": 1 for at least): NULL and
 * how many members it took, or why it is refused. */
static const char *decode_count(const json_t *value, cp_token *token, size_t *members)
{
    int total = count_member(value, "t", &token->count_total);
    int place = count_member(value, "p", &token->count_place);
    apr_int64_t more = 0;
    int at_least = count_member(value, "m", &more);

    *members = 0;
    if (total < 0 || place < 0 || at_least < 0 || total != place || (at_least && !total)
        || more > 1 || (total && !more && token->count_place >= token->count_total)) {
        return "the start token's count is not \"t\": TOTAL, \"p\": PLACE, whole numbers, "
               "PLACE below TOTAL unless \"m\": 1 (at least TOTAL)";
    }
    token->counted = total;
    token->count_at_least = more == 1;
    *members = (size_t)(total + place + at_least);
    return NULL;
}

/* A keyset token's object, {"a": [KEY, ID]} or {"b": [KEY, ID]}, maybe with
 * its walk's count: NULL, or why it is refused. */
static const char *decode_beside(apr_pool_t *pool, const json_t *value,
                                 const cp_token_rows *rows, cp_token *token)
{
    const char *name = "a", *reason;
    const json_t *pair, *id, *near;
    size_t counts = 0, marks = 0;

    if (!json_is_object(value)) {
        return "the start token is not {\"a\": [KEY, ID]} nor {\"b\": [KEY, ID]}";
    }
    pair = json_object_get(value, name);
    if (!pair) {
        pair = json_object_get(value, name = "b");
    }
    if (!pair || (json_object_get(value, "a") && json_object_get(value, "b"))) {
        return "the start token is not {\"a\": [KEY, ID]} nor {\"b\": [KEY, ID]}";
    }
    if ((reason = decode_count(value, token, &counts))
        || (reason = decode_walk(value, token, &marks))) {
        return reason;
    }
    near = json_object_get(value, "e");
    if (near && (!json_is_integer(near) || json_integer_value(near) != 1)) {
        return "the start token's \"e\" is not 1";
    }
    token->ties_near = near != NULL;
    if (json_object_size(value) != 1 + counts + marks + (near != NULL)) {
        return "the start token is not {\"a\": [KEY, ID]} nor {\"b\": [KEY, ID]}";
    }
    if (!json_is_array(pair) || json_array_size(pair) != 2) {
        return "the start token does not hold [KEY, ID]";
    }
    token->key = json_array_get(pair, 0);
    id = json_array_get(pair, 1);
    if (!json_is_array(token->key) || (int)json_array_size(token->key) != rows->sort_length) {
        token->key = NULL;
        return apr_psprintf(pool, "the start token does not hold a key of %d sort value%s",
                            rows->sort_length, rows->sort_length == 1 ? "" : "s");
    }
    if (!cp_json_is_string(id) || json_string_length(id) == 0
        || strlen(json_string_value(id)) != json_string_length(id)) {
        token->key = NULL;
        return "the start token does not hold a document id (a non-empty string without NUL)";
    }
    token->key_json = cp_json_text(pool, token->key);
    token->docid = json_string_value(id);
    token->from = name[0] == 'a' ? CP_FROM_AFTER : CP_FROM_BEFORE;
    return NULL;
}

/* A view's token, [key, docid], [key, docid, n] or [key]: NULL, or why it
 * is refused. */
static const char *decode_at_row(apr_pool_t *pool, const json_t *value, int with_docid,
                                 cp_token *token);

/* A counted walk's token of grouped rows, {"g": [KEY], "t": TOTAL, "p":
 * PLACE} ("m": 1: at least TOTAL): at the row, as [KEY] is. NULL, or why
 * it is refused. */
static const char *decode_grouped(apr_pool_t *pool, const json_t *value, cp_token *token)
{
    const char *reason;
    size_t counts = 0, marks = 0;

    if ((reason = decode_count(value, token, &counts))
        || (reason = decode_walk(value, token, &marks))) {
        return reason;
    }
    if (!token->counted || json_object_size(value) != 1 + counts + marks) {
        return "the start token is not {\"g\": [KEY], \"t\": TOTAL, \"p\": PLACE}";
    }
    return decode_at_row(pool, json_object_get(value, "g"), 0, token);
}

/* A view's token, [key, docid], [key, docid, n] or [key]: NULL, or why it
 * is refused. */
static const char *decode_at_row(apr_pool_t *pool, const json_t *value, int with_docid,
                                 cp_token *token)
{
    cp_token_mark_entry entries[CP_TOKEN_MARK_RANGES];
    const json_t *id, *last;
    size_t size = json_is_array(value) ? json_array_size(value) : 0;

    if (!json_is_array(value)) {
        return with_docid ? "the start token must be a JSON array [key, docid]"
                          : "the start token must be a JSON array [key]";
    }
    /* the walk's mark, a string of its form past the form's members (a
     * row index is a number; any other string is refused below as before) */
    last = size > 0 ? json_array_get(value, size - 1) : NULL;
    if (size > (with_docid ? 2u : 1u) && cp_json_is_string(last)
        && cp_token_mark_read(json_string_value(last), json_string_length(last), entries) > 0) {
        token->walk = json_string_value(last);
        size--;
    }
    if (with_docid ? size < 2 || size > 3 : size != 1) {
        return with_docid ? "the start token must have two members, [key, docid] "
                            "(or three, [key, docid, n])"
                          : "the start token must have one member, [key]";
    }
    token->key = json_array_get(value, 0);
    token->key_json = cp_json_text(pool, token->key);
    if (size == 3) {
        const char *reason = read_index(pool, json_array_get(value, 2), "third member", token);

        if (reason) {
            return reason;
        }
    }
    if (with_docid) {
        id = json_array_get(value, 1);
        if (!cp_json_is_string(id) || json_string_length(id) == 0) {
            return "the start token's docid must be a non-empty string";
        }
        if (strlen(json_string_value(id)) != json_string_length(id)) {
            return "the start token's docid contains a NUL character";
        }
        token->docid = json_string_value(id);
    }
    return NULL;
}

const char *cp_token_decode(apr_pool_t *pool, const char *text, const cp_token_rows *rows,
                            cp_token *token)
{
    int view_tokens = !rows->keyset || rows->view_tokens;
    int with_docid = rows->keyset || rows->with_docid;
    const char *error = NULL;
    json_t *value;

    memset(token, 0, sizeof(*token));
    if (!text) {
        token->from = CP_FROM_FIRST;
        return NULL;
    }
    if (!strcmp(text, CP_TOKEN_LAST)) {
        token->from = CP_FROM_LAST;
        return NULL;
    }
    if (view_tokens && *text == '\0') {
        return "the start token is empty";
    }
    value = cp_json_load(pool, text, strlen(text), &error);
    if (!value) {
        return apr_psprintf(pool, "the start token is not JSON: %s",
                            error ? error : "unreadable");
    }
    /* a view's tokens and a bounded token start at their row */
    token->from = CP_FROM_ROW;
    if (rows->keyset && (!view_tokens || (json_is_object(value)
                                          && !json_object_get(value, "h")))) {
        return decode_beside(pool, value, rows, token);
    }
    if (!with_docid && json_is_object(value) && json_object_get(value, "g")) {
        return decode_grouped(pool, value, token);
    }
    if (json_is_object(value)) {
        return decode_bounded(pool, value, !with_docid, token);
    }
    return decode_at_row(pool, value, with_docid, token);
}

const char *cp_token_mark(apr_pool_t *pool, const char *token, const char *mark)
{
    apr_size_t len = token ? strlen(token) : 0, mark_len;
    char close, *marked, *o;

    if (!mark || len < 2 || (token[len - 1] != ']' && token[len - 1] != '}')) {
        return token;
    }
    /* the module's tokens are compact JSON ending in their closing
     * bracket; the mark's characters need no escape */
    close = token[len - 1];
    mark_len = strlen(mark);
    o = marked = apr_palloc(pool, len + mark_len + sizeof(",\"w\":\"\""));
    memcpy(o, token, len - 1);
    o += len - 1;
    if (len > 2) {
        *o++ = ',';
    }
    if (close == '}') {
        memcpy(o, "\"w\":", 4);
        o += 4;
    }
    *o++ = '"';
    memcpy(o, mark, mark_len);
    o += mark_len;
    *o++ = '"';
    *o++ = close;
    *o = '\0';
    return marked;
}

int cp_token_fits(const cp_token_room *room, const char *text)
{
    apr_size_t len = strlen(text) + room->extra, escaped = room->extra_escaped, i;

    if (room->sealed) {
        /* base64url without padding: nothing to escape */
        len = ((len + CP_SEAL_OVERHEAD) * 4 + 2) / 3;
        return len <= room->max_sent && len <= room->max_escaped;
    }
    for (i = 0; i < len - room->extra; i++) {
        unsigned char c = (unsigned char)text[i];

        escaped += (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                   || c == '-' || c == '.' || c == '_' || c == '~' ? 1 : 3;
    }
    return len <= room->max_sent && escaped <= room->max_escaped;
}

const char *cp_token_for_row(apr_pool_t *pool, const cp_token_room *room, const json_t *key,
                             const char *docid, int index)
{
    const char *token = cp_token_encode(pool, key, docid, index);
    apr_size_t keep;

    if (!room || cp_token_fits(room, token)) {
        return token;
    }
    /* as much of the key as fits: halved until it does (a key's non-ASCII
     * text takes up to nine bytes a byte percent-encoded) */
    for (keep = room->max_sent / 2; ; keep /= 2) {
        token = cp_token_encode_bounded(pool, key, docid, index, keep, room->raw_ids);
        if (!token || keep == 0 || cp_token_fits(room, token)) {
            return token;
        }
    }
}
