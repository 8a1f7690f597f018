"""Infeasible knowledge found in seconds (issue 21, item 3).

A synthetic hospital of N patients (age 18-90, a five-digit zip code, sex, diagnosis;
dementia is mostly a disease of the old, but about 1 % of the patients aged 18-29 have
it) is published twice, k-anonymized (k = 5) without person ids:

* **ARX style**: local recoding over a generalization hierarchy. A record keeps the finest
  level whose equivalence class still holds k records: age in five-year bands and three
  zip digits (``[20, 25[``, ``021**``), else ten-year bands and two digits (``[20, 30[``,
  ``02***``), else twenty-year bands and one digit; what is left is suppressed (every QI
  ``*``). Neighbouring levels overlap, so a patient fits several groups.
* **sdcMicro style**: global recoding of age into decades (``(17,29]``, ``(29,39]``, ...)
  and of the zip code into three digits (``021**``), then local suppression: in a class
  of fewer than k records the age is suppressed (``*``), then the zip code, then the sex
  (``importance`` ranks the zip code above the age).

The model takes the patients' table as the population (exact age, zip and sex of every
patient) and one fact, ``P(diagnosis = "Dementia" | age in 18..29) = 0``, which the data
contradict. The script times ``model.solve()`` until it raises ``InfeasibleKnowledge``
(the conflict named and, time allowing, how far the fact must move), once with the
package as it is and, with ``--before DIR``, once with the package found in ``DIR``
(``git worktree add DIR <commit>``): each run is a child process with ``PYTHONPATH``
set, killed at ``--cap`` seconds::

    python benchmarks/infeasible.py --before /tmp/i21_before --before-n 2000 4000 12000
    python benchmarks/infeasible.py --quick     # 2,000 patients, this checkout, no file

(the first writes ``benchmarks/results/infeasible.md``). Before issue 21 the ARX release
took 67 s at 2,000 patients and 407 s at 12,000 (sdcMicro: 14 s and 241 s), nearly all of
it in the explanation's LPs, in HiGHS's search for dependent equations; 4 s after.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

OUT = Path(__file__).resolve().parent / "results" / "infeasible.md"
ROOT = Path(__file__).resolve().parent.parent
DIAGNOSES = (
    "Flu", "Asthma", "Diabetes", "Hypertension", "Cancer", "Fracture", "Depression", "Dementia",
)  # fmt: skip
#: three-digit zip prefixes (six areas of ten), drawn with Zipf-like weights: a few large
#: towns, many small ones
PREFIXES = tuple(f"{head}{d}" for head in ("02", "10", "14", "33", "60", "90") for d in range(10))
QI = ["age", "zip", "sex"]
#: ARX levels: (width of the age bands, zip digits kept)
ARX_LEVELS = ((5, 3), (10, 2), (20, 1))
#: sdcMicro's age breaks (intervals open on the left: (17,29] holds 18..29)
SDC_BREAKS = (17, 29, 39, 49, 59, 69, 79, 90)
#: sdcMicro's local suppression: the key variable suppressed first, then the next ones
SDC_SUPPRESSED = ("age", "zip", "sex")
FACT = "no dementia aged 18-29"


def hospital(n: int, seed: int = 0) -> pd.DataFrame:
    """``n`` patients: pid, age, zip (text), sex, diagnosis."""
    rng = np.random.default_rng(seed)
    age = rng.integers(18, 91, n)
    weight = 1.0 / np.arange(1, len(PREFIXES) + 1)
    prefix = rng.choice(PREFIXES, n, p=rng.permutation(weight / weight.sum()))
    zips = [f"{p}{d:02d}" for p, d in zip(prefix, rng.integers(0, 100, n), strict=True)]
    p_dementia = np.where(age < 30, 0.01, np.where(age < 65, 0.02, 0.25))
    other = rng.choice(DIAGNOSES[:-1], n)
    diagnosis = np.where(rng.random(n) < p_dementia, "Dementia", other)
    pid = [f"p{i:05d}" for i in range(n)]
    sex = rng.choice(["F", "M"], n)
    return pd.DataFrame({"pid": pid, "age": age, "zip": zips, "sex": sex, "diagnosis": diagnosis})


def _key(cells: pd.DataFrame) -> pd.Series:
    return cells[QI].astype(str).agg("|".join, axis=1)


def _published(table: pd.DataFrame, cells: pd.DataFrame, seed: int) -> pd.DataFrame:
    """The release's rows: the cells, the diagnosis, one group per equivalence class,
    rows shuffled."""
    out = cells[QI].assign(diagnosis=table["diagnosis"].to_numpy())
    out["group"] = pd.factorize(_key(out))[0] + 1
    return out.sample(frac=1, random_state=seed).reset_index(drop=True)


def arx_frame(table: pd.DataFrame, k: int = 5) -> pd.DataFrame:
    """ARX-style local recoding (see the module docstring)."""
    cells = pd.DataFrame("*", index=table.index, columns=QI)
    left = np.ones(len(table), dtype=bool)
    for width, digits in ARX_LEVELS:
        lo = (table["age"] // width) * width
        level = pd.DataFrame(
            {
                "age": [f"[{a}, {a + width}[" for a in lo],
                "zip": [z[:digits] + "*" * (5 - digits) for z in table["zip"]],
                "sex": table["sex"].to_numpy(),
            },
            index=table.index,
        )
        key = _key(level).where(left)
        ok = left & (key.map(key.value_counts()) >= k).to_numpy()
        cells.loc[ok] = level.loc[ok]
        left &= ~ok
    return _published(table, cells, seed=1)


def sdc_frame(table: pd.DataFrame, k: int = 5) -> pd.DataFrame:
    """sdcMicro-style global recoding and local suppression (see the module docstring)."""
    edges = np.asarray(SDC_BREAKS)
    pos = np.searchsorted(edges, table["age"].to_numpy(), side="left")
    cells = pd.DataFrame(
        {
            "age": [f"({edges[i - 1]},{edges[i]}]" for i in pos],
            "zip": [z[:3] + "**" for z in table["zip"]],
            "sex": table["sex"].to_numpy(),
        },
        index=table.index,
    )
    for col in SDC_SUPPRESSED:
        key = _key(cells)
        small = (key.map(key.value_counts()) < k).to_numpy()
        cells.loc[small, col] = "*"
    return _published(table, cells, seed=2)


FRAMES = {"ARX": arx_frame, "sdcMicro": sdc_frame}


def child(style: str, n: int) -> dict:
    """Build the model of one release and time its solve (run in a child process)."""
    from maxent_privacy import Generalized, MaxEntModel
    from maxent_privacy.errors import InfeasibleKnowledge
    from maxent_privacy.releases.ranges import between

    table = hospital(n)
    frame = FRAMES[style](table)
    release = Generalized(frame, qi=QI, sa="diagnosis", group="group")
    population = table.set_index("pid")[QI]
    t0 = time.perf_counter()
    model = MaxEntModel(release, populations=[population])
    model.add(model.P("Dementia", age=between(18, 29)) == 0, name=FACT)
    build = time.perf_counter() - t0
    t0 = time.perf_counter()
    try:
        model.solve()
        outcome, conflicts = "solved (no error)", None
    except InfeasibleKnowledge as err:
        outcome, conflicts = str(err), err.conflicts
    solve = time.perf_counter() - t0
    named = conflicts is not None and FACT in set(conflicts.get("fact", []))
    move = None
    if named and "move" in conflicts:
        move = float(conflicts.set_index("fact").loc[FACT, "move"])
    return {
        "groups": int(frame["group"].nunique()),
        "suppressed": int((frame[QI] == "*").all(axis=1).sum()),
        "cells": int(model.n_cells),
        "build": build,
        "solve": solve,
        "named": bool(named),
        "move": move,
        "message": outcome,
    }


def run(style: str, n: int, path: Path | None, cap: float) -> dict:
    """One child run with the package of ``path`` (None: this checkout), killed at
    ``cap`` seconds."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(path or ROOT)
    cmd = [sys.executable, __file__, "--child", style, "--n", str(n)]
    t0 = time.perf_counter()
    try:
        out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=cap)
    except subprocess.TimeoutExpired:
        return {"error": f"killed at the cap ({cap:g} s)", "wall": time.perf_counter() - t0}
    if out.returncode != 0:
        tail = (out.stderr.strip().splitlines() or ["?"])[-1]
        return {"error": tail[:120], "wall": time.perf_counter() - t0}
    return json.loads(out.stdout.strip().splitlines()[-1])


