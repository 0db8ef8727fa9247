"""Attentive LSTM and attentive GRU: both pool with the one MaskedAttentionPooling."""

from __future__ import annotations

import pytest
import torch

from parabit.encoders import MaskedAttentionPooling

from .batches import padded_batch, unpadded_run

LENGTHS = [4, 1, 3]


@pytest.mark.parametrize(
    ("name", "rnn_class", "options"),
    [
        ("attentive_lstm", torch.nn.LSTM, {}),
        ("attentive_lstm", torch.nn.LSTM, {"bidirectional": True}),
        ("attentive_gru", torch.nn.GRU, {}),
        ("attentive_gru", torch.nn.GRU, {"attention_hidden": 3}),
    ],
)
def test_attend_weights_and_sentence(make_encoder, name, rnn_class, options):
    encoder = make_encoder(name, **options)
    assert isinstance(encoder.rnn, rnn_class)
    assert isinstance(encoder.attention, MaskedAttentionPooling)
    ids, lengths = padded_batch(LENGTHS, width=6)
    sentence, weights = encoder.attend(ids, lengths)
    assert weights.shape == (3, 6)
    torch.testing.assert_close(weights.sum(dim=1), torch.ones(3))
    real = torch.arange(6).unsqueeze(0) < lengths.unsqueeze(1)
    assert (weights[~real] == 0).all() and (weights[real] > 0).all()
    assert torch.equal(encoder(ids, lengths), sentence)
    # r = H alpha, with H the states of the sentence run alone.
    for row, length in enumerate(LENGTHS):
        states = unpadded_run(encoder, ids[row], length)
        torch.testing.assert_close(sentence[row], weights[row, :length] @ states)
