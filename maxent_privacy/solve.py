"""Solving a MaxEntModel: presolve, decomposition, the solver call, our certificate.

The steps, in order:

1. **Presolve** (exact). Equality rows (the data's invariants and linear equality facts)
   whose free cells all have positive coefficients and whose remaining right side is 0
   force those cells to 0; a row with one free cell fixes it. Repeated until nothing
   changes. This is what ``P(Breast Cancer | male) = 0`` does on Figure 1: the women of
   buckets 1 and 2 are then fixed to Breast Cancer with value exactly 1.
2. **Data rows of the reduced problem.** Per bucket, the free cells form a bipartite graph
   between QI- and SA-invariant rows; each of its connected pieces has exactly one implied
   row, which is dropped (Du et al. Theorem 3 keeps the system full rank).
3. **Components.** Cells linked by a data row or a fact form connected components, each an
   independent problem. A component that no fact touches and whose cells form a full
   class x value product has the closed form x[c, s] = R_c C_s / T (Eq. (9), Theorem 5).
4. **Solve** the rest with a conic solver through cvxpy.
5. **Certificate.** Residuals of every data row and fact recomputed from the answer, the
   entropy, and a dual bound from the multipliers: for ``max sum -x log(x/n)`` subject to
   ``A x = b`` and ``G x <= h`` the Lagrange dual is
   ``g(nu, mu) = nu.b + mu.h + sum n exp(-1 - A'nu - G'mu)`` (mu >= 0), an upper bound on
   the maximum entropy. The gap g - F is reported; an answer whose residual exceeds the
   tolerance raises :class:`InaccurateSolution`.
"""

from __future__ import annotations

import time
import warnings

import cvxpy as cp
import numpy as np
import pandas as pd
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from .dual import (
    DualUnbounded,
    NotConverged,
    _solve_newton,
    class_rows,
    lp_forced_zeros,
    newton_maxent,
)
from .errors import (
    InaccurateSolution,
    InfeasibleKnowledge,
    SolverFailed,
    SolverNotInstalled,
    UnsupportedModel,
)

__all__ = ["exp_cone_solvers", "solve_model", "InaccuracyWarning"]


class InaccuracyWarning(UserWarning):
    """The solver's answer passed the residual check but its duality gap is large."""


#: solver options used unless the caller gives their own
DEFAULT_OPTIONS = {
    "SCS": {"eps_abs": 1e-9, "eps_rel": 1e-9, "max_iters": 200_000},
    "ECOS": {"max_iters": 200},
    "CLARABEL": {"max_iter": 400},
}


def exp_cone_solvers() -> list[str]:
    """Installed cvxpy solvers that handle the exponential cone (entropy)."""
    from cvxpy.constraints import ExpCone
    from cvxpy.reductions.solvers.defines import SOLVER_MAP_CONIC

    installed = set(cp.installed_solvers())
    out = []
    for name, solver in SOLVER_MAP_CONIC.items():
        if name not in installed or name.endswith("_BB"):
            continue
        if name == "MOSEK" or ExpCone in getattr(solver, "SUPPORTED_CONSTRAINTS", []):
            out.append(name)
    return out


#: our own solver (Newton on the dual, :mod:`maxent_privacy.dual`)
MAXENT = "MAXENT"


def maxent_refusal(model) -> str | None:
    """Why :data:`MAXENT` cannot solve ``model`` (None when it can)."""
    for f in model.facts:
        if f.sense == "soft":
            return (
                f"fact {f.name!r} is a soft penalty; solver 'maxent' takes linear equalities "
                "and inequalities only: use a conic solver (solver='CLARABEL')"
            )
        if f.sense == "convex":
            return (
                f"fact {f.name!r} is not linear in the model's variable; solver 'maxent' takes "
                "linear equalities and inequalities only: use a conic solver (solver='CLARABEL')"
            )
    if (model._ref >= 0).any():
        return (
            "the model places persons of a generalized release in several groups "
            "(entropy of the placement); solver 'maxent' does not take that term yet: use a "
            "conic solver (solver='CLARABEL')"
        )
    return None


def pick_solver(solver: str | None, model=None) -> str:
    """Normalize a solver name; raise with the installed ones listed if unavailable.

    ``None`` picks our own solver ('maxent') when the model suits it, else CLARABEL.
    """
    if solver is None:
        if model is not None and maxent_refusal(model) is None:
            return MAXENT
        return "CLARABEL"
    name = str(solver).upper()
    if name == MAXENT:
        why = maxent_refusal(model) if model is not None else None
        if why is not None:
            raise UnsupportedModel(why)
        return MAXENT
    available = exp_cone_solvers()
    if name not in available:
        known = name in cp.installed_solvers()
        why = (
            "is installed but cannot handle the exponential cone (entropy)"
            if known
            else "is not installed"
        )
        raise SolverNotInstalled(
            f"solver {solver!r} {why}; installed solvers that can: "
            f"{', '.join(available + ['maxent'])}"
        )
    return name


# ------------------------------------------------------------------- presolve
def _presolve(
    E: sp.csr_array,
    e: np.ndarray,
    zero_rows: sp.csr_array,
    n: int,
    tol: float,
    G: sp.csr_array | None = None,
    g: np.ndarray | None = None,
    cls: np.ndarray | None = None,
    class_n: np.ndarray | None = None,
    rect=None,
    tight_from: int = 0,
) -> np.ndarray:
    """Cells fixed by the equality rows ``E x = e`` (and rows forcing zeros), NaN if free.

    With ``G x >= g`` rows and the cell classes, also the *tight upper bound* rule: a row
    with nonnegative coefficients can reach at most ``sum_c R_c max_{j in c} a_j`` (R_c the
    class total still free); when its target equals that bound, every free cell of those
    classes whose coefficient is below its class's maximum is 0 (``P(s | q) = 1`` or
    ``>= 1`` puts everyone with q on s).
    """
    fixed = np.full(n, np.nan)
    E_t, e_t = sp.csr_array(E[tight_from:]), e[tight_from:]  # rows for the tight rule
    if zero_rows.shape[0]:
        fixed[np.unique(zero_rows.indices)] = 0.0
    E = sp.csr_array(E)
    scale = np.maximum(1.0, np.abs(e))
    for _ in range(10_000):
        free = np.isnan(fixed)
        if not free.any():
            break
        vals = np.where(free, 0.0, fixed)
        r = e - E @ vals
        Ef = E[:, free] if not free.all() else E
        free_idx = np.flatnonzero(free)
        Ef = sp.csr_array(Ef)
        nnz = np.diff(Ef.indptr)
        neg = np.asarray((Ef < 0).sum(axis=1)).ravel()
        changed = False
        # rows with nonnegative coefficients and nothing left to fill: all zero
        zero = (nnz > 0) & (neg == 0) & (np.abs(r) <= 1e-12 * scale)
        if zero.any():
            cols = free_idx[np.unique(Ef[zero].indices)]
            fixed[cols] = 0.0
            changed = True
        # rows with a single free cell: its value is determined
        single = (nnz == 1) & ~zero
        if single.any():
            sub = Ef[single]
            cols = free_idx[sub.indices]
            value = r[single] / sub.data
            value = np.where(np.abs(value) <= 1e-12 * scale[single], 0.0, value)
            still = np.isnan(fixed[cols])
            fixed[cols[still]] = value[still]
            changed = changed or bool(still.any())
        if changed:
            continue  # the cheap rules first, until they stop
        if cls is not None:
            changed = _tight_rows(E_t, e_t, G, g, fixed, cls, class_n)
        if rect is not None and not changed:
            changed = _rect_tight(*rect, fixed, cls, class_n)
        if rect is not None and not changed:
            # exact for the data rows: cells no feasible flow of a bucket can use
            changed = _flow_zeros(rect[2], rect[3], fixed, cls, class_n)
            if changed is None:  # fractional totals: the tight rule on the data rows
                changed = tight_from > 0 and _tight_rows(E, e, G, g, fixed, cls, class_n)
        if not changed:
            break
    return fixed


