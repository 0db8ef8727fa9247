"""build_objective: names, options, refusal of unknown names."""

from __future__ import annotations

import pytest

from parabit.objectives import (
    OBJECTIVES,
    BilingualHingeLoss,
    DictionaryL2Loss,
    DictionarySoftmaxLoss,
    MaLSTMClassificationLoss,
    MaLSTMRegressionLoss,
    MultilingualDistillationLoss,
    ParaphraseMarginLoss,
    SimilarityDistillationLoss,
    SimilarityKLLoss,
    TranslationRankingLoss,
    build_objective,
    objective_names,
)


def test_registry_names():
    assert OBJECTIVES == {
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


def test_roles_tell_what_each_recipe_may_use():
    assert objective_names("pair") == ("jbi", "jpa")  # what the pairs and bilingual recipes take
    assert objective_names("teacher_target") == ("multilingual_distillation",)
    assert objective_names("ranking") == ("translation_ranking",)


def test_build_with_options():
    jbi = build_objective("jbi", margin=0.5, distance="cosine")
    assert isinstance(jbi, BilingualHingeLoss) and jbi.margin == 0.5 and jbi.distance == "cosine"
    jpa = build_objective("jpa", strategy="mix")
    assert isinstance(jpa, ParaphraseMarginLoss) and jpa.strategy == "mix" and jpa.margin == 0.4
    assert build_objective("malstm", low=0.0, high=1.0).high == 1.0
    assert isinstance(build_objective("dictionary_l2"), DictionaryL2Loss)


def test_unknown_name_lists_the_valid_ones():
    with pytest.raises(ValueError, match="unknown objective 'triplet'") as error:
        build_objective("triplet")
    for name in OBJECTIVES:
        assert name in str(error.value)
