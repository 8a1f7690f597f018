"""The build and solve at census scale (issue 14, item 5): time and memory against records.

Not a test: a by-hand benchmark that writes ``benchmarks/results/scale.md``.

The instance is ``benchmarks/solvers.py``'s ``synth-N``: N records resampled from Adult
with replacement (fresh pseudonyms), published in 5 cumulative releases (release i is
Anatomy, l = 3, occupation sensitive, of the first i/5 of a seeded permutation), pooled in
one ``MaxEntModel(releases)``. Each size runs in a fresh child process (``python
benchmarks/scale.py --child ...``) killed after ``--cap`` seconds: it makes the releases
(not timed), then times the build (``MaxEntModel(releases)``, the minimum of ``--reps``
builds for sizes up to 1,000,000) and ``model.solve()``, and reports the child's peak
resident memory (``ru_maxrss``; also after making the releases, so the difference is what
build and solve added) and the certificate's residual.

The time-versus-records slope is the least-squares line ``t = a + b N`` through the
finished sizes (``b`` in seconds per million records), and the log-log exponent the slope
of ``log t`` against ``log N``.

With ``--base DIR`` (a checkout of the code to compare with, e.g. a detached worktree of
``main``) the 1,000,000-record build also runs with ``PYTHONPATH=DIR``, right after the
current code's, and the table reports the ratio build(new) / build(base) of wall and CPU
time from the same run.

Run from the repository root::

    python benchmarks/scale.py                    # 100k ... 10M
    python benchmarks/scale.py --quick            # 20k, 50k
    git -C . worktree add --detach ../base main
    python benchmarks/scale.py --base ../base     # with the ratio against main

Options: ``--sizes N,N,...``, ``--cap SECONDS`` (per size, default 900), ``--reps K``
(builds per size up to 1M, default 3), ``--out DIR``. Writes ``scale.md`` (and
``scale.png``, a log-log plot, not meant to be committed).
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import tempfile
import time
import traceback
import warnings
from pathlib import Path

import numpy as np
from _common import argument_parser, peak_rss_gb

HERE = Path(__file__).resolve().parent
DEFAULT_OUT = HERE / "results"
FULL = [100_000, 300_000, 1_000_000, 3_000_000, 10_000_000]
QUICK = [20_000, 50_000]
RELEASES = 5
RATIO_AT = 1_000_000


def child(spec_path: str) -> None:
    """Make the releases of one size, time build (and solve), write ``<spec>.out.pkl``."""
    warnings.simplefilter("ignore")
    spec = json.loads(Path(spec_path).read_text())
    out: dict = {}
    try:
        sys.path.insert(0, str(HERE))
        from solvers import prepare  # the synth-N instance of the solver benchmark

        import maxent_privacy

        out["package"] = str(Path(maxent_privacy.__file__).parent)
        fig1 = prepare({"kind": "du-fig1"})()  # imports and first-call costs
        fig1.solve()
        t0 = time.perf_counter()
        build = prepare({"kind": "synth", "n": spec["n"], "releases": RELEASES})
        out["prepare_time"] = time.perf_counter() - t0
        out["rss_prepared_gb"] = peak_rss_gb()
        walls, cpus = [], []
        for _ in range(spec["reps"]):
            model = None  # the previous model is freed before the next build
            t0, c0 = time.perf_counter(), time.process_time()
            model = build()
            walls.append(time.perf_counter() - t0)
            cpus.append(time.process_time() - c0)
        out["build_time"], out["build_cpu"] = min(walls), min(cpus)
        out["cells"] = model.n_cells
        out["classes"] = len(model.classes)
        out["rss_built_gb"] = peak_rss_gb()
        if not spec.get("build_only"):
            t0, c0 = time.perf_counter(), time.process_time()
            result = model.solve()
            out["solve_time"] = time.perf_counter() - t0
            out["solve_cpu"] = time.process_time() - c0
            out["residual"] = float(result.certificate.primal_residual)
            out["components"] = result.solver_stats.get("components")
        out["peak_rss_gb"] = peak_rss_gb()
    except Exception as err:
        out["error"] = f"{type(err).__name__}: {' '.join(str(err).split())[:300]}"
        out["traceback"] = traceback.format_exc()
    from maxent_privacy.files import atomic_write

    with atomic_write(spec_path + ".out.pkl", "wb") as fh:  # never a half pickle
        pickle.dump(out, fh)


def run_capped(spec: dict, cap: float, tmp: Path, pythonpath: str) -> dict:
    """One child process with ``PYTHONPATH=pythonpath``, killed after ``cap`` seconds."""
    from maxent_privacy.files import write_text

    path = tmp / f"{spec['label']}.json"
    write_text(path, json.dumps(spec))
    env = {**os.environ, "PYTHONPATH": pythonpath}
    row = {"label": spec["label"], "n": spec["n"]}
    t0 = time.perf_counter()
    try:
        done = subprocess.run(
            [sys.executable, __file__, "--child", str(path)],
            timeout=cap,
            check=False,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
    except subprocess.TimeoutExpired:
        row["error"] = f"timeout (cap {cap:g} s)"
        return row
    row["wall"] = time.perf_counter() - t0
    out = Path(str(path) + ".out.pkl")
    if not out.exists():
        tail = done.stderr.decode(errors="replace").strip().splitlines()[-1:] or [""]
        row["error"] = f"child died (exit {done.returncode}; killed by memory?) {tail[0][:120]}"
        return row
    with open(out, "rb") as fh:
        row.update(pickle.load(fh))
    return row


def slope(rows: list[dict], key) -> tuple[float, float]:
    """(seconds per million records of the least-squares line, log-log exponent)."""
    done = [r for r in rows if "solve_time" in r]
    if len(done) < 2:
        return float("nan"), float("nan")
    n = np.array([r["n"] for r in done], dtype=float) / 1e6
    t = np.array([key(r) for r in done])
    per_million = float(np.polyfit(n, t, 1)[0])
    exponent = float(np.polyfit(np.log(n), np.log(t), 1)[0])
    return per_million, exponent


def total(r: dict) -> float:
    return r["build_time"] + r["solve_time"]


def table(rows: list[dict]) -> str:
    head = (
        "| records | cells | classes | build s (CPU) | solve s (CPU) | total s | "
        "peak RSS GB (after releases) | residual |"
    )
    lines = [head, "|" + "---|" * 8]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['n']:,} | | | | | | | {r['error'][:120]} |")
            continue
        solve = f"{r['solve_time']:.2f} ({r['solve_cpu']:.2f})" if "solve_time" in r else "not run"
        tot = f"{total(r):.2f}" if "solve_time" in r else ""
        res = f"{r['residual']:.1e}" if "residual" in r else ""
        lines.append(
            f"| {r['n']:,} | {r['cells']:,} | {r['classes']:,} | "
            f"{r['build_time']:.2f} ({r['build_cpu']:.2f}) | {solve} | {tot} | "
            f"{r['peak_rss_gb']:.2f} ({r['rss_prepared_gb']:.2f}) | {res} |"
        )
    return "\n".join(lines)


def plot(rows: list[dict], png: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    done = [r for r in rows if "solve_time" in r]
    if not done:
        return
    n = [r["n"] for r in done]
    fig, ax = plt.subplots(figsize=(6, 4))
    for label, key in (("build", "build_time"), ("solve", "solve_time")):
        ax.loglog(n, [r[key] for r in done], "o-", label=label)
    ax.loglog(n, [total(r) for r in done], "s-", label="build + solve")
    ax.axhline(60, color="grey", ls=":", label="60 s")
    ax.set_xlabel("records (5 cumulative releases)")
    ax.set_ylabel("seconds")
    ax.legend()
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    from maxent_privacy.files import save_figure

    save_figure(png, fig, dpi=100)
    plt.close(fig)


def targets(rows: list[dict], base: dict | None) -> list[str]:
    out = []
    one = next((r for r in rows if r["n"] == RATIO_AT and "build_time" in r), None)
    if one is not None:
        ok = "met" if one["build_time"] <= 3 else "missed"
        out.append(
            f"| build of 1,000,000 records <= 3 s | {ok} | {one['build_time']:.2f} s wall, "
            f"{one['build_cpu']:.2f} s CPU |"
        )
    if one is not None and base is not None and "build_time" in base:
        out.append(
            f"| build(new) / build(base) at 1,000,000 | | wall {one['build_time']:.2f} / "
            f"{base['build_time']:.2f} = {one['build_time'] / base['build_time']:.2f}; CPU "
            f"{one['build_cpu']:.2f} / {base['build_cpu']:.2f} = "
            f"{one['build_cpu'] / base['build_cpu']:.2f} |"
        )
    big = next((r for r in rows if r["n"] == 10_000_000), None)
    if big is not None and "solve_time" in big:
        ok = total(big) <= 60 and big["peak_rss_gb"] <= 16
        out.append(
            f"| 10,000,000 records built and solved <= 60 s, <= 16 GB | "
            f"{'met' if ok else 'missed'} | {total(big):.1f} s, peak RSS "
            f"{big['peak_rss_gb']:.1f} GB |"
        )
    elif big is not None:
        out.append(f"| 10,000,000 records <= 60 s, <= 16 GB | missed | {big.get('error')} |")
    return out


def main(argv=None) -> int:
    p = argument_parser(__doc__)
    p.add_argument("--child")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--sizes", help="comma-separated record counts")
    p.add_argument("--cap", type=float, default=900.0)
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--base", type=Path, help="a checkout of the code to compare the build with")
    p.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = p.parse_args(argv)
    if args.child:
        child(args.child)
        return 0
    sys.path.insert(0, str(HERE.parent))  # this checkout's package, for writing the table
    sizes = QUICK if args.quick else FULL
    if args.sizes:
        sizes = [int(s) for s in args.sizes.split(",")]
    here = str(HERE.parent)
    load = os.getloadavg()
    command = "python benchmarks/scale.py " + " ".join(argv if argv is not None else sys.argv[1:])
    rows, base = [], None
    t_start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        for n in sizes:
            reps = args.reps if n <= RATIO_AT else 1
            spec = {"label": f"new-{n}", "n": n, "reps": reps}
            row = run_capped(spec, args.cap, tmp, here)
            rows.append(row)
            print(f"[{time.perf_counter() - t_start:6.0f} s] {n:>11,}: " + _line(row), flush=True)
            if n == RATIO_AT and args.base is not None:
                spec = {"label": f"base-{n}", "n": n, "reps": reps, "build_only": True}
                base = run_capped(spec, args.cap, tmp, str(args.base.resolve()))
                print(f"          base {n:,}: " + _line(base), flush=True)
    load_end = os.getloadavg()
    per_m, expo = slope(rows, total)
    b_m, b_e = slope(rows, lambda r: r["build_time"])
    s_m, s_e = slope(rows, lambda r: r["solve_time"])
    cpu_m, cpu_e = slope(rows, lambda r: r["build_cpu"] + r["solve_cpu"])
    args.out.mkdir(parents=True, exist_ok=True)
    suffix = "-quick" if args.quick else ""
    plot(rows, args.out / f"scale{suffix}.png")
    md = [
        "# Build and solve at scale" + (" (quick)" if args.quick else ""),
        "",
        f"Command: `{command}` (total {time.perf_counter() - t_start:.0f} s; load average "
        f"{load[0]:.1f} at the start, {load_end[0]:.1f} at the end, 2 cores shared with "
        "other jobs).",
        "",
        f"Instance: `solvers.py`'s synth-N, {RELEASES} cumulative Anatomy releases (l = 3) of N "
        "records resampled from Adult, pooled by person id. Build = `MaxEntModel(releases)` "
        f"(the minimum of {args.reps} builds up to 1,000,000 records, one above); solve = "
        "`model.solve()` (package defaults); wall seconds, CPU seconds of the child in "
        "brackets. Peak RSS = the child's `ru_maxrss` (in brackets: after making the "
        "releases, before the build).",
        "",
        table(rows),
        "",
        f"Least-squares slope over the finished sizes: build + solve {per_m:.2f} s per million "
        f"records (build {b_m:.2f}, solve {s_m:.2f}); log-log exponent {expo:.2f} "
        f"(build {b_e:.2f}, solve {s_e:.2f}).",
        f"In CPU seconds (less sensitive to the load): {cpu_m:.2f} s per million records, "
        f"log-log exponent {cpu_e:.2f}.",
        "",
        *([f"Base code for the ratio: `{base.get('package', args.base)}`.", ""] if base else []),
        "| target | verdict | measured |",
        "|---|---|---|",
        *targets(rows, base),
        "",
    ]
    from maxent_privacy.files import write_text

    write_text(args.out / f"scale{suffix}.md", "\n".join(md))
    print("\n".join(md))
    return 0


def _line(row: dict) -> str:
    if "error" in row:
        return row["error"]
    text = f"build {row['build_time']:.2f} s (CPU {row['build_cpu']:.2f})"
    if "solve_time" in row:
        text += f", solve {row['solve_time']:.2f} s, residual {row['residual']:.1e}"
    return text + f", {row['cells']:,} cells, peak RSS {row['peak_rss_gb']:.2f} GB"


if __name__ == "__main__":
    sys.exit(main())
