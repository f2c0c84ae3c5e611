/* The native fast path of OTLP/protobuf trace ingest: see coordbench/otlp/native.py.
 *
 * One pass over an encoded ExportTraceServiceRequest validates every field against the
 * schema the Python side derives from the installed protobuf descriptors (wire types, lengths,
 * UTF-8 of string fields, nested messages) and builds, per span, the stored tuple
 * (trace_id, span_id, parent_span_id, codec, payload, envelope) with the span's bytes sliced
 * out as the sender wrote them.
 *
 * It is strict: whatever it is not sure protobuf would parse the same way (a wire type that
 * does not match the field, a group, nesting deeper than MAX_DEPTH, a singular resource or
 * scope sent twice, malformed data) makes scan() return None, and the caller runs the
 * protobuf path, which either parses the request or reports the precise error. So what this
 * accepts is a subset of what protobuf accepts, and gives the same spans.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "_spans.h"

enum { K_UNKNOWN = 0, K_VARINT, K_FIXED64, K_FIXED32, K_BYTES, K_STRING, K_MESSAGE, K_UNSUPPORTED };

#define MAX_MESSAGES 64
#define MAX_FIELD 64
#define MAX_DEPTH 64

typedef struct {
    uint8_t kind[MAX_FIELD];
    uint8_t sub[MAX_FIELD];
} MsgSchema;

static MsgSchema schema[MAX_MESSAGES];
static int configured = 0;
/* The messages the structural walk knows: indices into schema[]. */
static int m_request, m_resource_spans, m_scope_spans, m_span, m_resource, m_scope;

/* Results of the helpers: OK, not for the fast path (FALLBACK), or a Python error (ERROR). */
#define FALLBACK 0 /* beside _spans.h's OK and ERROR */

static inline int read_varint(const uint8_t **p, const uint8_t *end, uint64_t *out) {
    const uint8_t *q = *p;
    if (q < end && *q < 0x80) { /* most tags and lengths: one byte */
        *out = *q;
        *p = q + 1;
        return OK;
    }
    uint64_t value = 0;
    for (int i = 0; i < 10; i++) {
        if (q >= end) return FALLBACK;
        uint8_t byte = *q++;
        if (i == 9 && byte > 1) return FALLBACK; /* beyond 64 bits */
        value |= (uint64_t)(byte & 0x7F) << (7 * i);
        if (byte < 0x80) {
            *p = q;
            *out = value;
            return OK;
        }
    }
    return FALLBACK;
}

static inline int read_tag(const uint8_t **p, const uint8_t *end, uint32_t *field, int *wire_type) {
    uint64_t tag;
    if (!read_varint(p, end, &tag) || tag > UINT32_MAX || (tag >> 3) == 0) return FALLBACK;
    *field = (uint32_t)(tag >> 3);
    *wire_type = (int)(tag & 7);
    return OK;
}

static inline int read_length(const uint8_t **p, const uint8_t *end, const uint8_t **start, size_t *size) {
    uint64_t length;
    if (!read_varint(p, end, &length) || length > (uint64_t)(end - *p)) return FALLBACK;
    *start = *p;
    *size = (size_t)length;
    *p += length;
    return OK;
}