def _tight_rows(E, e, G, g, fixed, cls, class_n) -> bool:
    """Apply the tight-upper-bound rule once; True when it fixed a cell."""
    free = np.isnan(fixed)
    vals = np.where(free, 0.0, fixed)
    blocks, targets = [E], [e]
    if G is not None and G.shape[0]:
        blocks.append(G)
        targets.append(g)
    R = sp.csr_array(sp.vstack(blocks, format="csr"))
    t = np.concatenate(targets) - R @ vals
    Rf = sp.coo_array(R[:, free]) if free.any() else None
    if Rf is None or Rf.nnz == 0:
        return False
    free_idx = np.flatnonzero(free)
    cell = free_idx[Rf.col]
    df = pd.DataFrame({"row": Rf.row, "cell": cell, "cls": cls[cell], "a": Rf.data})
    neg_rows = np.unique(df.loc[(df["a"] < 0) | (df["cls"] < 0), "row"].to_numpy())
    df = df[~df["row"].isin(neg_rows)]
    if df.empty:
        return False
    own = cls >= 0
    remaining = class_n - np.bincount(cls[own], weights=vals[own], minlength=len(class_n))
    top = df.groupby(["row", "cls"], sort=False)["a"].max().rename("top").reset_index()
    top["ub"] = top["top"] * remaining[top["cls"].to_numpy()]
    ub = top.groupby("row")["ub"].sum()
    rows = ub.index.to_numpy()
    tight = rows[t[rows] >= ub.to_numpy() - 1e-12 * np.maximum(1.0, np.abs(t[rows]))]
    if len(tight) == 0:
        return False
    top = top[top["row"].isin(tight)]
    # every free cell of a tight class whose coefficient is below the class maximum is 0
    members = pd.DataFrame({"cell": free_idx, "cls": cls[free_idx]})
    members = members[members["cls"] >= 0]
    cand = top[["row", "cls", "top"]].merge(members, on="cls")
    coef = df[["row", "cell", "a"]]
    cand = cand.merge(coef, on=["row", "cell"], how="left").fillna({"a": 0.0})
    zero = cand.loc[cand["a"] < cand["top"] - 1e-12 * cand["top"].abs(), "cell"].to_numpy()
    zero = np.unique(zero)
    zero = zero[np.isnan(fixed[zero])]
    if len(zero) == 0:
        return False
    fixed[zero] = 0.0
    return True


def _flow_zeros(gs, gs_n, fixed, cls, class_n) -> bool | None:
    """Cells of a single release that no answer to the data rows can make positive.

    Within the QI- and SA-invariants the free cells form a transportation polytope
    (classes supply R_c records, values demand C_s). One feasible flow (max-flow) and the
    strongly connected components of its residual graph decide every cell exactly: a cell
    with zero flow can carry some only along a cycle class -> value -> class ... that
    lowers cells with positive flow, i.e. when its class and value share a component.
    Runs only when the remaining totals are integers (max-flow capacities), else returns
    None; True if it fixed a cell.
    """
    from scipy.sparse.csgraph import connected_components, maximum_flow

    free = np.isnan(fixed) & (cls >= 0)
    if not free.any():
        return False
    vals = np.where(np.isnan(fixed), 0.0, fixed)
    own = cls >= 0
    R = class_n - np.bincount(cls[own], weights=vals[own], minlength=len(class_n))
    C = gs_n - np.bincount(gs, weights=vals, minlength=len(gs_n))
    idx = np.flatnonzero(free)
    used_c, ci = np.unique(cls[idx], return_inverse=True)
    used_s, si = np.unique(gs[idx], return_inverse=True)
    Rc, Cs = R[used_c], C[used_s]
    if (
        np.abs(Rc - np.round(Rc)).max(initial=0) > 1e-9
        or np.abs(Cs - np.round(Cs)).max(initial=0) > 1e-9
        or Rc.sum() > 2**40
    ):
        return None  # skipped: max-flow needs integer totals
    Rc, Cs = np.round(Rc).astype(np.int64), np.round(Cs).astype(np.int64)
    nc, ns = len(used_c), len(used_s)
    src, sink = nc + ns, nc + ns + 1
    rows = np.concatenate([np.full(nc, src), ci, nc + np.arange(ns)])
    cols = np.concatenate([np.arange(nc), nc + si, np.full(ns, sink)])
    cap = np.concatenate([Rc, Rc[ci], Cs]).astype(np.int32 if Rc.sum() < 2**31 else np.int64)
    graph = sp.csr_matrix((cap, (rows, cols)), shape=(nc + ns + 2, nc + ns + 2))
    flow = maximum_flow(graph, src, sink, method="dinic")
    if flow.flow_value != Rc.sum() or Rc.sum() != Cs.sum():
        return False  # infeasible or unbalanced: left to the solver's diagnosis
    F = sp.csr_matrix(flow.flow)
    f_cell = np.asarray(F[ci, nc + si]).ravel()
    pos = f_cell > 0
    # residual graph on classes and values: c -> s always, s -> c where flow > 0
    r_rows = np.concatenate([ci, nc + si[pos]])
    r_cols = np.concatenate([nc + si, ci[pos]])
    res = sp.csr_matrix((np.ones(len(r_rows)), (r_rows, r_cols)), shape=(nc + ns, nc + ns))
    _, scc = connected_components(res, directed=True, connection="strong")
    zero = ~pos & (scc[ci] != scc[nc + si])
    if not zero.any():
        return False
    fixed[idx[zero]] = 0.0
    return True


def _rect_tight(F, f, gs, gs_n, gs_bucket, fixed, cls, class_n) -> bool:
    """The bucket-flow bound of a fact row with equal positive coefficients; True if used.

    In one bucket, the cells a row ``a * sum_S x = f`` covers lie in Q x V (Q its classes,
    V its values), so they hold at most ``min(R_Q, C_V)`` records (R, C the class and
    value totals still free). When ``f / a`` equals the sum of these bounds over the
    buckets, every bucket attains its bound: if ``R_Q <= C_V`` every record of Q takes a
    value of the row (Q's other cells are 0); if ``C_V <= R_Q`` every record with a value
    in V is in a class of the row (V's other cells are 0). Rules ``P(s | Qv) = c`` of the
    original data are often tight so: the (Qv, s) records are then pinned bucket by bucket.
    """
    free = np.isnan(fixed)
    vals = np.where(free, 0.0, fixed)
    t = f - F @ vals
    Ff = sp.coo_array(F[:, free]) if free.any() else None
    if Ff is None or Ff.nnz == 0:
        return False
    free_idx = np.flatnonzero(free)
    cell = free_idx[Ff.col]
    a = Ff.data
    rows = Ff.row
    amax = np.zeros(F.shape[0])
    np.maximum.at(amax, rows, a)
    amin = np.full(F.shape[0], np.inf)
    np.minimum.at(amin, rows, a)
    eq_rows = (amin > 0) & (amax - amin <= 1e-12 * amax)
    keep = eq_rows[rows] & (cls[cell] >= 0)
    if not keep.any():
        return False
    own = cls >= 0
    r_cls = class_n - np.bincount(cls[own], weights=vals[own], minlength=len(class_n))
    r_gs = gs_n - np.bincount(gs, weights=vals, minlength=len(gs_n))
    df = pd.DataFrame(
        {"row": rows[keep], "cell": cell[keep], "cls": cls[cell[keep]], "gs": gs[cell[keep]]}
    )
    df["bucket"] = gs_bucket[df["gs"].to_numpy()]
    q = df.drop_duplicates(["row", "bucket", "cls"])
    rq = (
        pd.Series(r_cls[q["cls"].to_numpy()], index=pd.MultiIndex.from_frame(q[["row", "bucket"]]))
        .groupby(level=[0, 1])
        .sum()
    )
    v = df.drop_duplicates(["row", "bucket", "gs"])
    cv = (
        pd.Series(r_gs[v["gs"].to_numpy()], index=pd.MultiIndex.from_frame(v[["row", "bucket"]]))
        .groupby(level=[0, 1])
        .sum()
    )
    per = pd.DataFrame({"rq": rq, "cv": cv.reindex(rq.index)})
    per["bound"] = np.minimum(per["rq"], per["cv"])
    total = per["bound"].groupby(level=0).sum()
    rr = total.index.to_numpy()
    target = t[rr] / amax[rr]
    tight = rr[target >= total.to_numpy() - 1e-9 * np.maximum(1.0, np.abs(target))]
    if len(tight) == 0:
        return False
    per = per[per.index.get_level_values(0).isin(tight)].reset_index()
    tol = 1e-9 * np.maximum(1.0, per["bound"].to_numpy())
    zero = []
    cells_free = pd.DataFrame({"cell": free_idx, "cls": cls[free_idx], "gs": gs[free_idx]})
    in_row = df[df["row"].isin(tight)][["row", "bucket", "cell", "cls", "gs"]]
    for side, key in (("rq", "cls"), ("cv", "gs")):
        other = "cv" if side == "rq" else "rq"
        bind = per[per[side].to_numpy() <= per[other].to_numpy() + tol][["row", "bucket"]]
        if bind.empty:
            continue
        members = in_row.merge(bind, on=["row", "bucket"])[["row", key]].drop_duplicates()
        cand = members.merge(cells_free[["cell", key]], on=key)
        cand = cand.merge(in_row[["row", "cell"]], on=["row", "cell"], how="left", indicator=True)
        zero.append(cand.loc[cand["_merge"] == "left_only", "cell"].to_numpy())
    zero = np.unique(np.concatenate(zero)) if zero else np.zeros(0, dtype=int)
    zero = zero[np.isnan(fixed[zero])]
    if len(zero) == 0:
        return False
    fixed[zero] = 0.0
    return True


