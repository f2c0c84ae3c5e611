/* coordbench.graph.metrics._kernels: the inner loops of the graph metrics, the floats their Python versions make.
 *
 * An agent graph is handed over as rows of node indices (row i: the neighbours of node i, in the
 * order NetworkX keeps them). Each function runs the same loop as its Python version in
 * coordbench.graph.metrics (centrality.py, paths.py), with every floating-point operation in the
 * same order on IEEE doubles, so it returns the same floats bit for bit
 * (tests/graph/test_kernels_native.py checks them on random graphs; built with -ffp-contract=off,
 * so no multiply-add is fused):
 *
 *   betweenness(rows)        Brandes' sums of pair dependencies per node, before rescaling
 *                            (centrality.python_brandes_sums);
 *   breadth_first(rows)      per source: agents reached, their total hops, the farthest hop; and
 *                            the sum of 1/hops over every reached pair, sources in order
 *                            (paths.python_breadth_first);
 *   triangles(rows)          per node: its partners (itself left out, each once) and twice the
 *                            triangles through it (structure.python_triangles);
 *   dijkstra(rows)           rows of (index, distance or None): per source, the distances of the
 *                            agents it reaches in the order the search settles them, the source
 *                            left out (paths.python_dijkstra_lengths);
 *   pagerank(columns, dangling)
 *                            the power iteration of centrality._small_pagerank on the columns of
 *                            M as (row, value) pairs (centrality.python_pagerank_iteration).
 *
 * A row that is not a list of node indices in range raises TypeError or ValueError, as does a
 * PageRank value that is not a float. A length dijkstra is not sure to treat as the Python version
 * does (not exactly a float, negative, NaN) makes it return None: the caller then runs the Python
 * version.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <math.h>
#include <stdint.h>
#include <string.h>

enum { OK = 0, FAILED = -1, UNSURE = 1 };

#define PAGERANK_ALPHA 0.85
#define PAGERANK_ITERATIONS 1000
#define PAGERANK_TOLERANCE 1e-10

/* The rows as one array of targets (and weights) with each row's start: row i is [start[i], start[i + 1]). */
typedef struct {
    Py_ssize_t n;
    Py_ssize_t *start;
    Py_ssize_t *target;
    double *weight; /* NULL for rows of plain indices */
} Rows;

static void rows_free(Rows *rows) {
    PyMem_Free(rows->start);
    PyMem_Free(rows->target);
    PyMem_Free(rows->weight);
    rows->start = rows->target = NULL;
    rows->weight = NULL;
}

static void *alloc_array(Py_ssize_t count, size_t size) {
    if (count < 0 || (size_t)count > (size_t)PY_SSIZE_T_MAX / size) {
        PyErr_NoMemory();
        return NULL;
    }
    void *memory = PyMem_Malloc(count ? (size_t)count * size : 1);
    if (memory == NULL) PyErr_NoMemory();
    return memory;
}

/* A node index: an exact int in [0, n). */
static int read_index(PyObject *item, Py_ssize_t n, Py_ssize_t *index) {
    if (!PyLong_CheckExact(item)) {
        PyErr_Format(PyExc_TypeError, "a node index must be an int, not %.100s", Py_TYPE(item)->tp_name);
        return FAILED;
    }
    Py_ssize_t value = PyLong_AsSsize_t(item);
    if (value == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        value = -1;
    }
    if (value < 0 || value >= n) {
        PyErr_Format(PyExc_ValueError, "node index out of range for %zd nodes", n);
        return FAILED;
    }
    *index = value;
    return OK;
}

/* How the items of a row are read. */
typedef enum {
    INDICES, /* node indices */
    LENGTHS, /* (index, length) tuples: a None length leaves the edge out; a length that is not an
              * exact float, or is negative or NaN, makes the rows UNSURE */
    FLOATS,  /* (index, value) tuples: any exact float; anything else is a TypeError */
} Items;

