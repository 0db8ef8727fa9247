"""The fused static step (``RowStep``): on real Tatoeba batches it trains what forward + autograd + ``optimizer.step()``
train, to float tolerance, for every objective, distance, negatives rule, pooling, weighting, regulariser and
optimiser it takes; it touches only the batch's rows; its guard stops a run on a NaN or an absurd learning rate; and
the kernel takes it only where it applies."""

from __future__ import annotations

import pytest
import torch

from parabit.recipes.pairs.model import PairModule
from parabit.recipes.pairs.recipe import PairsRecipe
from parabit.training import Step
from parabit.training.batches import batches_in_order
from parabit.training.exchange import GradientExchange
from parabit.training.guard import DivergenceGuard
from parabit.training.optimizers import build_optimizers
from parabit.training.step import EpochTotals, OptimiserStep, RowStep, build_step

STEPS = 4

CASES = {  # name: config changes (section__field)
    "jbi-euclidean-sum-adagrad-l2": dict(objective__negatives=5, objective__regularization=1e-3,
                                         model__options={"pooling": "sum"}, model__init_std=0.1,
                                         optim__name="adagrad", optim__lr=0.05),
    "jbi-cosine-mean-adam": dict(objective__distance="cosine", objective__margin=0.5, optim__lr=0.01),
    "jbi-euclidean-sif-components-sgd": dict(model__weighting="sif", model__components=1, optim__name="sgd",
                                             optim__lr=0.05),
    "jpa-max-l2-to-init-adam": dict(objective__name="jpa", objective__margin=0.4, objective__regularization=1e-2,
                                    objective__regularization_kind="l2_to_init", optim__lr=0.01),
    "jpa-mix-sum-adagrad": dict(objective__name="jpa", objective__sampling="mix", model__options={"pooling": "sum"},
                                optim__name="adagrad", optim__lr=0.05),
    "jpa-rand-sif-sgd": dict(objective__name="jpa", objective__sampling="rand", model__weighting="sif",
                             optim__name="sgd", optim__lr=0.5),
}


def prepared_module(config):
    recipe = PairsRecipe(config)
    prepared = recipe.prepare()
    torch.manual_seed(config.seed)
    module = recipe.build_module(prepared, sparse=True)
    recipe.refit(module, prepared)
    return recipe, prepared, module


def real_batches(prepared, batch_size: int) -> list[dict]:
    from parabit.training import arrow_to_tensors
    import pyarrow.parquet as pq

    data = {name: torch.from_numpy(array) for name, array in arrow_to_tensors(pq.read_table(prepared.pairs_path)).items()}
    order = torch.randperm(len(data["len_a"]), generator=torch.Generator().manual_seed(7))[:STEPS * batch_size]
    return list(batches_in_order(data, order, batch_size))


def train(module, config, batches, fused: bool):
    optimizers = build_optimizers(module, config.optim)
    if fused:
        step = build_step(module, optimizers, config.optim, distributed=False)
        assert isinstance(step, RowStep)
    else:
        step = OptimiserStep(module, optimizers, GradientExchange(module), DivergenceGuard(module, distributed=False))
    totals = EpochTotals()
    for index, batch in enumerate(batches, 1):
        step([batch], Step(torch.Generator().manual_seed(index), {}, 1, index), totals)
    assert step.guard.problem() is None
    return module.encoder.embedding.weight.detach().clone(), totals.means()["loss"], optimizers[0].state_dict()


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_fused_step_trains_what_forward_autograd_and_the_optimiser_train(case, small_config):
    config = small_config(**CASES[case])
    recipe, prepared, module = prepared_module(config)
    batches = real_batches(prepared, config.optim.batch_size)
    start = module.encoder.embedding.weight.detach().clone()
    fused_table, fused_loss, fused_state = train(module, config, batches, fused=True)
    _, _, autograd_module = prepared_module(config)
    table, loss, state = train(autograd_module, config, batches, fused=False)

    assert fused_loss == pytest.approx(loss, rel=1e-5)
    moved = (table - start).abs().amax()
    assert moved > 1e-3  # the steps trained something
    torch.testing.assert_close(fused_table, table, rtol=0, atol=2e-3 * float(moved))
    for key, value in state["state"].get(0, {}).items():  # the optimiser's state, as checkpoints hold it (SGD: none)
        if isinstance(value, torch.Tensor) and value.dim() > 0:
            torch.testing.assert_close(fused_state["state"][0][key], value, rtol=1e-4, atol=1e-6, msg=key)
        else:
            assert float(fused_state["state"][0][key]) == float(value), key


def test_a_step_writes_only_the_rows_of_its_batch(small_config):
    config = small_config(optim__name="adagrad", objective__regularization=1e-3)
    _, prepared, module = prepared_module(config)
    (batch, *_) = real_batches(prepared, config.optim.batch_size)
    before = module.encoder.embedding.weight.detach().clone()
    train(module, config, [batch], fused=True)
    changed = ((module.encoder.embedding.weight.detach() - before) != 0).any(dim=1).nonzero().squeeze(1)
    in_batch = torch.unique(torch.cat([batch["ids_a"][batch["ids_a"] != 0], batch["ids_b"][batch["ids_b"] != 0]]))
    assert set(changed.tolist()) == set(in_batch.tolist())


@pytest.mark.parametrize("optimiser", ["adam", "adagrad", "sgd"])
def test_an_absurd_learning_rate_or_a_nan_row_is_found_in_the_step_it_happens(optimiser, small_config):
    config = small_config(optim__name=optimiser, optim__lr=1e37)
    _, prepared, module = prepared_module(config)
    batches = real_batches(prepared, config.optim.batch_size)
    step = build_step(module, build_optimizers(module, config.optim), config.optim, distributed=False)
    for index, batch in enumerate(batches[:2], 1):
        step([batch], Step(torch.Generator().manual_seed(index), {}, 1, index), EpochTotals())
    found = step.guard.problem()
    assert found is not None and found[1] in ("the loss", "the weight encoder.embedding.weight")

    config = small_config(optim__name=optimiser)
    _, prepared, module = prepared_module(config)
    step = build_step(module, build_optimizers(module, config.optim), config.optim, distributed=False)
    step([batches[0]], Step(torch.Generator(), {}, 1, 1), EpochTotals())
    assert step.guard.problem() is None
    with torch.no_grad():
        module.encoder.embedding.weight[batches[1]["ids_a"][0, 0]] = float("nan")  # a row the next batch reads
    step([batches[1]], Step(torch.Generator(), {}, 1, 2), EpochTotals())
    assert step.guard.problem() == (0, "the loss")


class ForwardOfItsOwn(PairModule):
    def forward(self, batch, step):
        return super().forward(batch, step) * 2


@pytest.mark.parametrize("change, fused", [
    ({}, True),
    ({"optim__accumulation_steps": 2}, False),  # a step of several batches
    ({"model__weighting": "sif", "model__learn_weights": True}, False),  # a second trained table: autograd
    ({"model__sparse": False}, False),  # a dense table
    ({"model__encoder": "linear_bow"}, False),  # a trained projection
])
def test_the_kernel_takes_the_fused_step_only_where_it_applies(change, fused, small_config):
    config = small_config(**change)
    _, _, module = prepared_module(config)
    step = build_step(module, build_optimizers(module, config.optim), config.optim, distributed=False)
    assert isinstance(step, RowStep) is fused
    if fused:  # a subclass that changes the loss keeps its own forward
        module.__class__ = ForwardOfItsOwn
        step = build_step(module, build_optimizers(module, config.optim), config.optim, distributed=False)
        assert isinstance(step, OptimiserStep)
