"""Attentive GRU (Chen et al. 2019): self-attention pooling over GRU states."""

from __future__ import annotations

import torch
from torch import nn

from parabit.encoders.recurrent import RecurrentEncoder


class AttentiveGRUEncoder(RecurrentEncoder):
    """``ids [B, T], lengths [B] -> [B, output_dim]`` with ``output_dim = hidden_size * directions``.

    Self-attention over the GRU states ``H``, softmaxed over real tokens only, sentence = ``H alpha``.
    ``attend(ids, lengths)`` returns ``(sentence, alpha)`` with ``alpha [B, T]``. ``attention_hidden=None``
    scores with ``w^T tanh(H)``; ``attention_hidden=k`` with ``v^T tanh(W H + b)``, W having k units.
    """

    POOLINGS = ("attention",)

    def __init__(
        self,
        vocab_size: int,
        dim: int,
        *,
        hidden_size: int | None = None,
        bidirectional: bool = False,
        num_layers: int = 1,
        attention_hidden: int | None = None,
        initial_vectors: torch.Tensor | None = None,
        sparse: bool = False,
    ):
        super().__init__(
            vocab_size, dim, rnn_class=nn.GRU, hidden_size=hidden_size, bidirectional=bidirectional,
            num_layers=num_layers, pooling="attention", attention_hidden=attention_hidden,
            initial_vectors=initial_vectors, sparse=sparse,
        )
