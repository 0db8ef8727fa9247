"""The divergence guard: a non-finite loss, gradient or weight stops training, naming that very step, the MLflow run
ends FAILED, the last good checkpoint stays and no model is registered."""

from __future__ import annotations

import sys

import cloudpickle
import pytest
import torch
import yaml
from mlflow.tracking import MlflowClient

from parabit.cli import run_command
from parabit.config import to_dict
from parabit.encoders import build_encoder
from parabit.recipes.pairs.model import PairModule
from parabit.recipes.pairs.recipe import PairsRecipe
from parabit.training.run import load_state
from parabit.training.run import run_directory, run_training
from parabit.training import TrainingDiverged
from parabit.training.guard import Divergence, DivergenceGuard
from parabit.training.optimizers import build_optimizers
from parabit.training import OptimConfig

# Ray workers cannot import test modules: ship this module's classes by value.
cloudpickle.register_pickle_by_value(sys.modules[__name__])

POISONED = (2, 3)  # (epoch, step) at which the test module's loss turns NaN


def _toy(sparse: bool = True):
    module = torch.nn.ModuleDict({"avg": build_encoder("avg", 20, 4, sparse=sparse),
                                  "head": torch.nn.Linear(4, 1)})
    return module, build_optimizers(module, OptimConfig(lr=0.1))


def _step(module, optimizers, scale: float = 1.0):
    for optimizer in optimizers:
        optimizer.zero_grad()
    ids, lengths = torch.tensor([[1, 2, 3], [4, 5, 0]]), torch.tensor([3, 2])
    loss = module["head"](module["avg"](ids, lengths)).sum() * scale
    loss.backward()
    return loss


def _checked_step(guard, module, optimizers, loss, poison=None):
    """One step as the kernel takes it (checks queued, the update made whatever they find), ``poison`` run between
    the optimiser step and the weights' check."""
    guard.before_update(loss)
    for optimizer in optimizers:
        optimizer.step()
    if poison is not None:
        poison()
    guard.after_update()


def test_finite_steps_pass_and_the_first_non_finite_step_and_tensor_are_named():
    module, optimizers = _toy()
    guard = DivergenceGuard(module, distributed=False)
    assert guard.problem() is None  # nothing checked yet
    _checked_step(guard, module, optimizers, _step(module, optimizers))
    assert guard.problem() is None  # read, and forgotten: the next read is about the steps after it

    _checked_step(guard, module, optimizers, _step(module, optimizers))  # step 0 of this read: finite
    _checked_step(guard, module, optimizers, _step(module, optimizers) * float("nan"))  # step 1: the loss
    _checked_step(guard, module, optimizers, _step(module, optimizers) * float("inf"))  # step 2: the loss again
    assert guard.problem() == (1, "the loss")  # the first

    module, optimizers = _toy()
    guard = DivergenceGuard(module, distributed=False)
    _step(module, optimizers, scale=float("inf"))  # inf * 0-sized terms give NaN/inf gradients
    _checked_step(guard, module, optimizers, torch.tensor(1.0))  # a finite loss: the gradients are named
    assert guard.problem() in ((0, "the gradient of avg.embedding.weight"), (0, "the gradient of head.weight"))

    module, optimizers = _toy()
    guard = DivergenceGuard(module, distributed=False)

    def poison():
        module["avg"].embedding.weight.data[2, 0] = float("inf")  # a row the step touched

    _checked_step(guard, module, optimizers, _step(module, optimizers), poison)
    assert guard.problem() == (0, "the weight avg.embedding.weight")


def test_only_touched_rows_of_a_sparse_table_are_checked():
    module, optimizers = _toy()
    guard = DivergenceGuard(module, distributed=False)

    def poison():
        module["avg"].embedding.weight.data[19, 0] = float("inf")  # never in a batch: costs nothing to skip

    _checked_step(guard, module, optimizers, _step(module, optimizers), poison)
    assert guard.problem() is None


class PoisonedModule(PairModule):
    def forward(self, batch, step):
        loss = super().forward(batch, step)
        return loss * float("nan") if (step.epoch, step.step) == POISONED else loss


class PoisonedRecipe(PairsRecipe):
    def build_module(self, prepared, *, sparse):
        module = super().build_module(prepared, sparse=sparse)
        module.__class__ = PoisonedModule
        return module


@pytest.mark.slow
def test_a_nan_stops_the_run_at_that_step_keeps_the_last_checkpoint_and_registers_nothing(
        ray_session, small_config, isolated_mlflow_store):
    config = small_config(optim__epochs=4, optim__batch_size=100)
    config.tracking.register_as = "never-registered"
    with pytest.raises(TrainingDiverged, match=r"diverged at epoch 2, step 3: the loss is not finite"):
        run_training(PoisonedRecipe(config))
    assert Divergence.load(run_directory(config)) == Divergence(*POISONED, "the loss")

    checkpoints = sorted(p for p in run_directory(config).glob("checkpoint_*") if p.is_dir())
    assert [load_state(folder)["epoch"] for folder in checkpoints] == [1]  # epoch 2 never checkpointed
    client = MlflowClient(isolated_mlflow_store, registry_uri=isolated_mlflow_store)
    (run,) = client.search_runs([client.get_experiment_by_name("parabit").experiment_id],
                                f"tags.`parabit.run_name` = '{config.name}'")
    assert run.info.status == "FAILED"
    assert [m.step for m in client.get_metric_history(run.info.run_id, "loss")] == [1]
    assert not client.search_registered_models("name = 'never-registered'")


@pytest.mark.slow
def test_an_absurd_learning_rate_is_one_line_and_exit_1(ray_session, small_config, tmp_path, capsys):
    config = small_config(optim__epochs=2)
    path = tmp_path / "absurd.yaml"
    path.write_text(yaml.safe_dump(to_dict(config)))
    code = run_command(argv=["train", "--config", str(path), "--set", "optim.lr=1e37"])
    last = capsys.readouterr().err.strip().splitlines()[-1]  # after the run's own progress lines
    assert code == 1
    assert last.startswith(f"error: training run {config.name} diverged at epoch 1, step ") and "not finite" in last


def test_a_tensor_is_non_finite_when_a_value_is_or_their_sum_overflows():
    from parabit.training.guard import non_finite

    large = torch.full((1000,), 1e34)  # finite, and so is their sum
    assert not non_finite(large) and not non_finite(torch.zeros(0))
    for bad in (float("nan"), float("inf"), -float("inf")):
        poisoned = large.clone()
        poisoned[500] = bad
        assert non_finite(poisoned) and non_finite(poisoned.to(torch.bfloat16))
    assert non_finite(torch.tensor([float("inf"), -float("inf")]))  # their sum is NaN, not 0
    assert non_finite(torch.full((1000,), 3e38))  # finite values an absurd learning rate makes: diverged too
