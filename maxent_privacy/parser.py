"""A small text format for background knowledge, and its parser.

One statement per line; ``#`` starts a comment (outside strings); blank lines are ignored::

    P(disease = "Breast Cancer" | gender = "male") = 0
    P(disease = "Flu" | gender = "male") = 0.3 +- 0.05          # vague: 0.25 .. 0.35
    P(disease = "Flu" | degree = "college") >= P(disease = "HIV" | degree = "college")
    P(disease in {"Flu", "HIV"} | gender = "female") >= 0.2
    P(disease = "Flu") = 0.3                                     # no condition: all records
    person Alice: gender = "female", degree = "junior"
    P(Alice has "HIV" or "Flu") = 1
    count("HIV" among Alice, Bob, Carol) = 2
    soft 2.0: P(disease = "HIV" | gender = "female") = 0.1
    name "my fact": P(disease = "Flu" | gender = "male") <= 0.6

Values are double-quoted strings (``\\"`` and ``\\\\`` escapes) or numbers; attribute and
person names are identifiers (letters, digits, ``_`` and ``-``, not starting with a digit).
Comparisons are ``=`` (or ``==``), ``<=`` and ``>=``; either side is a linear expression of
``P(...)`` and ``count(...)`` terms and numbers (``+``, ``-``, ``*`` and ``/`` by a number).
``= p +- eps`` is vague knowledge (:func:`maxent_privacy.knowledge.vague`), ``soft w:`` a
soft fact (:func:`maxent_privacy.knowledge.soft`) and ``name "...":`` names the fact (its key
in ``result.duals``); without a name a fact is named by its own text.

The text is read by a tokenizer and a recursive-descent parser: nothing in it is ever
evaluated as Python. Errors are :class:`KnowledgeFileError` with ``source:line:column``.

>>> from maxent_privacy import MaxEntModel, Bucketized, datasets
>>> from maxent_privacy.parser import parse_knowledge, apply_knowledge
>>> model = MaxEntModel(Bucketized(datasets.du2008_figure1(), qi=["gender", "degree"],
...                                sa="disease", group="bucket"))
>>> facts = parse_knowledge('P(disease = "Breast Cancer" | gender = "male") = 0')
>>> apply_knowledge(model, facts)
['P(disease = "Breast Cancer" | gender = "male") = 0']
>>> float(model.solve().posterior().loc[("female", "junior"), "Breast Cancer"])
1.0
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from .errors import MaxEntError

__all__ = [
    "BinOp",
    "Condition",
    "Count",
    "KnowledgeFileError",
    "Neg",
    "Num",
    "Prob",
    "Statement",
    "apply_knowledge",
    "load_knowledge",
    "parse_knowledge",
]

_NEAR_MAX = 60


class KnowledgeFileError(MaxEntError, ValueError):
    """A knowledge file is malformed, or one of its statements does not fit the model.

    The message is one line, ``source:line:column: what is wrong (near '...')``; the parts
    are kept as ``source``, ``line``, ``column`` (1-based), ``reason`` and ``near``.
    """

    def __init__(
        self,
        reason: str,
        *,
        source: str = "<string>",
        line: int = 0,
        column: int = 0,
        near: str | None = None,
    ):
        self.reason = " ".join(str(reason).split())  # one line
        self.source, self.line, self.column, self.near = source, line, column, near
        message = f"{source}:{line}:{column}: {self.reason}"
        if near is not None:
            near = near if len(near) <= _NEAR_MAX else near[: _NEAR_MAX - 3] + "..."
            message += f" (near '{near}')" if near else " (at end of line)"
        super().__init__(message)


# --------------------------------------------------------------------------- the AST
# Positions (1-based columns; ``span`` is [start, end) of the source text) are left out of
# equality, so statements compare by what they say.
_POS = {"compare": False, "repr": False}


@dataclass(frozen=True)
class Num:
    """A number."""

    value: float
    span: tuple[int, int] = field(default=(0, 0), **_POS)


@dataclass(frozen=True)
class Condition:
    """``attribute = value`` or ``attribute in {values}`` (any of them)."""

    attribute: str
    values: tuple
    span: tuple[int, int] = field(default=(0, 0), **_POS)
    value_spans: tuple = field(default=(), **_POS)


@dataclass(frozen=True)
class Prob:
    """``P(attribute in values | conditions)``, or ``P(person has one of values)``."""

    values: tuple
    attribute: str | None = None
    conditions: tuple[Condition, ...] = ()
    person: str | None = None
    span: tuple[int, int] = field(default=(0, 0), **_POS)
    attribute_span: tuple[int, int] = field(default=(0, 0), **_POS)
    value_spans: tuple = field(default=(), **_POS)


@dataclass(frozen=True)
class Count:
    """``count(value among persons)``: the expected number of them having the value."""

    value: object
    persons: tuple[str, ...]
    span: tuple[int, int] = field(default=(0, 0), **_POS)
    value_span: tuple[int, int] = field(default=(0, 0), **_POS)
    person_spans: tuple = field(default=(), **_POS)


@dataclass(frozen=True)
class Neg:
    """``-operand``."""

    operand: Expr
    span: tuple[int, int] = field(default=(0, 0), **_POS)


@dataclass(frozen=True)
class BinOp:
    """``left op right`` with op one of ``+ - * /`` (kept linear by the parser)."""

    op: str
    left: Expr
    right: Expr
    span: tuple[int, int] = field(default=(0, 0), **_POS)


Expr = Num | Prob | Count | Neg | BinOp


@dataclass(frozen=True)
class Statement:
    """One statement of a knowledge file.

    ``kind`` is ``"fact"`` (``left op right``), ``"vague"`` (``left = right +- eps``),
    ``"soft"`` (``soft weight: left op right``) or ``"person"`` (``person`` with its QI
    ``conditions``). ``op`` is ``"=="``, ``"<="`` or ``">="``. ``text`` is the original
    line, ``body`` the statement's own text (comment and ``name`` prefix left out).
    """

    kind: str
    line: int
    text: str = field(default="", compare=False)
    name: str | None = None
    left: Expr | None = None
    op: str | None = None
    right: Expr | None = None
    eps: float | None = None
    weight: float | None = None
    person: str | None = None
    conditions: tuple[Condition, ...] = ()
    body: str = field(default="", compare=False)
    source: str = field(default="<string>", compare=False)
    column: int = field(default=1, compare=False)

    @property
    def label(self) -> str:
        """The fact's name in the model: the ``name`` prefix, else the statement's text."""
        return self.name if self.name is not None else self.body


# ---------------------------------------------------------------------- tokenizer
@dataclass(frozen=True)
class _Token:
    kind: str  # "ident", "string", "number", "op", "bad" (unknown character), "end"
    text: str
    value: object
    column: int  # 1-based
    end: int  # column just past the token

    def is_op(self, *ops: str) -> bool:
        return self.kind == "op" and self.text in ops

    def is_word(self, *words: str) -> bool:
        return self.kind == "ident" and self.text in words


_NUMBER = re.compile(r"(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_IDENT = re.compile(r"[^\W\d][\w-]*")
_OPS = (
    "+-",
    "±",
    "<=",
    ">=",
    "==",
    "!=",
    "=",
    "<",
    ">",
    "(",
    ")",
    "{",
    "}",
    "|",
    ",",
    ":",
    "+",
    "-",
    "*",
    "/",
)


def _tokenize(raw: str, line: int, source: str) -> list[_Token]:
    tokens: list[_Token] = []
    i, n = 0, len(raw)

    def fail(reason: str, col: int, near: str) -> KnowledgeFileError:
        return KnowledgeFileError(reason, source=source, line=line, column=col, near=near)

    while i < n:
        ch = raw[i]
        if ch in " \t\r\f\v":
            i += 1
            continue
        if ch == "#":
            break
        col = i + 1
        if ch == '"':
            j, out = i + 1, []
            while True:
                if j >= n:
                    raise fail('unterminated string (no closing ")', col, raw[i:].rstrip())
                c = raw[j]
                if c == '"':
                    break
                if c == "\\":
                    nxt = raw[j + 1] if j + 1 < n else ""
                    if nxt not in ('"', "\\"):
                        raise fail(
                            'unknown escape in a string (only \\" and \\\\ are allowed)',
                            j + 1,
                            raw[j : j + 2],
                        )
                    out.append(nxt)
                    j += 2
                    continue
                out.append(c)
                j += 1
            tokens.append(_Token("string", raw[i : j + 1], "".join(out), col, j + 2))
            i = j + 1
            continue
        m = _NUMBER.match(raw, i)
        if m:
            text = m.group()
            value: float | int = int(text) if text.isdigit() else float(text)
            if not math.isfinite(value):
                raise fail("number out of range", col, text)
            tokens.append(_Token("number", text, value, col, m.end() + 1))
            i = m.end()
            continue
        m = _IDENT.match(raw, i)
        if m:
            tokens.append(_Token("ident", m.group(), m.group(), col, m.end() + 1))
            i = m.end()
            continue
        for op in _OPS:
            if raw.startswith(op, i):
                tokens.append(_Token("op", op, op, col, col + len(op)))
                i += len(op)
                break
        else:
            # left for the parser, so that the error is at the first token out of place
            tokens.append(_Token("bad", ch, ch, col, col + 1))
            i += 1
    end = len(raw.split("#", 1)[0].rstrip()) + 1 if not tokens else tokens[-1].end
    tokens.append(_Token("end", "", None, end, end))
    return tokens


# ------------------------------------------------------------------------- parser
def _is_constant(node: Expr) -> bool:
    if isinstance(node, Num):
        return True
    if isinstance(node, Neg):
        return _is_constant(node.operand)
    if isinstance(node, BinOp):
        return _is_constant(node.left) and _is_constant(node.right)
    return False


def _constant(node: Expr) -> float:
    if isinstance(node, Num):
        return float(node.value)
    if isinstance(node, Neg):
        return -_constant(node.operand)
    assert isinstance(node, BinOp)
    a, b = _constant(node.left), _constant(node.right)
    if node.op == "+":
        return a + b
    if node.op == "-":
        return a - b
    return a * b if node.op == "*" else a / b


class _Parser:
    """Recursive descent over the tokens of one line."""

    def __init__(self, tokens: list[_Token], raw: str, line: int, source: str, persons: dict):
        self.tokens, self.raw, self.line, self.source = tokens, raw, line, source
        self.persons = persons  # name -> line of its definition (so far in the file)
        self.i = 0

    # -- helpers
    def peek(self, k: int = 0) -> _Token:
        return self.tokens[min(self.i + k, len(self.tokens) - 1)]

    def next(self) -> _Token:
        tok = self.peek()
        if tok.kind != "end":
            self.i += 1
        return tok

    def error(self, reason: str, tok: _Token | None = None, span=None) -> KnowledgeFileError:
        if span is not None:
            col, near = span[0], self.raw[span[0] - 1 : span[1] - 1]
        else:
            tok = tok or self.peek()
            col, near = tok.column, tok.text
            if tok.kind == "bad":
                reason = f"unexpected character {tok.text!r}; {reason}"
        return KnowledgeFileError(reason, source=self.source, line=self.line, column=col, near=near)

    def expect_op(self, op: str, what: str) -> _Token:
        tok = self.peek()
        if not tok.is_op(op):
            raise self.error(f"expected '{op}' {what}")
        return self.next()

    def ident(self, what: str) -> _Token:
        tok = self.peek()
        if tok.kind != "ident":
            raise self.error(f"expected {what}")
        return self.next()

    def span_from(self, start: int) -> tuple[int, int]:
        prev = self.tokens[self.i - 1] if self.i else self.peek()
        return (start, prev.end)

    # -- statements
    def statement(self) -> Statement:
        first = self.peek()
        name = None
        if first.is_word("name") and self.peek(1).kind == "string":
            self.next()
            name = self.next().value
            self.expect_op(":", 'after name "..."')
            if not name.strip():
                raise self.error("a fact's name must not be empty", first)
        body_tok = self.peek()
        if body_tok.kind == "end":
            raise self.error("expected a statement after the name")
        if body_tok.is_word("person") and self.peek(1).kind in ("ident", "string"):
            if name is not None:
                raise self.error("a person definition is not a fact and takes no name", first)
            return self.person_def()
        weight = None
        if body_tok.is_word("soft") and self.peek(1).kind in ("number", "op"):
            self.next()
            tok = self.peek()
            if tok.kind != "number":
                raise self.error("expected the soft fact's weight (a number > 0)")
            self.next()
            weight = float(tok.value)
            if not weight > 0:
                raise self.error("a soft fact's weight must be > 0", tok)
            self.expect_op(":", "after the soft fact's weight")
        left, op, right, eps = self.comparison()
        kind = "soft" if weight is not None else ("vague" if eps is not None else "fact")
        if weight is not None and eps is not None:
            raise self.error(
                "a soft fact cannot be vague (+-); write two soft facts with <= and >=",
                body_tok,
            )
        return self.make(
            kind, body_tok, name=name, left=left, op=op, right=right, eps=eps, weight=weight
        )

    def make(self, kind: str, body_tok: _Token, **parts) -> Statement:
        end = self.tokens[-1].end
        return Statement(
            kind,
            self.line,
            self.raw,
            body=self.raw[body_tok.column - 1 : end - 1].strip(),
            source=self.source,
            column=body_tok.column,
            **parts,
        )

    def person_def(self) -> Statement:
        body_tok = self.next()  # "person"
        tok = self.next()
        who = str(tok.value)
        if who in self.persons:
            raise self.error(f"person {who!r} is already defined on line {self.persons[who]}", tok)
        conditions: tuple[Condition, ...] = ()
        if not self.peek().is_op(":"):
            if self.peek().kind != "end":
                raise self.error(f"expected ':' after 'person {tok.text}'")
            # no QI: the release's person (pseudonym) column says which record it is
        else:
            self.next()
            if self.peek().kind == "end":
                raise self.error(
                    f"expected quasi-identifier values after 'person {tok.text}:' "
                    '(attribute = "value", ...)'
                )
            conditions = self.conditions(single=True)
        self.finish()
        self.persons[who] = self.line
        return self.make("person", body_tok, person=who, conditions=conditions)

    def finish(self) -> None:
        tok = self.peek()
        if tok.kind != "end":
            raise self.error(f"unexpected '{tok.text}' after the end of the statement")

    def comparison(self):
        left = self.expr()
        tok = self.peek()
        if tok.is_op("<", ">"):
            raise self.error(
                f"strict inequality '{tok.text}' is not allowed: the maximum-entropy problem "
                f"needs a closed feasible set; write '{tok.text}=' instead"
            )
        if tok.is_op("!="):
            raise self.error("'!=' is not allowed (its feasible set is not convex)")
        if not tok.is_op("=", "==", "<=", ">="):
            raise self.error("expected a comparison: =, <= or >=")
        self.next()
        op = "==" if tok.text in ("=", "==") else tok.text
        right = self.expr()
        eps = None
        pm = self.peek()
        if pm.is_op("+-", "±"):
            if op != "==":
                raise self.error(f"'+-' (vague knowledge) needs '=', not '{tok.text}'", pm)
            if not isinstance(right, Num):
                raise self.error("'+-' must follow a plain number (p +- eps)", pm)
            self.next()
            e = self.peek()
            if e.kind != "number":
                raise self.error("expected the tolerance after '+-' (a number >= 0)")
            self.next()
            eps = float(e.value)
        self.finish()
        if _is_constant(left) and _is_constant(right):
            raise self.error(
                "the statement compares numbers only; it needs a P(...) or count(...)",
                span=(left.span[0], right.span[1]),
            )
        self.check_range(left, right)
        self.check_range(right, left)
        return left, op, right, eps

    def check_range(self, term: Expr, other: Expr) -> None:
        if not _is_constant(other):
            return
        value = _constant(other)
        if isinstance(term, Prob) and not 0 <= value <= 1:
            raise self.error(f"probability {value:g} is outside [0, 1]", span=other.span)
        if isinstance(term, Count) and not 0 <= value <= len(term.persons):
            raise self.error(
                f"count {value:g} is outside [0, {len(term.persons)}] "
                f"(the number of persons named)",
                span=other.span,
            )

    # -- expressions: expr := term (('+'|'-') term)*; term := unary (('*'|'/') unary)*
    def expr(self) -> Expr:
        start = self.peek().column
        node = self.term()
        while self.peek().is_op("+", "-"):
            op = self.next().text
            right = self.term()
            node = BinOp(op, node, right, span=self.span_from(start))
        return node

    def term(self) -> Expr:
        start = self.peek().column
        node = self.unary()
        while self.peek().is_op("*", "/"):
            op_tok = self.next()
            right = self.unary()
            span = self.span_from(start)
            if op_tok.text == "*" and not (_is_constant(node) or _is_constant(right)):
                raise self.error(
                    "a product of two probabilities is not linear; multiply by numbers only",
                    span=span,
                )
            if op_tok.text == "/":
                if not _is_constant(right):
                    raise self.error(
                        "divide by numbers only (the fact must stay linear)", span=right.span
                    )
                if _constant(right) == 0:
                    raise self.error("division by zero", span=right.span)
            node = BinOp(op_tok.text, node, right, span=span)
        return node

    def unary(self) -> Expr:
        tok = self.peek()
        if tok.is_op("-"):
            self.next()
            operand = self.unary()
            return Neg(operand, span=self.span_from(tok.column))
        if tok.is_op("+"):
            self.next()
            return self.unary()
        return self.primary()

    def primary(self) -> Expr:
        tok = self.peek()
        if tok.kind == "number":
            self.next()
            return Num(tok.value, span=(tok.column, tok.end))
        if tok.is_op("("):
            self.next()
            node = self.expr()
            self.expect_op(")", "to close '('")
            return node
        if tok.is_word("P") and self.peek(1).is_op("("):
            return self.prob()
        if tok.is_word("count") and self.peek(1).is_op("("):
            return self.count()
        if tok.kind == "end":
            raise self.error("expected P(...), count(...) or a number")
        raise self.error(f"expected P(...), count(...) or a number, not '{tok.text}'")

    def value(self, what: str = "a value") -> tuple[object, tuple[int, int]]:
        tok = self.peek()
        if tok.kind == "string":
            self.next()
            return tok.value, (tok.column, tok.end)
        if tok.kind == "number":
            self.next()
            return tok.value, (tok.column, tok.end)
        if tok.is_op("-") and self.peek(1).kind == "number":
            self.next()
            num = self.next()
            return -num.value, (tok.column, num.end)
        raise self.error(f"expected {what} (a double-quoted string or a number)")

    def value_set(self) -> tuple[tuple, tuple]:
        self.expect_op("{", "after 'in'")
        values, spans = [], []
        while True:
            v, s = self.value()
            values.append(v)
            spans.append(s)
            if self.peek().is_op(","):
                self.next()
                continue
            self.expect_op("}", "to close the set of values")
            return tuple(values), tuple(spans)

    def attr_values(self, attr: _Token, single: bool) -> tuple[tuple, tuple]:
        tok = self.peek()
        if tok.is_op("=", "=="):
            self.next()
            v, s = self.value()
            return (v,), (s,)
        if tok.is_word("in") and not single:
            self.next()
            return self.value_set()
        if tok.is_op("<", ">", "<=", ">=", "!="):
            raise self.error(
                f"'{attr.text}' must be compared with '='" + ("" if single else " or 'in {...}'")
            )
        raise self.error(f"expected '=' {'' if single else 'or in {...} '}after '{attr.text}'")

    def conditions(self, single: bool = False) -> tuple[Condition, ...]:
        out: list[Condition] = []
        seen: set[str] = set()
        while True:
            attr = self.ident("a quasi-identifier name")
            if attr.text in seen:
                raise self.error(f"quasi-identifier '{attr.text}' is given twice", attr)
            seen.add(attr.text)
            values, spans = self.attr_values(attr, single)
            out.append(
                Condition(attr.text, values, span=(attr.column, attr.end), value_spans=spans)
            )
            if self.peek().is_op(","):
                self.next()
                continue
            return tuple(out)

    def person_ref(self) -> tuple[str, tuple[int, int]]:
        tok = self.peek()
        if tok.kind not in ("ident", "string"):
            raise self.error("expected a person's name")
        self.next()
        who = str(tok.value)
        if who not in self.persons:
            raise self.error(
                f"person {who!r} is not defined (define it on an earlier line: "
                f'person {tok.text}: attribute = "value", ...)',
                tok,
            )
        return who, (tok.column, tok.end)

    def prob(self) -> Prob:
        start = self.next().column  # "P"
        self.next()  # "("
        tok = self.peek()
        if tok.kind in ("ident", "string") and self.peek(1).is_word("has"):
            who, _ = self.person_ref()
            self.next()  # "has"
            values, spans = [], []
            while True:
                v, s = self.value("a sensitive value")
                values.append(v)
                spans.append(s)
                if self.peek().is_word("or"):
                    self.next()
                    continue
                break
            self.expect_op(")", "to close P(")
            return Prob(
                tuple(values), person=who, span=self.span_from(start), value_spans=tuple(spans)
            )
        if tok.kind == "end" or tok.is_op(")"):
            raise self.error('expected the sensitive attribute (P(attribute = "value" | ...))')
        attr = self.ident('the sensitive attribute (P(attribute = "value" | ...))')
        values, spans = self.attr_values(attr, single=False)
        conditions: tuple[Condition, ...] = ()
        if self.peek().is_op("|"):
            self.next()
            conditions = self.conditions()
        self.expect_op(")", "to close P(")
        return Prob(
            values,
            attribute=attr.text,
            conditions=conditions,
            span=self.span_from(start),
            attribute_span=(attr.column, attr.end),
            value_spans=spans,
        )

    def count(self) -> Count:
        start = self.next().column  # "count"
        self.next()  # "("
        value, vspan = self.value("a sensitive value")
        tok = self.peek()
        if not tok.is_word("among"):
            raise self.error("expected 'among' (count(\"value\" among Alice, Bob))")
        self.next()
        persons, spans = [], []
        while True:
            who, s = self.person_ref()
            if who in persons:
                raise self.error(f"person '{who}' is named twice", span=s)
            persons.append(who)
            spans.append(s)
            if self.peek().is_op(","):
                self.next()
                continue
            break
        self.expect_op(")", "to close count(")
        return Count(
            value,
            tuple(persons),
            span=self.span_from(start),
            value_span=vspan,
            person_spans=tuple(spans),
        )


def parse_knowledge(text: str, source: str = "<string>") -> list[Statement]:
    """Parse knowledge text into statements (one per non-blank, non-comment line).

    ``source`` names the text in error messages (``source:line:column: ...``). Raises
    :class:`KnowledgeFileError` at the first malformed statement.

    >>> [s.kind for s in parse_knowledge('person A: gender = "male"\\nP(A has "Flu") <= .5')]
    ['person', 'fact']
    """
    if not isinstance(text, str):
        raise TypeError(f"parse_knowledge() needs a str, got {type(text).__name__}")
    text = text.removeprefix("\ufeff")
    persons: dict[str, int] = {}
    out: list[Statement] = []
    for number, raw in enumerate(text.split("\n"), start=1):
        raw = raw.rstrip("\r")
        tokens = _tokenize(raw, number, source)
        if tokens[0].kind == "end":
            continue
        out.append(_Parser(tokens, raw, number, source, persons).statement())
    return out


def load_knowledge(path) -> list[Statement]:
    """Read and parse a knowledge file (UTF-8); errors name the file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise KnowledgeFileError(
            f"not a UTF-8 text file ({exc.reason} at byte {exc.start})", source=str(path)
        ) from exc
    return parse_knowledge(text, source=str(path))


