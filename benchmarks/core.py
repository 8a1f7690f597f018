"""By-hand benchmark of the core model: MaxEntModel build and solve on UCI Adult.

Not a test: it times the model build and every exponential-cone solver on the setup of
Du, Teng and Zhu (SIGMOD 2008, Section 7) and writes a report.

Setup: ``datasets.du2008_adult()`` (14,210 records), sensitive attribute ``education``,
the eight ``datasets.ADULT_QI``, released with Anatomy (``l=5``, ``seed=0``, ``HS-grad``
and ``Some-college`` non-sensitive; 2,842 buckets of 5). Two instances:

* ``K=0``: no facts;
* ``K=100``: 100 *true* distribution facts ``model.P(s, **qi) == p_true`` (half with one
  QI attribute, half with two), ``p_true`` computed from the original frame, so the facts
  are always feasible. They are drawn with ``numpy.random.default_rng(seed)`` among the
  (attribute value(s), s) combinations with a support of at least 3 records: the
  attributes (or attribute pairs) are visited in a seeded random order, round-robin, and
  each visit draws one unused combination of that attribute (pair).

Each instance is solved by every solver of ``maxent_privacy.exp_cone_solvers()`` with
``decompose=True``, and by CLARABEL and ECOS also with ``decompose=False``. Each solve runs
in a forked child process with a time cap (``--timeout``), so a solver that runs too long
is recorded as skipped instead of stalling the benchmark; the model is built once per
instance in the parent and inherited by the children. One extra run per instance uses
SCS with ``eps_abs = eps_rel = 1e-6`` instead of the package default 1e-9, to show what the
tight default costs (SCS is a first-order method; with 1e-9 it can run to its
200,000-iteration limit). The table reports the build time, the solve wall time
(``time.perf_counter`` around ``model.solve``), the solver's own time, the ratio of the
wall time to the CLARABEL ``decompose=True`` solve of the same instance and run,
``result.solver_stats``, the status, our certificate, ``metrics.estimation_accuracy`` and
the largest |posterior difference| to the CLARABEL ``decompose=False`` answer. A solve
that raises is recorded with its exception class and message.

Run from the repository root::

    python benchmarks/core.py            # full run: ~1 min, ~6 min if SCS hits the cap
    python benchmarks/core.py --quick    # smoke run: 2,000 records, K=0 and K=20 (< 30 s)

Options: ``--timeout SECONDS`` per solve (default 300, with ``--quick`` 10; 0 runs
in-process without a cap), ``--seed`` for the fact draw (default 0), ``--out DIR``
(default ``benchmarks/results``). The full run writes ``core.md`` and ``core.json`` there,
``--quick`` writes ``core-quick.md`` and ``core-quick.json``; the Markdown table is also
printed (progress goes to stderr).
"""

from __future__ import annotations

import itertools
import json
import math
import multiprocessing as mp
import os
import sys
import time
import traceback
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from _common import (
    argument_parser,
    certificate,
    jsonable,
    machine_info,
    machine_lines,
    md_row,
    short,
)

import maxent_privacy
from maxent_privacy import Bucketized, MaxEntModel, anonymize, datasets, metrics
from maxent_privacy.files import write_text

SA = datasets.ADULT_SA
QI = list(datasets.ADULT_QI)
NONSENSITIVE = ["HS-grad", "Some-college"]
L_DIVERSITY = 5
MIN_SUPPORT = 3
BASELINE = ("CLARABEL", True)  # the run the time ratios refer to
REFERENCE = ("CLARABEL", False)  # the answer the posterior differences refer to
SCS_LOOSE = {"eps_abs": 1e-6, "eps_rel": 1e-6}  # an extra SCS run with these options
DEFAULT_OUT = Path(__file__).resolve().parent / "results"


# ------------------------------------------------------------------ the instances
def make_release(n: int | None) -> tuple[pd.DataFrame, Bucketized]:
    frame = datasets.du2008_adult() if n is None else datasets.du2008_adult(n=n)
    release = anonymize.anatomize(frame, QI, SA, l=L_DIVERSITY, seed=0, nonsensitive=NONSENSITIVE)
    return frame, release


