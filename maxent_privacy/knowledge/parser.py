"""A small text format for background knowledge, and its parser.

One statement per line; ``#`` starts a comment (outside strings); blank lines are ignored::

    P(disease = "Breast Cancer" | gender = "male") = 0
    P(disease = "Flu" | gender = "male") = 0.3 +- 0.05          # vague: 0.25 .. 0.35
    P(disease = "Flu" | degree = "college") >= P(disease = "HIV" | degree = "college")
    P(disease in {"Flu", "HIV"} | gender = "female") >= 0.2
    P(disease = "Flu" | age in 18..29) <= 0.4                    # ages 18 to 29
    P(disease = "HIV" | age >= 60, gender = "male") = 0           # also <, <=, >
    P(disease = "Flu") = 0.3                                     # no condition: all records
    person Alice: gender = "female", degree = "junior"
    P(Alice has "HIV" or "Flu") = 1
    count("HIV" among Alice, Bob, Carol) = 2
    soft 2.0: P(disease = "HIV" | gender = "female") = 0.1
    name "my fact": P(disease = "Flu" | gender = "male") <= 0.6

Values are double-quoted strings (``\\"`` and ``\\\\`` escapes) or numbers; attribute and
person names are identifiers (letters, digits, ``_`` and ``-``, not starting with a digit).
A condition right of ``|`` is ``attribute = value``, ``attribute in {values}``, a range
``attribute in lo..hi`` (both bounds included) or ``attribute < x`` (``<=``, ``>``,
``>=``): a range stands for the attribute's values present in the data that lie in it
(:mod:`maxent_privacy.ranges`; the model's ``between``). A ``person`` statement gives
exact values (``=``) only.
Comparisons are ``=`` (or ``==``), ``<=`` and ``>=``; either side is a linear expression of
``P(...)`` and ``count(...)`` terms and numbers (``+``, ``-``, ``*`` and ``/`` by a number).
``= p +- eps`` is vague knowledge (:func:`maxent_privacy.knowledge.vague`), ``soft w:`` a
soft fact (:func:`maxent_privacy.knowledge.soft`) and ``name "...":`` names the fact (its key
in ``result.duals``); without a name a fact is named by its own text.

The text is read by a tokenizer and a parser: nothing in it is ever evaluated as Python.
Errors are :class:`KnowledgeFileError` with ``source:line:column``, at the first token out
of place: the tokenizer reads a line only as far as the parser asks for tokens.

Limits: a knowledge file may come from anyone, so the parser bounds its work. A text or
file larger than :data:`MAX_FILE_BYTES`, a line longer than :data:`MAX_LINE_CHARS` and
parentheses nested deeper than :data:`MAX_NESTING` are refused with an error that names
the limit. Within them, time and memory grow linearly with the text: sums, products and
nesting are parsed with loops and an explicit stack, not Python recursion, so no sum is too
long for the interpreter's stack. Error messages are one line of at most
:data:`MAX_MESSAGE_CHARS` characters, with any quoted token cut to 40 characters + ``...``.

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

import codecs
import math
from pathlib import Path

from .._validation import ArgumentTypeError
from ..releases.ranges import between
from .compiler import apply_knowledge
from .lexer import Lexer, Token
from .syntax import (
    MAX_FILE_BYTES,
    MAX_LINE_CHARS,
    MAX_MESSAGE_CHARS,
    MAX_NESTING,
    BinOp,
    Condition,
    Count,
    Expr,
    KnowledgeFileError,
    Neg,
    Num,
    Prob,
    Statement,
    arith,
    shorten,
)

__all__ = [
    "MAX_FILE_BYTES",
    "MAX_LINE_CHARS",
    "MAX_MESSAGE_CHARS",
    "MAX_NESTING",
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


# ------------------------------------------------------------------------- parser
class _Level:
    """The parser's state inside one pair of parentheses (or at the top of a side)."""

    __slots__ = (
        "start",
        "signs",
        "sum",
        "sum_value",
        "sum_op",
        "term",
        "term_value",
        "term_start",
        "term_op",
    )

    def __init__(self, start: int):
        self.start = self.term_start = start  # columns where the sum and its term begin
        self.signs: list[int] = []  # columns of the unary '-' before the coming operand
        self.sum = self.sum_value = self.sum_op = None  # the sum so far, its number, + or -
        self.term = self.term_value = self.term_op = None  # the product so far, * or / token


