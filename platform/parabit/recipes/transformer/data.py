"""The transformer recipe's prepared data: both sides of every pair as the checkpoint's word pieces, and the teacher's
vector of each pair's English side.

``prepare_transformer(config)`` writes, under ``outputs/prepared/transformer-<hash>/`` (the hash covers the data
settings, the checkpoint's tokenizer files, the length cut, the prefix and the teacher, so another checkpoint never
hits the cache):

* ``pairs.parquet``: ``ids_a``/``len_a``, the English side's word pieces (special tokens included, after the
  prefix if there is one), ``ids_b``/``len_b`` the other side's, and ``row``, the pair's row of
  ``teacher.npy``;
* ``teacher.npy`` (when an objective reads it): the teacher's vector of every distinct English sentence of the
  pairs, computed once and cached with the rest: the packaged teacher's unit vectors by a Ray Data actor pool
  (:func:`parabit.teacher.inference.encode_with_ray`, the teacher loaded once per actor), or with ``teacher:
  start`` the untrained student's own vectors of the very word pieces it trains on (:func:`start_vectors`);
* ``stats.json``: counts, rejected pairs by reason, the checkpoint's digest. No ``vocab.json``: the checkpoint's
  tokenizer is the vocabulary (``stats["vocab_size"]`` its size).
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow as pa

from parabit.encoders.transformer import CheckpointTokenizer, checkpoint_settings
from parabit.paths import output_root
from parabit.recipes.bilingual.config import BilingualDataConfig
from parabit.recipes.bilingual.data import bilingual_pairs, sample_pairs
from parabit.recipes.pairs.config import DataConfig
from parabit.recipes.pairs.data import TextPairs, load_text_pairs
from parabit.recipes.transformer.config import TransformerConfig, TransformerDataConfig
from parabit.runlock import one_builder
from parabit.training import PreparedData, id_table, write_prepared

log = logging.getLogger(__name__)

PREPARED_FORMAT = 2  # 2: pairs whose two sides are one text are rejected
TEACHER_FILE = "teacher"  # teacher.npy
# The files of a checkpoint that decide its word pieces (what the cache key reads; the weights do not change them).
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "vocab.txt", "sentencepiece.bpe.model", "spiece.model",
                   "special_tokens_map.json", "config.json")


def transformer_pairs(config: TransformerDataConfig) -> TextPairs:
    """The pairs of the data section, in order: the bilingual recipe's bitext and dictionary pairs, then the
    English–English pairs of ``paraphrases`` (rejected ones counted by reason, the held-out ones among them)."""
    pairs = TextPairs([], [], [], {})
    if config.bilingual:
        pairs = bilingual_pairs(BilingualDataConfig(lang=config.lang, sources=config.sources,
                                                    dictionary=config.dictionary, heldout=config.heldout))
    if config.paraphrases:
        pairs = pairs + load_text_pairs(DataConfig(condition="pairs_parquet", path=list(config.paraphrases),
                                                   heldout=config.heldout))
    return pairs


def without_identical_sides(pairs: TextPairs) -> TextPairs:
    """``pairs`` less those whose two sides are one text (case and outer spaces aside), counted as rejected. Such a
    pair teaches nothing a translation or paraphrase pair should: the MUSE dictionary's names and numbers
    ('giffen'|'giffen'), Tatoeba's untranslated lines; a student trained on them learns to copy its input."""
    return pairs.without([a.strip().casefold() == b.strip().casefold() for a, b in zip(pairs.text_a, pairs.text_b)],
                         "same text on both sides")


def checkpoint_digest(checkpoint: Path) -> str:
    """A digest of the files of ``checkpoint`` that decide its word pieces."""
    digest = hashlib.sha256()
    for name in TOKENIZER_FILES:
        if (checkpoint / name).is_file():
            digest.update(name.encode())
            digest.update((checkpoint / name).read_bytes())
    return digest.hexdigest()[:16]


def weights_digest(checkpoint: Path) -> str:
    """A digest of the weight files of ``checkpoint`` (what the student's own start vectors depend on)."""
    digest = hashlib.sha256()
    for path in sorted(checkpoint.glob("*.safetensors")) + sorted(checkpoint.glob("*.bin")):
        digest.update(path.name.encode())
        with path.open("rb") as weights:
            for block in iter(lambda: weights.read(1 << 24), b""):
                digest.update(block)
    return digest.hexdigest()[:16]


def start_vectors(config: TransformerConfig, checkpoint: Path, ids: np.ndarray, lengths: np.ndarray,
                  batch_size: int = 64) -> np.ndarray:
    """The untrained student's vectors of the word pieces ``ids`` (``lengths`` each), as its forward pass makes them
    in training (same prefix, pooling and normalisation), so the English term of a ``teacher: start`` run is zero at
    step 0. Sentences are encoded in order of length, a batch trimmed to its longest."""
    import torch

    from parabit.encoders.transformer import TransformerEncoder
    from parabit.output import counting

    encoder = TransformerEncoder.from_checkpoint(checkpoint, sparse=False, **config.model.encoder_options()).eval()
    vectors = np.zeros((len(lengths), encoder.output_dim), dtype=np.float32)
    order = np.argsort(lengths, kind="stable")
    with torch.inference_mode(), counting("teacher: the student's start, English sides", total=len(order),
                                          unit="sentences") as done:
        for start in range(0, len(order), batch_size):
            rows = order[start:start + batch_size]
            width = int(lengths[rows].max())
            batch = torch.from_numpy(np.ascontiguousarray(ids[rows, :width]))
            vectors[rows] = encoder(batch, torch.from_numpy(lengths[rows])).numpy()
            done.update(len(rows))
    return vectors


