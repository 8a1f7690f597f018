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

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components, maximum_flow

from . import tolerances as tl

__all__ = ["Network", "PooledRows", "circulation_zeros", "pooled_flow_zeros", "settled_flows"]


def circulation_zeros(n_nodes, tail, head, lo, hi) -> np.ndarray | None:
    """Which edges carry 0 in every feasible circulation ``lo <= f <= hi`` (integers,
    flow conserved at every node); None when there is no feasible circulation.
    See :func:`settled_flows`."""
    out = settled_flows(n_nodes, tail, head, lo, hi)
    return None if out is None else out[1] & (out[0] == 0)


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
    tail, head = np.asarray(tail, dtype=np.int64), np.asarray(head, dtype=np.int64)
    lo, hi = np.asarray(lo, dtype=np.int64), np.asarray(hi, dtype=np.int64)
    excess = np.bincount(head, lo, n_nodes) - np.bincount(tail, lo, n_nodes)
    excess = np.round(excess).astype(np.int64)
    src, sink = n_nodes, n_nodes + 1
    into, out = np.flatnonzero(excess > 0), np.flatnonzero(excess < 0)
    rows = np.concatenate([tail, np.full(len(into), src), out])
    cols = np.concatenate([head, into, np.full(len(out), sink)])
    cap = np.concatenate([hi - lo, excess[into], -excess[out]])
    graph = sp.csr_array((cap, (rows, cols)), shape=(n_nodes + 2, n_nodes + 2))
    flow = maximum_flow(graph, src, sink, method="dinic")
    if flow.flow_value != excess[into].sum():
        return None
    f = lo + np.asarray(sp.csr_array(flow.flow)[tail, head]).ravel().astype(np.int64)
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

    def nodes(self, k: int) -> int:
        """Add ``k`` nodes; the first one's index."""
        first = self.n_nodes
        self.n_nodes += k
        return first

    def edges(self, tail, head, lo, hi) -> np.ndarray:
        """Add edges (merged by (tail, head): bounds added up); their indices."""
        tail, head = np.asarray(tail, dtype=np.int64), np.asarray(head, dtype=np.int64)
        key = tail * (self.n_nodes + 1) + head
        uniq, first, inv = np.unique(key, return_index=True, return_inverse=True)
        start = sum(len(t) for t in self.tail)
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
        out = settled_flows(self.n_nodes, *cat)
        return None if out is None else (*out, cat[3])


@dataclass(frozen=True)
class PooledRows:
    """The data rows of pooled releases where everyone sits in a known group.

    ``cls`` (class of each cell), ``class_n``; ``row_n`` (count of each Relation row),
    ``row_release``; ``row_of`` (releases x cells: the Relation row of the cell in that
    release, -1 when its class is not in the release).
    """

    cls: np.ndarray
    class_n: np.ndarray
    row_n: np.ndarray
    row_release: np.ndarray
    row_of: np.ndarray

    @classmethod
    def of(cls, structure) -> PooledRows | None:
        """The rows of a pooled :class:`~maxent_privacy.structure.Structure`, or None
        when some group is uncertain (placement cells) or it is one release."""
        s = structure
        if s.kind != "pooled" or (s.placement_of >= 0).any() or s.link_matrix.shape[0]:
            return None
        rel = s.group_values["release"].to_numpy()
        A = sp.coo_array(s.sa_matrix)
        small = np.int32 if A.shape[0] < 2**31 else np.int64  # releases x cells: keep it lean
        row_of = np.full((int(rel.max()) + 1, s.n_cells), -1, dtype=small)
        row_of[rel[A.row], A.col] = A.row
        return cls(s.cell_class, s.class_n, s.sa_n, rel, row_of)


def _integral(v: np.ndarray) -> bool:
    return bool(np.abs(v - np.round(v)).max(initial=0.0) <= tl.FLOW_INTEGER)


