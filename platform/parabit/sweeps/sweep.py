"""Running a sweep: one Tune trial per point, each trained by :func:`~parabit.training.run.run_training` like a
single run (settings lock, resume, divergence check, final evaluation), as a child of the sweep that registers nothing.

MLflow gets one parent run per sweep and one child run per trial (params, per-epoch loss and dev score, the final
table and the recipe's final score, :data:`FINAL_METRIC`); at the end the best trial (by the space's
``search.metric``, a dev score: never by the final score, which is on test data) is evaluated in full and its model
registered once, as a version of the base config's registered model with the alias ``@candidate``. The sweep's
summary (best trial, its parameters, dev and final score, how many trials and errors) lives in the parent run's tags,
metrics and ``sweep/summary.json``, all of which a resumed sweep may update (MLflow params may not change). Then,
unless the space says ``keep_checkpoints: all``, the other trials' checkpoints are removed: a sweep of many trials
would otherwise keep two of each (the Elgohary & Carpuat sweeps: 22 GB).

A trial that fails (e.g. its loss turns non-finite: its run ends ``FAILED`` with the divergence as its description)
is counted as an error; the others go on, and the best is chosen among those that did not fail.

Interrupted with Ctrl-C (SIGINT), Tune stops the trials and saves its state; the parent run ends ``KILLED``, nothing
is registered and :class:`SweepInterrupted` is raised (the CLI exits 130). Re-running the same command restores the
experiment (``Tuner.restore``): finished trials are kept, unfinished ones resume from their last checkpoint, and the
parent MLflow run is continued. A trial ASHA stops early ends ``FINISHED`` with its last dev score.
"""

from __future__ import annotations

import json
import logging
import math
import time
from dataclasses import dataclass
from pathlib import Path

from mlflow.exceptions import MlflowException
from ray import tune
from ray.train import Checkpoint
from ray.tune.integration.ray_train import CHECKPOINT_PATH_KEY, TuneReportCallback
from ray.tune.schedulers import ASHAScheduler, FIFOScheduler

from parabit.evaluation.report import EvaluationReport
from parabit.ray_runtime import init_ray
from parabit.recipes import recipe_for
from parabit.runlock import exclusive_run
from parabit.tracking import RunTracker, tags
from parabit.tracking.lineage import command_line
from parabit.tracking.registry import CANDIDATE, register_model
from parabit.tracking.outage import call_patiently, is_refusal
from parabit.training import Divergence, RunStopped, TrainingDiverged
from parabit.training.run import (check_resources, evaluate_checkpoint, open_tracker, remember_run, run_directory,
                                  run_training)
from parabit.sweeps.space import SearchSpace
from parabit.sweeps.trials import (FINAL_METRIC, TRIAL_ACTORS, actors_ended, close_trial_runs, log_trials_table,
                                   remove_other_trials_checkpoints, stopped_by_interrupt, sweep_directory,
                                   trial_name, trial_params, trial_training_config, trials_directory)

log = logging.getLogger(__name__)

# The trial function only launches a TorchTrainer and waits; its workers hold the real CPUs.
TRIAL_DRIVER_RESOURCES = {"cpu": 0.01}


class SweepInterrupted(KeyboardInterrupt):
    """The sweep was stopped (Ctrl-C) before every trial ended; its state is saved and the same command resumes."""


class SweepFailed(RunStopped):
    """Every trial of the sweep failed (or none reported its metric): there is no best trial to register."""


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
    best_final_score: float  # the best trial's final score (its recipe's Recipe.final_score; held-out data)
    best_report: EvaluationReport
    model_uri: str | None
    parent_run_id: str | None
    seconds: float


