"""The driver of a BilDRL run: prepare ids, train on Ray Train, evaluate (retrieval, paraphrase), log to MLflow.

``run_dictionary_training(config)`` is what ``jobs/train_dictionary.py`` calls. The run is one ``TorchTrainer`` over
:func:`parabit.dictionary.loop.dictionary_loop_per_worker`, checkpointed every epoch under
``outputs/ray_results/<name>/``; its MLflow run (experiment ``parabit-bildrl``) gets the config as params, the loss
per epoch, ``<direction>/p_at_1``, ``<direction>/p_at_10``, ``<direction>/mrr`` and ``paraphrase-en-es/accuracy``/``f1``.
A JSON copy of the scores goes to ``outputs/bildrl/results/<name>.json`` for :mod:`parabit.dictionary.tables`.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import ray.data
import torch
from ray.train import Checkpoint
from ray.train.torch import TorchTrainer

from parabit.dictionary.build import read_direction, read_paraphrases
from parabit.dictionary.config import DictionaryTrainConfig
from parabit.dictionary.loop import dictionary_loop_per_worker
from parabit.dictionary.model import DefinitionEncoder
from parabit.dictionary.paraphrase import paraphrase_scores
from parabit.dictionary.prepare import PreparedDictionary, prepare_dictionary_run
from parabit.dictionary.retrieval import gold_ranks, retrieval_scores
from parabit.dictionary.space import BilingualSpace
from parabit.paths import output_root
from parabit.ray_runtime import init_ray
from parabit.training.checkpointing import load_checkpoint_state
from parabit.training.trainer import build_trainer, open_tracker, train_or_reuse

log = logging.getLogger(__name__)


@dataclass
class DictionaryResult:
    name: str
    mlflow_run_id: str | None
    scores: dict[str, dict[str, float]]
    history: list[dict]
    seconds: dict[str, float]


class DefinitionEmbedder:
    """A trained definition encoder over its space: ``encode(texts, lang) -> [N, dim]`` (no gradients)."""

    def __init__(self, model: DefinitionEncoder, space: BilingualSpace, max_tokens: int):
        self.model = model.eval()
        self.space = space
        self.max_tokens = max_tokens

    @torch.no_grad()
    def encode(self, texts: list[str], lang: str, batch: int = 1024) -> np.ndarray:
        ids, lengths = self.space.token_ids(texts, lang, self.max_tokens)
        out = [self.model(torch.from_numpy(ids[s:s + batch]), torch.from_numpy(lengths[s:s + batch])).numpy()
               for s in range(0, len(texts), batch)]
        return np.concatenate(out) if out else np.zeros((0, self.space.dim), np.float32)

    def word_table(self) -> np.ndarray:
        return self.model.word_vectors().detach().numpy()


def load_checkpoint(checkpoint: Checkpoint, config: DictionaryTrainConfig,
                    space: BilingualSpace) -> tuple[DefinitionEmbedder, list[dict]]:
    state = load_checkpoint_state(checkpoint)
    model = DefinitionEncoder(config.model, torch.from_numpy(space.vectors), train_words=config.joint.enabled)
    # The loop checkpoints its whole objective; the encoder is its ``model`` part.
    model.load_state_dict({key.removeprefix("model."): value for key, value in state["model"].items()
                           if key.startswith("model.")})
    return DefinitionEmbedder(model, space, config.model.max_tokens), state["history"]


def evaluate_retrieval(embedder: DefinitionEmbedder, test: pa.Table, direction: str) -> dict[str, float]:
    """P@1, P@10, MRR of the direction's test definitions over every word of the word language in the space, by
    Euclidean distance (the L2 loss's geometry) and, as ``cos_*``, by cosine (Euclidean on unit vectors)."""
    word_lang, def_lang = direction.split("-")
    words = embedder.space.words(word_lang)
    candidates = list(words)
    position = {w: i for i, w in enumerate(candidates)}
    table = embedder.word_table()[[words[w] for w in candidates]]
    queries = embedder.encode(test["definition"].to_pylist(), def_lang)
    gold = np.asarray([position[w] for w in test["word"].to_pylist()])
    cosine = retrieval_scores(gold_ranks(unit_rows(queries), unit_rows(table), gold))
    return {**retrieval_scores(gold_ranks(queries, table, gold)), **{f"cos_{k}": v for k, v in cosine.items()},
            "test_cases": float(len(gold)), "candidates": float(len(candidates))}


def unit_rows(matrix: np.ndarray) -> np.ndarray:
    return matrix / np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)


