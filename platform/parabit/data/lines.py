"""Line-level file access shared by every reader: gzip, BOM, CRLF and undecodable bytes handled once."""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Iterator
from pathlib import Path

from parabit.data.errors import DataFormatError, Quarantine, reject


def _open_binary(path: Path):
    return gzip.open(path, "rb") if path.suffix == ".gz" else open(path, "rb")


def iter_lines(
    path: str | Path,
    *,
    quarantine: Quarantine | None = None,
) -> Iterator[tuple[int, str]]:
    """Yield ``(line_number, text)`` for each line of a UTF-8 text file (``.gz`` read transparently).

    Line numbers are 1-based. A UTF-8 byte-order mark and the line terminator (``\\n`` or ``\\r\\n``) are
    removed. A line that is not valid UTF-8, or holds a NUL byte (binary data: no text format here has one), raises
    :class:`DataFormatError` naming the file and line, or, with a ``quarantine``, is kept aside and skipped.
    A file that is missing, empty, or a truncated/corrupt gzip raises :class:`DataFormatError` in any case (for a
    truncated gzip, after the lines before the damage): these are problems of the whole file, not of a line.
    """
    path = Path(path)
    if not path.is_file():
        raise DataFormatError(path, None, "file does not exist")
    number = 0
    try:
        with _open_binary(path) as handle:
            for number, raw in enumerate(handle, start=1):
                if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
                    raw = raw[3:]
                raw = raw.rstrip(b"\n").rstrip(b"\r")
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError as err:
                    reject(quarantine, path, number,
                           f"undecodable bytes (not UTF-8: {err.reason} at byte {err.start})",
                           raw.decode("utf-8", errors="replace"))
                    continue
                if "\0" in text:
                    reject(quarantine, path, number, "NUL byte (binary data, not text)", text.replace("\0", "\\0"))
                    continue
                yield number, text
    except (EOFError, gzip.BadGzipFile, zlib.error) as err:
        raise DataFormatError(path, number + 1, f"gzip data is truncated or corrupt ({err}); the file is incomplete: "
                              "download or compress it again") from None
    if number == 0:
        raise DataFormatError(path, None, "file is empty")


def count_lines(path: str | Path) -> int:
    """How many lines a text file has, undecodable ones included (read through :func:`iter_lines`, so a missing,
    empty or truncated file raises the same :class:`DataFormatError`)."""
    dropped = Quarantine()
    return sum(1 for _ in iter_lines(path, quarantine=dropped)) + len(dropped)


def split_fields(path: Path, number: int, text: str, expected: int | tuple[int, ...], sep: str = "\t") -> list[str]:
    """Split a line into fields and check the count; the error names file, line and both counts."""
    fields = text.split(sep)
    allowed = (expected,) if isinstance(expected, int) else expected
    if len(fields) not in allowed:
        want = " or ".join(str(n) for n in allowed)
        separator = "tab" if sep == "\t" else repr(sep)
        raise DataFormatError(path, number, f"expected {want} {separator}-separated fields, found {len(fields)}")
    return fields


def iter_table(path: str | Path, header: tuple[str, ...]) -> Iterator[tuple[int, list[str]]]:
    """``(line_number, fields)`` for each row of a tab-separated file whose first line must be ``header``.

    The header is checked and skipped; every row must have as many fields as the header.
    """
    path = Path(path)
    for number, text in iter_lines(path):
        fields = split_fields(path, number, text, expected=len(header))
        if number == 1:
            if tuple(fields) != header:
                raise DataFormatError(path, 1, f"expected header {header}, found {tuple(fields)}")
            continue
        yield number, fields