def _independent_rows(dense: np.ndarray) -> np.ndarray:
    """Indices of a maximal set of linearly independent rows (QR with column pivoting)."""
    from scipy.linalg import qr

    if dense.shape[0] == 0:
        return np.zeros(0, dtype=int)
    _, R, piv = qr(dense.T, mode="economic", pivoting=True)
    diag = np.abs(np.diag(R))
    rank = int(np.sum(diag > 1e-9 * max(1.0, diag.max(initial=0.0))))
    return np.sort(piv[:rank])


def _bipartite_pieces(rows_a: np.ndarray, rows_b: np.ndarray, na: int, nb: int) -> np.ndarray:
    """Connected-piece label of every b-node in the bipartite graph of edges (a, b)."""
    m = len(rows_a)
    adj = sp.coo_array((np.ones(m), (rows_a, na + rows_b)), shape=(na + nb, na + nb)).tocsr()
    _, labels = connected_components(adj, directed=False)
    return labels


def _entropy_terms(x: np.ndarray, n: np.ndarray) -> np.ndarray:
    out = np.zeros_like(x)
    pos = (x > 0) & (n > 0)
    out[pos] = -x[pos] * np.log(x[pos] / n[pos])
    return out


def _dual_bound(A_eq, b_eq, nu, G, h, mu, n) -> float:
    """Lagrange dual of max sum -x log(x/n) s.t. A_eq x = b_eq, G x <= h (mu clipped >= 0)."""
    mu = np.maximum(mu, 0.0) if mu is not None and len(mu) else np.zeros(0)
    z = -1.0 - A_eq.T @ nu
    val = float(nu @ b_eq)
    if G is not None and G.shape[0]:
        z = z - G.T @ mu
        val += float(mu @ h)
    with np.errstate(over="ignore"):
        val += float(np.sum(n * np.exp(z)))
    return val


# ------------------------------------------------------- maxent jobs (local or Dask)
def _batches(todo: np.ndarray, cells_per_comp: np.ndarray, client) -> list[np.ndarray]:
    """The components to solve, in one batch locally or balanced over Dask workers."""
    if client is None or len(todo) <= 1:
        return [todo]
    workers = max(1, len(client.scheduler_info().get("workers", {})))
    n_batches = min(len(todo), 4 * workers)
    size = cells_per_comp[todo]
    load = np.zeros(n_batches)
    which = np.empty(len(todo), dtype=int)
    for pos in np.argsort(-size, kind="stable"):  # largest first, to the lightest batch
        b = int(np.argmin(load))
        which[pos] = b
        load[b] += size[pos]
    return [todo[which == b] for b in range(n_batches) if (which == b).any()]


def _newton_job(args, kw):
    """One batch of components through :func:`newton_maxent`; errors as values."""
    try:
        return "ok", newton_maxent(*args, **kw)
    except DualUnbounded as err:
        return "unbounded", np.flatnonzero(np.isin(err.cell_comp, err.components))
    except NotConverged as err:
        return "stalled", (str(err), err.small, err.zeros)


def _run_jobs(jobs, kw, client, progress):
    from tqdm import tqdm  # the text bar: tqdm.auto wants ipywidgets in notebooks

    cells = sum(len(a[0]) for _, a in jobs)
    show = progress if progress is not None else (client is not None or cells > 500_000)
    if client is None:
        out = []
        for _, args in tqdm(jobs, desc="maxent", unit="batch", disable=not show):
            out.append(_newton_job(args, kw))
        return out
    from dask.distributed import as_completed

    futures = [client.submit(_newton_job, args, kw, pure=False) for _, args in jobs]
    index = {f.key: i for i, f in enumerate(futures)}
    out = [None] * len(futures)
    with tqdm(total=len(futures), desc="maxent (dask)", unit="batch", disable=not show) as bar:
        for fut in as_completed(futures):
            out[index[fut.key]] = fut.result()
            bar.update()
    return out


