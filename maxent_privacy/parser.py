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
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from .errors import MaxEntError
from .ranges import between, is_range

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

# ------------------------------------------------------------------------- limits
MAX_FILE_BYTES = 1_000_000
"""Largest knowledge text accepted: bytes of a file (checked before it is read), characters
of a string given to :func:`parse_knowledge`.

Every statement becomes a fact, a constraint of the maximum-entropy problem, so real files
hold hundreds of lines; 1 MB is some 15,000 facts and parses in about a second. The bound
is on the worst case: within it, even a file of one-character tokens parses in seconds
and a few hundred MB, where a 50 MB file would hold the parser for minutes and take
gigabytes. To accept more, set ``maxent_privacy.parser.MAX_FILE_BYTES`` (read at each
call)."""

MAX_LINE_CHARS = 100_000
"""Longest line accepted, in characters: room for a sum of about 2,500 ``P(...)`` terms.

A line is one statement, so this bounds the tokens and tree of a single fact; a longer
line is refused at column ``MAX_LINE_CHARS + 1`` (unless an error comes earlier)."""

MAX_NESTING = 1_000
"""Deepest nesting of parentheses ``( ... )`` in an expression.

The parser keeps one small frame per open parenthesis on its own stack (not Python's), so
this is not forced by recursion; it keeps a statement's tree shallow for whatever walks it
later, and no sensible fact comes near it. The error is at the first ``(`` too deep."""

MAX_MESSAGE_CHARS = 300
"""Longest error message: a long reason is cut with ``...``, a quoted token shows its
first 40 characters (``_SHOW_TOKEN``) and a long source name its last 100."""

_SHOW_TOKEN = 40
_SHOW_SOURCE = 100


def _shorten(text, limit: int = _SHOW_TOKEN) -> str:
    """``text`` fit for a one-line message: non-printing characters escaped (``\\x00``)
    and at most ``limit`` characters shown, then ``...``."""
    text = str(text)
    out, size = [], 0
    for ch in text[:limit]:
        shown = ch if ch.isprintable() else repr(ch)[1:-1]
        if size + len(shown) > limit:
            break
        out.append(shown)
        size += len(shown)
    return "".join(out) + ("" if len(out) == len(text) else "...")


