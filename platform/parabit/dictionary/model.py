"""The BilDRL definition encoder: a sentence encoder over the bilingual space, then two affine layers onto it."""

from __future__ import annotations

import torch
from torch import nn

from parabit.dictionary.config import ENCODERS, DictionaryModelConfig
from parabit.encoders import build_encoder


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
        self.encoder = build_encoder(ENCODERS[config.encoder], vocab_size, dim, initial_vectors=word_vectors,
                                     **encoder_options(config))
        self.encoder.embedding.weight.requires_grad_(train_words)
        self.head = nn.Sequential(nn.Linear(self.encoder.output_dim, config.hidden), nn.Tanh(),
                                  nn.Linear(config.hidden, dim))

    def word_vectors(self) -> torch.Tensor:
        return self.encoder.embedding.weight

    def forward(self, ids: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        return self.head(self.encoder(ids, lengths))
