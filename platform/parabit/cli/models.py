"""Commands about registered models: ``promote`` (move ``@champion``), ``serve`` (a REST endpoint) and
``translate-test`` (register the translate-test baseline)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import click

from parabit.cli.options import common_options, config_path, load
from parabit.output import configure_output


@click.command(short_help="Point @champion at the best version on dev data.")
@click.option("--name", default="parabit-encoder", show_default=True, help="the registered model")
@click.option("--version", default=None, help="promote this version (default: the best by the promotion rule)")
@click.option("--dry-run", is_flag=True, help="say what would be promoted, change nothing")
@click.option("-v", "--verbose", is_flag=True, help="also show MLflow's own logs")
def promote(name: str, version: str | None, dry_run: bool, verbose: bool) -> int:
    """Point models:/NAME@champion at the best version on dev data.

    The rule: every registered version carries its dev score (the mean of the STS 2012-train and the SICK
    train+trial Pearson r, measured when it was registered; never a test set). The version with the highest dev
    score is the champion. --version overrides the rule."""
    from parabit.tracking.registry import promote_champion

    configure_output(verbose)
    decision = promote_champion(name, version=version, dry_run=dry_run)
    click.echo(decision)
    return 0


@click.command("translate-test", short_help="Register the translate-test baseline.")
@config_path(required=False, help_text="YAML with TranslateTestConfig fields (default: Spanish through Apertium, read "
                                       "by models:/parabit-encoder-bilingual@champion)")
@common_options
def translate_test(config_path: str | None, overrides: dict) -> int:
    """Register the translate-test baseline: each sentence in the source language is translated into English by the
    engine, then encoded by the reader's English side (what a user without a bilingual model would do). Logged in an
    MLflow run, registered, and @champion pointed at its best version on Tatoeba dev."""
    from parabit.export.translate_test import TranslateTestConfig
    from parabit.tracking.registry import register_translate_test

    click.echo(f"registered {register_translate_test(load(TranslateTestConfig, config_path, overrides))}")
    return 0


@click.command(short_help="Serve a registered model over HTTP.")
@click.option("--model-uri", default="models:/parabit-encoder@champion", show_default=True,
              help="the model to serve")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="listen on this address (keep 127.0.0.1 unless behind an authenticating proxy)")
@click.option("--port", type=click.IntRange(1, 65535), default=5001, show_default=True)
def serve(model_uri: str, host: str, port: int) -> int:
    """Serve a registered model over HTTP with `mlflow models serve` (POST /invocations; see the README).

    Runs MLflow's server with this environment's packages (--env-manager local) and tracking store, whatever the
    shell's PATH."""
    from parabit.tracking.registry import check_model_uri
    from parabit.tracking.store import tracking_uri

    check_model_uri(model_uri)  # a wrong name, alias or version: one line, exit 2 (not MLflow's traceback)
    bin_dir = Path(sys.executable).parent
    env = {**os.environ, "MLFLOW_TRACKING_URI": tracking_uri(), "PATH": f"{bin_dir}{os.pathsep}"
           f"{os.environ.get('PATH', '')}"}
    command = [str(bin_dir / "mlflow"), "models", "serve", "-m", model_uri, "--env-manager", "local",
               "--host", host, "--port", str(port)]
    click.echo(f"serving {model_uri} from {env['MLFLOW_TRACKING_URI']} on http://{host}:{port}/invocations")
    return subprocess.call(command, env=env)
