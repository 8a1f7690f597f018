"""Headless Chromium for the report's browser tests (skipped where it is not installed;
``.ci/run`` installs it where the machine allows)."""

import shutil
import subprocess
from pathlib import Path

CHROMIUM = next(
    (p for p in ("/usr/bin/chromium", shutil.which("chromium"), shutil.which("chromium-browser"))
     if p and Path(p).exists()),
    None,
)  # fmt: skip


def chromium(page: Path, tmp_path: Path, *args: str) -> str:
    """Render ``page`` with headless Chromium (no network, a fresh profile); its stdout."""
    done = subprocess.run(
        [
            CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--no-first-run", f"--user-data-dir={tmp_path / 'profile'}", *args,
            page.resolve().as_uri(),
        ],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout
