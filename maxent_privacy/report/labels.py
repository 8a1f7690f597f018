"""Tick labels of a figure's rows that tell the rows apart, however many attributes a row
has.

A row of a posterior is a tuple of QI values (and a group): eight Adult attributes make
labels of 80 characters, and cutting each label at its end made rows that differ only in
the last attributes look identical. :func:`row_labels` leaves out the levels that are the
same on every row drawn (the axis title says what they are), shortens each remaining
value in proportion, and keeps the labels whole when shortening would make two of them
equal.

>>> rows = [(39, "State-gov", "Bachelors", "Never-married", "Adm-clerical", "White",
...          "Male", "United-States"),
...         (39, "State-gov", "Bachelors", "Never-married", "Adm-clerical", "White",
...          "Male", "Cuba")]
>>> labels, title = row_labels(rows, ["age", "workclass", "education", "marital",
...                                   "occupation", "race", "sex", "country"])
>>> labels
['United-States', 'Cuba']
>>> title  # doctest: +ELLIPSIS
'country (every row: age 39, workclass State-gov, education Bachelors, ...
"""

from __future__ import annotations

__all__ = ["MAX_CHARS", "row_labels"]

#: characters of a label (and of the axis title's list of common values) before shortening
MAX_CHARS = 40
_ELLIPSIS = "\u2026"


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(1, width - 1)] + _ELLIPSIS


def row_labels(items, names=None, limit: int = MAX_CHARS) -> tuple[list[str], str | None]:
    """``(labels, axis title or None)`` for the rows ``items`` (tuples or single values);
    ``names`` are the index's level names. Labels are distinct whenever the rows are."""
    items = list(items)
    if not items or not all(isinstance(i, tuple) for i in items):
        full = [str(i) for i in items]
        cut = [_cut(t, limit) for t in full]
        return (cut if len(set(cut)) == len(set(full)) else full), None
    width = len(items[0])
    names = [str(n) for n in (names or [None] * width)]
    varying = [k for k in range(width) if len({str(i[k]) for i in items}) > 1] or [width - 1]
    kept = [[str(i[k]) for k in varying] for i in items]
    full = [", ".join(parts) for parts in kept]
    title = None
    if len(varying) < width:
        common = ", ".join(
            f"{names[k]} {items[0][k]}" if names[k] != "None" else str(items[0][k])
            for k in range(width)
            if k not in varying
        )
        shown = ", ".join(names[k] for k in varying if names[k] != "None")
        title = f"{shown} (every row: {_cut(common, 2 * limit)})".strip()
    if all(len(t) <= limit for t in full):
        return full, title
    share = max(4, (limit - 2 * (len(varying) - 1)) // len(varying))
    cut = [", ".join(_cut(p, share) for p in parts) for parts in kept]
    if len(set(cut)) < len(set(full)):  # shortening would merge rows: keep them whole
        return full, title
    return cut, title
