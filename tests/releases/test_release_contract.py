"""One contract for every release kind (issue 38, item 3): each kind registered in
``RELEASE_KINDS`` meets the ``Release`` protocol, the model builds from it, the original
data meets every data constraint of the model, person ids round-trip, and a bad table is a
one-line ``ReleaseError``. A new kind adds its example to ``EXAMPLES``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest

from maxent_privacy import Bucketized, Generalized, MaxEntModel, ReleaseError, datasets
from maxent_privacy._validation import ArgumentError
from maxent_privacy.releases import RELEASE_KINDS, Release, register_release_kind
from maxent_privacy.releases.kinds import unregister_release_kind
from maxent_privacy.releases.protocol import DATA, DERIVED, group_counts

QI, SA, GROUP, PERSON = ["gender", "degree"], "disease", "bucket", "name"


@dataclass
class Example:
    """A small release of one kind and the original table it was made from."""

    make: Callable[[pd.DataFrame], object]  # the kind, from a published table
    published: pd.DataFrame  # the table as the kind reads it
    truth: pd.DataFrame  # one row per person: PERSON, exact QI, SA, GROUP
    populations: list | None = None

    @property
    def release(self):
        return self.make(self.published)


def _bucketized() -> Example:
    """Figure 1 of Du et al. (SIGMOD 2008), with the names as person ids."""
    frame = datasets.du2008_figure1()
    return Example(lambda f: Bucketized(f, QI, SA, GROUP, person=PERSON), frame, frame)


def _generalized() -> Example:
    """Figure 1 of Du et al. k-anonymized: in each bucket, the degrees of one gender
    published as their set; the population lists everyone's exact QI."""
    frame = datasets.du2008_figure1()

    def cell(values: pd.Series) -> str:
        distinct = sorted(set(values))
        return distinct[0] if len(distinct) == 1 else "{" + ", ".join(distinct) + "}"

    published = frame.assign(degree=frame.groupby([GROUP, "gender"])["degree"].transform(cell))
    population = frame.set_index(PERSON)[QI]
    return Example(
        lambda f: Generalized(f, QI, SA, GROUP, person=PERSON),
        published,
        frame,
        [population],
    )


#: kind name -> its example (every registered kind has one)
EXAMPLES = {"bucketized": _bucketized, "generalized": _generalized}


@pytest.fixture(params=sorted(EXAMPLES))
def kind(request):
    return request.param


@pytest.fixture
def example(kind) -> Example:
    return EXAMPLES[kind]()


@pytest.fixture
def model(example) -> MaxEntModel:
    return MaxEntModel(example.release, populations=example.populations)


def _truth_table(model: MaxEntModel, truth: pd.DataFrame) -> np.ndarray:
    """The cell values of the original data: each person counts on the one cell of their
    record class and true value (the examples' people each sit in one group)."""
    s = model.structure
    cls = s.person_class.reindex(truth[PERSON]).to_numpy(dtype=np.int64)
    sa = model.cells[SA].to_numpy()
    x = np.zeros(s.n_cells)
    for c, value in zip(cls, truth[SA], strict=True):
        (hit,) = np.nonzero((s.cell_class == c) & (sa == value) & s.person_cell)
        assert len(hit) == 1, f"class {c} has {len(hit)} cells of {value!r}"
        x[hit] += 1
    return x


def test_every_registered_kind_has_an_example():
    assert sorted(RELEASE_KINDS) == sorted(EXAMPLES)


def test_a_kind_meets_the_protocol(kind, example):
    release = example.release
    assert isinstance(release, RELEASE_KINDS[kind])
    assert isinstance(release, Release)
    assert all(hasattr(RELEASE_KINDS[kind], m) for m in DERIVED)
    assert (release.qi, release.sa, release.group, release.person) == (QI, SA, GROUP, PERSON)
    assert set(QI + [SA, GROUP, PERSON]) <= set(release.frame.columns)
    assert release.n_records == len(release.frame) == len(example.truth)
    assert release.n_people == len(release.people) == len(example.truth)
    assert release.n_groups == release.frame[GROUP].nunique()
    assert release.sa_values == sorted(example.truth[SA].unique(), key=str)
    counts = group_counts(release)
    assert counts.to_numpy().sum() == release.n_records
    assert list(counts.columns) == release.sa_values


