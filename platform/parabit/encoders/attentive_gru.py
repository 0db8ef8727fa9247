"""Attentive GRU (Chen et al. 2019): self-attention pooling over GRU states."""

from __future__ import annotations

from torch import nn

from parabit.encoders.recurrent import RecurrentEncoder


class AttentiveGRUEncoder(RecurrentEncoder):
    """``ids [B, T], lengths [B] -> [B, output_dim]`` with ``output_dim = hidden_size * directions``.

    Self-attention over the GRU states ``H``, softmaxed over real tokens only, sentence = ``H alpha``.
    ``attend(ids, lengths)`` returns ``(sentence, alpha)`` with ``alpha [B, T]``. ``attention_hidden=None``
    scores with ``w^T tanh(H)``; ``attention_hidden=k`` with ``v^T tanh(W H + b)``, W having k units.
    """

    RNN = nn.GRU
    POOLINGS = ("attention",)
