"""The static training step: parabit's fused step against a plain autograd PyTorch loop, on the same batches.

    .venv/bin/python bench/bench_static_step.py [--batches 25 50 100] [--pairs 20000] [--repeats 3]

The cell is an Elgohary BiSent J_bi cell's settings (AVG with eq. 1's sum, 300-d, AdaGrad lr 0.05, rows N(0, 0.1²),
Euclidean distance, margin 1, k 15, λ 1e-3) on the 138,871 en-es pairs of ``jobs/configs/bilingual_sentences.yaml``
(Tatoeba + the Europarl sample), trained without Ray, one thread, four ways over the same ``--pairs`` pairs (the
kernel's seeded, trimmed batches of one epoch):

* **parabit fused**: the kernel's step as ``parabit train`` takes it (``build_step`` → ``RowStep``: the batch's
  distinct rows, J_bi's gradient in closed form, AdaGrad's update of those rows in one compiled pass);
* **parabit autograd**: the kernel's autograd step (``OptimiserStep``: forward, backward into a sparse gradient,
  ``torch.optim.Adagrad``, the divergence guard), what every static cell trained with before;
* **plain PyTorch**: the loop a PyTorch user writes: ``nn.EmbeddingBag(mode="sum", sparse=True)``, J_bi with the
  negatives gathered as ``[B, k, D]``, λ/2·‖W[rows]‖² on the batch's distinct rows, ``loss.backward()``,
  ``torch.optim.Adagrad``; no guard, no bookkeeping: the baseline;
* **plain PyTorch, gradient written out**: the same maths as torch ops without autograd (``unique`` of the batch's
  tokens, the rows gathered, J_bi's gradient by hand through the ``[B, k, D]`` negatives, ``index_add_`` back to the
  rows, AdaGrad on those rows by hand): what a performance engineer writes in torch alone.

Each repeat runs the four in turn (so they share the machine's moments), each from the same initial table, after
a few untimed warm-up steps; the table reports the median pairs/s over repeats, the spread (min–max), and the ratios
to the plain loop. The process has a Ray Train worker's torch settings (huge pages for large tensors,
``TORCH_ENV_DEFAULTS``).
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from parabit.ray_runtime import torch_env

os.environ.update(torch_env())  # before torch is imported: it reads them once, at its first allocation

import pyarrow.parquet as pq  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from _common import machine_line, median, table, write_section  # noqa: E402

from parabit.config import load_config  # noqa: E402
from parabit.objectives import sample_random_negatives  # noqa: E402
from parabit.recipes.pairs.config import PairsConfig  # noqa: E402
from parabit.recipes.pairs.recipe import PairsRecipe  # noqa: E402
from parabit.training import Step, arrow_to_tensors  # noqa: E402
from parabit.training.batches import epoch_batches, epoch_generator  # noqa: E402
from parabit.training.exchange import GradientExchange  # noqa: E402
from parabit.training.guard import DivergenceGuard  # noqa: E402
from parabit.training.optimizers import build_optimizers  # noqa: E402
from parabit.training.step import EpochTotals, OptimiserStep, RowStep, build_step  # noqa: E402

CONFIG = Path(__file__).resolve().parents[1] / "jobs" / "configs" / "bilingual_sentences.yaml"
CELL = {"model.options": {"pooling": "sum"}, "model.init_std": 0.1, "optim.name": "adagrad", "optim.lr": 0.05,
        "objective.distance": "euclidean", "objective.margin": 1.0, "objective.negatives": 15,
        "objective.regularization": 1.0e-3}
WARM_UP_STEPS = 20


class PlainLoop:
    """The plain PyTorch baseline (see the module docstring), from the same initial table."""

    def __init__(self, table: torch.Tensor, config: PairsConfig):
        self.bag = torch.nn.EmbeddingBag.from_pretrained(table.clone(), freeze=False, mode="sum", sparse=True)
        self.optimizer = torch.optim.Adagrad(self.bag.parameters(), lr=config.optim.lr)
        self.k, self.margin, self.weight = (config.objective.negatives, config.objective.margin,
                                            config.objective.regularization)

    def encode(self, ids: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        real = torch.arange(ids.size(1)).unsqueeze(0) < lengths.unsqueeze(1)
        counts = real.sum(dim=1)
        return self.bag(ids[real], torch.cumsum(counts, 0) - counts)

    def __call__(self, batch: dict, generator: torch.Generator) -> float:
        self.optimizer.zero_grad()
        g1, g2 = self.encode(batch["ids_a"], batch["len_a"]), self.encode(batch["ids_b"], batch["len_b"])
        index = sample_random_negatives(len(g1), self.k, generator)
        positive = (g1 - g2).pow(2).sum(-1, keepdim=True)
        hinge = (F.relu(self.margin + positive - (g1.unsqueeze(1) - g2[index]).pow(2).sum(-1))
                 + F.relu(self.margin + positive - (g2.unsqueeze(1) - g1[index]).pow(2).sum(-1)))
        rows = torch.unique(torch.cat([batch["ids_a"][batch["ids_a"] > 0], batch["ids_b"][batch["ids_b"] > 0]]))
        loss = hinge.sum(1).mean() + 0.5 * self.weight * F.embedding(rows, self.bag.weight, sparse=True).pow(2).sum()
        loss.backward()
        self.optimizer.step()
        return float(loss)


class WrittenOutLoop:
    """The plain loop's maths with the gradient written out (see the module docstring)."""

    def __init__(self, table: torch.Tensor, config: PairsConfig):
        self.table, self.sums = table.clone(), torch.zeros_like(table)
        self.lr, self.k, self.margin, self.weight = (config.optim.lr, config.objective.negatives,
                                                     config.objective.margin, config.objective.regularization)

    def __call__(self, batch: dict, generator: torch.Generator) -> float:
        sides = [(batch["ids_a"], batch["len_a"]), (batch["ids_b"], batch["len_b"])]
        flats, sentences = [], []
        for side, (ids, lengths) in enumerate(sides):
            real = (torch.arange(ids.size(1)).unsqueeze(0) < lengths.unsqueeze(1)) & (ids > 0)
            sentence, _ = real.nonzero(as_tuple=True)
            flats.append(ids[real])
            sentences.append(sentence + side * len(lengths))
        flat, sentence = torch.cat(flats), torch.cat(sentences)
        rows, inverse = torch.unique(flat, return_inverse=True)
        values = self.table[rows]
        batch_size, dim = len(batch["len_a"]), self.table.size(1)
        encoded = torch.zeros(2 * batch_size, dim).index_add_(0, sentence, values[inverse])
        g1, g2 = encoded[:batch_size], encoded[batch_size:]
        index = sample_random_negatives(batch_size, self.k, generator)
        n1, n2 = g1[index], g2[index]  # [B, k, D]
        positive = (g1 - g2).pow(2).sum(-1, keepdim=True)
        hinge2 = self.margin + positive - (g1.unsqueeze(1) - n2).pow(2).sum(-1)  # g1 against side-2 negatives
        hinge1 = self.margin + positive - (g2.unsqueeze(1) - n1).pow(2).sum(-1)  # g2 against side-1 negatives
        c2, c1 = (hinge2 > 0).float() / batch_size, (hinge1 > 0).float() / batch_size
        loss = (hinge2.clamp_min(0).sum() + hinge1.clamp_min(0).sum()) / batch_size
        difference = (g1 - g2) * 2
        grad1 = 2 * (c2.unsqueeze(-1) * (n2 - g2.unsqueeze(1))).sum(1) + c1.sum(1, keepdim=True) * difference
        grad2 = -c2.sum(1, keepdim=True) * difference + 2 * (c1.unsqueeze(-1) * (n1 - g1.unsqueeze(1))).sum(1)
        grad2.index_add_(0, index.reshape(-1), (2 * c2.unsqueeze(-1) * (g1.unsqueeze(1) - n2)).reshape(-1, dim))
        grad1.index_add_(0, index.reshape(-1), (2 * c1.unsqueeze(-1) * (g2.unsqueeze(1) - n1)).reshape(-1, dim))
        gradient = torch.zeros_like(values).index_add_(0, inverse, torch.cat([grad1, grad2])[sentence])
        gradient += self.weight * values
        sums = self.sums[rows] + gradient.pow(2)
        self.sums[rows] = sums
        self.table[rows] = values - self.lr * gradient / (sums.sqrt() + 1e-10)
        return float(loss) + 0.5 * self.weight * float(values.pow(2).sum())


