"""as_knowledge: the one reading of a ``knowledge`` argument (issue 38)."""

from __future__ import annotations

from pathlib import Path

import pytest

from maxent_privacy import Bucketized, KnowledgeError, MaxEntModel, datasets
from maxent_privacy._validation import ArgumentError
from maxent_privacy.knowledge import as_knowledge, soft, vague
from maxent_privacy.knowledge.normalise import Knowledge, KnowledgeArgumentError
from maxent_privacy.parser import KnowledgeFileError, parse_knowledge

MALE = 'P(disease = "Flu" | gender = "male") = 0.3'
FEMALE = 'P(disease = "Flu" | gender = "female") <= 0.5'


def new_model() -> MaxEntModel:
    release = Bucketized(
        datasets.du2008_figure1(), qi=["gender", "degree"], sa="disease", group="bucket"
    )
    return MaxEntModel(release)


def names(knowledge) -> list[str]:
    model = new_model()
    add = as_knowledge(knowledge)
    assert add is not None
    assert add(model) is None
    return [f.name for f in model.facts]


@pytest.mark.parametrize("empty", [None, [], (), "", "# a comment\n\n", [[], ""]])
def test_no_knowledge_is_none(empty):
    assert as_knowledge(empty) is None


def test_text_is_parsed_and_applied():
    assert names(MALE + "\n" + FEMALE) == [MALE, FEMALE]


def test_statements_paths_facts_and_functions_mix_in_order(tmp_path):
    path = tmp_path / "facts.txt"
    path.write_text(FEMALE + "\n", encoding="utf-8")
    got = names(
        [
            parse_knowledge(MALE)[0],
            path,
            lambda m: ("named", m.P("HIV") <= 0.9),
            lambda m: [m.P("HIV", gender="male") >= 0.0],
            lambda m: None,
            lambda m: 'P(disease = "Pneumonia") <= 0.8',
        ]
    )
    assert got[:3] == [MALE, FEMALE, "named"]
    assert got[4:] == ['P(disease = "Pneumonia") <= 0.8']
    assert as_knowledge(path).files == [str(path)]


def test_vague_soft_and_pairs_through_a_function():
    got = names(
        lambda m: [
            vague(m.P("Flu"), 0.3, 0.05),
            soft(m.P("HIV") == 0.2, 1.0),
            ("x", m.P("Flu") <= 1),
        ]
    )
    assert got[:2] == ["P(Flu) = 0.3 +- 0.05 (low)", "P(Flu) = 0.3 +- 0.05 (high)"]
    assert got[3] == "x"


def test_a_fact_of_the_model_itself():
    model = new_model()
    as_knowledge([model.P("Flu") == 0.3, ("cold", model.P("HIV") <= 0.5)])(model)
    assert [f.name for f in model.facts][1] == "cold"


def test_knowledge_is_read_once_and_reads_itself():
    add = as_knowledge([MALE])
    assert isinstance(add, Knowledge)
    assert as_knowledge(add) is add
    assert [s.kind for s in add.statements] == ["fact"]
    assert names([add, FEMALE]) == [MALE, FEMALE]


def test_persons_defined_and_used_in_one_text():
    model = new_model()
    as_knowledge(['person A: gender = "male", degree = "college"\nP(A has "Flu") <= 0.5'])(model)
    assert [p.name for p in model.persons] == ["A"]
    assert len(model.facts) == 1


@pytest.mark.parametrize(
    "bad, message",
    [
        ({"Flu": 0.3}, r"^knowledge must be None, knowledge text, .* got a dict$"),
        (3, r"^knowledge must be .* got a int$"),
        ([MALE, 0.3], r"^knowledge\[1\] is a float; knowledge must be None"),
        ([MALE, True], r"^knowledge\[1\] is a plain boolean \(True\), not a fact"),
        ([[MALE, b"x"]], r"^knowledge\[0\]\[1\] is a bytes;"),
    ],
)
def test_a_bad_item_is_named(bad, message):
    with pytest.raises(KnowledgeArgumentError, match=message) as err:
        as_knowledge(bad)
    assert isinstance(err.value, ArgumentError) and isinstance(err.value, KnowledgeError)
    assert isinstance(err.value, ValueError) and "\n" not in str(err.value)


def test_an_expression_is_not_a_fact():
    model = new_model()
    with pytest.raises(KnowledgeArgumentError, match=r"knowledge\[0\] is a cvxpy expression"):
        as_knowledge([model.P("Flu")])
    add = as_knowledge(lambda m: m.P("Flu"))
    with pytest.raises(
        KnowledgeArgumentError, match=r"^knowledge\(model\) must be .* got a cvxpy expression"
    ):
        add(model)


def test_text_errors_name_the_item_line_and_column():
    with pytest.raises(KnowledgeFileError, match=r"^knowledge\[1\]:1:") as err:
        as_knowledge([MALE, 'P(disease = "Flu") <= 1.5'])
    assert err.value.source == "knowledge[1]"
    with pytest.raises(KnowledgeFileError, match=r"^facts:2:"):
        as_knowledge(MALE + "\nP(disease = 'Flu') = 0.3", source="facts")


def test_text_is_never_evaluated(tmp_path):
    hostile = "__import__('os').system('touch " + str(tmp_path / "owned") + "')"
    with pytest.raises(KnowledgeFileError):
        as_knowledge(hostile)
    assert not (tmp_path / "owned").exists()


def test_a_file_name_given_as_text_is_refused_with_a_hint(tmp_path, monkeypatch):
    (tmp_path / "facts.txt").write_text(MALE, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(KnowledgeArgumentError, match=r"give Path\('facts.txt'\)"):
        as_knowledge("facts.txt")
    assert len(as_knowledge(Path("facts.txt")).statements) == 1


def test_a_missing_file_is_named(tmp_path):
    missing = tmp_path / "nope.txt"
    with pytest.raises(KnowledgeArgumentError, match="cannot read knowledge file .*nope.txt"):
        as_knowledge([MALE, missing])


def test_a_statement_that_does_not_fit_the_model_is_the_parsers_error():
    add = as_knowledge([MALE, 'P(disease = "Plague") = 0.1'])  # parses; the model refuses it
    model = new_model()
    with pytest.raises(KnowledgeFileError, match=r"^knowledge\[1\]:1:.*Plague"):
        add(model)
    assert model.facts == []  # all or nothing


def test_all_or_nothing_and_the_failing_item_named():
    model = new_model()
    other = new_model()
    add = as_knowledge([MALE, lambda m: m.P("Flu") == 0.3, other.P("HIV") == 0.1])
    with pytest.raises(KnowledgeError, match=r"^knowledge\[2\]: .*give knowledge as a function"):
        add(model)
    assert model.facts == []
    assert not model.persons
