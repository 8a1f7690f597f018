"""r-robustness under QI-based prior knowledge (Wong et al., ICDM 2010).

An adversary knows a QI-based prior ``p(s : x)``: for every *signature* s (values of an
attribute set such as ``{Gender}``) the probability that a person with it has sensitive
value x (Table IV). In an A-group of N tuples the possible worlds are the assignments of
the group's multiset of values to its tuples, each weighted by the product of the tuples'
priors (Eq. 1-2); ``p(t : x)`` sums the worlds giving t the value x (Eq. 3). A release is
*r-robust* when no ``p(t : x)`` exceeds ``1/r``.

* :class:`Prior` holds one attribute set's distribution (a table, or estimated from data).
* :func:`exact_posterior` computes every ``p(t : x)`` of a group exactly.
* :func:`delta_ceil`, :func:`delta_max`, :func:`satisfies_delta_bound` are the Delta bounding
  condition (Definitions 7-8, Theorem 1, Corollary 1) with m-uniqueness checked.
* :func:`robust_anonymize` makes a release whose groups all meet it (Section IV, bottom-up)
  and :func:`query_error` measures its information loss as count-query error.
* :func:`compare_posteriors` puts the possible-world posterior next to the maximum-entropy
  one of the same release with the prior as (soft) knowledge.

What Theorem 1 guarantees (checked, see ``tests/test_robustness.py``): for an adversary who
knows, for the value x, only ``p(s : x)`` and ``1 - p(s : x)`` (Table IV's form,
:meth:`Prior.binary`), an m-unique group with ``Delta_max <= Delta_ceil`` has
``p(t : x) <= 1/r``, and the bound is tight. For a prior that names several values at once
it can fail: a 3-tuple group meeting the bound for all its values at r = 2 has a posterior of
0.604 (``test_theorem1_fails_for_a_joint_prior``), and on Adult a few groups of three do
(0.517). :func:`robust_anonymize` therefore also checks every group's exact posteriors by
default (``verify=True``); ``verify=False`` is the paper's Delta-only method.

>>> from maxent_privacy.robustness import exact_posterior, wong2010_example
>>> frame, prior = wong2010_example()
>>> l1 = frame[frame["GID"] == "L1"].set_index("Name")
>>> round(float(exact_posterior(l1, prior).loc["Alan", "Lung Cancer"]), 4)   # Example 1
0.9736
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction

import numpy as np
import pandas as pd

from .checks import check_cells, check_frame, check_label, check_missing, check_unique
from .data import Bucketized, check_input_table
from .errors import KnowledgeError, ReleaseError

__all__ = [
    "Prior",
    "compare_posteriors",
    "delta_ceil",
    "delta_max",
    "delta_report",
    "exact_posterior",
    "permanent",
    "query_error",
    "robust_anonymize",
    "robustness_table",
    "satisfies_delta_bound",
    "wong2010_example",
]

MAX_STATES = 1 << 22  # states of the exact dynamic program before Monte Carlo takes over


def _fraction(value) -> Fraction:
    """A probability as a Fraction; a float is read as the decimal it prints as (0.1 = 1/10)."""
    if isinstance(value, Fraction):
        return value
    if isinstance(value, (int, np.integer)):
        return Fraction(int(value))
    return Fraction(repr(float(value)))


def _scalar(value):
    """A numpy scalar as the Python number it holds (Fractions pass through)."""
    return value.item() if isinstance(value, np.generic) else value


def _check_int(value, name: str, least: int) -> int:
    """An integer argument of at least ``least`` (not a bool, not a float)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < least:
        raise ReleaseError(f"{name} must be an integer of at least {least}, got {value!r}")
    return int(value)


def _is_number(value) -> bool:
    """A real number (numpy scalars and Fractions too), not a bool."""
    return not isinstance(value, (bool, np.bool_)) and isinstance(
        value, (int, float, Fraction, np.integer, np.floating)
    )


def _check_group(group, priors, who: str) -> None:
    """A group of tuples for the possible-world model: a DataFrame with rows, and its
    sensitive and (present) prior attribute columns named once, single-valued, filled."""
    if not isinstance(group, pd.DataFrame):
        raise ReleaseError(f"{who}: a group must be a pandas DataFrame, got {type(group).__name__}")
    check_frame(group, f"{who}: a group")
    if len(group) == 0:
        raise ReleaseError(f"{who}: the group has no rows (an A-group holds at least one tuple)")
    columns: list = []
    for pr in priors:
        if pr.sa not in group.columns:
            raise ReleaseError(f"sensitive column {pr.sa!r} of the prior is not in the group")
        for col in [pr.sa, *pr.attributes]:
            if col in group.columns and col not in columns:
                columns.append(col)
    check_unique(group, columns)
    roles = [
        "sensitive" if col in {pr.sa for pr in priors} else "prior attribute" for col in columns
    ]
    check_cells(group, columns, roles)
    check_missing(group, columns, [f"{r} " for r in roles])


def _check_r(r) -> None:
    if isinstance(r, bool) or not isinstance(r, (int, float, Fraction, np.integer, np.floating)):
        raise ReleaseError(f"r must be a number above 1, got {r!r}")
    if not r > 1 or not math.isfinite(float(r)):
        raise ReleaseError(f"r must be a number above 1, got {r!r}")


def _not_whole(sig, total, other) -> None:
    raise KnowledgeError(
        f"the prior of signature {sig!r} sums to {float(total):.6g}, not 1: with "
        f"other={other!r} standing for every value not listed, each row is a whole distribution"
    )


