"""Command lines of the Elgohary & Carpuat reproduction: build the phrase data, and reproduce the paper's tables."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from parabit.cli import _add_overrides, _configure_logging
from parabit.config import ConfigError, load_config, parse_override


def _parse_config(cls: type, prog: str, description: str, example: str, argv: Sequence[str] | None):
    """``--config`` YAML + ``--set`` overrides → a ``cls`` config, or None after printing what is wrong."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("--config", required=True, help=f"YAML file with {cls.__name__} fields (see jobs/configs/)")
    _add_overrides(parser, f"override a config value, e.g. {example}")
    args = parser.parse_args(argv)
    try:
        config = load_config(cls, args.config, dict(parse_override(text) for text in args.overrides))
    except ConfigError as err:
        print(f"error: {err}", file=sys.stderr)
        return None
    _configure_logging()
    return config


def phrases_main(argv: Sequence[str] | None = None) -> int:
    """Build the en-foreign phrase table and pivot paraphrases from bitext on Ray Data (resumable)."""
    from parabit.phrases import PhrasesConfig
    from parabit.phrases.report import summary
    from parabit.pipeline import load_pipeline

    config = _parse_config(PhrasesConfig, "phrases", phrases_main.__doc__, "--set align.shard_size=200000", argv)
    if config is None:
        return 2
    pipeline = load_pipeline("phrases").run(config)
    for name, stage in pipeline.stages.items():
        print(f"{name:>14}: {stage.rows_in:>9} in {stage.rows_out:>9} out {stage.rows_rejected:>9} rejected "
              f"{stage.seconds:>8.1f}s  {dict(list(stage.reject_reasons.items())[:4])}")
    print(summary(pipeline.stages))
    print(f"phrase table: {pipeline.stages['phrase_table'].data}\npivot paraphrases: {pipeline.stages['pivot'].data}")
    print(f"MLflow run: {pipeline.tracker.run_id}")
    return 0


def reproduce_main(argv: Sequence[str] | None = None) -> int:
    """Reproduce Elgohary & Carpuat (2017) Table 3 (and Tables 4–6) on the shipped en-es bitext; log to MLflow."""
    from parabit.elgohary.reproduce import ReproductionConfig, run_reproduction

    config = _parse_config(ReproductionConfig, "reproduce_elgohary", reproduce_main.__doc__,
                           "--set max_pairs=5000 --set 'analyses=[]'", argv)
    if config is None:
        return 2
    for title, table in run_reproduction(config).items():
        print(f"\n### {title}\n\n{table}")
    print(f"\ntables: {config.output_path / 'tables.md'}  (MLflow experiment {config.experiment})")
    return 0