/* Strict UTF-8: no overlong forms, no surrogates, nothing above U+10FFFF. */
static int utf8_valid(const uint8_t *s, size_t n) {
    size_t i = 0;
    uint64_t any = 0; /* ASCII, the common case, eight bytes at a time */
    for (; i + 8 <= n; i += 8) {
        uint64_t word;
        memcpy(&word, s + i, 8);
        any |= word;
    }
    for (size_t j = i; j < n; j++)
        any |= s[j];
    if (!(any & 0x8080808080808080ULL)) return 1;
    i = 0;
    while (i < n) {
        if (i + 8 <= n) {
            uint64_t word;
            memcpy(&word, s + i, 8);
            if (!(word & 0x8080808080808080ULL)) {
                i += 8;
                continue;
            }
        }
        uint8_t c = s[i];
        if (c < 0x80) {
            i++;
        } else if (c >= 0xC2 && c <= 0xDF) {
            if (i + 1 >= n || (s[i + 1] & 0xC0) != 0x80) return 0;
            i += 2;
        } else if (c >= 0xE0 && c <= 0xEF) {
            if (i + 2 >= n) return 0;
            uint8_t c1 = s[i + 1], c2 = s[i + 2];
            if ((c1 & 0xC0) != 0x80 || (c2 & 0xC0) != 0x80) return 0;
            if ((c == 0xE0 && c1 < 0xA0) || (c == 0xED && c1 >= 0xA0)) return 0;
            i += 3;
        } else if (c >= 0xF0 && c <= 0xF4) {
            if (i + 3 >= n) return 0;
            uint8_t c1 = s[i + 1], c2 = s[i + 2], c3 = s[i + 3];
            if ((c1 & 0xC0) != 0x80 || (c2 & 0xC0) != 0x80 || (c3 & 0xC0) != 0x80) return 0;
            if ((c == 0xF0 && c1 < 0x90) || (c == 0xF4 && c1 >= 0x90)) return 0;
            i += 4;
        } else {
            return 0;
        }
    }
    return 1;
}

static int validate(int msg, const uint8_t *p, const uint8_t *end, int depth);

/* Check one field's value (its tag already read) and move past it. */
static int check_field(int msg, uint32_t field, int wire_type, const uint8_t **p, const uint8_t *end, int depth) {
    int kind = field < MAX_FIELD ? schema[msg].kind[field] : K_UNKNOWN;
    uint64_t ignored;
    const uint8_t *start;
    size_t size;
    switch (kind) {
    case K_UNKNOWN: /* kept by protobuf as an unknown field: only its framing matters */
        switch (wire_type) {
        case 0: return read_varint(p, end, &ignored);
        case 1: if (end - *p < 8) return FALLBACK; *p += 8; return OK;
        case 5: if (end - *p < 4) return FALLBACK; *p += 4; return OK;
        case 2: return read_length(p, end, &start, &size);
        default: return FALLBACK; /* groups, or invalid */
        }
    case K_VARINT:
        return wire_type == 0 ? read_varint(p, end, &ignored) : FALLBACK;
    case K_FIXED64:
        if (wire_type != 1 || end - *p < 8) return FALLBACK;
        *p += 8;
        return OK;
    case K_FIXED32:
        if (wire_type != 5 || end - *p < 4) return FALLBACK;
        *p += 4;
        return OK;
    case K_BYTES:
        return wire_type == 2 ? read_length(p, end, &start, &size) : FALLBACK;
    case K_STRING:
        if (wire_type != 2 || !read_length(p, end, &start, &size)) return FALLBACK;
        return utf8_valid(start, size) ? OK : FALLBACK;
    case K_MESSAGE:
        if (wire_type != 2 || !read_length(p, end, &start, &size)) return FALLBACK;
        return validate(schema[msg].sub[field], start, start + size, depth + 1);
    default:
        return FALLBACK;
    }
}

static int validate(int msg, const uint8_t *p, const uint8_t *end, int depth) {
    if (depth > MAX_DEPTH) return FALLBACK;
    while (p < end) {
        uint32_t field;
        int wire_type;
        if (!read_tag(&p, end, &field, &wire_type) || !check_field(msg, field, wire_type, &p, end, depth))
            return FALLBACK;
    }
    return OK;
}

typedef struct {
    SpanList out;
    Py_ssize_t rejected[3]; /* invalid trace_id, span_id, parent_span_id */
} Scan;

static int scan_span(Scan *scan, const uint8_t *start, const uint8_t *end) {
    const uint8_t *p = start, *ids[5] = {NULL};
    size_t sizes[5] = {0};
    while (p < end) {
        uint32_t field;
        int wire_type;
        if (!read_tag(&p, end, &field, &wire_type)) return FALLBACK;
        if ((field == 1 || field == 2 || field == 4) && wire_type == 2) {
            if (!read_length(&p, end, &ids[field], &sizes[field])) return FALLBACK; /* the last one wins */
        } else if (!check_field(m_span, field, wire_type, &p, end, 1)) {
            return FALLBACK;
        }
    }
    if (sizes[1] != 16 || all_zero(ids[1], 16)) {
        scan->rejected[0]++;
        return OK;
    }
    if (sizes[2] != 8 || all_zero(ids[2], 8)) {
        scan->rejected[1]++;
        return OK;
    }
    if (sizes[4] != 0 && sizes[4] != 8) {
        scan->rejected[2]++;
        return OK;
    }
    return append_span(&scan->out, ids[1], ids[2], ids[4], sizes[4], start, (size_t)(end - start));
}

