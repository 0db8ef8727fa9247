"""The bitext → paraphrase-pair pipeline on Ray Data: ingest, back-translate, score, select, stats.

Each stage is a function ``stage(inputs..., workdir) -> rows_in`` that writes ``workdir/data`` and
``workdir/rejects``; :func:`parabit.pipeline.stage.run_stage` makes its output exactly-once and resumable, and
:class:`parabit.pipeline.run.PipelineRun` strings stages together with MLflow tracking. The named pipeline
``pipelines/backtranslate.py`` assembles them.
"""

from parabit.pipeline.config import (FilterConfig, PipelineConfig, ScoreConfig, SelectConfig, SourceConfig,
                                     TranslationConfig)
from parabit.pipeline.run import PipelineResult, PipelineRun, load_pipeline
from parabit.pipeline.stage import ConservationError, StageOutput, run_stage

__all__ = ["ConservationError", "FilterConfig", "PipelineConfig", "PipelineResult", "PipelineRun", "ScoreConfig",
           "SelectConfig", "SourceConfig", "StageOutput", "TranslationConfig", "load_pipeline", "run_stage"]
