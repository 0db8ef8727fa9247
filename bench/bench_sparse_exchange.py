"""Sparse data-parallel training: bytes per step and steps/s of the row-sparse gradient exchange against the dense one,
at 20k, 200k and 2M words, on 2 gloo worker processes (CPU).

    .venv/bin/python bench/bench_sparse_exchange.py [--sizes 20000 200000 2000000] [--dim 300] [--steps 5]
        [--repeats 40]

Each of the two worker processes (``torch.multiprocessing`` spawn, ``init_process_group("gloo")`` on a loopback port,
one torch thread each, as two 1-CPU Ray Train workers) runs the training kernel's step on parabit's own pair model
(``PairModule``: AVG dim ``--dim`` + J_pa with MAX in-batch negatives), its optimisers (``build_optimizers``:
RowSparseAdam for sparse tables, Adam for dense weights) and its exchange (``GradientExchange``): forward, backward,
exchange, optimiser step. Batches: 100 pairs per worker, with the lengths of the real prepared en-es pairs (each
worker its own half of them) and word ids drawn uniformly from the vocabulary (the worst case: every row equally
likely). The vocabularies alternate in short blocks (``--steps`` steps, ``--repeats`` blocks each) so all see the
same moments of a shared machine's load.

* ``sparse_rows`` (``scaling.gradient_exchange: sparse_rows``, the default): the word table's gradient is row-sparse
  and the workers all-gather the rows they touched;
* ``dense`` (``scaling.gradient_exchange: dense``, the baseline): dense word table, its whole gradient all-reduced
  every step. At 2M words two workers' dense tables, gradients and Adam moments would need ~19 GiB, more than this
  machine has beside the sparse runs: there only the all-reduce of the [2M, dim] gradient is timed (a lower bound
  of that step), with the bytes it moves.

Bytes per step: what ``GradientExchange.bytes_last_step`` counts, per worker (the all-reduced buffers; the
all-gathered ones as each worker receives them, its own part included; the metadata). A second table gives the sparse
exchange's bytes by batch size at the smallest and largest vocabulary: they follow the batch, not the vocabulary.
Memory: ~8 GiB per worker at 2M words (table and RowSparseAdam's moments).
"""

from __future__ import annotations

import argparse
import gc
import os
import socket
import sys
import tempfile
import time
from pathlib import Path

from parabit.ray_runtime import torch_env

os.environ.update(torch_env())  # before torch is imported (the spawned workers import this module again)

import pyarrow.parquet as pq  # noqa: E402
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402
from _common import machine_line, median, table, write_section  # noqa: E402

from parabit.encoders import build_encoder  # noqa: E402
from parabit.recipes.pairs.config import DataConfig, ObjectiveConfig  # noqa: E402
from parabit.recipes.pairs.data import prepare_pairs  # noqa: E402
from parabit.recipes.pairs.model import PairModule  # noqa: E402
from parabit.training.batches import shuffled_batches  # noqa: E402
from parabit.training import OptimConfig  # noqa: E402
from parabit.training.exchange import GradientExchange  # noqa: E402
from parabit.training.optimizers import build_optimizers  # noqa: E402
from parabit.training import arrow_to_tensors  # noqa: E402
from parabit.training import Step  # noqa: E402

WORLD, BATCH = 2, 100
DENSE_LIMIT = 200_000  # dense tables above this size: only the all-reduce is timed (see the module docstring)


