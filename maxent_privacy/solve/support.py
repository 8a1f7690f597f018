"""Forced zeros that only several releases together decide (presolve, pooled releases).

Presolve's rules for pooled releases whose people all sit in a known group, in the order
they run, each with the example that motivates it (a *piece* is a connected component of
the graph joining each free cell to its class and its Relation rows; pieces share no row,
so each is decided on its own):

1. **Maximum Common Subset** (the model's cells, :mod:`~maxent_privacy.releases.pooled`):
   a person holds a value only if every one of their groups publishes it. Alice sits in a
   group of {flu, cancer} in release 1 and of {flu, hiv} in release 2: her only cell is flu.
2. **Count propagation per group** (:func:`.flows.group_network`, one release): a group
   publishes flu twice and only two of its members can hold flu (the others' other groups
   do not publish it): both hold flu in every world, so no other value, which leaves the
   group's other values to the others. Decided exactly, group by group, by a max-flow and
   the strongly connected components of its residual graph.
3. **Per value across two releases** (:func:`.flows.value_network`): group 0 of release 1
   holds flu twice among P0, P1, P2; P0 and P1 are in release 2 too, in one group that
   holds flu once, with P4: at most one flu among P0, P1, so P2 (seen in release 1 only)
   holds flu in every world, and P4 does not hold flu. The flu holders of release 1's
   groups travel to release 2's groups through the classes in both (a network per value
   and pair of releases), exact for one value and two releases.
4. **The support of a piece** (:class:`PieceSupport`, this module): rules 2 and 3 decide a
   piece exactly when it lies in one release, or in two releases with two values (then a
   person's share of one value is the rest of the other, and the piece is one network).
   Otherwise the counts of three or more releases can force a zero that no rule looking
   at one group or one pair of releases sees. Five people, values a and b, three
   releases: release 1 has one group {P2, P3, P0} with one b; release 2 has {P4, P3}
   with one b and {P2, P0, P1} with one b; release 3 has {P4, P0, P1} with one b. Add up
   the b-counts of release 1's and release 3's groups and subtract release 2's: 1 + 1 - 1
   - 1 = 0. Every person is counted as often with + as with -, except P0 (+1 + 1 - 1),
   so P0 holds b in no world (nor any share of b in any table) - yet every group alone
   and every pair of releases allows it. Such signed sums of rows are the dual of a linear
   program, so the piece's exact support (the cells some feasible table makes positive)
   is found by one LP (:func:`.forced_zeros.max_support`, HiGHS) on the piece alone.

Rule 4 runs once per presolve, after the flows have reached their fixed point, and only on
the pieces that need it: not on the pieces rules 2 and 3 decide exactly, and not on pieces
where iterative proportional fitting converges linearly (its residual falls by
:data:`GATE_FALL` from :data:`GATE_SWEEPS` [0] to [1] sweeps, or reaches
:data:`GATE_MET`; pieces of :data:`GATE_LARGE_CELLS` or more that fail are read again
over doubling spans of sweeps, from :data:`GATE_SWEEPS_LARGE` up to
:data:`GATE_LAST_SWEEP`), the mark of a table positive on every cell (as on
sequences whose groups hold each value once, on independent re-bucketizations and on
overlapping generalized releases with a population). The gate only saves
LPs: a piece it skips wrongly keeps its zeros for the solve's later proofs (the dual
certificate or the LP fallback), as do pieces over :data:`LP_MAX_CELLS`, those left
when :data:`LP_BUDGET` runs out, and every piece when over :data:`MAX_FREE_CELLS` cells are
free; every zero fixed here is proved by an LP. The LP looks
at the data rows only (a relaxation when facts are stated: still sound).

>>> import pandas as pd
>>> from maxent_privacy import Bucketized, MaxEntModel
>>> from maxent_privacy.solve.presolve import FixForcedCells
>>> frames = [pd.DataFrame({"pid": p, "q": 0, "s": s, "g": g}) for p, s, g in [
...     ([2, 3, 0], ["a", "b", "a"], [0, 0, 0]),
...     ([4, 3, 2, 0, 1], ["a", "b", "a", "a", "b"], [0, 0, 1, 1, 1]),
...     ([4, 0, 1], ["a", "a", "b"], [0, 0, 0])]]
>>> model = MaxEntModel([Bucketized(f, qi=["q"], sa="s", group="g", person="pid")
...                      for f in frames])
>>> red, _ = FixForcedCells().apply(model.compile())
>>> c = model.cells.assign(fixed=red.fixed)
>>> c.loc[c["cls"] == model.structure.person_class[0], ["s", "fixed"]].values.tolist()
[['a', 1.0], ['b', 0.0]]
>>> red.rules
{'rows': 0, 'flows': 0, 'support LP': 1}
"""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from .flows import PooledRows
from .forced_zeros import max_support

