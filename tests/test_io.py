"""Whole-or-nothing writing (``maxent_privacy.files``): every writer under a full disk.

The disk-full tests run the writer in a subprocess whose ``RLIMIT_FSIZE`` is set just
before the write (SIGXFSZ ignored, so the write fails with EFBIG instead of killing the
process), then check that the folder holds exactly what it held before and that an
existing output file kept its bytes and permissions.
"""

from __future__ import annotations

import errno
import importlib.util
import os
import pickle
import re
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import maxent_privacy
from maxent_privacy.errors import MaxEntError, OutputError
from maxent_privacy.files import (
    atomic_write,
    check_target,
    save_figure,
    write_bytes,
    write_frame,
    write_text,
)

ROOT = Path(maxent_privacy.__file__).resolve().parents[1]
HAS_PYARROW = importlib.util.find_spec("pyarrow") is not None
LIMIT = 4096  # bytes any one file may grow to in the child: every writer below writes more
OLD = b"the previous output\n"

PRELUDE = """\
import os, resource, signal, sys

def disk_full(limit):
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

"""

# name -> (setup, write): setup runs unlimited, write after disk_full(limit); TARGET is
# the output path (a str), and every writer writes well over LIMIT bytes.
WRITERS = {
    "atomic_write text": (
        "from maxent_privacy.files import atomic_write",
        "with atomic_write(TARGET) as fh:\n    fh.write('x' * 100_000)",
    ),
    "atomic_write binary (pickle, solvers.py)": (
        "import pickle\nfrom maxent_privacy.files import atomic_write\nobj = list(range(50_000))",
        "with atomic_write(TARGET, 'wb') as fh:\n    pickle.dump(obj, fh)",
    ),
    "write_text (benchmark tables .md/.json)": (
        "import json\nfrom maxent_privacy.files import write_text\n"
        "text = json.dumps({'rows': [{'x': i, 'y': 'é'} for i in range(5000)]}, indent=1)",
        "write_text(TARGET, text)",
    ),
    "write_bytes (make_adult_data.py)": (
        "from maxent_privacy.files import write_bytes\ndata = os.urandom(100_000)",
        "write_bytes(TARGET, data)",
    ),
    "write_frame csv": (
        "import pandas as pd\nfrom maxent_privacy.files import write_frame\n"
        "frame = pd.DataFrame({'a': range(20_000), 'b': ['Flu'] * 20_000})",
        "write_frame(TARGET, frame, index=False)",
    ),
    "save_figure png (benchmarks' plots)": (
        "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\n"
        "import numpy as np\nfrom maxent_privacy.files import save_figure\n"
        "fig, ax = plt.subplots()\nax.imshow(np.random.default_rng(0).random((300, 300)))",
        "save_figure(TARGET, fig, dpi=110)",
    ),
    "run_all.save_notebook": (
        "import importlib.util, nbformat\n"
        "spec = importlib.util.spec_from_file_location('run_all', ROOT + '/notebooks/run_all.py')\n"
        "run_all = importlib.util.module_from_spec(spec); spec.loader.exec_module(run_all)\n"
        "nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell('x = 1\\n' * 20_000)])",
        "run_all.save_notebook(nb, TARGET)",
    ),
    "run_all.save_figure (README figure)": (
        "import base64, importlib.util, nbformat\n"
        "spec = importlib.util.spec_from_file_location('run_all', ROOT + '/notebooks/run_all.py')\n"
        "run_all = importlib.util.module_from_spec(spec); spec.loader.exec_module(run_all)\n"
        "png = base64.b64encode(b'\\x89PNG' + os.urandom(100_000)).decode()\n"
        "out = nbformat.v4.new_output('display_data', data={'image/png': png})\n"
        "nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell('plot()', outputs=[out])])",
        "run_all.save_figure(nb, __import__('pathlib').Path(TARGET))",
    ),
}
SUFFIX = {
    "write_frame csv": ".csv",
    "save_figure png (benchmarks' plots)": ".png",
    "run_all.save_notebook": ".ipynb",
    "run_all.save_figure (README figure)": ".png",
}
if HAS_PYARROW:  # pragma: no cover - pyarrow is optional
    WRITERS["write_frame parquet"] = (
        "import pandas as pd\nfrom maxent_privacy.files import write_frame\n"
        "frame = pd.DataFrame({'a': range(50_000)})",
        "write_frame(TARGET, frame)",
    )
    SUFFIX["write_frame parquet"] = ".parquet"


