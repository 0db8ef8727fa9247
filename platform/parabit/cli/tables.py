"""Commands that assemble a seed paper's tables from finished MLflow runs: ``tables`` and ``bildrl-retrieval``."""

from __future__ import annotations

import click

from parabit.cli.options import common_options, config_path


@click.command(short_help="Print a seed paper's tables from finished MLflow runs.")
@click.argument("paper", type=click.Choice(["bao", "bildrl"]))
@click.option("--no-bli", is_flag=True, help="bildrl: skip the target spaces' BLI and the untrained reference row")
@common_options
def tables(paper: str, no_bli: bool, overrides: dict) -> int:
    """Print a seed paper's tables from the finished runs in MLflow (bao: Bao et al. Tables I-II; bildrl: Chen et
    al. Tables 3-4, logged to MLflow as run bildrl-tables)."""
    if paper == "bao":
        from parabit.supervised.tables import finished_runs, table_one, table_two

        runs = finished_runs()
        click.echo("Table I (test; MSE on the [0, 1] scale)\n" + table_one(runs))
        click.echo("\nTable II (SICK EN test Pearson r by maximum sentence length)\n" + table_two(runs))
        return 0
    from parabit.config import ConfigError
    from parabit.dictionary.tables import bildrl_tables

    text = bildrl_tables(bli=not no_bli)
    if text is None:
        raise ConfigError("no finished BilDRL runs in MLflow experiment parabit-bildrl; train some first "
                          "(e.g. parabit train --config jobs/configs/bildrl/att_en-es.yaml)")
    click.echo(text)
    return 0


@click.command("bildrl-retrieval", short_help="BilDRL retrieval on training definitions (seen words).")
@config_path(help_text="the BilDRL run's config (e.g. jobs/configs/bildrl/att_en-es.yaml)")
@click.option("--rows", type=click.IntRange(min=1), default=2000, show_default=True,
              help="how many training definitions of the first direction to score")
@common_options
def bildrl_retrieval(config_path: str, rows: int, overrides: dict) -> int:
    """Retrieval on *training* definitions of a finished BilDRL run (seen words), to tell memorisation from
    generalisation."""
    from parabit.dictionary.inspect import seen_word_retrieval
    from parabit.recipes import load_run_config

    config = load_run_config(config_path, overrides)
    epoch, scores = seen_word_retrieval(config, rows)
    click.echo(f"{config.name} (epoch {epoch}), {config.directions[0]}, {rows} training definitions: "
               + ", ".join(f"{k} {v:.4g}" for k, v in scores.items()))
    return 0
