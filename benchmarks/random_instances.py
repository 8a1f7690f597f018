"""Random re-publishing instances: ours against the plain cvxpy + Clarabel path (issue 14).

Not a test: run by hand, ``python benchmarks/solvers.py --random N`` (or this file
directly: ``python benchmarks/random_instances.py N``). Each instance draws, with its own
seed: 3 to 6 QI attributes of Adult (random subset), a sensitive attribute, 4,000 to
7,200 people, 2 or 3 releases that share 70 to 95 % of them, and buckets of 4 to 6
records made by a simple bucketizer written here (a seeded shuffle cut into consecutive
buckets; not this package's anonymizers). Per instance, in one process and after a
warm-up: the plain path (``MaxEntModel(...)`` + ``solve(solver="CLARABEL",
decompose=False, presolve=False, polish=False)``: one vectorized problem, no presolve,
no closed form, no decomposition) and ours (package defaults), each build + solve; the
ratio plain / ours, and the largest posterior difference.
"""

from __future__ import annotations

import sys
import time

import numpy as np
import pandas as pd

SA_CHOICES = ["occupation", "education", "marital_status", "workclass"]


def bucketize(frame: pd.DataFrame, size: int, seed: int) -> pd.Series:
    """Bucket of each row: a seeded shuffle cut into buckets of ``size`` (the last ones
    absorb the remainder)."""
    order = np.random.default_rng(seed).permutation(len(frame))
    n_buckets = max(1, len(frame) // size)
    bucket = np.empty(len(frame), dtype=int)
    bucket[order] = np.minimum(np.arange(len(frame)) // size, n_buckets - 1)
    return pd.Series(bucket, index=frame.index)


def instance(seed: int):
    """(releases, description) of the random instance ``seed``."""
    from maxent_privacy import Bucketized, datasets

    rng = np.random.default_rng(seed)
    adult = datasets.load_adult()
    sa = str(rng.choice(SA_CHOICES))
    pool = [c for c in datasets.ADULT_QI if c != sa]
    qi = sorted(rng.choice(pool, size=int(rng.integers(3, 7)), replace=False).tolist())
    n = int(rng.integers(4_000, 7_201))
    n_rel = int(rng.integers(2, 4))
    share = float(rng.uniform(0.70, 0.95))
    size = int(rng.integers(4, 7))
    people = adult.sample(int(n * (1 + (1 - share) * (n_rel - 1))), random_state=seed)
    people = people.reset_index(drop=True).assign(pid=lambda f: np.arange(len(f)))
    core = people.iloc[: int(n * share)]
    rest = people.iloc[int(n * share) :]
    per = (n - len(core)) if n_rel > 1 else 0
    releases = []
    for r in range(n_rel):
        extra = rest.iloc[r * per : (r + 1) * per] if per else rest.iloc[:0]
        d = pd.concat([core, extra], ignore_index=True)[qi + [sa, "pid"]]
        d = d.assign(bucket=bucketize(d, size, seed * 10 + r).to_numpy())
        releases.append(Bucketized(d, qi=qi, sa=sa, group="bucket", person="pid"))
    text = (
        f"seed {seed}: {n_rel} releases of ~{n}, share {share:.2f}, QI {qi}, SA {sa}, size {size}"
    )
    return releases, text


def _timed(releases, **solve):
    from maxent_privacy import MaxEntModel

    t = time.perf_counter()
    model = MaxEntModel(releases)
    result = model.solve(**solve)
    return time.perf_counter() - t, result


def run(n: int, first_seed: int = 1) -> pd.DataFrame:
    """The table of ``n`` random instances (seeds ``first_seed ...``)."""
    from maxent_privacy import Bucketized, InaccurateSolution, MaxEntModel, datasets

    warm = Bucketized(
        datasets.du2008_figure1(), qi=["gender", "degree"], sa="disease", group="bucket"
    )
    MaxEntModel(warm).solve()
    MaxEntModel(warm).solve(solver="CLARABEL", decompose=False, presolve=False, polish=False)
    rows = []
    for seed in range(first_seed, first_seed + n):
        releases, text = instance(seed)
        plain_opts = {"solver": "CLARABEL", "decompose": False, "presolve": False, "polish": False}
        try:
            t_plain, plain = _timed(releases, **plain_opts)
            plain_note = ""
        except InaccurateSolution:  # its answer fails our check at 1e-6: time it at 1e-4
            t_plain, plain = _timed(releases, tol=1e-4, **plain_opts)
            plain_note = "plain at tol 1e-4"
        t_ours, ours = _timed(releases)
        diff = float(np.nanmax(np.abs(
            plain.person_posterior().to_numpy() - ours.person_posterior().to_numpy()
        )))  # fmt: skip
        rows.append(
            {
                "seed": seed,
                "instance": text,
                "people": ours.model.n_records,
                "cells": ours.model.n_cells,
                "plain s": t_plain,
                "ours s": t_ours,
                "ratio": t_plain / t_ours,
                "max |Δpost|": diff,
                "forced zeros": sum(ours.solver_stats["forced_zeros"].values()),
                "note": plain_note,
            }
        )
        print(
            f"seed {seed:3d}: plain {t_plain:6.2f} s, ours {t_ours:5.3f} s, "
            f"ratio {t_plain / t_ours:6.1f}, Δpost {diff:.1e}  ({text})",
            flush=True,
        )
    return pd.DataFrame(rows)


def markdown(table: pd.DataFrame) -> str:
    """The table as Markdown (numbers rounded for reading)."""
    cols = list(table.columns)
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for row in table.itertuples(index=False):
        cells = [f"{v:.3g}" if isinstance(v, float) else str(v) for v in row]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n\n" + summary(table) + "\n"


def summary(table: pd.DataFrame) -> str:
    r = table["ratio"]
    return (
        f"{len(table)} random instances: ratio plain/ours min {r.min():.1f}, median "
        f"{r.median():.1f}, max {r.max():.1f}; largest posterior difference "
        f"{table['max |Δpost|'].max():.1e}"
    )


if __name__ == "__main__":
    table = run(int(sys.argv[1]) if len(sys.argv) > 1 else 20)
    print(summary(table))
