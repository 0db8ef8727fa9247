"""A run's stored state: per-epoch checkpoints of the training kernel (every recipe), resuming from them, and the
run's record (its MLflow run and the settings it trains, so a re-run of one name continues it and cannot change
what it trains).

A checkpoint is a folder holding ``state.pt`` (the training module, optimisers, torch RNG, epoch, history, the
selected epoch) and ``embedder/``, the exported sentence embedder of the selected epoch (when the recipe exports one). Ray Train lists the checkpoints a run committed in its
``checkpoint_manager_snapshot.json``, written by the run's controller after a worker's checkpoint has been uploaded.
A driver killed in between (the controller dies with it), or a worker killed right after writing one, leaves
checkpoint folders the snapshot does not list, and Ray would then start that run over (or from an older checkpoint).
So :func:`restore`, on the worker, looks for those newer folders itself (:func:`unlisted_checkpoints`) and resumes from
whichever is further along: Ray's own checkpoint or the newest of them that loads.

A run trained in the calling process (``scaling.in_process``: Ray Train's local mode, which keeps no checkpoint of
its own) writes its checkpoints into the same folder under the same names itself (:func:`report_with_checkpoint`),
each renamed into place whole and marked complete, so resuming and :func:`finished_checkpoint` work as they do
for Ray's.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import logging
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

import ray.train
import torch

from parabit.config import ConfigError
from parabit.paths import output_root
from parabit.training.config import RESUMABLE_FIELDS, TrainingConfig, trained_settings
from parabit.training.recipe import EMBEDDER_DIR

log = logging.getLogger(__name__)

CHECKPOINT_FILE = "state.pt"
# Ray Train's record of a run's committed checkpoints, in the run's folder (ray.train.v2 CheckpointManager).
RAY_SNAPSHOT_FILE = "checkpoint_manager_snapshot.json"
# In a checkpoint a run in the calling process wrote whole: the epoch it holds (Ray's own folders never have it).
COMPLETE_FILE = "complete.json"
# How many checkpoints a run keeps (Ray Train's CheckpointConfig(num_to_keep), and the same in the calling process).
CHECKPOINTS_KEPT = 2


def training_state(model: torch.nn.Module, optimizers: Sequence[torch.optim.Optimizer], **extra) -> dict:
    """What a checkpoint must hold to resume exactly: weights, optimiser moments, the torch RNG, plus ``extra``
    (``epoch`` and ``history`` at least)."""
    return {"model": model.state_dict(), "optimizers": [optimizer.state_dict() for optimizer in optimizers],
            "torch_rng": torch.get_rng_state(), **extra}


def report_with_checkpoint(metrics: dict, state: dict, embedder_dir: Path | None = None, *,
                           in_process_run: Path | None = None) -> None:
    """Report ``metrics`` to Ray Train with a checkpoint of ``state`` (and a copy of the embedder folder, if any).

    ``in_process_run``: the run's folder, for a run in the calling process: the checkpoint is written there, named
    as Ray Train names its own, and the older ones beyond :data:`CHECKPOINTS_KEPT` are removed."""
    if in_process_run is not None:
        in_process_run.mkdir(parents=True, exist_ok=True)
        folder = in_process_run / f"checkpoint_{datetime.datetime.now():%Y-%m-%d_%H-%M-%S.%f}"
        with tempfile.TemporaryDirectory(dir=in_process_run, prefix=".writing-",
                                         ignore_cleanup_errors=True) as directory:
            _write_checkpoint(Path(directory), state, embedder_dir)
            (Path(directory) / COMPLETE_FILE).write_text(json.dumps({"epoch": state["epoch"]}))
            Path(directory).rename(folder)  # whole or not at all: a kill leaves only the hidden temporary folder
        for older in sorted(in_process_run.glob("checkpoint_*"), reverse=True)[CHECKPOINTS_KEPT:]:
            shutil.rmtree(older, ignore_errors=True)
        ray.train.report(metrics, checkpoint=ray.train.Checkpoint.from_directory(str(folder)))
        return
    with tempfile.TemporaryDirectory() as directory:
        _write_checkpoint(Path(directory), state, embedder_dir)
        ray.train.report(metrics, checkpoint=ray.train.Checkpoint.from_directory(directory))


def _write_checkpoint(directory: Path, state: dict, embedder_dir: Path | None) -> None:
    torch.save(state, directory / CHECKPOINT_FILE)
    if embedder_dir is not None and embedder_dir.is_dir():
        shutil.copytree(embedder_dir, directory / EMBEDDER_DIR)


class IncompleteCheckpoint(OSError):
    """A checkpoint folder whose state cannot be read: cut short by a kill while it was written, or emptied."""


def load_state(directory: str | Path) -> dict:
    """The ``state.pt`` of a checkpoint folder, on CPU, tensors and plain containers only (no pickle).

    Raises :class:`IncompleteCheckpoint` (naming the file) when it is missing or cannot be read whole."""
    path = Path(directory) / CHECKPOINT_FILE
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except (OSError, RuntimeError, EOFError) as err:  # torch reports a cut-short zip as any of these
        raise IncompleteCheckpoint(f"{path}: cannot be read whole ({err})") from err


def newest_loadable(folders: Sequence[str]) -> tuple[dict, str] | None:
    """The state and folder of the first of ``folders`` (newest first) that loads, skipping (with a warning) those a
    kill cut short; None if none loads."""
    for folder in folders:
        try:
            return load_state(folder), folder
        except IncompleteCheckpoint as err:
            log.warning("not resuming from %s: it is incomplete (%s)", folder, err)
    return None


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
    A run in the calling process has no snapshot: its newest folder counts when it is marked complete.
    """
    snapshot = _snapshot(run_directory)
    unlisted = unlisted_checkpoints(run_directory, snapshot)
    if unlisted:  # a run in the calling process: its newest folder, if written whole
        complete = Path(unlisted[0]) / COMPLETE_FILE
        if complete.is_file() and json.loads(complete.read_text()).get("epoch", 0) >= epochs:
            return ray.train.Checkpoint.from_directory(unlisted[0])
        return None
    latest = snapshot.get("latest_checkpoint_result") or {}
    if latest.get("metrics", {}).get("epoch", 0) < epochs:
        return None
    folder = run_directory / latest["checkpoint_dir_name"]
    return ray.train.Checkpoint.from_directory(str(folder)) if (folder / CHECKPOINT_FILE).is_file() else None


