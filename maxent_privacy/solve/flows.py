"""Forced zeros of pooled releases by flow arguments (presolve, exact).

Every rule here looks at a *relaxation* of the data rows: a set of rows whose feasible
cells form a network flow. A cell that is 0 in every flow of the relaxation is 0 in every
feasible table of the model (each table gives such a flow), so the zeros are proved, never
guessed. Which edges are 0 in every feasible flow is decided exactly by one feasible flow
and the strongly connected components of its residual graph (:func:`circulation_zeros`):
an edge with no flow can carry some only along a residual cycle through it.

Two relaxations, for releases whose people all sit in a known group:

* **per group** (:func:`group_network`): within one release, the cells of a group's
  classes form a transportation problem (classes supply their remaining records, values
  demand their remaining counts), as for one release;
* **per value across releases** (:func:`value_network`): for one value s and two releases
  A and B, the people holding s in group g of A (count ``C_A(g, s)``) are spread over the
  groups of B, and group h of B must collect ``C_B(h, s)`` of them; a class of g and h
  carries at most its remaining size. People in only one of the two releases go through
  a free node (no count is published for them).

Each relaxation is a separate network; they are settled a few at a time (one max-flow
for up to ``FLOW_BATCH_EDGES`` edges: the memory of one large network, not of all).
:class:`PooledFlows` remembers its last call: a later call builds the networks only on
the connected components (of the graph joining every free cell to its class and its
Relation rows) that hold a class or row of a cell fixed since, the others being exactly
as the last call left them (see its docstring).

>>> import numpy as np
>>> # source 0; class a (1) may hold x or y, class b (2) only x; x (3) and y (4) are
>>> # held once each (edges to the sink 5, which returns the flow): a cannot hold x
>>> tail, head = [0, 0, 1, 1, 2, 3, 4, 5], [1, 2, 3, 4, 3, 5, 5, 0]
>>> lo, hi = [1, 1, 0, 0, 0, 1, 1, 0], [1, 1, 1, 1, 1, 1, 1, 9]
>>> np.flatnonzero(circulation_zeros(6, tail, head, lo, hi)).tolist()
[2]
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components, maximum_flow

from . import tolerances as tl

__all__ = [
    "Network",
    "PooledFlows",
    "PooledRows",
    "circulation_zeros",
    "pooled_flow_zeros",
    "settled_flows",
]


def circulation_zeros(n_nodes, tail, head, lo, hi) -> np.ndarray | None:
    """Which edges carry 0 in every feasible circulation ``lo <= f <= hi`` (integers,
    flow conserved at every node); None when there is no feasible circulation.
    See :func:`settled_flows`."""
    out = settled_flows(n_nodes, tail, head, lo, hi)
    return None if out is None else out[1] & (out[0] == 0)


def _index_type(n: int):
    return np.int32 if n < 2**31 - 2 else np.int64


def settled_flows(n_nodes, tail, head, lo, hi) -> tuple[np.ndarray, np.ndarray] | None:
    """One feasible circulation ``f`` (``lo <= f <= hi``, integers) and edges that carry
    the same flow in every feasible circulation; None when there is none.

    Edges must be distinct pairs with no edge in both directions. ``f`` comes from one
    max-flow (lower bounds moved to a super source and sink). The difference of two
    feasible circulations is a sum of cycles of the residual graph of ``f``, so an edge
    at a bound (``f = lo`` or ``f = hi``) can change exactly when its ends lie in one
    strongly connected component of the residual graph; such an edge is settled
    otherwise, as is an edge with ``lo = hi``. An edge strictly between its bounds is
    reported settled only when its ends lie in different components (its own two residual
    arcs join them otherwise, so it may be settled without being reported).
    """
    small = _index_type(n_nodes + 2)
    tail, head = np.asarray(tail, dtype=small), np.asarray(head, dtype=small)
    lo, hi = np.asarray(lo, dtype=np.int64), np.asarray(hi, dtype=np.int64)
    excess = np.bincount(head, lo, n_nodes) - np.bincount(tail, lo, n_nodes)
    excess = np.round(excess).astype(np.int64)
    src, sink = n_nodes, n_nodes + 1
    into, out = np.flatnonzero(excess > 0), np.flatnonzero(excess < 0)
    rows = np.concatenate([tail, np.full(len(into), src, dtype=small), out.astype(small)])
    cols = np.concatenate([head, into.astype(small), np.full(len(out), sink, dtype=small)])
    cap = np.concatenate([hi - lo, excess[into], -excess[out]])
    if cap.max(initial=0) < 2**31:  # max-flow's capacities are 32-bit integers
        cap = cap.astype(np.int32)
    graph = sp.csr_array((cap, (rows, cols)), shape=(n_nodes + 2, n_nodes + 2))
    del rows, cols, cap
    flow = maximum_flow(graph, src, sink, method="dinic")
    del graph
    if flow.flow_value != excess[into].sum():
        return None
    f = lo + np.asarray(sp.csr_array(flow.flow)[tail, head]).ravel().astype(np.int64)
    del flow
    fwd, bwd = f < hi, f > lo
    res = sp.csr_array(
        (
            np.ones(int(fwd.sum() + bwd.sum()), dtype=bool),
            (np.concatenate([tail[fwd], head[bwd]]), np.concatenate([head[fwd], tail[bwd]])),
        ),
        shape=(n_nodes, n_nodes),
    )
    _, scc = connected_components(res, directed=True, connection="strong")
    return f, (scc[tail] != scc[head]) | (lo == hi)


@dataclass
class Network:
    """Edges of a flow network under construction; ``cell_edge[j]`` is the edge whose
    flow bounds cell ``j`` (-1: none), several cells may share one edge."""

    n_nodes: int
    tail: list
    head: list
    lo: list
    hi: list

    @classmethod
    def empty(cls) -> Network:
        return cls(0, [], [], [], [])

    @property
    def n_edges(self) -> int:
        return sum(len(t) for t in self.tail)

    def nodes(self, k: int) -> int:
        """Add ``k`` nodes; the first one's index."""
        first = self.n_nodes
        self.n_nodes += k
        return first

    def edges(self, tail, head, lo, hi, distinct: bool = False) -> np.ndarray:
        """Add edges (merged by (tail, head): bounds added up, unless the caller knows
        the pairs are ``distinct``); their indices."""
        tail, head = np.asarray(tail, dtype=np.int64), np.asarray(head, dtype=np.int64)
        start = self.n_edges
        if distinct:
            self.tail.append(tail)
            self.head.append(head)
            self.lo.append(np.broadcast_to(lo, tail.shape))
            self.hi.append(np.broadcast_to(hi, tail.shape))
            return start + np.arange(len(tail))
        key = tail * (self.n_nodes + 1) + head
        uniq, first, inv = np.unique(key, return_index=True, return_inverse=True)
        del key
        self.tail.append(tail[first])
        self.head.append(head[first])
        self.lo.append(np.bincount(inv, np.broadcast_to(lo, tail.shape), len(uniq)))
        self.hi.append(np.bincount(inv, np.broadcast_to(hi, tail.shape), len(uniq)))
        return start + inv

    def settled(self):
        """:func:`settled_flows` of the network, and the upper bounds of its edges."""
        if not self.tail:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=bool), np.zeros(0)
        cat = [np.concatenate(v) for v in (self.tail, self.head, self.lo, self.hi)]
        self.tail, self.head, self.lo, self.hi = [], [], [], []  # one copy, not two
        out = settled_flows(self.n_nodes, *cat)
        return None if out is None else (*out, cat[3])


