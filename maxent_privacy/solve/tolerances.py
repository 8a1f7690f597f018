"""Every threshold the solve path decides with, named once, each with what it decides.

Values are relative unless said otherwise: "relative" means measured against
``max(1, |right side|)`` (counts of records) or against the largest coefficient.
"""

from __future__ import annotations

# ----------------------------------------------------------------- presolve (exact rules)
#: a row's remaining right side counts as 0 (its free cells with positive coefficients are
#: then all 0), and a single free cell's value counts as 0; relative to max(1, |rhs|)
ZERO_RHS = 1e-12
#: an inequality fact ``a x <= h`` with ``a >= 0`` forces zeros when ``|h|`` is below this
ZERO_INEQUALITY_RHS = 1e-15
#: the tight-upper-bound rule: a row's target reaches its bound, and a coefficient is
#: below its class's largest; relative
TIGHT = 1e-12
#: the bucket-flow bound: a fact row's target reaches the sum of its bucket bounds; relative
BUCKET_FLOW_TIGHT = 1e-9
#: max-flow runs only when the remaining class and value totals are integers to this
FLOW_INTEGER = 1e-9
#: presolve rounds before giving up on a fixed point (each round fixes at least one cell)
PRESOLVE_MAX_ROUNDS = 10_000

# ------------------------------------------------------------------- implied rows (rank)
#: QR with column pivoting: a diagonal entry below this (relative to the largest) is rank-0
RANK = 1e-9
#: pieces larger than this keep the structural drops only (a dense QR would be too costly)
QR_MAX_ROWS = 1_500
QR_MAX_COLUMNS = 20_000

# ------------------------------------------------------------------ our Newton solver
#: Newton stops when every row residual is below this (relative) and the gap phi - H is
#: below this times the number of records
NEWTON_TOL = 1e-10
NEWTON_MAX_ITER = 200
#: a cell below this times its base measure may be a forced zero that the tolerance hides:
#: Newton goes on until it settles, and a stalled batch does not keep its component
NEWTON_SETTLED = 1e-8
#: the dual bound phi counts as below 0 (no table: infeasible) only below this times the
#: sum of the magnitudes of its terms (their rounding error), besides 1e-9 per record
PHI_ROUNDING = 1e-11

# ------------------------------------------------------------------------------ polish
#: polish stops at this residual (relative to the largest right side) ...
POLISH_STOP = 1e-13
#: ... and its answer replaces the solver's only when its residual is below this
POLISH_ACCEPT = 1e-9
#: components with more rows keep the solver's answer (factoring A D A' gets too costly)
POLISH_MAX_ROWS = 12_000
#: polish stops after this many times the solver's own time (at least POLISH_MIN_SECONDS)
POLISH_TIME_FACTOR = 3.0
POLISH_MIN_SECONDS = 2.0
#: a multiplier of an inequality below -this is wrong-signed; a slack above this violated
KKT = 1e-12
#: an unpolished conic answer's cell below this times max(1, n) is a forced-zero suspect
SUSPECT = 1e-6

# -------------------------------------------------------------------------- forced zeros
#: an LP that lifts a suspect cell above this proves it can be positive
LP_POSITIVE = 1e-9

# -------------------------------------------------------------------------- certificate
#: the duality gap warns above max(tol, this times the entropy)
GAP_RELATIVE = 1e-6

# ----------------------------------------------------------------------------- progress
#: a progress bar by default above these sizes
PROGRESS_COMPONENTS = 200
PROGRESS_CELLS = 200_000
PROGRESS_NEWTON_CELLS = 500_000
