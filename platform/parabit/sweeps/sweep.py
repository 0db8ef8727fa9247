"""Running a sweep: one Tune trial per point, each trained by the training kernel like a single run.

MLflow gets one parent run per sweep and one child run per trial (params, per-epoch loss and dev score, the final
table); at the end the best trial's model is evaluated in full and registered once, as a version of the base
config's registered model with the alias ``@candidate``. The sweep's summary (best trial, its parameters and score,
how many trials) lives in the parent run's tags, metrics and ``sweep/summary.json``, all of which a resumed sweep may
update (MLflow params may not change).

Interrupted with Ctrl-C (SIGINT), Tune stops the trials and saves its state; the parent run ends ``KILLED``, nothing
is registered and :class:`SweepInterrupted` is raised (the CLI exits 130). Re-running the same command restores the
experiment (``Tuner.restore``): finished trials are kept, unfinished ones resume from their last checkpoint, and the
parent MLflow run is continued. A trial ASHA stops early ends ``FINISHED`` with its last dev score.
"""

from __future__ import annotations

import json
import logging
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
from mlflow.tracking import MlflowClient
from ray import tune
from ray.train import Checkpoint
from ray.tune.integration.ray_train import CHECKPOINT_PATH_KEY, TuneReportCallback
from ray.tune.schedulers import ASHAScheduler, FIFOScheduler

from parabit.evaluation.report import EvaluationReport
from parabit.paths import output_root
from parabit.ray_runtime import init_ray
from parabit.recipes import recipe_for
from parabit.runlock import exclusive_run
from parabit.tracking import RunTracker, tags
from parabit.tracking.lineage import command_line
from parabit.tracking.registry import CANDIDATE, register_model
from parabit.training.driver import build_trainer, check_resources, evaluate_checkpoint, log_prepared_data, \
    open_tracker, remember_run
from parabit.sweeps.space import SearchSpace

log = logging.getLogger(__name__)

# The trial function only launches a TorchTrainer and waits; its workers hold the real CPUs.
TRIAL_DRIVER_RESOURCES = {"cpu": 0.01}
FINAL_METRIC = tags.FINAL_SCORE


class SweepInterrupted(KeyboardInterrupt):
    """The sweep was stopped (Ctrl-C) before every trial ended; its state is saved and the same command resumes."""


@dataclass(frozen=True)
class SweepContext:
    """What every trial needs besides its parameters."""

    space: SearchSpace
    directory: str
    parent_run_id: str | None
    tracking_uri: str
    command: str  # the command that started the sweep (a trial runs in a Ray worker, whose own is not the user's)


@dataclass
class SweepSummary:
    """What a complete sweep found."""

    name: str
    experiment: str
    trials: int
    errors: int
    best_trial: str
    best_params: dict
    best_dev_score: float
    best_report: EvaluationReport
    model_uri: str | None
    parent_run_id: str | None
    seconds: float


def _trial_params(trial_config: dict) -> dict:
    """Grid and random trials carry their point under ``params``; Optuna's are flat (``path|condition``)."""
    return dict(trial_config["params"]) if "params" in trial_config else dict(trial_config)


def trial_name(space: SearchSpace, trial_id: str) -> str:
    return f"{space.name}-{trial_id}"


def run_trial(trial_config: dict, context: SweepContext) -> None:
    """One trial: train with the trial's config, report every epoch to Tune, log a child MLflow run."""
    name = trial_name(context.space, tune.get_context().get_trial_id())
    config = context.space.trial_config(_trial_params(trial_config), name=name)
    config.storage_path = str(Path(context.directory) / "trials")
    recipe = recipe_for(config)
    prepared = recipe.prepare()
    tracker = open_tracker(config, kind="trial", parent_run_id=context.parent_run_id,
                           tags={tags.SWEEP: context.space.name, tags.COMMAND: context.command, **recipe.tags()},
                           uri=context.tracking_uri)
    with tracker.closing():
        log_prepared_data(tracker, recipe, prepared)
        result = build_trainer(recipe, prepared, tracker, callbacks=[TuneReportCallback()]).fit()
        final = _evaluate_once(recipe, prepared, tracker, Checkpoint(result.checkpoint.path), title=name)
    remember_run(config, tracker)
    tune.report({**result.metrics, **final, CHECKPOINT_PATH_KEY: result.checkpoint.path})


