import io
import subprocess
import sys

from maxent_privacy.cli import demo, main


def test_demo_prints_figure1():
    out = io.StringIO()
    assert demo(out) == 0
    text = out.getvalue()
    assert "{Breast Cancer, Flu, Flu, Pneumonia}" in text
    assert "P(Breast Cancer | male) = 0" in text
    assert text.count("certificate: residual") == 2
    assert "female college in bucket 1, female junior in bucket 2" in text


def test_console_entry_point():
    assert main(["demo"]) == 0
    done = subprocess.run(
        [sys.executable, "-m", "maxent_privacy.cli", "demo"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "with certainty" in done.stdout
