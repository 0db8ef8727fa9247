"""Helpers for the tests of the bilingual work (recipe, filter, mining): a real English base model (the untrained
GloVe-SIF averaging model, built from the shipped GloVe and Tatoeba) and a real bilingual model over it, built from
a small slice of the shipped bitext. Kept in one place so each test module builds them the same way."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from parabit.baselines import build_baseline
from parabit.embedder import SentenceEmbedder
from parabit.evaluation.config import EvaluationConfig
from parabit.recipes import recipe_for
from parabit.recipes.bilingual.config import BilingualConfig
from parabit.runlock import one_builder


def glove_sif_base(folder: Path) -> Path:
    """The GloVe-SIF baseline (an English averaging model: SIF weights, one common component) saved as an embedder
    folder at ``folder``, once per folder."""
    with one_builder(folder.with_name(f"{folder.name}.lock")):
        if not (folder / "embedder.json").is_file():
            build_baseline("glove-sif").save(folder)
    return folder


def small_config(name: str, base: Path, outputs: Path, **changes) -> BilingualConfig:
    """A fast bilingual run over ``base``: 3,000 Tatoeba pairs (held-out pairs excluded), no dictionary, 2 epochs,
    scored on STS 2016 and Tatoeba retrieval; ``changes`` as ``section={...}`` (merged into that section)."""
    settings = {
        "name": name,
        "model": {"base": str(base)},
        "data": {"sources": ["tatoeba"], "max_pairs": 3000, "dictionary": False},
        "optim": {"epochs": 2, "batch_size": 100, "lr": 0.01},
        "scaling": {"num_workers": 1, "cpus_per_worker": 1.0},
        "evaluation": EvaluationConfig(sts_years=(2016,), sick=False, msrp=False,
                                       bitext_retrieval=("tatoeba-es",)).model_dump(),
        "storage_path": str(outputs / "ray_results"),
    }
    for section, values in changes.items():
        settings[section] = {**settings[section], **values} if isinstance(values, dict) else values
    return BilingualConfig(**settings)


def untrained_bilingual(config: BilingualConfig, folder: Path) -> Path:
    """The bilingual model of ``config`` before training (the base's English rows, Spanish rows where
    ``model.foreign_init`` puts them) saved as an embedder folder at ``folder``: a real bilingual model without a
    Ray Train run."""
    if not (folder / "embedder.json").is_file():
        recipe_for(config).untrained_embedder().save(folder)
    return folder


def english_rows(embedder: SentenceEmbedder) -> dict[str, np.ndarray]:
    """Every English word's row of an embedder's word table, by word."""
    table = embedder.encoder.embedding.weight.detach().cpu().numpy()
    return {word: table[index] for index, word in embedder.vocab.words("en")}


def english_weights(embedder: SentenceEmbedder) -> dict[str, float]:
    weights = embedder.encoder.word_weights
    weights = weights.weight[:, 0] if isinstance(weights, torch.nn.Embedding) else weights
    return {word: float(weights[index]) for index, word in embedder.vocab.words("en")}