__all__ = [
    "GATE_FALL",
    "GATE_LARGE_CELLS",
    "GATE_LAST_SWEEP",
    "GATE_MET",
    "GATE_SWEEPS",
    "GATE_SWEEPS_LARGE",
    "LP_BATCH_CELLS",
    "LP_BUDGET",
    "LP_IPM_CELLS",
    "LP_MAX_CELLS",
    "LP_SOLVER",
    "LP_TIME_LIMIT",
    "MAX_FREE_CELLS",
    "PieceSupport",
    "exact_by_flows",
    "pieces_of",
    "scaling_converges",
    "support_zeros",
    "value_labels",
]

#: iterative proportional fitting sweeps after which the residual of a piece is read twice
GATE_SWEEPS = (20, 40)
#: a piece whose residual falls by at least this factor between the two reads converges
#: linearly (a positive table): no LP
GATE_FALL = 2.5
#: pieces of at least this many cells that fail the first reading are read again, over
#: doubling spans of sweeps (:data:`GATE_SWEEPS_LARGE`, then twice as many sweeps each
#: time, up to :data:`GATE_LAST_SWEEP`): their LP costs far more than the sweeps (two
#: overlapping Mondrian releases of ``python -m benchmarks bounds --generalized``, the
#: joining sequences of ``solvers --sequences``; ``git log -p benchmarks/RESULTS.md``).
#: Fitting that converges slowly but linearly passes in some span. A residual that decays
#: like 1 / sweeps (forced zeros) falls by only 2 in every span. Smaller pieces do not
#: gain: their LPs are cheap, and those seen did not pass by the last span.
GATE_LARGE_CELLS = 5_000
#: the first span of the longer reading (sweeps from the start): the fitting goes on from
#: the table the first reading left, so its first read is at ``GATE_SWEEPS[1]``
GATE_SWEEPS_LARGE = (GATE_SWEEPS[1], 2 * GATE_SWEEPS[1])
#: the longer reading stops here (sweeps from the start)
GATE_LAST_SWEEP = 16 * GATE_SWEEPS[1]
#: a relative row residual this small counts as met (the piece has a positive table)
GATE_MET = 1e-9
#: pieces are put together into one LP up to this many cells (fewer HiGHS calls; a
#: simplex's time grows faster than its size, so larger batches cost more)
LP_BATCH_CELLS = 1_000
#: pieces with more free cells are left to the solve's later proofs (one LP too costly)
LP_MAX_CELLS = 200_000
#: seconds per LP; an LP cut short fixes nothing
LP_TIME_LIMIT = 60.0
#: seconds for all the LPs of one presolve: pieces not reached by then are left to the
#: solve's later proofs
LP_BUDGET = 120.0
#: HiGHS's method for the support LPs (None: its choice, the dual simplex). Its
#: first-order method ("pdlp") was faster on the pieces of some sequences but stopped at
#: the time limit on others that the simplex solved in seconds;
#: an answer of it that is not clean goes to the simplex (:func:`.forced_zeros.max_support`)
LP_SOLVER = None
#: support LPs of at least this many cells go to HiGHS's interior point method (with its
#: crossover to a vertex, so every ``t`` is exactly 0 or 1): on the 53 support LPs of
#: ``python -m benchmarks solvers --sequences`` seeds 2 and 8 (joining), the simplex was
#: faster below ~1,400 cells and the IPM above, with the same zeros on all 53
LP_IPM_CELLS = 1_400
#: the rule stands aside when more cells than this are free (its graphs would cost the
#: memory of the flows' own, for pieces too large for an LP anyway)
MAX_FREE_CELLS = 2_000_000


