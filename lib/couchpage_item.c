/* SPDX-License-Identifier: Apache-2.0 */
/*
 * couchpage_item.c: FIELD paths and LINK patterns compiled once (an item's
 * pair, CouchPageItem's), and an item's field read from a row's bytes and
 * shown as HTML, a URL, a number or a date. Part of the httpd-free core: no
 * httpd header, no request_rec.
 */
#include "couchpage_item.h"
#include "couchpage_bytes.h"
#include "couchpage_json.h"
#include "couchpage_simdjson.h"

#include <apr_strings.h>
#include <apr_time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *member; /* NULL for an [index] step */
    size_t index;
} field_step;

struct cp_field {
    apr_array_header_t *steps; /* of field_step; the first is the row member */
    const char *path;          /* as written */
};

typedef struct {
    const char *literal; /* NULL for a placeholder */
    const cp_field *field;
} pattern_part;

struct cp_pattern {
    apr_array_header_t *parts; /* of pattern_part */
};

const char *const cp_row_members[] = { "id", "key", "value", "doc", NULL };

static int is_row_member(const char *name)
{
    const char *const *member;

    for (member = cp_row_members; *member; member++) {
        if (!strcmp(name, *member)) {
            return 1;
        }
    }
    return 0;
}

cp_field *cp_field_parse(apr_pool_t *pool, const char *path, const char **error)
{
    cp_field *field = apr_palloc(pool, sizeof(*field));
    const char *p = path;

    field->steps = apr_array_make(pool, 4, sizeof(field_step));
    field->path = apr_pstrdup(pool, path);
    while (*p) {
        field_step *step = apr_array_push(field->steps);

        if (*p == '[') {
            char *end;
            unsigned long index;

            if (field->steps->nelts == 1 || p[1] < '0' || p[1] > '9') {
                *error = apr_psprintf(pool, "'%s': an index must follow a member and "
                                      "be a number, as in key[1]", path);
                return NULL;
            }
            index = strtoul(p + 1, &end, 10);
            if (*end != ']' || index > 1000000) {
                *error = apr_psprintf(pool, "'%s': an index is a number from 0 to "
                                      "1000000 in brackets", path);
                return NULL;
            }
            step->member = NULL;
            step->index = index;
            p = end + 1;
        }
        else {
            size_t len = strcspn(p, ".[]");

            if (len == 0) {
                *error = apr_psprintf(pool, "'%s' has an empty member name", path);
                return NULL;
            }
            step->member = apr_pstrndup(pool, p, len);
            p += len;
        }
        if (*p == '.') {
            p++;
            if (!*p || *p == '.' || *p == '[') {
                *error = apr_psprintf(pool, "'%s' has an empty member name", path);
                return NULL;
            }
        }
        else if (*p && *p != '[') {
            *error = apr_psprintf(pool, "'%s' has a stray '%c'", path, *p);
            return NULL;
        }
    }
    if (field->steps->nelts == 0
        || !is_row_member(APR_ARRAY_IDX(field->steps, 0, field_step).member)) {
        *error = apr_psprintf(pool, "'%s' must start with key, value, id or doc", path);
        return NULL;
    }
    return field;
}

int cp_field_reads(const cp_field *field, const char *member)
{
    return strcmp(APR_ARRAY_IDX(field->steps, 0, field_step).member, member) == 0;
}

const char *cp_field_path(const cp_field *field)
{
    return field->path;
}

int cp_field_within(const cp_field *field, const apr_array_header_t *fields)
{
    const field_step *member;
    int i;

    if (!fields || !cp_field_reads(field, "doc")) {
        return 1;
    }
    if (field->steps->nelts < 2) {
        return 0;
    }
    member = &APR_ARRAY_IDX(field->steps, 1, field_step);
    for (i = 0; member->member && i < fields->nelts; i++) {
        if (strcmp(member->member, APR_ARRAY_IDX(fields, i, const char *)) == 0) {
            return 1;
        }
    }
    return 0;
}

const char *cp_fields_fault(apr_pool_t *pool, const apr_array_header_t *read,
                            const apr_array_header_t *fields)
{
    int i;

    for (i = 0; read && i < read->nelts; i++) {
        const cp_field *field = APR_ARRAY_IDX(read, i, const cp_field *);

        if (!cp_field_within(field, fields)) {
            return apr_psprintf(pool, "reads %s, %s", field->path,
                                field->steps->nelts < 2 ? "the whole document"
                                : "a member CouchPageFields leaves out");
        }
    }
    return NULL;
}

