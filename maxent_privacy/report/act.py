"""What a publisher needs to act, for the HTML report: ties, non-sensitive values, the
worst case explained (certain vs possible), identity risk with k and l, how the
intervals were found, which facts matter, for pooled releases what each release gives
alone, and what to do: the groups whose members are certain or most exposed and the fact
that puts the most people at risk.

Everything here is counted off the risk table (its rounding: 4 decimals), the releases
themselves or by :mod:`~maxent_privacy.report.facts_impact`; :func:`act_context` returns
the template's ``act`` dict.

>>> from maxent_privacy import Bucketized, MaxEntModel, datasets
>>> release = Bucketized(datasets.du2008_figure1(), qi=["gender", "degree"],
...                      sa="disease", group="bucket", person="name")
>>> model = MaxEntModel(release)
>>> model.add(model.P("Breast Cancer", gender="male") == 0)
>>> result = model.solve()
>>> top = exposed_groups(result, result.risk_table(0.99))[0][0]
>>> top["group"], top["size"], top["certain"], top["cells"]
('2', 3, 1, 'gender female/male; degree college/high school/junior')
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
from markupsafe import Markup, escape

from .facts_impact import facts_impact, releases_alone
from .identity import k_and_l, kind_of_identity_risk

__all__ = ["EXPOSED", "act_context", "exposed_groups", "worst_case_sentence"]

#: groups listed in "what to do" (the most exposed first)
EXPOSED = 10
#: distinct cells of a column shown for a group before "N values"
_CELLS = 3


def _kind_words(model) -> tuple[str, str]:
    """``(what the release is, what a group is)`` in the worst-case card's words."""
    kinds = {type(r).__name__ for r in model.releases}
    several = len(model.releases) > 1
    if kinds == {"Bucketized"}:
        what = "pooled bucketized releases" if several else "a bucketized release"
        return what, "a bucket"
    what = "pooled releases" if several else "a generalized release"
    return what, "a group" if several else "an equivalence class"


def worst_case_sentence(threshold: float, model=None) -> str:
    """The worst-case card's one sentence, in the words of ``model``'s release kind."""
    what, group = _kind_words(model) if model is not None else ("a bucketized release", "a bucket")
    return (
        "In the worst case, some table consistent with the release and the knowledge gives "
        f"each of these people their likeliest value with probability {threshold:g} or more "
        f"(in {what} any person of {group} may be the one who holds each of its values, "
        "so this often counts everyone)."
    )


def relaxed_words(model) -> str | None:
    """Why "possible" may over-count (the bounds of a pooled model are over fractional
    tables), in the words of ``model``'s releases; None when it does not."""
    if not model.pooled:
        return None
    if len(model.releases) > 1:
        return 'pooled releases: counted over fractional tables, so "possible" may over-count'
    return (
        "people placed among the classes their QI values fit: counted over fractional "
        'tables, so "possible" may over-count'
    )


def _cells_text(frame: pd.DataFrame, qi) -> str:
    """A group's QI cells: each column's distinct cells (``N values`` past a few)."""
    parts = []
    for col in qi:
        cells = sorted(map(str, pd.unique(frame[col])))
        shown = "/".join(cells) if len(cells) <= _CELLS else f"{len(cells)} values"
        parts.append(f"{col} {shown}")
    return "; ".join(parts)


def _group_of_rows(result, table: pd.DataFrame, release, population) -> pd.Series | None:
    """Each row of ``table`` (positions) -> its group in ``release``: by person id (the
    release's own, or the groups whose cells fit a person of its population, when one
    does), or by the table's group column; None when rows cannot be placed."""
    model = result.model
    column = table.attrs.get("renamed", {}).get(model.group, model.group)
    if "records" in table and not model.pooled and column in table:
        return pd.Series(table[column].to_numpy(), dtype=object)
    ids = table.iloc[:, 0].to_numpy()
    if getattr(release, "person", None) is not None:
        people = release.people
        where = pd.Series(people[release.group].to_numpy(), index=people[release.person])
    elif population is not None and hasattr(release, "compatible"):
        people = population[list(release.qi)].reset_index(drop=True)
        people["__pid"] = population.index.to_numpy()
        pairs = release.compatible(people, "__pid")
        one = ~pairs["__pid"].duplicated(keep=False)  # a person placed in one group only
        where = pd.Series(pairs[release.group].to_numpy()[one], index=pairs["__pid"][one])
    else:
        return None
    where = where[~where.index.duplicated()]
    return pd.Series(where.reindex(ids).to_numpy(), dtype=object)


def _group_counts(result, table, release, population, sure, at) -> pd.DataFrame:
    """Per group of ``release`` (index: its label as text): ``size``, ``l``, ``certain``
    and ``at_risk`` (people of the risk table's rows ``sure`` / ``at`` placed in it)."""
    people = release.people
    key = people[release.group].astype(str).to_numpy()
    out = pd.DataFrame(
        {
            "size": pd.Series(1, index=key).groupby(level=0).size(),
            "l": pd.Series(people[release.sa].to_numpy(), index=key).groupby(level=0).nunique(),
        }
    )
    place = _group_of_rows(result, table, release, population)
    if place is None:  # by the release alone: one value, every member certain
        out["certain"] = np.where(out["l"] == 1, out["size"], 0)
        out["at_risk"] = out["certain"]
        return out
    weight = table["records"].to_numpy(dtype=float) if "records" in table else None
    weight = np.ones(len(table)) if weight is None or result.model.pooled else weight
    known = place.notna().to_numpy()
    where = place.astype(str).to_numpy()[known]
    for name, hit in (("certain", sure), ("at_risk", at)):
        got = pd.Series((weight * hit)[known]).groupby(where).sum()
        out[name] = got.reindex(out.index).fillna(0).to_numpy(dtype=int)
    return out


