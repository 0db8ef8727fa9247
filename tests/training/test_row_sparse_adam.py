"""RowSparseAdam: torch's SparseAdam update with one gather and one scatter of optimiser state per step."""

from __future__ import annotations

import io

import pytest
import torch
import torch.nn.functional as F

from parabit.encoders import build_encoder
from parabit.training import OptimConfig
from parabit.training.optimizers import build_optimizers
from parabit.training.row_sparse_adam import RowSparseAdam

VOCAB, DIM = 500, 16


def _table(seed: int = 0) -> torch.nn.Parameter:
    return torch.nn.Parameter(torch.randn(VOCAB, DIM, generator=torch.Generator().manual_seed(seed)))


def _batches(count: int, seed: int = 1):
    """Bags of word ids from a small part of the table, so rows repeat within a batch and most rows are never used."""
    generator = torch.Generator().manual_seed(seed)
    for _ in range(count):
        ids = torch.randint(1, 60, (96,), generator=generator)
        yield ids, torch.arange(0, 96, 8)


def _train(table: torch.nn.Parameter, optimizer: torch.optim.Optimizer, batches) -> None:
    for ids, offsets in batches:
        pooled = F.embedding_bag(ids, table, offsets, mode="mean", sparse=True)
        loss = (pooled - 0.5).pow(2).sum()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()


def _through_a_file(state_dict: dict) -> dict:
    """The state dict as a checkpoint gives it back: a copy, no longer shared with the optimiser that made it."""
    saved = io.BytesIO()
    torch.save(state_dict, saved)
    saved.seek(0)
    return torch.load(saved)


def test_updates_exactly_as_torch_sparse_adam():
    reference, table = _table(), _table()
    _train(reference, torch.optim.SparseAdam([reference], lr=0.01, betas=(0.8, 0.99), eps=1e-6), _batches(30))
    _train(table, RowSparseAdam([table], lr=0.01, betas=(0.8, 0.99), eps=1e-6), _batches(30))
    assert not torch.equal(table, _table()), "the table did not move"
    torch.testing.assert_close(table, reference, rtol=0, atol=2e-6)


def test_rows_no_batch_used_keep_their_values_and_zero_moments():
    table = _table()
    optimizer = RowSparseAdam([table], lr=0.05)
    _train(table, optimizer, _batches(5))
    unused = torch.arange(60, VOCAB)  # the batches draw ids below 60
    assert torch.equal(table.detach()[unused], _table()[unused])
    moments = optimizer.state[table]["moments"]
    assert moments.shape == (VOCAB, 2, DIM)
    assert moments[unused].abs().sum() == 0
    assert moments[1:60].abs().sum() > 0


def test_resuming_from_its_state_dict_continues_the_same_trajectory():
    uninterrupted, resumed = _table(), _table()
    _train(uninterrupted, RowSparseAdam([uninterrupted], lr=0.01), _batches(20))

    first = RowSparseAdam([resumed], lr=0.01)
    _train(resumed, first, list(_batches(20))[:12])
    second = RowSparseAdam([resumed], lr=0.01)
    second.load_state_dict(_through_a_file(first.state_dict()))
    _train(resumed, second, list(_batches(20))[12:])
    assert torch.equal(resumed, uninterrupted)


def test_a_checkpointed_sparse_adam_state_resumes_under_row_sparse_adam():
    """Runs checkpointed before the switch (SparseAdam's exp_avg / exp_avg_sq) continue as if SparseAdam went on."""
    reference, table = _table(), _table()
    batches = list(_batches(20))
    sparse_adam = torch.optim.SparseAdam([reference], lr=0.01)
    _train(reference, sparse_adam, batches[:10])
    with torch.no_grad():
        table.copy_(reference)
    row_sparse = RowSparseAdam([table], lr=0.01)
    row_sparse.load_state_dict(_through_a_file(sparse_adam.state_dict()))
    _train(reference, sparse_adam, batches[10:])
    _train(table, row_sparse, batches[10:])
    torch.testing.assert_close(table, reference, rtol=0, atol=2e-6)
    assert set(row_sparse.state[table]) == {"step", "moments"}


def test_a_dense_gradient_is_refused_with_what_to_do():
    table = _table()
    optimizer = RowSparseAdam([table])
    table[:3].sum().backward()
    with pytest.raises(RuntimeError, match="dense gradient.*torch.optim.Adam"):
        optimizer.step()


@pytest.mark.parametrize("options, problem", [({"lr": 0.0}, "lr"), ({"eps": 0.0}, "eps"), ({"betas": (0.9, 1.0)}, "betas")])
def test_bad_settings_are_refused(options, problem):
    with pytest.raises(ValueError, match=problem):
        RowSparseAdam([_table()], **options)


def test_the_kernel_gives_sparse_word_tables_row_sparse_adam_and_the_rest_dense_adam():
    model = torch.nn.ModuleDict({"avg": build_encoder("avg", VOCAB, DIM, sparse=True),
                                 "gru": build_encoder("gru", VOCAB, DIM, hidden_size=8)})
    sparse, dense = build_optimizers(model, OptimConfig(name="adam", lr=0.002, amsgrad=True))
    assert isinstance(sparse, RowSparseAdam) and sparse.defaults["lr"] == 0.002
    assert [p.shape for p in sparse.param_groups[0]["params"]] == [(VOCAB, DIM)]
    assert type(dense) is torch.optim.Adam and dense.defaults["amsgrad"]
    assert sum(p.numel() for p in dense.param_groups[0]["params"]) == sum(
        p.numel() for p in model["gru"].parameters())
