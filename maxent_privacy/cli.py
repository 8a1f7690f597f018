"""The ``maxent-privacy`` command.

``maxent-privacy demo`` prints Figure 1 of Du et al. (SIGMOD 2008): the bucketized table,
the maximum-entropy posterior without knowledge, then with P(Breast Cancer | male) = 0.
"""

from __future__ import annotations

import argparse
import sys

import pandas as pd

from . import datasets
from .data import Bucketized
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


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="maxent-privacy",
        description="What can an adversary infer from a published anonymized table?",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("demo", help="Figure 1 of Privacy-MaxEnt: release, posterior, knowledge")
    args = parser.parse_args(argv)
    if args.command == "demo":
        return demo()
    return 2  # pragma: no cover


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
