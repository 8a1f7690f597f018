"""Facts on large data (issue 14, item 3): solve time with a few facts as the data grows,
and Du Adult with 1,000 rules against plain cvxpy + Clarabel.

Not a test: a by-hand benchmark that writes ``benchmarks/results/facts_scale.md``.

* **(a) Adult resampled, 4 facts.** ``datasets.load_adult()`` resampled with replacement
  to N records (``numpy.random.default_rng(0)``), released with
  ``anonymize.anatomize(frame, ["age", "workclass", "marital_status", "sex"],
  "occupation", l=3)``. The 4 facts are ``model.P(v, col=q) == p``: for each of the four
  QI columns, the most frequent (QI value q, occupation v) pair of the resampled data,
  with p its true rate P(v | col = q) rounded to 4 decimals. Reported: the solve time
  (``model.solve(progress=False)``, otherwise package defaults) with and without the
  facts, wall clock and CPU time of the process (the solve is single-threaded: the CPU
  time is what an unloaded machine would show), each the minimum of ``--repeat`` runs,
  for N = 50k, 100k, 200k, 400k. Target: 200,000 records with 4 facts solved in under 3 s.
* **(b) Du Adult, Top-(500, 500) rules.** The instance ``du-adult-1000`` of
  ``benchmarks/solvers.py`` (its ``prepare``): build (``MaxEntModel`` + ``add``) + solve,
  ours against ``CLARABEL-plain`` (one cvxpy problem: ``decompose=False,
  presolve=False, polish=False``), both in this process after a warm-up, interleaved,
  the minimum of ``--repeat`` runs each; the ratio of the minima, the median ratio of the
  pairs and the ratio of CPU times. Target: >= 20x.

Run from the repository root::

    PYTHONPATH=. python benchmarks/facts_scale.py            # full run
    PYTHONPATH=. python benchmarks/facts_scale.py --quick    # 50k only, 1 repeat
    PYTHONPATH=. python benchmarks/facts_scale.py --profile a  # cProfile of (a) at 200k
"""

from __future__ import annotations

import cProfile
import os
import pstats
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import argument_parser, machine_info  # noqa: E402
from solvers import prepare  # noqa: E402  (the du-adult-1000 instance, as benchmarked there)

from maxent_privacy import MaxEntModel, anonymize, datasets  # noqa: E402
from maxent_privacy.files import write_text  # noqa: E402

DEFAULT_OUT = Path(__file__).resolve().parent / "results"
QI = ["age", "workclass", "marital_status", "sex"]
SA = "occupation"
SIZES = [50_000, 100_000, 200_000, 400_000]
TARGET_N, TARGET_S = 200_000, 3.0
TARGET_RATIO = 20.0
PLAIN = {"solver": "CLARABEL", "decompose": False, "presolve": False, "polish": False}


# ------------------------------------------------------------------------ instance (a)
def adult_release(n: int):
    """(resampled frame, its Anatomy release) for ``n`` records."""
    adult = datasets.load_adult()
    idx = np.random.default_rng(0).integers(0, len(adult), n)
    frame = adult.iloc[idx].reset_index(drop=True)
    return frame, anonymize.anatomize(frame, QI, SA, l=3)


def four_facts(frame) -> list[tuple]:
    """(v, column, q, p): per QI column the most frequent (q, v) pair, p its rate."""
    out = []
    for col in QI:
        pairs = frame.groupby([col, SA], observed=True).size()
        q, v = pairs.idxmax()
        p = round(float(pairs.loc[(q, v)]) / int((frame[col] == q).sum()), 4)
        out.append((v, col, q, p))
    return out


def with_facts(release, facts) -> MaxEntModel:
    model = MaxEntModel(release)
    for v, col, q, p in facts:
        model.add(model.P(v, **{col: q}) == p)
    return model


def time_solve(model, repeat: int) -> tuple[float, float, object]:
    """(wall s, CPU s of this process, result): the minima over ``repeat`` solves."""
    best, cpu, result = np.inf, np.inf, None
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        result = model.solve(progress=False)
        best = min(best, time.perf_counter() - t0)
        cpu = min(cpu, time.process_time() - c0)
    return best, cpu, result