def draw_facts(frame: pd.DataFrame, k: int, seed: int) -> list[dict]:
    """``k`` true facts: half on one QI attribute, half on two, support >= MIN_SUPPORT."""
    rng = np.random.default_rng(seed)
    facts = []
    for width, count in ((1, k - k // 2), (2, k // 2)):
        if count == 0:
            continue
        groups = list(itertools.combinations(QI, width))
        candidates = {}
        for attrs in groups:
            support = frame.groupby(list(attrs) + [SA], sort=True).size()
            candidates[attrs] = support[support >= MIN_SUPPORT]
        groups = [g for g in groups if len(candidates[g])]
        visit = [groups[i] for i in rng.permutation(len(groups))]
        used: dict[tuple, set] = {g: set() for g in groups}
        drawn = 0
        for attrs in itertools.cycle(visit):
            if drawn == count:
                break
            free = [i for i in range(len(candidates[attrs])) if i not in used[attrs]]
            if not free:
                if all(len(used[g]) == len(candidates[g]) for g in groups):
                    raise ValueError(f"only {drawn} facts with {width} attribute(s) exist")
                continue
            i = free[int(rng.integers(len(free)))]
            used[attrs].add(i)
            key = candidates[attrs].index[i]
            values, s = key[:-1], key[-1]
            cond = {
                a: (v.item() if isinstance(v, np.generic) else v)
                for a, v in zip(attrs, values, strict=True)
            }
            match = np.ones(len(frame), dtype=bool)
            for a, v in cond.items():
                match &= (frame[a] == v).to_numpy()
            n_q = int(match.sum())
            n_qs = int(candidates[attrs].iloc[i])
            facts.append(
                {"s": s, "conditions": cond, "support": n_qs, "n_q": n_q, "p_true": n_qs / n_q}
            )
            drawn += 1
    return facts


def build_model(release: Bucketized, facts: list[dict]) -> tuple[MaxEntModel, dict]:
    """Build the model and add the facts one by one; time the parts."""
    t0 = time.perf_counter()
    model = MaxEntModel(release)
    t1 = time.perf_counter()
    t_p = t_add = 0.0
    for fact in facts:
        ta = time.perf_counter()
        expr = model.P(fact["s"], **fact["conditions"])
        tb = time.perf_counter()
        model.add(expr == fact["p_true"])
        t_p += tb - ta
        t_add += time.perf_counter() - tb
    total = time.perf_counter() - t0
    timing = {"construct": t1 - t0, "P": t_p, "add": t_add, "total": total}
    return model, timing


# ---------------------------------------------------------------------- one solve
def _label(solver: str, options: dict) -> str:
    extra = ", ".join(
        f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in options.items()
    )
    return f"{solver} ({extra})" if extra else solver


def solve_once(
    model: MaxEntModel, frame: pd.DataFrame, solver: str, decompose: bool, options: dict
) -> dict:
    """Solve and summarize; never raises (the exception is recorded instead)."""
    out: dict = {
        "solver": solver,
        "decompose": decompose,
        "extra_options": options,
        "label": _label(solver, options),
    }
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t0, c0 = time.perf_counter(), time.process_time()
        try:
            result = model.solve(solver=solver, decompose=decompose, **options)
        except Exception as err:
            out["solve_wall"] = time.perf_counter() - t0
            out["solve_cpu"] = time.process_time() - c0
            out["error"] = f"{type(err).__name__}: {err}"
            out["error_class"] = type(err).__name__
            out["traceback"] = traceback.format_exc()
            result = None
        else:
            out["solve_wall"] = time.perf_counter() - t0
            out["solve_cpu"] = time.process_time() - c0
    out["warnings"] = sorted({f"{w.category.__name__}: {short(w.message, 300)}" for w in caught})
    if result is None:
        return out
    stats = {k: v for k, v in result.solver_stats.items() if k != "options"}
    stats["options"] = {k: v for k, v in result.solver_stats.get("options", {}).items()}
    out.update(
        status=result.status,
        stats=stats,
        certificate=certificate(result),
        posterior=result.posterior(),
    )
    t1 = time.perf_counter()
    out["estimation_accuracy"] = metrics.estimation_accuracy(result, frame)
    out["metric_time"] = time.perf_counter() - t1
    if len(result.components):
        comps = result.components
        solved = comps[comps["component"].astype(str) != "closed form"]
        out["largest_component_cells"] = int(solved["cells"].max()) if len(solved) else 0
        if "polished" in solved:
            out["polished_components"] = int(solved["polished"].eq(True).sum())
        if "wall_time" in solved:
            # cvxpy's canonicalization + the solver, summed over the solved components
            out["cvxpy_wall"] = float(solved["wall_time"].fillna(0.0).sum())
    return out


def _child(conn, model, frame, solver, decompose, options):
    try:
        conn.send(solve_once(model, frame, solver, decompose, options))
    finally:
        conn.close()


def run_capped(model, frame, solver: str, decompose: bool, options: dict, timeout: float) -> dict:
    """``solve_once`` in a forked child, killed after ``timeout`` seconds."""
    if timeout <= 0:
        return solve_once(model, frame, solver, decompose, options)
    head = {
        "solver": solver,
        "decompose": decompose,
        "extra_options": options,
        "label": _label(solver, options),
    }
    ctx = mp.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(child, model, frame, solver, decompose, options))
    t0 = time.perf_counter()
    proc.start()
    child.close()
    try:
        if parent.poll(timeout):
            try:
                out = parent.recv()
            except EOFError:
                out = None
        else:
            out = None
            if proc.is_alive():
                proc.kill()
                proc.join()
                return {
                    **head,
                    "skipped": f"skipped (time cap {timeout:g} s exceeded)",
                    "solve_wall": time.perf_counter() - t0,
                }
    finally:
        parent.close()
    proc.join()
    if out is None:
        return {
            **head,
            "error": f"child process died (exit code {proc.exitcode})",
            "error_class": "ChildDied",
            "solve_wall": time.perf_counter() - t0,
        }
    return out


# ------------------------------------------------------------------ the benchmark
def runs_for(solvers: list[str]) -> list[tuple[str, bool, dict]]:
    """(solver, decompose, extra solver options) of every run, the baseline first."""
    first = [s for s in ("CLARABEL", "ECOS") if s in solvers]
    ordered = first + [s for s in solvers if s not in first]
    out = []
    for s in ordered:
        out.append((s, True, {}))
        if s in ("CLARABEL", "ECOS"):
            out.append((s, False, {}))
    if "SCS" in solvers:
        # extra: SCS with a reachable tolerance (the package default is 1e-9)
        out.append(("SCS", True, dict(SCS_LOOSE)))
    return out


def warm_up(solvers: list[str]) -> None:
    """Import and exercise each solver once on Figure 1, so no run pays for that."""
    release = Bucketized(
        datasets.du2008_figure1(), qi=["gender", "degree"], sa="disease", group="bucket"
    )
    for solver in solvers:
        model = MaxEntModel(release)
        model.add(model.P("Flu", gender="male") == 0.5)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                model.solve(solver=solver, decompose=False)
            except Exception as err:
                print(f"warm-up of {solver} failed: {type(err).__name__}: {err}", file=sys.stderr)


def run_instance(name: str, frame, release, facts, solvers, timeout, log) -> dict:
    model, build = build_model(release, facts)
    log(
        f"[{name}] built {model!r} in {build['total']:.2f} s "
        f"(construct {build['construct']:.2f}, P {build['P']:.2f}, add {build['add']:.2f})"
    )
    rows = []
    for solver, decompose, options in runs_for(solvers):
        row = run_capped(model, frame, solver, decompose, options, timeout)
        row["instance"] = name
        row["build_time"] = build["total"]
        rows.append(row)
        what = (
            row.get("skipped")
            or row.get("error")
            or (
                f"{row['status']}, H={row['certificate']['entropy']:.6f}, "
                f"gap={row['certificate']['gap']:.1e}"
            )
        )
        log(
            f"[{name}] {row['label']} decompose={decompose}: {row['solve_wall']:.2f} s; "
            f"{short(what, 200)}"
        )

    def find(key):
        hits = (
            r
            for r in rows
            if (r["solver"], r["decompose"]) == key and not r["extra_options"] and "status" in r
        )
        return next(hits, None)

    base, ref = find(BASELINE), find(REFERENCE)
    for r in rows:
        if "status" in r and base is not None and base["solve_wall"] > 0:
            r["ratio"] = r["solve_wall"] / base["solve_wall"]
        if "status" in r and ref is not None:
            a, b = r["posterior"].align(ref["posterior"], join="outer")
            r["max_dpost"] = float(np.nanmax(np.abs(a.to_numpy() - b.to_numpy())))
    for r in rows:
        r.pop("posterior", None)
    return {
        "name": name,
        "records": model.n_records,
        "groups": release.n_groups,
        "classes": len(model.classes),
        "cells": model.n_cells,
        "facts": len(model.facts),
        "build": build,
        "fact_list": [{"name": f.name, **d} for f, d in zip(model.facts, facts, strict=True)],
        "runs": rows,
    }


# ---------------------------------------------------------------------- reporting
def _num(value, fmt: str) -> str:
    if value is None:
        return "–"
    if isinstance(value, float) and math.isnan(value):
        return "nan"
    return format(value, fmt)


def markdown_table(instances: list[dict]) -> str:
    head = [
        "instance",
        "solver",
        "decompose",
        "build s",
        "solve s",
        "cpu s",
        "solver s",
        "× base",
        "status",
        "comps",
        "closed",
        "solved",
        "fixed",
        "iters",
        "residual",
        "entropy",
        "gap",
        "est. acc.",
        "max |Δpost|",
    ]
    lines = [md_row(head), "|" + "---|" * len(head)]
    notes = []
    for inst in instances:
        for r in inst["runs"]:
            lead = [inst["name"], r["label"], str(r["decompose"]), _num(r["build_time"], ".2f")]
            if "status" not in r:
                what = r.get("skipped") or short(r.get("error", "?"), 120)
                cells = lead + [_num(r["solve_wall"], ".2f"), _num(r.get("solve_cpu"), ".2f")]
                cells += ["–", "–", what] + ["–"] * 10
            else:
                s, c = r["stats"], r["certificate"]
                cells = lead + [
                    _num(r["solve_wall"], ".2f"),
                    _num(r["solve_cpu"], ".2f"),
                    _num(s["solve_time"], ".2f"),
                    _num(r.get("ratio"), ".2f"),
                    r["status"],
                    str(s["components"]),
                    str(s["closed_form"]),
                    str(s["solved"]),
                    str(s["fixed_by_presolve"]),
                    str(s["iterations"]),
                    _num(c["primal_residual"], ".1e"),
                    _num(c["entropy"], ".6f"),
                    _num(c["gap"], ".1e"),
                    _num(r["estimation_accuracy"], ".6f"),
                    _num(r.get("max_dpost"), ".1e"),
                ]
            lines.append(md_row(cells))
            for w in r.get("warnings", []):
                notes.append(f"* {inst['name']} {r['label']} decompose={r['decompose']}: {w}")
    text = "\n".join(lines)
    if notes:
        text += "\n\nWarnings raised during the solves:\n\n" + "\n".join(notes)
    return text


def markdown_report(
    info: dict, config: dict, instances: list[dict], table: str, total: float
) -> str:
    out = [
        "# Core benchmark: Privacy-MaxEnt on UCI Adult",
        "",
        f"`python benchmarks/core.py{' --quick' if config['quick'] else ''}` "
        f"(time cap {config['timeout']:g} s per solve, fact seed {config['seed']}); "
        f"total {total:.1f} s.",
        "",
        "## Machine",
        "",
        *machine_lines(info),
        f"* load average (1, 5, 15 min) at start "
        f"{', '.join(f'{x:.2f}' for x in info['loadavg_at_start'])}, at end "
        f"{', '.join(f'{x:.2f}' for x in info.get('loadavg_at_end', []))}",
        "",
        "## Setup",
        "",
        f"`du2008_adult({'' if config['n'] is None else 'n=' + str(config['n'])})`, SA "
        f"`{SA}`, QI `{', '.join(QI)}`; `anatomize(l={L_DIVERSITY}, seed=0, "
        f"nonsensitive={NONSENSITIVE})`. Facts: `model.P(s, **qi) == p_true` with p_true "
        f"from the original frame, support >= {MIN_SUPPORT} records, half on one QI "
        "attribute and half on two.",
        "",
        "| instance | records | groups | classes | cells | facts | build s "
        "(construct + P() + add()) |",
        "|---|---|---|---|---|---|---|",
    ]
    for inst in instances:
        b = inst["build"]
        out.append(
            f"| {inst['name']} | {inst['records']} | {inst['groups']} | "
            f"{inst['classes']} | {inst['cells']} | {inst['facts']} | "
            f"{b['total']:.2f} ({b['construct']:.2f} + {b['P']:.2f} + "
            f"{b['add']:.2f}) |"
        )
    out += [
        "",
        "## Results",
        "",
        "solve s: wall time of `model.solve` (in a forked child); cpu s: its CPU time "
        "(all threads of the process; less sensitive than wall time to other load on the "
        "machine); solver s: "
        "`solver_stats['solve_time']`, the time the solver itself reports (the rest of solve s "
        "is cvxpy's compilation and the package's presolve, polish and certificate); "
        "× base: solve s over "
        "the CLARABEL decompose=True solve of the same instance; comps / closed / solved / "
        "fixed / iters: `result.solver_stats` (components, closed_form, solved, "
        "fixed_by_presolve, iterations); residual, entropy (nats/record), gap: our "
        "certificate; est. acc.: `metrics.estimation_accuracy` (KL, nats); max |Δpost|: "
        "largest difference of `result.posterior()` to the CLARABEL decompose=False answer. "
        "Solvers run with the package's default options, except the extra last row: SCS "
        "with `eps_abs = eps_rel = 1e-6` instead of the default 1e-9.",
        "",
        table,
        "",
    ]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argument_parser(__doc__, quick="smoke run: 2,000 records and K=20")
    parser.add_argument(
        "--timeout",
        type=float,
        default=None,
        help="time cap per solve in seconds (default 300, 10 with --quick; 0: in-process, no cap)",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the fact draw")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output directory")
    args = parser.parse_args(argv)

    t_start = time.perf_counter()
    n, k = (2_000, 20) if args.quick else (None, 100)
    if args.timeout is None:
        args.timeout = 10.0 if args.quick else 300.0

    def log(msg: str) -> None:
        print(f"{time.perf_counter() - t_start:7.1f} s  {msg}", file=sys.stderr, flush=True)

    info = machine_info()
    solvers = maxent_privacy.exp_cone_solvers()
    log(f"solvers: {', '.join(solvers)}; nproc {info['nproc']}")
    warm_up(solvers)
    frame, release = make_release(n)
    log(f"release: {release!r}")
    facts = draw_facts(frame, k, args.seed)
    instances = []
    for name, fs in (("K=0", []), (f"K={k}", facts)):
        instances.append(run_instance(name, frame, release, fs, solvers, args.timeout, log))
    total = time.perf_counter() - t_start
    info["loadavg_at_end"] = list(os.getloadavg())

    table = markdown_table(instances)
    config = {
        "quick": args.quick,
        "n": n,
        "k": k,
        "seed": args.seed,
        "timeout": args.timeout,
        "solvers": solvers,
    }
    report = markdown_report(info, config, instances, table, total)
    print(table)
    print(f"\ntotal {total:.1f} s")
    args.out.mkdir(parents=True, exist_ok=True)
    stem = "core-quick" if args.quick else "core"
    write_text(args.out / f"{stem}.md", report)
    payload = {"machine": info, "config": config, "total_time": total, "instances": instances}
    write_text(args.out / f"{stem}.json", json.dumps(jsonable(payload), indent=1) + "\n")
    log(f"wrote {args.out / (stem + '.md')} and {args.out / (stem + '.json')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
