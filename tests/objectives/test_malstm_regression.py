"""MaLSTM regression: exp(-L1) similarity, rescaled to the gold range, MSE."""

from __future__ import annotations

import math

import pytest
import torch

from parabit.objectives import MaLSTMRegressionLoss

H_A = torch.tensor([[0.0, 0.0], [0.5, 0.5]])
H_B = torch.tensor([[1.0, -1.0], [0.5, 0.5]])


def test_similarity_and_prediction_by_hand():
    objective = MaLSTMRegressionLoss()  # gold range 1..5
    # Pair 0: ||(0,0) - (1,-1)||_1 = 2 -> sim e^-2 ~= 0.1353 -> 1 + 4 e^-2 ~= 1.5413
    # Pair 1: identical vectors -> sim 1 -> 5
    torch.testing.assert_close(objective.similarity(H_A, H_B), torch.tensor([math.exp(-2), 1.0]))
    torch.testing.assert_close(objective.predict(H_A, H_B), torch.tensor([1 + 4 * math.exp(-2), 5.0]))


def test_loss_by_hand():
    # Gold (2, 4): errors (1 + 4e^-2 - 2) ~= -0.4587 and (5 - 4) = 1; MSE = (0.2104 + 1) / 2
    loss = MaLSTMRegressionLoss()(H_A, H_B, torch.tensor([2.0, 4.0]))
    torch.testing.assert_close(loss, torch.tensor(((1 + 4 * math.exp(-2) - 2) ** 2 + 1.0) / 2))


def test_other_gold_range():
    objective = MaLSTMRegressionLoss(low=0.0, high=1.0)
    torch.testing.assert_close(objective.predict(H_A, H_B), torch.tensor([math.exp(-2), 1.0]))
    with pytest.raises(ValueError, match="high > low"):
        MaLSTMRegressionLoss(low=5.0, high=1.0)


def test_gradient_flows_to_both_sides():
    h_a, h_b = H_A.clone().requires_grad_(), H_B.clone().requires_grad_()
    MaLSTMRegressionLoss()(h_a, h_b, torch.tensor([2.0, 4.0])).backward()
    assert h_a.grad.abs().sum() > 0 and h_b.grad.abs().sum() > 0
