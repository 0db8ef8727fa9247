"""The transformer's training step: the kernel against a plain PyTorch loop over the same batches, in the same run; and
encoding speed beside the static model's.

    .venv/bin/python bench/bench_transformer_step.py [--pairs-per-epoch 512] [--epochs 3] [--repeats 3]
    .venv/bin/python bench/bench_transformer_step.py --prepare .gpu/transformer.npz      # here: ids, teacher, model
    python3 bench/bench_transformer_step.py --step-only --data .gpu/transformer.npz --device cuda   # on a GPU

Both sides train the packaged all-MiniLM-L6-v2 by multilingual distillation (MSE of the student's vectors of an
English sentence and of its Spanish translation to the teacher's vector of the English sentence), Adam lr 5e-5, batch
32, on the same prepared pairs, those of ``jobs/configs/bilingual/transformer.yaml`` (24,000 en-es pairs of Tatoeba,
the Europarl sample, newstest2013 and the MUSE dictionary: the recipe's prepared data, the checkpoint's word pieces and
the teacher's vectors, read from the cache a run of that config made), the same pairs in the same order each epoch (the
kernel's stream of ``--pairs-per-epoch`` pairs):

* ``plain``: one process, no Ray, no parabit model code: Hugging Face's ``AutoModel``, mean pooling and normalisation
  written out, ``torch.optim.Adam`` over every parameter (a dense word-piece table), ``torch.nn.functional.mse_loss``;
* ``kernel``: ``run_training`` of recipe ``transformer`` (Ray Train, one worker; its row-sparse word-piece table with
  RowSparseAdam, the divergence guard, per-epoch dev score and checkpoint outside the timed epoch);
* ``--step-only`` (no Ray, no MLflow: what a lent GPU machine runs): the kernel's ``OptimiserStep`` over the recipe's
  ``TransformerModule`` in this process, against the plain step, in float32 and bfloat16 autocast.

Plain and kernel runs alternate, each repeat one of each, so both see the same machine load (with Ray, the plain loop
at the niceness Ray gives its workers, so both get the same share of a shared machine); a run's throughput is
the median of its epochs after the first (warm-up), the repeat's ratio kernel / plain, and the result the median of
the repeats' ratios with their range. Sentences/s counts both sides of each pair. Encoding: the STS and SICK test
sentences (``--encode-sentences`` of them) by the packaged transformer and by the static bilingual model
(``--static-model-uri``), alternating, median of ``--repeats``. MLflow goes to a throw-away store.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "platform"))
SCRATCH = Path(tempfile.mkdtemp(prefix="bench-transformer-"))
# The store the static model is read from (the project's, or the one in force); the benchmark's runs go elsewhere.
MODEL_STORE = os.environ.get("MLFLOW_TRACKING_URI") or f"sqlite:///{ROOT / 'mlflow.db'}"
os.environ["MLFLOW_TRACKING_URI"] = f"sqlite:///{SCRATCH / 'mlflow.db'}"
os.environ.setdefault("RAY_DATA_DISABLE_PROGRESS_BARS", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

LR, BATCH, SEED, THREADS = 5e-5, 32, 1, 2
# Ray starts its workers at this niceness (Ray's default 15, RAY_worker_niceness): the plain loop runs at the same,
# so that on a machine shared with other work both sides get the same share of the CPUs.
WORKER_NICENESS = int(os.environ.get("RAY_worker_niceness", "15"))


# The pairs both sides train on: those of the shipped recipe config (its data section and length cut), so the
# benchmark reads the prepared data `parabit train --config` it made, and its teacher vectors, from the cache.
RECIPE_CONFIG = ROOT / "jobs" / "configs" / "bilingual" / "transformer.yaml"


def bench_config(name: str, pairs_per_epoch: int, epochs: int):
    from parabit.recipes import load_run_config
    from parabit.recipes.transformer.config import TransformerConfig

    shipped = load_run_config(RECIPE_CONFIG)
    return TransformerConfig(
        name=name, seed=SEED, data=shipped.data, model=shipped.model,
        optim={"lr": LR, "batch_size": BATCH, "epochs": epochs, "pairs_per_epoch": pairs_per_epoch},
        scaling={"num_workers": 1, "cpus_per_worker": 1.0, "torch_threads": THREADS},
        dev="sick-trial", tracking={"experiment": "bench-transformer", "register_as": ""},
        evaluation={"sts_years": [2016], "sick": False, "msrp": False, "bitext_retrieval": []},
        storage_path=str(SCRATCH / "ray_results"))


def epoch_orders(rows: int, pairs_per_epoch: int, epochs: int) -> list[torch.Tensor]:
    """The rows each epoch trains, as the kernel's stream gives them to its one worker (rank 0)."""
    from parabit.training.batches import stream_order

    return [stream_order(rows, epoch * pairs_per_epoch, pairs_per_epoch, SEED, 0, torch.device("cpu"))
            for epoch in range(epochs)]


