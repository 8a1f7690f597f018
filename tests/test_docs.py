"""The README's tour and the docstring examples run as written."""

import doctest
import importlib
import pathlib
import pkgutil
import re

import numpy as np
import pytest

import maxent_privacy

ROOT = pathlib.Path(__file__).resolve().parents[1]
#: every module of the package, subpackages included (maxent_privacy.solve.*): none rots
MODULES = ["maxent_privacy"] + sorted(
    m.name for m in pkgutil.walk_packages(maxent_privacy.__path__, "maxent_privacy.")
)


def _param(name):
    return name


def test_every_module_is_listed():
    for name in ("maxent_privacy.model", "maxent_privacy.solve", "maxent_privacy.solve.presolve"):
        assert name in MODULES


@pytest.mark.parametrize("name", [_param(name) for name in MODULES])
def test_docstring_examples(name):
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as err:  # an optional dependency of that module
        if err.name and err.name.split(".")[0] == "maxent_privacy":
            raise
        pytest.skip(f"{name} needs {err.name}")
    failures, tried = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert failures == 0


def test_readme_tour_runs():
    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert blocks, "the README has no python example"
    namespace: dict = {}
    exec(compile(blocks[0], "README.md", "exec"), namespace)  # noqa: S102
    result = namespace["result"]
    assert result.certificate.primal_residual <= 1e-6
    assert result.posterior().shape[1] == 16
    assert result.duals["doctorates"] == result.duals["doctorates"]  # a number, not NaN


def test_readme_knowledge_example_runs():
    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    namespace: dict = {}
    block = next(b for b in blocks if "person_posterior" in b and "Alice" in b)
    exec(compile(block, "README.md", "exec"), namespace)  # noqa: S102
    result = namespace["result"]
    assert result.certificate.primal_residual <= 1e-6
    post = result.person_posterior()
    assert post.loc["Alice", ["HIV", "Flu"]].sum() == pytest.approx(1, abs=1e-6)
    assert post.loc[["Alice", "Bob"], "Pneumonia"].sum() >= 1 - 1e-6


def test_readme_republishing_example_runs():
    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    namespace: dict = {}
    block = next(b for b in blocks if "inference_channels" in b)
    exec(compile(block, "README.md", "exec"), namespace)  # noqa: S102
    assert namespace["pooled"].person_posterior().loc[10, "Lung Cancer"] == 1.0
    assert 10 in namespace["channels"].index.get_level_values("person")


def test_readme_m_invariance_example_runs():
    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    namespace: dict = {}
    block = next(b for b in blocks if "m_invariant" in b)
    exec(compile(block, "README.md", "exec"), namespace)  # noqa: S102
    assert namespace["r2"].counterfeit_counts().tolist() == [0, 1]
    post = namespace["MaxEntModel"]([namespace["r1"], namespace["r2"]]).solve()
    assert post.person_posterior().loc[3].tolist() == pytest.approx([0.5, 0.5], abs=1e-9)


def test_readme_tables_example_runs():
    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    namespace: dict = {}
    block = next(b for b in blocks if "Tabulated(" in b)
    exec(compile(block, "README.md", "exec"), namespace)  # noqa: S102
    result, model = namespace["result"], namespace["model"]
    assert result.certificate["verified"]
    table = result.table().set_index(["region", "sex"])["count"]
    assert table.loc[("S", "F")] == pytest.approx(6, abs=1e-6)
    assert model.reconstruction()["certain_records"] == 18


def test_readme_starts_with_the_two_commands():
    lines = (ROOT / "README.md").read_text().splitlines()
    block = lines[lines.index("```bash") + 1 : lines.index("```bash") + 3]
    assert block[0].endswith("maxent-privacy demo")
    assert "[test]" in block[1] and "pytest" in block[1]
    ci = (ROOT / ".ci" / "run").read_text()
    assert block[1] in ci


def test_readme_distributed_example_runs(tmp_path, monkeypatch):
    pytest.importorskip("dask.distributed")
    pytest.importorskip("pyarrow")
    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    block = next(b for b in blocks if "solve_distributed" in b)
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "__main__"}
    exec(compile(block, "README.md", "exec"), namespace)  # noqa: S102
    result = namespace["result"]
    assert result.certificate.primal_residual < 1e-6
    posterior = result.person_posterior().compute()
    assert len(posterior) == posterior["person"].nunique() > 40_000
    values = posterior.drop(columns="person").to_numpy()
    np.testing.assert_allclose(values.sum(axis=1), 1.0, atol=1e-6)
    assert sorted(p.name for p in (tmp_path / "answer").iterdir()) == [
        ".maxent_privacy_results",
        "certificate.json",
        "components",
        "posterior",
        "risk",
    ]
