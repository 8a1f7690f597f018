"""``maxent-privacy``: bad files, exit codes, a closed pipe, a full disk.

Every user error is one line on stderr, ``error: <message>``, naming the file at fault,
no traceback, nothing on stdout, and no output file; each exit code of the module
docstring is produced here at least once.
"""

from __future__ import annotations

import bz2
import errno
import gzip
import json
import lzma
import os
import subprocess
import sys
import threading
import zipfile
from pathlib import Path

import pytest

import maxent_privacy
from maxent_privacy import cli, datasets
from maxent_privacy.cli import inputs, main
from maxent_privacy.errors import (
    InaccurateSolution,
    InfeasibleKnowledge,
    OutputError,
    SolverFailed,
    SolverNotInstalled,
    UnsupportedModel,
)

ROOT = Path(maxent_privacy.__file__).resolve().parents[1]
ROLES = ["--qi", "gender", "degree", "--sa", "disease", "--group", "bucket"]
OLD = b"the previous posterior\n"


@pytest.fixture
def csv_bytes():
    return datasets.du2008_figure1().to_csv(index=False).encode()


@pytest.fixture
def release_csv(tmp_path, csv_bytes):
    path = tmp_path / "release.csv"
    path.write_bytes(csv_bytes)
    return path


def analyze(release, *extra):
    return main(["analyze", str(release), *ROLES, *extra])


def one_line_error(capsys, *words):
    """The captured stderr is one 'error: ' line holding every word; stdout is empty."""
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "Traceback" not in captured.err
    assert captured.err.startswith("error: ") and captured.err.count("\n") == 1, captured.err
    for word in words:
        assert word in captured.err, (word, captured.err)
    return captured.err


def child_env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    return env


# ------------------------------------------------------------------ unreadable releases
def _zip(text: bytes) -> bytes:
    import io

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("xl/workbook.xml", text)
    return buf.getvalue()


def _latin1(text: bytes) -> bytes:
    return text.replace(b"Flu", "Flé".encode("latin-1"), 2)


# id -> (file name, content from the good CSV's bytes or None for no file, words expected)
BAD_RELEASES = {
    "missing": ("nope.csv", None, ["nope.csv: cannot read: No such file or directory"]),
    "folder": ("folder.csv", "mkdir", ["folder.csv: is a folder, not a CSV file"]),
    "empty": ("empty.csv", lambda b: b"", ["empty.csv: the file is empty"]),
    "blank lines": ("blank.csv", lambda b: b"\n \r\n\t\n", ["blank.csv: the file is empty"]),
    "gzip bytes named .csv": (
        "gz.csv",
        gzip.compress,
        ["gz.csv: not CSV text but a gzip-compressed file; name it .csv.gz or decompress it"],
    ),
    "bzip2 bytes named .csv": ("bz.csv", bz2.compress, ["bz.csv: not CSV text but a bzip2"]),
    "xz bytes named .csv": ("xz.csv", lzma.compress, ["xz.csv: not CSV text but an xz"]),
    "a spreadsheet (zip)": ("sheet.csv", _zip, ["sheet.csv: not CSV text but a ZIP archive"]),
    "UTF-16": (
        "u16.csv",
        lambda b: b.decode().encode("utf-16"),
        ["u16.csv: not CSV text but UTF-16 text; save it as UTF-8"],
    ),
    "latin-1": (
        "latin.csv",
        _latin1,
        ["latin.csv:2: not UTF-8 text (byte 0xe9 at offset ", "save the file as UTF-8"],
    ),
    "binary with NUL bytes": ("bin.csv", lambda b: b"\x00\x01\x02" * 100, ["bin.csv: not CSV"]),
    "an HTML page": (
        "page.csv",
        lambda b: b"<!DOCTYPE html>\n<html><body>Not Found</body></html>\n",
        ["page.csv: not CSV text but an HTML or XML document"],
    ),
    "semicolon-separated": (
        "semi.csv",
        lambda b: b.replace(b",", b";"),
        ["semi.csv: one column only", "looks semicolon-separated"],
    ),
    "tab-separated": ("tab.csv", lambda b: b.replace(b",", b"\t"), ["looks tab-separated"]),
    "the first row with an extra field": (
        "ragged.csv",
        lambda b: b.replace(b"\n", b",extra\n", 2).replace(b",extra\n", b"\n", 1),
        ["ragged.csv: line 2 has 6 fields, the header 5; every line needs as many fields"],
    ),
    "a later row with an extra field": (
        "ragged.csv",
        lambda b: b.replace(b"\n", b",extra\n", 3).replace(b",extra\n", b"\n", 2),
        ["ragged.csv: line 3 has 6 fields, the lines above 5; every line needs as many"],
    ),
    "an unclosed quote": (
        "quote.csv",
        lambda b: b + b'"Zoe,female',
        ["quote.csv: not a valid CSV"],
    ),
    "truncated .csv.gz": (
        "cut.csv.gz",
        lambda b: gzip.compress(b)[:60],
        ["cut.csv.gz: cannot read: Compressed file ended"],
    ),
    ".csv.gz that is not gzip": ("plain.csv.gz", lambda b: b, ["plain.csv.gz: cannot read: "]),
    ".csv.zst that is not zstd (or no zstandard)": (
        "plain.csv.zst",
        gzip.compress,
        ["plain.csv.zst: cannot read: "],
    ),
    ".csv.zip that is not a zip": ("plain.csv.zip", lambda b: b, ["plain.csv.zip: cannot read: "]),
    "header only": (
        "header.csv",
        lambda b: b.splitlines(keepends=True)[0],
        ["the release has no rows (release file ", "header.csv)"],
    ),
    "JSON, not CSV": (
        "data.json",
        lambda b: json.dumps([{"gender": "male"}]).encode(),
        ["data.json: one column only", "the file looks like JSON"],
    ),
    "JSON, several keys": (
        "data2.json",
        lambda b: json.dumps([{"gender": "male", "degree": "junior"}]).encode(),
        ["quasi-identifier column 'gender' is not in the table", "(release file ", "data2.json)"],
    ),
    "an empty cell": (
        "hole.csv",
        lambda b: b.replace(b",Flu,", b",,", 1),
        ["column 'disease' has a missing value", "hole.csv"],
    ),
    "100,000 columns": (
        "wide.csv",
        lambda b: (
            ",".join(f"c{i}" for i in range(100_000)).encode() + b"\n" + b"1," * 99_999 + b"1\n"
        ),
        ["is not in the table", "more characters)"],
    ),
}


