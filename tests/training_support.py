"""Helpers for end-to-end training tests (every recipe): the same model untrained, and a run whose Ray Train worker is
killed mid-way. Kept in one place so that every recipe's test measures learning and resumption the same way."""

from __future__ import annotations

import json
import os
import signal
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import torch

from parabit.evaluation.retrieval import gold_ranks, retrieval_scores
from parabit.embedder import SentenceEmbedder
from parabit.training import EMBEDDER_DIR
from parabit.training.checkpointing import CHECKPOINT_FILE, RAY_SNAPSHOT_FILE
from parabit.training.run import TrainingResult, run_directory, run_training
from parabit.training import Evaluation, Recipe


def untrained_evaluation(recipe: Recipe) -> Evaluation:
    """The recipe's own final evaluation (:meth:`Recipe.evaluate`, what a run's report comes from) of its model
    before any training: the same seed, data and refit as the run's start (``Recipe.untrained_embedder``), laid
    out as a checkpoint folder (``state.pt`` with the module, ``embedder/``). Trained and untrained are then scored
    by exactly the same code on exactly the same held-out data."""
    prepared = recipe.prepare()
    torch.manual_seed(recipe.config.seed)
    module = recipe.build_module(prepared, sparse=False)
    recipe.refit(module, prepared)
    embedder = recipe.untrained_embedder()
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        torch.save({"model": module.state_dict()}, folder / CHECKPOINT_FILE)
        if embedder is not None:
            embedder.save(folder / EMBEDDER_DIR)
        return recipe.evaluate(folder, prepared, {})


def translation_retrieval(embedder: SentenceEmbedder, pairs) -> dict[str, float]:
    """P@1, P@10 and MRR of finding each pair's foreign sentence among all the pairs' foreign sentences from its
    English one (squared Euclidean distance, J_bi's geometry): what bilingual training teaches, on pairs it never
    saw. ``pairs``: bitext pairs (``.en``, ``.foreign``) in the embedder's second language."""
    foreign_lang = next(lang for lang in embedder.vocab.languages if lang != embedder.lang)
    foreign = SentenceEmbedder(embedder.encoder, embedder.spec, embedder.vocab, embedder.tokenizer, foreign_lang,
                               embedder.max_tokens)
    queries = embedder.encode([pair.en for pair in pairs])
    candidates = foreign.encode([pair.foreign for pair in pairs])
    return retrieval_scores(gold_ranks(queries, candidates, np.arange(len(pairs))))


def registered_checkpoints(run_folder: Path) -> int:
    """How many checkpoints Ray Train's controller has registered (committed) for a run."""
    snapshot = run_folder / RAY_SNAPSHOT_FILE
    try:
        return len(json.loads(snapshot.read_text()).get("checkpoint_results", []))
    except (OSError, ValueError):  # not there yet, or being replaced as we read it
        return 0


def _train_worker_pids(gcs_address: str) -> list[int]:
    from ray.util.state import list_actors

    try:
        actors = list_actors(address=gcs_address, timeout=10,
                             filters=[("class_name", "=", "RayTrainWorker"), ("state", "=", "ALIVE")])
    except Exception:  # noqa: BLE001 - the state API can be slow on a loaded machine: ask again
        return []
    return [actor["pid"] for actor in actors]


def train_with_a_killed_worker(recipe: Recipe, after_checkpoints: int = 1, timeout: float = 300) -> tuple[
        TrainingResult, list[int]]:
    """``run_training(recipe)`` while its rank-0 Ray Train worker is SIGKILLed as soon as Ray has registered
    ``after_checkpoints`` of the run's checkpoints: mid-run, after a committed checkpoint. The worker's pid is looked
    up while it trains, so the kill follows the registration at once. Returns the result and the killed pids (empty:
    the run ended before the kill, which the caller must treat as a failure)."""
    import ray

    gcs_address = ray.get_runtime_context().gcs_address  # this session's Ray, even if others run on the machine
    folder = run_directory(recipe.config)
    killed: list[int] = []
    done = threading.Event()

    def killer():
        deadline = time.time() + timeout
        pids: list[int] = []
        while not done.is_set() and time.time() < deadline:
            if not pids:
                pids = _train_worker_pids(gcs_address)
            elif registered_checkpoints(folder) >= after_checkpoints:
                try:
                    os.kill(pids[0], signal.SIGKILL)
                    killed.append(pids[0])
                except ProcessLookupError:  # that worker was already gone: find the current one
                    pids = []
                    continue
                return
            time.sleep(0.02)

    thread = threading.Thread(target=killer, daemon=True)
    thread.start()
    try:
        result = run_training(recipe)
    finally:
        done.set()
        thread.join()
    return result, killed
