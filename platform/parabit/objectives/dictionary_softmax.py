"""Dictionary retrieval loss: a definition's encoding should be nearest (by cosine) to its own word among every word
of that word's language: a softmax over the candidates, the reverse-dictionary search that retrieval then does.
Not Chen et al.'s L2; offered beside it because L2 regression onto 50-d vectors leaves held-out words near chance
here (the BilDRL part of the reproduction, ``parabit reproduce --seed-paper bildrl``)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from parabit.objectives.cosine import cosine_matrix


class DictionarySoftmaxLoss(nn.Module):
    """``forward(encoded [B, D], table [V, D], word_ids [B], ranges) =`` cross-entropy of ``word_ids`` under
    ``cos(encoded, table) / temperature``, each row's candidates being the id range (``[low, high)`` of ``ranges``)
    its word lies in: a word is told apart from the other words of its language only. The logits and the loss are
    float32 under autocast."""

    role = "dictionary"

    def __init__(self, temperature: float = 0.05):
        super().__init__()
        if temperature <= 0:
            raise ValueError(f"temperature must be positive, got {temperature}")
        self.temperature = temperature

    def forward(self, encoded: torch.Tensor, table: torch.Tensor, word_ids: torch.Tensor,
                ranges: list[tuple[int, int]]) -> torch.Tensor:
        logits = cosine_matrix(encoded, table) / self.temperature  # float32 under autocast
        allowed = torch.zeros_like(logits, dtype=torch.bool)
        for low, high in ranges:
            rows = (word_ids >= low) & (word_ids < high)
            allowed[rows, low:high] = True
        if not bool(allowed[torch.arange(len(word_ids)), word_ids].all()):
            raise ValueError("a word id lies in none of the candidate ranges")
        return F.cross_entropy(logits.masked_fill(~allowed, float("-inf")), word_ids)
