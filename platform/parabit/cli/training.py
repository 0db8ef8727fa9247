"""Commands that train and score encoders: ``train`` (any recipe), ``sweep`` (Ray Tune), ``evaluate``."""

from __future__ import annotations

import itertools
import logging
import time

import click

from parabit.cli.options import common_options, config_path, load

log = logging.getLogger(__name__)


def _variants(vary: tuple[str, ...]) -> list[dict]:
    """``--vary model.variant=a,b --vary data.max_length=15,20`` → every combination as overrides."""
    axes = []
    for text in vary:
        key, separator, values = text.partition("=")
        if not separator or not key or not values:
            raise click.BadParameter(f"{text!r} must look like key.path=value1,value2", param_hint="--vary")
        from parabit.config import parse_override

        axes.append([(key, parse_override(f"{key}={value}")[1]) for value in values.split(",")])
    return [dict(choice) for choice in itertools.product(*axes)] if axes else [{}]


def _print_result(result) -> None:
    click.echo(result.report.table())
    timing = ", ".join(f"{k} {v:.1f} s" for k, v in result.seconds.items())
    click.echo(f"\n[{result.name}] time: {timing}")
    click.echo(f"[{result.name}] MLflow run id: {result.mlflow_run_id}  selected epoch: "
               f"{result.selected.get('epoch')}")
    if result.model_uri:
        click.echo(f"[{result.name}] model: {result.model_uri}")


@click.command(short_help="Train from YAML configs; evaluate, log, register.")
@config_path(multiple=True, help_text="a training config (any recipe: pairs, siamese, bildrl; e.g. "
                                      "jobs/configs/main.yaml); repeat to train several, one after another")
@click.option("--vary", multiple=True, metavar="KEY=V1,V2",
              help="train each config once per value, named <name>-<value> (e.g. --vary model.variant=sialstm,"
                   "attsialstm); several --vary give every combination")
@click.option("--suffix", default="", help="appended to every run name (e.g. -len15)")
@common_options
def train(config_paths: tuple[str, ...], vary: tuple[str, ...], suffix: str, overrides: dict) -> int:
    """Train encoders on Ray Train from YAML configs; evaluate, log to MLflow, register the model.

    Re-running the same command resumes each run from its last checkpoint (a finished run is only evaluated)."""
    from parabit.recipes import load_run_config, recipe_for
    from parabit.training.run import run_training

    configs = []  # all loaded (and so checked) before any run starts
    for path in config_paths:
        for changes in _variants(vary):
            config = load_run_config(path, {**overrides, **changes})
            config.name += "".join(f"-{value}" for value in changes.values()) + suffix
            configs.append(config)
    for config in configs:
        recipe_for(config).check_inputs()  # a missing file fails now, not after the runs before it
    failed = []
    for config in configs:
        try:
            _print_result(run_training(recipe_for(config)))
        except (KeyboardInterrupt, SystemExit):
            raise
        except Exception as err:  # noqa: BLE001 - one failed run must not stop the others; reported at the end
            if len(configs) == 1:
                raise
            log.exception("run %s failed; re-run the same command to resume it", config.name)
            failed.append(f"{config.name}: {type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}")
    for line in failed:
        click.echo(f"FAILED {line}", err=True)
    return 1 if failed else 0


@click.command(short_help="Run or resume a Tune sweep (best as @candidate).")
@click.option("--space", required=True, metavar="PATH", help="search space YAML (e.g. tuning/spaces/jbi_elgohary.yaml)")
@click.option("--name", default=None, help="sweep name (default: the space's name); the same name resumes")
@click.option("--num-samples", type=click.IntRange(min=1), default=None,
              help="how many trials (random and optuna search; default: the space's search.num_samples)")
