"""The knowledge text format's building blocks: its limits, its error and its syntax tree.

- the limits on a knowledge text (:data:`MAX_FILE_BYTES`, :data:`MAX_LINE_CHARS`,
  :data:`MAX_NESTING`, :data:`MAX_MESSAGE_CHARS`), :func:`shorten` and
  :class:`KnowledgeFileError`, the one-line ``source:line:column`` error;
- the tree a statement parses to: :class:`Num`, :class:`Condition`, :class:`Prob`,
  :class:`Count`, :class:`Neg`, :class:`BinOp` (with stack-walked ==, hash and repr), the
  constant folding :func:`constants` and :class:`Statement`.

The format itself is documented in :mod:`maxent_privacy.knowledge.parser`, which
re-exports these names. The limits are read at each call where they are used:
``MAX_FILE_BYTES`` and ``MAX_NESTING`` from :mod:`~maxent_privacy.knowledge.parser`,
``MAX_LINE_CHARS`` from :mod:`~maxent_privacy.knowledge.lexer`, ``MAX_MESSAGE_CHARS`` from here.

>>> shorten("x" * 50, 10)
'xxxxxxxxxx...'
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..errors import MaxEntError

__all__ = [
    "MAX_FILE_BYTES",
    "MAX_LINE_CHARS",
    "MAX_MESSAGE_CHARS",
    "MAX_NESTING",
    "BinOp",
    "Condition",
    "Count",
    "Expr",
    "KnowledgeFileError",
    "Neg",
    "Num",
    "Prob",
    "Statement",
    "arith",
    "constant",
    "constants",
    "shorten",
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


def shorten(text, limit: int = _SHOW_TOKEN) -> str:
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
        shown_source = shorten(shown_source, _SHOW_SOURCE + 3)
        head = f"{shown_source}:{line}:{column}: " if line else f"{shown_source}: "
        tail = ""
        if near is not None:
            near = shorten(near)
            tail = f" (near '{near}')" if near else " (at end of line)"
        room = MAX_MESSAGE_CHARS - len(head) - len(tail)
        reason = shorten(reason, max(room - 3, 20))
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


def arith(op: str, a: float, b: float) -> float:
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    return a / b if b else math.nan  # refused by the parser; nan for hand-made trees


def constants(root, memo: dict | None = None) -> dict:
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
            value = None if a is None or b is None else arith(node.op, a, b)
        else:
            value = None
        memo[id(node)] = (node, value)
    return memo


def constant(node: Expr) -> float:
    value = constants(node)[id(node)][1]
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
