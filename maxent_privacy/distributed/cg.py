"""A component too big for one worker: Newton on the dual, steps by conjugate gradients
computed partition by partition; the Hessian is never formed.

The dual of :mod:`maxent_privacy.solve.newton` with the record classes eliminated:
``x_j = R_c w_j / W_c`` with ``w_j = n_j exp(-(O'lam)_j)``, gradient ``b - O x``,
Hessian ``H = O P O'`` with ``P_c = diag(x_c) - x_c x_c' / R_c``. Every sum over cells
splits over partitions of the classes (a class and its cells stay in one partition):

* a partition (:class:`Block`, built on the worker from its classes) holds per cell the
  class, ``log n`` and its Relation row in each release, as positions among the
  component's rows; ``O'v`` is a gather, ``O u`` a ``bincount``;
* at each Newton iterate every partition keeps its ``x`` (a future, on its worker) and
  gives ``O x`` and ``sum_c R_c log W_c``; products ``H v = O P O' v`` are computed
  the same way; a vector the partitions need is sent to each worker once and sliced
  there, and the partitions' parts are added up on the workers
  (:class:`~.partitions.Partitions`): the client receives one vector per product;
* the preconditioner is block Jacobi over the buckets (a bucket's rows couple only
  through the classes in it): each partition adds the ``P_c`` of its classes into its
  worker's sum of the buckets' dense blocks; the sums are added up on the workers,
  inverted (on the client when small, else on a worker) and applied there;
* one row per bucket is implied by the class rows (its multiplier stays 0);
* the certificate: the residual of every row, the entropy (a sum over partitions) and the
  dual bound ``phi``; their gap.

The client holds the vectors over the component's Relation rows (the multipliers, the
right side, the residual and the conjugate-gradient vectors: about fifteen floats per row
at the peak, three integers per bucket) and never a vector over cells, nor one per
partition. This path has no presolve: a component in which the data
force some cells to 0 makes Newton stall (cells going to 0, multipliers growing); it is
then stopped with a :class:`~maxent_privacy.errors.SolverFailed` naming the component
(solve it on one worker, ``max_worker_cells``), never a wrong answer.

>>> classes = pd.DataFrame({"cls": [0, 1], "n": [1, 1], "mask": [3, 3], "comp": [0, 0],
...                         "m0": [3, 3], "o0": [0, 0], "b0": [0, 0]})
>>> block = Block.of(classes, np.array([0, 1]), 1)
>>> x, _ = _state(block, np.zeros(2))
>>> x.tolist(), block.Ox(x).tolist()
([0.5, 0.5, 0.5, 0.5], [1.0, 1.0])
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..errors import SolverFailed
from ..numerics import entropy_terms
from ..solve import tolerances as tl
from .build import explode_cells, popcount
from .output import risk_rows, write_part
from .partitions import INLINE_BYTES, Partitions
from .releases import compute, persist

__all__ = ["Block", "newton_cg", "solve_giant"]

#: Newton stops at this residual (relative) and gap (per record), as the in-memory one
NEWTON_TOL = tl.NEWTON_TOL
#: cells of a partition of a component solved by Newton-CG (about)
CG_PARTITION_CELLS = 500_000
#: conjugate-gradient iterations per Newton step at most
CG_MAX_ITER = 300


#: the index dtype of a partition's arrays (a partition holds ~CG_PARTITION_CELLS cells)
INDEX = np.int32


@dataclass
class Block:
    """One partition's cells (grouped by class): ``cls`` (local class, 0..C-1, in runs
    starting at ``starts``), class sizes ``R`` (the base measure of each of the class's
    cells), and the incidence of cells and rows as pairs ``(cell, row)`` (one per release
    the cell's class is in). ``rows``: the component's rows this partition touches
    (positions among the component's ``m`` rows); ``row`` indexes them. Vectors over rows
    come in and go out over ``rows`` only. Per cell it holds 6 bytes and 8 per pair (32-bit
    indices, a 16-bit value code): the partitions of a giant component are what the workers
    keep hot for the whole solve."""

    cls: np.ndarray
    starts: np.ndarray
    R: np.ndarray
    cell: np.ndarray
    row: np.ndarray
    rows: np.ndarray
    m: int
    cls_id: np.ndarray  # global class number of each local class
    s: np.ndarray  # value code of each cell

    @classmethod
    def of(cls_, classes: pd.DataFrame, row_ids: np.ndarray, R: int) -> Block:
        cells = explode_cells(classes, R)
        ids = cells["cls"].to_numpy(np.int64)
        if len(ids) >= np.iinfo(INDEX).max:
            raise ValueError(f"a partition of {len(ids):,} cells is past 32-bit indices")
        new = np.r_[True, ids[1:] != ids[:-1]] if len(ids) else np.zeros(0, bool)
        local = np.cumsum(new) - 1
        starts = np.flatnonzero(new)
        at = np.stack([cells[f"row{r}"].to_numpy() for r in range(R)], axis=1)
        has = at >= 0
        cell = np.nonzero(has)[0]
        rows, row = np.unique(np.searchsorted(row_ids, at[has]), return_inverse=True)
        del at, has
        return cls_(
            cls=local.astype(INDEX),
            starts=starts.astype(INDEX),
            R=cells["n"].to_numpy(float)[starts],
            cell=cell.astype(INDEX),
            row=row.ravel().astype(INDEX),
            rows=rows.astype(np.int64),
            m=len(row_ids),
            cls_id=ids[starts],
            s=cells["s"].to_numpy(np.int16),
        )

    def Ot(self, v: np.ndarray) -> np.ndarray:
        """``O'v`` over the cells (``v`` over ``rows``)."""
        return np.bincount(self.cell, weights=v[self.row], minlength=len(self.cls))

    def O(self, u: np.ndarray) -> np.ndarray:  # noqa: E743 - the matrix's name
        """``O u`` over ``rows``."""
        return np.bincount(self.row, weights=u[self.cell], minlength=len(self.rows))

    def state(self, lam: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(x, log W)`` at ``lam``."""
        # the base measure n_c is one number per class: it cancels in x and comes back
        # in log W as log n_c
        z = -self.Ot(lam)
        C = len(self.R)
        zmax = np.maximum.reduceat(z, self.starts) if C else np.zeros(0)
        w = np.exp(z - zmax[self.cls])
        W = np.bincount(self.cls, weights=w, minlength=C)
        x = self.R[self.cls] * w / W[self.cls]
        return x, np.log(W) + zmax + np.log(self.R)

    def Ox(self, x: np.ndarray) -> np.ndarray:
        return self.O(x)

    def Hv(self, x: np.ndarray, v: np.ndarray) -> np.ndarray:
        """``O P O' v`` (this partition's share)."""
        xu = x * self.Ot(v)
        per_class = np.bincount(self.cls, weights=xu, minlength=len(self.R)) / self.R
        return self.O(xu - x * per_class[self.cls])

    def blocks(self, x: np.ndarray, layout: dict) -> np.ndarray:
        """This partition's share of every bucket's dense block of H (flat)."""
        at, coef = self.entries(x, layout)
        return np.bincount(at, weights=coef, minlength=layout["size"])

    def entries(self, x: np.ndarray, layout: dict) -> tuple[np.ndarray, np.ndarray]:
        """This partition's share of the buckets' dense blocks of H, as pairs (flat
        position, value); a position may come more than once (the values add up).
        Classes of one cell add nothing (x = R there: ``P_c = 0``)."""
        bucket, pos, off, k = layout["bucket"], layout["pos"], layout["off"], layout["k"]
        size = np.diff(np.r_[self.starts, len(self.cls)])
        multi = size > 1
        starts = np.r_[0, np.cumsum(size[multi])]
        keep = np.repeat(multi, size)
        idx = np.flatnonzero(keep)  # the cells of classes of several cells, in order
        first, second = _pairs(starts)
        first, second = idx[first], idx[second]
        coef = -x[first] * x[second] / self.R[self.cls[first]]
        coef = np.where(first == second, coef + x[first], coef)
        # each cell's row in each release: pairs (cell, row) are sorted by cell
        ats, coefs = [np.zeros(0, np.int64)], [np.zeros(0)]
        n_rel = np.bincount(self.cell, minlength=len(self.cls))
        at = np.r_[0, np.cumsum(n_rel)]
        for r in range(int(n_rel.max(initial=0))):
            ok = (n_rel[first] > r) & (n_rel[second] > r)
            a = self.rows[self.row[at[first[ok]] + r]]
            b = self.rows[self.row[at[second[ok]] + r]]
            bk = bucket[a]
            ats.append(off[bk] + pos[a] * k[bk] + pos[b])
            coefs.append(coef[ok])
        return np.concatenate(ats), np.concatenate(coefs)

    def entropy(self, x: np.ndarray) -> float:
        return float(entropy_terms(x, self.R[self.cls]).sum())

    def posterior(self, x: np.ndarray, values: list) -> pd.DataFrame:
        """One row per class: ``cls`` and P(value | class) per value (``str``)."""
        p = np.zeros((len(self.R), len(values)))
        p[self.cls, self.s] = x / self.R[self.cls]
        out = pd.DataFrame({"cls": self.cls_id})
        for j, v in enumerate(values):
            out[str(v)] = p[:, j]
        return out


def _block_bytes(block: Block) -> int:
    """What a :class:`Block` holds, for Dask's memory manager (which would otherwise count
    a few dozen bytes for it and see the rest as unmanaged memory)."""
    return 64 + sum(v.nbytes for v in vars(block).values() if isinstance(v, np.ndarray))


try:  # registered wherever a Block is unpickled: on the workers too
    from dask.sizeof import sizeof as _sizeof

    _sizeof.register(Block)(_block_bytes)
except ImportError:  # pragma: no cover - without Dask no memory manager to tell
    pass


def _pairs(starts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every ordered pair (p, q) of cells of the same class (``starts``: class offsets)."""
    k = np.diff(starts)
    first = np.repeat(np.arange(starts[-1]), np.repeat(k, k))
    base = np.repeat(starts[:-1], k * k)
    within = np.arange(len(first)) - np.repeat(np.cumsum(k * k) - k * k, k * k)
    return first, base + within % np.repeat(k, k * k)


# ------------------------------------------------------------------ worker functions
def _state(block: Block, lam):
    """``(x, log W)`` at ``lam`` (a vector over the component's rows)."""
    return block.state(lam[block.rows])


def _ox_phi(block: Block, st):
    """``O x`` (a part over the partition's rows), then ``sum_c R_c log W_c`` and the
    number of cells next to 0."""
    x = st[0]
    small = np.count_nonzero(x < tl.NEWTON_SETTLED * block.R[block.cls])
    return block.rows, block.Ox(x), np.array([np.sum(block.R * st[1]), small])


def _phi_part(block: Block, st) -> float:
    return float(np.sum(block.R * st[1]))


def _hv(block: Block, st, v):
    """This partition's part of ``H v`` (``v`` over the component's rows)."""
    return block.rows, block.Hv(st[0], v[block.rows]), None


def _block_entries(block: Block, st, layout):
    """This partition's entries of the bucket blocks (positions in the flat blocks)."""
    at, coef = block.entries(st[0], layout)
    return at, coef, None


def _entropy(block: Block, st) -> float:
    return block.entropy(st[0])


def _invert(flat: np.ndarray, layout: dict) -> list:
    """The inverse of every bucket's block, its implied (last) row left out."""
    k, off = layout["k"], layout["off"]
    out = []
    for size in np.unique(k):
        which = np.flatnonzero(k == size)
        idx = off[which][:, None] + np.arange(size * size)[None, :]
        stack = flat[idx].reshape(len(which), size, size)
        stack[:, -1, :] = 0.0
        stack[:, :, -1] = 0.0
        stack[:, -1, -1] = 1.0
        inv = np.linalg.pinv(stack, hermitian=True)
        inv[:, -1, :] = 0.0
        inv[:, :, -1] = 0.0
        out.append((which, inv))
    return out


def _apply(inverse: list, layout: dict, r: np.ndarray) -> np.ndarray:
    z = np.zeros_like(r)
    first = layout["first"]
    for which, inv in inverse:
        size = inv.shape[1]
        idx = first[which][:, None] + np.arange(size)[None, :]
        z[idx] = np.einsum("bij,bj->bi", inv, r[idx])
    return z


#: block-Jacobi inverses up to this many bytes are made and applied on the client;
#: larger ones on the worker that holds them
CLIENT_BLOCKS_BYTES = 32 * 2**20


class _Cluster(Partitions):
    """The component's partitions (:class:`Block`) on the workers, ``m`` rows; ``layout``:
    a future of the bucket blocks' layout (:func:`_layout`, without ``keep``)."""

    def __init__(self, client, blocks, m: int, layout=None):
        super().__init__(client, blocks)
        self.m, self.layout = m, layout
        self.small = 0  # cells next to 0 at the last state

    def state(self, lam):
        """Each partition's state (kept on its worker), ``O x``, ``sum R log W``."""
        st = self.map(_state, args=(self.share(lam),))
        acc = self.reduce(_ox_phi, st, size=self.m, extra=2)
        self.small = int(acc[self.m + 1])
        return st, acc[: self.m], float(acc[self.m])

    def hv(self, st, v):
        """``H v``, a sum over the partitions."""
        return self.reduce(_hv, st, args=(self.share(v),), size=self.m)

    def pairs(self, fn, st):
        """The sum over partitions of a number ``fn(block, state)``."""
        return self.total(fn, st)

    def preconditioner(self, st, layout: dict):
        """Block Jacobi at the states ``st``: a function ``r -> z``. The blocks are added
        up on the workers; inverted and applied on the client when small, else on a
        worker (``layout``: the client's :func:`_bucket_layout`)."""
        client = self.client
        sums = self.reduce(_block_entries, st, args=(self.layout,), size=layout["size"],
                           fetch=False)  # fmt: skip
        if layout["size"] * 8 <= CLIENT_BLOCKS_BYTES:
            inverse = _invert(sums.result(), layout)
            return lambda v: _apply(inverse, layout, v)
        inverse = client.submit(_invert, sums, self.layout, pure=False)

        def precondition(v):
            v = v if v.nbytes <= INLINE_BYTES else client.scatter(v, direct=True, hash=False)
            return client.submit(_apply, inverse, self.layout, v, pure=False).result()

        return precondition


def _layout(rows: pd.DataFrame) -> dict:
    """Bucket blocks over the component's rows (sorted by row: a bucket's rows are
    consecutive): each row's bucket and place in it, each bucket's size and offsets, and
    ``keep`` (every row but each bucket's last)."""
    bucket = pd.factorize(rows["bucket"].to_numpy())[0]
    k = np.bincount(bucket)
    first = np.r_[0, np.cumsum(k)[:-1]]
    pos = np.arange(len(rows)) - first[bucket]
    off = np.r_[0, np.cumsum(k * k)[:-1]]
    keep = pos != k[bucket] - 1
    return {"bucket": bucket, "pos": pos, "k": k, "first": first, "off": off,
            "size": int((k * k).sum()), "keep": keep}  # fmt: skip


def _bucket_layout(rows: pd.DataFrame) -> tuple[np.ndarray, dict]:
    """What the client needs of the component's rows (made on a worker): the right side
    (the rows' counts) and the layout without the per-row ``bucket`` and ``pos``."""
    layout = _layout(rows)
    del layout["bucket"], layout["pos"]
    return rows["n"].to_numpy(dtype=float), layout


class NotSettled(Exception):
    """Newton-CG stopped short of the tolerance (cells going to 0, or no progress)."""

    def __init__(self, residual: float, iterations: int, small: int = 0):
        near = f" with {small} cells going to 0" if small else ""
        super().__init__(f"residual {residual:.1e} after {iterations} Newton steps{near}")
        self.residual, self.iterations = residual, iterations


def newton_cg(
    cluster: _Cluster,
    b: np.ndarray,
    layout: dict,
    N: float,
    tol: float = NEWTON_TOL,
    max_iter: int = 100,
    cg_max_iter: int = CG_MAX_ITER,
    verbose: bool = False,
):
    """Newton's method on the dual over the cluster's partitions (see the module);
    ``b``: the component's row counts, ``layout``: :func:`_bucket_layout` of its rows.

    Returns ``(lam, states, O x, record)``; raises :class:`NotSettled` when the residual
    stops falling or ``max_iter`` steps are not enough."""
    keep = layout["keep"]
    scale = np.maximum(1.0, np.abs(b))
    lam = np.zeros(len(b))
    for _ in range(3):  # iterative scaling first, as the in-memory solver starts
        _, ox, _ = cluster.state(lam)
        ok = (ox > 0) & (b > 0) & keep
        lam[ok] += np.log(ox[ok] / b[ok]) / 3.0
    st, ox, rlogw = cluster.state(lam)
    phi = float(lam @ b) + rlogw
    cg_total, history, res = 0, [], np.inf
    for it in range(1, max_iter + 1):
        r = ox - b
        res = float(np.max(np.abs(r) / scale, initial=0.0))
        gap = float(lam @ (b - ox))
        history.append(res)
        if verbose:
            print(f"newton-cg {it - 1:3d}: residual {res:.2e} gap {gap:+.2e} phi {phi:.10g}")
        if res <= tol and abs(gap) <= tol * max(1.0, N):
            record = {"iterations": it - 1, "cg_iterations": cg_total, "rounds": cluster.calls}
            return lam, st, ox, record
        if it > 12 and res > 0.5 * history[-11]:
            raise NotSettled(res, it - 1)  # no progress in 10 steps
        if it >= 5 and cluster.small and res > 0.2 * history[-2]:
            raise NotSettled(res, it - 1, cluster.small)  # slow, with cells going to 0
        precondition = cluster.preconditioner(st, layout)
        rhs = np.where(keep, r, 0.0)
        d, k = _pcg(cluster, st, precondition, rhs, min(0.1, res**0.5), cg_max_iter, keep)
        cg_total += k
        dec = float(r @ d)
        t = 1.0
        for _ in range(30):
            trial = lam + t * d
            st_t, ox_t, rlogw_t = cluster.state(trial)
            phi_t = float(trial @ b) + rlogw_t
            res_t = float(np.max(np.abs(ox_t - b) / scale, initial=0.0))
            fine = dec <= 1e-11 * max(1.0, abs(phi))
            if (res_t <= res) if fine else (phi_t <= phi - 1e-4 * t * dec + 1e-13 * abs(phi)):
                break
            t *= 0.5
        lam, st, ox, phi = trial, st_t, ox_t, phi_t
    raise NotSettled(res, max_iter)


def _pcg(cluster, st, precondition, rhs, rtol, max_iter, keep):
    """Preconditioned conjugate gradients for ``H d = rhs`` on the kept rows."""
    d = np.zeros_like(rhs)
    r = rhs.copy()
    norm0 = float(np.linalg.norm(r))
    if norm0 == 0:
        return d, 0
    z = precondition(r)
    p = z.copy()
    rz = float(r @ z)
    k = 0
    while k < max_iter:
        k += 1
        Hp = np.where(keep, cluster.hv(st, p), 0.0)
        pHp = float(p @ Hp)
        if pHp <= 0:
            break
        alpha = rz / pHp
        d += alpha * p
        r -= alpha * Hp
        if float(np.linalg.norm(r)) <= rtol * norm0:
            break
        z = precondition(r)
        rz_new = float(r @ z)
        p = z + (rz_new / rz) * p
        rz = rz_new
    return d, k


# ------------------------------------------------------------------ one giant component
def _rlogr(block: Block, st) -> float:
    R = block.R
    return float(np.sum(R * np.log(R)))


def _posterior(block: Block, st, values: list) -> pd.DataFrame:
    return block.posterior(st[0], values)


def _rows_of_comp(part: pd.DataFrame, labels: np.ndarray, comp: int) -> pd.DataFrame:
    here = labels[part["bucket"].to_numpy(dtype=np.int64)] == comp if len(part) else []
    return part.loc[here, ["row", "bucket", "n"]]


def _persons_of_comp(part: pd.DataFrame, labels: np.ndarray, comp: int, R: int):
    b = part[[f"b{r}" for r in range(R)]].to_numpy(dtype=np.int64)
    first = b[np.arange(len(b)), np.argmax(b >= 0, axis=1)] if len(b) else np.zeros(0, int)
    here = labels[first] == comp if len(first) else np.zeros(0, dtype=bool)
    return part.loc[here]


def _write_people(part, k, comp, qi, values, threshold, folder) -> int:
    """Posterior and risk parts of one partition of a giant component's people."""
    if not len(part):
        return 0
    post = part[["person", *[str(v) for v in values]]].reset_index(drop=True)
    name = f"cg-{comp}-{k:05d}"
    write_part(folder / "posterior", name, post)
    write_part(folder / "risk", name, risk_rows(post, part[qi], values, threshold))
    return 1


def _setup(s, comp: int, client, partitions):
    """The component's partitions as :class:`Block` futures on the workers
    (:class:`_Cluster`), with its row counts ``b`` and bucket layout on the client."""
    import dask

    R = s.n_releases
    classes = s.classes[s.classes["comp"] == comp]
    if not partitions:  # about CG_PARTITION_CELLS cells a partition
        (cells,) = compute(client, classes["mask"].map_partitions(_cell_count).sum())
        partitions = max(classes.npartitions, -(-int(cells) // CG_PARTITION_CELLS))
    if partitions != classes.npartitions:
        classes = classes.repartition(npartitions=int(partitions))
    classes = persist(client, classes)
    # the component's rows, sorted, on a worker (a lost copy is made again from the
    # files); the client gets the counts and the per-bucket layout only
    meta = s.rows._meta[["row", "bucket", "n"]]
    parts = s.rows.map_partitions(_rows_of_comp, s.labels, comp, meta=meta).to_delayed()
    (rows_f,) = client.compute([dask.delayed(_sorted_rows)(*parts)])
    b, layout = client.submit(_bucket_layout, rows_f, pure=False).result()
    layout_f = client.submit(_layout_of, rows_f, pure=False)
    row_ids = client.submit(_row_ids, rows_f, pure=False)
    frames = client.compute(classes.to_delayed())
    blocks = [client.submit(Block.of, f, row_ids, R, pure=False) for f in frames]
    _wait(blocks)
    return _Cluster(client, blocks, len(b), layout_f), b, layout


def _wait(futures) -> None:
    from distributed import wait

    wait(futures)
    for f in futures:
        if f.status == "error":
            f.result()  # raises the task's error


def _write_giant(s, comp: int, cluster: _Cluster, st, folder, threshold) -> int:
    """The people's posterior and risk parts of component ``comp`` (by the workers):
    each class's posterior joined to its people on the cluster."""
    import dask
    import dask.dataframe as dd

    posts = cluster.map(_posterior, st, args=(s.values,))
    meta_p = pd.DataFrame({"cls": np.zeros(0, np.int64), **{str(v): np.zeros(0) for v in s.values}})
    class_post = dd.from_delayed(posts, meta=meta_p, verify_meta=False)
    R = s.n_releases
    people = s.persons.map_partitions(_persons_of_comp, s.labels, comp, R, meta=s.persons._meta)
    people = people[["person", *s.qi, "cls"]].merge(class_post, on="cls", how="left")
    writes = [
        dask.delayed(_write_people)(part, k, comp, s.qi, s.values, threshold, folder)
        for k, part in enumerate(people.to_delayed())
    ]
    return sum(compute(cluster.client, *writes))


def solve_giant(s, comp: int, folder, client, tol, threshold, partitions=None, options=None):
    """Solve component ``comp`` of structure ``s`` by :func:`newton_cg` and write its
    people's parts (by the workers); ``{"summary": ..., "parts": ...}``."""
    if client is None:
        raise SolverFailed(
            f"component {comp} is too big for one worker: the distributed Newton-CG needs a "
            "dask.distributed Client (client=...)"
        )
    t0 = time.perf_counter()
    cluster, b, layout = _setup(s, comp, client, partitions)
    persons = float(cluster.total(_n_persons))
    try:
        lam, st, ox, record = newton_cg(cluster, b, layout, persons, **(options or {}))
    except NotSettled as err:
        raise SolverFailed(
            f"component {comp} ({int(persons):,} people, {len(b):,} Relation rows): Newton "
            f"with distributed conjugate gradients stopped at {err}; the data may force cells "
            "to 0 (the distributed path has no presolve): give the component to one worker "
            "(max_worker_cells=...)"
        ) from err
    scale = np.maximum(1.0, np.abs(b))
    residual = float(np.max(np.abs(ox - b) / scale, initial=0.0))
    H = cluster.pairs(_entropy, st)
    phi = float(lam @ b) + cluster.pairs(_phi_part, st) - cluster.pairs(_rlogr, st)
    del lam, ox, b, scale, layout
    parts = _write_giant(s, comp, cluster, st, folder, threshold)
    summary = {
        "comp": comp,
        "persons": int(persons),
        "cells": int(cluster.total(_n_cells)),
        "method": "distributed Newton-CG",
        "status": "optimal",
        "residual": residual,
        "entropy": H,
        "dual_bound": phi,
        "seconds": time.perf_counter() - t0,
        **record,
    }
    client.submit(write_part, folder / "components", f"cg-{comp}", pd.DataFrame([summary])).result()
    return {"summary": summary, "parts": parts, "partitions": len(cluster.blocks)}


def _sorted_rows(*parts: pd.DataFrame) -> pd.DataFrame:
    rows = pd.concat(parts, ignore_index=True)
    return rows.sort_values("row", kind="stable").reset_index(drop=True)


def _layout_of(rows: pd.DataFrame) -> dict:
    return {k: v for k, v in _layout(rows).items() if k != "keep"}


def _row_ids(rows: pd.DataFrame) -> np.ndarray:
    return rows["row"].to_numpy(dtype=np.int64)


def _cell_count(masks: pd.Series) -> pd.Series:
    return pd.Series([int(popcount(masks.to_numpy(np.int64)).sum())])


def _n_persons(block: Block) -> float:
    return float(block.R.sum())


def _n_cells(block: Block) -> int:
    return len(block.cls)
