"""Pair filters by name: ``build_filter("bleu")``, ``build_filter("ngram_overlap", order=2)``.

Each filter scores pairs (stored as columns) and accepts them by thresholds, separately; see
:class:`parabit.filters.base.Filter`.
"""

from __future__ import annotations

from parabit.filters.base import Filter, FilterError, PairBatch
from parabit.filters.bilingual import BilingualSimilarityFilter
from parabit.filters.bleu import BleuFilter
from parabit.filters.classifier import ReferenceClassifierFilter
from parabit.filters.cost import TranslationCostFilter
from parabit.filters.language_model import LanguageModelFilter, TrigramLanguageModel
from parabit.filters.length import TokenLengthFilter
from parabit.filters.length_ratio import LengthRatioFilter
from parabit.filters.ngram_overlap import NgramOverlapFilter
from parabit.filters.teacher import TeacherSimilarityFilter

FILTERS: dict[str, type[Filter]] = {
    cls.name: cls
    for cls in (TokenLengthFilter, LengthRatioFilter, TranslationCostFilter, NgramOverlapFilter, BleuFilter,
                LanguageModelFilter, ReferenceClassifierFilter, TeacherSimilarityFilter, BilingualSimilarityFilter)
}


def filter_class(name: str) -> type[Filter]:
    """The filter registered as ``name``; raises :class:`FilterError` listing the names otherwise."""
    if name not in FILTERS:
        raise FilterError(f"unknown filter {name!r}; choose one of {sorted(FILTERS)}")
    return FILTERS[name]


def build_filter(name: str, **options) -> Filter:
    """Construct filter ``name`` with its options; a wrong option raises :class:`FilterError` naming the filter."""
    cls = filter_class(name)
    try:
        return cls(**options)
    except TypeError as err:
        raise FilterError(f"filter {name!r}: bad options {options}: {err}") from None


__all__ = ["FILTERS", "BilingualSimilarityFilter", "BleuFilter", "Filter", "FilterError", "LanguageModelFilter", "LengthRatioFilter",
           "NgramOverlapFilter", "PairBatch", "ReferenceClassifierFilter", "TokenLengthFilter",
           "TeacherSimilarityFilter", "TranslationCostFilter", "TrigramLanguageModel", "build_filter", "filter_class"]
