"""The prepared-data format every recipe writes and the kernel reads: token ids as parquet, plus the vocabulary.

A prepared folder holds ``pairs.parquet`` (the training rows: padded ``ids_a``/``ids_b`` as fixed-size int32 lists
and their lengths ``len_a``/``len_b``, plus any recipe columns such as ``label``), other tables a recipe needs
(``dev.parquet``, ``bitext.parquet``, ...), ``vocab.json`` (none for a model that brings its own tokenizer, a
transformer checkpoint: its ids are the checkpoint's word pieces) and ``stats.json``, which marks the folder complete.
It is written to a private staging folder and renamed into place, so an interrupted or concurrent preparation never
leaves a half-written folder behind.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from parabit.text.tokenize import Tokenizer
from parabit.text.vocab import Vocabulary

STATS_FILE = "stats.json"


@dataclass(frozen=True)
class PreparedData:
    """Where a run's token ids live, and what a model needs to read them back. ``vocab`` and ``tokenizer`` are None
    for a model with a tokenizer of its own (the transformer checkpoint's); ``stats["vocab_size"]`` then says how
    many ids it has."""

    directory: Path
    vocab: Vocabulary | None
    tokenizer: Tokenizer | None
    lang_a: str
    lang_b: str
    max_tokens: int
    stats: dict

    @property
    def digest(self) -> str:
        """The folder's name (its cache key) as a dataset digest, hashed when longer than MLflow's 36 characters (a
        BilDRL run's folder is named after the run)."""
        name = self.directory.name
        return name if len(name) <= 36 else hashlib.sha256(name.encode()).hexdigest()[:32]

    @property
    def vocabulary_size(self) -> int:
        """How many token ids there are: the vocabulary's size, or the tokenizer's the statistics record."""
        return len(self.vocab) if self.vocab is not None else int(self.stats.get("vocab_size", 0))

    @property
    def pairs_path(self) -> Path:
        return self.directory / "pairs.parquet"

    def table_path(self, name: str) -> Path:
        """``pairs.parquet`` for ``train``, ``<name>.parquet`` otherwise."""
        return self.pairs_path if name == "train" else self.directory / f"{name}.parquet"

    @classmethod
    def load(cls, directory: str | Path) -> "PreparedData":
        directory = Path(directory)
        stats = json.loads((directory / STATS_FILE).read_text())
        vocab = directory / "vocab.json"
        return cls(directory=directory, vocab=Vocabulary.load(vocab) if vocab.is_file() else None,
                   tokenizer=Tokenizer.from_dict(stats["tokenizer"]) if stats.get("tokenizer") else None,
                   lang_a=stats["lang_a"], lang_b=stats["lang_b"], max_tokens=stats["max_tokens"], stats=stats)

    @staticmethod
    def is_complete(directory: Path) -> bool:
        return (directory / STATS_FILE).is_file()


def fixed_size_ids(ids: np.ndarray) -> pa.FixedSizeListArray:
    """``[N, T]`` integer ids as an Arrow column of fixed-size int32 lists."""
    return pa.FixedSizeListArray.from_arrays(pa.array(np.asarray(ids).astype(np.int32).ravel()), ids.shape[1])


def id_table(ids_a: np.ndarray, len_a: np.ndarray, ids_b: np.ndarray, len_b: np.ndarray, **columns) -> pa.Table:
    """Padded ids and lengths of both sides (plus any extra ``columns``) as a prepared-pairs table."""
    return pa.table({
        "ids_a": fixed_size_ids(ids_a), "len_a": pa.array(np.asarray(len_a).astype(np.int32)),
        "ids_b": fixed_size_ids(ids_b), "len_b": pa.array(np.asarray(len_b).astype(np.int32)), **columns,
    })


def write_prepared(directory: Path, tables: dict[str, pa.Table], vocab: Vocabulary | None, stats: dict,
                   arrays: dict[str, np.ndarray] | None = None, documents: dict[str, object] | None = None) -> None:
    """Write ``<name>.parquet`` per table (``pairs`` is the training table), ``<name>.npy`` per array, a JSON file
    per document (named with its extension), the vocabulary (unless None) and ``stats.json``.

    A private staging folder, renamed into place: concurrent preparations (e.g. two Tune trials) never see each
    other's half-written files, and the first to finish wins.
    """
    staging = directory.with_name(f"{directory.name}.partial-{uuid.uuid4().hex[:8]}")
    staging.mkdir(parents=True)
    for name, table in tables.items():
        pq.write_table(table, staging / f"{name}.parquet", row_group_size=50_000)
    for name, array in (arrays or {}).items():
        np.save(staging / f"{name}.npy", array)
    for name, document in (documents or {}).items():
        (staging / name).write_text(json.dumps(document, ensure_ascii=False))
    if vocab is not None:
        vocab.save(staging / "vocab.json")
    (staging / STATS_FILE).write_text(json.dumps(stats, indent=1, default=str))
    try:
        staging.rename(directory)
    except OSError:  # another process prepared the same data first
        shutil.rmtree(staging, ignore_errors=True)


def arrow_to_tensors(table: pa.Table) -> dict[str, np.ndarray]:
    """A prepared table (or a Ray Data batch of it) as numpy: every fixed-size list column ``[N, width]`` int64,
    every integer column ``[N]`` int64, every floating column ``[N]`` float32."""
    out = {}
    for name in table.column_names:
        column = table.column(name).combine_chunks()
        if pa.types.is_fixed_size_list(column.type):
            flat = column.flatten().to_numpy(zero_copy_only=False)
            out[name] = np.asarray(flat, dtype=np.int64).reshape(-1, column.type.list_size)
        elif pa.types.is_integer(column.type):
            out[name] = column.to_numpy().astype(np.int64)
        elif pa.types.is_floating(column.type):
            out[name] = column.to_numpy().astype(np.float32)
    return out


def data_sizes(prepared: PreparedData) -> dict:
    """The numbers in the prepared data's statistics (pairs, rows, per split), and the vocabulary's size."""
    return {**data_sizes_of(prepared.stats), "vocabulary": prepared.vocabulary_size}


def data_sizes_of(stats: dict) -> dict:
    """The numbers in a prepared folder's ``stats.json`` (nested dicts kept, everything else dropped)."""
    def numbers(value):
        if isinstance(value, dict):
            kept = {key: numbers(item) for key, item in value.items()}
            return {key: item for key, item in kept.items() if item not in (None, {})}
        return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None

    return numbers(stats) or {}
