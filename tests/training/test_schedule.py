"""The learning-rate schedule (``optim.warmup_steps``, ``optim.schedule``): the rate at the steps that define it, a
run resumed from its optimisers' saved state stepping at the rates (and to the weights) of an uninterrupted one, the
fused row step reading the scheduled rate, and no schedule leaving the rates alone."""

from __future__ import annotations

import pytest
import torch

from parabit.training import OptimConfig, Step
from parabit.training.exchange import GradientExchange
from parabit.training.guard import DivergenceGuard
from parabit.training.optimizers import build_optimizers, update_rows
from parabit.training.schedule import LrSchedule
from parabit.training.step import EpochTotals, OptimiserStep

from .test_step import PairModule, pairs, split

LR, WARMUP, EPOCHS, STEPS = 0.1, 10, 2, 50  # 100 steps in all


def _schedule(schedule: str = "linear", warmup_steps: int = WARMUP) -> LrSchedule | None:
    return LrSchedule.of(OptimConfig(lr=LR, warmup_steps=warmup_steps, schedule=schedule, epochs=EPOCHS), STEPS)


def test_linear_warm_up_then_linear_decay_to_zero_at_the_runs_end():
    schedule = _schedule()
    assert schedule.total_steps == EPOCHS * STEPS
    assert schedule.rate(0) == 0.0  # the first step: warm-up from 0
    assert schedule.rate(WARMUP // 2) == pytest.approx(LR / 2)
    assert schedule.rate(WARMUP) == pytest.approx(LR)  # the warm-up's end: the peak
    assert schedule.rate(WARMUP + 45) == pytest.approx(LR / 2)  # half way from the peak to the end
    assert schedule.rate(EPOCHS * STEPS - 1) == pytest.approx(LR / 90)  # the last step, one decrement above 0
    assert schedule.rate(EPOCHS * STEPS) == 0.0


def test_constant_after_the_warm_up_and_a_decay_without_one():
    constant = _schedule("constant")
    assert [constant.rate(step) for step in (0, 5, WARMUP, EPOCHS * STEPS - 1)] == pytest.approx([0, LR / 2, LR, LR])
    decay = _schedule("linear", warmup_steps=0)
    assert decay.rate(0) == LR and decay.rate(50) == pytest.approx(LR / 2)


def test_no_schedule_leaves_the_rates_alone():
    assert _schedule("constant", warmup_steps=0) is None  # the loop then never writes a rate


def _train_epochs(module, optimizers, schedule: LrSchedule, epochs: range, steps: int) -> list[float]:
    """Train ``epochs`` of ``steps`` one-batch steps (the same batches each epoch) as the worker loop does, the
    schedule's rate set before each; the rates every optimiser stepped at."""
    step = OptimiserStep(module, optimizers, GradientExchange(module), DivergenceGuard(module, distributed=False))
    batches, rates = split(pairs(), steps), []
    for epoch in epochs:
        for index, batch in enumerate(batches, 1):
            schedule.apply(optimizers, epoch * steps + index - 1)
            rates += [group["lr"] for optimizer in optimizers for group in optimizer.param_groups]
            step([batch], Step(torch.Generator(), {}, epoch + 1, index), EpochTotals())
    return rates


def test_a_resumed_run_steps_at_the_rates_and_to_the_weights_of_an_uninterrupted_one():
    config = OptimConfig(lr=0.05, warmup_steps=3, schedule="linear", epochs=3)
    steps = 4
    straight = PairModule(sparse=True)
    straight_optimizers = build_optimizers(straight, config)  # RowSparseAdam for the table, Adam for the rest
    straight_rates = _train_epochs(straight, straight_optimizers, LrSchedule.of(config, steps), range(3), steps)

    first = PairModule(sparse=True)
    first_optimizers = build_optimizers(first, config)
    _train_epochs(first, first_optimizers, LrSchedule.of(config, steps), range(1), steps)
    resumed = PairModule(sparse=True)  # a new worker: the module and optimisers from the epoch-1 checkpoint
    resumed.load_state_dict(first.state_dict())
    resumed_optimizers = build_optimizers(resumed, config)
    for optimizer, state in zip(resumed_optimizers, [o.state_dict() for o in first_optimizers]):
        optimizer.load_state_dict(state)  # carries the rate of epoch 1's last step, never used again
    resumed_rates = _train_epochs(resumed, resumed_optimizers, LrSchedule.of(config, steps), range(1, 3), steps)

    assert resumed_rates == straight_rates[len(straight_rates) // 3:]
    assert len(set(straight_rates)) > 5  # the rate moved
    for name, value in straight.state_dict().items():
        assert torch.equal(value, resumed.state_dict()[name]), name


@pytest.mark.parametrize("name", ["adam", "adamw", "adagrad", "sgd"])
def test_the_fused_row_update_steps_at_the_scheduled_rate(name):
    table = torch.nn.Embedding(6, 3, sparse=True)
    [optimizer] = build_optimizers(table, OptimConfig(name=name, lr=1.0, warmup_steps=4))
    LrSchedule.of(OptimConfig(name=name, lr=1.0, warmup_steps=4), 10).apply([optimizer], 1)  # a quarter of lr
    before, rows, gradient = table.weight.detach().clone(), torch.tensor([1, 4]), torch.ones(2, 3)
    update_rows(optimizer, table.weight, rows, gradient)
    change = (table.weight.detach() - before)[rows]
    # The first step of each: Adam moves each value by lr (its normalised step is 1), Adagrad by lr too (the
    # gradient over its root sum of squares), SGD by lr × gradient.
    torch.testing.assert_close(change, torch.full((2, 3), -0.25), rtol=1e-4, atol=1e-6)
