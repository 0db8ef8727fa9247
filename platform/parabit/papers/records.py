"""What a reproduction records: a finished cell (:class:`CellRecord`) or a paper's data step (:class:`PreparedRecord`),
keyed by the digest of what it depends on; the ledger (:mod:`parabit.reproduction.ledger`) stores them.

* a **cell record**: cell name, paper, group, seed, the **digest** of what the cell trains, the code commit, every
  metric its run logged, train seconds, data sizes, machine and cores, when it ran;
* a **prepared record**: what a paper's data step computed that its tables and groups need (selection sizes, tuned
  thresholds, text analyses; :meth:`~parabit.papers.plan.PaperPlan.facts`), keyed by the digest of what that step
  depends on.

A cell whose newest record carries its current digest is finished: it is never trained again, whether or not the
MLflow store knows it, and the document reads its numbers from the record. A record whose digest differs (the
training settings, or the data the paper prepares, changed since) is **stale**: shown as such, never used.

The digest covers the training config's settings that differ from their defaults, without those that may change
between runs of one name (its run name, tracking, scaling, storage: :data:`parabit.training.config.RESUMABLE_CHANGES`)
and without the paths of config files (:data:`parabit.config.ConfigFile`: what was read from them counts),
with paths written relative to the project, data and output folders (:func:`parabit.paths.portable`), so the same cell has the same
digest in every checkout and a setting added later at a neutral default invalidates nothing; and the digest of the
data its paper prepared.
"""

from __future__ import annotations

import calendar
import hashlib
import json
import math
import os
import platform
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from parabit.config import config_file_fields
from parabit.paths import portable
from parabit.training import RESUMABLE_CHANGES, TrainingConfig

CELL, PREPARED = "cell", "prepared"
UTC_FORMAT = "%Y-%m-%dT%H:%M:%SZ"

def settings(value: Any) -> Any:
    """``value`` with every config in it as the settings that differ from their defaults: a setting added later
    with a default that keeps the old behaviour leaves every digest (and so every record) valid. Fields that name
    another config file (:data:`parabit.config.ConfigFile`) are left out: where a file lives is not what is trained,
    and the plans digest what they read from it (the pipeline and training configs, the sweep space)."""
    if isinstance(value, BaseModel):
        files = config_file_fields(value) or None
        return settings(value.model_dump(mode="json", exclude_defaults=True, exclude=files))
    if isinstance(value, dict):
        return {key: settings(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [settings(item) for item in value]
    return str(value) if isinstance(value, Path) else value


def digest(payload: Any) -> str:
    """A short, stable digest of a value (:func:`settings` of it, paths made :func:`portable`; sorted keys)."""
    text = json.dumps(portable(settings(payload)), sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def cell_digest(config: TrainingConfig, data_digest: str = "") -> str:
    """What a cell trains (see the module docstring): its non-default settings but those a re-run of one name may
    change (run name, tracking, scaling, storage), paths made portable, and its paper's data."""
    trained = {key: value for key, value in settings(config).items() if key not in RESUMABLE_CHANGES}
    return digest({"recipe": config.recipe, "training": trained, "data": data_digest})


def finite_metrics(metrics: Mapping[str, float]) -> dict[str, float]:
    """The finite metrics, sorted by name (JSON has no NaN; a missing number is never read as zero)."""
    return {key: float(value) for key, value in sorted(metrics.items())
            if isinstance(value, (int, float)) and math.isfinite(value)}


def utc(seconds: float) -> str:
    """``seconds`` since the epoch as a record's UTC time stamp (ISO 8601)."""
    return time.strftime(UTC_FORMAT, time.gmtime(seconds))


def utc_seconds(stamp: str) -> float:
    """The inverse of :func:`utc`."""
    return float(calendar.timegm(time.strptime(stamp, UTC_FORMAT)))


def machine(cell_cpus: float | None = None, gpus: int = 0) -> dict[str, Any]:
    """Where a record was made: host, the machine's CPUs, and the CPUs (and GPUs) the cell's workers were given."""
    info: dict[str, Any] = {"host": platform.node(), "cpus": os.cpu_count()}
    if cell_cpus is not None:
        info["cell_cpus"] = cell_cpus
    if gpus:
        info["gpus"] = gpus
    return info


@dataclass(frozen=True)
class Provenance:
    """The code records are made from: the checkout's ``commit`` and the tracked files that differed from it when
    the reproduction started (``changed``, its own outputs left out). A record is only as checkable as its commit:
    with ``changed`` empty, checking the commit out gives the code that made it."""

    commit: str
    changed: tuple[str, ...] = ()

    @property
    def dirty(self) -> bool:
        return bool(self.changed)


@dataclass(frozen=True)
class CellRecord:
    """One finished cell (see the module docstring). ``started``/``finished``: UTC, ISO 8601; ``train_seconds``: the
    run's own total time, a resumed run's earlier attempts included (MLflow metric ``time/total_seconds``);
    ``data``: sizes of what it trained on."""

    cell: str
    paper: str
    group: str
    seed: int
    digest: str
    commit: str
    metrics: dict[str, float]
    train_seconds: float | None
    data: dict[str, Any]
    machine: dict[str, Any]
    started: str
    finished: str
    mlflow_run_id: str | None = None
    dirty: bool | None = None
    kind: str = CELL


@dataclass(frozen=True)
class PreparedRecord:
    """A paper's data step, done: its ``facts`` (portable paths) under the ``digest`` of what it depends on.
    ``partial``: what a data step of hours had done when it recorded its progress (a resumed step, on any machine,
    goes on from these facts instead of starting again)."""

    paper: str
    digest: str
    facts: dict[str, Any]
    commit: str
    seconds: float | None
    machine: dict[str, Any]
    finished: str
    dirty: bool | None = None
    partial: bool = False
    kind: str = PREPARED