/* rows: a list of n lists of items. */
static int rows_read(PyObject *list, Items items, Rows *rows) {
    int weighted = items != INDICES;
    memset(rows, 0, sizeof(*rows));
    if (!PyList_CheckExact(list)) {
        PyErr_Format(PyExc_TypeError, "the rows must be a list, not %.100s", Py_TYPE(list)->tp_name);
        return FAILED;
    }
    Py_ssize_t n = PyList_GET_SIZE(list);
    Py_ssize_t total = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *row = PyList_GET_ITEM(list, i);
        if (!PyList_CheckExact(row)) {
            PyErr_Format(PyExc_TypeError, "row %zd must be a list, not %.100s", i, Py_TYPE(row)->tp_name);
            return FAILED;
        }
        if (PyList_GET_SIZE(row) > PY_SSIZE_T_MAX - total) { /* one list repeated: more items than memory */
            PyErr_NoMemory();
            return FAILED;
        }
        total += PyList_GET_SIZE(row);
    }
    rows->n = n;
    rows->start = alloc_array(n + 1, sizeof(Py_ssize_t));
    rows->target = alloc_array(total, sizeof(Py_ssize_t));
    if (weighted) rows->weight = alloc_array(total, sizeof(double));
    if (rows->start == NULL || rows->target == NULL || (weighted && rows->weight == NULL)) {
        rows_free(rows);
        return FAILED;
    }
    /* nothing below runs Python code (exact ints, floats and tuples only), so no row changes size */
    Py_ssize_t at = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *row = PyList_GET_ITEM(list, i);
        rows->start[i] = at;
        for (Py_ssize_t k = 0; k < PyList_GET_SIZE(row); k++) {
            PyObject *item = PyList_GET_ITEM(row, k);
            PyObject *index = item;
            double weight = 0.0;
            if (weighted) {
                if (!PyTuple_CheckExact(item) || PyTuple_GET_SIZE(item) != 2) {
                    PyErr_Format(PyExc_TypeError, "row %zd: an edge must be an (index, weight) tuple", i);
                    rows_free(rows);
                    return FAILED;
                }
                index = PyTuple_GET_ITEM(item, 0);
                PyObject *value = PyTuple_GET_ITEM(item, 1);
                if (value == Py_None && items == LENGTHS) {
                    if (read_index(index, n, &rows->target[at]) != OK) {
                        rows_free(rows);
                        return FAILED;
                    }
                    continue; /* an edge with no length: the search does not take it */
                }
                weight = PyFloat_CheckExact(value) ? PyFloat_AsDouble(value) : NAN;
                if (!PyFloat_CheckExact(value) && items == FLOATS) {
                    PyErr_Format(PyExc_TypeError, "row %zd: a value must be a float, not %.100s", i,
                                 Py_TYPE(value)->tp_name);
                    rows_free(rows);
                    return FAILED;
                }
                if (items == LENGTHS && (isnan(weight) || weight < 0.0)) {
                    rows_free(rows);
                    return UNSURE;
                }
            }
            if (read_index(index, n, &rows->target[at]) != OK) {
                rows_free(rows);
                return FAILED;
            }
            if (weighted) rows->weight[at] = weight;
            at++;
        }
    }
    rows->start[n] = at;
    return OK;
}

static PyObject *float_list(const double *values, Py_ssize_t n) {
    PyObject *list = PyList_New(n);
    if (list == NULL) return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *value = PyFloat_FromDouble(values[i]);
        if (value == NULL) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, i, value);
    }
    return list;
}

static PyObject *int_list(const long long *values, Py_ssize_t n) {
    PyObject *list = PyList_New(n);
    if (list == NULL) return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *value = PyLong_FromLongLong(values[i]);
        if (value == NULL) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, i, value);
    }
    return list;
}

