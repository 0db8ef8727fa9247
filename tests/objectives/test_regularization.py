"""L2 regularisers: values by hand, and row-restricted penalties that keep sparse training sparse."""

from __future__ import annotations

import pytest
import torch

from parabit.encoders import AvgEncoder, PAD_ID, touched_rows
from parabit.objectives import L2Regularizer, L2ToInitRegularizer

W = torch.tensor([[1.0, 2.0], [3.0, 0.0], [0.0, -1.0]])


def test_l2_by_hand():
    # lambda/2 ||W||^2 = 0.5/2 * (1 + 4 + 9 + 0 + 0 + 1) = 0.25 * 15
    assert L2Regularizer(0.5)(W).item() == 3.75
    # rows (1, 2) only: 0.25 * (9 + 1)
    assert L2Regularizer(0.5)(W, rows=torch.tensor([1, 2])).item() == 2.5


def test_l2_to_init_by_hand():
    initial = torch.tensor([[0.0, 2.0], [3.0, 1.0], [0.0, 0.0]])
    regularizer = L2ToInitRegularizer(2.0, initial)
    # W - W_init = [[1,0],[0,-1],[0,-1]] -> lambda ||.||^2 = 2 * 3
    assert regularizer(W).item() == 6.0
    # rows (0,): 2 * 1
    assert regularizer(W, rows=torch.tensor([0])).item() == 2.0
    assert "initial" not in regularizer.state_dict()  # rebuilt from the pretrained vectors, not checkpointed
    initial[0, 0] = 100.0
    assert regularizer(W).item() == 6.0  # the regulariser keeps its own copy


def test_dense_gradient_without_rows_sparse_with_rows():
    weight = W.clone().requires_grad_()
    L2Regularizer(1.0)(weight).backward()
    assert not weight.grad.is_sparse
    torch.testing.assert_close(weight.grad, W)  # d/dW 1/2 ||W||^2 = W

    weight.grad = None
    L2ToInitRegularizer(1.0, torch.zeros(3, 2))(weight, rows=torch.tensor([2])).backward()
    assert weight.grad.is_sparse
    torch.testing.assert_close(weight.grad.to_dense(), torch.tensor([[0.0, 0.0], [0.0, 0.0], [0.0, -2.0]]))


def test_shape_mismatch_is_rejected():
    with pytest.raises(ValueError, match="shape"):
        L2ToInitRegularizer(1.0, torch.zeros(2, 2))(W)


@pytest.mark.parametrize("to_init", [False, True])
def test_sparse_training_step_with_regulariser_touches_only_batch_rows(to_init):
    torch.manual_seed(0)
    encoder = AvgEncoder(40, 3, sparse=True)
    table = encoder.embedding.weight
    regularizer = L2ToInitRegularizer(0.1, table.detach() * 0.5) if to_init else L2Regularizer(0.1)
    optimizer = torch.optim.SparseAdam(list(encoder.parameters()), lr=0.05)
    before = table.detach().clone()

    ids = torch.tensor([[4, 9, 4], [31, PAD_ID, PAD_ID]])
    lengths = torch.tensor([3, 1])
    rows = touched_rows(ids, lengths)
    loss = encoder(ids, lengths).sum() + regularizer(table, rows=rows)
    loss.backward()
    assert table.grad.is_sparse  # SparseAdam would refuse a dense gradient
    optimizer.step()

    changed = torch.nonzero((table.detach() != before).any(dim=1)).flatten().tolist()
    assert changed == [4, 9, 31]


def test_row_penalty_on_a_dense_table_accumulates_with_its_dense_gradient():
    torch.manual_seed(0)
    encoder = AvgEncoder(10, 2)  # dense table
    ids, lengths = torch.tensor([[1, 2]]), torch.tensor([2])
    (encoder(ids, lengths).sum() + L2Regularizer(1.0)(encoder.embedding.weight, rows=torch.tensor([1]))).backward()
    grad = encoder.embedding.weight.grad.to_dense()
    # d/dW: 1/2 per word from the mean, plus W[1] for the penalised row.
    torch.testing.assert_close(grad[1], 0.5 + encoder.embedding.weight.detach()[1])
    torch.testing.assert_close(grad[2], torch.full((2,), 0.5))