class KnowledgeFileError(MaxEntError, ValueError):
    """A knowledge file is malformed, or one of its statements does not fit the model.

    The message is one line, ``source:line:column: what is wrong (near '...')`` (or
    ``source: what is wrong`` for the whole file, e.g. its size), at most
    :data:`MAX_MESSAGE_CHARS` characters; the parts are kept as ``source``, ``line``,
    ``column`` (1-based; 0 for the whole file), ``reason`` and ``near`` (both as shown).
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
        reason = " ".join(str(reason)[: 4 * MAX_MESSAGE_CHARS].split())  # one line
        shown_source = str(source)
        if len(shown_source) > _SHOW_SOURCE:  # the end of a path names the file
            shown_source = "..." + shown_source[-(_SHOW_SOURCE - 3) :]
        shown_source = _shorten(shown_source, _SHOW_SOURCE + 3)
        head = f"{shown_source}:{line}:{column}: " if line else f"{shown_source}: "
        tail = ""
        if near is not None:
            near = _shorten(near)
            tail = f" (near '{near}')" if near else " (at end of line)"
        room = MAX_MESSAGE_CHARS - len(head) - len(tail)
        reason = _shorten(reason, max(room - 3, 20))
        self.reason, self.source, self.line, self.column, self.near = (
            reason,
            source,
            line,
            column,
            near,
        )
        super().__init__(head + reason + tail)


# --------------------------------------------------------------------------- the AST
# Positions (1-based columns; ``span`` is [start, end) of the source text) are left out of
# equality, so statements compare by what they say.
_POS = {"compare": False, "repr": False}


@dataclass(frozen=True, slots=True)
class Num:
    """A number."""

    value: float
    span: tuple[int, int] = field(default=(0, 0), **_POS)


@dataclass(frozen=True, slots=True)
class Condition:
    """``attribute = value``, ``attribute in {values}`` (any of them), or a range
    (``in lo..hi``, ``< x``, ...: ``values`` holds one :class:`~maxent_privacy.ranges.Between`)."""

    attribute: str
    values: tuple
    span: tuple[int, int] = field(default=(0, 0), **_POS)
    value_spans: tuple = field(default=(), **_POS)


@dataclass(frozen=True, slots=True)
class Prob:
    """``P(attribute in values | conditions)``, or ``P(person has one of values)``."""

    values: tuple
    attribute: str | None = None
    conditions: tuple[Condition, ...] = ()
    person: str | None = None
    span: tuple[int, int] = field(default=(0, 0), **_POS)
    attribute_span: tuple[int, int] = field(default=(0, 0), **_POS)
    value_spans: tuple = field(default=(), **_POS)


@dataclass(frozen=True, slots=True)
class Count:
    """``count(value among persons)``: the expected number of them having the value."""

    value: object
    persons: tuple[str, ...]
    span: tuple[int, int] = field(default=(0, 0), **_POS)
    value_span: tuple[int, int] = field(default=(0, 0), **_POS)
    person_spans: tuple = field(default=(), **_POS)


# Neg and BinOp nest as deep as a sum is long (a + b + c is ((a + b) + c)), so their ==,
# hash and repr walk the tree with a stack of their own instead of recursing.
class _Tree:
    __slots__ = ()

    def __eq__(self, other):
        if other.__class__ is not self.__class__:
            return NotImplemented
        return _same_tree(self, other)

    def __hash__(self):
        return hash(tuple(_preorder(self)))

    def __repr__(self):
        return _tree_repr(self)


@dataclass(frozen=True, eq=False, repr=False, slots=True)
class Neg(_Tree):
    """``-operand``."""

    operand: Expr
    span: tuple[int, int] = field(default=(0, 0), **_POS)


@dataclass(frozen=True, eq=False, repr=False, slots=True)
class BinOp(_Tree):
    """``left op right`` with op one of ``+ - * /`` (kept linear by the parser)."""

    op: str
    left: Expr
    right: Expr
    span: tuple[int, int] = field(default=(0, 0), **_POS)


Expr = Num | Prob | Count | Neg | BinOp


def _preorder(node):
    """The nodes' labels in prefix order: ("BinOp", op), "Neg" or the leaf itself."""
    stack = [node]
    while stack:
        x = stack.pop()
        if isinstance(x, BinOp):
            yield ("BinOp", x.op)
            stack.append(x.right)
            stack.append(x.left)
        elif isinstance(x, Neg):
            yield "Neg"
            stack.append(x.operand)
        else:
            yield x


def _same_tree(a, b) -> bool:
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if x is y:
            continue
        if isinstance(x, (BinOp, Neg)) or isinstance(y, (BinOp, Neg)):
            if x.__class__ is not y.__class__:
                return False
            if isinstance(x, Neg):
                stack.append((x.operand, y.operand))
                continue
            if x.op != y.op:
                return False
            stack.append((x.right, y.right))
            stack.append((x.left, y.left))
        elif x != y:
            return False
    return True


def _tree_repr(node) -> str:
    """The dataclass repr (``BinOp(op='+', left=..., right=...)``), built without recursion."""
    out: list[str] = []
    stack: list = [(False, node)]  # (is text, text or node)
    while stack:
        is_text, x = stack.pop()
        if is_text:
            out.append(x)
        elif isinstance(x, BinOp):
            stack += [(True, ")"), (False, x.right), (True, ", right="), (False, x.left)]
            out.append(f"BinOp(op={x.op!r}, left=")
        elif isinstance(x, Neg):
            stack += [(True, ")"), (False, x.operand)]
            out.append("Neg(operand=")
        else:
            out.append(repr(x))
    return "".join(out)


def _arith(op: str, a: float, b: float) -> float:
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    return a / b if b else math.nan  # refused by the parser; nan for hand-made trees


def _constants(root, memo: dict | None = None) -> dict:
    """``memo[id(node)] = (node, value)`` for ``root`` and the nodes under it; ``value`` is
    the number a node stands for when it holds numbers only, else None.

    Iterative (post-order with a stack); nodes already in ``memo`` are not walked again,
    so the parser, which builds trees bottom-up, pays O(1) per node.
    """
    memo = {} if memo is None else memo
    stack = [(root, False)]
    while stack:
        node, ready = stack.pop()
        hit = memo.get(id(node))
        if hit is not None and hit[0] is node:
            continue
        if isinstance(node, Num):
            value = float(node.value)
        elif isinstance(node, Neg):
            if not ready:
                stack += [(node, True), (node.operand, False)]
                continue
            inner = memo[id(node.operand)][1]
            value = None if inner is None else -inner
        elif isinstance(node, BinOp):
            if not ready:
                stack += [(node, True), (node.right, False), (node.left, False)]
                continue
            a, b = memo[id(node.left)][1], memo[id(node.right)][1]
            value = None if a is None or b is None else _arith(node.op, a, b)
        else:
            value = None
        memo[id(node)] = (node, value)
    return memo