static PyObject *betweenness(PyObject *Py_UNUSED(module), PyObject *arg) {
    Rows g;
    if (rows_read(arg, INDICES, &g) != OK) return NULL; /* indices are never UNSURE */
    Py_ssize_t n = g.n, edges = g.start[n];
    PyObject *result = NULL;
    double *sums = alloc_array(n, sizeof(double));
    double *sigma = alloc_array(n, sizeof(double));
    double *delta = alloc_array(n, sizeof(double));
    Py_ssize_t *hops = alloc_array(n, sizeof(Py_ssize_t));
    Py_ssize_t *queue = alloc_array(n, sizeof(Py_ssize_t));
    Py_ssize_t *first = alloc_array(n + 1, sizeof(Py_ssize_t)); /* node w's predecessors: [first[w], first[w] + count[w]) */
    Py_ssize_t *count = alloc_array(n, sizeof(Py_ssize_t));
    Py_ssize_t *before = alloc_array(edges, sizeof(Py_ssize_t));
    if (!sums || !sigma || !delta || !hops || !queue || !first || !count || !before) goto done;
    /* room for every time a node is named in a row: it cannot have more predecessors than that */
    memset(first, 0, (size_t)(n + 1) * sizeof(Py_ssize_t));
    for (Py_ssize_t e = 0; e < edges; e++) first[g.target[e] + 1]++;
    for (Py_ssize_t i = 0; i < n; i++) first[i + 1] += first[i];
    for (Py_ssize_t i = 0; i < n; i++) sums[i] = 0.0;
    for (Py_ssize_t source = 0; source < n; source++) {
        for (Py_ssize_t i = 0; i < n; i++) {
            sigma[i] = 0.0;
            delta[i] = 0.0;
            hops[i] = -1;
            count[i] = 0;
        }
        sigma[source] = 1.0;
        hops[source] = 0;
        Py_ssize_t head = 0, tail = 0;
        queue[tail++] = source;
        while (head < tail) { /* the queue, read in order, is the order the Python version pops */
            Py_ssize_t v = queue[head++];
            Py_ssize_t next_hop = hops[v] + 1;
            double paths = sigma[v];
            for (Py_ssize_t e = g.start[v]; e < g.start[v + 1]; e++) {
                Py_ssize_t w = g.target[e];
                if (hops[w] < 0) {
                    queue[tail++] = w;
                    hops[w] = next_hop;
                }
                if (hops[w] == next_hop) {
                    sigma[w] += paths;
                    before[first[w] + count[w]++] = v;
                }
            }
        }
        while (tail > 0) { /* back from the farthest */
            Py_ssize_t w = queue[--tail];
            double coeff = (1.0 + delta[w]) / sigma[w];
            for (Py_ssize_t p = first[w]; p < first[w] + count[w]; p++) {
                Py_ssize_t v = before[p];
                delta[v] += sigma[v] * coeff;
            }
            if (w != source) sums[w] += delta[w];
        }
    }
    result = float_list(sums, n);
done:
    if (result == NULL && !PyErr_Occurred()) PyErr_NoMemory();
    PyMem_Free(sums);
    PyMem_Free(sigma);
    PyMem_Free(delta);
    PyMem_Free(hops);
    PyMem_Free(queue);
    PyMem_Free(first);
    PyMem_Free(count);
    PyMem_Free(before);
    rows_free(&g);
    return result;
}

