"""The bilingual recipe's prepared data: Spanish sentences as token ids, each with the base model's vector of its
English translation, and the word table the model starts from.

``prepare_bilingual(config)`` writes, under ``outputs/prepared/<hash>/`` (the hash covers the data and model settings
and the base model's weights, so another base never hits the cache):

* ``pairs.parquet``: ``ids_a``/``len_a``, the Spanish side's ids in the joint vocabulary, and ``row``, the pair's
  row of ``targets.npy``, the base model's vector of the English side (exactly what the base model's ``encode``
  returns for it: its weights, common components, tokenizer and length cut);
* ``table.npy`` (the initial word table: the base model's English rows unchanged, then the Spanish rows where
  ``model.foreign_init`` puts them), ``weights.npy`` (SIF weights: the base model's for English words, from the
  training text for Spanish ones), ``components.npy`` (the base model's common components, kept fixed) and
  ``language_scores.npy`` (each word's log-probability in its language's side of the training text, smoothed: what
  the exported model detects a sentence's language by);
* ``vocab.json`` (the base model's English words, in its order, then the Spanish words), ``spec.json`` (the
  encoder) and ``stats.json`` (counts, rejected pairs by reason, what the Spanish start placed).
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
import torch

from parabit.data.heldout import heldout_sets
from parabit.embedder import SentenceEmbedder
from parabit.paths import output_root
from parabit.recipes.bildrl.aligned_space import ibm1, project
from parabit.recipes.bilingual.config import BilingualConfig, BilingualDataConfig, BilingualModelConfig
from parabit.recipes.pairs.config import DataConfig
from parabit.recipes.pairs.data import TextPairs, load_text_pairs, without_heldout
from parabit.recipes.pairs.model import muse_translations
from parabit.recipes.siamese.model import load_space_embedder
from parabit.runlock import one_builder
from parabit.text.frequency import glove_rank_probabilities
from parabit.text.glove import rows_by_translation
from parabit.text.vocab import PAD_ID, UNK_WORD, Vocabulary, pad_batch
from parabit.training import PreparedData, fixed_size_ids, write_prepared

log = logging.getLogger(__name__)

PREPARED_FORMAT = 1
SPEC_FILE = "spec.json"
TRAINING_MAX_TOKENS = 100  # the tokens of a Spanish sentence training reads when the base model keeps them all
SMOOTHING = 0.5  # added to every word's count (and the unknown word's zero) before the language scores' logarithm


@dataclass(frozen=True)
class BaseModel:
    """The English model a bilingual run builds on, and a digest of its weights and vocabulary (the cache key's)."""

    embedder: SentenceEmbedder
    digest: str

    @classmethod
    def load(cls, source: str) -> "BaseModel":
        embedder = load_space_embedder(source)
        if embedder.spec.get("encoder") != "avg" or "en" not in embedder.vocab.languages:
            raise ValueError(f"model.base {source!r}: the bilingual recipe extends an English averaging model "
                             f"(encoder 'avg' with en: words); this one is {embedder.spec.get('encoder')!r} over "
                             f"{list(embedder.vocab.languages)}")
        digest = hashlib.sha256()
        for name, tensor in sorted(embedder.encoder.state_dict().items()):
            digest.update(name.encode())
            digest.update(tensor.detach().cpu().numpy().tobytes())
        digest.update("\n".join(embedder.vocab.key(i) for i in range(len(embedder.vocab))).encode())
        return cls(embedder, digest.hexdigest()[:16])


def bilingual_pairs(config: BilingualDataConfig) -> TextPairs:
    """The English–``lang`` pairs of the data section, in order: the bitext's, then the dictionary's one-word pairs
    (rejected ones counted by reason, the held-out ones among them under ``heldout: exclude``)."""
    pairs = TextPairs([], [], [], {})
    if config.sources:
        pairs = load_text_pairs(DataConfig(condition="bilingual_sentences", lang=config.lang, sources=config.sources,
                                           heldout=config.heldout))
    if config.dictionary:
        entries = [(english, foreign) for foreign, translations in muse_translations(config.lang).items()
                   for english in translations]
        words = TextPairs([e for e, _ in entries], [f for _, f in entries], [config.lang] * len(entries), {})
        pairs = pairs + without_heldout(words, heldout_sets(config.heldout))
    return pairs


def sample_pairs(pairs: TextPairs, empty: list[bool], empty_reason: str, max_pairs: int | None,
                 seed: int) -> tuple[list[int], Counter]:
    """The indices (in order) of the pairs kept: each distinct pair once, none that is ``empty`` (rejected as
    ``empty_reason``), and of those a seeded sample of ``max_pairs`` (null: all); with the rejected pairs by reason,
    the pairs' own rejections included."""
    rejected = Counter(pairs.rejected)
    seen: set[tuple[str, str]] = set()
    keep = []
    for index, pair in enumerate(zip(pairs.text_a, pairs.text_b)):
        if empty[index]:
            rejected[empty_reason] += 1
        elif pair in seen:
            rejected["duplicate pair"] += 1
        else:
            seen.add(pair)
            keep.append(index)
    order = np.random.default_rng(seed).permutation(len(keep))
    if max_pairs is not None and max_pairs < len(keep):
        rejected["beyond max_pairs sample"] += len(keep) - max_pairs
        order = order[:max_pairs]
    return [keep[i] for i in sorted(order)], rejected


def cache_key(config: BilingualConfig, base: BaseModel) -> str:
    settings = {"format": PREPARED_FORMAT, "data": config.data.model_dump(mode="json"),
                "model": config.model.model_dump(mode="json", exclude={"base"}), "base": base.digest}
    return hashlib.sha256(json.dumps(settings, sort_keys=True).encode()).hexdigest()[:16]


def prepare_bilingual(config: BilingualConfig, base: BaseModel, cache_root: Path | None = None) -> PreparedData:
    """The run's prepared data (see the module docstring), built once and cached."""
    directory = (cache_root or output_root() / "prepared") / f"bilingual-{cache_key(config, base)}"
    with one_builder(directory.with_name(f"{directory.name}.lock")):
        if not PreparedData.is_complete(directory):
            _prepare(config, base.embedder, directory, base.digest)
    return PreparedData.load(directory)


def _prepare(config: BilingualConfig, base: SentenceEmbedder, directory: Path, base_digest: str) -> None:
    data, lang = config.data, config.data.lang
    pairs = bilingual_pairs(data)
    tokens_en = base.tokenizer.tokenize_all(pairs.text_a)
    tokens_foreign = base.tokenizer.tokenize_all(pairs.text_b)
    empty = [not tokens_en[i] or not tokens_foreign[i] for i in range(len(pairs.text_a))]
    chosen, rejected = sample_pairs(pairs, empty, "no tokens on one side", data.max_pairs, data.seed)

    counts = {"en": Counter(), lang: Counter()}
    for index in chosen:
        counts["en"].update(tokens_en[index])
        counts[lang].update(tokens_foreign[index])
    english_keys = [f"en:{word}" for _, word in base.vocab.words("en")]
    foreign_keys = [f"{lang}:{word}" for word, count in sorted(counts[lang].items(), key=lambda kv: (-kv[1], kv[0]))
                    if count >= data.min_count]
    vocab = Vocabulary(english_keys + [f"{lang}:{UNK_WORD}"] + foreign_keys)
    # Training reads at most the base model's length cut (it has none: TRAINING_MAX_TOKENS); the exported model
    # reads as the base model does.
    width = base.max_tokens or TRAINING_MAX_TOKENS
    ids, lengths = pad_batch([vocab.encode(tokens_foreign[i], lang) for i in chosen], width)
    ids = np.pad(ids, ((0, 0), (0, width - ids.shape[1])))
    targets = base.encode([pairs.text_a[i] for i in chosen], lang="en").astype(np.float32)

    table, placed = initial_table(config.model, base, vocab, lang, [tokens_en[i] for i in chosen],
                                  [tokens_foreign[i] for i in chosen], data.seed)
    spec = {**base.spec, "vocab_size": len(vocab),
            "options": {**base.spec.get("options", {}), "learn_weights": False}}
    arrays = {"targets": targets, "table": table, "weights": word_weights(base, vocab, lang, counts[lang],
                                                                        config.model.sif_a),
              "components": base.encoder.components.detach().cpu().numpy().astype(np.float32),
              "language_scores": language_scores(vocab, counts)}
    stats = {
        "pairs_read": len(pairs.text_a) + sum(pairs.rejected.values()),
        "pairs_kept": len(chosen),
        "rejected": dict(rejected),
        "lang_a": lang, "lang_b": "en",
        "vocab_size": len(vocab),
        "english_words": len(english_keys),
        "foreign_words": len(foreign_keys),
        "foreign_rows_placed": placed,
        "mean_tokens_a": float(np.mean(lengths)) if len(chosen) else 0.0,
        "tokenizer": base.tokenizer.to_dict(),
        "max_tokens": base.max_tokens,
        "base_digest": base_digest,
        "config": {"data": data.model_dump(mode="json"), "model": config.model.model_dump(mode="json")},
    }
    tables = {"pairs": pa.table({"ids_a": fixed_size_ids(ids), "len_a": pa.array(lengths.astype(np.int32)),
                                 "row": pa.array(np.arange(len(chosen), dtype=np.int64))})}
    write_prepared(directory, tables, vocab, stats, arrays=arrays, documents={SPEC_FILE: spec})
    log.info("prepared %d %s-en pairs (%s), %d %s words (%d placed) in %s", len(chosen), lang, dict(rejected),
             len(foreign_keys), lang, placed, directory)


def english_rows(base: SentenceEmbedder, vocab: Vocabulary) -> tuple[np.ndarray, np.ndarray]:
    """(ids in ``vocab``, ids in the base model) of every English word, the base model's order."""
    words = base.vocab.words("en")
    return (np.asarray([vocab.id(word, "en") for _, word in words], dtype=np.int64),
            np.asarray([index for index, _ in words], dtype=np.int64))


def initial_table(config: BilingualModelConfig, base: SentenceEmbedder, vocab: Vocabulary, lang: str,
                  english: list[list[str]], foreign: list[list[str]], seed: int) -> tuple[np.ndarray, int]:
    """The word table a run starts from (the base model's English rows; Spanish rows by ``foreign_init``, the rest
    N(0, ``init_std``²) drawn with ``seed``) and how many Spanish rows were placed."""
    source = base.encoder.embedding.weight.detach().cpu().numpy().astype(np.float32)
    table = np.random.default_rng(seed).normal(0.0, config.init_std, (len(vocab), source.shape[1])).astype(np.float32)
    table[PAD_ID] = 0.0
    ours, theirs = english_rows(base, vocab)
    table[ours] = source[theirs]
    foreign_ids = {word: index for index, word in vocab.words(lang) if word != UNK_WORD}
    if config.foreign_init == "muse":
        position = {word: index for index, word in vocab.words("en")}
        placed = rows_by_translation(table, vocab, lang, muse_translations(lang), position, table)
    elif config.foreign_init == "base":
        known = [(index, base.vocab.id(word, lang)) for word, index in foreign_ids.items()
                 if f"{lang}:{word}" in base.vocab]
        for index, row in known:
            table[index] = source[row]
        placed = len(known)
    else:
        placed = _aligned_rows(config, vocab, lang, english, foreign, table, foreign_ids)
    return table, placed


def _aligned_rows(config: BilingualModelConfig, vocab: Vocabulary, lang: str, english: list[list[str]],
                  foreign: list[list[str]], table: np.ndarray, foreign_ids: dict[str, int]) -> int:
    """IBM Model 1 over the training pairs, each Spanish word projected onto the base model's English rows (those
    already in ``table``); returns how many Spanish rows it set."""
    english_ids = {word: index for index, word in vocab.words("en") if word != UNK_WORD}
    dense_en = {word: k for k, word in enumerate(english_ids)}
    dense_foreign = {word: k + 1 for k, word in enumerate(foreign_ids)}  # 0: IBM Model 1's NULL word
    to_ids = lambda tokens, index: np.asarray([index[w] for w in tokens if w in index], dtype=np.int64)  # noqa: E731
    slot_f, slot_e, t = ibm1([to_ids(s, dense_en) for s in english], [to_ids(s, dense_foreign) for s in foreign],
                             len(dense_en), len(dense_foreign) + 1, config.aligned_iterations)
    english_vectors = table[np.fromiter(english_ids.values(), dtype=np.int64, count=len(english_ids))]
    rows = project(slot_f, slot_e, t, english_vectors.astype(np.float64), len(dense_foreign) + 1,
                   config.aligned_translations)
    linked = np.zeros(len(dense_foreign) + 1, dtype=bool)
    linked[slot_f] = True
    targets = np.fromiter(foreign_ids.values(), dtype=np.int64, count=len(foreign_ids))
    found = linked[1:]
    table[targets[found]] = rows[1:][found].astype(np.float32)
    return int(found.sum())


def word_weights(base: SentenceEmbedder, vocab: Vocabulary, lang: str, counts: Counter, a: float) -> np.ndarray:
    """Per id of ``vocab``: the base model's weight for English words, SIF's ``a / (a + p(w))`` for ``lang`` words
    (``p`` their relative frequency in ``counts``; an unseen word weighs 1)."""
    weights = np.ones(len(vocab), dtype=np.float32)
    weights[PAD_ID] = 0.0
    base_weights = getattr(base.encoder, "word_weights", None)
    if isinstance(base_weights, torch.nn.Embedding):  # weights the base model learned: their values now
        base_weights = base_weights.weight[:, 0]
    if base_weights is not None:
        ours, theirs = english_rows(base, vocab)
        weights[ours] = base_weights.detach().cpu().numpy()[theirs]
    total = sum(counts.values()) or 1
    for index, word in vocab.words(lang):
        weights[index] = a / (a + counts.get(word, 0) / total)
    return weights


def language_scores(vocab: Vocabulary, counts: dict[str, Counter]) -> np.ndarray:
    """Per id: the log-probability of the word in its language, ``p`` its relative frequency in that language's side
    of the training text, for English words at least GloVe's estimate from its frequency rank (the English model's
    vocabulary holds words the bitext never had; :func:`parabit.text.frequency.glove_rank_probabilities`); a word
    with neither, and the unknown word, as if seen :data:`SMOOTHING` times."""
    glove = glove_rank_probabilities()
    scores = np.zeros(len(vocab), dtype=np.float32)
    for lang in vocab.languages:
        language_counts = counts.get(lang, Counter())
        total = max(sum(language_counts.values()), 1)
        for index, word in vocab.words(lang):
            p = max(language_counts.get(word, 0) / total, glove.get(word, 0.0) if lang == "en" else 0.0)
            scores[index] = np.log(max(p, SMOOTHING / total))
    return scores


def load_arrays(prepared: PreparedData, *names: str, mmap: bool = False) -> list[np.ndarray]:
    """The named ``.npy`` arrays of a prepared folder (``mmap``: mapped, not read, for the large ones)."""
    return [np.load(prepared.directory / f"{name}.npy", mmap_mode="r" if mmap else None, allow_pickle=False)
            for name in names]


def load_spec(prepared: PreparedData) -> dict:
    return json.loads((prepared.directory / SPEC_FILE).read_text())
