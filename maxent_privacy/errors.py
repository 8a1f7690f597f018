"""Exceptions raised by maxent_privacy.

Every error names the column, value, fact or solver at fault in one line, so that a
user can fix the input without reading a traceback.
"""

from __future__ import annotations


class MaxEntError(Exception):
    """Base class of every error raised by this package."""


class ReleaseError(MaxEntError, ValueError):
    """A published table is malformed (missing column, empty value, bad group)."""


class KnowledgeError(MaxEntError, ValueError):
    """A fact refers to an unknown attribute or value, is out of range or is not DCP."""


class SolverNotInstalled(MaxEntError, ValueError):
    """The requested solver is unknown or not installed."""


class SolverFailed(MaxEntError, RuntimeError):
    """The solver did not return an optimal answer (status other than optimal)."""


class InaccurateSolution(MaxEntError, RuntimeError):
    """The solver's answer failed our own certificate check (residual or gap too large)."""


class InfeasibleKnowledge(MaxEntError, RuntimeError):
    """The facts contradict the data or each other.

    ``conflicts`` is a DataFrame naming the facts involved (may be empty when the solver
    gave no certificate to work from).
    """

    def __init__(self, message: str, conflicts=None):
        super().__init__(message)
        self.conflicts = conflicts


class InconsistentTables(ReleaseError):
    """No table of records satisfies every published table (and hard fact) at once.

    ``conflicts`` is a DataFrame naming the published rows involved (``table``, ``row``,
    ``cell``, ``published``) and ``change``, how many records each must move in the
    smallest change that makes them consistent.
    """

    def __init__(self, message: str, conflicts=None):
        super().__init__(message)
        self.conflicts = conflicts


class UnsupportedModel(MaxEntError, ValueError):
    """The chosen solver cannot take a fact of the model (say a soft penalty for 'maxent')."""


class SolverOptionError(MaxEntError, ValueError):
    """An option of a solve is unknown to the solver, ill-typed or out of range."""


class StaleResult(MaxEntError, RuntimeError):
    """A :class:`~maxent_privacy.results.Result` used after its model changed.

    ``model.add``, ``model.remove``, ``model.person`` (or any change to ``model.facts``)
    after ``model.solve()`` make the result's estimate belong to another model: the
    methods that read the model again (bounds, risk table, report, ...) refuse to mix
    them; solve the model again.
    """


class OutputError(MaxEntError, OSError):
    """An output file could not be written (disk full, no such folder, no permission).

    Nothing was left behind and an existing file is unchanged. Also an ``OSError``:
    ``filename`` is the path, ``errno`` the cause's (None when no system call failed).
    """

    def __init__(self, message: str, filename: str | None = None, errno: int | None = None):
        super().__init__(message)
        self.filename, self.errno, self.strerror = filename, errno, message

    def __str__(self) -> str:
        return self.args[0]

    def __reduce__(self):
        return type(self), (self.args[0], self.filename, self.errno)


class SameFileError(MaxEntError, ValueError):
    """An output path names an input file (a release, population or knowledge file) or
    another output of the same call, directly or through a link: nothing was written."""
