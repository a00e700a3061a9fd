/* SPDX-License-Identifier: Apache-2.0 */
/*
 * couchpage_json_span: a JSON text's compact text written straight from a
 * walk of its bytes (cp_json_span_text, see couchpage_json.h), as jansson
 * would write the value it holds, without building it. httpd-free.
 */
#include "couchpage_json.h"
#include "couchpage_simdjson.h"

#include <apr_strings.h>
#include <stdlib.h>
#include <string.h>

/* An open container of cp_json_span_text's walk: whether a value was
 * written in it (a comma before the next), and for an object the names
 * seen, as 64-bit hashes in an open-addressed table (0: empty). */
typedef struct {
    int object;
    int any;
    apr_uint64_t *names;
    apr_size_t name_count;
    apr_size_t name_room; /* a power of 2, or 0 */
} span_frame;

typedef struct {
    char *text;           /* of malloc, grown by realloc */
    apr_size_t len;
    apr_size_t room;
    span_frame *open;     /* of malloc */
    apr_size_t depth;     /* open containers */
    apr_size_t open_room;
    int duplicate;        /* an object has a name twice: jansson's way decides */
    int failed;           /* out of memory, or nested as cp_json_load refuses */
} span_writing;

static int span_room(span_writing *w, apr_size_t n)
{
    if (w->len + n + 1 > w->room) {
        apr_size_t room = w->room * 2 > w->len + n + 1 ? w->room * 2 : w->len + n + 1;
        char *text = realloc(w->text, room);

        if (!text) {
            return 0;
        }
        w->text = text;
        w->room = room;
    }
    return 1;
}

static int span_add(span_writing *w, const char *text, apr_size_t n)
{
    if (!span_room(w, n)) {
        return 0;
    }
    memcpy(w->text + w->len, text, n);
    w->len += n;
    return 1;
}

/* A decoded string as jansson's writer quotes it (JSON_COMPACT, no
 * JSON_ENSURE_ASCII or JSON_ESCAPE_SLASH): \" \\ \b \f \n \r \t, \u00XX
 * for the other control characters, UTF-8 as it is. */
static int span_add_string(span_writing *w, const char *s, apr_size_t n)
{
    if (!span_room(w, 6 * n + 2)) {
        return 0;
    }
    w->len += cp_json_quote_into(w->text + w->len, s, n, 0);
    return 1;
}

/* A number as jansson writes the value cp_json_number reads: an integer's
 * digits as sent (JSON has no leading zeros; one beyond 64 bits is a wide
 * integer, written as sent), but -0 as 0; any other number as jansson
 * writes its double. */
static int span_add_number(span_writing *w, const char *text, apr_size_t n)
{
    json_t *value;
    char *written;
    int ok;

    if (!memchr(text, '.', n) && !memchr(text, 'e', n) && !memchr(text, 'E', n)) {
        return n == 2 && text[0] == '-' && text[1] == '0' ? span_add(w, "0", 1)
                                                          : span_add(w, text, n);
    }
    if (!(value = cp_json_number(text, n))) {
        return 0;
    }
    written = json_dumps(value, JSON_COMPACT | JSON_ENCODE_ANY);
    json_decref(value);
    ok = written && span_add(w, written, strlen(written));
    free(written);
    return ok;
}

/* Whether the innermost open object had name before; notes it. FNV-1a:
 * two names of one hash are taken for one name (jansson's way then
 * decides, exactly). */
static int seen_before(span_writing *w, span_frame *f, const char *name, apr_size_t n)
{
    apr_uint64_t hash = 14695981039346656037ULL;
    apr_size_t i, mask;

    for (i = 0; i < n; i++) {
        hash = (hash ^ (unsigned char)name[i]) * 1099511628211ULL;
    }
    hash += !hash;
    if (2 * (f->name_count + 1) > f->name_room) {
        apr_size_t room = f->name_room ? 2 * f->name_room : 16;
        apr_uint64_t *names = calloc(room, sizeof(*names));

        if (!names) {
            w->failed = 1;
            return 1;
        }
        for (i = 0; i < f->name_room; i++) {
            apr_size_t at = (apr_size_t)f->names[i] & (room - 1);

            if (!f->names[i]) {
                continue;
            }
            while (names[at]) {
                at = (at + 1) & (room - 1);
            }
            names[at] = f->names[i];
        }
        free(f->names);
        f->names = names;
        f->name_room = room;
    }
    mask = f->name_room - 1;
    for (i = (apr_size_t)hash & mask; f->names[i]; i = (i + 1) & mask) {
        if (f->names[i] == hash) {
            return 1;
        }
    }
    f->names[i] = hash;
    f->name_count++;
    return 0;
}

