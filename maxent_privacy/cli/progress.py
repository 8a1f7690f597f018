"""A progress bar for long commands, on standard error (tqdm, a declared dependency).

The report's steps (read, solve, likeliest values, bounds, the page) are few and
uneven, so the bar counts steps and shows the step running and the time spent; a thread
refreshes it every half second so that a long step still shows the clock moving. It is
shown when standard error is a terminal, or always with ``--progress`` (never with
``--no-progress``); it never goes to standard output.

>>> import io
>>> err = io.StringIO()
>>> with Progress(["read", "solve"], err, show=True) as bar:
...     bar("read")
...     bar("solve")
>>> "solve" in err.getvalue()
True
"""

from __future__ import annotations

import sys
import threading

__all__ = ["Progress", "REPORT_STEPS"]

#: the steps of ``maxent-privacy report``, in order
REPORT_STEPS = (
    "read",
    "solve",
    "likeliest values",
    "certified bounds",
    "the page and the files",
)


class Progress:
    """``with Progress(steps, err, show) as step: step("solve")``: one bar of ``steps``;
    ``show`` None: only when ``err`` is a terminal. Unknown step names are shown too
    (they do not advance the count)."""

    def __init__(self, steps, err=None, show: bool | None = None, desc: str = "report"):
        self.steps = list(steps)
        self.desc = desc
        self.err = sys.stderr if err is None else err
        if show is None:
            isatty = getattr(self.err, "isatty", None)
            show = bool(isatty and isatty())
        self.show = show
        self.bar = None
        self._stop = threading.Event()
        self._thread = None
        self._done = set()

    def __enter__(self):
        if self.show:
            from tqdm import tqdm

            self.bar = tqdm(
                total=len(self.steps),
                file=self.err,
                desc=self.desc,
                unit="step",
                bar_format="{desc}: {n_fmt}/{total_fmt} steps |{bar}| {elapsed} {postfix}",
                leave=True,
                dynamic_ncols=True,
            )
            self._thread = threading.Thread(target=self._tick, daemon=True)
            self._thread.start()
        return self

    def _tick(self) -> None:
        while not self._stop.wait(0.5):
            bar = self.bar
            if bar is not None:
                bar.refresh()

    def __call__(self, name: str) -> None:
        if self.bar is None:
            return
        if name in self.steps:
            # every step before this one is done
            k = self.steps.index(name)
            self._done.update(self.steps[:k])
            self.bar.n = len(self._done)
        self.bar.set_postfix_str(name, refresh=True)

    def __exit__(self, kind, value, tb):
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
        if self.bar is not None:
            if kind is None:
                self.bar.n = len(self.steps)
                self.bar.set_postfix_str("done", refresh=True)
            self.bar.close()
        return False
