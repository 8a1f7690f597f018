"""The package's own adversaries, registered once (:mod:`.registry`):

* ``maxent``: maximum entropy from the releases alone (the model's facts dropped);
* ``knowledge``: maximum entropy with the model's facts (what the adversary is stated
  to know); says nothing beyond ``maxent`` on a model without facts;
* ``learned`` (alias ``definetti``): Kifer's deFinetti adversary, which learns the QI ->
  sensitive value correlation from the release itself (:mod:`.definetti`);
* ``worst`` (aliases ``lp``, ``upper``, ``lower``, ``bounds``): the LP bounds over every
  table the model allows (:meth:`MaxEntModel.bounds`), certified;
* ``worlds`` (aliases ``possible``, ``certain``, ``exact``): the lowest and highest value
  over possible worlds (integral tables), by integer programs.

The point estimates also give their :class:`~maxent_privacy.results.Result`
(:meth:`Estimate.estimate`), which a comparison keeps and scores.

>>> from maxent_privacy.adversaries import adversary_names
>>> adversary_names()[:5]
['maxent', 'knowledge', 'learned', 'worst', 'worlds']
"""

from __future__ import annotations

from .registry import ADVERSARY_REGISTRY, Adversary, class_of, register, rows, values_of

__all__ = ["Estimate", "Knowledge", "Learned", "MaxEnt", "Worlds", "Worst", "without_facts"]


def without_facts(model):
    """A model of the same releases (and populations), without facts: the same classes
    and cells in the same order."""
    from ..errors import ReleaseError

    twin = type(model)(model.releases, populations=model.populations)
    if twin.n_cells != model.n_cells or len(twin.classes) != len(model.classes):
        raise ReleaseError("the model could not be rebuilt from its releases")
    return twin


def class_estimate(result, values):
    """P[c, s]: the share of class c that holds s, by ``result``."""
    import numpy as np

    from .projection import expected_table

    n = np.asarray(result.structure.class_n, dtype=float)[:, None]
    return expected_table(result, values) / n


def frame_of(model, by: str, lower, upper=None):
    """A contract frame from per-class arrays [class, value] (``upper`` defaults to
    ``lower``: a point estimate)."""
    import numpy as np
    import pandas as pd

    upper = lower if upper is None else upper
    index = rows(model, by)
    pick = class_of(model).to_numpy() if by == "person" else np.arange(len(model.classes))
    return pd.DataFrame(
        {"lower": np.asarray(lower)[pick].ravel(), "upper": np.asarray(upper)[pick].ravel()},
        index=index,
    )


class Estimate(Adversary):
    """A point estimate that is a :class:`~maxent_privacy.results.Result`: subclasses give
    :meth:`estimate`; ``lower == upper``."""

    def estimate(self, model, **options):
        raise NotImplementedError

    def _result(self, model, options: dict, memo: dict):
        key = ("result", self.name)
        if key not in memo:
            memo[key] = self.estimate(model, **options)
        return memo[key]

    def per_class(self, model, values, by, options, memo) -> dict:
        result = self._result(model, options, memo)
        return {self.column_names()[0]: class_estimate(result, values)}

    def assess(self, model, by="person", **options):
        table = class_estimate(self.estimate(model, **options), values_of(model))
        return frame_of(model, by, table)


def _solver(options: dict):
    return options.get("solver")


class MaxEnt(Estimate):
    name = "maxent"
    description = "maximum entropy, the releases alone"
    local = True

    def estimate(self, model, **options):
        base = without_facts(model) if model.facts else model
        return base.solve(solver=_solver(options))


class Knowledge(Estimate):
    name = "knowledge"
    description = "maximum entropy with the stated knowledge"
    local = True

    def applies(self, model) -> bool:
        return bool(model.facts)

    def estimate(self, model, **options):
        return model.solve(solver=_solver(options))


class Learned(Estimate):
    name = "learned"
    description = "deFinetti: learned from the release"
    aliases = ("definetti",)

    def estimate(self, model, **options):
        from .definetti import definetti

        keys = ("learner", "max_iter", "tol", "seed", "solver", "progress")
        return definetti(model, **{k: options[k] for k in keys if k in options})


def _grid(frame, column, keys, values):
    """``frame[column]`` (indexed by (key..., value)) as a [len(keys), len(values)] array,
    0 where the frame has no row."""
    import numpy as np
    import pandas as pd

    levels = (
        [keys.get_level_values(i) for i in range(keys.nlevels)]
        if isinstance(keys, pd.MultiIndex)
        else [pd.Index(keys)]
    )
    nv = len(values)
    arrays = [level.repeat(nv) for level in levels]
    arrays.append(pd.Index(values).take(np.tile(np.arange(nv), len(keys))))
    full = pd.MultiIndex.from_arrays(arrays, names=list(frame.index.names))
    col = frame[column].astype(float)
    return col.reindex(full).fillna(0.0).to_numpy().reshape(len(keys), nv)


