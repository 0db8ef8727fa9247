"""LSTM / BiLSTM: the pooled state is the state of the unpadded sentence, not of its padding."""

from __future__ import annotations

import pytest
import torch

from parabit.encoders import BiLSTMEncoder, LSTMEncoder

from .batches import DIM, VOCAB, padded_batch, unpadded_run

LENGTHS = [2, 5, 1, 4]  # unsorted on purpose: packing must restore the batch order


def test_last_state_is_the_state_at_length_minus_one(make_encoder):
    encoder = make_encoder("lstm", hidden_size=5)
    ids, lengths = padded_batch(LENGTHS, width=7)
    out = encoder(ids, lengths)
    for row, length in enumerate(LENGTHS):
        torch.testing.assert_close(out[row], unpadded_run(encoder, ids[row], length)[length - 1])


def test_bilstm_last_state_joins_forward_end_and_backward_start(make_encoder):
    encoder = make_encoder("bilstm", hidden_size=5)
    assert encoder.output_dim == 10
    ids, lengths = padded_batch(LENGTHS, width=7)
    out = encoder(ids, lengths)
    for row, length in enumerate(LENGTHS):
        reference = unpadded_run(encoder, ids[row], length)  # [length, 2 * 5]: forward | backward
        # Forward direction ends at the last real word; backward direction ends at the first word.
        torch.testing.assert_close(out[row, :5], reference[length - 1, :5])
        torch.testing.assert_close(out[row, 5:], reference[0, 5:])


@pytest.mark.parametrize("name", ["lstm", "bilstm"])
def test_mean_pooling_is_the_mean_of_the_unpadded_states(make_encoder, name):
    encoder = make_encoder(name, pooling="mean")
    ids, lengths = padded_batch(LENGTHS, width=7)
    out = encoder(ids, lengths)
    for row, length in enumerate(LENGTHS):
        torch.testing.assert_close(out[row], unpadded_run(encoder, ids[row], length).mean(dim=0))


def test_bilstm_is_a_bidirectional_lstm():
    encoder = BiLSTMEncoder(VOCAB, DIM, hidden_size=3)
    assert isinstance(encoder, LSTMEncoder) and encoder.rnn.bidirectional
    assert isinstance(encoder.rnn, torch.nn.LSTM)


def test_plain_lstm_has_no_attention():
    encoder = LSTMEncoder(VOCAB, DIM)
    with pytest.raises(ValueError, match="attention"):
        encoder.attend(*padded_batch([2]))
    with pytest.raises(ValueError, match="last, mean"):
        LSTMEncoder(VOCAB, DIM, pooling="attention")
