"""By-hand benchmark of the risk report at scale (issues 22, 39): ``maxent-privacy report``.

Not a test: it times the report command and the risk table on the issue's instances and
writes a table.

Instances:

* **Hospital N** -- a synthetic hospital of N patients (default 200,000): pid, age 18-90,
  a three-digit zip prefix (60 towns, Zipf-like weights), sex and one of eight diagnoses
  (dementia mostly among the old), as in ``infeasible.py``. Published with Anatomy
  (``l = 4``, seed 0) with the person ids; two true facts, the share of dementia among
  the patients aged 18-29 (at most its value + 0.001) and the share of flu among women
  (at least its value - 0.001). The command ``maxent-privacy report HOSPITAL.csv --qi age
  zip sex --sa diagnosis --group group --person pid --knowledge FACTS.txt --out ... --risk-out
  ... --progress`` runs in a child process pinned to 2 cores (``taskset -c 0,1`` where it
  exists): its wall time, its peak resident memory and whether the progress bar was shown
  (standard error). Targets: < 60 s, < 4 GB.
* **Forced N** (issue 39; default 40,000, ``--forced N``) -- the hospital with half of
  the patients aged 18-29 and dementia only among the older ones, Anatomy ``l = 4``, and
  the one fact ``P(diagnosis = "Dementia" | age in 18..29) = 0``: the only patient over 29
  in a group holding Dementia has it in every table. The same command at the default
  time box (``--bounds auto``); from its risk CSV, every patient the fact forces (found
  by hand from the release) must be certain (``lower`` 1, ``certified``) or explicitly
  not checked (``certified`` False), and the page's counts ("N certain among the M
  certified; K not checked") must equal the CSV's. The issue's report said "0 certain"
  with 1,360 such patients at lower 0.
* **Du Adult** -- ``datasets.du2008_adult()`` (14,210 records), ``education`` sensitive,
  the eight ``datasets.ADULT_QI``, Anatomy ``l = 5`` (seed 0, ``HS-grad`` and
  ``Some-college`` non-sensitive), as in the README: ``result.risk_table(0.5)`` on a fresh
  result (target < 2 s) and ``model.bounds()`` without knowledge (target < 1 s), the best
  of ``--repeat`` runs.
* **Many values** -- 2,000 and 10,000 people, each with a distinct sensitive value, in
  buckets of 5 (the issue's 10,000 distinct values gave a MemoryError at 6 GiB):
  ``risk_table(0.5)`` and its summary, with the peak of Python's allocations
  (tracemalloc) beside the size a rows x every value table of doubles would have; then
  the HTML (timed).

Run from the repository root::

    python benchmarks/report_scale.py            # full run (about two minutes)
    python benchmarks/report_scale.py --quick    # 20,000 patients, the forced case at 10,000

Options: ``--n N`` (patients), ``--forced N`` (the forced hospital, 0: skip it),
``--repeat R`` (Adult timings, default 3), ``--out DIR``
(default ``benchmarks/results``). The full run writes ``report_scale.md`` there
(``--quick``: ``report_scale-quick.md``); the table is also printed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import tracemalloc
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from _common import argument_parser, machine_info, peak_rss_gb

from maxent_privacy.files import write_frame, write_text

HERE = Path(__file__).resolve().parent
DEFAULT_OUT = HERE / "results"
DIAGNOSES = (
    "Flu", "Asthma", "Diabetes", "Hypertension", "Cancer", "Fracture", "Depression", "Dementia",
)  # fmt: skip
PREFIXES = tuple(f"{head}{d}" for head in ("02", "10", "14", "33", "60", "90") for d in range(10))


# ------------------------------------------------------------------ instances
def hospital(n: int, seed: int = 0) -> pd.DataFrame:
    """``n`` patients: pid, age, zip (three digits), sex, diagnosis."""
    rng = np.random.default_rng(seed)
    age = rng.integers(18, 91, n)
    weight = 1.0 / np.arange(1, len(PREFIXES) + 1)
    zip3 = rng.choice(PREFIXES, n, p=rng.permutation(weight / weight.sum()))
    sex = rng.choice(["F", "M"], n)
    p_dementia = np.where(age < 30, 0.01, np.where(age < 65, 0.02, 0.25))
    diagnosis = np.where(rng.random(n) < p_dementia, "Dementia", rng.choice(DIAGNOSES[:-1], n))
    return pd.DataFrame(
        {
            "pid": [f"p{i:06d}" for i in range(n)],
            "age": age.astype(str),
            "zip": zip3,
            "sex": sex,
            "diagnosis": diagnosis,
        }
    )


def write_hospital(n: int, folder: Path) -> tuple[Path, Path, float]:
    """The release CSV and the facts file of the hospital of ``n``; seconds to make."""
    from maxent_privacy import anonymize

    t0 = time.perf_counter()
    frame = hospital(n)
    release = anonymize.anatomize(
        frame, ["age", "zip", "sex"], "diagnosis", l=4, seed=0, person="pid"
    )
    path = folder / f"hospital-{n}.csv"
    write_frame(path, release.frame, index=False)
    young = frame["age"].astype(int) < 30
    dementia = float((frame.loc[young, "diagnosis"] == "Dementia").mean())
    flu = float((frame.loc[frame["sex"] == "F", "diagnosis"] == "Flu").mean())
    facts = folder / "facts.txt"
    write_text(
        facts,
        f'P(diagnosis = "Dementia" | age in 18..29) <= {dementia + 0.001:.4f}\n'
        f'P(diagnosis = "Flu" | sex = "F") >= {flu - 0.001:.4f}\n',
    )
    return path, facts, time.perf_counter() - t0


# ------------------------------------------------------------------ the command
def child(spec_path: str) -> None:
    """Run ``maxent-privacy report`` in this process; write wall time and peak RSS."""
    spec = json.loads(Path(spec_path).read_text())
    from maxent_privacy.cli import main

    t0 = time.perf_counter()
    code = main(spec["argv"])
    wall = time.perf_counter() - t0
    peak = peak_rss_gb()
    write_text(spec_path + ".out.json", json.dumps({"code": code, "wall": wall, "peak": peak}))


def run_report(release: Path, facts: Path, folder: Path) -> dict:
    argv = [
        "report", str(release), "--qi", "age", "zip", "sex", "--sa", "diagnosis",
        "--group", "group", "--person", "pid", "--knowledge", str(facts),
        "--out", str(folder / "report.html"), "--risk-out", str(folder / "risk.csv"),
        "--progress",
    ]  # fmt: skip
    folder.mkdir(parents=True, exist_ok=True)
    spec = folder / "spec.json"
    write_text(spec, json.dumps({"argv": argv}))
    pin = ["taskset", "-c", "0,1"] if shutil.which("taskset") and os.cpu_count() >= 2 else []
    env = {**os.environ, "PYTHONPATH": str(HERE.parent)}
    t0 = time.perf_counter()
    done = subprocess.run(
        [*pin, sys.executable, __file__, "--child", str(spec)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    row = {"process": time.perf_counter() - t0, "pinned": bool(pin)}
    out = Path(str(spec) + ".out.json")
    if not out.exists():
        row["error"] = (done.stderr.strip().splitlines() or ["?"])[-1][:200]
        return row
    row.update(json.loads(out.read_text()))
    row["progress"] = "report: 5/5 steps" in done.stderr
    row["stdout"] = done.stdout.strip().splitlines()
    table = pd.read_csv(folder / "risk.csv")
    row["rows"] = len(table)
    row["at_risk"] = int(table["at_risk"].sum())
    page = (folder / "report.html").read_text(encoding="utf-8")
    row["html_mb"] = len(page.encode()) / 1e6
    row["outer"] = "outer bounds from the release alone" in page
    row["certified"] = int(table["certified"].sum()) if "certified" in table else None
    row["certain"] = int((table["lower"] == 1.0).sum()) if "lower" in table else None
    return row


# ------------------------------------------------------------------ forced (issue 39)
FORCING = 'P(diagnosis = "Dementia" | age in 18..29) = 0'
FORCING_MD = FORCING.replace("|", "\\|")  # in a Markdown table


def forced_hospital(n: int, seed: int = 0) -> pd.DataFrame:
    """``n`` patients as :func:`hospital`, but half aged 18-29 and dementia only among the
    older ones (a quarter of them): :data:`FORCING` is true."""
    frame = hospital(n, seed)
    rng = np.random.default_rng(seed + 1)
    age = np.where(rng.random(n) < 0.5, rng.integers(18, 30, n), rng.integers(30, 91, n))
    other = rng.choice(DIAGNOSES[:-1], n)
    frame["age"] = age.astype(str)
    frame["diagnosis"] = np.where((age >= 30) & (rng.random(n) < 0.25), "Dementia", other)
    return frame


def forced_people(release: pd.DataFrame) -> set:
    """By hand, from the release: the only patient over 29 in a group holding Dementia."""
    old = release["age"].astype(int) >= 30
    by = release.assign(old=old, dementia=release["diagnosis"] == "Dementia").groupby("group")
    groups = by["dementia"].any() & (by["old"].sum() == 1)
    chosen = release[old & release["group"].map(groups).to_numpy()]
    return set(chosen["pid"])


def certain_numbers(page: str) -> list[int]:
    """The numbers of the worst-case card's sentence: certain, certified, possible, not
    checked (the last only when rows were left out)."""
    import re

    part = page[page.index('id="certain"') :].split("</p>")[0]
    return [int(x.replace(",", "")) for x in re.findall(r"<b>([\d,]+)</b>", part)]


def run_forced(n: int, folder: Path) -> dict:
    """The report command on the forced hospital of ``n``, checked (see the docstring)."""
    from maxent_privacy import anonymize

    folder.mkdir(parents=True, exist_ok=True)
    release = anonymize.anatomize(
        forced_hospital(n), ["age", "zip", "sex"], "diagnosis", l=4, seed=0, person="pid"
    )
    path = folder / f"forced-{n}.csv"
    write_frame(path, release.frame, index=False)
    facts = folder / "forcing.txt"
    write_text(facts, FORCING + "\n")
    row = run_report(path, facts, folder)
    if "error" in row:
        return row
    table = pd.read_csv(folder / "risk.csv").set_index("pid")
    forced = sorted(forced_people(release.frame))
    mine = table.loc[forced]
    certain = (mine["lower"] == 1.0) & mine["certified"]
    row["forced"] = len(forced)
    row["forced_certain"] = int(certain.sum())
    row["forced_unchecked"] = int((~mine["certified"]).sum())
    row["forced_wrong"] = int((~certain & mine["certified"]).sum())  # certified, lower < 1
    csv = [
        int((table["lower"] == 1.0).sum()),
        int(table["certified"].sum()),
        int((table["certified"] & (table["upper"] == 1.0) & (table["lower"] < 1.0)).sum()),
    ]
    unchecked = int((~table["certified"]).sum())
    csv += [unchecked] if unchecked else []
    row["csv_counts"] = csv
    row["page_counts"] = certain_numbers((folder / "report.html").read_text(encoding="utf-8"))
    return row


def forced_md(n: int, row: dict) -> str:
    """The forced case's row of the table."""
    if "error" in row:
        return f"| forced {n:,} | report | - | error: {row['error']} | - |"
    ok = (
        row["code"] == 0
        and row["forced_wrong"] == 0
        and row["forced_certain"] + row["forced_unchecked"] == row["forced"]
        and row["page_counts"] == row["csv_counts"]
    )
    c = row["csv_counts"]
    left = f"; {c[3]:,} not checked" if len(c) > 3 else "; none left unchecked"
    return (
        f"| forced {n:,} (`{FORCING_MD}`, default time box) | `maxent-privacy report`, "
        f"{'2 cores' if row['pinned'] else 'not pinned'} | every forced person certain or "
        f"not checked; page counts = CSV counts | {row['wall']:.1f} s; {row['forced']:,} "
        f"forced (by hand): {row['forced_certain']:,} certain, {row['forced_unchecked']:,} "
        f"not checked, {row['forced_wrong']:,} certified below 1; page {c[0]:,} certain among "
        f"{c[1]:,} certified, {c[2]:,} possible{left}; page = CSV: "
        f"{'yes' if row['page_counts'] == c else 'no'} | {'met' if ok else '**not met**'} |"
    )


