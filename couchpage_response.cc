/* SPDX-License-Identifier: Apache-2.0 */
/*
 * couchpage_response.cc: CouchDB's answers read by simdjson's On-Demand
 * parser (see couchpage_response.h). C++ only because simdjson is; the
 * interface is C, and nothing here throws (built with -fno-exceptions:
 * simdjson reports errors as codes). Part of the httpd-free core: no
 * httpd header, no request_rec.
 */
#include "couchpage_response.h"
#include "couchpage_json.h"

#include <apr_strings.h>
/* simdjson turns on its development checks in a build without optimisation
 * (no __OPTIMIZE__: -O0, Debian's noopt), and they assert (abort the child)
 * on a document nested 1,024 levels deep, which CouchDB stores and the
 * reader accepts (CP_RESPONSE_MAX_DEPTH keeps its own depth). The reader
 * checks every value itself: off at every optimisation level. */
#define SIMDJSON_DEVELOPMENT_CHECKS 0
#include <simdjson.h>

#include <errno.h>
#include <new>
#include <stdlib.h>
#include <string.h>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

using namespace simdjson;

static_assert(CP_RESPONSE_PADDING >= SIMDJSON_PADDING,
              "a body is followed by the padding simdjson reads");

/* An object's member: its name decoded (it may hold NUL characters), and
 * its bytes from the name's opening quote to the value's end. */
struct cp_member {
    const char *name;
    apr_size_t name_len;
    const char *from;
    cp_span value;
};

struct cp_members {
    const cp_member *items;
    int count;
};

namespace {

/* One body being read. */
struct reader {
    apr_pool_t *pool;
    const char *body;
    apr_size_t body_len;
    ondemand::document *doc;
    /* the containers being read, innermost last (check_value): where each
     * is, and whether its first member or element has been read */
    struct frame {
        std::variant<ondemand::object_iterator, ondemand::array_iterator> at;
        bool entered;
    };
    std::vector<frame> open;
};

bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* The type of the value (or one-scalar document) v. A token that is no
 * JSON value is an error: simdjson 4 reports one (NaN, undefined, a bare
 * word) as json_type::unknown, and no error, and its bytes would be copied
 * into pages. Every switch on a type has a default arm for the same reason
 * (and the build has -Werror=switch). */
template <typename V>
error_code type_of(V &v, ondemand::json_type &type)
{
    SIMDJSON_TRY(v.type().get(type));
    switch (type) {
    case ondemand::json_type::object:
    case ondemand::json_type::array:
    case ondemand::json_type::string:
    case ondemand::json_type::number:
    case ondemand::json_type::boolean:
    case ondemand::json_type::null:
        return SUCCESS;
    default:
        return TAPE_ERROR;
    }
}

/* A value's token (the white space after it included), of a value or of a
 * document whose whole text is one scalar. */
std::string_view token_of(ondemand::value &v)
{
    return v.raw_json_token();
}

std::string_view token_of(ondemand::document &doc)
{
    std::string_view token;

    return doc.raw_json_token().get(token) ? std::string_view() : token;
}

/* A scalar's bytes: its token without the white space after it. */
template <typename V>
std::string_view scalar_text(V &v)
{
    std::string_view token = token_of(v);

    while (!token.empty() && is_space(token.back())) {
        token.remove_suffix(1);
    }
    return token;
}

/* A number simdjson refuses may still be one JSON allows (a zero with an
 * exponent of thirty digits: 0e400987654321098765432109): jansson, whose
 * reader takes exactly JSON's numbers within a double's range, decides.
 * Its value (pool-owned), or NULL when it is not one. */
const json_t *number_by_jansson(apr_pool_t *pool, std::string_view text)
{
    return cp_json_load(pool, text.data(), text.size(), NULL);
}

/* An object's next member, and its name decoded. */
error_code member_of(simdjson_result<ondemand::field> next, ondemand::field &field,
                     std::string_view &name)
{
    SIMDJSON_TRY(std::move(next).get(field));
    return field.unescaped_key().get(name);
}

/* Reads the number v, checked: SUCCESS with *real its double, or, for one
 * simdjson refuses that JSON allows, with *exact jansson's value of it
 * (pool-owned); else the error. V is a value or a one-scalar document. */
template <typename V>
error_code read_number(apr_pool_t *pool, V &v, double *real, const json_t **exact)
{
    error_code error = v.get_double().get(*real);

    *exact = NULL;
    /* (a number left unread is passed over by its container) */
    if (error == NUMBER_ERROR
        && json_is_number(*exact = number_by_jansson(pool, scalar_text(v)))) {
        return SUCCESS;
    }
    return error;
}

/* What a simdjson error says of the body. */
const char *json_fault(error_code error)
{
    switch (error) {
    case UTF8_ERROR:
        return "a string is not UTF-8";
    case UNESCAPED_CHARS:
        return "it holds a NUL byte, or a string a control character";
    case UNCLOSED_STRING:
        return "a string is not closed";
    case STRING_ERROR:
        return "a string has a malformed escape or surrogate";
    case NUMBER_ERROR:
        return "a number is malformed or beyond a double's range";
    case T_ATOM_ERROR:
    case F_ATOM_ERROR:
    case N_ATOM_ERROR:
        return "a word is not true, false or null";
    case DEPTH_ERROR:
        return "values are nested deeper than " APR_STRINGIFY(CP_RESPONSE_MAX_DEPTH) " levels";
    case TRAILING_CONTENT:
        return "there is more after its value";
    case EMPTY:
        return "it is empty";
    default:
        return "a value, or a separator between values, is malformed or missing";
    }
}

/* Where the value just read ends: before the white space ahead of the next
 * token, or at the body's end. */
const char *end_of_read(const reader &rd, const char *start)
{
    const char *next;

    if (rd.doc->current_location().get(next)) {
        next = rd.body + rd.body_len;
    }
    while (next > start && is_space(next[-1])) {
        next--;
    }
    return next;
}

/* Opens a container for check_value (its first member or element is read
 * next), unless it would nest deeper than max_depth below base. */
template <typename Container, typename Iterator>
error_code open_container(reader &rd, size_t base, size_t max_depth,
                          simdjson_result<Container> got)
{
    Container container;
    Iterator first;

    if (rd.open.size() - base >= max_depth) {
        return DEPTH_ERROR;
    }
    SIMDJSON_TRY(std::move(got).get(container));
    SIMDJSON_TRY(container.begin().get(first));
    rd.open.push_back(reader::frame{ first, false });
    return SUCCESS;
}

/* Reads the value v to its end, checking every part of it as JSON, and
 * nested at most max_depth levels (else DEPTH_ERROR). The containers open
 * inside it are kept in rd.open, not on the stack: a document may nest
 * deeply. */
error_code check_value(reader &rd, ondemand::value v, size_t max_depth = CP_RESPONSE_MAX_DEPTH)
{
    size_t base = rd.open.size();
    ondemand::value current = v;
    bool have = true;

    for (;;) {
        if (have) {
            ondemand::json_type type;

            SIMDJSON_TRY(type_of(current, type));
            switch (type) {
            case ondemand::json_type::object:
                SIMDJSON_TRY((open_container<ondemand::object, ondemand::object_iterator>(
                    rd, base, max_depth, current.get_object())));
                break;
            case ondemand::json_type::array:
                SIMDJSON_TRY((open_container<ondemand::array, ondemand::array_iterator>(
                    rd, base, max_depth, current.get_array())));
                break;
            case ondemand::json_type::string: {
                std::string_view text;

                SIMDJSON_TRY(current.get_string().get(text));
                break;
            }
            case ondemand::json_type::number: {
                double number;
                const json_t *exact;

                SIMDJSON_TRY(read_number(rd.pool, current, &number, &exact));
                break;
            }
            case ondemand::json_type::boolean: {
                bool truth;

                SIMDJSON_TRY(current.get_bool().get(truth));
                break;
            }
            case ondemand::json_type::null: {
                bool is_null;

                SIMDJSON_TRY(current.is_null().get(is_null));
                if (!is_null) {
                    return N_ATOM_ERROR;
                }
                break;
            }
            default:
                return TAPE_ERROR;
            }
            have = false;
        }
        if (rd.open.size() == base) {
            return SUCCESS;
        }
        /* the next member or element of the innermost open container */
        reader::frame &top = rd.open.back();
        ondemand::object_iterator *object_at = std::get_if<ondemand::object_iterator>(&top.at);

        /* an iterator's != looks only at itself: whether its container is
         * still open */
        if (object_at) {
            ondemand::field field;
            std::string_view name;

            if (top.entered) {
                ++*object_at;
            }
            top.entered = true;
            if (!(*object_at != *object_at)) {
                rd.open.pop_back();
                continue;
            }
            SIMDJSON_TRY(member_of(**object_at, field, name));
            current = field.value();
        }
        else {
            ondemand::array_iterator *array_at = std::get_if<ondemand::array_iterator>(&top.at);

            if (top.entered) {
                ++*array_at;
            }
            top.entered = true;
            if (!(*array_at != *array_at)) {
                rd.open.pop_back();
                continue;
            }
            SIMDJSON_TRY((**array_at).get(current));
        }
        have = true;
    }
}

/* Reads and checks the value v (nested at most max_depth levels), and
 * sets *span to its bytes: a scalar's token, a container's up to where the
 * reading of it ended. */
error_code read_value(reader &rd, ondemand::value v, cp_span *span,
                      size_t max_depth = CP_RESPONSE_MAX_DEPTH)
{
    const char *start = v.raw_json_token().data();
    ondemand::json_type type;
    std::string_view scalar;

    SIMDJSON_TRY(type_of(v, type));
    if (type != ondemand::json_type::object && type != ondemand::json_type::array) {
        scalar = scalar_text(v);
        SIMDJSON_TRY(check_value(rd, v, max_depth));
        span->text = scalar.data();
        span->len = scalar.size();
        return SUCCESS;
    }
    SIMDJSON_TRY(check_value(rd, v, max_depth));
    span->text = start;
    span->len = (apr_size_t)(end_of_read(rd, start) - start);
    return SUCCESS;
}

/* Reads and checks the value v, and sets *span to its bytes; when it is an
 * object, *members to its members (else NULL). */
error_code read_members(reader &rd, ondemand::value v, cp_span *span,
                        const cp_members **members)
{
    const char *start = v.raw_json_token().data();
    ondemand::json_type type;
    ondemand::object object;
    apr_array_header_t *items;
    cp_members *read;

    *members = NULL;
    SIMDJSON_TRY(type_of(v, type));
    if (type != ondemand::json_type::object) {
        return read_value(rd, v, span);
    }
    SIMDJSON_TRY(v.get_object().get(object));
    items = apr_array_make(rd.pool, 8, sizeof(cp_member));
    for (auto field_result : object) {
        ondemand::field field;
        std::string_view name;
        cp_member *member;

        SIMDJSON_TRY(std::move(field_result).get(field));
        member = (cp_member *)apr_array_push(items);
        /* the name's opening quote, before the text the raw key points at
         * (read before the name is decoded: decoding consumes the key) */
        member->from = (const char *)field.key().raw() - 1;
        SIMDJSON_TRY(field.unescaped_key().get(name));
        member->name = apr_pstrmemdup(rd.pool, name.data(), name.size());
        member->name_len = name.size();
        SIMDJSON_TRY(read_value(rd, field.value(), &member->value));
    }
    span->text = start;
    span->len = (apr_size_t)(end_of_read(rd, start) - start);
    read = (cp_members *)apr_palloc(rd.pool, sizeof(*read));
    read->items = (const cp_member *)items->elts;
    read->count = items->nelts;
    *members = read;
    return SUCCESS;
}

/* A count (total_rows, offset), checked as a number: a non-negative
 * integer of at most 18 digits, else -1. */
error_code read_count(reader &rd, ondemand::value v, apr_int64_t *count)
{
    cp_span span;
    apr_int64_t value = 0;
    apr_size_t i;

    SIMDJSON_TRY(read_value(rd, v, &span));
    *count = -1;
    i = span.len > 0 && span.text[0] == '-';
    if (span.len - i == 0 || span.len - i > 18) {
        return SUCCESS;
    }
    for (; i < span.len; i++) {
        if (span.text[i] < '0' || span.text[i] > '9') {
            return SUCCESS;
        }
        value = value * 10 + (span.text[i] - '0');
    }
    /* -0 is 0 */
    *count = span.text[0] == '-' && value != 0 ? -1 : value;
    return SUCCESS;
}

/* Keys nest at most this deep: jansson's limit, and a token carries its key. */
#define KEY_MAX_DEPTH 2048

/* A value as jansson's, built from the parser as it reads (a row's key is
 * compared, and carried by tokens, as jansson's value; a template shows a
 * field decoded): the value jansson would read from the text, integers
 * beyond 64 bits as doubles, as cp_json_load reads them. *value is NULL
 * for an error, DEPTH_ERROR beyond KEY_MAX_DEPTH levels. V is a value, or
 * a document whose whole text is the value (simdjson reads a document's
 * scalar by the document's own getters). */
template <typename V>
error_code key_value(apr_pool_t *pool, V &v, int depth, json_t **value)
{
    ondemand::json_type type;

    *value = NULL;
    SIMDJSON_TRY(type_of(v, type));
    switch (type) {
    case ondemand::json_type::object: {
        ondemand::object object;
        json_t *members;

        if (depth >= KEY_MAX_DEPTH) {
            return DEPTH_ERROR;
        }
        SIMDJSON_TRY(v.get_object().get(object));
        members = json_object();
        for (auto field_result : object) {
            ondemand::field field;
            std::string_view name;
            json_t *member;
            error_code error;

            if ((error = member_of(std::move(field_result), field, name))
                || (error = key_value(pool, field.value(), depth + 1, &member))) {
                json_decref(members);
                return error;
            }
            /* the last of a name counts, in the place of the first, as
             * jansson's reader keeps it */
            json_object_setn_new_nocheck(members, name.data(), name.size(), member);
        }
        *value = members;
        return SUCCESS;
    }
    case ondemand::json_type::array: {
        ondemand::array array;
        json_t *elements;

        if (depth >= KEY_MAX_DEPTH) {
            return DEPTH_ERROR;
        }
        SIMDJSON_TRY(v.get_array().get(array));
        elements = json_array();
        for (auto element_result : array) {
            ondemand::value element_value;
            json_t *element;
            error_code error;

            if ((error = element_result.get(element_value))
                || (error = key_value(pool, element_value, depth + 1, &element))) {
                json_decref(elements);
                return error;
            }
            json_array_append_new(elements, element);
        }
        *value = elements;
        return SUCCESS;
    }
    case ondemand::json_type::string: {
        std::string_view text;

        SIMDJSON_TRY(v.get_string().get(text));
        *value = json_stringn_nocheck(text.data(), text.size());
        return SUCCESS;
    }
    case ondemand::json_type::number: {
        std::string_view text = scalar_text(v);
        const json_t *exact;
        double real;

        /* the number checked and read as a double; jansson's rule for its
         * value: one with a point or an exponent is a real, an integer
         * that fits 64 bits (strtoll, as jansson reads it) an integer, one
         * that does not the double. (simdjson 3.0's get_int64 takes some
         * negative integers of 20 digits at a document's root.) */
        SIMDJSON_TRY(read_number(pool, v, &real, &exact));
        if (exact) {
            *value = json_incref((json_t *)exact);
            return SUCCESS;
        }
        if (text.find_first_of(".eE") == std::string_view::npos) {
            const char *digits = apr_pstrmemdup(pool, text.data(), text.size());
            char *end;
            long long integer;

            errno = 0;
            integer = strtoll(digits, &end, 10);
            if (errno != ERANGE && !*end) {
                *value = json_integer(integer);
                return SUCCESS;
            }
        }
        *value = json_real(real);
        return SUCCESS;
    }
    case ondemand::json_type::boolean: {
        bool truth;

        SIMDJSON_TRY(v.get_bool().get(truth));
        *value = json_boolean(truth);
        return SUCCESS;
    }
    case ondemand::json_type::null: {
        bool is_null;

        SIMDJSON_TRY(v.is_null().get(is_null));
        if (!is_null) {
            return N_ATOM_ERROR;
        }
        *value = json_null();
        return SUCCESS;
    }
    default:
        return TAPE_ERROR;
    }
}

/* Why a read stopped: a JSON error (error), or the shape of a value that is
 * JSON (reason). */
struct refusal {
    error_code error;
    const char *reason;
};

refusal json_refusal(error_code error)
{
    return refusal{ error, NULL };
}

refusal shape_refusal(const char *reason)
{
    return refusal{ SUCCESS, reason };
}

/* The value v as an object, in *object; a value of another kind is read
 * and checked, and refused with not_object. */
refusal open_object(reader &rd, ondemand::value v, const char *not_object,
                    ondemand::object *object)
{
    ondemand::json_type type;
    error_code error;

    if ((error = type_of(v, type))) {
        return json_refusal(error);
    }
    if (type != ondemand::json_type::object) {
        return (error = check_value(rd, v)) ? json_refusal(error) : shape_refusal(not_object);
    }
    return (error = v.get_object().get(*object)) ? json_refusal(error) : shape_refusal(NULL);
}

/* Reads the row v, number n of its answer. */
refusal read_row(reader &rd, ondemand::value v, int n, int with_docid, cp_answer *answer,
                 cp_row *row)
{
    const char *start = v.raw_json_token().data();
    ondemand::object object;
    error_code error;
    bool id_is_string = false;
    refusal refused;

    memset(row, 0, sizeof(*row));
    row->answer = answer;
    refused = open_object(rd, v, "not an object", &object);
    if (refused.reason) {
        return shape_refusal(apr_psprintf(rd.pool, "row %d of the view response has no key", n));
    }
    if (refused.error) {
        return refused;
    }
    /* the last member of a name counts, as a JSON parser keeps it */
    for (auto field_result : object) {
        ondemand::field field;
        std::string_view name;

        if ((error = member_of(std::move(field_result), field, name))) {
            return json_refusal(error);
        }
        if (name == "id") {
            ondemand::json_type id_type;
            std::string_view id;

            if ((error = type_of(field.value(), id_type))) {
                return json_refusal(error);
            }
            id_is_string = id_type == ondemand::json_type::string;
            if (id_is_string) {
                std::string_view text = scalar_text(field.value());

                if ((error = field.value().get_string().get(id))) {
                    return json_refusal(error);
                }
                row->id = memchr(id.data(), 0, id.size())
                          ? NULL : apr_pstrmemdup(rd.pool, id.data(), id.size());
                row->id_text.text = text.data();
                row->id_text.len = text.size();
            }
            else {
                row->id = NULL;
                error = read_value(rd, field.value(), &row->id_text);
            }
        }
        else if (name == "key") {
            /* checked now, decoded when the page asks (cp_row_key) */
            error = read_value(rd, field.value(), &row->key_text, KEY_MAX_DEPTH);
            if (error == DEPTH_ERROR) {
                return shape_refusal(apr_psprintf(rd.pool, "row %d of the view response has "
                                                  "a key the module cannot read (nested "
                                                  "deeper than %d)", n, KEY_MAX_DEPTH));
            }
        }
        else if (name == "value") {
            error = read_members(rd, field.value(), &row->value, &row->value_members);
        }
        else if (name == "doc") {
            error = read_members(rd, field.value(), &row->doc, &row->doc_members);
        }
        else {
            error = check_value(rd, field.value());
        }
        if (error) {
            return json_refusal(error);
        }
    }
    row->text.text = start;
    row->text.len = (apr_size_t)(end_of_read(rd, start) - start);
    if (!row->key_text.len) {
        return shape_refusal(apr_psprintf(rd.pool, "row %d of the view response has no key",
                                          n));
    }
    if (with_docid && (!id_is_string || (row->id && !*row->id))) {
        return shape_refusal(apr_psprintf(rd.pool, "row %d of the view response has no "
                                          "document id", n));
    }
    if (with_docid && !row->id) {
        return shape_refusal(apr_psprintf(rd.pool, "row %d of the view response has a "
                                          "document id with a NUL character", n));
    }
    return shape_refusal(NULL);
}

/* An answer's rows are one array of malloc's, grown by realloc, which
 * moves a large one by remapping its pages: a pool's array would leave
 * every smaller copy behind, as much again as the rows. Freed with the
 * answer's pool. */
apr_status_t release_rows(void *data)
{
    cp_answer *answer = static_cast<cp_answer *>(data);

    free(answer->rows);
    answer->rows = NULL;
    answer->row_count = answer->row_capacity = 0;
    return APR_SUCCESS;
}

/* Room for twice the rows (16 at first): false when memory runs out. */
bool grow_rows(apr_pool_t *pool, cp_answer *answer)
{
    apr_size_t capacity = answer->rows ? answer->row_capacity * 2 : 16;
    void *grown = realloc(answer->rows, capacity * sizeof(cp_row));

    if (!grown) {
        return false;
    }
    if (!answer->rows) {
        apr_pool_cleanup_register(pool, answer, release_rows, apr_pool_cleanup_null);
    }
    answer->rows = (cp_row *)grown;
    answer->row_capacity = capacity;
    return true;
}

/* Reads the view response v. */
refusal read_answer(reader &rd, ondemand::value v, int with_docid, const cp_answer **out)
{
    cp_answer *answer = (cp_answer *)apr_pcalloc(rd.pool, sizeof(*answer));
    ondemand::object object;
    error_code error;
    refusal refused;

    answer->body = rd.body;
    answer->body_len = rd.body_len;
    answer->pool = rd.pool;
    answer->total_rows = -1;
    answer->offset = -1;
    refused = open_object(rd, v, "the view response is not a JSON object", &object);
    if (refused.error || refused.reason) {
        return refused;
    }
    for (auto field_result : object) {
        ondemand::field field;
        std::string_view name;

        if ((error = member_of(std::move(field_result), field, name))) {
            return json_refusal(error);
        }
        if (name == "rows") {
            ondemand::json_type rows_type;
            ondemand::array rows;
            int n = 0;

            if ((error = type_of(field.value(), rows_type))) {
                return json_refusal(error);
            }
            if (rows_type != ondemand::json_type::array) {
                if ((error = check_value(rd, field.value()))) {
                    return json_refusal(error);
                }
                apr_pool_cleanup_run(rd.pool, answer, release_rows);
                continue;
            }
            if ((error = field.value().get_array().get(rows))) {
                return json_refusal(error);
            }
            /* the last rows member counts, as a JSON parser keeps it */
            apr_pool_cleanup_run(rd.pool, answer, release_rows);
            if (!grow_rows(rd.pool, answer)) {
                return shape_refusal("out of memory for the view response's rows");
            }
            for (auto row_result : rows) {
                ondemand::value row;

                if ((error = row_result.get(row))) {
                    return json_refusal(error);
                }
                if (answer->row_count == answer->row_capacity && !grow_rows(rd.pool, answer)) {
                    return shape_refusal("out of memory for the view response's rows");
                }
                refused = read_row(rd, row, n++, with_docid, answer,
                                   &answer->rows[answer->row_count++]);
                if (refused.error || refused.reason) {
                    return refused;
                }
            }
        }
        else if (name == "total_rows") {
            error = read_count(rd, field.value(), &answer->total_rows);
        }
        else if (name == "offset") {
            error = read_count(rd, field.value(), &answer->offset);
        }
        else {
            error = check_value(rd, field.value());
        }
        if (error) {
            return json_refusal(error);
        }
    }
    if (!answer->rows) {
        return shape_refusal("the view response has no rows array");
    }
    *out = answer;
    return shape_refusal(NULL);
}

/* Whether the body's value has been read to its end, with nothing after. */
error_code at_body_end(reader &rd)
{
    const char *next;

    return rd.doc->current_location().get(next) == OUT_OF_BOUNDS ? SUCCESS : TRAILING_CONTENT;
}

/* A body that is not JSON, as the reason to give. */
const char *not_json(apr_pool_t *pool, const char *what, error_code error)
{
    return apr_pstrcat(pool, "the ", what, " is not JSON: ", json_fault(error), NULL);
}

/* Starts reading text; NULL, or the simdjson error of its first pass. */
error_code start_reading(reader &rd, ondemand::parser &parser, ondemand::document &doc,
                         apr_pool_t *pool, const char *text, apr_size_t len)
{
    rd.pool = pool;
    rd.body = text;
    rd.body_len = len;
    rd.doc = &doc;
    /* JSON has no place for a NUL byte, but simdjson ends a number or a
     * word at one (its padding is zeros) */
    if (memchr(text, 0, len)) {
        return UNESCAPED_CHARS;
    }
    /* simdjson's own depth limit is for its DOM parser, not On-Demand's
     * (check_value keeps the depth) */
    SIMDJSON_TRY(parser.allocate(len < 64 ? 64 : len));
    return parser.iterate(padded_string_view(text, len, len + CP_RESPONSE_PADDING)).get(doc);
}

/* The body's value, when it is an object or an array: a scalar's document
 * is read by other means in simdjson, and no answer is one (NOT_AN_ARRAY_
 * OR_OBJECT, the shape, not a fault of JSON). */
const error_code NOT_AN_ARRAY_OR_OBJECT = INCORRECT_TYPE;

error_code root_value(ondemand::document &doc, ondemand::value &root)
{
    ondemand::json_type type;

    SIMDJSON_TRY(type_of(doc, type));
    if (type != ondemand::json_type::object && type != ondemand::json_type::array) {
        return NOT_AN_ARRAY_OR_OBJECT;
    }
    return doc.get_value().get(root);
}

} /* namespace */

