"""Fuzzing the knowledge-file parser: random text gives facts or a syntax error, never
another exception (and is never executed)."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from maxent_privacy import Bucketized, KnowledgeError, MaxEntModel, datasets
from maxent_privacy.parser import KnowledgeFileError, apply_knowledge, parse_knowledge

PIECES = [
    "P(",
    ")",
    "|",
    ",",
    "=",
    "==",
    "<=",
    ">=",
    "<",
    ">",
    "+-",
    "±",
    "+",
    "-",
    "*",
    "/",
    "disease",
    "gender",
    "degree",
    "in",
    "{",
    "}",
    '"Flu"',
    '"HIV"',
    '"male"',
    '"female"',
    '"college"',
    '"Breast Cancer"',
    "0",
    "0.3",
    "1",
    "2",
    "1e-3",
    "person",
    "Alice",
    ":",
    "has",
    "or",
    "count",
    "among",
    "soft",
    "name",
    '"n"',
    "#",
    "\n",
    " ",
    "__import__",
    '"',
    "\\",
    "(",
    ".",
    "nan",
    "inf",
]


def release_model():
    frame = datasets.du2008_figure1()
    return MaxEntModel(Bucketized(frame, qi=["gender", "degree"], sa="disease", group="bucket"))


@given(st.lists(st.sampled_from(PIECES), max_size=30))
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_token_soup_parses_or_raises_a_syntax_error(pieces):
    text = " ".join(pieces)
    try:
        statements = parse_knowledge(text)
    except KnowledgeFileError as err:
        assert "\n" not in str(err)
        assert err.line >= 1 and err.column >= 1
        return
    model = release_model()
    try:
        apply_knowledge(model, statements)
    except (KnowledgeFileError, KnowledgeError):
        assert model.facts == []  # all or nothing


@given(st.text(max_size=80))
@settings(max_examples=400, deadline=None)
def test_arbitrary_text_parses_or_raises_a_syntax_error(text):
    try:
        parse_knowledge(text)
    except KnowledgeFileError as err:
        assert "\n" not in str(err)