static PyObject *breadth_first(PyObject *Py_UNUSED(module), PyObject *arg) {
    Rows g;
    if (rows_read(arg, INDICES, &g) != OK) return NULL;
    Py_ssize_t n = g.n;
    PyObject *result = NULL, *reached = NULL, *totals = NULL, *farthest = NULL;
    Py_ssize_t *hops = alloc_array(n, sizeof(Py_ssize_t));
    Py_ssize_t *queue = alloc_array(n, sizeof(Py_ssize_t));
    long long *found = alloc_array(n, sizeof(long long)); /* per source: agents reached */
    long long *sums = alloc_array(n, sizeof(long long));  /* their total hops: at most n * n, below 2**63 */
    long long *far = alloc_array(n, sizeof(long long));   /* the farthest hop */
    if (!hops || !queue || !found || !sums || !far) goto done;
    double inverse = 0.0;
    for (Py_ssize_t source = 0; source < n; source++) {
        for (Py_ssize_t i = 0; i < n; i++) hops[i] = -1;
        hops[source] = 0;
        Py_ssize_t head = 0, tail = 0;
        queue[tail++] = source;
        sums[source] = far[source] = 0;
        while (head < tail) {
            Py_ssize_t v = queue[head++];
            Py_ssize_t level = hops[v] + 1;
            for (Py_ssize_t e = g.start[v]; e < g.start[v + 1]; e++) {
                Py_ssize_t w = g.target[e];
                if (hops[w] < 0) {
                    hops[w] = level;
                    queue[tail++] = w;
                    sums[source] += level;
                    far[source] = level;
                    inverse += 1.0 / (double)level;
                }
            }
        }
        found[source] = tail - 1;
    }
    reached = int_list(found, n);
    totals = int_list(sums, n);
    farthest = int_list(far, n);
    if (reached && totals && farthest) result = Py_BuildValue("(OOOd)", reached, totals, farthest, inverse);
done:
    if (result == NULL && !PyErr_Occurred()) PyErr_NoMemory();
    Py_XDECREF(reached);
    Py_XDECREF(totals);
    Py_XDECREF(farthest);
    PyMem_Free(hops);
    PyMem_Free(queue);
    PyMem_Free(found);
    PyMem_Free(sums);
    PyMem_Free(far);
    rows_free(&g);
    return result;
}

static PyObject *triangles(PyObject *Py_UNUSED(module), PyObject *arg) {
    Rows g;
    if (rows_read(arg, INDICES, &g) != OK) return NULL;
    Py_ssize_t n = g.n;
    PyObject *result = NULL, *degrees = NULL, *counts = NULL;
    Py_ssize_t *partner = alloc_array(n, sizeof(Py_ssize_t)); /* partner[u] == v + 1: u is a partner of v */
    Py_ssize_t *visited = alloc_array(n, sizeof(Py_ssize_t)); /* visited[w] == v + 1: partner w of v already read */
    Py_ssize_t *counted = alloc_array(n, sizeof(Py_ssize_t)); /* counted[u] == stamp: u already counted for this w */
    long long *degree_of = alloc_array(n, sizeof(long long));
    long long *twice_of = alloc_array(n, sizeof(long long));
    if (!partner || !visited || !counted || !degree_of || !twice_of) goto done;
    for (Py_ssize_t i = 0; i < n; i++) partner[i] = visited[i] = counted[i] = 0;
    Py_ssize_t stamp = 0;
    for (Py_ssize_t v = 0; v < n; v++) {
        Py_ssize_t degree = 0;
        for (Py_ssize_t e = g.start[v]; e < g.start[v + 1]; e++) { /* vs = set(rows[v]) - {v} */
            Py_ssize_t w = g.target[e];
            if (w != v && partner[w] != v + 1) {
                partner[w] = v + 1;
                degree++;
            }
        }
        long long twice = 0; /* Σ over w in vs of |vs & (set(rows[w]) - {w})|: each triangle twice */
        for (Py_ssize_t e = g.start[v]; e < g.start[v + 1]; e++) {
            Py_ssize_t w = g.target[e];
            if (w == v || visited[w] == v + 1) continue; /* each partner once */
            visited[w] = v + 1;
            stamp++;
            for (Py_ssize_t f = g.start[w]; f < g.start[w + 1]; f++) {
                Py_ssize_t u = g.target[f];
                if (u != w && partner[u] == v + 1 && counted[u] != stamp) {
                    counted[u] = stamp;
                    twice++;
                }
            }
        }
        degree_of[v] = degree;
        twice_of[v] = twice;
    }
    degrees = int_list(degree_of, n);
    counts = int_list(twice_of, n);
    if (degrees && counts) result = PyTuple_Pack(2, degrees, counts);
done:
    if (result == NULL && !PyErr_Occurred()) PyErr_NoMemory();
    Py_XDECREF(degrees);
    Py_XDECREF(counts);
    PyMem_Free(partner);
    PyMem_Free(visited);
    PyMem_Free(counted);
    PyMem_Free(degree_of);
    PyMem_Free(twice_of);
    rows_free(&g);
    return result;
}

/* A binary min-heap of (distance, push count, node): every key distinct, so the order it pops in
 * is the order of Python's heapq on the same pushes. */
