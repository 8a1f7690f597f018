"""By-hand benchmark of the learning adversary (issue 23): ``definetti`` beside ``solve()``.

Not a test: it times :func:`maxent_privacy.definetti` (Kifer's deFinetti attack) against
``model.solve()`` on notebook 08's releases and writes a report.

Instances (the data of notebook 08 and the other benchmarks):

* **Du Adult** -- ``datasets.du2008_adult()`` (14,210 records), ``education`` sensitive,
  the eight ``datasets.ADULT_QI``, Anatomy with l = 2, 3, 5, 10 (seed 0; the values too
  frequent for l-diversity, more than 1/l of the records, are named non-sensitive:
  ``HS-grad`` and ``Some-college`` at l = 5, ``Bachelors`` too at l = 10). The issue's
  target: at l = 5, ``definetti`` under 10x the time of ``solve()``.
* **Instances we did not pick** (``--seeds N``): for each seed 1..N, Du's Adult at l = 5
  bucketized by Anatomy with that seed, by Anatomy on a random 5-7 of the QI attributes,
  and by round-robin dealing (``round_robin``: code that is not our anonymizer); the
  target applies to every one of them.
* **Full Adult** -- ``datasets.load_adult()`` (45,222 records), Anatomy l = 5 (``--full``).
* **Mondrian with a population** -- the first ``n`` of Du's records, relaxed Mondrian with
  k = 5 and c = 1/2, published without person ids, the adversary holding the population
  (each person's exact QI): one generalized release, whose projections are full solves
  (``n`` = 5,000: on all 14,210 a round takes 3 to 10 s, and 100 rounds too long for a
  benchmark; ``--quick``: 2,000).

A small attack first warms the process (:func:`warm_up`). Each row: the model's size,
``solve()`` (the best of three runs), ``definetti`` (one run,
``max_iter`` 100, ``tol`` 1e-6, naive Bayes), their ratio, the rounds (projections) and
whether they converged, the projection (``Scaling``: warm-started matrix scaling per
bucket, certified once at the end; ``Solves``: a certified solve per round), the seconds
per round and the last round's change. A run that raises is reported with its error.

Run from the repository root::

    python benchmarks/adversaries.py            # Du l = 2..10 and Mondrian (minutes)
    python benchmarks/adversaries.py --full     # and full Adult
    python benchmarks/adversaries.py --quick    # smoke run: 2,000 records
    python benchmarks/adversaries.py --seeds 5  # and the target on 15 more instances

Options: ``--out DIR`` (default ``benchmarks/results``), ``--max-iter N``, ``--seeds N``. Writes
``adversaries.md`` there (``--quick``: ``adversaries-quick.md``); the table is also printed.
"""

from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from _common import argument_parser, machine_info, md_row

from maxent_privacy import Bucketized, MaxEntModel, anonymize, datasets
from maxent_privacy.adversaries.definetti import definetti
from maxent_privacy.anonymize.mondrian import mondrian
from maxent_privacy.files import write_text

DEFAULT_OUT = Path(__file__).resolve().parent / "results"
QI, SA = list(datasets.ADULT_QI), datasets.ADULT_SA
#: the issue's target: Du's setting, l = 5
TARGET = ("Du Adult, Anatomy l = 5", 10.0)


def exempt(frame: pd.DataFrame, sa: str, l: int) -> list | None:  # noqa: E741
    """The values held by more than 1/l of the records (named non-sensitive: Anatomy
    cannot spread them), or None."""
    share = frame[sa].value_counts(normalize=True)
    out = sorted(share.index[share > 1.0 / l].tolist())
    return out or None


def anatomy(frame: pd.DataFrame, l: int, seed: int = 0, qi=None):  # noqa: E741
    qi = QI if qi is None else qi
    return anonymize.anatomize(frame, qi, SA, l=l, seed=seed, nonsensitive=exempt(frame, SA, l))


def round_robin(frame: pd.DataFrame, size: int, seed: int) -> Bucketized:
    """Buckets of ``size`` records by code that is not our anonymizer: records sorted by
    value (rarest first, ties at random) and dealt to the n // size buckets in turn, so a
    value held by fewer records than there are buckets is in no bucket twice."""
    rng = np.random.default_rng(seed)
    rank = frame[SA].map(frame[SA].value_counts(ascending=True).rank(method="first"))
    order = np.lexsort((rng.random(len(frame)), rank.to_numpy()))
    n_buckets = len(frame) // size
    bucket = np.empty(len(frame), dtype=int)
    bucket[order] = np.arange(len(frame)) % n_buckets
    rows = frame[QI + [SA]].assign(bucket=bucket)
    return Bucketized(rows, qi=QI, sa=SA, group="bucket")


