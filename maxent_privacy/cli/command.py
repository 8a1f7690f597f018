"""The command itself: the argument parser, :func:`main`, the commands and exit codes.

See :mod:`maxent_privacy.cli` for what each command does, the input format and the exit
codes.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import textwrap
import traceback
from pathlib import Path
from typing import TYPE_CHECKING

from .. import __version__
from ..errors import InaccurateSolution, MaxEntError, OutputError, SolverFailed
from ..files import atomic_write, check_target, write_text
from .argtypes import probability, whole
from .distributed import add_distributed_parser, run_distributed
from .inputs import InputError, UsageError, one_line, read_release_csv
from .outputs import check_outputs, write_report_files
from .plan import add_plan_parser, plan
from .progress import REPORT_STEPS, Progress
from .releases import build_model, report_model
from .report_options import add_report_options
from .suggest import SuggestingParser
from .tables import add_audit_parser, add_table_options, audit, population_model, report_tables
from .terminal import escape_controls, plain, plain_frame

if TYPE_CHECKING:
    import pandas as pd

EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_INPUT = 2
EXIT_SOLVER = 3
EXIT_OUTPUT = 4
EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 141

EXIT_CODES = """\
exit codes:
  0    success
  1    internal error (a bug: the traceback is printed; please report it)
  2    usage or bad input: arguments, an unreadable or malformed release or
       knowledge file, an unknown solver, knowledge the release cannot satisfy,
       an output that is an input file or the other output
  3    the solver failed or its answer failed the certificate check
  4    output not written (--out, --risk-out or standard output); nothing
       partial is left
  130  interrupted (Ctrl-C)
  141  standard output closed early (... | head): quiet, as with SIGPIPE"""


def _show(frame: pd.DataFrame) -> str:
    import pandas as pd

    with pd.option_context(
        "display.width", 120, "display.max_columns", 20, "display.float_format", "{:.4f}".format
    ):
        return plain_frame(frame).to_string()  # data: control characters escaped, cut


def demo(out=None) -> int:
    """Figure 1 of the Privacy-MaxEnt paper, end to end."""
    from .. import datasets
    from ..model import MaxEntModel
    from ..releases.bucketized import Bucketized

    out = sys.stdout if out is None else out
    frame = datasets.du2008_figure1()
    release = Bucketized(frame, qi=["gender", "degree"], sa="disease", group="bucket")
    print("Figure 1(b) of Du, Teng and Zhu (SIGMOD 2008): the bucketized release", file=out)
    table = release.buckets()
    table["qi"] = table["qi"].map(lambda q: "; ".join(" ".join(t) for t in q))
    table["disease"] = table["disease"].map(lambda s: "{" + ", ".join(s) + "}")
    print(_show(table), file=out)

    model = MaxEntModel(release)
    result = model.solve()
    print(
        "\nP(disease | gender, degree) without background knowledge (Eq. (9) in every bucket):",
        file=out,
    )
    print(_show(result.posterior()), file=out)
    print(f"certificate: {result.certificate}", file=out)

    model.add(model.P("Breast Cancer", gender="male") == 0)
    result = model.solve()
    print("\nwith the knowledge P(Breast Cancer | male) = 0:", file=out)
    print(_show(result.posterior(by="group")), file=out)
    print(f"certificate: {result.certificate}", file=out)
    women = result.posterior(by="group")["Breast Cancer"]
    sure = women[women >= 1 - 1e-9]
    print(
        "\nthe women of buckets 1 and 2 have Breast Cancer with certainty: "
        + ", ".join(f"{g} {d} in bucket {b}" for g, d, b in sure.index),
        file=out,
    )
    return 0


_OUT_FORMATS = {".csv": "csv", ".json": "json"}


def _exit_code(exc: MaxEntError) -> int:
    if isinstance(exc, OutputError):
        return EXIT_OUTPUT
    if isinstance(exc, (SolverFailed, InaccurateSolution)):
        return EXIT_SOLVER
    return EXIT_INPUT


class _Checked:
    """A text stream whose write failures (other than a closed pipe) are OutputErrors."""

    def __init__(self, stream, name: str):
        self.stream, self.name = stream, name

    def _call(self, method, *args):
        if self.stream is None:  # no standard output at all (pythonw): print nothing
            return None
        try:
            return getattr(self.stream, method)(*args)
        except BrokenPipeError:
            raise
        except OSError as exc:
            reason = exc.strerror or one_line(exc)
            raise OutputError(f"cannot write {self.name}: {reason}", errno=exc.errno) from exc

    def write(self, text: str):
        return self._call("write", escape_controls(text))  # no ESC, BEL, ... from the data

    def flush(self):
        return self._call("flush")


def _write_posterior(table: pd.DataFrame, path: Path, fmt: str) -> None:
    """Whole or not at all (errors are OutputErrors naming the path)."""
    if fmt == "json":
        text = json.dumps(_posterior_records(table), indent=1, ensure_ascii=False)
        write_text(path, text + "\n")
    else:
        with atomic_write(path, "w", newline="") as fh:
            table.reset_index().to_csv(fh, index=False)


def analyze(args, out=None, err=None) -> int:
    """The ``analyze`` command: read, build, apply knowledge, solve, report, write.

    Returns the exit code; an error is one line on ``err`` (see the module docstring).
    """
    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err
    return _guard(lambda: _analyze(args, out), err)


def _analyze(args, out) -> int:
    from ..knowledge.parser import apply_knowledge, load_knowledge

    fmt = None
    if args.out is not None:
        fmt = _OUT_FORMATS.get(Path(args.out).suffix.lower())
        if fmt is None:
            raise UsageError(
                f"--out {args.out!r}: give a .csv or .json file name (the format follows "
                "the extension)"
            )
        check_target(args.out)
        check_outputs(args, {"--out": args.out})  # never over an input
    statements = []
    if args.knowledge:
        try:
            statements = load_knowledge(args.knowledge)
        except OSError as exc:
            reason = exc.strerror or one_line(exc)
            raise InputError(f"{args.knowledge}: cannot read: {reason}") from exc
    frame = read_release_csv(args.release, na=args.na)
    model, release = _build_model(args, frame)
    names = apply_knowledge(model, statements)
    result = model.solve(solver=args.solver)
    table = result.posterior(by="group" if args.by == "group" else None)
    if args.out is not None:
        _write_posterior(table, Path(args.out), fmt)
    print(
        f"{release.n_records} records, {release.n_groups} groups; "
        + (
            f"{_count_statements(names)} facts from {args.knowledge}"
            if args.knowledge
            else "no knowledge file"
        ),
        file=out,
    )
    print(result.summary(), file=out)
    persons = getattr(model, "persons", [])
    if persons and hasattr(result, "person_posterior"):
        print("\nP(" + str(model.sa) + " | person):", file=out)
        print(_show(result.person_posterior()), file=out)
    if args.out is None:
        print(
            "\nposterior P(" + str(model.sa) + " | QI" + (", group" if args.by else "") + "):",
            file=out,
        )
        print(_show(table), file=out)
    else:
        print(f"posterior written to {args.out}", file=out)
    return EXIT_OK


def _count_statements(names) -> int:
    from ..report.statements import count_statements

    return count_statements(names)


def _build_model(args, frame: pd.DataFrame):
    """The model of the release in ``frame``: bucketized, or generalized with the
    population of ``--population`` (:func:`maxent_privacy.cli.releases.build_model`)."""
    return build_model(args, frame)


# ---------------------------------------------------------------------------- report
_HTML_SUFFIXES = (".html", ".htm")
_FRAME_SUFFIXES = (".csv", ".parquet", ".pq")


def _check_report_targets(args) -> tuple[str | None, str | None]:
    """The HTML and risk-table paths, checked before any work (default: report.html)."""
    html, risk = args.out, args.risk_out
    if html is None and risk is None:
        html = "report.html"
    if html is not None:
        if Path(html).suffix.lower() not in _HTML_SUFFIXES:
            raise UsageError(f"--out {html!r}: give an .html file name")
        check_target(html)
    if risk is not None:
        suffix = Path(risk).suffix.lower()
        if suffix not in _FRAME_SUFFIXES:
            raise UsageError(
                f"--risk-out {risk!r}: give a .csv, .parquet or .pq file name (the format "
                "follows the extension)"
            )
        if suffix != ".csv":
            try:
                import pyarrow  # noqa: F401
            except ImportError:
                raise UsageError(
                    f"--risk-out {risk!r}: Parquet needs pyarrow (pip install pyarrow); or "
                    "give a .csv file name"
                ) from None
        check_target(risk)
    check_outputs(args, {"--out": html, "--risk-out": risk})  # never an input, nor each other
    return html, risk


def _report_model(args):
    """Read the knowledge file and the releases (pooled when several; generalized with
    ``--population``; groups derived without ``--group``), build the model
    (:func:`maxent_privacy.cli.releases.report_model`); with ``--tables --population``
    the counts tables and the population (:func:`maxent_privacy.cli.tables.population_model`)."""
    if getattr(args, "tables", False):
        return population_model(args)
    return report_model(args)


def report(args, out=None, err=None) -> int:
    """The ``report`` command: who is at risk, as an HTML report and a risk table.

    Returns the exit code; an error is one line on ``err`` (see the module docstring).
    """
    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err
    return _guard(lambda: _report(args, out), err)


def _report(args, out) -> int:
    from ..report.risk import risk_table

    if getattr(args, "tables", False) and getattr(args, "population", None) is None:
        return report_tables(args, out)  # the page of the tables: reconstruction
    if args.sa is None:
        raise UsageError("the following argument is required: --sa (unless --tables)")
    html, risk = _check_report_targets(args)
    with Progress(REPORT_STEPS, sys.stderr, getattr(args, "progress", None)) as step:
        step("read")
        model, names = _report_model(args)
        step("solve")
        # no bar of the solve's own: the command's bar (a terminal, or --progress) says
        # which step runs, and nothing is drawn on a file or a pipe
        result = model.solve(solver=args.solver, progress=False)
        table = risk_table(  # raw: for the HTML
            result,
            threshold=args.threshold,
            csv_safe=False,
            nonsensitive=getattr(args, "nonsensitive", ()),
            bounds=getattr(args, "bounds", "auto"),
            progress=step,
        )
        step("the page and the files")
        _write_report(args, result, table, html, risk, names)
    return _report_lines(args, (model, result, table, names), html, risk, out)


def _write_report(args, result, table, html, risk, names) -> None:
    """Both files rendered first, then written as one unit (the table solved once)."""
    for old, new in table.attrs.get("renamed", {}).items():
        print(f"note: column {old!r} is shown as {new!r} in the risk table", file=sys.stderr)
    argv = getattr(args, "argv", None)
    write_report_files(  # both rendered first, then written as one unit; the table solved once
        result,
        table,
        html,
        risk,
        csv_safe=not getattr(args, "raw_csv", False),
        threshold=args.threshold,
        top=args.top,
        sources=args.release,
        knowledge_file=args.knowledge,
        populations=getattr(args, "population", None),
        command=None if argv is None else shlex.join(["maxent-privacy", *argv]),
        adversary=getattr(args, "adversary", "maxent"),
    )


def _report_lines(args, made, html, risk, out) -> int:
    """What ``report`` prints: sizes, certificate, people at risk, the files written."""
    from ..report.risk import risk_summary, table_column

    model, result, table, names = made
    summary = risk_summary(result, args.threshold, table)
    n_stated = _count_statements(names)  # a vague statement (+-) is one fact, not two
    n_facts = f"{n_stated} fact{'s' if n_stated != 1 else ''}"
    facts = f"{n_facts} from {args.knowledge}" if args.knowledge else "no knowledge file"
    n_rel = len(args.release)
    print(
        f"{model.n_records:,} people, {n_rel} release{'s' if n_rel != 1 else ''}; {facts}",
        file=out,
    )
    print(f"certificate: {result.certificate}", file=out)
    classes = (
        f"; {summary['classes_at_risk']:,} of {summary['classes']:,} (QI value, group) classes"
        if summary["classes"] is not None
        else ""
    )
    print(
        f"at threshold {args.threshold:g}: {summary['people_at_risk']:,} of "
        f"{summary['people']:,} people at risk under the maximum-entropy estimate"
        + ("" if summary["per_person"] else " (one person per record)")
        + classes
        + f"; {summary['qi_values_at_risk']:,} of {summary['qi_values']:,} QI values",
        file=out,
    )
    for line in _worst_case_lines(args, result, table, summary):
        print(line, file=out)
    at_risk = table[table["at_risk"]]
    if len(at_risk):
        keys = [table.columns[0]] if summary["per_person"] else [*model.qi, model.group]
        keys = [table_column(table, k) for k in keys]  # a QI named value: release_value
        shown = ", ".join(
            f"{' '.join(plain(row[k], 40) for k in keys)} ({plain(row['value'], 40)} "
            f"{row['maxent']:.4f})"  # the table's rounding (4 decimals)
            for _, row in at_risk.head(10).iterrows()
        )
        more = f" and {len(at_risk) - 10:,} more" if len(at_risk) > 10 else ""
        print(f"at risk: {shown}{more}", file=out)
    if risk is not None:
        print(f"risk table written to {risk}", file=out)
    if html is not None:
        print(f"report written to {html}", file=out)
    return EXIT_OK


def _worst_case_lines(args, result, table, summary) -> list[str]:
    """The page's other counts: the worst case, the certain among the certified rows and
    those not checked, and each adversary of the scale (``--adversary``)."""
    from ..report.html import adversary_rows

    lines = []
    people = f"of {summary['people']:,} people"
    if "people_at_risk_worst_case" in summary:
        lines.append(
            f"worst case: {summary['people_at_risk_worst_case']:,} {people} at risk in the worst "
            "case (each one's own upper bound)"
        )
    if "certain" in summary:
        checked = (
            f"; {summary['not_checked']:,} not checked (use --bounds all)"
            if summary["not_checked"]
            else ""
        )
        lines.append(
            f"certain: {summary['certain']:,} certain among the {summary['certified']:,} people "
            f"certified (the same value in every possible table), {summary['possible']:,} for "
            f"whom it is merely possible{checked}"
        )
    rows = adversary_rows(
        result, table, args.threshold, summary, getattr(args, "nonsensitive", ()),
        getattr(args, "adversary", "maxent"),
    )  # fmt: skip
    for row in rows:  # computed for the page already: the same numbers
        lines.append(f"adversary {row['adversary']}: {row['at_risk']:,} {people} at risk")
    return lines


_MAX_CONFLICTS = 20  # conflicting facts listed
_FACT_WIDTH = 60  # characters of a fact's name shown in the table


def _number(v) -> str:
    import math

    v = float(v)
    if math.isnan(v):
        return "-"
    if math.isinf(v):
        return "no single change"
    return f"{v:.4g}"


def _conflict_lines(exc) -> list[str]:
    """For contradictory knowledge with its conflicting facts known: the error line, then
    a table of the facts with how far each must move (``conflicts.conflict_moves``)."""
    from ..errors import InfeasibleKnowledge

    table = getattr(exc, "conflicts", None) if isinstance(exc, InfeasibleKnowledge) else None
    if table is None or len(table) == 0 or "fact" not in table:
        return []
    n = len(table)
    names = [one_line(name, limit=_FACT_WIDTH) for name in table["fact"].astype(str)]
    moves = [_number(v) for v in table["move"]] if "move" in table else ["-"] * n
    tos = [_number(v) for v in table["to"]] if "to" in table else ["-"] * n
    rows = list(zip(names, moves, tos, strict=True))[:_MAX_CONFLICTS]
    head = ("fact", "move by", "nearest value that holds")
    width = [max(len(r[i]) for r in [head, *rows]) for i in range(2)]
    lines = [
        f"error: {n} fact{'s' if n != 1 else ''} cannot hold together with the data; "
        "each fact below, moved alone by the amount shown (the others kept), would make "
        "them feasible:"
    ]
    for name, move, to in [head, *rows]:
        lines.append(f"  {name:<{width[0]}}  {move:>{width[1]}}  {to}".rstrip())
    if n > _MAX_CONFLICTS:
        lines.append(f"  ... and {n - _MAX_CONFLICTS} more")
    return lines


def _guard(command, err) -> int:
    """Run a command; a user's error is one line on ``err``, a bug a traceback. Exit code."""
    try:
        return command()
    except BrokenPipeError:
        raise  # standard output is gone: main() ends quietly
    except KeyboardInterrupt:
        print("error: interrupted", file=err)
        return EXIT_INTERRUPTED
    except MaxEntError as exc:
        lines = _conflict_lines(exc)
        print(lines[0] if lines else f"error: {one_line(exc)}", file=err)
        for line in lines[1:]:
            print(line, file=err)
        return _exit_code(exc)
    except Exception as exc:
        traceback.print_exc(file=err)
        print(
            f"error: internal error ({type(exc).__name__}: {one_line(exc)}); this is a "
            "bug in maxent-privacy, please report it with the traceback above",
            file=err,
        )
        return EXIT_INTERNAL