class _Parser:
    """Recursive descent over the tokens of one line, with expressions (the only part
    whose depth grows with the input) parsed by a loop over an explicit stack."""

    def __init__(self, lexer: Lexer, persons: dict):
        self.lexer = lexer
        self.raw, self.line, self.source = lexer.raw, lexer.line, lexer.source
        self.persons = persons  # name -> line of its definition (so far in the file)
        self.ahead: list[Token] = []  # tokens read but not consumed (at most two)
        self.prev: Token | None = None  # the last token consumed

    # -- helpers
    def peek(self, k: int = 0) -> Token:
        try:
            return self.ahead[k]
        except IndexError:
            pass
        ahead = self.ahead
        while len(ahead) <= k:
            if ahead and ahead[-1].kind == "end":
                return ahead[-1]
            ahead.append(self.lexer.token())
        return ahead[k]

    def next(self) -> Token:
        tok = self.peek()
        if tok.kind != "end":
            self.ahead.pop(0)
            self.prev = tok
        return tok

    def error(self, reason: str, tok: Token | None = None, span=None) -> KnowledgeFileError:
        if span is not None:
            col, near = span[0], self.raw[span[0] - 1 : span[1] - 1]
        else:
            tok = tok or self.peek()
            col, near = tok.column, tok.text
            if tok.kind == "bad":
                reason = f"unexpected character {tok.text!r}; {reason}"
        return KnowledgeFileError(reason, source=self.source, line=self.line, column=col, near=near)

    def expect_op(self, op: str, what: str) -> Token:
        tok = self.peek()
        if not tok.is_op(op):
            raise self.error(f"expected '{op}' {what}")
        return self.next()

    def ident(self, what: str) -> Token:
        tok = self.peek()
        if tok.kind != "ident":
            raise self.error(f"expected {what}")
        return self.next()

    def span_from(self, start: int) -> tuple[int, int]:
        prev = self.prev or self.peek()
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

    def make(self, kind: str, body_tok: Token, **parts) -> Statement:
        end = self.peek().end  # the "end" token: just past the statement's last token
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
            raise self.error(
                f"person '{shorten(who)}' is already defined on line {self.persons[who]}", tok
            )
        conditions: tuple[Condition, ...] = ()
        if not self.peek().is_op(":"):
            if self.peek().kind != "end":
                raise self.error(f"expected ':' after 'person {shorten(tok.text)}'")
            # no QI: the release's person (pseudonym) column says which record it is
        else:
            self.next()
            if self.peek().kind == "end":
                raise self.error(
                    f"expected quasi-identifier values after 'person {shorten(tok.text)}:' "
                    '(attribute = "value", ...)'
                )
            conditions = self.conditions(single=True)
        self.finish()
        self.persons[who] = self.line
        return self.make("person", body_tok, person=who, conditions=conditions)

    def finish(self) -> None:
        tok = self.peek()
        if tok.kind != "end":
            raise self.error(f"unexpected '{shorten(tok.text)}' after the end of the statement")

    def comparison(self):
        left, left_value = self.expr()
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
        right, right_value = self.expr()
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
        if left_value is not None and right_value is not None:
            raise self.error(
                "the statement compares numbers only; it needs a P(...) or count(...)",
                span=(left.span[0], right.span[1]),
            )
        self.check_range(left, right, right_value)
        self.check_range(right, left, left_value)
        return left, op, right, eps

    def check_range(self, term: Expr, other: Expr, value: float | None) -> None:
        """``value``: the number ``other`` stands for (None: not a number)."""
        if value is None:
            return
        if isinstance(term, Prob) and not 0 <= value <= 1:
            raise self.error(f"probability {value:g} is outside [0, 1]", span=other.span)
        if isinstance(term, Count) and not 0 <= value <= len(term.persons):
            raise self.error(
                f"count {value:g} is outside [0, {len(term.persons)}] "
                f"(the number of persons named)",
                span=other.span,
            )

    # -- expressions
    def expr(self) -> tuple[Expr, float | None]:
        """``expr := term (('+'|'-') term)*``, ``term := unary (('*'|'/') unary)*``,
        ``unary := ('-'|'+')* primary``, ``primary := number | P(...) | count(...) |
        '(' expr ')'``; left-associative, ``*`` and ``/`` before ``+`` and ``-``.

        Returns the tree and the number it stands for (None when it holds a ``P(...)`` or
        ``count(...)``), which every node's value is folded into as it is built.

        A loop, not recursion: each open parenthesis pushes a :class:`_Level` (at most
        :data:`MAX_NESTING`), each operand is folded into the innermost level as soon as
        it is read, and a closing parenthesis pops the level into its parent's operand.
        """
        levels: list[_Level] = []
        level = _Level(self.peek().column)
        while True:
            # one unary: its signs, then an opening parenthesis or a primary
            tok = self.peek()
            if tok.is_op("-"):
                level.signs.append(tok.column)
                self.next()
                continue
            if tok.is_op("+"):
                self.next()
                continue
            if tok.is_op("("):
                if len(levels) >= MAX_NESTING:
                    raise self.error(
                        f"parentheses nested deeper than {MAX_NESTING:,} levels "
                        "(MAX_NESTING, the parser's limit)",
                        tok,
                    )
                self.next()
                levels.append(level)
                level = _Level(self.peek().column)
                continue
            node = self.primary()
            value = float(node.value) if isinstance(node, Num) else None
            while True:  # fold the operand into its level; close levels it completes
                for column in reversed(level.signs):
                    node = Neg(node, span=self.span_from(column))
                    value = None if value is None else -value
                level.signs = []
                if level.term_op is None:
                    level.term, level.term_value = node, value
                else:
                    self.product(level, node, value)
                if self.peek().is_op("*", "/"):
                    level.term_op = self.next()
                    break
                if level.sum_op is None:
                    level.sum, level.sum_value = level.term, level.term_value
                else:
                    a, b = level.sum_value, level.term_value
                    level.sum, level.sum_value = self.checked(
                        BinOp(
                            level.sum_op, level.sum, level.term, span=self.span_from(level.start)
                        ),
                        None if a is None or b is None else arith(level.sum_op, a, b),
                    )
                level.term = level.term_op = None
                if self.peek().is_op("+", "-"):
                    level.sum_op = self.next().text
                    level.term_start = self.peek().column
                    break
                if not levels:
                    return level.sum, level.sum_value
                self.expect_op(")", "to close '('")
                node, value = level.sum, level.sum_value
                level = levels.pop()

    def product(self, level: _Level, right: Expr, b: float | None) -> None:
        """``level.term`` becomes ``level.term * right`` (or ``/``), refused unless linear."""
        op, left, a = level.term_op.text, level.term, level.term_value
        span = self.span_from(level.term_start)
        if op == "*" and a is None and b is None:
            raise self.error(
                "a product of two probabilities is not linear; multiply by numbers only",
                span=span,
            )
        if op == "/":
            if b is None:
                raise self.error(
                    "divide by numbers only (the fact must stay linear)", span=right.span
                )
            if b == 0:
                raise self.error("division by zero", span=right.span)
        level.term, level.term_value = self.checked(
            BinOp(op, left, right, span=span), None if a is None or b is None else arith(op, a, b)
        )

    def checked(self, node: BinOp, value: float | None) -> tuple[BinOp, float | None]:
        if value is not None and not math.isfinite(value):
            raise self.error("number out of range (the arithmetic overflows)", span=node.span)
        return node, value

    def primary(self) -> Expr:
        tok = self.peek()
        if tok.kind == "number":
            self.next()
            return Num(tok.value, span=(tok.column, tok.end))
        if tok.is_word("P") and self.peek(1).is_op("("):
            return self.prob()
        if tok.is_word("count") and self.peek(1).is_op("("):
            return self.count()
        if tok.kind == "end":
            raise self.error("expected P(...), count(...) or a number")
        raise self.error(f"expected P(...), count(...) or a number, not '{shorten(tok.text)}'")

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

    def number(self, what: str) -> tuple[float, tuple[int, int]]:
        tok = self.peek()
        if tok.kind == "number" or (tok.is_op("-") and self.peek(1).kind == "number"):
            return self.value()
        raise self.error(f"expected {what}")

    def value_range(self, attr: Token, start: int) -> tuple[tuple, tuple]:
        """``lo..hi`` after ``attribute in``: a :class:`Between`, bounds included."""
        lo, _ = self.number(f"{{values}} or a range lo..hi after '{shorten(attr.text)} in'")
        self.expect_op("..", "between the bounds of a range (lo..hi)")
        hi, (_, end) = self.number("the upper bound of the range (a number)")
        if lo > hi:
            raise self.error(
                f"empty range: lower bound {lo:g} is above upper bound {hi:g}", span=(start, end)
            )
        return (between(lo, hi),), ((start, end),)

    def attr_values(self, attr: Token, single: bool, ranges: bool = False) -> tuple[tuple, tuple]:
        tok = self.peek()
        if tok.is_op("=", "=="):
            self.next()
            v, s = self.value()
            return (v,), (s,)
        if tok.is_word("in") and not single:
            self.next()
            if ranges and not self.peek().is_op("{"):
                return self.value_range(attr, self.peek().column)
            return self.value_set()
        if ranges and tok.is_op("<", ">", "<=", ">="):
            self.next()
            x, (_, end) = self.number(f"a number after '{tok.text}'")
            if tok.text in ("<", "<="):
                b = between(None, x, include_high=tok.text == "<=")
            else:
                b = between(x, None, include_low=tok.text == ">=")
            return (b,), ((tok.column, end),)
        if tok.is_op("<", ">", "<=", ">=", "!="):
            exact = " (a person's quasi-identifiers are exact values)"
            raise self.error(
                f"'{shorten(attr.text)}' must be compared with '='"
                + (exact if single else " or 'in {...}'")
            )
        raise self.error(
            f"expected '=' {'' if single else 'or in {...} '}after '{shorten(attr.text)}'"
        )

    def conditions(self, single: bool = False) -> tuple[Condition, ...]:
        out: list[Condition] = []
        seen: set[str] = set()
        while True:
            attr = self.ident("a quasi-identifier name")
            if attr.text in seen:
                raise self.error(f"quasi-identifier '{shorten(attr.text)}' is given twice", attr)
            seen.add(attr.text)
            values, spans = self.attr_values(attr, single, ranges=not single)
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
                f"person '{shorten(who)}' is not defined (define it on an earlier line: "
                f'person {shorten(tok.text)}: attribute = "value", ...)',
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
                raise self.error(f"person '{shorten(who)}' is named twice", span=s)
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