def _line(style: str, n: int, code: str, r: dict) -> str:
    if "error" in r:
        return f"| {style} | {n:,} | {code} | - | - | - | - | {r['wall']:.1f} | {r['error']} |"
    move = "-" if r["move"] is None or np.isnan(r["move"]) else f"{r['move']:.4f}"
    msg = r["message"].replace("|", "/")
    return (
        f"| {style} | {n:,} | {code} | {r['groups']:,} ({r['suppressed']:,} suppressed) | "
        f"{r['cells']:,} | {r['build']:.2f} | {'yes' if r['named'] else 'no'}, move {move} | "
        f"**{r['solve']:.2f}** | {msg} |"
    )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=12_000, help="patients (default 12,000)")
    parser.add_argument("--before", type=Path, default=None, help="the package before the fix")
    parser.add_argument(
        "--before-n", type=int, nargs="+", default=None,
        help="patients for --before (default: --n); this checkout runs these sizes too",
    )  # fmt: skip
    parser.add_argument("--cap", type=float, default=900.0, help="seconds per run")
    parser.add_argument("--quick", action="store_true", help="2,000 patients, print only")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child, args.n)))
        return 0
    n = 2_000 if args.quick else args.n
    before = set(args.before_n or [n]) if args.before is not None else set()
    lines = []
    for style in FRAMES:
        for size in sorted(before | {n}):
            runs = [("before", args.before)] if size in before else []
            for code, path in runs + [("after", None)]:
                r = run(style, size, path, args.cap)
                lines.append(_line(style, size, code, r))
                print(lines[-1], flush=True)
    if not args.quick:
        write(lines, argv if argv is not None else sys.argv[1:])
    return 0


def write(lines: list[str], argv: list[str]) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _common import machine_info

    from maxent_privacy.files import write_text

    info = machine_info()
    head = [
        "# Infeasible knowledge: time to `InfeasibleKnowledge`",
        "",
        f"`python benchmarks/infeasible.py {' '.join(argv)}`".replace(" `", "`"),
        "",
        f"{info['date']}, {info['platform']}, {info['nproc']} cores, load average "
        f"{info['loadavg_at_start'][0]:.2f} at start (other jobs shared the cores)",
        "",
        "A synthetic hospital (age, zip, sex, diagnosis; some patients aged 18-29 have "
        "dementia), k-anonymized (k = 5) ARX-style and sdcMicro-style, published without "
        "ids; the model has the patients as its population and the fact "
        f'`P("Dementia" | age in 18..29) == 0` ("{FACT}"). *before*: the package '
        "before issue 21; *after*: this checkout. *solve s*: `model.solve()` until "
        "`InfeasibleKnowledge`, the explanation included (which fact, how far it must "
        "move: *move*, in probability).",
        "",
        "| release | patients | code | groups | cells | build s | fact named, move | "
        "solve s | message |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    write_text(OUT, "\n".join(head + lines) + "\n")


if __name__ == "__main__":
    raise SystemExit(main())