def restore(module: torch.nn.Module, optimizers: Sequence[torch.optim.Optimizer], run_directory: Path,
            embedder_to: Path | None = None) -> dict | None:
    """On a resumed run, restore ``module``, ``optimizers`` and the torch RNG from the furthest checkpoint (Ray's, or
    a newer one in ``run_directory`` that Ray's record missed), copy its ``embedder/`` to ``embedder_to``, and return
    its whole state; on a fresh start None."""
    found = _furthest(unlisted_checkpoints(run_directory))
    if found is None:
        return None
    state, open_folder = found
    module.load_state_dict(state["model"])
    for optimizer, optimizer_state in zip(optimizers, state["optimizers"]):
        optimizer.load_state_dict(optimizer_state)
    torch.set_rng_state(state["torch_rng"])
    if embedder_to is not None:
        with open_folder() as folder:
            if (Path(folder) / EMBEDDER_DIR).is_dir():
                shutil.rmtree(embedder_to, ignore_errors=True)
                shutil.copytree(Path(folder) / EMBEDDER_DIR, embedder_to)
    return state


def _furthest(unlisted: Sequence[str]):
    """The state of the furthest checkpoint (Ray's latest, or the newest unlisted folder that loads) and a way to
    open its folder; None on a fresh start."""
    found = None
    checkpoint = ray.train.get_checkpoint()
    if checkpoint is not None:
        found = (load_checkpoint_state(checkpoint), checkpoint.as_directory)
    newest = newest_loadable(unlisted)
    if newest is not None and (found is None or newest[0]["epoch"] > found[0]["epoch"]):
        state, folder = newest
        found = (state, lambda: contextlib.nullcontext(folder))
    return found


# -- the run's record ---------------------------------------------------------------------------------------
def storage_path(config: TrainingConfig) -> Path:
    return Path(config.storage_path).resolve() if config.storage_path else output_root() / "ray_results"


def run_directory(config: TrainingConfig) -> Path:
    """Where Ray Train keeps the run's checkpoints."""
    return storage_path(config) / config.name


def _record_path(config: TrainingConfig) -> Path:
    """Where a named run's record is kept: its MLflow run id (so a re-run continues the same MLflow run) and the
    settings it trains with (so a re-run cannot change them)."""
    return storage_path(config) / f"{config.name}.parabit.json"


def run_record(config: TrainingConfig) -> dict:
    """The record of the run ``config.name`` (its MLflow run id, the settings it trains): empty if it never ran."""
    record = _record_path(config)
    return json.loads(record.read_text()) if record.exists() else {}


def record_once(config: TrainingConfig, key: str, value) -> None:
    """Add ``key`` to the run's record unless it is already there (a record's entries never change)."""
    content = run_record(config)
    if key not in content:
        record = _record_path(config)
        record.parent.mkdir(parents=True, exist_ok=True)
        record.write_text(json.dumps({**content, key: value}))


def _flatten(value, prefix: str = "") -> dict:
    if isinstance(value, dict):
        return {k: v for key, item in value.items() for k, v in _flatten(item, f"{prefix}{key}.").items()}
    return {prefix.rstrip("."): value}


def check_same_settings(config: TrainingConfig) -> None:
    """Refuse to continue the run ``config.name`` with settings other than those it started with: a re-run resumes
    from the run's checkpoints (or reuses its finished model), so a changed config would silently report a model
    trained with the old one. Runs recorded before settings were kept are not checked, nor settings added since a
    run started that keep their default."""
    stored = run_record(config).get("settings")
    if stored is None:
        return
    before, now = _flatten(stored), _flatten(trained_settings(config))
    # A setting added to parabit since the run started keeps the old behaviour while it has its default.
    added_as_default = (now.keys() - before.keys()) - _flatten(config.model_dump(mode="json",
                                                                                 exclude_defaults=True)).keys()
    changed = [f"{key}: {before.get(key)!r} -> {now.get(key)!r}" for key in sorted(before.keys() | now.keys())
               if before.get(key) != now.get(key) and key not in RESUMABLE_FIELDS and key not in added_as_default]
    if changed:
        shown = "; ".join(changed[:5]) + (f"; and {len(changed) - 5} more" if len(changed) > 5 else "")
        raise ConfigError(
            f"run {config.name!r} was started with other settings ({shown}); a run of one name resumes from its "
            f"checkpoints, so give this one a new name (--set name=...), or delete {run_directory(config)} and "
            f"{_record_path(config)} to train {config.name!r} again from scratch")


def record_settings(config: TrainingConfig) -> None:
    """Keep what the run ``config.name`` trains beside its MLflow run id, for :func:`check_same_settings`."""
    record_once(config, "settings", trained_settings(config))