def cache_key(config: TransformerConfig, checkpoint: Path) -> str:
    from parabit.teacher.model import teacher_id

    teacher = None
    if config.teacher_objectives:
        teacher = teacher_id() if config.teacher != "start" else {
            "start": weights_digest(checkpoint), **config.model.model_dump(mode="json", exclude={"checkpoint"})}
    settings = {"format": PREPARED_FORMAT, "data": config.data.model_dump(mode="json"),
                "max_length": config.model.max_length, "checkpoint": checkpoint_digest(checkpoint),
                "teacher": teacher}
    prefix = checkpoint_settings(checkpoint)["prefix"] if config.model.prefix is None else config.model.prefix
    if prefix:  # only then: the key of data prepared without one stays what it was
        settings["prefix"] = prefix
    return hashlib.sha256(json.dumps(settings, sort_keys=True).encode()).hexdigest()[:16]


def prepare_transformer(config: TransformerConfig, cache_root: Path | None = None) -> PreparedData:
    """The run's prepared data (see the module docstring), built once and cached."""
    checkpoint = config.model.checkpoint_path()
    directory = (cache_root or output_root() / "prepared") / f"transformer-{cache_key(config, checkpoint)}"
    with one_builder(directory.with_name(f"{directory.name}.lock")):
        if not PreparedData.is_complete(directory):
            _prepare(config, checkpoint, directory)
    return PreparedData.load(directory)


def _prepare(config: TransformerConfig, checkpoint: Path, directory: Path) -> None:
    data = config.data
    pairs = without_identical_sides(transformer_pairs(data))
    empty = [not a.strip() or not b.strip() for a, b in zip(pairs.text_a, pairs.text_b)]
    chosen, rejected = sample_pairs(pairs, empty, "empty side", data.max_pairs, data.seed)
    english = [pairs.text_a[i] for i in chosen]
    other = [pairs.text_b[i] for i in chosen]

    tokenizer = CheckpointTokenizer(checkpoint, config.model.max_length, config.model.prefix)
    ids_a, len_a = tokenizer(english)
    ids_b, len_b = tokenizer(other)
    first_pair: dict[str, int] = {}  # each distinct English sentence's first pair, in order of first appearance
    for index, sentence in enumerate(english):
        first_pair.setdefault(sentence, index)
    distinct = list(first_pair)
    row = {sentence: index for index, sentence in enumerate(distinct)}
    arrays = {}
    if config.teacher_objectives and config.teacher == "start":
        rows = np.fromiter(first_pair.values(), dtype=np.int64, count=len(first_pair))  # their word pieces
        arrays[TEACHER_FILE] = start_vectors(config, checkpoint, ids_a[rows], len_a[rows])
    elif config.teacher_objectives:
        from parabit.teacher.inference import encode_with_ray

        log.info("encoding the %s distinct English sentences of the pairs with the teacher", f"{len(distinct):,}")
        arrays[TEACHER_FILE] = encode_with_ray(distinct, description="teacher: English sides of the pairs")
    kinds = Counter(pairs.langs_b[i] for i in chosen)
    stats = {
        "pairs_read": len(pairs.text_a) + sum(pairs.rejected.values()),
        "pairs_kept": len(chosen),
        "rejected": dict(rejected),
        "pairs_by_language": dict(kinds),
        "english_sentences": len(distinct),
        "lang_a": "en", "lang_b": data.lang if data.bilingual else "en",
        "vocab_size": len(tokenizer.hf),
        "max_tokens": tokenizer.max_length,
        "tokenizer": None,
        "checkpoint_digest": checkpoint_digest(checkpoint),
        "word_pieces": {"mean_a": float(len_a.mean()) if len(chosen) else 0.0,
                        "mean_b": float(len_b.mean()) if len(chosen) else 0.0,
                        "cut_at_max_length": int(((len_a == tokenizer.max_length)
                                                  | (len_b == tokenizer.max_length)).sum())},
        "teacher_vectors": len(distinct) if config.teacher_objectives else 0,
        "format": PREPARED_FORMAT,
    }
    table = id_table(ids_a, len_a, ids_b, len_b,
                     row=pa.array(np.fromiter((row[s] for s in english), dtype=np.int32, count=len(english))))
    write_prepared(directory, {"pairs": table}, None, stats, arrays=arrays)
    log.info("prepared %s pairs (%s rejected) in %s", f"{len(chosen):,}", dict(rejected), directory)


def load_teacher_vectors(prepared: PreparedData) -> np.ndarray | None:
    """The teacher's vectors of the prepared English sentences (``row`` of the pairs), or None without them."""
    path = prepared.directory / f"{TEACHER_FILE}.npy"
    return np.load(path, allow_pickle=False) if path.is_file() else None
