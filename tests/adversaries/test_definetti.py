"""The deFinetti attack (issue 23, item 2): an adversary that learns from the release."""

import sys
import time

import numpy as np
import pandas as pd
import pytest
from paper_models import two_box_model

from maxent_privacy import Bucketized, MaxEntModel
from maxent_privacy._validation import ArgumentError
from maxent_privacy.adversaries.definetti import definetti
from maxent_privacy.adversaries.learners import naive_bayes
from maxent_privacy.errors import KnowledgeError

VALUES = np.array([f"s{k}" for k in range(6)])


def planted(n=3000, seed=0):
    """s = f(a, b) for 85 % of records (else uniform); Anatomy-style l = 3 written here:
    each group takes one record of each of the three values with the most left."""
    rng = np.random.default_rng(seed)
    a, b, c = rng.integers(0, 4, n), rng.integers(0, 3, n), rng.integers(0, 5, n)
    s = VALUES[(a + 2 * b) % 6]
    noise = rng.uniform(size=n) > 0.85
    s[noise] = VALUES[rng.integers(0, 6, noise.sum())]
    queues = {v: list(rng.permutation(np.flatnonzero(s == v))) for v in VALUES}
    group = np.zeros(n, dtype=int)
    g = 0
    while True:
        sizes = sorted(((len(q), v) for v, q in queues.items() if q), reverse=True)
        if len(sizes) < 3:
            break
        g += 1
        for _, v in sizes[:3]:
            group[queues[v].pop()] = g
    for i in (i for q in queues.values() for i in q):  # the few left join a group
        for gg in rng.permutation(np.arange(1, g + 1)):
            if s[i] not in set(s[group == gg]):
                group[i] = gg
                break
    return pd.DataFrame(
        {"a": a.astype(str), "b": b.astype(str), "c": c.astype(str), "s": s, "g": group}
    )


@pytest.fixture(scope="module")
def attack():
    frame = planted()
    model = MaxEntModel(Bucketized(frame, qi=["a", "b", "c"], sa="s", group="g"))
    return frame, model, model.solve(), definetti(model)


def _guess_accuracy(frame, result) -> float:
    post = result.posterior(by="group")
    key = pd.MultiIndex.from_frame(frame[["a", "b", "c", "g"]])
    return float((post.reindex(key).idxmax(axis=1).to_numpy() == frame["s"].to_numpy()).mean())


def test_learning_recovers_a_planted_dependence(attack):
    frame, model, maxent, learned = attack
    gain = _guess_accuracy(frame, learned) - _guess_accuracy(frame, maxent)
    assert gain >= 0.15
    assert learned.solver_stats["definetti"]["converged"]


def test_the_learned_table_keeps_every_bucket_count(attack):
    frame, model, maxent, learned = attack
    cells = learned.cell_table()
    got = cells.groupby(["g", "s"])["x"].sum()
    want = frame.groupby(["g", "s"]).size().astype(float)
    assert np.abs(got.reindex(want.index, fill_value=0.0) - want).max() < 1e-8
    assert got.drop(want.index).abs().max() < 1e-8 if len(got) > len(want) else True
    per_class = cells.groupby(["a", "b", "c", "g"])["x"].sum()
    sizes = frame.groupby(["a", "b", "c", "g"]).size().astype(float)
    assert np.abs(per_class.reindex(sizes.index) - sizes).max() < 1e-8
    assert learned.certificate.ok


def test_the_learned_posterior_lies_inside_the_bounds(attack):
    frame, model, maxent, learned = attack
    b = model.bounds()
    post = learned.posterior().stack().reindex(b.index).fillna(0.0)
    assert ((post >= b["lower"] - 1e-7) & (post <= b["upper"] + 1e-7)).all()


def test_history_has_one_row_per_projection(attack):
    _, _, _, learned = attack
    h = learned.history
    assert list(h.columns) == ["iteration", "log_likelihood", "change", "seconds"]
    assert h["iteration"].tolist() == list(range(1, len(h) + 1))
    assert h["change"].iloc[-1] <= 1e-6
    assert len(h) == learned.solver_stats["definetti"]["iterations"]
    # the learner fits the data better at the end than on the maxent table
    assert h["log_likelihood"].iloc[-1] > h["log_likelihood"].iloc[0]


