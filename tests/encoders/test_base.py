"""The shared pieces: padding id, word-table construction, masks, touched rows."""

from __future__ import annotations

import pytest
import torch

from parabit.encoders import PAD_ID, SentenceEncoder, make_word_embedding, touched_rows
from parabit.encoders.base import length_mask


def test_pad_id_is_zero():
    assert PAD_ID == 0


def test_initial_vectors_are_copied_and_padding_row_is_zeroed():
    # GloVe-style rows aligned to the vocabulary; row 0 (PAD) deliberately non-zero in the source.
    vectors = torch.arange(12, dtype=torch.float32).view(4, 3) + 1.0
    table = make_word_embedding(4, 3, initial_vectors=vectors)
    assert torch.equal(table.weight[1:], vectors[1:])
    assert torch.equal(table.weight[PAD_ID], torch.zeros(3))
    assert table.padding_idx == PAD_ID
    assert torch.equal(vectors[0], torch.tensor([1.0, 2.0, 3.0]))  # the caller's tensor is not modified
    vectors[1] = 100.0
    assert table.weight[1, 0] == 4.0  # copied, not aliased


def test_wrong_shaped_initial_vectors_are_rejected():
    with pytest.raises(ValueError, match=r"expected \(5, 3\)"):
        make_word_embedding(5, 3, initial_vectors=torch.zeros(4, 3))


@pytest.mark.parametrize("sparse", [False, True])
def test_sparse_flag_reaches_the_table(sparse):
    table = make_word_embedding(10, 2, sparse=sparse)
    assert table.sparse is sparse
    table(torch.tensor([[1, 2, PAD_ID]])).sum().backward()
    assert table.weight.grad.is_sparse is sparse


def test_without_initial_vectors_only_the_padding_row_is_zero():
    table = make_word_embedding(10, 4)
    assert torch.equal(table.weight[PAD_ID], torch.zeros(4))
    assert (table.weight[1:].abs().sum(dim=1) > 0).all()


def test_mask_marks_positions_below_the_length():
    encoder = SentenceEncoder(10, 2)
    ids = torch.tensor([[3, 4, 5], [6, 0, 0]])
    expected = torch.tensor([[True, True, True], [True, False, False]])
    assert torch.equal(encoder.mask(ids, torch.tensor([3, 1])), expected)
    assert torch.equal(length_mask(torch.tensor([3, 1]), 3), expected)
    assert encoder.output_dim == 2


def test_mask_rejects_lengths_of_the_wrong_shape():
    with pytest.raises(ValueError, match="expected"):
        SentenceEncoder(10, 2).mask(torch.ones(2, 3, dtype=torch.long), torch.tensor([1, 2, 3]))


def test_embed_zeroes_positions_past_the_length_whatever_their_id():
    encoder = SentenceEncoder(10, 2)
    ids = torch.tensor([[3, 7]])  # 7 sits past the length: a stray id, not PAD
    words = encoder.embed(ids, encoder.mask(ids, torch.tensor([1])))
    assert torch.equal(words[0, 0], encoder.embedding.weight[3])
    assert torch.equal(words[0, 1], torch.zeros(2))


def test_touched_rows_are_the_distinct_real_ids_without_pad():
    ids = torch.tensor([[5, 2, 5, 0], [9, 0, 0, 0], [2, 7, 0, 0]])
    lengths = torch.tensor([3, 1, 2])
    assert touched_rows(ids, lengths).tolist() == [2, 5, 7, 9]
    # A stray id past a length is not a touched row.
    ids[1, 2] = 4
    assert touched_rows(ids, lengths).tolist() == [2, 5, 7, 9]