# ------------------------------------------------------------------------ compile
class _Compiler:
    """Turns statements into what ``model.add`` takes, checking names against the model."""

    def __init__(self, model, statement: Statement, persons: dict):
        self.model, self.st, self.persons = model, statement, persons

    def error(self, reason: str, span=None) -> KnowledgeFileError:
        st = self.st
        if span is None or span == (0, 0) or not st.text:
            col, near = st.column, st.body or None
        else:
            col, near = span[0], st.text[span[0] - 1 : span[1] - 1]
        return KnowledgeFileError(reason, source=st.source, line=st.line, column=col, near=near)

    def check_value(self, column: str, value, role: str, span) -> None:
        from .errors import KnowledgeError

        try:
            self.model.match_value(column, value, role)
        except KnowledgeError as exc:
            raise self.error(str(exc), span) from exc

    def check_conditions(self, conditions) -> dict:
        m = self.model
        kwargs = {}
        for c in conditions:
            if c.attribute not in m.qi:
                if c.attribute == m.sa:
                    raise self.error(
                        f"{c.attribute!r} is the sensitive attribute; it goes left of '|' "
                        "(conditions name quasi-identifiers only)",
                        c.span,
                    )
                raise self.error(
                    f"unknown quasi-identifier {c.attribute!r} "
                    f"(the release's QI: {', '.join(map(str, m.qi))})",
                    c.span,
                )
            for v, s in zip(c.values, _spans(c.value_spans, len(c.values)), strict=True):
                self.check_value(c.attribute, v, "quasi-identifier", s)
            kwargs[c.attribute] = c.values[0] if len(c.values) == 1 else list(c.values)
        return kwargs

    def check_sensitive(self, values, spans) -> object:
        for v, s in zip(values, _spans(spans, len(values)), strict=True):
            self.check_value(self.model.sa, v, "sensitive", s)
        return values[0] if len(values) == 1 else list(values)

    def person(self, name: str, span=None):
        if name not in self.persons:
            raise self.error(f"person {name!r} is not defined before this statement", span)
        return self.persons[name]

    def expr(self, node: Expr):
        from .errors import KnowledgeError

        if isinstance(node, Num):
            return float(node.value)
        if isinstance(node, Neg):
            return -self.expr(node.operand)
        if isinstance(node, BinOp):
            a, b = self.expr(node.left), self.expr(node.right)
            if node.op == "+":
                return a + b
            if node.op == "-":
                return a - b
            if node.op == "*":
                return a * b
            return a / b
        if isinstance(node, Prob):
            if node.person is None and node.attribute != self.model.sa:
                raise self.error(
                    f"P(...) must name the sensitive attribute {self.model.sa!r} left of '|', "
                    f"not {node.attribute!r}",
                    node.attribute_span,
                )
            s = self.check_sensitive(node.values, node.value_spans)
            if node.person is not None:
                try:
                    return self.person(node.person, node.span).P(s)
                except KnowledgeError as exc:
                    raise self.error(str(exc), node.span) from exc
            kwargs = self.check_conditions(node.conditions)
            try:
                return self.model.P(s, **kwargs)
            except KnowledgeError as exc:
                raise self.error(str(exc), node.span) from exc
        if isinstance(node, Count):
            self.check_sensitive((node.value,), (node.value_span,))
            people = [
                self.person(n, s)
                for n, s in zip(
                    node.persons, _spans(node.person_spans, len(node.persons)), strict=True
                )
            ]
            count_having = _count_having(self.model)
            if count_having is None:
                raise self.error(
                    "count(...) needs count_having() in maxent_privacy.knowledge, which this "
                    "version does not have",
                    node.span,
                )
            try:
                return count_having(node.value, people)
            except KnowledgeError as exc:
                raise self.error(str(exc), node.span) from exc
        raise TypeError(f"not a knowledge expression: {node!r}")  # pragma: no cover

    def fact(self):
        from .knowledge import soft, vague

        st = self.st
        if st.kind == "vague":
            return vague(self.expr(st.left), _constant(st.right), st.eps)
        left, right = self.expr(st.left), self.expr(st.right)
        if st.op == "==":
            constraint = left == right
        elif st.op == "<=":
            constraint = left <= right
        elif st.op == ">=":
            constraint = left >= right
        else:
            raise self.error(f"unknown comparison {st.op!r}")
        return soft(constraint, st.weight) if st.kind == "soft" else constraint


