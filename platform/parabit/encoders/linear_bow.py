"""Linear bag of words: the sum of linearly projected word vectors."""

from __future__ import annotations

import torch
from torch import nn

from parabit.encoders.base import SentenceEncoder
from parabit.encoders.pooling import masked_sum


class LinearBOWEncoder(SentenceEncoder):
    """``ids [B, T], lengths [B] -> [B, output_size]`` (``output_size`` defaults to ``dim``).

    Computes ``sum_t W x_t`` over the real tokens. The projection has no bias: a bias would add
    ``length * b``, making the vector depend on sentence length alone. Because ``W`` is linear the sum is
    taken first and projected once (``W sum_t x_t``), which is the same vector at 1/T the cost. Meant for
    ``sparse=True`` on the word table; ``projection`` is a small dense layer.
    """

    def __init__(
        self,
        vocab_size: int,
        dim: int,
        *,
        output_size: int | None = None,
        initial_vectors: torch.Tensor | None = None,
        sparse: bool = False,
    ):
        super().__init__(vocab_size, dim, initial_vectors=initial_vectors, sparse=sparse)
        self.output_dim = output_size or dim
        self.projection = nn.Linear(dim, self.output_dim, bias=False)

    def forward(self, ids: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        mask = self.mask(ids, lengths)
        return self.projection(masked_sum(self.embed(ids, mask), mask))