# --------------------------------------------------------------------- solve
def solve_model(
    model,
    solver=None,
    decompose=True,
    presolve=True,
    tol=1e-6,
    verbose=False,
    options=None,
    polish=True,
    extra_zero=None,
    client=None,
    progress=None,
    zero_log=None,
):
    from .results import Certificate, Result

    t_start = time.perf_counter()
    solver_name = pick_solver(solver, model)

    zero_log = dict(zero_log or {})

    def again(zeros, how):
        """Solve again with the cells proved 0 removed (``how``: by what proof)."""
        log = dict(zero_log)
        before = 0 if extra_zero is None else len(extra_zero)
        log[how] = log.get(how, 0) + len(zeros) - before
        result = solve_model(
            model,
            solver=solver,
            decompose=decompose,
            presolve=presolve,
            tol=tol,
            verbose=verbose,
            options=options,
            polish=polish,
            extra_zero=zeros,
            client=client,
            progress=progress,
            zero_log=log,
        )
        result.solver_stats["total_time"] = time.perf_counter() - t_start  # both passes
        return result

    opts = dict(DEFAULT_OPTIONS.get(solver_name, {}))
    opts.update(options or {})
    n = model.n_cells
    N = model.n_records
    n_cls, n_gs = len(model._class_n), len(model._gs_n)
    single = model._gs is not None  # one SA-invariant per cell (a single release)
    cells = np.arange(n)
    ones = np.ones(n)
    zc = model._z  # class (One) rows hold the z cells; y cells are placements
    A_cls = sp.csr_array((ones[zc], (model._cls[zc], cells[zc])), shape=(n_cls, n))
    if single:
        A_gs = sp.csr_array((ones, (model._gs, cells)), shape=(n_gs, n))
    else:  # pooled releases: one Relation row per release, bucket and value
        A_gs = sp.csr_array(model._A_sa)
    hasq = model._qg >= 0
    A_qg = sp.csr_array((ones[hasq], (model._qg[hasq], cells[hasq])), shape=(len(model._qg_n), n))
    # shared rows: QI-invariants of (QI value, bucket) pairs and the y-z links
    A_qg = sp.vstack([A_qg, sp.csr_array(model._A_link)], format="csr")
    qg_n = np.concatenate([model._qg_n, np.zeros(model._A_link.shape[0])])
    n_qg = len(qg_n)

    facts = model.facts
    lin = [f for f in facts if f.sense in ("==", "<=")]
    convex = [f for f in facts if f.sense in ("convex", "soft")]
    eq_facts = [f for f in lin if f.sense == "=="]
    in_facts = [f for f in lin if f.sense == "<="]

    def stack(fs):
        if not fs:
            return sp.csr_array((0, n)), np.zeros(0)
        return sp.vstack([f.A for f in fs], format="csr"), np.concatenate([f.b for f in fs])

    F_eq, f_eq = stack(eq_facts)
    F_in, f_in = stack(in_facts)

    # ---- 1. presolve
    if presolve:
        E = sp.vstack([A_cls, A_qg, A_gs, F_eq], format="csr")
        e = np.concatenate([model._class_n, qg_n, model._gs_n, f_eq])
        # inequality rows a x <= 0 with a >= 0 force zeros too
        if F_in.shape[0]:
            nonneg = np.asarray((F_in < 0).sum(axis=1)).ravel() == 0
            zero_in = nonneg & (np.abs(f_in) <= 1e-15) & (np.diff(F_in.indptr) > 0)
            zero_rows = F_in[zero_in]
        else:
            zero_rows = sp.csr_array((0, n))
        # rows a x >= g: the inequality facts whose coefficients are all <= 0
        if F_in.shape[0]:
            nonpos = np.asarray((F_in > 0).sum(axis=1)).ravel() == 0
            G, g = -F_in[nonpos], -f_in[nonpos]
        else:
            G, g = None, None
        if extra_zero is not None and len(extra_zero):
            zero_rows = sp.vstack(
                [
                    zero_rows,
                    sp.csr_array(
                        (
                            np.ones(len(extra_zero)),
                            (np.zeros(len(extra_zero), dtype=int), extra_zero),
                        ),
                        shape=(1, n),
                    ),
                ],
                format="csr",
            )
        # rules of one condition Qv added up (row_groups): their confidences may add up
        # to 1 on some values, which pins the Qv records to them (exact, as a data row)
        sums = []
        for f in eq_facts:
            grp = f.row_groups
            if grp is None or len(np.unique(grp)) == len(grp):
                continue
            multi = np.flatnonzero(np.bincount(grp)[grp] > 1)
            Sg = sp.csr_array(
                (np.ones(len(multi)), (pd.factorize(grp[multi])[0], multi)),
                shape=(len(np.unique(grp[multi])), f.size),
            )
            sums.append((sp.csr_array(Sg @ f.A), Sg @ f.b))
        if sums:
            E = sp.vstack([E] + [a for a, _ in sums], format="csr")
            e = np.concatenate([e] + [v for _, v in sums])
        cls_t = np.where(zc, model._cls, -1)
        rect = None
        if single and (F_eq.shape[0] or F_in.shape[0]):
            # the bucket-flow bound on fact rows (equalities, and >= rows as G x >= g)
            Fr = sp.vstack(
                [F_eq] + [a for a, _ in sums] + ([G] if G is not None else []), format="csr"
            )
            fr = np.concatenate([f_eq] + [v for _, v in sums] + ([g] if G is not None else []))
            rect = (Fr, fr, model._gs, model._gs_n, pd.factorize(model._gs_group)[0])
        # single release: the bucket flows decide the data rows exactly, so the tight
        # rule only looks at the facts (and their sums)
        n_data = A_cls.shape[0] + A_qg.shape[0] + A_gs.shape[0]
        fixed = _presolve(
            E,
            e,
            zero_rows,
            n,
            tol,
            G,
            g,
            cls_t,
            model._class_n,
            rect,
            tight_from=n_data if rect is not None else 0,
        )
    else:
        fixed = np.full(n, np.nan)
        if extra_zero is not None:
            fixed[extra_zero] = 0.0  # zeros the maxent solver proved (see below)
    free = np.isnan(fixed)
    x = np.where(free, 0.0, fixed)
    if (x < -tol).any():
        bad = int(np.argmin(x))
        raise InfeasibleKnowledge(
            f"the facts force a negative count ({x[bad]:.3g}) on cell {bad}: they contradict "
            "the data",
            conflicts=pd.DataFrame({"fact": [f.name for f in eq_facts]}),
        )
    x = np.maximum(x, 0.0)
    free_idx = np.flatnonzero(free)
    pos_of = np.full(n, -1)
    pos_of[free_idx] = np.arange(len(free_idx))

    # ---- 2. reduced data rows
    r_cls = model._class_n - A_cls @ x
    r_gs = model._gs_n - A_gs @ x
    r_qg = qg_n - A_qg @ x
    f_cls = model._cls[free_idx]
    A_free = sp.csr_array(A_gs[:, free_idx])
    gs_has_free = np.diff(A_free.indptr) > 0
    cls_has_free = np.bincount(f_cls, minlength=n_cls) > 0
    qg_has_free = np.diff(sp.csr_array(A_qg[:, free_idx]).indptr) > 0
    for r, has, rhs in (
        (r_cls, cls_has_free, model._class_n),
        (r_qg, qg_has_free, qg_n),
        (r_gs, gs_has_free, model._gs_n),
    ):
        if (~has & (np.abs(r) > tol * np.maximum(1.0, rhs))).any():
            raise InfeasibleKnowledge("the facts force cell values that the data rule out")
    keep_cls, keep_qg, keep_gs = cls_has_free.copy(), qg_has_free.copy(), gs_has_free.copy()
    in_complex = np.zeros(len(free_idx), dtype=bool)
    if not single:
        # per release and bucket the Relation rows add up to the bucket's One rows
        gs_ids = np.flatnonzero(gs_has_free & ~model._sa_has_y)
        last = pd.Series(gs_ids).groupby(model._sa_bucket[gs_ids]).max().to_numpy()
        keep_gs[last] = False
    complex_cells = model._class_member[f_cls] if single else np.ones(len(free_idx), bool)
    if complex_cells.any():
        # cells linked by data rows to a class whose bucket is unknown, or in several
        # releases: rank by QR on each connected piece that is small enough
        A_data = sp.vstack([A_cls, A_qg, A_gs], format="csr")[:, free_idx]
        big = sp.bmat([[None, A_data.T], [A_data, None]], format="csr")
        _, lab = connected_components(big, directed=False)
        lab = lab[: len(free_idx)]
        complex_labels = np.unique(lab[complex_cells])
        in_complex = np.isin(lab, complex_labels)
        A_data = sp.csr_array(A_data)
        keep_all = np.concatenate([keep_cls, keep_qg, keep_gs])
        if solver_name == MAXENT:
            complex_labels = complex_labels[:0]  # Newton's ridge takes implied rows
        lab_order = np.argsort(lab, kind="stable")
        lab_bounds = np.searchsorted(lab[lab_order], np.arange(int(lab.max(initial=-1)) + 2))
        for m_lab in complex_labels:
            cols = lab_order[lab_bounds[m_lab] : lab_bounds[m_lab + 1]]
            sub = sp.csr_array(A_data[:, cols])
            rows = np.flatnonzero((np.diff(sub.indptr) > 0) & keep_all)
            if len(rows) > 1500 or len(cols) > 20_000:
                continue  # too big for a dense QR: keep the structural drops only
            keep_rows = rows[_independent_rows(sub[rows].toarray())]
            for r in np.setdiff1d(rows, keep_rows):
                if r < n_cls:
                    keep_cls[r] = False
                elif r < n_cls + n_qg:
                    keep_qg[r - n_cls] = False
                else:
                    keep_gs[r - n_cls - n_qg] = False
    if single:
        # drop one SA row (the last) of each bucket piece of the other cells
        f_gs = model._gs[free_idx]
        sel = ~in_complex
        pieces = _bipartite_pieces(f_cls[sel], f_gs[sel], n_cls, n_gs)
        gs_piece = pieces[n_cls:]
        gs_ids = np.flatnonzero(np.bincount(f_gs[sel], minlength=n_gs) > 0)
        last = pd.Series(gs_ids).groupby(gs_piece[gs_ids]).max().to_numpy()
        keep_gs[last] = False
    cls_rows = np.flatnonzero(keep_cls)
    qg_rows = np.flatnonzero(keep_qg)
    gs_rows = np.flatnonzero(keep_gs)
    A_red = sp.vstack([A_cls[cls_rows], A_qg[qg_rows], A_gs[gs_rows]], format="csr")
    A_red = sp.csr_array(A_red[:, free_idx])
    b_red = np.concatenate([r_cls[cls_rows], r_qg[qg_rows], r_gs[gs_rows]])

    # fact rows on free cells (row-scaled to max |coef| = 1 for the solver)
    def reduce_rows(F, f):
        if F.shape[0] == 0:
            return sp.csr_array((0, len(free_idx))), np.zeros(0), np.zeros(0)
        rhs = f - F @ x
        Fr = sp.csr_array(F[:, free_idx]) if len(free_idx) else sp.csr_array((F.shape[0], 0))
        scale = np.ones(F.shape[0])
        nz = np.diff(Fr.indptr) > 0
        if nz.any():
            mx = np.zeros(F.shape[0])
            absF = abs(Fr)
            mx[nz] = np.asarray(absF.max(axis=1).toarray()).ravel()[nz]
            scale[nz] = mx[nz]
        return Fr, rhs, scale

    Feq_r, feq_r, feq_scale = reduce_rows(F_eq, f_eq)
    Fin_r, fin_r, fin_scale = reduce_rows(F_in, f_in)
    # fact rows with nothing free must already hold
    empty_eq = np.diff(Feq_r.indptr) == 0
    empty_in = np.diff(Fin_r.indptr) == 0
    _check_resolved(eq_facts, empty_eq, np.abs(feq_r), tol, "==")
    _check_resolved(in_facts, empty_in, -fin_r, tol, "<=")

    # ---- 3. components
    n_free = len(free_idx)
    n_rows_d = A_red.shape[0]
    incid = [A_red, Feq_r, Fin_r]
    conv_fp = []
    for f in convex:
        fp = pos_of[f.cells]
        fp = fp[fp >= 0]
        conv_fp.append(fp)
        incid.append(
            sp.csr_array((np.ones(len(fp)), (np.zeros(len(fp), dtype=int), fp)), shape=(1, n_free))
        )
    M = sp.vstack(incid, format="csr") if n_free else sp.csr_array((0, 0))
    n_rows = M.shape[0]
    if n_free == 0:
        comp_of_cell = np.zeros(0, dtype=int)
        n_comp = 0
    elif decompose:
        big = sp.bmat([[None, M.T], [M, None]], format="csr")
        _, labels = connected_components(big, directed=False)
        comp_of_cell = labels[:n_free]
        _, comp_of_cell = np.unique(comp_of_cell, return_inverse=True)
        n_comp = int(comp_of_cell.max()) + 1
    else:
        comp_of_cell = np.zeros(n_free, dtype=int)
        n_comp = 1
    row_comp = np.full(n_rows, -1)
    Mcoo = M.tocoo()
    row_comp[Mcoo.row] = comp_of_cell[Mcoo.col] if n_free else row_comp[Mcoo.row]

    n_eq, n_in = Feq_r.shape[0], Fin_r.shape[0]
    nu_d = np.zeros(n_rows_d)
    nu_eq = np.full(n_eq, np.nan)
    mu_in = np.full(n_in, np.nan)
    nu_eq[~empty_eq] = 0.0
    mu_in[~empty_in] = 0.0
    y_all = np.zeros(n_free)
    n_free_cells = model._n[free_idx]
    comp_records = []
    suspects = []
    statuses = []
    bound_free = 0.0
    t_setup = time.perf_counter() - t_start

    order = np.argsort(comp_of_cell, kind="stable")
    bounds = np.searchsorted(comp_of_cell[order], np.arange(n_comp + 1))
    row_order = np.argsort(row_comp, kind="stable")
    row_bounds = np.searchsorted(row_comp[row_order], np.arange(n_comp + 1))
    # closed form (Eq. 9) for every component without facts whose cells are a full
    # class x value product, all at once
    comp_has_fact = np.zeros(n_comp, dtype=bool)
    fact_row_comp = row_comp[n_rows_d:]
    comp_has_fact[fact_row_comp[fact_row_comp >= 0]] = True
    if n_comp and single:
        cls_f = model._cls[free_idx]
        gs_f = model._gs[free_idx]
        n_cells_k = np.bincount(comp_of_cell, minlength=n_comp)
        cls_comp = np.full(n_cls, -1)
        cls_comp[cls_f] = comp_of_cell
        gs_comp = np.full(n_gs, -1)
        gs_comp[gs_f] = comp_of_cell
        n_cls_k = np.bincount(cls_comp[cls_comp >= 0], minlength=n_comp)
        n_gs_k = np.bincount(gs_comp[gs_comp >= 0], minlength=n_comp)
        T = np.bincount(cls_comp[cls_comp >= 0], weights=r_cls[cls_comp >= 0], minlength=n_comp)
        product = (n_cells_k == n_cls_k * n_gs_k) & (T > 0)
        comp_member = np.zeros(n_comp, dtype=bool)
        comp_member[comp_of_cell[in_complex]] = True
        closed = product & ~comp_has_fact & ~comp_member
        cf = closed[comp_of_cell]
        if cf.any():
            kc = comp_of_cell[cf]
            Rc, Cs = r_cls[cls_f[cf]], r_gs[gs_f[cf]]
            y_all[cf] = Rc * Cs / T[kc]
            # multipliers: nu_c + nu_s = -1 - log(y/n); the dropped SA row has nu = 0
            dropped_gs = np.flatnonzero(gs_has_free & ~keep_gs)
            c_star = np.ones(n_comp)
            c_star[gs_comp[dropped_gs]] = r_gs[dropped_gs]
            with np.errstate(divide="ignore", invalid="ignore"):
                nu_cls = (
                    -1.0
                    - np.log(r_cls / model._class_n)
                    - np.log(c_star[np.maximum(cls_comp, 0)] / T[np.maximum(cls_comp, 0)])
                )
                nu_gs = -np.log(r_gs / T[np.maximum(gs_comp, 0)]) + np.log(
                    c_star[np.maximum(gs_comp, 0)] / T[np.maximum(gs_comp, 0)]
                )
            row_is_closed = closed[np.maximum(row_comp[:n_rows_d], 0)] & (row_comp[:n_rows_d] >= 0)
            nu_rows = np.concatenate([nu_cls[cls_rows], np.zeros(len(qg_rows)), nu_gs[gs_rows]])
            nu_d[row_is_closed] = nu_rows[row_is_closed]
            Acf = A_red[row_is_closed][:, np.flatnonzero(cf)]
            bound_free += _dual_bound(
                Acf, b_red[row_is_closed], nu_d[row_is_closed], None, None, None, n_free_cells[cf]
            )
        n_closed = int(closed.sum())
        if n_closed:
            comp_records.append(
                {
                    "component": "closed form",
                    "cells": int(cf.sum()),
                    "facts": 0,
                    "method": f"closed form ({n_closed} components)",
                    "status": "optimal",
                    "solve_time": 0.0,
                    "iterations": 0,
                }
            )
    else:
        closed = np.zeros(n_comp, dtype=bool)
        n_closed = 0
    todo = np.flatnonzero(~closed)
    if solver_name == MAXENT and len(todo):
        t0 = time.perf_counter()
        sel = np.isin(comp_of_cell, todo)
        cidx = np.flatnonzero(sel)
        rsel = np.isin(row_comp, todo)
        dk = np.flatnonzero(rsel[:n_rows_d])
        ek = np.flatnonzero(rsel[n_rows_d : n_rows_d + n_eq])
        ik = np.flatnonzero(rsel[n_rows_d + n_eq : n_rows_d + n_eq + n_in])
        is_cls_row = dk < len(cls_rows)
        O_rows = [sp.csr_array(A_red[dk[~is_cls_row]][:, cidx])]
        o_rhs = [b_red[dk[~is_cls_row]]]
        if len(ek):
            O_rows.append(sp.csr_array(Feq_r[ek][:, cidx] / feq_scale[ek][:, None]))
            o_rhs.append(feq_r[ek] / feq_scale[ek])
        Ok = sp.vstack(O_rows, format="csr")
        Gk = hk = None
        if len(ik):
            Gk = sp.csr_array(Fin_r[ik][:, cidx] / fin_scale[ik][:, None])
            hk = fin_r[ik] / fin_scale[ik]
        cls_k = model._cls[free_idx[cidx]]
        used_cls, cls_local = np.unique(cls_k, return_inverse=True)
        budget = options.get("time_limit") if options else None
        kw = {
            "tol": float(opts.get("tol", 1e-10)),
            "max_iter": int(opts.get("max_iter", 200)),
            "deadline": None if budget is None else t0 + float(budget),
            "verbose": verbose and client is None,
        }
        o_all = np.concatenate(o_rhs)
        R_loc = r_cls[used_cls]
        comp_loc = comp_of_cell[cidx]
        comp_O = np.concatenate([row_comp[dk[~is_cls_row]], row_comp[n_rows_d + ek]]).astype(int)
        comp_G = row_comp[n_rows_d + n_eq + ik]
        batches = _batches(todo, np.bincount(comp_loc, minlength=n_comp), client)
        jobs = []
        for bt in batches:
            cm = np.flatnonzero(np.isin(comp_loc, bt))
            om = np.flatnonzero(np.isin(comp_O, bt))
            gm = np.flatnonzero(np.isin(comp_G, bt))
            uc, cl2 = np.unique(cls_local[cm], return_inverse=True)
            args = (
                n_free_cells[cidx][cm],
                cl2,
                R_loc[uc],
                sp.csr_array(Ok[om][:, cm]),
                o_all[om],
                None if Gk is None else sp.csr_array(Gk[gm][:, cm]),
                None if hk is None else hk[gm],
            )
            jobs.append(((cm, om, gm, uc), args))
        outs = _run_jobs(jobs, kw, client, progress)
        out_x = np.zeros(len(cidx))
        out_lam = np.zeros(Ok.shape[0])
        out_mu = np.zeros(0 if Gk is None else Gk.shape[0])
        out_nu = np.zeros(len(used_cls))
        phi_sum, iters = 0.0, 0
        for ((cm, om, gm, uc), job_args), (kind, res) in zip(jobs, outs, strict=True):
            if kind == "unbounded":
                bad = cm[res]
                hit = np.asarray(abs(Feq_r[ek][:, cidx[bad]]).sum(axis=1)).ravel() > 0
                hit_in = np.asarray(abs(Fin_r[ik][:, cidx[bad]]).sum(axis=1)).ravel() > 0
                names = sorted(
                    set(_fact_names(eq_facts, ek[hit]) + _fact_names(in_facts, ik[hit_in]))
                )
                raise InfeasibleKnowledge(
                    f"the facts contradict the data: {len(names)} facts share the infeasible "
                    f"part ({', '.join(names[:5])}" + (", ..." if len(names) > 5 else "") + ")",
                    conflicts=pd.DataFrame({"fact": names}),
                )
            if kind == "stalled":
                message, small, found = res
                how = "dual certificate"
                if not len(found) and len(small):
                    _, cl_b, R_b, O_b, b_b, G_b, h_b = job_args
                    A_b = sp.vstack([class_rows(cl_b, len(R_b)), O_b], format="csr")
                    rhs_b = np.concatenate([R_b, b_b])
                    # one LP per connected component that holds suspects (smaller LPs)
                    comp_b = comp_loc[cm]
                    found = []
                    for k in np.unique(comp_b[small]):
                        ck = np.flatnonzero(comp_b == k)
                        rk = np.flatnonzero(np.diff(sp.csr_array(A_b[:, ck]).indptr) > 0)
                        gk = hk_ = None
                        if G_b is not None:
                            gi = np.flatnonzero(np.diff(sp.csr_array(G_b[:, ck]).indptr) > 0)
                            gk, hk_ = sp.csr_array(G_b[gi][:, ck]), h_b[gi]
                        pos = np.searchsorted(ck, small[comp_b[small] == k])
                        sub = lp_forced_zeros(sp.csr_array(A_b[rk][:, ck]), rhs_b[rk], gk, hk_, pos)
                        found.append(ck[sub])
                    found = np.concatenate(found) if found else np.zeros(0, dtype=int)
                    how = "LP"
                if len(found):
                    # cells every feasible answer puts at 0: remove them and solve again
                    more = free_idx[cidx][cm[found]]
                    zeros = more if extra_zero is None else np.union1d(extra_zero, more)
                    if verbose:
                        print(f"maxent: {len(more)} cells forced to 0 ({how}); solving again")
                    return again(zeros, how)
                raise SolverFailed(
                    f"solver 'maxent': {message}; try solver='CLARABEL' (a conic solver)"
                )
            out_x[cm] = res.x
            out_lam[om] = res.lam
            out_mu[gm] = res.mu
            out_nu[uc] = res.nu_cls
            phi_sum += res.phi
            iters = max(iters, res.iterations)
        elapsed = time.perf_counter() - t0
        y_all[cidx] = out_x
        # multipliers in the conic convention x = n exp(-1 - A'nu): class rows nu_c,
        # the other rows lam (equality facts scaled back below)
        nu_cls_all = np.zeros(n_cls)
        nu_cls_all[used_cls] = out_nu
        nu_d[dk[is_cls_row]] = nu_cls_all[cls_rows[dk[is_cls_row]]]
        n_o = int((~is_cls_row).sum())
        nu_d[dk[~is_cls_row]] = out_lam[:n_o]
        nu_eq[ek] = out_lam[n_o:] / feq_scale[ek]
        mu_in[ik] = out_mu / fin_scale[ik]
        # the dual bound of these components is phi itself
        if not np.isnan(bound_free):
            bound_free += phi_sum
        statuses.append(cp.OPTIMAL)
        comp_records.append(
            {
                "component": f"{len(todo)} components",
                "cells": len(cidx),
                "facts": len(ek) + len(ik),
                "method": "maxent (dual Newton)",
                "status": "optimal",
                "solve_time": elapsed,
                "iterations": iters,
                "wall_time": elapsed,
                "polished": False,
            }
        )
        todo = todo[:0]
    from tqdm import tqdm

    # a bar for long conic solves: many components or many cells
    show = progress if progress is not None else (len(todo) > 200 or n_free > 200_000)
    for k in tqdm(todo, desc=solver_name, unit="component", disable=not show or not len(todo)):
        cidx = order[bounds[k] : bounds[k + 1]]
        rows_k = row_order[row_bounds[k] : row_bounds[k + 1]]
        dk = rows_k[rows_k < n_rows_d]
        ek = rows_k[(rows_k >= n_rows_d) & (rows_k < n_rows_d + n_eq)] - n_rows_d
        ik = (
            rows_k[(rows_k >= n_rows_d + n_eq) & (rows_k < n_rows_d + n_eq + n_in)]
            - n_rows_d
            - n_eq
        )
        ck = rows_k[rows_k >= n_rows_d + n_eq + n_in] - n_rows_d - n_eq - n_in
        Ad = sp.csr_array(A_red[dk][:, cidx])
        bd = b_red[dk]
        nk = n_free_cells[cidx]
        # a conic solve
        y = cp.Variable(len(cidx))
        cons = [Ad @ y == bd] if len(dk) else []
        Fe = Fi = None
        if len(ek):
            Fe = sp.csr_array(Feq_r[ek][:, cidx] / feq_scale[ek][:, None])
            cons.append(Fe @ y == feq_r[ek] / feq_scale[ek])
        if len(ik):
            Fi = sp.csr_array(Fin_r[ik][:, cidx] / fin_scale[ik][:, None])
            cons.append(Fi @ y <= fin_r[ik] / fin_scale[ik])
        if len(ck):
            S = sp.csr_array(
                (np.ones(len(cidx)), (free_idx[cidx], np.arange(len(cidx)))), shape=(n, len(cidx))
            )
            repl = S @ y + x
            for j in ck:
                if convex[j].sense == "soft":
                    continue
                cons.append(_substitute(convex[j].constraint, model.x, repl))
        ref_k = model._ref[free_idx[cidx]]
        yk_cells = ref_k >= 0
        if yk_cells.any():
            # -y log(y / z): group placements relative to the person's value count
            zpos = pos_of[ref_k[yk_cells]]
            comp_pos = np.full(n_free, -1)
            comp_pos[cidx] = np.arange(len(cidx))
            zloc = comp_pos[np.maximum(zpos, 0)]
            yi = np.flatnonzero(yk_cells)
            fixed_ref = zpos < 0
            zi = np.flatnonzero(~yk_cells)
            objective = -cp.sum(cp.rel_entr(y[zi], nk[zi]))
            if (~fixed_ref).any():
                objective -= cp.sum(cp.rel_entr(y[yi[~fixed_ref]], y[zloc[~fixed_ref]]))
            if fixed_ref.any():
                zval = np.maximum(x[ref_k[yk_cells][fixed_ref]], 1e-300)
                objective -= cp.sum(cp.rel_entr(y[yi[fixed_ref]], zval))
        else:
            objective = -cp.sum(cp.rel_entr(y, nk))
        for j in ck:
            f = convex[j]
            if f.sense == "soft":
                # Kazama-Tsujii style penalty: N * weight * (violation in the fact's units)
                gap_expr = _substitute(f.constraint.args[0] - f.constraint.args[1], model.x, repl)
                hinge = cp.abs(gap_expr) if f.soft_sense == "==" else cp.pos(gap_expr)
                objective = objective - N * f.weight * cp.sum(hinge)
        prob = cp.Problem(cp.Maximize(objective), cons)
        t0 = time.perf_counter()
        try:
            prob.solve(solver=solver_name, verbose=verbose, **opts)
        except cp.error.SolverError as err:
            raise SolverFailed(
                f"{solver_name} failed on component {k} ({len(cidx)} cells): {err}"
            ) from err
        elapsed = time.perf_counter() - t0
        status = prob.status
        names = _fact_names(eq_facts, ek) + _fact_names(in_facts, ik) + [convex[j].name for j in ck]
        if status in (cp.INFEASIBLE, cp.INFEASIBLE_INACCURATE):
            raise InfeasibleKnowledge(
                f"the facts contradict the data: {len(set(names))} facts share the "
                f"infeasible part ({', '.join(sorted(set(names))[:5])}"
                + (", ..." if len(set(names)) > 5 else "")
                + ")",
                conflicts=pd.DataFrame({"fact": sorted(set(names))}),
            )
        if status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE) or y.value is None:
            raise SolverFailed(
                f"{solver_name} returned status {status!r} on component {k} "
                f"({len(cidx)} cells, facts: {', '.join(names[:5])})"
            )
        statuses.append(status)
        stats = prob.solver_stats
        comp_records.append(
            {
                "component": k,
                "cells": len(cidx),
                "facts": len(set(names)),
                "method": solver_name,
                "status": status,
                "solve_time": stats.solve_time if stats.solve_time is not None else elapsed,
                "iterations": stats.num_iters,
                "wall_time": elapsed,
            }
        )
        yk = np.maximum(np.asarray(y.value).ravel(), 0.0)
        duals_k = [np.asarray(c.dual_value, dtype=float).ravel() for c in cons[:3]]
        i = 0
        nud = np.zeros(0)
        nu_e = mu_i = None
        if len(dk):
            nud = duals_k[i]
            i += 1
        if len(ek):
            nu_e = duals_k[i]
            i += 1
        if len(ik):
            mu_i = np.maximum(duals_k[i], 0.0)
            i += 1
        polished = False
        n_rows_k = len(dk) + len(ek) + len(ik)
        attempt = polish and not len(ck) and not yk_cells.any() and n_rows_k <= POLISH_MAX_ROWS
        if attempt:
            fe = None if Fe is None else feq_r[ek] / feq_scale[ek]
            fi = None if Fi is None else fin_r[ik] / fin_scale[ik]
            # budget: a few times the solver's own time (a Newton step factors A D A', whose
            # fill-in can make it far slower than the conic solve on large linked components)
            _POLISH_DEADLINE[0] = time.perf_counter() + max(2.0, 3.0 * elapsed)
            try:
                out = _polish_kkt(Ad, bd, nud, Fe, fe, nu_e, Fi, fi, mu_i, nk)
            finally:
                _POLISH_DEADLINE[0] = float("inf")
            if out is not None:
                polished = True
                yk, nud, nu_e, mu_i = out
        comp_records[-1]["polished"] = polished
        if polished:
            # the polished answer is certified by our own KKT check (residuals of floating
            # point, multipliers of the right sign), whatever the solver said
            comp_records[-1]["solver_status"] = status
            comp_records[-1]["status"] = cp.OPTIMAL
            statuses[-1] = cp.OPTIMAL
        if attempt and presolve and not polished and extra_zero is None:
            tiny = free_idx[cidx][yk < 1e-6 * np.maximum(1.0, nk)]
            if len(tiny):
                suspects.append(tiny)
        y_all[cidx] = yk
        nu_d[dk] = nud
        if nu_e is not None:
            nu_eq[ek] = nu_e / feq_scale[ek]
        if mu_i is not None:
            mu_in[ik] = mu_i / fin_scale[ik]
        if len(ck) or yk_cells.any():
            bound_free = np.nan
        elif not np.isnan(bound_free):
            A_all = Ad if Fe is None else sp.vstack([Ad, Fe], format="csr")
            b_all = bd if Fe is None else np.concatenate([bd, feq_r[ek] / feq_scale[ek]])
            nu_all = nud if nu_e is None else np.concatenate([nud, nu_e])
            h = None if Fi is None else fin_r[ik] / fin_scale[ik]
            bound_free += _dual_bound(A_all, b_all, nu_all, Fi, h, mu_i, nk)

    x[free_idx] = y_all
    if suspects and not convex:
        # the polish failed next to cells the solver drove to ~0: find with LPs which of
        # them every feasible answer puts at 0, and solve again with those removed
        zeros = _forced_zeros(
            A_cls, A_qg, A_gs, F_eq, F_in, model, qg_n, f_eq, f_in, fixed, np.concatenate(suspects)
        )
        if len(zeros):
            return again(np.union1d(zeros, [] if extra_zero is None else extra_zero), "LP")
    t_total = time.perf_counter() - t_start

    # ---- 5. certificate from our own arithmetic
    data_res = max(
        float(
            np.max(np.abs(A_cls @ x - model._class_n) / np.maximum(1, model._class_n), initial=0)
        ),
        float(np.max(np.abs(A_gs @ x - model._gs_n) / np.maximum(1, model._gs_n), initial=0)),
        float(np.max(np.abs(A_qg @ x - qg_n) / np.maximum(1, qg_n), initial=0)),
    )
    know = [0.0]
    fact_res = {}
    violations = {}
    for f in eq_facts:
        r = float(np.max(np.abs(f.A @ x - f.b), initial=0))
        fact_res[f.name] = r
        know.append(r)
    for f in in_facts:
        r = float(np.max(np.maximum(f.A @ x - f.b, 0), initial=0))
        fact_res[f.name] = r
        know.append(r)
    if convex:
        old = model.x.value
        model.x.value = x
        try:
            for f in convex:
                r = float(np.max(f.constraint.violation(), initial=0))
                if f.sense == "soft":
                    violations[f.name] = r
                    continue
                fact_res[f.name] = r
                know.append(r)
        finally:
            model.x.value = old
    know_res = max(know)
    ref_n = np.where(model._ref >= 0, x[np.maximum(model._ref, 0)], model._n)
    F = float(_entropy_terms(x, ref_n).sum())
    F_fixed = float(_entropy_terms(np.where(free, 0.0, x), ref_n).sum())
    bound = F_fixed + bound_free if not np.isnan(bound_free) else np.nan
    gap = (bound - F) / N if not np.isnan(bound) else np.nan

    # duals on the user's scale: rate of change of H (nats/record) per unit of the fact
    duals = {}
    pos = 0
    for f in eq_facts:
        v = nu_eq[pos : pos + f.size] / N
        pos += f.size
        duals[f.name] = v
    pos = 0
    for f in in_facts:
        v = mu_in[pos : pos + f.size] / N
        pos += f.size
        duals[f.name] = v
    for f in convex:
        duals[f.name] = np.array([np.nan])
    order_names = [f.name for f in facts]
    dual_series = _dual_series(order_names, duals, facts)

    cert = Certificate(
        data_residual=data_res,
        knowledge_residual=know_res,
        entropy=F / N,
        dual_bound=bound / N if not np.isnan(bound) else np.nan,
        gap=gap,
        tolerance=tol,
        n_records=N,
    )
    status = "optimal" if all(s == cp.OPTIMAL for s in statuses) else "optimal_inaccurate"
    comps = pd.DataFrame(comp_records)
    solver_stats = {
        "solver": solver_name,
        "components": n_comp,
        "closed_form": n_closed,
        "solved": n_comp - n_closed,
        "fixed_by_presolve": int((~free).sum()),
        # cells proved 0 after presolve: by the dual's recession certificate or an LP
        "forced_zeros": {"dual certificate": 0, "LP": 0, **zero_log},
        "cells": n,
        "setup_time": t_setup,
        "solve_time": float(comps["solve_time"].sum()) if len(comps) else 0.0,
        "iterations": int(comps["iterations"].fillna(0).sum()) if len(comps) else 0,
        "total_time": t_total,
        "options": opts,
    }
    if cert.primal_residual > tol:
        raise InaccurateSolution(
            f"{solver_name} answer fails our check: {cert}; tolerance {tol:g} "
            "(try another solver or tighter solver options)"
        )
    gap_ok = np.isnan(gap) or abs(gap) <= max(tol, 1e-6 * abs(F / N))
    if not gap_ok:
        status = "optimal_inaccurate"
        warnings.warn(
            f"{solver_name}: duality gap {gap:.2e} nats/record exceeds {tol:g}",
            InaccuracyWarning,
            stacklevel=3,
        )
    return Result(
        model=model,
        x=x,
        status=status,
        certificate=cert,
        duals=dual_series,
        solver_stats=solver_stats,
        components=comps,
        fact_residuals=fact_res,
        violations=violations,
        fixed=~free,
    )


