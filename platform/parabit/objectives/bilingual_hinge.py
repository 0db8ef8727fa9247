"""J_bi: the bilingual hinge loss (Elgohary & Carpuat 2016, eq. 1; after Hermann & Blunsom 2014)."""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from parabit.objectives.negative_sampling import sample_random_negatives


def squared_euclidean_distance(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``||a - b||^2`` over the last axis (inputs broadcast)."""
    return (a - b).pow(2).sum(dim=-1)


def cosine_distance(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``1 - cos(a, b)`` over the last axis (inputs broadcast)."""
    return 1.0 - F.cosine_similarity(a, b, dim=-1)


DISTANCES = {"euclidean": squared_euclidean_distance, "cosine": cosine_distance}


class BilingualHingeLoss(nn.Module):
    """J_bi: a translation pair must be closer than the pair's sentences are to random sentences, by a margin.

    ``forward(g1 [B, D], g2 [B, D], n1 [B, k, D], n2 [B, k, D]) -> scalar``, where ``(g1[b], g2[b])`` encode
    a translation pair and ``n1[b]`` / ``n2[b]`` encode k random side-1 / side-2 sentences::

        loss_b = sum_i [margin + d(g1, g2) - d(g1, n2_i)]_+ + [margin + d(g1, g2) - d(g2, n1_i)]_+
        loss   = mean_b loss_b

    i.e. **summed over the k negatives and both directions, averaged over the B pairs** (so the learning
    rate does not scale with the batch size, while more negatives do give more signal, as in the paper's
    sum). ``distance``: ``"euclidean"`` (squared, ``||a - b||^2``) or ``"cosine"`` (``1 - cos``). The
    ``lambda/2 ||W||^2`` term of the paper is not in here: see
    :mod:`parabit.objectives.regularization`.
    """

    role = "pair"

    def __init__(self, margin: float = 1.0, distance: str = "euclidean", negatives: int = 1):
        super().__init__()
        if distance not in DISTANCES:
            raise ValueError(f"distance must be one of {', '.join(DISTANCES)}; got {distance!r}")
        if negatives < 1:
            raise ValueError(f"negatives must be at least 1; got {negatives}")
        self.margin = float(margin)
        self.distance = distance
        self.negatives = int(negatives)
        self._distance = DISTANCES[distance]

    def forward(self, g1: torch.Tensor, g2: torch.Tensor, n1: torch.Tensor, n2: torch.Tensor) -> torch.Tensor:
        positive = self._distance(g1, g2).unsqueeze(1)  # [B, 1]
        to_side2 = self._distance(g1.unsqueeze(1), n2)  # [B, k]: g1 against side-2 negatives
        to_side1 = self._distance(g2.unsqueeze(1), n1)  # [B, k]: g2 against side-1 negatives
        hinge = F.relu(self.margin + positive - to_side2) + F.relu(self.margin + positive - to_side1)
        return hinge.sum(dim=1).mean()

    def in_batch(
        self, g1: torch.Tensor, g2: torch.Tensor, generator: torch.Generator | None = None, k: int | None = None
    ) -> torch.Tensor:
        """The loss with ``k`` (default: ``negatives``) negatives per pair drawn from the other pairs of the batch
        (needs ``B >= 2``)."""
        index = sample_random_negatives(g1.size(0), k or self.negatives, generator, device=g1.device)
        return self(g1, g2, g1[index], g2[index])

    def loss_and_gradient(self, sentences: torch.Tensor,
                          generator: torch.Generator | None = None) -> tuple[float, torch.Tensor]:
        """:meth:`in_batch`'s loss for ``g1, g2 = sentences[:B], sentences[B:]`` (the same negatives, drawn the same
        way from ``generator``) and its gradient with respect to ``sentences`` (``[2B, D]``), in closed form on the CPU
        (:mod:`parabit.objectives.triplet_hinge`)."""
        from parabit.objectives.triplet_hinge import triplet_hinge  # numba's import only where the fused step runs

        batch_size = sentences.size(0) // 2
        index = sample_random_negatives(batch_size, self.negatives, generator, device=sentences.device).numpy()
        negatives = np.concatenate([index + batch_size, index])  # g1 against side-2 sentences, g2 against side-1 ones
        return triplet_hinge(sentences, negatives, margin=self.margin, distance=self.distance, batch_size=batch_size)
