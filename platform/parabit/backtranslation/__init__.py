"""The bitext → paraphrase-pair pipeline on Ray Data: ingest, back-translate, score, select, stats.

Each stage is a function ``stage(inputs..., workdir) -> rows_in`` that writes ``workdir/data`` and
``workdir/rejects``; :func:`parabit.backtranslation.stage.run_stage` makes its output exactly-once and resumable, and
:class:`parabit.backtranslation.run.PipelineRun` strings stages together with MLflow tracking. The ``pipelines`` package
(beside the library) assembles them into named pipelines.
"""

from parabit.backtranslation.config import (FilterConfig, PipelineConfig, ScoreConfig, SelectConfig, SourceConfig,
                                     TranslationConfig)
from parabit.backtranslation.run import PipelineResult, PipelineRun
from parabit.backtranslation.stage import ConservationError, StageOutput, run_stage

__all__ = ["ConservationError", "FilterConfig", "PipelineConfig", "PipelineResult", "PipelineRun", "ScoreConfig",
           "SelectConfig", "SourceConfig", "StageOutput", "TranslationConfig", "run_stage"]