@dataclass(frozen=True)
class PooledRows:
    """The data rows of pooled releases where everyone sits in a known group.

    ``cls`` (class of each cell), ``class_n``; ``row_n`` (count of each Relation row),
    ``row_release``; ``cells`` (a CSC matrix over the cells whose rows ``offset`` to
    ``offset + len(row_n)`` are the Relation rows, coefficients 1: the Relation matrix
    itself, or presolve's stacked rows, shared instead of copied).
    """

    cls: np.ndarray
    class_n: np.ndarray
    row_n: np.ndarray
    row_release: np.ndarray
    cells: sp.csc_array
    offset: int = 0

    @classmethod
    def of(cls, structure, cells=None, offset: int = 0) -> PooledRows | None:
        """The rows of a pooled :class:`~maxent_privacy.releases.structure.Structure`, or None
        when some group is uncertain (placement cells) or it is one release. ``cells``:
        a CSC matrix holding the Relation rows from row ``offset`` (default: a CSC copy of
        the structure's Relation matrix)."""
        s = structure
        if s.kind != "pooled" or (s.placement_of >= 0).any() or s.link_matrix.shape[0]:
            return None
        if cells is None:
            cells, offset = sp.csc_array(s.sa_matrix), 0
        rel = s.sa_release  # (set for every pooled structure)
        return cls(s.cell_class, s.class_n, s.sa_n, rel, cells, offset)

    @property
    def n_releases(self) -> int:
        return int(self.row_release.max()) + 1

    @cached_property
    def _row_table(self) -> np.ndarray:
        """Releases x cells: the Relation row of every cell in each release (-1: not in
        it); found once (a cell's rows do not change as presolve fixes cells)."""
        sub = self.cells
        row = sub.indices.astype(np.int64) - self.offset
        col = np.repeat(np.arange(sub.shape[1]), np.diff(sub.indptr))
        on = (row >= 0) & (row < len(self.row_n))
        out = np.full((self.n_releases, sub.shape[1]), -1, dtype=_index_type(len(self.row_n)))
        out[self.row_release[row[on]], col[on]] = row[on]
        return out

    def rows_of(self, idx: np.ndarray) -> np.ndarray:
        """Releases x ``len(idx)``: the Relation row of each cell ``idx`` in each release,
        -1 when its class is not in that release."""
        return self._row_table[:, idx]

    def remaining(self, vals: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Class totals and Relation counts still free once the cells hold ``vals``
        (each summed cell by cell in index order, as the CSC product adds them up)."""
        R = self.class_n - np.bincount(self.cls, vals, len(self.class_n))
        put = self.cells @ vals
        return R, self.row_n - put[self.offset : self.offset + len(self.row_n)]

    def near(self, free_idx: np.ndarray, row_of: np.ndarray, touched: np.ndarray):
        """Which of the free cells ``free_idx`` (their rows ``row_of``) lie in a connected
        component, of the graph joining each of them to its class and its Relation rows,
        that holds the class or a row of a cell of ``touched``."""
        n_cls = len(self.class_n)
        size = n_cls + len(self.row_n)
        c = self.cls[free_idx]
        flat = row_of.ravel()
        on = flat >= 0
        graph = sp.csr_array(
            (np.ones(int(on.sum()), dtype=bool), (np.tile(c, len(row_of))[on], n_cls + flat[on])),
            shape=(size, size),
        )
        _, label = connected_components(graph, directed=False)
        t_rows = self.rows_of(touched)
        marks = np.concatenate([self.cls[touched], n_cls + t_rows[t_rows >= 0]])
        hit = np.zeros(label.max(initial=0) + 1, dtype=bool)
        hit[label[marks]] = True
        return hit[label[c]]


#: networks are settled together (one max-flow) until they hold this many edges: fewer
#: calls on small instances, the memory of one network at a time on large ones
FLOW_BATCH_EDGES = 1_000_000


def _integral(v: np.ndarray) -> bool:
    return bool(np.abs(v - np.round(v)).max(initial=0.0) <= tl.FLOW_INTEGER)


class PooledFlows:
    """:func:`pooled_flow_zeros` as presolve calls it, again and again until it fixes
    nothing: a later call builds the networks only on the connected components (of the
    graph joining each free cell to its class and its Relation rows) holding a class or
    row of a cell fixed since the last call began (by that call or by any other rule).

    Why that is exact: every network of :func:`pooled_flow_zeros` is a union of pieces,
    each inside one such component, and a piece depends only on its free cells and the
    remaining totals of its classes and rows. A component none of whose classes and rows
    lost a free cell since the last call is the same set of free cells with the same
    totals, so its pieces are the same networks. The last call settled them all (it
    returned True: every network had a feasible flow), and what it decides on a piece is
    a property of the piece's polytope, not of the max-flow found (see
    :func:`settled_flows`): any cell it could fix there, it fixed, which would have
    touched the component. So the full call would fix nothing more there, and it would
    have found those pieces feasible again. The totals are still checked in full (their
    integrality and sign decide whether the flows run at all).

    >>> from maxent_privacy import MaxEntModel, Bucketized
    >>> import pandas as pd
    >>> r1 = pd.DataFrame({"pid": [0, 1, 2], "q": [0, 1, 2], "s": ["a", "a", "b"], "b": 0})
    >>> r2 = pd.DataFrame({"pid": [0, 1, 4], "q": [0, 1, 2], "s": ["a", "b", "b"], "b": 0})
    >>> model = MaxEntModel([Bucketized(r, qi=["q"], sa="s", group="b", person="pid")
    ...                      for r in (r1, r2)])
    >>> flows = PooledFlows(PooledRows.of(model.structure))
    >>> fixed = np.full(model.n_cells, np.nan)
    >>> flows(fixed), int(np.isnan(fixed).sum()) < model.n_cells, flows(fixed)
    (True, True, False)
    """

    def __init__(self, rows: PooledRows):
        self.rows = rows
        self.free_before = None  # free cells when the last call began, if it returned True

    def __call__(self, fixed: np.ndarray) -> bool | None:
        free = np.isnan(fixed)
        cells = None
        if self.free_before is not None:
            idx = np.flatnonzero(free)
            touched = np.flatnonzero(self.free_before & ~free)
            cells = idx[self.rows.near(idx, self.rows.rows_of(idx), touched)]
        out = pooled_flow_zeros(self.rows, fixed, cells)
        self.free_before = free if out is True else None
        return out


def pooled_flow_zeros(rows: PooledRows, fixed: np.ndarray, cells=None) -> bool | None:
    """Fix (in ``fixed``, NaN = free) the cells that the per-group and per-value flows
    settle: at 0, at their class's remaining size, or (a cell alone on its edge) at the
    edge's only flow. True when it fixed one, None when the remaining totals are not
    integers (max-flow capacities), False otherwise. ``cells``: the free cells to build
    the networks on (default: every free cell; see :class:`PooledFlows`)."""
    free = np.isnan(fixed)
    if not free.any():
        return False
    R, C = rows.remaining(np.where(free, 0.0, fixed))
    if not (_integral(R) and _integral(C)):
        return None
    R, C = np.round(R).astype(np.int64), np.round(C).astype(np.int64)
    if (R < 0).any() or (C < 0).any():
        return False  # contradictory: left to the solver's diagnosis
    idx = np.flatnonzero(free) if cells is None else np.asarray(cells)
    row_of = rows.rows_of(idx)
    c, cap = rows.cls[idx], R[rows.cls[idx]]
    value = np.full(len(idx), np.nan)
    n_rel = len(row_of)
    jobs = [(r, None) for r in range(n_rel)]
    jobs += [(a, b) for a in range(n_rel) for b in range(a + 1, n_rel)]
    net, batch = Network.empty(), []
    for k, (a, b) in enumerate(jobs):
        if b is None:
            e = group_network(net, c, row_of[a], R, C)
        else:
            e = value_network(net, row_of[a], row_of[b], cap, C, rows.row_release == a)
        if (e >= 0).any():
            batch.append(e)
        if not batch or (net.n_edges < FLOW_BATCH_EDGES and k + 1 < len(jobs)):
            continue
        settled = net.settled()  # the networks so far: disjoint, settled together
        if settled is None:
            return False  # infeasible: left to the solver's diagnosis
        for e in batch:
            value = _cell_values(e, *settled, cap, value)
        net, batch = Network.empty(), []
    new = ~np.isnan(value)
    if not new.any():
        return False
    fixed[idx[new]] = value[new]
    return True


def _cell_values(e, f, fixed_edge, hi, cap, value):
    """``value`` with the cells that their edge ``e`` (-1: none) settles filled in where
    still NaN: a settled edge fixes its cells when it is empty, full, or holds one cell."""
    on = e >= 0
    e = np.maximum(e, 0)
    alone = np.bincount(e[on], minlength=len(f))[e] == 1
    sure = on & fixed_edge[e] & ((f[e] == 0) | (f[e] == hi[e]) | alone)
    got = np.where(f[e] == 0, 0.0, np.where(alone, f[e], cap)).astype(float)
    return np.where(sure & np.isnan(value), got, value)


def _ranked(values: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(values, return_inverse=True)`` for values in ``range(size)``, by a mask
    instead of a sort.

    >>> [a.tolist() for a in _ranked(np.array([5, 2, 5]), 8)]
    [[2, 5], [1, 0, 1]]
    """
    seen = np.zeros(size, dtype=bool)
    seen[values] = True
    rank = np.cumsum(seen, dtype=_index_type(size)) - 1
    return np.flatnonzero(seen), rank[values]


