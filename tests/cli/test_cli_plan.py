"""``maxent-privacy plan`` (issue 25, item 4): the next release from the command line, with
the report command's manners: inputs never overwritten, both outputs as one unit, one-line
errors (exit 2), data never markup on the page, progress on standard error."""

from __future__ import annotations

import os

import pandas as pd
import pytest

from maxent_privacy import Bucketized, MaxEntModel
from maxent_privacy.cli import EXIT_INPUT, EXIT_OK, EXIT_OUTPUT, main
from maxent_privacy.cli.inputs import read_release_csv
from maxent_privacy.cli.plan import EXIT_NOT_PASSED

ROLES = ["--qi", "age", "--sa", "disease", "--person", "id"]
EVIL = "<script>alert(1)</script>"


@pytest.fixture
def here(tmp_path, monkeypatch):
    """Two tables: six people (one value is markup), then person 4 leaves."""
    monkeypatch.chdir(tmp_path)
    t1 = pd.DataFrame(
        {
            "id": range(1, 7),
            "age": [21, 23, 30, 50, 52, 60],
            "disease": ["flu", "hiv", EVIL, "flu", "hiv", EVIL],
        }
    )
    t1.to_csv("t1.csv", index=False)
    t1[t1["id"] != 4].to_csv("t2.csv", index=False)
    return tmp_path


def read_release(path) -> Bucketized:
    frame = read_release_csv(path)
    frame["counterfeit"] = frame["counterfeit"].map({"True": True, "False": False})
    for col in ("age", "id", "group"):
        frame[col] = pd.to_numeric(frame[col])
    return Bucketized(frame, ["age"], "disease", "group", "id", counterfeits="counterfeit")


def snapshot(folder) -> dict:
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}


def test_a_sequence_end_to_end(here, capsys):
    argv = ["plan", "--next", "t1.csv", *ROLES, "--out", "r1.csv", "--report", "p1.html"]
    assert main(argv) == EXIT_OK
    out = capsys.readouterr().out
    assert out.startswith("PASSED: 6 people in 2 groups") and "release written to r1.csv" in out
    argv = ["plan", "r1.csv", "--next", "t2.csv", *ROLES, "--tau", "0.5"]
    argv += ["--out", "r2.csv", "--report", "p2.html", "--progress"]
    assert main(argv) == EXIT_OK
    captured = capsys.readouterr()
    assert "repaired: 4, 5, 6" in captured.out
    assert "plan:" in captured.err and "plan:" not in captured.out  # progress: stderr
    r1, r2 = read_release("r1.csv"), read_release("r2.csv")
    assert r2.counterfeit_counts().sum() == 1
    text = (here / "r2.csv").read_text()
    assert ",flu,2,,True" in text  # a counterfeit: no QI, no person; ids stay integers
    assert "4," not in text.split("\n", 1)[1].split(",")[3]
    top = MaxEntModel([r1, r2]).solve().person_posterior().max(axis=1)
    assert (top < 0.5).all()
    page = (here / "p2.html").read_text()
    assert "<script" not in page and "&lt;script&gt;" in page  # data is never markup
    assert "passed" in page and "counterfeit" in page and "t2.csv" in page
    # a third release, the first two as history, with m: the command reads its own output
    argv = ["plan", "r1.csv", "r2.csv", "--next", "t2.csv", *ROLES, "--m", "2"]
    assert main([*argv, "--out", "r3.csv"]) == EXIT_OK
    assert read_release("r3.csv").n_people == 5


def test_not_passing_writes_the_best_and_exits_5(here, capsys):
    argv = ["plan", "--next", "t1.csv", *ROLES, "--tau", "0.3", "--out", "r.csv"]
    assert main([*argv, "--report", "p.html"]) == EXIT_NOT_PASSED
    captured = capsys.readouterr()
    assert captured.out.startswith("NOT PASSED")
    (line,) = captured.err.strip().splitlines()
    assert line.startswith("error: no release passed the checks (tau = 0.3 is at most 1/3")
    assert (here / "r.csv").exists() and "did not pass" in (here / "p.html").read_text()


