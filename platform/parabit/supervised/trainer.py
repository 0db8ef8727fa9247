"""The driver of a supervised Siamese run: prepare, train on Ray Train, test the best-on-dev model, log, register.

It reuses the unsupervised driver's pieces (:mod:`parabit.training.trainer`): the same ``TorchTrainer`` set-up with
the Siamese per-worker loop, the same MLflow run per ``name`` (a re-run resumes both the Ray run and the MLflow run),
the same model logging. Tune trials (:mod:`parabit.tuning.sweep`) call the same functions.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import torch
from ray.train import Checkpoint

from parabit.embedder import SentenceEmbedder
from parabit.evaluation.report import EvaluationReport
from parabit.ray_runtime import init_ray
from parabit.supervised.config import SiameseConfig
from parabit.supervised.data import prepare_siamese_data, read_split
from parabit.supervised.loop import siamese_loop_per_worker
from parabit.supervised.metrics import as_scores, task_scores
from parabit.supervised.model import build_head, predict_pairs
from parabit.tracking.evaluation import log_report
from parabit.training.data import PreparedData
from parabit.training.checkpointing import EMBEDDER_DIR, load_state
from parabit.training.trainer import (
    build_trainer,
    check_resources,
    log_prepared_data,
    open_tracker,
    register_model,
    train_or_reuse,
)


@dataclass
class SiameseResult:
    """A finished run: test (and best-dev) scores in ``report``, the per-epoch ``history``, where things are."""

    name: str
    mlflow_run_id: str | None
    model_uri: str | None
    report: EvaluationReport
    history: list[dict]
    best_epoch: int
    checkpoint_path: str
    seconds: dict[str, float]


def benchmark_name(config: SiameseConfig) -> str:
    """``sick-en``, ``sick-es``, ``sick-en-es`` or ``msrp``: the report's benchmark column."""
    return "msrp" if config.data.task == "msrp" else f"sick-{config.data.language}"


def build_siamese_trainer(config: SiameseConfig, prepared: PreparedData, tracker, *, callbacks=()):
    return build_trainer(config, prepared, tracker, callbacks=callbacks, loop=siamese_loop_per_worker)


def evaluate_siamese_checkpoint(checkpoint: Checkpoint, config: SiameseConfig
                                ) -> tuple[SentenceEmbedder, list[dict], EvaluationReport]:
    """Test the best-on-dev encoder saved in ``checkpoint``: the embedder, the run's history and the report (test
    scores, and the dev scores of the chosen epoch)."""
    prepared = prepare_siamese_data(config.data)  # the cache the run trained from
    with checkpoint.as_directory() as directory:
        embedder = SentenceEmbedder.load(Path(directory) / EMBEDDER_DIR)
        state = load_state(directory)
    history, best = state["history"], state["best"]
    test = {k: torch.from_numpy(v) for k, v in read_split(prepared, "test").items()}
    predicted = predict_pairs(embedder.encoder, build_head(config), test)
    scores = task_scores(config.data.task, predicted, test["label"].numpy(), threshold=best["threshold"])
    chosen = next(h for h in history if h["epoch"] == best["epoch"])
    dev = {k.split("/", 1)[1]: v for k, v in chosen.items() if k.startswith("dev/")}
    benchmark = benchmark_name(config)
    report = EvaluationReport(as_scores(benchmark, "test", scores, len(predicted))
                              + as_scores(benchmark, "dev", dev, len(read_split(prepared, "dev")["label"])))
    return embedder, history, report


def run_siamese(config: SiameseConfig, *, parent_run_id: str | None = None) -> SiameseResult:
    """Train ``config`` on Ray Train, test its best-on-dev epoch, log everything to MLflow and log the model."""
    seconds: dict[str, float] = {}
    started = time.perf_counter()
    init_ray()
    mark = time.perf_counter()
    prepared = prepare_siamese_data(config.data)
    seconds["prepare_data"] = time.perf_counter() - mark
    print(f"[{config.name}] {prepared.stats['splits']} pairs, vocabulary {len(prepared.vocab)}", flush=True)
    check_resources(config)
    tracker = open_tracker(config, parent_run_id=parent_run_id,
                           tags={"parabit.task": benchmark_name(config), "parabit.variant": config.model.variant})
    log_prepared_data(tracker, prepared)

    mark = time.perf_counter()
    checkpoint = train_or_reuse(config, lambda: build_siamese_trainer(config, prepared, tracker))
    seconds["train"] = time.perf_counter() - mark
    embedder, history, report = evaluate_siamese_checkpoint(checkpoint, config)
    log_report(tracker, report, title=config.name)
    best_epoch = max(history, key=lambda h: h["dev_score"])["epoch"]
    tracker.log_metrics({"best_epoch": best_epoch})
    model_uri = register_model(config, tracker, embedder)
    seconds["total"] = time.perf_counter() - started
    tracker.log_metrics({f"time/{k}_seconds": v for k, v in seconds.items()})
    tracker.finish()
    return SiameseResult(config.name, tracker.run_id, model_uri, report, history, best_epoch,
                         checkpoint.path, seconds)
