"""A BilDRL target space good enough for the method to be tested: English GloVe rows kept as they are, foreign rows
learned from the bitext and aligned to them with the MUSE training dictionary.

The J_bi space (``jobs/configs/bildrl/embeddings_*.yaml``) trains Spanish/French rows from random starts on ~190k
short sentence pairs, and held-out retrieval onto it stayed near chance (runs of 2026-11-21). Here instead:

1. **English rows** are GloVe 6B 50d, unchanged, for every English word of the bitext that GloVe knows.
2. **Foreign rows** come from the bitext: IBM Model 1 (EM over every sentence pair, a NULL word on the foreign
   side) estimates t(e | f), and a foreign word's row is the t-weighted mean of the GloVe vectors of its
   ``top_translations`` most likely English words. A word is where its translations are.
3. **Alignment**: an orthogonal map (Procrustes) fitted on the MUSE dictionary's pairs, with every BLI test word
   (MUSE 5000-6500 source words, Wiktionary test words) and every word of BilDRL's held-out pool
   (:mod:`parabit.recipes.bildrl.heldout`) removed first, is applied to the foreign rows; the pairs are kept beside
   the space (``alignment_pairs.tsv``).

BLI (:mod:`parabit.evaluation.bli`) is measured before and after the map, on the test splits only. The space is
saved as a parabit embedder folder, so :class:`~parabit.recipes.bildrl.space.BilingualSpace` loads it like any other.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Literal

import numpy as np
import torch
from pydantic import PositiveInt

from parabit.config import Config
from parabit.data.bitext import read_europarl, read_tatoeba
from parabit.data.dictionaries import read_muse
from parabit.data.errors import Quarantine
from parabit.evaluation.bli import bli_scores, standard_bli_sets
from parabit.recipes.bildrl.heldout import in_pool
from parabit.recipes.bildrl.space import BilingualSpace
from parabit.embedder import SentenceEmbedder
from parabit.encoders import build_encoder
from parabit.runlock import one_builder
from parabit.text.glove import load_glove
from parabit.text.tokenize import Tokenizer
from parabit.text.vocab import UNK_WORD, Vocabulary

NULL = 0  # the foreign NULL word of IBM Model 1 (row 0 of the foreign ids)
REPORT = "space.json"
ALIGNMENT = "alignment_pairs.tsv"  # the (foreign, English) pairs the map was fitted on


class AlignedSpaceConfig(Config):
    """``lang``: the foreign language; ``sources``: the bitext (Tatoeba, the Europarl sample); ``min_count``: a word's
    occurrences to get a row; ``iterations`` of EM; ``top_translations`` English words averaged per foreign word;
    ``max_tokens`` per sentence in EM; ``procrustes``: apply the dictionary-fitted orthogonal map."""

    lang: Literal["es", "fr"] = "es"
    """The foreign language of the space (its English rows are GloVe's); the reproduction sets it per space."""
    sources: tuple[Literal["tatoeba", "europarl"], ...] = ("tatoeba", "europarl")
    """The bitext the foreign rows are learned from: Tatoeba and the Europarl v7 training excerpt (Tatoeba read first,
    whatever the order given)."""
    min_count: PositiveInt = 2
    """Occurrences in the bitext a word needs to get a row (an English word must also be one of GloVe's)."""
    iterations: PositiveInt = 5
    """EM iterations of IBM Model 1, which estimates t(English word | foreign word)."""
    top_translations: PositiveInt = 10
    """A foreign row is the t-weighted mean of the GloVe vectors of this many of its likeliest English translations."""
    max_tokens: PositiveInt = 40
    """Tokens kept of each sentence, on both sides, for the word counts and EM; the rest is cut."""
    max_pairs: PositiveInt | None = None
    """Only the first this many sentence pairs (Tatoeba's, then Europarl's); null: every pair."""
    procrustes: bool = True
    """Apply to the foreign rows the orthogonal map fitted on MUSE pairs (BLI test words and BilDRL's held-out pool
    removed first); false: the projected rows as they are."""


def bitext(config: AlignedSpaceConfig, tokenizer: Tokenizer) -> tuple[list[list[str]], list[list[str]]]:
    quarantine = Quarantine()
    pairs = []
    # The first max_pairs pairs of Tatoeba then Europarl, each file read only as far as they need.
    if "tatoeba" in config.sources:
        pairs += read_tatoeba(lang=config.lang, quarantine=quarantine, limit=config.max_pairs)
    still_wanted = None if config.max_pairs is None else config.max_pairs - len(pairs)
    if "europarl" in config.sources and still_wanted != 0:
        pairs += read_europarl(config.lang, "train", quarantine=quarantine, limit=still_wanted)
    english = [t[:config.max_tokens] for t in tokenizer.tokenize_all([p.en for p in pairs])]
    foreign = [t[:config.max_tokens] for t in tokenizer.tokenize_all([p.foreign for p in pairs])]
    return english, foreign


def ibm1(english: list[np.ndarray], foreign: list[np.ndarray], n_english: int, n_foreign: int,
         iterations: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """IBM Model 1 t(e | f) by EM, vectorised over every (English token, foreign token) link of every pair.
    ``foreign`` ids start at 1 (0 is NULL, added to every sentence). Returns the sparse table as (f, e, t)."""
    link_f, link_e, link_group = [], [], []
    group = 0
    for e_ids, f_ids in zip(english, foreign):
        if e_ids.size == 0:
            continue
        sources = np.concatenate([[NULL], f_ids])
        link_f.append(np.tile(sources, e_ids.size))
        link_e.append(np.repeat(e_ids, sources.size))
        link_group.append(np.repeat(np.arange(group, group + e_ids.size), sources.size))
        group += e_ids.size
    f = np.concatenate(link_f).astype(np.int64)
    e = np.concatenate(link_e).astype(np.int64)
    groups = np.concatenate(link_group)
    slots, slot_of_link = np.unique(f * n_english + e, return_inverse=True)
    slot_f, slot_e = slots // n_english, slots % n_english
    t = np.ones(slots.size)
    for _ in range(iterations):
        weight = t[slot_of_link]
        posterior = weight / np.bincount(groups, weights=weight, minlength=group)[groups]
        counts = np.bincount(slot_of_link, weights=posterior, minlength=slots.size)
        t = counts / np.bincount(slot_f, weights=counts, minlength=n_foreign)[slot_f]
    return slot_f, slot_e, t


def project(slot_f: np.ndarray, slot_e: np.ndarray, t: np.ndarray, english_vectors: np.ndarray, n_foreign: int,
            top: int) -> np.ndarray:
    """Each foreign word's row: the t-weighted mean of its ``top`` likeliest English words' vectors."""
    order = np.lexsort((-t, slot_f))
    slot_f, slot_e, t = slot_f[order], slot_e[order], t[order]
    starts = np.searchsorted(slot_f, np.arange(n_foreign))
    rank = np.arange(slot_f.size) - starts[slot_f]
    keep = rank < top
    rows = np.zeros((n_foreign, english_vectors.shape[1]))
    np.add.at(rows, slot_f[keep], t[keep, None] * english_vectors[slot_e[keep]])
    mass = np.bincount(slot_f[keep], weights=t[keep], minlength=n_foreign)
    return rows / np.maximum(mass, 1e-12)[:, None]


def test_words(lang: str) -> tuple[set[str], set[str]]:
    """(English, foreign) words of every BLI test set of ``lang``'s space: the alignment never sees them."""
    english, foreign = set(), set()
    for pairs, src, _ in standard_bli_sets(lang).values():
        for a, b in pairs:
            (english if src == "en" else foreign).add(a)
            (foreign if src == "en" else english).add(b)
    return english, foreign


def alignment_pairs(lang: str, space: BilingualSpace) -> list[tuple[str, str]]:
    """MUSE ``lang``-en pairs (both words in the space; no BLI test word and no word of BilDRL's held-out pool on
    either side): the map's training data."""
    held_english, held_foreign = test_words(lang)
    english, foreign = set(space.words("en")), set(space.words(lang))
    return [(e.source_word, e.target_word) for e in read_muse(lang, "en")
            if e.source_word in foreign and e.target_word in english
            and e.source_word not in held_foreign and e.target_word not in held_english
            and not in_pool(e.source_word, lang) and not in_pool(e.target_word, "en")]


def procrustes(source: np.ndarray, target: np.ndarray) -> np.ndarray:
    """The orthogonal ``W`` minimising ‖source·W − target‖ (Schönemann)."""
    u, _, vt = np.linalg.svd(source.T @ target)
    return u @ vt


def build_aligned_space(config: AlignedSpaceConfig, directory: Path) -> BilingualSpace:
    """Build (or reuse) the space in ``directory`` (an embedder folder plus ``space.json``: sizes and BLI)."""
    with one_builder(directory.with_name(f"{directory.name}.lock")):
        if not (directory / REPORT).is_file():
            _build(config, directory)
    return BilingualSpace.load(directory)


def _build(config: AlignedSpaceConfig, directory: Path) -> None:
    tokenizer = Tokenizer()
    english, foreign = bitext(config, tokenizer)
    glove_words, glove_vectors = load_glove()
    glove = {w: i for i, w in enumerate(glove_words)}
    english_counts = Counter(w for s in english for w in s if w in glove)
    foreign_counts = Counter(w for s in foreign for w in s)
    vocab = Vocabulary.build({"en": english_counts, config.lang: foreign_counts}, min_count=config.min_count)
    en_words = dict(vocab.words("en"))  # id -> word
    fo_ids = {w: i for i, w in vocab.words(config.lang) if w != UNK_WORD}
    en_ids = {w: i for i, w in en_words.items() if w != UNK_WORD}
    en_index = {w: k for k, w in enumerate(en_ids)}  # dense English ids for EM
    fo_index = {w: k + 1 for k, w in enumerate(fo_ids)}  # 0 = NULL
    to_ids = lambda tokens, index: np.asarray([index[w] for w in tokens if w in index], dtype=np.int64)  # noqa: E731
    slot_f, slot_e, t = ibm1([to_ids(s, en_index) for s in english], [to_ids(s, fo_index) for s in foreign],
                             len(en_index), len(fo_index) + 1, config.iterations)
    english_vectors = glove_vectors[[glove[w] for w in en_index]].astype(np.float64)
    foreign_rows = project(slot_f, slot_e, t, english_vectors, len(fo_index) + 1, config.top_translations)[1:]

    vectors = np.zeros((len(vocab), english_vectors.shape[1]), dtype=np.float32)
    vectors[[en_ids[w] for w in en_index]] = english_vectors
    vectors[[fo_ids[w] for w in fo_index]] = foreign_rows
    space = BilingualSpace(vocab, vectors, tokenizer)
    report = {"config": config.model_dump(mode="json"), "english_words": len(en_ids), "foreign_words": len(fo_ids),
              "sentence_pairs": len(english), "bli": {"projected": _bli(space, config.lang)}}
    if config.procrustes:
        pairs = alignment_pairs(config.lang, space)
        source = space.vectors[space.ids([f for f, _ in pairs], config.lang)]
        target = space.vectors[space.ids([e for _, e in pairs], "en")]
        mapping = procrustes(source, target)
        (directory / ALIGNMENT).parent.mkdir(parents=True, exist_ok=True)
        (directory / ALIGNMENT).write_text("".join(f"{f}\t{e}\n" for f, e in pairs))
        ids = [fo_ids[w] for w in fo_index]
        space.vectors[ids] = space.vectors[ids] @ mapping
        report.update(alignment_pairs=len(pairs), bli={**report["bli"], "aligned": _bli(space, config.lang)})
    save_space(space, directory)
    (directory / REPORT).write_text(json.dumps(report, indent=1))


def _bli(space: BilingualSpace, lang: str) -> dict[str, dict[str, float]]:
    return {name: bli_scores(space, pairs, src, tgt) for name, (pairs, src, tgt) in standard_bli_sets(lang).items()}


def save_space(space: BilingualSpace, directory: Path) -> None:
    """As an embedder folder (an averaging encoder over the table), what :meth:`BilingualSpace.load` reads."""
    spec = {"encoder": "avg", "vocab_size": len(space.vocab), "dim": space.dim, "options": {}}
    encoder = build_encoder("avg", len(space.vocab), space.dim)
    with torch.no_grad():
        encoder.embedding.weight.copy_(torch.from_numpy(space.vectors))
    SentenceEmbedder(encoder, spec, space.vocab, space.tokenizer, "en").save(directory)


def space_report(directory: Path) -> dict:
    return json.loads((directory / REPORT).read_text())


__all__ = ["AlignedSpaceConfig", "build_aligned_space", "ibm1", "procrustes", "project", "space_report"]
