"""Finding or training a paper's cells (:class:`~parabit.papers.cells.Cell`), each one run of the training kernel.

The :class:`CellRunner` finds a cell's result, in this order:

1. the **ledger** (a record with the cell's digest): nothing is trained, whether or not MLflow knows the run;
2. a FINISHED **MLflow run** of the cell trained with the same settings (tagged with its digest, or with the
   settings its run record keeps): recorded in the ledger, not trained again;
3. **training** it with :func:`parabit.training.run.run_training` (a killed cell resumes from its last
   checkpoint: the kernel resumes by run name), then recording it in the ledger. Once its run has finished, its
   Ray Train checkpoints are removed unless ``keep_checkpoints``: a table cell needs its numbers, not its weights
   (an Elgohary cell keeps about 400 MB; the plan's 49 cells would fill 20 GB).

Cells that must train run one at a time in this process, or ``parallel`` at once as Ray tasks (on a cluster the tasks
and their workers spread over the nodes). A cell of one CPU worker trains in that process itself (Ray Train's local
mode: no worker group to start, and the process's imports and compiled kernels serve every cell it trains); other
cells start a Ray Train run each. Every number is read back from the
cell's MLflow run, so what a table shows is what the run logged, and the ledger keeps a copy.
"""

from __future__ import annotations

import json
import logging
import shutil
import tempfile
import time
from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from mlflow.tracking import MlflowClient

from parabit.output import configure_worker_output
from parabit.config import reconfigure
from parabit.papers.cells import Cell, CellResult, Group, one_line
from parabit.papers.records import CellRecord, Provenance, cell_digest, finite_metrics, machine, utc
from parabit.recipes import recipe_for
from parabit.reproduction.ledger import Ledger
from parabit.tracking import tags
from parabit.tracking.lineage import GIT_DIRTY, system_tags
from parabit.tracking.store import tracking_uri
from parabit.training import data_sizes_of, trained_settings

log = logging.getLogger(__name__)

MLFLOW_GIT_COMMIT = "mlflow.source.git.commit"


def make_cell(prefix: str, experiment: str, paper: str, group: Group, seed: int, data_digest: str = "") -> Cell:
    """The cell of ``group`` at ``seed``: its config renamed ``<prefix>-<paper>-<group>-s<seed>`` (the same name
    in every run of the reproduction, so a killed cell resumes and its MLflow run is found again), reseeded and
    logged to the reproduction's ``experiment`` (nothing registered: cells are measurements, not models to serve).
    ``data_digest``: what the paper's prepared data depends on (part of the cell's digest)."""
    name = f"{prefix}-{paper}-{group.key}-s{seed}"
    config = reconfigure(group.config, {"name": name, "seed": seed, "tracking.experiment": experiment,
                                        "tracking.register_as": ""})
    return Cell(paper, group.key, seed, config, cell_digest(config, data_digest))


def train_cell(cell: Cell, parent_run_id: str | None, uri: str, provenance: Provenance | None = None,
               keep_checkpoints: bool = False) -> CellResult:
    """Train ``cell`` through the kernel and read its MLflow run into a ledger record (its commit and dirty flag from
    ``provenance``, else from the run's own tags). An error is returned, not raised: one failed cell is listed as
    missing (with the error) and the reproduction goes on. Its checkpoints are removed once its run has FINISHED
    unless ``keep_checkpoints`` (a lost record is found again from that run, not trained again)."""
    from parabit.training.run import run_directory, run_training  # late: they load Ray Train

    started = time.time()
    try:
        training = run_training(recipe_for(cell.config), parent_run_id=parent_run_id, tags=cell.tags())
    except (KeyboardInterrupt, SystemExit):
        raise
    except Exception as err:  # noqa: BLE001 - reported in the document, the other cells go on
        log.exception("cell %s failed", cell.name)
        return CellResult(cell, error=one_line(err))
    if training.mlflow_run_id is None:
        return CellResult(cell, error="trained, but the MLflow store was unreachable (no run to read)")
    run = MlflowClient(uri).get_run(training.mlflow_run_id)
    if provenance is None:
        checkout = system_tags()
        provenance = Provenance(checkout.get(MLFLOW_GIT_COMMIT, "unknown"),
                                ("unknown",) if _dirty(checkout.get(GIT_DIRTY)) else ())
    record = CellRecord(
        cell=cell.name, paper=cell.paper, group=cell.group, seed=cell.seed, digest=cell.digest,
        commit=provenance.commit, dirty=provenance.dirty,
        metrics=finite_metrics(run.data.metrics), train_seconds=training.seconds.get("total"), data=training.data,
        machine=machine(cell.cpus, cell.gpus), started=utc(started), finished=utc(time.time()),
        mlflow_run_id=training.mlflow_run_id)
    if not keep_checkpoints:  # here, where it trained: side by side, on the node and output folder of its Ray task
        shutil.rmtree(run_directory(cell.config), ignore_errors=True)
    return CellResult(cell, record)


