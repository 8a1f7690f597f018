"""``maxent-privacy plan``: the next release, checked against the published ones.

``maxent-privacy plan HISTORY.csv ... --next NEW.csv --qi A B --sa S --person P
--tau 0.5 [--m 3] [--knowledge FILE] [--adversary maxent|learned|worst] --out next.csv
[--report plan.html]`` reads the published releases (QI columns, the sensitive column,
``--group`` and ``--person``, and the ``--counterfeits`` column where a release has
counterfeit records: True/False or 1/0) and the current table, and runs
:func:`maxent_privacy.anonymize.plan_release`. It writes the release (``--out``, CSV:
QI columns, sensitive value, group, person, counterfeit; a counterfeit row has empty QI and
person cells) and a small self-contained HTML page (``--report``): the checks and their
certificates, the people repaired and why, the utility before and after.

The report command's manners: every file is read as text (columns whose cells are all
whole numbers, in every file, are read as numbers); an output that is an input (a history
file, ``--next``, ``--knowledge``; through a link too) or the other output is refused before
any work (exit 2, one line naming both); the two outputs are written as one unit (both or
neither, :func:`maxent_privacy.files.write_together`); progress goes to standard error; on
the page everything from the data is HTML-escaped. The release CSV keeps every cell as it
is (it is the data to publish: no spreadsheet quoting). Exit code 5: no release passed
the checks; the best found is written all the same, and the page says why.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from ..adversaries.registry import adversary_names, plannable
from .argtypes import probability, seconds, whole

__all__ = ["EXIT_NOT_PASSED", "PLAN_STEPS", "add_plan_parser", "plan", "render_plan"]

#: exit code when no release passes the checks (the best found is written)
EXIT_NOT_PASSED = 5
#: the steps of ``maxent-privacy plan`` (the planner's own steps are shown beside them)
PLAN_STEPS = ("read", "plan", "the files")


PLAN_EPILOG = (
    "  5    plan: no release passed the checks (the best found is written; the page says why)"
)


def add_plan_parser(sub, epilog: str, formatter) -> None:
    """The ``plan`` subcommand's arguments (``epilog``: the common exit codes)."""
    p = sub.add_parser(
        "plan",
        help="choose the next release so that, pooled with the published ones, no person "
        "is exposed",
        description="Plan the next bucketized release of a table already published: start "
        "from an m-invariant (--m), history-guided or Anatomy release, check it pooled with "
        "the published releases (the adversary's posterior below --tau, no value certain "
        "in every possible world, at least --m possible values) and repair the groups of "
        "the people who fail (counterfeits, merges).",
        epilog=epilog + "\n" + PLAN_EPILOG,
        formatter_class=formatter,
    )
    p.add_argument(
        "history",
        nargs="*",
        metavar="HISTORY.csv",
        help="the published releases, oldest first (none for a first release)",
    )
    p.add_argument(
        "--next",
        required=True,
        metavar="NEW.csv",
        help="the current table: QI, sensitive and person columns, one row per person",
    )
    p.add_argument("--qi", nargs="+", required=True, metavar="COL", help="quasi-identifier columns")
    p.add_argument("--sa", required=True, metavar="COL", help="sensitive column")
    p.add_argument("--person", required=True, metavar="COL", help="pseudonym column")
    p.add_argument(
        "--group",
        default="group",
        metavar="COL",
        help="group column of the releases read and written (default: group)",
    )
    p.add_argument(
        "--counterfeits",
        default="counterfeit",
        metavar="COL",
        help="counterfeit column (True/False or 1/0) of the releases read and written "
        "(default: counterfeit; a history file without it has none)",
    )
    p.add_argument(
        "--tau",
        type=probability,
        default=0.5,
        metavar="P",
        help="no person's probability of a value may reach P (default 0.5)",
    )
    p.add_argument(
        "--m",
        type=whole(2),
        default=None,
        metavar="M",
        help="every person keeps at least M possible values (m-invariant start)",
    )
    p.add_argument("--knowledge", metavar="FILE", help="knowledge file (see maxent_privacy.parser)")
    p.add_argument(
        "--adversary",
        choices=adversary_names(where=plannable),
        default="maxent",
        help="whose probability is checked, an adversary of the registry: maxent (default), "
        "learned (deFinetti), worst (the certified LP upper bound), ...",
    )
    p.add_argument("--out", required=True, metavar="FILE", help="the release to publish (.csv)")
    p.add_argument("--report", metavar="FILE", help="the plan as an HTML page (.html)")
    p.add_argument("--seed", type=whole(0), default=0, metavar="N", help="seed (default 0)")
    p.add_argument(
        "--max-rounds",
        type=whole(0),
        default=10,
        metavar="N",
        help="rounds of repairs at most (default 10)",
    )
    p.add_argument(
        "--time-limit",
        type=seconds,
        default=60.0,
        metavar="S",
        help="seconds of each possible-worlds bound (default 60)",
    )
    p.add_argument(
        "--na",
        nargs="+",
        default=[],
        metavar="VALUE",
        help="cells read as missing besides the empty cell",
    )
    p.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="progress on standard error (default: when it is a terminal)",
    )


