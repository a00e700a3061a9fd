#include "couchpage_item.h"
#include "couchpage_json.h"

#include <apr_strings.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *member; /* NULL for an [index] step */
    size_t index;
} field_step;

struct cp_field {
    apr_array_header_t *steps; /* of field_step; the first is the row member */
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

const json_t *cp_field_get(const cp_field *field, const json_t *row)
{
    const json_t *value = row;
    int i;

    for (i = 0; i < field->steps->nelts && value; i++) {
        const field_step *step = &APR_ARRAY_IDX(field->steps, i, field_step);

        value = step->member ? json_object_get(value, step->member)
                             : json_array_get(value, step->index);
    }
    return value;
}

const char *cp_field_text(apr_pool_t *pool, const json_t *value, apr_size_t *len)
{
    const char *text;

    if (!value) {
        return NULL;
    }
    if (json_is_string(value)) {
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

const char *cp_pattern_expand(apr_pool_t *pool, const cp_pattern *pattern,
                              const json_t *row)
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
        text = cp_field_text(pool, cp_field_get(part->field, row), &len);
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
