"""Dictionary L2: mean squared L2 distance between definition encodings and word vectors."""

from __future__ import annotations

import torch

from parabit.objectives import DictionaryL2Loss


def test_by_hand():
    # ||(1,2) - (0,0)||^2 = 1 + 4 = 5;  ||(0,0) - (3,4)||^2 = 9 + 16 = 25;  mean = 15
    encoded = torch.tensor([[1.0, 2.0], [0.0, 0.0]], requires_grad=True)
    target = torch.tensor([[0.0, 0.0], [3.0, 4.0]])
    loss = DictionaryL2Loss()(encoded, target)
    assert loss.item() == 15.0
    loss.backward()
    # d/dE mean_b ||E_b - w_b||^2 = 2 (E - w) / B
    torch.testing.assert_close(encoded.grad, torch.tensor([[1.0, 2.0], [-3.0, -4.0]]))