# ------------------------------------------------------------------ reading
def _numbers(frames: list, columns: list) -> None:
    """Columns whose cells are all whole numbers (or all decimals) in every file that has
    them become numbers there (in place); others stay text."""
    import pandas as pd

    from .releases import DECIMAL, INTEGER

    for col in columns:
        held = [f for f in frames if col in f.columns]
        cells = [f[col].dropna().astype(str).str.strip() for f in held]
        if not held or not any(len(c) for c in cells):
            continue
        for rule in (INTEGER, DECIMAL):
            if all(c.str.fullmatch(rule).all() for c in cells):
                for f in held:
                    f[col] = pd.to_numeric(f[col].str.strip())
                break


def _read(args):
    """The history releases, the new table and the knowledge statements."""
    from ..errors import ReleaseError
    from ..releases.bucketized import Bucketized
    from .inputs import MAX_MESSAGE, InputError, counterfeit_flags, one_line, read_release_csv
    from .releases import load_statements

    statements = load_statements(args)
    frames = [read_release_csv(path, na=args.na) for path in args.history]
    table = read_release_csv(args.next, na=args.na)
    _numbers([*frames, table], [*args.qi, args.person, args.group])
    history = []
    for path, frame in zip(args.history, frames, strict=True):
        fake = None
        if args.counterfeits in frame.columns:
            frame[args.counterfeits] = counterfeit_flags(frame, args.counterfeits, path)
            fake = args.counterfeits
        try:
            history.append(Bucketized(frame, args.qi, args.sa, args.group, args.person, fake))
        except ReleaseError as exc:
            message = one_line(exc, limit=MAX_MESSAGE // 2)
            raise InputError(f"{message} (release file {path})") from exc
    return history, table, statements


# ------------------------------------------------------------------ writing
def release_csv(release) -> bytes:
    """The release as CSV text: whole-number columns written as integers (counterfeit
    rows leave QI and person cells empty), every other cell as it is.

    >>> import pandas as pd
    >>> from maxent_privacy import Bucketized
    >>> frame = pd.DataFrame({"age": [30.0, None], "d": ["flu", "hiv"], "g": [1, 1],
    ...                       "id": [7.0, None], "fake": [False, True]})
    >>> print(release_csv(Bucketized(frame, ["age"], "d", "g", "id", "fake")).decode())
    age,d,g,id,fake
    30,flu,1,7,False
    ,hiv,1,,True
    <BLANKLINE>
    """
    import io

    import numpy as np
    import pandas as pd

    frame = release.frame.copy()
    for col in [*release.qi, release.person]:
        values = frame[col]
        if pd.api.types.is_float_dtype(values.dtype):
            known = values.dropna().to_numpy()
            if len(known) and np.all(np.mod(known, 1) == 0):
                frame[col] = values.astype("Int64")
    # text in memory: files.write_together writes it
    frame.to_csv(text := io.StringIO(), index=False, lineterminator="\n")
    return text.getvalue().encode("utf-8")


_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="maxent_privacy {{ version }}">
<title>Release plan</title>
<style>
  body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; color: #1d2530;
         max-width: 62rem; margin: 2rem auto; padding: 0 1.25rem; line-height: 1.45; }
  h2 { font-size: 1.2rem; border-bottom: 1px solid #d0d7de; margin-top: 2rem; }
  table { border-collapse: collapse; margin: 0.5rem 0; font-size: 0.9rem; }
  th, td { border: 1px solid #d0d7de; padding: 0.25rem 0.6rem; text-align: left;
           overflow-wrap: anywhere; }
  th { background: #f6f8fa; }
  .ok { color: #1a7f37; font-weight: 600; } .bad { color: #cf222e; font-weight: 600; }
  .note { color: #57606a; font-size: 0.92rem; }
  pre { background: #f6f8fa; padding: 0.75rem; white-space: pre-wrap; overflow-wrap: anywhere; }
</style>
</head>
<body>
<h1>Release plan</h1>
<p id="verdict">The next release
{% if passed %}<span class="ok">passed</span>
{% else %}<span class="bad">did not pass</span>
{% endif %}
its checks: pooled with {{ n_history }} published release(s), no person's probability of a
value under the <b>{{ adversary }}</b> adversary reaches {{ tau }}, no person holds a value in
every possible world{% if m %}, every person keeps at least {{ m }} possible values
{%- endif %}.</p>
<p>Start: {{ candidate }}. {{ rounds }} round(s) of checks, {{ seconds }} s.</p>
{% if reasons %}
<h2>Why it did not pass</h2>
<ul>{% for r in reasons %}<li>{{ r }}</li>{% endfor %}</ul>
{% endif %}

<h2>Checks</h2>
<table id="checks"><tr><th>round</th><th>check</th><th>by</th><th>people</th>
<th>certificate</th></tr>
{% for c in checks %}<tr>{% for v in c %}<td>{{ v }}</td>{% endfor %}</tr>
{% endfor %}</table>

<h2>People repaired, and people still failing</h2>
{% if people %}
<table id="people"><tr>{% for h in people_head %}<th>{{ h }}</th>{% endfor %}</tr>
{% for row in people %}<tr>{% for v in row %}<td>{{ v }}</td>{% endfor %}</tr>
{% endfor %}</table>
{% if people_more %}<p class="note">... and {{ people_more }} more rows.</p>{% endif %}
{% else %}<p>No person failed a check: nothing was repaired.</p>{% endif %}

<h2>Utility</h2>
<table id="utility"><tr><th></th><th>candidate</th><th>release</th></tr>
{% for u in utility %}<tr>{% for v in u %}<td>{{ v }}</td>{% endfor %}</tr>
{% endfor %}</table>
<p class="note">Query error: mean relative error of random count queries over the
quasi-identifiers and the sensitive value, answered assuming every record of a group is
equally likely to hold each of the group's values.</p>

{% if notes %}<h2>Notes</h2><ul>{% for n in notes %}<li>{{ n }}</li>{% endfor %}</ul>{% endif %}
<h2>Inputs</h2>
<ul>{% for s in sources %}<li>{{ s }}</li>{% endfor %}</ul>
{% if command %}<pre>{{ command }}</pre>{% endif %}
</body>
</html>
"""

_SHOWN = 500  # rows of the people table on the page


def render_plan(report, sources=(), command: str | None = None) -> str:
    """The plan as a self-contained HTML page (no scripts, no network); every text from
    the data is escaped (Jinja2 autoescape)."""
    import jinja2

    from .. import __version__
    from ..anonymize.plan_report import certificate_text

    people = report.to_frame()
    head = [str(c) for c in people.columns]
    rows = [[_text(v) for v in row] for row in people.head(_SHOWN).itertuples(index=False)]
    before, after = report.utility_before, report.utility_after
    utility = [
        ("query error", f"{before['query_error']:.4f}", f"{after['query_error']:.4f}"),
        (
            "counterfeit records",
            f"{100 * before['counterfeit_share']:.2f}%",
            f"{100 * after['counterfeit_share']:.2f}%",
        ),
        (
            "mean group size",
            f"{before['mean_group_size']:.2f}",
            f"{after['mean_group_size']:.2f}",
        ),
        ("groups", f"{before['groups']:,}", f"{after['groups']:,}"),
    ]
    checks = [
        (row["round"], row["check"], row["by"], f"{int(row['people']):,}", certificate_text(row))
        for _, row in report.checks.iterrows()
    ]
    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    return env.from_string(_PAGE).render(
        version=__version__,
        passed=report.passed,
        adversary=report.adversary,
        tau=f"{report.tau:g}",
        m=report.m,
        n_history=sum(1 for s in sources if s[0] == "history"),
        candidate=report.candidate,
        rounds=len(report.rounds),
        seconds=f"{report.seconds:.1f}",
        reasons=report.reasons,
        checks=checks,
        people=rows,
        people_head=head,
        people_more=max(0, len(people) - _SHOWN),
        utility=utility,
        notes=report.notes,
        sources=[f"{kind}: {path}" for kind, path in sources],
        command=command,
    )


def _text(value) -> str:
    import math

    if value is None:
        return ""
    if isinstance(value, float):
        return "" if math.isnan(value) else f"{value:.4g}"
    return str(value)


# ------------------------------------------------------------------ the command
def plan(args, out) -> int:
    """The ``plan`` command (errors raised as the package's exceptions: the caller's
    guard turns them into one line and an exit code). Returns 0, or
    :data:`EXIT_NOT_PASSED`."""
    from .. import files
    from ..anonymize.planner import plan_release
    from .inputs import UsageError
    from .progress import Progress
    from .terminal import plain

    if Path(args.out).suffix.lower() != ".csv":
        raise UsageError(f"--out {args.out!r}: give a .csv file name")
    if args.report is not None and Path(args.report).suffix.lower() not in (".html", ".htm"):
        raise UsageError(f"--report {args.report!r}: give an .html file name")
    files.check_target(args.out)
    if args.report is not None:
        files.check_target(args.report)
    inputs = {"the history release": args.history, "the new table": [args.next]}
    if args.knowledge:
        inputs["the knowledge file"] = [args.knowledge]
    files.check_outputs({"--out": args.out, "--report": args.report}, inputs)
    with Progress(PLAN_STEPS, sys.stderr, args.progress, desc="plan") as step:
        step("read")
        history, table, statements = _read(args)
        step("plan")
        release, report = plan_release(
            history,
            table,
            args.qi,
            args.sa,
            tau=args.tau,
            m=args.m,
            knowledge=statements or None,
            adversary=args.adversary,
            person=args.person,
            seed=args.seed,
            group=args.group,
            counterfeits=args.counterfeits,
            progress=step,
            max_rounds=args.max_rounds,
            time_limit=args.time_limit,
        )
        step("the files")
        data = {args.out: release_csv(release)}
        if args.report is not None:
            sources = [("history", p) for p in args.history] + [("new table", args.next)]
            if args.knowledge:
                sources.append(("knowledge", args.knowledge))
            argv = getattr(args, "argv", None)
            command = None if argv is None else shlex.join(["maxent-privacy", *argv])
            page = render_plan(report, sources=sources, command=command)
            data[args.report] = page.encode("utf-8")
        files.write_together(data)
    fixed = report.repaired
    print(
        f"{'PASSED' if report.passed else 'NOT PASSED'}: {release.n_people:,} people in "
        f"{release.n_groups:,} groups ({release.n_records - release.n_people:,} counterfeit "
        f"records); {len(fixed):,} people repaired; adversary {report.adversary}, tau "
        f"{report.tau:g}" + (f", m {report.m}" if report.m is not None else ""),
        file=out,
    )
    if fixed:
        shown = ", ".join(plain(p, 40) for p in fixed[:10])
        print(
            f"repaired: {shown}" + (f" and {len(fixed) - 10:,} more" if len(fixed) > 10 else ""),
            file=out,
        )
    print(
        f"query error {report.utility_before['query_error']:.4f} -> "
        f"{report.utility_after['query_error']:.4f}",
        file=out,
    )
    print(f"release written to {args.out}", file=out)
    if args.report is not None:
        print(f"plan written to {args.report}", file=out)
    if not report.passed:
        why = plain("; ".join(report.reasons), 300)
        print(
            f"error: no release passed the checks ({why}); the best found is written to {args.out}",
            file=sys.stderr,
        )
        return EXIT_NOT_PASSED
    return 0
