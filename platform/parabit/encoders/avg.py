"""AVG: a sentence is the mean (or sum) of its word vectors (Wieting et al. 2016; SUM: Hermann & Blunsom 2014)."""

from __future__ import annotations

import torch

from parabit.encoders.base import SentenceEncoder
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
        self._pool = pooling_function(pooling, self.POOLINGS)

    def forward(self, ids: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        mask = self.mask(ids, lengths)
        return self._pool(self.embed(ids, mask), mask)
