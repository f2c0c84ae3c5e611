"""Centrality: who sits where in the interaction graph.

Conventions: values are per agent, normalised as NetworkX normalises them (so they are
comparable across team sizes), and computed unweighted unless the docstring says otherwise:
a call count is a strength, not a distance, so it must never be fed to shortest-path based
measures as a weight, where a busier link would look longer (NetworkX takes ``weight`` as a
distance: https://networkx.org/documentation/stable/reference/algorithms/shortest_paths.html).
"""

from __future__ import annotations

import math
from collections import deque

import networkx as nx

from coordbench.graph.agentgraph import flow_view
from coordbench.graph.metrics import kernels
from coordbench.graph.metrics.paths import breadth_first
from coordbench.graph.metrics.registry import Metric, MetricInput

__all__ = [
    "BETWEENNESS",
    "CLOSENESS",
    "DEGREE",
    "EIGENVECTOR",
    "FLOW_BETWEENNESS",
    "PAGERANK",
    "betweenness",
    "brandes_sums",
    "closeness",
    "degree",
    "eigenvector",
    "flow_betweenness",
    "pagerank",
    "pagerank_iteration",
    "python_brandes_sums",
    "python_pagerank_iteration",
    "shared_flow_betweenness",
]


def degree(G: nx.DiGraph[str]) -> dict[str, dict[str, float]]:
    """In-, out- and total degree centrality of each agent (directed call graph).

    ``in = indeg / (n - 1)``, ``out = outdeg / (n - 1)``, ``total = (indeg + outdeg) / (n - 1)``
    (so ``total`` can exceed 1 when agents call each other both ways). All 0 for n < 2.

    Example:
        >>> G = nx.DiGraph([("hub", "a"), ("hub", "b"), ("a", "b")])
        >>> degree(G)["hub"]
        {'in': 0.0, 'out': 1.0, 'total': 1.0}
    """
    n = G.number_of_nodes()
    scale = 1.0 / (n - 1) if n > 1 else 0.0
    return {
        node: {"in": G.in_degree(node) * scale, "out": G.out_degree(node) * scale, "total": G.degree(node) * scale}
        for node in G
    }


def betweenness(G: nx.DiGraph[str]) -> dict[str, float]:
    """Directed betweenness: share of directed shortest call paths through each agent.

    Normalised by ``(n - 1)(n - 2)``. A pure fan-out orchestrator scores 0 here (nothing flows
    *through* it along call direction); see :func:`flow_betweenness` for bottlenecks.

    Example:
        >>> betweenness(nx.DiGraph([("a", "b"), ("b", "c")]))
        {'a': 0.0, 'b': 0.5, 'c': 0.0}
    """
    return _betweenness_centrality(G)


def _betweenness_centrality(G: nx.Graph[str] | nx.DiGraph[str]) -> dict[str, float]:
    """``nx.betweenness_centrality(G, normalized=True)``: Brandes' algorithm as NetworkX runs it, on plain lists.

    The same breadth-first searches in the same neighbour order and the same sums and rescaling
    (so the same floats), without NetworkX's adjacency views, which cost more than the
    arithmetic on an agent graph.
    """
    nodes = list(G)
    betweenness = brandes_sums(kernels.neighbour_rows(G))
    pairs = len(nodes) - 1  # _rescale: normalised, no endpoints, every source
    if pairs >= 2:
        scale = 1 / (pairs * (pairs - 1))
        if scale != 1:
            betweenness = [b * scale for b in betweenness]
    return dict(zip(nodes, betweenness, strict=True))


def brandes_sums(rows: list[list[int]]) -> list[float]:
    """Each node's sum of pair dependencies (betweenness before rescaling); ``rows[i]``: node ``i``'s neighbours.

    The C kernel (:data:`~coordbench.graph.metrics.kernels.KERNELS`) when built, else
    :func:`python_brandes_sums`: the same floats.
    """
    native = kernels.KERNELS
    return native.betweenness(rows) if native is not None else python_brandes_sums(rows)