def run_trial(trial_config: dict, context: SweepContext) -> None:
    """One trial: the trial's config trained like any run (:func:`~parabit.training.run.run_training`) as a child
    MLflow run of the sweep, every epoch reported to Tune, then its final score and checkpoint.

    A trial Tune runs again after ``Tuner.restore`` whose run already logged its final score (the sweep's driver was
    killed after that, before Tune saved the trial as ended) reuses the score rather than evaluating again. Nothing is
    registered: the sweep registers its best trial once, at its end. A trial that diverges raises
    :class:`~parabit.training.guard.TrainingDiverged` (its run ends ``FAILED`` saying why): Tune counts it as an
    error and the sweep goes on."""
    name = trial_name(context.space, tune.get_context().get_trial_id())
    config = context.space.trial_config(trial_params(trial_config), name=name)
    config.storage_path = str(trials_directory(context.directory))
    # A trial that diverged before the sweep was stopped would diverge again at the same step: the restore resumes
    # errored trials (for those the interruption made fail), but this one fails again at once, without training.
    diverged = Divergence.load(run_directory(config))
    if diverged is not None:
        raise TrainingDiverged(diverged.message(name))
    result = run_training(recipe_for(config), kind="trial", parent_run_id=context.parent_run_id,
                          tags={tags.SWEEP: context.space.name, tags.COMMAND: context.command},
                          tracking_uri=context.tracking_uri, callbacks=[TuneReportCallback()], register=False,
                          reuse_final_score=True)
    # The last epoch's metrics again (ASHA and the best-trial choice read a trial's last report), with what only the
    # end of a trial knows; from the checkpoint, so a trial that had finished training before a restore has them too.
    tune.report({**result.history[-1], FINAL_METRIC: result.final_score, CHECKPOINT_PATH_KEY: result.checkpoint_path})


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
        with _TuneInterruption() as stop:
            results = _tuner(space, trainable, directory).fit()
        seconds = time.perf_counter() - started
        ended = results.num_terminated + results.num_errors
        interrupted = (stop.seen or ended < space.trial_count
                       or any(stopped_by_interrupt(r.error) for r in results))
        if interrupted and not actors_ended(TRIAL_ACTORS):
            log.warning("sweep %s: trial actors were still alive %d s after the interruption; closing their MLflow "
                        "runs anyway", space.name, ACTORS_WAIT_S)
        try:
            call_patiently(lambda: close_trial_runs(parent.uri, space, results, interrupted=interrupted))
        except (MlflowException, OSError) as err:
            if is_refusal(err):
                raise
            # The trials are done and their numbers logged: a store that does not answer costs their runs' status.
            log.warning("sweep %s: could not close its trials' MLflow runs (%s); any left RUNNING stay so",
                        space.name, " ".join(str(err).split())[:300])
        if interrupted:
            raise SweepInterrupted(f"sweep {space.name} interrupted after {ended} of {space.trial_count} trials; "
                                   "its state is saved: run the same command again to resume it")
        summary = _finish(space, base, parent, results, seconds)
    if space.keep_checkpoints == "best":
        remove_other_trials_checkpoints(space, results, best=summary.best_trial)
    remember_run(base, parent)
    (directory / "summary.json").write_text(json.dumps(
        {k: v for k, v in summary.__dict__.items() if k != "best_report"}, indent=1, default=str))
    return summary


def _finish(space: SearchSpace, base, parent: RunTracker, results, seconds: float) -> SweepSummary:
    """Evaluate the best trial in full, write the sweep's summary on the parent run, register the best model."""
    best = _best_result(space, results)
    best_params = trial_params(best.config)
    best_name = trial_name(space, best.metrics["trial_id"])
    recipe = recipe_for(trial_training_config(space, best))
    evaluation, _ = evaluate_checkpoint(recipe, Checkpoint(best.metrics[CHECKPOINT_PATH_KEY]), recipe.prepare())
    parent.log_report(evaluation.report, title=f"{space.name}: best trial")
    log_trials_table(parent, results)
    score = float(best.metrics[space.search.metric])
    # From the full evaluation, not the trial's report: a trial ASHA stopped early never reported one.
    final = recipe.final_score(evaluation.report)
    parent.set_tags({"parabit.sweep.best_trial": best_name, "parabit.sweep.best_params": json.dumps(best_params)})
    trials = len(results)
    parent.log_metrics({"best/dev_score": score, FINAL_METRIC: final, "sweep_seconds": seconds,
                        "trials": float(trials), "errors": float(results.num_errors)})
    parent.log_dict({"best_trial": best_name, "best_params": best_params, "best_dev_score": score,
                     "best_final_score": final, "trials": trials, "errors": results.num_errors,
                     "metric": space.search.metric}, "sweep/summary.json")
    model_uri = None
    if evaluation.embedder is not None and base.tracking.register_as:
        model_uri = register_model(base, parent, evaluation.embedder, alias=CANDIDATE)
    return SweepSummary(space.name, base.tracking.experiment, trials, results.num_errors, best_name,
                        best_params, score, final, evaluation.report, model_uri, parent.run_id, seconds)


def _best_result(space: SearchSpace, results: tune.ResultGrid) -> tune.Result:
    """The trial with the best ``search.metric`` (dev data) in its last report, among those that ended without an
    error: a trial that failed (e.g. diverged) may have reported good dev scores before it failed, and has no final
    model. (Tune's own ``get_best_result`` considers failed trials too.) A trial's last result always names its
    latest checkpoint (kept), whether it finished or ASHA stopped it."""
    metric = space.search.metric
    candidates = [r for r in results if r.error is None and CHECKPOINT_PATH_KEY in r.metrics
                  and math.isfinite(r.metrics.get(metric, math.nan))]
    if not candidates:
        raise SweepFailed(f"sweep {space.name}: none of its {len(results)} trials ended with a finite {metric} "
                          f"({results.num_errors} failed; their MLflow runs and Tune's error files say why)")
    return (max if space.search.mode == "max" else min)(candidates, key=lambda r: r.metrics[metric])


class _TuneInterruption(logging.Handler):
    """Whether Tune's ``fit()`` was stopped by Ctrl-C, which it says only in its log ("Experiment has been
    interrupted, but the most recent state was saved"): the trials it stopped count as terminated in the results it
    returns, so with no trial left pending an interrupted sweep looked complete. (Its saved state resumes them.)"""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.seen = False

    def emit(self, record: logging.LogRecord) -> None:
        self.seen = self.seen or record.getMessage().startswith("Experiment has been interrupted")

    def __enter__(self) -> "_TuneInterruption":
        logging.getLogger("ray.tune.tune").addHandler(self)
        return self

    def __exit__(self, *exc_info) -> None:
        logging.getLogger("ray.tune.tune").removeHandler(self)