extern "C" const char *cp_response_read_view(apr_pool_t *pool, const char *text,
                                             apr_size_t len, int with_docid,
                                             const cp_answer **answer)
{
    ondemand::parser parser;
    ondemand::document doc;
    ondemand::value root;
    reader rd;
    refusal refused;
    error_code error;

    if ((error = start_reading(rd, parser, doc, pool, text, len))
        || (error = root_value(doc, root))) {
        return error == NOT_AN_ARRAY_OR_OBJECT ? "the view response is not a JSON object"
                                               : not_json(pool, "view response", error);
    }
    refused = read_answer(rd, root, with_docid, answer);
    if (!refused.error && !refused.reason) {
        refused.error = at_body_end(rd);
    }
    if (refused.error) {
        return not_json(pool, "view response", refused.error);
    }
    return refused.reason;
}

namespace {

/* Reads the results of a multi-query body: up to n of them into answers,
 * counted in *k; *whole when the body has a results array of exactly n.
 * The body's first member must be "results" when cut_off (as CouchDB
 * writes it); a whole body may have it anywhere. */
refusal read_results(reader &rd, ondemand::value root, int cut_off, int n, int with_docid,
                     const cp_answer **answers, int *k, bool *whole)
{
    ondemand::object object;
    error_code error;
    bool first = true;

    ondemand::json_type root_type;

    *k = 0;
    *whole = false;
    if ((error = type_of(root, root_type))) {
        return json_refusal(error);
    }
    if (root_type != ondemand::json_type::object) {
        return json_refusal(check_value(rd, root));
    }
    if ((error = root.get_object().get(object))) {
        return json_refusal(error);
    }
    for (auto field_result : object) {
        ondemand::field field;
        std::string_view name;
        ondemand::json_type type;
        ondemand::array results;
        int read = 0;

        if ((error = member_of(std::move(field_result), field, name))) {
            return json_refusal(error);
        }
        if (cut_off && first && name != "results") {
            return json_refusal(TAPE_ERROR);
        }
        first = false;
        if (name != "results" || (error = type_of(field.value(), type))
            || type != ondemand::json_type::array) {
            if (error || (error = check_value(rd, field.value()))) {
                return json_refusal(error);
            }
            continue;
        }
        /* the last results member counts, as a JSON parser keeps it */
        *k = 0;
        if ((error = field.value().get_array().get(results))) {
            return json_refusal(error);
        }
        for (auto result : results) {
            ondemand::value value;
            refusal refused;

            if ((error = result.get(value))) {
                return json_refusal(error);
            }
            /* before a cut, CouchDB's results are objects: anything else
             * ends what it sent */
            if (cut_off && (type_of(value, type) || type != ondemand::json_type::object)) {
                return json_refusal(TAPE_ERROR);
            }
            if (read++ >= n) {
                /* more results than queries */
                if ((error = check_value(rd, value))) {
                    return json_refusal(error);
                }
                continue;
            }
            refused = read_answer(rd, value, with_docid, &answers[*k]);
            if (refused.error || refused.reason) {
                return refused;
            }
            ++*k;
        }
        *whole = read == n;
    }
    return shape_refusal(NULL);
}

/* The last double quote in text[0..len) that is not escaped, or NULL. */
const char *last_quote(const char *text, apr_size_t len)
{
    const char *at = text + len;

    while ((at = (const char *)memrchr(text, '"', (apr_size_t)(at - text))) != NULL) {
        const char *slash = at;

        while (slash > text && slash[-1] == '\\') {
            slash--;
        }
        if ((at - slash) % 2 == 0) {
            return at;
        }
    }
    return NULL;
}

/* Whether simdjson's first pass reads text[0..*len): a text cut inside a
 * string leaves it open, and is read up to that string's opening quote
 * instead (*len shortened; a few times, for strings cut in a row). */
bool first_pass_reads(ondemand::parser &parser, const char *text, apr_size_t *len)
{
    int tries;

    for (tries = 0; tries < 3; tries++) {
        ondemand::document doc;
        error_code error;
        const char *quote;

        /* the first pass reads no byte past the length it is given */
        error = parser.iterate(padded_string_view(text, *len, *len + CP_RESPONSE_PADDING))
                    .get(doc);
        if (error == SUCCESS) {
            return true;
        }
        if (error != UNCLOSED_STRING || !(quote = last_quote(text, *len))) {
            return false;
        }
        *len = (apr_size_t)(quote - text);
    }
    return false;
}

/* Where the last '}' outside a string in text[0..len) ends, or 0. */
apr_size_t after_last_brace(const char *text, apr_size_t len)
{
    apr_size_t i, end = 0;
    bool in_string = false;

    for (i = 0; i < len; i++) {
        if (in_string) {
            if (text[i] == '\\') {
                i++;
            }
            else if (text[i] == '"') {
                in_string = false;
            }
        }
        else if (text[i] == '"') {
            in_string = true;
        }
        else if (text[i] == '}') {
            end = i + 1;
        }
    }
    return end;
}

/* The longest beginning of a cut text that simdjson's first pass reads, in
 * *len: the whole, or, when it holds what is not JSON (bytes that are not
 * UTF-8, a control character), the beginning before that. A beginning of
 * one that reads reads too when it ends between characters (valid UTF-8 is
 * so), so it is found by halving. */
bool cut_text_that_reads(ondemand::parser &parser, const char *text, apr_size_t *len)
{
    apr_size_t low = 0, high = *len, best = 0, mid, tried;
    bool found = false;

    tried = *len;
    if (first_pass_reads(parser, text, &tried)) {
        *len = tried;
        return true;
    }
    /* low: a length that ends between characters; high: one that does not
     * read */
    while (low < high) {
        mid = low + (high - low + 1) / 2;
        /* back to the start of a UTF-8 character */
        while (mid > low && ((unsigned char)text[mid] & 0xc0) == 0x80) {
            mid--;
        }
        tried = mid;
        if (mid > low && first_pass_reads(parser, text, &tried)) {
            low = mid;
            best = tried;
            found = true;
        }
        else {
            high = mid == low ? low : mid - 1;
            if (mid == low) {
                break;
            }
        }
    }
    *len = best;
    return found;
}

} /* namespace */

