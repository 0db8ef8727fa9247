"""Running a pipeline: its stages in order, each exactly once, with one MLflow run for the execution.

A pipeline definition (the ``pipelines`` package: which stages, in which order) opens a :class:`PipelineRun` and
calls :meth:`PipelineRun.stage` per stage. Every function Ray ships to workers lives in ``parabit.backtranslation``, so the
definitions only assemble stages in the driver.

One name, one live run: the run holds a lock on its output folder (a second execution of the same pipeline at once
is refused), and an execution after a killed one (its MLflow run left ``RUNNING``) takes that run over instead of
opening a second one.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mlflow.tracking import MlflowClient

from parabit.config import to_dict
from parabit.backtranslation.config import fingerprint
from parabit.backtranslation.stage import StageOutput, run_stage
from parabit.backtranslation.stats import HISTOGRAM_FILE, STATS_FILE, write_stats
from parabit.ray_runtime import init_ray
from parabit.runlock import exclusive_run
from parabit.tracking import tags
from parabit.tracking.run_tracker import RunTracker
from parabit.tracking.store import tracking_uri

log = logging.getLogger(__name__)

OUTPUT_TAG = tags.PIPELINE_OUTPUT
LOCK_FILE = ".parabit-run.lock"


@dataclass(frozen=True)
class PipelineResult:
    """What a pipeline produced: its final ``output`` file, every stage's output, the stats, the MLflow run id."""

    output: Path
    stages: dict[str, StageOutput]
    stats: dict
    run_id: str | None


def stale_run(experiment: str, name: str, uri: str | None = None) -> str | None:
    """The id of a ``RUNNING`` pipeline run named ``name`` that a killed execution left behind, if there is one."""
    try:
        client = MlflowClient(uri or tracking_uri())
        found = client.get_experiment_by_name(experiment)
        if found is None:
            return None
        runs = client.search_runs([found.experiment_id], f"tags.`{tags.PIPELINE}` = '{name}' and "
                                  "attributes.status = 'RUNNING'", order_by=["start_time DESC"], max_results=1)
    except Exception as err:  # noqa: BLE001 - an unreachable store only means no run to take over
        log.warning("could not look for a stale run of %s (%s)", name, err)
        return None
    return runs[0].info.run_id if runs else None


class PipelineRun:
    """One execution of a pipeline: starts Ray and an MLflow run, runs stages, then writes and logs the stats.

    Use as a context manager; the MLflow run ends ``FAILED`` if the block raises, ``KILLED`` on Ctrl-C / SIGTERM.
    Stage outputs go under ``config.output_path/<stage name>`` (see :mod:`parabit.backtranslation.stage`).
    """

    def __init__(self, config: Any):
        self.config = config
        self.root = config.output_path
        self.stages: dict[str, StageOutput] = {}
        self.tracker: RunTracker | None = None
        self._lock = None
        self._closing = None

    def __enter__(self) -> "PipelineRun":
        self._lock = exclusive_run(self.root / LOCK_FILE, f"pipeline {self.config.name}")
        self._lock.__enter__()
        init_ray()
        previous = stale_run(self.config.experiment, self.config.name)
        self.tracker = RunTracker(self.config.experiment, run_name=self.config.name, run_id=previous,
                                  tags={tags.KIND: "pipeline", tags.PIPELINE: self.config.name,
                                        tags.PIPELINE_DIR: str(self.root)})
        self.tracker.start()
        if previous is None:
            self.tracker.log_params(to_dict(self.config))
        else:
            log.info("taking over the MLflow run %s that a killed execution of %s left open", previous,
                     self.config.name)
        self._closing = self.tracker.closing()
        self._closing.__enter__()
        return self

    def __exit__(self, *exc_info) -> bool:
        try:
            return bool(self._closing.__exit__(*exc_info))
        finally:
            self._lock.__exit__(*exc_info)

    def stage(self, name: str, compute: Callable[[Path], int], settings: Any,
              upstream: Sequence[StageOutput] = ()) -> StageOutput:
        """Run stage ``name`` exactly once. ``settings`` (its config section) and the upstream stages' fingerprints
        decide whether an existing output is still valid; ``compute(workdir)`` writes it and returns its rows in."""
        stage_fingerprint = fingerprint(name, settings, *(stage.fingerprint for stage in upstream))
        log.debug("stage %s: starting", name)
        output = run_stage(self.root, name, stage_fingerprint, compute)
        self.stages[name] = output
        self.tracker.log_metrics({f"{name}.rows_in": output.rows_in, f"{name}.rows_out": output.rows_out,
                                  f"{name}.rows_rejected": output.rows_rejected, f"{name}.seconds": output.seconds})
        return output

    def finish(self, output: Path, scored: StageOutput, score_columns: Sequence[str]) -> PipelineResult:
        """Write the stats (next to the stages), log them and the output location, and describe the result."""
        folder = self.root / "stats"
        stats = write_stats(list(self.stages.values()), scored, score_columns, folder)
        self.tracker.log_artifact(folder / STATS_FILE, "stats")
        self.tracker.log_artifact(folder / HISTOGRAM_FILE, "stats")
        self.tracker.set_tags({OUTPUT_TAG: str(output)})
        return PipelineResult(output, dict(self.stages), stats, self.tracker.run_id)
