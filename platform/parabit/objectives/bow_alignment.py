"""Bag-of-words alignment (BilBOWA, Gouws et al. 2015): a sentence's mean word vector should equal its translation's."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from parabit.encoders.base import PAD_ID, length_mask


class BagOfWordsAlignmentLoss(nn.Module):
    """``forward(word_vectors, ids_a, len_a, ids_b, len_b) = mean_b ||mean(x_a) - mean(x_b)||²`` over the real
    tokens of each side of a batch of translation pairs (no negatives: the skip-gram terms keep the space apart)."""

    def forward(self, word_vectors: torch.Tensor, ids_a: torch.Tensor, len_a: torch.Tensor, ids_b: torch.Tensor,
                len_b: torch.Tensor) -> torch.Tensor:
        return (_mean_vector(word_vectors, ids_a, len_a) - _mean_vector(word_vectors, ids_b, len_b)).pow(2).sum(-1).mean()


def _mean_vector(word_vectors: torch.Tensor, ids: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    ids = ids.masked_fill(~length_mask(lengths, ids.size(1)), PAD_ID)
    return F.embedding_bag(ids, word_vectors, mode="mean", padding_idx=PAD_ID)
