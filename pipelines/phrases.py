"""Bilingual phrase pairs and pivot paraphrases: ingest → align → phrase_table → pivot.

Run it with ``parabit phrases --config jobs/configs/phrases_en_es.yaml``. The phrase table ends up in
``<output_dir>/phrase_table/data/`` (columns ``en``, ``foreign``, ``count``, ``count_en``, ``count_foreign``,
``p_en_given_foreign``, ``p_foreign_given_en``, ``lang``) and the paraphrases in ``<output_dir>/pivot/data/``
(``phrase``, ``paraphrase``, ``score``, ``pivots``); train on them with ``data: {condition: bilingual_phrases, path:
...}`` and ``data: {condition: pivot_paraphrases, path: ...}``.
"""

from __future__ import annotations

from functools import partial

from parabit.phrases import PhrasesConfig
from parabit.phrases.stages import align, phrase_table, pivot
from parabit.backtranslation import PipelineRun
from parabit.backtranslation.config import ingest_settings
from parabit.backtranslation.ingest import ingest
from parabit.data.heldout import heldout_sets


def run(config: PhrasesConfig) -> PipelineRun:
    """Run (or resume) the pipeline; stages whose output is complete for this configuration are skipped."""
    with PipelineRun(config) as pipeline:
        ingested = pipeline.stage("ingest", partial(ingest, config.sources, heldout=heldout_sets(config.heldout)),
                                  ingest_settings(config))
        aligned = pipeline.stage("align", partial(align, ingested, config.align), config.align, upstream=[ingested])
        table = pipeline.stage("phrase_table", partial(phrase_table, aligned, config.phrase_table, config.lang),
                               config.phrase_table, upstream=[aligned])
        pivot_stage = pipeline.stage("pivot", partial(pivot, table, config.pivot), config.pivot, upstream=[table])
        pipeline.tracker.set_tags({"parabit.phrase_table": str(table.data),
                                   "parabit.pivot_paraphrases": str(pivot_stage.data)})
        return pipeline
