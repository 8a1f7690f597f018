"""Solver comparison (issue 5): our solver ("maxent") against cvxpy's exponential-cone solvers.

Not a test: a by-hand benchmark that writes a report.

For each instance and each installed solver (``maxent_privacy.solve.exp_cone_solvers()``
plus our ``"maxent"``) one child process (``python benchmarks/solvers.py --child ...``)
solves Du et al.'s Figure 1 once with the same solver (a warm-up: imports and first-call
costs), prepares the instance (data, releases, rules; not timed), then times the model build
(``MaxEntModel(...)`` + ``add``) and ``model.solve(solver=...)``, and reports the
iterations, our certificate (entropy, residual, gap), the peak resident memory of the
child (``ru_maxrss``; the child's RSS after preparing the instance is reported too, so the
difference is what build + solve added) and ``result.posterior()``. A child that exceeds
the time cap is killed and recorded as "timeout"; an exception is recorded as an error row.
The reference answer of an instance is the finished run with the smallest certificate
residual; ``max |Δ post|`` is the largest absolute difference of any posterior against it.

cvxpy solvers run with ``polish=False`` (their own answer; the package's Newton polish of a
big component can take minutes, see ``republish.py``) and the default ``tol=1e-6``; the row
``CLARABEL+polish`` is Clarabel with the package default ``polish=True`` (not on the
multi-release Adult instance); the row ``CLARABEL-plain`` (targets 1 and 2) is cvxpy + Clarabel
on the same model as one problem (``decompose=False, presolve=False, polish=False``: the
generic path, without this package's presolve, closed form and decomposition); if our
certificate rejects the answer (``InaccurateSolution``) the run is repeated at ``tol=1e-4``
and the row says so. ``"maxent"`` runs with the package defaults.

Instances:

* ``du-fig1`` -- Du et al. Figure 1 (10 records) with the fact P(Flu | male) = 0.5.
* ``du-adult-K`` -- ``datasets.du2008_adult()`` (14,210 records) anatomized (education,
  l = 5, seed 0, HS-grad and Some-college non-sensitive), with the mixed Top-(K/2, K/2)
  association rules (``mine_rules``, min support 3) for K = 0, 100, 1000, 5000.
* ``wang-2x7200`` -- Wang et al.'s setting as in ``republish.py``: D1, D2 of 7,200 records
  each (6,000 shared), occupation as SA, Anatomy l = 3 with a person column, pooled
  ``MaxEntModel([D'1, D'2])``.
* ``adult-10rel`` -- all 45,222 Adult records arriving in 10 equal increments; release i
  is Anatomy (occupation, l = 3, person column, seed i) of the records present at step i;
  one pooled model of the 10 releases.
* ``synth-N`` -- N records resampled from Adult with replacement (fresh pseudonyms),
  N = 10k, 30k, 100k, 300k, 1M, 5 cumulative releases as above; ``"maxent"`` only. Sizes
  after one that exceeded the cap (or whose predicted time does) are "skipped (cap)".

Run from the repository root::

    python benchmarks/solvers.py            # full run
    python benchmarks/solvers.py --quick    # smoke run (small instances, short caps)

Options: ``--out DIR`` (default ``benchmarks/results``), ``--cap SECONDS`` (per run, default
120), ``--scs-cap SECONDS`` (SCS, default min(cap, 30)), ``--big-cap SECONDS`` (synthetic
populations, default 300). Writes ``solvers.md``,
``solvers.json`` and ``solvers.png`` (``solvers-quick.*`` with ``--quick``).

``--random N`` (``random_instances.py``) and ``--sequences N`` (issue 24) are tables of N
seeded instances (``--seed-start``), ours against plain cvxpy + Clarabel in this process.
``--sequences``: signature-keeping sequences built here (not by this package's
anonymizers): 2,000-10,000 Adult people, ``occupation`` or ``education`` sensitive, a
random subset of ``datasets.ADULT_QI``, 3-5 releases with person ids, l = 2-6, one of
three generators by seed (``SEQ_KINDS[(seed - 1) % 3]``). Release 1 puts people into
buckets of l distinct values; each later release loses 5-15 % of its people and gets 5-15 %
arrivals. *exact* (``signature_sequence``): re-forms buckets of the survivors per signature
(the set of values of a person's first bucket; one person per value, the leftovers leave),
arrivals in new buckets; *joining* (``joining_sequence``, as m-invariance): most arrivals
join a signature holding their value and each signature's people are regrouped so that
every group holds each of its values, duplicates allowed (the kind of the issue's
2,000-person instance, where an LP found the forced zeros); *history*
(``history_sequence``, Wang et al.'s history-guided re-publishing): buckets kept, a
leaver's slot given to an arrival of the same value. 0-2 true facts
P(value | attribute = v) == p. The columns "presolve zeros: ..." are
``solver_stats["presolve_zeros"]`` (cells presolve's rules fixed at 0: rows, flows, the
support LP of ``solve/support.py``). The reference is an independent cvxpy model
(``model.invariant_matrix(drop_redundant=False)``, the facts' rows, ``maximize sum
entr(x) + x . log n``; Clarabel, time limit ``--cap``, default 120 s), timed once; ours
(``MaxEntModel`` + facts + ``solve()``) the best of ``--repeat`` runs. Writes
``solvers-sequences.md``.
"""

from __future__ import annotations

import argparse
import json
import math
import pickle
import resource
import subprocess
import sys
import tempfile
import time
import traceback
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import argument_parser, jsonable, machine_info  # noqa: E402
from republish import CATEGORICAL, exemptions, sample  # noqa: E402  (Wang's setting)

from maxent_privacy.files import atomic_write, save_figure, write_text  # noqa: E402

DEFAULT_OUT = Path(__file__).resolve().parent / "results"
WANG_SA = "occupation"
WANG_QI = [c for c in CATEGORICAL if c != WANG_SA]
WANG_L = 3

