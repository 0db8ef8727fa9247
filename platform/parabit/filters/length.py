"""Token length range: drop fragments and run-on pairs (both sides must be in range)."""

from __future__ import annotations

import numpy as np

from parabit.filters.base import Filter, PairBatch, within


class TokenLengthFilter(Filter):
    """Scores each side's token count; accepts when both lie in ``[min_tokens, max_tokens]``."""

    name = "length"

    @property
    def columns(self) -> tuple[str, ...]:
        return ("tokens_reference", "tokens_translation")

    def score(self, batch) -> np.ndarray:
        return np.column_stack(PairBatch.of(batch).token_counts).astype(float)

    def accept(self, scores, *, min_tokens: float | None = 1, max_tokens: float | None = None) -> np.ndarray:
        return within(scores, min_tokens, max_tokens).all(axis=1)