def group_network(net: Network, c, row, R, C) -> np.ndarray:
    """One release's transportation problems (class -> value row) added to ``net``, for
    cells of classes ``c`` whose row in the release is ``row`` (-1: not in it); the edge
    of every cell (-1 for cells not in the release).

    Count propagation (rule 2 of :mod:`.support`): a group publishes flu twice and only two
    of its members can hold flu (their other groups publish it, the others' do not): the
    flu row's demand of 2 can only be met through their edges, which the residual graph
    shows settled full, so they hold flu and no other value."""
    on = row >= 0
    out = np.full(len(row), -1)
    if not on.any():
        return out
    used_c, ci = _ranked(c[on], len(R))
    used_r, ri = _ranked(row[on], len(C))
    nc, nr = len(used_c), len(used_r)
    base = net.nodes(nc + nr + 2)
    src, sink = base + nc + nr, base + nc + nr + 1
    big = int(R[used_c].sum()) + 1
    # classes and rows are distinct, but two cells of a class may share a row (joint
    # cells of placements differ by their group elsewhere): only those edges are merged
    net.edges(np.full(nc, src), base + np.arange(nc), R[used_c], R[used_c], True)
    out[on] = net.edges(base + ci, base + nc + ri, 0, R[used_c][ci])
    net.edges(base + nc + np.arange(nr), np.full(nr, sink), C[used_r], C[used_r], True)
    net.edges([sink], [src], 0, big, True)
    return out


