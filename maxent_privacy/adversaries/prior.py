"""The QI-based prior of Wong et al. (ICDM 2010) and the input checks of r-robustness.

:class:`Prior` holds one attribute set's distribution ``p(s : x)`` (Definition 2, Table
IV), given as a table or estimated from data, and compiles into maximum-entropy knowledge.
The checks here (numbers, ``r``, groups of tuples, lists of priors) are shared by
:mod:`~maxent_privacy.adversaries.worlds`, :mod:`~maxent_privacy.adversaries.robustness` and
:mod:`~maxent_privacy.anonymize.robust`.

>>> import pandas as pd
>>> table = pd.DataFrame({"Lung Cancer": [0.1, 0.003], "Not Lung Cancer": [0.9, 0.997]},
...                      index=pd.Index(["Male", "Female"], name="Gender"))
>>> Prior(table, sa="Disease", other="Not Lung Cancer")
Prior(Gender -> Disease: 2 signatures, 2 values, other='Not Lung Cancer')
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction

import numpy as np
import pandas as pd

from .._validation import KnowledgeArgumentError, ReleaseArgumentError, check_integer, shown
from ..errors import KnowledgeError, ReleaseError
from ..releases.checks import check_cells, check_frame, check_label, check_missing, check_unique

__all__ = ["Prior", "as_priors", "check_group", "check_int", "check_r", "is_number", "scalar"]


def _fraction(value) -> Fraction:
    """A probability as a Fraction; a float is read as the decimal it prints as (0.1 = 1/10)."""
    if isinstance(value, Fraction):
        return value
    if isinstance(value, (int, np.integer)):
        return Fraction(int(value))
    return Fraction(repr(float(value)))


def scalar(value):
    """A numpy scalar as the Python number it holds (Fractions pass through)."""
    return value.item() if isinstance(value, np.generic) else value


def check_int(value, name: str, least: int) -> int:
    """A whole-number argument of at least ``least`` (not a bool):
    :func:`~maxent_privacy._validation.check_integer`, a ``ReleaseError`` too."""
    return check_integer(value, name, minimum=least, error=ReleaseArgumentError)


def is_number(value) -> bool:
    """A real number (numpy scalars and Fractions too), not a bool."""
    return not isinstance(value, (bool, np.bool_)) and isinstance(
        value, (int, float, Fraction, np.integer, np.floating)
    )


def check_group(group, priors, who: str) -> None:
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


def check_r(r) -> None:
    """``r`` must be a finite number above 1 (an ArgumentError, and a ReleaseError)."""
    if not is_number(r) or not math.isfinite(float(r)) or not r > 1:
        raise ReleaseArgumentError(f"r must be a number above 1, got {shown(r)}")


def _not_whole(sig, total, other) -> None:
    if other is None:
        raise KnowledgeError(
            f"the prior of signature {sig!r} sums to {float(total):.6g}, not 1: each row is a "
            "whole distribution of the sensitive value; give the rest a column of its own "
            "(table.assign(rest=1 - table.sum(axis=1))) and name it with other='rest'"
        )
    raise KnowledgeError(
        f"the prior of signature {sig!r} sums to {float(total):.6g}, not 1: with "
        f"other={other!r} standing for every value not listed, each row is a whole distribution"
    )


def as_priors(prior) -> list[Prior]:
    """``prior`` (a Prior or a list of Priors) as a non-empty list of Priors."""
    if isinstance(prior, Prior):
        return [prior]
    if isinstance(prior, (str, dict, pd.DataFrame)) or not hasattr(prior, "__iter__"):
        raise KnowledgeError(f"prior must be a Prior or a list of Priors, got {prior!r:.40}")
    priors = list(prior)
    if not priors or not all(isinstance(p, Prior) for p in priors):
        raise KnowledgeError("prior must be a Prior or a list of Priors")
    return priors


# --------------------------------------------------------------------------- the prior
class Prior:
    """A QI-based prior G on one attribute set (Definition 2): signature -> P(S).

    Parameters
    ----------
    table : DataFrame whose index holds the signatures (named by the attributes; a
        MultiIndex for several; no missing values) and whose columns are sensitive values;
        each entry is ``p(s : x)``, a float or a Fraction in [0, 1], each row a whole
        distribution: summing to 1 (exactly with Fractions, within 1e-9 with floats). A
        row summing below 1 is an error naming it: the rest needs a column (``other``).
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
            if len(under):
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
            if total < 1 - (0 if exact else 1e-9) and underfull is None:
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
        if not is_number(alpha) or not math.isfinite(alpha) or not alpha >= 0:
            raise KnowledgeArgumentError(f"alpha must be a finite number >= 0, got {shown(alpha)}")
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

        >>> from maxent_privacy.robustness import wong2010_example
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

        >>> from maxent_privacy.robustness import wong2010_example
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

        >>> from maxent_privacy.robustness import wong2010_example
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
        return scalar(self.weights(row, [x])[0, 0])

    def binary(self, x) -> Prior:
        """The prior of an adversary who knows only ``p(s : x)``: columns x and not-x.

        This is Table IV's form, under which Theorem 1 holds (tightly).

        >>> from maxent_privacy.robustness import wong2010_example
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
        >>> from maxent_privacy.robustness import wong2010_example
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
            not is_number(weight) or not math.isfinite(weight) or not weight > 0
        ):
            raise KnowledgeArgumentError(
                f"the prior's weight must be > 0 and finite (or None), got {shown(weight)}"
            )
        self.prior, self.weight = prior, weight

    def _maxent_facts_(self, model, name):
        from ..knowledge.vague import soft

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
