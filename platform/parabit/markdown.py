"""Markdown tables, as every document parabit writes draws them (the reproduction document, the quality table, the
benchmark results)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

BLANK = object()  # a cell with nothing in it, written "| |" (see table)


def table(header: Sequence[object], rows: Iterable[Sequence[object]]) -> str:
    """A Markdown table: the ``header`` line, its rule (``|---|`` a column, Markdown's default alignment) and a line a
    row, joined by newlines, with no newline after the last.

    A cell is written as an f-string writes it, between ``| `` and `` |``, as it is: no escaping, so a ``|`` in a
    cell splits it (the cells are the callers' own text). :data:`BLANK` is a blank cell, written ``| |``; ``""`` an
    empty text, written ``|  |``. Both show the same; the two spellings keep the documents already written the same
    to the byte. A row with more or fewer cells than ``header`` is written as it is."""
    lines = [_line(header), "|" + "---|" * len(header)]
    lines += [_line(row) for row in rows]
    return "\n".join(lines)


def _line(cells: Sequence[object]) -> str:
    return "|" + "|".join(" " if cell is BLANK else f" {cell} " for cell in cells) + "|"
