/* What the two OTLP scanners (_scan.c: protobuf, _jsonscan.c: JSON) share: the stored-span tuples
 * they build and the envelopes they attach to them.
 *
 * A stored span is a tuple subclass (coordbench.otlp.native's span type):
 *   (trace_id: bytes, span_id: bytes, parent_span_id: bytes, codec, payload: bytes, envelope)
 * with None for the three ids when the Python decoder must read that span alone. Consecutive spans
 * of one trace share one trace_id object. The envelope (resource and scope) is set once its whole
 * ResourceSpans is read, for every span of each scope: envelope_of(resource bytes, scope bytes).
 *
 * Header-only (static functions): each extension is one compilation unit, built on its own.
 */
#ifndef COORDBENCH_OTLP_SPANS_H
#define COORDBENCH_OTLP_SPANS_H

#include <Python.h>
#include <stdint.h>
#include <string.h>

#define OK 1
#define ERROR (-1)

typedef struct {
    PyTypeObject *span_type;
    PyObject *codec;
    PyObject *envelope_of;
    PyObject *spans;         /* list of span_type tuples */
    PyObject *last_trace_id; /* shared by consecutive spans of one trace: one object, not one per span */
} SpanList;

/* One scope of a ResourceSpans: its bytes (NULL: none) and its spans, spans[first:last]. */
typedef struct {
    const uint8_t *scope;
    size_t scope_size;
    Py_ssize_t first, last;
} ScopeEntry;

static int all_zero(const uint8_t *s, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (s[i]) return 0;
    return 1;
}

static PyObject *slice_or_none(const uint8_t *start, size_t size) {
    if (start == NULL) return Py_NewRef(Py_None);
    return PyBytes_FromStringAndSize((const char *)start, (Py_ssize_t)size);
}

static PyObject *trace_id_object(SpanList *out, const uint8_t *id) {
    PyObject *trace_id = out->last_trace_id;
    if (trace_id != NULL && memcmp(PyBytes_AS_STRING(trace_id), id, 16) == 0) return Py_NewRef(trace_id);
    trace_id = PyBytes_FromStringAndSize((const char *)id, 16);
    if (trace_id != NULL) Py_XSETREF(out->last_trace_id, Py_NewRef(trace_id));
    return trace_id;
}

/* Append a stored span: its 16-byte trace id and 8-byte span id (NULL trace_id: a span left to the
 * Python decoder, its ids None), its parent (parent_size 0: none), and its payload. */
static int append_span(SpanList *out, const uint8_t *trace_id, const uint8_t *span_id, const uint8_t *parent,
                       size_t parent_size, const uint8_t *payload, size_t payload_size) {
    PyObject *span = out->span_type->tp_alloc(out->span_type, 6);
    if (span == NULL) return ERROR;
    PyObject *items[6];
    if (trace_id == NULL) {
        items[0] = Py_NewRef(Py_None);
        items[1] = Py_NewRef(Py_None);
        items[2] = Py_NewRef(Py_None);
    } else {
        items[0] = trace_id_object(out, trace_id);
        items[1] = PyBytes_FromStringAndSize((const char *)span_id, 8);
        items[2] = PyBytes_FromStringAndSize(parent_size ? (const char *)parent : NULL, (Py_ssize_t)parent_size);
    }
    items[3] = Py_NewRef(out->codec);
    items[4] = PyBytes_FromStringAndSize((const char *)payload, (Py_ssize_t)payload_size);
    items[5] = Py_NewRef(Py_None); /* the envelope, set once the whole ResourceSpans is read */
    for (int i = 0; i < 6; i++)
        PyTuple_SET_ITEM(span, i, items[i]);
    for (int i = 0; i < 6; i++) {
        if (items[i] == NULL) {
            Py_DECREF(span);
            return ERROR;
        }
    }
    /* A stored span holds bytes, a codec and an envelope that never refers back to a span, so it
     * cannot be part of a reference cycle: leave it out of the cyclic garbage collector, which
     * would otherwise walk every span of the store on each full collection. */
    PyObject_GC_UnTrack(span);
    int failed = PyList_Append(out->spans, span);
    Py_DECREF(span);
    return failed ? ERROR : OK;
}

/* Give every span of each scope its envelope, envelope_of(resource, scope). */
static int attach_envelopes(SpanList *out, const uint8_t *resource, size_t resource_size, const ScopeEntry *entries,
                            Py_ssize_t count) {
    if (!count) return OK;
    PyObject *resource_bytes = slice_or_none(resource, resource_size);
    if (resource_bytes == NULL) return ERROR;
    int status = OK;
    for (Py_ssize_t i = 0; i < count && status == OK; i++) {
        PyObject *scope_bytes = slice_or_none(entries[i].scope, entries[i].scope_size);
        PyObject *envelope =
            scope_bytes ? PyObject_CallFunctionObjArgs(out->envelope_of, resource_bytes, scope_bytes, NULL) : NULL;
        Py_XDECREF(scope_bytes);
        if (envelope == NULL) {
            status = ERROR;
            break;
        }
        for (Py_ssize_t j = entries[i].first; j < entries[i].last; j++) {
            PyObject *span = PyList_GET_ITEM(out->spans, j);
            PyObject *old = PyTuple_GET_ITEM(span, 5);
            PyTuple_SET_ITEM(span, 5, Py_NewRef(envelope));
            Py_DECREF(old);
        }
        Py_DECREF(envelope);
    }
    Py_DECREF(resource_bytes);
    return status;
}

/* Start a scan: its arguments (body, span_type, codec, envelope_of) read into `body` and `out`.
 * 0 with the exception set when they are not usable (nothing to release then). */
static int open_scan(PyObject *args, Py_buffer *body, SpanList *out) {
    PyObject *span_type;
    if (!PyArg_ParseTuple(args, "y*O!OO:scan", body, &PyType_Type, &span_type, &out->codec, &out->envelope_of))
        return 0;
    if (!PyType_IsSubtype((PyTypeObject *)span_type, &PyTuple_Type)) {
        PyBuffer_Release(body);
        PyErr_SetString(PyExc_TypeError, "span_type must be a tuple subclass");
        return 0;
    }
    out->span_type = (PyTypeObject *)span_type;
    out->last_trace_id = NULL;
    out->spans = PyList_New(0);
    if (out->spans == NULL) {
        PyBuffer_Release(body);
        return 0;
    }
    return 1;
}

/* End a scan that came to `status`: the body and the shared trace id released. OK: the spans (a new
 * reference); ERROR: NULL, the exception set; anything else: None (the Python decoder decides). */
static PyObject *close_scan(Py_buffer *body, SpanList *out, int status) {
    PyBuffer_Release(body);
    Py_CLEAR(out->last_trace_id);
    if (status == OK) return out->spans;
    Py_CLEAR(out->spans);
    return status == ERROR ? NULL : Py_NewRef(Py_None);
}

#endif
