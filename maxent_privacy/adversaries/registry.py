"""The adversary contract and its registry: one object per adversary, one registration.

An adversary says, per person (or record class) and sensitive value, how sure it can be
that the person holds the value: :meth:`Adversary.assess` returns a DataFrame indexed by
(``person`` or ``class``, the sensitive column) with columns ``lower`` and ``upper``. A
point estimate (maximum entropy, the learned adversary) has ``lower == upper``; an interval
adversary (the LP bounds, the possible worlds) fills both. ``register`` puts one in
:data:`ADVERSARY_REGISTRY`, and from then on it is everywhere an adversary is taken:
:func:`~maxent_privacy.adversaries.compare.compare_adversaries` (a column of its table and a
row of its summary), :func:`~maxent_privacy.anonymize.plan_release` (``adversary=``), the
report's scale of adversaries and the command line's ``--adversary``.

The rows an adversary answers for are :func:`rows`: ``by="person"``, one per person of
the releases (their person ids; a release without ids: its records' row labels) and
value; ``by="class"``, one per record class (its position in ``model.classes``) and value.
People of one class are interchangeable (nothing published tells them apart), so an
adversary of the releases gives them the same numbers.

A toy adversary, 0.5 for everyone and every value, in a few lines:

>>> import pandas as pd
>>> from maxent_privacy import Bucketized, MaxEntModel, datasets
>>> from maxent_privacy.adversaries import Adversary, register, rows, unregister
>>> class Half(Adversary):
...     name, description = "half", "0.5 for every person and value"
...     def assess(self, model, by="person", **options):
...         return pd.DataFrame({"lower": 0.5, "upper": 0.5}, index=rows(model, by))
>>> _ = register(Half())
>>> model = MaxEntModel(Bucketized(datasets.du2008_figure1(), qi=["gender", "degree"],
...                                sa="disease", group="bucket"))
>>> assessment("half", model, by="class")["upper"].unique().tolist()
[0.5]
>>> unregister("half")

Nothing heavy is imported here (the command line's ``--help`` lists the registry's names).
"""

from __future__ import annotations

__all__ = [
    "ADVERSARY_REGISTRY",
    "Adversary",
    "AdversaryError",
    "adversary_names",
    "assessment",
    "check_assessment",
    "get_adversary",
    "plannable",
    "register",
    "reportable",
    "rows",
    "unregister",
]

from ..errors import MaxEntError

#: name -> the registered adversary (aliases are in :data:`ALIASES`)
ADVERSARY_REGISTRY: dict = {}
#: an old or other name -> the registered name it stands for
ALIASES: dict[str, str] = {}
#: a probability this far outside [0, 1], or a lower this far above its upper, is tolerated
SLACK = 1e-6


class AdversaryError(MaxEntError, ValueError):
    """An adversary is unknown, or returned an assessment that breaks the contract."""


class Adversary:
    """What every adversary is: a name, a description and :meth:`assess`.

    Attributes
    ----------
    name : str
        Its one name (``adversary="..."``, ``--adversary ...``).
    description : str
        What it assumes, in a line (the report's scale and ``--help`` show it).
    interval : bool
        False for a point estimate (``lower == upper``), True for bounds.
    columns : tuple of str or None
        Its columns in a comparison: by default ``(name,)`` for a point estimate and
        ``(name + "_lower", name + "_upper")`` for an interval.
    requires_truth : bool
        Whether it needs the original table (``assess(..., truth=...)``).
    tier : "estimate", "bounds" or "exact"
        What a comparison needs to run it: always, unless ``bounds="none"``, or only with
        ``exact=True``.
    honours_time_limit : bool
        Whether ``assess(..., time_limit=s)`` stops after ``s`` seconds and marks what it
        did not prove.
    local : bool
        Whether its answer for the people of one connected component of the releases
        depends on that component alone (the planner then re-checks only what a repair
        touched).
    plans : bool
        Whether the release planner can check a release against it.
    aliases : tuple of str
        Other names it answers to.
    """

    name: str = ""
    description: str = ""
    interval: bool = False
    columns: tuple | None = None
    requires_truth: bool = False
    tier: str = "estimate"
    honours_time_limit: bool = False
    local: bool = False
    plans: bool = True
    aliases: tuple = ()

    def assess(self, model, by: str = "person", **options):
        """The adversary's ``lower`` and ``upper`` per (person or class, value): a DataFrame
        indexed by :func:`rows` ``(model, by)``."""
        raise NotImplementedError(f"adversary {self.name!r} has no assess()")

    def applies(self, model) -> bool:
        """Whether it says anything beyond the others on ``model`` (the knowledge adversary
        does not without facts)."""
        return True

    def column_names(self) -> tuple:
        if self.columns is not None:
            return tuple(self.columns)
        return (self.name,) if not self.interval else (f"{self.name}_lower", f"{self.name}_upper")

    def per_class(self, model, values, by: str, options: dict, memo: dict) -> dict:
        """Its numbers as arrays [class, value], one per :meth:`column_names` (a point
        estimate: one array). The default reads :meth:`assess`; the package's own
        adversaries compute the arrays directly. ``memo`` is shared by the adversaries of
        one comparison (a solve or bounds frame two of them need)."""
        import numpy as np

        frame = assessment(self, model, by=by, **options)
        people = class_of(model) if by == "person" else None
        k = len(model.classes)
        if people is not None:  # one person per class stands for it
            first = people.groupby(people.to_numpy()).head(1)
            keys = np.full(k, None, dtype=object)
            keys[first.to_numpy()] = first.index.to_numpy(dtype=object)
        else:
            keys = np.arange(k, dtype=object)
        have = [i for i in range(k) if keys[i] is not None]
        out = {}
        for column, src in zip(self.column_names(), ("lower", "upper")[-len(self.column_names()):],
                               strict=True):  # fmt: skip
            grid = frame[src].unstack().reindex(columns=list(values))
            arr = np.zeros((k, len(values)))
            arr[have] = grid.reindex([keys[i] for i in have]).fillna(0.0).to_numpy(float)
            out[column] = arr
        return out

    def __repr__(self) -> str:
        return f"<adversary {self.name!r}: {self.description}>"


