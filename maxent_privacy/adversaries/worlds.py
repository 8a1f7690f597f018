"""Exact posteriors over possible worlds (Wong et al., ICDM 2010, Eq. 1-3).

In an A-group the possible worlds assign the group's multiset of sensitive values to its
tuples, each weighted by the product of the tuples' priors; ``p(t : x)`` sums the worlds
giving t the value x. :func:`permanent` is the normalizer for distinct values (Ryser);
:func:`exact_posterior` computes every ``p(t : x)`` by a forward-backward dynamic program
over lumped classes (:func:`exact_probs`), or by importance sampling (:func:`monte_carlo`)
for groups too large. :func:`compare_posteriors` sets them next to the maximum-entropy
posteriors of the same release with the prior as knowledge.

>>> permanent([[1, 2], [3, 4]])
10
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pandas as pd

from .._validation import ReleaseArgumentError, check_choice
from ..errors import KnowledgeError, ReleaseError
from ..releases.bucketized import Bucketized
from .prior import Prior, check_group, check_int, is_number

__all__ = [
    "MAX_STATES",
    "compare_posteriors",
    "exact_posterior",
    "exact_probs",
    "match_marginals",
    "monte_carlo",
    "permanent",
    "states",
]

MAX_STATES = 1 << 22  # states of the exact dynamic program before Monte Carlo takes over


# ---------------------------------------------------------------------- exact posteriors
def permanent(matrix) -> float | Fraction:
    """The permanent of a square matrix by Ryser's formula, O(2^n n) (Gray-code order).

    With distinct sensitive values the normalizer of Eq. (2) is the permanent of the
    matrix ``p(t_i.s : x_j)``. Entries may be Fractions (exact result).

    >>> permanent([[1, 2], [3, 4]])
    10
    """
    try:
        a = [list(r) for r in matrix]
    except TypeError:
        raise KnowledgeError(
            f"permanent() needs a square matrix of numbers, got {type(matrix).__name__}"
        ) from None
    n = len(a)
    for i, row in enumerate(a):
        if len(row) != n:
            raise KnowledgeError(
                f"permanent() needs a square matrix, got {n} rows and {len(row)} entries in row {i}"
            )
    for i, row in enumerate(a):
        for j, v in enumerate(row):
            if not is_number(v) or not math.isfinite(v):
                raise KnowledgeError(f"permanent(): entry ({i}, {j}) is {v!r}, not a finite number")
    if n == 0:
        return 1
    sums = [0] * n
    total = 0
    gray = 0
    for k in range(1, 1 << n):
        bit = (k & -k).bit_length() - 1  # the column that changes
        gray ^= 1 << bit
        sign = 1 if gray >> bit & 1 else -1
        for i in range(n):
            sums[i] += sign * a[i][bit]
        prod = 1
        for s in sums:
            prod *= s
        total += prod if (n - bin(gray).count("1")) % 2 == 0 else -prod
    return total


def match_marginals(w: np.ndarray, cap: np.ndarray, exact: bool) -> np.ndarray:
    """P(item i is matched into class c) over all bijections items <-> slots.

    ``w`` is items x classes; class c has ``cap[c]`` slots, ``sum(cap) == len(w)``; a
    bijection weighs the product of ``w[i, class of its slot]``. Forward-backward dynamic
    program over the used-slot counts (a mixed-radix state): item k is matched after
    items 0..k-1, so the states of level k are those with k slots used. O(prod(cap + 1)
    * classes) time. Floats are rescaled per level (each item's row is normalized on its
    own, so the scales cancel).
    """
    n, m = w.shape
    cap = np.asarray(cap, dtype=np.int64)
    stride = np.ones(m, dtype=np.int64)
    for c in range(1, m):
        stride[c] = stride[c - 1] * (cap[c - 1] + 1)
    size = int(stride[-1] * (cap[-1] + 1))
    unit = bool((cap == 1).all())  # distinct slots: subsets, multiplicity factors all 1

    def digit(states: np.ndarray, c: int) -> np.ndarray:
        if unit:
            return (states >> c) & 1
        return (states // stride[c]) % (cap[c] + 1)

    itype = np.int32 if size < 2**31 else np.int64  # halves the index traffic
    stride = stride.astype(itype)
    idx = np.arange(size, dtype=itype)
    if unit and hasattr(np, "bitwise_count"):
        level = np.bitwise_count(idx)
    else:
        level = np.zeros(size, dtype=np.int64)
        for c in range(m):
            level += digit(idx, c)
    order = np.argsort(level, kind="stable").astype(itype)
    bounds = np.searchsorted(level[order], np.arange(n + 2))
    levels = [order[bounds[k] : bounds[k + 1]] for k in range(n + 1)]
    del idx, level, order
    dtype = object if exact else float
    w = w.astype(dtype)
    zero = Fraction(0) if exact else 0.0

    forward = np.zeros(size, dtype=dtype)
    forward[0] = Fraction(1) if exact else 1.0
    for k in range(1, n + 1):
        states = levels[k]
        acc = np.zeros(len(states), dtype=dtype)
        for c in range(m):
            if w[k - 1, c] == 0:
                continue
            if unit:  # without bit c, states ^ bit is on level k + 1: still all zero
                acc += forward[states ^ stride[c]] * w[k - 1, c]
                continue
            used = digit(states, c)
            has = used > 0
            prev = forward[np.where(has, states - stride[c], 0)]
            term = np.where(has, prev, zero) * w[k - 1, c]
            acc += term * (cap[c] - used + 1).astype(dtype)
        if not exact and len(acc) and acc.max() > 0:
            acc /= acc.max()
        forward[states] = acc
    backward = np.zeros(size, dtype=dtype)
    backward[size - 1] = Fraction(1) if exact else 1.0
    out = np.zeros((n, m), dtype=dtype)
    for k in range(n - 1, -1, -1):
        states = levels[k]
        here = forward[states]
        acc = np.zeros(len(states), dtype=dtype)
        for c in range(m):
            if w[k, c] == 0:
                continue
            if unit:  # with bit c, states ^ bit is on level k - 1: still all zero
                term = backward[states ^ stride[c]] * w[k, c]
            else:
                used = digit(states, c)
                free = used < cap[c]
                nxt = backward[np.where(free, states + stride[c], 0)]
                term = np.where(free, nxt, zero) * w[k, c] * (cap[c] - used).astype(dtype)
            out[k, c] = (here * term).sum()  # not BLAS dot: threads spin under load
            acc += term
        total = out[k].sum()
        if total == 0:
            raise KnowledgeError(
                "every possible world of the group has prior probability 0 "
                "(no assignment of its values fits the prior)"
            )
        out[k] = out[k] / total
        if not exact and len(acc) and acc.max() > 0:
            acc /= acc.max()
        backward[states] = acc
    return out


def _sinkhorn(w: np.ndarray, cap: np.ndarray, rounds: int = 200) -> np.ndarray:
    """Scale rows to sum 1 and columns to sum ``cap`` (Sinkhorn). Row and column factors
    multiply every world by the same constant, so the posterior is unchanged; the scaled
    matrix is close to the marginals, which makes it a good sampling proposal."""
    a = np.asarray(w, dtype=float).copy()
    for _ in range(rounds):
        rows = a.sum(axis=1, keepdims=True)
        a = np.divide(a, rows, out=np.zeros_like(a), where=rows > 0)
        cols = a.sum(axis=0)
        a = a * np.divide(cap, cols, out=np.zeros_like(cols), where=cols > 0)
        if np.allclose(a.sum(axis=1), 1, atol=1e-9):
            break
    return a


def monte_carlo(w: np.ndarray, cap: np.ndarray, samples: int, seed) -> tuple:
    """Sequential importance sampling of the matching; estimate, standard error, ESS.

    Tuple i takes one of the remaining slots with probability proportional to its
    (Sinkhorn-scaled) weight; the importance weight is the product of the normalizers.
    """
    n, m = w.shape
    w = _sinkhorn(w, cap.astype(float))
    rng = np.random.default_rng(seed)
    rem = np.tile(cap.astype(float), (samples, 1))
    logw = np.zeros(samples)
    picks = np.empty((samples, n), dtype=np.int64)
    rows = np.arange(samples)
    order = rng.permuted(np.tile(np.arange(n), (samples, 1)), axis=1)  # per-sample order
    for i in range(n):
        who = order[:, i]
        a = rem * w[who]
        tot = a.sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            logw += np.log(tot)
            cum = np.cumsum(a / tot[:, None], axis=1)
        u = rng.random(samples)[:, None]
        pick = np.minimum((cum < u).sum(axis=1), m - 1)
        pick = np.where(tot > 0, pick, 0)
        picks[rows, who] = pick
        rem[rows, pick] = np.maximum(rem[rows, pick] - 1, 0)
    if not np.isfinite(logw).any():
        raise KnowledgeError(
            "every sampled world of the group has prior probability 0 "
            "(no assignment of its values fits the prior)"
        )
    weight = np.exp(logw - logw[np.isfinite(logw)].max())
    weight[~np.isfinite(logw)] = 0.0
    total = weight.sum()
    est = np.zeros((n, m))
    err = np.zeros((n, m))
    for c in range(m):
        hit = (picks == c).astype(float)  # samples x n
        p = (weight[:, None] * hit).sum(axis=0) / total
        est[:, c] = p
        err[:, c] = np.sqrt((weight[:, None] ** 2 * (hit - p) ** 2).sum(axis=0)) / total
    ess = float(total**2 / (weight**2).sum())
    return est, err, ess


def _lump(w: np.ndarray, f: np.ndarray):
    """Tuple classes (equal prior rows) and value classes (equal prior columns)."""
    tuple_class, row_of = _classes(w)
    value_class, col_of = _classes(w.T)
    g = np.bincount(tuple_class, minlength=len(row_of))
    cap = np.bincount(value_class, weights=f, minlength=len(col_of)).astype(np.int64)
    return tuple_class, row_of, value_class, col_of, g, cap


def states(w: np.ndarray, f: np.ndarray) -> int:
    """States of the cheaper direction of the exact program."""
    *_, g, cap = _lump(w, f)
    return int(min(np.prod((cap + 1).astype(float)), np.prod((g + 1).astype(float))))


def exact_probs(
    w: np.ndarray, f: np.ndarray, exact: bool, max_states: int = MAX_STATES, direction=None
) -> np.ndarray:
    """p(t : x) for tuples (rows of w) and distinct values (columns, counts f), exactly.

    ``direction``: ``"tuples"`` (tuples are the items, value classes the slots) or
    ``"values"`` (value occurrences are the items, tuple classes the slots); default the
    one with fewer states.
    """
    tuple_class, row_of, value_class, col_of, g, cap = _lump(w, f)
    reduced = w[np.ix_(row_of, col_of)]
    by_value = int(np.prod((cap + 1).astype(float)))
    by_tuple = int(np.prod((g + 1).astype(float)))
    if min(by_value, by_tuple) > max_states:
        raise ReleaseError(
            f"the group of {len(w)} tuples needs {min(by_value, by_tuple):,} states, more than "
            f"max_states={max_states:,}; use method='monte carlo'"
        )
    if direction is None:
        direction = "tuples" if by_value <= by_tuple else "values"
    if direction == "tuples":
        marg = match_marginals(reduced[tuple_class], cap, exact)  # tuples x value classes
        share = np.zeros((len(row_of), len(col_of)), dtype=marg.dtype)
        np.add.at(share, tuple_class, marg)
        share = share / g[:, None].astype(marg.dtype)
    else:
        occ = np.repeat(value_class, f)
        marg = match_marginals(reduced.T[occ], g, exact)  # occurrences x tuple classes
        share = np.zeros((len(col_of), len(row_of)), dtype=marg.dtype)
        np.add.at(share, occ, marg)
        share = (share / g[None, :].astype(marg.dtype)).T
    # share[R, C]: P(a tuple of class R gets a value of class C); split C by the counts
    if exact:
        ratio = np.array(
            [Fraction(int(a), int(b)) for a, b in zip(f, cap[value_class], strict=True)],
            dtype=object,
        )
    else:
        ratio = f / cap[value_class]
    return share[np.ix_(tuple_class, value_class)] * ratio


def exact_posterior(
    group: pd.DataFrame,
    prior: Prior,
    *,
    method: str = "auto",
    fractions: bool | None = None,
    max_states: int = MAX_STATES,
    samples: int = 20_000,
    seed=0,
    counterfeits=(),
) -> pd.DataFrame:
    """``p(t : x)`` for every tuple t and value x of an A-group (Eq. 1-3).

    ``group`` holds the group's rows: the prior's attributes and its sensitive column.
    Returns a DataFrame indexed like ``group`` with one column per distinct value (sorted);
    rows sum to 1. ``.attrs["method"]`` says how it was computed.

    The normalizer of Eq. (2) sums N!/prod(f_x!) worlds; instead, tuples with the same
    prior row and values with the same prior column are lumped into classes and a
    forward-backward dynamic program runs over how many slots of each class are used,
    processing either the tuples (states ``prod(f + 1)`` over the value classes) or the
    value occurrences (states ``prod(g + 1)`` over the tuple classes), whichever is
    smaller. With N distinct signatures and values this is the subset form of Ryser's
    O(2^N N) permanent, and one pass gives every ``p(t : x)``, not only the normalizer.

    ``method``: ``"auto"`` (exact up to ``max_states`` states, else Monte Carlo),
    ``"exact"`` or ``"monte carlo"``. Monte Carlo draws ``samples`` worlds by sequential
    importance sampling (seeded); ``.attrs["standard_error"]`` then holds the standard
    error of each entry and ``.attrs["effective_samples"]`` the effective sample size.
    ``fractions=True`` computes in exact rational arithmetic (floats in the prior are read
    as the decimals they print as); the default does so when the prior holds Fractions,
    ``False`` forces floats.

    ``counterfeits``: the sensitive values of the group's counterfeit records
    (m-invariance; :class:`~maxent_privacy.Bucketized` with ``counterfeits=``). They are
    in the group's multiset but belong to no one: a world also assigns values to them,
    and as no one's likelihood speaks of them their prior rows are 1 for every value.
    The rows returned are ``group``'s (the real tuples') only.

    >>> from maxent_privacy.robustness import wong2010_example
    >>> frame, prior = wong2010_example()
    >>> l1 = frame[frame["GID"] == "L1"].set_index("Name")
    >>> exact_posterior(l1, prior, fractions=True).loc["Alan", "Lung Cancer"]
    Fraction(997, 1024)
    """
    if not isinstance(group, pd.DataFrame):
        raise ReleaseError(f"a group must be a pandas DataFrame, got {type(group).__name__}")
    if not isinstance(prior, Prior):
        raise KnowledgeError(f"exact_posterior needs a Prior, got {type(prior).__name__}")
    check_choice(method, "method", ("auto", "exact", "monte carlo"), error=ReleaseArgumentError)
    samples = check_int(samples, "samples", 1)
    max_states = check_int(max_states, "max_states", 0)
    check_group(group, [prior], "exact_posterior")
    if isinstance(counterfeits, (str, bytes, dict)) or not hasattr(counterfeits, "__iter__"):
        raise ReleaseError(
            "counterfeits must be a list of the counterfeit records' sensitive values, got "
            f"{type(counterfeits).__name__}"
        )
    fake = list(counterfeits)
    counts = pd.Series(group[prior.sa].tolist() + fake, dtype=object).value_counts(sort=False)
    values = sorted(counts.index.tolist(), key=str)
    f = counts.reindex(values).to_numpy(dtype=np.int64)
    exact = bool(fractions or (fractions is None and prior.exact))
    if exact and method == "monte carlo":
        raise ReleaseError("fractions=True needs an exact method")
    w = prior.weights(group, values, fractions=exact)
    if fake:  # no one's likelihood: every value alike
        one = np.full((len(fake), len(values)), Fraction(1) if exact else 1.0, dtype=w.dtype)
        w = np.vstack([w, one])
    n = len(group)
    if method == "exact" or (method == "auto" and states(w, f) <= max_states):
        probs = exact_probs(w, f, exact, max_states)
        out = pd.DataFrame(probs[:n], index=group.index, columns=values)
        attrs = {"method": "exact"}
    else:
        est, err, ess = monte_carlo(w.astype(float), f, int(samples), seed)
        out = pd.DataFrame(est[:n], index=group.index, columns=values)
        attrs = {
            "method": "monte carlo",
            "standard_error": pd.DataFrame(err[:n], index=group.index, columns=values),
            "samples": int(samples),
            "effective_samples": ess,
        }
    out.columns.name = prior.sa
    out.attrs.update(attrs)
    return out


def _classes(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Class of each row (equal rows, numbered by first occurrence) and each class's first row."""
    seen: dict[tuple, int] = {}
    label = np.empty(len(matrix), dtype=np.int64)
    first = []
    for i, row in enumerate(matrix):
        key = tuple(row.tolist())
        if key not in seen:
            seen[key] = len(first)
            first.append(i)
        label[i] = seen[key]
    return label, np.asarray(first, dtype=np.int64)