def run_a(sizes, repeat: int) -> list[dict]:
    rows = []
    for n in sizes:
        frame, release = adult_release(n)
        facts = four_facts(frame)
        plain_t, plain_cpu, _ = time_solve(MaxEntModel(release), repeat)
        model = with_facts(release, facts)
        facts_t, facts_cpu, res = time_solve(model, repeat)
        row = {
            "n": n,
            "cells": model.n_cells,
            "without": plain_t,
            "with": facts_t,
            "without_cpu": plain_cpu,
            "with_cpu": facts_cpu,
            "iterations": res.solver_stats["iterations"],
            "residual": res.certificate.primal_residual,
            "gap": res.certificate.gap,
        }
        rows.append(row)
        print(
            f"(a) n={n:>7,}: {row['cells']:,} cells, solve {plain_t:.2f} s without facts, "
            f"{facts_t:.2f} s with 4 facts ({row['iterations']} iterations)",
            flush=True,
        )
    return rows


# ------------------------------------------------------------------------ instance (b)
def build_and_solve(build, **kw) -> tuple[float, float, object, float]:
    """(build s, solve s, result, CPU s of this process for both)."""
    t0, c0 = time.perf_counter(), time.process_time()
    model = build()
    t1 = time.perf_counter()
    result = model.solve(**kw)
    return t1 - t0, time.perf_counter() - t1, result, time.process_time() - c0


def run_b(repeat: int) -> dict:
    build = prepare({"kind": "du-adult", "k": 1000})
    warm = prepare({"kind": "du-fig1"})
    warm().solve()
    warm().solve(**PLAIN)
    ours, plain = [], []
    for _ in range(repeat):  # interleaved: both see the same load
        ours.append(build_and_solve(build))
        plain.append(build_and_solve(build, **PLAIN))
    b_o, s_o, r_o, _ = min(ours, key=lambda t: t[0] + t[1])
    b_p, s_p, r_p, _ = min(plain, key=lambda t: t[0] + t[1])
    cpu_o, cpu_p = min(t[3] for t in ours), min(t[3] for t in plain)
    pairs = [(p[0] + p[1]) / (o[0] + o[1]) for o, p in zip(ours, plain, strict=True)]
    a, b = r_o.posterior().align(r_p.posterior(), join="outer")
    row = {
        "ours_build": b_o,
        "ours_solve": s_o,
        "plain_build": b_p,
        "plain_solve": s_p,
        "ratio": (b_p + s_p) / (b_o + s_o),
        "ratio_median": float(np.median(pairs)),
        "cpu_ours": cpu_o,
        "cpu_plain": cpu_p,
        "iterations": r_o.solver_stats["iterations"],
        "dpost": float(np.nanmax(np.abs(a.fillna(0).to_numpy() - b.fillna(0).to_numpy()))),
    }
    print(
        f"(b) du-adult-1000: ours {b_o:.3f} + {s_o:.3f} s, plain cvxpy+Clarabel "
        f"{b_p:.3f} + {s_p:.3f} s -> {row['ratio']:.1f}x",
        flush=True,
    )
    return row


