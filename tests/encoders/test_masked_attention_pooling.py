"""MaskedAttentionPooling: softmax over real tokens only, exact zeros on padding."""

from __future__ import annotations

import math

import pytest
import torch

from parabit.encoders import MaskedAttentionPooling


def test_weights_and_pooled_vector_by_hand():
    pooling = MaskedAttentionPooling(2)
    with torch.no_grad():
        pooling.scorer.weight.copy_(torch.tensor([[1.0, 0.0]]))  # score_t = tanh(H[t, 0])
    states = torch.tensor([[[0.0, 2.0], [100.0, 4.0], [50.0, 8.0]]])  # the last position is padding
    mask = torch.tensor([[True, True, False]])
    pooled, weights = pooling(states, mask)
    # scores: tanh(0) = 0 and tanh(100) = 1 (the padding's tanh(50) = 1 is ignored);
    # alpha = (1, e) / (1 + e); pooled = alpha_0 * H_0 + alpha_1 * H_1.
    a0, a1 = 1 / (1 + math.e), math.e / (1 + math.e)
    torch.testing.assert_close(weights, torch.tensor([[a0, a1, 0.0]]))
    torch.testing.assert_close(pooled, torch.tensor([[a1 * 100.0, a0 * 2.0 + a1 * 4.0]]))


@pytest.mark.parametrize("hidden", [None, 3])
def test_weights_sum_to_one_and_are_exactly_zero_on_padding(hidden):
    torch.manual_seed(0)
    pooling = MaskedAttentionPooling(4, hidden=hidden)
    states = torch.randn(3, 5, 4)
    states[1, 2:] = float("nan")  # padding content, however bad, must not matter
    mask = torch.tensor([[True] * 5, [True, True, False, False, False], [True, False, False, False, False]])
    pooled, weights = pooling(states, mask)
    torch.testing.assert_close(weights.sum(dim=1), torch.ones(3))
    assert (weights[~mask] == 0).all()
    assert torch.equal(weights[2], torch.tensor([1.0, 0.0, 0.0, 0.0, 0.0]))
    assert torch.isfinite(pooled).all()
    torch.testing.assert_close(pooled[2], states[2, 0])
