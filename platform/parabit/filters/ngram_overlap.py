"""N-gram overlap (Wieting et al. 2017): how much of the shorter sentence the other one repeats.

overlap_n = |ngrams_n(reference) ∩ ngrams_n(translation)| / |ngrams_n(shorter side)|, with multiset (clipped)
counts, over lower-cased tokens. 1.0 means the back-translation copies the shorter side's n-grams entirely (little
paraphrase); 0.0 means none are shared (possibly a wrong translation). A side shorter than n has no n-grams and
scores NaN, which fails any bound that is set.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from parabit.filters.base import Filter, PairBatch, within


class NgramOverlapFilter(Filter):
    """Scores overlap of order ``order`` (1–3 in Wieting et al.); accepts within ``[minimum, maximum]``."""

    name = "ngram_overlap"

    def __init__(self, order: int = 1):
        if order < 1:
            raise ValueError(f"ngram_overlap order must be >= 1, got {order}")
        self.order = order

    @property
    def columns(self) -> tuple[str, ...]:
        return (f"ngram_overlap_{self.order}",)

    def score(self, batch) -> np.ndarray:
        from nltk.util import ngrams  # once a batch, as in filters/bleu.py: nltk's package import is slow

        def overlap(reference: list[str], translation: list[str]) -> float:
            a, b = Counter(ngrams(reference, self.order)), Counter(ngrams(translation, self.order))
            shorter = min(a.total(), b.total())
            return (a & b).total() / shorter if shorter else np.nan

        pairs = PairBatch.of(batch)
        return np.array([overlap(a, b) for a, b in zip(pairs.reference_tokens, pairs.translation_tokens)])

    def accept(self, scores, *, minimum: float | None = None, maximum: float | None = None) -> np.ndarray:
        return within(scores, minimum, maximum)
