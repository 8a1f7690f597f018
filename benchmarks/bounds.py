"""By-hand benchmark of certified posterior intervals (issue 13): ``model.bounds(...)``.

Not a test: it times :func:`maxent_privacy.bounds.bounds` on the issue's instances and
writes a report.

Instances (the same data as the other benchmarks):

* **Du Adult** -- ``datasets.du2008_adult()`` (14,210 records), ``education`` sensitive, the
  eight ``datasets.ADULT_QI``, Anatomy ``l = 5`` (seed 0, ``HS-grad`` and ``Some-college``
  non-sensitive), as in ``core.py`` and notebook 02. Knowledge: none, or the Top-(K+, K-)
  association rules of ``mine_rules(frame, QI, SA, attributes=range(1, 9))`` (notebook 02),
  K = 100 each way (target < 30 s) and, past the issue, K = 400 each way. Bounds of
  P(s | QI value) (``by=None``, target < 1 s without knowledge) and P(s | QI value, bucket).
* **Wang 2 x 7,200** -- ``republish.py``'s setting: D1, D2 of 7,200 people (6,000
  shared), ``occupation`` sensitive, the other seven categorical attributes as QI,
  ``rebucketize`` at l = 3 (independent; also l = 2, 5 and history-guided), pooled with
  person ids. Person-level bounds (``by="person"``): the LP relaxation (target < 30 s) and
  ``exact=True`` over possible worlds (target < 120 s).
* **Mondrian 3 x 2,000** -- 3,000 Adult people (a seeded sample), three releases of 2,000
  of them each (seeded), Mondrian with k = 5 and c = 1/3 (``occupation``; eight QI
  including ``age``), person ids published: the issue's example of a relaxation gap.
  ``exact=True`` with a 300 s budget.
* **Generalized with a population** (issue 21, item 4; ``--generalized N ...``) -- N Adult
  people (a seeded sample), 2 or 3 Mondrian releases (k = 5, 6, 7, c = 1/2, the eight
  ``datasets.ADULT_QI``, ``education`` sensitive) of 80 % samples of them, published
  without person ids, the adversary holding each release's population (person id ->
  exact QI). ``--boxes strict``: Mondrian's boxes do not overlap (one group per person
  and release); ``--boxes overlapping``: relaxed Mondrian, people in an overlap may sit in
  several groups (placement cells). Person-level bounds, LP and ``exact=True``; targets
  at N = 2,000: 2 releases LP < 5 s, exact < 30 s; 3 releases LP < 3 s, exact < 15 s.
  ``--seeds`` draws other people and samples (seed 0: the first instances).

Each row: the build time (``MaxEntModel`` + facts), the time of ``bounds`` alone, the LPs and
integer programs it ran, how many bounds were settled without an LP of their own (a table
already seen reaches a bound that a dual point proves), the certificate (all certified,
largest gap and dual violation, probability units), whether every maximum-entropy estimate
(``model.solve(polish=False)``, timed: "solve s") lies inside the LP bounds, and a spot
check: the largest difference to ``scipy.optimize.linprog`` on the whole model (the invariants of
``model.invariant_matrix`` and the facts' rows, not this package's component code) for
``--spot`` random LP-settled rows (default 8, both bounds). With ``exact=True`` also the
(person, value) pairs the relaxation allows but no possible world does, and the bounds
left undecided when the budget ran out.

Run from the repository root::

    python benchmarks/bounds.py            # full run (a few minutes)
    python benchmarks/bounds.py --quick    # smoke run: Du on 2,000 records, Wang 1,200
    python benchmarks/bounds.py --generalized 2000 --seeds 0 1 2   # issue 21, item 4

Options: ``--out DIR`` (default ``benchmarks/results``), ``--spot N``; with
``--generalized``: ``--releases``, ``--seeds``, ``--boxes``, ``--budget`` (time limit, s),
``--name`` (the report's file name, default ``bounds-generalized.md``); ``--from-estimate``
solves first and times ``result.bounds(...)``, which starts from the estimate. The full run writes
``bounds.md`` there (``--quick``: ``bounds-quick.md``); the table is also printed.
"""

