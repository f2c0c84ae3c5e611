/* coordbench.graph.metrics._canonical: canonical JSON in one pass, the bytes the Python path writes.
 *
 * canonical_json(value) returns what
 *     json.dumps(_canonical(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
 * returns (coordbench.graph.metrics.result), or None when value holds anything it is not sure to
 * write identically: a type that is not exactly dict, list, tuple, str, int, float, bool or None
 * (a subclass, a Mapping that is not a dict), a dict key that is not exactly a str, a string that
 * is not valid Unicode scalar values (a lone surrogate), nesting deeper than MAX_DEPTH. The caller
 * then takes the Python path, which writes it or raises exactly what it always raised.
 *
 * Floats are written as the Python path writes them: not finite -> null; else rounded to 12
 * significant digits (format(v, ".12g") read back), then an integral value below 2**53 in
 * magnitude as an integer, any other as repr() of the rounded float. Strings are escaped as the
 * json module escapes them with ensure_ascii=False: \" \\ \b \f \n \r \t, other characters below
 * U+0020 as \u00xx, every other character as itself. Keys are sorted by code point, which is the
 * order of their UTF-8 bytes.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 200

enum { WRITTEN = 0, FAILED = -1, UNSURE = 1 };

typedef struct {
    char *data;
    size_t len;
    size_t cap;
} Buffer;

static int grow(Buffer *b, size_t extra) {
    if (extra <= b->cap - b->len) return WRITTEN;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap - b->len < extra) {
        if (cap > ((size_t)PY_SSIZE_T_MAX) / 2) {
            PyErr_NoMemory();
            return FAILED;
        }
        cap *= 2;
    }
    char *data = PyMem_Realloc(b->data, cap);
    if (data == NULL) {
        PyErr_NoMemory();
        return FAILED;
    }
    b->data = data;
    b->cap = cap;
    return WRITTEN;
}

static int put(Buffer *b, const char *s, size_t n) {
    if (grow(b, n) != WRITTEN) return FAILED;
    memcpy(b->data + b->len, s, n);
    b->len += n;
    return WRITTEN;
}

static int put_char(Buffer *b, char c) {
    if (grow(b, 1) != WRITTEN) return FAILED;
    b->data[b->len++] = c;
    return WRITTEN;
}

/* A string's UTF-8 bytes, or UNSURE (no exception left) when it holds a lone surrogate. */
static int utf8_of(PyObject *s, const char **out, Py_ssize_t *size) {
    *out = PyUnicode_AsUTF8AndSize(s, size);
    if (*out != NULL) return WRITTEN;
    if (PyErr_ExceptionMatches(PyExc_UnicodeEncodeError)) {
        PyErr_Clear();
        return UNSURE;
    }
    return FAILED;
}

static int put_string(Buffer *b, const char *s, Py_ssize_t size) {
    static const char hex[] = "0123456789abcdef";
    /* the exact size first: a long text is not given room for six times its bytes */
    if ((size_t)size > (((size_t)PY_SSIZE_T_MAX) - 2) / 6) { /* so that `needed`, at most 6 * size + 2, fits */
        PyErr_NoMemory();
        return FAILED;
    }
    size_t needed = 2;
    for (Py_ssize_t i = 0; i < size; i++) {
        unsigned char c = (unsigned char)s[i];
        needed += c >= 0x20 && c != '"' && c != '\\' ? 1
                  : (c == '"' || c == '\\' || c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t') ? 2
                                                                                                 : 6;
    }
    if (grow(b, needed) != WRITTEN) return FAILED;
    char *out = b->data + b->len;
    *out++ = '"';
    for (Py_ssize_t i = 0; i < size; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\') {
            *out++ = (char)c; /* UTF-8 continuation and lead bytes are all >= 0x80: copied as they are */
            continue;
        }
        *out++ = '\\';
        switch (c) {
            case '"': *out++ = '"'; break;
            case '\\': *out++ = '\\'; break;
            case '\b': *out++ = 'b'; break;
            case '\f': *out++ = 'f'; break;
            case '\n': *out++ = 'n'; break;
            case '\r': *out++ = 'r'; break;
            case '\t': *out++ = 't'; break;
            default:
                *out++ = 'u';
                *out++ = '0';
                *out++ = '0';
                *out++ = hex[(c >> 4) & 0xf];
                *out++ = hex[c & 0xf];
        }
    }
    *out++ = '"';
    b->len = (size_t)(out - b->data);
    return WRITTEN;
}

