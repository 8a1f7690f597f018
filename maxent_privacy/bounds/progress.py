"""The progress bar of a long :func:`~maxent_privacy.bounds.intervals.bounds` call.

A bounds call on a large component can spend its whole time limit in a few LPs of many
seconds each; the bar (tqdm, on standard error) counts the components (batches of them)
whose bounds are found, and says how many LPs and integer programs ran and how much of
the time limit is used. It is redrawn whenever the call checks its time (before every
program), at most every half second.

>>> from maxent_privacy.bounds.lp import Budget, Stats
>>> bar = BoundsProgress(False, 3, Stats(), Budget(60.0))
>>> bar.done()
>>> bar.close()
"""

from __future__ import annotations

import time

from .._validation import progress_bar
from .lp import Budget, Stats

__all__ = ["PROGRESS_LP_CELLS", "BoundsProgress", "show_progress"]

#: the bar is shown by default when the components that need LPs hold this many cells
#: (one LP on 20,000 cells of overlapping placements takes seconds)
PROGRESS_LP_CELLS = 20_000


def show_progress(progress, lp_cells: int):
    """What the bar reads: ``progress`` when given (True/False, or a function of one line
    of text), else whether the LP work is large."""
    return progress if progress is not None else lp_cells >= PROGRESS_LP_CELLS


class BoundsProgress:
    """A bar over ``steps`` (components or batches of them, once for the LPs and once more
    for the integer programs with ``exact``); ``stats`` and ``budget`` feed its postfix.
    It hooks itself into ``budget`` (:meth:`Budget.left` redraws it) until closed."""

    def __init__(self, show, steps: int, stats: Stats, budget: Budget):
        self.stats, self.budget = stats, budget
        self.start = time.perf_counter()
        self.limit = budget.end - self.start
        self.bar = None
        self.last = 0.0
        if show is not False and show is not None and steps:  # True or a function
            self.bar = progress_bar(show, total=steps, desc="bounds", unit="component")
            budget.on_check = self.redraw

    def redraw(self) -> None:
        """Refresh the postfix (programs run, seconds used), at most every 0.5 s."""
        now = time.perf_counter()
        if self.bar is None or now - self.last < 0.5:
            return
        self.last = now
        self.bar.set_postfix_str(
            f"LPs {self.stats.lps:,}, integer programs {self.stats.milps:,}, "
            f"{now - self.start:.0f} of {self.limit:.0f} s"
        )

    def done(self) -> None:
        """One step finished."""
        if self.bar is not None:
            self.bar.update(1)
            self.redraw()

    def close(self) -> None:
        if self.bar is not None:
            self.last = 0.0
            self.redraw()
            self.bar.close()
            self.budget.on_check = None