def register(adversary: Adversary, *, replace: bool = False) -> Adversary:
    """Put ``adversary`` in the registry under its name (and its aliases); returns it.

    A name already taken is an error unless ``replace``.
    """
    if not isinstance(adversary, Adversary):
        raise AdversaryError(
            f"register takes an Adversary (a subclass instance), got {type(adversary).__name__}"
        )
    name = adversary.name
    if not isinstance(name, str) or not name.strip() or name != name.strip():
        raise AdversaryError(f"an adversary's name must be a non-empty word, got {name!r}")
    if not isinstance(adversary.description, str) or not adversary.description:
        raise AdversaryError(f"adversary {name!r} has no description")
    if adversary.tier not in ("estimate", "bounds", "exact"):
        raise AdversaryError(
            f"adversary {name!r}: tier must be 'estimate', 'bounds' or 'exact', got "
            f"{adversary.tier!r}"
        )
    taken = [n for n in (name, *adversary.aliases) if n in ADVERSARY_REGISTRY or n in ALIASES]
    if taken and not replace:
        raise AdversaryError(
            f"adversary name {taken[0]!r} is taken; give another name or replace=True"
        )
    if replace:
        unregister(name, missing_ok=True)
    ADVERSARY_REGISTRY[name] = adversary
    for alias in adversary.aliases:
        ALIASES[alias] = name
    return adversary


def unregister(name: str, *, missing_ok: bool = False) -> None:
    """Take the adversary called ``name`` (and its aliases) out of the registry."""
    if name not in ADVERSARY_REGISTRY:
        if missing_ok:
            return
        raise AdversaryError(f"no adversary {name!r} is registered")
    adversary = ADVERSARY_REGISTRY.pop(name)
    for alias in adversary.aliases:
        ALIASES.pop(alias, None)


def adversary_names(*, aliases: bool = False, where=None) -> list[str]:
    """The registered names, in registration order (with ``aliases``, theirs too);
    ``where``: a test of the adversary."""
    out = []
    for name, adv in ADVERSARY_REGISTRY.items():
        if where is None or where(adv):
            out.append(name)
            if aliases:
                out += list(adv.aliases)
    return out


def get_adversary(adversary, where=None, what: str = "adversary") -> Adversary:
    """The registered adversary called ``adversary`` (a name or alias), or the adversary
    itself; ``where``: a test it must pass (the names that pass are listed otherwise)."""
    from .._validation import listed

    if isinstance(adversary, Adversary):
        found = adversary
    elif isinstance(adversary, str) and adversary in ADVERSARY_REGISTRY:
        found = ADVERSARY_REGISTRY[adversary]
    elif isinstance(adversary, str) and adversary in ALIASES:
        found = ADVERSARY_REGISTRY[ALIASES[adversary]]
    else:
        found = None
    if found is None or (where is not None and not where(found)):
        from .._validation import ArgumentError, shown

        names = adversary_names(aliases=True, where=where)
        raise ArgumentError(f"{what} must be {listed(names)}, got {shown(adversary)}")
    return found