static int scan_scope_spans(Scan *scan, const uint8_t *p, const uint8_t *end, ScopeEntry *entry) {
    entry->scope = NULL;
    entry->scope_size = 0;
    entry->first = PyList_GET_SIZE(scan->out.spans);
    while (p < end) {
        uint32_t field;
        int wire_type;
        const uint8_t *start;
        size_t size;
        if (!read_tag(&p, end, &field, &wire_type)) return FALLBACK;
        if (field == 1 && wire_type == 2) {
            /* protobuf merges a repeated singular message: leave that to it */
            if (entry->scope != NULL || !read_length(&p, end, &start, &size)) return FALLBACK;
            if (!validate(m_scope, start, start + size, 2)) return FALLBACK;
            entry->scope = start;
            entry->scope_size = size;
        } else if (field == 2 && wire_type == 2) {
            if (!read_length(&p, end, &start, &size)) return FALLBACK;
            int status = scan_span(scan, start, start + size);
            if (status != OK) return status;
        } else if (!check_field(m_scope_spans, field, wire_type, &p, end, 1)) {
            return FALLBACK;
        }
    }
    entry->last = PyList_GET_SIZE(scan->out.spans);
    return OK;
}

static int scan_resource_spans(Scan *scan, const uint8_t *p, const uint8_t *end) {
    const uint8_t *resource = NULL;
    size_t resource_size = 0;
    ScopeEntry *entries = NULL;
    Py_ssize_t count = 0, capacity = 0;
    int status = OK;
    while (p < end && status == OK) {
        uint32_t field;
        int wire_type;
        const uint8_t *start;
        size_t size;
        if (!read_tag(&p, end, &field, &wire_type)) {
            status = FALLBACK;
        } else if (field == 1 && wire_type == 2) {
            if (resource != NULL || !read_length(&p, end, &start, &size) || !validate(m_resource, start, start + size, 2))
                status = FALLBACK;
            else {
                resource = start;
                resource_size = size;
            }
        } else if (field == 2 && wire_type == 2) {
            if (!read_length(&p, end, &start, &size)) {
                status = FALLBACK;
                break;
            }
            if (count == capacity) {
                capacity = capacity ? 2 * capacity : 4;
                ScopeEntry *grown = PyMem_Realloc(entries, (size_t)capacity * sizeof(ScopeEntry));
                if (grown == NULL) {
                    PyErr_NoMemory();
                    status = ERROR;
                    break;
                }
                entries = grown;
            }
            status = scan_scope_spans(scan, start, start + size, &entries[count++]);
        } else if (!check_field(m_resource_spans, field, wire_type, &p, end, 0)) {
            status = FALLBACK;
        }
    }
    if (status == OK) status = attach_envelopes(&scan->out, resource, resource_size, entries, count);
    PyMem_Free(entries);
    return status;
}

PyDoc_STRVAR(scan_doc,
"scan(body, span_type, codec, envelope_of) -> (spans, rejected) | None\n\n"
"Validate an encoded ExportTraceServiceRequest and build its spans; None when the protobuf\n"
"path must decide (see coordbench/otlp/native.py).");