_POLISH_DEADLINE = [float("inf")]  # perf_counter time after which polishing gives up
#: components with more rows keep the solver's answer (factoring A D A' gets too costly)
POLISH_MAX_ROWS = 12_000


def _polish(A, b, nu, n, max_iter: int = 30):
    """Newton's method on the Lagrange dual from the solver's multipliers.

    ``g(nu) = nu.b + sum n exp(-1 - A'nu)``, gradient ``b - A x(nu)``, Hessian
    ``A diag(x) A'`` with ``x(nu) = n exp(-1 - A'nu)``. Started next to the optimum (the
    solver's answer) it converges quadratically to the residuals of floating point; the
    primal answer is then x(nu) itself. Returns ``(x, nu)`` or ``None`` when a step fails
    (singular Hessian, no progress), in which case the solver's answer stands.
    """

    AT = sp.csc_array(A.T)

    def x_of(v):
        return n * np.exp(np.clip(-1.0 - AT @ v, -700.0, 700.0))

    scale = max(1.0, float(np.max(np.abs(b), initial=0.0)))
    ridge_state = {}
    x = x_of(nu)
    r = A @ x - b
    res = float(np.max(np.abs(r), initial=0.0))
    for _ in range(max_iter):
        if res <= 1e-13 * scale:
            return x, nu
        if time.perf_counter() > _POLISH_DEADLINE[0]:
            return None  # over budget: the solver's own answer stands
        H = sp.csc_array(A @ sp.diags_array(x) @ AT)
        # a fact implied by the data (or by other facts) makes H singular: the multipliers
        # are then not unique, and a tiny ridge picks one without changing x
        d = _solve_newton(H, r, ridge_state)
        if d is None:
            return None
        t = 1.0
        while t > 1e-6:
            nu_t = nu + t * d
            x_t = x_of(nu_t)
            r_t = A @ x_t - b
            res_t = float(np.max(np.abs(r_t), initial=0.0))
            if res_t < res:
                break
            t *= 0.5
        else:
            break
        nu, x, r, res = nu_t, x_t, r_t, res_t
    return (x, nu) if res <= 1e-9 * scale else None