# --------------------------------------------------------------------------- the prior
class Prior:
    """A QI-based prior G on one attribute set (Definition 2): signature -> P(S).

    Parameters
    ----------
    table : DataFrame whose index holds the signatures (named by the attributes; a
        MultiIndex for several; no missing values) and whose columns are sensitive values;
        each entry is ``p(s : x)``, a float or a Fraction in [0, 1], each row summing to
        at most 1 (to 1 when ``other`` is given: the row is then the whole distribution).
    sa : name of the sensitive column the prior speaks of.
    other : optional column standing for every value that has no column of its own, as
        Table IV's "Not Lung Cancer". Such a value gets that column's probability. In the
        possible-world model this is exact when the lumped values share the column's mass
        in the same proportions for every signature: each world assigns the group's values
        once, so the shares cancel in Eq. (2).

    >>> import pandas as pd
    >>> table = pd.DataFrame({"Lung Cancer": [0.1, 0.003], "Not Lung Cancer": [0.9, 0.997]},
    ...                      index=pd.Index(["Male", "Female"], name="Gender"))
    >>> prior = Prior(table, sa="Disease", other="Not Lung Cancer")
    >>> prior.p({"Gender": "Female"}, "Hypertension")
    0.997
    """

    def __init__(self, table: pd.DataFrame, sa: str, other=None):
        if not isinstance(table, pd.DataFrame):
            raise KnowledgeError(f"a prior needs a pandas DataFrame, got {type(table).__name__}")
        try:
            check_label(sa, "the prior's sa")
        except ReleaseError as e:
            raise KnowledgeError(str(e)) from None
        names = list(table.index.names)
        if any(n is None for n in names) or len(set(names)) != len(names):
            raise KnowledgeError(
                f"the prior's index must name its attributes, one name each (got {names})"
            )
        if sa in names:
            raise KnowledgeError(f"the sensitive column {sa!r} cannot be a prior attribute")
        if table.shape[0] == 0 or table.shape[1] == 0:
            raise KnowledgeError("the prior table is empty")
        if table.index.has_duplicates:
            dup = table.index[table.index.duplicated()][0]
            raise KnowledgeError(f"signature {dup!r} occurs twice in the prior")
        gaps = pd.isna(table.index.to_frame(index=False)).to_numpy().any(axis=1)
        if gaps.any():
            sig = table.index[int(np.argmax(gaps))]
            raise KnowledgeError(f"signature {sig!r} of the prior has a missing value")
        if table.columns.has_duplicates:
            raise KnowledgeError("the prior has a sensitive value in two columns")
        if other is not None and other not in table.columns:
            raise KnowledgeError(f"other={other!r} is not a column of the prior")
        exact = any(isinstance(v, Fraction) for v in table.to_numpy().ravel())
        numeric = all(
            pd.api.types.is_numeric_dtype(d) and not pd.api.types.is_bool_dtype(d)
            for d in table.dtypes
        )
        if numeric and not exact:  # the common case, vectorized
            arr = table.to_numpy(dtype=float)
            bad = np.argwhere(~((arr >= 0) & (arr <= 1)))
            if len(bad):
                i, j = bad[0]
                raise KnowledgeError(
                    f"p({table.index[i]} : {table.columns[j]}) = {float(arr[i, j])!r} is not a "
                    "probability in [0, 1]"
                )
            over = np.flatnonzero(arr.sum(axis=1) > 1 + 1e-9)
            if len(over):
                raise KnowledgeError(
                    f"the prior of signature {table.index[over[0]]!r} sums to "
                    f"{arr[over[0]].sum():.6g}, above 1"
                )
            under = np.flatnonzero(arr.sum(axis=1) < 1 - 1e-9)
            if other is not None and len(under):
                _not_whole(table.index[under[0]], arr[under[0]].sum(), other)
        underfull = None  # checked once every entry is known to be a probability
        for sig, row in [] if numeric and not exact else table.iterrows():
            total = 0
            for x, v in row.items():
                ok = isinstance(v, (int, float, Fraction, np.integer, np.floating))
                if not ok or isinstance(v, bool) or not 0 <= v <= 1:
                    raise KnowledgeError(f"p({sig} : {x}) = {v!r} is not a probability in [0, 1]")
                total += v
            if total > 1 + (0 if exact else 1e-9):
                raise KnowledgeError(
                    f"the prior of signature {sig!r} sums to {float(total):.6g}, above 1"
                )
            if other is not None and total < 1 - (0 if exact else 1e-9) and underfull is None:
                underfull = (sig, total)
        if underfull is not None:
            _not_whole(*underfull, other)
        self.table = table.copy() if exact else table.astype(float)
        self.attributes: list = list(names)
        self.sa = sa
        self.other = other
        self.exact = exact
        index = table.index
        if not isinstance(index, pd.MultiIndex):
            index = pd.MultiIndex.from_arrays([index], names=names)
        self._index = index

    @classmethod
    def estimate(
        cls, frame: pd.DataFrame, attributes: Sequence[str], sa: str, alpha: float = 0.0
    ) -> Prior:
        """The empirical P(S | signature) of ``frame``, with add-``alpha`` smoothing.

        >>> import pandas as pd
        >>> frame = pd.DataFrame({"sex": ["M", "M", "F", "F"],
        ...                       "disease": ["Flu", "HIV", "Flu", "Flu"]})
        >>> Prior.estimate(frame, ["sex"], "disease").table.to_dict("index")
        {'F': {'Flu': 1.0, 'HIV': 0.0}, 'M': {'Flu': 0.5, 'HIV': 0.5}}
        """
        check_frame(frame, "Prior.estimate")
        if isinstance(attributes, str):
            attributes = [attributes]
        if attributes is None or not hasattr(attributes, "__iter__"):
            raise KnowledgeError(f"attributes must be a list of column names, got {attributes!r}")
        attributes = list(attributes)
        if not attributes:
            raise KnowledgeError("Prior.estimate needs at least one attribute")
        for col in attributes + [sa]:
            check_label(col, "a prior attribute" if col is not sa else "sa")
            if col not in frame.columns:
                raise KnowledgeError(f"column {col!r} is not in the table")
        if not _is_number(alpha) or not alpha >= 0 or not math.isfinite(alpha):
            raise KnowledgeError(f"alpha must be a finite number >= 0, got {alpha!r}")
        columns = attributes + [sa]
        roles = ["prior attribute"] * len(attributes) + ["sensitive"]
        check_unique(frame, columns)
        check_cells(frame, columns, roles)
        check_missing(frame, columns, [f"{r} " for r in roles])
        counts = frame.groupby(attributes, sort=True)[sa].value_counts().unstack(fill_value=0)
        counts = counts[sorted(counts.columns, key=str)].astype(float) + float(alpha)
        table = counts.div(counts.sum(axis=1), axis=0)
        table.columns.name = None
        return cls(table, sa)

    # -- looking things up ------------------------------------------------------------
    def _columns(self, values) -> np.ndarray:
        cols = []
        for x in values:
            if x in self.table.columns:
                cols.append(self.table.columns.get_loc(x))
            elif self.other is not None:
                cols.append(self.table.columns.get_loc(self.other))
            else:
                shown = ", ".join(map(str, self.table.columns[:12]))
                raise KnowledgeError(
                    f"sensitive value {x!r} is not in the prior (columns: {shown}); "
                    "give other=... for a column that covers the values not listed"
                )
        return np.asarray(cols, dtype=int)

    def signature_rows(self, rows: pd.DataFrame) -> np.ndarray:
        """Position of each row's signature in ``table`` (KnowledgeError if unknown).

        >>> frame, prior = wong2010_example()
        >>> prior.signature_rows(frame).tolist()      # Male, then three Female
        [0, 1, 1, 1]
        """
        if not isinstance(rows, pd.DataFrame):
            raise ReleaseError(f"rows must be a pandas DataFrame, got {type(rows).__name__}")
        for a in self.attributes:
            if a not in rows.columns:
                raise ReleaseError(
                    f"prior attribute {a!r} is not a column of the group "
                    f"(columns: {', '.join(map(str, rows.columns))})"
                )
        keys = pd.MultiIndex.from_frame(rows[self.attributes])
        pos = self._index.get_indexer(keys)
        if (pos < 0).any():
            k = int(np.argmax(pos < 0))
            shown = ", ".join(f"{a}={v}" for a, v in zip(self.attributes, keys[k], strict=True))
            raise KnowledgeError(f"signature {shown} (row {rows.index[k]!r}) is not in the prior")
        return pos

    def weights(self, rows: pd.DataFrame, values, fractions: bool | None = None) -> np.ndarray:
        """Matrix of ``p(t.s : x)``: one row per row of ``rows``, one column per value.

        Fractions (object array) when ``fractions`` is True, or None and the table holds
        Fractions; floats otherwise.

        >>> frame, prior = wong2010_example()
        >>> prior.weights(frame.iloc[:2], ["Lung Cancer", "Flu"]).tolist()   # Flu: 'other'
        [[0.1, 0.9], [0.003, 0.997]]
        """
        pos = self.signature_rows(rows)
        cols = self._columns(list(values))
        if fractions or (fractions is None and self.exact):
            raw = self.table.to_numpy(dtype=object)
            return np.vectorize(_fraction, otypes=[object])(raw[np.ix_(pos, cols)])
        return self.table.to_numpy(dtype=float)[np.ix_(pos, cols)]

    def p(self, signature: dict, x):
        """``p(s : x)`` for one signature given as ``{attribute: value}``.

        >>> wong2010_example()[1].p({"Gender": "Male"}, "Lung Cancer")
        0.1
        """
        if not isinstance(signature, dict):
            raise KnowledgeError(
                f"the signature must be a dict {{attribute: value}}, got {type(signature).__name__}"
            )
        missing = [a for a in self.attributes if a not in signature]
        if missing:
            raise KnowledgeError(f"the signature needs attribute {missing[0]!r}")
        row = pd.DataFrame({a: [signature[a]] for a in self.attributes})
        return _scalar(self.weights(row, [x])[0, 0])

    def binary(self, x) -> Prior:
        """The prior of an adversary who knows only ``p(s : x)``: columns x and not-x.

        This is Table IV's form, under which Theorem 1 holds (tightly).

        >>> frame, prior = wong2010_example()
        >>> prior.binary("Lung Cancer").table.columns.tolist()
        ['Lung Cancer', 'not Lung Cancer']
        """
        if x not in self.table.columns:
            raise KnowledgeError(
                f"value {x!r} has no column of its own in the prior"
                + (f" (it is lumped into {self.other!r})" if self.other is not None else "")
            )
        col = self.table[x]
        rest = col.map(lambda v: 1 - v) if self.exact else 1.0 - col
        table = pd.DataFrame({x: col, f"not {x}": rest}, index=self.table.index)
        return Prior(table, self.sa, other=f"not {x}")

    def knowledge(self, weight: float | None = None) -> _PriorKnowledge:
        """The prior as maximum-entropy knowledge: ``P(x | s) == p`` per signature and value.

        ``weight=None`` gives hard facts (consistent when the prior was estimated from the
        released data itself); a number gives soft facts with that penalty
        (:func:`maxent_privacy.soft`). ``model.add(prior)`` is ``model.add(prior.knowledge())``.
        A value without a column of its own enters as ``P(any such value | s) == p(s : other)``;
        signatures that no record of the release has are left out.

        >>> from maxent_privacy import Bucketized, MaxEntModel
        >>> frame, prior = wong2010_example()
        >>> model = MaxEntModel(Bucketized(frame, ["Gender", "Age"], "Disease", "GID"))
        >>> model.add(prior.knowledge(weight=1.0))
        >>> model.facts[0].name
        'prior: P(Lung Cancer | Gender=Male) = 0.1'
        >>> len(model.facts)            # 2 signatures x (Lung Cancer, the lumped rest)
        4
        """
        return _PriorKnowledge(self, weight)

    def _maxent_facts_(self, model, name):
        return _PriorKnowledge(self, None)._maxent_facts_(model, name)

    def __repr__(self) -> str:
        return (
            f"Prior({', '.join(self.attributes)} -> {self.sa}: {len(self.table)} signatures, "
            f"{self.table.shape[1]} values"
            + (f", other={self.other!r}" if self.other else "")
            + ")"
        )


