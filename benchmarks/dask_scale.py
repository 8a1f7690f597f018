"""Dask (issue 14, item 6): many-component instances solved locally and on a 2-worker
``LocalCluster``, with the measured speedup.

Not a test: a by-hand benchmark that writes ``benchmarks/results/dask.md``.

Instances (the data prepared untimed, the model built once; every solve is ``model.solve``
with the package defaults, our Newton solver):

* ``regions-R-N`` -- N records resampled from Adult, each given one of R regions; every
  region anatomized on its own (education, l = 5, HS-grad and Some-college non-sensitive)
  and the R releases put side by side as one release (no bucket mixes regions); the
  Top-(K, K) rules on (region, age, sex) => education. Every rule names its region, so the
  regions are independent; inside a region the rules tie many buckets together: thousands
  of components with facts, some of tens of thousands of cells (heavy Newton work).
* ``adult-rules-K`` -- all 45,222 Adult records anatomized as above with the Top-(K, K)
  rules on all eight QI attributes (Du et al.'s setting on the whole of Adult): one
  component of most of the work (its Hessian's LU dominates), hundreds of small ones.
* ``du-adult-1000`` -- ``benchmarks/solvers.py``'s instance (14,210 records, Top-(500,
  500) rules): hundreds of small, cheap components.

For each instance: the local solve (``client=None``), then the same model on a
``LocalCluster(n_workers=2, processes=True, threads_per_worker=1)`` started once (its
start-up is reported, not counted; one untimed solve warms the workers up). Times are the
minimum of ``--repeat`` runs; ``speedup = local / dask`` of ``model.solve`` (whole solve:
presolve, split, Newton, certificate) and of the Newton stage alone (of the last pass:
its batch records add up to it). ``adult-rules-2500`` (about 20 s a solve) is run at most
twice. What is shipped is measured on the way out of the
client (pickled bytes of each batch's arrays) and the workers' compute time per batch from
the distributed task stream. ``max |Δ post|`` is the largest posterior difference between
the Dask and the local answer; both are certified (residual shown).

The conic row: Dask takes our Newton solver only (``client=`` with a conic solver is refused
by the options); the per-component times of Clarabel on Du Adult with 1,000 rules bound
what shipping conic components could gain on two workers.

Run from the repository root::

    PYTHONPATH=. python benchmarks/dask_scale.py            # full run (~5 min)
    PYTHONPATH=. python benchmarks/dask_scale.py --quick    # smoke run
"""

from __future__ import annotations

import os
import pickle
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import argument_parser, machine_info  # noqa: E402
from solvers import prepare  # noqa: E402  (the du-adult-K instances)

from maxent_privacy import Bucketized, MaxEntModel, anonymize, datasets  # noqa: E402
from maxent_privacy.files import write_text  # noqa: E402
from maxent_privacy.rules import mine_rules  # noqa: E402

OUT = Path(__file__).resolve().parent / "results" / "dask.md"
SA, L, EXEMPT = "education", 5, ["HS-grad", "Some-college"]


# ------------------------------------------------------------------------ instances
def regions(n_regions: int, n: int, k: int) -> MaxEntModel:
    """R independent regions side by side in one release, rules naming their region."""
    adult = datasets.load_adult()
    qi = list(datasets.ADULT_QI) + ["region"]
    frame = adult.iloc[np.random.default_rng(0).integers(0, len(adult), n)].reset_index(drop=True)
    frame["region"] = np.arange(n) % n_regions
    parts = []
    for g in range(n_regions):
        rel = anonymize.anatomize(
            frame[frame.region == g], qi, SA, l=L, seed=g, nonsensitive=EXEMPT
        )
        parts.append(rel.frame.assign(group=rel.frame["group"] + g * 10**6))
    release = Bucketized(pd.concat(parts), qi, SA, "group")
    rules = mine_rules(frame, qi=["region", "age", "sex"], sa=SA, min_support=3)
    model = MaxEntModel(release)
    model.add(rules.top(k, k))
    return model


