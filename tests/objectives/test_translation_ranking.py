"""Translation ranking with an additive margin: the in-batch softmax both ways, the right pair's cosine lowered by the
margin first; on real Tatoeba pairs encoded by the packaged all-MiniLM-L6-v2 the right pairing scores lower than a
wrong one."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from parabit.objectives import TranslationRankingLoss, build_objective

from .transformer_support import encode, packaged_student, tatoeba_pairs


def reference(g1: torch.Tensor, g2: torch.Tensor, margin: float, scale: float) -> torch.Tensor:
    """The loss written out: for each row, minus the log of its softmax weight on its own pair, both ways."""
    cosines = F.normalize(g1, dim=-1) @ F.normalize(g2, dim=-1).T
    logits = scale * (cosines - margin * torch.eye(len(g1)))
    forward = -(logits.diag() - torch.logsumexp(logits, dim=1)).mean()
    backward = -(logits.diag() - torch.logsumexp(logits, dim=0)).mean()
    return (forward + backward) / 2


def test_the_loss_is_the_softmax_over_the_batch_both_ways_with_the_margin():
    generator = torch.Generator().manual_seed(0)
    g1, g2 = torch.randn(6, 8, generator=generator), torch.randn(6, 8, generator=generator)
    for margin, scale in ((0.0, 1.0), (0.3, 20.0)):
        loss = build_objective("translation_ranking", margin=margin, scale=scale)(g1, g2)
        assert loss.item() == pytest.approx(reference(g1, g2, margin, scale).item(), rel=1e-5)
    # The margin makes the right pair harder to win: a higher loss for the same vectors.
    assert TranslationRankingLoss(margin=0.3)(g1, g2).item() > TranslationRankingLoss(margin=0.0)(g1, g2).item()
    # Symmetric in the two sides, and in_batch is the same call.
    assert TranslationRankingLoss()(g1, g2).item() == pytest.approx(TranslationRankingLoss()(g2, g1).item())
    assert TranslationRankingLoss().in_batch(g1, g2, generator).item() == TranslationRankingLoss()(g1, g2).item()


def test_similarities_are_float32_under_bfloat16_inputs():
    g1, g2 = torch.randn(4, 8).bfloat16(), torch.randn(4, 8).bfloat16()
    assert TranslationRankingLoss()(g1, g2).dtype == torch.float32


def test_bad_settings_and_batches_are_refused():
    with pytest.raises(ValueError, match="margin must be at least 0"):
        TranslationRankingLoss(margin=-0.1)
    with pytest.raises(ValueError, match="B ≥ 2"):
        TranslationRankingLoss()(torch.randn(1, 4), torch.randn(1, 4))


def test_on_real_pairs_the_right_pairing_scores_better_than_a_shuffled_one():
    english, spanish = tatoeba_pairs(16)
    student = packaged_student().eval()
    with torch.no_grad():
        g1, g2 = encode(student, english), encode(student, spanish)
    loss = TranslationRankingLoss()
    shuffled = g2[torch.randperm(16, generator=torch.Generator().manual_seed(0))]
    assert loss(g1, g2).item() < loss(g1, shuffled).item()
