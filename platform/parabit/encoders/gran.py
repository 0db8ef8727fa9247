"""GRAN: gated recurrent averaging network (Wieting & Gimpel 2017)."""

from __future__ import annotations

import torch
from torch import nn

from parabit.encoders.base import SentenceEncoder
from parabit.encoders.pooling import masked_mean
from parabit.encoders.recurrent import packed_states


class GRANEncoder(SentenceEncoder):
    """``ids [B, T], lengths [B] -> [B, dim]``; ``output_dim == dim`` (the gate scales word vectors).

    An LSTM reads the sentence; at each position the word vector is gated by the word and the LSTM
    state, ``a_t = x_t * sigmoid(W_x x_t + W_h h_t + b)``, and the sentence is the mean of ``a_t`` over
    real tokens. It keeps AVG's inductive bias (an average of word vectors) while context decides how
    much of each word gets in. ``hidden_size`` (the LSTM's) defaults to ``dim``.
    """

    def __init__(
        self,
        vocab_size: int,
        dim: int,
        *,
        hidden_size: int | None = None,
        initial_vectors: torch.Tensor | None = None,
        sparse: bool = False,
    ):
        super().__init__(vocab_size, dim, initial_vectors=initial_vectors, sparse=sparse)
        self.hidden_size = hidden_size or dim
        self.rnn = nn.LSTM(dim, self.hidden_size, batch_first=True)
        self.gate_word = nn.Linear(dim, dim)  # W_x and the gate's single bias b
        self.gate_state = nn.Linear(self.hidden_size, dim, bias=False)  # W_h

    def forward(self, ids: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        mask = self.mask(ids, lengths)
        words = self.embed(ids, mask)
        states, _ = packed_states(self.rnn, words, lengths)
        gated = words * torch.sigmoid(self.gate_word(words) + self.gate_state(states))
        return masked_mean(gated, mask)