class _PriorKnowledge:
    """Compiles a prior into ``P(x | signature) == p`` facts of a MaxEntModel."""

    def __init__(self, prior: Prior, weight: float | None):
        if weight is not None and (
            not _is_number(weight) or not math.isfinite(weight) or not weight > 0
        ):
            raise KnowledgeError(
                f"the prior's weight must be > 0 and finite (or None), got {weight!r}"
            )
        self.prior, self.weight = prior, weight

    def _maxent_facts_(self, model, name):
        from .knowledge import soft

        prior = self.prior
        if prior.sa != model.sa:
            raise KnowledgeError(
                f"the prior speaks of {prior.sa!r}, the release's sensitive column is {model.sa!r}"
            )
        frame = model.release.frame
        present = set(map(tuple, frame[prior.attributes].drop_duplicates().to_numpy().tolist()))
        domain = model.release.sa_values
        listed = [x for x in domain if x in prior.table.columns]
        lumped = [x for x in domain if x not in prior.table.columns]
        if lumped and prior.other is None:
            prior._columns(lumped)  # raises, naming the value
        label = name or "prior"
        pairs = []
        for sig, row in zip(prior._index, prior.table.itertuples(index=False), strict=True):
            if tuple(sig) not in present:
                continue  # no record has this signature: nothing to say
            cond = dict(zip(prior.attributes, sig, strict=True))
            shown = ", ".join(f"{a}={v}" for a, v in cond.items())
            probs = dict(zip(prior.table.columns, row, strict=True))
            items = [(x, probs[x], str(x)) for x in listed]
            if lumped:
                items.append((lumped, probs[prior.other], str(prior.other)))
            for x, p, what in items:
                fact = model.P(x, **cond) == float(p)
                if self.weight is not None:
                    fact = soft(fact, self.weight)
                pairs.append((f"{label}: P({what} | {shown}) = {float(p):g}", fact))
        return pairs


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
            if not _is_number(v) or not math.isfinite(v):
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


def _match_marginals(w: np.ndarray, cap: np.ndarray, exact: bool) -> np.ndarray:
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


