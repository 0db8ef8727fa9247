"""The driver side of a training run: prepare data, run ``TorchTrainer``, evaluate, log and register the model.

``run_training(config)`` is what ``jobs/train.py`` calls. Re-running it with the same ``config.name`` resumes:
Ray Train picks up the stored run (same ``RunConfig(name, storage_path)``) from its last checkpoint (or from a newer
one its record missed when the driver was killed: :mod:`parabit.training.checkpointing`), and the MLflow run
recorded for that name is continued rather than duplicated. A run that already finished all its epochs is not handed
to Ray Train again: its last checkpoint is evaluated (and registered, if it was not yet).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import mlflow
import pyarrow.parquet as pq
import ray
import ray.data
from ray.train import Checkpoint, CheckpointConfig, FailureConfig, RunConfig
from ray.train import ScalingConfig as RayScalingConfig
from ray.train.torch import TorchTrainer

from parabit.config import ConfigError, to_dict
from parabit.data.errors import DataFormatError
from parabit.embedder import SentenceEmbedder
from parabit.evaluation import EvaluationReport, EvaluationSuite
from parabit.evaluation.config import EvaluationConfig
from parabit.export.pyfunc import log_embedder, save_embedder_model
from parabit.paths import output_root
from parabit.ray_runtime import available_cpus, init_ray
from parabit.tracking import RunTracker
from parabit.tracking.evaluation import log_report
from parabit.training.config import TrainConfig
from parabit.training.data import PreparedData, prepare_training_data
from parabit.training.checkpointing import (
    EMBEDDER_DIR,
    UNLISTED_CHECKPOINTS_KEY,
    finished_checkpoint,
    load_state,
    unlisted_checkpoints,
)
from parabit.training.loop import train_loop_per_worker

log = logging.getLogger(__name__)


@dataclass
class TrainingResult:
    """What a finished run produced. ``model_uri`` is a registry URI (or a local folder if MLflow was down)."""

    name: str
    mlflow_run_id: str | None
    model_uri: str | None
    report: EvaluationReport
    history: list[dict]
    checkpoint_path: str
    seconds: dict[str, float]


def storage_path(config: TrainConfig) -> Path:
    return Path(config.storage_path).resolve() if config.storage_path else output_root() / "ray_results"


def _run_record(config: TrainConfig) -> Path:
    """Where the MLflow run id of a named run is kept, so a re-run continues the same MLflow run."""
    return storage_path(config) / f"{config.name}.parabit.json"


def check_data_path(config: TrainConfig) -> None:
    """Fail at once, naming the file, when the training data file a config points at is not there."""
    if config.data.path and not Path(config.data.path).exists():
        raise DataFormatError(config.data.path, None, "data.path does not exist; point it at the training pairs "
                              "(e.g. a pipeline's select/data/pairs.parquet) or run the step that makes them first")


def check_resources(config: TrainConfig, concurrent_runs: int = 1, cpus_per_run_driver: float = 0.0) -> None:
    """Fail fast, with what to change, when ``concurrent_runs`` runs of ``config`` (each with a driver task of
    ``cpus_per_run_driver``, e.g. a Tune trial) cannot all get their resources: no GPU, or less than one whole CPU
    left for Ray Data's read tasks, which then wait forever."""
    if config.scaling.use_gpu:
        gpus = ray.cluster_resources().get("GPU", 0)
        if gpus < config.scaling.num_workers:
            raise ConfigError(
                f"scaling.use_gpu asks for {config.scaling.num_workers} GPU worker(s) but the Ray cluster has {gpus:g} "
                "GPU(s); set scaling.use_gpu: false to train on CPU, or start Ray on GPU nodes"
            )
    cpus = available_cpus()
    workers = config.scaling.num_workers * concurrent_runs
    wanted = workers * config.scaling.cpus_per_worker + concurrent_runs * cpus_per_run_driver
    if wanted > cpus - 1.0:  # Ray Data's split coordinator and the evaluation need a CPU beside the workers
        runs = f"{concurrent_runs} concurrent runs x " if concurrent_runs > 1 else ""
        raise ConfigError(
            f"scaling asks for {runs}{config.scaling.num_workers} workers x {config.scaling.cpus_per_worker} CPU = "
            f"{wanted:g} of the cluster's {cpus:g} CPUs, leaving no whole CPU for Ray Data; lower scaling.cpus_per_worker "
            f"(e.g. {max((cpus - 1) / workers, 0.1):.2g}), scaling.num_workers or the number of concurrent runs"
        )


