"""The per-worker training loop run by Ray Train's ``TorchTrainer``.

Each worker pulls its shard of the token-id dataset once (``get_dataset_shard``) into memory, then every epoch
walks it in an order drawn from a generator seeded by (seed, epoch, rank): a resumed run sees exactly the batches
an uninterrupted one would. Rank 0 alone evaluates on the dev years, logs to MLflow and writes checkpoints.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

import pyarrow as pa
import ray.train
import ray.train.torch
import torch

from parabit.config import from_dict
from parabit.embedder import SentenceEmbedder
from parabit.evaluation.sts import dev_evaluator, dev_score
from parabit.tracking.run_tracker import RunTracker
from parabit.training.checkpointing import EMBEDDER_DIR, report_with_checkpoint, restore, training_state
from parabit.training.config import TrainConfig
from parabit.training.data import _load_prepared, arrow_to_tensors
from parabit.training.model import PairModel, PairObjective, build_encoder, build_optimizers

log = logging.getLogger(__name__)

STATUS_EVERY_SECONDS = 15.0


def _load_shard(batch_size: int = 65_536) -> dict[str, torch.Tensor]:
    shard = ray.train.get_dataset_shard("train")
    tables = list(shard.iter_batches(batch_size=batch_size, batch_format="pyarrow"))
    arrays = arrow_to_tensors(pa.concat_tables(tables))
    return {name: torch.from_numpy(array) for name, array in arrays.items()}


def _worker_nodes(world: int) -> list[str]:
    """The Ray node id of every worker, by rank (gathered over the process group when there is one)."""
    import ray

    node = ray.get_runtime_context().get_node_id()
    if world == 1 or not torch.distributed.is_initialized():
        return [node]
    nodes: list = [None] * world
    torch.distributed.all_gather_object(nodes, node)
    return nodes


def _epoch_generator(seed: int, epoch: int, rank: int, device: torch.device) -> torch.Generator:
    """Shuffling and negative sampling draw from this; on the data's device, so draws need no host round trip."""
    return torch.Generator(device=device).manual_seed(seed * 1_000_003 + epoch * 1_009 + rank)


def _batches(data: dict[str, torch.Tensor], batch_size: int, generator: torch.Generator):
    """Shuffled batches, each trimmed to its longest sentence; a last batch of one pair is dropped (no negatives)."""
    order = torch.randperm(len(data["len_a"]), generator=generator, device=generator.device)
    for start in range(0, len(order), batch_size):
        rows = order[start:start + batch_size]
        if len(rows) < 2:
            break
        batch = {name: tensor[rows] for name, tensor in data.items()}
        for side in ("a", "b"):
            width = int(batch[f"len_{side}"].max())
            batch[f"ids_{side}"] = batch[f"ids_{side}"][:, :width]
        yield batch


def _steps_per_epoch(num_rows: int, batch_size: int) -> int:
    full, rest = divmod(num_rows, batch_size)
    return full + (1 if rest >= 2 else 0)


def train_loop_per_worker(loop_config: dict) -> None:
    """Ray Train entry point. ``loop_config``: ``config`` (a TrainConfig as a dict), ``prepared_dir``,
    ``mlflow_run_id`` and ``tracking_uri``."""
    config = from_dict(TrainConfig, loop_config["config"])
    prepared = _load_prepared(Path(loop_config["prepared_dir"]))
    context = ray.train.get_context()
    rank, world = context.get_world_rank(), context.get_world_size()
    device = ray.train.torch.get_device()

    # NCCL has no sparse all-reduce: multi-GPU data parallelism falls back to dense word-table gradients.
    sparse = config.model.sparse and not (config.scaling.use_gpu and world > 1)
    torch.manual_seed(config.seed)
    encoder, spec = build_encoder(config.model, prepared.vocab, sparse=sparse)
    # Only the L2-to-init regulariser needs a copy of the initial table (a second word table in memory).
    initial_table = (encoder.embedding.weight.detach().clone()
                     if config.objective.regularization > 0 and config.objective.regularization_kind == "l2_to_init"
                     else None)
    model = ray.train.torch.prepare_model(PairModel(encoder))
    objective = PairObjective(config.objective, initial_table).to(device)
    optimizers = build_optimizers(model, config.optim)

    start_epoch, history, resumes = 0, [], 0
    state = restore(encoder, optimizers, loop_config)
    if state is not None:
        start_epoch, history, resumes = state["epoch"], list(state["history"]), state["resumes"] + 1
        if rank == 0:
            log.info("resuming %s from the checkpoint of epoch %d", config.name, start_epoch)

    worker_nodes = _worker_nodes(world)
    data = {name: tensor.to(device) for name, tensor in _load_shard().items()}
    rows = len(data["len_a"])
    steps = _steps_per_epoch(rows, config.optim.batch_size)
    embedder = SentenceEmbedder(encoder, spec, prepared.vocab, prepared.tokenizer, "en", prepared.max_tokens)
    dev = dev_evaluator(config.dev) if rank == 0 else None
    tracker = None
    if rank == 0 and loop_config.get("mlflow_run_id"):
        tracker = RunTracker(config.tracking.experiment, config.name, run_id=loop_config["mlflow_run_id"],
                             uri=loop_config.get("tracking_uri"))
        tracker.set_tags({"parabit.worker_nodes": ",".join(worker_nodes), "parabit.device": str(device)})
    # Epochs already in the MLflow run are not logged again: a worker (or driver) killed after logging an epoch but
    # before its checkpoint was committed repeats that epoch. When the run cannot be asked, live logging stops for
    # this attempt; the driver's ``log_history`` writes the missing epochs from the final checkpoint either way.
    logged = tracker.logged_steps("loss") if tracker is not None else None
    autocast = torch.autocast("cuda", dtype=torch.bfloat16, enabled=config.scaling.mixed_precision)
    # Start-up: from the driver calling fit() to this worker being ready for its first step (Ray Train's worker
    # group, process group, dataset shard, model and dev set); reported apart from the steady-state throughput.
    startup_seconds = time.time() - loop_config.get("submitted_at", time.time())

    for epoch in range(start_epoch, config.optim.epochs):
        model.train()
        generator = _epoch_generator(config.seed, epoch, rank, device)
        started = last_status = time.perf_counter()
        total_loss, seen = 0.0, 0
        for step, batch in enumerate(_batches(data, config.optim.batch_size, generator), start=1):
            with autocast:
                g1, g2 = model(batch["ids_a"], batch["len_a"], batch["ids_b"], batch["len_b"])
                loss = objective(g1, g2, batch, encoder.embedding.weight, generator)
            for optimizer in optimizers:
                optimizer.zero_grad(set_to_none=True)
            loss.backward()
            for optimizer in optimizers:
                optimizer.step()
            total_loss += float(loss.detach()) * len(batch["len_a"])
            seen += len(batch["len_a"])
            if rank == 0 and time.perf_counter() - last_status > STATUS_EVERY_SECONDS:
                last_status = time.perf_counter()
                print(f"[{config.name}] epoch {epoch + 1}/{config.optim.epochs} step {step}/{steps} "
                      f"loss {total_loss / seen:.4f}", flush=True)
        train_seconds = time.perf_counter() - started
        metrics = {
            "epoch": epoch + 1,
            "loss": total_loss / max(seen, 1),
            "pairs_per_second": seen * world / max(train_seconds, 1e-9),
            "epoch_seconds": train_seconds,
            "workers": world,
            "distinct_nodes": len(set(worker_nodes)),
            "resumes": resumes,
            "startup_seconds": startup_seconds,
        }
        if rank == 0:
            dev_started = time.perf_counter()
            scores = dev(embedder.encode)
            metrics["dev_seconds"] = time.perf_counter() - dev_started
            metrics["dev_score"] = dev_score(scores)
            for score in scores:
                if score.subset in ("mean", "wmean") or score.metric == "pearson":
                    metrics[f"dev/{score.name}"] = score.value
            history.append(metrics)
            if tracker is not None and logged is not None and epoch + 1 not in logged:
                tracker.log_metrics(metrics, step=epoch + 1)
                tracker.flush()
            print(f"[{config.name}] epoch {epoch + 1}/{config.optim.epochs} loss {metrics['loss']:.4f} "
                  f"dev {config.dev} {metrics['dev_score']:.3f} ({train_seconds:.1f} s, "
                  f"{metrics['pairs_per_second']:.0f} pairs/s)", flush=True)
            report_with_checkpoint(
                metrics,
                training_state(encoder, optimizers, epoch=epoch + 1, history=history, resumes=resumes),
                lambda folder: embedder.save(folder / EMBEDDER_DIR),
            )
        else:
            ray.train.report(metrics)