extern "C" int cp_response_read_batch(apr_pool_t *pool, const char *text, apr_size_t len,
                                      int cut_off, int n, int with_docid,
                                      const cp_answer **answers, const char **error)
{
    ondemand::parser parser;
    ondemand::document doc;
    ondemand::value root;
    reader rd;
    refusal refused;
    error_code failure;
    apr_size_t usable;
    bool whole;
    int k;

    if (!cut_off) {
        if ((failure = start_reading(rd, parser, doc, pool, text, len))
            || (failure = root_value(doc, root))) {
            *error = failure == NOT_AN_ARRAY_OR_OBJECT
                   ? apr_psprintf(pool, "the multi-query response has no results array of "
                                  "%d results", n)
                   : not_json(pool, "multi-query response", failure);
            return -1;
        }
        refused = read_results(rd, root, 0, n, with_docid, answers, &k, &whole);
        if (!refused.error && !refused.reason) {
            refused.error = at_body_end(rd);
        }
        if (refused.error) {
            *error = not_json(pool, "multi-query response", refused.error);
            return -1;
        }
        if (refused.reason) {
            *error = apr_psprintf(pool, "result %d: %s", k, refused.reason);
            return -1;
        }
        if (!whole) {
            *error = apr_psprintf(pool, "the multi-query response has no results array of "
                                  "%d results", n);
            return -1;
        }
        return n;
    }
    /* Cut off: the results before the cut, whatever stops the reading after
     * them. simdjson's first pass reads all of a text or nothing, so the
     * reading starts from the longest beginning of it that the first pass
     * reads (cut_text_that_reads); a copy of that, zeros after it. */
    usable = len;
    if (!cut_text_that_reads(parser, text, &usable)) {
        return 0;
    }
    /* What follows the last object closed before the cut completes
     * nothing (a result ends with its '}'): left out, since simdjson 4
     * refuses an object document whose last token is not a '}'
     * (INCOMPLETE_ARRAY_OR_OBJECT, check_root_object) where 3.0 reads up
     * to the cut. */
    usable = after_last_brace(text, usable);
    if (usable < len) {
        text = cp_response_padded(pool, text, usable);
    }
    if ((failure = start_reading(rd, parser, doc, pool, text, usable))
        || (failure = root_value(doc, root))) {
        return 0;
    }
    refused = read_results(rd, root, 1, n, with_docid, answers, &k, &whole);
    if (refused.reason) {
        *error = apr_psprintf(pool, "result %d: %s", k, refused.reason);
        return -1;
    }
    return k;
}