from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.sparse as sp
from _common import argument_parser, machine_info, md_row
from scipy.optimize import linprog

from maxent_privacy import MaxEntModel, anonymize, datasets
from maxent_privacy.anonymize import history_guided, rebucketize
from maxent_privacy.bounds import relaxation_gap
from maxent_privacy.files import write_text
from maxent_privacy.mondrian import mondrian
from maxent_privacy.rules import mine_rules

sys.path.insert(0, str(Path(__file__).resolve().parent))
import republish  # noqa: E402  (the Wang setting: sample, exemptions, columns)

DEFAULT_OUT = Path(__file__).resolve().parent / "results"


# ------------------------------------------------------------------ instances
def du_instances(quick: bool):
    n = 2_000 if quick else None
    frame = datasets.du2008_adult() if n is None else datasets.du2008_adult(n=n)
    qi, sa = list(datasets.ADULT_QI), datasets.ADULT_SA
    release = anonymize.anatomize(
        frame, qi, sa, l=5, seed=0, nonsensitive=["HS-grad", "Some-college"]
    )
    rules = mine_rules(frame, qi, sa, attributes=range(1, 9))
    size = f"{len(frame):,}"
    for k in (0, 100) if quick else (0, 100, 400):

        def make(k=k):
            model = MaxEntModel(release)
            if k:
                model.add(rules.top(k, k))
            return model

        name = "Du Adult, no knowledge" if k == 0 else f"Du Adult, Top-({k}, {k})"
        target = {0: 1.0, 100: 30.0}.get(k) if not quick else None
        for by in (None, "group"):
            yield f"{name} ({size})", make, by, False, 60.0, target if by is None else None


def wang_instances(quick: bool):
    adult = datasets.load_adult()
    adult["pid"] = np.arange(len(adult))
    n, shared = (1_200, 1_000) if quick else (7_200, 6_000)
    sa = republish.MAIN_SA
    qi = republish.qi_for(sa)
    d1, d2 = republish.sample(adult, n, shared, 0)
    settings = [(3, "independent")] if quick else [
        (3, "independent"),
        (2, "independent"),
        (5, "independent"),
        (3, "history-guided"),
    ]  # fmt: skip
    for l, strategy in settings:  # noqa: E741
        exempt = republish.exemptions([d1, d2], sa, l) or None

        def make(l=l, strategy=strategy, exempt=exempt):  # noqa: E741
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                r1 = rebucketize(d1, qi, sa, l=l, person="pid", seed=1, nonsensitive=exempt)
                if strategy == "independent":
                    r2 = rebucketize(d2, qi, sa, l=l, person="pid", seed=2, nonsensitive=exempt)
                else:
                    r2 = history_guided(d2, qi, sa, l=l, history=r1, seed=2, nonsensitive=exempt)
            return MaxEntModel([r1, r2])

        name = f"Wang 2 x {n:,}, l = {l}, {strategy}"
        main = not quick and (l, strategy) == (3, "independent")
        yield name, make, "person", False, 120.0, 30.0 if main else None
        yield name, make, "person", True, 120.0, 120.0 if main else None


def mondrian_instance(quick: bool):
    adult = datasets.load_adult().reset_index(drop=True)
    adult["pid"] = np.arange(len(adult))
    n, each = (600, 400) if quick else (3_000, 2_000)
    people = adult.iloc[np.random.default_rng(0).permutation(len(adult))[:n]]
    qi = ["age", "workclass", "education", "marital_status", "race", "sex", "native_country"]
    qi.append("income")
    rng = np.random.default_rng(1)
    picks = [np.sort(rng.choice(n, each, replace=False)) for _ in range(3)]

    def make():
        rels, pops = [], []
        for p in picks:
            t = people.iloc[p]
            rels.append(mondrian(t, qi, "occupation", k=5, c=1 / 3, person="pid"))
            pops.append(t[["pid", *qi]].set_index("pid"))
        return MaxEntModel(rels, populations=pops)

    yield f"Mondrian 3 x {each:,} of {n:,} people", make, "person", True, 300.0, None


