"""MaLSTM for paraphrase identification: exp(−L1) similarity read as the probability of "paraphrase"."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from parabit.objectives.malstm_regression import MaLSTMRegressionLoss

# exp(-L1) is exactly 1 for identical encodings: keep log(1 - p) finite.
EPSILON = 1e-6


class MaLSTMClassificationLoss(nn.Module):
    """Binary cross-entropy between ``p = exp(-||h_a - h_b||_1)`` and the 0/1 label: ``[B, D], [B, D], [B] -> []``.

    ``probability(h_a, h_b) -> [B]`` in (0, 1]; a pair is predicted a paraphrase when it reaches a threshold
    (0.5, or one chosen on dev data).
    """

    role = "labelled_pair"

    @staticmethod
    def probability(h_a: torch.Tensor, h_b: torch.Tensor) -> torch.Tensor:
        return MaLSTMRegressionLoss.similarity(h_a, h_b)

    def forward(self, h_a: torch.Tensor, h_b: torch.Tensor, label: torch.Tensor) -> torch.Tensor:
        p = self.probability(h_a, h_b).clamp(EPSILON, 1.0 - EPSILON)
        return F.binary_cross_entropy(p, label.to(p.dtype))
