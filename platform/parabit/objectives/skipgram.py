"""Skip-gram with negative sampling on padded sentences (Mikolov et al. 2013), for BilDRL's joint learning."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from parabit.encoders.base import length_mask


class SkipGramLoss(nn.Module):
    """``forward(word_vectors, ids [B, T], lengths [B], low, high, generator) -> scalar``.

    Every real token predicts each real token up to ``window`` positions away (both sides) against ``negatives``
    context words drawn uniformly from vocabulary ids ``[low, high)`` (the sentence's language):
    ``-log σ(u_c·v_w) - Σ log σ(-u_n·v_w)``, averaged over the (word, context) pairs. ``word_vectors`` is the
    input table (the shared bilingual space); the output (context) table belongs to this module.
    """

    def __init__(self, vocab_size: int, dim: int, window: int = 3, negatives: int = 5):
        super().__init__()
        self.window = window
        self.negatives = negatives
        self.context = nn.Embedding(vocab_size, dim)
        nn.init.zeros_(self.context.weight)

    def forward(self, word_vectors: torch.Tensor, ids: torch.Tensor, lengths: torch.Tensor, low: int, high: int,
                generator: torch.Generator | None = None) -> torch.Tensor:
        mask = length_mask(lengths, ids.size(1))
        centers, contexts = [], []
        for offset in range(1, min(self.window, ids.size(1) - 1) + 1):
            valid = mask[:, :-offset] & mask[:, offset:]
            left, right = ids[:, :-offset][valid], ids[:, offset:][valid]
            centers += [left, right]
            contexts += [right, left]
        if not centers:
            return word_vectors.sum() * 0.0
        center, context = torch.cat(centers), torch.cat(contexts)
        if center.numel() == 0:
            return word_vectors.sum() * 0.0
        v = F.embedding(center, word_vectors)  # [P, D]
        positive = F.logsigmoid((self.context(context) * v).sum(-1))
        draw_device = generator.device if generator is not None else ids.device
        noise = torch.randint(low, high, (center.numel(), self.negatives), generator=generator,
                              device=draw_device).to(ids.device)
        negative = F.logsigmoid(-(self.context(noise) * v.unsqueeze(1)).sum(-1)).sum(-1)
        return -(positive + negative).mean()
