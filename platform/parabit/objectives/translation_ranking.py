"""Translation ranking with an additive margin (LaBSE, Feng et al. 2022; Yang et al. 2019): each sentence must pick
its own translation out of the batch, in both directions."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class TranslationRankingLoss(nn.Module):
    """``forward(g1 [B, D], g2 [B, D]) -> scalar``: row ``b`` of each side is the translation of row ``b`` of the other,
    and every other row of the batch is a negative::

        s_ij = scale · (cos(g1_i, g2_j) − margin · [i = j])
        loss = ½ (mean_i CE(s_i·, i) + mean_j CE(s_·j, j))

    the softmax over the other side's sentences taken both ways (source → target and target → source), the right
    pair's cosine lowered by ``margin`` first (the additive margin: it must win by at least that much). ``scale``
    sharpens the softmax over cosines (sentence-transformers' MultipleNegativesRankingLoss uses 20). Similarities
    and the softmax are computed in float32 whatever the inputs' precision (under bfloat16 autocast they would be
    rounded to about 3 digits). :meth:`in_batch` is the same call, for the pair objectives' interface."""

    role = "ranking"

    def __init__(self, margin: float = 0.3, scale: float = 20.0):
        super().__init__()
        if margin < 0 or scale <= 0:
            raise ValueError(f"margin must be at least 0 and scale above 0; got margin {margin}, scale {scale}")
        self.margin = float(margin)
        self.scale = float(scale)

    def forward(self, g1: torch.Tensor, g2: torch.Tensor) -> torch.Tensor:
        if g1.shape != g2.shape or len(g1) < 2:
            raise ValueError(f"need two [B, D] batches of the same shape with B ≥ 2; got {tuple(g1.shape)} and "
                             f"{tuple(g2.shape)}")
        cosines = F.normalize(g1.float(), dim=-1) @ F.normalize(g2.float(), dim=-1).T
        gold = torch.arange(len(g1), device=g1.device)
        logits = self.scale * (cosines - self.margin * torch.eye(len(g1), device=g1.device, dtype=cosines.dtype))
        return (F.cross_entropy(logits, gold) + F.cross_entropy(logits.T, gold)) / 2

    def in_batch(self, g1: torch.Tensor, g2: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
        """The loss of the batch (its negatives are every other pair: nothing is drawn, ``generator`` is unused)."""
        return self(g1, g2)
