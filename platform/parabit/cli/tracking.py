"""Commands about the tracking store: ``replay`` what a run could not deliver."""

from __future__ import annotations

import click


@click.command(short_help="Replay MLflow calls saved while the store was down.")
@click.argument("spools", nargs=-1, required=True, metavar="SPOOL.json...")
def replay(spools: tuple[str, ...]) -> int:
    """Replay MLflow calls that a run saved under outputs/mlflow-spool/ while the tracking store was down."""
    from parabit.config import ConfigError
    from parabit.tracking.run_tracker import RunTracker

    for spool in spools:
        try:
            tracker = RunTracker.replay(spool)
        except FileNotFoundError:
            raise ConfigError(f"spool file {spool} does not exist") from None
        click.echo(f"replayed {spool} into run {tracker.run_id}")
    return 0