@pytest.mark.parametrize("case", list(BAD_RELEASES))
def test_unreadable_release_is_one_line_naming_the_file(tmp_path, csv_bytes, capsys, case):
    name, content, words = BAD_RELEASES[case]
    path = tmp_path / name
    if content == "mkdir":
        path.mkdir()
    elif content is not None:
        path.write_bytes(content(csv_bytes))
    out = tmp_path / "posterior.csv"
    assert analyze(path, "--out", str(out)) == 2
    err = one_line_error(capsys, *words)
    assert str(path) in err
    assert len(err) < 2200
    assert not out.exists()


def test_latin1_error_gives_line_and_offset(tmp_path, csv_bytes, capsys):
    data = _latin1(csv_bytes)
    path = tmp_path / "latin.csv"
    path.write_bytes(data)
    offset = data.index(b"\xe9")
    line = data[:offset].count(b"\n") + 1
    assert analyze(path) == 2
    one_line_error(capsys, f"latin.csv:{line}: not UTF-8 text (byte 0xe9 at offset {offset}:")


def test_utf8_error_position_across_read_chunks(tmp_path):
    """A character split between two 1 MiB reads is not an error; the bad byte after is."""
    head = b"a,b\n" + b"x,y\n" * ((1 << 20) // 4 - 2) + b"xx,"  # 1 byte short of 1 MiB
    data = head + "é".encode() + b"\nx," + b"\xff" + b"\n"
    assert len(head) + 1 == 1 << 20  # 'é' straddles the boundary
    path = tmp_path / "big.csv"
    path.write_bytes(data)
    line, offset = data.count(b"\n"), data.index(b"\xff")
    assert inputs._utf8_error(path) == (
        f"{path}:{line}: not UTF-8 text (byte 0xff at offset {offset}: invalid start byte); "
        "save the file as UTF-8"
    )
    path.write_bytes(head + "é".encode() + b"\n")
    assert inputs._utf8_error(path) is None


# ------------------------------------------------------------- knowledge files, --out
@pytest.mark.parametrize(
    ("case", "make", "words"),
    [
        ("missing", None, ["cannot read: No such file or directory"]),
        ("folder", "mkdir", ["cannot read: Is a directory"]),
        ("gzip", lambda p: p.write_bytes(gzip.compress(b"P(x) = 1\n")), ["not a UTF-8 text"]),
        ("latin-1", lambda p: p.write_bytes('P(disease = "Flé") = 0\n'.encode("latin-1")),
         ["not a UTF-8 text"]),
    ],
)  # fmt: skip
def test_unreadable_knowledge_file(tmp_path, release_csv, capsys, case, make, words):
    facts = tmp_path / "facts.txt"
    if make == "mkdir":
        facts.mkdir()
    elif make is not None:
        make(facts)
    assert analyze(release_csv, "--knowledge", str(facts)) == 2
    one_line_error(capsys, str(facts), *words)


def test_empty_knowledge_file_is_no_knowledge(tmp_path, release_csv, capsys):
    facts = tmp_path / "facts.txt"
    facts.write_text("")
    assert analyze(release_csv, "--knowledge", str(facts)) == 0
    assert f"0 facts from {facts}" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("out", "words"),
    [
        ("no/such/folder/posterior.csv", ["folder 'no/such/folder' does not exist"]),
        (".", ["give a .csv or .json file name"]),
        ("posterior.parquet", ["give a .csv or .json file name"]),
    ],
)
def test_bad_out_fails_before_any_work(tmp_path, release_csv, capsys, monkeypatch, out, words):
    monkeypatch.chdir(tmp_path)

    def no_solve(*a, **k):  # pragma: no cover - must not be reached
        raise AssertionError("solved before checking --out")

    monkeypatch.setattr(cli.MaxEntModel, "solve", no_solve)
    code = analyze(release_csv, "--out", out)
    assert code == (4 if "folder" in words[0] else 2)
    one_line_error(capsys, *words)


