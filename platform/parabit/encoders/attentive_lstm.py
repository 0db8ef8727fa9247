"""Attentive LSTM (Bao et al. 2018, attentive Siamese LSTM): attention pooling over LSTM states."""

from __future__ import annotations

from torch import nn

from parabit.encoders.recurrent import RecurrentEncoder


class AttentiveLSTMEncoder(RecurrentEncoder):
    """``ids [B, T], lengths [B] -> [B, output_dim]`` with ``output_dim = hidden_size * directions``.

    With ``H`` the LSTM states: ``M = tanh(H)``, ``alpha = softmax(w^T M)`` over the real tokens only,
    sentence ``r = H alpha``. ``attend(ids, lengths)`` returns ``(r, alpha)`` with ``alpha [B, T]``.
    ``attention_hidden=k`` swaps the scorer for a k-unit additive layer (see
    :class:`~parabit.encoders.masked_attention_pooling.MaskedAttentionPooling`).
    """

    RNN = nn.LSTM
    POOLINGS = ("attention",)
