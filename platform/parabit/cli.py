"""The ``parabit`` command. Entry points in ``jobs/`` call these functions, so both spellings behave the same."""

from __future__ import annotations

import argparse
import functools
import logging
import sys
import time
from collections.abc import Callable, Sequence

from parabit.config import ConfigError, load_config
from parabit.data.errors import DataFormatError
from parabit.evaluation.config import EvaluationConfig
from parabit.evaluation.metrics import Encode
from parabit.text.tokenize import TOKENIZERS, Tokenizer

BASELINE_ENCODERS = ("glove-mean",)


# Mistakes in what the user gave (a config, a data file): one line on stderr and exit code 2, not a traceback.
USER_ERRORS = (ConfigError, DataFormatError)


def reports_user_errors(command: Callable[..., int]) -> Callable[..., int]:
    """Wrap a command so that a :data:`USER_ERRORS` exception prints ``error: <message>`` and returns 2."""

    @functools.wraps(command)
    def run(argv: Sequence[str] | None = None) -> int:
        try:
            return command(argv)
        except USER_ERRORS as err:
            print(f"error: {err}", file=sys.stderr)
            return 2

    return run


def _encoder_for(args: argparse.Namespace) -> tuple[Encode, dict]:
    if args.model_uri:
        from parabit.export.pyfunc import load_encoder

        return load_encoder(args.model_uri), {"model_uri": args.model_uri}
    from parabit.baselines import MeanWordVectors

    tokenizer = Tokenizer(args.tokenizer, lowercase=not args.keep_case)
    return MeanWordVectors.glove(tokenizer).encode, {"encoder": args.encoder, "tokenizer": tokenizer.to_dict()}


def _configure_logging() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")


def _add_overrides(parser: argparse.ArgumentParser, help_text: str) -> None:
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE", help=help_text)


@reports_user_errors
def evaluate_main(argv: Sequence[str] | None = None) -> int:
    """Score an encoder on STS 2012–2016, SICK and MSRP; print the table and log it to MLflow."""
    parser = argparse.ArgumentParser(prog="parabit evaluate", description=evaluate_main.__doc__)
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--encoder", choices=BASELINE_ENCODERS, default="glove-mean",
                        help="a built-in baseline encoder (default: glove-mean, the mean of GloVe 6B 50d vectors)")
    source.add_argument("--model-uri", help="an MLflow pyfunc embedding model, e.g. models:/parabit-encoder/1")
    parser.add_argument("--tokenizer", choices=sorted(TOKENIZERS), default="regexp", help="for baseline encoders")
    parser.add_argument("--keep-case", action="store_true", help="do not lower-case (baseline encoders)")
    parser.add_argument("--config", help="YAML file with EvaluationConfig fields (sts_years, sick, msrp)")
    parser.add_argument("--experiment", default="parabit-evaluation", help="MLflow experiment name")
    parser.add_argument("--run-name", default=None, help="MLflow run name")
    parser.add_argument("--no-mlflow", action="store_true", help="print the table only; log nothing")
    args = parser.parse_args(argv)

    from parabit.evaluation import EvaluationSuite

    config = load_config(EvaluationConfig, args.config) if args.config else EvaluationConfig()
    started = time.perf_counter()
    encode, description = _encoder_for(args)
    report = EvaluationSuite.standard(config)(encode)
    elapsed = time.perf_counter() - started
    print(report.table())
    print(f"\nevaluated in {elapsed:.1f} s")
    if args.no_mlflow:
        return 0

    from parabit.config import to_dict
    from parabit.tracking import RunTracker
    from parabit.tracking.evaluation import log_report

    run_name = args.run_name or (args.model_uri or args.encoder).replace("/", "_")
    tracker = RunTracker(args.experiment, run_name, tags={"parabit.kind": "evaluation"})
    tracker.start()
    tracker.log_params({**description, "evaluation": to_dict(config)})
    log_report(tracker, report, title=f"{run_name}")
    tracker.log_metrics({"evaluation_seconds": elapsed})
    delivered = tracker.finish()
    state = "" if delivered else " (tracking store unreachable: see the warning above)"
    print(f"MLflow run id: {tracker.run_id}  experiment: {args.experiment}  store: {tracker.uri}{state}")
    return 0


