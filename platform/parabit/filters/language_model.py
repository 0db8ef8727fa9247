"""Language-model score: how fluent a back-translation is, under a trigram model of reference English.

nltk.lm scores far too slowly for a pipeline (PLATFORM_NOTES: minutes for thousands of trigrams), so this is a small
count-based model whose n-gram counts are sorted integer keys: fitting is ``np.unique`` and scoring a whole batch is
one ``np.searchsorted`` per order.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from parabit.filters.base import Filter, PairBatch, within

BOS, EOS, UNK = "<s>", "</s>", "<unk>"


class _Counts:
    """Counts of integer n-gram keys, looked up in bulk."""

    def __init__(self, keys: np.ndarray):
        self.keys, self.counts = np.unique(keys, return_counts=True)

    def __getitem__(self, query: np.ndarray) -> np.ndarray:
        position = np.clip(np.searchsorted(self.keys, query), 0, max(len(self.keys) - 1, 0))
        found = self.keys[position] == query if len(self.keys) else np.zeros(len(query), dtype=bool)
        return np.where(found, self.counts[position] if len(self.keys) else 0, 0)


class TrigramLanguageModel:
    """Interpolated trigram model (Jelinek–Mercer) with an add-one unigram floor, so no probability is zero.

    p(w | u, v) = l3 * c(uvw)/c(uv) + l2 * c(vw)/c(v) + l1 * (c(w) + 1)/(N + V), where a ratio with a zero
    denominator counts as 0. Sentences are padded ``<s> <s> ... </s>``; unseen words become ``<unk>``.
    """

    def __init__(self, lambdas: tuple[float, float, float] = (0.6, 0.3, 0.1)):
        if len(lambdas) != 3 or abs(sum(lambdas) - 1.0) > 1e-9 or min(lambdas) < 0:
            raise ValueError(f"lambdas must be three non-negative weights summing to 1, got {lambdas}")
        self.lambdas = lambdas
        self.vocabulary: dict[str, int] = {}

    def fit(self, sentences: Sequence[Sequence[str]]) -> "TrigramLanguageModel":
        words = sorted({token for sentence in sentences for token in sentence})
        self.vocabulary = {token: index for index, token in enumerate([UNK, BOS, EOS, *words])}
        u, v, w, _ = self._windows(sentences)
        size = len(self.vocabulary)
        self._trigrams, self._contexts = _Counts((u * size + v) * size + w), _Counts(u * size + v)
        self._bigrams, self._middles = _Counts(v * size + w), _Counts(v)
        self._unigrams, self._total = _Counts(w), len(w)
        return self

    def mean_log_prob(self, sentences: Sequence[Sequence[str]]) -> np.ndarray:
        """Mean natural-log probability per predicted token (the words and ``</s>``), one value per sentence."""
        if not self.vocabulary:
            raise RuntimeError("TrigramLanguageModel.fit must be called before scoring")
        u, v, w, sentence = self._windows(sentences)
        size = len(self.vocabulary)
        l3, l2, l1 = self.lambdas
        prob = (l3 * _ratio(self._trigrams[(u * size + v) * size + w], self._contexts[u * size + v])
                + l2 * _ratio(self._bigrams[v * size + w], self._middles[v])
                + l1 * (self._unigrams[w] + 1) / (self._total + size))
        totals = np.bincount(sentence, weights=np.log(prob), minlength=len(sentences))
        return totals / np.bincount(sentence, minlength=len(sentences))

    def _windows(self, sentences: Sequence[Sequence[str]]) -> tuple[np.ndarray, ...]:
        """Token ids of every trigram window (u, v, w) and the index of the sentence it belongs to."""
        lookup = self.vocabulary
        padded = [[BOS, BOS, *sentence, EOS] for sentence in sentences]
        ids = np.fromiter((lookup.get(token, 0) for sentence in padded for token in sentence), dtype=np.int64)
        lengths = np.fromiter(map(len, padded), dtype=np.int64, count=len(padded))
        owner = np.repeat(np.arange(len(padded)), lengths)
        # A window is valid when its first and last tokens belong to the same padded sentence.
        start = np.flatnonzero(owner[:-2] == owner[2:]) if len(ids) > 2 else np.zeros(0, dtype=np.int64)
        return ids[start], ids[start + 1], ids[start + 2], owner[start]


def _ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    return np.divide(numerator, denominator, out=np.zeros(len(numerator)), where=denominator > 0)


class LanguageModelFilter(Filter):
    """Scores the back-translation's mean log-probability per token under a trigram model fitted on held-out
    reference English (:meth:`fit`); accepts scores of at least ``minimum``."""

    name = "lm"
    needs_fit = True

    def __init__(self, lambdas: tuple[float, float, float] = (0.6, 0.3, 0.1)):
        self.model = TrigramLanguageModel(tuple(lambdas))

    def fit(self, references: Sequence[str], translations: Sequence[str]) -> "LanguageModelFilter":
        self.model.fit(PairBatch({"reference": references, "translation": translations}).reference_tokens)
        return self

    def score(self, batch) -> np.ndarray:
        return self.model.mean_log_prob(PairBatch.of(batch).translation_tokens)

    def accept(self, scores, *, minimum: float | None = None) -> np.ndarray:
        return within(scores, minimum, None)
