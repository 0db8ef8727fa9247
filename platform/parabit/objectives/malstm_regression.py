"""MaLSTM regression onto graded similarity (Mueller & Thyagarajan 2016; Bao et al. 2018)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class MaLSTMRegressionLoss(nn.Module):
    """MSE between the Manhattan similarity of two encodings, rescaled to the gold range, and the gold score.

    ``similarity(h_a, h_b) = exp(-||h_a - h_b||_1)`` in (0, 1], per pair: ``[B, D], [B, D] -> [B]``.
    ``predict(h_a, h_b) = low + (high - low) * similarity`` (default 1..5, the SICK / STS-style scale).
    ``forward(h_a, h_b, gold [B]) = mean_b (predict - gold)^2``.

    exp(-L1) decays fast with the L1 distance, so large-norm encodings predict ``low`` with a near-zero
    gradient; keep encodings small (Mueller & Thyagarajan's LSTMs use bounded hidden states).
    """

    role = "labelled_pair"

    def __init__(self, low: float = 1.0, high: float = 5.0):
        super().__init__()
        if not high > low:
            raise ValueError(f"need high > low; got low={low}, high={high}")
        self.low = float(low)
        self.high = float(high)

    @staticmethod
    def similarity(h_a: torch.Tensor, h_b: torch.Tensor) -> torch.Tensor:
        return torch.exp(-(h_a - h_b).abs().sum(dim=-1))

    def predict(self, h_a: torch.Tensor, h_b: torch.Tensor) -> torch.Tensor:
        return self.low + (self.high - self.low) * self.similarity(h_a, h_b)

    def forward(self, h_a: torch.Tensor, h_b: torch.Tensor, gold: torch.Tensor) -> torch.Tensor:
        return F.mse_loss(self.predict(h_a, h_b), gold.to(h_a.dtype))