/* A path into the row's key: the key is decoded whole (cp_row_key, once a
 * row), and the path walks jansson's value. */
static const json_t *key_field(const cp_field *field, const cp_row *row)
{
    const json_t *at = cp_row_key(row);
    int i;

    for (i = 1; i < field->steps->nelts && at; i++) {
        const field_step *step = &APR_ARRAY_IDX(field->steps, i, field_step);

        at = step->member ? json_object_get(at, step->member)
                          : json_array_get(at, step->index);
    }
    return at;
}

/* Where a path into the row's id, value or doc leads, from the records. */
static cp_span field_span(const cp_field *field, const cp_row *row)
{
    cp_span at = cp_row_member(row, APR_ARRAY_IDX(field->steps, 0, field_step).member);
    int i;

    for (i = 1; i < field->steps->nelts && at.len; i++) {
        const field_step *step = &APR_ARRAY_IDX(field->steps, i, field_step);

        at = step->member ? cp_row_find(row, at, step->member)
                          : cp_row_element(row, at, step->index);
    }
    return at;
}

const json_t *cp_field_get(apr_pool_t *pool, const cp_field *field, const cp_row *row)
{
    if (cp_field_reads(field, "key")) {
        return key_field(field, row);
    }
    /* only the value the path names is decoded, never the document */
    return cp_row_decode(pool, row, field_span(field, row));
}

/* The value at the path as a page with fields may show it (fields NULL:
 * any): the document itself is its fields (as a JSON page carries it), a
 * path into a member outside them nothing. */
static const json_t *field_value(apr_pool_t *pool, const cp_field *field, const cp_row *row,
                                 const apr_array_header_t *fields)
{
    if (fields && cp_field_reads(field, "doc") && field->steps->nelts == 1) {
        cp_span doc = cp_row_project(pool, row, fields);

        return doc.len ? cp_json_load(pool, doc.text, doc.len, NULL) : NULL;
    }
    return cp_field_within(field, fields) ? cp_field_get(pool, field, row) : NULL;
}

/* What the field's value shows as text (cp_field_text's), from the row's
 * bytes: a string's decoded text, anything else its JSON written from its
 * bytes (cp_json_span_text: a large array or object is never decoded into
 * jansson's values); a key's from the key, decoded once a row. With fields
 * (NULL: any), the document itself is its fields' projection, as a JSON
 * page carries it, and a path into a member outside them has no text.
 * NULL when the row has no such value. */
static const char *field_text(apr_pool_t *pool, const cp_field *field, const cp_row *row,
                              const apr_array_header_t *fields, apr_size_t *len)
{
    cp_span at;
    const char *text;

    if (fields && cp_field_reads(field, "doc") && field->steps->nelts == 1) {
        at = cp_row_project(pool, row, fields);
        return at.len ? cp_json_span_text(pool, at.text, at.len, len) : NULL;
    }
    if (!cp_field_within(field, fields)) {
        return NULL;
    }
    if (cp_field_reads(field, "key")) {
        return cp_field_text(pool, key_field(field, row), len);
    }
    at = field_span(field, row);
    if (!at.len) {
        return NULL;
    }
    if ((text = cp_row_string(row, at, len)) != NULL || at.text[0] == '"') {
        return text;
    }
    return cp_json_span_text(pool, at.text, at.len, len);
}

const char *cp_field_text(apr_pool_t *pool, const json_t *value, apr_size_t *len)
{
    const char *text;

    if (!value) {
        return NULL;
    }
    if (cp_json_is_string(value)) {
        *len = json_string_length(value);
        return json_string_value(value);
    }
    text = cp_json_text(pool, value);
    *len = strlen(text);
    return text;
}

cp_pattern *cp_pattern_parse(apr_pool_t *pool, const char *text, const char **error)
{
    cp_pattern *pattern = apr_palloc(pool, sizeof(*pattern));
    const char *p = text;

    pattern->parts = apr_array_make(pool, 4, sizeof(pattern_part));
    while (*p) {
        pattern_part *part = apr_array_push(pattern->parts);
        size_t len = strcspn(p, "{}");

        if (len > 0) {
            part->literal = apr_pstrndup(pool, p, len);
            part->field = NULL;
            p += len;
            continue;
        }
        if (*p == '}') {
            *error = apr_psprintf(pool, "'%s' has a '}' without its '{'", text);
            return NULL;
        }
        len = strcspn(p + 1, "{}");
        if (p[1 + len] != '}') {
            *error = apr_psprintf(pool, "'%s' has a '{' without its '}'", text);
            return NULL;
        }
        part->literal = NULL;
        part->field = cp_field_parse(pool, apr_pstrndup(pool, p + 1, len), error);
        if (!part->field) {
            return NULL;
        }
        p += len + 2;
    }
    return pattern;
}