class Subject:
    """A model at one vocabulary size and exchange, with its optimisers, its exchange and an endless batch stream."""

    def __init__(self, vocab: int, dim: int, exchange: str, data: dict[str, torch.Tensor], rank: int):
        generator = torch.Generator().manual_seed(vocab * 10 + rank)
        data = dict(data)
        for side in ("a", "b"):  # real sentence lengths, word ids spread over the whole vocabulary
            data[f"ids_{side}"] = torch.randint(1, vocab, data[f"ids_{side}"].shape, generator=generator)
        self.data, self.generator, self.batch = data, generator, BATCH
        torch.manual_seed(0)  # the same initial model on every worker, as the kernel seeds it
        spec = {"encoder": "avg", "vocab_size": vocab, "dim": dim, "options": {}}
        sparse = exchange == "sparse_rows"
        self.model = PairModule(build_encoder("avg", vocab, dim, sparse=sparse), spec,
                                ObjectiveConfig(name="jpa", margin=0.4, sampling="max"))
        self.optimizers = build_optimizers(self.model, OptimConfig(name="adam", batch_size=BATCH))
        self.exchange = GradientExchange(self.model)
        self.stream = self._stream()

    def use_batch(self, size: int) -> None:
        self.batch, self.stream = size, self._stream()

    def _stream(self):
        while True:
            yield from shuffled_batches(self.data, self.batch, self.generator)

    def steps(self, count: int) -> dict[str, float]:
        """Seconds per step (wall, CPU, and the exchange's share of the wall) and bytes per step over ``count``."""
        started, cpu_started, exchanging, sent = time.perf_counter(), time.process_time(), 0.0, 0
        for _ in range(count):
            loss = self.model(next(self.stream), Step(self.generator, {}, 1, 1))
            for optimizer in self.optimizers:
                optimizer.zero_grad(set_to_none=True)
            loss.backward()
            exchange_started = time.perf_counter()
            self.exchange.average()
            exchanging += time.perf_counter() - exchange_started
            sent += self.exchange.bytes_last_step
            for optimizer in self.optimizers:
                optimizer.step()
        return {"wall": (time.perf_counter() - started) / count, "cpu": (time.process_time() - cpu_started) / count,
                "exchange": exchanging / count, "bytes": sent / count}


