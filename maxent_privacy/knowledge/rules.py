"""Background knowledge as association rules: Top-(K+, K-) strongest associations.

Du, Teng and Zhu (SIGMOD 2008, Sections 4.3-4.4 and 7.1) bound what an adversary knows
by the K+ strongest *positive* association rules ``Qv => s`` and the K- strongest
*negative* rules ``Qv => not s`` of the original data, where ``Qv`` fixes the values of
some quasi-identifiers and ``s`` is a sensitive value. Every rule is the fact
``P(s | Qv) = confidence`` on the model's variable; :func:`mine_rules` finds them and a
:class:`Rules` object compiles any number of them into one sparse linear constraint.

>>> from maxent_privacy import Bucketized, MaxEntModel, datasets
>>> from maxent_privacy.rules import mine_rules
>>> frame = datasets.du2008_figure1()
>>> rules = mine_rules(frame, qi=["gender", "degree"], sa="disease", attributes=1)
>>> rules.top(1, 2).labels()
['gender=male => Flu', 'gender=male => not Breast Cancer', 'gender=male => not Lung Cancer']
>>> model = MaxEntModel(Bucketized(frame, qi=["gender", "degree"], sa="disease",
...                                group="bucket"))
>>> model.add(rules.top(1, 2))                # one vector fact named "rules"
>>> [(f.name, f.size) for f in model.facts]
[('rules', 3)]
>>> float(model.solve().posterior().loc[("female", "junior"), "Breast Cancer"])
1.0
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import combinations

import cvxpy as cp
import numpy as np
import pandas as pd
import scipy.sparse as sp

from ..errors import KnowledgeError
from .facts import tag
from .vague import Grouped

__all__ = ["Rules", "mine_rules"]

#: Columns of :attr:`Rules.frame` after the QI columns.
RULE_COLUMNS = ["sa_value", "support", "count", "confidence", "kind"]

_KEY_LIMIT = 2**62


# ---------------------------------------------------------------------- helpers
def _mixed_radix(codes: Sequence[np.ndarray], radices: Sequence[int], extra: int = 1):
    """One int64 key per row for tuples of codes, lexicographic in the column order.

    ``codes[j]`` are in ``0 .. radices[j] - 1``. When the product of the radices would
    overflow (times ``extra``, room left for one more digit), the partial key is first
    replaced by its rank among the distinct partial keys, which keeps the order.
    """
    n = len(codes[0]) if codes else 0
    key = np.zeros(n, dtype=np.int64)
    span = 1
    for c, r in zip(codes, radices, strict=True):
        r = max(int(r), 1)
        if span * r * extra >= _KEY_LIMIT:
            _, key = np.unique(key, return_inverse=True)
            key = key.astype(np.int64)
            span = int(key.max()) + 1 if n else 1
        key = key * r + c
        span *= r
    return key, span


def _factorize(values: pd.Series):
    """Codes and sorted distinct values (``str`` order when the values do not compare)."""
    try:
        return pd.factorize(values, sort=True)
    except TypeError:
        codes, uniques = pd.factorize(values, sort=False)
        order = sorted(range(len(uniques)), key=lambda i: str(uniques[i]))
        rank = np.empty(len(order), dtype=np.int64)
        rank[order] = np.arange(len(order))
        return rank[codes], uniques.take(order)


def _with_na(values: pd.Series, mask: np.ndarray) -> pd.Series:
    """``values`` where ``mask``, NA elsewhere, keeping integer/boolean columns exact."""
    kind = values.dtype.kind
    if kind in "iu":
        values = values.astype("Int64")
    elif kind == "b":
        values = values.astype("boolean")
    return values.where(mask)


def _check_sizes(attributes, n_qi: int) -> list[int]:
    if attributes is None:
        return [n_qi]
    items = attributes if isinstance(attributes, Iterable) else [attributes]
    sizes = []
    for t in items:
        if isinstance(t, (bool, np.bool_)) or not isinstance(t, (int, np.integer)):
            raise KnowledgeError(
                f"attributes must be an integer T (rules over T quasi-identifiers) or a list "
                f"of them, got {attributes!r}"
            )
        if not 1 <= t <= n_qi:
            raise KnowledgeError(
                f"attributes={int(t)} is out of range: rules fix 1 to {n_qi} of the "
                f"{n_qi} quasi-identifiers"
            )
        sizes.append(int(t))
    if not sizes:
        raise KnowledgeError("attributes is an empty list; give T in 1..len(qi)")
    return sorted(set(sizes))


# ------------------------------------------------------------------------ mining
def mine_rules(
    original_frame: pd.DataFrame,
    qi: Sequence[str],
    sa: str,
    attributes: int | Iterable[int] | None = None,
    min_support: int = 3,
) -> Rules:
    """All positive and negative association rules between QI values and ``sa``.

    A rule ``Qv => s`` fixes the values of exactly ``T`` quasi-identifiers (``Qv``) and
    names a sensitive value ``s``. Its ``support`` is the number of records with ``Qv``,
    its ``count`` those with ``Qv`` and ``s``, its ``confidence`` = count / support =
    P(s | Qv) in ``original_frame`` (Du et al. Section 4.4).

    * **positive** rules ``Qv => s``: at least ``min_support`` records have ``Qv`` and
      ``s`` (count >= min_support; the paper's minimum support 3/14210 is
      ``min_support=3``). Ranked by confidence, highest first; ties by larger count.
    * **negative** rules ``Qv => not s``: at least ``min_support`` records have ``Qv``
      (support >= min_support) and ``s`` is negatively associated with ``Qv``, i.e.
      P(s | Qv) < P(s). Ranked by confidence of ``s``, lowest first (the strongest say
      P(s | Qv) = 0); ties by larger support.

    A pair with count >= min_support and P(s | Qv) < P(s) is in both lists, at the bottom
    of each, so it reaches a Top-(K+, K-) only for very large K.

    Remaining ties go by T, then the attribute subset (in ``qi`` order), then the QI
    values and ``s`` (sorted), so the ranking is a function of the data alone.

    Parameters
    ----------
    original_frame : the original microdata, one row per record.
    qi : quasi-identifier columns rules may use.
    sa : the sensitive column.
    attributes : T, the number of quasi-identifiers in every rule (Figure 6 varies it
        from 1 to 8); a list of integers mines each; ``None`` (default) is ``len(qi)``.
    min_support : minimum number of records supporting a rule (see above).

    Returns
    -------
    Rules, positives first, each kind in rank order.

    >>> from maxent_privacy import datasets
    >>> from maxent_privacy.rules import mine_rules
    >>> rules = mine_rules(datasets.du2008_figure1(), ["gender", "degree"], "disease",
    ...                    attributes=1)
    >>> rules.frame.head(3)
      gender degree       sa_value  support  count  confidence      kind
    0   male    NaN            Flu        6      3         0.5  positive
    1   male    NaN  Breast Cancer        6      0         0.0  negative
    2   male    NaN    Lung Cancer        6      0         0.0  negative
    """
    qi = _check_mining_input(original_frame, qi, sa, min_support)
    sizes = _check_sizes(attributes, len(qi))
    min_support = int(min_support)
    n_records = len(original_frame)

    s_codes, s_values = _factorize(original_frame[sa])
    prior = np.bincount(s_codes, minlength=len(s_values)) / max(n_records, 1)
    q_codes, q_values = _factorize_qi(original_frame, qi)

    parts = {"positive": [], "negative": []}
    subsets = [subset for t in sizes for subset in combinations(range(len(qi)), t)]
    for subset_id, subset in enumerate(subsets):
        key, _ = _mixed_radix([q_codes[j] for j in subset], [len(q_values[j]) for j in subset])
        for kind, found in _rules_of_subset(key, s_codes, prior, min_support).items():
            parts[kind].append((np.full(len(found[0]), subset_id), *found))

    frames = [
        _rules_frame(
            kind, _ranked_rules(kind, parts[kind]), subsets, qi, q_codes, q_values, s_values
        )
        for kind in ("positive", "negative")
    ]
    frame = pd.concat(frames, ignore_index=True)
    return Rules(
        frame,
        qi=qi,
        sa=sa,
        info={"n_records": n_records, "min_support": min_support, "attributes": sizes},
    )


def _check_mining_input(original_frame, qi, sa: str, min_support) -> list[str]:
    """Check the arguments of :func:`mine_rules` (but ``attributes``); the QI as a list."""
    if not isinstance(original_frame, pd.DataFrame):
        raise KnowledgeError(
            f"mine_rules needs a pandas DataFrame, got {type(original_frame).__name__}"
        )
    qi = [qi] if isinstance(qi, str) else list(qi)
    if not qi:
        raise KnowledgeError("mine_rules needs at least one quasi-identifier (qi=[...])")
    if len(set(qi)) != len(qi) or sa in qi:
        raise KnowledgeError(f"qi={qi} and sa={sa!r} must be distinct columns")
    for col in qi + [sa]:
        if col not in original_frame.columns:
            raise KnowledgeError(
                f"column {col!r} is not in the table "
                f"(columns: {', '.join(map(str, original_frame.columns))})"
            )
        missing = original_frame[col].isna().to_numpy()
        if missing.any():
            row = original_frame.index[int(np.argmax(missing))]
            raise KnowledgeError(
                f"column {col!r} has a missing value (row {row!r}); drop or fill such rows "
                "first (NA in a rule means 'attribute not fixed')"
            )
    if (
        isinstance(min_support, (bool, np.bool_))
        or not isinstance(min_support, (int, np.integer))
        or min_support < 1
    ):
        raise KnowledgeError(
            f"min_support is a number of records (an integer >= 1), got {min_support!r}"
        )
    return qi


def _factorize_qi(original_frame: pd.DataFrame, qi: list[str]) -> tuple[list, list]:
    """Per QI column: int64 codes and sorted distinct values (see :func:`_factorize`)."""
    q_codes, q_values = [], []
    for col in qi:
        codes, uniques = _factorize(original_frame[col])
        q_codes.append(codes.astype(np.int64))
        q_values.append(uniques)
    return q_codes, q_values


def _rules_of_subset(
    key: np.ndarray, s_codes: np.ndarray, prior: np.ndarray, min_support: int
) -> dict[str, tuple]:
    """Per kind, arrays ``(qv, rep, s, support, count)`` of the rules fixing one subset."""
    # key: each record's values of the subset; qv: index of Qv among its distinct values,
    # rep: a record with Qv, s: the sensitive code
    n_s = len(prior)
    _, first, inv = np.unique(key, return_index=True, return_inverse=True)
    n_q = len(first)
    support = np.bincount(inv, minlength=n_q)
    counts = np.bincount(inv * n_s + s_codes, minlength=n_q * n_s).reshape(n_q, n_s)
    conf = counts / support[:, None]
    pos_q, pos_s = np.nonzero(counts >= min_support)
    neg_q, neg_s = np.nonzero((support[:, None] >= min_support) & (conf < prior[None, :]))
    return {
        kind: (qq, first[qq], ss, support[qq], counts[qq, ss])
        for kind, qq, ss in (("positive", pos_q, pos_s), ("negative", neg_q, neg_s))
    }


def _ranked_rules(kind: str, parts: list[tuple]) -> tuple[np.ndarray, ...]:
    """One kind's rules of all subsets, ranked: ``(sid, rep, s, support, count, confidence)``."""
    sid, qv, rep, s, support, count = (np.concatenate(a) for a in zip(*parts, strict=True))
    confidence = count / np.maximum(support, 1)
    if kind == "positive":
        order = np.lexsort((s, qv, sid, -count, -confidence))
    else:
        order = np.lexsort((s, qv, sid, -support, confidence))
    return (
        sid[order],
        rep[order],
        s[order],
        support[order],
        count[order],
        confidence[order],
    )


