"""Argument types of the commands: a number is checked where argparse reads it, and a bad
one is named in the usage error (``--tau: must be in (0, 1], got 1.5``).

>>> probability("0.5"), whole(1)("3"), seconds("2.5")
(0.5, 3, 2.5)
>>> whole(2)("1")
Traceback (most recent call last):
argparse.ArgumentTypeError: must be at least 2, got 1
"""

from __future__ import annotations

import argparse

__all__ = ["probability", "seconds", "whole"]


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
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be more than 0, got {text}")
    return value


def whole(low: int):
    """The type of a whole number at least ``low``."""

    def parse(text: str) -> int:
        value = _number(text, int, "a whole number")
        if value < low:
            raise argparse.ArgumentTypeError(f"must be at least {low}, got {text}")
        return value

    return parse