def worker(rank: int, port: int, args: argparse.Namespace, data_path: str, out: str) -> None:
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=WORLD)
    everything = {k: torch.from_numpy(v) for k, v in arrow_to_tensors(pq.read_table(data_path)).items()}
    shard = {k: v[rank::WORLD] for k, v in everything.items()}  # each worker its own half of the pairs
    results: dict = {"blocks": {}, "by_batch": {}, "dense_allreduce": {}}
    for exchange in ("sparse_rows", "dense"):
        sizes = [v for v in args.sizes if exchange == "sparse_rows" or v <= DENSE_LIMIT]
        subjects = {vocab: Subject(vocab, args.dim, exchange, shard, rank) for vocab in sizes}
        for subject in subjects.values():
            subject.steps(10)  # warm-up: allocator, optimiser state
        blocks = {vocab: [] for vocab in sizes}
        for repeat in range(args.repeats):
            for vocab, subject in subjects.items():
                dist.barrier()
                blocks[vocab].append(subject.steps(args.steps))
            if rank == 0 and repeat % max(args.repeats // 5, 1) == 0:
                print(exchange, repeat, {v: f"{b[-1]['wall'] * 1e3:.1f} ms" for v, b in blocks.items()}, flush=True)
        results["blocks"][exchange] = blocks
        if exchange == "sparse_rows":  # bytes follow the batch: the smallest and largest vocabulary, other batches
            for vocab in (min(sizes), max(sizes)):
                for batch in (25, 50, 100, 200, 400):
                    subjects[vocab].use_batch(batch)
                    results["by_batch"][vocab, batch] = subjects[vocab].steps(3)["bytes"]
                subjects[vocab].use_batch(BATCH)
        del subjects, subject  # the tables go before the next phase's are made (the loop variable holds one too)
        gc.collect()
    for vocab in (v for v in args.sizes if v > DENSE_LIMIT):  # the dense exchange's all-reduce alone
        grad = torch.zeros(vocab, args.dim)
        times = []
        for _ in range(3):
            dist.barrier()
            started = time.perf_counter()
            dist.all_reduce(grad)
            grad.div_(WORLD)
            times.append(time.perf_counter() - started)
        results["dense_allreduce"][vocab] = {"wall": median(times), "bytes": grad.numel() * grad.element_size()}
        del grad
    if rank == 0:
        torch.save(results, out)
    dist.destroy_process_group()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[20_000, 200_000, 2_000_000])
    parser.add_argument("--dim", type=int, default=300)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=40)
    args = parser.parse_args()
    prepared = prepare_pairs(DataConfig(condition="bilingual_sentences", max_pairs=50_000))
    out = Path(tempfile.mkdtemp(prefix="bench-exchange-")) / "results.pt"
    mp.spawn(worker, args=(free_port(), args, str(prepared.pairs_path), str(out)), nprocs=WORLD, join=True)
    results = torch.load(out, weights_only=True)

    small = min(args.sizes)
    rows = []
    for exchange, blocks in results["blocks"].items():
        for vocab, measured in blocks.items():
            wall = median([b["wall"] for b in measured])
            ratio = median([big["wall"] / little["wall"] for little, big in zip(blocks[small], measured)])
            exchanging = median([b["exchange"] for b in measured])
            rows.append([exchange, f"{vocab:,}", f"{median([b['bytes'] for b in measured]) / 1024**2:,.2f}",
                         f"{wall * 1e3:.2f}", f"{1 / wall:.1f}", f"{exchanging * 1e3:.2f}",
                         f"{median([b['cpu'] for b in measured]) * 1e3:.2f}", f"{ratio:.2f}"])
    for vocab, measured in results["dense_allreduce"].items():
        wall = measured["wall"]
        rows.append(["dense (all-reduce only)", f"{vocab:,}", f"{measured['bytes'] / 1024**2:,.2f}",
                     f"≥ {wall * 1e3:.0f}", f"≤ {1 / wall:.2f}", f"{wall * 1e3:.0f}", "", ""])
    batches = sorted({batch for _, batch in results["by_batch"]})
    vocabularies = sorted({vocab for vocab, _ in results["by_batch"]})
    by_batch = [[f"{vocab:,}", *(f"{results['by_batch'][vocab, batch] / 1024**2:.2f}" for batch in batches)]
                for vocab in vocabularies]
    sparse_blocks = results["blocks"]["sparse_rows"]
    headline = median([big["wall"] / little["wall"]
                       for little, big in zip(sparse_blocks[small], sparse_blocks[max(args.sizes)])])
    body = f"""## Sparse data-parallel exchange: bytes and steps/s by vocabulary (`bench/bench_sparse_exchange.py`)

{machine_line()} · {WORLD} worker processes (torch.multiprocessing spawn, gloo on loopback, 1 torch thread each;
THP_MEM_ALLOC_ENABLE={os.environ.get("THP_MEM_ALLOC_ENABLE")}), AVG dim {args.dim} + J_pa (MAX negatives), {BATCH} pairs
per worker and step (real en-es sentence lengths, uniform word ids), the kernel's optimisers (RowSparseAdam / Adam)
and `GradientExchange`; {args.steps} steps × {args.repeats} alternating blocks per vocabulary; medians (rank 0).
Bytes per step: per worker, as `GradientExchange.bytes_last_step` counts them. "vs {small:,}": median over block
pairs of ms/step at this size / ms/step at {small:,} words, same exchange. Target: sparse rows at
{max(args.sizes):,} words ≤ 1.3 × {small:,} words.

{table(["exchange", "words", "MiB per step", "ms/step", "steps/s", "of which exchange ms", "CPU ms/step",
        f"vs {small:,}"], rows)}

Sparse rows, MiB per step by batch size (pairs per worker), 3 steps each:

{table(["words", *(f"batch {batch}" for batch in batches)], by_batch)}

Sparse rows at {max(args.sizes):,} words: **{headline:.2f}×** the step time at {small:,} words. NCCL/GPU: the same
code path (all-gather of dense tensors) was not run here: no GPU was available.
"""
    write_section("bench_sparse_exchange", body)


if __name__ == "__main__":
    sys.exit(main())
