"""Translation cost: the engine's mean per-token cost (negative log-probability), for engines that report one."""

from __future__ import annotations

import numpy as np

from parabit.filters.base import Filter, FilterError, PairBatch, within

COST_COLUMN = "token_costs"


class TranslationCostFilter(Filter):
    """Scores the mean of the ``token_costs`` column (a list per pair); accepts up to ``max_cost``.

    Rule-based engines (Apertium) report no cost: scoring then raises :class:`FilterError` instead of inventing one,
    and the pipeline refuses the filter at configuration time (see ``Translator.provides_cost``).
    """

    name = "translation_cost"
    needs_cost = True

    def score(self, batch) -> np.ndarray:
        pairs = PairBatch.of(batch)
        if not pairs.has(COST_COLUMN):
            raise FilterError(
                f"filter {self.name!r} needs per-token costs (column {COST_COLUMN!r}), which this translation engine "
                "does not provide; remove the filter or use an engine that reports costs"
            )
        return np.array([np.mean(costs) if costs else np.nan for costs in pairs.column(COST_COLUMN)], dtype=float)

    def accept(self, scores, *, max_cost: float | None = None) -> np.ndarray:
        return within(scores, None, max_cost)