def run_writer(name: str, target: Path, limit: int | None) -> subprocess.CompletedProcess:
    setup, write = WRITERS[name]
    code = (
        PRELUDE
        + f"ROOT = {str(ROOT)!r}\nTARGET = {str(target)!r}\n"
        + setup
        + "\n"
        + (f"disk_full({limit})\n" if limit is not None else "")
        + "try:\n"
        + textwrap.indent(write, "    ")
        + "\nexcept Exception as exc:\n"
        + "    print(f'{type(exc).__name__}: {exc}', file=sys.stderr)\n"
        + "    print(isinstance(exc, OSError), getattr(exc, 'errno', None), file=sys.stderr)\n"
        + "    sys.exit(3)\n"
    )
    env = dict(os.environ, MPLBACKEND="Agg")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=target.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def listing(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


@pytest.mark.parametrize("name", list(WRITERS))
@pytest.mark.parametrize("existing", [True, False], ids=["over an old file", "new file"])
def test_disk_full_leaves_nothing_and_keeps_the_old_file(tmp_path, name, existing):
    folder = tmp_path / "out"
    folder.mkdir()
    target = folder / ("result" + SUFFIX.get(name, ".txt"))
    (folder / "neighbour.txt").write_bytes(b"not ours\n")
    if existing:
        target.write_bytes(OLD)
        target.chmod(0o640)
    before = listing(folder)
    done = run_writer(name, target, LIMIT)
    assert done.returncode == 3, done.stderr
    message, flags = done.stderr.strip().splitlines()[-2:]
    assert message == f"OutputError: cannot write {target}: File too large"
    assert flags == f"True {errno.EFBIG}"  # an OSError too, with the cause's errno
    assert listing(folder) == before  # no partial file, no temporary file
    if existing:
        assert target.read_bytes() == OLD
        assert stat.S_IMODE(target.stat().st_mode) == 0o640


@pytest.mark.parametrize("name", list(WRITERS))
def test_the_same_writers_succeed_with_room(tmp_path, name):
    target = tmp_path / ("result" + SUFFIX.get(name, ".txt"))
    target.write_bytes(OLD)
    done = run_writer(name, target, 10**8)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == [target.name]
    assert target.stat().st_size > LIMIT


# ------------------------------------------------------------- what is written, and how
def test_text_is_what_path_write_text_writes(tmp_path):
    text = 'line 1\nP(disease = "Flu") = 0.3 ± 0.05 — δ\n'
    write_text(tmp_path / "a.md", text)
    (tmp_path / "b.md").write_text(text, encoding="utf-8")
    assert (tmp_path / "a.md").read_bytes() == (tmp_path / "b.md").read_bytes()
    write_bytes(tmp_path / "c.bin", b"\x00\x01")
    assert (tmp_path / "c.bin").read_bytes() == b"\x00\x01"


def test_csv_is_what_to_csv_writes(tmp_path):
    import pandas as pd

    frame = pd.DataFrame({"gender": ["male", "fémale"], "p": [1 / 3, 0.5]}).set_index("gender")
    write_frame(tmp_path / "a.csv", frame)
    frame.to_csv(tmp_path / "b.csv")
    assert (tmp_path / "a.csv").read_bytes() == (tmp_path / "b.csv").read_bytes()
    write_frame(tmp_path / "c.txt", frame, format="csv", index=False)
    assert (tmp_path / "c.txt").read_text().splitlines()[0] == "p"


def test_figure_is_what_savefig_writes(tmp_path):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 0])
    save_figure(tmp_path / "a.png", fig, dpi=80)
    fig.savefig(tmp_path / "b.png", dpi=80)
    assert (tmp_path / "a.png").read_bytes() == (tmp_path / "b.png").read_bytes()
    save_figure(tmp_path / "c.svg", fig)
    assert (tmp_path / "c.svg").read_text().lstrip().startswith("<?xml")
    save_figure(tmp_path / "noext", fig)  # no extension: savefig.format, nothing appended
    assert (tmp_path / "noext").read_bytes().startswith(b"\x89PNG")
    plt.close(fig)


def test_permissions_are_those_of_a_plain_write(tmp_path):
    umask = os.umask(0o022)
    os.umask(umask)
    write_text(tmp_path / "new.txt", "x")
    assert stat.S_IMODE((tmp_path / "new.txt").stat().st_mode) == 0o666 & ~umask
    old = tmp_path / "old.txt"
    old.write_text("old")
    old.chmod(0o600)
    write_text(old, "new")
    assert old.read_text() == "new" and stat.S_IMODE(old.stat().st_mode) == 0o600


def test_a_symlink_keeps_pointing_at_the_new_file(tmp_path):
    real = tmp_path / "real.csv"
    real.write_text("old")
    link = tmp_path / "link.csv"
    link.symlink_to(real)
    write_text(link, "new")
    assert link.is_symlink() and real.read_text() == "new"


def test_the_caller_may_close_the_file(tmp_path):
    with atomic_write(tmp_path / "a.txt") as fh:
        fh.write("done")
        fh.close()
    assert (tmp_path / "a.txt").read_text() == "done"


