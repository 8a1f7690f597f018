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
ratio plain / ours (the best of ``--repeat`` runs, default 3; ours at least 5), the largest
posterior difference, and what bounds our time: cells fixed by presolve, forced zeros
found later (by the dual's recession certificate or an LP) and the passes they cost, our
Newton steps, the largest component, and the split setup (presolve and the other stages,
last pass) / solve (backends).
"""

from __future__ import annotations

import argparse
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


def instance(seed: int, people: tuple[int, int] = (4_000, 7_200)):
    """(releases, description) of the random instance ``seed`` (``people``: the range of
    the number of people per release)."""
    from maxent_privacy import Bucketized, datasets

    rng = np.random.default_rng(seed)
    adult = datasets.load_adult()
    sa = str(rng.choice(SA_CHOICES))
    pool = [c for c in datasets.ADULT_QI if c != sa]
    qi = sorted(rng.choice(pool, size=int(rng.integers(3, 7)), replace=False).tolist())
    n = int(rng.integers(people[0], people[1] + 1))
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


PLAIN = {"solver": "CLARABEL", "decompose": False, "presolve": False, "polish": False}


def _timed(releases, repeat: int, **solve):
    """The best of ``repeat`` runs of build + solve, and the last result."""
    from maxent_privacy import MaxEntModel

    best, result = np.inf, None
    for _ in range(repeat):
        t = time.perf_counter()
        result = MaxEntModel(releases).solve(**solve)
        best = min(best, time.perf_counter() - t)
    return best, result


def _plain(releases, repeat: int):
    from maxent_privacy import InaccurateSolution

    try:
        return (*_timed(releases, repeat, **PLAIN), "")
    except InaccurateSolution:  # its answer fails our check at 1e-6: time it at 1e-4
        return (*_timed(releases, repeat, tol=1e-4, **PLAIN), "plain at tol 1e-4")


def _row(seed, text, releases, t_plain, plain, t_ours, ours, note) -> dict:
    st = ours.solver_stats
    zeros = st["forced_zeros"]
    diff = float(np.nanmax(np.abs(
        plain.person_posterior().to_numpy() - ours.person_posterior().to_numpy()
    )))  # fmt: skip
    return {
        "seed": seed,
        "releases": len(releases),
        "people": ours.model.n_records,
        "cells": ours.model.n_cells,
        "plain s": t_plain,
        "ours s": t_ours,
        "ratio": t_plain / t_ours,
        "presolve fixed": st["fixed_by_presolve"] - sum(zeros.values()),
        "zeros: certificate": zeros.get("dual certificate", 0),
        "zeros: LP": zeros.get("LP", 0),
        "passes": st.get("passes", 1),
        "Newton steps": st["iterations"],
        "largest component": int(ours.components["cells"].max()),
        "setup s": st["setup_time"],
        "solve s": st["solve_time"],
        "max |Δpost|": diff,
        "note": note,
        "instance": text,
    }


def run(n: int, first_seed: int = 1, repeat: int = 3) -> pd.DataFrame:
    """The table of ``n`` random instances (seeds ``first_seed ...``): plain and ours,
    the best of ``repeat`` (ours: at least 5) build + solve runs in this process."""
    from maxent_privacy import Bucketized, MaxEntModel, datasets

    warm = Bucketized(
        datasets.du2008_figure1(), qi=["gender", "degree"], sa="disease", group="bucket"
    )
    MaxEntModel(warm).solve()
    MaxEntModel(warm).solve(**PLAIN)
    rows = []
    for seed in range(first_seed, first_seed + n):
        releases, text = instance(seed)
        t_plain, plain, note = _plain(releases, repeat)
        t_ours, ours = _timed(releases, max(5, repeat))  # short runs: more load spikes
        row = _row(seed, text, releases, t_plain, plain, t_ours, ours, note)
        rows.append(row)
        print(
            f"seed {seed:3d}: plain {t_plain:6.2f} s, ours {t_ours:5.3f} s, "
            f"ratio {row['ratio']:6.1f}, Δpost {row['max |Δpost|']:.1e}, "
            f"passes {row['passes']}, Newton {row['Newton steps']}  ({text})",
            flush=True,
        )
    return pd.DataFrame(rows)


def markdown(table: pd.DataFrame, header: str = "", summarize=None) -> str:
    """The table as Markdown (numbers rounded for reading), after ``header``, then its
    one-line summary (``summarize(table)``; default :func:`summary`)."""
    cols = list(table.columns)
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for row in table.itertuples(index=False):
        cells = [f"{v:.3g}" if isinstance(v, float) else str(v) for v in row]
        lines.append("| " + " | ".join(cells) + " |")
    return header + "\n".join(lines) + "\n\n" + (summarize or summary)(table) + "\n"


def summary(table: pd.DataFrame) -> str:
    r = table["ratio"]
    low = table.loc[r < 20, "seed"].tolist()
    return (
        f"{len(table)} random instances (seeds {table['seed'].min()}-{table['seed'].max()}): "
        f"ratio plain/ours min {r.min():.1f}, median {r.median():.1f}, max {r.max():.1f}; "
        f"below 20x: {low or 'none'}; largest posterior difference "
        f"{table['max |Δpost|'].max():.1e}"
    )


def main(argv=None) -> int:
    # no `_common` here: the tests load this file without the benchmarks folder on sys.path
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("n", nargs="?", type=int, default=20, help="instances: seeds 1..N")
    table = run(parser.parse_args(argv).n)
    print(summary(table))
    return 0


if __name__ == "__main__":
    sys.exit(main())