def test_out_is_a_folder(tmp_path, release_csv, capsys):
    folder = tmp_path / "posterior.csv"
    folder.mkdir()
    assert analyze(release_csv, "--out", str(folder)) == 4
    one_line_error(capsys, f"cannot write {folder}: it is a folder")


# --------------------------------------------------------------- odd but valid releases
def _posterior(path: Path, tmp_path: Path) -> list:
    out = tmp_path / f"{path.name}.json"
    assert analyze(path, "--out", str(out)) == 0
    return json.loads(out.read_text())


@pytest.mark.parametrize(
    ("name", "make"),
    [
        ("bom.csv", lambda b: b"\xef\xbb\xbf" + b),
        ("crlf.csv", lambda b: b.replace(b"\n", b"\r\n")),
        ("trailing-comma.csv", lambda b: b.replace(b"\n", b",\n")),
        ("blank-lines.csv", lambda b: b.replace(b"\n", b"\n\n")),
        ("release.csv.gz", gzip.compress),
        ("release.csv.bz2", bz2.compress),
        ("release.csv.xz", lzma.compress),
    ],
)
def test_odd_but_valid_releases_give_the_same_answer(tmp_path, release_csv, capsys, name, make):
    path = tmp_path / name
    path.write_bytes(make(release_csv.read_bytes()))
    assert _posterior(path, tmp_path) == _posterior(release_csv, tmp_path)


def test_release_from_a_pipe(tmp_path, release_csv):
    """<(zcat release.csv.gz) is a FIFO: read once, whole."""
    fifo = tmp_path / "fifo.csv"
    os.mkfifo(fifo)

    def feed():
        with open(fifo, "wb") as fh:
            fh.write(release_csv.read_bytes())

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    try:
        assert _posterior(fifo, tmp_path) == _posterior(release_csv, tmp_path)
    finally:
        writer.join(timeout=10)


# ------------------------------------------------------------------------- exit codes
@pytest.mark.parametrize(
    ("error", "code", "words"),
    [
        (SolverFailed("solver SCS: status infeasible_inaccurate"), 3, ["status infeasible"]),
        (InaccurateSolution("residual 1e-3 above 1e-6"), 3, ["residual 1e-3"]),
        (InfeasibleKnowledge("the facts cannot hold together"), 2, ["cannot hold together"]),
        (SolverNotInstalled("solver 'X' is not installed"), 2, ["not installed"]),
        (UnsupportedModel("'maxent' cannot take soft facts"), 2, ["soft facts"]),
        (OutputError("cannot write x.csv: No space left on device", "x.csv", errno.ENOSPC), 4,
         ["cannot write x.csv"]),
    ],
)  # fmt: skip
def test_exit_code_of_each_error_class(release_csv, capsys, monkeypatch, error, code, words):
    def fail(*a, **k):
        raise error

    monkeypatch.setattr(cli.MaxEntModel, "solve", fail)
    assert analyze(release_csv) == code
    one_line_error(capsys, *words)


def test_internal_error_is_exit_1_with_a_traceback(release_csv, capsys, monkeypatch):
    def bug(*a, **k):
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(cli.MaxEntModel, "solve", bug)
    assert analyze(release_csv) == 1
    err = capsys.readouterr().err
    assert err.startswith("Traceback (most recent call last):")
    assert err.splitlines()[-1] == (
        "error: internal error (ZeroDivisionError: division by zero); this is a bug in "
        "maxent-privacy, please report it with the traceback above"
    )


def test_interrupt_is_exit_130(release_csv, capsys, monkeypatch):
    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli.MaxEntModel, "solve", interrupted)
    assert analyze(release_csv) == 130
    assert capsys.readouterr().err == "error: interrupted\n"


def test_argparse_usage_error_is_exit_2(release_csv, capsys):
    with pytest.raises(SystemExit) as caught:
        main(["analyze", str(release_csv), "--qi", "gender"])
    assert caught.value.code == 2
    assert "required: --sa, --group" in capsys.readouterr().err


