"""GradientExchange: N data-parallel workers train exactly as one worker on the concatenated batches.

Two processes (gloo on a loopback port) each take half of every batch, run an AvgEncoder with a sparse word table and a
per-example loss (it decomposes over examples, so the mean over the whole batch is the mean of the two halves' means),
average their gradients with :class:`GradientExchange` and step the kernel's optimisers (``RowSparseAdam`` for the
tables, ``Adam`` for dense weights). The parameters must equal those of one process trained on the whole batches. The
halves are drawn from vocabulary ranges of different sizes, so the workers touch different numbers of rows (the
all-gather pads), and some rows only one worker touches.
"""

from __future__ import annotations

import socket

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn.functional as F
from torch import nn

from parabit.encoders import AvgEncoder
from parabit.training import OptimConfig
from parabit.training.exchange import GradientExchange
from parabit.training.optimizers import build_optimizers

DIM, BATCH, STEPS, LENGTH = 16, 8, 6, 7
WORLD = 2

# name: (vocabulary, sparse tables, a dense weight beside them, learned per-word weights: a second sparse table,
#        the dense weight used by the first half of each batch only: one worker has no gradient for it)
SCENARIOS = {
    "sparse table": (400, True, False, False, False),
    "sparse tables and a dense weight": (400, True, True, True, False),
    "a dense weight only one worker's batch reaches": (400, True, True, False, True),
    "dense table (the baseline exchange)": (400, False, True, False, False),
}


class PairModel(nn.Module):
    """AVG (optionally SIF-style learned word weights) and an optional dense projection of the first side, applied to
    every pair, or only to the pairs flagged ``projected`` (then a worker whose pairs have none has no gradient for
    it)."""

    def __init__(self, vocab: int, sparse: bool, dense: bool, learn_weights: bool, partial: bool):
        super().__init__()
        self.encoder = AvgEncoder(vocab, DIM, sparse=sparse, weighted=learn_weights, learn_weights=learn_weights)
        self.project = nn.Linear(DIM, DIM) if dense else None
        self.partial = partial

    def forward(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        a = self.encoder(batch["ids_a"], batch["len_a"])
        b = self.encoder(batch["ids_b"], batch["len_b"])
        if self.project is not None and not self.partial:
            a = self.project(a)
        elif self.project is not None and batch["projected"].any():
            a = torch.where(batch["projected"].unsqueeze(1), self.project(a), a)
        return (1 - F.cosine_similarity(a, b)).mean()  # one term per example


def batches(vocab: int) -> list[dict[str, torch.Tensor]]:
    """STEPS batches of BATCH pairs; the first half's words come from ids 1..30, the second half's from the whole
    vocabulary, so the two workers' halves touch very different numbers of rows; the first half is ``projected``."""
    generator = torch.Generator().manual_seed(7)
    out = []
    for _ in range(STEPS):
        batch = {}
        for side in ("a", "b"):
            narrow = torch.randint(1, 30, (BATCH // 2, LENGTH), generator=generator)
            wide = torch.randint(1, vocab, (BATCH // 2, LENGTH), generator=generator)
            batch[f"ids_{side}"] = torch.cat([narrow, wide])
            batch[f"len_{side}"] = torch.randint(2, LENGTH + 1, (BATCH,), generator=generator)
        batch["projected"] = torch.arange(BATCH) < BATCH // 2
        out.append(batch)
    return out


def train(scenario: str, rank: int = 0, world: int = 1) -> tuple[dict[str, torch.Tensor], list[int]]:
    """Train the scenario's model for STEPS steps on this rank's share of every batch; its final parameters and the
    bytes each step exchanged."""
    torch.manual_seed(0)
    model = PairModel(*SCENARIOS[scenario])
    vocab = SCENARIOS[scenario][0]
    optimizers = build_optimizers(model, OptimConfig(name="adam", lr=0.05, batch_size=BATCH))
    exchange = GradientExchange(model)
    share = BATCH // world
    sent = []
    for batch in batches(vocab):
        mine = {key: value[rank * share:(rank + 1) * share] for key, value in batch.items()}
        for optimizer in optimizers:
            optimizer.zero_grad(set_to_none=True)
        model(mine).backward()
        exchange.average()
        sent.append(exchange.bytes_last_step)
        for optimizer in optimizers:
            optimizer.step()
    return {name: p.detach().clone() for name, p in model.named_parameters()}, sent


def worker(rank: int, world: int, port: int, results: str) -> None:
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
    try:
        torch.save({scenario: train(scenario, rank, world) for scenario in SCENARIOS}, f"{results}/rank{rank}.pt")
    finally:
        dist.destroy_process_group()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def distributed(tmp_path_factory) -> list[dict]:
    """Every scenario trained by two gloo workers (one spawn for all of them): per rank, scenario → result."""
    folder = tmp_path_factory.mktemp("exchange")
    mp.spawn(worker, args=(WORLD, free_port(), str(folder)), nprocs=WORLD, join=True)
    return [torch.load(folder / f"rank{rank}.pt") for rank in range(WORLD)]


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_two_workers_train_exactly_as_one_on_the_whole_batches(distributed, scenario):
    reference, _ = train(scenario)
    for rank in range(WORLD):
        parameters, _ = distributed[rank][scenario]
        assert parameters.keys() == reference.keys()
        for name, value in parameters.items():
            torch.testing.assert_close(value, reference[name], rtol=1e-5, atol=1e-6, msg=f"rank {rank}: {name}")
    # The workers moved at all: training changed the table (so the comparison above is not of two initialisations).
    torch.manual_seed(0)
    untrained = PairModel(*SCENARIOS[scenario])
    assert not torch.allclose(untrained.encoder.embedding.weight, reference["encoder.embedding.weight"])


def test_sparse_exchange_sends_the_touched_rows_not_the_table(distributed):
    _, sparse_bytes = distributed[0]["sparse table"]
    _, dense_bytes = distributed[0]["dense table (the baseline exchange)"]
    vocab = SCENARIOS["sparse table"][0]
    # At most every word of the batch, from each worker (ids and rows of DIM floats), plus the metadata.
    most_rows = BATCH * LENGTH * 2
    assert all(0 < sent <= WORLD * most_rows * (8 + 4 * DIM) + 1024 for sent in sparse_bytes)
    assert all(sent >= vocab * DIM * 4 for sent in dense_bytes)  # the whole table, every step
