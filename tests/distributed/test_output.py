"""The results folder: whole or nothing (no cluster needed)."""

import pandas as pd
import pytest

from maxent_privacy import OutputError
from maxent_privacy.distributed.output import MARKER, ForeignFolder, ResultFolder, write_part
from maxent_privacy.errors import SameFileError


def test_a_missing_part_writes_nothing(tmp_path):
    folder = ResultFolder(tmp_path / "answer")
    write_part(folder.temp / "posterior", "part-0", pd.DataFrame({"person": [1]}))
    with pytest.raises(OutputError, match=r"parts are missing \(posterior: 1 of 2 parts\); "
                       "nothing was written"):  # fmt: skip
        folder.commit({"posterior": 2}, {})
    assert list(tmp_path.iterdir()) == []


def test_an_old_folder_of_ours_is_replaced_whole(tmp_path):
    target = tmp_path / "answer"
    first = ResultFolder(target)
    write_part(first.temp / "risk", "part-0", pd.DataFrame({"person": [0]}))
    first.commit({"risk": 1}, {"entropy": 0.4})
    (target / "old.txt").write_text("old")  # say, a part of the run before
    folder = ResultFolder(target)
    write_part(folder.temp / "risk", "part-0", pd.DataFrame({"person": [1]}))
    assert (target / "old.txt").exists()  # untouched until the commit
    folder.commit({"risk": 1}, {"entropy": 0.5})
    assert sorted(p.name for p in target.iterdir()) == [MARKER, "certificate.json", "risk"]
    assert [p.name for p in tmp_path.iterdir()] == ["answer"]


def test_a_folder_the_package_did_not_write_is_kept(tmp_path):
    """Issue 39: --out ans where ans/ holds a user's notes.txt deleted it (exit 0)."""
    target = tmp_path / "ans"
    target.mkdir()
    (target / "notes.txt").write_text("mine")
    with pytest.raises(ForeignFolder, match=r"ans exists and was not written by maxent-privacy"):
        ResultFolder(target)
    assert (target / "notes.txt").read_text() == "mine"
    assert [p.name for p in tmp_path.iterdir()] == ["ans"]  # no temporary folder left
    folder = ResultFolder(target, overwrite=True)  # asked for: replaced as one unit
    write_part(folder.temp / "risk", "part-0", pd.DataFrame({"person": [1]}))
    folder.commit({"risk": 1}, {})
    assert not (target / "notes.txt").exists()
    empty = tmp_path / "empty"
    empty.mkdir()
    ResultFolder(empty).discard()  # an empty folder holds nothing to lose


@pytest.mark.parametrize("how", ["is", "is inside", "contains"])
def test_an_input_is_never_the_results_folder(tmp_path, how):
    """Issue 39: --out rel1 (the input folder) replaced the release's Parquet files."""
    release = tmp_path / "rel1"
    release.mkdir()
    (release / "part-0.parquet").write_bytes(b"PAR1")
    target = {"is": release, "is inside": release / "out", "contains": tmp_path}[how]
    inputs = [str(release)] if how != "contains" else [str(release / "*.parquet")]
    with pytest.raises(SameFileError, match=f"the results folder {target} {how} the input"):
        ResultFolder(target, inputs)
    assert sorted(p.name for p in release.iterdir()) == ["part-0.parquet"]


def test_a_file_in_the_way(tmp_path):
    (tmp_path / "answer").write_text("x")
    with pytest.raises(OutputError, match="it is a file, not a folder"):
        ResultFolder(tmp_path / "answer")
    with pytest.raises(OutputError, match="does not exist"):
        ResultFolder(tmp_path / "nowhere" / "answer")


def test_the_command_refuses_before_any_work(tmp_path, capsys):
    """The command line: exit 2, one line naming both paths, nothing changed."""
    from maxent_privacy.cli import main

    release = tmp_path / "rel1"
    release.mkdir()
    (release / "part-0.parquet").write_bytes(b"PAR1")
    notes = tmp_path / "ans"
    notes.mkdir()
    (notes / "notes.txt").write_text("mine")
    common = ["--qi", "age", "--sa", "d", "--group", "g", "--person", "id"]
    code = main(["distributed", str(release), *common, "--out", str(release)])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert f"the results folder {release} is the input {release}" in err
    code = main(["distributed", str(release), *common, "--out", str(notes)])
    err = capsys.readouterr().err
    assert code == 2 and "was not written by maxent-privacy" in err and "--overwrite" in err
    assert (notes / "notes.txt").read_text() == "mine"
    assert sorted(p.name for p in release.iterdir()) == ["part-0.parquet"]


def test_a_nan_threshold_is_refused(tmp_path):
    """Issue 39: solve_distributed(..., threshold=nan) put no one at risk."""
    from maxent_privacy._validation import ArgumentError
    from maxent_privacy.distributed.solve import solve_distributed

    with pytest.raises(ArgumentError, match=r"threshold must be a number in \(0, 1\], got nan"):
        solve_distributed(None, tmp_path / "out", threshold=float("nan"))
    assert list(tmp_path.iterdir()) == []


def test_csv_parts_with_other_columns_are_one_line(tmp_path, capsys):
    """Issue 39: a CSV glob whose parts say sex and gender was a KeyError."""
    from maxent_privacy.cli import main

    folder = tmp_path / "rel"
    folder.mkdir()
    (folder / "a.csv").write_text("id,sex,d,g\n1,F,flu,1\n")
    (folder / "b.csv").write_text("id,gender,d,g\n2,M,hiv,1\n")
    code = main(["distributed", str(folder / "*.csv"), "--qi", "sex", "--sa", "d", "--group",
                 "g", "--person", "id", "--out", str(tmp_path / "out")])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "b.csv does not have the columns of" in err and "it lacks 'sex' and has 'gender'" in err
    assert not (tmp_path / "out").exists()