def value_network(net: Network, ra, rb, cap, C, in_a) -> np.ndarray:
    """Per value, releases A and B (``ra``, ``rb``: the rows of the cells there, -1: not
    in it; ``in_a``: which Relation rows are A's): row of A -> row of B through the
    classes in both (a free node on the side a class is missing; ``cap``: the cells'
    class totals), added to ``net``; the edge of every cell (-1 for cells in neither).

    Rule 3 of :mod:`.support`: group g of A holds flu twice among P0, P1, P2, and P0, P1
    sit in a group h of B that holds flu once with P4. g's node supplies 2, h's node takes
    1; P2 (in A only) goes to B's free node: at most one unit passes g -> h, so P2's edge
    is settled full (P2 holds flu) and P4's edge from A's free node settled empty."""
    out = np.full(len(ra), -1)
    on = (ra >= 0) | (rb >= 0)
    if not on.any():
        return out
    # the value of a cell: its rows in A and B hold the same value; number the values by
    # the connected pieces of rows (a row of A and a row of B share a value when a cell
    # links them) - any labelling that keeps different values apart is enough
    ea, eb = ra[on], rb[on]
    seen = np.zeros(len(C), dtype=bool)
    seen[ea[ea >= 0]] = True
    seen[eb[eb >= 0]] = True
    used = np.flatnonzero(seen)
    local = np.cumsum(seen, dtype=_index_type(len(C))) - 1  # a used row's node, from ``base``
    del seen
    base = net.nodes(len(used))
    both = (ea >= 0) & (eb >= 0)
    link = sp.csr_array(
        (np.ones(int(both.sum()), dtype=bool), (local[ea[both]], local[eb[both]])),
        shape=(len(used), len(used)),
    )
    n_val, val = connected_components(link, directed=False)
    del link
    cell_val = val[local[np.where(ea >= 0, ea, eb)]]
    extra = net.nodes(4 * n_val)
    src, sink, free_a, free_b = (extra + k * n_val + np.arange(n_val) for k in range(4))
    tail = np.where(ea >= 0, base + local[np.maximum(ea, 0)], free_a[cell_val])
    head = np.where(eb >= 0, base + local[np.maximum(eb, 0)], free_b[cell_val])
    cap = cap[on]
    out[on] = net.edges(tail, head, 0, cap)
    big = int(cap.sum()) + 1
    is_a = in_a[used]
    rnode = base + np.arange(len(used))
    net.edges(src[val[is_a]], rnode[is_a], C[used[is_a]], C[used[is_a]])
    net.edges(rnode[~is_a], sink[val[~is_a]], C[used[~is_a]], C[used[~is_a]])
    net.edges(np.concatenate([src, free_b, sink]), np.concatenate([free_a, sink, src]), 0, big)
    return out
