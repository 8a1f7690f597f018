"""Whole-or-nothing file writing: every file the package, its benchmarks and notebooks write.

:func:`atomic_write` writes into a temporary file in the target's own folder, flushes and
fsyncs it, and renames it over the target (:func:`os.replace`, atomic on POSIX and
Windows) only when everything was written. On any failure (disk full, quota, a full
``RLIMIT_FSIZE``, an exception in the caller's code, Ctrl-C) the temporary file is
removed, the target is left as it was (an existing file keeps its bytes; no file appears
where there was none), and the error names the path:

* an :class:`OSError` is raised again as :class:`~maxent_privacy.errors.OutputError`, both
  a ``MaxEntError`` and an ``OSError`` (same ``errno``, ``filename`` is the target), whose
  message reads ``cannot write <path>: <reason>``;
* any other exception (a bug in the caller's code, ``KeyboardInterrupt``) propagates
  unchanged, with a note naming the path on Python >= 3.11.

The helpers cover the writers we use: :func:`write_text`, :func:`write_bytes`,
:func:`write_frame` (CSV, or Parquet by extension when pyarrow is installed) and
:func:`save_figure` (a matplotlib figure in the format of the extension).

The module is plumbing for the command line, the report, the benchmark scripts and
``notebooks/run_all.py``, not part of the privacy API; anyone who needs the same guarantee
may use it. (It was ``maxent_privacy._io`` before the package had wings; that name still
imports this module.)

Details. The temporary file is ``.<name>.<random>.tmp`` next to the target, created with
``O_EXCL`` and mode ``0o666`` less the umask, as a plain ``open(path, "w")`` would (not
``tempfile.mkstemp``, whose ``0o600`` would change the permissions of what we write); an
existing target's permission bits are copied onto it. A symbolic link as target is
followed: the file it points to is replaced, the link stays. After the rename the folder is
fsynced (best effort) so that the rename survives a crash. A process killed with SIGKILL
can leave a ``.*.tmp`` file behind, never a partial target. The price of the rename: the
folder must be writable (not only the file), the file gets a new inode (hard links to the
old one keep the old bytes) and its owner is whoever writes it.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
from collections.abc import Iterator
from pathlib import Path

from .errors import OutputError

__all__ = [
    "atomic_write",
    "check_target",
    "save_figure",
    "write_bytes",
    "write_frame",
    "write_text",
]

_MODES = {"w": "w", "wt": "w", "wb": "wb"}
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)


def _target(path) -> Path:
    path = Path(os.fspath(path))
    if path.is_symlink():
        path = Path(os.path.realpath(path))
    return path


def _describe(exc: OSError, path: Path) -> str:
    reason = exc.strerror or str(exc) or type(exc).__name__
    if exc.errno == errno.ENOENT and not path.parent.is_dir():
        reason = f"folder {str(path.parent)!r} does not exist"
    return f"cannot write {path}: {reason}"


def check_target(path) -> None:
    """Raise the :class:`OutputError` that writing ``path`` would surely meet (its folder is
    missing or not writable, or ``path`` is a folder), before any work is spent on it."""
    target = _target(path)
    folder = target.parent
    if target.is_dir():
        raise OutputError(
            f"cannot write {target}: it is a folder", filename=str(target), errno=errno.EISDIR
        )
    if not folder.is_dir():
        raise OutputError(
            f"cannot write {target}: folder {str(folder)!r} does not exist",
            filename=str(target),
            errno=errno.ENOENT,
        )
    if not os.access(folder, os.W_OK | os.X_OK):
        raise OutputError(
            f"cannot write {target}: folder {str(folder)!r} is not writable",
            filename=str(target),
            errno=errno.EACCES,
        )


def _output_error(exc: OSError, path: Path) -> OutputError:
    return OutputError(_describe(exc, path), filename=str(path), errno=exc.errno)


def _open_temp(target: Path) -> tuple[int, Path]:
    """Create the temporary file next to ``target``: (descriptor, path)."""
    stem = target.name[:200]
    for _ in range(100):
        tmp = target.with_name(f".{stem}.{secrets.token_hex(4)}.tmp")
        try:
            fd = os.open(tmp, _CREATE, 0o666)
        except FileExistsError:
            continue
        return fd, tmp
    raise FileExistsError(errno.EEXIST, "no free temporary file name", str(target.parent))


def _fsync_folder(folder: Path) -> None:
    if not hasattr(os, "O_DIRECTORY"):  # pragma: no cover - Windows
        return
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


@contextlib.contextmanager
def atomic_write(
    path, mode: str = "w", *, encoding: str | None = "utf-8", newline=None
) -> Iterator:
    """Open a temporary file for writing; on success it replaces ``path``, else vanishes.

    ``mode`` is ``"w"`` (text; ``encoding`` and ``newline`` as for :func:`open`) or
    ``"wb"`` (binary). The file object is only valid inside the ``with`` block; the
    caller need not (but may) close it. Raises :class:`OutputError` naming ``path`` when the
    file cannot be created, written or renamed into place (see the module docstring).
    """
    if mode not in _MODES:
        raise ValueError(f"atomic_write: mode must be 'w', 'wt' or 'wb', not {mode!r}")
    binary = _MODES[mode] == "wb"
    target = _target(path)
    if target.is_dir():
        check_target(target)
    try:
        fd, tmp = _open_temp(target)
    except OSError as exc:
        raise _output_error(exc, target) from exc
    try:
        try:
            mode_bits = os.stat(target).st_mode & 0o7777
        except OSError:
            mode_bits = None
        if mode_bits is not None and hasattr(os, "fchmod"):
            os.fchmod(fd, mode_bits)
        if binary:
            fh = os.fdopen(fd, "wb")
        else:
            fh = os.fdopen(fd, "w", encoding=encoding, newline=newline)
    except BaseException as exc:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise _output_error(exc, target) from exc
        raise
    try:
        yield fh
        if not fh.closed:
            fh.flush()
            os.fsync(fh.fileno())
        fh.close()
        os.replace(tmp, target)
    except BaseException as exc:
        with contextlib.suppress(Exception):
            fh.close()  # may fail again flushing its buffer; the descriptor is closed anyway
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError) and not isinstance(exc, OutputError):
            raise _output_error(exc, target) from exc
        if hasattr(exc, "add_note") and not isinstance(exc, OutputError):
            exc.add_note(f"(while writing {target}: nothing was written)")
        raise
    _fsync_folder(target.parent)


def write_text(path, text: str, *, encoding: str = "utf-8", newline=None) -> None:
    """``Path(path).write_text(text)``, whole or not at all."""
    with atomic_write(path, "w", encoding=encoding, newline=newline) as fh:
        fh.write(text)


def write_bytes(path, data: bytes) -> None:
    """``Path(path).write_bytes(data)``, whole or not at all."""
    with atomic_write(path, "wb") as fh:
        fh.write(data)


_FRAME_FORMATS = {".csv": "csv", ".parquet": "parquet", ".pq": "parquet"}


def write_frame(path, frame, *, format: str | None = None, **kwargs) -> None:
    """``frame.to_csv(path, **kwargs)`` or ``frame.to_parquet(path, **kwargs)``, whole or not
    at all; the format follows the extension (``.csv``; ``.parquet`` or ``.pq``) unless
    given. Parquet needs pyarrow: without it, :class:`OutputError` says so before any file
    is touched. CSV is written as ``to_csv(path)`` writes it (UTF-8, ``os.linesep``)."""
    target = _target(path)
    fmt = format or _FRAME_FORMATS.get(target.suffix.lower())
    if fmt not in ("csv", "parquet"):
        raise OutputError(
            f"cannot write {target}: give a .csv, .parquet or .pq file name (or format=)",
            filename=str(target),
        )
    if fmt == "parquet":
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise OutputError(
                f"cannot write {target}: Parquet needs pyarrow (pip install pyarrow); "
                "or write a .csv file",
                filename=str(target),
            ) from None
        with atomic_write(target, "wb") as fh:
            frame.to_parquet(fh, **kwargs)
        return
    encoding = kwargs.pop("encoding", "utf-8")
    with atomic_write(target, "w", encoding=encoding, newline="") as fh:
        frame.to_csv(fh, **kwargs)


def save_figure(path, fig, *, format: str | None = None, **kwargs) -> None:
    """``fig.savefig(path, **kwargs)``, whole or not at all.

    The format is ``format``, else the extension (``.png``, ``.pdf``, ``.svg``, ...), else
    matplotlib's ``savefig.format``; unlike ``savefig`` on a bare name, no extension is
    appended to ``path``.
    """
    target = _target(path)
    if format is None:
        format = target.suffix[1:].lower() or None
    if format is None:
        import matplotlib

        format = matplotlib.rcParams["savefig.format"]
    with atomic_write(target, "wb") as fh:
        fig.savefig(fh, format=format, **kwargs)