# ------------------------------------------------------------------ Adult, many values
def adult(repeat: int) -> dict:
    from maxent_privacy import MaxEntModel, anonymize, datasets

    frame = datasets.du2008_adult()
    release = anonymize.anatomize(
        frame,
        list(datasets.ADULT_QI),
        datasets.ADULT_SA,
        l=5,
        seed=0,
        nonsensitive=["HS-grad", "Some-college"],
    )
    model = MaxEntModel(release)
    risk, bounds = [], []
    for _ in range(repeat):
        result = model.solve()  # fresh: nothing cached
        t0 = time.perf_counter()
        table = result.risk_table(0.5)
        risk.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        model.bounds()
        bounds.append(time.perf_counter() - t0)
    return {"risk_table": min(risk), "bounds": min(bounds), "rows": len(table)}


def many_values(n: int) -> dict:
    from maxent_privacy import Bucketized, MaxEntModel
    from maxent_privacy.report import render_report

    rng = np.random.default_rng(0)
    frame = pd.DataFrame(
        {
            "pid": [f"p{i}" for i in range(n)],
            "age": rng.integers(20, 60, n).astype(str),
            "sex": rng.choice(["F", "M"], n),
            "code": [f"v{i:05d}" for i in range(n)],
            "group": np.arange(n) // 5,
        }
    )
    result = MaxEntModel(
        Bucketized(frame, qi=["age", "sex"], sa="code", group="group", person="pid")
    ).solve()
    from maxent_privacy.report import risk_summary

    tracemalloc.start()
    t0 = time.perf_counter()
    table = result.risk_table(0.5)
    risk_summary(result, 0.5, table)
    seconds = time.perf_counter() - t0
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    t0 = time.perf_counter()
    page = render_report(result, 0.5, table=table)
    return {
        "n": n,
        "seconds": seconds,
        "html": time.perf_counter() - t0,
        "peak_mb": peak / 1e6,
        "dense_mb": n * n * 8 / 1e6,
        "ok": len(table) == n and "<html" in page,
    }


