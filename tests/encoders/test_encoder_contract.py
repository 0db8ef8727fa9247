"""The contract every registered encoder keeps: shape, padding never matters, gradients reach every parameter."""

from __future__ import annotations

import pytest
import torch

from parabit.encoders import ENCODERS, PAD_ID
from parabit.encoders.recurrent import packed_states

from .batches import VOCAB, padded_batch

# The word-table encoders (every name in the registry but the transformer, which needs a checkpoint folder and keeps
# the same contract in tests/encoders/test_transformer.py), plus the non-default poolings, so each code path meets it.
WORD_TABLE_ENCODERS = [name for name in ENCODERS if name != "transformer"]
VARIANTS = [(name, {}) for name in WORD_TABLE_ENCODERS] + [
    ("avg", {"pooling": "sum"}),
    ("lstm", {"pooling": "mean"}),
    ("bilstm", {"pooling": "mean"}),
    ("gru", {"pooling": "mean"}),
    ("gru", {"bidirectional": True}),
    ("attentive_lstm", {"bidirectional": True}),
    ("attentive_gru", {"attention_hidden": 4}),
    ("cnn", {"pooling": "mean", "kernel_size": 2, "filters": 5}),
    ("cnn", {"kernel_size": 5}),
    ("linear_bow", {"output_size": 3}),
    ("lstm", {"num_layers": 2, "hidden_size": 4}),
]
IDS = [f"{name}-{options}" if options else name for name, options in VARIANTS]

LENGTHS = [5, 3, 1]


@pytest.mark.parametrize(("name", "options"), VARIANTS, ids=IDS)
def test_output_shape(make_encoder, name, options):
    encoder = make_encoder(name, **options)
    ids, lengths = padded_batch(LENGTHS)
    out = encoder(ids, lengths)
    assert out.shape == (len(LENGTHS), encoder.output_dim)
    assert out.dtype == torch.float32
    assert torch.isfinite(out).all()


@pytest.mark.parametrize(("name", "options"), VARIANTS, ids=IDS)
def test_appending_padding_changes_nothing(make_encoder, name, options):
    encoder = make_encoder(name, **options)
    ids, lengths = padded_batch(LENGTHS)
    wider = torch.cat([ids, torch.full((len(LENGTHS), 4), PAD_ID)], dim=1)
    torch.testing.assert_close(encoder(wider, lengths), encoder(ids, lengths), rtol=0, atol=1e-6)


@pytest.mark.parametrize(("name", "options"), VARIANTS, ids=IDS)
def test_tokens_past_the_length_are_ignored(make_encoder, name, options):
    # Even non-PAD ids past a sentence's end (a sloppy collator) must not reach its vector.
    encoder = make_encoder(name, **options)
    ids, lengths = padded_batch(LENGTHS)
    garbage = torch.where(ids == PAD_ID, torch.randint(1, VOCAB, ids.shape), ids)
    torch.testing.assert_close(encoder(garbage, lengths), encoder(ids, lengths), rtol=0, atol=1e-6)


@pytest.mark.parametrize(("name", "options"), VARIANTS, ids=IDS)
def test_a_sentence_encodes_the_same_alone_and_in_a_batch(make_encoder, name, options):
    encoder = make_encoder(name, **options)
    ids, lengths = padded_batch(LENGTHS)
    batch = encoder(ids, lengths)
    for row, length in enumerate(LENGTHS):
        alone = encoder(ids[row : row + 1, :length], lengths[row : row + 1])
        torch.testing.assert_close(alone[0], batch[row], rtol=0, atol=1e-6)


@pytest.mark.parametrize(("name", "options"), VARIANTS, ids=IDS)
def test_gradient_reaches_every_parameter(make_encoder, name, options):
    encoder = make_encoder(name, **options)
    ids, lengths = padded_batch(LENGTHS)
    encoder(ids, lengths).pow(2).sum().backward()
    for parameter_name, parameter in encoder.named_parameters():
        assert parameter.grad is not None, parameter_name
        grad = parameter.grad.to_dense()
        assert torch.isfinite(grad).all(), parameter_name
        assert grad.abs().sum() > 0, parameter_name
    # Only the rows of words in the batch get gradient; never the padding row. (Not necessarily *every*
    # used row: under CNN max-pooling a word that wins no maximum gets none, rightly.)
    table_grad = encoder.embedding.weight.grad.to_dense()
    rows_with_grad = set(torch.nonzero(table_grad.abs().sum(dim=1)).flatten().tolist())
    assert rows_with_grad and rows_with_grad <= set(ids[ids != PAD_ID].tolist())


@pytest.mark.parametrize("name", WORD_TABLE_ENCODERS)
def test_lengths_outside_the_padded_width_are_rejected(make_encoder, name):
    encoder = make_encoder(name)
    ids, _ = padded_batch([3, 2])
    with pytest.raises(ValueError, match="length"):
        encoder(ids, torch.tensor([3, 0]))
    with pytest.raises(ValueError, match="length"):
        encoder(ids, torch.tensor([4, 2]))



@pytest.mark.parametrize("name", ["lstm", "bilstm", "gru", "attentive_lstm", "attentive_gru", "gran"])
def test_under_bfloat16_autocast_the_recurrence_runs_in_float32(make_encoder, name):
    """Autocast would run the LSTM/GRU in half precision (on CPU in bfloat16: states off by ~1e-3 here) with no loss
    scaling; the recurrence stays in float32, so its states are those of float32 (what follows it may round)."""
    encoder = make_encoder(name)
    ids, lengths = padded_batch(LENGTHS)
    words = encoder.embedding(ids)
    exact = packed_states(encoder.rnn, words, lengths)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        mixed = packed_states(encoder.rnn, words, lengths)
    for got, want in zip(mixed, exact):
        assert got.dtype == torch.float32
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)
    if name in ("lstm", "bilstm", "gru"):  # nothing after the recurrence but pooling: the vectors are float32's too
        with torch.autocast("cpu", dtype=torch.bfloat16):
            mixed_vectors = encoder(ids, lengths)
        torch.testing.assert_close(mixed_vectors, encoder(ids, lengths), rtol=1e-5, atol=1e-6)
