"""AVG / SUM: the hand-computable model, and the sparse-table training it is meant for."""

from __future__ import annotations

import pytest
import torch

from parabit.encoders import AvgEncoder, PAD_ID

# Word vectors, 2-d: row i is the vector of id i (row 0 is PAD and gets zeroed).
VECTORS = torch.tensor([[9.0, 9.0], [1.0, 2.0], [3.0, 0.0], [-1.0, 4.0], [0.0, 0.0], [5.0, 5.0]])


def test_mean_and_sum_by_hand():
    ids = torch.tensor([[1, 2, 3], [2, PAD_ID, PAD_ID]])
    lengths = torch.tensor([3, 1])
    mean = AvgEncoder(6, 2, initial_vectors=VECTORS)(ids, lengths)
    add = AvgEncoder(6, 2, pooling="sum", initial_vectors=VECTORS)(ids, lengths)
    # Sentence 0: (1,2) + (3,0) + (-1,4) = (3,6); mean (1,2). Sentence 1: (3,0) alone.
    assert torch.equal(add, torch.tensor([[3.0, 6.0], [3.0, 0.0]]))
    assert torch.equal(mean, torch.tensor([[1.0, 2.0], [3.0, 0.0]]))


def test_tokens_past_the_length_and_pad_inside_it_are_left_out_by_hand():
    # Real ids past each length (a batch cut to a shorter width elsewhere) and a PAD inside a length count for nothing:
    # the mean divides by the real words, the weighted mean (SIF) by the length, as 1/|s| Σ a(w) v_w.
    ids = torch.tensor([[1, PAD_ID, 3, 5], [2, 5, 5, 5]])
    lengths = torch.tensor([3, 1])
    mean = AvgEncoder(6, 2, initial_vectors=VECTORS)(ids, lengths)
    assert torch.equal(mean, torch.tensor([[0.0, 3.0], [3.0, 0.0]]))
    weights = torch.tensor([0.0, 2.0, 1.0, 0.5, 1.0, 1.0])
    sif = AvgEncoder(6, 2, weighted=True, initial_weights=weights, initial_vectors=VECTORS)(ids, lengths)
    # Sentence 0: (2·(1,2) + 0.5·(-1,4)) / 3 = (0.5, 2); sentence 1: 1·(3,0) / 1.
    assert torch.equal(sif, torch.tensor([[0.5, 2.0], [3.0, 0.0]]))


def test_unknown_pooling_is_rejected():
    with pytest.raises(ValueError, match="mean, sum"):
        AvgEncoder(6, 2, pooling="max")


# Adagrad's sparse path builds a COO tensor and torch warns that it skips invariant checks; not ours.
@pytest.mark.filterwarnings("ignore:Sparse invariant checks:UserWarning")
@pytest.mark.parametrize(
    "make_optimizer",
    [lambda params: torch.optim.SparseAdam(params, lr=0.1), lambda params: torch.optim.Adagrad(params, lr=0.1)],
    ids=["SparseAdam", "Adagrad"],
)
def test_sparse_step_changes_only_the_rows_of_the_batch(make_optimizer):
    torch.manual_seed(0)
    encoder = AvgEncoder(50, 4, sparse=True)
    optimizer = make_optimizer(list(encoder.parameters()))
    before = encoder.embedding.weight.detach().clone()
    ids = torch.tensor([[3, 17, 3, 42], [8, PAD_ID, PAD_ID, PAD_ID]])
    encoder(ids, torch.tensor([4, 1])).pow(2).sum().backward()
    assert encoder.embedding.weight.grad.is_sparse
    optimizer.step()

    after = encoder.embedding.weight.detach()
    touched = [3, 8, 17, 42]
    untouched = [row for row in range(50) if row not in touched]
    assert torch.equal(after[untouched], before[untouched])  # bit for bit, PAD row included
    assert (after[touched] != before[touched]).all()