def open_tracker(config: TrainConfig, *, kind: str = "training", parent_run_id: str | None = None,
                 tags: dict | None = None, uri: str | None = None) -> RunTracker:
    """The MLflow run of ``config.name``: the one recorded for that name if this is a re-run, else a new one
    (with the config as params). ``kind`` ("training", "trial", "sweep") is tagged for filtering in the UI."""
    record = _run_record(config)
    previous = json.loads(record.read_text()).get("mlflow_run_id") if record.exists() else None
    tracker = RunTracker(config.tracking.experiment, config.name, run_id=previous, parent_run_id=parent_run_id,
                         tags={"parabit.kind": kind, "parabit.run_name": config.name, **(tags or {})}, uri=uri)
    tracker.start()
    if previous is None:
        tracker.log_params(to_dict(config))
    remember_run(config, tracker)
    return tracker


def remember_run(config: TrainConfig, tracker: RunTracker) -> None:
    """Record the MLflow run of ``config.name`` (once it exists: a run created late, after the store came back,
    is recorded when the run finishes), so that re-running the same command continues it."""
    record = _run_record(config)
    if tracker.run_id and not record.exists():
        record.parent.mkdir(parents=True, exist_ok=True)
        record.write_text(json.dumps({"mlflow_run_id": tracker.run_id}))


MODEL_URI_TAG = "parabit.model_uri"


def register_model(config: TrainConfig, tracker: RunTracker, embedder: SentenceEmbedder) -> str | None:
    """Log and register the pyfunc model; if the tracking store fails, save it locally instead and say where.

    A run that already registered its model (a re-run after the driver was killed before the run finished) keeps
    that model version instead of registering a second one."""
    registered = tracker.logged_tag(MODEL_URI_TAG)
    if registered:
        log.info("the run already registered %s; not registering it again", registered)
        return registered
    try:
        if tracker.run_id is None:
            raise ConnectionError("no MLflow run (tracking store unreachable)")
        mlflow.set_tracking_uri(tracker.uri)
        mlflow.set_registry_uri(tracker.uri)
        with mlflow.start_run(run_id=tracker.run_id):
            info = log_embedder(embedder, registered_model_name=config.tracking.register_as)
        uri = info.model_uri
        if config.tracking.register_as and info.registered_model_version:
            uri = f"models:/{config.tracking.register_as}/{info.registered_model_version}"
        tracker.set_tags({MODEL_URI_TAG: uri})
        return uri
    except Exception as err:  # noqa: BLE001 - a tracking failure must not lose the trained model
        fallback = output_root() / "models" / f"{config.name}-{int(time.time())}"
        save_embedder_model(embedder, fallback)
        log.warning("could not log the model to MLflow (%s); saved it to %s instead", err, fallback)
        return str(fallback)


def build_trainer(
    config,
    prepared,
    tracker: RunTracker | None,
    *,
    callbacks: Sequence = (),
    loop: Callable[[dict], None] = train_loop_per_worker,
    datasets: dict[str, ray.data.Dataset] | None = None,
) -> TorchTrainer:
    """The ``TorchTrainer`` of a run: the per-worker loop over the prepared data, checkpointing and retries.

    Shared by :func:`run_training`, the Tune trial trainable, Siamese and BilDRL training, so they all train, resume
    and retry alike. ``config`` is any run config with ``name``, ``scaling``, ``max_failures`` and ``storage_path``;
    ``prepared`` anything with a ``directory``; ``loop`` the per-worker function; ``datasets`` default to the
    prepared token-id pairs as ``train``.
    """
    run_directory = storage_path(config) / config.name
    return TorchTrainer(
        loop,
        train_loop_config={
            "config": to_dict(config),
            "prepared_dir": str(prepared.directory),
            "mlflow_run_id": tracker.run_id if tracker is not None else None,
            "tracking_uri": tracker.uri if tracker is not None else None,
            "submitted_at": time.time(),
            UNLISTED_CHECKPOINTS_KEY: unlisted_checkpoints(run_directory),
        },
        scaling_config=RayScalingConfig(
            num_workers=config.scaling.num_workers,
            use_gpu=config.scaling.use_gpu,
            resources_per_worker={"CPU": config.scaling.cpus_per_worker, **config.scaling.resources_per_worker},
        ),
        run_config=RunConfig(
            name=config.name,
            storage_path=str(run_directory.parent),
            failure_config=FailureConfig(max_failures=config.max_failures),
            checkpoint_config=CheckpointConfig(num_to_keep=2),
            callbacks=list(callbacks),
        ),
        datasets=datasets if datasets is not None else {"train": training_dataset(prepared)},
    )


