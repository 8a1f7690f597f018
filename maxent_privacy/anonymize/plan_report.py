"""What the release planner checked and changed: :class:`PlanReport`.

:func:`~maxent_privacy.anonymize.planner.plan_release` returns one: the verdict, every check
run with its certificate, the people repaired and why, the people still failing, the
utility before and after. ``print(report)`` (``summary()``) reads as text,
``to_frame()`` is one row per person and failed check.

>>> import pandas as pd
>>> row = pd.Series({"check": "worlds", "by": "witness worlds (value swaps)",
...                  "people": 6, "settled": 6, "value_swaps": 4})
>>> certificate_text(row)
'6 of 6 people settled by 4 value swaps'
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from ..releases.checks import shorten

__all__ = ["PlanReport", "certificate_text"]


@dataclass
class PlanReport:
    """What :func:`plan_release` checked and changed.

    Attributes
    ----------
    passed : every person passes every check with the returned release.
    adversary, tau, m : the checks asked for.
    candidate : how the starting release was made.
    checks : one row per program run on the way to the returned release's answers
        (``round``, ``check`` "posterior" or "worlds", ``by``: the adversary or the
        method, ``people`` checked, then the certificate's numbers: residuals, gap and
        status of a solve; gap, dual violation and ``all_certified`` of the LP bounds;
        ``value_swaps`` of the witness worlds; integer programs and ``all_exact``).
    repairs : one row per person and failed check a repair answered: ``round``,
        ``person``, ``check``, ``value``, ``number`` (probability, 1 for certain, count of
        possible values), ``action`` and ``group`` (in the returned release).
    failing : the people who still fail in the returned release (same columns and
        ``why``: what stopped the planner).
    utility_before, utility_after : :func:`~.utility.release_utility` of the candidate
        and of the returned release (query error, counterfeit share, mean group size).
    rounds : one row per round: people failing, repairs made, people re-checked, seconds.
    reasons : why the release does not pass (empty when it does).
    notes : warnings of the anonymizers and the bounds, choices made on the way.
    seconds : the whole planning time.
    """

    passed: bool
    adversary: str
    tau: float
    m: int | None
    candidate: str
    checks: pd.DataFrame
    repairs: pd.DataFrame
    failing: pd.DataFrame
    utility_before: dict
    utility_after: dict
    rounds: pd.DataFrame
    reasons: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    seconds: float = 0.0

    @property
    def repaired(self) -> list:
        """The people with a failed check that a repair answered and that passes now, in
        the order of the repairs (they may still fail another check: see ``failing``)."""
        still = set(zip(self.failing["person"], self.failing["check"], strict=True))
        pairs = zip(self.repairs["person"], self.repairs["check"], strict=True)
        return list(dict.fromkeys(p for p, c in pairs if (p, c) not in still))

    def to_frame(self) -> pd.DataFrame:
        """One row per person and failed check met on the way: ``person``, ``check``,
        ``value``, ``number``, ``round`` (when found; NaN: still failing, never repaired),
        ``action`` and ``status`` ("repaired" or "still failing: <why>")."""
        cols = ["person", "check", "value", "number", "round", "action", "group"]
        done = self.repairs.reindex(columns=cols)
        still = set(map(tuple, self.failing[["person", "check"]].to_numpy(dtype=object).tolist()))
        done = done.assign(
            status=[
                "still failing" if (p, c) in still else "repaired"
                for p, c in zip(done["person"], done["check"], strict=True)
            ]
        )
        left = self.failing.assign(status="still failing: " + self.failing["why"].astype(str))
        left = left.reindex(columns=[*cols, "status"])
        known = set(zip(done["person"], done["check"], strict=True))
        left = left[
            [(p, c) not in known for p, c in zip(left["person"], left["check"], strict=True)]
        ]
        frames = [f for f in (done, left) if len(f)]
        if not frames:
            return pd.DataFrame(columns=[*cols, "status"])
        return pd.concat(frames, ignore_index=True)

    def summary(self) -> str:
        """A few lines of text: verdict, checks, repairs, utility."""
        before, after = self.utility_before, self.utility_after
        lines = [
            f"release plan: {'PASSED' if self.passed else 'NOT PASSED'} (adversary "
            f"{self.adversary}, tau {self.tau:g}"
            + (f", m {self.m}" if self.m is not None else "")
            + f"; {len(self.rounds)} round(s), {self.seconds:.1f} s)",
            f"candidate: {self.candidate}",
            "checks: posterior below tau under the "
            + self.adversary
            + " adversary; no value certain in every possible world"
            + ("; at least m possible values" if self.m is not None else ""),
        ]
        for _, row in self.checks.iterrows():
            lines.append(
                f"  round {row['round']}: {row['check']} by {row['by']}: {certificate_text(row)}"
            )
        fixed = self.repaired
        lines.append(
            f"repaired: {len(fixed)} people"
            + (f" ({', '.join(shorten(p, 20) for p in fixed[:10])}" if fixed else "")
            + (f", ... {len(fixed) - 10} more)" if len(fixed) > 10 else (")" if fixed else ""))
        )
        if len(self.failing):
            lines.append(f"still failing: {self.failing['person'].nunique()} people")
        lines.append(
            f"utility: query error {before['query_error']:.4f} -> {after['query_error']:.4f}; "
            f"counterfeits {100 * before['counterfeit_share']:.2f}% -> "
            f"{100 * after['counterfeit_share']:.2f}%; mean group size "
            f"{before['mean_group_size']:.2f} -> {after['mean_group_size']:.2f}"
        )
        lines += [f"why not: {r}" for r in self.reasons]
        lines += [f"note: {n}" for n in self.notes[:10]]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.summary()

    def _repr_html_(self) -> str:
        import html

        head = html.escape(self.summary()).replace("\n", "<br>")
        return f"<p>{head}</p>" + self.to_frame().head(50).to_html(escape=True)


def certificate_text(row) -> str:
    """A row of ``PlanReport.checks``: its certificate in a few words."""
    if row["check"] == "posterior" and "status" in row and isinstance(row.get("status"), str):
        return (
            f"{row['status']}, residual {max(row['data_residual'], row['knowledge_residual']):.1e},"
            f" gap {row['gap']:.1e}, {int(row['people']):,} people"
        )
    if row["check"] == "posterior":
        return (
            f"certified {bool(row['all_certified'])}, gap {row['max_gap']:.1e}, dual violation "
            f"{row['max_dual_violation']:.1e}, {int(row['people']):,} people"
        )
    if str(row["by"]).startswith("witness"):
        return (
            f"{int(row['settled']):,} of {int(row['people']):,} people settled by "
            f"{int(row['value_swaps']):,} value swaps"
        )
    return (
        f"{int(row['people']):,} people, exact {bool(row['all_exact'])}, "
        f"{int(row['milps'])} integer programs"
    )
