"""Ingest: bitext files → one table of normalised, de-duplicated pairs with stable row ids.

Reading goes through the project's real readers (``parabit.data.bitext``) with a :class:`Quarantine`, so every bad
line becomes a reject row with the reader's reason. Output columns (:data:`PAIR_SCHEMA`): ``row_id``, ``source``
(the input's file name), ``line`` (1-based line, or row for parquet), ``lang`` (foreign language), ``en``,
``foreign``.

``row_id`` is the first 8 bytes of BLAKE2b over ``"<file name>:<line>"`` as a signed 64-bit integer: the same pair
gets the same id in every run and on every machine, which is what lets a re-run prove it wrote each row once.
"""

from __future__ import annotations

import hashlib
import unicodedata
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from parabit.data.bitext import LANGUAGE_NAMES, TATOEBA_FILES, BitextPair, read_line_aligned, read_tatoeba
from parabit.data.errors import DataFormatError, Quarantine
from parabit.paths import data_path
from parabit.pipeline.config import SourceConfig
from parabit.pipeline.stage import DATA, REJECTS, write_rejects

PAIR_SCHEMA = pa.schema([
    ("row_id", pa.int64()), ("source", pa.string()), ("line", pa.int64()), ("lang", pa.string()),
    ("en", pa.string()), ("foreign", pa.string()),
])
ROWS_PER_FILE = 10_000  # several files, so Ray Data reads (and translates) them in parallel blocks
DUPLICATE = "duplicate"


def row_ids(file_name: str, lines: Sequence[int]) -> np.ndarray:
    """Stable 64-bit ids of lines of ``file_name`` (see the module docstring)."""
    return np.array([
        int.from_bytes(hashlib.blake2b(f"{file_name}:{line}".encode(), digest_size=8).digest(), "big", signed=True)
        for line in lines
    ], dtype=np.int64)


def read_source(source: SourceConfig) -> tuple[pa.Table, pa.Table]:
    """One input as (pairs, rejects) tables; rejects carry the reader's reason for each bad line."""
    if source.format == "parquet":
        return _read_parquet(source)
    quarantine = Quarantine()
    if source.format == "tatoeba":
        path = source.resolve(source.path) if source.path else data_path("bitext", *TATOEBA_FILES[source.lang])
        pairs = read_tatoeba(path, lang=source.lang, quarantine=quarantine, limit=source.limit)
    else:
        path = source.resolve(source.path)
        pairs = read_line_aligned(path, source.resolve(source.foreign_path), lang=source.lang,
                                  quarantine=quarantine, limit=source.limit)
    return _pair_table(path.name, pairs), _quarantine_table(path.name, quarantine)


def _pair_table(file_name: str, pairs: list[BitextPair]) -> pa.Table:
    lines = [pair.line for pair in pairs]
    return pa.table({
        "row_id": row_ids(file_name, lines),
        "source": [file_name] * len(pairs),
        "line": lines,
        "lang": [pair.lang for pair in pairs],
        "en": [pair.en for pair in pairs],
        "foreign": [pair.foreign for pair in pairs],
    }, schema=PAIR_SCHEMA)


def _quarantine_table(file_name: str, quarantine: Quarantine) -> pa.Table:
    lines = [rejected.line for rejected in quarantine.rejected]
    return pa.table({
        "row_id": row_ids(file_name, lines),
        "source": [file_name] * len(lines),
        "line": lines,
        "reason": [rejected.reason for rejected in quarantine.rejected],
        "text": [rejected.text for rejected in quarantine.rejected],
    })


