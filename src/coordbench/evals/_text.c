/* The text measures' inner loops (coordbench.evals._text): a message's words and trigrams, two documents' cosine.

Every message of a trace is cut into words and word trigrams once per evaluation, and every pair of
agents that talked gets the TF-IDF cosine of what each side said: in Python these cost more in interpreter
steps than in the work itself. These functions give what their Python versions give
(coordbench.evals.textcache.python_words, coordbench.evals.evidence.python_trigrams,
coordbench.evals.textsim.python_pair_similarity):

- words(text): the lower-cased runs of two or more word characters of ``text``, each interned, as
  ``tuple(map(sys.intern, re.findall(r"\w\w+", text.lower())))``: ``str.lower`` itself is called, and
  a word character is what the regular expression engine takes for ``\w`` on a str
  (Py_UNICODE_ISALNUM, or ``_``). ``None`` for anything but an exact str (the Python version reads it).
- trigrams(said): the word trigrams of a tuple of words (the words themselves, as one tuple, when
  there are fewer than three; none for none), as ``frozenset(zip(said, said[1:], said[2:]))``. ``None``
  for anything but an exact tuple of exact str.
- pair_similarity(a, b, one, both): the cosine of two documents' TF-IDF vectors (``a`` and ``b``:
  lists or tuples of exact str tokens; ``one`` and ``both``: the idf of a term in one or both documents,
  computed by the caller), with the same floating-point operations in the same order as the Python
  version: per document, its weights squared summed in term order, then the square root; the
  products of the shared terms' normalised weights summed in term order. ``None`` when a document is
  not a list or tuple (left unread: an iterator read here could not be read again), or a token is not
  an exact str (a subclass may compare or hash its own way): the Python version decides.

Built with -ffp-contract=off: no multiply-add may be fused, or the floats would differ.
*/

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>

static int is_word(Py_UCS4 ch) { return Py_UNICODE_ISALNUM(ch) || ch == '_'; }

static PyObject *words(PyObject *Py_UNUSED(module), PyObject *text) {
    if (!PyUnicode_CheckExact(text)) Py_RETURN_NONE;
    PyObject *lower = PyObject_CallMethod(text, "lower", NULL);
    if (lower == NULL) return NULL;
    if (!PyUnicode_CheckExact(lower)) { /* str.lower of an exact str is one: never here */
        Py_DECREF(lower);
        Py_RETURN_NONE;
    }
    PyObject *found = PyList_New(0), *result = NULL;
    if (found == NULL) goto done;
    Py_ssize_t n = PyUnicode_GET_LENGTH(lower);
    int kind = PyUnicode_KIND(lower);
    const void *data = PyUnicode_DATA(lower);
    Py_ssize_t i = 0;
    while (i < n) {
        if (!is_word(PyUnicode_READ(kind, data, i))) {
            i++;
            continue;
        }
        Py_ssize_t start = i;
        while (i < n && is_word(PyUnicode_READ(kind, data, i))) i++;
        if (i - start < 2) continue;
        PyObject *word = PyUnicode_Substring(lower, start, i);
        if (word == NULL) goto done;
        PyUnicode_InternInPlace(&word);
        int appended = PyList_Append(found, word);
        Py_DECREF(word);
        if (appended < 0) goto done;
    }
    result = PyList_AsTuple(found);
done:
    Py_XDECREF(found);
    Py_DECREF(lower);
    return result;
}

static PyObject *trigrams(PyObject *Py_UNUSED(module), PyObject *said) {
    if (!PyTuple_CheckExact(said)) Py_RETURN_NONE;
    Py_ssize_t n = PyTuple_GET_SIZE(said);
    for (Py_ssize_t i = 0; i < n; i++) {
        if (!PyUnicode_CheckExact(PyTuple_GET_ITEM(said, i))) Py_RETURN_NONE; /* a subclass may hash its own way */
    }
    PyObject *grams = PyFrozenSet_New(NULL); /* filled before anyone sees it, as PySet_Add allows */
    if (grams == NULL || n == 0) return grams;
    if (n < 3) {
        if (PySet_Add(grams, said) < 0) Py_CLEAR(grams);
        return grams;
    }
    for (Py_ssize_t i = 0; i + 2 < n; i++) {
        PyObject *gram = PyTuple_Pack(3, PyTuple_GET_ITEM(said, i), PyTuple_GET_ITEM(said, i + 1),
                                      PyTuple_GET_ITEM(said, i + 2));
        if (gram == NULL || PySet_Add(grams, gram) < 0) {
            Py_XDECREF(gram);
            Py_DECREF(grams);
            return NULL;
        }
        Py_DECREF(gram);
    }
    return grams;
}

typedef enum { OK = 0, FAILED = -1, HANDED_BACK = 1 } Outcome;

/* counts[token] = how many times ``tokens`` (a list or tuple of exact str) holds it (values: Python ints).
   Anything else is handed back unread: an iterator read here could not be read again by the Python version. */
