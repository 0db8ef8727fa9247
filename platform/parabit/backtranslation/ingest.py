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
from collections.abc import Iterator, Sequence
from itertools import islice
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from parabit.data.bitext import LANGUAGE_NAMES, BitextPair, iter_line_aligned, iter_tatoeba
from parabit.data.errors import DataFormatError, Quarantine
from parabit.data.heldout import HeldoutSets
from parabit.backtranslation.config import SourceConfig
from parabit.backtranslation.stage import DATA, REJECTS, write_rejects

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


def read_source(source: SourceConfig, chunk_rows: int = ROWS_PER_FILE,
                heldout: HeldoutSets | None = None) -> Iterator[tuple[pa.Table, pa.Table]]:
    """One input as a stream of (pairs, rejects) tables of at most ``chunk_rows`` pairs each, read lazily: rejects
    carry the reader's reason for each bad line (with ``heldout``, also each pair sharing a sentence with the
    held-out evaluation sets)."""
    if source.format == "parquet":
        yield from _read_parquet(source, chunk_rows, heldout)
        return
    quarantine = Quarantine()
    path = source.file
    if source.format == "tatoeba":
        pairs = iter_tatoeba(path, lang=source.lang, quarantine=quarantine, limit=source.limit, heldout=heldout)
    else:
        pairs = iter_line_aligned(path, source.resolve(source.foreign_path), lang=source.lang,
                                  quarantine=quarantine, limit=source.limit, heldout=heldout)
    while chunk := list(islice(pairs, chunk_rows)):
        yield _pair_table(path.name, chunk), _drain(path.name, quarantine)
    yield _pair_table(path.name, []), _drain(path.name, quarantine)  # bad lines after the last good one


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


def _drain(file_name: str, quarantine: Quarantine) -> pa.Table:
    """The quarantine's lines so far as reject rows, emptying it (so it does not grow with the input)."""
    rejected, quarantine.rejected = quarantine.rejected, []
    lines = [line.line for line in rejected]
    return pa.table({
        "row_id": row_ids(file_name, lines),
        "source": [file_name] * len(lines),
        "line": lines,
        "reason": [line.reason for line in rejected],
        "text": [line.text for line in rejected],
    })


def _read_parquet(source: SourceConfig, chunk_rows: int,
                  heldout: HeldoutSets | None) -> Iterator[tuple[pa.Table, pa.Table]]:
    """A parquet file with ``en`` and ``foreign`` columns, in record batches; a row with an empty or missing side
    (or, with ``heldout``, a held-out sentence) is rejected."""
    path = source.resolve(source.path)
    try:
        batches = pq.ParquetFile(path).iter_batches(batch_size=chunk_rows, columns=["en", "foreign"])
        first_line = 1
        for batch in batches:
            if source.limit is not None:
                batch = batch.slice(0, max(source.limit - first_line + 1, 0))
            if batch.num_rows == 0:
                break
            yield _parquet_rows(path, source.lang, pa.Table.from_batches([batch]), first_line, heldout)
            first_line += batch.num_rows
    except (FileNotFoundError, pa.ArrowInvalid) as err:
        raise DataFormatError(path, None, f"cannot read parquet columns 'en' and 'foreign': {err}") from None


def _parquet_rows(path: Path, lang: str, table: pa.Table, first_line: int,
                  heldout: HeldoutSets | None) -> tuple[pa.Table, pa.Table]:
    lines = np.arange(first_line, first_line + table.num_rows)
    pairs = pa.table({
        "row_id": row_ids(path.name, lines), "source": pa.repeat(path.name, table.num_rows), "line": lines,
        "lang": pa.repeat(lang, table.num_rows), "en": table["en"], "foreign": table["foreign"],
    }, schema=PAIR_SCHEMA)
    reason = pc.if_else(_blank(pairs["en"]), "empty English side",
                        pc.if_else(_blank(pairs["foreign"]), f"empty {LANGUAGE_NAMES.get(lang, lang)} "
                                   "side", pa.scalar(None, pa.string())))
    if heldout is not None:
        held = heldout.mask(pc.fill_null(pairs["en"], "").to_pylist(), pc.fill_null(pairs["foreign"], "").to_pylist(),
                            lang)
        reason = pc.if_else(pc.and_(pc.is_null(reason), pa.array(held)), heldout.reason, reason)
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


class FirstOccurrences:
    """Splits pairs, chunk after chunk, into first occurrences of an (en, foreign) pair and later repeats.

    It keeps a 16-byte digest per distinct pair seen (about 80 bytes each in memory), so ingest memory grows with the
    number of distinct pairs, not with the size of the input."""

    def __init__(self):
        self._seen: set[bytes] = set()

    def split(self, pairs: pa.Table) -> tuple[pa.Table, pa.Table]:
        first = np.zeros(pairs.num_rows, dtype=bool)
        for index, (en, foreign) in enumerate(zip(pairs["en"].to_pylist(), pairs["foreign"].to_pylist())):
            # Normalised text has no tabs, so the joined key is unambiguous.
            key = hashlib.blake2b(f"{en}\t{foreign}".encode(), digest_size=16).digest()
            if key not in self._seen:
                self._seen.add(key)
                first[index] = True
        keep = pa.array(first)
        return pairs.filter(keep), pairs.filter(pc.invert(keep))


def ingest(sources: Sequence[SourceConfig], workdir: Path, chunk_rows: int = ROWS_PER_FILE,
           heldout: HeldoutSets | None = None) -> int:
    """Stage function: read ``sources``, write pairs to ``workdir/data`` and rejects to ``workdir/rejects``; with
    ``heldout``, every pair sharing a sentence with the held-out evaluation sets is a reject.

    Streams: each source is read ``chunk_rows`` pairs at a time, normalised, de-duplicated against everything
    before it and written as its own parquet part, so the driver holds one chunk (plus the digests of the distinct
    pairs) whatever the input's size.
    """
    (workdir / DATA).mkdir(parents=True)
    first_occurrences = FirstOccurrences()
    rows_in = parts = 0
    for source in sources:
        for pairs, reader_rejects in read_source(source, chunk_rows, heldout):
            rows_in += pairs.num_rows + reader_rejects.num_rows
            pairs = pairs.set_column(4, "en", normalise(pairs["en"])).set_column(
                5, "foreign", normalise(pairs["foreign"]))
            unique, repeats = first_occurrences.split(pairs)
            duplicates = repeats.select(["row_id", "source", "line"]).append_column(
                "reason", pa.repeat(DUPLICATE, repeats.num_rows)).append_column(
                "text", pc.binary_join_element_wise(repeats["en"], repeats["foreign"], "\t"))
            rejects = pa.concat_tables([reader_rejects, duplicates], promote_options="permissive")
            if unique.num_rows:
                pq.write_table(unique, workdir / DATA / f"part-{parts:05d}.parquet")
            if rejects.num_rows:
                write_rejects(rejects, workdir / REJECTS, f"part-{parts:05d}.parquet")
            parts += 1
    if not any((workdir / DATA).iterdir()):  # an input with no good pair still has a (empty) data part
        pq.write_table(PAIR_SCHEMA.empty_table(), workdir / DATA / "part-00000.parquet")
    return rows_in