def _polish_kkt(Ad, bd, nud, Fe, fe, nu_e, Fi, fi, mu_i, nk, rounds: int = 6):
    """Polish with inequality rows: an active-set loop around :func:`_polish`.

    Rows with a positive multiplier start as equalities; after each polish, rows whose
    multiplier turned negative leave the set and violated rows join it, until the KKT
    conditions hold (multipliers >= 0, inequalities satisfied) or ``rounds`` run out.
    """
    if Fi is None:
        out = _polish(
            Ad if Fe is None else sp.vstack([Ad, Fe], format="csr"),
            bd if Fe is None else np.concatenate([bd, fe]),
            nud if Fe is None else np.concatenate([nud, nu_e]),
            nk,
        )
        if out is None:
            return None
        y, nu = out
        return y, nu[: len(bd)], (None if Fe is None else nu[len(bd) :]), None
    scale = max(1.0, float(np.max(mu_i, initial=0.0)))
    starts = [mu_i > 1e-6 * scale, np.zeros(len(fi), dtype=bool), mu_i > 1e-9 * scale]
    tried = []
    for active in starts:
        if any(np.array_equal(active, t) for t in tried):
            continue
        tried.append(active)
        out = _active_set_rounds(Ad, bd, nud, Fe, fe, nu_e, Fi, fi, mu_i, nk, active, rounds)
        if out is not None:
            return out
    return None


