"""The optimisers a training module gets: dense Adam runs torch's fused implementation, which must learn what torch's
reference Adam learns (with and without AMSGrad), since BilDRL's, Bao's and Wieting's records were trained with it."""

from __future__ import annotations

import pytest
import torch

from parabit.training import OptimConfig
from parabit.training.optimizers import build_optimizers


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
