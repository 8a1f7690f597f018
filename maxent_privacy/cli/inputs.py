"""Reading the command's input files: a release or population CSV, checked before pandas.

Each unreadable file is an :class:`InputError` whose one-line message starts with the path
(exit code 2); a bad argument that argparse cannot check is a :class:`UsageError`.

>>> import tempfile
>>> read_release_csv(tempfile.gettempdir())
Traceback (most recent call last):
...
maxent_privacy.cli.inputs.InputError: ...: is a folder, not a CSV file
"""

from __future__ import annotations

import csv
import io
import lzma
import os
import re
import stat
import warnings
import zipfile
import zlib
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import MaxEntError
from .terminal import escape_controls

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["InputError", "MAX_MESSAGE", "MISSING", "UsageError", "one_line", "read_release_csv"]


class UsageError(MaxEntError, ValueError):
    """A command-line argument that argparse cannot check (file extension, ...)."""


class InputError(MaxEntError, ValueError):
    """An input file that cannot be read as what it should be; the message names it."""


MAX_MESSAGE = 2000  # characters of an error message shown (a hostile file can be long)


def one_line(exc: BaseException, limit: int = MAX_MESSAGE) -> str:
    """The message of ``exc`` on one line (control characters escaped), cut after ``limit``
    characters."""
    text = escape_controls(" ".join(str(exc).split())) or type(exc).__name__
    if len(text) > limit:
        text = f"{text[:limit]}... ({len(text) - limit:,} more characters)"
    return text


# ----------------------------------------------------------------------- reading the release
_COMPRESSED = (".gz", ".bz2", ".xz", ".zip", ".zst", ".tar", ".tgz")
_MAGIC = (  # (leading bytes, what the file is instead of CSV text)
    (b"\x1f\x8b", "a gzip-compressed file; name it .csv.gz or decompress it"),
    (b"\xfd7zXZ\x00", "an xz-compressed file; name it .csv.xz or decompress it"),
    (b"\x28\xb5\x2f\xfd", "a zstd-compressed file; name it .csv.zst or decompress it"),
    (b"PK\x03\x04", "a ZIP archive (an .xlsx or .ods spreadsheet is one); export it as CSV"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "an Excel .xls file; export it as CSV"),
    (b"\x00\x00\xfe\xff", "UTF-32 text; save it as UTF-8"),
    (b"\xff\xfe\x00\x00", "UTF-32 text; save it as UTF-8"),
    (b"\xff\xfe", "UTF-16 text; save it as UTF-8"),
    (b"\xfe\xff", "UTF-16 text; save it as UTF-8"),
)


def _sniff(head: bytes) -> str | None:
    """What a file that is not CSV text is, from its first bytes (None: maybe CSV)."""
    for magic, what in _MAGIC:
        if head.startswith(magic):
            return f"not CSV text but {what}"
    if head[:3] == b"BZh" and head[3:4].isdigit() and head[4:10] == b"1AY&SY":
        return "not CSV text but a bzip2-compressed file; name it .csv.bz2 or decompress it"
    if b"\x00" in head:
        return "not CSV text but a binary file (it holds NUL bytes)"
    start = head.lstrip(b"\xef\xbb\xbf \t\r\n")[:14].lower()
    if start.startswith((b"<!doctype html", b"<html", b"<?xml")):
        return "not CSV text but an HTML or XML document"
    return None


def _utf8_error(path: Path) -> str | None:
    """``path:line: ... byte 0x.. at offset M ...`` for the first byte that is not UTF-8."""
    line, base, carry = 1, 0, b""
    with open(path, "rb") as fh:
        while True:
            chunk = fh.read(1 << 20)
            data = carry + chunk
            try:
                data.decode("utf-8")
            except UnicodeDecodeError as exc:
                if chunk and exc.end == len(data) and exc.reason == "unexpected end of data":
                    carry = data[exc.start :]  # a character split across two chunks
                    line += data.count(b"\n", 0, exc.start)
                    base += exc.start
                    continue
                line += data.count(b"\n", 0, exc.start)
                return (
                    f"{path}:{line}: not UTF-8 text (byte 0x{data[exc.start]:02x} at offset "
                    f"{base + exc.start}: {exc.reason}); save the file as UTF-8"
                )
            if not chunk:
                return None
            line += data.count(b"\n")
            base += len(data)
            carry = b""


def _long_row(path: Path) -> str:
    """Which line has more fields than the header (pandas does not say)."""
    try:
        with open(path, encoding="utf-8-sig", newline="") as fh:
            reader = csv.reader(fh)
            header = next(reader, [])
            for row in reader:
                if len(row) > len(header):
                    return f"line {reader.line_num} has {len(row)} fields, the header {len(header)}"
    except (OSError, UnicodeError, csv.Error):
        pass
    return "some lines have more fields than the header"


# what pandas and the decompressors raise on a bad file (ImportError: .zst without zstandard)
_READ_ERRORS = (
    OSError,
    EOFError,
    ImportError,
    ValueError,
    lzma.LZMAError,
    zipfile.BadZipFile,
    zlib.error,
)
_SEPARATORS = ((";", "semicolon"), ("\t", "tab"), ("|", "bar"))

#: the cells read as missing: the empty cell only. ``NA`` (Namibia), ``None``, ``null``,
#: ``NaN``, ``n/a``, ... are values like any other (pandas' default list is not used);
#: ``--na VALUE ...`` (``read_release_csv(..., na=[...])``) adds markers.
MISSING = ("",)


