"""Results written by the workers: a folder of Parquet parts, made under a temporary name
and renamed when complete.

:class:`ResultFolder` makes ``.<name>.<random>.tmp`` next to the target; workers write
their parts into it with :func:`write_part` (each part itself under a temporary name,
renamed: a task run twice after a worker was lost rewrites the same part whole);
:meth:`ResultFolder.commit` checks that every expected part is there, writes the
certificate and the marker of a results folder of ours (:data:`MARKER`), and renames the
folder over the target (an existing folder is moved aside first and removed after the
rename). Nothing of the user's is replaced: a target that is, contains or is inside an
input is refused (:func:`check_out_folder`), and so is an existing folder without our
marker (one the package did not write) unless ``overwrite`` (an empty one is taken).
Until then the target is untouched; on failure :meth:`ResultFolder.discard` removes the
temporary folder. On a real cluster the folder
must be on a file system every worker and the client see (NFS, Lustre, a mounted bucket).

>>> import tempfile, pathlib, pandas as pd
>>> target = pathlib.Path(tempfile.mkdtemp()) / "answer"
>>> folder = ResultFolder(target)
>>> write_part(folder.temp / "posterior", "part-00000", pd.DataFrame({"person": [1]}))
>>> folder.commit({"posterior": 1}, {"ok": True})
>>> sorted(p.name for p in target.iterdir())
['.maxent_privacy_results', 'certificate.json', 'posterior']
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import uuid
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import OutputError, SameFileError
from ..files import write_frame, write_text
from ..numerics import entropy_terms

__all__ = [
    "MARKER",
    "ForeignFolder",
    "ResultFolder",
    "check_out_folder",
    "risk_rows",
    "sweep_discarded",
    "write_part",
]

#: the file that makes a folder a results folder of ours (replaceable by the next run)
MARKER = ".maxent_privacy_results"


class ForeignFolder(SameFileError):
    """The results folder exists and was not written by the package (no marker): it is
    not replaced unless ``overwrite`` (``--overwrite``)."""


def _inputs(inputs) -> list[Path]:
    """Every existing path an input names (a glob: each file it matches)."""
    out = []
    for item in inputs or ():
        text = os.fspath(item)
        matched = glob.glob(text) if glob.has_magic(text) else [text]
        out += [Path(m) for m in matched if os.path.exists(m)]
    return out


def check_out_folder(target, inputs=(), overwrite: bool = False) -> None:
    """Refuse ``target`` as a results folder, before anything is written, when it is,
    contains or is inside one of ``inputs`` (a :class:`~maxent_privacy.errors.SameFileError`
    naming both paths), or when it exists, is not empty and has no :data:`MARKER` (a
    :class:`ForeignFolder`, unless ``overwrite``)."""
    target = Path(target)
    where = target.resolve()
    for path in _inputs(inputs):
        got = path.resolve()
        how = (
            "is" if got == where
            else "is inside" if got in where.parents
            else "contains" if where in got.parents
            else None
        )  # fmt: skip
        if how:
            raise SameFileError(
                f"the results folder {target} {how} the input {path}: an output never "
                "replaces or holds an input; give another folder"
            )
    if target.is_dir() and not (target / MARKER).is_file() and not overwrite:
        if any(target.iterdir()):
            raise ForeignFolder(
                f"the results folder {target} exists and was not written by maxent-privacy "
                "(its files would be deleted); give a new folder, or --overwrite "
                "(overwrite=True) to replace it"
            )


#: a probability within this of the largest counts as tied with it
TIED = 1e-9


def write_part(folder, name: str, frame: pd.DataFrame) -> None:
    """``frame`` as ``folder/<name>.parquet``, written under a temporary name (on a
    worker). ``folder`` is a subfolder of a results folder under construction, which must
    still be there: a task still running after the solve was stopped (Ctrl-C, an error)
    and its folder discarded writes nothing (an ``OutputError``) instead of making the
    folder again."""
    folder = Path(folder)
    try:
        folder.mkdir(exist_ok=True)
    except FileNotFoundError:
        raise OutputError(
            f"cannot write part {name}: {folder.parent} is gone (the solve was stopped)"
        ) from None
    write_frame(folder / f"{name}.parquet", frame, index=False)


class ResultFolder:
    """A results folder under construction (see the module)."""

    def __init__(self, target, inputs=(), overwrite: bool = False):
        self.target = Path(target)
        check_out_folder(self.target, inputs, overwrite)
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
        write_text(self.temp / MARKER, "a results folder of maxent-privacy distributed\n")
        old = None
        if self.target.exists():
            old = self.target.parent / f".{self.target.name}.{uuid.uuid4().hex}.old"
            os.replace(self.target, old)
        os.replace(self.temp, self.target)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)

    def discard(self) -> None:
        """Remove the folder under construction; :func:`sweep_discarded` removes it again
        once the workers are stopped (a part they were writing meanwhile)."""
        shutil.rmtree(self.temp, ignore_errors=True)
        _DISCARDED.add(self.temp)


#: folders under construction discarded by this process
_DISCARDED: set = set()


def sweep_discarded() -> None:
    """Remove again every folder under construction this process discarded: call it
    once the workers that wrote into them are stopped (the command line does, after it
    closes its cluster)."""
    while _DISCARDED:
        shutil.rmtree(_DISCARDED.pop(), ignore_errors=True)


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
