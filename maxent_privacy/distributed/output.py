"""Results written by the workers: a folder of Parquet parts, made under a temporary name
and renamed when complete.

:class:`ResultFolder` makes ``.<name>.<random>.tmp`` next to the target; workers write
their parts into it with :func:`write_part` (each part itself under a temporary name,
renamed: a task run twice after a worker was lost rewrites the same part whole);
:meth:`ResultFolder.commit` checks that every expected part is there, writes the
certificate, and renames the folder over the target (an existing folder is moved aside
first and removed after the rename). Until then the target is untouched; on failure
:meth:`ResultFolder.discard` removes the temporary folder. On a real cluster the folder
must be on a file system every worker and the client see (NFS, Lustre, a mounted bucket).

>>> import tempfile, pathlib, pandas as pd
>>> target = pathlib.Path(tempfile.mkdtemp()) / "answer"
>>> folder = ResultFolder(target)
>>> write_part(folder.temp / "posterior", "part-00000", pd.DataFrame({"person": [1]}))
>>> folder.commit({"posterior": 1}, {"ok": True})
>>> sorted(p.name for p in target.iterdir())
['certificate.json', 'posterior']
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import OutputError
from ..files import write_frame, write_text
from ..numerics import entropy_terms

__all__ = ["ResultFolder", "risk_rows", "write_part"]

#: a probability within this of the largest counts as tied with it
TIED = 1e-9


def write_part(folder, name: str, frame: pd.DataFrame) -> None:
    """``frame`` as ``folder/<name>.parquet``, written under a temporary name (on a
    worker)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    write_frame(folder / f"{name}.parquet", frame, index=False)


class ResultFolder:
    """A results folder under construction (see the module)."""

    def __init__(self, target):
        self.target = Path(target)
        if self.target.exists() and not self.target.is_dir():
            raise OutputError(f"cannot write {self.target}: it is a file, not a folder")
        parent = self.target.parent
        if not parent.is_dir():
            raise OutputError(f"cannot write {self.target}: folder {parent} does not exist")
        self.temp = parent / f".{self.target.name}.{uuid.uuid4().hex}.tmp"
        self.temp.mkdir()

    def missing(self, expected: dict) -> list[str]:
        """Expected parts (subfolder -> how many) that are not there."""
        out = []
        for sub, count in expected.items():
            have = len(list((self.temp / sub).glob("*.parquet"))) if count else 0
            if have != count:
                out.append(f"{sub}: {have} of {count} parts")
        return out

    def commit(self, expected: dict, certificate: dict) -> None:
        """Check the parts, write the certificate, rename the folder into place."""
        missing = self.missing(expected)
        if missing:
            self.discard()
            raise OutputError(
                f"cannot write {self.target}: parts are missing ({'; '.join(missing)}); "
                "nothing was written"
            )
        text = json.dumps(certificate, indent=1, default=float)
        write_text(self.temp / "certificate.json", text + "\n")
        old = None
        if self.target.exists():
            old = self.target.parent / f".{self.target.name}.{uuid.uuid4().hex}.old"
            os.replace(self.target, old)
        os.replace(self.temp, self.target)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)

    def discard(self) -> None:
        shutil.rmtree(self.temp, ignore_errors=True)


def risk_rows(post: pd.DataFrame, qi_frame: pd.DataFrame, values: list, threshold: float):
    """Risk rows of people (``post``: ``person`` and one column per value, ``str``):
    ``person``, QI, ``value`` (the likeliest), ``maxent`` (its posterior), ``tied``,
    ``entropy`` (bits), ``at_risk`` (``maxent`` rounded to 4 decimals >= threshold).

    >>> post = pd.DataFrame({"person": [7], "a": [0.75], "b": [0.25]})
    >>> risk_rows(post, pd.DataFrame({"age": [30]}), ["a", "b"], 0.5).values.tolist()
    [[7, 30, 'a', 0.75, False, 0.8112781244591328, True]]
    """
    p = post[[str(v) for v in values]].to_numpy(dtype=float)
    best = np.argmax(p, axis=1) if len(p) else np.zeros(0, dtype=int)
    top = p[np.arange(len(p)), best] if len(p) else np.zeros(0)
    tied = ((p >= top[:, None] - TIED).sum(axis=1) > 1) if len(p) else np.zeros(0, bool)
    out = qi_frame.reset_index(drop=True).copy()
    out.insert(0, "person", post["person"].to_numpy())
    out["value"] = pd.Series(values, dtype=object).take(best).to_numpy()
    out["maxent"] = top
    out["tied"] = tied
    out["entropy"] = entropy_terms(p, 1.0).sum(axis=1) / np.log(2.0) if len(p) else top
    out["at_risk"] = np.round(top, 4) >= threshold
    return out