def _lines(text: str):
    """``(number, line)`` for each line of ``text``, without splitting it all at once."""
    start, number, n = 0, 1, len(text)
    while start <= n:
        end = text.find("\n", start)
        if end < 0:
            end = n
        yield number, text[start:end]
        start, number = end + 1, number + 1


def _too_big(source: str, unit: str, size: int | None) -> KnowledgeFileError:
    """The error for a text (``unit`` "characters") or file ("bytes") over the limit."""
    what = "file" if unit == "bytes" else "text"
    found = f"{size:,} {unit}" if size is not None else f"more than {MAX_FILE_BYTES:,} {unit} read"
    return KnowledgeFileError(
        f"knowledge {what} too large ({found}); the limit is {MAX_FILE_BYTES:,} {unit} "
        "(MAX_FILE_BYTES in maxent_privacy.parser)",
        source=source,
    )


def parse_knowledge(text: str, source: str = "<string>") -> list[Statement]:
    """Parse knowledge text into statements (one per non-blank, non-comment line).

    ``source`` names the text in error messages (``source:line:column: ...``). Raises
    :class:`KnowledgeFileError` at the first malformed statement, or at once for a text of
    more than :data:`MAX_FILE_BYTES` characters.

    >>> [s.kind for s in parse_knowledge('person A: gender = "male"\\nP(A has "Flu") <= .5')]
    ['person', 'fact']
    """
    if not isinstance(text, str):
        raise ArgumentTypeError(f"parse_knowledge() needs a str, got {type(text).__name__}")
    if len(text) > MAX_FILE_BYTES:
        raise _too_big(source, "characters", len(text))
    text = text.removeprefix("\ufeff")
    persons: dict[str, int] = {}
    out: list[Statement] = []
    for number, raw in _lines(text):
        parser = _Parser(Lexer(raw.rstrip("\r"), number, source), persons)
        if parser.peek().kind == "end":
            continue
        out.append(parser.statement())
    return out