def _spans(spans, n: int) -> tuple:
    """Positions of n parts, or None for each when the statement was built by hand."""
    return tuple(spans) if spans and len(spans) == n else (None,) * n


def _count_having(model):
    from . import knowledge

    fn = getattr(knowledge, "count_having", None)
    if fn is None:
        fn = getattr(model, "count_having", None)
    return fn


def _snapshot(model) -> dict:
    """The model's state before ``model.person`` rebuilds it (restored on failure).

    ``person`` replaces the model's arrays and variable, appends to its lists and rewrites
    every fact's rows in place, so lists and dicts are copied and the facts too.
    """
    import copy

    state = {}
    for key, value in vars(model).items():
        if key == "facts":
            value = [copy.copy(f) for f in value]
        elif isinstance(value, (list, dict, set)):
            value = copy.copy(value)
        state[key] = value
    return state


def _restore(model, state: dict) -> None:
    vars(model).clear()
    vars(model).update(state)


def apply_knowledge(model, statements) -> list[str]:
    """Add parsed statements to a model; return the names of the facts added, in order.

    Each fact is added with ``model.add`` under its ``name "..."`` prefix or, without one,
    its own text (vague facts become two, ``"<name> (low)"`` and ``"<name> (high)"``).
    ``person`` statements call ``model.person(name, **qi)`` (no QI: the release's person
    column) and add no fact. All or nothing: when a statement fails, the facts this call
    added are removed again (and persons it singled out dropped), and a
    :class:`KnowledgeFileError` says ``source:line:column`` and why.
    """
    import cvxpy as cp

    statements = list(statements)
    for st in statements:
        if not isinstance(st, Statement):
            raise TypeError(
                "apply_knowledge() needs Statements (from parse_knowledge), "
                f"got {type(st).__name__}"
            )
    # model.person() rebuilds the model, which model.remove() cannot undo
    state = _snapshot(model) if any(st.kind == "person" for st in statements) else None
    persons: dict = {}
    added: list[str] = []
    try:
        for st in statements:
            compiler = _Compiler(model, st, persons)
            try:
                if st.kind == "person":
                    kwargs = compiler.check_conditions(st.conditions)
                    make = getattr(model, "person", None)
                    if make is None:
                        raise compiler.error(
                            "person statements need MaxEntModel.person(), which this version "
                            "does not have"
                        )
                    persons[st.person] = make(st.person, **kwargs)
                    continue
                obj = compiler.fact()
                before = {f.name for f in model.facts}
                model.add(obj, name=st.label or None)  # hand-made: the model's own name
                added.extend(f.name for f in model.facts if f.name not in before)
            except KnowledgeFileError:
                raise
            except (MaxEntError, ValueError, TypeError, cp.error.DCPError) as exc:
                raise compiler.error(str(exc)) from exc
    except BaseException:
        if state is not None and persons:
            _restore(model, state)
        else:
            present = {f.name for f in model.facts}
            for name in reversed(added):
                if name in present:
                    model.remove(name)
        raise
    return added
