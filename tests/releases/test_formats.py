"""Generalized cells as ARX and sdcMicro write them, per-column formats, coverage of each
person's exact QI, and the CLI's --population (issue 15, item 2)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from maxent_privacy import Bucketized, MaxEntModel, ReleaseError, between, datasets
from maxent_privacy.cli import main
from maxent_privacy.generalized import Generalized, covers, find_generalized, parse_cell
from maxent_privacy.mondrian import mondrian


def one_line(excinfo) -> str:
    msg = str(excinfo.value)
    assert "\n" not in msg
    return msg


# -- cells -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "cell, value, expected",
    [
        # prefix masks (ARX): same number of characters, same prefix
        ("021**", "02139", True),
        ("021**", "02239", False),
        ("021**", "0213", False),
        ("021**", "021399", False),
        ("021**", 2139, True),  # a number is zero-padded: 02139
        ("021**", 2139.0, True),
        ("0213*", "02139", True),
        ("0213*", "02130", True),
        ("0213*", "02140", False),
        ("2*", 27, True),
        ("2*", 7, False),
        # ranges
        ("20-29", 20, True),
        ("20-29", 29, True),
        ("20-29", 29.5, False),
        ("20 - 29", "25", True),
        ("20\u201329", 25, True),
        ("-5--1", -3, True),
        ("[20-29]", 29, True),
        ("[20, 29]", 29, True),
        ("[20, 30[", 30, False),
        ("[20, 30[", 29.99, True),
        ("[20, 30[", 20, True),
        ("]20, 30]", 20, False),
        ("]20, 30]", 30, True),
        ("(20, 30]", 20, False),
        ("(20, 30]", 30, True),
        ("[20, 30)", 30, False),
        ("(20, 30)", 25, True),
        ("[80, inf[", 120, True),
        ("(-Inf, 20]", -1e9, True),
        ("[20, 30[", "abc", False),
        # inequalities
        ("<30", 29.9, True),
        ("<30", 30, False),
        ("< 30", 12, True),
        ("<=30", 30, True),
        ("\u226430", 30, True),
        (">60", 60, False),
        (">60", 61, True),
        (">=60", 60, True),
        ("\u226560", 60, True),
        (">=60", "x", False),
        # suppression and sets
        ("*", "anything", True),
        ("*****", "02139", True),
        ("**", 7, True),
        ("{a,b}", "b", True),
        ("{a, b}", "c", False),
        ("{20, 21}", 21, True),
        # exact values that merely look like something
        ("<=50K", "<=50K", True),
        ("<=50K", 40, False),
        ("7th-8th", "7th-8th", True),
        ("2020-01-05", "2020-01-05", True),
        ("-5", -5, True),
        ("1e-3", 0.001, True),
        ("Smith, John", "Smith, John", True),
        ("(none)", "(none)", True),
    ],
)
def test_auto_cells(cell, value, expected):
    assert covers(cell, value) is expected


@pytest.mark.parametrize(
    "cell, kind",
    [
        ("021**", "mask"),
        ("20-29", "interval"),
        ("[20, 30[", "interval"),
        ("<30", "interval"),
        (">=60", "interval"),
        ("*", "any"),
        ("***", "any"),
        ("{a, b}", "set"),
        ("[20-29]", "interval"),
        ("25", "exact"),
        (25, "exact"),
        ("Male", "exact"),
    ],
)
def test_kinds(cell, kind):
    assert parse_cell(cell).kind == kind


def test_bounds_and_openness():
    c = parse_cell("[20, 30[")
    assert (c.lo, c.hi, c.lo_open, c.hi_open) == (20.0, 30.0, False, True)
    c = parse_cell(">60")
    assert (c.lo, c.hi, c.lo_open) == (60.0, np.inf, True)
    c = parse_cell("021**")
    assert (c.values, c.width) == (("021",), 5)


def test_formats_ours_and_none():
    # ours: the ARX forms are exact values (the old reading)
    assert parse_cell("20-29", formats="ours").kind == "exact"
    assert parse_cell("021**", formats="ours").kind == "exact"
    assert parse_cell("[20-29]", formats="ours").kind == "interval"
    assert not covers("20-29", 25, formats="ours")
    assert covers("20-29", "20-29", formats="ours")
    # None: every cell an exact value, even ours
    for cell in ("[20-29]", "*", "{a, b}", "<30"):
        assert parse_cell(cell, formats=None).kind == "exact"
    assert covers("[20-29]", "[20-29]", formats=None)
    assert not covers("*", "x", formats=None)


@pytest.mark.parametrize(
    "cell, words",
    [
        ("29-20", ["'age'", "'29-20'", "empty interval", "above upper bound"]),
        ("[30, 20[", ["'age'", "empty interval"]),
        ("[20, 20[", ["'age'", "empty interval"]),
        ("[20, 30", ["'age'", "malformed interval"]),
        ("[a, b]", ["'age'", "malformed interval"]),
        ("(a, b)", ["'age'", "malformed interval"]),
        ("[inf, 3]", ["'age'", "bad bound"]),
        ("1e999-2", ["'age'", "infinite bound"]),
        ("<1e999", ["'age'", "infinite bound"]),
    ],
)
def test_malformed_auto_cells_name_column_and_cell(cell, words):
    with pytest.raises(ReleaseError) as e:
        parse_cell(cell, column="age")
    msg = one_line(e)
    for word in words:
        assert word in msg


def test_bad_formats_argument():
    frame = pd.DataFrame({"age": ["20-29"], "d": ["x"], "g": [1]})
    with pytest.raises(ReleaseError, match="formats must be 'auto', 'ours' or None"):
        Generalized(frame, ["age"], "d", "g", formats="arx")
    with pytest.raises(ReleaseError, match="formats names column 'zip'"):
        Generalized(frame, ["age"], "d", "g", formats={"zip": None})
    with pytest.raises(ReleaseError, match="formats must be"):
        Generalized(frame, ["age"], "d", "g", formats={"age": "x"})


# -- releases --------------------------------------------------------------------------
def small_release(**kw) -> Generalized:
    frame = pd.DataFrame(
        {
            "pid": ["a", "b", "c", "d"],
            "age": ["20-29", "20-29", ">=30", ">=30"],
            "zip": ["021**", "021**", "*", "*"],
            "sex": ["M", "F", "M", "F"],
            "d": ["Flu", "HIV", "Flu", "Cold"],
            "g": [1, 1, 2, 2],
        }
    )
    return Generalized(frame, ["age", "zip", "sex"], "d", "g", **kw)


def test_generalized_columns_are_recognised_per_column():
    release = small_release()
    assert release.generalized == ["age", "zip"]
    assert release.formats == {"age": "auto", "zip": "auto", "sex": "auto"}
    assert release.cell("zip", "021**").kind == "mask"
    off = small_release(formats={"zip": None})
    assert off.generalized == ["age"] and off.cell("zip", "021**").kind == "exact"
    assert small_release(formats=None).generalized == []


def test_numeric_columns_stay_numeric():
    frame = pd.DataFrame(
        {"age": [25, 31, 31], "code": ["7", "12", "12"], "d": ["a", "b", "c"], "g": [1, 2, 2]}
    )
    release = Generalized(frame, ["age", "code"], "d", "g")
    assert release.generalized == []
    assert release.cell("age", 25) == parse_cell(25)
    people = pd.DataFrame({"id": [1, 2], "age": [25.0, 31], "code": [7, "12"]})
    assert release.compatible(people, "id").values.tolist() == [[1, 1], [2, 2]]


def test_find_generalized():
    frame = pd.DataFrame(
        {"age": ["44", "[44-47]", "50"], "zip": ["02139", "021**", "x"], "sex": list("MFM")}
    )
    assert find_generalized(frame, ["age", "zip", "sex"]) == {"age": "[44-47]", "zip": "021**"}
    assert find_generalized(frame, ["age", "zip"], formats={"zip": None}) == {"age": "[44-47]"}
    assert find_generalized(frame, ["sex"]) == {}
    with pytest.raises(ReleaseError, match="column 'age' has an empty interval"):
        find_generalized(pd.DataFrame({"age": ["29-20"]}), ["age"])


def test_compatible_with_arx_cells():
    release = small_release()
    people = pd.DataFrame(
        {
            "id": ["a", "b", "c", "d", "e"],
            "age": [22, 29, 30, 77, 31],
            "zip": ["02139", "02100", "99999", "02139", "00000"],
            "sex": ["M", "F", "M", "F", "M"],
        }
    )
    pairs = release.compatible(people, "id").values.tolist()
    # each group's rows differ in sex: one class per row, each person in the class of theirs
    assert pairs == [["a", "1/1"], ["b", "1/2"], ["c", "2/1"], ["d", "2/2"], ["e", "2/1"]]


# -- each person's exact QI must be covered by their cell ---------------------------------
def test_uncovered_person_is_refused_with_person_column_value_and_cell():
    release = small_release(person="pid")
    population = pd.DataFrame(
        {
            "age": [22, 29, 30, 41],
            "zip": ["02139", "02238", "99999", "02139"],
            "sex": ["M", "F", "M", "F"],
        },
        index=pd.Index(["a", "b", "c", "d"], name="pid"),
    )
    with pytest.raises(ReleaseError) as e:
        MaxEntModel(release, populations=[population])
    assert one_line(e) == (
        "release 1: person 'b' has zip '02238', which their cell '021**' in column 'zip' "
        "does not cover"
    )
    population.loc["b", "zip"] = "02100"
    result = MaxEntModel(release, populations=[population]).solve()
    # a's row (20-29, 021**, M) carries Flu: each row's cells belong to its own value
    assert result.person_posterior().loc["a", "Flu"] == pytest.approx(1.0, abs=1e-9)


def test_covered_by_exact_values_from_another_release():
    d1 = pd.DataFrame({"pid": ["a", "b"], "age": [25, 35], "d": ["Flu", "HIV"], "g": [1, 1]})
    exact = Bucketized(d1, ["age"], "d", "g", person="pid")
    ok = Generalized(d1.assign(age=["20-29", ">=30"]), ["age"], "d", "g", person="pid")
    MaxEntModel([exact, ok])
    bad = Generalized(d1.assign(age=["<25", ">=30"]), ["age"], "d", "g", person="pid")
    with pytest.raises(ReleaseError) as e:
        MaxEntModel([exact, bad])
    assert "release 2: person 'a' has age 25, which their cell '<25'" in one_line(e)


def test_person_fitting_no_group_names_the_column_and_value():
    release = small_release()
    population = pd.DataFrame(
        {"age": [22, 29, 12, 40], "zip": ["02139"] * 4, "sex": ["M", "F", "M", "F"]},
        index=["a", "b", "c", "d"],
    )
    with pytest.raises(ReleaseError) as e:
        MaxEntModel(release, populations=[population])
    msg = one_line(e)
    assert "release 1: person 'c' of the population fits no group" in msg
    assert "no cell of column 'age' covers age 12" in msg
    population.loc["c", "age"] = 30
    population.loc["c", "sex"] = "X"
    with pytest.raises(ReleaseError, match="no cell of column 'sex' covers sex 'X'"):
        MaxEntModel(release, populations=[population])


# -- acceptance: the same Mondrian release in ARX style and in our syntax ----------------
def _bounds(cell: str) -> tuple[int, int]:
    if cell.startswith("["):
        lo, hi = cell[1:-1].split("-")
        return int(lo), int(hi)
    return int(cell), int(cell)


@pytest.fixture(scope="module")
def mondrian_pair():
    """300 Adult records with a synthetic zip code, Mondrian on (age, sex, zip prefix);
    the release written in our syntax and in ARX style, and the population table."""
    adult = datasets.du2008_adult(300, seed=3).reset_index(drop=True)
    rng = np.random.default_rng(0)
    prefix = rng.choice([21, 22, 100, 148], size=len(adult))
    last = rng.integers(0, 100, len(adult))
    people = pd.DataFrame(
        {
            "pid": [f"p{i:03d}" for i in range(len(adult))],
            "age": adult["age"].to_numpy(),
            "sex": adult["sex"].to_numpy(),
            "zip": [f"{p:03d}{d:02d}" for p, d in zip(prefix, last, strict=True)],
        }
    )
    table = people.assign(zip3=prefix, education=adult["education"].to_numpy())
    # relaxed: classes may overlap, so some people fit several groups
    rel = mondrian(table, ["age", "sex", "zip3"], "education", k=6, c=0.5, relaxed=True)
    f = rel.frame
    amin, amax = int(people["age"].min()), int(people["age"].max())

    def zip_ours(cell):
        lo, hi = _bounds(cell)
        return f"[{lo * 100}-{hi * 100 + 99}]"

    def zip_arx(cell):
        lo, hi = _bounds(cell)  # one prefix: a mask; several: an ARX interval
        return f"{lo:03d}**" if lo == hi else f"[{lo * 100}, {hi * 100 + 100}["

    def age_arx(cell, group):
        if not cell.startswith("["):
            return cell
        lo, hi = _bounds(cell)
        if lo == amin:
            return f"<{hi + 1}"
        if hi == amax:
            return f">={lo}"
        return f"{lo}-{hi}" if group % 2 else f"[{lo}, {hi + 1}["

    ours = pd.DataFrame(
        {
            "age": f["age"],
            "sex": f["sex"],
            "zip": f["zip3"].map(zip_ours),
            "education": f["education"],
            "group": f["group"],
        }
    )
    arx = ours.assign(
        zip=f["zip3"].map(zip_arx),
        age=[age_arx(c, g) for c, g in zip(f["age"], f["group"], strict=True)],
        sex=f["sex"].replace({"{Female, Male}": "*"}),
    )
    return ours, arx, people


def test_arx_release_gives_the_posterior_of_our_syntax(mondrian_pair):
    ours, arx, people = mondrian_pair
    qi = ["age", "sex", "zip"]
    # every ARX form is present
    cells = set(arx["age"]) | set(arx["zip"])
    assert any(c.endswith("**") for c in cells)
    assert any(c.startswith("<") for c in cells) and any(c.startswith(">=") for c in cells)
    assert any(c.endswith("[") for c in cells)
    assert any("-" in c and not c.startswith("[") for c in cells)
    r_ours = Generalized(ours, qi, "education", "group", formats="ours")
    r_arx = Generalized(arx, qi, "education", "group")
    assert {"age", "zip"} <= set(r_arx.generalized)
    pop = people.set_index("pid")
    pairs_ours = r_ours.compatible(people, "pid")
    pairs_arx = r_arx.compatible(people, "pid")
    pd.testing.assert_frame_equal(pairs_ours, pairs_arx)
    assert pairs_ours["pid"].duplicated().any()  # some people fit several groups

    results = []
    for release in (r_ours, r_arx):
        model = MaxEntModel(release, populations=[pop])
        model.add(model.P("HS-grad", age=between(None, 29)) <= 0.1)
        model.add(model.P("Bachelors", sex="Female", age=range(30, 50)) >= 0.3)
        results.append(model.solve())
    a, b = results
    assert a.certificate.primal_residual <= 1e-6
    diff = (a.posterior() - b.posterior()).abs().to_numpy().max()
    assert diff <= 1e-9
    diff = (a.person_posterior() - b.person_posterior()).abs().to_numpy().max()
    assert diff <= 1e-9


# -- the CLI -----------------------------------------------------------------------------
@pytest.fixture
def files(tmp_path, mondrian_pair):
    ours, arx, people = mondrian_pair
    paths = {}
    for name, frame in (("ours", ours), ("arx", arx), ("people", people)):
        paths[name] = tmp_path / f"{name}.csv"
        frame.to_csv(paths[name], index=False)
    return paths


def analyze(release, *extra):
    argv = ["analyze", str(release), "--qi", "age", "sex", "zip", "--sa", "education"]
    return main(argv + ["--group", "group", *extra])


@pytest.mark.parametrize("name", ["ours", "arx"])
def test_cli_refuses_generalized_cells_without_population(files, name, capsys):
    assert analyze(files[name]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"error: {files[name]}: column 'age' holds ")
    assert "generalized cells such as" in err and "--population FILE" in err


def test_cli_population_ours_and_arx_agree(files, mondrian_pair, tmp_path, capsys):
    people = mondrian_pair[2]
    out = {}
    for name in ("ours", "arx"):
        path = tmp_path / f"post_{name}.csv"
        assert analyze(files[name], "--population", str(files["people"]), "--out", str(path)) == 0
        assert "300 records" in capsys.readouterr().out
        out[name] = pd.read_csv(path, dtype={"zip": str})
    assert len(out["ours"]) == len(people.drop_duplicates(["age", "sex", "zip"]))
    pd.testing.assert_frame_equal(out["ours"], out["arx"], atol=1e-9)
    assert out["arx"]["age"].is_monotonic_increasing  # exact ages, read as numbers
    assert out["arx"]["zip"].str.len().eq(5).all()  # zip codes stay text (02139)


def test_cli_population_id_and_formats(files, tmp_path, capsys):
    people = pd.read_csv(files["people"], dtype=str)
    moved = tmp_path / "moved.csv"
    people[["age", "sex", "zip", "pid"]].rename(columns={"pid": "who"}).to_csv(moved, index=False)
    assert analyze(files["arx"], "--population", str(moved)) == 2
    assert "quasi-identifier" in capsys.readouterr().err  # 'age' taken as the id column
    assert analyze(files["arx"], "--population", str(moved), "--population-id", "who") == 0
    capsys.readouterr()
    assert analyze(files["arx"], "--population", str(moved), "--population-id", "id") == 2
    assert "--population-id column 'id' is not in the file" in capsys.readouterr().err
    # --formats none: the cells are exact values, a bucketized release
    assert analyze(files["arx"], "--formats", "none") == 0
    assert "300 records" in capsys.readouterr().out


def test_cli_population_errors(files, tmp_path, capsys):
    people = pd.read_csv(files["people"], dtype=str)
    no_zip = tmp_path / "no_zip.csv"
    people.drop(columns="zip").to_csv(no_zip, index=False)
    assert analyze(files["arx"], "--population", str(no_zip)) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "quasi-identifier column 'zip' is not in the table" in err
    assert f"population file {no_zip}" in err
    moved = people.copy()
    moved.loc[0, "zip"] = "99999"
    bad = tmp_path / "bad.csv"
    moved.to_csv(bad, index=False)
    assert analyze(files["arx"], "--population", str(bad)) == 2
    err = capsys.readouterr().err
    assert "release 1: person 'p000' of the population fits no group" in err
    assert "no cell of column 'zip' covers zip '99999'" in err
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    assert analyze(files["arx"], "--population", str(empty)) == 2
    assert "a population is a CSV file" in capsys.readouterr().err
    assert analyze(files["arx"], "--population", str(files["people"]), "--by", "group") == 2
    assert "--by group is for bucketized releases" in capsys.readouterr().err


def test_cli_person_column_and_population(tmp_path, capsys):
    release = pd.DataFrame(
        {
            "pid": ["a", "b", "c", "d"],
            "age": ["20-29", "20-29", ">=30", ">=30"],
            "disease": ["Flu", "HIV", "Flu", "Cold"],
            "g": [1, 1, 2, 2],
        }
    )
    people = pd.DataFrame({"pid": ["d", "c", "b", "a"], "age": [40, 30, 21, 35]})
    rpath, ppath = tmp_path / "r.csv", tmp_path / "p.csv"
    release.to_csv(rpath, index=False)
    people.to_csv(ppath, index=False)
    argv = ["analyze", str(rpath), "--qi", "age", "--sa", "disease", "--group", "g"]
    argv += ["--person", "pid", "--population", str(ppath)]
    assert main(argv) == 2  # person a is 35: not in 20-29
    err = capsys.readouterr().err
    assert "person 'a' has age 35, which their cell '20-29' in column 'age' does not cover" in err
    people.loc[3, "age"] = 25
    people.to_csv(ppath, index=False)
    assert main(argv) == 0


def test_readme_arx_example_runs():
    import pathlib
    import re

    text = (pathlib.Path(__file__).resolve().parents[2] / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    block = next(b for b in blocks if "Generalized(arx" in b)
    namespace: dict = {}
    exec(compile(block, "README.md", "exec"), namespace)  # noqa: S102
    assert namespace["release"].generalized == ["age", "zip"]
    post = namespace["model"].solve().person_posterior()
    assert post.loc["Bo", "HIV"] == pytest.approx(1.0, abs=1e-9)
    assert post.loc["Ann", "Flu"] == pytest.approx(1.0, abs=1e-9)


def test_person_column_without_any_exact_qi_is_a_clear_error():
    release = small_release(person="pid")
    with pytest.raises(ReleaseError, match="no release gives exact QI values") as e:
        MaxEntModel(release)
    one_line(e)


def test_cli_malformed_cell_without_population_points_at_formats_none(tmp_path, capsys):
    path = tmp_path / "r.csv"
    path.write_text("a,d,g\n[x,1,1\n2,2,1\n")
    argv = ["analyze", str(path), "--qi", "a", "--sa", "d", "--group", "g"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "column 'a' has a malformed interval '[x'" in err
    assert "--formats none reads every cell as an exact value" in err
    assert main(argv + ["--formats", "none"]) == 0
