"""A component solved on a worker keeps the values under a name of ours (issue 39, item
3): a sensitive column named like one of the model's own columns (``n``, ``person``,
``cls``) is refused by the in-memory model, which read ``n`` as the class sizes."""

from __future__ import annotations

import pandas as pd
import pytest

from maxent_privacy.distributed.solve import solve_component


def rows() -> pd.DataFrame:
    """Two releases of persons 1, 2, 3: {1, 2} share a group in the first, {2, 3} in the
    second; values flu, hiv, flu, hiv (codes 0, 1)."""
    return pd.DataFrame(
        {
            "person": [1, 2, 3, 1, 2, 3],
            "age": [30, 31, 32, 30, 31, 32],
            "__group__": [1, 1, 2, 5, 6, 6],
            "s": [0, 1, 0, 0, 1, 0],
            "release": [0, 0, 0, 1, 1, 1],
        }
    )


@pytest.mark.parametrize("sa", ["n", "person", "cls", "kind", "s", "__value__"])
def test_any_sensitive_name_gives_the_same_component(sa):
    want, want_risk, _ = solve_component(rows(), ["age"], "disease", ["flu", "hiv"])
    post, risk, summary = solve_component(rows(), ["age"], sa, ["flu", "hiv"])
    pd.testing.assert_frame_equal(post, want)
    pd.testing.assert_frame_equal(risk, want_risk)
    # person 1 holds flu (release 2: alone with it), 2 hiv, 3 flu: every value certain
    assert post["flu"].tolist() == pytest.approx([1.0, 0.0, 1.0])
    assert summary["persons"] == 3
