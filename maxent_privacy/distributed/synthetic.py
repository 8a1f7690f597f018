"""Synthetic pooled releases written as Parquet partitions (tests and benchmarks).

A population of ``n`` people, ids ``0 .. n-1``, in ``regions`` regions of consecutive
ids: QI ``region``, ``age``, ``sex``, sensitive ``disease`` (``n_values`` values, skewed:
weights 1, 1/2, 1/3...). Every attribute is a hash of the person's id, so any slice of
the population can be made alone, and each person has the same values in every release.
Release r keeps a share of the people (a hash again) and cuts each region into windows of
``window`` consecutive ids, shifted by ``r * window / releases``; a window's people,
in an order hashed per release, are cut into buckets of ``bucket`` (the rest joins
the last bucket of its window; Anatomy-style:
exact QI, a group id, the values). The shifted windows chain a region's people together:
each region is one connected component (``regions=1``: one component spanning everyone,
as pooled releases of one population usually are).

:func:`write_synthetic` writes each release in slices of about ``chunk`` people
(``release-<r>/part-<k>.parquet``; slice boundaries on the release's own windows; small
regions are put together in one file): the writer never holds more than a file.
:func:`pooled_frames` gives the same releases as pandas frames.

>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> paths = write_synthetic(folder, 2000, releases=2, regions=2, chunk=500)
>>> [p.name for p in paths], len(list(paths[0].glob("*.parquet")))
(['release-1', 'release-2'], 4)
>>> frames = pooled_frames(2000, releases=2, regions=2)
>>> written = pd.read_parquet(paths[1]).sort_values("pid").reset_index(drop=True)
>>> written.equals(frames[1].sort_values("pid").reset_index(drop=True))
True
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..files import write_frame

__all__ = ["QI", "SA", "pooled_frames", "write_synthetic"]

QI = ["region", "age", "sex"]
SA = "disease"


def _hash(ids: np.ndarray, stream: int) -> np.ndarray:
    """A uniform number in [0, 1) per id and stream (splitmix64)."""
    z = ids.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15) + np.uint64(
        stream * 0xD1B54A32D1B54A33 % 2**64
    )
    with np.errstate(over="ignore"):
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
    return (z >> np.uint64(11)).astype(np.float64) / float(2**53)


class _Population:
    def __init__(self, n, releases, regions, bucket, window, n_values, share, seed):
        self.n, self.R, self.regions = n, releases, regions
        self.bucket, self.window, self.share = bucket, max(window, bucket), share
        self.seed = seed * 1000
        weights = 1.0 / np.arange(1, n_values + 1)
        self.cdf = np.cumsum(weights / weights.sum())
        self.values = np.array([f"d{k}" for k in range(n_values)], dtype=object)
        self.starts = (np.arange(regions + 1) * n) // regions

    def _shift(self, r: int) -> int:
        return (r * self.window) // self.R

    def slices(self, r: int, chunk: int):
        """Id ranges ``[lo, hi)`` of release r's files: whole windows, about ``chunk``."""
        per = max(1, chunk // self.window) * self.window
        for g in range(self.regions):
            lo, hi = int(self.starts[g]), int(self.starts[g + 1])
            edge = lo - self._shift(r)  # window boundaries of release r in region g
            cut = edge + per
            start = lo
            while start < hi:
                while cut <= start:
                    cut += per
                yield start, min(cut, hi)
                start = min(cut, hi)

    def frame(self, r: int, lo: int, hi: int) -> pd.DataFrame:
        """Release r's rows of the people with ids in ``[lo, hi)`` (whole windows)."""
        ids = np.arange(lo, hi, dtype=np.int64)
        region = np.searchsorted(self.starts, ids, side="right") - 1
        keep = _hash(ids, self.seed + 10 + r) < self.share
        ids, region = ids[keep], region[keep]
        window = (ids - self.starts[region] + self._shift(r)) // self.window
        key = _hash(ids, self.seed + 20 + r)
        order = np.lexsort((key, window, region))
        ids, region, window = ids[order], region[order], window[order]
        wkey = region * 10_000_000 + window
        new = np.r_[True, wkey[1:] != wkey[:-1]] if len(wkey) else np.zeros(0, bool)
        starts = np.flatnonzero(new)
        sizes = np.diff(np.r_[starts, len(ids)])
        rank = np.arange(len(ids)) - np.repeat(starts, sizes)
        full = np.repeat(np.maximum(1, sizes // self.bucket), sizes)  # the rest: last bucket
        group = wkey * 64 + np.minimum(rank // self.bucket, full - 1)
        disease = self.values[np.searchsorted(self.cdf, _hash(ids, self.seed + 3), side="right")]
        out = pd.DataFrame(
            {
                "pid": ids,
                "region": region.astype(np.int64),
                "age": (18 + (_hash(ids, self.seed + 1) * 72).astype(np.int64)),
                "sex": (_hash(ids, self.seed + 2) * 2).astype(np.int64),
                SA: disease,
                "group": group.astype(np.int64),
            }
        )
        shuffle = np.argsort(_hash(ids, self.seed + 30 + r), kind="stable")
        return out.iloc[shuffle].reset_index(drop=True)


def pooled_frames(
    n: int,
    releases: int = 3,
    regions: int = 1,
    bucket: int = 40,
    window: int = 320,
    n_values: int = 5,
    share: float = 0.9,
    seed: int = 0,
) -> list[pd.DataFrame]:
    """The releases of :func:`write_synthetic` as pandas frames (small ``n`` only).

    >>> [len(f) > 0 for f in pooled_frames(200, releases=2)]
    [True, True]
    """
    pop = _Population(n, releases, regions, bucket, window, n_values, share, seed)
    return [
        pd.concat([pop.frame(r, lo, hi) for lo, hi in pop.slices(r, n)], ignore_index=True)
        for r in range(releases)
    ]


def write_synthetic(
    folder,
    n: int,
    releases: int = 3,
    regions: int = 1,
    bucket: int = 40,
    window: int = 320,
    n_values: int = 5,
    share: float = 0.9,
    chunk: int = 1_000_000,
    seed: int = 0,
) -> list[Path]:
    """Write the releases under ``folder`` (see the module); the release folders. Every
    file is written under a temporary name and renamed when complete."""
    folder = Path(folder)
    pop = _Population(n, releases, regions, bucket, window, n_values, share, seed)
    paths = [folder / f"release-{r + 1}" for r in range(releases)]
    for r, path in enumerate(paths):
        path.mkdir(parents=True, exist_ok=True)
        k, held, size = 0, [], 0
        for lo, hi in pop.slices(r, chunk):
            held.append(pop.frame(r, lo, hi))
            size += hi - lo
            if size >= chunk:
                _write(path, k, held)
                k, held, size = k + 1, [], 0
        if held:
            _write(path, k, held)
    return paths


def _write(path: Path, k: int, frames: list) -> None:
    """One file of slices (regions are never split between files)."""
    write_frame(path / f"part-{k:05d}.parquet", pd.concat(frames, ignore_index=True), index=False)