typedef struct {
    double distance;
    Py_ssize_t pushed;
    Py_ssize_t node;
} Entry;

static int earlier(const Entry *a, const Entry *b) {
    return a->distance < b->distance || (a->distance == b->distance && a->pushed < b->pushed);
}

static void heap_push(Entry *heap, Py_ssize_t *size, Entry entry) {
    Py_ssize_t i = (*size)++;
    while (i > 0) {
        Py_ssize_t parent = (i - 1) / 2;
        if (!earlier(&entry, &heap[parent])) break;
        heap[i] = heap[parent];
        i = parent;
    }
    heap[i] = entry;
}

static Entry heap_pop(Entry *heap, Py_ssize_t *size) {
    Entry top = heap[0];
    Entry last = heap[--(*size)];
    Py_ssize_t i = 0, n = *size;
    for (;;) {
        Py_ssize_t child = 2 * i + 1;
        if (child >= n) break;
        if (child + 1 < n && earlier(&heap[child + 1], &heap[child])) child++;
        if (!earlier(&heap[child], &last)) break;
        heap[i] = heap[child];
        i = child;
    }
    if (n > 0) heap[i] = last;
    return top;
}

static PyObject *dijkstra(PyObject *Py_UNUSED(module), PyObject *arg) {
    Rows g;
    int read = rows_read(arg, LENGTHS, &g);
    if (read == FAILED) return NULL;
    if (read == UNSURE) Py_RETURN_NONE;
    Py_ssize_t n = g.n, edges = g.start[n];
    PyObject *result = NULL;
    double *best = alloc_array(n, sizeof(double));
    char *state = alloc_array(n, 1); /* 0: not reached, 1: pushed (best holds its distance), 2: settled */
    Entry *heap = alloc_array(edges + 1, sizeof(Entry));
    PyObject *lengths = PyList_New(0);
    if (!best || !state || !heap || !lengths) goto done;
    for (Py_ssize_t source = 0; source < n; source++) {
        memset(state, 0, (size_t)n);
        Py_ssize_t size = 0, pushed = 0;
        state[source] = 1;
        best[source] = 0.0;
        heap_push(heap, &size, (Entry){0.0, pushed++, source});
        while (size > 0) {
            Entry top = heap_pop(heap, &size);
            Py_ssize_t v = top.node;
            if (state[v] == 2) continue;
            state[v] = 2;
            if (v != source) {
                PyObject *value = PyFloat_FromDouble(top.distance);
                if (value == NULL || PyList_Append(lengths, value) < 0) {
                    Py_XDECREF(value);
                    goto done;
                }
                Py_DECREF(value);
            }
            for (Py_ssize_t e = g.start[v]; e < g.start[v + 1]; e++) {
                Py_ssize_t u = g.target[e];
                double through = top.distance + g.weight[e];
                if (state[u] == 2) continue; /* lengths are not negative: never shorter than what settled */
                if (state[u] == 0 || through < best[u]) {
                    state[u] = 1;
                    best[u] = through;
                    heap_push(heap, &size, (Entry){through, pushed++, u});
                }
            }
        }
    }
    result = lengths;
    lengths = NULL;
done:
    if (result == NULL && !PyErr_Occurred()) PyErr_NoMemory();
    Py_XDECREF(lengths);
    PyMem_Free(best);
    PyMem_Free(state);
    PyMem_Free(heap);
    rows_free(&g);
    return result;
}

/* NumPy's sum of a float64 array (pairwise_sum), as centrality._pairwise_sum replays it. */
static double pairwise_sum(const double *a, Py_ssize_t n) {
    if (n < 8) {
        double total = 0.0;
        for (Py_ssize_t i = 0; i < n; i++) total += a[i];
        return total;
    }
    if (n <= 128) {
        double r[8];
        memcpy(r, a, sizeof(r));
        Py_ssize_t i = 8;
        for (; i < n - n % 8; i += 8)
            for (int k = 0; k < 8; k++) r[k] += a[i + k];
        double total = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; i++) total += a[i];
        return total;
    }
    Py_ssize_t half = n / 2;
    half -= half % 8;
    return pairwise_sum(a, half) + pairwise_sum(a + half, n - half);
}