int cp_pattern_reads(const cp_pattern *pattern, const char *member)
{
    int i;

    for (i = 0; i < pattern->parts->nelts; i++) {
        const pattern_part *part = &APR_ARRAY_IDX(pattern->parts, i, pattern_part);

        if (part->field && cp_field_reads(part->field, member)) {
            return 1;
        }
    }
    return 0;
}

const char *cp_item_spec_parse(apr_pool_t *pool, const char *field, const char *link,
                               cp_item_spec *item)
{
    const char *err = NULL;

    item->link = NULL;
    item->field = cp_field_parse(pool, field, &err);
    if (!item->field) {
        return apr_pstrcat(pool, "the field ", err, NULL);
    }
    if (link && !(item->link = cp_pattern_parse(pool, link, &err))) {
        return apr_pstrcat(pool, "the link ", err, NULL);
    }
    return NULL;
}

void cp_item_spec_fields(const cp_item_spec *item, apr_array_header_t *out)
{
    int i;

    if (item->field) {
        APR_ARRAY_PUSH(out, const cp_field *) = item->field;
    }
    for (i = 0; item->link && i < item->link->parts->nelts; i++) {
        const pattern_part *part = &APR_ARRAY_IDX(item->link->parts, i, pattern_part);

        if (part->field) {
            APR_ARRAY_PUSH(out, const cp_field *) = part->field;
        }
    }
}

int cp_item_spec_reads(const cp_item_spec *item, const char *member)
{
    return (item->field && cp_field_reads(item->field, member))
           || (item->link && cp_pattern_reads(item->link, member));
}

const char *cp_pattern_expand(apr_pool_t *pool, const cp_pattern *pattern,
                              const cp_row *row, const apr_array_header_t *fields)
{
    apr_array_header_t *pieces = apr_array_make(pool, pattern->parts->nelts,
                                                sizeof(const char *));
    int i;

    for (i = 0; i < pattern->parts->nelts; i++) {
        const pattern_part *part = &APR_ARRAY_IDX(pattern->parts, i, pattern_part);
        const char *text;
        apr_size_t len;

        if (part->literal) {
            APR_ARRAY_PUSH(pieces, const char *) = part->literal;
            continue;
        }
        text = field_text(pool, part->field, row, fields, &len);
        APR_ARRAY_PUSH(pieces, const char *) = text ? cp_percent_encode(pool, text, len) : "";
    }
    return apr_array_pstrcat(pool, pieces, 0);
}

