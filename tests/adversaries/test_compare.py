"""compare_adversaries (issue 23, item 3): maximum entropy, with knowledge, learned, the
LP bounds and possible worlds side by side, scored against the original table."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import maxent_privacy
from maxent_privacy import Bucketized, Generalized, MaxEntModel, anonymize, datasets
from maxent_privacy.adversaries.compare import compare_adversaries
from maxent_privacy.anonymize.mondrian import mondrian
from maxent_privacy.errors import KnowledgeError, ReleaseError

# eight people in three buckets: women go with flu and men with hiv in every bucket
ROWS = pd.DataFrame(
    {
        "sex": list("FFMFMFMM"),
        "g": [1, 1, 1, 2, 2, 3, 3, 3],
        "s": ["flu", "flu", "hiv", "flu", "hiv", "flu", "hiv", "hiv"],
    },
    index=[10, 11, 12, 20, 21, 30, 31, 32],
)
#: maximum entropy by hand: every class gets its bucket's frequencies
FLU = {1: 2 / 3, 2: 1 / 2, 3: 1 / 3}


def tiny() -> MaxEntModel:
    return MaxEntModel(Bucketized(ROWS, qi=["sex"], sa="s", group="g"))


def test_top_level_names():
    assert maxent_privacy.compare_adversaries is compare_adversaries
    assert maxent_privacy.definetti.__name__ == "definetti"


def test_classes_by_hand():
    scale = compare_adversaries(tiny(), truth=ROWS, by="class")
    table, classes = scale.table, scale.classes
    assert list(scale.summary.index) == ["maxent", "learned", "lower", "upper"]
    for c, row in classes.iterrows():
        flu = table.loc[(c, "flu")]
        assert flu["records"] == row["n"]
        assert flu["maxent"] == pytest.approx(FLU[row["g"]], abs=1e-9)
        # the truth: every woman has flu, every man hiv
        assert flu["truth"] == (1.0 if row["sex"] == "F" else 0.0)
    # the class share's bounds (closed form): of bucket 1's two women (two flu, one hiv
    # in the bucket) at least one and at most two have flu
    women1 = classes.index[(classes["sex"] == "F") & (classes["g"] == 1)][0]
    assert table.loc[(women1, "flu"), ["lower", "upper"]].tolist() == [0.5, 1.0]
    # every estimate lies inside the bounds; rows add up to 1
    for name in ("maxent", "learned"):
        assert (table["lower"] - 1e-9 <= table[name]).all()
        assert (table[name] <= table["upper"] + 1e-9).all()
        assert np.allclose(table[name].groupby(level="class").sum(), 1.0)


def test_truth_scores_by_hand():
    s = compare_adversaries(tiny(), truth=ROWS).summary
    m = s.loc["maxent"]
    # argmax: flu in bucket 1 (2 of 3 right), a coin in bucket 2 (1 of 2), hiv in bucket 3
    assert m["accuracy"] == pytest.approx(5 / 8)
    assert m["truth>=0.5"] == pytest.approx(6 / 8)  # all but the 1/3's of buckets 1 and 3
    assert m["truth>=0.8"] == 0.0
    assert m["mean_p_truth"] == pytest.approx((4 / 3 + 1 / 3 + 1 + 1 / 3 + 4 / 3) / 8)
    # P(flu | F) = P(hiv | M) = 13/24 by maximum entropy, 1 in truth
    assert m["kl"] == pytest.approx(np.log(24 / 13))
    assert m["people>=0.5"] == 8 and m["people>=0.8"] == 0
    # the learned adversary guesses bucket 2 right and is closer to the truth
    l = s.loc["learned"]  # noqa: E741
    assert l["accuracy"] == pytest.approx(6 / 8)
    assert l["mean_p_truth"] > m["mean_p_truth"] and l["kl"] < m["kl"]
    # the worst case for an individual: each person's own value may be theirs
    assert s.loc["upper", "truth>=1"] == 1.0 and np.isnan(s.loc["upper", "accuracy"])
    assert np.isnan(s.loc["upper", "kl"])
    assert s.loc["lower", "truth>=0.5"] == 0.0


def test_scores_match_the_learned_result():
    scale = compare_adversaries(tiny(), truth=ROWS)
    post = scale.results["learned"].posterior(by="group")
    own = np.array([post.loc[(r.sex, r.g), r.s] for r in ROWS.itertuples()])
    assert scale.summary.loc["learned", "mean_p_truth"] == pytest.approx(own.mean())
    assert scale.summary.loc["learned", "truth>=0.5"] == pytest.approx((own >= 0.5).mean())


def test_people_are_the_records_by_row_label():
    scale = compare_adversaries(tiny(), truth=ROWS)
    table = scale.table
    assert table.index.names == ["person", "s"]
    assert sorted(table.index.get_level_values("person").unique()) == sorted(ROWS.index)
    truth = table["truth"].unstack()
    assert (truth.idxmax(axis=1) == ROWS["s"].reindex(truth.index)).all()
    # an individual of bucket 1's two women: flu between 0 and 1
    assert table.loc[(10, "flu"), ["lower", "upper"]].tolist() == [0.0, 1.0]
    assert table.loc[(12, "flu"), "maxent"] == pytest.approx(2 / 3)
    # the original table without the group column, matched by row label: the same
    plain = compare_adversaries(tiny(), truth=ROWS.drop(columns="g"))
    pd.testing.assert_frame_equal(plain.summary, scale.summary)


def test_knowledge_from_the_model_and_given():
    model = tiny()
    model.add(model.P("hiv", sex="F") == 0, name="women have no hiv")
    scale = compare_adversaries(model, truth=ROWS, by="class")
    s = scale.summary
    assert list(s.index) == ["maxent", "knowledge", "learned", "lower", "upper"]
    # the fact pins everyone: the estimate with it, the learned one and both bounds
    for name in ("knowledge", "learned", "lower", "upper"):
        assert s.loc[name, "truth>=1"] == pytest.approx(1.0)
        assert np.allclose(scale.table[name], scale.table["truth"], atol=1e-7)
    assert s.loc["knowledge", "accuracy"] == 1.0 and s.loc["knowledge", "kl"] < 1e-7
    assert s.loc["maxent", "accuracy"] == pytest.approx(5 / 8)  # the releases alone
    assert [f.name for f in model.facts] == ["women have no hiv"]  # the model unchanged

    plain = tiny()
    given = compare_adversaries(
        plain, truth=ROWS, by="class", knowledge=lambda m: [("no hiv", m.P("hiv", sex="F") == 0)]
    )
    pd.testing.assert_frame_equal(given.summary, s)
    assert plain.facts == []
    with pytest.raises(KnowledgeError, match="model.add"):
        compare_adversaries(plain, knowledge=[plain.P("hiv", sex="F") == 0])


def test_exact_and_person_ids():
    release = Bucketized(
        datasets.du2008_figure1(), qi=["gender", "degree"], sa="disease", group="bucket",
        person="name",
    )  # fmt: skip
    model = MaxEntModel(release)
    model.add(model.P("Breast Cancer", gender="male") == 0)
    truth = datasets.du2008_figure1()
    scale = compare_adversaries(model, truth=truth, exact=True)
    table = scale.table
    assert set(table.index.get_level_values("person")) == set(truth["name"])
    want = model.bounds(by="person", exact=True)
    for name, col in (("lower", "lp_lower"), ("upper", "lp_upper"), ("certain", "lower")):
        got = table[name].reindex(want.index).fillna(0.0)
        assert np.allclose(got, want[col]), name
    assert set(np.unique(table[["certain", "possible"]])) <= {0.0, 1.0}
    # Cathy and Grace surely have breast cancer, and their own value is always possible
    assert table.loc[("Cathy", "Breast Cancer"), ["certain", "knowledge"]].tolist() == [1, 1]
    assert scale.summary.loc["possible", "truth>=1"] == 1.0
    assert scale.summary.loc["certain", "people>=1"] == 2


def test_generalized_release_with_population_inside_the_bounds():
    adult = datasets.load_adult().sample(400, random_state=1)
    people = adult.set_index(pd.Index([f"p{i}" for i in range(len(adult))], name="pid"))
    qi = ["age", "sex", "race", "relationship"]
    frame = people[qi + ["education"]].reset_index(drop=True)
    release = mondrian(frame, qi, "education", k=10, c=0.5, relaxed=True)
    assert isinstance(release, Generalized)
    model = MaxEntModel(release, populations=[people[qi]])
    scale = compare_adversaries(model, truth=people, max_iter=5)
    table = scale.table
    quick = compare_adversaries(model, truth=people, max_iter=5, bounds="none")
    assert list(quick.summary.index) == ["maxent", "learned"]
    pd.testing.assert_frame_equal(quick.summary, scale.summary.loc[["maxent", "learned"]])
    assert table.index.get_level_values("person").nunique() == len(people)
    for name in ("maxent", "learned"):
        assert (table["lower"] - 1e-6 <= table[name]).all()
        assert (table[name] <= table["upper"] + 1e-6).all()
    assert scale.summary.loc["maxent", "accuracy"] > 0


def test_learned_inside_the_lp_bounds_on_adult():
    """Acceptance (issue 23): every learned posterior lies inside the LP bounds of the
    same model (it is a table the release allows), on Adult samples."""
    frame = datasets.du2008_adult(n=2000)
    qi, sa = list(datasets.ADULT_QI), datasets.ADULT_SA
    for l, exempt in ((3, None), (5, ["HS-grad", "Some-college"])):  # noqa: E741
        release = anonymize.anatomize(frame, qi, sa, l=l, seed=0, nonsensitive=exempt)
        model = MaxEntModel(release)
        scale = compare_adversaries(model, truth=frame, by="class", max_iter=10)
        table = scale.table
        assert (table["lower"] - 1e-9 <= table["learned"]).all()
        assert (table["learned"] <= table["upper"] + 1e-9).all()
        # and per (QI value, bucket), by the library's own bounds of the learned result
        b = scale.results["learned"].bounds(by="group")
        assert ((b["lower"] - 1e-9 <= b["maxent"]) & (b["maxent"] <= b["upper"] + 1e-9)).all()
        s = scale.summary
        # the learner moved the belief (its accuracy may fall: on this sample at l = 5 the
        # fixed point guesses right for 38.8 % against maximum entropy's 41.5 %)
        assert (table["learned"] - table["maxent"]).abs().max() > 0.05
        assert 0 < s.loc["learned", "accuracy"] < 1
        assert 0 <= s.loc["lower", "truth>=0.5"] <= s.loc["maxent", "truth>=0.5"]
        assert s.loc["maxent", "truth>=0.5"] <= s.loc["upper", "truth>=0.5"]


def test_plot_and_labels_from_data():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = ROWS.assign(s=ROWS["s"].map({"flu": "$\\sqrt{$", "hiv": "hiv"}))
    model = MaxEntModel(Bucketized(rows, qi=["sex"], sa="s", group="g"))
    axes = compare_adversaries(model, truth=rows).plot()
    assert len(axes) == 2
    axes[0].figure.canvas.draw()  # an ill-formed $...$ would raise here
    plt.close("all")
    axes = compare_adversaries(model).plot()
    assert len(axes) == 1
    plt.close("all")


def test_arguments():
    from maxent_privacy._validation import ArgumentError

    model = tiny()
    with pytest.raises(ValueError, match="by"):
        compare_adversaries(model, by="group")
    with pytest.raises(ValueError, match="exact=True needs the bounds"):
        compare_adversaries(model, exact=True, bounds="none")
    with pytest.warns(DeprecationWarning, match="bounds=True/False"):
        old = compare_adversaries(model, bounds=False)
    assert list(old.summary.index) == ["maxent", "learned"]
    with pytest.raises(ArgumentError, match="bounds must be 'auto', 'all' or 'none'"):
        compare_adversaries(model, bounds="some")
    with pytest.raises(ArgumentError, match="adversaries must be"):
        compare_adversaries(model, adversaries=["oracle"])
    with pytest.raises(ValueError, match="threshold"):
        compare_adversaries(model, threshold=(0.5, 1.5))
    with pytest.raises(ReleaseError, match="column 's'"):
        compare_adversaries(model, truth=ROWS.drop(columns="s"))
    other = ROWS.set_index(ROWS.index + 1000).drop(columns="g")
    with pytest.raises(ReleaseError, match="row labels"):
        compare_adversaries(model, truth=other)
    model.person("Ann", sex="F")
    with pytest.raises(KnowledgeError, match="singled out"):
        compare_adversaries(model)
