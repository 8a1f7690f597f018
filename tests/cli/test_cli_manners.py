"""CLI manners (issue 15): ``--version``, a quick ``--help`` (no heavy imports), a quiet
closed pipe, and conflicting knowledge shown as a table of how far each fact is off.

``--help``'s time is measured by ``benchmarks/plots.py``; here we check its cause: the
argument parser imports neither pandas, numpy, scipy nor cvxpy.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import cvxpy as cp
import pytest

import maxent_privacy
from maxent_privacy import Bucketized, MaxEntModel, datasets, vague
from maxent_privacy.cli import main
from maxent_privacy.errors import InfeasibleKnowledge
from maxent_privacy.solve.conflicts import conflict_moves, explain_infeasibility

ROOT = Path(maxent_privacy.__file__).resolve().parents[1]
ROLES = ["--qi", "gender", "degree", "--sa", "disease", "--group", "bucket"]
HEAVY = ("pandas", "numpy", "scipy", "cvxpy", "matplotlib")


def child(code: str, stdout=subprocess.PIPE) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env=env,
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        timeout=300,
    )


def heavy_after(statement: str) -> list[str]:
    code = (
        "import sys\n"
        f"{statement}\n"
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules), file=sys.stderr)\n"
    )
    done = child(code)
    return json.loads(done.stderr.strip().splitlines()[-1].replace("'", '"'))


# ------------------------------------------------------------------- quick to start
@pytest.mark.parametrize("args", [["--help"], ["--version"], ["report", "--help"]])
def test_the_parser_imports_nothing_heavy(args):
    statement = (
        "from maxent_privacy import cli\n"
        f"try:\n    cli.main({args!r})\nexcept SystemExit as exc:\n    assert exc.code == 0\n"
    )
    assert heavy_after(statement) == []


def test_the_package_root_is_lazy():
    assert heavy_after("import maxent_privacy") == []
    assert "cvxpy" in heavy_after("import maxent_privacy\nmaxent_privacy.MaxEntModel")


def test_every_name_is_still_importable():
    from maxent_privacy.model import MaxEntModel as direct

    assert maxent_privacy.MaxEntModel is direct
    namespace: dict = {}
    exec("from maxent_privacy import *", namespace)  # noqa: S102
    assert set(maxent_privacy.__all__) <= set(namespace)
    assert set(maxent_privacy.__all__) <= set(dir(maxent_privacy))
    assert callable(namespace["plot_risk"]) and namespace["metrics"].breaches
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        maxent_privacy.nope  # noqa: B018


def test_version(capsys):
    with pytest.raises(SystemExit) as caught:
        main(["--version"])
    assert caught.value.code == 0
    assert capsys.readouterr().out == f"maxent-privacy {maxent_privacy.__version__}\n"


def test_analyze_help_names_our_default_solver(capsys):
    with pytest.raises(SystemExit):
        main(["analyze", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "'maxent' (our Newton solver on the dual; the default when every fact is linear)" in (
        text
    )
    assert "default CLARABEL)" not in text


# ------------------------------------------------------------------- a closed pipe
@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        ["--version"],
        ["report", "release.csv", *ROLES, "--person", "name", "--out", "r.html"],
    ],
)
def test_closed_pipe_is_quiet(tmp_path, args):
    datasets.du2008_figure1().to_csv(tmp_path / "release.csv", index=False)
    read, write = os.pipe()
    os.close(read)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    try:
        done = subprocess.run(
            [sys.executable, "-m", "maxent_privacy.cli", *args],
            cwd=tmp_path,
            env=env,
            stdout=write,
            stderr=subprocess.PIPE,
            timeout=300,
        )
    finally:
        os.close(write)
    assert done.stderr.decode() == ""
    assert done.returncode in ((141,) if args[0] == "report" else (0, 141))


# ------------------------------------------------------------------- conflicts
@pytest.fixture
def model():
    return MaxEntModel(
        Bucketized(datasets.du2008_figure1(), qi=["gender", "degree"], sa="disease", group="bucket")
    )


def moves(model) -> dict:
    with pytest.raises(InfeasibleKnowledge) as caught:
        model.solve()
    table = caught.value.conflicts
    return {row.fact: (row.move, row.to) for row in table.itertuples()}


def test_each_conflicting_fact_and_how_far(model):
    model.add(model.P("Flu", gender="male") == 0.3, name="a")
    model.add(model.P("Flu", gender="male") == 0.5, name="b")
    found = moves(model)
    assert found["a"] == pytest.approx((0.2, 0.5)) and found["b"] == pytest.approx((0.2, 0.3))


def test_a_constant_on_the_left_and_a_vague_fact(model):
    # at least 1 of the 6 men has Flu (bucket 1: Flu twice, one woman); at most 2 have HIV
    model.add(0.1 == model.P("Flu", gender="male"), name="few flu")
    assert moves(model)["few flu"] == pytest.approx((1 / 6 - 0.1, 1 / 6))
    model.remove("few flu")
    model.add(vague(model.P("HIV", gender="male"), 0.9, 0.05), name="hiv")
    assert moves(model)["hiv (low)"] == pytest.approx((0.85 - 2 / 6, 2 / 6))


def test_a_relation_has_a_move_but_no_value(model):
    flu, hiv = model.P("Flu", gender="female"), model.P("HIV", gender="female")
    model.add(flu >= hiv + 0.6, name="rel")  # of 4 women, 2 may have Flu and none HIV
    move, to = moves(model)["rel"]
    assert move == pytest.approx(0.6 - 0.5) and math.isnan(to)


def test_no_moves_for_a_non_linear_conflict(model):
    model.add(model.P("Flu", gender="male") == 0.1, name="lin")
    model.add(cp.square(model.P("HIV", gender="male")) <= 0.5, name="sq")
    table = conflict_moves(model, explain_infeasibility(model))
    assert table["fact"].tolist() == ["lin"]
    assert table["move"].notna().all()  # the quadratic fact is not in the conflict
    table = conflict_moves(model, table.assign(fact=["sq"]))
    assert table["move"].isna().all() and table["to"].isna().all()


def test_the_command_prints_the_table(tmp_path, capsys):
    release = tmp_path / "release.csv"
    datasets.du2008_figure1().to_csv(release, index=False)
    facts = tmp_path / "facts.txt"
    facts.write_text(
        'P(disease = "Flu" | gender = "male") = 0.1\n'
        'name "hiv": P(disease = "HIV" | gender = "male") >= 0.2\n'
    )
    out = tmp_path / "r.html"
    code = main(["report", str(release), *ROLES, "--knowledge", str(facts), "--out", str(out)])
    assert code == 2
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert captured.out == "" and not out.exists()
    assert lines[0].startswith("error: 1 fact cannot hold together with the data")
    assert lines[1].split()[:3] == ["fact", "move", "by"]
    assert lines[2].split() == [
        "P(disease", "=", '"Flu"', "|", "gender", "=", '"male")', "=", "0.1", "0.06667", "0.1667"
    ]  # fmt: skip
    assert "see .conflicts" not in captured.err and "Traceback" not in captured.err
