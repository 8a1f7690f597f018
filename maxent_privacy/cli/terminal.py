"""Text from the data made safe for a terminal: control characters escaped, long values cut.

A value read from a file (a person id, a sensitive value, a column name) may hold ESC or
BEL, which a terminal would obey, or be a million characters long. :func:`plain` shows
such a value as ``\\x1b`` or ``\\x07`` and cuts it after ``limit`` characters with
``...``, as the error messages do; :func:`plain_frame` does so for every label and text
cell of a table before it is printed; :func:`escape_controls` escapes without cutting
(line breaks kept), for a whole line of output.

>>> plain("Eve\\x1b[2J")
'Eve\\\\x1b[2J'
>>> plain("x" * 100, limit=10)
'xxxxxxxxxx... (90 more characters)'
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["LIMIT", "escape_controls", "plain", "plain_frame"]

#: characters of one value shown in the terminal
LIMIT = 80

# C0 and C1 control characters (but line feed and tab), DEL, and the bidirectional and
# zero-width format characters that reorder or hide text on screen
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u202a-\u202e\u2066-\u2069]")
_ALL_CONTROLS = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]"
)


def _escape(match: re.Match) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def escape_controls(text: str) -> str:
    """``text`` with every control character but line feed and tab shown as ``\\xNN``
    (bidirectional and zero-width format characters as ``\\uNNNN``)."""
    return _CONTROLS.sub(_escape, text)


def plain(value, limit: int | None = LIMIT) -> str:
    """``str(value)`` on one line for the terminal: every control character (line breaks
    too) escaped, then at most ``limit`` characters, ``...`` and how many more."""
    text = str(value)
    if limit is None:
        return _ALL_CONTROLS.sub(_escape, text)
    out, size = [], 0
    for ch in text[:limit]:  # a character shows as at least one
        shown = _ALL_CONTROLS.sub(_escape, ch)
        if size + len(shown) > limit:
            break
        out.append(shown)
        size += len(shown)
    rest = len(text) - len(out)
    return "".join(out) + (f"... ({rest:,} more characters)" if rest else "")


def plain_frame(frame: pd.DataFrame, limit: int | None = LIMIT) -> pd.DataFrame:
    """``frame`` with every index and column label and every text cell :func:`plain`."""

    def show(v):
        return plain(v, limit) if isinstance(v, str) else v

    out = frame.rename(index=show, columns=show)
    for name in out.index.names or []:
        if isinstance(name, str):
            out = out.rename_axis(index={name: plain(name, limit)})
    if isinstance(out.columns.name, str):
        out.columns.name = plain(out.columns.name, limit)
    text = [c for c in out.columns if out[c].dtype == object]
    if text:
        out = out.copy()
        for c in text:
            out[c] = out[c].map(show)
    return out
