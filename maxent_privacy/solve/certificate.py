"""The certificate: our own arithmetic on a solver's answer, before anyone sees it.

Residuals of every data row and fact are recomputed from the answer, with the entropy and
a dual bound from the multipliers: for ``max sum -x log(x/n)`` subject to ``A x = b`` and
``G x <= h`` the Lagrange dual is ``g(nu, mu) = nu.b + mu.h + sum n exp(-1 - A'nu - G'mu)``
(mu >= 0), an upper bound on the maximum entropy. The gap g - F is reported; an answer
whose residual exceeds the tolerance raises :class:`InaccurateSolution`, a large gap
warns with :class:`InaccuracyWarning`.

>>> import numpy as np, scipy.sparse as sp
>>> A = sp.csr_array(np.ones((1, 2))); n = np.ones(2)
>>> nu = np.array([-1 + np.log(2)])          # optimum of max H(x) s.t. x1 + x2 = 1
>>> bool(abs(dual_bound(A, np.array([1.0]), nu, None, None, None, n) - np.log(2)) < 1e-12)
True
"""

from __future__ import annotations

import warnings

import numpy as np

from ..errors import InaccurateSolution
from ..numerics import dual_bound, entropy_terms
from ..results import Certificate
from . import tolerances as tl
from .components import Solution
from .problem import MaxEntProblem

__all__ = ["InaccuracyWarning", "certify", "dual_bound"]


class InaccuracyWarning(UserWarning):
    """The solver's answer passed the residual check but its duality gap is large."""


def _data_residual(p: MaxEntProblem, x: np.ndarray) -> float:
    """Largest relative violation of a data row; a negative cell counts as one too."""
    out = float(max(0.0, -x.min(initial=0.0)))
    for A, b in p.data_blocks():
        out = max(out, float(np.max(np.abs(A @ x - b) / np.maximum(1, b), initial=0)))
    return out


def _convex_residuals(p: MaxEntProblem, x: np.ndarray) -> tuple[dict, dict]:
    """(residuals of convex facts, violations of soft facts) at ``x``."""
    residual, violation = {}, {}
    if not p.convex:
        return residual, violation
    old = p.x_var.value
    p.x_var.value = x
    try:
        for f in p.convex:
            r = float(np.max(f.constraint.violation(), initial=0))
            (violation if f.sense == "soft" else residual)[f.name] = r
    finally:
        p.x_var.value = old
    return residual, violation


def entropy_of(p: MaxEntProblem, x: np.ndarray) -> np.ndarray:
    """The terms ``-x log(x / n)`` (placement cells against their value cell), count scale."""
    s = p.structure
    ref = s.placement_of
    base = np.where(ref >= 0, x[np.maximum(ref, 0)], s.cell_n)
    return entropy_terms(x, base)


def certify(p: MaxEntProblem, sol: Solution, free: np.ndarray, tol: float, solver: str):
    """The :class:`Certificate` of ``sol`` (all cells), with fact residuals and soft-fact
    violations; raises :class:`InaccurateSolution` when a residual exceeds ``tol``."""
    x = sol.x
    fact_res = p.rows.residuals(p, x)
    convex_res, violations = _convex_residuals(p, x)
    fact_res.update(convex_res)
    N = p.n_records
    terms = entropy_of(p, x)
    F = float(terms.sum())
    fixed = np.ones(p.n_cells, dtype=bool)
    fixed[free] = False
    bound = float(terms[fixed].sum()) + sol.bound
    cert = Certificate(
        data_residual=_data_residual(p, x),
        knowledge_residual=max([0.0, *fact_res.values()]),
        entropy=F / N,
        dual_bound=bound / N if not np.isnan(bound) else np.nan,
        gap=(bound - F) / N if not np.isnan(bound) else np.nan,
        tolerance=tol,
        n_records=N,
    )
    if cert.primal_residual > tol:
        raise InaccurateSolution(
            f"{solver} answer fails our check: {cert}; tolerance {tol:g} "
            "(try another solver or tighter solver options)"
        )
    return cert, fact_res, violations


def gap_ok(cert: Certificate, solver: str) -> bool:
    """Whether the duality gap is small; warns with :class:`InaccuracyWarning` if not."""
    gap, tol = cert.gap, cert.tolerance
    if np.isnan(gap) or abs(gap) <= max(tol, tl.GAP_RELATIVE * abs(cert.entropy)):
        return True
    warnings.warn(
        f"{solver}: duality gap {gap:.2e} nats/record exceeds {tol:g}",
        InaccuracyWarning,
        stacklevel=4,
    )
    return False
