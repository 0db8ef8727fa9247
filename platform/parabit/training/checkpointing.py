"""Per-epoch checkpoints of every parabit training loop (pairs, Siamese, BilDRL), and resuming from them.

A checkpoint is a folder holding ``state.pt`` (model, optimisers, torch RNG, epoch, history and whatever else the loop
keeps) and the loop's extras (e.g. the embedder). Ray Train lists the checkpoints a run committed in its
``checkpoint_manager_snapshot.json``, written by the run's controller after a worker's checkpoint has been uploaded.
A driver killed in between (the controller dies with it) leaves checkpoint folders the snapshot does not list, and
Ray would then start that run over. So the driver hands the workers those newer folders
(:func:`unlisted_checkpoints`), and :func:`restore` resumes from whichever is further along: Ray's own checkpoint or
the newest of them that loads.
"""

from __future__ import annotations

import json
import logging
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

import ray.train
import torch

log = logging.getLogger(__name__)

CHECKPOINT_FILE = "state.pt"
EMBEDDER_DIR = "embedder"
# Ray Train's record of a run's committed checkpoints, in the run's folder (ray.train.v2 CheckpointManager).
RAY_SNAPSHOT_FILE = "checkpoint_manager_snapshot.json"
# The loop-config key under which the driver passes unlisted checkpoint folders, newest first.
UNLISTED_CHECKPOINTS_KEY = "unlisted_checkpoints"


def training_state(model: torch.nn.Module, optimizers: Sequence[torch.optim.Optimizer], **extra) -> dict:
    """What a checkpoint must hold to resume exactly: weights, optimiser moments, the torch RNG, plus ``extra``
    (``epoch`` and ``history`` at least)."""
    return {"model": model.state_dict(), "optimizers": [optimizer.state_dict() for optimizer in optimizers],
            "torch_rng": torch.get_rng_state(), **extra}


def report_with_checkpoint(metrics: dict, state: dict, write_extras: Callable[[Path], None] | None = None) -> None:
    """Report ``metrics`` to Ray Train with a checkpoint of ``state`` (and whatever ``write_extras(folder)`` adds)."""
    with tempfile.TemporaryDirectory() as directory:
        torch.save(state, Path(directory) / CHECKPOINT_FILE)
        if write_extras is not None:
            write_extras(Path(directory))
        ray.train.report(metrics, checkpoint=ray.train.Checkpoint.from_directory(directory))


def load_state(directory: str | Path) -> dict:
    """The ``state.pt`` of a checkpoint folder, on CPU, tensors and plain containers only (no pickle)."""
    return torch.load(Path(directory) / CHECKPOINT_FILE, map_location="cpu", weights_only=True)


def load_checkpoint_state(checkpoint: ray.train.Checkpoint) -> dict:
    with checkpoint.as_directory() as directory:
        return load_state(directory)


def _snapshot(run_directory: Path) -> dict:
    """Ray's record of a stored run's committed checkpoints; empty when the run has none (or no folder yet)."""
    snapshot = run_directory / RAY_SNAPSHOT_FILE
    return json.loads(snapshot.read_text()) if snapshot.is_file() else {}


def unlisted_checkpoints(run_directory: Path, snapshot: dict | None = None) -> list[str]:
    """Checkpoint folders of a stored run newer than every checkpoint Ray's snapshot lists, newest first.

    Ray names checkpoint folders ``checkpoint_<timestamp>``, so names order them in time. Empty for a new run and
    for a run whose snapshot is up to date. ``snapshot``: the run's, when the caller has already read it.
    """
    if not run_directory.is_dir():
        return []
    snapshot = _snapshot(run_directory) if snapshot is None else snapshot
    newest_listed = max((result["checkpoint_dir_name"] for result in snapshot.get("checkpoint_results", [])),
                        default="")
    return [str(folder) for folder in sorted(run_directory.glob("checkpoint_*"), reverse=True)
            if folder.is_dir() and folder.name > newest_listed]


def finished_checkpoint(run_directory: Path, epochs: int) -> ray.train.Checkpoint | None:
    """The last checkpoint of a stored run that has already trained ``epochs`` epochs, or None.

    Only a checkpoint Ray committed (the snapshot's latest) counts, and only when no newer folder awaits (a killed
    driver's): then running the same command again can evaluate and register it without starting Ray Train, whose
    worker group would only load the checkpoint and find nothing left to do (~20 s of the main job's second run).
    """
    snapshot = _snapshot(run_directory)
    latest = snapshot.get("latest_checkpoint_result") or {}
    if latest.get("metrics", {}).get("epoch", 0) < epochs or unlisted_checkpoints(run_directory, snapshot):
        return None
    folder = run_directory / latest["checkpoint_dir_name"]
    return ray.train.Checkpoint.from_directory(str(folder)) if (folder / CHECKPOINT_FILE).is_file() else None


def restore(model: torch.nn.Module, optimizers: Sequence[torch.optim.Optimizer], loop_config: dict) -> dict | None:
    """On a resumed run, restore ``model``, ``optimizers`` and the torch RNG from the furthest checkpoint (Ray's, or
    an unlisted one the driver passed in ``loop_config``) and return its whole state; on a fresh start None."""
    state = _furthest_state(loop_config.get(UNLISTED_CHECKPOINTS_KEY, ()))
    if state is None:
        return None
    model.load_state_dict(state["model"])
    for optimizer, optimizer_state in zip(optimizers, state["optimizers"]):
        optimizer.load_state_dict(optimizer_state)
    torch.set_rng_state(state["torch_rng"])
    return state


def _furthest_state(unlisted: Sequence[str]) -> dict | None:
    checkpoint = ray.train.get_checkpoint()
    states = [load_checkpoint_state(checkpoint)] if checkpoint is not None else []
    for folder in unlisted:
        try:
            states.append(load_state(folder))
            break
        except Exception as err:  # noqa: BLE001 - a folder cut short by the kill: try the one before it
            log.warning("not resuming from %s: it is incomplete (%s)", folder, err)
    return max(states, key=lambda state: state["epoch"], default=None)
