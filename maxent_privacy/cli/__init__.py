"""The ``maxent-privacy`` command.

``maxent-privacy demo`` prints Figure 1 of Du et al. (SIGMOD 2008): the bucketized table,
the maximum-entropy posterior without knowledge, then with P(Breast Cancer | male) = 0.

``maxent-privacy analyze release.csv --qi A B --sa S --group G [--knowledge facts.txt]
[--out posterior.csv|posterior.json]`` estimates P(S | QI) of a bucketized release in a CSV
file under the knowledge in a text file (see :mod:`maxent_privacy.knowledge.parser`), prints the
solve's summary (certificate and the facts' duals) and writes the posterior.

A generalized release (QI cells such as ``[44-47]``, ``20-29``, ``[20, 30[``, ``<30``,
``021**``, ``{a, b}``, ``*``: see :mod:`maxent_privacy.releases.generalized`) needs its population,
``--population people.csv``: a CSV file with a person id column (``--population-id``;
default the ``--person`` column's name if the file has it, else its first column) and the
exact value of every QI column (columns of plain numbers are read as numbers, others as
text). Without ``--population``, a release in which some QI cell is generalized is refused
rather than read as exact values; ``--formats ours`` reads only our own cell syntax and
``--formats none`` every cell as an exact value.

``maxent-privacy report release.csv [more.csv ...] --qi A B --sa S [--group G] [--person P]
[--knowledge facts.txt] [--threshold 0.5] [--out report.html] [--risk-out risk.csv]``
says who is at risk (:mod:`maxent_privacy.report`): a self-contained HTML report for a
privacy officer and a risk table, one row per person (CSV, or Parquet by extension).
It reads every release kind as ``analyze`` does (``--population``, ``--population-id``,
``--formats``); without ``--group`` the equivalence classes are the rows with identical
QI cells (ARX writes no group column), and a note on standard error says so
(:mod:`maxent_privacy.cli.releases`).

``maxent-privacy audit TABLE.csv [TABLE.csv ...] --qi A B [--sa S] --count COL
[--knowledge FILE] [--suppressed x ""] [--rounding B] [--total N] [--protection P]
[--exact] [--time-limit S] [--out audit.csv] [--html audit.html]`` audits published counts tables
(:class:`~maxent_privacy.Tabulated`, one per file, named by its file name): each
suppressed cell's lowest and highest count given every published cell and margin, and
whether it is narrower than the protection; ``report T1.csv T2.csv --tables --qi ...
--count COL`` writes the page of the tables (what was published, the cells recovered, how
much of the microdata is pinned; :mod:`maxent_privacy.cli.tables`).

``maxent-privacy plan [HISTORY.csv ...] --next NEW.csv --qi A B --sa S --person P
[--tau 0.5] [--m 3] [--knowledge FILE] [--adversary maxent|learned|worst] --out next.csv
[--report plan.html]`` plans the next release of a table already published
(:func:`maxent_privacy.anonymize.plan_release`, :mod:`maxent_privacy.cli.plan`): the
release and an HTML page of the checks, the people repaired and the utility, written as
one unit.

Cells are read as written: the empty cell is the only missing marker (``NA``, Namibia's
code, ``None`` and ``null`` are values); ``--na VALUE ...`` names more. A typo in an option
or a choice gets "did you mean ...?" (:mod:`maxent_privacy.cli.suggest`).
``maxent-privacy --version`` prints the version. The argument parser imports neither
pandas nor cvxpy: ``--help`` and ``--version`` answer at once.

Errors. A user's mistake is one line on stderr, ``error: <message>``, naming the file,
column, value or fact at fault, and never a Python traceback. Knowledge that cannot hold
together adds, below that line, a table of the conflicting facts with how far each must
move, alone, to become feasible (:func:`maxent_privacy.solve.conflicts.conflict_moves`).

The release must be a comma-separated UTF-8 text file (``.gz``, ``.bz2``, ``.xz``,
``.zip`` or ``.zst`` when the name says so) with a header line and the same number of
fields on every line. The output file is written whole or not at all (see
:mod:`maxent_privacy.files`); ``report``'s two files (``--out``, ``--risk-out``) are one
unit: both are replaced, or neither (Ctrl-C and a full disk included). An output that is
an input (a release, ``--population``, ``--knowledge``; through a link too) or the other
output is refused before any work (exit 2). Values from the data printed on the terminal
have their control characters escaped, and long ones are cut with ``...``. The risk CSV
prefixes with ``'`` each text cell that a spreadsheet would run as a formula (``=``,
``+``, ``-``, ``@``, tab, carriage return); ``--raw-csv`` keeps them as they are. Exit
codes:

===  =================================================================================
0    success
1    internal error: a bug in maxent-privacy; the traceback is printed, please report it
2    usage or bad input: arguments (argparse also exits 2), an unreadable, empty or
     malformed release, population or knowledge file, generalized cells without
     ``--population``, an unknown solver, knowledge that the release cannot satisfy
     (the facts contradict the data or each other), an output that is an input file
     or the other output (refused before any work)
3    the solver failed: no optimal answer, or one that failed our certificate check
     (try another ``--solver``)
4    output not written: ``--out``, ``--risk-out`` (no such folder, not writable, disk
     full) or standard output; nothing partial is left and an existing file is unchanged
5    ``plan`` only: no release passed the checks; the best found is written all the same
     and the page says why
130  interrupted (Ctrl-C)
141  standard output closed early (``maxent-privacy ... | head``): no message, as for
     any command killed by SIGPIPE (128 + 13)
===  =================================================================================

Modules:

- ``command``: the argument parser, :func:`main`, the commands and their exit codes
- ``argtypes``: the numbers the options take (a probability, seconds, a whole number)
- ``inputs``: reading a release or population CSV file, with one-line errors
- ``releases``: from the files to a model: bucketized or generalized releases (with
  ``--population``), the knowledge file, groups derived when ``report`` has no ``--group``
- ``suggest``: the argument parser that suggests the option or choice meant ("did you
  mean ...?")
- ``outputs``: output paths checked against the inputs; the report's files written as one unit
- ``plan``: ``maxent-privacy plan``: the next release planned against the published ones
- ``terminal``: data shown in the terminal: control characters escaped, long values cut
- ``report_options``: ``report``'s ``--bounds``, ``--nonsensitive`` and ``--progress``
- ``tables``: published counts tables: ``maxent-privacy audit`` and ``report --tables``
- ``progress``: the progress bar of long commands (standard error)
- ``distributed``: ``maxent-privacy distributed``: pooled releases built and solved on a
  Dask cluster (:mod:`maxent_privacy.distributed`; Dask imported when it runs)
- ``__main__``: ``python -m maxent_privacy.cli``
"""

