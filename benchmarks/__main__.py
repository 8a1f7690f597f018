"""``python -m benchmarks``: list the benchmarks; ``python -m benchmarks NAME [ARGS...]``: run one.

Every ``benchmarks/NAME.py`` not starting with an underscore is a benchmark with a
``main``. ``python -m benchmarks NAME ARGS`` runs that file as ``python benchmarks/NAME.py
ARGS`` would: as ``__main__``, with ``sys.argv`` = [its path, ARGS...] and the benchmarks
folder first on ``sys.path`` (where its ``from _common import ...`` finds the shared
helpers), so that children it starts from ``__file__`` and Dask's pickling of its functions
behave the same both ways.
"""

from __future__ import annotations

import ast
import runpy
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def benchmarks() -> dict[str, Path]:
    """Every benchmark by name: the ``*.py`` files here not starting with ``_``."""
    return {p.stem: p for p in sorted(HERE.glob("*.py")) if not p.name.startswith("_")}


def summary(path: Path) -> str:
    """The first paragraph of the module's docstring, on one line (read, not imported)."""
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    return " ".join(doc.strip().split("\n\n")[0].split())


def listing() -> str:
    names = benchmarks()
    width = max(map(len, names))
    lines = ["usage: python -m benchmarks NAME [ARGS...]   (NAME --help: its options)", ""]
    lines += [f"  {name:<{width}}  {summary(path)}" for name, path in names.items()]
    lines += ["", "Latest tables and the commands that made them: benchmarks/RESULTS.md"]
    return "\n".join(lines)


def run(name: str, args: list[str]) -> int:
    """Run benchmark ``name`` with ``args`` as its own file would run; its exit status."""
    path = benchmarks()[name]
    sys.argv = [str(path), *args]
    sys.path[0:0] = [str(HERE)]  # the script's folder first, as for `python benchmarks/NAME.py`
    try:
        runpy.run_path(str(path), run_name="__main__")
    except SystemExit as stop:
        code = stop.code
        if code is None or isinstance(code, int):
            return code or 0
        print(code, file=sys.stderr)
        return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv or argv[0] in ("-h", "--help", "--list"):
        print(listing())
        return 0
    name, args = argv[0].removesuffix(".py"), argv[1:]
    if name not in benchmarks():
        print(f"no benchmark {name!r}\n\n{listing()}", file=sys.stderr)
        return 2
    return run(name, args)


if __name__ == "__main__":
    sys.exit(main())