def _constant(node: Expr) -> float:
    value = _constants(node)[id(node)][1]
    assert value is not None, "not a constant"
    return value


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
class _Token(NamedTuple):
    kind: str  # "ident", "string", "number", "op", "bad" (unknown character), "end"
    text: str
    value: object
    column: int  # 1-based
    end: int  # column just past the token

    def is_op(self, *ops: str) -> bool:
        return self.kind == "op" and self.text in ops

    def is_word(self, *words: str) -> bool:
        return self.kind == "ident" and self.text in words


_NUMBER = r"(?:\d+(?:\.(?!\.)\d*)?|\.\d+)(?:[eE][+-]?\d+)?"  # 18..29: "18", "..", "29"
_IDENT = r"[^\W\d][\w-]*"
_STRING_BODY = re.compile(r'[^"\\]*(?:\\.[^"\\]*)*', re.DOTALL)  # no backtracking
_ESCAPE = re.compile(r"\\(.)", re.DOTALL)
_OPS = (
    "..",
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
# One token after blanks: a number, an identifier, an operator (in _OPS' order: "+-" before
# "+"), the opening quote of a string, a comment, or any other character (a "bad" token).
_TOKEN = re.compile(
    rf"[ \t\r\f\v]*(?:(?P<number>{_NUMBER})|(?P<ident>{_IDENT})"
    rf"|(?P<op>{'|'.join(map(re.escape, _OPS))})|(?P<string>\")|(?P<comment>#)"
    r"|(?P<bad>[^ \t\r\f\v]))",  # not a blank: blanks then the end of the line match nothing
    re.DOTALL,
)


class _Lexer:
    """The tokens of one line, read one at a time as the parser asks for them.

    So the first bad token stops everything: nothing after it is read. Nothing past
    :data:`MAX_LINE_CHARS` is read either: a name or number the limit cuts is given as
    far as it goes (so an error about it still comes first); a string it cuts, or asking
    for a token past it, says the line is too long.
    """

    def __init__(self, raw: str, line: int, source: str):
        self.raw, self.line, self.source = raw, line, source
        self.stop = min(len(raw), MAX_LINE_CHARS)
        self.long = len(raw) > MAX_LINE_CHARS
        self.i = 0
        self.last_end = 1  # column just past the last token

    def fail(self, reason: str, col: int, near: str | None) -> KnowledgeFileError:
        return KnowledgeFileError(reason, source=self.source, line=self.line, column=col, near=near)

    def too_long(self) -> KnowledgeFileError:
        return self.fail(
            f"line longer than {MAX_LINE_CHARS:,} characters (MAX_LINE_CHARS, the parser's "
            "limit on one statement)",
            MAX_LINE_CHARS + 1,
            None,
        )

    def token(self) -> _Token:
        m = _TOKEN.match(self.raw, self.i, self.stop)
        kind = m.lastgroup if m is not None else "comment"
        if kind == "comment":  # or nothing but blanks up to the limit
            if m is None and self.long:
                raise self.too_long()
            return _Token("end", "", None, self.last_end, self.last_end)
        text, end = m.group(kind), m.end()
        col = end - len(text) + 1
        if kind == "string":
            tok = self.string(col - 1)
        elif kind == "number":
            value: float | int = float(text)
            if not math.isfinite(value):
                raise self.fail("number out of range", col, text)
            if text.isdigit():
                value = int(text.lstrip("0") or "0")  # < 1.8e308: far below int()'s limit
            tok = _Token("number", text, value, col, end + 1)
        else:
            # a "bad" character is left for the parser, so that the error is at the first
            # token out of place
            tok = _Token(kind, text, text, col, end + 1)
        self.i, self.last_end = tok.end - 1, tok.end
        return tok

    def string(self, i: int) -> _Token:
        raw, stop = self.raw, self.stop
        body = _STRING_BODY.match(raw, i + 1, stop)
        text = body.group()
        for esc in _ESCAPE.finditer(text) if "\\" in text else ():
            if esc.group(1) not in ('"', "\\"):
                j = i + 1 + esc.start()
                raise self.fail(
                    'unknown escape in a string (only \\" and \\\\ are allowed)',
                    j + 1,
                    raw[j : j + 2],
                )
        j = body.end()
        if j < stop and raw[j] == "\\":  # a backslash with nothing after it
            if j + 1 >= stop and self.long:
                raise self.too_long()
            raise self.fail(
                'unknown escape in a string (only \\" and \\\\ are allowed)', j + 1, raw[j:]
            )
        if j >= stop:
            if self.long:
                raise self.too_long()
            raise self.fail('unterminated string (no closing ")', i + 1, raw[i:].rstrip())
        value = _ESCAPE.sub(r"\1", text) if "\\" in text else text
        return _Token("string", raw[i : j + 1], value, i + 1, j + 2)


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

    def __init__(self, lexer: _Lexer, persons: dict):
        self.lexer = lexer
        self.raw, self.line, self.source = lexer.raw, lexer.line, lexer.source
        self.persons = persons  # name -> line of its definition (so far in the file)
        self.ahead: list[_Token] = []  # tokens read but not consumed (at most two)
        self.prev: _Token | None = None  # the last token consumed

    # -- helpers
    def peek(self, k: int = 0) -> _Token:
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

    def next(self) -> _Token:
        tok = self.peek()
        if tok.kind != "end":
            self.ahead.pop(0)
            self.prev = tok
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

    def make(self, kind: str, body_tok: _Token, **parts) -> Statement:
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
                f"person '{_shorten(who)}' is already defined on line {self.persons[who]}", tok
            )
        conditions: tuple[Condition, ...] = ()
        if not self.peek().is_op(":"):
            if self.peek().kind != "end":
                raise self.error(f"expected ':' after 'person {_shorten(tok.text)}'")
            # no QI: the release's person (pseudonym) column says which record it is
        else:
            self.next()
            if self.peek().kind == "end":
                raise self.error(
                    f"expected quasi-identifier values after 'person {_shorten(tok.text)}:' "
                    '(attribute = "value", ...)'
                )
            conditions = self.conditions(single=True)
        self.finish()
        self.persons[who] = self.line
        return self.make("person", body_tok, person=who, conditions=conditions)

    def finish(self) -> None:
        tok = self.peek()
        if tok.kind != "end":
            raise self.error(f"unexpected '{_shorten(tok.text)}' after the end of the statement")

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
                        None if a is None or b is None else _arith(level.sum_op, a, b),
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
            BinOp(op, left, right, span=span), None if a is None or b is None else _arith(op, a, b)
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
        raise self.error(f"expected P(...), count(...) or a number, not '{_shorten(tok.text)}'")

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

    def value_range(self, attr: _Token, start: int) -> tuple[tuple, tuple]:
        """``lo..hi`` after ``attribute in``: a :class:`Between`, bounds included."""
        lo, _ = self.number(f"{{values}} or a range lo..hi after '{_shorten(attr.text)} in'")
        self.expect_op("..", "between the bounds of a range (lo..hi)")
        hi, (_, end) = self.number("the upper bound of the range (a number)")
        if lo > hi:
            raise self.error(
                f"empty range: lower bound {lo:g} is above upper bound {hi:g}", span=(start, end)
            )
        return (between(lo, hi),), ((start, end),)

    def attr_values(self, attr: _Token, single: bool, ranges: bool = False) -> tuple[tuple, tuple]:
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
                f"'{_shorten(attr.text)}' must be compared with '='"
                + (exact if single else " or 'in {...}'")
            )
        raise self.error(
            f"expected '=' {'' if single else 'or in {...} '}after '{_shorten(attr.text)}'"
        )

    def conditions(self, single: bool = False) -> tuple[Condition, ...]:
        out: list[Condition] = []
        seen: set[str] = set()
        while True:
            attr = self.ident("a quasi-identifier name")
            if attr.text in seen:
                raise self.error(f"quasi-identifier '{_shorten(attr.text)}' is given twice", attr)
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
                f"person '{_shorten(who)}' is not defined (define it on an earlier line: "
                f'person {_shorten(tok.text)}: attribute = "value", ...)',
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
                raise self.error(f"person '{_shorten(who)}' is named twice", span=s)
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
        raise TypeError(f"parse_knowledge() needs a str, got {type(text).__name__}")
    if len(text) > MAX_FILE_BYTES:
        raise _too_big(source, "characters", len(text))
    text = text.removeprefix("\ufeff")
    persons: dict[str, int] = {}
    out: list[Statement] = []
    for number, raw in _lines(text):
        parser = _Parser(_Lexer(raw.rstrip("\r"), number, source), persons)
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

    def check_range_values(self, column: str, spec, span) -> None:
        from .errors import KnowledgeError

        try:
            self.model.match_values(column, spec)
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
                if is_range(v):
                    self.check_range_values(c.attribute, v, s)
                else:
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

    def leaf(self, node: Prob | Count):
        """The cvxpy expression of one ``P(...)`` or ``count(...)``."""
        from .errors import KnowledgeError
        from .knowledge import count_having

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
        self.check_sensitive((node.value,), (node.value_span,))
        people = [
            self.person(n, s)
            for n, s in zip(node.persons, _spans(node.person_spans, len(node.persons)), strict=True)
        ]
        try:
            return count_having(node.value, people)
        except KnowledgeError as exc:
            raise self.error(str(exc), node.span) from exc

    def expr(self, root: Expr):
        """The cvxpy expression of a side: ``sum(coefficient * leaf) + constant``.

        The tree is walked top-down with a stack, each ``P(...)``/``count(...)`` leaf
        taking the product of the factors above it, so the expression is flat however
        deep the tree (cvxpy's own trees are walked recursively). A leaf written more than
        once is one term with the coefficients added (cvxpy's cost is per term). A lone
        leaf is returned as it is (the model knows it by its identity).
        """
        if isinstance(root, (Prob, Count)):
            return self.leaf(root)
        consts = _constants(root)
        constant, terms = 0.0, {}  # leaf (or its id if unhashable) -> [coefficient, cvxpy]
        stack = [(root, 1.0)]  # left-most on top: leaves are checked in reading order
        while stack:
            node, factor = stack.pop()
            value = consts[id(node)][1]
            if value is not None:
                constant += factor * value
            elif isinstance(node, Neg):
                stack.append((node.operand, -factor))
            elif isinstance(node, BinOp):
                a, b = consts[id(node.left)][1], consts[id(node.right)][1]
                if node.op in ("+", "-"):
                    stack.append((node.right, factor if node.op == "+" else -factor))
                    stack.append((node.left, factor))
                elif node.op == "*" and (a is not None or b is not None):
                    if a is not None:
                        stack.append((node.right, factor * a))
                    else:
                        stack.append((node.left, factor * b))
                elif node.op == "/" and b is not None and b != 0:
                    stack.append((node.left, factor / b))
                elif node.op == "*":
                    raise self.error(
                        "a product of two probabilities is not linear; multiply by numbers only",
                        node.span,
                    )
                elif node.op == "/":
                    raise self.error(
                        "divide by nonzero numbers only (the fact must stay linear)", node.span
                    )
                else:
                    raise TypeError(f"not a knowledge operator: {node.op!r}")
            elif isinstance(node, (Prob, Count)):
                key = node
                try:
                    hash(node)
                except TypeError:  # a hand-made leaf holding a list
                    key = id(node)
                if key in terms:
                    terms[key][0] += factor
                else:
                    terms[key] = [factor, self.leaf(node)]
            else:
                raise TypeError(f"not a knowledge expression: {node!r}")
        if not all(math.isfinite(c) for c in [constant, *(f for f, _ in terms.values())]):
            raise self.error("a coefficient is out of range (the arithmetic overflows)")
        out = None
        for factor, term in terms.values():
            part = term if factor == 1 else (-term if factor == -1 else factor * term)
            out = part if out is None else out + part
        if out is None:
            return constant
        return out + constant if constant else out

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
    persons: dict = {}
    added: list[str] = []
    with model.transaction():  # all or nothing, persons singled out included
        for st in statements:
            compiler = _Compiler(model, st, persons)
            try:
                if st.kind == "person":
                    kwargs = compiler.check_conditions(st.conditions)
                    persons[st.person] = model.person(st.person, **kwargs)
                    continue
                obj = compiler.fact()
                before = {f.name for f in model.facts}
                model.add(obj, name=st.label or None)  # hand-made: the model's own name
                added.extend(f.name for f in model.facts if f.name not in before)
            except KnowledgeFileError:
                raise
            except (MaxEntError, ValueError, TypeError, cp.error.DCPError) as exc:
                raise compiler.error(str(exc)) from exc
    return added
