"""J_bi on 2-d vectors small enough to check with pencil and paper."""

from __future__ import annotations

import math

import pytest
import torch

from parabit.objectives import BilingualHingeLoss, sample_random_negatives
from parabit.objectives.bilingual_hinge import cosine_distance, squared_euclidean_distance


def test_euclidean_by_hand_sum_over_negatives_mean_over_pairs():
    # Pair 0: g1=(0,0), g2=(1,0): d(g1,g2) = 1.
    #   negatives i=1: n2=(0,2): d(g1,n2) = 4 -> [1 + 1 - 4]+ = 0;  n1=(1,1): d(g2,n1) = 1 -> [1 + 1 - 1]+ = 1
    #   negatives i=2: n2=(1,1): d(g1,n2) = 2 -> [1 + 1 - 2]+ = 0;  n1=(3,0): d(g2,n1) = 4 -> [1 + 1 - 4]+ = 0
    #   pair 0 total: 1
    # Pair 1: g1=(1,1), g2=(1,2): d(g1,g2) = 1.
    #   i=1: n2=(1,1.5): d(g1,n2) = 0.25 -> [2 - 0.25]+ = 1.75;  n1=(0,0): d(g2,n1) = 5 -> 0
    #   i=2: n2=(4,1):   d(g1,n2) = 9    -> 0;                     n1=(1,2.5): d(g2,n1) = 0.25 -> 1.75
    #   pair 1 total: 3.5
    # Loss = (1 + 3.5) / 2 = 2.25
    g1 = torch.tensor([[0.0, 0.0], [1.0, 1.0]])
    g2 = torch.tensor([[1.0, 0.0], [1.0, 2.0]])
    n1 = torch.tensor([[[1.0, 1.0], [3.0, 0.0]], [[0.0, 0.0], [1.0, 2.5]]])
    n2 = torch.tensor([[[0.0, 2.0], [1.0, 1.0]], [[1.0, 1.5], [4.0, 1.0]]])
    loss = BilingualHingeLoss(margin=1.0, distance="euclidean")(g1, g2, n1, n2)
    torch.testing.assert_close(loss, torch.tensor(2.25))


def test_cosine_by_hand():
    # g1=(1,0), g2=(1,1): cos = 1/sqrt2, d(g1,g2) = 1 - 1/sqrt2 ~= 0.2929
    # n2=(0,1):  d(g1,n2) = 1 - 0 = 1            -> [1 + 0.2929 - 1]+      = 1 - 1/sqrt2
    # n1=(-1,0): d(g2,n1) = 1 - (-1/sqrt2) ~= 1.7071 -> [1 + 0.2929 - 1.7071]+ = 0
    g1, g2 = torch.tensor([[1.0, 0.0]]), torch.tensor([[1.0, 1.0]])
    n1, n2 = torch.tensor([[[-1.0, 0.0]]]), torch.tensor([[[0.0, 1.0]]])
    loss = BilingualHingeLoss(margin=1.0, distance="cosine")(g1, g2, n1, n2)
    torch.testing.assert_close(loss, torch.tensor(1 - 1 / math.sqrt(2)))


def test_distances():
    a, b = torch.tensor([1.0, 2.0]), torch.tensor([4.0, -2.0])
    assert squared_euclidean_distance(a, b).item() == 25.0  # 3^2 + 4^2, squared: no sqrt
    torch.testing.assert_close(cosine_distance(a, b), torch.tensor(1 - (4 - 4) / (math.sqrt(5) * math.sqrt(20))))


def test_zero_when_every_negative_is_far_enough():
    g1, g2 = torch.tensor([[0.0, 0.0]]), torch.tensor([[0.0, 0.5]])  # d = 0.25
    far = torch.tensor([[[5.0, 5.0], [-5.0, 5.0]]])
    assert BilingualHingeLoss(margin=1.0)(g1, g2, far, far).item() == 0.0


def test_in_batch_uses_other_pairs_as_negatives():
    torch.manual_seed(0)
    g1, g2 = torch.randn(4, 3, requires_grad=True), torch.randn(4, 3, requires_grad=True)
    objective = BilingualHingeLoss(margin=2.0)
    loss = objective.in_batch(g1, g2, k=3, generator=torch.Generator().manual_seed(1))
    index = sample_random_negatives(4, 3, torch.Generator().manual_seed(1))
    torch.testing.assert_close(loss, objective(g1, g2, g1[index], g2[index]))
    loss.backward()
    assert g1.grad.abs().sum() > 0 and g2.grad.abs().sum() > 0


def test_unknown_distance_is_rejected():
    with pytest.raises(ValueError, match="euclidean, cosine"):
        BilingualHingeLoss(distance="manhattan")
