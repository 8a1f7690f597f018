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

Several files as one unit: :func:`write_together` writes every file to its temporary file
first and renames them into place only when all are written; if anything fails or is
interrupted (Ctrl-C) on the way, even between two renames, every old file is put back
byte for byte and no temporary file is left. Inputs are never outputs:
:func:`check_outputs` refuses (:class:`~maxent_privacy.errors.SameFileError`) an output
path that is an input file or another output, compared by :func:`same_file` (the real
path, and :func:`os.path.samefile` where both exist: symbolic and hard links).

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

from ._validation import check_choice
from .errors import OutputError, SameFileError

__all__ = [
    "atomic_write",
    "check_outputs",
    "check_target",
    "frame_bytes",
    "same_file",
    "save_figure",
    "write_bytes",
    "write_frame",
    "write_text",
    "write_together",
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


def _keep_mode(fd: int, target: Path) -> None:
    """Give the new file ``fd`` the permission bits of the file it replaces (if any)."""
    try:
        mode_bits = os.stat(target).st_mode & 0o7777
    except OSError:
        return
    if hasattr(os, "fchmod"):
        os.fchmod(fd, mode_bits)


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
    mode = check_choice(mode, "atomic_write: mode", tuple(_MODES))
    binary = _MODES[mode] == "wb"
    target = _target(path)
    if target.is_dir():
        check_target(target)
    try:
        fd, tmp = _open_temp(target)
    except OSError as exc:
        raise _output_error(exc, target) from exc
    try:
        _keep_mode(fd, target)
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
        with atomic_write(target, "wb") as fh:
            _parquet(target, frame, fh, kwargs)
        return
    encoding = kwargs.pop("encoding", "utf-8")
    with atomic_write(target, "w", encoding=encoding, newline="") as fh:
        frame.to_csv(fh, **kwargs)


def _parquet(target: Path, frame, fh, kwargs: dict) -> None:
    """``frame.to_parquet(fh)``; without pyarrow an OutputError naming ``target``."""
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        raise OutputError(
            f"cannot write {target}: Parquet needs pyarrow (pip install pyarrow); "
            "or write a .csv file",
            filename=str(target),
        ) from None
    frame.to_parquet(fh, **kwargs)


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


def frame_bytes(path, frame, *, format: str | None = None, **kwargs) -> bytes:
    """The bytes :func:`write_frame` would write to ``path`` (CSV or Parquet, by the
    extension unless ``format`` is given), to hand to :func:`write_together`."""
    import io

    target = _target(path)
    fmt = format or _FRAME_FORMATS.get(target.suffix.lower())
    if fmt == "parquet":
        with io.BytesIO() as buffer:
            _parquet(target, frame, buffer, kwargs)
            return buffer.getvalue()
    if fmt != "csv":
        raise OutputError(
            f"cannot write {target}: give a .csv, .parquet or .pq file name (or format=)",
            filename=str(target),
        )
    encoding = kwargs.pop("encoding", "utf-8")
    kwargs.setdefault("lineterminator", os.linesep)
    return frame.to_csv(None, **kwargs).encode(encoding)


# ------------------------------------------------------------------ inputs are not outputs
def same_file(a, b) -> bool:
    """Whether paths ``a`` and ``b`` name one file: the same real path (links resolved,
    case folded where the system folds it), or :func:`os.path.samefile` when both exist
    (hard links, a case-insensitive disk)."""
    try:
        if os.path.samefile(a, b):
            return True
    except (OSError, ValueError):
        pass
    real = [os.path.normcase(os.path.realpath(os.fspath(p))) for p in (a, b)]
    return real[0] == real[1]


def _labelled(paths, default: str) -> list[tuple[str, str]]:
    """``[(label, path)]`` from ``{label: path}``, a path or paths; None entries dropped
    (a mapping's value may itself be a list of paths)."""
    if paths is None:
        return []
    if isinstance(paths, (str, bytes, os.PathLike)):
        paths = [paths]
    items = paths.items() if hasattr(paths, "items") else ((default, p) for p in paths)
    out = []
    for label, value in items:
        values = [value] if isinstance(value, (str, bytes, os.PathLike)) else value or []
        out += [(str(label), os.fsdecode(v)) for v in values if v is not None]
    return out


def check_outputs(outputs, inputs=()) -> None:
    """Refuse, before anything is written, an output that is an input or another output.

    ``outputs`` and ``inputs`` are ``{label: path}`` (a label like ``"--risk-out"`` or
    ``"the release"``; a value may be a list of paths, or None) or plain paths. Raises
    :class:`~maxent_privacy.errors.SameFileError`, one line naming both paths, when two
    name the same file (:func:`same_file`: through a symbolic or hard link too).
    """
    outs = _labelled(outputs, "the output")
    ins = _labelled(inputs, "the input")
    for k, (label, path) in enumerate(outs):
        for in_label, in_path in ins:
            if same_file(path, in_path):
                raise SameFileError(
                    f"{label} {path} is {in_label} {in_path}{_via(path, in_path)}: an output "
                    "never overwrites an input; give another file name"
                )
        for other_label, other in outs[k + 1 :]:
            if same_file(path, other):
                raise SameFileError(
                    f"{label} {path} and {other_label} {other} are one file"
                    f"{_via(path, other)}: give each output its own file name"
                )


def _via(a: str, b: str) -> str:
    """How two differently spelled paths are one file: `` (a resolves to ...)``, or ``
    (a hard link)``; nothing when they are spelled alike."""
    if os.path.abspath(a) == os.path.abspath(b):
        return ""
    for path in (a, b):
        real = os.path.realpath(path)
        if real != os.path.abspath(path):
            return f" ({path} resolves to {real})"
    return " (hard links to one file)"


# ------------------------------------------------------------------ several files, one unit
def _write_temp(target: Path, data) -> Path:
    """Write ``data`` (bytes, str as UTF-8, or a callable given the binary file) into a new
    temporary file next to ``target``, flushed and fsynced; its path."""
    fd, tmp = _open_temp(target)
    try:
        _keep_mode(fd, target)
        with os.fdopen(fd, "wb") as fh:
            fd = -1
            if callable(data):
                data(fh)
            else:
                fh.write(data.encode("utf-8") if isinstance(data, str) else data)
            fh.flush()
            os.fsync(fh.fileno())
    except BaseException:
        if fd >= 0:
            os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return tmp


def _backup(target: Path) -> Path | None:
    """A second name for the old file at ``target`` (a hard link; a copy where links are
    not allowed), so that it can be put back; None when there is no old file."""
    if not target.exists():
        return None
    for _ in range(100):
        backup = target.with_name(f".{target.name[:200]}.{secrets.token_hex(4)}.tmp")
        try:
            os.link(target, backup)
            return backup
        except FileExistsError:
            continue
        except OSError:
            import shutil

            os.close(os.open(backup, _CREATE, 0o600))
            try:
                shutil.copy2(target, backup)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(backup)
                raise
            return backup
    raise FileExistsError(errno.EEXIST, "no free temporary file name", str(target.parent))


@contextlib.contextmanager
def _sigint_deferred(flag: list) -> Iterator[None]:
    """Ctrl-C during the block is noted in ``flag`` instead of raised (main thread, default
    handler only; elsewhere the block runs as is)."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    try:
        previous = signal.getsignal(signal.SIGINT)
    except (ValueError, OSError):  # pragma: no cover - no signals here
        previous = None
    if previous is not signal.default_int_handler:
        yield
        return
    signal.signal(signal.SIGINT, lambda *_: flag.append(True))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def write_together(files) -> None:
    """Write several files as one unit: all of them, or none.

    ``files`` is ``{path: data}``, data being ``bytes``, ``str`` (written as UTF-8) or a
    callable that writes into the binary file object it is given. Every file is written to
    a temporary file in its target's folder (flushed, fsynced, an existing target's
    permission bits copied); only when all are written are they renamed into place. If
    anything fails before the last rename (a disk full, an error in a callable, Ctrl-C,
    even between two renames) every target is as it was, byte for byte (a file that did
    not exist does not appear) and no temporary file is left; the error is raised, an
    :class:`OSError` as :class:`OutputError` naming its path. A Ctrl-C during the renames
    is held until they end, then undoes them and raises :class:`KeyboardInterrupt`.
    Two paths that are the same file are refused (:class:`SameFileError`).
    """
    items = [(_target(path), data) for path, data in files.items()]
    check_outputs([t for t, _ in items])
    for target, _ in items:
        if target.is_dir():
            check_target(target)
    temps: dict[Path, Path] = {}
    backups: dict[Path, Path | None] = {}
    done: list[Path] = []
    current = None
    try:
        for target, data in items:
            current = target
            temps[target] = _write_temp(target, data)
        interrupted: list = []
        with _sigint_deferred(interrupted):
            for target, _ in items:
                current = target
                backups[target] = _backup(target)
            for target, _ in items:
                current = target
                done.append(target)  # before: a rename interrupted on its way is undone too
                os.replace(temps[target], target)
                del temps[target]
            if interrupted:
                raise KeyboardInterrupt
            for folder in {t.parent for t in done}:
                _fsync_folder(folder)
    except BaseException as exc:
        with _sigint_deferred([]):  # a second Ctrl-C cannot stop the undoing
            _undo(done, backups)
            for tmp in [*temps.values(), *(b for b in backups.values() if b is not None)]:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
        if isinstance(exc, OSError) and not isinstance(exc, OutputError):
            raise _output_error(exc, current) from exc
        if hasattr(exc, "add_note") and not isinstance(exc, OutputError) and current:
            exc.add_note(f"(while writing {current}: no file was changed)")
        raise
    for backup in backups.values():
        if backup is not None:
            with contextlib.suppress(OSError):
                os.unlink(backup)


def _undo(done: list[Path], backups: dict) -> None:
    """Put back the old file of every target already renamed over (or remove the new
    file where there was none)."""
    for target in reversed(done):
        backup = backups.get(target)
        with contextlib.suppress(OSError):
            if backup is None:
                os.unlink(target)
            else:  # (a no-op if the rename never happened: both are links to the old file)
                os.replace(backup, target)
