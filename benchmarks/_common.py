"""Shared helpers of the benchmark scripts: machine description, their command line, the
tables they print and their JSON output.

A script imports them as ``from _common import ...``: its own folder is first on
``sys.path`` both when it runs as ``python benchmarks/NAME.py`` and as ``python -m
benchmarks NAME`` (``benchmarks/__main__.py``).
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import importlib.metadata
import math
import os
import platform
import resource
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

import numpy as np

DISTRIBUTIONS = ("cvxpy", "clarabel", "ecos", "scs", "numpy", "scipy", "pandas", "matplotlib")


def machine_info() -> dict:
    import maxent_privacy  # here: listing the benchmarks imports this module, not the package

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
        "cpu": _proc_field("/proc/cpuinfo", "model name") or platform.processor() or "?",
        "memory": _memory_text(),
        "git": _git_commit(),
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


def machine_lines(info: dict) -> list[str]:
    """A report's machine (from :func:`machine_info`) as Markdown bullets."""
    v, src = info["versions"], info["maxent_privacy_sources"]
    versions = ", ".join(f"{d} {v[d]}" for d in DISTRIBUTIONS if d in v)
    return [
        f"* date: {info['date']}",
        f"* platform: {info['platform']} ({info['machine']}); {info['cpu']}, {info['memory']}",
        f"* nproc: {info['nproc']} (cpu_count {info['cpu_count']})",
        f"* python {info['python']}; {versions}; maxent_privacy {v['maxent_privacy']} "
        f"(sources sha256 {src['sha256']}, newest file {src['newest_mtime']}; git {info['git']})",
    ]


def _proc_field(path: str, name: str) -> str | None:
    try:
        for line in Path(path).read_text().splitlines():
            if line.startswith(name):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def _memory_text() -> str:
    total = _proc_field("/proc/meminfo", "MemTotal")  # "24576000 kB"
    return f"{int(total.split()[0]) / 2**20:.1f} GiB" if total else "?"


def _git_commit() -> str:
    """This checkout's commit, and whether ``maxent_privacy/`` differs from it."""
    root = Path(__file__).resolve().parent.parent
    try:
        run = {"cwd": root, "capture_output": True, "text": True, "check": True}
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], **run).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "maxent_privacy"], **run).stdout
    except (OSError, subprocess.CalledProcessError):
        return "?"
    return commit + (" (maxent_privacy/ has uncommitted changes)" if dirty.strip() else "")


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


def summary(doc: str | None) -> str:
    """The first paragraph of a docstring on one line: the benchmark's description."""
    return " ".join((doc or "").strip().split("\n\n")[0].split())


def argument_parser(
    doc: str | None, *, quick: str | None = None, out: Path | None = None, out_help=None
) -> argparse.ArgumentParser:
    """The benchmark's parser, described by its docstring's first paragraph; with
    ``--quick`` (``quick``: its help, ``""`` for none) and ``--out`` (``out``: the default)
    where given."""
    parser = argparse.ArgumentParser(description=summary(doc))
    if quick is not None:
        parser.add_argument("--quick", action="store_true", help=quick or None)
    if out is not None:
        parser.add_argument("--out", type=Path, default=out, help=out_help)
    return parser


def peak_rss_gb() -> float:
    """This process's peak resident memory (``ru_maxrss``, KiB on Linux), in GiB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def short(text, limit: int = 120) -> str:
    """``text`` on one line, cut to ``limit`` characters (``...`` at the cut)."""
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def md_row(cells: Iterable) -> str:
    """One Markdown table row; a ``|`` inside a cell becomes ``/``."""
    return "| " + " | ".join(str(c).replace("|", "/") for c in cells) + " |"


def md_table(header: Iterable, rows: Iterable[Iterable]) -> str:
    """A Markdown table: the header, its rule, a row per item of ``rows``."""
    header = list(header)
    return "\n".join([md_row(header), "|" + "---|" * len(header), *map(md_row, rows)])


def certificate(result) -> dict:
    """The figures of ``result.certificate`` that the reports record."""
    cert = result.certificate
    keys = ("primal_residual", "data_residual", "knowledge_residual", "entropy", "dual_bound")
    return {**{k: getattr(cert, k) for k in keys}, "gap": cert.gap}