def _quiet_stdout() -> None:
    """Point standard output at /dev/null so that the interpreter's last flush cannot fail
    (Python documentation, signal module, "Note on SIGPIPE")."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, AttributeError, ValueError):  # no real descriptor (pytest's capture)
        pass


class _HelpFormatter(argparse.HelpFormatter):
    """argparse's layout, except that paragraphs whose lines are indented keep their lines."""

    def _fill_text(self, text, width, indent):
        paragraphs = text.split("\n\n")
        return "\n\n".join(
            textwrap.indent(p, indent)
            if "\n " in p or p.startswith(" ")
            else super(_HelpFormatter, self)._fill_text(p, width, indent)
            for p in paragraphs
        )


def _posterior_records(table: pd.DataFrame) -> list[dict]:
    """Records orientation: the index columns, then one key per sensitive value."""
    keys = list(table.index.names)
    clash = [str(c) for c in table.columns if str(c) in keys]
    if clash:
        raise UsageError(
            f"sensitive value {clash[0]!r} is also a column name; cannot write JSON records"
        )
    out = []
    for idx, row in zip(table.index, table.to_numpy(dtype=float), strict=True):
        idx = idx if isinstance(idx, tuple) else (idx,)
        record = {
            k: (v.item() if hasattr(v, "item") else v) for k, v in zip(keys, idx, strict=True)
        }
        record.update({str(s): float(p) for s, p in zip(table.columns, row, strict=True)})
        out.append(record)
    return out