def test_the_time_is_split_into_its_parts(attack):
    """The parts of ``solver_stats["definetti"]`` are measured, not made up: each >= 0,
    the projections and the learner inside the rounds, and together the whole."""
    _, _, _, learned = attack
    stats = learned.solver_stats["definetti"]
    parts = ["start", "setup", "projection", "learner", "rounds_other", "final"]
    seconds = [stats[f"{part}_seconds"] for part in parts]
    assert min(seconds) >= 0 and stats["projection_seconds"] > 0 and stats["learner_seconds"] > 0
    assert abs(sum(seconds) - stats["seconds"]) <= 1e-6
    # the history's seconds are the rounds' (each holds its projection)
    assert stats["projection_seconds"] <= learned.history["seconds"].sum()


def test_max_iter_stops_the_loop():
    frame = planted(600, seed=1)
    model = MaxEntModel(Bucketized(frame, qi=["a", "b", "c"], sa="s", group="g"))
    r = definetti(model, max_iter=3)
    assert len(r.history) == 3
    assert not r.solver_stats["definetti"]["converged"]
    assert r.certificate.ok


def test_the_general_projection_gives_the_same_answer_as_scaling():
    frame = planted(300, seed=2)
    model = MaxEntModel(Bucketized(frame, qi=["a", "b", "c"], sa="s", group="g"))
    fast = definetti(model, max_iter=5)
    slow = definetti(model, max_iter=5, solver="CLARABEL")
    assert fast.solver_stats["definetti"]["projection"] == "Scaling"
    assert slow.solver_stats["definetti"]["projection"] == "Solves"
    assert np.abs(fast.x - slow.x).max() < 1e-5


def test_extrapolating_parameters_or_tables_reaches_the_same_fixed_point():
    """Naive Bayes is accelerated in its log-parameters, any other learner in the tables:
    the same learner given as a plain callable takes the tables' path to the same answer."""
    frame = planted(400, seed=4)
    model = MaxEntModel(Bucketized(frame, qi=["a", "b", "c"], sa="s", group="g"))
    by_params = definetti(model, max_iter=300, tol=1e-9)
    by_tables = definetti(model, learner=lambda qi, c: naive_bayes(qi, c), max_iter=300, tol=1e-9)
    assert by_params.solver_stats["definetti"]["converged"]
    assert by_tables.solver_stats["definetti"]["converged"]
    assert np.abs(by_params.x - by_tables.x).max() < 1e-6


def test_a_wild_extrapolation_is_cut_back(monkeypatch):
    """A SQUAREM step so long that the extrapolated prior underflows to 0 is halved back
    towards the plain double round, and one that raises the objective is dropped: the
    attack still reaches the fixed point, every table checked."""
    import maxent_privacy.adversaries.definetti as module

    frame = planted(300, seed=5)
    model = MaxEntModel(Bucketized(frame, qi=["a", "b", "c"], sa="s", group="g"))
    calm = definetti(model, max_iter=300, tol=1e-9)
    steps, tried = module._step_length, []

    def wild(r, w):  # the first three steps absurdly long, then SQUAREM's own
        tried.append(1)
        return -1e4 if len(tried) <= 3 else steps(r, w)

    monkeypatch.setattr(module, "_step_length", wild)
    cut = definetti(model, max_iter=300, tol=1e-9)
    assert len(tried) > 3 and cut.solver_stats["definetti"]["converged"]
    assert np.abs(cut.x - calm.x).max() < 1e-6


def test_a_failed_extrapolated_projection_is_undone(monkeypatch):
    """The first extrapolated round's projection fails: its warm start is restored, the
    step is cut back, the attack reaches the same fixed point, and the failed round's
    seconds still count as projection."""
    from maxent_privacy.adversaries.projection import Scaling
    from maxent_privacy.errors import SolverFailed

    frame = planted(300, seed=5)
    model = MaxEntModel(Bucketized(frame, qi=["a", "b", "c"], sa="s", group="g"))
    calm = definetti(model, max_iter=300, tol=1e-9)
    project, calls = Scaling.__call__, []

    def failing(self, p):
        calls.append(1)
        if len(calls) == 3:  # rounds 1 and 2 are plain; 3 is the extrapolated one
            project(self, p * 0.5 + 0.5 / p.shape[1])  # moves the warm start, then fails
            time.sleep(0.2)  # a slow failure: its seconds are the projection's
            raise SolverFailed("deFinetti round 3: a failure made up by the test")
        return project(self, p)

    monkeypatch.setattr(Scaling, "__call__", failing)
    got = definetti(model, max_iter=300, tol=1e-9)
    stats = got.solver_stats["definetti"]
    assert len(calls) > 3 and stats["converged"]
    assert np.abs(got.x - calm.x).max() < 1e-6
    assert stats["projection_seconds"] >= 0.2 > stats["rounds_other_seconds"] >= 0


