"""The BilDRL model: the definition encoder (a sentence encoder over the bilingual space, then two affine layers onto
it) and, as one training module, its loss: dictionary L2, plus skip-gram and bag-of-words alignment when joint."""

from __future__ import annotations

import torch
from torch import nn

from parabit.recipes.bildrl.config import MODELS, BilDRLConfig, DictionaryModelConfig
from parabit.encoders import build_encoder
from parabit.objectives import build_objective
from parabit.objectives.bow_alignment import BagOfWordsAlignmentLoss
from parabit.objectives.skipgram import SkipGramLoss
from parabit.training.run import random_batch
from parabit.training import Step, TrainingModule


def encoder_options(config: DictionaryModelConfig) -> dict:
    """The parabit encoder's options for a BilDRL model: every encoder ends in ``hidden`` units."""
    if config.encoder == "bow":
        return {"output_size": config.hidden}
    if config.encoder == "cnn":
        return {"filters": config.hidden}
    return {"hidden_size": config.hidden, "num_layers": config.layers}


class DefinitionEncoder(nn.Module):
    """``forward(ids [B, T], lengths [B]) -> [B, dim]``: a definition mapped into the word space.

    The sentence encoder (BOW, CNN, GRU or attentive GRU, ``hidden`` units) reads the bilingual word table
    (``word_vectors [V, dim]``, frozen unless ``train_words``), then ``Linear(hidden, hidden) → tanh →
    Linear(hidden, dim)`` brings it down to the word-vector size. :meth:`word_vectors` is that same table, so the
    target of a definition is ``word_vectors[word_id]`` (updated with the encoder in joint learning).
    """

    def __init__(self, config: DictionaryModelConfig, word_vectors: torch.Tensor, train_words: bool = False):
        super().__init__()
        self.config = config
        vocab_size, dim = word_vectors.shape
        self.encoder = build_encoder(MODELS[config.encoder], vocab_size, dim, initial_vectors=word_vectors,
                                     **encoder_options(config))
        self.encoder.embedding.weight.requires_grad_(train_words)
        self.head = nn.Sequential(nn.Linear(self.encoder.output_dim, config.hidden), nn.Tanh(),
                                  nn.Linear(config.hidden, dim))

    def word_vectors(self) -> torch.Tensor:
        return self.encoder.embedding.weight

    def forward(self, ids: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        return self.head(self.encoder(ids, lengths))


class BilDRLModule(TrainingModule):
    """``forward(batch, step)``: the dictionary loss of a batch of (definition, word) rows (L2 onto the word's vector,
    or the softmax over its language's words: ``config.loss``);
    with joint learning the word table is trained too and each step adds ``skipgram_weight`` × skip-gram on both
    sides of a random bitext batch (``step.shards["bitext"]``) and ``alignment_weight`` × their bag-of-words
    alignment loss. The whole module is checkpointed (with joint learning the skip-gram context table trains too).
    """

    def __init__(self, config: BilDRLConfig, word_vectors: torch.Tensor, ranges: dict[str, tuple[int, int]]):
        super().__init__()
        self.config = config
        self.model = DefinitionEncoder(config.model, word_vectors, train_words=config.joint.enabled)
        self.dictionary = build_objective("dictionary_l2") if config.loss == "l2" else \
            build_objective("dictionary_softmax", temperature=config.temperature)
        self.ranges = ranges
        if config.joint.enabled:
            vocab_size, dim = word_vectors.shape
            self.skipgram = SkipGramLoss(vocab_size, dim, config.joint.window, config.joint.negatives)
            self.alignment = BagOfWordsAlignmentLoss()

    def forward(self, batch: dict, step: Step) -> tuple[torch.Tensor, dict]:
        table = self.model.word_vectors()
        encoded, word_ids = self.model(batch["ids_a"], batch["len_a"]), batch["ids_b"][:, 0]
        if self.config.loss == "l2":
            loss = self.dictionary(encoded, table[word_ids])
        else:
            loss = self.dictionary(encoded, table, word_ids, list(self.ranges.values()))
        parts = {"dictionary_loss": float(loss.detach())}
        if self.config.joint.enabled:
            joint = self.config.joint
            bitext = random_batch(step.shards["bitext"], self.config.optim.batch_size, step.generator)
            skipgram = (self.skipgram(table, bitext["ids_a"], bitext["len_a"], *self.ranges["en"], step.generator)
                        + self.skipgram(table, bitext["ids_b"], bitext["len_b"], *self.ranges["foreign"],
                                        step.generator))
            alignment = self.alignment(table, bitext["ids_a"], bitext["len_a"], bitext["ids_b"], bitext["len_b"])
            loss = loss + joint.skipgram_weight * skipgram + joint.alignment_weight * alignment
            parts.update(skipgram_loss=float(skipgram.detach()), alignment_loss=float(alignment.detach()))
        return loss, parts
