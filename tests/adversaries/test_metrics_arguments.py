"""Issue 22, item 5: ``metrics.breaches`` checks its threshold and ``by`` at the boundary
(a text threshold gave Python's "'<' not supported between 'int' and 'str'")."""

from __future__ import annotations

import math

import pytest

from maxent_privacy import Bucketized, MaxEntModel, datasets, metrics
from maxent_privacy._validation import ArgumentError


@pytest.fixture(scope="module")
def result():
    release = Bucketized(
        datasets.du2008_figure1(), qi=["gender", "degree"], sa="disease", group="bucket"
    )
    return MaxEntModel(release).solve()


@pytest.mark.parametrize("bad", ["abc", None, math.nan, 0, 1.5, True])
def test_breaches_threshold(result, bad):
    with pytest.raises(ArgumentError, match=r"^threshold must be a number in \(0, 1\], got "):
        metrics.breaches(result, bad)


def test_breaches_by(result):
    with pytest.raises(ArgumentError, match="^by must be None, 'group', 'person' or 'class'"):
        metrics.breaches(result, 0.5, by="people")
    with pytest.raises(ArgumentError, match="^worst_case must be True or False, got 'x'$"):
        metrics.breaches(result, 0.5, worst_case="x")
    assert len(metrics.breaches(result, 0.5, by="group")) > 0