def seeded(du: pd.DataFrame, seeds: int):
    """The target's setting (l = 5) on instances we did not pick: Anatomy with other
    seeds, on a random subset of 5-7 QI attributes, and round-robin buckets."""
    size = f"{len(du):,}"
    for seed in range(1, seeds + 1):
        rng = np.random.default_rng(seed)
        qi = sorted(rng.choice(QI, int(rng.integers(5, 8)), replace=False).tolist())
        yield (f"Du Adult, Anatomy l = 5, seed {seed}", size,
               lambda s=seed: MaxEntModel(anatomy(du, 5, s)))  # fmt: skip
        yield (f"Du Adult, Anatomy l = 5, seed {seed}, QI {'/'.join(qi)}", size,
               lambda s=seed, q=qi: MaxEntModel(anatomy(du, 5, s, q)))  # fmt: skip
        yield (f"Du Adult, round-robin buckets of 5, seed {seed}", size,
               lambda s=seed: MaxEntModel(round_robin(du, 5, s)))  # fmt: skip


def instances(quick: bool, full: bool, seeds: int = 0):
    du = datasets.du2008_adult(n=2_000) if quick else datasets.du2008_adult()
    size = f"{len(du):,}"
    for div in (2, 3, 5, 10):
        yield f"Du Adult, Anatomy l = {div}", size, lambda d=div: MaxEntModel(anatomy(du, d))
    yield from seeded(du, seeds)
    if full and not quick:
        adult = datasets.load_adult()
        yield "Full Adult, Anatomy l = 5", f"{len(adult):,}", lambda: MaxEntModel(anatomy(adult, 5))
    n = 2_000 if quick else 5_000
    people = du.iloc[:n]

    def make():
        frame = people[QI + [SA]].reset_index(drop=True)
        release = mondrian(frame, QI, SA, k=5, c=0.5, relaxed=True)
        return MaxEntModel(release, populations=[people[QI]])

    yield "Du Adult, Mondrian k = 5, population", f"{n:,}", make