static PyObject *pagerank(PyObject *Py_UNUSED(module), PyObject *args) {
    PyObject *columns_arg, *dangling_arg;
    if (!PyArg_ParseTuple(args, "OO:pagerank", &columns_arg, &dangling_arg)) return NULL;
    Rows m;
    if (rows_read(columns_arg, FLOATS, &m) != OK) return NULL; /* floats are never UNSURE */
    Py_ssize_t n = m.n;
    PyObject *result = NULL;
    Py_ssize_t *dangling = NULL;
    double *x = NULL, *last = NULL, *gaps = NULL;
    if (!PyList_CheckExact(dangling_arg)) {
        PyErr_Format(PyExc_TypeError, "dangling must be a list, not %.100s", Py_TYPE(dangling_arg)->tp_name);
        goto done;
    }
    Py_ssize_t dangling_count = PyList_GET_SIZE(dangling_arg);
    dangling = alloc_array(dangling_count, sizeof(Py_ssize_t));
    x = alloc_array(n, sizeof(double));
    last = alloc_array(n, sizeof(double));
    gaps = alloc_array(n, sizeof(double));
    if (!dangling || !x || !last || !gaps) goto done;
    for (Py_ssize_t k = 0; k < dangling_count; k++)
        if (read_index(PyList_GET_ITEM(dangling_arg, k), n, &dangling[k]) != OK) goto done;
    if (n == 0) {
        result = PyList_New(0);
        goto done;
    }
    double share = 1.0 / (double)n;
    double teleport = (1.0 - PAGERANK_ALPHA) * share;
    for (Py_ssize_t i = 0; i < n; i++) x[i] = share;
    for (int iteration = 0; iteration < PAGERANK_ITERATIONS; iteration++) {
        double *swap = last;
        last = x;
        x = swap;
        double lost = 0.0;
        for (Py_ssize_t k = 0; k < dangling_count; k++) lost = lost + last[dangling[k]];
        double spread = lost * share;
        for (Py_ssize_t i = 0; i < n; i++) {
            double total = 0.0;
            for (Py_ssize_t e = m.start[i]; e < m.start[i + 1]; e++) total += m.weight[e] * last[m.target[e]];
            x[i] = PAGERANK_ALPHA * (total + spread) + teleport;
        }
        for (Py_ssize_t i = 0; i < n; i++) gaps[i] = fabs(x[i] - last[i]);
        if (pairwise_sum(gaps, n) < (double)n * PAGERANK_TOLERANCE) {
            result = float_list(x, n);
            goto done;
        }
    }
    result = Py_None; /* no convergence: NetworkX raises it, and the Python path says so */
    Py_INCREF(result);
done:
    if (result == NULL && !PyErr_Occurred()) PyErr_NoMemory();
    PyMem_Free(dangling);
    PyMem_Free(x);
    PyMem_Free(last);
    PyMem_Free(gaps);
    rows_free(&m);
    return result;
}

static PyMethodDef methods[] = {
    {"betweenness", betweenness, METH_O,
     "betweenness(rows, /)\n--\n\nBrandes' sums of pair dependencies per node (before rescaling)."},
    {"breadth_first", breadth_first, METH_O,
     "breadth_first(rows, /)\n--\n\n(reached, total hops, farthest hop) per source, and the sum of 1/hops."},
    {"triangles", triangles, METH_O,
     "triangles(rows, /)\n--\n\n(partners, twice the triangles) per node, as NetworkX counts them for clustering."},
    {"dijkstra", dijkstra, METH_O,
     "dijkstra(rows, /)\n--\n\nEach source's distances in the order they settle (source left out), or None."},
    {"pagerank", pagerank, METH_VARARGS,
     "pagerank(columns, dangling, /)\n--\n\nThe PageRank power iteration's result, or None without convergence."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_kernels", "The graph metrics' inner loops (coordbench.graph.metrics).", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__kernels(void) { return PyModule_Create(&module); }
