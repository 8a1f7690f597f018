"""Knowledge on a model of tables: shares, counts, vague shares and knowledge files are
linear rows on the counts; the bounds they give are checked against enumeration."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from maxent_privacy import KnowledgeError, MaxEntModel, Tabulated, vague
from maxent_privacy.knowledge.parser import (
    KnowledgeFileError,
    apply_knowledge,
    parse_knowledge,
)


def _tables():
    ages = Tabulated(pd.DataFrame({"age": [25, 35, 45], "count": [2, 1, 1]}), qi=["age"])
    flu = Tabulated(
        pd.DataFrame(
            {
                "age": ["20-39", "20-39", "40-59", "40-59"],
                "d": ["flu", "ok", "flu", "ok"],
                "count": [1, 2, "x", "x"],
            }
        ),
        qi=["age"],
        sa="d",
    )
    return ages, flu


def _enumerate(keep) -> dict:
    """Every whole table over (age, d) with the published rows and ``keep(table)``:
    the lowest and highest count of each combination."""
    combos = [(a, d) for a in (25, 35, 45) for d in ("flu", "ok")]
    low = dict.fromkeys(combos, np.inf)
    high = dict.fromkeys(combos, -np.inf)
    for counts in itertools.product(range(3), repeat=len(combos)):
        t = dict(zip(combos, counts, strict=True))
        ok = (
            t[25, "flu"] + t[25, "ok"] == 2
            and t[35, "flu"] + t[35, "ok"] == 1
            and t[45, "flu"] + t[45, "ok"] == 1
            and t[25, "flu"] + t[35, "flu"] == 1
            and t[25, "ok"] + t[35, "ok"] == 2
            and keep(t)
        )
        if ok:
            for c in combos:
                low[c], high[c] = min(low[c], t[c]), max(high[c], t[c])
    return {c: (low[c], high[c]) for c in combos}


def _check(model, keep):
    bounds = model.bounds(by="cell", exact=True)
    for (age, d), (lo, hi) in _enumerate(keep).items():
        assert tuple(bounds.loc[(age, d), ["lower", "upper"]]) == (lo, hi), (age, d)


def test_a_share_is_a_row_on_the_counts():
    model = MaxEntModel(list(_tables()))
    model.add(model.P("flu", age=25) >= 0.5)
    _check(model, lambda t: t[25, "flu"] >= 0.5 * (t[25, "flu"] + t[25, "ok"]))
    assert [f.name for f in model.facts] == ["P(flu | age=25) >= 0.5"]


def test_a_generalized_condition_and_a_count():
    model = MaxEntModel(list(_tables()))
    model.add(model.P("flu", age="40-59") == 0)
    model.add(model.count(age=35, d="ok") >= 1, name="the 35-year-old is well")
    _check(model, lambda t: t[45, "flu"] == 0 and t[35, "ok"] >= 1)


def test_vague_knowledge_and_a_knowledge_file():
    model = MaxEntModel(list(_tables()))
    model.add(vague(model.P("flu", age=45), 0.0, 0.1))
    names = apply_knowledge(model, parse_knowledge('P(d="flu" | age=35) <= 0.5\n'))
    assert names == ['P(d="flu" | age=35) <= 0.5']
    _check(model, lambda t: t[45, "flu"] == 0 and t[35, "flu"] == 0)
    result = model.solve()
    assert result.certificate["verified"]
    # one free count a = flu at 25: the table (a, 2 - a, 1 - a, a) at 25 and 35; its
    # entropy is largest where a^2 = (2 - a)(1 - a), a = 2/3 (the 35's flu, 1/3, stays
    # under the fact's 0.5)
    table = result.table().set_index(["age", "d"])["count"]
    assert table.loc[(25, "flu")] == pytest.approx(2 / 3, abs=1e-6)
    assert table.loc[(35, "flu")] == pytest.approx(1 / 3, abs=1e-6)


def test_bad_knowledge_is_one_line():
    model = MaxEntModel(list(_tables()))
    with pytest.raises(KnowledgeError) as err:
        model.P("flu", age=99)
    assert "\n" not in str(err.value) and "99" in str(err.value)
    with pytest.raises(KnowledgeError):
        model.P("flu", age=25) + model.P("flu", age=35)
    with pytest.raises(KnowledgeError):
        model.add(model.P("flu", age=25) <= 1.5)
    with pytest.raises(KnowledgeError):
        model.person("Ann", age=25)
    before = len(model.facts)
    with pytest.raises(KnowledgeFileError):
        apply_knowledge(model, parse_knowledge('P(d="flu" | age=25) <= 0.5\nP(d="x") = 1\n'))
    assert len(model.facts) == before
