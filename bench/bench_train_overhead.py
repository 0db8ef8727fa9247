"""Ray Train overhead and data-parallel scaling: the real training path against a plain PyTorch loop.

    .venv/bin/python bench/bench_train_overhead.py [--pairs 20000] [--epochs 3] [--repeats 2] [--no-two-workers]

Both sides train AVG (dim 300, sparse word table, RowSparseAdam lr 0.001) with J_pa (margin 0.4, MAX in-batch negatives)
on the same prepared token ids (``prepare_pairs``: the first ``--pairs`` of the shuffled en-es bitext), batch
100, for ``--epochs`` epochs:

* ``plain``: one process, no Ray: a hand-written loop over the ids in memory (shuffle, trim each batch to its longest
  sentence, ``F.embedding_bag`` mean, cosine hinge against the hardest in-batch negative), with parabit's optimiser
  (``RowSparseAdam``) and torch settings (``TORCH_ENV_DEFAULTS``) as the Ray workers have them, so the ratio measures
  Ray Train and parabit's loop, not the optimiser;
* ``ray train, 1 worker``: ``parabit.training.driver.run_training`` (what ``jobs/train.py`` runs: TorchTrainer,
  the dataset via ``ray.data.from_arrow`` and ``get_dataset_shard``, per-epoch dev evaluation, checkpoints),
  with ``scaling.num_workers=1``.

The two alternate (plain, ray, plain, ray, ...) so both see the same machine load; throughput is the median over
the steady-state epochs (every epoch but each run's first) of all repeats, and the ratio is ray / plain. Ray's
start-up (``fit()`` called → worker ready for its first step) and the per-epoch dev evaluation are reported apart.
Then (unless ``--no-two-workers``) one run with 2 workers × 0.5 CPU. MLflow goes to a throw-away store.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

from parabit.ray_runtime import torch_env

SCRATCH = Path(tempfile.mkdtemp(prefix="bench-train-"))
os.environ.update(torch_env())  # before torch is imported: it reads them once (as Ray's workers get them)
os.environ.setdefault("MLFLOW_TRACKING_URI", f"sqlite:///{SCRATCH / 'mlflow.db'}")
os.environ.setdefault("RAY_DATA_DISABLE_PROGRESS_BARS", "1")

import pyarrow.parquet as pq  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from _common import machine_line, median, table, write_section  # noqa: E402

from parabit.evaluation.config import EvaluationConfig  # noqa: E402
from parabit.recipes.pairs.config import DataConfig, ModelConfig, ObjectiveConfig, PairsConfig  # noqa: E402
from parabit.recipes.pairs.data import prepare_pairs  # noqa: E402
from parabit.recipes.pairs.recipe import PairsRecipe  # noqa: E402
from parabit.training import OptimConfig, ScalingSettings
from parabit.training import TrackingConfig  # noqa: E402
from parabit.training.run import run_training  # noqa: E402
from parabit.training import arrow_to_tensors  # noqa: E402
from parabit.training.row_sparse_adam import RowSparseAdam  # noqa: E402

DIM, LR, MARGIN, BATCH = 300, 0.001, 0.4, 100


def plain_loop(ids: dict[str, torch.Tensor], vocab_size: int, epochs: int, seed: int) -> list[float]:
    """Pairs/s of each epoch of the plain single-process loop (no Ray; only the optimiser is parabit's)."""
    torch.manual_seed(seed)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as Ray gives a 1-CPU worker (OMP_NUM_THREADS=1); 2 threads collapse on a loaded machine
    table = torch.nn.Embedding(vocab_size, DIM, padding_idx=0, sparse=True)
    optimizer = RowSparseAdam(table.parameters(), lr=LR)
    rows = len(ids["len_a"])
    throughput = []
    for epoch in range(epochs):
        started = time.perf_counter()
        order = torch.randperm(rows)
        for start in range(0, rows - 1, BATCH):
            batch = order[start:start + BATCH]
            if len(batch) < 2:
                break
            a = ids["ids_a"][batch, :int(ids["len_a"][batch].max())]
            b = ids["ids_b"][batch, :int(ids["len_b"][batch].max())]
            g1 = F.embedding_bag(a, table.weight, mode="mean", padding_idx=0, sparse=True)
            g2 = F.embedding_bag(b, table.weight, mode="mean", padding_idx=0, sparse=True)
            pool = torch.cat([g1, g2])
            with torch.no_grad():  # hardest negative among the batch, never the sentence itself or its partner
                unit = F.normalize(pool, dim=-1)
                similarity = unit @ unit.T
                n, index = len(batch), torch.arange(2 * len(batch))
                similarity[index, index] = float("-inf")
                similarity[index, (index + n) % (2 * n)] = float("-inf")
                negative = similarity.argmax(dim=1)
            positive = F.cosine_similarity(g1, g2)
            loss = (F.relu(MARGIN - positive + F.cosine_similarity(g1, pool[negative[:n]]))
                    + F.relu(MARGIN - positive + F.cosine_similarity(g2, pool[negative[n:]]))).mean()
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
        throughput.append(rows / (time.perf_counter() - started))
    torch.set_num_threads(threads)
    return throughput


def ray_config(name: str, pairs: int, epochs: int, workers: int, cpus: float) -> PairsConfig:
    return PairsConfig(
        name=name,
        data=DataConfig(condition="bilingual_sentences", max_pairs=pairs),
        model=ModelConfig(encoder="avg", dim=DIM),
        objective=ObjectiveConfig(name="jpa", margin=MARGIN, sampling="max"),
        optim=OptimConfig(name="adam", lr=LR, batch_size=BATCH, epochs=epochs),
        scaling=ScalingSettings(num_workers=workers, cpus_per_worker=cpus),
        tracking=TrackingConfig(experiment="bench-train", register_as=""),
        evaluation=EvaluationConfig(sts_years=(2016,), sick=False, msrp=False),
        storage_path=str(SCRATCH / "ray_results"),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=20_000)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--no-two-workers", dest="two_workers", action="store_false")
    args = parser.parse_args()

    prepared = prepare_pairs(ray_config("x", args.pairs, 1, 1, 1.0).data)
    ids = {k: torch.from_numpy(v) for k, v in arrow_to_tensors(pq.read_table(prepared.pairs_path)).items()}
    plain, ray_runs = [], []
    for repeat in range(args.repeats):
        plain.append(plain_loop(ids, len(prepared.vocab), args.epochs, seed=repeat))
        print(f"plain repeat {repeat}: {[round(x) for x in plain[-1]]} pairs/s", flush=True)
        result = run_training(PairsRecipe(ray_config(f"bench-1w-{repeat}", args.pairs, args.epochs, 1, 1.0)))
        ray_runs.append(result)
        print(f"ray repeat {repeat}: {[round(h['pairs_per_second']) for h in result.history]} pairs/s, "
              f"seconds {result.seconds}", flush=True)
    two = (run_training(PairsRecipe(ray_config("bench-2w", args.pairs, args.epochs, 2, 0.5)))
           if args.two_workers else None)

    plain_steady = median([x for run in plain for x in run[1:]])
    ray_steady = median([h["pairs_per_second"] for run in ray_runs for h in run.history[1:]])
    startup = median([run.history[0]["startup_seconds"] for run in ray_runs])
    dev = median([h["dev_seconds"] for run in ray_runs for h in run.history])
    fit = median([run.seconds["train"] for run in ray_runs])
    rows = [
        ["plain PyTorch loop, 1 process", f"{plain_steady:,.0f}", "1.00", "–", "–"],
        ["ray train (`run_training`), 1 worker × 1 CPU", f"{ray_steady:,.0f}", f"{ray_steady / plain_steady:.2f}",
         f"{startup:.1f}", f"{fit:.1f}"],
    ]
    if two is not None:
        two_steady = median([h["pairs_per_second"] for h in two.history[1:]])
        rows.append(["ray train, 2 workers × 0.5 CPU (sparse-row exchange, gloo)", f"{two_steady:,.0f}",
                     f"{two_steady / plain_steady:.2f}", f"{two.history[0]['startup_seconds']:.1f}",
                     f"{two.seconds['train']:.1f}"])
    body = f"""## Ray Train overhead and data-parallel scaling (`bench/bench_train_overhead.py`)

{machine_line()} · AVG dim {DIM} + J_pa (margin {MARGIN}, MAX negatives), RowSparseAdam lr {LR}, batch {BATCH},
{len(ids["len_a"]):,} en-es pairs (vocabulary {len(prepared.vocab):,}), {args.epochs} epochs × {args.repeats} repeats,
plain and Ray runs alternating. Throughput: median pairs/s over the steady-state epochs (each run's first left out).

{table(["run", "pairs/s (steady state)", "vs plain", "start-up s (fit → first step)", "fit() s in all"], rows)}

Per-epoch dev evaluation (STS 2016, rank 0, outside the epoch time): {dev:.2f} s median.
Both sides run torch on one thread: Ray sets `OMP_NUM_THREADS` to a worker's CPUs (1 here), and the plain loop sets
`torch.set_num_threads(1)` (with 2 threads on this loaded machine it collapsed to ~40 pairs/s: OpenMP threads spinning).
"""
    write_section("bench_train_overhead", body)


if __name__ == "__main__":
    sys.exit(main())