def _dirty(flag: str | None) -> bool | None:
    return {"true": True, "false": False}.get(flag or "")


class CellRunner:
    """Finds or trains cells (see the module docstring) and writes what it learns to the ``ledger``.

    ``parallel``: how many cells train at once (``auto``: as many as the cluster's CPUs, or GPUs, hold, keeping one
    CPU for Ray Data; cells in process, one per CPU). With more than one, each cell's workers get at most
    ``(CPUs − 1) / parallel`` CPUs.
    ``provenance``: the code the records it writes name (default: each run's own git tags). ``keep_checkpoints``:
    passed to :func:`train_cell`. ``in_process``: one-CPU-worker cells train in the process that runs them (see the
    module docstring). ``checkpoint_every``: each cell's checkpoint interval in epochs (its last epoch always has one).
    Neither changes what a cell trains (nor its digest)."""

    def __init__(self, ledger: Ledger, parent_run_id: str | None = None, uri: str | None = None,
                 parallel: int | str = 1, provenance: Provenance | None = None, keep_checkpoints: bool = False,
                 in_process: bool = True, checkpoint_every: int = 1):
        self.ledger = ledger
        self.keep_checkpoints = keep_checkpoints
        self.in_process = in_process
        self.checkpoint_every = checkpoint_every
        self.parent_run_id = parent_run_id
        self.uri = uri or tracking_uri()
        self.client = MlflowClient(self.uri)
        self.parallel = parallel
        self.provenance = provenance

    # -- finding ---------------------------------------------------------------------------------------------
    def recorded(self, cell: Cell) -> CellResult | None:
        """The cell's ledger record with its current digest (or that of the same training under another name)."""
        record = self.ledger.result(cell.paper, cell.name, cell.digest)
        return CellResult(cell, record, source="ledger") if record is not None else None

    def finished(self, cell: Cell) -> CellResult | None:
        """The cell's newest FINISHED MLflow run trained with the cell's settings, as a ledger record."""
        try:
            experiment = self.client.get_experiment_by_name(cell.config.tracking.experiment)
            if experiment is None:
                return None
            runs = self.client.search_runs(
                [experiment.experiment_id], f"tags.`{tags.REPRODUCTION_CELL}` = '{cell.name}' and "
                "attributes.status = 'FINISHED'", order_by=["attributes.start_time DESC"], max_results=5)
        except Exception as err:  # noqa: BLE001 - an unreachable store means: not found there
            log.warning("could not look for %s in MLflow (%s)", cell.name, err)
            return None
        run = next((r for r in runs if self._same_settings(cell, r.data.tags)), None)
        if run is None:
            return None
        return CellResult(cell, self._record_of(cell, run), source="mlflow")

    def _same_settings(self, cell: Cell, run_tags: Mapping[str, str]) -> bool:
        recorded = run_tags.get(tags.REPRODUCTION_DIGEST)
        if recorded:
            return recorded == cell.digest
        # A run from before digests were tagged: the settings its run record keeps (what the kernel's settings lock
        # compares) must be this cell's.
        from parabit.training.run import run_record  # late: it loads Ray Train

        stored = run_record(cell.config).get("settings")
        return stored is not None and json.loads(json.dumps(stored)) == json.loads(
            json.dumps(trained_settings(cell.config)))

    def _record_of(self, cell: Cell, run) -> CellRecord:
        metrics = run.data.metrics
        return CellRecord(
            cell=cell.name, paper=cell.paper, group=cell.group, seed=cell.seed, digest=cell.digest,
            commit=run.data.tags.get(MLFLOW_GIT_COMMIT, "unknown"), dirty=_dirty(run.data.tags.get(GIT_DIRTY)),
            metrics=finite_metrics(metrics), train_seconds=metrics.get("time/total_seconds"),
            data=self._data_sizes(run.info.run_id), machine=machine(cell.cpus, cell.gpus),
            started=utc(run.info.start_time / 1000), finished=utc((run.info.end_time or run.info.start_time) / 1000),
            mlflow_run_id=run.info.run_id)

    def _data_sizes(self, run_id: str) -> dict:
        try:
            with tempfile.TemporaryDirectory() as scratch:
                path = self.client.download_artifacts(run_id, "data/stats.json", scratch)
                return data_sizes_of(json.loads(Path(path).read_text()))
        except Exception as err:  # noqa: BLE001 - sizes are informative; their absence is shown as empty
            log.warning("no data statistics in run %s (%s)", run_id, err)
            return {}

    def find(self, cell: Cell) -> CellResult | None:
        """The cell's result without training: from the ledger, else from MLflow (then recorded in the ledger)."""
        found = self.recorded(cell)
        if found is None:
            found = self.finished(cell)
            if found is not None:
                self.ledger.append(found.record)
        if found is not None:
            log.info("%s: found in %s, not trained again", cell.name,
                     "the ledger" if found.source == "ledger" else "MLflow")
        return found

    # -- training --------------------------------------------------------------------------------------------
    def run_all(self, cells: Iterable[Cell]) -> list[CellResult]:
        """Every cell's result: found, else trained (:meth:`train_all`)."""
        results, to_train = [], []
        for cell in cells:
            found = self.find(cell)
            if found is not None:
                results.append(found)
            else:
                to_train.append(cell)
        return results + self.train_all(to_train)

    def train_all(self, cells: list[Cell]) -> list[CellResult]:
        """Train ``cells`` (``parallel`` at a time); each is recorded in the ledger as soon as it finishes."""
        cells = [self.as_trained(cell) for cell in cells]
        width = self.width(cells)
        return self._one_by_one(cells) if width <= 1 else self._side_by_side(cells, width)

    def as_trained(self, cell: Cell) -> Cell:
        """``cell`` with this runner's way of training it: its checkpoint interval, and in the process that runs it
        when it is one CPU worker."""
        overrides: dict[str, Any] = {"checkpoint_every": self.checkpoint_every}
        if self.in_process and cell.config.scaling.max_workers == 1 and not cell.gpus:
            overrides["scaling.in_process"] = True
        return replace(cell, config=reconfigure(cell.config, overrides))

    def width(self, cells: list[Cell]) -> int:
        """How many of ``cells`` train at once."""
        if not cells:
            return 1
        if self.parallel != "auto":
            return min(int(self.parallel), len(cells))
        import ray

        resources = ray.cluster_resources()
        if any(c.gpus for c in cells):
            return max(1, min(len(cells), int(resources.get("GPU", 0) // max(c.gpus for c in cells))))
        cpus = max(c.cpus for c in cells)
        if all(c.config.scaling.in_process for c in cells):
            # A cell in process reads its data through Ray Data only as it starts, and side by side each holds
            # (CPUs - 1) / width of a CPU (_side_by_side), so one CPU stays free for that: every core trains a cell.
            # Measured on 2 cores: two BilDRL cells side by side 22 s an epoch each, one alone 15.6 s.
            return max(1, min(len(cells), int(resources.get("CPU", 0) // cpus)))
        return max(1, min(len(cells), int((resources.get("CPU", 0) - 1) // cpus)))

    def _finish(self, result: CellResult) -> CellResult:
        if result.ok:
            self.ledger.append(result.record)
        return result

    def _one_by_one(self, cells: list[Cell]) -> list[CellResult]:
        return [self._finish(train_cell(cell, self.parent_run_id, self.uri, self.provenance, self.keep_checkpoints))
                for cell in cells]

    def _side_by_side(self, cells: list[Cell], width: int) -> list[CellResult]:
        """Train ``width`` cells at a time, each in a Ray task of its own: it trains a cell in process on the CPUs it
        holds, or only waits for the cell's Ray Train run (and holds none)."""
        import ray

        cpus = ray.cluster_resources().get("CPU", 0)
        share = max((cpus - 1) / width, 0.1)
        remote = ray.remote(max_retries=0)(_train_cell_in_task)
        waiting = [c.sized(share / c.config.scaling.max_workers) if not c.gpus else c for c in cells]
        running: dict[Any, Cell] = {}
        results = []
        try:
            while waiting or running:
                while waiting and len(running) < width:
                    cell = waiting.pop(0)
                    task = remote.options(num_cpus=cell.cpus if cell.config.scaling.in_process else 0)
                    running[task.remote(cell, self.parent_run_id, self.uri, self.provenance,
                                        self.keep_checkpoints)] = cell
                done, _ = ray.wait(list(running), num_returns=1)
                for ref in done:
                    cell = running.pop(ref)
                    try:
                        results.append(self._finish(ray.get(ref)))
                    except Exception as err:  # noqa: BLE001 - the task itself died (worker lost): one cell fails
                        results.append(self._finish(CellResult(cell, error=one_line(err))))
        except KeyboardInterrupt:
            # Each running cell gets the interrupt too: its run is closed KILLED and resumes on the next run.
            for ref in running:
                ray.cancel(ref)
            ray.wait(list(running), num_returns=len(running), timeout=60)
            raise
        return results


def _train_cell_in_task(*args, **kwargs) -> CellResult:
    """:func:`train_cell` in a Ray task of its own, printing as a Ray Train worker does (parabit's lines, the
    libraries' warnings)."""
    configure_worker_output()
    return train_cell(*args, **kwargs)
