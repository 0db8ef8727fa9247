"""Labelled sentence pairs (SICK, SICK-es, cross-lingual SICK, MSRP) as token ids, prepared once and cached.

``prepare_siamese_data(config)`` writes, in the kernel's prepared format (:mod:`parabit.training.prepared`),
``pairs.parquet`` (the training split, what Ray Train reads), ``dev.parquet`` and ``test.parquet`` (scored on rank 0
/ by the driver), each with the padded ids and lengths of both sentences and a
``label`` (SICK relatedness 1–5, or MSRP 0/1), plus the vocabulary and stats, under
``outputs/prepared-siamese/<hash>/``. The vocabulary covers the words of every split, each in its side's language
namespace (pre-trained vectors reach test words too; words no vector covers start at random and, with a fixed word
table, stay so).
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from parabit.data.msrp import read_msrp
from parabit.data.sick import read_sick
from parabit.paths import output_root
from parabit.backtranslation.select import resolve_pairs_path
from parabit.backtranslation.sick_translation import read_translated_sick, translation_stage
from parabit.backtranslation.stage import MANIFEST
from parabit.runlock import one_builder
from parabit.recipes.siamese.config import SiameseDataConfig
from parabit.text.tokenize import Tokenizer
from parabit.text.vocab import UNK_WORD, Vocabulary, pad_batch
from parabit.training import PreparedData, arrow_to_tensors, id_table, write_prepared

log = logging.getLogger(__name__)

PREPARED_FORMAT = 1
SPLITS = ("train", "dev", "test")


@dataclass(frozen=True)
class LabelledPairs:
    """Parallel lists: sentence A, sentence B, gold label."""

    text_a: list[str]
    text_b: list[str]
    labels: list[float]

    def head(self, n: int | None) -> "LabelledPairs":
        return LabelledPairs(self.text_a[:n], self.text_b[:n], self.labels[:n])


def translated_path(config: SiameseDataConfig) -> Path:
    """The translated SICK of ``data.translated_path``: a ``pipeline:`` reference (under ``$PARABIT_OUTPUT``, where
    ``jobs/translate_sick.py`` writes) or a folder read from the project."""
    return resolve_pairs_path(config.translated_path)


def _sick_split(config: SiameseDataConfig, split: str) -> LabelledPairs:
    if config.language == "en":
        pairs = read_sick(split)
        return LabelledPairs([p.sentence_a for p in pairs], [p.sentence_b for p in pairs],
                             [p.relatedness for p in pairs])
    table = read_translated_sick(translated_path(config), split)
    column_a = "sentence_a_en" if config.language == "en-es" else "sentence_a"
    return LabelledPairs(table[column_a].to_pylist(), table["sentence_b"].to_pylist(),
                         table["relatedness"].to_pylist())


def load_splits(config: SiameseDataConfig) -> dict[str, LabelledPairs]:
    """``{"train", "dev", "test"}`` pairs of ``config.task``: SICK train / trial / test, or MSRP train minus a
    seeded dev split / MSRP train's held-out ``dev_fraction`` / test."""
    if config.task == "sick":
        splits = {"train": _sick_split(config, "train"), "dev": _sick_split(config, "trial"),
                  "test": _sick_split(config, "test")}
    else:
        train = read_msrp("train")
        order = np.random.default_rng(config.seed).permutation(len(train))
        held_out = int(round(len(train) * config.dev_fraction))
        pick = {"dev": order[:held_out], "train": np.sort(order[held_out:])}
        splits = {name: LabelledPairs([train[i].sentence_a for i in rows], [train[i].sentence_b for i in rows],
                                      [float(train[i].label) for i in rows]) for name, rows in pick.items()}
        test = read_msrp("test")
        splits["test"] = LabelledPairs([p.sentence_a for p in test], [p.sentence_b for p in test],
                                       [float(p.label) for p in test])
    return {name: splits[name].head(config.max_pairs_per_split) for name in SPLITS}


