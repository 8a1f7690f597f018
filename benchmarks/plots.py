"""Plots and the command line at scale (issue 15): time and pixel size on Du Adult.

``result.plot()`` once took 17 s and made a 792 x 70,388 px image on 2,511 QI rows; the
target is under 2 s and under 2,000 px in each direction. The README tour's release
(Du Adult anatomized with l = 5, its two facts) is plotted every way, saved as PNG at
matplotlib's default dpi, and timed from the call to the saved file; ``maxent-privacy
--help`` and ``--version`` are timed as whole processes (target 0.3 s)::

    python benchmarks/plots.py      # writes benchmarks/results/plots.md
"""

from __future__ import annotations

import io
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import matplotlib  # noqa: E402
from _common import argument_parser, machine_info  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import maxent_privacy as mp  # noqa: E402
from maxent_privacy import anonymize, datasets  # noqa: E402
from maxent_privacy.files import write_text  # noqa: E402

OUT = Path(__file__).resolve().parent / "results" / "plots.md"
ROOT = Path(__file__).resolve().parents[1]


def tour_result():
    frame = datasets.du2008_adult()
    release = anonymize.anatomize(
        frame, datasets.ADULT_QI, "education", l=5, nonsensitive=["HS-grad", "Some-college"]
    )
    model = mp.MaxEntModel(release)
    model.add(model.P("Doctorate", sex="Female") == 0.01, name="doctorates")
    model.add(model.P("Masters", race="White") >= 0.05)
    return model.solve()


def timed_png(draw) -> tuple[float, tuple[int, int]]:
    """Seconds from the call to a saved PNG, and the PNG's (width, height) in pixels."""
    from PIL import Image

    t0 = time.perf_counter()
    ax = draw()
    with io.BytesIO() as fh:  # in memory, as a file would be written
        ax.figure.savefig(fh, format="png")
        seconds = time.perf_counter() - t0
        fh.seek(0)
        size = Image.open(fh).size
    plt.close(ax.figure)
    return seconds, size


def cli_seconds(args: list[str], repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "maxent_privacy.cli", *args],
            cwd=ROOT,
            check=True,
            capture_output=True,
        )
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main(argv=None) -> int:
    argument_parser(__doc__).parse_args(argv)
    result = tour_result()
    rows = [
        ("result.plot()", lambda: result.plot(), len(result.posterior())),
        ('result.plot(by="group")', lambda: result.plot(by="group"), None),
        ("result.plot(top=None)", lambda: result.plot(top=None), len(result.posterior())),
        ("mp.plot_risk(result)", lambda: mp.plot_risk(result), None),
    ]
    lines = [
        "# Plots and the command line at scale",
        "",
        "`python benchmarks/plots.py` on the README tour's release (Du Adult, anatomized with "
        "l = 5, two facts). Targets: a plot under 2 s and 2,000 px in each direction; "
        "`--help` under 0.3 s.",
        "",
        "| call | rows in the table | seconds (to a saved PNG) | pixels (w x h) |",
        "|---|---:|---:|---|",
    ]
    for name, draw, n in rows:
        timed_png(draw)  # warm: fonts, first-use imports
        seconds, (w, h) = timed_png(draw)
        shown = f"{n:,}" if n else ""
        lines.append(f"| `{name}` | {shown} | {seconds:.2f} | {w} x {h} |")
        print(lines[-1], flush=True)
    lines += ["", "| command | seconds (median of 5 processes) |", "|---|---:|"]
    for args in (["--help"], ["--version"], ["report", "--help"]):
        seconds = cli_seconds(args)
        lines.append(f"| `maxent-privacy {' '.join(args)}` | {seconds:.3f} |")
        print(lines[-1], flush=True)
    info = machine_info()
    lines += [
        "",
        f"Machine: {info['platform']}, {info['nproc']} cores, Python {info['python']}, "
        f"matplotlib {info['versions']['matplotlib']}, {info['date']}.",
    ]
    write_text(OUT, "\n".join(lines) + "\n")
    print(f"written to {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
