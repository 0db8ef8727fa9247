"""The optimisers a training module gets: dense Adam runs torch's fused implementation, which must learn what torch's
reference Adam learns (with and without AMSGrad), since BilDRL's, Bao's and Wieting's records were trained with it;
``adamw`` is torch's AdamW with the config's weight decay (fused too), its row-sparse tables RowSparseAdam's, and a
weight decay that would reach none of the parameters it was meant for is refused."""

from __future__ import annotations

import pytest
import torch

from parabit.config import ConfigError, from_dict
from parabit.training import OptimConfig
from parabit.training.optimizers import build_optimizers
from parabit.training.row_sparse_adam import RowSparseAdam


def _module() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Embedding(40, 6), torch.nn.Linear(6, 3))


def _train(module: torch.nn.Module, optimizer: torch.optim.Optimizer) -> None:
    generator = torch.Generator().manual_seed(1)
    for _ in range(25):
        ids = torch.randint(0, 40, (16,), generator=generator)
        target = torch.randn(16, 3, generator=generator)
        optimizer.zero_grad()
        torch.nn.functional.mse_loss(module(ids), target).backward()
        optimizer.step()


@pytest.mark.parametrize("amsgrad", [False, True])
def test_dense_adam_is_fused_and_learns_what_reference_adam_learns(amsgrad):
    built, reference = _module(), _module()
    [optimizer] = build_optimizers(built, OptimConfig(name="adam", lr=0.01, amsgrad=amsgrad))
    assert optimizer.defaults["fused"] and optimizer.defaults["amsgrad"] == amsgrad
    _train(built, optimizer)
    _train(reference, torch.optim.Adam(reference.parameters(), lr=0.01, amsgrad=amsgrad, foreach=False))
    for (name, ours), theirs in zip(built.state_dict().items(), reference.state_dict().values()):
        assert not torch.equal(ours, _module().state_dict()[name])  # it trained
        torch.testing.assert_close(ours, theirs, rtol=1e-5, atol=1e-6)


def test_adamw_is_fused_torch_adamw_with_the_configs_weight_decay():
    config = from_dict(OptimConfig, {"name": "adamw", "lr": 0.01, "weight_decay": 0.1, "amsgrad": True})
    built, reference = _module(), _module()
    [optimizer] = build_optimizers(built, config)
    assert type(optimizer) is torch.optim.AdamW
    assert optimizer.defaults["fused"] and optimizer.defaults["weight_decay"] == 0.1 and optimizer.defaults["amsgrad"]
    _train(built, optimizer)
    _train(reference, torch.optim.AdamW(reference.parameters(), lr=0.01, weight_decay=0.1, amsgrad=True,
                                        foreach=False))
    decayless = _module()
    _train(decayless, torch.optim.AdamW(decayless.parameters(), lr=0.01, weight_decay=0.0, amsgrad=True))
    for (name, ours), theirs in zip(built.state_dict().items(), reference.state_dict().values()):
        torch.testing.assert_close(ours, theirs, rtol=1e-5, atol=1e-6)
        assert not torch.allclose(ours, decayless.state_dict()[name])  # the decay changed what it learnt


def test_adamw_without_weight_decay_is_undecayed_not_torchs_default():
    [optimizer] = build_optimizers(_module(), OptimConfig(name="adamw"))
    assert optimizer.defaults["weight_decay"] == 0.0  # torch's AdamW alone would decay by 0.01


@pytest.mark.parametrize("name", ["adam", "adagrad", "sgd"])
def test_the_other_dense_optimisers_take_the_weight_decay(name):
    [optimizer] = build_optimizers(_module(), OptimConfig(name=name, weight_decay=0.05))
    assert optimizer.defaults["weight_decay"] == 0.05


def _sparse_module(dense: bool = True) -> torch.nn.Module:
    layers = [torch.nn.Embedding(40, 6, sparse=True)] + ([torch.nn.Linear(6, 3)] if dense else [])
    return torch.nn.Sequential(*layers)


def test_adamw_word_tables_get_row_sparse_adam_without_decay():
    sparse, dense = build_optimizers(_sparse_module(), OptimConfig(name="adamw", weight_decay=0.01))
    assert type(sparse) is RowSparseAdam and "weight_decay" not in sparse.defaults
    assert type(dense) is torch.optim.AdamW and dense.defaults["weight_decay"] == 0.01


@pytest.mark.parametrize("name, dense", [("adagrad", True), ("sgd", True), ("adamw", False), ("adam", False)])
def test_weight_decay_that_would_reach_none_of_its_parameters_is_refused(name, dense):
    with pytest.raises(ValueError, match="optim.weight_decay reaches no row-sparse word table"):
        build_optimizers(_sparse_module(dense), OptimConfig(name=name, weight_decay=0.01))
    assert build_optimizers(_sparse_module(dense), OptimConfig(name=name))  # without it: as before


def test_amsgrad_needs_adam_or_adamw_and_weight_decay_is_not_negative():
    with pytest.raises(ConfigError, match="amsgrad is a variant of Adam"):
        from_dict(OptimConfig, {"name": "sgd", "amsgrad": True})
    with pytest.raises(ConfigError, match="weight_decay"):
        from_dict(OptimConfig, {"name": "adamw", "weight_decay": -0.01})