class PlainStudent(torch.nn.Module):
    """Hugging Face's model, its mean-pooled, normalised last states: sentence-transformers' recipe, written out."""

    def __init__(self, checkpoint: Path):
        super().__init__()
        from transformers import AutoModel

        self.model = AutoModel.from_pretrained(str(checkpoint), local_files_only=True, dtype=torch.float32)

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        states = self.model(input_ids=ids, attention_mask=mask.long()).last_hidden_state
        pooled = (states * mask.unsqueeze(-1)).sum(1) / mask.sum(1, keepdim=True)
        return F.normalize(pooled.float(), dim=-1)


def plain_loop(data: dict[str, torch.Tensor], checkpoint: Path, orders: list[torch.Tensor], device: str,
               precision: str = "fp32") -> list[float]:
    """Pairs/s of each epoch of the plain loop over ``orders``' batches."""
    torch.manual_seed(SEED)
    student = PlainStudent(checkpoint).to(device).train()
    optimizer = torch.optim.Adam(student.parameters(), lr=LR)
    tensors = {key: value.to(device) for key, value in data.items()}
    throughput = []
    for order in orders:
        synchronise(device)
        started = time.perf_counter()
        for start in range(0, len(order) - 1, BATCH):
            rows = order[start:start + BATCH].to(device)
            width_a, width_b = int(tensors["len_a"][rows].max()), int(tensors["len_b"][rows].max())
            ids_a, ids_b = tensors["ids_a"][rows, :width_a], tensors["ids_b"][rows, :width_b]
            mask_a = torch.arange(width_a, device=device) < tensors["len_a"][rows, None]
            mask_b = torch.arange(width_b, device=device) < tensors["len_b"][rows, None]
            teacher = tensors["teacher"][tensors["row"][rows]]
            with torch.autocast(device.split(":")[0], dtype=torch.bfloat16, enabled=precision == "bf16"):
                loss = F.mse_loss(student(ids_a, mask_a), teacher) + F.mse_loss(student(ids_b, mask_b), teacher)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
        synchronise(device)
        throughput.append(len(order) / (time.perf_counter() - started))
    return throughput


def kernel_steps(data: dict[str, torch.Tensor], checkpoint: Path, orders: list[torch.Tensor], device: str,
                 precision: str = "fp32") -> list[float]:
    """Pairs/s of each epoch of the kernel's optimiser step over the recipe's training module, without Ray."""
    from parabit.encoders import TransformerEncoder
    from parabit.objectives import build_objective
    from parabit.recipes.transformer.model import TransformerModule
    from parabit.training import OptimConfig
    from parabit.training.batches import batches_in_order
    from parabit.training.exchange import GradientExchange
    from parabit.training.guard import DivergenceGuard
    from parabit.training.optimizers import build_optimizers
    from parabit.training.recipe import Step
    from parabit.training.step import EpochTotals, OptimiserStep

    torch.manual_seed(SEED)
    encoder = TransformerEncoder.from_checkpoint(checkpoint, sparse=True, max_length=128)
    module = TransformerModule(encoder, [("multilingual_distillation", 1.0, build_objective(
        "multilingual_distillation"))], data["teacher"].numpy()).to(device).train()
    optimizers = build_optimizers(module, OptimConfig(lr=LR, batch_size=BATCH))
    guard = DivergenceGuard(module, distributed=False)
    autocast = torch.autocast(device.split(":")[0], dtype=torch.bfloat16, enabled=precision == "bf16")
    step = OptimiserStep(module, optimizers, GradientExchange(module), guard, None, autocast)
    tensors = {key: value.to(device) for key, value in data.items() if key != "teacher"}
    generator = torch.Generator(device=device).manual_seed(SEED)
    throughput = []
    for epoch, order in enumerate(orders):
        totals = EpochTotals()
        synchronise(device)
        started = time.perf_counter()
        for index, batch in enumerate(batches_in_order(tensors, order.to(device), BATCH), 1):
            step([batch], Step(generator, {"train": tensors}, epoch + 1, index), totals)
        assert guard.problem() is None and np.isfinite(totals.means()["loss"])
        synchronise(device)
        throughput.append(len(order) / (time.perf_counter() - started))
    return throughput


