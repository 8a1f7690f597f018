"""The self-contained HTML report for a privacy officer.

:func:`write_report` writes one HTML file: the release and the knowledge in plain words,
how many people are at risk, the riskiest people, a figure of the risk of everyone, the
facts that move the estimate most, the certificate and the commands that reproduce it.
``result.report(...)`` and the command ``maxent-privacy report`` call it.

>>> from maxent_privacy import Bucketized, MaxEntModel, datasets
>>> release = Bucketized(datasets.du2008_figure1(), qi=["gender", "degree"],
...                      sa="disease", group="bucket", person="name")
>>> model = MaxEntModel(release)
>>> page = render_report(model.solve(), threshold=0.99)
>>> "<html" in page
True
"""

from __future__ import annotations

import base64
import io
import math
import re
import shlex
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._validation import ArgumentTypeError, check_integer, deprecated_alias
from ..files import check_outputs, check_target, write_text
from .act import act_context
from .adversary_scale import adversary_scale, scale_adversaries
from .risk import check_threshold, per_person, risk_summary, risk_table, table_column
from .statements import stated_facts

__all__ = ["fact_in_words", "render_report", "write_report"]


# ------------------------------------------------------------------------ in words
def _pct(p: float) -> str:
    if not math.isfinite(p):
        return str(p)
    return f"{100 * p:.3g}%"


_P_LABEL = re.compile(r"^P\((?P<what>.+?)(?: \| (?P<given>.+))?\)$")
_PERSON_LABEL = re.compile(r"^P\((?P<who>.+?) has (?P<what>.+)\)$")
_COUNT_LABEL = re.compile(r"^count\((?P<what>.+?) among (?P<who>.+)\)$")


#: a comparison of a condition (``>=`` before ``>``: ``age >= 55`` stays whole)
_COMPARISON = re.compile(r"\s*(==|!=|>=|<=|=|<|>)\s*")


def _spaced(conditions: str) -> str:
    """``gender=male, age >= 55`` as ``gender = male, age >= 55``: one space each side of
    each condition's first comparison (a value such as ``<=50K`` is left as it is)."""
    return ", ".join(
        _COMPARISON.sub(lambda m: f" {m[1]} ", part, count=1) for part in conditions.split(", ")
    )


def _subject(label: str) -> tuple[str, bool]:
    """``(words, is a probability)`` for the label of ``model.P``/``person.P``/count."""
    match = _PERSON_LABEL.match(label)
    if match and " | " not in label:
        return f"the chance that {match['who']} has {match['what']}", True
    match = _COUNT_LABEL.match(label)
    if match:
        return f"the number of {match['who']} who have {match['what']}", False
    match = _P_LABEL.match(label)
    if match:
        given = match["given"]
        who = f"people with {_spaced(given)}" if given else "all people"
        return f"the share of {who} who have {match['what']}", True
    return label, False


def fact_in_words(fact) -> str:
    """One sentence for a fact made of ``model.P(...)``-like terms; its name otherwise."""
    from ..knowledge.facts import label_of, tag_of

    constraint = fact.constraint
    kind = type(constraint).__name__
    soft = ""
    if fact.sense == "soft":
        soft = f" (soft: may give way, at a cost of {fact.weight:g} per unit)"
    args = getattr(constraint, "args", ())
    if kind not in ("Equality", "Inequality", "Zero", "NonPos") or len(args) != 2:
        return f"{fact.name}{soft}"
    left, right = args
    op = "is exactly" if kind == "Equality" else "is at most"
    if tag_of(left) is None and tag_of(right) is not None:  # c <= expr: expr is at least c
        left, right = right, left
        op = "is exactly" if kind == "Equality" else "is at least"
    label = label_of(left)
    if tag_of(left) is None or label is None:
        return f"{fact.name}{soft}"
    subject, prob = _subject(label)
    if tag_of(right) is not None and label_of(right):
        other, _ = _subject(label_of(right))
        return f"{subject[0].upper()}{subject[1:]} {op} {other}{soft}."
    if right.variables():
        return f"{fact.name}{soft}"
    value = np.asarray(right.value, dtype=float).ravel()
    if value.size != 1:
        return f"{fact.name}{soft}"
    shown = _pct(float(value[0])) if prob else f"{float(value[0]):g}"
    return f"{subject[0].upper()}{subject[1:]} {op} {shown}{soft}."