def python_brandes_sums(rows: list[list[int]]) -> list[float]:
    """:func:`brandes_sums` in Python: NetworkX's ``_single_source_shortest_path_basic`` and ``_accumulate_basic``."""
    n = len(rows)
    betweenness = [0.0] * n
    for source in range(n):
        # shortest paths from the source, counted (NetworkX's _single_source_shortest_path_basic)
        order: list[int] = []
        before: list[list[int]] = [[] for _ in range(n)]
        sigma = [0.0] * n
        hops = [-1] * n
        sigma[source] = 1.0
        hops[source] = 0
        queue = deque([source])
        while queue:
            v = queue.popleft()
            order.append(v)
            next_hop = hops[v] + 1
            paths = sigma[v]
            for w in rows[v]:
                if hops[w] < 0:
                    queue.append(w)
                    hops[w] = next_hop
                if hops[w] == next_hop:
                    sigma[w] += paths
                    before[w].append(v)
        # dependencies, back from the farthest (_accumulate_basic)
        delta: list[float] = [0] * n
        while order:
            w = order.pop()
            coeff = (1 + delta[w]) / sigma[w]
            for v in before[w]:
                delta[v] += sigma[v] * coeff
            if w != source:
                betweenness[w] += delta[w]
    return betweenness


def flow_betweenness(G: nx.DiGraph[str], *, flow: nx.Graph[str] | None = None) -> dict[str, float]:
    """Betweenness on the undirected flow view (calls plus their replies).

    Information travels both ways on a call (request out, answer back), so this is the view
    that shows an agent every exchange has to pass through. Normalised to [0, 1]: the hub of
    a star scores 1 at any team size. ``flow``: ``flow_view(G)``, when already built.

    Example:
        >>> flow_betweenness(nx.DiGraph([("hub", "a"), ("hub", "b"), ("hub", "c")]))["hub"]
        1.0
    """
    return _betweenness_centrality(flow_view(G) if flow is None else flow)


def shared_flow_betweenness(inputs: MetricInput) -> dict[str, float]:
    """:func:`flow_betweenness` of ``inputs.graph``, computed once per evaluation (metrics and detection read it)."""
    return inputs.memo("flow_betweenness", lambda g: flow_betweenness(g, flow=inputs.flow))


def closeness(G: nx.DiGraph[str], *, flow: nx.Graph[str] | None = None) -> dict[str, float]:
    """Closeness on the undirected flow view (``flow``, when already built), Wasserman-Faust scaled.

    ``C(u) = (r - 1)/(n - 1) * (r - 1)/Σ d(u, v)`` over the ``r`` agents ``u`` can reach, so it
    stays defined (and comparable) when the graph is disconnected. Undirected because a
    calls-only orchestrator would otherwise get 0 (NetworkX uses incoming distance on digraphs).

    Example:
        >>> closeness(nx.DiGraph([("a", "b"), ("b", "c")]))["b"]
        1.0
    """
    H = flow_view(G) if flow is None else flow
    nodes = list(H)
    reached, totals, _, _ = breadth_first(kernels.neighbour_rows(H))
    # nx.closeness_centrality(H) (wf_improved), its arithmetic as it is: the same floats
    others = len(nodes) - 1
    values: dict[str, float] = {}
    for node, r, total in zip(nodes, reached, totals, strict=True):
        value = 0.0
        if total > 0.0 and others > 0:
            found = r + 1 - 1.0  # NetworkX's len(sp) - 1.0: its lengths hold the node itself
            value = found / total
            value *= found / others
        values[node] = value
    return values


def eigenvector(G: nx.DiGraph[str], *, flow: nx.Graph[str] | None = None) -> dict[str, object]:
    """Eigenvector centrality with a defined fallback, weighted by call ``count``.

    The directed version is meaningless on call trees: a DAG's adjacency matrix has no
    positive leading eigenvalue, and power iteration drifts to an arbitrary vector
    (networkx#4021). So: ``directed`` when the call graph has a cycle and the iteration
    converges; otherwise ``undirected-flow`` (Perron-Frobenius applies to each connected
    part); if that fails too, PageRank. The result says which was used. ``flow``: ``flow_view(G)``,
    when already built.

    Returns:
        ``{"method": "directed" | "undirected-flow" | "pagerank", "values": {agent: value}}``.

    Example:
        >>> eigenvector(nx.DiGraph([("hub", "a"), ("hub", "b")]))["method"]
        'undirected-flow'
    """
    if G.number_of_nodes() == 0:
        return {"method": "directed", "values": {}}
    if G.number_of_edges() and not nx.is_directed_acyclic_graph(G):
        try:
            return {"method": "directed", "values": _eigenvector_centrality(G)}
        except (nx.PowerIterationFailedConvergence, nx.NetworkXException):
            pass
    try:
        undirected = flow_view(G) if flow is None else flow
        values = _eigenvector_centrality(undirected)
        return {"method": "undirected-flow", "values": values}
    except (nx.PowerIterationFailedConvergence, nx.NetworkXException):
        return {"method": "pagerank", "values": pagerank(G)}


