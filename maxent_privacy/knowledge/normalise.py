"""``knowledge``, read one way everywhere it is taken.

:func:`as_knowledge` turns what a public function takes as ``knowledge`` into one function
of the model that adds it (or None when there is none). It takes:

- None (no knowledge);
- a str: knowledge-file text (:mod:`~maxent_privacy.knowledge.parser`; parsed, never
  evaluated);
- a :class:`pathlib.Path` (any ``os.PathLike``): a knowledge file, read and parsed;
- a parsed :class:`~maxent_privacy.knowledge.syntax.Statement`;
- a fact built on the model's expressions: a cvxpy constraint (``m.P("Flu") == 0.3``),
  soft, vague or grouped knowledge, or anything else ``model.add`` takes through its
  ``_maxent_facts_`` protocol (mined rules, a prior), or a ``(name, fact)`` pair;
- a function of the model: it adds its facts itself, or returns more of the above (facts
  built with ``m.P(...)`` on the model it is given);
- a list (or tuple) mixing these, applied in order.

The function applies everything or nothing (``model.transaction()``). A bad item is an
:class:`~maxent_privacy._validation.ArgumentError` (also a ``KnowledgeError``) naming it
by position (``knowledge[2]``); a statement that does not fit the model is the parser's
:class:`~maxent_privacy.knowledge.syntax.KnowledgeFileError` (``source:line:column``),
a fact that does not is a ``KnowledgeError`` naming the item.

>>> from maxent_privacy import MaxEntModel, Bucketized, datasets
>>> model = MaxEntModel(Bucketized(datasets.du2008_figure1(), qi=["gender", "degree"],
...                                sa="disease", group="bucket"))
>>> add = as_knowledge(['P(disease = "Flu" | gender = "male") = 0.3',
...                     lambda m: m.P("Flu", gender="female") <= 0.5])
>>> add(model)
>>> [f.name for f in model.facts]
['P(disease = "Flu" | gender = "male") = 0.3', 'P(Flu | gender=female) <= 0.5']
>>> as_knowledge([]) is None
True
>>> as_knowledge({"Flu": 0.3})
Traceback (most recent call last):
...
maxent_privacy._validation.KnowledgeArgumentError: knowledge must be None, \
knowledge text, a Path to a knowledge file, a Statement, a fact (m.P(...) == p), a \
function of the model or a list of these, got a dict
"""

from __future__ import annotations

import os
from pathlib import Path

from .._validation import KnowledgeArgumentError, shown
from ..errors import KnowledgeError
from .parser import apply_knowledge, load_knowledge, parse_knowledge
from .syntax import KnowledgeFileError, Statement

__all__ = ["Knowledge", "KnowledgeArgumentError", "as_knowledge"]

_TAKES = (
    "None, knowledge text, a Path to a knowledge file, a Statement, a fact (m.P(...) == p), "
    "a function of the model or a list of these"
)


def _is_fact(item) -> bool:
    """Whether ``model.add`` takes ``item`` as one fact (or a few, by its protocol)."""
    import cvxpy as cp

    from .vague import Grouped, Soft

    return isinstance(item, (cp.constraints.constraint.Constraint, Soft, Grouped)) or hasattr(
        item, "_maxent_facts_"
    )


def _is_pair(item) -> bool:
    return (
        isinstance(item, tuple)
        and len(item) == 2
        and isinstance(item[0], str)
        and (_is_fact(item[1]))
    )


def _kind(item) -> str:
    import cvxpy as cp

    if isinstance(item, cp.Expression):
        return "a cvxpy expression, not a fact (compare it: m.P(...) == 0.3)"
    if isinstance(item, bool):
        return f"a plain boolean ({item}), not a fact (compare m.P(...) expressions, not numbers)"
    return f"a {type(item).__name__}"


class Knowledge:
    """Knowledge read by :func:`as_knowledge`: call it with a model to add it.

    ``steps`` are ``(where, kind, payload)`` in order: kind ``"statements"`` (a list of
    parsed statements), ``"fact"`` (a fact or a ``(name, fact)`` pair) or ``"function"``;
    ``files`` the knowledge files read (a report names them).
    """

    def __init__(self, steps: list, files: list[str]):
        self.steps, self.files = steps, files

    def __call__(self, model) -> None:
        with model.transaction():  # all or nothing
            for where, kind, payload in self.steps:
                _apply(model, where, kind, payload)

    @property
    def statements(self) -> list[Statement]:
        """The parsed statements among the steps (text, files and Statements), in order."""
        return [s for _, kind, payload in self.steps if kind == "statements" for s in payload]

    def __repr__(self) -> str:
        kinds = ", ".join(f"{where}: {kind}" for where, kind, _ in self.steps)
        return f"Knowledge({kinds})"


