"""The dual's Hessian A P A' (maxent_privacy.solve.hessian) against a dense reference."""

import numpy as np
import pytest
import scipy.sparse as sp
from paper_models import benchmark

from maxent_privacy.solve.hessian import Gram, _unique_inverse, block_jacobi, hessian, solve_upper


def _dense_reference(A, x, cls, R):
    """A P A' with P = blockdiag(diag(x_c) - x_c x_c' / R_c), densely."""
    m = len(x)
    P = np.diag(x)
    for c in range(len(R)):
        idx = np.flatnonzero(cls == c)
        P[np.ix_(idx, idx)] -= np.outer(x[idx], x[idx]) / R[c]
    Ad = A.toarray()
    assert Ad.shape[1] == m
    return Ad @ P @ Ad.T


def _instance(seed, rows=12, cells=40, classes=9, dense_rows=2):
    rng = np.random.default_rng(seed)
    cls = rng.integers(0, classes, cells)
    A = sp.random_array((rows, cells), density=0.15, rng=rng, format="csr")
    # rows over most cells (facts over whole populations), with several cells per class
    A = sp.vstack(
        [A, sp.csr_array(rng.random((dense_rows, cells)) * (rng.random((dense_rows, cells)) < 0.8))]
    )
    x = rng.random(cells) + 0.1
    R = np.bincount(cls, weights=x, minlength=classes)  # class totals of x
    return sp.csr_array(A), x, cls, R


@pytest.mark.parametrize("seed", range(5))
def test_gram_fill_is_the_hessian(seed):
    A, x, cls, R = _instance(seed)
    ref = _dense_reference(A, x, cls, R)
    gram = Gram.of(A, cls, R)
    U = gram.fill(x).toarray()
    assert np.allclose(U, np.triu(ref), rtol=0, atol=1e-12)
    assert np.allclose(hessian(A, x, cls, R).toarray(), ref, rtol=0, atol=1e-12)
    # refilled at another x: the same pattern, the new values
    x2 = x * np.linspace(0.5, 2.0, len(x))
    R2 = np.bincount(cls, weights=x2, minlength=len(R))
    ref2 = _dense_reference(A, x2, cls, R2)
    assert np.allclose(Gram.of(A, cls, R2).fill(x2).toarray(), np.triu(ref2), atol=1e-12)


@pytest.mark.parametrize("shared", [True, False])
def test_hessian_of_measures_products_per_entry(monkeypatch, shared):
    """Past GRAM_SURE_PAIRS the first step is by sparse products; the pattern is found
    for the next steps only when H's entries hold few products each."""
    from maxent_privacy.solve import hessian as hessian_module

    monkeypatch.setattr(hessian_module, "GRAM_SURE_PAIRS", 0)
    rng = np.random.default_rng(3)
    if shared:  # 4 rows over every cell of 30 classes: ~2,000 products on 10 entries
        cls = np.repeat(np.arange(30), 4)
        A = sp.csr_array(np.ones((4, 120)))
    else:  # each cell in a row of its own: one product per entry
        cls = np.repeat(np.arange(40), 2)
        A = sp.csr_array(sp.identity(80))
    x = rng.random(len(cls)) + 0.1
    R = np.bincount(cls, weights=x)
    hess = hessian_module.hessian_of(A, cls, R)
    assert isinstance(hess, hessian_module._Measured)
    for step in range(3):
        xs = x * (1.0 + 0.1 * step)  # refilled at other x, the class totals as made
        assert np.allclose(
            hess.fill(xs).toarray(), np.triu(_dense_reference(A, xs, cls, R)), rtol=0, atol=1e-10
        )
    assert (hess.gram is None) == shared


@pytest.mark.parametrize("seed", range(6))
def test_products_add_up_cells_of_one_kind(seed):
    """Sparse products over the kinds of columns (cells with the same rows and
    coefficients, as the joint cells of generalized releases) give the Hessian."""
    from maxent_privacy.solve.hessian import _Products, column_kinds

    rng = np.random.default_rng(seed)
    base = sp.random_array((14, 25), density=0.25, rng=rng, format="csc")
    base.data = np.round(base.data * 3) + 1 if seed % 2 else np.ones_like(base.data)
    A = sp.csc_array(sp.hstack([base] * 4))  # every pattern four times
    cls = rng.integers(0, 10, A.shape[1])
    x = rng.random(A.shape[1]) + 0.1
    R = np.bincount(cls, weights=x, minlength=10)
    kind, first = column_kinds(A)
    dense = A.toarray()
    assert len(first) == len(np.unique(dense.T, axis=0)) <= 26
    assert all(np.array_equal(dense[:, j], dense[:, first[kind[j]]]) for j in range(A.shape[1]))
    U = _Products(A, cls, R).fill(x).toarray()
    assert np.allclose(U, np.triu(_dense_reference(A, x, cls, R)), rtol=0, atol=1e-10)


def test_gram_declines_too_many_products():
    A, x, cls, R = _instance(0)
    assert Gram.of(A, cls, R, max_pairs=10) is None