def _eigenvector_centrality(G: nx.Graph[str], max_iter: int = 1000, tol: float = 1.0e-6) -> dict[str, float]:
    """``nx.eigenvector_centrality(G, max_iter=1000, weight="count")``: its power iteration as it is, on plain lists.

    The same Python operations in the same order (so the same floats) without NetworkX's adjacency
    views, which cost more than the arithmetic on an agent graph.

    Raises:
        nx.NetworkXPointlessConcept: For a graph with no agent.
        nx.PowerIterationFailedConvergence: When ``max_iter`` iterations do not converge.
    """
    if len(G) == 0:
        raise nx.NetworkXPointlessConcept("cannot compute centrality for the null graph")
    names = list(G)
    index = {node: i for i, node in enumerate(names)}
    rows = [[(index[nbr], data.get("count", 1)) for nbr, data in G.adj[node].items()] for node in names]
    nodes = len(rows)
    x: list[float] = [1 / nodes] * nodes
    for _ in range(max_iter):
        last = x
        x = last.copy()  # (A + I) x, as NetworkX iterates
        for node, neighbours in enumerate(rows):
            value = last[node]
            for nbr, weight in neighbours:
                x[nbr] += value * weight
        norm = math.hypot(*x) or 1
        x = [v / norm for v in x]
        if sum(abs(a - b) for a, b in zip(x, last, strict=True)) < nodes * tol:  # in node order, as NetworkX sums
            return dict(zip(names, x, strict=True))
    raise nx.PowerIterationFailedConvergence(max_iter)


def pagerank(G: nx.DiGraph[str]) -> dict[str, float]:
    """PageRank of the directed call graph, ``count`` as edge strength, damping 0.85.

    Always defined (teleporting handles agents that call no one). High = many calls come
    from agents that are themselves called a lot.

    Example:
        >>> ranks = pagerank(nx.DiGraph([("a", "b"), ("c", "b")]))
        >>> max(ranks, key=ranks.get)
        'b'
    """
    if G.number_of_nodes() == 0:
        return {}
    # tol 1e-10 rather than NetworkX's 1e-6: agent graphs are tiny, and results must not move at the
    # sixth decimal between libraries or runs
    found = _small_pagerank(G) if G.number_of_nodes() <= SMALL_GRAPH else None
    if found is not None:
        return found
    return dict(nx.pagerank(G, alpha=0.85, weight="count", tol=1e-10, max_iter=1000))


SMALL_GRAPH = 256
"""Agents up to which PageRank runs in plain Python: SciPy's setup costs more than the whole iteration."""


def _small_pagerank(G: nx.DiGraph[str]) -> dict[str, float] | None:
    """``nx.pagerank(G, alpha=0.85, weight="count", tol=1e-10, max_iter=1000)``, the same floats, without SciPy.

    NetworkX builds SciPy sparse matrices for a graph of twenty agents, which costs more than the
    power iteration itself. This is its iteration (``_pagerank_scipy``) step for step, each
    number made by the same floating-point operations in the same order: the row sums of the
    weights (exact: whole call counts), ``M = diag(1/S) A``, then ``x = 0.85 (x M + (Σ dangling
    x) p) + 0.15 p`` from ``x = p = 1/N``, ``x M`` summed over the rows in order (SciPy's CSC
    product of the transpose), until ``Σ |x - x_last| < N tol``. ``tests/graph/test_pagerank.py``
    checks it bit for bit against NetworkX on random graphs. ``None`` (NetworkX decides) when a
    weight is not a whole number, where a sum's order could matter.
    """
    nodes = list(G)
    n = len(nodes)
    index = {node: i for i, node in enumerate(nodes)}
    rows: list[list[tuple[int, float]]] = []  # row i of A: (column, weight), as NetworkX orders the adjacency
    sums: list[float] = []
    for node in nodes:
        row: list[tuple[int, float]] = []
        total = 0
        for neighbour, data in G.adj[node].items():
            weight = data.get("count", 1)
            if type(weight) is not int or weight < 0:
                return None
            row.append((index[neighbour], float(weight)))
            total += weight
        if total >= 2**53:
            return None
        rows.append(row)
        sums.append(float(total))
    # M = diag(1/S) A: each entry one product (SciPy's product of a diagonal by a CSR matrix)
    into: list[list[tuple[int, float]]] = [[] for _ in range(n)]  # column i of M: (row j, M[j, i]), rows ascending
    for j, row in enumerate(rows):
        scale = 1.0 / sums[j] if sums[j] != 0 else 0.0
        for i, weight in sorted(row):
            value = scale * weight
            if value != 0:  # SciPy's product keeps no explicit zero
                into[i].append((j, value))
    dangling = [j for j in range(n) if sums[j] == 0]
    x = pagerank_iteration(into, dangling)
    return dict(zip(nodes, x, strict=True)) if x is not None else None  # no convergence: NetworkX raises it


