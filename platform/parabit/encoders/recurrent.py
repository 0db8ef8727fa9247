"""What the recurrent encoders share: running an ``nn.LSTM``/``nn.GRU`` over padded batches, and pooling.

Sequences are packed (``pack_padded_sequence``), so the recurrence never steps over padding: the last
state of a sentence is the state at position ``length - 1`` exactly, whatever the padded width.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from parabit.encoders.base import SentenceEncoder
from parabit.encoders.masked_attention_pooling import MaskedAttentionPooling
from parabit.encoders.pooling import masked_mean


def packed_states(
    rnn: nn.RNNBase, inputs: torch.Tensor, lengths: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """Run a ``batch_first`` RNN over ``inputs [B, T, D]`` with ``lengths [B]``.

    The recurrence runs in float32 whatever autocast is in force. Returns ``states [B, T, H * directions]`` (top
    layer, zero at padding) and ``last [B, H * directions]``:
    the top layer's final state of each direction, concatenated. For the forward direction that is the
    state at ``length - 1``; for the backward direction the state at position 0 (after reading the whole
    sentence right to left).
    """
    # pack_padded_sequence wants lengths on the CPU; enforce_sorted=False lets batches come unsorted and
    # the RNN returns h_n in the original batch order.
    packed = pack_padded_sequence(inputs.float(), lengths.cpu(), batch_first=True, enforce_sorted=False)
    # In float32 under autocast too: autocast would run the recurrence (cuDNN's, or oneDNN's on CPU) in half
    # precision with no loss scaling, its rounding compounding over every step of a sentence.
    with torch.autocast(inputs.device.type, enabled=False):
        output, hidden = rnn(packed)
    states, _ = pad_packed_sequence(output, batch_first=True, total_length=inputs.size(1))
    h_n = hidden[0] if isinstance(hidden, tuple) else hidden  # nn.LSTM returns (h_n, c_n)
    directions = 2 if rnn.bidirectional else 1
    top_layer = h_n.view(rnn.num_layers, directions, inputs.size(0), rnn.hidden_size)[-1]
    return states, torch.cat(tuple(top_layer), dim=-1)


class RecurrentEncoder(SentenceEncoder):
    """An RNN over the word vectors, pooled to one vector: ``ids [B, T], lengths [B] -> [B, output_dim]``.

    ``output_dim = hidden_size * (2 if bidirectional else 1)``; ``hidden_size`` defaults to ``dim``.
    ``pooling``: ``"last"`` (final state of each direction), ``"mean"`` (mean of the top-layer states over
    real tokens) or ``"attention"`` (:class:`MaskedAttentionPooling`; :meth:`attend` also returns the
    weights; ``attention_hidden=k`` scores with a k-unit additive layer instead of ``w^T tanh(H)``).
    Subclasses set ``RNN`` (the recurrence) and ``POOLINGS`` (allowed poolings, the first one the default);
    build those, not this class.
    """

    RNN: type[nn.RNNBase]
    POOLINGS: tuple[str, ...] = ("last", "mean", "attention")

    def __init__(
        self,
        vocab_size: int,
        dim: int,
        *,
        hidden_size: int | None = None,
        bidirectional: bool = False,
        num_layers: int = 1,
        pooling: str | None = None,
        attention_hidden: int | None = None,
        initial_vectors: torch.Tensor | None = None,
        sparse: bool = False,
    ):
        super().__init__(vocab_size, dim, initial_vectors=initial_vectors, sparse=sparse)
        pooling = pooling or self.POOLINGS[0]
        if pooling not in self.POOLINGS:
            raise ValueError(f"pooling must be one of {', '.join(self.POOLINGS)}; got {pooling!r}")
        self.pooling = pooling
        self.hidden_size = hidden_size or dim
        self.bidirectional = bidirectional
        self.rnn = self.RNN(
            dim, self.hidden_size, num_layers=num_layers, batch_first=True, bidirectional=bidirectional
        )
        self.output_dim = self.hidden_size * (2 if bidirectional else 1)
        self.attention = (
            MaskedAttentionPooling(self.output_dim, hidden=attention_hidden) if pooling == "attention" else None
        )

    def states(self, ids: torch.Tensor, lengths: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``(states [B, T, output_dim], last [B, output_dim], mask [B, T])`` for a batch (see :func:`packed_states`)."""
        mask = self.mask(ids, lengths)
        states, last = packed_states(self.rnn, self.embed(ids, mask), lengths)
        return states, last, mask

    def attend(self, ids: torch.Tensor, lengths: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(sentence [B, output_dim], weights [B, T])``; weights sum to 1 per row and are 0 at padding."""
        if self.attention is None:
            raise ValueError(f"attend() needs pooling='attention'; this encoder pools by {self.pooling!r}")
        states, _, mask = self.states(ids, lengths)
        return self.attention(states, mask)

    def forward(self, ids: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        if self.attention is not None:
            return self.attend(ids, lengths)[0]
        states, last, mask = self.states(ids, lengths)
        return last if self.pooling == "last" else masked_mean(states, mask)