@pytest.mark.parametrize("error", [ValueError("bad value"), KeyboardInterrupt()])
def test_an_exception_in_the_body_writes_nothing(tmp_path, error):
    target = tmp_path / "out.json"
    target.write_bytes(OLD)
    with pytest.raises(type(error)) as caught, atomic_write(target) as fh:
        fh.write("x" * 10_000)
        raise error
    assert listing(tmp_path) == {"out.json": OLD}
    if sys.version_info >= (3, 11):
        assert f"(while writing {target}: nothing was written)" in caught.value.__notes__


def test_a_failed_rename_writes_nothing(tmp_path, monkeypatch):
    target = tmp_path / "out.csv"
    target.write_bytes(OLD)

    def refuse(src, dst):
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(OutputError, match=re.escape(f"cannot write {target}: Permission denied")):
        write_text(target, "new")
    assert listing(tmp_path) == {"out.csv": OLD}


def test_missing_folder_and_folder_as_target(tmp_path):
    target = tmp_path / "no" / "such" / "out.csv"
    with pytest.raises(OutputError) as caught:
        write_text(target, "x")
    assert str(caught.value) == f"cannot write {target}: folder '{target.parent}' does not exist"
    assert isinstance(caught.value, OSError) and isinstance(caught.value, MaxEntError)
    assert caught.value.errno == errno.ENOENT and caught.value.filename == str(target)
    assert not (tmp_path / "no").exists()
    with pytest.raises(OutputError, match="it is a folder"):
        write_text(tmp_path, "x")
    with pytest.raises(OutputError, match="does not exist"):
        check_target(target)
    check_target(tmp_path / "fine.csv")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes anywhere")
def test_read_only_folder(tmp_path):  # pragma: no cover - the suite runs as root here
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        with pytest.raises(OutputError, match="not writable"):
            check_target(folder / "x.csv")
        with pytest.raises(OutputError, match="Permission denied"):
            write_text(folder / "x.csv", "x")
    finally:
        folder.chmod(0o700)


def test_bad_mode():
    with pytest.raises(ValueError, match="mode must be"):
        with atomic_write("x.txt", "a"):
            pass


def test_parquet_without_pyarrow_is_a_clear_error(tmp_path, monkeypatch):
    import pandas as pd

    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow -> ImportError
    target = tmp_path / "posterior.parquet"
    with pytest.raises(OutputError, match=r"Parquet needs pyarrow \(pip install pyarrow\)"):
        write_frame(target, pd.DataFrame({"a": [1]}))
    with pytest.raises(OutputError, match=r"give a \.csv, \.parquet or \.pq file name"):
        write_frame(tmp_path / "posterior.xlsx", pd.DataFrame({"a": [1]}))
    assert list(tmp_path.iterdir()) == []


def test_output_error_pickles():
    exc = OutputError("cannot write x.csv: File too large", filename="x.csv", errno=errno.EFBIG)
    back = pickle.loads(pickle.dumps(exc))
    assert (str(back), back.filename, back.errno) == (str(exc), "x.csv", errno.EFBIG)


# ------------------------------------------------ every writer goes through maxent_privacy.files
DIRECT_WRITE = re.compile(
    r"\.(write_text|write_bytes)\("
    r"|\.(to_csv|to_parquet|to_json|to_pickle|savefig)\((?!fh[,)])"
    r"|\bopen\([^)]*['\"][wax]b?\+?['\"]"
    r"|nbformat\.write\((?!nb, fh\))"
    r"|\b(json|pickle)\.dump\((?![^)]*\bfh\))"
)


@pytest.mark.parametrize(
    "line",
    [  # the writers as they were before they went through maxent_privacy.files
        '(args.out / f"{stem}.md").write_text(report)',
        "args.out.write_bytes(data)",
        "fig.savefig(path, dpi=110)",
        "table.reset_index().to_csv(path, index=False)",
        'with open(spec_path + ".out.pkl", "wb") as fh:',
        "nbformat.write(nb, path)",
        "json.dump(payload, open(path))",
    ],
)
def test_the_lint_below_sees_direct_writes(line):
    assert DIRECT_WRITE.search(line)


def test_no_file_is_written_around_atomic_write():
    """The package, the benchmarks and notebooks/run_all.py write only through ``files``."""
    sources = [
        *sorted((ROOT / "maxent_privacy").rglob("*.py")),
        *sorted((ROOT / "benchmarks").glob("*.py")),
        ROOT / "notebooks" / "run_all.py",
    ]
    offenders = []
    for path in sources:
        if path == ROOT / "maxent_privacy" / "files.py":
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            code = line.split("#", 1)[0]
            if DIRECT_WRITE.search(code) and "StringIO" not in code and "BytesIO" not in code:
                offenders.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert offenders == []
