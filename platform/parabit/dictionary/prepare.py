"""A BilDRL run's inputs as token ids: definitions → padded ids in their language, words → their row in the space.

``prepare_dictionary_run(config)`` writes ``outputs/bildrl/prepared/<name>/``: ``train.parquet`` (``ids_a``/``len_a``
the definition, ``ids_b``/``len_b`` the defined word's row as a one-token "sentence", the training core's pair
layout), ``vectors.npy`` + ``vocab.json`` + ``tokenizer.json`` (the space) and, for joint learning, ``bitext.parquet``
(Tatoeba pairs as English/foreign ids). Test rows stay text; they are encoded at evaluation.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from parabit.data.bitext import read_tatoeba
from parabit.data.errors import Quarantine
from parabit.dictionary.build import read_direction
from parabit.dictionary.config import DictionaryTrainConfig
from parabit.dictionary.space import BilingualSpace
from parabit.paths import output_root
from parabit.text.tokenize import Tokenizer
from parabit.text.vocab import Vocabulary
from parabit.training.data import _fixed_size_ids

BITEXT_MAX_TOKENS = 30


@dataclass
class PreparedDictionary:
    directory: Path
    space: BilingualSpace
    stats: dict

    @property
    def train_path(self) -> Path:
        return self.directory / "train.parquet"

    @property
    def bitext_path(self) -> Path:
        return self.directory / "bitext.parquet"


def _pairs_table(ids_a, len_a, ids_b, len_b) -> pa.Table:
    return pa.table({"ids_a": _fixed_size_ids(ids_a), "len_a": pa.array(len_a.astype(np.int32)),
                     "ids_b": _fixed_size_ids(ids_b), "len_b": pa.array(len_b.astype(np.int32))})


def training_rows(config: DictionaryTrainConfig, direction: str) -> pa.Table:
    """The direction's training rows, a seeded sample of ``max_train_rows`` if set."""
    table = read_direction(config.data_path, direction)
    table = table.filter(pa.compute.equal(table["split"], "train"))
    if config.max_train_rows is not None and table.num_rows > config.max_train_rows:
        rows = np.sort(np.random.default_rng(config.seed).permutation(table.num_rows)[:config.max_train_rows])
        table = table.take(pa.array(rows))
    return table


def prepare_dictionary_run(config: DictionaryTrainConfig, space: BilingualSpace | None = None) -> PreparedDictionary:
    space = space or BilingualSpace.load(config.space_path)
    directory = output_root() / "bildrl" / "prepared" / config.name
    directory.mkdir(parents=True, exist_ok=True)
    max_tokens = config.model.max_tokens
    parts, stats = [], {"train_rows": {}}
    for direction in config.directions:
        rows = training_rows(config, direction)
        word_lang, def_lang = direction.split("-")
        ids_a, len_a = space.token_ids(rows["definition"].to_pylist(), def_lang, max_tokens)
        targets = space.ids(rows["word"].to_pylist(), word_lang)
        parts.append(_pairs_table(ids_a, len_a, targets.reshape(-1, 1), np.ones(len(targets), np.int64)))
        stats["train_rows"][direction] = rows.num_rows
    pq.write_table(pa.concat_tables(parts), directory / "train.parquet")
    if config.joint.enabled:
        pairs = read_tatoeba(lang=config.language, quarantine=Quarantine())
        chosen = np.random.default_rng(config.seed).permutation(len(pairs))[:config.joint.bitext_pairs]
        en_ids, en_len = space.token_ids([pairs[i].en for i in chosen], "en", BITEXT_MAX_TOKENS)
        fo_ids, fo_len = space.token_ids([pairs[i].foreign for i in chosen], config.language, BITEXT_MAX_TOKENS)
        pq.write_table(_pairs_table(en_ids, en_len, fo_ids, fo_len), directory / "bitext.parquet")
        stats["bitext_pairs"] = len(chosen)
    np.save(directory / "vectors.npy", space.vectors)
    space.vocab.save(directory / "vocab.json")
    (directory / "tokenizer.json").write_text(json.dumps(space.tokenizer.to_dict()))
    (directory / "stats.json").write_text(json.dumps(stats, indent=1))
    return PreparedDictionary(directory, space, stats)


def load_prepared_space(directory: Path) -> BilingualSpace:
    return BilingualSpace(Vocabulary.load(directory / "vocab.json"), np.load(directory / "vectors.npy"),
                          Tokenizer.from_dict(json.loads((directory / "tokenizer.json").read_text())))