# ------------------------------------------------------------------ the table
def intervals(report: dict) -> str:
    """How the hospital's intervals were found, from its risk CSV."""
    if report.get("certified") is None:
        return "outer" if report["outer"] else "certified"
    left = report["rows"] - report["certified"]
    return (
        f"{report['certified']:,} certified ({report['certain']:,} certain), {left:,} not checked"
    )


def table_md(n: int, report: dict, ad: dict, many: list[dict], forced=None) -> str:
    def verdict(ok):
        return "met" if ok else "**not met**"

    lines = [
        "| instance | measure | target | measured | verdict |",
        "|---|---|---|---|---|",
    ]
    if "error" in report:
        lines.append(f"| hospital {n:,} | report | < 60 s, < 4 GB | error: {report['error']} | - |")
    else:
        ok = report["wall"] < 60 and report["peak"] < 4 and report["code"] == 0
        cores = "2 cores" if report["pinned"] else "not pinned"
        lines.append(
            f"| hospital {n:,} (`--person`, 2 facts, 1 release) | `maxent-privacy report`, "
            f"{cores} | < 60 s, < 4 GB, progress bar | {report['wall']:.1f} s in the command "
            f"({report['process']:.1f} s with the interpreter), peak RSS "
            f"{report['peak']:.2f} GB, progress bar: {'yes' if report['progress'] else 'no'}; "
            f"{report['rows']:,} rows, {report['at_risk']:,} at risk; HTML "
            f"{report['html_mb']:.1f} MB; intervals "
            f"{intervals(report)} | "
            f"{verdict(ok and report['progress'])} |"
        )
    if forced is not None:
        lines.append(forced_md(*forced))
    lines.append(
        f"| Du Adult (Anatomy l=5, {ad['rows']:,} rows) | `result.risk_table(0.5)` | < 2 s | "
        f"{ad['risk_table']:.2f} s | {verdict(ad['risk_table'] < 2)} |"
    )
    lines.append(
        f"| Du Adult | `model.bounds()` without knowledge | < 1 s | {ad['bounds']:.2f} s | "
        f"{verdict(ad['bounds'] < 1)} |"
    )
    for m in many:
        lines.append(
            f"| {m['n']:,} distinct SA values | `risk_table` + summary (then the HTML) | "
            f"memory grows with rows x values in each group | {m['seconds']:.2f} s, "
            f"peak {m['peak_mb']:.1f} MB (rows x every value: {m['dense_mb']:,.0f} MB of "
            f"doubles); HTML {m['html']:.2f} s | "
            f"{verdict(m['ok'] and m['peak_mb'] < m['dense_mb'] / 2)} |"
        )
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argument_parser(__doc__, quick="20,000 patients")
    parser.add_argument("--n", type=int, default=None, help="patients (default 200,000)")
    parser.add_argument(
        "--forced", type=int, default=None, help="the forced hospital's patients (0: skip)"
    )
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.child)
        return 0
    warnings.simplefilter("ignore")
    n = args.n or (20_000 if args.quick else 200_000)
    info = machine_info()
    n_forced = args.forced if args.forced is not None else (10_000 if args.quick else 40_000)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        release, facts, made = write_hospital(n, folder)
        report = run_report(release, facts, folder / "hospital")
        forced = (n_forced, run_forced(n_forced, folder / "forced")) if n_forced else None
    report["made"] = made
    ad = adult(args.repeat)
    many = [many_values(k) for k in (2_000, 10_000)]
    table = table_md(n, report, ad, many, forced)
    command = (
        "python -m benchmarks report_scale"
        + (" " + " ".join(argv if argv is not None else sys.argv[1:])).rstrip()
    )
    text = (
        f"# Report at scale (issues 22, 39)\n\n`{command}`; {info['date']}, {info['nproc']} cores, "
        f"load average at start {info['loadavg_at_start'][0]:.2f}, sources "
        f"{info['maxent_privacy_sources']['sha256']}.\n\n{table}\n\nThe command printed:\n\n"
        + "\n".join(f"    {line}" for line in report.get("stdout", []))
        + "\n"
        + (
            "\nOn the forced hospital it printed:\n\n"
            + "\n".join(f"    {line}" for line in forced[1].get("stdout", []))
            + "\n"
            if forced
            else ""
        )
    )
    args.out.mkdir(parents=True, exist_ok=True)
    name = "report_scale-quick.md" if args.quick else "report_scale.md"
    write_text(args.out / name, text)
    print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