static PyObject *scan(PyObject *Py_UNUSED(module), PyObject *args) {
    Py_buffer body;
    Scan state = {.rejected = {0, 0, 0}};
    if (!configured) {
        PyErr_SetString(PyExc_RuntimeError, "_scan.configure() has not been called");
        return NULL;
    }
    if (!open_scan(args, &body, &state.out)) return NULL;
    const uint8_t *p = body.buf, *end = p + body.len;
    int status = OK;
    while (p < end && status == OK) {
        uint32_t field;
        int wire_type;
        const uint8_t *start;
        size_t size;
        if (!read_tag(&p, end, &field, &wire_type)) {
            status = FALLBACK;
        } else if (field == 1 && wire_type == 2) {
            status = read_length(&p, end, &start, &size) ? scan_resource_spans(&state, start, start + size) : FALLBACK;
        } else if (!check_field(m_request, field, wire_type, &p, end, 0)) {
            status = FALLBACK;
        }
    }
    PyObject *spans = close_scan(&body, &state.out, status);
    if (spans == NULL || spans == Py_None) return spans;
    return Py_BuildValue("(N(nnn))", spans, state.rejected[0], state.rejected[1], state.rejected[2]);
}

PyDoc_STRVAR(group_doc,
"group(spans, overhead) -> (groups, sizes) or None\n\n"
"spans: a list of stored-span tuples (trace_id, span_id, parent_span_id, codec, payload, ...).\n"
"groups: trace id -> {span id -> span}, in first-seen order, the first copy of each span id\n"
"kept; sizes: trace id -> the sum of len(payload) + overhead over the spans kept.\n"
"None when an id or a payload is not bytes: the caller groups such a batch itself.");

static PyObject *group(PyObject *Py_UNUSED(module), PyObject *args) {
    PyObject *spans;
    Py_ssize_t overhead;
    if (!PyArg_ParseTuple(args, "O!n:group", &PyList_Type, &spans, &overhead)) return NULL;
    PyObject *groups = PyDict_New();
    /* The current trace's group is remembered (spans of one trace often come together). Strong
     * references throughout: a dict resize may run the garbage collector, and with it any finalizer. */
    PyObject *trace_id = NULL, *members = NULL, *item = NULL, *sizes = NULL;
    int status = ERROR;
    if (groups == NULL) goto done;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(spans); i++) {
        item = Py_NewRef(PyList_GET_ITEM(spans, i));
        if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) < 5) {
            PyErr_SetString(PyExc_TypeError, "group() takes a list of stored-span tuples");
            goto done;
        }
        PyObject *tid = PyTuple_GET_ITEM(item, 0), *sid = PyTuple_GET_ITEM(item, 1);
        /* only bytes: hashing and comparing them runs no Python code */
        if (!PyBytes_CheckExact(tid) || !PyBytes_CheckExact(sid) || !PyBytes_CheckExact(PyTuple_GET_ITEM(item, 4))) {
            status = FALLBACK;
            goto done;
        }
        if (tid != trace_id && (trace_id == NULL || PyBytes_GET_SIZE(tid) != PyBytes_GET_SIZE(trace_id) ||
                                memcmp(PyBytes_AS_STRING(tid), PyBytes_AS_STRING(trace_id), PyBytes_GET_SIZE(tid)))) {
            PyObject *found = PyDict_GetItemWithError(groups, tid);
            if (found == NULL) {
                if (PyErr_Occurred()) goto done;
                found = PyDict_New();
                if (found == NULL) goto done;
                if (PyDict_SetItem(groups, tid, found) < 0) {
                    Py_DECREF(found);
                    goto done;
                }
            } else {
                Py_INCREF(found);
            }
            Py_XSETREF(members, found);
            Py_XSETREF(trace_id, Py_NewRef(tid));
        }
        if (PyDict_SetDefault(members, sid, item) == NULL) goto done;
        Py_CLEAR(item);
    }
    /* Each group's size, summed over the spans it kept (all checked above to hold bytes). */
    sizes = PyDict_New();
    if (sizes == NULL) goto done;
    Py_ssize_t pos = 0;
    PyObject *tid, *kept;
    while (PyDict_Next(groups, &pos, &tid, &kept)) {
        Py_ssize_t total = 0, at = 0;
        PyObject *sid, *span;
        while (PyDict_Next(kept, &at, &sid, &span))
            total += PyBytes_GET_SIZE(PyTuple_GET_ITEM(span, 4)) + overhead;
        PyObject *value = PyLong_FromSsize_t(total);
        if (value == NULL || PyDict_SetItem(sizes, tid, value) < 0) {
            Py_XDECREF(value);
            goto done;
        }
        Py_DECREF(value);
    }
    status = OK;
