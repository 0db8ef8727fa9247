"""Analyses of a finished run beyond its evaluation: ``bildrl-retrieval``.

The seed papers' tables are written by ``parabit reproduce`` (into the reproduction document), not by a command
of their own.
"""

from __future__ import annotations

import click

from parabit.cli.options import common_options, config_path


@click.command("bildrl-retrieval", short_help="BilDRL retrieval on training definitions (seen words).")
@config_path(help_text="the BilDRL run's config (e.g. jobs/configs/bildrl/att_en-es.yaml)")
@click.option("--rows", type=click.IntRange(min=1), default=2000, show_default=True,
              help="how many training definitions of the first direction to score")
@common_options
def bildrl_retrieval(config_path: str, rows: int, overrides: dict) -> int:
    """Retrieval on *training* definitions of a finished BilDRL run (seen words), to tell memorisation from
    generalisation."""
    from parabit.recipes.bildrl.inspect import seen_word_retrieval
    from parabit.recipes import load_run_config

    config = load_run_config(config_path, overrides)
    epoch, scores = seen_word_retrieval(config, rows)
    click.echo(f"{config.name} (epoch {epoch}), {config.directions[0]}, {rows} training definitions: "
               + ", ".join(f"{k} {v:.4g}" for k, v in scores.items()))
    return 0