def warm_up() -> None:
    """One small attack before the table: a fresh process runs ``solve()`` up to twice as
    slowly as one whose heap has grown (numpy's temporaries then come from fresh pages),
    which would flatter the first row's ratio; after this every row starts alike."""
    frame = datasets.du2008_adult(n=2_000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = MaxEntModel(anatomy(frame, 5))
        model.solve()
        definetti(model, max_iter=20)


def measure(name, size, make, max_iter) -> dict:
    model = make()
    row = {"instance": name, "records": size, "classes": len(model.classes)}
    row["cells"] = model.n_cells
    times = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(3):
            t0 = time.perf_counter()
            model.solve()
            times.append(time.perf_counter() - t0)
    row["solve s"] = min(times)
    t0 = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = definetti(model, max_iter=max_iter)
    except Exception as err:  # reported, not hidden: the row says what failed
        row["definetti s"] = time.perf_counter() - t0
        row["error"] = f"{type(err).__name__}: {str(err)[:160]}"
        return row
    row["definetti s"] = time.perf_counter() - t0
    stats, history = result.solver_stats["definetti"], result.history
    row.update(
        {
            "iterations": stats["iterations"],
            "converged": stats["converged"],
            "projection": stats["projection"],
            "s / round": float(history["seconds"].mean()),
            "last change": float(history["change"].iloc[-1]),
            "certificate": result.certificate.primal_residual,
        }
    )
    row["parts"] = {part: stats[f"{part}_seconds"] for part in PARTS}
    return row


#: the parts of ``definetti``'s time (``solver_stats["definetti"]``), in order
PARTS = ["start", "setup", "projection", "learner", "rounds_other", "final"]


def targeted(row: dict) -> bool:
    """The row is in the issue's setting (Du's Adult at l = 5, any seed)."""
    setting = row["instance"] == TARGET[0] or (
        row["instance"].startswith("Du Adult, ") and ", seed " in row["instance"]
    )
    return setting and row["records"] == "14,210"


def fmt_parts(row: dict) -> str:
    """Where ``definetti``'s time went, in multiples of ``solve()``: the parts, and the
    loop's own work (the start, the projections and the learner) that no bookkeeping
    could remove."""
    base = row["solve s"]
    parts = [row["parts"][part] / base for part in PARTS]
    own = (row["parts"]["start"] + row["parts"]["projection"] + row["parts"]["learner"]) / base
    cells = [row["instance"], f"{base * 1e3:.0f}", str(row["iterations"])]
    cells += [f"{v:.1f}" for v in parts] + [f"{row['definetti s'] / base:.1f}", f"{own:.1f}"]
    return md_row(cells)


PARTS_HEADER = (
    "| instance | solve() ms | rounds | start | setup | projections | learner | rounds' rest "
    "| final solve | all | start + projections + learner |\n"
    "|---|---|---|---|---|---|---|---|---|---|---|"
)


def fmt(row: dict) -> str:
    ratio = row["definetti s"] / row["solve s"]
    target = TARGET[1] if targeted(row) else None
    shown = f"{ratio:.0f}x"
    if target is not None:
        shown += f" / {target:g}x ({'met' if ratio < target else 'MISSED'})"
    cells = [
        row["instance"],
        row["records"],
        f"{row['classes']:,}",
        f"{row['cells']:,}",
        f"{row['solve s']:.2f}",
        f"{row['definetti s']:.2f}",
        shown,
    ]
    if "error" in row:
        cells += ["-", "FAILED", "-", "-", "-", row["error"].replace("|", "/")]
    else:
        cells += [
            str(row["iterations"]),
            "yes" if row["converged"] else "no",
            row["projection"],
            f"{row['s / round']:.3f}",
            f"{row['last change']:.1e}",
            f"{row['certificate']:.1e}",
        ]
    return md_row(cells)


HEADER = (
    "| instance | records | classes | cells | solve() s | definetti s | ratio / target "
    "| rounds | converged | projection | s / round | last change | residual |\n"
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
)


def main(argv=None) -> int:
    parser = argument_parser(__doc__, quick="")
    parser.add_argument("--full", action="store_true", help="add full Adult (45,222)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--max-iter", type=int, default=100)
    parser.add_argument(
        "--seeds", type=int, default=0, help="the l = 5 target on N more seeds (3 rows each)"
    )
    args = parser.parse_args(argv)
    info = machine_info()
    command = "python benchmarks/adversaries.py" + " --quick" * args.quick + " --full" * args.full
    command += f" --seeds {args.seeds}" if args.seeds else ""
    if args.max_iter != 100:
        command += f" --max-iter {args.max_iter}"
    lines = [
        "# The learning adversary: deFinetti beside solve() (issue 23)",
        "",
        f"Command: `{command}`",
        "",
        f"Machine: {info['platform']}, {info['nproc']} cores, Python {info['python']}; "
        + ", ".join(f"{k} {v}" for k, v in info["versions"].items())
        + f"; sources {info['maxent_privacy_sources']['sha256']}; {info['date']}; "
        f"load average at start {info['loadavg_at_start'][0]:.1f}.",
        "",
        HEADER,
    ]
    print("\n".join(lines), flush=True)
    warm_up()
    t_all = time.perf_counter()
    rows = []
    for name, size, make in instances(args.quick, args.full, args.seeds):
        rows.append(measure(name, size, make, args.max_iter))
        lines.append(fmt(rows[-1]))
        print(lines[-1], flush=True)
    total = time.perf_counter() - t_all
    split = [fmt_parts(row) for row in rows if targeted(row) and "error" not in row]
    if split:
        lines += ["", "Where the time of `definetti` went, in multiples of `solve()` "
                  "(`solver_stats[\"definetti\"]`):", "", PARTS_HEADER, *split]  # fmt: skip
        print("\n".join(lines[-len(split) - 4 :]), flush=True)
    lines += [
        "",
        f"Total {total:.0f} s. *solve() s*: `model.solve()`, the best of three runs; "
        "*definetti s*: `definetti(model)` once (naive Bayes, max_iter "
        f"{args.max_iter}, tol 1e-6), its first maximum-entropy solve and last certified "
        "solve included; *ratio*: the two, with the issue's target at Du's l = 5. "
        "*rounds*: projections run (SQUAREM: up to three per step); *converged*: no class "
        "posterior moved more than tol; *s / round*: a round's projection (checked) and "
        "history row; "
        "*last change*: the largest move of a class posterior in the last round; "
        "*residual*: the certificate of the returned table. Where the time went: "
        "*start*: the maximum-entropy solve the loop starts from; *setup*: the learner's "
        "encoding and the projection's layout; *projections*: the rounds' I-projections "
        "(matrix scaling per bucket, checked); *learner*: naive Bayes' fits and predictions; "
        "*rounds' rest*: the history, SQUAREM's steps and its safeguard; *final solve*: the "
        "certified solve of the last prior; *start + projections + learner*: the work of "
        "the loop the issue specifies, which no bookkeeping could remove.",
    ]
    args.out.mkdir(parents=True, exist_ok=True)
    out = args.out / ("adversaries-quick.md" if args.quick else "adversaries.md")
    write_text(out, "\n".join(lines) + "\n")
    print(f"\nwrote {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