def test_exit_codes_are_documented(capsys):
    with pytest.raises(SystemExit) as caught:
        main(["analyze", "--help"])
    assert caught.value.code == 0
    help_text = capsys.readouterr().out
    for code in (0, 1, 2, 3, 4, 130, 141):
        assert f"\n  {code} " in help_text, code
        assert f"\n{code} " in cli.__doc__, code
    assert help_text.rstrip().endswith(cli.EXIT_CODES.splitlines()[-1])


# --------------------------------------------------------- closed pipe, full disk (real)
def run_cli(args, cwd, stdout=subprocess.PIPE, limit=None):
    """python -m maxent_privacy.cli ARGS in a child (RLIMIT_FSIZE = limit if given)."""
    if limit is None:
        command = [sys.executable, "-m", "maxent_privacy.cli", *args]
    else:
        command = [
            sys.executable,
            "-c",
            "import resource, signal, sys\n"
            "from maxent_privacy import cli, parser\n"
            "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
            f"resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit}))\n"
            f"sys.exit(cli.main({list(args)!r}))\n",
        ]
    return subprocess.run(
        command, cwd=cwd, env=child_env(), stdout=stdout, stderr=subprocess.PIPE, timeout=300
    )


@pytest.mark.parametrize("command", [["demo"], ["analyze", "release.csv", *ROLES]])
def test_closed_pipe_is_quiet(tmp_path, release_csv, command):
    """Standard output whose reader is gone (``| head`` after its line): no traceback."""
    read, write = os.pipe()
    os.close(read)
    try:
        done = run_cli(command, tmp_path, stdout=write)
    finally:
        os.close(write)
    assert done.stderr.decode() == ""
    assert done.returncode == 141


def test_pipe_into_head(tmp_path):
    done = subprocess.run(
        f"{sys.executable} -m maxent_privacy.cli demo | head -1",
        shell=True,
        cwd=tmp_path,
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert (
        done.stdout.startswith("Figure 1(b) of Du, Teng and Zhu") and done.stdout.count("\n") == 1
    )
    assert done.stderr == ""


@pytest.mark.parametrize("suffix", [".csv", ".json"])
@pytest.mark.parametrize("existing", [True, False], ids=["over an old file", "new file"])
def test_disk_full_on_out(tmp_path, release_csv, suffix, existing):
    folder = tmp_path / "results"
    folder.mkdir()
    out = folder / f"posterior{suffix}"
    if existing:
        out.write_bytes(OLD)
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    done = run_cli(["analyze", str(release_csv), *ROLES, "--out", str(out)], tmp_path, limit=100)
    assert done.stderr.decode() == f"error: cannot write {out}: File too large\n"
    assert done.returncode == 4 and done.stdout == b""
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before


def test_disk_full_on_stdout(tmp_path):
    with open(tmp_path / "demo.txt", "wb") as fh:
        done = run_cli(["demo"], tmp_path, stdout=fh, limit=512)
    assert done.stderr.decode() == "error: cannot write standard output: File too large\n"
    assert done.returncode == 4


def test_bad_file_in_a_real_process(tmp_path, csv_bytes):
    (tmp_path / "gz.csv").write_bytes(gzip.compress(csv_bytes))
    done = run_cli(["analyze", "gz.csv", *ROLES], tmp_path)
    assert done.returncode == 2 and done.stdout == b""
    assert done.stderr.decode() == (
        "error: gz.csv: not CSV text but a gzip-compressed file; name it .csv.gz or decompress it\n"
    )


@pytest.mark.parametrize("size", ["lots", "0", "-1GB", "1.5 GBs"])
def test_a_bad_memory_limit_is_one_line(size, tmp_path, capsys):
    """Issue 39: --memory-limit lots was Dask's ValueError (a traceback)."""
    with pytest.raises(SystemExit) as caught:
        main(["distributed", "r.parquet", "--qi", "a", "--sa", "s", "--group", "g",
              "--person", "id", "--out", str(tmp_path / "o"), "--memory-limit", size])  # fmt: skip
    err = capsys.readouterr().err
    assert caught.value.code == 2 and "argument --memory-limit" in err
    assert "Traceback" not in err
    assert not (tmp_path / "o").exists()


def test_a_bad_option_value_is_one_line(capsys):
    """Issue 39: a bad option value printed the 12-line usage before the error."""
    with pytest.raises(SystemExit) as caught:
        main(["report", "r.csv", "--qi", "a", "--sa", "s", "--threshold", "2"])
    err = capsys.readouterr().err
    assert caught.value.code == 2
    assert err == (
        "maxent-privacy report: error: argument --threshold: must be in (0, 1], got 2 "
        "(usage: maxent-privacy report -h)\n"
    )