extern "C" char *cp_response_padded(apr_pool_t *pool, const char *text, apr_size_t len)
{
    char *copy = (char *)apr_palloc(pool, len + CP_RESPONSE_PADDING);

    memcpy(copy, text, len);
    memset(copy + len, 0, CP_RESPONSE_PADDING);
    return copy;
}

/* --- a row's values ---------------------------------------------------- */

namespace {

/* The parser that reads the answer's values again, one for all of them (a
 * template reads three fields a row): made at its first use, deleted with
 * the answer's pool. */
struct value_parser {
    ondemand::parser parser;
};

apr_status_t delete_value_parser(void *data)
{
    delete static_cast<value_parser *>(data);
    return APR_SUCCESS;
}

ondemand::parser *parser_of(const cp_answer *answer)
{
    cp_answer *mutable_answer = const_cast<cp_answer *>(answer);

    if (!mutable_answer->value_parser) {
        value_parser *made = new (std::nothrow) value_parser;

        if (!made) {
            return NULL;
        }
        apr_pool_cleanup_register(mutable_answer->pool, made, delete_value_parser,
                                  apr_pool_cleanup_null);
        mutable_answer->value_parser = made;
    }
    return &static_cast<value_parser *>(mutable_answer->value_parser)->parser;
}

/* The member name of members, the last one of that name. */
cp_span member_named(const cp_members *members, const char *name)
{
    apr_size_t len = strlen(name);
    cp_span found = { "", 0 };
    int i;

    for (i = 0; i < members->count; i++) {
        if (members->items[i].name_len == len && !memcmp(members->items[i].name, name, len)) {
            found = members->items[i].value;
        }
    }
    return found;
}

/* The members of the row's value or doc, when at is that object. */
const cp_members *recorded(const cp_row *row, cp_span at)
{
    if (row->doc_members && at.text == row->doc.text) {
        return row->doc_members;
    }
    if (row->value_members && at.text == row->value.text) {
        return row->value_members;
    }
    return NULL;
}

/* The bytes of a value just read past (a container by raw_json, a scalar
 * by its token, without the white space after). */
cp_span token_span(std::string_view token)
{
    cp_span span = { token.data(), token.size() };

    while (span.len > 0 && is_space(span.text[span.len - 1])) {
        span.len--;
    }
    return span;
}

/* Reads past a value of a text already checked, and sets *span to its
 * bytes: a container's by raw_json, a scalar's by its token. */
error_code read_past(ondemand::value &v, cp_span *span)
{
    ondemand::json_type type;
    ondemand::object object;
    ondemand::array array;
    std::string_view raw;

    SIMDJSON_TRY(type_of(v, type));
    if (type == ondemand::json_type::object) {
        SIMDJSON_TRY(v.get_object().get(object));
        SIMDJSON_TRY(object.raw_json().get(raw));
    }
    else if (type == ondemand::json_type::array) {
        SIMDJSON_TRY(v.get_array().get(array));
        SIMDJSON_TRY(array.raw_json().get(raw));
    }
    else {
        raw = v.raw_json_token();
    }
    *span = token_span(raw);
    return SUCCESS;
}

/* Reads at, a value of the row's body already checked, with a parser of
 * its own: the member name of an object, or the element index of an array. */
cp_span find_in(const cp_row *row, cp_span at, const char *name, apr_size_t index)
{
    const char *end = row->answer->body + row->answer->body_len + CP_RESPONSE_PADDING;
    ondemand::parser *parser = parser_of(row->answer);
    ondemand::document doc;
    ondemand::value value;
    ondemand::json_type type;
    cp_span found = { "", 0 };

    if (!at.len || !parser
        || parser->iterate(padded_string_view(at.text, at.len,
                                              (size_t)(end - at.text))).get(doc)
        || doc.get_value().get(value) || type_of(value, type)) {
        return found;
    }
    if (name && type == ondemand::json_type::object) {
        ondemand::object object;

        if (value.get_object().get(object)) {
            return found;
        }
        for (auto field_result : object) {
            ondemand::field field;
            std::string_view key;
            cp_span member;

            /* every member is read past, so that the last of a name counts */
            if (member_of(std::move(field_result), field, key)
                || read_past(field.value(), &member)) {
                return found;
            }
            if (key == std::string_view(name)) {
                found = member;
            }
        }
        return found;
    }
    if (!name && type == ondemand::json_type::array) {
        ondemand::array array;
        apr_size_t i = 0;

        if (value.get_array().get(array)) {
            return found;
        }
        for (auto element_result : array) {
            ondemand::value element;

            if (element_result.get(element)) {
                return found;
            }
            if (i++ == index) {
                read_past(element, &found);
                return found;
            }
        }
    }
    return found;
}

} /* namespace */