def train_or_reuse(config, make_trainer: Callable[[], TorchTrainer]) -> Checkpoint:
    """The final checkpoint of the run ``config.name``: the stored one when the run has already trained all
    ``config.optim.epochs`` (re-running a finished command), else the one ``make_trainer().fit()`` ends with.

    Shared by the pair, Siamese and BilDRL runs (Tune trials are restored by Tune itself)."""
    checkpoint = finished_checkpoint(storage_path(config) / config.name, config.optim.epochs)
    if checkpoint is not None:
        print(f"[{config.name}] already trained for {config.optim.epochs} epochs: evaluating its last checkpoint "
              f"({checkpoint.path}) without training again", flush=True)
        return checkpoint
    result = make_trainer().fit()
    if result.checkpoint is None:
        raise RuntimeError(f"training run {config.name} finished without a checkpoint: {result.error}")
    return result.checkpoint


def training_dataset(prepared: PreparedData) -> ray.data.Dataset:
    """The prepared token ids as a Ray Dataset, split across workers by Ray Train (``get_dataset_shard``).

    Built from the Arrow table rather than ``read_parquet``: the ids are compact (int32, a few bytes per token), and
    parquet reading schedules list/read tasks that each want a whole CPU, which starve concurrent runs (two Tune
    trials) on a small machine.
    """
    return ray.data.from_arrow(pq.read_table(prepared.pairs_path))


def evaluate_checkpoint(checkpoint: Checkpoint, evaluation: EvaluationConfig) -> tuple[SentenceEmbedder, list, EvaluationReport]:
    """The embedder saved in a training checkpoint, the run's per-epoch history, and its full evaluation."""
    with checkpoint.as_directory() as directory:
        embedder = SentenceEmbedder.load(Path(directory) / EMBEDDER_DIR)
        history = load_state(directory)["history"]
    return embedder, history, EvaluationSuite.standard(evaluation)(embedder.encode)


def run_training(config: TrainConfig, *, parent_run_id: str | None = None, tags: dict | None = None) -> TrainingResult:
    """Train, evaluate on the full suite, log everything to MLflow and register the model.

    ``parent_run_id`` nests the run under another (e.g. the pipeline run that made its data: lineage in one view).
    """
    check_data_path(config)  # before Ray starts: a typo in a path costs a second, not a cluster start
    seconds: dict[str, float] = {}
    started = time.perf_counter()
    init_ray()
    seconds["ray_init"] = time.perf_counter() - started

    mark = time.perf_counter()
    prepared = prepare_training_data(config.data)
    seconds["prepare_data"] = time.perf_counter() - mark
    print(f"[{config.name}] {prepared.stats['pairs_kept']} training pairs, vocabulary {len(prepared.vocab)}, "
          f"rejected {prepared.stats['rejected']}", flush=True)
    check_resources(config)

    tracker = open_tracker(config, parent_run_id=parent_run_id, tags=tags)
    log_prepared_data(tracker, prepared)

    mark = time.perf_counter()
    checkpoint = train_or_reuse(config, lambda: build_trainer(config, prepared, tracker))
    seconds["train"] = time.perf_counter() - mark

    mark = time.perf_counter()
    embedder, history, report = evaluate_checkpoint(checkpoint, config.evaluation)
    seconds["evaluate"] = time.perf_counter() - mark
    tracker.log_history(history)  # the epochs live logging missed (store down, worker killed), each once
    log_report(tracker, report, title=config.name)

    mark = time.perf_counter()
    model_uri = register_model(config, tracker, embedder)
    seconds["register"] = time.perf_counter() - mark
    seconds["total"] = time.perf_counter() - started
    tracker.log_metrics_once({f"time/{k}_seconds": v for k, v in seconds.items()})
    tracker.finish()
    remember_run(config, tracker)
    return TrainingResult(config.name, tracker.run_id, model_uri, report, history, checkpoint.path, seconds)


def log_prepared_data(tracker: RunTracker, prepared: PreparedData) -> None:
    """Lineage: which prepared pairs a run trained on, and their statistics."""
    tracker.set_tags({"parabit.data": str(prepared.directory)})
    tracker.log_dict(prepared.stats, "data/stats.json")