def evaluate_run(embedder: DefinitionEmbedder, config: DictionaryTrainConfig) -> dict[str, dict[str, float]]:
    scores = {}
    for direction in config.directions:
        rows = read_direction(config.data_path, direction)
        scores[direction] = evaluate_retrieval(embedder, rows.filter(pc.equal(rows["split"], "test")), direction)
    if config.paraphrase and config.language == "es":
        pairs = read_paraphrases(config.data_path, "es")
        scores["paraphrase-en-es"] = paraphrase_scores(lambda t: embedder.encode(t, "en"),
                                                       lambda t: embedder.encode(t, "es"), pairs, seed=config.seed)
    return scores


def build_dictionary_trainer(config: DictionaryTrainConfig, prepared: PreparedDictionary) -> TorchTrainer:
    datasets = {"train": ray.data.from_arrow(pq.read_table(prepared.train_path))}
    if config.joint.enabled:
        datasets["bitext"] = ray.data.from_arrow(pq.read_table(prepared.bitext_path))
    return build_trainer(config, prepared, None, loop=dictionary_loop_per_worker, datasets=datasets)


def results_path(name: str) -> Path:
    return output_root() / "bildrl" / "results" / f"{name}.json"


def run_dictionary_training(config: DictionaryTrainConfig) -> DictionaryResult:
    """Train one BilDRL model (single direction, multi-task or joint), evaluate it and log everything."""
    seconds: dict[str, float] = {}
    started = time.perf_counter()
    init_ray()
    mark = time.perf_counter()
    prepared = prepare_dictionary_run(config)
    seconds["prepare"] = time.perf_counter() - mark
    print(f"[{config.name}] training rows {prepared.stats['train_rows']}", flush=True)
    tracker = open_tracker(config, kind="bildrl", tags={"parabit.bildrl.encoder": config.model.encoder,
                                                       "parabit.bildrl.directions": ",".join(config.directions),
                                                       "parabit.bildrl.joint": str(config.joint.enabled)})
    tracker.log_dict(prepared.stats, "data/stats.json")
    mark = time.perf_counter()
    checkpoint = train_or_reuse(config, lambda: build_dictionary_trainer(config, prepared))
    seconds["train"] = time.perf_counter() - mark
    embedder, history = load_checkpoint(checkpoint, config, prepared.space)
    for entry in history:
        tracker.log_metrics({k: v for k, v in entry.items() if k != "epoch"}, step=int(entry["epoch"]))
    mark = time.perf_counter()
    scores = evaluate_run(embedder, config)
    seconds["evaluate"] = time.perf_counter() - mark
    seconds["total"] = time.perf_counter() - started
    tracker.log_metrics({f"{task}/{metric}": value for task, values in scores.items()
                         for metric, value in values.items()})
    tracker.log_metrics({f"time/{k}_seconds": v for k, v in seconds.items()})
    tracker.log_dict(scores, "bildrl/scores.json")
    tracker.finish()
    record = {"name": config.name, "encoder": config.model.encoder, "directions": list(config.directions),
              "joint": config.joint.enabled, "mlflow_run_id": tracker.run_id, "scores": scores,
              "epochs": config.optim.epochs, "train_rows": prepared.stats["train_rows"], "seconds": seconds}
    path = results_path(config.name)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=1))
    return DictionaryResult(config.name, tracker.run_id, scores, history, seconds)
