"""Commands that build derived data sets in the library: ``translate-sick`` and ``build-dictionaries``."""

from __future__ import annotations

import click

from parabit.cli.options import common_options, config_path, load


@click.command("translate-sick", short_help="Translate SICK with the pipeline's translator, once.")
@config_path(required=False, help_text="YAML with SICKTranslationConfig fields (default: SICK into Spanish with "
                                       "Apertium)")
@common_options
def translate_sick(config_path: str | None, overrides: dict) -> int:
    """Translate SICK (train, trial, test) with the pipeline's translator, once, as an exactly-once stage."""
    from parabit.config import to_dict
    from parabit.backtranslation.sick_translation import SICKTranslationConfig, run_sick_translation
    from parabit.tracking import RunTracker, tags

    config = load(SICKTranslationConfig, config_path, overrides)
    stage = run_sick_translation(config)
    click.echo(f"{stage.path}: {stage.rows_in} pairs in, {stage.rows_out} translated, {stage.rows_rejected} "
               f"quarantined {stage.reject_reasons} ({stage.seconds:.1f} s)")
    tracker = RunTracker("parabit-pipelines", run_name=config.name, tags={tags.KIND: "pipeline"})
    tracker.start()
    with tracker.closing():
        tracker.log_params(to_dict(config))
        tracker.set_tags({tags.PIPELINE_OUTPUT: str(stage.path)})
        tracker.log_metrics({"rows_in": stage.rows_in, "rows_out": stage.rows_out,
                             "rows_rejected": stage.rows_rejected})
    click.echo(f"MLflow run id: {tracker.run_id}  experiment: parabit-pipelines")
    return 0


@click.command("build-dictionaries", short_help="Build the BilDRL dictionaries and paraphrase set.")
@config_path(required=False, help_text="YAML with DictionaryBuildConfig fields (default: the defaults)")
@click.option("--directions", multiple=True, type=click.Choice(["fr-en", "en-es", "es-en"]),
              help="directions to build (repeatable; default: all three)")
@common_options
def build_dictionaries(config_path: str | None, directions: tuple[str, ...], overrides: dict) -> int:
    """Build the BilDRL dictionaries (fr-en, en-es, es-en) and the en-es paraphrase set, once, as parquet.

    Needs the bilingual spaces trained first (e.g. parabit train --config jobs/configs/bildrl/embeddings_es.yaml, and
    the same for fr); es-en reads WordNet 3.0's database (Debian wordnet-base; or set PARABIT_WORDNET)."""
    from parabit.recipes.bildrl.build import build_dictionaries as build, summary
    from parabit.recipes.bildrl.config import DIRECTIONS, DictionaryBuildConfig

    config = load(DictionaryBuildConfig, config_path, overrides)
    outputs = build(config, directions=tuple(directions) or DIRECTIONS)
    click.echo(summary(outputs))
    click.echo(f"written under {config.output_path}")
    return 0