def _active_set_rounds(Ad, bd, nud, Fe, fe, nu_e, Fi, fi, mu_i, nk, active, rounds):
    mu_i = np.where(active, mu_i, 0.0)
    for _ in range(rounds):
        blocks = [Ad] + ([Fe] if Fe is not None else []) + [Fi[active]]
        rhs = [bd] + ([fe] if Fe is not None else []) + [fi[active]]
        start = [nud] + ([nu_e] if Fe is not None else []) + [mu_i[active]]
        out = _polish(
            sp.vstack(blocks, format="csr"), np.concatenate(rhs), np.concatenate(start), nk
        )
        if out is None:
            return None
        y, nu = out
        j = len(bd) + (0 if Fe is None else len(fe))
        mu_new = np.zeros(len(fi))
        mu_new[active] = nu[j:]
        slack = Fi @ y - fi
        bad_mu = active & (mu_new < -1e-12)
        bad_slack = ~active & (slack > 1e-12 * np.maximum(1.0, np.abs(fi)))
        if not bad_mu.any() and not bad_slack.any():
            return (
                y,
                nu[: len(bd)],
                None if Fe is None else nu[len(bd) : j],
                np.maximum(mu_new, 0.0),
            )
        active = (active & ~bad_mu) | bad_slack
        mu_i = np.maximum(mu_new, 0.0)
        nud, nu_e = nu[: len(bd)], (None if Fe is None else nu[len(bd) : j])
    return None


