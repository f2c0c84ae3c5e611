/* The native fast path of OTLP/JSON trace ingest: see coordbench/otlp/native.py.
 *
 * One pass over an ExportTraceServiceRequest written as OTLP/JSON checks the JSON syntax of the
 * whole body and the OTLP fields of every span, and builds per span the stored tuple
 * (trace_id, span_id, parent_span_id, codec, payload, envelope) with the span's JSON text sliced
 * out as the sender wrote it. The full span is built from that text when someone reads it, by
 * the same Python code that decodes OTLP/JSON without this scanner.
 *
 * It is strict, at two levels. Whatever about the body it is not sure Python's json module and
 * the Python decoder would read the same way (malformed JSON, a byte-order mark, invalid UTF-8,
 * a key with escapes where the structure is decided, a structural field sent twice, numbers too
 * long for Python's int, nesting deeper than MAX_NESTING) makes scan() return None: the caller
 * decodes the body in Python, which either takes it or reports the exact error. Whatever about
 * one span it is not sure the Python decoder would accept as it stands (any field of an
 * unexpected type or form, all-zero ids, an integer as a string beyond 19 digits, a lone
 * surrogate escape, a field sent twice, attribute values nested deeper than MAX_VALUE_DEPTH)
 * marks that span: its tuple carries None ids, and the caller decodes that span in Python, which
 * stores it or rejects it with the reason. So a span this scanner takes is one the Python
 * decoder takes too, and reads identically from the same text.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "_spans.h"

#define MAX_NESTING 256     /* containers inside each other, anywhere in the body */
#define MAX_VALUE_DEPTH 64  /* nested arrayValue/kvlistValue levels (coordbench.otlp.model.MAX_VALUE_DEPTH) */
#define MAX_NUMBER 300      /* characters of a number literal: far below Python's int digit limit */

/* Results: OK, the body goes to the Python decoder (WHOLE), or a Python error is set (ERROR). */
#define WHOLE 0 /* beside _spans.h's OK and ERROR */

typedef struct {
    const uint8_t *p, *end;
    int nesting;
    int bad; /* the current span must be decoded in Python */
} Cur;

typedef struct {
    const uint8_t *start, *end; /* the string's bytes between its quotes, as written */
    int escaped;                /* it contains a backslash escape */
} Str;

static inline void skip_ws(Cur *c) {
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\n' || *c->p == '\r' || *c->p == '\t'))
        c->p++;
}

static inline int hex_digit(uint8_t ch) {
    if (ch >= '0' && ch <= '9') return ch - '0';
    if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
    return -1;
}

static int read_u_escape(const uint8_t *p, const uint8_t *end, unsigned *out) {
    if (end - p < 4) return 0;
    unsigned value = 0;
    for (int i = 0; i < 4; i++) {
        int d = hex_digit(p[i]);
        if (d < 0) return 0;
        value = value * 16 + (unsigned)d;
    }
    *out = value;
    return 1;
}

/* One UTF-8 sequence starting at a byte >= 0x80: its length, or 0 if it is not strict UTF-8
 * (overlong forms, surrogates, beyond U+10FFFF). Python's json reads UTF-8 with surrogatepass,
 * so an encoded surrogate is not an error there: such a body goes to Python as a whole. */
