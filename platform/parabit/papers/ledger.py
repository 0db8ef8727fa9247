"""The results ledger: every finished reproduction cell as one committed line, so results travel with the code.

A reproduction of many hours outlives one machine and one MLflow store only if its results are in the repository.
Each paper has one line-oriented file, ``<folder>/<paper>.jsonl`` in the folder the reproduction config names
(``parabit reproduce`` passes the checkout's committed ledger folder for a full run), to which the reproduction
appends

* a **cell record** when a cell finishes: cell name, paper, group, seed, the **digest** of what the cell trains,
  the code commit, every metric its run logged, train seconds, data sizes, machine and cores, when it ran;
* a **prepared record** when a paper's data step finishes: what the plan computed that its tables and groups need
  (selection sizes, tuned thresholds, text analyses; :meth:`~parabit.papers.plan.PaperPlan.facts`), keyed by
  the digest of what that step depends on.

A cell whose newest record carries its current digest is finished: it is never trained again, whether or not the
MLflow store knows it, and the document reads its numbers from the record. A record whose digest differs (the
training settings, or the data the paper prepares, changed since) is **stale**: shown as such, never used.

The digest covers the training config's settings that differ from their defaults, without those that may change
between runs of one name (its run name, tracking, scaling, storage: :data:`parabit.training.config.RESUMABLE_CHANGES`)
and without the paths of config files (:data:`parabit.config.ConfigFile`: what was read from them counts),
with paths written relative to the project, data and output folders, so the same cell has the same digest in every
checkout and a setting added later at a neutral default invalidates nothing; and the digest of the data its paper
prepared. Lines are JSON (fields in a fixed order): appending never rewrites a line, so two machines' ledgers merge
line by line.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import platform
import time
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from parabit.config import ConfigError, config_file_fields
from parabit.paths import data_root, output_root, project_root
from parabit.training import RESUMABLE_CHANGES, TrainingConfig

SUFFIX = ".jsonl"
CELL, PREPARED = "cell", "prepared"

# How a path is written in the ledger: relative to one of these roots, so a digest does not depend on the checkout.
_ROOTS = (("$OUTPUTS", output_root), ("$DATA", data_root), ("$PROJECT", project_root))


def _roots() -> list[tuple[str, str]]:
    roots = []
    for name, root in _ROOTS:
        try:
            roots.append((name, str(root())))
        except FileNotFoundError:  # no data folder here: its paths stay as they are
            continue
    return roots


def _map_strings(value: Any, convert) -> Any:
    """``value`` with ``convert`` applied to every string in it (dicts and lists walked; tuples become lists)."""
    if isinstance(value, dict):
        return {key: _map_strings(item, convert) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_map_strings(item, convert) for item in value]
    return convert(value) if isinstance(value, str) else value


def _rebase(text: str, prefixes: list[tuple[str, str]]) -> str:
    """``text`` with the first matching ``old`` path prefix (a whole path component) replaced by ``new``."""
    for old, new in prefixes:
        if text == old or text.startswith(old + "/"):
            return new + text[len(old):]
    return text


def portable(value: Any) -> Any:
    """``value`` (a config's dict, a plan's facts) with every absolute path under the output, data or project folder
    written as ``$OUTPUTS/...``, ``$DATA/...`` or ``$PROJECT/...``."""
    prefixes = [(root, name) for name, root in _roots()]
    return _map_strings(value, lambda text: _rebase(text, prefixes))


def local(value: Any) -> Any:
    """The inverse of :func:`portable` in this checkout."""
    prefixes = [(name, root) for name, root in _roots()]
    return _map_strings(value, lambda text: _rebase(text, prefixes))


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
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


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


@dataclass
class Ledger:
    """The ledger files in ``folder`` (one per paper). Reading is cached; :meth:`append` writes through."""

    folder: Path
    _cache: dict[str, list[CellRecord | PreparedRecord]] = field(default_factory=dict, repr=False)

    def path(self, paper: str) -> Path:
        return self.folder / f"{paper}{SUFFIX}"

    def records(self, paper: str) -> list[CellRecord | PreparedRecord]:
        """Every record of ``paper`` in file order; a line that is not a record fails, naming the file and line."""
        if paper not in self._cache:
            self._cache[paper] = list(_read(self.path(paper)))
        return self._cache[paper]

    def cells(self, paper: str) -> list[CellRecord]:
        return [r for r in self.records(paper) if isinstance(r, CellRecord)]

    def cell(self, paper: str, name: str, cell_digest: str) -> CellRecord | None:
        """The newest record of cell ``name`` with ``cell_digest`` (None: not finished with these settings)."""
        found = [r for r in self.cells(paper) if r.cell == name and r.digest == cell_digest]
        return found[-1] if found else None

    def result(self, paper: str, name: str, cell_digest: str) -> CellRecord | None:
        """The record that finishes cell ``name``: its own (:meth:`cell`), else the newest record of any cell of
        ``paper`` with the same digest: the same training (settings, seed and data) under another name, e.g. a
        tuning step's run at the cells' own scale that a table cell repeats exactly."""
        found = self.cell(paper, name, cell_digest)
        if found is None:
            same = [r for r in self.cells(paper) if r.digest == cell_digest]
            found = same[-1] if same else None
        return found

    def stale(self, paper: str, name: str, cell_digest: str) -> CellRecord | None:
        """The newest record of cell ``name`` made with other settings, when none has ``cell_digest``."""
        if self.result(paper, name, cell_digest) is not None:
            return None
        found = [r for r in self.cells(paper) if r.cell == name]
        return found[-1] if found else None

    def prepared(self, paper: str, data_digest: str) -> PreparedRecord | None:
        """The newest prepared record of ``paper`` with ``data_digest`` (its facts are the ones in force)."""
        found = self.preparations(paper, data_digest)
        return found[-1] if found else None

    def preparations(self, paper: str, data_digest: str) -> list[PreparedRecord]:
        """Every prepared record of ``paper`` with ``data_digest``, oldest first (a data step resumed by several
        runs records each run's part)."""
        return [r for r in self.records(paper) if isinstance(r, PreparedRecord) and r.digest == data_digest]

    def append(self, record: CellRecord | PreparedRecord) -> None:
        """Append one line (flushed to disk before returning: a killed run keeps every record it wrote)."""
        path = self.path(record.paper)
        path.parent.mkdir(parents=True, exist_ok=True)
        line = json.dumps(asdict(record), separators=(", ", ": "), ensure_ascii=False)
        with open(path, "a", encoding="utf-8") as file:
            file.write(line + "\n")
            file.flush()
            os.fsync(file.fileno())
        self.records(record.paper).append(record)


def merge_ledgers(target: Path, source: Path) -> dict[str, int]:
    """Append to the ledger in ``target`` every record of the ledger in ``source`` it lacks (another machine's, or a
    worktree's), paper by paper, in the source's order; returns how many lines each paper gained. Both are read
    first, so a line that is not a record stops the merge before anything is written."""
    theirs = {path.stem: list(_read(path)) for path in sorted(Path(source).glob(f"*{SUFFIX}"))}
    ours = Ledger(Path(target))
    added = {}
    for paper, records in theirs.items():
        known = {json.dumps(asdict(record), sort_keys=True) for record in ours.records(paper)}
        new = [record for record in records if json.dumps(asdict(record), sort_keys=True) not in known]
        for record in new:
            ours.append(record)
        added[paper] = len(new)
    return added


def _read(path: Path) -> Iterable[CellRecord | PreparedRecord]:
    if not path.is_file():
        return
    with open(path, encoding="utf-8") as file:
        for number, line in enumerate(file, 1):
            if not line.strip():
                continue
            try:
                data = json.loads(line)
                kind = data.get("kind")
                if kind == CELL:
                    yield CellRecord(**data)
                elif kind == PREPARED:
                    yield PreparedRecord(**data)
                else:
                    raise ValueError(f"unknown record kind {kind!r}")
            except (ValueError, TypeError) as err:
                raise ConfigError(f"{path}:{number}: not a ledger record ({' '.join(str(err).split())[:200]}); "
                                  "fix or remove the line (the ledger is one JSON record per line)") from None
