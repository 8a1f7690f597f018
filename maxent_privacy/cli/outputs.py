"""What a command writes: outputs checked against its inputs, and written as one unit.

:func:`check_outputs` refuses, before any work, an output path (``--out``,
``--risk-out``) that names an input file (a release, ``--population``, ``--knowledge``) or
the other output, directly or through a symbolic or hard link: a one-line
:class:`~maxent_privacy.errors.SameFileError` naming both paths (exit code 2).
:func:`write_report_files` renders the report's HTML and risk table first and writes them
with :func:`maxent_privacy.files.write_together`: both files or neither.
"""

from __future__ import annotations

from pathlib import Path

from .. import files

__all__ = ["check_outputs", "input_files", "write_report_files"]

#: the arguments that name input files, and how a message calls them
_INPUTS = (
    ("release", "the release"),
    ("population", "the population file"),
    ("knowledge", "the knowledge file"),
)


def input_files(args) -> dict[str, list[str]]:
    """``{how a message calls it: [paths]}`` of every input file the command reads."""
    out = {}
    for attr, label in _INPUTS:
        value = getattr(args, attr, None)
        if value is None:
            continue
        out[label] = [value] if isinstance(value, (str, Path)) else list(value)
    return out


def check_outputs(args, outputs: dict) -> None:
    """Raise ``SameFileError`` when an output of ``outputs`` (``{flag: path or None}``) is
    an input file of ``args`` or another output. ``--out`` left at its default is named
    so."""
    labels = {}
    for flag, path in outputs.items():
        if path is None:
            continue
        default = flag == "--out" and getattr(args, "out", None) is None
        labels[f"{flag} (default)" if default else flag] = path
    files.check_outputs(labels, input_files(args))


def write_report_files(result, table, html=None, risk=None, *, csv_safe=True, **render):
    """Render the HTML report (``render``: the options of
    :func:`maxent_privacy.report.render_report`) and the risk table (a CSV's text cells
    neutralized unless ``csv_safe`` is false, see
    :func:`maxent_privacy.report.safety.spreadsheet_safe`), then write both as one unit."""
    from ..report.html import render_report
    from ..report.safety import spreadsheet_safe

    data = {}
    if risk is not None:
        csv = Path(risk).suffix.lower() == ".csv"
        written = spreadsheet_safe(table) if csv and csv_safe else table
        data[risk] = files.frame_bytes(risk, written, index=False)
    if html is not None:
        data[html] = render_report(result, table=table, **render).encode("utf-8")
    files.write_together(data)
