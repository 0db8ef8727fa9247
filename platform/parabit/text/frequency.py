"""Word probabilities and the SIF weights built on them (Arora, Liang & Ma 2017: weight(w) = a / (a + p(w))).

English p(w) comes from GloVe's frequency rank under Zipf's law: the GloVe 6B vocabulary is sorted by corpus
frequency, so the word of rank r gets p = 1 / (r · H_N) (H_N the N-th harmonic number); this estimate comes from
GloVe's own 6B-token corpus, not from any evaluation set. Words GloVe lacks (and every word of other languages) get
their relative frequency in the training text instead.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from functools import lru_cache

import numpy as np

from parabit.text.glove import load_glove
from parabit.text.vocab import PAD_ID, UNK_WORD, Vocabulary

DEFAULT_A = 1e-3


@lru_cache(maxsize=1)
def glove_rank_probabilities() -> dict[str, float]:
    """``word -> p(word)`` for GloVe 6B's 400k words, from their frequency rank (Zipf)."""
    words, _ = load_glove()
    ranks = np.arange(1, len(words) + 1, dtype=np.float64)
    probabilities = 1.0 / (ranks * np.sum(1.0 / ranks))
    return dict(zip(words, probabilities.tolist()))


def word_probabilities(vocab: Vocabulary, counts: Mapping[str, Mapping[str, int]] | None = None) -> np.ndarray:
    """``p[id]`` for every vocabulary entry: GloVe's rank estimate for English words it knows, else the word's
    relative frequency in ``counts`` (``{lang: {word: count}}``, the training text); 0 for padding and unseen words."""
    glove = glove_rank_probabilities()
    totals = {lang: sum(c.values()) for lang, c in (counts or {}).items()}
    probabilities = np.zeros(len(vocab), dtype=np.float64)
    for lang in vocab.languages:
        language_counts = (counts or {}).get(lang, {})
        for index, word in vocab.words(lang):
            if word == UNK_WORD:
                continue
            if lang == "en" and word in glove:
                probabilities[index] = glove[word]
            elif totals.get(lang):
                probabilities[index] = language_counts.get(word, 0) / totals[lang]
    probabilities[PAD_ID] = 0.0
    return probabilities


def sif_weights(vocab: Vocabulary, a: float = DEFAULT_A,
                counts: Mapping[str, Mapping[str, int]] | None = None) -> np.ndarray:
    """SIF weights ``a / (a + p(w))`` per vocabulary id (float32): frequent words count less, rare ones ~1."""
    if not a > 0:
        raise ValueError(f"the SIF parameter a must be positive, got {a}")
    weights = a / (a + word_probabilities(vocab, counts))
    weights[PAD_ID] = 0.0
    return weights.astype(np.float32)


def count_words(sentences: list[list[str]]) -> Counter:
    """Token counts of tokenised sentences."""
    counts: Counter = Counter()
    for tokens in sentences:
        counts.update(tokens)
    return counts