def _dual_words(fact, dual: float) -> str:
    if not math.isfinite(dual):
        return (
            "settles some values exactly (the presolve fixed them), so it shapes the estimate "
            "more than any rate of change can say"
        )
    if abs(dual) < 1e-9:
        return "does not move the estimate: the release implies it, or it is slack"
    step = 0.01 * abs(dual)
    if fact.sense == "<=" or (fact.sense == "soft" and fact.soft_sense == "<="):
        return (
            f"loosening it by 0.01 would raise the adversary's remaining uncertainty by "
            f"{step:.3g} nats per record"
        )
    direction = "raise" if dual > 0 else "lower"
    return (
        f"raising its value by 0.01 would {direction} the adversary's remaining uncertainty "
        f"by {step:.3g} nats per record"
    )


def _influence(result, limit: int = 12) -> list[dict]:
    """Facts ranked by how much they move the estimate (|dual|; fixed facts first)."""
    facts = {f.name: f for f in result.model.facts}
    rows = []
    for name, dual in result.duals.items():
        base = re.sub(r"\[\d+\]$", "", str(name))
        fact = facts.get(str(name)) or facts.get(base)
        if fact is None:
            continue
        d = float(dual)
        key = math.inf if math.isnan(d) else abs(d)
        rows.append(
            {
                "name": str(name),
                "dual": "fixed" if math.isnan(d) else f"{d:.4g}",
                "words": _dual_words(fact, math.inf if math.isnan(d) else d),
                "key": key,
            }
        )
    rows.sort(key=lambda r: -r["key"])
    return rows[:limit]


