"""Paraphrase pairs by back-translation (Wieting, Mallinson & Gimpel 2017): ingest → back-translate → score →
select → stats.

Run it with ``parabit backtranslate --config jobs/configs/backtranslate_slice.yaml``. The training pairs end
up in ``<output_dir>/select/data/pairs.parquet`` (columns ``text_a``, ``text_b``, ``lang_a``, ``lang_b``, scores,
provenance); the MLflow run's tag ``parabit.pipeline_output`` points at that file. Changing only thresholds or the
sample re-runs only the selection.
"""

from __future__ import annotations

from functools import partial

from parabit.backtranslation import PipelineConfig, PipelineResult, PipelineRun
from parabit.backtranslation.config import ingest_settings
from parabit.backtranslation.backtranslate import backtranslate
from parabit.backtranslation.ingest import ingest
from parabit.data.heldout import heldout_sets
from parabit.backtranslation.score import score
from parabit.backtranslation.select import PAIRS_FILE, select


def run(config: PipelineConfig) -> PipelineResult:
    """Run (or resume) the pipeline; stages whose output is complete for this configuration are skipped."""
    config = config.model_copy(update={"score": config.score.pinned()})
    with PipelineRun(config) as pipeline:
        ingested = pipeline.stage("ingest", partial(ingest, config.sources, heldout=heldout_sets(config.heldout)),
                                  ingest_settings(config))
        translated = pipeline.stage("backtranslate", partial(backtranslate, ingested, config.translation),
                                    config.translation, upstream=[ingested])
        scored = pipeline.stage("score", partial(score, translated, config.score), config.score.scoring_settings(),
                                upstream=[translated])
        selected = pipeline.stage("select", partial(select, scored, config.select, config.score.filters),
                                  (config.select, config.score.thresholds()), upstream=[scored])
        return pipeline.finish(selected.data / PAIRS_FILE, scored, config.score.score_columns)
