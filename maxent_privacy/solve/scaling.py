"""Stage 3, scaling: each fact row divided by its largest |coefficient| on the free cells.

Facts are written on the probability scale (coefficients 1/n(q)) while the data rows
count records; scaling puts both near 1, which interior-point solvers and our Newton
steps need. ``invert`` scales the multipliers back, so that duals are on the user's scale.

>>> import numpy as np, scipy.sparse as sp
>>> row_max_abs(sp.csr_array(np.array([[0.5, -2.0], [0.0, 0.0]]))).tolist()
[2.0, 1.0]
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .presolve import Reduced

__all__ = ["ScaleFactRows", "row_max_abs"]


def row_max_abs(F: sp.csr_array) -> np.ndarray:
    """Largest |coefficient| of each row (1 for an empty row)."""
    scale = np.ones(F.shape[0])
    nz = np.diff(F.indptr) > 0
    if nz.any():
        scale[nz] = np.asarray(abs(F).max(axis=1).toarray()).ravel()[nz]
    return scale


class ScaleFactRows:
    """Divide each fact row by its largest |coefficient|; multipliers come back unscaled."""

    def apply(self, red: Reduced) -> tuple[Reduced, tuple]:
        s_eq, s_in = row_max_abs(red.Feq), row_max_abs(red.Fin)
        out = red.replace(
            Feq=sp.csr_array(sp.diags_array(1.0 / s_eq) @ red.Feq), feq=red.feq / s_eq,
            Fin=sp.csr_array(sp.diags_array(1.0 / s_in) @ red.Fin), fin=red.fin / s_in,
            eq_scale=s_eq, in_scale=s_in,
        )  # fmt: skip
        return out, (s_eq, s_in)

    def invert(self, solution, scales):
        s_eq, s_in = scales
        solution.nu_eq = solution.nu_eq / s_eq
        solution.mu_in = solution.mu_in / s_in
        return solution
