"""The cross-version attacks are special cases of the pooled maximum-entropy model.

Every (person, value) that the intersection or the difference attack pins down has pooled
posterior 1. The model also captures what the attacks miss: it propagates through every
release at once (Wang et al.'s Example 1 is such a chain), eliminates values by counting
(a value can be left to a person only if the bucket still needs it), and gives partial
disclosure (posteriors between 0 and 1), none of which a yes/no attack reports.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_attacks import _scenario

from maxent_privacy import MaxEntModel, attacks, datasets


def pooled_posterior(releases, populations):
    pops = [p.set_index("pid")[["age", "sex"]] if "pid" in p.columns else p for p in populations]
    return MaxEntModel(list(releases), populations=pops).solve().person_posterior()


def test_byun_findings_have_posterior_one():
    t = datasets.byun2008_tables()
    rels, pops = t["releases"], [p.set_index("name") for p in t["populations"]]
    post = MaxEntModel(list(rels), populations=pops).solve().person_posterior()
    found = set(attacks.intersection(t["releases"], t["populations"])["person"])
    found |= set(attacks.difference(t["releases"], t["populations"], 2, 2)["person"])
    assert {"Bob", "Eve", "Hank", "Sal", "Alice"} <= found
    for who, value in [
        ("Bob", "Alzheimer"),
        ("Eve", "Diabetes"),
        ("Hank", "Hepatitis"),
        ("Sal", "Flu"),
        ("Alice", "Cancer"),
    ]:
        assert post.loc[who, value] == pytest.approx(1.0, abs=1e-9)
    # the model sees partial disclosure too: Tom and Mike are each Asthma or Flu
    assert post.loc["Tom", ["Asthma", "Flu"]].sum() == pytest.approx(1.0, abs=1e-9)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**32 - 1),
    sizes=st.lists(st.integers(0, 4), min_size=1, max_size=2),
    start=st.integers(2, 7),
    spread=st.integers(0, 2),
    k=st.integers(1, 3),
)
def test_every_attack_finding_has_pooled_posterior_one(seed, sizes, start, spread, k):
    import itertools

    rng = np.random.default_rng(seed)
    prefix = list(itertools.accumulate([start, *sizes]))
    people, releases, populations = _scenario(rng, prefix, spread=spread)
    post = pooled_posterior(releases, populations)
    for table in (
        attacks.intersection(releases, populations),
        attacks.difference(releases, populations, k, 0.5),
    ):
        for who, value, cands in zip(
            table["person"], table["inferred"], table["candidates"], strict=True
        ):
            if value is not None and value == value:  # a value pinned down
                assert post.loc[who, value] == pytest.approx(1.0, abs=1e-6), (who, value)
            # the values the attack rules out have pooled posterior 0 as well
            others = [v for v in post.columns if v not in set(cands)]
            assert post.loc[who, others].sum() == pytest.approx(0.0, abs=1e-6), (who, cands)
