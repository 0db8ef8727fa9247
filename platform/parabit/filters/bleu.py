"""Smoothed sentence BLEU of the back-translation against its reference (nltk, smoothing method 1)."""

from __future__ import annotations

import numpy as np

from parabit.filters.base import Filter, PairBatch, within


class BleuFilter(Filter):
    """Scores sentence BLEU (0–1) with Chen & Cherry's method 1 smoothing; accepts within ``[minimum, maximum]``.

    A high maximum removes near-copies, a low minimum removes unrelated translations.
    """

    name = "bleu"

    def score(self, batch) -> np.ndarray:
        # Imported here: the filter registry is imported by every training driver and worker, and nltk's package
        # import (most of nltk, and scipy.stats) costs each ~1.5 s; only scoring needs it.
        from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

        pairs = PairBatch.of(batch)
        smoothing = SmoothingFunction().method1
        return np.array([
            sentence_bleu([reference], translation, smoothing_function=smoothing) if translation else 0.0
            for reference, translation in zip(pairs.reference_tokens, pairs.translation_tokens)
        ])

    def accept(self, scores, *, minimum: float | None = None, maximum: float | None = None) -> np.ndarray:
        return within(scores, minimum, maximum)
