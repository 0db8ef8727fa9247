"""Dictionary softmax: cross-entropy of a definition's word among the words of that word's language, by cosine."""

from __future__ import annotations

import math

import pytest
import torch

from parabit.objectives import DictionarySoftmaxLoss

# Ids 0-1 are English words, 2-4 foreign words (a space's two id ranges).
TABLE = torch.tensor([[1.0, 0.0], [0.0, 1.0], [2.0, 0.0], [0.0, 3.0], [-1.0, 0.0]])
RANGES = [(0, 2), (2, 5)]


def test_by_hand_each_row_competes_only_with_its_own_language():
    encoded = torch.tensor([[5.0, 0.0], [0.0, 1.0]], requires_grad=True)
    loss = DictionarySoftmaxLoss(temperature=0.5)(encoded, TABLE, torch.tensor([0, 3]), RANGES)
    # Row 0 (English word 0): cosines 1, 0 over ids 0-1 -> logits 2, 0. Row 1 (foreign word 3): cosines 0, 1, 0 over
    # ids 2-4 -> logits 0, 2, 0. The foreign ids never enter row 0's softmax, nor the English ids row 1's.
    expected = (-math.log(math.exp(2) / (math.exp(2) + 1)) - math.log(math.exp(2) / (math.exp(2) + 2))) / 2
    assert loss.item() == pytest.approx(expected, rel=1e-6)
    loss.backward()
    assert encoded.grad is not None and torch.isfinite(encoded.grad).all()


def test_lower_when_the_encoding_points_at_its_word():
    loss = DictionarySoftmaxLoss(temperature=0.1)
    word = torch.tensor([3])
    assert loss(torch.tensor([[0.0, 1.0]]), TABLE, word, RANGES) < loss(torch.tensor([[1.0, 0.0]]), TABLE, word, RANGES)


def test_a_word_outside_every_range_and_a_bad_temperature_are_errors():
    with pytest.raises(ValueError, match="none of the candidate ranges"):
        DictionarySoftmaxLoss()(torch.ones(1, 2), TABLE, torch.tensor([4]), [(0, 2), (2, 4)])
    with pytest.raises(ValueError, match="temperature must be positive"):
        DictionarySoftmaxLoss(temperature=0.0)


def test_under_bfloat16_autocast_the_loss_is_its_float32_value():
    # Logits are cosines / 0.05: in bfloat16 each cosine is off by up to 2^-9, each logit by up to ~0.04.
    generator = torch.Generator().manual_seed(0)
    encoded = torch.randn(32, 50, generator=generator)
    table = torch.randn(400, 50, generator=generator)
    words, ranges = torch.randint(0, 400, (32,), generator=generator), [(0, 150), (150, 400)]
    loss = DictionarySoftmaxLoss(temperature=0.05)
    exact = loss(encoded, table, words, ranges)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        mixed = loss(encoded, table, words, ranges)
    assert mixed.dtype == torch.float32
    assert mixed.item() == pytest.approx(exact.item(), rel=1e-6)