def _monte_carlo(w: np.ndarray, cap: np.ndarray, samples: int, seed) -> tuple:
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


def _states(w: np.ndarray, f: np.ndarray) -> int:
    """States of the cheaper direction of the exact program."""
    *_, g, cap = _lump(w, f)
    return int(min(np.prod((cap + 1).astype(float)), np.prod((g + 1).astype(float))))


def _exact_probs(
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
        marg = _match_marginals(reduced[tuple_class], cap, exact)  # tuples x value classes
        share = np.zeros((len(row_of), len(col_of)), dtype=marg.dtype)
        np.add.at(share, tuple_class, marg)
        share = share / g[:, None].astype(marg.dtype)
    else:
        occ = np.repeat(value_class, f)
        marg = _match_marginals(reduced.T[occ], g, exact)  # occurrences x tuple classes
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

    >>> frame, prior = wong2010_example()
    >>> l1 = frame[frame["GID"] == "L1"].set_index("Name")
    >>> exact_posterior(l1, prior, fractions=True).loc["Alan", "Lung Cancer"]
    Fraction(997, 1024)
    """
    if not isinstance(group, pd.DataFrame):
        raise ReleaseError(f"a group must be a pandas DataFrame, got {type(group).__name__}")
    if not isinstance(prior, Prior):
        raise KnowledgeError(f"exact_posterior needs a Prior, got {type(prior).__name__}")
    if not isinstance(method, str) or method not in ("auto", "exact", "monte carlo"):
        raise ReleaseError(f"method must be 'auto', 'exact' or 'monte carlo', got {method!r}")
    samples = _check_int(samples, "samples", 1)
    max_states = _check_int(max_states, "max_states", 0)
    _check_group(group, [prior], "exact_posterior")
    counts = group[prior.sa].value_counts(sort=False)
    values = sorted(counts.index.tolist(), key=str)
    f = counts.reindex(values).to_numpy(dtype=np.int64)
    exact = bool(fractions or (fractions is None and prior.exact))
    if exact and method == "monte carlo":
        raise ReleaseError("fractions=True needs an exact method")
    w = prior.weights(group, values, fractions=exact)
    if method == "exact" or (method == "auto" and _states(w, f) <= max_states):
        probs = _exact_probs(w, f, exact, max_states)
        out = pd.DataFrame(probs, index=group.index, columns=values)
        attrs = {"method": "exact"}
    else:
        est, err, ess = _monte_carlo(w.astype(float), f, int(samples), seed)
        out = pd.DataFrame(est, index=group.index, columns=values)
        attrs = {
            "method": "monte carlo",
            "standard_error": pd.DataFrame(err, index=group.index, columns=values),
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


# --------------------------------------------------------------------- the Delta bound
def delta_ceil(N: int, r, f_max):
    """Delta_ceil of Definition 8: ``(N - r) f / (f (r - 1) / (1 - f) + N - 1)``.

    The largest deviation of the priors of x in a group of N tuples that keeps every
    ``p(t : x) <= 1/r`` (Theorem 1). Needs ``r > 1`` and ``N >= r``; 0 when ``f_max`` is
    0 or 1. Fractions in, Fraction out. Increasing in N (Theorem 2).

    >>> round(delta_ceil(3, 2, 0.1), 4)      # Example 2 / Table V
    0.0474
    """
    _check_r(r)
    if isinstance(N, bool) or not isinstance(N, (int, np.integer)) or N < 1:
        raise ReleaseError(f"the group size N must be a positive integer, got {N!r}")
    if N < r:
        raise ReleaseError(f"group size N={N} is below r={r} (Definition 7 needs N >= r)")
    if not _is_number(f_max) or not 0 <= f_max <= 1:
        raise KnowledgeError(f"f_max must be a probability in [0, 1], got {f_max!r}")
    if f_max == 1:
        return f_max * 0
    return (N - r) * f_max / (f_max * (r - 1) / (1 - f_max) + (N - 1))


def _ceil_array(n, r, f) -> np.ndarray:
    """Vectorized Delta_ceil (any N; -inf where N < r)."""
    n = np.asarray(n, dtype=float)
    f = np.asarray(f, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = (n - r) * f / (f * (r - 1) / (1 - f) + (n - 1))
    out = np.where(f >= 1, 0.0, out)
    out = np.where(f <= 0, 0.0, out)
    return np.where(n < r, -np.inf, out)


def _priors(prior) -> list[Prior]:
    if isinstance(prior, Prior):
        return [prior]
    if isinstance(prior, (str, dict, pd.DataFrame)) or not hasattr(prior, "__iter__"):
        raise KnowledgeError(f"prior must be a Prior or a list of Priors, got {prior!r:.40}")
    priors = list(prior)
    if not priors or not all(isinstance(p, Prior) for p in priors):
        raise KnowledgeError("prior must be a Prior or a list of Priors")
    return priors


def delta_max(group: pd.DataFrame, prior: Prior, x):
    """Delta_max of Definition 8 for value x: ``max_v f_v - min_v f_v``, f_v = p(t_v.s : x).

    >>> frame, prior = wong2010_example()
    >>> round(delta_max(frame[frame["GID"] == "L1"], prior, "Lung Cancer"), 4)
    0.097
    """
    if not isinstance(prior, Prior):
        raise KnowledgeError(f"delta_max needs a Prior, got {type(prior).__name__}")
    _check_group(group, [prior], "delta_max")
    try:
        hash(x)
    except TypeError:
        raise KnowledgeError(f"x must be one sensitive value, got {type(x).__name__}") from None
    if x not in set(group[prior.sa]):
        raise ReleaseError(f"value {x!r} does not occur in the group")
    f = prior.weights(group, [x])[:, 0]
    return _scalar(max(f) - min(f))


def delta_report(group: pd.DataFrame, prior, r) -> pd.DataFrame:
    """Per attribute set and value of the group: f_max, Delta_max, Delta_ceil and whether
    the Delta bounding condition holds (``ok``).

    A value passes when it occurs once (m-uniqueness), ``N >= r`` and
    ``Delta_max <= Delta_ceil(N, r, f_max)``; ``delta_ceil`` is NaN when ``N < r``.
    A group without rows is not an A-group (Definition 5: N tuples, Definition 7: N >= r):
    ReleaseError, as for a missing sensitive value in it.

    >>> frame, prior = wong2010_example()
    >>> delta_report(frame[frame["GID"] == "L1"], prior, 2)["ok"].tolist()
    [False, False]
    """
    _check_r(r)
    priors = _priors(prior)
    _check_group(group, priors, "delta_report")
    n = len(group)
    rows = []
    for pr in priors:
        counts = group[pr.sa].value_counts(sort=False)
        values = sorted(counts.index.tolist(), key=str)
        w = pr.weights(group, values)
        for j, x in enumerate(values):
            fm, dm = max(w[:, j]), max(w[:, j]) - min(w[:, j])
            ceil = delta_ceil(n, r, fm) if n >= r else float("nan")
            ok = bool(counts[x] == 1 and n >= r and dm <= ceil)
            rows.append((", ".join(pr.attributes), x, int(counts[x]), fm, dm, ceil, ok))
    return pd.DataFrame(
        rows, columns=["attributes", "value", "count", "f_max", "delta_max", "delta_ceil", "ok"]
    )


def satisfies_delta_bound(group: pd.DataFrame, prior, r) -> bool:
    """Whether the group meets the Delta bounding condition for every attribute set of
    ``prior`` (a Prior or a list): m-unique, ``N >= r`` and Corollary 1 for each value.
    An empty group is a ReleaseError (it has no tuple to bound), not a vacuous True.

    >>> frame, prior = wong2010_example()
    >>> satisfies_delta_bound(frame[frame["GID"] == "L1"], prior, 1.5)   # Alan vs Betty
    False
    >>> satisfies_delta_bound(frame[frame["GID"] == "L2"], prior, 2)     # two women
    True
    """
    return bool(delta_report(group, prior, r)["ok"].all())


# ------------------------------------------------------------------- the paper's example
def wong2010_example() -> tuple[pd.DataFrame, Prior]:
    """Tables I/III and IV of Wong et al. (ICDM 2010): four patients, two A-groups, and
    the prior on Gender (Lung Cancer vs the rest).

    Columns ``Name, Gender, Age, Disease, GID``; the release is
    ``Bucketized(frame, qi=["Gender", "Age"], sa="Disease", group="GID")``.

    >>> frame, prior = wong2010_example()
    >>> frame["GID"].tolist(), prior
    (['L1', 'L1', 'L2', 'L2'], Prior(Gender -> Disease: 2 signatures, 2 values, \
other='Not Lung Cancer'))
    """
    frame = pd.DataFrame(
        [
            ("Alan", "Male", 41, "Lung Cancer", "L1"),
            ("Betty", "Female", 42, "Hypertension", "L1"),
            ("Catherine", "Female", 63, "Flu", "L2"),
            ("Diana", "Female", 64, "HIV", "L2"),
        ],
        columns=["Name", "Gender", "Age", "Disease", "GID"],
    )
    table = pd.DataFrame(
        {"Lung Cancer": [0.1, 0.003], "Not Lung Cancer": [0.9, 0.997]},
        index=pd.Index(["Male", "Female"], name="Gender"),
    )
    return frame, Prior(table, sa="Disease", other="Not Lung Cancer")


# ----------------------------------------------------------------------- whole releases
def _binary_max(w_col: np.ndarray, count: int) -> float:
    """max_t p(t : x) when the adversary knows only p(s : x) (x occurs ``count`` times)."""
    w_col = np.asarray(w_col, dtype=float)
    n = len(w_col)
    if count == n:
        return 1.0
    if count == 1 and (w_col < 1).all():
        odds = w_col / (1 - w_col)
        total = odds.sum()
        if total > 0:
            return float(odds.max() / total)
    items = np.column_stack([w_col, 1 - w_col])
    marg = _match_marginals(items, np.array([count, n - count]), exact=False)
    return float(marg[:, 0].max())


def robustness_table(
    release: Bucketized,
    prior,
    r,
    *,
    exact: bool = True,
    sample: int | None = None,
    seed=0,
    max_states: int = MAX_STATES,
) -> pd.DataFrame:
    """Per group of a release: size, whether it meets the Delta bound, and its worst
    exact posteriors.

    ``max_posterior`` is the largest ``p(t : x)`` of the group under the full prior (the
    maximum over the priors when several are given; a Monte-Carlo estimate for groups too
    large for the exact program); ``max_posterior_binary`` is the largest under the
    per-value priors of :meth:`Prior.binary` (what Theorem 1 bounds). ``exact=False``
    leaves both out. ``sample`` checks that many groups drawn with ``seed``. Groups above
    ``max_states`` states get a Monte-Carlo estimate (20,000 worlds) of the former.

    >>> from maxent_privacy import Bucketized
    >>> frame, prior = wong2010_example()
    >>> release = Bucketized(frame, qi=["Gender", "Age"], sa="Disease", group="GID")
    >>> table = robustness_table(release, prior, 2)
    >>> table["delta_bound"].to_dict(), table["max_posterior"].round(4).to_dict()
    ({'L1': False, 'L2': True}, {'L1': 0.9736, 'L2': 0.5})
    """
    if not isinstance(release, Bucketized):
        raise ReleaseError(
            f"robustness_table needs a Bucketized release, got {type(release).__name__}"
        )
    _check_r(r)
    priors = _priors(prior)
    for pr in priors:
        if pr.sa != release.sa:
            raise KnowledgeError(
                f"a prior speaks of {pr.sa!r}, the release's sensitive column is {release.sa!r}"
            )
    if sample is not None:
        sample = _check_int(sample, "sample", 1)
    max_states = _check_int(max_states, "max_states", 0)
    frame = release.frame
    ids = sorted(frame[release.group].unique().tolist(), key=str)
    if sample is not None and sample < len(ids):
        rng = np.random.default_rng(seed)
        pick = np.sort(rng.choice(len(ids), size=int(sample), replace=False))
        ids = [ids[i] for i in pick]
    positions = frame.groupby(release.group, sort=False).indices
    codes, domain = pd.factorize(frame[release.sa], sort=False)
    weights = [pr.weights(frame, list(domain), fractions=False) for pr in priors]
    rows = []
    for gid in ids:
        pos = positions[gid]
        present, counts = np.unique(codes[pos], return_counts=True)
        n = len(pos)
        ok = n >= r and bool((counts == 1).all())
        for w_all in weights:
            w = w_all[np.ix_(pos, present)]
            for j in range(len(present)):
                if not ok:
                    break
                f_max = float(w[:, j].max())
                ok = float(w[:, j].max() - w[:, j].min()) <= delta_ceil(n, r, f_max)
        row = {"size": n, "delta_bound": ok}
        if exact:
            full, binary = 0.0, 0.0
            for w_all in weights:
                w = w_all[np.ix_(pos, present)]
                if _states(w, counts) <= max_states:
                    probs = _exact_probs(w, counts, exact=False, max_states=max_states)
                else:
                    probs = _monte_carlo(w, counts, 20_000, seed)[0]
                full = max(full, float(probs.max()))
                for j in range(len(present)):
                    binary = max(binary, _binary_max(w[:, j], int(counts[j])))
            row["max_posterior"] = full
            row["max_posterior_binary"] = binary
        rows.append(row)
    out = pd.DataFrame(rows, index=pd.Index(ids, name=release.group))
    return out


def _merged_ratio(size, lo, hi, mask, r) -> np.ndarray:
    """Largest Delta_max / Delta_ceil over values present and priors (<= 1: passes)."""
    ceil = _ceil_array(np.maximum(size, r)[None, :, None], r, hi)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(hi - lo > 0, (hi - lo) / ceil, 0.0)
    return np.where(mask[None], ratio, 0.0).max(axis=(0, 2))


def _merged_slack(size, lo, hi, mask, r) -> np.ndarray:
    """Largest Delta_max - Delta_ceil over values present and priors (<= 0: passes)."""
    ceil = _ceil_array(size[None, :, None], r, hi)
    gap = np.where(mask[None], hi - lo - ceil, -np.inf)
    return gap.max(axis=(0, 2))


def robust_anonymize(
    frame: pd.DataFrame,
    qi: Sequence[str],
    sa: str,
    prior,
    r,
    *,
    seed=0,
    group: str = "group",
    verify: bool = True,
    max_states: int = MAX_STATES,
) -> Bucketized:
    """Bucketize ``frame`` so that every group meets the Delta bounding condition.

    The bottom-up approach of Section IV, for ``prior`` (a Prior or a list, one per
    attribute set; their attributes must be quasi-identifiers):

    1. Records with the same signature in every attribute set have equal priors, so any
       m-unique group of at least r of them has Delta_max = 0 and passes. Within each
       such class the records are dealt Anatomy-style (one from each of the ceil(r)
       largest piles of a sensitive value, piles shuffled with ``seed``) into groups of
       ceil(r); the rest start as groups of one.
    2. While a group violates the condition it is merged with another group holding none
       of its values: the smallest merged group that passes (ties: a violating partner,
       then the most slack). A group with no such partner waits while other merges go
       on; after a round with no passing merge, one waiting group takes the merge with
       the least ratio Delta_max / Delta_ceil. A violating group that no group
       can take is dissolved, its records joining passing groups that stay passing; a
       record no group can take is an error naming it. This is a heuristic: an error
       does not prove that no r-robust grouping exists.
    3. With ``verify=True`` (the default) each group's exact posteriors under every prior
       (the joint prior, not per-value; see the module note on Theorem 1) are computed and
       groups above 1/r are merged further the same way. ``verify=False`` stops after
       step 2: the paper's method, guaranteed only against the per-value adversary.

    Every group is m-unique (each sensitive value at most once, as in Anatomy) and has
    at least r records, so no value may occur in more than N / ceil(r) of the N records.
    Returns a Bucketized release with columns ``qi + [sa, group]`` (groups numbered
    1..m by their first record; rows sorted by group, then position in ``frame``).

    >>> import pandas as pd
    >>> frame = pd.DataFrame({"sex": list("MMMMFFFF"), "disease": ["Flu", "HIV", "Cold",
    ...                       "Flu", "Flu", "HIV", "Cold", "HIV"]})
    >>> prior = Prior.estimate(frame, ["sex"], "disease")
    >>> release = robust_anonymize(frame, ["sex"], "disease", prior, r=2)
    >>> bool(robustness_table(release, prior, 2)["delta_bound"].all())
    True
    """
    qi, priors, max_states = _check_robust_input(frame, qi, sa, group, prior, r, max_states)
    n = len(frame)
    q = math.ceil(float(r))
    codes, uniques = pd.factorize(frame[sa], sort=False)
    uniques = list(uniques)
    _check_m_unique_possible(codes, uniques, q, r)
    weights = np.stack([pr.weights(frame, uniques, fractions=False) for pr in priors])  # K n D
    rng = np.random.default_rng(seed)

    # 1. Anatomy-style groups of ceil(r) inside each class of equal signatures
    members = _signature_groups(frame, priors, codes, q, rng)

    # 2. merge violating groups
    groups = _Groups(members, codes, weights, uniques, r)
    order = rng.permutation(len(members))
    groups.settle([int(g) for g in order if not groups.passing[g]][::-1], lambda g: True)

    # 3. merge further the groups whose exact posteriors exceed 1/r
    if verify:
        _merge_until_exact(groups, _exact_check(groups, weights, codes, r, max_states, seed))

    # number groups by their first record; rows sorted by group, then position
    group_of = groups.numbered(n)
    rows = np.lexsort((np.arange(n), group_of))
    out = frame.iloc[rows][qi + [sa]].copy()
    out[group] = group_of[rows]
    return Bucketized(out, qi=qi, sa=sa, group=group)


def _check_robust_input(frame, qi, sa, group, prior, r, max_states) -> tuple:
    """Check the arguments of :func:`robust_anonymize`: ``(qi, priors, max_states)``."""
    _check_r(r)
    qi = check_input_table(frame, qi, sa, group, None, "robust_anonymize")
    if len(frame) == 0:
        raise ReleaseError("robust_anonymize: the table has no rows")
    max_states = _check_int(max_states, "max_states", 0)
    priors = _priors(prior)
    for pr in priors:
        if pr.sa != sa:
            raise KnowledgeError(f"a prior speaks of {pr.sa!r}, not of the sensitive {sa!r}")
        for a in pr.attributes:
            if a not in qi:
                raise KnowledgeError(f"prior attribute {a!r} is not a quasi-identifier")
    return qi, priors, max_states


def _check_m_unique_possible(codes: np.ndarray, uniques: list, q: int, r) -> None:
    """Raise if a sensitive value occurs in more than n / ceil(r) of the n records."""
    n = len(codes)
    counts = np.bincount(codes, minlength=len(uniques))
    worst = int(np.argmax(counts))
    if counts[worst] * q > n:
        raise ReleaseError(
            f"{r}-robust m-unique groups are impossible: sensitive value {uniques[worst]!r} "
            f"occurs in {counts[worst]:,} of {n:,} records, more than 1/{q}"
        )


def _signature_groups(
    frame: pd.DataFrame, priors: list[Prior], codes: np.ndarray, q: int, rng
) -> list[list[int]]:
    """Step 1: m-unique groups of ``q`` records of equal signatures, the rest alone."""
    attrs = list(dict.fromkeys(a for pr in priors for a in pr.attributes))
    cls = frame.groupby(attrs, sort=True, dropna=False).ngroup().to_numpy()
    members: list[list[int]] = []
    by_class = np.argsort(cls, kind="stable")
    for rows in np.split(by_class, np.flatnonzero(np.diff(cls[by_class])) + 1):
        piles = {}
        for v in np.unique(codes[rows]):
            piles[int(v)] = list(rng.permutation(rows[codes[rows] == v]))
        while sum(1 for p in piles.values() if p) >= q:
            top = sorted((v for v in piles if piles[v]), key=lambda v: (-len(piles[v]), v))[:q]
            members.append([int(piles[v].pop()) for v in top])
        for p in piles.values():
            members.extend([[int(t)] for t in p])
    return members


class _Groups:
    """The groups of :func:`robust_anonymize` while they are merged (step 2).

    Group ``g`` holds the records ``members[g]``; ``size[g]`` is their number,
    ``mask[g, v]`` whether value ``v`` occurs in it, and ``lo[:, g, v]`` / ``hi[:, g, v]``
    the smallest / largest prior weight of ``v`` over its records (one row per prior).
    A group merged into another or dissolved is not ``alive`` and has no members.
    ``passing[g]``: the group has at least r records and meets the Delta bound.
    Groups only grow, and every alive group stays m-unique.
    """

    def __init__(self, members: list[list[int]], codes, weights, uniques: list, r):
        self.members = members
        self.codes, self.weights, self.uniques, self.r = codes, weights, uniques, r
        n_g, n_d = len(members), len(uniques)
        self.size = np.array([len(m) for m in members], dtype=float)
        self.mask = np.zeros((n_g, n_d), dtype=bool)
        self.lo = np.full((len(weights), n_g, n_d), np.inf)
        self.hi = np.full((len(weights), n_g, n_d), -np.inf)
        for g, mem in enumerate(members):
            self.mask[g, codes[mem]] = True
            self.lo[:, g] = weights[:, mem].min(axis=1)
            self.hi[:, g] = weights[:, mem].max(axis=1)
        self.alive = np.ones(n_g, dtype=bool)
        slack = _merged_slack(self.size, self.lo, self.hi, self.mask, r)
        self.passing = (self.size >= r) & (slack <= 0)

    def merge_into(self, g: int, h: int) -> None:
        """Move the records of group ``h`` into group ``g``; ``h`` dies."""
        self.members[g] = self.members[g] + self.members[h]
        self.members[h] = []
        self.size[g] += self.size[h]
        self.mask[g] |= self.mask[h]
        self.lo[:, g] = np.minimum(self.lo[:, g], self.lo[:, h])
        self.hi[:, g] = np.maximum(self.hi[:, g], self.hi[:, h])
        self.alive[h] = False
        one = slice(g, g + 1)
        s = _merged_slack(self.size[one], self.lo[:, one], self.hi[:, one], self.mask[one], self.r)
        self.passing[g] = self.size[g] >= self.r and s[0] <= 0
        self.passing[h] = False

    def dissolve(self, g: int) -> None:
        """Move each record of group ``g`` into a passing group that stays passing; ``g`` dies."""
        for t in self.members[g]:
            v = self.codes[t]
            h, lo, hi = self._home(t, g)
            self.members[h].append(t)
            self.size[h] += 1
            self.mask[h, v] = True
            self.lo[:, h], self.hi[:, h] = lo, hi
        self.members[g] = []
        self.alive[g] = False
        self.passing[g] = False

    def _home(self, t: int, g: int) -> tuple[int, np.ndarray, np.ndarray]:
        """The passing group (not ``g``) record ``t`` joins, and its lo and hi with ``t``."""
        v = self.codes[t]
        cand = np.flatnonzero(self.alive & self.passing & ~self.mask[:, v])
        cand = cand[cand != g]
        m_size = self.size[cand] + 1
        w_t = self.weights[:, t][:, None, :]
        m_lo = np.minimum(self.lo[:, cand], w_t)
        m_hi = np.maximum(self.hi[:, cand], w_t)
        m_mask = self.mask[cand].copy()
        m_mask[:, v] = True
        m_slack = _merged_slack(m_size, m_lo, m_hi, m_mask, self.r)
        ok = np.flatnonzero(m_slack <= 0)
        if len(ok) == 0:
            raise ReleaseError(
                f"no {self.r}-robust group can take the record at position {t} "
                f"(sensitive value {self.uniques[v]!r}); try a smaller r, coarser or smoothed "
                "priors"
            )
        j = int(ok[np.lexsort((m_slack[ok], m_size[ok]))[0]])
        return int(cand[j]), m_lo[:, j], m_hi[:, j]

    def settle(self, queue: list[int], extra_ok) -> None:
        """Merge the groups of ``queue`` (last first) until each passes and ``extra_ok``."""
        deferred: list[int] = []
        progress, force = False, False
        while queue or deferred:
            if not queue:
                force = not progress  # a full round without a passing merge
                queue, deferred, progress = deferred[::-1], [], False
            g = queue.pop()
            if not self.alive[g] or (self.passing[g] and extra_ok(g)):
                continue
            cand = np.flatnonzero(self.alive & ~(self.mask & self.mask[g]).any(axis=1))
            cand = cand[cand != g]
            if len(cand) == 0:
                self.dissolve(g)
                progress = True
                continue
            best, forced = self._partner(g, cand, force)
            if best is None:
                deferred.append(g)  # other merges may make a partner for it
                continue
            if forced:
                force = False
            self.merge_into(g, best)
            progress = True
            queue.append(g)

    def _partner(self, g: int, cand: np.ndarray, force: bool) -> tuple[int | None, bool]:
        """The group of ``cand`` to merge ``g`` with (None: wait), and whether it is forced."""
        r = self.r
        m_size = self.size[g] + self.size[cand]
        m_lo = np.minimum(self.lo[:, g : g + 1], self.lo[:, cand])
        m_hi = np.maximum(self.hi[:, g : g + 1], self.hi[:, cand])
        m_mask = self.mask[g] | self.mask[cand]
        m_slack = _merged_slack(m_size, m_lo, m_hi, m_mask, r)
        ok = (m_size >= r) & (m_slack <= 0)
        # lexsort: the last key is the primary one
        if ok.any():  # the smallest that passes; ties: a violating partner, most slack
            keys = (m_slack, self.passing[cand], m_size, ~ok)
        elif not force:
            return None, False
        else:  # forced: the least Delta_max / Delta_ceil
            ratio = _merged_ratio(m_size, m_lo, m_hi, m_mask, r)
            keys = (m_size, self.passing[cand], ratio)
        return int(cand[np.lexsort(keys)[0]]), not ok.any()

    def numbered(self, n: int) -> np.ndarray:
        """Group of each of the ``n`` records, groups numbered 1.. by their first record."""
        group_of = np.zeros(n, dtype=np.int64)
        firsts = sorted((min(m), g) for g, m in enumerate(self.members) if self.alive[g] and m)
        for k, (_, g) in enumerate(firsts, start=1):
            group_of[self.members[g]] = k
        return group_of


def _merge_until_exact(groups: _Groups, exact_ok) -> None:
    """Step 3: merge the groups failing ``exact_ok`` further until every alive one passes."""
    while True:
        bad = [g for g in np.flatnonzero(groups.alive) if not exact_ok(int(g))]
        if not bad:
            break
        for g in bad:
            groups.passing[g] = False
        groups.settle([int(g) for g in bad][::-1], exact_ok)


def _exact_check(groups: _Groups, weights, codes, r, max_states: int, seed):
    """Step 3's test: ``exact_ok(g)``, whether group g's exact posteriors are <= 1/r (cached)."""
    limit = 1 / float(r)
    checked: dict[tuple[int, int], bool] = {}

    def exact_ok(g: int) -> bool:
        key = (g, len(groups.members[g]))
        if key not in checked:
            mem = np.asarray(groups.members[g])
            ones = np.ones(len(mem), dtype=np.int64)  # m-unique: each value once
            worst = 0.0
            for w_all in weights:
                w = w_all[np.ix_(mem, codes[mem])]
                if _states(w, ones) <= max_states:
                    probs = _exact_probs(w, ones, exact=False, max_states=max_states)
                else:  # pragma: no cover - groups this large need > 22 values
                    probs = _monte_carlo(w, ones, 20_000, seed)[0]
                worst = max(worst, float(probs.max()))
            checked[key] = worst <= limit + 1e-12
        return checked[key]

    return exact_ok


# ------------------------------------------------------------------- information loss
def query_error(
    release: Bucketized,
    *,
    queries: int = 1000,
    qd: int | None = None,
    selectivity: float = 0.05,
    seed=0,
) -> float:
    """Average relative error of random count queries answered from the release.

    The workload of Anatomy (Xiao and Tao, VLDB 2006), the information loss Wong et al.
    adopt: ``COUNT(*) WHERE A_1 in b_1 AND ... AND A_qd in b_qd AND S in b_s`` over ``qd``
    quasi-identifiers drawn at random (default ``min(3, len(qi))``) and the sensitive
    column; each ``b`` covers ``ceil(|domain| * selectivity ** (1 / (qd + 1)))`` values,
    a run of consecutive values for a numeric column and a random set otherwise. The
    release answers with ``sum over groups of count_QI(g) * count_S(g) / |g|``; the
    actual count comes from the release's rows, which hold each record's true value (as
    :func:`robust_anonymize` and :func:`~maxent_privacy.anonymize.anatomize` make them).
    Queries with actual count 0 are skipped. The same ``seed`` gives the same workload
    on releases of the same records.

    >>> from maxent_privacy import Bucketized
    >>> frame, _ = wong2010_example()
    >>> release = Bucketized(frame, qi=["Gender", "Age"], sa="Disease", group="GID")
    >>> query_error(release, queries=200, qd=1, selectivity=0.5) > 0
    True
    """
    if not isinstance(release, Bucketized):
        raise ReleaseError(f"query_error needs a Bucketized release, got {type(release).__name__}")
    queries = _check_int(queries, "queries", 1)
    if not _is_number(selectivity) or not 0 < selectivity <= 1:
        raise ReleaseError(f"selectivity must be a number in (0, 1], got {selectivity!r}")
    frame = release.frame
    if qd is None:
        qd = min(3, len(release.qi))
    elif isinstance(qd, bool) or not isinstance(qd, (int, np.integer)):
        raise ReleaseError(f"qd must be an integer between 1 and {len(release.qi)}, got {qd!r}")
    if not 1 <= qd <= len(release.qi):
        raise ReleaseError(f"qd must be an integer between 1 and {len(release.qi)}, got {qd!r}")
    rng = np.random.default_rng(seed)
    cols = release.qi + [release.sa]
    codes, sizes, numeric = {}, {}, {}
    for c in cols:
        codes[c], uniq = pd.factorize(frame[c], sort=True)
        sizes[c] = len(uniq)
        numeric[c] = pd.api.types.is_numeric_dtype(frame[c])
    gid = pd.factorize(frame[release.group])[0]
    n_g = np.bincount(gid).astype(float)
    share = selectivity ** (1 / (qd + 1))
    errors = []
    for _ in range(queries):
        attrs = [release.qi[i] for i in rng.choice(len(release.qi), size=qd, replace=False)]
        hit = {}
        for c in attrs + [release.sa]:
            k = min(sizes[c], math.ceil(sizes[c] * share))
            if numeric[c]:
                start = int(rng.integers(0, sizes[c] - k + 1))
                chosen = np.zeros(sizes[c], dtype=bool)
                chosen[start : start + k] = True
            else:
                chosen = np.zeros(sizes[c], dtype=bool)
                chosen[rng.choice(sizes[c], size=k, replace=False)] = True
            hit[c] = chosen[codes[c]]
        q_hit = np.logical_and.reduce([hit[c] for c in attrs])
        s_hit = hit[release.sa]
        actual = int((q_hit & s_hit).sum())
        if actual == 0:
            continue
        est = (np.bincount(gid, q_hit, len(n_g)) * np.bincount(gid, s_hit, len(n_g)) / n_g).sum()
        errors.append(abs(est - actual) / actual)
    if not errors:
        raise ValueError("every query had an actual count of 0; raise the selectivity")
    return float(np.mean(errors))


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
    indexed by the record's label.

    >>> from maxent_privacy import Bucketized
    >>> frame, prior = wong2010_example()
    >>> release = Bucketized(frame.set_index("Name"), qi=["Gender", "Age"], sa="Disease",
    ...                      group="GID")
    >>> table = compare_posteriors(release, prior, weight=1.0)
    >>> alan = table.loc["Alan"].set_index("value")
    >>> alan[["possible_worlds", "maxent"]].round(3).to_dict("index")["Lung Cancer"]
    {'possible_worlds': 0.974, 'maxent': 0.1}
    """
    from .model import MaxEntModel

    if not isinstance(release, Bucketized):
        raise ReleaseError(
            f"compare_posteriors needs a Bucketized release, got {type(release).__name__}"
        )
    if not isinstance(prior, Prior):
        raise KnowledgeError(f"compare_posteriors needs a Prior, got {type(prior).__name__}")
    max_states = _check_int(max_states, "max_states", 0)
    model = MaxEntModel(release)
    model.add(prior.knowledge(weight))
    post = model.solve(solver=solver).posterior(by="group")
    frame = release.frame
    parts = []
    for pos in frame.groupby(release.group, sort=True).indices.values():
        rows_g = frame.iloc[pos]
        worlds = exact_posterior(rows_g, prior, max_states=max_states)
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
