"""Length ratio: a back-translation much longer or shorter than its reference has dropped or invented content."""

from __future__ import annotations

import numpy as np

from parabit.filters.base import Filter, PairBatch, within


class LengthRatioFilter(Filter):
    """Scores longer/shorter token count (>= 1; infinite when one side is empty); accepts up to ``max_ratio``."""

    name = "length_ratio"

    def score(self, batch) -> np.ndarray:
        reference, translation = PairBatch.of(batch).token_counts
        longer, shorter = np.maximum(reference, translation), np.minimum(reference, translation)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(shorter > 0, longer / np.maximum(shorter, 1), np.inf)

    def accept(self, scores, *, max_ratio: float | None = 2.0) -> np.ndarray:
        return within(scores, None, max_ratio)
