"""LSTM and BiLSTM sentence encoders (last state or mean of states)."""

from __future__ import annotations

from torch import nn

from parabit.encoders.recurrent import RecurrentEncoder


class LSTMEncoder(RecurrentEncoder):
    """``nn.LSTM`` over the word vectors: ``ids [B, T], lengths [B] -> [B, output_dim]``.

    ``output_dim = hidden_size * (2 if bidirectional else 1)``, ``hidden_size`` defaulting to ``dim``.
    ``pooling="last"``: the final hidden state, i.e. the state at position ``length - 1`` (and, when
    bidirectional, the backward state at position 0), concatenated. ``pooling="mean"``: the mean of the
    top-layer states over real tokens.
    """

    RNN = nn.LSTM
    POOLINGS = ("last", "mean")


class BiLSTMEncoder(LSTMEncoder):
    """:class:`LSTMEncoder` with ``bidirectional=True``: ``output_dim = 2 * hidden_size``."""

    def __init__(self, vocab_size: int, dim: int, **options):
        super().__init__(vocab_size, dim, bidirectional=True, **options)