# ------------------------------------------------------------------------ figures
def _png(draw, figsize) -> str:
    """A figure drawn by ``draw(fig)`` as a base64 PNG (no pyplot: no global state)."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize, layout="constrained")
    draw(fig)
    with io.BytesIO() as fh:  # in memory: the page embeds it
        fig.savefig(fh, format="png", dpi=100)
        return base64.b64encode(fh.getvalue()).decode("ascii")


def _figures(result, table: pd.DataFrame, threshold: float, top: int) -> list[dict]:
    from .plots import plot_risk

    figures = [
        {
            "alt": "histogram of every person's risk, with the share of people at or above "
            "each risk level",
            "caption": "How exposed everyone is: people per risk level (bars) and the share "
            "of people at or above each level (line); the dashed line is the threshold.",
            "png": _png(lambda fig: plot_risk(table, threshold, ax=fig.subplots()), (7.0, 3.8)),
        }
    ]
    # the riskiest rows' intervals (read off the table: no dense posterior of every value)
    from .interval_plot import MAX_ROWS, plot_intervals

    at = table[table["at_risk"]] if table["at_risk"].any() else table
    rows = min(top, MAX_ROWS, len(at))
    if rows:
        keys = (
            list(table.columns[:1])
            if per_person(result)
            else [table_column(table, q) for q in result.model.qi]  # never our value column
        )
        what = "people" if per_person(result) else "(QI value, group) classes"
        bars = "lower" in table
        figures.append(
            {
                "alt": "each riskiest row's likeliest value: its worst-case interval as a bar "
                "and its maximum-entropy estimate as a dot",
                "caption": f"The {rows:,} riskiest {what}"
                + (f" (of {len(at):,} at risk)" if table["at_risk"].any() else "")
                + ": the probability of their likeliest value under the maximum-entropy "
                "estimate (dot)"
                + (" and its interval over every table allowed (bar)" if bars else "")
                + "; the dashed line is the threshold.",
                "png": _png(
                    lambda fig: plot_intervals(at, keys, threshold, fig.subplots(), top=rows),
                    (9.0, min(9.0, 1.4 + 0.22 * rows)),
                ),
            }
        )
    return figures


# ------------------------------------------------------------------------ the page
def _release_words(model) -> list[str]:
    lines = []
    for k, rel in enumerate(model.releases, start=1):
        kind = type(rel).__name__
        what = "bucketized (anatomy-style)" if kind == "Bucketized" else "generalized"
        name = f"Release {k}" if len(model.releases) > 1 else "The release"
        fake = rel.n_records - rel.n_people
        lines.append(
            f"{name} is a {what} table of {rel.n_records:,} records in {rel.n_groups:,} groups "
            f"(column {rel.group!r})"
            + (f", with person ids in column {rel.person!r}" if rel.person else "")
            + (
                f"; {fake:,} of its records are counterfeit (column "
                f"{getattr(rel, 'counterfeits', None)!r}: they add values to their groups "
                "but are no one, and no row below is about them)"
                if fake
                else ""
            )
            + "."
        )
    if len(model.releases) > 1:
        lines.append(
            f"The {len(model.releases)} releases are pooled: the same people appear in each, "
            "so what one release hides another may reveal."
        )
    values = sorted(map(str, model.cells[model.sa].unique()))
    shown = ", ".join(values[:15]) + (f" and {len(values) - 15} more" if len(values) > 15 else "")
    lines.append(
        "Quasi-identifiers (what an adversary may already know about a person): "
        + ", ".join(model.qi)
        + f". Sensitive attribute: {model.sa} ({len(values)} values: {shown})."
    )
    return lines


def _cli_line(m, files: list, threshold: float, facts_file: str) -> list | None:
    """The command line that reads the releases again: bucketized releases whose group
    (and person) columns have the same names, no counterfeits; else None."""
    rels = m.releases
    bucketized = all(type(r).__name__ == "Bucketized" for r in rels)
    fake = any(getattr(r, "counterfeits", None) is not None for r in rels)
    same = len({(r.group, r.person) for r in rels}) == 1 and not fake  # no CLI option
    if not (bucketized and same and len(files) == len(rels)):
        return None
    group, person = rels[0].group, rels[0].person
    cli = ["maxent-privacy", "report", *files, "--qi", *map(str, m.qi), "--sa", str(m.sa)]
    cli += ["--group", str(group)] + (["--person", str(person)] if person else [])
    cli += ["--knowledge", facts_file] if m.facts else []
    return cli + ["--threshold", f"{threshold:g}", "--out", "report.html", "--risk-out", "risk.csv"]


def _read_release(k: int, path: str, r) -> list[str]:
    """The Python lines that read release ``k`` (``rel{k}``) from ``path``."""
    roles = f"qi={list(r.qi)!r}, sa={r.sa!r}, group={r.group!r}" + (
        f", person={r.person!r}" if r.person else ""
    )
    if type(r).__name__ == "Generalized":
        lines = [f"frame{k} = pd.read_csv({path!r}, dtype=str)"]
        if re.fullmatch(r"class(_\d+)?", str(r.group)):  # derived by --group auto
            lines += [
                f"if {r.group!r} not in frame{k}:  # the classes: rows with identical QI cells",
                f"    frame{k}[{r.group!r}] = frame{k}.groupby({list(r.qi)!r}).ngroup() + 1",
            ]
        return [*lines, f"rel{k} = mp.Generalized(frame{k}, {roles})"]
    read = f"pd.read_csv({path!r}, dtype=str)"
    if getattr(r, "counterfeits", None) is not None:  # read as True/False or 1/0
        text = [*r.qi, r.sa, r.group] + ([r.person] if r.person else [])
        read = f"pd.read_csv({path!r}, dtype={dict.fromkeys(text, 'str')!r})"
        roles += f", counterfeits={r.counterfeits!r}"
    return [f"rel{k} = mp.Bucketized({read}, {roles})"]


def _read_population(k: int, path: str, population: pd.DataFrame) -> list[str]:
    """The Python lines that read population ``k`` (``pop{k}``): ids as the index, QI
    columns of numbers as numbers (as ``--population`` reads them)."""
    index = population.index.name or "person"
    lines = [f"pop{k} = pd.read_csv({path!r}, dtype=str).set_index({index!r})"]
    for col in population.columns:
        kind = population[col].dtype.kind
        if kind in "iu":
            lines.append(f"pop{k}[{col!r}] = pop{k}[{col!r}].astype('int64')")
        elif kind == "f":
            lines.append(f"pop{k}[{col!r}] = pop{k}[{col!r}].astype(float)")
    return lines


def _python_model(m, files: list, population_files: list) -> list[str]:
    """The Python lines that read the releases (and populations) and make ``model``."""
    if getattr(m, "tables", None) and len(m.tables) == len(files):
        return _python_tables(m, files, population_files)
    lines = []
    rels, pops = m.releases, list(m.populations)
    read: dict[int, str] = {}
    for k, (path, r) in enumerate(zip(files, rels, strict=True), start=1):
        lines += _read_release(k, path, r)
    for k, population in enumerate(pops, start=1):
        if population is None:
            continue
        same = next((j for j in read if pops[j - 1] is population), None)
        if same is not None:  # one population for several releases: read once
            read[k] = read[same]
            continue
        path = population_files[k - 1] if k <= len(population_files) else None
        path = path or ("POPULATION.csv" if len(pops) == 1 else f"POPULATION{k}.csv")
        lines += _read_population(k, str(path), population)
        read[k] = f"pop{k}"
    names = ", ".join(f"rel{k}" for k in range(1, len(rels) + 1))
    released = f"[{names}]" if len(rels) > 1 else names
    if read:
        given = ", ".join(read.get(k, "None") for k in range(1, len(rels) + 1))
        return [*lines, f"model = mp.MaxEntModel({released}, populations=[{given}])"]
    return [*lines, f"model = mp.MaxEntModel({released})"]


def _python_tables(m, files: list, population_files: list) -> list[str]:
    """The Python lines that read published counts tables and their population."""
    lines = []
    for k, (path, t) in enumerate(zip(files, m.tables, strict=True), start=1):
        options = f"qi={list(t.qi)!r}, sa={t.sa!r}, count={t.count!r}"
        if t.rounding is not None:
            options += f", rounding={t.rounding}"
        if t.suppressed_words != ("x", ""):
            options += f", suppressed={t.suppressed_words!r}"
        lines += [
            f"frame{k} = pd.read_csv({str(path)!r}, dtype=str, keep_default_na=False)",
            f"rel{k} = mp.Tabulated(frame{k}, {options}, name={t.name!r})",
        ]
    population = next((p for p in m.populations if p is not None), None)
    names = ", ".join(f"rel{k}" for k in range(1, len(files) + 1))
    if population is None:
        return [*lines, f"model = mp.MaxEntModel([{names}])"]
    path = str(population_files[0]) if population_files else "POPULATION.csv"
    lines += _read_population(1, path, population)
    rest = ", None" * (len(files) - 1)
    return [*lines, f"model = mp.MaxEntModel([{names}], populations=[pop1{rest}])"]


def _reproduce(result, threshold: float, command, sources, knowledge, populations=None) -> dict:
    """The command line and the Python that make this report again, from what the report
    knows: the release files' names (``RELEASE.csv`` when not given), their columns, the
    population files' names (``POPULATION.csv`` when not given) and the knowledge file.

    The command line reads bucketized releases whose group (and person) columns have the
    same names; for other releases only the Python is given (or the command that made it).
    """
    m = result.model
    n = len(m.releases)
    files = (
        list(map(str, sources))
        if sources
        else (["RELEASE.csv"] if n == 1 else [f"RELEASE{k}.csv" for k in range(1, n + 1)])
    )
    if len(files) != n:  # one name per release, else placeholders
        files = ["RELEASE.csv"] if n == 1 else [f"RELEASE{k}.csv" for k in range(1, n + 1)]
    if isinstance(populations, (str, bytes)) or not np.iterable(populations):
        populations = [] if populations is None else [populations]
    population_files = [None if p is None else str(p) for p in populations]
    if len(population_files) == 1 and n > 1:
        population_files *= n
    facts_file = str(knowledge or "KNOWLEDGE.txt")
    cli = _cli_line(m, files, threshold, facts_file)
    python = [
        "import pandas as pd",
        "import maxent_privacy as mp",
        "from maxent_privacy.report import write_risk_table",
    ]
    if m.facts:
        python.append("from maxent_privacy.parser import apply_knowledge, load_knowledge")
    python += _python_model(m, files, population_files)
    if m.facts:
        python.append(f"apply_knowledge(model, load_knowledge({facts_file!r}))")
    python += [
        "result = model.solve()",
        f'result.report("report.html", threshold={threshold:g})',
        f'write_risk_table(result, "risk.csv", threshold={threshold:g})',
    ]
    shown = command if command is not None else (shlex.join(cli) if cli else None)
    return {"command": shown, "given": command is not None, "python": "\n".join(python)}


def _cell(value) -> str:
    if isinstance(value, (float, np.floating)):  # the risk table's rounding: 4 decimals
        return f"{float(value):.4f}"
    return str(value)


@dataclass(frozen=True)
class _Provenance:
    """What a report was made from (keywords of :func:`render_report`): the release
    files' names, the knowledge file's name, the command line and the population files'
    names (one, or one per release; for the "Reproduce it" Python)."""

    sources: object = None
    knowledge_file: object = None
    command: str | None = None
    populations: object = None


def _provenance(given: dict) -> _Provenance:
    """:func:`render_report`'s provenance keywords; any other keyword raises TypeError
    (as a parameter list would)."""
    given = dict(given)
    deprecated_alias(given, "knowledge", "knowledge_file", "render_report()", stacklevel=4)
    unknown = [k for k in given if k not in _Provenance.__dataclass_fields__]
    if unknown:
        raise ArgumentTypeError(
            f"render_report() got an unexpected keyword argument {unknown[0]!r}"
        )
    return _Provenance(**given)


_BREAK_AFTER = re.compile(r"([_\-/.])(?=\w)")


def breakable(name) -> str:
    """A column name for a table header: escaped, with a line-break opportunity (``<wbr>``)
    after each ``_``, ``-``, ``/`` or ``.`` inside it, so that ``marital_status`` wraps
    between its words rather than mid-word or not at all (the data is escaped first: only
    our ``<wbr>`` is markup).

    >>> str(breakable("native_country<b>"))
    'native_<wbr>country&lt;b&gt;'
    """
    from markupsafe import Markup, escape

    return Markup(_BREAK_AFTER.sub(r"\1<wbr>", str(escape(str(name)))))


def environment():
    """The pages' jinja2 environment: our templates, everything escaped, ``breakable``."""
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("maxent_privacy.report", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["breakable"] = breakable
    return env


def render_report(
    result,
    threshold: float = 0.5,
    *,
    top: int = 20,
    title: str | None = None,
    table: pd.DataFrame | None = None,
    nonsensitive=(),
    bounds: str = "auto",
    adversary: str = "maxent",
    **provenance,
) -> str:
    """The HTML text of the report (see :func:`write_report`); ``table``: the
    :func:`risk_table` of ``result`` at ``threshold`` when the caller has it already (its
    certified intervals cost LPs); else ``nonsensitive`` and ``bounds`` go to
    :func:`risk_table` (the result caches it: no bounds computed twice). ``adversary``
    "learned" (or any registered adversary's name) adds the scale of adversaries
    (:mod:`.adversary_scale`). ``provenance``: what the report was made from, for its
    text and its commands: ``sources`` (the release files' names), ``knowledge_file`` (the
    knowledge file's name; ``knowledge=``, its old name, is deprecated), ``command``
    (the command line) and ``populations`` (the population files' names), each None by
    default; any other keyword is a TypeError."""

    from .. import __version__

    origin = _provenance(provenance)
    sources, knowledge, command = origin.sources, origin.knowledge_file, origin.command
    threshold = check_threshold(threshold)
    top = check_integer(top, "top", minimum=1)
    if hasattr(result, "check_current"):  # never the old estimate beside the new facts
        result.check_current("report()")
    m = result.model
    if table is None:
        table = risk_table(
            result, threshold, csv_safe=False, nonsensitive=nonsensitive, bounds=bounds
        )
    summary = risk_summary(result, threshold, table)
    at_risk = table[table["at_risk"]]
    shown = at_risk.head(top) if len(at_risk) else table.head(min(top, 10))
    columns = [c for c in shown.columns if c != "at_risk"]
    facts = stated_facts(m.facts, fact_in_words)  # a vague statement (+-) is one
    c = result.certificate
    people = summary["people"]
    pct = 100 * summary["people_at_risk"] / people if people else 0.0
    env = environment()
    context = {
        "title": title or "Privacy risk report",
        "version": __version__,
        "sources": [str(s) for s in sources] if sources else [],
        "knowledge_file": str(knowledge) if knowledge else None,
        "release": _release_words(m),
        "facts": facts,
        "summary": summary,
        "pct": f"{pct:.1f}",
        "threshold": f"{threshold:g}",
        "threshold_pct": _pct(threshold),
        "unit": "people",
        "columns": columns,
        "rows": [[_cell(v) for v in row] for row in shown[columns].itertuples(index=False)],
        "any_at_risk": bool(len(at_risk)),
        "more_at_risk": max(0, len(at_risk) - len(shown)),
        "figures": _figures(result, table, threshold, top),
        "influence": _influence(result),
        "certificate": {
            "ok": c.ok,
            "data": f"{c.data_residual:.1e}",
            "knowledge": f"{c.knowledge_residual:.1e}",
            "entropy": f"{c.entropy:.6f}",
            "dual_bound": f"{c.dual_bound:.6f}",
            "gap": f"{c.gap:.1e}",
            "tolerance": f"{c.tolerance:.0e}",
            "solver": str(result.solver_stats.get("solver", "?")),
            "status": str(result.status),
            "seconds": f"{result.solver_stats.get('total_time', float('nan')):.2f}",
        },
        "reproduce": _reproduce(result, threshold, command, sources, knowledge, origin.populations),
        "bounds": "upper" in table,
        "act": act_context(result, table, threshold, summary),
        "adversaries": adversary_rows(result, table, threshold, summary, nonsensitive, adversary),
    }
    return env.get_template("report.html.j2").render(**context)


def adversary_rows(result, table, threshold, summary, nonsensitive, adversary) -> list:
    """The rows of the scale of adversaries (``adversary="learned"`` or any registered
    adversary's name, or several), else none (``"maxent"``: the report's estimate alone).
    Kept on ``result`` per arguments: the command's summary prints the page's own counts
    without learning the adversary again."""
    chosen = scale_adversaries(adversary)
    if not chosen:
        return []
    skip = table.attrs.get("nonsensitive", nonsensitive)
    worst = summary.get("people_at_risk_worst_case")
    key = (float(threshold), tuple(map(str, skip)), tuple(a.name for a in chosen), worst)
    cache = result.__dict__.setdefault("_adversary_rows", {}) if hasattr(result, "__dict__") else {}
    if key not in cache:
        cache[key] = adversary_scale(result, threshold, skip, worst_case=worst, adversaries=chosen)
    return [dict(row) for row in cache[key]]


def write_report(result, path, threshold: float = 0.5, **options) -> None:
    """Write the HTML report of ``result`` to ``path``, whole or not at all.

    One self-contained file (figures embedded as PNG, no scripts, no network) for a
    privacy officer: the release and the knowledge in plain words; how many people,
    (QI value, group) classes and QI values reach ``threshold`` under the
    maximum-entropy estimate, and how many people in the worst case (per person: each
    one's own certified upper bound, :func:`risk_summary`); the ``top`` riskiest people
    (:func:`risk_table`); a
    histogram of everyone's risk; the facts that move the estimate most (their duals, in
    words); the certificate; the commands that reproduce it. ``options``: ``top``,
    ``title``, ``sources`` (the release files' names), ``knowledge_file`` (the knowledge
    file's name) and ``command`` (the command line that made it), used in the text, and
    ``table`` (a risk table already computed, see :func:`render_report`). ``inputs``:
    more files the release and knowledge were read from; a ``path`` that is one of them,
    or of ``sources`` and ``knowledge_file`` (through a link too), is refused with
    :class:`~maxent_privacy.errors.SameFileError` before anything is computed.
    """
    inputs = options.pop("inputs", ())
    known = {
        "the release": options.get("sources"),
        "the knowledge file": options.get("knowledge_file", options.get("knowledge")),
    }
    check_outputs({"the report": path}, {"the input": inputs, **known})
    check_target(path)
    write_text(path, render_report(result, threshold, **options))
