"""The stacked small-system kernels of :mod:`maxent_privacy.solve.small_systems` and the
bucket layout of :mod:`maxent_privacy.solve.matrix_scaling` against numpy and pandas."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from maxent_privacy.solve.matrix_scaling import dense_rank_within
from maxent_privacy.solve.small_systems import gram, solve_spd


@pytest.mark.parametrize("k", [1, 2, 4, 7, 10, 12])
@pytest.mark.parametrize("n", [3, 250])
@pytest.mark.parametrize("force", [False, True])
def test_solve_spd_equals_lapack(k, n, force):
    rng = np.random.default_rng(k * 100 + n)
    M = rng.normal(size=(n, k, k))
    A = M @ np.swapaxes(M, 1, 2) + 0.5 * np.eye(k)  # positive definite
    g = rng.normal(size=(n, k))
    expect = np.linalg.solve(A, g[:, :, None])[:, :, 0]
    got = solve_spd(np.moveaxis(A, 0, -1), g.T.copy(), force=force).T
    assert np.abs(got - expect).max() <= 1e-10 * max(np.abs(expect).max(), 1.0)


def test_solve_spd_floors_a_singular_pivot():
    A = np.zeros((2, 2, 1))  # rank 0: a huge answer, never a nan
    out = solve_spd(A, np.ones((2, 1)), force=True)
    assert np.all(np.isfinite(out)) and np.all(np.abs(out) > 1e100)


@pytest.mark.parametrize("k", [1, 3, 10, 14])
def test_gram_is_the_symmetric_product(k):
    rng = np.random.default_rng(k)
    y = rng.random((6, k, 30))
    x = rng.random((6, 1, 30)) * y  # x = r y, r constant over the k axis
    expect = np.einsum("cib,cjb->ijb", x, y)
    assert np.allclose(gram(x, y), expect, rtol=1e-12, atol=0)


@settings(max_examples=60, deadline=None)
@given(
    group=st.lists(st.integers(0, 5), min_size=1, max_size=40),
    seed=st.integers(0, 2**31 - 1),
)
def test_dense_rank_within_equals_pandas(group, seed):
    rng = np.random.default_rng(seed)
    group = np.asarray(group)
    key = rng.integers(-3, 7, len(group))
    frame = pd.DataFrame({"g": group, "k": key})
    expect = frame.groupby("g")["k"].rank(method="dense").to_numpy(int) - 1
    assert dense_rank_within(group, key).tolist() == expect.tolist()