def _evaluate_once(recipe, prepared, tracker: RunTracker, checkpoint: Checkpoint, *, title: str) -> dict:
    """The trial's final score (:data:`FINAL_METRIC`), evaluated and logged once.

    Tune may run a trial again after ``Tuner.restore`` (a driver killed after the trial had logged its evaluation but
    before Tune saved the trial as terminated): then the score already in its MLflow run is reused. A trial killed
    part-way through logging evaluates again; the logging is idempotent, so nothing is written twice."""
    logged = tracker.logged_value(FINAL_METRIC)
    if logged is not None:
        print(f"[{title}] final evaluation already in MLflow run {tracker.run_id}; reused, not evaluated again",
              flush=True)
        return {FINAL_METRIC: logged}
    evaluation, record = evaluate_checkpoint(recipe, checkpoint, prepared)
    tracker.log_history(record.for_mlflow())
    tracker.log_report(evaluation.report, title=title)
    final = _sts_mean(evaluation.report)
    tracker.log_metrics_once({FINAL_METRIC: final})  # last: marks the evaluation complete
    return {FINAL_METRIC: final}


def _sts_mean(report: EvaluationReport) -> float:
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
    # max_t one past the last epoch: ASHA stops a trial that reaches max_t, and the last epoch must end in the
    # trial's own final evaluation, not in a stop.
    return ASHAScheduler(time_attr="epoch", max_t=epochs + 1, grace_period=space.scheduler.grace_period,
                         reduction_factor=space.scheduler.reduction_factor)


def _param_space(space: SearchSpace) -> dict:
    if space.search.algorithm == "optuna":
        return {}
    return {"params": tune.grid_search(space.trial_points())}


def sweep_directory(space: SearchSpace) -> Path:
    return output_root() / "sweeps" / space.name


def _tuner(space: SearchSpace, trainable, directory: Path) -> tune.Tuner:
    experiment = directory / "tune"
    if tune.Tuner.can_restore(str(experiment)):
        print(f"[{space.name}] resuming the interrupted sweep in {experiment}", flush=True)
        return tune.Tuner.restore(str(experiment), trainable=trainable, resume_unfinished=True, resume_errored=True)
    return tune.Tuner(
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
        run_config=tune.RunConfig(name="tune", storage_path=str(directory), verbose=0),
    )


def run_sweep(space: SearchSpace) -> SweepSummary:
    """Run (or resume) the sweep; returns the best trial's parameters, scores and registered model."""
    directory = sweep_directory(space)
    with exclusive_run(directory.with_name(f"{space.name}.lock"), f"sweep {space.name!r}"):
        return _run_sweep(space, directory)


def _run_sweep(space: SearchSpace, directory: Path) -> SweepSummary:
    init_ray()
    directory.mkdir(parents=True, exist_ok=True)
    base = space.trial_config(space.points()[0], name=space.name)
    base.storage_path = str(directory)
    check_resources(base, concurrent_runs=space.search.max_concurrent_trials,
                    cpus_per_run_driver=TRIAL_DRIVER_RESOURCES["cpu"])
    recipe_for(base).prepare()  # the shared data once up front, so trials only read the cache

    parent = open_tracker(base, kind="sweep", tags={tags.SWEEP: space.name})
    with parent.closing():
        parent.log_dict({"space": space.source, "points": space.trial_points() if space.search.algorithm != "optuna"
                         else "optuna", "fixed": space.fixed}, "sweep/space.json")
        parent.flush()
        context = SweepContext(space, str(directory), parent.run_id, parent.uri, command_line())
        trainable = tune.with_resources(tune.with_parameters(run_trial, context=context), TRIAL_DRIVER_RESOURCES)
        started = time.perf_counter()
        results = _tuner(space, trainable, directory).fit()
        seconds = time.perf_counter() - started
        ended = results.num_terminated + results.num_errors
        interrupted = ended < space.trial_count or any(_interrupted(r.error) for r in results)
        _close_trial_runs(parent.uri, space, results, interrupted=interrupted)
        if interrupted:
            raise SweepInterrupted(f"sweep {space.name} interrupted after {ended} of {space.trial_count} trials; "
                                   "its state is saved: run the same command again to resume it")
        summary = _finish(space, base, parent, results, seconds)
    remember_run(base, parent)
    (directory / "summary.json").write_text(json.dumps(
        {k: v for k, v in summary.__dict__.items() if k != "best_report"}, indent=1, default=str))
    return summary