static int write_span_value(void *baton, const cp_sj_value *v)
{
    span_writing *w = baton;
    span_frame *f = w->depth ? &w->open[w->depth - 1] : NULL;
    int ok = 1;

    if (v->kind == CP_SJ_CLOSE) {
        f = &w->open[--w->depth];
        free(f->names);
        return !span_add(w, f->object ? "}" : "]", 1) && (w->failed = 1);
    }
    /* as cp_json_load refuses it */
    if (v->depth >= JSON_PARSER_MAX_DEPTH) {
        w->failed = 1;
        return 1;
    }
    if (f) {
        if (f->any && !span_add(w, ",", 1)) {
            w->failed = 1;
            return 1;
        }
        f->any = 1;
        if (f->object) {
            if (seen_before(w, f, v->name, v->name_len)) {
                w->duplicate = !w->failed;
                return 1;
            }
            ok = span_add_string(w, v->name, v->name_len) && span_add(w, ":", 1);
        }
    }
    switch (v->kind) {
    case CP_SJ_OBJECT:
    case CP_SJ_ARRAY:
        if (w->depth == w->open_room) {
            apr_size_t room = w->open_room ? 2 * w->open_room : 16;
            span_frame *open = realloc(w->open, room * sizeof(*open));

            if (!open) {
                ok = 0;
                break;
            }
            w->open = open;
            w->open_room = room;
        }
        f = &w->open[w->depth++];
        memset(f, 0, sizeof(*f));
        f->object = v->kind == CP_SJ_OBJECT;
        ok = ok && span_add(w, f->object ? "{" : "[", 1);
        break;
    case CP_SJ_STRING:
        ok = ok && span_add_string(w, v->string, v->string_len);
        break;
    case CP_SJ_NUMBER_VALUE:
        ok = ok && span_add_number(w, v->text, v->len);
        break;
    case CP_SJ_TRUE:
        ok = ok && span_add(w, "true", 4);
        break;
    case CP_SJ_FALSE:
        ok = ok && span_add(w, "false", 5);
        break;
    default:
        ok = ok && span_add(w, "null", 4);
    }
    if (!ok) {
        w->failed = 1;
    }
    return !ok;
}

static apr_status_t free_text(void *data)
{
    free(data);
    return APR_SUCCESS;
}

const char *cp_json_span_text(apr_pool_t *pool, const char *text, apr_size_t len,
                              apr_size_t *text_len)
{
    span_writing w;
    cp_sj_status status;
    const char *written;

    memset(&w, 0, sizeof(w));
    if (len && (text[0] == '{' || text[0] == '[')) {
        w.room = len + len / 8 + 64;
        w.text = malloc(w.room);
        status = w.text ? cp_sj_walk_value(text, len, JSON_PARSER_MAX_DEPTH, write_span_value,
                                           &w)
                        : CP_SJ_MEMORY;
        while (w.depth) {
            free(w.open[--w.depth].names);
        }
        free(w.open);
        if (status == CP_SJ_OK && !w.failed && !w.duplicate) {
            w.text[w.len] = '\0';
            apr_pool_cleanup_register(pool, w.text, free_text, apr_pool_cleanup_null);
            *text_len = w.len;
            return w.text;
        }
        free(w.text);
        if (!w.duplicate) {
            return NULL;
        }
    }
    /* a scalar, or an object with a name twice: the value, as jansson
     * holds and writes it */
    written = cp_json_text(pool, cp_json_load(pool, text, len, NULL));
    *text_len = written ? strlen(written) : 0;
    return written;
}