def exposed_groups(result, table: pd.DataFrame, limit: int = EXPOSED) -> tuple[list, int]:
    """``(groups, more)``: the groups (buckets, equivalence classes) whose members are
    certain or most at risk, most exposed first: one dict each with ``release`` (1, 2,
    ...), ``group``, ``cells`` (its QI cells), ``size`` (its people), ``l`` (its distinct
    sensitive values), ``held`` (those values), ``certain`` (its people whose value is
    certain: ``lower`` 1, or ``maxent`` 1 without bounds) and ``at_risk`` (its people at
    risk); only groups with someone certain or at risk, at most ``limit``; ``more``: how
    many more there are."""
    model = result.model
    sure = table["lower" if "lower" in table else "maxent"].to_numpy(dtype=float) >= 1.0
    at = table["at_risk"].to_numpy(dtype=bool)
    parts = []
    for k, (release, population) in enumerate(
        zip(model.releases, model.populations, strict=True), start=1
    ):
        counts = _group_counts(result, table, release, population, sure, at)
        counts = counts[(counts["certain"] > 0) | (counts["at_risk"] > 0)]
        parts.append(counts.assign(release=k, share=counts["at_risk"] / counts["size"]))
    found = pd.concat(parts) if parts else pd.DataFrame()
    if not len(found):
        return [], 0
    found = found.sort_values(["certain", "share", "l"], ascending=[False, False, True])
    rows = []
    for name, row in found.head(limit).iterrows():
        release = model.releases[int(row["release"]) - 1]
        people = release.people
        frame = people[people[release.group].astype(str).to_numpy() == name]
        values = sorted(map(str, pd.unique(frame[release.sa])))
        more = f" and {len(values) - _CELLS} more" if len(values) > _CELLS else ""
        rows.append(
            {
                "release": int(row["release"]),
                "group": str(name),
                "cells": _cells_text(frame, release.qi),
                "size": int(row["size"]),
                "l": int(row["l"]),
                "held": ", ".join(values[:_CELLS]) + more,
                "certain": int(row["certain"]),
                "at_risk": int(row["at_risk"]),
            }
        )
    return rows, max(0, len(found) - limit)


def _identity(result, table, weight) -> dict | None:
    """The identity risk line: its kind, people unique or at 1/2 or more, the mean and
    the largest risk, and each release's k and l."""
    if "identity" not in table or not table["identity"].notna().any():
        return None
    ident = np.nan_to_num(table["identity"].to_numpy(dtype=float), nan=0.0)
    people = float(weight.sum()) or 1.0
    many = len(result.model.releases) > 1
    return {
        "kind": kind_of_identity_risk(result.model),
        "unique": int(weight[ident >= 1.0].sum()),
        "half": int(weight[ident >= 0.5].sum()),
        "mean": f"{float((weight * ident).sum()) / people:.3f}",
        "largest": f"{float(ident.max()) if len(ident) else 0.0:.4f}",
        "k_l": [
            {"release": f"release {k}: " if many else "", **k_and_l(r)}
            for k, r in enumerate(result.model.releases, start=1)
        ],
    }


#: a command-line option and its value, kept on one line on the page ("--bounds all")
_OPTION = re.compile(r"--[a-z][a-z-]*(?: (?:all|auto|none))?")


def _options_unbroken(text: str | None):
    """``text`` as HTML (escaped) with each ``--option value`` in a span that does not
    break (the page's ``.nowrap``): "Use --bounds all" never splits across lines."""
    if text is None:
        return None
    parts, last = [], 0
    for found in _OPTION.finditer(text):
        parts += [escape(text[last : found.start()]), Markup('<span class="nowrap">')]
        parts += [escape(found.group()), Markup("</span>")]
        last = found.end()
    parts.append(escape(text[last:]))
    return Markup("").join(parts)


def _most_exposing_fact(facts: list) -> dict | None:
    """The measured fact that puts the most people at risk (none when no fact does)."""
    measured = [f for f in facts if "error" not in f and f["puts"] > 0]
    return max(measured, key=lambda f: f["puts"]) if measured else None


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
    out["bounds_note"] = _options_unbroken(info.get("note")) if info else None
    if "upper" in table:
        lower = table["lower"].to_numpy(dtype=float)
        upper = table["upper"].to_numpy(dtype=float)
        out["worst"] = {
            "sentence": worst_case_sentence(threshold, result.model),
            "certain": int(weight[lower >= 1.0].sum()),
            "possible": int(weight[(upper >= 1.0) & (lower < 1.0)].sum()),  # not certain
            "relaxed": relaxed_words(result.model),
        }
    identity = _identity(result, table, weight)
    if identity is not None:
        out["identity"] = identity
    skip = table.attrs.get("nonsensitive", ())
    out["facts"] = facts_impact(result, threshold, skip) if facts else []
    out["facts_left_out"] = len(result.model.facts) - len(out["facts"]) if facts else 0
    out["releases"] = releases_alone(result, threshold, skip)
    out["pooled_at_risk"] = summary.get("people_at_risk")
    out["exposed"], out["exposed_more"] = exposed_groups(result, table)
    out["exposing_fact"] = _most_exposing_fact(out["facts"])
    return out
