"""The report's scale of adversaries (``report --adversary learned``): how many people each
adversary puts at risk on the same release, counted by the report's own rule (the
likeliest value that is not declared non-sensitive, rounded as the risk table rounds).

* maximum entropy from the releases alone (when the report states knowledge);
* maximum entropy with the stated knowledge (the report's own estimate);
* each adversary asked for, from the registry
  (:data:`~maxent_privacy.adversaries.ADVERSARY_REGISTRY`): the learned adversary (Kifer's
  deFinetti attack, :func:`~maxent_privacy.adversaries.definetti.definetti`), with the same
  knowledge, or any registered one (its ``upper`` reading);
* the worst case (each person's certified upper bound, when the page has intervals).

>>> import pandas as pd
>>> from maxent_privacy import Bucketized, MaxEntModel
>>> rows = pd.DataFrame({"sex": list("FFM" "FM" "FMM"), "g": [1, 1, 1, 2, 2, 3, 3, 3],
...                      "s": ["flu", "flu", "hiv", "flu", "hiv", "flu", "hiv", "hiv"]})
>>> result = MaxEntModel(Bucketized(rows, qi=["sex"], sa="s", group="g")).solve()
>>> [(r["adversary"], r["at_risk"]) for r in adversary_scale(result, 0.6)]  # buckets outvote
[('maximum entropy', 6), ('learned (deFinetti)', 4)]
"""

from __future__ import annotations

from .._validation import reaches
from ..adversaries.registry import adversary_names, assessment, get_adversary, reportable
from .risk import risk_summary, risk_table

__all__ = ["adversary_choices", "adversary_scale", "scale_adversaries"]

#: the report's words for the package's own adversaries (others: their description)
WORDS = {
    "learned": (
        "learned (deFinetti)",
        "learns how the quasi-identifiers go with the sensitive value from the release "
        "itself (Kifer 2009), with the same knowledge",
    ),
    "worst": (
        "worst case",
        "some table the release allows gives the person's likeliest value this probability "
        "(each person's certified upper bound)",
    ),
}
#: on the page already (the report's own estimate, and the releases alone beside it)
SHOWN = ("maxent", "knowledge")


def adversary_choices() -> list[str]:
    """What ``report --adversary`` takes: ``maxent`` (the report's estimate alone) or an
    adversary of the registry to put on the scale beside it."""
    return adversary_names(where=reportable)


def __getattr__(name: str):
    if name == "ADVERSARY_CHOICES":  # the old constant: the registry's names now
        return tuple(adversary_choices())
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def scale_adversaries(adversary) -> list:
    """``adversary`` (a name, an Adversary or several) as the adversaries of the scale:
    [] for ``"maxent"`` alone (no scale)."""
    items = (
        [adversary]
        if isinstance(adversary, str) or not hasattr(adversary, "__iter__")
        else (list(adversary))
    )
    chosen = [get_adversary(a, where=reportable) for a in items]
    return [a for a in dict.fromkeys(chosen) if a.name not in SHOWN]


def _at_risk(result, threshold: float, nonsensitive) -> int:
    table = risk_table(result, threshold, csv_safe=False, nonsensitive=nonsensitive, bounds="none")
    return int(risk_summary(result, threshold, table)["people_at_risk"])


def _assessed_at_risk(adversary, model, threshold: float, nonsensitive) -> int:
    """People whose likeliest sensitive value (``upper``, rounded as the risk table rounds)
    reaches ``threshold`` by a registered adversary without a Result."""
    from .likeliest import rounded

    frame = assessment(adversary, model, by="person")["upper"].unstack()
    keep = [v for v in frame.columns if v not in set(nonsensitive)]
    if not keep:
        return 0
    top = rounded(frame[keep].to_numpy(dtype=float).max(axis=1))
    return int(reaches(top, threshold).sum())


def adversary_scale(
    result,
    threshold: float,
    nonsensitive=(),
    worst_case: int | None = None,
    learner="naive_bayes",
    adversaries=("learned",),
) -> list[dict]:
    """One row per adversary: ``adversary``, ``words`` (what it assumes) and ``at_risk``
    (people at or over ``threshold``). ``adversaries``: the registered ones to put beside
    maximum entropy (default: the learned one); ``worst_case`` (the page's own count) adds
    the worst case's row."""
    from ..adversaries.builtin import without_facts

    model = result.model
    rows = []
    if model.facts:  # the releases alone beside the report's own estimate
        rows.append(
            {
                "adversary": "maximum entropy, releases alone",
                "words": "knows the releases only and commits to nothing else",
                "at_risk": _at_risk(without_facts(model).solve(), threshold, nonsensitive),
            }
        )
    rows.append(
        {
            "adversary": "maximum entropy",
            "words": "this report's estimate: the releases and the stated knowledge",
            "at_risk": _at_risk(result, threshold, nonsensitive),
        }
    )
    chosen = scale_adversaries(adversaries)
    for adv in chosen:
        label, words = WORDS.get(adv.name, (adv.name, adv.description))
        if adv.name == "worst":
            continue  # the page's own count, last
        if hasattr(adv, "estimate"):  # a Result: counted by the risk table's own rule
            at = _at_risk(adv.estimate(model, learner=learner), threshold, nonsensitive)
        else:
            at = _assessed_at_risk(adv, model, threshold, nonsensitive)
        rows.append({"adversary": label, "words": words, "at_risk": at})
    if worst_case is not None:
        label, words = WORDS["worst"]
        rows.append({"adversary": label, "words": words, "at_risk": int(worst_case)})
    return rows