def load_knowledge(path) -> list[Statement]:
    """Read and parse a knowledge file (UTF-8); errors name the file.

    A file of more than :data:`MAX_FILE_BYTES` bytes is refused before it is read (and
    never more than that is read, whatever the file system says its size is).
    """
    path = Path(path)
    source = str(path)
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise _too_big(source, "bytes", size)
    with path.open("rb") as handle:
        data = handle.read(MAX_FILE_BYTES + 1)  # a pipe or device may say size 0
    if len(data) > MAX_FILE_BYTES:
        raise _too_big(source, "bytes", None)
    bom = len(codecs.BOM_UTF8) if data.startswith(codecs.BOM_UTF8) else 0
    try:
        text = data[bom:].decode("utf-8")
    except UnicodeDecodeError as exc:
        at = bom + exc.start  # offset in the file; lines end at \n, \r\n or \r
        before = data[bom:at]
        breaks = before.count(b"\n") + before.count(b"\r") - before.count(b"\r\n")
        line_start = max(before.rfind(b"\n"), before.rfind(b"\r")) + 1
        raise KnowledgeFileError(
            f"not a UTF-8 text file ({exc.reason}: byte 0x{data[at]:02x} at offset {at})",
            source=source,
            line=breaks + 1,
            column=len(before[line_start:].decode("utf-8")) + 1,
        ) from exc
    del data
    # newlines as Path.read_text() reads them: \r\n and \r become \n
    return parse_knowledge(text.replace("\r\n", "\n").replace("\r", "\n"), source=source)
