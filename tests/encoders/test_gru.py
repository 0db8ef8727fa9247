"""GRU: last state is the state at length - 1; mean pools the unpadded states."""

from __future__ import annotations

import torch

from .batches import padded_batch, unpadded_run

LENGTHS = [3, 1, 5]


def test_last_and_mean_match_the_unpadded_run(make_encoder):
    last = make_encoder("gru", hidden_size=4)
    mean = make_encoder("gru", hidden_size=4, pooling="mean")  # same seed, so same weights
    assert isinstance(last.rnn, torch.nn.GRU) and last.output_dim == 4
    ids, lengths = padded_batch(LENGTHS, width=6)
    out_last, out_mean = last(ids, lengths), mean(ids, lengths)
    for row, length in enumerate(LENGTHS):
        reference = unpadded_run(last, ids[row], length)
        torch.testing.assert_close(out_last[row], reference[length - 1])
        torch.testing.assert_close(out_mean[row], reference.mean(dim=0))
