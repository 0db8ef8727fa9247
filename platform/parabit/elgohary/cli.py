"""Command lines of the Elgohary & Carpuat reproduction: build the phrase data, and reproduce the paper's tables."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from parabit.cli import _add_overrides, _configure_logging
from parabit.config import ConfigError, load_config, parse_override


def _load(cls: type, args: argparse.Namespace):
    try:
        return load_config(cls, args.config, dict(parse_override(text) for text in args.overrides))
    except ConfigError as err:
        print(f"error: {err}", file=sys.stderr)
        return None


def phrases_main(argv: Sequence[str] | None = None) -> int:
    """Build the en-foreign phrase table and pivot paraphrases from bitext on Ray Data (resumable)."""
    from parabit.phrases import PhrasesConfig
    from parabit.pipeline import load_pipeline

    parser = argparse.ArgumentParser(prog="phrases", description=phrases_main.__doc__)
    parser.add_argument("--config", required=True, help="YAML file with PhrasesConfig fields (see jobs/configs/)")
    _add_overrides(parser, "override a config value, e.g. --set align.shard_size=200000")
    args = parser.parse_args(argv)
    config = _load(PhrasesConfig, args)
    if config is None:
        return 2
    _configure_logging()
    pipeline = load_pipeline("phrases").run(config)
    for name, stage in pipeline.stages.items():
        print(f"{name:>14}: {stage.rows_in:>9} in {stage.rows_out:>9} out {stage.rows_rejected:>9} rejected "
              f"{stage.seconds:>8.1f}s  {dict(list(stage.reject_reasons.items())[:4])}")
    print(f"phrase table: {pipeline.stages['phrase_table'].data}\npivot paraphrases: {pipeline.stages['pivot'].data}")
    print(f"MLflow run: {pipeline.tracker.run_id}")
    return 0