def kernel_step(recipe: PairsRecipe, prepared, fused: bool):
    """(run one batch, the mean loss since the last reset, reset) of the kernel's fused or autograd step."""
    torch.manual_seed(recipe.config.seed)
    module = recipe.build_module(prepared, sparse=True)
    optimizers = build_optimizers(module, recipe.config.optim)
    if fused:
        step = build_step(module, optimizers, recipe.config.optim, distributed=False)
        assert isinstance(step, RowStep), "the cell must take the fused step"
    else:
        step = OptimiserStep(module, optimizers, GradientExchange(module), DivergenceGuard(module, distributed=False))
    totals = [EpochTotals()]

    def run(batch: dict, generator: torch.Generator, index: int) -> None:
        step([batch], Step(generator, {}, 1, index), totals[0])
        if index % 32 == 0:  # the worker loop's reads of the guard
            assert step.guard.problem() is None

    return run, lambda _: totals[0].means()["loss"], lambda: totals.__setitem__(0, EpochTotals())


def plain_loop(loop_class, recipe: PairsRecipe, prepared):
    """(run one batch, the mean loss of the given losses, reset) of a plain loop from the kernel's initial table."""
    torch.manual_seed(recipe.config.seed)
    loop = loop_class(recipe.build_module(prepared, sparse=True).encoder.embedding.weight.detach(), recipe.config)
    return (lambda batch, generator, index: loop(batch, generator)), lambda losses: sum(losses) / len(losses), None