SOLVER_HELP = (
    "'maxent' (our Newton solver on the dual; the default when every fact is linear) or "
    "a cvxpy solver with the exponential cone: CLARABEL (the default otherwise), ECOS, "
    "SCS, MOSEK"
)


def _parser() -> argparse.ArgumentParser:
    parser = SuggestingParser(
        prog="maxent-privacy",
        description="What can an adversary infer from a published anonymized table?",
        epilog=EXIT_CODES,
        formatter_class=_HelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser(
        "demo",
        help="Figure 1 of Privacy-MaxEnt: release, posterior, knowledge",
        epilog=EXIT_CODES,
        formatter_class=_HelpFormatter,
    )
    an = sub.add_parser(
        "analyze",
        help="posterior of a bucketized or generalized release (CSV) under knowledge from "
        "a text file",
        description="Estimate P(sensitive | QI) of a bucketized release (or a generalized "
        "one with --population) by maximum entropy, "
        "under background knowledge written in a text file (one fact a line, e.g. "
        'P(disease = "Flu" | gender = "male") = 0.3).',
        epilog=EXIT_CODES,
        formatter_class=_HelpFormatter,
    )
    an.add_argument("release", help="CSV file, one row per record (values read as text)")
    _add_release_arguments(an)
    _add_population_arguments(an)
    an.add_argument(
        "--out",
        metavar="FILE",
        help="write the posterior here: .csv or .json (records); default: print it",
    )
    an.add_argument(
        "--by",
        choices=["group"],
        help="'group': P(sensitive | QI, group) instead of P(sensitive | QI)",
    )
    _add_report_parser(sub)
    add_audit_parser(sub, EXIT_CODES, _HelpFormatter)
    add_plan_parser(sub, EXIT_CODES, _HelpFormatter)
    add_distributed_parser(sub, EXIT_CODES, _HelpFormatter)
    return parser


def _add_population_arguments(p: argparse.ArgumentParser) -> None:
    """How to read a generalized release and place its people (analyze, report)."""
    p.add_argument(
        "--population",
        metavar="FILE",
        help="population CSV (person id and exact QI columns) of a generalized release: "
        "its QI cells are ranges, masks or sets ([44-47], 20-29, <30, 021**, {a, b}, *)",
    )
    p.add_argument(
        "--population-id",
        metavar="COL",
        help="person id column of --population (default: the --person column's name if "
        "the population has it, else its first column)",
    )
    p.add_argument(
        "--formats",
        choices=["auto", "ours", "none"],
        default="auto",
        help="how QI cells are read: auto (ours and ARX/sdcMicro's: 20-29, [20, 30[, <30, "
        ">=60, 021**, *), ours ([lo-hi], {a, b}, *), none (every cell an exact value)",
    )


def _add_release_arguments(
    p: argparse.ArgumentParser, group_required: bool = True, sa_required: bool = True
) -> None:
    """The arguments that say how to read a release and what is known (analyze, report;
    ``report``'s ``--sa`` may be left out with ``--tables``)."""
    p.add_argument("--qi", nargs="+", required=True, metavar="COL", help="quasi-identifier columns")
    p.add_argument(
        "--sa",
        required=sa_required,
        metavar="COL",
        help="sensitive column" + ("" if sa_required else " (with --tables: optional)"),
    )
    p.add_argument(
        "--group",
        required=group_required,
        metavar="COL",
        help="group (bucket) column"
        + (
            ""
            if group_required
            else "; 'auto': the rows with identical QI cells are the classes (ARX); the "
            "default when the file has no group or bucket column"
        ),
    )
    p.add_argument("--person", metavar="COL", help="pseudonym column (one id per row)")
    p.add_argument(
        "--counterfeits",
        metavar="COL",
        help="counterfeit column (True/False or 1/0) of bucketized releases that have "
        "counterfeit records (m-invariance, maxent-privacy plan)",
    )
    p.add_argument("--knowledge", metavar="FILE", help="knowledge file (see maxent_privacy.parser)")
    p.add_argument("--solver", metavar="NAME", help=SOLVER_HELP)
    p.add_argument(
        "--na",
        nargs="+",
        default=[],
        metavar="VALUE",
        help="cells read as missing besides the empty cell (default none: NA, None, null "
        "are values)",
    )


def _add_report_parser(sub) -> None:
    rp = sub.add_parser(
        "report",
        help="who is at risk: an HTML report for a privacy officer and a risk table",
        description="Estimate P(sensitive | QI) of a bucketized release, or a generalized "
        "one with --population (several files with "
        "the same people are pooled through --person) under background knowledge, and say "
        "who is at risk: a self-contained HTML report (--out) and one row per person, or "
        "per QI value and group without person ids (--risk-out: id and QI columns, then "
        "value, maxent, lower, upper, certified, at_risk; a release column named like one of "
        "these "
        "gets the prefix release_). With neither option the report goes to report.html.",
        epilog=EXIT_CODES,
        formatter_class=_HelpFormatter,
    )
    rp.add_argument(
        "release", nargs="+", help="CSV file(s), one row per record (values read as text)"
    )
    _add_release_arguments(rp, group_required=False, sa_required=False)
    _add_population_arguments(rp)
    rp.add_argument(
        "--threshold",
        type=probability,
        default=0.5,
        metavar="P",
        help="a person is at risk when their likeliest sensitive value has a posterior of "
        "at least P (default 0.5)",
    )
    rp.add_argument("--out", metavar="FILE", help="HTML report (default report.html)")
    rp.add_argument(
        "--risk-out",
        metavar="FILE",
        help="risk table: .csv, or .parquet/.pq (needs pyarrow); columns: id and QI (or QI, "
        "group and records), value (likeliest sensitive value), maxent (its posterior), "
        "lower and upper (its bounds over every table allowed, see --bounds), certified "
        "(True: those bounds are proved; False: not checked, outer bounds), at_risk "
        "(on maxent rounded to 4 decimals), tied (another value as likely), identity "
        "(re-identification risk: 1 / the records sharing the QI cells)",
    )
    rp.add_argument(
        "--raw-csv",
        action="store_true",
        help="keep formula-like cells raw in the --risk-out CSV; by default a text cell "
        "starting with =, +, -, @, tab or CR gets a leading ' so that a spreadsheet shows "
        "it as text instead of running it (plain numbers such as -3 are untouched)",
    )
    rp.add_argument(
        "--top",
        type=whole(1),
        default=20,
        metavar="N",
        help="people listed in the report (default 20)",
    )
    add_report_options(rp)  # --bounds, --nonsensitive, --progress
    rp.add_argument(
        "--tables",
        action="store_true",
        help="the files are published counts tables (one row per cell and a --count "
        "column): the page says which suppressed cells are recovered and how much of the "
        "microdata is pinned; with --population, the usual report of the people",
    )
    add_table_options(rp, count_required=False)  # --count, --suppressed, --rounding, ...


def main(argv=None) -> int:
    """The command line; returns the exit code (see the module docstring)."""
    args = _parser().parse_args(argv)
    out = _Checked(sys.stdout, "standard output")
    err = sys.stderr
    code = EXIT_INTERNAL
    try:
        if args.command == "demo":
            code = _guard(lambda: demo(out), err)
        elif args.command == "report":
            args.argv = list(sys.argv[1:] if argv is None else argv)
            code = report(args, out, err)
        elif args.command == "audit":
            args.argv = list(sys.argv[1:] if argv is None else argv)
            code = _guard(lambda: audit(args, out), err)
        elif args.command == "distributed":
            code = _guard(lambda: run_distributed(args, out), err)
        elif args.command == "plan":
            args.argv = list(sys.argv[1:] if argv is None else argv)
            code = _guard(lambda: plan(args, out), err)
        else:
            code = analyze(args, out, err)
        if sys.stdout is not None:
            sys.stdout.flush()
    except BrokenPipeError:
        _quiet_stdout()
        return EXIT_BROKEN_PIPE
    except OSError as exc:  # the last flush of standard output failed (disk full, ...)
        _quiet_stdout()
        if code == EXIT_OK:
            print(f"error: cannot write standard output: {exc.strerror or exc}", file=err)
            code = EXIT_OUTPUT
    return code