def pieces_of(rows: PooledRows, idx: np.ndarray, row_of: np.ndarray):
    """(piece of each free cell ``idx``, 0 .. k-1; piece of each Relation row, -1 when it
    has no free cell): the connected components of the graph joining each free cell's
    class to its Relation rows (``row_of``: releases x cells, -1 where not in it).

    >>> import numpy as np, scipy.sparse as sp
    >>> rows = PooledRows(np.array([0, 0, 1, 2]), np.ones(3), np.ones(3), np.array([0, 0, 1]),
    ...                   sp.csc_array(np.array([[1, 0, 1, 0], [0, 1, 0, 0], [0, 0, 0, 1.0]])))
    >>> idx = np.arange(4)
    >>> [a.tolist() for a in pieces_of(rows, idx, rows.rows_of(idx))]
    [[0, 0, 0, 1], [0, 0, 1]]
    """
    n_cls, n_row = len(rows.class_n), len(rows.row_n)
    c = rows.cls[idx]
    flat = row_of.ravel()
    on = flat >= 0
    graph = sp.csr_array(
        (np.ones(int(on.sum()), dtype=bool), (np.tile(c, len(row_of))[on], n_cls + flat[on])),
        shape=(n_cls + n_row, n_cls + n_row),
    )
    _, label = connected_components(graph, directed=False)
    used = np.zeros(label.max(initial=0) + 1, dtype=bool)
    used[label[c]] = True
    rank = np.cumsum(used) - 1
    row_piece = np.where(used[label[n_cls:]], rank[label[n_cls:]], -1)
    seen = np.zeros(n_row, dtype=bool)
    seen[flat[on]] = True
    return rank[label[c]], np.where(seen, row_piece, -1)


