"""Vocabulary scaling: the AVG training step at a 2M-word vocabulary against the same step at 20k words.

    .venv/bin/python bench/bench_vocab_scaling.py [--small 20000] [--large 2000000] [--dim 300] [--steps 5] [--repeats 200]
        [--ids uniform|zipf] [--optimizers sparseadam adam adagrad]

One training step of parabit's own pair model (``PairModule``: ``AvgEncoder`` with a sparse word table, J_pa with MAX
negatives), optimisers (``build_optimizers``) and the kernel's shuffled, trimmed batches (``shuffled_batches``):
forward, loss, ``zero_grad``, backward, optimiser step. Batches have the shapes of the real prepared en-es pairs
(their lengths; batch 100, dim ``--dim``) with word ids drawn from the vocabulary, so both sizes touch about the
same number of rows per step: ``uniform`` (the worst case: every row equally likely, so at 2M nearly every touched row
is a cache miss) or ``zipf`` (P(id r) ∝ 1/r, a frequency-sorted vocabulary under Zipf's law, as text is). The two vocabularies alternate in short blocks (``--steps`` steps, ``--repeats`` blocks each), so
both see the same moments of a shared machine's load; the headline is the median over block pairs of large / small,
for each optimiser: ``sparseadam`` (torch.optim.SparseAdam, the baseline), ``adam`` (what parabit trains with:
RowSparseAdam) and ``adagrad``, with each size's median step time beside it.
The process runs with parabit's worker settings for torch (``TORCH_ENV_DEFAULTS``: huge pages for large tensors), as a
Ray Train worker does; ``THP_MEM_ALLOC_ENABLE=0 python bench/...`` measures without them.
Memory: the 2M × 300 table is 2.3 GiB, plus Adam's two moment tables (Adagrad: one): ~7 GiB at dim 300; the
optimisers run one after another, so only one optimiser's tables are held at a time.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time

from parabit.ray_runtime import torch_env

os.environ.update(torch_env())  # before torch is imported: it reads them once, at its first allocation

import pyarrow.parquet as pq  # noqa: E402
import torch  # noqa: E402
from _common import machine_line, median, table, write_section  # noqa: E402

from parabit.encoders import build_encoder  # noqa: E402
from parabit.recipes.pairs.config import DataConfig, ObjectiveConfig  # noqa: E402
from parabit.recipes.pairs.data import prepare_pairs  # noqa: E402
from parabit.recipes.pairs.model import PairModule  # noqa: E402
from parabit.training.batches import shuffled_batches  # noqa: E402
from parabit.training import OptimConfig  # noqa: E402
from parabit.training.optimizers import build_optimizers  # noqa: E402
from parabit.training import arrow_to_tensors  # noqa: E402
from parabit.training import Step  # noqa: E402

BATCH = 100


def draw_ids(kind: str, vocab_size: int, shape: torch.Size, generator: torch.Generator) -> torch.Tensor:
    """Word ids 1..vocab_size-1 (0 is padding): uniform, or Zipfian over a frequency-sorted vocabulary."""
    if kind == "uniform":
        return torch.randint(1, vocab_size, shape, generator=generator)
    cumulative = torch.cumsum(1.0 / torch.arange(1, vocab_size, dtype=torch.float64), 0)
    draws = torch.rand(shape, generator=generator, dtype=torch.float64) * cumulative[-1]
    return (torch.searchsorted(cumulative, draws) + 1).clamp_(max=vocab_size - 1)


class Subject:
    """A model at one vocabulary size, with its optimisers and an endless stream of batches."""

    def __init__(self, vocab_size: int, dim: int, optimizer: str, data: dict[str, torch.Tensor], ids: str):
        generator = torch.Generator().manual_seed(vocab_size)
        data = dict(data)
        for side in ("a", "b"):  # real sentence lengths, word ids spread over the whole vocabulary
            data[f"ids_{side}"] = draw_ids(ids, vocab_size, data[f"ids_{side}"].shape, generator)
        self.data = data
        spec = {"encoder": "avg", "vocab_size": vocab_size, "dim": dim, "options": {}}
        self.model = PairModule(build_encoder("avg", vocab_size, dim, sparse=True), spec,
                                ObjectiveConfig(name="jpa", margin=0.4, sampling="max"))
        if optimizer == "sparseadam":  # the baseline: torch's own, as parabit used before RowSparseAdam
            self.optimizers = [torch.optim.SparseAdam(self.model.parameters(), lr=OptimConfig().lr)]
        else:
            self.optimizers = build_optimizers(self.model, OptimConfig(name=optimizer, batch_size=BATCH))
        self.generator = generator
        self.stream = self._stream()

    def _stream(self):
        while True:
            yield from shuffled_batches(self.data, BATCH, self.generator)

    def steps(self, count: int) -> tuple[float, float]:
        """Wall and CPU seconds per step, averaged over ``count`` steps (CPU time: less disturbed by other load)."""
        started, cpu_started = time.perf_counter(), time.process_time()
        for _ in range(count):
            loss = self.model(next(self.stream), Step(self.generator, {}, 1, 1))
            for optimizer in self.optimizers:
                optimizer.zero_grad(set_to_none=True)
            loss.backward()
            for optimizer in self.optimizers:
                optimizer.step()
        return (time.perf_counter() - started) / count, (time.process_time() - cpu_started) / count


def measure(optimizer: str, dim: int, data: dict, sizes: tuple[int, int], steps: int, repeats: int, ids: str) -> dict:
    """``{vocabulary size: [(wall, CPU) seconds per step, one per block]}``, the sizes alternating block by block."""
    subjects = {size: Subject(size, dim, optimizer, data, ids) for size in sizes}
    for size in sizes:
        subjects[size].steps(20)  # warm-up: allocator, optimiser state
    times: dict[int, list[tuple[float, float]]] = {size: [] for size in sizes}
    for repeat in range(repeats):
        for size in sizes:
            times[size].append(subjects[size].steps(steps))
        if repeat % max(repeats // 5, 1) == 0:
            print(optimizer, repeat, {size: f"{t[-1][0] * 1e3:.2f} ms wall, {t[-1][1] * 1e3:.2f} ms CPU"
                                      for size, t in times.items()}, flush=True)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", type=int, default=20_000)
    parser.add_argument("--large", type=int, default=2_000_000)
    parser.add_argument("--dim", type=int, default=300)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=200)
    parser.add_argument("--optimizers", nargs="+", choices=["sparseadam", "adam", "adagrad"],
                        default=["sparseadam", "adam", "adagrad"])
    parser.add_argument("--ids", choices=["uniform", "zipf"], default="uniform")
    args = parser.parse_args()
    torch.set_num_threads(1)  # as in a 1-CPU Ray Train worker; and the CPU clock then counts no spinning threads

    prepared = prepare_pairs(DataConfig(condition="bilingual_sentences", max_pairs=50_000))
    data = {k: torch.from_numpy(v) for k, v in arrow_to_tensors(pq.read_table(prepared.pairs_path)).items()}
    rows = []
    for optimizer in args.optimizers:
        times = measure(optimizer, args.dim, data, (args.small, args.large), args.steps, args.repeats, args.ids)
        gc.collect()  # the large tables of this optimiser go before the next one's are made
        for clock, name in ((0, "wall"), (1, "CPU")):
            small = median([t[clock] for t in times[args.small]])
            large = median([t[clock] for t in times[args.large]])
            paired = median([big[clock] / little[clock] for little, big in zip(times[args.small], times[args.large])])
            rows.append([optimizer, name, f"{small * 1e3:.2f}", f"{large * 1e3:.2f}", f"{paired:.2f}"])

    huge_pages = os.environ.get("THP_MEM_ALLOC_ENABLE") == "1"
    section = "bench_vocab_scaling" + ("" if args.ids == "uniform" else f"_{args.ids}") + ("" if huge_pages else "_no_thp")
    body = f"""## Vocabulary scaling, {args.ids} word ids{"" if huge_pages else ", no huge pages"} (`bench/bench_vocab_scaling.py`)

{machine_line()} · AVG dim {args.dim} + J_pa, sparse word table, batch {BATCH} (real en-es sentence lengths, {args.ids}
word ids), {args.steps} steps × {args.repeats} alternating blocks per size; median ms per step (forward, loss, backward,
optimiser step), by the wall clock and by this process's CPU time (torch threads: {torch.get_num_threads()};
THP_MEM_ALLOC_ENABLE={os.environ.get("THP_MEM_ALLOC_ENABLE")}). Optimisers: sparseadam = torch.optim.SparseAdam (baseline),
adam = parabit's RowSparseAdam (what `optim.name: adam` trains with), adagrad = torch.optim.Adagrad.
Target: {args.large:,} words ≤ 1.2 × {args.small:,} words.

{table(["optimiser", "clock", f"{args.small:,} words ms/step", f"{args.large:,} words ms/step",
        "large / small (median of block pairs)"], rows)}
"""
    write_section(section, body)


if __name__ == "__main__":
    sys.exit(main())
