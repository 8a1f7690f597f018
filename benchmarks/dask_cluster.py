"""Distributed build and solve (issue 26): 1M to 30M synthetic people over 3 pooled
releases read from Parquet, on a LocalCluster of 4 workers x 3 GB.

Not a test: a by-hand benchmark that writes ``benchmarks/results/distributed.md`` (and
``.json`` beside it).

For each size N: the releases are written as Parquet files of N/8 people (100k to 1M)
(:func:`maxent_privacy.distributed.synthetic.write_synthetic`: 3 releases, 90 % of the
people in each, buckets of 40 to 79 people in windows of 320, 5 sensitive values; by
default one region, so the releases chain everyone into one connected component: the
component is far bigger than one worker and is solved by the distributed Newton-CG).
Untimed. Then, timed: the checks (:class:`~maxent_privacy.distributed.DaskBucketized`),
the build (:func:`~maxent_privacy.distributed.build_distributed`) and the solve with the
results written by the workers (:func:`~maxent_privacy.distributed.solve_distributed`).
The cluster is restarted between sizes (its memory freed).

Measured: wall times; the peak memory of every worker process (the scheduler's
heartbeats, sampled every 0.5 s; the largest over the workers) and of this client
process (its RSS, sampled likewise; with a LocalCluster the scheduler runs in this
process too), both also per phase (checks, build, solve), bytes spilled to disk (the
largest over the run); Newton and CG iterations. Up to ``--compare-max`` people, the in-memory path
(``MaxEntModel(...).solve()``) is run in a child process on the same files, and the
largest difference of the people's posteriors and both certificates are reported.

Run from the repository root::

    PYTHONPATH=. python benchmarks/dask_cluster.py --sizes 1e6 3e6           # ~minutes
    PYTHONPATH=. python benchmarks/dask_cluster.py --sizes 1e6 3e6 1e7 3e7   # the issue's run
    PYTHONPATH=. python benchmarks/dask_cluster.py --sizes 2e5 --workers 2 --memory 1.5GB
    PYTHONPATH=. python benchmarks/dask_cluster.py --plot benchmarks/results/distributed*.json \
        --out benchmarks/results/distributed.png                          # the scaling figure
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import psutil

HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("_common", HERE / "_common.py")
_common = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_common)
argument_parser, jsonable, machine_info = (
    _common.argument_parser,
    _common.jsonable,
    _common.machine_info,
)

from maxent_privacy.distributed.synthetic import QI, SA, write_synthetic  # noqa: E402
from maxent_privacy.files import write_together  # noqa: E402

OUT = HERE / "results" / "distributed.md"
GB = 2**30

IN_MEMORY = r"""
import json, resource, sys, time
import pandas as pd
from maxent_privacy import Bucketized, MaxEntModel
from maxent_privacy.distributed.synthetic import QI, SA
from maxent_privacy.files import write_frame, write_text
paths, out = sys.argv[1:-1], sys.argv[-1]
t0 = time.perf_counter()
model = MaxEntModel([Bucketized(pd.read_parquet(p), QI, SA, "group", person="pid")
                     for p in paths])
