"""Classifiers the learning adversary (:mod:`.definetti`) trains on an expected table.

A learner maps the record classes' quasi-identifiers and an expected table (``counts[c,
s]``: how many records of class c hold value s, fractional) to P(s | QI) for every class.
The counts are sample weights: the adversary does not know who holds what, only the
table the release allows that it currently believes.

* :func:`naive_bayes`: categorical naive Bayes with Laplace smoothing (Kifer's choice),
  every QI column a category (ranges and sets of a generalized release are labels too);
  it is :func:`naive_bayes_params` (its log-parameters, from a dense table or from
  :class:`Entries`) then :func:`naive_bayes_predict`, which the attack uses apart;
* :func:`logistic_regression`: multinomial logistic regression on one-hot QI (needs
  scikit-learn: ``pip install "maxent-privacy[learn]"``).

>>> import numpy as np, pandas as pd
>>> qi = pd.DataFrame({"sex": ["F", "M"]})
>>> p = naive_bayes(qi, np.array([[3.0, 1.0], [1.0, 3.0]]))
>>> np.round(p, 3).tolist()
[[0.667, 0.333], [0.333, 0.667]]
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import scipy.sparse as sp

from .._validation import ArgumentError, listed, shown
from ..errors import KnowledgeError

__all__ = [
    "LEARNERS",
    "Encoded",
    "encode",
    "learner",
    "logistic_regression",
    "naive_bayes",
    "naive_bayes_objective",
    "naive_bayes_params",
    "naive_bayes_predict",
    "Entries",
]


class Encoded:
    """The record classes' QI as one sparse indicator matrix ``H`` (classes x levels of
    every column side by side; ``HT`` its transpose, ``sizes`` the levels per column):
    what a learner reads, computed once per attack and passed as ``encoded``.

    Classes often share their QI (other buckets, other releases; see ``python -m
    benchmarks adversaries``): ``distinct`` holds the rows of ``H`` for each
    distinct QI once and ``inverse`` each class's row of it (None when every class's QI
    is distinct), so that a prediction is computed once per distinct QI.

    >>> enc = encode(pd.DataFrame({"sex": ["F", "M", "F"], "race": ["a", "a", "a"]}))
    >>> enc.distinct.shape, enc.inverse.tolist()
    ((2, 3), [0, 1, 0])
    """

    def __init__(self, qi: pd.DataFrame):
        blocks, sizes = [], []
        for col in qi.columns:
            column = qi[col]
            if isinstance(column.dtype, pd.CategoricalDtype):  # its observed levels only
                column = column.astype(object)
            codes, levels = pd.factorize(column, use_na_sentinel=False)
            blocks.append(codes + sum(sizes))
            sizes.append(len(levels))
        n, k = len(qi), len(blocks)
        rows = np.repeat(np.arange(n), k)
        cols = np.column_stack(blocks).ravel() if k else np.zeros(0, dtype=int)
        self.H = sp.csr_array((np.ones(n * k), (rows, cols)), shape=(n, sum(sizes)))
        self.HT = self.H.T.tocsr()
        self.sizes = np.repeat(np.asarray(sizes, dtype=float), sizes)
        self.k = k  # levels per class (one per column)
        self.distinct, self.inverse = self.H, None
        if n and k:
            first, inverse = _distinct_rows(np.column_stack(blocks))
            if len(first) < n:
                self.distinct, self.inverse = self.H[first], inverse


def _distinct_rows(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The first row of each distinct row of the integer matrix ``codes`` and each row's
    distinct row (one int64 key per row when the codes fit in one, else numpy's rows)."""
    codes = codes - codes.min(axis=0)
    top = codes.max(axis=0).astype(float) + 1
    if np.prod(top) < 2.0**62:
        keys = np.ravel_multi_index(codes.T, top.astype(np.int64))
        _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    else:
        _, first, inverse = np.unique(codes, axis=0, return_index=True, return_inverse=True)
    return first, inverse.ravel()


def encode(qi: pd.DataFrame) -> Encoded:
    """The :class:`Encoded` QI of the record classes."""
    return Encoded(qi)


def naive_bayes_params(counts, encoded: Encoded, alpha: float = 1.0) -> np.ndarray:
    """Naive Bayes fitted to ``counts`` as one matrix of log-parameters (levels + 1) x
    values: log P(v | s) per QI level, and log P(s) in the last row, Laplace smoothing
    ``alpha``: P(v | s) = (N[v, s] + alpha) / (N[s] + alpha |V|), P(s) = (N[s] + alpha)
    / (N + alpha |S|). ``counts``: the dense table, or an :class:`Entries` table."""
    if isinstance(counts, Entries):
        N, n_s = counts.level_counts()
    else:
        counts = np.asarray(counts, dtype=float)
        n_s = np.ones(len(counts)) @ counts  # (a product: numpy's axis sums are slower)
        N = encoded.HT @ counts  # levels x values
    out = np.empty((N.shape[0] + 1, N.shape[1]))
    out[:-1] = np.log(N + alpha) - np.log(n_s + alpha * encoded.sizes[:, None])
    out[-1] = np.log(n_s + alpha) - np.log(n_s.sum() + alpha * N.shape[1])
    return out