#: issue 21, item 4: seconds of ``bounds(by="person")`` at 2,000 people, by releases and exact
GENERALIZED_TARGETS = {(2, False): 5.0, (2, True): 30.0, (3, False): 3.0, (3, True): 15.0}


def generalized_instances(sizes, releases=(2, 3), seeds=(0,), boxes=("strict",), budget=600.0):
    """Issue 21, item 4: Mondrian releases (k = 5, 6, 7, c = 1/2, eight QI, ``education``
    sensitive) of 80 % samples of ``n`` Adult people each, published without person ids,
    with their population (person id -> exact QI). ``boxes``: "strict" Mondrian (the
    groups' boxes do not overlap: each person fits one group per release, the issue's
    three-release case, 1,916 people and 7,093 cells) or "overlapping" (relaxed Mondrian:
    people in an overlap may sit in several groups, placement cells; the issue's
    two-release case of 484 people per release, 15,651 cells). ``seed`` draws the people
    and the samples (seed 0: the instances of the first version of this function).
    Targets at 2,000 people: 2 releases LP < 5 s, exact < 30 s; 3 releases LP < 3 s,
    exact < 15 s."""
    adult = datasets.load_adult().reset_index(drop=True)
    qi = list(datasets.ADULT_QI)
    for box in boxes:
        for n in sizes:
            for r in releases:
                for seed in seeds:

                    def make(n=n, r=r, seed=seed, box=box):
                        rng = np.random.default_rng(n * 10 + r + 100_000 * seed)
                        people = adult.iloc[rng.choice(len(adult), n, replace=False)]
                        people = people.set_index(pd.Index([f"p{i}" for i in range(n)], name="pid"))
                        rels, pops = [], []
                        for j in range(r):
                            sub = people.iloc[np.sort(rng.choice(n, int(0.8 * n), replace=False))]
                            frame = sub[qi + ["education"]].reset_index(drop=True)
                            rels.append(
                                mondrian(
                                    frame,
                                    qi,
                                    "education",
                                    k=5 + j,
                                    c=0.5,
                                    relaxed=box == "overlapping",
                                )
                            )
                            pops.append(sub[qi])
                        return MaxEntModel(rels, populations=pops)

                    name = f"Mondrian {r} x 80% of {n:,}, {box} boxes, population, seed {seed}"
                    for exact in (False, True):
                        target = GENERALIZED_TARGETS[(r, exact)] if n == 2_000 else None
                        yield name, make, "person", exact, budget, target


# ------------------------------------------------------------------ checks
def spot_check(model, frame, by, count: int, rng) -> float:
    """Largest |bound - linprog| over ``count`` random LP rows (both bounds), on the whole
    model as one dense-free LP built from the public invariant matrix and fact rows."""
    lp_rows = frame[frame["method"] == "LP"]
    if not len(lp_rows) or count == 0:
        return float("nan")
    if "kind" in model.cells and (model.cells["kind"] != "z").any():
        return float("nan")  # placement cells: invariant_matrix lacks their link rows
    A, b, _ = model.invariant_matrix(drop_redundant=False)
    eq = [f for f in model.facts if f.sense == "=="]
    ub = [f for f in model.facts if f.sense == "<="]
    A_eq = sp.vstack([A] + [f.A for f in eq], format="csr")
    b_eq = np.concatenate([b] + [f.b for f in eq])
    A_ub = sp.vstack([f.A for f in ub], format="csr") if ub else None
    b_ub = np.concatenate([f.b for f in ub]) if ub else None
    cells = model.cells
    sa = model.sa
    pick = lp_rows.iloc[rng.choice(len(lp_rows), min(count, len(lp_rows)), replace=False)]
    worst = 0.0
    for key, row in pick.iterrows():
        s = key[-1]
        mask = (cells[sa] == s).to_numpy().copy()
        if by == "person":
            cls = model.structure.person_class[key[0]]
            mask &= (cells["cls"] == cls).to_numpy()
            den = float(model.classes["n"].iloc[cls])
        else:
            names = frame.index.names[:-1]
            for a, v in zip(names, key[:-1], strict=True):
                mask &= (cells[a] == v).to_numpy()
            den = float(row["records"])
        c = mask / den
        kw = dict(A_eq=A_eq, b_eq=b_eq, A_ub=A_ub, b_ub=b_ub, bounds=(0, None), method="highs")
        lo, hi = linprog(c, **kw).fun, -linprog(-c, **kw).fun
        if by == "person":  # the individual, from the class's counts (issue 21, item 1)
            lo, hi = max(0.0, (lo - 1.0) * den + 1.0), min(1.0, hi * den)
        lp_lo = row["lp_lower"] if "lp_lower" in row else row["lower"]
        lp_hi = row["lp_upper"] if "lp_upper" in row else row["upper"]
        worst = max(worst, abs(lo - lp_lo), abs(hi - lp_hi))
    return worst