@common_options
def sweep(space: str, name: str | None, num_samples: int | None, overrides: dict) -> int:
    """Run (or resume) a Ray Tune sweep; register the best trial's model as @candidate.

    --set applies to every trial (e.g. --set optim.epochs=2). Ctrl-C stops the trials and saves the sweep (exit
    130); the same command resumes it."""
    from parabit.sweeps.space import load_space
    from parabit.sweeps.sweep import run_sweep

    loaded = load_space(space, num_samples=num_samples, overrides=overrides, name=name)
    summary = run_sweep(loaded)
    click.echo(summary.best_report.table())
    errors = f"{summary.errors} error" + ("" if summary.errors == 1 else "s")
    click.echo(f"\n{summary.trials} trials ({errors}) in {summary.seconds:.0f} s")
    click.echo(f"best {loaded.search.metric}: {summary.best_dev_score:.4f} ({summary.best_trial}) with "
               f"{summary.best_params}; its final score {summary.best_final_score:.4f}")
    click.echo(f"MLflow parent run id: {summary.parent_run_id}  experiment: {summary.experiment}")
    click.echo(f"model: {summary.model_uri}")
    return 0


@click.command(short_help="Score an encoder or a baseline on STS, SICK and MSRP.")
@click.option("--encoder", default="glove-mean", show_default=True,
              help="a built-in baseline encoder (parabit.baselines.BASELINES), when no --model-uri is given")
@click.option("--model-uri", default=None, help="an MLflow pyfunc embedding model, e.g. models:/parabit-encoder@champion")
@click.option("--tokenizer", default="regexp", show_default=True, help="tokenizer of a baseline encoder")
@click.option("--keep-case", is_flag=True, help="do not lower-case (baseline encoders)")
@config_path(required=False, help_text="YAML with EvaluationConfig fields (sts_years, sick, msrp)")
@click.option("--experiment", default="parabit-evaluation", show_default=True, help="MLflow experiment name")
@click.option("--run-name", default=None, help="MLflow run name")
@click.option("--no-mlflow", is_flag=True, help="print the table only; log nothing")
@common_options
def evaluate(encoder: str, model_uri: str | None, tokenizer: str, keep_case: bool, config_path: str | None,
             experiment: str, run_name: str | None, no_mlflow: bool, overrides: dict) -> int:
    """Score an encoder on STS 2012–2016, SICK and MSRP; print the table and log it to MLflow."""
    from parabit.baselines import build_baseline
    from parabit.config import to_dict
    from parabit.evaluation import EvaluationSuite
    from parabit.evaluation.config import EvaluationConfig
    from parabit.export.pyfunc import load_encoder
    from parabit.text.tokenize import Tokenizer
    from parabit.tracking import RunTracker, tags

    config = load(EvaluationConfig, config_path, overrides)
    if model_uri:
        from parabit.tracking.registry import check_model_uri

        description = {"model_uri": check_model_uri(model_uri)}  # a wrong name or alias: one line, exit 2
    else:
        baseline = build_baseline(encoder, Tokenizer(tokenizer, lowercase=not keep_case))
        description = {"encoder": encoder, "spec": baseline.spec}
        if isinstance(getattr(baseline, "tokenizer", None), Tokenizer):  # a transformer brings its own word pieces
            description["tokenizer"] = baseline.tokenizer.to_dict()
    started = time.perf_counter()
    encode = load_encoder(model_uri) if model_uri else baseline.encode
    report = EvaluationSuite.standard(config)(encode)
    elapsed = time.perf_counter() - started
    click.echo(report.table())
    click.echo(f"\nevaluated in {elapsed:.1f} s")
    if no_mlflow:
        return 0
    run_name = run_name or (model_uri or encoder).replace("/", "_")
    tracker = RunTracker(experiment, run_name, tags={tags.KIND: "evaluation"})
    tracker.start()
    with tracker.closing():
        tracker.log_params({**description, "evaluation": to_dict(config)})
        tracker.log_report(report, title=run_name)
        tracker.log_metrics({"evaluation_seconds": elapsed})
    click.echo(f"MLflow run id: {tracker.run_id}  experiment: {experiment}  store: {tracker.uri}")
    return 0
