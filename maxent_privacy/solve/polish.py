"""Polish: Newton steps on the Lagrange dual from a conic solver's multipliers.

``g(nu) = nu.b + sum n exp(-1 - A'nu)`` has gradient ``b - A x(nu)`` and Hessian
``A diag(x) A'`` with ``x(nu) = n exp(-1 - A'nu)``. Started next to the optimum (the
solver's answer) it converges quadratically to the residuals of floating point, and the
primal answer is x(nu) itself. Inequality rows are handled by an active-set loop. When a
step fails (singular Hessian beyond a ridge, no progress, over the time budget given as
``deadline``) the solver's own answer stands.

>>> import numpy as np, scipy.sparse as sp
>>> A = sp.csr_array(np.ones((1, 2)))
>>> x, nu = polish(A, np.array([1.0]), np.array([-0.3]), np.ones(2))
>>> np.round(x, 12).tolist()
[0.5, 0.5]
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from . import tolerances as tl
from .newton import solve_newton

__all__ = ["RowBlock", "polish", "polish_kkt"]


def polish(A, b, nu, n, deadline: float = float("inf"), max_iter: int = 30):
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
        if res <= tl.POLISH_STOP * scale:
            return x, nu
        if time.perf_counter() > deadline:
            return None  # over budget: the solver's own answer stands
        H = sp.csc_array(A @ sp.diags_array(x) @ AT)
        # a fact implied by the data (or by other facts) makes H singular: the multipliers
        # are then not unique, and a tiny ridge picks one without changing x
        d = solve_newton(H, r, ridge_state)
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
    return (x, nu) if res <= tl.POLISH_ACCEPT * scale else None


@dataclass(frozen=True)
class RowBlock:
    """One block of rows for :func:`polish_kkt`: ``A x = b`` (or ``A x <= b``) and the
    solver's multipliers ``nu`` of its rows; ``A`` None: no such rows."""

    A: sp.csr_array | None
    b: np.ndarray | None
    nu: np.ndarray | None


def polish_kkt(data: RowBlock, eq: RowBlock, ineq: RowBlock, nk, deadline, rounds: int = 6):
    """Polish with inequality rows: an active-set loop around :func:`polish`.

    ``data``: the data rows; ``eq``, ``ineq``: the equality and the inequality facts (with
    their multipliers; the inequalities' are >= 0); ``nk``: the cells' base measure.
    Rows with a positive multiplier start as equalities; after each polish, rows whose
    multiplier turned negative leave the set and violated rows join it, until the KKT
    conditions hold (multipliers >= 0, inequalities satisfied) or ``rounds`` run out.
    Returns ``(x, nu_data, nu_eq, mu_ineq)`` (None for a block without rows), or None.
    """
    Ad, bd, nud = data.A, data.b, data.nu
    Fe, fe, nu_e = eq.A, eq.b, eq.nu
    if ineq.A is None:
        out = polish(
            Ad if Fe is None else sp.vstack([Ad, Fe], format="csr"),
            bd if Fe is None else np.concatenate([bd, fe]),
            nud if Fe is None else np.concatenate([nud, nu_e]),
            nk,
            deadline,
        )
        if out is None:
            return None
        y, nu = out
        return y, nu[: len(bd)], (None if Fe is None else nu[len(bd) :]), None
    fi, mu_i = ineq.b, ineq.nu
    scale = max(1.0, float(np.max(mu_i, initial=0.0)))
    starts = [mu_i > 1e-6 * scale, np.zeros(len(fi), dtype=bool), mu_i > 1e-9 * scale]
    tried = []
    for active in starts:
        if any(np.array_equal(active, t) for t in tried):
            continue
        tried.append(active)
        out = _active_set_rounds(data, eq, ineq, nk, active, rounds, deadline)
        if out is not None:
            return out
    return None


def _active_set_rounds(data: RowBlock, eq: RowBlock, ineq: RowBlock, nk, active, rounds, deadline):
    Ad, bd, nud = data.A, data.b, data.nu
    Fe, fe, nu_e = eq.A, eq.b, eq.nu
    Fi, fi, mu_i = ineq.A, ineq.b, ineq.nu
    mu_i = np.where(active, mu_i, 0.0)
    for _ in range(rounds):
        blocks = [Ad] + ([Fe] if Fe is not None else []) + [Fi[active]]
        rhs = [bd] + ([fe] if Fe is not None else []) + [fi[active]]
        start = [nud] + ([nu_e] if Fe is not None else []) + [mu_i[active]]
        out = polish(
            sp.vstack(blocks, format="csr"),
            np.concatenate(rhs),
            np.concatenate(start),
            nk,
            deadline,
        )
        if out is None:
            return None
        y, nu = out
        j = len(bd) + (0 if Fe is None else len(fe))
        mu_new = np.zeros(len(fi))
        mu_new[active] = nu[j:]
        slack = Fi @ y - fi
        bad_mu = active & (mu_new < -tl.KKT)
        bad_slack = ~active & (slack > tl.KKT * np.maximum(1.0, np.abs(fi)))
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