@pytest.mark.parametrize(
    "outputs, message",
    [
        (["--out", "t1.csv"], "--out t1.csv is the new table t1.csv"),
        (["--out", "r.csv", "--report", "same.html"], "--out r.csv and --report same.html are"),
        (["--out", "h.csv"], "--out h.csv is the history release h.csv"),
        (["--out", "link.csv"], "--out link.csv is the new table t1.csv (link.csv resolves to"),
        (["--out", "r.csv", "--report", "hard.html"], "--report hard.html is the knowledge"),
    ],
)
def test_an_output_never_overwrites_an_input(here, capsys, outputs, message):
    main(["plan", "--next", "t1.csv", *ROLES, "--out", "h.csv"])
    os.symlink(here / "t1.csv", here / "link.csv")
    os.symlink(here / "r.csv", here / "same.html")  # a link to the other output
    (here / "facts.txt").write_text('P(disease = "flu" | age = 99) = 0\n')
    os.link(here / "facts.txt", here / "hard.html")
    capsys.readouterr()
    before = snapshot(here)
    argv = ["plan", "h.csv", "--next", "t1.csv", *ROLES, "--knowledge", "facts.txt", *outputs]
    assert main(argv) == EXIT_INPUT
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("error: ") and message in line
    assert snapshot(here) == before


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--out", "r.txt"], "--out 'r.txt': give a .csv file name"),
        (["--out", "r.csv", "--report", "p.txt"], "--report 'p.txt': give an .html file name"),
        (["--out", "nowhere/r.csv"], "folder 'nowhere' does not exist"),
        (["--out", "r.csv", "--person", "pid"], "person column 'pid' is not in the table"),
        (["--out", "r.csv", "--m", "4"], "m=4 exceeds the 3 distinct sensitive values"),
        (["--out", "r.csv", "--knowledge", "no.txt"], "no.txt: cannot read"),
        (["missing.csv", "--out", "r.csv"], "missing.csv: cannot read"),
    ],
)
def test_bad_input_is_one_line(here, capsys, argv, message):
    before = snapshot(here)
    code = main(["plan", "--next", "t1.csv", *ROLES, *argv])
    assert code == (EXIT_OUTPUT if "nowhere" in message else EXIT_INPUT)
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("error: ") and message in line
    assert snapshot(here) == before


def test_a_bad_counterfeit_flag_names_the_file_and_line(here, capsys):
    frame = pd.read_csv("t1.csv").assign(group=[1, 1, 1, 2, 2, 2], counterfeit="maybe")
    frame.to_csv("h.csv", index=False)
    assert main(["plan", "h.csv", "--next", "t1.csv", *ROLES, "--out", "r.csv"]) == EXIT_INPUT
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line == (
        "error: h.csv: column 'counterfeit' holds 'maybe' on line 2; a counterfeit flag is "
        "True/False, yes/no or 1/0"
    )


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--tau", "0"], "argument --tau: must be in (0, 1], got 0"),
        (["--m", "1"], "argument --m: must be at least 2, got 1"),
        (["--adversary", "bayes"], "argument --adversary: invalid choice"),
    ],
)
def test_bad_arguments_exit_2(here, capsys, argv, message):
    with pytest.raises(SystemExit) as caught:
        main(["plan", "--next", "t1.csv", *ROLES, "--out", "r.csv", *argv])
    assert caught.value.code == EXIT_INPUT
    assert message in capsys.readouterr().err.strip().splitlines()[-1]


def test_both_outputs_are_one_unit(here, monkeypatch, capsys):
    """A disk full on the second file leaves both old files as they were."""
    import errno

    (here / "r.csv").write_bytes(b"the old release\n")
    (here / "p.html").write_bytes(b"<html>the old plan</html>\n")
    before = snapshot(here)
    real, calls = os.fsync, []

    def fsync(fd):
        calls.append(fd)
        if len(calls) == 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    argv = ["plan", "--next", "t1.csv", *ROLES, "--out", "r.csv", "--report", "p.html"]
    assert main(argv) == EXIT_OUTPUT
    assert "No space left on device" in capsys.readouterr().err
    assert snapshot(here) == before


def test_a_planned_release_is_analyzed_with_its_counterfeits(here, capsys):
    """The release ``plan`` writes is read back by ``analyze``/``report`` with
    ``--counterfeits``: the counterfeit rows are no one, and a bad flag is one line."""
    main(["plan", "--next", "t1.csv", *ROLES, "--out", "r1.csv", "--report", "p1.html"])
    main(["plan", "r1.csv", "--next", "t2.csv", *ROLES, "--out", "r2.csv", "--report", "p2.html"])
    capsys.readouterr()
    release = read_release("r2.csv")
    assert release.n_records - release.n_people >= 1  # the plan added counterfeits
    roles = ["--qi", "age", "--sa", "disease", "--group", "group", "--person", "id"]
    argv = ["report", "r2.csv", *roles, "--counterfeits", "counterfeit"]
    argv += ["--out", "risk.html", "--risk-out", "risk.csv"]
    assert main(argv) == EXIT_OK
    risk = pd.read_csv("risk.csv")
    assert set(risk["id"]) == set(release.people["id"])  # people only, no counterfeit row
    # without --counterfeits the flag column is not a role: the rows with empty QI cells
    # are refused with a line naming the column
    assert main(["analyze", "r2.csv", *roles]) == EXIT_INPUT
    assert "age" in capsys.readouterr().err
    bad = pd.read_csv("r2.csv").astype({"counterfeit": str})
    bad.loc[0, "counterfeit"] = "maybe"
    bad.to_csv("bad.csv", index=False)
    assert main(["analyze", "bad.csv", *roles, "--counterfeits", "counterfeit"]) == EXIT_INPUT
    err = capsys.readouterr().err.strip()
    assert "'maybe'" in err and "line 2" in err and len(err.splitlines()) == 1
