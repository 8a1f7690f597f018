"""Execute the notebooks and save their outputs in place.

    python notebooks/run_all.py            # full mode: the committed outputs (minutes)
    python notebooks/run_all.py --fast     # fast mode, as the test suite runs them
    python notebooks/run_all.py 01 03      # only the notebooks whose names start so

Each notebook reads ``MAXENT_NOTEBOOK_MODE`` ("full" unless told "fast") in its first
cell and sizes its experiments accordingly.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from maxent_privacy.files import atomic_write, write_bytes

HERE = Path(__file__).resolve().parent


def run(path: Path, mode: str, timeout: int = 3600, save: bool = True) -> float:
    """Execute one notebook in ``mode``; write it back when ``save``. Returns seconds."""
    nb = nbformat.read(path, as_version=4)
    old = os.environ.get("MAXENT_NOTEBOOK_MODE")
    os.environ["MAXENT_NOTEBOOK_MODE"] = mode
    os.environ.setdefault("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    t0 = time.perf_counter()
    try:
        NotebookClient(
            nb, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": str(HERE)}}
        ).execute()
    finally:
        if old is None:
            os.environ.pop("MAXENT_NOTEBOOK_MODE", None)
        else:
            os.environ["MAXENT_NOTEBOOK_MODE"] = old
    nb.metadata["maxent_privacy"] = {"mode": mode}
    if save:
        save_notebook(nb, path)
        if mode == "full":
            save_figure(nb, HERE / "figures" / f"{path.stem}.png")
    return time.perf_counter() - t0


def save_notebook(nb, path: Path) -> None:
    """Write the notebook as nbformat does, whole or not at all (a failed write keeps the old
    file)."""
    with atomic_write(path, "w", encoding="utf-8") as fh:
        nbformat.write(nb, fh)


def save_figure(nb, target: Path) -> None:
    """The README's figure of a notebook: the image of its cell tagged ``readme-figure``
    (else its first image), written as a PNG."""
    import base64

    def images(cells):
        for c in cells:
            for o in c.get("outputs", []):
                if "image/png" in o.get("data", {}):
                    yield o["data"]["image/png"]

    code = [c for c in nb.cells if c.cell_type == "code"]
    tagged = [c for c in code if "readme-figure" in c.get("metadata", {}).get("tags", [])]
    png = next(images(tagged), None) or next(images(code), None)
    if png is not None:
        target.parent.mkdir(exist_ok=True)
        write_bytes(target, base64.b64decode(png))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="prefixes of the notebooks to run")
    parser.add_argument("--fast", action="store_true", help="fast mode (as in the tests)")
    args = parser.parse_args(argv)
    paths = sorted(HERE.glob("[0-9][0-9]_*.ipynb"))
    if args.names:
        paths = [p for p in paths if any(p.name.startswith(n) for n in args.names)]
    mode = "fast" if args.fast else "full"
    for p in paths:
        print(f"{p.name} ({mode}) ...", end=" ", flush=True)
        print(f"{run(p, mode):.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
