"""Published counts tables on the command line: ``maxent-privacy audit`` and
``maxent-privacy report --tables``.

``maxent-privacy audit TABLE.csv [TABLE.csv ...] --qi COL ... [--sa COL] --count COL
[--knowledge FILE] [--suppressed x ""] [--rounding B] [--total N] [--protection P]
[--exact] [--time-limit S] [--out audit.csv] [--html audit.html]`` reads each file as one
:class:`~maxent_privacy.Tabulated` (values as text, named by its file name; its QI are the
``--qi`` columns it has, its sensitive column ``--sa`` when it has it), builds the model
of the tables (``docs/tables.md``) and prints, per table, its suppressed cells with their
lowest and highest count over every table of records consistent with what was published,
the width and whether each is exposed (narrower than the protection), then one line:
"3 of 5 suppressed cells recovered exactly; 1 narrower than the protection". ``--out``
writes the audit of every cell of every table as CSV (a ``table`` column first; text
cells spreadsheet-safe), ``--html`` the page (:mod:`maxent_privacy.report.tables`); both
are written as one unit, never over an input nor over each other.

``maxent-privacy report T1.csv T2.csv --tables --qi ... [--sa ...] --count count
[--out report.html]`` writes that page (with the reconstruction: records in every
consistent table, combinations pinned, population uniques rebuilt); with
``--population FILE`` the tables and the population (person id and exact QI) make a
model of people (``MaxEntModel(tables, populations=[pop])``) that the usual report reads.

A bad table (negative, fractional or unparseable count, a missing column, a cell listed
twice) or tables that contradict each other are one line naming the table, row and
column (exit 2), as every release.
"""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path

from .. import files
from ..errors import ReleaseError
from .argtypes import seconds, whole
from .inputs import MAX_MESSAGE, InputError, UsageError, one_line, read_release_csv
from .terminal import plain

__all__ = [
    "add_audit_parser",
    "add_table_options",
    "audit",
    "read_tables",
    "report_tables",
    "table_model",
]

#: the suppressed cells printed per table (the narrowest first); --out has every one
MAX_PRINTED = 50