def _forced_zeros(A_cls, A_qg, A_gs, F_eq, F_in, model, qg_n, f_eq, f_in, fixed, suspects):
    """Which suspect cells are 0 in every feasible answer (:func:`dual.lp_forced_zeros`
    on the free cells, the fixed ones moved to the right side)."""
    free = np.isnan(fixed)
    vals = np.where(free, 0.0, fixed)
    A_eq = sp.vstack([A_cls, A_qg, A_gs, F_eq], format="csr")
    b_eq = np.concatenate([model._class_n, qg_n, model._gs_n, f_eq]) - A_eq @ vals
    pos = np.full(len(fixed), -1)
    pos[free] = np.arange(int(free.sum()))
    sus = pos[np.unique(suspects)]
    G = h = None
    if F_in.shape[0]:
        G, h = sp.csr_array(F_in[:, free]), f_in - F_in @ vals
    found = lp_forced_zeros(sp.csr_array(A_eq[:, free]), b_eq, G, h, sus[sus >= 0])
    return np.flatnonzero(free)[found]


def _fact_names(fs, rows) -> list[str]:
    out, starts, pos = [], [], 0
    for f in fs:
        starts.append(pos)
        pos += f.size
    starts = np.array(starts + [pos])
    for r in rows:
        j = int(np.searchsorted(starts, r, side="right") - 1)
        out.append(fs[j].name)
    return out


def _check_resolved(fs, empty, violation, tol, sense):
    """Fact rows with no free cell left must already hold."""
    if not empty.any():
        return
    names = _fact_names(fs, np.flatnonzero(empty & (violation > tol)))
    if names:
        uniq = sorted(set(names))
        raise InfeasibleKnowledge(
            f"the facts contradict the data: {len(uniq)} fact(s) cannot hold once the data's "
            f"forced values are in ({', '.join(uniq[:5])})",
            conflicts=pd.DataFrame({"fact": uniq}),
        )


def _dual_series(names, duals, facts) -> pd.Series:
    index, values = [], []
    for f in facts:
        v = np.atleast_1d(duals[f.name])
        if f.size == 1 and not f.shape:
            index.append(f.name)
            values.append(float(v[0]))
        else:
            for i, vi in enumerate(v):
                index.append(f"{f.name}[{i}]")
                values.append(float(vi))
    return pd.Series(values, index=pd.Index(index, name="fact"), name="dual", dtype=float)


def _substitute(node, var, replacement):
    """Copy a cvxpy expression or constraint tree with ``var`` replaced."""
    if node is var:
        return replacement
    args = getattr(node, "args", None)
    if not args:
        return node
    return node.copy([_substitute(a, var, replacement) for a in args])