# ------------------------------------------------------------------------ report
def report(rows_a, row_b, command: str, load: tuple) -> str:
    info = machine_info()
    lines = [
        "# Facts on large data (issue 14, item 3)",
        "",
        f"`{command}`; {info['date']}, {info['nproc']} cores, Python {info['python']}, "
        f"sources {info['maxent_privacy_sources']['sha256']}; load average at start "
        f"{load[0]:.2f}, at end {os.getloadavg()[0]:.2f} (other benchmarks ran alongside: "
        "times are the minimum of the repeats).",
        "",
        "## (a) Adult resampled, Anatomy l = 3 on occupation, 4 facts P(v | col = q) == p",
        "",
        "| records | cells | solve s (CPU s), no facts | solve s (CPU s), 4 facts | Newton steps "
        "| residual | gap (nats/rec) |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows_a:
        lines.append(
            f"| {r['n']:,} | {r['cells']:,} | {r['without']:.2f} ({r['without_cpu']:.2f}) | "
            f"{r['with']:.2f} ({r['with_cpu']:.2f}) | "
            f"{r['iterations']} | {r['residual']:.1e} | {r['gap']:.1e} |"
        )
    if len(rows_a) >= 2:
        n = np.array([r["n"] for r in rows_a], dtype=float)
        for key in ("without", "with"):
            slope = np.polyfit(np.log(n), np.log([r[key] for r in rows_a]), 1)[0]
            lines.append(f"\nlog-log slope of solve time vs records ({key} facts): {slope:.2f}")
    lines += ["", "## (b) Du Adult, Top-(500, 500) rules: build + solve", ""]
    if row_b:
        r = row_b
        lines += [
            "| | build s | solve s | total s |",
            "|---|---:|---:|---:|",
            f"| ours (maxent, {r['iterations']} Newton steps) | {r['ours_build']:.3f} | "
            f"{r['ours_solve']:.3f} | {r['ours_build'] + r['ours_solve']:.3f} |",
            f"| plain cvxpy + Clarabel | {r['plain_build']:.3f} | {r['plain_solve']:.3f} | "
            f"{r['plain_build'] + r['plain_solve']:.3f} |",
            "",
            f"ratio of the minima {r['ratio']:.1f}x (median of the "
            f"interleaved pairs {r['ratio_median']:.1f}x); max abs Δ posterior against "
            f"plain Clarabel (unpolished, tol 1e-6) {r['dpost']:.1e}. CPU time of the process "
            f"(build + solve, minima): ours {r['cpu_ours']:.3f} s, plain "
            f"{r['cpu_plain']:.3f} s -> {r['cpu_plain'] / r['cpu_ours']:.1f}x",
        ]
    lines += ["", "## Targets", "", "| target | status | measured |", "|---|---|---|"]
    at = next((r for r in rows_a if r["n"] == TARGET_N), None)
    if at:
        ok = "met" if at["with"] < TARGET_S else "missed"
        lines.append(
            f"| 200,000 records, 4 facts: solve < 3 s | {ok} | {at['with']:.2f} s "
            f"(CPU {at['with_cpu']:.2f} s; {at['without']:.2f} s without facts) |"
        )
    if row_b:
        ok = "met" if row_b["ratio"] >= TARGET_RATIO else "missed"
        lines.append(
            f"| Du Adult 1,000 rules: >= 20x plain cvxpy+Clarabel | {ok} | {row_b['ratio']:.1f}x |"
        )
    return "\n".join(lines) + "\n"


def profile(which: str) -> None:
    """cProfile of one solve: (a) at 200,000 records with facts, or (b) build + solve."""
    if which == "a":
        frame, release = adult_release(TARGET_N)
        model = with_facts(release, four_facts(frame))
        model.solve()  # warm
        run = model.solve
    else:
        build = prepare({"kind": "du-adult", "k": 1000})
        build_and_solve(build)

        def run():
            build_and_solve(build)

    prof = cProfile.Profile()
    prof.runcall(run)
    stats = pstats.Stats(prof).strip_dirs()
    stats.sort_stats("cumtime").print_stats(45)
    stats.sort_stats("tottime").print_stats(30)


def main(argv=None) -> int:
    parser = argument_parser(__doc__, quick="")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--profile", choices=["a", "b"], default=None)
    parser.add_argument("--only", choices=["a", "b"], default=None)
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    if args.profile:
        profile(args.profile)
        return 0
    load = os.getloadavg()
    sizes = SIZES[:1] if args.quick else SIZES
    repeat = 1 if args.quick else args.repeat
    rows_a = run_a(sizes, repeat) if args.only != "b" else []
    row_b = run_b(repeat) if args.only != "a" else None
    command = "python benchmarks/facts_scale.py " + " ".join(
        argv if argv is not None else sys.argv[1:]
    )
    text = report(rows_a, row_b, command.strip(), load)
    name = "facts_scale-quick.md" if args.quick else "facts_scale.md"
    if not args.only:
        write_text(args.out / name, text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
