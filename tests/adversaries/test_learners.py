"""Naive Bayes of :mod:`maxent_privacy.adversaries.learners` against the formula written
out here, class by class, including weights so uneven that a score would underflow
without the shift by each class's largest."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from maxent_privacy.adversaries.learners import encode, naive_bayes


def by_hand(qi: pd.DataFrame, counts: np.ndarray, alpha: float) -> np.ndarray:
    """P(s | QI) = P(s) prod_k P(v_k | s) / normaliser, every count a weight."""
    n_s = counts.sum(axis=0)
    S = counts.shape[1]
    out = np.zeros_like(counts)
    for c in range(len(qi)):
        logs = np.log(n_s + alpha) - np.log(n_s.sum() + alpha * S)
        for col in qi.columns:
            same = (qi[col] == qi[col].iloc[c]).to_numpy()
            levels = qi[col].nunique(dropna=False)
            logs = logs + np.log(counts[same].sum(axis=0) + alpha) - np.log(n_s + alpha * levels)
        logs -= logs.max()
        out[c] = np.exp(logs) / np.exp(logs).sum()
    return out


@pytest.mark.parametrize("alpha", [1.0, 0.01, 1e-250])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_naive_bayes_is_the_formula(alpha, seed):
    rng = np.random.default_rng(seed)
    qi = pd.DataFrame(
        {
            "age": rng.integers(20, 25, 30),
            "sex": rng.choice(["F", "M"], 30),
            "zip": pd.Categorical(rng.choice(["a", "b", "c"], 30), categories=list("abcd")),
        }
    )
    counts = rng.random((30, 4)) * (rng.random((30, 4)) < 0.6)
    counts[0, 0] = 1.0  # a value someone holds
    got = naive_bayes(qi, counts, alpha=alpha, encoded=encode(qi))
    expect = by_hand(qi, counts, alpha)
    assert np.all(np.isfinite(got))
    assert np.abs(got - expect).max() <= 1e-9
    assert np.allclose(got.sum(axis=1), 1.0)


def test_naive_bayes_without_quasi_identifiers_is_the_value_shares():
    counts = np.array([[3.0, 1.0], [1.0, 3.0]])
    got = naive_bayes(pd.DataFrame(index=range(2)), counts)
    assert np.allclose(got, [[0.5, 0.5], [0.5, 0.5]])


def test_naive_bayes_reads_the_same_counts_off_entries():
    from maxent_privacy.adversaries.learners import Entries, naive_bayes_params

    rng = np.random.default_rng(5)
    qi = pd.DataFrame({"a": rng.integers(0, 4, 40), "b": rng.choice(list("xyz"), 40)})
    enc = encode(qi)
    cls, col = np.nonzero(rng.random((40, 6)) < 0.4)
    v = rng.random(len(cls))
    dense = np.zeros((40, 6))
    dense[cls, col] = v
    by_entries = naive_bayes_params(Entries(enc, cls, col, 6).at(v), enc)
    assert np.abs(by_entries - naive_bayes_params(dense, enc)).max() <= 1e-12


def test_distinct_rows_by_key_and_by_rows_agree():
    """Codes too wide for one int64 key take numpy's rows; both give each row's first
    equal row."""
    from maxent_privacy.adversaries.learners import _distinct_rows

    rng = np.random.default_rng(3)
    narrow = rng.integers(0, 3, (60, 4))
    wide = narrow * 10**6  # the product of the widths passes 2^62
    for codes in (narrow, wide):
        first, inverse = _distinct_rows(codes)
        assert np.array_equal(codes[first][inverse], codes)
        assert len(np.unique(first)) == len(first) == len({tuple(r) for r in codes})
        assert all((codes[:f] != codes[f]).any(axis=1).all() for f in first)
