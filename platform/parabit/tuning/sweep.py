"""Running a sweep: one Tune trial per point, each trained by the same ``TorchTrainer`` as a single run.

MLflow gets one parent run per sweep and one child run per trial (params, per-epoch loss and dev score, the
final STS table); the best trial's model is registered from the parent run. Re-running the same command after
an interruption restores the Tune experiment (``Tuner.restore``): finished trials are kept, unfinished ones
resume from their last checkpoint, and the parent MLflow run is continued.
"""

from __future__ import annotations

import json
import logging
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
from mlflow.tracking import MlflowClient
from ray import tune
from ray.train import Checkpoint
from ray.tune.integration.ray_train import CHECKPOINT_PATH_KEY, TuneReportCallback
from ray.tune.schedulers import ASHAScheduler, FIFOScheduler

from parabit.paths import output_root
from parabit.ray_runtime import init_ray
from parabit.tracking import RunTracker
from parabit.tracking.evaluation import log_report
from parabit.training.data import prepare_training_data
from parabit.training.trainer import (
    build_trainer,
    check_data_path,
    check_resources,
    evaluate_checkpoint,
    log_prepared_data,
    open_tracker,
    register_model,
    remember_run,
)
from parabit.tuning.space import SearchSpace

log = logging.getLogger(__name__)

# The trial function only launches a TorchTrainer and waits; its workers hold the real CPUs.
TRIAL_DRIVER_RESOURCES = {"cpu": 0.01}
# A trial's final score (mean STS Pearson) in Tune's results and in its MLflow run; logged last by the trial.
FINAL_METRIC = "final/sts_mean_pearson"


@dataclass(frozen=True)
class SweepContext:
    """What every trial needs besides its parameters."""

    space: SearchSpace
    directory: str
    parent_run_id: str | None
    tracking_uri: str


@dataclass(frozen=True)
class Routines:
    """How one kind of training prepares its data, builds its ``TorchTrainer`` and evaluates a checkpoint."""

    prepare: Callable  # config -> PreparedData
    trainer: Callable  # (config, prepared, tracker, callbacks=...) -> TorchTrainer
    evaluate: Callable  # (checkpoint, config) -> (embedder, history, report)


def _prepare_pairs(config):
    check_data_path(config)
    return prepare_training_data(config.data)


def routines(config) -> Routines:
    """The routines of ``config``'s kind: pair training (``TrainConfig``) or supervised Siamese training."""
    from parabit.supervised.config import SiameseConfig

    if isinstance(config, SiameseConfig):
        from parabit.supervised.data import prepare_siamese_data
        from parabit.supervised.trainer import build_siamese_trainer, evaluate_siamese_checkpoint

        return Routines(lambda c: prepare_siamese_data(c.data), build_siamese_trainer, evaluate_siamese_checkpoint)
    return Routines(_prepare_pairs, build_trainer, lambda checkpoint, c: evaluate_checkpoint(checkpoint, c.evaluation))


def _trial_params(trial_config: dict) -> dict:
    """Grid and random trials carry their point under ``params``; Optuna's are flat (``path|condition``)."""
    return dict(trial_config["params"]) if "params" in trial_config else dict(trial_config)


def run_trial(trial_config: dict, context: SweepContext) -> None:
    """One trial: train with the trial's config, report every epoch to Tune, log a child MLflow run."""
    trial_name = f"{context.space.name}-{tune.get_context().get_trial_id()}"
    config = context.space.trial_config(_trial_params(trial_config), name=trial_name)
    config.storage_path = str(Path(context.directory) / "trials")
    kind = routines(config)
    prepared = kind.prepare(config)
    tracker = open_tracker(config, kind="trial", parent_run_id=context.parent_run_id,
                           tags={"parabit.sweep": context.space.name}, uri=context.tracking_uri)
    log_prepared_data(tracker, prepared)
    result = kind.trainer(config, prepared, tracker, callbacks=[TuneReportCallback()]).fit()
    final = _evaluate_once(kind, config, tracker, result, title=trial_name)
    tracker.finish()
    remember_run(config, tracker)
    tune.report({**final, CHECKPOINT_PATH_KEY: result.checkpoint.path})


def _evaluate_once(kind: Routines, config, tracker: RunTracker, result, *, title: str) -> dict:
    """The trial's final result for Tune (last epoch's metrics and :data:`FINAL_METRIC`), evaluated and logged once.

    Tune may run a trial again after ``Tuner.restore``: a driver killed after the trial had logged its evaluation
    but before Tune saved the trial as terminated (Tune saves its experiment state at most every 10 s or so, not when
    a trial ends) restores it as unfinished, and ``resume_unfinished`` starts its function over (no Tune checkpoint). Ray Train then restores the
    finished training run (its checkpoints are all committed) and the trial would evaluate again. So the trial's
    evaluation ends with :data:`FINAL_METRIC` in its MLflow run, and a trial whose run holds it reuses it: the
    last epoch's metrics are those of Ray Train's latest checkpoint. A trial killed part-way through logging
    evaluates again; the logging is idempotent (``log_history``, ``log_report``), so nothing is written twice.
    """
    logged = tracker.logged_value(FINAL_METRIC)
    if logged is not None:
        print(f"[{title}] final evaluation already in MLflow run {tracker.run_id}; reused, not evaluated again",
              flush=True)
        return {**result.metrics, FINAL_METRIC: logged}
    _, history, report = kind.evaluate(result.checkpoint, config)
    tracker.log_history(history)
    log_report(tracker, report, title=title)
    final = _sts_mean(report)
    tracker.log_metrics_once({FINAL_METRIC: final})  # last: marks the evaluation complete
    return {**history[-1], FINAL_METRIC: final}


