"""What a publisher needs to act, for the HTML report: ties, non-sensitive values, the
worst case explained (certain vs possible), identity risk, how the intervals were
found, which facts matter and, for pooled releases, what each release gives alone.

Everything here is counted off the risk table (its rounding: 4 decimals) or by
:mod:`~maxent_privacy.report.facts_impact`; :func:`act_context` returns the template's
``act`` dict.
"""

from __future__ import annotations

import numpy as np

from .facts_impact import facts_impact, releases_alone
from .identity import kind_of_identity_risk

__all__ = ["act_context", "worst_case_sentence"]


def worst_case_sentence(threshold: float) -> str:
    """The worst-case card's one sentence."""
    return (
        "In the worst case, some table consistent with the release and the knowledge gives "
        f"each of these people their likeliest value with probability {threshold:g} or more "
        "(in a bucketized release any person of a group may be the one who holds each of "
        "its values, so this often counts everyone)."
    )


def act_context(result, table, threshold: float, summary: dict, facts: bool = True) -> dict:
    """The ``act`` part of the report's template (see the module docstring)."""
    grouped = "records" in table and not summary.get("per_person", True)
    weight = table["records"].to_numpy(dtype=float) if grouped else np.ones(len(table), dtype=float)
    at = table["at_risk"].to_numpy(dtype=bool)
    out: dict = {
        "nonsensitive": [str(v) for v in table.attrs.get("nonsensitive", ())],
        "threshold": f"{threshold:g}",
    }
    if "tied" in table:
        tied = table["tied"].to_numpy(dtype=bool)
        out["tied"] = int(weight[tied].sum())
        out["tied_at_risk"] = int(weight[tied & at].sum())
    info = table.attrs.get("bounds")
    out["bounds_note"] = info.get("note") if info else None
    if "upper" in table:
        lower = table["lower"].to_numpy(dtype=float)
        upper = table["upper"].to_numpy(dtype=float)
        out["worst"] = {
            "sentence": worst_case_sentence(threshold),
            "certain": int(weight[lower >= 1.0].sum()),
            "possible": int(weight[(upper >= 1.0) & (lower < 1.0)].sum()),  # not certain
            "relaxed": bool(result.model.pooled),
        }
    if "identity" in table and table["identity"].notna().any():
        ident = np.nan_to_num(table["identity"].to_numpy(dtype=float), nan=0.0)
        people = float(weight.sum()) or 1.0
        out["identity"] = {
            "kind": kind_of_identity_risk(result.model),
            "unique": int(weight[ident >= 1.0].sum()),
            "half": int(weight[ident >= 0.5].sum()),
            "mean": f"{float((weight * ident).sum()) / people:.3f}",
        }
    skip = table.attrs.get("nonsensitive", ())
    out["facts"] = facts_impact(result, threshold, skip) if facts else []
    out["facts_left_out"] = len(result.model.facts) - len(out["facts"]) if facts else 0
    out["releases"] = releases_alone(result, threshold, skip)
    out["pooled_at_risk"] = summary.get("people_at_risk")
    return out