def _cache_key(config: SiameseDataConfig) -> str:
    """The data config, plus the translated SICK's manifest for the Spanish tracks (a re-made file must not hit)."""
    source = ""
    if config.task == "sick" and config.language != "en":
        stage = translation_stage(translated_path(config))
        source = (stage.path / MANIFEST).read_text() if stage is not None else ""
    settings = json.dumps({"format": PREPARED_FORMAT, **config.model_dump(mode="json"), "source": source},
                          sort_keys=True)
    return hashlib.sha256(settings.encode()).hexdigest()[:16]


def prepare_siamese_data(config: SiameseDataConfig, cache_root: Path | None = None) -> PreparedData:
    """Tokenise every split, build the vocabulary, pad to ``config.max_length`` and cache (or reuse the cache)."""
    directory = (cache_root or output_root() / "prepared-siamese") / _cache_key(config)
    with one_builder(directory.with_name(f"{directory.name}.lock")):
        if not PreparedData.is_complete(directory):
            _prepare(config, directory)
    return PreparedData.load(directory)


def _prepare(config: SiameseDataConfig, directory: Path) -> None:
    tokenizer = Tokenizer(config.tokenizer, lowercase=config.lowercase)
    lang_a, lang_b = config.languages
    splits = load_splits(config)
    # An empty sentence becomes the unknown word, as SentenceEmbedder does at inference: every pair keeps a vector.
    tokens = {name: ([t or [UNK_WORD] for t in tokenizer.tokenize_all(pairs.text_a)],
                     [t or [UNK_WORD] for t in tokenizer.tokenize_all(pairs.text_b)])
              for name, pairs in splits.items()}
    counts: dict[str, Counter] = {lang_a: Counter(), lang_b: Counter()}
    for side_a, side_b in tokens.values():
        for sentence in side_a:
            counts[lang_a].update(sentence)
        for sentence in side_b:
            counts[lang_b].update(sentence)
    vocab = Vocabulary.build(counts)

    tables, split_stats = {}, {}
    for name, (side_a, side_b) in tokens.items():
        ids_a, len_a = pad_batch([vocab.encode(t, lang_a) for t in side_a], config.max_length)
        ids_b, len_b = pad_batch([vocab.encode(t, lang_b) for t in side_b], config.max_length)
        ids_a, ids_b = (np.pad(ids, ((0, 0), (0, config.max_length - ids.shape[1]))) for ids in (ids_a, ids_b))
        tables[name] = id_table(ids_a, len_a, ids_b, len_b,
                                label=pa.array(np.asarray(splits[name].labels, dtype=np.float32)))
        lengths = np.asarray([len(t) for t in side_a + side_b])
        split_stats[name] = {"pairs": len(side_a), "mean_tokens": float(lengths.mean()) if len(lengths) else 0.0,
                             "truncated_sentences": int((lengths > config.max_length).sum())}
    stats = {
        "pairs_kept": split_stats["train"]["pairs"],
        "rejected": {},
        "splits": split_stats,
        "lang_a": lang_a,
        "lang_b": lang_b,
        "vocab_size": len(vocab),
        "tokenizer": tokenizer.to_dict(),
        "max_tokens": config.max_length,
        "config": config.model_dump(mode="json"),
    }
    # Ray Train reads ``pairs.parquet`` (PreparedData.pairs_path): the training split.
    write_prepared(directory, {"pairs": tables["train"], "dev": tables["dev"], "test": tables["test"]}, vocab, stats)
    log.info("prepared %s pairs in %s", {k: v["pairs"] for k, v in split_stats.items()}, directory)


def read_split(prepared: PreparedData, split: str) -> dict[str, np.ndarray]:
    """A prepared split (``train``, ``dev``, ``test``) as numpy: ids, lengths and ``label``."""
    return arrow_to_tensors(pq.read_table(prepared.table_path(split)))
