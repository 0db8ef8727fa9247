"""The Siamese model: one encoder shared by both sentences and the task's MaLSTM head, as one training module."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import torch

from parabit.embedder import SentenceEmbedder
from parabit.encoders import SentenceEncoder
from parabit.objectives import MaLSTMRegressionLoss, build_objective
from parabit.paths import project_path
from parabit.recipes.siamese.config import SiameseConfig, SiameseModelConfig
from parabit.text.glove import glove_rows_for
from parabit.text.vocab import Vocabulary
from parabit.training import Step, TrainingModule

log = logging.getLogger(__name__)


def encoder_spec(config: SiameseModelConfig, vocab_size: int) -> dict:
    """What :meth:`SentenceEmbedder.build_encoder` needs to rebuild the shared encoder."""
    name, options = config.encoder
    return {"encoder": name, "vocab_size": vocab_size, "dim": config.dim, "options": options}


def load_space_embedder(space: str) -> SentenceEmbedder:
    """The parabit embedder whose word table is the space: a ``models:/`` URI of a registered parabit model, or a
    folder (an embedder, a checkpoint holding one, or a training run's folder: its newest checkpoint)."""
    from parabit.recipes.bildrl.space import find_embedder

    if space.startswith("models:/") or space.startswith("runs:/"):
        import mlflow

        local = Path(mlflow.artifacts.download_artifacts(artifact_uri=space))
        return SentenceEmbedder.load(local / "artifacts" / "embedder")
    path = Path(space)
    return SentenceEmbedder.load(find_embedder(project_path(path)))


def space_rows_for(vocab: Vocabulary, space: SentenceEmbedder, std: float, seed: int) -> tuple[np.ndarray, dict]:
    """Initial table ``[len(vocab), dim]``: the space's row for every ``lang:word`` it has, N(0, std²) for the rest;
    returns the table and the words found per language."""
    source = space.encoder.embedding.weight.detach().cpu().numpy()
    table = np.random.default_rng(seed).normal(0.0, std, size=(len(vocab), source.shape[1])).astype(np.float32)
    table[0] = 0.0
    found: dict[str, int] = {}
    for lang in vocab.languages:
        for index, word in vocab.words(lang):
            key = f"{lang}:{word}"
            if key in space.vocab:
                table[index] = source[space.vocab.id(word, lang)]
                found[lang] = found.get(lang, 0) + 1
    return table, found


def initial_word_table(config: SiameseConfig, vocab: Vocabulary) -> tuple[torch.Tensor, dict]:
    """The word table the encoder starts from (see :class:`SiameseModelConfig`), and how many words were covered."""
    model = config.model
    if model.init == "glove":
        table, found = glove_rows_for(vocab, "en", std=model.init_std, seed=config.seed)
        return torch.from_numpy(table), {"en": found}
    if model.init == "space":
        space = load_space_embedder(model.space)
        if space.encoder.embedding.weight.shape[1] != model.dim:
            raise ValueError(f"model.space {model.space} has {space.encoder.embedding.weight.shape[1]}-d vectors; "
                             f"set model.dim to that")
        table, found = space_rows_for(vocab, space, model.init_std, config.seed)
        return torch.from_numpy(table), found
    generator = torch.Generator().manual_seed(config.seed)
    return torch.randn(len(vocab), model.dim, generator=generator) * model.init_std, {}


def build_siamese_encoder(config: SiameseConfig, vocab: Vocabulary) -> tuple[SentenceEncoder, dict, dict]:
    """The shared encoder with its initial table (frozen unless ``model.train_embeddings``), its spec and the
    per-language count of words the initial vectors covered."""
    spec = encoder_spec(config.model, len(vocab))
    table, found = initial_word_table(config, vocab)
    encoder = SentenceEmbedder.build_encoder(spec, initial_vectors=table)
    encoder.embedding.weight.requires_grad_(config.model.train_embeddings)
    return encoder, spec, found


def build_head(config: SiameseConfig) -> torch.nn.Module:
    """The task's MaLSTM objective (``config.objective``): regression onto SICK's 1–5 scale, or BCE for MSRP."""
    return build_objective(config.objective)


class SiameseModule(TrainingModule):
    """``forward(batch, step)``: both sentences through the shared encoder, the head's loss against ``label``."""

    def __init__(self, config: SiameseConfig, vocab: Vocabulary):
        super().__init__()
        self.encoder, self.spec, found = build_siamese_encoder(config, vocab)
        self.head = build_head(config)
        self.start_metrics = {f"init/words_covered_{lang}": float(count) for lang, count in found.items()}

    def forward(self, batch: dict, step: Step) -> torch.Tensor:
        h_a = self.encoder(batch["ids_a"], batch["len_a"])
        h_b = self.encoder(batch["ids_b"], batch["len_b"])
        return self.head(h_a, h_b, batch["label"])


def predict(head, h_a: torch.Tensor, h_b: torch.Tensor) -> torch.Tensor:
    """SICK: the 1–5 relatedness ``1 + 4·exp(−L1)``; MSRP: the paraphrase probability ``exp(−L1)``."""
    return head.predict(h_a, h_b) if isinstance(head, MaLSTMRegressionLoss) else head.probability(h_a, h_b)


@torch.no_grad()
def predict_pairs(encoder: SentenceEncoder, head, data: dict[str, torch.Tensor], batch_size: int = 1024) -> np.ndarray:
    """Predictions for every pair of a prepared split (tensors from :func:`parabit.recipes.siamese.data.read_split`)."""
    was_training = encoder.training
    encoder.eval()
    out = []
    for start in range(0, len(data["len_a"]), batch_size):
        sides = []
        for side in ("a", "b"):
            lengths = data[f"len_{side}"][start:start + batch_size]
            ids = data[f"ids_{side}"][start:start + batch_size, :int(lengths.max())]
            sides.append(encoder(ids, lengths))
        out.append(predict(head, *sides).float().cpu().numpy())
    encoder.train(was_training)
    return np.concatenate(out) if out else np.zeros(0, dtype=np.float32)
