"""Attention pooling over the states of a sequence, restricted to real tokens.

Shared by the attentive LSTM (Bao et al. 2018) and the attentive GRU (Chen et al. 2019).
"""

from __future__ import annotations

import torch
from torch import nn

from parabit.encoders.pooling import masked_sum


class MaskedAttentionPooling(nn.Module):
    """``states [B, T, D], mask [B, T] -> (pooled [B, D], weights [B, T])``.

    Scores each position, softmaxes the scores over the real tokens only and returns the weighted sum of
    the states with the weights. Weights of each row sum to 1 and are exactly 0 at padding (the padding
    scores are set to -inf before the softmax, so padding takes no probability mass at all).

    ``hidden=None`` scores as in Bao et al. / Zhou et al. 2016: ``M = tanh(H)``, ``score = w^T M``.
    ``hidden=k`` scores with a k-unit additive layer, ``score = v^T tanh(W H + b)`` (the usual
    self-attention of Lin et al. 2017 / Yang et al. 2016).
    """

    def __init__(self, input_dim: int, *, hidden: int | None = None):
        super().__init__()
        self.input_dim = input_dim
        self.hidden = hidden
        self.projection = nn.Linear(input_dim, hidden) if hidden is not None else None
        # No bias on the scorer: a constant added to every score cancels in the softmax.
        self.scorer = nn.Linear(hidden if hidden is not None else input_dim, 1, bias=False)

    def forward(self, states: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        projected = self.projection(states) if self.projection is not None else states
        scores = self.scorer(torch.tanh(projected)).squeeze(-1)
        weights = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)
        pooled = masked_sum(states * weights.unsqueeze(-1), mask)
        return pooled, weights
