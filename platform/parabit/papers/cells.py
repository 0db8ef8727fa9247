"""A paper's cells: what a table cell stands for (:class:`Group`), one run of it at one training seed (:class:`Cell`,
with the digest of what it trains, :mod:`parabit.papers.records`), what a cell produced (:class:`CellResult`) and a
paper's results by group and seed (:class:`Results`). Naming, finding and training cells is the reproduction's
(:func:`parabit.reproduction.cells.make_cell`, :class:`parabit.reproduction.cells.CellRunner`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, replace

from parabit.config import reconfigure
from parabit.papers.records import CellRecord
from parabit.tracking import tags
from parabit.training import TrainingConfig


@dataclass(frozen=True)
class Group:
    """What one table cell stands for, before seeds: a ``key`` unique within its paper (part of run names, so no
    spaces or '/'), the training ``config`` (its name, seed and tracking are set per cell) and a ``label`` for
    tables and figures."""

    key: str
    config: TrainingConfig
    label: str = ""

    def __post_init__(self):
        if not self.key or any(ch.isspace() or ch == "/" for ch in self.key):
            raise ValueError(f"group key {self.key!r} must be a non-empty name without spaces or '/'")

    @property
    def title(self) -> str:
        return self.label or self.key


@dataclass(frozen=True)
class Cell:
    """One run: ``group`` of ``paper`` trained with ``seed``; ``config`` is the full training config (named);
    ``digest`` what it trains (its ledger key)."""

    paper: str
    group: str
    seed: int
    config: TrainingConfig
    digest: str = ""

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def cpus(self) -> float:
        return self.config.scaling.max_workers * self.config.scaling.cpus_per_worker

    @property
    def gpus(self) -> int:
        return self.config.scaling.max_workers if self.config.scaling.use_gpu else 0

    def tags(self) -> dict[str, str]:
        return {tags.REPRODUCTION_CELL: self.name, tags.REPRODUCTION_PAPER: self.paper,
                tags.REPRODUCTION_GROUP: self.group, tags.REPRODUCTION_SEED: str(self.seed),
                tags.REPRODUCTION_DIGEST: self.digest}

    def renamed(self, name: str) -> "Cell":
        """The same cell under another run name (same digest): to train it again beside its recorded run."""
        return replace(self, config=reconfigure(self.config, {"name": name}))

    def sized(self, cpus_per_worker: float) -> "Cell":
        """The same cell with fewer CPUs per worker (scaling is not part of what a cell trains, nor of its digest)."""
        if cpus_per_worker >= self.config.scaling.cpus_per_worker:
            return self
        return replace(self, config=reconfigure(self.config, {"scaling.cpus_per_worker": cpus_per_worker}))


@dataclass(frozen=True)
class CellResult:
    """What a cell produced: its ``record`` (the ledger line: metrics, times, data sizes), or the ``error`` that
    stopped it. ``source``: where this invocation found it (``ledger``, ``mlflow``) or ``trained``."""

    cell: Cell
    record: CellRecord | None = None
    error: str | None = None
    source: str = "trained"

    @property
    def ok(self) -> bool:
        return self.error is None and self.record is not None

    @property
    def run_id(self) -> str | None:
        return self.record.mlflow_run_id if self.record is not None else None

    @property
    def metrics(self) -> dict[str, float]:
        return self.record.metrics if self.record is not None else {}

    @property
    def reused(self) -> bool:
        return self.source != "trained"

    @property
    def seconds(self) -> float | None:
        value = self.record.train_seconds if self.record is not None else None
        return value if value is not None and math.isfinite(value) else None


def one_line(err: BaseException) -> str:
    return f"{type(err).__name__}: {' '.join(str(err).split())[:300]}"


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
