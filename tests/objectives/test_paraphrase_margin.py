"""J_pa on 2-d vectors, and its in-batch convenience."""

from __future__ import annotations

import math

import pytest
import torch

from parabit.objectives import ParaphraseMarginLoss, gather_negatives, select_negatives

R = 1 / math.sqrt(2)  # cos 45deg


def test_by_hand_mean_over_pairs():
    # Pair 0: g1=(1,0), g2=(1,1): cos(g1,g2) = R ~= 0.7071
    #   t1=(0,1): cos(g1,t1) = 0   -> [0.4 - R + 0]+ = 0        (0.4 - 0.7071 < 0)
    #   t2=(1,0): cos(g2,t2) = R   -> [0.4 - R + R]+ = 0.4
    # Pair 1: g1=(0,1), g2=(0,2): cos = 1
    #   t1=(0,-1): cos = -1        -> [0.4 - 1 - 1]+ = 0
    #   t2=(1,1):  cos((0,2),(1,1)) = R -> [0.4 - 1 + R]+ = R - 0.6 ~= 0.1071
    # Loss = (0.4 + (R - 0.6)) / 2
    g1 = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    g2 = torch.tensor([[1.0, 1.0], [0.0, 2.0]])
    t1 = torch.tensor([[0.0, 1.0], [0.0, -1.0]])
    t2 = torch.tensor([[1.0, 0.0], [1.0, 1.0]])
    loss = ParaphraseMarginLoss(margin=0.4)(g1, g2, t1, t2)
    torch.testing.assert_close(loss, torch.tensor((0.4 + R - 0.6) / 2))


@pytest.mark.parametrize("strategy", ["max", "mix", "rand"])
def test_in_batch_is_selection_then_loss(strategy):
    torch.manual_seed(0)
    g1, g2 = torch.randn(5, 3, requires_grad=True), torch.randn(5, 3, requires_grad=True)
    objective = ParaphraseMarginLoss(margin=0.4, strategy=strategy)
    loss = objective.in_batch(g1, g2, generator=torch.Generator().manual_seed(3))
    index = select_negatives(g1, g2, strategy, torch.Generator().manual_seed(3))
    torch.testing.assert_close(loss, objective(g1, g2, *gather_negatives(g1, g2, *index)))
    loss.backward()  # gradients flow through the pair and the chosen negatives
    assert g1.grad.abs().sum() > 0 and g2.grad.abs().sum() > 0


def test_in_batch_strategy_override():
    g1, g2 = torch.randn(4, 3), torch.randn(4, 3)
    objective = ParaphraseMarginLoss(strategy="rand")
    torch.testing.assert_close(objective.in_batch(g1, g2, strategy="max"), ParaphraseMarginLoss().in_batch(g1, g2))


def test_unknown_strategy_is_rejected():
    with pytest.raises(ValueError, match="max, mix, rand"):
        ParaphraseMarginLoss(strategy="hard")
