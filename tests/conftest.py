import pytest

from maxent_privacy import Bucketized, MaxEntModel, datasets


@pytest.fixture
def figure1():
    return datasets.du2008_figure1()


@pytest.fixture
def release(figure1):
    return Bucketized(figure1, qi=["gender", "degree"], sa="disease", group="bucket")


@pytest.fixture
def model(release):
    return MaxEntModel(release)
