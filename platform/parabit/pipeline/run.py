"""Running a named pipeline: its stages in order, each exactly once, with one MLflow run for the execution.

Named pipelines live in ``<project>/pipelines/<name>.py``, a folder of pipeline *definitions* (which stages, in
which order) that is not an installed package; :func:`load_pipeline` imports one by name. The definitions only
assemble stages in the driver: every function Ray ships to workers lives in ``parabit.pipeline``, which workers can
import, so a definition file never has to be on the workers' path.
"""

from __future__ import annotations

import importlib.util
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from parabit.config import to_dict
from parabit.paths import PROJECT_ROOT
from parabit.pipeline.config import PipelineConfig, fingerprint
from parabit.pipeline.stage import StageOutput, run_stage
from parabit.pipeline.stats import HISTOGRAM_FILE, STATS_FILE, write_stats
from parabit.ray_runtime import init_ray
from parabit.tracking.run_tracker import RunTracker

log = logging.getLogger(__name__)

PIPELINES_DIR = PROJECT_ROOT / "pipelines"
OUTPUT_TAG = "parabit.pipeline_output"


@dataclass(frozen=True)
class PipelineResult:
    """What a pipeline produced: its final ``output`` file, every stage's output, the stats, the MLflow run id."""

    output: Path
    stages: dict[str, StageOutput]
    stats: dict
    run_id: str | None


class PipelineRun:
    """One execution of a pipeline: starts Ray and an MLflow run, runs stages, then writes and logs the stats.

    Use as a context manager; the MLflow run ends FAILED if the block raises. Stage outputs go under
    ``config.output_path/<stage name>`` (see :mod:`parabit.pipeline.stage`).
    """

    def __init__(self, config: PipelineConfig):
        self.config = config
        self.root = config.output_path
        self.stages: dict[str, StageOutput] = {}
        self.tracker = RunTracker(config.experiment, run_name=config.name)

    def __enter__(self) -> "PipelineRun":
        init_ray()
        self.tracker.start()
        self.tracker.log_params(to_dict(self.config))
        self.tracker.set_tags({"parabit.pipeline": self.config.name, "parabit.pipeline_dir": str(self.root)})
        return self

    def __exit__(self, exc_type, *_) -> None:
        self.tracker.finish("FINISHED" if exc_type is None else "FAILED")

    def stage(self, name: str, compute: Callable[[Path], int], settings: Any,
              upstream: Sequence[StageOutput] = ()) -> StageOutput:
        """Run stage ``name`` exactly once. ``settings`` (its config section) and the upstream stages' fingerprints
        decide whether an existing output is still valid; ``compute(workdir)`` writes it and returns its rows in."""
        stage_fingerprint = fingerprint(name, settings, *(stage.fingerprint for stage in upstream))
        log.info("stage %s: starting", name)
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


def load_pipeline(name: str) -> ModuleType:
    """Import the pipeline definition ``pipelines/<name>.py``; it exposes ``run(config) -> PipelineResult``."""
    path = PIPELINES_DIR / f"{name}.py"
    if not path.is_file():
        available = sorted(p.stem for p in PIPELINES_DIR.glob("*.py") if not p.stem.startswith("_"))
        raise ValueError(f"no pipeline named {name!r} in {PIPELINES_DIR}; available: {available}")
    spec = importlib.util.spec_from_file_location(f"pipelines.{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
