"""Commands of supervised STS training: ``jobs/train_siamese.py`` and ``jobs/translate_sick.py`` call these."""

from __future__ import annotations

import argparse
import logging
from collections.abc import Sequence

from parabit.config import load_config, parse_override


def _configure_logging() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")


def train_siamese_main(argv: Sequence[str] | None = None) -> int:
    """Train supervised Siamese LSTMs (Bao et al. 2018) on Ray Train, one config after another, and print the
    test scores of each (SICK: Pearson r, Spearman, MSE; MSRP: accuracy, F1)."""
    parser = argparse.ArgumentParser(prog="train_siamese", description=train_siamese_main.__doc__)
    parser.add_argument("--config", required=True, action="append",
                        help="YAML file with SiameseConfig fields (jobs/configs/siamese/); repeat to run several")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                        help="override a field of every config, e.g. --set optim.epochs=5 --set data.max_length=15")
    parser.add_argument("--variants", default="",
                        help="comma-separated model variants to run each config with (sialstm, siabilstm, attsialstm, "
                             "attsiabilstm); each run is named <config name>-<variant>")
    parser.add_argument("--suffix", default="", help="appended to every run name (e.g. -len15 for a length sweep)")
    args = parser.parse_args(argv)
    _configure_logging()

    from parabit.supervised.config import SiameseConfig
    from parabit.supervised.trainer import run_siamese

    overrides = dict(parse_override(o) for o in args.overrides)
    variants = [v for v in args.variants.split(",") if v]
    configs = []  # all loaded (and so checked) before any run starts
    for path in args.config:
        for variant in variants or [None]:
            changes = {**overrides, **({"model.variant": variant} if variant else {})}
            config = load_config(SiameseConfig, path, changes)
            config.name += (f"-{variant}" if variant else "") + args.suffix
            configs.append(config)
    rows, failed = [], []
    for config in configs:
        try:
            result = run_siamese(config)
        except Exception as err:  # noqa: BLE001 - one failed run (e.g. workers killed for memory) must not stop the rest
            logging.getLogger(__name__).exception("run %s failed; re-run the same command to resume it", config.name)
            failed.append(f"{config.name}: {type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}")
            continue
        print(result.report.table())
        test = {s.metric: s.value for s in result.report.scores if s.subset == "test"}
        rows.append((config.name, result.best_epoch, test, result.mlflow_run_id))
        print(f"[{config.name}] best epoch {result.best_epoch}; test {test}; MLflow run {result.mlflow_run_id}; "
              f"time {result.seconds['total']:.0f} s", flush=True)
    print("\nrun  best_epoch  test scores  mlflow_run_id")
    for name, epoch, test, run_id in rows:
        print(f"{name}  {epoch}  {' '.join(f'{k}={v:.4f}' for k, v in test.items())}  {run_id}")
    for line in failed:
        print(f"FAILED {line}")
    return 1 if failed else 0


def translate_sick_main(argv: Sequence[str] | None = None) -> int:
    """Translate SICK (train, trial, test) into another language, once, as an exactly-once pipeline stage."""
    parser = argparse.ArgumentParser(prog="translate_sick", description=translate_sick_main.__doc__)
    parser.add_argument("--config", default="jobs/configs/siamese/sick_es.yaml",
                        help="YAML file with SICKTranslationConfig fields")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE")
    args = parser.parse_args(argv)
    _configure_logging()

    from parabit.config import to_dict
    from parabit.pipeline.sick_translation import SICKTranslationConfig, run_sick_translation
    from parabit.tracking import RunTracker

    config = load_config(SICKTranslationConfig, args.config, dict(parse_override(o) for o in args.overrides))
    stage = run_sick_translation(config)
    print(f"{stage.path}: {stage.rows_in} pairs in, {stage.rows_out} translated, {stage.rows_rejected} quarantined "
          f"{stage.reject_reasons} ({stage.seconds:.1f} s)")
    tracker = RunTracker("parabit-pipelines", run_name=config.name, tags={"parabit.kind": "pipeline"})
    tracker.start()
    tracker.log_params(to_dict(config))
    tracker.set_tags({"parabit.pipeline_output": str(stage.path)})
    tracker.log_metrics({"rows_in": stage.rows_in, "rows_out": stage.rows_out, "rows_rejected": stage.rows_rejected})
    tracker.finish()
    print(f"MLflow run id: {tracker.run_id}  experiment: parabit-pipelines")
    return 0
