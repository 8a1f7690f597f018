"""The Hessian's factorizations (maxent_privacy.solve.factor): qdldl and CHOLMOD agree, the
choice between them follows the measured times, and CHOLMOD's failures fall back."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from paper_models import benchmark

from maxent_privacy.solve import factor as factor_module
from maxent_privacy.solve.factor import HAVE_CHOLMOD, Qdldl, Supernodal, factor, prefer_ldl
from maxent_privacy.solve.hessian import solve_upper

needs_cholmod = pytest.mark.skipif(not HAVE_CHOLMOD, reason="cvxopt (CHOLMOD) not installed")


def _expander(n: int, degree: int, seed: int) -> np.ndarray:
    """A dense SPD matrix shaped like H of pooled releases: a sum of random matchings'
    incidence products (every row coupled with ``degree`` random others) plus a diagonal."""
    rng = np.random.default_rng(seed)
    H = np.diag(rng.uniform(1.0, 2.0, n)) * degree
    for _ in range(degree):
        p = rng.permutation(n)
        for a, b in zip(p[0::2], p[1::2], strict=False):
            w = rng.uniform(0.1, 0.5)
            H[a, b] = H[b, a] = H[a, b] - w
    return H


@needs_cholmod
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_both_backends_solve_the_same_system(seed):
    H = _expander(300, 5, seed)
    U = sp.csc_array(np.triu(H))
    g = np.random.default_rng(seed).standard_normal(300)
    exact = np.linalg.solve(H, g)
    for f in (Qdldl(U), Supernodal(U)):
        np.testing.assert_allclose(f.solve(g), exact, rtol=1e-9, atol=1e-12)
    # a refill at new values (same pattern) solves the new system
    H2 = H + np.diag(np.linspace(0.5, 1.5, 300))
    U2 = sp.csc_array(np.triu(H2))
    for f in (Qdldl(U), Supernodal(U)):
        f.update(U2)
        np.testing.assert_allclose(f.solve(g), np.linalg.solve(H2, g), rtol=1e-9, atol=1e-12)


@needs_cholmod
def test_the_faster_backend_is_kept(monkeypatch):
    """A pattern's first factorization is CHOLMOD's (timed); its second qdldl's (timed);
    the faster one refills the rest."""
    monkeypatch.setattr(factor_module, "SUPERNODAL_MIN_ROWS", 10)
    H = _expander(200, 4, 3)
    U = sp.csc_array(np.triu(H))
    state: dict = {}
    assert isinstance(factor(U, state), Supernodal) and "factor_kind" not in state
    state["supernodal_seconds"] = np.inf  # qdldl is faster than that
    second = factor(U, state)
    assert isinstance(second, Qdldl) and state["factor_kind"] == "qdldl"
    assert factor(U, state) is second  # refilled, not made again
    fresh: dict = {}
    factor(U, fresh)
    fresh["supernodal_seconds"] = 0.0  # CHOLMOD is faster than anything
    assert isinstance(factor(U, fresh), Supernodal) and fresh["factor_kind"] == "supernodal"
    # a slow first CHOLMOD factorization decides at once
    monkeypatch.setattr(factor_module, "SUPERNODAL_SURE_SECONDS", 0.0)
    sure: dict = {}
    factor(U, sure)
    assert sure["factor_kind"] == "supernodal"
    # below the row count, qdldl only
    monkeypatch.setattr(factor_module, "SUPERNODAL_MIN_ROWS", 10_000)
    small: dict = {}
    assert isinstance(factor(U, small), Qdldl) and small["factor_kind"] == "qdldl"


@needs_cholmod
def test_a_singular_h_falls_back_to_ldl(monkeypatch):
    """H with a row implied by others (a fact implied by the data): CHOLMOD's Cholesky
    fails or misses the residual test; qdldl's LDL' (or a ridge) gives a solution."""
    monkeypatch.setattr(factor_module, "SUPERNODAL_MIN_ROWS", 2)
    B = np.array([[2.0, 1.0, 0.0, 1.0], [1.0, 3.0, 1.0, 0.0], [0.0, 1.0, 1.0, 2.0]])
    C = np.vstack([B, B[0] + B[1]])  # row 3 = row 0 + row 1
    H = C @ np.diag([1.0, 2.0, 1.0, 3.0]) @ C.T
    g = H @ np.array([1.0, -2.0, 0.5, 0.0])
    state: dict = {}
    d = solve_upper(sp.csc_array(np.triu(H)), g, state)
    assert d is not None and float(g @ d) > 0
    np.testing.assert_allclose(H @ d, g, atol=1e-7)
    assert not prefer_ldl({}) and not prefer_ldl({"factor_kind": "qdldl", "ldl": (None,)})


def _counted(cls, made: list):
    class Counted(cls):
        def __init__(self, U):
            made.append(U.shape[0])
            super().__init__(U)

    return Counted


@needs_cholmod
def test_the_solve_path_gives_the_same_answer_with_either_backend(monkeypatch):
    """A pooled three-release instance solved with every factorization by qdldl and with
    CHOLMOD from 10 rows on: the same certified answer."""

    from maxent_privacy import MaxEntModel

    instance = benchmark("random_instances").instance

    releases = instance(101, (300, 600))[0]
    monkeypatch.setattr(factor_module, "HAVE_CHOLMOD", False)
    plain = MaxEntModel(releases).solve(solver="maxent")
    monkeypatch.setattr(factor_module, "HAVE_CHOLMOD", HAVE_CHOLMOD)
    monkeypatch.setattr(factor_module, "SUPERNODAL_MIN_ROWS", 10)
    monkeypatch.setattr(factor_module, "SUPERNODAL_SURE_SECONDS", 0.0)  # CHOLMOD only
    made = []
    monkeypatch.setattr(factor_module, "Supernodal", _counted(Supernodal, made))
    chol = MaxEntModel(releases).solve(solver="maxent")
    assert made  # the Hessians were factored by CHOLMOD
    for result in (plain, chol):
        assert result.certificate.data_residual <= 1e-9 and abs(result.certificate.gap) <= 1e-9
    np.testing.assert_allclose(chol.x, plain.x, rtol=0, atol=1e-7)