@reports_user_errors
def train_main(argv: Sequence[str] | None = None) -> int:
    """Train an encoder on Ray Train from a YAML config, evaluate it, log it to MLflow and register the model."""
    parser = argparse.ArgumentParser(prog="parabit train", description=train_main.__doc__)
    parser.add_argument("--config", required=True, help="YAML file with TrainConfig fields (see jobs/configs/)")
    _add_overrides(parser, "override a config value, e.g. --set optim.epochs=2 --set objective.name=jpa")
    args = parser.parse_args(argv)
    _configure_logging()

    from parabit.config import parse_override
    from parabit.training.config import TrainConfig
    from parabit.training.trainer import run_training

    config = load_config(TrainConfig, args.config, dict(parse_override(o) for o in args.overrides))
    result = run_training(config)
    print(result.report.table())
    timing = ", ".join(f"{k} {v:.1f} s" for k, v in result.seconds.items())
    print(f"\ntime: {timing}")
    print(f"MLflow run id: {result.mlflow_run_id}  experiment: {config.tracking.experiment}")
    print(f"model: {result.model_uri}")
    return 0


@reports_user_errors
def sweep_main(argv: Sequence[str] | None = None) -> int:
    """Run (or resume) a Ray Tune sweep described by a search-space YAML file; register the best model."""
    parser = argparse.ArgumentParser(prog="parabit sweep", description=sweep_main.__doc__)
    parser.add_argument("--space", required=True, help="search space YAML (see tuning/spaces/)")
    _add_overrides(parser, "override a training field for every trial, e.g. --set optim.epochs=2")
    parser.add_argument("--name", help="sweep name (default: the space's name); the same name resumes")
    args = parser.parse_args(argv)
    _configure_logging()

    from parabit.config import parse_override
    from parabit.tuning.space import load_space
    from parabit.tuning.sweep import run_sweep

    space = load_space(args.space)
    for override in args.overrides:
        key, value = parse_override(override)
        space.fixed[key] = value
    if args.name:
        space.name = args.name
    summary = run_sweep(space)
    print(summary["best_report"].table())
    print(f"\n{summary['trials']} trials ({summary['errors']} errors) in {summary['seconds']:.0f} s")
    print(f"best {space.search.metric}: {summary['best_dev_score']:.4f} with {summary['best_params']}")
    print(f"MLflow parent run id: {summary['parent_run_id']}  experiment: {summary['experiment']}")
    print(f"model: {summary['model_uri']}")
    return 0


@reports_user_errors
def main_job(argv: Sequence[str] | None = None) -> int:
    """The whole flow on the embedded defaults: bitext → back-translation → filtering → training → evaluation →
    registered model. The training run is nested under the pipeline's MLflow run, so one view links data and model."""
    parser = argparse.ArgumentParser(prog="parabit main", description=main_job.__doc__)
    parser.add_argument("--pipeline-config", default="jobs/configs/backtranslate_slice.yaml")
    parser.add_argument("--train-config", default="jobs/configs/main.yaml")
    _add_overrides(parser, "override a training config value")
    args = parser.parse_args(argv)
    _configure_logging()

    from parabit.config import parse_override
    from parabit.pipeline import PipelineConfig, load_pipeline
    from parabit.training.config import TrainConfig
    from parabit.training.trainer import run_training

    started = time.perf_counter()
    pipeline_config = load_config(PipelineConfig, args.pipeline_config)
    overrides = dict(parse_override(o) for o in args.overrides)
    train_config = load_config(TrainConfig, args.train_config, overrides)  # fail on a bad config before any work
    pipeline_config.experiment = train_config.tracking.experiment
    data = load_pipeline("backtranslate").run(pipeline_config)
    pipeline_seconds = time.perf_counter() - started
    train_config.data.path = str(data.output)
    result = run_training(train_config, parent_run_id=data.run_id, tags={"parabit.pipeline_run_id": data.run_id or ""})

    print("\nstage           rows in  rows out  rejected  seconds  reject reasons")
    for name, stage in data.stages.items():
        print(f"{name:<14}{stage.rows_in:>9}{stage.rows_out:>10}{stage.rows_rejected:>10}{stage.seconds:>9.1f}  "
              f"{stage.reject_reasons}")
    print()
    print(result.report.table())
    timing = ", ".join(f"{k} {v:.1f} s" for k, v in {"pipeline": pipeline_seconds, **result.seconds}.items())
    print(f"\ntime: {timing}")
    print(f"MLflow: pipeline run {data.run_id} > training run {result.mlflow_run_id}  "
          f"(experiment {train_config.tracking.experiment})")
    print(f"model: {result.model_uri}")
    return 0


COMMANDS = {"evaluate": evaluate_main, "train": train_main, "sweep": sweep_main, "main": main_job}


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in COMMANDS:
        print(f"usage: parabit {{{','.join(COMMANDS)}}} [options]   (parabit COMMAND --help for details)")
        return 2
    _configure_logging()
    return COMMANDS[argv[0]](argv[1:])


if __name__ == "__main__":
    sys.exit(main())