def _sts_mean(report) -> float:
    means = [s.value for s in report.scores if s.benchmark.startswith("sts") and s.subset == "mean"
             and s.metric == "pearson"]
    return sum(means) / len(means) if means else float("nan")


def _searcher(space: SearchSpace):
    if space.search.algorithm != "optuna":
        return None
    from ray.tune.search.optuna import OptunaSearch

    return OptunaSearch(space=space.optuna_space, metric=space.search.metric, mode=space.search.mode,
                        seed=space.search.seed)


def _scheduler(space: SearchSpace):
    if space.scheduler.name == "fifo":
        return FIFOScheduler()
    epochs = space.trial_config(space.points()[0], name="probe").optim.epochs
    return ASHAScheduler(time_attr="epoch", max_t=epochs, grace_period=space.scheduler.grace_period,
                         reduction_factor=space.scheduler.reduction_factor)


def _param_space(space: SearchSpace) -> dict:
    if space.search.algorithm == "optuna":
        return {}
    return {"params": tune.grid_search(space.trial_points())}


def sweep_directory(space: SearchSpace) -> Path:
    return output_root() / "sweeps" / space.name


def run_sweep(space: SearchSpace) -> dict:
    """Run (or resume) the sweep; returns a summary with the best trial's parameters, scores and model URI."""
    init_ray()
    directory = sweep_directory(space)
    directory.mkdir(parents=True, exist_ok=True)
    base = space.trial_config(space.points()[0], name=space.name)
    base.storage_path = str(directory)
    check_resources(base, concurrent_runs=space.search.max_concurrent_trials,
                    cpus_per_run_driver=TRIAL_DRIVER_RESOURCES["cpu"])
    # Prepare the shared data once up front, so trials only read the cache.
    routines(base).prepare(base)

    parent = open_tracker(base, kind="sweep", tags={"parabit.sweep": space.name})
    parent.log_dict({"space": space.source, "points": space.trial_points() if space.search.algorithm != "optuna"
                     else "optuna", "fixed": space.fixed}, "sweep/space.json")
    parent.flush()
    context = SweepContext(space, str(directory), parent.run_id, parent.uri)
    trainable = tune.with_resources(tune.with_parameters(run_trial, context=context), TRIAL_DRIVER_RESOURCES)

    experiment = directory / "tune"
    if tune.Tuner.can_restore(str(experiment)):
        print(f"[{space.name}] resuming the interrupted sweep in {experiment}", flush=True)
        tuner = tune.Tuner.restore(str(experiment), trainable=trainable, resume_unfinished=True,
                                   resume_errored=True)
    else:
        tuner = tune.Tuner(
            trainable,
            param_space=_param_space(space),
            tune_config=tune.TuneConfig(
                metric=space.search.metric,
                mode=space.search.mode,
                search_alg=_searcher(space),
                scheduler=_scheduler(space),
                num_samples=space.search.num_samples if space.search.algorithm == "optuna" else 1,
                max_concurrent_trials=space.search.max_concurrent_trials,
            ),
            run_config=tune.RunConfig(name="tune", storage_path=str(directory), verbose=1),
        )
    started = time.perf_counter()
    results = tuner.fit()
    seconds = time.perf_counter() - started

    frame = results.get_dataframe()
    # A trial's last result always names its latest checkpoint (kept), whether it finished or ASHA stopped it.
    best = results.get_best_result(metric=space.search.metric, mode=space.search.mode, scope="last")
    best_params = _trial_params(best.config)
    best_config = space.trial_config(best_params, name=f"{space.name}-best")
    embedder, _, report = routines(best_config).evaluate(Checkpoint(best.metrics[CHECKPOINT_PATH_KEY]), best_config)
    log_report(parent, report, title=f"{space.name}: best trial")
    _close_stopped_trials(parent.uri, space.name)
    _log_trials_table(parent, frame)
    parent.log_params({"best": best_params})
    parent.log_metrics_once({"best/dev_score": best.metrics[space.search.metric], "sweep_seconds": seconds,
                             "trials": len(frame)})
    best_config.tracking = base.tracking
    model_uri = register_model(best_config, parent, embedder)
    parent.finish()
    summary = {"name": space.name, "experiment": base.tracking.experiment, "trials": len(frame),
               "best_params": best_params,
               "best_dev_score": best.metrics[space.search.metric], "best_report": report,
               "model_uri": model_uri, "parent_run_id": parent.run_id, "seconds": seconds,
               "errors": len(results.errors)}
    (directory / "summary.json").write_text(json.dumps({k: v for k, v in summary.items() if k != "best_report"},
                                                       indent=1, default=str))
    return summary


def _close_stopped_trials(uri: str, sweep: str) -> None:
    """Trials stopped early by ASHA never reach ``finish()``; mark their child runs KILLED, not RUNNING forever."""
    client = MlflowClient(uri)
    for run in client.search_runs(
        experiment_ids=[e.experiment_id for e in client.search_experiments()],
        filter_string=f"tags.`parabit.sweep` = '{sweep}' and tags.`parabit.kind` = 'trial' and "
                      "attributes.status = 'RUNNING'",
    ):
        client.set_terminated(run.info.run_id, status="KILLED")


def _log_trials_table(parent: RunTracker, frame: pd.DataFrame) -> None:
    columns = [c for c in frame.columns if c.startswith("config/") or c in (
        "trial_id", "epoch", "dev_score", "loss", FINAL_METRIC)]
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "trials.csv"
        frame[columns].to_csv(path, index=False)
        parent.log_artifact(path, "sweep")