def _read_parquet(source: SourceConfig) -> tuple[pa.Table, pa.Table]:
    """A parquet file with ``en`` and ``foreign`` columns; a row with an empty or missing side is rejected."""
    path = source.resolve(source.path)
    try:
        table = pq.read_table(path, columns=["en", "foreign"])
    except (FileNotFoundError, pa.ArrowInvalid) as err:
        raise DataFormatError(path, None, f"cannot read parquet columns 'en' and 'foreign': {err}") from None
    if source.limit is not None:
        table = table.slice(0, source.limit)
    lines = np.arange(1, table.num_rows + 1)
    pairs = pa.table({
        "row_id": row_ids(path.name, lines), "source": pa.repeat(path.name, table.num_rows), "line": lines,
        "lang": pa.repeat(source.lang, table.num_rows), "en": table["en"], "foreign": table["foreign"],
    }, schema=PAIR_SCHEMA)
    reason = pc.if_else(_blank(pairs["en"]), "empty English side",
                        pc.if_else(_blank(pairs["foreign"]), f"empty {LANGUAGE_NAMES.get(source.lang, source.lang)} "
                                   "side", pa.scalar(None, pa.string())))
    bad = pc.is_valid(reason)
    rejects = pairs.filter(bad).select(["row_id", "source", "line"]).append_column("reason", reason.filter(bad))
    text = pc.binary_join_element_wise(pc.fill_null(pairs["en"], ""), pc.fill_null(pairs["foreign"], ""), "\t")
    return pairs.filter(pc.invert(bad)), rejects.append_column("text", text.filter(bad))


def _blank(column: pa.ChunkedArray) -> pa.ChunkedArray:
    return pc.fill_null(pc.equal(pc.utf8_trim_whitespace(column), ""), True)


def normalise(column: pa.ChunkedArray) -> pa.ChunkedArray:
    """Unicode NFC, whitespace runs (newlines and tabs included) to one space, ends trimmed.

    NFC goes through Python's ``unicodedata``: pyarrow 25.0.1's ``utf8_normalize`` returns *decomposed* text for every
    form (``"está"`` becomes ``"esta"`` + U+0301), which Apertium then analyses as two words ("this" + an accent)."""
    composed = pa.array([None if text is None else unicodedata.normalize("NFC", text) for text in column.to_pylist()],
                        pa.string())
    return pc.utf8_trim_whitespace(pc.replace_substring_regex(composed, r"\s+", " "))


def split_duplicates(pairs: pa.Table) -> tuple[pa.Table, pa.Table]:
    """(first occurrence of every distinct (en, foreign) pair, the later repeats)."""
    indexed = pairs.append_column("_index", pa.array(np.arange(pairs.num_rows)))
    first = indexed.group_by(["en", "foreign"]).aggregate([("_index", "min")])["_index_min"]
    keep = pc.is_in(indexed["_index"], value_set=first)
    return pairs.filter(keep), pairs.filter(pc.invert(keep))


def ingest(sources: Sequence[SourceConfig], workdir: Path) -> int:
    """Stage function: read ``sources``, write pairs to ``workdir/data`` and rejects to ``workdir/rejects``."""
    read = [read_source(source) for source in sources]
    pairs = pa.concat_tables([pairs for pairs, _ in read])
    reader_rejects = pa.concat_tables([rejects for _, rejects in read], promote_options="permissive")
    pairs = pairs.set_column(4, "en", normalise(pairs["en"])).set_column(5, "foreign", normalise(pairs["foreign"]))
    unique, repeats = split_duplicates(pairs)
    repeat_text = pc.binary_join_element_wise(repeats["en"], repeats["foreign"], "\t")
    duplicates = repeats.select(["row_id", "source", "line"]).append_column(
        "reason", pa.repeat(DUPLICATE, repeats.num_rows)).append_column("text", repeat_text)
    (workdir / DATA).mkdir(parents=True)
    for number, start in enumerate(range(0, max(unique.num_rows, 1), ROWS_PER_FILE)):
        pq.write_table(unique.slice(start, ROWS_PER_FILE), workdir / DATA / f"part-{number:05d}.parquet")
    write_rejects(pa.concat_tables([reader_rejects, duplicates], promote_options="permissive"), workdir / REJECTS)
    return pairs.num_rows + reader_rejects.num_rows