def _rules_frame(
    kind: str, ranked: tuple, subsets: list, qi: list[str], q_codes, q_values, s_values
) -> pd.DataFrame:
    """The rows of :attr:`Rules.frame` for the ranked rules of one kind."""
    sid, rep, s, support, count, confidence = ranked
    columns = {}
    for j, col in enumerate(qi):
        used = np.array([j in sub for sub in subsets], dtype=bool)[sid]
        values = pd.Series(q_values[j].take(q_codes[j][rep]), copy=False)
        columns[col] = _with_na(values, used)
    columns["sa_value"] = pd.Series(s_values.take(s), copy=False)
    columns["support"] = support.astype(np.int64)
    columns["count"] = count.astype(np.int64)
    columns["confidence"] = confidence.astype(float)
    columns["kind"] = kind
    return pd.DataFrame(columns)


# ------------------------------------------------------------------------- Rules
class Rules:
    """A set of association rules ``Qv => s`` / ``Qv => not s`` with their confidences.

    ``frame`` has one column per quasi-identifier (the rule's value, NA when the rule
    does not fix that attribute), ``sa_value``, ``support`` (records with Qv),
    ``count`` (records with Qv and s), ``confidence`` (count / support = P(s | Qv)) and
    ``kind`` (``"positive"`` or ``"negative"``); row order is rank order within a kind.
    Usually made by :func:`mine_rules`.

    Adding a Rules object to a :class:`~maxent_privacy.MaxEntModel` adds every rule as
    the fact ``P(s | Qv) = confidence`` (a negative rule's confidence is that of ``s``,
    often 0), all in one vector constraint named ``"rules"`` (or the ``name`` given to
    ``model.add``); its i-th row, and dual ``"rules[i]"``, is the frame's i-th rule.

    >>> import pandas as pd
    >>> from maxent_privacy.rules import Rules
    >>> rules = Rules(pd.DataFrame({"gender": ["male"], "degree": [pd.NA],
    ...     "sa_value": ["Flu"], "support": [6], "count": [3], "confidence": [0.5],
    ...     "kind": ["positive"]}), qi=["gender", "degree"], sa="disease")
    >>> rules
    Rules(1 positive, 0 negative; sa='disease')
      gender=male => Flu  (confidence 0.5, count 3, support 6)
    """

    def __init__(self, frame: pd.DataFrame, qi: Sequence[str], sa: str, info: dict | None = None):
        if not isinstance(frame, pd.DataFrame):
            raise KnowledgeError(f"Rules needs a pandas DataFrame, got {type(frame).__name__}")
        qi = [qi] if isinstance(qi, str) else list(qi)
        missing = [c for c in qi + RULE_COLUMNS if c not in frame.columns]
        if missing:
            raise KnowledgeError(f"a rules frame needs the columns {missing}")
        kinds = set(frame["kind"].unique().tolist())
        if not kinds <= {"positive", "negative"}:
            bad = sorted(map(str, kinds - {"positive", "negative"}))
            raise KnowledgeError(f"rule kind must be 'positive' or 'negative', got {bad}")
        conf = frame["confidence"].to_numpy(dtype=float)
        bad = ~((conf >= 0) & (conf <= 1))
        if bad.any():
            i = int(np.argmax(bad))
            raise KnowledgeError(f"rule {i} has confidence {conf[i]!r}, not in [0, 1]")
        self._frame = frame[qi + RULE_COLUMNS].reset_index(drop=True)
        self.qi = qi
        self.sa = sa
        self.info = dict(info or {})

    # ----------------------------------------------------------------- views
    @property
    def frame(self) -> pd.DataFrame:
        """The rules, one row each (see the class docstring for the columns)."""
        return self._frame

    def __len__(self) -> int:
        return len(self._frame)

    def _subset(self, frame: pd.DataFrame) -> Rules:
        return Rules(frame, qi=self.qi, sa=self.sa, info=self.info)

    def _ranked(self, kind: str) -> pd.DataFrame:
        part = self._frame[self._frame["kind"] == kind]
        if kind == "positive":
            keys = [-part["confidence"].to_numpy(float), -part["count"].to_numpy(float)]
        else:
            keys = [part["confidence"].to_numpy(float), -part["support"].to_numpy(float)]
        return part.iloc[np.lexsort((np.arange(len(part)), keys[1], keys[0]))]

    def positive(self) -> Rules:
        """The positive rules ``Qv => s``, strongest (highest confidence) first."""
        return self._subset(self._ranked("positive"))

    def negative(self) -> Rules:
        """The negative rules ``Qv => not s``, strongest (lowest P(s | Qv)) first."""
        return self._subset(self._ranked("negative"))

    def top(self, k_pos: int, k_neg: int) -> Rules:
        """Top-(K+, K-): the ``k_pos`` strongest positive and ``k_neg`` strongest negative.

        Positives rank by confidence (ties: larger count), negatives by lowest confidence
        of ``s`` (ties: larger support); remaining ties keep the frame's order (that of
        :func:`mine_rules`). The result lists the positives first.

        >>> from maxent_privacy import datasets
        >>> from maxent_privacy.rules import mine_rules
        >>> rules = mine_rules(datasets.du2008_figure1(), ["gender", "degree"], "disease",
        ...                    attributes=1)
        >>> top = rules.top(1, 2)
        >>> top.frame["kind"].tolist(), top.frame["confidence"].tolist()
        (['positive', 'negative', 'negative'], [0.5, 0.0, 0.0])
        """
        for k, what in ((k_pos, "k_pos"), (k_neg, "k_neg")):
            if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)) or k < 0:
                raise KnowledgeError(f"{what} must be an integer >= 0, got {k!r}")
        pos = self._ranked("positive").iloc[: int(k_pos)]
        neg = self._ranked("negative").iloc[: int(k_neg)]
        return self._subset(pd.concat([pos, neg], ignore_index=True))

    def labels(self) -> list[str]:
        """One line of text per rule: ``"age=39, sex=Male => HS-grad"`` / ``"=> not ..."``."""
        out = []
        cols = self.qi
        for row in self._frame[cols + ["sa_value", "kind"]].itertuples(index=False):
            qv = ", ".join(
                f"{c}={v}" for c, v in zip(cols, row[:-2], strict=True) if not pd.isna(v)
            )
            arrow = "=>" if row[-1] == "positive" else "=> not"
            out.append(f"{qv or '(any)'} {arrow} {row[-2]}")
        return out

    def _label(self, i: int) -> str:
        return self._subset(self._frame.iloc[[i]]).labels()[0]

    def __repr__(self) -> str:
        kinds = self._frame["kind"]
        head = (
            f"Rules({int((kinds == 'positive').sum())} positive, "
            f"{int((kinds == 'negative').sum())} negative; sa={self.sa!r})"
        )
        shown = self._frame.head(5)
        lines = [head]
        for text, row in zip(
            self._subset(shown).labels(), shown.itertuples(index=False), strict=True
        ):
            lines.append(
                f"  {text}  (confidence {row.confidence:.4g}, count {row.count}, "
                f"support {row.support})"
            )
        if len(self) > len(shown):
            lines.append(f"  ... {len(self) - len(shown)} more")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        shown = self._frame.head(20).copy()
        shown.insert(0, "rule", self._subset(shown).labels())
        shown = shown[["rule", "kind", "support", "count", "confidence"]]
        more = f"<p>... {len(self) - len(shown)} more</p>" if len(self) > len(shown) else ""
        head = self.__repr__().splitlines()[0]
        return f"<p><b>{head}</b></p>" + shown.to_html(index=False) + more

    # ------------------------------------------------------------- compile
    def matrix(self, model) -> tuple[sp.csr_array, np.ndarray]:
        """``(A, b)``: rule k is ``A[k] @ model.x == b[k]``.

        ``A[k]`` is ``1 / n(Qv_k)`` on the cells whose QI values match ``Qv_k`` and whose
        sensitive value is ``s_k`` (n counted in the release), ``b[k]`` the rule's
        confidence: ``A[k] @ x`` is the linear form of ``model.P(s_k, **Qv_k)``. Built
        with array operations for all rules at once (one pass per attribute subset).
        """
        frame = self._frame
        K, n_cells = len(frame), model.n_cells
        if self.sa != model.sa:
            raise KnowledgeError(
                f"the rules are about {self.sa!r} but the model's sensitive attribute is "
                f"{model.sa!r}"
            )
        present = {c: frame[c].notna().to_numpy() for c in self.qi}
        used = [c for c in self.qi if present[c].any()]
        for c in used:
            if c not in model.qi:
                i = int(np.argmax(present[c]))
                raise KnowledgeError(
                    f"rule {i} ({self._label(i)}) fixes {c!r}, which is not a quasi-identifier "
                    f"of the release (its QI: {', '.join(model.qi)})"
                )
        classes = model.classes
        n_cls = len(classes)
        sa_index = pd.Index(pd.unique(model.cells[model.sa]))
        n_s = len(sa_index)
        rule_s = sa_index.get_indexer(frame["sa_value"])
        if (rule_s < 0).any():
            i = int(np.argmax(rule_s < 0))
            raise KnowledgeError(
                f"rule {i} ({self._label(i)}): sensitive value {frame['sa_value'].iloc[i]!r} "
                f"is not in the release's column {model.sa!r}"
            )
        cell_s = sa_index.get_indexer(model.cells[model.sa])
        # cell of (class, sensitive value), -1 when the class's bucket lacks the value
        lookup = np.full(n_cls * n_s, -1, dtype=np.int64)
        lookup[model.structure.cell_class * n_s + cell_s] = np.arange(n_cells)
        class_n = classes["n"].to_numpy(dtype=float)

        cls_codes, rule_codes, radix = {}, {}, {}
        for c in used:
            index = pd.Index(pd.unique(classes[c]))
            cls_codes[c] = index.get_indexer(classes[c]).astype(np.int64)
            codes = np.full(K, -1, dtype=np.int64)
            codes[present[c]] = index.get_indexer(frame.loc[present[c], c])
            rule_codes[c] = codes
            radix[c] = len(index)
            unknown = present[c] & (codes < 0)
            if unknown.any():
                i = int(np.argmax(unknown))
                raise KnowledgeError(
                    f"rule {i} ({self._label(i)}) matches no record of the release: "
                    f"{c}={frame[c].iloc[i]!r} does not occur"
                )

        pattern = np.zeros(K, dtype=np.int64)
        for j, c in enumerate(used):
            pattern |= present[c].astype(np.int64) << j
        rows_out, cols_out = [], []
        n_q = np.zeros(K)
        for p in np.unique(pattern):
            rows = np.flatnonzero(pattern == p)
            cols = [c for j, c in enumerate(used) if p >> j & 1]
            both = [np.concatenate([cls_codes[c], rule_codes[c][rows]]) for c in cols]
            key, _ = _mixed_radix(both, [radix[c] for c in cols])
            ckey, rkey = key[:n_cls], key[n_cls:]
            order = np.argsort(ckey, kind="stable")
            sorted_keys = ckey[order]
            lo = np.searchsorted(sorted_keys, rkey, side="left")
            hi = np.searchsorted(sorted_keys, rkey, side="right")
            length = hi - lo
            # (rule, class) pairs
            pair_rule = np.repeat(np.arange(len(rows)), length)
            offset = np.arange(len(pair_rule)) - np.repeat(np.cumsum(length) - length, length)
            pair_cls = order[np.repeat(lo, length) + offset]
            n_q[rows] = np.bincount(pair_rule, weights=class_n[pair_cls], minlength=len(rows))
            cell = lookup[pair_cls * n_s + rule_s[rows][pair_rule]]
            keep = cell >= 0
            rows_out.append(rows[pair_rule[keep]])
            cols_out.append(cell[keep])
        if (n_q == 0).any():
            i = int(np.argmax(n_q == 0))
            raise KnowledgeError(
                f"rule {i} ({self._label(i)}) matches no record of the release; "
                "P(. | that) is undefined"
            )
        r = np.concatenate(rows_out) if rows_out else np.zeros(0, dtype=np.int64)
        c = np.concatenate(cols_out) if cols_out else np.zeros(0, dtype=np.int64)
        A = sp.csr_array((1.0 / n_q[r], (r, c)), shape=(K, n_cells))
        A.sort_indices()
        b = frame["confidence"].to_numpy(dtype=float)
        return A, b

    def _maxent_facts_(self, model, name: str | None = None) -> list[tuple[str, cp.Constraint]]:
        """``[(name, A @ model.x == b)]``: every rule as ``P(s | Qv) == confidence``.

        Called by ``model.add(rules)``; the fact is named ``name`` or ``"rules"``. No
        rules, no fact. See :meth:`matrix` for ``A`` and ``b``.
        """
        if len(self) == 0:
            return []
        A, b = self.matrix(model)
        # tagged with its rows: compiled without cvxpy's gradient
        constraint = tag(A @ model.x, "rules", A) == b
        # rules of the same Qv share the denominator n(Qv): presolve adds them up
        cols = [c for c in self.qi if c in self._frame]
        by_qv = self._frame.groupby(cols, dropna=False, sort=False, observed=True)
        groups = by_qv.ngroup().to_numpy()
        return [("rules" if name is None else str(name), Grouped(constraint, groups))]
