"""The ``maxent-privacy`` command.

``maxent-privacy demo`` prints Figure 1 of Du et al. (SIGMOD 2008): the bucketized table,
the maximum-entropy posterior without knowledge, then with P(Breast Cancer | male) = 0.

``maxent-privacy analyze release.csv --qi A B --sa S --group G [--knowledge facts.txt]
[--out posterior.csv|posterior.json]`` estimates P(S | QI) of a bucketized release in a CSV
file under the knowledge in a text file (see :mod:`maxent_privacy.parser`), prints the
solve's summary (certificate and the facts' duals) and writes the posterior.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pandas as pd

from . import datasets
from .data import Bucketized
from .errors import MaxEntError
from .model import MaxEntModel


def _show(frame: pd.DataFrame) -> str:
    with pd.option_context(
        "display.width", 120, "display.max_columns", 20, "display.float_format", "{:.4f}".format
    ):
        return frame.to_string()


def demo(out=sys.stdout) -> int:
    """Figure 1 of the Privacy-MaxEnt paper, end to end."""
    frame = datasets.du2008_figure1()
    release = Bucketized(frame, qi=["gender", "degree"], sa="disease", group="bucket")
    print("Figure 1(b) of Du, Teng and Zhu (SIGMOD 2008): the bucketized release", file=out)
    table = release.buckets()
    table["qi"] = table["qi"].map(lambda q: "; ".join(" ".join(t) for t in q))
    table["disease"] = table["disease"].map(lambda s: "{" + ", ".join(s) + "}")
    print(_show(table), file=out)

    model = MaxEntModel(release)
    result = model.solve()
    print(
        "\nP(disease | gender, degree) without background knowledge (Eq. (9) in every bucket):",
        file=out,
    )
    print(_show(result.posterior()), file=out)
    print(f"certificate: {result.certificate}", file=out)

    model.add(model.P("Breast Cancer", gender="male") == 0)
    result = model.solve()
    print("\nwith the knowledge P(Breast Cancer | male) = 0:", file=out)
    print(_show(result.posterior(by="group")), file=out)
    print(f"certificate: {result.certificate}", file=out)
    women = result.posterior(by="group")["Breast Cancer"]
    sure = women[women >= 1 - 1e-9]
    print(
        "\nthe women of buckets 1 and 2 have Breast Cancer with certainty: "
        + ", ".join(f"{g} {d} in bucket {b}" for g, d, b in sure.index),
        file=out,
    )
    return 0


_OUT_FORMATS = {".csv": "csv", ".json": "json"}


class _UsageError(MaxEntError, ValueError):
    """A command-line argument that argparse cannot check (file extension, ...)."""


def _posterior_records(table: pd.DataFrame) -> list[dict]:
    """Records orientation: the index columns, then one key per sensitive value."""
    keys = list(table.index.names)
    clash = [str(c) for c in table.columns if str(c) in keys]
    if clash:
        raise _UsageError(
            f"sensitive value {clash[0]!r} is also a column name; cannot write JSON records"
        )
    out = []
    for idx, row in zip(table.index, table.to_numpy(dtype=float), strict=True):
        idx = idx if isinstance(idx, tuple) else (idx,)
        record = {
            k: (v.item() if hasattr(v, "item") else v) for k, v in zip(keys, idx, strict=True)
        }
        record.update({str(s): float(p) for s, p in zip(table.columns, row, strict=True)})
        out.append(record)
    return out


def _write_posterior(table: pd.DataFrame, path: Path, fmt: str) -> None:
    if fmt == "json":
        text = json.dumps(_posterior_records(table), indent=1, ensure_ascii=False)
        path.write_text(text + "\n", encoding="utf-8")
    else:
        table.reset_index().to_csv(path, index=False)


def analyze(args, out=None, err=None) -> int:
    """The ``analyze`` command: read, build, apply knowledge, solve, report, write."""
    from .parser import apply_knowledge, load_knowledge

    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err
    try:
        fmt = None
        if args.out is not None:
            fmt = _OUT_FORMATS.get(Path(args.out).suffix.lower())
            if fmt is None:
                raise _UsageError(
                    f"--out {args.out!r}: give a .csv or .json file name (the format follows "
                    "the extension)"
                )
        statements = load_knowledge(args.knowledge) if args.knowledge else []
        frame = pd.read_csv(args.release, dtype=str)
        release = Bucketized(frame, qi=args.qi, sa=args.sa, group=args.group, person=args.person)
        model = MaxEntModel(release)
        names = apply_knowledge(model, statements)
        result = model.solve(solver=args.solver)
        table = result.posterior(by="group" if args.by == "group" else None)
        if args.out is not None:
            _write_posterior(table, Path(args.out), fmt)
    except (MaxEntError, OSError, ValueError) as exc:
        message = " ".join(str(exc).split()) or type(exc).__name__
        print(f"error: {message}", file=err)
        return 2
    print(
        f"{release.n_records} records, {release.n_groups} groups; "
        + (f"{len(names)} facts from {args.knowledge}" if args.knowledge else "no knowledge file"),
        file=out,
    )
    print(result.summary(), file=out)
    persons = getattr(model, "persons", [])
    if persons and hasattr(result, "person_posterior"):
        print("\nP(" + str(model.sa) + " | person):", file=out)
        print(_show(result.person_posterior()), file=out)
    if args.out is None:
        print(
            "\nposterior P(" + str(model.sa) + " | QI" + (", group" if args.by else "") + "):",
            file=out,
        )
        print(_show(table), file=out)
    else:
        print(f"posterior written to {args.out}", file=out)
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="maxent-privacy",
        description="What can an adversary infer from a published anonymized table?",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("demo", help="Figure 1 of Privacy-MaxEnt: release, posterior, knowledge")
    an = sub.add_parser(
        "analyze",
        help="posterior of a bucketized release (CSV) under knowledge from a text file",
        description="Estimate P(sensitive | QI) of a bucketized release by maximum entropy, "
        "under background knowledge written in a text file (one fact a line, e.g. "
        'P(disease = "Flu" | gender = "male") = 0.3).',
    )
    an.add_argument("release", help="CSV file, one row per record (values read as text)")
    an.add_argument(
        "--qi", nargs="+", required=True, metavar="COL", help="quasi-identifier columns"
    )
    an.add_argument("--sa", required=True, metavar="COL", help="sensitive column")
    an.add_argument("--group", required=True, metavar="COL", help="group (bucket) column")
    an.add_argument("--person", metavar="COL", help="pseudonym column (one id per row)")
    an.add_argument(
        "--knowledge", metavar="FILE", help="knowledge file (see maxent_privacy.parser)"
    )
    an.add_argument("--solver", metavar="NAME", help="cvxpy solver (default CLARABEL)")
    an.add_argument(
        "--out",
        metavar="FILE",
        help="write the posterior here: .csv or .json (records); default: print it",
    )
    an.add_argument(
        "--by",
        choices=["group"],
        help="'group': P(sensitive | QI, group) instead of P(sensitive | QI)",
    )
    args = parser.parse_args(argv)
    if args.command == "demo":
        return demo()
    if args.command == "analyze":
        return analyze(args)
    return 2  # pragma: no cover


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
