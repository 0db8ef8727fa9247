"""Training objectives: ``nn.Module``s mapping encoded batches to a scalar loss.

Their inputs differ (see each class), so the registry only builds them: :func:`build_objective`.
Regularisers are separate callables in :mod:`parabit.objectives.regularization`.
"""

from __future__ import annotations

from torch import nn

from parabit.objectives.bilingual_hinge import BilingualHingeLoss
from parabit.objectives.dictionary_l2 import DictionaryL2Loss
from parabit.objectives.malstm_classification import MaLSTMClassificationLoss
from parabit.objectives.malstm_regression import MaLSTMRegressionLoss
from parabit.objectives.negative_sampling import gather_negatives, sample_random_negatives, select_negatives
from parabit.objectives.paraphrase_margin import ParaphraseMarginLoss
from parabit.objectives.regularization import L2Regularizer, L2ToInitRegularizer

OBJECTIVES: dict[str, type[nn.Module]] = {
    "jbi": BilingualHingeLoss,
    "jpa": ParaphraseMarginLoss,
    "malstm": MaLSTMRegressionLoss,
    "malstm_classification": MaLSTMClassificationLoss,
    "dictionary_l2": DictionaryL2Loss,
}


def build_objective(name: str, **options) -> nn.Module:
    """``OBJECTIVES[name](**options)``; an unknown name raises ValueError listing the valid ones."""
    if name not in OBJECTIVES:
        raise ValueError(f"unknown objective {name!r}; valid names: {', '.join(sorted(OBJECTIVES))}")
    return OBJECTIVES[name](**options)


__all__ = [
    "OBJECTIVES",
    "BilingualHingeLoss",
    "DictionaryL2Loss",
    "L2Regularizer",
    "L2ToInitRegularizer",
    "MaLSTMClassificationLoss",
    "MaLSTMRegressionLoss",
    "ParaphraseMarginLoss",
    "build_objective",
    "gather_negatives",
    "sample_random_negatives",
    "select_negatives",
]
