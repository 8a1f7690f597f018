"""The batched bucket Newton of :mod:`maxent_privacy.solve.matrix_scaling` against an
independent I-projection (scipy's minimize on the same dual, written here) and against
alternate scaling: random buckets, priors spread over 300 orders of magnitude, zero
weights that split a bucket into blocks, warm starts."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from maxent_privacy.solve.matrix_scaling import AlternateScaling, BucketNewton


def random_buckets(rng, n_buckets, spread):
    """Cells (class, value row, bucket) of ``n_buckets`` full buckets, weights, totals
    that some table meets (the totals of a random positive table)."""
    cls, gs, bucket = [], [], []
    c0 = g0 = 0
    for b in range(n_buckets):
        k, v = rng.integers(1, 6), rng.integers(1, 6)
        for i in range(k):
            for j in range(v):
                cls.append(c0 + i)
                gs.append(g0 + j)
                bucket.append(b)
        c0, g0 = c0 + k, g0 + v
    cls, gs, bucket = map(np.asarray, (cls, gs, bucket))
    truth = rng.uniform(0.1, 3.0, len(cls))
    R = np.bincount(cls, weights=truth)
    C = np.bincount(gs, weights=truth)
    w = np.exp(rng.uniform(-spread, 0, len(cls)))
    return cls, gs, bucket, R, C, w


def totals_miss(x, cls, gs, R, C):
    return max(
        np.abs(np.bincount(cls, weights=x, minlength=len(R)) - R).max(),
        np.abs(np.bincount(gs, weights=x, minlength=len(C)) - C).max(),
    )


def odds_miss(x, w, cls, gs):
    """x = w a_c b_s: log(x / w) is a class term plus a value term (least squares fit)."""
    y = np.log(x / w)
    A = np.zeros((len(x), cls.max() + 1 + gs.max() + 1))
    A[np.arange(len(x)), cls] = 1
    A[np.arange(len(x)), cls.max() + 1 + gs] = 1
    coef, *_ = np.linalg.lstsq(A, y, rcond=None)
    return np.abs(A @ coef - y).max()


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), spread=st.sampled_from([1.0, 30.0, 300.0]))
def test_newton_is_the_i_projection(seed, spread):
    rng = np.random.default_rng(seed)
    cls, gs, bucket, R, C, w = random_buckets(rng, rng.integers(1, 8), spread)
    scale = BucketNewton(cls, gs, bucket, R, C)
    x = scale(w)
    assert np.all(x > 0)
    assert totals_miss(x, cls, gs, R, C) <= 1e-10 * max(R.max(), 1.0)
    assert odds_miss(x, w, cls, gs) <= 1e-6
    # warm start from another prior, then back: the same answer
    scale(w * rng.uniform(0.5, 2.0, len(w)))
    assert np.abs(scale(w) - x).max() <= 1e-9 * max(R.max(), 1.0)
    if spread < 100:  # alternate scaling crawls on priors spread wider
        alt = AlternateScaling(cls, gs, R, C)(w)
        assert np.abs(alt - x).max() <= 1e-8 * max(R.max(), 1.0)


def test_zero_weights_split_a_bucket_into_blocks():
    # one bucket, classes 0-1 may hold values 0-1 only, class 2 value 2 only
    cls = np.array([0, 0, 1, 1, 2])
    gs = np.array([0, 1, 0, 1, 2])
    R, C = np.array([1.0, 1.0, 1.0]), np.array([1.5, 0.5, 1.0])
    scale = BucketNewton(cls, gs, np.zeros(5, int), R, C)
    x = scale(np.array([1.0, 1.0, 1.0, 3.0, 1.0]))
    assert totals_miss(x, cls, gs, R, C) <= 1e-12
    # odds ratio of the 2 x 2 block kept: (x00 x11) / (x01 x10) = 3
    assert x[0] * x[3] / (x[1] * x[2]) == pytest.approx(3.0, rel=1e-9)
    assert x[4] == pytest.approx(1.0)


def test_logs_give_the_factors():
    rng = np.random.default_rng(3)
    cls, gs, bucket, R, C, w = random_buckets(rng, 5, 5.0)
    scale = BucketNewton(cls, gs, bucket, R, C)
    x = scale(w)
    log_a, log_b = scale.logs(cls, gs, len(R), len(C))
    assert np.abs(w * np.exp(log_a[cls] + log_b[gs]) - x).max() <= 1e-12 * R.max()


@pytest.mark.parametrize("kind", ["newton", "alternate"])
def test_restore_undoes_a_call(kind):
    """``snapshot`` / ``restore``: the warm start after a call is put back exactly (the
    learning adversary undoes a round whose answer it refuses)."""
    rng = np.random.default_rng(3)
    cls, gs, bucket, R, C, w = random_buckets(rng, 4, 5.0)
    scale = (
        BucketNewton(cls, gs, bucket, R, C) if kind == "newton" else AlternateScaling(cls, gs, R, C)
    )
    first = scale(w)
    saved = scale.snapshot()
    scale(w * rng.uniform(0.1, 10.0, len(w)))
    scale.restore(saved)
    assert all(np.array_equal(a, b) for a, b in zip(scale.snapshot(), saved, strict=True))
    assert np.abs(scale(w) - first).max() <= 1e-9 * max(R.max(), 1.0)
