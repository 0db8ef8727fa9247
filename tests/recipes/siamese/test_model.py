"""The Siamese head and encoders: exp(-L1) similarity rescaled to SICK's 1-5 by hand, attention over real tokens."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from parabit.recipes.siamese.config import SiameseConfig, SiameseDataConfig, SiameseModelConfig
from parabit.evaluation.supervised import best_threshold, classification_scores, regression_scores
from parabit.recipes.siamese.model import build_head, build_siamese_encoder, predict, predict_pairs
from parabit.text.vocab import Vocabulary

H_A = torch.tensor([[0.0, 0.0, 0.0], [0.2, -0.1, 0.4]])
H_B = torch.tensor([[0.5, -0.5, 1.0], [0.2, -0.1, 0.4]])


def _config(variant: str, task: str = "sick") -> SiameseConfig:
    return SiameseConfig(name="t", data=SiameseDataConfig(task=task),
                         model=SiameseModelConfig(variant=variant, hidden_size=4, dim=50, init="random"))


def test_sick_prediction_is_exp_minus_l1_rescaled_to_1_5_by_hand():
    # Pair 0: ||(0,0,0) - (0.5,-0.5,1)||_1 = 2 -> exp(-2) = 0.1353 -> 1 + 4 * 0.1353 = 1.5413. Pair 1: identical -> 5.
    head = build_head(_config("sialstm"))
    torch.testing.assert_close(predict(head, H_A, H_B), torch.tensor([1 + 4 * math.exp(-2), 5.0]))


def test_msrp_prediction_is_the_probability_exp_minus_l1_and_trains_with_bce_by_hand():
    head = build_head(_config("sialstm", task="msrp"))
    torch.testing.assert_close(predict(head, H_A, H_B), torch.tensor([math.exp(-2), 1.0]))
    # Labels (0, 1): BCE = -(log(1 - e^-2) + log(1 - 1e-6)) / 2 (the probability 1 is clamped to 1 - 1e-6).
    expected = -(math.log(1 - math.exp(-2)) + math.log(1 - 1e-6)) / 2
    torch.testing.assert_close(head(H_A, H_B, torch.tensor([0.0, 1.0])), torch.tensor(expected))


def test_scores_by_hand():
    scores = regression_scores(np.array([1.0, 3.0, 5.0]), np.array([2.0, 3.0, 4.0]))
    assert scores["pearson"] == pytest.approx(1.0) and scores["spearman"] == pytest.approx(1.0)
    assert scores["mse"] == pytest.approx(2 / 3) and scores["mse01"] == pytest.approx(2 / 3 / 16)
    probability, labels = np.array([0.1, 0.3, 0.6, 0.8]), np.array([0, 1, 1, 1])
    assert best_threshold(probability, labels) == pytest.approx(0.2)  # all four right
    assert classification_scores(probability, labels, 0.5) == pytest.approx(
        {"accuracy": 0.75, "precision": 1.0, "f1": 0.8, "threshold": 0.5})


@pytest.mark.parametrize("variant,directions", [("attsialstm", 1), ("attsiabilstm", 2)])
def test_attention_weights_sum_to_one_ignore_padding_and_padding_never_changes_a_prediction(variant, directions):
    torch.manual_seed(0)
    vocab = Vocabulary([f"en:w{i}" for i in range(20)])
    encoder, spec, _ = build_siamese_encoder(_config(variant), vocab)
    assert encoder.output_dim == 4 * directions and spec["encoder"] == "attentive_lstm"
    ids = torch.tensor([[3, 4, 5, 0, 0, 0], [6, 7, 8, 9, 10, 11]])
    lengths = torch.tensor([3, 6])
    _, weights = encoder.attend(ids, lengths)
    torch.testing.assert_close(weights.sum(dim=1), torch.ones(2))
    assert torch.all(weights[0, 3:] == 0) and torch.all(weights[0, :3] > 0)

    # Garbage ids past a sentence's end, or more padding, change neither the vector nor the predicted score.
    head = build_head(_config(variant))
    noisy = ids.clone()
    noisy[0, 3:] = torch.tensor([12, 13, 14])
    wider = torch.cat([ids, torch.zeros(2, 4, dtype=torch.long)], dim=1)
    base = {"ids_a": ids, "len_a": lengths, "ids_b": ids.flip(0), "len_b": lengths.flip(0)}
    predictions = [predict_pairs(encoder, head, {**base, "ids_a": a}) for a in (ids, noisy, wider)]
    np.testing.assert_allclose(predictions[0], predictions[1], rtol=1e-6)
    np.testing.assert_allclose(predictions[0], predictions[2], rtol=1e-6)
    assert np.all((predictions[0] >= 1.0) & (predictions[0] <= 5.0))


def test_fixed_word_vectors_get_no_gradient_unless_asked():
    vocab = Vocabulary([f"en:w{i}" for i in range(5)])
    frozen, _, _ = build_siamese_encoder(_config("sialstm"), vocab)
    assert not frozen.embedding.weight.requires_grad
    config = _config("sialstm")
    config.model.train_embeddings = True
    assert build_siamese_encoder(config, vocab)[0].embedding.weight.requires_grad
