"""The report's scale of adversaries (``report --adversary learned``): how many people each
adversary puts at risk on the same release, counted by the report's own rule (the
likeliest value that is not declared non-sensitive, rounded as the risk table rounds).

* maximum entropy from the releases alone (when the report states knowledge);
* maximum entropy with the stated knowledge (the report's own estimate);
* the learned adversary (Kifer's deFinetti attack,
  :func:`~maxent_privacy.adversaries.definetti.definetti`), with the same knowledge;
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

from .risk import risk_summary, risk_table

__all__ = ["ADVERSARY_CHOICES", "adversary_scale"]

#: what ``report --adversary`` takes: the report's estimate alone, or the scale
ADVERSARY_CHOICES = ("maxent", "learned")


def _at_risk(result, threshold: float, nonsensitive) -> int:
    table = risk_table(result, threshold, csv_safe=False, nonsensitive=nonsensitive, bounds="none")
    return int(risk_summary(result, threshold, table)["people_at_risk"])


def adversary_scale(
    result, threshold: float, nonsensitive=(), worst_case: int | None = None, learner="naive_bayes"
) -> list[dict]:
    """One row per adversary: ``adversary``, ``words`` (what it assumes) and ``at_risk``
    (people at or over ``threshold``); ``worst_case`` (the page's own count) adds the
    last row."""
    from ..adversaries.compare import without_facts
    from ..adversaries.definetti import definetti

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
    rows.append(
        {
            "adversary": "learned (deFinetti)",
            "words": "learns how the quasi-identifiers go with the sensitive value from the "
            "release itself (Kifer 2009), with the same knowledge",
            "at_risk": _at_risk(definetti(model, learner=learner), threshold, nonsensitive),
        }
    )
    if worst_case is not None:
        rows.append(
            {
                "adversary": "worst case",
                "words": "some table the release allows gives the person's likeliest value "
                "this probability (each person's certified upper bound)",
                "at_risk": int(worst_case),
            }
        )
    return rows
