"""Several files as one unit, and outputs that are inputs (``maxent_privacy.files``, issue 22
items 1 and 2): :func:`write_together` replaces every file or none, whatever stops it (Ctrl-C
between two renames, a full disk while writing the second file, a bug in a writer), and
leaves no temporary file; :func:`check_outputs` refuses an output that names an input.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pandas as pd
import pytest

from maxent_privacy import files
from maxent_privacy.errors import MaxEntError, OutputError, SameFileError
from maxent_privacy.files import (
    check_outputs,
    frame_bytes,
    same_file,
    write_frame,
    write_together,
)

OLD = {"report.html": b"<html>the old report</html>\n", "risk.csv": b"name,maxent\nAnn,0.5\n"}
NEW = {"report.html": b"<html>the new report</html>\n", "risk.csv": b"name,maxent\nBob,0.9\n"}


@pytest.fixture
def folder(tmp_path) -> Path:
    for name, data in OLD.items():
        (tmp_path / name).write_bytes(data)
    return tmp_path


def unchanged(folder: Path) -> None:
    """Every old file byte for byte, and nothing else in the folder (no temporary file)."""
    assert sorted(p.name for p in folder.iterdir()) == sorted(OLD)
    for name, data in OLD.items():
        assert (folder / name).read_bytes() == data, name


def new_files(folder: Path) -> dict:
    return {folder / name: data for name, data in NEW.items()}


def test_write_together_replaces_every_file(folder):
    write_together(new_files(folder))
    assert sorted(p.name for p in folder.iterdir()) == sorted(NEW)
    for name, data in NEW.items():
        assert (folder / name).read_bytes() == data


def test_write_together_takes_text_bytes_and_writers(tmp_path):
    write_together(
        {
            tmp_path / "a.txt": "caf\u00e9\n",
            tmp_path / "b.bin": b"\x00\x01",
            tmp_path / "c.txt": lambda fh: fh.write(b"written by a callable"),
        }
    )
    assert (tmp_path / "a.txt").read_bytes() == "caf\u00e9\n".encode()
    assert (tmp_path / "b.bin").read_bytes() == b"\x00\x01"
    assert (tmp_path / "c.txt").read_bytes() == b"written by a callable"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "b.bin", "c.txt"]


def test_ctrl_c_right_after_the_first_rename_puts_the_old_file_back(folder, monkeypatch):
    real = os.replace
    renamed = []

    def replace(src, dst):
        real(src, dst)
        renamed.append(Path(dst).name)
        if len(renamed) == 1:  # the first file is in place: Ctrl-C now
            raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(KeyboardInterrupt):
        write_together(new_files(folder))
    assert renamed[0] in OLD  # the first new file had been put in place ...
    unchanged(folder)  # ... and was taken back


def test_ctrl_c_held_during_the_renames_undoes_them(folder, monkeypatch):
    """A real SIGINT between two renames is held, then undoes every rename."""
    import signal

    real = os.replace
    calls = []

    def replace(src, dst):
        real(src, dst)
        calls.append(dst)
        if len(calls) == 1:
            signal.raise_signal(signal.SIGINT)  # the handler only notes it

    monkeypatch.setattr(os, "replace", replace)
    # Python's own handler, as in a fresh process (an earlier test's Dask cluster may have
    # left its own installed)
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            write_together(new_files(folder))
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, before)
    unchanged(folder)


def test_disk_full_while_writing_the_second_file(folder, monkeypatch):
    real = os.fsync
    calls = []

    def fsync(fd):
        calls.append(fd)
        if len(calls) == 2:  # the second temporary file: the disk is full
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    with pytest.raises(OutputError) as info:
        write_together(new_files(folder))
    assert info.value.errno == errno.ENOSPC
    assert "No space left on device" in str(info.value)
    assert Path(info.value.filename).name == list(NEW)[1]
    unchanged(folder)


def test_a_bug_in_a_writer_changes_nothing(folder):
    def broken(fh):
        fh.write(b"half of it")
        raise RuntimeError("a bug")

    data = new_files(folder)
    data[folder / "risk.csv"] = broken
    with pytest.raises(RuntimeError, match="a bug"):
        write_together(data)
    unchanged(folder)


def test_a_new_file_does_not_appear_when_the_unit_fails(folder, monkeypatch):
    real = os.replace
    calls = []

    def replace(src, dst):
        calls.append(dst)
        if len(calls) == 2:
            raise OSError(errno.EIO, "Input/output error")
        return real(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    data = {folder / "fresh.txt": b"new", folder / "risk.csv": b"new table"}
    with pytest.raises(OutputError, match="Input/output error"):
        write_together(data)
    unchanged(folder)  # fresh.txt was renamed into place, then removed


def test_write_together_keeps_permissions_and_follows_links(folder):
    os.chmod(folder / "risk.csv", 0o640)
    (folder / "link.csv").symlink_to("risk.csv")
    write_together({folder / "link.csv": b"through the link"})
    assert (folder / "link.csv").is_symlink()
    assert (folder / "risk.csv").read_bytes() == b"through the link"
    assert (os.stat(folder / "risk.csv").st_mode & 0o777) == 0o640


def test_write_together_refuses_one_file_twice(folder):
    (folder / "link.csv").symlink_to("risk.csv")
    with pytest.raises(SameFileError):
        write_together({folder / "risk.csv": b"a", folder / "link.csv": b"b"})
    (folder / "link.csv").unlink()
    unchanged(folder)


def test_a_missing_folder_is_an_output_error_and_nothing_is_written(folder):
    data = new_files(folder)
    data[folder / "no such folder" / "x.csv"] = b"x"
    with pytest.raises(OutputError, match="does not exist"):
        write_together(data)
    unchanged(folder)


# ------------------------------------------------------------------ outputs are not inputs
def test_same_file_sees_links_and_spellings(tmp_path):
    (tmp_path / "in.csv").write_text("a,b\n")
    (tmp_path / "sym.csv").symlink_to("in.csv")
    os.link(tmp_path / "in.csv", tmp_path / "hard.csv")
    assert same_file(tmp_path / "in.csv", tmp_path / "sym.csv")
    assert same_file(tmp_path / "in.csv", tmp_path / "hard.csv")
    assert same_file(tmp_path / "in.csv", tmp_path / "sub" / ".." / "in.csv")
    assert same_file(tmp_path / "new.csv", tmp_path / "new.csv")  # neither exists yet
    assert not same_file(tmp_path / "in.csv", tmp_path / "new.csv")


def test_check_outputs_names_both_paths(tmp_path):
    (tmp_path / "in.csv").write_text("a,b\n")
    (tmp_path / "sym.csv").symlink_to("in.csv")
    with pytest.raises(SameFileError) as info:
        check_outputs(
            {"--risk-out": str(tmp_path / "sym.csv")}, {"the release": [tmp_path / "in.csv"]}
        )
    message = str(info.value)
    assert "\n" not in message
    assert "--risk-out" in message and "sym.csv" in message and "in.csv" in message
    assert "the release" in message
    assert isinstance(info.value, MaxEntError) and isinstance(info.value, ValueError)
    with pytest.raises(SameFileError, match="one file"):
        check_outputs({"--out": tmp_path / "a.html", "--risk-out": tmp_path / "a.html"})
    check_outputs({"--out": tmp_path / "a.html", "--risk-out": None}, [tmp_path / "in.csv"])


def test_frame_bytes_are_what_write_frame_writes(tmp_path):
    frame = pd.DataFrame({"name": ["Ann", "=1+1"], "p": [0.5, 1.0]})
    write_frame(tmp_path / "t.csv", frame, index=False)
    assert frame_bytes(tmp_path / "t.csv", frame, index=False) == (tmp_path / "t.csv").read_bytes()
    with pytest.raises(OutputError, match=r"\.csv, \.parquet or \.pq"):
        frame_bytes(tmp_path / "t.txt", frame)


def test_the_old_name_io_still_has_the_new_helpers():
    import maxent_privacy._io as old

    assert old.write_together is files.write_together


def test_without_hard_links_the_old_file_is_copied_aside(folder, monkeypatch):
    """A disk without hard links: the old file is copied aside, and put back all the same."""

    def no_link(src, dst):
        raise OSError(errno.EPERM, "Operation not permitted")

    real = os.replace
    renamed = []

    def replace(src, dst):
        real(src, dst)
        renamed.append(dst)
        if len(renamed) == 1:
            raise KeyboardInterrupt

    monkeypatch.setattr(os, "link", no_link)
    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(KeyboardInterrupt):
        write_together(new_files(folder))
    unchanged(folder)