static inline int utf8_sequence(const uint8_t *s, const uint8_t *end) {
    uint8_t c = s[0];
    if (c >= 0xC2 && c <= 0xDF) return end - s >= 2 && (s[1] & 0xC0) == 0x80 ? 2 : 0;
    if (c >= 0xE0 && c <= 0xEF) {
        if (end - s < 3 || (s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80) return 0;
        if ((c == 0xE0 && s[1] < 0xA0) || (c == 0xED && s[1] >= 0xA0)) return 0;
        return 3;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        if (end - s < 4 || (s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80 || (s[3] & 0xC0) != 0x80) return 0;
        if ((c == 0xF0 && s[1] < 0x90) || (c == 0xF4 && s[1] >= 0x90)) return 0;
        return 4;
    }
    return 0;
}

/* A string (the cursor on its opening quote). A lone surrogate escape marks the span: Python
 * decodes it to a character UTF-8 cannot hold, which coordbench.jsontext mends. */
static int scan_string(Cur *c, Str *out) {
    const uint8_t *p = c->p + 1, *end = c->end;
    out->start = p;
    out->escaped = 0;
    while (p < end) {
        uint8_t ch = *p;
        if (ch == '"') {
            out->end = p;
            c->p = p + 1;
            return OK;
        }
        if (ch < 0x20) return WHOLE; /* a raw control character: json.loads refuses it */
        if (ch == '\\') {
            out->escaped = 1;
            if (end - p < 2) return WHOLE;
            uint8_t kind = p[1];
            if (kind == 'u') {
                unsigned unit;
                if (!read_u_escape(p + 2, end, &unit)) return WHOLE;
                p += 6;
                if (unit >= 0xD800 && unit <= 0xDBFF) {
                    unsigned low;
                    if (end - p >= 6 && p[0] == '\\' && p[1] == 'u' && read_u_escape(p + 2, end, &low) &&
                        low >= 0xDC00 && low <= 0xDFFF) {
                        p += 6;
                    } else {
                        c->bad = 1;
                    }
                } else if (unit >= 0xDC00 && unit <= 0xDFFF) {
                    c->bad = 1;
                }
            } else if (kind == '"' || kind == '\\' || kind == '/' || kind == 'b' || kind == 'f' || kind == 'n' ||
                       kind == 'r' || kind == 't') {
                p += 2;
            } else {
                return WHOLE;
            }
        } else if (ch < 0x80) {
            p++;
        } else {
            int n = utf8_sequence(p, end);
            if (!n) return WHOLE;
            p += n;
        }
    }
    return WHOLE;
}

typedef struct {
    int integer;          /* no fraction and no exponent */
    int negative;
    int digits;           /* digits of the integer part */
    uint64_t value;       /* the integer part, when digits <= 19 */
} Num;

static int scan_number(Cur *c, Num *out) {
    const uint8_t *p = c->p, *end = c->end, *start = c->p;
    out->negative = 0;
    out->integer = 1;
    out->digits = 0;
    out->value = 0;
    if (p < end && *p == '-') {
        out->negative = 1;
        p++;
    }
    if (p >= end || *p < '0' || *p > '9') return WHOLE;
    if (*p == '0') {
        out->digits = 1;
        p++;
    } else {
        while (p < end && *p >= '0' && *p <= '9') {
            if (out->digits < 19) out->value = out->value * 10 + (uint64_t)(*p - '0');
            out->digits++;
            p++;
        }
    }
    if (p < end && *p == '.') {
        out->integer = 0;
        p++;
        if (p >= end || *p < '0' || *p > '9') return WHOLE;
        while (p < end && *p >= '0' && *p <= '9')
            p++;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        out->integer = 0;
        p++;
        if (p < end && (*p == '+' || *p == '-')) p++;
        if (p >= end || *p < '0' || *p > '9') return WHOLE;
        while (p < end && *p >= '0' && *p <= '9')
            p++;
    }
    if (p - start > MAX_NUMBER) return WHOLE;
    c->p = p;
    return OK;
}

static int literal(Cur *c, const char *word, size_t n) {
    if ((size_t)(c->end - c->p) < n || memcmp(c->p, word, n) != 0) return WHOLE;
    c->p += n;
    return OK;
}

/* Enter a container (the cursor on '{' or '['); *empty is set when it closes at once. */
static int open_container(Cur *c, uint8_t close, int *empty) {
    if (++c->nesting > MAX_NESTING) return WHOLE;
    c->p++;
    skip_ws(c);
    if (c->p < c->end && *c->p == close) {
        c->p++;
        c->nesting--;
        *empty = 1;
    } else {
        *empty = 0;
    }
    return OK;
}

/* After a member or element: 1 and the cursor on the next one, 0 at the container's end. */
static int next_item(Cur *c, uint8_t close, int *more) {
    skip_ws(c);
    if (c->p >= c->end) return WHOLE;
    if (*c->p == ',') {
        c->p++;
        skip_ws(c);
        *more = 1;
        return OK;
    }
    if (*c->p == close) {
        c->p++;
        c->nesting--;
        *more = 0;
        return OK;
    }
    return WHOLE;
}

/* An object's key and its colon (the cursor on the key's quote); the cursor ends on the value. */
static int read_key(Cur *c, Str *key) {
    if (c->p >= c->end || *c->p != '"') return WHOLE;
    if (scan_string(c, key) != OK) return WHOLE;
    if (key->escaped) c->bad = 1; /* it may spell a field this scanner reads: Python decides */
    skip_ws(c);
    if (c->p >= c->end || *c->p != ':') return WHOLE;
    c->p++;
    skip_ws(c);
    return c->p < c->end ? OK : WHOLE;
}

static inline int key_is(const Str *key, const char *name, size_t n) {
    return !key->escaped && (size_t)(key->end - key->start) == n && memcmp(key->start, name, n) == 0;
}
#define KEY(k, literal_name) key_is((k), literal_name, sizeof(literal_name) - 1)

static int skip_value(Cur *c);

static int skip_container(Cur *c, uint8_t close) {
    int empty, more = 1;
    if (open_container(c, close, &empty) != OK) return WHOLE;
    if (empty) return OK;
    while (more) {
        if (close == '}') {
            Str key;
            if (read_key(c, &key) != OK) return WHOLE;
        }
        if (skip_value(c) != OK || next_item(c, close, &more) != OK) return WHOLE;
    }
    return OK;
}

/* Any JSON value (the cursor on its first character), checked and passed over. */
static int skip_value(Cur *c) {
    if (c->p >= c->end) return WHOLE;
    Str s;
    Num n;
    switch (*c->p) {
    case '"': return scan_string(c, &s);
    case '{': return skip_container(c, '}');
    case '[': return skip_container(c, ']');
    case 't': return literal(c, "true", 4);
    case 'f': return literal(c, "false", 5);
    case 'n': return literal(c, "null", 4);
    default: return scan_number(c, &n);
    }
}

static inline int at_null(Cur *c) {
    if (c->p < c->end && *c->p == 'n') return literal(c, "null", 4) == OK ? 1 : -1;
    return 0;
}

/* A string value: its Str; a value of another type is passed over and marks the span. */
static int string_value(Cur *c, Str *out, int *is_string) {
    *is_string = c->p < c->end && *c->p == '"';
    if (*is_string) return scan_string(c, out);
    c->bad = 1;
    return skip_value(c);
}

/* An unsigned 64-bit integer field (times): null, a JSON integer or a string of digits, up
 * to 19 digits (so always within uint64). Anything else marks the span. */
static int uint64_field(Cur *c) {
    if (c->p < c->end && *c->p == '"') {
        Str s;
        if (scan_string(c, &s) != OK) return WHOLE;
        size_t n = (size_t)(s.end - s.start);
        if (s.escaped || n < 1 || n > 19) {
            c->bad = 1;
            return OK;
        }
        for (const uint8_t *q = s.start; q < s.end; q++)
            if (*q < '0' || *q > '9') c->bad = 1;
        return OK;
    }
    if (c->p < c->end && (*c->p == '-' || (*c->p >= '0' && *c->p <= '9'))) {
        Num n;
        if (scan_number(c, &n) != OK) return WHOLE;
        if (!n.integer || n.negative || n.digits > 19) c->bad = 1;
        return OK;
    }
    int null = at_null(c);
    if (null < 0) return WHOLE;
    if (!null) {
        c->bad = 1;
        return skip_value(c);
    }
    return OK;
}

/* A signed 64-bit integer (intValue): a JSON integer or a string, optionally signed, up to 18
 * digits (so always within int64). */
static int int64_field(Cur *c) {
    if (c->p < c->end && *c->p == '"') {
        Str s;
        if (scan_string(c, &s) != OK) return WHOLE;
        const uint8_t *q = s.start;
        if (!s.escaped && q < s.end && *q == '-') q++;
        size_t n = (size_t)(s.end - q);
        if (s.escaped || n < 1 || n > 18) {
            c->bad = 1;
            return OK;
        }
        for (; q < s.end; q++)
            if (*q < '0' || *q > '9') c->bad = 1;
        return OK;
    }
    if (c->p < c->end && (*c->p == '-' || (*c->p >= '0' && *c->p <= '9'))) {
        Num n;
        if (scan_number(c, &n) != OK) return WHOLE;
        if (!n.integer || n.digits > 18) c->bad = 1;
        return OK;
    }
    c->bad = 1;
    return skip_value(c);
}

/* An enum (kind, status code): null, an int32, or one of its protobuf names. */
static int enum_field(Cur *c, const char *const *names, int count) {
    if (c->p < c->end && *c->p == '"') {
        Str s;
        if (scan_string(c, &s) != OK) return WHOLE;
        size_t n = (size_t)(s.end - s.start);
        int found = 0;
        for (int i = 0; i < count && !found; i++)
            found = !s.escaped && strlen(names[i]) == n && memcmp(names[i], s.start, n) == 0;
        if (!found) c->bad = 1;
        return OK;
    }
    if (c->p < c->end && (*c->p == '-' || (*c->p >= '0' && *c->p <= '9'))) {
        Num n;
        if (scan_number(c, &n) != OK) return WHOLE;
        if (!n.integer || n.digits > 10 || n.value > (n.negative ? 2147483648ULL : 2147483647ULL)) c->bad = 1;
        return OK;
    }
    int null = at_null(c);
    if (null < 0) return WHOLE;
    if (!null) {
        c->bad = 1;
        return skip_value(c);
    }
    return OK;
}

/* A hex id of `width` bytes into `out`; `optional` takes "" and null as absent (*size 0). */
static int id_field(Cur *c, uint8_t *out, size_t width, int optional, size_t *size) {
    *size = 0;
    if (optional) {
        int null = at_null(c);
        if (null < 0) return WHOLE;
        if (null) return OK;
    }
    Str s;
    int is_string;
    if (string_value(c, &s, &is_string) != OK) return WHOLE;
    if (!is_string) return OK;
    size_t n = (size_t)(s.end - s.start);
    if (optional && n == 0 && !s.escaped) return OK;
    if (s.escaped || n != 2 * width) {
        c->bad = 1;
        return OK;
    }
    for (size_t i = 0; i < width; i++) {
        int hi = hex_digit(s.start[2 * i]), lo = hex_digit(s.start[2 * i + 1]);
        if (hi < 0 || lo < 0) {
            c->bad = 1;
            return OK;
        }
        out[i] = (uint8_t)(hi * 16 + lo);
    }
    *size = width;
    return OK;
}

static int b64_char(uint8_t ch) {
    return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '+' || ch == '/';
}

/* Canonical padded base64, as base64.b64decode(validate=True) takes it. */
static int base64_ok(const Str *s) {
    size_t n = (size_t)(s->end - s->start);
    if (s->escaped || n % 4) return 0;
    size_t pad = 0;
    if (n && s->start[n - 1] == '=') pad = s->start[n - 2] == '=' ? 2 : 1;
    for (size_t i = 0; i < n - pad; i++)
        if (!b64_char(s->start[i])) return 0;
    return 1;
}

/* One member of an object, the cursor on its value: `member` reads it and sets *bit to the
 * field it is (0 for a field it passes over), so members() can mark a field sent twice. */
typedef int (*Member)(Cur *c, const Str *key, void *state, unsigned *bit);

/* An object (the cursor on its first character) whose members `member` reads; *seen gets the
 * fields present. A value that is not an object marks the span and is passed over. */
static int members(Cur *c, Member member, void *state, unsigned *seen) {
    *seen = 0;
    if (c->p >= c->end || *c->p != '{') {
        c->bad = 1;
        return skip_value(c);
    }
    int empty, more = 1;
    if (open_container(c, '}', &empty) != OK) return WHOLE;
    while (!empty && more) {
        Str key;
        unsigned bit = 0;
        if (read_key(c, &key) != OK) return WHOLE;
        int status = member(c, &key, state, &bit);
        if (status != OK) return status;
        if (*seen & bit) c->bad = 1;
        *seen |= bit;
        if (next_item(c, '}', &more) != OK) return WHOLE;
    }
    return OK;
}

/* Null, or an array whose items `item` reads (with `arg`); another value marks the span. */
static int list_of(Cur *c, int (*item)(Cur *, int), int arg) {
    int null = at_null(c);
    if (null < 0) return WHOLE;
    if (null) return OK;
    if (c->p >= c->end || *c->p != '[') {
        c->bad = 1;
        return skip_value(c);
    }
    int empty, more = 1;
    if (open_container(c, ']', &empty) != OK) return WHOLE;
    while (!empty && more) {
        int status = item(c, arg);
        if (status != OK) return status;
        if (next_item(c, ']', &more) != OK) return WHOLE;
    }
    return OK;
}

static int any_value(Cur *c, int depth);
static int key_value(Cur *c, int depth);

/* The object of an arrayValue or kvlistValue at `depth`: its "values" list. */
typedef struct {
    int depth, kvlist;
} ValuesOf;

static int values_member(Cur *c, const Str *key, void *state, unsigned *bit) {
    const ValuesOf *of = state;
    if (!KEY(key, "values")) return skip_value(c);
    *bit = 1;
    return list_of(c, of->kvlist ? key_value : any_value, of->depth + 1);
}

static int any_value_member(Cur *c, const Str *key, void *state, unsigned *bit) {
    int depth = *(const int *)state;
    Str s;
    int is_string, status;
    if (KEY(key, "stringValue")) {
        *bit = 1;
        return string_value(c, &s, &is_string);
    }
    if (KEY(key, "boolValue")) {
        *bit = 2;
        if (c->p < c->end && *c->p == 't') return literal(c, "true", 4);
        if (c->p < c->end && *c->p == 'f') return literal(c, "false", 5);
        c->bad = 1;
        return skip_value(c);
    }
    if (KEY(key, "intValue")) {
        *bit = 4;
        return int64_field(c);
    }
    if (KEY(key, "doubleValue")) {
        *bit = 8;
        if (c->p < c->end && *c->p == '"') {
            status = scan_string(c, &s);
            if (status == OK) {
                size_t n = (size_t)(s.end - s.start);
                if (s.escaped || !((n == 3 && !memcmp(s.start, "NaN", 3)) ||
                                   (n == 8 && !memcmp(s.start, "Infinity", 8)) ||
                                   (n == 9 && !memcmp(s.start, "-Infinity", 9))))
                    c->bad = 1;
            }
            return status;
        }
        if (c->p < c->end && (*c->p == '-' || (*c->p >= '0' && *c->p <= '9'))) {
            Num n;
            return scan_number(c, &n);
        }
        c->bad = 1;
        return skip_value(c);
    }
    if (KEY(key, "arrayValue") || KEY(key, "kvlistValue")) {
        ValuesOf of = {depth, key->start[0] == 'k'};
        unsigned seen;
        *bit = of.kvlist ? 32 : 16;
        if (depth >= MAX_VALUE_DEPTH) c->bad = 1;
        return members(c, values_member, &of, &seen);
    }
    if (KEY(key, "bytesValue")) {
        *bit = 64;
        status = string_value(c, &s, &is_string);
        if (status == OK && is_string && !base64_ok(&s)) c->bad = 1;
        return status;
    }
    return skip_value(c);
}

static int any_value(Cur *c, int depth) {
    unsigned seen;
    return members(c, any_value_member, &depth, &seen);
}

static int key_value_member(Cur *c, const Str *key, void *state, unsigned *bit) {
    Str s;
    int is_string;
    if (KEY(key, "key")) {
        *bit = 1;
        return string_value(c, &s, &is_string);
    }
    if (KEY(key, "value")) {
        *bit = 2;
        int null = at_null(c);
        if (null < 0) return WHOLE;
        return null ? OK : any_value(c, *(const int *)state);
    }
    return skip_value(c);
}

/* One KeyValue object: it needs its key. */
static int key_value(Cur *c, int depth) {
    unsigned seen;
    int status = members(c, key_value_member, &depth, &seen);
    if (!(seen & 1)) c->bad = 1;
    return status;
}

static int event_or_link_member(Cur *c, const Str *key, void *state, unsigned *bit) {
    int link = *(const int *)state;
    Str s;
    int is_string;
    uint8_t id[16];
    size_t size;
    if (KEY(key, "attributes")) {
        *bit = 1;
        return list_of(c, key_value, 0);
    }
    if (!link && KEY(key, "name")) {
        *bit = 2;
        return string_value(c, &s, &is_string);
    }
    if (!link && KEY(key, "timeUnixNano")) {
        *bit = 4;
        return uint64_field(c);
    }
    if (link && KEY(key, "traceId")) {
        *bit = 8;
        return id_field(c, id, 16, 0, &size);
    }
    if (link && KEY(key, "spanId")) {
        *bit = 16;
        return id_field(c, id, 8, 0, &size);
    }
    if (link && KEY(key, "traceState")) {
        *bit = 32;
        int null = at_null(c);
        if (null < 0) return WHOLE;
        return null ? OK : string_value(c, &s, &is_string);
    }
    return skip_value(c);
}

/* An event or (`link`) a link object: a link needs both ids. */
static int event_or_link(Cur *c, int link) {
    unsigned seen;
    int status = members(c, event_or_link_member, &link, &seen);
    if (link && (seen & 24) != 24) c->bad = 1;
    return status;
}

static const char *const KIND_NAMES[] = {
    "SPAN_KIND_UNSPECIFIED", "SPAN_KIND_INTERNAL", "SPAN_KIND_SERVER",
    "SPAN_KIND_CLIENT",      "SPAN_KIND_PRODUCER", "SPAN_KIND_CONSUMER",
};
static const char *const STATUS_NAMES[] = {"STATUS_CODE_UNSET", "STATUS_CODE_OK", "STATUS_CODE_ERROR"};

static int status_member(Cur *c, const Str *key, void *Py_UNUSED(state), unsigned *bit) {
    Str s;
    int is_string;
    if (KEY(key, "code")) {
        *bit = 1;
        return enum_field(c, STATUS_NAMES, 3);
    }
    if (KEY(key, "message")) {
        *bit = 2;
        return string_value(c, &s, &is_string);
    }
    return skip_value(c);
}

static int status_object(Cur *c) {
    int null = at_null(c);
    if (null < 0) return WHOLE;
    unsigned seen;
    return null ? OK : members(c, status_member, NULL, &seen);
}

typedef struct {
    SpanList out;
    Py_ssize_t marked; /* spans left to the Python decoder */
} Scan;

/* A span's ids as its members give them (sizes 0 when absent or not valid hex of the width). */
typedef struct {
    uint8_t trace_id[16], span_id[8], parent[8];
    size_t sizes[3];
} SpanIds;

static int span_member(Cur *c, const Str *key, void *state, unsigned *bit) {
    SpanIds *ids = state;
    Str s;
    int is_string;
    if (KEY(key, "traceId")) {
        *bit = 1;
        return id_field(c, ids->trace_id, 16, 0, &ids->sizes[0]);
    }
    if (KEY(key, "spanId")) {
        *bit = 2;
        return id_field(c, ids->span_id, 8, 0, &ids->sizes[1]);
    }
    if (KEY(key, "parentSpanId")) {
        *bit = 4;
        return id_field(c, ids->parent, 8, 1, &ids->sizes[2]);
    }
    if (KEY(key, "name")) {
        *bit = 8;
        return string_value(c, &s, &is_string);
    }
    if (KEY(key, "kind")) {
        *bit = 16;
        return enum_field(c, KIND_NAMES, 6);
    }
    if (KEY(key, "startTimeUnixNano") || KEY(key, "endTimeUnixNano")) {
        *bit = key->start[0] == 's' ? 32 : 64;
        return uint64_field(c);
    }
    if (KEY(key, "attributes")) {
        *bit = 128;
        return list_of(c, key_value, 0);
    }
    if (KEY(key, "events") || KEY(key, "links")) {
        int link = key->start[0] == 'l';
        *bit = link ? 512 : 256;
        return list_of(c, event_or_link, link);
    }
    if (KEY(key, "status")) {
        *bit = 1024;
        return status_object(c);
    }
    return skip_value(c);
}

/* One span object (the cursor on its '{'): its tuple appended to scan->spans. */
static int scan_span(Scan *scan, Cur *c) {
    const uint8_t *start = c->p;
    SpanIds ids = {.sizes = {0, 0, 0}};
    unsigned seen;
    c->bad = 0;
    int status = members(c, span_member, &ids, &seen);
    if (status != OK) return status;
    int marked =
        c->bad || ids.sizes[0] != 16 || all_zero(ids.trace_id, 16) || ids.sizes[1] != 8 || all_zero(ids.span_id, 8);
    if (marked) {
        scan->marked++;
        return append_span(&scan->out, NULL, NULL, NULL, 0, start, (size_t)(c->p - start));
    }
    return append_span(&scan->out, ids.trace_id, ids.span_id, ids.parent, ids.sizes[2], start, (size_t)(c->p - start));
}

/* An object member that must be null or an object: its text (NULL for null); else WHOLE. */
static int object_or_null(Cur *c, const uint8_t **start, const uint8_t **end) {
    int null = at_null(c);
    if (null < 0) return WHOLE;
    if (null) {
        *start = *end = NULL;
        return OK;
    }
    if (c->p >= c->end || *c->p != '{') return WHOLE;
    *start = c->p;
    if (skip_value(c) != OK) return WHOLE;
    *end = c->p;
    return OK;
}

/* The structural lists (resourceSpans, scopeSpans, spans): null, or an array of objects. Calls
 * `each` on each object with the cursor on its '{'. */
typedef int (*ItemFn)(Scan *, Cur *, void *);

static int object_array(Scan *scan, Cur *c, ItemFn each, void *data) {
    int null = at_null(c);
    if (null < 0) return WHOLE;
    if (null) return OK;
    if (c->p >= c->end || *c->p != '[') return WHOLE;
    int empty, more = 1;
    if (open_container(c, ']', &empty) != OK) return WHOLE;
    if (empty) return OK;
    while (more) {
        if (c->p >= c->end || *c->p != '{') return WHOLE;
        int status = each(scan, c, data);
        if (status != OK) return status;
        if (next_item(c, ']', &more) != OK) return WHOLE;
    }
    return OK;
}

static int span_item(Scan *scan, Cur *c, void *Py_UNUSED(data)) { return scan_span(scan, c); }

static int scope_spans_item(Scan *scan, Cur *c, void *data) {
    ScopeEntry *entry = data;
    int empty, more = 1, seen_scope = 0, seen_spans = 0;
    const uint8_t *scope_end = NULL;
    entry->scope = NULL;
    entry->first = PyList_GET_SIZE(scan->out.spans);
    if (open_container(c, '}', &empty) != OK) return WHOLE;
    while (!empty && more) {
        Str key;
        int status;
        if (read_key(c, &key) != OK) return WHOLE;
        if (KEY(&key, "scope")) {
            if (seen_scope++) return WHOLE;
            status = object_or_null(c, &entry->scope, &scope_end);
        } else if (KEY(&key, "spans")) {
            if (seen_spans++) return WHOLE;
            status = object_array(scan, c, span_item, NULL);
        } else {
            if (key.escaped) return WHOLE;
            status = skip_value(c);
        }
        if (status != OK) return status;
        if (next_item(c, '}', &more) != OK) return WHOLE;
    }
    entry->last = PyList_GET_SIZE(scan->out.spans);
    entry->scope_size = entry->scope ? (size_t)(scope_end - entry->scope) : 0;
    return OK;
}

typedef struct {
    ScopeEntry *entries;
    Py_ssize_t count, capacity;
} Scopes;

static int scope_entry_item(Scan *scan, Cur *c, void *data) {
    Scopes *scopes = data;
    if (scopes->count == scopes->capacity) {
        Py_ssize_t capacity = scopes->capacity ? 2 * scopes->capacity : 4;
        ScopeEntry *grown = PyMem_Realloc(scopes->entries, (size_t)capacity * sizeof(ScopeEntry));
        if (grown == NULL) {
            PyErr_NoMemory();
            return ERROR;
        }
        scopes->entries = grown;
        scopes->capacity = capacity;
    }
    return scope_spans_item(scan, c, &scopes->entries[scopes->count++]);
}

static int resource_spans_item(Scan *scan, Cur *c, void *Py_UNUSED(data)) {
    const uint8_t *resource = NULL, *resource_end = NULL;
    Scopes scopes = {NULL, 0, 0};
    int empty, more = 1, seen_resource = 0, seen_scopes = 0, status = OK;
    if (open_container(c, '}', &empty) != OK) return WHOLE;
    while (!empty && more && status == OK) {
        Str key;
        if (read_key(c, &key) != OK) {
            status = WHOLE;
        } else if (KEY(&key, "resource")) {
            status = seen_resource++ ? WHOLE : object_or_null(c, &resource, &resource_end);
        } else if (KEY(&key, "scopeSpans")) {
            status = seen_scopes++ ? WHOLE : object_array(scan, c, scope_entry_item, &scopes);
        } else {
            status = key.escaped ? WHOLE : skip_value(c);
        }
        if (status == OK && next_item(c, '}', &more) != OK) status = WHOLE;
    }
    if (status == OK && !scopes.count && resource != NULL) {
        /* no spans, but Python's decoder still checks the resource's attributes */
        PyObject *resource_bytes = slice_or_none(resource, (size_t)(resource_end - resource));
        PyObject *envelope =
            resource_bytes ? PyObject_CallFunctionObjArgs(scan->out.envelope_of, resource_bytes, Py_None, NULL) : NULL;
        Py_XDECREF(resource_bytes);
        if (envelope == NULL) status = ERROR;
        Py_XDECREF(envelope);
    }
    if (status == OK) {
        size_t resource_size = resource ? (size_t)(resource_end - resource) : 0;
        status = attach_envelopes(&scan->out, resource, resource_size, scopes.entries, scopes.count);
    }
    PyMem_Free(scopes.entries);
    return status;
}

PyDoc_STRVAR(scan_doc,
"scan(body, span_type, codec, envelope_of) -> (spans, marked) | None\n\n"
"Check an OTLP/JSON ExportTraceServiceRequest and build its spans; None when the Python decoder\n"
"must read the whole body. A span the Python decoder must read alone has None ids; marked counts\n"
"them (see coordbench/otlp/native.py).");

static PyObject *scan(PyObject *Py_UNUSED(module), PyObject *args) {
    Py_buffer body;
    Scan state = {.marked = 0};
    if (!open_scan(args, &body, &state.out)) return NULL;
    Cur c = {body.buf, (const uint8_t *)body.buf + body.len, 0, 0};
    int status = OK, empty, more = 1, seen = 0;
    skip_ws(&c);
    if (c.p >= c.end || *c.p != '{' || open_container(&c, '}', &empty) != OK) status = WHOLE;
    else if (empty) more = 0;
    while (status == OK && more) {
        Str key;
        if (read_key(&c, &key) != OK) {
            status = WHOLE;
        } else if (KEY(&key, "resourceSpans")) {
            status = seen++ ? WHOLE : object_array(&state, &c, resource_spans_item, NULL);
        } else {
            status = key.escaped ? WHOLE : skip_value(&c);
        }
        if (status == OK && next_item(&c, '}', &more) != OK) status = WHOLE;
    }
    if (status == OK) {
        skip_ws(&c);
        if (c.p != c.end) status = WHOLE; /* anything after the document */
    }
    PyObject *spans = close_scan(&body, &state.out, status);
    if (spans == NULL || spans == Py_None) return spans;
    return Py_BuildValue("(Nn)", spans, state.marked);
}

static PyMethodDef methods[] = {
    {"scan", scan, METH_VARARGS, scan_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_jsonscan", "Native fast path of OTLP/JSON ingest.", -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__jsonscan(void) {
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) return NULL;
    if (PyModule_AddIntConstant(m, "MAX_NESTING", MAX_NESTING) ||
        PyModule_AddIntConstant(m, "MAX_VALUE_DEPTH", MAX_VALUE_DEPTH)) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
