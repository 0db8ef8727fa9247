"""GRU sentence encoder (last state or mean of states)."""

from __future__ import annotations

from torch import nn

from parabit.encoders.recurrent import RecurrentEncoder


class GRUEncoder(RecurrentEncoder):
    """``nn.GRU`` over the word vectors: ``ids [B, T], lengths [B] -> [B, output_dim]``.

    ``output_dim = hidden_size * (2 if bidirectional else 1)``, ``hidden_size`` defaulting to ``dim``.
    ``pooling="last"``: the state at position ``length - 1``; ``"mean"``: mean of the states over real tokens.
    """

    RNN = nn.GRU
    POOLINGS = ("last", "mean")
