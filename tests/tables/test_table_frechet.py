"""Published tables, acceptance (issue 40): a two-way table published only as its two
one-way margins. Every nonnegative table with those margins lies between the Fréchet
bounds max(0, r_i + c_j - N) .. min(r_i, c_j), and each bound is reached by some integral
table (the transportation polytope is integral), so the LP bounds and the exact (integer)
bounds both equal the formula. The maximum-entropy table with fixed margins is the
independence table r_i c_j / N. The expected values are computed here from the margins
alone, never by the package."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from maxent_privacy import MaxEntModel, Tabulated


def random_table(seed: int, rows: int, cols: int, total_max: int = 30) -> np.ndarray:
    """A random two-way table of counts (some zeros, some rows or columns may be empty)."""
    rng = np.random.default_rng(seed)
    total = int(rng.integers(1, total_max + 1))
    probs = rng.dirichlet(np.full(rows * cols, 0.7))
    return rng.multinomial(total, probs).reshape(rows, cols)


def margin_tables(table: np.ndarray, drop_zero_rows: bool = False):
    """The two one-way margins as published tables (columns a and b with counts), and the
    values of a and b. With ``drop_zero_rows`` the rows of count 0 are left out (an
    unlisted value is a count of 0), so the domains must then be given to the model."""
    a_values = [f"a{i}" for i in range(table.shape[0])]
    b_values = [f"b{j}" for j in range(table.shape[1])]
    fa = pd.DataFrame({"a": a_values, "count": table.sum(axis=1)})
    fb = pd.DataFrame({"b": b_values, "count": table.sum(axis=0)})
    if drop_zero_rows:
        fa = fa[fa["count"] > 0].reset_index(drop=True)
        fb = fb[fb["count"] > 0].reset_index(drop=True)
    ta = Tabulated(fa, qi=["a"], count="count", name="by a")
    tb = Tabulated(fb, qi=["b"], count="count", name="by b")
    return ta, tb, a_values, b_values


def frechet(table: np.ndarray):
    """The Fréchet bounds of every cell, from the margins (computed here)."""
    r = table.sum(axis=1)[:, None]
    c = table.sum(axis=0)[None, :]
    n = table.sum()
    return np.maximum(0, r + c - n), np.minimum(r, c)


def build(table: np.ndarray, drop_zero_rows: bool):
    ta, tb, a_values, b_values = margin_tables(table, drop_zero_rows)
    if drop_zero_rows:
        model = MaxEntModel([ta, tb], domains={"a": a_values, "b": b_values})
    else:
        model = MaxEntModel([ta, tb])
    return model, a_values, b_values


def as_grid(frame: pd.DataFrame, column: str, a_values, b_values) -> np.ndarray:
    """One column of a frame indexed by (a, b) (or holding a and b as columns) as a grid
    rows a x columns b; every combination must be there exactly once."""
    flat = frame.reset_index() if "a" not in frame.columns else frame
    flat = flat.set_index(["a", "b"])
    assert not flat.index.duplicated().any()
    assert len(flat) == len(a_values) * len(b_values)
    return np.array([[float(flat.loc[(a, b), column]) for b in b_values] for a in a_values])


def check_bounds(table: np.ndarray, drop_zero_rows: bool = False):
    model, a_values, b_values = build(table, drop_zero_rows)
    low, high = frechet(table)
    assert model.total == table.sum()
    assert model.n_combinations == table.size

    lp = model.bounds(by="cell")
    assert list(lp.index.names) == ["a", "b"]
    np.testing.assert_allclose(as_grid(lp, "lower", a_values, b_values), low, atol=1e-6)
    np.testing.assert_allclose(as_grid(lp, "upper", a_values, b_values), high, atol=1e-6)

    exact = model.bounds(by="cell", exact=True)
    assert list(exact.index.names) == ["a", "b"]
    np.testing.assert_array_equal(as_grid(exact, "lower", a_values, b_values), low)
    np.testing.assert_array_equal(as_grid(exact, "upper", a_values, b_values), high)
    assert exact["lower_exact"].all() and exact["upper_exact"].all()


def check_maxent(table: np.ndarray, drop_zero_rows: bool = False):
    model, a_values, b_values = build(table, drop_zero_rows)
    r = table.sum(axis=1)[:, None]
    c = table.sum(axis=0)[None, :]
    expected = r * c / table.sum()
    result = model.solve()
    got = result.table()
    assert list(got.columns) == ["a", "b", "count"]
    np.testing.assert_allclose(as_grid(got, "count", a_values, b_values), expected, atol=1e-6)
    assert verified(result.certificate)
    assert result.summary["combinations"] == table.size
    assert result.summary["total"] == table.sum()


def verified(certificate) -> bool:
    """The certificate's ``verified`` flag (docs/tables.md names its fields; whether they
    are read as attributes or keys is left open)."""
    if isinstance(certificate, dict):
        return bool(certificate["verified"])
    return bool(certificate.verified)


SEEDS = list(range(8))


@pytest.mark.parametrize("seed", SEEDS)
def test_frechet_bounds_on_seeded_tables(seed):
    rng = np.random.default_rng(1000 + seed)
    rows, cols = int(rng.integers(2, 5)), int(rng.integers(2, 5))
    table = random_table(seed, rows, cols)
    check_bounds(table, drop_zero_rows=bool(seed % 2))


@pytest.mark.parametrize("seed", SEEDS)
def test_maxent_table_is_independence_on_seeded_tables(seed):
    rng = np.random.default_rng(2000 + seed)
    rows, cols = int(rng.integers(2, 5)), int(rng.integers(2, 5))
    table = random_table(seed + 50, rows, cols)
    check_maxent(table, drop_zero_rows=bool(seed % 2))


def test_frechet_bounds_are_not_trivial_here():
    """A fixed table whose bounds are neither 0..N nor one point (the formula is exercised
    on both sides: a positive lower bound and an upper bound below the margins' total)."""
    table = np.array([[5, 1, 0], [2, 4, 3]])
    low, high = frechet(table)
    assert low.max() > 0 and (low < high).any()
    check_bounds(table)
    check_maxent(table)


tables = st.tuples(st.integers(2, 4), st.integers(2, 5), st.integers(0, 2**32 - 1), st.booleans())


@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(tables)
def test_frechet_bounds_hypothesis(spec):
    rows, cols, seed, drop = spec
    check_bounds(random_table(seed, rows, cols), drop_zero_rows=drop)


@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(tables)
def test_maxent_independence_hypothesis(spec):
    rows, cols, seed, drop = spec
    check_maxent(random_table(seed, rows, cols), drop_zero_rows=drop)