def _solved(model):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return model.solve(polish=False)


def measure(name, make, by, exact, budget, target, spot, rng, from_estimate=False) -> dict:
    """One row; ``from_estimate``: the estimate is solved first and the bounds start
    from it (``result.bounds``), else ``model.bounds`` then the solve."""
    t0 = time.perf_counter()
    model = make()
    if from_estimate:
        t_s = time.perf_counter()
        result = _solved(model)
        solve_s = time.perf_counter() - t_s
    t1, c1 = time.perf_counter(), time.process_time()
    frame = (result if from_estimate else model).bounds(by=by, exact=exact, time_limit=budget)
    t2, c2 = time.perf_counter(), time.process_time()
    cert = frame.attrs["certificate"]
    if not from_estimate:
        result = _solved(model)
        solve_s = time.perf_counter() - t2
    if by == "person":
        post = result.person_posterior().stack()
    else:
        post = result.posterior(by=by).stack()
    post = post.reindex(frame.index).fillna(0.0)
    lo = frame["lp_lower"] if exact else frame["lower"]
    hi = frame["lp_upper"] if exact else frame["upper"]
    inside = bool(((post >= lo - 1e-6) & (post <= hi + 1e-6)).all())
    row = {
        "instance": name,
        "target": target,
        "by": (by or "QI value") + (", exact" if exact else ""),
        "cells": model.n_cells,
        "facts": sum(f.size for f in model.facts),
        "rows": len(frame),
        "build s": t1 - t0,
        "bounds s": t2 - t1,
        "bounds cpu s": c2 - c1,
        "solve s": solve_s,
        "LPs": cert["lps"],
        "MILPs": cert["milps"],
        "settled w/o own LP": cert["settled_without_own_lp"],
        "cells proved 0": cert["cells_proved_zero"],
        "certified": cert["all_certified"],
        "max gap": cert["max_gap"],
        "max dual viol.": cert["max_dual_violation"],
        "maxent inside": inside,
        "spot check": spot_check(model, frame, by, spot, rng),
        "relaxation gap": "",
        "undecided": "",
    }
    if exact:
        gap = relaxation_gap(model, frame=frame)
        row["relaxation gap"] = len(gap)
        row["undecided"] = int((~frame["exact"]).sum())
    return row


def fmt(row: dict) -> str:
    target = row["target"]
    verdict = "" if target is None else (" (met)" if row["bounds s"] < target else " (MISSED)")
    cells = [
        row["instance"],
        row["by"],
        f"{row['cells']:,}",
        f"{row['facts']:,}",
        f"{row['rows']:,}",
        f"{row['build s']:.2f}",
        f"{row['bounds s']:.2f} (CPU {row['bounds cpu s']:.2f})"
        + (f" / {target:g}{verdict}" if target else ""),
        f"{row['solve s']:.2f}",
        f"{row['LPs']:,}",
        f"{row['MILPs']:,}",
        f"{row['settled w/o own LP']:,}",
        f"{row['cells proved 0']:,}",
        "yes" if row["certified"] else "NO",
        f"{row['max gap']:.1e} / {row['max dual viol.']:.1e}",
        "yes" if row["maxent inside"] else "NO",
        "-" if np.isnan(row["spot check"]) else f"{row['spot check']:.1e}",
        str(row["relaxation gap"]),
        str(row["undecided"]),
    ]
    return md_row(cells)