import importlib

from .command import (
    EXIT_BROKEN_PIPE,
    EXIT_CODES,
    EXIT_INPUT,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_OUTPUT,
    EXIT_SOLVER,
    SOLVER_HELP,
    analyze,
    demo,
    main,
    report,
)
from .inputs import read_release_csv

# pandas, numpy, scipy and cvxpy are imported by the commands that need them, never by the
# argument parser: ``maxent-privacy --help`` and ``--version`` stay quick
_LAZY = {
    "pd": ("pandas", None),
    "datasets": ("maxent_privacy.datasets", None),
    "Bucketized": ("maxent_privacy.releases.bucketized", "Bucketized"),
    "MaxEntModel": ("maxent_privacy.model", "MaxEntModel"),
}


def __getattr__(name: str):
    """``cli.MaxEntModel``, ``cli.pd``, ...: imported on first use (PEP 562)."""
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, attr = _LAZY[name]
    value = importlib.import_module(module)
    return value if attr is None else getattr(value, attr)


__all__ = [
    "EXIT_BROKEN_PIPE",
    "EXIT_CODES",
    "EXIT_INPUT",
    "EXIT_INTERNAL",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_OUTPUT",
    "EXIT_SOLVER",
    "SOLVER_HELP",
    "analyze",
    "demo",
    "main",
    "read_release_csv",
    "report",
]