class Entries:
    """A table given by some of its entries (``cls``, ``col``: class and value of each,
    the rest 0), whose weights change: naive Bayes' counts per QI level read off them by
    one sparse product (no dense classes x values table).

    >>> enc = encode(pd.DataFrame({"sex": ["F", "M"]}))
    >>> table = Entries(enc, cls=np.array([0, 1, 1]), col=np.array([0, 0, 1]), n_values=2)
    >>> N, n_s = table.at(np.array([3.0, 1.0, 2.0])).level_counts()
    >>> N.tolist(), n_s.tolist()
    ([[3.0, 0.0], [1.0, 2.0]], [4.0, 2.0])
    """

    def __init__(self, encoded: Encoded, cls: np.ndarray, col: np.ndarray, n_values: int):
        levels = encoded.H[cls]  # each entry's levels, one per QI column
        rows = levels.indices * n_values + np.repeat(col, np.diff(levels.indptr))
        L = encoded.H.shape[1]
        # by columns (one per entry): built as it is stored, no conversion
        self.G = sp.csc_array(
            (np.ones(len(rows)), rows, levels.indptr), shape=(L * n_values, len(cls))
        )
        self.col, self.shape = col, (L, n_values)
        self.v = self._counts = None  # the weights (:meth:`at`) and their counts

    def at(self, v: np.ndarray) -> Entries:
        """This table with the weights ``v`` (one per entry). The same array again keeps
        the counts already read off it (the weights are not changed in place)."""
        if v is not self.v:
            self.v, self._counts = v, None
        return self

    def level_counts(self):
        """N[level, s] and N[s] (computed once per :meth:`at`)."""
        if self._counts is None:
            N = (self.G @ self.v).reshape(self.shape)
            self._counts = N, np.bincount(self.col, weights=self.v, minlength=self.shape[1])
        return self._counts


def naive_bayes_objective(counts, theta: np.ndarray, alpha: float = 1.0) -> float:
    """``-sum_{c,s} counts log P_theta(QI_c, s) - alpha sum(theta)``: naive Bayes' joint
    negative log-likelihood of ``counts`` (an :class:`Entries` table) with the Laplace
    smoothing as a Dirichlet prior, which :func:`naive_bayes_params` minimises."""
    N, n_s = counts.level_counts()
    return float(-np.vdot(N, theta[:-1]) - np.vdot(n_s, theta[-1]) - alpha * theta.sum())


def naive_bayes_predict(theta: np.ndarray, encoded: Encoded) -> np.ndarray:
    """P(s | QI) per class from the log-parameters of :func:`naive_bayes_params` (any
    matrix of that shape: the learning adversary extrapolates them), computed once per
    distinct QI (:class:`Encoded`)."""
    score = encoded.distinct @ theta[:-1]
    score += theta[-1]
    # no shift by each class's largest score where no score can underflow or overflow
    # (fitted, smoothing keeps every factor >= alpha / (N[s] + alpha |V|), and <= 1):
    # one exp instead of a max too
    lowest = encoded.k * theta[:-1].min(initial=0.0) + theta[-1].min(initial=0.0)
    highest = encoded.k * theta[:-1].max(initial=0.0) + theta[-1].max(initial=0.0)
    if lowest < -700 or highest > 700:
        score -= score.max(axis=1, keepdims=True)
    p = np.exp(score, out=score)
    p *= (1.0 / (p @ np.ones(p.shape[1])))[:, None]
    return p if encoded.inverse is None else p.take(encoded.inverse, axis=0)


def naive_bayes(
    qi: pd.DataFrame, counts: np.ndarray, alpha: float = 1.0, encoded=None
) -> np.ndarray:
    """P(s | QI) per class by categorical naive Bayes fitted to ``counts`` (weights),
    Laplace smoothing ``alpha``: P(v | s) = (N[v, s] + alpha) / (N[s] + alpha |V|)."""
    enc = encode(qi) if encoded is None else encoded
    return naive_bayes_predict(naive_bayes_params(counts, enc, alpha), enc)


def logistic_regression(
    qi: pd.DataFrame, counts: np.ndarray, seed: int = 0, encoded=None
) -> np.ndarray:
    """P(s | QI) per class by multinomial logistic regression (scikit-learn, L2, C = 1) on
    one-hot QI, the counts as sample weights; values no record holds get a floor of
    1e-9 so that the prior rules nothing out."""
    try:
        from sklearn.linear_model import LogisticRegression
    except ImportError:
        raise KnowledgeError(
            "learner 'logistic_regression' needs scikit-learn: pip install "
            '"maxent-privacy[learn]" (or use learner="naive_bayes")'
        ) from None
    counts = np.asarray(counts, dtype=float)
    X = (encode(qi) if encoded is None else encoded).H
    c, s = np.nonzero(counts > 0)
    out = np.full(counts.shape, 1e-9)
    if len(np.unique(s)) == 1:
        out[:, s[0]] = 1.0
    else:
        model = LogisticRegression(C=1.0, max_iter=1000, random_state=seed)
        model.fit(X[c], s, sample_weight=counts[c, s])
        out[:, model.classes_] = np.maximum(model.predict_proba(X), 1e-9)
    return out / out.sum(axis=1, keepdims=True)


LEARNERS = {"naive_bayes": naive_bayes, "logistic_regression": logistic_regression}


def learner(name):
    """The learner called ``name`` (or a callable ``f(qi, counts) -> probabilities``)."""
    if callable(name):
        return name
    if not isinstance(name, str) or name not in LEARNERS:
        raise ArgumentError(
            f"learner must be {listed(sorted(LEARNERS))} or a function f(qi_frame, counts) "
            f"returning P(s | QI) per class, got {shown(name)}"
        )
    return LEARNERS[name]