FULL = {
    "du_k": [0, 100, 1000, 5000],
    "wang_n": 7_200,
    "wang_shared": 6_000,
    "adult_releases": 10,
    "synth_sizes": [10_000, 30_000, 100_000, 300_000, 1_000_000],
    "synth_releases": 5,
}
QUICK = {
    "du_k": [0, 100],
    "wang_n": 1_200,
    "wang_shared": 1_000,
    "adult_releases": 3,
    "adult_n": 6_000,
    "synth_sizes": [10_000, 30_000],
    "synth_releases": 5,
}


# ------------------------------------------------------------------------ instances
def cumulative_releases(frame: pd.DataFrame, k: int, seed: int = 0) -> list:
    """Release i = Anatomy of the first i/k of a seeded permutation of ``frame``."""
    from maxent_privacy.anonymize import rebucketize

    perm = np.random.default_rng(seed).permutation(len(frame))
    steps = np.linspace(0, len(frame), k + 1).round().astype(int)[1:]
    exempt = exemptions([frame.iloc[perm[: steps[0]]], frame], WANG_SA, WANG_L)
    return [
        rebucketize(
            frame.iloc[perm[:s]],
            WANG_QI,
            WANG_SA,
            l=WANG_L,
            person="pid",
            seed=i + 1,
            nonsensitive=exempt or None,
        )
        for i, s in enumerate(steps)
    ]