result = model.solve(progress=False)
seconds = time.perf_counter() - t0
post = result.person_posterior()
post.columns = [str(c) for c in post.columns]
write_frame(out + ".parquet", post.reset_index(), index=False)
c = result.certificate
summary = {"seconds": seconds, "residual": c.primal_residual, "entropy": c.entropy,
           "dual_bound": c.dual_bound, "gap": c.gap, "status": result.status,
           "peak_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20}
write_text(out + ".json", json.dumps(summary))
"""


class Sampler:
    """Peak memory of each worker (scheduler heartbeats) and of this process, and the
    largest spill, sampled every ``every`` seconds on a thread; ``phase`` names the
    phase running (peaks per phase in ``phases``: client and largest worker)."""

    def __init__(self, client, every: float = 0.5):
        self.client, self.every = client, every
        self.workers: dict[str, float] = {}
        self.client_peak = 0.0
        self.spilled = 0.0
        self.phase = "start"
        self.phases: dict[str, list[float]] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        me = psutil.Process()
        while not self._stop.is_set():
            rss = me.memory_info().rss
            self.client_peak = max(self.client_peak, rss)
            try:
                info = self.client.scheduler_info()["workers"]
            except Exception:  # noqa: BLE001 - a restart in progress: try again
                info = {}
            peak = self.phases.setdefault(self.phase, [0.0, 0.0])
            peak[0] = max(peak[0], rss)
            for addr, w in info.items():
                m = w.get("metrics", {})
                self.workers[addr] = max(self.workers.get(addr, 0.0), m.get("memory", 0))
                self.spilled = max(self.spilled, m.get("spilled_bytes", {}).get("disk", 0))
                peak[1] = max(peak[1], m.get("memory", 0))
            self._stop.wait(self.every)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


def in_memory(paths, folder: Path) -> dict:
    """The in-memory path in a child process: its answer and certificate."""
    out = folder / "in-memory"
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    subprocess.run(
        [sys.executable, "-c", IN_MEMORY, *map(str, paths), str(out)], check=True, env=env
    )
    info = json.loads(Path(str(out) + ".json").read_text())
    info["posterior"] = str(out) + ".parquet"
    return info


def run_size(n: int, client, args, folder: Path) -> dict:
    import dask.dataframe as dd

    from maxent_privacy.distributed import DaskBucketized, build_distributed, solve_distributed

    data = folder / f"n{n}"
    t0 = time.perf_counter()
    chunk = min(1_000_000, max(100_000, n // 8))  # files of 100k to 1M people
    paths = write_synthetic(data, n, releases=3, regions=args.regions, chunk=chunk)
    t_write = time.perf_counter() - t0
    row = {"n": n, "regions": args.regions, "write_s": t_write}
    with Sampler(client) as sampler:
        sampler.phase = "check"
        t0 = time.perf_counter()
        rels = [
            DaskBucketized(dd.read_parquet(p), QI, SA, "group", "pid",
                           name=f"release {r + 1}", client=client)
            for r, p in enumerate(paths)
        ]  # fmt: skip
        row["check_s"] = time.perf_counter() - t0
        sampler.phase = "build"
        t0 = time.perf_counter()
        s = build_distributed(rels, client)
        row["build_s"] = time.perf_counter() - t0
        sampler.phase = "solve"
        t0 = time.perf_counter()
        result = solve_distributed(s, data / "answer", client=client)
        row["solve_s"] = time.perf_counter() - t0
    row["total_s"] = row["check_s"] + row["build_s"] + row["solve_s"]
    row.update(
        people=s.n_persons, classes=s.n_classes, rows=s.n_rows, buckets=s.n_buckets,
        records=sum(r.n_records for r in rels), **result.solver_stats,
        residual=result.certificate.primal_residual, gap=result.certificate.gap,
        entropy=result.certificate.entropy, dual_bound=result.certificate.dual_bound,
        worker_peak_gb=max(sampler.workers.values(), default=0) / GB,
        client_peak_gb=sampler.client_peak / GB, spilled_gb=sampler.spilled / GB,
        phase_peaks_gb={k: [v / GB for v in p] for k, p in sampler.phases.items()},
        settings={"workers": args.workers, "memory": args.memory},
    )  # fmt: skip
    comps = pd.read_parquet(data / "answer" / "components")
    row["cells"] = int(comps["cells"].sum())
    if "cg_iterations" in comps:
        cg = comps[comps["method"] == "distributed Newton-CG"]
        row["newton_iterations"] = int(cg["iterations"].sum())
        row["cg_iterations"] = int(cg["cg_iterations"].sum())
    del s, rels, result
    client.restart()  # the cluster's memory freed before the in-memory run
    if n <= args.compare_max:
        ref = in_memory(paths, data)
        mine = pd.read_parquet(data / "answer" / "posterior").set_index("person").sort_index()
        theirs = pd.read_parquet(ref["posterior"]).set_index("person").sort_index()
        cols = list(theirs.columns)
        same = mine.index.equals(theirs.index)
        row["max_diff"] = (
            float(np.abs(mine[cols].to_numpy() - theirs.to_numpy()).max()) if same else np.nan
        )
        row["in_memory"] = {k: v for k, v in ref.items() if k != "posterior"}
    if not args.keep:
        shutil.rmtree(data, ignore_errors=True)
    return row


def table(rows: list[dict]) -> list[str]:
    out = [
        "| people | records | classes | cells | Relation rows | components (Newton-CG) "
        "| check s | build s | solve s | total s | Newton / CG iterations "
        "| worker peak GB | client peak GB | client GB check / build / solve "
        "| worker GB check / build / solve | spilled GB | residual | gap "
        "| in-memory s (GB); residual / gap | max abs Δ post |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        mem = r.get("in_memory")
        ref = (
            f"{mem['seconds']:.1f} ({mem['peak_gb']:.1f}); {mem['residual']:.1e} / {mem['gap']:.1e}"
            if mem
            else "–"
        )
        diff = f"{r['max_diff']:.1e}" if "max_diff" in r else "–"
        ph = r.get("phase_peaks_gb", {})
        by = [[f"{ph[k][j]:.2f}" if k in ph else "–" for k in ("check", "build", "solve")]
              for j in (0, 1)]  # fmt: skip
        out.append(
            f"| {r['people']:,} | {r['records']:,} | {r['classes']:,} | {r['cells']:,} "
            f"| {r['rows']:,} | {r['components']:,} ({r['newton_cg']}) | {r['check_s']:.1f} "
            f"| {r['build_s']:.1f} | {r['solve_s']:.1f} | {r['total_s']:.1f} "
            f"| {r.get('newton_iterations', 0)} / {r.get('cg_iterations', 0)} "
            f"| {r['worker_peak_gb']:.2f} | {r['client_peak_gb']:.2f} | {' / '.join(by[0])} "
            f"| {' / '.join(by[1])} | {r['spilled_gb']:.2f} "
            f"| {r['residual']:.1e} | {r['gap']:.1e} | {ref} | {diff} |"
        )
    return out


def main(argv=None) -> int:
    ap = argument_parser(__doc__)
    ap.add_argument("--sizes", nargs="+", type=float, default=[1e6, 3e6], help="people")
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--memory", default="3GB", help="memory limit per worker")
    ap.add_argument("--regions", type=int, default=1, help="1: one component (everyone)")
    ap.add_argument("--compare-max", type=float, default=3e6,
                    help="compare with the in-memory path up to this many people")  # fmt: skip
    ap.add_argument("--folder", type=Path, default=None, help="where the data go (temp)")
    ap.add_argument("--keep", action="store_true", help="keep the data and results")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument(
        "--plot", nargs="+", type=Path, metavar="JSON",
        help="draw the scaling figure (--out, .png) from recorded runs; no run",
    )  # fmt: skip
    args = ap.parse_args(argv)
    if args.plot:
        if args.out.resolve() in {p.resolve() for p in args.plot}:
            raise SystemExit(f"--out {args.out} is one of the inputs")
        return scaling_plot(args.plot, args.out)
    warnings.simplefilter("ignore")
    import logging

    from dask.distributed import Client, LocalCluster

    logging.getLogger("distributed").setLevel(logging.ERROR)
    info = machine_info()
    folder = Path(tempfile.mkdtemp(dir=args.folder))
    t0 = time.perf_counter()
    cluster = LocalCluster(
        n_workers=args.workers, threads_per_worker=1, processes=True,
        memory_limit=args.memory, dashboard_address=None,
    )  # fmt: skip
    client = Client(cluster)
    startup = time.perf_counter() - t0
    rows = []
    try:
        for n in args.sizes:
            rows.append(run_size(int(n), client, args, folder))
            print(table(rows)[-1], flush=True)
    finally:
        client.close()
        cluster.close()
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)
    load = os.getloadavg()
    lines = [
        "# Distributed build and solve: pooled releases on a LocalCluster",
        "",
        f"`PYTHONPATH=. python benchmarks/dask_cluster.py --sizes "
        f"{' '.join(f'{s:g}' for s in args.sizes)} --workers {args.workers} --memory "
        f"{args.memory} --regions {args.regions}` ({info['date']}, {info['nproc']} cores, load "
        f"average at start {info['loadavg_at_start'][0]:.2f}, at end {load[0]:.2f}). "
        f"LocalCluster of {args.workers} worker processes x {args.memory}, one thread each "
        f"(started in {startup:.1f} s, not counted). 3 releases, 90 % of the people in each; "
        "times exclude writing the Parquet files.",
        "",
        *table(rows),
        "",
        "Peaks: the largest worker process over the run (scheduler heartbeats) and this "
        "client process (RSS); spilled: bytes on disk at the worst moment. The in-memory "
        "column is `MaxEntModel(...).solve()` on the same files in a child process "
        "(seconds, peak GB).",
    ]
    write_together({
        args.out: "\n".join(lines) + "\n",
        args.out.with_suffix(".json"): json.dumps(jsonable(rows), indent=1) + "\n",
    })  # fmt: skip
    print("\n".join(lines))
    return 0


def scaling_plot(sources: list[Path], out: Path) -> int:
    """The scaling figure from runs already recorded (``.json`` files of this script):
    seconds per phase and peak memory (largest worker, client) against records."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = sorted(
        (r for src in sources for r in json.loads(Path(src).read_text())),
        key=lambda r: r["records"],
    )
    if not rows:
        raise SystemExit(f"no run recorded in {', '.join(map(str, sources))}")
    x = np.array([r["records"] for r in rows], dtype=float)
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4))
    for key, label in (("check_s", "checks"), ("build_s", "build"), ("solve_s", "solve")):
        a.loglog(x, [r[key] for r in rows], "o-", label=label)
    a.loglog(x, x / x[0] * rows[0]["solve_s"], ":", color="grey", label="linear in records")
    a.set(xlabel="records (3 pooled releases)", ylabel="seconds", title="Time")
    b.semilogx(x, [r["worker_peak_gb"] for r in rows], "o-", label="largest worker")
    b.semilogx(x, [r["client_peak_gb"] for r in rows], "s-", label="client (and scheduler)")
    from dask.utils import parse_bytes

    for gb in sorted({parse_bytes(r["settings"]["memory"]) / 1e9 for r in rows}):
        b.axhline(gb, color="grey", ls="--", lw=0.8)
        b.annotate(f"worker limit {gb:g} GB", (x[0], gb), va="bottom", fontsize=8)
    b.axhline(2.0, color="red", ls=":", lw=0.8)
    b.annotate("client target 2 GB", (x[0], 2.0), va="bottom", fontsize=8, color="red")
    b.set(xlabel="records (3 pooled releases)", ylabel="peak GB", title="Memory", ylim=(0, None))
    for ax in (a, b):
        ax.set_xticks(x, [f"{v / 1e6:.3g}M" for v in x], rotation=45, ha="right")
        ax.minorticks_off()
        ax.legend(fontsize=8)
        ax.grid(alpha=0.3)
    fig.tight_layout()
    write_together({out: lambda fh: fig.savefig(fh, format="png", dpi=110)})
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
