"""Our own solver (``solver="maxent"``): agreement with Clarabel, exact forced zeros,
refusals, infeasibility, Dask."""

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from test_properties import build, release_of, releases, releases_with_true_facts

from maxent_privacy import InfeasibleKnowledge, MaxEntModel, UnsupportedModel, datasets, soft
from maxent_privacy.dual import lp_forced_zeros
from maxent_privacy.rules import mine_rules

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture
def figure1():
    release = release_of_figure1()
    return MaxEntModel(release)


def release_of_figure1():
    from maxent_privacy import Bucketized

    return Bucketized(
        datasets.du2008_figure1(), qi=["gender", "degree"], sa="disease", group="bucket"
    )


@settings(max_examples=30, **SETTINGS)
@given(releases_with_true_facts())
@example(  # Clarabel + polish stops at its own 1e-9 residual: its entropy is off by 1.1e-8
    (
        pd.DataFrame(
            {
                "age": ["a0", "a0", "a1", "a0"],
                "sex": ["F", "F", "F", "M"],
                "disease": ["s0", "s0", "s1", "s1"],
                "bucket": [1, 1, 1, 1],
            }
        ),
        [("s1", {"sex": "F"}, 1 / 3, "<=")],
    )
)
def test_maxent_agrees_with_clarabel(case):
    frame, facts = case
    model = build(frame, facts)
    ours = model.solve(solver="maxent")
    ref = model.solve(solver="CLARABEL")
    assert ours.solver_stats["solver"] == "MAXENT"
    # Clarabel's answer is exact to ~1e-9 once polished; when its polish fails (duplicate
    # inequality rows, say) it is off by up to ~1e-5 while ours holds its certificate
    polished = bool(ref.components.get("polished", pd.Series([True])).fillna(True).all())
    close = 1e-6 if polished else 1e-4
    assert np.abs(ours.x - ref.x).max() <= close * max(1, len(frame))
    diff = (ours.posterior() - ref.posterior()).abs().to_numpy().max()
    assert diff <= close
    # the reference is as exact as its own certificate says (its gap bounds its entropy's
    # distance to the optimum); ours is checked against its own below
    assert abs(ours.certificate.entropy - ref.certificate.entropy) <= 1e-8 + abs(
        ref.certificate.gap
    )
    # our own certificate: residual and a dual bound that matches the entropy
    assert ours.certificate.primal_residual <= 1e-9
    assert abs(ours.certificate.gap) <= 1e-9


def _all_forced_zeros(model) -> set:
    """Every cell that each feasible x puts at 0, by LPs over the whole model."""
    A, b, _ = model.invariant_matrix(drop_redundant=False)
    rows, rhs, G, h = [A], [b], [], []
    for f in model.facts:
        (rows if f.sense == "==" else G).append(f.A)
        (rhs if f.sense == "==" else h).append(f.b)
    G = sp.vstack(G, format="csr") if G else None
    h = np.concatenate(h) if h else None
    cells = np.arange(model.n_cells)
    found = lp_forced_zeros(sp.vstack(rows, format="csr"), np.concatenate(rhs), G, h, cells)
    return set(found.tolist())


@st.composite
def releases_with_rules(draw):
    """Random releases plus Top-(K+, K-) rules of their own data (confidences 0 and 1
    included) and P(s | q) = 0 facts: knowledge that forces cells to 0."""
    frame = draw(releases(max_records=30))
    rules = mine_rules(frame, qi=["age", "sex"], sa="disease", min_support=1)
    k_pos = draw(st.integers(0, 8))
    k_neg = draw(st.integers(0, 8))
    return frame, rules.top(k_pos, k_neg)