def adult_rules(k: int, frame: pd.DataFrame | None = None) -> MaxEntModel:
    """All of Adult (or ``frame``), Anatomy, Top-(k, k) rules on the eight QI attributes."""
    frame = datasets.load_adult() if frame is None else frame
    qi = list(datasets.ADULT_QI)
    release = anonymize.anatomize(frame, qi, SA, l=L, seed=0, nonsensitive=EXEMPT)
    rules = mine_rules(frame, qi=qi, sa=SA, min_support=3)
    model = MaxEntModel(release)
    model.add(rules.top(k, k))
    return model


# ------------------------------------------------------------------------ measuring
class Shipping:
    """A client wrapper that records the pickled size of what each ``submit`` ships."""

    def __init__(self, client):
        self.client, self.sent = client, []

    def submit(self, fn, *args, **kwargs):
        self.sent.append(len(pickle.dumps(args, protocol=pickle.HIGHEST_PROTOCOL)))
        return self.client.submit(fn, *args, **kwargs)

    def __getattr__(self, name):
        return getattr(self.client, name)


def newton_stage(result) -> float:
    """Wall time of the last pass's Newton stage (its batch records add up to it)."""
    comps = result.components
    newton = comps[comps["method"].astype(str).str.startswith("maxent")]
    return float(newton["wall_time"].sum()) if len(newton) else 0.0


def once(model, client=None) -> tuple[float, float, object]:
    t0 = time.perf_counter()
    result = model.solve(client=client, progress=False)
    return time.perf_counter() - t0, newton_stage(result), result


def measure(name: str, model, client, repeat: int) -> dict:
    """Local and Dask solves interleaved (the machine's load changes), minimum of each."""
    from dask.distributed import get_task_stream

    spy = Shipping(client)
    model.solve(client=spy, progress=False)  # untimed: what one solve ships
    local, dask = [], []
    with get_task_stream(client) as ts:
        for _ in range(repeat):
            local.append(once(model))
            dask.append(once(model, client))
    ref, res = local[-1][2], dask[-1][2]
    tasks = [t for t in ts.data if str(t["key"]).startswith("run_job")]
    compute = [
        sum(s["stop"] - s["start"] for s in t["startstops"] if s["action"] == "compute")
        for t in tasks
    ]
    stats = ref.solver_stats
    comps = ref.components
    t_local, n_local = min(r[0] for r in local), min(r[1] for r in local)
    t_dask, n_dask = min(r[0] for r in dask), min(r[1] for r in dask)
    return {
        "instance": name,
        "cells": stats["cells"],
        "components": stats["components"],
        "newton": stats["solved"],
        "facts": int(
            comps.loc[comps["method"].astype(str).str.startswith("maxent"), "facts"].sum()
        ),
        "late_zeros": sum(stats["forced_zeros"].values()),
        "local": t_local,
        "dask": t_dask,
        "speedup": t_local / t_dask,
        "local_newton": n_local,
        "dask_newton": n_dask,
        "newton_speedup": n_local / n_dask if n_dask else np.nan,
        "batches": len(spy.sent),
        "mb_per_batch": np.mean(spy.sent) / 1e6 if spy.sent else 0.0,
        "compute_per_batch": (min(compute), max(compute)) if compute else (0.0, 0.0),
        "workers": len({t["worker"] for t in tasks}),
        "diff": float((ref.posterior() - res.posterior()).abs().to_numpy().max()),
        "residual": max(ref.certificate.primal_residual, res.certificate.primal_residual),
    }


def conic_bound(repeat: int) -> dict:
    """Clarabel per component on Du Adult with 1,000 rules: what two workers could gain."""
    model = adult_rules(500, datasets.du2008_adult())
    best, result = np.inf, None
    for _ in range(repeat):  # the fastest run, with its own component times
        t0 = time.perf_counter()
        res = model.solve(solver="CLARABEL", progress=False)
        if time.perf_counter() - t0 < best:
            best, result = time.perf_counter() - t0, res
    comps = result.components
    per = comps.loc[comps["method"] == "CLARABEL", "wall_time"].astype(float)
    total, largest = float(per.sum()), float(per.max())
    return {
        "total": best,
        "components": len(per),
        "sum": total,
        "largest": largest,
        "bound": best / (best - total + max(largest, total / 2)),
    }


