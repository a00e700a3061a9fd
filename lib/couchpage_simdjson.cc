/* SPDX-License-Identifier: Apache-2.0 */
/*
 * couchpage_simdjson.cc: simdjson's On-Demand parser walked value by value
 * for C (see couchpage_simdjson.h). C++ only because simdjson is; nothing
 * here throws (built with -fno-exceptions: simdjson reports errors as
 * codes), and nothing here knows what an answer is. Part of the httpd-free
 * core: no httpd header, no request_rec.
 */
#include "couchpage_simdjson.h"

/* simdjson turns on its development checks in a build without optimisation
 * (no __OPTIMIZE__: -O0, Debian's noopt), and they assert (abort the child)
 * on a document nested 1,024 levels deep, which CouchDB stores and the
 * reader accepts (the walk keeps its own depth). Off at every level. */
#define SIMDJSON_DEVELOPMENT_CHECKS 0
#include <simdjson.h>

#include <memory>
#include <new>
#include <string.h>
#include <string_view>
#include <vector>

namespace od = simdjson::ondemand;
using simdjson::error_code;

static_assert(CP_SJ_PADDING >= simdjson::SIMDJSON_PADDING,
              "a body is followed by the padding simdjson reads");

namespace {

/* Whether the thread is inside a walk: a visitor that reads JSON again
 * (cp_json_load) must not take the parser, or the open containers, of the
 * walk that called it. */
thread_local bool walking;

/* The thread's parser, kept between reads up to CP_SJ_KEEP bytes of body
 * (let_go); freed when the thread ends. */
thread_local std::unique_ptr<od::parser> kept;

/* The parser for a read: the thread's, or inside a walk one of its own
 * (held by own, freed with it). */
od::parser *parser_for(std::unique_ptr<od::parser> &own)
{
    std::unique_ptr<od::parser> &held = walking ? own : kept;

    if (!held) {
        held.reset(new (std::nothrow) od::parser());
    }
    return held.get();
}

void let_go(void)
{
    if (!walking && kept && kept->capacity() > CP_SJ_KEEP) {
        kept.reset();
    }
}

cp_sj_status status_of(error_code error)
{
    switch (error) {
    case simdjson::SUCCESS:
        return CP_SJ_OK;
    case simdjson::UTF8_ERROR:
        return CP_SJ_UTF8;
    case simdjson::UNESCAPED_CHARS:
        return CP_SJ_CONTROL;
    case simdjson::UNCLOSED_STRING:
        return CP_SJ_UNCLOSED_STRING;
    case simdjson::STRING_ERROR:
        return CP_SJ_ESCAPE;
    case simdjson::NUMBER_ERROR:
        return CP_SJ_NUMBER;
    case simdjson::T_ATOM_ERROR:
    case simdjson::F_ATOM_ERROR:
    case simdjson::N_ATOM_ERROR:
        return CP_SJ_WORD;
    case simdjson::DEPTH_ERROR:
        return CP_SJ_DEPTH;
    case simdjson::TRAILING_CONTENT:
        return CP_SJ_TRAILING;
    case simdjson::EMPTY:
        return CP_SJ_EMPTY;
    case simdjson::MEMALLOC:
    case simdjson::CAPACITY:
        return CP_SJ_MEMORY;
    default:
        return CP_SJ_MALFORMED;
    }
}

#define TRY(expr)                                \
    do {                                         \
        error_code try_error_ = (expr);          \
        if (try_error_) {                        \
            return status_of(try_error_);        \
        }                                        \
    } while (0)

bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* The kind of v. A token that is no JSON value is an error: simdjson 4
 * reports one (NaN, a bare word) as json_type::unknown, and no error. */
template <typename V>
error_code kind_of(V &v, od::json_type &type)
{
    error_code error = v.type().get(type);

    if (error) {
        return error;
    }
    switch (type) {
    case od::json_type::object:
    case od::json_type::array:
    case od::json_type::string:
    case od::json_type::number:
    case od::json_type::boolean:
    case od::json_type::null:
        return simdjson::SUCCESS;
    default:
        return simdjson::TAPE_ERROR;
    }
}

/* A container being walked: where it is, whether its first member or
 * element has been told, and where its bytes begin. */
struct frame {
    od::object_iterator object;
    od::array_iterator array;
    bool is_object;
    bool entered;
    const char *start;
};

/* The containers open, kept by the thread from walk to walk while they are
 * few (a deep body's are freed after it). */
thread_local std::vector<frame> open_frames;

struct walk {
    od::document doc;
    const char *body;
    size_t len;
    size_t max_depth;
    bool any_root; /* a scalar root is told, not refused */
    cp_sj_visit visit;
    void *baton;
    std::vector<frame> *open;
};

/* Where the value just read ends: before the white space ahead of the next
 * token, or at the body's end. */
const char *end_of_read(walk &w, const char *start)
{
    const char *next;

    if (w.doc.current_location().get(next)) {
        next = w.body + w.len;
    }
    while (next > start && is_space(next[-1])) {
        next--;
    }
    return next;
}

/* Opens the container v (pushed on w.open) for tell. */
cp_sj_status open_container(walk &w, od::value v, bool is_object, cp_sj_value &told)
{
    frame opened{};

    if (w.open->size() >= w.max_depth) {
        return CP_SJ_DEPTH;
    }
    opened.is_object = is_object;
    opened.start = told.text;
    if (is_object) {
        od::object object;

        TRY(v.get_object().get(object));
        TRY(object.begin().get(opened.object));
    }
    else {
        od::array array;

        TRY(v.get_array().get(array));
        TRY(array.begin().get(opened.array));
    }
    w.open->push_back(opened);
    told.kind = is_object ? CP_SJ_OBJECT : CP_SJ_ARRAY;
    told.len = 0;
    told.number_refused = 0;
    return CP_SJ_OK;
}

/* Whether the value's bytes (told's span) are the word. */
bool is_word(const cp_sj_value &told, const char *word)
{
    size_t len = strlen(word);

    return told.len == len && memcmp(told.text, word, len) == 0;
}

/* Reads the scalar v (a value, or a scalar document) of the given type
 * into told: its kind, and its decoded string, truth or number. */
template <typename V>
cp_sj_status read_scalar(V &v, od::json_type type, cp_sj_value &told)
{
    told.number_refused = 0;
    switch (type) {
    case od::json_type::string: {
        std::string_view text;

        TRY(v.get_string().get(text));
        told.kind = CP_SJ_STRING;
        told.string = text.data();
        told.string_len = text.size();
        return CP_SJ_OK;
    }
    case od::json_type::number: {
        /* read to check it (one left unread is passed over by its
         * container); its value is read from its bytes (cp_json_number:
         * simdjson 3.0.1 misreads some of more than 19 digits, silently) */
        double number;
        error_code error = v.get_double().get(number);

        if (error && error != simdjson::NUMBER_ERROR) {
            return status_of(error);
        }
        told.kind = CP_SJ_NUMBER_VALUE;
        told.number_refused = error == simdjson::NUMBER_ERROR;
        return CP_SJ_OK;
    }
    case od::json_type::boolean:
    case od::json_type::null:
        /* the bytes decide: simdjson 3.0.1 at the root takes "falsee" as
         * false and refuses "null " and "false   " (fuzz_simdjson's long
         * runs); a value left unread is passed over by its container */
        told.kind = type == od::json_type::null ? CP_SJ_NULL
                    : told.len && told.text[0] == 't' ? CP_SJ_TRUE : CP_SJ_FALSE;
        return is_word(told, told.kind == CP_SJ_NULL ? "null"
                             : told.kind == CP_SJ_TRUE ? "true" : "false")
                   ? CP_SJ_OK : CP_SJ_WORD;
    default:
        return CP_SJ_MALFORMED;
    }
}

/* Where a value's bytes are: token, the raw token simdjson gives (white
 * space after it included), trimmed. */
void place_token(cp_sj_value &told, std::string_view token)
{
    told.text = token.data();
    while (!token.empty() && is_space(token.back())) {
        token.remove_suffix(1);
    }
    told.len = token.size();
}

/* Reads the value v (a scalar, or the opening of a container, which is
 * pushed) and tells the visitor; *told has the name already. */
cp_sj_status tell(walk &w, od::value v, cp_sj_value &told)
{
    od::json_type type;
    cp_sj_status status;

    TRY(kind_of(v, type));
    told.depth = w.open->size();
    place_token(told, v.raw_json_token());
    status = type == od::json_type::object || type == od::json_type::array
                 ? open_container(w, v, type == od::json_type::object, told)
                 : read_scalar(v, type, told);
    if (status) {
        return status;
    }
    return w.visit(w.baton, &told) ? CP_SJ_STOPPED : CP_SJ_OK;
}

/* Tells the visitor of a scalar root, which must be all of the body but
 * white space (simdjson checks it only for some: not strings, nor numbers it refuses). */
cp_sj_status tell_root_scalar(walk &w, od::json_type type)
{
    cp_sj_value told{};
    std::string_view token;
    cp_sj_status status;
    const char *after;

    TRY(w.doc.raw_json_token().get(token));
    place_token(told, token);
    if ((status = read_scalar(w.doc, type, told))) {
        return status;
    }
    for (after = told.text + told.len; after < w.body + w.len; after++) {
        if (!is_space(*after)) {
            return CP_SJ_TRAILING;
        }
    }
    return w.visit(w.baton, &told) ? CP_SJ_STOPPED : CP_SJ_OK;
}

/* The next member or element of the innermost open container into *next
 * (its name in told), or *next false when it closes (told to the visitor,
 * and popped). */
cp_sj_status step(walk &w, od::value &value, bool &next, cp_sj_value &told)
{
    frame &top = w.open->back();

    /* an iterator's != tells only whether its container is still open */
    if (top.is_object) {
        od::field field;
        std::string_view name;

        if (top.entered) {
            ++top.object;
        }
        top.entered = true;
        if (top.object != top.object) {
            TRY((*top.object).get(field));
            /* the opening quote, before decoding consumes the key */
            told.name_quote = (const char *)field.key().raw() - 1;
            TRY(field.unescaped_key().get(name));
            told.name = name.data();
            told.name_len = name.size();
            value = field.value();
            next = true;
            return CP_SJ_OK;
        }
    }
    else {
        if (top.entered) {
            ++top.array;
        }
        top.entered = true;
        if (top.array != top.array) {
            TRY((*top.array).get(value));
            told.name = NULL;
            told.name_len = 0;
            told.name_quote = NULL;
            next = true;
            return CP_SJ_OK;
        }
    }
    next = false;
    told.kind = CP_SJ_CLOSE;
    told.depth = w.open->size() - 1;
    told.name = NULL;
    told.name_len = 0;
    told.name_quote = NULL;
    told.text = top.start;
    told.len = (size_t)(end_of_read(w, top.start) - top.start);
    w.open->pop_back();
    return w.visit(w.baton, &told) ? CP_SJ_STOPPED : CP_SJ_OK;
}

/* Walks the document's root, a container, to its end. Containers open
 * inside it are kept in w.open, not on the stack: a body may nest deeply. */
cp_sj_status walk_root(walk &w)
{
    cp_sj_value told{};
    od::json_type type;
    od::value value;
    const char *next;
    cp_sj_status status;

    TRY(kind_of(w.doc, type));
    if (type != od::json_type::object && type != od::json_type::array) {
        return w.any_root ? tell_root_scalar(w, type) : CP_SJ_SCALAR_ROOT;
    }
    TRY(w.doc.get_value().get(value));
    if ((status = tell(w, value, told))) {
        return status;
    }
    while (!w.open->empty()) {
        bool have;

        if ((status = step(w, value, have, told))) {
            return status;
        }
        if (have && (status = tell(w, value, told))) {
            return status;
        }
    }
    return w.doc.current_location().get(next) == simdjson::OUT_OF_BOUNDS ? CP_SJ_OK
                                                                           : CP_SJ_TRAILING;
}

/* Walks text[0..len) for cp_sj_walk and cp_sj_walk_value. */
cp_sj_status walk_body(const char *text, size_t len, size_t max_depth, bool any_root,
                       cp_sj_visit visit, void *baton)
{
    std::unique_ptr<od::parser> own;
    std::vector<frame> own_frames;
    od::parser *parser = parser_for(own);
    bool nested = walking;
    walk w;
    cp_sj_status status;

    /* JSON has no place for a NUL byte, but simdjson ends a number or a
     * word at one (its padding is zeros) */
    if (memchr(text, 0, len)) {
        return CP_SJ_CONTROL;
    }
    if (!parser) {
        return CP_SJ_MEMORY;
    }
    w.body = text;
    w.len = len;
    w.max_depth = max_depth;
    w.any_root = any_root;
    w.visit = visit;
    w.baton = baton;
    w.open = nested ? &own_frames : &open_frames;
    /* simdjson's own depth limit is its DOM parser's, not On-Demand's (the
     * walk keeps the depth) */
    if (parser->capacity() < len && parser->allocate(len < 64 ? 64 : len)) {
        let_go();
        return CP_SJ_MEMORY;
    }
    status = status_of(
        parser->iterate(simdjson::padded_string_view(text, len, len + CP_SJ_PADDING)).get(w.doc));
    if (status == CP_SJ_OK) {
        walking = true;
        status = walk_root(w);
        walking = nested;
    }
    w.open->clear();
    if (w.open->capacity() > 64) {
        w.open->shrink_to_fit();
    }
    w.doc = od::document();
    let_go();
    return status;
}

} /* namespace */