def pagerank_iteration(columns: list[list[tuple[int, float]]], dangling: list[int]) -> list[float] | None:
    """PageRank's power iteration on ``M``'s columns (``(row, value)``, rows ascending); ``None`` without convergence.

    The C kernel (:data:`~coordbench.graph.metrics.kernels.KERNELS`) when built, else
    :func:`python_pagerank_iteration`: the same floats.
    """
    native = kernels.KERNELS
    return native.pagerank(columns, dangling) if native is not None else python_pagerank_iteration(columns, dangling)


def python_pagerank_iteration(columns: list[list[tuple[int, float]]], dangling: list[int]) -> list[float] | None:
    """:func:`pagerank_iteration` in Python: ``_pagerank_scipy``'s loop, step for step (see :func:`_small_pagerank`)."""
    n = len(columns)
    alpha = 0.85
    share = 1.0 / n
    teleport = (1 - alpha) * share
    x: list[float] = [share] * n
    for _ in range(1000):
        last = x
        lost = 0
        for j in dangling:  # Python's sum over the dangling entries, in order
            lost = lost + last[j]
        spread = lost * share
        x: list[float] = []
        for column in columns:
            total = 0.0
            for j, value in column:
                total += value * last[j]
            x.append(alpha * (total + spread) + teleport)
        if _pairwise_sum([abs(a - b) for a, b in zip(x, last, strict=True)]) < n * 1e-10:
            return x
    return None


def _pairwise_sum(values: list[float]) -> float:
    """NumPy's sum of a float64 array: blocks of eight accumulators, halves past 128 (``pairwise_sum``)."""
    n = len(values)
    if n < 8:
        total = 0.0
        for v in values:
            total += v
        return total
    if n <= 128:
        r = values[:8]
        i = 8
        while i < n - n % 8:
            for k in range(8):
                r[k] += values[i + k]
            i += 8
        total = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
        for v in values[i:]:
            total += v
        return total
    half = n // 2
    half -= half % 8
    return _pairwise_sum(values[:half]) + _pairwise_sum(values[half:])


DEGREE = Metric("degree_centrality", lambda i: degree(i.graph), "In/out/total degree per agent.", "directed")
BETWEENNESS = Metric(
    "betweenness_centrality",
    lambda i: betweenness(i.graph),
    "Share of directed call paths through each agent.",
    "directed",
)
FLOW_BETWEENNESS = Metric(
    "flow_betweenness_centrality",
    shared_flow_betweenness,
    "Share of exchanges (calls and replies) passing through each agent; the bottleneck measure.",
    "undirected-flow",
)
CLOSENESS = Metric(
    "closeness_centrality",
    lambda i: closeness(i.graph, flow=i.flow),
    "How near each agent is to the others (calls and replies, Wasserman-Faust).",
    "undirected-flow",
)
EIGENVECTOR = Metric(
    "eigenvector_centrality",
    lambda i: eigenvector(i.graph, flow=i.flow),
    "Influence by connection to influential agents, with a fallback on call trees.",
    "directed",
)
PAGERANK = Metric("pagerank", lambda i: pagerank(i.graph), "PageRank of the call graph, weighted by calls.", "directed")
