"""Training objectives: ``nn.Module``s mapping encoded batches to a scalar loss, registered by name.

Every class declares its ``role``, the inputs it takes: ``pair`` objectives score a batch of encoded pairs with
negatives from the batch (``in_batch(g1, g2, generator)``; J_bi, J_pa), ``labelled_pair`` ones a pair against its
gold label (MaLSTM), ``dictionary`` ones a definition's encoding against its word's vector, ``distillation`` ones
a batch of student vectors against the teacher's similarities, ``teacher_target`` ones a translation pair's two student
vectors against the teacher's vector of its English side (multilingual distillation), ``ranking`` ones a batch of
translation pairs ranked against each other (``in_batch(g1, g2)``: LaBSE's translation ranking). A recipe accepts
the names of its role (:func:`objective_names`) and builds them with :func:`build_objective`; configs validate against
the same registry, so :data:`OBJECTIVES` is the only place objective names live. Regularisers are separate callables
in :mod:`parabit.objectives.regularization`.
"""

from __future__ import annotations

from torch import nn

from parabit.objectives.bilingual_hinge import BilingualHingeLoss
from parabit.objectives.dictionary_l2 import DictionaryL2Loss
from parabit.objectives.dictionary_softmax import DictionarySoftmaxLoss
from parabit.objectives.malstm_classification import MaLSTMClassificationLoss
from parabit.objectives.malstm_regression import MaLSTMRegressionLoss
from parabit.objectives.multilingual_distillation import MultilingualDistillationLoss
from parabit.objectives.negative_sampling import gather_negatives, sample_random_negatives, select_negatives
from parabit.objectives.paraphrase_margin import ParaphraseMarginLoss
from parabit.objectives.regularization import L2Regularizer, L2ToInitRegularizer
from parabit.objectives.similarity_distillation import SimilarityDistillationLoss
from parabit.objectives.similarity_kl import SimilarityKLLoss
from parabit.objectives.translation_ranking import TranslationRankingLoss

OBJECTIVES: dict[str, type[nn.Module]] = {
    "jbi": BilingualHingeLoss,
    "jpa": ParaphraseMarginLoss,
    "malstm": MaLSTMRegressionLoss,
    "malstm_classification": MaLSTMClassificationLoss,
    "dictionary_l2": DictionaryL2Loss,
    "dictionary_softmax": DictionarySoftmaxLoss,
    "similarity_distillation": SimilarityDistillationLoss,
    "similarity_kl": SimilarityKLLoss,
    "multilingual_distillation": MultilingualDistillationLoss,
    "translation_ranking": TranslationRankingLoss,
}


def objective_names(role: str) -> tuple[str, ...]:
    """The registered names of the objectives with ``role`` (``pair``, ``labelled_pair``, ``dictionary``,
    ``distillation``, ``teacher_target``, ``ranking``)."""
    return tuple(name for name, cls in OBJECTIVES.items() if cls.role == role)


def build_objective(name: str, **options) -> nn.Module:
    """``OBJECTIVES[name](**options)``; an unknown name raises ValueError listing the valid ones."""
    if name not in OBJECTIVES:
        raise ValueError(f"unknown objective {name!r}; valid names: {', '.join(sorted(OBJECTIVES))}")
    return OBJECTIVES[name](**options)


__all__ = [
    "OBJECTIVES",
    "BilingualHingeLoss",
    "DictionaryL2Loss",
    "DictionarySoftmaxLoss",
    "L2Regularizer",
    "L2ToInitRegularizer",
    "MaLSTMClassificationLoss",
    "MaLSTMRegressionLoss",
    "MultilingualDistillationLoss",
    "ParaphraseMarginLoss",
    "SimilarityDistillationLoss",
    "SimilarityKLLoss",
    "TranslationRankingLoss",
    "build_objective",
    "objective_names",
    "gather_negatives",
    "sample_random_negatives",
    "select_negatives",
]
