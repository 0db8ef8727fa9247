"""J_pa: the paraphrase margin loss with in-batch negatives (Wieting et al. 2016)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from parabit.objectives.negative_sampling import STRATEGIES, gather_negatives, select_negatives


class ParaphraseMarginLoss(nn.Module):
    """J_pa: a paraphrase pair must be more cosine-similar than each sentence is to its negative, by ``margin``.

    ``forward(g1 [B, D], g2 [B, D], t1 [B, D], t2 [B, D]) -> scalar``::

        loss = mean_b [margin - cos(g1, g2) + cos(g1, t1)]_+ + [margin - cos(g1, g2) + cos(g2, t2)]_+

    (mean over pairs). ``in_batch(g1, g2)`` picks ``t1, t2`` from the batch with
    :func:`~parabit.objectives.negative_sampling.select_negatives` (``strategy`` "max", "mix" or "rand")
    and returns the loss. Regularisers are separate: :mod:`parabit.objectives.regularization`.
    """

    role = "pair"

    def __init__(self, margin: float = 0.4, strategy: str = "max"):
        super().__init__()
        if strategy not in STRATEGIES:
            raise ValueError(f"strategy must be one of {', '.join(STRATEGIES)}; got {strategy!r}")
        self.margin = float(margin)
        self.strategy = strategy

    def forward(self, g1: torch.Tensor, g2: torch.Tensor, t1: torch.Tensor, t2: torch.Tensor) -> torch.Tensor:
        positive = F.cosine_similarity(g1, g2, dim=-1)
        loss = F.relu(self.margin - positive + F.cosine_similarity(g1, t1, dim=-1)) + F.relu(
            self.margin - positive + F.cosine_similarity(g2, t2, dim=-1)
        )
        return loss.mean()

    def in_batch(
        self,
        g1: torch.Tensor,
        g2: torch.Tensor,
        generator: torch.Generator | None = None,
        *,
        strategy: str | None = None,
    ) -> torch.Tensor:
        """Select negatives in the batch (``strategy`` defaults to the constructor's) and return the loss."""
        t1_index, t2_index = select_negatives(g1, g2, strategy or self.strategy, generator)
        t1, t2 = gather_negatives(g1, g2, t1_index, t2_index)
        return self(g1, g2, t1, t2)

    def loss_and_gradient(self, sentences: torch.Tensor,
                          generator: torch.Generator | None = None) -> tuple[float, torch.Tensor]:
        """:meth:`in_batch`'s loss for ``g1, g2 = sentences[:B], sentences[B:]`` (the same negatives, selected the same
        way) and its gradient with respect to ``sentences`` (``[2B, D]``), in closed form on the CPU: the cosine margin
        is a triplet hinge on the distance ``1 − cos`` (:mod:`parabit.objectives.triplet_hinge`)."""
        from parabit.objectives.triplet_hinge import triplet_hinge  # numba's import only where the fused step runs

        batch_size = sentences.size(0) // 2
        t1_index, t2_index = select_negatives(sentences[:batch_size], sentences[batch_size:], self.strategy, generator)
        negatives = torch.cat([t1_index, t2_index]).unsqueeze(1).numpy()
        return triplet_hinge(sentences, negatives, margin=self.margin, distance="cosine", batch_size=batch_size)
