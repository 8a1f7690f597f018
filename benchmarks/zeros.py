"""Forced zeros (issue 5): our exact methods against an LP over the whole model.

A cell is a *forced zero* when every answer that satisfies the data and the facts puts it
at 0. ``solve(solver="maxent")`` finds them by presolve rules (zero rows, single cells,
tight rows, rules added up per condition, the bucket-flow bound, max-flow + strongly
connected components per bucket), by the dual's recession certificate when Newton stalls,
and only then by an LP on the stalled batch. This script checks, on the papers' instances,
that the cells our answer puts at exactly 0 are the forced zeros an LP (HiGHS) finds over
the whole model, and times both::

    python benchmarks/zeros.py      # writes benchmarks/results/zeros.md
"""

from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import argument_parser, machine_info  # noqa: E402
from republish import qi_for, sample  # noqa: E402  (Wang's setting)

from maxent_privacy import MaxEntModel, anonymize, datasets  # noqa: E402
from maxent_privacy.files import write_text  # noqa: E402
from maxent_privacy.mondrian import mondrian  # noqa: E402
from maxent_privacy.rules import mine_rules  # noqa: E402
from maxent_privacy.solve import lp_forced_zeros  # noqa: E402

OUT = Path(__file__).resolve().parent / "results" / "zeros.md"


def lp_zeros(model) -> tuple[set, float]:
    """Every forced zero by LPs over all cells of the model (data rows and facts)."""
    t0 = time.perf_counter()
    A, b, _ = model.invariant_matrix(drop_redundant=False)
    rows, rhs, G, h = [A], [b], [], []
    cells = np.arange(model.n_cells)
    for f in model.facts:
        (rows if f.sense == "==" else G).append(f.A)
        (rhs if f.sense == "==" else h).append(f.b)
    found = lp_forced_zeros(
        sp.vstack(rows, format="csr"),
        np.concatenate(rhs),
        sp.vstack(G, format="csr") if G else None,
        np.concatenate(h) if h else None,
        cells,
    )
    return set(found.tolist()), time.perf_counter() - t0


def instances():
    qi, sa = list(datasets.ADULT_QI), datasets.ADULT_SA
    frame = datasets.du2008_adult()
    release = anonymize.anatomize(
        frame, qi, sa, l=5, seed=0, nonsensitive=["HS-grad", "Some-college"]
    )
    rules = mine_rules(frame, qi=qi, sa=sa, min_support=3)
    for k in (100, 1000, 5000):

        def du(k=k):
            m = MaxEntModel(release)
            m.add(rules.top(k // 2, k - k // 2))
            return m

        yield f"Du Adult, K = {k} rules", du
    adult = datasets.load_adult().reset_index(drop=True)
    adult["pid"] = np.arange(len(adult))
    q2 = qi_for("occupation")
    d1, d2 = sample(adult, 7200, 6000, seed=0)
    idx = np.random.default_rng(0).permutation(len(adult))

    def wang():
        rels = [
            anonymize.rebucketize(d, q2, "occupation", l=3, person="pid", seed=s)
            for s, d in ((1, d1), (2, d2))
        ]
        return MaxEntModel(rels)

    yield "Wang 2 x 7,200 (l = 3)", wang
    qb = [
        "age",
        "workclass",
        "education",
        "marital_status",
        "race",
        "sex",
        "native_country",
        "income",
    ]
    data = adult.iloc[idx[:15000]].reset_index(drop=True)
    data["pid"] = [f"p{i}" for i in range(len(data))]

    def byun():
        rels, pops = [], []
        for i in range(3):
            t = data.iloc[: 5000 * (i + 1)]
            rels.append(mondrian(t, qb, "occupation", k=10, c=0.5))
            pops.append(t[["pid", *qb]].set_index("pid"))
        return MaxEntModel(rels, populations=pops)

    yield "Mondrian (k = 10), 3 releases of 5k..15k", byun


def main(argv=None) -> int:
    argument_parser(__doc__).parse_args(argv)
    warnings.simplefilter("ignore")
    lines = [
        "# Forced zeros: our exact methods against an LP",
        "",
        "`python benchmarks/zeros.py`",
        "",
        "## Machine",
        "",
    ]
    info = machine_info()
    lines += [f"* {k}: {v}" for k, v in info.items() if k in ("date", "platform", "nproc")]
    lines += [
        "",
        "| instance | cells | forced zeros (LP) | ours: presolve / certificate / LP "
        "fallback | same set | ours: solve s | LP over the model s |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, make in instances():
        model = make()
        t0 = time.perf_counter()
        result = model.solve(solver="maxent")
        t_ours = time.perf_counter() - t0
        ours = set(np.flatnonzero(result.x == 0).tolist())
        lp, t_lp = lp_zeros(model)
        fz = result.solver_stats["forced_zeros"]
        by_presolve = len(lp) - fz["dual certificate"] - fz["LP"]
        lines.append(
            f"| {name} | {model.n_cells:,} | {len(lp):,} | {by_presolve:,} / "
            f"{fz['dual certificate']:,} / {fz['LP']:,} | {'yes' if ours == lp else 'NO'} | "
            f"{t_ours:.2f} | {t_lp:.2f} |"
        )
        print(lines[-1], flush=True)
    lines += [
        "",
        '*ours: solve s* is the whole `model.solve(solver="maxent")` (presolve, '
        "Newton, certificate); the LP column finds the forced zeros alone.",
    ]
    write_text(OUT, "\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
