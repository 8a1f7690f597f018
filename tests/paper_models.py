"""Small models the tests share (import ``from paper_models import ...``; the tests folder
is on the path through its conftest)."""

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from maxent_privacy import Bucketized, Generalized, MaxEntModel, datasets
from maxent_privacy.mondrian import mondrian

#: the quasi-identifiers of :func:`mondrian_pair`
MONDRIAN_QI = ["age", "sex", "race", "marital_status", "relationship"]

#: an ARX-style generalized release: three equivalence classes (cells as ARX writes them)
ARX = pd.DataFrame(
    {
        "age": ["20-29", "20-29", "20-29", "30-39", "30-39", "40-49", "40-49"],
        "zip": ["021**", "021**", "021**", "021**", "021**", "022**", "022**"],
        "d": ["Flu", "Flu", "HIV", "Cold", "Cold", "Flu", "Asthma"],
        "g": [1, 1, 1, 2, 2, 3, 3],
    }
)
#: its population (one person per record), exact QI values
ARX_PEOPLE = pd.DataFrame(
    {
        "age": [21, 25, 28, 33, 37, 41, 45],
        "zip": ["02139", "02138", "02141", "02139", "02140", "02215", "02216"],
    },
    index=pd.Index(list("ABCDEFG"), name="name"),
)


def three_release_frames() -> list:
    """The example of ``solve/support.py``'s docstring: five people in three bucketized
    releases (columns pid, q, s, g) where P0 holds b in no world, which only the three
    releases together show."""
    return [
        pd.DataFrame({"pid": p, "q": 0, "s": s, "g": g})
        for p, s, g in [
            ([2, 3, 0], ["a", "b", "a"], [0, 0, 0]),
            ([4, 3, 2, 0, 1], ["a", "b", "a", "a", "b"], [0, 0, 1, 1, 1]),
            ([4, 0, 1], ["a", "a", "b"], [0, 0, 0]),
        ]
    ]


def figure1_model(person="name", knowledge=True) -> MaxEntModel:
    """Du et al. Figure 1 (person ids by ``person``), with the knowledge
    P(Breast Cancer | male) = 0 unless ``knowledge`` is False."""
    release = Bucketized(
        datasets.du2008_figure1(),
        qi=["gender", "degree"],
        sa="disease",
        group="bucket",
        person=person,
    )
    model = MaxEntModel(release)
    if knowledge:
        model.add(model.P("Breast Cancer", gender="male") == 0)
    return model


def figure1_result(person="name", knowledge=True):
    """:func:`figure1_model`, solved."""
    return figure1_model(person, knowledge).solve()


def two_box_model() -> MaxEntModel:
    """Six people (sex, age) and one generalized release of two overlapping age boxes,
    read with the population: people 30-35 may sit in either group."""
    people = pd.DataFrame(
        {"sex": ["F", "M", "F", "M", "F", "M"], "age": [20, 25, 30, 35, 40, 45]},
        index=pd.Index([f"p{i}" for i in range(6)], name="pid"),
    )
    rows = pd.DataFrame(
        {
            "sex": ["{F, M}"] * 6,
            "age": ["[20-35]"] * 3 + ["[30-45]"] * 3,
            "s": ["a", "b", "a", "b", "b", "c"],
            "g": [1, 1, 1, 2, 2, 2],
        }
    )
    release = Generalized(rows, qi=["sex", "age"], sa="s", group="g")
    return MaxEntModel(release, populations=people)


def mondrian_pair(n: int, seed: int, relaxed: bool = True) -> MaxEntModel:
    """Two Mondrian releases (overlapping boxes when ``relaxed``) of 80 % samples of
    ``n`` Adult people, ``education`` sensitive, published without person ids, with
    their populations."""
    adult = datasets.load_adult()
    rng = np.random.default_rng(seed)
    people = adult.iloc[rng.choice(len(adult), n, replace=False)].reset_index(drop=True)
    people.index = pd.Index([f"p{i}" for i in range(n)], name="pid")
    qi = MONDRIAN_QI
    releases, populations = [], []
    for r in range(2):
        sub = people.iloc[np.sort(rng.choice(n, int(0.8 * n), replace=False))]
        frame = sub[qi + ["education"]].reset_index(drop=True)
        releases.append(mondrian(frame, qi, "education", k=3 + r, c=0.6, relaxed=relaxed))
        populations.append(sub[qi])
    return MaxEntModel(releases, populations=populations)


def benchmark(name: str):
    """The module ``benchmarks/<name>.py``, loaded from its file (``sys.path`` is left
    alone: the benchmarks folder on the path would shadow installed packages, as a
    ``distributed.py`` there once hid Dask's in spawned workers)."""
    key = f"_benchmark_{name}"
    if key not in sys.modules:
        path = Path(__file__).resolve().parents[1] / "benchmarks" / f"{name}.py"
        spec = importlib.util.spec_from_file_location(key, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[key] = module
        spec.loader.exec_module(module)
    return sys.modules[key]
