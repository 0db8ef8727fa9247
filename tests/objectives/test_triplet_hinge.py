"""J_bi and J_pa in closed form (what the fused static step trains with) give the loss and the gradient that their
autograd ``in_batch`` gives on the same draws, for both distances and every negatives rule; a NaN reaches the loss."""

from __future__ import annotations

import math

import pytest
import torch

from parabit.objectives import BilingualHingeLoss, ParaphraseMarginLoss

LOSSES = {
    "jbi-euclidean": BilingualHingeLoss(margin=1.0, distance="euclidean", negatives=5),
    "jbi-cosine": BilingualHingeLoss(margin=0.5, distance="cosine", negatives=5),
    "jpa-max": ParaphraseMarginLoss(margin=0.4, strategy="max"),
    "jpa-mix": ParaphraseMarginLoss(margin=0.4, strategy="mix"),
    "jpa-rand": ParaphraseMarginLoss(margin=0.4, strategy="rand"),
}


def encodings(seed: int, batch: int = 20, dim: int = 16) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(seed)
    g1 = torch.randn(batch, dim, generator=generator)
    return g1, g1 + 2 * torch.randn(batch, dim, generator=generator)  # partners nearer than the rest: some hinges idle


@pytest.mark.parametrize("name", sorted(LOSSES))
@pytest.mark.parametrize("seed", [1, 2])
def test_the_closed_form_is_autograd_s_loss_and_gradient(name, seed):
    loss_fn = LOSSES[name]
    g1, g2 = (side.requires_grad_() for side in encodings(seed))
    expected = loss_fn.in_batch(g1, g2, torch.Generator().manual_seed(seed))
    expected.backward()
    expected = expected.detach()
    loss, gradient = loss_fn.loss_and_gradient(torch.cat([g1, g2]).detach(), torch.Generator().manual_seed(seed))
    assert 0 < loss == pytest.approx(expected.item(), rel=1e-5)
    torch.testing.assert_close(gradient, torch.cat([g1.grad, g2.grad]), rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_a_non_finite_encoding_makes_the_loss_non_finite(name):
    g1, g2 = encodings(3)
    g1[0, 0] = float("inf")
    loss, _ = LOSSES[name].loss_and_gradient(torch.cat([g1, g2]), torch.Generator().manual_seed(3))
    assert not math.isfinite(loss)
