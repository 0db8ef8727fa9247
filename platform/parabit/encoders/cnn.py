"""CNN sentence encoder: a 1-D convolution over word vectors, pooled over real positions."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from parabit.encoders.base import SentenceEncoder
from parabit.encoders.pooling import pooling_function


class CNNEncoder(SentenceEncoder):
    """``ids [B, T], lengths [B] -> [B, filters]``; ``output_dim == filters`` (defaults to ``dim``).

    ``relu(Conv1d(dim -> filters, kernel_size))`` at every position, then ``pooling="max"`` (element-wise
    max over real positions, padding set to -inf) or ``"mean"``. The convolution is "same"-sized: each
    output position t sees words ``t - (k-1)//2 .. t + k//2``; outside the sentence it sees zeros, both
    past the real end (word vectors are zeroed there) and beyond the padded width, so a sentence's
    vector does not depend on how much padding follows it, and one-word sentences work with any kernel.
    """

    POOLINGS = ("max", "mean")

    def __init__(
        self,
        vocab_size: int,
        dim: int,
        *,
        filters: int | None = None,
        kernel_size: int = 3,
        pooling: str = "max",
        initial_vectors: torch.Tensor | None = None,
        sparse: bool = False,
    ):
        super().__init__(vocab_size, dim, initial_vectors=initial_vectors, sparse=sparse)
        if kernel_size < 1:
            raise ValueError(f"kernel_size must be >= 1; got {kernel_size}")
        self.kernel_size = kernel_size
        self.output_dim = filters or dim
        self.pooling = pooling
        self._pool = pooling_function(pooling, self.POOLINGS)
        self.conv = nn.Conv1d(dim, self.output_dim, kernel_size)
        # Left/right zero padding that keeps T output positions, also for even kernel sizes.
        self._padding = ((kernel_size - 1) // 2, kernel_size // 2)

    def forward(self, ids: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        mask = self.mask(ids, lengths)
        words = self.embed(ids, mask).transpose(1, 2)  # Conv1d wants [B, dim, T]
        features = F.relu(self.conv(F.pad(words, self._padding))).transpose(1, 2)  # [B, T, filters]
        return self._pool(features, mask)