HEADER = (
    "| instance | bounds of | cells | fact rows | rows | build s | bounds s / target | solve s "
    "| LPs | MILPs | settled w/o own LP | cells proved 0 | certified | max gap / dual viol. "
    "| maxent inside | spot check vs linprog | relaxation gap | undecided |\n"
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
)


def main(argv=None) -> int:
    parser = argument_parser(__doc__, quick="", out=DEFAULT_OUT)
    parser.add_argument("--spot", type=int, default=8)
    parser.add_argument(
        "--generalized",
        type=int,
        nargs="+",
        metavar="N",
        help="only issue 21's generalized cases, with N people each (the targets: 2000)",
    )
    parser.add_argument(
        "--releases", type=int, nargs="+", default=[2, 3], help="with --generalized"
    )
    parser.add_argument("--name", help="with --generalized: the report's file name")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0], help="with --generalized")
    parser.add_argument(
        "--boxes",
        nargs="+",
        choices=["strict", "overlapping"],
        default=["strict"],
        help="with --generalized: strict or relaxed (overlapping) Mondrian",
    )
    parser.add_argument(
        "--budget", type=float, default=600.0, help="with --generalized: time_limit (s)"
    )
    parser.add_argument(
        "--from-estimate",
        action="store_true",
        help="solve first and time result.bounds (the estimate as a table seen)",
    )
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    info = machine_info()
    command = "python benchmarks/bounds.py" + (" --quick" if args.quick else "")
    if args.generalized:
        command += " --generalized " + " ".join(map(str, args.generalized))
        command += " --releases " + " ".join(map(str, args.releases))
        command += " --seeds " + " ".join(map(str, args.seeds))
        command += " --boxes " + " ".join(args.boxes) + f" --budget {args.budget:g}"
    if args.from_estimate:
        command += " --from-estimate"
    lines = [
        "# Certified posterior intervals (issue 13)"
        + (
            ": generalized releases with a population (issue 21, item 4)"
            if args.generalized
            else ""
        ),
        "",
        f"Command: `{command}`",
        "",
        f"Machine: {info['platform']}, {info['nproc']} cores, Python {info['python']}; "
        + ", ".join(f"{k} {v}" for k, v in info["versions"].items())
        + f"; sources {info['maxent_privacy_sources']['sha256']}; {info['date']}.",
        "",
        HEADER,
    ]
    print("\n".join(lines), flush=True)
    rows = []
    t_all = time.perf_counter()
    gens = [du_instances, wang_instances, mondrian_instance]
    if args.generalized:
        gens = [
            lambda quick: generalized_instances(
                args.generalized, args.releases, args.seeds, args.boxes, args.budget
            )
        ]
    for gen in gens:
        for name, make, by, exact, budget, target in gen(args.quick):
            row = measure(name, make, by, exact, budget, target, args.spot, rng, args.from_estimate)
            rows.append(row)
            lines.append(fmt(row))
            print(lines[-1], flush=True)
    total = time.perf_counter() - t_all
    lines += [
        "",
        f"Total {total:.0f} s. *bounds s* is `model.bounds(...)` alone (with "
        "`--from-estimate`: `model.solve().bounds(...)`, the solve in *solve s*), wall clock (CPU: "
        "this process's CPU time; the machine may be shared), the model built before, the "
        "rules mined before; the target is the issue's, on the wall clock. *settled w/o own LP*: "
        "bounds reached by a table already seen and proved by a dual point (a cover of the "
        "row's cells by data rows, or the bulk certificate of the cells proved 0). *max gap / "
        "dual viol.*: the largest |attained value - dual bound| and sign violation of the "
        "dual points, in probability. *spot check*: largest |bound - linprog on the whole "
        f"model| over {args.spot} random LP rows, both bounds ('-' where no row needed an LP "
        "or the model has placement cells). *relaxation gap*: (person, value) pairs the LP "
        "allows and no possible world does; *undecided*: exact bounds left at the LP's when "
        "the budget ran out.",
    ]
    args.out.mkdir(parents=True, exist_ok=True)
    name = "bounds-quick.md" if args.quick else "bounds.md"
    if args.generalized:
        name = args.name or "bounds-generalized.md"
    out = args.out / name
    write_text(out, "\n".join(lines) + "\n")
    print(f"\nwrote {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