def prepare(spec: dict):
    """Untimed part: data, releases, rules. Returns a function that builds the model."""
    from maxent_privacy import Bucketized, MaxEntModel, anonymize, datasets
    from maxent_privacy.rules import mine_rules

    kind = spec["kind"]
    if kind == "du-fig1":
        release = Bucketized(
            datasets.du2008_figure1(), qi=["gender", "degree"], sa="disease", group="bucket"
        )

        def build():
            model = MaxEntModel(release)
            model.add(model.P("Flu", gender="male") == 0.5)
            return model

        return build
    if kind == "du-adult":
        frame = datasets.du2008_adult()
        release = anonymize.anatomize(
            frame,
            list(datasets.ADULT_QI),
            "education",
            l=5,
            seed=0,
            nonsensitive=["HS-grad", "Some-college"],
        )
        rules = mine_rules(frame, qi=list(datasets.ADULT_QI), sa="education", min_support=3)
        k = spec["k"]
        top = rules.top(k // 2, k - k // 2)

        def build():
            model = MaxEntModel(release)
            if k:
                model.add(top)
            return model

        return build
    adult = datasets.load_adult()
    if kind == "wang":
        from maxent_privacy.anonymize import rebucketize

        adult = adult.assign(pid=np.arange(len(adult)))
        n, shared = spec["n"], spec["shared"]
        d1, d2 = sample(adult, n, shared, seed=0)
        exempt = exemptions([d1, d2], WANG_SA, WANG_L) or None
        r1 = rebucketize(d1, WANG_QI, WANG_SA, l=WANG_L, person="pid", seed=1, nonsensitive=exempt)
        r2 = rebucketize(d2, WANG_QI, WANG_SA, l=WANG_L, person="pid", seed=2, nonsensitive=exempt)
        releases = [r1, r2]
    elif kind == "adult-rel":
        if spec.get("n"):
            adult = adult.iloc[np.random.default_rng(7).permutation(len(adult))[: spec["n"]]]
        adult = adult.assign(pid=np.arange(len(adult)))
        releases = cumulative_releases(adult, spec["releases"])
    elif kind == "synth":
        idx = np.random.default_rng(spec["n"]).integers(0, len(adult), spec["n"])
        frame = adult.iloc[idx].reset_index(drop=True)
        frame = frame.assign(pid=np.arange(len(frame)))
        releases = cumulative_releases(frame, spec["releases"])
    else:
        raise ValueError(kind)

    def build():
        return MaxEntModel(releases)

    return build


def child(spec_path: str) -> None:
    """Run one (instance, solver) and write ``<spec>.out.pkl``."""
    warnings.simplefilter("ignore")
    spec = json.loads(Path(spec_path).read_text())
    out: dict = {}
    try:
        from maxent_privacy import InaccurateSolution

        if spec.get("warm_up", True):  # imports and first-call costs, paid by no timed run
            fig1 = prepare({"kind": "du-fig1"})()
            fig1.solve(solver=spec["solver"].removesuffix("+polish").removesuffix("-plain"))
        out["sources"] = machine_info()["maxent_privacy_sources"]["sha256"]
        t0 = time.perf_counter()
        build = prepare(spec)
        out["prepare_time"] = time.perf_counter() - t0
        out["rss_prepared_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        t0 = time.perf_counter()
        model = build()
        out["build_time"] = time.perf_counter() - t0
        solver = spec["solver"]
        kw = {} if solver == "maxent" else {"polish": False}
        if solver.endswith("+polish"):  # the package default: cvxpy answer + Newton polish
            solver, kw = solver.removesuffix("+polish"), {}
        if solver.endswith("-plain"):  # the generic path: one cvxpy problem, no presolve
            solver = solver.removesuffix("-plain")
            kw = {"polish": False, "decompose": False, "presolve": False}
        t0 = time.perf_counter()
        try:
            result = model.solve(solver=solver, **kw)
        except InaccurateSolution as err:
            out["note"] = f"tol 1e-4 (1e-6 rejected: {str(err)[:80]})"
            result = model.solve(solver=solver, tol=1e-4, **kw)
        out["solve_time"] = time.perf_counter() - t0
        out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        s = result.solver_stats
        c = result.certificate
        out["stats"] = {
            k: s.get(k)
            for k in (
                "solver",
                "iterations",
                "setup_time",
                "solve_time",
                "total_time",
                "components",
                "solved",
                "fixed_by_presolve",
                "cells",
            )
        }
        out["residual"] = float(c.primal_residual)
        out["entropy"] = float(c.entropy)
        out["gap"] = float(c.gap)
        out["status"] = result.status if hasattr(result, "status") else "ok"
        out["n_vars"] = len(model.cells)
        post = result.posterior()
        out["posterior"] = post
    except Exception as err:
        out["error"] = f"{type(err).__name__}: {' '.join(str(err).split())[:300]}"
        out["traceback"] = traceback.format_exc()
    with atomic_write(spec_path + ".out.pkl", "wb") as fh:  # never a half pickle
        pickle.dump(out, fh)


def run_capped(spec: dict, cap: float, tmp: Path) -> dict:
    path = tmp / f"{spec['instance']}-{spec['solver']}.json"
    write_text(path, json.dumps(spec))
    t0 = time.perf_counter()
    row = {"instance": spec["instance"], "solver": spec["solver"]}
    try:
        subprocess.run(
            [sys.executable, __file__, "--child", str(path)],
            timeout=cap,
            check=False,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
    except subprocess.TimeoutExpired:
        row["error"] = f"timeout (cap {cap:g} s)"
        row["wall"] = time.perf_counter() - t0
        return row
    row["wall"] = time.perf_counter() - t0
    out_path = Path(str(path) + ".out.pkl")
    if not out_path.exists():
        row["error"] = "child died (no output; killed by memory?)"
        return row
    with open(out_path, "rb") as fh:
        row.update(pickle.load(fh))
    return row


def delta_posteriors(rows: list[dict]) -> None:
    """Reference = finished run with the smallest residual; max |Δ posterior| against it."""
    by_inst: dict[str, list[dict]] = {}
    for r in rows:
        by_inst.setdefault(r["instance"], []).append(r)
    for group in by_inst.values():
        done = [r for r in group if "posterior" in r]
        if not done:
            continue
        ref = min(done, key=lambda r: r["residual"])
        for r in done:
            r["reference"] = ref["solver"]
            a, b = r["posterior"].align(ref["posterior"], join="outer")
            r["max_dpost"] = float(
                np.nanmax(np.abs(a.fillna(0).to_numpy() - b.fillna(0).to_numpy()))
            )


# ------------------------------------------------------------------------ report
def fmt(v, spec):
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return ""
    return format(v, spec)


def table(rows: list[dict]) -> str:
    head = (
        "| instance | solver | variables | build s | solve s | total s | peak RSS MB "
        "(after prep) | iterations | entropy (nats/rec) | residual | max abs Δ post | note |"
    )
    lines = [head, "|" + "---|" * 12]
    for r in rows:
        if "error" in r:
            lines.append(
                f"| {r['instance']} | {r['solver']} | | | | | | | | | | {r['error'][:120]} |"
            )
            continue
        total = r["build_time"] + r["solve_time"]
        lines.append(
            f"| {r['instance']} | {r['solver']} | {r.get('n_vars', '')} | "
            f"{r['build_time']:.3f} | {r['solve_time']:.3f} | {total:.3f} | "
            f"{r['peak_rss_mb']:.0f} ({r['rss_prepared_mb']:.0f}) | "
            f"{r['stats'].get('iterations', '')} | {r['entropy']:.6f} | {r['residual']:.1e} | "
            f"{fmt(r.get('max_dpost'), '.1e')} | {r.get('note', '')} |"
        )
    return "\n".join(lines)


def total(r):
    return r["build_time"] + r["solve_time"] if "solve_time" in r else float("nan")


def targets(rows: list[dict], cfg) -> list[tuple[str, str, str]]:
    def get(inst, solver):
        return next((r for r in rows if r["instance"] == inst and r["solver"] == solver), None)

    out = []

    def ratio_target(label, inst, limit, min_ratio, agree=None):
        ours, cl = get(inst, "maxent"), get(inst, "CLARABEL")
        if ours is None or "solve_time" not in ours:
            out.append((label, "not run", ""))
            return
        t = total(ours)
        if cl is None or "solve_time" not in cl:
            ratio = float("nan")
            cl_txt = f"Clarabel: {cl.get('error', 'not run') if cl else 'not run'}"
        else:
            ratio = total(cl) / t
            cl_txt = f"Clarabel {total(cl):.2f} s -> {ratio:.1f}x"
        ok = t <= limit and (not math.isfinite(ratio) or ratio >= min_ratio)
        if not math.isfinite(ratio):
            ok = ok and cl is not None  # a Clarabel timeout means at least cap/t
        text = f"ours {t:.3f} s (limit {limit} s); {cl_txt} (need >= {min_ratio}x)"
        pol = get(inst, "CLARABEL+polish")
        if pol is not None and "solve_time" in pol:
            text += f"; Clarabel+polish {total(pol):.2f} s -> {total(pol) / t:.1f}x"
        plain = get(inst, "CLARABEL-plain")
        if plain is not None and "solve_time" in plain:
            # cvxpy + Clarabel on the same model as one problem (no decomposition, presolve)
            text += f"; plain cvxpy+Clarabel {total(plain):.2f} s -> {total(plain) / t:.1f}x"
        if agree is not None:
            dmax = max(
                (r["max_dpost"] for r in rows if r["instance"] == inst and "max_dpost" in r),
                default=float("nan"),
            )
            dpol = pol.get("max_dpost", float("nan")) if pol else float("nan")
            text += (
                f"; max abs Δ post: ours vs Clarabel+polish {dpol:.1e}, "
                f"largest over all solvers {dmax:.1e} (need <= {agree:g})"
            )
            ok = ok and dpol <= agree
        out.append((label, "met" if ok else "missed", text))

    if 1000 in cfg["du_k"]:
        ratio_target("1. Du Adult K=1000", "du-adult-1000", 0.5, 20, agree=1e-6)
    ratio_target(f"2. Wang 2 x {cfg['wang_n']:,}", f"wang-2x{cfg['wang_n']}", 0.3, 20)
    ours = get("adult-10rel", "maxent") if cfg["adult_releases"] == 10 else None
    if ours is not None and "solve_time" in ours:
        out.append(
            (
                "3. Full Adult, 10 releases",
                "met" if total(ours) <= 5 else "missed",
                f"{total(ours):.2f} s (limit 5 s)",
            )
        )
    big = get("synth-1000000", "maxent")
    if big is not None and "solve_time" in big:
        ok = total(big) <= 60 and big["peak_rss_mb"] <= 4096
        out.append(
            (
                "4. 1,000,000 records, 5 releases",
                "met" if ok else "missed",
                f"{total(big):.1f} s (limit 60 s), "
                f"peak RSS {big['peak_rss_mb']:.0f} MB (limit 4096)",
            )
        )
    elif big is not None:
        out.append(("4. 1,000,000 records, 5 releases", "missed", big.get("error", "")))
    synth = [r for r in rows if r["instance"].startswith("synth-") and "solve_time" in r]
    if len(synth) >= 2:
        n = np.array([int(r["instance"].split("-")[1]) for r in synth], dtype=float)
        t = np.array([total(r) for r in synth])
        slope = np.polyfit(np.log(n), np.log(t), 1)[0]
        out.append(
            (
                "4b. time vs records near-linear",
                "met" if slope <= 1.2 else "missed",
                f"log-log slope {slope:.2f} over {int(n.min()):,}..{int(n.max()):,} records",
            )
        )
    return out


def plot(rows, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    ok = [r for r in rows if "solve_time" in r]
    du = [r for r in ok if r["instance"].startswith("du-adult-")]
    for solver in sorted({r["solver"] for r in du}):
        pts = sorted(
            (int(r["instance"].split("-")[-1]), total(r)) for r in du if r["solver"] == solver
        )
        axes[0].plot([max(k, 10) for k, _ in pts], [t for _, t in pts], "o-", label=solver)
    axes[0].set(
        xscale="log", yscale="log", xlabel="K rules (0 drawn at 10)", ylabel="build + solve (s)"
    )
    axes[0].set_title("Du Adult (14,210 records)")
    axes[0].legend()
    synth = sorted(
        (int(r["instance"].split("-")[1]), total(r))
        for r in ok
        if r["instance"].startswith("synth-")
    )
    if synth:
        axes[1].plot(*zip(*synth, strict=True), "o-", label="maxent, 5 releases")
        axes[1].set(xscale="log", yscale="log", xlabel="records", ylabel="build + solve (s)")
        axes[1].set_title("Synthetic population")
        axes[1].legend()
    fig.tight_layout()
    save_figure(path, fig, dpi=110)


def random_mode(args, argv) -> int:
    """``--random N``: the table of N random instances, written whole or not at all
    (``solvers-random.md``; ``solvers-random-s<K>.md`` from seed K > 1)."""
    import os

    from random_instances import markdown, run, summary

    args.out.mkdir(parents=True, exist_ok=True)  # before the long run, not after it
    load = os.getloadavg()
    found = run(args.random, args.seed_start, args.repeat)
    command = "python " + " ".join(
        ["benchmarks/solvers.py", *(argv if argv is not None else sys.argv[1:])]
    )
    info = machine_info()
    header = (
        f"# Random re-publishing instances: plain cvxpy + Clarabel / ours\n\n`{command}`\n\n"
        f"{info['date']}, {info['platform']}, {info['nproc']} cores; load average "
        f"{load[0]:.2f} at start, {os.getloadavg()[0]:.2f} at the end (other benchmarks "
        f"running: timings are the best of {args.repeat} runs, ours of "
        f"{max(5, args.repeat)})\n\n"
    )
    name = "solvers-random.md" if args.seed_start == 1 else f"solvers-random-s{args.seed_start}.md"
    write_text(args.out / name, markdown(found, header))
    print(summary(found))
    return 0


# ------------------------------------------------------------------------ --sequences
SEQ_SA = ["occupation", "education"]


def _distinct_buckets(values: np.ndarray, size: int, rng) -> list[np.ndarray]:
    """Buckets of ``size`` positions of ``values`` holding ``size`` distinct values each:
    repeatedly the most frequent value left and ``size - 1`` others drawn with weights
    count**2 (the frequent ones drain first), one person of each; people left when fewer
    than ``size`` values remain get no bucket."""
    by = {v: list(rng.permutation(np.flatnonzero(values == v))) for v in np.unique(values)}
    buckets = []
    while True:
        live = [v for v in by if by[v]]
        if len(live) < size:
            return buckets
        w = np.array([len(by[v]) for v in live], dtype=float) ** 2
        top = int(np.argmax(w))
        w[top] = 0.0
        pick = [top, *rng.choice(len(live), size=size - 1, replace=False, p=w / w.sum())]
        buckets.append(np.array([by[live[i]].pop() for i in pick]))


def _keep_signatures(people: np.ndarray, s: np.ndarray, sig: dict, rng) -> list[np.ndarray]:
    """m-invariance: per signature, buckets of one person per value of the signature
    (``people`` are positions, ``s`` their values); the leftovers get no bucket."""
    groups: dict[tuple, dict] = {}
    for p in rng.permutation(people):
        groups.setdefault(sig[p], {}).setdefault(s[p], []).append(p)
    buckets = []
    for signature, by_value in groups.items():
        k = min(len(by_value.get(v, [])) for v in signature)
        buckets += [np.array([by_value[v][i] for v in signature]) for i in range(k)]
    return buckets


def _publish(frame, s, new, size: int, sig: dict, buckets: list, frames: list, rng):
    """Bucket the newcomers ``new`` in buckets of ``size`` distinct values (their
    signatures recorded in ``sig``) after ``buckets``, append the release frame to
    ``frames``; the published positions."""
    for b in _distinct_buckets(s[new], size, rng):
        members = new[b]
        sig.update((p, tuple(sorted(s[members]))) for p in members)
        buckets.append(members)
    published = np.concatenate(buckets)
    bucket = np.repeat(np.arange(1, len(buckets) + 1), [len(b) for b in buckets])
    frames.append(frame.iloc[published].assign(bucket=bucket).reset_index(drop=True))
    return published


def signature_sequence(frame, sa: str, n0: int, n_rel: int, size: int, rng):
    """Signature-keeping releases of ``frame`` (position = pid): release 1 buckets the
    first ``n0`` people into buckets of ``size`` distinct values; each later release loses
    5-15 % of the people at random (departures), re-forms the survivors' buckets keeping
    each one's signature (the leftovers of a signature leave too) and buckets 5-15 %
    arrivals from the rest of ``frame``. Returns the release frames (with ``bucket``)."""
    s = frame[sa].to_numpy()
    sig: dict = {}
    nxt = n0
    published = np.array([], dtype=int)
    frames = []
    for r in range(n_rel):
        buckets = []
        if r:
            keep = rng.uniform(size=len(published)) >= rng.uniform(0.05, 0.15)
            buckets = _keep_signatures(published[keep], s, sig, rng)
            m = int(round(n0 * rng.uniform(0.05, 0.15)))
            new, nxt = np.arange(nxt, min(nxt + m, len(frame))), min(nxt + m, len(frame))
        else:
            new = np.arange(n0)
        published = _publish(frame, s, new, size, sig, buckets, frames, rng)
    return frames


def _sig_groups(people: np.ndarray, s: np.ndarray, sig: dict, rng) -> list[np.ndarray]:
    """Per signature, ``k`` groups of one person per value of the signature (``k``: the
    fewest people of one of its values) and the signature's other people spread over them
    at random: every group holds each value of the signature, some twice or more."""
    groups: dict[tuple, dict] = {}
    for p in rng.permutation(people):
        groups.setdefault(sig[p], {}).setdefault(s[p], []).append(p)
    buckets = []
    for signature, by_value in groups.items():
        k = min(len(by_value.get(v, [])) for v in signature)
        if not k:
            continue
        rows = [[by_value[v][i] for v in signature] for i in range(k)]
        for p in [p for v in signature for p in by_value[v][k:]]:
            rows[int(rng.integers(k))].append(p)
        buckets += [np.array(r) for r in rows]
    return buckets


def joining_sequence(frame, sa: str, n0: int, n_rel: int, size: int, rng):
    """Signature-keeping releases where arrivals join existing signatures (as m-invariance
    does): release 1 as in :func:`signature_sequence`; each later release loses 5-15 % of
    its people, 70 % of the 5-15 % arrivals take a signature holding their value (drawn at
    random), and every signature's people are regrouped by :func:`_sig_groups` (all of
    them published: groups hold each value of the signature, duplicates allowed); the other
    arrivals are bucketed in buckets of ``size`` distinct values (new signatures)."""
    s = frame[sa].to_numpy()
    sig: dict = {}
    nxt = n0
    published = np.array([], dtype=int)
    frames = []
    for r in range(n_rel):
        buckets = []
        if r:
            stay = published[rng.uniform(size=len(published)) >= rng.uniform(0.05, 0.15)]
            m = int(round(n0 * rng.uniform(0.05, 0.15)))
            arrivals, nxt = np.arange(nxt, min(nxt + m, len(frame))), min(nxt + m, len(frame))
            known = sorted({sig[p] for p in stay})
            joined, new = [], []
            for p in arrivals:
                fits = [g for g in known if s[p] in g]
                if fits and rng.uniform() < 0.7:
                    sig[p] = fits[int(rng.integers(len(fits)))]
                    joined.append(p)
                else:
                    new.append(p)
            buckets = _sig_groups(np.concatenate([stay, joined]).astype(int), s, sig, rng)
            new = np.array(new, dtype=int)
        else:
            new = np.arange(n0)
        published = _publish(frame, s, new, size, sig, buckets, frames, rng)
    return frames


def history_sequence(frame, sa: str, n0: int, n_rel: int, size: int, rng):
    """History-guided re-publishing (Wang et al. Section 4.1 (2)), written here: release 1
    as in :func:`signature_sequence`; each later release keeps every bucket, a person
    leaving (5-15 %) gives their slot to an arrival of the same value when there is one
    (else the slot stays empty), and the arrivals left over (of 5-15 % arriving) are
    bucketed in new buckets of ``size`` distinct values."""
    s = frame[sa].to_numpy()
    members = {i + 1: list(b) for i, b in enumerate(_distinct_buckets(s[:n0], size, rng))}
    nxt = n0
    frames = []
    for r in range(n_rel):
        if r:
            rate = rng.uniform(0.05, 0.15)
            m = int(round(n0 * rng.uniform(0.05, 0.15)))
            arrivals, nxt = np.arange(nxt, min(nxt + m, len(frame))), min(nxt + m, len(frame))
            pool: dict = {}
            for p in rng.permutation(arrivals):
                pool.setdefault(s[p], []).append(p)
            for b in list(members):
                kept = []
                for p in members[b]:
                    if rng.uniform() >= rate:
                        kept.append(p)
                    elif pool.get(s[p]):
                        kept.append(pool[s[p]].pop())
                if kept:
                    members[b] = kept
                else:
                    del members[b]
            rest = np.array([p for v in pool.values() for p in v], dtype=int)
            first = max(members, default=0) + 1
            for i, b in enumerate(_distinct_buckets(s[rest], size, rng)):
                members[first + i] = list(rest[b])
        pos = np.array([p for ps in members.values() for p in ps], dtype=int)
        bucket = np.repeat(list(members), [len(ps) for ps in members.values()])
        frames.append(frame.iloc[pos].assign(bucket=bucket).reset_index(drop=True))
    return frames


#: the sequence generator of seed k: SEQ_KINDS[(k - 1) % 3]
SEQ_KINDS = ["exact", "joining", "history"]


def true_cells(model, frames, sa: str) -> np.ndarray:
    """The true cell values of a pooled model: each published person at their value."""
    people = pd.concat(frames).drop_duplicates("pid")
    cls = model.structure.person_class.reindex(people["pid"]).to_numpy()
    where = {k: j for j, k in enumerate(zip(model.cells["cls"], model.cells[sa], strict=True))}
    x = np.zeros(model.n_cells)
    for c, v in zip(cls, people[sa], strict=True):
        x[where[(c, v)]] += 1
    return x


def true_facts(frames, qi, sa, k: int, rng) -> list[tuple]:
    """``k`` true facts P(value | attribute = v) == p over the published people."""
    people = pd.concat(frames).drop_duplicates("pid")
    facts = []
    for _ in range(k):
        row = people.iloc[int(rng.integers(len(people)))]
        a = str(rng.choice(qi))
        sel = people[people[a] == row[a]]
        value = sel[sa].iloc[int(rng.integers(len(sel)))]
        facts.append((value, {a: row[a]}, float((sel[sa] == value).mean())))
    return facts


def sequence_instance(seed: int):
    """(releases, facts, description, frames, sa, l, kind) of the sequence instance
    ``seed``; its generator: ``SEQ_KINDS[(seed - 1) % 3]``."""
    from maxent_privacy import Bucketized, datasets

    rng = np.random.default_rng(seed)
    sa = str(rng.choice(SEQ_SA))
    pool = [c for c in datasets.ADULT_QI if c != sa]
    qi = sorted(rng.choice(pool, size=int(rng.integers(3, len(pool) + 1)), replace=False))
    n0, n_rel, size = (
        int(rng.integers(2_000, 10_001)),
        int(rng.integers(3, 6)),
        int(rng.integers(2, 7)),
    )
    adult = datasets.load_adult()
    frame = adult.sample(min(len(adult), int(n0 * (1 + 0.15 * (n_rel - 1)))), random_state=seed)
    frame = frame.reset_index(drop=True)[qi + [sa]].assign(pid=lambda f: np.arange(len(f)))
    kind = SEQ_KINDS[(seed - 1) % len(SEQ_KINDS)]
    make = {"exact": signature_sequence, "joining": joining_sequence}.get(kind, history_sequence)
    frames = make(frame, sa, n0, n_rel, size, rng)
    releases = [Bucketized(f, qi=qi, sa=sa, group="bucket", person="pid") for f in frames]
    facts = true_facts(frames, qi, sa, int(rng.integers(0, 3)), rng)
    sizes = "/".join(f"{len(f):,}" for f in frames)
    text = (
        f"seed {seed} ({kind}): {n0:,} sampled, {n_rel} releases of {sizes} people, "
        f"l = {size}, SA {sa}, QI {', '.join(map(str, qi))}"
    )
    return releases, facts, text, frames, sa, size, kind


def _seq_model(releases, facts):
    from maxent_privacy import MaxEntModel

    model = MaxEntModel(releases)
    for i, (value, cond, p) in enumerate(facts):
        model.add(model.P(value, **cond) == p, name=f"fact{i}")
    return model


def plain_cvxpy(model, cap: float):
    """The independent reference: one cvxpy problem over the invariant matrix and the
    facts' rows, ``maximize sum entr(x) + x . log n`` (class-size base measure), Clarabel
    with ``time_limit=cap``. Returns (x, status)."""
    import cvxpy as cp

    A, b, _ = model.invariant_matrix(drop_redundant=False)
    n = model.cells["n"].to_numpy(float)
    x = cp.Variable(model.n_cells, nonneg=True)
    cons = [A @ x == b]
    for f in model.facts:
        cons.append(f.A @ x == f.b if f.sense == "==" else f.A @ x <= f.b)
    problem = cp.Problem(cp.Maximize(cp.sum(cp.entr(x)) + np.log(n) @ x), cons)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            problem.solve(solver="CLARABEL", time_limit=cap)
        except cp.error.SolverError as err:
            return None, f"solver error: {str(err)[:60]}"
    return (None if x.value is None else np.asarray(x.value)), problem.status


def _seq_times(releases, facts, cap: float, repeat: int):
    """(plain s, x plain, status, ours s, result): plain once (build + solve), ours
    (build + solve) the best of ``repeat``."""
    t = time.perf_counter()
    x_plain, status = plain_cvxpy(_seq_model(releases, facts), cap)
    t_plain = time.perf_counter() - t
    t_ours, result = np.inf, None
    for _ in range(repeat):
        t = time.perf_counter()
        result = _seq_model(releases, facts).solve()
        t_ours = min(t_ours, time.perf_counter() - t)
    return t_plain, x_plain, status, t_ours, result


def sequence_row(seed: int, cap: float, repeat: int) -> dict:
    """One instance: checks the releases hold the truth, times plain and ours."""
    releases, facts, text, frames, sa, size, kind = sequence_instance(seed)
    model = _seq_model(releases, facts)
    assert "kind" not in model.cells or (model.cells["kind"] == "z").all()
    x_true = true_cells(model, frames, sa)
    A, b, _ = model.invariant_matrix(drop_redundant=False)
    assert np.abs(A @ x_true - b).max() < 1e-9, "the releases do not hold the truth"
    assert all(np.abs(f.A @ x_true - f.b).max() < 1e-9 for f in model.facts)
    t_plain, x_plain, status, t_ours, ours = _seq_times(releases, facts, cap, repeat)
    st = ours.solver_stats
    zeros = dict(st["forced_zeros"])
    n = model.cells["n"].to_numpy(float)
    done = x_plain is not None and status == "optimal"
    cut = t_plain >= cap
    diff = float(np.max(np.abs(ours.x - x_plain) / n)) if x_plain is not None else np.nan
    other = {k: v for k, v in zeros.items() if k not in ("dual certificate", "LP")}
    rules = st.get("presolve_zeros", {})
    return {
        "seed": seed,
        "kind": kind,
        "releases": len(releases),
        "l": size,
        "people": model.n_records,
        "facts": len(facts),
        "cells": model.n_cells,
        "plain s": t_plain,
        "ours s": t_ours,
        "ratio": t_plain / t_ours,
        "fixed_by_presolve": st["fixed_by_presolve"],
        "zeros: certificate": zeros.get("dual certificate", 0),
        "zeros: LP": zeros.get("LP", 0),
        "presolve zeros: rows": rules.get("rows", np.nan),
        "presolve zeros: flows": rules.get("flows", np.nan),
        "presolve zeros: support LP": rules.get("support LP", np.nan),
        "passes": st.get("passes", 1),
        "Newton steps": st["iterations"],
        "largest component": int(ours.components["cells"].max()),
        "setup s": st["setup_time"],
        "solve s": st["solve_time"],
        "max abs Δpost": diff,
        "note": "; ".join(
            ([] if done else [f"plain: {status}" + (" (cut at the cap)" if cut else "")])
            + ([f"other zeros {other}"] if other else [])
        ),
        "instance": text,
    }


def _seq_summary(table: pd.DataFrame) -> str:
    r = table["ratio"]
    low = table.loc[r < 20, "seed"].tolist()
    return (
        f"{len(table)} signature-keeping sequences (seeds {table['seed'].min()}-"
        f"{table['seed'].max()}): ratio plain/ours min {r.min():.1f}, median "
        f"{r.median():.1f}, max {r.max():.1f}; below 20x: {low or 'none'}; forced zeros by "
        f"LP on {int((table['zeros: LP'] > 0).sum())} instances ({table['zeros: LP'].sum()} "
        f"cells), by the dual certificate {table['zeros: certificate'].sum()}; by presolve's "
        f"support LP on {int((table['presolve zeros: support LP'] > 0).sum())} instances "
        f"({table['presolve zeros: support LP'].sum():.0f} cells); largest posterior "
        f"difference {table['max abs Δpost'].max():.1e}"
    )


def sequences_mode(args, argv) -> int:
    """``--sequences N``: N signature-keeping sequences (issue 24) against an independent
    plain cvxpy + Clarabel model, in this process; ``solvers-sequences.md``
    (``solvers-sequences-s<K>.md`` from seed K > 1), written whole or not at all."""
    import os

    from random_instances import markdown

    from maxent_privacy import Bucketized, MaxEntModel, datasets

    args.out.mkdir(parents=True, exist_ok=True)
    cap = args.cap or 120.0
    warm = Bucketized(
        datasets.du2008_figure1(), qi=["gender", "degree"], sa="disease", group="bucket"
    )
    MaxEntModel(warm).solve()
    plain_cvxpy(MaxEntModel(warm), cap)
    load = os.getloadavg()
    rows = []
    for seed in range(args.seed_start, args.seed_start + args.sequences):
        row = sequence_row(seed, cap, args.repeat)
        rows.append(row)
        print(
            f"seed {seed:3d}: plain {row['plain s']:6.2f} s, ours {row['ours s']:6.3f} s, "
            f"ratio {row['ratio']:6.1f}, Δpost {row['max abs Δpost']:.1e}, zeros cert "
            f"{row['zeros: certificate']} LP {row['zeros: LP']}, presolve "
            f"{row['fixed_by_presolve']} (zeros: rows {row['presolve zeros: rows']}, flows "
            f"{row['presolve zeros: flows']}, support LP {row['presolve zeros: support LP']}), "
            f"Newton {row['Newton steps']} {row['note']} "
            f"({row['instance']})",
            flush=True,
        )
    found = pd.DataFrame(rows)
    command = "python " + " ".join(
        ["benchmarks/solvers.py", *(argv if argv is not None else sys.argv[1:])]
    )
    info = machine_info()
    header = (
        f"# Signature-keeping sequences: plain cvxpy + Clarabel / ours\n\n`{command}`\n\n"
        f"{info['date']}, {info['platform']}, {info['nproc']} cores; load average "
        f"{load[0]:.2f} at start, {os.getloadavg()[0]:.2f} at the end; sources "
        f"{info['maxent_privacy_sources']['sha256']}. Plain: one run (Clarabel time limit "
        f"{cap:g} s); ours: the best of {args.repeat} runs. fixed_by_presolve counts every "
        f"cell fixed before the last Newton pass, the forced zeros found later included.\n\n"
    )
    name = (
        "solvers-sequences.md"
        if args.seed_start == 1
        else f"solvers-sequences-s{args.seed_start}.md"
    )
    write_text(args.out / name, markdown(found, header, _seq_summary))
    print(_seq_summary(found))
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argument_parser(__doc__, quick="", out=DEFAULT_OUT)
    parser.add_argument("--cap", type=float, default=None)
    parser.add_argument("--big-cap", type=float, default=None)
    parser.add_argument("--scs-cap", type=float, default=None)
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    parser.add_argument(
        "--random", type=int, default=None, metavar="N",
        help="N random re-publishing instances against plain cvxpy + Clarabel "
        "(benchmarks/random_instances.py); prints the min and median ratio",
    )  # fmt: skip
    parser.add_argument(
        "--sequences", type=int, default=None, metavar="N",
        help="N signature-keeping sequences (issue 24) against an independent plain "
        "cvxpy + Clarabel model (--cap: Clarabel's time limit, default 120 s)",
    )  # fmt: skip
    parser.add_argument(
        "--seed-start", type=int, default=1, help="first seed of --random / --sequences"
    )
    parser.add_argument(
        "--repeat", type=int, default=3, help="runs per timing (--random; ours in --sequences)"
    )
    return parser


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    if args.child:
        child(args.child)
        return 0
    if args.random:
        return random_mode(args, argv)
    if args.sequences:
        return sequences_mode(args, argv)
    return full_mode(args, argv)


def _instances(cfg, quick: bool) -> list[tuple[str, dict]]:
    instances = [("du-fig1", {"kind": "du-fig1"})]
    instances += [(f"du-adult-{k}", {"kind": "du-adult", "k": k}) for k in cfg["du_k"]]
    instances.append(
        (
            f"wang-2x{cfg['wang_n']}",
            {"kind": "wang", "n": cfg["wang_n"], "shared": cfg["wang_shared"]},
        )
    )
    instances.append(
        (
            "adult-10rel" if not quick else f"adult-{cfg['adult_releases']}rel",
            {"kind": "adult-rel", "releases": cfg["adult_releases"], "n": cfg.get("adult_n")},
        )
    )
    return instances


def _measure(cfg, instances, solvers, cvx, caps, tmp, t_start) -> list[dict]:
    """Every (instance, solver) run, then the synthetic populations (maxent only)."""
    cap, scs_cap, big_cap = caps
    rows: list[dict] = []
    for name, spec in instances:
        extra = ["CLARABEL+polish"] if "CLARABEL" in cvx and spec["kind"] != "adult-rel" else []
        if "CLARABEL" in cvx and name in ("du-adult-1000", f"wang-2x{cfg['wang_n']}"):
            extra.append("CLARABEL-plain")
        for solver in solvers + extra:
            row = run_capped(
                {**spec, "instance": name, "solver": solver},
                scs_cap if solver == "SCS" else cap,
                tmp,
            )
            rows.append(row)
            print(
                f"[{time.perf_counter() - t_start:6.0f} s] {name:16s} {solver:9s} "
                + (
                    row.get("error")
                    or f"build {row['build_time']:.3f} s, solve {row['solve_time']:.3f} s, "
                    f"res {row['residual']:.1e}, RSS {row['peak_rss_mb']:.0f} MB"
                ),
                flush=True,
            )
    last, last_n = None, 0
    for n in cfg["synth_sizes"]:
        name = f"synth-{n}"
        if last is not None and ("error" in last or total(last) * (n / last_n) > big_cap):
            rows.append({"instance": name, "solver": "maxent", "error": "skipped (cap)"})
            print(f"{name} skipped (cap)", flush=True)
            continue
        spec = {"kind": "synth", "n": n, "releases": cfg["synth_releases"]}
        row = run_capped({**spec, "instance": name, "solver": "maxent"}, big_cap, tmp)
        rows.append(row)
        last, last_n = row, n
        print(
            f"[{time.perf_counter() - t_start:6.0f} s] {name:16s} maxent    "
            + (
                row.get("error")
                or f"build {row['build_time']:.2f} s, solve {row['solve_time']:.2f} s, "
                f"res {row['residual']:.1e}, RSS {row['peak_rss_mb']:.0f} MB"
            ),
            flush=True,
        )
    return rows


def full_mode(args, argv) -> int:
    """The full (or ``--quick``) comparison: solvers.md, solvers.json, solvers.png."""
    from maxent_privacy.solve import exp_cone_solvers

    cfg = QUICK if args.quick else FULL
    cap = args.cap or (30.0 if args.quick else 120.0)
    big_cap = args.big_cap or (60.0 if args.quick else 300.0)
    scs_cap = args.scs_cap or min(cap, 30.0)
    cvx = exp_cone_solvers()
    solvers = ["maxent"] + [s for s in ("CLARABEL", "ECOS", "MOSEK", "SCS") if s in cvx]
    info = machine_info()
    command = "python " + " ".join(
        ["benchmarks/solvers.py", *(argv if argv is not None else sys.argv[1:])]
    )
    t_start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmpdir:
        caps = (cap, scs_cap, big_cap)
        instances = _instances(cfg, args.quick)
        rows = _measure(cfg, instances, solvers, cvx, caps, Path(tmpdir), t_start)
    delta_posteriors(rows)
    elapsed = time.perf_counter() - t_start
    _report(args, rows, cfg, info, command, elapsed, caps)
    return 0


def _report(args, rows, cfg, info, command, elapsed, caps) -> None:
    cap, scs_cap, big_cap = caps
    suffix = "-quick" if args.quick else ""
    args.out.mkdir(parents=True, exist_ok=True)
    png = args.out / f"solvers{suffix}.png"
    plot(rows, png)
    tgt = targets(rows, cfg)
    md = [
        "# Solver comparison" + (" (quick)" if args.quick else ""),
        "",
        f"Command: `{command}` (total {elapsed:.0f} s, per-run cap {cap:g} s, SCS {scs_cap:g} s, "
        f"synthetic {big_cap:g} s).",
        "",
        "Machine: "
        + f"{info['platform']}, {info['nproc']} cores, Python {info['python']}; "
        + ", ".join(f"{k} {v}" for k, v in info["versions"].items())
        + f"; sources {info['maxent_privacy_sources']['sha256']}, {info['date']}.",
        "",
        "Build = `MaxEntModel(...)` + `add`; solve = `model.solve(solver=...)` (cvxpy solvers with "
        "`polish=False`, except `CLARABEL+polish`: the package default); peak RSS = the child "
        "process's `ru_maxrss` (in brackets: after loading "
        "data and making the releases, before the build). residual = our certificate's primal "
        "residual; max abs Δ post = largest |posterior − reference posterior|, the reference "
        "being the finished run with the smallest residual.",
        "",
        "Package sources per run (sha256 prefix of maxent_privacy/*.py, read by each child): "
        + ", ".join(sorted({r.get("sources", "?") for r in rows if "sources" in r}))
        + ".",
        "",
        table(rows),
        "",
        "## Targets",
        "",
        "| target | verdict | measured |",
        "|---|---|---|",
        *[f"| {a} | {b} | {c} |" for a, b, c in tgt],
        "",
        f"![time vs K and records](solvers{suffix}.png)",
        "",
    ]
    write_text(args.out / f"solvers{suffix}.md", "\n".join(md))
    clean = [{k: v for k, v in r.items() if k not in ("posterior", "traceback")} for r in rows]
    for r, c in zip(rows, clean, strict=True):
        if "traceback" in r:
            c["traceback"] = r["traceback"][-2000:]
    write_text(
        args.out / f"solvers{suffix}.json",
        json.dumps(
            jsonable({"machine": info, "command": command, "rows": clean, "targets": tgt}), indent=1
        ),
    )
    print(table(rows))
    for a, b, c in tgt:
        print(f"{a}: {b} -- {c}")


if __name__ == "__main__":
    sys.exit(main())
