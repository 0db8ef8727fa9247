"""Real translation pairs encoded by the packaged all-MiniLM-L6-v2, for the objective tests that check a loss on what
a transformer run feeds it."""

from __future__ import annotations

import torch

from parabit.data.bitext import read_tatoeba
from parabit.encoders import TransformerEncoder
from parabit.teacher.model import packaged_checkpoint, teacher_encode


def tatoeba_pairs(count: int = 16, step: int = 1009) -> tuple[list[str], list[str]]:
    """``count`` Tatoeba en-es pairs spread over the file (English sides, Spanish sides)."""
    pairs = read_tatoeba(lang="es")[::step][:count]
    return [p.en for p in pairs], [p.foreign for p in pairs]


def packaged_student() -> TransformerEncoder:
    torch.manual_seed(0)
    return TransformerEncoder.from_checkpoint(packaged_checkpoint())


def encode(encoder: TransformerEncoder, texts: list[str]) -> torch.Tensor:
    ids, lengths = encoder.tokenize(texts)
    return encoder(torch.from_numpy(ids), torch.from_numpy(lengths))


def teacher_vectors(texts: list[str]) -> torch.Tensor:
    return torch.from_numpy(teacher_encode(texts))
