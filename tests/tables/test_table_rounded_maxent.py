"""The maximum-entropy table of rounded tables (every count an interval).

* tiny three-way tables published as their three two-way margins randomly rounded to base
  3: the table meets every interval (computed here from the published counts) and the
  total, and equals the optimum of scipy's SLSQP on the primal written here;
* census-style Adult crosstabs rounded to base 3 and 5 (a case where iterative scaling
  with intervals creeps and Newton's active set did not settle): solved and verified.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize

from maxent_privacy import MaxEntModel, Tabulated, datasets

PAIRS = ((0, 1), (0, 2), (1, 2))
NAMES = ("a", "b", "c")


def rounded(counts: np.ndarray, base: int, rng) -> np.ndarray:
    r = counts % base
    return np.where(rng.random(counts.shape) < r / base, counts - r + base, counts - r)


def published(seed: int, shape, records: int, base: int):
    """(truth, tables, our rows: list of (cells mask, low, high))."""
    rng = np.random.default_rng(seed)
    truth = rng.multinomial(records, rng.dirichlet(np.full(int(np.prod(shape)), 0.8)))
    truth = truth.reshape(shape)
    tables, ours = [], []
    idx = np.arange(truth.size).reshape(shape)
    for i, j in PAIRS:
        other = tuple(k for k in range(3) if k not in (i, j))
        shown = rounded(truth.sum(axis=other), base, rng)
        rows = []
        for u, v in itertools.product(range(shape[i]), range(shape[j])):
            rows.append({NAMES[i]: f"{NAMES[i]}{u}", NAMES[j]: f"{NAMES[j]}{v}",
                         "count": int(shown[u, v])})  # fmt: skip
            mask = np.zeros(truth.size, dtype=bool)
            mask[np.take(np.take(idx, [u], axis=i), [v], axis=j).ravel()] = True
            ours.append((mask, max(shown[u, v] - (base - 1), 0), shown[u, v] + (base - 1)))
        tables.append(Tabulated(pd.DataFrame(rows), qi=[NAMES[i], NAMES[j]], rounding=base))
    return truth, tables, ours


def slsqp(ours, n: int, total: float) -> np.ndarray:
    """max -sum y log y over our intervals and the total, by SLSQP."""

    def negative_entropy(y):
        y = np.maximum(y, 1e-12)
        return float(np.sum(y * np.log(y)))

    def gradient(y):
        return np.log(np.maximum(y, 1e-12)) + 1.0

    cons = [{"type": "eq", "fun": lambda y: np.sum(y) - total}]
    for mask, low, high in ours:
        m = mask.astype(float)
        cons += [
            {"type": "ineq", "fun": lambda y, m=m, lo=low: m @ y - lo, "jac": lambda y, m=m: m},
            {"type": "ineq", "fun": lambda y, m=m, hi=high: hi - m @ y, "jac": lambda y, m=m: -m},
        ]
    res = minimize(
        negative_entropy, np.full(n, total / n), jac=gradient, constraints=cons,
        bounds=[(0, None)] * n, method="SLSQP", options={"ftol": 1e-12, "maxiter": 1000},
    )  # fmt: skip
    assert res.success, res.message
    return res.x


def entropy(y):
    y = y[y > 0]
    return float(-np.sum(y * np.log(y)))


@pytest.mark.parametrize("seed", range(8))
def test_rounded_maxent_equals_slsqp(seed):
    truth, tables, ours = published(seed, (2, 2, 3), 14, 3)
    model = MaxEntModel(tables, total=int(truth.sum()))
    result = model.solve()
    assert result.certificate["verified"]
    frame = model.combinations
    cell = {tuple(r): k for k, r in enumerate(frame[list(NAMES)].itertuples(index=False))}
    order = [cell[(f"a{u}", f"b{v}", f"c{w}")] for u, v, w in np.ndindex(truth.shape)]
    y = result.y[order]
    assert abs(y.sum() - truth.sum()) < 1e-4
    for mask, low, high in ours:
        assert low - 1e-4 <= y[mask].sum() <= high + 1e-4
    best = slsqp(ours, truth.size, float(truth.sum()))
    assert entropy(y) >= entropy(best) - 1e-5
    np.testing.assert_allclose(y, best, atol=2e-3)


@pytest.mark.parametrize("seed", range(4))
def test_rounded_maxent_by_lbfgs_equals_slsqp(seed, monkeypatch):
    """The path of large tables (L-BFGS-B on the dual), taken here by a small one."""
    from maxent_privacy.tables import solve

    monkeypatch.setattr(solve, "CONIC_CELLS", 0)
    truth, tables, ours = published(seed, (2, 3, 3), 20, 3)
    model = MaxEntModel(tables, total=int(truth.sum()))
    result = model.solve()
    assert result.summary["solver"] == "maxent (L-BFGS-B on the dual)"
    assert result.certificate["verified"]
    frame = model.combinations
    cell = {tuple(r): k for k, r in enumerate(frame[list(NAMES)].itertuples(index=False))}
    y = result.y[[cell[(f"a{u}", f"b{v}", f"c{w}")] for u, v, w in np.ndindex(truth.shape)]]
    best = slsqp(ours, truth.size, float(truth.sum()))
    assert entropy(y) >= entropy(best) - 1e-5
    np.testing.assert_allclose(y, best, atol=2e-3)


def adult_rounded(base: int):
    adult = datasets.load_adult()
    adult["region"] = np.where(adult["native_country"] == "United-States", "US", "other")
    adult["age_band"] = pd.cut(adult["age"], [17, 35, 55, 91], right=False).astype(str)
    rng = np.random.default_rng(2019)
    crosstabs = [
        ["region", "sex", "age_band", "income"], ["region", "race", "age_band"],
        ["race", "sex", "age_band", "income"], ["region", "race", "sex", "income"],
    ]  # fmt: skip
    tables = []
    for cols in crosstabs:
        t = adult.groupby(cols).size().reset_index(name="count")
        t["count"] = rounded(t["count"].to_numpy(), base, rng)
        tables.append(Tabulated(t, qi=cols, rounding=base))
    return adult, tables


@pytest.mark.parametrize("base", [3, 5])
def test_adult_crosstabs_rounded_are_solved(base):
    adult, tables = adult_rounded(base)
    model = MaxEntModel(tables, total=len(adult))
    result = model.solve()
    assert result.certificate["verified"]
    rows = model.rows()
    My = rows.M @ result.y
    assert (My >= rows.lower - 0.05).all() and (My <= rows.upper + 0.05).all()
    truth = adult.groupby(model.attributes).size()
    table = result.table().set_index(model.attributes)["count"]
    assert entropy(table.to_numpy()) >= entropy(truth.to_numpy().astype(float))


def test_solve_reports_progress_in_lines():
    adult, tables = adult_rounded(3)
    lines = []
    MaxEntModel(tables, total=len(adult)).solve(progress=lines.append)
    assert lines and all(line.startswith("maximum-entropy table: ") for line in lines)
    assert "steps" in lines[-1] and "residual" in lines[-1]


def test_large_table_scaling_cannot_meet_is_one_line_error(monkeypatch):
    """Past NEWTON_CELLS free combinations, scaling that runs out of time is an error
    saying so (Newton's method would take minutes and gigabytes there)."""
    from maxent_privacy.errors import MaxEntError
    from maxent_privacy.tables import solve

    monkeypatch.setattr(solve, "NEWTON_CELLS", 10)
    monkeypatch.setattr(solve, "CONIC_CELLS", 0)
    monkeypatch.setattr(solve, "SCALING_PER_CELL", 1e-9)
    monkeypatch.setattr(solve, "SCALING_SECONDS_LARGE", 1e-9)
    adult, tables = adult_rounded(3)
    with pytest.raises(MaxEntError, match=r"too many for Newton's method") as caught:
        MaxEntModel(tables, total=len(adult)).solve()
    assert "\n" not in str(caught.value) and "out of time" in str(caught.value)