/* A float as the Python path writes it.
 *
 * Its 12 significant digits D = format(value, ".12g") are read back as `rounded`. An integral
 * `rounded` below 2**53 is written as an integer; another integral one as repr(rounded). Any other
 * normal `rounded` (a subnormal one holds fewer than 15 digits) is written as D itself, which is
 * repr(rounded):
 * - its digits: repr writes the shortest digits that read back as `rounded`, and D's (at most 12,
 *   no trailing zero) are the only ones of 15 or fewer that do (two different decimals of 15
 *   significant digits or fewer never read as the same double);
 * - its form: a value that is not integral has a decimal exponent below 11 (12 digits and no
 *   fraction otherwise), where both ".12g" and repr write plain digits down to 1e-4 and an
 *   exponent of at least two digits below it ("1e-05").
 */
static int put_float(Buffer *b, double value) {
    if (!isfinite(value)) return put(b, "null", 4);
    char *digits = PyOS_double_to_string(value, 'g', 12, 0, NULL); /* format(value, ".12g") */
    if (digits == NULL) return FAILED;
    double rounded = PyOS_string_to_double(digits, NULL, NULL); /* float() of it */
    if (rounded == -1.0 && PyErr_Occurred()) {
        PyMem_Free(digits);
        return FAILED;
    }
    int integral = floor(rounded) == rounded;
    if (!integral && fabs(rounded) >= DBL_MIN) {
        int done = put(b, digits, strlen(digits));
        PyMem_Free(digits);
        return done;
    }
    PyMem_Free(digits);
    if (integral && fabs(rounded) < 9007199254740992.0) { /* below 2**53 */
        char integer[32];
        int n = snprintf(integer, sizeof integer, "%lld", (long long)rounded);
        if (n <= 0 || (size_t)n >= sizeof integer) {
            PyErr_SetString(PyExc_SystemError, "canonical JSON: an integer did not fit its buffer");
            return FAILED;
        }
        return put(b, integer, (size_t)n);
    }
    char *text = PyOS_double_to_string(rounded, 'r', 0, Py_DTSF_ADD_DOT_0, NULL); /* repr() */
    if (text == NULL) return FAILED;
    int done = put(b, text, strlen(text));
    PyMem_Free(text);
    return done;
}

typedef struct {
    const char *key;
    Py_ssize_t size;
    PyObject *value;
} Item;

static int by_key(const void *left, const void *right) {
    const Item *a = left, *b = right;
    size_t n = (size_t)(a->size < b->size ? a->size : b->size);
    int order = memcmp(a->key, b->key, n);
    if (order != 0) return order;
    return (a->size > b->size) - (a->size < b->size);
}

static int put_value(Buffer *b, PyObject *value, int depth);