# ---------------------------------------------------- possible worlds vs maximum entropy
def compare_posteriors(
    release: Bucketized,
    prior: Prior,
    *,
    weight: float | None = 1.0,
    solver: str | None = None,
    max_states: int = MAX_STATES,
) -> pd.DataFrame:
    """Per record and value of its group: the possible-world posterior next to the
    maximum-entropy one, so one sees where the two models of the adversary part.

    The two read the prior differently. The possible-world model (Eq. 1-3) takes
    ``p(s : x)`` as each tuple's own likelihood and only its ratios within a group
    matter. The maximum-entropy model (Du et al.) takes it as a population statistic,
    ``P(x | s) == p`` over all the release's records with signature s, which the release
    usually cannot meet exactly (Table IV says 10% of men have lung cancer; the one man
    of Table III either has it or not). So the prior enters as *soft* facts
    (:func:`maxent_privacy.soft`) with penalty ``weight`` nats per record per unit of
    probability violated; ``weight=None`` makes them hard (then InfeasibleKnowledge when
    the release contradicts them). A value without a column of its own enters through
    ``P(any lumped value | s) == p(s : other)``.

    Returns columns: the QI, the group, ``value``, ``possible_worlds``, ``maxent`` and
    ``difference`` (possible_worlds - maxent), one row per (record, value of its group),
    indexed by the record's label. Counterfeit records have no row: they are in their
    group's worlds (see :func:`exact_posterior`) but are no one.

    >>> from maxent_privacy import Bucketized
    >>> from maxent_privacy.robustness import wong2010_example
    >>> frame, prior = wong2010_example()
    >>> release = Bucketized(frame.set_index("Name"), qi=["Gender", "Age"], sa="Disease",
    ...                      group="GID")
    >>> table = compare_posteriors(release, prior, weight=1.0)
    >>> alan = table.loc["Alan"].set_index("value")
    >>> alan[["possible_worlds", "maxent"]].round(3).to_dict("index")["Lung Cancer"]
    {'possible_worlds': 0.974, 'maxent': 0.1}
    """
    from ..model import MaxEntModel

    if not isinstance(release, Bucketized):
        raise ReleaseError(
            f"compare_posteriors needs a Bucketized release, got {type(release).__name__}"
        )
    if not isinstance(prior, Prior):
        raise KnowledgeError(f"compare_posteriors needs a Prior, got {type(prior).__name__}")
    max_states = check_int(max_states, "max_states", 0)
    model = MaxEntModel(release)
    model.add(prior.knowledge(weight))
    post = model.solve(solver=solver).posterior(by="group")
    frame = release.people  # counterfeit records (no one's) enter as their group's values
    fake = release.frame.loc[release.is_counterfeit]
    fake = fake.groupby(release.group)[release.sa].agg(list).to_dict() if len(fake) else {}
    parts = []
    for g, pos in frame.groupby(release.group, sort=True).indices.items():
        rows_g = frame.iloc[pos]
        worlds = exact_posterior(rows_g, prior, max_states=max_states, counterfeits=fake.get(g, ()))
        n, m = worlds.shape
        part = rows_g.iloc[np.repeat(np.arange(n), m)][release.qi + [release.group]].copy()
        part["value"] = np.tile(np.asarray(worlds.columns, dtype=object), n)
        part["possible_worlds"] = worlds.to_numpy(dtype=float).ravel()
        parts.append(part)
    out = pd.concat(parts)
    keys = pd.MultiIndex.from_frame(out[release.qi + [release.group]])
    table = post.reindex(keys)
    cols = table.columns.get_indexer(out["value"])
    out["maxent"] = table.to_numpy()[np.arange(len(out)), cols]
    out["difference"] = out["possible_worlds"] - out["maxent"]
    return out
