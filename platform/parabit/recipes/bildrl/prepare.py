"""A BilDRL run's inputs as token ids: definitions → padded ids in their language, words → their row in the space.

``prepare_dictionary_run(config)`` writes, in the kernel's prepared format (:mod:`parabit.training.prepared`), under
``outputs/bildrl/prepared/<name>-<hash>/``: ``pairs.parquet`` (``ids_a``/``len_a`` the definition, ``ids_b``/``len_b``
the defined word's row as a one-token "sentence"; a multi-task run's directions balanced as its ``balance`` says:
:func:`balanced`), ``vectors.npy`` + ``vocab.json`` (the space) and, for joint learning, ``bitext.parquet`` (Tatoeba
pairs as English/foreign ids). Test rows stay text; they are encoded at evaluation. ``stats.json`` keeps each
direction's ``train_rows`` and, balanced, its ``epoch_rows``. A later run with the same inputs reuses the folder.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pyarrow as pa

from parabit.data.bitext import read_tatoeba
from parabit.data.errors import Quarantine
from parabit.recipes.bildrl.build import read_direction
from parabit.recipes.bildrl.config import BilDRLConfig
from parabit.recipes.bildrl.space import BilingualSpace, find_embedder
from parabit.paths import output_root
from parabit.runlock import one_builder
from parabit.training import PreparedData, id_table, write_prepared

BITEXT_MAX_TOKENS = 30
PREPARED_FORMAT = 3  # 3: the authors' split's copies (training_rows)


def training_rows(config: BilDRLConfig, direction: str) -> pa.Table:
    """The direction's training rows, each as many times as its dictionary's split puts it in training (its
    ``train_copies``: once under the strict split; the authors' split repeats rows and keeps test pairs in training).
    ``max_train_rows``: a seeded sample of that many of the rows of words that are not test words, each once (the
    authors' split repeats every line of an n-line word n times, which only reweights them); the rows of test words
    that the split puts in training (none under the strict split) are always kept, with their copies: they are what
    the split changes."""
    rows = read_direction(config.data_path, direction)
    split = np.asarray(rows["split"].to_pylist())
    copies = np.asarray(rows["train_copies"].to_pylist()) if "train_copies" in rows.column_names \
        else (split == "train").astype(np.int64)  # a dictionary built before the column: the strict split
    words = np.asarray(rows["word"].to_pylist())
    trained = np.flatnonzero(copies > 0)
    of_test_word = np.isin(words[trained], words[split == "test"])
    others = trained[~of_test_word]
    if config.max_train_rows is None or len(others) <= config.max_train_rows:
        return rows.take(pa.array(np.repeat(trained, copies[trained])))
    chosen = np.sort(others[np.random.default_rng(config.seed).permutation(len(others))[:config.max_train_rows]])
    leaked = trained[of_test_word]
    return rows.take(pa.array(np.sort(np.concatenate([chosen, np.repeat(leaked, copies[leaked])]))))


def balanced(tables: dict[str, pa.Table], seed: int) -> dict[str, pa.Table]:
    """The ``equal`` balance of a multi-task run (:class:`~parabit.recipes.bildrl.config.BilDRLConfig`): every
    direction's rows brought to as many as the largest direction has, a smaller direction's rows each repeated as
    many whole times as fit, then a seeded sample of them (without repeats) for the rest. Every row a direction's
    single-direction run trains on is kept, in the same proportions but for that one partial copy."""
    target = max(table.num_rows for table in tables.values())
    rng = np.random.default_rng(seed)
    result = {}
    for direction, table in tables.items():
        whole, rest = divmod(target, table.num_rows) if table.num_rows else (0, 0)
        extra = np.sort(rng.permutation(table.num_rows)[:rest])
        result[direction] = table.take(pa.array(np.concatenate([np.tile(np.arange(table.num_rows), whole), extra])
                                                .astype(np.int64)))
    return result


def _cache_key(config: BilDRLConfig) -> str:
    """What the prepared ids depend on: the data, the space (its embedder's weights file) and the sampling."""
    weights = find_embedder(config.space_path) / "weights.pt"
    settings = {"format": PREPARED_FORMAT, "data": str(config.data_path), "directions": config.directions,
                "max_train_rows": config.max_train_rows, "seed": config.seed, "max_tokens": config.model.max_tokens,
                "joint": config.joint.enabled, "bitext_pairs": config.joint.bitext_pairs, "balance": config.balance,
                "space": str(weights),
                "space_mtime": weights.stat().st_mtime_ns}
    return hashlib.sha256(json.dumps(settings, sort_keys=True).encode()).hexdigest()[:12]


def prepare_dictionary_run(config: BilDRLConfig) -> PreparedData:
    directory = output_root() / "bildrl" / "prepared" / f"{config.name}-{_cache_key(config)}"
    with one_builder(directory.with_name(f"{directory.name}.lock")):
        if not PreparedData.is_complete(directory):
            _prepare(config, directory)
    return PreparedData.load(directory)


def _prepare(config: BilDRLConfig, directory: Path) -> None:
    space = BilingualSpace.load(config.space_path)
    max_tokens = config.model.max_tokens
    parts, stats = [], {"train_rows": {}, "epoch_rows": {}}
    tables = {direction: training_rows(config, direction) for direction in config.directions}
    stats["train_rows"] = {direction: rows.num_rows for direction, rows in tables.items()}
    if config.balance == "equal":
        tables = balanced(tables, config.seed)
    for direction, rows in tables.items():
        word_lang, def_lang = direction.split("-")
        ids_a, len_a = space.token_ids(rows["definition"].to_pylist(), def_lang, max_tokens)
        targets = space.ids(rows["word"].to_pylist(), word_lang)
        parts.append(id_table(ids_a, len_a, targets.reshape(-1, 1), np.ones(len(targets), np.int64)))
        stats["epoch_rows"][direction] = rows.num_rows  # what an epoch trains on (train_rows, balanced)
    tables = {"pairs": pa.concat_tables(parts)}
    if config.joint.enabled:
        pairs = read_tatoeba(lang=config.language, quarantine=Quarantine())
        chosen = np.random.default_rng(config.seed).permutation(len(pairs))[:config.joint.bitext_pairs]
        en_ids, en_len = space.token_ids([pairs[i].en for i in chosen], "en", BITEXT_MAX_TOKENS)
        fo_ids, fo_len = space.token_ids([pairs[i].foreign for i in chosen], config.language, BITEXT_MAX_TOKENS)
        tables["bitext"] = id_table(en_ids, en_len, fo_ids, fo_len)
        stats["bitext_pairs"] = len(chosen)
    stats.update({"tokenizer": space.tokenizer.to_dict(), "lang_a": "en", "lang_b": config.language,
                  "max_tokens": max_tokens, "pairs_kept": int(tables["pairs"].num_rows), "rejected": {}})
    write_prepared(directory, tables, space.vocab, stats, arrays={"vectors": space.vectors})


def prepared_space(prepared: PreparedData) -> BilingualSpace:
    """The space a prepared run maps onto (its vocabulary, vectors and tokenizer)."""
    return BilingualSpace(prepared.vocab, np.load(prepared.directory / "vectors.npy"), prepared.tokenizer)