def plannable(adversary: Adversary) -> bool:
    """Whether the release planner can check a release against ``adversary``."""
    return adversary.plans and not adversary.requires_truth


def reportable(adversary: Adversary) -> bool:
    """Whether the report's scale of adversaries can show ``adversary`` (a count of people
    at risk from its ``upper`` reading, without the original table)."""
    return not adversary.requires_truth and adversary.tier != "exact"


# ------------------------------------------------------------------ the rows
def class_of(model):
    """Person (id; a release without ids: a record's row label) -> record class, a Series
    (classes of counterfeit records have no person)."""
    import numpy as np
    import pandas as pd

    pc = model.structure.person_class
    if pc is not None:
        return pd.Series(np.asarray(pc, dtype=np.int64), index=pc.index, name="class")
    records = model.structure.records
    keys = list(model.qi) + [model.group]
    index = pd.MultiIndex.from_frame(model.classes[keys])
    cls = index.get_indexer(pd.MultiIndex.from_frame(records[keys]))
    if (cls < 0).any():
        from ..errors import ReleaseError

        raise ReleaseError("a record of the release is in no record class")
    return pd.Series(cls, index=records.index, name="class")


def values_of(model) -> list:
    """The sensitive values the releases publish, sorted by their text."""
    import numpy as np

    cells = model.cells
    return sorted(np.unique(cells[model.sa].to_numpy(dtype=object)).tolist(), key=str)


def rows(model, by: str = "person"):
    """The index an assessment of ``model`` has: (``person``, value) or (``class``,
    value), every person (or class) with every sensitive value."""
    import pandas as pd

    from .._validation import check_choice

    check_choice(by, "by", ("person", "class"))
    values = pd.Index(values_of(model), name=model.sa)
    if by == "person":
        keys = class_of(model).index.rename("person")
    else:
        keys = pd.RangeIndex(len(model.classes), name="class")
    return pd.MultiIndex.from_product([keys, values])


def check_assessment(adversary: Adversary, frame, model, by: str):
    """``frame`` as the contract wants it (its rows in :func:`rows` order, ``lower`` and
    ``upper`` floats), or an :class:`AdversaryError` naming the adversary and the fault."""
    import numpy as np
    import pandas as pd

    who = f"adversary {adversary.name!r}"
    if not isinstance(frame, pd.DataFrame):
        raise AdversaryError(f"{who} returned a {type(frame).__name__}, not a DataFrame")
    missing = [c for c in ("lower", "upper") if c not in frame.columns]
    if missing:
        raise AdversaryError(f"{who} returned no column {missing[0]!r} (it needs lower, upper)")
    want = rows(model, by)
    if frame.index.nlevels != 2:
        raise AdversaryError(
            f"{who} returned rows indexed by {frame.index.nlevels} level(s); it must be "
            f"({want.names[0]}, {want.names[1]})"
        )
    if frame.index.has_duplicates:
        raise AdversaryError(f"{who} returned a row twice, such as {frame.index[0]!r}")
    extra = frame.index.difference(want)
    if len(extra):
        raise AdversaryError(f"{who} returned a row no one has: {extra[0]!r}")
    lost = want.difference(frame.index)
    if len(lost):
        raise AdversaryError(f"{who} returned no row for {lost[0]!r}")
    out = frame.reindex(want)
    try:
        lo = out["lower"].to_numpy(dtype=float)
        hi = out["upper"].to_numpy(dtype=float)
    except (TypeError, ValueError):
        raise AdversaryError(f"{who} returned lower/upper that are not numbers") from None
    bad = ~np.isfinite(lo) | ~np.isfinite(hi) | (lo < -SLACK) | (hi > 1 + SLACK)
    bad |= lo > hi + SLACK
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise AdversaryError(
            f"{who} returned lower={float(lo[i])}, upper={float(hi[i])} for {want[i]!r}; each "
            "must be a probability in [0, 1] with lower <= upper"
        )
    out = pd.DataFrame({"lower": np.clip(lo, 0, 1), "upper": np.clip(hi, 0, 1)}, index=want)
    return out


def assessment(adversary, model, by: str = "person", **options):
    """``adversary`` (a name or an Adversary) assessed on ``model``, checked by
    :func:`check_assessment`."""
    adv = get_adversary(adversary)
    return check_assessment(adv, adv.assess(model, by=by, **options), model, by)
