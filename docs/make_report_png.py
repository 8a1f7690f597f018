"""Make ``docs/report.png``, the README's picture of a risk report.

The report is that of Du et al.'s Figure 1 with the names as person ids and the fact
P(Breast Cancer | male) = 0, at threshold 0.99 (the acceptance test of issue 15), rendered
by headless Chromium and saved as a 256-colour PNG::

    python docs/make_report_png.py      # needs chromium (apt-get install chromium)
"""

from __future__ import annotations

import io
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from PIL import Image

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from maxent_privacy import Bucketized, MaxEntModel, datasets  # noqa: E402
from maxent_privacy.files import write_bytes  # noqa: E402

OUT = ROOT / "docs" / "report.png"
WIDTH, HEIGHT = 1000, 1450  # CSS pixels: the summary, the table and the risk figure


def figure1_result():
    release = Bucketized(
        datasets.du2008_figure1(),
        qi=["gender", "degree"],
        sa="disease",
        group="bucket",
        person="name",
    )
    model = MaxEntModel(release)
    model.add(model.P("Breast Cancer", gender="male") == 0)
    return model.solve()


def main() -> None:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        sys.exit("chromium is not installed (apt-get install chromium)")
    with tempfile.TemporaryDirectory() as tmp:
        page, shot = Path(tmp) / "report.html", Path(tmp) / "shot.png"
        figure1_result().report(page, threshold=0.99)
        subprocess.run(
            [
                browser, "--headless", "--no-sandbox", "--disable-gpu",
                "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--no-first-run", f"--user-data-dir={tmp}/profile",
                "--hide-scrollbars", f"--window-size={WIDTH},{HEIGHT}",
                f"--screenshot={shot}", page.as_uri(),
            ],
            check=True, capture_output=True, timeout=120,
        )  # fmt: skip
        image = Image.open(shot).convert("RGB").quantize(colors=256, dither=Image.Dither.NONE)
        buf = io.BytesIO()
        image.save(buf, format="PNG", optimize=True)
    write_bytes(OUT, buf.getvalue())
    print(f"{OUT}: {image.size[0]} x {image.size[1]} px, {len(buf.getvalue()):,} bytes")


if __name__ == "__main__":
    main()