def timed_run(make, batches: list[dict], seed: int) -> tuple[float, float]:
    """(pairs/s over ``batches`` after the warm-up, mean loss of the timed steps) of one runner."""
    run, loss_of, reset = make()
    generator = torch.Generator().manual_seed(seed)
    for index, batch in enumerate(batches[:WARM_UP_STEPS], 1):
        run(batch, generator, index)
    if reset is not None:
        reset()
    losses, pairs = [], 0
    started = time.perf_counter()
    for index, batch in enumerate(batches[WARM_UP_STEPS:], WARM_UP_STEPS + 1):
        losses.append(run(batch, generator, index))
        pairs += len(batch["len_a"])
    seconds = time.perf_counter() - started
    return pairs / seconds, loss_of(losses)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batches", type=int, nargs="+", default=[25, 50, 100])
    parser.add_argument("--pairs", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    torch.set_num_threads(1)  # a Ray Train worker of 1 CPU

    rows = []
    for batch_size in args.batches:
        config = load_config(PairsConfig, CONFIG, {**CELL, "optim.batch_size": batch_size})
        recipe = PairsRecipe(config)
        prepared = recipe.prepare()
        data = {name: torch.from_numpy(array)
                for name, array in arrow_to_tensors(pq.read_table(prepared.pairs_path)).items()}
        epoch = epoch_batches(data, batch_size, epoch_generator(config.seed, 0, 0, torch.device("cpu")),
                              seed=config.seed, epoch=0, rank=0)
        batches = [batch for _, batch in zip(range(WARM_UP_STEPS + args.pairs // batch_size), epoch)]

        runners = {"parabit fused": lambda: kernel_step(recipe, prepared, fused=True),
                   "parabit autograd": lambda: kernel_step(recipe, prepared, fused=False),
                   "plain PyTorch": lambda: plain_loop(PlainLoop, recipe, prepared),
                   "plain PyTorch, gradient written out": lambda: plain_loop(WrittenOutLoop, recipe, prepared)}
        speeds: dict[str, list[float]] = {name: [] for name in runners}
        losses: dict[str, float] = {}
        for repeat in range(args.repeats):
            for name, make in runners.items():
                speed, losses[name] = timed_run(make, batches, seed=repeat)
                speeds[name].append(speed)
                print(f"batch {batch_size} repeat {repeat + 1}: {name} {speed:,.0f} pairs/s", flush=True)
        plain_median = median(speeds["plain PyTorch"])
        for name, values in speeds.items():
            rows.append([batch_size, name, f"{median(values):,.0f}", f"{min(values):,.0f} – {max(values):,.0f}",
                         f"**{median(values) / plain_median:.2f}**",
                         ", ".join(f"{v / p:.2f}" for v, p in zip(values, speeds["plain PyTorch"])),
                         f"{losses[name]:.3f}"])

    body = f"""## The static training step (`bench/bench_static_step.py`)

{machine_line()} · an Elgohary BiSent J_bi cell (AVG sum, 300-d, AdaGrad lr 0.05, N(0, 0.1²) rows, Euclidean,
margin 1, k 15, λ 1e-3) on the 138,871 en-es pairs of `jobs/configs/bilingual_sentences.yaml`, one thread, no Ray;
{args.pairs:,} pairs per run (the epoch's first batches, after {WARM_UP_STEPS} untimed steps), {args.repeats} repeats
of the four runners in turn.

{table(["batch", "runner", "pairs/s (median)", "spread (min – max)", "vs plain PyTorch (median)", "each repeat",
        "mean loss (last repeat)"], rows)}

"vs plain PyTorch" = runner's pairs/s / the plain autograd loop's in the same repeat. Every runner draws the same
negatives from the same generator, so the mean losses of the timed steps agree (to float rounding);
`tests/training/test_row_step.py` holds the fused step equal to the autograd step, weights and optimiser state.
Target (issue "Training at the machine's limit"): `parabit train` on this cell ≥ 25,000 pairs/s per epoch at batch 50
and ≥ 18,000 at batch 25 on one worker."""
    print(write_section("bench_static_step", body))


if __name__ == "__main__":
    main()
