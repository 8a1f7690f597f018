"""The maximum-entropy table by L-BFGS-B on the dual: for large tables whose rows are
intervals (rounded counts) or other than counts (statistics, facts).

Over the free combinations, with the rows as ``E y = b``, ``G y <= h``
(:meth:`~.rows.Rows.split`), ``theta = E'v - G'u`` and ``y = N softmax(theta)``, the dual
of the entropy program is

    phi(v, u) = N log sum exp(theta) - N log N - v . b + u . h,

with ``v`` free and ``u >= 0``. It is smooth with simple bounds: scipy's L-BFGS-B
minimizes it. Any point it stops at is a dual point, and
:func:`~maxent_privacy.tables.solve.check` bounds the gap from it. Iterative scaling does
the same work row by row, and creeps on intervals (Hildreth's method). Newton's method
needs factorizations that take minutes past about 10^5 combinations.

>>> import numpy as np, scipy.sparse as sp
>>> from maxent_privacy.tables.rows import Rows
>>> M = sp.csr_array(np.array([[1., 1., 0.], [0., 1., 1.], [1., 1., 1.]]))
>>> r = Rows(M, np.array([0., 2., 3.]), np.array([1., np.inf, 3.]), ["a", "b", "total"],
...          np.array(["published", "published", "total"], dtype=object))
>>> y, (theta, lin) = lbfgs_maxent(r, np.zeros(3, bool), 3.0, 1e-9, seconds=10)
>>> np.round(y, 4).tolist()                    # y0 + y1 <= 1, y1 + y2 >= 2
[0.5, 0.5, 2.0]
"""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp
from scipy.optimize import minimize
from scipy.special import logsumexp

from .rows import Rows

__all__ = ["lbfgs_maxent"]

#: L-BFGS-B iterations between two checks of our certificate
ROUND = 200


def lbfgs_maxent(rows: Rows, zero, N: float, tol: float, seconds: float, bar=None, check=None):
    """(y, (theta, lin)) at the first round whose answer ``check(y, theta, lin, steps)``
    verifies (``steps``: the iterations so far; ``check`` None: after one round), or None
    when none does within ``seconds``. ``bar`` counts the iterations."""
    keep = np.flatnonzero(~zero)
    E, b, G, h = rows.split(keep)
    A = sp.vstack([E, G], format="csr")  # x = (free multipliers of E, >= 0 ones of G)
    AT = sp.csr_array(A.T)
    sign = np.concatenate([np.ones(E.shape[0]), -np.ones(G.shape[0])])
    bound = np.concatenate([b, h])

    def dual(x):
        theta = AT @ (sign * x)
        log_z = logsumexp(theta)
        Ay = A @ (N * np.exp(theta - log_z))
        return N * log_z - N * np.log(N) - sign @ (x * bound), sign * (Ay - bound)

    x = np.zeros(A.shape[0])
    bounds = [(None, None)] * E.shape[0] + [(0.0, None)] * G.shape[0]
    deadline = time.perf_counter() + seconds
    steps = 0
    while True:  # one round at least, then until the deadline
        res = minimize(
            dual, x, jac=True, method="L-BFGS-B", bounds=bounds,
            options={"maxiter": ROUND, "maxcor": 30, "ftol": 0.0, "gtol": 0.0},
        )  # fmt: skip
        x = res.x
        steps += int(res.nit)
        if bar is not None:
            bar.update(int(res.nit))
        theta = AT @ (sign * x)
        y = np.zeros(rows.n)
        y[keep] = N * np.exp(theta - logsumexp(theta))
        full = np.full(rows.n, -np.inf)
        full[keep] = theta
        answer = y, (full, -float(sign @ (x * bound)))
        if check is None or check(y, *answer[1], steps):
            return answer
        if res.nit < ROUND or time.perf_counter() > deadline:
            return None  # stopped short of the round (it can go no further), or out of time