def test_pooled_releases_with_person_ids():
    frame = planted(120, seed=3)
    frame["pid"] = np.arange(len(frame))
    second = frame.sample(frac=0.8, random_state=0).copy()
    second["g"] = np.arange(len(second)) // 3 + 1
    r1 = Bucketized(frame, qi=["a", "b", "c"], sa="s", group="g", person="pid")
    r2 = Bucketized(second, qi=["a", "b", "c"], sa="s", group="g", person="pid")
    model = MaxEntModel([r1, r2])
    learned = definetti(model, max_iter=4)
    assert learned.certificate.ok
    post = learned.person_posterior()
    assert np.allclose(post.sum(axis=1), 1.0)


def test_generalized_release_with_population():
    model = two_box_model()
    learned = definetti(model, max_iter=10)
    assert learned.certificate.ok
    assert learned.solver_stats["definetti"]["projection"] == "Solves"
    assert np.allclose(learned.posterior().sum(axis=1), 1.0)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"max_iter": 0}, r"^max_iter must be a whole number >= 1, got 0$"),
        ({"max_iter": 2.5}, r"^max_iter must be a whole number >= 1, got 2.5$"),
        ({"max_iter": True}, r"^max_iter must be a whole number >= 1, got True$"),
        ({"tol": -1}, r"^tol must be a finite number > 0, got -1$"),
        ({"tol": float("nan")}, r"^tol must be a finite number, got nan$"),
        ({"seed": -1}, r"^seed must be a whole number >= 0"),
        ({"progress": "yes"}, r"^progress must be None, True/False or a function, got 'yes'$"),
        ({"learner": "svm"}, r"^learner must be 'logistic_regression' or 'naive_bayes' or a "),
    ],
)
def test_bad_arguments_are_refused(kwargs, message):
    frame = planted(30, seed=4)
    model = MaxEntModel(Bucketized(frame, qi=["a"], sa="s", group="g"))
    with pytest.raises(ArgumentError, match=message):
        definetti(model, **kwargs)


def test_progress_is_one_line_per_round_to_stderr_or_a_function(capsys):
    frame = planted(60, seed=4)
    model = MaxEntModel(Bucketized(frame, qi=["a"], sa="s", group="g"))
    lines: list[str] = []
    learned = definetti(model, max_iter=3, progress=lines.append)
    assert len(lines) == len(learned.history) > 0
    assert all(line.startswith("deFinetti ") and "\n" not in line for line in lines)
    definetti(model, max_iter=3, progress=True)
    out, err = capsys.readouterr()
    assert out == "" and err.splitlines() == lines
    definetti(model, max_iter=3)
    assert capsys.readouterr() == ("", "")


def test_logistic_regression_without_scikit_learn_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "sklearn", None)
    monkeypatch.setitem(sys.modules, "sklearn.linear_model", None)
    frame = planted(30, seed=5)
    model = MaxEntModel(Bucketized(frame, qi=["a"], sa="s", group="g"))
    with pytest.raises(KnowledgeError, match=r"maxent-privacy\[learn\]"):
        definetti(model, learner="logistic_regression")


def test_logistic_regression_learns_the_planted_dependence():
    pytest.importorskip("sklearn")
    frame = planted(900, seed=6)
    model = MaxEntModel(Bucketized(frame, qi=["a", "b", "c"], sa="s", group="g"))
    learned = definetti(model, learner="logistic_regression", max_iter=30)
    assert _guess_accuracy(frame, learned) - _guess_accuracy(frame, model.solve()) >= 0.1