def _protection(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not (value > 0 and value == value and value != float("inf")):
        raise argparse.ArgumentTypeError(f"must be a finite number more than 0, got {text}")
    return value


def add_table_options(p: argparse.ArgumentParser, count_required: bool) -> None:
    """How counts tables are read and audited (``audit``, ``report --tables``)."""
    p.add_argument(
        "--count",
        required=count_required,
        default=None if count_required else "count",
        metavar="COL",
        help="the column of counts" + ("" if count_required else " (default: count)"),
    )
    p.add_argument(
        "--suppressed",
        nargs="+",
        default=["x", ""],
        metavar="TEXT",
        help='counts that mean "suppressed" (any count >= 0), compared after stripping; '
        'default: x and the empty cell (give "" for the empty cell)',
    )
    p.add_argument(
        "--rounding",
        type=whole(2),
        metavar="B",
        help="every table's counts are randomly rounded to base B: a published c stands "
        "for c-(B-1) ... c+(B-1)",
    )
    p.add_argument(
        "--total",
        type=whole(0),
        metavar="N",
        help="the number of records, when no table gives it exactly (every table rounded, "
        "or with a suppressed or interval cell)",
    )
    p.add_argument(
        "--protection",
        type=_protection,
        metavar="P",
        help="a suppressed cell is exposed when its interval is narrower than P: a share "
        "of the cell's count when P < 1 (0.2: 20%%), else a width in records (default 1: "
        "known to within less than one record)",
    )
    p.add_argument(
        "--exact",
        action="store_true",
        help="whole-number bounds (integer programs) instead of the linear-programming ones",
    )
    p.add_argument(
        "--time-limit",
        type=seconds,
        default=60.0,
        metavar="S",
        help="seconds for each family of bounds (default 60); a side cut short is the "
        "bound proved so far and is marked not proved",
    )


def add_audit_parser(sub, epilog: str, formatter) -> None:
    """The ``audit`` command's parser."""
    ap = sub.add_parser(
        "audit",
        help="suppressed cells of published counts tables: which can be recovered",
        description="Read published counts tables (CSV, one row per cell: the QI columns, "
        "the sensitive column when the table has it, and the count) and say, for each "
        "suppressed cell, the lowest and highest count it can have given every published "
        "cell and margin, and whether it is exposed (narrower than the protection).",
        epilog=epilog,
        formatter_class=formatter,
    )
    ap.add_argument("release", nargs="+", metavar="TABLE.csv", help="counts tables (CSV)")
    ap.add_argument(
        "--qi",
        nargs="+",
        required=True,
        metavar="COL",
        help="quasi-identifier columns (each table has those it has)",
    )
    ap.add_argument("--sa", metavar="COL", help="sensitive column (in the tables that have it)")
    ap.add_argument(
        "--knowledge",
        metavar="FILE",
        help="knowledge file: what the adversary knows besides the tables (one fact a line, "
        'e.g. P(disease = "flu" | region = "S") = 0)',
    )
    add_table_options(ap, count_required=True)
    ap.add_argument("--out", metavar="FILE", help="the audit of every cell, as CSV")
    ap.add_argument("--html", metavar="FILE", help="the page: what the tables reveal (HTML)")
    ap.add_argument(
        "--na",
        nargs="+",
        default=[],
        metavar="VALUE",
        help="cells read as missing besides the empty cell",
    )


# ------------------------------------------------------------------------ reading
def _names(paths) -> list[str]:
    """Each table's name: its file name, or the path as given when two share a name."""
    names = [Path(p).name for p in paths]
    return names if len(set(names)) == len(names) else [str(p) for p in paths]


def read_tables(args) -> list:
    """One :class:`~maxent_privacy.Tabulated` per file of ``args.release``; a bad table is
    an :class:`InputError` naming the table (its file name), row and column."""
    from ..releases.tabulated import Tabulated

    qi = list(args.qi)
    frames = [read_release_csv(path, na=getattr(args, "na", ())) for path in args.release]
    named = [*qi, *([args.sa] if args.sa else [])]
    seen = {str(c) for frame in frames for c in frame.columns}
    unused = [c for c in named if c not in seen]
    if unused:
        raise UsageError(
            f"column {unused[0]!r} (--qi/--sa) is in none of the tables "
            f"({', '.join(map(str, args.release))})"
        )
    tables = []
    for path, name, frame in zip(args.release, _names(args.release), frames, strict=True):
        columns = set(map(str, frame.columns))
        own = [q for q in qi if q in columns]
        sa = args.sa if args.sa is not None and args.sa in columns else None
        try:
            tables.append(
                Tabulated(
                    frame,
                    qi=own,
                    sa=sa,
                    count=args.count,
                    rounding=args.rounding,
                    suppressed=tuple(args.suppressed),
                    name=name,
                )
            )
        except ReleaseError as exc:
            message = one_line(exc, limit=MAX_MESSAGE // 2)
            other = [c for c in frame.columns if c not in {*named, args.count}]
            hint = (
                f"; the file's columns {', '.join(map(str, other))} are not read (name them "
                "with --qi or --sa)"
                if other and "listed twice" in message
                else ""
            )
            raise InputError(f"{message}{hint} (table file {path})") from exc
    return tables


def _wrapped(what, args):
    """``what()``, a ReleaseError (inconsistent tables, ...) as one line naming the
    files."""
    try:
        return what()
    except ReleaseError as exc:
        message = one_line(exc, limit=MAX_MESSAGE // 2).replace("total=", "--total")
        raise InputError(f"{message} (table files {', '.join(map(str, args.release))})") from exc


def table_model(args, tables=None):
    """The model of the tables of ``args`` (no population): a TableModel, with the facts
    of ``--knowledge`` (a knowledge file, as for releases) added."""
    from ..knowledge.parser import apply_knowledge
    from ..model import MaxEntModel
    from .releases import load_statements

    statements = load_statements(args)
    tables = read_tables(args) if tables is None else tables
    model = _wrapped(lambda: MaxEntModel(tables, total=getattr(args, "total", None)), args)
    apply_knowledge(model, statements)
    return model


_CSV, _HTML = (".csv",), (".html", ".htm")


def _check_targets(args, outputs: dict) -> None:
    """``{flag: (path or None, suffixes)}``: extensions, folders, inputs and each other,
    before any work."""
    for flag, (path, suffixes) in outputs.items():
        if path is None:
            continue
        if Path(path).suffix.lower() not in suffixes:
            kind = "a .csv" if suffixes == _CSV else "an .html"
            raise UsageError(f"{flag} {path!r}: give {kind} file name")
        files.check_target(path)
    inputs = {"the table": list(map(str, args.release))}
    if getattr(args, "population", None) is not None:
        inputs["the population file"] = [str(args.population)]
    if getattr(args, "knowledge", None) is not None:
        inputs["the knowledge file"] = [str(args.knowledge)]
    labels = {flag: path for flag, (path, _) in outputs.items() if path is not None}
    files.check_outputs(labels, inputs)


def _protection_of(args) -> float:
    from ..report.tables import DEFAULT_PROTECTION

    return DEFAULT_PROTECTION if args.protection is None else float(args.protection)


def _command(args) -> str | None:
    argv = getattr(args, "argv", None)
    return None if argv is None else shlex.join(["maxent-privacy", *argv])


# ------------------------------------------------------------------------ audit
def _print_audit(audit, out) -> None:
    from ..report.tables import _hidden_rows, cell_words

    keys = list(audit.attrs.get("keys", []))
    for name in dict.fromkeys(audit["table"]):
        rows = audit[audit["table"] == name]
        hidden = _hidden_rows(rows)
        print(
            f"{plain(name)}: {len(rows):,} cell{'s' if len(rows) != 1 else ''}, "
            f"{len(hidden):,} suppressed",
            file=out,
        )
        for _, r in hidden.head(MAX_PRINTED).iterrows():
            flags = []
            if r["recovered"]:
                flags.append("recovered exactly")
            if r.get("exposed", False):
                flags.append("EXPOSED")
            proved = (
                bool(r["lower_exact"] and r["upper_exact"])
                if "lower_exact" in r
                else bool(r["tight"])
            )
            if not proved:
                flags.append("not proved")
            print(
                f"  {plain(cell_words(r, keys))}: lower {_num(r['lower'])}, upper "
                f"{_num(r['upper'])}, width {_num(r['width'])}"
                + (f" ({', '.join(flags)})" if flags else ""),
                file=out,
            )
        if len(hidden) > MAX_PRINTED:
            print(f"  ... and {len(hidden) - MAX_PRINTED:,} more (--out has every one)", file=out)


def _num(v) -> str:
    v = float(v)
    if v != v:
        return "-"
    if v == float("inf"):
        return "unbounded"
    return f"{v:g}" if abs(v - round(v)) < 1e-9 else f"{v:.2f}"


def _audited(args):
    """(tables, model, result, audit frame) of the tables the arguments name: the model,
    its maximum-entropy table and every published cell's bounds."""
    from ..report.tables import audit_frame

    tables = read_tables(args)
    model = table_model(args, tables)
    result = _wrapped(model.solve, args)
    frame = _wrapped(
        lambda: audit_frame(
            model, result, exact=args.exact, protection=_protection_of(args),
            time_limit=args.time_limit,
        ),
        args,
    )  # fmt: skip
    return tables, model, result, frame


def _page(args, model, result, frame):
    """(the reconstruction summary, the tables' page as UTF-8 bytes)."""
    from ..report.tables import render_tables_report

    rec = _wrapped(lambda: model.reconstruction(time_limit=args.time_limit), args)
    page = render_tables_report(
        model, result, frame, rec, protection=_protection_of(args), exact=args.exact,
        sources=args.release, command=_command(args),
    )  # fmt: skip
    return rec, page.encode("utf-8")


def audit(args, out) -> int:
    """The ``audit`` command (see the module docstring); returns the exit code."""
    from ..report.safety import spreadsheet_safe
    from ..report.tables import audit_summary

    _check_targets(args, {"--out": (args.out, _CSV), "--html": (args.html, _HTML)})
    tables, model, result, frame = _audited(args)
    data = {}
    if args.out is not None:
        data[args.out] = files.frame_bytes(args.out, spreadsheet_safe(frame), index=False)
    if args.html is not None:
        data[args.html] = _page(args, model, result, frame)[1]
    n = len(tables)
    print(
        f"{n} table{'s' if n != 1 else ''}, {model.total:g} records, "
        f"{model.n_combinations:,} combinations; maximum-entropy table "
        + ("verified" if result.certificate["verified"] else "NOT verified"),
        file=out,
    )
    _print_audit(frame, out)
    print(audit_summary(frame)["sentence"], file=out)
    files.write_together(data)
    for flag, path in (("audit", args.out), ("page", args.html)):
        if path is not None:
            print(f"{flag} written to {path}", file=out)
    return 0


# ------------------------------------------------------------------------ report --tables
def check_tables_report(args) -> None:
    """The ``report`` options that do not go with ``--tables``."""
    if args.risk_out is not None and getattr(args, "population", None) is None:
        raise UsageError("--risk-out needs people: give --population with --tables")


def report_tables(args, out) -> int:
    """``report --tables`` without a population: the page of the tables."""
    from ..report.tables import audit_summary

    check_tables_report(args)
    html = args.out or "report.html"
    _check_targets(args, {"--out": (html, _HTML)})
    tables, model, result, frame = _audited(args)
    rec, page = _page(args, model, result, frame)
    files.write_together({html: page})
    n = len(tables)
    print(
        f"{n} table{'s' if n != 1 else ''}, {model.total:g} records; "
        f"{rec['certain_records']:g} certain records, {rec['pinned']:,} of "
        f"{rec['combinations']:,} combinations pinned, {rec['unique_pinned']:,} population "
        + ("unique" if rec["unique_pinned"] == 1 else "uniques")
        + " rebuilt"
        + ("" if rec["proved"] else " (not proved: time limit)"),
        file=out,
    )
    print(audit_summary(frame)["sentence"], file=out)
    print(f"report written to {html}", file=out)
    return 0


def population_model(args):
    """``report --tables --population``: the tables and the population as one model of
    people (``MaxEntModel(tables, populations=[pop])``) and no knowledge names."""
    from ..knowledge.parser import apply_knowledge
    from ..model import MaxEntModel
    from .releases import _population, load_statements

    statements = load_statements(args)
    tables = read_tables(args)
    qi = [q for q in args.qi if any(q in t.qi for t in tables)]
    people = _population(args, qi, f"table files {', '.join(map(str, args.release))}")
    try:
        # one population serves every table, given beside the first (docs/tables.md)
        model = MaxEntModel(tables, populations=[people] + [None] * (len(tables) - 1))
    except NotImplementedError as exc:
        raise UsageError(
            f"--tables --population: tables with a known population are not supported by "
            f"this version ({one_line(exc)})"
        ) from exc
    except ReleaseError as exc:
        message = one_line(exc, limit=MAX_MESSAGE // 2)
        where = ", ".join(map(str, args.release))
        raise InputError(
            f"{message} (table files {where}, population file {args.population})"
        ) from exc
    names = apply_knowledge(model, statements)
    return model, names
