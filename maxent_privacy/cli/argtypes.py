"""Argument types of the commands: a number is checked where argparse reads it, and a bad
one is named in the usage error (``--tau: must be in (0, 1], got 1.5``).

>>> probability("0.5"), whole(1)("3"), seconds("2.5"), memory_size("1.5GB")
(0.5, 3, 2.5, '1.5GB')
>>> whole(2)("1")
Traceback (most recent call last):
argparse.ArgumentTypeError: must be at least 2, got 1
"""

from __future__ import annotations

import argparse
import math
import re

__all__ = ["memory_size", "probability", "seconds", "whole"]

#: a size as Dask reads it: a number and an optional unit (B, kB, MB, GB, TB, KiB, ...)
_SIZE = re.compile(r"\s*(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?\s*([kKmMgGtTpP]i?[bB]?|[bB])?\s*")


def _number(text: str, kind=float, word: str = "a number"):
    try:
        return kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not {word}: {text!r}") from None


def probability(text: str) -> float:
    """A number in (0, 1] (a threshold, a tau)."""
    value = _number(text)
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"must be in (0, 1], got {text}")
    return value


def seconds(text: str) -> float:
    """A number of seconds, more than 0."""
    value = _number(text)
    if not (value > 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"must be a finite number more than 0, got {text}")
    return value


def memory_size(text: str) -> str | float:
    """A memory size as Dask takes it: ``auto``, a share of the machine's memory in (0, 1]
    (returned as a float) or a number of bytes with an optional unit (``1.5GB``,
    ``800MiB``; returned as given)."""
    if text.strip().lower() == "auto":
        return "auto"
    match = _SIZE.fullmatch(text)
    if match is None:
        raise argparse.ArgumentTypeError(
            f"not a memory size: {text!r} (auto, a share such as 0.5, or 1.5GB, 800MiB)"
        )
    number = float(match.group(1) + (match.group(3) or ""))
    if not number > 0:
        raise argparse.ArgumentTypeError(f"must be more than 0, got {text}")
    if match.group(4) is None and number <= 1:
        return number  # a share of the memory (Dask takes it as a float)
    return text


def whole(low: int):
    """The type of a whole number at least ``low``."""

    def parse(text: str) -> int:
        value = _number(text, int, "a whole number")
        if value < low:
            raise argparse.ArgumentTypeError(f"must be at least {low}, got {text}")
        return value

    return parse
