"""Did you mean ...? An argument parser that suggests the nearest option or choice.

argparse names an unknown option (``unrecognized arguments: --treshold``) or a choice
(``invalid choice: 'reprot'``) without saying what was meant; Python 3.14's
``suggest_on_error`` does so for choices only. :class:`SuggestingParser` adds, on any
Python, ``(did you mean --threshold?)`` from :func:`difflib.get_close_matches` over the
options of the command and its subcommands, and over the choices of an argument.

>>> parser = SuggestingParser(prog="demo")
>>> _ = parser.add_argument("--threshold")
>>> parser.suggestion("unrecognized arguments: --treshold 0.4")
"unrecognized arguments: --treshold 0.4 (did you mean '--threshold'?)"
"""

from __future__ import annotations

import argparse
import difflib
import re

__all__ = ["SuggestingParser", "nearest"]

_UNKNOWN = re.compile(r"^unrecognized arguments: (?P<args>.*)$", re.DOTALL)
_CHOICE = re.compile(r"invalid choice: (?P<given>'[^']*'|\S+) \(choose from (?P<choices>.*)\)$")


def nearest(word: str, candidates) -> str | None:
    """The candidate closest to ``word`` (difflib's ratio at least 0.6), or None."""
    found = difflib.get_close_matches(word, sorted(set(candidates)), n=1, cutoff=0.6)
    return found[0] if found else None


class SuggestingParser(argparse.ArgumentParser):
    """An :class:`argparse.ArgumentParser` whose errors suggest the option or choice meant
    (subparsers made by ``add_subparsers`` are of this class too)."""

    def _options(self) -> set[str]:
        """Every option string of this parser and of its subcommands, recursively."""
        found: set[str] = set()
        for action in self._actions:
            found.update(s for s in action.option_strings if s.startswith("--"))
            if isinstance(action, argparse._SubParsersAction):
                for sub in action.choices.values():
                    if isinstance(sub, SuggestingParser):
                        found |= sub._options()
        return found

    def suggestion(self, message: str) -> str:
        """``message`` with ``(did you mean ...?)`` added where a near match exists."""
        unknown = _UNKNOWN.match(message)
        if unknown:
            options = self._options()
            meant = []
            for word in unknown["args"].split():
                if word.startswith("-") and word not in options:
                    near = nearest(word.split("=", 1)[0], options)
                    if near is not None and near not in meant:
                        meant.append(near)
            if meant:
                return f"{message} (did you mean {' or '.join(map(repr, meant))}?)"
            return message
        choice = _CHOICE.search(message)
        if choice:
            given = choice["given"].strip("'")
            choices = [c.strip().strip("'") for c in choice["choices"].split(",")]
            near = nearest(given, choices)
            if near is not None:
                return f"{message} (did you mean {near!r}?)"
        return message

    def error(self, message: str):
        """One line on standard error, exit 2: the message (with its suggestion) and where
        the usage is, not the usage itself (it can run to a dozen lines)."""
        self.exit(2, f"{self.prog}: error: {self.suggestion(message)} (usage: {self.prog} -h)\n")
