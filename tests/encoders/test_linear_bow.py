"""Linear BOW: W times the sum of the word vectors."""

from __future__ import annotations

import torch

from parabit.encoders import LinearBOWEncoder, PAD_ID

VECTORS = torch.tensor([[0.0, 0.0], [1.0, 2.0], [3.0, -1.0]])


def test_sum_of_projected_words_by_hand():
    encoder = LinearBOWEncoder(3, 2, output_size=3, initial_vectors=VECTORS)
    with torch.no_grad():
        encoder.projection.weight.copy_(torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]))
    ids = torch.tensor([[1, 2, PAD_ID], [2, PAD_ID, PAD_ID]])
    # W(1,2) + W(3,-1) = (1,2,3) + (3,-1,2) = (4,1,5);  W(3,-1) = (3,-1,2).
    out = encoder(ids, torch.tensor([2, 1]))
    assert torch.equal(out, torch.tensor([[4.0, 1.0, 5.0], [3.0, -1.0, 2.0]]))
    assert encoder.output_dim == 3
    assert encoder.projection.bias is None


def test_sparse_table_dense_projection():
    encoder = LinearBOWEncoder(3, 2, sparse=True)
    encoder(torch.tensor([[1, 2]]), torch.tensor([2])).sum().backward()
    assert encoder.embedding.weight.grad.is_sparse
    assert not encoder.projection.weight.grad.is_sparse
