"""AVG: a sentence is the mean (or sum) of its word vectors (Wieting et al. 2016; SUM: Hermann & Blunsom 2014)."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from parabit.encoders.base import PAD_ID, SentenceEncoder
from parabit.encoders.pooling import pooling_function


class AvgEncoder(SentenceEncoder):
    """Word averaging: ``ids [B, T], lengths [B] -> [B, dim]``; ``output_dim == dim``.

    ``pooling="mean"`` averages the word vectors of the real tokens (the AVG model); ``"sum"`` adds them
    (the ADD/SUM model used with J_bi by Hermann & Blunsom). The word table is the only parameter, so
    this model is meant for ``sparse=True`` with SparseAdam or Adagrad on large vocabularies.
    """

    POOLINGS = ("mean", "sum")

    def __init__(
        self,
        vocab_size: int,
        dim: int,
        *,
        pooling: str = "mean",
        initial_vectors: torch.Tensor | None = None,
        sparse: bool = False,
    ):
        super().__init__(vocab_size, dim, initial_vectors=initial_vectors, sparse=sparse)
        self.pooling = pooling
        pooling_function(pooling, self.POOLINGS)  # validates the name

    def forward(self, ids: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        # embedding_bag reduces inside the lookup: no [B, T, dim] intermediate, and its backward writes the
        # sparse gradient directly. Positions past each length become PAD, which embedding_bag leaves out of
        # both the sum and the mean's count.
        ids = ids.masked_fill(~self.mask(ids, lengths), PAD_ID)
        return F.embedding_bag(ids, self.embedding.weight, mode=self.pooling, padding_idx=PAD_ID,
                               sparse=self.embedding.sparse)
