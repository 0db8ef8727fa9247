"""What Wieting et al.'s data step records (:class:`WietingFacts`, version 2): each group's selected pairs, the
equal sizes, the pairs each length range offers, each filter's threshold sweep (:class:`ThresholdTuning`) and the
§6 analysis of each engine's texts (:class:`EngineComparison`).
:class:`~parabit.papers.wieting.data.PreparedData` builds it and takes it back.

Version 1 (no ``version``) held the same fields as plain dicts.
"""

from __future__ import annotations

from typing import Literal

from parabit.papers.facts import Facts, PaperFacts


class ThresholdTrial(Facts):
    """One threshold window of a filter's sweep (:class:`~parabit.papers.wieting.thresholds.Trial`)."""

    window: tuple[float | None, float | None]
    """The window's quantiles of the filter's score (None: open on that side)."""
    thresholds: dict[str, float]
    """The filter's thresholds those quantiles give."""
    path: str
    """The candidate selection it trained on (a path)."""
    pairs: int
    """The selection's pairs."""
    dev_score: float | None
    """Its trial's score on the dev set (None: not scored, as in quick mode)."""


class ThresholdTuning(Facts):
    """A filter's threshold sweep (:class:`~parabit.papers.wieting.thresholds.Tuned`)."""

    filter: str
    """The filter's label."""
    best: int
    """The chosen window's index in :attr:`trials`."""
    trials: list[ThresholdTrial]
    """Every window tried."""


class TextSide(Facts):
    """One side of an engine's texts, summarised (:class:`~parabit.papers.wieting.analyses.Side`)."""

    measures: dict[str, float]
    """Its text measures, by name."""
    length_density: list[float]
    """The density of its sentence lengths over the analysis's length bins."""
    log_rank_quantiles: list[float]
    """The log10 GloVe rank of its known tokens at the analysis's quantiles."""


class EngineComparison(Facts):
    """References against one engine's translations (:class:`~parabit.papers.wieting.analyses.Comparison`)."""

    engine: str
    """The engine's label."""
    pairs: int
    """The pairs compared."""
    reference: TextSide
    """The references."""
    translation: TextSide
    """The engine's translations."""
    classifier_accuracy: float
    """How well a classifier tells a reference from a translation (held out)."""


class WietingFacts(PaperFacts):
    """Wieting et al.'s data step as its prepared record holds it (see the module docstring)."""

    version: Literal[2] = 2
    """The shape: 2, these fields; 1 (no ``version``), the same ones as plain dicts."""
    paths: dict[str, str]
    """Each group's selected pairs (a path), by group."""
    sizes: dict[str, int]
    """Each comparison's equal size (``main``, ``length``, ``engines``)."""
    available_by_range: dict[str, int]
    """The pairs each length range could select, by its group."""
    tuned: dict[str, ThresholdTuning]
    """Each filter's threshold sweep, by its label."""
    comparisons: dict[str, EngineComparison]
    """The §6 analysis of each engine's texts, by engine."""