def pooled_flow_zeros(rows: PooledRows, fixed: np.ndarray) -> bool | None:
    """Fix (in ``fixed``, NaN = free) the cells that the per-group and per-value flows
    settle: at 0, at their class's remaining size, or (a cell alone on its edge) at the
    edge's only flow. True when it fixed one, None when the remaining totals are not
    integers (max-flow capacities), False otherwise."""
    free = np.isnan(fixed)
    if not free.any():
        return False
    vals = np.where(free, 0.0, fixed)
    R = rows.class_n - np.bincount(rows.cls, vals, len(rows.class_n))
    C = rows.row_n.copy()
    for r_of in rows.row_of:
        on = r_of >= 0
        C -= np.bincount(r_of[on], vals[on], len(C))
    if not (_integral(R) and _integral(C)):
        return None
    R, C = np.round(R).astype(np.int64), np.round(C).astype(np.int64)
    if (R < 0).any() or (C < 0).any():
        return False  # contradictory: left to the solver's diagnosis
    net = Network.empty()
    n_rel = len(rows.row_of)
    edge_of = [group_network(net, rows, R, C, r, free) for r in range(n_rel)]
    for a in range(n_rel):
        for b in range(a + 1, n_rel):
            edge_of.append(value_network(net, rows, R, C, a, b, free))
    settled = net.settled()
    if settled is None:
        return False  # infeasible: left to the solver's diagnosis
    f, fixed_edge, hi = settled
    idx = np.flatnonzero(free)
    cap = R[rows.cls[idx]]
    value = np.full(len(idx), np.nan)
    for e in edge_of:
        on = e >= 0
        e = np.maximum(e, 0)
        alone = np.bincount(e[on], minlength=len(f))[e] == 1
        # a settled edge fixes its cells when it is empty, full, or holds one cell
        sure = on & fixed_edge[e] & ((f[e] == 0) | (f[e] == hi[e]) | alone)
        got = np.where(f[e] == 0, 0.0, np.where(alone, f[e], cap)).astype(float)
        value = np.where(sure & np.isnan(value), got, value)
    new = ~np.isnan(value)
    if not new.any():
        return False
    fixed[idx[new]] = value[new]
    return True


def group_network(net: Network, rows: PooledRows, R, C, r: int, free) -> np.ndarray:
    """Release ``r``'s transportation problems (class -> value row) added to ``net``; the
    edge of every free cell (-1 for cells whose class is not in release ``r``)."""
    idx = np.flatnonzero(free)
    row = rows.row_of[r, idx]
    on = row >= 0
    out = np.full(len(idx), -1)
    if not on.any():
        return out
    used_c, ci = np.unique(rows.cls[idx[on]], return_inverse=True)
    used_r, ri = np.unique(row[on], return_inverse=True)
    nc, nr = len(used_c), len(used_r)
    base = net.nodes(nc + nr + 2)
    src, sink = base + nc + nr, base + nc + nr + 1
    big = int(R[used_c].sum()) + 1
    net.edges(np.full(nc, src), base + np.arange(nc), R[used_c], R[used_c])
    out[on] = net.edges(base + ci, base + nc + ri, 0, R[used_c][ci])
    net.edges(base + nc + np.arange(nr), np.full(nr, sink), C[used_r], C[used_r])
    net.edges([sink], [src], 0, big)
    return out


def value_network(net: Network, rows: PooledRows, R, C, a: int, b: int, free) -> np.ndarray:
    """Per value, releases ``a`` and ``b``: row of A -> row of B through the classes in
    both (a free node on the side a class is missing), added to ``net``; the edge of every
    free cell (-1 for cells in neither)."""
    idx = np.flatnonzero(free)
    ra, rb = rows.row_of[a, idx], rows.row_of[b, idx]
    out = np.full(len(idx), -1)
    on = (ra >= 0) | (rb >= 0)
    if not on.any():
        return out
    # the value of a cell: its rows in A and B hold the same value; number the values by
    # the connected pieces of rows (a row of A and a row of B share a value when a cell
    # links them) - any labelling that keeps different values apart is enough
    used = np.unique(np.concatenate([ra[on], rb[on]]))
    used = used[used >= 0]
    node_of_row = np.full(len(rows.row_n), -1)
    base = net.nodes(len(used))
    node_of_row[used] = base + np.arange(len(used))
    # the pieces (values) of the rows: one src, sink, free-A and free-B node per piece
    ea, eb = ra[on], rb[on]
    both = (ea >= 0) & (eb >= 0)
    link = sp.csr_array(
        (np.ones(int(both.sum())), (node_of_row[ea[both]] - base, node_of_row[eb[both]] - base)),
        shape=(len(used), len(used)),
    )
    n_val, val = connected_components(link, directed=False)
    cell_val = val[node_of_row[np.where(ea >= 0, ea, eb)] - base]
    extra = net.nodes(4 * n_val)
    src, sink, free_a, free_b = (extra + k * n_val + np.arange(n_val) for k in range(4))
    tail = np.where(ea >= 0, node_of_row[np.maximum(ea, 0)], free_a[cell_val])
    head = np.where(eb >= 0, node_of_row[np.maximum(eb, 0)], free_b[cell_val])
    cap = R[rows.cls[idx[on]]]
    out[on] = net.edges(tail, head, 0, cap)
    big = int(cap.sum()) + 1
    is_a = rows.row_release[used] == a
    rnode = base + np.arange(len(used))
    net.edges(src[val[is_a]], rnode[is_a], C[used[is_a]], C[used[is_a]])
    net.edges(rnode[~is_a], sink[val[~is_a]], C[used[~is_a]], C[used[~is_a]])
    net.edges(np.concatenate([src, free_b, sink]), np.concatenate([free_a, sink, src]), 0, big)
    return out