static Outcome count(PyObject *tokens, PyObject *counts) {
    if (!PyList_CheckExact(tokens) && !PyTuple_CheckExact(tokens)) return HANDED_BACK;
    PyObject *items = PySequence_Fast(tokens, "pair_similarity() takes lists of tokens"); /* the same object */
    if (items == NULL) return FAILED;
    Outcome outcome = OK;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(items);
    PyObject **item = PySequence_Fast_ITEMS(items); /* no Python code runs below: exact str hash and compare */
    for (Py_ssize_t i = 0; i < n; i++) {
        if (!PyUnicode_CheckExact(item[i])) {
            outcome = HANDED_BACK;
            break;
        }
        PyObject *before = PyDict_GetItemWithError(counts, item[i]); /* borrowed */
        if (before == NULL && PyErr_Occurred()) {
            outcome = FAILED;
            break;
        }
        Py_ssize_t times = before == NULL ? 0 : PyLong_AsSsize_t(before);
        if (times < 0) { /* only this function writes the counts: never here */
            outcome = FAILED;
            break;
        }
        PyObject *now = PyLong_FromSsize_t(times + 1);
        if (now == NULL || PyDict_SetItem(counts, item[i], now) < 0) {
            Py_XDECREF(now);
            outcome = FAILED;
            break;
        }
        Py_DECREF(now);
    }
    Py_DECREF(items);
    return outcome;
}

/* The terms of ``counts``, sorted (as Python's sorted() orders str). */
static PyObject *sorted_terms(PyObject *counts) {
    PyObject *terms = PyDict_Keys(counts);
    if (terms != NULL && PyList_Sort(terms) < 0) Py_CLEAR(terms);
    return terms;
}

/* The count of ``term`` in ``counts`` as a double (it is there), or -1 with an exception set. */
static double count_of(PyObject *counts, PyObject *term) {
    PyObject *value = PyDict_GetItemWithError(counts, term); /* borrowed */
    if (value == NULL) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_SystemError, "a counted term went missing");
        return -1.0;
    }
    Py_ssize_t times = PyLong_AsSsize_t(value);
    return times < 0 ? -1.0 : (double)times;
}

/* The L2 norm of one document's weights: its terms in order, ``one`` or ``both`` as the other holds each. */
static int norm_of(PyObject *terms, PyObject *counts, PyObject *other, double one, double both, double *norm) {
    double total = 0.0;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(terms); i++) {
        PyObject *term = PyList_GET_ITEM(terms, i);
        double tf = count_of(counts, term);
        int shared = PyDict_Contains(other, term);
        if (tf < 0 || shared < 0) return -1;
        double weight = tf * (shared ? both : one);
        total += weight * weight;
    }
    *norm = sqrt(total);
    return 0;
}

static PyObject *pair_similarity(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 4) {
        PyErr_Format(PyExc_TypeError, "pair_similarity() takes 4 arguments (%zd given)", nargs);
        return NULL;
    }
    double one = PyFloat_AsDouble(args[2]), both = PyFloat_AsDouble(args[3]);
    if (PyErr_Occurred()) return NULL;
    PyObject *result = NULL, *counts_a = PyDict_New(), *counts_b = PyDict_New(), *terms_a = NULL, *terms_b = NULL;
    if (counts_a == NULL || counts_b == NULL) goto done;
    Outcome outcome = count(args[0], counts_a);
    if (outcome == OK) outcome = count(args[1], counts_b);
    if (outcome == HANDED_BACK) {
        result = Py_NewRef(Py_None);
        goto done;
    }
    if (outcome == FAILED) goto done;
    if (PyDict_GET_SIZE(counts_a) == 0 || PyDict_GET_SIZE(counts_b) == 0) {
        result = PyFloat_FromDouble(0.0);
        goto done;
    }
    terms_a = sorted_terms(counts_a);
    terms_b = terms_a == NULL ? NULL : sorted_terms(counts_b);
    if (terms_b == NULL) goto done;
    double norm_a, norm_b;
    if (norm_of(terms_a, counts_a, counts_b, one, both, &norm_a) < 0) goto done;
    if (norm_of(terms_b, counts_b, counts_a, one, both, &norm_b) < 0) goto done;
    double total = 0.0;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(terms_a); i++) {
        PyObject *term = PyList_GET_ITEM(terms_a, i);
        int shared = PyDict_Contains(counts_b, term);
        if (shared < 0) goto done;
        if (!shared) continue; /* its product is 0.0, which changes no sum of non-negative floats */
        double tf_a = count_of(counts_a, term), tf_b = count_of(counts_b, term);
        if (tf_a < 0 || tf_b < 0) goto done;
        total += (tf_a * both / norm_a) * (tf_b * both / norm_b);
    }
    result = PyFloat_FromDouble(total);
done:
    Py_XDECREF(counts_a);
    Py_XDECREF(counts_b);
    Py_XDECREF(terms_a);
    Py_XDECREF(terms_b);
    return result;
}

static PyMethodDef methods[] = {
    {"words", words, METH_O, "A text's lower-cased words of two or more word characters, interned; None if not a str."},
    {"trigrams", trigrams, METH_O, "The word trigrams of a tuple of words (the words when fewer than three); None if not."},
    {"pair_similarity", (PyCFunction)(void (*)(void))pair_similarity, METH_FASTCALL,
     "The TF-IDF cosine of two token lists (idf of a term in one, in both); None: not lists of str."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_text", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__text(void) { return PyModule_Create(&module); }
