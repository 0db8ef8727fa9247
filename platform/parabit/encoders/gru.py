"""GRU sentence encoder (last state or mean of states)."""

from __future__ import annotations

import torch
from torch import nn

from parabit.encoders.recurrent import RecurrentEncoder


class GRUEncoder(RecurrentEncoder):
    """``nn.GRU`` over the word vectors: ``ids [B, T], lengths [B] -> [B, output_dim]``.

    ``output_dim = hidden_size * (2 if bidirectional else 1)``, ``hidden_size`` defaulting to ``dim``.
    ``pooling="last"``: the state at position ``length - 1``; ``"mean"``: mean of the states over real tokens.
    """

    POOLINGS = ("last", "mean")

    def __init__(
        self,
        vocab_size: int,
        dim: int,
        *,
        hidden_size: int | None = None,
        bidirectional: bool = False,
        num_layers: int = 1,
        pooling: str = "last",
        initial_vectors: torch.Tensor | None = None,
        sparse: bool = False,
    ):
        super().__init__(
            vocab_size, dim, rnn_class=nn.GRU, hidden_size=hidden_size, bidirectional=bidirectional,
            num_layers=num_layers, pooling=pooling, initial_vectors=initial_vectors, sparse=sparse,
        )
