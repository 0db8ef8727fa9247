"""The untrained GloVe baselines: SIF's weights and common-component removal against hand computation, and the
real baselines' scores (the bars every trained encoder is compared with)."""

import math

import numpy as np
import pytest
import torch

from parabit.baselines import BASELINES, build_baseline
from parabit.config import ConfigError
from parabit.encoders.avg import AvgEncoder
from parabit.evaluation.sts import STSEvaluator
from parabit.text.frequency import glove_rank_probabilities, sif_weights
from parabit.text.vocab import Vocabulary


def test_sif_weights_follow_glove_ranks_and_training_counts():
    vocab = Vocabulary(["en:the", "en:guitar", "en:zzqxj", "es:el"])
    weights = sif_weights(vocab, a=1e-3, counts={"es": {"el": 30, "perro": 70}})
    harmonic = sum(1.0 / r for r in range(1, 400_001))
    p_the = 1.0 / harmonic  # "the" is GloVe's rank-1 word
    assert glove_rank_probabilities()["the"] == pytest.approx(p_the)
    assert weights[vocab.id("the", "en")] == pytest.approx(1e-3 / (1e-3 + p_the), rel=1e-5)
    assert 0.9 < weights[vocab.id("guitar", "en")] < 1.0  # a rarer word weighs more
    assert weights[vocab.id("zzqxj", "en")] == pytest.approx(1.0)  # in neither GloVe nor the counts: p = 0
    assert weights[vocab.id("el", "es")] == pytest.approx(1e-3 / (1e-3 + 0.3), rel=1e-5)  # from the counts
    assert weights[0] == 0.0  # padding


def test_weighted_average_with_a_removed_component_by_hand():
    table = torch.tensor([[0.0, 0.0, 0.0], [1.0, 0.0, 2.0], [0.0, 3.0, 1.0], [2.0, 2.0, 0.0]])
    weights = torch.tensor([0.0, 0.5, 1.0, 0.25])
    encoder = AvgEncoder(4, 3, weighted=True, components=1, initial_weights=weights, initial_vectors=table)
    ids, lengths = torch.tensor([[1, 2, 0], [3, 1, 2]]), torch.tensor([2, 3])
    pooled = np.array([(0.5 * table[1] + 1.0 * table[2]).numpy() / 2,
                       (0.25 * table[3] + 0.5 * table[1] + 1.0 * table[2]).numpy() / 3])
    np.testing.assert_allclose(encoder.pool(ids, lengths).detach().numpy(), pooled, rtol=1e-6)
    fit = np.array([[1.0, 2.0, 0.5], [2.0, 4.1, 1.0], [0.5, 1.0, 0.2]])
    encoder.fit_components(torch.tensor(fit))
    u = np.linalg.svd(fit)[2][0]  # the first right singular vector, no centring (SIF)
    np.testing.assert_allclose(np.abs(encoder.components.numpy()[0]), np.abs(u), rtol=1e-5)
    expected = pooled - np.outer(pooled @ u, u)
    np.testing.assert_allclose(encoder(ids, lengths).detach().numpy(), expected, rtol=1e-5, atol=1e-6)


def test_unknown_baseline_is_a_config_error():
    with pytest.raises(ConfigError, match=r"unknown baseline encoder 'glove-max'; choose one of "
                                          r"\['all-minilm-l6-v2', 'glove-mean', 'glove-sif', "
                                          r"'translate-test-minilm'\]"):
        build_baseline("glove-max")
    assert set(BASELINES) == {"all-minilm-l6-v2", "glove-mean", "glove-sif", "translate-test-minilm"}


@pytest.mark.slow
def test_sif_beats_the_plain_mean_on_sts_with_the_published_margin():
    sts = STSEvaluator((2012, 2014))
    mean = {s.benchmark: s.value for s in sts(build_baseline("glove-mean").encode)
            if s.subset == "mean" and s.metric == "pearson"}
    sif_embedder = build_baseline("glove-sif")
    sif = {s.benchmark: s.value for s in sts(sif_embedder.encode) if s.subset == "mean" and s.metric == "pearson"}
    # measured .547 / .626 (the table: .55 / .62); the plain mean .430 / .462
    assert sif["sts2012"] == pytest.approx(0.547, abs=0.005) and sif["sts2014"] == pytest.approx(0.626, abs=0.005)
    assert all(sif[year] > mean[year] + 0.1 for year in mean)
    assert math.isclose(float(torch.linalg.norm(sif_embedder.encoder.components)), 1.0, rel_tol=1e-5)
