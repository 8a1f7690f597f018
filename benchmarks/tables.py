"""By-hand benchmark of published tables at scale (issue 40, item 6): census-style Adult crosstabs.

Not a test: it times ``MaxEntModel([Tabulated, ...])`` on tables made from the bundled
Adult data (``datasets.load_adult()``, 45,222 records) and writes a table.

Instances (every one drawn by ``--seed``, none picked by hand):

* **The attributes** -- a pool of Adult attributes: ``age`` in ten-year bands,
  ``workclass``, ``education``, ``marital_status``, ``occupation``, ``relationship``,
  ``race``, ``sex``, ``hours_per_week`` in ten-hour bands, ``income``. Every table
  crosses a region-like attribute with 2 or 3 of them (a crosstab of 3 or 4 attributes):
  ``native_country`` (41 countries) on the large instance, a ``region`` the benchmark
  makes from ``native_country`` (7 groups: US, Mexico and Central America, Caribbean,
  South America, Europe, Asia, Canada and the rest) on the small one. The seed shuffles
  the pool; the attributes are taken in that order until the domain (the product of the
  attributes' value counts) reaches the instance's size. The tables: until every drawn
  attribute is in a table, a new table takes the first attribute not yet covered and 1
  or 2 other drawn attributes at random (the region in every table; no table holds every
  drawn attribute). Each table is the complete crosstab of the records (unlisted
  combinations are 0).
* **Large** (item 1) -- ``native_country`` and attributes until the domain reaches
  10^6 combinations (an attribute that would take it past 4 x 10^6 is skipped).
  ``model.solve()`` then ``result.table()`` (target < 10 s, the minimum of ``--repeat``
  runs), ``result.certificate`` (verified, residual, gap). The
  baseline in the same process: iterative proportional fitting written here in numpy on
  the dense array of the domain (margins computed from the records, not from the
  package), until every margin is met within 1e-6 records (at most ``--ipf-seconds``);
  the ratio ours / IPF and the largest |our count - IPF's| over every combination.
* **Small** (items 2, 3) -- ``region`` and attributes until the domain reaches 5,000
  (an attribute that would take it past 20,000 is skipped; about 10^4 combinations).
  ``model.bounds(by="cell")`` over every combination (target < 60 s; its time limit is
  ``--lp-limit``, by default 120 s, so a miss is measured); how many bounds are ``tight``.
  Then ``bounds(by="cell", exact=True, time_limit=T)`` (``--limit``, default 30 s: the
  elapsed time must not pass T by more than a few seconds) with the sides proved
  (``lower_exact``, ``upper_exact``), and ``model.reconstruction(time_limit=T)``, on the
  same tables and on two harder versions of them: every count randomly rounded to base 3
  (``rounding=3``, seeded unbiased rounding) and small cells suppressed (counts 1 and 2
  published as ``x``); these two give the number of records (45,222) with ``total=``,
  as an office publishes it.

Every measurement runs in a child process of its own with a wall-clock budget
(``--budget``, default 300 s): one that does not return within it is killed and shown as
"> budget (killed)", a missed target. ``progress=False`` everywhere.

Run from the repository root::

    python -m benchmarks tables                     # seeds 0 1 2 (about 15 minutes)
    python -m benchmarks tables --quick             # seed 0, 2 x 10^5 and 2,000 combinations

Options: ``--seed S [S ...]`` (default 0 1 2), ``--only large|small`` (those instances
alone, written to ``tables-large.md`` / ``tables-small.md``), ``--rounded`` (also the large
instances with every count randomly rounded to base 3: ``solve()`` against the same tables
with exact counts; not a target), ``--repeat R`` (maxent and
IPF timings, default 3), ``--limit T`` (exact bounds and reconstruction, default 30 s),
``--lp-limit``, ``--budget``, ``--ipf-seconds``, ``--out DIR`` (default
``benchmarks/results``). The full run writes ``tables.md`` there (``--quick``:
``tables-quick.md``); the table is also printed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.sparse as sp
from _common import argument_parser, machine_info, machine_lines, md_table

from maxent_privacy.files import write_text

HERE = Path(__file__).resolve().parent
DEFAULT_OUT = HERE / "results"

POOL = (
    "age", "workclass", "education", "marital_status", "occupation", "relationship",
    "race", "sex", "hours_per_week", "income",
)  # fmt: skip
REGIONS = {
    "United-States": "US",
    "Outlying-US(Guam-USVI-etc)": "US",
    **dict.fromkeys(
        ["Mexico", "El-Salvador", "Guatemala", "Honduras", "Nicaragua"], "Mexico+Central"
    ),
    **dict.fromkeys(
        ["Cuba", "Dominican-Republic", "Haiti", "Jamaica", "Puerto-Rico", "Trinadad&Tobago"],
        "Caribbean",
    ),
    **dict.fromkeys(["Columbia", "Ecuador", "Peru"], "South America"),
    **dict.fromkeys(
        "England France Germany Greece Holand-Netherlands Hungary Ireland Italy Poland "
        "Portugal Scotland Yugoslavia".split(),
        "Europe",
    ),
    **dict.fromkeys(
        "Cambodia China Hong India Iran Japan Laos Philippines Taiwan Thailand Vietnam".split(),
        "Asia",
    ),
}  # anything else (Canada, "South"): "Other"
LARGE, SMALL = (1_000_000, 4_000_000), (5_000, 20_000)
QUICK_LARGE, QUICK_SMALL = (200_000, 800_000), (1_000, 4_000)


# ------------------------------------------------------------------ instances
def adult() -> pd.DataFrame:
    """Adult with the bands and the region as text (no value reads as a generalized cell)."""
    from maxent_privacy import datasets

    frame = datasets.load_adult()
    frame["age"] = "age" + (frame["age"] // 10 * 10).astype(str)
    frame["hours_per_week"] = "h" + (frame["hours_per_week"] // 10 * 10).astype(str)
    frame["region"] = frame["native_country"].map(REGIONS).fillna("Other")
    return frame


def draw(frame: pd.DataFrame, seed: int, region: str, low: int, high: int):
    """(attributes after the region, table column lists): see the module docstring."""
    rng = np.random.default_rng(seed)
    sizes = {a: frame[a].nunique() for a in (*POOL, region)}
    while True:  # a draw that cannot reach ``low`` (or has < 3 attributes): draw again
        order = [str(a) for a in rng.permutation(POOL)]
        drawn, size = [], sizes[region]
        for a in order:
            if size >= low:
                break
            if size * sizes[a] > high:
                continue
            drawn.append(a)
            size *= sizes[a]
        if size >= low and len(drawn) >= 3:
            break
    tables = []
    covered: set = set()
    while covered != set(drawn):
        first = next(a for a in drawn if a not in covered)
        rest = [a for a in drawn if a != first]
        k = min(int(rng.integers(1, 3)), len(drawn) - 2)  # no table holds them all
        extra = [str(a) for a in rng.choice(rest, size=k, replace=False)]
        cols = [region, first, *extra]
        tables.append(cols)
        covered.update(cols[1:])
    return drawn, tables


def crosstab(frame: pd.DataFrame, cols: list) -> pd.DataFrame:
    return frame.groupby(cols, observed=True).size().reset_index(name="count")


def make_tables(frame, specs, variant: str, seed: int):
    """``Tabulated`` tables: ``variant`` "exact", "rounded 3" or "suppressed < 3"."""
    from maxent_privacy import Tabulated

    rng = np.random.default_rng(seed + 1_000)
    out = []
    for i, cols in enumerate(specs):
        t = crosstab(frame, cols)
        name = f"table {i + 1}: " + " x ".join(cols)
        if variant == "rounded 3":
            c = t["count"].to_numpy()
            r = c % 3
            up = rng.random(len(c)) < r / 3  # unbiased random rounding to base 3
            t["count"] = np.where(up, c - r + 3, c - r)
            out.append(Tabulated(t, qi=cols, rounding=3, name=name))
        elif variant == "suppressed < 3":
            t["count"] = [("x" if 0 < c < 3 else str(c)) for c in t["count"]]
            out.append(Tabulated(t, qi=cols, name=name))
        else:
            out.append(Tabulated(t, qi=cols, name=name))
    return out


def instance(kind: str, seed: int, quick: bool, variant: str = "exact"):
    """(frame, region, attributes, table column lists, tables)."""
    frame = adult()
    if kind == "large":
        region, (low, high) = "native_country", QUICK_LARGE if quick else LARGE
    else:
        region, (low, high) = "region", QUICK_SMALL if quick else SMALL
    drawn, specs = draw(frame, seed, region, low, high)
    return frame, region, drawn, specs, make_tables(frame, specs, variant, seed)


# ------------------------------------------------------------------ the IPF baseline
def ipf(frame, attributes, domain, specs, seconds: float, tol: float = 1e-6):
    """Iterative proportional fitting on the dense array of the domain, with margins
    counted from the records: (array, cycles, converged, largest margin error)."""
    shape = tuple(len(domain[a]) for a in attributes)
    codes = {a: pd.Categorical(frame[a], categories=domain[a]).codes for a in attributes}
    targets = []
    for cols in specs:
        axes = sorted(attributes.index(c) for c in cols)
        sub = tuple(shape[k] for k in axes)
        flat = np.ravel_multi_index(tuple(codes[attributes[k]] for k in axes), sub)
        margin = np.bincount(flat, minlength=int(np.prod(sub))).reshape(sub).astype(float)
        other = tuple(k for k in range(len(shape)) if k not in axes)
        targets.append((other, np.expand_dims(margin, other)))
    y = np.full(shape, len(frame) / np.prod(shape))
    deadline = time.perf_counter() + seconds
    cycles, worst = 0, np.inf
    while time.perf_counter() < deadline:
        cycles += 1
        worst = 0.0
        for other, margin in targets:
            cur = y.sum(axis=other, keepdims=True)
            worst = max(worst, float(np.abs(cur - margin).max()))
            with np.errstate(divide="ignore", invalid="ignore"):
                y *= np.where(cur > 0, margin / cur, 0.0)
        if worst <= tol:
            break
    return y, cycles, worst <= tol, worst


# ------------------------------------------------------------------ child measurements
def task_large(spec: dict) -> dict:
    from maxent_privacy import MaxEntModel

    frame, region, drawn, specs, tables = instance("large", spec["seed"], spec["quick"])
    builds, times, result, table = [], [], None, None
    for _ in range(spec["repeat"]):  # a fresh model each time: rows() is made once per model
        t0 = time.perf_counter()
        model = MaxEntModel(tables)
        builds.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        result = model.solve()
        table = result.table()
        times.append(time.perf_counter() - t0)
    build = min(builds)
    attributes, domain = model.attributes, model.domain
    ipf_times = []
    for _ in range(spec["repeat"]):
        t0 = time.perf_counter()
        base, cycles, converged, worst = ipf(frame, attributes, domain, specs, spec["ipf_seconds"])
        ipf_times.append(time.perf_counter() - t0)
    idx = np.ravel_multi_index(
        tuple(pd.Categorical(table[a], categories=domain[a]).codes for a in attributes),
        base.shape,
    )
    diff = float(np.abs(table["count"].to_numpy() - base.ravel()[idx]).max())
    cert = result.certificate
    return {
        "attributes": [region, *drawn],
        "tables": [" x ".join(c) for c in specs],
        "combinations": model.n_combinations,
        "rows": result.summary["rows"],
        "build": build,
        "seconds": min(times),
        "solver": result.summary["solver"],
        "zeros": result.summary["zeros"],
        "verified": bool(cert["verified"]),
        "residual": float(cert["residual"]),
        "gap": float(cert["gap"]),
        "ipf": min(ipf_times),
        "ipf_cycles": cycles,
        "ipf_converged": bool(converged),
        "ipf_error": worst,
        "diff": diff,
        "table_rows": len(table),
        "total": float(table["count"].sum()),
    }


def task_rounded(spec: dict) -> dict:
    """The large instance with every count randomly rounded to base 3 (not a target):
    ``solve()`` once; the baseline in the same process is ``solve()`` of the same tables
    with exact counts."""
    from maxent_privacy import MaxEntModel

    frame, region, drawn, specs, tables = instance(
        "large", spec["seed"], spec["quick"], "rounded 3"
    )
    model = MaxEntModel(tables, total=len(frame))
    t0 = time.perf_counter()
    result = model.solve(progress=False)
    seconds = time.perf_counter() - t0
    exact = MaxEntModel(instance("large", spec["seed"], spec["quick"])[-1])
    t0 = time.perf_counter()
    exact.solve(progress=False)
    base = time.perf_counter() - t0
    cert = result.certificate
    return {
        "attributes": [region, *drawn], "combinations": model.n_combinations,
        "rows": result.summary["rows"], "seconds": seconds, "exact": base,
        "solver": result.summary["solver"], "verified": bool(cert["verified"]),
        "residual": float(cert["residual"]), "gap": float(cert["gap"]),
    }  # fmt: skip


def task_small(spec: dict) -> dict:
    from maxent_privacy import MaxEntModel

    _, region, drawn, specs, tables = instance(
        "small", spec["seed"], spec["quick"], spec["variant"]
    )
    # rounded or suppressed tables do not give the number of records: published beside
    model = MaxEntModel(tables, total=None if spec["variant"] == "exact" else 45_222)
    out = {
        "attributes": [region, *drawn],
        "tables": [" x ".join(c) for c in specs],
        "combinations": model.n_combinations,
        "cells": int(sum(len(t.frame) for t in tables)),
    }
    limit = spec["limit"]
    if spec["lp"]:
        t0 = time.perf_counter()
        lp = model.bounds(by="cell", time_limit=spec["lp_limit"], progress=False)
        out["lp"] = time.perf_counter() - t0
        out["tight"] = int(lp["tight"].sum())
        out["lp_pinned"] = int((lp["upper"] - lp["lower"] < 1e-6).sum())
        out.update(naive_lp(model, lp, spec["seed"]))
    t0 = time.perf_counter()
    ex = model.bounds(by="cell", exact=True, time_limit=limit, progress=False)
    out["exact"] = time.perf_counter() - t0
    out["lower_exact"] = int(ex["lower_exact"].sum())
    out["upper_exact"] = int(ex["upper_exact"].sum())
    out["exact_pinned"] = int((ex["lower"] == ex["upper"]).sum())
    t0 = time.perf_counter()
    out["reconstruction"] = model.reconstruction(time_limit=limit, progress=False)
    out["reconstruction_s"] = time.perf_counter() - t0
    return out


def naive_lp(model, lp: pd.DataFrame, seed: int, sample: int = 10) -> dict:
    """The baseline of the LP bounds, in the same process: each combination's min and max
    by its own two scipy ``linprog`` programs (HiGHS) over the model's rows, timed on
    ``sample`` combinations drawn by the seed and extrapolated to all of them; and the
    largest difference from our bounds on those combinations."""
    from scipy.optimize import linprog

    rows = model.rows()
    M, lower, upper = rows.M, rows.lower, rows.upper
    eq = lower == upper
    up, low = ~eq & np.isfinite(upper), ~eq & np.isfinite(lower)
    A_ub = sp.vstack([M[np.flatnonzero(up)], -M[np.flatnonzero(low)]], format="csr")
    b_ub = np.concatenate([upper[up], -lower[low]])
    A_eq, b_eq = M[np.flatnonzero(eq)], lower[eq]
    if not len(b_ub):
        A_ub = b_ub = None
    n = M.shape[1]
    picks = np.random.default_rng(seed + 7).choice(n, size=min(sample, n), replace=False)
    ours = lp[["lower", "upper"]].to_numpy()
    diff = 0.0
    t0 = time.perf_counter()
    for z in picks:
        c = np.zeros(n)
        c[z] = 1.0
        for sign, col in ((1.0, 0), (-1.0, 1)):
            r = linprog(sign * c, A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=b_eq, method="highs")
            diff = max(diff, abs(sign * r.fun - ours[z, col]) if r.status == 0 else np.inf)
    seconds = time.perf_counter() - t0
    return {"naive": seconds * n / len(picks), "naive_sample": len(picks), "naive_diff": diff}


def child(spec_path: str) -> None:
    spec = json.loads(Path(spec_path).read_text())
    row = {"large": task_large, "rounded": task_rounded, "small": task_small}[spec["task"]](spec)
    write_text(spec_path + ".out.json", json.dumps(row, default=float))


def measure(spec: dict, budget: float, folder: Path) -> dict:
    """Run one task in a child process; killed after ``budget`` seconds."""
    path = folder / f"spec-{spec['task']}-{spec['seed']}-{spec.get('variant', '')}.json"
    path = Path(str(path).replace(" ", "_").replace("<", "lt"))
    write_text(path, json.dumps(spec))
    env = {**os.environ, "PYTHONPATH": str(HERE.parent)}
    t0 = time.perf_counter()
    try:
        done = subprocess.run(
            [sys.executable, __file__, "--child", str(path)],
            capture_output=True, text=True, env=env, timeout=budget, check=False,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        return {"killed": True, "wall": time.perf_counter() - t0}
    out = Path(str(path) + ".out.json")
    if not out.exists():
        return {"error": (done.stderr.strip().splitlines() or ["?"])[-1][:200]}
    row = json.loads(out.read_text())
    row["wall"] = time.perf_counter() - t0
    return row


# ------------------------------------------------------------------ the table
def verdict(ok: bool) -> str:
    return "met" if ok else "**MISSED**"


def large_rows(seed: int, r: dict, budget: float, quick: bool) -> list:
    what = f"seed {seed}: large"
    if "killed" in r or "error" in r:
        why = f"> {budget:.0f} s (killed)" if "killed" in r else f"error: {r['error']}"
        return [[what, "-", "`solve()` + `table()`", "< 10 s", why, verdict(False)]]
    desc = f"{' x '.join(r['attributes'])}; tables: {'; '.join(r['tables'])} ({r['rows']:,} rows)"
    ok = r["seconds"] < 10 and r["verified"]
    z = r["zeros"]
    measured = (
        f"{r['seconds']:.2f} s ({r['solver']}; build {r['build']:.2f} s); verified "
        f"{'yes' if r['verified'] else 'NO'}, residual {r['residual']:.1e}, gap {r['gap']:.1e}; "
        f"zeros: {z['zero rows']:,} by zero rows, {z['dual certificate']:,} dual, {z['LP']:,} LP"
    )
    base = (
        f"IPF (numpy, dense) {r['ipf']:.2f} s, {r['ipf_cycles']} cycles, "
        f"{'converged' if r['ipf_converged'] else 'NOT converged'} (margin error "
        f"{r['ipf_error']:.1e}); ours / IPF {r['seconds'] / r['ipf']:.1f}x; "
        f"largest abs(ours - IPF) {r['diff']:.1e} records"
    )
    return [
        [what, f"{r['combinations']:,}: {desc}", "`solve()` + `table()`",
         "-" if quick else "< 10 s", measured, "-" if quick else verdict(ok)],
        [what, "same", "baseline", "-", base, "-"],
    ]  # fmt: skip


def rounded_rows(seed: int, r: dict, budget: float) -> list:
    what = f"seed {seed}: large, rounded 3"
    if "killed" in r or "error" in r:
        why = f"> {budget:.0f} s (killed)" if "killed" in r else f"error: {r['error']}"
        return [[what, "-", "`solve()`", "-", why, "-"]]
    return [[
        what, f"{r['combinations']:,} ({r['rows']:,} rows)", "`solve()`", "-",
        f"{r['seconds']:.1f} s ({r['solver']}); verified {'yes' if r['verified'] else 'NO'}, "
        f"residual {r['residual']:.1e}, gap {r['gap']:.1e}; the same tables with exact "
        f"counts {r['exact']:.2f} s (ratio {r['seconds'] / r['exact']:.0f}x)", "-",
    ]]  # fmt: skip


def small_rows(seed: int, variant: str, r: dict, budget: float, limit: float, quick) -> list:
    what = f"seed {seed}: small, {variant}"
    if "killed" in r or "error" in r:
        why = f"> {budget:.0f} s (killed)" if "killed" in r else f"error: {r['error']}"
        return [[what, "-", "bounds", "-", why, verdict(False)]]
    n = r["combinations"]
    rows = []
    if "lp" in r:
        desc = f"{n:,}: {' x '.join(r['attributes'])}; tables: {'; '.join(r['tables'])}"
        ok = r["lp"] < 60 and r["tight"] == n
        rows.append([
            what, desc, "LP `bounds(by=\"cell\")`", "-" if quick else "< 60 s",
            f"{r['lp']:.1f} s; tight {r['tight']:,} of {n:,}; pinned {r['lp_pinned']:,}",
            "-" if quick else verdict(ok),
        ])  # fmt: skip
        rows.append([
            what, "same", "baseline", "-",
            f"scipy `linprog` per combination (min and max), {r['naive_sample']} drawn by "
            f"the seed, extrapolated: {r['naive']:.1f} s; ours / baseline "
            f"{r['lp'] / r['naive']:.2g}x; largest difference from ours there "
            f"{r['naive_diff']:.1e} records", "-",
        ])  # fmt: skip
    else:
        rows.append([what, f"{n:,}; {r['cells']:,} published cells", "", "", "", ""])
    over = r["exact"] - limit
    rows.append([
        what, "same", f"`exact=True, time_limit={limit:g}`", f"<= {limit:g} s + a few",
        f"{r['exact']:.1f} s ({over:+.1f} s); proved lower {r['lower_exact']:,}, "
        f"upper {r['upper_exact']:,} of {n:,}; pinned {r['exact_pinned']:,}",
        verdict(over < 5),
    ])  # fmt: skip
    rc = r["reconstruction"]
    over = r["reconstruction_s"] - limit
    rows.append([
        what, "same", f"`reconstruction(time_limit={limit:g})`", f"<= {limit:g} s + a few",
        f"{r['reconstruction_s']:.1f} s ({over:+.1f} s); certain records "
        f"{rc['certain_records']:,.0f} of {rc['records']:,.0f}; pinned {rc['pinned']:,} "
        f"({rc['pinned_positive']:,} at >= 1); unique pinned {rc['unique_pinned']:,}; "
        f"proved {'yes' if rc['proved'] else 'no'}",
        "-" if over < 5 else verdict(False),
    ])  # fmt: skip
    return rows


def main(argv=None) -> int:
    parser = argument_parser(
        __doc__, quick="seed 0, smaller instances, no targets", out=DEFAULT_OUT
    )
    parser.add_argument("--seed", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--limit", type=float, default=30.0, help="exact time limit, s")
    parser.add_argument("--lp-limit", type=float, default=120.0, help="LP bounds time limit")
    parser.add_argument("--budget", type=float, default=300.0, help="per child process, s")
    parser.add_argument("--ipf-seconds", type=float, default=60.0)
    parser.add_argument(
        "--only", choices=["large", "small"], help="only the large (max-ent) or small (bounds)"
    )
    parser.add_argument(
        "--rounded", action="store_true", help="also the large instances rounded to base 3"
    )
    parser.add_argument("--child", help=argparse_hidden())
    args = parser.parse_args(argv)
    if args.child:
        child(args.child)
        return 0
    seeds = [args.seed[0]] if args.quick and args.seed == [0, 1, 2] else args.seed
    info = machine_info()
    start = time.perf_counter()
    rows, raw = [], {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        common = {"quick": args.quick, "repeat": args.repeat, "limit": args.limit,
                  "lp_limit": args.lp_limit, "ipf_seconds": args.ipf_seconds}  # fmt: skip
        for seed in seeds:
            if args.only != "small":
                r = measure({**common, "task": "large", "seed": seed}, args.budget, folder)
                raw[f"large {seed}"] = r
                rows += large_rows(seed, r, args.budget, args.quick)
                print(rows[-1], flush=True)
            if args.rounded and args.only != "small":
                r = measure({**common, "task": "rounded", "seed": seed}, args.budget, folder)
                raw[f"rounded {seed}"] = r
                rows += rounded_rows(seed, r, args.budget)
                print(rows[-1], flush=True)
            variants = ("exact", "rounded 3", "suppressed < 3")
            for variant in () if args.only == "large" else variants:
                spec = {**common, "task": "small", "seed": seed, "variant": variant,
                        "lp": variant == "exact"}  # fmt: skip
                r = measure(spec, args.budget, folder)
                raw[f"small {seed} {variant}"] = r
                rows += small_rows(seed, variant, r, args.budget, args.limit, args.quick)
                print(rows[-1], flush=True)
    header = ["instance", "combinations: attributes; tables", "measure", "target",
              "measured", "verdict"]  # fmt: skip
    table = md_table(header, rows)
    command = "python -m benchmarks tables " + " ".join(argv if argv is not None else sys.argv[1:])
    text = "\n".join([
        "# Published tables at scale (issue 40, item 6)", "",
        f"Command: `{command.strip()}` (total {time.perf_counter() - start:.0f} s)", "",
        *machine_lines(info), f"* load average at start: {info['loadavg_at_start']}", "",
        table, "", "Raw numbers:", "", "```json", json.dumps(raw, indent=1, default=float),
        "```", "",
    ])  # fmt: skip
    args.out.mkdir(parents=True, exist_ok=True)
    name = "tables" + (f"-{args.only}" if args.only else "") + ("-rounded" if args.rounded else "")
    name += "-quick.md" if args.quick else ".md"
    write_text(args.out / name, text)
    print(table)
    print(f"\nwritten: {args.out / name}")
    return 0


def argparse_hidden():
    import argparse

    return argparse.SUPPRESS


if __name__ == "__main__":
    sys.exit(main())