done:
    Py_XDECREF(item);
    Py_XDECREF(trace_id);
    Py_XDECREF(members);
    if (status == OK) return Py_BuildValue("(NN)", groups, sizes);
    Py_XDECREF(groups);
    Py_XDECREF(sizes);
    if (status == FALLBACK) Py_RETURN_NONE;
    return NULL;
}

PyDoc_STRVAR(configure_doc,
"configure(messages, roles) -> None\n\n"
"messages: per message, a list of (field number, kind, index of the field's message type);\n"
"roles: the indices of ExportTraceServiceRequest, ResourceSpans, ScopeSpans, Span, Resource\n"
"and InstrumentationScope in messages.");

static PyObject *configure(PyObject *Py_UNUSED(module), PyObject *args) {
    PyObject *messages;
    int roles[6];
    if (!PyArg_ParseTuple(args, "O!(iiiiii):configure", &PyList_Type, &messages, &roles[0], &roles[1], &roles[2],
                          &roles[3], &roles[4], &roles[5]))
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(messages);
    if (n < 1 || n > MAX_MESSAGES) {
        PyErr_Format(PyExc_ValueError, "between 1 and %d messages, not %zd", MAX_MESSAGES, n);
        return NULL;
    }
    for (int i = 0; i < 6; i++) {
        if (roles[i] < 0 || roles[i] >= n) {
            PyErr_SetString(PyExc_ValueError, "role index out of range");
            return NULL;
        }
    }
    static MsgSchema table[MAX_MESSAGES];
    memset(table, 0, sizeof(table));
    for (Py_ssize_t m = 0; m < n; m++) {
        PyObject *fields = PyList_GET_ITEM(messages, m);
        if (!PyList_Check(fields)) {
            PyErr_SetString(PyExc_TypeError, "each message is a list of (number, kind, sub)");
            return NULL;
        }
        for (Py_ssize_t f = 0; f < PyList_GET_SIZE(fields); f++) {
            int number, kind, sub;
            if (!PyArg_ParseTuple(PyList_GET_ITEM(fields, f), "iii", &number, &kind, &sub)) return NULL;
            if (number < 1 || number >= MAX_FIELD || kind < K_UNKNOWN || kind > K_UNSUPPORTED || sub < 0 || sub >= n) {
                PyErr_Format(PyExc_ValueError, "field %d (kind %d, message %d) is outside what the scanner handles",
                             number, kind, sub);
                return NULL;
            }
            table[m].kind[number] = (uint8_t)kind;
            table[m].sub[number] = (uint8_t)sub;
        }
    }
    memcpy(schema, table, sizeof(schema));
    m_request = roles[0];
    m_resource_spans = roles[1];
    m_scope_spans = roles[2];
    m_span = roles[3];
    m_resource = roles[4];
    m_scope = roles[5];
    configured = 1;
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"scan", scan, METH_VARARGS, scan_doc},
    {"configure", configure, METH_VARARGS, configure_doc},
    {"group", group, METH_VARARGS, group_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_scan", "Native fast path of OTLP/protobuf ingest.", -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__scan(void) {
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) return NULL;
    if (PyModule_AddIntConstant(m, "UNKNOWN", K_UNKNOWN) || PyModule_AddIntConstant(m, "VARINT", K_VARINT) ||
        PyModule_AddIntConstant(m, "FIXED64", K_FIXED64) || PyModule_AddIntConstant(m, "FIXED32", K_FIXED32) ||
        PyModule_AddIntConstant(m, "BYTES", K_BYTES) || PyModule_AddIntConstant(m, "STRING", K_STRING) ||
        PyModule_AddIntConstant(m, "MESSAGE", K_MESSAGE) || PyModule_AddIntConstant(m, "UNSUPPORTED", K_UNSUPPORTED) ||
        PyModule_AddIntConstant(m, "MAX_DEPTH", MAX_DEPTH)) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