def test_gram_sums_duplicate_entries():
    # a row given as two entries on the same cell counts once, added up
    A = sp.csr_array(
        (np.array([1.0, 2.0, 1.0]), np.array([0, 0, 1]), np.array([0, 2, 3])), shape=(2, 2)
    )
    cls, R, x = np.array([0, 1]), np.array([1.0, 1.0]), np.array([1.0, 1.0])
    A_sum = sp.csr_array(np.array([[3.0, 0.0], [0.0, 1.0]]))
    ref = _dense_reference(A_sum, x, cls, R)
    assert np.allclose(Gram.of(A, cls, R).fill(x).toarray(), np.triu(ref))


def test_unique_inverse_is_numpys():
    keys = np.random.default_rng(3).integers(0, 50, 200)
    u, inv = _unique_inverse(keys, 50)
    u_np, inv_np = np.unique(keys, return_inverse=True)
    assert u.tolist() == u_np.tolist()
    assert inv.tolist() == inv_np.tolist()


def test_solve_upper_singular_system():
    # row 2 = row 0 + row 1: H is singular but the system is consistent: a solution
    B = np.array([[2.0, 1.0, 0.0], [1.0, 3.0, 1.0]])
    H = np.vstack([B, B[0] + B[1]]) @ np.vstack([B, B[0] + B[1]]).T
    g = H @ np.array([1.0, -2.0, 0.5])
    state = {}
    d = solve_upper(sp.csc_array(np.triu(H)), g, state)
    assert np.allclose(H @ d, g, atol=1e-6)
    assert float(g @ d) > 0
    # a positive definite system: the exact solution, without a ridge
    H2 = B @ B.T
    d2 = solve_upper(sp.csc_array(np.triu(H2)), np.array([1.0, 2.0]), {})
    assert np.allclose(d2, np.linalg.solve(H2, [1.0, 2.0]), atol=1e-12)


def test_newton_without_the_pattern_gives_the_same_answer(monkeypatch):
    # beyond GRAM_MAX_PAIRS products the Hessian is formed by sparse products instead
    from maxent_privacy import Bucketized, MaxEntModel, datasets
    from maxent_privacy.solve import hessian as hessian_module

    release = Bucketized(
        datasets.du2008_figure1(), qi=["gender", "degree"], sa="disease", group="bucket"
    )
    model = MaxEntModel(release)
    model.add(model.P("Flu", gender="male") == 0.3)
    model.add(model.P("HIV", degree="graduate") <= 0.4)
    with_pattern = model.solve(solver="maxent")
    monkeypatch.setattr(hessian_module, "GRAM_MAX_PAIRS", 0)
    assert Gram.of(sp.csr_array(np.ones((1, 2))), np.array([0, 1]), np.ones(2)) is None
    without = model.solve(solver="maxent")
    assert without.solver_stats["iterations"] == with_pattern.solver_stats["iterations"]
    np.testing.assert_allclose(without.x, with_pattern.x, rtol=0, atol=1e-12)
    reference = model.solve(solver="CLARABEL")
    np.testing.assert_allclose(with_pattern.x, reference.x, rtol=0, atol=1e-6)


def test_pcg_step_with_an_earlier_factor(monkeypatch):
    """With a factor of an earlier H (same pattern) in the state, the step is taken by
    conjugate gradients to the relative accuracy asked for, and is a descent direction."""
    from maxent_privacy.solve import hessian as hessian_module

    monkeypatch.setattr(hessian_module, "_pcg_budget", lambda *a: 50)  # tiny H: PCG even so
    A, x, cls, R = _instance(3, rows=30, cells=120, classes=20)
    gram = Gram.of(A, cls, R)
    state = {}
    g = np.random.default_rng(0).random(A.shape[0])
    exact0 = solve_upper(gram.fill(x), g, state)  # factors H(x)
    np.testing.assert_allclose(_dense_reference(A, x, cls, R) @ exact0, g, atol=1e-8)
    x1 = x * np.exp(0.2 * np.random.default_rng(1).standard_normal(len(x)))
    R1 = np.bincount(cls, weights=x1, minlength=len(R))
    gram1 = Gram.of(A, cls, R1)
    H1 = _dense_reference(A, x1, cls, R1)
    d = solve_upper(gram1.fill(x1), g, state, rtol=1e-3)
    err = np.linalg.norm(H1 @ d - g) / np.linalg.norm(g)
    assert err <= 1e-3 and float(g @ d) > 0
    assert err > 1e-12  # an inexact step: PCG, not a new factorization
    # without an earlier factor (or with rtol = 0), an exact solve
    d0 = solve_upper(gram1.fill(x1), g, {}, rtol=1e-3)
    assert np.linalg.norm(H1 @ d0 - g) / np.linalg.norm(g) <= 1e-10


