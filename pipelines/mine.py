"""Bitext mining (``parabit mine``): embed two piles of sentences with a bilingual model on Ray Data, then pair them
by LASER's ratio margin; each stage exactly once, so a re-run resumes after the last complete one.

The pairs end up in ``<output_dir>/pairs/data/pairs.parquet`` (best first: ``source_text``, ``target_text``, their
lines, ``cosine``, ``margin``); the MLflow run's tag ``parabit.pipeline_output`` points at that file.
"""

from __future__ import annotations

from functools import partial

from parabit.backtranslation import PipelineResult, PipelineRun
from parabit.mining import MineConfig
from parabit.mining.stages import PAIRS_FILE, embed, mine_pairs
from parabit.tracking.registry import check_model_uri, pinned_model_uri


def run(config: MineConfig) -> PipelineResult:
    """Run (or resume) the mining; stages whose output is complete for this configuration are skipped."""
    # Checked first (a wrong name is one line); pinned so an alias that moves later is not the model embedded now.
    model = pinned_model_uri(check_model_uri(config.model))
    with PipelineRun(config) as pipeline:
        embedded = pipeline.stage("embed", partial(embed, config, model), config.embed_settings(model))
        mined = pipeline.stage("pairs", partial(mine_pairs, embedded, config), config.pair_settings(),
                               upstream=[embedded])
        return pipeline.finish(mined.data / PAIRS_FILE, mined, ["cosine", "margin"])
