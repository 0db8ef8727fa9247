"""Cells: one training run of a seed paper's table at one training seed, run through the training kernel.

A paper declares :class:`Group`\\ s (what a table cell stands for: a training config); the reproduction turns each
into one :class:`Cell` per seed, with a deterministic run name ``<prefix>-<paper>-<group>-s<seed>``. The
:class:`CellRunner` trains a cell with :func:`parabit.training.driver.run_training` unless a FINISHED MLflow run
tagged with that name exists (then the cell is skipped), and reads every number back from the MLflow run, so what a
table shows is what the run logged. A killed cell resumes from its last checkpoint (the kernel resumes by run name).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from mlflow.tracking import MlflowClient

from parabit.config import apply_override, from_dict, to_dict
from parabit.recipes import recipe_for
from parabit.tracking import tags
from parabit.tracking.store import tracking_uri
from parabit.training.config import RunConfig

log = logging.getLogger(__name__)


def reconfigure(config: RunConfig, overrides: Mapping[str, Any]) -> RunConfig:
    """``config`` with dotted ``overrides`` applied (as ``--set``), validated again."""
    data = to_dict(config)
    for dotted, value in overrides.items():
        apply_override(data, dotted, value)
    return from_dict(type(config), data, where=f"cell {config.name}")


@dataclass(frozen=True)
class Group:
    """What one table cell stands for, before seeds: a ``key`` unique within its paper (part of run names, so no
    spaces or '/'), the training ``config`` (its name, seed and tracking are set per cell) and a ``label`` for
    tables and figures."""

    key: str
    config: RunConfig
    label: str = ""

    def __post_init__(self):
        if not self.key or any(ch.isspace() or ch == "/" for ch in self.key):
            raise ValueError(f"group key {self.key!r} must be a non-empty name without spaces or '/'")

    @property
    def title(self) -> str:
        return self.label or self.key


@dataclass(frozen=True)
class Cell:
    """One run: ``group`` of ``paper`` trained with ``seed``; ``config`` is the full training config (named)."""

    paper: str
    group: str
    seed: int
    config: RunConfig

    @property
    def name(self) -> str:
        return self.config.name

    def tags(self) -> dict[str, str]:
        return {tags.REPRODUCTION_CELL: self.name, tags.REPRODUCTION_PAPER: self.paper,
                tags.REPRODUCTION_GROUP: self.group, tags.REPRODUCTION_SEED: str(self.seed)}


def cell_name(prefix: str, paper: str, group: str, seed: int) -> str:
    return f"{prefix}-{paper}-{group}-s{seed}"


def make_cell(prefix: str, experiment: str, paper: str, group: Group, seed: int) -> Cell:
    """The cell of ``group`` at ``seed``: its config renamed, reseeded and logged to the reproduction's experiment
    (nothing registered: cells are measurements, not models to serve)."""
    name = cell_name(prefix, paper, group.key, seed)
    config = reconfigure(group.config, {"name": name, "seed": seed, "tracking.experiment": experiment,
                                        "tracking.register_as": ""})
    return Cell(paper, group.key, seed, config)


@dataclass(frozen=True)
class CellResult:
    """What a cell produced: its MLflow ``run_id`` and the run's ``metrics`` (latest value of each), or the
    ``error`` that stopped it. ``reused``: found finished in MLflow, not trained by this invocation."""

    cell: Cell
    run_id: str | None
    metrics: dict[str, float] = field(default_factory=dict)
    error: str | None = None
    reused: bool = False

    @property
    def ok(self) -> bool:
        return self.error is None and self.run_id is not None

    @property
    def seconds(self) -> float | None:
        value = self.metrics.get("time/total_seconds")
        return value if value is not None and math.isfinite(value) else None


class CellRunner:
    """Trains cells (or finds them finished) and reads their numbers from MLflow."""

    def __init__(self, parent_run_id: str | None = None, uri: str | None = None):
        self.parent_run_id = parent_run_id
        self.client = MlflowClient(uri or tracking_uri())

    def finished(self, cell: Cell) -> CellResult | None:
        """The cell's newest FINISHED MLflow run, if there is one."""
        experiment = self.client.get_experiment_by_name(cell.config.tracking.experiment)
        if experiment is None:
            return None
        runs = self.client.search_runs([experiment.experiment_id],
                                       f"tags.`{tags.REPRODUCTION_CELL}` = '{cell.name}' and "
                                       "attributes.status = 'FINISHED'", order_by=["attributes.start_time DESC"],
                                       max_results=1)
        return CellResult(cell, runs[0].info.run_id, dict(runs[0].data.metrics), reused=True) if runs else None

    def run(self, cell: Cell) -> CellResult:
        """The cell's result: its finished run, else a new (or resumed) training run. An error in one cell is
        recorded (the document lists the cell as missing, with the error) and does not stop the others."""
        found = self.finished(cell)
        if found is not None:
            log.info("%s: finished in MLflow run %s, skipped", cell.name, found.run_id)
            return found
        try:
            training = run_training(recipe_for(cell.config), parent_run_id=self.parent_run_id, tags=cell.tags())
        except (KeyboardInterrupt, SystemExit):
            raise
        except Exception as err:  # noqa: BLE001 - one failed cell is reported, the reproduction goes on
            log.exception("cell %s failed", cell.name)
            return CellResult(cell, None, error=f"{type(err).__name__}: {' '.join(str(err).split())[:300]}")
        if training.mlflow_run_id is None:
            return CellResult(cell, None, error="trained, but the MLflow store was unreachable (no run to read)")
        run = self.client.get_run(training.mlflow_run_id)
        return CellResult(cell, training.mlflow_run_id, dict(run.data.metrics))

    def run_all(self, cells: Iterable[Cell]) -> list[CellResult]:
        return [self.run(cell) for cell in cells]


def run_training(recipe, **kwargs):
    """The training kernel's driver (imported late: it starts nothing, but pulls in Ray Train)."""
    from parabit.training.driver import run_training as kernel

    return kernel(recipe, **kwargs)


class Results:
    """Every cell result of one paper, looked up by group and seed."""

    def __init__(self, results: Iterable[CellResult] = ()):
        self.all: list[CellResult] = list(results)

    def add(self, results: Iterable[CellResult]) -> None:
        self.all.extend(results)

    def of(self, group: str) -> list[CellResult]:
        """The successful results of ``group``, by seed (a later result of a seed replaces an earlier one)."""
        by_seed = {r.cell.seed: r for r in self.all if r.cell.group == group and r.ok}
        return [by_seed[seed] for seed in sorted(by_seed)]

    def values(self, group: str, metric) -> dict[int, float]:
        """``{seed: value}`` of ``metric`` over ``group``'s successful cells that have it."""
        values = {r.cell.seed: metric.of(r.metrics) for r in self.of(group)}
        return {seed: value for seed, value in values.items() if value is not None}

    def failed(self) -> list[CellResult]:
        done = {(r.cell.group, r.cell.seed) for r in self.all if r.ok}
        return [r for r in self.all if not r.ok and (r.cell.group, r.cell.seed) not in done]
