"""A chain of stages, each with ``apply`` and ``invert`` (as cvxpy's reductions).

``apply`` returns the smaller problem and what is needed to map a solution back;
``Chain.invert`` calls the stages' ``invert`` in reverse order.

>>> class Double:
...     def apply(self, p): return 2 * p, None
...     def invert(self, s, _): return s / 2
>>> chain = Chain([Double(), Double()])
>>> chain.apply(3)
(12, [None, None])
>>> chain.invert(12, [None, None])
3.0
"""

from __future__ import annotations

from typing import Protocol

__all__ = ["Chain", "Stage"]


class Stage(Protocol):
    """A step of the solve path."""

    def apply(self, problem): ...

    def invert(self, solution, inverse): ...


class Chain:
    """Stages applied in order and inverted in reverse."""

    def __init__(self, stages: list[Stage]):
        self.stages = list(stages)

    def apply(self, problem):
        inverse = []
        for stage in self.stages:
            problem, inv = stage.apply(problem)
            inverse.append(inv)
        return problem, inverse

    def invert(self, solution, inverse):
        for stage, inv in reversed(list(zip(self.stages, inverse, strict=True))):
            solution = stage.invert(solution, inv)
        return solution