def _line_search_floor_case():
    """hypothesis seed 206868444126782258672465105781199593204 (shrunk): Newton's line
    search stops moving at x/n ~ 4e-12, above where the recession certificate used to be
    tried (1e-13), and 3 of the 7 forced zeros were left at ~1e-11."""
    rows = (
        "a0 M s0 1;a0 M s0 1;a2 M s0 2;a2 M s0 2;a1 M s1 2;a0 F s0 2;a1 M s1 2;a0 M s0 3;"
        "a2 M s0 2;a0 M s0 4;a0 M s0 1;a0 M s2 1;a2 M s0 2;a0 M s2 3;a1 M s2 2;a0 F s0 2;"
        "a1 M s0 2;a0 M s2 1;a2 M s0 2;a1 M s0 4;a2 M s0 2;a0 M s2 1;a0 M s3 4;a0 F s0 2;"
        "a0 M s2 2;a0 M s0 4;a1 M s0 3"
    )
    frame = pd.DataFrame(
        [r.split() for r in rows.split(";")], columns=["age", "sex", "disease", "bucket"]
    ).astype({"bucket": int})
    rules = mine_rules(frame, qi=["age", "sex"], sa="disease", min_support=1)
    return frame, rules.top(3, 0)


@settings(max_examples=40, **SETTINGS)
@given(releases_with_rules())
@example(case=_line_search_floor_case())
def test_forced_zeros_match_the_lp(case):
    """Every forced zero (by LP over the whole model) is exactly 0 in our answer, and no
    other cell is. Found by presolve (zero rows, single cells, tight rows, rule sums,
    bucket flows), the dual's recession certificate, or, for what those miss, an LP on
    the stalled component's suspects (rare: a case analysis across buckets)."""
    frame, rules = case
    model = MaxEntModel(release_of(frame))
    model.add(rules)
    result = model.solve(solver="maxent")
    ours = set(np.flatnonzero(result.x == 0).tolist())
    assert ours == _all_forced_zeros(model)
    assert result.certificate.primal_residual <= 1e-9


def test_forced_zeros_of_du_adult_rules():
    """The Adult instance whose zeros made Clarabel inaccurate: all found before Newton."""
    frame = datasets.du2008_adult(n=3000)
    from maxent_privacy import anonymize

    release = anonymize.anatomize(
        frame, datasets.ADULT_QI, "education", l=5, nonsensitive=["HS-grad", "Some-college"]
    )
    rules = mine_rules(frame, qi=datasets.ADULT_QI, sa="education", min_support=3)
    model = MaxEntModel(release)
    model.add(rules.top(150, 150))
    result = model.solve()
    assert result.solver_stats["solver"] == "MAXENT"
    assert result.solver_stats["forced_zeros"] == {"dual certificate": 0, "LP": 0}
    assert set(np.flatnonzero(result.x == 0).tolist()) == _all_forced_zeros(model)
    ref = model.solve(solver="ECOS")
    assert (result.posterior() - ref.posterior()).abs().to_numpy().max() <= 1e-6


def test_refuses_soft_facts_naming_them(figure1):
    figure1.add(soft(figure1.P("Flu", gender="male") == 0.3, 1.0), name="soft flu")
    with pytest.raises(UnsupportedModel, match="'soft flu'.*CLARABEL"):
        figure1.solve(solver="maxent")
    assert figure1.solve().solver_stats["solver"] == "CLARABEL"  # the default falls back


def test_refuses_convex_facts(figure1):
    import cvxpy as cp

    figure1.add(cp.square(figure1.P("Flu", gender="male")) <= 0.25, name="square")
    with pytest.raises(UnsupportedModel, match="'square'"):
        figure1.solve(solver="maxent")


def test_infeasible_facts_are_reported(figure1):
    figure1.add(figure1.P("Flu", gender="male") == 0.3, name="a")
    figure1.add(figure1.P("Flu", gender="male") == 0.5, name="b")
    with pytest.raises(InfeasibleKnowledge) as info:
        figure1.solve(solver="maxent")
    assert set(info.value.conflicts["fact"]) == {"a", "b"}


