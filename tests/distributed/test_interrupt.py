"""Ctrl-C during ``maxent-privacy distributed`` is one line (issue 39, item 8).

Ctrl-C at a terminal reaches every process of the foreground group: the command and its
LocalCluster's worker processes. Each worker printed its ``KeyboardInterrupt`` traceback
and the scheduler (in the command's process) logged every shuffle and cancelled task
before ``error: interrupted``. Now the workers start with SIGINT ignored (the command
stops them itself) and Dask's loggers are silenced while the cluster runs; the cleanup
is as before: exit 130 and no results folder, temporary or final.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from maxent_privacy.cli.distributed import quiet_dask
from maxent_privacy.distributed.output import ResultFolder, sweep_discarded, write_part
from maxent_privacy.distributed.synthetic import QI, SA, write_synthetic
from maxent_privacy.errors import OutputError

pytestmark = pytest.mark.heavy

COMMAND = [
    sys.executable,
    "-c",
    "import sys; from maxent_privacy.cli import main; sys.exit(main())",
]


def _group_alive(pgid: int) -> list[int]:
    """Processes of group ``pgid`` that are not zombies (Linux /proc)."""
    alive = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if int(fields[2]) == pgid and fields[0] != "Z":
            alive.append(int(entry.name))
    return alive


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="process groups via /proc")
def test_ctrl_c_while_solving_is_one_line_and_leaves_nothing(tmp_path):
    paths = write_synthetic(tmp_path / "in", 4000, releases=2, regions=2, chunk=2000, seed=1)
    out = tmp_path / "ans"
    args = [*map(str, paths), "--qi", *QI, "--sa", SA, "--group", "group", "--person", "pid",
            "--out", str(out), "--workers", "2", "--max-worker-cells", "0"]  # fmt: skip
    # its own session: the SIGINT goes to the command and its workers, as Ctrl-C does
    proc = subprocess.Popen(
        [*COMMAND, "distributed", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    start = time.monotonic()
    try:
        while not list(tmp_path.glob(".ans.*.tmp")):  # the solve has started
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() - start < 60, "the solve did not start"
            time.sleep(0.05)
        time.sleep(0.5)  # Newton-CG on both components takes seconds: still solving
        os.killpg(proc.pid, signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, stderr
    assert stderr == "error: interrupted\n"
    assert stdout == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in"]  # no folder, no .tmp
    deadline = time.monotonic() + 10
    while _group_alive(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _group_alive(proc.pid) == []  # the workers are gone too


def test_quiet_dask_restores_the_levels():
    import distributed  # noqa: F401 - its loggers as Dask configures them

    names = ["distributed", "distributed.scheduler", "tornado", "asyncio"]
    before = {n: logging.getLogger(n).level for n in names}
    with quiet_dask():
        for n in names:
            assert not logging.getLogger(n).isEnabledFor(logging.CRITICAL)
    assert {n: logging.getLogger(n).level for n in names} == before


def test_a_discarded_folder_is_not_made_again_by_a_late_part(tmp_path):
    folder = ResultFolder(tmp_path / "ans")
    write_part(folder.temp / "posterior", "part-0", pd.DataFrame({"person": [1]}))
    folder.discard()
    assert not folder.temp.exists()
    with pytest.raises(OutputError, match=r"^cannot write part part-1: .* is gone"):
        write_part(folder.temp / "risk", "part-1", pd.DataFrame({"person": [2]}))
    assert not folder.temp.exists()
    # a part already on its way when the folder went: swept once the workers stop
    (folder.temp / "risk").mkdir(parents=True)
    sweep_discarded()
    assert list(tmp_path.iterdir()) == []