# ------------------------------------------------------------------------ report
def table(rows: list[dict]) -> list[str]:
    out = [
        "| instance | cells | components (Newton) | fact rows in Newton | late zeros "
        "| local s | Dask s | speedup | Newton stage local / Dask s | Newton speedup "
        "| batches x MB shipped "
        "| worker compute per batch s | workers used | max abs Δ post | residual |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lo, hi = r["compute_per_batch"]
        out.append(
            f"| {r['instance']} | {r['cells']:,} | {r['components']:,} ({r['newton']:,}) "
            f"| {r['facts']:,} | {r['late_zeros']} | {r['local']:.2f} | {r['dask']:.2f} "
            f"| **{r['speedup']:.2f}x** "
            f"| {r['local_newton']:.2f} / {r['dask_newton']:.2f} | {r['newton_speedup']:.2f}x "
            f"| {r['batches']} x {r['mb_per_batch']:.1f} | {lo:.2f} .. {hi:.2f} "
            f"| {r['workers']} | {r['diff']:.1e} | {r['residual']:.1e} |"
        )
    return out


def main(argv=None) -> int:
    ap = argument_parser(__doc__, quick="small instances, one run each")
    ap.add_argument("--repeat", type=int, default=3, help="runs per solve (minimum kept)")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    from dask.distributed import Client, LocalCluster

    repeat = 1 if args.quick else args.repeat
    specs = (
        [("regions-4-20k", lambda: regions(4, 20_000, 200), None)]
        if args.quick
        else [
            ("regions-16-160k", lambda: regions(16, 160_000, 1000), None),
            ("regions-16-320k", lambda: regions(16, 320_000, 2000), None),
            ("adult-rules-2500", lambda: adult_rules(2500), 2),
            ("du-adult-1000", lambda: prepare({"kind": "du-adult", "k": 1000})(), None),
        ]
    )
    info = machine_info()
    t0 = time.perf_counter()
    cluster = LocalCluster(
        n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None
    )
    client = Client(cluster)
    startup = time.perf_counter() - t0
    rows = []
    try:
        for name, make, most in specs:
            model = make()
            model.solve(client=client, progress=False)  # warm-up: imports on the workers
            rows.append(measure(name, model, client, min(repeat, most or repeat)))
            print(table(rows)[-1], flush=True)
        conic = conic_bound(repeat)
    finally:
        client.close()
        cluster.close()
    load = os.getloadavg()
    lines = [
        "# Dask: many components on a 2-worker LocalCluster against the local solve",
        "",
        f"`PYTHONPATH=. python benchmarks/dask_scale.py{' --quick' if args.quick else ''}` "
        f"({info['date']}, {info['nproc']} cores, load average at start "
        f"{info['loadavg_at_start'][0]:.2f}, at end {load[0]:.2f}; other benchmarks ran "
        f"at the same time). Times: minimum of {repeat} runs of `model.solve`; the cluster "
        f"(`LocalCluster(n_workers=2, processes=True, threads_per_worker=1)`) took "
        f"{startup:.1f} s to start, not counted.",
        "",
        *table(rows),
        "",
        "Helps (speedup >= 1.2x): "
        + (", ".join(r["instance"] for r in rows if r["speedup"] >= 1.2) or "none")
        + "; does not (< 1.2x): "
        + (", ".join(r["instance"] for r in rows if r["speedup"] < 1.2) or "none")
        + ". A batch is one Newton solve over its components; a component is never split.",
        "",
        f"Conic: `client=` takes our Newton solver only. Clarabel on Du Adult with Top-(500, "
        f"500) rules: {conic['total']:.2f} s in all, {conic['components']} components solved "
        f"one at a time in {conic['sum']:.2f} s, the largest {conic['largest']:.2f} s; two "
        f"workers could at best make it {conic['bound']:.2f}x faster.",
    ]
    write_text(args.out, "\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
