"""The knowledge text format's tokenizer: the tokens of one line, read as the parser asks.

:class:`Token` is one token (a number, an identifier, a string, an operator, an unknown
character or the end of the line); :class:`Lexer` reads them one at a time, never past
:data:`~maxent_privacy.knowledge.syntax.MAX_LINE_CHARS`, with regular expressions that do
not backtrack. Nothing it reads is evaluated.

>>> lexer = Lexer('P(x = "a") >= .5', 1, "<string>")
>>> [lexer.token().text for _ in range(4)]
['P', '(', 'x', '=']
"""

from __future__ import annotations

import math
import re
from typing import NamedTuple

from .syntax import MAX_LINE_CHARS, KnowledgeFileError

__all__ = ["Lexer", "Token"]


# ---------------------------------------------------------------------- tokenizer
class Token(NamedTuple):
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


class Lexer:
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

    def token(self) -> Token:
        m = _TOKEN.match(self.raw, self.i, self.stop)
        kind = m.lastgroup if m is not None else "comment"
        if kind == "comment":  # or nothing but blanks up to the limit
            if m is None and self.long:
                raise self.too_long()
            return Token("end", "", None, self.last_end, self.last_end)
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
            tok = Token("number", text, value, col, end + 1)
        else:
            # a "bad" character is left for the parser, so that the error is at the first
            # token out of place
            tok = Token(kind, text, text, col, end + 1)
        self.i, self.last_end = tok.end - 1, tok.end
        return tok

    def string(self, i: int) -> Token:
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
        return Token("string", raw[i : j + 1], value, i + 1, j + 2)
