"""GRAN: gated word vectors, averaged."""

from __future__ import annotations

import torch

from parabit.encoders import AvgEncoder, GRANEncoder

from .batches import DIM, VOCAB, padded_batch, unpadded_run

LENGTHS = [4, 2]


def test_matches_the_gate_formula_on_the_unpadded_sentence(make_encoder):
    encoder = make_encoder("gran", hidden_size=5)
    assert encoder.output_dim == DIM
    ids, lengths = padded_batch(LENGTHS, width=6)
    out = encoder(ids, lengths)
    for row, length in enumerate(LENGTHS):
        x = encoder.embedding(ids[row, :length])  # [length, dim]
        h = unpadded_run(encoder, ids[row], length)  # [length, hidden]
        gate = torch.sigmoid(x @ encoder.gate_word.weight.T + encoder.gate_word.bias + h @ encoder.gate_state.weight.T)
        torch.testing.assert_close(out[row], (x * gate).mean(dim=0))


def test_an_open_gate_makes_it_avg():
    torch.manual_seed(0)
    vectors = torch.randn(VOCAB, DIM)
    gran = GRANEncoder(VOCAB, DIM, initial_vectors=vectors)
    with torch.no_grad():  # sigmoid(0 * x + 0 * h + 50) == 1 in float32
        gran.gate_word.weight.zero_()
        gran.gate_state.weight.zero_()
        gran.gate_word.bias.fill_(50.0)
    ids, lengths = padded_batch(LENGTHS, width=6)
    torch.testing.assert_close(gran(ids, lengths), AvgEncoder(VOCAB, DIM, initial_vectors=vectors)(ids, lengths))