@pytest.mark.parametrize("seed", [100, 103])
def test_newton_with_pcg_steps_gives_the_same_answer(monkeypatch, seed):
    """Inexact Newton (PCG with the last factor) and exact Newton reach the same answer
    on random two- and three-release instances, each with its certificate."""

    from maxent_privacy import MaxEntModel
    from maxent_privacy.solve import hessian as hessian_module

    instance = benchmark("random_instances").instance

    model = MaxEntModel(instance(seed, (300, 600))[0])
    monkeypatch.setattr(hessian_module, "_pcg_budget", lambda *a: 0)  # always refactor
    exact = model.solve(solver="maxent")
    monkeypatch.setattr(hessian_module, "_pcg_budget", lambda *a: 50)  # PCG after a factor
    calls = _count_successes(monkeypatch, hessian_module, "_pcg")
    inexact = model.solve(solver="maxent")
    assert any(calls)  # some steps were taken by PCG
    _same_certified_answer(exact, inexact)


def test_pcg_on_a_singular_system_falls_back_to_a_factorization(monkeypatch):
    """A singular H is factored with a tiny pivot (or a ridge); conjugate gradients with
    that factor may fail on a later H: the step is then solved by a new factorization,
    and is a solution either way."""
    from maxent_privacy.solve import hessian as hessian_module

    monkeypatch.setattr(hessian_module, "_pcg_budget", lambda *a: 50)
    B = np.array([[2.0, 1.0, 0.0, 1.0], [1.0, 3.0, 1.0, 0.0], [0.0, 1.0, 1.0, 2.0]])
    C = np.vstack([B, B[0] + B[1]])  # row 3 = row 0 + row 1
    state = {}
    H0 = C @ np.diag([1.0, 2.0, 1.0, 3.0]) @ C.T
    solve_upper(sp.csc_array(np.triu(H0)), H0 @ np.ones(4), state)
    assert np.linalg.matrix_rank(H0) == 3 and "ldl" in state
    for scale in ([1.0, 1.0, 1.0, 1.0], [0.5, 4.0, 2.0, 1.0]):
        H1 = C @ np.diag(scale) @ C.T
        g = H1 @ np.array([1.0, -2.0, 0.5, 0.0])
        d = solve_upper(sp.csc_array(np.triu(H1)), g, state, rtol=1e-10)
        assert d is not None and float(g @ d) > 0
        np.testing.assert_allclose(H1 @ d, g, atol=1e-7)


def test_block_jacobi_is_the_inverse_of_the_diagonal_blocks():
    A, x, cls, R = _instance(4, rows=30, cells=120, classes=20)
    H = _dense_reference(A, x, cls, R)
    blocks = np.random.default_rng(0).integers(0, 7, A.shape[0])
    M = block_jacobi(sp.csc_array(np.triu(H)), blocks).toarray()
    for b in np.unique(blocks):
        idx = np.flatnonzero(blocks == b)
        np.testing.assert_allclose(
            M[np.ix_(idx, idx)], np.linalg.pinv(H[np.ix_(idx, idx)]), atol=1e-8
        )
        other = np.flatnonzero(blocks != b)
        assert not M[np.ix_(idx, other)].any()
    assert block_jacobi(sp.csc_array(np.triu(H)), np.zeros(A.shape[0], dtype=int)) is not None
    big = np.zeros(80, dtype=int)  # one block of 80 rows > BJ_MAX_BLOCK: declined
    assert block_jacobi(sp.csc_array(np.eye(80)), big) is None


@pytest.mark.parametrize("seed", [100, 103])
def test_newton_with_block_jacobi_steps_gives_the_same_answer(monkeypatch, seed):
    """Newton steps by block-Jacobi conjugate gradients (blocks: the buckets' Relation
    rows) reach the answer of exact steps, with the certificate."""

    from maxent_privacy import MaxEntModel
    from maxent_privacy.solve import hessian as hessian_module
    from maxent_privacy.solve import newton as newton_module

    instance = benchmark("random_instances").instance

    model = MaxEntModel(instance(seed, (300, 600))[0])
    monkeypatch.setattr(hessian_module, "_pcg_budget", lambda *a: 0)  # exact steps
    exact = model.solve(solver="maxent")
    monkeypatch.setattr(newton_module, "BJ_MIN_ROWS", 0)  # block-Jacobi on every size
    calls = _count_successes(monkeypatch, hessian_module, "_block_pcg")
    inexact = model.solve(solver="maxent")
    assert sum(calls) >= 3  # the steps were taken by block-Jacobi CG
    _same_certified_answer(exact, inexact)


def _count_successes(monkeypatch, module, name: str) -> list:
    """Wrap ``module.name`` (a solve that returns None when it gives up); the list of
    whether each call succeeded."""
    calls, original = [], getattr(module, name)

    def counted(*args):
        out = original(*args)
        calls.append(out is not None)
        return out

    monkeypatch.setattr(module, name, counted)
    return calls


def _same_certified_answer(exact, inexact) -> None:
    for result in (exact, inexact):
        assert result.certificate.data_residual <= 1e-9 and abs(result.certificate.gap) <= 1e-9
    np.testing.assert_allclose(inexact.x, exact.x, rtol=0, atol=1e-7)
