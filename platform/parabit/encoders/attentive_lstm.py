"""Attentive LSTM (Bao et al. 2018, attentive Siamese LSTM): attention pooling over LSTM states."""

from __future__ import annotations

import torch
from torch import nn

from parabit.encoders.recurrent import RecurrentEncoder


class AttentiveLSTMEncoder(RecurrentEncoder):
    """``ids [B, T], lengths [B] -> [B, output_dim]`` with ``output_dim = hidden_size * directions``.

    With ``H`` the LSTM states: ``M = tanh(H)``, ``alpha = softmax(w^T M)`` over the real tokens only,
    sentence ``r = H alpha``. ``attend(ids, lengths)`` returns ``(r, alpha)`` with ``alpha [B, T]``.
    ``attention_hidden=k`` swaps the scorer for a k-unit additive layer (see
    :class:`~parabit.encoders.masked_attention_pooling.MaskedAttentionPooling`).
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
            vocab_size, dim, rnn_class=nn.LSTM, hidden_size=hidden_size, bidirectional=bidirectional,
            num_layers=num_layers, pooling="attention", attention_hidden=attention_hidden,
            initial_vectors=initial_vectors, sparse=sparse,
        )