def _header(head: bytes) -> list[str] | None:
    """The header line's fields as written (None when it cannot be read here)."""
    try:
        text = head.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        text = head[: exc.start].decode("utf-8-sig", errors="ignore")
    try:
        return next(csv.reader(io.StringIO(text)), None)
    except csv.Error:
        return None


def _repeated(path, frame, header: list[str] | None) -> None:
    """A column name the header repeats is an error naming it (pandas would rename the
    second ``disease.1``, a name not in the file)."""
    if header is not None and len(header) == frame.shape[1]:
        seen: dict[str, int] = {}
        for k, name in enumerate(header, start=1):
            if name in seen:
                raise InputError(
                    f"{path}: the header names column {name[:60]!r} twice (fields {seen[name]} "
                    f"and {k}); give every column its own name"
                )
            seen[name] = k
        return
    names = set(map(str, frame.columns))  # a compressed file: pandas' renamed copies
    for col in map(str, frame.columns):
        base, dot, number = col.rpartition(".")
        if dot and number.isdigit() and base in names:
            raise InputError(
                f"{path}: the header names column {base[:60]!r} more than once; give every "
                "column its own name"
            )


def read_release_csv(path, kind: str = "release", na=()) -> pd.DataFrame:
    """Read a release's CSV file as text; an unreadable file is an error naming it.

    Missing, a folder, not readable, empty or blank, compressed or binary without the
    extension to say so, not UTF-8, rows with more fields than the header, a single column
    (not comma-separated), a column name repeated in the header: each an ``InputError``
    (exit code 2) whose message starts with the path. Values are read as text
    (``dtype=str``), as before; the empty cell is the only missing marker (``MISSING``:
    ``NA``, ``None``, ``null`` are values), ``na`` lists more. ``kind`` is
    ``"release"`` or ``"population"`` (for the messages).
    """
    import pandas as pd

    what, row = ("a population", "person") if kind == "population" else ("a release", "record")
    path = Path(path)
    try:
        st = os.stat(path)
        if stat.S_ISDIR(st.st_mode):
            raise InputError(f"{path}: is a folder, not a CSV file")
        with open(path, "rb") as fh:
            if stat.S_ISREG(st.st_mode):
                head, source = fh.read(1 << 16), path
                whole = st.st_size <= len(head)
            else:  # a pipe (say <(zcat release.csv.gz)): read it once, whole
                head, source, whole = fh.read(), None, True
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror or one_line(exc)}") from exc
    compressed = path.suffix.lower() in _COMPRESSED and source is not None
    plain = source is not None and not compressed  # a regular file we may read again
    if whole and not compressed and not head.strip(b" \t\r\n"):
        raise InputError(
            f"{path}: the file is empty; {what} is a CSV file with a header line and one "
            f"row per {row}"
        )
    if not compressed:
        instead = _sniff(head)
        if instead is not None:
            raise InputError(f"{path}: {instead}")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", pd.errors.ParserWarning)
            frame = pd.read_csv(
                source if source is not None else io.BytesIO(head),
                dtype=str,
                index_col=False,
                keep_default_na=False,
                na_values=[*MISSING, *(str(v) for v in na or ())],
            )
    except UnicodeDecodeError as exc:
        message = _utf8_error(path) if plain else None
        raise InputError(
            message
            or f"{path}: not UTF-8 text (byte 0x{exc.object[exc.start]:02x}: {exc.reason}); "
            "save the file as UTF-8"
        ) from exc
    except pd.errors.EmptyDataError as exc:
        raise InputError(
            f"{path}: no header line (the file is blank); {what} is a CSV file with a "
            f"header line and one row per {row}"
        ) from exc
    except pd.errors.ParserWarning as exc:
        where = _long_row(path) if plain else "some lines have more fields than the header"
        raise InputError(f"{path}: {where}; every line needs as many fields as the header") from exc
    except pd.errors.ParserError as exc:
        reason = one_line(exc).replace("Error tokenizing data. C error: ", "")
        fields = re.fullmatch(r"Expected (\d+) fields in line (\d+), saw (\d+)", reason)
        if fields:
            want, line, saw = fields.groups()
            raise InputError(
                f"{path}: line {line} has {saw} fields, the lines above {want}; every line "
                "needs as many fields as the header"
            ) from exc
        raise InputError(f"{path}: not a valid CSV file ({reason})") from exc
    except _READ_ERRORS as exc:
        raise InputError(f"{path}: cannot read: {one_line(exc)}") from exc
    except Exception as exc:  # a decompressor's own error class (zstandard.ZstdError, ...)
        if not compressed:
            raise
        raise InputError(f"{path}: cannot read: {one_line(exc)}") from exc
    if frame.shape[1] == 1:
        name = str(frame.columns[0])
        seps = [word for sep, word in _SEPARATORS if sep in name]
        hint = f"; the file looks {seps[0]}-separated" if seps else ""
        if name.lstrip().startswith(("{", "[")):
            hint = "; the file looks like JSON"
        raise InputError(
            f"{path}: one column only ({name[:60]!r}){hint}; {what} is comma-separated"
        )
    _repeated(path, frame, None if compressed else _header(head))
    return frame


def counterfeit_flags(frame, column: str, path):
    """A counterfeit column read as text, as booleans, read as every flag is (True/False,
    yes/no or 1/0, any case; see :func:`maxent_privacy.releases.bucketized.read_flags`);
    an error names the file, the line and the cell."""
    from ..releases.bucketized import read_flags

    flags, row = read_flags(frame[column].fillna(""))
    if row is not None:
        raise InputError(
            f"{path}: column {column!r} holds {frame[column].iloc[row]!r} on line {row + 2}; "
            "a counterfeit flag is True/False, yes/no or 1/0"
        )
    return flags