extern "C" cp_sj_status cp_sj_walk(const char *text, size_t len, size_t max_depth,
                                   cp_sj_visit visit, void *baton)
{
    return walk_body(text, len, max_depth, false, visit, baton);
}

extern "C" cp_sj_status cp_sj_walk_value(const char *text, size_t len, size_t max_depth,
                                         cp_sj_visit visit, void *baton)
{
    return walk_body(text, len, max_depth, true, visit, baton);
}

extern "C" cp_sj_status cp_sj_first_pass(const char *text, size_t len)
{
    std::unique_ptr<od::parser> own;
    od::parser *parser = parser_for(own);
    od::document doc;
    cp_sj_status status;

    if (!parser) {
        return CP_SJ_MEMORY;
    }
    /* the first pass reads no byte past the length it is given */
    status = status_of(
        parser->iterate(simdjson::padded_string_view(text, len, len + CP_SJ_PADDING)).get(doc));
    doc = od::document();
    let_go();
    return status;
}

extern "C" const char *cp_sj_fault(cp_sj_status status)
{
    switch (status) {
    case CP_SJ_UTF8:
        return "a string is not UTF-8";
    case CP_SJ_CONTROL:
        return "it holds a NUL byte, or a string a control character";
    case CP_SJ_UNCLOSED_STRING:
        return "a string is not closed";
    case CP_SJ_ESCAPE:
        return "a string has a malformed escape or surrogate";
    case CP_SJ_NUMBER:
        return "a number is malformed or beyond a double's range";
    case CP_SJ_WORD:
        return "a word is not true, false or null";
    case CP_SJ_DEPTH:
        return "values are nested too deeply";
    case CP_SJ_TRAILING:
        return "there is more after its value";
    case CP_SJ_EMPTY:
        return "it is empty";
    case CP_SJ_MEMORY:
        return "there is no memory to read it";
    case CP_SJ_OK:
    case CP_SJ_MALFORMED:
    case CP_SJ_SCALAR_ROOT:
    case CP_SJ_STOPPED:
    default:
        return "a value, or a separator between values, is malformed or missing";
    }
}