def test_inequalities_match_clarabel(figure1):
    from maxent_privacy import vague

    figure1.add(vague(figure1.P("Flu", gender="male"), 0.5, 0.1), name="v")
    figure1.add(figure1.P("Lung Cancer", degree="college") <= 0.1, name="lc")
    ours, ref = figure1.solve(solver="maxent"), figure1.solve(solver="CLARABEL")
    assert np.abs(ours.x - ref.x).max() <= 1e-7
    assert list(ours.duals.index) == list(ref.duals.index)
    assert np.allclose(ours.duals.to_numpy(float), ref.duals.to_numpy(float), atol=1e-6)


def test_wang_figure1_pooled_with_maxent():
    from maxent_privacy import Bucketized

    d1, d2 = datasets.wang2008_figure1()
    kw = dict(qi=["gender", "zip"], sa="disease", group="bucket", person="pseudonym")
    model = MaxEntModel([Bucketized(d1, **kw), Bucketized(d2, **kw)])
    post = model.solve(solver="maxent").person_posterior()
    assert post.loc[10, "Lung Cancer"] == pytest.approx(1.0, abs=1e-12)
    assert post.loc[11, "Pneumonia"] == pytest.approx(0.5, abs=1e-12)
    assert post.loc[11, "Flu"] == 0.0


def test_dask_local_cluster_gives_the_same_posterior():
    distributed = pytest.importorskip("dask.distributed")
    frame = datasets.du2008_adult(n=2000)
    from maxent_privacy import anonymize

    release = anonymize.anatomize(
        frame, datasets.ADULT_QI, "education", l=4, nonsensitive=["HS-grad", "Some-college"]
    )
    rules = mine_rules(frame, qi=datasets.ADULT_QI, sa="education", attributes=2)
    model = MaxEntModel(release)
    model.add(rules.top(60, 60))
    local = model.solve()
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        remote = model.solve(client=client, progress=False)
    assert remote.solver_stats["solver"] == "MAXENT"
    diff = (local.posterior() - remote.posterior()).abs().to_numpy().max()
    assert diff <= 1e-9
    assert remote.certificate.primal_residual <= 1e-9


def test_client_needs_maxent(figure1):
    with pytest.raises(ValueError, match="maxent"):
        figure1.solve(solver="ECOS", client=object())


def test_progress_bar_on_request(figure1, capsys):
    figure1.add(figure1.P("Flu", gender="male") == 0.3)
    figure1.solve(progress=True)
    figure1.solve(solver="CLARABEL", progress=True)
    err = capsys.readouterr().err
    assert "maxent" in err and "CLARABEL" in err and "100%" in err
    figure1.solve()  # small: no bar by default
    assert "100%" not in capsys.readouterr().err


def test_placements_of_generalized_releases_go_to_maxent(monkeypatch):
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "releases"))
    from test_pooled_bruteforce import releases_of

    from maxent_privacy.solve import placements

    frame = pd.DataFrame(
        {
            "pid": ["p0", "p1", "p2", "p3"],
            "age": [20, 21, 22, 23],
            "sex": ["F", "F", "M", "M"],
            "s": ["a", "b", "a", "c"],
            "b": [1, 1, 2, 2],
            "g": [1, 2, 1, 2],  # age cells [20-22] and [21-23] overlap: placements
        }
    )
    bucket, general, population = releases_of(frame)
    model = MaxEntModel([bucket, general], populations=[None, population])
    assert (model.structure.placement_of >= 0).any()
    ours = model.solve()
    assert ours.solver_stats["solver"] == "MAXENT"
    ref = model.solve(solver="CLARABEL")
    np.testing.assert_allclose(ours.x, ref.x, atol=1e-6)
    # too many joint cells (candidate groups multiplied across releases): refused
    monkeypatch.setattr(placements, "JOINT_MAX_FACTOR", 0)
    with pytest.raises(UnsupportedModel, match="joint cells.*CLARABEL"):
        model.solve(solver="maxent")
    assert model.solve().solver_stats["solver"] == "CLARABEL"
