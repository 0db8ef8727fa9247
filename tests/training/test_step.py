"""The kernel's optimiser step and epoch order: gradient accumulation learns exactly what one step over the same pairs
does, and an epoch that is a slice of a seeded stream (``optim.pairs_per_epoch``) is known without replaying the
epochs before it, covers the shard pass by pass, and is the same every time it is asked for."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from parabit.encoders import AvgEncoder
from parabit.training import OptimConfig
from parabit.training.batches import epoch_batches, stream_order
from parabit.training.exchange import GradientExchange
from parabit.training.guard import DivergenceGuard
from parabit.training.optimizers import build_optimizers
from parabit.training.recipe import Step, TrainingModule
from parabit.training.step import EpochTotals, OptimiserStep, grouped, steps_of

VOCAB, DIM, PAIRS, LENGTH = 50, 8, 12, 5


class PairModule(TrainingModule):
    """AVG over a sparse word table and a dense projection; one loss term per pair (so a batch's mean loss is the mean
    of its halves' means), and a part to report."""

    def __init__(self, sparse: bool):
        super().__init__()
        torch.manual_seed(0)
        self.encoder = AvgEncoder(VOCAB, DIM, sparse=sparse)
        self.project = torch.nn.Linear(DIM, DIM)

    def forward(self, batch, step):
        a = self.project(self.encoder(batch["ids_a"], batch["len_a"]))
        b = self.encoder(batch["ids_b"], batch["len_b"])
        loss = (1 - F.cosine_similarity(a, b)).mean()
        return loss, {"half": loss / 2}


def pairs(seed: int = 1) -> dict[str, torch.Tensor]:
    generator = torch.Generator().manual_seed(seed)
    return {"ids_a": torch.randint(1, VOCAB, (PAIRS, LENGTH), generator=generator),
            "ids_b": torch.randint(1, VOCAB, (PAIRS, LENGTH), generator=generator),
            "len_a": torch.full((PAIRS,), LENGTH), "len_b": torch.full((PAIRS,), LENGTH)}


def train(batches: list[list[dict]], sparse: bool) -> tuple[dict[str, torch.Tensor], EpochTotals]:
    module = PairModule(sparse)
    optimizers = build_optimizers(module, OptimConfig(lr=0.05))
    step = OptimiserStep(module, optimizers, GradientExchange(module), DivergenceGuard(module, distributed=False),
                         clip_norm=1.0)
    totals = EpochTotals()
    for index, group in enumerate(batches, 1):
        step(group, Step(torch.Generator(), {}, 1, index), totals)
    assert step.guard.problem() is None
    return {name: p.detach().clone() for name, p in module.state_dict().items()}, totals


def split(data: dict[str, torch.Tensor], parts: int) -> list[dict[str, torch.Tensor]]:
    size = PAIRS // parts
    return [{key: value[i * size:(i + 1) * size] for key, value in data.items()} for i in range(parts)]


def test_accumulating_three_batches_learns_what_one_step_over_them_does():
    steps = [pairs(seed) for seed in (1, 2)]
    for sparse in (True, False):  # the row-sparse table (RowSparseAdam) and a dense one (Adam)
        whole, whole_totals = train([[data] for data in steps], sparse)
        accumulated, totals = train([split(data, 3) for data in steps], sparse)
        for name in whole:
            torch.testing.assert_close(accumulated[name], whole[name], rtol=1e-5, atol=1e-6, msg=name)
        assert totals.seen == whole_totals.seen == 2 * PAIRS
        means, whole_means = totals.means(), whole_totals.means()
        assert means.keys() == {"loss", "half"}
        assert abs(means["loss"] - whole_means["loss"]) < 1e-5 and abs(means["half"] - means["loss"] / 2) < 1e-6


def test_batches_are_grouped_into_steps():
    assert [len(group) for group in grouped(range(7), 3)] == [3, 3, 1]
    assert [steps_of(batches, 3) for batches in (6, 7, 1)] == [2, 3, 1]


def test_a_stream_slice_is_known_without_the_epochs_before_it_and_covers_each_pass():
    rows, per_epoch = 10, 4
    stream = torch.cat([stream_order(rows, epoch * per_epoch, per_epoch, seed=3, rank=0, device=torch.device("cpu"))
                        for epoch in range(5)])  # 20 positions: two whole passes
    assert sorted(stream[:rows].tolist()) == list(range(rows)) == sorted(stream[rows:].tolist())
    assert stream[:rows].tolist() != stream[rows:].tolist()  # each pass shuffled anew
    late = stream_order(rows, 3 * per_epoch, per_epoch, seed=3, rank=0, device=torch.device("cpu"))
    assert late.tolist() == stream[12:16].tolist()  # asked for alone: the same pairs
    other_rank = stream_order(rows, 0, rows, seed=3, rank=1, device=torch.device("cpu"))
    assert other_rank.tolist() != stream[:rows].tolist()


def test_epoch_batches_take_the_slice_or_the_whole_shard():
    data = pairs()
    generator = torch.Generator().manual_seed(0)
    sliced = list(epoch_batches(data, 3, generator, seed=1, epoch=2, rank=0, pairs_per_epoch=5))
    assert [len(b["len_a"]) for b in sliced] == [3, 2]
    whole = list(epoch_batches(data, 5, torch.Generator().manual_seed(0), seed=1, epoch=0, rank=0))
    assert [len(b["len_a"]) for b in whole] == [5, 5, 2]