def synchronise(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def steady(epochs: list[float]) -> float:
    """A run's throughput: the median of its epochs after the first."""
    return float(np.median(epochs[1:] if len(epochs) > 1 else epochs))


def prepared_tensors(args) -> tuple[dict[str, torch.Tensor], Path]:
    """The prepared pairs (ids, lengths, teacher rows) as tensors, and the checkpoint folder: from ``--data`` (a file
    ``--prepare`` wrote) or prepared here by the recipe."""
    if args.data:
        saved = np.load(args.data)
        data = {key: torch.from_numpy(saved[key].astype(np.float32 if key == "teacher" else np.int64))
                for key in ("ids_a", "ids_b", "len_a", "len_b", "row", "teacher")}
        return data, Path(args.data).with_suffix("") / "checkpoint"
    import pyarrow.parquet as pq

    from parabit.recipes.transformer.data import load_teacher_vectors, prepare_transformer
    from parabit.training import arrow_to_tensors

    config = bench_config("bench-prepare", args.pairs_per_epoch, args.epochs)
    prepared = prepare_transformer(config)
    data = {key: torch.from_numpy(value) for key, value in arrow_to_tensors(pq.read_table(prepared.pairs_path)).items()}
    data["teacher"] = torch.from_numpy(load_teacher_vectors(prepared))
    return data, config.model.checkpoint_path()


def prepare(path: Path, args) -> None:
    """Write what ``--step-only`` reads on a machine without Ray or MLflow: the ids, the teacher's vectors and a copy
    of the checkpoint folder (``<path without .npz>/checkpoint``)."""
    import shutil

    data, checkpoint = prepared_tensors(argparse.Namespace(**{**vars(args), "data": None}))
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(path, **{key: value.numpy() for key, value in data.items()})
    shutil.copytree(checkpoint, path.with_suffix("") / "checkpoint", dirs_exist_ok=True)
    print(f"{path}: {len(data['len_a']):,} pairs; checkpoint copied to {path.with_suffix('') / 'checkpoint'}")


def step_only(args) -> None:
    """The kernel's step against the plain one in this process (float32, and bfloat16 autocast on a GPU)."""
    data, checkpoint = prepared_tensors(args)
    orders = epoch_orders(len(data["len_a"]), args.pairs_per_epoch, args.epochs)
    if args.device == "cpu":
        torch.set_num_threads(THREADS)
    rows = []
    for precision in ("fp32", "bf16") if args.device.startswith("cuda") else ("fp32",):
        ratios, plain_runs, kernel_runs = [], [], []
        for repeat in range(args.repeats):
            plain_runs.append(steady(plain_loop(data, checkpoint, orders, args.device, precision)))
            kernel_runs.append(steady(kernel_steps(data, checkpoint, orders, args.device, precision)))
            ratios.append(kernel_runs[-1] / plain_runs[-1])
            print(f"{precision} repeat {repeat}: plain {plain_runs[-1]:.1f}, kernel {kernel_runs[-1]:.1f} pairs/s",
                  flush=True)
        rows.append([precision, f"{2 * np.median(plain_runs):,.0f}", f"{2 * np.median(kernel_runs):,.0f}",
                     f"{np.median(ratios):.2f} ({min(ratios):.2f}–{max(ratios):.2f})"])
    report(args, "bench_transformer_step_only", f"the kernel's step without Ray on {args.device}", rows,
           ["precision", "plain sentences/s", "kernel step sentences/s", "ratio, median (range)"], data)


def ray_runs(args) -> None:
    """The kernel (``run_training`` on Ray Train) against the plain loop, alternating, then encoding speeds."""
    from parabit.recipes.transformer.recipe import TransformerRecipe
    from parabit.training.run import run_training

    os.nice(max(WORKER_NICENESS - os.nice(0), 0))
    data, checkpoint = prepared_tensors(args)
    orders = epoch_orders(len(data["len_a"]), args.pairs_per_epoch, args.epochs)
    threads = torch.get_num_threads()
    plain_runs, kernel_runs, startups = [], [], []
    for repeat in range(args.repeats):
        torch.set_num_threads(THREADS)  # as the kernel's worker (scaling.torch_threads)
        plain_runs.append(plain_loop(data, checkpoint, orders, "cpu"))
        torch.set_num_threads(threads)
        print(f"plain repeat {repeat}: {[round(x, 1) for x in plain_runs[-1]]} pairs/s", flush=True)
        result = run_training(TransformerRecipe(bench_config(f"bench-kernel-{repeat}-{int(time.time())}",
                                                             args.pairs_per_epoch, args.epochs)))
        kernel_runs.append([h["pairs_per_second"] for h in result.history])
        startups.append(result.history[0]["startup_seconds"])
        print(f"kernel repeat {repeat}: {[round(x, 1) for x in kernel_runs[-1]]} pairs/s", flush=True)
    ratios = [steady(k) / steady(p) for p, k in zip(plain_runs, kernel_runs)]
    rows = [["plain PyTorch loop (Hugging Face model, dense Adam), 1 process",
             f"{2 * np.median([steady(p) for p in plain_runs]):.1f}", "1.00", "–"],
            ["kernel: `run_training` on Ray Train, 1 worker (row-sparse word-piece table, RowSparseAdam)",
             f"{2 * np.median([steady(k) for k in kernel_runs]):.1f}",
             f"**{np.median(ratios):.2f}** ({min(ratios):.2f}–{max(ratios):.2f})", f"{np.median(startups):.0f}"]]
    per_repeat = ", ".join(f"{r:.2f}" for r in ratios)
    encoding = encoding_rows(args)
    report(args, "bench_transformer_step", "Ray Train against the plain loop on CPU", rows,
           ["run", "training sentences/s (steady state)", "vs plain, median (range)", "start-up s"], data,
           f"\nRatio per repeat: {per_repeat}.\n\n{encoding}")


def encoding_rows(args) -> str:
    """Sentences/s encoding the STS and SICK test sentences: the packaged transformer and the static model."""
    from _common import table

    from parabit.data.sick import read_sick
    from parabit.data.sts import read_sts_year
    from parabit.encoders import TransformerEmbedder, TransformerEncoder
    from parabit.export.pyfunc import load_embedder
    from parabit.teacher.model import packaged_checkpoint
    from parabit.tracking.registry import fluent_store

    sentences = [s for year in (2012, 2013, 2014, 2015, 2016) for subset in read_sts_year(year, "test")
                 for p in subset.pairs for s in (p.sentence_a, p.sentence_b)]
    sentences += [s for p in read_sick("test") for s in (p.sentence_a, p.sentence_b)]
    sentences = list(dict.fromkeys(sentences))[:args.encode_sentences]
    torch.set_num_threads(THREADS)
    transformer = TransformerEmbedder(TransformerEncoder.from_checkpoint(packaged_checkpoint(), max_length=128).eval())
    try:
        with fluent_store(MODEL_STORE):
            static, static_name = load_embedder(args.static_model_uri), args.static_model_uri
    except Exception as err:  # noqa: BLE001 - a store without the static model: the GloVe-SIF baseline instead
        from parabit.baselines import build_baseline

        static, static_name = build_baseline("glove-sif"), f"glove-sif ({args.static_model_uri}: {err})"
    timings = {"transformer": [], "static": []}
    for _ in range(args.repeats):
        for name, model in (("transformer", transformer), ("static", static)):
            started = time.perf_counter()
            model.encode(sentences)
            timings[name].append(time.perf_counter() - started)
    rate = {name: len(sentences) / np.median(seconds) for name, seconds in timings.items()}
    rows = [["all-MiniLM-L6-v2 (recipe `transformer`'s start; same size as its trained models)",
             f"{rate['transformer']:,.0f}", "1"],
            [f"static model: {static_name}", f"{rate['static']:,.0f}", f"{rate['static'] / rate['transformer']:.0f}×"]]
    return (f"Encoding {len(sentences):,} distinct STS 2012–2016 and SICK test sentences (median of "
            f"{args.repeats}, alternating; {THREADS} torch threads):\n\n"
            + table(["model", "sentences/s", "vs the transformer"], rows))


def report(args, section: str, what: str, rows: list, header: list, data: dict, extra: str = "") -> None:
    from _common import machine_line, table, write_section

    body = f"""## Transformer training step: {what} (`bench/bench_transformer_step.py`)

{machine_line()} · the packaged all-MiniLM-L6-v2, multilingual distillation (MSE to the teacher's English vectors),
Adam lr {LR}, batch {BATCH}, {len(data['len_a']):,} prepared en-es pairs of `jobs/configs/bilingual/transformer.yaml`,
the same {args.pairs_per_epoch} pairs per epoch on both sides, {args.epochs} epochs per run (the first left out),
{args.repeats} repeats alternating. A training sentence is one side of a pair, forward and backward.

{table(header, rows)}
{extra}"""
    write_section(section, body)


# The sizes of a run (each an integer option): pairs per epoch, epochs per run, repeats, and the sentences each model
# encodes.
SIZES = {"pairs-per-epoch": 512, "epochs": 3, "repeats": 3, "encode-sentences": 5000}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for option, default in SIZES.items():
        parser.add_argument(f"--{option}", type=int, default=default)
    parser.add_argument("--static-model-uri", default="models:/parabit-encoder-bilingual@champion")
    parser.add_argument("--prepare", type=Path, help="write the ids, teacher vectors and checkpoint to this .npz")
    parser.add_argument("--data", help="read the pairs --prepare wrote (no Ray, no MLflow)")
    parser.add_argument("--step-only", action="store_true", help="the kernel's step without Ray (e.g. on a GPU)")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    args = parser.parse_args()
    if args.prepare:
        prepare(args.prepare, args)
    elif args.step_only:
        step_only(args)
    else:
        ray_runs(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
