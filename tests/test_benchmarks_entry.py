"""The benchmarks' one entry point: ``python -m benchmarks [NAME [ARGS...]]``.

Nothing is measured here: the listing names every benchmark, each benchmark module has
a docstring (its description) and a ``main``, and a benchmark runs through the entry
point as it does from its own file.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = ROOT / "benchmarks"
NAMES = sorted(p.stem for p in BENCHMARKS.glob("*.py") if not p.name.startswith("_"))


def entry(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "benchmarks", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_there_are_benchmarks():
    assert len(NAMES) >= 20
    assert (BENCHMARKS / "__main__.py").exists() and (BENCHMARKS / "RESULTS.md").exists()


def test_the_listing_names_every_benchmark_with_its_description():
    done = entry()
    assert done.returncode == 0, done.stderr
    listed = {}
    for line in done.stdout.splitlines():
        if line.startswith("  ") and line.split():
            name, _, text = line.strip().partition(" ")
            listed[name] = text.strip()
    assert sorted(listed) == NAMES
    for name in NAMES:
        doc = ast.get_docstring(ast.parse((BENCHMARKS / f"{name}.py").read_text()))
        first = " ".join(doc.split("\n\n")[0].split())
        assert listed[name] == first, name


@pytest.mark.parametrize("name", NAMES)
def test_each_benchmark_has_a_docstring_and_a_main(name):
    tree = ast.parse((BENCHMARKS / f"{name}.py").read_text())
    assert (ast.get_docstring(tree) or "").strip(), f"{name}.py has no docstring"
    mains = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "main"]
    assert len(mains) == 1, f"{name}.py has no main()"
    params = mains[0].args
    assert [a.arg for a in params.args] == ["argv"], f"{name}.main takes argv"
    assert len(params.defaults) == 1, f"{name}.main's argv defaults to None"
    guards = [n for n in tree.body if isinstance(n, ast.If) and "__main__" in ast.unparse(n.test)]
    assert any("main()" in ast.unparse(n) for n in guards), f"{name}.py does not run main()"


def test_an_unknown_name_fails_and_lists_the_benchmarks():
    done = entry("no_such_benchmark")
    assert done.returncode == 2
    assert "no benchmark 'no_such_benchmark'" in done.stderr
    assert "zeros" in done.stderr


def test_a_benchmark_runs_through_the_entry_point_with_its_arguments():
    # its own parser sees the arguments and names the script as `python benchmarks/NAME.py`
    # does (make_adult_data: the one whose --help needs no numerical imports)
    done = entry("make_adult_data", "--help")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: make_adult_data.py")
    assert "--out" in done.stdout