extern "C" cp_span cp_row_member(const cp_row *row, const char *name)
{
    static const cp_span none = { "", 0 };

    return !strcmp(name, "id") ? row->id_text : !strcmp(name, "key") ? row->key_text
         : !strcmp(name, "value") ? row->value : !strcmp(name, "doc") ? row->doc : none;
}

extern "C" const json_t *cp_row_key(const cp_row *row)
{
    if (!row->key && row->key_text.len) {
        /* read and checked with the body; the first use decodes it */
        const_cast<cp_row *>(row)->key = cp_row_decode(row->answer->pool, row, row->key_text);
    }
    return row->key;
}

extern "C" cp_span cp_row_find(const cp_row *row, cp_span at, const char *name)
{
    const cp_members *members = recorded(row, at);

    return members ? member_named(members, name) : find_in(row, at, name, 0);
}

extern "C" cp_span cp_row_element(const cp_row *row, cp_span at, apr_size_t index)
{
    return find_in(row, at, NULL, index);
}

extern "C" const json_t *cp_row_decode(apr_pool_t *pool, const cp_row *row, cp_span at)
{
    const char *end = row->answer->body + row->answer->body_len + CP_RESPONSE_PADDING;
    ondemand::parser *parser = parser_of(row->answer);
    ondemand::document doc;
    json_t *value;

    /* at is a value of the body, read and checked already */
    if (!at.len || !parser
        || parser->iterate(padded_string_view(at.text, at.len,
                                              (size_t)(end - at.text))).get(doc)
        || key_value(pool, doc, 0, &value)) {
        return NULL;
    }
    return cp_json_pool_own(pool, value);
}

extern "C" cp_span cp_row_project(apr_pool_t *pool, const cp_row *row,
                                  const apr_array_header_t *names)
{
    const cp_members *members = row->doc_members;
    cp_span span = { "", 0 };
    apr_array_header_t *parts;
    apr_size_t size = 2;
    char *out, *o;
    int i, m;

    if (!members) {
        return span;
    }
    parts = apr_array_make(pool, names->nelts, sizeof(const cp_member *));
    for (i = 0; i < names->nelts; i++) {
        const char *name = APR_ARRAY_IDX(names, i, const char *);
        apr_size_t len = strlen(name);
        const cp_member *last = NULL;

        for (m = 0; m < members->count; m++) {
            if (members->items[m].name_len == len
                && !memcmp(members->items[m].name, name, len)) {
                last = &members->items[m];
            }
        }
        if (last) {
            /* the member's name as sent, its colon, its value */
            APR_ARRAY_PUSH(parts, const cp_member *) = last;
            size += (apr_size_t)(last->value.text + last->value.len - last->from) + 1;
        }
    }
    out = o = (char *)apr_palloc(pool, size);
    *o++ = '{';
    for (i = 0; i < parts->nelts; i++) {
        const cp_member *member = APR_ARRAY_IDX(parts, i, const cp_member *);
        apr_size_t bytes = (apr_size_t)(member->value.text + member->value.len - member->from);

        if (i > 0) {
            *o++ = ',';
        }
        memcpy(o, member->from, bytes);
        o += bytes;
    }
    *o++ = '}';
    span.text = out;
    span.len = (apr_size_t)(o - out);
    return span;
}
