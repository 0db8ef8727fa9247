"""Dictionary L2: encode a word's definition onto the word's vector (Chen et al. 2019)."""

from __future__ import annotations

import torch
from torch import nn


class DictionaryL2Loss(nn.Module):
    """``forward(encoded [B, D], target [B, D]) = mean_b ||encoded_b - target_b||^2`` (squared L2).

    ``encoded``: encodings of the definitions; ``target``: the defined words' vectors. Gradients flow into
    ``target`` too if it requires them; pass ``target.detach()`` to keep the word vectors fixed.
    """

    role = "dictionary"

    def forward(self, encoded: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return (encoded - target).pow(2).sum(dim=-1).mean()
