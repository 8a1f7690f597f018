"""Stated facts, as the user wrote them: a vague statement (``= p +- eps``) is added to the
model as two facts, ``"<name> (low)"`` and ``"<name> (high)"`` (each with its own dual),
yet it is one thing the adversary is assumed to know. The report and the command count
and show statements, not the model's facts.

>>> count_statements(["flu (low)", "flu (high)", "P(HIV) == 0"])
2
>>> [name for name, _ in statements(["flu (low)", "flu (high)", "P(HIV) == 0"])]
['flu', 'P(HIV) == 0']
"""

from __future__ import annotations

import re

__all__ = ["count_statements", "stated_facts", "statements"]

_LOW, _HIGH = " (low)", " (high)"
_AT_LEAST = re.compile(r"^(?P<subject>.+) is at least (?P<value>.+?)(?P<soft> \(soft:.*\))?\.$")
_AT_MOST = re.compile(r"^(?P<subject>.+) is at most (?P<value>.+?)(?P<soft> \(soft:.*\))?\.$")


def statements(names) -> list[tuple[str, list[int]]]:
    """The statements behind fact names, in order: ``(name, positions of its facts)``; a
    ``"X (low)"`` directly followed by ``"X (high)"`` is the one vague statement ``X``."""
    names = [str(n) for n in names]
    out: list[tuple[str, list[int]]] = []
    k = 0
    while k < len(names):
        name = names[k]
        if (
            name.endswith(_LOW)
            and k + 1 < len(names)
            and names[k + 1] == name[: -len(_LOW)] + _HIGH
        ):
            out.append((name[: -len(_LOW)], [k, k + 1]))
            k += 2
        else:
            out.append((name, [k]))
            k += 1
    return out


def count_statements(names) -> int:
    """How many statements the fact ``names`` come from (a vague one counts once)."""
    return len(statements(names))


def stated_facts(facts, in_words) -> list[dict]:
    """One entry per statement for the page: ``name``, ``words`` (``in_words(fact)``; a
    vague statement "... is between A and B.") and ``soft``."""
    facts = list(facts)
    out = []
    for name, where in statements(f.name for f in facts):
        parts = [facts[k] for k in where]
        words = [in_words(f) for f in parts]
        text = words[0]
        if len(parts) == 2:
            low, high = _AT_LEAST.match(words[0]), _AT_MOST.match(words[1])
            if low and high and low["subject"] == high["subject"]:
                text = f"{low['subject']} is between {low['value']} and {high['value']}."
            else:
                text = f"{words[0].rstrip('.')}; {words[1]}"
        out.append({"name": name, "words": text, "soft": any(f.sense == "soft" for f in parts)})
    return out
