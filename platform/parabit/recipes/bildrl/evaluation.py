"""Scoring a trained definition encoder: reverse-dictionary retrieval per direction and bilingual paraphrase
identification (Chen et al. 2019, Tables 3 and 4)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import torch

from parabit.recipes.bildrl.build import read_direction, read_paraphrases
from parabit.recipes.bildrl.config import BilDRLConfig
from parabit.recipes.bildrl.model import DefinitionEncoder
from parabit.evaluation.paraphrase import paraphrase_scores
from parabit.recipes.bildrl.prepare import training_rows
from parabit.evaluation.retrieval import gold_ranks, retrieval_scores
from parabit.evaluation.metrics import unit_rows
from parabit.recipes.bildrl.space import BilingualSpace


class DefinitionEmbedder:
    """A trained definition encoder over its space: ``encode(texts, lang) -> [N, dim]`` (no gradients)."""

    def __init__(self, model: DefinitionEncoder, space: BilingualSpace, max_tokens: int):
        self.model = model.eval()
        self.space = space
        self.max_tokens = max_tokens

    @classmethod
    def from_state(cls, state: dict, config: BilDRLConfig, space: BilingualSpace) -> "DefinitionEmbedder":
        """From a BilDRL checkpoint's module state (its ``model.`` part is the encoder)."""
        model = DefinitionEncoder(config.model, torch.from_numpy(space.vectors), train_words=config.joint.enabled)
        model.load_state_dict({key.removeprefix("model."): value for key, value in state.items()
                               if key.startswith("model.")})
        return cls(model, space, config.model.max_tokens)

    @torch.no_grad()
    def encode(self, texts: list[str], lang: str, batch: int = 1024) -> np.ndarray:
        ids, lengths = self.space.token_ids(texts, lang, self.max_tokens)
        out = [self.model(torch.from_numpy(ids[s:s + batch]), torch.from_numpy(lengths[s:s + batch])).numpy()
               for s in range(0, len(texts), batch)]
        return np.concatenate(out) if out else np.zeros((0, self.space.dim), np.float32)

    def word_table(self) -> np.ndarray:
        return self.model.word_vectors().detach().numpy()


def evaluate_retrieval(embedder: DefinitionEmbedder, test: pa.Table, direction: str) -> dict[str, float]:
    """P@1, P@10, MRR of the direction's test definitions over every word of the word language in the space, by
    Euclidean distance (the L2 loss's geometry) and, as ``cos_*``, by cosine (Euclidean on unit vectors)."""
    return retrieval_on(embedder.space, embedder.word_table(), embedder.encode, test, direction)


def retrieval_on(space: BilingualSpace, word_table: np.ndarray, encode, test: pa.Table,
                 direction: str) -> dict[str, float]:
    """:func:`evaluate_retrieval` for any ``encode(texts, lang)`` against the rows of ``word_table``."""
    word_lang, def_lang = direction.split("-")
    words = space.words(word_lang)
    candidates = list(words)
    position = {w: i for i, w in enumerate(candidates)}
    table = word_table[[words[w] for w in candidates]]
    queries = encode(test["definition"].to_pylist(), def_lang)
    gold = np.asarray([position[w] for w in test["word"].to_pylist()])
    cosine = retrieval_scores(gold_ranks(unit_rows(queries), unit_rows(table), gold))
    return {**retrieval_scores(gold_ranks(queries, table, gold)), **{f"cos_{k}": v for k, v in cosine.items()},
            "test_cases": float(len(gold)), "candidates": float(len(candidates))}


def seen_rows(config: BilDRLConfig, direction: str, rows: int) -> pa.Table:
    """A seeded sample of ``rows`` of the definitions the run trains on in ``direction`` (all when it has fewer)."""
    table = training_rows(config, direction)
    sample = np.random.default_rng(config.seed).permutation(table.num_rows)[:rows]
    return table.take(pa.array(np.sort(sample)))


def untrained_references(space: BilingualSpace, data_path, directions, paraphrase: bool, max_tokens: int = 15,
                         seed: int = 1) -> dict[str, dict[str, float]]:
    """What the space gives with no dictionary training (Table 4's reference, and its Table 3 counterpart): each
    direction's held-out definitions encoded as the mean vector of their first ``max_tokens`` words, retrieved as
    :func:`evaluate_retrieval` does; and (``paraphrase``) the paraphrase MLP on those mean vectors."""
    def average(texts: list[str], lang: str) -> np.ndarray:
        return space.average(texts, lang, max_tokens)

    scores = {}
    for direction in directions:
        rows = read_direction(data_path, direction)
        scores[direction] = retrieval_on(space, space.vectors, average, rows.filter(pc.equal(rows["split"], "test")),
                                         direction)
    if paraphrase:
        scores["paraphrase-en-es"] = paraphrase_scores(lambda t: average(t, "en"), lambda t: average(t, "es"),
                                                       read_paraphrases(data_path, "es"), seed=seed)
    return scores


def evaluate_run(embedder: DefinitionEmbedder, config: BilDRLConfig) -> dict[str, dict[str, dict[str, float]]]:
    """Scores by task and split: retrieval of each direction's held-out words (``test``; trained directions and
    ``evaluate_on``) and, with ``evaluate_seen``, of words the run trained on (``seen``); (en-es runs) paraphrase
    identification (``test``)."""
    scores: dict[str, dict[str, dict[str, float]]] = {}
    for direction in dict.fromkeys(config.directions + config.evaluate_on):
        rows = read_direction(config.data_path, direction)
        scores[direction] = {"test": evaluate_retrieval(embedder, rows.filter(pc.equal(rows["split"], "test")),
                                                        direction)}
    if config.evaluate_seen:
        for direction in config.directions:
            scores[direction]["seen"] = evaluate_retrieval(embedder, seen_rows(config, direction,
                                                                               config.evaluate_seen), direction)
    if config.paraphrase and config.language == "es":
        pairs = read_paraphrases(config.data_path, "es")
        scores["paraphrase-en-es"] = {"test": paraphrase_scores(
            lambda t: embedder.encode(t, "en"), lambda t: embedder.encode(t, "es"), pairs, seed=config.seed)}
    return scores
