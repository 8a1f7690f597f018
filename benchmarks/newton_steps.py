"""By-hand benchmark (issue 24, item 2): Newton's step time with and without CHOLMOD.

On pooled releases that re-bucketize the same people the Hessian's graph is an expander
and its factor fills; this measures, per instance, the Newton steps and the time per
step with every factorization by qdldl ("before": ``factor.HAVE_CHOLMOD = False``) and
with the automatic choice of :mod:`maxent_privacy.solve.factor` ("after"), in this
process, one after the other, plus a plain cvxpy + Clarabel solve of the same model.

Instances: the signature-keeping sequences of ``benchmarks/solvers.py --sequences``
(by seed; default the nine that were under 20x in the issue's baseline) and the issue's
"10,000 people, 3 releases, l = 6" kind (``--issue``: Adult, ``occupation`` sensitive,
every QI, 2 true facts, built by the same generator).

Run from the repository root::

    python benchmarks/newton_steps.py                 # the nine seeds and the issue's kind
    python benchmarks/newton_steps.py --seeds 12 13   # chosen seeds only

Writes ``benchmarks/results/newton-steps.md`` (``--out DIR``); the table is also printed.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import argument_parser, machine_info  # noqa: E402
from random_instances import markdown  # noqa: E402
from solvers import _seq_model, plain_cvxpy, sequence_instance, signature_sequence, true_facts  # noqa: E402

from maxent_privacy.files import write_text  # noqa: E402
from maxent_privacy.solve import factor as factor_module  # noqa: E402

BASELINE_SLOW = [7, 8, 9, 11, 12, 13, 15, 17, 18]


def issue_instance(seed: int):
    """The issue's kind: 10,000 Adult people, 3 signature-keeping releases, l = 6."""
    from maxent_privacy import Bucketized, datasets

    rng = np.random.default_rng(seed)
    sa = "occupation"
    qi = [c for c in datasets.ADULT_QI if c != sa]
    adult = datasets.load_adult().sample(frac=1.0, random_state=seed).reset_index(drop=True)
    frame = adult[qi + [sa]].assign(pid=np.arange(len(adult)))
    frames = signature_sequence(frame, sa, 10_000, 3, 6, rng)
    releases = [Bucketized(f, qi=qi, sa=sa, group="bucket", person="pid") for f in frames]
    facts = true_facts(frames, qi, sa, 2, rng)
    text = f"issue kind {seed}: {'/'.join(f'{len(f):,}' for f in frames)} people, l = 6"
    return releases, facts, text


def _timed_factor(log: list):
    """``factor.factor`` wrapped to record each factorization's backend and seconds."""
    inner = factor_module.factor

    def timed(U, state):
        t = time.perf_counter()
        f = inner(U, state)
        log.append((type(f).__name__, time.perf_counter() - t, U.shape[0]))
        return f

    return timed


def measure(releases, facts, cholmod: bool) -> dict:
    from maxent_privacy.solve import hessian

    log: list = []
    saved = factor_module.HAVE_CHOLMOD, hessian.factor
    factor_module.HAVE_CHOLMOD = cholmod and saved[0]
    hessian.factor = _timed_factor(log)
    try:
        t = time.perf_counter()
        result = _seq_model(releases, facts).solve(solver="maxent")
        total = time.perf_counter() - t
    finally:
        factor_module.HAVE_CHOLMOD, hessian.factor = saved
    st = result.solver_stats
    steps = max(int(st["iterations"]), 1)
    return {
        "s": total,
        "steps": int(st["iterations"]),
        "s/step": st["solve_time"] / steps,
        "factor s": sum(t for _, t, _ in log),
        "factorizations": len(log),
        "backends": ",".join(sorted({k for k, _, _ in log})) or "-",
        "rows": max((n for _, _, n in log), default=0),
        "x": result.x,
        "residual": result.certificate.data_residual,
    }


def row(label, releases, facts, cap: float) -> dict:
    before = measure(releases, facts, cholmod=False)
    after = measure(releases, facts, cholmod=True)
    t = time.perf_counter()
    x_plain, status = plain_cvxpy(_seq_model(releases, facts), cap)
    plain = time.perf_counter() - t
    n = _seq_model(releases, facts).cells["n"].to_numpy(float)
    return {
        "instance": label,
        "H rows": after["rows"],
        "before: steps": before["steps"],
        "before: s/step": before["s/step"],
        "before: s": before["s"],
        "after: steps": after["steps"],
        "after: s/step": after["s/step"],
        "after: s": after["s"],
        "after: backends": after["backends"],
        "step speed-up": before["s/step"] / max(after["s/step"], 1e-9),
        "plain s": plain,
        "plain/after": plain / after["s"],
        "max abs Δx/n before-after": float(np.max(np.abs(before["x"] - after["x"]) / n)),
        "max abs Δx/n plain-after": (
            float(np.max(np.abs(x_plain - after["x"]) / n)) if x_plain is not None else np.nan
        ),
        "residual after": after["residual"],
        "plain status": status,
    }


def _summary(table: pd.DataFrame) -> str:
    up, ratio = table["step speed-up"], table["plain/after"]
    return (
        f"{len(table)} instances: time per Newton step {up.min():.1f}-{up.max():.1f}x faster "
        f"(median {up.median():.1f}x); plain cvxpy + Clarabel / ours min {ratio.min():.1f}x, "
        f"median {ratio.median():.1f}x; below 20x: "
        f"{table.loc[ratio < 20, 'instance'].tolist() or 'none'}"
    )


def main(argv=None) -> int:
    parser = argument_parser(__doc__)
    parser.add_argument("--seeds", type=int, nargs="*", default=BASELINE_SLOW)
    parser.add_argument("--issue", type=int, nargs="*", default=[1], help="issue-kind seeds")
    parser.add_argument("--cap", type=float, default=120.0, help="Clarabel time limit (s)")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results"))
    args = parser.parse_args(argv)
    load = os.getloadavg()[0]
    rows = []
    cases = [(f"seq {s}", lambda s=s: sequence_instance(s)[:2]) for s in args.seeds]
    cases += [(f"issue {s}", lambda s=s: issue_instance(s)[:2]) for s in args.issue]
    for label, make in cases:
        releases, facts = make()
        r = row(label, releases, facts, args.cap)
        rows.append(r)
        print(
            f"{label}: {r['H rows']} rows; qdldl {r['before: steps']} steps "
            f"{r['before: s/step']:.3f} s/step; auto {r['after: steps']} steps "
            f"{r['after: s/step']:.3f} s/step ({r['after: backends']}); total "
            f"{r['before: s']:.2f} -> {r['after: s']:.2f} s; plain {r['plain s']:.1f} s "
            f"({r['plain/after']:.1f}x)",
            flush=True,
        )
    table = pd.DataFrame(rows)
    info = machine_info()
    command = "python benchmarks/newton_steps.py " + " ".join(argv or sys.argv[1:])
    header = (
        f"# Newton steps: qdldl only (before) and the measured choice with CHOLMOD (after)\n\n"
        f"`{command.strip()}`\n\n{info['date']}, {info['nproc']} cores, load average "
        f"{load:.2f} at start, {os.getloadavg()[0]:.2f} at the end; sources "
        f"{info['maxent_privacy_sources']['sha256']}. s/step: the solve stage's time over "
        f"Newton's steps; totals are build + solve.\n\n"
    )
    args.out.mkdir(parents=True, exist_ok=True)
    write_text(args.out / "newton-steps.md", markdown(table, header, _summary))
    print(table.to_string(index=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
