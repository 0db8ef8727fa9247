"""The one training driver: prepare a recipe's data, run ``TorchTrainer``, evaluate, log and register the model.

``run_training(recipe)`` trains any :class:`~parabit.training.recipe.Recipe`, as a plain run or as a Ray Tune trial
(:mod:`parabit.sweeps.sweep` passes what differs: the run's kind and parent, Tune's report callback, no
registration), so both take the same settings lock, resume, divergence check and final evaluation.

Re-running it with the same ``config.name`` resumes: Ray Train picks up the stored run (same Ray
``RunConfig(name, storage_path)``) from its last checkpoint (or from a newer one its record missed when the driver was
killed), and the MLflow run recorded for that name is continued rather than duplicated (the run's record:
:mod:`parabit.training.checkpointing`). A run that already trained all its epochs is not handed to Ray Train again:
its last checkpoint is evaluated (and registered, if it was not yet).

However the run ends, its MLflow run is closed: ``FINISHED``, ``FAILED`` (an error, a divergence) or ``KILLED``
(Ctrl-C, SIGTERM).
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from mlflow.utils.mlflow_tags import MLFLOW_RUN_NOTE
from ray.data import DataContext
from ray.train import Checkpoint, CheckpointConfig, FailureConfig, LoggingConfig, RunConfig, UserCallback
from ray.train import ScalingConfig as RayScalingConfig
from ray.train.torch import TorchTrainer
# Private (Ray 2.60, no public name): the variable Ray Train reads a worker group's start timeout from.
from ray.train.v2._internal.constants import WORKER_GROUP_START_TIMEOUT_S_ENV_VAR
from ray.train.v2.api.exceptions import ControllerError

from parabit.config import to_dict
from parabit.evaluation import EvaluationReport
from parabit.output import StepTimes, is_verbose, library_log_level
from parabit.ray_runtime import init_ray
from parabit.runlock import exclusive_run
from parabit.tracking import RunTracker, tags as tag_names
from parabit.tracking.lineage import command_line
from parabit.tracking.registry import register_model
from parabit.training.checkpointing import (CHECKPOINTS_KEPT, check_same_settings, finished_checkpoint,
                                            load_checkpoint_state, load_state, record_once, record_settings,
                                            run_directory, run_record, storage_path)
from parabit.training.config import TrainingConfig
from parabit.training.guard import DIVERGENCE_FILE, Divergence, TrainingDiverged
from parabit.training.loop import train_loop_per_worker
from parabit.training.placement import PLACEMENT_ATTEMPT_S, PlacementWatch, WorkersNotPlaced, check_resources
from parabit.training.prepared import PreparedData, data_sizes
from parabit.training.recipe import Evaluation, Recipe

log = logging.getLogger(__name__)

EPOCH_SECONDS = ("epoch_seconds", "dev_seconds")  # what each epoch's training and dev scoring took, as logged


@dataclass(frozen=True)
class TrainingRecord:
    """What a run's checkpoint says about its training: the per-epoch ``history``, the ``selected`` epoch's entry
    (the model evaluated and exported; epoch 0, the untrained model with its ``initial`` scores, when no epoch beat
    it under ``selection_includes_start``) and the ``initial`` dev scores of the untrained model."""

    history: list[dict]
    selected: dict
    initial: dict

    @classmethod
    def of(cls, state: dict) -> "TrainingRecord":
        history = state["history"]
        epoch = (state.get("selected") or {}).get("epoch", history[-1]["epoch"] if history else 0)
        initial = dict(state.get("initial", {}))
        untrained = initial if epoch == 0 else {}  # epoch 0's scores are the untrained model's
        selected = next((h for h in history if h["epoch"] == epoch), {"epoch": epoch, **untrained})
        return cls(history, selected, initial)

    def for_mlflow(self) -> list[dict]:
        """The history with the untrained model as step 0, as the worker logs it live."""
        return ([{"epoch": 0, **self.initial}] if self.initial else []) + self.history


@dataclass
class TrainingResult:
    """What a finished run produced. ``model_uri`` is a registry URI (or a local folder if MLflow was down; None
    when nothing is registered)."""

    name: str
    mlflow_run_id: str | None
    model_uri: str | None
    report: EvaluationReport
    record: TrainingRecord
    checkpoint_path: str
    seconds: dict[str, float]
    data: dict = field(default_factory=dict)  # sizes of what it trained on (:func:`data_sizes`)
    final_score: float = float("nan")  # the recipe's headline number of ``report`` (:meth:`Recipe.final_score`)

    @property
    def history(self) -> list[dict]:
        return self.record.history

    @property
    def selected(self) -> dict:
        return self.record.selected


def open_tracker(config: TrainingConfig, *, kind: str = "training", parent_run_id: str | None = None,
                 tags: dict | None = None, uri: str | None = None) -> RunTracker:
    """The MLflow run of ``config.name``: the one recorded for that name if this is a re-run, else a new one
    (with the config as params). ``kind`` ("training", "trial", "sweep") is tagged for filtering in the UI."""
    previous = run_record(config).get("mlflow_run_id")
    tracker = RunTracker(config.tracking.experiment, config.name, run_id=previous, parent_run_id=parent_run_id,
                         tags={tag_names.KIND: kind, tag_names.RUN_NAME: config.name, tag_names.RECIPE: config.recipe,
                               **(tags or {})}, uri=uri)
    tracker.start()
    if previous is None:
        tracker.log_params(to_dict(config))
    remember_run(config, tracker)
    return tracker


def remember_run(config: TrainingConfig, tracker: RunTracker) -> None:
    """Record the MLflow run of ``config.name`` (once it exists: a run created late, after the store came back,
    is recorded when the run finishes), so that re-running the same command continues it."""
    if tracker.run_id:
        record_once(config, "mlflow_run_id", tracker.run_id)


def build_trainer(recipe: Recipe, prepared: PreparedData, tracker: RunTracker | None, *,
                  callbacks: Sequence[UserCallback] = ()) -> TorchTrainer:
    """The ``TorchTrainer`` of a run: the kernel's worker loop over the recipe's datasets, checkpointing and retries,
    plus ``callbacks`` (a Tune trial's ``TuneReportCallback``)."""
    config = recipe.config
    directory = run_directory(config)
    if not is_verbose():
        # The epoch lines are a run's progress; Ray Data's bars for splitting the pairs among workers say nothing.
        # (A dataset keeps the context it was created with.)
        DataContext.get_current().use_ray_tqdm = False
    datasets = recipe.datasets(prepared)
    per_worker = {"CPU": config.scaling.cpus_per_worker, **config.scaling.resources_per_worker}
    watch = PlacementWatch(config.name, config.scaling.min_workers,
                           {**per_worker, "GPU": 1.0} if config.scaling.use_gpu else per_worker,
                           config.scaling.placement_timeout_s, verbose=is_verbose())
    # Ray Train's controller reads this from the environment of the process that calls fit(): each placement attempt
    # then waits PLACEMENT_ATTEMPT_S, and the PlacementWatch sees the time between attempts (a user's value wins).
    os.environ.setdefault(WORKER_GROUP_START_TIMEOUT_S_ENV_VAR, str(PLACEMENT_ATTEMPT_S))
    return TorchTrainer(
        train_loop_per_worker,
        train_loop_config={
            # Where the recipe class is, not the class: Ray Train's controller unpickles this config too, and a class
            # would import the recipe there with everything it imports (~1 s of CPU per run, for nothing).
            "recipe": recipe.path(),
            "config": to_dict(config),
            "prepared_dir": str(prepared.directory),
            "datasets": sorted(datasets),
            "run_dir": str(directory),
            "mlflow_run_id": tracker.run_id if tracker is not None else None,
            "tracking_uri": tracker.uri if tracker is not None else None,
            "submitted_at": time.time(),
        },
        scaling_config=RayScalingConfig(
            num_workers=0 if config.scaling.in_process else config.scaling.num_workers,  # 0: Ray Train's local mode
            use_gpu=config.scaling.use_gpu,
            resources_per_worker=per_worker,
        ),
        run_config=RunConfig(
            name=config.name,
            storage_path=str(directory.parent),
            failure_config=FailureConfig(max_failures=config.max_failures),
            checkpoint_config=CheckpointConfig(num_to_keep=CHECKPOINTS_KEPT),
            callbacks=[watch, *callbacks],
            logging_config=LoggingConfig(log_level=logging.getLevelName(library_log_level())),
        ),
        datasets=datasets,
    )


def fit(recipe: Recipe, make_trainer: Callable[[], TorchTrainer]) -> Checkpoint:
    """The final checkpoint of the run ``config.name``: the stored one when the run has already trained all its
    epochs (re-running a finished command), else the one ``make_trainer().fit()`` ends with.

    Raises :class:`TrainingDiverged` when the workers stopped at a non-finite value (their last good checkpoint
    stays in the run's folder), :class:`WorkersNotPlaced` when the cluster could not place the workers within
    ``scaling.placement_timeout_s`` (the run resumes when the same command is run again)."""
    config = recipe.config
    directory = run_directory(config)
    checkpoint = finished_checkpoint(directory, config.optim.epochs)
    if checkpoint is not None:
        print(f"[{config.name}] already trained for {config.optim.epochs} epochs: evaluating its last checkpoint "
              f"({checkpoint.path}) without training again", flush=True)
        return checkpoint
    (directory / DIVERGENCE_FILE).unlink(missing_ok=True)
    try:
        result = make_trainer().fit()
    except ControllerError as err:
        if isinstance(err.controller_failure, WorkersNotPlaced):
            raise WorkersNotPlaced(f"{err.controller_failure}: {command_line()}") from None
        raise
    divergence = Divergence.load(directory)
    if divergence is not None:
        raise TrainingDiverged(divergence.message(config.name))
    if result.checkpoint is None:
        raise RuntimeError(f"training run {config.name} finished without a checkpoint: {result.error}")
    return result.checkpoint


def evaluate_checkpoint(recipe: Recipe, checkpoint: Checkpoint,
                        prepared: PreparedData) -> tuple[Evaluation, TrainingRecord]:
    """The recipe's final evaluation of a checkpoint, and what the checkpoint records of the training."""
    with checkpoint.as_directory() as directory:
        record = TrainingRecord.of(load_state(directory))
        evaluation = recipe.evaluate(Path(directory), prepared, record.selected)
    return evaluation, record


def run_training(recipe: Recipe, *, kind: str = "training", parent_run_id: str | None = None,
                 tags: Mapping[str, str] | None = None, tracking_uri: str | None = None,
                 callbacks: Sequence[UserCallback] = (), register: bool = True,
                 reuse_final_score: bool = False) -> TrainingResult:
    """Train ``recipe``'s run, evaluate it, log everything to MLflow and register its model: the one way every run
    trains, a plain one (the defaults) or a Ray Tune trial.

    In order: the settings lock (a re-run of ``config.name`` may not change what it trains), the prepared data, the
    MLflow run (:func:`open_tracker`), :func:`fit` (the finished-run shortcut, the divergence check, placement
    errors), the final evaluation with the recipe's final score (:data:`~parabit.tracking.tags.FINAL_SCORE`, logged
    last), registration. Raises :class:`TrainingDiverged` (the MLflow run ends ``FAILED``, its description says
    why, nothing is registered), :class:`WorkersNotPlaced`, :class:`~parabit.config.ConfigError`.

    ``kind`` tags the MLflow run (``training``, ``trial``); ``parent_run_id`` nests it under another (the pipeline
    run that made its data, the sweep of a trial); ``tags`` are added to the recipe's; ``tracking_uri``: the store
    (default: the configured one); ``callbacks``: Ray Train callbacks of the run (a trial's ``TuneReportCallback``);
    ``register=False`` registers nothing (a sweep registers its best trial once, at its end).
    ``reuse_final_score``: a run whose final score is already logged is not evaluated again and its result's report
    is empty (a Tune trial re-run after ``Tuner.restore`` needs only that score); else every run evaluates (a re-run
    logs nothing twice).
    """
    config = recipe.config
    recipe.check_inputs()  # before Ray starts: a typo in a path costs a second, not a cluster start
    with exclusive_run(storage_path(config) / f"{config.name}.lock", f"training run {config.name!r}"):
        check_same_settings(config)
        record_settings(config)
        times, attempt_started = StepTimes(), time.time()
        with times.step("ray_init"):
            init_ray()
        with times.step("prepare_data"):
            prepared = recipe.prepare()
        print(f"[{config.name}] {recipe.describe(prepared)}", flush=True)
        check_resources(config)

        tracker = open_tracker(config, kind=kind, parent_run_id=parent_run_id,
                               tags={**recipe.tags(), **(tags or {})}, uri=tracking_uri)
        with tracker.closing():
            log_prepared_data(tracker, recipe, prepared)
            with times.step("train", show_elapsed=False):  # the workers print each epoch
                try:
                    checkpoint = fit(recipe, lambda: build_trainer(recipe, prepared, tracker, callbacks=callbacks))
                except TrainingDiverged as err:
                    # The FAILED run's description (MLflow UI, search) says why: a trial's error is otherwise only in
                    # Tune's files. A divergence is final for the run's name (a re-run trains the same settings to
                    # the same step), so this note does not go stale.
                    tracker.set_tags({MLFLOW_RUN_NOTE: str(err)})
                    raise
            with times.step("evaluate"):
                evaluation, record, final_score = _evaluate_and_log(recipe, checkpoint, prepared, tracker,
                                                                    reuse_final_score=reuse_final_score)
            model_uri = None
            with times.step("register"):
                if register and evaluation.embedder is not None and config.tracking.register_as:
                    model_uri = register_model(config, tracker, evaluation.embedder)
            # A resumed run's total counts the epochs its earlier attempts trained and scored, as they logged them.
            seconds = times.with_total(tracker.logged_before(EPOCH_SECONDS, attempt_started))
            tracker.log_metrics_once({f"time/{k}_seconds": v for k, v in seconds.items()})
    remember_run(config, tracker)
    return TrainingResult(config.name, tracker.run_id, model_uri, evaluation.report, record, checkpoint.path,
                          seconds, data_sizes(prepared), final_score)


def _evaluate_and_log(recipe: Recipe, checkpoint: Checkpoint, prepared: PreparedData, tracker: RunTracker, *,
                      reuse_final_score: bool) -> tuple[Evaluation, TrainingRecord, float]:
    """The final evaluation of the run's checkpoint, its record and final score, logged to the run: the epochs live
    logging missed, the report, the recipe's artifacts, then the final score, last, which marks the evaluation as
    logged (``reuse_final_score``: a run that has it is not evaluated again). Logging is idempotent, so a run killed
    part-way through evaluates again without writing anything twice."""
    logged = tracker.logged_value(tag_names.FINAL_SCORE) if reuse_final_score else None
    if logged is not None:
        print(f"[{recipe.config.name}] final evaluation already in MLflow run {tracker.run_id}; reused, not evaluated "
              "again", flush=True)
        return Evaluation(EvaluationReport([])), TrainingRecord.of(load_checkpoint_state(checkpoint)), logged
    evaluation, record = evaluate_checkpoint(recipe, checkpoint, prepared)
    tracker.log_history(record.for_mlflow())  # what live logging missed (store down, worker killed), each once
    tracker.log_report(evaluation.report, title=recipe.config.name)
    for variant, report in evaluation.variants.items():
        tracker.log_report(report.prefixed(variant), folder=f"evaluation/{variant}",
                           title=f"{recipe.config.name} ({variant})")
    for name, payload in evaluation.artifacts.items():
        tracker.log_dict(payload, name)
    final_score = recipe.final_score(evaluation.report)
    tracker.log_metrics_once({tag_names.FINAL_SCORE: final_score})
    return evaluation, record, final_score


def log_prepared_data(tracker: RunTracker, recipe: Recipe, prepared: PreparedData) -> None:
    """Lineage: the data a run trained on as its MLflow dataset input (source files, rows, the pipeline runs that
    made them), where it was prepared, and its statistics."""
    name, sources = recipe.inputs()
    tracker.set_tags({tag_names.DATA: str(prepared.directory)})
    tracker.log_dict(prepared.stats, "data/stats.json")
    producers = [run for source in sources for run in tracker.pipeline_runs(source)]
    tracker.log_dataset(name, digest=prepared.digest, source=", ".join(sources) or str(prepared.directory),
                        profile={"rows": prepared.stats.get("pairs_kept"), "vocabulary": prepared.vocabulary_size,
                                 "prepared": str(prepared.directory), "pipeline_runs": producers})
    for initial in recipe.initial_inputs(prepared):
        tracker.log_dataset(initial.name, digest=initial.digest, source=initial.source, profile=initial.profile,
                            context="initialisation")