def test_an_object_without_a_member_is_no_release(example):
    release = example.release

    class Partial:
        pass

    partial = Partial()
    for name in DATA:
        setattr(partial, name, getattr(release, name))
    assert not isinstance(partial, Release)  # the computed members are missing


def test_the_model_builds_and_solves(example, model):
    assert model.structure.n_cells > 0
    assert model.n_records == len(example.truth)
    assert model.qi == QI and model.sa == SA
    posterior = model.solve().person_posterior()
    assert np.allclose(posterior.sum(axis=1), 1.0)


def test_the_original_data_meets_every_data_constraint(example, model):
    x = _truth_table(model, example.truth)
    A, b, rows = model.invariant_matrix(drop_redundant=False)
    assert A.shape == (len(rows), model.n_cells)
    assert np.allclose(A @ x, b), rows[~np.isclose(A @ x, b)]
    assert x.sum() == len(example.truth)


def test_person_ids_round_trip(example, model):
    truth = example.truth.set_index(PERSON)
    person_class = model.structure.person_class
    assert sorted(person_class.index) == sorted(truth.index)
    classes = model.classes.iloc[person_class.reindex(truth.index).to_numpy(dtype=np.int64)]
    assert classes[QI].to_numpy().tolist() == truth[QI].to_numpy().tolist()
    posterior = model.solve().person_posterior()
    assert sorted(posterior.index) == sorted(truth.index)
    alice = model.person(truth.index[0])
    assert alice.qi == truth.loc[truth.index[0], QI].to_dict()


def _missing_sa(f):
    return f.drop(columns=SA)


def _missing_group_cell(f):
    return f.assign(**{GROUP: f[GROUP].astype(object).where(f.index != 2, None)})


def _person_twice(f):
    return f.assign(**{PERSON: f[PERSON].where(f.index != 1, f[PERSON].iloc[0])})


def _list_cell(f):
    out = f.astype({"gender": object})
    out.at[out.index[0], "gender"] = ["male", "female"]
    return out


BAD = {
    "not a table": (lambda f: f.to_dict("records"), "DataFrame"),
    "no sensitive column": (_missing_sa, repr(SA)),
    "a missing group cell": (_missing_group_cell, repr(GROUP)),
    "a person id twice": (_person_twice, repr(PERSON)),
    "a list in a QI cell": (_list_cell, "'gender'"),
    "no rows": (lambda f: f.iloc[:0], "no rows"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_input_is_one_line_release_error(example, case):
    spoil, named = BAD[case]
    with pytest.raises(ReleaseError) as caught:
        example.make(spoil(example.published.copy()))
    message = str(caught.value)
    assert "\n" not in message and named in message, message


def test_the_model_refuses_what_is_no_release_in_one_line():
    with pytest.raises(ReleaseError) as caught:
        MaxEntModel(datasets.du2008_figure1())
    assert "\n" not in str(caught.value) and "DataFrame" in str(caught.value)


def test_a_kind_is_registered_once_and_checked():
    class Counts:
        """A counts table would be: the computed members of the protocol."""

        people = n_records = n_groups = n_people = sa_values = property(lambda self: None)

    try:
        assert register_release_kind("counts", Counts) is Counts
        assert RELEASE_KINDS["counts"] is Counts
        with pytest.raises(ArgumentError, match="'counts' is registered"):
            register_release_kind("counts", Counts)
    finally:
        unregister_release_kind("counts")
    assert "counts" not in RELEASE_KINDS

    class Bare:
        n_records = 0

    with pytest.raises(ArgumentError, match="Bare lacks people, n_groups, n_people, sa_values"):
        register_release_kind("bare", Bare)
    with pytest.raises(ArgumentError, match="kind must be a class"):
        register_release_kind("bare", Bare())
    with pytest.raises(ArgumentError, match="name must be a non-empty text"):
        register_release_kind("", Bare)
    assert "bare" not in RELEASE_KINDS