def _apply(model, where: str, kind: str, payload) -> None:
    if kind == "statements":
        apply_knowledge(model, payload)  # its errors name source:line:column
        return
    if kind == "function":
        returned = payload(model)
        if returned is not None:
            more = as_knowledge(returned, source=f"{where}(model)")
            if more is not None:
                for step in more.steps:
                    _apply(model, *step)
        return
    try:
        if _is_pair(payload):
            model.add(payload[1], name=payload[0])
        else:
            model.add(payload)
    except KnowledgeFileError:
        raise
    except KnowledgeError as err:
        hint = ""
        if "is not this model's" in str(err):
            hint = (
                "; a constraint built with model.P(...) belongs to that model: give "
                "knowledge as a function lambda m: [m.P(...) == ...]"
            )
        raise KnowledgeError(f"{where}: {err}{hint}") from err


def _text(text: str, where: str) -> list[Statement]:
    try:
        return parse_knowledge(text, source=where)
    except KnowledgeFileError as err:
        one = text.strip()
        if one and "\n" not in one and "(" not in one and Path(one).is_file():
            raise KnowledgeArgumentError(
                f"{where} is text in the knowledge syntax, and {shown(one)} is a file name: "
                f"give Path({one!r}) to read the file"
            ) from err
        raise


def _file(path, where: str) -> list[Statement]:
    try:
        return load_knowledge(path)
    except OSError as err:
        reason = err.strerror or type(err).__name__
        raise KnowledgeArgumentError(
            f"{where}: cannot read knowledge file {os.fspath(path)!r}: {reason}"
        ) from err


def as_knowledge(knowledge, *, source: str = "knowledge") -> Knowledge | None:
    """``knowledge`` (see the module) as one function ``f(model) -> None`` adding it, or
    None when there is none. Text and files are read and parsed here, at once, so that a
    malformed statement is an error before any work; facts and functions are checked when
    the function is called with the model. ``source`` names the argument in messages
    (``knowledge[2]``, ``knowledge:3:1``). What a function of the model returns is read
    the same way (a list of facts built with ``m.P(...)``, say).

    >>> as_knowledge(None) is None
    True
    >>> as_knowledge('P(disease = "Flu") = 0.3\\nP(disease = "Flu") <= 1.5')
    Traceback (most recent call last):
    ...
    maxent_privacy.knowledge.syntax.KnowledgeFileError: knowledge:2:23: probability 1.5 is \
outside [0, 1] (near '1.5')
    >>> as_knowledge(['P(disease = "Flu") = 0.3', 0.3])
    Traceback (most recent call last):
    ...
    maxent_privacy._validation.KnowledgeArgumentError: knowledge[1] is a float; \
knowledge must be None, knowledge text, a Path to a knowledge file, a Statement, a fact \
(m.P(...) == p), a function of the model or a list of these
    """
    if knowledge is None:
        return None
    if isinstance(knowledge, Knowledge):
        return knowledge if knowledge.steps else None
    single = isinstance(knowledge, (str, os.PathLike, Statement)) or _is_fact(knowledge)
    single = single or _is_pair(knowledge) or callable(knowledge)
    if single:
        items, names = [knowledge], [source]
    elif isinstance(knowledge, (list, tuple)):
        items = list(knowledge)
        names = [f"{source}[{k}]" for k in range(len(items))]
    else:
        raise KnowledgeArgumentError(f"{source} must be {_TAKES}, got {_kind(knowledge)}")
    steps: list = []
    files: list[str] = []

    def statements(where: str, parsed: list[Statement]) -> None:
        if steps and steps[-1][1] == "statements":  # one batch: persons are shared
            steps[-1] = (steps[-1][0], "statements", steps[-1][2] + parsed)
        elif parsed:
            steps.append((where, "statements", parsed))

    for item, where in zip(items, names, strict=True):
        if isinstance(item, Knowledge):
            steps.extend(item.steps)
            files.extend(item.files)
        elif isinstance(item, str):
            statements(where, _text(item, where))
        elif isinstance(item, os.PathLike):
            statements(where, _file(item, where))
            files.append(os.fspath(item))
        elif isinstance(item, Statement):
            statements(where, [item])
        elif _is_fact(item) or _is_pair(item):
            steps.append((where, "fact", item))
        elif callable(item):
            steps.append((where, "function", item))
        elif isinstance(item, (list, tuple)) and not single:
            inner = as_knowledge(item, source=where)
            for step in inner.steps if inner is not None else ():
                if step[1] == "statements":
                    statements(*step[::2])
                else:
                    steps.append(step)
            files.extend(inner.files if inner is not None else ())
        else:
            raise KnowledgeArgumentError(f"{where} is {_kind(item)}; {source} must be {_TAKES}")
    return Knowledge(steps, files) if steps else None
