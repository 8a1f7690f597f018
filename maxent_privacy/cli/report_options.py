"""The ``report`` options for acting on a release at scale: which intervals to certify
(``--bounds``), which values are not sensitive (``--nonsensitive``), which adversaries
the page compares (``--adversary``) and the progress bar (``--progress``/``--no-progress``)."""

from __future__ import annotations

import argparse

from ..adversaries.registry import adversary_names, reportable

__all__ = ["add_report_options"]


def add_report_options(rp: argparse.ArgumentParser) -> None:
    rp.add_argument(
        "--bounds",
        choices=["auto", "all", "none"],
        default="auto",
        help="the lower/upper interval of each person's likeliest value: auto (default: "
        "rows in order of risk, those the facts fix first, then the 50,000 riskiest, "
        "certified within 20 s; the others not checked, outer bounds from the release "
        "alone, the facts left out: column certified False, and the report says how many), "
        "all (certify every one, however long), none (no interval)",
    )
    rp.add_argument(
        "--nonsensitive",
        nargs="+",
        default=[],
        metavar="VALUE",
        help="sensitive-column values that are not sensitive (e.g. HS-grad): never a "
        "person's risk; the likeliest value is taken among the others",
    )
    rp.add_argument(
        "--adversary",
        choices=adversary_names(where=reportable),
        default="maxent",
        help="maxent (default): the maximum-entropy estimate; another adversary of the "
        "registry (learned: Kifer's deFinetti adversary, 2009): also a scale of adversaries "
        "on the page, how many people maximum entropy, that adversary and the worst case "
        "each put at risk",
    )
    rp.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="a progress bar on standard error (default: when it is a terminal)",
    )