static int put_dict(Buffer *b, PyObject *dict, int depth) {
    Py_ssize_t count = PyDict_GET_SIZE(dict);
    if (count == 0) return put(b, "{}", 2);
    if ((size_t)count > SIZE_MAX / sizeof(Item)) {
        PyErr_NoMemory();
        return FAILED;
    }
    Item *items = PyMem_Malloc((size_t)count * sizeof(Item));
    if (items == NULL) {
        PyErr_NoMemory();
        return FAILED;
    }
    /* the dict is held (and its keys and values with it) while it is read: nothing here runs Python code */
    Py_ssize_t position = 0, n = 0;
    PyObject *key, *item;
    int done = WRITTEN;
    while (n < count && PyDict_Next(dict, &position, &key, &item)) {
        if (!PyUnicode_CheckExact(key)) {
            done = UNSURE; /* the Python path writes str(key), and keys may then collide */
            break;
        }
        done = utf8_of(key, &items[n].key, &items[n].size);
        if (done != WRITTEN) break;
        items[n].value = item;
        n++;
    }
    if (done == WRITTEN && n != count) done = UNSURE; /* changed while read: cannot be */
    if (done == WRITTEN) {
        qsort(items, (size_t)n, sizeof(Item), by_key);
        done = put_char(b, '{');
        for (Py_ssize_t i = 0; i < n && done == WRITTEN; i++) {
            if (i > 0) done = put_char(b, ',');
            if (done == WRITTEN) done = put_string(b, items[i].key, items[i].size);
            if (done == WRITTEN) done = put_char(b, ':');
            if (done == WRITTEN) done = put_value(b, items[i].value, depth + 1);
        }
        if (done == WRITTEN) done = put_char(b, '}');
    }
    PyMem_Free(items);
    return done;
}

static int put_sequence(Buffer *b, PyObject *sequence, int depth) {
    /* a list is read by index each time: its length is read again on every step */
    int done = put_char(b, '[');
    for (Py_ssize_t i = 0; done == WRITTEN && i < PySequence_Fast_GET_SIZE(sequence); i++) {
        if (i > 0) done = put_char(b, ',');
        if (done == WRITTEN) done = put_value(b, PySequence_Fast_GET_ITEM(sequence, i), depth + 1);
    }
    return done == WRITTEN ? put_char(b, ']') : done;
}

static int put_value(Buffer *b, PyObject *value, int depth) {
    if (depth > MAX_DEPTH) return UNSURE; /* the Python path writes it, or raises RecursionError */
    if (value == Py_None) return put(b, "null", 4);
    if (value == Py_True) return put(b, "true", 4);
    if (value == Py_False) return put(b, "false", 5);
    PyTypeObject *type = Py_TYPE(value);
    if (type == &PyUnicode_Type) {
        const char *s;
        Py_ssize_t size;
        int done = utf8_of(value, &s, &size);
        return done == WRITTEN ? put_string(b, s, size) : done;
    }
    if (type == &PyFloat_Type) return put_float(b, PyFloat_AS_DOUBLE(value));
    if (type == &PyLong_Type) {
        PyObject *text = PyLong_Type.tp_repr(value);
        if (text == NULL) return FAILED;
        Py_ssize_t size;
        const char *s = PyUnicode_AsUTF8AndSize(text, &size);
        int done = s == NULL ? FAILED : put(b, s, (size_t)size);
        Py_DECREF(text);
        return done;
    }
    if (type == &PyDict_Type) {
        Py_INCREF(value);
        int done = put_dict(b, value, depth);
        Py_DECREF(value);
        return done;
    }
    if (type == &PyList_Type || type == &PyTuple_Type) {
        Py_INCREF(value);
        int done = put_sequence(b, value, depth);
        Py_DECREF(value);
        return done;
    }
    return UNSURE;
}

static PyObject *canonical_json(PyObject *Py_UNUSED(module), PyObject *value) {
    Buffer b = {NULL, 0, 0};
    int done = put_value(&b, value, 0);
    PyObject *out = NULL;
    if (done == WRITTEN) {
        out = PyUnicode_DecodeUTF8(b.data, (Py_ssize_t)b.len, "strict");
    } else if (done == UNSURE) {
        out = Py_NewRef(Py_None);
    }
    PyMem_Free(b.data);
    return out;
}

static PyMethodDef methods[] = {
    {"canonical_json", canonical_json, METH_O,
     "canonical_json(value, /)\n--\n\nCanonical JSON of value, or None when the Python path must write it."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_canonical", "Canonical JSON in one pass (coordbench.graph.metrics.result).", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__canonical(void) {
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) return NULL;
    if (PyModule_AddIntConstant(m, "MAX_DEPTH", MAX_DEPTH) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
