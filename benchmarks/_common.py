"""Shared helpers of the benchmark scripts: machine description and JSON output."""

from __future__ import annotations

import datetime as dt
import hashlib
import importlib.metadata
import math
import os
import platform
import sys
from pathlib import Path

import numpy as np

import maxent_privacy

DISTRIBUTIONS = ("cvxpy", "clarabel", "ecos", "scs", "numpy", "scipy", "pandas", "matplotlib")


def machine_info() -> dict:
    versions = {}
    for dist in DISTRIBUTIONS:
        try:
            versions[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            versions[dist] = "not installed"
    versions["maxent_privacy"] = maxent_privacy.__version__
    # the package is edited while benchmarks run: fingerprint the sources that ran
    digest = hashlib.sha256()
    src = sorted(Path(maxent_privacy.__file__).parent.rglob("*.py"))
    for path in src:
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    newest = max(path.stat().st_mtime for path in src)
    try:
        nproc = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        nproc = os.cpu_count()
    return {
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "processor": platform.processor(),
        "nproc": nproc,
        "cpu_count": os.cpu_count(),
        "python": sys.version.split()[0],
        "versions": versions,
        "maxent_privacy_sources": {
            "sha256": digest.hexdigest()[:16],
            "newest_mtime": dt.datetime.fromtimestamp(newest, dt.timezone.utc).isoformat(
                timespec="seconds"
            ),
        },
        "loadavg_at_start": list(os.getloadavg()),
    }


def jsonable(obj):
    if isinstance(obj, dict):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    if isinstance(obj, np.generic):
        return jsonable(obj.item())
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj
