"""The one per-worker training loop, run by Ray Train's ``TorchTrainer`` for every recipe.

Each worker reads its shard of every dataset once (``get_dataset_shard``) into memory, builds the recipe's training
module from the run's seed, and walks its shard of ``train`` in an order seeded by (seed, epoch, rank), so a resumed
run sees exactly the batches an uninterrupted one would. Each step: the module's loss, backward, the gradient
exchange between workers (:mod:`parabit.training.exchange`), optional clipping, the divergence guard's checks, the
optimiser step; a module that trains one word table in closed form takes the fused step instead (the same maths
without autograd, :class:`~parabit.training.step.RowStep`). After each epoch rank 0 scores the dev set
(:meth:`Recipe.validate`), keeps the selected epoch's exported embedder, logs to MLflow and writes a checkpoint
(every ``checkpoint_every`` epochs and after the last). With ``optim.pairs_per_epoch`` an epoch is the next
slice of a seeded stream over the shard, so the dev score is read every that many pairs; with
``optim.accumulation_steps`` a step is several batches (:mod:`parabit.training.step`). A learning-rate schedule
(:mod:`parabit.training.schedule`) sets each step's rate from the global step alone.

A step leaves its values on the device: the loss and its parts are summed there, the guard's checks queue there, and
the host reads them only every ``CHECK_EVERY_STEPS`` steps, at a progress line and at the end of the epoch (on a GPU
each read makes the host wait for the device; ``bench/bench_host_syncs.py`` counts what is left per step).
"""

from __future__ import annotations

import contextlib
import logging
import math
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import ray.train
import ray.train.torch
import torch

from parabit.output import configure_worker_output, library_log_level
from parabit.tracking import tags
from parabit.tracking.run_tracker import RunTracker
from parabit.training.batches import (batches_in_order, epoch_batches, epoch_generator, load_shard,
                                      steps_per_epoch)
from parabit.training.checkpointing import report_with_checkpoint, restore, training_state
from parabit.training.config import ScalingSettings
from parabit.training.guard import CHECK_EVERY_STEPS, Divergence, DivergenceGuard, RowGuard
from parabit.training.optimizers import build_optimizers
from parabit.training.prepared import PreparedData
from parabit.training.recipe import Recipe, Step, TrainingModule, recipe_at
from parabit.training.schedule import LrSchedule
from parabit.training.step import EpochTotals, build_step, grouped, steps_of

log = logging.getLogger(__name__)

STATUS_EVERY_SECONDS = 15.0


def train_loop_per_worker(loop_config: dict) -> None:
    """Ray Train entry point. ``loop_config``: ``recipe`` (where the :class:`Recipe` class is, :meth:`Recipe.path`),
    ``config`` (its config as plain values), ``prepared_dir``, ``datasets`` (names), ``run_dir`` (the run's checkpoint
    folder), ``mlflow_run_id``, ``tracking_uri`` and ``submitted_at``."""
    recipe: Recipe = recipe_at(loop_config["recipe"]).from_dict(loop_config["config"])
    if recipe.config.scaling.in_process:
        # The calling process's output is set up already, but Ray Train's local mode logs every report (a line of
        # metrics per epoch) at INFO there.
        logging.getLogger("ray.train").setLevel(library_log_level())
    else:
        configure_worker_output()
    # The selected epoch's exported embedder, copied into every checkpoint. A temporary folder that goes with the
    # worker: left behind, one per run (hundreds of MB each), a long reproduction filled the disk.
    with _torch_threads(recipe.config.scaling), \
            tempfile.TemporaryDirectory(prefix=selected_prefix(recipe.config.name)) as selected_dir:
        _train(recipe, loop_config, Path(selected_dir))


@contextlib.contextmanager
def _torch_threads(scaling: ScalingSettings) -> Iterator[None]:
    """torch's intra-op threads while the worker trains: ``scaling.torch_threads``, else, for a worker in the calling
    process (``in_process``), the whole CPUs it holds (at least 1), as Ray gives a worker process of its own; the
    calling process's setting comes back afterwards. Measured: a BilDRL joint epoch took 147 s on torch's default (a
    thread per core, spinning in OpenMP while the other cells of the machine held the cores) and 58 s on one."""
    threads = scaling.torch_threads or (max(1, int(scaling.cpus_per_worker)) if scaling.in_process else None)
    before = torch.get_num_threads()
    if threads is not None:
        torch.set_num_threads(threads)
    try:
        yield
    finally:
        if scaling.in_process:
            torch.set_num_threads(before)


def selected_prefix(run_name: str) -> str:
    """The name start of the temporary folder in which a worker of run ``run_name`` keeps its selected embedder."""
    return f"parabit-selected-{run_name.replace('/', '_')}-"


def _train(recipe: Recipe, loop_config: dict, selected_dir: Path) -> None:
    config = recipe.config
    prepared = recipe.load_prepared(Path(loop_config["prepared_dir"]))
    context = ray.train.get_context()
    rank, world = context.get_world_rank(), context.get_world_size()
    device = ray.train.torch.get_device()

    torch.manual_seed(config.seed)
    module: TrainingModule = recipe.build_module(prepared, sparse=config.scaling.sparse_gradients)
    module = ray.train.torch.prepare_model(module, parallel_strategy=None)  # to the device; exchange is ours
    optimizers = build_optimizers(module, config.optim)
    optimiser_step = build_step(module, optimizers, config.optim, distributed=world > 1,
                                mixed_precision=config.scaling.mixed_precision)
    guard = optimiser_step.guard

    start_epoch, history, resumes, selected, initial = 0, [], 0, None, {}
    run_dir = Path(loop_config["run_dir"])
    state = restore(module, optimizers, run_dir, embedder_to=selected_dir)
    if state is not None:
        start_epoch, history, resumes = state["epoch"], list(state["history"]), state["resumes"] + 1
        selected, initial = state.get("selected"), state.get("initial", {})
        if rank == 0:
            log.info("resuming %s from the checkpoint of epoch %d", config.name, start_epoch)
    else:
        recipe.refit(module, prepared)
        if rank == 0:  # the untrained model's dev score: what training is measured against
            initial = recipe.validate(module, prepared)
            if config.selection_includes_start and _finite(initial.get("dev_score")):
                # The start is the candidate to beat: an epoch replaces it only with a strictly higher score.
                selected = _select(recipe, module, prepared, selected_dir, 0, initial["dev_score"])

    shards = {name: load_shard(name, device) for name in loop_config["datasets"]}
    optim = config.optim
    if len(shards["train"]["len_a"]) >= 2:
        optimiser_step.warm_up(next(batches_in_order(shards["train"], torch.arange(2, device=device), 2)))
    epoch_pairs = optim.pairs_per_epoch or len(shards["train"]["len_a"])
    steps = steps_of(steps_per_epoch(epoch_pairs, optim.batch_size), optim.accumulation_steps)
    schedule = LrSchedule.of(optim, steps)
    nodes = _worker_nodes(world)
    tracker = _tracker(loop_config, config, rank)
    if tracker is not None:
        tracker.set_tags({tags.WORKER_NODES: ",".join(nodes), tags.DEVICE: str(device)})
        if start_epoch == 0:  # step 0: before training (the untrained model's dev scores, what the init covered)
            tracker.log_metrics({**module.start_metrics, **initial}, step=0)
    # Epochs already in the MLflow run are not logged again: a worker (or driver) killed after logging an epoch but
    # before its checkpoint was committed repeats that epoch. When the run cannot be asked, live logging stops for
    # this attempt; the driver's ``log_history`` writes the missing epochs from the final checkpoint either way.
    logged = tracker.logged_steps("loss") if tracker is not None else None
    # Start-up: from the driver calling fit() to this worker being ready for its first step (Ray Train's worker
    # group, process group, dataset shards, model and dev set); reported apart from the steady-state throughput.
    startup_seconds = time.time() - loop_config.get("submitted_at", time.time())

    for epoch in range(start_epoch, config.optim.epochs):
        module.train()
        generator = epoch_generator(config.seed, epoch, rank, device)
        started = last_status = time.perf_counter()
        totals, checked = EpochTotals(), 0
        batches = epoch_batches(shards["train"], optim.batch_size, generator, seed=config.seed, epoch=epoch,
                                rank=rank, pairs_per_epoch=optim.pairs_per_epoch,
                                length_buckets=optim.length_buckets)
        for step, group in enumerate(grouped(batches, optim.accumulation_steps), 1):
            if schedule is not None:
                schedule.apply(optimizers, epoch * steps + step - 1)
            optimiser_step(group, Step(generator, shards, epoch + 1, step), totals)
            if step % CHECK_EVERY_STEPS == 0:  # every worker reads at the same steps (a collective with several)
                if _diverged(guard, epoch, checked, loop_config, config.name, rank):
                    return
                checked = step
            if rank == 0 and time.perf_counter() - last_status > STATUS_EVERY_SECONDS:
                last_status = time.perf_counter()
                print(f"[{config.name}] epoch {epoch + 1}/{config.optim.epochs} step {step}/{steps} "
                      f"loss {totals.means()['loss']:.4f}", flush=True)
        if _diverged(guard, epoch, checked, loop_config, config.name, rank):  # the epoch's last steps
            return
        seconds = time.perf_counter() - started
        recipe.refit(module, prepared)
        # Pairs trained since the start, over all workers (a resumed run counts on from its checkpoint's history).
        pairs_seen = (history[-1].get("pairs_seen", 0) if history else 0) + totals.seen * world
        metrics = {"epoch": epoch + 1, **totals.means(),
                   "pairs_per_second": totals.seen * world / max(seconds, 1e-9), "epoch_seconds": seconds,
                   "pairs_seen": pairs_seen,
                   "workers": world,
                   "distinct_nodes": len(set(nodes)), "resumes": resumes, "startup_seconds": startup_seconds}
        if schedule is not None:  # the rate of the epoch's last step
            metrics["lr"] = schedule.rate(epoch * steps + max(steps - 1, 0))
        if rank != 0:
            ray.train.report(metrics)
            continue
        dev_started = time.perf_counter()
        metrics.update(recipe.validate(module, prepared))
        metrics["dev_seconds"] = time.perf_counter() - dev_started
        if _better(config.selection, metrics, selected):
            selected = _select(recipe, module, prepared, selected_dir, epoch + 1, metrics.get("dev_score"))
        metrics["selected_epoch"] = selected["epoch"]
        history.append(metrics)
        if tracker is not None and logged is not None and epoch + 1 not in logged:
            tracker.log_metrics(metrics, step=epoch + 1)
            tracker.flush()
        dev = f" dev {metrics['dev_score']:.4f}" if "dev_score" in metrics else ""
        print(f"[{config.name}] epoch {epoch + 1}/{config.optim.epochs} loss {metrics['loss']:.4f}{dev} "
              f"({seconds:.1f} s, {metrics['pairs_per_second']:.0f} pairs/s)", flush=True)
        if (epoch + 1) % config.checkpoint_every and epoch + 1 < config.optim.epochs:
            ray.train.report(metrics)
            continue
        report_with_checkpoint(metrics, training_state(module, optimizers, epoch=epoch + 1, history=history,
                                                       resumes=resumes, selected=selected, initial=initial),
                               selected_dir, in_process_run=run_dir if config.scaling.in_process else None)


def _select(recipe: Recipe, module: TrainingModule, prepared: PreparedData, selected_dir: Path, epoch: int,
            dev_score: float | None) -> dict:
    """Make ``module`` as it is now (after ``epoch`` epochs; 0: untrained) the selected model: its exported embedder
    into ``selected_dir``, and the ``selected`` entry the checkpoint keeps."""
    embedder = recipe.export(module, prepared)
    if embedder is not None:
        embedder.save(selected_dir)
    return {"epoch": epoch, "dev_score": dev_score}


def _finite(value) -> bool:
    return isinstance(value, (int, float)) and math.isfinite(value)


def _better(selection: str, metrics: dict, selected: dict | None) -> bool:
    """Whether this epoch becomes the selected one: always with ``last``; with ``best`` if its dev score is higher
    than the selected one's (an earlier epoch's, or the untrained model's, epoch 0, with
    ``selection_includes_start``)."""
    if selection == "last" or selected is None or "dev_score" not in metrics:
        return True
    return selected.get("dev_score") is None or metrics["dev_score"] > selected["dev_score"]


def _diverged(guard: DivergenceGuard | RowGuard, epoch: int, checked: int, loop_config: dict, name: str,
              rank: int) -> bool:
    """Whether the guard found a non-finite value in the steps after step ``checked`` of (0-based) ``epoch``; if so
    the worker is stopped (:func:`_stop_diverged`) at the first such step."""
    problem = guard.problem()
    if problem is not None:
        _stop_diverged(Divergence(epoch + 1, checked + 1 + problem[0], problem[1]), loop_config, name, rank)
    return problem is not None


def _stop_diverged(divergence: Divergence, loop_config: dict, name: str, rank: int) -> None:
    """Leave a note for the driver and end this worker's loop without a checkpoint: a deterministic divergence
    would only repeat if Ray Train restarted the worker from the last checkpoint."""
    if rank == 0:
        divergence.save(Path(loop_config["run_dir"]))
        print(f"[{name}] stopped: {divergence.tensor} is not finite at epoch {divergence.epoch}, "
              f"step {divergence.step}", flush=True)


def _tracker(loop_config: dict, config, rank: int) -> RunTracker | None:
    if rank != 0 or not loop_config.get("mlflow_run_id"):
        return None
    return RunTracker(config.tracking.experiment, config.name, run_id=loop_config["mlflow_run_id"],
                      uri=loop_config.get("tracking_uri"))


def _worker_nodes(world: int) -> list[str]:
    """The Ray node id of every worker, by rank (gathered over the process group when there is one)."""
    import ray

    node = ray.get_runtime_context().get_node_id()
    if world == 1 or not torch.distributed.is_initialized():
        return [node]
    nodes: list = [None] * world
    torch.distributed.all_gather_object(nodes, node)
    return nodes
