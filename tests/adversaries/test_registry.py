"""The adversary contract (issue 38, item 1): one object, one registration, everywhere.

A toy adversary (0.5 for every person and value) is registered in a few lines and shows
up in compare_adversaries, plan_release and the report's scale, with no other file
touched; every registered adversary answers by the contract; a malformed answer is a
one-line error naming the adversary.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from maxent_privacy import Bucketized, MaxEntModel, compare_adversaries
from maxent_privacy.adversaries import (
    ADVERSARY_REGISTRY,
    Adversary,
    AdversaryError,
    assessment,
    get_adversary,
    register,
    rows,
    unregister,
)
from maxent_privacy.anonymize import plan_release
from maxent_privacy.report.adversary_scale import adversary_scale
from maxent_privacy.report.html import render_report

ROWS = pd.DataFrame(
    {
        "id": [f"p{i}" for i in range(8)],
        "sex": list("FFMFMFMM"),
        "g": [1, 1, 1, 2, 2, 3, 3, 3],
        "s": ["flu", "flu", "hiv", "flu", "hiv", "flu", "hiv", "hiv"],
    }
)


class Half(Adversary):
    name, description = "half", "0.5 for every person and value"

    def assess(self, model, by="person", **options):
        return pd.DataFrame({"lower": 0.5, "upper": 0.5}, index=rows(model, by))


@pytest.fixture
def half():
    register(Half())
    yield ADVERSARY_REGISTRY["half"]
    unregister("half")


def model_of(frame=ROWS, person=None):
    return MaxEntModel(Bucketized(frame, qi=["sex"], sa="s", group="g", person=person))


def test_a_toy_adversary_is_everywhere(half):
    # compare_adversaries: a column of the table, a row of the summary
    scale = compare_adversaries(model_of(), truth=ROWS, by="person")
    assert "half" in scale.table.columns
    assert (scale.table["half"] == 0.5).all()
    assert scale.summary.loc["half", "people>=0.5"] == 8
    assert scale.summary.loc["half", "people>=0.8"] == 0
    assert scale.summary.loc["half", "mean_p_truth"] == pytest.approx(0.5)
    assert np.isnan(scale.summary.loc["half", "kl"])  # no Result to score
    # by class too
    by_class = compare_adversaries(model_of(), by="class", adversaries=["half"])
    assert list(by_class.summary.index) == ["maxent", "half"]
    # the planner: 0.5 reaches tau 0.4 for everyone whatever the release: reported failing
    table = ROWS.drop(columns="g")
    release, report = plan_release(
        [], table, ["sex"], "s", tau=0.4, adversary="half", person="id", max_rounds=2, queries=50
    )
    assert not report.passed and report.adversary == "half"
    assert set(report.failing["person"]) == set(ROWS["id"])
    assert (report.checks["by"] == "half").any()
    assert release.n_groups >= 1
    # the report's scale, and the page
    result = model_of().solve()
    scale_rows = adversary_scale(result, 0.5, adversaries=["half"])
    assert scale_rows[-1] == {
        "adversary": "half",
        "words": "0.5 for every person and value",
        "at_risk": 8,
    }
    page = render_report(result, 0.5, adversary="half")
    section = page[page.index('id="adversaries"') :]
    assert "0.5 for every person and value" in section


def test_the_command_line_lists_a_registered_adversary(half, capsys):
    from maxent_privacy import cli

    with pytest.raises(SystemExit):
        cli.main(["report", "--help"])
    assert "half" in capsys.readouterr().out


def test_every_registered_adversary_keeps_the_contract():
    model = model_of(person="id")
    model.add(model.P("hiv", sex="F") <= 0.4)
    for name, adversary in ADVERSARY_REGISTRY.items():
        if adversary.requires_truth:
            continue
        for by in ("person", "class"):
            options = {"time_limit": 30} if adversary.honours_time_limit else {}
            frame = assessment(name, model, by=by, **options)
            assert frame.index.equals(rows(model, by)), name
            assert ((frame["lower"] >= 0) & (frame["upper"] <= 1)).all(), name
            assert (frame["lower"] <= frame["upper"] + 1e-9).all(), name
            if not adversary.interval:
                assert (frame["lower"] == frame["upper"]).all(), name
                sums = frame["upper"].groupby(level=0).sum()
                np.testing.assert_allclose(sums, 1.0, atol=1e-6, err_msg=name)


def test_the_builtins_give_the_package_s_numbers():
    model = model_of(person="id")
    model.add(model.P("hiv", sex="F") == 0)
    post = model.solve().person_posterior()
    knowledge = assessment("knowledge", model)["upper"].unstack()
    pd.testing.assert_frame_equal(
        knowledge.rename_axis(columns=None), post.rename_axis(columns=None), check_names=False
    )
    bare = assessment("maxent", model)["upper"].unstack()
    assert bare.loc["p0", "flu"] == pytest.approx(2 / 3)  # the fact dropped: bucket 1's share
    worst = assessment("worst", model, by="person")
    bounds = model.bounds(by="person")
    np.testing.assert_allclose(
        worst["upper"].to_numpy(), bounds["upper"].reindex(worst.index).to_numpy(), atol=1e-9
    )
    worlds = assessment("worlds", model)
    assert worlds.loc[("p0", "flu"), "lower"] == 1.0  # the fact leaves women flu only


def test_aliases_and_unknown_names():
    assert get_adversary("upper") is get_adversary("worst")
    assert get_adversary("definetti") is get_adversary("learned")
    with pytest.raises(ValueError, match="adversary must be 'maxent'.*got 'oracle'"):
        get_adversary("oracle")


def test_registration_is_checked(half):
    with pytest.raises(AdversaryError, match="'half' is taken"):
        register(Half())
    with pytest.raises(AdversaryError, match="takes an Adversary"):
        register(lambda model: None)

    class Nameless(Adversary):
        description = "no name"

    with pytest.raises(AdversaryError, match="name must be a non-empty word"):
        register(Nameless())


@pytest.mark.parametrize(
    "answer, match",
    [
        (lambda idx: None, "returned a NoneType, not a DataFrame"),
        (lambda idx: pd.DataFrame({"upper": 0.5}, index=idx), "no column 'lower'"),
        (lambda idx: pd.DataFrame({"lower": 0.5, "upper": 0.5}, index=idx[1:]), "no row for"),
        (lambda idx: pd.DataFrame({"lower": 0.2, "upper": 1.5}, index=idx), "probability in"),
        (lambda idx: pd.DataFrame({"lower": 0.6, "upper": 0.5}, index=idx), "lower <= upper"),
        (lambda idx: pd.DataFrame({"lower": np.nan, "upper": 0.5}, index=idx), "lower=nan"),
        (
            lambda idx: pd.DataFrame({"lower": 0.5, "upper": 0.5}, index=idx.droplevel(1)),
            "indexed by 1 level",
        ),
    ],
)
def test_a_malformed_answer_names_the_adversary(answer, match):
    class Broken(Adversary):
        name, description = "broken", "returns bad frames"

        def assess(self, model, by="person", **options):
            return answer(rows(model, by))

    register(Broken())
    try:
        with pytest.raises(AdversaryError, match=match) as caught:
            compare_adversaries(model_of(), adversaries=["broken"])
        assert "adversary 'broken'" in str(caught.value)
        assert "\n" not in str(caught.value)
    finally:
        unregister("broken")


def test_the_readme_s_toy_adversary_runs():
    """The README's extension-point example, as written."""
    import re
    import textwrap
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    block = textwrap.dedent(next(b for b in blocks if "class Half(Adversary)" in b))
    try:
        exec(compile(block, "README.md", "exec"), {})  # noqa: S102
        scale = compare_adversaries(model_of(), adversaries=["half"])
        assert (scale.table["half"] == 0.5).all()
    finally:
        unregister("half", missing_ok=True)


def test_the_old_lists_of_adversaries_read_the_registry(half):
    """The three lists of names before the registry still import, and say what it holds."""
    from maxent_privacy.adversaries import compare
    from maxent_privacy.anonymize import plan_checks
    from maxent_privacy.report import adversary_scale

    assert "half" in plan_checks.ADVERSARIES and "worlds" not in plan_checks.ADVERSARIES
    assert "half" in adversary_scale.ADVERSARY_CHOICES
    assert {"maxent", "learned", "lower", "upper", "half"} <= set(compare.ADVERSARIES)