def exact_by_flows(piece: np.ndarray, row_of: np.ndarray, value: np.ndarray) -> np.ndarray:
    """Per piece: whether rules 2 and 3 (:mod:`.flows`) decide its zeros exactly.

    A piece in one release is a set of transportation problems, one per group (rule 2).
    A piece in two releases whose free cells hold two values a and b: each class's b
    share is its size minus its a share, so the piece is the network of rule 3 for a
    (groups of release 1 -> classes -> groups of release 2), whose every zero the
    strongly connected components find. Anything else (three releases, or three values:
    Du and Wang's 3-index tables are not networks) is not decided by them in general.
    ``value``: a code per free cell (equal codes: the same sensitive value).

    >>> exact_by_flows(np.array([0, 0, 1, 1]), np.array([[0, 1, 2, 3], [4, 5, 6, -1]]),
    ...                np.array([0, 1, 0, 2])).tolist()
    [True, True]
    >>> exact_by_flows(np.array([0, 0, 0]), np.array([[0, 1, 2], [3, 4, 5]]),
    ...                np.array([0, 1, 2])).tolist()
    [False]
    """
    k = int(piece.max(initial=-1)) + 1
    n_rel = np.zeros(k, dtype=int)
    for r in range(len(row_of)):
        hit = np.zeros(k, dtype=bool)
        hit[piece[row_of[r] >= 0]] = True
        n_rel += hit
    pairs = np.unique(piece.astype(np.int64) * (int(value.max(initial=0)) + 1) + value)
    n_val = np.bincount(pairs // (int(value.max(initial=0)) + 1), minlength=k)
    return (n_rel <= 1) | ((n_rel == 2) & (n_val <= 2))


def scaling_converges(cls, row_of, R, C, piece, row_piece, k=None, sweeps=GATE_SWEEPS, x=None):
    """Per piece: whether iterative proportional fitting (the Relation rows of each
    release in turn, then the class rows) converges linearly on it: the largest relative
    row residual after ``sweeps[1]`` sweeps is at most ``GATE_MET`` or ``GATE_FALL`` times
    smaller than after ``sweeps[0]``.

    Fitting converges to the table of largest entropy when one with every cell positive
    exists, linearly; when the rows force cells to 0 those cells, and the residual, decay
    like 1 / sweeps. Starts from each class spread evenly over its free cells. ``piece``
    and ``row_piece`` (-1: a row left out) label the cells and rows; ``k``: the number of
    pieces (default: the largest label + 1). ``x``: the table to start from, fitted in
    place (default: each class spread evenly over its cells, a new array).

    >>> R, C = np.array([1.0, 1.0]), np.array([1.0, 1.0, 1.0, 1.0])
    >>> cls, piece = np.array([0, 0, 1, 1]), np.zeros(4, dtype=int)
    >>> scaling_converges(cls, np.array([[0, 1, 0, 1]]), R, np.array([1.0, 1.0]), piece,
    ...                   np.zeros(2, dtype=int)).tolist()   # one bucket, even: at once
    [True]
    """
    k = int(piece.max(initial=-1)) + 1 if k is None else k
    x = _spread(cls, R) if x is None else x
    # each release: its cells (None: all of them), their rows, and its rows in a piece
    # with their scale (the residual is relative to max(1, |C|))
    releases = []
    for r in row_of:
        o = None if (r >= 0).all() else np.flatnonzero(r >= 0)
        at = r if o is None else r[o]
        u = np.unique(at)
        u = u[row_piece[u] >= 0]
        releases.append((o, at, u, row_piece[u], np.maximum(1.0, np.abs(C[u]))))
    res = np.zeros((2, k))
    for sweep in range(1, sweeps[1] + 1):
        worst = np.zeros(k)
        for o, r, u, pu, scale in releases:
            xo = x if o is None else x[o]
            got = np.bincount(r, xo, len(C))
            np.maximum.at(worst, pu, np.abs(got[u] - C[u]) / scale)
            xo *= (C / np.maximum(got, 1e-300))[r]
            if o is not None:
                x[o] = xo
        x *= (R / np.maximum(np.bincount(cls, x, len(R)), 1e-300))[cls]
        if sweep == sweeps[0]:
            res[0] = worst
        if worst.max(initial=0.0) <= GATE_MET:
            return np.ones(k, dtype=bool)
    res[1] = worst
    return (res[1] <= GATE_MET) | (res[1] * GATE_FALL <= res[0])


def _spread(cls, R) -> np.ndarray:
    """The fitting's start: each class's total spread evenly over its cells."""
    return R[cls] / np.maximum(np.bincount(cls, minlength=len(R))[cls], 1)


def support_zeros(cls, row_of, R, C, cells: np.ndarray, time_limit=LP_TIME_LIMIT):
    """Which of ``cells`` (positions into ``cls``/``row_of``: whole pieces) are 0 in every
    ``x >= 0`` meeting their class rows (``R``) and Relation rows (``C``); one LP
    (:func:`.forced_zeros.max_support`). None when the LP fails or is cut short."""
    c = cls[cells]
    nodes = [c]
    offset = len(R)
    for r in row_of:
        nodes.append(np.where(r[cells] >= 0, offset + r[cells], -1))
        offset += len(C)
    node = np.concatenate(nodes)
    col = np.tile(np.arange(len(cells)), len(nodes))
    keep = node >= 0
    used, local = np.unique(node[keep], return_inverse=True)
    A = sp.csr_array((np.ones(len(local)), (local, col[keep])), shape=(len(used), len(cells)))
    rhs = np.concatenate([R] + [C] * len(row_of))[used]
    every = np.ones(len(cells), dtype=bool)
    solver = "ipm" if len(cells) >= LP_IPM_CELLS else LP_SOLVER
    support = max_support(A, rhs, None, None, every, time_limit, solver=solver)
    if support is None and solver is not None:  # not clean, or cut short: the simplex
        support = max_support(A, rhs, None, None, every, time_limit)
    return None if support is None else ~support


class PieceSupport:
    """Rule 4 as presolve calls it (see the module docstring): once per presolve, after
    the flows stop; fixes the zeros in place and returns whether it fixed one. ``rows``:
    the pooled Relation rows (:class:`.flows.PooledRows`). ``found``: cells it fixed;
    ``pieces``: how many pieces each test settled.
    """

    def __init__(self, rows: PooledRows):
        self.rows = rows
        self.done = False
        self.found = 0
        self.pieces = {
            "exact by flows": 0, "scaling converges": 0, "LP": 0, "too large": 0, "over budget": 0
        }  # fmt: skip

    def __call__(self, fixed: np.ndarray) -> bool:
        if self.done:
            return False
        self.done = True
        free = np.isnan(fixed)
        idx = np.flatnonzero(free)
        if not len(idx) or len(idx) > MAX_FREE_CELLS:
            return False
        R, C = self.rows.remaining(np.where(free, 0.0, fixed))
        if (R < 0).any() or (C < 0).any():
            return False  # contradictory: left to the solver's diagnosis
        row_of = self.rows.rows_of(idx)
        piece, row_piece = pieces_of(self.rows, idx, row_of)
        exact = exact_by_flows(piece, row_of, value_labels(row_of, len(C)))
        self.pieces["exact by flows"] += int(exact.sum())
        size = np.bincount(piece, minlength=len(exact))
        todo = ~exact & (size <= LP_MAX_CELLS)
        self.pieces["too large"] += int((~exact & ~todo).sum())
        sel = np.flatnonzero(todo[piece])
        if not len(sel):
            return False
        cls = self.rows.cls[idx[sel]]
        sub_piece = piece[sel]
        sub_rows = row_of[:, sel]
        sub_row_piece = np.where(todo[np.maximum(row_piece, 0)] & (row_piece >= 0), row_piece, -1)
        converge = _gate(cls, sub_rows, (R, C), sub_piece, sub_row_piece, todo, size)
        lp = todo & ~converge
        self.pieces["scaling converges"] += int((todo & converge).sum())
        self.pieces["LP"] += int(lp.sum())
        zeros = []
        start = time.perf_counter()
        for batch in _batches(np.flatnonzero(lp), size):
            left = LP_BUDGET - (time.perf_counter() - start)
            if left <= 0:
                self.pieces["over budget"] += len(batch)
                continue
            cells = np.flatnonzero(np.isin(piece, batch))
            out = support_zeros(self.rows.cls[idx], row_of, R, C, cells, min(LP_TIME_LIMIT, left))
            if out is not None:
                zeros.append(idx[cells[out]])
        zeros = np.concatenate(zeros) if zeros else np.zeros(0, dtype=int)
        fixed[zeros] = 0.0
        self.found += len(zeros)
        return bool(len(zeros))


def _gate(cls, row_of, RC, piece, row_piece, todo, size) -> np.ndarray:
    """Per piece: whether fitting converges linearly on it (:func:`scaling_converges`).
    The pieces of at least :data:`GATE_LARGE_CELLS` cells that fail the first reading are
    read again over doubling spans of sweeps, from :data:`GATE_SWEEPS_LARGE` to
    :data:`GATE_LAST_SWEEP`. Each span fits on from where the last one stopped (pieces
    share no row, so each is fitted on its own), on the pieces that have not passed yet."""
    k = len(todo)
    x = _spread(cls, RC[0])
    converge = scaling_converges(cls, row_of, *RC, piece, row_piece, k, x=x)
    again = todo & ~converge & (size >= GATE_LARGE_CELLS)
    start, span = GATE_SWEEPS_LARGE
    span -= start
    while again.any() and start + span <= GATE_LAST_SWEEP:
        on = np.flatnonzero(again[piece])
        rp = np.where((row_piece >= 0) & again[np.maximum(row_piece, 0)], row_piece, -1)
        # read the table the last span left, then ``span`` sweeps later
        xs = x[on]
        late = scaling_converges(cls[on], row_of[:, on], *RC, piece[on], rp, k, (1, 1 + span), xs)
        x[on] = xs
        converge |= again & late
        again &= ~late
        start, span = start + span, 2 * span
    return converge


def value_labels(row_of: np.ndarray, n_rows: int) -> np.ndarray:
    """A label per cell (``row_of``: its Relation row in each release, -1 where not in
    it) that cells of different sensitive values never share: the connected components of
    the rows, two rows joined when a cell lies in both (a cell's rows hold its value).
    Cells of one value may get several labels.

    >>> value_labels(np.array([[0, 1, 1], [2, -1, 3]]), 4).tolist()
    [0, 1, 1]
    """
    k = row_of.shape[1]
    first = row_of[np.argmax(row_of >= 0, axis=0), np.arange(k)]
    tails, heads = [], []
    for r in row_of:
        on = r >= 0
        tails.append(first[on])
        heads.append(r[on])
    tail, head = np.concatenate(tails), np.concatenate(heads)
    graph = sp.csr_array((np.ones(len(tail), dtype=bool), (tail, head)), shape=(n_rows, n_rows))
    _, label = connected_components(graph, directed=False)
    return label[first]


def _batches(pieces: np.ndarray, size: np.ndarray):
    """``pieces`` in runs of at most :data:`LP_BATCH_CELLS` cells (a larger piece alone)."""
    run, cells = [], 0
    for p in pieces:
        if run and cells + size[p] > LP_BATCH_CELLS:
            yield np.array(run)
            run, cells = [], 0
        run.append(p)
        cells += size[p]
    if run:
        yield np.array(run)