const char *cp_percent_encode(apr_pool_t *pool, const char *text, apr_size_t len)
{
    static const char hex[] = "0123456789ABCDEF";
    char *out = apr_palloc(pool, 3 * len + 1), *o = out;
    const unsigned char *c, *end = (const unsigned char *)text + len;

    for (c = (const unsigned char *)text; c < end; c++) {
        if ((*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9')
            || *c == '-' || *c == '.' || *c == '_' || *c == '~') {
            *o++ = (char)*c;
        }
        else {
            *o++ = '%';
            *o++ = hex[*c >> 4];
            *o++ = hex[*c & 15];
        }
    }
    *o = '\0';
    return out;
}

/* Whether a byte is written as an entity (or, NUL, as U+FFFD). */
static int needs_entity(char c)
{
    return c == '<' || c == '>' || c == '&' || c == '\'' || c == '"' || c == '\0';
}

const char *cp_html_text(apr_pool_t *pool, const char *text, apr_size_t len)
{
    apr_size_t size, i = 0, clean;
    char *out, *o;

    /* most text has nothing to escape: find the first byte that has, 16
     * bytes a step */
    while (i + 16 <= len) {
        cp_bytes16 v = cp_bytes16_at(text + i);

        if (cp_bytes16_any((cp_bytes16)((v == '<') | (v == '>') | (v == '&') | (v == '\'')
                                        | (v == '"') | (v == 0)))) {
            break;
        }
        i += 16;
    }
    while (i < len && !needs_entity(text[i])) {
        i++;
    }
    if (i == len) {
        return apr_pstrmemdup(pool, text, len);
    }
    clean = i;
    /* apr_pescape_entity leaves ' as it is: a template may quote with it */
    for (size = clean + 1; i < len; i++) {
        switch (text[i]) {
        case '\0': size += 3; break;
        case '<': case '>': size += 4; break;
        case '&': case '\'': size += 5; break;
        case '"': size += 6; break;
        default: size += 1;
        }
    }
    out = apr_palloc(pool, size);
    memcpy(out, text, clean);
    o = out + clean;
    for (i = clean; i < len; i++) {
        const char *entity;

        switch (text[i]) {
        case '\0': entity = "\xef\xbf\xbd"; break;
        case '<': entity = "&lt;"; break;
        case '>': entity = "&gt;"; break;
        case '&': entity = "&amp;"; break;
        case '\'': entity = "&#39;"; break;
        case '"': entity = "&quot;"; break;
        default: *o++ = text[i]; continue;
        }
        o = stpcpy(o, entity);
    }
    *o = '\0';
    return out;
}

/* n decimal digits at text, as a number; -1 when one is not a digit. */
static int digits(const char *text, int n)
{
    int value = 0, i;

    for (i = 0; i < n; i++) {
        if (text[i] < '0' || text[i] > '9') {
            return -1;
        }
        value = value * 10 + (text[i] - '0');
    }
    return value;
}

static int days_in_month(int year, int month)
{
    static const int days[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
    int leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;

    return month == 2 && leap ? 29 : days[month - 1];
}

/* Whether text is HH:MM[:SS[.fraction]][Z|+HH:MM|-HH:MM] and nothing more. */
static int is_iso_time(const char *t)
{
    if (digits(t, 2) < 0 || digits(t, 2) > 23 || t[2] != ':'
        || digits(t + 3, 2) < 0 || digits(t + 3, 2) > 59) {
        return 0;
    }
    t += 5;
    if (*t == ':') {
        /* 60: a leap second */
        if (digits(t + 1, 2) < 0 || digits(t + 1, 2) > 60) {
            return 0;
        }
        t += 3;
        if (*t == '.') {
            if (digits(t + 1, 1) < 0) {
                return 0;
            }
            for (t++; *t >= '0' && *t <= '9'; t++) {
            }
        }
    }
    if (*t == 'Z') {
        return t[1] == '\0';
    }
    if (*t == '+' || *t == '-') {
        return digits(t + 1, 2) >= 0 && digits(t + 1, 2) <= 23 && t[3] == ':'
               && digits(t + 4, 2) >= 0 && digits(t + 4, 2) <= 59 && t[6] == '\0';
    }
    return *t == '\0';
}

/* YYYY-MM-DD of an ISO 8601 date or date-time string, or NULL. */
static const char *iso_date(apr_pool_t *pool, const char *text)
{
    int year, month, day;

    /* each part read only when the one before it is there */
    year = digits(text, 4);
    if (year < 0 || text[4] != '-') {
        return NULL;
    }
    month = digits(text + 5, 2);
    if (month < 1 || month > 12 || text[7] != '-') {
        return NULL;
    }
    day = digits(text + 8, 2);
    if (day < 1 || day > days_in_month(year, month)) {
        return NULL;
    }
    if (text[10] != '\0' && (text[10] != 'T' || !is_iso_time(text + 11))) {
        return NULL;
    }
    return apr_pstrndup(pool, text, 10);
}

/* The UTC date of milliseconds since 1970, for the years 0000 to 9999. */
static const char *epoch_ms_date(apr_pool_t *pool, double ms)
{
    apr_time_exp_t tm;
    apr_int64_t whole;

    /* 0000-01-01T00:00:00Z and 9999-12-31T23:59:59.999Z */
    if (!(ms >= -62167219200000.0 && ms <= 253402300799999.0)) {
        return NULL;
    }
    /* whole seconds, rounded down before 1970 too: APR rounds towards 0 */
    whole = (apr_int64_t)ms;
    whole -= (double)whole > ms;
    whole = whole / 1000 - (whole % 1000 < 0);
    if (apr_time_exp_gmt(&tm, apr_time_from_sec(whole)) != APR_SUCCESS) {
        return NULL;
    }
    return apr_psprintf(pool, "%04d-%02d-%02d", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday);
}

const char *cp_field_show(apr_pool_t *pool, cp_show how, const cp_field *field,
                          const cp_row *row, const apr_array_header_t *fields)
{
    const json_t *value;
    const char *text, *date = NULL;
    apr_size_t len = 0;

    /* text from the row's bytes: a string's decoded text, anything else its
     * JSON, without a jansson value; what the shown text is made from is
     * let go as soon as it is made (a whole document's JSON, say) */
    if (how == CP_SHOW_HTML || how == CP_SHOW_URL) {
        apr_pool_t *scratch;
        const char *shown = "";

        apr_pool_create(&scratch, pool);
        if ((text = field_text(scratch, field, row, fields, &len)) != NULL) {
            if (how == CP_SHOW_URL) {
                text = cp_percent_encode(scratch, text, len);
                len = strlen(text);
            }
            shown = cp_html_text(pool, text, len);
        }
        apr_pool_destroy(scratch);
        return shown;
    }
    /* a number or a date is a scalar: an array or object shows nothing,
     * and is not decoded (the document itself is always an object) */
    if (cp_field_reads(field, "doc") && field->steps->nelts == 1) {
        return "";
    }
    if (!cp_field_reads(field, "key") && cp_field_within(field, fields)) {
        cp_span at = field_span(field, row);

        if (at.len && (at.text[0] == '{' || at.text[0] == '[')) {
            return "";
        }
    }
    value = field_value(pool, field, row, fields);
    if (!value) {
        return "";
    }
    if (how == CP_SHOW_NUMBER) {
        return cp_json_is_number(value) ? cp_json_text(pool, value) : "";
    }
    /* CP_SHOW_DATE; a wide integer is no date: milliseconds beyond a
     * double's dates */
    if (cp_json_is_string(value)) {
        /* a NUL ends the C string early: the length must still match */
        if (strlen(json_string_value(value)) == json_string_length(value)) {
            date = iso_date(pool, json_string_value(value));
        }
    }
    else if (json_is_number(value)) {
        date = epoch_ms_date(pool, json_number_value(value));
    }
    return date ? date : "";
}

/* An element's or a sort value's text, for a person: as cp_field_text
 * gives it, but a decoded real as the fewest digits that read back as it,
 * its exponent as JavaScript writes one (0.1 and 1.5e-7, where jansson
 * writes 0.10000000000000001 and 1.4999999999999999e-7): CouchDB writes
 * numbers so, and the bytes it sent are gone from a decoded value. */
static const char *value_text(apr_pool_t *pool, const json_t *value, apr_size_t *len)
{
    char digits[32], *exponent, *from, *to;
    int precision;

    if (!json_is_real(value)) {
        return cp_field_text(pool, value, len);
    }
    /* C's %g (APR's writes 0.1 as .1); strtod reads what it writes in the
     * same locale */
    for (precision = 1; precision < 17; precision++) {
        snprintf(digits, sizeof(digits), "%.*g", precision, json_real_value(value));
        if (strtod(digits, NULL) == json_real_value(value)) {
            break;
        }
    }
    snprintf(digits, sizeof(digits), "%.*g", precision, json_real_value(value));
    /* a locale's decimal comma, as jansson undoes it */
    if ((from = strchr(digits, ',')) != NULL) {
        *from = '.';
    }
    /* e+21 as e21, e-07 as e-7 */
    if ((exponent = strchr(digits, 'e')) != NULL) {
        from = to = exponent + 1;
        if (*from == '+') {
            from++;
        }
        else if (*from == '-') {
            to++, from++;
        }
        while (*from == '0' && from[1]) {
            from++;
        }
        memmove(to, from, strlen(from) + 1);
    }
    *len = strlen(digits);
    return apr_pstrmemdup(pool, digits, *len);
}

const char *cp_field_join_parse(apr_pool_t *pool, const char *arg, const cp_field **field,
                                const char **separator)
{
    const char *brackets = strstr(arg, "[]");
    const char *err = NULL;

    if (!brackets) {
        return apr_psprintf(pool, "'%s' has no []: write the array's path, [] and the "
                            "separator, as in doc.tags[], ", arg);
    }
    *field = cp_field_parse(pool, apr_pstrndup(pool, arg, (apr_size_t)(brackets - arg)), &err);
    if (!*field) {
        return apr_pstrcat(pool, "the field ", err, NULL);
    }
    *separator = brackets + 2;
    return NULL;
}

/* The pieces of a join: each element's escaped text, the separator before
 * all but the first. */
typedef struct {
    apr_pool_t *pool;
    apr_array_header_t *pieces;
    const char *separator;
} joining;

static void join_element(joining *join, const char *text, apr_size_t len)
{
    if (join->pieces->nelts > 0) {
        APR_ARRAY_PUSH(join->pieces, const char *) = join->separator;
    }
    APR_ARRAY_PUSH(join->pieces, const char *) = cp_html_text(join->pool, text ? text : "",
                                                              text ? len : 0);
}

/* The walk's visitor: the array's elements are its values at depth 1, a
 * container one when it closes (with all its bytes). */
static int join_visit(void *baton, const cp_sj_value *v)
{
    joining *join = baton;
    const char *text = NULL;
    apr_size_t len = 0;

    if (v->depth != 1 || v->kind == CP_SJ_OBJECT || v->kind == CP_SJ_ARRAY) {
        return 0;
    }
    switch (v->kind) {
    case CP_SJ_STRING:
        text = v->string;
        len = v->string_len;
        break;
    case CP_SJ_CLOSE:
        /* written from its bytes, as a field shows one; NULL beyond
         * cp_json_load's depth, as a field that deep shows */
        text = cp_json_span_text(join->pool, v->text, v->len, &len);
        break;
    default:
        /* a number as CouchDB wrote it; true, false, null: their JSON */
        text = v->text;
        len = v->len;
    }
    join_element(join, text, len);
    return 0;
}

const char *cp_field_join(apr_pool_t *pool, const cp_field *field, const char *separator,
                          const cp_row *row, const apr_array_header_t *fields)
{
    joining join = { pool, apr_array_make(pool, 8, sizeof(const char *)), separator };

    if (cp_field_reads(field, "key")) {
        /* the key is decoded whole already (cp_row_key) */
        const json_t *key = key_field(field, row);
        size_t i;

        if (!json_is_array(key)) {
            return cp_field_show(pool, CP_SHOW_HTML, field, row, fields);
        }
        for (i = 0; i < json_array_size(key); i++) {
            apr_size_t len = 0;
            const char *text = value_text(pool, json_array_get(key, i), &len);

            join_element(&join, text, len);
        }
    }
    else {
        cp_span at = field_span(field, row);
        char *padded;

        if (!at.len || at.text[0] != '[') {
            return cp_field_show(pool, CP_SHOW_HTML, field, row, fields);
        }
        if (!cp_field_within(field, fields)) {
            return "";
        }
        /* the walk reads blocks past the end: a copy, padded */
        padded = apr_palloc(pool, at.len + CP_SJ_PADDING);
        memcpy(padded, at.text, at.len);
        memset(padded + at.len, 0, CP_SJ_PADDING);
        /* the reader has checked these bytes: the walk does not fail */
        if (cp_sj_walk(padded, at.len, CP_RESPONSE_MAX_DEPTH, join_visit, &join) != CP_SJ_OK) {
            return "";
        }
    }
    return apr_array_pstrcat(pool, join.pieces, 0);
}

const char *cp_item_find_default(apr_pool_t *pool, const cp_row *row,
                                 const apr_array_header_t *fields)
{
    int shown = fields == NULL, i;
    const json_t *key;
    apr_array_header_t *pieces;

    for (i = 0; !shown && i < fields->nelts; i++) {
        shown = strcmp(APR_ARRAY_IDX(fields, i, const char *), "title") == 0;
    }
    if (shown) {
        cp_span doc = cp_row_member(row, "doc");
        apr_size_t len = 0;
        const char *title = doc.len ? cp_row_string(row, cp_row_find(row, doc, "title"), &len)
                                    : NULL;

        if (title && len > 0) {
            return cp_html_text(pool, title, len);
        }
    }
    key = cp_row_key(row);
    if (!json_is_array(key)) {
        apr_size_t len = 0;
        const char *text = value_text(pool, key, &len);

        return text ? cp_html_text(pool, text, len) : "";
    }
    pieces = apr_array_make(pool, 2 * (int)json_array_size(key), sizeof(const char *));
    for (i = 0; i < (int)json_array_size(key); i++) {
        apr_size_t len = 0;
        const char *text = value_text(pool, json_array_get(key, (size_t)i), &len);

        if (i > 0) {
            APR_ARRAY_PUSH(pieces, const char *) = ", ";
        }
        APR_ARRAY_PUSH(pieces, const char *) = cp_html_text(pool, text, len);
    }
    return apr_array_pstrcat(pool, pieces, 0);
}