def _finish(space: SearchSpace, base, parent: RunTracker, results, seconds: float) -> SweepSummary:
    """Evaluate the best trial in full, write the sweep's summary on the parent run, register the best model."""
    frame = results.get_dataframe()
    # A trial's last result always names its latest checkpoint (kept), whether it finished or ASHA stopped it.
    best = results.get_best_result(metric=space.search.metric, mode=space.search.mode, scope="last")
    best_params = _trial_params(best.config)
    best_name = trial_name(space, best.metrics["trial_id"])
    best_config = space.trial_config(best_params, name=best_name)
    best_config.storage_path = str(sweep_directory(space) / "trials")
    recipe = recipe_for(best_config)
    evaluation, _ = evaluate_checkpoint(recipe, Checkpoint(best.metrics[CHECKPOINT_PATH_KEY]), recipe.prepare())
    parent.log_report(evaluation.report, title=f"{space.name}: best trial")
    _log_trials_table(parent, frame)
    score = float(best.metrics[space.search.metric])
    parent.set_tags({"parabit.sweep.best_trial": best_name, "parabit.sweep.best_params": json.dumps(best_params)})
    parent.log_metrics({"best/dev_score": score, "sweep_seconds": seconds, "trials": float(len(frame))})
    parent.log_dict({"best_trial": best_name, "best_params": best_params, "best_dev_score": score,
                     "trials": len(frame), "errors": results.num_errors, "metric": space.search.metric},
                    "sweep/summary.json")
    model_uri = None
    if evaluation.embedder is not None and base.tracking.register_as:
        model_uri = register_model(base, parent, evaluation.embedder, alias=CANDIDATE)
    return SweepSummary(space.name, base.tracking.experiment, len(frame), results.num_errors, best_name,
                        best_params, score, evaluation.report, model_uri, parent.run_id, seconds)


def _interrupted(error: BaseException | None) -> bool:
    """Whether a trial ended because the sweep was interrupted (Ctrl-C reaches the trial's process too, which then
    fails with KeyboardInterrupt, possibly wrapped by Ray), not because of a fault of its own."""
    while error is not None:
        if isinstance(error, KeyboardInterrupt) or "KeyboardInterrupt" in f"{type(error).__name__}: {error}":
            return True
        error = error.__cause__ or error.__context__
    return False


def _close_trial_runs(uri: str, space: SearchSpace, results, interrupted: bool) -> None:
    """Close every trial's child run that its trial could not close: after an interruption every unfinished one is
    ``KILLED``, also one the interruption made fail on its way down (their trials resume with the same command,
    reopening them); after a complete sweep a trial that errored is ``FAILED`` and one ASHA stopped is ``FINISHED``
    (its last dev score is already in its run)."""
    client = MlflowClient(uri)
    errored = {trial_name(space, r.metrics["trial_id"]) for r in results
               if r.error is not None and (r.metrics or {}).get("trial_id")}
    unfinished = {"RUNNING", "FAILED"} if interrupted else {"RUNNING"}
    for run in client.search_runs(
        experiment_ids=[e.experiment_id for e in client.search_experiments()],
        filter_string=f"tags.`{tags.SWEEP}` = '{space.name}' and tags.`{tags.KIND}` = 'trial'",
    ):
        if run.info.status not in unfinished:
            continue
        status = "KILLED" if interrupted else "FAILED" if run.info.run_name in errored else "FINISHED"
        client.set_terminated(run.info.run_id, status=status)


def _log_trials_table(parent: RunTracker, frame: pd.DataFrame) -> None:
    columns = [c for c in frame.columns if c.startswith("config/") or c in (
        "trial_id", "epoch", "dev_score", "loss", FINAL_METRIC)]
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "trials.csv"
        frame[columns].to_csv(path, index=False)
        parent.log_artifact(path, "sweep")
