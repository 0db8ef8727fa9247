"""Variants of the back-translated pairs: each applies its own filters (with thresholds) to the scores the
back-translation pipeline stored once, and samples a fixed number of pairs into **its own folder**
(``<workdir>/selections/<variant>/``), an exactly-once stage like the pipeline's own ``select``
(:func:`parabit.backtranslation.select.select`): no variant overwrites another's selection, and changing a threshold
re-runs only that variant's selection (seconds), never translation or scoring.

Thresholds for tuning are given as quantile windows of a filter's score (:class:`FilterSpec`): e.g. ``(0.25, 0.75)``
keeps the middle half of the pairs by that score, so every candidate keeps enough pairs for the equal-size sample.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np
import pyarrow as pa
from pydantic import Field, model_validator

from parabit.config import Config
from parabit.filters import build_filter, filter_class
from parabit.backtranslation.config import FilterConfig, SelectConfig, fingerprint
from parabit.backtranslation.select import PAIRS_FILE, rejection_reasons, select
from parabit.backtranslation.stage import DATA, StageOutput, run_stage

LOWER_BOUNDS = ("minimum", "min_tokens")
UPPER_BOUNDS = ("maximum", "max_ratio", "max_cost", "max_tokens")

Window = tuple[float | None, float | None]


class FilterSpec(Config):
    """A filter tried alone: ``name`` and ``options`` as in the pipeline's ``score.filters``, and the quantile
    ``windows`` (lower, upper; null = open) of its score that the threshold sweep tries (the paper tuned each
    filter's lower and upper limits on the dev set). A filter whose ``accept`` has only a lower (upper) bound takes
    windows open above (below)."""

    name: str
    """A filter of `parabit.filters.FILTERS` (e.g. `length_ratio`, `ngram_overlap`, `bleu`, `lm`, `classifier`), as in
    the back-translation pipeline's `score.filters`."""
    options: dict = Field(default_factory=dict)
    """The filter's constructor options (e.g. `order: 1` for `ngram_overlap`); empty: its defaults."""
    windows: tuple[Window, ...]
    """The score windows the threshold sweep tries, one trial each: `[lower, upper]` quantiles of the filter's score
    over the scored pairs (0 ≤ lower < upper ≤ 1; null: open; a filter with only a lower or upper threshold takes
    the other side open). `--quick` takes the middle window, untuned."""

    @model_validator(mode="after")
    def _bounds_exist(self):
        names = filter_class(self.name).threshold_names()
        for low, high in self.windows:
            if low is not None and not names & set(LOWER_BOUNDS):
                raise ValueError(f"filter {self.name!r} takes no lower bound; use windows (null, q)")
            if high is not None and not names & set(UPPER_BOUNDS):
                raise ValueError(f"filter {self.name!r} takes no upper bound; use windows (q, null)")
            if low is not None and high is not None and not 0 <= low < high <= 1:
                raise ValueError(f"window ({low}, {high}) must satisfy 0 <= lower < upper <= 1")
        return self

    @property
    def label(self) -> str:
        return build_filter(self.name, **self.options).label

    def thresholds(self, table: pa.Table, window: Window) -> dict[str, float]:
        """The filter's threshold keywords for ``window``, from the score quantiles over ``table``'s rows."""
        f = build_filter(self.name, **self.options)
        scores = np.asarray(table[f.columns[0]].to_numpy(zero_copy_only=False), dtype=float)
        scores = scores[np.isfinite(scores)]
        names = filter_class(self.name).threshold_names()
        thresholds = {}
        low, high = window
        if low is not None:
            thresholds[next(n for n in LOWER_BOUNDS if n in names)] = float(np.quantile(scores, low))
        if high is not None:
            thresholds[next(n for n in UPPER_BOUNDS if n in names)] = float(np.quantile(scores, high))
        return thresholds

    def config(self, thresholds: dict[str, float]) -> FilterConfig:
        return FilterConfig(name=self.name, options=self.options, thresholds=thresholds)


@dataclass(frozen=True)
class Variant:
    """A named selection of back-translated pairs: ``filters`` (with thresholds) applied to the scored pairs,
    identical pairs dropped, then a seeded sample."""

    name: str
    filters: tuple[FilterConfig, ...] = ()

    def candidates(self, scored: pa.Table) -> int:
        """How many scored pairs pass this variant's filters (before sampling)."""
        return int((rejection_reasons(scored, self.filters, drop_identical=True) == "").sum())


def scored_table(scored: StageOutput) -> pa.Table:
    """The scored pairs, in ``row_id`` order (as the pipeline's select reads them)."""
    return scored.read_data().sort_by("row_id")


def select_variant(scored: StageOutput, root: Path, variant: Variant, size: int, seed: int) -> Path:
    """The variant's selected training pairs (``size`` of them, or all that pass if fewer), written once under
    ``root/<variant>/``; re-selected only when the scores, filters, size or seed change."""
    settings = SelectConfig(sample_size=size, seed=seed, drop_identical=True)
    stage = fingerprint("select", settings, [[f.name, f.options, f.thresholds] for f in variant.filters],
                        scored.fingerprint)
    output = run_stage(root, variant.name, stage, partial(select, scored, settings, variant.filters))
    return output.path / DATA / PAIRS_FILE