_BOUNDS_OPTIONS = ("time_limit", "solver", "seed", "progress")


def _bounds_options(options: dict) -> dict:
    out = {k: options[k] for k in _BOUNDS_OPTIONS if k in options and options[k] is not None}
    out.update(options.get("bounds_options") or {})
    return out


def class_bounds(model, by, values, exact, options) -> dict:
    """Per class and value: ``lower``, ``upper`` (and ``certain``, ``possible``), of the
    person's own probability (``by="person"``) or of the class's share (``"class"``)."""
    import numpy as np
    import pandas as pd

    n = np.asarray(model.structure.class_n, dtype=float)[:, None]
    pc = model.structure.person_class
    if pc is not None:  # people known: the library's own rows, one person per class
        frame = model.bounds(by=by, exact=exact, **options)
        first = pd.Series(pc.index, index=np.asarray(pc, dtype=np.int64))
        first = first.groupby(level=0).first()
        reps = first.reindex(np.arange(len(n))).to_numpy()
        out = {}
        for col in ("lower", "upper"):
            out[col] = _grid(frame, ("lp_" + col) if exact else col, reps, values)
        if exact:
            out["certain"] = _grid(frame, "lower", reps, values)
            out["possible"] = _grid(frame, "upper", reps, values)
        return out
    # one release without people: a class is a (QI value, group) row
    from ..bounds.frame import person_bounds

    frame = model.bounds(by="group", exact=exact, **options)
    keys = pd.MultiIndex.from_frame(model.classes[list(model.qi) + [model.group]])

    def share(col):
        return _grid(frame, col, keys, values)

    lo, hi = (share("lp_lower"), share("lp_upper")) if exact else (share("lower"), share("upper"))
    if by == "class":
        out = {"lower": lo, "upper": hi}
        if exact:
            out["certain"], out["possible"] = share("lower"), share("upper")
        return out
    lower, upper = person_bounds(lo * n, hi * n, n)  # an individual of the class
    out = {"lower": lower, "upper": upper}
    if exact:
        lo_x = _grid(frame, "lower_exact", keys, values).astype(bool)
        hi_x = _grid(frame, "upper_exact", keys, values).astype(bool)
        out["certain"] = np.where(lo_x, (share("lower") * n >= n - 0.5).astype(float), lower)
        out["possible"] = np.where(hi_x, (share("upper") * n >= 0.5).astype(float), upper)
    return out


def _memo_bounds(model, by, values, options, memo, exact: bool) -> dict:
    """The bounds arrays of one comparison, computed once: with ``exact`` (or when the
    comparison also runs the possible worlds) one exact call gives both readings."""
    exact = exact or bool(options.get("exact"))
    key = ("bounds", by, exact)
    if key not in memo:
        memo[key] = class_bounds(model, by, values, exact, _bounds_options(options))
    return memo[key]


class _Bounds(Adversary):
    """An interval adversary read off :meth:`MaxEntModel.bounds`: its two columns are the
    arrays ``columns`` of :func:`class_bounds` (the LP's, or with ``exact`` the possible
    worlds')."""

    interval = True
    honours_time_limit = True
    exact = False

    def per_class(self, model, values, by, options, memo) -> dict:
        got = _memo_bounds(model, by, values, options, memo, exact=self.exact)
        return {name: got[name] for name in self.columns}

    def assess(self, model, by="person", **options):
        got = _memo_bounds(model, by, values_of(model), options, {}, exact=self.exact)
        return frame_of(model, by, *(got[name] for name in self.columns))


class Worst(_Bounds):
    name = "worst"
    description = "LP bounds over every table the releases allow (worst case)"
    columns = ("lower", "upper")
    tier = "bounds"
    local = True
    aliases = ("lp", "upper", "lower", "bounds")


class Worlds(_Bounds):
    name = "worlds"
    description = "possible worlds: lowest and highest over integral tables"
    columns = ("certain", "possible")
    tier = "exact"
    exact = True
    plans = False  # the planner checks possible worlds itself
    aliases = ("possible", "certain", "exact")


for _adversary in (MaxEnt(), Knowledge(), Learned(), Worst(), Worlds()):
    if _adversary.name not in ADVERSARY_REGISTRY:  # once, even on reload
        register(_adversary)
